/*
 * The case of a Python extension (Triton's launcher, for one): a library that links libcuda
 * directly, dlopened with RTLD_LOCAL by a program that does not link libcuda, so libcuda is not
 * in the global scope. Built twice: with -DXQ_LOCAL_LIB as libxq-local.so (the launches), and
 * as xq-local-app (dlopens it). Usage: xq-local-app TASKS; prints {"tasks":N} on success.
 * xq-local-app probe: asks dlsym for two functions of the library named like the driver's
 * (cuXqNotDriver, cudnnXqCall) and prints {"bare":N}, N of them handed out as the library's own
 * (not an interposer trampoline).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_abi.h"

#ifdef XQ_LOCAL_LIB
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

__attribute__((visibility("default"))) int cuXqNotDriver(void) { return 7; }
__attribute__((visibility("default"))) int cudnnXqCall(void) { return 8; }

__attribute__((visibility("default"))) int xq_local_run(int tasks)
{
    CUdevice d;
    CUcontext c;
    CUmodule m;
    CUfunction f;
    CUstream s;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuModuleLoadData(&m, "m") || cuModuleGetFunction(&f, m, "spin") || cuStreamCreate(&s, 0))
        return -1;
    unsigned us = 500;
    void *p[] = {&us};
    for (int t = 0; t < tasks; t++)
        if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, p, NULL) || cuStreamSynchronize(s))
            return -1;
    return tasks;
}
#else
int main(int argc, char **argv)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", argv[0]);
    char *slash = strrchr(path, '/');
    snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0), "libxq-local.so");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h && argc > 1 && !strcmp(argv[1], "probe")) {
        int bare = 0;
        const char *names[] = {"cuXqNotDriver", "cudnnXqCall"};
        for (int i = 0; i < 2; i++) {
            void *p = dlsym(h, names[i]);
            Dl_info di;
            if (p && dladdr(p, &di) && di.dli_fname && strstr(di.dli_fname, "libxq-local.so")) bare++;
        }
        printf("{\"bare\":%d}\n", bare);
        return 0;
    }
    int (*run)(int) = h ? (int (*)(int))dlsym(h, "xq_local_run") : NULL;
    int n = run ? run(argc > 1 ? atoi(argv[1]) : 3) : -1;
    if (n < 0) {
        fprintf(stderr, "xq-local-app: %s\n", h ? "launches failed" : dlerror());
        return 1;
    }
    printf("{\"tasks\":%d}\n", n);
    return 0;
}
#endif
