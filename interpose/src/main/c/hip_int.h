/*
 * hip_int.h: what the translation units of libxq-hip.so share. The library makes every HIP
 * stream of an unmodified process a queue of the XQ node, and, when the node asks, stops the
 * stream's KFD queue (Lv3). Specification: docs/processes.md ("HIP processes"). Loaded with
 * LD_PRELOAD, beside or instead of libxq-cuda.so.
 *
 * The launch-type calls of the HIP runtime (kernels, copies, memsets, graphs, host functions;
 * every stream, the null stream and the per-thread default stream, and the _spt entry points)
 * pass the gate of their stream: a launch the stream may not make now holds the calling thread
 * until the node lets it go (the CUDA interposer's XQ_DEFER=0 behaviour; HIP launches are never
 * deferred). After each launch an event is recorded on the stream; one tracker thread per process
 * watches those events to count completions. One reader thread talks to the node; it also runs
 * the node's SUSPEND and RESUME lines through the KFD debugger API on this process's own queues.
 * Everything else passes through: the library exports only the wrapped names, and calls that
 * HIP's own libraries (hipBLAS, MIOpen, rocBLAS) make into HIP reach the same wrappers.
 *
 * Lock order: xqh_session.mu -> xqh_tab_mu -> xstream.mu -> xqh_session.send_mu; xqh_kfd.mu alone;
 * the tracker's poll_mu (hip_tracker.c) first, with no other lock held.
 *
 * The translation units, by job:
 *   hip_hooks.c    the exported (wrapped) entry points, stream creation, graph capture, dlsym,
 *                  hipGetProcAddress, the constructor and fork
 *   hip_runtime.c  glibc's dlsym, the runtime entry points the interposer calls itself
 *   hip_gate.c     the launch gate (finding the stream of a launch, holding, counting)
 *   hip_streams.c  the stream table, visible-device mapping, PCI bus ids
 *   hip_tracker.c  the tracker thread: completions, WAKE pacing, closing streams
 *   hip_session.c  the session with the node (xq_wire.h), the reader thread, SUSPEND/RESUME
 *   hip_kfd.c      KFD (Lv3): the debugger API, and which KFD queue is a stream's
 *
 * Everything here is hidden (the library is built with -fvisibility=hidden); names shared between
 * translation units start with xqh_. What libxq-cuda.so shares with it: xq_wire.h, xq_shm.h.
 */
#ifndef XQ_HIP_INT_H
#define XQ_HIP_INT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "hip_abi.h"
#include "xq_shm.h"
#include "xq_wire.h"

#pragma GCC visibility push(hidden)

#define XQ_EXPORT __attribute__((visibility("default")))
#define RING 64                /* events per stream; when full the newest covers more */
#define WAIT_NS 100000000L     /* a held thread looks again after 100 ms at most */
#define WAKE_GAP_NS 10000ull   /* WAKE lines at most every 10 us */
#define POLL_LIMIT_NS 20000ull /* tracker: looks this often while launchers wait on a limit */
#define POLL_NS 100000ull      /* and this often otherwise */
#define PARK_AFTER_NS 5000000ull
/* tracker: while launchers wait on a limit, a stream whose oldest mark covers AHEAD_MIN_NS of
 * estimated work or more is looked at every POLL_NS until AHEAD_NUM/AHEAD_DEN of that work could
 * be done (from its launch or the last end seen, whichever is later), and every POLL_LIMIT_NS only
 * after that; the tracker naps POLL_LIMIT_NS only while some stream with work is looked at so
 * (XQ_TRACK_AHEAD=0: every stream every POLL_LIMIT_NS from the start). Why: a look before the end
 * of a long command finds nothing, and on the CUDA side (cuda_int.h, the same rule) a GEMM of 21 ms
 * behind a limit looked at every 5 us took its tracker 18-47 % of a core; looking ahead, the
 * trackers of a 3-process mix took 0.16 cores against 0.29 (H100, session 108). Here measured by
 * the C test hip_track_ahead only (no AMD GPU) */
