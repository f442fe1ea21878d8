/*
 * cuda_defer.c: deferred launches (XQ_DEFER): a launch the gate refuses is copied into its stream's
 * host queue and made later, in order, by whichever thread may (drain); flush_all waits for them.
 */
#include "cuda_int.h"

uint32_t xqc_legacy_deferred; /* of which on a legacy default stream */
uint64_t xqc_deferred_total, xqc_flush_waits; /* for XQ_LOG=2 */
static uint32_t g_dq_word;  /* futex: bumped when deferred launches were made */
uint32_t xqc_dq_waiters;    /* threads waiting on it */
finfo xqc_fcache[FCACHE];
pthread_mutex_t xqc_fc_mu = PTHREAD_MUTEX_INITIALIZER;

static inline unsigned finfo_hash(void *key)
{
    uintptr_t x = (uintptr_t)key;
    return (unsigned)((x >> 4) ^ (x >> 17)) % FCACHE;
}

static finfo *finfo_get(void *key, int create)
{
    unsigned i = finfo_hash(key);
    for (unsigned n = 0; n < FCACHE; n++, i = (i + 1) % FCACHE) {
        finfo *e = &xqc_fcache[i];
        if (e->key == key) return e;
        if (!e->key) {
            if (!create) return NULL;
            e->np = -2; /* -2: layout not asked yet */
            ST(&e->key, key); /* last: xqc_known_ok looks without the lock */
            return e;
        }
    }
    return NULL; /* full: what is not known is not deferred */
}

/* Called after a successful launch of a function other than the thread's last one: nearly always
 * one known ok already (an eager decoder alternates among a few dozen kernels), which a look
 * without the lock finds (it took a process-wide mutex and stored to the entry every launch). */
void xqc_known_ok(void *key)
{
    if (!key) return;
    unsigned i = finfo_hash(key);
    for (unsigned n = 0; n < 4; n++, i = (i + 1) % FCACHE) {
        void *k = LD(&xqc_fcache[i].key);
        if (k == key && LD(&xqc_fcache[i].ok)) return;
        if (k == key || !k) break;
    }
    pthread_mutex_lock(&xqc_fc_mu);
    finfo *e = finfo_get(key, 1);
    if (e && !e->ok) ST(&e->ok, 1);
    pthread_mutex_unlock(&xqc_fc_mu);
}

/* The parameter layout of f, asked of the driver once (in the caller's context, as it launches). */
static int layout(finfo *e, void *f)
{
    if (e->np != -2) return e->np >= 0;
    CUresult (*q)(void *, size_t, size_t *, size_t *) = NULL;
    size_t o, z;
    CUresult r;
    if (xqc_cu.FuncGetParamInfo && ((r = xqc_cu.FuncGetParamInfo(f, 0, &o, &z)) == CUDA_SUCCESS || r == CUDA_ERROR_INVALID_VALUE))
        q = xqc_cu.FuncGetParamInfo;
    else if (xqc_cu.KernelGetParamInfo &&
             ((r = xqc_cu.KernelGetParamInfo(f, 0, &o, &z)) == CUDA_SUCCESS || r == CUDA_ERROR_INVALID_VALUE))
        q = xqc_cu.KernelGetParamInfo;
    e->np = -1;
    if (!q) return 0;
    uint32_t off[512], sz[512], total = 0;
    int n = 0;
    for (; n < 512; n++) {
        r = q(f, (size_t)n, &o, &z);
        if (r == CUDA_ERROR_INVALID_VALUE) break;
        if (r != CUDA_SUCCESS || o + z > 32768) return 0;
        off[n] = (uint32_t)o, sz[n] = (uint32_t)z;
        if (o + z > total) total = (uint32_t)(o + z);
    }
    if (n == 512) return 0;
    e->off = n ? malloc(n * sizeof *off) : NULL;
    e->sz = n ? malloc(n * sizeof *sz) : NULL;
    if (n && (!e->off || !e->sz)) return free(e->off), free(e->sz), e->off = e->sz = NULL, 0;
    if (n) memcpy(e->off, off, n * sizeof *off), memcpy(e->sz, sz, n * sizeof *sz);
    e->total = total;
    e->np = n;
    return 1;
}

uint64_t xqc_nodefer[ND_COUNT];

static size_t round16(size_t n) { return (n + 15) & ~(size_t)15; }

