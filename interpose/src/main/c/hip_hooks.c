/*
 * hip_hooks.c: the entry points: the wrapped (exported) HIP functions, stream creation and
 * destruction, graph capture, dlsym and hipGetProcAddress, and process life (constructor, fork).
 */
#include "hip_int.h"

/* ------------------------------------------------------------------ wrapped entry points */

#define REAL(NAME, PT)                                                                              \
    typedef hipError_t(*fn_t) PT;                                                                   \
    static fn_t real_;                                                                              \
    fn_t r_ = LD(&real_);                                                                           \
    if (!r_) {                                                                                      \
        r_ = (fn_t)xqh_hip_sym(#NAME);                                                                  \
        if (!r_) return hipErrorSharedObjectSymbolNotFound;                                         \
        ST(&real_, r_);                                                                             \
    }

/* t_inside: this thread is inside a wrapped call. A runtime whose entry points call each other
 * through the PLT (hipMemcpyWithStream calling hipMemcpyAsync, a create calling a launch) reaches
 * a wrapper again: that inner call is part of the outer one, already counted (gated again, it
 * could wait for the outer launch's own slot under a threshold of 1 forever), so it passes. */
static __thread int t_inside;
#define GATED_(NAME, PT, ARGS, STREAM, PTSZ, KIND)                                                  \
    XQ_EXPORT hipError_t NAME PT                                                                    \
    {                                                                                               \
        REAL(NAME, PT)                                                                              \
        gate g_ = {0};                                                                              \
        if (t_inside || !xqh_gate_enter(&g_, (STREAM), (PTSZ), (KIND))) return r_ ARGS;                 \
        t_inside++;                                                                                 \
        hipError_t e_ = r_ ARGS;                                                                    \
        t_inside--;                                                                                 \
        xqh_gate_exit(&g_, e_);                                                                         \
        return e_;                                                                                  \
    }
#define GATED(NAME, PT, ARGS, STREAM) GATED_(NAME, PT, ARGS, STREAM, 0, HK_KERNEL)
/* with the _spt twin (per-thread default stream for a null stream) */
#define GATED2(NAME, PT, ARGS, STREAM) GATED_(NAME, PT, ARGS, STREAM, 0, HK_KERNEL) GATED_(NAME##_spt, PT, ARGS, STREAM, 1, HK_KERNEL)
/* copies and memsets: estimated apart from kernels (hip_int.h, HK_COPY) */
#define GATEDC(NAME, PT, ARGS, STREAM) GATED_(NAME, PT, ARGS, STREAM, 0, HK_COPY)
#define GATEDC2(NAME, PT, ARGS, STREAM) GATED_(NAME, PT, ARGS, STREAM, 0, HK_COPY) GATED_(NAME##_spt, PT, ARGS, STREAM, 1, HK_COPY)

GATED2(hipLaunchKernel, (const void *f, dim3 g, dim3 b, void **args, size_t shm, hipStream_t s), (f, g, b, args, shm, s), s)
GATED(hipExtLaunchKernel,
      (const void *f, dim3 g, dim3 b, void **args, size_t shm, hipStream_t s, hipEvent_t a, hipEvent_t z, int flags),
      (f, g, b, args, shm, s, a, z, flags), s)
GATED2(hipLaunchCooperativeKernel, (const void *f, dim3 g, dim3 b, void **args, unsigned shm, hipStream_t s),
       (f, g, b, args, shm, s), s)
GATED(hipModuleLaunchKernel,
      (hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shm,
       hipStream_t s, void **params, void **extra),
      (f, gx, gy, gz, bx, by, bz, shm, s, params, extra), s)
GATED(hipModuleLaunchCooperativeKernel,
      (hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shm,
       hipStream_t s, void **params),
      (f, gx, gy, gz, bx, by, bz, shm, s, params), s)
GATED(hipExtModuleLaunchKernel,
      (hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shm,
       hipStream_t s, void **params, void **extra, hipEvent_t a, hipEvent_t z, uint32_t flags),
      (f, gx, gy, gz, lx, ly, lz, shm, s, params, extra, a, z, flags), s)
GATED(hipHccModuleLaunchKernel,
      (hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shm,
       hipStream_t s, void **params, void **extra, hipEvent_t a, hipEvent_t z),
      (f, gx, gy, gz, lx, ly, lz, shm, s, params, extra, a, z), s)
GATEDC2(hipMemcpyAsync, (void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t s), (dst, src, n, k, s), s)
GATEDC(hipMemcpyWithStream, (void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t s), (dst, src, n, k, s), s)
GATEDC(hipMemcpyHtoDAsync, (hipDeviceptr_t dst, void *src, size_t n, hipStream_t s), (dst, src, n, s), s)
GATEDC(hipMemcpyDtoHAsync, (void *dst, hipDeviceptr_t src, size_t n, hipStream_t s), (dst, src, n, s), s)
GATEDC(hipMemcpyDtoDAsync, (hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, hipStream_t s), (dst, src, n, s), s)
GATEDC2(hipMemcpy2DAsync,
       (void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h, hipMemcpyKind k, hipStream_t s),
       (dst, dp, src, sp, w, h, k, s), s)
GATEDC(hipMemcpyPeerAsync, (void *dst, int dd, const void *src, int sd, size_t n, hipStream_t s), (dst, dd, src, sd, n, s), s)
GATEDC2(hipMemcpyToSymbolAsync, (const void *sym, const void *src, size_t n, size_t off, hipMemcpyKind k, hipStream_t s),
       (sym, src, n, off, k, s), s)
GATEDC2(hipMemcpyFromSymbolAsync, (void *dst, const void *sym, size_t n, size_t off, hipMemcpyKind k, hipStream_t s),
       (dst, sym, n, off, k, s), s)
GATEDC2(hipMemsetAsync, (void *dst, int v, size_t n, hipStream_t s), (dst, v, n, s), s)
GATEDC(hipMemsetD8Async, (hipDeviceptr_t d, unsigned char v, size_t n, hipStream_t s), (d, v, n, s), s)
GATEDC(hipMemsetD16Async, (hipDeviceptr_t d, unsigned short v, size_t n, hipStream_t s), (d, v, n, s), s)
GATEDC(hipMemsetD32Async, (hipDeviceptr_t d, int v, size_t n, hipStream_t s), (d, v, n, s), s)
GATEDC2(hipMemset2DAsync, (void *dst, size_t pitch, int v, size_t w, size_t h, hipStream_t s), (dst, pitch, v, w, h, s), s)
GATED2(hipGraphLaunch, (hipGraphExec_t g, hipStream_t s), (g, s), s)
GATED2(hipLaunchHostFunc, (hipStream_t s, hipHostFn_t fn, void *data), (s, fn, data), s)

/* The host waiting on the device (docs/processes.md, "What is wrapped"): counted where the
 * process has work in flight and told to the node (WAITS) now and then, when the node asked for
 * it. A wait made inside another wrapped call (a runtime's blocking copy) is part of that call.
 * hipStreamSynchronize_spt is left unwrapped: exported here, a program that looks for it as a
 * weak symbol would find ours over a runtime without it. */
#define WAITED(NAME, PT, ARGS)                                                                      \
    XQ_EXPORT hipError_t NAME PT                                                                    \
    {                                                                                               \
        REAL(NAME, PT)                                                                              \
        if (t_inside) return r_ ARGS;                                                               \
        xqh_host_wait_begin();                                                                      \
        t_inside++;                                                                                 \
        hipError_t e_ = r_ ARGS;                                                                    \
        t_inside--;                                                                                 \
        xqh_host_wait_end();                                                                        \
        return e_;                                                                                  \
    }
WAITED(hipStreamSynchronize, (hipStream_t s), (s))
WAITED(hipDeviceSynchronize, (void), ())
WAITED(hipEventSynchronize, (hipEvent_t e), (e))

/* Stream creation: the KFD queue that appears is the stream's (Lv3). Its priority reaches the
 * node in STREAM (hipStreamGetPriority), as a CUDA stream's does. */
XQ_EXPORT hipError_t hipStreamCreate(hipStream_t *s)
{
    REAL(hipStreamCreate, (hipStream_t *))
    int held = xqh_kfd_before_create();
    t_inside++;
    hipError_t r = r_(s);
    t_inside--;
    xqh_kfd_after_create(held, r, s);
    return r;
}
XQ_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned flags)
{
    REAL(hipStreamCreateWithFlags, (hipStream_t *, unsigned))
    int held = xqh_kfd_before_create();
    t_inside++;
    hipError_t r = r_(s, flags);
    t_inside--;
    xqh_kfd_after_create(held, r, s);
    return r;
}
XQ_EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t *s, unsigned flags, int prio)
{
    REAL(hipStreamCreateWithPriority, (hipStream_t *, unsigned, int))
    int held = xqh_kfd_before_create();
    t_inside++;
    hipError_t r = r_(s, flags, prio);
    t_inside--;
    xqh_kfd_after_create(held, r, s);
    return r;
}

