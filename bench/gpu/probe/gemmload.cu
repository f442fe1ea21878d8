// Probe (issue 40): a best-effort GEMM load for bench/gpu/blocked-probe.sh: cuBLAS SGEMM (fp32,
// no TF32) of n x n back to back on a stream of the whole device, or of a green context of SMS
// multiprocessors (the way the interposer narrows a process), for SECS seconds; prints the mean
// time a GEMM took. With CUDA_MPS_ACTIVE_THREAD_PERCENTAGE set by the caller it is an MPS client
// capped that way instead.
// Usage: gemmload SMS N SECS   (SMS 0: no green context; GREEN_SPLIT=cluster: the device split for
//                               the largest thread clusters, as the interposer's XQ_NARROW_SPLIT=cluster)
//        gemmload lc MODE SECS  the other side: every 10 ms a 50 us kernel of 64 blocks, synchronized,
//                               launched plain, with a cluster of 2 (MODE cluster; clusterN: of N) or with
//                               programmatic stream serialization (MODE pdl), cooperative (coop: 64
//                               blocks; coopfull: as many as the device holds at once; wide: that grid, not
//                               cooperative), or plain after a 4 MiB
//                               driver memset (memset), device-to-device copy (dtod) or host-to-device
//                               copy (htod) on its stream; MODE+dev (plain+dev, memset+dev):
//                               cudaDeviceSynchronize instead of the stream's; prints P50 / max latency
// Build: nvcc -O2 -o gemmload gemmload.cu -lcublas -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <signal.h>

static volatile sig_atomic_t stop;
static void on_int(int sig) { (void) sig; stop = 1; }

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)
#define DK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *m_ = ""; cuGetErrorString(r_, &m_); fprintf(stderr, "%s:%d %s failed %d %s\n", __FILE__, __LINE__, #x, (int) r_, m_); exit(1);} } while (0)
/* GREEN_SPLIT=cluster: split with CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE (groups for the
 * largest clusters), as the interposer's XQ_NARROW_SPLIT=cluster does */
static unsigned split_flags(void) {
    const char *v = getenv("GREEN_SPLIT");
    return v && !strcmp(v, "cluster") ? CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE : 0;
}
#define BK(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "%s:%d %s: cublas %d\n", __FILE__, __LINE__, #x, (int) s_); exit(1);} } while (0)

static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

__global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

static int cmp(const void *a, const void *b) { double x = *(const double *) a, y = *(const double *) b; return x < y ? -1 : x > y; }

