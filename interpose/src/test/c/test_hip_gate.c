/* test_hip_gate.c: the launch gate: held and released launches, threshold, nested entry points, failed launches. */
#define _GNU_SOURCE
#include "test_hip.h"

static void gate_test(const char *stream)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "2", "--kernels", "2", "--us", "500", "--stream", stream, NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s, "no STREAM");
    if (!s) {
        finish(&a, 1);
        return;
    }
    CHECK(wait_until(s, one_pending, 2.0), "pending %u, want 1", s->pending);
    pause_s(0.33); /* not a multiple of the 100 ms wait: GATE must be what wakes it */
    CHECK(LD(&s->pending) == 1 && LD(&s->launched) == 0 && LD(&s->in_flight) == 0 && !exited(&a),
          "while held: pending %u launched %lu", s->pending, (unsigned long)s->launched);
    char wake[32], gate[32];
    snprintf(wake, sizeof wake, "WAKE %d", slot);
    CHECK(tn_count(0, wake) >= 1, "no WAKE when the thread was held");
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    snprintf(gate, sizeof gate, "GATE %d", slot);
    double t0 = tn_now();
    tn_send(0, gate);
    int went = wait_until(s, some_launched, 1.0);
    CHECK(went && tn_now() - t0 < 0.05, "released after %.1f ms", (tn_now() - t0) * 1000);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
}

void test_gate_explicit(void) { gate_test("new"); }
void test_gate_null_stream(void) { gate_test("default"); }

static int g_max_in_flight;
void test_threshold(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 2, 1, 0);
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "3", "--kernels", "8", "--us", "3000", "--check", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    g_max_in_flight = 0;
    while (s && !exited(&a)) {
        int n = (int)LD(&s->in_flight);
        if (n > g_max_in_flight) g_max_in_flight = n;
        pause_s(0.0003);
    }
    CHECK(finish(&a, 20) && a.status == 0 && strstr(slurp(a.out), "\"check\":\"ok\""), "exit %d: %s %s", a.status,
          slurp(a.out), slurp(a.err));
    CHECK(s && g_max_in_flight == 2 && s->launched == 36, "most in flight %d (threshold 2), launched %lu", g_max_in_flight,
          s ? (unsigned long)s->launched : 0);
}

/* A runtime whose entry points call each other through the PLT: hipMemcpyWithStream reaches the
 * hipMemcpyAsync wrapper from inside the hipMemcpyWithStream one. Counted once; under a threshold
 * of 1 the inner call must not wait for the outer call's own slot (it did: forever). */
void test_nested_entry_points(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 1, 1, 0);
    app a;
    start(&a, (const char *[]){"XQ_HIPDOUBLE_PLT=1", NULL},
          (const char *[]){"--tasks", "3", "--kernels", "2", "--us", "500", "--copy-with-stream", "--check", NULL});
    CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "\"check\":\"ok\""), "exit %d: %s %s", a.status,
          slurp(a.out), slurp(a.err));
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && s->launched == 18 && s->completed == 18, "launched %lu completed %lu (want 18: the inner call not counted)",
          s ? (unsigned long)s->launched : 0, s ? (unsigned long)s->completed : 0);
}

void test_failed_launches(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, NULL, (const char *[]){"--fail", "3", "--tasks", "1", "--linger-ms", "200", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && s->failed == 3 && s->launched == 6 && s->completed == 6 && s->in_flight == 0,
          "failed %lu launched %lu", s ? (unsigned long)s->failed : 0, s ? (unsigned long)s->launched : 0);
}

/* The arrival guard's pad, as the CUDA interposer's (test_cuda_gate.c, test_guard_pad): 2 ms
 * kernels, every third one 6 ms (--slow-every 3 --slow-us 4000; the stream's estimate, its recent
 * average, 2.5-4 ms), under a 6 ms window. The test, as the node, foresees another queue's arrival
 * 10 ms ahead PAD_ROUNDS (240) times over, closes the gate 0.3 ms past that horizon (the node's reaction) and
 * lifts the guard, and opens the gate again once the work has ended. A command admitted to end by
 * the horizon by its estimate runs past it now and then (12-22 rounds of 60 here; on a loaded 2-vCPU CI VM the counts' noise was as large as the effect: nine against
 * nine of 60, eight against thirteen of 90, each passing its second try; at 120 rounds a quiet VM read 19 against 27, at the bound, and
 * beside a busy loop 30 against 29 and 26 against 31 in two tries of three); the pad learns how far and keeps that much more clear. Counted: the closes that found
 * work still in flight, over the first and the last half of the rounds. XQ_GUARD_PAD=0: none learnt, the
 * same rounds. stop: at each close that finds work in flight, the process is stopped 30 ms (its
 * ends seen past PAD_STALE_NS: not learnt). */
static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}
static int hip_completed_5(xq_slot *s) { return LD(&s->completed) >= 5; }
static int hip_none_in_flight(xq_slot *s) { return LD(&s->in_flight) == 0; }
static int hip_in_flight_some(xq_slot *s) { return LD(&s->in_flight) > 0; }

#define PAD_ROUNDS 240

