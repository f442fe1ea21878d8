/* test_cuda_defer.c: deferred launches (XQ_DEFER): behind a gate or a threshold; attribute calls that wait or not. */
#define _GNU_SOURCE
#include "test_cuda.h"

/* Through cuGetProcAddress (as the CUDA runtime calls), a closed gate defers launches instead of
 * holding the thread: one thread has its four kernels of a task pending at once and waits in
 * cuStreamSynchronize (a trampoline), nothing reaches the device while the gate is closed, and
 * GATE makes them all (a task is only kernels here: a copy is never deferred, it would wait).
 * Without XQ_DEFER=1 (defer 0; XQ_DEFER=0 as well): the thread is held in the first launch
 * instead, one pending. */
static void defer_gate_waiting(int defer, const char *wait)
{
    tn_start(SOCK, 16);
    app a;
    start(&a,
          defer == 2 ? (const char *[]){"XQ_LOG=2", "XQ_TEST_DEFAULTS=1", NULL}
          : defer    ? (const char *[]){"XQ_LOG=2", "XQ_DEFER=1", NULL}
                     : (const char *[]){"XQ_LOG=2", NULL},
          (const char *[]){"--via", "procaddress", "--stream", "new", "--tasks", "40", "--kernels", "4", "--us",
                           "300", "--wait", wait, NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, launched_20, 3.0), "the app did not get going");
    if (!s) {
        finish(&a, 1);
        return;
    }
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST); /* suspended, as the node does it */
    pause_s(0.05);
    uint64_t l0 = LD(&s->launched);
    unsigned maxp = 0;
    for (double end = tn_now() + 0.25; tn_now() < end;) {
        unsigned p = LD(&s->pending);
        maxp = p > maxp ? p : maxp;
    }
    CHECK(LD(&s->launched) == l0, "launched %lu -> %lu while the gate was closed", (unsigned long)l0,
          (unsigned long)LD(&s->launched));
    CHECK(!exited(&a), "the app finished with its gate closed");
    CHECK(LD(&s->in_flight) == 0, "in flight %u with the gate closed for 250 ms", LD(&s->in_flight));
    if (defer)
        CHECK(maxp >= 2 && maxp <= 4, "pending at most %u with one thread (want 2..4: deferred)", maxp);
    else
        CHECK(maxp == 1, "pending at most %u with one thread (want 1: held)", maxp);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    tn_send(0, gate);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(LD(&s->launched) == 40 * 4 && LD(&s->completed) == 40 * 4 && LD(&s->pending) == 0,
          "launched %lu completed %lu pending %u (want 160, 160, 0)", (unsigned long)LD(&s->launched),
          (unsigned long)LD(&s->completed), LD(&s->pending));
    const char *err = slurp(a.err);
    if (defer) {
        const char *d = strstr(err, "launches deferred");
        CHECK(d && (strcmp(wait, "stream") || strstr(err, "cuStreamSynchronize waited")), "stderr: %s", err);
        const char *e = d ? memchr(d, '\n', strlen(d)) : NULL;
        printf("    %u pending at once with one thread; %.*s\n", maxp, d && e ? (int)(e - d) : 0, d ? d : "");
        /* the host time: the deferred calls counted as such, the 250 ms held not in the interposer's time */
        unsigned long long calls = 0, deferred = 0;
        double all = -1, per = -1, dms = -1;
        const char *h = strstr(err, "host time in the interposer: ");
        CHECK(h && sscanf(h, "host time in the interposer: %llu calls through the gate, %lf ms in all, %lf ns a call", &calls,
                          &all, &per) == 3, "no host time summary: %s", err);
        const char *q = h ? strstr(h, " deferred, ") : NULL;
        while (q && q > h && q[-1] != ' ') q--;
        CHECK(q && sscanf(q, "%llu deferred, %lf ms", &deferred, &dms) == 2, "no deferred figures: %s", h ? h : "");
        CHECK(deferred >= 1 && calls + deferred >= 160 && all >= 0 && all + dms < 100,
              "%llu calls and %llu deferred (want 160 in all, some deferred), %.1f + %.1f ms (want the 250 ms held left out)",
              calls, deferred, all, dms);
    } else
        CHECK(!strstr(err, "launches deferred"), "XQ_DEFER=0 deferred: %s", err);
}
static void defer_gate(int defer) { defer_gate_waiting(defer, "stream"); }
void test_defer_gate(void) { defer_gate(1); }
/* Each task ending in the context's synchronize as cudaDeviceSynchronize makes it under CUDA 13
 * (cuCtxSynchronize looked up at version 13000, its _v2): it waits for the deferred launches
 * too, so one task's four are pending at most behind the closed gate. Handed back bare (session
 * 115's H100 diagnosis) it returned at once, and the tasks ran on ahead of the device. */
