/*
 * xq-cuda-fuzz: a random CUDA driver-API program whose every result is known before it runs, for
 * the interposer's tests (test_cuda_fuzz.c). Built against the fake driver (its kernels "inc" and
 * "spin").
 *
 * Each thread draws a program from --seed: kernels ("inc" on part of a buffer, "spin" for a while,
 * launched by cuLaunchKernel or cuLaunchKernelEx, parameters by pointer or packed, of random
 * widths), memsets (32, 16 and 8 bits wide), copies host to device (the source overwritten as soon
 * as the call returns), device to device and device to host (also by cuMemcpyAsync), host functions, links between streams by events, captures
 * instantiated and launched again and again (graphs), streams destroyed and made anew, children
 * forked that touch nothing of CUDA's, links between two non-blocking streams by a word in memory
 * (cuStreamWaitValue32 on one, work behind it, then cuStreamWriteValue32 on the other: flag_link),
 * later threads two times in three in a context of their own (pushing the primary one now and then),
 * and every way of waiting (stream,
 * event, context synchronize, polling a stream or an event), on the default stream, the per-thread
 * one, the legacy one named, and streams of its own. Every access to a buffer is ordered after the
 * last one before it by the program itself (a buffer belongs to one stream at a time; moving it to
 * another records an event on the old one and makes the new one wait for it), so whatever order
 * the device runs independent work in, each buffer sees its commands in program order: the
 * thread's model (plain C arrays) says what every device-to-host copy must read, checked as soon
 * as a wait covers it, and what every buffer holds at the end. Host functions check that each
 * stream runs them once each, in order.
 *
 * Usage: xq-cuda-fuzz --seed S [--ops N] [--threads T] [--streams K] [--via direct|procaddress|dlsym]
 *                     [--ptsz] [--max-us U] [--host-us U]
 *        xq-cuda-fuzz --capture-race|--capture-limit|--hold-race|--stall-race|--link-race [--via ...]   (below: five cases found, made sure of)
 * One JSON line at the end: {"seed":S,"threads":T,"ops":N,"checked":C,"hostfns":H,"graphs":G,"links":L,"contexts":X,"check":"ok"|"bad"[,"first":"..."]}
 * XQ_FUZZ_TRACE=DIR: the last 128 calls of the thread that read a wrong value go to DIR/fuzz-SEED-PID.txt.
 * Exit 0 when every result was right, 3 when one was not, 1 on a CUDA error, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_abi.h"

CUresult cuInit(unsigned int);
CUresult cuDeviceGet(CUdevice *, int);
CUresult cuDevicePrimaryCtxRetain(CUcontext *, CUdevice);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuCtxCreate_v2(CUcontext *, unsigned int, CUdevice);
CUresult cuCtxPushCurrent_v2(CUcontext);
CUresult cuCtxPopCurrent_v2(CUcontext *);
CUresult cuModuleLoadData(CUmodule *, const void *);
CUresult cuModuleGetFunction(CUfunction *, CUmodule, const char *);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuGetErrorString(CUresult, const char **);
CUresult cuCtxGetStreamPriorityRange(int *, int *);
#define KPARAMS CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **
CUresult cuLaunchKernel(KPARAMS);
CUresult cuLaunchKernel_ptsz(KPARAMS);
CUresult cuLaunchKernelEx(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult cuStreamSynchronize(CUstream);
CUresult cuStreamSynchronize_ptsz(CUstream);
CUresult cuStreamQuery(CUstream);
CUresult cuStreamQuery_ptsz(CUstream);
CUresult cuCtxSynchronize(void);
CUresult cuEventCreate(CUevent *, unsigned int);
CUresult cuEventRecord(CUevent, CUstream);
CUresult cuEventRecord_ptsz(CUevent, CUstream);
CUresult cuEventSynchronize(CUevent);
CUresult cuEventQuery(CUevent);
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned int);
CUresult cuStreamWaitEvent_ptsz(CUstream, CUevent, unsigned int);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void *, size_t, CUstream);
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr, const void *, size_t, CUstream);
CUresult cuMemcpyDtoHAsync_v2(void *, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemsetD32Async(CUdeviceptr, unsigned int, size_t, CUstream);
CUresult cuMemsetD32Async_ptsz(CUdeviceptr, unsigned int, size_t, CUstream);
CUresult cuMemsetD8Async(CUdeviceptr, unsigned char, size_t, CUstream);
CUresult cuMemsetD8Async_ptsz(CUdeviceptr, unsigned char, size_t, CUstream);
CUresult cuMemsetD16Async(CUdeviceptr, unsigned short, size_t, CUstream);
CUresult cuMemsetD16Async_ptsz(CUdeviceptr, unsigned short, size_t, CUstream);
CUresult cuMemcpyAsync(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuLaunchHostFunc(CUstream, CUhostFn, void *);
CUresult cuLaunchHostFunc_ptsz(CUstream, CUhostFn, void *);
CUresult cuStreamBeginCapture_v2(CUstream, CUstreamCaptureMode);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode);
CUresult cuStreamEndCapture(CUstream, CUgraph *);
CUresult cuStreamEndCapture_ptsz(CUstream, CUgraph *);
CUresult cuStreamCreate(CUstream *, unsigned int);
CUresult cuStreamCreateWithPriority(CUstream *, unsigned int, int);
CUresult cuStreamDestroy_v2(CUstream);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *, CUgraph, unsigned long long);
CUresult cuGraphLaunch(CUgraphExec, CUstream);
CUresult cuGraphLaunch_ptsz(CUgraphExec, CUstream);
CUresult cuGraphExecDestroy(CUgraphExec);
CUresult cuGraphDestroy(CUgraph);
CUresult cuStreamWaitValue32_v2(CUstream, CUdeviceptr, unsigned int, unsigned int);
CUresult cuStreamWaitValue32_v2_ptsz(CUstream, CUdeviceptr, unsigned int, unsigned int);
CUresult cuStreamWriteValue32_v2(CUstream, CUdeviceptr, unsigned int, unsigned int);
CUresult cuStreamWriteValue32_v2_ptsz(CUstream, CUdeviceptr, unsigned int, unsigned int);

typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

/* The entry points the program calls, reached the way --via says. */
static struct api {
    CUresult (*launch)(KPARAMS);
    CUresult (*launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*ssync)(CUstream);
    CUresult (*squery)(CUstream);
    CUresult (*csync)(void);
    CUresult (*ecreate)(CUevent *, unsigned int);
    CUresult (*erecord)(CUevent, CUstream);
    CUresult (*esync)(CUevent);
    CUresult (*equery)(CUevent);
    CUresult (*swait)(CUstream, CUevent, unsigned int);
    CUresult (*htod)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*dtod)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*set32)(CUdeviceptr, unsigned int, size_t, CUstream);
    CUresult (*set8)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*set16)(CUdeviceptr, unsigned short, size_t, CUstream);
    CUresult (*copy)(CUdeviceptr, CUdeviceptr, size_t, CUstream); /* cuMemcpyAsync: device sources only */
    CUresult (*ctx_set)(CUcontext);
    CUresult (*ctx_create)(CUcontext *, unsigned int, CUdevice);
    CUresult (*ctx_push)(CUcontext);
    CUresult (*ctx_pop)(CUcontext *);
    CUresult (*hostfn)(CUstream, CUhostFn, void *);
    CUresult (*cap_begin)(CUstream, CUstreamCaptureMode);
    CUresult (*cap_end)(CUstream, CUgraph *);
    CUresult (*screate)(CUstream *, unsigned int);
    CUresult (*screate_prio)(CUstream *, unsigned int, int);
    CUresult (*sdestroy)(CUstream);
    CUresult (*ginst)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*glaunch)(CUgraphExec, CUstream);
    CUresult (*gxdestroy)(CUgraphExec);
    CUresult (*gdestroy)(CUgraph);
    CUresult (*vwait)(CUstream, CUdeviceptr, unsigned int, unsigned int);
    CUresult (*vwrite)(CUstream, CUdeviceptr, unsigned int, unsigned int);
} A;

