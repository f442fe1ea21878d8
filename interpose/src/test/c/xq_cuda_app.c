/*
 * xq-cuda-app: a small CUDA driver-API program for the interposer's tests and the Java
 * integration tests (built against the fake driver, runs against any libcuda with the fake's
 * kernels "spin" and "inc").
 *
 * A task = K "spin" kernels of T us, then cuStreamSynchronize (--attr: each kernel's launch
 * preceded by cuKernelSetAttribute of a dynamic shared memory limit it launches with: "same"
 * 64 KiB every time, "alternate" 96 and 64 KiB in turn, "other" on the kernel "inc" instead); --tasks N tasks (default 10;
 * 0, or --seconds without --tasks: until --seconds); --switch set|push|create: every odd kernel of a
 * task in device 1's primary context (FAKECUDA_DEVICES=2), made current and back, or pushed and
 * popped, or (create) from the second half of the tasks on, in a context made on device 1 by
 * cuCtxCreate for the first one, pushed and popped for the rest; both default streams synchronized. At the end one JSON line:
 *   {"tasks":N,"p50_ms":..,"p99_ms":..,"mean_ms":..,"check":"ok"|"bad"|"off","pid":P[,"lat_ms":[..],"t_ms":[..]]}
 * Exit 0 on success, 3 when --check found a wrong result, 1 on a CUDA error, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"

CUresult cuInit(unsigned int);
CUresult cuDeviceGet(CUdevice *, int);
CUresult cuDevicePrimaryCtxRetain(CUcontext *, CUdevice);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuCtxPushCurrent_v2(CUcontext);
CUresult cuCtxPopCurrent_v2(CUcontext *);
CUresult cuCtxCreate_v2(CUcontext *, unsigned int, CUdevice);
CUresult cuModuleLoadData(CUmodule *, const void *);
CUresult cuModuleGetFunction(CUfunction *, CUmodule, const char *);
CUresult cuStreamCreate(CUstream *, unsigned int);
CUresult cuStreamCreateWithPriority(CUstream *, unsigned int, int);
CUresult cuStreamDestroy_v2(CUstream);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuGetErrorString(CUresult, const char **);
#define KPARAMS CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **
CUresult cuLaunchKernel(KPARAMS);
CUresult cuLaunchKernel_ptsz(KPARAMS);
CUresult cuLaunchKernelEx(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult cuStreamSynchronize(CUstream);
CUresult cuStreamSynchronize_ptsz(CUstream);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void *, size_t, CUstream);
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr, const void *, size_t, CUstream);
CUresult cuMemcpyDtoHAsync_v2(void *, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuLaunchHostFunc(CUstream, CUhostFn, void *);
CUresult cuLaunchHostFunc_ptsz(CUstream, CUhostFn, void *);
CUresult cuStreamBeginCapture_v2(CUstream, CUstreamCaptureMode);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode);
CUresult cuStreamEndCapture(CUstream, CUgraph *);
CUresult cuStreamEndCapture_ptsz(CUstream, CUgraph *);

typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

/* The entry points a run uses: linked directly, or asked of cuGetProcAddress. */
static struct api {
    CUresult (*launch)(KPARAMS);
    CUresult (*launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*sync)(CUstream);
    CUresult (*htod)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*dtod)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*hostfn)(CUstream, CUhostFn, void *);
    CUresult (*cap_begin)(CUstream, CUstreamCaptureMode);
    CUresult (*cap_end)(CUstream, CUgraph *);
    CUresult (*kset)(int, int, void *, CUdevice);
    CUresult (*libkernel)(void **, void *, const char *);
    CUresult (*set)(CUcontext);
    CUresult (*push)(CUcontext);
    CUresult (*pop)(CUcontext *);
    CUresult (*create)(CUcontext *, unsigned int, CUdevice);
    CUresult (*csync)(void);          /* --wait ctx: cuCtxSynchronize, version 2000 */
    CUresult (*csync13)(CUcontext);   /* --wait ctx13: its version 13000 (cuCtxSynchronize_v2) */
} A;
/* --wait stream|ctx|ctx13 (ctx and ctx13 with --via procaddress): how a task ends: the stream's
 * synchronize, or the context's, looked up at both versions as the CUDA 13 runtime does and
 * called at 2000's or at 13000's ABI (cudaDeviceSynchronize's) */
