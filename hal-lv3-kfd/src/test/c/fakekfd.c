/*
 * A fake /dev/kfd for tests, loaded with LD_PRELOAD. It interposes open/openat/close/ioctl:
 * opening the KFD path (XQ_FAKE_KFD_PATH, default /dev/kfd) returns a real descriptor of
 * /dev/null that this library remembers, and ioctls on it are answered like the KFD debugger API
 * answers them (KFD_IOCTL_MINOR_VERSION from XQ_FAKE_KFD_MINOR, default 17): a table of queues
 * with running/suspended state, suspend counts, QUEUE_NEW handling, status bits, and ring read and
 * write indices in memory this library owns. Errors are injected with XQ_FAKE_KFD_ERROR=ERRNO:op
 * (op: version, runtime_enable, enable, suspend, resume, snapshot, patched) or at run time with
 * the control ioctl below. Only for tests; the Java side talks to it through its production FFM
 * code.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define IOC_GET_VERSION 0x80084b01UL
#define IOC_RUNTIME_ENABLE 0xc0104b25UL
#define IOC_DBG_TRAP 0xc0204b26UL
#define IOC_FAKE_CONTROL 0xc0184bf0UL /* test-only, not a KFD ioctl */

#define OP_ENABLE 0
#define OP_DISABLE 1
#define OP_SUSPEND 6
#define OP_RESUME 7
#define OP_SNAPSHOT 13

#define BIT_ERROR 0x40000000u
#define BIT_INVALID 0x80000000u
#define EC_QUEUE_NEW (1ULL << 30)

enum { E_VERSION, E_RUNTIME_ENABLE, E_ENABLE, E_SUSPEND, E_RESUME, E_SNAPSHOT, E_PATCHED, E_COUNT };
static const char *const E_NAMES[E_COUNT] = {"version", "runtime_enable", "enable", "suspend", "resume", "snapshot", "patched"};

enum { C_CREATE = 1, C_STATE, C_SET_ERROR, C_SUBMIT, C_CONSUME, C_DESTROY, C_HW_ERROR, C_RESET, C_RING };

struct control { uint32_t cmd, queue_id, value, out1, out2, out3; };

struct queue {
	int used, suspended, is_new, hw_error;
	uint32_t id, gpu_id, suspends, resumes;
	uint64_t exceptions;
	uint64_t *ring; /* ring[0] write index, ring[1] read index, then the ring itself */
};

#define MAXQ 64
#define MAXFD 64
static struct queue queues[MAXQ];
static int fds[MAXFD];
static int nfds, runtime_enabled, trap_enabled;
static uint32_t next_id = 1;
static int inject[E_COUNT];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct errno_name { const char *name; int value; };
static const struct errno_name ERRNOS[] = {
	{"EPERM", EPERM}, {"ENOENT", ENOENT}, {"ESRCH", ESRCH}, {"EIO", EIO}, {"EBADF", EBADF},
	{"EAGAIN", EAGAIN}, {"ENOMEM", ENOMEM}, {"EACCES", EACCES}, {"EFAULT", EFAULT}, {"EBUSY", EBUSY},
	{"ENODEV", ENODEV}, {"EINVAL", EINVAL}, {"ETIME", ETIME}, {"EALREADY", EALREADY}, {"ETIMEDOUT", ETIMEDOUT}};

static void parse_env(void) {
	const char *spec = getenv("XQ_FAKE_KFD_ERROR");
	if (!spec) return;
	char buf[256];
	strncpy(buf, spec, sizeof buf - 1);
	buf[sizeof buf - 1] = 0;
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		if (!colon) continue;
		*colon = 0;
		for (size_t i = 0; i < sizeof ERRNOS / sizeof ERRNOS[0]; i++)
			if (!strcmp(ERRNOS[i].name, tok))
				for (int op = 0; op < E_COUNT; op++)
					if (!strcmp(E_NAMES[op], colon + 1)) inject[op] = ERRNOS[i].value;
	}
}

__attribute__((constructor)) static void init(void) { parse_env(); }

static const char *kfd_path(void) {
	const char *p = getenv("XQ_FAKE_KFD_PATH");
	return p ? p : "/dev/kfd";
}

static int is_fake(int fd) {
	for (int i = 0; i < nfds; i++)
		if (fds[i] == fd) return 1;
	return 0;
}

static int fake_open(void) {
	static int (*real_open)(const char *, int, ...);
	if (!real_open) real_open = dlsym(RTLD_NEXT, "open");
	int fd = real_open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0) return fd;
	pthread_mutex_lock(&lock);
	if (nfds < MAXFD) fds[nfds++] = fd;
	pthread_mutex_unlock(&lock);
	return fd;
}

static int open_common(const char *path, int flags, mode_t mode, const char *sym, int dirfd, int at) {
	if (path && !strcmp(path, kfd_path())) {
		if (inject[E_VERSION] == ENOENT) { errno = ENOENT; return -1; }
		return fake_open();
	}
	if (at) {
		int (*real)(int, const char *, int, ...) = dlsym(RTLD_NEXT, sym);
		return real(dirfd, path, flags, mode);
	}
	int (*real)(const char *, int, ...) = dlsym(RTLD_NEXT, sym);
	return real(path, flags, mode);
}

