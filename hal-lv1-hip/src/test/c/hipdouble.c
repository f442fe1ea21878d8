/*
 * A CPU-backed test double of the part of the HIP runtime ABI (libamdhip64) that XQ's
 * hal-lv1-hip binds. Same symbol names, same C signatures, same error numbers as
 * hip/hip_runtime_api.h of ROCm 5.2.3 (Debian libamdhip64-dev 5.2.3-8), so the adapter's
 * FFM code runs unchanged against it; only the library path differs.
 *
 * What it models:
 *   - devices: a configurable count (env XQ_HIPDOUBLE_DEVICES, default 1; 0 makes
 *     hipGetDeviceCount return hipErrorNoDevice like the real library without a GPU),
 *   - streams: one worker pthread per stream that runs its FIFO of operations in order,
 *   - one execution engine per device: kernels, copies and memsets of all the device's streams
 *     take turns on it (a spin "occupies the whole device", as on a GPU). Strict priority: while
 *     a more urgent stream (lower number) has such work queued, a less urgent one waits; among
 *     equals, first come first served. So a mapped stream priority has a visible effect (a stream
 *     stopped at an event wait or a suspended KFD queue is not ahead of anyone),
 *   - events: recorded into a stream's FIFO; the worker stamps CLOCK_MONOTONIC when it
 *     reaches them, so hipEventElapsedTime measures the work in between; hipStreamWaitEvent
 *     holds a stream's later work until the event's latest record has ended,
 *   - hipStreamWaitValue32 / hipStreamWriteValue32 on host memory, in stream order,
 *   - modules: a text blob (first line "XQ-HIP-DOUBLE 1", then one function name a line)
 *     naming built-in "kernels":
 *       spin(uint64 micros)                          sleeps/spins for micros
 *       probe(void* out, i32, i64, f32, f64)         writes its arguments and launch shape to out
 *       append(int64* log, int64 value)              log[1 + log[0]++] = value
 *       trap()                                       the next event on the stream reports
 *                                                    hipErrorLaunchFailure (an async fault)
 *       xq_matmul_tiled(f32* a, f32* b, f32* c, i32 m, i32 n, i32 k)   example-host's matmul,
 *                                                    c = a * b row-major, computed on the CPU
 *       xq_saxpy(i32 n, f32 alpha, f32* x, f32* y)   y = alpha * x + y
 *     A line may give the parameter sizes after the name ("xq_saxpy 4 4 8 8"); they must be the
 *     kernel's, or the image is refused (hipErrorInvalidImage), as a code object's metadata would be,
 *   - device memory (hipMalloc/hipFree, 1 GiB a device, hipMemGetInfo) and page-locked memory
 *     (hipHostMalloc/hipHostFree) in host memory, device pointers being host pointers; a free of
 *     memory not allocated is hipErrorInvalidValue and counted (xqdouble_bad_frees),
 *   - hipMemcpyAsync / hipMemsetAsync on host memory, in stream order.
 * Handles live in fixed tables, so a stale or made-up handle is detected and answered with
 * hipErrorInvalidHandle instead of crashing.
 *
 *   - more of the launch surface, for the HIP interposer's tests (interpose): hipLaunchKernel,
 *     hipExtLaunchKernel and hipLaunchCooperativeKernel (the "function address" is a function
 *     handle of hipModuleGetFunction: the double has no host stubs), hipExtModuleLaunchKernel
 *     (global work size / local size), the per-thread default stream (hipStreamPerThread and
 *     the _spt entry points), hipLaunchHostFunc, typed copies and memsets, hipMemcpyWithStream,
 *     and graphs made by stream capture (hipStreamBeginCapture .. hipStreamEndCapture,
 *     hipGraphInstantiate, hipGraphLaunch: the captured operations run again, in order), and
 *     hipGetProcAddress for a few launch-type entry points (the library's own pointers),
 *   - with XQ_HIPDOUBLE_GPU=FILE, processes share one engine: an operation runs holding an
 *     exclusive flock on FILE (several processes on one GPU, for multi-process tests),
 *   - with XQ_HIPDOUBLE_KFD=1 and the fake KFD (hal-lv3-kfd, libfakekfd.so) preloaded: like
 *     HIP, the double enables the KFD runtime at its first stream and gives every stream a KFD
 *     queue of its own (the fake's control ioctl); a stream whose queue is suspended runs nothing
 *     until it is resumed, as a queue stopped by the debugger API.
 *
 * Test-only symbols (prefix xqdouble_) let tests reconfigure the double and count live handles.
 *
 * This unit: errors, devices, streams, events, memory and the test-only symbols.
 * hipdouble_engine.c: the shared state, stream workers, engine and kernels' CPU bodies.
 * hipdouble_launch.c: modules, launches, async copies and memsets, host functions, graphs.
 * hipdouble_internal.h: what they share (hd_ names, hidden). Build: build-hipdouble.sh.
 */