static int g_wait;

static struct {
    long tasks;
    double seconds;
    int kernels;
    unsigned us;
    int long_every;   /* every Nth kernel of a task is a long one, of another shape (grid 2) */
    unsigned long_us;
    double period_ms;
    const char *stream; /* default | ptds | ptdsh | new | prio:<p> */
    int procaddress, check, threads, capture, fail, ex, fork_mode; /* fork_mode 1 launch, 2 idle */
    long linger_ms;
    const char *attr; /* NULL | same | alternate | other */
    int latencies;    /* --latencies: every task's latency in the JSON line too */
    unsigned block;   /* threads per block of every kernel (--block; default 1) */
    unsigned grid;    /* blocks of every kernel but the long ones (--grid; default 1) */
    long narrow_after; /* --narrow-after T: from task T on, blocks of 64 threads (-1: never) */
    int poisson;      /* --poisson: tasks released at random, exponential gaps of --period-ms on average */
    int ctx_switch;   /* --switch set|push|create: odd kernels of a task go in device 1's primary context (set current, or
                       * pushed and popped), or (create) a context made on device 1 for the first of them, pushed and popped after */
} O = {10, 0, 1, 1000, 0, 0, 0, "default", 0, 0, 1, 0, 0, 0, 0, 0, NULL, 0, 1, 1, -1, 0, 0};
static void *k_spin, *k_inc; /* --attr: the kernels' CUkernel handles */
/* --check with --dtod: the input goes through a second buffer (a device-to-device copy) before
 * the increment; --scribble: the host input is overwritten as soon as its copy returns (a
 * pageable source may be reused at once). */
static int g_dtod, g_scribble;

static CUfunction f_spin, f_inc, f_fail;
static int g_bad;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static double *g_lat, *g_at; /* latencies (ms) in the order they were taken, and each task's start (epoch ms) */
/* --ab: every other task with the interposer's launch path bypassed (its xq_bench_bypass), the order
 * alternating pair by pair as tenant.py --ab-interposer does; g_byp[i]: task i was bypassed */
