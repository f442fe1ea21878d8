/*
 * hip_session.c: the session with the node (registration, STREAM/WAKE/CLOSE lines, the shared
 * memory mirror, the heartbeat), the reader thread and the node's SUSPEND/RESUME (Lv3).
 */
#include "hip_int.h"

/* ------------------------------------------------------------------ session with the node */

struct xqh_session xqh_session = {.mu = PTHREAD_MUTEX_INITIALIZER, .send_mu = PTHREAD_MUTEX_INITIALIZER,
       .start_mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1};
uint64_t xqh_last_wake;
xw_beat xqh_beat;    /* the node's heartbeat (xq_wire.h) */
uint32_t xqh_frozen; /* the heartbeat stopped: the socket was shut down, the reader detaches */

/* Looks at the node's heartbeat (the reader at least every 100 ms, held threads at every wait).
 * Stopped for XW_FROZEN_S: the node is taken for gone. The socket is shut down, so the reader
 * detaches as when the connection closes (every held thread goes, stopped queues resume, the
 * node's session ends) and registers anew once the node answers a HELLO again. Holds no lock. */
void xqh_node_look(void)
{
    uint32_t gs = LD(&xqh_state);
    if (!(gs & 1) || !xw_beat_stale(&xqh_beat, gs)) return;
    pthread_mutex_lock(&xqh_session.send_mu);
    if (LD(&xqh_state) == gs && xqh_session.fd >= 0 && !LD(&xqh_frozen)) {
        ST(&xqh_frozen, 1);
        shutdown(xqh_session.fd, SHUT_RDWR);
    }
    pthread_mutex_unlock(&xqh_session.send_mu);
}

__attribute__((format(printf, 1, 2))) int xqh_send_line(const char *fmt, ...)
{
    char buf[XQ_MAX_LINE + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, XQ_MAX_LINE, fmt, ap);
    va_end(ap);
    if (n < 0) return -1;
    if (n > XQ_MAX_LINE - 1) n = XQ_MAX_LINE - 1;
    buf[n++] = '\n';
    int rc = 0;
    pthread_mutex_lock(&xqh_session.send_mu);
    if (xqh_session.fd < 0) rc = -1;
    for (int off = 0; rc == 0 && off < n;) {
        ssize_t w = send(xqh_session.fd, buf + off, n - off, MSG_NOSIGNAL);
        if (w > 0) off += (int)w;
        else if (w < 0 && errno == EINTR) continue;
        else shutdown(xqh_session.fd, SHUT_RDWR), rc = -1;
    }
    pthread_mutex_unlock(&xqh_session.send_mu);
    xlog(4, "xq: > %.*s", n - 1, buf);
    return rc;
}

void xqh_mirror(xstream *st)
{
    xq_slot *s = st->shm;
    if (!s || st->gen != LD(&xqh_state)) return;
    __atomic_store_n(&s->pending, st->pending, __ATOMIC_RELAXED);
    __atomic_store_n(&s->in_flight, st->in_flight, __ATOMIC_RELAXED);
    __atomic_store_n(&s->launched, st->launched, __ATOMIC_RELAXED);
    __atomic_store_n(&s->completed, st->completed, __ATOMIC_RELAXED);
    __atomic_store_n(&s->failed, st->failed, __ATOMIC_RELAXED);
    __atomic_store_n(&s->run_ns, st->run_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&s->estimate_ns, st->estimate_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&s->ready_since_ns, st->ready_since, __ATOMIC_RELAXED);
    __atomic_store_n(&s->completion_seq, st->cseq, __ATOMIC_RELEASE);
}

/* Caller holds S.mu. */
static void register_locked(xstream *st)
{
    uint32_t gs = LD(&xqh_state);
    if (!(gs & 1) || st->gen == gs || LD(&st->in_use) == 2) return; /* 2: being closed */
    uint32_t i = 0;
    while (i < xqh_session.nslots && xqh_session.used[i]) i++;
    pthread_mutex_lock(&st->mu);
    st->gen = gs;
    if (i == xqh_session.nslots) {
        st->slot = -1, st->shm = NULL;
        pthread_mutex_unlock(&st->mu);
        if (!xqh_session.no_slot_logged++)
            xlog(1, "xq: all %u slots of the node are taken; stream %s runs unscheduled", xqh_session.nslots, st->label);
        return;
    }
    xqh_session.used[i] = 1, xqh_session.owner[i] = st;
    st->slot = (int)i;
    st->shm = (xq_slot *)(xqh_session.base + XQ_SHM_HEADER + (size_t)i * XQ_SLOT_SIZE);
    xqh_mirror(st);
    uint32_t active = st->active;
    pthread_mutex_unlock(&st->mu);
    xqh_send_line("STREAM %u %lx %d %d %d %d %s%s%s", i, (unsigned long)(uintptr_t)st->h, xqh_physical_device(st->device),
              st->prio, st->least, st->greatest, st->label, st->pci[0] ? " " : "", st->pci);
    if (active) xqh_send_line("WAKE %u", i);
}

