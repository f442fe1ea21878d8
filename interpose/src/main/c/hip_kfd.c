/*
 * hip_kfd.c: KFD (Lv3): the KFD debugger API on this process's own queues, and which KFD queue
 * is a stream's (seen appear at its creation, or at a default stream's first launch).
 */
#include "hip_int.h"

struct xqh_kfd_state xqh_kfd = {.mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .efd = -1};

const char *xqh_errno_name(int e)
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
int xqh_kfd_probe(void)
{
    const char *v = getenv("XQ_LV3");
    if (v && !strcmp(v, "0")) return 0;
    if (v && *v && strcmp(v, "1")) xlog(1, "xq: ignoring XQ_LV3='%s': not 0 or 1", v);
    pthread_mutex_lock(&xqh_kfd.mu);
    if (xqh_kfd.fd < 0) {
        const char *path = getenv("XQ_KFD");
        int fd = open(path && *path ? path : "/dev/kfd", O_RDWR | O_CLOEXEC);
        uint32_t ver[2] = {0, 0};
        if (fd >= 0 && (ioctl(fd, KFD_IOC_GET_VERSION, ver) || ver[0] != 1 || ver[1] < 13)) {
            xlog(2, "xq: KFD %u.%u has no debugger API (needs 1.13); no Lv3", ver[0], ver[1]);
            close(fd);
            fd = -1;
        }
        xqh_kfd.fd = fd;
        /* the same defaults as hal-lv3-kfd: 100 us grace, suspends 2 ms apart at least */
        xqh_kfd.grace_units = (env_uint("XQ_KFD_GRACE_US", 100, 1000000) * 21 + 9) / 10; /* at 2.1 GHz, rounded up */
        if (!xqh_kfd.grace_units) xqh_kfd.grace_units = 1;
        xqh_kfd.min_gap_ns = (uint64_t)env_uint("XQ_KFD_MIN_INTERVAL_US", 2000, 10000000) * 1000;
    }
    int ok = xqh_kfd.fd >= 0;
    pthread_mutex_unlock(&xqh_kfd.mu);
    return ok;
}

int xqh_dbg_trap(uint32_t op, uint64_t a, uint64_t b, uint32_t c, uint32_t d)
{
    uint8_t args[32] = {0};
    uint32_t pid = (uint32_t)getpid();
    memcpy(args, &pid, 4), memcpy(args + 4, &op, 4);
    memcpy(args + 8, &a, 8), memcpy(args + 16, &b, 8), memcpy(args + 24, &c, 4), memcpy(args + 28, &d, 4);
    return ioctl(xqh_kfd.fd, KFD_IOC_DBG_TRAP, args);
}

/* Caller holds K.mu. */
int xqh_kfd_trap_locked(void)
{
    if (xqh_kfd.trap) return xqh_kfd.trap > 0;
    if ((xqh_kfd.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        snprintf(xqh_kfd.why, sizeof xqh_kfd.why, "eventfd_%s", xqh_errno_name(errno));
        return (xqh_kfd.trap = -1), 0;
    }
    uint8_t rinfo[16] = {0};
    /* enable: exception_mask, rinfo_ptr, rinfo_size, dbg_fd */
    if (xqh_dbg_trap(KFD_OP_ENABLE, 0, (uint64_t)(uintptr_t)rinfo, 16, (uint32_t)xqh_kfd.efd) && errno != EALREADY) {
        snprintf(xqh_kfd.why, sizeof xqh_kfd.why, "enable_%s", xqh_errno_name(errno));
        xlog(1, "xq: KFD debug trap refused (%s); Lv3 unavailable", xqh_errno_name(errno));
        return (xqh_kfd.trap = -1), 0;
    }
    return (xqh_kfd.trap = 1), 1;
}

/* Snapshot (clearing QUEUE_NEW, which makes queues suspendable); the compute queues not seen
 * before are fresh[]; all are marked seen. Returns how many fresh, -1 on failure. K.mu held. */
static int kfd_look_locked(uint32_t *fresh, int cap)
{
    if (!xqh_kfd_trap_locked()) return -1;
    static uint8_t buf[KMAX * 64];
    /* snapshot: exception_mask, snapshot_buf_ptr, num_queues, entry_size */
    uint8_t args[32] = {0};
    uint32_t pid = (uint32_t)getpid(), op = KFD_OP_SNAPSHOT, n = KMAX, esz = 64;
    uint64_t mask = KFD_EC_QUEUE_NEW, ptr = (uint64_t)(uintptr_t)buf;
    memcpy(args, &pid, 4), memcpy(args + 4, &op, 4), memcpy(args + 8, &mask, 8), memcpy(args + 16, &ptr, 8);
    memcpy(args + 24, &n, 4), memcpy(args + 28, &esz, 4);
    if (ioctl(xqh_kfd.fd, KFD_IOC_DBG_TRAP, args)) return -1;
    memcpy(&n, args + 24, 4), memcpy(&esz, args + 28, 4);
    if (n > KMAX) n = KMAX;
    if (esz < 56 || esz > 64) esz = 64;
    int k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id, type;
        memcpy(&id, buf + (size_t)i * esz + 40, 4), memcpy(&type, buf + (size_t)i * esz + 52, 4);
        int seen = 0;
        for (int j = 0; j < xqh_kfd.nseen; j++) seen |= xqh_kfd.seen[j] == id;
        if (seen) continue;
        if (xqh_kfd.nseen < KMAX) xqh_kfd.seen[xqh_kfd.nseen++] = id;
        if (type == KFD_QUEUE_COMPUTE_AQL && k < cap) fresh[k++] = id;
        else if (type == KFD_QUEUE_COMPUTE_AQL) k++;
    }
    return k;
}

