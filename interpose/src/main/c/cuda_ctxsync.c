/*
 * cuda_ctxsync.c: a context's synchronize made of its streams' synchronizes, for MPS clients.
 *
 * Why: inside an MPS server, cuCtxSynchronize (what cudaDeviceSynchronize and
 * torch.cuda.synchronize end in) of one client waited for a kernel another client ran in a green
 * context, long after the caller's own work had finished. Measured on an H200 (driver 580, no XQ,
 * bench/gpu/blocked-probe.sh): ResNet-50 fp16 batch 128 requests whose 383 device operations ran
 * in 22 ms took 332 ms, one 333 ms GEMM kernel on a 64-SM green context of another client, when
 * they ended with the context's synchronize; ended with their stream's synchronize, an event's
 * synchronize or an event polled: 14.8-18.2 ms (alone 13.8-20.3). The node narrows best-effort
 * processes into green contexts, so every other client of its server pays that wait.
 *
 * What: while the process is a client of the node's MPS server (or XQ_CTX_SYNC=1), the wrapped
 * cuCtxSynchronize (v1: the current context; v2, CUDA 13: the one given or the current) waits for
 * what it must see through the streams it knows instead: the context's legacy default stream,
 * every stream made in it since the process started (cuStreamCreate, cuStreamCreateWithPriority,
 * cuGreenCtxStreamCreate: all wrapped to be known), and an event recorded on each such stream
 * destroyed with work left. The first error any of them returns is the result, as the context's
 * synchronize returns an earlier failure. Deferred launches are made first, as before any driver
 * call that can see a stream's work.
 *
 * It calls the driver's cuCtxSynchronize instead (XQ_LOG=2 says why) whenever a stream could be
 * missing from that list, or the driver's answer is the one wanted: for that call, while a
 * per-thread default stream is in use in the context (the launch gate has seen one: another
 * thread's cannot be synchronized from here) or a stream capture is under way; for good, once a
 * context was made from a green context (its default stream is not known), the launch gate saw a
 * stream that was not made through the wrappers, a list could not grow, or no event could be made
 * for a destroyed stream. XQ_CTX_SYNC=0: always the driver's.
 */
#include "cuda_int.h"

int xqc_ctxsync = -1; /* -1: not decided (off); 0 off; 1 on */
static const char *g_unsafe; /* why the driver's synchronize is used for good; NULL: none yet */

typedef struct {
    CUstream h;
    CUcontext ctx; /* NULL: a green context's stream (synchronized for any context) */
    int pins;      /* synchronizes in progress on it: its destroy waits */
} known;

typedef struct {
    CUevent e;
    CUcontext ctx;
} pending;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static known *g_known;
static size_t g_nknown, g_capknown;
static pending *g_pend;
static size_t g_npend, g_cappend;
static uint64_t g_by_streams, g_by_driver, g_max_streams;
static const char *g_why; /* the last reason a synchronize was the driver's, short of g_unsafe */

void xqc_ctxsync_setup(int mps_client)
{
    const char *v = getenv("XQ_CTX_SYNC");
    int on = mps_client;
    if (v && !strcmp(v, "0")) on = 0;
    else if (v && !strcmp(v, "1")) on = 1;
    else if (v && *v) xlog(1, "xq: ignoring XQ_CTX_SYNC='%s': not 0 or 1", v);
    ST(&xqc_ctxsync, on);
}

void xqc_ctxsync_unsafe(const char *why)
{
    if (LD(&xqc_ctxsync) <= 0) return;
    pthread_mutex_lock(&g_mu);
    if (!g_unsafe) {
        g_unsafe = why;
        xlog(2, "xq: cuCtxSynchronize is the driver's from now on: %s", why);
    }
    pthread_mutex_unlock(&g_mu);
}

static int grow(void **p, size_t *cap, size_t n, size_t each)
{
    if (n < *cap) return 1;
    size_t c = *cap ? *cap * 2 : 16;
    void *q = realloc(*p, c * each);
    if (!q) return 0;
    *p = q, *cap = c;
    return 1;
}

