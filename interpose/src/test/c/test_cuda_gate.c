/* test_cuda_gate.c: the launch gate: held launches, WAKE, threshold, batch, window (by kind too), the arrival guard. */
#define _GNU_SOURCE
#include "test_cuda.h"

/* gate closed: the launch blocks (pending counted, WAKE sent); gate opened + GATE: it goes on */
static void gate_test(const char *const *args)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, (const char *[]){"XQ_LOG=2", NULL}, args);
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
          "while held: pending %u launched %lu in_flight %u", s->pending, (unsigned long)s->launched, s->in_flight);
    CHECK(LD(&s->ready_since_ns) > 0, "ready_since not set while held");
    char wake[32];
    snprintf(wake, sizeof wake, "WAKE %d", slot);
    CHECK(tn_count(0, wake) >= 1, "no WAKE when the thread was held");
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    double t0 = tn_now();
    tn_send(0, gate);
    int went = wait_until(s, some_launched, 1.0);
    double dt = tn_now() - t0;
    CHECK(went && dt < 0.02, "released after %.1f ms", dt * 1000);
    printf("    released %.2f ms after GATE\n", dt * 1000);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    /* XQ_LOG=2: the 330 ms it was held with nothing in flight are the node's, not the guard's */
    double held = -1, guarded = -1, dry = -1;
    const char *p = strstr(slurp(a.err), "nothing in flight with work waiting: ");
    CHECK(p && sscanf(p, "nothing in flight with work waiting: held by the node %lf ms, refused by the arrival guard %lf ms, "
                         "other (dry) %lf ms", &held, &guarded, &dry) == 3, "no wait summary: %s", slurp(a.err));
    CHECK(held >= 320 && held < 2000 && guarded == 0, "held %.1f ms (want the 330 it was held), guarded %.1f ms, dry %.1f ms",
          held, guarded, dry);
    /* XQ_LOG=2: the host time in the interposer counts every gated call and leaves the 330 ms held
     * out (a wait to launch where the call blocks; a deferred call returns at once) */
    unsigned long long calls = 0, deferred = 0;
    double all = -1, per = -1, waits = -1, drained = -1;
    p = strstr(slurp(a.err), "host time in the interposer: ");
    CHECK(p && sscanf(p, "host time in the interposer: %llu calls through the gate, %lf ms in all, %lf ns a call", &calls, &all,
                      &per) == 3, "no host time summary: %s", slurp(a.err));
    const char *d = p ? strstr(p, " deferred, ") : NULL;
    while (d && d > p && d[-1] != ' ') d--; /* back to the count */
    CHECK(d && sscanf(d, "%llu deferred", &deferred) == 1, "no deferred count: %s", p ? p : "");
    const char *w = p ? strstr(p, "not counted: waits to launch ") : NULL;
    CHECK(w && sscanf(w, "not counted: waits to launch %lf ms, deferred launches made on the way %lf ms", &waits, &drained) == 2,
          "no waits: %s", p ? p : "");
    CHECK(p && strstr(p, "our threads' CPU: ") && strstr(p, "reader ") && strstr(p, "the process's CPU "),
          "no thread CPU: %s", p ? p : "");
    CHECK(calls + deferred >= 4 && all >= 0 && all < 50, "%llu calls, %llu deferred, %.1f ms in all (want the 4 launches, the held "
          "330 ms left out)", calls, deferred, all);
    CHECK(deferred >= 1 || (waits >= 320 && waits < 2000), "waits to launch %.1f ms and %llu deferred, want the 330 ms held "
          "as a wait, or the held launch deferred", waits, deferred);
    double by_gate = -1;
    const char *b = strstr(slurp(a.err), "waits to launch by what held the call first: ");
    if (waits >= 320)
        CHECK(b && sscanf(b, "waits to launch by what held the call first: the gate %lf ms", &by_gate) == 1 &&
              by_gate >= 320 && by_gate <= waits + 0.1, "the wait not put on the gate: %s", b ? b : slurp(a.err));
    /* by entry point: the launches counted under cuLaunchKernel or cuLaunchKernelEx (every gated
     * call is a launch here) */
    unsigned long long by_launch = 0;
    const char *e = strstr(slurp(a.err), "host time by entry point (");
    const char *l = e ? strstr(e, "cuLaunchKernel") : NULL;
    l = l ? strchr(l, ' ') : NULL;
    CHECK(l && sscanf(l, " %llu,", &by_launch) == 1 && by_launch >= 1 &&
              by_launch <= calls + deferred, "no account by entry point, or launches %llu against %llu calls + %llu deferred: %s",
          by_launch, calls, deferred, e ? e : slurp(a.err));
    /* our own system calls: the lines to the node (the WAKE above at least) */
    unsigned long long lines = 0;
    const char *o = strstr(slurp(a.err), "host time in our own system and driver calls (on any thread): ");
    const char *ln = o ? strstr(o, "lines to the node ") : NULL;
    CHECK(ln && sscanf(ln, "lines to the node %llu,", &lines) == 1 && lines >= 1, "no account of our own calls: %s",
          o ? o : slurp(a.err));
    printf("    host time: %llu calls, %llu deferred, %.0f ns a call, waits %.1f ms; %llu launches by entry point, %llu lines\n",
           calls, deferred, per, waits, by_launch, lines);
}

