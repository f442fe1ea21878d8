/*
 * cuda_stubs.c: the trampolines handed out for every driver entry point that is not wrapped (they
 * wait for deferred launches first), and the kernel/function attribute setters.
 */
#include "cuda_int.h"

/* ------------------------------------------------------------------ trampolines */

/* Every other driver entry point handed out (cuGetProcAddress, dlsym) is a trampoline: when
 * launches are deferred it first waits until they are made (xqc_flush_all), then jumps to the
 * driver's function with the caller's registers and stack untouched, whatever its signature.
 * Entry points that can neither see nor order a stream's work (queries of devices, contexts,
 * functions, capture state; creating things) are handed out as they are: the trampoline would
 * only cost a load. x86-64 only; elsewhere, or when no trampoline can be made, nothing is
 * deferred. The code pages are written once, then made executable; a slot's target is data. */
#define STUB_SIZE 192 /* 191 bytes of code each */
static unsigned char *g_stub_code;
uint32_t xqc_nstubs;
pthread_mutex_t xqc_stub_mu = PTHREAD_MUTEX_INITIALIZER;

static const char *const g_noflush[] = {
    "cuInit", "cuDriverGetVersion", "cuGetErrorString", "cuGetErrorName", "cuGetExportTable",
    "cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetName", "cuDeviceGetUuid", "cuDeviceGetUuid_v2",
    "cuDeviceGetLuid", "cuDeviceTotalMem", "cuDeviceTotalMem_v2", "cuDeviceGetAttribute",
    "cuDeviceComputeCapability", "cuDeviceGetProperties", "cuDeviceGetPCIBusId", "cuDeviceGetByPCIBusId",
    "cuDeviceCanAccessPeer", "cuDeviceGetP2PAttribute", "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxGetState", "cuDeviceGetDefaultMemPool", "cuDeviceGetMemPool",
    "cuDeviceGetTexture1DLinearMaxWidth", "cuDeviceGetExecAffinitySupport",
    "cuCtxGetCurrent", "cuCtxSetCurrent", "cuCtxPushCurrent", "cuCtxPushCurrent_v2", "cuCtxPopCurrent",
    "cuCtxPopCurrent_v2", "cuCtxGetDevice", "cuCtxGetFlags", "cuCtxGetId", "cuCtxGetApiVersion", "cuCtxGetLimit",
    "cuCtxGetCacheConfig", "cuCtxGetSharedMemConfig", "cuCtxGetStreamPriorityRange", "cuCtxGetExecAffinity",
    "cuModuleGetFunction", "cuModuleGetGlobal", "cuModuleGetGlobal_v2", "cuModuleLoad", "cuModuleLoadData",
    "cuModuleLoadDataEx", "cuModuleLoadFatBinary", "cuModuleGetLoadingMode", "cuModuleGetFunctionCount",
    "cuLibraryLoadData", "cuLibraryLoadFromFile", "cuLibraryGetKernel", "cuLibraryGetModule",
    "cuLibraryGetGlobal", "cuLibraryGetManaged", "cuLibraryGetKernelCount", "cuLibraryEnumerateKernels",
    "cuKernelGetFunction", "cuKernelGetAttribute", "cuKernelGetName", "cuKernelGetParamInfo", "cuKernelGetLibrary",
    "cuFuncGetAttribute", "cuFuncGetName", "cuFuncGetParamInfo", "cuFuncGetModule", "cuFuncIsLoaded", "cuFuncLoad",
    "cuFuncGetParamCount", "cuKernelGetParamCount",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor", "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cuOccupancyMaxPotentialBlockSize", "cuOccupancyMaxPotentialBlockSizeWithFlags",
    "cuOccupancyAvailableDynamicSMemPerBlock", "cuOccupancyMaxPotentialClusterSize", "cuOccupancyMaxActiveClusters",
    "cuEventCreate", "cuEventQuery", "cuEventSynchronize", "cuEventElapsedTime", "cuEventElapsedTime_v2",
    "cuStreamCreate", "cuStreamCreateWithPriority", "cuStreamGetPriority", "cuStreamGetFlags", "cuStreamGetCtx",
    "cuStreamGetCtx_v2", "cuStreamGetId", "cuStreamGetDevice", "cuStreamIsCapturing", "cuStreamGetCaptureInfo",
    "cuStreamGetCaptureInfo_v2", "cuStreamGetCaptureInfo_v3", "cuThreadExchangeStreamCaptureMode",
    "cuPointerGetAttribute", "cuPointerGetAttributes", "cuMemGetAddressRange", "cuMemGetAddressRange_v2",
    "cuMemGetInfo", "cuMemGetInfo_v2", "cuMemAlloc", "cuMemAlloc_v2", "cuMemAllocPitch", "cuMemAllocPitch_v2",
    "cuMemAllocHost", "cuMemAllocHost_v2", "cuMemHostAlloc", "cuMemHostGetDevicePointer",
    "cuMemHostGetDevicePointer_v2", "cuMemHostGetFlags", "cuMemAllocManaged", "cuMemGetAllocationGranularity",
    "cuMemAddressReserve", "cuMemCreate", "cuMemMap", "cuMemSetAccess", "cuMemGetAccess",
    "cuMemRetainAllocationHandle", "cuMemGetAllocationPropertiesFromHandle", "cuMemPoolGetAttribute",
    "cuMemHostRegister", "cuMemHostRegister_v2", "cuGetProcAddress", "cuGetProcAddress_v2",
    "cuGraphCreate", "cuGraphInstantiate", "cuGraphInstantiate_v2", "cuGraphInstantiateWithFlags",
    "cuGraphInstantiateWithParams", "cuGraphGetNodes", "cuGraphGetRootNodes", "cuGraphGetEdges",
    "cuGraphGetEdges_v2", "cuGraphClone", "cuGraphDebugDotPrint", "cuGraphNodeGetType",
    "cuGraphNodeGetDependencies", "cuGraphNodeGetDependentNodes", "cuGraphKernelNodeGetParams",
    "cuGraphExecGetFlags", "cuGraphAddKernelNode", "cuGraphAddMemcpyNode", "cuGraphAddMemsetNode",
    "cuGraphAddHostNode", "cuGraphAddEmptyNode", "cuGraphAddEventRecordNode", "cuGraphAddEventWaitNode",
    "cuGraphAddChildGraphNode", "cuGraphAddNode", "cuGraphAddNode_v2", "cuGraphAddDependencies",
    "cuGraphAddDependencies_v2", "cuGraphAddMemAllocNode", "cuGraphAddMemFreeNode",
    "cuGraphAddBatchMemOpNode", "cuGraphAddExternalSemaphoresSignalNode",
    "cuGraphAddExternalSemaphoresWaitNode", "cuGraphNodeSetParams", "cuGraphKernelNodeSetParams",
    "cuGraphKernelNodeSetAttribute", "cuGraphKernelNodeGetAttribute", "cuGraphDestroyNode", "cuGraphDestroy",
    "cuUserObjectCreate", "cuGraphRetainUserObject", "cuLinkCreate", "cuLinkAddData", "cuLinkAddFile",
    "cuLinkComplete", "cuLinkDestroy", "cuDeviceGetGraphMemAttribute", "cuCoredumpGetAttribute",
    "cuCoredumpGetAttributeGlobal", "cuDeviceGetNvSciSyncAttributes", "cuCtxGetDevice_v2",
};

