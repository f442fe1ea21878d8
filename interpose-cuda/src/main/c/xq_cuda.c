/*
 * libxq-cuda.so: makes every CUDA stream of an unmodified process a queue of the XQ node.
 * Specification: docs/processes.md. Loaded with LD_PRELOAD.
 *
 * With XQ_DEFER=1, a launch its stream may not make now is deferred: kernel launches (of a function that launched
 * before), graph launches and memsets reaching us through cuGetProcAddress are copied into the
 * stream's host queue and the call returns at once; the tracker (or the next caller) makes them,
 * in order, when the stream may launch. Every other driver entry point handed out is a small
 * trampoline that first waits until nothing is deferred, so whatever can see or order a stream's
 * work (synchronize, events, copies, frees) sees it as if it had been launched. Launches that
 * cannot be deferred, and all launches without XQ_DEFER=1, hold the launching thread instead. After each
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
#include "xq_wire.h"

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

/* xlog, now_ns: xq_wire.h */

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
    CUresult (*StreamQuery)(CUstream); /* sparse marks: a quiet stream's unmarked launches */
    /* deferral (optional: missing ones mean kernels are never deferred) */
    CUresult (*FuncGetParamInfo)(void *, size_t, size_t *, size_t *);
    CUresult (*KernelGetParamInfo)(void *, size_t, size_t *, size_t *);
    CUresult (*KernelGetFunction)(CUfunction *, void *); /* cuKernelSetAttribute: whose launches it can see */
    CUresult (*EventElapsed)(float *, CUevent, CUevent); /* timed samples (optional: missing means batch estimates) */
    CUresult (*WaitValue32)(CUstream, CUdeviceptr, unsigned int, unsigned int); /* XQ_STALL=1 (optional) */
    CUresult (*WaitValue32Ptsz)(CUstream, CUdeviceptr, unsigned int, unsigned int);
    /* narrowing (optional: missing ones mean the process is never narrowed; CUDA 12.4+). The
     * resource structures are passed as opaque buffers (below), never read but for a log line. */
    CUresult (*GetDevResource)(CUdevice, void *, int);
    CUresult (*SplitByCount)(void *, unsigned *, const void *, void *, unsigned, unsigned);
    CUresult (*GenerateDesc)(void **, void *, unsigned);
    CUresult (*GreenCreate)(void **, void *, CUdevice, unsigned);
    CUresult (*GreenStream)(CUstream *, void *, unsigned, int);
    CUresult (*WaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*StreamSync)(CUstream);
} cu;
static int g_stall; /* XQ_STALL=1: level 2, launched work of a held stream stalls on the device (below) */
static int g_timed; /* XQ_ESTIMATES=timed (the default): kinds learn from timing events around samples */
static int g_memop; /* XQ_COMPLETION=memop */
static int g_marks_all; /* XQ_MARKS=all: a memop mark behind every launch, not sparse ones */
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
            CU(StreamQuery, "cuStreamQuery");
            CU(FuncGetParamInfo, "cuFuncGetParamInfo"), CU(KernelGetParamInfo, "cuKernelGetParamInfo");
            CU(KernelGetFunction, "cuKernelGetFunction");
            if (!CU(EventElapsed, "cuEventElapsedTime_v2")) CU(EventElapsed, "cuEventElapsedTime");
            CU(WaitValue32, "cuStreamWaitValue32_v2"), CU(WaitValue32Ptsz, "cuStreamWaitValue32_v2_ptsz");
            CU(GetDevResource, "cuDeviceGetDevResource"), CU(SplitByCount, "cuDevSmResourceSplitByCount");
            CU(GenerateDesc, "cuDevResourceGenerateDesc"), CU(GreenCreate, "cuGreenCtxCreate");
            CU(GreenStream, "cuGreenCtxStreamCreate"), CU(WaitEvent, "cuStreamWaitEvent");
            CU(StreamSync, "cuStreamSynchronize");
        }
#undef CU
        const char *sv = getenv("XQ_STALL"); /* off unless XQ_STALL=1 */
        g_stall = sv && !strcmp(sv, "1") && cu.WaitValue32 && cu.WaitValue32Ptsz && cu.HostRegister && cu.HostGetDevPtr;
        if (sv && *sv && strcmp(sv, "0") && strcmp(sv, "1"))
            xlog(1, "xq: ignoring XQ_STALL='%s': not 0 or 1", sv);
        else if (sv && !strcmp(sv, "1") && !g_stall)
            xlog(1, "xq: XQ_STALL=1 unavailable: the driver lacks cuStreamWaitValue32_v2 or cuMemHostRegister_v2");
        const char *m = getenv("XQ_COMPLETION"); /* memop unless XQ_COMPLETION=event */
        g_memop = !m || !*m || !strcmp(m, "memop");
        if (m && *m && !g_memop && strcmp(m, "event"))
            xlog(1, "xq: ignoring XQ_COMPLETION='%s': not event or memop", m);
        const char *k = getenv("XQ_MARKS"); /* sparse unless XQ_MARKS=all */
        g_marks_all = k && !strcmp(k, "all");
        if (k && *k && !g_marks_all && strcmp(k, "sparse"))
            xlog(1, "xq: ignoring XQ_MARKS='%s': not sparse or all", k);
        const char *q = getenv("XQ_ESTIMATES"); /* timed unless XQ_ESTIMATES=batch */
        g_timed = !(q && !strcmp(q, "batch")) && cu.EventElapsed;
        if (q && *q && strcmp(q, "batch") && strcmp(q, "timed"))
            xlog(1, "xq: ignoring XQ_ESTIMATES='%s': not timed or batch", q);
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
    uint64_t key;      /* cost key of its one command (0: several, or none) */
    uint64_t est;      /* the estimates its commands were launched with, summed */
} ring_entry;

#define SMP 32
#define SMP_DEAD UINT64_MAX
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
    CUdevice cudev; /* the driver's handle of the device (device: its physical ordinal) */
    char label[16];
    char pci[24]; /* the device's PCI bus id, dddd:bb:dd.0; "" when the driver does not say */
    /* session: valid while gen == g_state */
    uint32_t gen;
    int slot;
    xq_slot *shm;
    /* the truth, under mu */
    uint32_t pending, in_flight, active, throttled, waiters, cseq;
    uint64_t launched, completed, failed, run_ns, estimate_ns, ready_since, last_done;
    uint64_t fl_est; /* the estimates of the commands in flight, summed: what the window bounds */
    /* memop marks are sparse (each costs the GPU about 2 us): the launches made since the last
     * mark, which none covers yet: how many, their estimates summed, the first one's launch
     * time and cost key; bumped tail_gen at every mark */
    uint32_t tail_n, tail_gen;
    uint64_t tail_est, tail_t, tail_key;
    uint64_t last_launch; /* when the stream last launched */
    uint64_t query_at;    /* tracker only: when it may query a quiet stream's tail again */
    int tracked;          /* counted in g_busy: entries in the ring or a tail */
    uint64_t marks, queries; /* XQ_LOG=2 */
    uint64_t by_est[4];      /* XQ_LOG=2: launches by estimate: < 100 us, < 300 us, < 1 ms, longer */
    int gate_seen;           /* tracker only: the gate as it last saw it */
    uint32_t nleft;          /* XQ_LOG=2: work left in flight each time the tracker saw the gate close */
    uint32_t left_us[1024];
    uint32_t wseq;      /* futex word of the threads held on this stream */
    uint32_t wake_owed; /* a WAKE delayed by the pacing */
    uint32_t head, n;   /* ring: oldest entry, entries */
    uint64_t poll_at;   /* tracker only: when to look next */
    uint64_t polled;    /* tracker only: when it looked last */
    int cmode;          /* 1: memop (word; mseq: the last value enqueued), -1: memop failed, 0: events */
    struct cword *word;
    uint64_t mseq;
    /* deferred launches, under mu; sub_mu: held by the one thread making them (in order) */
    pthread_mutex_t sub_mu;
    struct dop *dq_head, *dq_tail;
    uint32_t dq_n;
    int dq_lw; /* counted in g_limit_waiters: its head waits on the limits */
    /* XQ_LOG=2 diagnostics, under mu: refusals by the threshold / the window / no estimate yet;
     * dry: nothing in flight while work waited on the host (held or deferred), gate open */
    uint64_t why_thr, why_win, why_est, why_guard, guard_seen, dry_at, dry_ns;
    uint64_t est_sum;        /* XQ_LOG=2: estimated work launched (what the window was charged) */
    uint64_t left_at[6];     /* XQ_LOG=2: launches by the estimated work left in flight when made */
    /* timed samples (XQ_ESTIMATES=timed): a command of a kind due to be measured goes between two
     * timing events; the tracker reads their elapsed time once the stream completed it (ord: its
     * launch's number in launched; 0 while it is being launched, SMP_DEAD when it failed).
     * Events are created on first use and kept, per slot. Under mu. */
    struct { CUevent a, b; uint64_t key, ord; } smp[SMP];
    uint32_t smp_head, smp_n;
    int smp_off;             /* timing failed on this stream: batch estimates, as XQ_ESTIMATES=batch */
    uint64_t timed, smp_skip; /* XQ_LOG=2: samples read; due ones not taken (stream idle, slots full) */
    /* XQ_STALL=1: a word of page-locked host memory (0 go, 1 hold) that guarded launches wait on;
     * written by the tracker from the node's gate; held_ns: when the gate was last seen closed */
    uint32_t *stall;
    CUdeviceptr stall_dev;
    uint64_t held_ns;
    int stall_off;
    uint64_t stall_guards, stall_holds; /* XQ_LOG=2 */
    /* narrowing: the widest recent launches (multiprocessors; this second and the last one, under
     * mu), and the green streams made for it (by multiprocessor count; never destroyed: another
     * thread may be launching into one) */
    uint32_t w_cur, w_prev;
    uint64_t w_at;
    struct { int off, n; CUstream s; } green[8];
    uint32_t green_next;
    uint64_t narrowed; /* XQ_LOG=2: launches made narrow */
    ring_entry ring[RING];
} xstream;

static pthread_mutex_t tab_mu = PTHREAD_MUTEX_INITIALIZER;
static xstream *g_hash[BUCKETS], *g_free, *g_all;
static uint32_t g_tabgen = 1;   /* bumped when a stream is forgotten: thread caches go stale */
static uint32_t g_explicit_n;   /* label counter s<N> */
static uint32_t g_busy;         /* streams with marks in their ring or unmarked launches */
static uint32_t g_owed;         /* streams owing a WAKE */
static uint32_t g_closing;      /* destroyed streams not yet closed */
static uint32_t g_limit_waiters;
static uint32_t g_captures;     /* captures begun through the wrapped calls, not yet ended */
static uint32_t g_exiting;      /* exit() began: the driver is being torn down */
static int g_final;             /* at exit: quiet streams are queried at once */
static uint32_t g_state;        /* odd: attached; bumped at every attach and detach */
static uint32_t g_tracker_word, g_tracker_parked, g_tracker_on;
static uint32_t g_deferred;        /* launches deferred, all streams (the trampolines read it) */
static uint32_t g_legacy_deferred; /* of which on a legacy default stream */
static uint64_t g_deferred_total, g_flush_waits; /* for XQ_LOG=2 */
static uint32_t g_dq_word, g_dq_waiters; /* futex: bumped when deferred launches were made */
static int g_defer;                /* XQ_DEFER=1: defer (until measured on a GPU, launches are held by default) */
static int g_stubs_ok;             /* 1: trampolines handed out and none bare: deferral may happen */
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
            static int said;
            if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
                xlog(1, "xq: CUDA_VISIBLE_DEVICES=%s is not a list of device ordinals (allowed: e.g. 2,0,3; UUIDs are "
                        "not mapped here: the node finds the device by the PCI bus id sent with it); device %d reported as the "
                        "process sees it",
                     v, dev);
            return dev;
        }
        if (i++ == dev) return (int)x;
        p = *end ? end + 1 : end;
    }
    return dev;
}

/* The device's PCI bus id, for the node to find its own device by whatever ordinal the process
 * sees (UUID lists, containers); "" when the driver does not answer. */
static void pci_bus_id(CUdevice dev, char *out, size_t n)
{
    int dom = 0, bus = 0, d = 0;
    out[0] = 0;
    if (!cu.DeviceGetAttribute || cu.DeviceGetAttribute(&dom, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev) ||
        cu.DeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev) ||
        cu.DeviceGetAttribute(&d, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev) || bus < 0 || bus > 255 || d < 0 || d > 255)
        return;
    snprintf(out, n, "%04x:%02x:%02x.0", (unsigned)dom, (unsigned)bus, (unsigned)d);
}

static void ptds_thread_exit(void *);
static void tracker_kick(void);
static void drain_all(int force);
static void defer_summary(void);
struct dop;
static void drain(xstream *st, int force);

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

/* ------------------------------------------------------------------ level 2 (XQ_STALL=1)
 *
 * Level 1 cannot take back what a stream launched: a tenant the node prefers waits behind the
 * held stream's launched work. With XQ_STALL=1 each launch of a stream the node held in the last
 * second first puts cuStreamWaitValue32(word == 0) on the stream; the tracker mirrors the node's
 * gate into the word (1 while the gate is closed), so a launched command that has not started
 * stays where it is while the node holds the stream, and only the running one goes on. The word
 * lies in page-locked host memory of our own (never freed, as the memop words), so the tracker
 * writes it with a plain store. A stream the node never holds pays nothing; a guard costs the
 * device about 2 us per launch. The word is cleared whenever the gate is seen open, when the
 * node is lost and at exit, so a held stream never outlives the hold. */
#define STALL_HOLD_NS 1000000000ull
static uint32_t g_stall_logged;

static void stall_set(xstream *st, uint32_t v)
{
    uint32_t *w = LD(&st->stall);
    if (w && LD(w) != v) {
        ST(w, v);
        if (v) ADD(&st->stall_holds, 1);
    }
}

/* Tracker: the word follows the node's gate. */
static void stall_watch(xstream *st)
{
    xq_slot *s = LD(&st->gen) == LD(&g_state) && (LD(&g_state) & 1) ? st->shm : NULL;
    if (s && LD(&s->gate)) {
        ST(&st->held_ns, now_ns());
        stall_set(st, 1);
    } else {
        stall_set(st, 0);
    }
}

static void stall_clear_all(void)
{
    for (xstream *st = LD(&g_all); st; st = st->next_all) stall_set(st, 0);
}

