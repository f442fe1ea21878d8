/* test_hip_hooks.c: registration and the entry points: streams, devices, dlsym, hipGetProcAddress, launches, graphs. */
#define _GNU_SOURCE
#include "test_hip.h"

void test_registration(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "3", "--kernels", "2", "--us", "2000", "--check", "--linger-ms", "300", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d, stderr: %s", a.status, slurp(a.err));
    char want[128], text[600];
    snprintf(want, sizeof want, "HELLO 1 %d xq-hip-app - hip", (int)a.pid);
    CHECK(tn_nlines() > 1 && !strcmp(line_text(0), want), "first line '%s', want '%s'", line_text(0), want);
    CHECK(!strcmp(line_text(1), "MAPPED"), "second line '%s'", line_text(1));
    int slot = stream_slot(0, 0, text, sizeof text), dev = -9, prio = -9, least = -9, greatest = -9;
    char key[64], label[32] = "";
    CHECK(slot >= 0 && sscanf(text, "STREAM %*d %63s %d %d %d %d %31s", key, &dev, &prio, &least, &greatest, label) == 6 &&
              dev == 0 && prio == 0 && least == 1 && greatest == -1 && !strcmp(label, "s1") && strcmp(key, "0"),
          "'%s'", text);
    char close_[32];
    snprintf(close_, sizeof close_, "CLOSE %d", slot);
    CHECK(tn_count(0, close_) == 1, "no CLOSE after hipStreamDestroy");
    xq_slot *s = tn_slot(0, (unsigned)slot);
    /* per task: memset, copy in, 2 spins, copy out, host function */
    CHECK(s && s->launched == 18 && s->completed == 18 && s->in_flight == 0 && s->failed == 0 &&
              s->run_ns >= 3 * 2 * 2000000ull * 9 / 10 && s->estimate_ns > 0 && s->ready_since_ns == 0,
          "launched %lu completed %lu run_ns %lu", s ? (unsigned long)s->launched : 0,
          s ? (unsigned long)s->completed : 0, s ? (unsigned long)s->run_ns : 0);
    CHECK(!*slurp(a.err), "stderr: %s", slurp(a.err));
}

void test_priority_hint(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, (const char *[]){"XQ_PRIORITY=5", "XQ_NAME=ro cm", "HIP_VISIBLE_DEVICES=2", NULL},
          (const char *[]){"--tasks", "1", "--stream", "prio:-1", NULL});
    CHECK(finish(&a, 10) && a.status == 0, "exit %d", a.status);
    char want[128], text[600];
    snprintf(want, sizeof want, "HELLO 1 %d ro_cm 5 hip", (int)a.pid);
    CHECK(!strcmp(line_text(0), want), "'%s', want '%s'", line_text(0), want);
    int dev = -9, prio = -9, least = -9, greatest = -9;
    CHECK(stream_slot(0, 0, text, sizeof text) >= 0 &&
              sscanf(text, "STREAM %*d %*s %d %d %d %d", &dev, &prio, &least, &greatest) == 4 && dev == 2 && prio == -1 &&
              least == 1 && greatest == -1,
          "'%s' (want device 2, prio -1 in [1,-1])", text);
}

/* The process's device 0 under renumbering variables: STREAM carries the physical ordinal and the
 * device's PCI bus id. */
void test_visible_devices(void)
{
    static const struct {
        const char *env[3];
        int want;
    } cases[] = {
        {{"ROCR_VISIBLE_DEVICES=5,3,4", "HIP_VISIBLE_DEVICES=2", NULL}, 4},
        {{"ROCR_VISIBLE_DEVICES=3,1", NULL}, 3},
        {{"CUDA_VISIBLE_DEVICES=1", NULL}, 1},
        {{"HIP_VISIBLE_DEVICES=1", "CUDA_VISIBLE_DEVICES=3,2", NULL}, 1},
        {{"ROCR_VISIBLE_DEVICES=6,7", "CUDA_VISIBLE_DEVICES=1", NULL}, 7},
        {{"ROCR_VISIBLE_DEVICES=GPU-4a3b2c1d", "HIP_VISIBLE_DEVICES=0", NULL}, 0},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tn_start(SOCK, 16);
        app a;
        start(&a, cases[i].env, (const char *[]){"--tasks", "1", NULL});
        CHECK(finish(&a, 10) && a.status == 0, "case %u: exit %d", i, a.status);
        char text[600], pci[32] = "";
        int dev = -9;
        /* the PCI bus id is the device's the process uses: the double's device 0 at 0000:40:00.0 */
        CHECK(stream_slot(0, 0, text, sizeof text) >= 0 &&
                  sscanf(text, "STREAM %*d %*s %d %*d %*d %*d %*s %31s", &dev, pci) == 2 && dev == cases[i].want &&
                  !strcmp(pci, "0000:40:00.0"),
              "case %u (%s %s): '%s', want device %d at PCI 0000:40:00.0", i, cases[i].env[0],
              cases[i].env[1] ? cases[i].env[1] : "", text, cases[i].want);
        const char *err = slurp(a.err);
        int uuid = strstr(cases[i].env[0], "GPU-") != NULL;
        CHECK(uuid ? strstr(err, "ROCR_VISIBLE_DEVICES=GPU-4a3b2c1d is not a list of device ordinals") != NULL : !*err,
              "case %u: stderr: %s", i, err);
    }
}

