/* test_cuda_narrow.c: narrowing: kernels sent to a green context's stream on part of the device, or not. */
#define _GNU_SOURCE
#include "test_cuda.h"

/* Narrowing (docs/processes.md "Space and time"): a process asks its share saying it can be
 * narrowed; told "narrow", it registers with "narrow", and while the node's reserve is set on a
 * stream, its kernels go to a green context's stream joined to the application's: the results
 * stay right (--check: copies, increments and spins in stream order), the log counts them, and
 * the stream's width (multiprocessors its launches could fill) and the device's count reach the
 * node. With green contexts unavailable it says so once and runs on the whole device. */
static const char *narrow_extra; /* one more variable for the process (test_narrow_split) */
static void narrow_block(const char *green, const char *stream, uint32_t reserve, uint32_t part, const char *made,
                         const char *block)
{
    tn_start(SOCK, 16);
    tn_space("SPACE mps /tmp/xq-test-mps 100 narrow");
    tn_defaults(1, 0, 0, 0); /* held until the reserve is set */
    app a;
    /* blocks of 1024 threads on multiprocessors of 64: each kernel could fill 16, more than a small one */
    start(&a, (const char *[]){"XQ_PRIORITY=1", "XQ_LOG=2", "FAKECUDA_TPS=64", green, narrow_extra, NULL},
          (const char *[]){"--tasks", "3", "--kernels", "2", "--us", "300", "--stream", stream, "--block", block, "--check", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s, "no STREAM");
    if (!s) {
        finish(&a, 1);
        return;
    }
    __atomic_store_n(&s->reserve_sms, reserve, __ATOMIC_SEQ_CST);
    __atomic_store_n(&s->part, part, __ATOMIC_SEQ_CST);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    tn_send(0, gate);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    char last[256];
    CHECK(tn_space_asks(last, sizeof last) == 1 && strlen(last) > 7 && !strcmp(last + strlen(last) - 7, " narrow"),
          "asked '%s'", last);
    int h = tn_find(0, -1, "HELLO ", 2.0);
    CHECK(h >= 0 && strstr(line_text(h), " cuda,mps,narrow"), "HELLO '%s' does not say cuda,mps,narrow", h >= 0 ? line_text(h) : "-");
    const char *err = slurp(a.err);
    const char *p = strstr(err, "launches narrowed");
    unsigned long long n = 0;
    while (p && p > err && p[-1] != ':') p--;
    if (p) n = strtoull(p + 1, NULL, 10);
    uint32_t w = LD(&s->width);
    unsigned want_w = (unsigned)((atoi(block) + 63) / 64);
    CHECK(XQ_WIDTH_SMS(w) == 132 && XQ_WIDTH_WIDEST(w) == want_w && XQ_WIDTH_STRETCH(w) == want_w,
          "width word %#x (want 132 multiprocessors, a width of %u, now too)", w, want_w);
    if (want_w <= 8) { /* small kernels stay on the application's stream */
        CHECK(n == 0, "%llu launches narrowed, want 0: stderr: %s", n, err);
    } else if (!strcmp(green, "FAKECUDA_GREEN=0")) {
        CHECK(n == 0 && strstr(err, "narrowing launches stops for this process: cuGreenCtxCreate failed"),
              "%llu narrowed; stderr: %s", n, err);
        CHECK(tn_find(0, -1, "NARROW off", 1.0) >= 0, "the node was not told that narrowing stopped");
    } else {
        /* per task: inc and 2 spins are kernels; the copies and the host function stay */
        CHECK(n == 9, "%llu launches narrowed, want 9; stderr: %s", n, err);
        CHECK(!strstr(err, "narrowing launches stops"), "stderr: %s", err);
        CHECK(strstr(err, made), "no '%s' in stderr: %s", made, err);
        if (narrow_extra) { /* test_narrow_split: a driver refusing the split for clusters is told to the node, once */
            int want = !strcmp(narrow_extra, "FAKECUDA_CLUSTER_SPLIT=0"), said = tn_find(0, -1, "NARROW plain", want ? 2.0 : 0.2) >= 0;
            CHECK(said == want, "NARROW plain %s the node (%s)", said ? "reached" : "did not reach", narrow_extra);
        }
    }
}

static void narrow_run(const char *green, const char *stream, uint32_t reserve, uint32_t part, const char *made)
{
    narrow_block(green, stream, reserve, part, made, "1024");
}

/* 132 - 100: a green context of 32 */
void test_narrow(void) { narrow_run("FAKECUDA_GREEN=1", "new", 100, 0, "of 32 multiprocessors (group 0 of 1 made, 32 asked)"); }
void test_narrow_default_stream(void)
{
    narrow_run("FAKECUDA_GREEN=1", "default", 100, 0, "of 32 multiprocessors (group 0 of 1 made, 32 asked)");
}
void test_narrow_unavailable(void) { narrow_run("FAKECUDA_GREEN=0", "new", 100, 0, ""); }
/* How the device is split (XQ_NARROW_SPLIT): for the largest thread clusters by default (flag 2
 * reaches the driver, FAKECUDA_SPLIT_LOG=1 says each split's flags), plainly with
 * XQ_NARROW_SPLIT=plain (flags 0); a bad value is said and the default kept; a driver that refuses
 * the flag (FAKECUDA_CLUSTER_SPLIT=0, as before compute capability 9.0) is said once, and the
 * process narrowed all the same, split plainly */
void test_narrow_split(void)
{
    const char *on_dev = "of 40 multiprocessors (group 0 of 1 made, 40 asked) on device 0";
    char clusters[160], plain[160];
    snprintf(clusters, sizeof clusters, "%s, split for clusters\n", on_dev);
    snprintf(plain, sizeof plain, "%s\n", on_dev);
    narrow_extra = "FAKECUDA_SPLIT_LOG=1";
    narrow_run("FAKECUDA_GREEN=1", "new", 92, 0, clusters);
    narrow_run("FAKECUDA_GREEN=1", "new", 92, 0, "fakecuda: split by 40, flags 2\n");
    narrow_run("XQ_NARROW_SPLIT=plain", "new", 92, 0, plain);
    narrow_run("XQ_NARROW_SPLIT=plain", "new", 92, 0, "fakecuda: split by 40, flags 0\n");
    narrow_run("XQ_NARROW_SPLIT=gpc", "new", 92, 0, "xq: ignoring XQ_NARROW_SPLIT='gpc': not cluster or plain; the split for clusters is used");
    narrow_run("XQ_NARROW_SPLIT=gpc", "new", 92, 0, clusters);
    narrow_extra = "FAKECUDA_CLUSTER_SPLIT=0";
    narrow_run("FAKECUDA_GREEN=1", "new", 92, 0,
               "xq: the driver refused a split for thread clusters (CUDA error 1, 40 multiprocessors); the plain split is used from now on");
    narrow_run("FAKECUDA_GREEN=1", "new", 92, 0, plain);
    narrow_extra = NULL;
}
/* kernels of 512 threads on multiprocessors of 64 could fill 8: small, never narrowed */
void test_narrow_small(void) { narrow_block("FAKECUDA_GREEN=1", "new", 100, 0, "", "512"); }

/* The width the node reserves for a stream is the widest launch of its last one to two seconds of
 * launching, not of the clock's: a stream quiet for longer (an eager decoder between warm-up and
 * its first request, a server between bursts) keeps its width, and its first launches after the
 * quiet, narrow ones, do not shrink it. Here a task of kernels 16 multiprocessors wide (1024
 * threads, 64 a multiprocessor), 2.3 s of quiet, then a task of kernels one wide: the word still
 * says 16 after the second. (H200, session 80: the decoder's reserve fell to its first kernels'
 * width at each request after a quiet spell, a trainer beside it widened to all but 8
 * multiprocessors, the decoder's first five requests at 2.2-2.4 x its median.) */
/* Runs xq-cuda-app with env and args and returns the width word of its stream's slot (0: none);
 * with said, checks that its stderr says it. */
static uint32_t width_word_env(const char **env, const char **args, const char *said)
{
    tn_start(SOCK, 16);
    tn_space("SPACE mps /tmp/xq-test-mps 100 narrow");
    tn_defaults(0, 0, 0, 0);
    app a;
    start(&a, env, args);
    CHECK(finish(&a, 15) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    if (said) CHECK(strstr(slurp(a.err), said), "no '%s' in stderr: %s", said, slurp(a.err));
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s, "no STREAM");
    return s ? LD(&s->width) : 0;
}
/* Runs xq-cuda-app at priority 2 with args and returns the width word of its stream's slot (0: none). */
static uint32_t width_word_after(const char *env, const char **args)
{
    return width_word_env((const char *[]){"XQ_PRIORITY=2", "FAKECUDA_TPS=64", env, NULL}, args, NULL);
}

void test_narrow_width_after_quiet(void)
{
    uint32_t w = width_word_after(NULL, (const char *[]){"--tasks", "2", "--kernels", "2", "--us", "300", "--stream", "new", "--block",
                                                   "1024", "--period-ms", "2300", "--narrow-after", "1", NULL});
    CHECK(XQ_WIDTH_SMS(w) == 132 && XQ_WIDTH_WIDEST(w) == 16,
          "width word %#x after a narrow task that followed 2.3 s of quiet: want 132 multiprocessors, a width of 16 "
          "(the wide task's; 1 is the narrow task's alone)", w);
}

/* The width of the current stretch of work, which the node holds others behind (session 116): a
 * stream that goes on launching narrow kernels after wide ones, without a quiet spell, is narrow
 * now once it has launched so for two buckets of 2 ms (a chat server's tokens after its prefill),
 * while its widest stays the wide kernels' (what the node reserves); a stretch that begins after a
 * quiet spell counts as wide as the stream has been until it has launched that long (a request's
 * first launches: the node holds behind it at once, as behind its last wide stretch). */
void test_narrow_width_stretch(void)
{
    /* one wide task of 2 ms, then eleven narrow ones back to back: 22 ms of narrow launching */
    uint32_t w = width_word_after(NULL, (const char *[]){"--tasks", "12", "--kernels", "2", "--us", "1000", "--stream", "new", "--block",
                                                   "1024", "--narrow-after", "1", NULL});
    CHECK(w >> 31 && XQ_WIDTH_SMS(w) == 132 && XQ_WIDTH_WIDEST(w) == 16 && XQ_WIDTH_STRETCH(w) == 1,
          "width word %#x after 22 ms of narrow tasks that followed a wide one: want 132 multiprocessors, the widest 16, "
          "now 1", w);
    /* the narrow task 30 ms after the wide one: a new stretch, shorter than two buckets */
    w = width_word_after(NULL, (const char *[]){"--tasks", "2", "--kernels", "2", "--us", "300", "--stream", "new", "--block", "1024",
                                          "--period-ms", "30", "--narrow-after", "1", NULL});
    CHECK(w >> 31 && XQ_WIDTH_SMS(w) == 132 && XQ_WIDTH_WIDEST(w) == 16 && XQ_WIDTH_STRETCH(w) == 16,
          "width word %#x after a short narrow task 30 ms after a wide one: want 132 multiprocessors, the widest 16, "
          "now 16 (a new stretch counts as wide as the stream has been)", w);
    /* XQ_STRETCH=0: the stretch told as the widest (the node holds behind that, as before) */
    w = width_word_after("XQ_STRETCH=0", (const char *[]){"--tasks", "12", "--kernels", "2", "--us", "1000", "--stream", "new",
                                                          "--block", "1024", "--narrow-after", "1", NULL});
    CHECK(w >> 31 && XQ_WIDTH_SMS(w) == 132 && XQ_WIDTH_WIDEST(w) == 16 && XQ_WIDTH_STRETCH(w) == 16,
          "width word %#x with XQ_STRETCH=0: want 132 multiprocessors, the widest 16, now 16", w);
    /* XQ_STRETCH=reserve: the stretch told as the widest too (an experiment: reserved by the stretch) */
    w = width_word_after("XQ_STRETCH=reserve", (const char *[]){"--tasks", "12", "--kernels", "2", "--us", "1000", "--stream",
                                                                "new", "--block", "1024", "--narrow-after", "1", NULL});
    CHECK(w >> 31 && XQ_WIDTH_SMS(w) == 132 && XQ_WIDTH_WIDEST(w) == 1 && XQ_WIDTH_STRETCH(w) == 1,
          "width word %#x with XQ_STRETCH=reserve: want 132 multiprocessors, the widest 1, now 1", w);
}
/* the second of two best-effort processes, nothing reserved: the second half, 64 after 64; with
 * 36 reserved: (132 - 36) / 2 = 48, after the first 48 */
void test_narrow_part(void)
{
    narrow_run("FAKECUDA_GREEN=1", "new", 0, 1u << 16 | 2u, "of 64 multiprocessors (group 1 of 2 made, 64 asked)");
    narrow_run("FAKECUDA_GREEN=1", "new", 36, 1u << 16 | 2u, "of 48 multiprocessors (group 1 of 2 made, 48 asked)");
    /* with 28 reserved, of 104: 48 each (8 to no one: equal parts stay groups of one split) */
    narrow_run("FAKECUDA_GREEN=1", "new", 28, 1u << 16 | 2u, "of 48 multiprocessors (group 1 of 2 made, 48 asked)");
}

/* parts of their own sizes, in sixteenths of 132: the first ten (80, from 0), the last six (48,
 * after the first 80: the device split at 80, the rest by 48); with 36 reserved, of 96: 56 from 0
 * and the rest, 40, after 56 */
void test_narrow_part_weighted(void)
{
    narrow_run("FAKECUDA_GREEN=1", "new", 0, 1u << 31 | 10u, "of 80 multiprocessors (group 0 of 1 made, 80 asked)");
    narrow_run("FAKECUDA_GREEN=1", "new", 0, 1u << 31 | 10u << 16 | 6u, "of 48 multiprocessors (after the first 80, 48 asked)");
    /* a latency-critical process below a wider one (the node's mpsNarrowLatency): the upper half, no reserve (the second of two 64s) */
    narrow_run("FAKECUDA_GREEN=1", "new", 0, 1u << 31 | 8u << 16 | 8u, "of 64 multiprocessors (group 1 of 2 made, 64 asked)");
    narrow_run("FAKECUDA_GREEN=1", "new", 36, 1u << 31 | 10u, "of 56 multiprocessors (group 0 of 1 made, 56 asked)");
    narrow_run("FAKECUDA_GREEN=1", "new", 36, 1u << 31 | 10u << 16 | 6u, "of 40 multiprocessors (after the first 56, 40 asked)");
}

/* XQ_NARROW=0 asks without "narrow"; an answer saying "narrow" to a question without it is not taken. */
void test_narrow_not_asked(void)
{
    tn_start(SOCK, 16);
    tn_space("SPACE mps /tmp/xq-test-mps 100 narrow");
    app a;
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_PRIORITY=1", "XQ_NARROW=0", NULL},
               (const char *[]){"-c", "echo \"${CUDA_MPS_PIPE_DIRECTORY:-none} ${XQ_SPACE:-none}\"", NULL}, 1);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(!strcmp(slurp(a.out), "none none\n"), "the program saw '%s'", slurp(a.out));
    char last[256];
    CHECK(tn_space_asks(last, sizeof last) == 1 && !strstr(last, "narrow"), "asked '%s'", last);
    tn_space("SPACE mps /tmp/xq-test-mps 100 narrow");
    start_prog(&a, "/bin/sh", (const char *[]){"XQ_PRIORITY=1", NULL},
               (const char *[]){"-c", "echo \"${CUDA_MPS_PIPE_DIRECTORY:-none} ${XQ_SPACE:-none}\"", NULL}, 1);
    CHECK(finish(&a, 10) && a.status == 0 && !strcmp(slurp(a.out), "/tmp/xq-test-mps 100:narrow\n"), "the program saw '%s'",
          slurp(a.out));
}

