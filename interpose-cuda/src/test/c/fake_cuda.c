/*
 * A CPU-backed fake of the CUDA driver API (libcuda.so.1) for the interposer's tests and the
 * Java integration tests: the same prototypes as CUDA 13's cuda.h, enough of the semantics.
 *
 * Every stream (the legacy default stream of a context, each per-thread default stream, each
 * created stream) runs its operations in order on a worker thread of its own. Kernels:
 *   "spin": params[0] -> unsigned microseconds; sleeps that long "on the GPU"
 *   "inc":  params[0] -> CUdeviceptr p, params[1] -> unsigned n; p[i] += 1 for n unsigned ints
 *   "nop":  does nothing (measures launch costs)
 *   "fail": every launch fails with CUDA_ERROR_INVALID_VALUE
 * A process has one simulated GPU: kernels run one at a time. With FAKECUDA_GPU=/path/lockfile
 * all processes share one: a kernel holds an exclusive flock on that file while it runs.
 * Copies, memsets and host functions do not take the GPU. Device memory is host memory.
 * FAKECUDA_DEVICES sets the device count (default 1). Capture records nothing.
 * Stream memory operations: cuStreamWriteValue32_v2/64_v2 run in stream order on the worker (at
 * once when the stream is idle) and store to the host memory behind the "device pointer"
 * (cuMemHostRegister_v2/cuMemHostAlloc memory: the device pointer is the host address).
 * cuDeviceGetAttribute answers the memop attributes (92, 93, 122) with FAKECUDA_MEMOPS (default
 * 1; 0: unsupported), and the PCI ones (domain 50, bus 33, device 34): device d is at
 * 0000:(0x10 + d):00.0, or at the d-th entry of FAKECUDA_PCI (comma-separated DOMAIN:BUS:DEVICE in
 * hex, e.g. 0000:3b:00; what a container showing only some GPUs would see). FAKECUDA_EVENTS=0 makes cuEventRecord fail (CUDA_ERROR_NOT_SUPPORTED).
 * Devices have FAKECUDA_SMS multiprocessors (default 132) of FAKECUDA_TPS threads (default 2048); green contexts (cuGreenCtxCreate)
 * can be made unless FAKECUDA_GREEN=0, and count the kernels launched into their streams.
 * cuEventElapsedTime: an event's time is when its stream completed the work recorded before it
 * (or the record, if later); FAKECUDA_TIMING=0 makes it fail (CUDA_ERROR_NOT_SUPPORTED).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define MAXDEV 16

enum { OP_SPIN, OP_INC, OP_COPY, OP_SET32, OP_HOST, OP_WRITE32, OP_WRITE64, OP_WAIT32, OP_WAITEV };
typedef struct op {
    struct op *next;
    int kind;
    unsigned us;
    void *dst;
    const void *src;
    size_t n;
    unsigned v;
    unsigned long long v64;
    CUhostFn fn;
    void *data;
    struct CUstream_st *on; /* OP_WAITEV: the stream whose first v64 commands must be done */
} op;

