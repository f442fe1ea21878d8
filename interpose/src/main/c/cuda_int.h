/*
 * cuda_int.h: what the translation units of libxq-cuda.so share. The library makes every CUDA
 * stream of an unmodified process a queue of the XQ node (docs/processes.md; LD_PRELOAD).
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
 * Lock order: xqc_session.mu -> xqc_tab_mu -> xstream.mu -> xqc_session.send_mu (each optional).
 *
 * The translation units, by job:
 *   cuda_hooks.c      the exported (interposed) entry points, cuGetProcAddress, dlsym, graph
 *                     capture, the constructor and fork
 *   cuda_driver.c     glibc's dlsym, the driver entry points the interposer calls itself, options
 *   cuda_gate.c       the launch gate: a launch waits, defers or goes; marks behind launches
 *   cuda_defer.c      deferred launches: the per-stream host queue, draining it, flush_all
 *   cuda_stubs.c      trampolines handed out for every other entry point; function attributes
 *   cuda_streams.c    the stream table
 *   cuda_devices.c    visible-device mapping, PCI bus ids, multiprocessor counts, launch widths
 *   cuda_words.c      page-locked words: memop completion words and level 2 stall words
 *   cuda_estimates.c  command costs and timed samples
 *   cuda_tracker.c    the tracker thread: completions, WAKE pacing, closing streams
 *   cuda_session.c    the session with the node (xq_wire.h) and the reader thread
 *   cuda_narrow.c     narrowing: launches into green contexts
 *   cuda_diag.c       the XQ_LOG=2 summary at exit
 *
 * Everything here is hidden (the library is built with -fvisibility=hidden); names shared between
 * translation units start with xqc_. Small helpers on the launch path are static inline here.
 */
#ifndef XQ_CUDA_INT_H
#define XQ_CUDA_INT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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
#include <stddef.h>
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
/* xlog (xq_wire.h) reads the level from the hot flags' line (cuda_int.h: xqc_hot), which every
 * launch reads anyway */
#undef xlog
#define xlog(level, ...)                                          \
    do {                                                          \
        int xl_ = (level);                                        \
        if (xqc_hot.log >= xl_) xlog_at(xl_, __VA_ARGS__);       \
    } while (0)

#pragma GCC visibility push(hidden)

#define XQ_EXPORT __attribute__((visibility("default")))
#define RING 64                      /* events per stream; when full the newest covers more */
#define WAIT_NS 100000000L           /* a held thread looks again after 100 ms at most */
#define WAKE_GAP_NS 10000ull         /* WAKE lines at most every 10 us: the node refuses over 200k/s */
#define RETRY_S 1                    /* reconnect period */
#define POLL_LIMIT_NS 20000ull       /* tracker: looks at a stream this often while launchers wait on a limit */
#define POLL_NS 100000ull            /* and this often otherwise */
#define MEMOP_LIMIT_NS 5000ull       /* the same for XQ_COMPLETION=memop streams (a look is a load) */
#define MEMOP_NS 50000ull
/* tracker: a stream whose oldest mark covers AHEAD_MIN_NS of estimated work or more is looked at
 * every POLL_NS until AHEAD_NUM/AHEAD_DEN of that work could be done (from its launch or the end of
 * the mark before it, whichever is later), and as any other only after that: every MEMOP_LIMIT_NS
 * or POLL_LIMIT_NS while launchers wait on a limit, MEMOP_NS or POLL_NS otherwise
 * (XQ_TRACK_AHEAD=0: so from the start): a GEMM of 21 ms behind a limit was looked at every 5 us,
 * some 4,000 wakes of the tracker a kernel, 18-47 % of a core (session 107's runs) */
#define AHEAD_MIN_NS 2000000ull
#define AHEAD_NUM 15
#define AHEAD_DEN 16
extern int xqc_ahead;
/* est_full: for this long after a run on the whole device, narrowed runs scaled to the whole do not
 * raise it (cuda_gate.c, xqc_account_done) */
#define FULL_TRUST_NS 3000000000ull
#define PARK_AFTER_NS 5000000ull     /* tracker: parks after this long with nothing in flight */
/* tracker: kept from looking this long (20 of its looks), it cannot say when a batch it then finds
 * done ended, and the span teaches nothing (cuda_tracker.c, xqc_poll_stream) */
#define BLIND_NS 2000000ull
/* and a batch that began before such an absence and is found done this soon after it is counted
 * unmeasured too: what a GPU ran meanwhile is found at the first look, but a device that stops
 * with the process (the fake drivers' threads) may take some milliseconds to be run again */
#define AFTER_BLIND_NS 10000000ull
#define BUCKETS 256
#define FREE_MARK_NS 2000000ull      /* memop streams with no limits in force: a mark every 2 ms of work (cuda_gate.c) */
#define NSTUBS 2048                  /* trampolines (cuda_stubs.c) */
#define NDEV 64                      /* devices whose multiprocessor counts are kept (cuda_devices.c) */

#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)

/* The process-wide flags every launch reads, on one cache line of their own: on a GPU host the
 * driver and the framework run between two launches and each line the interposer reads is a miss
 * (about 1 us a launch with them spread over a dozen lines, H200 host, session 48). Written
 * rarely (an attach, a capture, exit, a deferral); the counters other threads bump all the time
 * (xqc_busy, xqc_owed, ...) stay apart. Each keeps its old name (the macros below). */
