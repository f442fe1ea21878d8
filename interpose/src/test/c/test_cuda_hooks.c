/* test_cuda_hooks.c: the entry points: capture, fork, dlsym, RTLD_LOCAL libraries, failed launches, the hot path. */
#define _GNU_SOURCE
#include "test_cuda.h"

/* a capture on a held stream passes through; the launch after it is held */
void test_capture(void)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, NULL, (const char *[]){"--stream", "new", "--capture", "5", "--tasks", "1", "--us", "500", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, one_pending, 2), "the task's launch is not held");
    CHECK(strstr(slurp(a.out), "{\"captured\":5}"), "capture did not pass: %s", slurp(a.out));
    if (s) {
        __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
        char g[32];
        snprintf(g, sizeof g, "GATE %d", slot);
        tn_send(0, g);
    }
    CHECK(finish(&a, 10) && a.status == 0, "exit %d", a.status);
    CHECK(s && s->launched == 1, "launched %lu (captured launches must not count)", s ? (unsigned long)s->launched : 0);
}

void test_fork(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, NULL, (const char *[]){"--stream", "new", "--tasks", "2", "--fork", "launch", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    int child = 0;
    const char *c = strstr(slurp(a.out), "\"child_pid\":");
    if (c)
        child = atoi(c + 12);
    CHECK(tn_find(0, -1, "HELLO", 1) >= 0 && tn_sessions() == 2, "%d sessions, want 2", tn_sessions());
    char want[64];
    snprintf(want, sizeof want, "HELLO 1 %d ", child);
    int h = tn_find(0, 1, want, 1);
    CHECK(child > 0 && h >= 0 && tn_peer_pid(1) == child, "child %d: no HELLO of its own", child);
    CHECK(tn_find(0, 1, "STREAM ", 1) >= 0, "child registered no stream");
    tn_start(SOCK, 16);
    start(&a, NULL, (const char *[]){"--stream", "new", "--tasks", "2", "--fork", "idle", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d", a.status);
    pause_s(0.2);
    CHECK(tn_sessions() == 1, "a child that does not launch connected: %d sessions", tn_sessions());
}

/* a library linking libcuda, dlopened RTLD_LOCAL (libcuda not in the global scope): its direct
 * calls reach our exports and must still find the driver, and be gated */
void test_local_library(void)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start_prog(&a, LOCAL, NULL, (const char *[]){"3", NULL}, 1);
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, one_pending, 2), "not held: %s", slurp(a.err));
    if (s) {
        __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
        char g[32];
        snprintf(g, sizeof g, "GATE %d", slot);
        tn_send(0, g);
    }
    CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "{\"tasks\":3}"), "exit %d: %s %s", a.status,
          slurp(a.out), slurp(a.err));
}

/* cu-named functions of other libraries (cuDNN's cudnn*, or any cuX* outside the driver) are handed
 * out bare by dlsym even with deferral on: they are not the driver's, and a trampoline would make
 * every such call wait for deferred launches (cuDNN's descriptor calls did, thousands of times a
 * second, in PyTorch training) */
void test_dlsym_not_driver(void)
{
    tn_start(SOCK, 16);
    app a;
    start_prog(&a, LOCAL, (const char *[]){"XQ_DEFER=1", NULL}, (const char *[]){"probe", NULL}, 1);
    CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "{\"bare\":2}"), "exit %d: %s %s", a.status,
          slurp(a.out), slurp(a.err));
}

/* Another preloaded library's dlsym(RTLD_NEXT, ...) reaches our dlsym: it must get what glibc
 * gives it (the next definition after that library), in either preload order. It crashed in the
 * library's constructor: the lookup went through link-map entries that are no dlopen handles. */
void test_dlsym_next_other_library(void)
{
    for (int order = 0; order < 2; order++) {
        tn_start(SOCK, 16);
        char pre[1200];
        if (order) snprintf(pre, sizeof pre, "LD_PRELOAD=%s/libxq-next.so:%s", DIR_, LIB);
        else snprintf(pre, sizeof pre, "LD_PRELOAD=%s:%s/libxq-next.so", LIB, DIR_);
        app a;
        start(&a, (const char *[]){pre, NULL}, (const char *[]){"--tasks", "1", "--stream", "new", NULL});
        CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.err), "xq-next: getpid ok"), "order %d: exit %d: %s",
              order, a.status, slurp(a.err));
        CHECK(tn_count(0, "STREAM") == 1, "order %d: %d STREAM lines (still scheduled)", order, tn_count(0, "STREAM"));
    }
}

