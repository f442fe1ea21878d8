/*
 * cuda_estimates.c: what a command of a kind costs on the device: the cost table learned from
 * completions, and timed samples (XQ_ESTIMATES=timed) that measure a kind between two events.
 */
#include "cuda_int.h"

/* ------------------------------------------------------------------ command costs
 * What one command of a kind takes on the device, learned from completions: a kernel by its
 * function and launch shape, a graph by its executable, a copy or memset by its entry point and
 * size class. The window is a budget of these estimates, so a burst of 5 us kernels fills it
 * with dozens of them and one 2 ms kernel alone; the stream's average would admit the other
 * way round (too few small ones, two long ones). */
#define CTAB 8192
#define SAMPLE_EVERY 32 /* memop: every 32nd command of a known kind is marked alone, to keep learning it */
/* A kind this long (its estimate) is sampled every SAMPLE_EVERY_LONG commands, and on an idle
 * stream too (xqc_smp_take): its samples cost two event records beside milliseconds of work, and
 * an estimate too long must be unlearned within a few of them, not a few seconds (the arrival
 * guards refuse what it would not fit) */
#define SAMPLE_LONG_NS 1000000ull
#define SAMPLE_EVERY_LONG 4
static struct {
    uint64_t key, est;
    uint32_t seen;  /* commands of the kind since it was last sampled */
    uint32_t timed; /* timed samples est was learned from (then batches no longer move it) */
    uint32_t first; /* its first commands (all of them sampled, timed estimates) */
    uint32_t last[3]; /* timed: its last three samples (ns); est is their median */
    /* kinds are kept per width (xqc_cost_get_w): a narrowed one knows its whole-device kind
     * (base) and its width (w of sms multiprocessors); the whole-device kind keeps, as prior,
     * what its latest narrowed width measured, scaled to the whole device */
    uint64_t base, prior;
    uint32_t w, need;
} g_cost[CTAB];
#define SAMPLE_FIRST 4 /* timed: a kind's first commands are all sampled */
static pthread_mutex_t cost_mu = PTHREAD_MUTEX_INITIALIZER;

/* Gives entry i to key, cleared: its old key withdrawn first, the new one published last (readers
 * look keys up without cost_mu). Caller holds cost_mu. */
static void cost_reset(unsigned i, uint64_t key)
{
    __atomic_store_n(&g_cost[i].key, 0, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&g_cost[i].est, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_cost[i].seen, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_cost[i].first, 0, __ATOMIC_RELAXED);
    g_cost[i].timed = 0, g_cost[i].last[0] = g_cost[i].last[1] = g_cost[i].last[2] = 0; /* the writers' own, under cost_mu */
    g_cost[i].base = g_cost[i].prior = 0, g_cost[i].w = g_cost[i].need = 0;
    __atomic_store_n(&g_cost[i].key, key, __ATOMIC_RELEASE);
}

/* The estimate for key, 0 when none yet; with due, also whether this command of the kind is the
 * one to sample (measure alone): the first of a kind (which enters the table unmeasured, so the
 * ones launched before its measurement arrives are not all sampled too), then every 32nd.
 * A kind already in the table is read without cost_mu: every launch looks its kind up, and the
 * mutex was a cache line the launching thread and the tracker (which learns under it) took from
 * each other at every launch. The writers publish a key with a release store after its entry is
 * cleared, so a reader that finds its key reads that entry's estimate or 0 (the kind unknown for
 * an instant: the unknown charge, never a stranger's estimate). The sampling counters may lose a
 * count between two threads: a sample a little early or late. */
/* A kind not in the table yet (xqc_cost_get): made under the lock, another thread may be making it
 * too. Returns its estimate (0: none yet). */
static XQ_COLD uint64_t cost_make(uint64_t key, unsigned i0, int *due)
{
    uint64_t r = 0;
    unsigned i, n, hole = CTAB;
    pthread_mutex_lock(&cost_mu);
    for (i = i0, n = 0; n < 8; n++, i = (i + 1) % CTAB) {
        if (g_cost[i].key == key) break;
        if (!g_cost[i].key && hole == CTAB) hole = i;
    }
    if (n < 8) { /* made meanwhile */
        r = g_cost[i].est;
        if (xqc_timed && g_cost[i].first < SAMPLE_FIRST) __atomic_store_n(&g_cost[i].first, g_cost[i].first + 1, __ATOMIC_RELAXED), *due = 1;
    } else {
        i = hole < CTAB ? hole : i0;
        cost_reset(i, key);
        __atomic_store_n(&g_cost[i].first, 1, __ATOMIC_RELAXED), *due = 1;
    }
    pthread_mutex_unlock(&cost_mu);
    return r;
}

