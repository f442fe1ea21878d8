// Probe (issue 13): how long does the device idle when the background resumes after a
// foreground task? Level 1 launches bg's next kernel once fg's end is seen; level 2 lowers the
// flag its already-launched kernel waits on (cuStreamWaitValue32), written on a side stream as
// the CUDA adapter does. Gaps are device times between fg's end event and bg's start event, and
// from the flag write (an event recorded on the side stream after it) to bg's start.
// Cases: l1, l2 (flag lowered when fg's end is seen), l2-early (lowered when fg's last kernel
// is seen started), l2-idle (held 200 us or 2 ms with nothing else running).
// Build: nvcc -O2 -o wake wake.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
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
static double pct(std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v[(size_t) ((v.size() - 1) * p)]; }
static float el(cudaEvent_t a, cudaEvent_t b) { float ms; CK(cudaEventElapsedTime(&ms, a, b)); return ms * 1000; }
static void waitev(cudaEvent_t e) { while (cudaEventQuery(e) != cudaSuccess) {} }

static int blocks;
static CUdeviceptr flag;
static cudaStream_t side, fg, bg;

static void setflag(uint32_t v) { DK(cuStreamWriteValue32_v2((CUstream) side, flag, v, 0)); }

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 200;
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    blocks = sms * 8;
    CK(cudaFree(0));
    DK(cuMemAlloc(&flag, 64)); DK(cuMemsetD32(flag, 0, 16));
    int lo, hi; CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CK(cudaStreamCreateWithPriority(&side, cudaStreamNonBlocking, hi));
    CK(cudaStreamCreateWithFlags(&fg, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&bg, cudaStreamNonBlocking));
    cudaEvent_t fgLastStart, fgEnd, bgStart, bgEnd, wrote, bgRunEnd;
    CK(cudaEventCreate(&fgLastStart)); CK(cudaEventCreate(&fgEnd)); CK(cudaEventCreate(&bgStart)); CK(cudaEventCreate(&bgEnd));
    CK(cudaEventCreate(&wrote)); CK(cudaEventCreate(&bgRunEnd));
    printf("sms %d blocks %d reps %d\n", sms, blocks, reps);
    const char *cases[] = {"l1", "l2", "l2-early", "l1", "l2", "l2-early"};
    for (const char *c : cases) {
        bool l2 = strncmp(c, "l2", 2) == 0, early = strcmp(c, "l2-early") == 0;
        std::vector<double> gap, wake, task, hostw;
        for (int r = 0; r < reps; r++) {
            // bg runs a kernel; fg's task arrives inside it; at level 2 bg's next kernel is already queued behind a raised flag
            spin<<<blocks, 256, 0, bg>>>(100000); CK(cudaEventRecord(bgRunEnd, bg));
            if (l2) {
                setflag(1);
                DK(cuStreamWaitValue32_v2((CUstream) bg, flag, 0, CU_STREAM_WAIT_VALUE_EQ));
                CK(cudaEventRecord(bgStart, bg)); spin<<<blocks, 256, 0, bg>>>(100000); CK(cudaEventRecord(bgEnd, bg));
            }
            sleep_us(30 + (r * 37) % 60);
            cudaEvent_t fgStart; CK(cudaEventCreate(&fgStart));
            CK(cudaEventRecord(fgStart, fg));
            for (int i = 0; i < 20; i++) {
                if (i == 19) CK(cudaEventRecord(fgLastStart, fg));
                spin<<<blocks, 256, 0, fg>>>(100000);
            }
            CK(cudaEventRecord(fgEnd, fg));
            waitev(early ? fgLastStart : fgEnd);
            double s = now_us();
            if (l2) { setflag(0); CK(cudaEventRecord(wrote, side)); }
            else { CK(cudaEventRecord(bgStart, bg)); spin<<<blocks, 256, 0, bg>>>(100000); CK(cudaEventRecord(bgEnd, bg)); }
            hostw.push_back(now_us() - s);
            CK(cudaEventSynchronize(bgEnd)); CK(cudaEventSynchronize(fgEnd));
            gap.push_back(el(fgEnd, bgStart));
            if (l2) wake.push_back(el(wrote, bgStart));
            task.push_back(el(bgRunEnd, fgEnd));
            CK(cudaEventDestroy(fgStart));
            sleep_us(300);
        }
        printf("%-9s fg end -> bg start: median %7.1f p99 %7.1f us | flag written -> bg start: median %6.1f p99 %6.1f us | "
               "fg after bg's running kernel: median %7.1f p99 %7.1f us | host call %.1f us\n", c, pct(gap, .5), pct(gap, .99),
               wake.empty() ? 0 : pct(wake, .5), wake.empty() ? 0 : pct(wake, .99), pct(task, .5), pct(task, .99), pct(hostw, .5));
    }
    // a held stream with nothing else running: does the hold's length change the wake-up?
    for (int hold : {200, 2000, 200, 2000}) {
        std::vector<double> wake;
        for (int r = 0; r < reps; r++) {
            setflag(1);
            DK(cuStreamWaitValue32_v2((CUstream) bg, flag, 0, CU_STREAM_WAIT_VALUE_EQ));
            CK(cudaEventRecord(bgStart, bg)); spin<<<blocks, 256, 0, bg>>>(20000); CK(cudaEventRecord(bgEnd, bg));
            sleep_us(hold);
            setflag(0); CK(cudaEventRecord(wrote, side));
            CK(cudaEventSynchronize(bgEnd));
            wake.push_back(el(wrote, bgStart));
        }
        printf("idle hold %4d us: flag written -> bg start median %.1f p99 %.1f us\n", hold, pct(wake, .5), pct(wake, .99));
    }
    return 0;
}
