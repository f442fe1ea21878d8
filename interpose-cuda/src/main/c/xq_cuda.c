/*
 * libxq-cuda.so: makes every CUDA stream of an unmodified process a queue of the XQ node.
 * Specification: docs/processes.md. Loaded with LD_PRELOAD.
 *
 * The launching thread itself is held inside the launch call while its stream may not launch,
 * then makes the very call the application made (nothing is deferred or copied). After each
 * launch an event is recorded on the stream (or, with XQ_COMPLETION=memop, the stream writes a
 * sequence number into our memory); one tracker thread per process watches those to count
 * completions. One reader thread talks to the node. Counts live in a
 * process-local struct per stream (the truth) and are mirrored into the session's shared memory
 * while a node is attached, so a node restart loses nothing.
 *
 * Lock order: S.mu -> tab_mu -> xstream.mu -> S.send_mu (each optional).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"
#include "xq_shm.h"

#define XQ_EXPORT __attribute__((visibility("default")))
#define RING 64                      /* events per stream; when full the newest covers more */
#define WAIT_NS 100000000L           /* a held thread looks again after 100 ms at most */
#define WAKE_GAP_NS 10000ull         /* WAKE lines at most every 10 us: the node refuses over 200k/s */
#define RETRY_S 1                    /* reconnect period */
#define POLL_LIMIT_NS 20000ull       /* tracker: looks at a stream this often while launchers wait on a limit */
#define POLL_NS 100000ull            /* and this often otherwise */
#define MEMOP_LIMIT_NS 5000ull       /* the same for XQ_COMPLETION=memop streams (a look is a load) */
#define MEMOP_NS 50000ull
#define PARK_AFTER_NS 5000000ull     /* tracker: parks after this long with nothing in flight */
#define BUCKETS 256

#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)

/* ------------------------------------------------------------------ small helpers */

static int g_log = 1; /* XQ_LOG */

__attribute__((format(printf, 2, 3))) static void xlog(int level, const char *fmt, ...)
{
    if (g_log < level) return;
    char buf[600];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof buf - 2) n = sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, n); /* one write: lines of several threads do not interleave */
    (void)w;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void futex_wait(uint32_t *w, uint32_t val, long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    syscall(SYS_futex, w, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void futex_wake(uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0); }

static void sleep_ns(long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR) {
    }
}

static __thread pid_t t_tid;
static pid_t my_tid(void) { return t_tid ? t_tid : (t_tid = (pid_t)syscall(SYS_gettid)); }

/* Our own threads take no signals: the application's handlers run on its own threads. */
static void spawn(void *(*fn)(void *))
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&t, &a, fn, NULL);
    if (e) xlog(1, "xq: cannot start a thread: %s", strerror(e));
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ------------------------------------------------------------------ glibc's dlsym, the driver */

typedef void *(*dlsym_t)(void *, const char *);
static dlsym_t g_real_dlsym;

__attribute__((noinline)) static void *real_dlsym(void *h, const char *name)
{
    dlsym_t f = LD(&g_real_dlsym);
    if (!f) {
        f = (dlsym_t)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!f) f = (dlsym_t)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        if (!f) f = (dlsym_t)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17");
        if (!f) return NULL;
        ST(&g_real_dlsym, f);
    }
    void *r = f(h, name); /* not a tail call: glibc takes the caller (for RTLD_NEXT) from here */
    __asm__ volatile("" ::: "memory");
    return r;
}

/* The driver entry points the interposer calls itself (never wrapped ones). */
static struct {
    CUresult (*EventCreate)(CUevent *, unsigned int);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventQuery)(CUevent);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*CtxGetCurrent)(CUcontext *);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxGetDevice)(CUdevice *);
    CUresult (*CtxPush)(CUcontext);
    CUresult (*CtxPop)(CUcontext *);
    CUresult (*CtxGetStreamPriorityRange)(int *, int *);
    CUresult (*StreamGetPriority)(CUstream, int *);
    CUresult (*StreamGetCtx)(CUstream, CUcontext *);
    /* XQ_COMPLETION=memop only (optional: missing ones mean events) */
    CUresult (*WriteValue64)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
    CUresult (*HostRegister)(void *, size_t, unsigned int);
    CUresult (*HostUnregister)(void *);
    CUresult (*HostGetDevPtr)(CUdeviceptr *, void *, unsigned int);
    CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
} cu;
static int g_memop; /* XQ_COMPLETION=memop */
static int g_cu_state; /* 0 unresolved, 1 ready, -1 missing: run untracked */
static pthread_mutex_t cu_mu = PTHREAD_MUTEX_INITIALIZER;

/* hint: a real driver function; its library is libcuda even when it was loaded under another name. */
static int cu_ready(void *hint)
{
    int s = LD(&g_cu_state);
    if (s) return s > 0;
    pthread_mutex_lock(&cu_mu);
    if (!g_cu_state) {
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        struct link_map *lm = NULL;
        Dl_info di;
        if (!h && hint && dladdr1(hint, &di, (void **)&lm, RTLD_DL_LINKMAP) && lm)
            h = dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD);
        void *lib = h ? h : RTLD_NEXT;
#define CU(field, name) (*(void **)&cu.field = real_dlsym(lib, name))
        int ok = CU(EventCreate, "cuEventCreate") && CU(EventRecord, "cuEventRecord") &&
                 CU(EventQuery, "cuEventQuery") && CU(EventDestroy, "cuEventDestroy_v2") &&
                 CU(CtxGetCurrent, "cuCtxGetCurrent") && CU(CtxSetCurrent, "cuCtxSetCurrent") &&
                 CU(CtxGetDevice, "cuCtxGetDevice") && CU(CtxPush, "cuCtxPushCurrent_v2") &&
                 CU(CtxPop, "cuCtxPopCurrent_v2") &&
                 CU(CtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange") &&
                 CU(StreamGetPriority, "cuStreamGetPriority") && CU(StreamGetCtx, "cuStreamGetCtx");
        if (ok) { /* the v2 write: the v1 one needs NVreg_EnableStreamMemOPs=1 */
            CU(WriteValue64, "cuStreamWriteValue64_v2"), CU(HostRegister, "cuMemHostRegister_v2");
            CU(HostUnregister, "cuMemHostUnregister");
            CU(HostGetDevPtr, "cuMemHostGetDevicePointer_v2"), CU(DeviceGetAttribute, "cuDeviceGetAttribute");
        }
#undef CU
        const char *m = getenv("XQ_COMPLETION");
        g_memop = m && !strcmp(m, "memop");
        if (m && *m && !g_memop && strcmp(m, "event"))
            xlog(1, "xq: ignoring XQ_COMPLETION='%s': not event or memop", m);
        if (!ok) xlog(1, "xq: driver entry points missing; running unscheduled");
        ST(&g_cu_state, ok ? 1 : -1); /* the handle stays open: libcuda is never unloaded anyway */
    }
    pthread_mutex_unlock(&cu_mu);
    return g_cu_state > 0;
}

/* ------------------------------------------------------------------ streams */

enum { K_EXPLICIT, K_LEGACY, K_PTDS };

typedef struct ring_entry {
    CUevent ev;        /* created on first use, kept: the per-stream event pool */
    uint64_t seq;      /* memop: done once the stream's word reached it; 0: watch ev */
    uint64_t t_launch; /* launch of the first command it covers */
    uint32_t count;    /* commands it covers */
} ring_entry;

