/*
 * xq-hip-app: a small HIP program for the HIP interposer's tests and the Java integration tests,
 * built against the HIP test double (hal-lv1-hip/src/test/c/hipdouble.c: kernels "spin" and
 * "append" of its module blob, passed with --module).
 *
 * A task = a copy host-to-device, a 32-bit memset, K "spin" kernels of T us, a copy back, a host
 * function, then hipStreamSynchronize. Kernels go through --via module (hipModuleLaunchKernel,
 * default), kernel (hipLaunchKernel), ext (hipExtLaunchKernel), extmodule
 * (hipExtModuleLaunchKernel), coop (hipLaunchCooperativeKernel), graph (the K kernels captured
 * once into a graph, hipGraphLaunch per task), dlsym (hipModuleLaunchKernel taken with dlsym from
 * dlopen("libamdhip64.so"), as Triton's HIP launcher does; also checks that dlsym passes other
 * lookups through: an unknown HIP name, libc's getpid, and the same name in a second copy of the
 * runtime, so5/libamdhip64.so.5, which must not come back as the program's own binding) or
 * getproc (hipModuleLaunchKernel, or with --stream spt hipLaunchKernel with the per-thread flag,
 * and the memset as hipMemsetAsync, all from hipGetProcAddress). --stream new|default|ptds|spt|prio:<p>: a stream
 * of its own, the null stream, hipStreamPerThread, the _spt entry points with the null stream,
 * or hipStreamCreateWithPriority. --tasks N (0 or --seconds alone: until --seconds). --fail N:
 * N launches the runtime refuses first. --vendor N: per task, N more kernels launched by
 * libxq-hipvendor.so (next to the program, dlopened RTLD_LOCAL like a Python extension's
 * vendor library). --copy-with-stream: the copy back with hipMemcpyWithStream. --check:
 * results checked (0 unless wrong). --link MS: instead of tasks, one link between two streams of
 * the process: K kernels on the stream (A) and an event recorded after them; MS ms later a second
 * stream of the greatest priority (B) waits for that event (hipStreamWaitEvent) and launches K
 * kernels; then both are synchronised (the KFD tests: the node holds A behind B, busy waiting
 * for A). --value-link: A (this stream) and B (a second one) each launch once and synchronise
 * (registered in that order), then A waits for a word in memory (hipStreamWaitValue32, ==) with a
 * kernel behind the wait; 50 ms later B launches a kernel and writes the word
 * (hipStreamWriteValue32): a node holding B behind busy A holds both (the watchdog's test).
 * At the end one JSON line:
 *   {"tasks":N,"p50_ms":..,"p99_ms":..,"mean_ms":..,"check":"ok"|"bad"|"off","pid":P}
 * Exit 0 on success, 3 when --check found a wrong result, 1 on a HIP error, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hip_abi.h"

hipError_t hipSetDevice(int);
hipError_t hipModuleLoadData(hipModule_t *, const void *);
hipError_t hipModuleGetFunction(hipFunction_t *, hipModule_t, const char *);
hipError_t hipStreamCreate(hipStream_t *);
hipError_t hipStreamCreateWithPriority(hipStream_t *, unsigned, int);
hipError_t hipStreamDestroy(hipStream_t);
hipError_t hipStreamSynchronize(hipStream_t);
hipError_t hipModuleLaunchKernel(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 hipStream_t, void **, void **);
hipError_t hipLaunchKernel(const void *, dim3, dim3, void **, size_t, hipStream_t);
hipError_t hipLaunchKernel_spt(const void *, dim3, dim3, void **, size_t, hipStream_t);
hipError_t hipExtLaunchKernel(const void *, dim3, dim3, void **, size_t, hipStream_t, hipEvent_t, hipEvent_t, int);
hipError_t hipExtModuleLaunchKernel(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, size_t,
                                    hipStream_t, void **, void **, hipEvent_t, hipEvent_t, uint32_t);
hipError_t hipLaunchCooperativeKernel(const void *, dim3, dim3, void **, unsigned, hipStream_t);
hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t, void *, size_t, hipStream_t);
hipError_t hipMemcpyAsync(void *, const void *, size_t, hipMemcpyKind, hipStream_t);
hipError_t hipMemcpyWithStream(void *, const void *, size_t, hipMemcpyKind, hipStream_t);
hipError_t hipMemcpyAsync_spt(void *, const void *, size_t, hipMemcpyKind, hipStream_t);
hipError_t hipMemsetD32Async(hipDeviceptr_t, int, size_t, hipStream_t);
hipError_t hipMemsetAsync_spt(void *, int, size_t, hipStream_t);
hipError_t hipLaunchHostFunc(hipStream_t, hipHostFn_t, void *);
hipError_t hipLaunchHostFunc_spt(hipStream_t, hipHostFn_t, void *);
hipError_t hipStreamBeginCapture(hipStream_t, hipStreamCaptureMode);
hipError_t hipStreamEndCapture(hipStream_t, hipGraph_t *);
hipError_t hipGraphInstantiate(hipGraphExec_t *, hipGraph_t, void *, char *, size_t);
hipError_t hipGraphLaunch(hipGraphExec_t, hipStream_t);
hipError_t hipGraphLaunch_spt(hipGraphExec_t, hipStream_t);
hipError_t hipStreamSynchronize_spt(hipStream_t) __attribute__((weak));
hipError_t hipGetProcAddress(const char *, void **, int, uint64_t, hipDriverProcAddressQueryResult *);
hipError_t hipDeviceGetStreamPriorityRange(int *, int *);
hipError_t hipEventCreateWithFlags(hipEvent_t *, unsigned);
hipError_t hipEventRecord(hipEvent_t, hipStream_t);
hipError_t hipEventDestroy(hipEvent_t);
hipError_t hipStreamWaitEvent(hipStream_t, hipEvent_t, unsigned);
hipError_t hipStreamWaitValue32(hipStream_t, void *, uint32_t, unsigned, uint32_t);
hipError_t hipStreamWriteValue32(hipStream_t, void *, uint32_t, unsigned);

typedef hipError_t (*module_launch_t)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, hipStream_t, void **, void **);
typedef hipError_t (*launch_t)(const void *, dim3, dim3, void **, size_t, hipStream_t);
typedef hipError_t (*memset_t)(void *, int, size_t, hipStream_t);
static module_launch_t g_module_launch; /* --via dlsym, getproc */
static launch_t g_launch;               /* --via getproc --stream spt */
static memset_t g_memset;               /* --via getproc */

