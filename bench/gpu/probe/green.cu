// Probe (issue 40): can a process's launches be moved, launch by launch, onto part of the device
// (a green context) while it runs as an MPS client on the whole device, and what does it cost?
// One binary, several roles (bench/gpu/green-probe.sh runs them inside an MPS server):
//   green check            kernels loaded by the runtime, by cuModuleLoad (as Triton does) and a
//                          CUDA graph, each launched into a green context's stream
//   green overhead N       host cost per launch: direct, and joined through a green stream
//                          (event on the stream, the green stream waits, launch, back)
//   green be MODE SECS     best-effort load, back to back: wide spin kernels on the whole device
//                          (MODE full), on a green context of N SMs (green:N), joined (join:N),
//                          or switching between both every 20 ms (switch:N)
//                          or the I-th of K equal groups (part:I:K: do two processes' groups overlap?)
//   green lc SECS WIDTH    latency-critical load: every 5 ms a kernel of WIDTH blocks x 50 us,
//                          synchronized; prints P50/P99 latency
// Build: nvcc -O2 -o green green.cu -lcuda   (spin.ptx beside it for `check`: nvcc -ptx spin.cu)
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)
#define DK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *m_ = ""; cuGetErrorString(r_, &m_); fprintf(stderr, "%s:%d %s failed %d %s\n", __FILE__, __LINE__, #x, (int) r_, m_); exit(1);} } while (0)

__global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
__global__ void empty() {}

static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