typedef struct xstream {
    struct xstream *next_all;  /* every struct ever made; the list only grows (tracker walks it) */
    struct xstream *next_hash; /* bucket chain, or the free list */
    struct xstream *next_ptds; /* this thread's per-thread default streams */
    CUstream h;                /* explicit handle; NULL for the default streams */
    CUcontext ctx;
    pid_t tid; /* K_PTDS: the owning thread */
    int kind, in_use, closing;
    pthread_mutex_t mu;
    int device, prio, least, greatest;
    char label[16];
    /* session: valid while gen == g_state */
    uint32_t gen;
    int slot;
    xq_slot *shm;
    /* the truth, under mu */
    uint32_t pending, in_flight, active, throttled, waiters, cseq;
    uint64_t launched, completed, failed, run_ns, estimate_ns, ready_since, last_done;
    uint32_t wseq;      /* futex word of the threads held on this stream */
    uint32_t wake_owed; /* a WAKE delayed by the pacing */
    uint32_t head, n;   /* ring: oldest entry, entries */
    uint64_t poll_at;   /* tracker only: when to look next */
    uint64_t polled;    /* tracker only: when it looked last */
    int cmode;          /* 1: memop (word; mseq: the last value enqueued), -1: memop failed, 0: events */
    struct cword *word;
    uint64_t mseq;
    ring_entry ring[RING];
} xstream;

static pthread_mutex_t tab_mu = PTHREAD_MUTEX_INITIALIZER;
static xstream *g_hash[BUCKETS], *g_free, *g_all;
static uint32_t g_tabgen = 1;   /* bumped when a stream is forgotten: thread caches go stale */
static uint32_t g_explicit_n;   /* label counter s<N> */
static uint32_t g_busy;         /* streams with events in their ring */
static uint32_t g_owed;         /* streams owing a WAKE */
static uint32_t g_closing;      /* destroyed streams not yet closed */
static uint32_t g_limit_waiters;
static uint32_t g_captures;     /* captures begun through the wrapped calls, not yet ended */
static uint32_t g_exiting;      /* exit() began: the driver is being torn down */
static uint32_t g_state;        /* odd: attached; bumped at every attach and detach */
static uint32_t g_tracker_word, g_tracker_parked, g_tracker_on;
static pthread_mutex_t query_mu = PTHREAD_MUTEX_INITIALIZER; /* tracker queries vs capture begin */
static pthread_key_t g_ptds_key;
static __thread xstream *t_ptds; /* this thread's per-thread default streams */

struct tcache {
    uint32_t tabgen;
    int kind;
    CUstream h;
    CUcontext ctx;
    xstream *st;
};
static __thread unsigned t_cache_next;
static __thread struct tcache t_cache[4];

/* Explicit streams are keyed by handle alone (ctx only says where their events go). */
static unsigned bucket(int kind, CUstream h, CUcontext ctx, pid_t tid)
{
    uintptr_t x = (uintptr_t)h ^ (kind == K_EXPLICIT ? 0 : (uintptr_t)ctx >> 4) ^ ((uintptr_t)tid * 2654435761u);
    return (unsigned)((x >> 4) ^ (x >> 12)) % BUCKETS;
}

/* A numeric CUDA_VISIBLE_DEVICES renumbers devices; the node wants physical ordinals. */
static int physical_device(int dev)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (!v || !*v) return dev;
    int i = 0;
    for (const char *p = v; *p;) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < 0 || (*end && *end != ',')) {
            xlog(2, "xq: CUDA_VISIBLE_DEVICES=%s is not numeric; device %d reported as is", v, dev);
            return dev;
        }
        if (i++ == dev) return (int)x;
        p = *end ? end + 1 : end;
    }
    return dev;
}

static void ptds_thread_exit(void *);
static void tracker_kick(void);

/* XQ_COMPLETION=memop: behind each launch the stream writes the next sequence number into a word
 * of page-locked host memory (cuStreamWriteValue64_v2), so the tracker sees completions with a
 * plain load: no driver call, hence no cost to the launching threads (an event query makes the
 * driver submit queued work, which is why events are only looked at every 20-100 us). A word is
 * a page of our own, registered for the stream's life in its context and never freed (a late
 * read still hits mapped memory) nor inherited by fork() (no copy-on-write under DMA). When the
 * stream is closed (every write landed) the page is unregistered and kept for the next stream,
 * which continues from the value in it. */
typedef struct cword {
    struct cword *next;
    uint64_t *host;
    CUdeviceptr dev;
} cword;
static cword *g_words; /* unregistered pages */
static pthread_mutex_t words_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t g_memop_logged;

/* Unregisters w (in ctx, when given) and keeps it for later. */
static void word_put(cword *w, CUcontext ctx)
{
    if (ctx) {
        CUcontext cur = NULL, tmp;
        cu.CtxGetCurrent(&cur);
        int pushed = cur != ctx && cu.CtxPush(ctx) == CUDA_SUCCESS;
        cu.HostUnregister(w->host); /* an error (a context already gone) leaves nothing to undo */
        if (pushed) cu.CtxPop(&tmp);
    }
    pthread_mutex_lock(&words_mu);
    w->next = g_words;
    g_words = w;
    pthread_mutex_unlock(&words_mu);
}

/* A word registered in the current context (dev's), or NULL and why not. */
static cword *word_get(CUdevice dev, const char **why)
{
    int can = 0;
    if (!cu.WriteValue64 || !cu.HostRegister || !cu.HostUnregister || !cu.HostGetDevPtr || !cu.DeviceGetAttribute) {
        *why = "the driver lacks cuStreamWriteValue64_v2 or cuMemHostRegister_v2";
        return NULL;
    }
    if (cu.DeviceGetAttribute(&can, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, dev) || !can) {
        *why = "the device has no 64-bit stream memory operations";
        return NULL;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    pthread_mutex_lock(&words_mu);
    cword *w = g_words;
    if (w) g_words = w->next;
    pthread_mutex_unlock(&words_mu);
    if (!w && (w = calloc(1, sizeof *w))) {
        void *p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) free(w), w = NULL;
        else madvise(p, pg, MADV_DONTFORK), w->host = p;
    }
    if (!w) *why = "out of memory";
    else if (cu.HostRegister(w->host, pg, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP))
        *why = "cuMemHostRegister_v2 failed", word_put(w, NULL);
    else if (cu.HostGetDevPtr(&w->dev, w->host, 0)) {
        *why = "cuMemHostGetDevicePointer_v2 failed";
        cu.HostUnregister(w->host);
        word_put(w, NULL);
    } else
        return w;
    return NULL;
}

static void memop_unavailable(xstream *st, const char *why)
{
    xlog(__atomic_exchange_n(&g_memop_logged, 1, __ATOMIC_SEQ_CST) ? 2 : 1,
         "xq: XQ_COMPLETION=memop unavailable for stream %s (%s); its completions are watched with events",
         st->label, why);
}

static xstream *stream_find_locked(int kind, CUstream h, CUcontext ctx, pid_t tid)
{
    for (xstream *s = g_hash[bucket(kind, h, ctx, tid)]; s; s = s->next_hash)
        if (s->kind == kind && s->h == h && (kind == K_EXPLICIT || s->ctx == ctx) && s->tid == tid) return s;
    return NULL;
}

static xstream *stream_new(int kind, CUstream h, CUcontext ctx, pid_t tid)
{
    /* identity first, outside the locks: these are driver calls */
    int dev = 0, prio = 0, least = 0, greatest = 0, pushed = 0;
    CUcontext cur = NULL, tmp;
    cu.CtxGetCurrent(&cur);
    if (ctx && ctx != cur) pushed = cu.CtxPush(ctx) == CUDA_SUCCESS;
    cu.CtxGetDevice(&dev);
    cu.CtxGetStreamPriorityRange(&least, &greatest);
    cu.StreamGetPriority(kind == K_EXPLICIT ? h : kind == K_PTDS ? CU_STREAM_PER_THREAD : NULL, &prio);
    const char *why = NULL;
    cword *w = g_memop ? word_get(dev, &why) : NULL; /* before the renumbering */
    if (pushed) cu.CtxPop(&tmp);
    dev = physical_device(dev);

    pthread_mutex_lock(&tab_mu);
    xstream *st = stream_find_locked(kind, h, ctx, tid);
    int fresh = !g_free;
    if (st || (fresh && !(st = calloc(1, sizeof *st)))) { /* made by another thread meanwhile, or no memory */
        pthread_mutex_unlock(&tab_mu);
        if (w) word_put(w, ctx ? ctx : cur);
        return st;
    }
    if (!fresh) {
        st = g_free;
        g_free = st->next_hash;
        xstream *keep = st->next_all;
        memset(st, 0, sizeof *st);
        st->next_all = keep;
    }
    pthread_mutex_init(&st->mu, NULL);
    st->kind = kind, st->h = h, st->ctx = ctx, st->tid = tid, st->slot = -1;
    st->device = dev, st->prio = prio, st->least = least, st->greatest = greatest;
    st->cmode = w ? 1 : g_memop ? -1 : 0, st->word = w;
    st->mseq = w ? LD(w->host) : 0;
    if (kind == K_EXPLICIT) snprintf(st->label, sizeof st->label, "s%u", ++g_explicit_n);
    else strcpy(st->label, kind == K_LEGACY ? "default" : "ptds");
    unsigned b = bucket(kind, h, ctx, tid);
    st->next_hash = g_hash[b];
    g_hash[b] = st;
    ST(&st->in_use, 1);
    if (fresh) {
        st->next_all = g_all;
        ST(&g_all, st); /* published after it is complete: the tracker walks without the lock */
    }
    pthread_mutex_unlock(&tab_mu);
    if (why) memop_unavailable(st, why);
    if (kind == K_PTDS) { /* forgotten when its thread exits */
        st->next_ptds = t_ptds;
        t_ptds = st;
        pthread_setspecific(g_ptds_key, (void *)1);
    }
    return st;
}