/* Before a launch on st (handle h as the caller gives it; ptsz: per-thread default stream
 * semantics), in the launch's context: the guard, if the node held st lately. */
static void stall_guard(xstream *st, CUstream h, int ptsz)
{
    if (!g_stall || st->stall_off) return;
    uint64_t held = LD(&st->held_ns);
    if (!held || now_ns() - held > STALL_HOLD_NS) return;
    if (!LD(&st->stall)) {
        static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
        pthread_mutex_lock(&mu);
        if (!st->stall && !st->stall_off) {
            size_t pg = (size_t)sysconf(_SC_PAGESIZE);
            void *p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            CUdeviceptr d = 0;
            if (p == MAP_FAILED) {
                st->stall_off = 1;
            } else {
                madvise(p, pg, MADV_DONTFORK);
                if (cu.HostRegister(p, pg, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP) ||
                    cu.HostGetDevPtr(&d, p, 0))
                    st->stall_off = 1; /* the page stays mapped: a late reader still hits memory */
                else
                    st->stall_dev = d, ST(&st->stall, (uint32_t *)p);
            }
            if (st->stall_off)
                xlog(__atomic_exchange_n(&g_stall_logged, 1, __ATOMIC_SEQ_CST) ? 2 : 1,
                     "xq: XQ_STALL=1 unavailable for stream %s (no page-locked word); it stays at level 1", st->label);
        }
        pthread_mutex_unlock(&mu);
        if (!LD(&st->stall)) return;
    }
    xq_slot *s = LD(&st->gen) == LD(&g_state) && (LD(&g_state) & 1) ? st->shm : NULL;
    if (!s || !LD(&s->gate)) stall_set(st, 0); /* we may launch: the gate is open */
    CUresult r = (ptsz ? cu.WaitValue32Ptsz : cu.WaitValue32)(h, st->stall_dev, 0, 0x1 /* CU_STREAM_WAIT_VALUE_EQ */);
    if (r == CUDA_SUCCESS) {
        ADD(&st->stall_guards, 1);
    } else {
        st->stall_off = 1;
        xlog(1, "xq: XQ_STALL=1: cuStreamWaitValue32 failed on stream %s (CUDA error %d); it stays at level 1", st->label, r);
    }
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
    char pci[24];
    CUcontext cur = NULL, tmp;
    cu.CtxGetCurrent(&cur);
    if (ctx && ctx != cur) pushed = cu.CtxPush(ctx) == CUDA_SUCCESS;
    cu.CtxGetDevice(&dev);
    pci_bus_id(dev, pci, sizeof pci);
    cu.CtxGetStreamPriorityRange(&least, &greatest);
    cu.StreamGetPriority(kind == K_EXPLICIT ? h : kind == K_PTDS ? CU_STREAM_PER_THREAD : NULL, &prio);
    const char *why = NULL;
    cword *w = g_memop ? word_get(dev, &why) : NULL; /* before the renumbering */
    if (pushed) cu.CtxPop(&tmp);
    CUdevice cudev = dev;
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
    pthread_mutex_init(&st->sub_mu, NULL);
    st->kind = kind, st->h = h, st->ctx = ctx, st->tid = tid, st->slot = -1;
    st->device = dev, st->cudev = cudev, st->prio = prio, st->least = least, st->greatest = greatest;
    memcpy(st->pci, pci, sizeof st->pci);
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

static int close_tail(xstream *st, int *idle);
static void wake_node(xstream *st);

/* Before the stream is destroyed: its unmarked launches get their mark (the handle cannot be
 * queried afterwards), and its queue leaves the node once that mark is seen. */
static void stream_forget(CUstream h)
{
    pthread_mutex_lock(&tab_mu);
    xstream *st = stream_find_locked(K_EXPLICIT, h, NULL, 0);
    if (st) stream_forget_locked(st);
    pthread_mutex_unlock(&tab_mu);
    if (!st) return;
    CUcontext cur = NULL, tmp;
    cu.CtxGetCurrent(&cur);
    int pushed = cur != st->ctx && cu.CtxPush(st->ctx) == CUDA_SUCCESS, idle = 0;
    pthread_mutex_lock(&st->mu);
    close_tail(st, &idle);
    pthread_mutex_unlock(&st->mu);
    if (pushed) cu.CtxPop(&tmp);
    if (idle) wake_node(st);
    tracker_kick();
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
static xw_beat g_beat;    /* the node's heartbeat (xq_wire.h) */
static uint32_t g_frozen; /* the heartbeat stopped: the socket was shut down, the reader detaches */

/* Looks at the node's heartbeat (the reader at least every 100 ms, held threads at every wait).
 * Stopped for XW_FROZEN_S: the node is taken for gone. The socket is shut down, so the reader
 * detaches as when the connection closes (every held thread goes, deferred launches are made, the
 * node's session ends) and registers anew once the node answers a HELLO again. Holds no lock. */
static void node_look(void)
{
    uint32_t gs = LD(&g_state);
    if (!(gs & 1) || !xw_beat_stale(&g_beat, gs)) return;
    pthread_mutex_lock(&S.send_mu);
    if (LD(&g_state) == gs && S.fd >= 0 && !LD(&g_frozen)) {
        ST(&g_frozen, 1);
        shutdown(S.fd, SHUT_RDWR);
    }
    pthread_mutex_unlock(&S.send_mu);
}

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

/* The devices' multiprocessor counts and threads per multiprocessor, read once each. */
#define NDEV 64
static struct { int sms, tps; } g_devinfo[NDEV];

static int dev_sms_known(CUdevice d) { return d >= 0 && d < NDEV ? LD(&g_devinfo[d].sms) : 0; }

static int dev_sms(CUdevice d, int *tps)
{
    *tps = 0;
    if (d < 0 || d >= NDEV || !cu.DeviceGetAttribute) return 0;
    if (!LD(&g_devinfo[d].sms)) {
        int a = 0, b = 0; /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, _MAX_THREADS_PER_MULTIPROCESSOR */
        if (cu.DeviceGetAttribute(&a, 16, d) || cu.DeviceGetAttribute(&b, 39, d) || a <= 0 || a > 65535 || b <= 0) return 0;
        ST(&g_devinfo[d].tps, b);
        ST(&g_devinfo[d].sms, a);
    }
    *tps = LD(&g_devinfo[d].tps);
    return LD(&g_devinfo[d].sms);
}

/* A launch of this many threads (UINT64_MAX: a graph, taken as the whole device) was made on st:
 * the widest of the last one to two seconds is what the node reserves for st's queue when it
 * narrows others for it. Caller holds st->mu. */
static void width_note(xstream *st, uint64_t threads, uint64_t now)
{
    int tps, sms = threads ? dev_sms(st->cudev, &tps) : 0;
    if (!sms) return;
    uint64_t w = threads == UINT64_MAX ? (uint64_t)sms : (threads + (uint64_t)tps - 1) / (uint64_t)tps;
    if (w > (uint64_t)sms) w = (uint64_t)sms;
    if (now - st->w_at >= 1000000000ull) {
        st->w_prev = now - st->w_at < 2000000000ull ? st->w_cur : 0;
        st->w_cur = 0, st->w_at = now;
    }
    if (w > st->w_cur) st->w_cur = (uint32_t)w;
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
    uint32_t w = st->w_cur > st->w_prev ? st->w_cur : st->w_prev;
    __atomic_store_n(&s->width, w ? w | (uint32_t)dev_sms_known(st->cudev) << 16 : 0, __ATOMIC_RELAXED);
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
    send_line("STREAM %u %lx %d %d %d %d %s%s%s", i, (unsigned long)(uintptr_t)st->h, st->device, st->prio,
              st->least, st->greatest, st->label, st->pci[0] ? " " : "", st->pci);
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

/* Once per process image (the constructor's SPACE question reads it first): a bad value is said once. */
static void env_read(void)
{
    static int done;
    if (!done++) xw_env(S.path, sizeof S.path, S.name, sizeof S.name, S.prio, sizeof S.prio);
}

/* The process's share of the device under the node's MPS server, in percent; 0: it shares in time
 * (no node, MPS off there, XQ_MPS=0, or the user's own CUDA_MPS_PIPE_DIRECTORY). With g_narrow
 * (see "narrowing") the share is the whole device and the node narrows its streams at times. */
static int g_space;
static int g_narrow; /* the node said this process may be narrowed (SPACE ... narrow) */
static int narrow_usable(void);

/* Before anything can create a CUDA context: join the node's MPS server if it runs one. */
static void space_setup(void)
{
    const char *v = getenv("XQ_MPS");
    if (v && !strcmp(v, "0")) return;
    if (v && *v && strcmp(v, "1")) xlog(1, "xq: ignoring XQ_MPS='%s': not 0 or 1; asking the node", v);
    if ((v = getenv("XQ_SPACE")) && *v) { /* a parent asked: its children share its share */
        int p = atoi(v);
        if (p >= 1 && p <= 100 && getenv("CUDA_MPS_PIPE_DIRECTORY")) g_space = p, g_narrow = p == 100 && strstr(v, ":narrow");
        return;
    }
    if (getenv("CUDA_MPS_PIPE_DIRECTORY")) {
        xlog(2, "xq: CUDA_MPS_PIPE_DIRECTORY is set: the process's own MPS setting is kept");
        return;
    }
    env_read();
    char why[256];
    /* XQ_NARROW=0: a process that must not be narrowed (asks for a capped share instead) */
    const char *nv = getenv("XQ_NARROW");
    int ask = !(nv && !strcmp(nv, "0"));
    if (nv && *nv && strcmp(nv, "0") && strcmp(nv, "1")) xlog(1, "xq: ignoring XQ_NARROW='%s': not 0 or 1", nv);
    g_space = xw_space(S.path, S.name, S.prio, ask, &g_narrow, why, sizeof why);
    if (g_space) xlog(2, "xq: MPS client on %d %% of the device%s", g_space, g_narrow ? ", narrowed by the node at times" : "");
    else xlog(3, "xq: no MPS from the node (%s)", why);
}

/* Connects, registers, maps the session's memory and registers every live stream. */
static int try_attach(char *why, size_t whylen)
{
    xw_session x;
    /* XQ_STALL=1 is said (capability lv2: shown by xq:processes); a node that does not know it
     * refuses the HELLO by naming it, and is asked again without */
    /* "narrow": the driver has what narrowing needs (else the node holds the process in time) */
    int nw = g_space && narrow_usable();
    const char *caps = g_stall ? (g_space ? (nw ? " cuda,lv2,mps,narrow" : " cuda,lv2,mps") : " cuda,lv2")
                       : g_space ? (nw ? " cuda,mps,narrow" : " cuda,mps") : "";
    if (!xw_attach(S.path, S.name, S.prio, caps, &x, why, whylen) &&
        (!*caps || !strstr(why, "capability") || !xw_attach(S.path, S.name, S.prio, "", &x, why, whylen)))
        return 0;
    int fd = x.fd;
    uint32_t slots = x.slots;
    void *base = x.base;
    const char *shm_path = x.shm_path;
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
    xw_beat_start(&g_beat, base, LD(&g_state) + 1);
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
    stall_clear_all(); /* nothing launched stays held on the device */
    for (xstream *st = LD(&g_all); st; st = st->next_all) wake_held(st);
    drain_all(1);
    if (__atomic_exchange_n(&g_frozen, 0, __ATOMIC_SEQ_CST))
        xlog(1, "xq: node at %s not answering for %d s (frozen?); running unscheduled", S.path, XW_FROZEN_S);
    else
        xlog(1, "xq: node at %s lost (%s); running unscheduled", S.path, why);
}

static void handle_line(char *line)
{
    unsigned slot;
    xlog(3, "xq: < %s", line);
    if (sscanf(line, "GATE %u", &slot) == 1) {
        int deferred = 0;
        pthread_mutex_lock(&S.mu);
        xstream *st = slot < S.nslots ? S.owner[slot] : NULL;
        if (st) {
            stall_set(st, 0);
            wake_held(st);
            deferred = LD(&st->dq_n) != 0;
            if (LD(&st->waiters) && st->shm) { /* the documented futex words, for completeness */
                futex_wake(&st->shm->gate);
                futex_wake(&st->shm->completion_seq);
            }
        }
        pthread_mutex_unlock(&S.mu);
        if (deferred) drain(st, 0); /* the gate opened: what was deferred goes now (a stream is never freed) */
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
        struct pollfd pf = {S.fd, POLLIN, 0};
        int ready = poll(&pf, 1, XW_LOOK_MS); /* a frozen node keeps the socket open: its heartbeat tells */
        node_look();
        if (ready <= 0) continue;
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
static int poll_stream(xstream *st, CUcontext *cur, uint64_t *next, uint64_t *gap);

/* Registered at the first gated call, after the CUDA runtime registered its own teardown, so
 * this runs before it: the tracker stops querying events of contexts about to be destroyed. A
 * last look at every stream first, so that work done by now (a process usually synchronises
 * before it exits) is counted done, not left in flight. */
static void at_exit(void)
{
    g_stall = 0;       /* no more guards, */
    stall_clear_all(); /* and nothing held on the device while the process winds down */
    drain_all(1); /* what the process launched is made, as it would have been without us */
    pthread_mutex_lock(&query_mu);
    CUcontext was = NULL, cur = NULL;
    if (cu.CtxGetCurrent) cu.CtxGetCurrent(&was);
    cur = was;
    ST(&g_final, 1);
    for (xstream *st = LD(&g_all); st; st = st->next_all)
        if (LD(&st->in_use) && (LD(&st->n) || LD(&st->tail_n)) && !LD(&g_captures)) {
            uint64_t next = UINT64_MAX, gap = POLL_NS;
            st->poll_at = 0;
            poll_stream(st, &cur, &next, &gap);
        }
    if (cur != was && cu.CtxSetCurrent) cu.CtxSetCurrent(was);
    ST(&g_exiting, 1);
    pthread_mutex_unlock(&query_mu);
    defer_summary();
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
        else if (!xw_refused) xlog(1, "xq: no node at %s (%s); running unscheduled", S.path, why); /* a refusal was said */
        spawn(reader_main);
        static int exit_registered; /* once per process image: atexit survives fork */
        if (!exit_registered++) atexit(at_exit);
        ST(&S.started, 1);
    }
    pthread_mutex_unlock(&S.start_mu);
}

/* ------------------------------------------------------------------ the launch gate */

/* docs/processes.md "The launch gate": 0 = launch, 1 = held, 2 = wait on the limits. */
/* ------------------------------------------------------------------ command costs
 * What one command of a kind takes on the device, learned from completions: a kernel by its
 * function and launch shape, a graph by its executable, a copy or memset by its entry point and
 * size class. The window is a budget of these estimates, so a burst of 5 us kernels fills it
 * with dozens of them and one 2 ms kernel alone; the stream's average would admit the other
 * way round (too few small ones, two long ones). */
#define CTAB 8192
#define SAMPLE_EVERY 32 /* memop: every 32nd command of a known kind is marked alone, to keep learning it */
static struct {
    uint64_t key, est;
    uint32_t seen;  /* commands of the kind since it was last sampled */
    uint32_t timed; /* timed samples est was learned from (then batches no longer move it) */
    uint32_t first; /* its first commands (all of them sampled, timed estimates) */
    uint32_t last[3]; /* timed: its last three samples (ns); est is their median */
} g_cost[CTAB];
#define SAMPLE_FIRST 4 /* timed: a kind's first commands are all sampled */
static pthread_mutex_t cost_mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t cost_key(const void *what, uint64_t shape)
{
    uint64_t k = (uint64_t)(uintptr_t)what * 0x9E3779B97F4A7C15ull ^ (shape + 1) * 0xC2B2AE3D27D4EB4Full;
    return k ? k : 1;
}

static uint64_t size_class(uint64_t n)
{
    return n ? 64 - (uint64_t)__builtin_clzll(n) : 0;
}

/* The estimate for key, 0 when none yet; with due, also whether this command of the kind is the
 * one to sample (measure alone): the first of a kind (which enters the table unmeasured, so the
 * ones launched before its measurement arrives are not all sampled too), then every 32nd. */
static uint64_t cost_get(uint64_t key, int *due)
{
    if (due) *due = 0;
    if (!key) return 0;
    uint64_t r = 0;
    pthread_mutex_lock(&cost_mu);
    unsigned i0 = (unsigned)(key % CTAB), i = i0, n = 0, hole = CTAB;
    for (; n < 8; n++, i = (i + 1) % CTAB) {
        if (g_cost[i].key == key) break;
        if (!g_cost[i].key && hole == CTAB) hole = i;
    }
    if (n < 8) {
        r = g_cost[i].est;
        if (due && g_timed && g_cost[i].first < SAMPLE_FIRST) g_cost[i].first++, *due = 1;
        else if (due && ++g_cost[i].seen >= SAMPLE_EVERY) g_cost[i].seen = 0, *due = 1;
    } else if (due) {
        i = hole < CTAB ? hole : i0;
        g_cost[i].key = key, g_cost[i].est = 0, g_cost[i].seen = 0, g_cost[i].timed = 0, g_cost[i].first = 1, *due = 1;
    }
    pthread_mutex_unlock(&cost_mu);
    return r;
}

/* Learns one measured run of key (moving average, weight 1/4); a full probe run forgets its first.
 * timed: from a timed sample, which replaces what batches taught and from then on is the only
 * teacher (a batch's share is proportional to the estimates it was launched with, so it keeps
 * whatever ratio between kinds it started from: a 5 us kernel first charged a stream's 90 us
 * average kept ~90 us; ResNet-50 training's estimates summed to 1.9 x its device time). */
static void cost_put(uint64_t key, uint64_t run, int timed)
{
    if (!key || !run) return;
    pthread_mutex_lock(&cost_mu);
    unsigned i0 = (unsigned)(key % CTAB), i = i0, n = 0;
    for (; n < 8; n++, i = (i + 1) % CTAB)
        if (g_cost[i].key == key || !g_cost[i].key) break;
    if (n == 8) i = i0, g_cost[i].key = 0;
    if (g_cost[i].key != key) g_cost[i].key = key, g_cost[i].est = 0, g_cost[i].seen = 0, g_cost[i].timed = 0, g_cost[i].first = 0;
    if (timed) { /* the median of its last three samples (two: their mean): a sample slowed by
                  * another tenant's kernels running beside it, or one the host delayed, does not
                  * stand for the kind */
        uint32_t *l = g_cost[i].last, k = g_cost[i].timed < 3 ? g_cost[i].timed : 2;
        if (g_cost[i].timed >= 3) l[0] = l[1], l[1] = l[2];
        l[k] = run < UINT32_MAX ? (uint32_t)run : UINT32_MAX;
        uint32_t m = ++g_cost[i].timed;
        uint64_t a = l[0], b = l[1], c = l[2];
        g_cost[i].est = m == 1 ? a : m == 2 ? (a + b) / 2 : a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
    } else if (g_cost[i].timed); /* a batch's share: the timed samples know better */
    else if (!g_cost[i].est) g_cost[i].est = run; /* its first measurement */
    else {
        int64_t e = (int64_t)g_cost[i].est;
        e += ((int64_t)run - e) / 4;
        g_cost[i].est = e > 0 ? (uint64_t)e : 1;
    }
    pthread_mutex_unlock(&cost_mu);
}

/* The estimated work of st still to run at now: the estimates in flight less what the oldest
 * unfinished command (or marked run of commands; first: its estimate) has run since the later of
 * its launch and the last end seen, up to its estimate (credit). Caller holds st->mu. */
static uint64_t work_left(const xstream *st, uint64_t now, uint64_t *first, uint64_t *credit)
{
    uint64_t start;
    if (st->n) start = st->ring[st->head].t_launch, *first = st->ring[st->head].est;
    else start = st->tail_t, *first = st->tail_n ? st->tail_est : 0;
    if (st->last_done > start) start = st->last_done;
    uint64_t ran = now > start ? now - start : 0;
    *credit = ran < *first ? ran : *first;
    return st->fl_est > *credit ? st->fl_est - *credit : 0;
}

/* XQ_LOG=2: a launch is made with left ns of estimated work still to run before it (0: none,
 * under 10 us, 50 us, 100 us, 200 us, more): launches made with little left are where the device
 * may have run dry between commands without the tracker seeing it. Caller holds st->mu. */
static void note_launch(xstream *st, uint64_t est)
{
    st->est_sum += est;
    if (g_log < 2) return;
    uint64_t first, credit, left = st->in_flight > 1 ? work_left(st, now_ns(), &first, &credit) : 0;
    st->left_at[!left ? 0 : left < 10000 ? 1 : left < 50000 ? 2 : left < 100000 ? 3 : left < 200000 ? 4 : 5]++;
}

/* Whether st may launch a command estimated at est (0: unknown) now: 0 yes, 1 held, 2 limits,
 * 4 guarded (see guarded());
 * *retry (when not NULL and the limits refuse): how long until the window may admit it by time
 * alone, 0 when only a completion can. Caller holds st->mu.
 * The window bounds the work still to run on the device (what a command of another tenant
 * arriving now waits for), not the work launched: the oldest unfinished command (or marked run of
 * commands) is credited the time it has run, up to its estimate, since the later of its launch
 * and the last end seen. A command is admitted while what remains leaves room for it, and a long
 * one (or one of a kind not seen yet, taken as a window long) once at most a quarter window
 * remains, so the device is never left to drain before it. */
/* The arrival guard: a queue the node prefers over st is due at about horizon_ns; until
 * guard_until_ns (then it is late, and the guard lapses) a command is admitted only if the work
 * still to run and its own estimate (an unknown kind: a window, or the stream's average) end by
 * then. Refused: *retry is the time left to the lapse (the node holds st anyway when the other
 * queue arrives, and lets it go, with a new guard, when that one is done). Caller holds st->mu. */
static int guarded(xstream *st, const xq_slot *s, uint64_t est, uint64_t win_ns, uint64_t *retry)
{
    uint64_t until = LD(&s->guard_until_ns), hz = LD(&s->horizon_ns), now = now_ns();
    if (!hz || now >= until) return 0;
    st->guard_seen++;
    uint64_t first, credit, left = st->in_flight ? work_left(st, now, &first, &credit) : 0;
    uint64_t e = est ? est : win_ns ? win_ns : st->estimate_ns;
    if (now + left + e <= hz) return 0;
    st->why_guard++;
    if (retry) *retry = until - now;
    xlog(4, "xq: %s: guarded: %.1f us left, this one %.1f us, due in %.1f us", st->label, left / 1e3, e / 1e3,
         hz > now ? (hz - now) / 1e3 : 0.0);
    return 1;
}

static int may_launch(xstream *st, const xq_slot *s, uint64_t est, uint64_t *retry)
{
    if (retry) *retry = 0;
    if (LD(&s->gate)) return 1;
    uint32_t thr = LD(&s->threshold), n = st->in_flight;
    if (thr && n >= thr) {
        st->throttled = 1;
        st->why_thr++;
        return 2;
    }
    if (st->throttled) {
        if (thr && (int64_t)n > (int64_t)thr - (int64_t)LD(&s->batch)) return st->why_thr++, 2;
        st->throttled = 0;
    }
    uint64_t win = LD(&s->window_us);
    if (LD(&s->horizon_ns) && guarded(st, s, est, win * 1000, retry)) return 4;
    if (!win || !n) return 0;
    uint64_t w = win * 1000, first, credit, rem = work_left(st, now_ns(), &first, &credit);
    uint64_t e = est ? est : w, room = w > e + w / 4 ? w - e : w / 4;
    if (rem <= room) {
        xlog(4, "xq: %s: launch %u in flight, %.1f us of work left, this one %.1f us", st->label, n, rem / 1e3, est / 1e3);
        return 0;
    }
    if (est) st->why_win++;
    else st->why_est++;
    if (retry && rem - room <= first - credit) *retry = rem - room;
    return 2;
}

/* What a command of a kind not seen yet is charged while in flight: a whole window (it is
 * measured alone, and until then may be as long as any), the stream's average with none.
 * Caller holds st->mu. */
static uint64_t unknown_charge(const xstream *st)
{
    const xq_slot *s = st->gen == LD(&g_state) ? st->shm : NULL;
    uint64_t win = s ? LD(&s->window_us) : 0;
    return win ? win * 1000 : st->estimate_ns;
}

/* How much estimated work st may launch unmarked (0: a mark behind every launch). Events cost
 * the device nothing and a per-thread stream cannot be queried from the tracker: those mark
 * every launch; memop streams a quarter of the window under a window, every launch under a
 * threshold alone, every 2 ms of work with no limits in force. Caller holds st->mu. */
#define FREE_MARK_NS 2000000ull
static uint64_t mark_every(const xstream *st)
{
    if (st->cmode <= 0 || st->kind == K_PTDS || g_marks_all || !cu.StreamQuery) return 0;
    const xq_slot *s = st->gen == LD(&g_state) ? st->shm : NULL;
    if (!s) return FREE_MARK_NS;
    uint64_t win = LD(&s->window_us);
    uint32_t thr = LD(&s->threshold);
    if (win) return win * 1000 / 4;
    return thr && thr < (1u << 20) ? 0 : FREE_MARK_NS;
}

/* Under a threshold (with a window: without one every launch is marked), how many launches a mark
 * may cover at most (0: no such bound): a stream throttled at the threshold goes on once it is
 * seen at threshold - batch, so the tracker must be able to see a batch end. Short kernels fill
 * a quarter window only by the dozen: unmarked, 16 of them in flight could only be seen done by
 * asking the driver once the stream had been quiet 50 us (on the H100, ResNet-50 training alone
 * under 16 / 8 / 300 us idled in 50-100 us gaps ~60 times a step). Caller holds st->mu. */
static uint32_t mark_count(const xstream *st)
{
    const xq_slot *s = st->gen == LD(&g_state) ? st->shm : NULL;
    uint32_t thr = s ? LD(&s->threshold) : 0, b = s ? LD(&s->batch) : 0;
    if (!thr || thr >= (1u << 20)) return 0;
    b = b && b < thr ? b : thr / 2;
    return b ? b : 1;
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
    uint64_t ck, est; /* the launch's cost key and the estimate it is launched with */
    void *key; /* the kernel or graph launched: known to launch, once it did */
    int waited;
    int isolate; /* its kind is due to be measured (a kind not measured yet, or its sample is due);
                  * once launched: marked alone (batch estimates) */
    int smp;     /* a timed sample: its slot + 1 (0: none) */
    int wake, kick; /* owed once the launch is made: a WAKE to the node, a kick to the tracker */
    uint64_t threads; /* the launch's threads (UINT64_MAX: a graph; 0: not a kernel) */
} gate;
static int smp_take(xstream *st, uint64_t known);
static int smp_record(xstream *st, int i, int end);
static void smp_launched(xstream *st, int i, uint64_t key, int ok);

/* ------------------------------------------------------------------ deferred launches */

#define DQ_MAX 4096  /* deferred launches per stream; past it the launching thread waits */
#define FCACHE 4096  /* functions and graphs known (open addressing) */

enum { D_KERNEL, D_KERNEL_EX, D_GRAPH, D_SET8, D_SET16, D_SET32 };
typedef struct dop {
    struct dop *next;
    int kind;
    uint64_t ck; /* its cost key */
    int isolate; /* as the gate's */
    void *real; /* the driver entry point the application's call was for */
    union {
        struct { CUfunction f; unsigned g[3], b[3], shmem; CUstream h; } k;
        struct { CUlaunchConfig cfg; CUfunction f; } kx;
        struct { CUgraphExec g; CUstream h; } gr;
        struct { CUdeviceptr d; unsigned v; size_t n; CUstream h; } set;
    } a;
    void **params;
    unsigned char blob[]; /* parameter pointers, then their values; launch attributes */
} dop;

/* What is known of a kernel or graph: launched once without an error (only those are deferred:
 * a launch the driver would refuse is refused to the caller, at once), and a kernel's parameter
 * layout (np < 0: unknown, never deferred). */
typedef struct finfo {
    void *key;
    int ok, np;
    uint32_t total;
    uint32_t *off, *sz;
} finfo;
static finfo g_fcache[FCACHE];
static pthread_mutex_t fc_mu = PTHREAD_MUTEX_INITIALIZER;

static finfo *finfo_get(void *key, int create)
{
    uintptr_t x = (uintptr_t)key;
    unsigned i = (unsigned)((x >> 4) ^ (x >> 17)) % FCACHE;
    for (unsigned n = 0; n < FCACHE; n++, i = (i + 1) % FCACHE) {
        finfo *e = &g_fcache[i];
        if (e->key == key) return e;
        if (!e->key) {
            if (!create) return NULL;
            e->key = key, e->np = -2; /* -2: layout not asked yet */
            return e;
        }
    }
    return NULL; /* full: what is not known is not deferred */
}

static void known_ok(void *key)
{
    if (!key) return;
    pthread_mutex_lock(&fc_mu);
    finfo *e = finfo_get(key, 1);
    if (e) e->ok = 1;
    pthread_mutex_unlock(&fc_mu);
}

/* The parameter layout of f, asked of the driver once (in the caller's context, as it launches). */
static int layout(finfo *e, void *f)
{
    if (e->np != -2) return e->np >= 0;
    CUresult (*q)(void *, size_t, size_t *, size_t *) = NULL;
    size_t o, z;
    CUresult r;
    if (cu.FuncGetParamInfo && ((r = cu.FuncGetParamInfo(f, 0, &o, &z)) == CUDA_SUCCESS || r == CUDA_ERROR_INVALID_VALUE))
        q = cu.FuncGetParamInfo;
    else if (cu.KernelGetParamInfo &&
             ((r = cu.KernelGetParamInfo(f, 0, &o, &z)) == CUDA_SUCCESS || r == CUDA_ERROR_INVALID_VALUE))
        q = cu.KernelGetParamInfo;
    e->np = -1;
    if (!q) return 0;
    uint32_t off[512], sz[512], total = 0;
    int n = 0;
    for (; n < 512; n++) {
        r = q(f, (size_t)n, &o, &z);
        if (r == CUDA_ERROR_INVALID_VALUE) break;
        if (r != CUDA_SUCCESS || o + z > 32768) return 0;
        off[n] = (uint32_t)o, sz[n] = (uint32_t)z;
        if (o + z > total) total = (uint32_t)(o + z);
    }
    if (n == 512) return 0;
    e->off = n ? malloc(n * sizeof *off) : NULL;
    e->sz = n ? malloc(n * sizeof *sz) : NULL;
    if (n && (!e->off || !e->sz)) return free(e->off), free(e->sz), e->off = e->sz = NULL, 0;
    if (n) memcpy(e->off, off, n * sizeof *off), memcpy(e->sz, sz, n * sizeof *sz);
    e->total = total;
    e->np = n;
    return 1;
}

/* A deferred kernel launch with its parameters copied (the driver copies them at the call too,
 * so the caller may reuse them when we return), or NULL: not deferred. */
static dop *dop_kernel(void *f, void **params, void **extra, size_t attrs)
{
    if (!f || (extra && extra[0] != XQ_LAUNCH_PARAM_END)) return NULL;
    pthread_mutex_lock(&fc_mu);
    finfo *e = finfo_get(f, 0);
    int np = -1;
    uint32_t total = 0, *off = NULL, *sz = NULL;
    if (e && e->ok && layout(e, f)) np = e->np, total = e->total, off = e->off, sz = e->sz;
    pthread_mutex_unlock(&fc_mu);
    if (np < 0 || (np && !params)) return NULL;
    size_t ptrs = (size_t)np * sizeof(void *), vals = (total + 15) & ~(size_t)15;
    dop *op = malloc(sizeof *op + attrs + ptrs + vals);
    if (!op) return NULL;
    op->params = np ? (void **)(op->blob + attrs) : NULL;
    unsigned char *v = op->blob + attrs + ptrs;
    for (int i = 0; i < np; i++) {
        memcpy(v + off[i], params[i], sz[i]);
        op->params[i] = v + off[i];
    }
    return op;
}

static dop *dop_plain(void)
{
    dop *op = malloc(sizeof *op);
    if (op) op->params = NULL;
    return op;
}

/* Whether a launch on st must wait for other streams' deferred launches to be made: the legacy
 * default stream and the blocking streams order each other (taken as blocking: we do not ask).
 * Caller holds st->mu. */
static int cross_order(const xstream *st)
{
    uint32_t all = LD(&g_deferred), legacy = LD(&g_legacy_deferred);
    return st->kind == K_LEGACY ? all > st->dq_n : legacy > (st->kind == K_LEGACY ? st->dq_n : 0);
}

static void drain(xstream *st, int force);
static void flush_all(void);

/* Holds the calling thread while its stream may not launch. Returns 0 for "pass through
 * untracked" (capture, no context, driver helpers missing), 1 for "launch now" (then gate_exit),
 * and, when the caller can defer (deferrable), 2 for "defer this launch" (then gate_defer). */
static int gate_enter(gate *g, CUstream h, int ptsz, void *hint, int deferrable, uint64_t ck)
{
    if (LD(&g_captures) || LD(&g_exiting) || !cu_ready(hint)) return 0;
    int due;
    g->ck = ck, g->est = cost_get(ck, &due);
    g->isolate = due, g->smp = 0;
    int saved_errno = errno; /* the application sees the driver's errno, not ours */
    xstream *st = stream_get(h, ptsz);
    if (!st) {
        errno = saved_errno;
        return 0;
    }
    if (!LD(&S.started)) session_start();
    if (!LD(&g_tracker_on) && !__atomic_exchange_n(&g_tracker_on, 1, __ATOMIC_SEQ_CST)) spawn(tracker_main);
    deferrable = deferrable && g_defer && st->kind != K_PTDS; /* a per-thread stream is the caller's own */
    if (!deferrable && LD(&g_deferred)) flush_all(); /* made after everything deferred before it */
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
        uint64_t retry = 0;
        int why = (gs & 1) && st->shm ? may_launch(st, st->shm, g->est, &retry) : 0;
        if (st->dq_n) why = 3; /* behind what is deferred on this stream */
        if (!why && !(deferrable ? cross_order(st) : LD(&g_deferred) != 0)) break;
        if (deferrable && st->dq_n < DQ_MAX) {
            if (cross_order(st)) { /* rare: the legacy stream and another both deferring */
                pthread_mutex_unlock(&st->mu);
                flush_all();
                pthread_mutex_lock(&st->mu);
                continue;
            }
            g->st = st, g->waited = waited;
            pthread_mutex_unlock(&st->mu);
            if (wake) wake_node(st);
            errno = saved_errno;
            return 2;
        }
        if (!why) { /* not deferrable, and other streams still have deferred launches */
            pthread_mutex_unlock(&st->mu);
            flush_all();
            pthread_mutex_lock(&st->mu);
            continue;
        }
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
        futex_wait(&st->wseq, seq, retry && retry < WAIT_NS ? (long)retry : WAIT_NS);
        node_look(); /* held by a node that may have stopped */
        pthread_mutex_lock(&st->mu);
        st->waiters--;
        if (why == 2) ADD(&g_limit_waiters, -1);
    }
    if (waited) st->pending--; /* still active: counted when it began to wait */
    st->in_flight++;
    if (g->isolate && g_timed && !st->smp_off) g->smp = smp_take(st, g->est) + 1, g->isolate = 0;
    if (!g->est) g->est = unknown_charge(st);
    note_launch(st, g->est);
    st->fl_est += g->est;
    g->t = now_ns();
    if (st->dry_at) st->dry_ns += g->t - st->dry_at, st->dry_at = 0;
    /* ready since the first launch after idle: a thread that waited kept the stream ready (its
     * arrival is when it began to wait, not when it was let go) */
    if (!waited && st->active++ == 0) st->ready_since = g->t, wake = 1;
    int kick = g->isolate && st->tail_n ? close_tail(st, &wake) : 0; /* what came before is measured apart */
    mirror(st);
    pthread_mutex_unlock(&st->mu);
    if (g->smp && smp_record(st, g->smp - 1, 0)) { /* no sample after all */
        pthread_mutex_lock(&st->mu);
        smp_launched(st, g->smp - 1, 0, 0);
        pthread_mutex_unlock(&st->mu);
        g->smp = 0;
    }
    /* The node hears of the arrival, and the tracker of the mark, in gate_exit, once the launch
     * is made: the WAKE line is a socket write, and made here it delayed the work itself (a
     * tenant alone: ~20 us per request on the H100). The arrival's time is in the slot already. */
    g->wake = wake, g->kick = kick;
    g->st = st;
    stall_guard(st, h, ptsz);
    errno = saved_errno;
    return 1;
}

/* Queues op (after gate_enter said 2) and returns 1; 0 when it may not after all (a capture
 * began: the launch must be captured now), then op is freed and the caller enters again. */
static int gate_defer(gate *g, dop *op)
{
    xstream *st = g->st;
    int wake = 0, saved_errno = errno;
    pthread_mutex_lock(&st->mu);
    if (LD(&g_captures) || LD(&g_exiting)) {
        if (g->waited && (st->pending--, --st->active == 0)) st->ready_since = 0, wake = 1;
        mirror(st);
        pthread_mutex_unlock(&st->mu);
        if (wake) wake_node(st);
        free(op);
        errno = saved_errno;
        return 0;
    }
    op->next = NULL;
    op->isolate = g->isolate;
    if (st->dq_tail) st->dq_tail->next = op;
    else st->dq_head = op;
    st->dq_tail = op;
    st->dq_n++;
    ADD(&g_deferred, 1);
    ADD(&g_deferred_total, 1);
    if (st->kind == K_LEGACY) ADD(&g_legacy_deferred, 1);
    if (!g->waited) {
        st->pending++;
        if (st->active++ == 0) st->ready_since = now_ns(), wake = 1;
    }
    mirror(st);
    pthread_mutex_unlock(&st->mu);
    if (wake) wake_node(st);
    drain(st, 0); /* when the stream may launch after all, this thread makes it */
    tracker_kick();
    errno = saved_errno;
    return 1;
}

/* gate_enter said 2 but the launch cannot be deferred: forget that it was counted as held. */
static void gate_undefer(gate *g)
{
    if (!g->waited) return;
    xstream *st = g->st;
    int wake = 0;
    pthread_mutex_lock(&st->mu);
    st->pending--;
    if (--st->active == 0) st->ready_since = 0, wake = 1;
    mirror(st);
    pthread_mutex_unlock(&st->mu);
    if (wake) wake_node(st);
}

static dop *build_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned shmem, CUstream h, void **params, void **extra)
{
    dop *op = dop_kernel(f, params, extra, 0);
    if (op) op->kind = D_KERNEL, op->a.k = (typeof(op->a.k)){f, {gx, gy, gz}, {bx, by, bz}, shmem, h};
    return op;
}

static dop *build_launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    if (!c || (c->numAttrs && !c->attrs) || c->numAttrs > 64) return NULL;
    size_t attrs = (size_t)c->numAttrs * XQ_LAUNCH_ATTR_SIZE;
    dop *op = dop_kernel(f, params, extra, attrs);
    if (!op) return NULL;
    op->kind = D_KERNEL_EX, op->a.kx.cfg = *c, op->a.kx.f = f;
    if (attrs) memcpy(op->blob, c->attrs, attrs), op->a.kx.cfg.attrs = (CUlaunchAttribute *)op->blob;
    return op;
}

static dop *build_graph(CUgraphExec g, CUstream h)
{
    pthread_mutex_lock(&fc_mu);
    finfo *e = finfo_get(g, 0);
    int ok = e && e->ok;
    pthread_mutex_unlock(&fc_mu);
    dop *op = ok ? dop_plain() : NULL;
    if (op) op->kind = D_GRAPH, op->a.gr.g = g, op->a.gr.h = h;
    return op;
}

static dop *build_set(int kind, CUdeviceptr d, unsigned v, size_t n, CUstream h)
{
    dop *op = dop_plain();
    if (op) op->kind = kind, op->a.set.d = d, op->a.set.v = v, op->a.set.n = n, op->a.set.h = h;
    return op;
}

static CUresult dop_call(dop *op)
{
    switch (op->kind) {
    case D_KERNEL:
        return ((CUresult(*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **))op->real)(op->a.k.f, op->a.k.g[0], op->a.k.g[1], op->a.k.g[2],
                                                                   op->a.k.b[0], op->a.k.b[1], op->a.k.b[2],
                                                                   op->a.k.shmem, op->a.k.h, op->params, NULL);
    case D_KERNEL_EX:
        return ((CUresult(*)(const CUlaunchConfig *, CUfunction, void **, void **))op->real)(&op->a.kx.cfg, op->a.kx.f,
                                                                                           op->params, NULL);
    case D_GRAPH:
        return ((CUresult(*)(CUgraphExec, CUstream))op->real)(op->a.gr.g, op->a.gr.h);
    case D_SET8:
        return ((CUresult(*)(CUdeviceptr, unsigned char, size_t, CUstream))op->real)(op->a.set.d, (unsigned char)op->a.set.v,
                                                                                   op->a.set.n, op->a.set.h);
    case D_SET16:
        return ((CUresult(*)(CUdeviceptr, unsigned short, size_t, CUstream))op->real)(
            op->a.set.d, (unsigned short)op->a.set.v, op->a.set.n, op->a.set.h);
    default:
        return ((CUresult(*)(CUdeviceptr, unsigned, size_t, CUstream))op->real)(op->a.set.d, op->a.set.v, op->a.set.n,
                                                                              op->a.set.h);
    }
}


/* ------------------------------------------------------------------ narrowing
 * docs/processes.md "Space and time": a best-effort process runs as a client of the node's MPS
 * server on the whole device. While the node narrows one of its streams (the slot's reserve_sms:
 * leave that many multiprocessors to the queues it prefers), each kernel or graph launched on it
 * goes to a stream of a green context on the rest of the device, joined to the application's
 * stream by two events: the green stream waits for what the stream has before it, and the stream
 * waits for the launch, so that everything later on the stream (the interposer's marks and
 * samples included) still comes after it. Measured on an H200: 1.3 us more per launch. */
static int g_narrow_state; /* 0 usable, -1 off: the driver lacks the calls, or one failed */
static uint32_t g_narrow_logged;
static __thread CUcontext t_nctx; /* the context this thread's two join events belong to */
static __thread CUevent t_nev[2];

static int narrow_usable(void)
{
    return g_narrow && LD(&g_narrow_state) == 0 && cu.GetDevResource && cu.SplitByCount && cu.GenerateDesc &&
           cu.GreenCreate && cu.GreenStream && cu.WaitEvent && cu.StreamSync;
}

static void narrow_off(const char *what, CUresult r)
{
    ST(&g_narrow_state, -1);
    if (!__atomic_fetch_add(&g_narrow_logged, 1, __ATOMIC_SEQ_CST)) {
        xlog(1, "xq: narrowing launches stops for this process: %s failed (CUDA error %d); it runs on the whole device", what, r);
        /* the node holds it in time from now on, as a process that cannot be narrowed */
        if (LD(&g_state) & 1) send_line("NARROW off");
    }
}

#define GREEN_MAX 32
static struct { CUdevice dev; int off, n; void *ctx; } g_green[GREEN_MAX];
static int g_ngreen;
static pthread_mutex_t green_mu = PTHREAD_MUTEX_INITIALIZER;

/* The process's green context of the n multiprocessors after the first off ones on dev (off: a
 * multiple of n), made once: the device split in groups of n, the (off / n)-th of them. Every
 * process splits the device alike, so processes given different groups do not overlap. */
#define RES_SIZE 144 /* sizeof(CUdevResource) in CUDA 12.4-13.0: its type at 0, its count at 96 */
#define RES_GROUPS 16
static uint32_t g_part_logged;
static void *green_ctx(CUdevice dev, int off, int n)
{
    pthread_mutex_lock(&green_mu);
    void *g = NULL;
    for (int i = 0; i < g_ngreen && !g; i++)
        if (g_green[i].dev == dev && g_green[i].off == off && g_green[i].n == n) g = g_green[i].ctx;
    if (!g && g_ngreen < GREEN_MAX) {
        static _Alignas(16) unsigned char all[1024], rest[1024], part[RES_SIZE * RES_GROUPS + 1024];
        memset(all, 0, sizeof all), memset(part, 0, sizeof part), memset(rest, 0, sizeof rest);
        int want = n > 0 && off > 0 && off % n == 0 && off / n < RES_GROUPS ? off / n + 1 : 1;
        unsigned groups = (unsigned)want;
        void *desc = NULL;
        CUresult r;
        const char *what = "cuDeviceGetDevResource";
        unsigned char *mine = part;
        if (!(r = cu.GetDevResource(dev, all, 1 /* CU_DEV_RESOURCE_TYPE_SM */)) &&
            !(r = (what = "cuDevSmResourceSplitByCount", cu.SplitByCount(part, &groups, all, rest, 0, (unsigned)n)))) {
            unsigned got = 0;
            int type = 0;
            if (want > 1) { /* the group asked for, if the driver made it and it reads as one */
                unsigned char *e = part + (size_t)(want - 1) * RES_SIZE;
                memcpy(&type, e, sizeof type), memcpy(&got, e + 96, sizeof got);
                if (groups >= (unsigned)want && type == 1 && got >= (unsigned)n) mine = e;
                else if (!__atomic_fetch_add(&g_part_logged, 1, __ATOMIC_SEQ_CST))
                    xlog(1, "xq: the device has no group %d of %d multiprocessors apart (%u groups made); this process's part "
                            "overlaps another's", want, n, groups);
            }
            if (!(r = (what = "cuDevResourceGenerateDesc", cu.GenerateDesc(&desc, mine, 1))) &&
                !(r = (what = "cuGreenCtxCreate", cu.GreenCreate(&g, desc, dev, 1 /* CU_GREEN_CTX_DEFAULT_STREAM */)))) {
                memcpy(&got, mine + 96, sizeof got);
                g_green[g_ngreen].dev = dev, g_green[g_ngreen].off = off, g_green[g_ngreen].n = n, g_green[g_ngreen].ctx = g;
                g_ngreen++;
                xlog(2, "xq: a green context of %u multiprocessors (group %d of %d made, %d asked) on device %d", got,
                     (int)((mine - part) / RES_SIZE), (int)groups, n, (int)dev);
            } else
                g = NULL;
        }
        if (!g) narrow_off(what, r);
    }
    pthread_mutex_unlock(&green_mu);
    return g;
}

/* st's green stream on the n multiprocessors after the first off, made once. */
static CUstream green_stream(xstream *st, int off, int n)
{
    pthread_mutex_lock(&st->mu);
    for (int i = 0; i < 8; i++)
        if (st->green[i].off == off && st->green[i].n == n && st->green[i].s) {
            CUstream gs = st->green[i].s;
            pthread_mutex_unlock(&st->mu);
            return gs;
        }
    int prio = st->prio;
    pthread_mutex_unlock(&st->mu);
    void *g = green_ctx(st->cudev, off, n);
    CUstream gs = NULL;
    CUresult r;
    if (!g) return NULL;
    if ((r = cu.GreenStream(&gs, g, 1 /* CU_STREAM_NON_BLOCKING */, prio))) {
        narrow_off("cuGreenCtxStreamCreate", r);
        return NULL;
    }
    pthread_mutex_lock(&st->mu);
    uint32_t i = st->green_next++ % 8; /* a stream replaced is left alone, not destroyed */
    st->green[i].off = off, st->green[i].n = n, st->green[i].s = gs;
    pthread_mutex_unlock(&st->mu);
    return gs;
}

/* Where the launch about to be made on st goes: a green stream, already waiting for what st has
 * before it (*sx: st's handle for the join back), or NULL: st itself, as asked. A kernel too
 * small to fill more than NARROW_SMALL multiprocessors stays on st: it cannot crowd the preferred
 * queues out, and a join costs more than it (two events, a hop between streams on the device:
 * a second eager decoder narrowed launch by launch went from 1.37 to 1.59 x its P99 alone). */
#define NARROW_SMALL 8
static CUstream narrow_begin(xstream *st, CUstream h, int ptsz, uint64_t threads, CUstream *sx)
{
    if (!st || !narrow_usable() || !st->shm || st->gen != LD(&g_state)) return NULL;
    uint32_t reserve = LD(&st->shm->reserve_sms), part = LD(&st->shm->part);
    int count = (int)(part & 0xffff), index = (int)(part >> 16);
    if (count < 1 || index >= count) count = 1, index = 0;
    int tps, sms = reserve || count > 1 ? dev_sms(st->cudev, &tps) : 0;
    if (!sms || (threads != UINT64_MAX && threads <= (uint64_t)NARROW_SMALL * (uint64_t)tps)) return NULL;
    /* green partitions come in multiples of 8 multiprocessors on Hopper (fewer elsewhere): the
     * region the reserve leaves, split among count processes */
    int region = !reserve ? sms : reserve >= (uint32_t)sms ? 8 : (sms - (int)reserve) / 8 * 8;
    if (region < 8) region = 8;
    int n = count > 1 ? region / count / 8 * 8 : region;
    if (n < 8) n = 8;
    int off = index * n;
    if (off + n > sms) off = 0;
    if (!off && n >= sms) return NULL;
    CUcontext cur = NULL;
    if (cu.CtxGetCurrent(&cur) || !cur) return NULL;
    if (t_nctx != cur) {
        CUresult r;
        if ((r = cu.EventCreate(&t_nev[0], CU_EVENT_DISABLE_TIMING)) || (r = cu.EventCreate(&t_nev[1], CU_EVENT_DISABLE_TIMING))) {
            narrow_off("cuEventCreate", r);
            return NULL;
        }
        t_nctx = cur;
    }
    CUstream gs = green_stream(st, off, n);
    if (!gs) return NULL;
    CUstream s = h ? h : ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    CUresult r;
    if ((r = cu.EventRecord(t_nev[0], s)) || (r = cu.WaitEvent(gs, t_nev[0], 0))) {
        narrow_off("joining the green stream", r);
        return NULL;
    }
    *sx = s;
    __atomic_add_fetch(&st->narrowed, 1, __ATOMIC_RELAXED);
    return gs;
}

/* After the launch into gs (r): the stream s waits for it. Returns 1 when the launch failed
 * there and must be made on s instead (narrowing then stops for the process). */
static int narrow_end(CUstream s, CUstream gs, CUresult r)
{
    if (r != CUDA_SUCCESS) {
        narrow_off("a launch into a green stream", r);
        return 1;
    }
    if ((r = cu.EventRecord(t_nev[1], gs)) || (r = cu.WaitEvent(s, t_nev[1], 0))) {
        narrow_off("joining back from the green stream", r);
        cu.StreamSync(gs); /* the order kept the slow way */
    }
    return 0;
}

/* A deferred launch's threads (see gate.threads) and where its stream is. */
static uint64_t dop_threads(const dop *op)
{
    switch (op->kind) {
    case D_KERNEL:
        return (uint64_t)op->a.k.g[0] * op->a.k.g[1] * op->a.k.g[2] * op->a.k.b[0] * op->a.k.b[1] * op->a.k.b[2];
    case D_KERNEL_EX:
        return (uint64_t)op->a.kx.cfg.gridDimX * op->a.kx.cfg.gridDimY * op->a.kx.cfg.gridDimZ * op->a.kx.cfg.blockDimX *
               op->a.kx.cfg.blockDimY * op->a.kx.cfg.blockDimZ;
    case D_GRAPH:
        return UINT64_MAX;
    default:
        return 0;
    }
}

static CUstream *dop_stream(dop *op)
{
    return op->kind == D_KERNEL ? &op->a.k.h : op->kind == D_KERNEL_EX ? &op->a.kx.cfg.hStream : op->kind == D_GRAPH ? &op->a.gr.h : NULL;
}

/* A deferred launch, made narrow when its stream is narrowed. */
static CUresult dop_call_narrow(xstream *st, dop *op)
{
    CUstream *hp = dop_stream(op), keep = hp ? *hp : NULL, sx = NULL;
    CUstream gs = hp ? narrow_begin(st, keep, 0, dop_threads(op), &sx) : NULL;
    if (!gs) return dop_call(op);
    *hp = gs;
    CUresult r = dop_call(op);
    *hp = keep;
    return narrow_end(sx, gs, r) ? dop_call(op) : r;
}

static CUresult launch_ex_on(CUresult (*real)(const CUlaunchConfig *, CUfunction, void **, void **), const CUlaunchConfig *c,
                             CUstream s, CUfunction f, void **params, void **extra)
{
    CUlaunchConfig copy = *c;
    copy.hStream = s;
    return real(&copy, f, params, extra);
}

static int close_tail(xstream *st, int *idle);
static int after_launch(xstream *st, uint64_t t, uint64_t ck, uint64_t est, int isolate, int *idle);
static uint32_t g_defer_failed_logged;

/* Makes st's deferred launches, in order, while the stream may launch (force: whatever the
 * limits and the gate: the node is gone or the process exits). One thread at a time per stream;
 * a thread finding another at it leaves the work to it. */
static void drain(xstream *st, int force)
{
    if (!LD(&st->dq_n) || pthread_mutex_trylock(&st->sub_mu)) return;
    int kick = 0, made = 0;
    CUcontext cur = NULL, tmp;
    int pushed = 0;
    for (;;) {
        int idle = 0;
        pthread_mutex_lock(&st->mu);
        dop *op = st->dq_head;
        uint64_t ck = op ? op->ck : 0; /* only this thread takes from the head */
        int isolate = op ? op->isolate : 0;
        pthread_mutex_unlock(&st->mu);
        uint64_t est = cost_get(ck, NULL);
        pthread_mutex_lock(&st->mu);
        uint32_t gs = LD(&g_state);
        int why = !op || force ? 0 : (gs & 1) && st->gen == gs && st->shm ? may_launch(st, st->shm, est, NULL) : 0;
        if (!op || why) {
            int lw = why == 2;
            if (lw != st->dq_lw) ADD(&g_limit_waiters, lw ? 1 : -1), st->dq_lw = lw;
            pthread_mutex_unlock(&st->mu);
            break;
        }
        st->pending--, st->in_flight++;
        int smp = -1;
        if (isolate && g_timed && !st->smp_off) smp = smp_take(st, est), isolate = 0;
        if (!est) est = unknown_charge(st);
        note_launch(st, est);
        st->fl_est += est;
        uint64_t t = now_ns();
        if (st->dry_at) st->dry_ns += t - st->dry_at, st->dry_at = 0;
        mirror(st);
        pthread_mutex_unlock(&st->mu);
        if (!pushed && !made) {
            cu.CtxGetCurrent(&cur);
            pushed = cur != st->ctx && cu.CtxPush(st->ctx) == CUDA_SUCCESS;
        }
        if (isolate) { /* what came before is measured apart */
            pthread_mutex_lock(&st->mu);
            kick |= st->tail_n ? close_tail(st, &idle) : 0;
            pthread_mutex_unlock(&st->mu);
        }
        stall_guard(st, op->kind == D_KERNEL ? op->a.k.h : op->kind == D_KERNEL_EX ? op->a.kx.cfg.hStream
                        : op->kind == D_GRAPH ? op->a.gr.h : op->a.set.h, 0);
        int timed = smp >= 0 && !smp_record(st, smp, 0);
        CUresult r = dop_call_narrow(st, op);
        timed = timed && r == CUDA_SUCCESS && !smp_record(st, smp, 1);
        pthread_mutex_lock(&st->mu);
        st->dq_head = op->next;
        if (!st->dq_head) st->dq_tail = NULL;
        st->dq_n--;
        ADD(&g_deferred, -1);
        if (st->kind == K_LEGACY) ADD(&g_legacy_deferred, -1);
        if (r != CUDA_SUCCESS) {
            st->in_flight--, st->failed++;
            st->fl_est -= est <= st->fl_est ? est : st->fl_est;
            if (--st->active == 0) st->ready_since = 0, idle = 1;
        } else {
            st->launched++;
            width_note(st, dop_threads(op), t);
            kick |= after_launch(st, t, ck, est, isolate || timed, &idle); /* a sample is read once marked */
        }
        smp_launched(st, smp, ck, timed);
        mirror(st);
        pthread_mutex_unlock(&st->mu);
        if (r != CUDA_SUCCESS)
            xlog(__atomic_fetch_add(&g_defer_failed_logged, 1, __ATOMIC_SEQ_CST) < 10 ? 1 : 3,
                 "xq: a deferred launch on stream %s failed when made: CUDA error %d (counted as failed)", st->label, r);
        if (idle) wake_node(st);
        free(op);
        made++;
    }
    if (pushed) cu.CtxPop(&tmp);
    pthread_mutex_unlock(&st->sub_mu);
    if (made) {
        wake_held(st); /* threads waiting on the order or on a full queue */
        ADD(&g_dq_word, 1);
        if (LD(&g_dq_waiters)) futex_wake(&g_dq_word);
    }
    if (kick) tracker_kick();
}

static void drain_all(int force)
{
    for (xstream *st = LD(&g_all); st; st = st->next_all)
        if (LD(&st->in_use) && LD(&st->dq_n)) drain(st, force);
}

/* Waits until every deferred launch of the process was made (helping where it may). Called
 * before any driver entry point that could see or order the deferred work. */
static void flush_all(void)
{
    while (LD(&g_deferred)) {
        uint32_t seq = LD(&g_dq_word);
        drain_all(0);
        if (!LD(&g_deferred)) break;
        ADD(&g_dq_waiters, 1);
        tracker_kick();
        futex_wait(&g_dq_word, seq, 1000000L);
        ADD(&g_dq_waiters, -1);
        node_look(); /* the deferred launches wait for a node that may have stopped */
    }
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

/* ------------------------------------------------------------------ timed samples
 * A kind due to be measured (its first command, then every 32nd) is measured on the device:
 * timing events recorded just before and just after the launch, their elapsed time read by the
 * tracker once the stream completed the command. Exact where batches of completions are not
 * (see cost_put), and an event record costs the device nothing where a memop mark costs ~2 us. */
#define SMP_LEAD_NS 20000ull /* a sample of a kind measured before needs this much work ahead of it */

/* Whether the launch being made on st (counted in in_flight already) is a timed sample: reserves
 * slot i (ord 0) and returns it, or -1. A kind measured before is sampled only behind at least
 * SMP_LEAD_NS of estimated work, so that the first event is passed when that work ends, with the
 * command already queued behind it: on an idle stream the time between the record and the
 * launch reaching the device would be counted too. Caller holds st->mu. */
static int smp_take(xstream *st, uint64_t known)
{
    if (!g_timed || st->smp_off) return -1;
    uint64_t first, credit;
    if (st->smp_n == SMP || (known && (st->in_flight <= 1 || work_left(st, now_ns(), &first, &credit) < SMP_LEAD_NS)))
        return st->smp_skip++, -1;
    uint32_t i = (st->smp_head + st->smp_n++) % SMP;
    st->smp[i].ord = 0, st->smp[i].key = 0;
    return (int)i;
}

static void smp_failed(xstream *st, const char *what, CUresult r)
{
    if (!st->smp_off) xlog(2, "xq: timing on stream %s: %s failed (CUDA error %d); estimates from batches of completions", st->label, what, r);
    st->smp_off = 1;
}

/* Records slot i's first (end = 0) or second event on st's stream, in st's context (the caller's
 * thread for a launch it makes itself, the draining thread, its context pushed, for a deferred one).
 * The slot is the caller's until ord is set. Returns 0 on success. */
static int smp_record(xstream *st, int i, int end)
{
    CUevent *ev = end ? &st->smp[i].b : &st->smp[i].a;
    CUstream rec = st->kind == K_EXPLICIT ? st->h : st->kind == K_PTDS ? CU_STREAM_PER_THREAD : NULL;
    CUresult r = CUDA_SUCCESS;
    if (!*ev) {
        CUcontext cur = NULL, tmp;
        cu.CtxGetCurrent(&cur);
        int pushed = cur != st->ctx && cu.CtxPush(st->ctx) == CUDA_SUCCESS;
        r = cu.EventCreate(ev, 0); /* timing on */
        if (r != CUDA_SUCCESS) *ev = NULL;
        if (pushed) cu.CtxPop(&tmp);
    }
    if (r == CUDA_SUCCESS) r = cu.EventRecord(*ev, rec);
    if (r != CUDA_SUCCESS) {
        pthread_mutex_lock(&st->mu);
        smp_failed(st, end ? "cuEventRecord (timed sample)" : "cuEventCreate/Record (timed sample)", r);
        pthread_mutex_unlock(&st->mu);
        return 1;
    }
    return 0;
}

/* The launch of slot i ended: launched (its number in st->launched, key its kind) or not (0).
 * Caller holds st->mu. */
static void smp_launched(xstream *st, int i, uint64_t key, int ok)
{
    if (i < 0) return;
    st->smp[i].key = key;
    st->smp[i].ord = ok ? st->launched : SMP_DEAD;
}

/* Reads the samples st completed, oldest first: each one's elapsed time teaches its kind. Tracker
 * only (query_mu held); c: st's context. */
static void smp_read(xstream *st, CUcontext c, CUcontext *cur)
{
    while (LD(&st->smp_n)) {
        pthread_mutex_lock(&st->mu);
        uint32_t i = st->smp_head;
        uint64_t ord = st->smp[i].ord, key = st->smp[i].key;
        CUevent a = st->smp[i].a, b = st->smp[i].b;
        int ready = st->smp_n && ord && (ord == SMP_DEAD || ord <= st->completed);
        pthread_mutex_unlock(&st->mu);
        if (!ready) return;
        float ms = 0;
        CUresult r = CUDA_SUCCESS;
        if (ord != SMP_DEAD) {
            if (c != *cur && cu.CtxSetCurrent(c) == CUDA_SUCCESS) *cur = c;
            r = cu.EventElapsed(&ms, a, b);
            if (r == CUDA_ERROR_NOT_READY) return; /* counted done without being seen done (no mark could be made) */
        }
        pthread_mutex_lock(&st->mu);
        st->smp_head = (st->smp_head + 1) % SMP, st->smp_n--;
        if (ord != SMP_DEAD && r == CUDA_SUCCESS) st->timed++;
        else if (ord != SMP_DEAD) smp_failed(st, "cuEventElapsedTime", r);
        pthread_mutex_unlock(&st->mu);
        if (ord != SMP_DEAD && r == CUDA_SUCCESS && ms > 0) cost_put(key, (uint64_t)((double)ms * 1e6), 1);
    }
}

/* Keeps g_busy (streams the tracker must watch) true to st. Caller holds st->mu; returns whether
 * st just became watched (then the tracker must be kicked). */
static int busy_update(xstream *st)
{
    int t = st->n || st->tail_n;
    if (t == st->tracked) return 0;
    st->tracked = t;
    ADD(&g_busy, t ? 1 : -1);
    return t;
}

/* Covers st's unmarked launches with one mark: a new ring entry, or the newest one marked again
 * when the ring is full. Caller holds st->mu and runs in st's context (a default stream's mark
 * goes to the current context's). Returns whether the tracker must be kicked; *idle: the stream
 * went idle (no mark could be made: the launches are taken as done). */
static int close_tail(xstream *st, int *idle)
{
    uint32_t c = st->tail_n;
    if (!c) return 0;
    uint64_t est = st->tail_est;
    CUstream rec = st->kind == K_EXPLICIT ? st->h : st->kind == K_PTDS ? CU_STREAM_PER_THREAD : NULL;
    st->tail_n = 0, st->tail_est = 0, st->tail_gen++;
    ring_entry *e = &st->ring[(st->head + st->n - (st->n == RING)) % RING];
    if (mark(st, e, rec)) {
        st->marks++;
        xlog(5, "xq: %s: mark covers %u launches, %.1f us of work", st->label, c, est / 1e3);
        if (st->n == RING) /* full: the newest mark covers these too */
            e->count += c, e->key = 0, e->est += est;
        else
            e->t_launch = st->tail_t, e->count = c, e->key = c == 1 ? st->tail_key : 0, e->est = est, st->n++;
    } else {
        st->fl_est -= est <= st->fl_est ? est : st->fl_est;
        *idle |= account_done(st, c, 0); /* cannot watch them: take them as done */
    }
    return busy_update(st);
}

/* After a successful launch: it joins the unmarked tail, which a mark covers once it holds
 * mark_every(st) of estimated work, or at once for a command measured alone (isolate; the
 * caller marked what came before it). Caller holds st->mu; returns whether the tracker must be
 * kicked. */
static int after_launch(xstream *st, uint64_t t, uint64_t ck, uint64_t est, int isolate, int *idle)
{
    if (!st->tail_n) st->tail_t = t, st->tail_key = ck;
    st->tail_n++, st->tail_est += est, st->last_launch = t;
    st->by_est[est < 100000 ? 0 : est < 300000 ? 1 : est < 1000000 ? 2 : 3]++;
    int kick = busy_update(st);
    uint32_t mc = mark_count(st);
    if (isolate || st->tail_est >= mark_every(st) || (mc && st->tail_n >= mc)) kick |= close_tail(st, idle);
    return kick;
}

static void gate_exit(gate *g, CUresult r)
{
    xstream *st = g->st;
    int idle = 0, kick = 0, saved_errno = errno;
    int timed = g->smp && r == CUDA_SUCCESS && !smp_record(st, g->smp - 1, 1);
    pthread_mutex_lock(&st->mu);
    if (r != CUDA_SUCCESS) { /* nothing was launched */
        st->in_flight--, st->failed++;
        st->fl_est -= g->est <= st->fl_est ? g->est : st->fl_est;
        if (--st->active == 0) st->ready_since = 0, idle = 1;
    } else {
        st->launched++;
        width_note(st, g->threads, g->t);
        kick = after_launch(st, g->t, g->ck, g->est, g->isolate || timed, &idle); /* a sample is read once marked */
    }
    smp_launched(st, g->smp - 1, g->ck, timed);
    mirror(st);
    int waiters = st->waiters;
    static __thread void *t_last_ok;
    if (r == CUDA_SUCCESS && g->key && g->key != t_last_ok) known_ok(t_last_ok = g->key);
    pthread_mutex_unlock(&st->mu);
    if (r != CUDA_SUCCESS && waiters)
        wake_held(st); /* the limits may allow one more now */
    if (idle || g->wake) wake_node(st); /* one line tells the node whichever it is now */
    if (kick || g->kick) tracker_kick();
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

/* After the tracker counted completions of st (caller holds st->mu, released here): publishes
 * the counts, wakes the threads held on the limits and, when the stream went idle, the node.
 * Returns whether work is still tracked on st. */
static int completions_seen(xstream *st, int idle)
{
    mirror(st);
    int waiters = st->waiters, left = st->tracked;
    xq_slot *s = st->gen == LD(&g_state) ? st->shm : NULL;
    pthread_mutex_unlock(&st->mu);
    if (waiters) {
        wake_held(st);
        if (s) futex_wake(&s->completion_seq);
    }
    if (idle) wake_node(st);
    return left;
}

/* A stream with unmarked launches and no mark left to wait for: once it has launched nothing for
 * a while (50 us under a window, else 500 us), asks the driver whether it is idle (cuStreamQuery:
 * a driver call, so not while it launches) and, if so, counts those launches done, unmeasured.
 * Returns whether work may still be in flight. Tracker only, with query_mu held. */
#define QUIET_LIMIT_NS 50000ull
#define QUIET_NS 500000ull
static int poll_tail(xstream *st, CUcontext c, CUcontext *cur, uint64_t now)
{
    pthread_mutex_lock(&st->mu);
    uint32_t c0 = st->tail_n, gen = st->tail_gen;
    uint64_t quiet = mark_every(st) < FREE_MARK_NS ? QUIET_LIMIT_NS : QUIET_NS;
    if (quiet < st->tail_est) quiet = st->tail_est; /* not before the work could be done: a query too early only costs */
    int due = c0 && !st->n && (LD(&g_final) || (now - st->last_launch >= quiet && now >= st->query_at));
    if (due) st->query_at = now + quiet;
    pthread_mutex_unlock(&st->mu);
    if (!c0) return 0;
    if (!due || st->kind == K_PTDS) return 1;
    if (c != *cur && cu.CtxSetCurrent(c) == CUDA_SUCCESS) *cur = c;
    CUresult r = cu.StreamQuery(st->kind == K_EXPLICIT ? st->h : NULL);
    if (r == CUDA_ERROR_NOT_READY) return 1;
    int idle = 0; /* done, or an error: either way nothing more will be seen of them */
    pthread_mutex_lock(&st->mu);
    st->queries++;
    if (st->tail_gen == gen && !st->n && st->tail_n >= c0) { /* the c0 oldest of the tail were launched before the query */
        uint64_t est = st->tail_n == c0 ? st->tail_est : st->tail_est / st->tail_n * c0;
        st->tail_n -= c0, st->tail_est -= est;
        st->fl_est -= est <= st->fl_est ? est : st->fl_est;
        if (!st->in_flight) st->fl_est = 0;
        idle = account_done(st, c0, 0);
        st->last_done = now_ns();
        if (st->tail_n) st->tail_t = st->last_done, st->tail_key = 0; /* the rest came after the query */
        busy_update(st);
    }
    return completions_seen(st, idle);
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
    if (LD(&st->smp_n)) smp_read(st, st->ctx, cur);
    uint64_t prev = st->polled; /* the last look: what is found done now ended after it */
    st->polled = now;
    st->poll_at = now + (urgent ? lim : memop ? MEMOP_NS : POLL_NS);
    *next = st->poll_at < *next ? st->poll_at : *next;
    pthread_mutex_lock(&st->mu);
    /* entries stay put while in the ring, except the newest of a full ring (re-recorded) */
    uint32_t n = st->n, head = st->head, m = n == RING ? n - 1 : n;
    CUcontext c = st->ctx;
    pthread_mutex_unlock(&st->mu);
    if (!n) return poll_tail(st, c, cur, now);
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
    /* the batch ended between the last look and now: take the middle, when that look came after
     * the batch began and not long ago (else all that is known is that it ended by now: a long
     * gap, the tracker kept off the CPU, must not halve a command) */
    uint64_t end = prev > from && t > prev && t - prev <= 2 * POLL_NS ? prev + (t - prev) / 2 : t;
    uint64_t span = end > from ? end - from : 0, est = 0;
    struct { uint64_t key, w, n; } part[RING];
    uint32_t parts = 0;
    for (uint32_t i = 0; i < take; i++) {
        ring_entry *e = &st->ring[(head + i) % RING];
        count += e->count, est += e->est;
        part[parts].key = e->count == 1 ? e->key : 0, part[parts].n = e->count, part[parts++].w = e->est;
    }
    st->head = (head + take) % RING;
    st->n -= take;
    st->last_done = end;
    st->fl_est -= est <= st->fl_est ? est : st->fl_est;
    if (!st->in_flight) st->fl_est = 0;
    int idle = account_done(st, count, span);
    if (!st->in_flight && (st->pending || st->dq_n) && st->shm && !LD(&st->shm->gate)) st->dry_at = t;
    busy_update(st);
    int left = completions_seen(st, idle);
    /* each command of the batch learns its share of the span, by the estimates it was launched
     * with (unknown ones: an equal share) */
    if (span) {
        uint64_t even = span / (count ? count : 1), sum = 0;
        for (uint32_t i = 0; i < parts; i++) sum += part[i].w ? part[i].w : even * part[i].n;
        for (uint32_t i = 0; i < parts && sum; i++)
            if (part[i].key)
                cost_put(part[i].key, (uint64_t)((double)span * (double)(part[i].w ? part[i].w : even) / (double)sum), 0);
    }
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
    for (int i = 0; i < SMP; i++) { /* samples not read yet are dropped: nothing is in flight */
        if (st->smp[i].a) cu.EventDestroy(st->smp[i].a);
        if (st->smp[i].b) cu.EventDestroy(st->smp[i].b);
    }
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

/* XQ_LOG=2: each time the tracker sees st's gate close with work in flight, how much estimated
 * work was left: what a tenant the node preferred waited behind, once the node had decided. */
static void gate_watch(xstream *st)
{
    xq_slot *s = st->gen == LD(&g_state) ? st->shm : NULL;
    int g = s && LD(&s->gate);
    if (g == st->gate_seen) return;
    st->gate_seen = g;
    if (!g) return;
    pthread_mutex_lock(&st->mu);
    uint64_t first, credit, left = st->in_flight ? work_left(st, now_ns(), &first, &credit) : 0;
    if (st->in_flight && st->nleft < sizeof st->left_us / sizeof st->left_us[0])
        st->left_us[st->nleft++] = (uint32_t)(left / 1000);
    pthread_mutex_unlock(&st->mu);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t g_nap[5], g_nap_late; /* XQ_LOG=2, tracker only: its naps by how late they ended */

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
                if (LD(&st->in_use)) {
                    if (g_stall) stall_watch(st);
                    if (g_log >= 2) gate_watch(st);
                    busy |= poll_stream(st, &cur, &next, &gap);
                }
        pthread_mutex_unlock(&query_mu);
        if (LD(&g_deferred)) { /* completions seen, or the gate opened: make what may go now */
            drain_all(0);
            busy |= LD(&g_deferred) != 0;
        }
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
            long want = until > now + gap ? (long)(until - now) : (long)gap;
            sleep_ns(want);
            if (g_log >= 2) { /* how late its naps end: a late tracker refills a throttled stream late */
                uint64_t late = now_ns() - now - (uint64_t)want;
                g_nap[late < 10000 ? 0 : late < 50000 ? 1 : late < 100000 ? 2 : late < 500000 ? 3 : 4]++;
                g_nap_late += late;
            }
            continue;
        }
        idle_since = 0;
        /* nothing in flight for a while: park until a launch kicks */
        uint32_t w = LD(&g_tracker_word);
        ST(&g_tracker_parked, 1);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!LD(&g_busy) && !LD(&g_owed) && !LD(&g_closing) && !LD(&g_deferred))
            futex_wait(&g_tracker_word, w, 1000000000L);
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
    ADD(&g_captures, 1); /* from here on nothing more is deferred */
    pthread_mutex_unlock(&query_mu);
    flush_all(); /* and what was is made before the capture begins, not into it */
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

/* Cost keys: a kernel by its function and shape, anything else by its entry point and size class. */
#define KSHAPE(F, GX, GY, GZ, BX, BY, BZ) \
    cost_key((F), size_class((uint64_t)(GX) * (GY) * (GZ)) | size_class((uint64_t)(BX) * (BY) * (BZ)) << 8)
#define SIZED(ID, N) cost_key(&W[ID], size_class(N))
#define BODY(ID, K, PT, ARGS, STREAM, CK)                                                               \
    {                                                                                               \
        typedef CUresult(*fn_t) PT;                                                                 \
        fn_t real_ = (fn_t)real_of(&W[ID], K);                                                       \
        if (!real_)                                                                                  \
            return CUDA_ERROR_NOT_INITIALIZED;                                                      \
        gate g_ = {0};                                                                              \
        if (!gate_enter(&g_, (STREAM), (K) & 1, (void *)real_, 0, (CK)))                                    \
            return real_ ARGS;                                                                       \
        CUresult r_ = real_ ARGS;                                                                     \
        gate_exit(&g_, r_);                                                                           \
        return r_;                                                                                   \
    }
/* Deferrable: through cuGetProcAddress (K 2, 3: every other entry point handed out there is a
 * trampoline that waits for deferred work), a launch the stream may not make now is copied by
 * BUILD (NULL: it cannot be) and queued; KEY: what becomes known to launch when it did. */
#define DBODY(ID, K, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL)                                                \
    {                                                                                               \
        typedef CUresult(*fn_t) PT;                                                                 \
        fn_t real_ = (fn_t)real_of(&W[ID], K);                                                       \
        if (!real_)                                                                                  \
            return CUDA_ERROR_NOT_INITIALIZED;                                                      \
        gate g_ = {0};                                                                              \
        int k_ = gate_enter(&g_, (STREAM), (K) & 1, (void *)real_, (K) >= 2 && LD(&g_stubs_ok) > 0, (CK));\
        if (k_ == 2) {                                                                              \
            dop *op_ = BUILD;                                                                       \
            if (op_) {                                                                              \
                op_->real = (void *)real_, op_->ck = g_.ck;                                                          \
                if (gate_defer(&g_, op_))                                                           \
                    return CUDA_SUCCESS;                                                            \
            } else                                                                                  \
                gate_undefer(&g_);                                                                  \
            k_ = gate_enter(&g_, (STREAM), (K) & 1, (void *)real_, 0, (CK));                             \
        }                                                                                           \
        if (!k_)                                                                                    \
            return real_ ARGS;                                                                      \
        g_.key = (void *)(KEY);                                                                     \
        g_.threads = (THREADS);                                                                     \
        CUstream sx_ = NULL, ns_ = g_.threads != 0 ? narrow_begin(g_.st, (STREAM), (K) & 1, g_.threads, &sx_) : NULL;  \
        CUresult r_ = ns_ ? (NCALL) : real_ ARGS;                                                   \
        if (ns_ && narrow_end(sx_, ns_, r_))                                                        \
            r_ = real_ ARGS;                                                                        \
        gate_exit(&g_, r_);                                                                         \
        return r_;                                                                                  \
    }
#define DGATED(ID, NAME, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL)                              \
    XQ_EXPORT CUresult NAME PT DBODY(ID, 0, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL)           \
    XQ_EXPORT CUresult NAME##_ptsz PT DBODY(ID, 1, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL)    \
    static CUresult NAME##_gpa PT DBODY(ID, 2, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL)        \
    static CUresult NAME##_gpa_ptsz PT DBODY(ID, 3, PT, ARGS, STREAM, CK, KEY, BUILD, THREADS, NCALL)

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

DGATED(W_LAUNCH, cuLaunchKernel,
       (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
        unsigned shmem, CUstream hStream, void **params, void **extra),
       (f, gx, gy, gz, bx, by, bz, shmem, hStream, params, extra), hStream, KSHAPE(f, gx, gy, gz, bx, by, bz), f,
       build_launch(f, gx, gy, gz, bx, by, bz, shmem, hStream, params, extra),
       (uint64_t)gx * gy * gz * bx * by * bz, real_(f, gx, gy, gz, bx, by, bz, shmem, ns_, params, extra))
DGATED(W_LAUNCH_EX, cuLaunchKernelEx, (const CUlaunchConfig *config, CUfunction f, void **params, void **extra),
       (config, f, params, extra), config ? config->hStream : NULL,
       config ? KSHAPE(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX, config->blockDimY,
                       config->blockDimZ)
              : 0,
       f, build_launch_ex(config, f, params, extra),
       config ? (uint64_t)config->gridDimX * config->gridDimY * config->gridDimZ * config->blockDimX * config->blockDimY *
                    config->blockDimZ
              : 0,
       launch_ex_on(real_, config, ns_, f, params, extra))
GATED(W_COOP, cuLaunchCooperativeKernel,
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
       unsigned shmem, CUstream hStream, void **params),
      (f, gx, gy, gz, bx, by, bz, shmem, hStream, params), hStream, KSHAPE(f, gx, gy, gz, bx, by, bz))
GATED(W_HOSTFN, cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *data), (hStream, fn, data), hStream, cost_key((void *)fn, 0))
DGATED(W_GRAPH, cuGraphLaunch, (CUgraphExec g, CUstream hStream), (g, hStream), hStream, cost_key(g, 0), g, build_graph(g, hStream),
       UINT64_MAX, real_(g, ns_))
GATED(W_MEMCPY, cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream),
      (dst, src, n, hStream), hStream, SIZED(W_MEMCPY, n))
