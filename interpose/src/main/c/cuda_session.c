/*
 * cuda_session.c: the session with the node (registration, STREAM/WAKE/CLOSE lines, the shared
 * memory mirror of each stream's counts, the heartbeat), the reader thread, MPS (SPACE) and the
 * last look at exit.
 */
#include "cuda_int.h"

/* ------------------------------------------------------------------ session with the node */

struct xqc_session xqc_session = {.mu = PTHREAD_MUTEX_INITIALIZER, .send_mu = PTHREAD_MUTEX_INITIALIZER,
       .start_mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1};
uint64_t xqc_last_wake;
xw_beat xqc_beat;    /* the node's heartbeat (xq_wire.h) */
uint32_t xqc_frozen; /* the heartbeat stopped: the socket was shut down, the reader detaches */

/* Looks at the node's heartbeat (the reader at least every 100 ms, held threads at every wait).
 * Stopped for XW_FROZEN_S: the node is taken for gone. The socket is shut down, so the reader
 * detaches as when the connection closes (every held thread goes, deferred launches are made, the
 * node's session ends) and registers anew once the node answers a HELLO again. Holds no lock. */
void xqc_node_look(void)
{
    uint32_t gs = LD(&xqc_state);
    if (!(gs & 1) || !xw_beat_stale(&xqc_beat, gs)) return;
    pthread_mutex_lock(&xqc_session.send_mu);
    if (LD(&xqc_state) == gs && xqc_session.fd >= 0 && !LD(&xqc_frozen)) {
        ST(&xqc_frozen, 1);
        shutdown(xqc_session.fd, SHUT_RDWR);
    }
    pthread_mutex_unlock(&xqc_session.send_mu);
}

__attribute__((format(printf, 1, 2))) int xqc_send_line(const char *fmt, ...)
{
    char buf[XQ_MAX_LINE + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, XQ_MAX_LINE, fmt, ap); /* at most 511 characters, then '\n' */
    va_end(ap);
    if (n < 0) return -1;
    if (n > XQ_MAX_LINE - 1) n = XQ_MAX_LINE - 1;
    buf[n++] = '\n';
    int rc = 0;
    uint64_t p0 = XQ_HT_ON ? now_ns() : 0;
    pthread_mutex_lock(&xqc_session.send_mu);
    if (xqc_session.fd < 0) rc = -1;
    for (int off = 0; rc == 0 && off < n;) {
        ssize_t w = send(xqc_session.fd, buf + off, n - off, MSG_NOSIGNAL);
        if (w > 0) off += (int)w;
        else if (w < 0 && errno == EINTR) continue;
        else {
            shutdown(xqc_session.fd, SHUT_RDWR); /* the reader sees the end and detaches */
            rc = -1;
        }
    }
    pthread_mutex_unlock(&xqc_session.send_mu);
    if (p0) xqc_ht_part(HP_SEND, now_ns() - p0);
    xlog(4, "xq: > %.*s", n - 1, buf);
    return rc;
}

/* XQ_LOG=3: the busy periods the node was shown (an arrival stamp, then idle or another), as
 * xqc_mirror (cuda_int.h) shows a new ready_since. Caller holds st->mu. */
XQ_COLD void xqc_mirror_arrivals(xstream *st)
{
    if (st->ready_since && st->ready_since == st->arr_shown) {
        /* the same arrival shown again, after its launch: a width not known when it was shown
         * first (the stream's first launch ever, shown before its driver call) is known now */
        if (st->arr && st->narr && st->arr[st->narr - 1].arrived == st->ready_since) st->arr[st->narr - 1].width = xqc_width_word(st);
        return;
    }
    if (!st->arr) st->arr = calloc(ARR_MAX, sizeof *st->arr);
    if (st->arr) {
        if (st->narr && !st->arr[st->narr - 1].idle) st->arr[st->narr - 1].idle = st->ready_since ? st->ready_since : now_ns();
        if (st->ready_since && st->narr < ARR_MAX) st->arr[st->narr++] = (arr_entry){st->ready_since, 0, xqc_width_word(st)};
    }
    st->arr_shown = st->ready_since;
}

