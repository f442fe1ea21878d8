/* What the HIP test double's units (hipdouble*.c) share: types, state and helpers, none exported. */
#ifndef XQ_HIPDOUBLE_INTERNAL_H
#define XQ_HIPDOUBLE_INTERNAL_H
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

/* Names shared between the units: prefix hd_, never exported. */
#define HD_HIDDEN __attribute__((visibility("hidden")))

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

enum op_type { OP_KERNEL = 1, OP_COPY, OP_MEMSET, OP_EVENT, OP_HOSTFN, OP_WAIT, OP_WAITVAL, OP_WRITEVAL };

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
    /* OP_WAITVAL: until (*dst & mask) compares with value by cmp (0 >=, 1 ==, 2 & != 0, 3 ~(|) != 0);
     * OP_WRITEVAL: *dst = value (both 32 bits) */
    uint32_t mask;
    unsigned cmp;
    /* host function */
    void (*hostfn)(void *);
    void *data;
    /* event: recorded (OP_EVENT), or waited for (OP_WAIT: until the record of generation gen ends) */
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
    int stalled;    /* waiting for an event (hipStreamWaitEvent) or its KFD queue suspended: not ahead of others */
    uint64_t ticket;
    int capturing;
    struct op *cap_head, *cap_tail; /* operations captured since hipStreamBeginCapture */
    uint32_t kfd_queue;             /* XQ_HIPDOUBLE_KFD=1: its queue in the fake KFD */
};

enum { EV_NEVER = 0, EV_PENDING, EV_DONE };

struct event {
    int in_use;
    int device;
    unsigned flags;
    int state;
    uint64_t gen;
    uint64_t born;     /* gen when created: a wait from a former occupant of the slot ends */
    /* the generations recorded and not ended yet (records on different streams end in any order:
     * a wait is for its own record's end, hipStreamWaitEvent) */
    uint64_t pend[256];
    int npend;
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

/* The state of the double (hipdouble_engine.c; hd_modules: hipdouble_launch.c). */
HD_HIDDEN extern pthread_mutex_t hd_mu;
HD_HIDDEN extern pthread_cond_t hd_done;
HD_HIDDEN extern struct stream hd_streams[MAX_STREAMS];
HD_HIDDEN extern struct module hd_modules[MAX_MODULES];
/* Per device: the lazily created stream that a NULL stream handle means. */
HD_HIDDEN extern struct stream *hd_null_stream[64];
HD_HIDDEN extern int hd_devices;
HD_HIDDEN extern int hd_compute_units;
HD_HIDDEN extern int hd_least_priority;
HD_HIDDEN extern int hd_greatest_priority;
HD_HIDDEN extern __thread int hd_current_device;

/* Handle checks: a handle is valid only if it points at a live slot of its table. */
#define VALID(table, max, p) \
    ((p) != NULL && (void *) (p) >= (void *) &table[0] && (void *) (p) < (void *) &table[max] \
     && (((char *) (p) - (char *) &table[0]) % sizeof(table[0])) == 0 && (p)->in_use)

static inline int valid_stream(struct stream *s) { return VALID(hd_streams, MAX_STREAMS, s); }

/* hipdouble_engine.c */
HD_HIDDEN int hd_env_int(const char *name, int fallback);
HD_HIDDEN void hd_enqueue(struct stream *s, struct op *o);
HD_HIDDEN int hd_new_stream(int device, unsigned flags, int priority, struct stream **out);
HD_HIDDEN int hd_resolve_stream(void *handle, struct stream **out);
/* hipdouble.c */
HD_HIDDEN int hd_sync_stream(void *stream);
HD_HIDDEN int hd_record_if(void *event, void *stream);
HD_HIDDEN int hd_own_hipStreamSynchronize(void *stream); /* hipStreamSynchronize's hidden alias */

#endif
