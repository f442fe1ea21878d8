/* test_hip_util.c: what the tests share: starting programs (also under the fake KFD), their output, lines, slots. */
#define _GNU_SOURCE
#include "test_hip.h"

extern char **environ;

void pause_s(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&t, NULL);
}

/* Starts prog with LD_PRELOAD=preload (NULL: none); env entries come first, so they win. */
void start_prog(app *a, const char *prog, const char *preload, const char *const *env, const char *const *args)
{
    char *argv[64], *envp[256];
    int n = 0, m = 0;
    argv[n++] = (char *)prog;
    for (; args && *args && n < 63; args++) argv[n++] = (char *)*args;
    argv[n] = NULL;
    static char pre[1300], sock[200];
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", preload ? preload : "");
    snprintf(sock, sizeof sock, "XQ_SOCKET=%s", SOCK);
    for (; env && *env && m < 200; env++) envp[m++] = (char *)*env;
    if (preload) envp[m++] = pre;
    envp[m++] = sock;
    for (char **e = environ; *e && m < 254; e++)
        if (strncmp(*e, "XQ_", 3) && strncmp(*e, "LD_PRELOAD=", 11) && !strstr(*e, "_VISIBLE_DEVICES=") &&
            strncmp(*e, "LD_LIBRARY_PATH=", 16))
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

/* xq-hip-app under libxq-hip.so (or g_preload, when set) with the module blob; args after
 * "--module FILE". */
const char *g_preload;
void start(app *a, const char *const *env, const char *const *args)
{
    const char *all[64] = {"--module", MODULE};
    int n = 2;
    for (; args && *args && n < 63; args++) all[n++] = *args;
    all[n] = NULL;
    start_prog(a, APP, g_preload ? g_preload : LIB, env, all);
}

/* The same with the fake KFD preloaded and the double giving each stream a KFD queue. */
void start_kfd(app *a, const char *const *env, const char *const *args)
{
    static char pre[1300];
    snprintf(pre, sizeof pre, "%s:%s", KFD, LIB);
    const char *e[32] = {"XQ_HIPDOUBLE_KFD=1"};
    int n = 1;
    for (; env && *env && n < 31; env++) e[n++] = *env;
    e[n] = NULL;
    const char *all[64] = {"--module", MODULE};
    int k = 2;
    for (; args && *args && k < 63; args++) all[k++] = *args;
    all[k] = NULL;
    start_prog(a, APP, pre, e, all);
}

int exited(app *a)
{
    int st;
    if (a->reaped) return 1;
    if (waitpid(a->pid, &st, WNOHANG) != a->pid) return 0;
    a->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    a->reaped = 1;
    return 1;
}

int finish(app *a, double timeout_s)
{
    double end = tn_now() + timeout_s;
    int st;
    for (;;) {
        if (exited(a)) return 1;
        if (tn_now() > end) {
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

const char *line_text(int i)
{
    static tn_line l;
    l = tn_get(i);
    return l.text;
}

/* The slot of the k-th STREAM line of session sess (waits up to 3 s); -1 if none. */
int stream_slot(int sess, int k, char *text, size_t cap)
{
    int at = -1;
    if (text) text[0] = 0;
    for (int i = 0; i <= k; i++)
        if ((at = tn_find(at + 1, sess, "STREAM ", 3.0)) < 0) return -1;
    const char *t = line_text(at);
    if (text) snprintf(text, cap, "%s", t);
    int slot = -1;
    sscanf(t, "STREAM %d", &slot);
    return slot;
}

int wait_until(xq_slot *s, int (*pred)(xq_slot *), double timeout_s)
{
    double end = tn_now() + timeout_s;
    while (!pred(s)) {
        if (tn_now() > end) return 0;
        pause_s(0.0002);
    }
    return 1;
}
int one_pending(xq_slot *s) { return LD(&s->pending) == 1; }
int some_launched(xq_slot *s) { return LD(&s->launched) > 0; }
int deep(xq_slot *s) { return LD(&s->in_flight) >= 4; }

/* Runs the app to its end and checks the counts of its one stream: per task launches each. */
xq_slot *run_counted(const char *const *env, const char *const *args, int tasks, int per_task, const char *label)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, env, args);
    CHECK(finish(&a, 20) && a.status == 0, "exit %d, stderr: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    char text[600], lab[32] = "";
    int slot = stream_slot(0, 0, text, sizeof text);
    CHECK(slot >= 0 && sscanf(text, "STREAM %*d %*s %*d %*d %*d %*d %31s", lab) == 1 && !strcmp(lab, label),
          "'%s', want label %s", text, label);
    CHECK(tn_count(0, "STREAM") == 1, "%d STREAM lines", tn_count(0, "STREAM"));
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    unsigned long want = (unsigned long)tasks * (unsigned long)per_task;
    CHECK(s && s->launched == want && s->completed == want && s->in_flight == 0 && s->pending == 0 && s->failed == 0,
          "launched %lu (want %lu) completed %lu in_flight %u pending %u failed %lu", s ? (unsigned long)s->launched : 0,
          want, s ? (unsigned long)s->completed : 0, s ? s->in_flight : 0, s ? s->pending : 0,
          s ? (unsigned long)s->failed : 0);
    return s;
}