/* Gives st a slot of the current session and tells the node. Caller holds S.mu. */
static void register_locked(xstream *st)
{
    uint32_t gs = LD(&xqc_state);
    if (!(gs & 1) || st->gen == gs) return;
    uint32_t i = 0;
    while (i < xqc_session.nslots && xqc_session.used[i]) i++;
    mu_lock(&st->mu);
    st->gen = gs;
    if (i == xqc_session.nslots) { /* more streams than slots: this one runs unscheduled */
        st->slot = -1, st->shm = NULL;
        mu_unlock(&st->mu);
        if (!xqc_session.no_slot_logged++)
            xlog(1, "xq: all %u slots of the node are taken; stream %s runs unscheduled", xqc_session.nslots, st->label);
        return;
    }
    xqc_session.used[i] = 1, xqc_session.owner[i] = st;
    st->slot = (int)i;
    st->shm = (xq_slot *)(xqc_session.base + XQ_SHM_HEADER + (size_t)i * XQ_SLOT_SIZE);
    xqc_mirror(st);
    uint32_t active = st->active;
    mu_unlock(&st->mu);
    xqc_send_line("STREAM %u %lx %d %d %d %d %s%s%s", i, (unsigned long)(uintptr_t)st->h, st->device, st->prio,
              st->least, st->greatest, st->label, st->pci[0] ? " " : "", st->pci);
    if (active) xqc_send_line("WAKE %u", i);
}

void xqc_register_stream(xstream *st)
{
    pthread_mutex_lock(&xqc_session.mu);
    register_locked(st);
    pthread_mutex_unlock(&xqc_session.mu);
}

/* ------------------------------------------------------------------ how soon the node hears of an arrival
 * XQ_LOG=2: for each WAKE line that tells of an arrival (the stream ready, its ready_since set),
 * the time from that stamp to the line's send, by who sent it; and what a direct send cost the
 * launching thread. The node's trace times the rest (its reaction: to its first word, from the word
 * to applied), so the two say where an arrival's time goes. */
int xqc_arrival_direct;
#define TOLD_MAX 8192
static uint32_t g_told_tr[TOLD_MAX], g_told_dir[TOLD_MAX], g_told_cost[TOLD_MAX];
static uint32_t g_ntold_tr, g_ntold_dir, g_ntold_cost, g_told_paced;

static void told_note(uint32_t *a, uint32_t *n, uint64_t ns)
{
    uint32_t i = __atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
    if (i < TOLD_MAX) a[i] = ns > 0xffffffffull ? 0xffffffffu : (uint32_t)ns;
}

static uint64_t told_since(const xstream *st, uint64_t now)
{
    uint64_t since = LD(&st->ready_since);
    return since && LD(&st->active) > 0 && now > since ? now - since : 0;
}

/* The tracker is about to send st's owed WAKE line. */
void xqc_told_by_tracker(const xstream *st)
{
    if (xq_log_level < 2) return;
    uint64_t d = told_since(st, now_ns());
    if (d) told_note(g_told_tr, &g_ntold_tr, d);
}

static void told_line(const char *who, uint32_t *a, uint32_t n)
{
    if (n > TOLD_MAX) n = TOLD_MAX;
    if (!n) return;
    qsort(a, n, sizeof a[0], xqc_cmp_u32);
    xlog(2, "xq: arrival lines to the node %s: %u, sent after the arrival P50 %.1f us, P90 %.1f us, P99 %.1f us, max %.1f us", who, n,
         a[n / 2] / 1e3, a[n * 9 / 10] / 1e3, a[n * 99 / 100] / 1e3, a[n - 1] / 1e3);
}

void xqc_told_summary(void)
{
    told_line("by the tracker", g_told_tr, LD(&g_ntold_tr));
    told_line("by the launching thread (XQ_ARRIVAL_DIRECT=1)", g_told_dir, LD(&g_ntold_dir));
    uint32_t n = LD(&g_ntold_cost);
    if (n > TOLD_MAX) n = TOLD_MAX;
    if (n) {
        qsort(g_told_cost, n, sizeof g_told_cost[0], xqc_cmp_u32);
        xlog(2, "xq: a direct send cost the launching thread P50 %.1f us, P99 %.1f us, max %.1f us; %u left to the tracker by the pacing",
             g_told_cost[n / 2] / 1e3, g_told_cost[n * 99 / 100] / 1e3, g_told_cost[n - 1] / 1e3, LD(&g_told_paced));
    }
}