void test_gate_direct(void)
{
    gate_test((const char *[]){"--tasks", "2", "--kernels", "2", "--us", "500", "--stream", "new", NULL});
}

void test_gate_procaddress(void)
{
    gate_test((const char *[]){"--tasks", "2", "--kernels", "2", "--us", "500", "--stream", "ptds", "--via",
                               "procaddress", "--ex", NULL});
}

void test_gate_procaddress_legacy(void)
{
    gate_test((const char *[]){"--tasks", "2", "--kernels", "2", "--us", "500", "--stream", "default", "--via",
                               "procaddress", NULL});
}

/* opened without a GATE line: the held thread finds out within its 100 ms wait */
void test_gate_silent(void)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "1", "--stream", "new", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, one_pending, 2.0), "not held");
    if (s) {
        pause_s(0.05);
        __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
        double t0 = tn_now();
        int went = wait_until(s, some_launched, 1.0);
        double dt = tn_now() - t0;
        CHECK(went && dt < 0.13, "released after %.1f ms", dt * 1000);
        printf("    released %.1f ms after a silent open\n", dt * 1000);
    }
    CHECK(finish(&a, 10) && a.status == 0, "exit %d", a.status);
}

/* XQ_LOG=2: a stream held with nothing in flight while the process is stopped (SIGSTOP: a job
 * scheduler's suspend, the mix scenario's paired reading) for 600 ms of its ~900 ms held: the
 * stop is counted apart ("the process stopped meanwhile"), not as the node's hold (session 85 read
 * a trainer's 1.5 s "held by the node" as lost time; it was one of the reading's stops). */
void test_gate_stopped(void)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, (const char *[]){"XQ_LOG=2", NULL}, (const char *[]){"--tasks", "1", "--kernels", "2", "--us", "500", "--stream", "new", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, one_pending, 2.0), "not held");
    if (!s) {
        finish(&a, 1);
        return;
    }
    pause_s(0.1);
    int stopped = kill(a.pid, SIGSTOP) == 0;
    pause_s(0.6);
    kill(a.pid, SIGCONT);
    pause_s(0.2);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    tn_send(0, gate);
    CHECK(wait_until(s, some_launched, 1.0), "nothing launched after the gate opened");
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    double held = -1, guarded = -1, dry = -1, away = -1;
    const char *p = strstr(slurp(a.err), "nothing in flight with work waiting: ");
    CHECK(stopped && p && sscanf(p, "nothing in flight with work waiting: held by the node %lf ms, refused by the arrival guard %lf ms, "
                                    "other (dry) %lf ms; the process stopped meanwhile %lf ms", &held, &guarded, &dry, &away) == 4,
          "no wait summary: %s", slurp(a.err));
    /* held ~900 ms in all: ~300 running, ~600 stopped (the reader's look that spans the stop ends
     * up to its 100 ms early of it) */
    CHECK(away >= 400 && away <= 750, "stopped %.1f ms counted apart (want about the 600 it was stopped)", away);
    CHECK(held >= 200 && held < 650, "held by the node %.1f ms (want the ~300 it was held while running)", held);
    printf("    held 900 ms, 600 of them stopped: held by the node %.1f ms, stopped %.1f ms\n", held, away);
}