static void hip_pad_rounds(int on, int stop, unsigned *late_first, unsigned *late_last, unsigned *stops, const char **err)
{
    *stops = 0;
    *late_first = *late_last = 0;
    tn_start(SOCK, 16);
    tn_defaults(0, 0, 0, 6000);
    app a;
    start(&a, on ? (const char *[]){"XQ_LOG=2", NULL} : (const char *[]){"XQ_LOG=2", "XQ_GUARD_PAD=0", NULL},
          (const char *[]){"--tasks", "1", "--kernels", "1200", "--us", "2000", "--slow-every", "3", "--slow-us", "4000", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, hip_completed_5, 5.0), "no 5 completions");
    if (!s) {
        finish(&a, 1);
        return;
    }
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    for (int r = 0; r < PAD_ROUNDS; r++) {
        uint64_t hz = mono_ns() + 10000000ull, until = hz + 5000000ull;
        __atomic_store_n(&s->guard_until_ns, until, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->horizon_ns, hz, __ATOMIC_SEQ_CST);
        while (mono_ns() < hz + 300000ull)
            ;
        __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
        unsigned n = LD(&s->in_flight);
        if (stop && n) {
            pause_s(0.0003); /* its tracker sees the close first */
            if (LD(&s->in_flight)) {
                kill(a.pid, SIGSTOP);
                pause_s(0.030);
                kill(a.pid, SIGCONT);
                (*stops)++;
            }
        }
        __atomic_store_n(&s->horizon_ns, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->guard_until_ns, 0, __ATOMIC_SEQ_CST);
        CHECK(wait_until(s, hip_none_in_flight, 1.0), "round %d: still %u in flight 1 s after the close", r, LD(&s->in_flight));
        if (getenv("PAD_DEBUG"))
            printf("    round %d: %u in flight at the close, all ended %.2f ms past the horizon, estimate %.0f us\n", r, n, ((double)mono_ns() - (double)hz) / 1e6, (double)LD(&s->estimate_ns) / 1e3);
        if (n) {
            if (r < PAD_ROUNDS / 2) (*late_first)++;
            else (*late_last)++;
        }
        pause_s(0.001);
        __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
        tn_send(0, gate);
        CHECK(wait_until(s, hip_in_flight_some, 1.0), "round %d: nothing launched after the gate opened", r);
        pause_s(0.004); /* a window's worth in flight again */
    }
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    *err = slurp(a.err);
}

void test_hip_guard_pad(void)
{
    unsigned off_first, off_last, on_first, on_last, stops;
    const char *err = "";
    hip_pad_rounds(0, 0, &off_first, &off_last, &stops, &err);
    CHECK(!strstr(err, "guard pad "), "XQ_GUARD_PAD=0 and a pad learnt: %s", err);
    hip_pad_rounds(1, 0, &on_first, &on_last, &stops, &err);
    double pad = -1;
    unsigned up = 0, down = 0;
    const char *p = strstr(err, "guard pad ");
    CHECK(p && sscanf(p, "guard pad %lf us at exit (raised at %u closes with work past a horizon, worn at %u kept clear)", &pad, &up,
                      &down) == 3, "no pad line: %s", err);
    printf("    work in flight at the close, rounds 1-%d / %d-%d: without the pad %u / %u, with it %u / %u "
           "(pad %.0f us at exit, raised %u times, worn %u)\n", PAD_ROUNDS / 2, PAD_ROUNDS / 2 + 1, PAD_ROUNDS, off_first, off_last, on_first, on_last, pad, up, down);
    /* the runs would be alike without the pad: it must have work past the horizon to learn from */
    CHECK(off_first + off_last >= 6, "without the pad only %u of %d closes found work in flight (the test needs overruns)",
          off_first + off_last, PAD_ROUNDS);
    /* raised at the closes with work past the horizon (no more than there were), worn at the
     * others, and bounded */
    CHECK(up >= 1 && up <= on_first + on_last && pad > 0 && pad <= 1000, "pad %.0f us, raised %u times of %u closes with work "
          "(want raised, at most that often, at most 1000 us)", pad, up, on_first + on_last);
    CHECK(down >= 1, "the pad was never worn down by a close the guard kept clear (%u)", down);
    /* its effect: about half the closes with work in flight, or fewer (three runs of 60 on the build
     * VM: 4 against 12, 5 against 22, 7 against 18); asked for: two thirds at most, give or take
     * one for the noise of small counts (a pad that does nothing reads as many as without) */
    CHECK((on_first + on_last) * 3 <= (off_first + off_last) * 2 + 3, "with the pad %u of %d closes found work in flight, without it %u",
          on_first + on_last, PAD_ROUNDS, off_first + off_last);
}