struct xqc_hot_s {
    uint32_t state;    /* odd: attached; bumped at every attach and detach */
    uint32_t tabgen;   /* bumped when a stream is forgotten: thread caches go stale */
    uint32_t captures; /* captures begun through the wrapped calls, not yet ended */
    uint32_t exiting;  /* exit() began: the driver is being torn down */
    uint32_t deferred; /* launches deferred, all streams (the trampolines read it) */
    uint32_t tracker_on;
    int cu_state;      /* 0 unresolved, 1 ready, -1 missing: run untracked */
    int stubs_ok;      /* 1: trampolines handed out and none bare: deferral may happen */
    int narrow;        /* the node said this process may be narrowed (SPACE ... narrow) */
    int narrow_state;  /* 0 usable, -1 off: the driver lacks the calls, or one failed */
    int log;           /* XQ_LOG (xq_log_level's copy, read by xlog: one line fewer a launch) */
    int started;       /* xqc_session.started's copy (a launch's first question) */
    /* flags of one byte: with them the struct is one cache line (it was 68 bytes, started on a second) */
    int8_t marks_all;  /* XQ_MARKS=all: a memop mark behind every launch, not sparse ones */
    int8_t defer;      /* XQ_DEFER=1 */
    int8_t timed;      /* XQ_ESTIMATES=timed (the default): kinds learn from timing events around samples */
    int8_t final;      /* at exit: quiet streams are queried at once */
    int8_t diag;       /* XQ_LOG=2 or more: the diagnostics' counters are kept */
    int8_t bypass;     /* xq_bench_bypass(1): gated calls pass straight through, untracked (a measurement) */
    int8_t stall;      /* XQ_STALL=1: level 2, launched work of a held stream stalls on the device (cuda_words.c) */
    int8_t lean_diag;  /* XQ_LOG_LEAN=1: with diag, launches nothing can hold or change still take the lean path */
    /* captures about to begin, waiting for the deferred launches to be made (cuda_hooks.c,
     * capture_pre): nothing more is deferred meanwhile, and the tracker still watches */
    int8_t capture_wait;
    /* XQ_STRETCH: 0 (=1, the default) the width word tells the stream's current stretch beside its widest; 1 (=0) its
     * widest as its stretch (before session 116); 2 (=reserve) its stretch as its widest too (an experiment: the node
     * then reserves for a stream what its current stretch fills) */
    int8_t stretch_mode;
    /* XQ_TIME_LAUNCHES=1: each thread's time inside the driver's launch calls is counted (xq_bench_launch_time) */
    int8_t time_launch;
    uint32_t ctx_epoch; /* bumped when a context may have ended: every thread's cached current context is dropped */
} __attribute__((aligned(64)));
extern struct xqc_hot_s xqc_hot;
/* XQ_TIME_LAUNCHES=1: this thread's time inside the driver's launch calls (ns) and how many it made
 * (cuda_hooks.c's deferrable calls, made by the application's thread: lean or through the gate) */
extern __thread uint64_t xqc_t_drv_ns, xqc_t_drv_n;
extern uint64_t xqc_lean_untimed; /* XQ_LOG_LEAN=1: lean launches the diagnostics' accounts leave out */
_Static_assert(sizeof(struct xqc_hot_s) == 64, "the hot flags fill one cache line");
#define xqc_state (xqc_hot.state)
#define xqc_tabgen (xqc_hot.tabgen)
#define xqc_captures (xqc_hot.captures)
#define xqc_capture_wait (xqc_hot.capture_wait)
#define xqc_exiting (xqc_hot.exiting)
#define xqc_deferred (xqc_hot.deferred)
#define xqc_tracker_on (xqc_hot.tracker_on)
#define xqc_cu_state (xqc_hot.cu_state)
#define xqc_marks_all (xqc_hot.marks_all)
#define xqc_stubs_ok (xqc_hot.stubs_ok)
#define xqc_defer (xqc_hot.defer)
#define xqc_timed (xqc_hot.timed)
#define xqc_narrow (xqc_hot.narrow)
#define xqc_narrow_state (xqc_hot.narrow_state)
#define xqc_final (xqc_hot.final)
#define xqc_stall (xqc_hot.stall)

/* A launch's path is laid out for the common case (docs/processes.md, "The launch gate": the
 * launch path's layout): what it
 * always runs is in a few functions marked hot (kept together in .text.hot), what it runs rarely
 * in cold ones out of line; a launch on a GPU host finds all of its code cold (the framework runs
 * between two launches), and fetched ~95 instruction-cache lines where a dozen functions mixed
 * both. */
#define XQ_LIKELY(x) __builtin_expect(!!(x), 1)
#define XQ_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define XQ_HOT __attribute__((hot))
#define XQ_COLD __attribute__((noinline, cold))

/* ------------------------------------------------------------------ small helpers */

/* xlog, now_ns: xq_wire.h */

static inline void futex_wait(uint32_t *w, uint32_t val, long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    syscall(SYS_futex, w, FUTEX_WAIT, val, &ts, NULL, 0);
}

static inline void futex_wake(uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0); }

/* A stream's lock (xstream.mu): taken twice by every launch, held for a few hundred instructions,
 * seldom contended (the launching threads and the tracker). One locked instruction each way;
 * pthread_mutex_lock/unlock cost a launch ~190 instructions and two more functions' cache lines.
 * w: 0 free, 1 held, 2 held with a thread asleep on it (cuda_streams.c: the slow paths). */
typedef struct {
    uint32_t w;
} xq_mu;
void xqc_mu_wait(xq_mu *m);
void xqc_mu_wake(xq_mu *m);
static inline void mu_lock(xq_mu *m)
{
    uint32_t z = 0;
    if (!__atomic_compare_exchange_n(&m->w, &z, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) xqc_mu_wait(m);
}
static inline void mu_unlock(xq_mu *m)
{
    if (__atomic_exchange_n(&m->w, 0, __ATOMIC_RELEASE) == 2) xqc_mu_wake(m);
}

static inline void sleep_ns(long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR) {
    }
}

extern __thread pid_t xqc_t_tid; /* cuda_driver.c */
static inline pid_t my_tid(void) { return xqc_t_tid ? xqc_t_tid : (xqc_t_tid = (pid_t)syscall(SYS_gettid)); }

/* ------------------------------------------------------------------ the driver (cuda_driver.c) */

typedef void *(*dlsym_t)(void *, const char *);

/* The driver entry points the interposer calls itself (never wrapped ones). */
struct xqc_driver {
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
    CUresult (*OccupancyBlocks)(int *, CUfunction, int, size_t); /* XQ_WIDTH=occupancy (optional) */
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
    CUresult (*GreenGetResource)(void *, void *, int); /* a part at an offset (optional: without it, equal parts only) */
    CUresult (*WaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*StreamSync)(CUstream);
};
extern struct xqc_driver xqc_cu;

/* hint: a real driver function; its library is libcuda even when it was loaded under another name. */
int xqc_cu_resolve(void *hint);
static inline int cu_ready(void *hint)
{
    int s = LD(&xqc_cu_state);
    if (s) return s > 0;
    return xqc_cu_resolve(hint);
}

/* ------------------------------------------------------------------ streams */

enum { K_EXPLICIT, K_LEGACY, K_PTDS };

