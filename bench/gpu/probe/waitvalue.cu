// Probe (issue 13): can a CUDA stream be stalled in place with cuStreamWaitValue32 on a host
// flag, i.e. level 2 (deactivate) for CUDA? Measures, on the device: (1) what a wait before
// each kernel costs in throughput, (2) how many already-launched kernels still start after the
// flag is raised, (3) a foreground kernel's latency behind a busy background stream, with and
// without the background stalled, (4) how soon a stalled stream goes on when the flag drops.
// Build: nvcc -O2 -o waitvalue waitvalue.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)
#define DK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_; cuGetErrorString(r_, &s_); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1);} } while (0)

__global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

static double now_us() { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3; }
static void sleep_us(double us) { double end = now_us() + us; while (now_us() < end) {} }

static int blocks;
static volatile uint32_t *flag;
static CUdeviceptr dflag;

static CUdeviceptr dmem;
static cudaStream_t side;
static bool devflag;
static void setflag(uint32_t v) {
    if (devflag) { DK(cuStreamWriteValue32((CUstream) side, dmem, v, 0)); CK(cudaStreamSynchronize(side)); }
    else { *flag = v; __sync_synchronize(); }
}
static void launch(cudaStream_t s, unsigned ns, bool guard) {
    if (guard) DK(cuStreamWaitValue32((CUstream) s, devflag ? dmem : dflag, 0, CU_STREAM_WAIT_VALUE_EQ));
    spin<<<blocks, 256, 0, s>>>(ns);
}

static double pct(std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v[(size_t) ((v.size() - 1) * p)]; }