void test_hip_guard_pad_stopped(void)
{
    unsigned first, last, stops;
    const char *err = "";
    hip_pad_rounds(1, 1, &first, &last, &stops, &err);
    double pad = -1;
    unsigned up = 0, down = 0, late = 0, limit = 0;
    const char *p = strstr(err, "guard pad ");
    CHECK(p && sscanf(p, "guard pad %lf us at exit (raised at %u closes with work past a horizon, worn at %u kept clear); "
                         "%u ends seen over %u us past the horizon",
                      &pad, &up, &down, &late, &limit) == 5, "no pad line: %s", err);
    printf("    closes with work in flight %u, stopped 30 ms with it still in flight %u; pad %.0f us at exit, raised %u times, "
           "ends seen late %u\n", first + last, stops, pad, up, late);
    CHECK(stops >= 2, "only %u of %d closes stopped with work in flight (the test needs them)", stops, PAD_ROUNDS);
    CHECK(late >= 1 && late <= stops, "%u ends seen late (want 1 to %u, the stops)", late, stops);
    CHECK(limit == 10000, "the line names %u us as the limit (want 10000)", limit);
    CHECK(up + late <= first + last && pad <= 1000, "pad %.0f us, raised %u times, %u ends late, of %u closes with work in "
          "flight (want at most that many, and 1000 us at most)", pad, up, late, first + last);
}

/* A window bounds a stream's work from its first launch: before its first measured end, each
 * command counts a whole window (as the CUDA interposer's kinds not measured yet). Counted as
 * nothing, a program's first hundreds of launches went in at once past any window (600 of 2 ms
 * kernels in flight under a 6 ms window, before this). */
static int hip_launched_some(xq_slot *s) { return LD(&s->launched) >= 1; }

void test_hip_window_before_first_estimate(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 0, 0, 6000);
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "1", "--kernels", "200", "--us", "2000", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, hip_launched_some, 5.0), "nothing launched");
    if (!s) {
        finish(&a, 1);
        return;
    }
    unsigned most = 0;
    for (int i = 0; i < 200; i++) { /* 20 ms: the first ends and a few after */
        unsigned n = LD(&s->in_flight);
        if (n > most) most = n;
        if (getenv("WIN_DEBUG") && i % 10 == 0)
            printf("    %d: in flight %u, launched %lu, completed %lu, estimate %.0f us\n", i, n, (unsigned long)LD(&s->launched),
                   (unsigned long)LD(&s->completed), LD(&s->estimate_ns) / 1e3);
        pause_s(0.0001);
    }
    printf("    most in flight over the first 20 ms: %u (window 6 ms, kernels 2 ms)\n", most);
    /* a few kernels and the copies before them: 2-3 in five runs since copies and kernels are
     * estimated apart (session 74); with one estimate for both, started from the short copies, the
     * 2 ms kernels went in as short ones until their ends came back (4-7 on the build VM, 18-42 on
     * a slower day of it); about 200 before a command counted a whole window */
    CHECK(most <= 8, "%u commands in flight under a 6 ms window of 2 ms kernels (want 8 at most)", most);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
}

static int hip_busy(xq_slot *s) { return LD(&s->in_flight) > 0; }
static int hip_held(xq_slot *s) { return LD(&s->pending) > 0; }

/* The watchdog (hip_tracker.c): A waits on the device for a word B writes after a launch, and the
 * node holds B behind busy A (a priority), B's thread held in that launch: with XQ_UNSTICK_MS=0
 * still running after 1.5 s (the case is real); with the watchdog (200 ms here) B is let go and
 * the program ends, saying so on stderr. */
void test_hip_unstick_value_link(void)
{
    for (int m = 0; m < 2; m++) {
        int off = m == 1;
        tn_start(SOCK, 16);
        app a;
        start(&a, (const char *[]){off ? "XQ_UNSTICK_MS=0" : "XQ_UNSTICK_MS=200", NULL}, (const char *[]){"--value-link", NULL});
        int sa = stream_slot(0, 0, NULL, 0), sb = stream_slot(0, 1, NULL, 0);
        xq_slot *A = sa >= 0 ? tn_slot(0, (unsigned)sa) : NULL, *B = sb >= 0 ? tn_slot(0, (unsigned)sb) : NULL;
        CHECK(A && B && wait_until(A, hip_busy, 3.0), "two streams not registered, or A not busy (slots %d %d)", sa, sb);
        if (!A || !B) return (void)finish(&a, 1);
        __atomic_store_n(&B->gate, 1, __ATOMIC_SEQ_CST); /* B held behind busy A */
        CHECK(wait_until(B, hip_held, 3.0), "B's launch not held");
        double t0 = tn_now();
        while (!exited(&a) && tn_now() < t0 + (off ? 1.5 : 5)) pause_s(0.01);
        if (off)
            CHECK(!exited(&a), "XQ_UNSTICK_MS=0: ended by itself in %.2f s (the case did not arise)", tn_now() - t0);
        else
            CHECK(exited(&a), "still running 5 s with B held behind busy A");
        __atomic_store_n(&B->gate, 0, __ATOMIC_SEQ_CST);
        char g[32];
        snprintf(g, sizeof g, "GATE %d", sb);
        tn_send(0, g);
        CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
        if (!off) CHECK(strstr(slurp(a.err), "let go though the node holds it") != NULL, "the watchdog said nothing: %s", slurp(a.err));
        CHECK(off ? tn_count(0, "UNSTUCK ") == 0 : tn_count(0, "UNSTUCK ") >= 1, "%d UNSTUCK lines to the node", tn_count(0, "UNSTUCK "));
    }
}