typedef struct ring_entry {
    CUevent ev;        /* created on first use, kept: the per-stream event pool */
    uint64_t seq;      /* memop: done once the stream's word reached it; 0: watch ev */
    uint64_t t_launch; /* launch of the first command it covers */
    uint64_t t_end;    /* launch of the last one (the device lag: cuda_tracker.c) */
    uint32_t count;    /* commands it covers */
    uint64_t key;      /* cost key of its one command (0: several, or none) */
    uint64_t est;      /* the estimates its commands were launched with, summed */
    uint32_t scale;    /* the share of the device its first command ran on, in 1/1024 (1024: all of it) */
    uint64_t hz;       /* XQ_LOG=3: the arrival guard's horizon its first command went under (0: none) */
} ring_entry;

/* XQ_LOG=3: a stream's long commands (an estimate or a run of a millisecond or more), as the
 * tracker saw them end, printed at exit for a timeline beside another tenant's requests */
typedef struct tl_entry {
    uint64_t t_launch, from, end, est, hz;
    uint32_t count, scale;
} tl_entry;
#define TL_MAX 4096

/* XQ_LOG=3: one busy period of a stream as its slot showed it to the node: its arrival stamp
 * (ready_since_ns) and when the slot next showed it idle (0 while it is not), printed at exit
 * beside the timeline, for replaying the node's view of a tenant (its short runs are not on the
 * timeline, so gaps there need not be idles) */
typedef struct arr_entry {
    uint64_t arrived, idle;
    uint32_t width; /* the slot's width word then (xqc_width_word): what the node read of the stream's width */
} arr_entry;
#define ARR_MAX 16384