GATED(W_HTOD, cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void *src, size_t n, CUstream hStream),
      (dst, src, n, hStream), hStream, SIZED(W_HTOD, n))
GATED(W_DTOH, cuMemcpyDtoHAsync_v2, (void *dst, CUdeviceptr src, size_t n, CUstream hStream),
      (dst, src, n, hStream), hStream, SIZED(W_DTOH, n))
GATED(W_DTOD, cuMemcpyDtoDAsync_v2, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream),
      (dst, src, n, hStream), hStream, SIZED(W_DTOD, n))
GATED(W_2D, cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *p, CUstream hStream), (p, hStream), hStream,
      SIZED(W_2D, 0))
GATED(W_3D, cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *p, CUstream hStream), (p, hStream), hStream,
      SIZED(W_3D, 0))
GATED(W_PEER, cuMemcpyPeerAsync,
      (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream hStream),
      (dst, dctx, src, sctx, n, hStream), hStream, SIZED(W_PEER, n))
DGATED(W_SET8, cuMemsetD8Async, (CUdeviceptr d, unsigned char v, size_t n, CUstream hStream), (d, v, n, hStream),
       hStream, SIZED(W_SET8, n), NULL, build_set(D_SET8, d, v, n, hStream), 0, CUDA_SUCCESS)