/* Forgotten before the real call: a handle freed by it may be reused at once by another thread. */
XQ_EXPORT hipError_t hipStreamDestroy(hipStream_t s)
{
    REAL(hipStreamDestroy, (hipStream_t))
    if (s && s != hipStreamPerThread && LD(&xqh_hip_state) > 0) xqh_stream_forget(s);
    return r_(s);
}

/* Graph capture: captured calls are not launches; everything passes through while one is open. */
static pthread_mutex_t cap_mu = PTHREAD_MUTEX_INITIALIZER;
static struct { hipStream_t h; pid_t tid; } g_cap[64];
static int g_capn;

static void capture_begun(hipError_t r, hipStream_t h, int ptsz)
{
    if (r != hipSuccess) return;
    pthread_mutex_lock(&cap_mu);
    if (g_capn < 64) g_cap[g_capn].h = h, g_cap[g_capn++].tid = !h || h == hipStreamPerThread || ptsz ? my_tid() : 0;
    ADD(&xqh_captures, 1);
    pthread_mutex_unlock(&cap_mu);
}

static void capture_ended(hipStream_t h, int ptsz)
{
    pid_t tid = !h || h == hipStreamPerThread || ptsz ? my_tid() : 0;
    pthread_mutex_lock(&cap_mu);
    for (int i = 0; i < g_capn; i++)
        if (g_cap[i].h == h && g_cap[i].tid == tid) {
            g_cap[i] = g_cap[--g_capn];
            ADD(&xqh_captures, -1);
            break;
        }
    pthread_mutex_unlock(&cap_mu);
}

