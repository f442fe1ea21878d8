/*
 * cuda_streams.c: the stream table: one xstream per CUDA stream (explicit handle, the legacy
 * default stream per context, the per-thread default stream per context and thread), made at
 * its first gated call and forgotten when it is destroyed or its thread exits.
 */
#include "cuda_int.h"

pthread_mutex_t xqc_tab_mu = PTHREAD_MUTEX_INITIALIZER;
xstream *xqc_hash[BUCKETS], *xqc_free, *xqc_all;
static uint32_t g_explicit_n;   /* label counter s<N> */
pthread_key_t xqc_ptds_key;

/* A zeroed stream record on a cache line's boundary (xstream is aligned to 64: its first four
 * lines are what a launch touches) */
static xstream *stream_alloc(void)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, sizeof(xstream))) return NULL;
    memset(p, 0, sizeof(xstream));
    return p;
}
__thread xstream *xqc_t_ptds; /* this thread's per-thread default streams */

/* Explicit streams are keyed by handle alone (ctx only says where their events go). */
static unsigned bucket(int kind, CUstream h, CUcontext ctx, pid_t tid)
{
    uintptr_t x = (uintptr_t)h ^ (kind == K_EXPLICIT ? 0 : (uintptr_t)ctx >> 4) ^ ((uintptr_t)tid * 2654435761u);
    return (unsigned)((x >> 4) ^ (x >> 12)) % BUCKETS;
}

xstream *xqc_stream_find_locked(int kind, CUstream h, CUcontext ctx, pid_t tid)
{
    for (xstream *s = xqc_hash[bucket(kind, h, ctx, tid)]; s; s = s->next_hash)
        if (s->kind == kind && s->h == h && (kind == K_EXPLICIT || s->ctx == ctx) && s->tid == tid) return s;
    return NULL;
}

xstream *xqc_stream_new(int kind, CUstream h, CUcontext ctx, pid_t tid)
{
    /* identity first, outside the locks: these are driver calls */
    int dev = 0, prio = 0, least = 0, greatest = 0, pushed = 0;
    char pci[24];
    CUcontext cur = NULL, tmp;
    xqc_cu.CtxGetCurrent(&cur);
    if (ctx && ctx != cur) pushed = xqc_cu.CtxPush(ctx) == CUDA_SUCCESS;
    xqc_cu.CtxGetDevice(&dev);
    xqc_pci_bus_id(dev, pci, sizeof pci);
    xqc_cu.CtxGetStreamPriorityRange(&least, &greatest);
    xqc_cu.StreamGetPriority(kind == K_EXPLICIT ? h : kind == K_PTDS ? CU_STREAM_PER_THREAD : NULL, &prio);
    const char *why = NULL;
    cword *w = xqc_memop ? xqc_word_get(dev, &why) : NULL; /* before the renumbering */
    if (pushed) xqc_cu.CtxPop(&tmp);
    CUdevice cudev = dev;
    dev = xqc_physical_device(dev);

    pthread_mutex_lock(&xqc_tab_mu);
    xstream *st = xqc_stream_find_locked(kind, h, ctx, tid);
    int fresh = !xqc_free;
    if (st || (fresh && !(st = stream_alloc()))) { /* made by another thread meanwhile, or no memory */
        pthread_mutex_unlock(&xqc_tab_mu);
        if (w) xqc_word_put(w, ctx ? ctx : cur);
        return st;
    }
    if (!fresh) {
        st = xqc_free;
        xqc_free = st->next_hash;
        xstream *keep = st->next_all;
        memset(st, 0, sizeof *st);
        st->next_all = keep;
    }
    st->mu.w = 0;
    pthread_mutex_init(&st->sub_mu, NULL);
    st->kind = kind, st->h = h, st->ctx = ctx, st->tid = tid, st->slot = -1;
    st->device = dev, st->cudev = cudev, st->prio = prio, st->least = least, st->greatest = greatest;
    memcpy(st->pci, pci, sizeof st->pci);
    st->cmode = w ? 1 : xqc_memop ? -1 : 0, st->word = w;
    st->mseq = w ? LD(w->host) : 0;
    if (kind == K_EXPLICIT) snprintf(st->label, sizeof st->label, "s%u", ++g_explicit_n);
    else strcpy(st->label, kind == K_LEGACY ? "default" : "ptds");
    unsigned b = bucket(kind, h, ctx, tid);
    st->next_hash = xqc_hash[b];
    xqc_hash[b] = st;
    ST(&st->in_use, 1);
    if (fresh) {
        st->next_all = xqc_all;
        ST(&xqc_all, st); /* published after it is complete: the tracker walks without the lock */
    }
    pthread_mutex_unlock(&xqc_tab_mu);
    if (why) xqc_memop_unavailable(st, why);
    if (kind == K_PTDS) { /* forgotten when its thread exits */
        st->next_ptds = xqc_t_ptds;
        xqc_t_ptds = st;
        pthread_setspecific(xqc_ptds_key, (void *)1);
    }
    return st;
}