DGATED(W_SET16, cuMemsetD16Async, (CUdeviceptr d, unsigned short v, size_t n, CUstream hStream),
       (d, v, n, hStream), hStream, SIZED(W_SET16, 2 * (uint64_t)n), NULL, build_set(D_SET16, d, v, n, hStream), 0, CUDA_SUCCESS)
DGATED(W_SET32, cuMemsetD32Async, (CUdeviceptr d, unsigned int v, size_t n, CUstream hStream), (d, v, n, hStream),
       hStream, SIZED(W_SET32, 4 * (uint64_t)n), NULL, build_set(D_SET32, d, v, n, hStream), 0, CUDA_SUCCESS)
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
       flush_all();
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

/* ------------------------------------------------------------------ trampolines */

/* Every other driver entry point handed out (cuGetProcAddress, dlsym) is a trampoline: when
 * launches are deferred it first waits until they are made (flush_all), then jumps to the
 * driver's function with the caller's registers and stack untouched, whatever its signature.
 * Entry points that can neither see nor order a stream's work (queries of devices, contexts,
 * functions, capture state; creating things) are handed out as they are: the trampoline would
 * only cost a load. x86-64 only; elsewhere, or when no trampoline can be made, nothing is
 * deferred. The code pages are written once, then made executable; a slot's target is data. */