/* A stream made by the program (green: of a green context). */
void xqc_ctxsync_made(CUstream h, int green)
{
    if (LD(&xqc_ctxsync) <= 0 || !h) return;
    CUcontext ctx = NULL;
    if (!green && xqc_cu.CtxGetCurrent) xqc_cu.CtxGetCurrent(&ctx);
    pthread_mutex_lock(&g_mu);
    if (grow((void **)&g_known, &g_capknown, g_nknown, sizeof *g_known))
        g_known[g_nknown++] = (known){h, ctx, 0};
    else if (!g_unsafe)
        g_unsafe = "out of memory for the list of streams";
    pthread_mutex_unlock(&g_mu);
}

/* Before the program destroys stream h (any thread): no synchronize of ours is left on it, and
 * work it still has is kept as an event the next context synchronize waits for. */
void xqc_ctxsync_destroying(CUstream h)
{
    if (LD(&xqc_ctxsync) <= 0 || !h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) return;
    pthread_mutex_lock(&g_mu);
    size_t i;
    for (;;) {
        for (i = 0; i < g_nknown && g_known[i].h != h; i++) {
        }
        if (i == g_nknown || !g_known[i].pins) break;
        pthread_cond_wait(&g_cv, &g_mu);
    }
    CUcontext ctx = i < g_nknown ? g_known[i].ctx : NULL;
    if (i < g_nknown) g_known[i] = g_known[--g_nknown];
    pthread_mutex_unlock(&g_mu);
    if (!xqc_cu.StreamQuery || xqc_cu.StreamQuery(h) != CUDA_ERROR_NOT_READY) return;
    if (!ctx && xqc_cu.StreamGetCtx) xqc_cu.StreamGetCtx(h, &ctx);
    CUevent e = NULL;
    if (xqc_cu.EventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS || xqc_cu.EventRecord(e, h) != CUDA_SUCCESS) {
        if (e) xqc_cu.EventDestroy(e);
        xqc_ctxsync_unsafe("a stream destroyed with work left could not be marked");
        return;
    }
    pthread_mutex_lock(&g_mu);
    if (grow((void **)&g_pend, &g_cappend, g_npend, sizeof *g_pend))
        g_pend[g_npend++] = (pending){e, ctx};
    else {
        xqc_cu.EventDestroy(e);
        if (!g_unsafe) g_unsafe = "out of memory for the destroyed streams' marks";
    }
    pthread_mutex_unlock(&g_mu);
}

static void unpin(CUstream h)
{
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < g_nknown; i++)
        if (g_known[i].h == h && g_known[i].pins) {
            g_known[i].pins--;
            break;
        }
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
}