XQ_HOT uint64_t xqc_cost_get(uint64_t key, int *due)
{
    if (due) *due = 0;
    if (XQ_UNLIKELY(!key)) return 0;
    unsigned i0 = (unsigned)(key % CTAB), i = i0, n = 0;
    for (; n < 8; n++, i = (i + 1) % CTAB)
        if (__atomic_load_n(&g_cost[i].key, __ATOMIC_ACQUIRE) == key) break;
    if (XQ_UNLIKELY(n == 8)) return due ? cost_make(key, i0, due) : 0;
    uint64_t r = __atomic_load_n(&g_cost[i].est, __ATOMIC_RELAXED);
    if (due) {
        uint32_t f = __atomic_load_n(&g_cost[i].first, __ATOMIC_RELAXED);
        if (XQ_UNLIKELY(xqc_timed && f < SAMPLE_FIRST)) __atomic_store_n(&g_cost[i].first, f + 1, __ATOMIC_RELAXED), *due = 1;
        else {
            uint32_t seen = __atomic_load_n(&g_cost[i].seen, __ATOMIC_RELAXED) + 1;
            if (XQ_UNLIKELY(seen >= (r >= SAMPLE_LONG_NS ? SAMPLE_EVERY_LONG : SAMPLE_EVERY))) seen = 0, *due = 1;
            __atomic_store_n(&g_cost[i].seen, seen, __ATOMIC_RELAXED);
        }
    }
    return r;
}

/* xqc_cost_get for a lean launch (cuda_gate.c: xqc_lean_enter): the estimate of a kind in the table
 * and measured, when this command of it is not one to sample, its count moved on as xqc_cost_get's
 * would be; 0, with nothing changed, otherwise (the launch takes the full path, which asks again). */
XQ_HOT uint64_t xqc_cost_lean(uint64_t key)
{
    unsigned i = (unsigned)(key % CTAB), n = 0;
    for (; n < 8; n++, i = (i + 1) % CTAB)
        if (__atomic_load_n(&g_cost[i].key, __ATOMIC_ACQUIRE) == key) break;
    if (XQ_UNLIKELY(n == 8)) return 0;
    uint64_t r = __atomic_load_n(&g_cost[i].est, __ATOMIC_RELAXED);
    if (XQ_UNLIKELY(!r) || (xqc_timed && __atomic_load_n(&g_cost[i].first, __ATOMIC_RELAXED) < SAMPLE_FIRST)) return 0;
    uint32_t seen = __atomic_load_n(&g_cost[i].seen, __ATOMIC_RELAXED) + 1;
    if (XQ_UNLIKELY(seen >= (r >= SAMPLE_LONG_NS ? SAMPLE_EVERY_LONG : SAMPLE_EVERY))) return 0;
    __atomic_store_n(&g_cost[i].seen, seen, __ATOMIC_RELAXED);
    return r;
}

/* The entry of key, or -1; with make, one made for it in a free place (none free: -1; nothing is
 * pushed out). Caller holds cost_mu. */
static int cost_find(uint64_t key, int make)
{
    unsigned i0 = (unsigned)(key % CTAB), i = i0, n = 0, hole = CTAB;
    for (; n < 8; n++, i = (i + 1) % CTAB) {
        if (g_cost[i].key == key) return (int)i;
        if (!g_cost[i].key && hole == CTAB) hole = i;
    }
    if (!make || hole == CTAB) return -1;
    i = hole;
    cost_reset(i, key);
    return (int)i;
}

/* The kind of base launched on w of the device's sms multiprocessors (w 0: the whole device, the
 * kind itself): a kind's time depends on the width it runs at (a 21 ms GEMM took 42 ms on 64 of an
 * H200's 132, 94 ms on 32), and one learned narrowed said nothing of the whole device, where the
 * arrival guards need to know whether it fits between another tenant's requests. */
static inline uint64_t width_key(uint64_t base, int w)
{
    if (w <= 0) return base;
    uint64_t k = base ^ (uint64_t)(unsigned)w * 0xD6E8FEB86659FD93ull;
    return k ? k : 1;
}

