/* The HIP test double's machinery: shared state, stream workers, per-device engine, kernels' CPU bodies, fake KFD. */
#include "hipdouble_internal.h"

pthread_mutex_t hd_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t hd_done = PTHREAD_COND_INITIALIZER;
struct stream hd_streams[MAX_STREAMS];
struct stream *hd_null_stream[64];
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

int hd_devices = 1;
int hd_compute_units = 4;
int hd_least_priority = 1;
int hd_greatest_priority = -1;
__thread int hd_current_device = 0;

int hd_env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') {
        return fallback;
    }
    char *end;
    long n = strtol(v, &end, 10);
    return *end == '\0' ? (int) n : fallback;
}

__attribute__((constructor)) static void init_from_env(void) {
    hd_devices = hd_env_int("XQ_HIPDOUBLE_DEVICES", 1);
    if (hd_devices < 0 || hd_devices > 64) {
        hd_devices = 1;
    }
    hd_compute_units = hd_env_int("XQ_HIPDOUBLE_CUS", 4);
    g_kfd_on = hd_env_int("XQ_HIPDOUBLE_KFD", 0) == 1;
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
 * Caller holds hd_mu. */
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
        pthread_mutex_lock(&hd_mu);
        s->pending_fault = hipErrorLaunchFailure;
        pthread_mutex_unlock(&hd_mu);
        break;
    }
}

/* Whether another stream of the device should have the engine before s. Caller holds hd_mu. */
static int someone_ahead(struct stream *s) {
    for (int i = 0; i < MAX_STREAMS; i++) {
        struct stream *o = &hd_streams[i];
        if (o == s || !o->in_use || o->device != s->device) {
            continue;
        }
        if ((o->priority < s->priority && o->engine_ops > 0 && !o->stalled)
            || (o->priority == s->priority && o->wants_engine && o->ticket < s->ticket)) {
            return 1;
        }
    }
    return 0;
}

/* Caller holds hd_mu. */
static void acquire_engine(struct stream *s) {
    s->wants_engine = 1;
    s->ticket = g_next_ticket++;
    while (g_engine_busy[s->device] || someone_ahead(s)) {
        pthread_cond_wait(&g_engine_free, &hd_mu);
    }
    s->wants_engine = 0;
    g_engine_busy[s->device] = 1;
}

/* Caller holds hd_mu. */
static void release_engine(struct stream *s) {
    g_engine_busy[s->device] = 0;
    pthread_cond_broadcast(&g_engine_free);
}

/* Kernels, copies and memsets take the engine; events, host functions and waits do not (a host
 * function counted as engine work was never uncounted, and kept lower priorities waiting). */
static int uses_engine(int type) {
    return type != OP_EVENT && type != OP_HOSTFN && type != OP_WAIT && type != OP_WAITVAL && type != OP_WRITEVAL;
}

/* Whether the record of generation gen of ev has not ended yet. Caller holds hd_mu. */
static int ev_pending(const struct event *ev, uint64_t gen) {
    for (int i = 0; i < ev->npend; i++)
        if (ev->pend[i] == gen) {
            return 1;
        }
    return 0;
}

/* Whether a hipStreamWaitValue32 is satisfied. */
static int value_ok(const struct op *o) {
    uint32_t v = __atomic_load_n((const uint32_t *) o->dst, __ATOMIC_ACQUIRE) & o->mask;
    switch (o->cmp) {
    case 0: return v >= (uint32_t) o->value;
    case 1: return v == (uint32_t) o->value;
    case 2: return (v & (uint32_t) o->value) != 0;
    default: return ~(v | (uint32_t) o->value) != 0;
    }
}