void xqh_register_stream(xstream *st)
{
    pthread_mutex_lock(&xqh_session.mu);
    register_locked(st);
    pthread_mutex_unlock(&xqh_session.mu);
}

void xqh_wake_node(xstream *st)
{
    uint64_t now = now_ns(), last = LD(&xqh_last_wake);
    if (now - last < WAKE_GAP_NS ||
        !__atomic_compare_exchange_n(&xqh_last_wake, &last, now, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        if (!__atomic_exchange_n(&st->wake_owed, 1, __ATOMIC_SEQ_CST)) {
            ADD(&xqh_owed, 1);
            xqh_tracker_kick();
        }
        return;
    }
    int slot = LD(&st->slot);
    if (LD(&st->gen) == LD(&xqh_state) && (LD(&xqh_state) & 1) && slot >= 0) xqh_send_line("WAKE %d", slot);
}

void xqh_wake_held(xstream *st)
{
    ADD(&st->wseq, 1);
    if (LD(&st->waiters)) futex_wake(&st->wseq);
}

static int try_attach(char *why, size_t whylen)
{
    xw_session x;
    if (!xw_attach(xqh_session.path, xqh_session.name, xqh_session.prio, xqh_session.lv3_offered ? " hip,lv3" : " hip", &x, why, whylen)) return 0;
    pthread_mutex_lock(&xqh_session.mu);
    xqh_session.used = calloc(x.slots, 1);
    xqh_session.owner = calloc(x.slots, sizeof *xqh_session.owner);
    if (!xqh_session.used || !xqh_session.owner) {
        pthread_mutex_unlock(&xqh_session.mu);
        snprintf(why, whylen, "out of memory");
        close(x.fd);
        return 0;
    }
    xqh_session.base = x.base, xqh_session.nslots = x.slots, xqh_session.no_slot_logged = 0;
    pthread_mutex_lock(&xqh_kfd.mu);
    xqh_kfd.wanted = xqh_session.lv3_offered && xw_has_word(x.options, "lv3");
    pthread_mutex_unlock(&xqh_kfd.mu);
    /* WAITS lines: a node from before them refuses the line */
    ST(&xqh_session.waits_ok, xw_has_word(x.options, "waits"));
    pthread_mutex_lock(&xqh_session.send_mu);
    xqh_session.fd = x.fd;
    pthread_mutex_unlock(&xqh_session.send_mu);
    xw_beat_start(&xqh_beat, x.base, LD(&xqh_state) + 1);
    ADD(&xqh_state, 1);
    for (xstream *st = LD(&xqh_all); st; st = st->next_all)
        if (LD(&st->in_use)) register_locked(st);
    pthread_mutex_unlock(&xqh_session.mu);
    xlog(2, "xq: registered with the node at %s: %u slots%s", xqh_session.path, x.slots, xqh_kfd.wanted ? ", Lv3 wanted" : "");
    return 1;
}

/* Resumes st's queue when suspended. *why: what failed. Returns 1 resumed, 0 nothing to do, -1 failed. */
int xqh_kfd_resume(xstream *st, const char **why)
{
    pthread_mutex_lock(&xqh_kfd.mu);
    int r = 0;
    if (st->suspended && xqh_kfd.fd >= 0) {
        uint32_t ids[1] = {st->kq};
        /* resume: queue_array_ptr, num_queues */
        int rc = xqh_dbg_trap(KFD_OP_RESUME, (uint64_t)(uintptr_t)ids, 1, 0, 0);
        if (rc == 1) st->suspended = 0, r = 1;
        else *why = rc < 0 ? xqh_errno_name(errno) : ids[0] & KFD_BIT_INVALID ? "invalid" : "error", r = -1;
    }
    pthread_mutex_unlock(&xqh_kfd.mu);
    return r;
}

static void resume_all(const char *when)
{
    for (xstream *st = LD(&xqh_all); st; st = st->next_all) {
        const char *why = "";
        ST(&st->lv3_want, 0);
        if (xqh_kfd_resume(st, &why) < 0) xlog(1, "xq: resuming the KFD queue of stream %s %s failed: %s", st->label, when, why);
    }
}

static void detach(const char *why)
{
    pthread_mutex_lock(&xqh_session.mu);
    pthread_mutex_lock(&xqh_session.send_mu);
    close(xqh_session.fd);
    xqh_session.fd = -1;
    pthread_mutex_unlock(&xqh_session.send_mu);
    ADD(&xqh_state, 1);
    free(xqh_session.used), free(xqh_session.owner);
    xqh_session.used = NULL, xqh_session.owner = NULL, xqh_session.nslots = 0;
    pthread_mutex_unlock(&xqh_session.mu);
    resume_all("after the node was lost"); /* nothing stays stopped without a node */
    for (xstream *st = LD(&xqh_all); st; st = st->next_all) xqh_wake_held(st);
    if (__atomic_exchange_n(&xqh_frozen, 0, __ATOMIC_SEQ_CST))
        xlog(1, "xq: node at %s not answering for %d s (frozen?); running unscheduled", xqh_session.path, XW_FROZEN_S);
    else
        xlog(1, "xq: node at %s lost (%s); running unscheduled", xqh_session.path, why);
}

/* Whether a stream of this process that the node lets launch has work in flight. That work may
 * wait for work a held stream of the process launched (hipStreamWaitEvent; a launch on the null
 * stream waits for every blocking stream): with the held one's queue stopped, neither would ever
 * end, and the node, seeing the open one busy, would keep the other held behind it (a higher
 * stream priority). So while one is, no queue of the process stays suspended: the held streams
 * are held at Lv1 only (what they launched runs; what they have not, waits), as the CUDA
 * interposer's level 2 does (cuda_words.c). */
static int open_busy(const xstream *but)
{
    uint32_t gs = LD(&xqh_state);
    for (xstream *st = LD(&xqh_all); st; st = st->next_all) {
        if (st == but || !LD(&st->in_use) || !LD(&st->in_flight)) continue;
        xq_slot *s = LD(&st->gen) == gs && (gs & 1) ? st->shm : NULL;
        if (!s || !LD(&s->gate)) return 1;
    }
    return 0;
}

/* The node's SUSPEND <slot> (or, from the tracker, one it asked for and that waited): stop the
 * stream's KFD queue, within the rate limit; a failure leaves the queue running (the gate still
 * holds new launches) and is reported. While a stream the node lets launch is busy it waits
 * (open_busy; nothing is said until it is made). tracker: never sleeps for the rate limit.
 * Returns 0 when it is to be tried again. */
static int lv3_suspend(unsigned slot, xstream *st, int tracker)
{
    const char *why = NULL;
    if (!LD(&st->kq) && !LD(&st->kq_tried)) xqh_kfd_map_default(st); /* a default stream not launched on since the node came */
    pthread_mutex_lock(&xqh_kfd.mu);
    if (!xqh_kfd.wanted || xqh_kfd.fd < 0) why = "not-offered";
    else if (!st->kq) why = "unmapped";
    else if (st->suspended) why = NULL;
    else if (open_busy(st)) {
        pthread_mutex_unlock(&xqh_kfd.mu);
        if (!tracker) {
            xlog(3, "xq: stream %s: KFD suspend waits: another stream of the process is busy", st->label);
            xqh_tracker_kick();
        }
        return 0;
    } else if (!xqh_kfd_trap_locked()) why = xqh_kfd.why;
    else {
        uint64_t now = now_ns();
        if (xqh_kfd.last_suspend && now < xqh_kfd.last_suspend + xqh_kfd.min_gap_ns) {
            if (tracker) {
                pthread_mutex_unlock(&xqh_kfd.mu);
                return 0;
            }
            sleep_ns((long)(xqh_kfd.last_suspend + xqh_kfd.min_gap_ns - now));
        }
        xqh_kfd.last_suspend = now_ns();
        uint32_t ids[1] = {st->kq};
        /* suspend: exception_mask, queue_array_ptr, num_queues, grace_period */
        int rc = xqh_dbg_trap(KFD_OP_SUSPEND, 0, (uint64_t)(uintptr_t)ids, 1, xqh_kfd.grace_units);
        if (rc == 1) st->suspended = 1;
        else why = rc < 0 ? xqh_errno_name(errno) : ids[0] & KFD_BIT_INVALID ? "invalid" : "error";
    }
    pthread_mutex_unlock(&xqh_kfd.mu);
    /* the gate may have opened meanwhile: then the queue goes on at once */
    if (!why && st->shm && !LD(&st->shm->gate)) {
        const char *w2 = "";
        ST(&st->lv3_want, 0);
        if (xqh_kfd_resume(st, &w2) > 0) {
            xqh_send_line("LV3 %u resumed", slot);
            return 1;
        }
    }
    if (why) {
        ST(&st->lv3_want, 0); /* said: held at Lv1 */
        xlog(2, "xq: stream %s: KFD suspend failed (%s); it runs on at Lv1", st->label, why);
        xqh_send_line("LV3 %u failed %s", slot, why);
    } else
        xqh_send_line("LV3 %u suspended", slot);
    return 1;
}

/* Tracker, each round: a suspended queue goes on while another stream of the process that the
 * node lets launch is busy (open_busy), and a suspend the node asked for is made once none is
 * and the gate is still closed; a gate seen open takes the ask back. Returns whether an ask
 * waits (the tracker does not park then). */
int xqh_lv3_watch(void)
{
    int busy, waits = 0;
    uint32_t gs = LD(&xqh_state);
    for (xstream *st = LD(&xqh_all); st; st = st->next_all) {
        int want = LD(&st->lv3_want), sus = LD(&st->suspended), slot = LD(&st->slot);
        if ((!want && !sus) || LD(&st->in_use) != 1) continue;
        xq_slot *s = LD(&st->gen) == gs && (gs & 1) ? st->shm : NULL;
        if (!s || slot < 0) continue; /* detached: resume_all */
        if (!LD(&s->gate)) {
            ST(&st->lv3_want, 0); /* opened (a RESUME, if any, is the reader's) */
            continue;
        }
        busy = open_busy(st);
        if (sus && busy) {
            const char *why = "";
            if (xqh_kfd_resume(st, &why) > 0) {
                xlog(3, "xq: stream %s: KFD queue resumed: another stream of the process is busy", st->label);
                xqh_send_line("LV3 %d resumed", slot);
            }
        } else if (want && !sus && !busy && !lv3_suspend((unsigned)slot, st, 1))
            waits = 1;
        if (want && busy) waits = 1;
    }
    return waits;
}

static void lv3_resume(unsigned slot, xstream *st)
{
    const char *why = "";
    int r = xqh_kfd_resume(st, &why);
    if (r < 0) xqh_send_line("LV3 %u failed %s", slot, why);
    else xqh_send_line("LV3 %u resumed", slot);
}

static void handle_line(char *line)
{
    unsigned slot;
    char word[16];
    xlog(4, "xq: < %s", line);
    if (sscanf(line, "%15s %u", word, &slot) != 2) {
        if (!strncmp(line, "ERR", 3)) xlog(1, "xq: node at %s: %s", xqh_session.path, line);
        return;
    }
    pthread_mutex_lock(&xqh_session.mu);
    xstream *st = slot < xqh_session.nslots ? xqh_session.owner[slot] : NULL;
    pthread_mutex_unlock(&xqh_session.mu);
    if (!strcmp(word, "GATE") && st) {
        xqh_wake_held(st);
        if (st->shm && !LD(&st->shm->gate)) {
            ST(&st->lv3_want, 0);
            if (LD(&st->suspended)) lv3_resume(slot, st);
        }
    } else if (!strcmp(word, "SUSPEND")) {
        if (st) {
            ST(&st->lv3_want, 1);
            lv3_suspend(slot, st, 0);
        } else
            xqh_send_line("LV3 %u failed no-stream", slot);
    } else if (!strcmp(word, "RESUME")) {
        if (st) {
            ST(&st->lv3_want, 0);
            lv3_resume(slot, st);
        } else
            xqh_send_line("LV3 %u failed no-stream", slot);
    }
    /* Q <slot> <handle>: for information only */
}

static void *reader_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "xq-hip-reader");
    char buf[4 * XQ_MAX_LINE];
    size_t len = 0;
    for (;;) {
        if (xqh_session.fd < 0) {
            sleep(1);
            char why[256];
            if (try_attach(why, sizeof why)) {
                len = 0;
                xlog(1, "xq: node at %s %s; scheduled", xqh_session.path, xqh_session.ever_attached ? "is back" : "found");
                xqh_session.ever_attached = 1;
            }
            continue;
        }
        struct pollfd pf = {xqh_session.fd, POLLIN, 0};
        int ready = poll(&pf, 1, XW_LOOK_MS); /* a frozen node keeps the socket open: its heartbeat tells */
        xqh_node_look();
        if (ready <= 0) continue;
        ssize_t r = read(xqh_session.fd, buf + len, sizeof buf - len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            detach(r == 0 ? "connection closed" : strerror(errno));
            continue;
        }
        len += (size_t)r;
        char *p = buf, *nl;
        while ((nl = memchr(p, '\n', len - (size_t)(p - buf)))) {
            *nl = 0;
            handle_line(p);
            p = nl + 1;
        }
        len -= (size_t)(p - buf);
        memmove(buf, p, len);
        if (len == sizeof buf) len = 0;
    }
    return NULL;
}


