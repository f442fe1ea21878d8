/*
 * hip_tracker.c: the tracker thread: watches each stream's events to count completions, sends
 * WAKE lines the pacing delayed, closes destroyed streams.
 */
#include "hip_int.h"

/* ------------------------------------------------------------------ tracker */

void xqh_tracker_kick(void)
{
    if (LD(&xqh_tracker_parked)) {
        ADD(&xqh_tracker_word, 1);
        futex_wake(&xqh_tracker_word);
    }
}

/* One poller at a time: the tracker, and the exit handler's last look, which runs while the
 * tracker may still be polling the same stream (both took the same done prefix and counted it
 * twice: completed 15 of 12 launched, in_flight wrapped below 0). */
static pthread_mutex_t poll_mu = PTHREAD_MUTEX_INITIALIZER;
static int poll_stream(xstream *st, uint64_t *next);

/* Counts st's finished commands (events end in stream order: the done ones are a prefix);
 * returns whether work is still in flight. */
int xqh_poll_stream(xstream *st, uint64_t *next)
{
    pthread_mutex_lock(&poll_mu);
    int r = poll_stream(st, next);
    pthread_mutex_unlock(&poll_mu);
    return r;
}

/* The tracker's latest absence, as the CUDA interposer's (cuda_tracker.c): back at g_late_woke,
 * over BLIND_NS after it meant to be; g_tick its latest reading of the clock, g_nap the nap it
 * began then. Tracker thread only (g_tracker). */
static uint64_t g_late_meant, g_late_woke, g_tick, g_nap;
static __thread int g_tracker;

static uint64_t tick(void)
{
    uint64_t t = now_ns();
    if (!g_tracker) return t;
    if (g_tick && t > g_tick + g_nap + BLIND_NS) g_late_meant = g_tick + g_nap, g_late_woke = t;
    g_tick = t, g_nap = 0;
    return t;
}

int xqh_pad_on = 1;
int xqh_ahead = 1; /* XQ_TRACK_AHEAD (hip_hooks.c) */
static int g_quick; /* tracker only, each pass: a stream with work was looked at as launchers waiting on a limit want */
static uint64_t g_naps[5], g_nap_late, g_nap_quick; /* XQ_LOG=2, tracker only: its naps by how late they ended; the quick ones */

/* Whether st's oldest mark cannot be done yet (hip_int.h: AHEAD_*): its work's estimate is long
 * and not AHEAD_NUM/AHEAD_DEN of it has passed since it could begin (its launch, or the last end
 * seen, whichever is later). Takes st->mu (the launching threads write the ring under it). */
static int not_yet(xstream *st, uint64_t now)
{
    if (!xqh_ahead) return 0;
    pthread_mutex_lock(&st->mu);
    const ring_entry *e = &st->ring[st->head];
    uint64_t est = st->n ? e->est : 0, from = e->t_launch > st->last_done ? e->t_launch : st->last_done;
    pthread_mutex_unlock(&st->mu);
    return est >= AHEAD_MIN_NS && now < from + est / AHEAD_DEN * AHEAD_NUM;
}

/* What was in flight when the gate closed past a guard's horizon has all ended (seen now): the pad
 * rises to how far past the horizon that was (PAD_MAX_NS at most); seen over PAD_STALE_NS past it,
 * the process's own stop (SIGSTOP, a job scheduler's suspend) and not the work's overrun: counted,
 * not learnt from. Caller holds st->mu. */
static void pad_drained(xstream *st)
{
    uint64_t now = now_ns(), over = now > st->pad_hz ? now - st->pad_hz : 0;
    if (over > PAD_STALE_NS)
        st->pads_late++;
    else {
        if (over > PAD_MAX_NS) over = PAD_MAX_NS;
        if (over > st->pad_ns) st->pad_ns = over;
        st->pads_up++;
    }
    st->pad_hz = 0;
}

/* Each time the tracker sees st's gate close past the horizon of the guard its latest launch went
 * under (within its until and PAD_GRACE_NS): work still in flight ran past it, and the pad learns
 * how far when it ends; none, and the guard (with the pad) kept the stream clear: the pad wears
 * down. Opened again first: nothing to learn. */
static void gate_watch(xstream *st)
{
    xq_slot *s = st->gen == LD(&xqh_state) ? st->shm : NULL;
    int g = s && LD(&s->gate);
    if (g == st->gate_seen) return;
    st->gate_seen = g;
    pthread_mutex_lock(&st->mu);
    if (!g)
        st->pad_hz = 0;
    else {
        uint64_t at = now_ns();
        if (xqh_pad_on && st->g_hz && at > st->g_hz && at <= st->g_until + PAD_GRACE_NS) {
            if (st->in_flight)
                st->pad_hz = st->g_hz;
            else if (st->pad_ns)
                st->pad_ns -= st->pad_ns / PAD_WEAR, st->pads_down++;
            st->g_hz = 0;
        }
    }
    pthread_mutex_unlock(&st->mu);
}