static uint64_t cost_get_w_made(uint64_t base, int w, int need, uint64_t wk, uint32_t scale, uint64_t r);
/* xqc_cost_get for base launched on w multiprocessors (0: the whole device, the kind itself) by a
 * launch that could fill need of them: *wk the kind's key at that width, *scale how much of the
 * time it takes there it would take on the whole device (1/1024: w / need where need > w, else
 * all of it). A width not measured yet is estimated from another: narrowed, from the whole
 * device's estimate times need / w (the time of a kernel that fills the device grows so; one
 * that waits on memory, less: an estimate too long, never too short); on the whole device, from
 * the latest narrowed width's, times w / need (too short for a kernel that waits on memory: until
 * its own first sample, which is taken at once). */
XQ_HOT uint64_t xqc_cost_get_w(uint64_t base, int w, int need, int *due, uint64_t *wk, uint32_t *scale)
{
    if (w < 0) w = 0;
    *wk = width_key(base, w);
    *scale = w > 0 && need > w ? (uint32_t)((uint64_t)w * 1024 / (uint64_t)need) : 1024;
    uint64_t r = xqc_cost_get(*wk, due);
    if (XQ_LIKELY(!base || (!w && r))) return r;
    return cost_get_w_made(base, w, need, *wk, *scale, r);
}

/* xqc_cost_get_w's rare part: a narrowed kind's entry made (it must know its base before it
 * learns), or an estimate from another width when its own is not known yet. */
static XQ_COLD uint64_t cost_get_w_made(uint64_t base, int w, int need, uint64_t wk, uint32_t scale, uint64_t r)
{
    pthread_mutex_lock(&cost_mu);
    if (w > 0) {
        int i = cost_find(wk, 1); /* made here when not due: it must know its base before it learns */
        if (i >= 0 && !g_cost[i].base) g_cost[i].base = base, g_cost[i].w = (uint32_t)w, g_cost[i].need = (uint32_t)need;
    }
    if (!r) {
        int b = cost_find(base, 0);
        if (b >= 0) r = w > 0 ? g_cost[b].est * 1024 / scale : g_cost[b].prior;
    }
    pthread_mutex_unlock(&cost_mu);
    return r;
}

/* Learns one measured run of key (moving average, weight 1/4); a full probe run forgets its first.
 * timed: from a timed sample, which replaces what batches taught and from then on is the only
 * teacher (a batch's share is proportional to the estimates it was launched with, so it keeps
 * whatever ratio between kinds it started from: a 5 us kernel first charged a stream's 90 us
 * average kept ~90 us; ResNet-50 training's estimates summed to 1.9 x its device time). */
void xqc_cost_put(uint64_t key, uint64_t run, int timed)
{
    if (!key || !run) return;
    pthread_mutex_lock(&cost_mu);
    unsigned i0 = (unsigned)(key % CTAB), i = i0, n = 0;
    for (; n < 8; n++, i = (i + 1) % CTAB)
        if (g_cost[i].key == key || !g_cost[i].key) break;
    if (n == 8) i = i0;
    if (g_cost[i].key != key) cost_reset(i, key);
    if (timed) { /* the median of its last three samples (two: their mean): a sample slowed by
                  * another tenant's kernels running beside it, or one the host delayed, does not
                  * stand for the kind */
        uint32_t *l = g_cost[i].last, k = g_cost[i].timed < 3 ? g_cost[i].timed : 2;
        if (g_cost[i].timed >= 3) l[0] = l[1], l[1] = l[2];
        l[k] = run < UINT32_MAX ? (uint32_t)run : UINT32_MAX;
        uint32_t m = ++g_cost[i].timed;
        uint64_t a = l[0], b = l[1], c = l[2];
        __atomic_store_n(&g_cost[i].est, m == 1 ? a : m == 2 ? (a + b) / 2 : a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b), __ATOMIC_RELAXED);
    } else if (g_cost[i].timed); /* a batch's share: the timed samples know better */
    else if (!g_cost[i].est) __atomic_store_n(&g_cost[i].est, run, __ATOMIC_RELAXED); /* its first measurement */
    else {
        int64_t e = (int64_t)g_cost[i].est;
        e += ((int64_t)run - e) / 4;
        __atomic_store_n(&g_cost[i].est, e > 0 ? (uint64_t)e : 1, __ATOMIC_RELAXED);
    }
    if (g_cost[i].base && g_cost[i].w && g_cost[i].est) { /* a narrowed width teaches the whole device's prior */
        uint32_t w = g_cost[i].w, need = g_cost[i].need > w ? g_cost[i].need : w;
        uint64_t p = g_cost[i].est * w / need, base = g_cost[i].base;
        int bi = cost_find(base, 1);
        if (bi >= 0 && bi != (int)i) g_cost[bi].prior = p ? p : 1;
    }
    pthread_mutex_unlock(&cost_mu);
}

