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
 *     equals, first come first served. So a mapped stream priority has a visible effect,
 *   - events: recorded into a stream's FIFO; the worker stamps CLOCK_MONOTONIC when it
 *     reaches them, so hipEventElapsedTime measures the work in between,
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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

/* hipError_t values, from hip/hip_runtime_api.h (ROCm 5.2.3). */
enum {
    hipSuccess = 0,
    hipErrorInvalidValue = 1,
    hipErrorOutOfMemory = 2,
    hipErrorInvalidConfiguration = 9,
    hipErrorInvalidMemcpyDirection = 21,
    hipErrorInvalidDeviceFunction = 98,
    hipErrorNoDevice = 100,
    hipErrorInvalidDevice = 101,
    hipErrorInvalidImage = 200,
    hipErrorInvalidHandle = 400,
    hipErrorNotFound = 500,
    hipErrorNotReady = 600,
    hipErrorLaunchFailure = 719,
    hipErrorNotSupported = 801,
    hipErrorUnknown = 999
};

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

#define MAX_STREAMS 1024
#define MAX_EVENTS 65536
#define MAX_MODULES 256
#define MAX_FUNCTIONS 4096
#define MAX_ARGS 8
#define MAX_NAMES 32
#define NAME_LEN 64

enum kernel_kind { K_SPIN = 1, K_PROBE, K_APPEND, K_TRAP, K_MATMUL, K_SAXPY };

struct builtin {
    const char *name;
    int kind;
    int nargs;
    int sizes[MAX_ARGS];
};

static const struct builtin BUILTINS[] = {
    {"spin", K_SPIN, 1, {8}},
    {"probe", K_PROBE, 5, {8, 4, 8, 4, 8}},
    {"append", K_APPEND, 2, {8, 8}},
    {"trap", K_TRAP, 0, {0}},
    /* example-host's kernels (src/main/cuda/matmul.cu, src/main/hip/matmul.hip), computed on the CPU */
    {"xq_matmul_tiled", K_MATMUL, 6, {8, 8, 8, 4, 4, 4}},
    {"xq_saxpy", K_SAXPY, 4, {4, 4, 8, 8}},
};
#define N_BUILTINS (sizeof(BUILTINS) / sizeof(BUILTINS[0]))

enum op_type { OP_KERNEL = 1, OP_COPY, OP_MEMSET, OP_EVENT, OP_HOSTFN };

struct event;

struct op {
    struct op *next;
    int type;
    /* kernel */
    const struct builtin *fn;
    unsigned grid[3], block[3], shared;
    unsigned char args[MAX_ARGS][8];
    /* copy / memset */
    void *dst;
    const void *src;
    size_t bytes;
    int value;
    int width; /* memset element size: 1, 2 or 4 */
    /* host function */
    void (*hostfn)(void *);
    void *data;
    /* event */
    struct event *ev;
    uint64_t gen;
};

struct stream {
    int in_use;
    int device;
    int priority;
    unsigned flags;
    pthread_t thread;
    pthread_cond_t wake;
    struct op *head, *tail;
    int busy;
    int stopping;
    int pending_fault;
    int wants_engine;
    int engine_ops; /* queued or running kernels, copies and memsets */
    uint64_t ticket;
    int capturing;
    struct op *cap_head, *cap_tail; /* operations captured since hipStreamBeginCapture */
    uint32_t kfd_queue;             /* XQ_HIPDOUBLE_KFD=1: its queue in the fake KFD */
};

/* A graph: the operations captured on a stream, run again in order at every launch. */
struct graph {
    struct op *ops;
};

enum { EV_NEVER = 0, EV_PENDING, EV_DONE };

struct event {
    int in_use;
    int device;
    unsigned flags;
    int state;
    uint64_t gen;
    int64_t time_ns;
    int error;
};

struct module {
    int in_use;
    int device;
    int count;
    char names[MAX_NAMES][NAME_LEN];
};

struct function {
    int in_use;
    struct module *module;
    const struct builtin *fn;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_done = PTHREAD_COND_INITIALIZER;
static struct stream g_streams[MAX_STREAMS];
static struct event g_events[MAX_EVENTS];
static struct module g_modules[MAX_MODULES];
static struct function g_functions[MAX_FUNCTIONS];
/* Per device: the lazily created stream that a NULL stream handle means. */
static struct stream *g_null_stream[64];
/* Per thread and device: the stream that hipStreamPerThread (and a null stream given to an _spt
 * entry point) means. */
static __thread struct stream *t_ptds[64];
/* XQ_HIPDOUBLE_GPU: the file whose lock is the engine shared by processes (-1: none). */
static int g_gpu_lock = -1;
/* XQ_HIPDOUBLE_KFD=1: the fake KFD's descriptor (-1: none yet). */
static int g_kfd = -1, g_kfd_on;
/* Per device: whether its engine runs an operation now. */
static int g_engine_busy[64];
static pthread_cond_t g_engine_free = PTHREAD_COND_INITIALIZER;
static uint64_t g_next_ticket = 1;

static int g_devices = 1;
static int g_compute_units = 4;
static int g_least_priority = 1;
static int g_greatest_priority = -1;
static __thread int t_current_device = 0;

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') {
        return fallback;
    }
    char *end;
    long n = strtol(v, &end, 10);
    return *end == '\0' ? (int) n : fallback;
}