static int g_ab;
static void (*g_bypass)(int);
static char *g_byp;
static long g_nlat, g_caplat;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(const char *what, CUresult r)
{
    const char *s = "?";
    cuGetErrorString(r, &s);
    fprintf(stderr, "xq-cuda-app: %s failed: %d (%s)\n", what, r, s);
    exit(1);
}
#define CK(call)                                                                                    \
    do {                                                                                            \
        CUresult r_ = (call);                                                                       \
        if (r_)                                                                                     \
            die(#call, r_);                                                                         \
    } while (0)

static int ptsz_mode(void) { return !strcmp(O.stream, "ptds"); }

static void get_api(void)
{
    int ptsz = ptsz_mode();
    if (!O.procaddress) {
        A.launch = ptsz ? cuLaunchKernel_ptsz : cuLaunchKernel;
        A.launch_ex = ptsz ? cuLaunchKernelEx_ptsz : cuLaunchKernelEx;
        A.sync = ptsz ? cuStreamSynchronize_ptsz : cuStreamSynchronize;
        A.htod = ptsz ? cuMemcpyHtoDAsync_v2_ptsz : cuMemcpyHtoDAsync_v2;
        A.dtoh = ptsz ? cuMemcpyDtoHAsync_v2_ptsz : cuMemcpyDtoHAsync_v2;
        A.dtod = ptsz ? cuMemcpyDtoDAsync_v2_ptsz : cuMemcpyDtoDAsync_v2;
        A.hostfn = ptsz ? cuLaunchHostFunc_ptsz : cuLaunchHostFunc;
        A.cap_begin = ptsz ? cuStreamBeginCapture_v2_ptsz : cuStreamBeginCapture_v2;
        A.cap_end = ptsz ? cuStreamEndCapture_ptsz : cuStreamEndCapture;
        A.set = cuCtxSetCurrent, A.push = cuCtxPushCurrent_v2, A.pop = cuCtxPopCurrent_v2, A.create = cuCtxCreate_v2;
        return;
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (O.procaddress == 2) { /* as cuBLASLt does: libcuda dlopened, each entry point dlsym'd by its exported name */
        const char *sfx = ptsz ? "_ptsz" : "";
        char nm[80];
#define DLS(field, name, pt)                                                                        \
    snprintf(nm, sizeof nm, "%s%s", name, (pt) ? sfx : "");                                         \
    if (!h || !(*(void **)&A.field = dlsym(h, nm))) die("dlsym(" name ")", CUDA_ERROR_NOT_FOUND);
        DLS(launch, "cuLaunchKernel", 1);
        DLS(launch_ex, "cuLaunchKernelEx", 1);
        DLS(sync, "cuStreamSynchronize", 1);
        DLS(htod, "cuMemcpyHtoDAsync_v2", 1);
        DLS(dtoh, "cuMemcpyDtoHAsync_v2", 1);
        DLS(dtod, "cuMemcpyDtoDAsync_v2", 1);
        DLS(hostfn, "cuLaunchHostFunc", 1);
        DLS(cap_begin, "cuStreamBeginCapture_v2", 1);
        DLS(cap_end, "cuStreamEndCapture", 1);
        DLS(set, "cuCtxSetCurrent", 0);
        DLS(push, "cuCtxPushCurrent_v2", 0);
        DLS(pop, "cuCtxPopCurrent_v2", 0);
        DLS(create, "cuCtxCreate_v2", 0);
#undef DLS
        return;
    }
    /* exactly how the CUDA 12/13 runtime gets there */
    gpa2_t entry = h ? (gpa2_t)dlsym(h, "cuGetProcAddress_v2") : NULL, gpa = NULL;
    CUdriverProcAddressQueryResult q;
    if (!entry || entry("cuGetProcAddress", (void **)&gpa, 12000, 0, &q) || !gpa) {
        fprintf(stderr, "xq-cuda-app: no cuGetProcAddress\n");
        exit(1);
    }
    cuuint64_t fl = ptsz ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
#define GET(field, name, ver)                                                                       \
    if (gpa(name, (void **)&A.field, ver, fl, &q) || !A.field)                                      \
        die("cuGetProcAddress(" name ")", CUDA_ERROR_NOT_FOUND);
    GET(launch, "cuLaunchKernel", 12000);
    GET(launch_ex, "cuLaunchKernelEx", 12000);
    GET(sync, "cuStreamSynchronize", 12000);
    GET(htod, "cuMemcpyHtoDAsync", 12000);
    GET(dtoh, "cuMemcpyDtoHAsync", 12000);
    GET(dtod, "cuMemcpyDtoDAsync", 12000);
    GET(hostfn, "cuLaunchHostFunc", 12000);
    GET(cap_begin, "cuStreamBeginCapture", 12000);
    GET(cap_end, "cuStreamEndCapture", 12000);
    GET(set, "cuCtxSetCurrent", 12000);
    GET(push, "cuCtxPushCurrent", 12000);
    GET(pop, "cuCtxPopCurrent", 12000);
    GET(create, "cuCtxCreate", 12000);
    GET(csync, "cuCtxSynchronize", 2000);
    GET(csync13, "cuCtxSynchronize", 13000);
    if (O.attr) {
        GET(kset, "cuKernelSetAttribute", 12000);
        GET(libkernel, "cuLibraryGetKernel", 12000);
    }
#undef GET
}

static void setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, "xq-fake-module"));
    CK(cuModuleGetFunction(&f_spin, mod, "spin"));
    CK(cuModuleGetFunction(&f_inc, mod, "inc"));
    if (O.fail)
        CK(cuModuleGetFunction(&f_fail, mod, "fail"));
    get_api();
    if (O.attr) {
        CK(A.libkernel(&k_spin, NULL, "spin"));
        CK(A.libkernel(&k_inc, NULL, "inc"));
    }
}