#define SMP 32
#define SMP_DEAD UINT64_MAX
typedef struct xstream {
    /* What a launch reads and writes, first and together: four cache lines (the record is
     * allocated on a line's boundary, cuda_streams.c), where they were spread over nine; each is
     * cold at every launch on a GPU host, where the framework runs between two launches. They are
     * grouped by who writes them, so that the tracker's looks (every 5-100 us while work is in
     * flight) take no line a launch writes away from the launching thread's core, but one:
     * line 0, the lock and the counts every launch changes (the tracker takes the lock only when
     * it found work done or asks the driver about a quiet tail); line 1, the unmarked tail (a look
     * reads it); line 2, read-mostly (what the tracker reads every time it wakes, and launches
     * read: written at a mark, a registration, a completion seen); line 3, the completions' counts. */
    xq_mu mu;
    /* the truth, under mu */
    uint32_t pending, in_flight, active, throttled, waiters;
    uint32_t dq_n;    /* deferred launches (dq_head..dq_tail) */
    int tracked;      /* counted in xqc_busy: entries in the ring or a tail */
    /* narrowing: the widest recent launches (multiprocessors; this second and the last one, under mu) */
    uint16_t w_cur, w_prev;
    /* and the widest of the current stretch of work (this bucket of XQC_STRETCH_NS of launching and
     * the last one); the buckets' starts in 1.024 us units, wrapping (about 73 minutes) */
    uint16_t s_cur, s_prev;
    uint64_t launched;
    uint64_t fl_est; /* the estimates of the commands in flight, summed: what the window bounds */
    uint32_t w_at, s_at;
    /* line 1: memop marks are sparse (each costs the GPU about 2 us): the launches made since the
     * last mark, which none covers yet: how many, their estimates summed, the first one's launch
     * time and cost key; tail_gen is bumped at every mark (a release store: the tracker reads it
     * without the lock, then tail_n) */
    uint32_t tail_n, tail_gen, tail_scale;
    int smp_off;      /* timing failed on this stream: batch estimates, as XQ_ESTIMATES=batch */
    uint64_t tail_est, tail_t, tail_key;
    uint64_t last_launch; /* when the stream last launched */
    uint64_t ready_since;
    CUstream h; /* explicit handle; NULL for the default streams */
    /* line 2, read-mostly */
    int kind;
    uint32_t gen; /* session: gen, slot and shm are valid while gen == xqc_state */
    int slot;
    int cmode;        /* 1: memop (word; mseq: the last value enqueued), -1: memop failed, 0: events */
    /* ring: oldest entry (the tracker's alone), entries (a mark adds one with a release store after
     * writing it: the tracker reads n without the lock) */
    uint32_t head, n;
    xq_slot *shm;
    CUcontext ctx;
    struct cword *word;
    uint64_t mseq;
    uint32_t cseq;
    uint32_t sms_c; /* the device's multiprocessors (tps_c: threads per multiprocessor), once known (0: not yet) */
    /* line 3 */
    uint64_t completed, failed, run_ns, estimate_ns, last_done;
    /* what the node sees as the stream's average command (the slot's estimate_ns): as estimate_ns,
     * with the runs of narrowed launches scaled to the whole device (by the share they ran on), so
     * that the node compares one width with another (a 21 ms GEMM took 42 ms on 64 of 132) */
    uint64_t est_full;
    uint64_t marks;
    uint32_t tps_c;
    CUdevice cudev; /* the driver's handle of the device (device: its physical ordinal) */
    /* the rest */
    struct xstream *next_all;  /* every struct ever made; the list only grows (tracker walks it) */
    struct xstream *next_hash; /* bucket chain, or the free list */
    struct xstream *next_ptds; /* this thread's per-thread default streams */
    pid_t tid; /* K_PTDS: the owning thread */
    int in_use, closing;
    int device, prio, least, greatest;
    char label[16];
    char pci[24]; /* the device's PCI bus id, dddd:bb:dd.0; "" when the driver does not say */
    uint64_t full_at; /* when a run on the whole device was last accounted (0: none yet) */
    uint64_t query_at;    /* tracker only: when it may query a quiet stream's tail again */
    uint64_t queries; /* XQ_LOG=2 */
    uint64_t by_est[4];      /* XQ_LOG=2: launches by estimate: < 100 us, < 300 us, < 1 ms, longer */
    int gate_seen;           /* tracker only: the gate as it last saw it */
    uint32_t closes;         /* XQ_LOG=2: times the tracker saw the gate close, with work in flight or not */
    uint32_t nleft;          /* XQ_LOG=2: work left in flight each time the tracker saw the gate close (left_us) */
    /* XQ_LOG=2: those closes by the arrival guard of the last command admitted (the node lifts
     * the guard as it closes the gate, so the guard at the close says nothing): none set, set but
     * lapsed when that command went (the other queue later than its until), in force and the
     * close before its horizon (an arrival earlier than foreseen), in force and the close past it
     * (work that ran over its estimates); adm_*: that guard (0: none) and when the command went;
     * lapse_us: for the lapsed ones, how long after the guard's until the gate closed */
    uint32_t close_guard[4];
    uint64_t adm_hz, adm_until, adm_t, adm_guarded_t;
    uint32_t nlapse, nunguarded; /* lapse_us, unguarded_us */
    uint32_t wseq;      /* futex word of the threads held on this stream */
    uint32_t wake_owed; /* a WAKE delayed by the pacing */
    /* the device lag (cuda_tracker.c): how far the ends of the busy period's marked batches fell
     * behind the launch of their last command, at most (ns, under mu), and that of the last busy
     * period, for its idle WAKE line (us + 1; 0: none; stored and taken atomically) */
    uint64_t lag_max;
    uint32_t lag_pend;
    uint64_t poll_at;   /* tracker only: when to look next */
    uint64_t polled;    /* tracker only: when it looked last */
    /* deferred launches, under mu; sub_mu: held by the one thread making them (in order) */
    pthread_mutex_t sub_mu;
    struct dop *dq_head, *dq_tail;
    int dq_lw; /* counted in xqc_limit_waiters: its head waits on the limits */
    /* the watchdog (cuda_tracker.c, unstick_watch): let go whatever the node's gate says, because
     * a stream of the process the node lets launch has made no progress for XQ_UNSTICK_MS with work
     * in flight (set and cleared by the tracker; read by gate_wait and xqc_drain); wd_done, wd_at:
     * the completions the tracker last saw and since when (tracker only); unstuck: how often */
    uint32_t unstick, unstuck;
    uint64_t wd_done, wd_at;
    /* XQ_LOG=2 diagnostics, under mu: refusals by the threshold / the window / no estimate yet /
     * the arrival guard / the closed gate; the time nothing was in flight while work waited in the
     * process (from dry_at), told by what refused it meanwhile: the gate (wait_held_ns), else the arrival
     * guard (wait_guarded_ns), else nothing (dry_ns: the node's reaction, a launch on its way) */
    uint64_t why_thr, why_win, why_est, why_guard, guard_seen, why_held, dry_at, dry_ns;
    uint64_t wait_held0, wait_guard0, wait_held_ns, wait_guarded_ns;
    /* XQ_LOG=2: xqc_absent_ns when the wait began; the part of waits the process spent stopped */
    uint64_t wait_absent0, wait_stopped_ns;
    uint64_t est_sum;        /* XQ_LOG=2: estimated work launched (what the window was charged) */
    uint64_t left_at[6];     /* XQ_LOG=2: launches by the estimated work left in flight when made */
    /* timed samples (XQ_ESTIMATES=timed): a command of a kind due to be measured goes between two
     * timing events; the tracker reads their elapsed time once the stream completed it (ord: its
     * launch's number in launched; 0 while it is being launched, SMP_DEAD when it failed).
     * Events are created on first use and kept, per slot. Under mu. */
    uint32_t smp_head, smp_n; /* smp[], at the end */
    uint64_t timed, smp_skip; /* XQ_LOG=2: samples read; due ones not taken (stream idle, slots full) */
    /* XQ_STALL=1: a word of page-locked host memory (0 go, 1 hold) that guarded launches wait on;
     * written by the tracker from the node's gate; held_ns: when the gate was last seen closed */
    uint32_t *stall;
    CUdeviceptr stall_dev;
    uint64_t held_ns;
    int stall_off;
    uint64_t stall_guards, stall_holds; /* XQ_LOG=2 */
    /* narrowing: the green streams made for it (by multiprocessor count; never destroyed: another
     * thread may be launching into one) */
    struct { int off, n; CUstream s; } green[8];
    uint32_t green_next;
    uint64_t narrowed; /* XQ_LOG=2: launches made narrow */
    ring_entry ring[RING];
    tl_entry *tl; /* XQ_LOG=3, under mu: made on first use, never freed */
    uint32_t ntl;
    arr_entry *arr; /* XQ_LOG=3, under mu: its busy periods as the node was shown them; made on first use, never freed */
    uint32_t narr;
    uint64_t arr_shown; /* the arrival stamp last copied into the slot */
    /* XQ_LOG=2, under mu: a close with work in flight not yet drained: when the tracker saw it and
     * the work it estimated left then (drain_from 0: none); each such close that drained before the
     * gate opened again: how long the work then in flight really took to end (drain_us) and by how
     * much that passed the estimate (over_us, negative when it ended sooner) */
    uint64_t drain_from, drain_est;
    uint32_t ndrain, nreopen;
    /* the arrival guard's pad (cuda_gate.c, guarded()): how far this stream's work ran past a
     * guard's horizon lately, kept clear on top of its estimates. g_hz, g_until: the guard the
     * last command admitted under one went under (g_hz 0: the last check found none in force);
     * at a close past that horizon with work in flight, pad_hz holds it until the work has ended
     * (the tracker: the pad rises to how far past it that was, PAD_MAX_NS at most; seen more
     * than PAD_STALE_NS past it, not learnt from), and each close past it that found nothing in
     * flight wears the pad down by 1/PAD_WEAR. Under mu. */
    uint64_t pad_ns, g_hz, g_until, pad_hz;
    /* how often it rose, wore down, and was not raised for an end seen too late (XQ_LOG=2) */
    uint32_t pads_up, pads_down, pads_late;
    /* XQ_LOG=2 arrays, last: the fields a launch touches stay on few cache lines (each launch
     * finds them cold on a GPU host, where the driver and the framework run between two launches) */
    struct { CUevent a, b; uint64_t key, ord; } smp[SMP];
    uint32_t left_us[1024];
    uint32_t lapse_us[256];
    uint32_t unguarded_us[256]; /* for the closes with none: how long before the close a launch last went under a guard */
    uint32_t drain_us[256];
    int32_t over_us[256];
} __attribute__((aligned(64))) xstream;
_Static_assert(offsetof(xstream, tail_n) == 64 && offsetof(xstream, kind) == 128 && offsetof(xstream, completed) == 192,
               "a launch's lines, grouped by who writes them");

