/*
 * cuda_narrow.c: narrowing (docs/processes.md "Space and time"): while the node narrows a stream,
 * its kernels and graphs go to a stream of a green context on part of the device.
 */
#include "cuda_int.h"

/* ------------------------------------------------------------------ narrowing
 * docs/processes.md "Space and time": a best-effort process runs as a client of the node's MPS
 * server on the whole device. While the node narrows one of its streams (the slot's reserve_sms:
 * leave that many multiprocessors to the queues it prefers), each kernel or graph launched on it
 * goes to a stream of a green context on the rest of the device, joined to the application's
 * stream by two events: the green stream waits for what the stream has before it, and the stream
 * waits for the launch, so that everything later on the stream (the interposer's marks and
 * samples included) still comes after it. Measured on an H200: 1.3 us more per launch. */
static uint32_t g_narrow_logged;
static __thread CUcontext t_nctx; /* the context this thread's two join events belong to */
static __thread CUevent t_nev[2];

int xqc_narrow_usable(void)
{
    return xqc_narrow && LD(&xqc_narrow_state) == 0 && xqc_cu.GetDevResource && xqc_cu.SplitByCount && xqc_cu.GenerateDesc &&
           xqc_cu.GreenCreate && xqc_cu.GreenStream && xqc_cu.WaitEvent && xqc_cu.StreamSync;
}

static void narrow_off(const char *what, CUresult r)
{
    ST(&xqc_narrow_state, -1);
    if (r == CUDA_ERROR_DEINITIALIZED) {
        /* the driver shut down: the process is exiting (its runtime's teardown ran before launches
         * of ours were made); nothing to warn of, and nothing for the node to hold it by */
        if (!__atomic_fetch_add(&g_narrow_logged, 1, __ATOMIC_SEQ_CST))
            xlog(2, "xq: narrowing ends with the driver (%s: CUDA error 4, deinitialized: the process is exiting)", what);
        return;
    }
    if (!__atomic_fetch_add(&g_narrow_logged, 1, __ATOMIC_SEQ_CST)) {
        xlog(1, "xq: narrowing launches stops for this process: %s failed (CUDA error %d); it runs on the whole device", what, r);
        /* the node holds it in time from now on, as a process that cannot be narrowed */
        if (LD(&xqc_state) & 1) xqc_send_line("NARROW off");
    }
}

#define GREEN_MAX 32
static struct { CUdevice dev; int off, n; void *ctx; } g_green[GREEN_MAX];
static int g_ngreen;
/* the rest of the device after the first off multiprocessors, a green context to split parts at
 * offset off from (never given work); offsets are multiples of 8: 32 places cover 256 */
#define REST_MAX 32
static struct { CUdevice dev; int off; void *ctx; } g_rest[REST_MAX];
static int g_nrest;
static pthread_mutex_t green_mu = PTHREAD_MUTEX_INITIALIZER;

/* The process's green context of the n multiprocessors after the first off ones on dev, made once:
 * off a multiple of n, the device split in groups of n, the (off / n)-th of them; else the device
 * split once at off, what is after it made a green context, and that context's multiprocessors
 * split by n, the first of those. Every process splits the device alike, so processes given
 * different groups do not overlap. */
/* How the device is split (XQ_NARROW_SPLIT): by default with
 * CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE (CUDA 12.4+, compute capability 9.0+: groups
 * the driver makes for the largest thread clusters); XQ_NARROW_SPLIT=plain without it. Measured on
 * the H200 (session 72): both splits give a green context the same multiprocessors, but beside a
 * kernel in one split plainly another client's large eager batch waited for that kernel to end
 * (ResNet-50 batch 128 beside a GEMM on 64 of 132: 333.4 ms a request against 13.6 alone), and
 * beside one split for clusters it did not (22.3 against 14.3). A driver that refuses the flag (a
 * device before compute capability 9.0) is said once and the plain split used from then on. */
static unsigned g_split_flags = 2;
static int g_split_read;
static uint32_t g_split_refused;
static unsigned split_flags(void)
{
    if (!g_split_read) { /* under green_mu */
        g_split_read = 1;
        const char *v = getenv("XQ_NARROW_SPLIT");
        if (v && !strcmp(v, "plain")) g_split_flags = 0;
        else if (v && *v && strcmp(v, "cluster"))
            xlog(1, "xq: ignoring XQ_NARROW_SPLIT='%s': not cluster or plain; the split for clusters is used", v);
    }
    return g_split_flags;
}

/* cuDevSmResourceSplitByCount with the flags asked; refused with them and made without, the plain
 * split kept for the process's later green contexts (under green_mu). Refused both ways, the
 * first answer is returned and the flags kept: it was not the flag that was refused. */