/* The node hears of an arrival once its launch is made, not before: the WAKE line is a socket
 * write, and written first it delayed the work itself (FAKECUDA_CALL_US: a driver whose every
 * enqueueing call takes 30 ms of its caller's time, so that the order shows) */
void test_wake_after_launch(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 0, 0, 0);
    app a;
    start(&a, (const char *[]){"FAKECUDA_CALL_US=30000", NULL},
          (const char *[]){"--tasks", "1", "--kernels", "1", "--us", "100", "--stream", "new", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, some_launched, 5.0), "nothing launched");
    double launched = tn_now(); /* within 0.2 ms after the first launch call returned */
    char wake[32];
    snprintf(wake, sizeof wake, "WAKE %d", slot);
    int i = slot >= 0 ? tn_find(0, 0, wake, 2.0) : -1;
    CHECK(i >= 0, "no WAKE line for slot %d", slot);
    if (i >= 0) {
        double early = launched - tn_get(i).t;
        CHECK(early < 0.010, "the WAKE came %.1f ms before the launch was made", early * 1000);
        printf("    the WAKE came %.1f ms after the launch was seen made\n", -early * 1000);
    }
    CHECK(finish(&a, 10) && a.status == 0, "exit %d, stderr: %s", a.status, slurp(a.err));
}

static int some_ready(xq_slot *s)
{
    return LD(&s->ready_since_ns) != 0;
}

/* An arrival's stamp is in the slot before its first driver call returns (the node's arrival
 * watch reads it there; a request's first call can take milliseconds: a copy from pageable
 * memory, the arrival lines' P99 2.1-2.6 ms after the arrival on the H200); the counts of the
 * launch itself follow once it is made. FAKECUDA_CALL_US: every enqueueing call takes 30 ms. */
void test_stamp_before_launch(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 0, 0, 0);
    app a;
    start(&a, (const char *[]){"FAKECUDA_CALL_US=30000", NULL},
          (const char *[]){"--tasks", "1", "--kernels", "1", "--us", "100", "--stream", "new", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, some_ready, 5.0), "no ready stamp in the slot");
    double ready = tn_now();
    unsigned long launched_then = s ? (unsigned long)LD(&s->launched) : 1;
    CHECK(s && wait_until(s, some_launched, 5.0), "nothing launched");
    double launched = tn_now();
    CHECK(launched_then == 0 && launched - ready > 0.015,
          "the stamp was seen %.1f ms before the first launch was made (launched %lu then; want it seen during the 30 ms call)",
          (launched - ready) * 1000, launched_then);
    printf("    the stamp was in the slot %.1f ms before the first launch was made\n", (launched - ready) * 1000);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d, stderr: %s", a.status, slurp(a.err));
}