static int poll_stream(xstream *st, uint64_t *next)
{
    uint64_t now = tick();
    /* launchers waiting on a limit: looked at every pass (POLL_LIMIT_NS), unless its oldest mark
     * cannot be done yet (every POLL_NS then, as when none wait) */
    int urgent = LD(&xqh_limit_waiters) > 0 && !not_yet(st, now);
    if (urgent && g_tracker && LD(&st->n)) g_quick = 1; /* one with no work: no end to see */
    if (now < st->poll_at && !urgent) {
        if (st->poll_at < *next) *next = st->poll_at;
        return LD(&st->n) != 0;
    }
    st->poll_at = now + (urgent ? POLL_LIMIT_NS : POLL_NS);
    if (st->poll_at < *next) *next = st->poll_at;
    uint64_t prev = st->polled; /* the last look: what is found done now ended after it */
    st->polled = now;
    pthread_mutex_lock(&st->mu);
    uint32_t n = st->n, head = st->head, m = n == RING ? n - 1 : n; /* a full ring's newest may be re-recorded */
    pthread_mutex_unlock(&st->mu);
    if (!n) return 0;
    uint32_t take = 0;
    while (take < m && xqh_hip.EventQuery(st->ring[(head + take) % RING].ev) != hipErrorNotReady) take++;
    if (m < n && take == m && xqh_hip.EventQuery(st->ring[(head + m) % RING].ev) != hipErrorNotReady) {
        pthread_mutex_lock(&st->mu); /* the newest of a full ring: re-checked under the lock */
        take = n;
        pthread_mutex_unlock(&st->mu);
    }
    if (!take) return 1;
    uint64_t t = tick();
    pthread_mutex_lock(&st->mu);
    uint32_t count = 0;
    uint64_t est = 0, from = st->ring[head].t_launch > st->last_done ? st->ring[head].t_launch : st->last_done;
    int kind = st->ring[head].kind, one_kind = 1; /* whether every command ended here is of one kind */
    for (uint32_t i = 0; i < take; i++) {
        const ring_entry *re = &st->ring[(head + i) % RING];
        count += re->count, est += re->est;
        one_kind &= !re->mixed && re->kind == kind;
    }
    st->head = (head + take) % RING;
    st->n -= take;
    if (!st->n) ADD(&xqh_busy, -1);
    uint64_t span = t > from ? t - from : 0;
    /* not watched to its end for over half of it (the CUDA interposer's rule, cuda_tracker.c):
     * counted, unmeasured, its device time charged at the stream's estimate */
    uint64_t absent = 0;
    if (prev >= from && t > prev && t - prev > BLIND_NS) absent = t - prev;
    if (g_late_woke > from && g_late_woke - g_late_meant > BLIND_NS && t >= g_late_woke && t - g_late_woke <= AFTER_BLIND_NS &&
        g_late_woke - g_late_meant > absent)
        absent = g_late_woke - g_late_meant;
    int blind = span && absent && 2 * absent > span;
    if (blind) span = 0;
    st->last_done = t;
    st->fl_est -= est <= st->fl_est ? est : st->fl_est;
    st->completed += count, st->in_flight -= count, st->active -= count, st->run_ns += blind ? st->estimate_ns * count : span, st->cseq++;
    if (!st->in_flight) {
        st->fl_est = 0;
        if (st->pad_hz) pad_drained(st);
    }
    if (span) {
        int64_t x = (int64_t)(span / count), e = (int64_t)st->estimate_ns;
        e = e ? e + (x - e) / 4 : x;
        st->estimate_ns = e > 0 ? (uint64_t)e : 1;
        if (one_kind) { /* the kind's own average; ends of both kinds together teach neither */
            int64_t k = (int64_t)st->k_est[kind];
            k = k ? k + (x - k) / 4 : x;
            st->k_est[kind] = k > 0 ? (uint64_t)k : 1;
        }
    }
    int idle = 0;
    if (!st->active) st->ready_since = 0, idle = 1;
    xqh_mirror(st);
    int waiters = st->waiters, left = st->n != 0;
    xq_slot *s = st->gen == LD(&xqh_state) ? st->shm : NULL;
    pthread_mutex_unlock(&st->mu);
    if (waiters) {
        xqh_wake_held(st);
        if (s) futex_wake(&s->completion_seq);
    }
    if (idle) xqh_wake_node(st);
    return left;
}

