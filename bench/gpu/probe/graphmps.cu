// Probe (issue 40): what MPS does to a chain of kernels on the device, launched one by one on a
// stream or replayed as a CUDA graph. Session 84 found a ResNet-50 CUDA graph's device time 7 %
// longer as the only client of a plain MPS daemon than bare (1.52 against 1.42 ms), with its host
// part unchanged. Run bare and as an MPS client (bench/gpu/graph-mps.sh does both, alternated):
// if MPS's cost grows with the chain's length and not with its kernels' length, it is paid per
// kernel boundary (the device's dispatch of each next kernel), not in the kernels themselves.
// Each kernel spins SPIN_NS nanoseconds on BLOCKS blocks of 128 threads (0: one block per
// multiprocessor), each the next one's input (a chain, as a model's layers). Per iteration: the
// chain made once, then synchronized; timed by events around it (the device's part) and by the
// host's clock (launch to the synchronize's return).
// MEM_KB > 0 (session 85: ~100 ns a boundary was too little for the graph's 7 %): each kernel
// copies MEM_KB KiB from the previous kernel's output instead of spinning (memory-bound kernels,
// past the L2 at 65536), to see whether MPS costs a kernel that moves memory more.
// Prints one JSON line per way (stream, graph): n, spin_ns, blocks, mem_kb, dev_p50_us, dev_p90_us, host_p50_us.
// Build: nvcc -O2 -o graphmps graphmps.cu      Run: graphmps N SPIN_NS [BLOCKS] [ITERS] [MEM_KB]
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <algorithm>
#include <vector>

__device__ __forceinline__ unsigned long long gtime() { // the device's nanosecond timer
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin(const int *in, int *out, long long ns) {
    unsigned long long t0 = gtime();
    while ((long long)(gtime() - t0) < ns) { }
    if (threadIdx.x == 0) out[blockIdx.x] = in[blockIdx.x] + 1;
}

__global__ void copyk(const float4 *in, float4 *out, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        v.x += 1.0f;
        out[i] = v;
    }
}

static inline double now_us() {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

#define CK(call)                                                                                  \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "graphmps: %s: %s\n", #call, cudaGetErrorString(e_));               \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

static double pct(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, (size_t)(q / 100.0 * (v.size() - 1) + 0.5))];
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 160;
    long long spin_ns = argc > 2 ? atoll(argv[2]) : 5000;
    int blocks = argc > 3 ? atoi(argv[3]) : 0;
    int iters = argc > 4 ? atoi(argv[4]) : 400;
    long long mem_kb = argc > 5 ? atoll(argv[5]) : 0;
    if (n < 1 || n > 4096 || spin_ns < 0 || blocks < 0 || iters < 10 || mem_kb < 0 || mem_kb > 4 * 1024 * 1024) {
        fprintf(stderr, "graphmps: N 1-4096, SPIN_NS >= 0, BLOCKS >= 0, ITERS >= 10, MEM_KB 0-4194304 (got %d %lld %d %d %lld)\n", n,
                spin_ns, blocks, iters, mem_kb);
        return 2;
    }
    int dev = 0, sms = 0;
    CK(cudaSetDevice(dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (blocks == 0) blocks = sms;
    int *buf[2];
    CK(cudaMalloc(&buf[0], blocks * sizeof(int)));
    CK(cudaMalloc(&buf[1], blocks * sizeof(int)));
    CK(cudaMemset(buf[0], 0, blocks * sizeof(int)));
    size_t vecs = (size_t)mem_kb * 1024 / sizeof(float4);
    float4 *mem[2] = {nullptr, nullptr};
    if (vecs > 0) {
        CK(cudaMalloc(&mem[0], vecs * sizeof(float4)));
        CK(cudaMalloc(&mem[1], vecs * sizeof(float4)));
        CK(cudaMemset(mem[0], 0, vecs * sizeof(float4)));
    }
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    auto chain = [&]() {
        for (int k = 0; k < n; k++) {
            if (vecs > 0) copyk<<<blocks, 128, 0, s>>>(mem[k & 1], mem[(k + 1) & 1], vecs);
            else spin<<<blocks, 128, 0, s>>>(buf[k & 1], buf[(k + 1) & 1], spin_ns);
        }
    };
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    chain();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphUpload(ge, s));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int way = 0; way < 2; way++) {
        std::vector<double> dev_us, host_us;
        for (int i = 0; i < iters + 20; i++) { // the first 20 warm up
            double h0 = now_us();
            CK(cudaEventRecord(a, s));
            if (way == 0) chain();
            else CK(cudaGraphLaunch(ge, s));
            CK(cudaEventRecord(b, s));
            CK(cudaStreamSynchronize(s));
            double h1 = now_us();
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (i >= 20) {
                dev_us.push_back(ms * 1000.0);
                host_us.push_back(h1 - h0);
            }
        }
        printf("{\"way\":\"%s\",\"n\":%d,\"spin_ns\":%lld,\"blocks\":%d,\"mem_kb\":%lld,\"sms\":%d,\"dev_p50_us\":%.2f,"
               "\"dev_p90_us\":%.2f,\"host_p50_us\":%.2f}\n",
               way == 0 ? "stream" : "graph", n, spin_ns, blocks, mem_kb, sms, pct(dev_us, 50), pct(dev_us, 90), pct(host_us, 50));
        fflush(stdout);
    }
    return 0;
}
