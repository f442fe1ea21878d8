/*
 * What both interposers (libxq-cuda.so, libxq-hip.so) say to the node and how they find it:
 * the log line, the clock, the socket path, the process's name and priority, one protocol line
 * read with a time limit, and registration (HELLO, the shared memory, MAPPED). Specification:
 * docs/processes.md. Static functions, included by the translation units of each library; each
 * library defines xq_log_level once.
 */
#ifndef XQ_WIRE_H
#define XQ_WIRE_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "xq_shm.h"

extern int xq_log_level __attribute__((visibility("hidden"))); /* XQ_LOG; 1 unless set */

__attribute__((format(printf, 2, 3), unused, noinline, cold)) static void xlog_at(int level, const char *fmt, ...)
{
    if (xq_log_level < level) return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof buf - 2) n = sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, n); /* one write: lines of several threads do not interleave */
    (void)w;
}
/* The level is checked where the line is logged: a launch's path makes no call for lines of a
 * level not in force (a varargs call costs a launch ~20 instructions and its cache lines). */
#define xlog(level, ...) do { int xl_ = (level); if (xq_log_level >= xl_) xlog_at(xl_, __VA_ARGS__); } while (0)

__attribute__((unused)) static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The node's heartbeat (docs/processes.md, "Faults"). A node that stops (SIGSTOP, a debugger, a
 * hung JVM) keeps its socket open, and only a process that writes to it would notice; one held in
 * a launch or a synchronisation would wait forever. The node writes heartbeat_ns into the session's
 * header every 100 ms; seen to move since the session began and then unchanged for XW_FROZEN_S
 * seconds of looks, the node is taken for frozen. A node that never writes it (0: an older node),
 * or never moved it, is never taken for frozen. Looks compare values, not clocks: a process that
 * was itself stopped sees a moved value when it runs again. */
#define XW_FROZEN_S 1
#define XW_LOOK_MS 100 /* the reader looks this often at least; held threads at every wait */

typedef struct xw_beat {
    const xq_shm_header *hd;       /* the session's header; NULL before the first session */
    uint32_t gen;                  /* the session (the interposer's g_state while attached) */
    uint32_t busy;                 /* one looker at a time; the others skip their look */
    uint64_t first, last, last_at; /* the value at attach, at the last look, when it last changed */
} xw_beat;

/* At attach, before the session is announced: gen is the state the interposer enters with it. */
__attribute__((unused)) static void xw_beat_start(xw_beat *b, const void *base, uint32_t gen)
{
    while (__atomic_exchange_n(&b->busy, 1, __ATOMIC_ACQUIRE)) sched_yield();
    b->hd = base, b->gen = gen;
    b->first = b->last = __atomic_load_n(&b->hd->heartbeat_ns, __ATOMIC_ACQUIRE);
    b->last_at = now_ns();
    __atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
}

/* 1 when the heartbeat of session gen moved since attach and has not moved for XW_FROZEN_S. */
__attribute__((unused)) static int xw_beat_stale(xw_beat *b, uint32_t gen)
{
    if (__atomic_exchange_n(&b->busy, 1, __ATOMIC_ACQUIRE)) return 0;
    int stale = 0;
    if (b->hd && b->gen == gen) {
        uint64_t v = __atomic_load_n(&b->hd->heartbeat_ns, __ATOMIC_ACQUIRE), now = now_ns();
        if (v != b->last) b->last = v, b->last_at = now;
        else if (v != b->first && now - b->last_at >= XW_FROZEN_S * 1000000000ull) stale = 1;
    }
    __atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
    return stale;
}

