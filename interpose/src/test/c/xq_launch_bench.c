/*
 * xq-launch-bench: the cost of one cuLaunchKernel call, measured with the fake driver's "nop"
 * kernel (which does no work). Run with and without LD_PRELOAD=libxq-cuda.so; the difference is
 * the interposer's hot path. Prints {"launches":N,"ns_per_launch":X} (best of 5 rounds).
 * XQ_BENCH_TOUCH_KB=K: between launches the program reads and writes K KiB of its own memory (a
 * line in every 64 bytes), as a real driver and framework do between two launches, so that the
 * interposer runs with cold caches as it does on a GPU host; the touch is timed alone and taken off.
 */
#define _GNU_SOURCE
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
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        CUstream, void **, void **);

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
    const char *tk = getenv("XQ_BENCH_TOUCH_KB");
    size_t touch = tk ? (size_t)atol(tk) * 1024 : 0;
    volatile unsigned char *buf = touch ? calloc(1, touch) : NULL;
    if (touch && !buf) return 1;
    double touch_ns = 0;
    if (touch) { /* the touch alone, best of 5 */
        touch_ns = 1e18;
        for (int round = 0; round < 6; round++) {
            double t0 = now_ns();
            for (long i = 0; i < n / 10; i++)
                for (size_t o = 0; o < touch; o += 64) buf[o]++;
            double per = (now_ns() - t0) / (n / 10);
            if (round && per < touch_ns) touch_ns = per;
        }
    }
    double best = 1e18;
    for (int round = 0; round < 6; round++) { /* round 0 warms up */
        double t0 = now_ns();
        for (long i = 0; i < n; i++) {
            if (cuLaunchKernel(nop, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL)) {
                fprintf(stderr, "xq-launch-bench: launch failed\n");
                return 1;
            }
            for (size_t o = 0; o < touch; o += 64) buf[o]++;
        }
        double per = (now_ns() - t0) / n - touch_ns;
        cuStreamSynchronize(s);
        if (round && per < best)
            best = per;
    }
    printf("{\"launches\":%ld,\"ns_per_launch\":%.1f}\n", n, best);
    return 0;
}