static int noflush(const char *name)
{
    for (size_t i = 0; i < sizeof g_noflush / sizeof g_noflush[0]; i++)
        if (!strcmp(name, g_noflush[i])) return 1;
    return 0;
}

int xqc_is_stub(void *p)
{
    unsigned char *c = LD(&g_stub_code);
    return c && (unsigned char *)p >= c && (unsigned char *)p < c + (size_t)NSTUBS * STUB_SIZE;
}

/* ------------------------------------------------------------------ function attributes */

/* The runtime sets a kernel's attribute (mostly its dynamic shared memory limit) before it
 * launches it, usually to the value it already has: PyTorch's ResNet-50 training did ~240 times a
 * second on the H100. Waiting there for every deferred launch of the process emptied the host
 * backlog that deferral keeps, 12 times per training step. Only a deferred launch of that kernel
 * can see the change, and setting the value last set changes nothing: cuKernelSetAttribute waits
 * only when the value differs from the one last set through it and a deferred launch that could
 * be the kernel is queued (its handle, its function in the current context, any graph, any
 * launch of another context). cuFuncSetAttribute always waits and forgets every value.
 * XQ_ATTR_WAIT=all: both always wait (the behaviour before, for comparisons). */
#define KSET 512
static struct kset {
    void *k;
    int attr, dev, val;
} g_kset[KSET];
pthread_mutex_t xqc_kset_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_kset_i = -1, g_fset_i = -1; /* their trampolines' indices: the real entry point, the counts */
static uint64_t g_kset_calls, g_kset_same, g_kset_apart; /* XQ_LOG=2 */
int xqc_attr_all;                                   /* XQ_ATTR_WAIT=all */

