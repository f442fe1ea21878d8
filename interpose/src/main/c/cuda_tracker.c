/*
 * cuda_tracker.c: the tracker thread: watches each stream's marks (events or memop words) to count
 * completions, reads timed samples, sends WAKE lines the pacing delayed, closes destroyed streams.
 */
#include "cuda_int.h"

uint32_t xqc_busy;         /* streams with marks in their ring or unmarked launches */
uint32_t xqc_owed;         /* streams owing a WAKE */
uint32_t xqc_closing;      /* destroyed streams not yet closed */
static uint32_t g_tracker_word;
uint32_t xqc_tracker_parked;
pthread_mutex_t xqc_query_mu = PTHREAD_MUTEX_INITIALIZER; /* tracker queries vs capture begin */
/* ------------------------------------------------------------------ tracker thread */

__thread int xqc_t_tracker;
static uint32_t g_tracker_napping; /* the tracker sleeps between looks (on g_tracker_word, up to 100 us) */

/* Has the tracker send a WAKE line owed now: wakes it from a nap too, not only when parked. A
 * futex wake costs the launching thread ~5 us on the H200 host; the send itself cost it 5-30 us,
 * ms at times (the node's reader woken, the sender put off the CPU), between a request's first
 * call and its next launch (cuda_session.c: xqc_wake_node). */
void xqc_tracker_wake_now(void)
{
    ADD(&g_tracker_word, 1);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (LD(&xqc_tracker_parked) || LD(&g_tracker_napping)) {
        uint64_t p0 = XQ_HT_ON ? now_ns() : 0;
        futex_wake(&g_tracker_word);
        if (p0) xqc_ht_part(HP_KICK, now_ns() - p0);
    }
}

void xqc_tracker_kick(void)
{
    if (LD(&xqc_tracker_parked)) {
        uint64_t p0 = XQ_HT_ON ? now_ns() : 0;
        ADD(&g_tracker_word, 1);
        futex_wake(&g_tracker_word);
        if (p0) xqc_ht_part(HP_KICK, now_ns() - p0);
    }
}

/* Whether the commands up to entry e are done: its sequence number reached the stream's word, or
 * its event is done (an error counts as ended). */
static int entry_done(const xstream *st, const ring_entry *e, CUcontext c, CUcontext *cur)
{
    if (e->seq) return LD(st->word->host) >= e->seq;
    if (c != *cur && xqc_cu.CtxSetCurrent(c) == CUDA_SUCCESS) *cur = c;
    return xqc_cu.EventQuery(e->ev) != CUDA_ERROR_NOT_READY;
}

/* After the tracker counted completions of st (caller holds st->mu, released here): publishes
 * the counts, wakes the threads held on the limits and, when the stream went idle, the node.
 * Returns whether work is still tracked on st. */
static int completions_seen(xstream *st, int idle)
{
    if (idle && st->lag_max) { /* the busy period's device lag, for its idle WAKE (xqc_send_wake) */
        uint64_t us = st->lag_max / 1000;
        __atomic_store_n(&st->lag_pend, (uint32_t)(us < 1000000000ull ? us : 1000000000ull) + 1, __ATOMIC_SEQ_CST);
        st->lag_max = 0;
    }
    xqc_mirror(st);
    int waiters = st->waiters, left = st->tracked;
    xq_slot *s = st->gen == LD(&xqc_state) ? st->shm : NULL;
    mu_unlock(&st->mu);
    if (waiters) {
        xqc_wake_held(st);
        if (s) futex_wake(&s->completion_seq);
    }
    if (idle) xqc_wake_node(st);
    return left;
}

/* A stream with unmarked launches and no mark left to wait for: once it has launched nothing for
 * a while (50 us under a window, else 500 us, and not before the launches' estimated work could
 * be done), asks the driver whether it is idle (cuStreamQuery: a driver call, so not while it
 * launches) and, if so, counts those launches done, unmeasured. Not idle yet, it asks again
 * within QUIET_RETRY_NS, not a whole quiet time later: a CUDA graph's 1.7 ms request a little past
 * its estimate was seen done a second estimate later, the node saw it busy 3.3-3.4 ms one request
 * in eight and held a GEMM behind it out of those gaps (H200, session 46). Returns whether work
 * may still be in flight. Tracker only, with xqc_query_mu held. */