#define AHEAD_MIN_NS 2000000ull
#define AHEAD_NUM 15
#define AHEAD_DEN 16
/* tracker: kept from looking this long, it cannot say when a batch it then finds done ended, and
 * the span teaches nothing (hip_tracker.c; as the CUDA interposer's) */
#define BLIND_NS 2000000ull
/* and a batch that began before such an absence and is found done this soon after it is counted
 * unmeasured too: what a GPU ran meanwhile is found at the first look, but a device that stops
 * with the process (the fake drivers' threads) may take some milliseconds to be run again */
#define AFTER_BLIND_NS 10000000ull
#define BUCKETS 256
/* the arrival guard's pad (hip_gate.c, hip_tracker.c; the CUDA interposer's rule, docs/processes.md
 * "Arrival guards"): a pad of 1 ms at most; an end seen this long past the horizon is the process's
 * stop, not learnt from; each close the guard kept clear wears 1/32 of the pad off; a close this long
 * after a guard's until still counts as its (the node's reaction) */
#define PAD_MAX_NS 1000000ull
#define PAD_STALE_NS 10000000ull
#define PAD_WEAR 32
#define PAD_GRACE_NS 2000000ull

#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)

static inline void futex_wait(uint32_t *w, uint32_t val, long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}
static inline void futex_wake(uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0); }
static inline void sleep_ns(long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR) {
    }
}
extern __thread pid_t xqh_t_tid; /* hip_runtime.c */
static inline pid_t my_tid(void) { return xqh_t_tid ? xqh_t_tid : (xqh_t_tid = (pid_t)syscall(SYS_gettid)); }


/* ------------------------------------------------------------------ the HIP runtime (hip_runtime.c) */

typedef void *(*dlsym_t)(void *, const char *);

/* The runtime entry points the interposer calls itself (never wrapped ones). */
struct xqh_runtime {
    hipError_t (*EventCreateWithFlags)(hipEvent_t *, unsigned);
    hipError_t (*EventRecord)(hipEvent_t, hipStream_t);
    hipError_t (*EventQuery)(hipEvent_t);
    hipError_t (*EventDestroy)(hipEvent_t);
    hipError_t (*GetDevice)(int *);
    hipError_t (*StreamGetPriority)(hipStream_t, int *);
    hipError_t (*PriorityRange)(int *, int *);
    hipError_t (*StreamGetDevice)(hipStream_t, int *); /* optional (ROCm 5.x+) */
    hipError_t (*DeviceGetPCIBusId)(char *, int, int); /* optional */
};
extern struct xqh_runtime xqh_hip;

int xqh_hip_resolve(void);
extern int xqh_hip_state; /* 0 unresolved, 1 ready, -1 missing: run untracked */
static inline int hip_ready(void)
{
    int s = LD(&xqh_hip_state);
    if (s) return s > 0;
    return xqh_hip_resolve();
}

/* ------------------------------------------------------------------ KFD (Lv3)
 * The upstream KFD debugger API on this process's own queues (docs/kfd-abi.md: the same numbers
 * and rules as hal-lv3-kfd). Opened before HELLO (the "lv3" capability says it opened and speaks
 * KFD 1.13+); the debug trap is enabled only once a HIP stream exists (enabling it before HIP
 * initialises blocks HIP); a stream's queue is the one new compute queue that appeared while the
 * stream was created (or, for the default streams, at their first launch); none or several:
 * unmapped, never suspended (suspending a wrong or shared queue would stop other work). */
#define KFD_IOC_GET_VERSION 0x80084b01UL
#define KFD_IOC_DBG_TRAP 0xc0204b26UL
#define KFD_OP_ENABLE 0
#define KFD_OP_SUSPEND 6
#define KFD_OP_RESUME 7
#define KFD_OP_SNAPSHOT 13
#define KFD_BIT_ERROR 0x40000000u
#define KFD_BIT_INVALID 0x80000000u
#define KFD_EC_QUEUE_NEW (1ull << 30)
#define KFD_QUEUE_COMPUTE_AQL 2
#define KMAX 256

