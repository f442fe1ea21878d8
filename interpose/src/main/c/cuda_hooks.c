/*
 * cuda_hooks.c: the entry points: the wrapped (exported) driver functions and their
 * cuGetProcAddress twins, graph capture, cuGetProcAddress and dlsym themselves, and process life
 * (the constructor, fork).
 */
#include "cuda_int.h"

static CUresult launch_ex_on(CUresult (*real)(const CUlaunchConfig *, CUfunction, void **, void **), const CUlaunchConfig *c,
                             CUstream s, CUfunction f, void **params, void **extra)
{
    CUlaunchConfig copy = *c;
    copy.hStream = s;
    return real(&copy, f, params, extra);
}

/* ------------------------------------------------------------------ graph capture */

static pthread_mutex_t cap_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    CUstream h;
    pid_t tid;
} g_capset[256];
static int g_capn;

static void capture_key(CUstream *h, pid_t *tid, int ptsz)
{
    *tid = 0;
    if ((*h == NULL && ptsz) || *h == CU_STREAM_PER_THREAD) *h = CU_STREAM_PER_THREAD, *tid = my_tid();
    else if (*h == NULL) *h = CU_STREAM_LEGACY;
}

/* Before the real begin: first nothing more is deferred (xqc_capture_wait: a call that would be
 * waits for what was, in order) and what was deferred is made, not into the graph, as the node
 * lets it go; then the capture is counted (under xqc_query_mu: the tracker is not querying events
 * at that moment, and queries none while it lasts: a query could break a global-mode capture).
 * In that order because the node's limits and decisions follow the completions the tracker sees:
 * counted first, the capture stopped the tracker while the deferred launches waited for it, and a
 * process whose stream of a higher stream priority had work in flight stopped for good (the node
 * held the lower ones behind work it was never told had ended; ProcessIT's random programs). A
 * launch racing the count passes through, harmlessly. */
static void capture_pre(void)
{
    ADD(&xqc_capture_wait, 1);
    xqc_flush_all();
    pthread_mutex_lock(&xqc_query_mu);
    ADD(&xqc_captures, 1);
    pthread_mutex_unlock(&xqc_query_mu);
    ADD(&xqc_capture_wait, -1);
    for (xstream *st = LD(&xqc_all); st; st = st->next_all) /* held threads go, untouched */
        xqc_wake_held(st);
}

static void capture_begun(CUresult r, CUstream h, int ptsz)
{
    pid_t tid;
    capture_key(&h, &tid, ptsz);
    pthread_mutex_lock(&cap_mu);
    if (r == CUDA_SUCCESS && g_capn < (int)(sizeof g_capset / sizeof g_capset[0])) {
        g_capset[g_capn].h = h, g_capset[g_capn++].tid = tid;
    } else {
        if (r == CUDA_SUCCESS) xlog(2, "xq: too many captures at once; one is not accounted");
        ADD(&xqc_captures, -1);
    }
    pthread_mutex_unlock(&cap_mu);
}

static void capture_ended(CUstream h, int ptsz)
{
    pid_t tid;
    capture_key(&h, &tid, ptsz);
    pthread_mutex_lock(&cap_mu);
    for (int i = 0; i < g_capn; i++)
        if (g_capset[i].h == h && g_capset[i].tid == tid) {
            g_capset[i] = g_capset[--g_capn];
            ADD(&xqc_captures, -1);
            break;
        }
    pthread_mutex_unlock(&cap_mu);
}

/* A measurement, not a control: while on, gated calls on this process's threads pass straight
 * through to the driver, untracked (as during a capture), so that a program can time the same work
 * with and without the launch path, request by request in one process (bench/torch/family/tenant.py
 * --ab-interposer: the host's drift cancels). Call it only with no work of the process's in flight
 * (after a synchronize): what passes through is never seen end. */
XQ_EXPORT void xq_bench_bypass(int on) { ST(&xqc_hot.bypass, (int8_t)(on != 0)); }

/* ------------------------------------------------------------------ wrapped entry points */

/* Every wrapped name has four wrappers: the exported symbol and its _ptsz twin (programs that
 * link libcuda, or dlsym it), and two handed out by cuGetProcAddress (legacy, per-thread).
 * Launches that can be deferred (DGATED) have two more, handed out by dlsym: a library that
 * dlsyms its launches (cuBLASLt does: it neither links libcuda nor asks cuGetProcAddress for
 * them) gets trampolines from dlsym for every other driver entry point, as cuGetProcAddress
 * hands out, so its launches may be deferred as safely; a linked caller's may not (below).
 * Each forwards to the one real pointer it was handed out for. */
typedef struct wslot {
    void *fn;
    void *real;
} wslot;
typedef struct wdef {
    const char *base; /* name asked of cuGetProcAddress */
    const char *sym;  /* exported name */
    int minver;       /* the CUDA version from which base has the ABI wrapped here */
    int has_ptsz;
    wslot s[6]; /* export, export _ptsz, proc address legacy, proc address per-thread, dlsym legacy, dlsym
                 * per-thread (DGATED only; else no fn) */
} wdef;

enum {
    W_LAUNCH, W_LAUNCH_EX, W_COOP, W_HOSTFN, W_GRAPH, W_MEMCPY, W_HTOD, W_DTOH, W_DTOD, W_2D,
    W_3D, W_PEER, W_SET8, W_SET16, W_SET32, W_2DSET8, W_2DSET16, W_2DSET32, W_CAP, W_CAP_GRAPH,
    W_CAP_END, W_DESTROY, W_CTX_SET, W_CTX_PUSH, W_CTX_POP, W_CTX_CREATE2, W_CTX_CREATE3, W_CTX_CREATE4,
    W_CTX_DESTROY, W_PCTX_RELEASE, W_PCTX_RESET, W_SYNC_STREAM, W_SYNC_CTX, W_SYNC_CTX2, W_SYNC_EVENT, W_COUNT
};
static wdef W[W_COUNT];

static int is_ours(void *p);