void test_failed_launches(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, NULL, (const char *[]){"--stream", "new", "--fail", "3", "--tasks", "1", "--linger-ms", "200", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && s->failed == 3 && s->launched == 1 && s->completed == 1 && s->in_flight == 0,
          "failed %lu launched %lu in_flight %u", s ? (unsigned long)s->failed : 0,
          s ? (unsigned long)s->launched : 0, s ? s->in_flight : 0);
}

static double bench_n(int preload, const char *const *env, const char *const *args)
{
    app a;
    start_prog(&a, BENCH, env, args, preload);
    double ns = -1;
    if (finish(&a, 30) && a.status == 0) {
        const char *p = strstr(slurp(a.out), "\"ns_per_launch\":");
        ns = p ? atof(p + 16) : -1;
    }
    return ns;
}

static double bench(int preload, const char *const *env)
{
    return bench_n(preload, env, NULL);
}

void test_overhead(void)
{
    tn_start(SOCK, 16);
    const char *const memop[] = {"XQ_COMPLETION=memop", NULL};
    double bare = bench(0, NULL), with = bench(1, NULL), with_m = bench(1, memop);
    CHECK(bare > 0 && with > 0 && with_m > 0, "bench failed: %.1f %.1f %.1f", bare, with, with_m);
    CHECK(tn_count(-1, "STREAM") >= 2, "the bench did not register");
    tn_kill();
    double alone = bench(1, NULL), alone_m = bench(1, memop);
    printf("    cuLaunchKernel on the fake: %.1f ns bare, %.1f ns with the interposer and a node (open gate),"
           " %.1f ns with no node: hot path %.0f ns per launch\n",
           bare, with, alone, with - bare);
    printf("    XQ_COMPLETION=memop: %.1f ns with a node, %.1f ns with no node: hot path %.0f ns per launch\n",
           with_m, alone_m, with_m - bare);
}

/* The lean path (cuda_int.h: lean): with nothing set in the slot, or a threshold of 1 << 20 (the
 * node's "no limit"), most launches take it (not the kind's samples, nor those made before it is measured), on a new stream and
 * on the default one (the thread's current context kept); with a window or a threshold in force
 * none does; every launch is counted either way */
void test_lean_path(void)
{
    /* and with the diagnostics on (XQ_LOG=2) none does, unless XQ_LOG_LEAN=1 keeps it for them */
    const struct {
        unsigned thr, win;
        const char *env, *env2;
        int lean;
    } c[] = {{0, 0, NULL, NULL, 1}, {0, 0, "XQ_BENCH_DEFAULT=1", NULL, 1}, {1u << 20, 0, NULL, NULL, 1}, {0, 300, NULL, NULL, 0},
             {16, 0, "XQ_BENCH_DEFAULT=1", NULL, 0}, {0, 0, "XQ_LOG=2", NULL, 0}, {0, 0, "XQ_LOG=2", "XQ_LOG_LEAN=1", 1},
             {0, 300, "XQ_LOG=2", "XQ_LOG_LEAN=1", 0}};
    /* "spin" for 2 us: a kind measured (the fake's "nop" takes no time, and a kind measured at 0 stays unknown) */
    for (int i = 0; i < (int)(sizeof c / sizeof c[0]); i++) {
        tn_start(SOCK, 16);
        tn_defaults(0, c[i].thr, c[i].thr ? 8 : 0, c[i].win);
        app a;
        start_prog(&a, BENCH, (const char *[]){"XQ_BENCH_SPIN_US=2", c[i].env, c[i].env2, NULL}, (const char *[]){"2000", NULL}, 1);
        unsigned long long lean = 0, counted = 0;
        const char *p = finish(&a, 60) && a.status == 0 ? strstr(slurp(a.out), "\"lean\":") : NULL;
        CHECK(p && sscanf(p, "\"lean\":%llu,\"counted\":%llu", &lean, &counted) == 2, "case %d: exit %d: %s %s", i, a.status,
              slurp(a.out), slurp(a.err));
        /* lean: not before the kind's first samples are read, which the first round's 4 ms of work
         * queued ahead of them delays past its 2,000 launches; then all but one in 32 (its samples) */
        CHECK(counted == 12000 && (c[i].lean ? lean >= 12000 * 7 / 10 && lean < 12000 : lean == 0),
              "case %d (threshold %u, window %u us%s%s): %llu lean of %llu counted (want %s of 12000)", i, c[i].thr, c[i].win,
              c[i].env ? ", " : "", c[i].env ? c[i].env : "", lean, counted, c[i].lean ? "most, not all" : "none");
        if (c[i].env2) { /* the account says how many it left out: the lean ones */
            char want[96];
            snprintf(want, sizeof want, "XQ_LOG_LEAN=1: %llu launches took the lean path", lean);
            CHECK(strstr(slurp(a.err), want) != NULL, "case %d: no '%s' in: %s", i, want, slurp(a.err));
        }
        printf("    threshold %u, window %u us%s%s%s: %llu of %llu launches lean\n", c[i].thr, c[i].win,
               c[i].env ? ", " : "", c[i].env ? c[i].env : "", c[i].env2 ? ", XQ_LOG_LEAN=1" : "", lean, counted);
    }
}