/* The stream's queue leaves the node once its work is seen done (the tracker sends CLOSE). */
static void stream_forget_locked(xstream *st)
{
    xstream **pp = &g_hash[bucket(st->kind, st->h, st->ctx, st->tid)];
    while (*pp && *pp != st) pp = &(*pp)->next_hash;
    if (!*pp) return;
    *pp = st->next_hash;
    st->next_hash = NULL;
    ADD(&g_tabgen, 1);
    ST(&st->closing, 1);
    ADD(&g_closing, 1);
}

static void stream_forget(CUstream h)
{
    pthread_mutex_lock(&tab_mu);
    xstream *st = stream_find_locked(K_EXPLICIT, h, NULL, 0);
    if (st) stream_forget_locked(st);
    pthread_mutex_unlock(&tab_mu);
    if (st) tracker_kick();
}

static void ptds_thread_exit(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&tab_mu);
    for (xstream *st = t_ptds; st; st = st->next_ptds) stream_forget_locked(st);
    pthread_mutex_unlock(&tab_mu);
    t_ptds = NULL;
    tracker_kick();
}

/* Stream key: explicit streams by handle; the legacy default stream per context; the
 * per-thread default stream per context and thread. A small per-thread cache keeps the
 * common case free of locks. */
static xstream *stream_get(CUstream h, int ptsz)
{
    int kind = h == NULL ? (ptsz ? K_PTDS : K_LEGACY)
               : h == CU_STREAM_LEGACY ? K_LEGACY
               : h == CU_STREAM_PER_THREAD ? K_PTDS
                                           : K_EXPLICIT;
    CUcontext ctx = NULL;
    if (kind != K_EXPLICIT) {
        if (cu.CtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) return NULL;
        h = NULL;
    }
    uint32_t tg = LD(&g_tabgen);
    struct tcache *c = t_cache;
    for (int i = 0; i < 4; i++)
        if (c[i].st && c[i].tabgen == tg && c[i].kind == kind && c[i].h == h &&
            (kind == K_EXPLICIT || c[i].ctx == ctx))
            return c[i].st;
    pid_t tid = kind == K_PTDS ? my_tid() : 0;
    pthread_mutex_lock(&tab_mu);
    xstream *st = stream_find_locked(kind, h, ctx, tid);
    pthread_mutex_unlock(&tab_mu);
    if (!st && kind == K_EXPLICIT && cu.StreamGetCtx(h, &ctx) != CUDA_SUCCESS)
        return NULL; /* not a valid stream: the launch will say so itself */
    if (!st) st = stream_new(kind, h, ctx, tid);
    if (st) c[t_cache_next++ % 4] = (struct tcache){tg, kind, h, kind == K_EXPLICIT ? NULL : ctx, st};
    return st;
}

/* ------------------------------------------------------------------ session with the node */

static struct {
    pthread_mutex_t mu, send_mu, start_mu;
    int fd;
    int started;       /* the first connect was tried and the reader runs */
    int ever_attached; /* for the line when a node appears */
    uint32_t nslots;
    uint8_t *base;     /* the session's mapping */
    uint8_t *used;     /* slot -> in use */
    xstream **owner;   /* slot -> stream */
    char path[PATH_MAX];
    char name[200];
    char prio[16];
    int no_slot_logged;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER, .send_mu = PTHREAD_MUTEX_INITIALIZER,
       .start_mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1};
static uint64_t g_last_wake;

__attribute__((format(printf, 1, 2))) static int send_line(const char *fmt, ...)
{
    char buf[XQ_MAX_LINE + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, XQ_MAX_LINE, fmt, ap); /* at most 511 characters, then '\n' */
    va_end(ap);
    if (n < 0) return -1;
    if (n > XQ_MAX_LINE - 1) n = XQ_MAX_LINE - 1;
    buf[n++] = '\n';
    int rc = 0;
    pthread_mutex_lock(&S.send_mu);
    if (S.fd < 0) rc = -1;
    for (int off = 0; rc == 0 && off < n;) {
        ssize_t w = send(S.fd, buf + off, n - off, MSG_NOSIGNAL);
        if (w > 0) off += (int)w;
        else if (w < 0 && errno == EINTR) continue;
        else {
            shutdown(S.fd, SHUT_RDWR); /* the reader sees the end and detaches */
            rc = -1;
        }
    }
    pthread_mutex_unlock(&S.send_mu);
    xlog(3, "xq: > %.*s", n - 1, buf);
    return rc;
}

/* Copies the truth into the slot. Caller holds st->mu. */
static void mirror(xstream *st)
{
    xq_slot *s = st->shm;
    if (!s || st->gen != LD(&g_state)) return;
    __atomic_store_n(&s->pending, st->pending, __ATOMIC_RELAXED);
    __atomic_store_n(&s->in_flight, st->in_flight, __ATOMIC_RELAXED);
    __atomic_store_n(&s->launched, st->launched, __ATOMIC_RELAXED);
    __atomic_store_n(&s->completed, st->completed, __ATOMIC_RELAXED);
    __atomic_store_n(&s->failed, st->failed, __ATOMIC_RELAXED);
    __atomic_store_n(&s->run_ns, st->run_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&s->estimate_ns, st->estimate_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&s->ready_since_ns, st->ready_since, __ATOMIC_RELAXED);
    __atomic_store_n(&s->completion_seq, st->cseq, __ATOMIC_RELEASE);
}

/* Gives st a slot of the current session and tells the node. Caller holds S.mu. */
static void register_locked(xstream *st)
{
    uint32_t gs = LD(&g_state);
    if (!(gs & 1) || st->gen == gs) return;
    uint32_t i = 0;
    while (i < S.nslots && S.used[i]) i++;
    pthread_mutex_lock(&st->mu);
    st->gen = gs;
    if (i == S.nslots) { /* more streams than slots: this one runs unscheduled */
        st->slot = -1, st->shm = NULL;
        pthread_mutex_unlock(&st->mu);
        if (!S.no_slot_logged++)
            xlog(1, "xq: all %u slots of the node are taken; stream %s runs unscheduled", S.nslots, st->label);
        return;
    }
    S.used[i] = 1, S.owner[i] = st;
    st->slot = (int)i;
    st->shm = (xq_slot *)(S.base + XQ_SHM_HEADER + (size_t)i * XQ_SLOT_SIZE);
    mirror(st);
    uint32_t active = st->active;
    pthread_mutex_unlock(&st->mu);
    send_line("STREAM %u %lx %d %d %d %d %s", i, (unsigned long)(uintptr_t)st->h, st->device, st->prio,
              st->least, st->greatest, st->label);
    if (active) send_line("WAKE %u", i);
}