#define NSTUBS 2048
#define STUB_SIZE 192 /* 191 bytes of code each */
static unsigned char *g_stub_code;
static uint32_t g_nstubs;
static pthread_mutex_t stub_mu = PTHREAD_MUTEX_INITIALIZER;

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

static int is_stub(void *p)
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
static pthread_mutex_t kset_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_kset_i = -1, g_fset_i = -1; /* their trampolines' indices: the real entry point, the counts */
static uint64_t g_kset_calls, g_kset_same, g_kset_apart; /* XQ_LOG=2 */
static int g_attr_all;                                   /* XQ_ATTR_WAIT=all */

/* The entry for (k, attr, dev), or a free one to fill (create), or NULL. Caller holds kset_mu. */
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
    pthread_mutex_lock(&kset_mu);
    memset(g_kset, 0, sizeof g_kset);
    pthread_mutex_unlock(&kset_mu);
}

/* Whether a deferred launch could be kernel k's (or see its attributes). */
static int deferred_sees(void *k)
{
    CUcontext cur = NULL;
    CUfunction f = NULL;
    if (cu.CtxGetCurrent(&cur) != CUDA_SUCCESS || !cur || !cu.KernelGetFunction ||
        cu.KernelGetFunction(&f, k) != CUDA_SUCCESS)
        return 1;
    int seen = 0;
    for (xstream *st = LD(&g_all); st && !seen; st = st->next_all) {
        if (!LD(&st->in_use) || !LD(&st->dq_n)) continue;
        pthread_mutex_lock(&st->mu); /* taken off the queue under mu, freed after: all valid here */
        if (st->dq_head && st->ctx != cur) seen = 1;
        for (dop *op = st->dq_head; op && !seen; op = op->next) {
            void *g = op->kind == D_KERNEL ? (void *)op->a.k.f : op->kind == D_KERNEL_EX ? (void *)op->a.kx.f : NULL;
            seen = op->kind == D_GRAPH || (g && (g == k || g == (void *)f));
        }
        pthread_mutex_unlock(&st->mu);
    }
    return seen;
}