typedef struct gate {
    xstream *st;
    uint64_t t;
    uint64_t ck, est; /* the launch's cost key (its kind) and the estimate it is launched with */
    uint64_t wk;      /* the kind at the width it is launched at (cuda_estimates.c: xqc_cost_get_w) */
    uint32_t scale;   /* that width's share of the device, 1/1024 */
    void *key; /* the kernel or graph launched: known to launch, once it did */
    int waited;
    int isolate; /* its kind is due to be measured (a kind not measured yet, or its sample is due);
                  * once launched: marked alone (batch estimates) */
    int smp;     /* a timed sample: its slot + 1 (0: none) */
    int wake, kick; /* owed once the launch is made: a WAKE to the node, a kick to the tracker */
    uint64_t threads; /* the launch's threads (UINT64_MAX: a graph; 0: not a kernel) */
    int nw, noff;     /* narrowed when let go: on nw multiprocessors from the noff-th (nw 0: as asked) */
    uint64_t wait_ns; /* XQ_LOG=2: how long this call waited to launch (the node's decision, not our cost) */
    uint64_t wait_by[6]; /* XQ_LOG=2: that wait by what held it first: 0 the deferred launches of the process (a call
                          * that cannot be deferred), 1 the gate, 2 a limit, 3 deferred launches ahead on its stream,
                          * 4 the arrival guard, 5 a full deferral queue */
    uint64_t drain_ns; /* XQ_LOG=2: deferred launches made on this thread meanwhile (their own driver time) */
    int id;            /* XQ_LOG=2: the entry point (cuda_hooks.c's W_ index), for the account by entry point */
    void *ra;          /* XQ_LOG=2: the caller's return address (the library that made the call) */
    int nd;            /* XQ_LOG=2: why it was not deferred (ND_WHY_*; 0: it could have been, or is no launch) */
} gate;
/* XQ_LOG=2: why a call that waited for the process's deferred launches was not deferred itself */
enum { ND_WHY_NONE, ND_WHY_ENTRY, ND_WHY_PTDS, ND_WHY_OFF, ND_WHY_BUILD, ND_WHY_COUNT };

typedef struct cword {
    struct cword *next;
    uint64_t *host;
    CUdeviceptr dev;
} cword;

/* ------------------------------------------------------------------ deferred launches */

#define DQ_MAX 4096  /* deferred launches per stream; past it the launching thread waits */
#define FCACHE 4096  /* functions and graphs known (open addressing) */

enum { D_KERNEL, D_KERNEL_EX, D_GRAPH, D_SET8, D_SET16, D_SET32, D_HTOD, D_DTOD };
/* XQ_DEFER_COPIES: the most bytes of a host-to-device copy deferred (its source copied into the
 * deferred entry at the call); 0: no copy deferred. Device-to-device copies are deferred whatever
 * their size unless it is 0. */
extern size_t xqc_defer_copy_max;
extern uint64_t xqc_unstick_ns; /* XQ_UNSTICK_MS (1000) in ns; 0: no watchdog (cuda_tracker.c) */
#define XQ_DEFER_COPY_DEFAULT (256u << 10)
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
        struct { CUdeviceptr dst, src; const void *hsrc; size_t n; CUstream h; } cp; /* hsrc: in blob (D_HTOD) */
    } a;
    void **params;
    void **extra; /* a kernel's parameters packed in one buffer (CU_LAUNCH_PARAM_BUFFER_*): its copy in blob */
    unsigned char blob[]; /* launch attributes; parameter pointers, then their values (or the extra list, its size, the buffer) */
} dop;
/* XQ_LOG=2: kernel launches that could not be deferred, by why (cuda_defer.c) */
enum { ND_EXTRA, ND_UNKNOWN, ND_LAYOUT, ND_BIG, ND_COUNT };
extern uint64_t xqc_nodefer[ND_COUNT];

/* What is known of a kernel or graph: launched once without an error (only those are deferred:
 * a launch the driver would refuse is refused to the caller, at once), and a kernel's parameter
 * layout (np < 0: unknown, never deferred). */
typedef struct finfo {
    void *key;
    int ok, np;
    uint32_t total;
    uint32_t *off, *sz;
} finfo;

/* ------------------------------------------------------------------ small helpers of the launch path */

/* Cost keys (cuda_estimates.c): a kernel by its function and shape, anything else by its entry
 * point and size class. */
static inline uint64_t cost_key(const void *what, uint64_t shape)
{
    uint64_t k = (uint64_t)(uintptr_t)what * 0x9E3779B97F4A7C15ull ^ (shape + 1) * 0xC2B2AE3D27D4EB4Full;
    return k ? k : 1;
}

static inline uint64_t size_class(uint64_t n)
{
    return n ? 64 - (uint64_t)__builtin_clzll(n) : 0;
}

/* The launch of timed sample slot i ended: launched (its number in st->launched, key its kind) or
 * not (0). Caller holds st->mu. */
static inline void smp_launched(xstream *st, int i, uint64_t key, int ok)
{
    if (i < 0) return;
    st->smp[i].key = key;
    st->smp[i].ord = ok ? st->launched : SMP_DEAD;
}

struct xqc_devinfo { int sms, tps; };
extern struct xqc_devinfo xqc_devinfo[NDEV];
static inline int xqc_dev_sms_known(CUdevice d) { return d >= 0 && d < NDEV ? LD(&xqc_devinfo[d].sms) : 0; }

/* ------------------------------------------------------------------ the session (cuda_session.c) */

struct xqc_session {
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
    int lag_ok;        /* the node's OK said "lag": its WAKE lines may carry a busy period's device lag (xqc_send_wake) */
    int waits_ok;      /* the node's OK said "waits": it takes WAITS lines (xqc_host_wait_end) */
};
extern struct xqc_session xqc_session;
/* The host's waits on the device with work in flight, counted for a node whose OK said "waits" (cuStreamSynchronize,
 * cuCtxSynchronize, cuEventSynchronize): xqc_host_wait_begin before the driver's call (flush_real not
 * NULL: wait for deferred launches first, counted for that entry point), xqc_host_wait_end after it (tells the node the count, WAITS <n>, at most
 * every XQC_WAITS_EVERY_NS and only where it changed) */
extern uint64_t xqc_waits;
#define XQC_WAITS_EVERY_NS 20000000ull
void xqc_host_wait_begin(void *flush_real);
void xqc_waits_summary(void); /* XQ_LOG=2 */
void xqc_flush_entry(void *real); /* cuda_stubs.c */
void xqc_host_wait_end(void);

/* ------------------------------------------------------------------ shared between translation units */

/* cuda_driver.c */
void xqc_spawn(void *(*fn)(void *), const char *name);
void xqc_threads_cpu(char *buf, size_t len);
void xqc_threads_reset(void);
extern dlsym_t xqc_dlsym_glibc;
void *xqc_real_dlsym(void *h, const char *name);
extern int xqc_memop;     /* XQ_COMPLETION=memop */
extern pthread_mutex_t xqc_cu_mu;

