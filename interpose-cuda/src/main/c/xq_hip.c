/*
 * libxq-hip.so: makes every HIP stream of an unmodified process a queue of the XQ node, and,
 * when the node asks, stops the stream's KFD queue (Lv3). Specification: docs/processes.md
 * ("HIP processes"). Loaded with LD_PRELOAD, beside or instead of libxq-cuda.so.
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
 * Lock order: S.mu -> tab_mu -> xstream.mu -> S.send_mu; K.mu alone.
 */
#define _GNU_SOURCE
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

int xq_log_level = 1; /* XQ_LOG (xq_wire.h) */

#define XQ_EXPORT __attribute__((visibility("default")))
#define RING 64                /* events per stream; when full the newest covers more */
#define WAIT_NS 100000000L     /* a held thread looks again after 100 ms at most */
#define WAKE_GAP_NS 10000ull   /* WAKE lines at most every 10 us */
#define POLL_LIMIT_NS 20000ull /* tracker: looks this often while launchers wait on a limit */
#define POLL_NS 100000ull      /* and this often otherwise */
#define PARK_AFTER_NS 5000000ull
#define BUCKETS 256

#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)

static void futex_wait(uint32_t *w, uint32_t val, long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}
static void futex_wake(uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0); }
static void sleep_ns(long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR) {
    }
}
static __thread pid_t t_tid;
static pid_t my_tid(void) { return t_tid ? t_tid : (t_tid = (pid_t)syscall(SYS_gettid)); }

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

/* ------------------------------------------------------------------ the HIP runtime */

static int is_ours(void *p)
{
    static void *self;
    Dl_info a, b;
    if (!self && dladdr((void *)is_ours, &a)) self = a.dli_fbase;
    return p && dladdr(p, &b) && b.dli_fbase == self;
}

/* glibc's own dlsym: our lookups never go through an exported dlsym (ours answers a
 * libamdhip64 handle with our wrappers; libxq-cuda's may pass names on to ours). */
typedef void *(*dlsym_t)(void *, const char *);
static dlsym_t g_real_dlsym;

__attribute__((noinline)) static void *real_dlsym(void *h, const char *name)
{
    dlsym_t f = LD(&g_real_dlsym);
    if (!f) {
        f = (dlsym_t)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!f) f = (dlsym_t)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        if (!f) return NULL;
        ST(&g_real_dlsym, f);
    }
    void *r = f(h, name); /* not a tail call: for RTLD_NEXT glibc takes the caller (us) from here */
    __asm__ volatile("" ::: "memory");
    return r;
}

/* The runtime's definition of name: the next one after us, or, when libamdhip64 is not in the
 * global scope (a library linking it was dlopened RTLD_LOCAL, as Python loads extensions), the
 * loaded library's own. NULL when neither has it. */
static void *hip_sym(const char *name)
{
    void *r = real_dlsym(RTLD_NEXT, name);
    if (r && !is_ours(r)) return r;
    static const char *const libs[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
    for (unsigned i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        r = real_dlsym(h, name);
        dlclose(h);
        if (r && !is_ours(r)) return r;
    }
    return NULL;
}

/* The runtime entry points the interposer calls itself (never wrapped ones). */
static struct {
    hipError_t (*EventCreateWithFlags)(hipEvent_t *, unsigned);
    hipError_t (*EventRecord)(hipEvent_t, hipStream_t);
    hipError_t (*EventQuery)(hipEvent_t);
    hipError_t (*EventDestroy)(hipEvent_t);
    hipError_t (*GetDevice)(int *);
    hipError_t (*StreamGetPriority)(hipStream_t, int *);
    hipError_t (*PriorityRange)(int *, int *);
    hipError_t (*StreamGetDevice)(hipStream_t, int *); /* optional (ROCm 5.x+) */
    hipError_t (*DeviceGetPCIBusId)(char *, int, int); /* optional */
} hip;
static int g_hip_state; /* 0 unresolved, 1 ready, -1 missing: run untracked */
static pthread_mutex_t hip_mu = PTHREAD_MUTEX_INITIALIZER;

static int hip_ready(void)
{
    int s = LD(&g_hip_state);
    if (s) return s > 0;
    pthread_mutex_lock(&hip_mu);
    if (!g_hip_state) {
#define H(field, name) (*(void **)&hip.field = hip_sym(name))
        int ok = H(EventCreateWithFlags, "hipEventCreateWithFlags") && H(EventRecord, "hipEventRecord") &&
                 H(EventQuery, "hipEventQuery") && H(EventDestroy, "hipEventDestroy") &&
                 H(GetDevice, "hipGetDevice") && H(StreamGetPriority, "hipStreamGetPriority") &&
                 H(PriorityRange, "hipDeviceGetStreamPriorityRange");
        H(StreamGetDevice, "hipStreamGetDevice");
        H(DeviceGetPCIBusId, "hipDeviceGetPCIBusId");
#undef H
        if (!ok) xlog(1, "xq: HIP runtime entry points missing; running unscheduled");
        ST(&g_hip_state, ok ? 1 : -1);
    }
    pthread_mutex_unlock(&hip_mu);
    return g_hip_state > 0;
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

static struct {
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
} K = {.mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .efd = -1};

static const char *errno_name(int e)
{
    static const struct { int v; const char *n; } t[] = {
        {EPERM, "EPERM"}, {ENOENT, "ENOENT"}, {ESRCH, "ESRCH"}, {EIO, "EIO"}, {EBADF, "EBADF"},
        {EAGAIN, "EAGAIN"}, {ENOMEM, "ENOMEM"}, {EACCES, "EACCES"}, {EFAULT, "EFAULT"}, {EBUSY, "EBUSY"},
        {ENODEV, "ENODEV"}, {EINVAL, "EINVAL"}, {ENOTTY, "ENOTTY"}, {ETIME, "ETIME"}, {EALREADY, "EALREADY"},
        {ETIMEDOUT, "ETIMEDOUT"}};
    for (unsigned i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].v == e) return t[i].n;
    return "EUNKNOWN";
}

static unsigned env_uint(const char *name, unsigned dflt, unsigned max)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (errno || *end || x > max || *v == '-') {
        xlog(1, "xq: ignoring %s='%s': not a whole number in [0,%u]; using %u", name, v, max, dflt);
        return dflt;
    }
    return (unsigned)x;
}

