/*
 * The interposer's own tests: xq-cuda-app (linked against the fake driver) runs under
 * LD_PRELOAD=libxq-cuda.so against the test node (test_node.c) of this process.
 * Usage: xq-cuda-tests LIBXQ FAKECUDA_DIR [TEST_NAME...]   (XQ_TEST_GDB=1: stacks of a hung app)
 * Prints one line per test and finally "N passed, N failed"; exits 1 on any failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_node.h"

extern char **environ;
static const char *LIB, *DIR_;
static char SOCK[108], TMP[64], APP[512], BENCH[512], LOCAL[512];
static int failed_now, napps;
static const char *EXTRA[4]; /* added to every program's environment (the memop_ tests) */

#define CHECK(cond, ...)                                                                            \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            printf("    line %d: %s: ", __LINE__, #cond);                                           \
            printf(__VA_ARGS__);                                                                    \
            printf("\n");                                                                           \
            failed_now = 1;                                                                         \
        }                                                                                           \
    } while (0)

typedef struct app {
    pid_t pid;
    int reaped;
    char out[128], err[128];
    int status; /* exit code once waited; -1 killed or timed out */
} app;

static void pause_s(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&t, NULL);
}

/* Starts xq-cuda-app (or another program of DIR_) with the interposer; env entries come
 * before the inherited ones, so they win. */
static void start_prog(app *a, const char *prog, const char *const *env, const char *const *args, int preload)
{
    char *argv[64], *envp[256];
    int n = 0, m = 0;
    argv[n++] = (char *)prog;
    for (; args && *args && n < 63; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    static char pre[600], sock[200];
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", LIB);
    snprintf(sock, sizeof sock, "XQ_SOCKET=%s", SOCK);
    int has_completion = 0, has_defer = 0, bare = 0;
    for (; env && *env && m < 200; env++) {
        has_completion |= !strncmp(*env, "XQ_COMPLETION=", 14), has_defer |= !strncmp(*env, "XQ_DEFER=", 9);
        bare |= !strcmp(*env, "XQ_TEST_DEFAULTS=1");
        envp[m++] = (char *)*env;
    }
    for (const char *const *x = EXTRA; *x; x++) {
        has_completion |= !strncmp(*x, "XQ_COMPLETION=", 14), has_defer |= !strncmp(*x, "XQ_DEFER=", 9);
        envp[m++] = (char *)*x;
    }
    /* the tests name the mode they test; the defaults (memop, deferral) have tests of their own */
    if (!has_completion && !bare) envp[m++] = "XQ_COMPLETION=event";
    if (!has_defer && !bare) envp[m++] = "XQ_DEFER=0";
    int own_preload = 0;
    for (int i = 0; i < m; i++)
        own_preload |= !strncmp(envp[i], "LD_PRELOAD=", 11);
    if (preload && !own_preload)
        envp[m++] = pre;
    envp[m++] = sock;
    for (char **e = environ; *e && m < 254; e++)
        if (strncmp(*e, "XQ_", 3) && strncmp(*e, "LD_PRELOAD=", 11) && strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21))
            envp[m++] = *e;
    envp[m] = NULL;
    snprintf(a->out, sizeof a->out, "%s/app%d.out", TMP, napps);
    snprintf(a->err, sizeof a->err, "%s/app%d.err", TMP, napps++);
    a->status = -1, a->reaped = 0;
    a->pid = fork();
    if (a->pid == 0) {
        int o = open(a->out, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(a->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1), dup2(e, 2);
        execve(prog, argv, envp);
        _exit(127);
    }
}

static void start(app *a, const char *const *env, const char *const *args) { start_prog(a, APP, env, args, 1); }

static int exited(app *a)
{
    int st;
    if (a->reaped)
        return 1;
    if (waitpid(a->pid, &st, WNOHANG) != a->pid)
        return 0;
    a->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    a->reaped = 1;
    return 1;
}

/* Waits for the app; kills it after timeout_s. Returns whether it exited by itself. */
static int finish(app *a, double timeout_s)
{
    double end = tn_now() + timeout_s;
    int st;
    for (;;) {
        if (a->reaped || exited(a))
            return 1;
        if (tn_now() > end) {
            if (getenv("XQ_TEST_GDB")) {
                char cmd[200];
                snprintf(cmd, sizeof cmd, "gdb -p %d -batch -ex 'thread apply all bt' 2>&1 | grep -v '^\\[' >&2", (int)a->pid);
                if (system(cmd)) {
                }
            }
            kill(a->pid, SIGKILL);
            waitpid(a->pid, &st, 0);
            a->status = -1, a->reaped = 1;
            return 0;
        }
        pause_s(0.001);
    }
}

static char *slurp(const char *path)
{
    static char buf[8][16384];
    static int k;
    char *b = buf[k++ % 8];
    b[0] = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(b, 1, sizeof buf[0] - 1, f);
        b[n] = 0;
        fclose(f);
    }
    return b;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static const char *line_text(int i) { static tn_line l; l = tn_get(i); return l.text; }

/* The slot of the k-th STREAM line of session sess (waits up to 3 s); -1 if none. */
static int stream_slot(int sess, int k, char *text, size_t cap)
{
    int at = -1;
    if (text)
        text[0] = 0;
    for (int i = 0; i <= k; i++)
        if ((at = tn_find(at + 1, sess, "STREAM ", 3.0)) < 0)
            return -1;
    const char *t = line_text(at);
    if (text)
        snprintf(text, cap, "%s", t);
    int slot = -1;
    sscanf(t, "STREAM %d", &slot);
    return slot;
}

#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

static int wait_until(xq_slot *s, int (*pred)(xq_slot *), double timeout_s)
{
    double end = tn_now() + timeout_s;
    while (!pred(s)) {
        if (tn_now() > end)
            return 0;
        pause_s(0.0002);
    }
    return 1;
}
static int one_pending(xq_slot *s) { return LD(&s->pending) == 1; }
static int some_launched(xq_slot *s) { return LD(&s->launched) > 0; }

/* ------------------------------------------------------------------ the tests */

static void test_registration(void)
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

static void test_priorities_and_names(void)
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
static void test_visible_devices_uuid(void)
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
static void test_pci_unknown(void)
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

static void test_bad_priority(void)
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

static void test_default_stream_labels(void)
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

/* gate closed: the launch blocks (pending counted, WAKE sent); gate opened + GATE: it goes on */
static void gate_test(const char *const *args)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, NULL, args);
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
}