#define MODE_ARG(flags) mode_t mode = 0; if ((flags) & (O_CREAT | __O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
int open(const char *path, int flags, ...) { MODE_ARG(flags); return open_common(path, flags, mode, "open", 0, 0); }
int open64(const char *path, int flags, ...) { MODE_ARG(flags); return open_common(path, flags, mode, "open64", 0, 0); }
int openat(int dirfd, const char *path, int flags, ...) { MODE_ARG(flags); return open_common(path, flags, mode, "openat", dirfd, 1); }
int openat64(int dirfd, const char *path, int flags, ...) { MODE_ARG(flags); return open_common(path, flags, mode, "openat64", dirfd, 1); }

int close(int fd) {
	static int (*real_close)(int);
	if (!real_close) real_close = dlsym(RTLD_NEXT, "close");
	pthread_mutex_lock(&lock);
	for (int i = 0; i < nfds; i++)
		if (fds[i] == fd) { fds[i] = fds[--nfds]; break; }
	pthread_mutex_unlock(&lock);
	return real_close(fd);
}

static struct queue *find(uint32_t id) {
	for (int i = 0; i < MAXQ; i++)
		if (queues[i].used && queues[i].id == id) return &queues[i];
	return NULL;
}

static int fail(int e) { errno = e; return -1; }

static int dbg_trap(uint8_t *a) {
	uint32_t pid = *(uint32_t *) a, op = *(uint32_t *) (a + 4);
	uint8_t *u = a + 8;
	if (pid != (uint32_t) getpid()) return fail(ESRCH);
	if (op == OP_ENABLE) {
		if (inject[E_ENABLE]) return fail(inject[E_ENABLE]);
		if (trap_enabled) return fail(EALREADY);
		int dbg_fd = (int) *(uint32_t *) (u + 20);
		if (fcntl(dbg_fd, F_GETFD) == -1) return fail(EBADF);
		uint64_t rinfo = *(uint64_t *) (u + 8);
		uint32_t size = *(uint32_t *) (u + 16);
		if (rinfo && size >= 16) {
			uint8_t *ri = (uint8_t *) (uintptr_t) rinfo;
			*(uint64_t *) ri = 0;
			*(uint32_t *) (ri + 8) = runtime_enabled ? 1 : 0;
			*(uint32_t *) (ri + 12) = 0;
			*(uint32_t *) (u + 16) = 16;
		}
		trap_enabled = 1;
		return 0;
	}
	if (!trap_enabled) return fail(EINVAL);
	if (op == OP_DISABLE) {
		for (int i = 0; i < MAXQ; i++) if (queues[i].used && queues[i].suspended) { queues[i].suspended = 0; queues[i].resumes++; }
		trap_enabled = 0;
		return 0;
	}
	if (op == OP_SUSPEND) {
		if (!runtime_enabled) return fail(EPERM);
		if (inject[E_SUSPEND]) return fail(inject[E_SUSPEND]);
		uint64_t clear = *(uint64_t *) u;
		uint32_t *ids = (uint32_t *) (uintptr_t) *(uint64_t *) (u + 8);
		uint32_t n = *(uint32_t *) (u + 16);
		int count = 0;
		for (uint32_t i = 0; i < n; i++) {
			struct queue *q = find(ids[i]);
			if (!q || q->is_new) { ids[i] |= BIT_INVALID; continue; }
			if (q->hw_error) { ids[i] |= BIT_ERROR; continue; }
			q->exceptions &= ~clear;
			if (!q->suspended) { q->suspended = 1; q->suspends++; count++; }
		}
		return count;
	}
	if (op == OP_RESUME) {
		if (!runtime_enabled) return fail(EPERM);
		if (inject[E_RESUME]) return fail(inject[E_RESUME]);
		uint32_t *ids = (uint32_t *) (uintptr_t) *(uint64_t *) u;
		uint32_t n = *(uint32_t *) (u + 8);
		int count = 0;
		if (!ids) {
			for (int i = 0; i < MAXQ; i++) if (queues[i].used && queues[i].suspended) { queues[i].suspended = 0; queues[i].resumes++; count++; }
			return count;
		}
		for (uint32_t i = 0; i < n; i++) {
			struct queue *q = find(ids[i]);
			if (!q || !q->suspended) { ids[i] |= BIT_INVALID; continue; }
			q->suspended = 0; q->resumes++; count++;
		}
		return count;
	}
	if (op == OP_SNAPSHOT) {
		if (inject[E_SNAPSHOT]) return fail(inject[E_SNAPSHOT]);
		uint64_t clear = *(uint64_t *) u;
		uint8_t *buf = (uint8_t *) (uintptr_t) *(uint64_t *) (u + 8);
		uint32_t cap = *(uint32_t *) (u + 16), esz = *(uint32_t *) (u + 20);
		uint32_t total = 0, copy = esz < 64 ? esz : 64;
		for (int i = 0; i < MAXQ; i++) {
			struct queue *q = &queues[i];
			if (!q->used) continue;
			if (total < cap && buf) {
				uint8_t e[64] = {0};
				uint64_t ex = q->exceptions | (q->is_new ? EC_QUEUE_NEW : 0);
				memcpy(e, &ex, 8);
				uint64_t ring = (uint64_t) (uintptr_t) (q->ring + 2), w = (uint64_t) (uintptr_t) &q->ring[0], r = (uint64_t) (uintptr_t) &q->ring[1];
				memcpy(e + 8, &ring, 8); memcpy(e + 16, &w, 8); memcpy(e + 24, &r, 8);
				memcpy(e + 40, &q->id, 4); memcpy(e + 44, &q->gpu_id, 4);
				uint32_t rsz = 4096 - 16, type = 2;
				memcpy(e + 48, &rsz, 4); memcpy(e + 52, &type, 4);
				memcpy(buf + (size_t) total * esz, e, copy);
				q->exceptions &= ~clear;
				if (clear & EC_QUEUE_NEW) q->is_new = 0;
			}
			total++;
		}
		*(uint32_t *) (u + 16) = total;
		*(uint32_t *) (u + 20) = 64;
		return 0;
	}
	return fail(EINVAL);
}