int main(int argc, char **argv) {
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    blocks = sms * 8;
    CK(cudaFree(0));
    int nor = -1;
    cuDeviceGetAttribute(&nor, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, 0);
    printf("sms %d blocks %d wait_nor %d\n", sms, blocks, nor);
    void *h; DK(cuMemHostAlloc(&h, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    flag = (volatile uint32_t *) h; *flag = 0;
    DK(cuMemHostGetDevicePointer(&dflag, h, 0));
    printf("host %p device 0x%llx\n", h, (unsigned long long) dflag);
    DK(cuMemAlloc(&dmem, 64)); DK(cuMemsetD32(dmem, 0, 16));
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    devflag = argc > 1 && argv[1][0] == 'd';
    printf("flag in %s memory\n", devflag ? "device" : "host");
    int lo, hi; CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    cudaStream_t bg, fg; CK(cudaStreamCreateWithFlags(&bg, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&fg, cudaStreamNonBlocking));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));

    // (1) throughput: N back-to-back kernels, with and without a wait before each
    for (int rep = 0; rep < 1; rep++)
    for (unsigned T : {20u, 100u, 500u}) {
        for (int guard = 0; guard < 2; guard++) {
            int n = T == 500 ? 400 : 2000;
            launch(bg, T * 1000, guard); CK(cudaStreamSynchronize(bg));
            CK(cudaEventRecord(e0, bg));
            for (int i = 0; i < n; i++) launch(bg, T * 1000, guard);
            CK(cudaEventRecord(e1, bg)); CK(cudaEventSynchronize(e1));
            float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
            printf("throughput T=%u guard=%d: %.3f us per kernel (%.2f %% over T)\n", T, guard, ms * 1000 / n, (ms * 1000 / n - T) / T * 100);
        }
    }

    // (2) stall: 10 guarded kernels of 100 us; raise the flag 250 us in; count kernels that end while raised
    {
        std::vector<int> after;
        cudaEvent_t ev[10]; for (int i = 0; i < 10; i++) CK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
        for (int rep = 0; rep < 50; rep++) {
            setflag(0);
            double t0 = now_us();
            for (int i = 0; i < 10; i++) { launch(bg, 100000, true); CK(cudaEventRecord(ev[i], bg)); }
            while (now_us() < t0 + 250) {}
            setflag(1);
            int doneAtRaise = 0; for (int i = 0; i < 10; i++) if (cudaEventQuery(ev[i]) == cudaSuccess) doneAtRaise++;
            sleep_us(3000);
            int done = 0; for (int i = 0; i < 10; i++) if (cudaEventQuery(ev[i]) == cudaSuccess) done++;
            after.push_back(done - doneAtRaise);
            setflag(0);
            CK(cudaStreamSynchronize(bg));
        }
        int hist[11] = {0}; for (int a : after) hist[a]++;
        printf("stall: kernels ending after the flag was raised (running one included), over 50 tries:");
        for (int i = 0; i <= 10; i++) if (hist[i]) printf(" %d:%d", i, hist[i]);
        printf("\n");
    }

    // (3) fg latency behind a busy bg (bg keeps kmax guarded 100 us kernels queued); fg = one 100 us kernel
    for (int prio = 0; prio < 2; prio++) {
        cudaStream_t b2 = bg, f2 = fg;
        if (prio) { CK(cudaStreamCreateWithPriority(&b2, cudaStreamNonBlocking, lo)); CK(cudaStreamCreateWithPriority(&f2, cudaStreamNonBlocking, hi)); }
        for (int kmax : {2, 4}) for (int stall = 0; stall < 2; stall++) {
            std::vector<double> lat;
            for (int rep = 0; rep < 200; rep++) {
                setflag(0);
                double t0 = now_us();
                for (int i = 0; i < kmax; i++) launch(b2, 100000, true);
                sleep_us(30 + (rep * 37) % 100); // somewhere inside the first bg kernel
                if (stall) { setflag(1); }
                double s = now_us();
                spin<<<blocks, 256, 0, f2>>>(100000);
                CK(cudaEventRecord(e1, f2));
                while (cudaEventQuery(e1) != cudaSuccess) {}
                lat.push_back(now_us() - s);
                setflag(0);
                CK(cudaStreamSynchronize(b2));
                (void) t0;
            }
            printf("fg latency (submit to end seen, us) prio=%d bg_in_flight=%d stall=%d: median %.1f p90 %.1f p99 %.1f\n", prio, kmax, stall, pct(lat, .5), pct(lat, .9), pct(lat, .99));
        }
    }

    // (3b) fg task of 20 x 100 us launched at once, behind bg with 2 (or 4) guarded kernels in flight
    for (int kmax : {2, 4}) for (int stall = 0; stall < 2; stall++) {
        std::vector<double> lat;
        for (int rep = 0; rep < 100; rep++) {
            setflag(0);
            for (int i = 0; i < kmax; i++) launch(bg, 100000, true);
            sleep_us(30 + (rep * 37) % 100);
            if (stall) setflag(1);
            double s = now_us();
            for (int i = 0; i < 20; i++) spin<<<blocks, 256, 0, fg>>>(100000);
            CK(cudaEventRecord(e1, fg));
            while (cudaEventQuery(e1) != cudaSuccess) {}
            lat.push_back(now_us() - s);
            setflag(0);
            CK(cudaStreamSynchronize(bg));
        }
        printf("fg task of 20 (submit to end seen, us) bg_in_flight=%d stall=%d: median %.1f p90 %.1f p99 %.1f\n", kmax, stall, pct(lat, .5), pct(lat, .9), pct(lat, .99));
    }
    // alone: fg task of 20 with nothing else
    {
        std::vector<double> lat;
        for (int rep = 0; rep < 100; rep++) {
            double s = now_us();
            for (int i = 0; i < 20; i++) spin<<<blocks, 256, 0, fg>>>(100000);
            CK(cudaEventRecord(e1, fg));
            while (cudaEventQuery(e1) != cudaSuccess) {}
            lat.push_back(now_us() - s);
        }
        printf("fg task of 20 alone: median %.1f p99 %.1f\n", pct(lat, .5), pct(lat, .99));
    }
    // (4) wake: a stalled stream with one kernel queued; drop the flag; time to the kernel's end
    {
        std::vector<double> lat;
        for (int rep = 0; rep < 100; rep++) {
            setflag(1);
            launch(bg, 20000, true); CK(cudaEventRecord(e1, bg));
            sleep_us(200);
            if (cudaEventQuery(e1) == cudaSuccess) { printf("wake: kernel ran while stalled!\n"); }
            double s = now_us();
            setflag(0);
            while (cudaEventQuery(e1) != cudaSuccess) {}
            lat.push_back(now_us() - s - 20);
        }
        printf("wake: flag dropped to kernel (20 us) end seen, minus 20 us: median %.1f p99 %.1f\n", pct(lat, .5), pct(lat, .99));
    }
    // host cost of the wait call
    {
        std::vector<double> c;
        for (int i = 0; i < 2000; i++) { double s = now_us(); DK(cuStreamWaitValue32((CUstream) bg, dflag, 0, CU_STREAM_WAIT_VALUE_EQ)); c.push_back(now_us() - s); }
        CK(cudaStreamSynchronize(bg));
        printf("cuStreamWaitValue32 host call: median %.2f us p99 %.2f\n", pct(c, .5), pct(c, .99));
    }
    return 0;
}
