/*
 * cuda_words.c: words of page-locked host memory the device writes or waits on: the memop
 * completion words (XQ_COMPLETION=memop) and the level 2 stall words (XQ_STALL=1).
 */
#include "cuda_int.h"

/* XQ_COMPLETION=memop (the word: cword, cuda_int.h): behind each launch the stream writes the next sequence number into a word
 * of page-locked host memory (cuStreamWriteValue64_v2), so the tracker sees completions with a
 * plain load: no driver call, hence no cost to the launching threads (an event query makes the
 * driver submit queued work, which is why events are only looked at every 20-100 us). A word is
 * a page of our own, registered for the stream's life in its context and never freed (a late
 * read still hits mapped memory) nor inherited by fork() (no copy-on-write under DMA). When the
 * stream is closed (every write landed) the page is unregistered and kept for the next stream,
 * which continues from the value in it. */
cword *xqc_words; /* unregistered pages */
pthread_mutex_t xqc_words_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t g_memop_logged;

/* Unregisters w (in ctx, when given) and keeps it for later. */
void xqc_word_put(cword *w, CUcontext ctx)
{
    if (ctx) {
        CUcontext cur = NULL, tmp;
        xqc_cu.CtxGetCurrent(&cur);
        int pushed = cur != ctx && xqc_cu.CtxPush(ctx) == CUDA_SUCCESS;
        xqc_cu.HostUnregister(w->host); /* an error (a context already gone) leaves nothing to undo */
        if (pushed) xqc_cu.CtxPop(&tmp);
    }
    pthread_mutex_lock(&xqc_words_mu);
    w->next = xqc_words;
    xqc_words = w;
    pthread_mutex_unlock(&xqc_words_mu);
}

/* A word registered in the current context (dev's), or NULL and why not. */
cword *xqc_word_get(CUdevice dev, const char **why)
{
    int can = 0;
    if (!xqc_cu.WriteValue64 || !xqc_cu.HostRegister || !xqc_cu.HostUnregister || !xqc_cu.HostGetDevPtr || !xqc_cu.DeviceGetAttribute) {
        *why = "the driver lacks cuStreamWriteValue64_v2 or cuMemHostRegister_v2";
        return NULL;
    }
    if (xqc_cu.DeviceGetAttribute(&can, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, dev) || !can) {
        *why = "the device has no 64-bit stream memory operations";
        return NULL;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    pthread_mutex_lock(&xqc_words_mu);
    cword *w = xqc_words;
    if (w) xqc_words = w->next;
    pthread_mutex_unlock(&xqc_words_mu);
    if (!w && (w = calloc(1, sizeof *w))) {
        void *p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) free(w), w = NULL;
        else madvise(p, pg, MADV_DONTFORK), w->host = p;
    }
    if (!w) *why = "out of memory";
    else if (xqc_cu.HostRegister(w->host, pg, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP))
        *why = "cuMemHostRegister_v2 failed", xqc_word_put(w, NULL);
    else if (xqc_cu.HostGetDevPtr(&w->dev, w->host, 0)) {
        *why = "cuMemHostGetDevicePointer_v2 failed";
        xqc_cu.HostUnregister(w->host);
        xqc_word_put(w, NULL);
    } else
        return w;
    return NULL;
}

void xqc_memop_unavailable(xstream *st, const char *why)
{
    xlog(__atomic_exchange_n(&g_memop_logged, 1, __ATOMIC_SEQ_CST) ? 2 : 1,
         "xq: XQ_COMPLETION=memop unavailable for stream %s (%s); its completions are watched with events",
         st->label, why);
}

/* ------------------------------------------------------------------ level 2 (XQ_STALL=1)
 *
 * Level 1 cannot take back what a stream launched: a tenant the node prefers waits behind the
 * held stream's launched work. With XQ_STALL=1 each launch of a stream the node held in the last
 * second first puts cuStreamWaitValue32(word == 0) on the stream; the tracker mirrors the node's
 * gate into the word (1 while the gate is closed), so a launched command that has not started
 * stays where it is while the node holds the stream, and only the running one goes on. The word
 * lies in page-locked host memory of our own (never freed, as the memop words), so the tracker
 * writes it with a plain store. A stream the node never holds pays nothing; a guard costs the
 * device about 2 us per launch. The word is cleared whenever the gate is seen open, when the
 * node is lost and at exit, so a held stream never outlives the hold. */