const char *xqc_entry_name(int id) { return id >= 0 && id < W_COUNT && W[id].sym ? W[id].sym : "?"; }
/* The entry points a launch can be deferred through (DGATED below) */
int xqc_entry_deferrable(int id)
{
    return id == W_LAUNCH || id == W_LAUNCH_EX || id == W_GRAPH || id == W_HTOD || id == W_DTOD || id == W_SET8 ||
           id == W_SET16 || id == W_SET32;
}

/* The driver's definition of an exported name: the next one after us, or, when libcuda is not
 * in the global scope (a library linking it was dlopened RTLD_LOCAL, as Python loads
 * extensions), libcuda's own. */
static void *driver_sym(const char *name)
{
    void *r = xqc_real_dlsym(RTLD_NEXT, name);
    if (!r || is_ours(r)) {
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        r = h ? xqc_real_dlsym(h, name) : NULL;
        if (h) dlclose(h);
    }
    return r && !is_ours(r) ? r : NULL;
}

/* real_of's first call for a direct (exported) entry: the driver's definition, looked up. */
static XQ_COLD void *real_find(wdef *d, int k)
{
    char nm[80]; /* a direct call before any dlsym */
    snprintf(nm, sizeof nm, "%s%s", d->sym, k ? "_ptsz" : "");
    void *r = driver_sym(nm), *none = NULL;
    if (r) __atomic_compare_exchange_n(&d->s[k].real, &none, r, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return LD(&d->s[k].real);
}

static inline void *real_of(wdef *d, int k)
{
    void *r = LD(&d->s[k].real);
    return XQ_LIKELY(r) || k >= 2 ? r : real_find(d, k);
}

/* Cost keys: a kernel by its function and shape, anything else by its entry point and size class. */
#define KSHAPE(F, GX, GY, GZ, BX, BY, BZ) \
    cost_key((F), size_class((uint64_t)(GX) * (GY) * (GZ)) | size_class((uint64_t)(BX) * (BY) * (BZ)) << 8)
#define SIZED(ID, N) cost_key(&W[ID], size_class(N))
#define BODY(ID, K, PT, ARGS, STREAM, CK)                                                               \
    {                                                                                               \
        typedef CUresult(*fn_t) PT;                                                                 \
        fn_t real_ = (fn_t)real_of(&W[ID], K);                                                       \
        if (XQ_UNLIKELY(!real_))                                                                     \
            return CUDA_ERROR_NOT_INITIALIZED;                                                      \
        gate g_;                                                                                    \
        xqc_gate_init(&g_);                                                                         \
        uint64_t h0_ = XQ_HT_ON ? now_ns() : 0;                                                     \
        if (h0_) g_.id = (ID), g_.ra = __builtin_return_address(0);                                                                      \
        if (XQ_UNLIKELY(!xqc_gate_enter(&g_, (STREAM), (K) & 1, (void *)real_, 0, (CK), 0))) {               \
            if (h0_) xqc_ht_call(h0_, now_ns(), 0, &g_);                                            \
            return real_ ARGS;                                                                       \
        }                                                                                           \
        uint64_t h1_ = h0_ ? now_ns() : 0;                                                          \
        CUresult r_ = real_ ARGS;                                                                     \
        uint64_t h2_ = h0_ ? now_ns() : 0;                                                          \
        xqc_gate_exit(&g_, r_);                                                                           \
        if (h0_) xqc_ht_call(h0_, h1_, h2_, &g_);                                                   \
        return r_;                                                                                   \
    }
/* Deferrable: a launch nothing can hold takes the lean path (cuda_int.h: lean); through cuGetProcAddress (K 2, 3: every other entry point handed out there is a
 * trampoline that waits for deferred work), a launch the stream may not make now is copied by
 * BUILD (NULL: it cannot be) and queued; KEY: what becomes known to launch when it did. */
#define DBODY(ID, K, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL)                                                \
    {                                                                                               \
        typedef CUresult(*fn_t) PT;                                                                 \
        fn_t real_ = (fn_t)real_of(&W[ID], K);                                                       \
        if (XQ_UNLIKELY(!real_))                                                                     \
            return CUDA_ERROR_NOT_INITIALIZED;                                                      \
        lean l_;                                                                                    \
        if (XQ_LIKELY(xqc_lean_enter(&l_, (STREAM), (K) & 1, (CK)))) {                              \
            CUresult r_ = real_ ARGS;                                                               \
            if (XQ_UNLIKELY(xqc_hot.time_launch)) xqc_t_drv_ns += now_ns() - l_.t, xqc_t_drv_n++;   \
            xqc_lean_exit(&l_, r_, (void *)(KEY), (THREADS));                                       \
            return r_;                                                                              \
        }                                                                                           \
        gate g_;                                                                                    \
        xqc_gate_init(&g_);                                                                         \
        uint64_t h0_ = XQ_HT_ON ? now_ns() : 0;                                                     \
        if (h0_) g_.id = (ID), g_.ra = __builtin_return_address(0);                                                                      \
        int k_ = xqc_gate_enter(&g_, (STREAM), (K) & 1, (void *)real_, (K) >= 2 && LD(&xqc_stubs_ok) > 0, (CK), (THREADS));\
        if (XQ_UNLIKELY(k_ == 2)) {                                                                 \
            dop *op_ = BUILD;                                                                       \
            if (op_) {                                                                              \
                op_->real = (void *)real_, op_->ck = g_.ck; /* its kind: the width is the drain's */             \
                if (xqc_gate_defer(&g_, op_)) {                                                         \
                    if (h0_) xqc_ht_deferred(h0_, &g_);                                             \
                    return CUDA_SUCCESS;                                                            \
                }                                                                                   \
            } else                                                                                  \
                xqc_gate_undefer(&g_);                                                                  \
            if (h0_) g_.nd = ND_WHY_BUILD;                                                          \
            k_ = xqc_gate_enter(&g_, (STREAM), (K) & 1, (void *)real_, 0, (CK), (THREADS));                  \
        }                                                                                           \
        if (XQ_UNLIKELY(!k_)) {                                                                     \
            if (h0_) xqc_ht_call(h0_, now_ns(), 0, &g_);                                            \
            return real_ ARGS;                                                                      \
        }                                                                                           \
        g_.key = (void *)(KEY);                                                                     \
        g_.threads = (THREADS);                                                                     \
        CUstream sx_ = NULL, ns_ = XQ_UNLIKELY(g_.nw) ? xqc_narrow_begin_at(g_.st, (STREAM), (K) & 1, g_.nw, g_.noff, &sx_) : NULL;  \
        uint64_t h1_ = h0_ ? now_ns() : 0;                                                          \
        uint64_t d1_ = XQ_UNLIKELY(xqc_hot.time_launch) ? (h1_ ? h1_ : now_ns()) : 0;               \
        CUresult r_ = XQ_UNLIKELY(ns_ != NULL) ? (NCALL) : real_ ARGS;                                                   \
        uint64_t h2_ = h0_ ? now_ns() : 0;                                                          \
        if (XQ_UNLIKELY(ns_ != NULL) && xqc_narrow_end(sx_, ns_, r_))                                                        \
            r_ = real_ ARGS;                                                                        \
        if (XQ_UNLIKELY(d1_)) xqc_t_drv_ns += now_ns() - d1_, xqc_t_drv_n++;                       \
        xqc_gate_exit(&g_, r_);                                                                         \
        if (h0_) xqc_ht_call(h0_, h1_, h2_, &g_);                                                   \
        return r_;                                                                                  \
    }
#define DGATED(ID, NAME, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL)                              \
    XQ_EXPORT XQ_HOT CUresult NAME PT DBODY(ID, 0, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL)    \
    XQ_EXPORT XQ_HOT CUresult NAME##_ptsz PT DBODY(ID, 1, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL) \
    static XQ_HOT CUresult NAME##_gpa PT DBODY(ID, 2, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL) \
    static XQ_HOT CUresult NAME##_gpa_ptsz PT DBODY(ID, 3, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL) \
    static XQ_HOT CUresult NAME##_dls PT DBODY(ID, 4, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL) \
    static XQ_HOT CUresult NAME##_dls_ptsz PT DBODY(ID, 5, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL)

#define GATED(ID, NAME, PT, ARGS, STREAM, CK)                                                           \
    XQ_EXPORT CUresult NAME PT BODY(ID, 0, PT, ARGS, STREAM, CK)                                        \
    XQ_EXPORT CUresult NAME##_ptsz PT BODY(ID, 1, PT, ARGS, STREAM, CK)                                 \
    static CUresult NAME##_gpa PT BODY(ID, 2, PT, ARGS, STREAM, CK)                                     \
    static CUresult NAME##_gpa_ptsz PT BODY(ID, 3, PT, ARGS, STREAM, CK)

/* Not gated: PRE and POST run around the real call (r: its result, ptsz: the variant). */
#define HBODY(ID, K, PT, ARGS, PRE, POST)                                                           \
    {                                                                                               \
        typedef CUresult(*fn_t) PT;                                                                 \
        fn_t real_ = (fn_t)real_of(&W[ID], K);                                                       \
        if (XQ_UNLIKELY(!real_))                                                                     \
            return CUDA_ERROR_NOT_INITIALIZED;                                                      \
        const int ptsz = (K) & 1;                                                                   \
        (void)ptsz;                                                                                 \
        PRE;                                                                                        \
        CUresult r = real_ ARGS;                                                                     \
        POST;                                                                                       \
        return r;                                                                                   \
    }
#define HOOKED(ID, NAME, PT, ARGS, PRE, POST)                                                       \
    XQ_EXPORT CUresult NAME PT HBODY(ID, 0, PT, ARGS, PRE, POST)                                    \
    XQ_EXPORT CUresult NAME##_ptsz PT HBODY(ID, 1, PT, ARGS, PRE, POST)                             \
    static CUresult NAME##_gpa PT HBODY(ID, 2, PT, ARGS, PRE, POST)                                 \
    static CUresult NAME##_gpa_ptsz PT HBODY(ID, 3, PT, ARGS, PRE, POST)

DGATED(W_LAUNCH, cuLaunchKernel,
       (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
        unsigned shmem, CUstream hStream, void **params, void **extra),
       (f, gx, gy, gz, bx, by, bz, shmem, hStream, params, extra), hStream, KSHAPE(f, gx, gy, gz, bx, by, bz), f,
       xqc_build_launch(f, gx, gy, gz, bx, by, bz, shmem, hStream, params, extra),
       xqc_kthreads(f, (uint64_t)gx * gy * gz, (uint64_t)bx * by * bz, shmem), real_(f, gx, gy, gz, bx, by, bz, shmem, ns_, params, extra))
DGATED(W_LAUNCH_EX, cuLaunchKernelEx, (const CUlaunchConfig *config, CUfunction f, void **params, void **extra),
       (config, f, params, extra), config ? config->hStream : NULL,
       config ? KSHAPE(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX, config->blockDimY,
                       config->blockDimZ)
              : 0,
       f, xqc_build_launch_ex(config, f, params, extra),
       config ? xqc_kthreads(f, (uint64_t)config->gridDimX * config->gridDimY * config->gridDimZ,
                             (uint64_t)config->blockDimX * config->blockDimY * config->blockDimZ, config->sharedMemBytes)
              : 0,
       launch_ex_on(real_, config, ns_, f, params, extra))
GATED(W_COOP, cuLaunchCooperativeKernel,
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
       unsigned shmem, CUstream hStream, void **params),
      (f, gx, gy, gz, bx, by, bz, shmem, hStream, params), hStream, KSHAPE(f, gx, gy, gz, bx, by, bz))