__attribute__((constructor)) static void init_from_env(void) {
    g_devices = env_int("XQ_HIPDOUBLE_DEVICES", 1);
    if (g_devices < 0 || g_devices > 64) {
        g_devices = 1;
    }
    g_compute_units = env_int("XQ_HIPDOUBLE_CUS", 4);
    g_kfd_on = env_int("XQ_HIPDOUBLE_KFD", 0) == 1;
    const char *gpu = getenv("XQ_HIPDOUBLE_GPU");
    if (gpu != NULL && *gpu != '\0') {
        g_gpu_lock = open(gpu, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    }
}

/* The fake KFD (hal-lv3-kfd/src/test/c/fakekfd.c): its control ioctl and the runtime enable. */
#define KFD_RUNTIME_ENABLE 0xc0104b25UL
#define KFD_FAKE_CONTROL 0xc0184bf0UL
struct kfd_control { uint32_t cmd, queue_id, value, out1, out2, out3; };

/* A KFD queue for a new stream, as HIP gets one from the driver; 0 when there is no fake KFD.
 * Caller holds g_mu. */
static uint32_t kfd_queue_new(int device) {
    if (!g_kfd_on) {
        return 0;
    }
    if (g_kfd < 0) {
        g_kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
        if (g_kfd < 0) {
            g_kfd_on = 0;
            return 0;
        }
        unsigned char args[16] = {0};
        ioctl(g_kfd, KFD_RUNTIME_ENABLE, args); /* what ROCr does once per process */
    }
    struct kfd_control c = {1, 0, (uint32_t) device + 1, 0, 0, 0};
    return ioctl(g_kfd, KFD_FAKE_CONTROL, &c) == 0 ? c.out1 : 0;
}

/* Whether the stream's KFD queue is suspended now. */
static int kfd_suspended(uint32_t q) {
    if (q == 0 || g_kfd < 0) {
        return 0;
    }
    struct kfd_control c = {2, q, 0, 0, 0, 0};
    return ioctl(g_kfd, KFD_FAKE_CONTROL, &c) == 0 && c.out1;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Handle checks: a handle is valid only if it points at a live slot of its table. */
#define VALID(table, max, p) \
    ((p) != NULL && (void *) (p) >= (void *) &table[0] && (void *) (p) < (void *) &table[max] \
     && (((char *) (p) - (char *) &table[0]) % sizeof(table[0])) == 0 && (p)->in_use)

static int valid_stream(struct stream *s) { return VALID(g_streams, MAX_STREAMS, s); }
static int valid_event(struct event *e) { return VALID(g_events, MAX_EVENTS, e); }
static int valid_module(struct module *m) { return VALID(g_modules, MAX_MODULES, m); }
static int valid_function(struct function *f) { return VALID(g_functions, MAX_FUNCTIONS, f); }

static void sleep_until(int64_t deadline) {
    for (;;) {
        int64_t left = deadline - now_ns();
        if (left <= 0) {
            return;
        }
        if (left > 200000) {
            /* sleep most of it, then spin the rest for a precise end */
            struct timespec ts = {(left - 100000) / 1000000000LL, (left - 100000) % 1000000000LL};
            nanosleep(&ts, NULL);
        }
    }
}

static void run_kernel(struct stream *s, struct op *o) {
    switch (o->fn->kind) {
    case K_SPIN: {
        uint64_t micros;
        memcpy(&micros, o->args[0], 8);
        sleep_until(now_ns() + (int64_t) micros * 1000);
        break;
    }
    case K_PROBE: {
        unsigned char *out;
        memcpy(&out, o->args[0], 8);
        if (out != NULL) {
            memcpy(out + 0, o->args[1], 4);  /* i32 */
            memcpy(out + 8, o->args[2], 8);  /* i64 */
            memcpy(out + 16, o->args[3], 4); /* f32 */
            memcpy(out + 24, o->args[4], 8); /* f64 */
            memcpy(out + 32, o->grid, 12);
            memcpy(out + 44, o->block, 12);
            memcpy(out + 56, &o->shared, 4);
        }
        break;
    }
    case K_APPEND: {
        int64_t *log;
        int64_t value;
        memcpy(&log, o->args[0], 8);
        memcpy(&value, o->args[1], 8);
        if (log != NULL) {
            log[1 + log[0]] = value;
            log[0]++;
        }
        break;
    }
    case K_MATMUL: {
        /* c[m x n] = a[m x k] * b[k x n], row-major floats, each sum in the order of k */
        const float *a, *b;
        float *c;
        int32_t m, n, k;
        memcpy(&a, o->args[0], 8);
        memcpy(&b, o->args[1], 8);
        memcpy(&c, o->args[2], 8);
        memcpy(&m, o->args[3], 4);
        memcpy(&n, o->args[4], 4);
        memcpy(&k, o->args[5], 4);
        for (int32_t i = 0; i < m; i++) {
            for (int32_t j = 0; j < n; j++) {
                float sum = 0.0f;
                for (int32_t p = 0; p < k; p++) {
                    sum += a[(long) i * k + p] * b[(long) p * n + j];
                }
                c[(long) i * n + j] = sum;
            }
        }
        break;
    }
    case K_SAXPY: {
        int32_t n;
        float alpha;
        const float *x;
        float *y;
        memcpy(&n, o->args[0], 4);
        memcpy(&alpha, o->args[1], 4);
        memcpy(&x, o->args[2], 8);
        memcpy(&y, o->args[3], 8);
        for (int32_t i = 0; i < n; i++) {
            y[i] = alpha * x[i] + y[i];
        }
        break;
    }
    case K_TRAP:
        pthread_mutex_lock(&g_mu);
        s->pending_fault = hipErrorLaunchFailure;
        pthread_mutex_unlock(&g_mu);
        break;
    }
}

/* Whether another stream of the device should have the engine before s. Caller holds g_mu. */
static int someone_ahead(struct stream *s) {
    for (int i = 0; i < MAX_STREAMS; i++) {
        struct stream *o = &g_streams[i];
        if (o == s || !o->in_use || o->device != s->device) {
            continue;
        }
        if ((o->priority < s->priority && o->engine_ops > 0)
            || (o->priority == s->priority && o->wants_engine && o->ticket < s->ticket)) {
            return 1;
        }
    }
    return 0;
}

/* Caller holds g_mu. */
static void acquire_engine(struct stream *s) {
    s->wants_engine = 1;
    s->ticket = g_next_ticket++;
    while (g_engine_busy[s->device] || someone_ahead(s)) {
        pthread_cond_wait(&g_engine_free, &g_mu);
    }
    s->wants_engine = 0;
    g_engine_busy[s->device] = 1;
}

/* Caller holds g_mu. */
static void release_engine(struct stream *s) {
    g_engine_busy[s->device] = 0;
    pthread_cond_broadcast(&g_engine_free);
}

static void *worker(void *arg) {
    struct stream *s = arg;
    pthread_mutex_lock(&g_mu);
    for (;;) {
        while (s->head == NULL && !s->stopping) {
            pthread_cond_wait(&s->wake, &g_mu);
        }
        if (s->head == NULL && s->stopping) {
            break;
        }
        struct op *o = s->head;
        s->head = o->next;
        if (s->head == NULL) {
            s->tail = NULL;
        }
        s->busy = 1;
        int engine = o->type != OP_EVENT && o->type != OP_HOSTFN;
        if (s->kfd_queue != 0) {
            /* a suspended queue runs nothing, not even its event packets */
            pthread_mutex_unlock(&g_mu);
            while (kfd_suspended(s->kfd_queue)) {
                struct timespec ts = {0, 200000};
                nanosleep(&ts, NULL);
            }
            pthread_mutex_lock(&g_mu);
        }
        if (engine) {
            acquire_engine(s);
        }
        pthread_mutex_unlock(&g_mu);
        if (engine && g_gpu_lock >= 0) {
            flock(g_gpu_lock, LOCK_EX);
        }
        switch (o->type) {
        case OP_KERNEL:
            run_kernel(s, o);
            break;
        case OP_COPY:
            memmove(o->dst, o->src, o->bytes);
            break;
        case OP_MEMSET:
            if (o->width == 2) {
                for (size_t i = 0; i < o->bytes; i++) {
                    ((uint16_t *) o->dst)[i] = (uint16_t) o->value;
                }
            } else if (o->width == 4) {
                for (size_t i = 0; i < o->bytes; i++) {
                    ((uint32_t *) o->dst)[i] = (uint32_t) o->value;
                }
            } else {
                memset(o->dst, o->value, o->bytes);
            }
            break;
        case OP_HOSTFN:
            o->hostfn(o->data);
            break;
        default:
            break;
        }
        if (engine && g_gpu_lock >= 0) {
            flock(g_gpu_lock, LOCK_UN);
        }
        pthread_mutex_lock(&g_mu);
        if (engine) {
            s->engine_ops--;
            release_engine(s);
        }
        if (o->type == OP_EVENT && o->ev->in_use && o->ev->gen == o->gen) {
            o->ev->time_ns = now_ns();
            o->ev->error = s->pending_fault;
            o->ev->state = EV_DONE;
            s->pending_fault = hipSuccess;
        }
        s->busy = 0;
        free(o);
        pthread_cond_broadcast(&g_done);
    }
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

/* Caller holds g_mu. */
static void enqueue(struct stream *s, struct op *o) {
    o->next = NULL;
    if (s->capturing && o->type != OP_EVENT) { /* captured, not run */
        if (s->cap_tail == NULL) {
            s->cap_head = s->cap_tail = o;
        } else {
            s->cap_tail->next = o;
            s->cap_tail = o;
        }
        return;
    }
    if (o->type != OP_EVENT) {
        s->engine_ops++;
    }
    if (s->tail == NULL) {
        s->head = s->tail = o;
    } else {
        s->tail->next = o;
        s->tail = o;
    }
    pthread_cond_signal(&s->wake);
}

static int clamp_priority(int p) {
    /* greatest (most urgent) is the smaller number */
    if (p < g_greatest_priority) {
        return g_greatest_priority;
    }
    if (p > g_least_priority) {
        return g_least_priority;
    }
    return p;
}

/* Caller holds g_mu. */
static int new_stream(int device, unsigned flags, int priority, struct stream **out) {
    for (int i = 0; i < MAX_STREAMS; i++) {
        struct stream *s = &g_streams[i];
        if (!s->in_use) {
            memset(s, 0, sizeof(*s));
            s->in_use = 1;
            s->device = device;
            s->flags = flags;
            s->priority = clamp_priority(priority);
            pthread_cond_init(&s->wake, NULL);
            s->kfd_queue = kfd_queue_new(device);
            if (pthread_create(&s->thread, NULL, worker, s) != 0) {
                s->in_use = 0;
                return hipErrorOutOfMemory;
            }
            *out = s;
            return hipSuccess;
        }
    }
    return hipErrorOutOfMemory;
}

/* Resolves a stream argument (NULL = the device's default stream). Caller holds g_mu. */
static int resolve_stream(void *handle, struct stream **out) {
    if (handle == (void *) 2) { /* hipStreamPerThread */
        int d = t_current_device;
        if (d < 0 || d >= g_devices) {
            return hipErrorInvalidDevice;
        }
        if (t_ptds[d] == NULL) {
            int e = new_stream(d, 0, 0, &t_ptds[d]);
            if (e != hipSuccess) {
                return e;
            }
        }
        *out = t_ptds[d];
        return hipSuccess;
    }
    if (handle == NULL) {
        int d = t_current_device;
        if (d < 0 || d >= g_devices) {
            return hipErrorInvalidDevice;
        }
        if (g_null_stream[d] == NULL) {
            int e = new_stream(d, 0, 0, &g_null_stream[d]);
            if (e != hipSuccess) {
                return e;
            }
        }
        *out = g_null_stream[d];
        return hipSuccess;
    }
    struct stream *s = handle;
    if (!valid_stream(s)) {
        return hipErrorInvalidHandle;
    }
    *out = s;
    return hipSuccess;
}

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
    *count = g_devices;
    return g_devices == 0 ? hipErrorNoDevice : hipSuccess;
}

EXPORT int hipSetDevice(int device) {
    if (device < 0 || device >= g_devices) {
        return g_devices == 0 ? hipErrorNoDevice : hipErrorInvalidDevice;
    }
    t_current_device = device;
    return hipSuccess;
}

EXPORT int hipDeviceGetAttribute(int *value, int attr, int device) {
    if (value == NULL) {
        return hipErrorInvalidValue;
    }
    if (device < 0 || device >= g_devices) {
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
    case attrMultiprocessorCount: *value = g_compute_units; break;
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
    if (device < 0 || device >= g_devices) {
        return hipErrorInvalidDevice;
    }
    snprintf(id, (size_t) len, "%04x:%02x:%02x.0", 0, 0x40 + device, 0);
    return hipSuccess;
}

EXPORT int hipDeviceGetName(char *name, int len, int device) {
    if (name == NULL || len <= 0) {
        return hipErrorInvalidValue;
    }
    if (device < 0 || device >= g_devices) {
        return hipErrorInvalidDevice;
    }
    snprintf(name, (size_t) len, "XQ HIP test double (CPU) #%d", device);
    return hipSuccess;
}

EXPORT int hipDeviceTotalMem(size_t *bytes, int device) {
    if (bytes == NULL) {
        return hipErrorInvalidValue;
    }
    if (device < 0 || device >= g_devices) {
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
    if (g_devices == 0) {
        return hipErrorInvalidDevice;
    }
    if (least != NULL) {
        *least = g_least_priority;
    }
    if (greatest != NULL) {
        *greatest = g_greatest_priority;
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
    int d = t_current_device;
    if (d < 0 || d >= g_devices) {
        return g_devices == 0 ? hipErrorNoDevice : hipErrorInvalidDevice;
    }
    pthread_mutex_lock(&g_mu);
    struct stream *s = NULL;
    int e = new_stream(d, flags, priority, &s);
    pthread_mutex_unlock(&g_mu);
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
    *device = t_current_device;
    return hipSuccess;
}

EXPORT int hipStreamGetDevice(void *stream, int *device) {
    if (device == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&g_mu);
    struct stream *s;
    int e = resolve_stream(stream, &s);
    if (e == hipSuccess) {
        *device = s->device;
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

EXPORT int hipStreamGetPriority(void *stream, int *priority) {
    if (priority == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&g_mu);
    struct stream *s;
    int e = resolve_stream(stream, &s);
    if (e == hipSuccess) {
        *priority = s->priority;
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

EXPORT int hipStreamDestroy(void *stream) {
    pthread_mutex_lock(&g_mu);
    struct stream *s = stream;
    if (stream == NULL || !valid_stream(s) || s->stopping) {
        pthread_mutex_unlock(&g_mu);
        return hipErrorInvalidHandle;
    }
    /* like the real runtime: queued work still runs, then the stream goes */
    s->stopping = 1;
    pthread_cond_signal(&s->wake);
    pthread_t t = s->thread;
    pthread_mutex_unlock(&g_mu);
    pthread_join(t, NULL);
    pthread_mutex_lock(&g_mu);
    pthread_cond_destroy(&s->wake);
    s->in_use = 0;
    pthread_mutex_unlock(&g_mu);
    return hipSuccess;
}

static int sync_stream(void *stream);

EXPORT int hipStreamSynchronize(void *stream) {
    return sync_stream(stream);
}

EXPORT int hipDeviceSynchronize(void) {
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < MAX_STREAMS; i++) {
        struct stream *s = &g_streams[i];
        while (s->in_use && s->device == t_current_device && (s->head != NULL || s->busy)) {
            pthread_cond_wait(&g_done, &g_mu);
        }
    }
    pthread_mutex_unlock(&g_mu);
    return hipSuccess;
}

static int sync_stream(void *stream) {
    pthread_mutex_lock(&g_mu);
    struct stream *s;
    int e = resolve_stream(stream, &s);
    if (e == hipSuccess) {
        while (s->in_use && (s->head != NULL || s->busy)) {
            pthread_cond_wait(&g_done, &g_mu);
        }
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

EXPORT int hipStreamQuery(void *stream) {
    pthread_mutex_lock(&g_mu);
    struct stream *s;
    int e = resolve_stream(stream, &s);
    if (e == hipSuccess && (s->head != NULL || s->busy)) {
        e = hipErrorNotReady;
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

/* ------------------------------------------------------------------ events */

EXPORT int hipEventCreateWithFlags(void **event, unsigned flags) {
    if (event == NULL || (flags & ~7u) != 0) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < MAX_EVENTS; i++) {
        struct event *ev = &g_events[i];
        if (!ev->in_use) {
            uint64_t gen = ev->gen + 1; /* keeps stale event ops of a former occupant from matching */
            memset(ev, 0, sizeof(*ev));
            ev->gen = gen;
            ev->in_use = 1;
            ev->flags = flags;
            ev->device = t_current_device;
            ev->state = EV_NEVER;
            *event = ev;
            pthread_mutex_unlock(&g_mu);
            return hipSuccess;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return hipErrorOutOfMemory;
}

EXPORT int hipEventRecord(void *event, void *stream) {
    pthread_mutex_lock(&g_mu);
    struct event *ev = event;
    struct stream *s;
    int e = valid_event(ev) ? resolve_stream(stream, &s) : hipErrorInvalidHandle;
    if (e == hipSuccess) {
        struct op *o = calloc(1, sizeof(*o));
        if (o == NULL) {
            e = hipErrorOutOfMemory;
        } else {
            ev->gen++;
            ev->state = EV_PENDING;
            ev->error = hipSuccess;
            o->type = OP_EVENT;
            o->ev = ev;
            o->gen = ev->gen;
            enqueue(s, o);
        }
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

/* hipExtLaunchKernel's optional start and stop events. */
static int record_if(void *event, void *stream) {
    return event == NULL ? hipSuccess : hipEventRecord(event, stream); /* not wrapped by interposers */
}

EXPORT int hipEventQuery(void *event) {
    pthread_mutex_lock(&g_mu);
    struct event *ev = event;
    int e;
    if (!valid_event(ev)) {
        e = hipErrorInvalidHandle;
    } else if (ev->state == EV_PENDING) {
        e = hipErrorNotReady;
    } else {
        e = ev->state == EV_DONE ? ev->error : hipSuccess;
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

EXPORT int hipEventSynchronize(void *event) {
    pthread_mutex_lock(&g_mu);
    struct event *ev = event;
    int e = hipSuccess;
    if (!valid_event(ev)) {
        e = hipErrorInvalidHandle;
    } else {
        uint64_t gen = ev->gen;
        while (ev->in_use && ev->gen == gen && ev->state == EV_PENDING) {
            pthread_cond_wait(&g_done, &g_mu);
        }
        if (ev->in_use && ev->state == EV_DONE) {
            e = ev->error;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

EXPORT int hipEventElapsedTime(float *ms, void *start, void *stop) {
    if (ms == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&g_mu);
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
    pthread_mutex_unlock(&g_mu);
    return e;
}

EXPORT int hipEventDestroy(void *event) {
    pthread_mutex_lock(&g_mu);
    struct event *ev = event;
    int e = hipSuccess;
    if (!valid_event(ev)) {
        e = hipErrorInvalidHandle;
    } else {
        ev->in_use = 0;
        ev->gen++;
        pthread_cond_broadcast(&g_done);
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

/* ------------------------------------------------------------------ modules and launch */

EXPORT int hipModuleLoadData(void **module, const void *image) {
    static const char MAGIC[] = "XQ-HIP-DOUBLE 1";
    if (module == NULL || image == NULL) {
        return hipErrorInvalidValue;
    }
    const char *text = image;
    if (strncmp(text, MAGIC, sizeof(MAGIC) - 1) != 0) {
        return hipErrorInvalidImage;
    }
    struct module parsed;
    memset(&parsed, 0, sizeof(parsed));
    const char *p = strchr(text, '\n');
    while (p != NULL && *p != '\0') {
        p++;
        const char *end = strchr(p, '\n');
        size_t len = end == NULL ? strlen(p) : (size_t) (end - p);
        while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t')) {
            len--;
        }
        if (len > 0 && p[0] != '#') {
            /* "NAME" or "NAME SIZE..." (the parameter sizes in bytes, which must be the kernel's) */
            size_t name_len = 0;
            while (name_len < len && p[name_len] != ' ' && p[name_len] != '\t') {
                name_len++;
            }
            const struct builtin *known = NULL;
            for (size_t i = 0; i < N_BUILTINS; i++) {
                if (strlen(BUILTINS[i].name) == name_len && strncmp(BUILTINS[i].name, p, name_len) == 0) {
                    known = &BUILTINS[i];
                }
            }
            if (known == NULL || parsed.count == MAX_NAMES || name_len >= NAME_LEN) {
                return hipErrorInvalidImage;
            }
            if (name_len < len) {
                char sizes[256];
                size_t sl = len - name_len < sizeof(sizes) - 1 ? len - name_len : sizeof(sizes) - 1;
                memcpy(sizes, p + name_len, sl);
                sizes[sl] = '\0';
                int count = 0;
                char *q = sizes;
                for (;;) {
                    char *next;
                    long v = strtol(q, &next, 10);
                    if (next == q) {
                        break;
                    }
                    if (count >= known->nargs || v != known->sizes[count]) {
                        return hipErrorInvalidImage;
                    }
                    count++;
                    q = next;
                }
                while (*q == ' ' || *q == '\t') {
                    q++;
                }
                if (*q != '\0' || count != known->nargs) {
                    return hipErrorInvalidImage;
                }
            }
            memcpy(parsed.names[parsed.count], p, name_len);
            parsed.names[parsed.count][name_len] = '\0';
            parsed.count++;
        }
        p = end;
    }
    int d = t_current_device;
    if (d < 0 || d >= g_devices) {
        return hipErrorNoDevice;
    }
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < MAX_MODULES; i++) {
        struct module *m = &g_modules[i];
        if (!m->in_use) {
            *m = parsed;
            m->in_use = 1;
            m->device = d;
            *module = m;
            pthread_mutex_unlock(&g_mu);
            return hipSuccess;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return hipErrorOutOfMemory;
}

EXPORT int hipModuleGetFunction(void **function, void *module, const char *name) {
    if (function == NULL || name == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&g_mu);
    struct module *m = module;
    if (!valid_module(m)) {
        pthread_mutex_unlock(&g_mu);
        return hipErrorInvalidHandle;
    }
    const struct builtin *fn = NULL;
    for (int i = 0; i < m->count; i++) {
        if (strcmp(m->names[i], name) == 0) {
            for (size_t j = 0; j < N_BUILTINS; j++) {
                if (strcmp(BUILTINS[j].name, name) == 0) {
                    fn = &BUILTINS[j];
                }
            }
        }
    }
    if (fn == NULL) {
        pthread_mutex_unlock(&g_mu);
        return hipErrorNotFound;
    }
    for (int i = 0; i < MAX_FUNCTIONS; i++) {
        struct function *f = &g_functions[i];
        if (!f->in_use) {
            f->in_use = 1;
            f->module = m;
            f->fn = fn;
            *function = f;
            pthread_mutex_unlock(&g_mu);
            return hipSuccess;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return hipErrorOutOfMemory;
}

EXPORT int hipModuleUnload(void *module) {
    pthread_mutex_lock(&g_mu);
    struct module *m = module;
    int e = hipSuccess;
    if (!valid_module(m)) {
        e = hipErrorInvalidHandle;
    } else {
        for (int i = 0; i < MAX_FUNCTIONS; i++) {
            if (g_functions[i].in_use && g_functions[i].module == m) {
                g_functions[i].in_use = 0;
            }
        }
        m->in_use = 0;
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

/* Every kernel launch: static, so that one entry point of the double never calls another
 * through the PLT (an interposer would see one launch twice). */
static int launch(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                  unsigned shared, void *stream, void **params, void **extra) {
    if (extra != NULL) {
        return hipErrorNotSupported;
    }
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0
        || (uint64_t) bx * by * bz > 1024 || shared > 65536) {
        return hipErrorInvalidConfiguration;
    }
    pthread_mutex_lock(&g_mu);
    struct function *f = function;
    struct stream *s;
    int e = valid_function(f) ? resolve_stream(stream, &s) : hipErrorInvalidHandle;
    if (e == hipSuccess && f->module->device != s->device) {
        e = hipErrorInvalidDeviceFunction;
    }
    if (e == hipSuccess && f->fn->nargs > 0 && params == NULL) {
        e = hipErrorInvalidValue;
    }
    struct op *o = NULL;
    if (e == hipSuccess) {
        o = calloc(1, sizeof(*o));
        if (o == NULL) {
            e = hipErrorOutOfMemory;
        }
    }
    if (e == hipSuccess) {
        /* arguments are read now, at launch, as the real runtime does */
        for (int i = 0; i < f->fn->nargs; i++) {
            if (params[i] == NULL) {
                free(o);
                pthread_mutex_unlock(&g_mu);
                return hipErrorInvalidValue;
            }
            memcpy(o->args[i], params[i], (size_t) f->fn->sizes[i]);
        }
        o->type = OP_KERNEL;
        o->fn = f->fn;
        o->grid[0] = gx; o->grid[1] = gy; o->grid[2] = gz;
        o->block[0] = bx; o->block[1] = by; o->block[2] = bz;
        o->shared = shared;
        enqueue(s, o);
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

EXPORT int hipModuleLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shared, void *stream, void **params,
                                 void **extra) {
    return launch(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}

/* dim3, passed by value as in hip_runtime_api.h */
typedef struct { uint32_t x, y, z; } dim3;

/* The double has no host stubs: a "function address" is a handle of hipModuleGetFunction. */
EXPORT int hipLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shared, void *stream) {
    return launch((void *) f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned) shared, stream, args, NULL);
}

EXPORT int hipLaunchKernel_spt(const void *f, dim3 g, dim3 b, void **args, size_t shared, void *stream) {
    return launch((void *) f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned) shared, stream ? stream : (void *) 2, args, NULL);
}

static int record_if(void *event, void *stream);

EXPORT int hipExtLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shared, void *stream, void *start,
                              void *stop, int flags) {
    (void) flags;
    int e = record_if(start, stream);
    if (e == hipSuccess) {
        e = launch((void *) f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned) shared, stream, args, NULL);
    }
    return e == hipSuccess ? record_if(stop, stream) : e;
}

EXPORT int hipLaunchCooperativeKernel(const void *f, dim3 g, dim3 b, void **args, unsigned shared, void *stream) {
    return launch((void *) f, g.x, g.y, g.z, b.x, b.y, b.z, shared, stream, args, NULL);
}

/* Global work size (in threads) and local size, as HIP's extension takes them. */
EXPORT int hipExtModuleLaunchKernel(void *f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly,
                                    uint32_t lz, size_t shared, void *stream, void **params, void **extra,
                                    void *start, void *stop, uint32_t flags) {
    (void) flags;
    if (lx == 0 || ly == 0 || lz == 0 || gx % lx || gy % ly || gz % lz) {
        return hipErrorInvalidConfiguration;
    }
    int e = record_if(start, stream);
    if (e == hipSuccess) {
        e = launch(f, gx / lx, gy / ly, gz / lz, lx, ly, lz, (unsigned) shared, stream, params, extra);
    }
    return e == hipSuccess ? record_if(stop, stream) : e;
}

/* ------------------------------------------------------------------ memory */

static int copy_async(void *dst, const void *src, size_t bytes, int kind, void *stream) {
    if (kind < 0 || kind > 4) {
        return hipErrorInvalidMemcpyDirection;
    }
    if (bytes > 0 && (dst == NULL || src == NULL)) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&g_mu);
    struct stream *s;
    int e = resolve_stream(stream, &s);
    if (e == hipSuccess) {
        struct op *o = calloc(1, sizeof(*o));
        if (o == NULL) {
            e = hipErrorOutOfMemory;
        } else {
            o->type = OP_COPY;
            o->dst = dst;
            o->src = src;
            o->bytes = bytes;
            enqueue(s, o);
        }
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

static int set_async(void *dst, int value, size_t bytes, int width, void *stream) {
    if (bytes > 0 && dst == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&g_mu);
    struct stream *s;
    int e = resolve_stream(stream, &s);
    if (e == hipSuccess) {
        struct op *o = calloc(1, sizeof(*o));
        if (o == NULL) {
            e = hipErrorOutOfMemory;
        } else {
            o->type = OP_MEMSET;
            o->dst = dst;
            o->value = value;
            o->bytes = bytes;
            o->width = width;
            enqueue(s, o);
        }
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

EXPORT int hipMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, void *stream) {
    return copy_async(dst, src, bytes, kind, stream);
}

EXPORT int hipMemcpyAsync_spt(void *dst, const void *src, size_t bytes, int kind, void *stream) {
    return copy_async(dst, src, bytes, kind, stream ? stream : (void *) 2);
}

EXPORT int hipMemcpyHtoDAsync(void *dst, void *src, size_t bytes, void *stream) {
    return copy_async(dst, src, bytes, 1, stream);
}

EXPORT int hipMemcpyDtoHAsync(void *dst, void *src, size_t bytes, void *stream) {
    return copy_async(dst, src, bytes, 2, stream);
}

EXPORT int hipMemcpyDtoDAsync(void *dst, void *src, size_t bytes, void *stream) {
    return copy_async(dst, src, bytes, 3, stream);
}

/* Asynchronous in name only in HIP too: returns once the copy is done. With XQ_HIPDOUBLE_PLT=1
 * it calls the exported hipMemcpyAsync (through the PLT, so an interposer sees that call too), as
 * a runtime whose entry points call each other would. */
EXPORT int hipMemcpyWithStream(void *dst, const void *src, size_t bytes, int kind, void *stream) {
    int e = env_int("XQ_HIPDOUBLE_PLT", 0) == 1 ? hipMemcpyAsync(dst, src, bytes, kind, stream)
                                                 : copy_async(dst, src, bytes, kind, stream);
    return e == hipSuccess ? sync_stream(stream) : e;
}

EXPORT int hipMemsetAsync(void *dst, int value, size_t bytes, void *stream) {
    return set_async(dst, value, bytes, 1, stream);
}

EXPORT int hipMemsetAsync_spt(void *dst, int value, size_t bytes, void *stream) {
    return set_async(dst, value, bytes, 1, stream ? stream : (void *) 2);
}

EXPORT int hipMemsetD8Async(void *dst, unsigned char value, size_t count, void *stream) {
    return set_async(dst, value, count, 1, stream);
}

EXPORT int hipMemsetD16Async(void *dst, unsigned short value, size_t count, void *stream) {
    return set_async(dst, value, count, 2, stream);
}

EXPORT int hipMemsetD32Async(void *dst, int value, size_t count, void *stream) {
    return set_async(dst, value, count, 4, stream);
}

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
    pthread_mutex_lock(&g_mu);
    if (device >= 0 && bytes > DEVICE_BYTES - allocated_on(device)) {
        pthread_mutex_unlock(&g_mu);
        return hipErrorOutOfMemory;
    }
    for (int i = 0; i < MAX_ALLOCS; i++) {
        if (g_allocs[i].p == NULL) {
            void *p = calloc(1, bytes == 0 ? 1 : bytes);
            if (p == NULL) {
                pthread_mutex_unlock(&g_mu);
                return hipErrorOutOfMemory;
            }
            g_allocs[i].p = p;
            g_allocs[i].bytes = bytes;
            g_allocs[i].device = device;
            *ptr = p;
            pthread_mutex_unlock(&g_mu);
            return hipSuccess;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return hipErrorOutOfMemory;
}

static int mem_free(void *p, int host) {
    if (p == NULL) {
        return hipSuccess;
    }
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < MAX_ALLOCS; i++) {
        if (g_allocs[i].p == p && (g_allocs[i].device < 0) == host) {
            free(p);
            g_allocs[i].p = NULL;
            pthread_mutex_unlock(&g_mu);
            return hipSuccess;
        }
    }
    g_bad_frees++;
    pthread_mutex_unlock(&g_mu);
    return hipErrorInvalidValue;
}

EXPORT int hipMalloc(void **ptr, size_t bytes) {
    int d = t_current_device;
    if (d < 0 || d >= g_devices) {
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
    int d = t_current_device;
    if (d < 0 || d >= g_devices) {
        return hipErrorInvalidDevice;
    }
    pthread_mutex_lock(&g_mu);
    *total = DEVICE_BYTES;
    *free_bytes = DEVICE_BYTES - allocated_on(d);
    pthread_mutex_unlock(&g_mu);
    return hipSuccess;
}

/* ------------------------------------------------------------------ host functions, graphs */

static int hostfn(void *stream, void (*fn)(void *), void *data) {
    if (fn == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&g_mu);
    struct stream *s;
    int e = resolve_stream(stream, &s);
    if (e == hipSuccess) {
        struct op *o = calloc(1, sizeof(*o));
        if (o == NULL) {
            e = hipErrorOutOfMemory;
        } else {
            o->type = OP_HOSTFN;
            o->hostfn = fn;
            o->data = data;
            enqueue(s, o);
        }
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

EXPORT int hipLaunchHostFunc(void *stream, void (*fn)(void *), void *data) { return hostfn(stream, fn, data); }

EXPORT int hipLaunchHostFunc_spt(void *stream, void (*fn)(void *), void *data) {
    return hostfn(stream ? stream : (void *) 2, fn, data);
}

EXPORT int hipStreamBeginCapture(void *stream, int mode) {
    (void) mode;
    pthread_mutex_lock(&g_mu);
    struct stream *s;
    int e = resolve_stream(stream, &s);
    if (e == hipSuccess && s->capturing) {
        e = hipErrorInvalidValue;
    } else if (e == hipSuccess) {
        s->capturing = 1;
        s->cap_head = s->cap_tail = NULL;
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

EXPORT int hipStreamEndCapture(void *stream, void **graph) {
    if (graph == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&g_mu);
    struct stream *s;
    int e = resolve_stream(stream, &s);
    if (e == hipSuccess && !s->capturing) {
        e = hipErrorInvalidValue;
    } else if (e == hipSuccess) {
        struct graph *g = calloc(1, sizeof(*g));
        if (g == NULL) {
            e = hipErrorOutOfMemory;
        } else {
            g->ops = s->cap_head;
            *graph = g;
        }
        s->capturing = 0;
        s->cap_head = s->cap_tail = NULL;
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

/* An executable graph is a graph of its own: the double has nothing to compile. */
EXPORT int hipGraphInstantiate(void **exec, void *graph, void *error_node, char *log, size_t log_size) {
    (void) error_node;
    (void) log;
    (void) log_size;
    if (exec == NULL || graph == NULL) {
        return hipErrorInvalidValue;
    }
    struct graph *g = graph, *x = calloc(1, sizeof(*x));
    if (x == NULL) {
        return hipErrorOutOfMemory;
    }
    struct op **tail = &x->ops;
    for (struct op *o = g->ops; o != NULL; o = o->next) {
        struct op *c = malloc(sizeof(*c));
        if (c == NULL) {
            return hipErrorOutOfMemory;
        }
        *c = *o;
        c->next = NULL;
        *tail = c;
        tail = &c->next;
    }
    *exec = x;
    return hipSuccess;
}

static int graph_launch(void *exec, void *stream) {
    if (exec == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&g_mu);
    struct stream *s;
    int e = resolve_stream(stream, &s);
    for (struct op *o = ((struct graph *) exec)->ops; e == hipSuccess && o != NULL; o = o->next) {
        struct op *c = malloc(sizeof(*c));
        if (c == NULL) {
            e = hipErrorOutOfMemory;
            break;
        }
        *c = *o;
        enqueue(s, c);
    }
    pthread_mutex_unlock(&g_mu);
    return e;
}

EXPORT int hipGraphLaunch(void *exec, void *stream) { return graph_launch(exec, stream); }

EXPORT int hipGraphLaunch_spt(void *exec, void *stream) { return graph_launch(exec, stream ? stream : (void *) 2); }

static int graph_free(void *graph) {
    if (graph == NULL) {
        return hipErrorInvalidValue;
    }
    struct op *o = ((struct graph *) graph)->ops;
    while (o != NULL) {
        struct op *n = o->next;
        free(o);
        o = n;
    }
    free(graph);
    return hipSuccess;
}

EXPORT int hipGraphDestroy(void *graph) { return graph_free(graph); }

EXPORT int hipGraphExecDestroy(void *exec) { return graph_free(exec); }

/* ------------------------------------------------------------------ hipGetProcAddress */

/* hipGetProcAddress (ROCm 6.2+) for a few entry points: the pointers handed out are the library's
 * own (hidden aliases, so a preloaded definition of the same name does not stand in for them, as
 * with a runtime that looks up its own table); flag 2 (per-thread default stream) picks the _spt
 * twin where there is one. Status: 0 found, 1 not found. */
#define OWN(NAME) extern __typeof__(NAME) own_##NAME __attribute__((alias(#NAME)));
OWN(hipModuleLaunchKernel)
OWN(hipLaunchKernel)
OWN(hipLaunchKernel_spt)
OWN(hipMemcpyAsync)
OWN(hipMemcpyAsync_spt)
OWN(hipMemsetAsync)
OWN(hipMemsetAsync_spt)
OWN(hipStreamSynchronize)
#undef OWN

EXPORT int hipGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags, int *status) {
    static const struct { const char *name; void *fn, *spt; } table[] = {
        {"hipModuleLaunchKernel", (void *) own_hipModuleLaunchKernel, NULL},
        {"hipLaunchKernel", (void *) own_hipLaunchKernel, (void *) own_hipLaunchKernel_spt},
        {"hipMemcpyAsync", (void *) own_hipMemcpyAsync, (void *) own_hipMemcpyAsync_spt},
        {"hipMemsetAsync", (void *) own_hipMemsetAsync, (void *) own_hipMemsetAsync_spt},
        {"hipStreamSynchronize", (void *) own_hipStreamSynchronize, NULL},
    };
    (void) version;
    if (!symbol || !pfn) {
        return hipErrorInvalidValue;
    }
    *pfn = NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (!strcmp(symbol, table[i].name)) {
            *pfn = (flags & 2) && table[i].spt ? table[i].spt : table[i].fn;
        }
    }
    if (status) {
        *status = *pfn ? 0 : 1;
    }
    return *pfn ? hipSuccess : hipErrorInvalidValue;
}

/* ------------------------------------------------------------------ test-only controls */

/* Sets device count, compute units per device and the stream priority range. */
EXPORT void xqdouble_configure(int devices, int compute_units, int least, int greatest) {
    pthread_mutex_lock(&g_mu);
    g_devices = devices;
    g_compute_units = compute_units;
    g_least_priority = least;
    g_greatest_priority = greatest;
    pthread_mutex_unlock(&g_mu);
}

/* Live allocations: device memory (host = 0) or page-locked host memory (host = 1). */
EXPORT int xqdouble_live_allocations(int host) {
    int n = 0;
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < MAX_ALLOCS; i++) {
        n += g_allocs[i].p != NULL && (g_allocs[i].device < 0) == (host != 0);
    }
    pthread_mutex_unlock(&g_mu);
    return n;
}

/* Frees of memory that was not allocated (or was freed already). */
EXPORT int xqdouble_bad_frees(void) {
    pthread_mutex_lock(&g_mu);
    int n = g_bad_frees;
    pthread_mutex_unlock(&g_mu);
    return n;
}

/* Live streams + events + modules (default streams excluded): lets tests find leaks. */
EXPORT int xqdouble_live_handles(void) {
    int n = 0;
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < MAX_STREAMS; i++) {
        struct stream *s = &g_streams[i];
        int is_default = 0;
        for (int d = 0; d < 64; d++) {
            if (g_null_stream[d] == s) {
                is_default = 1;
            }
        }
        n += s->in_use && !is_default;
    }
    for (int i = 0; i < MAX_EVENTS; i++) {
        n += g_events[i].in_use;
    }
    for (int i = 0; i < MAX_MODULES; i++) {
        n += g_modules[i].in_use;
    }
    pthread_mutex_unlock(&g_mu);
    return n;
}