static int lc(const char *mode_arg, double secs) {
    // MODE+dev: synchronize the device (cudaDeviceSynchronize, what torch.cuda.synchronize does)
    // instead of the stream
    char mode[64]; snprintf(mode, sizeof mode, "%s", mode_arg);
    char *plus = strstr(mode, "+dev");
    int devsync = plus != NULL;
    if (plus) *plus = 0;
    CK(cudaFree(0));
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(64); cfg.blockDim = dim3(128); cfg.stream = s;
    cudaLaunchAttribute at[1];
    if (!strncmp(mode, "cluster", 7)) { /* cluster: of 2; clusterN: of N (4, 8: portable sizes) */
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = mode[7] ? atoi(mode + 7) : 2; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
        cfg.attrs = at; cfg.numAttrs = 1;
    } else if (!strcmp(mode, "coop") || !strcmp(mode, "coopfull")) {
        // a cooperative grid (all its blocks resident at once): 64 blocks, or as many as the whole
        // device holds at once (coopfull), as persistent library kernels size theirs
        at[0].id = cudaLaunchAttributeCooperative;
        at[0].val.cooperative = 1;
        cfg.attrs = at; cfg.numAttrs = 1;
        if (!strcmp(mode, "coopfull")) {
            int per = 0, sms = 0;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, spin, 128, 0));
            CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
            cfg.gridDim = dim3(per * sms);
        }
    } else if (!strcmp(mode, "wide")) {
        // the same grid as coopfull, not cooperative: blocks start as room frees
        int per = 0, sms = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, spin, 128, 0));
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        cfg.gridDim = dim3(per * sms);
    } else if (!strcmp(mode, "pdl")) {
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = at; cfg.numAttrs = 1;
    }
    unsigned long long ns = 50000;
    // memset / dtod / htod: a driver memset, a device-to-device or a host-to-device copy of 4 MiB
    // before the kernel, on the same stream (what a framework's allocator or cuDNN's workspace does)
    int op = !strcmp(mode, "memset") ? 1 : !strcmp(mode, "dtod") ? 2 : !strcmp(mode, "htod") ? 3 : 0;
    size_t nb = 4 << 20;
    void *d1, *d2, *h;
    CK(cudaMalloc(&d1, nb)); CK(cudaMalloc(&d2, nb)); CK(cudaMallocHost(&h, nb));
    static double lat[100000]; int n = 0;
    double t0 = now(), next = t0;
    while (now() - t0 < secs && n < 100000) {
        double a = now();
        if (op == 1) CK(cudaMemsetAsync(d1, 0, nb, s));
        if (op == 2) CK(cudaMemcpyAsync(d2, d1, nb, cudaMemcpyDeviceToDevice, s));
        if (op == 3) CK(cudaMemcpyAsync(d1, h, nb, cudaMemcpyHostToDevice, s));
        CK(cudaLaunchKernelEx(&cfg, spin, ns));
        if (devsync) CK(cudaDeviceSynchronize()); else CK(cudaStreamSynchronize(s));
        lat[n++] = (now() - a) * 1e3;
        next += 0.010;
        while (now() < next) { }
    }
    qsort(lat, n, sizeof(double), cmp);
    printf("lc %s%s: %d kernels of %u x 50 us, latency P50 %.3f ms, P99 %.3f ms, max %.3f ms\n", mode, devsync ? " (device synchronize)" : "", n, cfg.gridDim.x, lat[n / 2],
           lat[n * 99 / 100], lat[n - 1]);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: gemmload SMS N SECS | gemmload lc plain|cluster|pdl SECS\n"); return 2; }
    if (!strcmp(argv[1], "lc")) return lc(argv[2], atof(argv[3]));
    int nsm = atoi(argv[1]), n = atoi(argv[2]);
    double secs = atof(argv[3]);
    CK(cudaFree(0));
    cudaStream_t s;
    if (nsm > 0) {
        CUdevice dev; DK(cuDeviceGet(&dev, 0));
        CUdevResource all, part[1], rest; unsigned groups = 1;
        DK(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
        DK(cuDevSmResourceSplitByCount(part, &groups, &all, &rest, split_flags(), nsm));
        CUdevResourceDesc desc; DK(cuDevResourceGenerateDesc(&desc, &part[0], 1));
        CUgreenCtx g; DK(cuGreenCtxCreate(&g, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
        CUstream gs; DK(cuGreenCtxStreamCreate(&gs, g, CU_STREAM_NON_BLOCKING, 0));
        s = (cudaStream_t) gs;
        fprintf(stderr, "gemmload: green context of %u SMs of %u (alignment %u)%s\n", part[0].sm.smCount, all.sm.smCount,
                all.sm.smCoscheduledAlignment, split_flags() ? ", split for clusters" : "");
    } else {
        CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    }
    float *a, *b, *c;
    size_t bytes = (size_t) n * n * sizeof(float);
    CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes)); CK(cudaMalloc(&c, bytes));
    CK(cudaMemset(a, 0, bytes)); CK(cudaMemset(b, 0, bytes));
    cublasHandle_t h; BK(cublasCreate(&h)); BK(cublasSetStream(h, s));
    BK(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH)); // fp32 throughout: long kernels, as the family's gemm
    const float one = 1.0f, zero = 0.0f;
    CK(cudaDeviceSynchronize());
    double t0 = now();
    long done = 0;
    printf("READY\n"); fflush(stdout);
    signal(SIGINT, on_int);
    while (!stop && now() - t0 < secs) {
        for (int i = 0; i < 2; i++) BK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
        CK(cudaStreamSynchronize(s));
        done += 2;
    }
    double t = now() - t0;
    printf("gemmload: %ld GEMMs of n=%d in %.2f s, %.1f ms each, green %d SMs, MPS %% %s\n", done, n, t, t / done * 1e3, nsm,
           getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") ? getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") : "-");
    return 0;
}