#define QUIET_LIMIT_NS 50000ull
#define QUIET_NS 500000ull
#define QUIET_RETRY_NS 100000ull
static int poll_tail(xstream *st, CUcontext c, CUcontext *cur, uint64_t now)
{
    /* read without the lock (taking it would take its line from a launching thread's core every
     * look): whether to ask is only a guess; what is counted is checked again under the lock.
     * tail_gen first: a tail_n of a later tail fails that check. */
    uint32_t gen = LD(&st->tail_gen), c0 = LD(&st->tail_n);
    uint64_t quiet = xqc_mark_every(st) < FREE_MARK_NS ? QUIET_LIMIT_NS : QUIET_NS, te = LD(&st->tail_est);
    if (quiet < te) quiet = te; /* not before the work could be done: a query too early only costs */
    int due = c0 && !LD(&st->n) && (LD(&xqc_final) || (now - LD(&st->last_launch) >= quiet && now >= st->query_at));
    if (due) st->query_at = now + (quiet < QUIET_RETRY_NS ? quiet : QUIET_RETRY_NS);
    if (!c0) return 0;
    if (!due || st->kind == K_PTDS) return 1;
    if (c != *cur && xqc_cu.CtxSetCurrent(c) == CUDA_SUCCESS) *cur = c;
    CUresult r = xqc_cu.StreamQuery(st->kind == K_EXPLICIT ? st->h : NULL);
    if (r == CUDA_ERROR_NOT_READY) return 1;
    int idle = 0; /* done, or an error: either way nothing more will be seen of them */
    mu_lock(&st->mu);
    st->queries++;
    if (st->tail_gen == gen && !st->n && st->tail_n >= c0) { /* the c0 oldest of the tail were launched before the query */
        uint64_t est = st->tail_n == c0 ? st->tail_est : st->tail_est / st->tail_n * c0;
        st->tail_n -= c0, st->tail_est -= est;
        st->fl_est -= est <= st->fl_est ? est : st->fl_est;
        if (!st->in_flight) st->fl_est = 0;
        idle = xqc_account_done(st, c0, 0, 1024);
        st->last_done = now_ns();
        if (st->tail_n) st->tail_t = st->last_done, st->tail_key = 0; /* the rest came after the query */
        xqc_busy_update(st);
    }
    return completions_seen(st, idle);
}

/* The tracker's latest absence: back at g_late_woke, over BLIND_NS after it meant to be (from a
 * nap, or between two readings of the clock in one pass): the process stopped (SIGSTOP: a job
 * scheduler's suspend, a debugger) or the tracker kept off the CPU. A batch that began before it
 * ended unseen somewhere in between. g_tick: its latest reading of the clock; g_nap: the nap it
 * began then (0: none). Tracker thread only. */
static uint64_t g_late_meant, g_late_woke, g_tick, g_nap;

/* The tracker's clock: now, and an absence noted (other threads read the clock plainly). */
static uint64_t tick(void)
{
    uint64_t t = now_ns();
    if (!xqc_t_tracker) return t;
    if (g_tick && t > g_tick + g_nap + BLIND_NS) g_late_meant = g_tick + g_nap, g_late_woke = t;
    g_tick = t, g_nap = 0;
    return t;
}

int xqc_ahead = 1;   /* XQ_TRACK_AHEAD (cuda_hooks.c) */
int xqc_t_urgent;    /* tracker only, each pass: a stream was looked at as launchers waiting on a limit want */

/* Whether st's oldest mark cannot be done yet (cuda_int.h: AHEAD_*): its work's estimate is long
 * and not AHEAD_NUM/AHEAD_DEN of it has passed since it could begin. Read without the lock: n and
 * head change only in the tracker, an entry stays put while in the ring, last_done is the
 * tracker's. */
