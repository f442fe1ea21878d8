/*
 * cuda_gate.c: the launch gate (docs/processes.md "The launch gate"): before a launch, whether its
 * stream may launch now (the node's gate, threshold, window, arrival guard), holding the thread or
 * asking it to defer; after it, the counts and the marks that let the tracker see it end.
 */
#include "cuda_int.h"

uint32_t xqc_limit_waiters;
struct tcache {
    uint32_t tabgen;
    int kind;
    CUstream h;
    CUcontext ctx;
    xstream *st;
};
static __thread unsigned t_cache_next;
static __thread struct tcache t_cache[4];

/* stream_get's miss: the table, under its lock (a stream not seen yet is made). */
static XQ_COLD xstream *stream_get_slow(int kind, CUstream h, CUcontext ctx, uint32_t tg)
{
    pid_t tid = kind == K_PTDS ? my_tid() : 0;
    pthread_mutex_lock(&xqc_tab_mu);
    xstream *st = xqc_stream_find_locked(kind, h, ctx, tid);
    pthread_mutex_unlock(&xqc_tab_mu);
    if (!st && kind == K_EXPLICIT && xqc_cu.StreamGetCtx(h, &ctx) != CUDA_SUCCESS)
        return NULL; /* not a valid stream: the launch will say so itself */
    if (!st) st = xqc_stream_new(kind, h, ctx, tid);
    if (st) t_cache[t_cache_next++ % 4] = (struct tcache){tg, kind, h, kind == K_EXPLICIT ? NULL : ctx, st};
    return st;
}

/* The thread's current context, as kept (cuda_int.h: xqc_ctx_changed); asked of the driver when
 * none is kept, after a wrapped call changed it, at every 64th look, and when check (XQ_LOG=2:
 * every gated call, where xqc_ctx_missed counts a kept one found stale). */
static __thread struct {
    CUcontext ctx;
    uint32_t epoch, n;
} t_cx;
uint64_t xqc_ctx_missed;

void xqc_ctx_changed(int all)
{
    t_cx.ctx = NULL;
    if (all) ADD(&xqc_hot.ctx_epoch, 1);
}

static XQ_COLD CUcontext ctx_ask(uint32_t e)
{
    CUcontext c = NULL;
    if (xqc_cu.CtxGetCurrent(&c) != CUDA_SUCCESS) c = NULL;
    if (t_cx.ctx && t_cx.epoch == e && c != t_cx.ctx) ADD(&xqc_ctx_missed, 1);
    t_cx.ctx = c, t_cx.epoch = e;
    return c;
}

static inline CUcontext ctx_current(int check)
{
    uint32_t e = LD(&xqc_hot.ctx_epoch);
    if (XQ_LIKELY(t_cx.ctx != NULL && t_cx.epoch == e && !check && (++t_cx.n & 63))) return t_cx.ctx;
    return ctx_ask(e);
}

/* Stream key: explicit streams by handle; the legacy default stream per context; the
 * per-thread default stream per context and thread. A small per-thread cache keeps the
 * common case free of locks. */
static inline xstream *stream_get(CUstream h, int ptsz, int check)
{
    int kind = h == NULL ? (ptsz ? K_PTDS : K_LEGACY)
               : h == CU_STREAM_LEGACY ? K_LEGACY
               : h == CU_STREAM_PER_THREAD ? K_PTDS
                                           : K_EXPLICIT;
    CUcontext ctx = NULL;
    if (kind != K_EXPLICIT) {
        if (XQ_UNLIKELY(!(ctx = ctx_current(check)))) return NULL;
        h = NULL;
    }
    uint32_t tg = LD(&xqc_tabgen);
    struct tcache *c = t_cache;
    for (int i = 0; i < 4; i++)
        if (c[i].st && c[i].tabgen == tg && c[i].kind == kind && c[i].h == h &&
            (kind == K_EXPLICIT || c[i].ctx == ctx))
            return c[i].st;
    return stream_get_slow(kind, h, ctx, tg);
}

/* ------------------------------------------------------------------ the launch gate */

/* docs/processes.md "The launch gate": 0 = launch, 1 = held, 2 = wait on the limits. */
/* The estimated work of st still to run at now: the estimates in flight less what the oldest
 * unfinished command (or marked run of commands; first: its estimate) has run since the later of
 * its launch and the last end seen, up to its estimate (credit). Caller holds st->mu. */
XQ_HOT uint64_t xqc_work_left(const xstream *st, uint64_t now, uint64_t *first, uint64_t *credit)
{
    uint64_t start;
    if (st->n) start = st->ring[st->head].t_launch, *first = st->ring[st->head].est;
    else start = st->tail_t, *first = st->tail_n ? st->tail_est : 0;
    if (st->last_done > start) start = st->last_done;
    uint64_t ran = now > start ? now - start : 0;
    *credit = ran < *first ? ran : *first;
    return st->fl_est > *credit ? st->fl_est - *credit : 0;
}

/* What was in flight when the gate closed has all ended (seen now): the guard's pad rises to how
 * far past its horizon that was, where the close was past the horizon of the guard it went under
 * (always); with XQ_LOG=2, how long it took against the work estimated left at the close. Caller
 * holds st->mu. */