static void flush_counted(int i);
static void *g_stub_target[NSTUBS];

static CUresult kernel_set_attr(int attr, int val, void *k, CUdevice dev)
{
    CUresult (*real)(int, int, void *, CUdevice) = (CUresult(*)(int, int, void *, CUdevice))LD(&g_stub_target[g_kset_i]);
    ADD(&g_kset_calls, 1);
    if (LD(&g_deferred)) {
        pthread_mutex_lock(&kset_mu);
        struct kset *e = g_attr_all ? NULL : kset_find(k, attr, dev, 0);
        int same = e && e->val == val;
        pthread_mutex_unlock(&kset_mu);
        if (same) ADD(&g_kset_same, 1);
        else if (!g_attr_all && !deferred_sees(k)) ADD(&g_kset_apart, 1);
        else flush_counted(g_kset_i);
    }
    CUresult r = real(attr, val, k, dev);
    if (r == CUDA_SUCCESS) {
        pthread_mutex_lock(&kset_mu);
        struct kset *e = kset_find(k, attr, dev, 1);
        if (e) e->val = val;
        pthread_mutex_unlock(&kset_mu);
    }
    return r;
}

/* A function's attribute may be a kernel's: every remembered value becomes unknown. */
static CUresult func_set_attr(CUfunction f, int attr, int val)
{
    CUresult (*real)(CUfunction, int, int) = (CUresult(*)(CUfunction, int, int))LD(&g_stub_target[g_fset_i]);
    kset_forget();
    if (LD(&g_deferred)) flush_counted(g_fset_i);
    CUresult r = real(f, attr, val);
    kset_forget(); /* a kernel's value set meanwhile by another thread may be stale now */
    return r;
}

