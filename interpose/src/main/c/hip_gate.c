/*
 * hip_gate.c: the launch gate: before a launch, whether its stream may launch now (the node's
 * gate, threshold, window, arrival guard), holding the thread until it may; after it, the counts
 * and the event that lets the tracker see it end.
 */
#include "hip_int.h"

static int stream_device(hipStream_t h, int kind)
{
    int d = 0;
    if (kind == K_EXPLICIT && xqh_hip.StreamGetDevice && xqh_hip.StreamGetDevice(h, &d) == hipSuccess) return d;
    return xqh_hip.GetDevice(&d) == hipSuccess && d >= 0 ? d : -1;
}

/* Stream key: explicit streams by handle; the null stream per device; the per-thread default
 * stream per device and thread. ptsz: an _spt entry point (its null stream is per-thread). */
static xstream *stream_get(hipStream_t h, int ptsz)
{
    int kind = h == NULL ? (ptsz ? K_PTDS : K_NULL) : h == hipStreamPerThread ? K_PTDS : K_EXPLICIT;
    if (kind != K_EXPLICIT) h = NULL;
    int dev = kind == K_EXPLICIT ? 0 : stream_device(NULL, kind);
    if (dev < 0) return NULL;
    if (kind == K_PTDS && dev >= 0 && dev < 8 && xqh_t_ptds[dev] && LD(&xqh_t_ptds[dev]->in_use) && !LD(&xqh_t_ptds[dev]->closing))
        return xqh_t_ptds[dev];
    pid_t tid = kind == K_PTDS ? my_tid() : 0;
    pthread_mutex_lock(&xqh_tab_mu);
    xstream *st = xqh_find_locked(kind, h, dev, tid);
    pthread_mutex_unlock(&xqh_tab_mu);
    if (!st) {
        int d = kind == K_EXPLICIT ? stream_device(h, kind) : dev;
        if (d < 0) return NULL;
        st = xqh_stream_new(kind, h, kind == K_EXPLICIT ? 0 : d, d, tid);
    }
    if (st && kind == K_PTDS && dev >= 0 && dev < 8) xqh_t_ptds[dev] = st;
    return st;
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

/* docs/processes.md "The launch gate", with the stream's average for the command's kind as its
 * estimate: 0 launch, 1 held, 2 limits, 4 guarded (the arrival guard, with the stream's pad).
 * Caller holds st->mu. */
static int may_launch(xstream *st, const xq_slot *s, int kind, uint64_t *retry)
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
    uint64_t e = st->k_est[kind] ? st->k_est[kind] : win;
    uint64_t hz = LD(&s->horizon_ns), until = LD(&s->guard_until_ns);
    if (hz && now < until) {
        /* the pad: what the stream's work ran past a horizon lately, beyond its estimates */
        if (now + (n ? work_left(st, now) : 0) + e + st->pad_ns > hz) return *retry = until - now, 4;
        st->g_hz = hz, st->g_until = until;
    } else if (hz)
        st->g_hz = 0; /* lapsed: a close after it is not this guard's */
    if (!win || !n) return 0;
    uint64_t room = win > e + win / 4 ? win - e : win / 4;
    return work_left(st, now) <= room ? 0 : 2;
}



/* Holds the calling thread while its stream may not launch. 0: pass through untracked
 * (capture, exit, no runtime helpers, no such stream), 1: launch now, then xqh_gate_exit. */