void test_defer_gate_ctx13(void) { defer_gate_waiting(1, "ctx13"); }
void test_defer_off(void) { defer_gate(0); }
void test_defer_by_default(void) { defer_gate(2); } /* no XQ_DEFER: deferral is the default */

/* threshold 2, batch 1: the thread defers past the threshold, in flight never exceeds it, every
 * command is made once, in order (the check), on the legacy stream and on the per-thread one
 * (never deferred: the tracker cannot launch on another thread's stream) alike. */
static void defer_threshold(const char *stream, int ex)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 2, 1, 0);
    app a;
    start(&a, (const char *[]){"XQ_DEFER=1", NULL}, (const char *[]){"--via", "procaddress", "--stream", stream, "--tasks", "30", "--kernels", "6",
                                      "--us", "200", "--check", "--linger-ms", "100",
                                                                     ex ? "--ex" : NULL, NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    unsigned max = 0, maxp = 0;
    while (s && !exited(&a)) {
        unsigned n = LD(&s->in_flight), p = LD(&s->pending);
        max = n > max ? n : max, maxp = p > maxp ? p : maxp;
    }
    CHECK(s && finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    CHECK(max <= 2, "max in flight %u, threshold 2", max);
    CHECK(!strcmp(stream, "ptds") ? maxp == 1 : maxp >= 2, "stream %s: pending at most %u", stream, maxp);
    CHECK(s && s->launched == 30 * 10 && s->completed == 30 * 10, "launched %lu completed %lu (want 300)",
          s ? (unsigned long)s->launched : 0, s ? (unsigned long)s->completed : 0);
}
void test_defer_threshold(void) { defer_threshold("new", 0); }
void test_defer_threshold_legacy_ex(void) { defer_threshold("default", 1); }
void test_defer_ptds_held(void) { defer_threshold("ptds", 0); }

/* the node dies while launches are deferred behind a closed gate: they are made at once */
void test_defer_node_killed(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, (const char *[]){"XQ_DEFER=1", NULL}, (const char *[]){"--via", "procaddress", "--stream", "new", "--tasks",
                                                                     "40", "--kernels", "4", "--us", "300", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, launched_20, 3.0), "the app did not get going");
    if (s) {
        __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
        pause_s(0.1);
        CHECK(LD(&s->pending) >= 2, "pending %u (want deferred launches)", LD(&s->pending));
    }
    tn_kill();
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"tasks\":40"), "output: %s", slurp(a.out));
}

/* cuKernelSetAttribute before each launch, as the CUDA runtime does for kernels with a dynamic
 * shared memory limit: with the same value every time ("same"), or on another kernel than the
 * deferred ones ("other"), it does not wait for deferred launches (four pending at once behind a
 * closed gate); a changed value of a kernel with a deferred launch ("alternate": 96 and 64 KiB in
 * turn, each launch asking for its limit) waits until that launch was made, or the fake driver
 * refuses the 96 KiB launch made after the limit fell to 64 KiB (a failed launch). all: with
 * XQ_ATTR_WAIT=all every call waits, as before. */
