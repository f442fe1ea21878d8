/* test_cuda.h: what the files of xq-cuda-tests share: the run's paths, CHECK, the program runner and helpers, the tests. */
#ifndef XQ_TEST_CUDA_H
#define XQ_TEST_CUDA_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_node.h"

/* set by main (test_cuda_main.c) */
extern const char *LIB, *DIR_;
extern char SOCK[108], TMP[64], APP[512], BENCH[512], LOCAL[512], FUZZ[512];
extern int failed_now, napps;
extern const char *EXTRA[4]; /* added to every program's environment (the memop_ tests) */

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
    int reaped;
    char out[128], err[128];
    int status; /* exit code once waited; -1 killed or timed out */
} app;

/* test_cuda_util.c */
void pause_s(double s);
void start_prog(app *a, const char *prog, const char *const *env, const char *const *args, int preload);
void start(app *a, const char *const *env, const char *const *args); /* xq-cuda-app, preloaded */
int exited(app *a);
int finish(app *a, double timeout_s);
char *slurp(const char *path);
int count_lines(const char *s);
const char *line_text(int i);
int stream_slot(int sess, int k, char *text, size_t cap);
int wait_until(xq_slot *s, int (*pred)(xq_slot *), double timeout_s);
int one_pending(xq_slot *s);
int some_launched(xq_slot *s);
int launched_20(xq_slot *s);

/* test_cuda_session.c */
void test_registration(void);
void test_priorities_and_names(void);
void test_visible_devices_uuid(void);
void test_pci_unknown(void);
void test_bad_priority(void);
void test_default_stream_labels(void);
void test_ctx_switch(void);
void test_lean_path(void);
void test_launch_time(void);
void test_node_killed(void);
void test_node_restart(void);
void test_no_node(void);
void test_frozen_node_held(void);
void test_frozen_node_deferred(void);
void test_frozen_node_controls(void);
void test_space_mps(void);
void test_space_not_asked(void);

/* test_cuda_fuzz.c */
void test_fuzz_programs(void);
void test_capture_after_deferred(void);
void test_capture_behind_limit(void);
void test_wait_for_others_not_counted(void);
void test_stall_not_behind_open_work(void);
void test_unstick_flag_link(void);

/* test_cuda_trust.c */
void test_refuse_foreign_directory(void);
void test_refuse_open_directory(void);
void test_refuse_symlink(void);
void test_refuse_foreign_peer(void);
void test_group_node_admitted(void);

/* test_cuda_gate.c */
void test_gate_direct(void);
void test_gate_procaddress(void);
void test_gate_procaddress_legacy(void);
void test_gate_silent(void);
void test_gate_stopped(void);
void test_wake_after_launch(void);
void test_threshold(void);
void test_stream_lock(void);
void test_batch(void);
void test_window(void);
void test_track_ahead(void);
void test_guard(void);
void test_guard_deferred(void);
void test_window_kinds(void);
void test_drain(void);
void test_guard_pad(void);
void test_guard_pad_stopped(void);
void test_arrival_direct(void);
void test_stamp_before_launch(void);

/* test_cuda_tracker.c */
void test_estimate(void);
void test_timeline(void);
void test_arrivals(void);
void test_tail_requery(void);
void test_memop_registration(void);
void test_memop_gate(void);
void test_memop_gate_ptds(void);
void test_memop_threshold(void);
void test_memop_batch(void);
void test_memop_window(void);
void test_memop_window_kinds(void);
void test_memop_estimate(void);
void test_memop_node_killed(void);
void test_memop_fallback(void);
void test_memop_by_default(void);
void test_timed_estimates(void);
void test_timed_estimates_fallback(void);
void test_timed_long_idle(void);
void test_stopped_process(void);
void test_marks_under_threshold(void);
void test_sparse_marks(void);
void test_sparse_marks_window(void);
void test_marks_all(void);
void test_wake_lag(void);
void test_host_waits(void);

/* test_cuda_defer.c */
void test_defer_gate(void);
void test_defer_gate_ctx13(void);
void test_defer_copies(void);
void test_defer_copies_off(void);
void test_defer_copies_bad(void);
void test_defer_packed(void);
void test_defer_packed_ex(void);
void test_defer_dlsym(void);
void test_defer_dlsym_ex(void);
void test_defer_direct(void);
void test_defer_dlsym_off(void);
void test_defer_dlsym_bad(void);
void test_defer_off(void);
void test_defer_by_default(void);
void test_defer_threshold(void);
void test_defer_threshold_legacy_ex(void);
void test_defer_ptds_held(void);
void test_defer_node_killed(void);
void test_defer_attr_same(void);
void test_defer_attr_other(void);
void test_defer_attr_alternate(void);
void test_defer_attr_all(void);

/* test_cuda_stall.c */
void test_stall(void);
void test_stall_off(void);
void test_stall_old_node(void);
void test_stall_node_killed(void);

/* test_cuda_narrow.c */
void test_narrow(void);
void test_narrow_default_stream(void);
void test_narrow_unavailable(void);
void test_narrow_split(void);
void test_narrow_small(void);
void test_narrow_join_fails(void);
void test_narrow_width_after_quiet(void);
void test_narrow_width_stretch(void);
void test_narrow_width_occupancy(void);
void test_narrow_part(void);
void test_narrow_part_weighted(void);
void test_narrow_parts_past_the_cache(void);
void test_narrow_not_asked(void);
void test_narrow_widths(void);
void test_narrow_slower_than_share(void);

/* test_cuda_hooks.c */
void test_capture(void);
void test_fork(void);
void test_local_library(void);
void test_dlsym_not_driver(void);
void test_dlsym_next_other_library(void);
void test_failed_launches(void);
void test_overhead(void);
void test_overhead_cold(void);

#endif