static int not_yet(const xstream *st, uint64_t now)
{
    if (!xqc_ahead || !LD(&st->n)) return 0;
    const ring_entry *e = &st->ring[st->head];
    uint64_t est = e->est;
    if (est < AHEAD_MIN_NS) return 0;
    uint64_t from = e->t_launch > st->last_done ? e->t_launch : st->last_done;
    return now < from + est / AHEAD_DEN * AHEAD_NUM;
}

/* Counts the finished commands of st; returns whether work is still in flight. The done ones
 * are found at once (marks end in stream order: a binary search over the ring) and accounted
 * as one batch, so the estimate is the batch's time per command, not one command carrying the
 * whole time since the last look. A stream is looked at every 20 us while launchers wait on a
 * limit, else every 100 us (an event query makes the driver submit queued work, which costs
 * launching threads); a memop stream every 5 us and 50 us (a look is a load). *next: the
 * earliest time a stream is due; *gap: the tracker's shortest nap. */
int xqc_poll_stream(xstream *st, CUcontext *cur, uint64_t *next, uint64_t *gap)
{
    int urgent = LD(&xqc_limit_waiters) > 0, memop = LD(&st->cmode) > 0;
    uint64_t now = tick(), lim = memop ? MEMOP_LIMIT_NS : POLL_LIMIT_NS;
    int later = not_yet(st, now);
    if (later) urgent = 0;
    else if (urgent && (LD(&st->n) || LD(&st->tail_n))) xqc_t_urgent = 1; /* one with no work: no end to see */
    if (memop && LD(&st->n) && !later) *gap = MEMOP_LIMIT_NS;
    if (now < st->poll_at && !(urgent && now - st->polled >= lim)) {
        *next = st->poll_at < *next ? st->poll_at : *next;
        return LD(&st->n) != 0;
    }
    if (LD(&st->smp_n)) xqc_smp_read(st, st->ctx, cur);
    uint64_t prev = st->polled; /* the last look: what is found done now ended after it */
    st->polled = now;
    st->poll_at = now + (urgent ? lim : memop && !later ? MEMOP_NS : POLL_NS);
    *next = st->poll_at < *next ? st->poll_at : *next;
    /* entries stay put while in the ring, except the newest of a full ring (re-recorded); read
     * without the lock, which is taken only once something is found done: n is stored after its
     * entry is written, head and ctx change only here */
    uint32_t n = LD(&st->n), head = st->head, m = n == RING ? n - 1 : n;
    CUcontext c = st->ctx;
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
    uint64_t t = tick();
    mu_lock(&st->mu);
    uint32_t count = 0, take = d + 1;
    uint64_t from = st->ring[head].t_launch > st->last_done ? st->ring[head].t_launch : st->last_done;
    /* the batch ended between the last look and now: take the middle, when that look came after
     * the batch began and not long ago (else all that is known is that it ended by now: a long
     * gap, the tracker kept off the CPU, must not halve a command) */
    uint64_t end = prev > from && t > prev && t - prev <= 2 * POLL_NS ? prev + (t - prev) / 2 : t;
    uint64_t span = end > from ? end - from : 0, est = 0;
    /* the end is known to lie only in (the last look, now]: where the tracker was kept from
     * looking for BLIND_NS there (this stream watched and not looked at since), or the batch
     * began before an absence of the tracker and is found done within AFTER_BLIND_NS of its end,
     * the span is not a measurement. Taught, it would move the estimate by a quarter of the stop: GEMM processes
     * stopped 1.5 s of every 3 read 180-203 ms for their 21 ms kernels, trainers' 20 us steps
     * 4-15 ms, and changed class (H200, session 55). A command that did end just after such a
     * wake goes unmeasured: one sample lost. Its device time is charged at the stream's estimate. */
    /* An absence short beside the span still teaches it (a command at most that much too long,
     * by a quarter): beside one busy loop on 2 vCPUs the tracker lost the CPU for 2-10 ms at a
     * time, every span of 20 ms kernels counted as blind, a kind measured only by batches (no
     * timing events) never got an estimate, and each of its launches was charged a whole window:
     * one in flight at a time. */
    uint64_t absent = 0;
    if (prev >= from && t > prev && t - prev > BLIND_NS) absent = t - prev;
    if (g_late_woke > from && g_late_woke - g_late_meant > BLIND_NS && t >= g_late_woke && t - g_late_woke <= AFTER_BLIND_NS &&
        g_late_woke - g_late_meant > absent)
        absent = g_late_woke - g_late_meant;
    int blind = span && absent && 2 * absent > span;
    if (blind) span = 0;
    /* the device lag: how long after the launch of its last command the batch ended. A narrow
     * latency-critical stream's work runs as soon as it is launched, unless another process's
     * memory traffic slows its kernels: beside Triton's memory-bound loop an eager decoder's
     * kernels fell behind its launches, its device part 2.8-10 ms at P99 against 0.06-0.16 ms
     * without (multiprocessors split by space do not split memory bandwidth); the node reads it
     * from the idle WAKE line. Marked batches only: an unmarked tail (poll_tail) is seen done only
     * after 500 us quiet; a blind end is not a measurement. What is known for sure: at the last
     * look (prev) the batch was not done. The end itself is known only to the tracker's look, and
     * a stream nobody waits on is looked at every millisecond or two: taken as the lag, that look
     * made an eager decoder's batches read 1 ms late in 6 of its first 8 requests beside training
     * and GEMMs on an H200 whose device part was 0.12 ms at P99 (session 110). */
    uint64_t t_end = st->ring[(head + take - 1) % RING].t_end;
    if (!blind && prev > t_end && prev - t_end > st->lag_max) st->lag_max = prev - t_end;
    uint32_t scale = st->ring[head].scale; /* the batch's width: its first mark's (widths change seldom) */
    struct { uint64_t key, w, n; } part[RING];
    uint32_t parts = 0;
    for (uint32_t i = 0; i < take; i++) {
        ring_entry *e = &st->ring[(head + i) % RING];
        count += e->count, est += e->est;
        part[parts].key = e->count == 1 ? e->key : 0, part[parts].n = e->count, part[parts++].w = e->est;
    }
    if (xqc_hot.log >= 3 && (est >= 1000000 || span >= 1000000)) {
        if (!st->tl) st->tl = calloc(TL_MAX, sizeof *st->tl);
        if (st->tl && st->ntl < TL_MAX)
            st->tl[st->ntl++] = (tl_entry){st->ring[head].t_launch, from, end, est, st->ring[head].hz, count, scale};
    }
    st->head = (head + take) % RING;
    st->n -= take;
    st->last_done = end;
    st->fl_est -= est <= st->fl_est ? est : st->fl_est;
    if (!st->in_flight) st->fl_est = 0;
    int idle = xqc_account_done(st, count, span, scale);
    if (blind) st->run_ns += st->estimate_ns * count; /* at the stream's estimate: what the span would have said */
    if (!st->in_flight && (st->pending || st->dq_n)) xqc_wait_begin(st, t);
    xqc_busy_update(st);
    int left = completions_seen(st, idle);
    /* each command of the batch learns its share of the span, by the estimates it was launched
     * with (unknown ones: an equal share) */
    if (span) {
        uint64_t even = span / (count ? count : 1), sum = 0;
        for (uint32_t i = 0; i < parts; i++) sum += part[i].w ? part[i].w : even * part[i].n;
        for (uint32_t i = 0; i < parts && sum; i++)
            if (part[i].key)
                xqc_cost_put(part[i].key, (uint64_t)((double)span * (double)(part[i].w ? part[i].w : even) / (double)sum), 0);
    }
    return left;
}

