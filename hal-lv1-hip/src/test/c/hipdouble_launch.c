/* The HIP test double's launch surface: modules, kernel launches, async copies/memsets, host functions, graphs. */
#include "hipdouble_internal.h"

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

/* A graph: the operations captured on a stream, run again in order at every launch. */
struct graph {
    struct op *ops;
};

struct module hd_modules[MAX_MODULES];
static struct function g_functions[MAX_FUNCTIONS];

static int valid_module(struct module *m) { return VALID(hd_modules, MAX_MODULES, m); }
static int valid_function(struct function *f) { return VALID(g_functions, MAX_FUNCTIONS, f); }

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
    int d = hd_current_device;
    if (d < 0 || d >= hd_devices) {
        return hipErrorNoDevice;
    }
    pthread_mutex_lock(&hd_mu);
    for (int i = 0; i < MAX_MODULES; i++) {
        struct module *m = &hd_modules[i];
        if (!m->in_use) {
            *m = parsed;
            m->in_use = 1;
            m->device = d;
            *module = m;
            pthread_mutex_unlock(&hd_mu);
            return hipSuccess;
        }
    }
    pthread_mutex_unlock(&hd_mu);
    return hipErrorOutOfMemory;
}

EXPORT int hipModuleGetFunction(void **function, void *module, const char *name) {
    if (function == NULL || name == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&hd_mu);
    struct module *m = module;
    if (!valid_module(m)) {
        pthread_mutex_unlock(&hd_mu);
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
        pthread_mutex_unlock(&hd_mu);
        return hipErrorNotFound;
    }
    for (int i = 0; i < MAX_FUNCTIONS; i++) {
        struct function *f = &g_functions[i];
        if (!f->in_use) {
            f->in_use = 1;
            f->module = m;
            f->fn = fn;
            *function = f;
            pthread_mutex_unlock(&hd_mu);
            return hipSuccess;
        }
    }
    pthread_mutex_unlock(&hd_mu);
    return hipErrorOutOfMemory;
}

EXPORT int hipModuleUnload(void *module) {
    pthread_mutex_lock(&hd_mu);
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
    pthread_mutex_unlock(&hd_mu);
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
    pthread_mutex_lock(&hd_mu);
    struct function *f = function;
    struct stream *s;
    int e = valid_function(f) ? hd_resolve_stream(stream, &s) : hipErrorInvalidHandle;
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
                pthread_mutex_unlock(&hd_mu);
                return hipErrorInvalidValue;
            }
            memcpy(o->args[i], params[i], (size_t) f->fn->sizes[i]);
        }
        o->type = OP_KERNEL;
        o->fn = f->fn;
        o->grid[0] = gx; o->grid[1] = gy; o->grid[2] = gz;
        o->block[0] = bx; o->block[1] = by; o->block[2] = bz;
        o->shared = shared;
        hd_enqueue(s, o);
    }
    pthread_mutex_unlock(&hd_mu);
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

EXPORT int hipExtLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shared, void *stream, void *start,
                              void *stop, int flags) {
    (void) flags;
    int e = hd_record_if(start, stream);
    if (e == hipSuccess) {
        e = launch((void *) f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned) shared, stream, args, NULL);
    }
    return e == hipSuccess ? hd_record_if(stop, stream) : e;
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
    int e = hd_record_if(start, stream);
    if (e == hipSuccess) {
        e = launch(f, gx / lx, gy / ly, gz / lz, lx, ly, lz, (unsigned) shared, stream, params, extra);
    }
    return e == hipSuccess ? hd_record_if(stop, stream) : e;
}

/* ------------------------------------------------------------------ async copies and memsets */

static int copy_async(void *dst, const void *src, size_t bytes, int kind, void *stream) {
    if (kind < 0 || kind > 4) {
        return hipErrorInvalidMemcpyDirection;
    }
    if (bytes > 0 && (dst == NULL || src == NULL)) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&hd_mu);
    struct stream *s;
    int e = hd_resolve_stream(stream, &s);
    if (e == hipSuccess) {
        struct op *o = calloc(1, sizeof(*o));
        if (o == NULL) {
            e = hipErrorOutOfMemory;
        } else {
            o->type = OP_COPY;
            o->dst = dst;
            o->src = src;
            o->bytes = bytes;
            hd_enqueue(s, o);
        }
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

static int set_async(void *dst, int value, size_t bytes, int width, void *stream) {
    if (bytes > 0 && dst == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&hd_mu);
    struct stream *s;
    int e = hd_resolve_stream(stream, &s);
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
            hd_enqueue(s, o);
        }
    }
    pthread_mutex_unlock(&hd_mu);
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
    int e = hd_env_int("XQ_HIPDOUBLE_PLT", 0) == 1 ? hipMemcpyAsync(dst, src, bytes, kind, stream)
                                                 : copy_async(dst, src, bytes, kind, stream);
    return e == hipSuccess ? hd_sync_stream(stream) : e;
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

