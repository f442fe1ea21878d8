/*
 * xq-hip-fuzz: a random HIP program whose every result is known before it runs, for the HIP
 * interposer's tests (test_hip_fuzz.c), built against the HIP test double (hal-lv1-hip: kernels
 * "spin" and "xq_saxpy" of a module made in memory). The HIP counterpart of xq-cuda-fuzz.
 *
 * Each thread draws a program from --seed: increments (xq_saxpy y += 1 * ones on part of a
 * buffer, by hipModuleLaunchKernel), spins, memsets, copies host to device (hipMemcpyHtoDAsync,
 * the source kept until the end: the double reads it when the copy runs), device to device and
 * device to host (hipMemcpyAsync), host functions, links between streams by events
 * (hipStreamWaitEvent) and by a word in memory (hipStreamWaitValue32 on one stream of its own, work
 * behind it, then hipStreamWriteValue32 on another), captures launched as graphs, streams destroyed
 * and made anew, and every way of waiting (a stream, an event, the device, polling a stream), on the
 * null stream, the per-thread one and streams of its own (some with a stream priority). A buffer
 * belongs to one stream at a time (moving it records an event on the old stream and makes the new
 * one wait), so the thread's model (plain arrays) says what every device-to-host copy must read,
 * checked once a wait covers it, and what every buffer holds at the end; host functions check
 * that each stream runs them once each, in order.
 *
 * Usage: xq-hip-fuzz --seed S [--ops N] [--threads T] [--streams K] [--max-us U] [--host-us U]
 * One JSON line at the end: {"seed":S,"threads":T,"ops":N,"checked":C,"hostfns":H,"graphs":G,"links":L,"check":"ok"|"bad"[,"first":"..."]}
 * Exit 0 when every result was right, 3 when one was not, 1 on a HIP error, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hip_abi.h"

hipError_t hipSetDevice(int);
hipError_t hipModuleLoadData(hipModule_t *, const void *);
hipError_t hipModuleGetFunction(hipFunction_t *, hipModule_t, const char *);
hipError_t hipStreamCreateWithFlags(hipStream_t *, unsigned);
hipError_t hipStreamCreateWithPriority(hipStream_t *, unsigned, int);
hipError_t hipStreamDestroy(hipStream_t);
hipError_t hipStreamSynchronize(hipStream_t);
hipError_t hipStreamQuery(hipStream_t);
hipError_t hipDeviceSynchronize(void);
hipError_t hipDeviceGetStreamPriorityRange(int *, int *);
hipError_t hipModuleLaunchKernel(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 hipStream_t, void **, void **);
hipError_t hipMalloc(void **, size_t);
hipError_t hipFree(void *);
hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t, void *, size_t, hipStream_t);
hipError_t hipMemcpyAsync(void *, const void *, size_t, hipMemcpyKind, hipStream_t);
hipError_t hipMemsetD32Async(hipDeviceptr_t, int, size_t, hipStream_t);
hipError_t hipLaunchHostFunc(hipStream_t, hipHostFn_t, void *);
hipError_t hipEventCreateWithFlags(hipEvent_t *, unsigned);
hipError_t hipEventRecord(hipEvent_t, hipStream_t);
hipError_t hipEventSynchronize(hipEvent_t);
hipError_t hipStreamWaitEvent(hipStream_t, hipEvent_t, unsigned);
hipError_t hipStreamWaitValue32(hipStream_t, void *, uint32_t, unsigned, uint32_t);
hipError_t hipStreamWriteValue32(hipStream_t, void *, uint32_t, unsigned);
hipError_t hipStreamBeginCapture(hipStream_t, hipStreamCaptureMode);
hipError_t hipStreamEndCapture(hipStream_t, hipGraph_t *);
hipError_t hipGraphInstantiate(hipGraphExec_t *, hipGraph_t, void *, char *, size_t);
hipError_t hipGraphLaunch(hipGraphExec_t, hipStream_t);

static struct {
    unsigned seed;
    long ops;
    int threads, streams;
    unsigned max_us, host_us;
} O = {1, 400, 1, 3, 300, 200};

static hipFunction_t f_spin, f_saxpy;
static int g_prio_least, g_prio_greatest;
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

#define CK(call)                                                                                    \
    do {                                                                                            \
        hipError_t r_ = (call);                                                                     \
        if (r_) {                                                                                   \
            fprintf(stderr, "xq-hip-fuzz: seed %u thread %d op %ld: %s failed: %d\n", O.seed, T->id, T->op, #call, r_); \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

enum { NB = 4, NE = 64, MAXS = 2 + 8, NEV = 8, NRES = 48, NG = 3, GOPS = 4, NFLAG = 1024 };
enum { S_NULL, S_PER_THREAD }; /* then the thread's own streams */