/* in_flight never exceeds the threshold; three threads launch on one (legacy) stream */
void test_threshold(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 2, 1, 0);
    app a;
    start(&a, NULL, (const char *[]){"--threads", "3", "--stream", "default", "--tasks", "3", "--kernels", "6",
                                      "--us", "1000", "--check", "--linger-ms", "100", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    unsigned max = 0, samples = 0;
    while (s && !exited(&a)) {
        unsigned n = LD(&s->in_flight);
        max = n > max ? n : max, samples++;
    }
    CHECK(s && finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(max == 2, "max in flight %u over %u samples, threshold 2", max, samples);
    CHECK(s && s->launched == 3 * 3 * 10 && s->completed == s->launched, "launched %lu completed %lu",
          s ? (unsigned long)s->launched : 0, s ? (unsigned long)s->completed : 0);
    /* ends were seen: the measured spans cover most of the 54 spins of 1 ms (one at a time; a
     * span starts when the previous end was seen, up to a poll late) */
    CHECK(s && s->run_ns >= 40 * 1000000ull, "run_ns %lu", s ? (unsigned long)s->run_ns : 0);
}

/* The stream's lock (xq_mu, cuda_int.h) under contention: eight threads launch on the one legacy
 * stream, open to all, with the tracker counting completions beside them; every launch is counted
 * once, launched and completed alike, and nothing is left in flight (a lock that let two threads in
 * loses increments) */
void test_stream_lock(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 0, 0, 0);
    app a;
    start(&a, NULL, (const char *[]){"--threads", "8", "--stream", "default", "--tasks", "100", "--kernels", "50",
                                      "--us", "0", "--check", "--linger-ms", "200", NULL});
    CHECK(finish(&a, 60) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    unsigned long want = 8ul * 100 * (50 + 4); /* a task: the input copy, 50 kernels, the check's kernel, the copy back, the host function */
    CHECK(s && LD(&s->launched) == want && LD(&s->completed) == want && LD(&s->failed) == 0 && LD(&s->in_flight) == 0 &&
              LD(&s->pending) == 0,
          "launched %lu completed %lu failed %lu in flight %u pending %u, want %lu launched and completed",
          s ? (unsigned long)LD(&s->launched) : 0, s ? (unsigned long)LD(&s->completed) : 0,
          s ? (unsigned long)LD(&s->failed) : 0, s ? LD(&s->in_flight) : 0, s ? LD(&s->pending) : 0, want);
}

/* threshold 4, batch 3: after reaching 4, launching resumes only at <= 1 in flight, so between
 * two peaks of 4 at least 3 commands complete (robust to samples missing the short dip) */
void test_batch(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 4, 3, 0);
    app a;
    /* 10 ms commands: a loaded machine's scheduling delays must not hide a peak from the loop below */
    start(&a, NULL, (const char *[]){"--stream", "new", "--tasks", "2", "--kernels", "12", "--us", "10000", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    unsigned max = 0, prev = 0, peaks = 0, bad = 0;
    uint64_t last_peak = 0;
    while (s && !exited(&a)) {
        uint64_t c1 = LD(&s->completed);
        unsigned n = LD(&s->in_flight);
        if (LD(&s->completed) != c1)
            continue;
        if (n == 4 && prev != 4) {
            if (peaks++ && c1 - last_peak < 3)
                bad++;
            last_peak = c1;
        }
        max = n > max ? n : max, prev = n;
    }
    CHECK(s && finish(&a, 10) && a.status == 0, "exit %d", a.status);
    CHECK(max == 4 && peaks >= 3 && !bad, "max %u, %u peaks, %u peaks after fewer than 3 completions", max, peaks, bad);
}

/* window 80 ms, commands of 20 ms: one until the first estimate (a kind not seen yet is charged a
 * whole window), then the window bounds the work still to run: three queued behind the running
 * one, whose elapsed time is credited (4 in flight), or 3 when a command measures over 20 ms (on
 * a loaded machine up to 27). Long commands so that a loaded machine's scheduling delays (ms)
 * stay small beside them: with 4 ms ones it once saw only 2 in flight. */
void test_window(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 0, 0, 80000);
    app a;
    start(&a, NULL, (const char *[]){"--stream", "new", "--tasks", "1", "--kernels", "8", "--us", "20000", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    unsigned max = 0, first = 0;
    while (s && !exited(&a)) {
        unsigned n = LD(&s->in_flight);
        if (!LD(&s->completed) && n > first)
            first = n;
        max = n > max ? n : max;
    }
    CHECK(s && finish(&a, 10) && a.status == 0, "exit %d", a.status);
    CHECK(first == 1 && max >= 3 && max <= 4, "max %u in flight (want 3..4), %u before the first completion (want 1); estimate %lu ns",
          max, first, s ? (unsigned long)s->estimate_ns : 0);
    CHECK(s && s->estimate_ns > 15000000 && s->estimate_ns < 30000000, "estimate %lu ns for 20 ms kernels",
          s ? (unsigned long)s->estimate_ns : 0);
}

/* The arrival guard: 2 ms kernels back to back, two in flight at most; the node says another queue is due in 10 ms and
 * the guard lasts 30 ms. Launches go on while they end before the horizon, none is running at
 * it, none is made until the guard lapses, then they go on. Held in the call (defer 0) or
 * deferred and made by the tracker (defer 1). */
static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int completed_5(xq_slot *s) { return LD(&s->completed) >= 5; }

static void guard_test(int defer)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 2, 1, 0);
    app a;
    start(&a, defer ? (const char *[]){"XQ_DEFER=1", "XQ_LOG=2", NULL} : (const char *[]){"XQ_DEFER=0", "XQ_LOG=2", NULL},
          (const char *[]){"--via", "procaddress", "--stream", "new", "--tasks", "1", "--kernels", "60", "--us", "2000", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, completed_5, 5.0), "no 5 completions");
    if (!s) {
        finish(&a, 1);
        return;
    }
    uint64_t t0 = mono_ns(), hz = t0 + 10000000ull, until = t0 + 30000000ull;
    __atomic_store_n(&s->horizon_ns, hz, __ATOMIC_SEQ_CST);
    __atomic_store_n(&s->guard_until_ns, until, __ATOMIC_SEQ_CST);
    unsigned long at_hz = 0, at_end = 0, running_at_hz = 1;
    /* 6 ms past the horizon: what was launched has ended and been seen to, and a launch admitted
     * just before the horizon whose thread the OS then kept off a loaded CPU for a few ms has
     * been counted (it is not a launch made while guarded) */
    while (mono_ns() < hz + 6000000ull)
        ;
    at_hz = (unsigned long)LD(&s->launched);
    running_at_hz = LD(&s->in_flight);
    /* what was in flight then ends while guarded; on a loaded 2-vCPU VM the fake device's end of
     * a kernel admitted just before the horizon, or the tracker's look at it, came a few ms late
     * (one in flight 6 ms past the horizon, CI, session 69): its end is waited for, not assumed */
    unsigned long drained = running_at_hz;
    while (mono_ns() < until - 2000000ull)
        if (drained)
            drained = LD(&s->in_flight);
    at_end = (unsigned long)LD(&s->launched);
    CHECK(at_hz >= 7, "%lu launched by the horizon (want >= 7: launches went on while they ended in time)", at_hz);
    CHECK(running_at_hz <= 1 && drained == 0 && at_end == at_hz,
          "at the horizon %lu in flight (want 0, 1 at most on a loaded host), %lu 2 ms before the end (want 0); %lu launched then, "
          "%lu 2 ms before the end (want equal)", running_at_hz, drained, at_hz, at_end);
    int went = 0;
    while (!went && mono_ns() < until + 200000000ull)
        went = LD(&s->launched) > at_end;
    uint64_t dt = mono_ns() - until;
    CHECK(went, "nothing launched after the guard lapsed");
    printf("    %lu launched by the horizon, none while guarded, next %.2f ms after the lapse\n", at_hz, (double)dt / 1e6);
    __atomic_store_n(&s->horizon_ns, 0, __ATOMIC_SEQ_CST);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.err), "arrival guard 0") == NULL, "no guard refusal counted: %s", slurp(a.err));
    /* XQ_LOG=2: from the last launch that ended by the horizon to the lapse (about 20 ms) nothing ran
     * while the next waited: the guard's time, not the node's (the gate stayed open) */
    double held = -1, guarded = -1, dry = -1;
    const char *p = strstr(slurp(a.err), "nothing in flight with work waiting: ");
    CHECK(p && sscanf(p, "nothing in flight with work waiting: held by the node %lf ms, refused by the arrival guard %lf ms, "
                         "other (dry) %lf ms", &held, &guarded, &dry) == 3, "no wait summary: %s", slurp(a.err));
    CHECK(guarded >= 10 && guarded < 200 && held == 0, "guarded %.1f ms (want about 20, 10 at least), held %.1f ms, dry %.1f ms", guarded, held, dry);
}