/* Estimates per width: a kernel's time depends on how much of the device it runs on, and the node
 * compares commands of streams narrowed to different widths. Spin kernels of 1024 threads on
 * multiprocessors of 32 could fill 32; narrowed to a green context of 8 (132 - 124) they take four
 * times their 3 ms on the fake. While narrowed, the slot's estimate (what the node sees) is the
 * stream's average scaled to the whole device: about 3 ms, not 12. Let go on the whole device, the
 * kind is charged its whole-device estimate (from the narrowed one, scaled, until measured), not
 * the narrowed 12 ms: the estimates charged over the run stay close to the time measured (with one
 * estimate for both widths they came to 1.8 x it or more). Kernels of milliseconds, so that the
 * fake's own overhead per kernel (a sleep that overshoots by 0.1-0.3 ms on some machines) and the
 * first launch (it may go before the stream has its slot, on the whole device, and its sample is
 * inflated) count for little. */
static int completed_40(xq_slot *s) { return LD(&s->completed) >= 40; }
void test_narrow_widths(void)
{
    tn_start(SOCK, 16);
    tn_space("SPACE mps /tmp/xq-test-mps 100 narrow");
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, (const char *[]){"XQ_PRIORITY=1", "XQ_LOG=2", "FAKECUDA_TPS=32", NULL},
          (const char *[]){"--tasks", "60", "--kernels", "2", "--us", "3000", "--stream", "new", "--block", "1024", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s, "no STREAM");
    if (!s) {
        finish(&a, 1);
        return;
    }
    __atomic_store_n(&s->reserve_sms, 124, __ATOMIC_SEQ_CST);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    tn_send(0, gate);
    CHECK(wait_until(s, completed_40, 10.0), "40 commands not completed (%llu)", (unsigned long long)LD(&s->completed));
    uint64_t narrowed_est = LD(&s->estimate_ns);
    __atomic_store_n(&s->reserve_sms, 0, __ATOMIC_SEQ_CST); /* the whole device from now on */
    CHECK(finish(&a, 20) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    const char *err = slurp(a.err);
    CHECK(narrowed_est >= 2200000 && narrowed_est <= 4500000,
          "the node saw %.1f us a command while narrowed to 8 of the 32 it could fill, want about 3,000 (the whole device's), not 12,000",
          narrowed_est / 1e3);
    const char *p = strstr(err, "estimated work launched ");
    double est = 0, run = 0;
    CHECK(p && sscanf(p, "estimated work launched %lf ms, measured %lf ms", &est, &run) == 2 && run > 0, "stderr: %s", err);
    CHECK(run > 0 && est / run >= 0.7, "estimates charged %.1f ms for %.1f ms measured (%.2f x); stderr: %s", est, run,
          run > 0 ? est / run : 0.0, err);
    p = strstr(err, "launches narrowed");
    unsigned long long n = 0;
    while (p && p > err && p[-1] != ':') p--;
    if (p) n = strtoull(p + 1, NULL, 10);
    CHECK(est / run <= 1.35, "estimates charged %.1f ms for %.1f ms measured (%.2f x): a width charged another's estimate; "
          "stderr: %s", est, run, run > 0 ? est / run : 0.0, err);
    CHECK(n >= 40 && n < 100, "%llu launches narrowed (want the first 40 or more, not all 120)", n);
}

/* A narrowed run beside others' work takes longer than its share says (on the H200 a 21.5 ms GEMM took
 * 44.3-46.5 ms on 64 of 132 beside a graph: 21.5-22.6 ms scaled to the whole device). The node
 * judges by the slot's estimate whether a command fits between another tenant's requests on the
 * whole device, so runs on the whole device measured lately stand: narrowed ones do not raise the
 * estimate for FULL_TRUST_NS. Spin kernels of 3 ms on the whole device, then narrowed to 8 of the
 * 32 they could fill and half as slow again as that (18 ms, 4.5 scaled): the node still sees about 3. */
static int completed_16(xq_slot *s) { return LD(&s->completed) >= 16; }
static int completed_32(xq_slot *s) { return LD(&s->completed) >= 32; }
void test_narrow_slower_than_share(void)
{
    tn_start(SOCK, 16);
    tn_space("SPACE mps /tmp/xq-test-mps 100 narrow");
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, (const char *[]){"XQ_PRIORITY=1", "XQ_LOG=2", "FAKECUDA_TPS=32", "FAKECUDA_GREEN_SLOW=150", NULL},
          (const char *[]){"--tasks", "30", "--kernels", "2", "--us", "3000", "--stream", "new", "--block", "1024", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s, "no STREAM");
    if (!s) {
        finish(&a, 1);
        return;
    }
    __atomic_store_n(&s->reserve_sms, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    tn_send(0, gate);
    CHECK(wait_until(s, completed_16, 10.0), "16 commands not completed (%llu)", (unsigned long long)LD(&s->completed));
    uint64_t whole = LD(&s->estimate_ns);
    __atomic_store_n(&s->reserve_sms, 124, __ATOMIC_SEQ_CST); /* 8 of the 132 left */
    CHECK(wait_until(s, completed_32, 10.0), "32 commands not completed (%llu)", (unsigned long long)LD(&s->completed));
    uint64_t narrowed = LD(&s->estimate_ns);
    __atomic_store_n(&s->reserve_sms, 0, __ATOMIC_SEQ_CST);
    CHECK(finish(&a, 20) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    const char *err = slurp(a.err);
    const char *p = strstr(err, "launches narrowed");
    unsigned long long n = 0;
    while (p && p > err && p[-1] != ':') p--;
    if (p) n = strtoull(p + 1, NULL, 10);
    CHECK(n >= 8, "%llu launches narrowed, want 8 or more: stderr: %s", n, err);
    CHECK(whole >= 2500000 && whole <= 4000000, "the whole device's estimate %.1f us, want about 3,000", whole / 1e3);
    CHECK(narrowed <= whole + whole / 10, "the node saw %.1f us a command after narrowed runs slower than their share, "
          "want the %.1f us measured on the whole device just before (not about 4,500)", narrowed / 1e3, whole / 1e3);
}

/* More parts than a process keeps green contexts for (32): the node's parts of their own sizes
 * moving while the app runs (widths of one, two and three sixteenths at every offset, with and
 * without a reserve: more than 32 places). Once every place is taken, a part runs on the widest context made inside it
 * (none: on the stream as asked), said once; the results stay right. */
void test_narrow_parts_past_the_cache(void)
{
    tn_start(SOCK, 16);
    tn_space("SPACE mps /tmp/xq-test-mps 100 narrow");
    tn_defaults(1, 0, 0, 0);
    app a;
    start(&a, (const char *[]){"XQ_PRIORITY=1", "XQ_LOG=3", "FAKECUDA_TPS=64", "FAKECUDA_GREEN=1", NULL},
          (const char *[]){"--tasks", "3000", "--kernels", "2", "--us", "50", "--stream", "new", "--block", "1024", "--check", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s, "no STREAM");
    if (!s) {
        finish(&a, 1);
        return;
    }
    uint32_t parts[64];
    int np = 0;
    for (uint32_t w = 1; w <= 3; w++)
        for (uint32_t o = 0; o + w <= 16; o++) parts[np++] = 1u << 31 | o << 16 | w;
    __atomic_store_n(&s->part, parts[0], __ATOMIC_SEQ_CST);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    tn_send(0, gate);
    /* each part in turn for a while, with and without a reserve, until the app is done */
    for (int i = 0; !exited(&a) && i < 20000; i++) {
        __atomic_store_n(&s->reserve_sms, (i / np) % 2 ? 36u : 0u, __ATOMIC_SEQ_CST);
        __atomic_store_n(&s->part, parts[i % np], __ATOMIC_SEQ_CST);
        pause_s(0.0005);
    }
    CHECK(finish(&a, 20) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "output: %s", slurp(a.out));
    const char *err = slurp(a.err);
    CHECK(strstr(err, "green contexts made, no place for more"), "the full cache not said: %s", err);
    CHECK(!strstr(err, "narrowing launches stops"), "stderr: %s", err);
    const char *f = strstr(err, "green contexts made, no place for more");
    CHECK(!f || !strstr(f + 1, "green contexts made, no place for more"), "said more than once");
    /* XQ_LOG=3: each green context made is on the timeline, with when and how long it took */
    unsigned made = 0;
    for (const char *p = err; (p = strstr(p, "xq: timeline green context: ")) != NULL; p++) {
        unsigned sms = 0;
        unsigned long long at = 0, took = 0;
        int off = 0;
        made += sscanf(p, "xq: timeline green context: %u multiprocessors at offset %d, made at %llu in %llu ns", &sms, &off, &at,
                       &took) == 4 && sms > 0 && at > 0;
    }
    CHECK(made >= 2 && made <= 32, "%u green contexts on the timeline (want 2..32, one per context made)", made);
}

/* Joining back from the green stream fails. With CUDA error 4 (the driver shut down: a process's
 * runtime tears the driver down at exit, and launches of ours made after that, such as deferred
 * ones, find it gone) narrowing ends quietly: nothing on the program's stderr at the default log
 * level, no NARROW off for the node to warn of and hold the process by. With any other error it
 * stops as before, said on stderr and told to the node. Either way the order is kept (--check). */
static void join_fail(const char *code, int quiet)
{
    tn_start(SOCK, 16);
    tn_space("SPACE mps /tmp/xq-test-mps 100 narrow");
    tn_defaults(1, 0, 0, 0);
    app a;
    char env[40];
    snprintf(env, sizeof env, "FAKECUDA_JOIN_FAIL=%s", code);
    start(&a, (const char *[]){"XQ_PRIORITY=1", "FAKECUDA_TPS=64", env, NULL},
          (const char *[]){"--tasks", "3", "--kernels", "2", "--us", "300", "--stream", "new", "--block", "1024", "--check", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s, "no STREAM");
    if (!s) {
        finish(&a, 1);
        return;
    }
    __atomic_store_n(&s->reserve_sms, 100, __ATOMIC_SEQ_CST);
    __atomic_store_n(&s->gate, 0, __ATOMIC_SEQ_CST);
    char gate[32];
    snprintf(gate, sizeof gate, "GATE %d", slot);
    tn_send(0, gate);
    CHECK(finish(&a, 10) && a.status == 0, "exit %d: %s", a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "error %s: output: %s", code, slurp(a.out));
    const char *err = slurp(a.err);
    int said = strstr(err, "narrowing launches stops for this process: joining back from the green stream failed") != NULL;
    int told = tn_find(0, -1, "NARROW off", quiet ? 0.3 : 1.0) >= 0;
    CHECK(said == !quiet && told == !quiet, "error %s: stderr %s it, the node %s told (want %s); stderr: %s", code,
          said ? "says" : "does not say", told ? "was" : "was not", quiet ? "neither" : "both", err);
}
void test_narrow_join_fails(void)
{
    join_fail("4", 1);
    join_fail("999", 0);
}

/* Widths by occupancy (XQ_WIDTH=occupancy, an A/B; cuda_int.h: xqc_kthreads): kernels of 200 blocks
 * of 256 threads on multiprocessors of 2048 threads read 25 wide by their threads. Where the driver
 * says one such block fits a multiprocessor (a library's convolution, held by its shared memory),
 * they read the whole device (132), through cuLaunchKernelEx and cuGetProcAddress (whose launches
 * can be deferred) too; where eight fit, 25 as by threads. A driver that fails the call, and the
 * default, read by threads; a bad value is said and ignored. */
static void width_occ_case(const char *width, const char *occ, const char *a1, const char *a2, unsigned want, const char *said)
{
    uint32_t w = width_word_env((const char *[]){"XQ_PRIORITY=2", "XQ_LOG=2", width, occ, NULL},
                                (const char *[]){"--tasks", "3", "--kernels", "2", "--us", "300", "--stream", "new", "--block", "256",
                                                 "--grid", "200", a1, a2, NULL},
                                said);
    CHECK(w >> 31 && XQ_WIDTH_SMS(w) == 132 && XQ_WIDTH_WIDEST(w) == want && XQ_WIDTH_STRETCH(w) == want,
          "width word %#x with %s, %s, %s: want 132 multiprocessors, the widest %u, now too", w, width, occ, a1 ? a1 : "-", want);
}
void test_narrow_width_occupancy(void)
{
    width_occ_case("XQ_WIDTH=threads", "FAKECUDA_OCC_BLOCKS=1", NULL, NULL, 25, NULL);
    width_occ_case("XQ_WIDTH=", "FAKECUDA_OCC_BLOCKS=1", NULL, NULL, 25, NULL);
    width_occ_case("XQ_WIDTH=occupancy", "FAKECUDA_OCC_BLOCKS=1", NULL, NULL, 132, "kernels' widths by occupancy");
    width_occ_case("XQ_WIDTH=occupancy", "FAKECUDA_OCC_BLOCKS=1", "--ex", NULL, 132, NULL);
    width_occ_case("XQ_WIDTH=occupancy", "FAKECUDA_OCC_BLOCKS=1", "--via", "procaddress", 132, NULL);
    width_occ_case("XQ_WIDTH=occupancy", "FAKECUDA_OCC_BLOCKS=8", NULL, NULL, 25, NULL);
    width_occ_case("XQ_WIDTH=occupancy", "FAKECUDA_OCC_BLOCKS=0", NULL, NULL, 25, NULL);
    width_occ_case("XQ_WIDTH=widest", "FAKECUDA_OCC_BLOCKS=1", NULL, NULL, 25, "ignoring XQ_WIDTH='widest': not threads or occupancy");
}