/* A kernel launched with its parameters packed in one buffer (extra: CU_LAUNCH_PARAM_BUFFER_POINTER
 * and _SIZE, as libraries that pack their arguments launch): the buffer is copied (the driver
 * copies it at the call too) and the list rebuilt to point at the copy; any other item in the
 * list, or parameters given both ways, and it is not deferred. Measured (H200, session 64): bf16
 * training's launches through cuLaunchKernelEx that could not be deferred waited 2.0 s of a 12 s
 * run beside a CUDA graph, each for all the process's deferred launches to be made. */
static dop *dop_extra(void **params, void **extra, size_t attrs)
{
    const void *buf = NULL;
    const size_t *szp = NULL;
    int i = 0;
    for (; i < 8 && extra[i] != XQ_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == XQ_LAUNCH_PARAM_BUFFER_POINTER) buf = extra[i + 1];
        else if (extra[i] == XQ_LAUNCH_PARAM_BUFFER_SIZE) szp = (const size_t *)extra[i + 1];
        else break;
    }
    if (params || i >= 8 || extra[i] != XQ_LAUNCH_PARAM_END || !szp || (*szp && !buf)) {
        ADD(&xqc_nodefer[ND_EXTRA], 1);
        return NULL;
    }
    size_t n = *szp;
    if (n > 32768) {
        ADD(&xqc_nodefer[ND_BIG], 1);
        return NULL;
    }
    size_t at = round16(attrs), list = 5 * sizeof(void *), sz = round16(list + sizeof(size_t));
    dop *op = malloc(sizeof *op + at + sz + round16(n ? n : 1));
    if (!op) return NULL;
    void **x = (void **)(op->blob + at);
    size_t *size = (size_t *)(op->blob + at + list);
    unsigned char *copy = op->blob + at + sz;
    if (n) memcpy(copy, buf, n);
    *size = n;
    x[0] = XQ_LAUNCH_PARAM_BUFFER_POINTER, x[1] = copy, x[2] = XQ_LAUNCH_PARAM_BUFFER_SIZE, x[3] = size,
    x[4] = XQ_LAUNCH_PARAM_END;
    op->params = NULL, op->extra = x;
    return op;
}

/* A deferred kernel launch with its parameters copied (the driver copies them at the call too,
 * so the caller may reuse them when we return), or NULL: not deferred. */
static dop *dop_kernel(void *f, void **params, void **extra, size_t attrs)
{
    if (!f) return NULL;
    pthread_mutex_lock(&xqc_fc_mu);
    finfo *e = finfo_get(f, 0);
    int known = e && e->ok, np = -1;
    uint32_t total = 0, *off = NULL, *sz = NULL;
    int packed = extra && extra[0] != XQ_LAUNCH_PARAM_END;
    if (known && !packed && layout(e, f)) np = e->np, total = e->total, off = e->off, sz = e->sz;
    pthread_mutex_unlock(&xqc_fc_mu);
    if (!known) {
        ADD(&xqc_nodefer[ND_UNKNOWN], 1);
        return NULL;
    }
    if (packed) return dop_extra(params, extra, attrs);
    if (np < 0 || (np && !params)) {
        ADD(&xqc_nodefer[ND_LAYOUT], 1);
        return NULL;
    }
    size_t at = round16(attrs), ptrs = (size_t)np * sizeof(void *), vals = round16(total);
    dop *op = malloc(sizeof *op + at + ptrs + vals);
    if (!op) return NULL;
    op->params = np ? (void **)(op->blob + at) : NULL;
    op->extra = NULL;
    unsigned char *v = op->blob + at + ptrs;
    for (int i = 0; i < np; i++) {
        memcpy(v + off[i], params[i], sz[i]);
        op->params[i] = v + off[i];
    }
    return op;
}

static dop *dop_plain(void)
{
    dop *op = malloc(sizeof *op);
    if (op) op->params = NULL, op->extra = NULL;
    return op;
}

dop *xqc_build_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned shmem, CUstream h, void **params, void **extra)
{
    dop *op = dop_kernel(f, params, extra, 0);
    if (op) op->kind = D_KERNEL, op->a.k = (typeof(op->a.k)){f, {gx, gy, gz}, {bx, by, bz}, shmem, h};
    return op;
}