static CUresult split_by_count(void *result, unsigned *groups, void *in, void *rest, unsigned *flags, unsigned n)
{
    unsigned want = *groups;
    CUresult r = xqc_cu.SplitByCount(result, groups, in, rest, *flags, n);
    if (r && *flags) {
        *groups = want;
        if (xqc_cu.SplitByCount(result, groups, in, rest, 0, n)) return r;
        if (!__atomic_fetch_add(&g_split_refused, 1, __ATOMIC_SEQ_CST)) {
            xlog(1, "xq: the driver refused a split for thread clusters (CUDA error %d, %u multiprocessors); the plain "
                    "split is used from now on", (int)r, n);
            if (LD(&xqc_state) & 1) xqc_send_line("NARROW plain"); /* the node says so and shows it */
        }
        *flags = g_split_flags = 0;
        r = CUDA_SUCCESS;
    }
    return r;
}

#define RES_SIZE 144 /* sizeof(CUdevResource) in CUDA 12.4-13.0: its type at 0, its count at 96 */
#define RES_GROUPS 16
static uint32_t g_part_logged, g_full_logged;
static void *green_ctx(CUdevice dev, int off, int n)
{
    pthread_mutex_lock(&green_mu);
    void *g = NULL;
    for (int i = 0; i < g_ngreen && !g; i++)
        if (g_green[i].dev == dev && g_green[i].off == off && g_green[i].n == n) g = g_green[i].ctx;
    if (!g && g_ngreen < GREEN_MAX) {
        static _Alignas(16) unsigned char all[1024], rest[1024], part[RES_SIZE * RES_GROUPS + 1024];
        memset(all, 0, sizeof all), memset(part, 0, sizeof part), memset(rest, 0, sizeof rest);
        static _Alignas(16) unsigned char head[RES_SIZE * 2 + 1024], after[1024];
        int aligned = n > 0 && off % n == 0 && off / n < RES_GROUPS;
        int want = aligned && off > 0 ? off / n + 1 : 1;
        unsigned groups = (unsigned)want, one = 1;
        void *desc = NULL;
        CUresult r;
        const char *what = "cuDeviceGetDevResource";
        unsigned char *mine = part;
        uint64_t t0 = now_ns(); /* XQ_LOG=3: when it was made, and how long that took (the timeline) */
        unsigned sf = split_flags();
        if (!(r = xqc_cu.GetDevResource(dev, all, 1 /* CU_DEV_RESOURCE_TYPE_SM */)) && !aligned && off > 0) {
            /* a part of its own size: the first off multiprocessors split away, the rest split by n.
             * What a split makes cannot be split again (the H200's driver answers CUDA error 915):
             * the rest becomes a green context of its own, made once per offset, whose resource
             * can be */
            void *restg = NULL;
            for (int i = 0; i < g_nrest && !restg; i++)
                if (g_rest[i].dev == dev && g_rest[i].off == off) restg = g_rest[i].ctx;
            if (!restg) {
                void *rdesc = NULL;
                memset(head, 0, sizeof head), memset(after, 0, sizeof after);
                if (!xqc_cu.GreenGetResource) r = CUDA_ERROR_NOT_FOUND, what = "cuGreenCtxGetDevResource";
                else if (g_nrest >= REST_MAX) r = CUDA_ERROR_NOT_FOUND, what = "a part at a new offset";
                else if (!(r = (what = "cuDevSmResourceSplitByCount", split_by_count(head, &one, all, after, &sf, (unsigned)off))) &&
                         !(r = (what = "cuDevResourceGenerateDesc", xqc_cu.GenerateDesc(&rdesc, after, 1))) &&
                         !(r = (what = "cuGreenCtxCreate", xqc_cu.GreenCreate(&restg, rdesc, dev, 1)))) {
                    g_rest[g_nrest].dev = dev, g_rest[g_nrest].off = off, g_rest[g_nrest].ctx = restg;
                    g_nrest++;
                }
            }
            if (!r) r = (what = "cuGreenCtxGetDevResource", xqc_cu.GreenGetResource(restg, all, 1));
        }
        if (!r &&
            !(r = (what = "cuDevSmResourceSplitByCount", split_by_count(part, &groups, all, rest, &sf, (unsigned)n)))) {
            unsigned got = 0;
            int type = 0;
            if (want > 1) { /* the group asked for, if the driver made it and it reads as one */
                unsigned char *e = part + (size_t)(want - 1) * RES_SIZE;
                memcpy(&type, e, sizeof type), memcpy(&got, e + 96, sizeof got);
                if (groups >= (unsigned)want && type == 1 && got >= (unsigned)n) mine = e;
                else if (!__atomic_fetch_add(&g_part_logged, 1, __ATOMIC_SEQ_CST))
                    xlog(1, "xq: the device has no group %d of %d multiprocessors apart (%u groups made); this process's part "
                            "overlaps another's", want, n, groups);
            }
            if (!(r = (what = "cuDevResourceGenerateDesc", xqc_cu.GenerateDesc(&desc, mine, 1))) &&
                !(r = (what = "cuGreenCtxCreate", xqc_cu.GreenCreate(&g, desc, dev, 1 /* CU_GREEN_CTX_DEFAULT_STREAM */)))) {
                memcpy(&got, mine + 96, sizeof got);
                g_green[g_ngreen].dev = dev, g_green[g_ngreen].off = off, g_green[g_ngreen].n = n, g_green[g_ngreen].ctx = g;
                g_ngreen++;
                if (aligned || !off)
                    xlog(2, "xq: a green context of %u multiprocessors (group %d of %d made, %d asked) on device %d%s", got,
                         (int)((mine - part) / RES_SIZE), (int)groups, n, (int)dev, sf ? ", split for clusters" : "");
                else
                    xlog(2, "xq: a green context of %u multiprocessors (after the first %d, %d asked) on device %d%s", got, off,
                         n, (int)dev, sf ? ", split for clusters" : "");
                uint64_t t1 = now_ns();
                xlog(3, "xq: timeline green context: %u multiprocessors at offset %d, made at %llu in %llu ns", got, off,
                     (unsigned long long)t0, (unsigned long long)(t1 - t0));
            } else
                g = NULL;
        }
        if (!g) narrow_off(what, r);
    }
    if (!g && g_ngreen >= GREEN_MAX) {
        /* every place taken (parts of many sizes and offsets): the widest made inside the one asked
         * for, which overlaps no other process's part; none: the launch goes to the stream as asked */
        int best = -1;
        for (int i = 0; i < g_ngreen; i++)
            if (g_green[i].dev == dev && g_green[i].off >= off && g_green[i].off + g_green[i].n <= off + n &&
                (best < 0 || g_green[i].n > g_green[best].n))
                best = i;
        if (best >= 0) g = g_green[best].ctx;
        if (!__atomic_fetch_add(&g_full_logged, 1, __ATOMIC_SEQ_CST))
            xlog(1, "xq: %d green contexts made, no place for more: a part of %d multiprocessors after %d runs %s", GREEN_MAX, n,
                 off, best >= 0 ? "on a smaller one inside it" : "on the whole device");
    }
    pthread_mutex_unlock(&green_mu);
    return g;
}

