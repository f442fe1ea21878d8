/* test_cuda_util.c: what the tests share: starting programs and waiting for them, their output, the node's lines. */
#define _GNU_SOURCE
#include "test_cuda.h"

extern char **environ;

void pause_s(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&t, NULL);
}

/* Starts xq-cuda-app (or another program of DIR_) with the interposer; env entries come
 * before the inherited ones, so they win. */
void start_prog(app *a, const char *prog, const char *const *env, const char *const *args, int preload)
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

void start(app *a, const char *const *env, const char *const *args) { start_prog(a, APP, env, args, 1); }

int exited(app *a)
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
int finish(app *a, double timeout_s)
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

char *slurp(const char *path)
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

int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

const char *line_text(int i) { static tn_line l; l = tn_get(i); return l.text; }

/* The slot of the k-th STREAM line of session sess (waits up to 3 s); -1 if none. */
int stream_slot(int sess, int k, char *text, size_t cap)
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

int wait_until(xq_slot *s, int (*pred)(xq_slot *), double timeout_s)
{
    double end = tn_now() + timeout_s;
    while (!pred(s)) {
        if (tn_now() > end)
            return 0;
        pause_s(0.0002);
    }
    return 1;
}
int one_pending(xq_slot *s) { return LD(&s->pending) == 1; }
int some_launched(xq_slot *s) { return LD(&s->launched) > 0; }
int launched_20(xq_slot *s) { return LD(&s->launched) >= 20; }