dop *xqc_build_launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    if (!c || (c->numAttrs && !c->attrs) || c->numAttrs > 64) return NULL;
    size_t attrs = (size_t)c->numAttrs * XQ_LAUNCH_ATTR_SIZE;
    dop *op = dop_kernel(f, params, extra, attrs);
    if (!op) return NULL;
    op->kind = D_KERNEL_EX, op->a.kx.cfg = *c, op->a.kx.f = f;
    if (attrs) memcpy(op->blob, c->attrs, attrs), op->a.kx.cfg.attrs = (CUlaunchAttribute *)op->blob;
    return op;
}

dop *xqc_build_graph(CUgraphExec g, CUstream h)
{
    pthread_mutex_lock(&xqc_fc_mu);
    finfo *e = finfo_get(g, 0);
    int ok = e && e->ok;
    pthread_mutex_unlock(&xqc_fc_mu);
    dop *op = ok ? dop_plain() : NULL;
    if (op) op->kind = D_GRAPH, op->a.gr.g = g, op->a.gr.h = h;
    return op;
}

dop *xqc_build_set(int kind, CUdeviceptr d, unsigned v, size_t n, CUstream h)
{
    dop *op = dop_plain();
    if (op) op->kind = kind, op->a.set.d = d, op->a.set.v = v, op->a.set.n = n, op->a.set.h = h;
    return op;
}

size_t xqc_defer_copy_max = XQ_DEFER_COPY_DEFAULT;

/* A host-to-device copy deferred: its source is read now, into the entry, as the driver reads a
 * pageable source before the call returns (the caller may reuse it at once); a pinned source may
 * only be reused once the copy is done in stream order, so reading it at the call reads what the
 * copy would. Made later from the entry (pageable memory to the driver: it is staged before the
 * call returns, and the entry is freed after). Over xqc_defer_copy_max bytes: not deferred (the
 * caller waits, as before). A training step's few small copies (an optimizer's step count, a
 * learning rate) otherwise made its thread wait for all its deferred kernels at each (H200,
 * session 64: bf16 training beside a CUDA graph every 25 ms waited 1.7 s of 12 on the guard and
 * 1.6 s for deferred kernels in calls that could not be deferred). */
dop *xqc_build_htod(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
    if (!n || n > xqc_defer_copy_max || !src) return NULL;
    dop *op = malloc(sizeof *op + n);
    if (!op) return NULL;
    memcpy(op->blob, src, n);
    op->params = NULL, op->extra = NULL;
    op->kind = D_HTOD, op->a.cp.dst = dst, op->a.cp.src = 0, op->a.cp.hsrc = op->blob, op->a.cp.n = n, op->a.cp.h = h;
    return op;
}

/* A device-to-device copy deferred: nothing of the host's is read (unless XQ_DEFER_COPIES=0). */
dop *xqc_build_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    if (!xqc_defer_copy_max) return NULL;
    dop *op = dop_plain();
    if (op) op->kind = D_DTOD, op->a.cp.dst = dst, op->a.cp.src = src, op->a.cp.hsrc = NULL, op->a.cp.n = n, op->a.cp.h = h;
    return op;
}

static CUresult dop_call(dop *op)
{
    switch (op->kind) {
    case D_KERNEL:
        return ((CUresult(*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **))op->real)(op->a.k.f, op->a.k.g[0], op->a.k.g[1], op->a.k.g[2],
                                                                   op->a.k.b[0], op->a.k.b[1], op->a.k.b[2],
                                                                   op->a.k.shmem, op->a.k.h, op->params, op->extra);
    case D_KERNEL_EX:
        return ((CUresult(*)(const CUlaunchConfig *, CUfunction, void **, void **))op->real)(&op->a.kx.cfg, op->a.kx.f,
                                                                                           op->params, op->extra);
    case D_GRAPH:
        return ((CUresult(*)(CUgraphExec, CUstream))op->real)(op->a.gr.g, op->a.gr.h);
    case D_SET8:
        return ((CUresult(*)(CUdeviceptr, unsigned char, size_t, CUstream))op->real)(op->a.set.d, (unsigned char)op->a.set.v,
                                                                                   op->a.set.n, op->a.set.h);
    case D_SET16:
        return ((CUresult(*)(CUdeviceptr, unsigned short, size_t, CUstream))op->real)(
            op->a.set.d, (unsigned short)op->a.set.v, op->a.set.n, op->a.set.h);
    case D_HTOD:
        return ((CUresult(*)(CUdeviceptr, const void *, size_t, CUstream))op->real)(op->a.cp.dst, op->a.cp.hsrc, op->a.cp.n,
                                                                                   op->a.cp.h);
    case D_DTOD:
        return ((CUresult(*)(CUdeviceptr, CUdeviceptr, size_t, CUstream))op->real)(op->a.cp.dst, op->a.cp.src, op->a.cp.n,
                                                                                 op->a.cp.h);
    default:
        return ((CUresult(*)(CUdeviceptr, unsigned, size_t, CUstream))op->real)(op->a.set.d, op->a.set.v, op->a.set.n,
                                                                              op->a.set.h);
    }
}