void xqh_close_stream(xstream *st)
{
    pthread_mutex_lock(&xqh_session.mu);
    pthread_mutex_lock(&st->mu);
    if (!LD(&st->closing) || LD(&st->in_use) != 1 || st->n || st->pending || st->in_flight) {
        pthread_mutex_unlock(&st->mu); /* closed by another thread (the tracker, at_exit), or not done */
        pthread_mutex_unlock(&xqh_session.mu);
        return;
    }
    ST(&st->in_use, 2); /* being closed: by this thread only */
    if (st->gen == LD(&xqh_state) && (st->gen & 1) && st->slot >= 0 && (uint32_t)st->slot < xqh_session.nslots) {
        xqh_send_line("CLOSE %d", st->slot);
        xqh_session.used[st->slot] = 0, xqh_session.owner[st->slot] = NULL;
    }
    st->slot = -1, st->shm = NULL;
    pthread_mutex_unlock(&st->mu);
    pthread_mutex_unlock(&xqh_session.mu);
    const char *why = "";
    xqh_kfd_resume(st, &why); /* a destroyed stream's queue is not left stopped */
    for (int i = 0; i < RING; i++)
        if (st->ring[i].ev) xqh_hip.EventDestroy(st->ring[i].ev), st->ring[i].ev = NULL;
    if (__atomic_exchange_n(&st->wake_owed, 0, __ATOMIC_SEQ_CST)) ADD(&xqh_owed, -1);
    pthread_mutex_lock(&xqh_tab_mu);
    ST(&st->in_use, 0);
    st->closing = 0;
    st->next_hash = xqh_free;
    xqh_free = st;
    pthread_mutex_unlock(&xqh_tab_mu);
    ADD(&xqh_closing, -1);
}

/* The watchdog, as the CUDA interposer's (cuda_tracker.c, docs/processes.md "Deferred launches"):
 * work a stream the node lets launch has in flight may wait on the device for work a held stream
 * of the process has not launched (hipStreamWaitValue32, a spinning kernel), its thread held in
 * the launch; the node, seeing the open one busy, holds the other for good. When a stream the node
 * lets launch has seen none of its work end for XQ_UNSTICK_MS (1000 ms; 0: off), every stream of
 * the process the node holds with a thread waiting is let go until it moves. Tracker only, no
 * capture open. */
uint64_t xqh_unstick_ns = 1000000000ull;
static uint32_t g_unstuck_logged;
static void unstick_watch(uint64_t now)
{
    uint32_t gs = LD(&xqh_state);
    const xstream *stale = NULL;
    for (xstream *st = LD(&xqh_all); st; st = st->next_all) {
        if (!LD(&st->in_use)) continue;
        uint64_t done = LD(&st->completed);
        uint32_t fl = LD(&st->in_flight);
        if (!fl || done != st->wd_done || !st->wd_at) st->wd_done = done, st->wd_at = now;
        xq_slot *s = (gs & 1) && st->gen == gs ? st->shm : NULL;
        if (fl && (!s || !LD(&s->gate)) && now - st->wd_at > xqh_unstick_ns && !stale) stale = st;
    }
    for (xstream *st = LD(&xqh_all); st; st = st->next_all) {
        if (!LD(&st->in_use)) continue;
        xq_slot *s = (gs & 1) && st->gen == gs ? st->shm : NULL;
        int held = s && LD(&s->gate) && LD(&st->pending);
        if (stale && held && !LD(&st->unstick)) {
            ST(&st->unstick, 1);
            ADD(&st->unstuck, 1);
            xlog(ADD(&g_unstuck_logged, 1) <= 3 ? 1 : 3,
                 "xq: stream %s let go though the node holds it: stream %s of this process, which the node lets launch, has seen "
                 "none of its work end for %llu ms (it may wait on the device for work of the held one); until it moves again",
                 st->label, stale->label, (unsigned long long)((now - stale->wd_at) / 1000000ull));
            int slot = LD(&st->slot);
            if (slot >= 0) xqh_send_line("UNSTUCK %d %llu", slot, (unsigned long long)((now - stale->wd_at) / 1000000ull));
            xqh_wake_held(st);
        } else if (!stale && LD(&st->unstick)) {
            ST(&st->unstick, 0);
        }
    }
}

