/* test_cuda_fuzz.c: random programs (xq-cuda-fuzz) under a node that changes every decision it can
 * while they run: every result right, nothing lost, no program held for good. */
#define _GNU_SOURCE
#include "test_cuda.h"
#include "test_chaos.h"

/* What happens to the node in a run besides its decisions. */
enum { NODE_STAYS, NODE_DIES, NODE_FREEZES, NODE_RESTARTS };
static const char *const NODE_EVENT[] = {"", ", node killed", ", node frozen 1.5 s", ", node killed and started again"};

/* One random program: first bare (the model itself must hold: otherwise the program, not the
 * interposer, is wrong), then under the interposer and the changing node. */
static void fuzz_one(unsigned seed, const char *via, int ptsz, int threads, const char *env_a, const char *env_b, int narrow,
                     int event, int hold, int stall)
{
    char sd[16], th[8];
    snprintf(sd, sizeof sd, "%u", seed);
    snprintf(th, sizeof th, "%d", threads);
    const char *args[] = {"--seed", sd, "--ops", "1200", "--threads", th, "--via", via, "--max-us", "200", "--host-us", "200",
                          ptsz ? "--ptsz" : NULL, NULL};
    int failed_before = failed_now;
    failed_now = 0;
    char what[200];
    snprintf(what, sizeof what, "seed %u, %s%s, %d thread%s, %s %s%s%s%s%s", seed, via, ptsz ? " ptsz" : "", threads,
             threads > 1 ? "s" : "", env_a, env_b ? env_b : "", narrow ? ", narrowed" : "", hold ? ", held behind busy streams" : "",
             stall ? ", XQ_STALL=1" : "", NODE_EVENT[event]);
    app a;
    start_prog(&a, FUZZ, (const char *[]){"XQ_TEST_DEFAULTS=1", NULL}, args, 0);
    CHECK(finish(&a, 30) && a.status == 0 && strstr(slurp(a.out), "\"check\":\"ok\""), "%s: bare: exit %d: %s %s", what, a.status,
          slurp(a.out), slurp(a.err));
    if (a.status != 0) {
        failed_now |= failed_before;
        return;
    }

    tn_start(SOCK, 16);
    tn_defaults(0, 0, 0, 0);
    tn_space(narrow ? "SPACE mps /tmp/xq-test-mps 100 narrow" : "SPACE none off");
    chaos c = {{(unsigned short)seed, 0x5eed, 7}, 0, -1, {0}, 0, {0}, 0, hold, 0};
    double t0 = tn_now(), event_at = t0 + 0.1 + 0.002 * (seed % 100), until = t0 + 2.5;
    const char *env[10] = {"XQ_TEST_DEFAULTS=1", "XQ_PRIORITY=1", env_a};
    int ne = 3;
    if (stall) env[ne++] = "XQ_STALL=1"; /* level 2: what a held stream launched waits on the device too */
    static char trace[300], more[300];
    if (getenv("XQ_FUZZ_TRACE")) /* the program's XQ_ variables are the test's own */
        snprintf(trace, sizeof trace, "XQ_FUZZ_TRACE=%s", getenv("XQ_FUZZ_TRACE")), env[ne++] = trace;
    if (getenv("XQ_FUZZ_ENV")) /* one more NAME=VALUE for every program (XQ_FUZZ_ENV=XQ_STALL=1) */
        snprintf(more, sizeof more, "%s", getenv("XQ_FUZZ_ENV")), env[ne++] = more;
    if (env_b) env[ne++] = env_b;
    if (narrow) env[ne++] = "FAKECUDA_TPS=64"; /* blocks of 64 threads and more fill a multiprocessor or more */
    /* the watchdog at 250 ms, not 1000: a held run's links by a word in memory each wait that long
     * (last: the first of a name is the one a program sees, so XQ_FUZZ_ENV may set another) */
    env[ne++] = "XQ_UNSTICK_MS=250";
    env[ne] = NULL;
    start_prog(&a, FUZZ, env, args, 1);
    int done_event = event == NODE_STAYS, frozen = 0, cleared = 0;
    while (!exited(&a) && tn_now() < t0 + 20) {
        double now = tn_now();
        if (!done_event && now >= event_at) {
            done_event = 1;
            if (event == NODE_DIES)
                tn_kill();
            else if (event == NODE_FREEZES)
                tn_freeze(1), frozen = 1;
            else if (event == NODE_RESTARTS) {
                tn_kill();
                tn_start(SOCK, 16); /* the process finds it again (its reader retries) */
                tn_space("SPACE none off");
                c.scanned = 0, c.sess = -1, c.nslots = 0; /* the new node's lines and slots */
            }
        }
        if (frozen && now >= event_at + 1.5) tn_freeze(0), frozen = 0;
        if (now < until && !(event == NODE_DIES && done_event) && !frozen)
            chaos_step(&c);
        else if (now >= until && !cleared) {
            chaos_clear(&c);
            cleared = 1;
        } else if (cleared && c.hold && !(event == NODE_DIES && done_event) && !frozen)
            chaos_hold(&c); /* the limits are cleared; the rule holds to the end */
        pause_s(0.0002 + 0.0018 * crnd(&c, 1000) / 1000.0);
    }
    /* 20 s: the programs take 0.1-3 s here; one still running waits for something that does not come */
    int stuck = !exited(&a);
    CHECK(!stuck, "%s: still running after 20 s under the node (its slots: %s)", what, slots_text(&c));
    if (frozen) tn_freeze(0);
    if (event != NODE_DIES) chaos_clear(&c);
    unsigned changes = c.changes;
    int ended = finish(&a, 15);
    const char *out = slurp(a.out);
    const char *err = slurp(a.err);
    CHECK(ended && a.status == 0 && strstr(out, "\"check\":\"ok\""), "%s: exit %d (%s): %s stderr: %.600s", what, a.status,
          ended ? "ended" : "did not end: held for good", out, err);
    /* nothing lost: every stream's commands launched were completed, none failed, none still held */
    unsigned long long launched = 0, completed = 0, failed = 0;
    unsigned pending = 0;
    for (int i = 0; event == NODE_STAYS && i < c.nslots; i++) {
        xq_slot *s = tn_slot(c.sess, (unsigned)c.slot[i]);
        if (!s) continue;
        launched += LD(&s->launched), completed += LD(&s->completed), failed += LD(&s->failed), pending += LD(&s->pending);
    }
    if (event == NODE_STAYS)
        CHECK(c.nslots >= 3 && launched > 0 && launched == completed && failed == 0 && pending == 0,
              "%s: %d streams registered, launched %llu, completed %llu, failed %llu, pending %u", what, c.nslots, launched, completed,
              failed, pending);
    const char *chk = strstr(out, "\"checked\":");
    printf("    %s: %s, %.1f s, %u decisions changed, %.14s\n", what, failed_now ? "FAILED" : "ok", tn_now() - t0, changes,
           chk ? chk : "-");
    tn_kill();
    failed_now |= failed_before;
}

