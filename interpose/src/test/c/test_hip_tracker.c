/* test_hip_tracker.c: the tracker: how often it looks at a stream (XQ_TRACK_AHEAD). */
#define _GNU_SOURCE
#include "test_hip.h"

/* The tracker's quick naps (for launchers waiting on a limit) over one task of 50 ms kernels, one
 * in flight at a time (threshold 1: the launching thread waits on the limit all along), with
 * XQ_TRACK_AHEAD as given; all its naps in *naps, the stream's estimate and completions in *est
 * and *done; want: a line stderr must hold exactly once. As the CUDA interposer's track_ahead
 * (test_cuda_tracker.c). */
static unsigned long hip_ahead_naps(const char *ahead, const char *want, unsigned long *naps, uint64_t *est, uint64_t *done)
{
    tn_start(SOCK, 16);
    tn_defaults(0, 1, 0, 0);
    app a;
    start(&a, (const char *[]){"XQ_LOG=2", ahead, NULL},
          (const char *[]){"--stream", "new", "--tasks", "1", "--kernels", "16", "--us", "50000", "--check", NULL});
    int slot = stream_slot(0, 0, NULL, 0);
    xq_slot *s = slot >= 0 ? tn_slot(0, (unsigned)slot) : NULL;
    CHECK(s && finish(&a, 20) && a.status == 0, "%s: exit %d: %s", ahead, a.status, slurp(a.err));
    CHECK(strstr(slurp(a.out), "\"check\":\"ok\""), "%s: output: %s", ahead, slurp(a.out));
    *est = s ? s->estimate_ns : 0, *done = s ? s->completed : 0;
    if (want) {
        const char *w = strstr(slurp(a.err), want);
        CHECK(w, "%s: stderr without '%s': %s", ahead, want, slurp(a.err));
        CHECK(!w || !strstr(w + 1, want), "%s: '%s' said more than once: %s", ahead, want, slurp(a.err));
    }
    const char *l = strstr(slurp(a.err), "tracker naps "), *q = l ? strstr(l, "waiting on a limit: ") : NULL;
    *naps = l ? strtoul(l + strlen("tracker naps "), NULL, 10) : 0;
    return q ? strtoul(q + strlen("waiting on a limit: "), NULL, 10) : 0;
}

/* A long command behind a limit is looked at quickly only once most of its estimate has passed
 * (XQ_TRACK_AHEAD, on by default; hip_int.h: AHEAD_*): far fewer quick naps of the tracker than
 * with every look quick, the same completions, and the same estimate; a bad value is named once
 * and the default kept. */
void test_hip_track_ahead(void)
{
    uint64_t est_off, done_off, est_on, done_on;
    unsigned long all_off, all_on;
    unsigned long off = hip_ahead_naps("XQ_TRACK_AHEAD=0", NULL, &all_off, &est_off, &done_off);
    unsigned long on = hip_ahead_naps("XQ_TRACK_AHEAD=1", NULL, &all_on, &est_on, &done_on);
    printf("    tracker naps: %lu (%lu quick) with every look quick, %lu (%lu quick) looking ahead; estimate %.2f / %.2f ms\n", all_off,
           off, all_on, on, est_off / 1e6, est_on / 1e6);
    /* 800 ms of kernels: every nap quick but the first and last few; looking ahead, those of the
     * last sixteenth of each kernel and of the first one (no estimate yet) */
    CHECK(off > all_off / 2 && all_on > 0, "naps %lu, %lu of them quick, with every look quick; %lu looking ahead", all_off, off, all_on);
    CHECK(3 * on < off, "quick naps %lu looking ahead against %lu with every look quick (want under a third)", on, off);
    CHECK(all_on < all_off, "naps %lu looking ahead against %lu with every look quick", all_on, all_off);
    CHECK(done_off >= 16 && done_on == done_off, "completed %lu / %lu (16 kernels and the app's copies)", (unsigned long)done_off,
          (unsigned long)done_on);
    CHECK(est_off > 0 && est_on * 4 > est_off * 3 && est_on * 4 < est_off * 5, "the stream's estimate %lu ns looking ahead, %lu ns not",
          (unsigned long)est_on, (unsigned long)est_off);
    /* a value neither 0 nor 1 is named, refused, and changes nothing: the default (ahead) holds */
    unsigned long all_bad;
    uint64_t est_bad, done_bad;
    unsigned long bad = hip_ahead_naps("XQ_TRACK_AHEAD=maybe", "xq: ignoring XQ_TRACK_AHEAD='maybe': not 0 or 1", &all_bad, &est_bad, &done_bad);
    CHECK(3 * bad < off && done_bad == done_off, "XQ_TRACK_AHEAD=maybe: quick naps %lu (off %lu), completed %lu", bad, off,
          (unsigned long)done_bad);
}