/* A last look at every stream first, so that work done by now (a process usually synchronises
 * before it exits) is counted done, not left in flight; then the tracker stops querying a runtime
 * about to be torn down, and no queue is left stopped. */
static void at_exit(void)
{
    for (xstream *st = LD(&xqh_all); st; st = st->next_all)
        if (LD(&st->in_use) && LD(&st->n) && !LD(&xqh_captures)) {
            uint64_t next = UINT64_MAX;
            st->poll_at = 0;
            xqh_poll_stream(st, &next);
        }
    for (xstream *st = LD(&xqh_all); st; st = st->next_all) /* destroyed streams whose work is done leave the node */
        if (LD(&st->in_use) && LD(&st->closing)) xqh_close_stream(st);
    for (xstream *st = LD(&xqh_all); st; st = st->next_all)
        if (st->pads_up || st->pads_late)
            xlog(2, "xq: stream %s: guard pad %.1f us at exit (raised at %u closes with work past a horizon, worn at %u kept clear); "
                    "%u ends seen over %u us past the horizon not learnt from (the process stopped, or its tracker not run)",
                 st->label, st->pad_ns / 1e3, st->pads_up, st->pads_down, st->pads_late, (unsigned)(PAD_STALE_NS / 1000));
    xqh_tracker_summary();
    ST(&xqh_exiting, 1);
    resume_all("at exit");
}