/* A destroyed stream whose work is done: CLOSE, destroy its events, recycle the struct. */
static void close_stream(xstream *st)
{
    pthread_mutex_lock(&xqc_session.mu);
    mu_lock(&st->mu);
    if (st->n || st->pending || st->in_flight) {
        mu_unlock(&st->mu);
        pthread_mutex_unlock(&xqc_session.mu);
        return;
    }
    if (st->gen == LD(&xqc_state) && (st->gen & 1) && st->slot >= 0 && (uint32_t)st->slot < xqc_session.nslots) {
        xqc_send_line("CLOSE %d", st->slot);
        xqc_session.used[st->slot] = 0, xqc_session.owner[st->slot] = NULL;
    }
    st->slot = -1, st->shm = NULL;
    mu_unlock(&st->mu);
    pthread_mutex_unlock(&xqc_session.mu);
    for (int i = 0; i < RING; i++)
        if (st->ring[i].ev) xqc_cu.EventDestroy(st->ring[i].ev);
    for (int i = 0; i < SMP; i++) { /* samples not read yet are dropped: nothing is in flight */
        if (st->smp[i].a) xqc_cu.EventDestroy(st->smp[i].a);
        if (st->smp[i].b) xqc_cu.EventDestroy(st->smp[i].b);
    }
    if (st->word) xqc_word_put(st->word, st->ctx); /* every write to it landed: nothing is in flight */
    if (__atomic_exchange_n(&st->wake_owed, 0, __ATOMIC_SEQ_CST)) ADD(&xqc_owed, -1);
    pthread_mutex_lock(&xqc_tab_mu);
    ST(&st->in_use, 0);
    st->closing = 0;
    st->next_hash = xqc_free;
    xqc_free = st;
    pthread_mutex_unlock(&xqc_tab_mu);
    ADD(&xqc_closing, -1);
}

