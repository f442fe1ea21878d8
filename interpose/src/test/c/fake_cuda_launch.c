/* fake_cuda_launch.c: the fake driver's work: modules, kernels, launches, copies, memops, host memory, capture, graphs. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "fake_cuda_int.h"

struct CUfunc_st {
    int kind;
    int max_smem; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (8); 0: the default, 48 KiB */
};
/* A CUkernel (context-independent handle); its function in any context is the one of g_funcs. */
struct xq_fake_kernel {
    struct CUfunc_st *f;
};
struct CUmod_st {
    int unused;
};
enum { F_SPIN, F_INC, F_NOP, F_FAIL };
static struct CUfunc_st g_funcs[] = {{F_SPIN, 0}, {F_INC, 0}, {F_NOP, 0}, {F_FAIL, 0}};
static struct xq_fake_kernel g_kernels[] = {{&g_funcs[0]}, {&g_funcs[1]}, {&g_funcs[2]}, {&g_funcs[3]}};
static struct CUmod_st g_module;

static unsigned long long g_waits; /* stream waits queued (xq_fake_waits) */
unsigned long long g_green_launches; /* kernels launched into green streams (xq_fake_green_launches) */

/* ------------------------------------------------------------------ modules, memory, launches */

EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    (void)image; /* ignored: every module has every function */
    if (!m)
        return CUDA_ERROR_INVALID_VALUE;
    *m = &g_module;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    static const char *names[] = {"spin", "inc", "nop", "fail"};
    if (!f || !m || !name)
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, names[i])) {
            *f = &g_funcs[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    if (!p || !n)
        return CUDA_ERROR_INVALID_VALUE;
    void *m = calloc(1, n);
    if (!m)
        return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    *p = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}

/* Kernel attributes: a launch asking for more dynamic shared memory than its function's limit
 * fails, as on a GPU (the reason a changed limit must not reach an earlier launch). */
#define ATTR_MAX_DYN_SMEM 8
static struct CUfunc_st *kernel_func(void *k)
{
    for (size_t i = 0; i < sizeof g_kernels / sizeof g_kernels[0]; i++)
        if (k == &g_kernels[i])
            return g_kernels[i].f;
    return NULL;
}
static CUresult set_attr(struct CUfunc_st *f, int attr, int val)
{
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (attr != ATTR_MAX_DYN_SMEM || val < 0 || val > 227 * 1024)
        return CUDA_ERROR_INVALID_VALUE;
    __atomic_store_n(&f->max_smem, val, __ATOMIC_SEQ_CST);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuLibraryGetKernel(void **k, void *lib, const char *name)
{
    (void)lib; /* the fake has one library: the module's kernels */
    static const char *names[] = {"spin", "inc", "nop", "fail"};
    if (!k || !name)
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, names[i])) {
            *k = &g_kernels[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}
EXPORT CUresult cuKernelGetFunction(CUfunction *f, void *k)
{
    if (!f)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_cur())
        return CUDA_ERROR_INVALID_CONTEXT;
    return (*f = kernel_func(k)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
EXPORT CUresult cuKernelSetAttribute(int attr, int val, void *k, CUdevice dev)
{
    (void)dev;
    return set_attr(kernel_func(k), attr, val);
}
EXPORT CUresult cuFuncSetAttribute(CUfunction f, int attr, int val)
{
    return set_attr(f >= g_funcs && f < g_funcs + 4 ? f : NULL, attr, val);
}

/* threads: the launch's (0 when not known). A spin kernel that could fill more multiprocessors than
 * the green context it is launched into has runs that much longer (us x its width / the context's):
 * the time of a kernel that fills the device grows so when it runs on part of it. */
static CUresult launch(CUfunction f, CUstream h, void **params, int ptsz, unsigned shmem, uint64_t threads);

/* Parameters packed in one buffer (extra: CU_LAUNCH_PARAM_BUFFER_POINTER, _SIZE, END), read at the
 * call as the driver does, by the layout cuFuncGetParamInfo gives; both ways at once is refused. */
static CUresult launch_x(CUfunction f, CUstream h, void **params, void **extra, int ptsz, unsigned shmem, uint64_t threads)
{
    if (!extra || extra[0] == (void *)0x00)
        return launch(f, h, params, ptsz, shmem, threads);
    if (params)
        return CUDA_ERROR_INVALID_VALUE;
    const unsigned char *buf = NULL;
    const size_t *size = NULL;
    int i = 0;
    for (; i < 8 && extra[i] != (void *)0x00; i += 2) {
        if (extra[i] == (void *)0x01) buf = extra[i + 1];
        else if (extra[i] == (void *)0x02) size = extra[i + 1];
        else return CUDA_ERROR_INVALID_VALUE;
    }
    size_t need = !f ? 0 : f->kind == F_SPIN ? 4 : f->kind == F_INC ? 12 : 0;
    if (i >= 8 || !size || *size < need || (need && !buf))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned char copy[16];
    memcpy(copy, buf, need);
    void *p[] = {copy, copy + 8};
    if (f->kind == F_SPIN) p[0] = copy;
    return launch(f, h, need ? p : NULL, ptsz, shmem, threads);
}

static CUresult launch(CUfunction f, CUstream h, void **params, int ptsz, unsigned shmem, uint64_t threads)
{
    if (!f || (f->kind != F_NOP && f->kind != F_FAIL && !params))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *gs = fk_resolve(h, ptsz);
    if (gs && gs->green && f->kind != F_FAIL)
        __atomic_add_fetch(&g_green_launches, 1, __ATOMIC_RELAXED);
    int max = __atomic_load_n(&f->max_smem, __ATOMIC_SEQ_CST);
    if (shmem > (unsigned)(max ? max : 48 * 1024))
        return CUDA_ERROR_INVALID_VALUE;
    switch (f->kind) {
    case F_SPIN:
    {
        unsigned us = *(unsigned *)params[0];
        uint64_t need = g_tps > 0 ? (threads + (uint64_t)g_tps - 1) / (uint64_t)g_tps : 0;
        if (gs && gs->green > 0 && need > (uint64_t)gs->green)
            us = (unsigned)((uint64_t)us * (need < (uint64_t)g_sms ? need : (uint64_t)g_sms) * (uint64_t)g_green_slow
                            / 100 / (uint64_t)gs->green);
        static unsigned spins;
        if (g_slow_every && __atomic_add_fetch(&spins, 1, __ATOMIC_RELAXED) % (unsigned)g_slow_every == 0)
            us += (unsigned)g_slow_us;
        return fk_enqueue(h, ptsz, (op){.kind = OP_SPIN, .us = us});
    }
    case F_INC:
        return fk_enqueue(h, ptsz,
                       (op){.kind = OP_INC, .dst = (void *)(uintptr_t) * (CUdeviceptr *)params[0],
                            .n = *(unsigned *)params[1]});
    case F_NOP: { /* nothing before it: done at once, without the worker */
        struct CUstream_st *s = fk_resolve(h, ptsz);
        if (!s)
            return CUDA_ERROR_INVALID_CONTEXT;
        if (s->capturing)
            return CUDA_SUCCESS;
        pthread_mutex_lock(&s->mu);
        int direct = !s->head;
        if (direct) {
            __atomic_add_fetch(&s->submitted, 1, __ATOMIC_RELEASE);
            __atomic_add_fetch(&s->completed, 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&s->mu);
        return direct ? CUDA_SUCCESS : fk_enqueue(h, ptsz, (op){.kind = OP_SPIN, .us = 0});
    }
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

/* The layout of the fake's kernels: spin(unsigned us), inc(CUdeviceptr, unsigned n); nop, fail: none. */
EXPORT CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
    if (!f || !off || !size || f < g_funcs || f >= g_funcs + sizeof g_funcs / sizeof g_funcs[0])
        return CUDA_ERROR_INVALID_HANDLE;
    static const size_t spin[][2] = {{0, 4}}, inc[][2] = {{0, 8}, {8, 4}};
    size_t n = f->kind == F_SPIN ? 1 : f->kind == F_INC ? 2 : 0;
    if (i >= n)
        return CUDA_ERROR_INVALID_VALUE;
    const size_t *e = f->kind == F_SPIN ? spin[i] : inc[i];
    *off = e[0], *size = e[1];
    return CUDA_SUCCESS;
}

#define LK_PARAMS                                                                                   \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,     \
     unsigned shmem, CUstream h, void **params, void **extra)
#define LK_THREADS ((uint64_t)gx * gy * gz * bx * by * bz)
EXPORT CUresult cuLaunchKernel LK_PARAMS { return launch_x(f, h, params, extra, 0, shmem, LK_THREADS); }
EXPORT CUresult cuLaunchKernel_ptsz LK_PARAMS { return launch_x(f, h, params, extra, 1, shmem, LK_THREADS); }

#define CFG_THREADS(c) ((uint64_t)(c)->gridDimX * (c)->gridDimY * (c)->gridDimZ * (c)->blockDimX * (c)->blockDimY * (c)->blockDimZ)
EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    return c ? launch_x(f, c->hStream, params, extra, 0, c->sharedMemBytes, CFG_THREADS(c)) : CUDA_ERROR_INVALID_VALUE;
}
EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    return c ? launch_x(f, c->hStream, params, extra, 1, c->sharedMemBytes, CFG_THREADS(c)) : CUDA_ERROR_INVALID_VALUE;
}

/* A host source is pageable here (nothing is pinned on the fake): it is staged at the call, as
 * the real driver does, so the caller may reuse it as soon as the call returns. */
static CUresult htod(CUdeviceptr d, const void *s, size_t n, CUstream h, int ptsz)
{
    void *staged = malloc(n ? n : 1);
    if (!staged) return CUDA_ERROR_INVALID_VALUE;
    memcpy(staged, s, n);
    CUresult r = fk_enqueue(h, ptsz, (op){.kind = OP_COPY, .dst = (void *)(uintptr_t)d, .src = staged, .n = n, .own = staged});
    if (r != CUDA_SUCCESS) free(staged);
    return r;
}
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream h) { return htod(d, s, n, h, 0); }
EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *s, size_t n, CUstream h) { return htod(d, s, n, h, 1); }
EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
    return fk_enqueue(h, 0, (op){.kind = OP_COPY, .dst = (void *)(uintptr_t)d, .src = (const void *)(uintptr_t)s, .n = n});
}
EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
    return fk_enqueue(h, 1, (op){.kind = OP_COPY, .dst = (void *)(uintptr_t)d, .src = (const void *)(uintptr_t)s, .n = n});
}
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream h)
{
    return fk_enqueue(h, 0, (op){.kind = OP_COPY, .dst = d, .src = (void *)(uintptr_t)s, .n = n});
}
EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *d, CUdeviceptr s, size_t n, CUstream h)
{
    return fk_enqueue(h, 1, (op){.kind = OP_COPY, .dst = d, .src = (void *)(uintptr_t)s, .n = n});
}
EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream h)
{
    return fk_enqueue(h, 0, (op){.kind = OP_SET32, .dst = (void *)(uintptr_t)d, .v = v, .n = n});
}
EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream h)
{
    return fk_enqueue(h, 0, (op){.kind = OP_SET8, .dst = (void *)(uintptr_t)d, .v = v, .n = n});
}
EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream h)
{
    return fk_enqueue(h, 1, (op){.kind = OP_SET8, .dst = (void *)(uintptr_t)d, .v = v, .n = n});
}
EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream h)
{
    return fk_enqueue(h, 0, (op){.kind = OP_SET16, .dst = (void *)(uintptr_t)d, .v = v, .n = n});
}
EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream h)
{
    return fk_enqueue(h, 1, (op){.kind = OP_SET16, .dst = (void *)(uintptr_t)d, .v = v, .n = n});
}
/* Unified addressing: both pointers are read at run time, in stream order (a host source is not
 * staged here: the random programs copy from device memory only with it). */
