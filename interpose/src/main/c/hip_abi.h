/*
 * The few HIP runtime (libamdhip64) types, constants and prototypes the HIP interposer uses,
 * declared by hand with the ABI of hip/hip_runtime_api.h (ROCm 5.2 to 6.x: the signatures below
 * did not change); no ROCm is needed to build. Shared by libxq-hip.so and its test programs.
 */
#ifndef XQ_HIP_ABI_H
#define XQ_HIP_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int hipError_t; /* enum hipError_t: int-sized */
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipGraph *hipGraph_t;
typedef struct hipGraphExec *hipGraphExec_t;
typedef void *hipDeviceptr_t;
typedef int hipMemcpyKind;
typedef int hipStreamCaptureMode;
typedef void (*hipHostFn_t)(void *userData);
typedef struct dim3 { uint32_t x, y, z; } dim3; /* passed by value, 12 bytes */
/* hipGetProcAddress (ROCm 6.2+): hipError_t hipGetProcAddress(const char *symbol, void **pfn,
 * int hipVersion, uint64_t flags, hipDriverProcAddressQueryResult *symbolStatus) */
typedef int hipDriverProcAddressQueryResult; /* enum: int-sized */

#define hipSuccess 0
#define hipErrorInvalidValue 1
#define hipErrorNotInitialized 3
#define hipErrorNoDevice 100
#define hipErrorInvalidHandle 400
#define hipErrorSharedObjectSymbolNotFound 302
#define hipErrorNotReady 600
#define hipErrorNotSupported 801

#define hipStreamPerThread ((hipStream_t)2)
#define hipEventDisableTiming 0x2

#endif
