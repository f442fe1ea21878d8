/* test_cuda_trust.c: who the node is: nodes refused (a directory, a link, another user), a group's node admitted. */
#define _GNU_SOURCE
#include "test_cuda.h"

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
void test_refuse_foreign_directory(void)
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
void test_refuse_open_directory(void)
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
void test_refuse_symlink(void)
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
void test_refuse_foreign_peer(void)
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
void test_group_node_admitted(void)
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
