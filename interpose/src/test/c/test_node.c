/* The test node: see test_node.h. */
#define _GNU_SOURCE
#include "test_node.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SESS 64
#define MAX_LINES 50000
/* Room past MAX_LINES for every line but WAKE: a process whose stream goes idle between launches
 * (the fake's kernels done before the next, as overhead_cold's 1 MiB touched between launches
 * makes them on a slow VM) sends a WAKE line a launch, and 50,000 of them from its first run
 * left no room for the next runs' HELLO and STREAM lines (the test read "did not register"). */
#define RESERVE_LINES 4000
#define TN_LAG_SLOTS 64

typedef struct sess {
    int fd;
    pid_t peer;
    uint8_t *shm; /* stays mapped after the session ends: the test reads the counts */
    char buf[4 * XQ_MAX_LINE];
    size_t len;
    /* the lags WAKE lines told (WAKE <slot> <lag us>), + 1 (0: none): the last and the largest */
    unsigned long long lag_last[TN_LAG_SLOTS], lag_max[TN_LAG_SLOTS];
} sess;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sess S[MAX_SESS];
static int nsess, listen_fd = -1, stop_pipe[2] = {-1, -1}, running;
static tn_line *lines;
static int nlines;
static unsigned g_slots, d_gate, d_thr, d_batch, d_win;
static char g_ok_options[64];
static char g_space_answer[256] = "SPACE none off"; /* tn_space() */
static char g_space_last[256];                    /* the last SPACE line asked */
static int g_space_asks;
static char g_refuse_cap[32]; /* a HELLO naming this capability is refused, as by a node that does not know it */
static char g_path[108], g_dir[64];
static pthread_t th;
static uint64_t start_ns;
static int g_beats = 1; /* tn_heartbeat() */
static int g_frozen;    /* tn_freeze() */

double tn_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void record(int s, const char *text)
{
    pthread_mutex_lock(&mu);
    if (nlines < MAX_LINES || (nlines < MAX_LINES + RESERVE_LINES && strncmp(text, "WAKE", 4))) {
        lines[nlines].t = tn_now();
        lines[nlines].sess = s;
        snprintf(lines[nlines].text, sizeof lines[nlines].text, "%s", text);
        nlines++;
    }
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void put(int fd, const char *line)
{
    char b[XQ_MAX_LINE + 2];
    int n = snprintf(b, sizeof b, "%s\n", line);
    if (send(fd, b, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) { /* like the node: never blocks */
    }
}

static void config_slot(xq_slot *sl)
{
    __atomic_store_n(&sl->threshold, d_thr, __ATOMIC_RELAXED);
    __atomic_store_n(&sl->batch, d_batch, __ATOMIC_RELAXED);
    __atomic_store_n(&sl->window_us, d_win, __ATOMIC_RELAXED);
    __atomic_store_n(&sl->gate, d_gate, __ATOMIC_RELAXED);
    __atomic_add_fetch(&sl->config_seq, 1, __ATOMIC_SEQ_CST);
}

static void hello(int i, const char *line)
{
    sess *s = &S[i];
    int pid = 0;
    if (sscanf(line, "HELLO 1 %d", &pid) != 1 || pid != s->peer) {
        char e[128];
        snprintf(e, sizeof e, "ERR pid %d is not the peer's %d", pid, (int)s->peer);
        put(s->fd, e);
        shutdown(s->fd, SHUT_RDWR);
        return;
    }
    if (*g_refuse_cap) {
        const char *caps = line;
        for (int f = 0; f < 5 && caps; f++) /* HELLO 1 pid name prio [caps] */
            caps = (caps = strchr(caps, ' ')) ? caps + 1 : NULL;
        if (caps && strstr(caps, g_refuse_cap)) {
            char e[160];
            snprintf(e, sizeof e, "ERR capability '%s' is not known; allowed: cuda, hip, lv3, comma-separated, each once",
                     g_refuse_cap);
            put(s->fd, e);
            shutdown(s->fd, SHUT_RDWR);
            return;
        }
    }
    char path[128];
    snprintf(path, sizeof path, "%s/session-%d", g_dir, i);
    size_t size = XQ_SHM_HEADER + (size_t)g_slots * XQ_SLOT_SIZE;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)size)) {
        put(s->fd, "ERR cannot create the shared memory");
        return;
    }
    s->shm = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    xq_shm_header *h = (xq_shm_header *)s->shm;
    h->magic = XQ_SHM_MAGIC, h->version = XQ_SHM_VERSION, h->slots = g_slots, h->slot_size = XQ_SLOT_SIZE;
    h->node_start_ns = start_ns;
    for (unsigned k = 0; k < g_slots; k++)
        config_slot((xq_slot *)(s->shm + XQ_SHM_HEADER + k * XQ_SLOT_SIZE));
    char ok[256];
    snprintf(ok, sizeof ok, "OK %s %u %u%s%s", path, g_slots, XQ_SLOT_SIZE, *g_ok_options ? " " : "", g_ok_options);
    put(s->fd, ok);
}