static void register_stream(xstream *st)
{
    pthread_mutex_lock(&S.mu);
    register_locked(st);
    pthread_mutex_unlock(&S.mu);
}

/* Tells the node to decide; paced so that a process flipping busy/idle fast stays under the
 * node's line limit (a delayed WAKE is sent by the tracker, coalesced per stream). */
static void wake_node(xstream *st)
{
    uint64_t now = now_ns(), last = LD(&g_last_wake);
    if (now - last < WAKE_GAP_NS || !__atomic_compare_exchange_n(&g_last_wake, &last, now, 0,
                                                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        if (!__atomic_exchange_n(&st->wake_owed, 1, __ATOMIC_SEQ_CST)) {
            ADD(&g_owed, 1);
            tracker_kick();
        }
        return;
    }
    int slot = LD(&st->slot);
    if (LD(&st->gen) == LD(&g_state) && (LD(&g_state) & 1) && slot >= 0) send_line("WAKE %d", slot);
}

static void wake_held(xstream *st)
{
    ADD(&st->wseq, 1);
    if (LD(&st->waiters)) futex_wake(&st->wseq);
}

static void env_read(void)
{
    const char *v = getenv("XQ_SOCKET");
    if (v && *v) snprintf(S.path, sizeof S.path, "%s", v);
    else if ((v = getenv("XDG_RUNTIME_DIR")) && *v) snprintf(S.path, sizeof S.path, "%s/xq/node.sock", v);
    else if (geteuid() == 0) snprintf(S.path, sizeof S.path, "/run/xq/node.sock");
    else snprintf(S.path, sizeof S.path, "/tmp/xq-%u/node.sock", (unsigned)geteuid());

    char raw[PATH_MAX] = "";
    if ((v = getenv("XQ_NAME")) && *v) snprintf(raw, sizeof raw, "%s", v);
    else {
        ssize_t n = readlink("/proc/self/exe", raw, sizeof raw - 1);
        raw[n > 0 ? n : 0] = 0;
        const char *b = strrchr(raw, '/');
        memmove(raw, b ? b + 1 : raw, strlen(b ? b + 1 : raw) + 1);
        if (!*raw) snprintf(raw, sizeof raw, "%s", program_invocation_short_name);
    }
    size_t i = 0;
    for (; raw[i] && i < sizeof S.name - 1; i++) {
        char c = raw[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._:/+-", c);
        S.name[i] = ok ? c : '_';
    }
    S.name[i] = 0;
    if (!i) strcpy(S.name, "unknown");

    strcpy(S.prio, "-");
    if ((v = getenv("XQ_PRIORITY")) && *v) {
        char *end;
        errno = 0;
        long p = strtol(v, &end, 10);
        if (errno || *end || end == v || p < -1000 || p > 1000)
            xlog(1, "xq: ignoring XQ_PRIORITY='%s': not an integer in [-1000,1000]", v);
        else snprintf(S.prio, sizeof S.prio, "%ld", p);
    }
}

/* Reads one line (without '\n') within ms milliseconds. */
static int read_line(int fd, char *buf, size_t cap, int ms)
{
    size_t n = 0;
    uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
    while (n < cap - 1) {
        uint64_t t = now_ns();
        struct pollfd p = {fd, POLLIN, 0};
        if (t >= end || poll(&p, 1, (int)((end - t) / 1000000ull) + 1) <= 0) return -1;
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r <= 0) return -1;
        if (c == '\n') {
            buf[n] = 0;
            return 0;
        }
        buf[n++] = c;
    }
    return -1;
}

/* Connects, registers, maps the session's memory and registers every live stream. */
static int try_attach(char *why, size_t whylen)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(S.path) >= sizeof a.sun_path) {
        snprintf(why, whylen, "socket path too long");
        return 0;
    }
    strcpy(a.sun_path, S.path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        snprintf(why, whylen, "%s", strerror(errno));
        if (fd >= 0) close(fd);
        return 0;
    }
    char line[XQ_MAX_LINE + 1], shm_path[XQ_MAX_LINE];
    unsigned slots = 0, slot_size = 0;
    int n = snprintf(line, sizeof line, "HELLO 1 %d %s %s\n", (int)getpid(), S.name, S.prio);
    if (send(fd, line, n, MSG_NOSIGNAL) != n || read_line(fd, line, sizeof line, 2000)) {
        snprintf(why, whylen, "no answer to HELLO");
        goto fail;
    }
    if (strncmp(line, "OK ", 3) || sscanf(line + 3, "%511s %u %u", shm_path, &slots, &slot_size) != 3 ||
        slot_size != XQ_SLOT_SIZE || !slots || slots > 1000000) {
        snprintf(why, whylen, "refused: %.200s", line);
        goto fail;
    }
    size_t size = XQ_SHM_HEADER + (size_t)slots * XQ_SLOT_SIZE;
    int mfd = open(shm_path, O_RDWR | O_CLOEXEC);
    struct stat sb;
    void *base = MAP_FAILED;
    if (mfd >= 0 && !fstat(mfd, &sb) && (size_t)sb.st_size >= size)
        base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (mfd >= 0) close(mfd);
    if (base == MAP_FAILED) {
        snprintf(why, whylen, "cannot map %.200s", shm_path);
        goto fail;
    }
    const xq_shm_header *hd = base;
    if (hd->magic != XQ_SHM_MAGIC || hd->version != XQ_SHM_VERSION || hd->slots != slots) {
        snprintf(why, whylen, "bad shared memory header");
        munmap(base, size); /* nobody has seen it yet */
        goto fail;
    }
    if (send(fd, "MAPPED\n", 7, MSG_NOSIGNAL) != 7) {
        snprintf(why, whylen, "lost after HELLO");
        munmap(base, size);
        goto fail;
    }
    struct timeval tv = {1, 0}; /* a node that stops reading is taken for gone */
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);

    pthread_mutex_lock(&S.mu);
    S.used = calloc(slots, 1);
    S.owner = calloc(slots, sizeof *S.owner);
    if (!S.used || !S.owner) {
        pthread_mutex_unlock(&S.mu);
        snprintf(why, whylen, "out of memory");
        goto fail; /* the mapping stays: it costs little and nobody reads it */
    }
    S.base = base;
    S.nslots = slots, S.no_slot_logged = 0;
    pthread_mutex_lock(&S.send_mu);
    S.fd = fd;
    pthread_mutex_unlock(&S.send_mu);
    ADD(&g_state, 1); /* attached */
    for (xstream *st = LD(&g_all); st; st = st->next_all)
        if (LD(&st->in_use)) register_locked(st);
    pthread_mutex_unlock(&S.mu);
    xlog(2, "xq: registered with the node at %s: %u slots, memory %s", S.path, slots, shm_path);
    return 1;
fail:
    close(fd);
    return 0;
}

/* The node is gone: every held thread goes at once, the process runs unscheduled. */
static void detach(const char *why)
{
    pthread_mutex_lock(&S.mu);
    pthread_mutex_lock(&S.send_mu);
    close(S.fd);
    S.fd = -1;
    pthread_mutex_unlock(&S.send_mu);
    ADD(&g_state, 1); /* detached: every slot pointer is stale from now on */
    free(S.used), free(S.owner);
    S.used = NULL, S.owner = NULL, S.nslots = 0; /* the old mapping stays mapped: never munmap */
    pthread_mutex_unlock(&S.mu);
    for (xstream *st = LD(&g_all); st; st = st->next_all) wake_held(st);
    xlog(1, "xq: node at %s lost (%s); running unscheduled", S.path, why);
}

static void handle_line(char *line)
{
    unsigned slot;
    xlog(3, "xq: < %s", line);
    if (sscanf(line, "GATE %u", &slot) == 1) {
        pthread_mutex_lock(&S.mu);
        xstream *st = slot < S.nslots ? S.owner[slot] : NULL;
        if (st) {
            wake_held(st);
            if (LD(&st->waiters) && st->shm) { /* the documented futex words, for completeness */
                futex_wake(&st->shm->gate);
                futex_wake(&st->shm->completion_seq);
            }
        }
        pthread_mutex_unlock(&S.mu);
    } else if (!strncmp(line, "ERR", 3)) {
        xlog(1, "xq: node at %s: %s", S.path, line);
    }
    /* Q <slot> <handle>: for information only */
}

