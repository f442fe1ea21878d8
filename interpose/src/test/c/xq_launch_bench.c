/*
 * xq-launch-bench: the cost of one cuLaunchKernel call, measured with the fake driver's "nop"
 * kernel (which does no work). Run with and without LD_PRELOAD=libxq-cuda.so; the difference is
 * the interposer's hot path. Prints {"launches":N,"ns_per_launch":X,"lean":L,"counted":C,
 * "driver_ns":D,"driver_n":M} (best of 5 rounds; under the interposer, L of this thread's launches
 * took the lean path and C were counted, of the 6 N made; 0 0 without it; with XQ_TIME_LAUNCHES=1,
 * M of this thread's launches were timed inside the driver, D ns in all). XQ_BENCH_DEFAULT=1: on the legacy default stream, not a new one;
 * XQ_BENCH_SPIN_US=T: the fake's "spin" kernel for T us instead of "nop" (whose time measures 0).
 * XQ_BENCH_TOUCH_KB=K: between launches the program reads and writes K KiB of its own memory (a
 * line in every 64 bytes), as a real driver and framework do between two launches, so that the
 * interposer runs with cold caches as it does on a GPU host; the touch is timed alone and taken off.
 * XQ_BENCH_PAIR=1: paired instead (as bench/gpu/probe/launchpair.cu on a GPU): launches on the
 * legacy default stream through the fake driver's own cuLaunchKernel (glibc's dlsym, which the
 * interposer does not see) and through the one cuGetProcAddress hands out (the interposer's under
 * LD_PRELOAD) alternate, each timed alone after the touch, a synchronize every 32 pairs; prints
 * {"pairs":N,"diff_p50_ns":..,"diff_p90_ns":..,"diff_p99_ns":..,"diff_mean_ns":..} (via - bare).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cuda_abi.h"

CUresult cuInit(unsigned int);
CUresult cuDeviceGet(CUdevice *, int);
CUresult cuDevicePrimaryCtxRetain(CUcontext *, CUdevice);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuModuleLoadData(CUmodule *, const void *);
CUresult cuModuleGetFunction(CUfunction *, CUmodule, const char *);
CUresult cuStreamCreate(CUstream *, unsigned int);
CUresult cuStreamSynchronize(CUstream);
CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        CUstream, void **, void **);

/* XQ_BENCH_CODE=1: before each launch, also straight-line code run (32,768 three-byte
 * instructions, 96 KiB): the instruction caches a framework leaves between two launches (PyTorch's
 * dispatcher and the driver run far more code than that), so that the interposer's own code is
 * fetched cold as on a GPU host. x86-64 only. */
static void code_sweep(void)
{
#if defined(__x86_64__)
    __asm__ volatile(".rept 32768\n\taddl $1, %%eax\n\t.endr" ::: "eax", "cc");
#endif
}

typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);
typedef void *(*dlsym_t)(void *, const char *);

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction nop;
    CUstream s;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuModuleLoadData(&mod, "m") || cuModuleGetFunction(&nop, mod, "nop") || cuStreamCreate(&s, 0)) {
        fprintf(stderr, "xq-launch-bench: setup failed\n");
        return 1;
    }
    if (getenv("XQ_BENCH_DEFAULT")) s = NULL; /* the timed launches on the legacy default stream */
    /* XQ_BENCH_SPIN_US=T: the timed launches are of "spin" for T us (a kind whose time can be measured) */
    unsigned spin_us = getenv("XQ_BENCH_SPIN_US") ? (unsigned)atoi(getenv("XQ_BENCH_SPIN_US")) : 0;
    void *spin_p[] = {&spin_us}, **kp = NULL;
    if (spin_us) {
        if (cuModuleGetFunction(&nop, mod, "spin")) {
            fprintf(stderr, "xq-launch-bench: no spin kernel\n");
            return 1;
        }
        kp = spin_p;
    }
    const char *tk = getenv("XQ_BENCH_TOUCH_KB");
    size_t touch = tk ? (size_t)atol(tk) * 1024 : 0;
    volatile unsigned char *buf = touch ? calloc(1, touch) : NULL;
    if (touch && !buf) return 1;
    int code = getenv("XQ_BENCH_CODE") != NULL;
    if (getenv("XQ_BENCH_PAIR")) {
        dlsym_t gd = (dlsym_t)dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34");
        if (!gd) gd = (dlsym_t)dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5");
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD), *p = NULL;
        launch_t bare = gd && h ? (launch_t)gd(h, "cuLaunchKernel") : NULL, via;
        if (!bare || cuGetProcAddress("cuLaunchKernel", &p, 12000, 0) || !(via = (launch_t)p)) {
            fprintf(stderr, "xq-launch-bench: no cuLaunchKernel (driver's %p, cuGetProcAddress's %p)\n", (void *)bare, p);
            return 1;
        }
        long long *d = calloc((size_t)n, sizeof *d);
        if (!d) return 1;
        double mean = 0;
        for (long i = -2000; i < n; i++) { /* the first 2,000 pairs warm up */
            long long t[2];
            for (int k = 0; k < 2; k++) {
                int use_via = (i & 1) ? k == 0 : k == 1; /* the order alternates pair by pair */
                for (size_t o = 0; o < touch; o += 64) buf[o]++;
                if (code) code_sweep();
                double t0 = now_ns();
                CUresult r = (use_via ? via : bare)(nop, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
                t[use_via] = (long long)(now_ns() - t0);
                if (r) {
                    fprintf(stderr, "xq-launch-bench: launch failed: %d\n", (int)r);
                    return 1;
                }
            }
            if (i >= 0) d[i] = t[1] - t[0], mean += (double)d[i];
            if ((i & 31) == 31) cuStreamSynchronize(NULL);
        }
        cuStreamSynchronize(NULL);
        qsort(d, (size_t)n, sizeof *d, cmp_ll);
        printf("{\"pairs\":%ld,\"touch_kb\":%zu,\"diff_p50_ns\":%lld,\"diff_p90_ns\":%lld,\"diff_p99_ns\":%lld,\"diff_mean_ns\":%.0f,"
               "\"code_kb\":%d,\"same_function\":%s}\n", n, touch / 1024, d[n / 2], d[n * 9 / 10], d[n * 99 / 100], mean / n,
               code ? 96 : 0, (void *)bare == p ? "true" : "false");
        return 0;
    }
    double touch_ns = 0;
    if (touch || code) { /* the touch (and the code run) alone, best of 5 */
        touch_ns = 1e18;
        for (int round = 0; round < 6; round++) {
            double t0 = now_ns();
            for (long i = 0; i < n / 10; i++) {
                for (size_t o = 0; o < touch; o += 64) buf[o]++;
                if (code) code_sweep();
            }
            double per = (now_ns() - t0) / (n / 10);
            if (round && per < touch_ns) touch_ns = per;
        }
    }
    double best = 1e18;
    for (int round = 0; round < 6; round++) { /* round 0 warms up */
        double t0 = now_ns();
        for (long i = 0; i < n; i++) {
            if (cuLaunchKernel(nop, 1, 1, 1, 1, 1, 1, 0, s, kp, NULL)) {
                fprintf(stderr, "xq-launch-bench: launch failed\n");
                return 1;
            }
            for (size_t o = 0; o < touch; o += 64) buf[o]++;
            if (code) code_sweep();
        }
        double per = (now_ns() - t0) / n - touch_ns;
        cuStreamSynchronize(s);
        if (round && per < best)
            best = per;
    }
    /* under the interposer: this thread's lean launches and the launches it counted (xq_bench_counts) */
    void (*counts)(unsigned long long *) = (void (*)(unsigned long long *))dlsym(RTLD_DEFAULT, "xq_bench_counts");
    unsigned long long c[2] = {0, 0};
    if (counts) counts(c);
    /* and, with XQ_TIME_LAUNCHES=1, this thread's time inside the driver's launch calls (xq_bench_launch_time) */
    void (*lt)(unsigned long long *) = (void (*)(unsigned long long *))dlsym(RTLD_DEFAULT, "xq_bench_launch_time");
    unsigned long long d[2] = {0, 0};
    if (lt) lt(d);
    printf("{\"launches\":%ld,\"ns_per_launch\":%.1f,\"lean\":%llu,\"counted\":%llu,\"driver_ns\":%llu,\"driver_n\":%llu}\n", n,
           best, c[0], c[1], d[0], d[1]);
    return 0;
}
