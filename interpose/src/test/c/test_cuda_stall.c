/* test_cuda_stall.c: level 2 (XQ_STALL=1): launched work held on the device, without it, an older node, the node killed. */
#define _GNU_SOURCE
#include "test_cuda.h"

/* Level 2 (XQ_STALL=1): the node holds the stream once (the tracker notes it), then lets ten
 * 20 ms kernels be launched at once, then closes the gate while the first runs: the launched
 * kernels behind it stay on the stream (at most the running one and one racing the close end
 * in 150 ms, against seven without the guards), and all run once the gate opens. */
static int ten_in_flight(xq_slot *s) { return LD(&s->in_flight) >= 10; }
void test_stall(void)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, (const char *[]){"XQ_STALL=1", "XQ_MARKS=all", "XQ_LOG=2", NULL},
          (const char *[]){"--stream", "new", "--tasks", "1", "--kernels", "10", "--us", "20000", "--check", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, one_pending, 2.0), "the first launch was not held");
    if (!s) {
        finish(&a, 1);
        return;
    }
    pause_s(0.05); /* the tracker sees the stream held */
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    tn_send(0, gate);
    CHECK(wait_until(s, ten_in_flight, 2.0), "in flight %u, want 10", LD(&s->in_flight));
    pause_s(0.005);
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST); /* held while the first kernel runs */
    uint64_t at_close = LD(&s->completed);
    pause_s(0.15);
    uint64_t while_held = LD(&s->completed) - at_close;
    CHECK(while_held <= 2, "%lu kernels of 20 ms ended in 150 ms while the stream was held (want at most 2)",
          (unsigned long)while_held);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    tn_send(0, gate);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(LD(&s->completed) >= 10, "completed %lu, want the 10 kernels (and the check's commands)", (unsigned long)LD(&s->completed));
    const char *err = slurp(a.err);
    unsigned long guarded = 0, holds = 0;
    const char *l = strstr(err, "level 2 (XQ_STALL=1): ");
    if (l)
        sscanf(l, "level 2 (XQ_STALL=1): %lu launches guarded, %lu holds", &guarded, &holds);
    CHECK(guarded >= 10 && holds >= 1, "guarded %lu, holds %lu: %s", guarded, holds, err);
    int hello = tn_find(0, 0, "HELLO ", 1.0);
    CHECK(hello >= 0 && strstr(line_text(hello), " cuda,lv2"), "HELLO does not say lv2: %s", hello >= 0 ? line_text(hello) : "-");
    printf("    %lu ended while held; %lu launches guarded, %lu holds\n", (unsigned long)while_held, guarded, holds);
}

/* Without XQ_STALL nothing is guarded: the same run lets the launched kernels go on while held. */
void test_stall_off(void)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, (const char *[]){"XQ_MARKS=all", "XQ_LOG=2", NULL},
          (const char *[]){"--stream", "new", "--tasks", "1", "--kernels", "10", "--us", "20000", "--check", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, one_pending, 2.0), "the first launch was not held");
    if (!s) {
        finish(&a, 1);
        return;
    }
    pause_s(0.05);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    tn_send(0, gate);
    CHECK(wait_until(s, ten_in_flight, 2.0), "in flight %u, want 10", LD(&s->in_flight));
    pause_s(0.005);
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
    uint64_t at_close = LD(&s->completed);
    pause_s(0.15);
    uint64_t while_held = LD(&s->completed) - at_close;
    CHECK(while_held >= 4, "%lu ended in 150 ms while held at level 1 (want the launched ones to go on)", (unsigned long)while_held);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    tn_send(0, gate);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(!strstr(slurp(a.err), "level 2 (XQ_STALL=1)"), "guards without XQ_STALL: %s", slurp(a.err));
    int hello = tn_find(0, 0, "HELLO ", 1.0);
    CHECK(hello >= 0 && !strstr(line_text(hello), "lv2"), "HELLO says lv2 without XQ_STALL: %s", hello >= 0 ? line_text(hello) : "-");
}

/* A node that does not know the capability lv2 refuses the HELLO: the interposer registers again
 * without it, and the process is scheduled (at level 1: nothing guards without a node's gate). */
void test_stall_old_node(void)
{
    tn_start(SOCK, 16);
    tn_refuse_capability("lv2");
    app a;
    start(&a, (const char *[]){"XQ_STALL=1", NULL}, (const char *[]){"--stream", "new", "--tasks", "1", "--kernels", "2",
                                                                   "--us", "500", "--check", NULL});
    char text[160];
    int slot = stream_slot(-1, 0, text, sizeof text);
    CHECK(slot >= 0, "no STREAM: the process did not register after the refusal");
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    int first = tn_find(0, -1, "HELLO ", 1.0), second = first >= 0 ? tn_find(first + 1, -1, "HELLO ", 1.0) : -1;
    CHECK(first >= 0 && strstr(line_text(first), "lv2"), "the first HELLO did not offer lv2");
    CHECK(second >= 0 && !strstr(line_text(second), "lv2"), "no second HELLO without lv2");
    tn_refuse_capability("");
}

/* The node dies while a stream is held on the device: the interposer lets it go at once. */
void test_stall_node_killed(void)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, (const char *[]){"XQ_STALL=1", "XQ_MARKS=all", NULL},
          (const char *[]){"--stream", "new", "--tasks", "1", "--kernels", "10", "--us", "20000", "--check", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, one_pending, 2.0), "the first launch was not held");
    if (!s) {
        finish(&a, 1);
        return;
    }
    pause_s(0.05);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    tn_send(0, gate);
    CHECK(wait_until(s, ten_in_flight, 2.0), "in flight %u, want 10", LD(&s->in_flight));
    pause_s(0.005);
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
    pause_s(0.05);
    tn_kill();
    CHECK(finish(&a, 10) && a.status == 0, "a stream held on the device outlived its node: exit %d: %s", a.status, slurp(a.err));
}