typedef struct hfn {
    struct thr *t;
    int s;
    long seq;
} hfn;

typedef struct res {
    int used, s, n;
    long op;
    float *host;
    float want[NE];
} res;

typedef struct mop { /* a captured command's effect: 'i' inc, 's' memset, 'w' spin */
    char kind;
    int b;
    unsigned off, n;
    float v;
} mop;

typedef struct graph {
    int live;
    hipGraphExec_t x;
    mop ops[GOPS];
    int nops;
} graph;

typedef struct thr {
    int id;
    long op;
    unsigned short rs[3];
    int nstreams;
    hipStream_t st[MAXS];
    float *buf[NB], *ones;
    float model[NB][NE];
    int owner[NB];
    hipEvent_t ev[NEV];
    int nev;
    res r[NRES];
    long hf_issued[MAXS], hf_ran[MAXS];
    hfn *hf;
    long nhf, caphf;
    uint32_t *flags;
    int nflags;
    graph g[NG];
    long checked, graphs;
    void **keep; /* host sources of copies, kept to the end */
    long nkeep, capkeep;
} thr;

static unsigned rnd(thr *T, unsigned n) { return n ? (unsigned)(nrand48(T->rs) % n) : 0; }

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

static void apply(thr *T, const mop *m)
{
    for (unsigned k = 0; k < m->n; k++)
        if (m->kind == 'i') T->model[m->b][m->off + k] += 1;
        else if (m->kind == 's') T->model[m->b][m->off + k] = m->v;
}

static void own(thr *T, int b, int s)
{
    int o = T->owner[b];
    if (o == s) return;
    hipEvent_t e = T->ev[T->nev++ % NEV];
    CK(hipEventRecord(e, T->st[o]));
    CK(hipStreamWaitEvent(T->st[s], e, 0));
    T->owner[b] = s;
}

static void check_results(thr *T, int s)
{
    for (int i = 0; i < NRES; i++) {
        res *r = &T->r[i];
        if (!r->used || (s >= 0 && r->s != s)) continue;
        for (int k = 0; k < r->n; k++)
            if (r->host[k] != r->want[k]) {
                bad("thread %d: the copy to the host made at op %ld on stream %d read %g at %d, want %g (checked at op %ld)", T->id,
                    r->op, r->s, (double)r->host[k], k, (double)r->want[k], T->op);
                break;
            }
        r->used = 0;
        T->checked++;
    }
    for (int k = 0; k < T->nstreams; k++) {
        if (s >= 0 && k != s) continue;
        long ran = __atomic_load_n(&T->hf_ran[k], __ATOMIC_ACQUIRE);
        if (ran != T->hf_issued[k])
            bad("thread %d stream %d: %ld host functions ran at op %ld after a wait, want %ld", T->id, k, ran, T->op, T->hf_issued[k]);
    }
}

static void spin(thr *T, int s, unsigned us)
{
    uint64_t t = us;
    void *args[] = {&t};
    CK(hipModuleLaunchKernel(f_spin, 1, 1, 1, 1, 1, 1, 0, T->st[s], args, NULL));
}

static void inc(thr *T, int s, int b, unsigned off, unsigned n)
{
    int32_t nn = (int32_t)n;
    float alpha = 1.0f;
    float *x = T->ones, *y = T->buf[b] + off;
    void *args[] = {&nn, &alpha, &x, &y};
    CK(hipModuleLaunchKernel(f_saxpy, 1, 1, 1, 64, 1, 1, 0, T->st[s], args, NULL));
}

static float memset_v(thr *T, int s, int b, unsigned off, unsigned n)
{
    float v = (float)rnd(T, 1000);
    int bits;
    memcpy(&bits, &v, 4);
    CK(hipMemsetD32Async(T->buf[b] + off, bits, n, T->st[s]));
    return v;
}