/* cuda_devices.c */
int xqc_physical_device(int dev);
void xqc_pci_bus_id(CUdevice dev, char *out, size_t n);
int xqc_dev_sms(CUdevice d, int *tps);
/* How many threads' worth of the device's multiprocessors a kernel of blocks x bthreads holds
 * (gate.threads; its width is that over the threads a multiprocessor holds). By default its
 * threads. XQ_WIDTH=occupancy (an A/B, off by default): each block counted as the share of a
 * multiprocessor the driver's occupancy gives it (cuOccupancyMaxActiveBlocksPerMultiprocessor:
 * n blocks of its size and shared memory fit one, so a block holds 1/n of it), never less than its
 * threads. Counted by threads, a library's convolution or GEMM of ~200 blocks of 256 threads reads
 * 25 of an H100's 132 multiprocessors, where its shared memory lets one block fit each and it takes
 * the whole device (docs/processes.md, "Widths by occupancy"). Kept per function, block size and
 * shared memory in a table of packed words (xqc_occ_threads, cuda_devices.c). */
extern int xqc_width_occ;
uint64_t xqc_occ_threads(CUfunction f, uint64_t blocks, uint64_t bthreads, size_t shmem);
static inline uint64_t xqc_kthreads(CUfunction f, uint64_t blocks, uint64_t bthreads, size_t shmem)
{
    return XQ_UNLIKELY(LD(&xqc_width_occ)) ? xqc_occ_threads(f, blocks, bthreads, shmem) : blocks * bthreads;
}
/* xqc_dev_sms for st's device, kept in st once known (a launch reads its own stream, not the
 * device table: one cache line fewer a launch). */
static inline int xqc_stream_sms(xstream *st, int *tps)
{
    if (XQ_LIKELY(st->sms_c)) return *tps = (int)st->tps_c, (int)st->sms_c;
    int n = xqc_dev_sms(st->cudev, tps);
    if (n > 0 && *tps > 0) st->tps_c = (uint32_t)*tps, st->sms_c = (uint32_t)n;
    return n;
}
/* A launch of this many threads (UINT64_MAX: a graph, taken as the whole device) was made on st:
 * the widest of its last one to two seconds of launching is what the node reserves for st's queue
 * when it narrows others for it. Seconds of launching, not of the clock: a stream quiet for longer
 * keeps the width it last had, so the first launches after the quiet, a request's first kernels,
 * narrower than its widest, do not shrink the reserve (H200, session 80: an eager decoder's reserve
 * fell from 24 multiprocessors to its first kernels' 2 at its first request after a quiet spell, a
 * trainer beside it ran on all but 8, and the decoder's first five requests took 2.2-2.4 x its
 * median). Caller holds st->mu. */
#define XQC_STRETCH_NS 2000000ull /* a bucket of a stretch's width */
#define XQC_QUIET_NS 5000000ull   /* no launch for this long: the next begins a new stretch */
static inline void xqc_width_note(xstream *st, uint64_t threads, uint64_t now)
{
    int tps, sms = threads ? xqc_stream_sms(st, &tps) : 0;
    if (!sms) return;
    uint64_t w = threads == UINT64_MAX ? (uint64_t)sms : (threads + (uint64_t)tps - 1) / (uint64_t)tps;
    if (w > (uint64_t)sms) w = (uint64_t)sms;
    uint32_t t = (uint32_t)(now >> 10);
    if (XQ_UNLIKELY(t - st->w_at >= 976563u)) { /* a second */
        st->w_prev = st->w_cur; /* the last second that launched, however long ago */
        st->w_cur = 0, st->w_at = t;
    }
    if (w > st->w_cur) st->w_cur = (uint16_t)w;
    /* the current stretch: a launch after XQC_QUIET_NS without one begins a new stretch (a request),
     * taken as wide as the stream has been until two buckets of its own launches say otherwise, so
     * the node holds what it held behind the stream's last wide stretch from its first launch on;
     * then the widest of its last XQC_STRETCH_NS to twice that of launching. A chat server's
     * request (H100, session 116): a prefill across the whole device for a few milliseconds, then
     * tokens of ~115 small launches each; by its widest alone, the node held bf16 training through
     * every token (no step of it done while the server worked, 0.69 of its native rate) */
    if (now - st->last_launch >= XQC_QUIET_NS) { /* last_launch: the one before this (set after this note) */
        st->s_prev = st->w_cur > st->w_prev ? st->w_cur : st->w_prev;
        st->s_cur = 0, st->s_at = t;
    } else if (t - st->s_at >= (uint32_t)(XQC_STRETCH_NS >> 10)) {
        st->s_prev = st->s_cur;
        st->s_cur = 0, st->s_at = t;
    }
    if (w > st->s_cur) st->s_cur = (uint16_t)w;
}

/* cuda_streams.c */
extern pthread_mutex_t xqc_tab_mu;
extern xstream *xqc_hash[BUCKETS], *xqc_free, *xqc_all;
extern pthread_key_t xqc_ptds_key;
extern __thread xstream *xqc_t_ptds; /* this thread's per-thread default streams */
xstream *xqc_stream_find_locked(int kind, CUstream h, CUcontext ctx, pid_t tid);
xstream *xqc_stream_new(int kind, CUstream h, CUcontext ctx, pid_t tid);
void xqc_stream_forget(CUstream h);
void xqc_ptds_thread_exit(void *unused);

/* cuda_words.c */
extern cword *xqc_words; /* unregistered pages */
extern pthread_mutex_t xqc_words_mu;
void xqc_word_put(cword *w, CUcontext ctx);
cword *xqc_word_get(CUdevice dev, const char **why);
void xqc_memop_unavailable(xstream *st, const char *why);
void xqc_stall_set(xstream *st, uint32_t v);
int xqc_stall_open_busy(void);
void xqc_stall_watch(xstream *st, int open_busy);
void xqc_stall_clear_all(void);
void xqc_stall_guard(xstream *st, CUstream h, int ptsz);