/* A WAKE line for st's slot: WAKE <slot>, with the device lag of its last busy period (us) after
 * it, once, where one was seen (cuda_tracker.c: completions_seen) */
void xqc_send_wake(xstream *st, int slot)
{
    uint32_t lag = __atomic_exchange_n(&st->lag_pend, 0, __ATOMIC_SEQ_CST);
    if (lag && LD(&xqc_session.lag_ok)) xqc_send_line("WAKE %d %u", slot, lag - 1);
    else xqc_send_line("WAKE %d", slot);
}

/* XQ_ARRIVAL_DIRECT=1: the launching thread sends an arrival's WAKE line itself; 0 when the pacing
 * leaves it to the tracker. */
static int wake_direct(xstream *st)
{
    uint64_t now = now_ns(), last = LD(&xqc_last_wake);
    if (now - last < WAKE_GAP_NS ||
        !__atomic_compare_exchange_n(&xqc_last_wake, &last, now, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        ADD(&g_told_paced, 1);
        return 0;
    }
    /* a line owed by the tracker for this stream says the same: this one goes first */
    if (__atomic_exchange_n(&st->wake_owed, 0, __ATOMIC_SEQ_CST)) ADD(&xqc_owed, -1);
    uint64_t d = xq_log_level >= 2 ? told_since(st, now) : 0;
    int slot = LD(&st->slot);
    if (LD(&st->gen) == LD(&xqc_state) && (LD(&xqc_state) & 1) && slot >= 0) xqc_send_wake(st, slot);
    if (d) {
        told_note(g_told_dir, &g_ntold_dir, d);
        told_note(g_told_cost, &g_ntold_cost, now_ns() - now);
    }
    return 1;
}

/* Tells the node to decide; paced so that a process flipping busy/idle fast stays under the
 * node's line limit (a delayed WAKE is sent by the tracker, coalesced per stream). */
void xqc_wake_node(xstream *st)
{
    if (!xqc_t_tracker && LD(&xqc_tracker_on)) {
        /* an arrival, with XQ_ARRIVAL_DIRECT=1: this thread tells the node (wake_direct) */
        if (XQ_UNLIKELY(xqc_arrival_direct) && LD(&st->active) > 0 && wake_direct(st)) return;
        /* an application's thread: the tracker sends it (cuda_tracker.c: xqc_tracker_wake_now) */
        if (!__atomic_exchange_n(&st->wake_owed, 1, __ATOMIC_SEQ_CST)) ADD(&xqc_owed, 1);
        xqc_tracker_wake_now();
        return;
    }
    uint64_t now = now_ns(), last = LD(&xqc_last_wake);
    if (now - last < WAKE_GAP_NS || !__atomic_compare_exchange_n(&xqc_last_wake, &last, now, 0,
                                                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        if (!__atomic_exchange_n(&st->wake_owed, 1, __ATOMIC_SEQ_CST)) {
            ADD(&xqc_owed, 1);
            xqc_tracker_kick();
        }
        return;
    }
    int slot = LD(&st->slot);
    if (LD(&st->gen) == LD(&xqc_state) && (LD(&xqc_state) & 1) && slot >= 0) xqc_send_wake(st, slot);
}

void xqc_wake_held(xstream *st)
{
    ADD(&st->wseq, 1);
    if (LD(&st->waiters)) futex_wake(&st->wseq);
}

/* Once per process image (the constructor's SPACE question reads it first): a bad value is said once. */
static void env_read(void)
{
    static int done;
    if (!done++) xw_env(xqc_session.path, sizeof xqc_session.path, xqc_session.name, sizeof xqc_session.name, xqc_session.prio, sizeof xqc_session.prio);
}

/* The process's share of the device under the node's MPS server, in percent; 0: it shares in time
 * (no node, MPS off there, XQ_MPS=0, or the user's own CUDA_MPS_PIPE_DIRECTORY). With xqc_narrow
 * (see "narrowing") the share is the whole device and the node narrows its streams at times. */
static int g_space;

/* Before anything can create a CUDA context: join the node's MPS server if it runs one. */
void xqc_space_setup(void)
{
    const char *v = getenv("XQ_MPS");
    if (v && !strcmp(v, "0")) return;
    if (v && *v && strcmp(v, "1")) xlog(1, "xq: ignoring XQ_MPS='%s': not 0 or 1; asking the node", v);
    if ((v = getenv("XQ_SPACE")) && *v) { /* a parent asked: its children share its share */
        int p = atoi(v);
        if (p >= 1 && p <= 100 && getenv("CUDA_MPS_PIPE_DIRECTORY")) g_space = p, xqc_narrow = p == 100 && strstr(v, ":narrow");
        return;
    }
    if (getenv("CUDA_MPS_PIPE_DIRECTORY")) {
        xlog(2, "xq: CUDA_MPS_PIPE_DIRECTORY is set: the process's own MPS setting is kept");
        return;
    }
    env_read();
    char why[256];
    /* XQ_NARROW=0: a process that must not be narrowed (asks for a capped share instead) */
    const char *nv = getenv("XQ_NARROW");
    int ask = !(nv && !strcmp(nv, "0"));
    if (nv && *nv && strcmp(nv, "0") && strcmp(nv, "1")) xlog(1, "xq: ignoring XQ_NARROW='%s': not 0 or 1", nv);
    g_space = xw_space(xqc_session.path, xqc_session.name, xqc_session.prio, ask, &xqc_narrow, why, sizeof why);
    const char *cp = getenv("CUDA_MPS_CLIENT_PRIORITY");
    if (g_space)
        xlog(2, "xq: MPS client on %d %% of the device%s%s%s", g_space, xqc_narrow ? ", narrowed by the node at times" : "",
             cp ? ", client priority " : "", cp ? cp : "");
    else xlog(3, "xq: no MPS from the node (%s)", why);
}

/* Connects, registers, maps the session's memory and registers every live stream. */
static int try_attach(char *why, size_t whylen)
{
    xw_session x;
    /* XQ_STALL=1 is said (capability lv2: shown by xq:processes); a node that does not know it
     * refuses the HELLO by naming it, and is asked again without */
    /* "narrow": the driver has what narrowing needs (else the node holds the process in time) */
    int nw = g_space && xqc_narrow_usable();
    const char *caps = xqc_stall ? (g_space ? (nw ? " cuda,lv2,mps,narrow" : " cuda,lv2,mps") : " cuda,lv2")
                       : g_space ? (nw ? " cuda,mps,narrow" : " cuda,mps") : "";
    if (!xw_attach(xqc_session.path, xqc_session.name, xqc_session.prio, caps, &x, why, whylen) &&
        (!*caps || !strstr(why, "capability") || !xw_attach(xqc_session.path, xqc_session.name, xqc_session.prio, "", &x, why, whylen)))
        return 0;
    int fd = x.fd;
    uint32_t slots = x.slots;
    void *base = x.base;
    const char *shm_path = x.shm_path;
    pthread_mutex_lock(&xqc_session.mu);
    xqc_session.used = calloc(slots, 1);
    xqc_session.owner = calloc(slots, sizeof *xqc_session.owner);
    if (!xqc_session.used || !xqc_session.owner) {
        pthread_mutex_unlock(&xqc_session.mu);
        snprintf(why, whylen, "out of memory");
        goto fail; /* the mapping stays: it costs little and nobody reads it */
    }
    xqc_session.base = base;
    xqc_session.nslots = slots, xqc_session.no_slot_logged = 0;
    /* a node from before the lag refuses a WAKE line of two fields and ends the session: only one
     * that said it takes them is sent them */
    ST(&xqc_session.lag_ok, xw_has_word(x.options, "lag"));
    /* likewise WAITS lines: a node from before them refuses the line */
    ST(&xqc_session.waits_ok, xw_has_word(x.options, "waits"));
    pthread_mutex_lock(&xqc_session.send_mu);
    xqc_session.fd = fd;
    pthread_mutex_unlock(&xqc_session.send_mu);
    xw_beat_start(&xqc_beat, base, LD(&xqc_state) + 1);
    ADD(&xqc_state, 1); /* attached */
    for (xstream *st = LD(&xqc_all); st; st = st->next_all)
        if (LD(&st->in_use)) register_locked(st);
    pthread_mutex_unlock(&xqc_session.mu);
    xlog(2, "xq: registered with the node at %s: %u slots, memory %s", xqc_session.path, slots, shm_path);
    return 1;
fail:
    close(fd);
    return 0;
}

/* The node is gone: every held thread goes at once, the process runs unscheduled. */
static void detach(const char *why)
{
    pthread_mutex_lock(&xqc_session.mu);
    pthread_mutex_lock(&xqc_session.send_mu);
    close(xqc_session.fd);
    xqc_session.fd = -1;
    pthread_mutex_unlock(&xqc_session.send_mu);
    ADD(&xqc_state, 1); /* detached: every slot pointer is stale from now on */
    free(xqc_session.used), free(xqc_session.owner);
    xqc_session.used = NULL, xqc_session.owner = NULL, xqc_session.nslots = 0; /* the old mapping stays mapped: never munmap */
    pthread_mutex_unlock(&xqc_session.mu);
    xqc_stall_clear_all(); /* nothing launched stays held on the device */
    for (xstream *st = LD(&xqc_all); st; st = st->next_all) xqc_wake_held(st);
    xqc_drain_all(1);
    if (__atomic_exchange_n(&xqc_frozen, 0, __ATOMIC_SEQ_CST))
        xlog(1, "xq: node at %s not answering for %d s (frozen?); running unscheduled", xqc_session.path, XW_FROZEN_S);
    else
        xlog(1, "xq: node at %s lost (%s); running unscheduled", xqc_session.path, why);
}

static void handle_line(char *line)
{
    unsigned slot;
    xlog(4, "xq: < %s", line);
    if (sscanf(line, "GATE %u", &slot) == 1) {
        int deferred = 0;
        pthread_mutex_lock(&xqc_session.mu);
        xstream *st = slot < xqc_session.nslots ? xqc_session.owner[slot] : NULL;
        if (st) {
            xqc_stall_set(st, 0);
            xqc_wake_held(st);
            deferred = LD(&st->dq_n) != 0;
            if (LD(&st->waiters) && st->shm) { /* the documented futex words, for completeness */
                futex_wake(&st->shm->gate);
                futex_wake(&st->shm->completion_seq);
            }
        }
        pthread_mutex_unlock(&xqc_session.mu);
        if (deferred) xqc_drain(st, 0); /* the gate opened: what was deferred goes now (a stream is never freed) */
    } else if (!strncmp(line, "ERR", 3)) {
        xlog(1, "xq: node at %s: %s", xqc_session.path, line);
    }
    /* Q <slot> <handle>: for information only */
}

uint64_t xqc_absent_ns; /* cuda_int.h */

static void *reader_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "xq-reader");
    char buf[4 * XQ_MAX_LINE];
    size_t len = 0;
    for (;;) {
        if (xqc_session.fd < 0) { /* only this thread changes S.fd once it runs */
            sleep(RETRY_S);
            char why[256];
            if (try_attach(why, sizeof why)) {
                len = 0;
                xlog(1, "xq: node at %s %s; scheduled", xqc_session.path, xqc_session.ever_attached ? "is back" : "found");
                xqc_session.ever_attached = 1;
            }
            continue;
        }
        struct pollfd pf = {xqc_session.fd, POLLIN, 0};
        uint64_t polled = xqc_hot.diag ? now_ns() : 0;
        int ready = poll(&pf, 1, XW_LOOK_MS); /* a frozen node keeps the socket open: its heartbeat tells */
        if (polled) { /* XQ_LOG=2: a look that ended far past its 100 ms: the process was stopped */
            uint64_t late = now_ns() - polled, look = XW_LOOK_MS * 1000000ull;
            if (late > look + ABSENT_NS) __atomic_fetch_add(&xqc_absent_ns, late - look, __ATOMIC_RELAXED);
        }
        xqc_node_look();
        if (ready <= 0) continue;
        ssize_t r = read(xqc_session.fd, buf + len, sizeof buf - len);
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
        if (len == sizeof buf) /* a line over the limit: the node broke the protocol */
            len = 0;
    }
    return NULL;
}

