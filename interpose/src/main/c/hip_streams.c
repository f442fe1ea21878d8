/*
 * hip_streams.c: the stream table (explicit streams, the null stream per device, the per-thread
 * default stream per device and thread), visible-device mapping and PCI bus ids.
 */
#include "hip_int.h"

pthread_mutex_t xqh_tab_mu = PTHREAD_MUTEX_INITIALIZER;
xstream *xqh_hash[BUCKETS], *xqh_free, *xqh_all;
static uint32_t g_explicit_n;
uint32_t xqh_busy, xqh_owed, xqh_closing, xqh_limit_waiters, xqh_captures, xqh_exiting;
uint32_t xqh_state; /* odd: attached */
uint32_t xqh_tracker_word, xqh_tracker_parked, xqh_tracker_on;
pthread_key_t xqh_ptds_key;
__thread xstream *xqh_t_ptds[8]; /* this thread's per-thread default streams, by device (first 8) */

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
int xqh_physical_device(int dev)
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

xstream *xqh_find_locked(int kind, hipStream_t h, int dev, pid_t tid)
{
    for (xstream *s = xqh_hash[bucket(h, dev, tid)]; s; s = s->next_hash)
        if (s->kind == kind && s->h == h && (kind == K_EXPLICIT || s->device == dev) && s->tid == tid) return s;
    return NULL;
}


static uint32_t made_queue(hipStream_t h)
{
    uint32_t q = 0;
    pthread_mutex_lock(&xqh_kfd.mu);
    for (int i = 0; i < xqh_kfd.nmade; i++)
        if (xqh_kfd.made[i].h == h) q = xqh_kfd.made[i].q, xqh_kfd.made[i] = xqh_kfd.made[--xqh_kfd.nmade];
    pthread_mutex_unlock(&xqh_kfd.mu);
    return q;
}

/* The device's PCI bus id as HIP writes it (0000:c1:00.0), for the node to find its own device
 * by whatever ordinal the process sees (UUID lists, containers); "" when HIP does not say or
 * says something that is not one (only hex digits, ':' and '.' are passed on). */
static void pci_bus_id(int dev, char *out, int n)
{
    out[0] = 0;
    if (!xqh_hip.DeviceGetPCIBusId || xqh_hip.DeviceGetPCIBusId(out, n, dev) != hipSuccess) {
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
xstream *xqh_stream_new(int kind, hipStream_t h, int dev, int real, pid_t tid)
{
    int prio = 0, least = 0, greatest = 0;
    char pci[24];
    pci_bus_id(real, pci, sizeof pci);
    xqh_hip.StreamGetPriority(kind == K_EXPLICIT ? h : kind == K_PTDS ? hipStreamPerThread : NULL, &prio);
    xqh_hip.PriorityRange(&least, &greatest);
    uint32_t kq = kind == K_EXPLICIT ? made_queue(h) : 0;
    pthread_mutex_lock(&xqh_tab_mu);
    xstream *st = xqh_find_locked(kind, h, kind == K_EXPLICIT ? 0 : dev, tid);
    int fresh = !xqh_free;
    if (st || (fresh && !(st = calloc(1, sizeof *st)))) { /* made by another thread meanwhile, or no memory */
        pthread_mutex_unlock(&xqh_tab_mu);
        return st;
    }
    if (!fresh) {
        st = xqh_free;
        xqh_free = st->next_hash;
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
    st->next_hash = xqh_hash[b];
    xqh_hash[b] = st;
    ST(&st->in_use, 1);
    if (fresh) {
        st->next_all = xqh_all;
        ST(&xqh_all, st);
    }
    pthread_mutex_unlock(&xqh_tab_mu);
    if (kind == K_PTDS) pthread_setspecific(xqh_ptds_key, (void *)1);
    return st;
}

/* The device a stream's work runs on: an explicit stream's own, else the current one; -1 when
 * HIP has none (no GPU: the call passes through untracked and reports that itself). */
static void forget_locked(xstream *st)
{
    xstream **pp = &xqh_hash[bucket(st->h, st->kind == K_EXPLICIT ? 0 : st->device, st->tid)];
    while (*pp && *pp != st) pp = &(*pp)->next_hash;
    if (!*pp) return;
    *pp = st->next_hash;
    st->next_hash = NULL;
    ST(&st->closing, 1);
    ADD(&xqh_closing, 1);
}

void xqh_stream_forget(hipStream_t h)
{
    pthread_mutex_lock(&xqh_tab_mu);
    xstream *st = xqh_find_locked(K_EXPLICIT, h, 0, 0);
    if (st) forget_locked(st);
    pthread_mutex_unlock(&xqh_tab_mu);
    if (st) xqh_tracker_kick();
}

void xqh_ptds_thread_exit(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&xqh_tab_mu);
    for (int d = 0; d < 8; d++)
        if (xqh_t_ptds[d]) forget_locked(xqh_t_ptds[d]), xqh_t_ptds[d] = NULL;
    pthread_mutex_unlock(&xqh_tab_mu);
    xqh_tracker_kick();
}