/* Before HELLO: whether this process can offer Lv3 (XQ_LV3=0 turns it off). */
static int kfd_probe(void)
{
    const char *v = getenv("XQ_LV3");
    if (v && !strcmp(v, "0")) return 0;
    if (v && *v && strcmp(v, "1")) xlog(1, "xq: ignoring XQ_LV3='%s': not 0 or 1", v);
    pthread_mutex_lock(&K.mu);
    if (K.fd < 0) {
        const char *path = getenv("XQ_KFD");
        int fd = open(path && *path ? path : "/dev/kfd", O_RDWR | O_CLOEXEC);
        uint32_t ver[2] = {0, 0};
        if (fd >= 0 && (ioctl(fd, KFD_IOC_GET_VERSION, ver) || ver[0] != 1 || ver[1] < 13)) {
            xlog(2, "xq: KFD %u.%u has no debugger API (needs 1.13); no Lv3", ver[0], ver[1]);
            close(fd);
            fd = -1;
        }
        K.fd = fd;
        /* the same defaults as hal-lv3-kfd: 100 us grace, suspends 2 ms apart at least */
        K.grace_units = (env_uint("XQ_KFD_GRACE_US", 100, 1000000) * 21 + 9) / 10; /* at 2.1 GHz, rounded up */
        if (!K.grace_units) K.grace_units = 1;
        K.min_gap_ns = (uint64_t)env_uint("XQ_KFD_MIN_INTERVAL_US", 2000, 10000000) * 1000;
    }
    int ok = K.fd >= 0;
    pthread_mutex_unlock(&K.mu);
    return ok;
}

static int dbg_trap(uint32_t op, uint64_t a, uint64_t b, uint32_t c, uint32_t d)
{
    uint8_t args[32] = {0};
    uint32_t pid = (uint32_t)getpid();
    memcpy(args, &pid, 4), memcpy(args + 4, &op, 4);
    memcpy(args + 8, &a, 8), memcpy(args + 16, &b, 8), memcpy(args + 24, &c, 4), memcpy(args + 28, &d, 4);
    return ioctl(K.fd, KFD_IOC_DBG_TRAP, args);
}

/* Caller holds K.mu. */
static int kfd_trap_locked(void)
{
    if (K.trap) return K.trap > 0;
    if ((K.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        snprintf(K.why, sizeof K.why, "eventfd_%s", errno_name(errno));
        return (K.trap = -1), 0;
    }
    uint8_t rinfo[16] = {0};
    /* enable: exception_mask, rinfo_ptr, rinfo_size, dbg_fd */
    if (dbg_trap(KFD_OP_ENABLE, 0, (uint64_t)(uintptr_t)rinfo, 16, (uint32_t)K.efd) && errno != EALREADY) {
        snprintf(K.why, sizeof K.why, "enable_%s", errno_name(errno));
        xlog(1, "xq: KFD debug trap refused (%s); Lv3 unavailable", errno_name(errno));
        return (K.trap = -1), 0;
    }
    return (K.trap = 1), 1;
}

/* Snapshot (clearing QUEUE_NEW, which makes queues suspendable); the compute queues not seen
 * before are fresh[]; all are marked seen. Returns how many fresh, -1 on failure. K.mu held. */
static int kfd_look_locked(uint32_t *fresh, int cap)
{
    if (!kfd_trap_locked()) return -1;
    static uint8_t buf[KMAX * 64];
    /* snapshot: exception_mask, snapshot_buf_ptr, num_queues, entry_size */
    uint8_t args[32] = {0};
    uint32_t pid = (uint32_t)getpid(), op = KFD_OP_SNAPSHOT, n = KMAX, esz = 64;
    uint64_t mask = KFD_EC_QUEUE_NEW, ptr = (uint64_t)(uintptr_t)buf;
    memcpy(args, &pid, 4), memcpy(args + 4, &op, 4), memcpy(args + 8, &mask, 8), memcpy(args + 16, &ptr, 8);
    memcpy(args + 24, &n, 4), memcpy(args + 28, &esz, 4);
    if (ioctl(K.fd, KFD_IOC_DBG_TRAP, args)) return -1;
    memcpy(&n, args + 24, 4), memcpy(&esz, args + 28, 4);
    if (n > KMAX) n = KMAX;
    if (esz < 56 || esz > 64) esz = 64;
    int k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id, type;
        memcpy(&id, buf + (size_t)i * esz + 40, 4), memcpy(&type, buf + (size_t)i * esz + 52, 4);
        int seen = 0;
        for (int j = 0; j < K.nseen; j++) seen |= K.seen[j] == id;
        if (seen) continue;
        if (K.nseen < KMAX) K.seen[K.nseen++] = id;
        if (type == KFD_QUEUE_COMPUTE_AQL && k < cap) fresh[k++] = id;
        else if (type == KFD_QUEUE_COMPUTE_AQL) k++;
    }
    return k;
}

/* ------------------------------------------------------------------ streams */

enum { K_EXPLICIT, K_NULL, K_PTDS };

typedef struct ring_entry {
    hipEvent_t ev;
    uint64_t t_launch;
    uint32_t count;
    uint64_t est;
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
    uint32_t head, n;
    uint64_t poll_at;
    /* Lv3: the stream's KFD queue (0: none), whether mapping was tried, whether suspended (K.mu) */
    uint32_t kq;
    int kq_tried, suspended;
    ring_entry ring[RING];
} xstream;

static pthread_mutex_t tab_mu = PTHREAD_MUTEX_INITIALIZER;
static xstream *g_hash[BUCKETS], *g_free, *g_all;
static uint32_t g_explicit_n, g_busy, g_owed, g_closing, g_limit_waiters, g_captures, g_exiting;
static uint32_t g_state; /* odd: attached */
static uint32_t g_tracker_word, g_tracker_parked, g_tracker_on;
static pthread_key_t g_ptds_key;
static __thread xstream *t_ptds[8]; /* this thread's per-thread default streams, by device (first 8) */

static unsigned bucket(hipStream_t h, int dev, pid_t tid)
{
    uintptr_t x = (uintptr_t)h ^ ((uintptr_t)dev << 8) ^ ((uintptr_t)tid * 2654435761u);
    return (unsigned)((x >> 4) ^ (x >> 12)) % BUCKETS;
}

/* Entry idx of a list of ordinals such as "2,0,3": the ordinal, -1 when the list is not one
 * (UUIDs), -2 when it has no entry idx. */
static int nth_ordinal(const char *v, int idx)
{
    int i = 0;
    for (const char *p = v; *p;) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < 0 || x > 4095 || (*end && *end != ',')) return -1;
        if (i++ == idx) return (int)x;
        p = *end ? end + 1 : end;
    }
    return -2;
}

/* The node wants physical ordinals; the process sees them renumbered twice: ROCR_VISIBLE_DEVICES
 * picks and orders the GPUs ROCr shows, and HIP_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES when it is
 * unset, as HIP reads them) picks among those. Undone in that order, inner first. A list that is
 * not one of ordinals (UUIDs) leaves the device as the process sees it, said once. */
static int physical_device(int dev)
{
    static const char *const vars[] = {"HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"};
    static int said;
    int d = dev;
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        if (!v || !*v) continue;
        int x = nth_ordinal(v, d);
        if (x == -1) {
            if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
                xlog(1, "xq: %s=%s is not a list of device ordinals (allowed: e.g. 2,0,3; UUIDs are not mapped "
                        "here: the node finds the device by the PCI bus id sent with it); device %d reported as the "
                        "process sees it",
                     vars[i], v, dev);
            return dev;
        }
        if (x >= 0) d = x;
        if (i == 0) i++; /* HIP_VISIBLE_DEVICES set: CUDA_VISIBLE_DEVICES is not read */
    }
    return d;
}