struct CUctx_st {
    int dev;
    pthread_mutex_t mu;
    struct CUstream_st *streams; /* every stream of the context, for cuCtxSynchronize */
    struct CUstream_st *legacy;
};
struct CUstream_st {
    struct CUstream_st *next;
    CUcontext ctx;
    int prio, capturing, destroyed;
    int green; /* a green context's stream: its multiprocessors (0: a stream of the whole device) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    op *head, *tail;
    unsigned long long submitted, completed;
    unsigned long long done_ns[1024]; /* when command k (1-based) completed: done_ns[k % 1024] */
};
struct CUevent_st {
    struct CUstream_st *s;
    unsigned long long target;
    unsigned long long rec_ns; /* when it was recorded */
    unsigned flags;            /* CU_EVENT_DISABLE_TIMING (2): no time */
};
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

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;     /* contexts */
static pthread_mutex_t g_gpu_mu = PTHREAD_MUTEX_INITIALIZER; /* the process's GPU */
static CUcontext g_primary[MAXDEV];
static int g_gpu_fd = -2; /* -2: not opened yet; -1: no shared GPU */
static int g_memops = 1, g_events = 1; /* FAKECUDA_MEMOPS, FAKECUDA_EVENTS */
static unsigned long long g_waits; /* stream waits queued (xq_fake_waits) */
static unsigned long long g_green_launches; /* kernels launched into green streams (xq_fake_green_launches) */
static int g_green = 1, g_sms = 132, g_tps = 2048; /* FAKECUDA_GREEN=0: no green contexts; FAKECUDA_SMS, FAKECUDA_TPS */
static int g_timing = 1;               /* FAKECUDA_TIMING=0: cuEventElapsedTime fails (not supported) */
static long g_call_us;                 /* FAKECUDA_CALL_US: how long each enqueueing call takes its caller */

static __thread CUcontext t_stack[16]; /* t_stack[t_depth] is current */
static __thread int t_depth;
static __thread struct {
    CUcontext ctx;
    struct CUstream_st *s;
} t_ptds[MAXDEV];

static int ndev(void)
{
    const char *v = getenv("FAKECUDA_DEVICES");
    int n = v ? atoi(v) : 1;
    return n < 1 ? 1 : n > MAXDEV ? MAXDEV : n;
}

static CUcontext cur(void) { return t_stack[t_depth]; }

/* ------------------------------------------------------------------ the GPU and the workers */

static void gpu_acquire(void)
{
    pthread_mutex_lock(&g_gpu_mu);
    if (g_gpu_fd == -2) {
        const char *p = getenv("FAKECUDA_GPU");
        g_gpu_fd = p && *p ? open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0666) : -1;
    }
    if (g_gpu_fd >= 0)
        while (flock(g_gpu_fd, LOCK_EX) && errno == EINTR) {
        }
}

static void gpu_release(void)
{
    if (g_gpu_fd >= 0)
        flock(g_gpu_fd, LOCK_UN);
    pthread_mutex_unlock(&g_gpu_mu);
}

static void run(op *o)
{
    switch (o->kind) {
    case OP_SPIN: {
        gpu_acquire();
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        t.tv_nsec += (long)o->us * 1000;
        t.tv_sec += t.tv_nsec / 1000000000L;
        t.tv_nsec %= 1000000000L;
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
        }
        gpu_release();
        break;
    }
    case OP_INC:
        gpu_acquire();
        for (size_t i = 0; i < o->n; i++)
            ((unsigned *)o->dst)[i] += 1;
        gpu_release();
        break;
    case OP_COPY:
        memcpy(o->dst, o->src, o->n);
        break;
    case OP_SET32:
        for (size_t i = 0; i < o->n; i++)
            ((unsigned *)o->dst)[i] = o->v;
        break;
    case OP_HOST:
        o->fn(o->data);
        break;
    case OP_WRITE32:
        __atomic_store_n((unsigned *)o->dst, o->v, __ATOMIC_RELEASE);
        break;
    case OP_WRITE64:
        __atomic_store_n((unsigned long long *)o->dst, o->v64, __ATOMIC_RELEASE);
        break;
    case OP_WAITEV: { /* cuStreamWaitEvent: nothing behind it starts before the event's work is done */
        pthread_mutex_lock(&o->on->mu);
        while (o->on->completed < o->v64)
            pthread_cond_wait(&o->on->cv, &o->on->mu);
        pthread_mutex_unlock(&o->on->mu);
        break;
    }
    case OP_WAIT32: /* the front end waits: nothing behind it on this stream starts until the word matches */
        while (__atomic_load_n((unsigned *)o->dst, __ATOMIC_ACQUIRE) != o->v) {
            struct timespec t = {0, 20000};
            nanosleep(&t, NULL);
        }
        break;
    }
}