/* Each time the tracker sees st's gate close: the arrival guard's pad learns from it (always;
 * xstream.pad_ns), and with XQ_LOG=2, where work was in flight, how much estimated work was left
 * and how long it took to end: what a tenant the node preferred waited behind, once the node had
 * decided. */
static void gate_watch(xstream *st)
{
    xq_slot *s = st->gen == LD(&xqc_state) ? st->shm : NULL;
    int g = s && LD(&s->gate);
    if (g == st->gate_seen) return;
    st->gate_seen = g;
    if (!g) {
        /* opened again before what was in flight at the close ended: not a drain behind a close */
        mu_lock(&st->mu);
        if (st->drain_from) st->drain_from = 0, st->nreopen++;
        st->pad_hz = 0;
        mu_unlock(&st->mu);
        return;
    }
    mu_lock(&st->mu);
    uint64_t at = now_ns();
    if (xqc_pad_on && st->g_hz && at > st->g_hz && at <= st->g_until + PAD_GRACE_NS) {
        /* the gate closed past the horizon of the guard the last command went under: work still
         * in flight ran past it (the pad learns how far when it ends); none, and the guard (with
         * the pad) kept the stream clear: the pad wears down */
        if (st->in_flight)
            st->pad_hz = st->g_hz;
        else if (st->pad_ns)
            st->pad_ns -= st->pad_ns / PAD_WEAR, st->pads_down++;
        st->g_hz = 0;
    }
    if (xq_log_level < 2) {
        mu_unlock(&st->mu);
        return;
    }
    st->closes++;
    uint64_t first, credit, left = st->in_flight ? xqc_work_left(st, now_ns(), &first, &credit) : 0;
    if (st->in_flight && !st->drain_from) st->drain_from = now_ns(), st->drain_est = left;
    if (st->in_flight && st->nleft < sizeof st->left_us / sizeof st->left_us[0]) {
        st->left_us[st->nleft++] = (uint32_t)(left / 1000);
        uint64_t now = now_ns();
        int k = !st->adm_hz ? 0 : st->adm_t >= st->adm_until ? 1 : now < st->adm_hz ? 2 : 3;
        st->close_guard[k]++;
        if (k == 1 && st->nlapse < sizeof st->lapse_us / sizeof st->lapse_us[0])
            st->lapse_us[st->nlapse++] = (uint32_t)((now - st->adm_until) / 1000);
        if (k == 0 && st->nunguarded < sizeof st->unguarded_us / sizeof st->unguarded_us[0])
            st->unguarded_us[st->nunguarded++] = st->adm_guarded_t ? (uint32_t)((now - st->adm_guarded_t) / 1000) : UINT32_MAX;
    }
    mu_unlock(&st->mu);
}