#include "hipdouble_internal.h"

/* hipDeviceAttribute_t values, same header. */
enum {
    attrClockRate = 5,
    attrComputeCapabilityMajor = 23,
    attrMaxBlockDimX = 26,
    attrMaxBlockDimY = 27,
    attrMaxBlockDimZ = 28,
    attrMaxGridDimX = 29,
    attrMaxThreadsPerBlock = 56,
    attrComputeCapabilityMinor = 61,
    attrMultiprocessorCount = 63,
    attrPciBusId = 67,
    attrPciDeviceId = 68,
    attrPciDomainID = 69,
    attrMaxSharedMemoryPerBlock = 74,
    attrWarpSize = 87
};

static struct event g_events[MAX_EVENTS];

static int valid_event(struct event *e) { return VALID(g_events, MAX_EVENTS, e); }

/* ------------------------------------------------------------------ errors */

EXPORT const char *hipGetErrorName(int e) {
    switch (e) {
    case hipSuccess: return "hipSuccess";
    case hipErrorInvalidValue: return "hipErrorInvalidValue";
    case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
    case hipErrorInvalidConfiguration: return "hipErrorInvalidConfiguration";
    case hipErrorInvalidMemcpyDirection: return "hipErrorInvalidMemcpyDirection";
    case hipErrorInvalidDeviceFunction: return "hipErrorInvalidDeviceFunction";
    case hipErrorNoDevice: return "hipErrorNoDevice";
    case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
    case hipErrorInvalidImage: return "hipErrorInvalidImage";
    case hipErrorInvalidHandle: return "hipErrorInvalidHandle";
    case hipErrorNotFound: return "hipErrorNotFound";
    case hipErrorNotReady: return "hipErrorNotReady";
    case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
    case hipErrorNotSupported: return "hipErrorNotSupported";
    default: return "hipErrorUnknown";
    }
}

EXPORT const char *hipGetErrorString(int e) {
    switch (e) {
    case hipSuccess: return "no error";
    case hipErrorInvalidValue: return "invalid argument";
    case hipErrorOutOfMemory: return "out of memory";
    case hipErrorInvalidConfiguration: return "invalid launch configuration";
    case hipErrorInvalidMemcpyDirection: return "invalid copy direction";
    case hipErrorInvalidDeviceFunction: return "invalid device function";
    case hipErrorNoDevice: return "no ROCm-capable device is detected";
    case hipErrorInvalidDevice: return "invalid device ordinal";
    case hipErrorInvalidImage: return "device kernel image is invalid";
    case hipErrorInvalidHandle: return "invalid resource handle";
    case hipErrorNotFound: return "named symbol not found";
    case hipErrorNotReady: return "device not ready";
    case hipErrorLaunchFailure: return "unspecified launch failure";
    case hipErrorNotSupported: return "operation not supported";
    default: return "unknown error";
    }
}

/* ------------------------------------------------------------------ devices */

EXPORT int hipGetDeviceCount(int *count) {
    if (count == NULL) {
        return hipErrorInvalidValue;
    }
    *count = hd_devices;
    return hd_devices == 0 ? hipErrorNoDevice : hipSuccess;
}

EXPORT int hipSetDevice(int device) {
    if (device < 0 || device >= hd_devices) {
        return hd_devices == 0 ? hipErrorNoDevice : hipErrorInvalidDevice;
    }
    hd_current_device = device;
    return hipSuccess;
}