/* The context's synchronize by its streams; 0: the caller uses the driver's (*r untouched). */
int xqc_ctxsync_run(CUcontext want, CUresult *r)
{
    if (LD(&xqc_ctxsync) <= 0 || !xqc_cu.StreamSync || !xqc_cu.CtxGetCurrent) return 0;
    if (LD(&xqc_deferred)) xqc_flush_all(); /* what the trampoline did before the driver's */
    CUcontext cur = NULL, tmp;
    if (xqc_cu.CtxGetCurrent(&cur) != CUDA_SUCCESS) return 0;
    CUcontext ctx = want ? want : cur;
    if (!ctx) return 0; /* no context: the driver says so */
    /* a stream the gate has seen in this context that was not made through the wrappers (made
     * through an entry point handed back unwrapped): the list would miss it */
    pthread_mutex_lock(&xqc_tab_mu);
    pthread_mutex_lock(&g_mu);
    int ptds = 0;
    for (xstream *st = LD(&xqc_all); st && !g_unsafe; st = st->next_all) {
        if (LD(&st->in_use) && !LD(&st->closing) && st->kind == K_PTDS && st->ctx == ctx) ptds = 1;
        if (LD(&st->in_use) && !LD(&st->closing) && st->kind == K_EXPLICIT && st->ctx == ctx) {
            size_t i = 0;
            while (i < g_nknown && g_known[i].h != st->h) i++;
            if (i == g_nknown) {
                g_unsafe = "a stream launched on that was not made through the wrapped cuStreamCreate";
                xlog(2, "xq: cuCtxSynchronize is the driver's from now on: %s (%s)", g_unsafe, st->label);
            }
        }
    }
    pthread_mutex_unlock(&g_mu);
    pthread_mutex_unlock(&xqc_tab_mu);
    if (LD(&g_unsafe) || LD(&xqc_captures) || ptds) {
        if (!LD(&g_unsafe)) ST(&g_why, ptds ? "a per-thread default stream in use (another thread's cannot be synchronized from here)"
                                            : "a stream capture under way");
        ADD(&g_by_driver, 1);
        return 0;
    }
    int pushed = 0;
    if (ctx != cur) {
        if (!xqc_cu.CtxPush || xqc_cu.CtxPush(ctx) != CUDA_SUCCESS) return 0;
        pushed = 1;
    }
    /* the list: the legacy default stream, the context's streams made by the program (pinned
     * against their destroy), and the marks of its streams destroyed with work left */
    CUstream *v = NULL;
    CUevent *pe = NULL;
    size_t n = 0, np = 0;
    pthread_mutex_lock(&g_mu);
    v = malloc((g_nknown + 1) * sizeof *v);
    pe = malloc((g_npend + 1) * sizeof *pe);
    if (v && pe) {
        v[n++] = CU_STREAM_LEGACY;
        for (size_t i = 0; i < g_nknown; i++)
            if (!g_known[i].ctx || g_known[i].ctx == ctx) g_known[i].pins++, v[n++] = g_known[i].h;
        size_t k = 0;
        for (size_t i = 0; i < g_npend; i++) {
            if (!g_pend[i].ctx || g_pend[i].ctx == ctx) pe[np++] = g_pend[i].e;
            else g_pend[k++] = g_pend[i];
        }
        g_npend = k;
    }
    pthread_mutex_unlock(&g_mu);
    if (!v || !pe) {
        free(v), free(pe);
        if (pushed) xqc_cu.CtxPop(&tmp);
        xqc_ctxsync_unsafe("out of memory for a synchronize's list of streams");
        ADD(&g_by_driver, 1);
        return 0;
    }
    CUresult first = CUDA_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        CUresult e = xqc_cu.StreamSync(v[i]);
        if (e != CUDA_SUCCESS && first == CUDA_SUCCESS) first = e;
        if (i) unpin(v[i]);
    }
    for (size_t i = 0; i < np; i++) {
        CUresult e;
        if (xqc_cu.EventSync) e = xqc_cu.EventSync(pe[i]);
        else
            while ((e = xqc_cu.EventQuery(pe[i])) == CUDA_ERROR_NOT_READY) sleep_ns(20000);
        if (e != CUDA_SUCCESS && first == CUDA_SUCCESS) first = e;
        xqc_cu.EventDestroy(pe[i]);
    }
    if (pushed) xqc_cu.CtxPop(&tmp);
    free(v), free(pe);
    ADD(&g_by_streams, 1);
    for (uint64_t m = LD(&g_max_streams); n > m;)
        if (__atomic_compare_exchange_n(&g_max_streams, &m, (uint64_t)n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) break;
    *r = first;
    return 1;
}

void xqc_ctxsync_summary(void)
{
    uint64_t s = LD(&g_by_streams), d = LD(&g_by_driver);
    if (s + d)
        xlog(2, "xq: cuCtxSynchronize: %llu times by the context's streams (at most %llu of them), %llu by the driver%s%s",
             (unsigned long long)s, (unsigned long long)LD(&g_max_streams), (unsigned long long)d,
             g_unsafe || g_why ? ": " : "", g_unsafe ? g_unsafe : g_why ? g_why : "");
}
