// Probe (issue 13): what a level-2 guard (cuStreamWaitValue32 on a device word) costs the device
// per command when each command is also bracketed by two timing events, as the CUDA adapter
// launches them, and whether the guard's place (before or after the start event) matters.
// Build: nvcc -O2 -o guardcost guardcost.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)
#define DK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { fprintf(stderr, "%s:%d %s failed %d\n", __FILE__, __LINE__, #x, (int) r_); exit(1);} } while (0)

__global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

int main() {
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int blocks = sms * 8;
    CK(cudaFree(0));
    CUdeviceptr flag; DK(cuMemAlloc(&flag, 64)); DK(cuMemsetD32(flag, 0, 16));
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaStream_t s2; CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    const int N = 2000, POOL = 64;
    cudaEvent_t ev[POOL]; for (int i = 0; i < POOL; i++) CK(cudaEventCreate(&ev[i]));
    cudaEvent_t nt[POOL]; for (int i = 0; i < POOL; i++) CK(cudaEventCreateWithFlags(&nt[i], cudaEventDisableTiming));
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    const char *names[] = {"K", "E K E", "W E K E (XQ: guard before the start event)", "E W K E (guard after the start event)", "W K",
                           "K E (end event only)", "K e (end event without timing)", "W K E", "W K e",
                           "E K E on two streams in turn (no order between them)"};
    const int V = 10;
    for (int rep = 0; rep < 2; rep++)
    for (unsigned T : {100u, 500u})
    for (int v = 0; v < V; v++) {
        int n = T == 500 ? N / 5 : N;
        CK(cudaStreamSynchronize(s));
        CK(cudaStreamSynchronize(s2));
        CK(cudaEventRecord(a, s));
        if (v == 9) { CK(cudaEventRecord(ev[0], s)); CK(cudaStreamWaitEvent(s2, ev[0], 0)); }
        for (int i = 0; i < n; i++) {
            cudaStream_t q = v == 9 && (i & 1) ? s2 : s;
            bool ev2 = v == 1 || v == 2 || v == 3 || v == 9;
            if (v == 2 || v == 4 || v == 7 || v == 8) DK(cuStreamWaitValue32((CUstream) q, flag, 0, CU_STREAM_WAIT_VALUE_EQ));
            if (ev2) CK(cudaEventRecord(ev[(2 * i) % POOL], q));
            if (v == 3) DK(cuStreamWaitValue32((CUstream) q, flag, 0, CU_STREAM_WAIT_VALUE_EQ));
            spin<<<blocks, 256, 0, q>>>(T * 1000ULL);
            if (ev2 || v == 5 || v == 7) CK(cudaEventRecord(ev[(2 * i + 1) % POOL], q));
            if (v == 6 || v == 8) CK(cudaEventRecord(nt[i % POOL], q));
        }
        if (v == 9) { CK(cudaEventRecord(ev[1], s2)); CK(cudaStreamWaitEvent(s, ev[1], 0)); }
        CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b));
        printf("T=%u %-45s %.3f us per command (+%.2f us over T)\n", T, names[v], ms * 1000 / n, ms * 1000 / n - T);
    }
    return 0;
}