static void *worker(void *arg)
{
    struct CUstream_st *s = arg;
    prctl(PR_SET_NAME, "fakecuda-stream");
    prctl(PR_SET_TIMERSLACK, 1000UL);
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->head && !s->destroyed)
            pthread_cond_wait(&s->cv, &s->mu);
        if (!s->head)
            break;
        op *o = s->head;
        pthread_mutex_unlock(&s->mu);
        run(o);
        pthread_mutex_lock(&s->mu);
        __atomic_store_n(&s->head, o->next, __ATOMIC_RELEASE); /* read without the lock by write_of */
        if (!s->head)
            s->tail = NULL;
        free(o);
        struct timespec dn;
        clock_gettime(CLOCK_MONOTONIC, &dn);
        s->done_ns[(s->completed + 1) % 1024] = (unsigned long long)dn.tv_sec * 1000000000ull + (unsigned long long)dn.tv_nsec;
        __atomic_add_fetch(&s->completed, 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL; /* the struct stays: events may still point at it */
}

static struct CUstream_st *stream_new(CUcontext ctx, int prio)
{
    struct CUstream_st *s = calloc(1, sizeof *s);
    s->ctx = ctx;
    s->prio = prio;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_t t;
    pthread_create(&t, NULL, worker, s);
    pthread_detach(t);
    pthread_mutex_lock(&ctx->mu);
    s->next = ctx->streams;
    ctx->streams = s;
    pthread_mutex_unlock(&ctx->mu);
    return s;
}

/* NULL means the legacy stream, or the per-thread one in a _ptsz call. */
static struct CUstream_st *resolve(CUstream h, int ptsz)
{
    if (!h)
        h = ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    if (h != CU_STREAM_LEGACY && h != CU_STREAM_PER_THREAD)
        return h;
    CUcontext c = cur();
    if (!c)
        return NULL;
    if (h == CU_STREAM_LEGACY) {
        pthread_mutex_lock(&g_mu);
        if (!c->legacy)
            c->legacy = stream_new(c, 0);
        pthread_mutex_unlock(&g_mu);
        return c->legacy;
    }
    int i = 0;
    while (i < MAXDEV && t_ptds[i].ctx && t_ptds[i].ctx != c)
        i++;
    if (i == MAXDEV)
        return NULL;
    if (!t_ptds[i].ctx) {
        t_ptds[i].ctx = c;
        t_ptds[i].s = stream_new(c, 0);
    }
    return t_ptds[i].s;
}