static void defer_attr(const char *mode, int all)
{
    tn_start(SOCK, 16);
    app a;
    start(&a,
          all ? (const char *[]){"XQ_LOG=2", "XQ_TEST_DEFAULTS=1", "XQ_ATTR_WAIT=all", NULL}
              : (const char *[]){"XQ_LOG=2", "XQ_TEST_DEFAULTS=1", NULL},
          (const char *[]){"--via", "procaddress", "--stream", "new", "--tasks", "40", "--kernels", "4", "--us", "300",
                           "--attr", mode, NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, launched_20, 3.0), "the app did not get going: %s", slurp(a.err));
    if (!s) {
        finish(&a, 1);
        return;
    }
    __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
    pause_s(0.05);
    uint64_t l0 = LD(&s->launched);
    unsigned maxp = 0;
    for (double end = tn_now() + 0.25; tn_now() < end;) {
        unsigned p = LD(&s->pending);
        maxp = p > maxp ? p : maxp;
    }
    CHECK(LD(&s->launched) == l0, "launched %lu -> %lu while the gate was closed", (unsigned long)l0,
          (unsigned long)LD(&s->launched));
    int waits = all || !strcmp(mode, "alternate");
    if (waits)
        CHECK(maxp == 1, "%s%s: pending at most %u behind a closed gate (want 1: the attribute call waited)", mode,
              all ? " XQ_ATTR_WAIT=all" : "", maxp);
    else
        CHECK(maxp >= 2 && maxp <= 4, "%s: pending at most %u behind a closed gate (want 2..4: deferred, no wait)", mode,
              maxp);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    tn_send(0, gate);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(LD(&s->launched) == 160 && LD(&s->completed) == 160 && LD(&s->failed) == 0,
          "launched %lu completed %lu failed %lu (want 160, 160, 0)", (unsigned long)LD(&s->launched),
          (unsigned long)LD(&s->completed), (unsigned long)LD(&s->failed));
    const char *err = slurp(a.err);
    CHECK(strstr(err, "cuKernelSetAttribute called 160 times"), "stderr: %s", err);
    CHECK(!waits == !strstr(err, "cuKernelSetAttribute waited"), "%s: stderr: %s", mode, err);
    CHECK(!strstr(err, "failed when made"), "stderr: %s", err);
    const char *d = strstr(err, "cuKernelSetAttribute called");
    const char *e = d ? strchr(d, '\n') : NULL;
    printf("    %s%s: %u pending at once; %.*s\n", mode, all ? " (XQ_ATTR_WAIT=all)" : "", maxp,
           d && e ? (int)(e - d) : 0, d ? d : "");
}
void test_defer_attr_same(void) { defer_attr("same", 0); }
void test_defer_attr_other(void) { defer_attr("other", 0); }
void test_defer_attr_alternate(void) { defer_attr("alternate", 0); }
void test_defer_attr_all(void) { defer_attr("same", 1); }

/* Small copies deferred (XQ_DEFER_COPIES): behind a closed gate, a task's host-to-device copy,
 * its four kernels, a device-to-device copy and the increment are all pending at once (the
 * device-to-host copy into pageable memory is the first call that waits), where without it the
 * thread waits at the first copy; the host source is overwritten as soon as its copy returns
 * (--scribble), so a copy deferred without its source taken at the call gives wrong results.
 * Gate closed five times for 60 ms; the app checks every task's output (--check). */
