// Probe (issue 13): the host's own ceiling for the fixed-priority scenario's standalone tenant,
// in C++ with no JVM and no XQ. One thread releases a task every period (absolute deadlines,
// clock_nanosleep), launches N spin kernels of T us on one stream through the driver API, each
// between a start and an end event (as the CUDA adapter records them), then spins on the last
// end event. Latency = host time before the first launch to the device end of the last kernel,
// put on the host clock as the scenario does: after each task, with the stream idle, an event is
// recorded and spun on, and the middle of that short interval is its host time (renewed every
// task, so the clocks' drift does not matter). The period is 5 x the median of 5 calibration tasks (load 0.2), as the scenario's.
// A host where this probe's P99/median is well above 1.05 slows any tenant's tail, in any
// language; the scenario's standalone mode can do no better there.
// Prints one line: tasks, median, P99, P99/median, and for the slowest 1 % against the median
// band (45th-55th percentile) the submitting thread's CPU time, the device span (first start
// event to last end event) and the first submit (the task's release to its second command's
// submit: how long the device had only the first command; the scenario's timelines show the same
// as the second command's submit time), and that first submit's p50 and p99 over all tasks.
// Two knobs ask why a tenant's tail grows on a noisy host: extra_us adds that much CPU work
// (arithmetic, calibrated when the probe starts) to each command's submit, as a heavier
// submit path would; spinner=1 runs a second thread that spins while the task is in flight and
// sleeps on a condition variable otherwise, as the node's completion thread does.
// Build: nvcc -O2 -o standalone standalone.cu -lcuda
// Run:   ./standalone [T_us=100] [n=20] [seconds=8] [extra_us=0] [spinner=0]
#include <cuda.h>
#include <cuda_runtime.h>
#include <math.h>
#include <pthread.h>
#include <atomic>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <algorithm>
#include <vector>

#define DK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; cuGetErrorString(r_, &s_); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1);} } while (0)

__global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

static long long ns_of(clockid_t c) { struct timespec ts; clock_gettime(c, &ts); return ts.tv_sec * 1000000000LL + ts.tv_nsec; }

struct Task { double latency_us, cpu_us, span_us, first_us; };

static CUfunction fn;
static CUstream stream;
static unsigned blocks;
static std::vector<CUevent> starts, ends;

static CUevent ref;
static long long ref_host;

// ref's host time: recorded on the idle stream and spun on; the middle of the interval (a few us)
static void calibrate() {
    long long a = ns_of(CLOCK_MONOTONIC);
    DK(cuEventRecord(ref, stream));
    CUresult r;
    while ((r = cuEventQuery(ref)) == CUDA_ERROR_NOT_READY) {}
    DK(r);
    ref_host = a + (ns_of(CLOCK_MONOTONIC) - a) / 2;
}

static long work_iters; // iterations of work() per extra microsecond
static volatile double sink;

static void work(long iters) {
    double x = 1.0;
    for (long i = 0; i < iters; i++) x = x * 1.0000001 + 1e-9;
    sink = x;
}

static std::atomic<bool> in_flight{false}, stopping{false};
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool with_spinner;

