/* test_hip_session.c: the node: killed, frozen, restarted, absent or refused; both interposers; the real library. */
#define _GNU_SOURCE
#include "test_hip.h"

void test_node_killed_while_held(void)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "2", "--us", "500", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, one_pending, 2.0), "not held");
    tn_kill();
    CHECK(finish(&a, 5) && a.status == 0, "exit %d after the node died: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.err), "lost"), "stderr: %s", slurp(a.err));
}

/* docs/processes.md "Faults", as in xq-cuda-tests: the node freezes (tn_freeze: no heartbeat,
 * nothing read or said, the socket open) while a thread is held behind its closed gate: within
 * about a second of the last heartbeat the process runs unscheduled, one line says why, and it
 * registers anew once the node runs again. */
static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

void test_frozen_node(void)
{
    tn_start(SOCK, 16);
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "2", "--us", "500", "--check", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, one_pending, 2.0), "not held");
    if (!s) {
        finish(&a, 1);
        return;
    }
    pause_s(0.3);
    const xq_shm_header *h = (const xq_shm_header *)((uint8_t *)s - XQ_SHM_HEADER - (size_t)slot * XQ_SLOT_SIZE);
    CHECK(LD(&h->heartbeat_ns) != 0 && !exited(&a), "heartbeat %lu, exited %d", (unsigned long)LD(&h->heartbeat_ns), exited(&a));
    int mark = tn_nlines();
    double t0 = tn_now();
    tn_freeze(1);
    int done = finish(&a, 3.0);
    double dt = tn_now() - t0;
    printf("    exited %.2f s after the node froze (heartbeat every 100 ms)\n", dt);
    CHECK(done && a.status == 0 && dt > 0.8 && dt < 1.5, "exit %d %.2f s after the freeze: %s", a.status, dt, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    const char *err = slurp(a.err);
    CHECK(count_lines(err) == 1 && strstr(err, "xq: node at ") &&
              strstr(err, " not answering for 1 s (frozen?); running unscheduled\n"),
          "stderr: %s", err);
    tn_freeze(0);
    CHECK(tn_find(mark, 0, "+EOF", 1.0) >= 0, "the frozen session did not end");
}

/* Controls: a moving heartbeat, and none at all (an older node), hold the thread 2 s and more. */
void test_frozen_node_controls(void)
{
    for (int old = 0; old < 2; old++) {
        tn_start(SOCK, 16);
        tn_defaults(1, 0, 0, 0);
        if (old) tn_heartbeat(0);
        app a;
        start(&a, NULL, (const char *[]){"--tasks", "1", "--us", "500", "--check", NULL});
        int slot = stream_slot(0, 0, NULL, 0);
        xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
        CHECK(s && wait_until(s, one_pending, 2.0), "not held");
        if (!s) {
            finish(&a, 1);
            continue;
        }
        pause_s(2.0);
        CHECK(LD(&s->pending) == 1 && LD(&s->launched) == 0 && !exited(&a) && tn_count(0, "+EOF") == 0,
              "%s: let go: pending %u launched %lu", old ? "old node" : "heartbeat", LD(&s->pending),
              (unsigned long)LD(&s->launched));
        __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
        char gate[32];
        snprintf(gate, sizeof gate, "GATE %d", slot);
        tn_send(0, gate);
        CHECK(finish(&a, 10) && a.status == 0 && !*slurp(a.err), "exit %d: %s", a.status, slurp(a.err));
        tn_kill();
    }
}

void test_node_restart(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, NULL, (const char *[]){"--seconds", "3", "--kernels", "1", "--us", "1000", NULL});
    CHECK(stream_slot(0, 0, NULL, 0) >= 0, "no STREAM");
    tn_kill();
    pause_s(0.2);
    tn_start(SOCK, 16);
    CHECK(tn_find(0, 0, "STREAM ", 3.0) >= 0, "not registered again with the new node");
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.err), "is back"), "stderr: %s", slurp(a.err));
}

void test_no_node(void)
{
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "2", "--check", NULL});
    CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "\"check\":\"ok\""), "exit %d: %s", a.status,
          slurp(a.err));
    const char *err = slurp(a.err);
    CHECK(strstr(err, "no node") && strstr(err, "unscheduled"), "stderr: %s", err);
}

/* docs/processes.md "Who the node is", as in xq-cuda-tests: a directory another user owns, or
 * another user answering on the socket, is refused before HELLO, said once; root only. */
static int not_root(void)
{
    if (!geteuid()) return 0;
    printf("    skipped: not root\n");
    return 1;
}