/* Registered at the first gated call, after the CUDA runtime registered its own teardown, so
 * this runs before it: the tracker stops querying events of contexts about to be destroyed. A
 * last look at every stream first, so that work done by now (a process usually synchronises
 * before it exits) is counted done, not left in flight. */
static void at_exit(void)
{
    xqc_stall = 0;       /* no more guards, */
    xqc_stall_clear_all(); /* and nothing held on the device while the process winds down */
    xqc_drain_all(1); /* what the process launched is made, as it would have been without us */
    pthread_mutex_lock(&xqc_query_mu);
    CUcontext was = NULL, cur = NULL;
    if (xqc_cu.CtxGetCurrent) xqc_cu.CtxGetCurrent(&was);
    cur = was;
    ST(&xqc_final, 1);
    for (xstream *st = LD(&xqc_all); st; st = st->next_all)
        if (LD(&st->in_use) && (LD(&st->n) || LD(&st->tail_n)) && !LD(&xqc_captures)) {
            uint64_t next = UINT64_MAX, gap = POLL_NS;
            st->poll_at = 0;
            xqc_poll_stream(st, &cur, &next, &gap);
        }
    if (cur != was && xqc_cu.CtxSetCurrent) xqc_cu.CtxSetCurrent(was);
    ST(&xqc_exiting, 1);
    pthread_mutex_unlock(&xqc_query_mu);
    xqc_defer_summary();
}