/* st's green stream on the n multiprocessors after the first off, made once. */
static CUstream green_stream(xstream *st, int off, int n)
{
    mu_lock(&st->mu);
    for (int i = 0; i < 8; i++)
        if (st->green[i].off == off && st->green[i].n == n && st->green[i].s) {
            CUstream gs = st->green[i].s;
            mu_unlock(&st->mu);
            return gs;
        }
    int prio = st->prio;
    mu_unlock(&st->mu);
    void *g = green_ctx(st->cudev, off, n);
    CUstream gs = NULL;
    CUresult r;
    if (!g) return NULL;
    if ((r = xqc_cu.GreenStream(&gs, g, 1 /* CU_STREAM_NON_BLOCKING */, prio))) {
        narrow_off("cuGreenCtxStreamCreate", r);
        return NULL;
    }
    mu_lock(&st->mu);
    uint32_t i = st->green_next++ % 8; /* a stream replaced is left alone, not destroyed */
    st->green[i].off = off, st->green[i].n = n, st->green[i].s = gs;
    mu_unlock(&st->mu);
    return gs;
}

#define NARROW_SMALL 8
/* How many multiprocessors a launch of threads (UINT64_MAX: a graph) on st would run on if made
 * now: 0, as asked (the whole device, or a kernel too small to narrow); n > 0: a green context of n,
 * the off-th multiprocessor on (*off); *need: how many the launch could fill (at most the device;
 * a graph: the device), 0 when not narrowed. No side effect: the launch path asks it to know
 * which kind of estimate to charge before it knows whether it may launch. */
