/*
 * cuda_diag.c: diagnostics: the XQ_LOG=2 summary printed at exit (per stream, the tracker's naps,
 * the host time spent in the interposer, the entry points that waited for deferred work).
 */
#include "cuda_int.h"

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

#include <sys/resource.h>

/* ------------------------------------------------------------------ host time (XQ_LOG=2) */

/* Host time the application's threads spent in the interposer around gated calls: what the
 * interposer costs a launch-bound process on its own threads. Waits to launch (the node held the
 * stream, a guard, a limit, deferred work ahead) are the schedule, not this cost, and deferred
 * launches made on the way are launches the program would have made anyway: both are told apart.
 * The clock reads that measure it are in it (about 20-40 ns a call). */
#define HT_BUCKETS 8
static const uint64_t ht_edge[HT_BUCKETS - 1] = {200, 500, 1000, 2000, 5000, 10000, 50000};
static uint64_t g_ht_n, g_ht_pre, g_ht_post, g_ht_wait, g_ht_ndef, g_ht_def, g_ht_drain, g_ht_by[HT_BUCKETS], g_ht_why[6];
/* by entry point (cuda_hooks.c's W_ indices: fewer than HT_IDS): calls, before, after, over 50 us */
#define HT_IDS 32
static uint64_t g_ht_id_n[HT_IDS], g_ht_id_pre[HT_IDS], g_ht_id_post[HT_IDS], g_ht_id_long[HT_IDS], g_ht_id_wait[HT_IDS],
    g_ht_id_nwait[HT_IDS];
/* parts (HP_*): how many, how long in all, how many over 50 us, the longest */
static uint64_t g_hp_n[HP_COUNT], g_hp_ns[HP_COUNT], g_hp_long[HP_COUNT], g_hp_max[HP_COUNT];
static const char *const hp_name[HP_COUNT] = {"marks (a memop write or an event record)", "timed samples' event records",
                                              "lines to the node", "tracker kicks (a futex wake)",
                                              "waits for a stream's lock"};