static void test_gate_direct(void)
{
    gate_test((const char *[]){"--tasks", "2", "--kernels", "2", "--us", "500", "--stream", "new", NULL});
}

static void test_gate_procaddress(void)
{
    gate_test((const char *[]){"--tasks", "2", "--kernels", "2", "--us", "500", "--stream", "ptds", "--via",
                               "procaddress", "--ex", NULL});
}

static void test_gate_procaddress_legacy(void)
{
    gate_test((const char *[]){"--tasks", "2", "--kernels", "2", "--us", "500", "--stream", "default", "--via",
                               "procaddress", NULL});
}

/* opened without a GATE line: the held thread finds out within its 100 ms wait */
static void test_gate_silent(void)
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

/* The node hears of an arrival once its launch is made, not before: the WAKE line is a socket
 * write, and written first it delayed the work itself (FAKECUDA_CALL_US: a driver whose every
 * enqueueing call takes 30 ms of its caller's time, so that the order shows) */
static void test_wake_after_launch(void)
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

/* in_flight never exceeds the threshold; three threads launch on one (legacy) stream */
static void test_threshold(void)
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

/* threshold 4, batch 3: after reaching 4, launching resumes only at <= 1 in flight, so between
 * two peaks of 4 at least 3 commands complete (robust to samples missing the short dip) */
static void test_batch(void)
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
static void test_window(void)
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
    while (mono_ns() < until - 2000000ull)
        ;
    at_end = (unsigned long)LD(&s->launched);
    CHECK(at_hz >= 7, "%lu launched by the horizon (want >= 7: launches went on while they ended in time)", at_hz);
    CHECK(running_at_hz == 0 && at_end == at_hz, "at the horizon %lu in flight (want 0); %lu launched then, %lu 2 ms before the end (want equal)",
          running_at_hz, at_hz, at_end);
    int went = 0;
    while (!went && mono_ns() < until + 200000000ull)
        went = LD(&s->launched) > at_end;
    uint64_t dt = mono_ns() - until;
    CHECK(went, "nothing launched after the guard lapsed");
    printf("    %lu launched by the horizon, none while guarded, next %.2f ms after the lapse\n", at_hz, (double)dt / 1e6);
    __atomic_store_n(&s->horizon_ns, 0, __ATOMIC_SEQ_CST);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.err), "arrival guard 0") == NULL, "no guard refusal counted: %s", slurp(a.err));
}

static void test_guard(void) { guard_test(0); }
static void test_guard_deferred(void) { guard_test(1); }

/* The window is a budget of each kind's own estimate: 300 us kernels with an 8 ms one every 30th
 * (another launch shape), window 6 ms. The stream's average (about 560 us) would allow 10 in
 * flight at most; by kind, a run of short ones fills the window (20 behind the running one, a
 * few more when short ones measure under 300 us), and a long one, over the window alone, is
 * launched once at most a quarter window remains before it, and then has shorts queued behind it
 * only once less than the window remains of it. */
static void test_window_kinds(void)
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

/* a queue of short commands: completions found in batches are accounted as batches, so the
 * estimate is about one command's time, not the time between two looks of the tracker */
static void test_estimate(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, NULL, (const char *[]){"--stream", "new", "--tasks", "2", "--kernels", "300", "--us", "5",
                                      "--linger-ms", "100", NULL});
    CHECK(finish(&a, 20) && a.status == 0, "exit %d", a.status);
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    double per = s && s->completed ? (double)s->run_ns / (double)s->completed / 1000 : 0, est = s ? s->estimate_ns / 1000.0 : 0;
    /* the fake runs a 5 us kernel in some 30 us: many end between two looks (100 us apart) */
    CHECK(s && per > 0 && est > per / 2 && est < per * 2, "estimate %.1f us, run_ns per command %.1f us", est, per);
    printf("    estimate %.1f us, run_ns per command %.1f us (300 short kernels a task)\n", est, per);
}

/* the node dies while two threads are held: both go at once, the work is right */
static void test_node_killed(void)
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
static void test_node_restart(void)
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

static void test_no_node(void)
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

/* ------------------------------------------------------------------ who the node is
 * docs/processes.md "Who the node is": a socket whose directory another user owns or may write
 * to, a link in place of the socket, or another user answering on it is refused before a word is
 * said (no SPACE, no HELLO); one line says so, once, and the process runs unscheduled. */

static int not_root(void)
{
    if (!geteuid())
        return 0;
    printf("    skipped: not root\n");
    return 1;
}

/* Runs the app with XQ_SOCKET=path to its end: it must run unscheduled, its stderr exactly
 * "xq: refusing the node at <path>: <why>; running unscheduled". */