/* ------------------------------------------------------------------ Lv3 mapping */

/* Read without K.mu (it is asked at launches): written under K.mu at attach and fork only. */
static int lv3_wanted(void) { return LD(&xqh_kfd.wanted) && LD(&xqh_kfd.fd) >= 0; }

/* A default stream: its queue is the one new compute queue seen after its first launch. Tried and
 * mapped in one hold of K.mu, which the node's SUSPEND takes before it reads st->kq: mapped
 * after the lock was let go, a SUSPEND that came from the socket reader while the launching thread
 * looked found the stream tried and not yet mapped ("LV3 N failed unmapped", about one run in
 * twenty of lv3_default_stream_late_node). */
void xqh_kfd_map_default(xstream *st)
{
    /* tried once a node wants Lv3: a launch before that (no node yet) leaves the stream to a later one */
    if (!lv3_wanted()) return;
    uint32_t fresh[4];
    pthread_mutex_lock(&xqh_kfd.mu);
    if (LD(&st->kq_tried)) {
        pthread_mutex_unlock(&xqh_kfd.mu);
        return;
    }
    int k = kfd_look_locked(fresh, 4);
    if (k == 1) __atomic_store_n(&st->kq, fresh[0], __ATOMIC_SEQ_CST);
    __atomic_store_n(&st->kq_tried, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&xqh_kfd.mu);
    xlog(2, "xq: stream %s: %s", st->label, k == 1 ? "mapped to its KFD queue" : "no unique new KFD queue; Lv1 only");
}

/* Around a stream's creation: the queues seen before are not its own. Returns whether K.mu is
 * held (then xqh_kfd_after_create releases it: creations are looked at one at a time). */
static __thread int t_creating; /* a runtime whose create calls another create: looked at once */
int xqh_kfd_before_create(void)
{
    int dev;
    if (t_creating++ || !xqh_hip_resolve() || xqh_hip.GetDevice(&dev) != hipSuccess) return 0; /* no device: HIP says so */
    if (!LD(&xqh_session.started)) xqh_session_start(); /* whether the node wants Lv3 is known from its OK */
    if (!lv3_wanted()) return 0;
    if (!LD(&xqh_kfd.trap)) { /* the trap is enabled only once HIP is initialised: this initialises it */
        hipError_t (*count)(int *) = (hipError_t(*)(int *))xqh_hip_sym("hipGetDeviceCount");
        int n = 0;
        if (!count || count(&n) != hipSuccess) return 0;
    }
    pthread_mutex_lock(&xqh_kfd.mu);
    uint32_t none[1];
    kfd_look_locked(none, 0);
    return 1;
}

void xqh_kfd_after_create(int held, hipError_t r, hipStream_t *out)
{
    t_creating--;
    if (!held) return;
    uint32_t fresh[4];
    int k = r == hipSuccess && out ? kfd_look_locked(fresh, 4) : 0;
    if (k == 1 && xqh_kfd.nmade < KMAX) xqh_kfd.made[xqh_kfd.nmade].h = *out, xqh_kfd.made[xqh_kfd.nmade++].q = fresh[0];
    pthread_mutex_unlock(&xqh_kfd.mu);
    if (r == hipSuccess && out && k != 1) xlog(2, "xq: a new stream: %d new KFD queues (need exactly 1); Lv1 only", k);
}