EXPORT int hipDeviceGetAttribute(int *value, int attr, int device) {
    if (value == NULL) {
        return hipErrorInvalidValue;
    }
    if (device < 0 || device >= hd_devices) {
        return hipErrorInvalidDevice;
    }
    switch (attr) {
    case attrClockRate: *value = 1000000; break;
    case attrComputeCapabilityMajor: *value = 9; break;
    case attrComputeCapabilityMinor: *value = 0; break;
    case attrMaxBlockDimX:
    case attrMaxBlockDimY:
    case attrMaxBlockDimZ:
    case attrMaxThreadsPerBlock: *value = 1024; break;
    case attrMaxGridDimX: *value = 2147483647; break;
    case attrMultiprocessorCount: *value = hd_compute_units; break;
    case attrPciBusId: *value = 0x40 + device; break;
    case attrPciDeviceId: *value = 0; break;
    case attrPciDomainID: *value = 0; break;
    case attrMaxSharedMemoryPerBlock: *value = 65536; break;
    case attrWarpSize: *value = 64; break;
    default: return hipErrorInvalidValue;
    }
    return hipSuccess;
}

/* The attributes' place (domain 0, bus 0x40 + device, device 0), as real HIP writes it. */
EXPORT int hipDeviceGetPCIBusId(char *id, int len, int device) {
    if (id == NULL || len < 13) {
        return hipErrorInvalidValue;
    }
    if (device < 0 || device >= hd_devices) {
        return hipErrorInvalidDevice;
    }
    snprintf(id, (size_t) len, "%04x:%02x:%02x.0", 0, 0x40 + device, 0);
    return hipSuccess;
}

EXPORT int hipDeviceGetName(char *name, int len, int device) {
    if (name == NULL || len <= 0) {
        return hipErrorInvalidValue;
    }
    if (device < 0 || device >= hd_devices) {
        return hipErrorInvalidDevice;
    }
    snprintf(name, (size_t) len, "XQ HIP test double (CPU) #%d", device);
    return hipSuccess;
}

EXPORT int hipDeviceTotalMem(size_t *bytes, int device) {
    if (bytes == NULL) {
        return hipErrorInvalidValue;
    }
    if (device < 0 || device >= hd_devices) {
        return hipErrorInvalidDevice;
    }
    *bytes = (size_t) 1 << 30;
    return hipSuccess;
}

EXPORT int hipDriverGetVersion(int *version) {
    if (version == NULL) {
        return hipErrorInvalidValue;
    }
    *version = 50221153;
    return hipSuccess;
}

EXPORT int hipRuntimeGetVersion(int *version) {
    return hipDriverGetVersion(version);
}

EXPORT int hipDeviceGetStreamPriorityRange(int *least, int *greatest) {
    if (hd_devices == 0) {
        return hipErrorInvalidDevice;
    }
    if (least != NULL) {
        *least = hd_least_priority;
    }
    if (greatest != NULL) {
        *greatest = hd_greatest_priority;
    }
    return hipSuccess;
}

/* ------------------------------------------------------------------ streams */

static int create_stream(void **stream, unsigned flags, int priority);

EXPORT int hipStreamCreateWithPriority(void **stream, unsigned flags, int priority) {
    return create_stream(stream, flags, priority);
}

/* Static: one entry point never calls another through the PLT (an interposer would see it). */
static int create_stream(void **stream, unsigned flags, int priority) {
    if (stream == NULL || flags > 1) {
        return hipErrorInvalidValue;
    }
    int d = hd_current_device;
    if (d < 0 || d >= hd_devices) {
        return hd_devices == 0 ? hipErrorNoDevice : hipErrorInvalidDevice;
    }
    pthread_mutex_lock(&hd_mu);
    struct stream *s = NULL;
    int e = hd_new_stream(d, flags, priority, &s);
    pthread_mutex_unlock(&hd_mu);
    if (e == hipSuccess) {
        *stream = s;
    }
    return e;
}

EXPORT int hipStreamCreate(void **stream) {
    return create_stream(stream, 0, 0);
}

EXPORT int hipStreamCreateWithFlags(void **stream, unsigned flags) {
    return create_stream(stream, flags, 0);
}

EXPORT int hipGetDevice(int *device) {
    if (device == NULL) {
        return hipErrorInvalidValue;
    }
    *device = hd_current_device;
    return hipSuccess;
}