/* The entry for (k, attr, dev), or a free one to fill (create), or NULL. Caller holds xqc_kset_mu. */
static struct kset *kset_find(void *k, int attr, int dev, int create)
{
    uintptr_t x = (uintptr_t)k ^ ((uintptr_t)attr << 3) ^ ((uintptr_t)dev << 9);
    unsigned i = (unsigned)((x >> 4) ^ (x >> 15)) % KSET;
    for (unsigned n = 0; n < KSET; n++, i = (i + 1) % KSET) {
        struct kset *e = &g_kset[i];
        if (e->k == k && e->attr == attr && e->dev == dev) return e;
        if (!e->k) return create ? (e->k = k, e->attr = attr, e->dev = dev, e) : NULL;
    }
    return NULL; /* full: not remembered, so it waits */
}

static void kset_forget(void)
{
    pthread_mutex_lock(&xqc_kset_mu);
    memset(g_kset, 0, sizeof g_kset);
    pthread_mutex_unlock(&xqc_kset_mu);
}

/* Whether a deferred launch could be kernel k's (or see its attributes). */
static int deferred_sees(void *k)
{
    CUcontext cur = NULL;
    CUfunction f = NULL;
    if (xqc_cu.CtxGetCurrent(&cur) != CUDA_SUCCESS || !cur || !xqc_cu.KernelGetFunction ||
        xqc_cu.KernelGetFunction(&f, k) != CUDA_SUCCESS)
        return 1;
    int seen = 0;
    for (xstream *st = LD(&xqc_all); st && !seen; st = st->next_all) {
        if (!LD(&st->in_use) || !LD(&st->dq_n)) continue;
        mu_lock(&st->mu); /* taken off the queue under mu, freed after: all valid here */
        if (st->dq_head && st->ctx != cur) seen = 1;
        for (dop *op = st->dq_head; op && !seen; op = op->next) {
            void *g = op->kind == D_KERNEL ? (void *)op->a.k.f : op->kind == D_KERNEL_EX ? (void *)op->a.kx.f : NULL;
            seen = op->kind == D_GRAPH || (g && (g == k || g == (void *)f));
        }
        mu_unlock(&st->mu);
    }
    return seen;
}

static void flush_counted(int i);
static void *g_stub_target[NSTUBS];

CUresult xqc_kernel_set_attr(int attr, int val, void *k, CUdevice dev)
{
    CUresult (*real)(int, int, void *, CUdevice) = (CUresult(*)(int, int, void *, CUdevice))LD(&g_stub_target[g_kset_i]);
    ADD(&g_kset_calls, 1);
    if (LD(&xqc_deferred)) {
        pthread_mutex_lock(&xqc_kset_mu);
        struct kset *e = xqc_attr_all ? NULL : kset_find(k, attr, dev, 0);
        int same = e && e->val == val;
        pthread_mutex_unlock(&xqc_kset_mu);
        if (same) ADD(&g_kset_same, 1);
        else if (!xqc_attr_all && !deferred_sees(k)) ADD(&g_kset_apart, 1);
        else flush_counted(g_kset_i);
    }
    CUresult r = real(attr, val, k, dev);
    if (r == CUDA_SUCCESS) {
        pthread_mutex_lock(&xqc_kset_mu);
        struct kset *e = kset_find(k, attr, dev, 1);
        if (e) e->val = val;
        pthread_mutex_unlock(&xqc_kset_mu);
    }
    return r;
}

/* A function's attribute may be a kernel's: every remembered value becomes unknown. */
CUresult xqc_func_set_attr(CUfunction f, int attr, int val)
{
    CUresult (*real)(CUfunction, int, int) = (CUresult(*)(CUfunction, int, int))LD(&g_stub_target[g_fset_i]);
    kset_forget();
    if (LD(&xqc_deferred)) flush_counted(g_fset_i);
    CUresult r = real(f, attr, val);
    kset_forget(); /* a kernel's value set meanwhile by another thread may be stale now */
    return r;
}

