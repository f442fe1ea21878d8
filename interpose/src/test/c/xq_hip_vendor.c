/*
 * libxq-hipvendor.so: stands for a vendor library (hipBLAS, MIOpen) that links the HIP runtime
 * and launches on the caller's stream. xq-hip-app --vendor N dlopens it RTLD_LOCAL, as Python
 * loads extensions; its launches must reach the interposer and be scheduled, and its other HIP
 * calls must work untouched.
 */
#include "hip_abi.h"

hipError_t hipModuleLaunchKernel(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 hipStream_t, void **, void **);
hipError_t hipEventCreateWithFlags(hipEvent_t *, unsigned);
hipError_t hipEventRecord(hipEvent_t, hipStream_t);
hipError_t hipEventSynchronize(hipEvent_t);
hipError_t hipEventDestroy(hipEvent_t);

__attribute__((visibility("default"))) int xq_vendor_run(hipStream_t s, hipFunction_t spin, int n, unsigned us)
{
    hipEvent_t ev;
    if (hipEventCreateWithFlags(&ev, hipEventDisableTiming) != hipSuccess) return -1;
    for (int i = 0; i < n; i++) {
        uint64_t t = us;
        void *args[] = {&t};
        if (hipModuleLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, args, 0) != hipSuccess) return -2;
    }
    int r = hipEventRecord(ev, s) == hipSuccess && hipEventSynchronize(ev) == hipSuccess ? 0 : -3;
    hipEventDestroy(ev);
    return r;
}
