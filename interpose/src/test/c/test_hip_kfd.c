/* test_hip_kfd.c: Lv3 through the fake KFD: the node suspends and resumes a stream's KFD queue. */
#define _GNU_SOURCE
#include "test_hip.h"

static const char *lv3_line(int sess, const char *prefix, double timeout_s)
{
    int i = tn_find(0, sess, prefix, timeout_s);
    return i < 0 ? NULL : line_text(i);
}

/* Starts an app with deep in-flight work under the fake KFD and an lv3 node; returns its slot. */
static xq_slot *lv3_start(app *a, const char *const *env, int *slot)
{
    tn_start(SOCK, 16);
    tn_ok_options("lv3");
    start_kfd(a, env, (const char *[]){"--tasks", "2", "--kernels", "12", "--us", "20000", NULL});
    *slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = *slot >= 0 ? tn_slot(0, (unsigned)*slot) : NULL;
    CHECK(s && wait_until(s, deep, 3.0), "no deep in-flight work: %s", s ? "" : "no STREAM");
    return s;
}

void test_lv3_hello(void)
{
    tn_start(SOCK, 16);
    app a;
    start_kfd(&a, NULL, (const char *[]){"--tasks", "1", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    char want[128];
    snprintf(want, sizeof want, "HELLO 1 %d xq-hip-app - hip,lv3", (int)a.pid);
    CHECK(!strcmp(line_text(0), want), "'%s', want '%s'", line_text(0), want);
    tn_start(SOCK, 16); /* XQ_LV3=0: not offered */
    start_kfd(&a, (const char *[]){"XQ_LV3=0", NULL}, (const char *[]){"--tasks", "1", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    snprintf(want, sizeof want, "HELLO 1 %d xq-hip-app - hip", (int)a.pid);
    CHECK(!strcmp(line_text(0), want), "XQ_LV3=0: '%s', want '%s'", line_text(0), want);
}

/* The node holds the stream and asks for an interrupt: the queue stops with work in flight (no
 * completion while suspended, though the double would finish a kernel every 20 ms); RESUME and
 * an open gate let everything finish. */
void test_lv3_suspend_resume(void)
{
    app a;
    int slot;
    xq_slot *s = lv3_start(&a, NULL, &slot);
    if (!s) return (void)finish(&a, 1);
    char line[64], want[64];
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
    snprintf(line, sizeof line, "SUSPEND %d", slot);
    tn_send(0, line);
    snprintf(want, sizeof want, "LV3 %d suspended", slot);
    const char *got = lv3_line(0, "LV3 ", 3.0);
    CHECK(got && !strcmp(got, want), "'%s', want '%s'", got ? got : "(none)", want);
    pause_s(0.06); /* a kernel already running may end */
    uint64_t c0 = LD(&s->completed);
    uint32_t f0 = LD(&s->in_flight);
    pause_s(0.3);
    CHECK(LD(&s->completed) == c0 && f0 > 0, "completed %lu -> %lu while suspended (in flight %u)", (unsigned long)c0,
          (unsigned long)LD(&s->completed), f0);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    snprintf(line, sizeof line, "RESUME %d", slot);
    tn_send(0, line);
    snprintf(want, sizeof want, "LV3 %d resumed", slot);
    int i = tn_find(0, 0, want, 3.0);
    CHECK(i >= 0, "no '%s'", want);
    snprintf(line, sizeof line, "GATE %d", slot);
    tn_send(0, line);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(s->completed == 2 * 16 && s->in_flight == 0, "completed %lu", (unsigned long)s->completed);
}

/* A suspend the KFD refuses leaves the queue running (work completes) and is reported. */
void test_lv3_suspend_fails(void)
{
    app a;
    int slot;
    xq_slot *s = lv3_start(&a, (const char *[]){"XQ_FAKE_KFD_ERROR=EBUSY:suspend", NULL}, &slot);
    if (!s) return (void)finish(&a, 1);
    char line[64], want[64];
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
    snprintf(line, sizeof line, "SUSPEND %d", slot);
    tn_send(0, line);
    snprintf(want, sizeof want, "LV3 %d failed EBUSY", slot);
    const char *got = lv3_line(0, "LV3 ", 3.0);
    CHECK(got && !strcmp(got, want), "'%s', want '%s'", got ? got : "(none)", want);
    uint64_t c0 = LD(&s->completed);
    pause_s(0.3);
    CHECK(LD(&s->completed) > c0, "no completion after a failed suspend: the queue must run on");
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    snprintf(line, sizeof line, "GATE %d", slot);
    tn_send(0, line);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
}

/* Without "lv3" in the node's OK the interposer touches no queue. */
void test_lv3_not_wanted(void)
{
    tn_start(SOCK, 16);
    app a;
    start_kfd(&a, NULL, (const char *[]){"--tasks", "1", "--kernels", "6", "--us", "20000", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    char line[64], want[64];
    snprintf(line, sizeof line, "SUSPEND %d", slot);
    tn_send(0, line);
    snprintf(want, sizeof want, "LV3 %d failed not-offered", slot);
    const char *got = lv3_line(0, "LV3 ", 3.0);
    CHECK(got && !strcmp(got, want), "'%s', want '%s'", got ? got : "(none)", want);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
}

/* The node dies with the queue suspended: the interposer resumes it, the program finishes. */
void test_lv3_node_killed_while_suspended(void)
{
    app a;
    int slot;
    xq_slot *s = lv3_start(&a, NULL, &slot);
    if (!s) return (void)finish(&a, 1);
    char line[64];
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
    snprintf(line, sizeof line, "SUSPEND %d", slot);
    tn_send(0, line);
    CHECK(tn_find(0, 0, "LV3 ", 3.0) >= 0 && strstr(line_text(tn_find(0, 0, "LV3 ", 0)), "suspended"), "not suspended");
    tn_kill();
    CHECK(finish(&a, 10) && a.status == 0, "exit %d after the node died with the queue suspended: %s", a.status,
          slurp(a.err));
}

/* A gate opened without a RESUME (the line lost) does not leave the queue stopped. */
void test_lv3_open_gate_resumes(void)
{
    app a;
    int slot;
    xq_slot *s = lv3_start(&a, NULL, &slot);
    if (!s) return (void)finish(&a, 1);
    char line[64], want[64];
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
    snprintf(line, sizeof line, "SUSPEND %d", slot);
    tn_send(0, line);
    snprintf(want, sizeof want, "LV3 %d suspended", slot);
    CHECK(tn_find(0, 0, want, 3.0) >= 0, "not suspended");
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST); /* no RESUME, no GATE */
    snprintf(want, sizeof want, "LV3 %d resumed", slot);
    CHECK(tn_find(0, 0, want, 3.0) >= 0, "not resumed behind an open gate");
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
}

/* Suspends are spaced by XQ_KFD_MIN_INTERVAL_US (hal-lv3-kfd's rate limit): the second one
 * waits; the check is a lower bound only. */
void test_lv3_rate_limit(void)
{
    app a;
    int slot;
    xq_slot *s = lv3_start(&a, (const char *[]){"XQ_KFD_MIN_INTERVAL_US=300000", NULL}, &slot);
    if (!s) return (void)finish(&a, 1);
    char sus[64], res[64], ok[64];
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
    snprintf(sus, sizeof sus, "SUSPEND %d", slot);
    snprintf(res, sizeof res, "RESUME %d", slot);
    snprintf(ok, sizeof ok, "LV3 %d suspended", slot);
    tn_send(0, sus);
    int i1 = tn_find(0, 0, ok, 3.0);
    tn_send(0, res);
    int r = tn_find(0, 0, "LV3 ", 0) >= 0 ? tn_find(i1 + 1, 0, "LV3 ", 3.0) : -1;
    double t1 = tn_now();
    tn_send(0, sus);
    int i2 = r >= 0 ? tn_find(r + 1, 0, ok, 3.0) : -1;
    CHECK(i1 >= 0 && r >= 0 && i2 >= 0, "lines %d %d %d", i1, r, i2);
    if (i2 >= 0) {
        tn_line l1 = tn_get(i1), l2 = tn_get(i2);
        CHECK(l2.t - l1.t >= 0.29, "second suspend %.1f ms after the first (at least 300 ms apart)", (l2.t - l1.t) * 1e3);
        (void)t1;
    }
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    tn_send(0, res);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    tn_send(0, gate);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
}

/* The null stream launched before any node was there: mapped to its KFD queue at its first
 * launch under a node that wants Lv3, and then suspendable. */
void test_lv3_default_stream_late_node(void)
{
    tn_ok_options("lv3");
    app a;
    start_kfd(&a, NULL, (const char *[]){"--stream", "default", "--tasks", "12", "--kernels", "12", "--us", "20000", NULL});
    pause_s(0.3); /* launching, unscheduled */
    tn_start(SOCK, 16);
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, deep, 3.0), "no deep in-flight work under the node");
    if (!s) return (void)finish(&a, 1);
    char line[64], want[64];
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
    snprintf(line, sizeof line, "SUSPEND %d", slot);
    tn_send(0, line);
    snprintf(want, sizeof want, "LV3 %d suspended", slot);
    const char *got = lv3_line(0, "LV3 ", 3.0);
    CHECK(got && !strcmp(got, want), "'%s', want '%s'", got ? got : "(none)", want);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    snprintf(line, sizeof line, "RESUME %d", slot);
    tn_send(0, line);
    snprintf(line, sizeof line, "GATE %d", slot);
    tn_send(0, line);
    CHECK(finish(&a, 15) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
}

static int busy(xq_slot *s) { return LD(&s->in_flight) > 0; }
static int six_done(xq_slot *s) { return LD(&s->completed) >= 6 && !LD(&s->in_flight); }
static int twenty_launched(xq_slot *s) { return LD(&s->launched) >= 20; }

/* Two streams of one process linked by an event (xq-hip-app --link): B, of the greatest priority,
 * waits for what A launched, and the node holds A behind busy B, as a priority policy does. A
 * suspend of A is made only once B is done: a queue stopped under the event B waits for stops
 * both for good (the node keeps A held while B is busy). On the build before, B never ended. */
void test_lv3_link_suspend_waits(void)
{
    tn_start(SOCK, 16);
    tn_ok_options("lv3");
    app a;
    start_kfd(&a, NULL, (const char *[]){"--link", "0", "--kernels", "6", "--us", "20000", NULL});
    int sa = stream_slot(0, 0, NULL, 0), sb = stream_slot(0, 1, NULL, 0);
    xq_slot *A = sa >= 0 ? tn_slot(0, (unsigned)sa) : NULL, *B = sb >= 0 ? tn_slot(0, (unsigned)sb) : NULL;
    CHECK(A && B && wait_until(B, busy, 3.0) && LD(&A->in_flight) > 0, "no work in flight on both streams (slots %d %d)", sa, sb);
    if (!A || !B) return (void)finish(&a, 1);
    char line[64], want[64];
    __atomic_store_n(&A->gate, 1, __ATOMIC_SEQ_CST);
    snprintf(line, sizeof line, "SUSPEND %d", sa);
    tn_send(0, line);
    CHECK(wait_until(B, six_done, 3.0), "B did not end behind A's suspend: completed %lu, in flight %u",
          (unsigned long)LD(&B->completed), LD(&B->in_flight));
    snprintf(want, sizeof want, "LV3 %d suspended", sa);
    CHECK(tn_find(0, 0, want, 3.0) >= 0, "A not suspended once B was done");
    CHECK(tn_find(0, 0, "LV3 ", 0) < 0 || !strstr(line_text(tn_find(0, 0, "LV3 ", 0)), "failed"), "'%s'",
          line_text(tn_find(0, 0, "LV3 ", 0)));
    __atomic_store_n(&A->gate, 0, __ATOMIC_SEQ_CST);
    snprintf(line, sizeof line, "RESUME %d", sa);
    tn_send(0, line);
    snprintf(line, sizeof line, "GATE %d", sa);
    tn_send(0, line);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
}

/* The same link made while A is already suspended: B's work waiting for it makes the interposer
 * resume A (said to the node), and suspend it again once B is done, the gate still closed. */
void test_lv3_link_resumes(void)
{
    tn_start(SOCK, 16);
    tn_ok_options("lv3");
    app a;
    start_kfd(&a, NULL, (const char *[]){"--link", "400", "--kernels", "20", "--us", "20000", NULL});
    int sa = stream_slot(0, 0, NULL, 0);
    xq_slot *A = sa >= 0 ? tn_slot(0, (unsigned)sa) : NULL;
    /* all twenty launched first: a hold before the last would hold the program's thread on A */
    CHECK(A && wait_until(A, twenty_launched, 3.0), "A's twenty kernels not launched");
    if (!A) return (void)finish(&a, 1);
    char line[64], sus[64], res[64];
    __atomic_store_n(&A->gate, 1, __ATOMIC_SEQ_CST);
    snprintf(line, sizeof line, "SUSPEND %d", sa);
    tn_send(0, line);
    snprintf(sus, sizeof sus, "LV3 %d suspended", sa);
    snprintf(res, sizeof res, "LV3 %d resumed", sa);
    int i1 = tn_find(0, 0, sus, 3.0);
    CHECK(i1 >= 0, "A not suspended before B came");
    int sb = stream_slot(0, 1, NULL, 0);
    xq_slot *B = sb >= 0 ? tn_slot(0, (unsigned)sb) : NULL;
    CHECK(B && wait_until(B, busy, 3.0), "B did not launch");
    int i2 = i1 >= 0 ? tn_find(i1 + 1, 0, res, 3.0) : -1;
    CHECK(i2 >= 0, "A not resumed when B's work came to wait for it");
    CHECK(B && wait_until(B, six_done, 5.0), "B did not end");
    CHECK(i2 >= 0 && tn_find(i2 + 1, 0, sus, 3.0) >= 0, "A not suspended again once B was done");
    __atomic_store_n(&A->gate, 0, __ATOMIC_SEQ_CST);
    snprintf(line, sizeof line, "RESUME %d", sa);
    tn_send(0, line);
    snprintf(line, sizeof line, "GATE %d", sa);
    tn_send(0, line);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
}
