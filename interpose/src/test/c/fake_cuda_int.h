/* fake_cuda_int.h: what the fake libcuda.so.1's units share (hidden: it is built with -fvisibility=hidden). */
#ifndef XQ_FAKE_CUDA_INT_H
#define XQ_FAKE_CUDA_INT_H

#include <pthread.h>

#include "cuda_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define MAXDEV 16

/* A command queued on a stream, run in order by the stream's worker. */
enum { OP_SPIN, OP_INC, OP_COPY, OP_SET32, OP_SET8, OP_SET16, OP_HOST, OP_WRITE32, OP_WRITE64, OP_WAIT32, OP_WAITEV, OP_GRAPH };
typedef struct op {
    struct op *next;
    int kind;
    unsigned us;
    void *dst;
    const void *src;
    size_t n;
    unsigned v;
    unsigned long long v64;
    CUhostFn fn;
    void *data;
    struct CUstream_st *on; /* OP_WAITEV: the stream whose first v64 commands must be done */
    struct CUgraphExec_st *exec; /* OP_GRAPH: the instantiated graph whose commands run in order */
    void *own;              /* freed once the command ran (a pageable source staged at the call) */
} op;

struct CUctx_st {
    int dev;
    pthread_mutex_t mu;
    struct CUstream_st *streams; /* every stream of the context, for cuCtxSynchronize */
    struct CUstream_st *legacy;
};
struct CUstream_st {
    struct CUstream_st *next;
    CUcontext ctx;
    int prio, capturing, destroyed;
    struct CUgraph_st *cap; /* while capturing: the graph the stream's commands go into */
    int green; /* a green context's stream: its multiprocessors (0: a stream of the whole device) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    op *head, *tail;
    unsigned long long submitted, completed;
    unsigned long long done_ns[1024]; /* when command k (1-based) completed: done_ns[k % 1024] */
};
/* A captured graph, and an instantiated one: the commands captured, run in order by one launch. */
struct CUgraph_st {
    op *head, *tail;
};
struct CUgraphExec_st {
    op *head;
    int destroyed;
};
struct CUevent_st {
    struct CUstream_st *s;
    unsigned long long target;
    unsigned long long rec_ns; /* when it was recorded */
    unsigned flags;            /* CU_EVENT_DISABLE_TIMING (2): no time */
};

/* the FAKECUDA_ knobs read at load (fake_cuda.c) */
extern int g_memops; /* FAKECUDA_MEMOPS */
extern int g_green;  /* FAKECUDA_GREEN=0: no green contexts */
extern int g_cluster_split, g_split_log; /* FAKECUDA_CLUSTER_SPLIT=0: flag 2 refused; FAKECUDA_SPLIT_LOG=1 */
extern int g_sms;    /* FAKECUDA_SMS */
extern int g_green_slow; /* FAKECUDA_GREEN_SLOW */
extern int g_join_fail;  /* FAKECUDA_JOIN_FAIL: what a wait on an event recorded on a green stream returns (0: works) */
extern int g_slow_every, g_slow_us; /* FAKECUDA_SLOW_EVERY, FAKECUDA_SLOW_US */
extern int g_tps;    /* FAKECUDA_TPS */
/* kernels launched into green streams (fake_cuda_launch.c; xq_fake_green_launches) */
extern unsigned long long g_green_launches;

/* fake_cuda.c: devices, the current context, the streams' workers */
int fk_ndev(void);
CUcontext fk_cur(void);
void fk_run(op *o); /* runs one command on the calling thread */
struct CUstream_st *fk_stream_new(CUcontext ctx, int prio);
struct CUstream_st *fk_resolve(CUstream h, int ptsz); /* NULL: the legacy stream, or the per-thread one in a _ptsz call */
CUresult fk_enqueue(CUstream h, int ptsz, op o);