/* Protocol names: [A-Za-z0-9._:/+-], anything else becomes '_'. */
__attribute__((unused)) static void xw_clean(char *out, size_t cap, const char *raw)
{
    size_t i = 0;
    for (; raw[i] && i < cap - 1; i++) {
        char c = raw[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._:/+-", c);
        out[i] = ok ? c : '_';
    }
    out[i] = 0;
}

/* XQ_SOCKET, XQ_NAME, XQ_PRIORITY (docs/processes.md): the socket path, the name (cleaned) and
 * the priority field of HELLO ("-" when none or when XQ_PRIORITY is not allowed, said once). */
__attribute__((unused)) static void xw_env(char *path, size_t path_cap, char *name, size_t name_cap, char *prio, size_t prio_cap)
{
    const char *v = getenv("XQ_SOCKET");
    if (v && *v) snprintf(path, path_cap, "%s", v);
    else if ((v = getenv("XDG_RUNTIME_DIR")) && *v) snprintf(path, path_cap, "%s/xq/node.sock", v);
    else if (geteuid() == 0) snprintf(path, path_cap, "/run/xq/node.sock");
    else snprintf(path, path_cap, "/tmp/xq-%u/node.sock", (unsigned)geteuid());

    char raw[PATH_MAX] = "";
    if ((v = getenv("XQ_NAME")) && *v) snprintf(raw, sizeof raw, "%s", v);
    else {
        ssize_t n = readlink("/proc/self/exe", raw, sizeof raw - 1);
        raw[n > 0 ? n : 0] = 0;
        const char *b = strrchr(raw, '/');
        memmove(raw, b ? b + 1 : raw, strlen(b ? b + 1 : raw) + 1);
        if (!*raw) snprintf(raw, sizeof raw, "%s", program_invocation_short_name);
    }
    xw_clean(name, name_cap, raw);
    if (!*name) snprintf(name, name_cap, "unknown");

    snprintf(prio, prio_cap, "-");
    if ((v = getenv("XQ_PRIORITY")) && *v) {
        char *end;
        errno = 0;
        long p = strtol(v, &end, 10);
        if (errno || *end || end == v || p < -1000 || p > 1000)
            xlog(1, "xq: ignoring XQ_PRIORITY='%s': not an integer in [-1000,1000]", v);
        else snprintf(prio, prio_cap, "%ld", p);
    }
}

/* Reads one line (without '\n') within ms milliseconds. */
__attribute__((unused)) static int xw_read_line(int fd, char *buf, size_t cap, int ms)
{
    size_t n = 0;
    uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
    while (n < cap - 1) {
        uint64_t t = now_ns();
        struct pollfd p = {fd, POLLIN, 0};
        if (t >= end || poll(&p, 1, (int)((end - t) / 1000000ull) + 1) <= 0) return -1;
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r <= 0) return -1;
        if (c == '\n') {
            buf[n] = 0;
            return 0;
        }
        buf[n++] = c;
    }
    return -1;
}

/* A registration: the socket, the session's mapping, its slots, and what the node's OK line
 * said after the slot size (options, space-separated words; "" when none). */
typedef struct xw_session {
    int fd;
    uint8_t *base;
    uint32_t slots;
    char options[128];
    char shm_path[XQ_MAX_LINE];
} xw_session;

/* Whether the last xw_connect refused the node: the caller then says nothing more (the refusal
 * was said once, and "no node" would be wrong). */
__attribute__((unused)) static int xw_refused;

/* A refusal: said once per process (the reader asks again every second, and each child of a
 * fork asks for itself); -1. */
__attribute__((format(printf, 4, 5), unused)) static int xw_refuse(const char *path, char *why, size_t whylen, const char *fmt, ...)
{
    static pid_t said;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    xw_refused = 1;
    if (said != getpid()) {
        said = getpid();
        xlog(1, "xq: refusing the node at %s: %s; running unscheduled", path, why);
    }
    return -1;
}

/* Whether this process belongs to group g (effective or supplementary). */
__attribute__((unused)) static int xw_in_group(gid_t g)
{
    if (getegid() == g) return 1;
    gid_t l[256];
    int n = getgroups(256, l);
    for (int i = 0; i < n; i++)
        if (l[i] == g) return 1;
    return 0;
}