static void *reader_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "xq-reader");
    char buf[4 * XQ_MAX_LINE];
    size_t len = 0;
    for (;;) {
        if (S.fd < 0) { /* only this thread changes S.fd once it runs */
            sleep(RETRY_S);
            char why[256];
            if (try_attach(why, sizeof why)) {
                len = 0;
                xlog(1, "xq: node at %s %s; scheduled", S.path, S.ever_attached ? "is back" : "found");
                S.ever_attached = 1;
            }
            continue;
        }
        ssize_t r = read(S.fd, buf + len, sizeof buf - len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            detach(r == 0 ? "connection closed" : strerror(errno));
            continue;
        }
        len += (size_t)r;
        char *p = buf, *nl;
        while ((nl = memchr(p, '\n', len - (size_t)(p - buf)))) {
            *nl = 0;
            handle_line(p);
            p = nl + 1;
        }
        len -= (size_t)(p - buf);
        memmove(buf, p, len);
        if (len == sizeof buf) /* a line over the limit: the node broke the protocol */
            len = 0;
    }
    return NULL;
}

static void *tracker_main(void *);

/* Registered at the first gated call, after the CUDA runtime registered its own teardown, so
 * this runs before it: the tracker stops querying events of contexts about to be destroyed. */
static void at_exit(void)
{
    pthread_mutex_lock(&query_mu);
    ST(&g_exiting, 1);
    pthread_mutex_unlock(&query_mu);
}

/* First gated call of the process: connect (lazily: processes that never launch never
 * connect), start the reader, which also retries every second while there is no node. */
static void session_start(void)
{
    pthread_mutex_lock(&S.start_mu);
    if (!S.started) {
        env_read();
        char why[256];
        if (try_attach(why, sizeof why)) S.ever_attached = 1;
        else xlog(1, "xq: no node at %s (%s); running unscheduled", S.path, why);
        spawn(reader_main);
        static int exit_registered; /* once per process image: atexit survives fork */
        if (!exit_registered++) atexit(at_exit);
        ST(&S.started, 1);
    }
    pthread_mutex_unlock(&S.start_mu);
}

/* ------------------------------------------------------------------ the launch gate */

/* docs/processes.md "The launch gate": 0 = launch, 1 = held, 2 = wait on the limits. */
static int may_launch(xstream *st, const xq_slot *s)
{
    if (LD(&s->gate)) return 1;
    uint32_t thr = LD(&s->threshold), n = st->in_flight;
    if (thr && n >= thr) {
        st->throttled = 1;
        return 2;
    }
    if (st->throttled) {
        if (thr && (int64_t)n > (int64_t)thr - (int64_t)LD(&s->batch)) return 2;
        st->throttled = 0;
    }
    uint64_t win = LD(&s->window_us);
    if (!win || !n) return 0;
    if (!st->estimate_ns) return 2;
    return n < 2 || (uint64_t)(n + 1) * st->estimate_ns <= win * 1000 ? 0 : 2;
}

/* Accounts commands whose end was seen (or that will never be seen). Caller holds st->mu;
 * returns whether the node must hear (the stream went idle). */
static int account_done(xstream *st, uint32_t count, uint64_t run)
{
    st->completed += count;
    st->in_flight -= count;
    st->active -= count;
    st->run_ns += run;
    if (run) { /* 0: not measured (no event could be recorded) */
        int64_t x = (int64_t)(run / count), e = (int64_t)st->estimate_ns;
        e = e ? e + (x - e) / 4 : x;
        st->estimate_ns = e > 0 ? (uint64_t)e : 1;
    }
    st->cseq++;
    if (!st->active) {
        st->ready_since = 0;
        return 1;
    }
    return 0;
}

typedef struct gate {
    xstream *st;
    uint64_t t;
} gate;

/* Holds the calling thread while its stream may not launch; returns 0 for "pass through
 * untracked" (capture, no context, driver helpers missing). */
static int gate_enter(gate *g, CUstream h, int ptsz, void *hint)
{
    if (LD(&g_captures) || LD(&g_exiting) || !cu_ready(hint)) return 0;
    int saved_errno = errno; /* the application sees the driver's errno, not ours */
    xstream *st = stream_get(h, ptsz);
    if (!st) {
        errno = saved_errno;
        return 0;
    }
    if (!LD(&S.started)) session_start();
    if (!LD(&g_tracker_on) && !__atomic_exchange_n(&g_tracker_on, 1, __ATOMIC_SEQ_CST)) spawn(tracker_main);
    int waited = 0, wake = 0;
    pthread_mutex_lock(&st->mu);
    for (;;) {
        uint32_t gs = LD(&g_state);
        if ((gs & 1) && st->gen != gs) { /* first gated call in this session */
            pthread_mutex_unlock(&st->mu);
            register_stream(st);
            pthread_mutex_lock(&st->mu);
            continue;
        }
        if (LD(&g_captures)) { /* a capture began while we waited: pass through untouched */
            if (waited && (st->pending--, --st->active == 0)) st->ready_since = 0, wake = 1;
            mirror(st);
            pthread_mutex_unlock(&st->mu);
            if (wake) wake_node(st);
            errno = saved_errno;
            return 0;
        }
        int why = (gs & 1) && st->shm ? may_launch(st, st->shm) : 0;
        if (!why) break;
        if (!waited) {
            waited = 1;
            st->pending++;
            if (st->active++ == 0) st->ready_since = now_ns(), wake = 1;
            mirror(st);
        }
        uint32_t seq = st->wseq;
        st->waiters++;
        if (why == 2) ADD(&g_limit_waiters, 1);
        pthread_mutex_unlock(&st->mu);
        if (wake) wake_node(st), wake = 0;
        futex_wait(&st->wseq, seq, WAIT_NS);
        pthread_mutex_lock(&st->mu);
        st->waiters--;
        if (why == 2) ADD(&g_limit_waiters, -1);
    }
    if (waited) st->pending--, st->active--;
    st->in_flight++;
    g->t = now_ns();
    if (st->active++ == 0) st->ready_since = g->t, wake = 1;
    mirror(st);
    pthread_mutex_unlock(&st->mu);
    if (wake) wake_node(st);
    g->st = st;
    errno = saved_errno;
    return 1;
}

/* Marks on the stream the end of what was launched so far, as entry e: the next sequence number
 * written to the stream's word (memop), else an event. Caller holds st->mu; 0: neither worked. */