/* Handled first, recorded after: a test that sees a line sees its effects (a STREAM's slot
 * configured), and its own changes to the slot are not overwritten by them. */
static void on_line(int i, char *line)
{
    unsigned slot;
    unsigned long long lag;
    char tail;
    if (sscanf(line, "WAKE %u %llu%c", &slot, &lag, &tail) == 2 && slot < TN_LAG_SLOTS) { /* the optional device lag */
        pthread_mutex_lock(&mu);
        S[i].lag_last[slot] = lag + 1;
        if (lag + 1 > S[i].lag_max[slot])
            S[i].lag_max[slot] = lag + 1;
        pthread_mutex_unlock(&mu);
    }
    if (!strncmp(line, "HELLO ", 6))
        hello(i, line);
    else if (!strcmp(line, "MAPPED")) {
        char path[128];
        snprintf(path, sizeof path, "%s/session-%d", g_dir, i);
        unlink(path);
    } else if (sscanf(line, "STREAM %u", &slot) == 1 && slot < g_slots && S[i].shm) {
        config_slot((xq_slot *)(S[i].shm + XQ_SHM_HEADER + slot * XQ_SLOT_SIZE));
        char q[64];
        snprintf(q, sizeof q, "Q %u %u", slot, 1000u + slot);
        put(S[i].fd, q);
    }
    record(i, line);
}

/* A connection whose first line is SPACE (the interposer's constructor asks how the process
 * shares the device): answered and closed here, counted apart from the sessions. Caller holds mu. */
static int space_asked(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    char b[256];
    if (poll(&p, 1, 100) <= 0) return 0;
    ssize_t n = recv(fd, b, sizeof b - 1, MSG_PEEK);
    if (n < 6 || strncmp(b, "SPACE ", 6)) return 0;
    b[n] = 0;
    char *nl = strchr(b, '\n');
    if (!nl) return 0;
    *nl = 0;
    snprintf(g_space_last, sizeof g_space_last, "%s", b);
    g_space_asks++;
    put(fd, g_space_answer);
    close(fd);
    return 1;
}

/* Every 100 ms, as the node's timer does: the time into each live session's header. */
static void beat(double *next)
{
    double now = tn_now();
    if (now < *next)
        return;
    *next = now + 0.1;
    if (!__atomic_load_n(&g_beats, __ATOMIC_ACQUIRE) || __atomic_load_n(&g_frozen, __ATOMIC_ACQUIRE))
        return;
    for (int i = 0; i < nsess; i++)
        if (S[i].fd >= 0 && S[i].shm)
            __atomic_store_n(&((xq_shm_header *)S[i].shm)->heartbeat_ns, (uint64_t)(now * 1e9), __ATOMIC_RELEASE);
}