static void run_refused(const char *path, const char *why)
{
    char env[200], want[400];
    snprintf(env, sizeof env, "XQ_SOCKET=%s", path);
    snprintf(want, sizeof want, "xq: refusing the node at %s: %s; running unscheduled\n", path, why);
    app a;
    start(&a, (const char *[]){env, NULL}, (const char *[]){"--tasks", "2", "--stream", "new", "--check", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    CHECK(!strcmp(slurp(a.err), want), "stderr '%s', want '%s'", slurp(a.err), want);
}

/* A directory another user owns (as /tmp/xq-<uid> made first by someone else): refused, said
 * once although the reader asks again every second; made the user's, the node is found. */
static void test_refuse_foreign_directory(void)
{
    if (not_root())
        return;
    char dir[128], sock[160], env[200], want[400];
    snprintf(dir, sizeof dir, "%s/foreign", TMP);
    snprintf(sock, sizeof sock, "%s/node.sock", dir);
    mkdir(dir, 0700);
    tn_start(sock, 16);
    CHECK(!chown(dir, 4242, 4242), "chown: %s", strerror(errno));
    snprintf(env, sizeof env, "XQ_SOCKET=%s", sock);
    app a;
    start(&a, (const char *[]){env, NULL}, (const char *[]){"--seconds", "3", "--stream", "new", "--kernels", "1", "--us",
                                                           "1000", "--period-ms", "5", "--check", NULL});
    pause_s(1.6); /* the constructor's SPACE, the first launch's HELLO, the reader's first retry */
    CHECK(tn_space_asks(NULL, 0) == 0 && tn_sessions() == 0, "the process spoke: %d SPACE, %d sessions",
          tn_space_asks(NULL, 0), tn_sessions());
    snprintf(want, sizeof want,
             "xq: refusing the node at %s: its directory is owned by uid 4242, not by you (uid 0) or root; running unscheduled\n",
             sock);
    CHECK(!strcmp(slurp(a.err), want), "stderr '%s', want '%s'", slurp(a.err), want);
    CHECK(!chown(dir, 0, 0), "chown back: %s", strerror(errno));
    CHECK(tn_find(0, 0, "HELLO 1 ", 2.5) >= 0, "not registered once the directory was the user's");
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    const char *err = slurp(a.err);
    CHECK(count_lines(err) == 2 && !strncmp(err, want, strlen(want)) && strstr(err, "found; scheduled"), "stderr: %s", err);
    tn_kill();
    rmdir(dir);
}

/* A directory others may write to: refused; group-readable (a node's socketGroup, 0750) is fine. */
static void test_refuse_open_directory(void)
{
    char dir[128], sock[160], env[200];
    snprintf(dir, sizeof dir, "%s/open", TMP);
    snprintf(sock, sizeof sock, "%s/node.sock", dir);
    mkdir(dir, 0700);
    tn_start(sock, 16);
    CHECK(!chmod(dir, 0777), "chmod: %s", strerror(errno));
    run_refused(sock, "its directory (mode 0777) may be written by group or others");
    CHECK(tn_space_asks(NULL, 0) == 0 && tn_sessions() == 0, "the process spoke: %d SPACE, %d sessions",
          tn_space_asks(NULL, 0), tn_sessions());
    CHECK(!chmod(dir, 0750), "chmod: %s", strerror(errno));
    snprintf(env, sizeof env, "XQ_SOCKET=%s", sock);
    app a;
    start(&a, (const char *[]){env, NULL}, (const char *[]){"--tasks", "1", "--stream", "new", NULL});
    CHECK(finish(&a, 10) && a.status == 0 && !*slurp(a.err), "0750: exit %d: %s", a.status, slurp(a.err));
    CHECK(tn_find(0, 0, "HELLO 1 ", 1.0) >= 0, "0750: not registered");
    tn_kill();
    rmdir(dir);
}

/* A symbolic link in place of the socket (here to the test node's own): refused. */
static void test_refuse_symlink(void)
{
    char link[160];
    snprintf(link, sizeof link, "%s/link.sock", TMP);
    tn_start(SOCK, 16);
    unlink(link);
    CHECK(!symlink(SOCK, link), "symlink: %s", strerror(errno));
    run_refused(link, "it is a symbolic link, not a socket");
    CHECK(tn_space_asks(NULL, 0) == 0 && tn_sessions() == 0, "the process spoke: %d SPACE, %d sessions",
          tn_space_asks(NULL, 0), tn_sessions());
    unlink(link);
}

/* The right directory, but the process answering on the socket is another user's: refused
 * after connect, before a word is said. */
static void test_refuse_foreign_peer(void)
{
    if (not_root())
        return;
    tn_kill();
    char log[128], why[160];
    snprintf(log, sizeof log, "%s/foreign-peer.log", TMP);
    int pid = tn_foreign_listener(SOCK, 4242, log);
    CHECK(pid > 0, "no listener of uid 4242");
    if (pid <= 0)
        return;
    snprintf(why, sizeof why, "the node answering there runs as uid 4242, not as its directory's owner (uid %u)",
             (unsigned)geteuid());
    run_refused(SOCK, why);
    pause_s(0.1);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    CHECK(!*slurp(log), "the process said '%s' to uid 4242", slurp(log));
    unlink(SOCK);
}

/* A node of another user that admits this one by a group (a node configured with socketGroup,
 * named by XQ_SOCKET as ./xq run does): spoken to when the directory's group is one of the
 * process's, refused when it is not. */
static void test_group_node_admitted(void)
{
    if (not_root())
        return;
    tn_kill();
    char dir[128], sock[160], env[200], log[160];
    snprintf(dir, sizeof dir, "%s/grp", TMP);
    snprintf(sock, sizeof sock, "%s/node.sock", dir);
    snprintf(log, sizeof log, "%s/grp.log", TMP);
    snprintf(env, sizeof env, "XQ_SOCKET=%s", sock);
    mkdir(dir, 0750);
    for (int ours = 1; ours >= 0; ours--) {
        int pid = tn_foreign_listener(sock, 4242, log);
        CHECK(pid > 0, "no listener of uid 4242");
        if (pid <= 0)
            return;
        /* the node's user owns directory and socket; the group is root's (ours) or one we are not in */
        CHECK(!chown(sock, 4242, 0) && !chown(dir, 4242, ours ? 0 : 4243) && !chmod(dir, 0750), "chown: %s", strerror(errno));
        app a;
        start(&a, (const char *[]){env, NULL}, (const char *[]){"--tasks", "1", "--stream", "new", "--check", NULL});
        CHECK(finish(&a, 15) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        if (ours)
            CHECK(strstr(slurp(log), "SPACE 1 ") || strstr(slurp(log), "HELLO 1 "), "the process did not speak to the node of its group: "
                  "log '%s', stderr %s", slurp(log), slurp(a.err));
        else
            CHECK(!*slurp(log) && strstr(slurp(a.err), "its directory is owned by uid 4242"),
                  "the process spoke to a node of a group it is not in: log '%s', stderr %s", slurp(log), slurp(a.err));
        unlink(sock);
    }
    rmdir(dir);
}

/* a capture on a held stream passes through; the launch after it is held */
static void test_capture(void)
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

static void test_fork(void)
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
static void test_local_library(void)
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
static void test_dlsym_not_driver(void)
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
static void test_dlsym_next_other_library(void)
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

static void test_failed_launches(void)
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

static double bench(int preload, const char *const *env)
{
    app a;
    start_prog(&a, BENCH, env, NULL, preload);
    double ns = -1;
    if (finish(&a, 30) && a.status == 0) {
        const char *p = strstr(slurp(a.out), "\"ns_per_launch\":");
        ns = p ? atof(p + 16) : -1;
    }
    return ns;
}

static void test_overhead(void)
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

/* XQ_COMPLETION=memop: the same tests, with the fake's events broken (cuEventRecord fails, so a
 * command would count as done at once): limits and counts hold only if the stream writes do the
 * tracking. */
static void with_memop(void (*fn)(void))
{
    EXTRA[0] = "XQ_COMPLETION=memop", EXTRA[1] = "FAKECUDA_EVENTS=0";
    fn();
    EXTRA[0] = EXTRA[1] = NULL;
}
static void test_memop_registration(void) { with_memop(test_registration); }
static void test_memop_gate(void) { with_memop(test_gate_direct); }
static void test_memop_gate_ptds(void) { with_memop(test_gate_procaddress); }
static void test_memop_threshold(void) { with_memop(test_threshold); }
static void test_memop_batch(void) { with_memop(test_batch); }
static void test_memop_window(void) { with_memop(test_window); }
static void test_memop_window_kinds(void) { with_memop(test_window_kinds); }
static void test_memop_estimate(void) { with_memop(test_estimate); }
static void test_memop_node_killed(void) { with_memop(test_node_killed); }

/* memop asked for, the device says unsupported: one line, events do the work (limits hold) */
static void test_memop_fallback(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 2, 1, 0);
    app a;
    start(&a, (const char *[]){"XQ_COMPLETION=memop", "FAKECUDA_MEMOPS=0", NULL},
          (const char *[]){"--threads", "2", "--stream", "new", "--tasks", "3", "--kernels", "6", "--us", "1000",
                           "--check", "--linger-ms", "100", NULL});
    int s0 = stream_slot(0, 0, NULL, 0), s1 = stream_slot(0, 1, NULL, 0);
    xq_slot *x0 = s0 >= 0 ? tn_slot(0, (unsigned)s0) : NULL, *x1 = s1 >= 0 ? tn_slot(0, (unsigned)s1) : NULL;
    unsigned max = 0;
    while (x0 && x1 && !exited(&a)) {
        unsigned n0 = LD(&x0->in_flight), n1 = LD(&x1->in_flight);
        max = n0 > max ? n0 : n1 > max ? n1 : max;
    }
    CHECK(x0 && x1 && finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    CHECK(max == 2, "max in flight %u, threshold 2", max);
    CHECK(x0 && x0->completed == 3 * 10 && x1 && x1->completed == 3 * 10, "completed %lu %lu",
          x0 ? (unsigned long)x0->completed : 0, x1 ? (unsigned long)x1->completed : 0);
    const char *err = slurp(a.err);
    CHECK(count_lines(err) == 1 && strstr(err, "XQ_COMPLETION=memop unavailable") && strstr(err, "events"),
          "stderr (want one line for two streams): %s", err);
}

/* no XQ_COMPLETION: memop is the default (seen by its fallback line when the device has none) */
static void test_memop_by_default(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, (const char *[]){"XQ_TEST_DEFAULTS=1", "FAKECUDA_MEMOPS=0", NULL},
          (const char *[]){"--stream", "new", "--tasks", "3", "--kernels", "2", "--us", "100", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.err), "XQ_COMPLETION=memop unavailable"), "stderr: %s", slurp(a.err));
}

/* XQ_COMPLETION=memop marks sparsely (a mark costs the GPU about 2 us between two kernels): with no
 * limits in force a mark covers up to 2 ms of work, under a window a quarter of it, and a kind
 * not measured yet (or every 32nd of a kind) is marked alone; 1,000 launches of 20 us kernels on
 * the legacy stream so take far fewer marks than launches, yet every command is counted done and
 * the stream is seen idle while the process still runs (the tracker asks the driver once the
 * stream has been quiet a while). XQ_MARKS=all marks every launch. */
static void sparse_marks(int all, unsigned window_us)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 0, 0, window_us);
    app a;
    start(&a,
          all ? (const char *[]){"XQ_COMPLETION=memop", "FAKECUDA_EVENTS=0", "XQ_LOG=2", "XQ_MARKS=all", NULL}
              : (const char *[]){"XQ_COMPLETION=memop", "FAKECUDA_EVENTS=0", "XQ_LOG=2", NULL},
          (const char *[]){"--stream", "default", "--tasks", "20", "--kernels", "50", "--us", "20", "--linger-ms", "300",
                           NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    int idle_seen = 0;
    while (s && !exited(&a))
        if (LD(&s->launched) >= 1000 && LD(&s->completed) == LD(&s->launched) && !LD(&s->in_flight) &&
            !LD(&s->ready_since_ns))
            idle_seen = 1;
    CHECK(s && finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    unsigned long launched = 0, marks = 0;
    const char *p = strstr(slurp(a.err), "xq: stream default: ");
    CHECK(p && sscanf(p, "xq: stream default: %lu launched, %lu marks", &launched, &marks) == 2, "stderr: %s",
          slurp(a.err));
    CHECK(s && launched >= 1000 && launched == s->launched && s->completed == launched && !s->in_flight,
          "launched %lu (slot %lu), completed %lu, in flight %u", launched, s ? (unsigned long)s->launched : 0,
          s ? (unsigned long)s->completed : 0, s ? s->in_flight : 0);
    if (all)
        CHECK(marks == launched, "%lu marks for %lu launches (want one each)", marks, launched);
    else
        CHECK(marks >= 10 && marks <= (window_us ? 500 : 250), "%lu marks for %lu launches (want 10..%d)", marks, launched,
              window_us ? 500 : 250);
    CHECK(idle_seen, "the stream was not seen idle before the process exited");
}
/* Timed samples (XQ_ESTIMATES=timed, the default): a kind's first four commands and every 32nd
 * after go between two timing events, and their elapsed time is the kind's estimate. Two kinds
 * (100 us and 1 ms kernels) under a 2 ms window: samples are read, and the estimates the launches
 * were charged add up to about the device time measured from completions. With the driver's
 * cuEventElapsedTime failing, the stream says so and falls back to estimates from batches of
 * completions: every command still completes. */
static void timed_estimates(int timing)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 0, 0, 2000);
    app a;
    start(&a, timing ? (const char *[]){"XQ_LOG=2", NULL} : (const char *[]){"XQ_LOG=2", "FAKECUDA_TIMING=0", NULL},
          (const char *[]){"--stream", "new", "--tasks", "6", "--kernels", "40", "--us", "100", "--long-every", "4",
                           "--long-us", "1000", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && finish(&a, 20) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(s && s->launched == 240 && s->completed == 240 && !s->in_flight, "launched %lu, completed %lu, in flight %u",
          s ? (unsigned long)s->launched : 0, s ? (unsigned long)s->completed : 0, s ? s->in_flight : 0);
    const char *err = slurp(a.err), *p = strstr(err, "xq: stream s1: timed samples "), *q = strstr(err, "estimated work launched ");
    unsigned long n = 0;
    double est = 0, measured = 0;
    CHECK(p && sscanf(p, "xq: stream s1: timed samples %lu", &n) == 1, "stderr: %s", err);
    CHECK(q && sscanf(q, "estimated work launched %lf ms, measured %lf ms", &est, &measured) == 2, "stderr: %s", err);
    if (timing) {
        CHECK(n >= 8 && !strstr(err, "timing failed"), "%lu timed samples (want 8 or more: 4 of each kind): %s", n, err);
        CHECK(measured > 0 && est / measured > 0.6 && est / measured < 1.5,
              "estimates charged %.1f ms for %.1f ms of device time (want 0.6..1.5 x)", est, measured);
    } else
        CHECK(n == 0 && strstr(err, "timing failed: batch estimates") && strstr(err, "cuEventElapsedTime failed (CUDA error 801)"),
              "%lu samples; stderr: %s", n, err);
}
static void test_timed_estimates(void) { timed_estimates(1); }
static void test_timed_estimates_fallback(void) { timed_estimates(0); }

/* Under a threshold with a window, a mark covers at most a batch of launches: a stream throttled
 * at the threshold goes on once the tracker sees it at threshold - batch, and short kernels that
 * fill no quarter window would otherwise be seen done only by asking the driver once the stream
 * has been quiet a while. Threshold 4, batch 2, a 100 ms window (a quarter of it is never
 * reached), 200 kernels of 100 us: at least one mark per two launches. */
static void test_marks_under_threshold(void)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 4, 2, 100000);
    app a;
    start(&a, (const char *[]){"XQ_COMPLETION=memop", "XQ_LOG=2", NULL},
          (const char *[]){"--stream", "new", "--tasks", "5", "--kernels", "40", "--us", "100", NULL});
    CHECK(finish(&a, 20) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    unsigned long launched = 0, marks = 0;
    const char *p = strstr(slurp(a.err), "xq: stream s1: ");
    CHECK(p && sscanf(p, "xq: stream s1: %lu launched, %lu marks", &launched, &marks) == 2, "stderr: %s", slurp(a.err));
    CHECK(launched == 200 && marks >= launched / 2, "%lu marks for %lu launches (want one per batch of 2 at least)", marks,
          launched);
}

static void test_sparse_marks(void) { sparse_marks(0, 0); }
static void test_sparse_marks_window(void) { sparse_marks(0, 1000); }
static void test_marks_all(void) { sparse_marks(1, 0); }

/* ------------------------------------------------------------------ deferred launches */

static int launched_20(xq_slot *s) { return LD(&s->launched) >= 20; }

/* Through cuGetProcAddress (as the CUDA runtime calls), a closed gate defers launches instead of
 * holding the thread: one thread has its four kernels of a task pending at once and waits in
 * cuStreamSynchronize (a trampoline), nothing reaches the device while the gate is closed, and
 * GATE makes them all (a task is only kernels here: a copy is never deferred, it would wait).
 * Without XQ_DEFER=1 (defer 0; XQ_DEFER=0 as well): the thread is held in the first launch
 * instead, one pending. */
static void defer_gate(int defer)
{
    tn_start(SOCK, 16);
    app a;
    start(&a,
          defer == 2 ? (const char *[]){"XQ_LOG=2", "XQ_TEST_DEFAULTS=1", NULL}
          : defer    ? (const char *[]){"XQ_LOG=2", "XQ_DEFER=1", NULL}
                     : (const char *[]){"XQ_LOG=2", NULL},
          (const char *[]){"--via", "procaddress", "--stream", "new", "--tasks", "40", "--kernels", "4", "--us",
                           "300", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, launched_20, 3.0), "the app did not get going");
    if (!s) {
        finish(&a, 1);
        return;
    }
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST); /* suspended, as the node does it */
    pause_s(0.05);
    uint64_t l0 = LD(&s->launched);
    unsigned maxp = 0;
    for (double end = tn_now() + 0.25; tn_now() < end;) {
        unsigned p = LD(&s->pending);
        maxp = p > maxp ? p : maxp;
    }
    CHECK(LD(&s->launched) == l0, "launched %lu -> %lu while the gate was closed", (unsigned long)l0,
          (unsigned long)LD(&s->launched));
    CHECK(!exited(&a), "the app finished with its gate closed");
    CHECK(LD(&s->in_flight) == 0, "in flight %u with the gate closed for 250 ms", LD(&s->in_flight));
    if (defer)
        CHECK(maxp >= 2 && maxp <= 4, "pending at most %u with one thread (want 2..4: deferred)", maxp);
    else
        CHECK(maxp == 1, "pending at most %u with one thread (want 1: held)", maxp);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    tn_send(0, gate);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(LD(&s->launched) == 40 * 4 && LD(&s->completed) == 40 * 4 && LD(&s->pending) == 0,
          "launched %lu completed %lu pending %u (want 160, 160, 0)", (unsigned long)LD(&s->launched),
          (unsigned long)LD(&s->completed), LD(&s->pending));
    const char *err = slurp(a.err);
    if (defer) {
        const char *d = strstr(err, "launches deferred");
        CHECK(d && strstr(err, "cuStreamSynchronize waited"), "stderr: %s", err);
        const char *e = d ? memchr(d, '\n', strlen(d)) : NULL;
        printf("    %u pending at once with one thread; %.*s\n", maxp, d && e ? (int)(e - d) : 0, d ? d : "");
    } else
        CHECK(!strstr(err, "launches deferred"), "XQ_DEFER=0 deferred: %s", err);
}
static void test_defer_gate(void) { defer_gate(1); }
static void test_defer_off(void) { defer_gate(0); }
static void test_defer_by_default(void) { defer_gate(2); } /* no XQ_DEFER: deferral is the default */

