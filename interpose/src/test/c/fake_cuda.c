/* fake_cuda.c: the fake driver's core: the GPU, stream workers, devices, contexts, streams, events, knobs, fork. */
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
 * FAKECUDA_DEVICES sets the device count (default 1). A capture records the stream's commands into
 * a graph (cuStreamEndCapture); each launch of its instantiation (cuGraphLaunch) runs them in order
 * as one command of the stream it is launched on.
 * Stream memory operations: cuStreamWriteValue32_v2/64_v2 run in stream order on the worker (at
 * once when the stream is idle) and store to the host memory behind the "device pointer"
 * (cuMemHostRegister_v2/cuMemHostAlloc memory: the device pointer is the host address).
 * cuDeviceGetAttribute answers the memop attributes (92, 93, 122) with FAKECUDA_MEMOPS (default
 * 1; 0: unsupported), and the PCI ones (domain 50, bus 33, device 34): device d is at
 * 0000:(0x10 + d):00.0, or at the d-th entry of FAKECUDA_PCI (comma-separated DOMAIN:BUS:DEVICE in
 * hex, e.g. 0000:3b:00; what a container showing only some GPUs would see). FAKECUDA_EVENTS=0 makes cuEventRecord fail (CUDA_ERROR_NOT_SUPPORTED).
 * FAKECUDA_JOIN_FAIL=N: a wait on an event recorded on a green context's stream fails with N (4: the
 * driver shut down, as at a process's exit).
 * Devices have FAKECUDA_SMS multiprocessors (default 132) of FAKECUDA_TPS threads (default 2048); green contexts (cuGreenCtxCreate)
 * can be made unless FAKECUDA_GREEN=0, and count the kernels launched into their streams; a split
 * for thread clusters (flag 2) makes the counts asked, as the H200's driver did, unless
 * FAKECUDA_CLUSTER_SPLIT=0 (then refused, as before compute capability 9.0); FAKECUDA_SPLIT_LOG=1
 * says each split and its flags on stderr. cuOccupancyMaxActiveBlocksPerMultiprocessor: FAKECUDA_OCC_BLOCKS
 * blocks a multiprocessor (0: the call fails), else as many as FAKECUDA_TPS threads hold.
 * cuEventElapsedTime: an event's time is when its stream completed the work recorded before it
 * (or the record, if later); FAKECUDA_TIMING=0 makes it fail (CUDA_ERROR_NOT_SUPPORTED).
 * The library's units: this core, fake_cuda_launch.c (the work a stream is given), fake_cuda_entry.c
 * (green contexts, error strings, cuGetProcAddress), and fake_cuda_int.h between them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "fake_cuda_int.h"

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;     /* contexts */
static pthread_mutex_t g_gpu_mu = PTHREAD_MUTEX_INITIALIZER; /* the process's GPU */
static CUcontext g_primary[MAXDEV];
static int g_gpu_fd = -2; /* -2: not opened yet; -1: no shared GPU */
int g_memops = 1;             /* FAKECUDA_MEMOPS */
static int g_events = 1;      /* FAKECUDA_EVENTS */
int g_cluster_split = 1, g_split_log; /* FAKECUDA_CLUSTER_SPLIT=0, FAKECUDA_SPLIT_LOG=1 */
int g_green = 1, g_sms = 132; /* FAKECUDA_GREEN=0: no green contexts; FAKECUDA_SMS */
/* FAKECUDA_GREEN_SLOW: a narrowed spin kernel takes this many percent of what its share says (others'
 * work beside it on a real device: memory, caches); 100 by default */
int g_green_slow = 100;
int g_join_fail;
/* FAKECUDA_SLOW_EVERY=N, FAKECUDA_SLOW_US=T: every Nth spin kernel of the process runs T us longer
 * than asked (a command past its kind's estimate now and then); 0: none */
int g_slow_every, g_slow_us;
int g_tps = 2048;             /* FAKECUDA_TPS */
static int g_timing = 1;      /* FAKECUDA_TIMING=0: cuEventElapsedTime fails (not supported) */
static long g_call_us;        /* FAKECUDA_CALL_US: how long each enqueueing call takes its caller */

static __thread CUcontext t_stack[16]; /* t_stack[t_depth] is current */
static __thread int t_depth;
static __thread struct {
    CUcontext ctx;
    struct CUstream_st *s;
} t_ptds[MAXDEV];