/* First gated call of the process: connect (lazily: processes that never launch never
 * connect), start the reader, which also retries every second while there is no node. */
void xqc_session_start(void)
{
    pthread_mutex_lock(&xqc_session.start_mu);
    if (!xqc_session.started) {
        env_read();
        char why[256];
        if (try_attach(why, sizeof why)) xqc_session.ever_attached = 1;
        else if (!xw_refused) xlog(1, "xq: no node at %s (%s); running unscheduled", xqc_session.path, why); /* a refusal was said */
        xqc_spawn(reader_main, "reader");
        static int exit_registered; /* once per process image: atexit survives fork */
        if (!exit_registered++) atexit(at_exit);
        ST(&xqc_session.started, 1);
        ST(&xqc_hot.started, 1);
    }
    pthread_mutex_unlock(&xqc_session.start_mu);
}

/* ------------------------------------------------------------------ waits on the device */

uint64_t xqc_waits;
static uint64_t g_waits_told, g_waits_at, g_wait_calls, g_waits_lines;

void xqc_host_wait_begin(void *flush_real)
{
    if (flush_real && LD(&xqc_deferred)) xqc_flush_entry(flush_real);
    /* counted only for a node that asked (a best-effort process's): a latency-critical process's
     * synchronize pays no look at its streams */
    ADD(&g_wait_calls, 1); /* for XQ_LOG=2: whether the synchronizes reach us at all */
    if (!LD(&xqc_session.waits_ok)) return;
    for (xstream *st = LD(&xqc_all); st; st = st->next_all)
        if (LD(&st->in_use) && (LD(&st->in_flight) || LD(&st->dq_n))) {
            ADD(&xqc_waits, 1);
            return;
        }
}