static void kset_summary(void)
{
    uint64_t n = LD(&g_kset_calls);
    if (n)
        xlog(2, "xq: cuKernelSetAttribute called %llu times; with launches deferred, %llu set the value it had and %llu "
                "concerned no deferred launch (neither waited)",
             (unsigned long long)n, (unsigned long long)LD(&g_kset_same), (unsigned long long)LD(&g_kset_apart));
}

static const char *g_stub_name[NSTUBS];
/* XQ_LOG=2 prints which entry points waited for deferred work: how often, how long in all, longest */
static uint32_t g_stub_waits[NSTUBS];
static uint64_t g_stub_wait_ns[NSTUBS], g_stub_wait_max[NSTUBS];

static void defer_summary(void)
{
    if (g_log < 2) return;
    for (xstream *st = LD(&g_all); st; st = st->next_all) {
        pthread_mutex_lock(&st->mu);
        if (st->launched)
            xlog(2, "xq: stream %s: %llu launched, %llu marks, %llu idle queries, estimate %.1f us, refused by threshold %llu, "
                    "window %llu, no estimate %llu, arrival guard %llu of %llu; dry %.1f ms (nothing in flight, work waiting, gate open)",
                 st->label, (unsigned long long)st->launched, (unsigned long long)st->marks,
                 (unsigned long long)st->queries, st->estimate_ns / 1e3, (unsigned long long)st->why_thr,
                 (unsigned long long)st->why_win, (unsigned long long)st->why_est, (unsigned long long)st->why_guard,
                 (unsigned long long)st->guard_seen, st->dry_ns / 1e6);
        if (st->launched && (st->narrowed || g_narrow))
            xlog(2, "xq: stream %s: %llu launches narrowed (green contexts%s), widest recent launch %u multiprocessors", st->label,
                 (unsigned long long)st->narrowed, LD(&g_narrow_state) < 0 ? "; stopped after a failure" : "",
                 st->w_cur > st->w_prev ? st->w_cur : st->w_prev);
        if (st->launched && (st->stall_guards || st->stall_holds || st->stall_off))
            xlog(2, "xq: stream %s: level 2 (XQ_STALL=1): %llu launches guarded, %llu holds on the device%s", st->label,
                 (unsigned long long)st->stall_guards, (unsigned long long)st->stall_holds,
                 st->stall_off ? "; off: no word or a failed wait" : "");
        if (st->launched)
            xlog(2, "xq: stream %s: launches by estimate: %llu under 100 us, %llu under 300 us, %llu under 1 ms, %llu longer",
                 st->label, (unsigned long long)st->by_est[0], (unsigned long long)st->by_est[1],
                 (unsigned long long)st->by_est[2], (unsigned long long)st->by_est[3]);
        if (st->launched)
            xlog(2, "xq: stream %s: timed samples %llu (due but not taken %llu)%s", st->label, (unsigned long long)st->timed,
                 (unsigned long long)st->smp_skip, !g_timed ? "; XQ_ESTIMATES=batch" : st->smp_off ? "; timing failed: batch estimates" : "");
        if (st->launched)
            xlog(2, "xq: stream %s: estimated work launched %.1f ms, measured %.1f ms; launches made with work left "
                    "0: %llu, <10 us: %llu, <50 us: %llu, <100 us: %llu, <200 us: %llu, more: %llu",
                 st->label, st->est_sum / 1e6, st->run_ns / 1e6, (unsigned long long)st->left_at[0],
                 (unsigned long long)st->left_at[1], (unsigned long long)st->left_at[2],
                 (unsigned long long)st->left_at[3], (unsigned long long)st->left_at[4],
                 (unsigned long long)st->left_at[5]);
        if (st->nleft) {
            qsort(st->left_us, st->nleft, sizeof st->left_us[0], cmp_u32);
            uint32_t n = st->nleft;
            xlog(2, "xq: stream %s: gate closed %u times with work in flight; work left then P50 %u us, P90 %u us, P99 %u us, max %u us",
                 st->label, n, st->left_us[n / 2], st->left_us[n * 9 / 10], st->left_us[n * 99 / 100], st->left_us[n - 1]);
        }
        pthread_mutex_unlock(&st->mu);
    }
    uint64_t naps = g_nap[0] + g_nap[1] + g_nap[2] + g_nap[3] + g_nap[4];
    if (naps)
        xlog(2, "xq: tracker naps %llu, ended late by <10 us: %llu, <50 us: %llu, <100 us: %llu, <500 us: %llu, more: %llu; "
                "mean %.1f us late",
             (unsigned long long)naps, (unsigned long long)g_nap[0], (unsigned long long)g_nap[1],
             (unsigned long long)g_nap[2], (unsigned long long)g_nap[3], (unsigned long long)g_nap[4],
             g_nap_late / 1e3 / naps);
    if (LD(&g_stubs_ok) <= 0) return;
    xlog(2, "xq: %llu launches deferred; %llu driver calls waited for deferred work", (unsigned long long)g_deferred_total,
         (unsigned long long)g_flush_waits);
    for (uint32_t i = 0; i < g_nstubs; i++)
        if (g_stub_waits[i])
            xlog(2, "xq:   %s waited %u times, %.1f ms in all, longest %.2f ms", g_stub_name[i] ? g_stub_name[i] : "?",
                 g_stub_waits[i], g_stub_wait_ns[i] / 1e6, g_stub_wait_max[i] / 1e6);
    kset_summary();
}