static void wait_stream(thr *T, int s)
{
    switch (rnd(T, 3)) {
    case 0: CK(hipStreamSynchronize(T->st[s])); break;
    case 1: {
        hipEvent_t e = T->ev[T->nev++ % NEV];
        CK(hipEventRecord(e, T->st[s]));
        CK(hipEventSynchronize(e));
        break;
    }
    default: {
        hipError_t r;
        while ((r = hipStreamQuery(T->st[s])) == hipErrorNotReady) host_pause(20);
        CK(r);
    }
    }
    check_results(T, s);
}

static res *free_result(thr *T)
{
    for (int i = 0; i < NRES; i++)
        if (!T->r[i].used) return &T->r[i];
    CK(hipDeviceSynchronize());
    check_results(T, -1);
    return &T->r[0];
}

static void new_stream(thr *T, int k)
{
    if (rnd(T, 2)) CK(hipStreamCreateWithFlags(&T->st[k], rnd(T, 2) /* hipStreamNonBlocking or not */));
    else CK(hipStreamCreateWithPriority(&T->st[k], 0, g_prio_greatest + (int)rnd(T, (unsigned)(g_prio_least - g_prio_greatest + 1))));
}

static void *keep(thr *T, size_t n)
{
    if (T->nkeep == T->capkeep) {
        T->capkeep = T->capkeep ? 2 * T->capkeep : 64;
        if (!(T->keep = realloc(T->keep, (size_t)T->capkeep * sizeof *T->keep))) abort();
    }
    void *p = malloc(n);
    if (!p) abort();
    return T->keep[T->nkeep++] = p;
}

/* A link by a word in memory between two streams of the thread's own (see xq-cuda-fuzz's flag_link):
 * the waiter busy first, then the writer's work and the write; each word used once. */
static int value_link(thr *T)
{
    if (T->nstreams - 2 < 2 || T->nflags >= NFLAG) return 0;
    int n = T->nstreams - 2, i = (int)rnd(T, (unsigned)n), ws = 2 + i, wo = 2 + (i + 1 + (int)rnd(T, (unsigned)n - 1)) % n;
    uint32_t *f = &T->flags[T->nflags++], v = (uint32_t)T->nflags;
    CK(hipStreamWaitValue32(T->st[ws], f, v, 1 /* hipStreamWaitValueEq */, 0xffffffffu));
    spin(T, ws, rnd(T, O.max_us + 1));
    if (rnd(T, 3)) spin(T, wo, rnd(T, O.max_us + 1));
    CK(hipStreamWriteValue32(T->st[wo], f, v, 0));
    return 1;
}