struct xqh_kfd_state {
    pthread_mutex_t mu;
    int fd;          /* -1: none */
    int wanted;      /* the node's OK said lv3 */
    int trap;        /* 0 not tried, 1 enabled, -1 failed (why) */
    int efd;
    uint32_t seen[KMAX];
    int nseen;
    uint64_t last_suspend;
    uint64_t min_gap_ns;
    uint32_t grace_units;
    char why[96];
    struct { hipStream_t h; uint32_t q; } made[KMAX]; /* streams created here -> their queue */
    int nmade;
};
extern struct xqh_kfd_state xqh_kfd; /* hip_kfd.c */


/* ------------------------------------------------------------------ streams */

enum { K_EXPLICIT, K_NULL, K_PTDS };

/* The kinds of command whose estimates a stream keeps apart: kernels (and graphs, host functions)
 * and copies or memsets. A program's first commands are often short copies: one estimate for all
 * took their length for the 2 ms kernels after them, and 30-42 of those went in under a 6 ms
 * window on a slow build VM (C test hip_window_before_first_estimate). */
enum { HK_KERNEL, HK_COPY, HK_KINDS };

typedef struct ring_entry {
    hipEvent_t ev;
    uint64_t t_launch;
    uint32_t count;
    uint64_t est;
    uint8_t kind, mixed; /* mixed: a full ring's newest entry that covers commands of both kinds */
} ring_entry;

typedef struct xstream {
    struct xstream *next_all, *next_hash;
    hipStream_t h; /* explicit handle; NULL for the default streams */
    int kind, device;
    pid_t tid; /* K_PTDS: the owning thread */
    int in_use, closing;
    pthread_mutex_t mu;
    int prio, least, greatest;
    char label[16];
    char pci[24]; /* the device's PCI bus id; "" when HIP does not say */
    uint32_t gen;
    int slot;
    xq_slot *shm;
    uint32_t pending, in_flight, active, throttled, waiters, cseq, wseq, wake_owed;
    uint64_t launched, completed, failed, run_ns, estimate_ns, ready_since, last_done, fl_est;
    /* each kind's moving average (HK_*; 0: none of that kind measured yet: a command of it counts
     * a whole window), estimate_ns being all commands' (what the node is told) */
    uint64_t k_est[HK_KINDS];
    uint32_t head, n;
    uint64_t poll_at, polled; /* polled: the tracker's last look (hip_tracker.c) */
    /* Lv3: the stream's KFD queue (0: none), whether mapping was tried, whether suspended (K.mu) */
    uint32_t kq;
    int kq_tried, suspended;
    /* the node asked for a SUSPEND and has not taken it back (RESUME, an open gate): made while no
     * other stream the node lets launch has work in flight (xqh_lv3_watch) */
    int lv3_want;
    /* the watchdog (hip_tracker.c): let go whatever the node's gate and limits say while a stream
     * of the process the node lets launch has seen none of its work end for XQ_UNSTICK_MS (set,
     * cleared by the tracker); wd_done, wd_at: the completions it last saw and since when (tracker
     * only); unstuck: how often */
    uint32_t unstick, unstuck;
    uint64_t wd_done, wd_at;
    /* the arrival guard's pad: how far this stream's work ran past a horizon lately, beyond its
     * estimates; the guard admits a command only if it ends that much before the horizon. g_hz,
     * g_until: the guard the latest launch went under; at a close past that horizon with work in
     * flight, pad_hz holds it until the work has ended (the tracker: the pad rises to how far past
     * it that was, PAD_MAX_NS at most; seen over PAD_STALE_NS past it, not learnt from), and a
     * close past it with nothing in flight wears the pad by 1/PAD_WEAR. Under mu but gate_seen
     * (the tracker's). */
    uint64_t pad_ns, g_hz, g_until, pad_hz;
    uint32_t pads_up, pads_down, pads_late;
    int gate_seen;
    ring_entry ring[RING];
} xstream;


typedef struct gate {
    xstream *st;
    uint64_t t, est;
    int wake, kind;
} gate;

/* ------------------------------------------------------------------ the session (hip_session.c) */