EXPORT CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
    return fk_enqueue(h, 0, (op){.kind = OP_COPY, .dst = (void *)(uintptr_t)d, .src = (const void *)(uintptr_t)s, .n = n});
}
EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
    return fk_enqueue(h, 1, (op){.kind = OP_COPY, .dst = (void *)(uintptr_t)d, .src = (const void *)(uintptr_t)s, .n = n});
}
EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream h)
{
    return fk_enqueue(h, 1, (op){.kind = OP_SET32, .dst = (void *)(uintptr_t)d, .v = v, .n = n});
}
EXPORT CUresult cuLaunchHostFunc(CUstream h, CUhostFn fn, void *data)
{
    return fn ? fk_enqueue(h, 0, (op){.kind = OP_HOST, .fn = fn, .data = data}) : CUDA_ERROR_INVALID_VALUE;
}
EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream h, CUhostFn fn, void *data)
{
    return fn ? fk_enqueue(h, 1, (op){.kind = OP_HOST, .fn = fn, .data = data}) : CUDA_ERROR_INVALID_VALUE;
}

/* ------------------------------------------------------------------ stream memory operations */

/* On an idle stream (head NULL: the worker finished everything before) the write happens at
 * once, without the worker or a lock: about the cost of the fake's cuEventRecord, so the
 * overhead test compares the interposer's two modes, not the fake's. */