XQ_COLD void xqc_note_drained(xstream *st)
{
    uint64_t now = now_ns();
    if (st->pad_hz) {
        /* the work the guard admitted to end by its horizon ended this far past it, as seen here
         * (the node's reaction and the drain: 1-2 ms at times on the H200 host; PAD_MAX_NS at
         * most is learnt). Seen more than PAD_STALE_NS past it: not the work's overrun but the
         * process's own stop (SIGSTOP, a job scheduler's suspend, the mix's paired reading; or
         * its tracker not run), which would set the pad to its most for its next few dozen
         * closes: not learnt from, counted */
        uint64_t over = now > st->pad_hz ? now - st->pad_hz : 0;
        if (over > PAD_STALE_NS)
            st->pads_late++;
        else {
            if (over > PAD_MAX_NS) over = PAD_MAX_NS;
            if (over > st->pad_ns) st->pad_ns = over;
            st->pads_up++;
        }
        st->pad_hz = 0;
    }
    if (!st->drain_from) return;
    uint64_t took = now - st->drain_from;
    if (st->ndrain < sizeof st->drain_us / sizeof st->drain_us[0]) {
        st->drain_us[st->ndrain] = (uint32_t)(took / 1000);
        st->over_us[st->ndrain++] = (int32_t)(((int64_t)took - (int64_t)st->drain_est) / 1000);
    }
    st->drain_from = 0;
}

int xqc_pad_on = 1;

/* XQ_LOG=2: a launch is made with left ns of estimated work still to run before it (0: none,
 * under 10 us, 50 us, 100 us, 200 us, more): launches made with little left are where the device
 * may have run dry between commands without the tracker seeing it. Caller holds st->mu. */