static int control(struct control *c) {
	struct queue *q;
	switch (c->cmd) {
	case C_CREATE:
		for (int i = 0; i < MAXQ; i++) {
			if (queues[i].used) continue;
			memset(&queues[i], 0, sizeof queues[i]);
			queues[i].used = 1; queues[i].is_new = 1; queues[i].id = next_id++; queues[i].gpu_id = c->value;
			queues[i].ring = calloc(512, 8);
			c->out1 = queues[i].id;
			return 0;
		}
		return fail(ENOSPC);
	case C_STATE:
		if (!(q = find(c->queue_id))) return fail(ENOENT);
		c->out1 = q->suspended; c->out2 = q->suspends; c->out3 = q->resumes;
		return 0;
	case C_SET_ERROR:
		if (c->queue_id >= E_COUNT) return fail(EINVAL);
		inject[c->queue_id] = (int) c->value;
		return 0;
	case C_SUBMIT:
		if (!(q = find(c->queue_id))) return fail(ENOENT);
		__atomic_add_fetch(&q->ring[0], c->value, __ATOMIC_RELEASE);
		return 0;
	case C_CONSUME:
		if (!(q = find(c->queue_id))) return fail(ENOENT);
		if (q->suspended) return fail(EBUSY); /* a suspended queue takes no packets */
		__atomic_add_fetch(&q->ring[1], c->value, __ATOMIC_RELEASE);
		return 0;
	case C_DESTROY:
		if (!(q = find(c->queue_id))) return fail(ENOENT);
		if (q->suspended) return fail(EBUSY); /* the kernel blocks; the fake refuses */
		free(q->ring); q->used = 0;
		return 0;
	case C_HW_ERROR:
		if (!(q = find(c->queue_id))) return fail(ENOENT);
		q->hw_error = (int) c->value;
		return 0;
	case C_RESET:
		for (int i = 0; i < MAXQ; i++) if (queues[i].used) { free(queues[i].ring); queues[i].used = 0; }
		memset(inject, 0, sizeof inject);
		runtime_enabled = 0; trap_enabled = 0;
		return 0;
	}
	return fail(EINVAL);
}

int ioctl(int fd, unsigned long req, ...) {
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	pthread_mutex_lock(&lock);
	int fake = is_fake(fd);
	pthread_mutex_unlock(&lock);
	if (!fake) {
		static int (*real_ioctl)(int, unsigned long, ...);
		if (!real_ioctl) real_ioctl = dlsym(RTLD_NEXT, "ioctl");
		return real_ioctl(fd, req, arg);
	}
	int rc;
	pthread_mutex_lock(&lock);
	switch (req) {
	case IOC_GET_VERSION: {
		if (inject[E_VERSION]) { rc = fail(inject[E_VERSION]); break; }
		const char *m = getenv("XQ_FAKE_KFD_MINOR");
		((uint32_t *) arg)[0] = 1;
		((uint32_t *) arg)[1] = m ? (uint32_t) atoi(m) : 17;
		rc = 0;
		break;
	}
	case IOC_RUNTIME_ENABLE:
		if (inject[E_RUNTIME_ENABLE]) rc = fail(inject[E_RUNTIME_ENABLE]);
		else if (runtime_enabled) rc = fail(EBUSY);
		else { runtime_enabled = 1; ((uint32_t *) arg)[3] = 0; rc = 0; }
		break;
	case IOC_DBG_TRAP: rc = dbg_trap(arg); break;
	case IOC_FAKE_CONTROL: rc = control(arg); break;
	default:
		/* Unknown numbers (including the patched-driver pair) answer EINVAL, as KFD does. */
		rc = fail(inject[E_PATCHED] && (req & 0xff) >= 0x87 && (req & 0xff) <= 0x88 ? inject[E_PATCHED] : EINVAL);
	}
	int saved = errno;
	pthread_mutex_unlock(&lock);
	errno = saved;
	return rc;
}