GATED(W_HOSTFN, cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *data), (hStream, fn, data), hStream, cost_key((void *)fn, 0))
DGATED(W_GRAPH, cuGraphLaunch, (CUgraphExec g, CUstream hStream), (g, hStream), hStream, cost_key(g, 0), g, xqc_build_graph(g, hStream),
       UINT64_MAX, real_(g, ns_))
GATED(W_MEMCPY, cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream),
      (dst, src, n, hStream), hStream, SIZED(W_MEMCPY, n))
DGATED(W_HTOD, cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void *src, size_t n, CUstream hStream),
       (dst, src, n, hStream), hStream, SIZED(W_HTOD, n), NULL, xqc_build_htod(dst, src, n, hStream), 0, CUDA_SUCCESS)
GATED(W_DTOH, cuMemcpyDtoHAsync_v2, (void *dst, CUdeviceptr src, size_t n, CUstream hStream),
      (dst, src, n, hStream), hStream, SIZED(W_DTOH, n))
DGATED(W_DTOD, cuMemcpyDtoDAsync_v2, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream),
       (dst, src, n, hStream), hStream, SIZED(W_DTOD, n), NULL, xqc_build_dtod(dst, src, n, hStream), 0, CUDA_SUCCESS)
GATED(W_2D, cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *p, CUstream hStream), (p, hStream), hStream,
      SIZED(W_2D, 0))
