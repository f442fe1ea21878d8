/*
 * The cost of one cuLaunchKernel of an empty kernel on a real GPU (PTX built in): run it bare
 * and under LD_PRELOAD=libxq-cuda.so; the difference is the interposer's hot path, the
 * cuEventRecord behind each launch included. Rounds of 1000 launches (few enough that the GPU's
 * queue never pushes back), each followed by a synchronisation; prints the mean and the best round.
 * Usage: launch_bench [legacy|explicit] [record]   (record: a cuEventRecord after each launch, by
 * the program itself: what the interposer adds, without it)
 * Build: gcc -O2 -I../../main/c -o launch_bench launch_bench.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

#include "cuda_abi.h"

static const char PTX[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry nop()\n{\n ret;\n}\n";

int main(int argc, char **argv)
{
    int legacy = argc > 1 && argv[1][0] == 'l', record = argc > 2;
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        return 1;
#define F(name, ...) CUresult (*name)(__VA_ARGS__) = (CUresult(*)(__VA_ARGS__))dlsym(h, #name)
    F(cuInit, unsigned);
    F(cuDeviceGet, CUdevice *, int);
    F(cuDevicePrimaryCtxRetain, CUcontext *, CUdevice);
    F(cuCtxSetCurrent, CUcontext);
    F(cuModuleLoadData, CUmodule *, const void *);
    F(cuModuleGetFunction, CUfunction *, CUmodule, const char *);
    F(cuStreamCreate, CUstream *, unsigned);
    F(cuStreamSynchronize, CUstream);
    F(cuEventCreate, CUevent *, unsigned);
    F(cuEventRecord, CUevent, CUstream);
    F(cuLaunchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
      void **, void **);
    CUdevice d;
    CUcontext c;
    CUmodule m;
    CUfunction f;
    CUstream s;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuModuleLoadData(&m, PTX) || cuModuleGetFunction(&f, m, "nop") || cuStreamCreate(&s, 1)) {
        fprintf(stderr, "launch_bench: setup failed\n");
        return 1;
    }
    CUevent ev[64];
    for (int i = 0; i < 64; i++)
        if (cuEventCreate(&ev[i], CU_EVENT_DISABLE_TIMING))
            return 1;
    if (legacy)
        s = NULL;
    double best = 1e18, sum = 0;
    for (int round = 0; round < 50; round++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < 1000; i++)
            if (cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL) || (record && cuEventRecord(ev[i % 64], s)))
                return 1;
        clock_gettime(CLOCK_MONOTONIC, &b);
        cuStreamSynchronize(s);
        double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1000;
        if (round >= 5)
            sum += ns, best = ns < best ? ns : best;
    }
    printf("{\"stream\":\"%s\",\"record\":%d,\"mean_ns\":%.1f,\"best_ns\":%.1f}\n", legacy ? "legacy" : "explicit",
           record, sum / 45, best);
    return 0;
}