static struct {
    unsigned seed;
    long ops;
    int threads, streams, ptsz, via; /* via: 0 direct, 1 cuGetProcAddress, 2 dlopen + dlsym */
    unsigned max_us, host_us;
    int race; /* 1 --capture-race, 2 --capture-limit, 3 --hold-race, 4 --stall-race, 5 --link-race */
} O = {1, 400, 1, 3, 0, 1, 300, 200, 0};

static CUfunction f_inc, f_spin;
static CUcontext g_ctx;
static int g_prio_lo, g_prio_hi;
static int g_bad;
static char g_first[512];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static void bad(const char *fmt, ...)
{
    pthread_mutex_lock(&g_mu);
    if (!g_bad++) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g_first, sizeof g_first, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&g_mu);
}

static void die(const char *what, CUresult r, int thread, long op)
{
    const char *s = "?";
    cuGetErrorString(r, &s);
    fprintf(stderr, "xq-cuda-fuzz: seed %u thread %d op %ld: %s failed: %d (%s)\n", O.seed, thread, op, what, r, s);
    exit(1);
}
#define CK(call)                                                                                    \
    do {                                                                                            \
        CUresult r_ = (call);                                                                       \
        if (r_) die(#call, r_, T->id, T->op);                                                      \
    } while (0)

static void get_api(void)
{
    int p = O.ptsz;
    if (O.via == 0) {
        A.launch = p ? cuLaunchKernel_ptsz : cuLaunchKernel;
        A.launch_ex = p ? cuLaunchKernelEx_ptsz : cuLaunchKernelEx;
        A.ssync = p ? cuStreamSynchronize_ptsz : cuStreamSynchronize;
        A.squery = p ? cuStreamQuery_ptsz : cuStreamQuery;
        A.csync = cuCtxSynchronize;
        A.ecreate = cuEventCreate;
        A.erecord = p ? cuEventRecord_ptsz : cuEventRecord;
        A.esync = cuEventSynchronize;
        A.equery = cuEventQuery;
        A.swait = p ? cuStreamWaitEvent_ptsz : cuStreamWaitEvent;
        A.htod = p ? cuMemcpyHtoDAsync_v2_ptsz : cuMemcpyHtoDAsync_v2;
        A.dtoh = p ? cuMemcpyDtoHAsync_v2_ptsz : cuMemcpyDtoHAsync_v2;
        A.dtod = p ? cuMemcpyDtoDAsync_v2_ptsz : cuMemcpyDtoDAsync_v2;
        A.set32 = p ? cuMemsetD32Async_ptsz : cuMemsetD32Async;
        A.set8 = p ? cuMemsetD8Async_ptsz : cuMemsetD8Async;
        A.set16 = p ? cuMemsetD16Async_ptsz : cuMemsetD16Async;
        A.copy = p ? cuMemcpyAsync_ptsz : cuMemcpyAsync;
        A.ctx_set = cuCtxSetCurrent;
        A.ctx_create = cuCtxCreate_v2;
        A.ctx_push = cuCtxPushCurrent_v2;
        A.ctx_pop = cuCtxPopCurrent_v2;
        A.hostfn = p ? cuLaunchHostFunc_ptsz : cuLaunchHostFunc;
        A.cap_begin = p ? cuStreamBeginCapture_v2_ptsz : cuStreamBeginCapture_v2;
        A.cap_end = p ? cuStreamEndCapture_ptsz : cuStreamEndCapture;
        A.screate = cuStreamCreate;
        A.screate_prio = cuStreamCreateWithPriority;
        A.sdestroy = cuStreamDestroy_v2;
        A.ginst = cuGraphInstantiateWithFlags;
        A.glaunch = p ? cuGraphLaunch_ptsz : cuGraphLaunch;
        A.gxdestroy = cuGraphExecDestroy;
        A.gdestroy = cuGraphDestroy;
        A.vwait = p ? cuStreamWaitValue32_v2_ptsz : cuStreamWaitValue32_v2;
        A.vwrite = p ? cuStreamWriteValue32_v2_ptsz : cuStreamWriteValue32_v2;
        return;
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "xq-cuda-fuzz: dlopen(libcuda.so.1): %s\n", dlerror());
        exit(1);
    }
    if (O.via == 2) { /* as cuBLASLt does: each entry point dlsym'd by its exported name */
        char nm[80];
#define DLS(field, name, pt)                                                                        \
    snprintf(nm, sizeof nm, "%s%s", name, (pt) && p ? "_ptsz" : "");                                \
    if (!(*(void **)&A.field = dlsym(h, nm))) {                                                     \
        fprintf(stderr, "xq-cuda-fuzz: dlsym(%s) found nothing\n", nm);                             \
        exit(1);                                                                                    \
    }
        DLS(launch, "cuLaunchKernel", 1);
        DLS(launch_ex, "cuLaunchKernelEx", 1);
        DLS(ssync, "cuStreamSynchronize", 1);
        DLS(squery, "cuStreamQuery", 1);
        DLS(csync, "cuCtxSynchronize", 0);
        DLS(ecreate, "cuEventCreate", 0);
        DLS(erecord, "cuEventRecord", 1);
        DLS(esync, "cuEventSynchronize", 0);
        DLS(equery, "cuEventQuery", 0);
        DLS(swait, "cuStreamWaitEvent", 1);
        DLS(htod, "cuMemcpyHtoDAsync_v2", 1);
        DLS(dtoh, "cuMemcpyDtoHAsync_v2", 1);
        DLS(dtod, "cuMemcpyDtoDAsync_v2", 1);
        DLS(set32, "cuMemsetD32Async", 1);
        DLS(set8, "cuMemsetD8Async", 1);
        DLS(set16, "cuMemsetD16Async", 1);
        DLS(copy, "cuMemcpyAsync", 1);
        DLS(ctx_set, "cuCtxSetCurrent", 0);
        DLS(ctx_create, "cuCtxCreate_v2", 0);
        DLS(ctx_push, "cuCtxPushCurrent_v2", 0);
        DLS(ctx_pop, "cuCtxPopCurrent_v2", 0);
        DLS(hostfn, "cuLaunchHostFunc", 1);
        DLS(cap_begin, "cuStreamBeginCapture_v2", 1);
        DLS(cap_end, "cuStreamEndCapture", 1);
        DLS(screate, "cuStreamCreate", 0);
        DLS(screate_prio, "cuStreamCreateWithPriority", 0);
        DLS(sdestroy, "cuStreamDestroy_v2", 0);
        DLS(ginst, "cuGraphInstantiateWithFlags", 0);
        DLS(glaunch, "cuGraphLaunch", 1);
        DLS(gxdestroy, "cuGraphExecDestroy", 0);
        DLS(gdestroy, "cuGraphDestroy", 0);
        DLS(vwait, "cuStreamWaitValue32_v2", 1);
        DLS(vwrite, "cuStreamWriteValue32_v2", 1);
#undef DLS
        return;
    }
    /* as the CUDA 12/13 runtime does */
    gpa2_t entry = (gpa2_t)dlsym(h, "cuGetProcAddress_v2"), gpa = NULL;
    CUdriverProcAddressQueryResult q;
    if (!entry || entry("cuGetProcAddress", (void **)&gpa, 12000, 0, &q) || !gpa) {
        fprintf(stderr, "xq-cuda-fuzz: no cuGetProcAddress\n");
        exit(1);
    }
    cuuint64_t fl = p ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
#define GET(field, name)                                                                            \
    if (gpa(name, (void **)&A.field, 12000, fl, &q) || !A.field) {                                  \
        fprintf(stderr, "xq-cuda-fuzz: cuGetProcAddress(%s) found nothing\n", name);                \
        exit(1);                                                                                    \
    }
    GET(launch, "cuLaunchKernel");
    GET(launch_ex, "cuLaunchKernelEx");
    GET(ssync, "cuStreamSynchronize");
    GET(squery, "cuStreamQuery");
    GET(csync, "cuCtxSynchronize");
    GET(ecreate, "cuEventCreate");
    GET(erecord, "cuEventRecord");
    GET(esync, "cuEventSynchronize");
    GET(equery, "cuEventQuery");
    GET(swait, "cuStreamWaitEvent");
    GET(htod, "cuMemcpyHtoDAsync");
    GET(dtoh, "cuMemcpyDtoHAsync");
    GET(dtod, "cuMemcpyDtoDAsync");
    GET(set32, "cuMemsetD32Async");
    GET(set8, "cuMemsetD8Async");
    GET(set16, "cuMemsetD16Async");
    GET(copy, "cuMemcpyAsync");
    GET(ctx_set, "cuCtxSetCurrent");
    GET(ctx_create, "cuCtxCreate");
    GET(ctx_push, "cuCtxPushCurrent");
    GET(ctx_pop, "cuCtxPopCurrent");
    GET(hostfn, "cuLaunchHostFunc");
    GET(cap_begin, "cuStreamBeginCapture");
    GET(cap_end, "cuStreamEndCapture");
    GET(screate, "cuStreamCreate");
    GET(screate_prio, "cuStreamCreateWithPriority");
    GET(sdestroy, "cuStreamDestroy");
    GET(ginst, "cuGraphInstantiate");
    GET(glaunch, "cuGraphLaunch");
    GET(gxdestroy, "cuGraphExecDestroy");
    GET(gdestroy, "cuGraphDestroy");
    GET(vwait, "cuStreamWaitValue32");
    GET(vwrite, "cuStreamWriteValue32");
#undef GET
}