static int mark(xstream *st, ring_entry *e, CUstream rec)
{
    if (st->cmode > 0) {
        if (cu.WriteValue64(rec, st->word->dev, st->mseq + 1, 0) == CUDA_SUCCESS) {
            e->seq = ++st->mseq;
            return 1;
        }
        ST(&st->cmode, -1); /* entries already written stay valid: the word stays until the close */
        memop_unavailable(st, "cuStreamWriteValue64_v2 failed");
    }
    if (!e->ev) { /* events belong to the stream's context */
        CUcontext cur = NULL, tmp;
        cu.CtxGetCurrent(&cur);
        int pushed = cur != st->ctx && cu.CtxPush(st->ctx) == CUDA_SUCCESS;
        if (cu.EventCreate(&e->ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) e->ev = NULL;
        if (pushed) cu.CtxPop(&tmp);
    }
    if (!e->ev || cu.EventRecord(e->ev, rec) != CUDA_SUCCESS) return 0;
    e->seq = 0;
    return 1;
}

/* After a successful launch: a mark behind it, for the tracker. Caller holds st->mu;
 * returns whether the tracker must be kicked. */
static int push_event(xstream *st, uint64_t t, int *idle)
{
    CUstream rec = st->kind == K_EXPLICIT ? st->h : st->kind == K_PTDS ? CU_STREAM_PER_THREAD : NULL;
    if (st->n == RING) { /* full: the newest mark covers one more command */
        ring_entry *e = &st->ring[(st->head + RING - 1) % RING];
        if (mark(st, e, rec)) {
            e->count++;
            return 0;
        }
        *idle = account_done(st, 1, 0);
        return 0;
    }
    ring_entry *e = &st->ring[(st->head + st->n) % RING];
    if (!mark(st, e, rec)) {
        *idle = account_done(st, 1, 0); /* cannot watch it: take it as done */
        return 0;
    }
    e->t_launch = t, e->count = 1;
    if (st->n++ == 0) {
        ADD(&g_busy, 1);
        return 1;
    }
    return 0;
}

static void gate_exit(gate *g, CUresult r)
{
    xstream *st = g->st;
    int idle = 0, kick = 0, saved_errno = errno;
    pthread_mutex_lock(&st->mu);
    if (r != CUDA_SUCCESS) { /* nothing was launched */
        st->in_flight--, st->failed++;
        if (--st->active == 0) st->ready_since = 0, idle = 1;
    } else {
        st->launched++;
        kick = push_event(st, g->t, &idle);
    }
    mirror(st);
    int waiters = st->waiters;
    pthread_mutex_unlock(&st->mu);
    if (r != CUDA_SUCCESS && waiters)
        wake_held(st); /* the limits may allow one more now */
    if (idle) wake_node(st);
    if (kick) tracker_kick();
    errno = saved_errno;
}

/* ------------------------------------------------------------------ tracker thread */

static void tracker_kick(void)
{
    if (LD(&g_tracker_parked)) {
        ADD(&g_tracker_word, 1);
        futex_wake(&g_tracker_word);
    }
}

/* Whether the commands up to entry e are done: its sequence number reached the stream's word, or
 * its event is done (an error counts as ended). */
static int entry_done(const xstream *st, const ring_entry *e, CUcontext c, CUcontext *cur)
{
    if (e->seq) return LD(st->word->host) >= e->seq;
    if (c != *cur && cu.CtxSetCurrent(c) == CUDA_SUCCESS) *cur = c;
    return cu.EventQuery(e->ev) != CUDA_ERROR_NOT_READY;
}

/* Counts the finished commands of st; returns whether work is still in flight. The done ones
 * are found at once (marks end in stream order: a binary search over the ring) and accounted
 * as one batch, so the estimate is the batch's time per command, not one command carrying the
 * whole time since the last look. A stream is looked at every 20 us while launchers wait on a
 * limit, else every 100 us (an event query makes the driver submit queued work, which costs
 * launching threads); a memop stream every 5 us and 50 us (a look is a load). *next: the
 * earliest time a stream is due; *gap: the tracker's shortest nap. */
static int poll_stream(xstream *st, CUcontext *cur, uint64_t *next, uint64_t *gap)
{
    int urgent = LD(&g_limit_waiters) > 0, memop = LD(&st->cmode) > 0;
    uint64_t now = now_ns(), lim = memop ? MEMOP_LIMIT_NS : POLL_LIMIT_NS;
    if (memop && LD(&st->n)) *gap = MEMOP_LIMIT_NS;
    if (now < st->poll_at && !(urgent && now - st->polled >= lim)) {
        *next = st->poll_at < *next ? st->poll_at : *next;
        return LD(&st->n) != 0;
    }
    st->polled = now;
    st->poll_at = now + (urgent ? lim : memop ? MEMOP_NS : POLL_NS);
    *next = st->poll_at < *next ? st->poll_at : *next;
    pthread_mutex_lock(&st->mu);
    /* entries stay put while in the ring, except the newest of a full ring (re-recorded) */
    uint32_t n = st->n, head = st->head, m = n == RING ? n - 1 : n;
    CUcontext c = st->ctx;
    pthread_mutex_unlock(&st->mu);
    if (!n) return 0;
#define DONE(i) entry_done(st, &st->ring[(head + (i)) % RING], c, cur)
    if (!DONE(0)) return 1;
    uint32_t d = 0, u = m; /* entry d is done; entry u is not (or u == m) */
    if (m > 1 && !DONE(m - 1))
        for (u = m - 1; u - d > 1;) {
            uint32_t mid = (d + u) / 2;
            *(DONE(mid) ? &d : &u) = mid;
        }
    else
        d = m ? m - 1 : 0;
#undef DONE
    uint64_t t = now_ns();
    pthread_mutex_lock(&st->mu);
    uint32_t count = 0, take = d + 1;
    uint64_t from = st->ring[head].t_launch > st->last_done ? st->ring[head].t_launch : st->last_done;
    for (uint32_t i = 0; i < take; i++) count += st->ring[(head + i) % RING].count;
    st->head = (head + take) % RING;
    st->n -= take;
    st->last_done = t;
    int idle = account_done(st, count, t > from ? t - from : 0);
    if (!st->n) ADD(&g_busy, -1);
    mirror(st);
    int waiters = st->waiters, left = st->n != 0;
    xq_slot *s = st->gen == LD(&g_state) ? st->shm : NULL;
    pthread_mutex_unlock(&st->mu);
    if (waiters) {
        wake_held(st);
        if (s) futex_wake(&s->completion_seq);
    }
    if (idle) wake_node(st);
    return left;
}

/* A destroyed stream whose work is done: CLOSE, destroy its events, recycle the struct. */
static void close_stream(xstream *st)
{
    pthread_mutex_lock(&S.mu);
    pthread_mutex_lock(&st->mu);
    if (st->n || st->pending || st->in_flight) {
        pthread_mutex_unlock(&st->mu);
        pthread_mutex_unlock(&S.mu);
        return;
    }
    if (st->gen == LD(&g_state) && (st->gen & 1) && st->slot >= 0 && (uint32_t)st->slot < S.nslots) {
        send_line("CLOSE %d", st->slot);
        S.used[st->slot] = 0, S.owner[st->slot] = NULL;
    }
    st->slot = -1, st->shm = NULL;
    pthread_mutex_unlock(&st->mu);
    pthread_mutex_unlock(&S.mu);
    for (int i = 0; i < RING; i++)
        if (st->ring[i].ev) cu.EventDestroy(st->ring[i].ev);
    if (st->word) word_put(st->word, st->ctx); /* every write to it landed: nothing is in flight */
    if (__atomic_exchange_n(&st->wake_owed, 0, __ATOMIC_SEQ_CST)) ADD(&g_owed, -1);
    pthread_mutex_lock(&tab_mu);
    ST(&st->in_use, 0);
    st->closing = 0;
    st->next_hash = g_free;
    g_free = st;
    pthread_mutex_unlock(&tab_mu);
    ADD(&g_closing, -1);
}

static void *tracker_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "xq-tracker");
    prctl(PR_SET_TIMERSLACK, 1000UL); /* its 20 us (memop: 5 us) naps must stay near that */
    CUcontext cur = NULL;
    uint64_t idle_since = 0;
    for (;;) {
        int busy = 0;
        uint64_t next = now_ns() + POLL_NS, gap = POLL_LIMIT_NS;
        pthread_mutex_lock(&query_mu);
        if (LD(&g_exiting)) { /* the driver goes away: query nothing more */
            pthread_mutex_unlock(&query_mu);
            return NULL;
        }
        if (LD(&g_captures)) /* an event query could invalidate a global-mode capture */
            busy = 1;
        else
            for (xstream *st = LD(&g_all); st; st = st->next_all)
                if (LD(&st->in_use)) busy |= poll_stream(st, &cur, &next, &gap);
        pthread_mutex_unlock(&query_mu);
        for (xstream *st = LD(&g_all); st && (LD(&g_owed) || LD(&g_closing)); st = st->next_all) {
            if (!LD(&st->in_use)) continue;
            if (LD(&st->wake_owed)) {
                uint64_t now = now_ns(), last = LD(&g_last_wake);
                if (now - last >= WAKE_GAP_NS && __atomic_exchange_n(&st->wake_owed, 0, __ATOMIC_SEQ_CST)) {
                    ADD(&g_owed, -1);
                    ST(&g_last_wake, now);
                    int slot = LD(&st->slot);
                    if (LD(&st->gen) == LD(&g_state) && (LD(&g_state) & 1) && slot >= 0)
                        send_line("WAKE %d", slot);
                }
            }
            if (LD(&st->closing)) close_stream(st);
        }
        uint64_t now = now_ns();
        if (busy || LD(&g_owed) || !idle_since || now - idle_since < PARK_AFTER_NS) {
            idle_since = busy || LD(&g_owed) ? 0 : idle_since ? idle_since : now;
            uint64_t until = LD(&g_limit_waiters) || LD(&g_owed) ? now + gap : next;
            sleep_ns(until > now + gap ? (long)(until - now) : (long)gap);
            continue;
        }
        idle_since = 0;
        /* nothing in flight for a while: park until a launch kicks */
        uint32_t w = LD(&g_tracker_word);
        ST(&g_tracker_parked, 1);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!LD(&g_busy) && !LD(&g_owed) && !LD(&g_closing)) futex_wait(&g_tracker_word, w, 1000000000L);
        ST(&g_tracker_parked, 0);
    }
    return NULL;
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

