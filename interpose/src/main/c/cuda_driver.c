/*
 * cuda_driver.c: glibc's own dlsym, the driver entry points the interposer calls itself (xqc_cu,
 * resolved once), the options read with them (XQ_STALL, XQ_COMPLETION, XQ_MARKS, XQ_STRETCH, XQ_WIDTH, XQ_GUARD_PAD, XQ_ARRIVAL_DIRECT, XQ_ESTIMATES),
 * and starting our own threads.
 */
#include "cuda_int.h"

int xq_log_level = 1; /* XQ_LOG (xq_wire.h) */
__thread pid_t xqc_t_tid; /* my_tid() (cuda_int.h) */

/* Our own threads (XQ_LOG=2 tells their CPU time at exit: cuda_diag.c). Their clocks are taken
 * by the thread that starts them: a thread that ends takes its clock with it (none of ours ends
 * before exit but the reader when the node goes), and nothing runs in a new thread before its job
 * (a wrapper there delayed the tracker's start enough to make a process's first commands look
 * long to it on the 2-vCPU VM). */
#define XQ_THREADS 8
static struct {
    const char *name;
    clockid_t clock;
    int set;
} g_threads[XQ_THREADS];
static unsigned g_nthreads;

/* Each of our threads' CPU time so far, in ms, into buf (empty when none). */
void xqc_threads_cpu(char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    unsigned n = LD(&g_nthreads);
    for (unsigned i = 0; i < n && i < XQ_THREADS && o < len; i++) {
        struct timespec t;
        if (!LD(&g_threads[i].set) || clock_gettime(g_threads[i].clock, &t)) continue;
        int k = snprintf(buf + o, len - o, "%s%s %.1f ms", o ? ", " : "", g_threads[i].name,
                         t.tv_sec * 1e3 + t.tv_nsec / 1e6);
        if (k < 0) break;
        o += (size_t)k;
    }
}

/* After fork: the child has none of them. */
void xqc_threads_reset(void)
{
    for (unsigned i = 0; i < XQ_THREADS; i++) g_threads[i].set = 0;
    g_nthreads = 0;
}

/* Our own threads take no signals: the application's handlers run on its own threads. */
void xqc_spawn(void *(*fn)(void *), const char *name)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&t, &at, fn, NULL);
    if (e) xlog(1, "xq: cannot start a thread: %s", strerror(e));
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    unsigned i = e ? XQ_THREADS : __atomic_fetch_add(&g_nthreads, 1, __ATOMIC_SEQ_CST);
    if (i < XQ_THREADS && pthread_getcpuclockid(t, &g_threads[i].clock) == 0) {
        g_threads[i].name = name;
        ST(&g_threads[i].set, 1);
    }
}

/* ------------------------------------------------------------------ glibc's dlsym, the driver */

typedef void *(*dlsym_t)(void *, const char *);
dlsym_t xqc_dlsym_glibc;

__attribute__((noinline)) void *xqc_real_dlsym(void *h, const char *name)
{
    dlsym_t f = LD(&xqc_dlsym_glibc);
    if (!f) {
        f = (dlsym_t)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!f) f = (dlsym_t)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        if (!f) f = (dlsym_t)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17");
        if (!f) return NULL;
        ST(&xqc_dlsym_glibc, f);
    }
    void *r = f(h, name); /* not a tail call: glibc takes the caller (for RTLD_NEXT) from here */
    __asm__ volatile("" ::: "memory");
    return r;
}

struct xqc_driver xqc_cu; /* the driver entry points the interposer calls itself (cuda_int.h) */
int xqc_memop; /* XQ_COMPLETION=memop */
struct xqc_hot_s xqc_hot = {.tabgen = 1}; /* cuda_int.h */
pthread_mutex_t xqc_cu_mu = PTHREAD_MUTEX_INITIALIZER;