/* ------------------------------------------------------------------ one thread's program */

enum { NB = 4, NE = 64, MAXS = 3 + 8, NEV = 8, NRES = 48, NG = 3, GOPS = 6, NFLAG = 1024 };
enum { S_DEFAULT, S_PER_THREAD, S_LEGACY }; /* then the thread's own streams */

/* A host function's record: it checks that its stream ran the ones before it, once each. */
typedef struct hfn {
    struct thr *t;
    int s;
    long seq;
} hfn;

/* A device-to-host copy whose values are known: checked once a wait covers its stream. */
typedef struct res {
    int used, s, n;
    long op;
    unsigned *host;
    unsigned want[NE];
} res;

/* What a command does to the buffers, replayed on the model at each launch of a graph it was captured into. */
typedef struct mop {
    char kind; /* 'i' inc, 's' memset, 'c' device to device, 'w' spin (nothing) */
    int b, d;
    unsigned off, n, doff, v;
} mop;

/* A graph captured and instantiated: its commands' effects, in order. */
typedef struct graph {
    int live;
    CUgraphExec x;
    mop ops[GOPS];
    int nops;
} graph;

typedef struct thr {
    int id;
    long op;
    unsigned short rs[3];
    int nstreams;
    CUcontext ctx; /* a context of its own (threads after the first, half the time), else NULL: the primary one */
    CUstream st[MAXS];
    int nonblocking[MAXS]; /* made CU_STREAM_NON_BLOCKING: no implicit order with the legacy stream */
    CUdeviceptr flags;     /* NFLAG words, each waited for and written once (flag links) */
    int nflags;
    CUdeviceptr buf[NB];
    unsigned model[NB][NE];
    int owner[NB];
    CUevent ev[NEV];
    int nev;
    res r[NRES];
    long hf_issued[MAXS], hf_ran[MAXS]; /* host functions per stream: launched, run (written by the stream) */
    hfn *hf;
    long nhf, caphf;
    long checked;
    graph g[NG];
    long graphs; /* launched */
    char trace[128][112]; /* XQ_FUZZ_TRACE: the thread's last calls, written out when a result is wrong */
    unsigned ntrace;
} thr;

static int g_trace = -1;   /* XQ_FUZZ_TRACE=DIR: the failing thread's last 128 calls go to DIR/fuzz-SEED-PID.txt */
static int g_bad_thread = -1;
#define TR(T, ...) do { if (g_trace > 0) snprintf((T)->trace[(T)->ntrace++ % 128], 112, __VA_ARGS__); } while (0)