int xqc_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t xqc_nap[5], xqc_nap_late; /* XQ_LOG=2, tracker only: its naps by how late they ended */
uint64_t xqc_nap_quick;            /* and of them, the shortest ones, taken for launchers waiting on a limit */

/* Sends the WAKE lines owed (paced: one per WAKE_GAP_NS) and, with close, closes the streams
 * destroyed meanwhile. Tracker only. */
static void send_owed(int close)
{
    for (xstream *st = LD(&xqc_all); st && (LD(&xqc_owed) || (close && LD(&xqc_closing))); st = st->next_all) {
        if (!LD(&st->in_use)) continue;
        if (LD(&st->wake_owed)) {
            uint64_t now = now_ns(), last = LD(&xqc_last_wake);
            if (now - last >= WAKE_GAP_NS && __atomic_exchange_n(&st->wake_owed, 0, __ATOMIC_SEQ_CST)) {
                ADD(&xqc_owed, -1);
                ST(&xqc_last_wake, now);
                int slot = LD(&st->slot);
                xqc_told_by_tracker(st);
                if (LD(&st->gen) == LD(&xqc_state) && (LD(&xqc_state) & 1) && slot >= 0) xqc_send_wake(st, slot);
            }
        }
        if (close && LD(&st->closing)) close_stream(st);
    }
}

/* The watchdog. A stream the node lets launch may have work in flight that waits, on the device,
 * for work the process has not launched yet because the node holds another of its streams: a
 * cuStreamWaitValue32 for a word a held stream's cuStreamWriteValue32 would write (a pipeline, a
 * communication library), a kernel spinning on a flag a held stream's kernel sets, a host function
 * blocking on a thread held in a launch. The interposer sees none of that; the node, seeing the
 * open stream busy, holds the other behind it (a priority), and both wait for good. So when a
 * stream the node lets launch has had work in flight and seen none of it end for XQ_UNSTICK_MS
 * (1000 ms; 0: off), every stream of the process the node holds with work waiting (deferred, or a
 * thread held in a launch) is let go (unstick: its deferred launches made, its held threads pass,
 * the limits too) until the open one's work moves again. What it costs where nothing waited: a
 * kernel that runs longer than that lets its process's held streams go early. Found by the random
 * programs' links by a word in memory under a node holding as a priority policy does (3 runs of
 * 24 never ended). Tracker only, with xqc_query_mu held and no capture open. */
uint64_t xqc_unstick_ns = 1000000000ull;
static uint32_t g_unstuck_logged;
static void unstick_watch(uint64_t now)
{
    uint32_t gs = LD(&xqc_state);
    const xstream *stale = NULL;
    for (xstream *st = LD(&xqc_all); st; st = st->next_all) {
        if (!LD(&st->in_use)) continue;
        uint64_t done = LD(&st->completed);
        uint32_t fl = LD(&st->in_flight);
        if (!fl || done != st->wd_done || !st->wd_at) st->wd_done = done, st->wd_at = now;
        xq_slot *s = (gs & 1) && st->gen == gs ? st->shm : NULL;
        if (fl && (!s || !LD(&s->gate)) && now - st->wd_at > xqc_unstick_ns && !stale) stale = st;
    }
    for (xstream *st = LD(&xqc_all); st; st = st->next_all) {
        if (!LD(&st->in_use)) continue;
        xq_slot *s = (gs & 1) && st->gen == gs ? st->shm : NULL;
        int held = s && LD(&s->gate) && (LD(&st->dq_n) || LD(&st->pending));
        if (stale && held && !LD(&st->unstick)) {
            ST(&st->unstick, 1);
            ADD(&st->unstuck, 1);
            xlog(ADD(&g_unstuck_logged, 1) <= 3 ? 1 : 3,
                 "xq: stream %s let go though the node holds it: stream %s of this process, which the node lets launch, has seen "
                 "none of its work end for %llu ms (it may wait on the device for work of the held one); until it moves again",
                 st->label, stale->label, (unsigned long long)((now - stale->wd_at) / 1000000ull));
            int slot = LD(&st->slot);
            if (slot >= 0) xqc_send_line("UNSTUCK %d %llu", slot, (unsigned long long)((now - stale->wd_at) / 1000000ull)); /* xq:processes counts them */
            xqc_wake_held(st); /* its held threads look again; the tracker makes its deferred launches */
        } else if (!stale && LD(&st->unstick)) {
            ST(&st->unstick, 0);
        }
    }
}