static void one_op(thr *T)
{
    int s = (int)rnd(T, (unsigned)T->nstreams), b = (int)rnd(T, NB);
    unsigned off = rnd(T, NE), n = 1 + rnd(T, NE - off), w = rnd(T, 100);
    if (w < 22) {
        own(T, b, s);
        inc(T, s, b, off, n);
        apply(T, &(mop){'i', b, off, n, 0});
    } else if (w < 32) {
        spin(T, s, rnd(T, O.max_us + 1));
    } else if (w < 40) {
        own(T, b, s);
        float v = memset_v(T, s, b, off, n);
        apply(T, &(mop){'s', b, off, n, v});
    } else if (w < 48) { /* host to device */
        float *src = keep(T, n * 4);
        for (unsigned k = 0; k < n; k++) src[k] = (float)rnd(T, 100000);
        own(T, b, s);
        CK(hipMemcpyHtoDAsync(T->buf[b] + off, src, n * 4, T->st[s]));
        memcpy(&T->model[b][off], src, n * 4);
    } else if (w < 55) { /* device to device */
        int d = (b + 1 + (int)rnd(T, NB - 1)) % NB;
        unsigned doff = rnd(T, NE - n + 1);
        own(T, b, s);
        own(T, d, s);
        CK(hipMemcpyAsync(T->buf[d] + doff, T->buf[b] + off, n * 4, 3 /* hipMemcpyDeviceToDevice */, T->st[s]));
        memmove(&T->model[d][doff], &T->model[b][off], n * 4);
    } else if (w < 64) { /* device to host, checked after a wait */
        res *r = free_result(T);
        own(T, b, s);
        r->used = 1, r->s = s, r->n = (int)n, r->op = T->op;
        memcpy(r->want, &T->model[b][off], n * 4);
        memset(r->host, 0xcd, NE * 4);
        CK(hipMemcpyAsync(r->host, T->buf[b] + off, n * 4, 2 /* hipMemcpyDeviceToHost */, T->st[s]));
    } else if (w < 70) {
        if (T->nhf == T->caphf) { /* records never move: a pending function holds its pointer */
            T->caphf = 256;
            if (!(T->hf = calloc((size_t)T->caphf, sizeof *T->hf))) abort();
            T->nhf = 0;
        }
        hfn *h = &T->hf[T->nhf++];
        h->t = T, h->s = s, h->seq = ++T->hf_issued[s];
        CK(hipLaunchHostFunc(T->st[s], on_hostfn, h));
    } else if (w < 75) { /* an event link, nothing moved */
        int o = (int)rnd(T, (unsigned)T->nstreams);
        hipEvent_t e = T->ev[T->nev++ % NEV];
        CK(hipEventRecord(e, T->st[o]));
        CK(hipStreamWaitEvent(T->st[s], e, 0));
    } else if (w < 83) {
        wait_stream(T, s);
    } else if (w < 85) {
        CK(hipDeviceSynchronize());
        check_results(T, -1);
    } else if (w < 88 && T->nstreams > 2) { /* a capture on a stream of its own, instantiated */
        int c = 2 + (int)rnd(T, (unsigned)(T->nstreams - 2));
        graph *G = &T->g[rnd(T, NG)];
        mop ops[GOPS];
        int nops = 0;
        CK(hipStreamBeginCapture(T->st[c], 0));
        for (unsigned k = 1 + rnd(T, GOPS); k > 0; k--) {
            int gb = (int)rnd(T, NB);
            unsigned goff = rnd(T, NE), gn = 1 + rnd(T, NE - goff);
            switch (rnd(T, 3)) {
            case 0: spin(T, c, rnd(T, O.max_us + 1)), ops[nops++] = (mop){'w', 0, 0, 0, 0}; break;
            case 1: inc(T, c, gb, goff, gn), ops[nops++] = (mop){'i', gb, goff, gn, 0}; break;
            default: {
                float v = memset_v(T, c, gb, goff, gn);
                ops[nops++] = (mop){'s', gb, goff, gn, v};
            }
            }
        }
        hipGraph_t g = NULL;
        CK(hipStreamEndCapture(T->st[c], &g));
        CK(hipGraphInstantiate(&G->x, g, NULL, NULL, 0));
        G->live = 1, G->nops = nops;
        memcpy(G->ops, ops, sizeof ops);
    } else if (w < 92) { /* a graph launched: its buffers moved to the stream first */
        graph *G = &T->g[rnd(T, NG)];
        if (G->live) {
            for (int k = 0; k < G->nops; k++)
                if (G->ops[k].kind != 'w') own(T, G->ops[k].b, s);
            CK(hipGraphLaunch(G->x, T->st[s]));
            for (int k = 0; k < G->nops; k++) apply(T, &G->ops[k]);
            T->graphs++;
        }
    } else if (w < 93 && T->nstreams > 3) { /* a stream of its own destroyed and made anew */
        int c = 2 + (int)rnd(T, (unsigned)(T->nstreams - 2));
        for (int k = 0; k < NB; k++) own(T, k, c == 2 ? 3 : 2);
        CK(hipStreamSynchronize(T->st[c]));
        check_results(T, c);
        CK(hipStreamDestroy(T->st[c]));
        new_stream(T, c);
    } else if (w < 96 && value_link(T)) {
    } else {
        host_pause(rnd(T, O.host_us + 1));
    }
}