static unsigned rnd(thr *T, unsigned n) { return n ? (unsigned)(nrand48(T->rs) % n) : 0; }

static void apply(thr *T, const mop *m)
{
    if (m->kind == 'i')
        for (unsigned k = 0; k < m->n; k++) T->model[m->b][m->off + k]++;
    else if (m->kind == 's')
        for (unsigned k = 0; k < m->n; k++) T->model[m->b][m->off + k] = m->v;
    else if (m->kind == 'c')
        memmove(&T->model[m->d][m->doff], &T->model[m->b][m->off], m->n * 4);
}

static void host_pause(unsigned us)
{
    struct timespec t = {0, (long)us * 1000};
    nanosleep(&t, NULL);
}

static void on_hostfn(void *p)
{
    hfn *h = p;
    long was = __atomic_load_n(&h->t->hf_ran[h->s], __ATOMIC_ACQUIRE);
    if (was != h->seq - 1)
        bad("thread %d stream %d: host function %ld ran after %ld (want after %ld)", h->t->id, h->s, h->seq, was, h->seq - 1);
    __atomic_store_n(&h->t->hf_ran[h->s], h->seq, __ATOMIC_RELEASE);
}

/* The buffer moves to stream s: s waits for everything its old stream was given before. */
static void own(thr *T, int b, int s)
{
    int o = T->owner[b];
    if (o == s)
        return;
    CUevent e = T->ev[T->nev++ % NEV];
    TR(T, "%ld: buffer %d moves from stream %d to %d (event %d)", T->op, b, o, s, (T->nev - 1) % NEV);
    CK(A.erecord(e, T->st[o]));
    CK(A.swait(T->st[s], e, 0));
    T->owner[b] = s;
}

/* The copies read on stream s (every stream: s < 0) are done: their values checked. */
static void check_results(thr *T, int s)
{
    for (int i = 0; i < NRES; i++) {
        res *r = &T->r[i];
        if (!r->used || (s >= 0 && r->s != s))
            continue;
        for (int k = 0; k < r->n; k++)
            if (r->host[k] != r->want[k]) {
                bad("thread %d: the copy to the host made at op %ld on stream %d read %u at %d, want %u (checked at op %ld)",
                    T->id, r->op, r->s, r->host[k], k, r->want[k], T->op);
                if (g_bad_thread < 0) g_bad_thread = T->id;
                break;
            }
        r->used = 0;
        T->checked++;
    }
    for (int k = 0; k < T->nstreams; k++) {
        if (s >= 0 && k != s)
            continue;
        long ran = __atomic_load_n(&T->hf_ran[k], __ATOMIC_ACQUIRE);
        if (ran != T->hf_issued[k])
            bad("thread %d stream %d: %ld host functions ran at op %ld after a wait, want %ld", T->id, k, ran, T->op,
                T->hf_issued[k]);
    }
}

/* A kernel of a random width: FAKECUDA_TPS small makes the wide ones candidates for narrowing. */
static void kernel(thr *T, int s, CUfunction f, CUdeviceptr p, unsigned n, unsigned us)
{
    static const unsigned grids[] = {1, 2, 8, 32}, blocks[] = {1, 64, 256, 1024};
    unsigned gx = grids[rnd(T, 4)], bx = blocks[rnd(T, 4)];
    unsigned char packed[16];
    size_t size = f == f_inc ? 12 : 4;
    void *extra[] = {(void *)0x01, packed, (void *)0x02, &size, (void *)0x00};
    void *params[2] = {f == f_inc ? (void *)&p : (void *)&us, &n};
    void **pp = params, **ex = NULL;
    if (rnd(T, 3) == 0) { /* packed in one buffer */
        if (f == f_inc) memcpy(packed, &p, 8), memcpy(packed + 8, &n, 4);
        else memcpy(packed, &us, 4);
        pp = NULL, ex = extra;
    }
    CUresult r;
    if (rnd(T, 2)) {
        r = A.launch(f, gx, 1, 1, bx, 1, 1, 0, T->st[s], pp, ex);
    } else {
        CUlaunchConfig c = {gx, 1, 1, bx, 1, 1, 0, T->st[s], NULL, 0};
        r = A.launch_ex(&c, f, pp, ex);
    }
    TR(T, "%ld: %s on stream %d, grid %u block %u, %s%s, at %#lx n %u us %u", T->op, f == f_inc ? "inc" : "spin", s, gx, bx,
       ex ? "packed" : "params", pp ? "" : "", (unsigned long)p, n, us);
    if (r) die(f == f_inc ? "launch of inc" : "launch of spin", r, T->id, T->op);
    /* what a launch took must have been copied if it was not made yet */
    memset(packed, 0xee, sizeof packed), p = 0, n = 0, us = 0, size = 0;
}

static void wait_stream(thr *T, int s)
{
    switch (rnd(T, 4)) {
    case 0: TR(T, "%ld: synchronize stream %d", T->op, s); CK(A.ssync(T->st[s])); break;
    case 1: { /* an event recorded there, waited for */
        CUevent e = T->ev[T->nev++ % NEV];
        TR(T, "%ld: event %d on stream %d, synchronized", T->op, (T->nev - 1) % NEV, s);
        CK(A.erecord(e, T->st[s]));
        CK(A.esync(e));
        break;
    }
    case 2: { /* polled until done */
        CUresult r;
        TR(T, "%ld: stream %d polled", T->op, s);
        while ((r = A.squery(T->st[s])) == CUDA_ERROR_NOT_READY) host_pause(20);
        CK(r);
        break;
    }
    default: {
        CUevent e = T->ev[T->nev++ % NEV];
        TR(T, "%ld: event %d on stream %d, polled", T->op, (T->nev - 1) % NEV, s);
        CK(A.erecord(e, T->st[s]));
        CUresult r;
        while ((r = A.equery(e)) == CUDA_ERROR_NOT_READY) host_pause(20);
        CK(r);
        break;
    }
    }
    check_results(T, s);
}

/* A memset of words [off, off + n) of buffer b on stream s, 32, 16 or 8 bits wide (cuMemsetD32Async,
 * D16, D8; the narrower ones a value repeated in each word); returns the word every one then holds. */