int xqh_gate_enter(gate *g, hipStream_t h, int ptsz, int kind)
{
    g->kind = kind = kind == HK_COPY ? HK_COPY : HK_KERNEL;
    if (LD(&xqh_captures) || LD(&xqh_exiting) || !xqh_hip_resolve()) return 0;
    int saved_errno = errno;
    xstream *st = stream_get(h, ptsz);
    if (!st) return errno = saved_errno, 0;
    if (!LD(&xqh_session.started)) xqh_session_start();
    if (!LD(&xqh_tracker_on) && !__atomic_exchange_n(&xqh_tracker_on, 1, __ATOMIC_SEQ_CST)) xqh_spawn(xqh_tracker_main);
    int waited = 0, wake = 0;
    pthread_mutex_lock(&st->mu);
    for (;;) {
        uint32_t gs = LD(&xqh_state);
        if ((gs & 1) && st->gen != gs) {
            pthread_mutex_unlock(&st->mu);
            xqh_register_stream(st);
            pthread_mutex_lock(&st->mu);
            continue;
        }
        if (LD(&xqh_captures)) { /* a capture began while we waited: pass through untouched */
            if (waited && (st->pending--, --st->active == 0)) st->ready_since = 0, wake = 1;
            xqh_mirror(st);
            pthread_mutex_unlock(&st->mu);
            if (wake) xqh_wake_node(st);
            return errno = saved_errno, 0;
        }
        uint64_t retry = 0;
        int why = (gs & 1) && st->shm && !LD(&st->unstick) ? may_launch(st, st->shm, kind, &retry) : 0;
        if (!why) break;
        if (!waited) {
            waited = 1;
            st->pending++;
            if (st->active++ == 0) st->ready_since = now_ns(), wake = 1;
            xqh_mirror(st);
        }
        uint32_t seq = st->wseq;
        st->waiters++;
        if (why == 2) ADD(&xqh_limit_waiters, 1);
        pthread_mutex_unlock(&st->mu);
        if (wake) xqh_wake_node(st), wake = 0;
        futex_wait(&st->wseq, seq, retry && retry < (uint64_t)WAIT_NS ? (long)retry : WAIT_NS);
        xqh_node_look(); /* held by a node that may have stopped */
        pthread_mutex_lock(&st->mu);
        st->waiters--;
        if (why == 2) ADD(&xqh_limit_waiters, -1);
    }
    if (waited) st->pending--;
    st->in_flight++;
    g->est = st->k_est[kind];
    /* before the first measured end of its kind, a command counts a whole window (as may_launch
     * takes it, and the CUDA interposer a kind not measured yet): counted as nothing, a program's
     * first hundreds of launches all went in at once past any window */
    if (!g->est && st->shm && st->gen == LD(&xqh_state)) g->est = (uint64_t)LD(&st->shm->window_us) * 1000;
    st->fl_est += g->est;
    g->t = now_ns();
    if (!waited && st->active++ == 0) st->ready_since = g->t, wake = 1;
    xqh_mirror(st);
    pthread_mutex_unlock(&st->mu);
    g->st = st, g->wake = wake;
    errno = saved_errno;
    return 1;
}


/* After the real call: a mark (event) behind a launch that was made; the counts either way. */
void xqh_gate_exit(gate *g, hipError_t r)
{
    xstream *st = g->st;
    int idle = 0, kick = 0, saved_errno = errno;
    if (r == hipSuccess && !LD(&st->kq_tried)) xqh_kfd_map_default(st);
    pthread_mutex_lock(&st->mu);
    if (r != hipSuccess) {
        st->in_flight--, st->failed++;
        st->fl_est -= g->est <= st->fl_est ? g->est : st->fl_est;
        if (--st->active == 0) st->ready_since = 0, idle = 1;
    } else {
        st->launched++;
        hipStream_t rec = st->kind == K_EXPLICIT ? st->h : st->kind == K_PTDS ? hipStreamPerThread : NULL;
        ring_entry *e = &st->ring[(st->head + st->n - (st->n == RING)) % RING];
        int made = (e->ev || xqh_hip.EventCreateWithFlags(&e->ev, hipEventDisableTiming) == hipSuccess) &&
                   xqh_hip.EventRecord(e->ev, rec) == hipSuccess;
        if (made && st->n == RING) e->count++, e->est += g->est, e->mixed |= e->kind != g->kind; /* full: the newest covers this one too */
        else if (made) {
            e->t_launch = g->t, e->count = 1, e->est = g->est, e->kind = (uint8_t)g->kind, e->mixed = 0;
            if (st->n++ == 0) ADD(&xqh_busy, 1);
        }
        kick = made;
        if (!made) { /* cannot watch it: taken as done */
            st->in_flight--, st->completed++, st->cseq++;
            st->fl_est -= g->est <= st->fl_est ? g->est : st->fl_est;
            if (--st->active == 0) st->ready_since = 0, idle = 1;
        }
    }
    xqh_mirror(st);
    int waiters = st->waiters;
    pthread_mutex_unlock(&st->mu);
    if (r != hipSuccess && waiters) xqh_wake_held(st);
    if (idle || g->wake) xqh_wake_node(st);
    if (kick) xqh_tracker_kick();
    errno = saved_errno;
}
