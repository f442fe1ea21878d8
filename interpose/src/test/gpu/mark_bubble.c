/*
 * What a completion mark behind every launch costs the GPU: N dependent kernels on one stream,
 * each spinning for D us on every SM (a grid of 2 blocks per SM), back to back, the host far
 * ahead; the GPU time per kernel with no marks, with a cuStreamWriteValue64 behind each kernel
 * (the interposer's memop completion), with an event recorded behind each (its event
 * completion), and with a memop behind every 8th. The difference per kernel is the bubble a mark
 * leaves between two kernels. Prints one JSON line per (D, variant): the median of 7 rounds.
 * Usage: mark_bubble [N]     Build: gcc -O2 -I../../main/c -o mark_bubble mark_bubble.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"

static const char PTX[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry spin(.param .u64 ns)\n{\n .reg .u64 %r<5>;\n .reg .pred %p;\n"
                          " ld.param.u64 %r1, [ns];\n mov.u64 %r2, %globaltimer;\nL:\n mov.u64 %r3, %globaltimer;\n"
                          " sub.u64 %r4, %r3, %r2;\n setp.lt.u64 %p, %r4, %r1;\n @%p bra L;\n ret;\n}\n";

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) return 1;
#define F(name, ...) CUresult (*name)(__VA_ARGS__) = (CUresult(*)(__VA_ARGS__))dlsym(h, #name)
    F(cuInit, unsigned);
    F(cuDeviceGet, CUdevice *, int);
    F(cuDeviceGetAttribute, int *, int, CUdevice);
    F(cuDevicePrimaryCtxRetain, CUcontext *, CUdevice);
    F(cuCtxSetCurrent, CUcontext);
    F(cuModuleLoadData, CUmodule *, const void *);
    F(cuModuleGetFunction, CUfunction *, CUmodule, const char *);
    F(cuStreamCreate, CUstream *, unsigned);
    F(cuStreamSynchronize, CUstream);
    F(cuEventCreate, CUevent *, unsigned);
    F(cuEventRecord, CUevent, CUstream);
    F(cuMemHostRegister_v2, void *, size_t, unsigned);
    F(cuMemHostGetDevicePointer_v2, CUdeviceptr *, void *, unsigned);
    F(cuStreamWriteValue64_v2, CUstream, CUdeviceptr, cuuint64_t, unsigned);
    F(cuLaunchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
      void **, void **);
    CUdevice d;
    CUcontext c;
    CUmodule m;
    CUfunction f;
    CUstream s;
    int sms = 0;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuModuleLoadData(&m, PTX) || cuModuleGetFunction(&f, m, "spin") || cuStreamCreate(&s, 1) ||
        cuDeviceGetAttribute(&sms, 16 /* MULTIPROCESSOR_COUNT */, d)) {
        fprintf(stderr, "mark_bubble: setup failed\n");
        return 1;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    void *word = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CUdeviceptr dw;
    if (word == MAP_FAILED || cuMemHostRegister_v2(word, pg, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP) ||
        cuMemHostGetDevicePointer_v2(&dw, word, 0)) {
        fprintf(stderr, "mark_bubble: host word failed\n");
        return 1;
    }
    CUevent ev[64];
    for (int i = 0; i < 64; i++)
        if (cuEventCreate(&ev[i], CU_EVENT_DISABLE_TIMING)) return 1;
    static const char *const names[] = {"none", "memop", "event", "memop/8"};
    const unsigned long us[] = {5, 20, 80};
    uint64_t seq = 0;
    for (unsigned k = 0; k < sizeof us / sizeof us[0]; k++) {
        double base = 0;
        for (int v = 0; v < 4; v++) {
            double r[7];
            for (int round = 0; round < 8; round++) {
                unsigned long long ns = us[k] * 1000ull;
                void *args[] = {&ns};
                cuStreamSynchronize(s);
                double a = now_s();
                for (int i = 0; i < n; i++) {
                    if (cuLaunchKernel(f, 2 * sms, 1, 1, 128, 1, 1, 0, s, args, NULL)) return 1;
                    if ((v == 1 || (v == 3 && i % 8 == 7)) && cuStreamWriteValue64_v2(s, dw, ++seq, 0)) return 1;
                    if (v == 2 && cuEventRecord(ev[i % 64], s)) return 1;
                }
                cuStreamSynchronize(s);
                if (round) r[round - 1] = (now_s() - a) / n * 1e6; /* round 0 warms up */
            }
            qsort(r, 7, sizeof r[0], cmp);
            if (!v) base = r[3];
            printf("{\"kernel_us\":%lu,\"marks\":\"%s\",\"per_kernel_us\":%.3f,\"bubble_us\":%.3f}\n", us[k], names[v], r[3],
                   r[3] - base);
            fflush(stdout);
        }
    }
    return 0;
}