static unsigned memset_words(thr *T, int s, int b, unsigned off, unsigned n)
{
    unsigned v = (unsigned)nrand48(T->rs), kind = rnd(T, 3);
    CUdeviceptr d = T->buf[b] + off * 4;
    if (kind == 0) {
        TR(T, "%ld: memset32 buffer %d [%u, +%u) on stream %d", T->op, b, off, n, s);
        CK(A.set32(d, v, n, T->st[s]));
        return v;
    }
    if (kind == 1) {
        unsigned short h = (unsigned short)v;
        TR(T, "%ld: memset16 buffer %d [%u, +%u) on stream %d", T->op, b, off, n, s);
        CK(A.set16(d, h, 2 * (size_t)n, T->st[s]));
        return (unsigned)h | (unsigned)h << 16;
    }
    unsigned char c = (unsigned char)v;
    TR(T, "%ld: memset8 buffer %d [%u, +%u) on stream %d", T->op, b, off, n, s);
    CK(A.set8(d, c, 4 * (size_t)n, T->st[s]));
    return c * 0x01010101u;
}

static res *free_result(thr *T)
{
    for (int i = 0; i < NRES; i++)
        if (!T->r[i].used) return &T->r[i];
    CK(A.csync()); /* all full: everything read so far is checked */
    check_results(T, -1);
    return &T->r[0];
}

static void new_stream(thr *T, int k)
{
    unsigned nb = 0;
    if (rnd(T, 2)) CK(A.screate(&T->st[k], nb = rnd(T, 2) /* CU_STREAM_NON_BLOCKING or not */));
    else CK(A.screate_prio(&T->st[k], nb = rnd(T, 2), g_prio_hi + (int)rnd(T, (unsigned)(g_prio_lo - g_prio_hi + 1))));
    T->nonblocking[k] = (int)nb;
}

/* A link between two non-blocking streams of the thread's own by a word in device memory, as a
 * pipeline or a communication library makes one (cuStreamWaitValue32, cuStreamWriteValue32): the
 * waiting stream is given its wait and work behind it first (busy, as the node sees it), then the
 * writing one work of its own and the write. Nothing is told to the interposer: a node holding the
 * writer behind the busy waiter holds both for good unless the process sees to it. Each word is
 * used once (writes on different streams to one word could land out of order). Returns 0 when
 * the thread has no two such streams or no word left. */
static int flag_link(thr *T)
{
    int cand[MAXS], nc = 0;
    for (int k = 3; k < T->nstreams; k++)
        if (T->nonblocking[k]) cand[nc++] = k;
    if (nc < 2 || T->nflags >= NFLAG) return 0;
    int i = (int)rnd(T, (unsigned)nc), ws = cand[i], wo = cand[(i + 1 + (int)rnd(T, (unsigned)nc - 1)) % nc];
    CUdeviceptr f = T->flags + (unsigned)T->nflags++ * 4;
    unsigned v = (unsigned)T->nflags; /* the words start at zero */
    TR(T, "%ld: stream %d waits for word %d == %u, written by stream %d", T->op, ws, T->nflags - 1, v, wo);
    CK(A.vwait(T->st[ws], f, v, 1 /* CU_STREAM_WAIT_VALUE_EQ */));
    kernel(T, ws, f_spin, 0, 0, rnd(T, O.max_us + 1));
    if (rnd(T, 2)) {
        int b = (int)rnd(T, NB);
        unsigned off = rnd(T, NE), n = 1 + rnd(T, NE - off);
        own(T, b, ws);
        kernel(T, ws, f_inc, T->buf[b] + off * 4, n, 0);
        apply(T, &(mop){'i', b, 0, off, n, 0, 0});
    }
    if (rnd(T, 3)) kernel(T, wo, f_spin, 0, 0, rnd(T, O.max_us + 1));
    CK(A.vwrite(T->st[wo], f, v, 0));
    return 1;
}