/* the entry points the other units name (cuGetProcAddress's table, the green contexts) */
/* fake_cuda.c */
EXPORT CUresult cuInit(unsigned int flags);
EXPORT CUresult cuDriverGetVersion(int *v);
EXPORT CUresult cuDeviceGetCount(int *n);
EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal);
EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d);
EXPORT CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d);
EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d);
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d);
EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice d);
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d);
EXPORT CUresult cuCtxSetCurrent(CUcontext c);
EXPORT CUresult cuCtxGetCurrent(CUcontext *c);
EXPORT CUresult cuCtxGetDevice(CUdevice *d);
EXPORT CUresult cuCtxPushCurrent_v2(CUcontext c);
EXPORT CUresult cuCtxCreate_v2(CUcontext *c, unsigned flags, CUdevice d);
EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *c);
EXPORT CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest);
EXPORT CUresult cuCtxSynchronize(void);
EXPORT CUresult cuCtxSynchronize_v2(CUcontext c);
EXPORT CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int prio);
EXPORT CUresult cuStreamCreate(CUstream *ph, unsigned int flags);
EXPORT CUresult cuStreamGetPriority(CUstream h, int *p);
EXPORT CUresult cuStreamGetPriority_ptsz(CUstream h, int *p);
EXPORT CUresult cuStreamGetCtx(CUstream h, CUcontext *c);
EXPORT CUresult cuStreamGetCtx_ptsz(CUstream h, CUcontext *c);
EXPORT CUresult cuStreamSynchronize(CUstream h);
EXPORT CUresult cuStreamSynchronize_ptsz(CUstream h);
EXPORT CUresult cuStreamQuery(CUstream h);
EXPORT CUresult cuStreamQuery_ptsz(CUstream h);
EXPORT CUresult cuStreamDestroy_v2(CUstream h);
EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags);
EXPORT CUresult cuEventRecord(CUevent e, CUstream h);
EXPORT CUresult cuEventRecord_ptsz(CUevent e, CUstream h);
EXPORT CUresult cuEventQuery(CUevent e);
EXPORT CUresult cuEventSynchronize(CUevent e);
EXPORT CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b);
EXPORT CUresult cuEventDestroy_v2(CUevent e);
EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d);
/* fake_cuda_launch.c */
EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image);
EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name);
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
EXPORT CUresult cuMemFree_v2(CUdeviceptr p);
EXPORT CUresult cuLibraryGetKernel(void **k, void *lib, const char *name);
EXPORT CUresult cuKernelGetFunction(CUfunction *f, void *k);
EXPORT CUresult cuKernelSetAttribute(int attr, int val, void *k, CUdevice dev);
EXPORT CUresult cuFuncSetAttribute(CUfunction f, int attr, int val);
EXPORT CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size);
EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                               unsigned shmem, CUstream h, void **params, void **extra);
EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                               unsigned shmem, CUstream h, void **params, void **extra);
EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra);
EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params, void **extra);
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream h);
EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *s, size_t n, CUstream h);
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream h);
EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *d, CUdeviceptr s, size_t n, CUstream h);
EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h);
EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h);
EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream h);
EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream h);
EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream h);
EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream h);
EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream h);
EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream h);
EXPORT CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h);
EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h);
EXPORT CUresult cuLaunchHostFunc(CUstream h, CUhostFn fn, void *data);
EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream h, CUhostFn fn, void *data);
EXPORT CUresult cuStreamWriteValue32_v2(CUstream h, CUdeviceptr a, unsigned v, unsigned f);
EXPORT CUresult cuStreamWriteValue32_v2_ptsz(CUstream h, CUdeviceptr a, unsigned v, unsigned f);
EXPORT CUresult cuStreamWriteValue64_v2(CUstream h, CUdeviceptr a, cuuint64_t v, unsigned f);
EXPORT CUresult cuStreamWriteValue64_v2_ptsz(CUstream h, CUdeviceptr a, cuuint64_t v, unsigned f);
EXPORT CUresult cuStreamWaitValue32_v2(CUstream h, CUdeviceptr a, unsigned v, unsigned f);
EXPORT CUresult cuStreamWaitValue32_v2_ptsz(CUstream h, CUdeviceptr a, unsigned v, unsigned f);
EXPORT unsigned long long xq_fake_waits(void);
EXPORT CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags);
EXPORT CUresult cuMemHostUnregister(void *p);
EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags);
EXPORT CUresult cuMemHostAlloc(void **pp, size_t n, unsigned flags);
EXPORT CUresult cuMemFreeHost(void *p);
EXPORT CUresult cuStreamBeginCapture_v2(CUstream h, CUstreamCaptureMode m);
EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream h, CUstreamCaptureMode m);
EXPORT CUresult cuStreamEndCapture(CUstream h, CUgraph *g);
EXPORT CUresult cuStreamEndCapture_ptsz(CUstream h, CUgraph *g);
EXPORT CUresult cuGraphDestroy(CUgraph g);
EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags);
EXPORT CUresult cuGraphExecDestroy(CUgraphExec e);
EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream h);
EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream h);

#endif