#define STALL_HOLD_NS 1000000000ull
static uint32_t g_stall_logged;

void xqc_stall_set(xstream *st, uint32_t v)
{
    uint32_t *w = LD(&st->stall);
    if (w && LD(w) != v) {
        ST(w, v);
        if (v) ADD(&st->stall_holds, 1);
    }
}

/* Tracker, before it looks at each stream: whether a stream of this process that the node lets
 * launch has work in flight. That work may wait (cuStreamWaitEvent) for work a held stream of the
 * process launched, and a word holding the held one on the device would then hold both for good:
 * the node, seeing the open one busy, holds the other behind it (a higher stream priority; found
 * by the random programs under a test node holding as a priority policy does, with XQ_STALL=1: 3
 * runs of 24 never ended). So while one is, no word holds any stream: the held ones are held at
 * level 1 only (what they launched runs; what they have not, waits). */
int xqc_stall_open_busy(void)
{
    uint32_t gs = LD(&xqc_state);
    for (xstream *st = LD(&xqc_all); st; st = st->next_all) {
        if (!LD(&st->in_use) || !LD(&st->in_flight)) continue;
        xq_slot *s = LD(&st->gen) == gs && (gs & 1) ? st->shm : NULL;
        if (!s || !LD(&s->gate)) return 1;
    }
    return 0;
}

/* Tracker: the word follows the node's gate (open_busy: xqc_stall_open_busy's answer, then 0). */
void xqc_stall_watch(xstream *st, int open_busy)
{
    xq_slot *s = LD(&st->gen) == LD(&xqc_state) && (LD(&xqc_state) & 1) ? st->shm : NULL;
    if (s && LD(&s->gate)) {
        ST(&st->held_ns, now_ns());
        xqc_stall_set(st, open_busy ? 0 : 1);
    } else {
        xqc_stall_set(st, 0);
    }
}

void xqc_stall_clear_all(void)
{
    for (xstream *st = LD(&xqc_all); st; st = st->next_all) xqc_stall_set(st, 0);
}

/* Before a launch on st (handle h as the caller gives it; ptsz: per-thread default stream
 * semantics), in the launch's context: the guard, if the node held st lately. */
void xqc_stall_guard(xstream *st, CUstream h, int ptsz)
{
    if (!xqc_stall || st->stall_off) return;
    uint64_t held = LD(&st->held_ns);
    if (!held || now_ns() - held > STALL_HOLD_NS) return;
    if (!LD(&st->stall)) {
        static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
        pthread_mutex_lock(&mu);
        if (!st->stall && !st->stall_off) {
            size_t pg = (size_t)sysconf(_SC_PAGESIZE);
            void *p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            CUdeviceptr d = 0;
            if (p == MAP_FAILED) {
                st->stall_off = 1;
            } else {
                madvise(p, pg, MADV_DONTFORK);
                if (xqc_cu.HostRegister(p, pg, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP) ||
                    xqc_cu.HostGetDevPtr(&d, p, 0))
                    st->stall_off = 1; /* the page stays mapped: a late reader still hits memory */
                else
                    st->stall_dev = d, ST(&st->stall, (uint32_t *)p);
            }
            if (st->stall_off)
                xlog(__atomic_exchange_n(&g_stall_logged, 1, __ATOMIC_SEQ_CST) ? 2 : 1,
                     "xq: XQ_STALL=1 unavailable for stream %s (no page-locked word); it stays at level 1", st->label);
        }
        pthread_mutex_unlock(&mu);
        if (!LD(&st->stall)) return;
    }
    xq_slot *s = LD(&st->gen) == LD(&xqc_state) && (LD(&xqc_state) & 1) ? st->shm : NULL;
    if (!s || !LD(&s->gate)) xqc_stall_set(st, 0); /* we may launch: the gate is open */
    CUresult r = (ptsz ? xqc_cu.WaitValue32Ptsz : xqc_cu.WaitValue32)(h, st->stall_dev, 0, 0x1 /* CU_STREAM_WAIT_VALUE_EQ */);
    if (r == CUDA_SUCCESS) {
        ADD(&st->stall_guards, 1);
    } else {
        st->stall_off = 1;
        xlog(1, "xq: XQ_STALL=1: cuStreamWaitValue32 failed on stream %s (CUDA error %d); it stays at level 1", st->label, r);
    }
}