/* Connects to the node's socket: the fd, else -1 and why. Whoever answers there can hold or
 * steer every launch of the process, and a path under /tmp can be taken by any local user before
 * the node starts. So before a word is said: the socket's directory belongs to this user or to
 * root and nobody else may write there (nobody else could have put the socket there), the socket
 * is a socket of that same owner (not a link to elsewhere), and the process at the other end, as
 * the kernel tells it, runs as that owner (the check that holds even if the path changed in
 * between). docs/processes.md, "Who the node is". */
__attribute__((unused)) static int xw_connect(const char *path, char *why, size_t whylen)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    xw_refused = 0;
    if (strlen(path) >= sizeof a.sun_path) {
        snprintf(why, whylen, "socket path too long");
        return -1;
    }
    strcpy(a.sun_path, path);
    char dir[sizeof a.sun_path];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    struct stat d, s;
    unsigned me = (unsigned)geteuid();
    if (stat(dir, &d) || lstat(path, &s)) { /* no directory or no socket: no node, not a refusal */
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    unsigned owner = (unsigned)d.st_uid;
    /* A node of another user serves this one only where it was named (XQ_SOCKET, as ./xq run does
     * for a node configured with a socket group) and admits this user by that group: never on
     * the predictable default path */
    const char *named = getenv("XQ_SOCKET");
    int admitted = named && !strcmp(named, path) && xw_in_group(d.st_gid);
    if (owner != me && owner != 0 && !admitted)
        return xw_refuse(path, why, whylen, "its directory is owned by uid %u, not by you (uid %u) or root", owner, me);
    if (d.st_mode & 022)
        return xw_refuse(path, why, whylen, "its directory (mode %04o) may be written by group or others",
                         (unsigned)d.st_mode & 07777);
    if (!S_ISSOCK(s.st_mode))
        return xw_refuse(path, why, whylen, "%s", S_ISLNK(s.st_mode) ? "it is a symbolic link, not a socket" : "it is not a socket");
    if ((unsigned)s.st_uid != owner)
        return xw_refuse(path, why, whylen, "the socket is owned by uid %u, not by its directory's owner (uid %u)",
                         (unsigned)s.st_uid, owner);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        snprintf(why, whylen, "%s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    struct ucred peer;
    socklen_t len = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) || len != sizeof peer) {
        close(fd);
        return xw_refuse(path, why, whylen, "cannot tell who answers there (%s)", strerror(errno));
    }
    if ((unsigned)peer.uid != owner) {
        close(fd);
        return xw_refuse(path, why, whylen, "the node answering there runs as uid %u, not as its directory's owner (uid %u)",
                         (unsigned)peer.uid, owner);
    }
    return fd;
}

/* Connects to path, says HELLO (caps: "" or " <capability,...>", appended to the line), maps
 * the shared memory and says MAPPED. 1 on success, else 0 and why. */
__attribute__((unused)) static int xw_attach(const char *path, const char *name, const char *prio, const char *caps, xw_session *out,
                     char *why, size_t whylen)
{
    int fd = xw_connect(path, why, whylen);
    if (fd < 0) return 0;
    char line[XQ_MAX_LINE + 1];
    unsigned slots = 0, slot_size = 0;
    int used = 0;
    int n = snprintf(line, sizeof line, "HELLO 1 %d %s %s%s\n", (int)getpid(), name, prio, caps);
    if (send(fd, line, n, MSG_NOSIGNAL) != n || xw_read_line(fd, line, sizeof line, 2000)) {
        snprintf(why, whylen, "no answer to HELLO");
        goto fail;
    }
    if (strncmp(line, "OK ", 3) || sscanf(line + 3, "%511s %u %u%n", out->shm_path, &slots, &slot_size, &used) != 3 ||
        slot_size != XQ_SLOT_SIZE || !slots || slots > 1000000) {
        snprintf(why, whylen, "refused: %.200s", line);
        goto fail;
    }
    const char *opt = line + 3 + used;
    while (*opt == ' ') opt++;
    snprintf(out->options, sizeof out->options, "%s", opt);
    size_t size = XQ_SHM_HEADER + (size_t)slots * XQ_SLOT_SIZE;
    int mfd = open(out->shm_path, O_RDWR | O_CLOEXEC);
    struct stat sb;
    void *base = MAP_FAILED;
    if (mfd >= 0 && !fstat(mfd, &sb) && (size_t)sb.st_size >= size)
        base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (mfd >= 0) close(mfd);
    if (base == MAP_FAILED) {
        snprintf(why, whylen, "cannot map %.200s", out->shm_path);
        goto fail;
    }
    const xq_shm_header *hd = base;
    if (hd->magic != XQ_SHM_MAGIC || hd->version != XQ_SHM_VERSION || hd->slots != slots) {
        snprintf(why, whylen, "bad shared memory header");
        munmap(base, size); /* nobody has seen it yet */
        goto fail;
    }
    if (send(fd, "MAPPED\n", 7, MSG_NOSIGNAL) != 7) {
        snprintf(why, whylen, "lost after HELLO");
        munmap(base, size);
        goto fail;
    }
    struct timeval tv = {1, 0}; /* a node that stops reading is taken for gone */
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    out->fd = fd, out->base = base, out->slots = slots;
    return 1;
fail:
    close(fd);
    return 0;
}