static CUresult write_of(CUstream h, int ptsz, op o)
{
    struct CUstream_st *s = fk_resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!o.dst || !g_memops)
        return CUDA_ERROR_INVALID_VALUE;
    if (s->capturing)
        return CUDA_SUCCESS;
    if (!__atomic_load_n(&s->head, __ATOMIC_ACQUIRE)) {
        fk_run(&o);
        return CUDA_SUCCESS;
    }
    return fk_enqueue(h, ptsz, o);
}
#define WV_OP(bits, a, val) (op){.kind = OP_WRITE##bits, .dst = (void *)(uintptr_t)(a), .v = (unsigned)(val), .v64 = (val)}
EXPORT CUresult cuStreamWriteValue32_v2(CUstream h, CUdeviceptr a, unsigned v, unsigned f) { (void)f; return write_of(h, 0, WV_OP(32, a, v)); }
EXPORT CUresult cuStreamWriteValue32_v2_ptsz(CUstream h, CUdeviceptr a, unsigned v, unsigned f) { (void)f; return write_of(h, 1, WV_OP(32, a, v)); }
EXPORT CUresult cuStreamWriteValue64_v2(CUstream h, CUdeviceptr a, cuuint64_t v, unsigned f) { (void)f; return write_of(h, 0, WV_OP(64, a, v)); }
EXPORT CUresult cuStreamWriteValue64_v2_ptsz(CUstream h, CUdeviceptr a, cuuint64_t v, unsigned f) { (void)f; return write_of(h, 1, WV_OP(64, a, v)); }