GATED(W_3D, cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *p, CUstream hStream), (p, hStream), hStream,
      SIZED(W_3D, 0))
GATED(W_PEER, cuMemcpyPeerAsync,
      (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream hStream),
      (dst, dctx, src, sctx, n, hStream), hStream, SIZED(W_PEER, n))
DGATED(W_SET8, cuMemsetD8Async, (CUdeviceptr d, unsigned char v, size_t n, CUstream hStream), (d, v, n, hStream),
       hStream, SIZED(W_SET8, n), NULL, xqc_build_set(D_SET8, d, v, n, hStream), 0, CUDA_SUCCESS)
DGATED(W_SET16, cuMemsetD16Async, (CUdeviceptr d, unsigned short v, size_t n, CUstream hStream),
       (d, v, n, hStream), hStream, SIZED(W_SET16, 2 * (uint64_t)n), NULL, xqc_build_set(D_SET16, d, v, n, hStream), 0, CUDA_SUCCESS)
DGATED(W_SET32, cuMemsetD32Async, (CUdeviceptr d, unsigned int v, size_t n, CUstream hStream), (d, v, n, hStream),
       hStream, SIZED(W_SET32, 4 * (uint64_t)n), NULL, xqc_build_set(D_SET32, d, v, n, hStream), 0, CUDA_SUCCESS)
GATED(W_2DSET8, cuMemsetD2D8Async,
      (CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h, CUstream hStream),
      (d, pitch, v, w, h, hStream), hStream, SIZED(W_2DSET8, (uint64_t)w * h))
GATED(W_2DSET16, cuMemsetD2D16Async,
      (CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h, CUstream hStream),
      (d, pitch, v, w, h, hStream), hStream, SIZED(W_2DSET16, (uint64_t)w * h))
GATED(W_2DSET32, cuMemsetD2D32Async,
      (CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h, CUstream hStream),
      (d, pitch, v, w, h, hStream), hStream, SIZED(W_2DSET32, (uint64_t)w * h))
HOOKED(W_CAP, cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode),
       capture_pre(), capture_begun(r, hStream, ptsz))
HOOKED(W_CAP_GRAPH, cuStreamBeginCaptureToGraph,
       (CUstream hStream, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *data, size_t n,
        CUstreamCaptureMode mode),
       (hStream, g, deps, data, n, mode), capture_pre(), capture_begun(r, hStream, ptsz))
HOOKED(W_CAP_END, cuStreamEndCapture, (CUstream hStream, CUgraph *g), (hStream, g), (void)0,
       capture_ended(hStream, ptsz))
/* Forgotten before the real call: a handle freed by it may be reused at once by another thread. */
HOOKED(W_DESTROY, cuStreamDestroy_v2, (CUstream hStream), (hStream),
       xqc_flush_all();
       if (hStream && hStream != CU_STREAM_LEGACY && hStream != CU_STREAM_PER_THREAD &&
           LD(&xqc_cu_state) > 0) xqc_stream_forget(hStream),
       (void)0)

/* Which context is current on the calling thread (kept: cuda_gate.c, xqc_ctx_changed): dropped before
 * each call that sets, pushes, pops or makes one (this thread's), or may end one (every thread's). */
HOOKED(W_CTX_SET, cuCtxSetCurrent, (CUcontext c), (c), xqc_ctx_changed(0), (void)0)
HOOKED(W_CTX_PUSH, cuCtxPushCurrent_v2, (CUcontext c), (c), xqc_ctx_changed(0), (void)0)
HOOKED(W_CTX_POP, cuCtxPopCurrent_v2, (CUcontext *c), (c), xqc_ctx_changed(0), (void)0)
/* cuCtxCreate has three ABIs (v2: 3 arguments, v3: 5, v4: 4), and which one cuGetProcAddress hands out
 * for a version is the driver's to say: each wrapper passes five argument registers on untouched
 * (an x86-64 or AArch64 callee ignores those it does not take), so it is right for any of them */
#define CTX_CREATE_PT (uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t e)
HOOKED(W_CTX_CREATE2, cuCtxCreate_v2, CTX_CREATE_PT, (a, b, c, d, e), xqc_ctx_changed(0), (void)0)
HOOKED(W_CTX_CREATE3, cuCtxCreate_v3, CTX_CREATE_PT, (a, b, c, d, e), xqc_ctx_changed(0), (void)0)
HOOKED(W_CTX_CREATE4, cuCtxCreate_v4, CTX_CREATE_PT, (a, b, c, d, e), xqc_ctx_changed(0), (void)0)
HOOKED(W_CTX_DESTROY, cuCtxDestroy_v2, (CUcontext c), (c), xqc_ctx_changed(1), (void)0)
HOOKED(W_PCTX_RELEASE, cuDevicePrimaryCtxRelease_v2, (CUdevice d), (d), xqc_ctx_changed(1), (void)0)
HOOKED(W_PCTX_RESET, cuDevicePrimaryCtxReset_v2, (CUdevice d), (d), xqc_ctx_changed(1), (void)0)

/* The host waiting on the device (docs/processes.md, "What is wrapped"): counted where the
 * process has work in flight, and told to the node (WAITS) now and then. A stream's or the
 * context's wait first waits for deferred launches, as the trampolines these entry points had
 * before did; an event's can see none (its record waited). */
