// Probe (issue 40): what one kernel launch costs the calling thread on a real driver, the way a
// framework launches (the runtime API, the legacy default stream, an empty kernel), with and
// without the interposer (run it bare and under `./xq run`; the difference is the interposer's).
// Each launch is timed alone (a clock read either side; the same in both runs). Between launches
// the program may read and write TOUCH_KB KiB of its own memory (a line in every 64 bytes), as the
// Python interpreter and the framework do between two launches of an eager model, so that the
// interposer runs with the caches a real tenant leaves it (the touch is not timed).
// The stream is synchronized every 64 launches (not timed) so that the queue never fills.
// Prints one JSON line: launches, touch_kb, p50_ns, p90_ns, p99_ns, mean_ns.
// Build: nvcc -O2 -o launchcost launchcost.cu      Run: launchcost [LAUNCHES] [TOUCH_KB]
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <algorithm>
#include <vector>

__global__ void nop() {}

static inline long long now_ns() {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    long kb = argc > 2 ? atol(argv[2]) : 0;
    if (n < 100 || kb < 0) {
        fprintf(stderr, "launchcost: LAUNCHES must be >= 100 and TOUCH_KB >= 0 (got %ld, %ld)\n", n, kb);
        return 2;
    }
    size_t touch = (size_t)kb * 1024;
    volatile unsigned char *buf = touch ? (unsigned char *)calloc(1, touch) : NULL;
    if (touch && !buf) return 1;
    cudaError_t e = cudaFree(0);
    if (e != cudaSuccess) {
        fprintf(stderr, "launchcost: no device: %s\n", cudaGetErrorString(e));
        return 1;
    }
    for (int i = 0; i < 2000; i++) { // warm-up: the driver's and the interposer's first calls
        nop<<<1, 32>>>();
        if (i % 64 == 63) cudaStreamSynchronize(0);
    }
    cudaStreamSynchronize(0);
    std::vector<long long> d(n);
    double sum = 0;
    for (long i = 0; i < n; i++) {
        for (size_t o = 0; o < touch; o += 64) buf[o]++;
        long long t0 = now_ns();
        nop<<<1, 32>>>();
        long long t1 = now_ns();
        d[i] = t1 - t0;
        sum += (double)d[i];
        if (i % 64 == 63) cudaStreamSynchronize(0);
    }
    e = cudaStreamSynchronize(0);
    if (e != cudaSuccess) {
        fprintf(stderr, "launchcost: %s\n", cudaGetErrorString(e));
        return 1;
    }
    std::sort(d.begin(), d.end());
    printf("{\"launches\": %ld, \"touch_kb\": %ld, \"p50_ns\": %lld, \"p90_ns\": %lld, \"p99_ns\": %lld, \"mean_ns\": %.0f}\n", n,
           kb, d[n / 2], d[(size_t)(n * 0.9)], d[(size_t)(n * 0.99)], sum / n);
    return 0;
}