/* hint: a real driver function; its library is libcuda even when it was loaded under another name. */
int xqc_cu_resolve(void *hint)
{
    int s = LD(&xqc_cu_state);
    if (s) return s > 0;
    pthread_mutex_lock(&xqc_cu_mu);
    if (!xqc_cu_state) {
        void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        struct link_map *lm = NULL;
        Dl_info di;
        if (!h && hint && dladdr1(hint, &di, (void **)&lm, RTLD_DL_LINKMAP) && lm)
            h = dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD);
        void *lib = h ? h : RTLD_NEXT;
#define CU(field, name) (*(void **)&xqc_cu.field = xqc_real_dlsym(lib, name))
        int ok = CU(EventCreate, "cuEventCreate") && CU(EventRecord, "cuEventRecord") &&
                 CU(EventQuery, "cuEventQuery") && CU(EventDestroy, "cuEventDestroy_v2") &&
                 CU(CtxGetCurrent, "cuCtxGetCurrent") && CU(CtxSetCurrent, "cuCtxSetCurrent") &&
                 CU(CtxGetDevice, "cuCtxGetDevice") && CU(CtxPush, "cuCtxPushCurrent_v2") &&
                 CU(CtxPop, "cuCtxPopCurrent_v2") &&
                 CU(CtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange") &&
                 CU(StreamGetPriority, "cuStreamGetPriority") && CU(StreamGetCtx, "cuStreamGetCtx");
        if (ok) { /* the v2 write: the v1 one needs NVreg_EnableStreamMemOPs=1 */
            CU(WriteValue64, "cuStreamWriteValue64_v2"), CU(HostRegister, "cuMemHostRegister_v2");
            CU(HostUnregister, "cuMemHostUnregister");
            CU(HostGetDevPtr, "cuMemHostGetDevicePointer_v2"), CU(DeviceGetAttribute, "cuDeviceGetAttribute");
            CU(StreamQuery, "cuStreamQuery");
            CU(OccupancyBlocks, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
            CU(FuncGetParamInfo, "cuFuncGetParamInfo"), CU(KernelGetParamInfo, "cuKernelGetParamInfo");
            CU(KernelGetFunction, "cuKernelGetFunction");
            if (!CU(EventElapsed, "cuEventElapsedTime_v2")) CU(EventElapsed, "cuEventElapsedTime");
            CU(WaitValue32, "cuStreamWaitValue32_v2"), CU(WaitValue32Ptsz, "cuStreamWaitValue32_v2_ptsz");
            CU(GetDevResource, "cuDeviceGetDevResource"), CU(SplitByCount, "cuDevSmResourceSplitByCount");
            CU(GenerateDesc, "cuDevResourceGenerateDesc"), CU(GreenCreate, "cuGreenCtxCreate");
            CU(GreenStream, "cuGreenCtxStreamCreate"), CU(WaitEvent, "cuStreamWaitEvent");
            CU(GreenGetResource, "cuGreenCtxGetDevResource");
            CU(StreamSync, "cuStreamSynchronize");
        }
#undef CU
        const char *sv = getenv("XQ_STALL"); /* off unless XQ_STALL=1 */
        xqc_stall = sv && !strcmp(sv, "1") && xqc_cu.WaitValue32 && xqc_cu.WaitValue32Ptsz && xqc_cu.HostRegister && xqc_cu.HostGetDevPtr;
        if (sv && *sv && strcmp(sv, "0") && strcmp(sv, "1"))
            xlog(1, "xq: ignoring XQ_STALL='%s': not 0 or 1", sv);
        else if (sv && !strcmp(sv, "1") && !xqc_stall)
            xlog(1, "xq: XQ_STALL=1 unavailable: the driver lacks cuStreamWaitValue32_v2 or cuMemHostRegister_v2");
        const char *m = getenv("XQ_COMPLETION"); /* memop unless XQ_COMPLETION=event */
        xqc_memop = !m || !*m || !strcmp(m, "memop");
        if (m && *m && !xqc_memop && strcmp(m, "event"))
            xlog(1, "xq: ignoring XQ_COMPLETION='%s': not event or memop", m);
        const char *k = getenv("XQ_MARKS"); /* sparse unless XQ_MARKS=all */
        xqc_marks_all = k && !strcmp(k, "all");
        if (k && *k && !xqc_marks_all && strcmp(k, "sparse"))
            xlog(1, "xq: ignoring XQ_MARKS='%s': not sparse or all", k);
        /* each stream's current stretch told unless XQ_STRETCH=0; XQ_STRETCH=reserve: told as its widest too */
        const char *sw = getenv("XQ_STRETCH");
        xqc_hot.stretch_mode = !sw || !*sw || !strcmp(sw, "1") ? 0 : !strcmp(sw, "0") ? 1 : !strcmp(sw, "reserve") ? 2 : 0;
        if (sw && *sw && strcmp(sw, "0") && strcmp(sw, "1") && strcmp(sw, "reserve"))
            xlog(1, "xq: ignoring XQ_STRETCH='%s': not 0, 1 or reserve", sw);
        /* each thread's time inside the driver's launch calls counted only with XQ_TIME_LAUNCHES=1 */
        const char *tl = getenv("XQ_TIME_LAUNCHES");
        xqc_hot.time_launch = tl && !strcmp(tl, "1");
        if (tl && *tl && strcmp(tl, "0") && strcmp(tl, "1"))
            xlog(1, "xq: ignoring XQ_TIME_LAUNCHES='%s': not 0 or 1", tl);
        /* kernels' widths by their threads unless XQ_WIDTH=occupancy (cuda_int.h: xqc_kthreads) */
        const char *wv = getenv("XQ_WIDTH");
        if (wv && *wv && strcmp(wv, "threads") && strcmp(wv, "occupancy"))
            xlog(1, "xq: ignoring XQ_WIDTH='%s': not threads or occupancy", wv);
        else if (wv && !strcmp(wv, "occupancy") && !xqc_cu.OccupancyBlocks)
            xlog(1, "xq: XQ_WIDTH=occupancy unavailable: the driver lacks cuOccupancyMaxActiveBlocksPerMultiprocessor; widths by threads");
        else if (wv && !strcmp(wv, "occupancy")) {
            ST(&xqc_width_occ, 1);
            xlog(2, "xq: kernels' widths by occupancy (XQ_WIDTH=occupancy)");
        }
        const char *gp = getenv("XQ_GUARD_PAD"); /* learnt unless XQ_GUARD_PAD=0 */
        xqc_pad_on = !(gp && !strcmp(gp, "0"));
        if (gp && *gp && strcmp(gp, "0") && strcmp(gp, "1"))
            xlog(1, "xq: ignoring XQ_GUARD_PAD='%s': not 0 or 1", gp);
        const char *ad = getenv("XQ_ARRIVAL_DIRECT"); /* through the tracker unless XQ_ARRIVAL_DIRECT=1 */
        xqc_arrival_direct = ad && !strcmp(ad, "1");
        if (ad && *ad && strcmp(ad, "0") && strcmp(ad, "1"))
            xlog(1, "xq: ignoring XQ_ARRIVAL_DIRECT='%s': not 0 or 1", ad);
        const char *q = getenv("XQ_ESTIMATES"); /* timed unless XQ_ESTIMATES=batch */
        xqc_timed = !(q && !strcmp(q, "batch")) && xqc_cu.EventElapsed;
        if (q && *q && strcmp(q, "batch") && strcmp(q, "timed"))
            xlog(1, "xq: ignoring XQ_ESTIMATES='%s': not timed or batch", q);
        if (!ok) xlog(1, "xq: driver entry points missing; running unscheduled");
        ST(&xqc_cu_state, ok ? 1 : -1); /* the handle stays open: libcuda is never unloaded anyway */
    }
    pthread_mutex_unlock(&xqc_cu_mu);
    return xqc_cu_state > 0;
}