void test_guard(void) { guard_test(0); }
void test_guard_deferred(void) { guard_test(1); }

/* The window is a budget of each kind's own estimate: 300 us kernels with an 8 ms one every 30th
 * (another launch shape), window 6 ms. The stream's average (about 560 us) would allow 10 in
 * flight at most; by kind, a run of short ones fills the window (20 behind the running one, a
 * few more when short ones measure under 300 us), and a long one, over the window alone, is
 * launched once at most a quarter window remains before it, and then has shorts queued behind it
 * only once less than the window remains of it. */
void test_window_kinds(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 0, 0, 6000);
    app a;
    start(&a, NULL,
          (const char *[]){"--stream", "new", "--tasks", "3", "--kernels", "60", "--us", "300", "--long-every", "30",
                           "--long-us", "8000", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    unsigned max = 0;
    while (s && !exited(&a)) {
        unsigned n = LD(&s->in_flight);
        max = n > max ? n : max;
    }
    CHECK(s && finish(&a, 10) && a.status == 0, "exit %d", a.status);
    CHECK(max >= 14 && max <= 24, "max %u in flight (want 14..24: short kernels by their own estimate)", max);
}

/* XQ_LOG=2: what was in flight when the gate closed, and how long it really took to end. 20 ms
 * kernels under an 80 ms window (three or four in flight); the gate closed once and opened again
 * 10 ms later (in flight still: not a drain), then closed until all of it has ended, then opened:
 * one drain, about the work in flight at the second close, within a few ms of the estimate. */
static int completed_3(xq_slot *s) { return LD(&s->completed) >= 3 && LD(&s->in_flight) >= 2; }
static int none_in_flight(xq_slot *s) { return LD(&s->in_flight) == 0; }

void test_drain(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 0, 0, 80000);
    app a;
    start(&a, (const char *[]){"XQ_LOG=2", NULL},
          (const char *[]){"--stream", "new", "--tasks", "1", "--kernels", "16", "--us", "20000", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, completed_3, 5.0), "no 3 completions with 2 in flight");
    if (!s) {
        finish(&a, 1);
        return;
    }
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
    pause_s(0.01);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    tn_send(0, gate);
    CHECK(wait_until(s, completed_3, 1.0), "nothing in flight after the gate opened");
    pause_s(0.005);
    unsigned n = LD(&s->in_flight);
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
    double t0 = tn_now();
    CHECK(wait_until(s, none_in_flight, 2.0), "still %u in flight 2 s after the close", LD(&s->in_flight));
    double took = tn_now() - t0;
    pause_s(0.05);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    tn_send(0, gate);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    unsigned drained = 99, reopened = 99, p50 = 0, p90, p99, max;
    int o50 = 0, o90, omax;
    const char *p = strstr(slurp(a.err), "drained after ");
    CHECK(p && sscanf(p, "drained after %u of those closes (%u opened again first): took P50 %u us, P90 %u us, P99 %u us, max %u us; "
                         "past the work estimated left by P50 %d us, P90 %d us, max %d us",
                      &drained, &reopened, &p50, &p90, &p99, &max, &o50, &o90, &omax) == 9,
          "no drain summary: %s", slurp(a.err));
    printf("    %u in flight at the close, drained in %.1f ms (seen here), %u us (the interposer's), %d us past its estimate\n", n,
           took * 1000, p50, o50);
    CHECK(drained == 1 && reopened == 1, "drained %u (want 1), opened again first %u (want 1)", drained, reopened);
    /* the close came 5 ms after a completion: the work in flight then ends (n - 1) x 20 ms + 15 ms later */
    CHECK(n >= 2 && p50 >= (n - 1) * 20000u && p50 <= n * 20000u + 15000u, "took %u us with %u of 20 ms in flight at the close", p50, n);
    CHECK(o50 > -15000 && o50 < 15000, "%d us past the estimate left (want within 15 ms: 20 ms kernels, estimated)", o50);
}