/* The hot path with cold caches, as on a GPU host (the driver and the framework run between two
 * launches): 1 MiB of the program's own memory touched between launches, and the interposer's own
 * account of its host time (XQ_LOG=2) read back. Figures only (speed is judged by benchmarks, not
 * tests); it fails when the bench does not run, register or give its account. */
void test_overhead_cold(void)
{
    tn_start(SOCK, 16);
    const char *const env[] = {"XQ_BENCH_TOUCH_KB=1024", "XQ_LOG=2", NULL}, *const args[] = {"20000", NULL};
    double per[3];
    for (int i = 0; i < 3; i++) {
        app a;
        start_prog(&a, BENCH, env, args, 1);
        per[i] = -1;
        unsigned long long calls = 0;
        double all;
        const char *p = finish(&a, 60) && a.status == 0 ? strstr(slurp(a.err), "host time in the interposer: ") : NULL;
        CHECK(p && sscanf(p, "host time in the interposer: %llu calls through the gate, %lf ms in all, %lf ns a call", &calls,
                          &all, &per[i]) == 3 && calls >= 6 * 20000, "run %d: exit %d: %s", i, a.status, slurp(a.err));
    }
    CHECK(tn_count(-1, "STREAM") >= 3, "the bench did not register");
    printf("    cold caches (1 MiB touched between launches), the interposer's own account: %.0f, %.0f, %.0f ns a launch\n",
           per[0], per[1], per[2]);
}

/* XQ_TIME_LAUNCHES=1: the time the application's thread spends inside the driver's launch calls,
 * lean launches and gated ones alike (bench/torch/family/tenant.py reads it around each request,
 * to tell a launch that waits in the driver from a thread that runs slow). The fake driver's
 * FAKECUDA_CALL_US makes every enqueueing call take that long: 6 x 200 launches of 100 us each
 * come to 120 ms or more. Without the variable nothing is counted; a bad value is said. */
void test_launch_time(void)
{
    const struct {
        unsigned win;
        const char *env;
        int timed;
    } c[] = {{0, "XQ_TIME_LAUNCHES=1", 1}, {300, "XQ_TIME_LAUNCHES=1", 1}, {0, NULL, 0}, {0, "XQ_TIME_LAUNCHES=yes", 0}};
    for (int i = 0; i < (int)(sizeof c / sizeof c[0]); i++) {
        tn_start(SOCK, 16);
        tn_defaults(0, 0, 0, c[i].win); /* a window: no launch is lean */
        app a;
        start_prog(&a, BENCH, (const char *[]){"XQ_BENCH_SPIN_US=2", "FAKECUDA_CALL_US=100", c[i].env, NULL},
                   (const char *[]){"200", NULL}, 1);
        unsigned long long lean = 0, counted = 0, dns = 0, dn = 0;
        const char *p = finish(&a, 60) && a.status == 0 ? strstr(slurp(a.out), "\"lean\":") : NULL;
        CHECK(p && sscanf(p, "\"lean\":%llu,\"counted\":%llu,\"driver_ns\":%llu,\"driver_n\":%llu", &lean, &counted, &dns, &dn) == 4,
              "case %d: exit %d: %s %s", i, a.status, slurp(a.out), slurp(a.err));
        if (c[i].timed) {
            CHECK(dn == 1200 && dns >= 1200ull * 100000ull && dns < 1200ull * 100000ull * 20,
                  "case %d (window %u us): %llu launches timed in %llu ns, want 1200 in 120 ms or more", i, c[i].win, dn, dns);
            CHECK(c[i].win ? lean == 0 : lean > 0, "case %d (window %u us): %llu lean", i, c[i].win, lean);
        } else
            CHECK(dn == 0 && dns == 0, "case %d (%s): %llu launches timed, want none", i, c[i].env ? c[i].env : "unset", dn);
        if (c[i].env && strcmp(c[i].env, "XQ_TIME_LAUNCHES=1"))
            CHECK(strstr(slurp(a.err), "ignoring XQ_TIME_LAUNCHES='yes': not 0 or 1") != NULL, "case %d: not said: %s", i, slurp(a.err));
        printf("    window %u us%s%s: %llu launches timed inside the driver, %.1f us each; %llu lean\n", c[i].win, c[i].env ? ", " : "",
               c[i].env ? c[i].env : "", dn, dn ? dns / 1000.0 / (double)dn : 0.0, lean);
    }
}