static void one_op(thr *T)
{
    int s = (int)rnd(T, (unsigned)T->nstreams), b = (int)rnd(T, NB);
    unsigned off = rnd(T, NE), n = 1 + rnd(T, NE - off);
    unsigned w = rnd(T, 100);
    if (w < 20) { /* inc */
        own(T, b, s);
        kernel(T, s, f_inc, T->buf[b] + off * 4, n, 0);
        apply(T, &(mop){'i', b, 0, off, n, 0, 0});
    } else if (w < 31) { /* spin */
        kernel(T, s, f_spin, 0, 0, rnd(T, O.max_us + 1));
    } else if (w < 38) { /* memset */
        own(T, b, s);
        unsigned v = memset_words(T, s, b, off, n);
        apply(T, &(mop){'s', b, 0, off, n, 0, v});
    } else if (w < 46) { /* host to device, the source reused at once */
        unsigned src[NE];
        for (unsigned k = 0; k < n; k++) src[k] = (unsigned)nrand48(T->rs);
        own(T, b, s);
        TR(T, "%ld: host to buffer %d [%u, +%u) on stream %d", T->op, b, off, n, s);
        CK(A.htod(T->buf[b] + off * 4, src, n * 4, T->st[s]));
        memcpy(&T->model[b][off], src, n * 4);
        memset(src, 0x5a, sizeof src);
    } else if (w < 53) { /* device to device, another buffer */
        int d = (b + 1 + (int)rnd(T, NB - 1)) % NB;
        unsigned doff = rnd(T, NE - n + 1);
        own(T, b, s);
        own(T, d, s);
        int generic = rnd(T, 3) == 0;
        TR(T, "%ld: buffer %d [%u, +%u) to buffer %d at %u on stream %d%s", T->op, b, off, n, d, doff, s, generic ? " (cuMemcpyAsync)" : "");
        CK((generic ? A.copy : A.dtod)(T->buf[d] + doff * 4, T->buf[b] + off * 4, n * 4, T->st[s]));
        apply(T, &(mop){'c', b, d, off, n, doff, 0});
    } else if (w < 63) { /* device to host, checked after a wait */
        res *r = free_result(T);
        own(T, b, s);
        r->used = 1, r->s = s, r->n = (int)n, r->op = T->op;
        memcpy(r->want, &T->model[b][off], n * 4);
        memset(r->host, 0xcd, NE * 4);
        int generic = rnd(T, 3) == 0;
        TR(T, "%ld: buffer %d [%u, +%u) to the host on stream %d%s", T->op, b, off, n, s, generic ? " (cuMemcpyAsync)" : "");
        if (generic) CK(A.copy((CUdeviceptr)(uintptr_t)r->host, T->buf[b] + off * 4, n * 4, T->st[s]));
        else CK(A.dtoh(r->host, T->buf[b] + off * 4, n * 4, T->st[s]));
    } else if (w < 69) { /* host function */
        if (T->nhf == T->caphf) {
            /* records are never moved (a pending function holds its pointer): a new block, the old kept */
            T->caphf = 256;
            T->hf = calloc((size_t)T->caphf, sizeof *T->hf);
            T->nhf = 0;
            if (!T->hf) abort();
        }
        hfn *h = &T->hf[T->nhf++];
        h->t = T, h->s = s, h->seq = ++T->hf_issued[s];
        TR(T, "%ld: host function %ld on stream %d", T->op, h->seq, s);
        CK(A.hostfn(T->st[s], on_hostfn, h));
    } else if (w < 74) { /* a link between two streams by an event, nothing moved */
        int o = (int)rnd(T, (unsigned)T->nstreams);
        CUevent e = T->ev[T->nev++ % NEV];
        TR(T, "%ld: stream %d waits for stream %d (event %d)", T->op, s, o, (T->nev - 1) % NEV);
        CK(A.erecord(e, T->st[o]));
        CK(A.swait(T->st[s], e, 0));
    } else if (w < 82) { /* a wait for one stream */
        wait_stream(T, s);
    } else if (w < 84) { /* a wait for the whole context (and, from a context of its own, the primary one's first) */
        if (T->ctx && rnd(T, 2)) {
            CUcontext was = NULL;
            TR(T, "%ld: the primary context pushed, synchronized, popped", T->op);
            CK(A.ctx_push(g_ctx));
            CK(A.csync());
            CK(A.ctx_pop(&was));
            if (was != g_ctx) bad("thread %d: popped context %p, want the primary %p", T->id, (void *)was, (void *)g_ctx);
        }
        TR(T, "%ld: context synchronized", T->op);
        CK(A.csync());
        check_results(T, -1);
    } else if (w < 87) { /* a capture on a stream of the thread's own, instantiated, its graph destroyed */
        int c = 3 + (int)rnd(T, (unsigned)(T->nstreams - 3));
        graph *G = &T->g[rnd(T, NG)];
        mop ops[GOPS];
        int nops = 0;
        TR(T, "%ld: capture on stream %d into graph %d", T->op, c, (int)(G - T->g));
        CK(A.cap_begin(T->st[c], 2 /* CU_STREAM_CAPTURE_MODE_RELAXED */));
        for (unsigned k = 1 + rnd(T, GOPS); k > 0; k--) { /* run at each launch, not now */
            int gb = (int)rnd(T, NB), gd = (gb + 1 + (int)rnd(T, NB - 1)) % NB;
            unsigned goff = rnd(T, NE), gn = 1 + rnd(T, NE - goff), v = (unsigned)nrand48(T->rs);
            switch (rnd(T, 4)) {
            case 0:
                kernel(T, c, f_spin, 0, 0, rnd(T, O.max_us + 1));
                ops[nops++] = (mop){'w', 0, 0, 0, 0, 0, 0};
                break;
            case 1:
                kernel(T, c, f_inc, T->buf[gb] + goff * 4, gn, 0);
                ops[nops++] = (mop){'i', gb, 0, goff, gn, 0, 0};
                break;
            case 2:
                v = memset_words(T, c, gb, goff, gn);
                ops[nops++] = (mop){'s', gb, 0, goff, gn, 0, v};
                break;
            default: {
                unsigned doff = rnd(T, NE - gn + 1);
                TR(T, "%ld:   buffer %d [%u, +%u) to buffer %d at %u", T->op, gb, goff, gn, gd, doff);
                CK(A.dtod(T->buf[gd] + doff * 4, T->buf[gb] + goff * 4, gn * 4, T->st[c]));
                ops[nops++] = (mop){'c', gb, gd, goff, gn, doff, 0};
            }
            }
        }
        CUgraph g = NULL;
        CK(A.cap_end(T->st[c], &g));
        if (G->live) CK(A.gxdestroy(G->x)); /* launches of it not yet done run to their end */
        CK(A.ginst(&G->x, g, 0));
        CK(A.gdestroy(g));
        G->live = 1, G->nops = nops;
        memcpy(G->ops, ops, sizeof ops);
    } else if (w < 92) { /* a graph launched: every buffer it touches moved to the stream first */
        graph *G = &T->g[rnd(T, NG)];
        if (G->live) {
            for (int k = 0; k < G->nops; k++)
                if (G->ops[k].kind != 'w') {
                    own(T, G->ops[k].b, s);
                    if (G->ops[k].kind == 'c') own(T, G->ops[k].d, s);
                }
            TR(T, "%ld: graph %d launched on stream %d", T->op, (int)(G - T->g), s);
            CK(A.glaunch(G->x, T->st[s]));
            for (int k = 0; k < G->nops; k++) apply(T, &G->ops[k]);
            T->graphs++;
        }
    } else if (w < 93) { /* a stream of its own destroyed (its work runs to its end) and made anew */
        int c = 3 + (int)rnd(T, (unsigned)(T->nstreams - 3));
        for (int k = 0; k < NB; k++) own(T, k, c == 3 ? 4 % T->nstreams : 3); /* nothing of the model left on it */
        TR(T, "%ld: stream %d synchronized, destroyed, made anew", T->op, c);
        CK(A.ssync(T->st[c]));
        check_results(T, c);
        CK(A.sdestroy(T->st[c]));
        new_stream(T, c);
    } else if (w < 94) { /* a child forked that touches nothing of CUDA's and ends (a data loader's worker) */
        TR(T, "%ld: fork", T->op);
        pid_t pid = fork();
        if (pid == 0) _exit(0);
        if (pid > 0) waitpid(pid, NULL, 0);
    } else if (w < 97 && flag_link(T)) { /* a link by a word in memory */
    } else { /* the host busy elsewhere for a while */
        host_pause(rnd(T, O.host_us + 1));
    }
}

static void *run_thread(void *arg)
{
    thr *T = arg;
    CK(A.ctx_set(g_ctx));
    if (T->id > 0 && (T->id + O.seed) % 3 != 0) { /* everything of this thread's in a context of its own, made current */
        CK(A.ctx_create(&T->ctx, 0, 0));
        TR(T, "a context of its own");
    }
    T->st[S_DEFAULT] = NULL, T->st[S_PER_THREAD] = CU_STREAM_PER_THREAD, T->st[S_LEGACY] = CU_STREAM_LEGACY;
    T->nstreams = 3 + O.streams;
    for (int k = 3; k < T->nstreams; k++) new_stream(T, k);
    for (int k = 0; k < NEV; k++) CK(A.ecreate(&T->ev[k], rnd(T, 2) ? 2 /* CU_EVENT_DISABLE_TIMING */ : 0));
    CK(cuMemAlloc_v2(&T->flags, NFLAG * 4));
    CK(A.set32(T->flags, 0, NFLAG, T->st[S_LEGACY]));
    for (int i = 0; i < NRES; i++)
        if (!(T->r[i].host = malloc(NE * 4))) abort();
    for (int b = 0; b < NB; b++) {
        CK(cuMemAlloc_v2(&T->buf[b], NE * 4));
        T->owner[b] = S_LEGACY;
        CK(A.set32(T->buf[b], 0, NE, T->st[S_LEGACY])); /* the model starts at zero */
    }
    CK(A.ssync(T->st[S_LEGACY]));
    for (T->op = 0; T->op < O.ops; T->op++) one_op(T);
    /* the end: everything waited for, every buffer read back and compared with the model */
    CK(A.csync());
    check_results(T, -1);
    for (int b = 0; b < NB; b++) {
        unsigned got[NE];
        own(T, b, S_LEGACY);
        CK(A.dtoh(got, T->buf[b], NE * 4, T->st[S_LEGACY]));
        CK(A.ssync(T->st[S_LEGACY]));
        for (int k = 0; k < NE; k++)
            if (got[k] != T->model[b][k]) {
                bad("thread %d: buffer %d holds %u at %d at the end, want %u", T->id, b, got[k], k, T->model[b][k]);
                break;
            }
        CK(cuMemFree_v2(T->buf[b]));
    }
    CK(cuMemFree_v2(T->flags));
    return NULL;
}