/* The arrival guard's pad: 2 ms kernels, every third one 3.5 ms (their kind's estimate about 2.5
 * ms), under a 6 ms window. The test, as the node, foresees another queue's arrival 10 ms ahead 60
 * times over, closes the gate 0.3 ms past that horizon (the node's reaction) and lifts the guard,
 * and opens the gate again once the work has ended. A command admitted to end by the horizon by
 * its estimate runs up to 1 ms past it now and then; the pad learns how far and keeps that much
 * more clear. Counted: the closes that found work still in flight, over the first and the last 30
 * rounds (by then the pad has been learnt). XQ_GUARD_PAD=0: none learnt, the same rounds. */
static int in_flight_some(xq_slot *s) { return LD(&s->in_flight) > 0; }
/* every third kernel 1.5 ms longer: what runs past a horizon stays under the pad's most (1 ms),
 * so the pad, once learnt, can keep it clear (with 2 ms longer, 1.3 ms past at times, the closes
 * with work in flight fell by about half only, 5-11 against 12-30 in five runs on the build VM,
 * and the test's "half or fewer" failed one try in two under CI; with 1.5 ms, 4-8 against 46-56) */
#define PAD_SLOW_US "1500"
#define PAD_ROUNDS 60

static void pad_rounds(int on, int stop, unsigned *late_first, unsigned *late_last, unsigned *stops, const char **err)
{
    *stops = 0;
    tn_start(SOCK, 16);
    tn_defaults(0, 0, 0, 6000);
    app a;
    start(&a, on ? (const char *[]){"XQ_LOG=2", "FAKECUDA_SLOW_EVERY=3", "FAKECUDA_SLOW_US=" PAD_SLOW_US, NULL}
                 : (const char *[]){"XQ_LOG=2", "FAKECUDA_SLOW_EVERY=3", "FAKECUDA_SLOW_US=" PAD_SLOW_US, "XQ_GUARD_PAD=0", NULL},
          (const char *[]){"--stream", "new", "--tasks", "1", "--kernels", "600", "--us", "2000", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, completed_5, 5.0), "no 5 completions");
    *late_first = *late_last = 0;
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
            /* stopped with that work in flight, once its tracker has seen the close: its end is
             * seen 30 ms late, after SIGCONT */
            pause_s(0.0003);
            if (LD(&s->in_flight)) {
                kill(a.pid, SIGSTOP);
                pause_s(0.030);
                kill(a.pid, SIGCONT);
                (*stops)++;
            }
        }
        __atomic_store_n(&s->horizon_ns, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->guard_until_ns, 0, __ATOMIC_SEQ_CST);
        CHECK(wait_until(s, none_in_flight, 1.0), "round %d: still %u in flight 1 s after the close", r, LD(&s->in_flight));
        if (getenv("PAD_DEBUG")) printf("    round %d: %u in flight at the close, all ended %.2f ms past the horizon, estimate %.0f us\n", r, n, ((double)mono_ns() - (double)hz) / 1e6, (double)LD(&s->estimate_ns) / 1e3);
        if (n) {
            if (r < PAD_ROUNDS / 2) (*late_first)++;
            else (*late_last)++;
        }
        pause_s(0.001);
        __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
        tn_send(0, gate);
        CHECK(wait_until(s, in_flight_some, 1.0), "round %d: nothing launched after the gate opened", r);
        pause_s(0.004); /* a window's worth in flight again, its estimates taken */
    }
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    *err = slurp(a.err);
}