/* SPACE (docs/processes.md, "Space and time"): asks the node how this process shares the device,
 * before the program creates its CUDA context. A node running MPS answers "SPACE mps <pipe
 * directory> <percent>" and the MPS client variables, which the driver reads when it
 * initialises, are set here; anything else (no node, an old node, "SPACE none ...") leaves the
 * environment as it was. Returns the share in percent, or 0 when the process shares in time. */
__attribute__((unused)) static int xw_space(const char *path, const char *name, const char *prio, int ask_narrow, int *narrow,
                                            char *why, size_t whylen)
{
    *narrow = 0;
    int fd = xw_connect(path, why, whylen);
    if (fd < 0) return 0;
    char line[XQ_MAX_LINE + 1], dir[XQ_MAX_LINE] = "";
    int pct = 0, used = 0;
    int n = snprintf(line, sizeof line, "SPACE 1 %d %s %s%s\n", (int)getpid(), name, prio, ask_narrow ? " narrow" : "");
    /* a short wait: every process of a tree under ./xq run asks once at its start */
    if (send(fd, line, n, MSG_NOSIGNAL) != n || xw_read_line(fd, line, sizeof line, 500)) {
        snprintf(why, whylen, "no answer to SPACE");
        close(fd);
        return 0;
    }
    close(fd);
    /* SPACE mps <pipe directory> <percent> [narrow] [low]: narrow only where it was asked, on the
     * whole device; low: MPS's lower client priority (a best-effort process) */
    if (sscanf(line, "SPACE mps %511s %d%n", dir, &pct, &used) != 2 || pct < 1 || pct > 100 || dir[0] != '/') {
        snprintf(why, whylen, "%.200s", line);
        return 0;
    }
    const char *rest = line + used;
    int nar = !strncmp(rest, " narrow", 7) && (!rest[7] || rest[7] == ' ');
    if (nar) rest += 7;
    int low = !strcmp(rest, " low");
    if (low) rest += 4;
    if (*rest || (nar && (!ask_narrow || pct != 100))) {
        snprintf(why, whylen, "%.200s", line);
        return 0;
    }
    *narrow = nar;
    /* the process's own CUDA_MPS_CLIENT_PRIORITY is kept */
    if (low) setenv("CUDA_MPS_CLIENT_PRIORITY", "1", 0);
    char v[24];
    snprintf(v, sizeof v, "%d%s", pct, *narrow ? ":narrow" : "");
    setenv("CUDA_MPS_PIPE_DIRECTORY", dir, 1);
    if (pct < 100) {
        snprintf(line, sizeof line, "%d", pct);
        setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", line, 1);
    } else
        unsetenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    setenv("XQ_SPACE", v, 1); /* the process's children inherit the share without asking again */
    return pct;
}

/* Whether the space-separated list has word w. */
__attribute__((unused)) static int xw_has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)); p += n)
        if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ' ')) return 1;
    return 0;
}

#endif
