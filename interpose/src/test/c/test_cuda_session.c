/* test_cuda_session.c: the session with the node: registration, a node killed, restarted, absent or frozen, SPACE. */
#define _GNU_SOURCE
#include "test_cuda.h"

void test_registration(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "3", "--kernels", "2", "--us", "2000", "--stream", "new", "--check",
                                      "--linger-ms", "300", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d, stderr: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    char want[128], text[600];
    snprintf(want, sizeof want, "HELLO 1 %d xq-cuda-app -", (int)a.pid);
    CHECK(tn_sessions() == 1, "%d sessions", tn_sessions());
    CHECK(tn_nlines() > 1 && !strcmp(line_text(0), want), "first line '%s', want '%s'", line_text(0), want);
    CHECK(tn_peer_pid(0) == a.pid, "peer pid %d, app %d", tn_peer_pid(0), (int)a.pid);
    CHECK(!strcmp(line_text(1), "MAPPED"), "second line '%s'", line_text(1));
    int slot = stream_slot(0, 0, text, sizeof text);
    char key[64];
    int dev = -9, prio = -9, least = -9, greatest = -9;
    char label[32] = "", pci[32] = "";
    CHECK(slot >= 0 && sscanf(text, "STREAM %*d %63s %d %d %d %d %31s %31s", key, &dev, &prio, &least, &greatest, label,
                              pci) == 7,
          "'%s'", text);
    CHECK(dev == 0 && prio == 0 && least == 0 && greatest == -5 && !strcmp(label, "s1") && strcmp(key, "0") &&
              !strcmp(pci, "0000:10:00.0"),
          "'%s' (want the fake's device 0 at PCI 0000:10:00.0)", text);
    char wake[32], close_[32];
    snprintf(wake, sizeof wake, "WAKE %d", slot);
    snprintf(close_, sizeof close_, "CLOSE %d", slot);
    CHECK(tn_count(0, wake) >= 2, "%d WAKE lines (ready, idle)", tn_count(0, wake));
    CHECK(tn_count(0, close_) == 1, "no CLOSE after cuStreamDestroy");
    xq_slot *s = tn_slot(0, (unsigned)slot);
    /* per task: HtoD, inc, 2 spins, DtoH, host function */
    CHECK(s && s->launched == 18 && s->completed == 18 && s->in_flight == 0 && s->pending == 0 && s->failed == 0,
          "launched %lu completed %lu in_flight %u pending %u failed %lu", s ? (unsigned long)s->launched : 0,
          s ? (unsigned long)s->completed : 0, s ? s->in_flight : 0, s ? s->pending : 0, s ? (unsigned long)s->failed : 0);
    CHECK(s && s->run_ns >= 3 * 2 * 2000000ull * 9 / 10 && s->estimate_ns > 0 && s->ready_since_ns == 0 &&
              s->completion_seq > 0,
          "run_ns %lu estimate %lu ready_since %lu seq %u", s ? (unsigned long)s->run_ns : 0,
          s ? (unsigned long)s->estimate_ns : 0, s ? (unsigned long)s->ready_since_ns : 0, s ? s->completion_seq : 0);
    CHECK(!*slurp(a.err), "stderr: %s", slurp(a.err));
}

