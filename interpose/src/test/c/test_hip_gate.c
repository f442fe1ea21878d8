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