void xqh_session_start(void)
{
    pthread_mutex_lock(&xqh_session.start_mu);
    if (!xqh_session.started) {
        xw_env(xqh_session.path, sizeof xqh_session.path, xqh_session.name, sizeof xqh_session.name, xqh_session.prio, sizeof xqh_session.prio);
        xqh_session.lv3_offered = xqh_kfd_probe();
        char why[256];
        if (try_attach(why, sizeof why)) xqh_session.ever_attached = 1;
        else if (!xw_refused) xlog(1, "xq: no node at %s (%s); running unscheduled", xqh_session.path, why); /* a refusal was said */
        xqh_spawn(reader_main);
        static int exit_registered;
        if (!exit_registered++) atexit(at_exit);
        ST(&xqh_session.started, 1);
    }
    pthread_mutex_unlock(&xqh_session.start_mu);
}

/* ------------------------------------------------------------------ waits on the device */

uint64_t xqh_waits;
static uint64_t g_waits_told, g_waits_at;

void xqh_host_wait_begin(void)
{
    /* counted only for a node that asked (a best-effort process's): a latency-critical process's
     * synchronize pays no look at its streams */
    if (!LD(&xqh_session.waits_ok)) return;
    for (xstream *st = LD(&xqh_all); st; st = st->next_all)
        if (LD(&st->in_use) && (LD(&st->in_flight) || LD(&st->pending))) {
            ADD(&xqh_waits, 1);
            return;
        }
}

void xqh_host_wait_end(void)
{
    if (!LD(&xqh_session.waits_ok)) return;
    uint64_t n = LD(&xqh_waits), at = LD(&g_waits_at), t = now_ns();
    if (n == LD(&g_waits_told) || t - at < XQH_WAITS_EVERY_NS) return;
    /* one thread tells; the others' counts go with the next line */
    if (!__atomic_compare_exchange_n(&g_waits_at, &at, t, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return;
    ST(&g_waits_told, n);
    xqh_send_line("WAITS %llu", (unsigned long long)n);
}