void *xqh_tracker_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "xq-hip-tracker");
    prctl(PR_SET_TIMERSLACK, 1000UL);
    g_tracker = 1;
    uint64_t idle_since = 0;
    for (;;) {
        if (LD(&xqh_exiting)) return NULL;
        int busy = 0;
        uint64_t next = tick() + POLL_NS;
        g_quick = 0;
        if (LD(&xqh_captures)) busy = 1; /* an event query could invalidate a global-mode capture */
        else
            for (xstream *st = LD(&xqh_all); st; st = st->next_all)
                if (LD(&st->in_use)) {
                    gate_watch(st); /* before the poll: a close is seen with what was in flight at it */
                    busy |= xqh_poll_stream(st, &next);
                    /* a queue left stopped behind an open gate (a RESUME line lost) goes on */
                    if (LD(&st->suspended) && st->shm && st->gen == LD(&xqh_state) && !LD(&st->shm->gate)) {
                        const char *why = "";
                        if (xqh_kfd_resume(st, &why) > 0 && st->slot >= 0) xqh_send_line("LV3 %d resumed", st->slot);
                    }
                }
        if (LD(&xqh_kfd.wanted) && xqh_lv3_watch()) busy = 1;
        if (xqh_unstick_ns && !LD(&xqh_captures)) unstick_watch(tick());
        for (xstream *st = LD(&xqh_all); st && (LD(&xqh_owed) || LD(&xqh_closing)); st = st->next_all) {
            if (!LD(&st->in_use)) continue;
            if (LD(&st->wake_owed)) {
                uint64_t now = now_ns(), last = LD(&xqh_last_wake);
                if (now - last >= WAKE_GAP_NS && __atomic_exchange_n(&st->wake_owed, 0, __ATOMIC_SEQ_CST)) {
                    ADD(&xqh_owed, -1);
                    ST(&xqh_last_wake, now);
                    int slot = LD(&st->slot);
                    if (LD(&st->gen) == LD(&xqh_state) && (LD(&xqh_state) & 1) && slot >= 0) xqh_send_line("WAKE %d", slot);
                }
            }
            if (LD(&st->closing)) xqh_close_stream(st);
        }
        uint64_t now = tick();
        if (busy || LD(&xqh_owed) || !idle_since || now - idle_since < PARK_AFTER_NS) {
            idle_since = busy || LD(&xqh_owed) ? 0 : idle_since ? idle_since : now;
            /* launchers waiting on a limit: the shortest nap, unless every stream with work was
             * looked at as when none wait (not_yet: its oldest mark cannot be done yet) */
            int quick = LD(&xqh_limit_waiters) && (g_quick || !xqh_ahead);
            uint64_t gap = quick || LD(&xqh_owed) ? POLL_LIMIT_NS : next > now ? next - now : POLL_LIMIT_NS;
            long want = (long)(gap < POLL_LIMIT_NS ? POLL_LIMIT_NS : gap);
            g_nap = (uint64_t)want;
            sleep_ns(want);
            tick();
            if (xq_log_level >= 2) { /* how late its naps end, as the CUDA interposer counts them */
                uint64_t late = now_ns() - now - (uint64_t)want;
                g_naps[late < 10000 ? 0 : late < 50000 ? 1 : late < 100000 ? 2 : late < 500000 ? 3 : 4]++;
                g_nap_late += late;
                g_nap_quick += quick;
            }
            continue;
        }
        idle_since = 0;
        uint32_t w = LD(&xqh_tracker_word);
        ST(&xqh_tracker_parked, 1);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!LD(&xqh_busy) && !LD(&xqh_owed) && !LD(&xqh_closing)) {
            g_tick = now_ns(), g_nap = 1000000000ull;
            futex_wait(&xqh_tracker_word, w, 1000000000L);
            tick();
        }
        ST(&xqh_tracker_parked, 0);
    }
    return NULL;
}

/* XQ_LOG=2, at exit: the tracker's naps (the CUDA interposer's line, cuda_diag.c). Read while the
 * tracker may still count: a nap more or less. */
void xqh_tracker_summary(void)
{
    uint64_t naps = g_naps[0] + g_naps[1] + g_naps[2] + g_naps[3] + g_naps[4];
    if (naps)
        xlog(2, "xq: tracker naps %llu (quick, for launchers waiting on a limit: %llu), ended late by <10 us: %llu, <50 us: %llu, "
                "<100 us: %llu, <500 us: %llu, more: %llu; mean %.1f us late",
             (unsigned long long)naps, (unsigned long long)g_nap_quick, (unsigned long long)g_naps[0], (unsigned long long)g_naps[1],
             (unsigned long long)g_naps[2], (unsigned long long)g_naps[3], (unsigned long long)g_naps[4], g_nap_late / 1e3 / naps);
}