/* XQ_FUZZ_RUNS (default 16) programs from XQ_FUZZ_SEED (default 1) on, every XQ_FUZZ_STEP-th
 * (default 1; 24 keeps the rest of a seed's run as it is), each in turn: the three
 * ways to reach the driver, the default stream per thread or legacy, one or three threads, the
 * production defaults or a mode of their own (one of them with kernels' widths by occupancy), narrowed or not, gates drawn or held as a priority
 * policy holds them (half of those with XQ_STALL=1), and now and then the node killed, frozen past
 * the process's patience, or killed and started again. */
void test_fuzz_programs(void)
{
    static const char *const vias[] = {"procaddress", "dlsym", "direct"};
    static const char *const envs[][2] = {{"XQ_LOG=0", NULL},         {"XQ_LOG=2", NULL},          {"XQ_DEFER=0", NULL},
                                          {"XQ_COMPLETION=event", NULL}, {"XQ_LOG=2", "XQ_LOG_LEAN=1"},
                                          {"XQ_DEFER_COPIES=0", "XQ_WIDTH=occupancy"}};
    const char *r = getenv("XQ_FUZZ_RUNS"), *s0 = getenv("XQ_FUZZ_SEED"), *st = getenv("XQ_FUZZ_STEP");
    int runs = r ? atoi(r) : 16;
    unsigned first = s0 ? (unsigned)strtoul(s0, NULL, 10) : 1, step = st ? (unsigned)strtoul(st, NULL, 10) : 1;
    for (int k = 0; k < runs; k++) {
        unsigned seed = first + (unsigned)k * step;
        int e = (int)(seed % 6);
        int event = seed % 8 == 3 ? NODE_DIES : seed % 8 == 5 ? NODE_FREEZES : seed % 8 == 7 ? NODE_RESTARTS : NODE_STAYS;
        fuzz_one(seed, vias[seed % 3], (int)(seed / 3 % 2), seed % 4 == 2 ? 3 : 1 + (int)(seed % 2), envs[e][0], envs[e][1],
                 (int)(seed / 2 % 2), event, seed / 4 % 3 == 0, seed / 4 % 3 == 0 && seed / 12 % 2 == 1);
    }
}