/* threshold 2, batch 1: the thread defers past the threshold, in flight never exceeds it, every
 * command is made once, in order (the check), on the legacy stream and on the per-thread one
 * (never deferred: the tracker cannot launch on another thread's stream) alike. */
static void defer_threshold(const char *stream, int ex)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 2, 1, 0);
    app a;
    start(&a, (const char *[]){"XQ_DEFER=1", NULL}, (const char *[]){"--via", "procaddress", "--stream", stream, "--tasks", "30", "--kernels", "6",
                                      "--us", "200", "--check", "--linger-ms", "100",
                                                                     ex ? "--ex" : NULL, NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    unsigned max = 0, maxp = 0;
    while (s && !exited(&a)) {
        unsigned n = LD(&s->in_flight), p = LD(&s->pending);
        max = n > max ? n : max, maxp = p > maxp ? p : maxp;
    }
    CHECK(s && finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    CHECK(max <= 2, "max in flight %u, threshold 2", max);
    CHECK(!strcmp(stream, "ptds") ? maxp == 1 : maxp >= 2, "stream %s: pending at most %u", stream, maxp);
    CHECK(s && s->launched == 30 * 10 && s->completed == 30 * 10, "launched %lu completed %lu (want 300)",
          s ? (unsigned long)s->launched : 0, s ? (unsigned long)s->completed : 0);
}
static void test_defer_threshold(void) { defer_threshold("new", 0); }
static void test_defer_threshold_legacy_ex(void) { defer_threshold("default", 1); }
static void test_defer_ptds_held(void) { defer_threshold("ptds", 0); }

/* the node dies while launches are deferred behind a closed gate: they are made at once */
static void test_defer_node_killed(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, (const char *[]){"XQ_DEFER=1", NULL}, (const char *[]){"--via", "procaddress", "--stream", "new", "--tasks",
                                                                     "40", "--kernels", "4", "--us", "300", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, launched_20, 3.0), "the app did not get going");
    if (s) {
        __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
        pause_s(0.1);
        CHECK(LD(&s->pending) >= 2, "pending %u (want deferred launches)", LD(&s->pending));
    }
    tn_kill();
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"tasks\":40"), "output: %s", slurp(a.out));
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
static void test_frozen_node_held(void) { frozen_node(0); }
static void test_frozen_node_deferred(void) { frozen_node(1); }

