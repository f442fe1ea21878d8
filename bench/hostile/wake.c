/* bench/hostile/wake.c: how late a thread wakes on this machine, with no node involved: the
 * victim tenant's tail (fake libcuda: its "device" is a thread that sleeps a kernel's time and
 * wakes the app's thread) is made of such wakeups. Two probes, N rounds each (default 1000):
 *   sleep:    clock_nanosleep 1 ms, the overshoot;
 *   pingpong: one thread sleeps 200 us and posts a semaphore, another waits on it: post to wake.
 * Prints one JSON line: {"sleep_us":[P50,P99,max],"pingpong_us":[P50,P99,max]}.
 * Build: gcc -O2 -pthread -o wake wake.c */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int n = 1000;
static double *ping;
static sem_t sem;
static volatile double posted;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void nap(long ns)
{
    struct timespec d = {0, ns};
    while (nanosleep(&d, &d) != 0) {
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *waiter(void *arg)
{
    (void)arg;
    for (int i = 0; i < n; i++) {
        while (sem_wait(&sem) != 0) {
        }
        ping[i] = now_us() - posted;
    }
    return NULL;
}

static void stats(const char *name, double *v, int k, int last)
{
    qsort(v, k, sizeof *v, cmp);
    printf("\"%s\":[%.1f,%.1f,%.1f]%s", name, v[k / 2], v[(int)((k - 1) * 0.99)], v[k - 1], last ? "" : ",");
}

int main(int argc, char **argv)
{
    if (argc > 1) n = atoi(argv[1]);
    if (n < 10) n = 10;
    double *sl = malloc(sizeof(double) * n);
    ping = malloc(sizeof(double) * n);
    if (!sl || !ping) return 1;
    for (int i = 0; i < n; i++) {
        double a = now_us();
        nap(1000000);
        sl[i] = now_us() - a - 1000.0;
    }
    sem_init(&sem, 0, 0);
    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);
    for (int i = 0; i < n; i++) {
        nap(200000);
        posted = now_us();
        sem_post(&sem);
        nap(800000); /* the waiter has woken and read posted long before the next post */
    }
    pthread_join(t, NULL);
    printf("{");
    stats("sleep_us", sl, n, 0);
    stats("pingpong_us", ping, n, 1);
    printf("}\n");
    return 0;
}
