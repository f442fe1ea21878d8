// Probe (issue 13): does a thread that slept for a few milliseconds run slowly when it wakes, on
// this host, and what keeps it fast? No GPU needed. A thread wakes every PERIOD (absolute
// deadlines), then does a fixed piece of work (arithmetic over a 256 KiB buffer, ~50 us when
// warm) and measures its wall and thread-CPU time. A second case has the woken thread hand the
// work to another thread that was blocked for the whole period (a futex wake: how the node's
// threads hand over). Each case runs plain, with SCHED_IDLE spinners on every other CPU (the
// vCPUs never halt, yet any real thread preempts a spinner at once), and holding
// /dev/cpu_dma_latency at 0 (the kernel's PM QoS: idle CPUs poll instead of halting) where it
// can be opened. Steal is /proc/stat's, over the case.
// Build: gcc -O2 -pthread -o warm warm.c      Run: ./warm [reps=400] [period_us=10000]
//        ./warm spinners SECONDS  keeps SCHED_IDLE spinners on every CPU for that long;
//        ./warm pmqos SECONDS     holds /dev/cpu_dma_latency at 0 for that long.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_us(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

#define BUF (256 * 1024 / 8)
static uint64_t buf[BUF];
static long work_iters = 1;
static volatile uint64_t sink;

static void work(void) {
    uint64_t x = 1;
    for (long r = 0; r < work_iters; r++) {
        for (int i = 0; i < BUF; i += 8) {
            x = x * 6364136223846793005ULL + buf[i];
            buf[i] = x;
        }
    }
    sink = x;
}

static int cmp(const void *a, const void *b) {
    double d = *(const double *) a - *(const double *) b;
    return d < 0 ? -1 : d > 0;
}
static double pct(double *v, int n, double p) {
    double *c = malloc(n * sizeof(double));
    memcpy(c, v, n * sizeof(double));
    qsort(c, n, sizeof(double), cmp);
    double r = c[(int) ((n - 1) * p)];
    free(c);
    return r;
}

static long long steal_ticks(void) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    long long v[10] = {0};
    if (fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
               &v[6], &v[7]) != 8) {
        fclose(f);
        return -1;
    }
    fclose(f);
    return v[7];
}

static atomic_int stop_spinners;
static void *spinner(void *arg) {
    (void) arg;
    struct sched_param p = {0};
    if (sched_setscheduler(0, SCHED_IDLE, &p) != 0) perror("SCHED_IDLE");
    while (!atomic_load_explicit(&stop_spinners, memory_order_relaxed)) __builtin_ia32_pause();
    return NULL;
}

static pthread_t spin_threads[512];
static int nspin;
static void spinners_on(int n) {
    atomic_store(&stop_spinners, 0);
    nspin = n;
    for (int i = 0; i < n; i++) pthread_create(&spin_threads[i], NULL, spinner, NULL);
}
static void spinners_off(void) {
    atomic_store(&stop_spinners, 1);
    for (int i = 0; i < nspin; i++) pthread_join(spin_threads[i], NULL);
    nspin = 0;
}

// hand-over: the waker writes its time and wakes the worker blocked on `word`
static _Atomic uint32_t word;
static _Atomic double handed_at;
static double *h_wake, *h_work, *h_cpu;
static int h_reps, h_done;
static void *worker(void *arg) {
    (void) arg;
    for (int i = 0; i < h_reps; i++) {
        while (atomic_load(&word) == 0) syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
        atomic_store(&word, 0);
        double t0 = now_us(CLOCK_MONOTONIC), c0 = now_us(CLOCK_THREAD_CPUTIME_ID);
        h_wake[i] = t0 - atomic_load(&handed_at);
        work();
        h_work[i] = now_us(CLOCK_MONOTONIC) - t0;
        h_cpu[i] = now_us(CLOCK_THREAD_CPUTIME_ID) - c0;
    }
    h_done = 1;
    return NULL;
}

enum { SLEEP, SPIN, PRESPIN, HANDOVER };
static const char *names[] = {"sleep", "spin", "prespin-1ms", "hand-over"};