void test_guard_pad(void)
{
    unsigned off_first, off_last, on_first, on_last, stops;
    const char *err = "";
    pad_rounds(0, 0, &off_first, &off_last, &stops, &err);
    CHECK(!strstr(err, "guard pad "), "XQ_GUARD_PAD=0 and a pad learnt: %s", err);
    pad_rounds(1, 0, &on_first, &on_last, &stops, &err);
    double pad = -1;
    unsigned up = 0, down = 0;
    const char *p = strstr(err, "guard pad ");
    CHECK(p && sscanf(p, "guard pad %lf us at exit (raised at %u closes with work past a horizon, worn at %u kept clear)", &pad, &up,
                      &down) == 3, "no pad line: %s", err);
    printf("    work in flight at the close, rounds 1-30 / 31-60: without the pad %u / %u, with it %u / %u "
           "(pad %.0f us at exit, raised %u times, worn %u)\n", off_first, off_last, on_first, on_last, pad, up, down);
    /* the runs would be alike without the pad: it must have work past the horizon to learn from */
    CHECK(off_first + off_last >= 4, "without the pad only %u of 60 closes found work in flight (the test needs overruns)",
          off_first + off_last);
    CHECK(up >= 1 && pad > 0 && pad <= 1000, "pad %.0f us, raised %u times (want raised, at most 1000 us)", pad, up);
    CHECK(on_last * 2 <= off_last || on_last <= 2, "with the pad %u of the last 30 closes found work in flight, without it %u", on_last,
          off_last);
}