/* ------------------------------------------------------------------ stream memory operations */

/* hipStreamWaitValue32 (flags: hipStreamWaitValueGte 0, Eq 1, And 2, Nor 3) and
 * hipStreamWriteValue32, in stream order: a wait stops what comes after it on the stream. */
static int value_op(void *stream, void *ptr, uint32_t value, int type, unsigned cmp, uint32_t mask) {
    if (ptr == NULL || cmp > 3) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&hd_mu);
    struct stream *s;
    int e = hd_resolve_stream(stream, &s);
    if (e == hipSuccess) {
        struct op *o = calloc(1, sizeof(*o));
        if (o == NULL) {
            e = hipErrorOutOfMemory;
        } else {
            o->type = type;
            o->dst = ptr;
            o->value = (int) value;
            o->cmp = cmp;
            o->mask = mask;
            hd_enqueue(s, o);
        }
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

EXPORT int hipStreamWaitValue32(void *stream, void *ptr, uint32_t value, unsigned flags, uint32_t mask) {
    return value_op(stream, ptr, value, OP_WAITVAL, flags, mask);
}

EXPORT int hipStreamWriteValue32(void *stream, void *ptr, uint32_t value, unsigned flags) {
    return flags != 0 ? hipErrorInvalidValue : value_op(stream, ptr, value, OP_WRITEVAL, 0, 0xffffffffu);
}

/* ------------------------------------------------------------------ host functions, graphs */

static int hostfn(void *stream, void (*fn)(void *), void *data) {
    if (fn == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&hd_mu);
    struct stream *s;
    int e = hd_resolve_stream(stream, &s);
    if (e == hipSuccess) {
        struct op *o = calloc(1, sizeof(*o));
        if (o == NULL) {
            e = hipErrorOutOfMemory;
        } else {
            o->type = OP_HOSTFN;
            o->hostfn = fn;
            o->data = data;
            hd_enqueue(s, o);
        }
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

EXPORT int hipLaunchHostFunc(void *stream, void (*fn)(void *), void *data) { return hostfn(stream, fn, data); }

EXPORT int hipLaunchHostFunc_spt(void *stream, void (*fn)(void *), void *data) {
    return hostfn(stream ? stream : (void *) 2, fn, data);
}

EXPORT int hipStreamBeginCapture(void *stream, int mode) {
    (void) mode;
    pthread_mutex_lock(&hd_mu);
    struct stream *s;
    int e = hd_resolve_stream(stream, &s);
    if (e == hipSuccess && s->capturing) {
        e = hipErrorInvalidValue;
    } else if (e == hipSuccess) {
        s->capturing = 1;
        s->cap_head = s->cap_tail = NULL;
    }
    pthread_mutex_unlock(&hd_mu);
    return e;
}

EXPORT int hipStreamEndCapture(void *stream, void **graph) {
    if (graph == NULL) {
        return hipErrorInvalidValue;
    }
    pthread_mutex_lock(&hd_mu);
    struct stream *s;
    int e = hd_resolve_stream(stream, &s);
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
    pthread_mutex_unlock(&hd_mu);
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
    pthread_mutex_lock(&hd_mu);
    struct stream *s;
    int e = hd_resolve_stream(stream, &s);
    for (struct op *o = ((struct graph *) exec)->ops; e == hipSuccess && o != NULL; o = o->next) {
        struct op *c = malloc(sizeof(*c));
        if (c == NULL) {
            e = hipErrorOutOfMemory;
            break;
        }
        *c = *o;
        hd_enqueue(s, c);
    }
    pthread_mutex_unlock(&hd_mu);
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
#undef OWN

EXPORT int hipGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags, int *status) {
    static const struct { const char *name; void *fn, *spt; } table[] = {
        {"hipModuleLaunchKernel", (void *) own_hipModuleLaunchKernel, NULL},
        {"hipLaunchKernel", (void *) own_hipLaunchKernel, (void *) own_hipLaunchKernel_spt},
        {"hipMemcpyAsync", (void *) own_hipMemcpyAsync, (void *) own_hipMemcpyAsync_spt},
        {"hipMemsetAsync", (void *) own_hipMemsetAsync, (void *) own_hipMemsetAsync_spt},
        {"hipStreamSynchronize", (void *) hd_own_hipStreamSynchronize, NULL},
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
