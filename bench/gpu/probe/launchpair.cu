// Probe (issue 40): the interposer's cost per launch on the real driver, paired launch by launch in
// one process, so that the host's drift (its speed moves in phases of seconds on the H200 test
// machine) cancels. Each pair makes one launch of an empty kernel on the legacy default stream
// through the driver's own cuLaunchKernel (looked up in libcuda with glibc's dlsym, which the
// interposer does not see: the bare path) and one through the cuLaunchKernel that cuGetProcAddress
// hands out (what the CUDA runtime and PyTorch call: under ./xq run, the interposer's gated
// wrapper), in alternating order, each timed alone, with TOUCH_KB KiB of the program's memory read
// and written before each launch (the caches a framework leaves between two launches; not timed).
// CODE_KB (a third argument, default 0): that much machine code is also run before each launch (a
// straight run of 3-byte adds, made at start in an executable mapping), so that the instruction
// caches are left as a framework leaves them (PyTorch's dispatcher and Python run far more code
// between two launches than the 32 KiB first-level cache holds; the interposer's own code is then
// fetched cold, which TOUCH_KB alone does not show).
// Run bare, the two paths are the same function: the difference is the control (about 0).
// Prints one JSON line: pairs, touch_kb, bare_p50_ns, via_p50_ns, and the pairs' differences
// (via - bare) at P50, P90, P99 and their mean.
// Build: nvcc -O2 -o launchpair launchpair.cu -lcuda      Run: launchpair [PAIRS] [TOUCH_KB] [CODE_KB]
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <string.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <algorithm>
#include <vector>

__global__ void nop() {}

typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
typedef void *(*dlsym_t)(void *, const char *);

static inline long long now_ns() {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long pct(std::vector<long long> v, double p) {
    std::sort(v.begin(), v.end());
    return v[(size_t)((v.size() - 1) * p)];
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 50000;
    long kb = argc > 2 ? atol(argv[2]) : 0;
    long code_kb = argc > 3 ? atol(argv[3]) : 0;
    if (code_kb < 0 || code_kb > 65536) {
        fprintf(stderr, "launchpair: CODE_KB must be 0 to 65536 (got %ld)\n", code_kb);
        return 1;
    }
    if (n < 100 || kb < 0) {
        fprintf(stderr, "launchpair: PAIRS must be >= 100 and TOUCH_KB >= 0 (got %ld, %ld)\n", n, kb);
        return 2;
    }
    cudaError_t e = cudaFree(0); // the primary context, current on this thread
    if (e != cudaSuccess) {
        fprintf(stderr, "launchpair: no device: %s\n", cudaGetErrorString(e));
        return 1;
    }
    cudaFunction_t fn;
    if ((e = cudaGetFuncBySymbol(&fn, (const void *)nop)) != cudaSuccess) {
        fprintf(stderr, "launchpair: cudaGetFuncBySymbol: %s\n", cudaGetErrorString(e));
        return 1;
    }
    CUfunction f = (CUfunction)fn;
    // the bare path: glibc's own dlsym (dlvsym is not wrapped) on libcuda's handle
    dlsym_t gd = (dlsym_t)dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34");
    if (!gd) gd = (dlsym_t)dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5");
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    launch_t bare = gd && h ? (launch_t)gd(h, "cuLaunchKernel") : NULL;
    // the framework's path: the entry point cuGetProcAddress hands out
    void *p = NULL;
    CUdriverProcAddressQueryResult q;
    CUresult r = cuGetProcAddress("cuLaunchKernel", &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &q);
    launch_t via = r == CUDA_SUCCESS ? (launch_t)p : NULL;
    if (!bare || !via) {
        fprintf(stderr, "launchpair: no cuLaunchKernel (driver's %p, cuGetProcAddress's %p, result %d)\n", (void *)bare, p, (int)r);
        return 1;
    }
    size_t touch = (size_t)kb * 1024;
    volatile unsigned char *buf = touch ? (unsigned char *)calloc(1, touch) : NULL;
    if (touch && !buf) return 1;
    void (*code)(void) = NULL;
    if (code_kb) { // code_kb KiB of `add $1, %eax` (83 c0 01), then ret
        size_t len = (size_t)code_kb * 1024 / 3 * 3;
        unsigned char *m = (unsigned char *)mmap(NULL, len + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return 1;
        for (size_t o = 0; o < len; o += 3) m[o] = 0x83, m[o + 1] = 0xc0, m[o + 2] = 0x01;
        m[len] = 0xc3;
        if (mprotect(m, len + 1, PROT_READ | PROT_EXEC)) {
            fprintf(stderr, "launchpair: no executable mapping for CODE_KB\n");
            return 1;
        }
        code = (void (*)(void))m;
    }
    for (int i = 0; i < 2000; i++) { // warm-up: both paths' first calls
        if ((i & 1 ? via : bare)(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS) {
            fprintf(stderr, "launchpair: a warm-up launch failed\n");
            return 1;
        }
        if (i % 64 == 63) cudaStreamSynchronize(0);
    }
    cudaStreamSynchronize(0);
    std::vector<long long> tb(n), tv(n), d(n);
    for (long i = 0; i < n; i++) {
        for (int k = 0; k < 2; k++) {
            int use_via = (i & 1) ? k == 0 : k == 1; // the order alternates pair by pair
            for (size_t o = 0; o < touch; o += 64) buf[o]++;
            if (code) code();
            long long t0 = now_ns();
            CUresult lr = (use_via ? via : bare)(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
            long long t1 = now_ns();
            if (lr != CUDA_SUCCESS) {
                fprintf(stderr, "launchpair: launch %ld failed: %d\n", i, (int)lr);
                return 1;
            }
            (use_via ? tv : tb)[i] = t1 - t0;
        }
        d[i] = tv[i] - tb[i];
        if (i % 32 == 31) cudaStreamSynchronize(0);
    }
    if ((e = cudaStreamSynchronize(0)) != cudaSuccess) {
        fprintf(stderr, "launchpair: %s\n", cudaGetErrorString(e));
        return 1;
    }
    double mean = 0;
    for (long i = 0; i < n; i++) mean += (double)d[i];
    printf("{\"pairs\": %ld, \"touch_kb\": %ld, \"code_kb\": %ld, \"bare_p50_ns\": %lld, \"via_p50_ns\": %lld, \"diff_p50_ns\": %lld, "
           "\"diff_p90_ns\": %lld, \"diff_p99_ns\": %lld, \"diff_mean_ns\": %.0f, \"same_function\": %s}\n",
           n, kb, code_kb, pct(tb, 0.5), pct(tv, 0.5), pct(d, 0.5), pct(d, 0.9), pct(d, 0.99), mean / n,
           (void *)bare == p ? "true" : "false");
    return 0;
}