/* Controls: a node whose heartbeat moves holds the thread as long as it likes (2 s, and across
 * 1.5 s in which the process itself was stopped: it sees the heartbeat moved when it runs on); an
 * older node that writes no heartbeat (0) holds it too. The gate opened, the task completes. */
static void test_frozen_node_controls(void)
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

/* cuKernelSetAttribute before each launch, as the CUDA runtime does for kernels with a dynamic
 * shared memory limit: with the same value every time ("same"), or on another kernel than the
 * deferred ones ("other"), it does not wait for deferred launches (four pending at once behind a
 * closed gate); a changed value of a kernel with a deferred launch ("alternate": 96 and 64 KiB in
 * turn, each launch asking for its limit) waits until that launch was made, or the fake driver
 * refuses the 96 KiB launch made after the limit fell to 64 KiB (a failed launch). all: with
 * XQ_ATTR_WAIT=all every call waits, as before. */
static void defer_attr(const char *mode, int all)
{
    tn_start(SOCK, 16);
    app a;
    start(&a,
          all ? (const char *[]){"XQ_LOG=2", "XQ_TEST_DEFAULTS=1", "XQ_ATTR_WAIT=all", NULL}
              : (const char *[]){"XQ_LOG=2", "XQ_TEST_DEFAULTS=1", NULL},
          (const char *[]){"--via", "procaddress", "--stream", "new", "--tasks", "40", "--kernels", "4", "--us", "300",
                           "--attr", mode, NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, launched_20, 3.0), "the app did not get going: %s", slurp(a.err));
    if (!s) {
        finish(&a, 1);
        return;
    }
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
    pause_s(0.05);
    uint64_t l0 = LD(&s->launched);
    unsigned maxp = 0;
    for (double end = tn_now() + 0.25; tn_now() < end;) {
        unsigned p = LD(&s->pending);
        maxp = p > maxp ? p : maxp;
    }
    CHECK(LD(&s->launched) == l0, "launched %lu -> %lu while the gate was closed", (unsigned long)l0,
          (unsigned long)LD(&s->launched));
    int waits = all || !strcmp(mode, "alternate");
    if (waits)
        CHECK(maxp == 1, "%s%s: pending at most %u behind a closed gate (want 1: the attribute call waited)", mode,
              all ? " XQ_ATTR_WAIT=all" : "", maxp);
    else
        CHECK(maxp >= 2 && maxp <= 4, "%s: pending at most %u behind a closed gate (want 2..4: deferred, no wait)", mode,
              maxp);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    tn_send(0, gate);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(LD(&s->launched) == 160 && LD(&s->completed) == 160 && LD(&s->failed) == 0,
          "launched %lu completed %lu failed %lu (want 160, 160, 0)", (unsigned long)LD(&s->launched),
          (unsigned long)LD(&s->completed), (unsigned long)LD(&s->failed));
    const char *err = slurp(a.err);
    CHECK(strstr(err, "cuKernelSetAttribute called 160 times"), "stderr: %s", err);
    CHECK(!waits == !strstr(err, "cuKernelSetAttribute waited"), "%s: stderr: %s", mode, err);
    CHECK(!strstr(err, "failed when made"), "stderr: %s", err);
    const char *d = strstr(err, "cuKernelSetAttribute called");
    const char *e = d ? strchr(d, '\n') : NULL;
    printf("    %s%s: %u pending at once; %.*s\n", mode, all ? " (XQ_ATTR_WAIT=all)" : "", maxp,
           d && e ? (int)(e - d) : 0, d ? d : "");
}
static void test_defer_attr_same(void) { defer_attr("same", 0); }
static void test_defer_attr_other(void) { defer_attr("other", 0); }
static void test_defer_attr_alternate(void) { defer_attr("alternate", 0); }
static void test_defer_attr_all(void) { defer_attr("same", 1); }