void xqc_ht_part(int part, uint64_t ns)
{
    if (part < 0 || part >= HP_COUNT) return;
    __atomic_add_fetch(&g_hp_n[part], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_hp_ns[part], ns, __ATOMIC_RELAXED);
    if (ns >= 50000) __atomic_add_fetch(&g_hp_long[part], 1, __ATOMIC_RELAXED);
    uint64_t m = LD(&g_hp_max[part]);
    while (ns > m && !__atomic_compare_exchange_n(&g_hp_max[part], &m, ns, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static void ht_id(int id, uint64_t pre, uint64_t post)
{
    if (id < 0 || id >= HT_IDS) return;
    __atomic_add_fetch(&g_ht_id_n[id], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_ht_id_pre[id], pre, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_ht_id_post[id], post, __ATOMIC_RELAXED);
    if (pre + post >= 50000) __atomic_add_fetch(&g_ht_id_long[id], 1, __ATOMIC_RELAXED);
}

static void ht_bucket(uint64_t ns)
{
    int i = 0;
    while (i < HT_BUCKETS - 1 && ns >= ht_edge[i]) i++;
    __atomic_add_fetch(&g_ht_by[i], 1, __ATOMIC_RELAXED);
}

/* Calls that waited for the process's deferred launches (a call that cannot be deferred), by the
 * library that made them, the entry point and why it was not deferred: what keeps a process's
 * launching thread waiting, and what to defer next. Filled under XQ_LOG=2 only (a dladdr each). */
#define FW_MAX 24
static struct fwho {
    const char *lib; /* dli_fname: the loader's string, alive as long as the library is loaded */
    int id, nd;
    uint64_t n, ns;
} g_fw[FW_MAX];
static pthread_mutex_t g_fw_mu = PTHREAD_MUTEX_INITIALIZER;
static const char *const nd_name[ND_WHY_COUNT] = {"not a deferrable call", "reached through an exported symbol",
                                                  "on a per-thread default stream", "deferral off",
                                                  "its launch could not be copied"};

static void fw_note(const gate *g)
{
    Dl_info di;
    const char *lib = g->ra && dladdr(g->ra, &di) && di.dli_fname ? di.dli_fname : "?";
    const char *b = strrchr(lib, '/');
    lib = b ? b + 1 : lib;
    pthread_mutex_lock(&g_fw_mu);
    for (int i = 0; i < FW_MAX; i++) {
        struct fwho *w = &g_fw[i];
        if (!w->lib) w->lib = lib, w->id = g->id, w->nd = g->nd;
        if (w->id == g->id && w->nd == g->nd && !strcmp(w->lib, lib)) {
            w->n++, w->ns += g->wait_by[0];
            break;
        }
    }
    pthread_mutex_unlock(&g_fw_mu);
}

static int cmp_fw(const void *a, const void *b)
{
    const struct fwho *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static void fw_summary(char *line, size_t cap)
{
    struct fwho w[FW_MAX];
    pthread_mutex_lock(&g_fw_mu);
    memcpy(w, g_fw, sizeof w);
    pthread_mutex_unlock(&g_fw_mu);
    qsort(w, FW_MAX, sizeof w[0], cmp_fw);
    size_t len = 0;
    for (int i = 0; i < FW_MAX && w[i].lib && len < cap - 200; i++) {
        int k = snprintf(line + len, cap - len, "%s%s %s (%s) %llu, %.1f ms", len ? "; " : "", w[i].lib,
                         xqc_entry_name(w[i].id), nd_name[w[i].nd >= 0 && w[i].nd < ND_WHY_COUNT ? w[i].nd : 0],
                         (unsigned long long)w[i].n, w[i].ns / 1e6);
        if (k > 0) len += (size_t)k < cap - len ? (size_t)k : cap - len - 1;
    }
    if (len)
        xlog(2, "xq: calls that waited for the process's deferred launches, by the library that made them, the entry point "
                "and why it was not deferred itself (calls, the wait in all): %s",
             line);
}

static void ht_waits(const gate *g)
{
    if (g->wait_by[0]) fw_note(g);
    __atomic_add_fetch(&g_ht_wait, g->wait_ns, __ATOMIC_RELAXED);
    if (g->id >= 0 && g->id < HT_IDS)
        __atomic_add_fetch(&g_ht_id_wait[g->id], g->wait_ns, __ATOMIC_RELAXED), __atomic_add_fetch(&g_ht_id_nwait[g->id], 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 6; i++)
        if (g->wait_by[i]) __atomic_add_fetch(&g_ht_why[i], g->wait_by[i], __ATOMIC_RELAXED);
}

/* A call that went through the gate: t0 its entry, t1 the driver call's start, t2 its end (0:
 * none made here: the call's driver work is the caller's, after t1); now is its exit. */
void xqc_ht_call(uint64_t t0, uint64_t t1, uint64_t t2, const gate *g)
{
    uint64_t t3 = t2 ? now_ns() : 0, pre = t1 - t0, post = t2 ? t3 - t2 : 0;
    pre = pre > g->wait_ns ? pre - g->wait_ns : 0;
    __atomic_add_fetch(&g_ht_n, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_ht_pre, pre, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_ht_post, post, __ATOMIC_RELAXED);
    if (g->wait_ns) ht_waits(g);
    ht_bucket(pre + post);
    ht_id(g->id, pre, post);
}

/* A call deferred (queued to be launched later): t0 its entry; now it returns to the program. */
void xqc_ht_deferred(uint64_t t0, const gate *g)
{
    uint64_t d = now_ns() - t0, off = g->wait_ns + g->drain_ns;
    d = d > off ? d - off : 0;
    __atomic_add_fetch(&g_ht_ndef, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_ht_def, d, __ATOMIC_RELAXED);
    if (g->drain_ns) __atomic_add_fetch(&g_ht_drain, g->drain_ns, __ATOMIC_RELAXED);
    if (g->wait_ns) ht_waits(g);
    ht_bucket(d);
    ht_id(g->id, d, 0);
}

void xqc_ht_reset(void)
{
    g_ht_n = g_ht_pre = g_ht_post = g_ht_wait = g_ht_ndef = g_ht_def = g_ht_drain = 0;
    for (int i = 0; i < HT_BUCKETS; i++) g_ht_by[i] = 0;
    for (int i = 0; i < 6; i++) g_ht_why[i] = 0;
    for (int i = 0; i < HT_IDS; i++) g_ht_id_n[i] = g_ht_id_pre[i] = g_ht_id_post[i] = g_ht_id_long[i] = g_ht_id_wait[i] = g_ht_id_nwait[i] = 0;
    for (int i = 0; i < HP_COUNT; i++) g_hp_n[i] = g_hp_ns[i] = g_hp_long[i] = g_hp_max[i] = 0;
    pthread_mutex_lock(&g_fw_mu);
    memset(g_fw, 0, sizeof g_fw);
    pthread_mutex_unlock(&g_fw_mu);
    xqc_threads_reset();
}

static void ht_summary(void)
{
    uint64_t n = LD(&g_ht_n), nd = LD(&g_ht_ndef);
    if (xqc_hot.lean_diag)
        xlog(2, "xq: XQ_LOG_LEAN=1: %llu launches took the lean path, untimed: not in the accounts below",
             (unsigned long long)LD(&xqc_lean_untimed));
    if (!n && !nd) return;
    uint64_t pre = LD(&g_ht_pre), post = LD(&g_ht_post), def = LD(&g_ht_def);
    /* a kept current context found other than the driver's (cuda_gate.c: every gated call asks at this level) */
    xlog(2, "xq: current context: the kept one found changed by a call not wrapped %llu times",
         (unsigned long long)LD(&xqc_ctx_missed));
    char threads[256];
    xqc_threads_cpu(threads, sizeof threads);
    struct rusage ru;
    double cpu = getrusage(RUSAGE_SELF, &ru) ? 0.0
                 : (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    xlog(2, "xq: host time in the interposer: %llu calls through the gate, %.1f ms in all, %.0f ns a call (%.0f before the "
            "driver call, %.0f after); %llu deferred, %.1f ms, %.0f ns a call; calls under 200 ns %llu, 500 ns %llu, 1 us %llu, "
            "2 us %llu, 5 us %llu, 10 us %llu, 50 us %llu, longer %llu; not counted: waits to launch %.1f ms, deferred launches "
            "made on the way %.1f ms; our threads' CPU: %s; the process's CPU %.1f ms",
         (unsigned long long)n, (pre + post) / 1e6, n ? (double)(pre + post) / n : 0.0, n ? (double)pre / n : 0.0,
         n ? (double)post / n : 0.0, (unsigned long long)nd, def / 1e6, nd ? (double)def / nd : 0.0,
         (unsigned long long)LD(&g_ht_by[0]), (unsigned long long)LD(&g_ht_by[1]), (unsigned long long)LD(&g_ht_by[2]),
         (unsigned long long)LD(&g_ht_by[3]), (unsigned long long)LD(&g_ht_by[4]), (unsigned long long)LD(&g_ht_by[5]),
         (unsigned long long)LD(&g_ht_by[6]), (unsigned long long)LD(&g_ht_by[7]), LD(&g_ht_wait) / 1e6,
         LD(&g_ht_drain) / 1e6, threads[0] ? threads : "none", cpu);
    if (LD(&g_ht_wait))
        xlog(2, "xq: waits to launch by what held the call first: the gate %.1f ms, a limit %.1f ms, a guard for an arrival %.1f ms, "
                "deferred launches ahead on its stream %.1f ms, a full deferral queue %.1f ms, the process's deferred launches "
                "(a call that cannot be deferred) %.1f ms",
             LD(&g_ht_why[1]) / 1e6, LD(&g_ht_why[2]) / 1e6, LD(&g_ht_why[4]) / 1e6, LD(&g_ht_why[3]) / 1e6,
             LD(&g_ht_why[5]) / 1e6, LD(&g_ht_why[0]) / 1e6);
    char line[1400];
    size_t len = 0;
    for (int i = 0; i < HT_IDS && len < sizeof line - 160; i++) {
        uint64_t k = LD(&g_ht_id_n[i]);
        if (!k) continue;
        int w = snprintf(line + len, sizeof line - len, "%s%s %llu, %.0f + %.0f ns (over 50 us: %llu)", len ? "; " : "",
                         xqc_entry_name(i), (unsigned long long)k, (double)LD(&g_ht_id_pre[i]) / k,
                         (double)LD(&g_ht_id_post[i]) / k, (unsigned long long)LD(&g_ht_id_long[i]));
        if (w > 0) len += (size_t)w < sizeof line - len ? (size_t)w : sizeof line - len - 1;
    }
    if (len) xlog(2, "xq: host time by entry point (calls, ns a call before + after the driver call; deferred ones all before): %s", line);
    len = 0;
    for (int i = 0; i < HT_IDS && len < sizeof line - 160; i++) {
        uint64_t k = LD(&g_ht_id_nwait[i]);
        if (!k) continue;
        int w = snprintf(line + len, sizeof line - len, "%s%s %llu, %.1f ms", len ? "; " : "", xqc_entry_name(i),
                         (unsigned long long)k, LD(&g_ht_id_wait[i]) / 1e6);
        if (w > 0) len += (size_t)w < sizeof line - len ? (size_t)w : sizeof line - len - 1;
    }
    if (len) xlog(2, "xq: waits to launch by entry point (calls that waited, the time in all): %s", line);
    fw_summary(line, sizeof line);
    len = 0;
    for (int i = 0; i < HP_COUNT && len < sizeof line - 200; i++) {
        uint64_t k = LD(&g_hp_n[i]);
        if (!k) continue;
        int w = snprintf(line + len, sizeof line - len, "%s%s %llu, %.0f ns each, %llu over 50 us, longest %.1f us", len ? "; " : "",
                         hp_name[i], (unsigned long long)k, (double)LD(&g_hp_ns[i]) / k, (unsigned long long)LD(&g_hp_long[i]),
                         LD(&g_hp_max[i]) / 1e3);
        if (w > 0) len += (size_t)w < sizeof line - len ? (size_t)w : sizeof line - len - 1;
    }
    if (len) xlog(2, "xq: host time in our own system and driver calls (on any thread): %s", line);
}

void xqc_defer_summary(void)
{
    if (xq_log_level < 2) return;
    for (xstream *st = LD(&xqc_all); st; st = st->next_all) {
        mu_lock(&st->mu);
        if (st->launched)
            xlog(2, "xq: stream %s: %llu launched, %llu marks, %llu idle queries, estimate %.1f us, refused by threshold %llu, "
                    "window %llu, no estimate %llu, arrival guard %llu of %llu; nothing in flight with work waiting: held by the node "
                    "%.1f ms, refused by the arrival guard %.1f ms, other (dry) %.1f ms; the process stopped meanwhile %.1f ms (not counted above)",
                 st->label, (unsigned long long)st->launched, (unsigned long long)st->marks,
                 (unsigned long long)st->queries, st->estimate_ns / 1e3, (unsigned long long)st->why_thr,
                 (unsigned long long)st->why_win, (unsigned long long)st->why_est, (unsigned long long)st->why_guard,
                 (unsigned long long)st->guard_seen, st->wait_held_ns / 1e6, st->wait_guarded_ns / 1e6, st->dry_ns / 1e6,
                 st->wait_stopped_ns / 1e6);
        if (st->launched && (st->narrowed || xqc_narrow))
            xlog(2, "xq: stream %s: %llu launches narrowed (green contexts%s), widest recent launch %u multiprocessors, "
                    "estimate at the whole device %.1f us", st->label,
                 (unsigned long long)st->narrowed, LD(&xqc_narrow_state) < 0 ? "; stopped after a failure" : "",
                 (unsigned)(st->w_cur > st->w_prev ? st->w_cur : st->w_prev), st->est_full / 1e3);
        if (st->launched && (st->stall_guards || st->stall_holds || st->stall_off))
            xlog(2, "xq: stream %s: level 2 (XQ_STALL=1): %llu launches guarded, %llu holds on the device%s", st->label,
                 (unsigned long long)st->stall_guards, (unsigned long long)st->stall_holds,
                 st->stall_off ? "; off: no word or a failed wait" : "");
        if (st->unstuck)
            xlog(2, "xq: stream %s: let go by the watchdog %u times (another stream of the process, let launch, saw no work end "
                    "for XQ_UNSTICK_MS)", st->label, st->unstuck);
        if (st->launched)
            xlog(2, "xq: stream %s: launches by estimate: %llu under 100 us, %llu under 300 us, %llu under 1 ms, %llu longer",
                 st->label, (unsigned long long)st->by_est[0], (unsigned long long)st->by_est[1],
                 (unsigned long long)st->by_est[2], (unsigned long long)st->by_est[3]);
        if (st->launched)
            xlog(2, "xq: stream %s: timed samples %llu (due but not taken %llu)%s", st->label, (unsigned long long)st->timed,
                 (unsigned long long)st->smp_skip, !xqc_timed ? "; XQ_ESTIMATES=batch" : st->smp_off ? "; timing failed: batch estimates" : "");
        if (st->launched)
            xlog(2, "xq: stream %s: estimated work launched %.1f ms, measured %.1f ms; launches made with work left "
                    "0: %llu, <10 us: %llu, <50 us: %llu, <100 us: %llu, <200 us: %llu, more: %llu",
                 st->label, st->est_sum / 1e6, st->run_ns / 1e6, (unsigned long long)st->left_at[0],
                 (unsigned long long)st->left_at[1], (unsigned long long)st->left_at[2],
                 (unsigned long long)st->left_at[3], (unsigned long long)st->left_at[4],
                 (unsigned long long)st->left_at[5]);
        if (st->nleft) {
            qsort(st->left_us, st->nleft, sizeof st->left_us[0], xqc_cmp_u32);
            uint32_t n = st->nleft;
            xlog(2, "xq: stream %s: gate closed %u times, %u with work in flight; work left then P50 %u us, P90 %u us, P99 %u us, max %u us; "
                    "arrival guard of the last launch: none %u, lapsed %u, in force and closed before its horizon %u, past it %u",
                 st->label, st->closes, n, st->left_us[n / 2], st->left_us[n * 9 / 10], st->left_us[n * 99 / 100], st->left_us[n - 1],
                 st->close_guard[0], st->close_guard[1], st->close_guard[2], st->close_guard[3]);
        }
        if (st->pads_up || st->pads_late)
            xlog(2, "xq: stream %s: guard pad %.1f us at exit (raised at %u closes with work past a horizon, worn at %u kept clear); "
                    "%u ends seen over %u us past the horizon not learnt from (the process stopped, or its tracker not run)",
                 st->label, st->pad_ns / 1e3, st->pads_up, st->pads_down, st->pads_late, (unsigned)(PAD_STALE_NS / 1000));
        if (st->ndrain || st->nreopen) {
            /* what a tenant the node preferred really waited behind once the gate closed: the work
             * in flight then, until its end was seen (the tracker's look: tens of us late at most) */
            uint32_t n = st->ndrain;
            if (n) {
                qsort(st->drain_us, n, sizeof st->drain_us[0], xqc_cmp_u32);
                qsort(st->over_us, n, sizeof st->over_us[0], cmp_i32);
                xlog(2, "xq: stream %s: drained after %u of those closes (%u opened again first): took P50 %u us, P90 %u us, P99 %u us, "
                        "max %u us; past the work estimated left by P50 %d us, P90 %d us, max %d us",
                     st->label, n, st->nreopen, st->drain_us[n / 2], st->drain_us[n * 9 / 10], st->drain_us[n * 99 / 100],
                     st->drain_us[n - 1], st->over_us[n / 2], st->over_us[n * 9 / 10], st->over_us[n - 1]);
            } else {
                xlog(2, "xq: stream %s: drained after 0 of those closes (%u opened again first)", st->label, st->nreopen);
            }
        }
        if (st->nunguarded) {
            qsort(st->unguarded_us, st->nunguarded, sizeof st->unguarded_us[0], xqc_cmp_u32);
            uint32_t n = st->nunguarded;
            xlog(2, "xq: stream %s: closes with no guard: a launch last went under one P10 %u us, P50 %u us, P90 %u us before", st->label,
                 st->unguarded_us[n / 10], st->unguarded_us[n / 2], st->unguarded_us[n * 9 / 10]);
        }
        if (st->nlapse) {
            qsort(st->lapse_us, st->nlapse, sizeof st->lapse_us[0], xqc_cmp_u32);
            uint32_t n = st->nlapse;
            xlog(2, "xq: stream %s: gate closed after a lapsed guard's until by P10 %u us, P50 %u us, P90 %u us, max %u us", st->label,
                 st->lapse_us[n / 10], st->lapse_us[n / 2], st->lapse_us[n * 9 / 10], st->lapse_us[n - 1]);
        }
        mu_unlock(&st->mu);
    }
    if (xq_log_level >= 3) {
        /* the timeline: CLOCK_MONOTONIC (every process's) and the wall clock read together */
        struct timespec r;
        clock_gettime(CLOCK_REALTIME, &r);
        xlog(3, "xq: timeline clock: monotonic %llu ns, realtime %llu ns", (unsigned long long)now_ns(),
             (unsigned long long)r.tv_sec * 1000000000ull + (unsigned long long)r.tv_nsec);
        for (xstream *st = LD(&xqc_all); st; st = st->next_all) {
            mu_lock(&st->mu);
            for (uint32_t i = 0; i < st->ntl; i++) {
                const tl_entry *t = &st->tl[i];
                xlog(3, "xq: timeline %s: launched %llu, from %llu, end %llu, estimate %llu, horizon %llu, commands %u, width %u/1024",
                     st->label, (unsigned long long)t->t_launch, (unsigned long long)t->from, (unsigned long long)t->end,
                     (unsigned long long)t->est, (unsigned long long)t->hz, t->count, t->scale);
            }
            for (uint32_t i = 0; i < st->narr; i++)
                xlog(3, "xq: arrivals %s: arrived %llu, idle %llu, width %u of %u", st->label, (unsigned long long)st->arr[i].arrived,
                     (unsigned long long)st->arr[i].idle, XQ_WIDTH_WIDEST(st->arr[i].width), XQ_WIDTH_SMS(st->arr[i].width));
            mu_unlock(&st->mu);
        }
    }
    uint64_t naps = xqc_nap[0] + xqc_nap[1] + xqc_nap[2] + xqc_nap[3] + xqc_nap[4];
    if (naps)
        xlog(2, "xq: tracker naps %llu (quick, for launchers waiting on a limit: %llu), ended late by <10 us: %llu, <50 us: %llu, "
                "<100 us: %llu, <500 us: %llu, more: %llu; mean %.1f us late",
             (unsigned long long)naps, (unsigned long long)xqc_nap_quick, (unsigned long long)xqc_nap[0], (unsigned long long)xqc_nap[1],
             (unsigned long long)xqc_nap[2], (unsigned long long)xqc_nap[3], (unsigned long long)xqc_nap[4],
             xqc_nap_late / 1e3 / naps);
    ht_summary();
    xqc_told_summary();
    xqc_waits_summary();
    if (LD(&xqc_stubs_ok) <= 0) return;
    if (LD(&xqc_nodefer[ND_EXTRA]) + LD(&xqc_nodefer[ND_UNKNOWN]) + LD(&xqc_nodefer[ND_LAYOUT]) + LD(&xqc_nodefer[ND_BIG]))
        xlog(2, "xq: kernel launches that could not be deferred: a function not launched before %llu, its parameters' layout "
                "unknown %llu, its packed parameters over 32 KiB %llu, an extra list of another kind %llu",
             (unsigned long long)LD(&xqc_nodefer[ND_UNKNOWN]), (unsigned long long)LD(&xqc_nodefer[ND_LAYOUT]),
             (unsigned long long)LD(&xqc_nodefer[ND_BIG]), (unsigned long long)LD(&xqc_nodefer[ND_EXTRA]));
    xlog(2, "xq: %llu launches deferred; %llu driver calls waited for deferred work", (unsigned long long)xqc_deferred_total,
         (unsigned long long)xqc_flush_waits);
    for (uint32_t i = 0; i < xqc_nstubs; i++)
        if (xqc_stub_waits[i])
            xlog(2, "xq:   %s waited %u times, %.1f ms in all, longest %.2f ms", xqc_stub_name[i] ? xqc_stub_name[i] : "?",
                 xqc_stub_waits[i], xqc_stub_wait_ns[i] / 1e6, xqc_stub_wait_max[i] / 1e6);
    xqc_kset_summary();
}