#define CAPTURE(NAME, PTSZ)                                                                         \
    XQ_EXPORT hipError_t NAME(hipStream_t s, hipStreamCaptureMode mode)                             \
    {                                                                                               \
        REAL(NAME, (hipStream_t, hipStreamCaptureMode))                                             \
        hipError_t r = r_(s, mode);                                                                 \
        capture_begun(r, s, PTSZ);                                                                  \
        return r;                                                                                   \
    }
#define CAPTURE_END(NAME, PTSZ)                                                                     \
    XQ_EXPORT hipError_t NAME(hipStream_t s, hipGraph_t *g)                                         \
    {                                                                                               \
        REAL(NAME, (hipStream_t, hipGraph_t *))                                                     \
        hipError_t r = r_(s, g);                                                                    \
        capture_ended(s, PTSZ);                                                                     \
        return r;                                                                                   \
    }
CAPTURE(hipStreamBeginCapture, 0)
CAPTURE(hipStreamBeginCapture_spt, 1)
CAPTURE_END(hipStreamEndCapture, 0)
CAPTURE_END(hipStreamEndCapture_spt, 1)

/* ------------------------------------------------------------------ dlsym, hipGetProcAddress
 * A program that takes HIP entry points from a libamdhip64 handle (Triton's HIP launcher:
 * dlopen("libamdhip64.so") + dlsym) or from hipGetProcAddress gets the runtime's own functions,
 * which no preloaded definition shadows; both are answered with our wrapper instead, but only
 * where the pointer found is the very definition the wrapper calls (another library's function of
 * that name, or an internal one, passes untouched). */