/* cuda_session.c */
extern uint64_t xqc_last_wake;
extern xw_beat xqc_beat;    /* the node's heartbeat (xq_wire.h) */
extern uint32_t xqc_frozen; /* the heartbeat stopped: the socket was shut down, the reader detaches */
void xqc_node_look(void);
__attribute__((format(printf, 1, 2))) int xqc_send_line(const char *fmt, ...);
void xqc_mirror_arrivals(xstream *st);
void xqc_register_stream(xstream *st);
void xqc_wake_node(xstream *st);
void xqc_send_wake(xstream *st, int slot);
void xqc_wake_held(xstream *st);
/* XQ_ARRIVAL_DIRECT=1 (off by default: an A/B): a launching thread tells the node of an arrival
 * itself instead of through the tracker (XQ_LOG=2 times both ways: xqc_told_summary) */
extern int xqc_arrival_direct;
void xqc_told_by_tracker(const xstream *st);
void xqc_told_summary(void);
void xqc_space_setup(void);
void xqc_session_start(void);

/* cuda_estimates.c */
uint64_t xqc_cost_get(uint64_t key, int *due);
uint64_t xqc_cost_get_w(uint64_t base, int w, int need, int *due, uint64_t *wk, uint32_t *scale);
uint64_t xqc_cost_lean(uint64_t key);
void xqc_cost_put(uint64_t key, uint64_t run, int timed);
int xqc_smp_take(xstream *st, uint64_t known);
int xqc_smp_record(xstream *st, int i, int end);
void xqc_smp_read(xstream *st, CUcontext c, CUcontext *cur);

/* cuda_gate.c */
extern uint32_t xqc_limit_waiters;
uint64_t xqc_work_left(const xstream *st, uint64_t now, uint64_t *first, uint64_t *credit);
void xqc_note_launch(xstream *st, uint64_t est);
void xqc_note_drained(xstream *st);
/* XQ_GUARD_PAD (on unless 0): the arrival guard learns each stream's pad (xstream.pad_ns) */
extern int xqc_pad_on;
#define PAD_MAX_NS 1000000ull  /* a pad of 1 ms at most: beside a 25 ms beat, 4 % of a stream's time */
#define PAD_STALE_NS 10000000ull /* an end seen this long past the horizon is the process's stop: not learnt from */
#define PAD_WEAR 32            /* each close the guard kept clear wears 1/32 of the pad off */
#define PAD_GRACE_NS 2000000ull /* a close this long after a guard's until still counts as its (the node's reaction) */
int xqc_may_launch(xstream *st, const xq_slot *s, uint64_t est, uint64_t *retry);

/* XQ_LOG=2: from t nothing of st is in flight while work waits in the process (a launch held or
 * deferred). Caller holds st->mu. */
/* XQ_LOG=2: how long the process could not run (a SIGSTOP: a job scheduler's suspend, the mix
 * scenario's paired reading), as its reader thread found its 100 ms looks ending that much late
 * (over ABSENT_NS; cuda_session.c). A wait it spans is the stop's, not what held the stream. */
extern uint64_t xqc_absent_ns;
#define ABSENT_NS 20000000ull

static inline void xqc_wait_begin(xstream *st, uint64_t t)
{
    if (!xqc_hot.diag || st->dry_at) return;
    st->dry_at = t, st->wait_held0 = st->why_held, st->wait_guard0 = st->why_guard;
    st->wait_absent0 = __atomic_load_n(&xqc_absent_ns, __ATOMIC_RELAXED);
}

/* XQ_LOG=2: the wait begun by xqc_wait_begin ends at t (a launch is made): its time goes to what
 * refused the stream meanwhile. Caller holds st->mu. */
static inline void xqc_wait_end(xstream *st, uint64_t t)
{
    if (!xqc_hot.diag || !st->dry_at) return; /* (only XQ_LOG=2 reads them: a launch skips their line) */
    uint64_t d = t > st->dry_at ? t - st->dry_at : 0;
    uint64_t stopped = __atomic_load_n(&xqc_absent_ns, __ATOMIC_RELAXED) - st->wait_absent0;
    stopped = stopped < d ? stopped : d;
    d -= stopped, st->wait_stopped_ns += stopped;
    if (st->why_held != st->wait_held0) st->wait_held_ns += d;
    else if (st->why_guard != st->wait_guard0) st->wait_guarded_ns += d;
    else st->dry_ns += d;
    st->dry_at = 0;
}
uint64_t xqc_unknown_charge(const xstream *st);
uint64_t xqc_mark_every(const xstream *st);
int xqc_account_done(xstream *st, uint32_t count, uint64_t run, uint32_t scale);
int xqc_gate_enter(gate *g, CUstream h, int ptsz, void *hint, int deferrable, uint64_t ck, uint64_t threads);
int xqc_gate_defer(gate *g, dop *op);
void xqc_gate_undefer(gate *g);
int xqc_busy_update(xstream *st);
int xqc_close_tail(xstream *st, int *idle);
int xqc_after_launch(xstream *st, uint64_t t, uint64_t ck, uint64_t est, uint32_t scale, int isolate, int *idle);
void xqc_gate_exit(gate *g, CUresult r);
/* The calling thread's current context is kept (cuda_gate.c: a launch on a default stream asked the
 * driver at every launch, ~1 % of an eager decoder's request on the H200); the wrapped calls that
 * change it drop this thread's (all: every thread's, for a context that may have ended). */
void xqc_ctx_changed(int all);
extern uint64_t xqc_ctx_missed; /* the kept context found stale (changed by a call not wrapped) */
/* The lean launch (cuda_gate.c): a launch that nothing can hold or change (its stream known to the
 * thread, nothing deferred or captured, no gate, limit, guard or narrowing in its slot, its kind
 * measured and not due for a sample, no XQ_LOG=2 accounts) is counted after the driver call, in
 * one turn of the stream's lock, by code of a few cache lines; any other takes the full path. */
#define XQ_THR_NONE (1u << 20) /* a threshold this high is none (the node's QueueConfig.MAX_THRESHOLD) */
typedef struct lean {
    xstream *st;
    uint64_t ck, est, t;
} lean;
int xqc_lean_enter(lean *l, CUstream h, int ptsz, uint64_t ck);
void xqc_lean_exit(const lean *l, CUresult r, void *key, uint64_t threads);

/* cuda_defer.c */
extern uint32_t xqc_legacy_deferred; /* of which on a legacy default stream */
extern uint64_t xqc_deferred_total, xqc_flush_waits; /* for XQ_LOG=2 */
/* XQ_LOG=2: the host time the application's threads spend in the interposer around gated calls
 * (cuda_diag.c): the gate before the driver call, the gate after it, a deferred call's whole
 * visit; waits to launch and deferred launches made on the way are told apart, not counted. */
