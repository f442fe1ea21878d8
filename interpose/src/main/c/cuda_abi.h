/*
 * The few CUDA driver API types, constants and prototypes XQ uses, declared by hand with the
 * ABI of CUDA 13's cuda.h (no CUDA toolkit is needed to build). Shared by the interposer, the
 * fake driver and the test programs.
 */
#ifndef XQ_CUDA_ABI_H
#define XQ_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;                       /* enum cudaError_enum: int-sized */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef uint64_t cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphEdgeData_st CUgraphEdgeData;     /* only passed by pointer */
typedef struct CUlaunchAttribute_st CUlaunchAttribute; /* only passed by pointer */
typedef struct CUDA_MEMCPY2D_st CUDA_MEMCPY2D;         /* only passed by pointer */
typedef struct CUDA_MEMCPY3D_st CUDA_MEMCPY3D;         /* only passed by pointer */
typedef int CUstreamCaptureMode;
typedef int CUdriverProcAddressQueryResult;
typedef void (*CUhostFn)(void *userData);
typedef struct CUuuid_st { char bytes[16]; } CUuuid;

typedef struct CUlaunchConfig_st {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;

/* CUlaunchAttribute: an int id, padding to 8, a 64-byte value union (copied as bytes). */
#define XQ_LAUNCH_ATTR_SIZE 72
/* CU_LAUNCH_PARAM_END, the end of a launch's "extra" list */
#define XQ_LAUNCH_PARAM_END ((void *)0x00)
/* CU_LAUNCH_PARAM_BUFFER_POINTER and CU_LAUNCH_PARAM_BUFFER_SIZE: the parameters packed in one
 * buffer (its address, then the address of a size_t holding its size) */
#define XQ_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define XQ_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)

/* Kernel parameter layout (CUDA 12.4+): cuFuncGetParamInfo(CUfunction, size_t index, size_t *offset,
 * size_t *size) and cuKernelGetParamInfo(CUkernel, ...) with the same shape; an index past the
 * last parameter gives CUDA_ERROR_INVALID_VALUE. */

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_DEINITIALIZED 4
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND 302
#define CUDA_ERROR_INVALID_HANDLE 400
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NOT_READY 600

#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_GET_PROC_ADDRESS_LEGACY_STREAM 1
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2
#define CU_GET_PROC_ADDRESS_SUCCESS 0
#define CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND 1

/* XQ_COMPLETION=memop: cuStreamWriteValue64_v2(CUstream, CUdeviceptr, cuuint64_t, unsigned int),
 * cuMemHostRegister_v2(void *, size_t, unsigned int), cuMemHostUnregister(void *),
 * cuMemHostGetDevicePointer_v2(CUdeviceptr *,
 * void *, unsigned int), cuDeviceGetAttribute(int *, CUdevice_attribute, CUdevice). Attribute 122 is
 * the v2 memop query of CUDA 12/13 (92 and 93 are the deprecated v1 ones); the v2 write has no
 * NO_MEMORY_BARRIER flag, so flags are 0. */
#define CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS 122
#define CU_DEVICE_ATTRIBUTE_PCI_BUS_ID 33
#define CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID 34
#define CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID 50
#define CU_MEMHOSTREGISTER_PORTABLE 0x1
#define CU_MEMHOSTREGISTER_DEVICEMAP 0x2
#define CU_MEMHOSTALLOC_PORTABLE 0x1
#define CU_MEMHOSTALLOC_DEVICEMAP 0x2

#endif