static void *worker(void *arg) {
    struct stream *s = arg;
    pthread_mutex_lock(&hd_mu);
    for (;;) {
        while (s->head == NULL && !s->stopping) {
            pthread_cond_wait(&s->wake, &hd_mu);
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
        int engine = uses_engine(o->type);
        if (s->kfd_queue != 0) {
            /* a suspended queue runs nothing, not even its event packets */
            if (kfd_suspended(s->kfd_queue)) {
                s->stalled = 1; /* lower priorities go on meanwhile */
                pthread_cond_broadcast(&g_engine_free);
                pthread_mutex_unlock(&hd_mu);
                while (kfd_suspended(s->kfd_queue)) {
                    struct timespec ts = {0, 200000};
                    nanosleep(&ts, NULL);
                }
                pthread_mutex_lock(&hd_mu);
                s->stalled = 0;
            }
        }
        if (o->type == OP_WAIT) {
            s->stalled = 1;
            pthread_cond_broadcast(&g_engine_free);
            while (o->ev->in_use && o->ev->born <= o->gen && ev_pending(o->ev, o->gen)) {
                pthread_cond_wait(&hd_done, &hd_mu); /* every op's end is broadcast */
            }
            s->stalled = 0;
        }
        if (o->type == OP_WAITVAL && !value_ok(o)) { /* the queue's front stops until the word matches */
            s->stalled = 1;
            pthread_cond_broadcast(&g_engine_free);
            pthread_mutex_unlock(&hd_mu);
            while (!value_ok(o)) {
                struct timespec ts = {0, 50000};
                nanosleep(&ts, NULL);
            }
            pthread_mutex_lock(&hd_mu);
            s->stalled = 0;
        }
        if (o->type == OP_WRITEVAL) {
            __atomic_store_n((uint32_t *) o->dst, (uint32_t) o->value, __ATOMIC_RELEASE);
        }
        if (engine) {
            acquire_engine(s);
        }
        pthread_mutex_unlock(&hd_mu);
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
        pthread_mutex_lock(&hd_mu);
        if (engine) {
            s->engine_ops--;
            release_engine(s);
        }
        if (o->type == OP_EVENT) { /* this record has ended */
            struct event *ev = o->ev;
            for (int i = 0; i < ev->npend; i++)
                if (ev->pend[i] == o->gen) {
                    ev->pend[i] = ev->pend[--ev->npend];
                    break;
                }
        }
        if (o->type == OP_EVENT && o->ev->in_use && o->ev->gen == o->gen) {
            o->ev->time_ns = now_ns();
            o->ev->error = s->pending_fault;
            o->ev->state = EV_DONE;
            s->pending_fault = hipSuccess;
        }
        s->busy = 0;
        free(o);
        pthread_cond_broadcast(&hd_done);
    }
    pthread_mutex_unlock(&hd_mu);
    return NULL;
}

/* Caller holds hd_mu. */
void hd_enqueue(struct stream *s, struct op *o) {
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
    if (uses_engine(o->type)) {
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
    if (p < hd_greatest_priority) {
        return hd_greatest_priority;
    }
    if (p > hd_least_priority) {
        return hd_least_priority;
    }
    return p;
}

/* Caller holds hd_mu. */
int hd_new_stream(int device, unsigned flags, int priority, struct stream **out) {
    for (int i = 0; i < MAX_STREAMS; i++) {
        struct stream *s = &hd_streams[i];
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

/* Resolves a stream argument (NULL = the device's default stream). Caller holds hd_mu. */
int hd_resolve_stream(void *handle, struct stream **out) {
    if (handle == (void *) 2) { /* hipStreamPerThread */
        int d = hd_current_device;
        if (d < 0 || d >= hd_devices) {
            return hipErrorInvalidDevice;
        }
        if (t_ptds[d] == NULL) {
            int e = hd_new_stream(d, 0, 0, &t_ptds[d]);
            if (e != hipSuccess) {
                return e;
            }
        }
        *out = t_ptds[d];
        return hipSuccess;
    }
    if (handle == NULL) {
        int d = hd_current_device;
        if (d < 0 || d >= hd_devices) {
            return hipErrorInvalidDevice;
        }
        if (hd_null_stream[d] == NULL) {
            int e = hd_new_stream(d, 0, 0, &hd_null_stream[d]);
            if (e != hipSuccess) {
                return e;
            }
        }
        *out = hd_null_stream[d];
        return hipSuccess;
    }
    struct stream *s = handle;
    if (!valid_stream(s)) {
        return hipErrorInvalidHandle;
    }
    *out = s;
    return hipSuccess;
}