static struct {
    long tasks;
    double seconds;
    int kernels;
    unsigned us;
    const char *stream, *via, *module;
    int check, fail, linger_ms, spt, vendor, with_stream;
    int slow_every;
    unsigned slow_us;
    int link_ms; /* -1: no --link */
    int value_link;
} O = {10, 0, 2, 1000, "new", "module", NULL, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(const char *what, hipError_t e)
{
    fprintf(stderr, "xq-hip-app: %s failed: %d\n", what, e);
    exit(1);
}
#define H(call)                                                                                     \
    do {                                                                                            \
        hipError_t e_ = (call);                                                                     \
        if (e_ != hipSuccess) die(#call, e_);                                                       \
    } while (0)

static void host_fn(void *p) { ++*(int *)p; }

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static hipFunction_t g_spin;
static hipStream_t g_s;

/* --slow-every N --slow-us U: every Nth kernel the app launches runs U us longer (work that runs
 * past the estimates its stream has learnt: the arrival guard's pad, test_hip_gate.c) */
static uint64_t kernel_us(void)
{
    static unsigned long made;
    made++;
    return O.slow_every > 0 && made % (unsigned long)O.slow_every == 0 ? (uint64_t)O.us + O.slow_us : O.us;
}

static void spin(uint64_t us)
{
    void *args[] = {&us};
    dim3 one = {1, 1, 1};
    if (!strcmp(O.via, "module")) H(hipModuleLaunchKernel(g_spin, 1, 1, 1, 1, 1, 1, 0, g_s, args, NULL));
    else if (!strcmp(O.via, "kernel") && O.spt) H(hipLaunchKernel_spt(g_spin, one, one, args, 0, g_s));
    else if (!strcmp(O.via, "kernel") || !strcmp(O.via, "graph")) H(hipLaunchKernel(g_spin, one, one, args, 0, g_s));
    else if (!strcmp(O.via, "ext")) H(hipExtLaunchKernel(g_spin, one, one, args, 0, g_s, NULL, NULL, 0));
    else if (!strcmp(O.via, "extmodule"))
        H(hipExtModuleLaunchKernel(g_spin, 1, 1, 1, 1, 1, 1, 0, g_s, args, NULL, NULL, NULL, 0));
    else if (!strcmp(O.via, "coop")) H(hipLaunchCooperativeKernel(g_spin, one, one, args, 0, g_s));
    else if (g_launch) H(g_launch(g_spin, one, one, args, 0, g_s));
    else if (g_module_launch) H(g_module_launch(g_spin, 1, 1, 1, 1, 1, 1, 0, g_s, args, NULL));
    else {
        fprintf(stderr, "xq-hip-app: --via %s: allowed module, kernel, ext, extmodule, coop, graph, dlsym, getproc\n",
                O.via);
        exit(2);
    }
}

/* --link MS (see the top) */
static int link_streams(void)
{
    int least = 0, greatest = 0;
    hipStream_t a = g_s, b;
    hipEvent_t ev;
    H(hipDeviceGetStreamPriorityRange(&least, &greatest));
    H(hipStreamCreateWithPriority(&b, 0, greatest));
    H(hipEventCreateWithFlags(&ev, hipEventDisableTiming));
    double t0 = now_s();
    for (int k = 0; k < O.kernels; k++) spin(O.us);
    H(hipEventRecord(ev, a));
    usleep((useconds_t)O.link_ms * 1000);
    H(hipStreamWaitEvent(b, ev, 0));
    g_s = b;
    for (int k = 0; k < O.kernels; k++) spin(O.us);
    g_s = a;
    H(hipStreamSynchronize(b));
    H(hipStreamSynchronize(a));
    double ms = (now_s() - t0) * 1e3;
    H(hipEventDestroy(ev));
    H(hipStreamDestroy(b));
    printf("{\"tasks\":1,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"mean_ms\":%.3f,\"check\":\"off\",\"pid\":%d}\n", ms, ms, ms,
           (int)getpid());
    return 0;
}

/* --value-link (see the top) */
static int value_link(void)
{
    static uint32_t word;
    hipStream_t a = g_s, b;
    H(hipStreamCreate(&b));
    spin(1);
    H(hipStreamSynchronize(a));
    g_s = b;
    spin(1);
    H(hipStreamSynchronize(b));
    g_s = a;
    double t0 = now_s();
    H(hipStreamWaitValue32(a, &word, 1, 1 /* hipStreamWaitValueEq */, 0xffffffffu));
    spin(1000);
    usleep(50000); /* the node sees A busy */
    g_s = b;
    spin(1000);
    H(hipStreamWriteValue32(b, &word, 1, 0));
    g_s = a;
    H(hipStreamSynchronize(a));
    H(hipStreamSynchronize(b));
    double ms = (now_s() - t0) * 1e3;
    H(hipStreamDestroy(b));
    printf("{\"tasks\":1,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"mean_ms\":%.3f,\"check\":\"off\",\"pid\":%d}\n", ms, ms, ms,
           (int)getpid());
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: xq-hip-app --module FILE [--tasks N] [--seconds S] [--kernels K] [--us T]\n"
                    "  [--stream new|default|ptds|spt|prio:<p>] [--via module|kernel|ext|extmodule|coop|graph|dlsym|getproc]\n"
                    "  [--check] [--fail N] [--vendor N] [--copy-with-stream] [--linger-ms M] [--slow-every N --slow-us U]\n"
                    "  [--link MS] [--value-link]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int tasks_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (!strcmp(a, name) && (v || (usage(), 0)) && ++i)
        if (OPT("--tasks")) O.tasks = atol(v), tasks_set = 1;
        else if (OPT("--seconds")) O.seconds = atof(v);
        else if (OPT("--kernels")) O.kernels = atoi(v);
        else if (OPT("--us")) O.us = (unsigned)atol(v);
        else if (OPT("--stream")) O.stream = v;
        else if (OPT("--via")) O.via = v;
        else if (OPT("--module")) O.module = v;
        else if (OPT("--fail")) O.fail = atoi(v);
        else if (OPT("--linger-ms")) O.linger_ms = atoi(v);
        else if (OPT("--vendor")) O.vendor = atoi(v);
        else if (OPT("--slow-every")) O.slow_every = atoi(v);
        else if (OPT("--slow-us")) O.slow_us = (unsigned)atol(v);
        else if (OPT("--link")) O.link_ms = atoi(v);
        else if (!strcmp(a, "--check")) O.check = 1;
        else if (!strcmp(a, "--value-link")) O.value_link = 1;
        else if (!strcmp(a, "--copy-with-stream")) O.with_stream = 1;
        else usage();
    }
    if (O.seconds > 0 && !tasks_set) O.tasks = 0;
    if (!O.module) usage();
    char blob[4096] = "";
    FILE *f = fopen(O.module, "r");
    if (!f || !fread(blob, 1, sizeof blob - 1, f)) {
        fprintf(stderr, "xq-hip-app: cannot read %s\n", O.module);
        return 2;
    }
    fclose(f);
    H(hipSetDevice(0));
    hipModule_t m;
    H(hipModuleLoadData(&m, blob));
    H(hipModuleGetFunction(&g_spin, m, "spin"));
    int own = 0;
    if (!strcmp(O.stream, "new")) {
        H(hipStreamCreate(&g_s));
        own = 1;
    } else if (!strncmp(O.stream, "prio:", 5)) {
        H(hipStreamCreateWithPriority(&g_s, 0, atoi(O.stream + 5)));
        own = 1;
    }
    else if (!strcmp(O.stream, "default")) g_s = NULL;
    else if (!strcmp(O.stream, "ptds")) g_s = hipStreamPerThread;
    else if (!strcmp(O.stream, "spt")) g_s = NULL, O.spt = 1, O.via = strcmp(O.via, "module") ? O.via : "kernel";
    else usage();
    for (int i = 0; i < O.fail; i++) { /* a launch shape the runtime refuses */
        uint64_t us = 1;
        void *args[] = {&us};
        if (hipModuleLaunchKernel(g_spin, 0, 1, 1, 1, 1, 1, 0, g_s, args, NULL) == hipSuccess) {
            fprintf(stderr, "xq-hip-app: a zero grid was accepted\n");
            return 1;
        }
    }
    if (!strcmp(O.via, "dlsym")) {
        void *h = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL), *libc = dlopen("libc.so.6", RTLD_NOW);
        (void)dlerror();
        if (!h || !(*(void **)&g_module_launch = dlsym(h, "hipModuleLaunchKernel"))) {
            fprintf(stderr, "xq-hip-app: dlsym of hipModuleLaunchKernel: %s\n", dlerror());
            return 1;
        }
        const char *err = dlerror(); /* the POSIX idiom: clear, look up, ask */
        if (err) {
            fprintf(stderr, "xq-hip-app: dlsym found hipModuleLaunchKernel but dlerror says %s\n", err);
            return 1;
        }
        if (dlsym(h, "hipNoSuchEntryPoint") || !libc || dlsym(libc, "getpid") != (void *)getpid) {
            fprintf(stderr, "xq-hip-app: dlsym did not pass an unknown name or libc's getpid through\n");
            return 1;
        }
        char path[4096];
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 40);
        path[n > 0 ? n : 0] = 0;
        char *slash = strrchr(path, '/');
        strcpy(slash ? slash + 1 : path, "so5/libamdhip64.so.5");
        void *other = dlopen(path, RTLD_NOW | RTLD_LOCAL), *f = other ? dlsym(other, "hipModuleLaunchKernel") : NULL;
        if (!f || f == (void *)hipModuleLaunchKernel || f == (void *)g_module_launch) {
            fprintf(stderr, "xq-hip-app: %s: its hipModuleLaunchKernel %p is not its own\n", path, f);
            return 1;
        }
    } else if (!strcmp(O.via, "getproc")) {
        hipDriverProcAddressQueryResult st = -1;
        if (O.spt) H(hipGetProcAddress("hipLaunchKernel", (void **)&g_launch, 600, 2, &st));
        else H(hipGetProcAddress("hipModuleLaunchKernel", (void **)&g_module_launch, 600, 0, &st));
        H(hipGetProcAddress("hipMemsetAsync", (void **)&g_memset, 600, O.spt ? 2 : 0, &st));
    }
    int (*vendor_run)(hipStream_t, hipFunction_t, int, unsigned) = NULL;
    if (O.vendor) {
        char path[4096];
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 40);
        path[n > 0 ? n : 0] = 0;
        char *slash = strrchr(path, '/');
        strcpy(slash ? slash + 1 : path, "libxq-hipvendor.so");
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h || !(*(void **)&vendor_run = dlsym(h, "xq_vendor_run"))) {
            fprintf(stderr, "xq-hip-app: %s: %s\n", path, dlerror());
            return 1;
        }
    }
    if (O.link_ms >= 0) return link_streams();
    if (O.value_link) return value_link();
    hipGraphExec_t exec = NULL;
    if (!strcmp(O.via, "graph")) {
        hipGraph_t g;
        H(hipStreamBeginCapture(g_s, 0));
        for (int k = 0; k < O.kernels; k++) spin(O.us);
        H(hipStreamEndCapture(g_s, &g));
        H(hipGraphInstantiate(&exec, g, NULL, NULL, 0));
    }
    enum { N = 64 };
    static uint32_t host_in[N], dev[N], host_out[N];
    static double lat[100000];
    long nlat = 0;
    int bad = 0, fn_runs = 0;
    double t_end = O.seconds > 0 ? now_s() + O.seconds : 0;
    for (long t = 0; (O.tasks && t < O.tasks) || (!O.tasks && now_s() < t_end); t++) {
        double t0 = now_s();
        for (int i = 0; i < N; i++) host_in[i] = (uint32_t)(t * 1000 + i);
        if (g_memset) H(g_memset(dev, 0, sizeof dev, O.spt ? NULL : g_s));
        if (O.spt) {
            if (!g_memset) H(hipMemsetAsync_spt(dev, 0, sizeof dev, NULL));
            H(hipMemcpyAsync_spt(dev, host_in, sizeof dev, 1, NULL));
        } else {
            if (!g_memset) H(hipMemsetD32Async(dev, 7, N, g_s));
            H(hipMemcpyHtoDAsync(dev, host_in, sizeof dev, g_s));
        }
        if (exec) H(O.spt ? hipGraphLaunch_spt(exec, g_s) : hipGraphLaunch(exec, g_s));
        else
            for (int k = 0; k < O.kernels; k++) spin(kernel_us());
        if (vendor_run && vendor_run(g_s, g_spin, O.vendor, O.us)) die("the vendor library", -1);
        if (O.with_stream) H(hipMemcpyWithStream(host_out, dev, sizeof dev, 2, g_s));
        else H(O.spt ? hipMemcpyAsync_spt(host_out, dev, sizeof dev, 2, NULL) : hipMemcpyAsync(host_out, dev, sizeof dev, 2, g_s));
        H(O.spt ? hipLaunchHostFunc_spt(NULL, host_fn, &fn_runs) : hipLaunchHostFunc(g_s, host_fn, &fn_runs));
        H(O.spt && hipStreamSynchronize_spt ? hipStreamSynchronize_spt(NULL)
                                           : hipStreamSynchronize(O.spt ? hipStreamPerThread : g_s));
        for (int i = 0; i < N; i++) bad |= host_out[i] != host_in[i];
        if (nlat < 100000) lat[nlat++] = (now_s() - t0) * 1e3;
    }
    bad |= fn_runs != nlat;
    if (O.linger_ms) usleep((useconds_t)O.linger_ms * 1000); /* the stream stays a queue meanwhile */
    if (own) H(hipStreamDestroy(g_s));
    qsort(lat, (size_t)nlat, sizeof lat[0], cmp);
    double sum = 0;
    for (long i = 0; i < nlat; i++) sum += lat[i];
    printf("{\"tasks\":%ld,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"mean_ms\":%.3f,\"check\":\"%s\",\"pid\":%d}\n", nlat,
           nlat ? lat[nlat / 2] : 0, nlat ? lat[(nlat * 99) / 100 < nlat ? (nlat * 99) / 100 : nlat - 1] : 0,
           nlat ? sum / nlat : 0, O.check ? (bad ? "bad" : "ok") : "off", (int)getpid());
    return O.check && bad ? 3 : 0;
}