/* A preloaded library of someone else's that looks up what it wraps with dlsym(RTLD_NEXT) gets
 * glibc's answer beside libxq-hip.so's dlsym, before or after it, and with both interposers. */
void test_rtld_next(void)
{
    char next[700], pre[3][2000];
    snprintf(next, sizeof next, "%s/fakecuda/libxq-next.so", LIBDIR);
    if (access(next, R_OK)) {
        printf("    skipped: %s not built\n", next);
        return;
    }
    snprintf(pre[0], sizeof pre[0], "%s:%s", next, LIB);
    snprintf(pre[1], sizeof pre[1], "%s:%s", LIB, next);
    snprintf(pre[2], sizeof pre[2], "%s:%s/libxq-cuda.so:%s", LIB, LIBDIR, next);
    for (int i = 0; i < 3; i++) {
        tn_start(SOCK, 16);
        g_preload = pre[i];
        app a;
        start(&a, NULL, (const char *[]){"--tasks", "1", "--check", NULL});
        g_preload = NULL;
        CHECK(finish(&a, 10) && a.status == 0 && strstr(slurp(a.err), "xq-next: getpid ok"), "preload %s: exit %d: %s",
              pre[i], a.status, slurp(a.err));
    }
}

void test_null_stream(void)
{
    run_counted(NULL, (const char *[]){"--tasks", "2", "--stream", "default", "--check", NULL}, 2, 6, "default");
}

void test_per_thread_stream(void)
{
    run_counted(NULL, (const char *[]){"--tasks", "2", "--stream", "ptds", "--check", NULL}, 2, 6, "ptds");
}

void test_spt_entry_points(void)
{
    /* memset_spt, copy_spt, 2 hipLaunchKernel_spt, copy_spt, host function _spt */
    run_counted(NULL, (const char *[]){"--tasks", "2", "--stream", "spt", "--check", NULL}, 2, 6, "ptds");
}

/* Triton's HIP launcher: dlopen("libamdhip64.so") + dlsym(handle, "hipModuleLaunchKernel"). The
 * kernels taken that way are scheduled (6 per task counted, not 4) under libxq-hip.so alone and
 * with libxq-cuda.so preloaded before or after it (whichever dlsym the program binds passes HIP
 * names on to ours); the app checks that other lookups pass through. */
void test_via_dlsym(void)
{
    const char *pre[3] = {LIB, NULL, NULL};
    static char both[2][1300];
    snprintf(both[0], sizeof both[0], "%s/libxq-cuda.so:%s", LIBDIR, LIB);
    snprintf(both[1], sizeof both[1], "%s:%s/libxq-cuda.so", LIB, LIBDIR);
    pre[1] = both[0], pre[2] = both[1];
    for (int i = 0; i < 3; i++) {
        printf("    preload %s\n", pre[i]);
        g_preload = pre[i];
        run_counted(NULL, (const char *[]){"--tasks", "2", "--via", "dlsym", "--check", NULL}, 2, 6, "s1");
        g_preload = NULL;
    }
}

/* hipGetProcAddress (HIP 6.2+): the kernels and memsets it hands out are scheduled; with the
 * per-thread flag the runtime hands out the _spt twins, and ours stand in for those. */
void test_via_getproc(void)
{
    run_counted(NULL, (const char *[]){"--tasks", "2", "--via", "getproc", "--check", NULL}, 2, 6, "s1");
}

void test_via_getproc_spt(void)
{
    run_counted(NULL, (const char *[]){"--tasks", "2", "--via", "getproc", "--stream", "spt", "--check", NULL}, 2, 6,
                "ptds");
}

void test_via_launch_kernel(void)
{
    run_counted(NULL, (const char *[]){"--tasks", "2", "--via", "kernel", "--check", NULL}, 2, 6, "s1");
}

void test_via_ext_launch_kernel(void)
{
    run_counted(NULL, (const char *[]){"--tasks", "2", "--via", "ext", "--check", NULL}, 2, 6, "s1");
}