/* Only "equal" (CU_STREAM_WAIT_VALUE_EQ, 1): what XQ's level-2 guard asks for. Always queued, so
 * that it waits behind what came before it on the stream, as the device's does. */
static CUresult wait_of(CUstream h, int ptsz, CUdeviceptr a, unsigned v, unsigned f)
{
    if (!a || f != 1 || !g_memops)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = fk_resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (s->capturing)
        return CUDA_SUCCESS;
    __atomic_add_fetch(&g_waits, 1, __ATOMIC_RELAXED);
    return fk_enqueue(h, ptsz, (op){.kind = OP_WAIT32, .dst = (void *)(uintptr_t)a, .v = v});
}
EXPORT CUresult cuStreamWaitValue32_v2(CUstream h, CUdeviceptr a, unsigned v, unsigned f) { return wait_of(h, 0, a, v, f); }
EXPORT CUresult cuStreamWaitValue32_v2_ptsz(CUstream h, CUdeviceptr a, unsigned v, unsigned f) { return wait_of(h, 1, a, v, f); }
/* For tests: how many stream waits were queued in this process. */
EXPORT unsigned long long xq_fake_waits(void) { return __atomic_load_n(&g_waits, __ATOMIC_RELAXED); }

/* Host memory is device memory here: the device pointer is the address itself. */
EXPORT CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags) { (void)flags; return p && n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
EXPORT CUresult cuMemHostUnregister(void *p) { return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags)
{
    if (!d || !p || flags)
        return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuMemHostAlloc(void **pp, size_t n, unsigned flags)
{
    (void)flags;
    if (!pp || !n)
        return CUDA_ERROR_INVALID_VALUE;
    return (*pp = calloc(1, n)) ? CUDA_SUCCESS : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}
EXPORT CUresult cuMemFreeHost(void *p) { free(p); return CUDA_SUCCESS; }

/* ------------------------------------------------------------------ capture */

static CUresult begin_of(CUstream h, int ptsz)
{
    if (!h && !ptsz)
        h = CU_STREAM_LEGACY;
    if (h == CU_STREAM_LEGACY)
        return 900; /* CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: not on the legacy stream */
    struct CUstream_st *s = fk_resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (s->capturing)
        return 401; /* CUDA_ERROR_ILLEGAL_STATE */
    if (!(s->cap = calloc(1, sizeof *s->cap)))
        return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    s->capturing = 1;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamBeginCapture_v2(CUstream h, CUstreamCaptureMode m) { (void)m; return begin_of(h, 0); }
EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream h, CUstreamCaptureMode m) { (void)m; return begin_of(h, 1); }

static CUresult end_of(CUstream h, CUgraph *g, int ptsz)
{
    struct CUstream_st *s = fk_resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!s->capturing)
        return 401;
    s->capturing = 0;
    struct CUgraph_st *cap = s->cap;
    s->cap = NULL;
    if (g)
        *g = cap;
    else
        cuGraphDestroy(cap);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamEndCapture(CUstream h, CUgraph *g) { return end_of(h, g, 0); }
EXPORT CUresult cuStreamEndCapture_ptsz(CUstream h, CUgraph *g) { return end_of(h, g, 1); }

/* ------------------------------------------------------------------ graphs */

static void free_ops(op *o)
{
    while (o) {
        op *n = o->next;
        free(o->own);
        free(o);
        o = n;
    }
}
EXPORT CUresult cuGraphDestroy(CUgraph g)
{
    if (!g)
        return CUDA_ERROR_INVALID_VALUE;
    free_ops(g->head);
    free(g);
    return CUDA_SUCCESS;
}
/* A copy of the graph's commands (a staged host source copied too): the graph may be destroyed or
 * instantiated again while the instantiation lives. */
EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
    (void)flags;
    if (!e || !g)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraphExec_st *x = calloc(1, sizeof *x);
    op **at = &x->head;
    for (op *o = g->head; x && o; o = o->next) {
        op *c = malloc(sizeof *c);
        *c = *o;
        c->next = NULL;
        if (o->own) {
            c->own = malloc(o->n ? o->n : 1);
            memcpy(c->own, o->own, o->n);
            c->src = c->own;
        }
        *at = c, at = &c->next;
    }
    if (!x)
        return 2;
    *e = x;
    return CUDA_SUCCESS;
}
/* As the driver, launches made before still run to their end: the fake never frees an instantiation
 * (a test's few), and refuses to launch one destroyed. */
EXPORT CUresult cuGraphExecDestroy(CUgraphExec e)
{
    if (!e || __atomic_exchange_n(&e->destroyed, 1, __ATOMIC_SEQ_CST))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}
static CUresult graph_launch(CUgraphExec e, CUstream h, int ptsz)
{
    if (!e || __atomic_load_n(&e->destroyed, __ATOMIC_SEQ_CST))
        return CUDA_ERROR_INVALID_VALUE;
    return fk_enqueue(h, ptsz, (op){.kind = OP_GRAPH, .exec = e});
}
EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream h) { return graph_launch(e, h, 0); }
EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream h) { return graph_launch(e, h, 1); }