/* --packed: the parameters go packed in one buffer (extra: CU_LAUNCH_PARAM_BUFFER_POINTER and
 * _SIZE), laid out as the fake's kernels take them (spin: a 4-byte count; inc: an 8-byte pointer,
 * a 4-byte count), and the buffer is overwritten as soon as the call returns. */
static int g_packed;
static __thread long t_task; /* the task the thread is in (--narrow-after) */
static CUresult launch_smem(CUfunction f, CUstream s, void **params, unsigned gx, unsigned smem)
{
    unsigned bx = O.narrow_after >= 0 && t_task >= O.narrow_after ? 64 : O.block ? O.block : 1;
    unsigned char packed[16] = {0};
    size_t size = 0;
    void *extra[] = {(void *)0x01, packed, (void *)0x02, &size, (void *)0x00};
    void **ex = NULL;
    if (g_packed) {
        if (f == f_inc) memcpy(packed, params[0], 8), memcpy(packed + 8, params[1], 4), size = 12;
        else memcpy(packed, params[0], 4), size = 4;
        params = NULL, ex = extra;
    }
    CUresult r;
    if (!O.ex)
        r = A.launch(f, gx, 1, 1, bx, 1, 1, smem, s, params, ex);
    else {
        CUlaunchConfig c = {gx, 1, 1, bx, 1, 1, smem, s, NULL, 0};
        r = A.launch_ex(&c, f, params, ex);
    }
    memset(packed, 0xee, sizeof packed); /* a launch deferred must have copied them */
    size = 0;
    return r;
}
static CUresult launch_grid(CUfunction f, CUstream s, void **params, unsigned gx)
{
    return launch_smem(f, s, params, gx, 0);
}

static CUresult launch(CUfunction f, CUstream s, void **params) { return launch_grid(f, s, params, O.grid ? O.grid : 1); }

/* --attr: the k-th spin kernel of a task, its attribute set first as the mode says */
static CUresult launch_attr(CUstream s, void **params, int k)
{
    unsigned v = !strcmp(O.attr, "same") ? 64 * 1024 : k % 2 ? 64 * 1024 : 96 * 1024; /* ends low */
    CUresult r = A.kset(8 /* MAX_DYNAMIC_SHARED_SIZE_BYTES */, (int)v, !strcmp(O.attr, "other") ? k_inc : k_spin, 0);
    return r ? r : launch_smem(f_spin, s, params, 1, !strcmp(O.attr, "other") ? 0 : v);
}

static void count_hostfn(void *p) { __atomic_add_fetch((long *)p, 1, __ATOMIC_SEQ_CST); }

static double epoch_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ms: the task's latency; at: its start, epoch ms */
static void add_latency(double ms, double at, int bypassed)
{
    pthread_mutex_lock(&g_mu);
    if (g_nlat == g_caplat) {
        g_caplat = g_caplat ? 2 * g_caplat : 1024;
        g_lat = realloc(g_lat, g_caplat * sizeof *g_lat);
        g_at = realloc(g_at, g_caplat * sizeof *g_at);
        g_byp = realloc(g_byp, g_caplat);
        if (!g_lat || !g_at || !g_byp)
            abort();
    }
    g_at[g_nlat] = at;
    g_byp[g_nlat] = (char)bypassed;
    g_lat[g_nlat++] = ms;
    pthread_mutex_unlock(&g_mu);
}