void xqc_kset_summary(void)
{
    uint64_t n = LD(&g_kset_calls);
    if (n)
        xlog(2, "xq: cuKernelSetAttribute called %llu times; with launches deferred, %llu set the value it had and %llu "
                "concerned no deferred launch (neither waited)",
             (unsigned long long)n, (unsigned long long)LD(&g_kset_same), (unsigned long long)LD(&g_kset_apart));
}

const char *xqc_stub_name[NSTUBS];
/* XQ_LOG=2 prints which entry points waited for deferred work: how often, how long in all, longest */
uint32_t xqc_stub_waits[NSTUBS];
uint64_t xqc_stub_wait_ns[NSTUBS], xqc_stub_wait_max[NSTUBS];

/* Waits for every deferred launch, counted for entry point i (stats only; -1: none). */
static void flush_counted(int i)
{
    uint64_t t0 = now_ns();
    xqc_flush_all();
    uint64_t d = now_ns() - t0;
    ADD(&xqc_flush_waits, 1);
    if (i < 0 || i >= NSTUBS) return;
    ADD(&xqc_stub_waits[i], 1);
    ADD(&xqc_stub_wait_ns[i], d);
    for (uint64_t m = LD(&xqc_stub_wait_max[i]); d > m;)
        if (__atomic_compare_exchange_n(&xqc_stub_wait_max[i], &m, d, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) break;
}

/* Waits for every deferred launch, counted for the entry point whose driver function is real (a
 * wrapper that stands where a trampoline stood: the waits on the device) */
void xqc_flush_entry(void *real)
{
    int i = 0;
    uint32_t n = LD(&xqc_nstubs);
    while ((uint32_t)i < n && LD(&g_stub_target[i]) != real) i++;
    flush_counted((uint32_t)i < n ? i : -1);
}

static void stub_flush(int i)
{
    if (LD(&xqc_deferred)) flush_counted(i);
}

#if defined(__x86_64__)
static unsigned char *emit(unsigned char *p, const void *bytes, size_t n) { return (unsigned char *)memcpy(p, bytes, n) + n; }
static unsigned char *emit64(unsigned char *p, const void *v)
{
    uint64_t x = (uint64_t)(uintptr_t)v;
    memcpy(p, &x, 8);
    return p + 8;
}

/* Writes every stub once: endbr64; if (xqc_deferred) { save the argument registers, stub_flush(),
 * restore }; jmp *target[i]. */
static int stubs_make(void)
{
    size_t size = (size_t)NSTUBS * STUB_SIZE;
    unsigned char *code = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) return 0;
    for (int i = 0; i < NSTUBS; i++) {
        unsigned char *p = code + (size_t)i * STUB_SIZE;
        p = emit(p, "\xF3\x0F\x1E\xFA", 4);                                  /* endbr64 */
        p = emit(p, "\x49\xBB", 2), p = emit64(p, &xqc_deferred);              /* movabs r11, &xqc_deferred */
        p = emit(p, "\x41\x83\x3B\x00", 4);                                  /* cmp dword [r11], 0 */
        p = emit(p, "\x75\x0D", 2);                                          /* jne slow */
        p = emit(p, "\x49\xBB", 2), p = emit64(p, &g_stub_target[i]);        /* movabs r11, &target[i] */
        p = emit(p, "\x41\xFF\x23", 3);                                      /* jmp [r11] */
        p = emit(p, "\x57\x56\x52\x51\x41\x50\x41\x51\x50", 9);              /* push rdi rsi rdx rcx r8 r9 rax */
        p = emit(p, "\x48\x81\xEC\x80\x00\x00\x00", 7);                      /* sub rsp, 128 */
        for (int x = 0; x < 8; x++) {                                        /* movdqu [rsp+16x], xmmx */
            unsigned char m[6] = {0xF3, 0x0F, 0x7F, (unsigned char)(0x44 | x << 3), 0x24, (unsigned char)(16 * x)};
            p = emit(p, m, 6);
        }
        p = emit(p, "\xBF", 1), p = emit(p, &i, 4);                            /* mov edi, i */
        p = emit(p, "\x48\xB8", 2), p = emit64(p, (void *)stub_flush);       /* movabs rax, stub_flush */
        p = emit(p, "\xFF\xD0", 2);                                          /* call rax */
        for (int x = 0; x < 8; x++) {                                        /* movdqu xmmx, [rsp+16x] */
            unsigned char m[6] = {0xF3, 0x0F, 0x6F, (unsigned char)(0x44 | x << 3), 0x24, (unsigned char)(16 * x)};
            p = emit(p, m, 6);
        }
        p = emit(p, "\x48\x81\xC4\x80\x00\x00\x00", 7);                      /* add rsp, 128 */
        p = emit(p, "\x58\x41\x59\x41\x58\x59\x5A\x5E\x5F", 9);              /* pop rax r9 r8 rcx rdx rsi rdi */
        p = emit(p, "\x49\xBB", 2), p = emit64(p, &g_stub_target[i]);        /* movabs r11, &target[i] */
        p = emit(p, "\x41\xFF\x23", 3);                                      /* jmp [r11] */
        if (p > code + (size_t)(i + 1) * STUB_SIZE) abort(); /* STUB_SIZE too small: a bug of ours */
    }
    if (mprotect(code, size, PROT_READ | PROT_EXEC)) {
        munmap(code, size);
        return 0;
    }
    ST(&g_stub_code, code);
    return 1;
}
#else
static int stubs_make(void) { return 0; }
#endif