void test_priorities_and_names(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, (const char *[]){"XQ_PRIORITY=7", "XQ_NAME=my app!", "CUDA_VISIBLE_DEVICES=3", NULL},
          (const char *[]){"--tasks", "1", "--stream", "prio:-3", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d", a.status);
    char want[128], text[600];
    snprintf(want, sizeof want, "HELLO 1 %d my_app_ 7", (int)a.pid);
    CHECK(!strcmp(line_text(0), want), "'%s', want '%s'", line_text(0), want);
    int dev = -9, prio = -9, least = -9, greatest = -9;
    CHECK(stream_slot(0, 0, text, sizeof text) >= 0 &&
              sscanf(text, "STREAM %*d %*s %d %d %d %d", &dev, &prio, &least, &greatest) == 4 && dev == 3 &&
              prio == -3 && least == 0 && greatest == -5,
          "'%s' (want device 3, prio -3 in [0,-5])", text);
}

/* CUDA_VISIBLE_DEVICES as UUIDs: not mapped; the device as the process sees it, said once. */
void test_visible_devices_uuid(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, (const char *[]){"CUDA_VISIBLE_DEVICES=GPU-5f3e2d1c-aaaa-bbbb-cccc-0123456789ab", "FAKECUDA_PCI=1:3B:0",
                               NULL},
          (const char *[]){"--tasks", "2", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d", a.status);
    char text[600], pci[32] = "";
    int dev = -9;
    CHECK(stream_slot(0, 0, text, sizeof text) >= 0 &&
              sscanf(text, "STREAM %*d %*s %d %*d %*d %*d %*s %31s", &dev, pci) == 2 && dev == 0 &&
              !strcmp(pci, "0001:3b:00.0"),
          "'%s' (want device 0 at PCI 0001:3b:00.0, what the driver says)", text);
    const char *err = slurp(a.err);
    CHECK(count_lines(err) == 1 &&
              strstr(err, "CUDA_VISIBLE_DEVICES=GPU-5f3e2d1c-aaaa-bbbb-cccc-0123456789ab is not a list of device ordinals"),
          "stderr: %s", err);
}

/* A driver that does not say where the device is: STREAM without the PCI field, as before. */
void test_pci_unknown(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, (const char *[]){"FAKECUDA_PCI=none", NULL}, (const char *[]){"--tasks", "1", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d", a.status);
    char text[600], label[32] = "", more[32] = "";
    CHECK(stream_slot(0, 0, text, sizeof text) >= 0 &&
              sscanf(text, "STREAM %*d %*s %*d %*d %*d %*d %31s %31s", label, more) == 1 && !strcmp(label, "default"),
          "'%s' (want 7 fields, no PCI bus id)", text);
    CHECK(!*slurp(a.err), "stderr: %s", slurp(a.err));
}

void test_bad_priority(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, (const char *[]){"XQ_PRIORITY=abc", NULL}, (const char *[]){"--tasks", "1", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d", a.status);
    const char *err = slurp(a.err);
    CHECK(count_lines(err) == 1 && strstr(err, "XQ_PRIORITY='abc'") && strstr(err, "[-1000,1000]"), "stderr: %s", err);
    char want[128];
    snprintf(want, sizeof want, "HELLO 1 %d xq-cuda-app -", (int)a.pid);
    CHECK(!strcmp(line_text(0), want), "'%s'", line_text(0));
}

void test_default_stream_labels(void)
{
    const char *modes[][3] = {{"default", "direct", "default"}, {"ptds", "direct", "ptds"},
                              {"ptds", "procaddress", "ptds"}, {"ptdsh", "direct", "ptds"},
                              {"default", "procaddress", "default"}};
    for (int i = 0; i < 5; i++) {
        tn_start(SOCK, 16);
        app a;
        start(&a, NULL, (const char *[]){"--tasks", "1", "--stream", modes[i][0], "--via", modes[i][1], NULL});
        CHECK(finish(&a, 10) && a.status == 0, "exit %d", a.status);
        char text[600], label[32] = "", key[32] = "";
        CHECK(stream_slot(0, 0, text, sizeof text) >= 0 &&
                  sscanf(text, "STREAM %*d %31s %*d %*d %*d %*d %31s", key, label) == 2 &&
                  !strcmp(label, modes[i][2]) && !strcmp(key, "0"),
              "--stream %s --via %s: '%s'", modes[i][0], modes[i][1], text);
        CHECK(tn_count(0, "STREAM") == 1, "--stream %s: %d STREAM lines", modes[i][0], tn_count(0, "STREAM"));
    }
}

/* A thread that makes device 1's context current for every other launch on the default stream
 * (set and set back, or pushed and popped, or one made by cuCtxCreate for the first of them;
 * linked, or through cuGetProcAddress; on the lean path, and under a threshold through the gate) and back: each
 * launch is counted on the default stream of the context it went in (the interposer keeps each
 * thread's current context, and those calls drop it); at XQ_LOG=2 every gated call checks the
 * kept context against the driver's and finds it never stale */
void test_ctx_switch(void)
{
    const char *modes[][3] = {{"set", "direct", NULL},         {"push", "direct", NULL},
                              {"set", "procaddress", NULL},    {"push", "procaddress", "XQ_LOG=2"},
                              {"create", "direct", NULL},      {"create", "procaddress", NULL},
                              {"push", "procaddress", NULL}};
    for (int i = 0; i < 7; i++) {
        tn_start(SOCK, 16);
        if (i == 6) /* under a threshold: every launch through the gate (the full path), the context kept there too */
            tn_defaults(0, 64, 32, 0);
        app a;
        start(&a, (const char *[]){"FAKECUDA_DEVICES=2", modes[i][2], NULL},
              (const char *[]){"--tasks", "6", "--kernels", "8", "--us", "20", "--stream", "default", "--switch", modes[i][0],
                               "--via", modes[i][1], NULL});
        CHECK(finish(&a, 10) && a.status == 0, "--switch %s --via %s: exit %d: %s", modes[i][0], modes[i][1], a.status,
              slurp(a.err));
        unsigned long got[2] = {0, 0};
        int seen[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            char text[600];
            int dev = -1, slot = stream_slot(0, k, text, sizeof text);
            if (slot >= 0 && sscanf(text, "STREAM %*d %*s %d", &dev) == 1 && dev >= 0 && dev < 2)
                got[dev] = (unsigned long)LD(&tn_slot(0, (unsigned)slot)->launched), seen[dev]++;
        }
        unsigned long want1 = i == 4 || i == 5 ? 12 : 24; /* create: device 1's from the fourth task on */
        CHECK(seen[0] == 1 && seen[1] == 1 && got[0] == 48 - want1 && got[1] == want1,
              "--switch %s --via %s: launched %lu on device 0's default stream, %lu on device 1's (want %lu, %lu; streams %d, %d)",
              modes[i][0], modes[i][1], got[0], got[1], 48 - want1, want1, seen[0], seen[1]);
        if (modes[i][2]) {
            unsigned long stale = 99;
            const char *p = strstr(slurp(a.err), "the kept one found changed by a call not wrapped ");
            CHECK(p && sscanf(p, "the kept one found changed by a call not wrapped %lu", &stale) == 1 && stale == 0,
                  "stale %lu: %s", stale, slurp(a.err));
        }
    }
}

/* the node dies while two threads are held: both go at once, the work is right */
void test_node_killed(void)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, NULL, (const char *[]){"--threads", "2", "--stream", "new", "--tasks", "3", "--kernels", "2", "--us",
                                      "1000", "--check", NULL});
    int s0 = stream_slot(0, 0, NULL, 0), s1 = stream_slot(0, 1, NULL, 0);
    CHECK(s0 >= 0 && s1 >= 0, "two streams");
    if (s0 < 0 || s1 < 0) {
        finish(&a, 5);
        return;
    }
    CHECK(wait_until(tn_slot(0, (unsigned)s0), one_pending, 2) && wait_until(tn_slot(0, (unsigned)s1), one_pending, 2),
          "both held");
    pause_s(0.13); /* not a multiple of the 100 ms wait: the node's end must be what wakes them */
    double t0 = tn_now();
    tn_kill();
    int done = finish(&a, 5);
    double dt = tn_now() - t0;
    printf("    app finished %.1f ms after the node died (work: ~7 ms per thread)\n", dt * 1000);
    CHECK(done && a.status == 0 && dt < 0.05, "exit %d after %.1f ms (held threads go at once)", a.status,
          dt * 1000);
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    const char *err = slurp(a.err);
    CHECK(count_lines(err) == 1 && strstr(err, "lost"), "stderr: %s", err);
}

/* the node restarts: the process registers again, its counts carry over */
void test_node_restart(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, NULL, (const char *[]){"--seconds", "2.2", "--stream", "new", "--kernels", "1", "--us", "1000",
                                      "--period-ms", "5", "--check", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    pause_s(0.4);
    uint64_t before = slot >= 0 ? LD(&tn_slot(0, (unsigned)slot)->launched) : 0;
    tn_kill();
    pause_s(0.3);
    tn_start(SOCK, 16);
    int hello = tn_find(0, 0, "HELLO 1 ", 2.0);
    char text[600];
    int slot2 = stream_slot(0, 0, text, sizeof text);
    CHECK(hello >= 0 && slot2 >= 0 && strstr(text, " s1"), "registered again: HELLO %d, '%s'", hello, text);
    pause_s(0.3);
    xq_slot *s = slot2 >= 0 ? tn_slot(0, (unsigned)slot2) : NULL;
    CHECK(s && before > 0 && LD(&s->launched) > before, "launched %lu before, %lu in the new session",
          (unsigned long)before, s ? (unsigned long)s->launched : 0);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d", a.status);
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    const char *err = slurp(a.err);
    CHECK(count_lines(err) == 2 && strstr(err, "lost") && strstr(err, "back"), "stderr: %s", err);
}

void test_no_node(void)
{
    tn_kill();
    unlink(SOCK);
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "3", "--check", "--stream", "new", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d", a.status);
    const char *err = slurp(a.err);
    CHECK(count_lines(err) == 1 && !strncmp(err, "xq: no node at ", 15) && strstr(err, "running unscheduled"),
          "stderr: %s", err);
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    start(&a, (const char *[]){"XQ_LOG=0", NULL}, (const char *[]){"--tasks", "1", NULL});
    CHECK(finish(&a, 10) && a.status == 0 && !*slurp(a.err), "XQ_LOG=0: exit %d, stderr: %s", a.status, slurp(a.err));
}

/* ------------------------------------------------------------------ a frozen node
 * docs/processes.md "Faults": a node that stops (SIGSTOP) keeps its socket open and says nothing;
 * only its heartbeat in the session's header stops. The test node's tn_freeze() does the same. */

static xq_shm_header *header0(void)
{
    xq_slot *s = tn_slot(0, 0);
    return s ? (xq_shm_header *)((uint8_t *)s - XQ_SHM_HEADER) : NULL;
}

/* The node freezes while the thread waits behind its closed gate (defer 0: held in the launch,
 * XQ_DEFER=0; 1: its launches deferred, the thread in cuStreamSynchronize): within about a second
 * of the last heartbeat the process runs unscheduled, its tasks complete, one line says why; when
 * the node runs again its session has ended and the process registers anew. */
static void frozen_node(int defer)
{
    tn_start(SOCK, 16);
    tn_defaults(defer ? 0 : 1, 0, 0, 0);
    app a;
    start(&a, (const char *[]){defer ? "XQ_DEFER=1" : "XQ_DEFER=0", NULL},
          (const char *[]){"--via", "procaddress", "--stream", "new", "--tasks", "40", "--kernels", "4", "--us", "300",
                           "--linger-ms", "2500", defer ? NULL : "--check", NULL}); /* a checked task copies: never deferred */
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s, "no STREAM");
    if (!s) {
        finish(&a, 1);
        return;
    }
    if (defer) {
        CHECK(wait_until(s, launched_20, 3.0), "the app did not get going");
        __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
        pause_s(0.3);
        CHECK(LD(&s->pending) >= 2, "pending %u (want deferred launches)", LD(&s->pending));
    } else {
        CHECK(wait_until(s, one_pending, 2.0), "not held");
        pause_s(0.3);
    }
    uint64_t l0 = LD(&s->launched);
    xq_shm_header *h = header0();
    CHECK(h && LD(&h->heartbeat_ns), "no heartbeat in the header");
    CHECK(!exited(&a) && LD(&s->launched) == l0, "not held: launched %lu", (unsigned long)LD(&s->launched));
    int mark = tn_nlines();
    double t0 = tn_now();
    tn_freeze(1);
    const char *want = "not answering for 1 s (frozen?); running unscheduled";
    double end = t0 + 3.0;
    while (!strstr(slurp(a.out), "\"tasks\":40") && tn_now() < end)
        pause_s(0.005);
    double dt = tn_now() - t0;
    printf("    tasks done %.2f s after the node froze (heartbeat every 100 ms)\n", dt);
    CHECK(dt > 0.8 && dt < 1.5, "tasks done %.2f s after the freeze (want ~1 s): %s", dt, slurp(a.err));
    CHECK(strstr(slurp(a.out), defer ? "\"check\":\"off\"" : "\"check\":\"ok\""), "output: %s", slurp(a.out));
    CHECK(strstr(slurp(a.err), want), "stderr: %s", slurp(a.err));
    tn_freeze(0); /* it runs again: it sees its session ended, and the process comes back */
    CHECK(tn_find(mark, 0, "+EOF", 1.0) >= 0, "the frozen session did not end");
    int hello = -1;
    for (int at = mark; (at = tn_find(at, -1, "HELLO ", 3.0)) >= 0 && hello < 0; at++)
        if (tn_get(at).sess > 0)
            hello = at;
    CHECK(hello >= 0, "no new HELLO after the node ran again");
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    const char *err = slurp(a.err);
    CHECK(count_lines(err) == 2 && strstr(err, "xq: node at ") && strstr(err, want) && strstr(err, "is back; scheduled"),
          "stderr: %s", err);
}
void test_frozen_node_held(void) { frozen_node(0); }
void test_frozen_node_deferred(void) { frozen_node(1); }

/* Controls: a node whose heartbeat moves holds the thread as long as it likes (2 s, and across
 * 1.5 s in which the process itself was stopped: it sees the heartbeat moved when it runs on); an
 * older node that writes no heartbeat (0) holds it too. The gate opened, the task completes. */
void test_frozen_node_controls(void)
{
    for (int old = 0; old < 2; old++) {
        tn_start(SOCK, 16);
        tn_defaults(1, 0, 0, 0);
        if (old)
            tn_heartbeat(0);
        app a;
        start(&a, NULL, (const char *[]){"--stream", "new", "--tasks", "1", "--kernels", "2", "--check", NULL});
        int slot = stream_slot(0, 0, NULL, 0);
        xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
        CHECK(s && wait_until(s, one_pending, 2.0), "%s: not held", old ? "old node" : "heartbeat");
        if (!s) {
            finish(&a, 1);
            continue;
        }
        pause_s(old ? 2.0 : 0.5);
        if (!old) {
            kill(a.pid, SIGSTOP);
            pause_s(1.5);
            kill(a.pid, SIGCONT);
            pause_s(1.5);
        }
        xq_shm_header *h = header0();
        CHECK(h && (old ? LD(&h->heartbeat_ns) == 0 : LD(&h->heartbeat_ns) != 0), "heartbeat %lu",
              h ? (unsigned long)LD(&h->heartbeat_ns) : 0);
        CHECK(LD(&s->pending) == 1 && LD(&s->launched) == 0 && !exited(&a), "%s: let go: pending %u launched %lu",
              old ? "old node" : "heartbeat", LD(&s->pending), (unsigned long)LD(&s->launched));
        CHECK(tn_count(0, "+EOF") == 0, "%s: the session ended", old ? "old node" : "heartbeat");
        __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
        char gate[32];
        snprintf(gate, sizeof gate, "GATE %d", slot);
        tn_send(0, gate);
        CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
        CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
        CHECK(!*slurp(a.err), "%s: stderr: %s", old ? "old node" : "heartbeat", slurp(a.err));
        tn_kill();
    }
}

/* Space (docs/processes.md "Space and time"): the constructor asks the node before the program can
 * create a context; a node running MPS has the driver's client variables set, and the process
 * says "mps" when it registers. A shell shows the environment the program got. */
void test_space_mps(void)
{
    tn_start(SOCK, 16);
    tn_space("SPACE mps /tmp/xq-test-mps 50");
    app a;
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_PRIORITY=1", NULL},
               (const char *[]){"-c", "echo \"$CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_ACTIVE_THREAD_PERCENTAGE $XQ_SPACE\"", NULL}, 1);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(!strcmp(slurp(a.out), "/tmp/xq-test-mps 50 50\n"), "the program saw '%s'", slurp(a.out));
    char last[256], want[128];
    CHECK(tn_space_asks(last, sizeof last) == 1, "%d SPACE questions", tn_space_asks(NULL, 0));
    snprintf(want, sizeof want, "SPACE 1 %d ", (int)a.pid); /* then the program's name: sh or dash */
    size_t wl = strlen(want), ll = strlen(last);
    CHECK(!strncmp(last, want, wl) && ll > wl + 9 && !strcmp(last + ll - 9, " 1 narrow"), "asked '%s', want '%s<name> 1 narrow'",
          last, want);
    /* the whole device: no percentage, whatever the environment had */
    tn_space("SPACE mps /tmp/xq-test-mps 100");
    start_prog(&a, "/bin/sh", (const char *[]){"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=20", NULL},
               (const char *[]){"-c", "echo \"$CUDA_MPS_PIPE_DIRECTORY ${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-none}\"", NULL}, 1);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(!strcmp(slurp(a.out), "/tmp/xq-test-mps none\n"), "the program saw '%s'", slurp(a.out));
    /* a CUDA program registers as an MPS client */
    tn_space("SPACE mps /tmp/xq-test-mps 50");
    start(&a, NULL, (const char *[]){"--stream", "new", "--tasks", "1", "--kernels", "2", "--us", "300", "--check", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    int h = tn_find(0, -1, "HELLO ", 2.0);
    CHECK(h >= 0 && strstr(line_text(h), " cuda,mps"), "HELLO '%s' does not say cuda,mps", h >= 0 ? line_text(h) : "-");
    /* "low": MPS's lower client priority, unless the process set its own; an unknown word: no MPS */
    const char *prio[] = {"-c", "echo \"${CUDA_MPS_PIPE_DIRECTORY:-none} ${CUDA_MPS_CLIENT_PRIORITY:-none}\"", NULL};
    tn_space("SPACE mps /tmp/xq-test-mps 50 low");
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_PRIORITY=1", NULL}, prio, 1);
    CHECK(finish(&a, 10) && !strcmp(slurp(a.out), "/tmp/xq-test-mps 1\n"), "low: the program saw '%s'", slurp(a.out));
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_PRIORITY=1", "CUDA_MPS_CLIENT_PRIORITY=0", NULL}, prio, 1);
    CHECK(finish(&a, 10) && !strcmp(slurp(a.out), "/tmp/xq-test-mps 0\n"), "low, the process's own: the program saw '%s'", slurp(a.out));
    tn_space("SPACE mps /tmp/xq-test-mps 100 narrow low");
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_PRIORITY=1", NULL}, prio, 1);
    CHECK(finish(&a, 10) && !strcmp(slurp(a.out), "/tmp/xq-test-mps 1\n"), "narrow low: the program saw '%s'", slurp(a.out));
    tn_space("SPACE mps /tmp/xq-test-mps 50");
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_PRIORITY=2", NULL}, prio, 1);
    CHECK(finish(&a, 10) && !strcmp(slurp(a.out), "/tmp/xq-test-mps none\n"), "no low: the program saw '%s'", slurp(a.out));
    tn_space("SPACE mps /tmp/xq-test-mps 50 lowest");
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_PRIORITY=1", NULL}, prio, 1);
    CHECK(finish(&a, 10) && !strcmp(slurp(a.out), "none none\n"), "an unknown word: the program saw '%s'", slurp(a.out));
}

/* No question when the process has its own MPS setting, inherits its parent's share, or says
 * XQ_MPS=0; a node without MPS leaves the environment alone and the HELLO without "mps". */
void test_space_not_asked(void)
{
    tn_start(SOCK, 16);
    tn_space("SPACE mps /tmp/xq-test-mps 50");
    app a;
    const char *show[] = {"-c", "echo \"$CUDA_MPS_PIPE_DIRECTORY ${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-none}\"", NULL};
    start_prog(&a, "/bin/sh", (const char *[]){"CUDA_MPS_PIPE_DIRECTORY=/tmp/users-own", NULL}, show, 1);
    CHECK(finish(&a, 10) && !strcmp(slurp(a.out), "/tmp/users-own none\n"), "the program saw '%s'", slurp(a.out));
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_MPS=0", NULL}, show, 1);
    CHECK(finish(&a, 10) && !strcmp(slurp(a.out), " none\n"), "the program saw '%s'", slurp(a.out));
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_SPACE=50", "CUDA_MPS_PIPE_DIRECTORY=/tmp/parents", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50", NULL},
               show, 1);
    CHECK(finish(&a, 10) && !strcmp(slurp(a.out), "/tmp/parents 50\n"), "the program saw '%s'", slurp(a.out));
    CHECK(tn_space_asks(NULL, 0) == 0, "%d SPACE questions", tn_space_asks(NULL, 0));
    tn_space("SPACE none off");
    start(&a, NULL, (const char *[]){"--stream", "new", "--tasks", "1", "--kernels", "2", "--us", "300", "--check", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    int h = tn_find(0, -1, "HELLO ", 2.0);
    CHECK(h >= 0 && !strstr(line_text(h), "mps"), "HELLO '%s' says mps", h >= 0 ? line_text(h) : "-");
    CHECK(tn_space_asks(NULL, 0) == 1, "%d SPACE questions", tn_space_asks(NULL, 0));
    /* a latency-critical process the node keeps out of its server (mpsLatencyOwnContext): its own
     * context, the environment as it was, no "mps" in its HELLO, and its children ask again */
    tn_space("SPACE none own-context");
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_PRIORITY=2", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=20", NULL},
               (const char *[]){"-c", "echo \"${CUDA_MPS_PIPE_DIRECTORY:-none} $CUDA_MPS_ACTIVE_THREAD_PERCENTAGE ${XQ_SPACE:-none}\"", NULL}, 1);
    CHECK(finish(&a, 10) && !strcmp(slurp(a.out), "none 20 none\n"), "the program saw '%s'", slurp(a.out));
    start(&a, (const char *[]){"XQ_PRIORITY=2", NULL}, (const char *[]){"--stream", "new", "--tasks", "1", "--kernels", "2", "--us", "300", "--check", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    h = tn_find(h + 1, -1, "HELLO ", 2.0);
    CHECK(h >= 0 && !strstr(line_text(h), "mps"), "HELLO '%s' says mps", h >= 0 ? line_text(h) : "-");
}

/* Reads "N, sent after the arrival P50 X us" of the line "xq: arrival lines to the node WHO: ..." in err: N, or -1 without one. */
static int told(const char *err, const char *who, double *p50)
{
    char key[160];
    snprintf(key, sizeof key, "xq: arrival lines to the node %s: ", who);
    const char *p = strstr(err, key);
    int n = -1;
    if (!p || sscanf(p + strlen(key), "%d, sent after the arrival P50 %lf us", &n, p50) != 2) return -1;
    return n;
}

/* XQ_ARRIVAL_DIRECT=1: the launching thread tells the node of each arrival itself (the WAKE lines
 * still come, the work is still right); by default the tracker does; either way XQ_LOG=2 times
 * them from the arrival; a value other than 0 or 1 is named and ignored. */
void test_arrival_direct(void)
{
    const char *args[] = {"--tasks", "6", "--kernels", "2", "--us", "1000", "--period-ms", "20", "--stream", "new", "--check", NULL};
    for (int direct = 0; direct <= 2; direct++) {
        tn_start(SOCK, 16);
        app a;
        start(&a, direct == 1 ? (const char *[]){"XQ_LOG=2", "XQ_ARRIVAL_DIRECT=1", NULL}
                  : direct == 2 ? (const char *[]){"XQ_LOG=2", "XQ_ARRIVAL_DIRECT=yes", NULL}
                                : (const char *[]){"XQ_LOG=2", NULL},
              args);
        CHECK(finish(&a, 10) && a.status == 0, "direct %d: exit %d, stderr: %s", direct, a.status, slurp(a.err));
        CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "direct %d: output: %s", direct, slurp(a.out));
        const char *err = slurp(a.err);
        char text[600], wake[32];
        int slot = stream_slot(0, 0, text, sizeof text);
        snprintf(wake, sizeof wake, "WAKE %d", slot);
        /* each of the six tasks a period apart: a ready and an idle, but one line tells whichever
         * the stream is at its send, so on a loaded machine a task's idle, told late, can be the
         * next one's arrival's line (a CI run beside a busy loop: 11); an arrival after an idle
         * is always told */
        CHECK(slot >= 0 && tn_count(0, wake) >= 6, "direct %d: %d WAKE lines for six tasks", direct, tn_count(0, wake));
        double p50 = -1;
        int byThread = told(err, "by the launching thread (XQ_ARRIVAL_DIRECT=1)", &p50);
        if (direct == 1) {
            CHECK(byThread >= 6 && p50 >= 0 && p50 < 100000, "told by the launching thread %d, P50 %.1f us; stderr: %s", byThread, p50, err);
            CHECK(strstr(err, "xq: a direct send cost the launching thread P50 "), "no cost line: %s", err);
        } else {
            int byTracker = told(err, "by the tracker", &p50);
            CHECK(byThread == -1, "direct %d: told by the launching thread %d", direct, byThread);
            CHECK(byTracker >= 6 && p50 >= 0, "direct %d: told by the tracker %d, P50 %.1f us; stderr: %s", direct, byTracker, p50, err);
        }
        CHECK((direct == 2) == (strstr(err, "xq: ignoring XQ_ARRIVAL_DIRECT='yes': not 0 or 1") != NULL), "direct %d: stderr: %s",
              direct, err);
    }
}