static void *spinner(void *) {
    while (!stopping.load()) {
        if (in_flight.load()) {
            __builtin_ia32_pause();
            continue;
        }
        pthread_mutex_lock(&mu);
        while (!in_flight.load() && !stopping.load()) pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

static void set_in_flight(bool v) {
    if (!with_spinner) return;
    pthread_mutex_lock(&mu);
    in_flight.store(v);
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

static Task run_task(int n, unsigned long long ns, long extra_iters) {
    long long t0 = ns_of(CLOCK_MONOTONIC), c0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
    void *args[] = {&ns};
    long long first = 0;
    for (int k = 0; k < n; k++) {
        if (k == 1) first = ns_of(CLOCK_MONOTONIC) - t0;
        work(extra_iters);
        DK(cuEventRecord(starts[k], stream));
        DK(cuLaunchKernel(fn, blocks, 1, 1, 256, 1, 1, 0, stream, args, NULL));
        DK(cuEventRecord(ends[k], stream));
        if (k == 0) set_in_flight(true);
    }
    long long c1 = ns_of(CLOCK_THREAD_CPUTIME_ID);
    CUresult r;
    while ((r = cuEventQuery(ends[n - 1])) == CUDA_ERROR_NOT_READY) {}
    DK(r);
    set_in_flight(false);
    float span, since;
    DK(cuEventElapsedTime(&span, starts[0], ends[n - 1]));
    DK(cuEventElapsedTime(&since, ref, ends[n - 1]));
    double latency_us = (ref_host - t0) / 1e3 + since * 1e3;
    calibrate();
    return Task{latency_us, (c1 - c0) / 1e3, span * 1e3, first / 1e3};
}

int main(int argc, char **argv) {
    long t_us = argc > 1 ? atol(argv[1]) : 100;
    int n = argc > 2 ? atoi(argv[2]) : 20;
    double seconds = argc > 3 ? atof(argv[3]) : 8;
    double extra_us = argc > 4 ? atof(argv[4]) : 0;
    with_spinner = argc > 5 && atoi(argv[5]) != 0;
    if (t_us < 1 || n < 1 || n > 1000 || seconds <= 0 || extra_us < 0 || extra_us > 1000) {
        fprintf(stderr, "usage: standalone [T_us >= 1] [n 1..1000] [seconds > 0] [extra_us 0..1000] [spinner 0|1]\n");
        return 2;
    }
    // calibrate work(): the median of 9 timings of a million iterations
    std::vector<double> per;
    for (int i = 0; i < 9; i++) {
        long long a = ns_of(CLOCK_THREAD_CPUTIME_ID);
        work(1000000);
        per.push_back((ns_of(CLOCK_THREAD_CPUTIME_ID) - a) / 1e3 / 1e6);
    }
    std::sort(per.begin(), per.end());
    work_iters = (long) (1.0 / per[4]);
    long extra_iters = (long) (extra_us * work_iters);
    pthread_t spin_thread;
    if (with_spinner) pthread_create(&spin_thread, NULL, spinner, NULL);
    // the runtime's primary context (cudaFree(0) makes it current), then the driver API as the adapter uses it
    if (cudaFree(0) != cudaSuccess) { fprintf(stderr, "no CUDA device\n"); return 1; }
    CUdevice dev;
    DK(cuCtxGetDevice(&dev));
    int sms;
    DK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    blocks = sms * 8;
    if (cudaGetFuncBySymbol((cudaFunction_t *) &fn, (const void *) spin) != cudaSuccess) { fprintf(stderr, "no spin kernel\n"); return 1; }
    DK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    starts.resize(n);
    ends.resize(n);
    for (int k = 0; k < n; k++) {
        DK(cuEventCreate(&starts[k], CU_EVENT_DEFAULT));
        DK(cuEventCreate(&ends[k], CU_EVENT_DEFAULT));
    }
    DK(cuEventCreate(&ref, CU_EVENT_DEFAULT));
    calibrate();
    unsigned long long ns = (unsigned long long) t_us * 1000;
    for (int i = 0; i < 20; i++) run_task(n, ns, extra_iters); // warm-up
    std::vector<double> cal;
    for (int i = 0; i < 5; i++) cal.push_back(run_task(n, ns, extra_iters).latency_us);
    std::sort(cal.begin(), cal.end());
    long long period = (long long) (cal[2] * 1000 / 0.2);
    std::vector<Task> tasks;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    long long end = ns_of(CLOCK_MONOTONIC) + (long long) (seconds * 1e9);
    while (ns_of(CLOCK_MONOTONIC) < end) {
        long long t = next.tv_sec * 1000000000LL + next.tv_nsec + period;
        next.tv_sec = t / 1000000000LL;
        next.tv_nsec = t % 1000000000LL;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        tasks.push_back(run_task(n, ns, extra_iters));
    }
    std::sort(tasks.begin(), tasks.end(), [](const Task &a, const Task &b) { return a.latency_us < b.latency_us; });
    size_t m = tasks.size();
    // interpolated between ranks, as the scenario's percentiles
    auto at = [&](double p) { double r = p * (m - 1); size_t a = (size_t) floor(r), b = (size_t) ceil(r);
                              return tasks[a].latency_us + (tasks[b].latency_us - tasks[a].latency_us) * (r - a); };
    double p50 = at(0.50), p99 = at(0.99);
    double sc = 0, ss = 0, mc = 0, ms = 0, sf = 0, mf = 0;
    size_t slow = std::min(m - 1, (size_t) (m * 0.99)), lo = (size_t) (m * 0.45), hi = std::max(lo + 1, (size_t) (m * 0.55));
    for (size_t i = slow; i < m; i++) { sc += tasks[i].cpu_us; ss += tasks[i].span_us; sf += tasks[i].first_us; }
    for (size_t i = lo; i < hi; i++) { mc += tasks[i].cpu_us; ms += tasks[i].span_us; mf += tasks[i].first_us; }
    std::vector<double> firsts;
    for (const Task &t : tasks) firsts.push_back(t.first_us);
    std::sort(firsts.begin(), firsts.end());
    stopping.store(true);
    set_in_flight(false);
    if (with_spinner) pthread_join(spin_thread, NULL);
    printf("C standalone T=%ld n=%d extra_us=%g spinner=%d: %zu tasks, median %.3f ms, P99 %.3f ms, P99/median %.3f; slowest 1 %%: submit cpu %.0f us (median %.0f), device span %.0f us (median %.0f), first submit %.0f us (median %.0f); first submit of all tasks p50 %.0f p99 %.0f us\n",
           t_us, n, extra_us, with_spinner ? 1 : 0, m, p50 / 1e3, p99 / 1e3, p99 / p50, sc / (m - slow), mc / (hi - lo), ss / (m - slow), ms / (hi - lo),
           sf / (m - slow), mf / (hi - lo), firsts[m / 2], firsts[std::min(m - 1, (size_t) (m * 0.99))]);
    return 0;
}