void xqc_host_wait_end(void)
{
    if (!LD(&xqc_session.waits_ok)) return;
    uint64_t n = LD(&xqc_waits), at = LD(&g_waits_at), t = now_ns();
    if (n == LD(&g_waits_told) || t - at < XQC_WAITS_EVERY_NS) return;
    /* one thread tells; the others' counts go with the next line */
    if (!__atomic_compare_exchange_n(&g_waits_at, &at, t, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return;
    ST(&g_waits_told, n);
    if (xqc_send_line("WAITS %llu", (unsigned long long)n) == 0) ADD(&g_waits_lines, 1);
}

/* XQ_LOG=2: what became of the host's waits (none said where the node did not ask for them) */
void xqc_waits_summary(void)
{
    xlog(2, "xq: host waits (a synchronize of a stream, the context or an event): %llu calls; the node %s them%s; %llu with work of ours in flight, "
            "told in %llu WAITS lines, the last %llu",
         (unsigned long long)LD(&g_wait_calls), LD(&xqc_session.waits_ok) ? "asked for" : "did not ask for",
         LD(&xqc_session.waits_ok) ? "" : " (a latency-critical process, or a node from before them)", (unsigned long long)LD(&xqc_waits), (unsigned long long)LD(&g_waits_lines),
         (unsigned long long)LD(&g_waits_told));
}