static void run_case(int kind, const char *env, int reps, double period) {
    double *late = calloc(reps, sizeof(double)), *wall = calloc(reps, sizeof(double)),
           *cpu = calloc(reps, sizeof(double));
    pthread_t w;
    if (kind == HANDOVER) {
        h_wake = late, h_work = wall, h_cpu = cpu, h_reps = reps, h_done = 0;
        atomic_store(&word, 0);
        pthread_create(&w, NULL, worker, NULL);
    }
    long long s0 = steal_ticks();
    double next = now_us(CLOCK_MONOTONIC) + period;
    for (int i = 0; i < reps; i++, next += period) {
        double wake_at = kind == PRESPIN ? next - 1000 : next;
        if (kind == SPIN) {
            while (now_us(CLOCK_MONOTONIC) < next) __builtin_ia32_pause();
        } else {
            struct timespec ts = {(time_t) (wake_at / 1e6), (long) ((wake_at - (time_t) (wake_at / 1e6) * 1e6) * 1e3)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
            if (kind == PRESPIN) while (now_us(CLOCK_MONOTONIC) < next) __builtin_ia32_pause();
        }
        if (kind == HANDOVER) {
            atomic_store(&handed_at, now_us(CLOCK_MONOTONIC));
            atomic_store(&word, 1);
            syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
            continue;
        }
        double t0 = now_us(CLOCK_MONOTONIC), c0 = now_us(CLOCK_THREAD_CPUTIME_ID);
        late[i] = t0 - next;
        work();
        wall[i] = now_us(CLOCK_MONOTONIC) - t0;
        cpu[i] = now_us(CLOCK_THREAD_CPUTIME_ID) - c0;
    }
    if (kind == HANDOVER) pthread_join(w, NULL);
    long long s1 = steal_ticks();
    printf("%-12s %-10s work p50 %7.1f p90 %7.1f p99 %7.1f max %8.1f us | cpu p50 %6.1f p99 %7.1f | %s p50 %6.1f p99 %7.1f"
           " | steal %lld ticks\n",
           names[kind], env, pct(wall, reps, .5), pct(wall, reps, .9), pct(wall, reps, .99), pct(wall, reps, 1),
           pct(cpu, reps, .5), pct(cpu, reps, .99), kind == HANDOVER ? "wake" : "late", pct(late, reps, .5),
           pct(late, reps, .99), s1 - s0);
    fflush(stdout);
    free(late), free(wall), free(cpu);
}

int main(int argc, char **argv) {
    int ncpu = (int) sysconf(_SC_NPROCESSORS_ONLN);
    if (argc > 2 && strcmp(argv[1], "spinners") == 0) {
        spinners_on(ncpu);
        sleep((unsigned) atoi(argv[2]));
        spinners_off();
        return 0;
    }
    if (argc > 2 && strcmp(argv[1], "pmqos") == 0) {
        int fd = open("/dev/cpu_dma_latency", O_RDWR);
        int32_t zero = 0;
        if (fd < 0 || write(fd, &zero, sizeof zero) != sizeof zero) {
            perror("/dev/cpu_dma_latency");
            return 1;
        }
        sleep((unsigned) atoi(argv[2]));
        return 0;
    }
    int reps = argc > 1 ? atoi(argv[1]) : 400;
    double period = argc > 2 ? atof(argv[2]) : 10000;
    // calibrate: ~50 us of warm work
    for (int i = 0; i < 200; i++) work();
    double t0 = now_us(CLOCK_MONOTONIC);
    for (int i = 0; i < 200; i++) work();
    double one = (now_us(CLOCK_MONOTONIC) - t0) / 200;
    work_iters = (long) (50.0 / one) + 1;
    printf("cpus %d, work %ld passes over 256 KiB (warm ~%.1f us each), %d reps every %.0f us\n", ncpu, work_iters,
           one, reps, period);
    for (int k = 0; k < 4; k++) run_case(k, "plain", reps, period);
    spinners_on(ncpu - 1);
    for (int k = 0; k < 4; k++) run_case(k, "idle-spin", reps, period);
    spinners_off();
    int fd = open("/dev/cpu_dma_latency", O_RDWR);
    if (fd < 0) {
        printf("/dev/cpu_dma_latency: %s\n", strerror(errno));
    } else {
        int32_t zero = 0;
        if (write(fd, &zero, sizeof zero) != sizeof zero) perror("write /dev/cpu_dma_latency");
        for (int k = 0; k < 4; k++) run_case(k, "pmqos-0", reps, period);
        close(fd);
    }
    for (int k = 0; k < 4; k++) run_case(k, "plain", reps, period);
    return 0;
}