/* Level 2 (XQ_STALL=1): the node holds the stream once (the tracker notes it), then lets ten
 * 20 ms kernels be launched at once, then closes the gate while the first runs: the launched
 * kernels behind it stay on the stream (at most the running one and one racing the close end
 * in 150 ms, against seven without the guards), and all run once the gate opens. */
static int ten_in_flight(xq_slot *s) { return LD(&s->in_flight) >= 10; }
static void test_stall(void)
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
static void test_stall_off(void)
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

/* Space (docs/processes.md "Space and time"): the constructor asks the node before the program can
 * create a context; a node running MPS has the driver's client variables set, and the process
 * says "mps" when it registers. A shell shows the environment the program got. */
static void test_space_mps(void)
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
}

/* No question when the process has its own MPS setting, inherits its parent's share, or says
 * XQ_MPS=0; a node without MPS leaves the environment alone and the HELLO without "mps". */
static void test_space_not_asked(void)
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
}

/* Narrowing (docs/processes.md "Space and time"): a process asks its share saying it can be
 * narrowed; told "narrow", it registers with "narrow", and while the node's reserve is set on a
 * stream, its kernels go to a green context's stream joined to the application's: the results
 * stay right (--check: copies, increments and spins in stream order), the log counts them, and
 * the stream's width (multiprocessors its launches could fill) and the device's count reach the
 * node. With green contexts unavailable it says so once and runs on the whole device. */