/* The stream's queue leaves the node once its work is seen done (the tracker sends CLOSE). */
static void stream_forget_locked(xstream *st)
{
    xstream **pp = &xqc_hash[bucket(st->kind, st->h, st->ctx, st->tid)];
    while (*pp && *pp != st) pp = &(*pp)->next_hash;
    if (!*pp) return;
    *pp = st->next_hash;
    st->next_hash = NULL;
    ADD(&xqc_tabgen, 1);
    ST(&st->closing, 1);
    ADD(&xqc_closing, 1);
}


/* Before the stream is destroyed: its unmarked launches get their mark (the handle cannot be
 * queried afterwards), and its queue leaves the node once that mark is seen. */
void xqc_stream_forget(CUstream h)
{
    pthread_mutex_lock(&xqc_tab_mu);
    xstream *st = xqc_stream_find_locked(K_EXPLICIT, h, NULL, 0);
    if (st) stream_forget_locked(st);
    pthread_mutex_unlock(&xqc_tab_mu);
    if (!st) return;
    CUcontext cur = NULL, tmp;
    xqc_cu.CtxGetCurrent(&cur);
    int pushed = cur != st->ctx && xqc_cu.CtxPush(st->ctx) == CUDA_SUCCESS, idle = 0;
    mu_lock(&st->mu);
    xqc_close_tail(st, &idle);
    mu_unlock(&st->mu);
    if (pushed) xqc_cu.CtxPop(&tmp);
    if (idle) xqc_wake_node(st);
    xqc_tracker_kick();
}

void xqc_ptds_thread_exit(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&xqc_tab_mu);
    for (xstream *st = xqc_t_ptds; st; st = st->next_ptds) stream_forget_locked(st);
    pthread_mutex_unlock(&xqc_tab_mu);
    xqc_t_ptds = NULL;
    xqc_tracker_kick();
}

/* xq_mu's slow paths (cuda_int.h): a short spin (the holder is another thread on its way out of a
 * few hundred instructions), then sleep on the word marked 2 until an unlock wakes one sleeper. */
static void mu_wait(xq_mu *m);
void xqc_mu_wait(xq_mu *m)
{
    uint64_t p0 = XQ_HT_ON ? now_ns() : 0;
    mu_wait(m);
    if (p0) xqc_ht_part(HP_MUWAIT, now_ns() - p0);
}

static void mu_wait(xq_mu *m)
{
    int saved_errno = errno;
    for (int i = 0; i < 100; i++) {
        uint32_t z = 0;
        if (!LD(&m->w) && __atomic_compare_exchange_n(&m->w, &z, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
    }
    while (__atomic_exchange_n(&m->w, 2, __ATOMIC_ACQUIRE) != 0)
        syscall(SYS_futex, &m->w, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
    errno = saved_errno;
}

void xqc_mu_wake(xq_mu *m)
{
    int saved_errno = errno;
    syscall(SYS_futex, &m->w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved_errno;
}