/* Our own export of name (a wrapper), or NULL. */
static void *own_sym(const char *name)
{
    static void *self;
    void *h = LD(&self);
    if (!h) {
        Dl_info di;
        if (!dladdr((void *)own_sym, &di) || !(h = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) return NULL;
        ST(&self, h); /* kept open: we are loaded as long as the process lives */
    }
    void *p = xqh_real_dlsym(h, name);
    return p && xqh_is_ours(p) ? p : NULL;
}

/* What to hand out for name when the runtime's lookup found r. Our own lookups may fail on the
 * way (dlopen NOLOAD of a soname not loaded): their error is dropped, so that a program checking
 * dlerror() after a dlsym that found something sees none. */
static void *handout(const char *name, void *r)
{
    if (!r || !name || strncmp(name, "hip", 3) || xqh_is_ours(r)) return r;
    void *w = own_sym(name);
    w = w && xqh_hip_sym(name) == r ? w : r;
    (void)dlerror();
    return w;
}

/* hipGetProcAddress (HIP 6.2+): the symbol is asked by its base name; the flags may hand out the
 * _spt twin, so the pointer is matched against both. */
typedef hipError_t (*gpa_t)(const char *, void **, int, uint64_t, hipDriverProcAddressQueryResult *);
XQ_EXPORT hipError_t hipGetProcAddress(const char *sym, void **pfn, int ver, uint64_t flags,
                                       hipDriverProcAddressQueryResult *status)
{
    static gpa_t real;
    gpa_t r_ = LD(&real);
    if (!r_) {
        if (!(r_ = (gpa_t)xqh_hip_sym("hipGetProcAddress"))) return hipErrorNotSupported;
        ST(&real, r_);
    }
    hipError_t e = r_(sym, pfn, ver, flags, status);
    if (e != hipSuccess || !sym || !pfn || !*pfn) return e;
    void *w = handout(sym, *pfn);
    if (w == *pfn && strlen(sym) < 96) {
        char spt[104];
        snprintf(spt, sizeof spt, "%s_spt", sym);
        w = handout(spt, *pfn);
    }
    *pfn = w;
    return e;
}

/* dlsym: HIP names are looked up with glibc's and handed out as above; every other name goes to
 * the next dlsym after us (libxq-cuda's when it is preloaded after us, else glibc's), so that both
 * interposers preloaded, in either order, each answer their own names. RTLD_NEXT is glibc's
 * business: the entry jumps to glibc's with the caller's registers and return address untouched,
 * as libxq-cuda's does (glibc finds "next after the caller" from the return address). x86-64
 * only (ROCm's platform); elsewhere dlsym is not ours and handle lookups stay unscheduled. */
#if defined(__x86_64__)
static dlsym_t g_next_dlsym;

__attribute__((used, visibility("hidden"))) void *xq_hip_glibc_dlsym(void)
{
    if (!LD(&xqh_dlsym_glibc)) xqh_real_dlsym(RTLD_DEFAULT, "dlsym"); /* resolves glibc's */
    return (void *)LD(&xqh_dlsym_glibc);
}

__attribute__((used, visibility("hidden"))) void *xq_hip_dlsym_c(void *handle, const char *name)
{
    if (name && !strncmp(name, "hip", 3)) return handout(name, xqh_real_dlsym(handle, name));
    dlsym_t n = LD(&g_next_dlsym);
    if (!n) {
        n = (dlsym_t)xqh_real_dlsym(RTLD_NEXT, "dlsym");
        if (!n || xqh_is_ours((void *)n)) n = (dlsym_t)xq_hip_glibc_dlsym();
        if (!n) return NULL;
        ST(&g_next_dlsym, n);
    }
    return n(handle, name);
}

__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    endbr64\n"
        "    cmpq $-1, %rdi\n" /* RTLD_NEXT */
        "    jne xq_hip_dlsym_c\n"
        "    pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n" /* 16-byte aligned at the call */
        "    call xq_hip_glibc_dlsym\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    testq %rax, %rax\n"
        "    jz xq_hip_dlsym_c\n"
        "    jmp *%rax\n"
        ".size dlsym, .-dlsym\n");