static void narrow_block(const char *green, const char *stream, uint32_t reserve, uint32_t part, const char *made,
                         const char *block)
{
    tn_start(SOCK, 16);
    tn_space("SPACE mps /tmp/xq-test-mps 100 narrow");
    tn_defaults(1, 0, 0, 0); /* held until the reserve is set */
    app a;
    /* blocks of 1024 threads on multiprocessors of 64: each kernel could fill 16, more than a small one */
    start(&a, (const char *[]){"XQ_PRIORITY=1", "XQ_LOG=2", "FAKECUDA_TPS=64", green, NULL},
          (const char *[]){"--tasks", "3", "--kernels", "2", "--us", "300", "--stream", stream, "--block", block, "--check", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s, "no STREAM");
    if (!s) {
        finish(&a, 1);
        return;
    }
    __atomic_store_n(&s->reserve_sms, reserve, __ATOMIC_SEQ_CST);
    __atomic_store_n(&s->part, part, __ATOMIC_SEQ_CST);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    tn_send(0, gate);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    char last[256];
    CHECK(tn_space_asks(last, sizeof last) == 1 && strlen(last) > 7 && !strcmp(last + strlen(last) - 7, " narrow"),
          "asked '%s'", last);
    int h = tn_find(0, -1, "HELLO ", 2.0);
    CHECK(h >= 0 && strstr(line_text(h), " cuda,mps,narrow"), "HELLO '%s' does not say cuda,mps,narrow", h >= 0 ? line_text(h) : "-");
    const char *err = slurp(a.err);
    const char *p = strstr(err, "launches narrowed");
    unsigned long long n = 0;
    while (p && p > err && p[-1] != ':') p--;
    if (p) n = strtoull(p + 1, NULL, 10);
    uint32_t w = LD(&s->width);
    unsigned want_w = (unsigned)((atoi(block) + 63) / 64);
    CHECK(w >> 16 == 132 && (w & 0xffff) == want_w, "width word %#x (want 132 multiprocessors, a width of %u)", w, want_w);
    if (want_w <= 8) { /* small kernels stay on the application's stream */
        CHECK(n == 0, "%llu launches narrowed, want 0: stderr: %s", n, err);
    } else if (!strcmp(green, "FAKECUDA_GREEN=0")) {
        CHECK(n == 0 && strstr(err, "narrowing launches stops for this process: cuGreenCtxCreate failed"),
              "%llu narrowed; stderr: %s", n, err);
        CHECK(tn_find(0, -1, "NARROW off", 1.0) >= 0, "the node was not told that narrowing stopped");
    } else {
        /* per task: inc and 2 spins are kernels; the copies and the host function stay */
        CHECK(n == 9, "%llu launches narrowed, want 9; stderr: %s", n, err);
        CHECK(!strstr(err, "narrowing launches stops"), "stderr: %s", err);
        CHECK(strstr(err, made), "no '%s' in stderr: %s", made, err);
    }
}

static void narrow_run(const char *green, const char *stream, uint32_t reserve, uint32_t part, const char *made)
{
    narrow_block(green, stream, reserve, part, made, "1024");
}

/* 132 - 100: a green context of 32 */
static void test_narrow(void) { narrow_run("FAKECUDA_GREEN=1", "new", 100, 0, "of 32 multiprocessors (group 0 of 1 made, 32 asked)"); }
static void test_narrow_default_stream(void)
{
    narrow_run("FAKECUDA_GREEN=1", "default", 100, 0, "of 32 multiprocessors (group 0 of 1 made, 32 asked)");
}
static void test_narrow_unavailable(void) { narrow_run("FAKECUDA_GREEN=0", "new", 100, 0, ""); }
/* kernels of 512 threads on multiprocessors of 64 could fill 8: small, never narrowed */
static void test_narrow_small(void) { narrow_block("FAKECUDA_GREEN=1", "new", 100, 0, "", "512"); }
/* the second of two best-effort processes, nothing reserved: the second half, 64 after 64; with
 * 36 reserved: (132 - 36) / 2 = 48, after the first 48 */
static void test_narrow_part(void)
{
    narrow_run("FAKECUDA_GREEN=1", "new", 0, 1u << 16 | 2u, "of 64 multiprocessors (group 1 of 2 made, 64 asked)");
    narrow_run("FAKECUDA_GREEN=1", "new", 36, 1u << 16 | 2u, "of 48 multiprocessors (group 1 of 2 made, 48 asked)");
}

/* XQ_NARROW=0 asks without "narrow"; an answer saying "narrow" to a question without it is not taken. */
static void test_narrow_not_asked(void)
{
    tn_start(SOCK, 16);
    tn_space("SPACE mps /tmp/xq-test-mps 100 narrow");
    app a;
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_PRIORITY=1", "XQ_NARROW=0", NULL},
               (const char *[]){"-c", "echo \"${CUDA_MPS_PIPE_DIRECTORY:-none} ${XQ_SPACE:-none}\"", NULL}, 1);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(!strcmp(slurp(a.out), "none none\n"), "the program saw '%s'", slurp(a.out));
    char last[256];
    CHECK(tn_space_asks(last, sizeof last) == 1 && !strstr(last, "narrow"), "asked '%s'", last);
    tn_space("SPACE mps /tmp/xq-test-mps 100 narrow");
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_PRIORITY=1", NULL},
               (const char *[]){"-c", "echo \"${CUDA_MPS_PIPE_DIRECTORY:-none} ${XQ_SPACE:-none}\"", NULL}, 1);
    CHECK(finish(&a, 10) && a.status == 0 && !strcmp(slurp(a.out), "/tmp/xq-test-mps 100:narrow\n"), "the program saw '%s'",
          slurp(a.out));
}