/* Counted before the real begin (a launch racing it passes through, harmlessly) and under
 * query_mu (the tracker is not querying events at that moment). */
static void capture_pre(void)
{
    pthread_mutex_lock(&query_mu);
    ADD(&g_captures, 1);
    pthread_mutex_unlock(&query_mu);
    for (xstream *st = LD(&g_all); st; st = st->next_all) /* held threads go, untouched */
        wake_held(st);
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
        ADD(&g_captures, -1);
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
            ADD(&g_captures, -1);
            break;
        }
    pthread_mutex_unlock(&cap_mu);
}

/* ------------------------------------------------------------------ wrapped entry points */

/* Every wrapped name has four wrappers: the exported symbol and its _ptsz twin (programs that
 * link libcuda, or dlsym it), and two handed out by cuGetProcAddress (legacy, per-thread).
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
    wslot s[4]; /* export, export _ptsz, proc address legacy, proc address per-thread */
} wdef;

enum {
    W_LAUNCH, W_LAUNCH_EX, W_COOP, W_HOSTFN, W_GRAPH, W_MEMCPY, W_HTOD, W_DTOH, W_DTOD, W_2D,
    W_3D, W_PEER, W_SET8, W_SET16, W_SET32, W_2DSET8, W_2DSET16, W_2DSET32, W_CAP, W_CAP_GRAPH,
    W_CAP_END, W_DESTROY, W_COUNT
};
static wdef W[W_COUNT];

static int is_ours(void *p);

/* The driver's definition of an exported name: the next one after us, or, when libcuda is not
 * in the global scope (a library linking it was dlopened RTLD_LOCAL, as Python loads
 * extensions), libcuda's own. */
static void *driver_sym(const char *name)
{
    void *r = real_dlsym(RTLD_NEXT, name);
    if (!r || is_ours(r)) {
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        r = h ? real_dlsym(h, name) : NULL;
        if (h) dlclose(h);
    }
    return r && !is_ours(r) ? r : NULL;
}

static void *real_of(wdef *d, int k)
{
    void *r = LD(&d->s[k].real);
    if (r || k >= 2) return r;
    char nm[80]; /* a direct call before any dlsym */
    snprintf(nm, sizeof nm, "%s%s", d->sym, k ? "_ptsz" : "");
    r = driver_sym(nm);
    void *none = NULL;
    if (r) __atomic_compare_exchange_n(&d->s[k].real, &none, r, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return LD(&d->s[k].real);
}

#define BODY(ID, K, PT, ARGS, STREAM)                                                               \
    {                                                                                               \
        typedef CUresult(*fn_t) PT;                                                                 \
        fn_t real_ = (fn_t)real_of(&W[ID], K);                                                       \
        if (!real_)                                                                                  \
            return CUDA_ERROR_NOT_INITIALIZED;                                                      \
        gate g_;                                                                                     \
        if (!gate_enter(&g_, (STREAM), (K) & 1, (void *)real_))                                       \
            return real_ ARGS;                                                                       \
        CUresult r_ = real_ ARGS;                                                                     \
        gate_exit(&g_, r_);                                                                           \
        return r_;                                                                                   \
    }
#define GATED(ID, NAME, PT, ARGS, STREAM)                                                           \
    XQ_EXPORT CUresult NAME PT BODY(ID, 0, PT, ARGS, STREAM)                                        \
    XQ_EXPORT CUresult NAME##_ptsz PT BODY(ID, 1, PT, ARGS, STREAM)                                 \
    static CUresult NAME##_gpa PT BODY(ID, 2, PT, ARGS, STREAM)                                     \
    static CUresult NAME##_gpa_ptsz PT BODY(ID, 3, PT, ARGS, STREAM)

/* Not gated: PRE and POST run around the real call (r: its result, ptsz: the variant). */
#define HBODY(ID, K, PT, ARGS, PRE, POST)                                                           \
    {                                                                                               \
        typedef CUresult(*fn_t) PT;                                                                 \
        fn_t real_ = (fn_t)real_of(&W[ID], K);                                                       \
        if (!real_)                                                                                  \
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

GATED(W_LAUNCH, cuLaunchKernel,
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
       unsigned shmem, CUstream hStream, void **params, void **extra),
      (f, gx, gy, gz, bx, by, bz, shmem, hStream, params, extra), hStream)
GATED(W_LAUNCH_EX, cuLaunchKernelEx, (const CUlaunchConfig *config, CUfunction f, void **params, void **extra),
      (config, f, params, extra), config ? config->hStream : NULL)
GATED(W_COOP, cuLaunchCooperativeKernel,
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
       unsigned shmem, CUstream hStream, void **params),
      (f, gx, gy, gz, bx, by, bz, shmem, hStream, params), hStream)
GATED(W_HOSTFN, cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *data), (hStream, fn, data), hStream)
GATED(W_GRAPH, cuGraphLaunch, (CUgraphExec g, CUstream hStream), (g, hStream), hStream)
GATED(W_MEMCPY, cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream),
      (dst, src, n, hStream), hStream)
GATED(W_HTOD, cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void *src, size_t n, CUstream hStream),
      (dst, src, n, hStream), hStream)
GATED(W_DTOH, cuMemcpyDtoHAsync_v2, (void *dst, CUdeviceptr src, size_t n, CUstream hStream),
      (dst, src, n, hStream), hStream)
GATED(W_DTOD, cuMemcpyDtoDAsync_v2, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream),
      (dst, src, n, hStream), hStream)
GATED(W_2D, cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *p, CUstream hStream), (p, hStream), hStream)
GATED(W_3D, cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *p, CUstream hStream), (p, hStream), hStream)
GATED(W_PEER, cuMemcpyPeerAsync,
      (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream hStream),
      (dst, dctx, src, sctx, n, hStream), hStream)
GATED(W_SET8, cuMemsetD8Async, (CUdeviceptr d, unsigned char v, size_t n, CUstream hStream), (d, v, n, hStream),
      hStream)
GATED(W_SET16, cuMemsetD16Async, (CUdeviceptr d, unsigned short v, size_t n, CUstream hStream),
      (d, v, n, hStream), hStream)
GATED(W_SET32, cuMemsetD32Async, (CUdeviceptr d, unsigned int v, size_t n, CUstream hStream), (d, v, n, hStream),
      hStream)
GATED(W_2DSET8, cuMemsetD2D8Async,
      (CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h, CUstream hStream),
      (d, pitch, v, w, h, hStream), hStream)
GATED(W_2DSET16, cuMemsetD2D16Async,
      (CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h, CUstream hStream),
      (d, pitch, v, w, h, hStream), hStream)
GATED(W_2DSET32, cuMemsetD2D32Async,
      (CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h, CUstream hStream),
      (d, pitch, v, w, h, hStream), hStream)
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
       if (hStream && hStream != CU_STREAM_LEGACY && hStream != CU_STREAM_PER_THREAD &&
           LD(&g_cu_state) > 0) stream_forget(hStream),
       (void)0)