int fk_ndev(void)
{
    const char *v = getenv("FAKECUDA_DEVICES");
    int n = v ? atoi(v) : 1;
    return n < 1 ? 1 : n > MAXDEV ? MAXDEV : n;
}

CUcontext fk_cur(void) { return t_stack[t_depth]; }

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

void fk_run(op *o)
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
    case OP_SET8:
        memset(o->dst, (int)(o->v & 0xff), o->n);
        break;
    case OP_SET16:
        for (size_t i = 0; i < o->n; i++)
            ((unsigned short *)o->dst)[i] = (unsigned short)o->v;
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
    case OP_GRAPH: /* a graph launched: its commands one after another, as one command of the stream */
        for (op *g = o->exec->head; g; g = g->next) fk_run(g);
        break;
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
        fk_run(o);
        pthread_mutex_lock(&s->mu);
        __atomic_store_n(&s->head, o->next, __ATOMIC_RELEASE); /* read without the lock by write_of */
        if (!s->head)
            s->tail = NULL;
        free(o->own);
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

struct CUstream_st *fk_stream_new(CUcontext ctx, int prio)
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
struct CUstream_st *fk_resolve(CUstream h, int ptsz)
{
    if (!h)
        h = ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    if (h != CU_STREAM_LEGACY && h != CU_STREAM_PER_THREAD)
        return h;
    CUcontext c = fk_cur();
    if (!c)
        return NULL;
    if (h == CU_STREAM_LEGACY) {
        pthread_mutex_lock(&g_mu);
        if (!c->legacy)
            c->legacy = fk_stream_new(c, 0);
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
        t_ptds[i].s = fk_stream_new(c, 0);
    }
    return t_ptds[i].s;
}

CUresult fk_enqueue(CUstream h, int ptsz, op o)
{
    struct CUstream_st *s = fk_resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (s->destroyed)
        return CUDA_ERROR_INVALID_HANDLE;
    if (s->capturing) { /* captured into the stream's graph, not run */
        op *c = malloc(sizeof *c);
        *c = o;
        c->next = NULL;
        if (s->cap->tail) s->cap->tail->next = c;
        else s->cap->head = c;
        s->cap->tail = c;
        return CUDA_SUCCESS;
    }
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
EXPORT CUresult cuDeviceGetCount(int *n) { return n ? (*n = fk_ndev(), CUDA_SUCCESS) : CUDA_ERROR_INVALID_VALUE; }

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!d || ordinal < 0 || ordinal >= fk_ndev())
        return CUDA_ERROR_INVALID_VALUE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    if (!name || len <= 0 || d < 0 || d >= fk_ndev())
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "XQ fake CUDA device %d", d);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d)
{
    if (!u || d < 0 || d >= fk_ndev())
        return CUDA_ERROR_INVALID_VALUE;
    memset(u->bytes, 0, 16);
    memcpy(u->bytes, "xqfake", 6);
    u->bytes[15] = (char)d;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d) { return cuDeviceGetUuid(u, d); }

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    if (!c || d < 0 || d >= fk_ndev())
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
EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice d) { return d >= 0 && d < fk_ndev() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { return cuDevicePrimaryCtxRelease(d); }

EXPORT CUresult cuCtxSetCurrent(CUcontext c) { t_stack[t_depth] = c; return CUDA_SUCCESS; }

/* a context of its own on device d, made current (pushed); never destroyed */
EXPORT CUresult cuCtxCreate_v2(CUcontext *c, unsigned flags, CUdevice d)
{
    (void)flags;
    if (!c || d < 0 || d >= fk_ndev() || t_depth == 15)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext x = calloc(1, sizeof(struct CUctx_st));
    if (!x)
        return CUDA_ERROR_INVALID_VALUE; /* out of memory */
    x->dev = d;
    pthread_mutex_init(&x->mu, NULL);
    t_stack[++t_depth] = *c = x;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetCurrent(CUcontext *c) { return c ? (*c = fk_cur(), CUDA_SUCCESS) : CUDA_ERROR_INVALID_VALUE; }

EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_cur())
        return CUDA_ERROR_INVALID_CONTEXT;
    *d = fk_cur()->dev;
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

/* CUDA 13's cuCtxSynchronize_v2 (cuGetProcAddress from version 13000): the context named, NULL the current one */
static CUresult ctx_sync(CUcontext c)
{
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&c->mu);
    struct CUstream_st *all = c->streams;
    pthread_mutex_unlock(&c->mu);
    for (struct CUstream_st *s = all; s; s = s->next) /* the list only grows at its head */
        wait_for(s, submitted(s));
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSynchronize(void) { return ctx_sync(fk_cur()); }
EXPORT CUresult cuCtxSynchronize_v2(CUcontext c) { return ctx_sync(c ? c : fk_cur()); }

/* ------------------------------------------------------------------ streams and events */

EXPORT CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int prio)
{
    (void)flags;
    if (!ph)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_cur())
        return CUDA_ERROR_INVALID_CONTEXT;
    *ph = fk_stream_new(fk_cur(), prio > 0 ? 0 : prio < -5 ? -5 : prio);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamCreate(CUstream *ph, unsigned int flags) { return cuStreamCreateWithPriority(ph, flags, 0); }