/* A deferred launch's threads (see gate.threads) and where its stream is. */
static uint64_t dop_threads(const dop *op)
{
    switch (op->kind) {
    case D_KERNEL:
        return xqc_kthreads(op->a.k.f, (uint64_t)op->a.k.g[0] * op->a.k.g[1] * op->a.k.g[2],
                            (uint64_t)op->a.k.b[0] * op->a.k.b[1] * op->a.k.b[2], op->a.k.shmem);
    case D_KERNEL_EX:
        return xqc_kthreads(op->a.kx.f, (uint64_t)op->a.kx.cfg.gridDimX * op->a.kx.cfg.gridDimY * op->a.kx.cfg.gridDimZ,
                            (uint64_t)op->a.kx.cfg.blockDimX * op->a.kx.cfg.blockDimY * op->a.kx.cfg.blockDimZ,
                            op->a.kx.cfg.sharedMemBytes);
    case D_GRAPH:
        return UINT64_MAX;
    default:
        return 0;
    }
}

static CUstream *dop_stream(dop *op)
{
    return op->kind == D_KERNEL ? &op->a.k.h : op->kind == D_KERNEL_EX ? &op->a.kx.cfg.hStream : op->kind == D_GRAPH ? &op->a.gr.h : NULL;
}

/* A deferred launch, made narrow when its stream is narrowed. */
static CUresult dop_call_narrow(xstream *st, dop *op)
{
    CUstream *hp = dop_stream(op), keep = hp ? *hp : NULL, sx = NULL;
    CUstream gs = hp ? xqc_narrow_begin(st, keep, 0, dop_threads(op), &sx) : NULL;
    if (!gs) return dop_call(op);
    *hp = gs;
    CUresult r = dop_call(op);
    *hp = keep;
    return xqc_narrow_end(sx, gs, r) ? dop_call(op) : r;
}

static uint32_t g_defer_failed_logged, g_defer_exit_logged;

/* Makes st's deferred launches, in order, while the stream may launch (force: whatever the
 * limits and the gate: the node is gone or the process exits). One thread at a time per stream;
 * a thread finding another at it leaves the work to it. */