struct xqh_session {
    pthread_mutex_t mu, send_mu, start_mu;
    int fd, started, ever_attached;
    uint32_t nslots;
    uint8_t *base, *used;
    xstream **owner;
    char path[PATH_MAX], name[200], prio[16];
    int no_slot_logged, lv3_offered;
    int waits_ok; /* the node's OK said "waits": the host's waits on the device are told (WAITS) */
};
extern struct xqh_session xqh_session;

/* ------------------------------------------------------------------ shared between translation units */

/* hip_runtime.c */
void xqh_spawn(void *(*fn)(void *));
int xqh_is_ours(void *p);
extern dlsym_t xqh_dlsym_glibc;
void *xqh_real_dlsym(void *h, const char *name);
void *xqh_hip_sym(const char *name);
extern pthread_mutex_t xqh_hip_mu;

/* hip_kfd.c */
const char *xqh_errno_name(int e);
int xqh_kfd_probe(void);
int xqh_dbg_trap(uint32_t op, uint64_t a, uint64_t b, uint32_t c, uint32_t d);
int xqh_kfd_trap_locked(void);
void xqh_kfd_map_default(xstream *st);
int xqh_kfd_before_create(void);
void xqh_kfd_after_create(int held, hipError_t r, hipStream_t *out);

/* hip_streams.c */
extern pthread_mutex_t xqh_tab_mu;
extern xstream *xqh_hash[BUCKETS], *xqh_free, *xqh_all;
extern uint32_t xqh_busy, xqh_owed, xqh_closing, xqh_limit_waiters, xqh_captures, xqh_exiting;
/* XQ_GUARD_PAD (on unless 0): the arrival guard learns each stream's pad (xstream.pad_ns) */
extern int xqh_pad_on;
extern int xqh_ahead; /* XQ_TRACK_AHEAD (on unless 0): AHEAD_* above */
extern uint64_t xqh_unstick_ns; /* XQ_UNSTICK_MS (1000) in ns; 0: no watchdog */
extern uint32_t xqh_state; /* odd: attached */
extern uint32_t xqh_tracker_word, xqh_tracker_parked, xqh_tracker_on;
extern pthread_key_t xqh_ptds_key;
extern __thread xstream *xqh_t_ptds[8]; /* this thread's per-thread default streams, by device (first 8) */
int xqh_physical_device(int dev);
xstream *xqh_find_locked(int kind, hipStream_t h, int dev, pid_t tid);
xstream *xqh_stream_new(int kind, hipStream_t h, int dev, int real, pid_t tid);
void xqh_stream_forget(hipStream_t h);
void xqh_ptds_thread_exit(void *unused);

/* hip_session.c */
extern uint64_t xqh_last_wake;
extern xw_beat xqh_beat;    /* the node's heartbeat (xq_wire.h) */
extern uint32_t xqh_frozen; /* the heartbeat stopped: the socket was shut down, the reader detaches */
void xqh_node_look(void);
__attribute__((format(printf, 1, 2))) int xqh_send_line(const char *fmt, ...);
/* the host waiting on the device (hipStreamSynchronize, hipDeviceSynchronize,
 * hipEventSynchronize): counted where the process has work in flight, told (WAITS <n>) at most
 * every XQH_WAITS_EVERY_NS and only where it changed, to a node whose OK said "waits" */
#define XQH_WAITS_EVERY_NS 20000000ull
extern uint64_t xqh_waits;
void xqh_host_wait_begin(void);
void xqh_host_wait_end(void);
void xqh_mirror(xstream *st);
void xqh_register_stream(xstream *st);
void xqh_wake_node(xstream *st);
void xqh_wake_held(xstream *st);
int xqh_kfd_resume(xstream *st, const char **why);
int xqh_lv3_watch(void);
void xqh_session_start(void);

/* hip_gate.c */
int xqh_gate_enter(gate *g, hipStream_t h, int ptsz, int kind);
void xqh_gate_exit(gate *g, hipError_t r);

/* hip_tracker.c */
void xqh_tracker_kick(void);
int xqh_poll_stream(xstream *st, uint64_t *next);
void xqh_close_stream(xstream *st);
void *xqh_tracker_main(void *arg);
void xqh_tracker_summary(void);

#pragma GCC visibility pop

#endif