#define DEF(ID, BASE, NAME, MINVER, PTSZ)                                                           \
    [ID] = {BASE, #NAME, MINVER, PTSZ,                                                              \
            {{(void *)NAME, 0}, {(void *)NAME##_ptsz, 0}, {(void *)NAME##_gpa, 0}, {(void *)NAME##_gpa_ptsz, 0}}}
/* Minimum versions: cuGetProcAddress hands older ABIs (32-bit pointers, v1 capture) below them. */
static wdef W[W_COUNT] = {
    DEF(W_LAUNCH, "cuLaunchKernel", cuLaunchKernel, 4000, 1),
    DEF(W_LAUNCH_EX, "cuLaunchKernelEx", cuLaunchKernelEx, 11060, 1),
    DEF(W_COOP, "cuLaunchCooperativeKernel", cuLaunchCooperativeKernel, 9000, 1),
    DEF(W_HOSTFN, "cuLaunchHostFunc", cuLaunchHostFunc, 10000, 1),
    DEF(W_GRAPH, "cuGraphLaunch", cuGraphLaunch, 10000, 1),
    DEF(W_MEMCPY, "cuMemcpyAsync", cuMemcpyAsync, 4000, 1),
    DEF(W_HTOD, "cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2, 3020, 1),
    DEF(W_DTOH, "cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2, 3020, 1),
    DEF(W_DTOD, "cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2, 3020, 1),
    DEF(W_2D, "cuMemcpy2DAsync", cuMemcpy2DAsync_v2, 3020, 1),
    DEF(W_3D, "cuMemcpy3DAsync", cuMemcpy3DAsync_v2, 3020, 1),
    DEF(W_PEER, "cuMemcpyPeerAsync", cuMemcpyPeerAsync, 4000, 1),
    DEF(W_SET8, "cuMemsetD8Async", cuMemsetD8Async, 3020, 1),
    DEF(W_SET16, "cuMemsetD16Async", cuMemsetD16Async, 3020, 1),
    DEF(W_SET32, "cuMemsetD32Async", cuMemsetD32Async, 3020, 1),
    DEF(W_2DSET8, "cuMemsetD2D8Async", cuMemsetD2D8Async, 3020, 1),
    DEF(W_2DSET16, "cuMemsetD2D16Async", cuMemsetD2D16Async, 3020, 1),
    DEF(W_2DSET32, "cuMemsetD2D32Async", cuMemsetD2D32Async, 3020, 1),
    DEF(W_CAP, "cuStreamBeginCapture", cuStreamBeginCapture_v2, 10010, 1),
    DEF(W_CAP_GRAPH, "cuStreamBeginCaptureToGraph", cuStreamBeginCaptureToGraph, 12030, 1),
    DEF(W_CAP_END, "cuStreamEndCapture", cuStreamEndCapture, 10000, 1),
    DEF(W_DESTROY, "cuStreamDestroy", cuStreamDestroy_v2, 4000, 0),
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
    if (p == G1x.fn || p == G1a.fn || p == G2x.fn || p == G2a.fn || p == (void *)dlsym) return 1;
    for (int i = 0; i < W_COUNT; i++)
        for (int k = 0; k < 4; k++)
            if (W[i].s[k].fn == p) return 1;
    return 0;
}

/* Binds a wrapper to the real pointer it stands for; a second, different real pointer for the
 * same wrapper is handed back unwrapped (runs unscheduled rather than wrongly). */
static void *adopt(wslot *w, void *real, const char *name)
{
    if (!real || is_ours(real)) return real;
    void *none = NULL;
    if (__atomic_compare_exchange_n(&w->real, &none, real, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) ||
        none == real)
        return w->fn;
    xlog(2, "xq: %s: another driver entry point than before (%p, not %p); handed back unwrapped", name, real,
         none);
    return real;
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
        p = h ? real_dlsym(h, nm) : NULL;
        if (h) dlclose(h);
        ST(&cache[i], p ? p : (void *)-1);
    }
    return p == (void *)-1 ? NULL : p;
}

static CUresult gpa_after(CUresult r, const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    if (r != CUDA_SUCCESS || !sym || !pfn || !*pfn) return r;
    if (!strcmp(sym, "cuGetProcAddress")) {
        *pfn = adopt(ver >= 12000 ? &G2a : &G1a, *pfn, sym);
        return r;
    }
    for (wdef *d = W; d < W + W_COUNT; d++) {
        if (strcmp(sym, d->base)) continue;
        if (ver < d->minver) /* an older ABI than the wrapper's: unscheduled rather than wrong */
            return r;
        int ptsz = d->has_ptsz && ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ||
                                   *pfn == ptsz_export(d));
        *pfn = adopt(&d->s[2 + ptsz], *pfn, sym);
        return r;
    }
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

/* RTLD_NEXT means "after the caller", and glibc finds the caller by return address, which
 * would be us: search the objects after the caller's ourselves. */
static void *next_after(void *caller, const char *name)
{
    Dl_info di;
    struct link_map *lm = NULL;
    if (!dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm) return real_dlsym(RTLD_NEXT, name);
    for (struct link_map *l = lm->l_next; l; l = l->l_next) {
        void *r = real_dlsym(l, name);
        if (r) return r;
    }
    return NULL;
}

/* The runtime dlopens libcuda and asks that handle for cuGetProcAddress_v2: a handle lookup
 * never finds a preloaded export, so dlsym itself answers wrapped names with their wrappers. */
XQ_EXPORT void *dlsym(void *handle, const char *name)
{
    void *r = handle == RTLD_NEXT ? next_after(__builtin_return_address(0), name) : real_dlsym(handle, name);
    if (!r || name[0] != 'c' || name[1] != 'u') return r;
    if (!strcmp(name, "cuGetProcAddress")) return adopt(&G1x, r, name);
    if (!strcmp(name, "cuGetProcAddress_v2")) return adopt(&G2x, r, name);
    for (wdef *d = W; d < W + W_COUNT; d++) {
        size_t n = strlen(d->sym);
        if (strncmp(name, d->sym, n)) continue;
        if (!name[n]) return adopt(&d->s[0], r, name);
        if (d->has_ptsz && !strcmp(name + n, "_ptsz")) return adopt(&d->s[1], r, name);
    }
    return r;
}

/* ------------------------------------------------------------------ process life */

/* fork(): the child has none of our threads and must not speak for the parent's session. It
 * starts from nothing and registers on its own if it launches. */
static void atfork_child(void)
{
    if (S.fd >= 0) close(S.fd);
    S.fd = -1, S.started = 0, S.ever_attached = 0, S.used = NULL, S.owner = NULL, S.nslots = 0;
    pthread_mutex_init(&S.mu, NULL);
    pthread_mutex_init(&S.send_mu, NULL);
    pthread_mutex_init(&S.start_mu, NULL);
    pthread_mutex_init(&tab_mu, NULL);
    pthread_mutex_init(&cap_mu, NULL);
    pthread_mutex_init(&query_mu, NULL);
    pthread_mutex_init(&cu_mu, NULL);
    g_state = (g_state | 1) + 1; /* detached, and no stream's gen matches */
    memset(g_hash, 0, sizeof g_hash); /* the parent's streams are not the child's: leak them */
    g_free = NULL, g_all = NULL, t_ptds = NULL;
    g_words = NULL; /* the parent's registrations (its pages are not even mapped here: MADV_DONTFORK) */
    pthread_mutex_init(&words_mu, NULL);
    g_tabgen++;
    g_busy = g_owed = g_closing = g_limit_waiters = g_captures = 0;
    g_capn = 0;
    g_tracker_on = g_tracker_parked = 0;
    t_tid = 0;
}

__attribute__((constructor)) static void xq_init(void)
{
    const char *v = getenv("XQ_LOG");
    if (v && *v >= '0' && *v <= '9') g_log = atoi(v);
    pthread_key_create(&g_ptds_key, ptds_thread_exit);
    pthread_atfork(NULL, NULL, atfork_child);
}