int xqc_narrow_width(const xstream *st, uint64_t threads, int *offp, int *needp)
{
    if (needp) *needp = 0;
    if (!st || !threads || !xqc_narrow_usable() || !st->shm || st->gen != LD(&xqc_state)) return 0;
    uint32_t reserve = LD(&st->shm->reserve_sms), part = LD(&st->shm->part);
    if (!reserve && !(part >> 31) && (part & 0xffff) <= 1) return 0; /* the whole device: most launches */
    /* a part of its own size (the top bit): offset and width in sixteenths of the region */
    int own = (part >> 31) != 0, o16 = own ? (int)((part >> 16) & 0xff) : 0, w16 = own ? (int)(part & 0xff) : 16;
    if (own && (w16 < 1 || o16 + w16 > 16)) own = 0, o16 = 0, w16 = 16;
    int count = own ? 1 : (int)(part & 0xffff), index = own ? 0 : (int)(part >> 16);
    if (count < 1 || index >= count) count = 1, index = 0;
    int tps, sms = reserve || count > 1 || (own && w16 < 16) ? (st->sms_c ? (tps = (int)st->tps_c, (int)st->sms_c) : xqc_dev_sms(st->cudev, &tps)) : 0;
    if (!sms || (threads != UINT64_MAX && threads <= (uint64_t)NARROW_SMALL * (uint64_t)tps)) return 0;
    /* green partitions come in multiples of 8 multiprocessors on Hopper (fewer elsewhere): the
     * region the reserve leaves, split among count processes */
    int region = !reserve ? sms : reserve >= (uint32_t)sms ? 8 : (sms - (int)reserve) / 8 * 8;
    if (region < 8) region = 8;
    int n = count > 1 ? region / count / 8 * 8 : own ? region * w16 / 16 / 8 * 8 : region;
    if (n < 8) n = 8;
    int off = own ? region * o16 / 16 / 8 * 8 : index * n;
    /* the last part of its own size takes what the others leave of the region (rounded down to 8
     * each, 6 sixteenths of 96 after 10 would be 32 of the 40 left). Parts by count keep their
     * groups of one split (one green context each, no rest's context: 48 and 48 of 104 leave 8
     * to no one); the node gives two or four equal parts as parts of their own size (48 and 56) */
    if (own && o16 + w16 == 16 && region - off >= 8) n = (region - off) / 8 * 8;
    if (off + n > sms) off = 0;
    if (!off && n >= sms) return 0;
    if (offp) *offp = off;
    if (needp) {
        uint64_t need = threads == UINT64_MAX ? (uint64_t)sms : (threads + (uint64_t)tps - 1) / (uint64_t)tps;
        *needp = need < (uint64_t)sms ? (int)need : sms;
    }
    return n;
}

/* Where the launch about to be made on st goes: a green stream, already waiting for what st has
 * before it (*sx: st's handle for the join back), or NULL: st itself, as asked. A kernel too
 * small to fill more than NARROW_SMALL multiprocessors stays on st: it cannot crowd the preferred
 * queues out, and a join costs more than it (two events, a hop between streams on the device:
 * a second eager decoder narrowed launch by launch went from 1.37 to 1.59 x its P99 alone). */
CUstream xqc_narrow_begin(xstream *st, CUstream h, int ptsz, uint64_t threads, CUstream *sx)
{
    int off = 0, n = xqc_narrow_width(st, threads, &off, NULL);
    return n ? xqc_narrow_begin_at(st, h, ptsz, n, off, sx) : NULL;
}

/* xqc_narrow_begin on n multiprocessors from the off-th (xqc_narrow_width's answer, which the
 * launch gate took a moment before: the launch path asks it once). */
CUstream xqc_narrow_begin_at(xstream *st, CUstream h, int ptsz, int n, int off, CUstream *sx)
{
    CUcontext cur = NULL;
    if (xqc_cu.CtxGetCurrent(&cur) || !cur) return NULL;
    if (t_nctx != cur) {
        CUresult r;
        if ((r = xqc_cu.EventCreate(&t_nev[0], CU_EVENT_DISABLE_TIMING)) || (r = xqc_cu.EventCreate(&t_nev[1], CU_EVENT_DISABLE_TIMING))) {
            narrow_off("cuEventCreate", r);
            return NULL;
        }
        t_nctx = cur;
    }
    CUstream gs = green_stream(st, off, n);
    if (!gs) return NULL;
    CUstream s = h ? h : ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    CUresult r;
    if ((r = xqc_cu.EventRecord(t_nev[0], s)) || (r = xqc_cu.WaitEvent(gs, t_nev[0], 0))) {
        narrow_off("joining the green stream", r);
        return NULL;
    }
    *sx = s;
    __atomic_add_fetch(&st->narrowed, 1, __ATOMIC_RELAXED);
    return gs;
}

/* After the launch into gs (r): the stream s waits for it. Returns 1 when the launch failed
 * there and must be made on s instead (narrowing then stops for the process). */
int xqc_narrow_end(CUstream s, CUstream gs, CUresult r)
{
    if (r != CUDA_SUCCESS) {
        narrow_off("a launch into a green stream", r);
        return 1;
    }
    if ((r = xqc_cu.EventRecord(t_nev[1], gs)) || (r = xqc_cu.WaitEvent(s, t_nev[1], 0))) {
        narrow_off("joining back from the green stream", r);
        xqc_cu.StreamSync(gs); /* the order kept the slow way */
    }
    return 0;
}