static CUresult prio_of(CUstream h, int ptsz, int *p)
{
    struct CUstream_st *s = fk_resolve(h, ptsz);
    if (!s || !p)
        return s ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_CONTEXT;
    *p = s->prio;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamGetPriority(CUstream h, int *p) { return prio_of(h, 0, p); }
EXPORT CUresult cuStreamGetPriority_ptsz(CUstream h, int *p) { return prio_of(h, 1, p); }

static CUresult ctx_of(CUstream h, int ptsz, CUcontext *c)
{
    struct CUstream_st *s = fk_resolve(h, ptsz);
    if (!s || !c)
        return s ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_CONTEXT;
    *c = s->ctx;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamGetCtx(CUstream h, CUcontext *c) { return ctx_of(h, 0, c); }
EXPORT CUresult cuStreamGetCtx_ptsz(CUstream h, CUcontext *c) { return ctx_of(h, 1, c); }

static CUresult sync_of(CUstream h, int ptsz)
{
    struct CUstream_st *s = fk_resolve(h, ptsz);
    if (!s)
        return CUDA_ERROR_INVALID_CONTEXT;
    wait_for(s, submitted(s));
    return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamSynchronize(CUstream h) { return sync_of(h, 0); }
EXPORT CUresult cuStreamSynchronize_ptsz(CUstream h) { return sync_of(h, 1); }

static CUresult query_of(CUstream h, int ptsz)
{
    struct CUstream_st *s = fk_resolve(h, ptsz);
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
    struct CUstream_st *s = fk_resolve(h, ptsz);
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
    if (!v || d < 0 || d >= fk_ndev())
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

/* Occupancy: FAKECUDA_OCC_BLOCKS blocks of any kernel fit a multiprocessor (a library's kernel,
 * held to one or two by its shared memory), else as many as its threads allow (at least one);
 * FAKECUDA_OCC_BLOCKS=0: the entry point fails (CUDA_ERROR_NOT_SUPPORTED). */
static int g_occ_blocks = -1; /* FAKECUDA_OCC_BLOCKS */
EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block, size_t shmem)
{
    (void)f, (void)shmem;
    if (!n || block <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (g_occ_blocks == 0)
        return 801; /* CUDA_ERROR_NOT_SUPPORTED */
    *n = g_occ_blocks > 0 ? g_occ_blocks : (g_tps / block > 0 ? g_tps / block : 1);
    return CUDA_SUCCESS;
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
    const char *cs = getenv("FAKECUDA_CLUSTER_SPLIT"), *sl = getenv("FAKECUDA_SPLIT_LOG");
    g_cluster_split = !(cs && !strcmp(cs, "0"));
    g_split_log = sl && !strcmp(sl, "1");
    const char *jf = getenv("FAKECUDA_JOIN_FAIL");
    if (jf && atoi(jf) > 0)
        g_join_fail = atoi(jf);
    const char *gs = getenv("FAKECUDA_GREEN_SLOW");
    if (gs && atoi(gs) >= 100)
        g_green_slow = atoi(gs);
    const char *se = getenv("FAKECUDA_SLOW_EVERY"), *su = getenv("FAKECUDA_SLOW_US");
    if (se && atoi(se) > 0 && su && atoi(su) > 0)
        g_slow_every = atoi(se), g_slow_us = atoi(su);
    const char *tp = getenv("FAKECUDA_TPS");
    if (tp && atoi(tp) > 0)
        g_tps = atoi(tp);
    const char *ob = getenv("FAKECUDA_OCC_BLOCKS");
    if (ob && *ob && atoi(ob) >= 0)
        g_occ_blocks = atoi(ob);
    pthread_atfork(NULL, NULL, fake_atfork_child);
}