static CUresult enqueue(CUstream h, int ptsz, op o)
{
    struct CUstream_st *s = resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (s->destroyed)
        return CUDA_ERROR_INVALID_HANDLE;
    if (s->capturing) /* captured, not run */
        return CUDA_SUCCESS;
    if (g_call_us > 0) { /* a slow driver: the call itself takes the caller's time */
        struct timespec d = {g_call_us / 1000000, g_call_us % 1000000 * 1000};
        while (nanosleep(&d, &d) == -1 && errno == EINTR) {
        }
    }
    op *p = malloc(sizeof *p);
    *p = o;
    p->next = NULL;
    pthread_mutex_lock(&s->mu);
    if (s->tail)
        s->tail->next = p;
    else
        __atomic_store_n(&s->head, p, __ATOMIC_RELEASE);
    s->tail = p;
    __atomic_add_fetch(&s->submitted, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return CUDA_SUCCESS;
}

static void wait_for(struct CUstream_st *s, unsigned long long target)
{
    pthread_mutex_lock(&s->mu);
    while (s->completed < target)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

/* written under s->mu, read without it */
static unsigned long long submitted(struct CUstream_st *s) { return __atomic_load_n(&s->submitted, __ATOMIC_ACQUIRE); }
static int done(struct CUstream_st *s, unsigned long long target)
{
    return __atomic_load_n(&s->completed, __ATOMIC_ACQUIRE) >= target;
}

/* ------------------------------------------------------------------ init, devices, contexts */

EXPORT CUresult cuInit(unsigned int flags) { return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }
EXPORT CUresult cuDriverGetVersion(int *v) { return v ? (*v = 13000, CUDA_SUCCESS) : CUDA_ERROR_INVALID_VALUE; }
EXPORT CUresult cuDeviceGetCount(int *n) { return n ? (*n = ndev(), CUDA_SUCCESS) : CUDA_ERROR_INVALID_VALUE; }

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!d || ordinal < 0 || ordinal >= ndev())
        return CUDA_ERROR_INVALID_VALUE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    if (!name || len <= 0 || d < 0 || d >= ndev())
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "XQ fake CUDA device %d", d);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d)
{
    if (!u || d < 0 || d >= ndev())
        return CUDA_ERROR_INVALID_VALUE;
    memset(u->bytes, 0, 16);
    memcpy(u->bytes, "xqfake", 6);
    u->bytes[15] = (char)d;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d) { return cuDeviceGetUuid(u, d); }

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    if (!c || d < 0 || d >= ndev())
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    if (!g_primary[d]) {
        g_primary[d] = calloc(1, sizeof(struct CUctx_st));
        g_primary[d]->dev = d;
        pthread_mutex_init(&g_primary[d]->mu, NULL);
    }
    *c = g_primary[d];
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice d) { return d >= 0 && d < ndev() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { return cuDevicePrimaryCtxRelease(d); }

EXPORT CUresult cuCtxSetCurrent(CUcontext c) { t_stack[t_depth] = c; return CUDA_SUCCESS; }
EXPORT CUresult cuCtxGetCurrent(CUcontext *c) { return c ? (*c = cur(), CUDA_SUCCESS) : CUDA_ERROR_INVALID_VALUE; }

EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cur())
        return CUDA_ERROR_INVALID_CONTEXT;
    *d = cur()->dev;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext c)
{
    if (!c || t_depth == 15)
        return CUDA_ERROR_INVALID_VALUE;
    t_stack[++t_depth] = c;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
    if (!t_depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (c)
        *c = t_stack[t_depth];
    t_stack[t_depth--] = NULL;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
    if (least)
        *least = 0;
    if (greatest)
        *greatest = -5;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void)
{
    CUcontext c = cur();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&c->mu);
    struct CUstream_st *all = c->streams;
    pthread_mutex_unlock(&c->mu);
    for (struct CUstream_st *s = all; s; s = s->next) /* the list only grows at its head */
        wait_for(s, submitted(s));
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ streams and events */

EXPORT CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int prio)
{
    (void)flags;
    if (!ph)
        return CUDA_ERROR_INVALID_VALUE;
    if (!cur())
        return CUDA_ERROR_INVALID_CONTEXT;
    *ph = stream_new(cur(), prio > 0 ? 0 : prio < -5 ? -5 : prio);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamCreate(CUstream *ph, unsigned int flags) { return cuStreamCreateWithPriority(ph, flags, 0); }

static CUresult prio_of(CUstream h, int ptsz, int *p)
{
    struct CUstream_st *s = resolve(h, ptsz);
    if (!s || !p)
        return s ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_CONTEXT;
    *p = s->prio;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamGetPriority(CUstream h, int *p) { return prio_of(h, 0, p); }
EXPORT CUresult cuStreamGetPriority_ptsz(CUstream h, int *p) { return prio_of(h, 1, p); }

static CUresult ctx_of(CUstream h, int ptsz, CUcontext *c)
{
    struct CUstream_st *s = resolve(h, ptsz);
    if (!s || !c)
        return s ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_CONTEXT;
    *c = s->ctx;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamGetCtx(CUstream h, CUcontext *c) { return ctx_of(h, 0, c); }
EXPORT CUresult cuStreamGetCtx_ptsz(CUstream h, CUcontext *c) { return ctx_of(h, 1, c); }

static CUresult sync_of(CUstream h, int ptsz)
{
    struct CUstream_st *s = resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    wait_for(s, submitted(s));
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamSynchronize(CUstream h) { return sync_of(h, 0); }
EXPORT CUresult cuStreamSynchronize_ptsz(CUstream h) { return sync_of(h, 1); }

static CUresult query_of(CUstream h, int ptsz)
{
    struct CUstream_st *s = resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    return done(s, submitted(s)) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
EXPORT CUresult cuStreamQuery(CUstream h) { return query_of(h, 0); }
EXPORT CUresult cuStreamQuery_ptsz(CUstream h) { return query_of(h, 1); }

EXPORT CUresult cuStreamDestroy_v2(CUstream h)
{
    if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD || h->destroyed)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&h->mu);
    h->destroyed = 1; /* the worker finishes the queue, then ends */
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    if (!e)
        return CUDA_ERROR_INVALID_VALUE;
    *e = calloc(1, sizeof(struct CUevent_st));
    (*e)->flags = flags;
    return CUDA_SUCCESS;
}

/* An event completes when its stream has completed everything submitted before the record. */
static CUresult record_of(CUevent e, CUstream h, int ptsz)
{
    struct CUstream_st *s = resolve(h, ptsz);
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (s->capturing)
        return CUDA_SUCCESS;
    unsigned long long t = submitted(s);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    e->rec_ns = (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec;
    __atomic_store_n(&e->target, t, __ATOMIC_RELAXED);
    __atomic_store_n(&e->s, s, __ATOMIC_RELEASE);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuEventRecord(CUevent e, CUstream h) { return g_events ? record_of(e, h, 0) : 801; }
EXPORT CUresult cuEventRecord_ptsz(CUevent e, CUstream h) { return g_events ? record_of(e, h, 1) : 801; }

EXPORT CUresult cuEventQuery(CUevent e)
{
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    struct CUstream_st *s = __atomic_load_n(&e->s, __ATOMIC_ACQUIRE);
    return !s || done(s, __atomic_load_n(&e->target, __ATOMIC_RELAXED)) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

EXPORT CUresult cuEventSynchronize(CUevent e)
{
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    struct CUstream_st *s = __atomic_load_n(&e->s, __ATOMIC_ACQUIRE);
    if (s)
        wait_for(s, __atomic_load_n(&e->target, __ATOMIC_RELAXED));
    return CUDA_SUCCESS;
}

/* The "device" time of an event: when its stream completed the last command before the record
 * (or the record itself, when that was later: the stream was idle). As the driver: NOT_READY until
 * both are done, INVALID_HANDLE for an event never recorded or made with CU_EVENT_DISABLE_TIMING. */
static CUresult event_time(CUevent e, unsigned long long *t)
{
    struct CUstream_st *s = e ? __atomic_load_n(&e->s, __ATOMIC_ACQUIRE) : NULL;
    if (!s || (e->flags & 2))
        return CUDA_ERROR_INVALID_HANDLE;
    unsigned long long k = __atomic_load_n(&e->target, __ATOMIC_RELAXED);
    if (!done(s, k))
        return CUDA_ERROR_NOT_READY;
    unsigned long long d = k ? s->done_ns[k % 1024] : 0;
    *t = d > e->rec_ns ? d : e->rec_ns;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    unsigned long long ta, tb;
    if (!g_timing)
        return 801;
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = event_time(a, &ta);
    if (r == CUDA_SUCCESS)
        r = event_time(b, &tb);
    if (r != CUDA_SUCCESS)
        return r;
    *ms = (float)(((double)tb - (double)ta) / 1e6);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    free(e);
    return CUDA_SUCCESS;
}

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
    if (!cur())
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

static CUresult launch(CUfunction f, CUstream h, void **params, int ptsz, unsigned shmem)
{
    if (!f || (f->kind != F_NOP && f->kind != F_FAIL && !params))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *gs = resolve(h, ptsz);
    if (gs && gs->green && f->kind != F_FAIL)
        __atomic_add_fetch(&g_green_launches, 1, __ATOMIC_RELAXED);
    int max = __atomic_load_n(&f->max_smem, __ATOMIC_SEQ_CST);
    if (shmem > (unsigned)(max ? max : 48 * 1024))
        return CUDA_ERROR_INVALID_VALUE;
    switch (f->kind) {
    case F_SPIN:
        return enqueue(h, ptsz, (op){.kind = OP_SPIN, .us = *(unsigned *)params[0]});
    case F_INC:
        return enqueue(h, ptsz,
                       (op){.kind = OP_INC, .dst = (void *)(uintptr_t) * (CUdeviceptr *)params[0],
                            .n = *(unsigned *)params[1]});
    case F_NOP: { /* nothing before it: done at once, without the worker */
        struct CUstream_st *s = resolve(h, ptsz);
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
        return direct ? CUDA_SUCCESS : enqueue(h, ptsz, (op){.kind = OP_SPIN, .us = 0});
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
#define LK_UNUSED (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)extra
EXPORT CUresult cuLaunchKernel LK_PARAMS { LK_UNUSED; return launch(f, h, params, 0, shmem); }
EXPORT CUresult cuLaunchKernel_ptsz LK_PARAMS { LK_UNUSED; return launch(f, h, params, 1, shmem); }

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    (void)extra;
    return c ? launch(f, c->hStream, params, 0, c->sharedMemBytes) : CUDA_ERROR_INVALID_VALUE;
}
EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    (void)extra;
    return c ? launch(f, c->hStream, params, 1, c->sharedMemBytes) : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream h)
{
    return enqueue(h, 0, (op){.kind = OP_COPY, .dst = (void *)(uintptr_t)d, .src = s, .n = n});
}
EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *s, size_t n, CUstream h)
{
    return enqueue(h, 1, (op){.kind = OP_COPY, .dst = (void *)(uintptr_t)d, .src = s, .n = n});
}
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream h)
{
    return enqueue(h, 0, (op){.kind = OP_COPY, .dst = d, .src = (void *)(uintptr_t)s, .n = n});
}
EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *d, CUdeviceptr s, size_t n, CUstream h)
{
    return enqueue(h, 1, (op){.kind = OP_COPY, .dst = d, .src = (void *)(uintptr_t)s, .n = n});
}
EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream h)
{
    return enqueue(h, 0, (op){.kind = OP_SET32, .dst = (void *)(uintptr_t)d, .v = v, .n = n});
}
EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream h)
{
    return enqueue(h, 1, (op){.kind = OP_SET32, .dst = (void *)(uintptr_t)d, .v = v, .n = n});
}
EXPORT CUresult cuLaunchHostFunc(CUstream h, CUhostFn fn, void *data)
{
    return fn ? enqueue(h, 0, (op){.kind = OP_HOST, .fn = fn, .data = data}) : CUDA_ERROR_INVALID_VALUE;
}
EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream h, CUhostFn fn, void *data)
{
    return fn ? enqueue(h, 1, (op){.kind = OP_HOST, .fn = fn, .data = data}) : CUDA_ERROR_INVALID_VALUE;
}

/* ------------------------------------------------------------------ stream memory operations */

/* On an idle stream (head NULL: the worker finished everything before) the write happens at
 * once, without the worker or a lock: about the cost of the fake's cuEventRecord, so the
 * overhead test compares the interposer's two modes, not the fake's. */
static CUresult write_of(CUstream h, int ptsz, op o)
{
    struct CUstream_st *s = resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!o.dst || !g_memops)
        return CUDA_ERROR_INVALID_VALUE;
    if (s->capturing)
        return CUDA_SUCCESS;
    if (!__atomic_load_n(&s->head, __ATOMIC_ACQUIRE)) {
        run(&o);
        return CUDA_SUCCESS;
    }
    return enqueue(h, ptsz, o);
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
    struct CUstream_st *s = resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (s->capturing)
        return CUDA_SUCCESS;
    __atomic_add_fetch(&g_waits, 1, __ATOMIC_RELAXED);
    return enqueue(h, ptsz, (op){.kind = OP_WAIT32, .dst = (void *)(uintptr_t)a, .v = v});
}
EXPORT CUresult cuStreamWaitValue32_v2(CUstream h, CUdeviceptr a, unsigned v, unsigned f) { return wait_of(h, 0, a, v, f); }
EXPORT CUresult cuStreamWaitValue32_v2_ptsz(CUstream h, CUdeviceptr a, unsigned v, unsigned f) { return wait_of(h, 1, a, v, f); }
/* For tests: how many stream waits were queued in this process. */
EXPORT unsigned long long xq_fake_waits(void) { return __atomic_load_n(&g_waits, __ATOMIC_RELAXED); }