static void *run_thread(void *arg)
{
    thr *T = arg;
    CK(hipSetDevice(0));
    T->st[S_NULL] = NULL, T->st[S_PER_THREAD] = hipStreamPerThread;
    T->nstreams = 2 + O.streams;
    for (int k = 2; k < T->nstreams; k++) new_stream(T, k);
    for (int k = 0; k < NEV; k++) CK(hipEventCreateWithFlags(&T->ev[k], hipEventDisableTiming));
    for (int i = 0; i < NRES; i++)
        if (!(T->r[i].host = malloc(NE * 4))) abort();
    CK(hipMalloc((void **)&T->ones, NE * 4));
    CK(hipMalloc((void **)&T->flags, NFLAG * 4));
    float *one = keep(T, NE * 4);
    for (int k = 0; k < NE; k++) one[k] = 1.0f;
    CK(hipMemcpyHtoDAsync(T->ones, one, NE * 4, NULL));
    CK(hipMemsetD32Async(T->flags, 0, NFLAG, NULL));
    for (int b = 0; b < NB; b++) {
        CK(hipMalloc((void **)&T->buf[b], NE * 4));
        T->owner[b] = S_NULL;
        CK(hipMemsetD32Async(T->buf[b], 0, NE, NULL)); /* 0.0f */
    }
    CK(hipStreamSynchronize(NULL));
    for (T->op = 0; T->op < O.ops; T->op++) one_op(T);
    CK(hipDeviceSynchronize());
    check_results(T, -1);
    for (int b = 0; b < NB; b++) {
        float got[NE];
        own(T, b, S_NULL);
        CK(hipMemcpyAsync(got, T->buf[b], NE * 4, 2, NULL));
        CK(hipStreamSynchronize(NULL));
        for (int k = 0; k < NE; k++)
            if (got[k] != T->model[b][k]) {
                bad("thread %d: buffer %d holds %g at %d at the end, want %g", T->id, b, (double)got[k], k, (double)T->model[b][k]);
                break;
            }
        CK(hipFree(T->buf[b]));
    }
    for (long i = 0; i < T->nkeep; i++) free(T->keep[i]);
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: xq-hip-fuzz --seed S [--ops N] [--threads T] [--streams K] [--max-us U] [--host-us U]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) usage();
        if (!strcmp(a, "--seed")) O.seed = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--ops")) O.ops = atol(v);
        else if (!strcmp(a, "--threads")) O.threads = atoi(v);
        else if (!strcmp(a, "--streams")) O.streams = atoi(v);
        else if (!strcmp(a, "--max-us")) O.max_us = (unsigned)atoi(v);
        else if (!strcmp(a, "--host-us")) O.host_us = (unsigned)atoi(v);
        else usage();
        i++;
    }
    if (O.ops < 1 || O.threads < 1 || O.threads > 16 || O.streams < 2 || O.streams > MAXS - 2 || O.host_us > 999999) usage();
    thr *T = calloc((size_t)O.threads, sizeof *T); /* CK's thread and op: the first thread's during set-up */
    if (!T) abort();
    hipModule_t mod;
    CK(hipSetDevice(0));
    CK(hipModuleLoadData(&mod, "XQ-HIP-DOUBLE 1\nspin\nxq_saxpy 4 4 8 8\n"));
    CK(hipModuleGetFunction(&f_spin, mod, "spin"));
    CK(hipModuleGetFunction(&f_saxpy, mod, "xq_saxpy"));
    CK(hipDeviceGetStreamPriorityRange(&g_prio_least, &g_prio_greatest));
    pthread_t th[16];
    for (int i = 0; i < O.threads; i++) {
        T[i].id = i;
        T[i].rs[0] = (unsigned short)(O.seed ^ (unsigned)i * 0x9e37u), T[i].rs[1] = (unsigned short)((O.seed >> 16) ^ (unsigned)i * 0x7f4bu),
        T[i].rs[2] = (unsigned short)(i + 1);
        pthread_create(&th[i], NULL, run_thread, &T[i]);
    }
    long checked = 0, hostfns = 0, graphs = 0, links = 0;
    for (int i = 0; i < O.threads; i++) {
        pthread_join(th[i], NULL);
        checked += T[i].checked, graphs += T[i].graphs, links += T[i].nflags;
        for (int k = 0; k < T[i].nstreams; k++) hostfns += T[i].hf_ran[k];
    }
    printf("{\"seed\":%u,\"threads\":%d,\"ops\":%ld,\"checked\":%ld,\"hostfns\":%ld,\"graphs\":%ld,\"links\":%ld,\"check\":\"%s\"", O.seed,
           O.threads, O.ops, checked, hostfns, graphs, links, g_bad ? "bad" : "ok");
    if (g_bad) {
        printf(",\"first\":\"");
        for (const char *c = g_first; *c; c++) putchar(*c == '"' || *c == '\\' ? '\'' : *c);
        printf("\"");
    }
    printf("}\n");
    return g_bad ? 3 : 0;
}