static xstream *find_locked(int kind, hipStream_t h, int dev, pid_t tid)
{
    for (xstream *s = g_hash[bucket(h, dev, tid)]; s; s = s->next_hash)
        if (s->kind == kind && s->h == h && (kind == K_EXPLICIT || s->device == dev) && s->tid == tid) return s;
    return NULL;
}

static void tracker_kick(void);
static void wake_node(xstream *st);

static uint32_t made_queue(hipStream_t h)
{
    uint32_t q = 0;
    pthread_mutex_lock(&K.mu);
    for (int i = 0; i < K.nmade; i++)
        if (K.made[i].h == h) q = K.made[i].q, K.made[i] = K.made[--K.nmade];
    pthread_mutex_unlock(&K.mu);
    return q;
}

/* The device's PCI bus id as HIP writes it (0000:c1:00.0), for the node to find its own device
 * by whatever ordinal the process sees (UUID lists, containers); "" when HIP does not say or
 * says something that is not one (only hex digits, ':' and '.' are passed on). */
static void pci_bus_id(int dev, char *out, int n)
{
    out[0] = 0;
    if (!hip.DeviceGetPCIBusId || hip.DeviceGetPCIBusId(out, n, dev) != hipSuccess) {
        out[0] = 0;
        return;
    }
    out[n - 1] = 0;
    for (const char *p = out; *p; p++)
        if (!strchr("0123456789abcdefABCDEF:.", *p)) {
            out[0] = 0;
            return;
        }
}

/* dev: the device the stream is keyed by (0 for explicit streams), real: the one it runs on. */
static xstream *stream_new(int kind, hipStream_t h, int dev, int real, pid_t tid)
{
    int prio = 0, least = 0, greatest = 0;
    char pci[24];
    pci_bus_id(real, pci, sizeof pci);
    hip.StreamGetPriority(kind == K_EXPLICIT ? h : kind == K_PTDS ? hipStreamPerThread : NULL, &prio);
    hip.PriorityRange(&least, &greatest);
    uint32_t kq = kind == K_EXPLICIT ? made_queue(h) : 0;
    pthread_mutex_lock(&tab_mu);
    xstream *st = find_locked(kind, h, kind == K_EXPLICIT ? 0 : dev, tid);
    int fresh = !g_free;
    if (st || (fresh && !(st = calloc(1, sizeof *st)))) { /* made by another thread meanwhile, or no memory */
        pthread_mutex_unlock(&tab_mu);
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
    st->kind = kind, st->h = h, st->tid = tid, st->slot = -1;
    st->device = real;
    memcpy(st->pci, pci, sizeof st->pci);
    st->prio = prio, st->least = least, st->greatest = greatest;
    st->kq = kq, st->kq_tried = kind == K_EXPLICIT;
    if (kind == K_EXPLICIT) snprintf(st->label, sizeof st->label, "s%u", ++g_explicit_n);
    else strcpy(st->label, kind == K_NULL ? "default" : "ptds");
    unsigned b = bucket(h, kind == K_EXPLICIT ? 0 : dev, tid);
    st->next_hash = g_hash[b];
    g_hash[b] = st;
    ST(&st->in_use, 1);
    if (fresh) {
        st->next_all = g_all;
        ST(&g_all, st);
    }
    pthread_mutex_unlock(&tab_mu);
    if (kind == K_PTDS) pthread_setspecific(g_ptds_key, (void *)1);
    return st;
}

/* The device a stream's work runs on: an explicit stream's own, else the current one; -1 when
 * HIP has none (no GPU: the call passes through untracked and reports that itself). */
static int stream_device(hipStream_t h, int kind)
{
    int d = 0;
    if (kind == K_EXPLICIT && hip.StreamGetDevice && hip.StreamGetDevice(h, &d) == hipSuccess) return d;
    return hip.GetDevice(&d) == hipSuccess && d >= 0 ? d : -1;
}

/* Stream key: explicit streams by handle; the null stream per device; the per-thread default
 * stream per device and thread. ptsz: an _spt entry point (its null stream is per-thread). */
static xstream *stream_get(hipStream_t h, int ptsz)
{
    int kind = h == NULL ? (ptsz ? K_PTDS : K_NULL) : h == hipStreamPerThread ? K_PTDS : K_EXPLICIT;
    if (kind != K_EXPLICIT) h = NULL;
    int dev = kind == K_EXPLICIT ? 0 : stream_device(NULL, kind);
    if (dev < 0) return NULL;
    if (kind == K_PTDS && dev >= 0 && dev < 8 && t_ptds[dev] && LD(&t_ptds[dev]->in_use) && !LD(&t_ptds[dev]->closing))
        return t_ptds[dev];
    pid_t tid = kind == K_PTDS ? my_tid() : 0;
    pthread_mutex_lock(&tab_mu);
    xstream *st = find_locked(kind, h, dev, tid);
    pthread_mutex_unlock(&tab_mu);
    if (!st) {
        int d = kind == K_EXPLICIT ? stream_device(h, kind) : dev;
        if (d < 0) return NULL;
        st = stream_new(kind, h, kind == K_EXPLICIT ? 0 : d, d, tid);
    }
    if (st && kind == K_PTDS && dev >= 0 && dev < 8) t_ptds[dev] = st;
    return st;
}

static void forget_locked(xstream *st)
{
    xstream **pp = &g_hash[bucket(st->h, st->kind == K_EXPLICIT ? 0 : st->device, st->tid)];
    while (*pp && *pp != st) pp = &(*pp)->next_hash;
    if (!*pp) return;
    *pp = st->next_hash;
    st->next_hash = NULL;
    ST(&st->closing, 1);
    ADD(&g_closing, 1);
}

static void stream_forget(hipStream_t h)
{
    pthread_mutex_lock(&tab_mu);
    xstream *st = find_locked(K_EXPLICIT, h, 0, 0);
    if (st) forget_locked(st);
    pthread_mutex_unlock(&tab_mu);
    if (st) tracker_kick();
}

static void ptds_thread_exit(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&tab_mu);
    for (int d = 0; d < 8; d++)
        if (t_ptds[d]) forget_locked(t_ptds[d]), t_ptds[d] = NULL;
    pthread_mutex_unlock(&tab_mu);
    tracker_kick();
}

/* ------------------------------------------------------------------ session with the node */

static struct {
    pthread_mutex_t mu, send_mu, start_mu;
    int fd, started, ever_attached;
    uint32_t nslots;
    uint8_t *base, *used;
    xstream **owner;
    char path[PATH_MAX], name[200], prio[16];
    int no_slot_logged, lv3_offered;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER, .send_mu = PTHREAD_MUTEX_INITIALIZER,
       .start_mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1};
