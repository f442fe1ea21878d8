/* test_hip.h: what the files of xq-hip-tests share: the run's paths, CHECK, the program runner and helpers, the tests. */
#ifndef XQ_TEST_HIP_H
#define XQ_TEST_HIP_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_node.h"

/* set by main (test_hip_main.c) */
extern const char *LIBDIR, *DIR_;
extern char SOCK[108], TMP[64], APP[512], PROBE[512], MODULE[512], LIB[600], KFD[600];
extern int failed_now, napps;

#define CHECK(cond, ...)                                                                            \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            printf("    line %d: %s: ", __LINE__, #cond);                                           \
            printf(__VA_ARGS__);                                                                    \
            printf("\n");                                                                           \
            failed_now = 1;                                                                         \
        }                                                                                           \
    } while (0)
#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

typedef struct app {
    pid_t pid;
    int reaped, status;
    char out[128], err[128];
} app;

/* test_hip_util.c */
extern const char *g_preload; /* when set, what start() preloads instead of libxq-hip.so */
void pause_s(double s);
void start_prog(app *a, const char *prog, const char *preload, const char *const *env, const char *const *args);
void start(app *a, const char *const *env, const char *const *args);
void start_kfd(app *a, const char *const *env, const char *const *args);
int exited(app *a);
int finish(app *a, double timeout_s);
char *slurp(const char *path);
const char *line_text(int i);
int stream_slot(int sess, int k, char *text, size_t cap);
int wait_until(xq_slot *s, int (*pred)(xq_slot *), double timeout_s);
int one_pending(xq_slot *s);
int some_launched(xq_slot *s);
int deep(xq_slot *s);
xq_slot *run_counted(const char *const *env, const char *const *args, int tasks, int per_task, const char *label);

/* test_hip_hooks.c */
void test_registration(void);
void test_hip_host_waits(void);
void test_stopped_process(void);
void test_priority_hint(void);
void test_visible_devices(void);
void test_rtld_next(void);
void test_null_stream(void);
void test_per_thread_stream(void);
void test_spt_entry_points(void);
void test_via_dlsym(void);
void test_via_getproc(void);
void test_via_getproc_spt(void);
void test_via_launch_kernel(void);
void test_via_ext_launch_kernel(void);
void test_via_ext_module_launch(void);
void test_via_cooperative(void);
void test_graph_capture(void);
void test_vendor_library(void);

/* test_hip_gate.c */
void test_gate_explicit(void);
void test_gate_null_stream(void);
void test_threshold(void);
void test_hip_guard_pad(void);
void test_hip_guard_pad_stopped(void);
void test_hip_window_before_first_estimate(void);
void test_nested_entry_points(void);
void test_failed_launches(void);
void test_hip_unstick_value_link(void);

/* test_hip_tracker.c */
void test_hip_track_ahead(void);

/* test_hip_session.c */
void test_node_killed_while_held(void);
void test_frozen_node(void);
void test_frozen_node_controls(void);
void test_node_restart(void);
void test_no_node(void);
void test_refuse_foreign_directory(void);
void test_refuse_foreign_peer(void);
void test_both_preloaded(void);
void test_real_library_no_device(void);

/* test_hip_kfd.c */
void test_lv3_hello(void);
void test_lv3_suspend_resume(void);
void test_lv3_suspend_fails(void);
void test_lv3_not_wanted(void);
void test_lv3_node_killed_while_suspended(void);
void test_lv3_open_gate_resumes(void);
void test_lv3_rate_limit(void);
void test_lv3_default_stream_late_node(void);
void test_lv3_link_suspend_waits(void);
void test_lv3_link_resumes(void);

/* test_hip_fuzz.c */
void test_hip_fuzz_programs(void);

#endif