void xqc_drain(xstream *st, int force)
{
    if (!LD(&st->dq_n) || pthread_mutex_trylock(&st->sub_mu)) return;
    int kick = 0, made = 0;
    CUcontext cur = NULL, tmp;
    int pushed = 0;
    for (;;) {
        int idle = 0;
        mu_lock(&st->mu);
        dop *op = st->dq_head;
        uint64_t ck = 0, base = op ? op->ck : 0; /* only this thread takes from the head */
        int isolate = op ? op->isolate : 0;
        mu_unlock(&st->mu);
        /* its kind at the width it would be made at now (the node narrows or widens meanwhile) */
        int need = 0, w = op ? xqc_narrow_width(st, dop_threads(op), NULL, &need) : 0;
        uint32_t scale;
        uint64_t est = xqc_cost_get_w(base, w, need, NULL, &ck, &scale);
        mu_lock(&st->mu);
        uint32_t gs = LD(&xqc_state);
        int why = !op || force || LD(&st->unstick) ? 0 : (gs & 1) && st->gen == gs && st->shm ? xqc_may_launch(st, st->shm, est, NULL) : 0;
        if (!op || why) {
            int lw = why == 2;
            if (lw != st->dq_lw) ADD(&xqc_limit_waiters, lw ? 1 : -1), st->dq_lw = lw;
            mu_unlock(&st->mu);
            break;
        }
        st->pending--, st->in_flight++;
        int smp = -1;
        if (isolate && xqc_timed && !st->smp_off) smp = xqc_smp_take(st, est), isolate = 0;
        if (!est) est = xqc_unknown_charge(st);
        xqc_note_launch(st, est);
        st->fl_est += est;
        uint64_t t = now_ns();
        xqc_wait_end(st, t);
        xqc_mirror(st);
        mu_unlock(&st->mu);
        if (!pushed && !made) {
            xqc_cu.CtxGetCurrent(&cur);
            pushed = cur != st->ctx && xqc_cu.CtxPush(st->ctx) == CUDA_SUCCESS;
        }
        if (isolate) { /* what came before is measured apart */
            mu_lock(&st->mu);
            kick |= st->tail_n ? xqc_close_tail(st, &idle) : 0;
            mu_unlock(&st->mu);
        }
        xqc_stall_guard(st, op->kind == D_KERNEL ? op->a.k.h : op->kind == D_KERNEL_EX ? op->a.kx.cfg.hStream
                        : op->kind == D_GRAPH ? op->a.gr.h : op->kind == D_HTOD || op->kind == D_DTOD ? op->a.cp.h : op->a.set.h, 0);
        int timed = smp >= 0 && !xqc_smp_record(st, smp, 0);
        CUresult r = dop_call_narrow(st, op);
        timed = timed && r == CUDA_SUCCESS && !xqc_smp_record(st, smp, 1);
        uint64_t thr = r == CUDA_SUCCESS ? dop_threads(op) : 0; /* before the lock: XQ_WIDTH=occupancy may ask the driver */
        mu_lock(&st->mu);
        st->dq_head = op->next;
        if (!st->dq_head) st->dq_tail = NULL;
        st->dq_n--;
        if (st->kind == K_LEGACY) ADD(&xqc_legacy_deferred, -1); /* first: never more than xqc_deferred */
        ADD(&xqc_deferred, -1);
        if (r != CUDA_SUCCESS) {
            st->in_flight--, st->failed++;
            st->fl_est -= est <= st->fl_est ? est : st->fl_est;
            if (--st->active == 0) st->ready_since = 0, idle = 1;
        } else {
            st->launched++;
            xqc_width_note(st, thr, t);
            kick |= xqc_after_launch(st, t, ck, est, scale, isolate || timed, &idle); /* a sample is read once marked */
        }
        smp_launched(st, smp, ck, timed);
        xqc_mirror(st);
        mu_unlock(&st->mu);
        if (r == CUDA_ERROR_DEINITIALIZED) /* the process is exiting: its runtime shut the driver down first */
            xlog(__atomic_fetch_add(&g_defer_exit_logged, 1, __ATOMIC_SEQ_CST) < 1 ? 2 : 3,
                 "xq: a deferred launch on stream %s was made after the driver shut down (the process is exiting): "
                 "counted as failed", st->label);
        else if (r != CUDA_SUCCESS)
            xlog(__atomic_fetch_add(&g_defer_failed_logged, 1, __ATOMIC_SEQ_CST) < 10 ? 1 : 3,
                 "xq: a deferred launch on stream %s failed when made: CUDA error %d (counted as failed)", st->label, r);
        if (idle) xqc_wake_node(st);
        free(op);
        made++;
    }
    if (pushed) xqc_cu.CtxPop(&tmp);
    pthread_mutex_unlock(&st->sub_mu);
    if (made) {
        xqc_wake_held(st); /* threads waiting on the order or on a full queue */
        ADD(&g_dq_word, 1);
        if (LD(&xqc_dq_waiters)) futex_wake(&g_dq_word);
    }
    if (kick) xqc_tracker_kick();
}

void xqc_drain_all(int force)
{
    for (xstream *st = LD(&xqc_all); st; st = st->next_all)
        if (LD(&st->in_use) && LD(&st->dq_n)) xqc_drain(st, force);
}

/* Waits until every deferred launch of the process was made (helping where it may). Called
 * before any driver entry point that could see or order the deferred work. */
void xqc_flush_all(void)
{
    while (LD(&xqc_deferred)) {
        uint32_t seq = LD(&g_dq_word);
        xqc_drain_all(0);
        if (!LD(&xqc_deferred)) break;
        ADD(&xqc_dq_waiters, 1);
        xqc_tracker_kick();
        futex_wait(&g_dq_word, seq, 1000000L);
        ADD(&xqc_dq_waiters, -1);
        xqc_node_look(); /* the deferred launches wait for a node that may have stopped */
    }
}