/* Waits for every deferred launch, counted for entry point i (stats only; -1: none). */
static void flush_counted(int i)
{
    uint64_t t0 = now_ns();
    flush_all();
    uint64_t d = now_ns() - t0;
    ADD(&g_flush_waits, 1);
    if (i < 0 || i >= NSTUBS) return;
    ADD(&g_stub_waits[i], 1);
    ADD(&g_stub_wait_ns[i], d);
    for (uint64_t m = LD(&g_stub_wait_max[i]); d > m;)
        if (__atomic_compare_exchange_n(&g_stub_wait_max[i], &m, d, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) break;
}

static void stub_flush(int i)
{
    if (LD(&g_deferred)) flush_counted(i);
}

#if defined(__x86_64__)
static unsigned char *emit(unsigned char *p, const void *bytes, size_t n) { return (unsigned char *)memcpy(p, bytes, n) + n; }
static unsigned char *emit64(unsigned char *p, const void *v)
{
    uint64_t x = (uint64_t)(uintptr_t)v;
    memcpy(p, &x, 8);
    return p + 8;
}

/* Writes every stub once: endbr64; if (g_deferred) { save the argument registers, stub_flush(),
 * restore }; jmp *target[i]. */
static int stubs_make(void)
{
    size_t size = (size_t)NSTUBS * STUB_SIZE;
    unsigned char *code = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) return 0;
    for (int i = 0; i < NSTUBS; i++) {
        unsigned char *p = code + (size_t)i * STUB_SIZE;
        p = emit(p, "\xF3\x0F\x1E\xFA", 4);                                  /* endbr64 */
        p = emit(p, "\x49\xBB", 2), p = emit64(p, &g_deferred);              /* movabs r11, &g_deferred */
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
    flush_all();
    pthread_mutex_lock(&fc_mu);
    for (int i = 0; i < FCACHE; i++) free(g_fcache[i].off), free(g_fcache[i].sz);
    memset(g_fcache, 0, sizeof g_fcache);
    pthread_mutex_unlock(&fc_mu);
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
static void *stub_for(void *real, const char *name)
{
    if (!real || !g_defer || noflush(name) || is_stub(real) || real == (void *)unload_module ||
        real == (void *)unload_library || real == (void *)kernel_set_attr || real == (void *)func_set_attr)
        return real;
    if (!strcmp(name, "cuModuleUnload") || !strcmp(name, "cuLibraryUnload")) {
        void **slot = name[2] == 'M' ? &g_unload_mod : &g_unload_lib, *none = NULL;
        if (__atomic_compare_exchange_n(slot, &none, real, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) || none == real)
            return name[2] == 'M' ? (void *)unload_module : (void *)unload_library;
    }
    pthread_mutex_lock(&stub_mu);
    void *r = real;
    if (!g_stub_code && !stubs_make()) {
        if (g_stubs_ok >= 0) xlog(2, "xq: no trampolines (not x86-64, or no executable memory); launches are never deferred");
        ST(&g_stubs_ok, -1);
    } else if (LD(&g_stubs_ok) >= 0) {
        uint32_t i = 0;
        while (i < g_nstubs && g_stub_target[i] != real) i++;
        if (i == g_nstubs && g_nstubs < NSTUBS) g_stub_name[g_nstubs] = strdup(name), g_stub_target[g_nstubs++] = real;
        if (i < g_nstubs) {
            r = g_stub_code + (size_t)i * STUB_SIZE;
            if (!g_stubs_ok) ST(&g_stubs_ok, 1);
            /* the attribute setters: our wrappers, with the trampoline's index for the real one */
            int *wi = !strcmp(name, "cuKernelSetAttribute") ? &g_kset_i : !strcmp(name, "cuFuncSetAttribute") ? &g_fset_i : NULL;
            if (wi && (*wi < 0 || *wi == (int)i)) {
                ST(wi, (int)i);
                r = wi == &g_kset_i ? (void *)kernel_set_attr : (void *)func_set_attr;
            }
        } else { /* an entry point handed out bare could see deferred work: defer no more */
            xlog(1, "xq: more than %d driver entry points; launches are no longer deferred", NSTUBS);
            ST(&g_stubs_ok, -1);
        }
    }
    pthread_mutex_unlock(&stub_mu);
    return r;
}

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

static int is_stub(void *p);
static int is_ours(void *p)
{
    if (is_stub(p)) return 1;
    if (p == G1x.fn || p == G1a.fn || p == G2x.fn || p == G2a.fn || p == (void *)dlsym) return 1;
    if (p == (void *)kernel_set_attr || p == (void *)func_set_attr) return 1;
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
    if (sym[0] == 'c' && sym[1] == 'u') *pfn = stub_for(*pfn, sym);
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
    if (!dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm) return real_dlsym(RTLD_NEXT, name);
    for (struct link_map *l = lm->l_next; l; l = l->l_next) {
        if (!l->l_name || !*l->l_name) continue; /* the vDSO */
        void *h = dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        void *r = real_dlsym(h, name);
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
    if (!LD(&g_real_dlsym)) real_dlsym(RTLD_DEFAULT, "dlsym"); /* resolves glibc's */
    return (void *)LD(&g_real_dlsym);
}
#if defined(__x86_64__)
#define DLSYM_C xq_dlsym_c
#define DLSYM_VIS __attribute__((used, visibility("hidden")))
__attribute__((used, visibility("hidden"))) void *xq_dlsym_next(void)
{
    if (!LD(&g_real_dlsym)) real_dlsym(RTLD_DEFAULT, "dlsym"); /* resolves glibc's */
    return (void *)LD(&g_real_dlsym);
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
/* Names that are not the driver's go to the next dlsym after us (libxq-hip's when it is preloaded
 * after us: it answers HIP names from a libamdhip64 handle with its wrappers; else glibc's). */
static void *chain_dlsym(void *handle, const char *name)
{
    static dlsym_t next;
    dlsym_t n = LD(&next);
    if (!n) {
        n = (dlsym_t)real_dlsym(RTLD_NEXT, "dlsym");
        if (!n || n == (dlsym_t)dlsym) n = (dlsym_t)xq_glibc_dlsym();
        if (!n) return NULL;
        ST(&next, n);
    }
    return n(handle, name);
}

DLSYM_VIS void *DLSYM_C(void *handle, const char *name)
{
    if (handle != RTLD_NEXT && name && (name[0] != 'c' || name[1] != 'u')) return chain_dlsym(handle, name);
    void *r = handle == RTLD_NEXT ? next_after(__builtin_return_address(0), name) : real_dlsym(handle, name);
    if (!r || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' || name[2] > 'Z') return r;
    if (!strcmp(name, "cuGetProcAddress")) return adopt(&G1x, r, name);
    if (!strcmp(name, "cuGetProcAddress_v2")) return adopt(&G2x, r, name);
    for (wdef *d = W; d < W + W_COUNT; d++) {
        size_t n = strlen(d->sym);
        if (strncmp(name, d->sym, n)) continue;
        if (!name[n]) return adopt(&d->s[0], r, name);
        if (d->has_ptsz && !strcmp(name + n, "_ptsz")) return adopt(&d->s[1], r, name);
    }
    return in_driver(r) ? stub_for(r, name) : r;
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
    g_beat = (xw_beat){0}, g_frozen = 0;
    memset(g_hash, 0, sizeof g_hash); /* the parent's streams are not the child's: leak them */
    g_free = NULL, g_all = NULL, t_ptds = NULL;
    g_words = NULL; /* the parent's registrations (its pages are not even mapped here: MADV_DONTFORK) */
    pthread_mutex_init(&words_mu, NULL);
    g_tabgen++;
    g_busy = g_owed = g_closing = g_limit_waiters = g_captures = 0;
    g_deferred = g_legacy_deferred = g_dq_waiters = 0; /* the parent's deferred launches are its own */
    pthread_mutex_init(&fc_mu, NULL);
    pthread_mutex_init(&stub_mu, NULL);
    pthread_mutex_init(&kset_mu, NULL);
    g_capn = 0;
    g_tracker_on = g_tracker_parked = 0;
    t_tid = 0;
}

__attribute__((constructor)) static void xq_init(void)
{
    const char *v = getenv("XQ_LOG");
    if (v && *v >= '0' && *v <= '9') g_log = atoi(v);
    v = getenv("XQ_DEFER"); /* on unless XQ_DEFER=0 */
    g_defer = 1;
    if (v && *v) {
        if (!strcmp(v, "0")) g_defer = 0;
        else if (strcmp(v, "1")) xlog(1, "xq: ignoring XQ_DEFER='%s': not 0 or 1; launches are deferred", v);
    }
    v = getenv("XQ_ATTR_WAIT"); /* kernel (the default) or all */
    if (v && *v) {
        if (!strcmp(v, "all")) g_attr_all = 1;
        else if (strcmp(v, "kernel")) xlog(1, "xq: ignoring XQ_ATTR_WAIT='%s': not kernel or all", v);
    }
    pthread_key_create(&g_ptds_key, ptds_thread_exit);
    pthread_atfork(NULL, NULL, atfork_child);
    space_setup();
}
