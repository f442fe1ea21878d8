/* fake_cuda_entry.c: the fake driver's error strings, green contexts, cuStreamWaitEvent and cuGetProcAddress. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "fake_cuda_int.h"
#include <stdio.h>

/* ------------------------------------------------------------------ errors, entry points */

EXPORT CUresult cuGetErrorString(CUresult r, const char **s)
{
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    switch (r) {
    case CUDA_SUCCESS: *s = "no error"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "invalid argument"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *s = "invalid device context"; break;
    case CUDA_ERROR_INVALID_HANDLE: *s = "invalid resource handle"; break;
    case CUDA_ERROR_NOT_FOUND: *s = "named symbol not found"; break;
    case CUDA_ERROR_NOT_READY: *s = "device not ready"; break;
    default: *s = "unknown error"; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ green contexts
 * As CUDA 12.4+ (Hopper's granularity: partitions of 8 multiprocessors): a CUdevResource is 144
 * bytes, its type at 0 and its count at 96; a green context's streams run on the primary
 * context's device. Here they run as any stream; they count their kernels. As the real driver (an
 * H200, driver 580: CUDA error 915), what a split makes, its groups and its remainder, cannot be
 * split again: only a resource read from the device or from a green context can (the fake marks
 * those at byte 100). */
#define FK_SPLITTABLE 0x5a17
struct xq_fake_green {
    int dev, sms;
};
EXPORT CUresult cuDeviceGetDevResource(CUdevice d, void *res, int type)
{
    if (!res || d < 0 || d >= fk_ndev() || type != 1)
        return CUDA_ERROR_INVALID_VALUE;
    memset(res, 0, 144);
    *(int *)res = 1;
    *(unsigned *)((char *)res + 96) = (unsigned)g_sms;
    *(unsigned *)((char *)res + 100) = FK_SPLITTABLE;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDevSmResourceSplitByCount(void *result, unsigned *groups, const void *in, void *rest, unsigned flags,
                                            unsigned min)
{
    if (!result || !groups || !*groups || !in || *(const int *)in != 1 || (flags & ~3u) || !min || min % 8)
        return CUDA_ERROR_INVALID_VALUE;
    /* flag 2 (CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE): the counts asked, as the H200's
     * driver made them; refused with FAKECUDA_CLUSTER_SPLIT=0 (a device before compute capability
     * 9.0). FAKECUDA_SPLIT_LOG=1: every split said on stderr, with its flags */
    if ((flags & 2) && !g_cluster_split)
        return CUDA_ERROR_INVALID_VALUE;
    if (g_split_log)
        fprintf(stderr, "fakecuda: split by %u, flags %u\n", min, flags);
    unsigned have = *(const unsigned *)((const char *)in + 96);
    if (*(const unsigned *)((const char *)in + 100) != FK_SPLITTABLE)
        return 915; /* CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION */
    if (min > have)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned made = 0;
    while (made < *groups && (made + 1) * min <= have) {
        char *e = (char *)result + (size_t)made * 144;
        memset(e, 0, 144);
        *(int *)e = 1;
        *(unsigned *)(e + 96) = min;
        made++;
    }
    *groups = made;
    if (rest) {
        memset(rest, 0, 144);
        *(int *)rest = 1;
        *(unsigned *)((char *)rest + 96) = have - made * min;
    }
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDevResourceGenerateDesc(void **desc, void *res, unsigned n)
{
    if (!desc || !res || n != 1 || *(int *)res != 1)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned *d = malloc(sizeof *d);
    *d = *(unsigned *)((char *)res + 96);
    *desc = d;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGreenCtxCreate(void **g, void *desc, CUdevice d, unsigned flags)
{
    (void)flags;
    if (!g || !desc || d < 0 || d >= fk_ndev())
        return CUDA_ERROR_INVALID_VALUE;
    if (!g_green)
        return 801; /* CUDA_ERROR_NOT_SUPPORTED */
    struct xq_fake_green *x = calloc(1, sizeof *x);
    x->dev = d, x->sms = (int)*(unsigned *)desc;
    *g = x;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGreenCtxGetDevResource(void *g, void *res, int type)
{
    struct xq_fake_green *x = g;
    if (!x || !res || type != 1)
        return CUDA_ERROR_INVALID_VALUE;
    memset(res, 0, 144);
    *(int *)res = 1;
    *(unsigned *)((char *)res + 96) = (unsigned)x->sms;
    *(unsigned *)((char *)res + 100) = FK_SPLITTABLE;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuGreenCtxStreamCreate(CUstream *ph, void *g, unsigned flags, int prio)
{
    struct xq_fake_green *x = g;
    if (!ph || !x || !(flags & 1)) /* CU_STREAM_NON_BLOCKING is required */
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext c = NULL;
    if (cuDevicePrimaryCtxRetain(&c, x->dev) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUstream_st *s = fk_stream_new(c, prio);
    s->green = x->sms;
    *ph = s;
    return CUDA_SUCCESS;
}
static CUresult wait_event_of(CUstream h, CUevent e, unsigned flags, int ptsz)
{
    if (!e || flags)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *on = __atomic_load_n(&e->s, __ATOMIC_ACQUIRE);
    if (!on) /* never recorded: nothing to wait for */
        return fk_resolve(h, ptsz) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    if (g_join_fail && on->green)
        return (CUresult)g_join_fail;
    return fk_enqueue(h, ptsz, (op){.kind = OP_WAITEV, .on = on, .v64 = __atomic_load_n(&e->target, __ATOMIC_RELAXED)});
}
EXPORT CUresult cuStreamWaitEvent(CUstream h, CUevent e, unsigned flags) { return wait_event_of(h, e, flags, 0); }
EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream h, CUevent e, unsigned flags) { return wait_event_of(h, e, flags, 1); }
EXPORT unsigned long long xq_fake_green_launches(void) { return __atomic_load_n(&g_green_launches, __ATOMIC_RELAXED); }

EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags);
EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *status);

#define P(name, fn, ptsz, minver) {name, (void *)(fn), (void *)(ptsz), minver}
static const struct {
    const char *name;
    void *fn, *ptsz;
    int minver;
} g_procs[] = {
    P("cuInit", cuInit, 0, 2000), P("cuDriverGetVersion", cuDriverGetVersion, 0, 2020),
    P("cuDeviceGetCount", cuDeviceGetCount, 0, 2000), P("cuDeviceGet", cuDeviceGet, 0, 2000),
    P("cuDeviceGetName", cuDeviceGetName, 0, 2000), P("cuDeviceGetUuid", cuDeviceGetUuid_v2, 0, 11040),
    P("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain, 0, 7000),
    P("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2, 0, 11000),
    P("cuCtxSetCurrent", cuCtxSetCurrent, 0, 4000), P("cuCtxGetCurrent", cuCtxGetCurrent, 0, 4000),
    P("cuCtxGetDevice", cuCtxGetDevice, 0, 2000), P("cuCtxSynchronize", cuCtxSynchronize, 0, 2000),
    P("cuCtxSynchronize", cuCtxSynchronize_v2, 0, 13000), /* one name, two ABIs: the newest one asked */
    P("cuCtxPushCurrent", cuCtxPushCurrent_v2, 0, 4000), P("cuCtxPopCurrent", cuCtxPopCurrent_v2, 0, 4000),
    P("cuCtxCreate", cuCtxCreate_v2, 0, 3020),
    P("cuCtxGetStreamPriorityRange", cuCtxGetStreamPriorityRange, 0, 5050),
    P("cuStreamCreate", cuStreamCreate, 0, 2000),
    P("cuStreamCreateWithPriority", cuStreamCreateWithPriority, 0, 5050),
    P("cuStreamGetPriority", cuStreamGetPriority, cuStreamGetPriority_ptsz, 5050),
    P("cuStreamGetCtx", cuStreamGetCtx, cuStreamGetCtx_ptsz, 9020),
    P("cuStreamSynchronize", cuStreamSynchronize, cuStreamSynchronize_ptsz, 2000),
    P("cuStreamQuery", cuStreamQuery, cuStreamQuery_ptsz, 2000),
    P("cuStreamDestroy", cuStreamDestroy_v2, 0, 4000), P("cuEventCreate", cuEventCreate, 0, 2000),
    P("cuEventRecord", cuEventRecord, cuEventRecord_ptsz, 2000), P("cuEventQuery", cuEventQuery, 0, 2000),
    P("cuEventSynchronize", cuEventSynchronize, 0, 2000),
    P("cuEventElapsedTime", cuEventElapsedTime, 0, 2000), P("cuEventDestroy", cuEventDestroy_v2, 0, 4000),
    P("cuModuleLoadData", cuModuleLoadData, 0, 2000), P("cuModuleGetFunction", cuModuleGetFunction, 0, 2000),
    P("cuLaunchKernel", cuLaunchKernel, cuLaunchKernel_ptsz, 4000),
    P("cuLaunchKernelEx", cuLaunchKernelEx, cuLaunchKernelEx_ptsz, 11060),
    P("cuFuncGetParamInfo", cuFuncGetParamInfo, 0, 12040),
    P("cuLibraryGetKernel", cuLibraryGetKernel, 0, 12000), P("cuKernelGetFunction", cuKernelGetFunction, 0, 12000),
    P("cuKernelSetAttribute", cuKernelSetAttribute, 0, 12000), P("cuFuncSetAttribute", cuFuncSetAttribute, 0, 9000),
    P("cuMemAlloc", cuMemAlloc_v2, 0, 3020), P("cuMemFree", cuMemFree_v2, 0, 3020),
    P("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz, 3020),
    P("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz, 3020),
    P("cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz, 3020),
    P("cuMemsetD32Async", cuMemsetD32Async, cuMemsetD32Async_ptsz, 3020),
    P("cuMemsetD8Async", cuMemsetD8Async, cuMemsetD8Async_ptsz, 3020),
    P("cuMemsetD16Async", cuMemsetD16Async, cuMemsetD16Async_ptsz, 3020),
    P("cuMemcpyAsync", cuMemcpyAsync, cuMemcpyAsync_ptsz, 4000),
    P("cuLaunchHostFunc", cuLaunchHostFunc, cuLaunchHostFunc_ptsz, 10000),
    P("cuStreamBeginCapture", cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz, 10010),
    P("cuStreamEndCapture", cuStreamEndCapture, cuStreamEndCapture_ptsz, 10000),
    P("cuGetErrorString", cuGetErrorString, 0, 6000),
    P("cuStreamWriteValue32", cuStreamWriteValue32_v2, cuStreamWriteValue32_v2_ptsz, 11070),
    P("cuStreamWriteValue64", cuStreamWriteValue64_v2, cuStreamWriteValue64_v2_ptsz, 11070),
    P("cuStreamWaitValue32", cuStreamWaitValue32_v2, cuStreamWaitValue32_v2_ptsz, 11070),
    P("cuDeviceGetAttribute", cuDeviceGetAttribute, 0, 2000),
    P("cuMemHostRegister", cuMemHostRegister_v2, 0, 6050), P("cuMemHostUnregister", cuMemHostUnregister, 0, 4000),
    P("cuMemHostGetDevicePointer", cuMemHostGetDevicePointer_v2, 0, 3020),
    P("cuMemHostAlloc", cuMemHostAlloc, 0, 2020), P("cuMemFreeHost", cuMemFreeHost, 0, 2000),
    P("cuDeviceGetDevResource", cuDeviceGetDevResource, 0, 12040),
    P("cuDevSmResourceSplitByCount", cuDevSmResourceSplitByCount, 0, 12040),
    P("cuDevResourceGenerateDesc", cuDevResourceGenerateDesc, 0, 12040), P("cuGreenCtxCreate", cuGreenCtxCreate, 0, 12040),
    P("cuGreenCtxStreamCreate", cuGreenCtxStreamCreate, 0, 12040),
    P("cuGreenCtxGetDevResource", cuGreenCtxGetDevResource, 0, 12040),
    P("cuStreamWaitEvent", cuStreamWaitEvent, cuStreamWaitEvent_ptsz, 3020),
    P("cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags, 0, 11040),
    P("cuGraphInstantiate", cuGraphInstantiateWithFlags, 0, 12000), /* CUDA 12's cuGraphInstantiate takes flags */
    P("cuGraphLaunch", cuGraphLaunch, cuGraphLaunch_ptsz, 10000), P("cuGraphExecDestroy", cuGraphExecDestroy, 0, 10000),
    P("cuGraphDestroy", cuGraphDestroy, 0, 10000),
};

EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *status)
{
    if (!sym || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    if (ver > 13000)
        return CUDA_ERROR_INVALID_VALUE; /* newer than this driver */
    *pfn = NULL;
    int found = 0;
    if (!strcmp(sym, "cuGetProcAddress"))
        *pfn = ver >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress, found = 1;
    int best = -1; /* a name of several ABIs: the newest one not newer than asked */
    for (size_t i = 0; !found && i < sizeof g_procs / sizeof g_procs[0]; i++)
        if (!strcmp(sym, g_procs[i].name)) {
            if (ver >= g_procs[i].minver && (best < 0 || g_procs[i].minver > g_procs[best].minver))
                best = (int)i;
            if (i + 1 == sizeof g_procs / sizeof g_procs[0] || strcmp(sym, g_procs[i + 1].name))
                found = 1;
        }
    if (best >= 0)
        *pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && g_procs[best].ptsz ? g_procs[best].ptsz
                                                                                             : g_procs[best].fn;
    if (status)
        *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : found ? 2 /* VERSION_NOT_SUFFICIENT */
                                                             : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    return cuGetProcAddress_v2(sym, pfn, ver, flags, NULL);
}