/* One case the random programs found, made sure of (xq-cuda-fuzz --capture-race): a copy on a
 * stream whose second increment the node holds deferred, made while another thread begins a
 * capture, reads both increments. The capture's thread waits for the deferred launch to be made before it
 * begins; before the fix, the copy went straight to the driver meanwhile (a capture in progress
 * let every call through untouched) and read the value before the increment. */
static int some_completed(xq_slot *s) { return LD(&s->completed) > 0; }
void test_capture_after_deferred(void)
{
    static const char *const vias[] = {"procaddress", "dlsym"};
    for (int v = 0; v < 2; v++) {
        tn_start(SOCK, 16);
        app a;
        start_prog(&a, FUZZ, (const char *[]){"XQ_TEST_DEFAULTS=1", NULL}, (const char *[]){"--capture-race", "--via", vias[v], NULL}, 1);
        int slot = stream_slot(0, 0, NULL, 0);
        xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
        CHECK(s && wait_until(s, some_completed, 3.0), "%s: the first increment was not made", vias[v]);
        if (s) __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST); /* held from now on: the second is deferred */
        CHECK(s && wait_until(s, one_pending, 3.0), "%s: the second increment was not held", vias[v]);
        pause_s(0.4); /* the capture waits, and the copy was asked for 100 ms after it began */
        CHECK(!exited(&a), "%s: the program ended with its stream held: %s", vias[v], slurp(a.out));
        if (s) {
            __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
            char g[32];
            snprintf(g, sizeof g, "GATE %d", slot);
            tn_send(0, g);
        }
        CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "\"check\":\"ok\""), "%s: exit %d: %s %s", vias[v], a.status,
              slurp(a.out), slurp(a.err));
        tn_kill();
    }
}

/* The other case (xq-cuda-fuzz --capture-limit; ProcessIT's random programs found it): a capture
 * begins while a launch waits deferred behind a threshold of one, a 50 ms kernel in flight ahead
 * of it. The capture waits for the launch to be made, so the kernel's end must still be seen while
 * it waits: before the fix the capture was counted first, the tracker stopped looking, the limit
 * never lifted, and the program never ended. */
void test_capture_behind_limit(void)
{
    static const char *const vias[] = {"procaddress", "dlsym"};
    for (int v = 0; v < 2; v++) {
        tn_start(SOCK, 16);
        tn_defaults(0, 1, 0, 0);
        app a;
        start_prog(&a, FUZZ, (const char *[]){"XQ_TEST_DEFAULTS=1", NULL}, (const char *[]){"--capture-limit", "--via", vias[v], NULL}, 1);
        CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "\"check\":\"ok\""), "%s: exit %d (%s): %s %s", vias[v],
              a.status, a.reaped && a.status != -1 ? "ended" : "did not end", slurp(a.out), slurp(a.err));
        tn_kill();
    }
}

/* The third case (xq-cuda-fuzz --hold-race; the random programs under a node that holds as a
 * priority policy does found it): a thread waits on its stream A, held; meanwhile another thread's
 * launch on B is deferred, held too. The node lets A go and holds B while A has work waiting (A
 * registered first: the higher). The thread on A must now wait for B's deferred launch, and while
 * it does A has nothing waiting of its own: counted as waiting on A, it held B for good. */