// the index-th of groups green contexts of nsm SMs each (index 0, groups 1: the first nsm SMs)
static CUstream green_stream_part(int nsm, int index, int groups, int *got) {
    CUdevice dev; DK(cuDeviceGet(&dev, 0));
    CUdevResource all, part[16], rest; unsigned n = groups;
    DK(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
    DK(cuDevSmResourceSplitByCount(part, &n, &all, &rest, 0, nsm));
    if ((int) n <= index) { fprintf(stderr, "only %u groups of %d\n", n, nsm); exit(1); }
    fprintf(stderr, "sizeof(CUdevResource) %zu, offsetof smCount %zu; %u groups made\n", sizeof(CUdevResource),
            (size_t) ((char *) &all.sm.smCount - (char *) &all), n);
    CUdevResourceDesc desc; DK(cuDevResourceGenerateDesc(&desc, &part[index], 1));
    CUgreenCtx g; DK(cuGreenCtxCreate(&g, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    CUstream s; DK(cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0));
    if (got) *got = part[index].sm.smCount;
    fprintf(stderr, "green context: group %d: %u SMs of %u (min partition %u, alignment %u)\n", index, part[index].sm.smCount,
            all.sm.smCount, all.sm.minSmPartitionSize, all.sm.smCoscheduledAlignment);
    return s;
}

static CUstream green_stream(int nsm, int *got) { return green_stream_part(nsm, 0, 1, got); }

static CUfunction fn_of(const void *sym) { cudaFunction_t f; CK(cudaGetFuncBySymbol(&f, sym)); return (CUfunction) f; }

// one launch on s, or joined: s -> g -> s through two events, as an interposer would
static void launch(CUfunction f, unsigned grid, unsigned block, void **args, CUstream s, CUstream g, CUevent e1, CUevent e2) {
    if (!g) { DK(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, args, NULL)); return; }
    DK(cuEventRecord(e1, s)); DK(cuStreamWaitEvent(g, e1, 0));
    DK(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, g, args, NULL));
    DK(cuEventRecord(e2, g)); DK(cuStreamWaitEvent(s, e2, 0));
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: green check | overhead N | be MODE SECS | lc SECS WIDTH\n"); return 2; }
    CK(cudaFree(0));
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const char *mps = getenv("CUDA_MPS_PIPE_DIRECTORY");
    fprintf(stderr, "%s: %d SMs, MPS %s, active thread %% %s\n", argv[1], sms, mps ? mps : "(none)",
            getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") ? getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") : "-");
    CUevent e1, e2; DK(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING)); DK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    if (!strcmp(argv[1], "check")) {
        CUstream g = green_stream(16, NULL);
        unsigned long long ns = 1000; void *args[] = {&ns};
        launch(fn_of((const void *) spin), 64, 128, args, (CUstream) s, g, e1, e2);
        CK(cudaStreamSynchronize(s)); printf("check runtime kernel into green stream: ok\n");
        spin<<<64, 128, 0, (cudaStream_t) g>>>(1000); CK(cudaStreamSynchronize((cudaStream_t) g));
        printf("check <<<>>> into green stream: ok\n");
        CUmodule m; CUresult r = cuModuleLoad(&m, argc > 2 ? argv[2] : "spin.ptx");
        if (r == CUDA_SUCCESS) {
            CUfunction f; DK(cuModuleGetFunction(&f, m, "spin"));
            r = cuLaunchKernel(f, 64, 1, 1, 128, 1, 1, 0, g, args, NULL);
            CUresult r2 = cuStreamSynchronize(g);
            printf("check cuModuleLoad function into green stream: launch %d sync %d\n", (int) r, (int) r2);
        } else printf("check cuModuleLoad: no module (%d)\n", (int) r);
        cudaGraph_t gr; cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        spin<<<64, 128, 0, s>>>(1000); spin<<<64, 128, 0, s>>>(1000);
        CK(cudaStreamEndCapture(s, &gr)); CK(cudaGraphInstantiate(&ge, gr, 0));
        r = cuGraphLaunch((CUgraphExec) ge, g); CUresult r2 = cuStreamSynchronize(g);
        printf("check graph into green stream: launch %d sync %d\n", (int) r, (int) r2);
        // a memory allocation of the primary context used by a kernel in the green context
        int *d; CK(cudaMalloc(&d, 4)); CK(cudaMemset(d, 0, 4));
        printf("check done\n");
        return 0;
    }
    if (!strcmp(argv[1], "overhead")) {
        int n = argc > 2 ? atoi(argv[2]) : 100000;
        CUstream g = green_stream(sms / 2 / 8 * 8, NULL);
        CUfunction f = fn_of((const void *) empty);
        for (int mode = 0; mode < 4; mode++) {
            CK(cudaDeviceSynchronize());
            double t0 = now();
            for (int i = 0; i < n; i++) launch(f, 1, 32, NULL, (CUstream) s, (mode & 1) ? g : NULL, e1, e2);
            double t1 = now();
            CK(cudaStreamSynchronize(s));
            double t2 = now();
            printf("overhead %s: %.2f us per launch on the host, %.2f us per launch until done (%d launches)\n",
                   (mode & 1) ? "joined through the green stream" : "direct", (t1 - t0) / n * 1e6, (t2 - t0) / n * 1e6, n);
        }
        return 0;
    }
    if (!strcmp(argv[1], "be")) {
        const char *mode = argc > 2 ? argv[2] : "full";
        double secs = argc > 3 ? atof(argv[3]) : 3;
        int nsm = strchr(mode, ':') ? atoi(strchr(mode, ':') + 1) : 0, got = 0;
        CUstream g = NULL;
        if (!strncmp(mode, "part:", 5)) { // part:I:K, the I-th of K equal groups
            int index = atoi(mode + 5), groups = atoi(strchr(mode + 5, ':') + 1);
            nsm = sms / groups / 8 * 8;
            g = green_stream_part(nsm, index, groups, &got);
        } else if (nsm) g = green_stream(nsm, &got);
        int join = !strncmp(mode, "join", 4), sw = !strncmp(mode, "switch", 6);
        CUfunction f = fn_of((const void *) spin);
        unsigned long long ns = 200000; void *args[] = {&ns};
        unsigned grid = sms * 4; // 1024-thread blocks: two fit an SM, so two waves on the whole device
        double t0 = now(), end = t0 + secs; long k = 0;
        while (now() < end) {
            int narrow = sw ? ((long) ((now() - t0) / 0.020)) & 1 : 1;
            if (!nsm || !narrow) launch(f, grid, 1024, args, (CUstream) s, NULL, e1, e2);
            else if (join || sw) launch(f, grid, 1024, args, (CUstream) s, g, e1, e2);
            else DK(cuLaunchKernel(f, grid, 1, 1, 1024, 1, 1, 0, g, args, NULL));
            k++;
            if (k % 4 == 0) { CK(cudaStreamSynchronize(s)); if (g) DK(cuStreamSynchronize(g)); }
        }
        CK(cudaStreamSynchronize(s)); if (g) DK(cuStreamSynchronize(g));
        double t = now() - t0;
        printf("be %s (%d SMs): %.1f kernels/s, %.0f blocks/s (whole device alone would be %.0f)\n", mode, nsm ? got : sms, k / t,
               k * grid / t, sms * 2 / (ns * 1e-9));
        return 0;
    }
    if (!strcmp(argv[1], "lc")) {
        double secs = argc > 2 ? atof(argv[2]) : 3;
        int width = argc > 3 ? atoi(argv[3]) : 8;
        CUfunction f = fn_of((const void *) spin);
        unsigned long long ns = 50000; void *args[] = {&ns};
        std::vector<double> lat;
        double end = now() + secs, next = now();
        while (now() < end) {
            while (now() < next) {}
            double a = now();
            launch(f, width, 128, args, (CUstream) s, NULL, e1, e2);
            CK(cudaStreamSynchronize(s));
            lat.push_back((now() - a) * 1e6);
            next += 0.005;
        }
        std::sort(lat.begin(), lat.end());
        printf("lc width %d: %zu requests, P50 %.0f us, P99 %.0f us, max %.0f us\n", width, lat.size(), lat[lat.size() / 2],
               lat[lat.size() * 99 / 100], lat.back());
        return 0;
    }
    fprintf(stderr, "unknown role %s\n", argv[1]);
    return 2;
}