#define XQ_HT_ON XQ_UNLIKELY(xqc_hot.diag)
/* A gate's fields zeroed before xqc_gate_enter: the XQ_LOG=2 ones (from wait_ns) only at that
 * level (a launch's stack lines are cold: zeroing them all cost a launch one more line) */
static inline void xqc_gate_init(gate *g)
{
    memset(g, 0, offsetof(gate, wait_ns));
    if (XQ_HT_ON) memset(&g->wait_ns, 0, sizeof *g - offsetof(gate, wait_ns));
}
void xqc_ht_call(uint64_t t0, uint64_t t1, uint64_t t2, const gate *g);
void xqc_ht_deferred(uint64_t t0, const gate *g);
void xqc_ht_reset(void);
/* XQ_LOG=2: parts of a gated call's host time that are system or driver calls of our own, timed
 * on whichever thread makes them (cuda_diag.c) */
enum { HP_MARK, HP_SMP, HP_SEND, HP_KICK, HP_MUWAIT, HP_COUNT };
void xqc_ht_part(int part, uint64_t ns);
const char *xqc_entry_name(int id);
int xqc_entry_deferrable(int id);
extern uint32_t xqc_dq_waiters;
extern finfo xqc_fcache[FCACHE];
extern pthread_mutex_t xqc_fc_mu;
void xqc_known_ok(void *key);
dop *xqc_build_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned shmem, CUstream h, void **params, void **extra);
dop *xqc_build_launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra);
dop *xqc_build_graph(CUgraphExec g, CUstream h);
dop *xqc_build_set(int kind, CUdeviceptr d, unsigned v, size_t n, CUstream h);
dop *xqc_build_htod(CUdeviceptr dst, const void *src, size_t n, CUstream h);
dop *xqc_build_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h);
void xqc_drain(xstream *st, int force);
void xqc_drain_all(int force);
void xqc_flush_all(void);

/* cuda_narrow.c */
CUstream xqc_narrow_begin(xstream *st, CUstream h, int ptsz, uint64_t threads, CUstream *sx);
CUstream xqc_narrow_begin_at(xstream *st, CUstream h, int ptsz, int n, int off, CUstream *sx);
int xqc_narrow_width(const xstream *st, uint64_t threads, int *off, int *need);
int xqc_narrow_end(CUstream s, CUstream gs, CUresult r);
int xqc_narrow_usable(void);

/* cuda_tracker.c */
extern uint32_t xqc_busy;    /* streams with marks in their ring or unmarked launches */
extern uint32_t xqc_owed;    /* streams owing a WAKE */
extern uint32_t xqc_closing; /* destroyed streams not yet closed */
extern uint32_t xqc_tracker_parked;
extern pthread_mutex_t xqc_query_mu; /* tracker queries vs capture begin */
extern uint64_t xqc_nap[5], xqc_nap_late, xqc_nap_quick; /* XQ_LOG=2, tracker only: its naps by how late they ended; the quick ones */
void xqc_tracker_kick(void);
void xqc_tracker_wake_now(void);
extern __thread int xqc_t_tracker; /* this thread is the tracker */
int xqc_poll_stream(xstream *st, CUcontext *cur, uint64_t *next, uint64_t *gap);
int xqc_cmp_u32(const void *a, const void *b);
void *xqc_tracker_main(void *arg);

/* cuda_stubs.c */
extern uint32_t xqc_nstubs;
extern pthread_mutex_t xqc_stub_mu, xqc_kset_mu;
extern int xqc_attr_all; /* XQ_ATTR_WAIT=all */
extern const char *xqc_stub_name[NSTUBS];
extern uint32_t xqc_stub_waits[NSTUBS];
extern uint64_t xqc_stub_wait_ns[NSTUBS], xqc_stub_wait_max[NSTUBS];
int xqc_is_stub(void *p);
CUresult xqc_kernel_set_attr(int attr, int val, void *k, CUdevice dev);
CUresult xqc_func_set_attr(CUfunction f, int attr, int val);
void xqc_kset_summary(void);
void *xqc_stub_for(void *real, const char *name);

/* cuda_diag.c */
void xqc_defer_summary(void);

/* The slot's width word (XQ_WIDTH_WORD): the multiprocessors the stream's launches of its last one
 * to two seconds of launching could fill, those of its current stretch of work, and its device's;
 * 0 while not known. Caller holds st->mu. */
static inline uint32_t xqc_width_word(const xstream *st)
{
    uint32_t w = st->w_cur > st->w_prev ? st->w_cur : st->w_prev;
    uint32_t s = st->s_cur > st->s_prev ? st->s_cur : st->s_prev;
    if (XQ_UNLIKELY(xqc_hot.stretch_mode)) {
        if (xqc_hot.stretch_mode == 2 && s) w = s;
        else s = w;
    }
    if (s > w) s = w;
    return w ? XQ_WIDTH_WORD(w, s, st->sms_c ? st->sms_c : (uint32_t)xqc_dev_sms_known(st->cudev)) : 0;
}

/* Copies the truth into the slot. Caller holds st->mu. */
static inline void xqc_mirror(xstream *st)
{
    xq_slot *s = st->shm;
    if (!s || st->gen != LD(&xqc_state)) return;
    __atomic_store_n(&s->pending, st->pending, __ATOMIC_RELAXED);
    __atomic_store_n(&s->in_flight, st->in_flight, __ATOMIC_RELAXED);
    __atomic_store_n(&s->launched, st->launched, __ATOMIC_RELAXED);
    __atomic_store_n(&s->completed, st->completed, __ATOMIC_RELAXED);
    __atomic_store_n(&s->failed, st->failed, __ATOMIC_RELAXED);
    __atomic_store_n(&s->run_ns, st->run_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&s->estimate_ns, st->est_full, __ATOMIC_RELAXED); /* at the whole device */
    __atomic_store_n(&s->ready_since_ns, st->ready_since, __ATOMIC_RELAXED);
    if (XQ_UNLIKELY(xqc_hot.log >= 3) && (st->ready_since != st->arr_shown || (st->ready_since && st->narr && !XQ_WIDTH_WIDEST(st->arr[st->narr - 1].width))))
        xqc_mirror_arrivals(st);
    __atomic_store_n(&s->width, xqc_width_word(st), __ATOMIC_RELAXED);
    __atomic_store_n(&s->completion_seq, st->cseq, __ATOMIC_RELEASE);
}

/* cuda_hooks.c */

#pragma GCC visibility pop

#endif