void test_refuse_foreign_directory(void)
{
    if (not_root()) return;
    char dir[128], sock[160], env[200], want[400];
    snprintf(dir, sizeof dir, "%s/foreign", TMP);
    snprintf(sock, sizeof sock, "%s/node.sock", dir);
    mkdir(dir, 0700);
    tn_start(sock, 16);
    CHECK(!chown(dir, 4242, 4242), "chown: %s", strerror(errno));
    snprintf(env, sizeof env, "XQ_SOCKET=%s", sock);
    app a;
    start(&a, (const char *[]){env, NULL}, (const char *[]){"--seconds", "3", "--kernels", "1", "--us", "1000", "--check", NULL});
    pause_s(1.6); /* the first launch's HELLO and the reader's first retry */
    CHECK(tn_sessions() == 0, "the process spoke: %d sessions", tn_sessions());
    snprintf(want, sizeof want,
             "xq: refusing the node at %s: its directory is owned by uid 4242, not by you (uid 0) or root; running unscheduled\n",
             sock);
    CHECK(!strcmp(slurp(a.err), want), "stderr '%s', want '%s'", slurp(a.err), want);
    CHECK(!chown(dir, 0, 0), "chown back: %s", strerror(errno));
    CHECK(tn_find(0, 0, "STREAM ", 2.5) >= 0, "not registered once the directory was the user's");
    CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "\"check\":\"ok\""), "exit %d: %s", a.status, slurp(a.err));
    const char *err = slurp(a.err);
    const char *then = !strncmp(err, want, strlen(want)) ? err + strlen(want) : "";
    CHECK(!strncmp(then, "xq: node at ", 12) && strstr(then, " found; scheduled\n") && !strchr(then, '\n')[1],
          "stderr: %s", err);
    tn_kill();
    rmdir(dir);
}

void test_refuse_foreign_peer(void)
{
    if (not_root()) return;
    char log[128], want[400];
    snprintf(log, sizeof log, "%s/foreign-peer.log", TMP);
    int pid = tn_foreign_listener(SOCK, 4242, log);
    CHECK(pid > 0, "no listener of uid 4242");
    if (pid <= 0) return;
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "2", "--check", NULL});
    CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "\"check\":\"ok\""), "exit %d: %s", a.status, slurp(a.err));
    snprintf(want, sizeof want,
             "xq: refusing the node at %s: the node answering there runs as uid 4242, not as its directory's owner (uid 0); "
             "running unscheduled\n",
             SOCK);
    CHECK(!strcmp(slurp(a.err), want), "stderr '%s', want '%s'", slurp(a.err), want);
    pause_s(0.1);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    CHECK(!*slurp(log), "the process said '%s' to uid 4242", slurp(log));
    unlink(SOCK);
}

/* ./xq run preloads both interposers; each library's own lookups go through the other's dlsym. */
void test_both_preloaded(void)
{
    for (int order = 0; order < 2; order++) {
        tn_start(SOCK, 16);
        char pre[1300];
        if (order) snprintf(pre, sizeof pre, "%s/libxq-hip.so:%s/libxq-cuda.so", LIBDIR, LIBDIR);
        else snprintf(pre, sizeof pre, "%s/libxq-cuda.so:%s/libxq-hip.so", LIBDIR, LIBDIR);
        const char *all[] = {"--module", MODULE, "--tasks", "2", "--check", NULL};
        app a;
        start_prog(&a, APP, pre, NULL, all);
        CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "\"check\":\"ok\""), "order %d: exit %d: %s", order,
              a.status, slurp(a.err));
        CHECK(tn_count(0, "STREAM") == 1, "order %d: %d STREAM lines", order, tn_count(0, "STREAM"));
    }
}

/* Debian's libamdhip64-5 on a machine without an AMD GPU: the program hears "no device" from
 * HIP, nothing is registered, nothing crashes. The same probe on the double is scheduled. */
void test_real_library_no_device(void)
{
    const char *paths[] = {"/usr/lib/x86_64-linux-gnu/libamdhip64.so.5", "/usr/lib64/libamdhip64.so.5",
                           "/opt/rocm/lib/libamdhip64.so.5"};
    int have = 0;
    for (unsigned i = 0; i < sizeof paths / sizeof paths[0]; i++) have |= access(paths[i], R_OK) == 0;
    if (!have) {
        printf("    SKIPPED: libamdhip64.so.5 is not installed (Debian: apt-get install -y libamdhip64-5)\n");
        return;
    }
    tn_start(SOCK, 16);
    app a;
    start_prog(&a, PROBE, LIB, NULL, NULL);
    CHECK(finish(&a, 60) && a.status == 0, "exit %d: %s %s", a.status, slurp(a.out), slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"count_error\":100"), "not hipErrorNoDevice: %s %s", slurp(a.out), slurp(a.err));
    CHECK(tn_count(-1, "STREAM") == 0, "%d STREAM lines without a device", tn_count(-1, "STREAM"));
    CHECK(!strstr(slurp(a.err), "xq:"), "the interposer said: %s", slurp(a.err));
    /* the same program on the double: registered, so the probe does reach the wrappers */
    tn_start(SOCK, 16);
    static char ldp[600];
    snprintf(ldp, sizeof ldp, "LD_LIBRARY_PATH=%s/so5", DIR_);
    start_prog(&a, PROBE, LIB, (const char *[]){ldp, NULL}, NULL);
    CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.out), "\"count_error\":0"), "on the double: %s %s",
          slurp(a.out), slurp(a.err));
    CHECK(tn_count(-1, "STREAM") >= 1, "on the double: %d STREAM lines", tn_count(-1, "STREAM"));
}
