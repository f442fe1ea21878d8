/* test_cuda_ctxsync.c: the context's synchronize of an MPS client made of its streams' (cuda_ctxsync.c). */
#define _GNU_SOURCE
#include "test_cuda.h"

/* The fake's cuCtxSynchronize waits 300 ms more than its streams' work (FAKECUDA_CTXSYNC_US), as
 * an MPS client's did for another client's kernel in a green context, and says at exit how often
 * it was called. An MPS client of the node ends each task with the context's synchronize (v1
 * exported, v1 and v2 through cuGetProcAddress, v2 through dlsym): the driver's is never called,
 * the results are right (--check: copies, an increment and a host function in stream order; --side:
 * a kernel and a host function on a stream made and destroyed in the task, which the synchronize
 * must still wait for), and the log counts the synchronizes made of streams. */
static void ctxsync_run(const char *space, const char *const *env, const char *via, const char *end, const char *stream,
                        int want_driver, const char *want_err)
{
    tn_start(SOCK, 16);
    tn_space(space);
    tn_defaults(0, 0, 0, 0); /* nothing held */
    app a;
    const char *e[8] = {"XQ_PRIORITY=1", "XQ_LOG=2", "FAKECUDA_CTXSYNC_US=300000", NULL};
    int n = 3;
    for (; env && *env && n < 7; env++) e[n++] = *env;
    e[n] = NULL;
    start(&a, e, (const char *[]){"--stream", stream, "--tasks", "4", "--kernels", "2", "--us", "300", "--check", "--side", "--via", via,
                                  "--end", end, NULL});
    CHECK(finish(&a, 20) && a.status == 0, "%s %s %s: exit %d: %s", via, end, stream, a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "%s %s %s: output: %s", via, end, stream, slurp(a.out));
    const char *err = slurp(a.err);
    const char *c = strstr(err, "fakecuda: cuCtxSynchronize called ");
    int called = c ? atoi(c + strlen("fakecuda: cuCtxSynchronize called ")) : -1;
    CHECK(called == (want_driver ? 4 : 0), "%s %s %s: the driver's synchronize called %d times, want %d: %s", via, end, stream,
          called, want_driver ? 4 : 0, err);
    CHECK(!want_err || strstr(err, want_err), "%s %s %s: no '%s' in: %s", via, end, stream, want_err, err);
}

static const char *const MPS = "SPACE mps /tmp/xq-test-mps 100 narrow";

void test_ctxsync_by_streams(void)
{
    const char *by = "xq: cuCtxSynchronize: 4 times by the context's streams";
    ctxsync_run(MPS, NULL, "direct", "ctx", "new", 0, by);
    ctxsync_run(MPS, NULL, "procaddress", "ctx", "new", 0, by);
    ctxsync_run(MPS, NULL, "procaddress", "ctx2", "new", 0, by);
    ctxsync_run(MPS, NULL, "dlsym", "ctx2", "default", 0, by);
    ctxsync_run(MPS, NULL, "direct", "ctx", "prio:-1", 0, by);
    /* a capped client too; and one told so by XQ_CTX_SYNC=1 without MPS */
    ctxsync_run("SPACE mps /tmp/xq-test-mps 50", NULL, "procaddress", "ctx2", "new", 0, by);
    ctxsync_run("SPACE none off", (const char *[]){"XQ_CTX_SYNC=1", NULL}, "direct", "ctx", "new", 0, by);
}

/* The driver's synchronize: not an MPS client (time sharing: no false wait to avoid), XQ_CTX_SYNC=0,
 * a per-thread default stream in use (another thread's cannot be synchronized from here); a bad
 * XQ_CTX_SYNC is said and the default kept. The results are right each time. */
void test_ctxsync_driver(void)
{
    ctxsync_run("SPACE none off", NULL, "direct", "ctx", "new", 1, NULL);
    ctxsync_run(MPS, (const char *[]){"XQ_CTX_SYNC=0", NULL}, "procaddress", "ctx2", "new", 1, NULL);
    ctxsync_run(MPS, NULL, "procaddress", "ctx2", "ptds", 1,
                "4 by the driver: a per-thread default stream in use");
    ctxsync_run(MPS, (const char *[]){"XQ_CTX_SYNC=yes", NULL}, "direct", "ctx", "new", 0,
                "xq: ignoring XQ_CTX_SYNC='yes': not 0 or 1");
}