/* --capture-race: one thread's copy on a stream whose increment was deferred (the node holds the
 * stream from 300 ms after the first increment on), made while another thread begins a capture
 * (which first waits for everything deferred to be made): the copy must still read the increment.
 * The other thread tells when it is about to begin; the copy is made 100 ms later, the capture
 * still waiting then. */
static volatile int g_race_go;
static void *race_capturer(void *arg)
{
    thr *T = arg;
    CK(cuCtxSetCurrent(g_ctx));
    CUstream y;
    CUgraph g = NULL;
    CK(A.screate(&y, 0));
    __atomic_store_n(&g_race_go, 1, __ATOMIC_SEQ_CST);
    CK(A.cap_begin(y, 2));
    CK(A.cap_end(y, &g));
    CK(A.gdestroy(g));
    return NULL;
}
/* --capture-limit: the second increment deferred behind a threshold of one (a 50 ms kernel in
 * flight before it), then another thread begins a capture: the capture waits until the kernel's end
 * is seen and the increment made, then goes on (the node's limit follows the completions the
 * interposer sees: it must go on seeing them while the capture waits). */
static int capture_race(thr *T, int limit)
{
    CUstream x = T->st[3];
    CUdeviceptr b;
    unsigned got = 0xcdcdcdcd, n = 1;
    CK(cuMemAlloc_v2(&b, 4)); /* the fake's memory starts at zero */
    kernel(T, 3, f_inc, b, n, 0); /* a kernel launched once (a launch of one never made is not deferred) */
    CK(A.ssync(x));
    if (limit)
        kernel(T, 3, f_spin, 0, 0, 50000); /* in flight: the next launch waits for its end */
    else
        host_pause(300000); /* meanwhile the node holds the stream */
    n = 1;
    kernel(T, 3, f_inc, b, n, 0); /* deferred */
    pthread_t th;
    pthread_create(&th, NULL, race_capturer, &T[1]);
    while (!__atomic_load_n(&g_race_go, __ATOMIC_SEQ_CST)) host_pause(100);
    if (limit)
        pthread_join(th, NULL); /* the capture began and ended */
    else
        host_pause(100000);
    CK(A.dtoh(&got, b, 4, x));
    CK(A.ssync(x));
    if (!limit) pthread_join(th, NULL);
    printf("{\"race\":\"capture\",\"read\":%u,\"check\":\"%s\"}\n", got, got == 2 ? "ok" : "bad");
    return got == 2 ? 0 : 3;
}

/* --hold-race: streams A then B (registered in that order: a priority policy's order in the test);
 * after 300 ms (the test holds both meanwhile) a second thread copies from A (held: it waits on A),
 * and 100 ms later this thread's increment on B is deferred (B held). When A is let go, the copy
 * must first wait for B's deferred increment: that wait is not A's, and a node holding B while A
 * looks ready must not see A so. */
static void *hold_copier(void *arg)
{
    thr *T = arg;
    CK(cuCtxSetCurrent(g_ctx));
    CK(A.dtoh(T->r[0].host, T->buf[0], 4, T->st[3]));
    CK(A.ssync(T->st[3]));
    return NULL;
}
static int hold_race(thr *T)
{
    CUstream a = T->st[3], b = T->st[4];
    CK(cuMemAlloc_v2(&T->buf[0], 4));
    CK(cuMemAlloc_v2(&T->buf[1], 4));
    if (!(T->r[0].host = calloc(1, 4))) abort();
    kernel(T, 3, f_inc, T->buf[0], 1, 0);
    CK(A.ssync(a));
    kernel(T, 4, f_inc, T->buf[1], 1, 0); /* known on B: the next is deferred */
    CK(A.ssync(b));
    host_pause(300000);
    pthread_t th;
    pthread_create(&th, NULL, hold_copier, T);
    host_pause(100000);
    kernel(T, 4, f_inc, T->buf[1], 1, 0);
    pthread_join(th, NULL);
    unsigned got = 0;
    CK(A.dtoh(&got, T->buf[1], 4, b));
    CK(A.ssync(b));
    printf("{\"race\":\"hold\",\"read\":%u,\"check\":\"%s\"}\n", got, got == 2 && *T->r[0].host == 1 ? "ok" : "bad");
    return got == 2 && *T->r[0].host == 1 ? 0 : 3;
}

/* --link-race: streams A then B (A registered first: the higher in the test); A waits for a word
 * in memory (cuStreamWaitValue32) and is given a kernel behind the wait (A busy, as the node sees
 * it); then an increment on B (held behind busy A: deferred, or its thread held with XQ_DEFER=0)
 * and B's cuStreamWriteValue32 of the word, which waits for the deferred increment first. Only
 * the interposer's watchdog ends it (XQ_UNSTICK_MS=0: never). */
static int link_race(thr *T)
{
    CUstream a = T->st[3], b = T->st[4];
    CUdeviceptr word;
    CK(cuMemAlloc_v2(&word, 4)); /* the fake's memory starts at zero */
    CK(cuMemAlloc_v2(&T->buf[0], 4));
    kernel(T, 3, f_spin, 0, 0, 1);
    CK(A.ssync(a));
    kernel(T, 4, f_inc, T->buf[0], 1, 0); /* known on B: the next is deferred */
    CK(A.ssync(b));
    CK(A.vwait(a, word, 1, 1 /* CU_STREAM_WAIT_VALUE_EQ */));
    kernel(T, 3, f_spin, 0, 0, 1000);
    host_pause(50000); /* the node sees A busy */
    kernel(T, 4, f_inc, T->buf[0], 1, 0);
    CK(A.vwrite(b, word, 1, 0));
    CK(A.ssync(a));
    unsigned got = 0;
    CK(A.dtoh(&got, T->buf[0], 4, b));
    CK(A.ssync(b));
    printf("{\"race\":\"link\",\"read\":%u,\"check\":\"%s\"}\n", got, got == 2 ? "ok" : "bad");
    return got == 2 ? 0 : 3;
}

