/*
 * cuda_diag.c: diagnostics: the XQ_LOG=2 summary printed at exit (per stream, the tracker's naps,
 * the entry points that waited for deferred work).
 */
#include "cuda_int.h"

void xqc_defer_summary(void)
{
    if (xq_log_level < 2) return;
    for (xstream *st = LD(&xqc_all); st; st = st->next_all) {
        pthread_mutex_lock(&st->mu);
        if (st->launched)
            xlog(2, "xq: stream %s: %llu launched, %llu marks, %llu idle queries, estimate %.1f us, refused by threshold %llu, "
                    "window %llu, no estimate %llu, arrival guard %llu of %llu; nothing in flight with work waiting: held by the node "
                    "%.1f ms, refused by the arrival guard %.1f ms, other (dry) %.1f ms",
                 st->label, (unsigned long long)st->launched, (unsigned long long)st->marks,
                 (unsigned long long)st->queries, st->estimate_ns / 1e3, (unsigned long long)st->why_thr,
                 (unsigned long long)st->why_win, (unsigned long long)st->why_est, (unsigned long long)st->why_guard,
                 (unsigned long long)st->guard_seen, st->wait_held_ns / 1e6, st->wait_guarded_ns / 1e6, st->dry_ns / 1e6);
        if (st->launched && (st->narrowed || xqc_narrow))
            xlog(2, "xq: stream %s: %llu launches narrowed (green contexts%s), widest recent launch %u multiprocessors, "
                    "estimate at the whole device %.1f us", st->label,
                 (unsigned long long)st->narrowed, LD(&xqc_narrow_state) < 0 ? "; stopped after a failure" : "",
                 st->w_cur > st->w_prev ? st->w_cur : st->w_prev, st->est_full / 1e3);
        if (st->launched && (st->stall_guards || st->stall_holds || st->stall_off))
            xlog(2, "xq: stream %s: level 2 (XQ_STALL=1): %llu launches guarded, %llu holds on the device%s", st->label,
                 (unsigned long long)st->stall_guards, (unsigned long long)st->stall_holds,
                 st->stall_off ? "; off: no word or a failed wait" : "");
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
        pthread_mutex_unlock(&st->mu);
    }
    if (xq_log_level >= 3) {
        /* the timeline: CLOCK_MONOTONIC (every process's) and the wall clock read together */
        struct timespec r;
        clock_gettime(CLOCK_REALTIME, &r);
        xlog(3, "xq: timeline clock: monotonic %llu ns, realtime %llu ns", (unsigned long long)now_ns(),
             (unsigned long long)r.tv_sec * 1000000000ull + (unsigned long long)r.tv_nsec);
        for (xstream *st = LD(&xqc_all); st; st = st->next_all) {
            pthread_mutex_lock(&st->mu);
            for (uint32_t i = 0; i < st->ntl; i++) {
                const tl_entry *t = &st->tl[i];
                xlog(3, "xq: timeline %s: launched %llu, from %llu, end %llu, estimate %llu, horizon %llu, commands %u, width %u/1024",
                     st->label, (unsigned long long)t->t_launch, (unsigned long long)t->from, (unsigned long long)t->end,
                     (unsigned long long)t->est, (unsigned long long)t->hz, t->count, t->scale);
            }
            for (uint32_t i = 0; i < st->narr; i++)
                xlog(3, "xq: arrivals %s: arrived %llu, idle %llu", st->label, (unsigned long long)st->arr[i].arrived,
                     (unsigned long long)st->arr[i].idle);
            pthread_mutex_unlock(&st->mu);
        }
    }
    uint64_t naps = xqc_nap[0] + xqc_nap[1] + xqc_nap[2] + xqc_nap[3] + xqc_nap[4];
    if (naps)
        xlog(2, "xq: tracker naps %llu, ended late by <10 us: %llu, <50 us: %llu, <100 us: %llu, <500 us: %llu, more: %llu; "
                "mean %.1f us late",
             (unsigned long long)naps, (unsigned long long)xqc_nap[0], (unsigned long long)xqc_nap[1],
             (unsigned long long)xqc_nap[2], (unsigned long long)xqc_nap[3], (unsigned long long)xqc_nap[4],
             xqc_nap_late / 1e3 / naps);
    if (LD(&xqc_stubs_ok) <= 0) return;
    xlog(2, "xq: %llu launches deferred; %llu driver calls waited for deferred work", (unsigned long long)xqc_deferred_total,
         (unsigned long long)xqc_flush_waits);
    for (uint32_t i = 0; i < xqc_nstubs; i++)
        if (xqc_stub_waits[i])
            xlog(2, "xq:   %s waited %u times, %.1f ms in all, longest %.2f ms", xqc_stub_name[i] ? xqc_stub_name[i] : "?",
                 xqc_stub_waits[i], xqc_stub_wait_ns[i] / 1e6, xqc_stub_wait_max[i] / 1e6);
    xqc_kset_summary();
}