XQ_COLD void xqc_note_launch(xstream *st, uint64_t est)
{
    if (!xqc_hot.diag) return;
    st->est_sum += est;
    uint64_t first, credit, left = st->in_flight > 1 ? xqc_work_left(st, now_ns(), &first, &credit) : 0;
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
static XQ_COLD int guarded(xstream *st, const xq_slot *s, uint64_t est, uint64_t win_ns, uint64_t *retry)
{
    uint64_t until = LD(&s->guard_until_ns), hz = LD(&s->horizon_ns), now = now_ns();
    if (!hz || now >= until) return st->g_hz = 0, 0;
    st->guard_seen++;
    uint64_t first, credit, left = st->in_flight ? xqc_work_left(st, now, &first, &credit) : 0;
    uint64_t e = est ? est : win_ns ? win_ns : st->estimate_ns;
    /* the pad: what the stream's work ran past a horizon lately, beyond its estimates */
    if (now + left + e + st->pad_ns <= hz) {
        st->g_hz = hz, st->g_until = until;
        return 0;
    }
    st->why_guard++;
    if (retry) *retry = until - now;
    xlog(4, "xq: %s: guarded: %.1f us left, this one %.1f us, due in %.1f us", st->label, left / 1e3, e / 1e3,
         hz > now ? (hz - now) / 1e3 : 0.0);
    return 1;
}

XQ_HOT int xqc_may_launch(xstream *st, const xq_slot *s, uint64_t est, uint64_t *retry)
{
    if (retry) *retry = 0;
    if (LD(&s->gate)) return st->why_held++, 1;
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
    uint64_t win = LD(&s->window_us), hz = LD(&s->horizon_ns);
    /* (a launch with no horizon leaves g_hz as it was: the launch path touches none of the pad's
     * lines, and a close counts for the pad only within its guard's until and PAD_GRACE_NS) */
    if (XQ_UNLIKELY(hz) && guarded(st, s, est, win * 1000, retry)) return 4;
    /* XQ_LOG=2: the guard a launch goes under (one the window refuses comes back and sets it again) */
    if (XQ_UNLIKELY(xqc_hot.diag)) {
        /* hz and until are read apart: a guard lifted in between reads as until 0 (no guard) */
        uint64_t until = LD(&s->guard_until_ns);
        st->adm_hz = until ? hz : 0, st->adm_until = until, st->adm_t = now_ns();
        if (st->adm_hz) st->adm_guarded_t = st->adm_t;
    }
    if (!win || !n) return 0;
    uint64_t w = win * 1000, first, credit, rem = xqc_work_left(st, now_ns(), &first, &credit);
    uint64_t e = est ? est : w, room = w > e + w / 4 ? w - e : w / 4;
    if (XQ_LIKELY(rem <= room)) {
        xlog(4, "xq: %s: launch %u in flight, %.1f us of work left, this one %.1f us", st->label, n, rem / 1e3, est / 1e3);
        return 0;
    }
    if (est) st->why_win++;
    else st->why_est++;
    if (retry && rem - room <= first - credit) *retry = rem - room;
    return 2;
}

/* xqc_may_launch where the slot sets no limit, guard or gate (most launches of a preferred
 * queue, and any with the node's defaults): 0 without the call. */
static inline int may_launch(xstream *st, const xq_slot *s, uint64_t est, uint64_t *retry)
{
    uint32_t thr = LD(&s->threshold); /* XQ_THR_NONE or more: none */
    if (XQ_LIKELY(!(LD(&s->gate) | (thr && thr < XQ_THR_NONE) | LD(&s->window_us) | st->throttled | xqc_hot.diag) &&
                  !LD(&s->horizon_ns)))
        return 0;
    return xqc_may_launch(st, s, est, retry);
}

/* What a command of a kind not seen yet is charged while in flight: a whole window (it is
 * measured alone, and until then may be as long as any), the stream's average with none.
 * Caller holds st->mu. */
uint64_t xqc_unknown_charge(const xstream *st)
{
    const xq_slot *s = st->gen == LD(&xqc_state) ? st->shm : NULL;
    uint64_t win = s ? LD(&s->window_us) : 0;
    return win ? win * 1000 : st->estimate_ns;
}

/* How much estimated work st may launch unmarked (0: a mark behind every launch). Events cost
 * the device nothing and a per-thread stream cannot be queried from the tracker: those mark
 * every launch; memop streams a quarter of the window under a window, every launch under a
 * threshold alone, every 2 ms of work with no limits in force. Caller holds st->mu. */
/* FREE_MARK_NS: cuda_int.h */
static inline uint64_t mark_every(const xstream *st)
{
    if (XQ_UNLIKELY(st->cmode <= 0) || st->kind == K_PTDS || xqc_marks_all || !xqc_cu.StreamQuery) return 0;
    const xq_slot *s = st->gen == LD(&xqc_state) ? st->shm : NULL;
    if (!s) return FREE_MARK_NS;
    uint64_t win = LD(&s->window_us);
    uint32_t thr = LD(&s->threshold);
    if (win) return win * 1000 / 4;
    return thr && thr < XQ_THR_NONE ? 0 : FREE_MARK_NS;
}

uint64_t xqc_mark_every(const xstream *st)
{
    return mark_every(st);
}

/* Under a threshold (with a window: without one every launch is marked), how many launches a mark
 * may cover at most (0: no such bound): a stream throttled at the threshold goes on once it is
 * seen at threshold - batch, so the tracker must be able to see a batch end. Short kernels fill
 * a quarter window only by the dozen: unmarked, 16 of them in flight could only be seen done by
 * asking the driver once the stream had been quiet 50 us (on the H100, ResNet-50 training alone
 * under 16 / 8 / 300 us idled in 50-100 us gaps ~60 times a step). Caller holds st->mu. */
static inline uint32_t mark_count(const xstream *st)
{
    const xq_slot *s = st->gen == LD(&xqc_state) ? st->shm : NULL;
    uint32_t thr = s ? LD(&s->threshold) : 0, b = s ? LD(&s->batch) : 0;
    if (!thr || thr >= XQ_THR_NONE) return 0;
    b = b && b < thr ? b : thr / 2;
    return b ? b : 1;
}

/* Accounts commands whose end was seen (or that will never be seen). Caller holds st->mu;
 * returns whether the node must hear (the stream went idle). */
int xqc_account_done(xstream *st, uint32_t count, uint64_t run, uint32_t scale)
{
    st->completed += count;
    st->in_flight -= count;
    st->active -= count;
    if (XQ_UNLIKELY(st->drain_from | st->pad_hz) && !st->in_flight) xqc_note_drained(st);
    st->run_ns += run;
    if (run) { /* 0: not measured (no event could be recorded) */
        int64_t x = (int64_t)(run / count), e = (int64_t)st->estimate_ns;
        e = e ? e + (x - e) / 4 : x;
        st->estimate_ns = e > 0 ? (uint64_t)e : 1;
        /* the node's view: a run on part of the device scaled to the whole (scale: that part, 1/1024).
         * A narrowed run takes longer than its share says where others' work runs beside it, and
         * the node judges by this estimate whether a command fits between another tenant's requests
         * on the whole device: a run there, measured lately, is not raised by narrowed ones (a 21.5 ms
         * GEMM on 64 of an H200's 132 beside a graph and a Triton loop took 44.3-46.5 ms, 21.5-22.6
         * scaled, against the graph's 21.6 ms gap: it was never let run whole to be measured again,
         * and kept narrowed at 0.43 of native sharing, H200, session 46) */
        int narrowed = scale && scale < 1024;
        uint64_t t = now_ns();
        int64_t f = (int64_t)(run / count * (narrowed ? scale : 1024) / 1024), g = (int64_t)st->est_full;
        if (!(narrowed && g && f > g && st->full_at && t - st->full_at < FULL_TRUST_NS)) {
            g = g ? g + (f - g) / 4 : f;
            st->est_full = g > 0 ? (uint64_t)g : 1;
        }
        if (!narrowed) st->full_at = t;
    }
    st->cseq++;
    if (!st->active) {
        st->ready_since = 0;
        return 1;
    }
    return 0;
}

/* Whether a launch on st must wait for other streams' deferred launches to be made: the legacy
 * default stream and the blocking streams order each other (taken as blocking: we do not ask).
 * Caller holds st->mu. */
static int cross_order(const xstream *st)
{
    uint32_t all = LD(&xqc_deferred), legacy = LD(&xqc_legacy_deferred);
    return st->kind == K_LEGACY ? all > st->dq_n : legacy > (st->kind == K_LEGACY ? st->dq_n : 0);
}

/* A call's first gated call of the process: the session and the tracker started. */
static XQ_COLD void enter_first(void)
{
    if (!LD(&xqc_hot.started)) xqc_session_start();
    if (!LD(&xqc_tracker_on) && !__atomic_exchange_n(&xqc_tracker_on, 1, __ATOMIC_SEQ_CST)) xqc_spawn(xqc_tracker_main, "tracker");
}

/* Makes every deferred launch before a call that cannot be deferred (timed for XQ_LOG=2). */
static XQ_COLD void flush_before(gate *g)
{
    uint64_t f0 = XQ_HT_ON ? now_ns() : 0;
    xqc_flush_all();
    if (f0) g->wait_ns += now_ns() - f0, g->wait_by[0] += now_ns() - f0;
}

/* What xqc_gate_enter's wait leaves to the launch. */
struct gwait {
    int waited, wake, why; /* why: what held it first (gate's wait_by) */
    uint64_t t0;           /* when it began to wait (0: it did not) */
    int w, off, need;      /* the width it goes at (xqc_narrow_width) */
};

/* A call that passes through untouched because a capture is open still comes after what the
 * process deferred before it. Once a capture has begun nothing is deferred (capture_pre made what
 * was, and nothing more was while it waited), so this costs a load; a launch deferred in a race
 * with the capture's count is made at once here, whatever the node's decision (the tracker sees
 * no completions while the capture lasts: waiting for the node could wait for good). Before
 * session 90 such a call went straight to the driver, ahead of its stream's deferred launches (a
 * copy read a buffer before an increment launched before it: the random programs of
 * test_fuzz_programs, 3 runs of 481). */
static XQ_COLD void capture_pass_slow(void)
{
    int saved_errno = errno;
    while (LD(&xqc_deferred)) {
        xqc_drain_all(1);
        if (LD(&xqc_deferred)) sched_yield(); /* another thread was making them */
    }
    errno = saved_errno;
}
static inline void capture_pass(void)
{
    if (XQ_UNLIKELY(LD(&xqc_deferred)) && LD(&xqc_captures) && !LD(&xqc_exiting)) capture_pass_slow();
}

/* A thread that waited on its own stream and now waits for other streams' deferred launches is
 * not counted as waiting on its stream meanwhile (pending, active): the node would see that stream
 * ready and, by a priority, hold the very streams it waits for (a stream of a higher stream
 * priority held its process's others for good: the random programs under a test node that holds
 * as a priority policy does, 2 runs of 48). Counted again if it waits on its stream again. Caller
 * holds st->mu; v->wake: the node must hear of it. */
static void wait_uncounted(xstream *st, struct gwait *v)
{
    if (!v->waited) return;
    v->waited = 0;
    st->pending--;
    if (--st->active == 0) st->ready_since = 0, v->wake = 1;
    xqc_mirror(st);
}

/* The rare part of xqc_gate_enter: st may not launch at once (the gate, a limit, the guard,
 * deferred launches ahead, a first call in a session, a capture begun). why0: the slot's answer
 * the caller already has (-1: none), retry0 with it. Called with st->mu held; returns 1 with it
 * still held (launch now), or what xqc_gate_enter returns (0, 2) with it released. */
static XQ_COLD int gate_wait(gate *g, xstream *st, int deferrable, uint64_t ck, uint64_t threads, int saved_errno, int why0,
                             uint64_t retry0, struct gwait *v)
{
    for (;;) {
        int pw = why0;
        why0 = -1; /* an answer is good for the first look only */
        uint32_t gs = LD(&xqc_state);
        if ((gs & 1) && st->gen != gs) { /* first gated call in this session */
            mu_unlock(&st->mu);
            xqc_register_stream(st);
            mu_lock(&st->mu);
            continue;
        }
        if (LD(&xqc_captures)) { /* a capture began while we waited: pass through untouched */
            if (v->waited && (st->pending--, --st->active == 0)) st->ready_since = 0, v->wake = 1;
            xqc_mirror(st);
            mu_unlock(&st->mu);
            if (v->wake) xqc_wake_node(st);
            capture_pass();
            errno = saved_errno;
            return 0;
        }
        uint64_t retry = 0;
        if (v->waited && threads) { /* the node may have narrowed it, or let it have the device, meanwhile */
            int w2 = xqc_narrow_width(st, threads, &v->off, &v->need);
            if (w2 != v->w) {
                mu_unlock(&st->mu);
                g->est = xqc_cost_get_w(ck, v->w = w2, v->need, NULL, &g->wk, &g->scale);
                mu_lock(&st->mu);
                continue;
            }
        }
        int why = pw >= 0 ? (retry = retry0, pw) : (gs & 1) && st->shm ? xqc_may_launch(st, st->shm, g->est, &retry) : 0;
        if (why && LD(&st->unstick)) why = 0; /* the watchdog let it go (cuda_tracker.c) */
        if (st->dq_n) why = 3; /* behind what is deferred on this stream */
        if (!why && !(deferrable ? cross_order(st) : LD(&xqc_deferred) != 0)) return 1;
        if (deferrable && st->dq_n < DQ_MAX) {
            if (cross_order(st)) { /* rare: the legacy stream and another both deferring */
                wait_uncounted(st, v);
                mu_unlock(&st->mu);
                if (v->wake) xqc_wake_node(st), v->wake = 0;
                xqc_flush_all();
                mu_lock(&st->mu);
                continue;
            }
            g->st = st, g->waited = v->waited;
            mu_unlock(&st->mu);
            if (v->wake) xqc_wake_node(st);
            errno = saved_errno;
            return 2;
        }
        if (!why) { /* not deferrable, and other streams still have deferred launches */
            wait_uncounted(st, v);
            mu_unlock(&st->mu);
            if (v->wake) xqc_wake_node(st), v->wake = 0;
            flush_before(g);
            mu_lock(&st->mu);
            continue;
        }
        if (!v->waited) {
            v->waited = 1;
            st->pending++;
            uint64_t t = now_ns();
            v->t0 = t, v->why = deferrable && why && why <= 4 ? 5 : why; /* deferrable but not deferred: the queue is full */
            if (st->active++ == 0) st->ready_since = t, v->wake = 1;
            if (!st->in_flight) xqc_wait_begin(st, t);
            xqc_mirror(st);
        }
        uint32_t seq = st->wseq;
        st->waiters++;
        if (why == 2) ADD(&xqc_limit_waiters, 1);
        mu_unlock(&st->mu);
        if (v->wake) xqc_wake_node(st), v->wake = 0;
        futex_wait(&st->wseq, seq, retry && retry < WAIT_NS ? (long)retry : WAIT_NS);
        xqc_node_look(); /* held by a node that may have stopped */
        mu_lock(&st->mu);
        st->waiters--;
        if (why == 2) ADD(&xqc_limit_waiters, -1);
    }
}

/* XQ_LOG=2: what xqc_gate_enter counts of a launch let go at g->t. Caller holds st->mu. */
static XQ_COLD void enter_diag(gate *g, xstream *st, const struct gwait *v)
{
    if (v->t0) g->wait_ns += g->t - v->t0, g->wait_by[v->why >= 0 && v->why <= 5 ? v->why : 0] += g->t - v->t0;
    xqc_wait_end(st, g->t);
}

/* A launch measured alone as a timed sample (xqc_gate_enter): its slot, or none after all. */
static XQ_COLD void sample_begin(gate *g, xstream *st)
{
    if (xqc_smp_record(st, g->smp - 1, 0)) { /* no sample after all */
        mu_lock(&st->mu);
        smp_launched(st, g->smp - 1, 0, 0);
        mu_unlock(&st->mu);
        g->smp = 0;
    }
}

/* Holds the calling thread while its stream may not launch. Returns 0 for "pass through
 * untracked" (capture, no context, driver helpers missing), 1 for "launch now" (then xqc_gate_exit),
 * and, when the caller can defer (deferrable), 2 for "defer this launch" (then xqc_gate_defer).
 * The common case (a stream known to this thread, registered, nothing deferred, a slot that lets
 * it go at once) runs here alone; the rest is in gate_wait. */
XQ_HOT int xqc_gate_enter(gate *g, CUstream h, int ptsz, void *hint, int deferrable, uint64_t ck, uint64_t threads)
{
    int cs = LD(&xqc_cu_state);
    if (XQ_UNLIKELY(LD(&xqc_captures) || LD(&xqc_exiting) || xqc_hot.bypass) || XQ_UNLIKELY(cs <= 0 && (cs < 0 || !xqc_cu_resolve(hint)))) {
        capture_pass();
        return 0;
    }
    int due;
    int saved_errno = errno; /* the application sees the driver's errno, not ours */
    xstream *st = stream_get(h, ptsz, xqc_hot.diag); /* XQ_LOG=2: the kept context checked at every call */
    if (XQ_UNLIKELY(!st)) {
        errno = saved_errno;
        return 0;
    }
    /* the estimate of its kind at the width it would be launched at now (narrowed or not) */
    struct gwait v = {0};
    v.w = XQ_UNLIKELY(xqc_narrow) ? xqc_narrow_width(st, threads, &v.off, &v.need) : 0;
    g->ck = ck, g->threads = threads, g->est = xqc_cost_get_w(ck, v.w, v.need, &due, &g->wk, &g->scale);
    g->isolate = due, g->smp = 0;
    if (XQ_UNLIKELY(!LD(&xqc_hot.started) || !LD(&xqc_tracker_on))) enter_first();
    if (XQ_UNLIKELY(XQ_HT_ON) && !g->nd && g->id >= 0 && xqc_entry_deferrable(g->id))
        g->nd = !deferrable ? ND_WHY_ENTRY : !xqc_defer ? ND_WHY_OFF : st->kind == K_PTDS ? ND_WHY_PTDS : ND_WHY_NONE;
    /* a per-thread stream is the caller's own; a capture about to begin waits for what was deferred */
    deferrable = deferrable && xqc_defer && st->kind != K_PTDS && !LD(&xqc_capture_wait);
    if (XQ_UNLIKELY(!deferrable && LD(&xqc_deferred))) flush_before(g); /* made after everything deferred before it */
    mu_lock(&st->mu);
    uint32_t gs = LD(&xqc_state);
    int why = -1;
    uint64_t retry = 0;
    /* with nothing deferred, cross_order says 0 too */
    if (XQ_LIKELY(gs & 1)) { /* under a node (the common case laid out first) */
        if (XQ_LIKELY(st->gen == gs && !(LD(&xqc_captures) | st->dq_n | LD(&xqc_deferred))))
            why = XQ_LIKELY(st->shm != NULL) ? may_launch(st, st->shm, g->est, &retry) : 0;
    } else if (!(LD(&xqc_captures) | st->dq_n | LD(&xqc_deferred)))
        why = 0;
    if (XQ_UNLIKELY(why != 0)) {
        int k = gate_wait(g, st, deferrable, ck, threads, saved_errno, why, retry, &v);
        if (k != 1) return k;
    }
    if (XQ_UNLIKELY(v.waited)) st->pending--; /* still active: counted when it began to wait */
    st->in_flight++;
    if (XQ_UNLIKELY(g->isolate) && xqc_timed && !st->smp_off) g->smp = xqc_smp_take(st, g->est) + 1, g->isolate = 0;
    if (XQ_UNLIKELY(!g->est)) g->est = xqc_unknown_charge(st);
    if (XQ_UNLIKELY(xqc_hot.diag)) xqc_note_launch(st, g->est);
    st->fl_est += g->est;
    g->t = now_ns();
    if (XQ_UNLIKELY(xqc_hot.diag)) enter_diag(g, st, &v);
    /* ready since the first launch after idle: a thread that waited kept the stream ready (its
     * arrival is when it began to wait, not when it was let go) */
    int wake = v.wake, arrived = 0;
    if (!v.waited && st->active++ == 0) st->ready_since = g->t, wake = 1, arrived = 1;
    int kick = XQ_UNLIKELY(g->isolate) && st->tail_n ? xqc_close_tail(st, &wake) : 0; /* what came before is measured apart */
    /* a call let go after a wait shows the node at once that it no longer waits, and an arrival
     * (the stream was idle) its stamp: the node's arrival watch reads the slot, and a request's
     * first driver call can take milliseconds (a copy from pageable memory: the arrival lines
     * went 2.1-2.6 ms after the arrival at P99 on the H200). Any other launch is shown by
     * xqc_gate_exit, a driver call later, before the WAKE that tells of it (the slot is on cache
     * lines the node reads: a store to them costs a launch a miss; an arrival's, one a request) */
    if (XQ_UNLIKELY(v.waited | arrived)) xqc_mirror(st);
    mu_unlock(&st->mu);
    if (XQ_UNLIKELY(g->smp)) sample_begin(g, st);
    /* The node hears of the arrival, and the tracker of the mark, in xqc_gate_exit, once the launch
     * is made: the WAKE line is a socket write, and made here it delayed the work itself (a
     * tenant alone: ~20 us per request on the H100). The arrival's time is in the slot already. */
    g->wake = wake, g->kick = kick;
    g->st = st, g->nw = v.w, g->noff = v.off;
    if (XQ_UNLIKELY(xqc_stall)) xqc_stall_guard(st, h, ptsz);
    errno = saved_errno;
    return 1;
}

/* Queues op (after xqc_gate_enter said 2) and returns 1; 0 when it may not after all (a capture
 * began or is about to: the launch must be captured now, or made after what was deferred), then
 * op is freed and the caller enters again. */
int xqc_gate_defer(gate *g, dop *op)
{
    xstream *st = g->st;
    int wake = 0, saved_errno = errno;
    mu_lock(&st->mu);
    if (LD(&xqc_captures) || LD(&xqc_exiting) || LD(&xqc_capture_wait)) {
        if (g->waited && (st->pending--, --st->active == 0)) st->ready_since = 0, wake = 1;
        xqc_mirror(st);
        mu_unlock(&st->mu);
        if (wake) xqc_wake_node(st);
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
    ADD(&xqc_deferred, 1);
    ADD(&xqc_deferred_total, 1);
    if (st->kind == K_LEGACY) ADD(&xqc_legacy_deferred, 1);
    if (!g->waited) {
        st->pending++;
        uint64_t t = now_ns();
        if (st->active++ == 0) st->ready_since = t, wake = 1;
        if (!st->in_flight) xqc_wait_begin(st, t);
    }
    xqc_mirror(st);
    mu_unlock(&st->mu);
    if (wake) xqc_wake_node(st);
    uint64_t d0 = XQ_HT_ON ? now_ns() : 0;
    xqc_drain(st, 0); /* when the stream may launch after all, this thread makes it */
    if (d0) g->drain_ns = now_ns() - d0;
    xqc_tracker_kick();
    errno = saved_errno;
    return 1;
}

/* xqc_gate_enter said 2 but the launch cannot be deferred: forget that it was counted as held. */
void xqc_gate_undefer(gate *g)
{
    if (!g->waited) return;
    xstream *st = g->st;
    int wake = 0;
    mu_lock(&st->mu);
    st->pending--;
    if (--st->active == 0) st->ready_since = 0, wake = 1;
    xqc_mirror(st);
    mu_unlock(&st->mu);
    if (wake) xqc_wake_node(st);
}

/* Marks on the stream the end of what was launched so far, as entry e: the next sequence number
 * written to the stream's word (memop), else an event. Caller holds st->mu; 0: neither worked. */
static int mark_made(xstream *st, ring_entry *e, CUstream rec);
static int mark(xstream *st, ring_entry *e, CUstream rec)
{
    uint64_t p0 = XQ_HT_ON ? now_ns() : 0;
    int ok = mark_made(st, e, rec);
    if (p0) xqc_ht_part(HP_MARK, now_ns() - p0);
    return ok;
}

static int mark_made(xstream *st, ring_entry *e, CUstream rec)
{
    if (st->cmode > 0) {
        if (xqc_cu.WriteValue64(rec, st->word->dev, st->mseq + 1, 0) == CUDA_SUCCESS) {
            e->seq = ++st->mseq;
            return 1;
        }
        ST(&st->cmode, -1); /* entries already written stay valid: the word stays until the close */
        xqc_memop_unavailable(st, "cuStreamWriteValue64_v2 failed");
    }
    if (!e->ev) { /* events belong to the stream's context */
        CUcontext cur = NULL, tmp;
        xqc_cu.CtxGetCurrent(&cur);
        int pushed = cur != st->ctx && xqc_cu.CtxPush(st->ctx) == CUDA_SUCCESS;
        if (xqc_cu.EventCreate(&e->ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) e->ev = NULL;
        if (pushed) xqc_cu.CtxPop(&tmp);
    }
    if (!e->ev || xqc_cu.EventRecord(e->ev, rec) != CUDA_SUCCESS) return 0;
    e->seq = 0;
    return 1;
}

/* Keeps xqc_busy (streams the tracker must watch) true to st. Caller holds st->mu; returns whether
 * st just became watched (then the tracker must be kicked). */
static inline int busy_update(xstream *st)
{
    int t = st->n || st->tail_n;
    if (XQ_LIKELY(t == st->tracked)) return 0;
    st->tracked = t;
    ADD(&xqc_busy, t ? 1 : -1);
    return t;
}

int xqc_busy_update(xstream *st)
{
    return busy_update(st);
}

/* Covers st's unmarked launches with one mark: a new ring entry, or the newest one marked again
 * when the ring is full. Caller holds st->mu and runs in st's context (a default stream's mark
 * goes to the current context's). Returns whether the tracker must be kicked; *idle: the stream
 * went idle (no mark could be made: the launches are taken as done). */
int xqc_close_tail(xstream *st, int *idle)
{
    uint32_t c = st->tail_n;
    if (!c) return 0;
    uint64_t est = st->tail_est;
    CUstream rec = st->kind == K_EXPLICIT ? st->h : st->kind == K_PTDS ? CU_STREAM_PER_THREAD : NULL;
    st->tail_n = 0, st->tail_est = 0;
    ST(&st->tail_gen, st->tail_gen + 1); /* after the reset: the tracker reads tail_gen, then tail_n */
    ring_entry *e = &st->ring[(st->head + st->n - (st->n == RING)) % RING];
    if (mark(st, e, rec)) {
        st->marks++;
        xlog(5, "xq: %s: mark covers %u launches, %.1f us of work", st->label, c, est / 1e3);
        if (st->n == RING) /* full: the newest mark covers these too */
            e->count += c, e->key = 0, e->est += est, e->t_end = st->last_launch;
        else
            e->t_launch = st->tail_t, e->count = c, e->key = c == 1 ? st->tail_key : 0, e->est = est, e->scale = st->tail_scale,
            e->t_end = st->last_launch, /* the lag (cuda_tracker.c): from the last command's launch */
            e->hz = st->adm_hz, /* the last admission: this tail's last command's */
            ST(&st->n, st->n + 1); /* after the entry: the tracker reads n without the lock */
    } else {
        st->fl_est -= est <= st->fl_est ? est : st->fl_est;
        *idle |= xqc_account_done(st, c, 0, 1024); /* cannot watch them: take them as done */
    }
    return xqc_busy_update(st);
}

/* After a successful launch: it joins the unmarked tail, which a mark covers once it holds
 * xqc_mark_every(st) of estimated work, or at once for a command measured alone (isolate; the
 * caller marked what came before it). Caller holds st->mu; returns whether the tracker must be
 * kicked. */
static inline int after_launch(xstream *st, uint64_t t, uint64_t ck, uint64_t est, uint32_t scale, int isolate, int *idle)
{
    if (!st->tail_n) st->tail_t = t, st->tail_key = ck, st->tail_scale = scale;
    st->tail_n++, st->tail_est += est, st->last_launch = t;
    if (XQ_UNLIKELY(xqc_hot.diag)) st->by_est[est < 100000 ? 0 : est < 300000 ? 1 : est < 1000000 ? 2 : 3]++;
    int kick = busy_update(st);
    uint32_t mc = mark_count(st);
    if (XQ_UNLIKELY(isolate || st->tail_est >= mark_every(st) || (mc && st->tail_n >= mc))) kick |= xqc_close_tail(st, idle);
    return kick;
}

int xqc_after_launch(xstream *st, uint64_t t, uint64_t ck, uint64_t est, uint32_t scale, int isolate, int *idle)
{
    return after_launch(st, t, ck, est, scale, isolate, idle);
}

static __thread void *t_last_ok; /* the kernel or graph this thread last launched and told xqc_known_ok of */
static __thread uint64_t t_lean;  /* this thread's lean launches (xq_bench_counts) */

/* xqc_gate_exit for a launch that failed or was a timed sample. */
static XQ_COLD void gate_exit_rare(gate *g, CUresult r)
{
    xstream *st = g->st;
    int idle = 0, kick = 0, saved_errno = errno;
    int timed = g->smp && r == CUDA_SUCCESS && !xqc_smp_record(st, g->smp - 1, 1);
    mu_lock(&st->mu);
    if (r != CUDA_SUCCESS) { /* nothing was launched */
        st->in_flight--, st->failed++;
        st->fl_est -= g->est <= st->fl_est ? g->est : st->fl_est;
        if (--st->active == 0) st->ready_since = 0, idle = 1;
    } else {
        st->launched++;
        xqc_width_note(st, g->threads, g->t);
        kick = xqc_after_launch(st, g->t, g->wk, g->est, g->scale, g->isolate || timed, &idle); /* a sample is read once marked */
    }
    smp_launched(st, g->smp - 1, g->wk, timed);
    xqc_mirror(st);
    int waiters = st->waiters;
    if (r == CUDA_SUCCESS && g->key && g->key != t_last_ok) xqc_known_ok(t_last_ok = g->key);
    mu_unlock(&st->mu);
    if (r != CUDA_SUCCESS && waiters)
        xqc_wake_held(st); /* the limits may allow one more now */
    if (idle || g->wake) xqc_wake_node(st); /* one line tells the node whichever it is now */
    if (kick || g->kick) xqc_tracker_kick();
    errno = saved_errno;
}

XQ_HOT void xqc_gate_exit(gate *g, CUresult r)
{
    if (XQ_UNLIKELY(r != CUDA_SUCCESS || g->smp)) {
        gate_exit_rare(g, r);
        return;
    }
    xstream *st = g->st;
    int idle = 0, saved_errno = errno;
    mu_lock(&st->mu);
    st->launched++;
    xqc_width_note(st, g->threads, g->t);
    int kick = after_launch(st, g->t, g->wk, g->est, g->scale, g->isolate, &idle);
    xqc_mirror(st);
    if (g->key && g->key != t_last_ok) xqc_known_ok(t_last_ok = g->key);
    mu_unlock(&st->mu);
    if (XQ_UNLIKELY(idle || g->wake)) xqc_wake_node(st); /* one line tells the node whichever it is now */
    if (XQ_UNLIKELY(kick || g->kick)) xqc_tracker_kick();
    errno = saved_errno;
}

/* ------------------------------------------------------------------ the lean launch */

/* Whether a launch on h may take the lean path (cuda_int.h: lean); then *l says what xqc_lean_exit
 * counts, and nothing was changed but the kind's sampling count. Everything read here is read
 * again by the full path under the stream's lock: a gate closed, a limit or guard set between this
 * look and the launch is as one set a moment after it (the node's writes to the slot are never
 * under the stream's lock: the full path has the same instant). A launch on a stream another
 * thread is deferring to is not lean (dq_n); one racing that thread's first deferral goes either
 * way, as two launches of two threads at once may. */
XQ_HOT int xqc_lean_enter(lean *l, CUstream h, int ptsz, uint64_t ck)
{
    if (XQ_UNLIKELY((LD(&xqc_captures) | LD(&xqc_exiting) | LD(&xqc_deferred)) || xqc_cu_state <= 0 || !LD(&xqc_hot.started) ||
                    !LD(&xqc_tracker_on) || ((xqc_hot.diag & !xqc_hot.lean_diag) | xqc_hot.bypass | xqc_hot.stall)))
        return 0;
    int saved_errno = errno;
    xstream *st = stream_get(h, ptsz, 0);
    errno = saved_errno;
    uint32_t gs = LD(&xqc_state);
    if (XQ_UNLIKELY(!st || LD(&st->dq_n))) return 0;
    const xq_slot *s = st->shm;
    if (XQ_LIKELY(gs & 1)) { /* under a node: as the full path's quick answer (may_launch) */
        if (XQ_UNLIKELY(st->gen != gs || LD(&st->throttled))) return 0;
    } else
        s = NULL; /* no node: nothing holds a launch */
    if (XQ_LIKELY(s != NULL)) {
        uint32_t thr = LD(&s->threshold); /* XQ_THR_NONE or more: none (the node's "no limit") */
        if (XQ_UNLIKELY(LD(&s->gate) | LD(&s->window_us) | (thr && thr < XQ_THR_NONE)) || XQ_UNLIKELY(LD(&s->horizon_ns))) return 0;
        if (XQ_UNLIKELY(xqc_narrow)) { /* as xqc_narrow_width's first answer: the whole device */
            uint32_t part = LD(&s->part);
            if (LD(&s->reserve_sms) || (part >> 31) || (part & 0xffff) > 1) return 0;
        }
    }
    uint64_t est = xqc_cost_lean(ck);
    if (XQ_UNLIKELY(!est)) return 0;
    l->st = st, l->ck = ck, l->est = est, l->t = now_ns();
    return 1;
}

/* A lean launch was made (r: the driver's answer): what xqc_gate_enter and xqc_gate_exit count of a
 * launch let go at once, in one turn of the lock. */
XQ_HOT void xqc_lean_exit(const lean *l, CUresult r, void *key, uint64_t threads)
{
    xstream *st = l->st;
    int idle = 0, wake = 0, kick = 0, saved_errno = errno;
    mu_lock(&st->mu);
    if (XQ_LIKELY(r == CUDA_SUCCESS)) {
        uint64_t t = l->t;
        st->in_flight++, st->fl_est += l->est;
        if (st->active++ == 0) st->ready_since = t, wake = 1;
        st->launched++;
        xqc_width_note(st, threads, t);
        /* after_launch with no limit in force: the tail marked every FREE_MARK_NS of work */
        if (!st->tail_n) st->tail_t = t, st->tail_key = l->ck, st->tail_scale = 1024;
        st->tail_n++, st->tail_est += l->est, st->last_launch = t;
        kick = busy_update(st);
        if (XQ_UNLIKELY(st->tail_est >= mark_every(st))) kick |= xqc_close_tail(st, &idle);
        /* xqc_mirror of what a launch changed (every other writer of the slot's fields mirrors them) */
        xq_slot *s = st->shm;
        if (XQ_LIKELY(s != NULL) && XQ_LIKELY(st->gen == LD(&xqc_state))) {
            __atomic_store_n(&s->in_flight, st->in_flight, __ATOMIC_RELAXED);
            __atomic_store_n(&s->launched, st->launched, __ATOMIC_RELAXED);
            if (XQ_UNLIKELY(wake | idle)) xqc_mirror(st);
            else {
                __atomic_store_n(&s->width, xqc_width_word(st), __ATOMIC_RELAXED);
                __atomic_store_n(&s->completion_seq, st->cseq, __ATOMIC_RELEASE);
            }
        }
        if (key && key != t_last_ok) xqc_known_ok(t_last_ok = key);
        t_lean++;
        if (XQ_UNLIKELY(xqc_hot.diag)) __atomic_fetch_add(&xqc_lean_untimed, 1, __ATOMIC_RELAXED); /* XQ_LOG_LEAN=1 */
    } else {
        st->failed++; /* nothing was launched */
        xqc_mirror(st);
    }
    mu_unlock(&st->mu);
    if (XQ_UNLIKELY(idle || wake)) xqc_wake_node(st); /* one line tells the node whichever it is now */
    if (XQ_UNLIKELY(kick)) xqc_tracker_kick();
    errno = saved_errno;
}

/* XQ_LOG_LEAN=1 with XQ_LOG=2 or more: the launches made by the lean path, which the host-time
 * account (cuda_diag.c) does not time */
uint64_t xqc_lean_untimed;

/* XQ_TIME_LAUNCHES=1 (bench/torch/family/tenant.py reads it around each request): out[0] the time
 * this thread spent inside the driver's launch calls (ns), out[1] how many it made; 0 0 otherwise.
 * A launch that waits in the driver (a full queue, a lock) shows there, apart from the thread's
 * own work between launches. */
__thread uint64_t xqc_t_drv_ns, xqc_t_drv_n;
XQ_EXPORT void xq_bench_launch_time(uint64_t out[2])
{
    out[0] = xqc_t_drv_ns, out[1] = xqc_t_drv_n;
}

/* A measurement (bench/gpu/ab-interposer.sh): out[0] the launches this thread made by the lean path,
 * out[1] the launches made on every stream of the process. */
XQ_EXPORT void xq_bench_counts(uint64_t out[2])
{
    uint64_t all = 0;
    for (xstream *st = LD(&xqc_all); st; st = st->next_all) all += LD(&st->launched);
    out[0] = t_lean, out[1] = all;
}