/* Unloading code: what is known of functions and graphs is forgotten (a new function may get
 * the address of an old one), after the deferred launches were made. */
static void *g_unload_mod, *g_unload_lib;
static void forget_functions(void)
{
    xqc_flush_all();
    pthread_mutex_lock(&xqc_fc_mu);
    for (int i = 0; i < FCACHE; i++) free(xqc_fcache[i].off), free(xqc_fcache[i].sz);
    memset(xqc_fcache, 0, sizeof xqc_fcache);
    pthread_mutex_unlock(&xqc_fc_mu);
    kset_forget();
}

static CUresult unload_module(void *m)
{
    forget_functions();
    return ((CUresult(*)(void *))g_unload_mod)(m);
}
static CUresult unload_library(void *l)
{
    forget_functions();
    return ((CUresult(*)(void *))g_unload_lib)(l);
}

/* The pointer to hand out for the driver's entry point real named name. */
void *xqc_stub_for(void *real, const char *name)
{
    if (!real || !xqc_defer || noflush(name) || xqc_is_stub(real) || real == (void *)unload_module ||
        real == (void *)unload_library || real == (void *)xqc_kernel_set_attr || real == (void *)xqc_func_set_attr)
        return real;
    if (!strcmp(name, "cuModuleUnload") || !strcmp(name, "cuLibraryUnload")) {
        void **slot = name[2] == 'M' ? &g_unload_mod : &g_unload_lib, *none = NULL;
        if (__atomic_compare_exchange_n(slot, &none, real, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) || none == real)
            return name[2] == 'M' ? (void *)unload_module : (void *)unload_library;
    }
    pthread_mutex_lock(&xqc_stub_mu);
    void *r = real;
    if (!g_stub_code && !stubs_make()) {
        if (xqc_stubs_ok >= 0) xlog(2, "xq: no trampolines (not x86-64, or no executable memory); launches are never deferred");
        ST(&xqc_stubs_ok, -1);
    } else if (LD(&xqc_stubs_ok) >= 0) {
        uint32_t i = 0;
        while (i < xqc_nstubs && g_stub_target[i] != real) i++;
        if (i == xqc_nstubs && xqc_nstubs < NSTUBS) xqc_stub_name[xqc_nstubs] = strdup(name), g_stub_target[xqc_nstubs++] = real;
        if (i < xqc_nstubs) {
            r = g_stub_code + (size_t)i * STUB_SIZE;
            if (!xqc_stubs_ok) ST(&xqc_stubs_ok, 1);
            /* the attribute setters: our wrappers, with the trampoline's index for the real one */
            int *wi = !strcmp(name, "cuKernelSetAttribute") ? &g_kset_i : !strcmp(name, "cuFuncSetAttribute") ? &g_fset_i : NULL;
            if (wi && (*wi < 0 || *wi == (int)i)) {
                ST(wi, (int)i);
                r = wi == &g_kset_i ? (void *)xqc_kernel_set_attr : (void *)xqc_func_set_attr;
            }
        } else { /* an entry point handed out bare could see deferred work: defer no more */
            xlog(1, "xq: more than %d driver entry points; launches are no longer deferred", NSTUBS);
            ST(&xqc_stubs_ok, -1);
        }
    }
    pthread_mutex_unlock(&xqc_stub_mu);
    return r;
}