HOOKED(W_SYNC_STREAM, cuStreamSynchronize, (CUstream hStream), (hStream), xqc_host_wait_begin((void *)real_), xqc_host_wait_end())
/* cuCtxSynchronize takes no argument (version 2000), and its _v2 a context (version 13000: CUDA 13's
 * execution contexts; NULL is the current one). The CUDA 13 runtime asks for both, and its
 * cudaDeviceSynchronize calls the second (H100, session 115: with one wrapper for the name, the
 * second pointer went back unwrapped, torch.cuda.synchronize() was never counted and returned
 * before the deferred launches were made). Each wrapper passes the first argument register on
 * untouched, as cuCtxCreate's do, so a driver that hands either ABI for a version is still right. */
HOOKED(W_SYNC_CTX, cuCtxSynchronize, (uintptr_t a), (a), xqc_host_wait_begin((void *)real_), xqc_host_wait_end())
HOOKED(W_SYNC_CTX2, cuCtxSynchronize_v2, (uintptr_t a), (a), xqc_host_wait_begin((void *)real_), xqc_host_wait_end())
HOOKED(W_SYNC_EVENT, cuEventSynchronize, (CUevent e), (e), xqc_host_wait_begin(NULL), xqc_host_wait_end())

#define DEF(ID, BASE, NAME, MINVER, PTSZ)                                                           \
    [ID] = {BASE, #NAME, MINVER, PTSZ,                                                              \
            {{(void *)NAME, 0}, {(void *)NAME##_ptsz, 0}, {(void *)NAME##_gpa, 0}, {(void *)NAME##_gpa_ptsz, 0}}}
#define DEFD(ID, BASE, NAME, MINVER, PTSZ)                                                          \
    [ID] = {BASE, #NAME, MINVER, PTSZ,                                                              \
            {{(void *)NAME, 0}, {(void *)NAME##_ptsz, 0}, {(void *)NAME##_gpa, 0}, {(void *)NAME##_gpa_ptsz, 0},   \
             {(void *)NAME##_dls, 0}, {(void *)NAME##_dls_ptsz, 0}}}
/* Minimum versions: cuGetProcAddress hands older ABIs (32-bit pointers, v1 capture) below them. */
static wdef W[W_COUNT] = {
    DEFD(W_LAUNCH, "cuLaunchKernel", cuLaunchKernel, 4000, 1),
    DEFD(W_LAUNCH_EX, "cuLaunchKernelEx", cuLaunchKernelEx, 11060, 1),
    DEF(W_COOP, "cuLaunchCooperativeKernel", cuLaunchCooperativeKernel, 9000, 1),
    DEF(W_HOSTFN, "cuLaunchHostFunc", cuLaunchHostFunc, 10000, 1),
    DEFD(W_GRAPH, "cuGraphLaunch", cuGraphLaunch, 10000, 1),
    DEF(W_MEMCPY, "cuMemcpyAsync", cuMemcpyAsync, 4000, 1),
    DEFD(W_HTOD, "cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2, 3020, 1),
    DEF(W_DTOH, "cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2, 3020, 1),
    DEFD(W_DTOD, "cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2, 3020, 1),
    DEF(W_2D, "cuMemcpy2DAsync", cuMemcpy2DAsync_v2, 3020, 1),
    DEF(W_3D, "cuMemcpy3DAsync", cuMemcpy3DAsync_v2, 3020, 1),
    DEF(W_PEER, "cuMemcpyPeerAsync", cuMemcpyPeerAsync, 4000, 1),
    DEFD(W_SET8, "cuMemsetD8Async", cuMemsetD8Async, 3020, 1),
    DEFD(W_SET16, "cuMemsetD16Async", cuMemsetD16Async, 3020, 1),
    DEFD(W_SET32, "cuMemsetD32Async", cuMemsetD32Async, 3020, 1),
    DEF(W_2DSET8, "cuMemsetD2D8Async", cuMemsetD2D8Async, 3020, 1),
    DEF(W_2DSET16, "cuMemsetD2D16Async", cuMemsetD2D16Async, 3020, 1),
    DEF(W_2DSET32, "cuMemsetD2D32Async", cuMemsetD2D32Async, 3020, 1),
    DEF(W_CAP, "cuStreamBeginCapture", cuStreamBeginCapture_v2, 10010, 1),
    DEF(W_CAP_GRAPH, "cuStreamBeginCaptureToGraph", cuStreamBeginCaptureToGraph, 12030, 1),
    DEF(W_CAP_END, "cuStreamEndCapture", cuStreamEndCapture, 10000, 1),
    DEF(W_DESTROY, "cuStreamDestroy", cuStreamDestroy_v2, 4000, 0),
    DEF(W_CTX_SET, "cuCtxSetCurrent", cuCtxSetCurrent, 4000, 0),
    DEF(W_CTX_PUSH, "cuCtxPushCurrent", cuCtxPushCurrent_v2, 4000, 0),
    DEF(W_CTX_POP, "cuCtxPopCurrent", cuCtxPopCurrent_v2, 4000, 0),
    /* one name, three ABIs (each wrapper passes any of them on): the entry of the newest version asked */
    DEF(W_CTX_CREATE2, "cuCtxCreate", cuCtxCreate_v2, 3020, 0),
    DEF(W_CTX_CREATE3, "cuCtxCreate", cuCtxCreate_v3, 11040, 0),
    DEF(W_CTX_CREATE4, "cuCtxCreate", cuCtxCreate_v4, 12050, 0),
    DEF(W_CTX_DESTROY, "cuCtxDestroy", cuCtxDestroy_v2, 4000, 0),
    DEF(W_PCTX_RELEASE, "cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2, 7000, 0), /* v1: the same ABI */
    DEF(W_PCTX_RESET, "cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset_v2, 7000, 0),
    DEF(W_SYNC_STREAM, "cuStreamSynchronize", cuStreamSynchronize, 2000, 1),
    DEF(W_SYNC_CTX, "cuCtxSynchronize", cuCtxSynchronize, 2000, 0),
    DEF(W_SYNC_CTX2, "cuCtxSynchronize", cuCtxSynchronize_v2, 13000, 0),
    DEF(W_SYNC_EVENT, "cuEventSynchronize", cuEventSynchronize, 2000, 0),
};

/* ------------------------------------------------------------------ cuGetProcAddress, dlsym */

typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
static CUresult gpa1_asked(const char *, void **, int, cuuint64_t);
static CUresult gpa2_asked(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
XQ_EXPORT CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);
XQ_EXPORT CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
/* v1 and v2 ABI; each as the export (dlsym) and as handed out for "cuGetProcAddress" */
static wslot G1x = {(void *)cuGetProcAddress, 0}, G1a = {(void *)gpa1_asked, 0};
static wslot G2x = {(void *)cuGetProcAddress_v2, 0}, G2a = {(void *)gpa2_asked, 0};

static int is_ours(void *p)
{
    if (xqc_is_stub(p)) return 1;
    if (p == G1x.fn || p == G1a.fn || p == G2x.fn || p == G2a.fn || p == (void *)dlsym) return 1;
    if (p == (void *)xqc_kernel_set_attr || p == (void *)xqc_func_set_attr) return 1;
    for (int i = 0; i < W_COUNT; i++)
        for (int k = 0; k < 6; k++)
            if (W[i].s[k].fn && W[i].s[k].fn == p) return 1;
    return 0;
}

/* Binds a wrapper to the real pointer it stands for; a second, different real pointer for the
 * same wrapper runs unscheduled rather than wrongly: handed back as every entry point we do not
 * wrap is, behind a trampoline that first makes the deferred launches (bare, a synchronize
 * returned before them: session 115). cuGetProcAddress's own go back bare. */
static void *adopt(wslot *w, void *real, const char *name)
{
    if (!real || is_ours(real)) return real;
    void *none = NULL;
    if (__atomic_compare_exchange_n(&w->real, &none, real, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) ||
        none == real)
        return w->fn;
    xlog(2, "xq: %s: another driver entry point than before (%p, not %p); handed back unwrapped", name, real,
         none);
    return w == &G1x || w == &G1a || w == &G2x || w == &G2a ? real : xqc_stub_for(real, name);
}

static void *ptsz_export(wdef *d)
{
    static void *cache[W_COUNT];
    int i = (int)(d - W);
    void *p = LD(&cache[i]);
    if (!p) {
        char nm[80];
        snprintf(nm, sizeof nm, "%s_ptsz", d->sym);
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        p = h ? xqc_real_dlsym(h, nm) : NULL;
        if (h) dlclose(h);
        ST(&cache[i], p ? p : (void *)-1);
    }
    return p == (void *)-1 ? NULL : p;
}

/* The waits' wrappers stand where these entry points had trampolines: one is still made (not handed
 * out), so that launches are deferred where they were before (xqc_stubs_ok: a trampoline was made) */
static int is_wait(const wdef *d)
{
    return d == &W[W_SYNC_STREAM] || d == &W[W_SYNC_CTX] || d == &W[W_SYNC_CTX2] || d == &W[W_SYNC_EVENT];
}
static void waits_stub(wdef *d, void *real, const char *name)
{
    if (is_wait(d)) (void)xqc_stub_for(real, name);
}

static CUresult gpa_after(CUresult r, const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    if (r != CUDA_SUCCESS || !sym || !pfn || !*pfn) return r;
    if (!strcmp(sym, "cuGetProcAddress")) {
        *pfn = adopt(ver >= 12000 ? &G2a : &G1a, *pfn, sym);
        return r;
    }
    wdef *d = NULL;
    int named = 0;
    for (wdef *e = W; e < W + W_COUNT; e++) /* the newest ABI of the name not newer than asked */
        if (!strcmp(sym, e->base) && (named = 1) && ver >= e->minver && (!d || e->minver > d->minver)) d = e;
    if (named && !d) { /* an older ABI than the wrappers': unscheduled rather than wrong, behind a
                        * trampoline as every entry point we do not wrap (bare, a launch or a
                        * capture's begin could pass the deferred launches) */
        *pfn = xqc_stub_for(*pfn, sym);
        return r;
    }
    if (d) {
        int ptsz = d->has_ptsz && ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ||
                                   *pfn == ptsz_export(d));
        waits_stub(d, *pfn, sym);
        void *real = *pfn;
        *pfn = adopt(&d->s[2 + ptsz], *pfn, sym);
        if (is_wait(d)) xlog(3, "xq: lookup %s, version %d, flags %llu: %p, %s", sym, ver, (unsigned long long)flags, real,
                             *pfn == real ? "unwrapped" : "wrapped");
        return r;
    }
    if (strstr(sym, "ynchronize")) xlog(3, "xq: lookup %s, version %d, flags %llu: %p, not wrapped as a host wait", sym, ver,
                                        (unsigned long long)flags, *pfn);
    if (sym[0] == 'c' && sym[1] == 'u') *pfn = xqc_stub_for(*pfn, sym);
    return r;
}

static void *gpa_real(wslot *w, const char *name)
{
    void *r = LD(&w->real);
    if (!r && (r = driver_sym(name))) adopt(w, r, name);
    return LD(&w->real);
}

XQ_EXPORT CUresult cuGetProcAddress(const char *s, void **p, int v, cuuint64_t f)
{
    gpa1_t real = (gpa1_t)gpa_real(&G1x, "cuGetProcAddress");
    return real ? gpa_after(real(s, p, v, f), s, p, v, f) : CUDA_ERROR_NOT_INITIALIZED;
}

static CUresult gpa1_asked(const char *s, void **p, int v, cuuint64_t f)
{
    gpa1_t real = (gpa1_t)LD(&G1a.real);
    return real ? gpa_after(real(s, p, v, f), s, p, v, f) : CUDA_ERROR_NOT_INITIALIZED;
}

XQ_EXPORT CUresult cuGetProcAddress_v2(const char *s, void **p, int v, cuuint64_t f,
                                       CUdriverProcAddressQueryResult *q)
{
    gpa2_t real = (gpa2_t)gpa_real(&G2x, "cuGetProcAddress_v2");
    return real ? gpa_after(real(s, p, v, f, q), s, p, v, f) : CUDA_ERROR_NOT_INITIALIZED;
}

static CUresult gpa2_asked(const char *s, void **p, int v, cuuint64_t f, CUdriverProcAddressQueryResult *q)
{
    gpa2_t real = (gpa2_t)LD(&G2a.real);
    return real ? gpa_after(real(s, p, v, f, q), s, p, v, f) : CUDA_ERROR_NOT_INITIALIZED;
}

/* RTLD_NEXT means "after the caller", and glibc finds the caller by its return address, which
 * would be us. On x86-64 the exported dlsym below jumps straight into glibc's for RTLD_NEXT, so
 * glibc sees the caller's own return address and answers exactly as without us. Elsewhere we
 * search the objects after the caller's ourselves, each through a real handle (dlopen NOLOAD):
 * a link-map entry is no handle (the objects loaded at start have no search list of their own,
 * and glibc crashed looking one up). */
static void *next_after(void *caller, const char *name)
{
    Dl_info di;
    struct link_map *lm = NULL;
    if (!dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm) return xqc_real_dlsym(RTLD_NEXT, name);
    for (struct link_map *l = lm->l_next; l; l = l->l_next) {
        if (!l->l_name || !*l->l_name) continue; /* the vDSO */
        void *h = dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        void *r = xqc_real_dlsym(h, name);
        dlclose(h);
        if (r) return r;
    }
    return NULL;
}

/* Whether p lies in the driver library (the object that holds its cuInit), or, when that is not
 * known, anywhere. Libraries such as cuDNN, cuBLAS and the runtime name their functions cu* too
 * (cudnnSetStream, cublasCreate, cudaMalloc): they are not the driver's and reach it through
 * entry points that are wrapped themselves, so they are handed out bare. */
static int in_driver(void *p)
{
    static void *base;
    void *b = LD(&base);
    if (!b) {
        Dl_info di;
        void *init = driver_sym("cuInit");
        if (!init || !dladdr(init, &di) || !di.dli_fbase) return 1;
        ST(&base, b = di.dli_fbase);
    }
    Dl_info di;
    return dladdr(p, &di) && di.dli_fbase == b;
}

/* The runtime dlopens libcuda and asks that handle for cuGetProcAddress_v2: a handle lookup
 * never finds a preloaded export, so dlsym itself answers wrapped names with their wrappers.
 * RTLD_NEXT (another preloaded library looking up what it wraps) is glibc's business: on x86-64
 * the exported dlsym jumps to glibc's with the caller's registers and return address untouched
 * (xq_dlsym_next); only other handles come here. */
static void *xq_glibc_dlsym(void)
{
    if (!LD(&xqc_dlsym_glibc)) xqc_real_dlsym(RTLD_DEFAULT, "dlsym"); /* resolves glibc's */
    return (void *)LD(&xqc_dlsym_glibc);
}
#if defined(__x86_64__)
#define DLSYM_C xq_dlsym_c
#define DLSYM_VIS __attribute__((used, visibility("hidden")))
__attribute__((used, visibility("hidden"))) void *xq_dlsym_next(void)
{
    if (!LD(&xqc_dlsym_glibc)) xqc_real_dlsym(RTLD_DEFAULT, "dlsym"); /* resolves glibc's */
    return (void *)LD(&xqc_dlsym_glibc);
}
__attribute__((used, visibility("hidden"))) void *xq_dlsym_c(void *handle, const char *name);
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    endbr64\n"
        "    cmpq $-1, %rdi\n" /* RTLD_NEXT */
        "    jne xq_dlsym_c\n"
        "    pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n" /* 16-byte aligned at the call */
        "    call xq_dlsym_next\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    testq %rax, %rax\n"
        "    jz xq_dlsym_c\n"
        "    jmp *%rax\n"
        ".size dlsym, .-dlsym\n");
XQ_EXPORT void *dlsym(void *handle, const char *name);
#else
#define DLSYM_C dlsym
#define DLSYM_VIS XQ_EXPORT
#endif
/* XQ_DEFER_DLSYM=0: launch entry points dlsym'd are handed out as the exported ones (never deferred) */
static int g_defer_dlsym = 1;

/* Names that are not the driver's go to the next dlsym after us (libxq-hip's when it is preloaded
 * after us: it answers HIP names from a libamdhip64 handle with its wrappers; else glibc's). */
static void *chain_dlsym(void *handle, const char *name)
{
    static dlsym_t next;
    dlsym_t n = LD(&next);
    if (!n) {
        n = (dlsym_t)xqc_real_dlsym(RTLD_NEXT, "dlsym");
        if (!n || n == (dlsym_t)dlsym) n = (dlsym_t)xq_glibc_dlsym();
        if (!n) return NULL;
        ST(&next, n);
    }
    return n(handle, name);
}

DLSYM_VIS void *DLSYM_C(void *handle, const char *name)
{
    if (handle != RTLD_NEXT && name && (name[0] != 'c' || name[1] != 'u')) return chain_dlsym(handle, name);
    void *r = handle == RTLD_NEXT ? next_after(__builtin_return_address(0), name) : xqc_real_dlsym(handle, name);
    if (!r || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z') return r;
    if (!strcmp(name, "cuGetProcAddress")) return adopt(&G1x, r, name);
    if (!strcmp(name, "cuGetProcAddress_v2")) return adopt(&G2x, r, name);
    for (wdef *d = W; d < W + W_COUNT; d++) {
        size_t n = strlen(d->sym);
        if (strncmp(name, d->sym, n)) continue;
        int dls = d->s[4].fn != NULL && LD(&g_defer_dlsym); /* a deferrable launch: its dlsym wrappers */
        if (!name[n]) return waits_stub(d, r, name), adopt(&d->s[dls ? 4 : 0], r, name);
        if (d->has_ptsz && !strcmp(name + n, "_ptsz")) return waits_stub(d, r, name), adopt(&d->s[dls ? 5 : 1], r, name);
    }
    if (strstr(name, "ynchronize")) xlog(3, "xq: dlsym %s: %p, not wrapped as a host wait", name, r);
    return in_driver(r) ? xqc_stub_for(r, name) : r;
}

/* ------------------------------------------------------------------ process life */

/* fork(): the child has none of our threads and must not speak for the parent's session. It
 * starts from nothing and registers on its own if it launches. */
static void atfork_child(void)
{
    if (xqc_session.fd >= 0) close(xqc_session.fd);
    xqc_session.fd = -1, xqc_session.started = 0, xqc_hot.started = 0, xqc_session.ever_attached = 0, xqc_session.used = NULL, xqc_session.owner = NULL, xqc_session.nslots = 0;
    pthread_mutex_init(&xqc_session.mu, NULL);
    pthread_mutex_init(&xqc_session.send_mu, NULL);
    pthread_mutex_init(&xqc_session.start_mu, NULL);
    pthread_mutex_init(&xqc_tab_mu, NULL);
    pthread_mutex_init(&cap_mu, NULL);
    pthread_mutex_init(&xqc_query_mu, NULL);
    pthread_mutex_init(&xqc_cu_mu, NULL);
    xqc_state = (xqc_state | 1) + 1; /* detached, and no stream's gen matches */
    xqc_ctx_changed(1);
    xqc_beat = (xw_beat){0}, xqc_frozen = 0;
    memset(xqc_hash, 0, sizeof xqc_hash); /* the parent's streams are not the child's: leak them */
    xqc_free = NULL, xqc_all = NULL, xqc_t_ptds = NULL;
    xqc_words = NULL; /* the parent's registrations (its pages are not even mapped here: MADV_DONTFORK) */
    pthread_mutex_init(&xqc_words_mu, NULL);
    xqc_tabgen++;
    xqc_busy = xqc_owed = xqc_closing = xqc_limit_waiters = xqc_captures = 0;
    xqc_capture_wait = 0;
    xqc_deferred = xqc_legacy_deferred = xqc_dq_waiters = 0; /* the parent's deferred launches are its own */
    xqc_ht_reset(); /* the parent's host time and threads are its own */
    pthread_mutex_init(&xqc_fc_mu, NULL);
    pthread_mutex_init(&xqc_stub_mu, NULL);
    pthread_mutex_init(&xqc_kset_mu, NULL);
    g_capn = 0;
    xqc_tracker_on = xqc_tracker_parked = 0;
    xqc_t_tid = 0;
}

__attribute__((constructor)) static void xq_init(void)
{
    const char *v = getenv("XQ_LOG");
    if (v && *v >= '0' && *v <= '9') xq_log_level = atoi(v);
    xqc_hot.diag = xq_log_level >= 2;
    xqc_hot.log = xq_log_level;
    /* XQ_LOG_LEAN=1: the diagnostics' lines and timeline kept, but the launches nothing can hold or
     * change (an LC tenant's on top) take the lean path as without XQ_LOG, untimed by its accounts:
     * under XQ_LOG=2 or more every launch takes the full path, ~0.5-0.9 us of its own more a call on
     * the H200, which a latency-critical tenant's measured figures would carry (session 83) */
    v = getenv("XQ_LOG_LEAN");
    if (v && *v) {
        if (!strcmp(v, "1")) xqc_hot.lean_diag = 1;
        else if (strcmp(v, "0")) xlog(1, "xq: ignoring XQ_LOG_LEAN='%s': not 0 or 1; with XQ_LOG=2 or more every launch takes the full path", v);
    }
    v = getenv("XQ_DEFER"); /* on unless XQ_DEFER=0 */
    xqc_defer = 1;
    if (v && *v) {
        if (!strcmp(v, "0")) xqc_defer = 0;
        else if (strcmp(v, "1")) xlog(1, "xq: ignoring XQ_DEFER='%s': not 0 or 1; launches are deferred", v);
    }
    v = getenv("XQ_TRACK_AHEAD"); /* on unless XQ_TRACK_AHEAD=0 (cuda_int.h: AHEAD_*) */
    if (v && *v) {
        if (!strcmp(v, "0")) xqc_ahead = 0;
        else if (strcmp(v, "1"))
            xlog(1, "xq: ignoring XQ_TRACK_AHEAD='%s': not 0 or 1; a long command is looked at quickly only once it could be done", v);
    }
    v = getenv("XQ_DEFER_DLSYM"); /* launches through dlsym'd entry points deferred unless 0 */
    if (v && *v) {
        if (!strcmp(v, "0")) ST(&g_defer_dlsym, 0);
        else if (strcmp(v, "1"))
            xlog(1, "xq: ignoring XQ_DEFER_DLSYM='%s': not 0 or 1; launches through dlsym'd entry points are deferred", v);
    }
    v = getenv("XQ_DEFER_COPIES"); /* the most bytes of a host-to-device copy deferred; 0: no copy */
    if (v && *v) {
        char *end = NULL;
        unsigned long long b = strtoull(v, &end, 10);
        if (end && !*end && *v != '-' && b <= (64ull << 20)) xqc_defer_copy_max = (size_t)b;
        else
            xlog(1, "xq: ignoring XQ_DEFER_COPIES='%s': not a number of bytes from 0 to 67108864; copies of up to %zu bytes are deferred",
                 v, xqc_defer_copy_max);
    }
    v = getenv("XQ_UNSTICK_MS"); /* the watchdog's patience (cuda_tracker.c); 0: off */
    if (v && *v) {
        char *end = NULL;
        unsigned long ms = strtoul(v, &end, 10);
        if (end && !*end && *v != '-' && ms <= 600000) xqc_unstick_ns = (uint64_t)ms * 1000000ull;
        else
            xlog(1, "xq: ignoring XQ_UNSTICK_MS='%s': not a number of milliseconds from 0 (off) to 600000; the watchdog waits %llu ms",
                 v, (unsigned long long)(xqc_unstick_ns / 1000000ull));
    }
    v = getenv("XQ_ATTR_WAIT"); /* kernel (the default) or all */
    if (v && *v) {
        if (!strcmp(v, "all")) xqc_attr_all = 1;
        else if (strcmp(v, "kernel")) xlog(1, "xq: ignoring XQ_ATTR_WAIT='%s': not kernel or all", v);
    }
    pthread_key_create(&xqc_ptds_key, xqc_ptds_thread_exit);
    pthread_atfork(NULL, NULL, atfork_child);
    xqc_space_setup();
}