static int two_pending(xq_slot *s) { return LD(&s->pending) >= 1; }
void test_wait_for_others_not_counted(void)
{
    static const char *const vias[] = {"procaddress", "dlsym"};
    for (int v = 0; v < 2; v++) {
        tn_start(SOCK, 16);
        app a;
        start_prog(&a, FUZZ, (const char *[]){"XQ_TEST_DEFAULTS=1", NULL}, (const char *[]){"--hold-race", "--via", vias[v], NULL}, 1);
        int sa = stream_slot(0, 0, NULL, 0), sb = stream_slot(0, 1, NULL, 0);
        xq_slot *A = sa >= 0 ? tn_slot(0, (unsigned)sa) : NULL, *B = sb >= 0 ? tn_slot(0, (unsigned)sb) : NULL;
        CHECK(A && B, "%s: two streams not registered", vias[v]);
        /* held once B's first increment is done, in the program's 300 ms pause: B's slot comes as its
         * first launch is made, and a gate closed then held that launch (not deferrable: the first of
         * its kernel), so the program never reached A's copy (about one run in ten failed so) */
        CHECK(!B || wait_until(B, some_completed, 3.0), "%s: B's first increment not done", vias[v]);
        if (A && B) {
            __atomic_store_n(&A->gate, 1, __ATOMIC_SEQ_CST);
            __atomic_store_n(&B->gate, 1, __ATOMIC_SEQ_CST);
            int held_a = wait_until(A, two_pending, 3.0), held_b = held_a && wait_until(B, two_pending, 3.0);
            CHECK(held_a && held_b, "%s: the copy on A and the launch on B not held (A: %u held, %lu launched, %lu completed; "
                  "B: %u held, %lu launched, %lu completed; the program: %s)", vias[v], LD(&A->pending), (unsigned long)LD(&A->launched),
                  (unsigned long)LD(&A->completed), LD(&B->pending), (unsigned long)LD(&B->launched), (unsigned long)LD(&B->completed),
                  exited(&a) ? "ended" : "running");
            chaos c = {{1, 2, 3}, 0, -1, {0}, 0, {0}, 0, 1, 0};
            for (double end = tn_now() + 5; !exited(&a) && tn_now() < end;) {
                chaos_hold(&c); /* A let go; B held while A has work in flight or waiting */
                pause_s(0.0005);
            }
            CHECK(exited(&a), "%s: still running 5 s after A was let go (%s)", vias[v], slots_text(&c));
            chaos_clear(&c);
        }
        CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "\"check\":\"ok\""), "%s: exit %d: %s %s", vias[v], a.status,
              slurp(a.out), slurp(a.err));
        tn_kill();
    }
}

/* The fourth case (xq-cuda-fuzz --stall-race; the random programs with XQ_STALL=1 under a node
 * holding as a priority policy does found it): A's work waits (an event) for work B launched
 * behind a level-2 guard, and the node holds B while A has work in flight. Before the fix the
 * guard held B's work on the device, A's never ended, and the node held B for good; now no guard
 * holds while a stream the node lets launch has work in flight. */