EXPORT int hipStreamGetDevice(void *stream, int *device) {
    if (device == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&hd_mu);
    struct stream *s;
    int e = hd_resolve_stream(stream, &s);
    if (e == hipSuccess) {
        *device = s->device;
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

EXPORT int hipStreamGetPriority(void *stream, int *priority) {
    if (priority == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&hd_mu);
    struct stream *s;
    int e = hd_resolve_stream(stream, &s);
    if (e == hipSuccess) {
        *priority = s->priority;
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

EXPORT int hipStreamDestroy(void *stream) {
    pthread_mutex_lock(&hd_mu);
    struct stream *s = stream;
    if (stream == NULL || !valid_stream(s) || s->stopping) {
        pthread_mutex_unlock(&hd_mu);
        return hipErrorInvalidHandle;
    }
    /* like the real runtime: queued work still runs, then the stream goes */
    s->stopping = 1;
    pthread_cond_signal(&s->wake);
    pthread_t t = s->thread;
    pthread_mutex_unlock(&hd_mu);
    pthread_join(t, NULL);
    pthread_mutex_lock(&hd_mu);
    pthread_cond_destroy(&s->wake);
    s->in_use = 0;
    pthread_mutex_unlock(&hd_mu);
    return hipSuccess;
}

EXPORT int hipStreamSynchronize(void *stream) {
    return hd_sync_stream(stream);
}

/* For hipGetProcAddress (hipdouble_launch.c): an alias must be defined where its target is. */
extern __typeof__(hipStreamSynchronize) hd_own_hipStreamSynchronize __attribute__((alias("hipStreamSynchronize")));

EXPORT int hipDeviceSynchronize(void) {
    pthread_mutex_lock(&hd_mu);
    for (int i = 0; i < MAX_STREAMS; i++) {
        struct stream *s = &hd_streams[i];
        while (s->in_use && s->device == hd_current_device && (s->head != NULL || s->busy)) {
            pthread_cond_wait(&hd_done, &hd_mu);
        }
    }
    pthread_mutex_unlock(&hd_mu);
    return hipSuccess;
}

int hd_sync_stream(void *stream) {
    pthread_mutex_lock(&hd_mu);
    struct stream *s;
    int e = hd_resolve_stream(stream, &s);
    if (e == hipSuccess) {
        while (s->in_use && (s->head != NULL || s->busy)) {
            pthread_cond_wait(&hd_done, &hd_mu);
        }
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

EXPORT int hipStreamQuery(void *stream) {
    pthread_mutex_lock(&hd_mu);
    struct stream *s;
    int e = hd_resolve_stream(stream, &s);
    if (e == hipSuccess && (s->head != NULL || s->busy)) {
        e = hipErrorNotReady;
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

/* ------------------------------------------------------------------ events */

EXPORT int hipEventCreateWithFlags(void **event, unsigned flags) {
    if (event == NULL || (flags & ~7u) != 0) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&hd_mu);
    for (int i = 0; i < MAX_EVENTS; i++) {
        struct event *ev = &g_events[i];
        if (!ev->in_use) {
            uint64_t gen = ev->gen + 1; /* keeps stale event ops of a former occupant from matching */
            memset(ev, 0, sizeof(*ev));
            ev->gen = gen;
            ev->born = gen;
            ev->in_use = 1;
            ev->flags = flags;
            ev->device = hd_current_device;
            ev->state = EV_NEVER;
            *event = ev;
            pthread_mutex_unlock(&hd_mu);
            return hipSuccess;
        }
    }
    pthread_mutex_unlock(&hd_mu);
    return hipErrorOutOfMemory;
}

EXPORT int hipEventRecord(void *event, void *stream) {
    pthread_mutex_lock(&hd_mu);
    struct event *ev = event;
    struct stream *s;
    int e = valid_event(ev) ? hd_resolve_stream(stream, &s) : hipErrorInvalidHandle;
    if (e == hipSuccess) {
        struct op *o = calloc(1, sizeof(*o));
        if (o == NULL) {
            e = hipErrorOutOfMemory;
        } else {
            if (ev->npend == (int) (sizeof ev->pend / sizeof ev->pend[0])) {
                fprintf(stderr, "hipdouble: event %p recorded 256 times with none of them ended: not modelled\n", (void *) ev);
                abort();
            }
            ev->gen++;
            ev->pend[ev->npend++] = ev->gen;
            ev->state = EV_PENDING;
            ev->error = hipSuccess;
            o->type = OP_EVENT;
            o->ev = ev;
            o->gen = ev->gen;
            hd_enqueue(s, o);
        }
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

/* The stream's later work waits for the event's latest record (made before this call) to end, as
 * on a GPU: a barrier in the stream's queue, so a suspended queue of the recording stream holds it. */
EXPORT int hipStreamWaitEvent(void *stream, void *event, unsigned flags) {
    if (flags != 0) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&hd_mu);
    struct event *ev = event;
    struct stream *s;
    int e = valid_event(ev) ? hd_resolve_stream(stream, &s) : hipErrorInvalidHandle;
    if (e == hipSuccess && ev->state == EV_PENDING) { /* never recorded, or ended: nothing to wait for */
        struct op *o = calloc(1, sizeof(*o));
        if (o == NULL) {
            e = hipErrorOutOfMemory;
        } else {
            o->type = OP_WAIT;
            o->ev = ev;
            o->gen = ev->gen;
            hd_enqueue(s, o);
        }
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

/* hipExtLaunchKernel's optional start and stop events. */
int hd_record_if(void *event, void *stream) {
    return event == NULL ? hipSuccess : hipEventRecord(event, stream); /* not wrapped by interposers */
}

EXPORT int hipEventQuery(void *event) {
    pthread_mutex_lock(&hd_mu);
    struct event *ev = event;
    int e;
    if (!valid_event(ev)) {
        e = hipErrorInvalidHandle;
    } else if (ev->state == EV_PENDING) {
        e = hipErrorNotReady;
    } else {
        e = ev->state == EV_DONE ? ev->error : hipSuccess;
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

EXPORT int hipEventSynchronize(void *event) {
    pthread_mutex_lock(&hd_mu);
    struct event *ev = event;
    int e = hipSuccess;
    if (!valid_event(ev)) {
        e = hipErrorInvalidHandle;
    } else {
        uint64_t gen = ev->gen;
        while (ev->in_use && ev->gen == gen && ev->state == EV_PENDING) {
            pthread_cond_wait(&hd_done, &hd_mu);
        }
        if (ev->in_use && ev->state == EV_DONE) {
            e = ev->error;
        }
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

EXPORT int hipEventElapsedTime(float *ms, void *start, void *stop) {
    if (ms == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&hd_mu);
    struct event *a = start, *b = stop;
    int e = hipSuccess;
    if (!valid_event(a) || !valid_event(b)) {
        e = hipErrorInvalidHandle;
    } else if ((a->flags & 2) || (b->flags & 2) || a->state == EV_NEVER || b->state == EV_NEVER) {
        e = hipErrorInvalidHandle; /* timing disabled or never recorded, as in CUDA */
    } else if (a->state != EV_DONE || b->state != EV_DONE) {
        e = hipErrorNotReady;
    } else {
        *ms = (float) ((double) (b->time_ns - a->time_ns) / 1e6);
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

EXPORT int hipEventDestroy(void *event) {
    pthread_mutex_lock(&hd_mu);
    struct event *ev = event;
    int e = hipSuccess;
    if (!valid_event(ev)) {
        e = hipErrorInvalidHandle;
    } else {
        ev->in_use = 0;
        ev->gen++;
        pthread_cond_broadcast(&hd_done);
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

/* ------------------------------------------------------------------ memory */

/* Device and page-locked memory: host memory here, in a table so that frees can be checked. */
#define MAX_ALLOCS 65536
#define DEVICE_BYTES ((size_t) 1 << 30)
struct alloc {
    void *p;
    size_t bytes;
    int device; /* -1: page-locked host memory */
};
static struct alloc g_allocs[MAX_ALLOCS];
static int g_bad_frees;

static size_t allocated_on(int device) {
    size_t n = 0;
    for (int i = 0; i < MAX_ALLOCS; i++) {
        if (g_allocs[i].p != NULL && g_allocs[i].device == device) {
            n += g_allocs[i].bytes;
        }
    }
    return n;
}

static int mem_alloc(void **ptr, size_t bytes, int device) {
    if (ptr == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&hd_mu);
    if (device >= 0 && bytes > DEVICE_BYTES - allocated_on(device)) {
        pthread_mutex_unlock(&hd_mu);
        return hipErrorOutOfMemory;
    }
    for (int i = 0; i < MAX_ALLOCS; i++) {
        if (g_allocs[i].p == NULL) {
            void *p = calloc(1, bytes == 0 ? 1 : bytes);
            if (p == NULL) {
                pthread_mutex_unlock(&hd_mu);
                return hipErrorOutOfMemory;
            }
            g_allocs[i].p = p;
            g_allocs[i].bytes = bytes;
            g_allocs[i].device = device;
            *ptr = p;
            pthread_mutex_unlock(&hd_mu);
            return hipSuccess;
        }
    }
    pthread_mutex_unlock(&hd_mu);
    return hipErrorOutOfMemory;
}

static int mem_free(void *p, int host) {
    if (p == NULL) {
        return hipSuccess;
    }
    pthread_mutex_lock(&hd_mu);
    for (int i = 0; i < MAX_ALLOCS; i++) {
        if (g_allocs[i].p == p && (g_allocs[i].device < 0) == host) {
            free(p);
            g_allocs[i].p = NULL;
            pthread_mutex_unlock(&hd_mu);
            return hipSuccess;
        }
    }
    g_bad_frees++;
    pthread_mutex_unlock(&hd_mu);
    return hipErrorInvalidValue;
}

EXPORT int hipMalloc(void **ptr, size_t bytes) {
    int d = hd_current_device;
    if (d < 0 || d >= hd_devices) {
        return hipErrorInvalidDevice;
    }
    return mem_alloc(ptr, bytes, d);
}

EXPORT int hipFree(void *ptr) { return mem_free(ptr, 0); }

EXPORT int hipHostMalloc(void **ptr, size_t bytes, unsigned flags) {
    (void) flags;
    return mem_alloc(ptr, bytes, -1);
}

EXPORT int hipHostFree(void *ptr) { return mem_free(ptr, 1); }

EXPORT int hipMemGetInfo(size_t *free_bytes, size_t *total) {
    if (free_bytes == NULL || total == NULL) {
        return hipErrorInvalidValue;
    }
    int d = hd_current_device;
    if (d < 0 || d >= hd_devices) {
        return hipErrorInvalidDevice;
    }
    pthread_mutex_lock(&hd_mu);
    *total = DEVICE_BYTES;
    *free_bytes = DEVICE_BYTES - allocated_on(d);
    pthread_mutex_unlock(&hd_mu);
    return hipSuccess;
}

/* ------------------------------------------------------------------ test-only controls */

/* Sets device count, compute units per device and the stream priority range. */
EXPORT void xqdouble_configure(int devices, int compute_units, int least, int greatest) {
    pthread_mutex_lock(&hd_mu);
    hd_devices = devices;
    hd_compute_units = compute_units;
    hd_least_priority = least;
    hd_greatest_priority = greatest;
    pthread_mutex_unlock(&hd_mu);
}

/* Live allocations: device memory (host = 0) or page-locked host memory (host = 1). */
EXPORT int xqdouble_live_allocations(int host) {
    int n = 0;
    pthread_mutex_lock(&hd_mu);
    for (int i = 0; i < MAX_ALLOCS; i++) {
        n += g_allocs[i].p != NULL && (g_allocs[i].device < 0) == (host != 0);
    }
    pthread_mutex_unlock(&hd_mu);
    return n;
}

/* Frees of memory that was not allocated (or was freed already). */
EXPORT int xqdouble_bad_frees(void) {
    pthread_mutex_lock(&hd_mu);
    int n = g_bad_frees;
    pthread_mutex_unlock(&hd_mu);
    return n;
}

/* Live streams + events + modules (default streams excluded): lets tests find leaks. */
EXPORT int xqdouble_live_handles(void) {
    int n = 0;
    pthread_mutex_lock(&hd_mu);
    for (int i = 0; i < MAX_STREAMS; i++) {
        struct stream *s = &hd_streams[i];
        int is_default = 0;
        for (int d = 0; d < 64; d++) {
            if (hd_null_stream[d] == s) {
                is_default = 1;
            }
        }
        n += s->in_use && !is_default;
    }
    for (int i = 0; i < MAX_EVENTS; i++) {
        n += g_events[i].in_use;
    }
    for (int i = 0; i < MAX_MODULES; i++) {
        n += hd_modules[i].in_use;
    }
    pthread_mutex_unlock(&hd_mu);
    return n;
}