#endif

/* ------------------------------------------------------------------ process life */

static void atfork_child(void)
{
    if (xqh_session.fd >= 0) close(xqh_session.fd);
    xqh_session.fd = -1, xqh_session.started = 0, xqh_session.ever_attached = 0, xqh_session.used = NULL, xqh_session.owner = NULL, xqh_session.nslots = 0;
    pthread_mutex_init(&xqh_session.mu, NULL);
    pthread_mutex_init(&xqh_session.send_mu, NULL);
    pthread_mutex_init(&xqh_session.start_mu, NULL);
    pthread_mutex_init(&xqh_tab_mu, NULL);
    pthread_mutex_init(&cap_mu, NULL);
    pthread_mutex_init(&xqh_hip_mu, NULL);
    pthread_mutex_init(&xqh_kfd.mu, NULL);
    /* the parent's queues and KFD descriptor are not the child's: it probes its own */
    if (xqh_kfd.fd >= 0) close(xqh_kfd.fd);
    if (xqh_kfd.efd >= 0) close(xqh_kfd.efd);
    xqh_kfd.fd = xqh_kfd.efd = -1, xqh_kfd.wanted = xqh_kfd.trap = 0, xqh_kfd.nmade = xqh_kfd.nseen = 0, xqh_kfd.last_suspend = 0;
    xqh_state = (xqh_state | 1) + 1;
    xqh_beat = (xw_beat){0}, xqh_frozen = 0;
    memset(xqh_hash, 0, sizeof xqh_hash);
    xqh_free = NULL, xqh_all = NULL;
    memset(xqh_t_ptds, 0, sizeof xqh_t_ptds);
    xqh_busy = xqh_owed = xqh_closing = xqh_limit_waiters = xqh_captures = 0;
    g_capn = 0;
    xqh_tracker_on = xqh_tracker_parked = 0;
    xqh_t_tid = 0;
}

__attribute__((constructor)) static void xq_hip_init(void)
{
    const char *v = getenv("XQ_LOG");
    if (v && *v >= '0' && *v <= '9') xq_log_level = atoi(v);
    const char *gp = getenv("XQ_GUARD_PAD");
    xqh_pad_on = !(gp && !strcmp(gp, "0"));
    v = getenv("XQ_TRACK_AHEAD"); /* on unless XQ_TRACK_AHEAD=0 (hip_int.h: AHEAD_*) */
    if (v && *v) {
        if (!strcmp(v, "0")) xqh_ahead = 0;
        else if (strcmp(v, "1"))
            xlog(1, "xq: ignoring XQ_TRACK_AHEAD='%s': not 0 or 1; a long command is looked at quickly only once it could be done", v);
    }
    v = getenv("XQ_UNSTICK_MS"); /* the watchdog's patience (hip_tracker.c); 0: off */
    if (v && *v) {
        char *end = NULL;
        unsigned long ms = strtoul(v, &end, 10);
        if (end && !*end && *v != '-' && ms <= 600000) xqh_unstick_ns = (uint64_t)ms * 1000000ull;
        else
            xlog(1, "xq: ignoring XQ_UNSTICK_MS='%s': not a number of milliseconds from 0 (off) to 600000; the watchdog waits %llu ms",
                 v, (unsigned long long)(xqh_unstick_ns / 1000000ull));
    }
    pthread_key_create(&xqh_ptds_key, xqh_ptds_thread_exit);
    pthread_atfork(NULL, NULL, atfork_child);
}
