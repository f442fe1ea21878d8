/* test_cuda_main.c: the runner of xq-cuda-tests: the tests by name, in the order they run, and main. */
/*
 * The interposer's own tests: xq-cuda-app (linked against the fake driver) runs under
 * LD_PRELOAD=libxq-cuda.so against the test node (test_node.c) of this process.
 * Usage: xq-cuda-tests LIBXQ FAKECUDA_DIR [TEST_NAME...]   (XQ_TEST_GDB=1: stacks of a hung app)
 * Prints one line per test and finally "N passed, N failed"; exits 1 on any failure.
 */
#define _GNU_SOURCE
#include "test_cuda.h"

const char *LIB, *DIR_;
char SOCK[108], TMP[64], APP[512], BENCH[512], LOCAL[512], FUZZ[512];
int failed_now, napps;
const char *EXTRA[4]; /* added to every program's environment (the memop_ tests) */

static const struct {
    const char *name;
    void (*fn)(void);
} TESTS[] = {
    {"registration", test_registration},
    {"space_mps", test_space_mps},
    {"space_not_asked", test_space_not_asked},
    {"narrow", test_narrow},
    {"narrow_default_stream", test_narrow_default_stream},
    {"narrow_unavailable", test_narrow_unavailable},
    {"narrow_split", test_narrow_split},
    {"narrow_widths", test_narrow_widths},
    {"narrow_slower_than_share", test_narrow_slower_than_share},
    {"narrow_part", test_narrow_part},
    {"narrow_part_weighted", test_narrow_part_weighted},
    {"narrow_parts_past_the_cache", test_narrow_parts_past_the_cache},
    {"narrow_small", test_narrow_small},
    {"narrow_join_fails", test_narrow_join_fails},
    {"narrow_width_after_quiet", test_narrow_width_after_quiet},
    {"narrow_width_stretch", test_narrow_width_stretch},
    {"narrow_width_occupancy", test_narrow_width_occupancy},
    {"narrow_not_asked", test_narrow_not_asked},
    {"visible_devices_uuid", test_visible_devices_uuid},
    {"pci_unknown", test_pci_unknown},
    {"priorities_and_names", test_priorities_and_names},
    {"bad_priority", test_bad_priority},
    {"default_stream_labels", test_default_stream_labels},
    {"ctx_switch", test_ctx_switch},
    {"lean_path", test_lean_path},
    {"launch_time", test_launch_time},
    {"gate_direct", test_gate_direct},
    {"gate_procaddress_ptds", test_gate_procaddress},
    {"gate_procaddress_legacy", test_gate_procaddress_legacy},
    {"gate_silent_open", test_gate_silent},
    {"gate_stopped", test_gate_stopped},
    {"wake_after_launch", test_wake_after_launch},
    {"threshold", test_threshold},
    {"stream_lock", test_stream_lock},
    {"batch", test_batch},
    {"window", test_window},
    {"track_ahead", test_track_ahead},
    {"wake_lag", test_wake_lag},
    {"host_waits", test_host_waits},
    {"dlsym_not_driver", test_dlsym_not_driver},
    {"dlsym_next_other_library", test_dlsym_next_other_library},
    {"window_kinds", test_window_kinds},
    {"drain", test_drain},
    {"guard_pad", test_guard_pad},
    {"guard_pad_stopped", test_guard_pad_stopped},
    {"arrival_direct", test_arrival_direct},
    {"stamp_before_launch", test_stamp_before_launch},
    {"guard", test_guard},
    {"guard_deferred", test_guard_deferred},
    {"stall", test_stall},
    {"stall_off", test_stall_off},
    {"stall_node_killed", test_stall_node_killed},
    {"stall_old_node", test_stall_old_node},
    {"estimate", test_estimate},
    {"node_killed_while_held", test_node_killed},
    {"node_restart", test_node_restart},
    {"no_node", test_no_node},
    {"refuse_foreign_directory", test_refuse_foreign_directory},
    {"refuse_open_directory", test_refuse_open_directory},
    {"refuse_symlink", test_refuse_symlink},
    {"refuse_foreign_peer", test_refuse_foreign_peer},
    {"group_node_admitted", test_group_node_admitted},
    {"capture_passthrough", test_capture},
    {"fork", test_fork},
    {"failed_launches", test_failed_launches},
    {"local_library", test_local_library},
    {"timeline", test_timeline},
    {"arrivals", test_arrivals},
    {"tail_requery", test_tail_requery},
    {"memop_registration", test_memop_registration},
    {"memop_gate", test_memop_gate},
    {"memop_gate_ptds", test_memop_gate_ptds},
    {"memop_threshold", test_memop_threshold},
    {"memop_batch", test_memop_batch},
    {"memop_window", test_memop_window},
    {"memop_window_kinds", test_memop_window_kinds},
    {"memop_estimate", test_memop_estimate},
    {"memop_node_killed_while_held", test_memop_node_killed},
    {"memop_fallback", test_memop_fallback},
    {"defer_gate", test_defer_gate}, {"defer_gate_ctx13", test_defer_gate_ctx13},
    {"defer_copies", test_defer_copies},
    {"defer_copies_off", test_defer_copies_off},
    {"defer_copies_bad", test_defer_copies_bad},
    {"defer_packed", test_defer_packed},
    {"defer_packed_ex", test_defer_packed_ex},
    {"defer_dlsym", test_defer_dlsym},
    {"defer_dlsym_ex", test_defer_dlsym_ex},
    {"defer_direct", test_defer_direct},
    {"defer_dlsym_off", test_defer_dlsym_off},
    {"defer_dlsym_bad", test_defer_dlsym_bad},
    {"defer_off", test_defer_off},
    {"defer_by_default", test_defer_by_default},
    {"defer_attr_same", test_defer_attr_same},
    {"defer_attr_other", test_defer_attr_other},
    {"defer_attr_alternate", test_defer_attr_alternate},
    {"defer_attr_wait_all", test_defer_attr_all},
    {"memop_by_default", test_memop_by_default},
    {"timed_estimates", test_timed_estimates},
    {"timed_estimates_fallback", test_timed_estimates_fallback},
    {"timed_long_idle", test_timed_long_idle},
    {"stopped_process", test_stopped_process},
    {"marks_under_threshold", test_marks_under_threshold},
    {"sparse_marks", test_sparse_marks},
    {"sparse_marks_window", test_sparse_marks_window},
    {"marks_all", test_marks_all},
    {"defer_threshold", test_defer_threshold},
    {"defer_threshold_legacy_ex", test_defer_threshold_legacy_ex},
    {"defer_ptds_held", test_defer_ptds_held},
    {"defer_node_killed", test_defer_node_killed},
    {"frozen_node_held", test_frozen_node_held},
    {"frozen_node_deferred", test_frozen_node_deferred},
    {"frozen_node_controls", test_frozen_node_controls},
    {"overhead", test_overhead},
    {"overhead_cold", test_overhead_cold},
    {"capture_after_deferred", test_capture_after_deferred},
    {"capture_behind_limit", test_capture_behind_limit},
    {"wait_for_others_not_counted", test_wait_for_others_not_counted},
    {"stall_not_behind_open_work", test_stall_not_behind_open_work},
    {"unstick_flag_link", test_unstick_flag_link},
    {"fuzz_programs", test_fuzz_programs},
};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: xq-cuda-tests LIBXQ FAKECUDA_DIR [TEST...]\n");
        return 2;
    }
    LIB = realpath(argv[1], NULL);
    DIR_ = realpath(argv[2], NULL);
    if (!LIB || !DIR_) {
        fprintf(stderr, "xq-cuda-tests: %s or %s not found\n", argv[1], argv[2]);
        return 2;
    }
    snprintf(APP, sizeof APP, "%s/xq-cuda-app", DIR_);
    snprintf(BENCH, sizeof BENCH, "%s/xq-launch-bench", DIR_);
    snprintf(FUZZ, sizeof FUZZ, "%s/xq-cuda-fuzz", DIR_);
    snprintf(LOCAL, sizeof LOCAL, "%s/xq-local-app", DIR_);
    strcpy(TMP, "/tmp/xq-cuda-tests-XXXXXX");
    if (!mkdtemp(TMP))
        return 2;
    snprintf(SOCK, sizeof SOCK, "%s/node.sock", TMP);
    setvbuf(stdout, NULL, _IOLBF, 0);
    prctl(PR_SET_TIMERSLACK, 1000UL);
    signal(SIGPIPE, SIG_IGN);
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof TESTS / sizeof TESTS[0]; i++) {
        int wanted = argc == 3;
        for (int k = 3; k < argc; k++)
            wanted |= !strcmp(argv[k], TESTS[i].name);
        if (!wanted)
            continue;
        /* Several checks bound times (a held thread let go within 50 ms, an estimate within a
           factor of two): a 2-CPU machine busy elsewhere can starve a test's threads now and
           then. A failed test runs again, up to twice, a second later (the CI's build runs other
           tests beside these: session 49's rehearsal saw `timeline` fail twice in a row; on the
           quiet VM `timeline` and `arrivals` failed 5 of 60 first tries, never twice, at that
           build and the one before alike); only a third failure counts, and the earlier ones stay
           in the output. A real defect fails every time. The random programs (fuzz_) bound no
           time, and a defect there may show in one run of three: they run once. */
        int tries = strncmp(TESTS[i].name, "fuzz_", 5) ? 3 : 1;
        for (int attempt = 1; attempt <= tries; attempt++) {
            if (attempt > 1) /* the load that starved it may pass: a second before the next try */
                pause_s(1.0);
            tn_defaults(0, 0, 0, 0);
            failed_now = 0;
            double t0 = tn_now();
            printf("%s%s\n", TESTS[i].name, attempt == 2 ? " (second try)" : attempt == 3 ? " (third try)" : "");
            TESTS[i].fn();
            tn_kill();
            printf("  %s %s (%.2f s)\n", failed_now ? "FAIL" : "ok", TESTS[i].name, tn_now() - t0);
            if (!failed_now)
                break;
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