static int in_flight_1(xq_slot *s) { return LD(&s->in_flight) >= 1; }
void test_stall_not_behind_open_work(void)
{
    tn_start(SOCK, 16);
    app a;
    start_prog(&a, FUZZ, (const char *[]){"XQ_TEST_DEFAULTS=1", "XQ_STALL=1", NULL}, (const char *[]){"--stall-race", NULL}, 1);
    int sa = stream_slot(0, 0, NULL, 0), sb = stream_slot(0, 1, NULL, 0);
    xq_slot *A = sa >= 0 ? tn_slot(0, (unsigned)sa) : NULL, *B = sb >= 0 ? tn_slot(0, (unsigned)sb) : NULL;
    CHECK(A && B, "two streams not registered");
    if (A && B) {
        CHECK(wait_until(B, in_flight_1, 3.0), "B's long kernel not in flight");
        __atomic_store_n(&B->gate, 1, __ATOMIC_SEQ_CST); /* held a while as it runs: its next launch is guarded */
        pause_s(0.04);
        __atomic_store_n(&B->gate, 0, __ATOMIC_SEQ_CST);
        char g[32];
        snprintf(g, sizeof g, "GATE %d", sb);
        tn_send(0, g);
        CHECK(wait_until(A, in_flight_1, 3.0), "A's kernel not in flight");
        chaos c = {{1, 2, 3}, 0, -1, {0}, 0, {0}, 0, 1, 0};
        for (double end = tn_now() + 5; !exited(&a) && tn_now() < end;) {
            chaos_hold(&c); /* B held while A has work in flight */
            pause_s(0.0005);
        }
        CHECK(exited(&a), "still running 5 s after B was held behind A (%s)", slots_text(&c));
        chaos_clear(&c);
    }
    CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "\"check\":\"ok\""), "exit %d: %s %s", a.status, slurp(a.out),
          slurp(a.err));
    const char *err = slurp(a.err);
    (void)err;
    tn_kill();
}

/* The fifth case (xq-cuda-fuzz --link-race; the random programs' links by a word in memory under a
 * node holding as a priority policy does found it: 3 runs of 24 never ended): A's work waits on
 * the device for a word B's cuStreamWriteValue32 writes, and that write waits for B's increment,
 * held behind busy A. Without the watchdog (XQ_UNSTICK_MS=0) it is still running after 1.5 s: the
 * case is real; with it (200 ms here, 1000 by default) B is let go and the program ends right.
 * Deferred and with XQ_DEFER=0 (B's thread held in the launch). */
void test_unstick_flag_link(void)
{
    static const char *const modes[][2] = {{"XQ_UNSTICK_MS=200", "XQ_DEFER=1"}, {"XQ_UNSTICK_MS=200", "XQ_DEFER=0"},
                                           {"XQ_UNSTICK_MS=0", "XQ_DEFER=1"}};
    for (int m = 0; m < 3; m++) {
        int off = m == 2;
        tn_start(SOCK, 16);
        app a;
        start_prog(&a, FUZZ, (const char *[]){"XQ_TEST_DEFAULTS=1", modes[m][0], modes[m][1], NULL}, (const char *[]){"--link-race", NULL}, 1);
        int sa = stream_slot(0, 0, NULL, 0), sb = stream_slot(0, 1, NULL, 0);
        xq_slot *A = sa >= 0 ? tn_slot(0, (unsigned)sa) : NULL, *B = sb >= 0 ? tn_slot(0, (unsigned)sb) : NULL;
        CHECK(A && B, "%s %s: two streams not registered", modes[m][0], modes[m][1]);
        if (A && B) {
            chaos c = {{1, 2, 3}, 0, -1, {0}, 0, {0}, 0, 1, 0};
            double t0 = tn_now();
            for (double end = t0 + (off ? 1.5 : 5); !exited(&a) && tn_now() < end;) {
                chaos_hold(&c); /* B held while A has work in flight */
                pause_s(0.0005);
            }
            if (off)
                CHECK(!exited(&a), "XQ_UNSTICK_MS=0: ended by itself in %.2f s (the case did not arise)", tn_now() - t0);
            else
                CHECK(exited(&a), "%s %s: still running 5 s under a node holding B behind busy A (%s)", modes[m][0], modes[m][1],
                      slots_text(&c));
            chaos_clear(&c); /* B let go: it ends either way */
        }
        CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "\"check\":\"ok\""), "%s %s: exit %d: %s %s", modes[m][0],
              modes[m][1], a.status, slurp(a.out), slurp(a.err));
        if (!off) CHECK(strstr(slurp(a.err), "let go though the node holds it") != NULL, "%s %s: the watchdog said nothing: %s",
                        modes[m][0], modes[m][1], slurp(a.err));
        CHECK(off ? tn_count(0, "UNSTUCK ") == 0 : tn_count(0, "UNSTUCK ") >= 1, "%s %s: %d UNSTUCK lines to the node", modes[m][0],
              modes[m][1], tn_count(0, "UNSTUCK "));
        tn_kill();
    }
}