/* The pad's rounds again, the process stopped (SIGSTOP) for 30 ms at each close that found work
 * in flight: those ends are seen 30 ms past the horizon (over PAD_STALE_NS, 10 ms), the process's
 * stop and not the work's overrun. Not learnt from (before 1 Dec they set the pad to its most, 1
 * ms, and the mix scenario's paired reading, which stops the best-effort tenants every 3 s, left
 * it there for dozens of closes after each stop): the pad line counts them. */
void test_guard_pad_stopped(void)
{
    unsigned first, last, stops;
    const char *err = "";
    pad_rounds(1, 1, &first, &last, &stops, &err);
    double pad = -1;
    unsigned up = 0, down = 0, late = 0, limit = 0;
    const char *p = strstr(err, "guard pad ");
    CHECK(p && sscanf(p, "guard pad %lf us at exit (raised at %u closes with work past a horizon, worn at %u kept clear); "
                         "%u ends seen over %u us past the horizon",
                      &pad, &up, &down, &late, &limit) == 5, "no pad line: %s", err);
    printf("    closes with work in flight %u, stopped 30 ms with it still in flight %u; pad %.0f us at exit, raised %u times, "
           "ends seen late %u\n", first + last, stops, pad, up, late);
    CHECK(stops >= 2, "only %u of 60 closes stopped with work in flight (the test needs them)", stops);
    /* each stop whose close the tracker had seen before it ends seen 30 ms late: counted, not
     * learnt (before, each set the pad to 1 ms); a stop before the tracker saw the close is not
     * its guard's any more after the continue, and is neither */
    CHECK(late >= 1 && late <= stops, "%u ends seen late (want 1 to %u, the stops)", late, stops);
    CHECK(limit == 10000, "the line names %u us as the limit (want 10000)", limit);
    CHECK(up + late <= first + last && pad <= 1000, "pad %.0f us, raised %u times, %u ends late, of %u closes with work in "
          "flight (want at most that many, and 1000 us at most)", pad, up, late, first + last);
}