void test_via_ext_module_launch(void)
{
    run_counted(NULL, (const char *[]){"--tasks", "2", "--via", "extmodule", "--check", NULL}, 2, 6, "s1");
}

void test_via_cooperative(void)
{
    run_counted(NULL, (const char *[]){"--tasks", "2", "--via", "coop", "--check", NULL}, 2, 6, "s1");
}

/* The kernels captured into a graph are not launches; each hipGraphLaunch is one. */
void test_graph_capture(void)
{
    run_counted(NULL, (const char *[]){"--tasks", "3", "--via", "graph", "--kernels", "4", "--check", NULL}, 3, 5, "s1");
}

/* A vendor library dlopened RTLD_LOCAL launches on the app's stream: scheduled too, and its
 * event calls (not wrapped) work untouched. */
void test_vendor_library(void)
{
    run_counted(NULL, (const char *[]){"--tasks", "2", "--vendor", "3", "--check", NULL}, 2, 9, "s1");
}

/* The CUDA interposer's stopped_process, for HIP: a process stopped three times for 300 ms with a
 * 2 ms kernel in flight; the span its tracker then finds is no measurement, and the estimate the
 * node sees stays near the stream's average command (sampled every millisecond). */
void test_stopped_process(void)
{
    tn_start(SOCK, 16);
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "400", "--kernels", "1", "--us", "2000", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s != NULL, "no stream registered");
    if (!s) {
        finish(&a, 20);
        return;
    }
    uint64_t most = 0, settled = 0;
    int stops = 0;
    for (int round = 0; round < 3 && !exited(&a); round++) {
        for (int i = 0; i < 150; i++) {
            uint64_t e = __atomic_load_n(&s->estimate_ns, __ATOMIC_RELAXED);
            most = e > most ? e : most;
            pause_s(0.001);
        }
        if (!settled) settled = __atomic_load_n(&s->estimate_ns, __ATOMIC_RELAXED);
        if (kill(a.pid, SIGSTOP) == 0) {
            stops++;
            pause_s(0.3);
            kill(a.pid, SIGCONT);
        }
    }
    for (int i = 0; i < 150 && !exited(&a); i++) {
        uint64_t e = __atomic_load_n(&s->estimate_ns, __ATOMIC_RELAXED);
        most = e > most ? e : most;
        pause_s(0.001);
    }
    CHECK(finish(&a, 30) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(stops == 3, "stopped %d times (want 3: the app ended early?)", stops);
    CHECK(settled > 0 && settled < 4000000, "estimate before the first stop %.2f ms (want under 4)", settled / 1e6);
    CHECK(most < 3 * settled + 2000000, "the estimate the node saw reached %.2f ms, %.2f ms before the stops (a stop taught it)",
          most / 1e6, settled / 1e6);
    printf("    estimate before the stops %.2f ms, the most seen %.2f ms (three stops of 300 ms)\n", settled / 1e6, most / 1e6);
}

/* The host's waits on the device (WAITS <n>, to a node whose OK said "waits"): each task of the app
 * ends in hipStreamSynchronize with its kernels in flight (two of 15 ms), so n tasks are n waits,
 * each told (the count goes at most every 20 ms, only where it changed). A node whose OK does not
 * say "waits" (one from before them, which refuses the line) is sent none. */
static long long hip_waits_run(const char *ok_options, int *lines)
{
    tn_ok_options(ok_options);
    tn_start(SOCK, 16);
    app a;
    start(&a, NULL, (const char *[]){"--tasks", "12", "--kernels", "2", "--us", "15000", "--linger-ms", "100", NULL});
    CHECK(finish(&a, 20) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    tn_find(0, 0, "+EOF", 3.0);
    long long last = -1;
    *lines = 0;
    for (int i = 0; i < tn_nlines(); i++) {
        tn_line l = tn_get(i);
        unsigned long long n;
        char tail;
        if (!strncmp(l.text, "WAITS", 5)) {
            (*lines)++;
            CHECK(sscanf(l.text, "WAITS %llu%c", &n, &tail) == 1 && (long long)n > last, "a WAITS line: '%s' after %lld", l.text, last);
            last = (long long)n;
        }
    }
    tn_ok_options("");
    return last;
}

void test_hip_host_waits(void)
{
    int lines;
    long long n = hip_waits_run("waits", &lines);
    printf("    12 tasks, each ending in a synchronize: WAITS %lld in %d lines\n", n, lines);
    CHECK(n >= 11 && n <= 13 && lines >= 6, "12 tasks 30 ms long, each waited on: told %lld waits in %d lines (want 11-13, 6 lines or more)",
          n, lines);
    n = hip_waits_run("", &lines);
    CHECK(lines == 0 && n == -1, "no WAITS without 'waits' in OK: %d lines, last %lld", lines, n);
}