/* --stall-race (with XQ_STALL=1): streams A then B; a 150 ms kernel on B (the test holds B for a
 * while as it runs, then lets it go), then, 100 ms in, a kernel on B behind a level-2 guard, an
 * event recorded on B after it, A made to wait for the event, and a kernel on A. The test then
 * holds B while A has work in flight (A registered first: the higher): A's work waits for B's, so
 * B's guard must not hold it on the device. */
static int stall_race(thr *T)
{
    CUstream a = T->st[3], b = T->st[4];
    CUevent e;
    CK(A.ecreate(&e, 2));
    kernel(T, 3, f_spin, 0, 0, 1);
    CK(A.ssync(a));
    kernel(T, 4, f_spin, 0, 0, 1);
    CK(A.ssync(b));
    kernel(T, 4, f_spin, 0, 0, 150000);
    host_pause(100000);
    kernel(T, 4, f_spin, 0, 0, 1000); /* behind a guard: B was held within the last second */
    CK(A.erecord(e, b));
    CK(A.swait(a, e, 0));
    kernel(T, 3, f_spin, 0, 0, 1000);
    CK(A.ssync(a));
    printf("{\"race\":\"stall\",\"check\":\"ok\"}\n");
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: xq-cuda-fuzz --seed S [--ops N] [--threads T] [--streams K (2..8)] [--via direct|procaddress|dlsym]\n"
                    "                    [--ptsz] [--max-us U] [--host-us U]\n"
                    "       xq-cuda-fuzz --capture-race|--capture-limit|--hold-race|--stall-race|--link-race [--via ...]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--ptsz")) O.ptsz = 1;
        else if (!strcmp(a, "--capture-race")) O.race = 1;
        else if (!strcmp(a, "--capture-limit")) O.race = 2;
        else if (!strcmp(a, "--hold-race")) O.race = 3;
        else if (!strcmp(a, "--stall-race")) O.race = 4;
        else if (!strcmp(a, "--link-race")) O.race = 5;
        else if (!v) usage();
        else if (!strcmp(a, "--seed")) O.seed = (unsigned)strtoul(v, NULL, 10), i++;
        else if (!strcmp(a, "--ops")) O.ops = atol(v), i++;
        else if (!strcmp(a, "--threads")) O.threads = atoi(v), i++;
        else if (!strcmp(a, "--streams")) O.streams = atoi(v), i++;
        else if (!strcmp(a, "--max-us")) O.max_us = (unsigned)atoi(v), i++;
        else if (!strcmp(a, "--host-us")) O.host_us = (unsigned)atoi(v), i++;
        else if (!strcmp(a, "--via")) {
            O.via = !strcmp(v, "direct") ? 0 : !strcmp(v, "procaddress") ? 1 : !strcmp(v, "dlsym") ? 2 : -1;
            if (O.via < 0) usage();
            i++;
        } else
            usage();
    }
    if (O.ops < 1 || O.threads < 1 || O.threads > 16 || O.streams < 2 || O.streams > MAXS - 3 || O.host_us > 999999)
        usage();
    thr *T = calloc((size_t)O.threads, sizeof *T); /* CK's thread and op: the first thread's during set-up */
    g_trace = getenv("XQ_FUZZ_TRACE") != NULL;
    if (!T) abort();
    CUdevice dev;
    CUmodule mod;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&g_ctx, dev));
    CK(cuCtxSetCurrent(g_ctx));
    CK(cuModuleLoadData(&mod, "xq-fake-module"));
    CK(cuModuleGetFunction(&f_inc, mod, "inc"));
    CK(cuModuleGetFunction(&f_spin, mod, "spin"));
    CK(cuCtxGetStreamPriorityRange(&g_prio_lo, &g_prio_hi));
    get_api();
    if (O.race) {
        T = calloc(2, sizeof *T);
        T[0].nstreams = 5;
        CK(A.screate(&T[0].st[3], 0));
        CK(A.screate(&T[0].st[4], 0));
        return O.race == 5 ? link_race(T) : O.race == 4 ? stall_race(T) : O.race == 3 ? hold_race(T) : capture_race(T, O.race == 2);
    }
    pthread_t th[16];
    for (int i = 0; i < O.threads; i++) {
        T[i].id = i;
        /* the thread in the low words too: nrand48's low output bits (rnd(T, 2)) do not depend on the high word */
        T[i].rs[0] = (unsigned short)(O.seed ^ (unsigned)i * 0x9e37u), T[i].rs[1] = (unsigned short)((O.seed >> 16) ^ (unsigned)i * 0x7f4bu),
        T[i].rs[2] = (unsigned short)(i + 1);
        pthread_create(&th[i], NULL, run_thread, &T[i]);
    }
    long checked = 0, hostfns = 0, graphs = 0, links = 0, contexts = 0;
    for (int i = 0; i < O.threads; i++) {
        pthread_join(th[i], NULL);
        checked += T[i].checked, graphs += T[i].graphs, links += T[i].nflags, contexts += T[i].ctx != NULL;
        for (int k = 0; k < T[i].nstreams; k++) hostfns += T[i].hf_ran[k];
    }
    printf("{\"seed\":%u,\"threads\":%d,\"ops\":%ld,\"checked\":%ld,\"hostfns\":%ld,\"graphs\":%ld,\"links\":%ld,\"contexts\":%ld,\"check\":\"%s\"",
           O.seed, O.threads, O.ops, checked, hostfns, graphs, links, contexts, g_bad ? "bad" : "ok");
    if (g_bad) {
        printf(",\"first\":\"");
        for (const char *c = g_first; *c; c++) putchar(*c == '"' || *c == '\\' ? '\'' : *c);
        printf("\"");
    }
    printf("}\n");
    const char *dir = getenv("XQ_FUZZ_TRACE");
    if (g_bad && g_bad_thread >= 0 && dir) {
        char path[512];
        snprintf(path, sizeof path, "%s/fuzz-%u-%d.txt", dir, O.seed, (int)getpid());
        FILE *f = fopen(path, "w");
        thr *B = &T[g_bad_thread];
        for (unsigned k = B->ntrace > 128 ? B->ntrace - 128 : 0; f && k < B->ntrace; k++) fprintf(f, "%s\n", B->trace[k % 128]);
        if (f) fclose(f);
    }
    return g_bad ? 3 : 0;
}