/* ------------------------------------------------------------------ timed samples
 * A kind due to be measured (its first command, then every 32nd) is measured on the device:
 * timing events recorded just before and just after the launch, their elapsed time read by the
 * tracker once the stream completed the command. Exact where batches of completions are not
 * (see xqc_cost_put), and an event record costs the device nothing where a memop mark costs ~2 us. */
#define SMP_LEAD_NS 20000ull /* a sample of a kind measured before needs this much work ahead of it */

/* Whether the launch being made on st (counted in in_flight already) is a timed sample: reserves
 * slot i (ord 0) and returns it, or -1. A kind measured before is sampled only behind at least
 * SMP_LEAD_NS of estimated work, so that the first event is passed when that work ends, with the
 * command already queued behind it: on an idle stream the time between the record and the
 * launch reaching the device would be counted too. Except a long kind (SAMPLE_LONG_NS), where
 * those microseconds are small beside it and err long: a stream whose window admits its next
 * command only once the last has ended (as it does when the estimate is too long) is idle at
 * every launch, and was never sampled again: two GEMM processes kept estimates of 31.7 and
 * 37.0 ms for 21.5 ms kernels through a whole run, and the guards refused the fourth kernel a
 * gap beside a batch (H200, session 42). Caller holds st->mu. */
int xqc_smp_take(xstream *st, uint64_t known)
{
    if (!xqc_timed || st->smp_off) return -1;
    uint64_t first, credit;
    if (st->smp_n == SMP ||
        (known && known < SAMPLE_LONG_NS && (st->in_flight <= 1 || xqc_work_left(st, now_ns(), &first, &credit) < SMP_LEAD_NS)))
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
int xqc_smp_record(xstream *st, int i, int end)
{
    CUevent *ev = end ? &st->smp[i].b : &st->smp[i].a;
    CUstream rec = st->kind == K_EXPLICIT ? st->h : st->kind == K_PTDS ? CU_STREAM_PER_THREAD : NULL;
    CUresult r = CUDA_SUCCESS;
    uint64_t p0 = XQ_HT_ON ? now_ns() : 0;
    if (!*ev) {
        CUcontext cur = NULL, tmp;
        xqc_cu.CtxGetCurrent(&cur);
        int pushed = cur != st->ctx && xqc_cu.CtxPush(st->ctx) == CUDA_SUCCESS;
        r = xqc_cu.EventCreate(ev, 0); /* timing on */
        if (r != CUDA_SUCCESS) *ev = NULL;
        if (pushed) xqc_cu.CtxPop(&tmp);
    }
    if (r == CUDA_SUCCESS) r = xqc_cu.EventRecord(*ev, rec);
    if (p0) xqc_ht_part(HP_SMP, now_ns() - p0);
    if (r != CUDA_SUCCESS) {
        mu_lock(&st->mu);
        smp_failed(st, end ? "cuEventRecord (timed sample)" : "cuEventCreate/Record (timed sample)", r);
        mu_unlock(&st->mu);
        return 1;
    }
    return 0;
}

/* Reads the samples st completed, oldest first: each one's elapsed time teaches its kind. Tracker
 * only (xqc_query_mu held); c: st's context. */
void xqc_smp_read(xstream *st, CUcontext c, CUcontext *cur)
{
    while (LD(&st->smp_n)) {
        mu_lock(&st->mu);
        uint32_t i = st->smp_head;
        uint64_t ord = st->smp[i].ord, key = st->smp[i].key;
        CUevent a = st->smp[i].a, b = st->smp[i].b;
        int ready = st->smp_n && ord && (ord == SMP_DEAD || ord <= st->completed);
        mu_unlock(&st->mu);
        if (!ready) return;
        float ms = 0;
        CUresult r = CUDA_SUCCESS;
        if (ord != SMP_DEAD) {
            if (c != *cur && xqc_cu.CtxSetCurrent(c) == CUDA_SUCCESS) *cur = c;
            r = xqc_cu.EventElapsed(&ms, a, b);
            if (r == CUDA_ERROR_NOT_READY) return; /* counted done without being seen done (no mark could be made) */
        }
        mu_lock(&st->mu);
        st->smp_head = (st->smp_head + 1) % SMP, st->smp_n--;
        if (ord != SMP_DEAD && r == CUDA_SUCCESS) st->timed++;
        else if (ord != SMP_DEAD) smp_failed(st, "cuEventElapsedTime", r);
        mu_unlock(&st->mu);
        if (ord != SMP_DEAD && r == CUDA_SUCCESS && ms > 0) xqc_cost_put(key, (uint64_t)((double)ms * 1e6), 1);
    }
}