void *xqc_tracker_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "xq-tracker");
    prctl(PR_SET_TIMERSLACK, 1000UL); /* its 20 us (memop: 5 us) naps must stay near that */
    xqc_t_tracker = 1;
    CUcontext cur = NULL;
    uint64_t idle_since = 0;
    for (;;) {
        int busy = 0;
        uint32_t word = LD(&g_tracker_word); /* a WAKE owed after this ends the nap below */
        send_owed(0); /* an arrival first: the node holds the others on it */
        uint64_t next = tick() + POLL_NS, gap = POLL_LIMIT_NS;
        xqc_t_urgent = 0;
        pthread_mutex_lock(&xqc_query_mu);
        if (LD(&xqc_exiting)) { /* the driver goes away: query nothing more */
            pthread_mutex_unlock(&xqc_query_mu);
            return NULL;
        }
        if (LD(&xqc_captures)) /* an event query could invalidate a global-mode capture */
            busy = 1;
        else {
            int open_busy = xqc_stall ? xqc_stall_open_busy() : 0;
            for (xstream *st = LD(&xqc_all); st; st = st->next_all)
                if (LD(&st->in_use)) {
                    if (xqc_stall) xqc_stall_watch(st, open_busy);
                    gate_watch(st);
                    busy |= xqc_poll_stream(st, &cur, &next, &gap);
                }
            if (xqc_unstick_ns) unstick_watch(tick());
        }
        pthread_mutex_unlock(&xqc_query_mu);
        if (LD(&xqc_deferred)) { /* completions seen, or the gate opened: make what may go now */
            tick();
            xqc_drain_all(0); /* launches made here may take milliseconds: the tracker's work, not an absence */
            g_tick = now_ns();
            busy |= LD(&xqc_deferred) != 0;
        }
        send_owed(1);
        uint64_t now = tick();
        if (busy || LD(&xqc_owed) || !idle_since || now - idle_since < PARK_AFTER_NS) {
            idle_since = busy || LD(&xqc_owed) ? 0 : idle_since ? idle_since : now;
            /* launchers waiting on a limit: the shortest nap, unless every stream with work was
             * looked at as when none wait (not_yet: its oldest mark cannot be done yet) */
            int quick = LD(&xqc_limit_waiters) && (xqc_t_urgent || !xqc_ahead);
            uint64_t until = quick || LD(&xqc_owed) ? now + gap : next;
            long want = until > now + gap ? (long)(until - now) : (long)gap;
            ST(&g_tracker_napping, 1);
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            g_tick = now, g_nap = (uint64_t)want;
            futex_wait(&g_tracker_word, word, want); /* a nap, cut short by xqc_tracker_wake_now */
            ST(&g_tracker_napping, 0);
            tick();
            if (xq_log_level >= 2) { /* how late its naps end: a late tracker refills a throttled stream late */
                uint64_t late = now_ns() - now - (uint64_t)want;
                xqc_nap[late < 10000 ? 0 : late < 50000 ? 1 : late < 100000 ? 2 : late < 500000 ? 3 : 4]++;
                xqc_nap_late += late;
                xqc_nap_quick += quick;
            }
            continue;
        }
        idle_since = 0;
        /* nothing in flight for a while: park until a launch kicks */
        uint32_t w = LD(&g_tracker_word);
        ST(&xqc_tracker_parked, 1);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!LD(&xqc_busy) && !LD(&xqc_owed) && !LD(&xqc_closing) && !LD(&xqc_deferred)) {
            g_tick = now_ns(), g_nap = 1000000000ull;
            futex_wait(&g_tracker_word, w, 1000000000L);
            tick();
        }
        ST(&xqc_tracker_parked, 0);
    }
    return NULL;
}