static uint64_t g_last_wake;
static xw_beat g_beat;    /* the node's heartbeat (xq_wire.h) */
static uint32_t g_frozen; /* the heartbeat stopped: the socket was shut down, the reader detaches */

/* Looks at the node's heartbeat (the reader at least every 100 ms, held threads at every wait).
 * Stopped for XW_FROZEN_S: the node is taken for gone. The socket is shut down, so the reader
 * detaches as when the connection closes (every held thread goes, stopped queues resume, the
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
    int n = vsnprintf(buf, XQ_MAX_LINE, fmt, ap);
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
        else shutdown(S.fd, SHUT_RDWR), rc = -1;
    }
    pthread_mutex_unlock(&S.send_mu);
    xlog(3, "xq: > %.*s", n - 1, buf);
    return rc;
}

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

/* Caller holds S.mu. */
static void register_locked(xstream *st)
{
    uint32_t gs = LD(&g_state);
    if (!(gs & 1) || st->gen == gs || LD(&st->in_use) == 2) return; /* 2: being closed */
    uint32_t i = 0;
    while (i < S.nslots && S.used[i]) i++;
    pthread_mutex_lock(&st->mu);
    st->gen = gs;
    if (i == S.nslots) {
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
    send_line("STREAM %u %lx %d %d %d %d %s%s%s", i, (unsigned long)(uintptr_t)st->h, physical_device(st->device),
              st->prio, st->least, st->greatest, st->label, st->pci[0] ? " " : "", st->pci);
    if (active) send_line("WAKE %u", i);
}

static void register_stream(xstream *st)
{
    pthread_mutex_lock(&S.mu);
    register_locked(st);
    pthread_mutex_unlock(&S.mu);
}

static void wake_node(xstream *st)
{
    uint64_t now = now_ns(), last = LD(&g_last_wake);
    if (now - last < WAKE_GAP_NS ||
        !__atomic_compare_exchange_n(&g_last_wake, &last, now, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
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

static int try_attach(char *why, size_t whylen)
{
    xw_session x;
    if (!xw_attach(S.path, S.name, S.prio, S.lv3_offered ? " hip,lv3" : " hip", &x, why, whylen)) return 0;
    pthread_mutex_lock(&S.mu);
    S.used = calloc(x.slots, 1);
    S.owner = calloc(x.slots, sizeof *S.owner);
    if (!S.used || !S.owner) {
        pthread_mutex_unlock(&S.mu);
        snprintf(why, whylen, "out of memory");
        close(x.fd);
        return 0;
    }
    S.base = x.base, S.nslots = x.slots, S.no_slot_logged = 0;
    pthread_mutex_lock(&K.mu);
    K.wanted = S.lv3_offered && xw_has_word(x.options, "lv3");
    pthread_mutex_unlock(&K.mu);
    pthread_mutex_lock(&S.send_mu);
    S.fd = x.fd;
    pthread_mutex_unlock(&S.send_mu);
    xw_beat_start(&g_beat, x.base, LD(&g_state) + 1);
    ADD(&g_state, 1);
    for (xstream *st = LD(&g_all); st; st = st->next_all)
        if (LD(&st->in_use)) register_locked(st);
    pthread_mutex_unlock(&S.mu);
    xlog(2, "xq: registered with the node at %s: %u slots%s", S.path, x.slots, K.wanted ? ", Lv3 wanted" : "");
    return 1;
}

/* Resumes st's queue when suspended. *why: what failed. Returns 1 resumed, 0 nothing to do, -1 failed. */
static int kfd_resume(xstream *st, const char **why)
{
    pthread_mutex_lock(&K.mu);
    int r = 0;
    if (st->suspended && K.fd >= 0) {
        uint32_t ids[1] = {st->kq};
        /* resume: queue_array_ptr, num_queues */
        int rc = dbg_trap(KFD_OP_RESUME, (uint64_t)(uintptr_t)ids, 1, 0, 0);
        if (rc == 1) st->suspended = 0, r = 1;
        else *why = rc < 0 ? errno_name(errno) : ids[0] & KFD_BIT_INVALID ? "invalid" : "error", r = -1;
    }
    pthread_mutex_unlock(&K.mu);
    return r;
}

static void resume_all(const char *when)
{
    for (xstream *st = LD(&g_all); st; st = st->next_all) {
        const char *why = "";
        if (kfd_resume(st, &why) < 0) xlog(1, "xq: resuming the KFD queue of stream %s %s failed: %s", st->label, when, why);
    }
}

static void detach(const char *why)
{
    pthread_mutex_lock(&S.mu);
    pthread_mutex_lock(&S.send_mu);
    close(S.fd);
    S.fd = -1;
    pthread_mutex_unlock(&S.send_mu);
    ADD(&g_state, 1);
    free(S.used), free(S.owner);
    S.used = NULL, S.owner = NULL, S.nslots = 0;
    pthread_mutex_unlock(&S.mu);
    resume_all("after the node was lost"); /* nothing stays stopped without a node */
    for (xstream *st = LD(&g_all); st; st = st->next_all) wake_held(st);
    if (__atomic_exchange_n(&g_frozen, 0, __ATOMIC_SEQ_CST))
        xlog(1, "xq: node at %s not answering for %d s (frozen?); running unscheduled", S.path, XW_FROZEN_S);
    else
        xlog(1, "xq: node at %s lost (%s); running unscheduled", S.path, why);
}

/* The node's SUSPEND <slot>: stop the stream's KFD queue, within the rate limit; a failure
 * leaves the queue running (the gate still holds new launches) and is reported. */
static void kfd_map_default(xstream *st);
static void lv3_suspend(unsigned slot, xstream *st)
{
    const char *why = NULL;
    if (!LD(&st->kq) && !LD(&st->kq_tried)) kfd_map_default(st); /* a default stream not launched on since the node came */
    pthread_mutex_lock(&K.mu);
    if (!K.wanted || K.fd < 0) why = "not-offered";
    else if (!st->kq) why = "unmapped";
    else if (st->suspended) why = NULL;
    else if (!kfd_trap_locked()) why = K.why;
    else {
        uint64_t now = now_ns();
        if (K.last_suspend && now < K.last_suspend + K.min_gap_ns) sleep_ns((long)(K.last_suspend + K.min_gap_ns - now));
        K.last_suspend = now_ns();
        uint32_t ids[1] = {st->kq};
        /* suspend: exception_mask, queue_array_ptr, num_queues, grace_period */
        int rc = dbg_trap(KFD_OP_SUSPEND, 0, (uint64_t)(uintptr_t)ids, 1, K.grace_units);
        if (rc == 1) st->suspended = 1;
        else why = rc < 0 ? errno_name(errno) : ids[0] & KFD_BIT_INVALID ? "invalid" : "error";
    }
    pthread_mutex_unlock(&K.mu);
    /* the gate may have opened meanwhile: then the queue goes on at once */
    if (!why && st->shm && !LD(&st->shm->gate)) {
        const char *w2 = "";
        if (kfd_resume(st, &w2) > 0) {
            send_line("LV3 %u resumed", slot);
            return;
        }
    }
    if (why) {
        xlog(2, "xq: stream %s: KFD suspend failed (%s); it runs on at Lv1", st->label, why);
        send_line("LV3 %u failed %s", slot, why);
    } else
        send_line("LV3 %u suspended", slot);
}

static void lv3_resume(unsigned slot, xstream *st)
{
    const char *why = "";
    int r = kfd_resume(st, &why);
    if (r < 0) send_line("LV3 %u failed %s", slot, why);
    else send_line("LV3 %u resumed", slot);
}

static void handle_line(char *line)
{
    unsigned slot;
    char word[16];
    xlog(3, "xq: < %s", line);
    if (sscanf(line, "%15s %u", word, &slot) != 2) {
        if (!strncmp(line, "ERR", 3)) xlog(1, "xq: node at %s: %s", S.path, line);
        return;
    }
    pthread_mutex_lock(&S.mu);
    xstream *st = slot < S.nslots ? S.owner[slot] : NULL;
    pthread_mutex_unlock(&S.mu);
    if (!strcmp(word, "GATE") && st) {
        wake_held(st);
        if (st->shm && !LD(&st->shm->gate) && LD(&st->suspended)) lv3_resume(slot, st);
    } else if (!strcmp(word, "SUSPEND")) {
        if (st) lv3_suspend(slot, st);
        else send_line("LV3 %u failed no-stream", slot);
    } else if (!strcmp(word, "RESUME")) {
        if (st) lv3_resume(slot, st);
        else send_line("LV3 %u failed no-stream", slot);
    }
    /* Q <slot> <handle>: for information only */
}

static void *reader_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "xq-hip-reader");
    char buf[4 * XQ_MAX_LINE];
    size_t len = 0;
    for (;;) {
        if (S.fd < 0) {
            sleep(1);
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
        if (len == sizeof buf) len = 0;
    }
    return NULL;
}

static void *tracker_main(void *);

/* A last look at every stream first, so that work done by now (a process usually synchronises
 * before it exits) is counted done, not left in flight; then the tracker stops querying a runtime
 * about to be torn down, and no queue is left stopped. */
static int poll_stream(xstream *st, uint64_t *next);
static void close_stream(xstream *st);
static void at_exit(void)
{
    for (xstream *st = LD(&g_all); st; st = st->next_all)
        if (LD(&st->in_use) && LD(&st->n) && !LD(&g_captures)) {
            uint64_t next = UINT64_MAX;
            st->poll_at = 0;
            poll_stream(st, &next);
        }
    for (xstream *st = LD(&g_all); st; st = st->next_all) /* destroyed streams whose work is done leave the node */
        if (LD(&st->in_use) && LD(&st->closing)) close_stream(st);
    ST(&g_exiting, 1);
    resume_all("at exit");
}

static void session_start(void)
{
    pthread_mutex_lock(&S.start_mu);
    if (!S.started) {
        xw_env(S.path, sizeof S.path, S.name, sizeof S.name, S.prio, sizeof S.prio);
        S.lv3_offered = kfd_probe();
        char why[256];
        if (try_attach(why, sizeof why)) S.ever_attached = 1;
        else if (!xw_refused) xlog(1, "xq: no node at %s (%s); running unscheduled", S.path, why); /* a refusal was said */
        spawn(reader_main);
        static int exit_registered;
        if (!exit_registered++) atexit(at_exit);
        ST(&S.started, 1);
    }
    pthread_mutex_unlock(&S.start_mu);
}

/* ------------------------------------------------------------------ the launch gate */

/* The work of st still to run at now: the estimates in flight less what the oldest unfinished
 * command has run since the later of its launch and the last end seen. Caller holds st->mu. */
static uint64_t work_left(const xstream *st, uint64_t now)
{
    if (!st->n) return st->fl_est;
    uint64_t start = st->ring[st->head].t_launch, first = st->ring[st->head].est;
    if (st->last_done > start) start = st->last_done;
    uint64_t ran = now > start ? now - start : 0, credit = ran < first ? ran : first;
    return st->fl_est > credit ? st->fl_est - credit : 0;
}

/* docs/processes.md "The launch gate", with the stream's average as every command's estimate:
 * 0 launch, 1 held, 2 limits, 4 guarded. Caller holds st->mu. */
static int may_launch(xstream *st, const xq_slot *s, uint64_t *retry)
{
    *retry = 0;
    if (LD(&s->gate)) return 1;
    uint32_t thr = LD(&s->threshold), n = st->in_flight;
    if (thr && n >= thr) return st->throttled = 1, 2;
    if (st->throttled) {
        if (thr && (int64_t)n > (int64_t)thr - (int64_t)LD(&s->batch)) return 2;
        st->throttled = 0;
    }
    uint64_t win = (uint64_t)LD(&s->window_us) * 1000, now = now_ns();
    uint64_t e = st->estimate_ns ? st->estimate_ns : win;
    uint64_t hz = LD(&s->horizon_ns), until = LD(&s->guard_until_ns);
    if (hz && now < until && now + (n ? work_left(st, now) : 0) + e > hz) return *retry = until - now, 4;
    if (!win || !n) return 0;
    uint64_t room = win > e + win / 4 ? win - e : win / 4;
    return work_left(st, now) <= room ? 0 : 2;
}

typedef struct gate {
    xstream *st;
    uint64_t t, est;
    int wake;
} gate;

static void *tracker_main(void *);

/* Holds the calling thread while its stream may not launch. 0: pass through untracked
 * (capture, exit, no runtime helpers, no such stream), 1: launch now, then gate_exit. */
static int gate_enter(gate *g, hipStream_t h, int ptsz)
{
    if (LD(&g_captures) || LD(&g_exiting) || !hip_ready()) return 0;
    int saved_errno = errno;
    xstream *st = stream_get(h, ptsz);
    if (!st) return errno = saved_errno, 0;
    if (!LD(&S.started)) session_start();
    if (!LD(&g_tracker_on) && !__atomic_exchange_n(&g_tracker_on, 1, __ATOMIC_SEQ_CST)) spawn(tracker_main);
    int waited = 0, wake = 0;
    pthread_mutex_lock(&st->mu);
    for (;;) {
        uint32_t gs = LD(&g_state);
        if ((gs & 1) && st->gen != gs) {
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
            return errno = saved_errno, 0;
        }
        uint64_t retry = 0;
        int why = (gs & 1) && st->shm ? may_launch(st, st->shm, &retry) : 0;
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
        futex_wait(&st->wseq, seq, retry && retry < (uint64_t)WAIT_NS ? (long)retry : WAIT_NS);
        node_look(); /* held by a node that may have stopped */
        pthread_mutex_lock(&st->mu);
        st->waiters--;
        if (why == 2) ADD(&g_limit_waiters, -1);
    }
    if (waited) st->pending--;
    st->in_flight++;
    g->est = st->estimate_ns;
    st->fl_est += g->est;
    g->t = now_ns();
    if (!waited && st->active++ == 0) st->ready_since = g->t, wake = 1;
    mirror(st);
    pthread_mutex_unlock(&st->mu);
    g->st = st, g->wake = wake;
    errno = saved_errno;
    return 1;
}

static void kfd_map_default(xstream *st);

/* After the real call: a mark (event) behind a launch that was made; the counts either way. */
static void gate_exit(gate *g, hipError_t r)
{
    xstream *st = g->st;
    int idle = 0, kick = 0, saved_errno = errno;
    if (r == hipSuccess && !LD(&st->kq_tried)) kfd_map_default(st);
    pthread_mutex_lock(&st->mu);
    if (r != hipSuccess) {
        st->in_flight--, st->failed++;
        st->fl_est -= g->est <= st->fl_est ? g->est : st->fl_est;
        if (--st->active == 0) st->ready_since = 0, idle = 1;
    } else {
        st->launched++;
        hipStream_t rec = st->kind == K_EXPLICIT ? st->h : st->kind == K_PTDS ? hipStreamPerThread : NULL;
        ring_entry *e = &st->ring[(st->head + st->n - (st->n == RING)) % RING];
        int made = (e->ev || hip.EventCreateWithFlags(&e->ev, hipEventDisableTiming) == hipSuccess) &&
                   hip.EventRecord(e->ev, rec) == hipSuccess;
        if (made && st->n == RING) e->count++, e->est += g->est; /* full: the newest covers this one too */
        else if (made) {
            e->t_launch = g->t, e->count = 1, e->est = g->est;
            if (st->n++ == 0) ADD(&g_busy, 1);
        }
        kick = made;
        if (!made) { /* cannot watch it: taken as done */
            st->in_flight--, st->completed++, st->cseq++;
            st->fl_est -= g->est <= st->fl_est ? g->est : st->fl_est;
            if (--st->active == 0) st->ready_since = 0, idle = 1;
        }
    }
    mirror(st);
    int waiters = st->waiters;
    pthread_mutex_unlock(&st->mu);
    if (r != hipSuccess && waiters) wake_held(st);
    if (idle || g->wake) wake_node(st);
    if (kick) tracker_kick();
    errno = saved_errno;
}

/* ------------------------------------------------------------------ tracker */

static void tracker_kick(void)
{
    if (LD(&g_tracker_parked)) {
        ADD(&g_tracker_word, 1);
        futex_wake(&g_tracker_word);
    }
}

/* Counts st's finished commands (events end in stream order: the done ones are a prefix);
 * returns whether work is still in flight. */
static int poll_stream(xstream *st, uint64_t *next)
{
    uint64_t now = now_ns();
    int urgent = LD(&g_limit_waiters) > 0;
    if (now < st->poll_at && !urgent) {
        if (st->poll_at < *next) *next = st->poll_at;
        return LD(&st->n) != 0;
    }
    st->poll_at = now + (urgent ? POLL_LIMIT_NS : POLL_NS);
    if (st->poll_at < *next) *next = st->poll_at;
    pthread_mutex_lock(&st->mu);
    uint32_t n = st->n, head = st->head, m = n == RING ? n - 1 : n; /* a full ring's newest may be re-recorded */
    pthread_mutex_unlock(&st->mu);
    if (!n) return 0;
    uint32_t take = 0;
    while (take < m && hip.EventQuery(st->ring[(head + take) % RING].ev) != hipErrorNotReady) take++;
    if (m < n && take == m && hip.EventQuery(st->ring[(head + m) % RING].ev) != hipErrorNotReady) {
        pthread_mutex_lock(&st->mu); /* the newest of a full ring: re-checked under the lock */
        take = n;
        pthread_mutex_unlock(&st->mu);
    }
    if (!take) return 1;
    uint64_t t = now_ns();
    pthread_mutex_lock(&st->mu);
    uint32_t count = 0;
    uint64_t est = 0, from = st->ring[head].t_launch > st->last_done ? st->ring[head].t_launch : st->last_done;
    for (uint32_t i = 0; i < take; i++) count += st->ring[(head + i) % RING].count, est += st->ring[(head + i) % RING].est;
    st->head = (head + take) % RING;
    st->n -= take;
    if (!st->n) ADD(&g_busy, -1);
    uint64_t span = t > from ? t - from : 0;
    st->last_done = t;
    st->fl_est -= est <= st->fl_est ? est : st->fl_est;
    st->completed += count, st->in_flight -= count, st->active -= count, st->run_ns += span, st->cseq++;
    if (!st->in_flight) st->fl_est = 0;
    if (span) {
        int64_t x = (int64_t)(span / count), e = (int64_t)st->estimate_ns;
        e = e ? e + (x - e) / 4 : x;
        st->estimate_ns = e > 0 ? (uint64_t)e : 1;
    }
    int idle = 0;
    if (!st->active) st->ready_since = 0, idle = 1;
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

static void close_stream(xstream *st)
{
    pthread_mutex_lock(&S.mu);
    pthread_mutex_lock(&st->mu);
    if (!LD(&st->closing) || LD(&st->in_use) != 1 || st->n || st->pending || st->in_flight) {
        pthread_mutex_unlock(&st->mu); /* closed by another thread (the tracker, at_exit), or not done */
        pthread_mutex_unlock(&S.mu);
        return;
    }
    ST(&st->in_use, 2); /* being closed: by this thread only */
    if (st->gen == LD(&g_state) && (st->gen & 1) && st->slot >= 0 && (uint32_t)st->slot < S.nslots) {
        send_line("CLOSE %d", st->slot);
        S.used[st->slot] = 0, S.owner[st->slot] = NULL;
    }
    st->slot = -1, st->shm = NULL;
    pthread_mutex_unlock(&st->mu);
    pthread_mutex_unlock(&S.mu);
    const char *why = "";
    kfd_resume(st, &why); /* a destroyed stream's queue is not left stopped */
    for (int i = 0; i < RING; i++)
        if (st->ring[i].ev) hip.EventDestroy(st->ring[i].ev), st->ring[i].ev = NULL;
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
    prctl(PR_SET_NAME, "xq-hip-tracker");
    prctl(PR_SET_TIMERSLACK, 1000UL);
    uint64_t idle_since = 0;
    for (;;) {
        if (LD(&g_exiting)) return NULL;
        int busy = 0;
        uint64_t next = now_ns() + POLL_NS;
        if (LD(&g_captures)) busy = 1; /* an event query could invalidate a global-mode capture */
        else
            for (xstream *st = LD(&g_all); st; st = st->next_all)
                if (LD(&st->in_use)) {
                    busy |= poll_stream(st, &next);
                    /* a queue left stopped behind an open gate (a RESUME line lost) goes on */
                    if (LD(&st->suspended) && st->shm && st->gen == LD(&g_state) && !LD(&st->shm->gate)) {
                        const char *why = "";
                        if (kfd_resume(st, &why) > 0 && st->slot >= 0) send_line("LV3 %d resumed", st->slot);
                    }
                }
        for (xstream *st = LD(&g_all); st && (LD(&g_owed) || LD(&g_closing)); st = st->next_all) {
            if (!LD(&st->in_use)) continue;
            if (LD(&st->wake_owed)) {
                uint64_t now = now_ns(), last = LD(&g_last_wake);
                if (now - last >= WAKE_GAP_NS && __atomic_exchange_n(&st->wake_owed, 0, __ATOMIC_SEQ_CST)) {
                    ADD(&g_owed, -1);
                    ST(&g_last_wake, now);
                    int slot = LD(&st->slot);
                    if (LD(&st->gen) == LD(&g_state) && (LD(&g_state) & 1) && slot >= 0) send_line("WAKE %d", slot);
                }
            }
            if (LD(&st->closing)) close_stream(st);
        }
        uint64_t now = now_ns();
        if (busy || LD(&g_owed) || !idle_since || now - idle_since < PARK_AFTER_NS) {
            idle_since = busy || LD(&g_owed) ? 0 : idle_since ? idle_since : now;
            uint64_t gap = LD(&g_limit_waiters) || LD(&g_owed) ? POLL_LIMIT_NS : next > now ? next - now : POLL_LIMIT_NS;
            sleep_ns((long)(gap < POLL_LIMIT_NS ? POLL_LIMIT_NS : gap));
            continue;
        }
        idle_since = 0;
        uint32_t w = LD(&g_tracker_word);
        ST(&g_tracker_parked, 1);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!LD(&g_busy) && !LD(&g_owed) && !LD(&g_closing)) futex_wait(&g_tracker_word, w, 1000000000L);
        ST(&g_tracker_parked, 0);
    }
    return NULL;
}

/* ------------------------------------------------------------------ Lv3 mapping */

/* Read without K.mu (it is asked at launches): written under K.mu at attach and fork only. */
static int lv3_wanted(void) { return LD(&K.wanted) && LD(&K.fd) >= 0; }

/* A default stream: its queue is the one new compute queue seen after its first launch. */
static void kfd_map_default(xstream *st)
{
    /* tried once a node wants Lv3: a launch before that (no node yet) leaves the stream to a later one */
    if (!lv3_wanted() || __atomic_exchange_n(&st->kq_tried, 1, __ATOMIC_SEQ_CST)) return;
    uint32_t fresh[4];
    pthread_mutex_lock(&K.mu);
    int k = kfd_look_locked(fresh, 4);
    pthread_mutex_unlock(&K.mu);
    if (k == 1) st->kq = fresh[0];
    xlog(2, "xq: stream %s: %s", st->label, k == 1 ? "mapped to its KFD queue" : "no unique new KFD queue; Lv1 only");
}

/* Around a stream's creation: the queues seen before are not its own. Returns whether K.mu is
 * held (then kfd_after_create releases it: creations are looked at one at a time). */
static void session_start(void);
static __thread int t_creating; /* a runtime whose create calls another create: looked at once */
static int kfd_before_create(void)
{
    int dev;
    if (t_creating++ || !hip_ready() || hip.GetDevice(&dev) != hipSuccess) return 0; /* no device: HIP says so */
    if (!LD(&S.started)) session_start(); /* whether the node wants Lv3 is known from its OK */
    if (!lv3_wanted()) return 0;
    if (!LD(&K.trap)) { /* the trap is enabled only once HIP is initialised: this initialises it */
        hipError_t (*count)(int *) = (hipError_t(*)(int *))hip_sym("hipGetDeviceCount");
        int n = 0;
        if (!count || count(&n) != hipSuccess) return 0;
    }
    pthread_mutex_lock(&K.mu);
    uint32_t none[1];
    kfd_look_locked(none, 0);
    return 1;
}

static void kfd_after_create(int held, hipError_t r, hipStream_t *out)
{
    t_creating--;
    if (!held) return;
    uint32_t fresh[4];
    int k = r == hipSuccess && out ? kfd_look_locked(fresh, 4) : 0;
    if (k == 1 && K.nmade < KMAX) K.made[K.nmade].h = *out, K.made[K.nmade++].q = fresh[0];
    pthread_mutex_unlock(&K.mu);
    if (r == hipSuccess && out && k != 1) xlog(2, "xq: a new stream: %d new KFD queues (need exactly 1); Lv1 only", k);
}

/* ------------------------------------------------------------------ wrapped entry points */

#define REAL(NAME, PT)                                                                              \
    typedef hipError_t(*fn_t) PT;                                                                   \
    static fn_t real_;                                                                              \
    fn_t r_ = LD(&real_);                                                                           \
    if (!r_) {                                                                                      \
        r_ = (fn_t)hip_sym(#NAME);                                                                  \
        if (!r_) return hipErrorSharedObjectSymbolNotFound;                                         \
        ST(&real_, r_);                                                                             \
    }

/* t_inside: this thread is inside a wrapped call. A runtime whose entry points call each other
 * through the PLT (hipMemcpyWithStream calling hipMemcpyAsync, a create calling a launch) reaches
 * a wrapper again: that inner call is part of the outer one, already counted (gated again, it
 * could wait for the outer launch's own slot under a threshold of 1 forever), so it passes. */
static __thread int t_inside;
#define GATED_(NAME, PT, ARGS, STREAM, PTSZ)                                                        \
    XQ_EXPORT hipError_t NAME PT                                                                    \
    {                                                                                               \
        REAL(NAME, PT)                                                                              \
        gate g_ = {0};                                                                              \
        if (t_inside || !gate_enter(&g_, (STREAM), (PTSZ))) return r_ ARGS;                         \
        t_inside++;                                                                                 \
        hipError_t e_ = r_ ARGS;                                                                    \
        t_inside--;                                                                                 \
        gate_exit(&g_, e_);                                                                         \
        return e_;                                                                                  \
    }
#define GATED(NAME, PT, ARGS, STREAM) GATED_(NAME, PT, ARGS, STREAM, 0)
/* with the _spt twin (per-thread default stream for a null stream) */
#define GATED2(NAME, PT, ARGS, STREAM) GATED_(NAME, PT, ARGS, STREAM, 0) GATED_(NAME##_spt, PT, ARGS, STREAM, 1)

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
GATED2(hipMemcpyAsync, (void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t s), (dst, src, n, k, s), s)
GATED(hipMemcpyWithStream, (void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t s), (dst, src, n, k, s), s)
GATED(hipMemcpyHtoDAsync, (hipDeviceptr_t dst, void *src, size_t n, hipStream_t s), (dst, src, n, s), s)
GATED(hipMemcpyDtoHAsync, (void *dst, hipDeviceptr_t src, size_t n, hipStream_t s), (dst, src, n, s), s)
GATED(hipMemcpyDtoDAsync, (hipDeviceptr_t dst, hipDeviceptr_t src, size_t n, hipStream_t s), (dst, src, n, s), s)
GATED2(hipMemcpy2DAsync,
       (void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h, hipMemcpyKind k, hipStream_t s),
       (dst, dp, src, sp, w, h, k, s), s)
GATED(hipMemcpyPeerAsync, (void *dst, int dd, const void *src, int sd, size_t n, hipStream_t s), (dst, dd, src, sd, n, s), s)
GATED2(hipMemcpyToSymbolAsync, (const void *sym, const void *src, size_t n, size_t off, hipMemcpyKind k, hipStream_t s),
       (sym, src, n, off, k, s), s)
GATED2(hipMemcpyFromSymbolAsync, (void *dst, const void *sym, size_t n, size_t off, hipMemcpyKind k, hipStream_t s),
       (dst, sym, n, off, k, s), s)
GATED2(hipMemsetAsync, (void *dst, int v, size_t n, hipStream_t s), (dst, v, n, s), s)
GATED(hipMemsetD8Async, (hipDeviceptr_t d, unsigned char v, size_t n, hipStream_t s), (d, v, n, s), s)
GATED(hipMemsetD16Async, (hipDeviceptr_t d, unsigned short v, size_t n, hipStream_t s), (d, v, n, s), s)
GATED(hipMemsetD32Async, (hipDeviceptr_t d, int v, size_t n, hipStream_t s), (d, v, n, s), s)
GATED2(hipMemset2DAsync, (void *dst, size_t pitch, int v, size_t w, size_t h, hipStream_t s), (dst, pitch, v, w, h, s), s)
GATED2(hipGraphLaunch, (hipGraphExec_t g, hipStream_t s), (g, s), s)
GATED2(hipLaunchHostFunc, (hipStream_t s, hipHostFn_t fn, void *data), (s, fn, data), s)

/* Stream creation: the KFD queue that appears is the stream's (Lv3). Its priority reaches the
 * node in STREAM (hipStreamGetPriority), as a CUDA stream's does. */
XQ_EXPORT hipError_t hipStreamCreate(hipStream_t *s)
{
    REAL(hipStreamCreate, (hipStream_t *))
    int held = kfd_before_create();
    t_inside++;
    hipError_t r = r_(s);
    t_inside--;
    kfd_after_create(held, r, s);
    return r;
}
XQ_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned flags)
{
    REAL(hipStreamCreateWithFlags, (hipStream_t *, unsigned))
    int held = kfd_before_create();
    t_inside++;
    hipError_t r = r_(s, flags);
    t_inside--;
    kfd_after_create(held, r, s);
    return r;
}
XQ_EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t *s, unsigned flags, int prio)
{
    REAL(hipStreamCreateWithPriority, (hipStream_t *, unsigned, int))
    int held = kfd_before_create();
    t_inside++;
    hipError_t r = r_(s, flags, prio);
    t_inside--;
    kfd_after_create(held, r, s);
    return r;
}

/* Forgotten before the real call: a handle freed by it may be reused at once by another thread. */
XQ_EXPORT hipError_t hipStreamDestroy(hipStream_t s)
{
    REAL(hipStreamDestroy, (hipStream_t))
    if (s && s != hipStreamPerThread && LD(&g_hip_state) > 0) stream_forget(s);
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
    ADD(&g_captures, 1);
    pthread_mutex_unlock(&cap_mu);
}

static void capture_ended(hipStream_t h, int ptsz)
{
    pid_t tid = !h || h == hipStreamPerThread || ptsz ? my_tid() : 0;
    pthread_mutex_lock(&cap_mu);
    for (int i = 0; i < g_capn; i++)
        if (g_cap[i].h == h && g_cap[i].tid == tid) {
            g_cap[i] = g_cap[--g_capn];
            ADD(&g_captures, -1);
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
    void *p = real_dlsym(h, name);
    return p && is_ours(p) ? p : NULL;
}

/* What to hand out for name when the runtime's lookup found r. Our own lookups may fail on the
 * way (dlopen NOLOAD of a soname not loaded): their error is dropped, so that a program checking
 * dlerror() after a dlsym that found something sees none. */
static void *handout(const char *name, void *r)
{
    if (!r || !name || strncmp(name, "hip", 3) || is_ours(r)) return r;
    void *w = own_sym(name);
    w = w && hip_sym(name) == r ? w : r;
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
        if (!(r_ = (gpa_t)hip_sym("hipGetProcAddress"))) return hipErrorNotSupported;
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
    if (!LD(&g_real_dlsym)) real_dlsym(RTLD_DEFAULT, "dlsym"); /* resolves glibc's */
    return (void *)LD(&g_real_dlsym);
}

__attribute__((used, visibility("hidden"))) void *xq_hip_dlsym_c(void *handle, const char *name)
{
    if (name && !strncmp(name, "hip", 3)) return handout(name, real_dlsym(handle, name));
    dlsym_t n = LD(&g_next_dlsym);
    if (!n) {
        n = (dlsym_t)real_dlsym(RTLD_NEXT, "dlsym");
        if (!n || is_ours((void *)n)) n = (dlsym_t)xq_hip_glibc_dlsym();
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
    if (S.fd >= 0) close(S.fd);
    S.fd = -1, S.started = 0, S.ever_attached = 0, S.used = NULL, S.owner = NULL, S.nslots = 0;
    pthread_mutex_init(&S.mu, NULL);
    pthread_mutex_init(&S.send_mu, NULL);
    pthread_mutex_init(&S.start_mu, NULL);
    pthread_mutex_init(&tab_mu, NULL);
    pthread_mutex_init(&cap_mu, NULL);
    pthread_mutex_init(&hip_mu, NULL);
    pthread_mutex_init(&K.mu, NULL);
    /* the parent's queues and KFD descriptor are not the child's: it probes its own */
    if (K.fd >= 0) close(K.fd);
    if (K.efd >= 0) close(K.efd);
    K.fd = K.efd = -1, K.wanted = K.trap = 0, K.nmade = K.nseen = 0, K.last_suspend = 0;
    g_state = (g_state | 1) + 1;
    g_beat = (xw_beat){0}, g_frozen = 0;
    memset(g_hash, 0, sizeof g_hash);
    g_free = NULL, g_all = NULL;
    memset(t_ptds, 0, sizeof t_ptds);
    g_busy = g_owed = g_closing = g_limit_waiters = g_captures = 0;
    g_capn = 0;
    g_tracker_on = g_tracker_parked = 0;
    t_tid = 0;
}

__attribute__((constructor)) static void xq_hip_init(void)
{
    const char *v = getenv("XQ_LOG");
    if (v && *v >= '0' && *v <= '9') xq_log_level = atoi(v);
    pthread_key_create(&g_ptds_key, ptds_thread_exit);
    pthread_atfork(NULL, NULL, atfork_child);
}