static void defer_copies(int on)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, on == 2 ? (const char *[]){"XQ_LOG=2", "XQ_DEFER=1", "XQ_DEFER_COPIES=-5", NULL}
          : on       ? (const char *[]){"XQ_LOG=2", "XQ_DEFER=1", NULL}
                     : (const char *[]){"XQ_LOG=2", "XQ_DEFER=1", "XQ_DEFER_COPIES=0", NULL},
          (const char *[]){"--via", "procaddress", "--stream", "new", "--tasks", "60", "--kernels", "4", "--us", "300", "--check",
                           "--dtod", "--scribble", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, launched_20, 3.0), "the app did not get going: %s", slurp(a.err));
    if (!s) {
        finish(&a, 1);
        return;
    }
    unsigned maxp = 0;
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    for (int round = 0; round < 5 && !exited(&a); round++) {
        __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST); /* suspended, as the node does it */
        for (double end = tn_now() + 0.06; tn_now() < end;) {
            unsigned p = LD(&s->pending);
            maxp = p > maxp ? p : maxp;
        }
        __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
        tn_send(0, gate);
        pause_s(0.01);
    }
    CHECK(finish(&a, 10) && a.status == 0, "exit %d (3: a task's output was wrong): %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    /* a task: the two copies in, 4 kernels, the increment, the copy out, the host function */
    CHECK(LD(&s->launched) == 60 * 9 && LD(&s->completed) == 60 * 9 && LD(&s->pending) == 0,
          "launched %lu completed %lu pending %u (want 540, 540, 0)", (unsigned long)LD(&s->launched),
          (unsigned long)LD(&s->completed), LD(&s->pending));
    const char *err = slurp(a.err);
    const char *w = strstr(err, "waits to launch by entry point");
    const char *e = w ? strchr(w, '\n') : NULL;
    printf("    %s: %u pending at most; %.*s\n", on ? "copies deferred" : "XQ_DEFER_COPIES=0", maxp, w && e ? (int)(e - w) : 0, w ? w : "");
    if (on == 2)
        CHECK(strstr(err, "xq: ignoring XQ_DEFER_COPIES='-5': not a number of bytes from 0 to 67108864; copies of up to 262144 "
                          "bytes are deferred"),
              "no word of the bad value: %s", err);
    if (on) {
        /* the copy out (into pageable memory) waits for the task's deferred launches: named with the program that made it */
        const char *fw = strstr(err, "calls that waited for the process's deferred launches, by the library");
        CHECK(fw && strstr(fw, "xq-cuda-app cuMemcpyDtoHAsync_v2 (not a deferrable call)"), "no account of who waited: %s", err);
        const char *fe = fw ? strchr(fw, '\n') : NULL;
        printf("    %.*s\n", fw && fe ? (int)(fe - fw) : 0, fw ? fw : "");
        CHECK(maxp >= 6, "pending at most %u (want 6 or more: the copies deferred with the kernels)", maxp);
        CHECK(w && !strstr(w, "cuMemcpyHtoDAsync") && !strstr(w, "cuMemcpyDtoDAsync"), "a copy waited: %s", err);
    } else {
        CHECK(maxp <= 5, "pending at most %u with copies not deferred (want 5 at most: 4 kernels and a copy)", maxp);
        CHECK(w && strstr(w, "cuMemcpyHtoDAsync"), "no wait of a host-to-device copy: %s", err);
    }
}
void test_defer_copies(void) { defer_copies(1); }
void test_defer_copies_off(void) { defer_copies(0); }
void test_defer_copies_bad(void) { defer_copies(2); } /* a bad XQ_DEFER_COPIES is named and changes nothing */

/* Kernels launched with their parameters packed in one buffer (extra: CU_LAUNCH_PARAM_BUFFER_POINTER
 * and _SIZE, as libraries that pack their arguments launch, through cuLaunchKernelEx here when
 * ex) are deferred like the others: behind a closed gate a task's four kernels and its increment
 * are pending at once, and the buffer, overwritten as soon as each call returns, was copied (the
 * app checks every task's output). Without it each such launch held the thread, and a training
 * step's waited for everything deferred before it. */