static void *serve(void *arg)
{
    (void)arg;
    double next_beat = 0;
    for (;;) {
        if (__atomic_load_n(&g_frozen, __ATOMIC_ACQUIRE)) { /* stopped: nothing read, accepted or written */
            struct pollfd q = {stop_pipe[0], POLLIN, 0};
            if (poll(&q, 1, 20) > 0)
                break;
            continue;
        }
        beat(&next_beat);
        struct pollfd p[MAX_SESS + 2];
        int map[MAX_SESS + 2], n = 0;
        p[n].fd = stop_pipe[0], p[n].events = POLLIN, map[n++] = -2;
        p[n].fd = listen_fd, p[n].events = POLLIN, map[n++] = -1;
        pthread_mutex_lock(&mu);
        for (int i = 0; i < nsess; i++)
            if (S[i].fd >= 0)
                p[n].fd = S[i].fd, p[n].events = POLLIN, map[n++] = i;
        pthread_mutex_unlock(&mu);
        int wait_ms = (int)((next_beat - tn_now()) * 1000) + 1;
        if (poll(p, (nfds_t)n, wait_ms < 1 ? 1 : wait_ms) < 0 && errno != EINTR)
            break;
        if (p[0].revents)
            break;
        if (p[1].revents & POLLIN) {
            int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
            struct ucred uc;
            socklen_t l = sizeof uc;
            pthread_mutex_lock(&mu);
            if (fd >= 0 && space_asked(fd)) {
                /* a SPACE question is its connection's only line: answered, no session */
            } else if (fd >= 0 && nsess < MAX_SESS) {
                getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &l);
                S[nsess] = (sess){.fd = fd, .peer = uc.pid};
                nsess++;
            } else if (fd >= 0)
                close(fd);
            pthread_mutex_unlock(&mu);
        }
        for (int k = 2; k < n; k++) {
            if (!p[k].revents)
                continue;
            sess *s = &S[map[k]];
            ssize_t r = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);
            if (r <= 0) {
                pthread_mutex_lock(&mu);
                close(s->fd);
                s->fd = -1;
                pthread_mutex_unlock(&mu);
                record(map[k], "+EOF");
                continue;
            }
            s->len += (size_t)r;
            char *a = s->buf, *nl;
            while ((nl = memchr(a, '\n', s->len - (size_t)(a - s->buf)))) {
                *nl = 0;
                on_line(map[k], a);
                a = nl + 1;
            }
            s->len -= (size_t)(a - s->buf);
            memmove(s->buf, a, s->len);
        }
    }
    return NULL;
}

int tn_start(const char *path, unsigned slots)
{
    if (running)
        tn_kill();
    if (!lines)
        lines = calloc(MAX_LINES + RESERVE_LINES, sizeof *lines);
    nlines = 0, nsess = 0, g_slots = slots;
    g_beats = 1, g_frozen = 0;
    snprintf(g_space_answer, sizeof g_space_answer, "SPACE none off");
    g_space_asks = 0, g_space_last[0] = 0;
    snprintf(g_path, sizeof g_path, "%s", path);
    strcpy(g_dir, "/tmp/xq-test-node-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    start_ns = (uint64_t)(tn_now() * 1e9);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    unlink(path);
    listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof a) || listen(listen_fd, 64))
        return -1;
    if (pipe2(stop_pipe, O_CLOEXEC))
        return -1;
    running = 1;
    return pthread_create(&th, NULL, serve, NULL);
}

void tn_kill(void)
{
    if (!running)
        return;
    ssize_t w = write(stop_pipe[1], "x", 1);
    (void)w;
    pthread_join(th, NULL);
    close(listen_fd);
    unlink(g_path);
    for (int i = 0; i < nsess; i++)
        if (S[i].fd >= 0)
            close(S[i].fd), S[i].fd = -1;
    close(stop_pipe[0]), close(stop_pipe[1]);
    rmdir(g_dir); /* files of sessions that never sent MAPPED stay; rmdir then fails, harmlessly */
    running = 0;
}

void tn_heartbeat(int on) { __atomic_store_n(&g_beats, on, __ATOMIC_RELEASE); }

void tn_freeze(int on) { __atomic_store_n(&g_frozen, on, __ATOMIC_RELEASE); }

void tn_refuse_capability(const char *cap)
{
    snprintf(g_refuse_cap, sizeof g_refuse_cap, "%s", cap ? cap : "");
}

void tn_space(const char *answer)
{
    pthread_mutex_lock(&mu);
    snprintf(g_space_answer, sizeof g_space_answer, "%s", answer);
    pthread_mutex_unlock(&mu);
}

int tn_space_asks(char *last, size_t cap)
{
    pthread_mutex_lock(&mu);
    int n = g_space_asks;
    if (last) snprintf(last, cap, "%s", g_space_last);
    pthread_mutex_unlock(&mu);
    return n;
}