static void *run_thread(void *arg)
{
    long tasks = (long)(intptr_t)arg;
    CUstream s = NULL;
    CUcontext ctx;
    CUdevice dev;
    /* every thread works in the primary context (--switch: device 1's too) */
    CUcontext ctx1 = NULL;
    if (O.ctx_switch && O.ctx_switch != 3) {
        CK(cuDeviceGet(&dev, 1));
        CK(cuDevicePrimaryCtxRetain(&ctx1, dev));
    }
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    if (!strcmp(O.stream, "new"))
        CK(cuStreamCreate(&s, 0));
    else if (!strncmp(O.stream, "prio:", 5))
        CK(cuStreamCreateWithPriority(&s, 0, atoi(O.stream + 5)));
    else if (!strcmp(O.stream, "ptdsh"))
        s = CU_STREAM_PER_THREAD;
    for (int i = 0; i < O.fail; i++)
        if (launch(f_fail, s, NULL) == CUDA_SUCCESS)
            die("launch of \"fail\" (expected to fail)", CUDA_SUCCESS);
    if (O.capture) {
        CUgraph g;
        void *p[] = {&O.us};
        CK(A.cap_begin(s, 0));
        for (int i = 0; i < O.capture; i++)
            CK(launch(f_spin, s, p));
        CK(A.cap_end(s, &g));
        printf("{\"captured\":%d}\n", O.capture); /* tests: the capture did not wait */
        fflush(stdout);
    }
    enum { N = 4096 };
    unsigned *host = malloc(N * sizeof *host), *out = malloc(N * sizeof *out);
    CUdeviceptr buf = 0, buf2 = 0;
    long hostfn_calls = 0;
    if (O.check)
        CK(cuMemAlloc_v2(&buf, N * sizeof *host));
    if (O.check && g_dtod)
        CK(cuMemAlloc_v2(&buf2, N * sizeof *host));
    double start = now_s();
    long t = 0;
    double due = start;
    unsigned short seed[3] = {40, 0, 0}; /* --poisson: the same arrivals in every run */
    for (; (O.tasks == 0 || t < tasks) && (O.seconds <= 0 || now_s() - start < O.seconds); t++) {
        if (O.period_ms > 0) {
            if (t > 0) due += (O.poisson ? -log(1.0 - erand48(seed)) : 1.0) * O.period_ms / 1000;
            double wait = due - now_s();
            if (wait > 0) {
                struct timespec ts = {(time_t)wait, (long)((wait - (time_t)wait) * 1e9)};
                nanosleep(&ts, NULL);
            }
        }
        /* --ab: pairs (2k, 2k+1), interposed first in even pairs and bypassed first in odd ones; the
         * previous task ended with its synchronize, so nothing of ours is in flight */
        int bypassed = g_ab && ((t / 2) % 2 == 0 ? t % 2 == 1 : t % 2 == 0);
        if (g_ab)
            g_bypass(bypassed);
        double t0 = now_s(), at0 = epoch_ms();
        t_task = t;
        if (O.check) {
            for (unsigned i = 0; i < N; i++)
                host[i] = i + (unsigned)t;
            CK(A.htod(buf, host, N * sizeof *host, s));
            if (g_scribble)
                memset(host, 0xab, N * sizeof *host);
        }
        unsigned us = O.us;
        void *p[] = {&us};
        unsigned lus = O.long_us;
        void *lp[] = {&lus};
        for (int k = 0; k < O.kernels; k++) {
            CUcontext was;
            /* create: from the second half of the tasks on, when the kernel's kind is measured (its
             * launches take the lean path) */
            int other = O.ctx_switch && k % 2 && (O.ctx_switch != 3 || t >= tasks / 2);
            if (other) /* device 1's context for this one (its default stream) */
                CK(O.ctx_switch == 3 && !ctx1 ? A.create(&ctx1, 0, 1) /* made current */
                   : O.ctx_switch == 1        ? A.set(ctx1)
                                              : A.push(ctx1));
            CK(O.attr                                                 ? launch_attr(s, p, k)
               : O.long_every && k % O.long_every == O.long_every - 1 ? launch_grid(f_spin, s, lp, 2)
                                                                      : launch(f_spin, s, p));
            if (other)
                CK(O.ctx_switch == 1 ? A.set(ctx) : A.pop(&was));
        }
        if (O.ctx_switch && ctx1) { /* device 1's default stream too */
            CK(A.set(ctx1));
            CK(A.sync(s));
            CK(A.set(ctx));
        }
        us = 0; /* the launch took its parameters' values: a deferred one must have copied them */
        if (O.check) {
            CUdeviceptr b = g_dtod ? buf2 : buf;
            if (g_dtod)
                CK(A.dtod(buf2, buf, N * sizeof *host, s));
            CUdeviceptr from = b;
            unsigned n = N;
            void *q[] = {&b, &n};
            CK(launch(f_inc, s, q));
            b = 0, n = 0;
            CK(A.dtoh(out, from, N * sizeof *out, s));
            CK(A.hostfn(s, count_hostfn, &hostfn_calls));
        }
        CK(g_wait == 2 ? A.csync13(NULL) : g_wait == 1 ? A.csync() : A.sync(s));
        add_latency((now_s() - t0) * 1000, at0, bypassed);
        if (O.check)
            for (unsigned i = 0; i < N; i++)
                if (out[i] != i + (unsigned)t + 1)
                    __atomic_store_n(&g_bad, 1, __ATOMIC_SEQ_CST);
    }
    if (g_ab)
        g_bypass(0);
    if (O.check && hostfn_calls != t)
        __atomic_store_n(&g_bad, 1, __ATOMIC_SEQ_CST);
    if (buf)
        CK(cuMemFree_v2(buf));
    if (buf2)
        CK(cuMemFree_v2(buf2));
    if (s && s != CU_STREAM_PER_THREAD)
        CK(cuStreamDestroy_v2(s));
    free(host), free(out);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void usage(void)
{
    fprintf(stderr, "usage: xq-cuda-app [--tasks N] [--seconds S] [--kernels K] [--us T] [--period-ms P [--poisson]]\n"
                    "  [--long-every N --long-us T]\n"
                    "  [--stream default|ptds|ptdsh|new|prio:<p>] [--via direct|procaddress|dlsym] [--wait stream|ctx|ctx13 (ctx*: --via procaddress)]\n"
                    "  [--check] [--block THREADS] [--grid BLOCKS]\n"
                    "  [--narrow-after TASK (blocks of 64 threads from that task on)]\n"
                    "  [--dtod] [--scribble] (with --check) [--packed]\n"
                    "  [--ex] [--threads N] [--capture N] [--fail N] [--fork launch|idle] [--linger-ms M]\n"
                    "  [--attr same|alternate|other (with --via procaddress)] [--latencies] [--switch set|push|create]\n"
                    "  [--ab (under the interposer, one thread: every other task with its launch path bypassed; with\n"
                    "   --latencies each task's 'bypassed' too)]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int tasks_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (!strcmp(a, name) && (v || (usage(), 0)) && ++i)
        if (OPT("--tasks"))
            O.tasks = atol(v), tasks_set = 1;
        else if (OPT("--seconds"))
            O.seconds = atof(v);
        else if (OPT("--kernels"))
            O.kernels = atoi(v);
        else if (OPT("--block"))
            O.block = (unsigned)atoi(v);
        else if (OPT("--grid"))
            O.grid = (unsigned)atoi(v);
        else if (OPT("--narrow-after"))
            O.narrow_after = atol(v);
        else if (OPT("--us"))
            O.us = (unsigned)atol(v);
        else if (OPT("--long-every"))
            O.long_every = atoi(v);
        else if (OPT("--long-us"))
            O.long_us = (unsigned)atol(v);
        else if (OPT("--period-ms"))
            O.period_ms = atof(v);
        else if (!strcmp(a, "--poisson"))
            O.poisson = 1;
        else if (OPT("--wait"))
            g_wait = !strcmp(v, "ctx13") ? 2 : !strcmp(v, "ctx") ? 1 : !strcmp(v, "stream") ? 0 : (usage(), 0);
        else if (!strcmp(a, "--dtod"))
            g_dtod = 1;
        else if (!strcmp(a, "--packed"))
            g_packed = 1;
        else if (!strcmp(a, "--scribble"))
            g_scribble = 1;
        else if (OPT("--stream"))
            O.stream = v;
        else if (OPT("--via"))
            O.procaddress = !strcmp(v, "procaddress") ? 1 : !strcmp(v, "dlsym") ? 2 : !strcmp(v, "direct") ? 0 : (usage(), 0);
        else if (OPT("--threads"))
            O.threads = atoi(v);
        else if (OPT("--capture"))
            O.capture = atoi(v);
        else if (OPT("--fail"))
            O.fail = atoi(v);
        else if (OPT("--fork"))
            O.fork_mode = !strcmp(v, "launch") ? 1 : !strcmp(v, "idle") ? 2 : (usage(), 0);
        else if (OPT("--linger-ms"))
            O.linger_ms = atol(v);
        else if (OPT("--attr"))
            O.attr = !strcmp(v, "same") || !strcmp(v, "alternate") || !strcmp(v, "other") ? v : (usage(), NULL);
        else if (!strcmp(a, "--check"))
            O.check = 1;
        else if (!strcmp(a, "--ex"))
            O.ex = 1;
        else if (!strcmp(a, "--latencies"))
            O.latencies = 1;
        else if (!strcmp(a, "--ab"))
            g_ab = 1;
        else if (OPT("--switch"))
            O.ctx_switch = !strcmp(v, "set") ? 1 : !strcmp(v, "push") ? 2 : !strcmp(v, "create") ? 3 : (usage(), 0);
        else
            usage();
    }
    if (O.seconds > 0 && !tasks_set)
        O.tasks = 0; /* --seconds alone: as many tasks as fit */
    if (O.threads < 1 || O.kernels < 0 || (O.tasks == 0 && O.seconds <= 0) || (O.attr && O.procaddress != 1) || (g_wait && O.procaddress != 1))
        usage();
    if (g_ab) { /* the interposer's measurement switch: only under it, and one thread (it is process-wide) */
        *(void **)&g_bypass = dlsym(RTLD_DEFAULT, "xq_bench_bypass");
        if (!g_bypass || O.threads != 1) {
            fprintf(stderr, "xq-cuda-app: --ab needs %s\n", g_bypass ? "--threads 1" : "the interposer preloaded (xq_bench_bypass not found)");
            return 2;
        }
    }
    setup();
    pthread_t th[64];
    int n = O.threads > 64 ? 64 : O.threads;
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, run_thread, (void *)(intptr_t)O.tasks);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    int rc = 0;
    if (O.fork_mode) {
        pid_t c = fork();
        if (c == 0) {
            if (O.fork_mode == 2)
                _exit(0);
            setup(); /* a fresh driver in the child */
            O.threads = 1, O.capture = 0, O.fail = 0, O.tasks = 2, O.seconds = 0;
            run_thread((void *)(intptr_t)2);
            fflush(stdout);
            _exit(g_bad ? 3 : 0);
        }
        int st = 0;
        if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
            rc = 1, fprintf(stderr, "xq-cuda-app: forked child failed (status %d)\n", st);
        else
            printf("{\"child_pid\":%d}\n", (int)c);
    }
    double *sorted = g_nlat ? malloc(g_nlat * sizeof *sorted) : NULL;
    if (g_nlat && !sorted)
        abort();
    double sum = 0;
    for (long i = 0; i < g_nlat; i++)
        sum += g_lat[i], sorted[i] = g_lat[i];
    if (g_nlat)
        qsort(sorted, g_nlat, sizeof *sorted, cmp);
    printf("{\"tasks\":%ld,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"mean_ms\":%.3f,\"check\":\"%s\",\"pid\":%d", g_nlat,
           g_nlat ? sorted[g_nlat / 2] : 0, g_nlat ? sorted[(long)((g_nlat - 1) * 0.99)] : 0,
           g_nlat ? sum / g_nlat : 0, O.check ? (g_bad ? "bad" : "ok") : "off", (int)getpid());
    free(sorted);
    if (O.latencies) { /* every task's latency in the order taken, and each one's start (epoch ms) */
        printf(",\"lat_ms\":[");
        for (long i = 0; i < g_nlat; i++)
            printf("%s%.3f", i ? "," : "", g_lat[i]);
        printf("],\"t_ms\":[");
        for (long i = 0; i < g_nlat; i++)
            printf("%s%.1f", i ? "," : "", g_at[i]);
        printf("]");
        if (g_ab) {
            printf(",\"bypassed\":[");
            for (long i = 0; i < g_nlat; i++)
                printf("%s%d", i ? "," : "", g_byp[i]);
            printf("]");
        }
    }
    printf("}\n");
    fflush(stdout);
    if (O.linger_ms > 0)
        usleep((useconds_t)O.linger_ms * 1000);
    return g_bad ? 3 : rc;
}