/* Device d's PCI location (above); 0 when FAKECUDA_PCI has no well-formed d-th entry. */
static int pci_of(CUdevice d, unsigned loc[3])
{
    const char *v = getenv("FAKECUDA_PCI");
    if (!v || !*v) {
        loc[0] = 0, loc[1] = 0x10 + (unsigned)d, loc[2] = 0;
        return 1;
    }
    for (int i = 0; i < d && v; i++)
        if ((v = strchr(v, ','))) v++;
    return v && sscanf(v, "%x:%x:%x", &loc[0], &loc[1], &loc[2]) == 3;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
    if (!v || d < 0 || d >= ndev())
        return CUDA_ERROR_INVALID_VALUE;
    if (attr == 50 || attr == 33 || attr == 34) { /* PCI_DOMAIN_ID, PCI_BUS_ID, PCI_DEVICE_ID */
        unsigned loc[3];
        if (!pci_of(d, loc))
            return CUDA_ERROR_INVALID_VALUE;
        *v = (int)loc[attr == 50 ? 0 : attr == 33 ? 1 : 2];
        return CUDA_SUCCESS;
    }
    if (attr == 16 || attr == 39) { /* MULTIPROCESSOR_COUNT, MAX_THREADS_PER_MULTIPROCESSOR */
        *v = attr == 16 ? g_sms : g_tps;
        return CUDA_SUCCESS;
    }
    if (attr != 92 && attr != 93 && attr != 122) /* CAN_USE_STREAM_MEM_OPS_V1, ..._64_BIT_..._V1, ..._64_BIT_... */
        return CUDA_ERROR_INVALID_VALUE;
    *v = g_memops;
    return CUDA_SUCCESS;
}

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
    struct CUstream_st *s = resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (s->capturing)
        return 401; /* CUDA_ERROR_ILLEGAL_STATE */
    s->capturing = 1;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamBeginCapture_v2(CUstream h, CUstreamCaptureMode m) { (void)m; return begin_of(h, 0); }
EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream h, CUstreamCaptureMode m) { (void)m; return begin_of(h, 1); }

static CUresult end_of(CUstream h, CUgraph *g, int ptsz)
{
    struct CUstream_st *s = resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!s->capturing)
        return 401;
    s->capturing = 0;
    if (g)
        *g = (CUgraph)&g_module; /* a non-NULL dummy */
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamEndCapture(CUstream h, CUgraph *g) { return end_of(h, g, 0); }
EXPORT CUresult cuStreamEndCapture_ptsz(CUstream h, CUgraph *g) { return end_of(h, g, 1); }

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
 * context's device. Here they run as any stream; they count their kernels. */
struct xq_fake_green {
    int dev, sms;
};
EXPORT CUresult cuDeviceGetDevResource(CUdevice d, void *res, int type)
{
    if (!res || d < 0 || d >= ndev() || type != 1)
        return CUDA_ERROR_INVALID_VALUE;
    memset(res, 0, 144);
    *(int *)res = 1;
    *(unsigned *)((char *)res + 96) = (unsigned)g_sms;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDevSmResourceSplitByCount(void *result, unsigned *groups, const void *in, void *rest, unsigned flags,
                                            unsigned min)
{
    if (!result || !groups || !*groups || !in || *(const int *)in != 1 || flags || !min || min % 8)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned have = *(const unsigned *)((const char *)in + 96);
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
    if (!g || !desc || d < 0 || d >= ndev())
        return CUDA_ERROR_INVALID_VALUE;
    if (!g_green)
        return 801; /* CUDA_ERROR_NOT_SUPPORTED */
    struct xq_fake_green *x = calloc(1, sizeof *x);
    x->dev = d, x->sms = (int)*(unsigned *)desc;
    *g = x;
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
    struct CUstream_st *s = stream_new(c, prio);
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
        return resolve(h, ptsz) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    return enqueue(h, ptsz, (op){.kind = OP_WAITEV, .on = on, .v64 = __atomic_load_n(&e->target, __ATOMIC_RELAXED)});
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
    P("cuCtxPushCurrent", cuCtxPushCurrent_v2, 0, 4000), P("cuCtxPopCurrent", cuCtxPopCurrent_v2, 0, 4000),
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
    P("cuMemsetD32Async", cuMemsetD32Async, cuMemsetD32Async_ptsz, 3020),
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
    P("cuStreamWaitEvent", cuStreamWaitEvent, cuStreamWaitEvent_ptsz, 3020),
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
    for (size_t i = 0; !found && i < sizeof g_procs / sizeof g_procs[0]; i++)
        if (!strcmp(sym, g_procs[i].name)) {
            found = 1;
            if (ver >= g_procs[i].minver)
                *pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && g_procs[i].ptsz
                           ? g_procs[i].ptsz
                           : g_procs[i].fn;
        }
    if (status)
        *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : found ? 2 /* VERSION_NOT_SUFFICIENT */
                                                             : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    return cuGetProcAddress_v2(sym, pfn, ver, flags, NULL);
}

/* ------------------------------------------------------------------ fork */

/* The child has no workers: it starts from a fresh driver (leaking the parent's objects),
 * and reopens the shared GPU's lock file (a flock belongs to the open file, shared after fork). */
static void fake_atfork_child(void)
{
    memset(g_primary, 0, sizeof g_primary);
    memset(t_ptds, 0, sizeof t_ptds);
    memset(t_stack, 0, sizeof t_stack);
    t_depth = 0;
    pthread_mutex_init(&g_mu, NULL);
    pthread_mutex_init(&g_gpu_mu, NULL);
    if (g_gpu_fd >= 0)
        close(g_gpu_fd);
    g_gpu_fd = -2;
}

__attribute__((constructor)) static void fake_init(void)
{
    const char *m = getenv("FAKECUDA_MEMOPS"), *e = getenv("FAKECUDA_EVENTS");
    g_memops = !(m && !strcmp(m, "0"));
    g_events = !(e && !strcmp(e, "0"));
    const char *tm = getenv("FAKECUDA_TIMING");
    g_timing = !(tm && !strcmp(tm, "0"));
    const char *c = getenv("FAKECUDA_CALL_US");
    g_call_us = c ? strtol(c, NULL, 10) : 0;
    const char *gr = getenv("FAKECUDA_GREEN"), *sm = getenv("FAKECUDA_SMS");
    g_green = !(gr && !strcmp(gr, "0"));
    if (sm && atoi(sm) > 0)
        g_sms = atoi(sm);
    const char *tp = getenv("FAKECUDA_TPS");
    if (tp && atoi(tp) > 0)
        g_tps = atoi(tp);
    pthread_atfork(NULL, NULL, fake_atfork_child);
}
