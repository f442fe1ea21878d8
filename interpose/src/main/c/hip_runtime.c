/*
 * hip_runtime.c: glibc's own dlsym, the HIP runtime's definitions of the names we wrap, and
 * the runtime entry points the interposer calls itself (xqh_hip, resolved once); our threads.
 */
#include "hip_int.h"

int xq_log_level = 1; /* XQ_LOG (xq_wire.h) */
__thread pid_t xqh_t_tid; /* my_tid() (hip_int.h) */
struct xqh_runtime xqh_hip; /* the runtime entry points the interposer calls itself (hip_int.h) */

void xqh_spawn(void *(*fn)(void *))
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&t, &a, fn, NULL);
    if (e) xlog(1, "xq: cannot start a thread: %s", strerror(e));
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ------------------------------------------------------------------ the HIP runtime */

int xqh_is_ours(void *p)
{
    static void *self;
    Dl_info a, b;
    if (!self && dladdr((void *)xqh_is_ours, &a)) self = a.dli_fbase;
    return p && dladdr(p, &b) && b.dli_fbase == self;
}

/* glibc's own dlsym: our lookups never go through an exported dlsym (ours answers a
 * libamdhip64 handle with our wrappers; libxq-cuda's may pass names on to ours). */
typedef void *(*dlsym_t)(void *, const char *);
dlsym_t xqh_dlsym_glibc;

__attribute__((noinline)) void *xqh_real_dlsym(void *h, const char *name)
{
    dlsym_t f = LD(&xqh_dlsym_glibc);
    if (!f) {
        f = (dlsym_t)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!f) f = (dlsym_t)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        if (!f) return NULL;
        ST(&xqh_dlsym_glibc, f);
    }
    void *r = f(h, name); /* not a tail call: for RTLD_NEXT glibc takes the caller (us) from here */
    __asm__ volatile("" ::: "memory");
    return r;
}

/* The runtime's definition of name: the next one after us, or, when libamdhip64 is not in the
 * global scope (a library linking it was dlopened RTLD_LOCAL, as Python loads extensions), the
 * loaded library's own. NULL when neither has it. */
void *xqh_hip_sym(const char *name)
{
    void *r = xqh_real_dlsym(RTLD_NEXT, name);
    if (r && !xqh_is_ours(r)) return r;
    static const char *const libs[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
    for (unsigned i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        r = xqh_real_dlsym(h, name);
        dlclose(h);
        if (r && !xqh_is_ours(r)) return r;
    }
    return NULL;
}

/* The runtime entry points the interposer calls itself (never wrapped ones). */
int xqh_hip_state; /* 0 unresolved, 1 ready, -1 missing: run untracked */
pthread_mutex_t xqh_hip_mu = PTHREAD_MUTEX_INITIALIZER;

int xqh_hip_resolve(void)
{
    int s = LD(&xqh_hip_state);
    if (s) return s > 0;
    pthread_mutex_lock(&xqh_hip_mu);
    if (!xqh_hip_state) {
#define H(field, name) (*(void **)&xqh_hip.field = xqh_hip_sym(name))
        int ok = H(EventCreateWithFlags, "hipEventCreateWithFlags") && H(EventRecord, "hipEventRecord") &&
                 H(EventQuery, "hipEventQuery") && H(EventDestroy, "hipEventDestroy") &&
                 H(GetDevice, "hipGetDevice") && H(StreamGetPriority, "hipStreamGetPriority") &&
                 H(PriorityRange, "hipDeviceGetStreamPriorityRange");
        H(StreamGetDevice, "hipStreamGetDevice");
        H(DeviceGetPCIBusId, "hipDeviceGetPCIBusId");
#undef H
        if (!ok) xlog(1, "xq: HIP runtime entry points missing; running unscheduled");
        ST(&xqh_hip_state, ok ? 1 : -1);
    }
    pthread_mutex_unlock(&xqh_hip_mu);
    return xqh_hip_state > 0;
}