/* A node that does not know the capability lv2 refuses the HELLO: the interposer registers again
 * without it, and the process is scheduled (at level 1: nothing guards without a node's gate). */
static void test_stall_old_node(void)
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
static void test_stall_node_killed(void)
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

static const struct {
    const char *name;
    void (*fn)(void);
} TESTS[] = {
    {"registration", test_registration},
    {"space_mps", test_space_mps},
    {"space_not_asked", test_space_not_asked},
    {"narrow", test_narrow},
    {"narrow_default_stream", test_narrow_default_stream},
    {"narrow_unavailable", test_narrow_unavailable},
    {"narrow_part", test_narrow_part},
    {"narrow_small", test_narrow_small},
    {"narrow_not_asked", test_narrow_not_asked},
    {"visible_devices_uuid", test_visible_devices_uuid},
    {"pci_unknown", test_pci_unknown},
    {"priorities_and_names", test_priorities_and_names},
    {"bad_priority", test_bad_priority},
    {"default_stream_labels", test_default_stream_labels},
    {"gate_direct", test_gate_direct},
    {"gate_procaddress_ptds", test_gate_procaddress},
    {"gate_procaddress_legacy", test_gate_procaddress_legacy},
    {"gate_silent_open", test_gate_silent},
    {"wake_after_launch", test_wake_after_launch},
    {"threshold", test_threshold},
    {"batch", test_batch},
    {"window", test_window},
    {"dlsym_not_driver", test_dlsym_not_driver},
    {"dlsym_next_other_library", test_dlsym_next_other_library},
    {"window_kinds", test_window_kinds},
    {"guard", test_guard},
    {"guard_deferred", test_guard_deferred},
    {"stall", test_stall},
    {"stall_off", test_stall_off},
    {"stall_node_killed", test_stall_node_killed},
    {"stall_old_node", test_stall_old_node},
    {"estimate", test_estimate},
    {"node_killed_while_held", test_node_killed},
    {"node_restart", test_node_restart},
    {"no_node", test_no_node},
    {"refuse_foreign_directory", test_refuse_foreign_directory},
    {"refuse_open_directory", test_refuse_open_directory},
    {"refuse_symlink", test_refuse_symlink},
    {"refuse_foreign_peer", test_refuse_foreign_peer},
    {"group_node_admitted", test_group_node_admitted},
    {"capture_passthrough", test_capture},
    {"fork", test_fork},
    {"failed_launches", test_failed_launches},
    {"local_library", test_local_library},
    {"memop_registration", test_memop_registration},
    {"memop_gate", test_memop_gate},
    {"memop_gate_ptds", test_memop_gate_ptds},
    {"memop_threshold", test_memop_threshold},
    {"memop_batch", test_memop_batch},
    {"memop_window", test_memop_window},
    {"memop_window_kinds", test_memop_window_kinds},
    {"memop_estimate", test_memop_estimate},
    {"memop_node_killed_while_held", test_memop_node_killed},
    {"memop_fallback", test_memop_fallback},
    {"defer_gate", test_defer_gate},
    {"defer_off", test_defer_off},
    {"defer_by_default", test_defer_by_default},
    {"defer_attr_same", test_defer_attr_same},
    {"defer_attr_other", test_defer_attr_other},
    {"defer_attr_alternate", test_defer_attr_alternate},
    {"defer_attr_wait_all", test_defer_attr_all},
    {"memop_by_default", test_memop_by_default},
    {"timed_estimates", test_timed_estimates},
    {"timed_estimates_fallback", test_timed_estimates_fallback},
    {"marks_under_threshold", test_marks_under_threshold},
    {"sparse_marks", test_sparse_marks},
    {"sparse_marks_window", test_sparse_marks_window},
    {"marks_all", test_marks_all},
    {"defer_threshold", test_defer_threshold},
    {"defer_threshold_legacy_ex", test_defer_threshold_legacy_ex},
    {"defer_ptds_held", test_defer_ptds_held},
    {"defer_node_killed", test_defer_node_killed},
    {"frozen_node_held", test_frozen_node_held},
    {"frozen_node_deferred", test_frozen_node_deferred},
    {"frozen_node_controls", test_frozen_node_controls},
    {"overhead", test_overhead},
};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: xq-cuda-tests LIBXQ FAKECUDA_DIR [TEST...]\n");
        return 2;
    }
    LIB = realpath(argv[1], NULL);
    DIR_ = realpath(argv[2], NULL);
    if (!LIB || !DIR_) {
        fprintf(stderr, "xq-cuda-tests: %s or %s not found\n", argv[1], argv[2]);
        return 2;
    }
    snprintf(APP, sizeof APP, "%s/xq-cuda-app", DIR_);
    snprintf(BENCH, sizeof BENCH, "%s/xq-launch-bench", DIR_);
    snprintf(LOCAL, sizeof LOCAL, "%s/xq-local-app", DIR_);
    strcpy(TMP, "/tmp/xq-cuda-tests-XXXXXX");
    if (!mkdtemp(TMP))
        return 2;
    snprintf(SOCK, sizeof SOCK, "%s/node.sock", TMP);
    setvbuf(stdout, NULL, _IOLBF, 0);
    prctl(PR_SET_TIMERSLACK, 1000UL);
    signal(SIGPIPE, SIG_IGN);
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof TESTS / sizeof TESTS[0]; i++) {
        int wanted = argc == 3;
        for (int k = 3; k < argc; k++)
            wanted |= !strcmp(argv[k], TESTS[i].name);
        if (!wanted)
            continue;
        /* Several checks bound times (a held thread let go within 50 ms, an estimate within a
           factor of two): a 2-CPU machine busy elsewhere can starve a test's threads now and
           then. A failed test runs once more; only a second failure counts, and the first
           one stays in the output. A real defect fails both times. */
        for (int attempt = 1; attempt <= 2; attempt++) {
            tn_defaults(0, 0, 0, 0);
            failed_now = 0;
            double t0 = tn_now();
            printf("%s%s\n", TESTS[i].name, attempt > 1 ? " (second try)" : "");
            TESTS[i].fn();
            tn_kill();
            printf("  %s %s (%.2f s)\n", failed_now ? "FAIL" : "ok", TESTS[i].name, tn_now() - t0);
            if (!failed_now)
                break;
        }
        failed_now ? failed++ : passed++;
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", TMP);
    if (system(cmd)) {
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