void tn_ok_options(const char *options)
{
    snprintf(g_ok_options, sizeof g_ok_options, "%s", options ? options : "");
}

void tn_defaults(unsigned gate, unsigned threshold, unsigned batch, unsigned window_us)
{
    d_gate = gate, d_thr = threshold, d_batch = batch, d_win = window_us;
}

int tn_nlines(void)
{
    pthread_mutex_lock(&mu);
    int n = nlines;
    pthread_mutex_unlock(&mu);
    return n;
}

tn_line tn_get(int i)
{
    pthread_mutex_lock(&mu);
    tn_line l = lines[i];
    pthread_mutex_unlock(&mu);
    return l;
}

int tn_find(int from, int sess, const char *prefix, double timeout_s)
{
    double end = tn_now() + timeout_s;
    pthread_mutex_lock(&mu);
    for (int i = from < 0 ? 0 : from;;) {
        for (; i < nlines; i++)
            if ((sess < 0 || lines[i].sess == sess) && !strncmp(lines[i].text, prefix, strlen(prefix))) {
                pthread_mutex_unlock(&mu);
                return i;
            }
        double left = end - tn_now();
        if (left <= 0)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long ns = ts.tv_nsec + (long)((left < 0.05 ? left : 0.05) * 1e9);
        ts.tv_sec += ns / 1000000000L, ts.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&cv, &mu, &ts);
    }
    pthread_mutex_unlock(&mu);
    return -1;
}

int tn_count(int sess, const char *prefix)
{
    int c = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nlines; i++)
        c += (sess < 0 || lines[i].sess == sess) && !strncmp(lines[i].text, prefix, strlen(prefix));
    pthread_mutex_unlock(&mu);
    return c;
}

long long tn_wake_lag(int sess, unsigned slot, long long *max)
{
    long long last = -1, m = -1;
    pthread_mutex_lock(&mu);
    if (sess >= 0 && sess < nsess && slot < TN_LAG_SLOTS)
        last = (long long)S[sess].lag_last[slot] - 1, m = (long long)S[sess].lag_max[slot] - 1;
    pthread_mutex_unlock(&mu);
    if (max)
        *max = m;
    return last;
}

int tn_sessions(void)
{
    pthread_mutex_lock(&mu);
    int n = nsess;
    pthread_mutex_unlock(&mu);
    return n;
}

int tn_peer_pid(int sess) { return sess < tn_sessions() ? (int)S[sess].peer : -1; }

xq_slot *tn_slot(int sess, unsigned slot)
{
    if (sess >= tn_sessions() || !S[sess].shm || slot >= g_slots)
        return NULL;
    return (xq_slot *)(S[sess].shm + XQ_SHM_HEADER + slot * XQ_SLOT_SIZE);
}

void tn_send(int sess, const char *line)
{
    pthread_mutex_lock(&mu);
    if (sess < nsess && S[sess].fd >= 0)
        put(S[sess].fd, line);
    pthread_mutex_unlock(&mu);
}

int tn_foreign_listener(const char *path, unsigned uid, const char *log)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    unlink(path);
    int ready[2], fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || out < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || pipe(ready))
        return -1;
    pid_t pid = fork();
    if (pid == 0) { /* the credentials a client sees are the listener's at listen() */
        for (int k = 3; k < 1024; k++) /* the test node's sessions must end when it closes them */
            if (k != fd && k != out && k != ready[1])
                close(k);
        if (setgid(uid) || setuid(uid) || listen(fd, 16))
            _exit(1);
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        for (int c; (c = accept(fd, NULL, NULL)) >= 0; close(c)) {
            char b[512];
            ssize_t n;
            while ((n = read(c, b, sizeof b)) > 0)
                if (write(out, b, (size_t)n) != n)
                    _exit(1);
        }
        _exit(0);
    }
    char x;
    close(fd), close(out), close(ready[1]);
    int ok = pid > 0 && read(ready[0], &x, 1) == 1;
    close(ready[0]);
    if (!ok && pid > 0)
        kill(pid, SIGKILL), waitpid(pid, NULL, 0);
    return ok ? pid : -1;
}
