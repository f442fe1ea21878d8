/*
 * xq-hip-probe: links libamdhip64.so.5 by its soname (no RPATH), so it runs against the system's
 * HIP runtime (Debian libamdhip64-5) unless LD_LIBRARY_PATH names another. Asks for the devices,
 * then creates a stream and launches a copy and a memset on it and on the null stream, as a
 * program does at start. Prints one JSON line with each call's result; exit 0 whatever HIP
 * answered (the point is that nothing crashes and no device is reported cleanly), 1 when a call
 * claims success where the device count said there is none.
 */
#include <stdio.h>

#include "hip_abi.h"

hipError_t hipGetDeviceCount(int *);
hipError_t hipStreamCreate(hipStream_t *);
hipError_t hipMemsetAsync(void *, int, size_t, hipStream_t);
hipError_t hipMemcpyAsync(void *, const void *, size_t, hipMemcpyKind, hipStream_t);
hipError_t hipStreamSynchronize(hipStream_t);
hipError_t hipStreamDestroy(hipStream_t);

int main(void)
{
    static char a[256], b[256];
    int n = -1;
    hipError_t count = hipGetDeviceCount(&n);
    hipStream_t s = NULL;
    hipError_t create = hipStreamCreate(&s);
    hipError_t set = hipMemsetAsync(a, 1, sizeof a, create == hipSuccess ? s : NULL);
    hipError_t copy = hipMemcpyAsync(b, a, sizeof a, 4, NULL);
    hipError_t sync = hipStreamSynchronize(NULL);
    if (create == hipSuccess) hipStreamDestroy(s);
    printf("{\"count_error\":%d,\"devices\":%d,\"create\":%d,\"memset\":%d,\"memcpy\":%d,\"sync\":%d}\n", count, n, create,
           set, copy, sync);
    return count != hipSuccess && (create == hipSuccess || set == hipSuccess || copy == hipSuccess) ? 1 : 0;
}