static void defer_via(const char *via, int packed, int ex, const char *env)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, (const char *[]){"XQ_LOG=2", "XQ_DEFER=1", env, NULL},
          (const char *[]){"--via", via, "--stream", "new", "--tasks", "60", "--kernels", "4", "--us", "300", "--check",
                           packed ? "--packed" : "--check", ex ? "--ex" : NULL, NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && wait_until(s, launched_20, 3.0), "the app did not get going: %s", slurp(a.err));
    if (!s) {
        finish(&a, 1);
        return;
    }
    unsigned maxp = 0;
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    for (int round = 0; round < 5 && !exited(&a); round++) {
        __atomic_store_n(&s->gate, 1, __ATOMIC_SEQ_CST);
        for (double end = tn_now() + 0.06; tn_now() < end;) {
            unsigned p = LD(&s->pending);
            maxp = p > maxp ? p : maxp;
        }
        __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
        tn_send(0, gate);
        pause_s(0.01);
    }
    CHECK(finish(&a, 10) && a.status == 0, "exit %d (3: a task's output was wrong): %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    const char *err = slurp(a.err);
    const char *w = strstr(err, "could not be deferred");
    const char *e = w ? strchr(w, '\n') : NULL;
    printf("    %s via %s: %u pending at most; %.*s\n", ex ? "cuLaunchKernelEx" : "cuLaunchKernel", via, maxp,
           w ? (e ? (int)(e - w) : (int)strlen(w)) : 50, w ? w : "kernel launches that could not be deferred: none");
    int off = env && !strcmp(env, "XQ_DEFER_DLSYM=0");
    if (!strcmp(via, "direct") || off) /* a linked caller may call a synchronising function we do not see: never deferred */
        CHECK(maxp <= 1, "pending at most %u through the %s (want 1: the thread waits at its first launch)", maxp,
              off ? "dlsym'd entry points with XQ_DEFER_DLSYM=0" : "linked symbols");
    else
        CHECK(maxp >= 5, "pending at most %u (want 5 or more: the launches deferred)", maxp);
    CHECK(!w || strstr(w, "an extra list of another kind 0"), "%s", err);
    if (env && !off)
        CHECK(strstr(err, "xq: ignoring XQ_DEFER_DLSYM='maybe': not 0 or 1; launches through dlsym'd entry points are deferred"),
              "no word of the bad value: %s", err);
    const char *fw = strstr(err, "calls that waited for the process's deferred launches");
    CHECK(!fw || !strstr(fw, "reached through an exported symbol"), "a launch was not deferred for its entry point: %s", err);
}
void test_defer_packed(void) { defer_via("procaddress", 1, 0, NULL); }
void test_defer_packed_ex(void) { defer_via("procaddress", 1, 1, NULL); }
/* Launch entry points dlsym'd from a libcuda handle by their exported names (cuBLASLt's way: it
 * neither links libcuda nor asks cuGetProcAddress for its launches) are deferred too: dlsym hands
 * trampolines out for every other driver entry point (the app's cuStreamSynchronize waits for the
 * deferred launches through one; every output checked). Before, each cuBLASLt launch held the
 * thread and waited for everything deferred before it: 2,105-2,925 calls and 0.5-4.9 s of a 12 s
 * training run beside a CUDA graph on the H200. Linked callers' launches are still never deferred. */
void test_defer_dlsym(void) { defer_via("dlsym", 0, 0, NULL); }
void test_defer_dlsym_ex(void) { defer_via("dlsym", 1, 1, NULL); }
void test_defer_direct(void) { defer_via("direct", 0, 0, NULL); }
/* XQ_DEFER_DLSYM=0 (for a program that links a synchronising function and dlsyms its launches):
 * never deferred; a bad value is named and changes nothing */
void test_defer_dlsym_off(void) { defer_via("dlsym", 0, 0, "XQ_DEFER_DLSYM=0"); }
void test_defer_dlsym_bad(void) { defer_via("dlsym", 0, 0, "XQ_DEFER_DLSYM=maybe"); }
