/* test_hip_main.c: the runner of xq-hip-tests: the tests by name, in the order they run, and main. */
/*
 * The HIP interposer's tests: xq-hip-app (linked against the HIP test double of hal-lv1-hip)
 * runs under LD_PRELOAD=libxq-hip.so against the test node (test_node.c) of this process; the
 * Lv3 tests preload the fake KFD of hal-lv3-kfd too, so that the interposer's KFD debugger calls
 * are answered, and the double stops a stream whose KFD queue is suspended.
 * Usage: xq-hip-tests LIBDIR FAKEHIP_DIR [TEST_NAME...]   (LIBDIR holds libxq-hip.so and libxq-cuda.so)
 * Prints one line per test and finally "N passed, N failed"; exits 1 on any failure.
 */
#define _GNU_SOURCE
#include "test_hip.h"

const char *LIBDIR, *DIR_;
char SOCK[108], TMP[64], APP[512], PROBE[512], MODULE[512], LIB[600], KFD[600];
int failed_now, napps;

static const struct {
    const char *name;
    void (*fn)(void);
} TESTS[] = {
    {"hip_registration", test_registration},
    {"hip_host_waits", test_hip_host_waits},
    {"hip_priority_hint", test_priority_hint},
    {"hip_stopped_process", test_stopped_process},
    {"hip_null_stream", test_null_stream},
    {"hip_per_thread_stream", test_per_thread_stream},
    {"hip_spt_entry_points", test_spt_entry_points},
    {"hip_via_launch_kernel", test_via_launch_kernel},
    {"hip_via_dlsym", test_via_dlsym},
    {"hip_rtld_next", test_rtld_next},
    {"hip_visible_devices", test_visible_devices},
    {"hip_via_getproc", test_via_getproc},
    {"hip_via_getproc_spt", test_via_getproc_spt},
    {"hip_via_ext_launch_kernel", test_via_ext_launch_kernel},
    {"hip_via_ext_module_launch", test_via_ext_module_launch},
    {"hip_via_cooperative", test_via_cooperative},
    {"hip_graph_capture", test_graph_capture},
    {"hip_vendor_library", test_vendor_library},
    {"hip_gate_explicit", test_gate_explicit},
    {"hip_gate_null_stream", test_gate_null_stream},
    {"hip_threshold", test_threshold},
    {"hip_guard_pad", test_hip_guard_pad},
    {"hip_guard_pad_stopped", test_hip_guard_pad_stopped},
    {"hip_window_before_first_estimate", test_hip_window_before_first_estimate},
    {"hip_nested_entry_points", test_nested_entry_points},
    {"hip_failed_launches", test_failed_launches},
    {"hip_unstick_value_link", test_hip_unstick_value_link},
    {"hip_track_ahead", test_hip_track_ahead},
    {"hip_node_killed_while_held", test_node_killed_while_held},
    {"hip_node_restart", test_node_restart},
    {"hip_frozen_node", test_frozen_node},
    {"hip_frozen_node_controls", test_frozen_node_controls},
    {"hip_no_node", test_no_node},
    {"hip_refuse_foreign_directory", test_refuse_foreign_directory},
    {"hip_refuse_foreign_peer", test_refuse_foreign_peer},
    {"hip_both_preloaded", test_both_preloaded},
    {"hip_real_library_no_device", test_real_library_no_device},
    {"lv3_hello", test_lv3_hello},
    {"lv3_suspend_resume", test_lv3_suspend_resume},
    {"lv3_suspend_fails", test_lv3_suspend_fails},
    {"lv3_not_wanted", test_lv3_not_wanted},
    {"lv3_node_killed_while_suspended", test_lv3_node_killed_while_suspended},
    {"lv3_open_gate_resumes", test_lv3_open_gate_resumes},
    {"lv3_rate_limit", test_lv3_rate_limit},
    {"lv3_default_stream_late_node", test_lv3_default_stream_late_node},
    {"lv3_link_suspend_waits", test_lv3_link_suspend_waits},
    {"lv3_link_resumes", test_lv3_link_resumes},
    {"hip_fuzz_programs", test_hip_fuzz_programs},
};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: xq-hip-tests LIBDIR FAKEHIP_DIR [TEST...]\n");
        return 2;
    }
    LIBDIR = realpath(argv[1], NULL);
    DIR_ = realpath(argv[2], NULL);
    if (!LIBDIR || !DIR_) {
        fprintf(stderr, "xq-hip-tests: %s or %s not found\n", argv[1], argv[2]);
        return 2;
    }
    snprintf(LIB, sizeof LIB, "%s/libxq-hip.so", LIBDIR);
    snprintf(KFD, sizeof KFD, "%s/libfakekfd.so", DIR_);
    snprintf(APP, sizeof APP, "%s/xq-hip-app", DIR_);
    snprintf(PROBE, sizeof PROBE, "%s/xq-hip-probe", DIR_);
    snprintf(MODULE, sizeof MODULE, "%s/xq-spin.hipdouble", DIR_);
    strcpy(TMP, "/tmp/xq-hip-tests-XXXXXX");
    if (!mkdtemp(TMP)) return 2;
    snprintf(SOCK, sizeof SOCK, "%s/node.sock", TMP);
    setvbuf(stdout, NULL, _IOLBF, 0);
    prctl(PR_SET_TIMERSLACK, 1000UL);
    signal(SIGPIPE, SIG_IGN);
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof TESTS / sizeof TESTS[0]; i++) {
        int wanted = argc == 3;
        for (int k = 3; k < argc; k++) wanted |= !strcmp(argv[k], TESTS[i].name);
        if (!wanted) continue;
        /* as in xq-cuda-tests: a failed test runs again, up to twice, a second later (a busy 2-CPU
           machine can starve a test's threads); only a third failure counts, and the earlier ones
           stay in the output */
        int tries = strstr(TESTS[i].name, "fuzz_") ? 1 : 3; /* the random programs bound no time: once */
        for (int attempt = 1; attempt <= tries; attempt++) {
            if (attempt > 1) /* the load that starved it may pass: a second before the next try */
                pause_s(1.0);
            tn_defaults(0, 0, 0, 0);
            tn_ok_options("");
            failed_now = 0;
            double t0 = tn_now();
            printf("%s%s\n", TESTS[i].name, attempt == 2 ? " (second try)" : attempt == 3 ? " (third try)" : "");
            TESTS[i].fn();
            tn_kill();
            printf("  %s %s (%.2f s)\n", failed_now ? "FAIL" : "ok", TESTS[i].name, tn_now() - t0);
            if (!failed_now) break;
        }
        failed_now ? failed++ : passed++;
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", TMP);
    if (system(cmd)) {
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
