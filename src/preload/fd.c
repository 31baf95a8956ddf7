/* The fd module: file descriptors, from every call that makes one to
 * close, close_range and exec (which releases the close-on-exec ones).
 * Each allocation carries what identifies the descriptor (path and flags,
 * socket domain and type, the descriptor it duplicates); the descriptor
 * under a stream (fopen, opendir, ...: file.c) is one too, as valgrind
 * --track-fds=yes counts it. The interposers
 * also keep the trace file's own descriptor out of the program's way,
 * whether the module is on or not. */
#define _GNU_SOURCE
#include "lifetime.h"
#include "module.h"
#include "pages.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

enum {
	F_OPEN, F_OPEN64, F_OPENAT, F_CREAT, F_CLOSE, F_CLOSE_RANGE, F_DUP, F_DUP2, F_DUP3,
	F_FCNTL, F_PIPE, F_PIPE2, F_SOCKET, F_SOCKETPAIR, F_ACCEPT, F_ACCEPT4, F_EVENTFD,
	F_TIMERFD, F_SIGNALFD, F_EPOLL, F_EPOLL1, F_INOTIFY, F_INOTIFY1, F_MEMFD, F_EXEC,
	F_CLOSEFROM, F_FDOPEN, F_FDOPENDIR, F_SHM_OPEN,
	F_STREAMS, /* the descriptors under streams (enum rt_fd_stream), file.c's calls */
	F_COUNT = F_STREAMS + RT_FDS_COUNT
};
static const char *const names[F_COUNT] = {
	"open", "open64", "openat", "creat", "close", "close_range", "dup", "dup2", "dup3",
	"fcntl", "pipe", "pipe2", "socket", "socketpair", "accept", "accept4", "eventfd",
	"timerfd_create", "signalfd", "epoll_create", "epoll_create1", "inotify_init",
	"inotify_init1", "memfd_create", "execve", "closefrom", "fdopen", "fdopendir", "shm_open",
	[F_STREAMS + RT_FDS_FOPEN] = "fopen", [F_STREAMS + RT_FDS_FOPEN64] = "fopen64",
	[F_STREAMS + RT_FDS_FREOPEN] = "freopen", [F_STREAMS + RT_FDS_POPEN] = "popen",
	[F_STREAMS + RT_FDS_TMPFILE] = "tmpfile", [F_STREAMS + RT_FDS_OPENDIR] = "opendir",
	[F_STREAMS + RT_FDS_FCLOSE] = "fclose", [F_STREAMS + RT_FDS_PCLOSE] = "pclose",
	[F_STREAMS + RT_FDS_CLOSEDIR] = "closedir",
};
static const rt_restype types[] = {{"fd", "file descriptor", false}};
rt_module rt_mod_fd = {
	.name = "fd",
	.desc = "file descriptors: open, socket, pipe, dup, accept, eventfd, ... and close, exec",
	.res = types, .nres = 1, .fns = names, .nfns = F_COUNT,
};
#define FN(f) (rt_mod_fd.fn_base + (f))
#define RES rt_mod_fd.res_base

/* Descriptors the module recorded as allocated and not yet released. */
#define LIVE_MAX 65536
static _Atomic uint64_t live[LIVE_MAX / 64] RT_COLD;

static void set_live(int fd, bool on)
{
	if (fd < 0 || fd >= LIVE_MAX)
		return;
	uint64_t bit = UINT64_C(1) << (fd % 64);
	if (on)
		atomic_fetch_or(&live[fd / 64], bit);
	else
		atomic_fetch_and(&live[fd / 64], ~bit);
}

static bool is_live(int fd)
{
	return fd >= 0 && fd < LIVE_MAX && (atomic_load(&live[fd / 64]) >> (fd % 64) & 1);
}


static void put_alloc(unsigned fn, int fd, const rt_arg *a, unsigned n, uint64_t bt)
{
	set_live(fd, true);
	rt_mod_put(0, RT_TF_CALL_ALLOC, fn, RES, (uint64_t)fd, 1, bt, a, n);
}

static void put_free(uint64_t index, unsigned fn, int fd, uint64_t bt)
{
	set_live(fd, false);
	rt_mod_put(index, RT_TF_CALL_FREE, fn, RES, (uint64_t)fd, 0, bt, NULL, 0);
}

bool rt_fd_tracing(void) { return rt_mod_tracing(&rt_mod_fd); }

/* A stream's descriptor is a descriptor (valgrind --track-fds=yes counts
 * it): opened by the stream's call, with its path or command and mode,
 * and released by the stream's close, before the call as close's is. */
void rt_fd_stream_opened(enum rt_fd_stream f, int fd, const char *key, const char *v,
			 const char *mode, uint64_t bt)
{
	rt_arg a[] = {{key, v}, {"mode", mode}};
	if (fd >= 0)
		put_alloc(FN(F_STREAMS + f), fd, a, !key ? 0 : mode ? 2 : 1, bt);
}

void rt_fd_stream_closed(enum rt_fd_stream f, int fd, uint64_t bt)
{
	if (is_live(fd) || (fd >= 0 && fd < 3))
		put_free(0, FN(F_STREAMS + f), fd, bt);
}

void rt_fd_shm_open(int fd, const char *name, int oflag, uint64_t bt)
{
	char path[300], fl[20];
	snprintf(path, sizeof path, "/dev/shm/%s", name[0] == '/' ? name + 1 : name);
	rt_arg a[] = {{"path", path}, {"flags", rt_mod_hex(fl, (unsigned)oflag)}};
	put_alloc(FN(F_SHM_OPEN), fd, a, 2, bt);
}

static uint64_t free_bt(void) { return 0; }
#define FREE_BT() (rt_opt.trace_frees ? rt_mod_bt() : free_bt())

static struct {
	int (*open)(const char *, int, ...), (*open64)(const char *, int, ...);
	int (*openat)(int, const char *, int, ...), (*creat)(const char *, mode_t);
	int (*close)(int), (*close_range)(unsigned, unsigned, int), (*dup)(int);
	int (*dup2)(int, int), (*dup3)(int, int, int), (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...), (*pipe)(int *), (*pipe2)(int *, int);
	int (*socket)(int, int, int), (*socketpair)(int, int, int, int *);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*eventfd)(unsigned, int), (*timerfd_create)(int, int);
	int (*signalfd)(int, const void *, int), (*epoll_create)(int), (*epoll_create1)(int);
	int (*inotify_init)(void), (*inotify_init1)(int), (*memfd_create)(const char *, unsigned);
	void (*closefrom)(int);
} real;

/* --- open and friends --- */

static void opened(unsigned f, int fd, const char *path, int flags, uint64_t bt)
{
	char fl[20];
	rt_arg a[] = {{"path", path}, {"flags", rt_mod_hex(fl, (unsigned)flags)}};
	put_alloc(FN(f), fd, a, 2, bt);
}

static int mode_arg(int flags, va_list ap)
{
	return flags & (O_CREAT | __O_TMPFILE) ? va_arg(ap, int) : 0;
}

#define OPEN(name, F)                                                          \
	RT_EXPORT int name(const char *path, int flags, ...)                   \
	{                                                                      \
		va_list ap;                                                    \
		va_start(ap, flags);                                           \
		int mode = mode_arg(flags, ap);                                \
		va_end(ap);                                                    \
		RT_REAL(real.name, #name);                                     \
		int fd = real.name(path, flags, mode);                         \
		if (fd >= 0 && rt_mod_tracing(&rt_mod_fd))                     \
			opened(F, fd, path, flags, rt_mod_bt());               \
		return fd;                                                     \
	}
OPEN(open, F_OPEN)
OPEN(open64, F_OPEN64)

RT_EXPORT int openat(int dir, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int mode = mode_arg(flags, ap);
	va_end(ap);
	RT_REAL(real.openat, "openat");
	int fd = real.openat(dir, path, flags, mode);
	if (fd >= 0 && rt_mod_tracing(&rt_mod_fd))
		opened(F_OPENAT, fd, path, flags, rt_mod_bt());
	return fd;
}

RT_EXPORT int creat(const char *path, mode_t mode)
{
	RT_REAL(real.creat, "creat");
	int fd = real.creat(path, mode);
	if (fd >= 0 && rt_mod_tracing(&rt_mod_fd))
		opened(F_CREAT, fd, path, O_CREAT | O_WRONLY | O_TRUNC, rt_mod_bt());
	return fd;
}

/* --- releases --- */

/* A close that failed with EBADF closed nothing: recorded with an error
 * argument, so reports show it as a bad close (Valgrind's FdBadClose). */
static void bad_close(uint64_t index, unsigned f, int fd, uint64_t bt)
{
	static const rt_arg a[] = {{"error", "EBADF"}};
	rt_mod_put(index, RT_TF_CALL_FREE, FN(f), RES, (uint64_t)fd, 0, bt, a, 1);
}

/* Whether fd is open, without a descriptor or a change of errno: the
 * module's own record first, the kernel's for the others. */
static bool fd_open(int fd)
{
	if (is_live(fd))
		return true;
	RT_REAL(real.fcntl, "fcntl");
	int err = errno;
	bool open = real.fcntl(fd, F_GETFD) >= 0;
	errno = err;
	return open;
}

/* Recorded before the call, whose outcome the descriptor's state tells
 * (only EBADF closes nothing; close frees the number on every other
 * error): the index is taken and the record written in one busy section
 * of rt_mod_put, so a signal handler's calls cannot come between them and
 * the thread's records stay in index order (docs/binary-format.md), and
 * another thread gets the number only after the record. */
RT_EXPORT int close(int fd)
{
	RT_REAL(real.close, "close");
	if (RT_UNLIKELY(rt_fd_hidden(fd)) && (fd != rt_writer_fd() || rt_writer_owns(fd))) {
		errno = EBADF; /* as without the tracer: the program never had it */
		return -1;
	}
	if (!rt_mod_tracing(&rt_mod_fd))
		return real.close(fd);
	if (fd_open(fd))
		put_free(0, FN(F_CLOSE), fd, FREE_BT());
	else
		bad_close(0, F_CLOSE, fd, rt_mod_bt());
	return real.close(fd);
}

static void range_closed(unsigned f, unsigned first, unsigned last, uint64_t bt)
{
	for (unsigned fd = first; fd <= last && fd < LIVE_MAX; fd++)
		if (is_live((int)fd))
			put_free(0, FN(f), (int)fd, bt);
}

/* close_range around the tracer's descriptors, which stay open. */
static int close_range_keep(unsigned first, unsigned last, int flags)
{
	int keep[8], n = rt_fd_hidden_in(first, last, keep), rc = 0;
	for (int i = 0; i <= n && rc == 0; i++) {
		unsigned hi = i < n ? (unsigned)keep[i] : last;
		if (i < n && hi == first) {
			first = hi + 1;
			continue;
		}
		if (i < n)
			hi--;
		if (first <= hi && first <= last)
			rc = real.close_range(first, hi, flags);
		if (i < n)
			first = (unsigned)keep[i] + 1;
	}
	return rc;
}

RT_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	RT_REAL(real.close_range, "close_range");
	int rc = close_range_keep(first, last, flags);
	if (rc == 0 && !(flags & CLOSE_RANGE_CLOEXEC) && rt_mod_tracing(&rt_mod_fd))
		range_closed(F_CLOSE_RANGE, first, last, FREE_BT());
	return rc;
}

RT_EXPORT void closefrom(int low)
{
	RT_REAL(real.close_range, "close_range");
	if (low < 0)
		low = 0;
	if (close_range_keep((unsigned)low, ~0u, 0) != 0) {
		RT_REAL(real.closefrom, "closefrom");
		real.closefrom(low); /* no close_range in the kernel */
	}
	if (rt_mod_tracing(&rt_mod_fd))
		range_closed(F_CLOSEFROM, (unsigned)low, LIVE_MAX - 1, FREE_BT());
}

/* --- duplicates --- */

static void duped(unsigned f, int fd, int old, uint64_t bt)
{
	char o[24];
	rt_arg a[] = {{"oldfd", rt_mod_dec(o, old)}};
	put_alloc(FN(f), fd, a, 1, bt);
}

RT_EXPORT int dup(int old)
{
	RT_REAL(real.dup, "dup");
	int fd = real.dup(old);
	if (fd >= 0 && rt_mod_tracing(&rt_mod_fd))
		duped(F_DUP, fd, old, rt_mod_bt());
	return fd;
}

/* dup2 and dup3 close the target first when it is open and old is a
 * descriptor: that release is recorded before the call, as close's is. */
static bool target_closes(int old, int newfd)
{
	return fd_open(newfd) && fd_open(old);
}

#define DUP23(name, F, params, call)                                           \
	RT_EXPORT int name params                                              \
	{                                                                      \
		RT_REAL(real.name, #name);                                     \
		rt_fd_taken(newfd);                                            \
		if (!rt_mod_tracing(&rt_mod_fd) || old == newfd)               \
			return real.name call;                                 \
		bool closes = target_closes(old, newfd);                       \
		uint64_t bt = closes ? rt_mod_bt() : 0;                        \
		if (closes)                                                    \
			put_free(0, FN(F), newfd, bt);                         \
		int fd = real.name call;                                       \
		if (fd >= 0)                                                   \
			duped(F, fd, old, closes ? bt : rt_mod_bt());          \
		return fd;                                                     \
	}
DUP23(dup2, F_DUP2, (int old, int newfd), (old, newfd))
DUP23(dup3, F_DUP3, (int old, int newfd, int flags), (old, newfd, flags))

#define FCNTL(name)                                                            \
	RT_EXPORT int name(int old, int cmd, ...)                              \
	{                                                                      \
		va_list ap;                                                    \
		va_start(ap, cmd);                                             \
		void *arg = va_arg(ap, void *);                                \
		va_end(ap);                                                    \
		RT_REAL(real.name, #name);                                     \
		int fd = real.name(old, cmd, arg);                             \
		if (fd >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) &&   \
		    rt_mod_tracing(&rt_mod_fd))                                \
			duped(F_FCNTL, fd, old, rt_mod_bt());                  \
		return fd;                                                     \
	}
FCNTL(fcntl)
FCNTL(fcntl64)

/* --- pipes and sockets --- */

static const char *family_name(char *buf, int d)
{
	switch (d) {
	case AF_UNIX: return "AF_UNIX";
	case AF_INET: return "AF_INET";
	case AF_INET6: return "AF_INET6";
	case AF_NETLINK: return "AF_NETLINK";
	case AF_PACKET: return "AF_PACKET";
	default: return rt_mod_dec(buf, d);
	}
}

static const char *socktype_name(char *buf, int t)
{
	switch (t & 0xf) {
	case SOCK_STREAM: return "SOCK_STREAM";
	case SOCK_DGRAM: return "SOCK_DGRAM";
	case SOCK_RAW: return "SOCK_RAW";
	case SOCK_SEQPACKET: return "SOCK_SEQPACKET";
	default: return rt_mod_hex(buf, (unsigned)t);
	}
}

static void pair(unsigned f, const int *fds, const rt_arg *a, unsigned n, uint64_t bt)
{
	put_alloc(FN(f), fds[0], a, n, bt);
	put_alloc(FN(f), fds[1], a, n, bt);
}

/* A pipe of the tracer's own (libunwind keeps one to check addresses). */
static void hide_pair(int *fds)
{
	fds[0] = rt_place_fd(fds[0]);
	fds[1] = rt_place_fd(fds[1]);
}

RT_EXPORT int pipe(int fds[2])
{
	RT_REAL(real.pipe, "pipe");
	int rc = real.pipe(fds);
	if (rc == 0 && RT_UNLIKELY(rt_t.busy))
		hide_pair(fds);
	if (rc == 0 && rt_mod_tracing(&rt_mod_fd))
		pair(F_PIPE, fds, NULL, 0, rt_mod_bt());
	return rc;
}

static void pipe2_done(const int *fds, int flags, uint64_t bt)
{
	char fl[20];
	rt_arg a[] = {{"flags", rt_mod_hex(fl, (unsigned)flags)}};
	pair(F_PIPE2, fds, a, 1, bt);
}

RT_EXPORT int pipe2(int fds[2], int flags)
{
	RT_REAL(real.pipe2, "pipe2");
	int rc = real.pipe2(fds, flags);
	if (rc == 0 && RT_UNLIKELY(rt_t.busy))
		hide_pair(fds);
	if (rc == 0 && rt_mod_tracing(&rt_mod_fd))
		pipe2_done(fds, flags, rt_mod_bt());
	return rc;
}

/* socket's and socketpair's arguments; fds[1] < 0 for socket. */
static void sockets(unsigned f, const int *fds, int domain, int type, int proto, uint64_t bt)
{
	char d[24], t[24], p[24];
	rt_arg a[] = {{"domain", family_name(d, domain)}, {"type", socktype_name(t, type)},
		      {"protocol", rt_mod_dec(p, proto)}};
	put_alloc(FN(f), fds[0], a, 3, bt);
	if (fds[1] >= 0)
		put_alloc(FN(f), fds[1], a, 3, bt);
}

RT_EXPORT int socket(int domain, int type, int proto)
{
	RT_REAL(real.socket, "socket");
	int fd = real.socket(domain, type, proto);
	if (fd >= 0 && rt_mod_tracing(&rt_mod_fd))
		sockets(F_SOCKET, (int[]){fd, -1}, domain, type, proto, rt_mod_bt());
	return fd;
}

RT_EXPORT int socketpair(int domain, int type, int proto, int fds[2])
{
	RT_REAL(real.socketpair, "socketpair");
	int rc = real.socketpair(domain, type, proto, fds);
	if (rc == 0 && rt_mod_tracing(&rt_mod_fd))
		sockets(F_SOCKETPAIR, fds, domain, type, proto, rt_mod_bt());
	return rc;
}

/* An allocation with one numeric argument. */
static void one_arg(unsigned f, int fd, const char *name, int64_t v, bool hex, uint64_t bt)
{
	char buf[24];
	rt_arg a[] = {{name, hex ? rt_mod_hex(buf, (uint64_t)v) : rt_mod_dec(buf, v)}};
	put_alloc(FN(f), fd, a, name ? 1 : 0, bt);
}

#define ONE_ARG(F, fd, name, v, hex)                                           \
	do {                                                                   \
		if ((fd) >= 0 && rt_mod_tracing(&rt_mod_fd))                   \
			one_arg(F, fd, name, v, hex, rt_mod_bt());             \
	} while (0)

RT_EXPORT int accept(int s, struct sockaddr *addr, socklen_t *len)
{
	RT_REAL(real.accept, "accept");
	int fd = real.accept(s, addr, len);
	ONE_ARG(F_ACCEPT, fd, "sockfd", s, false);
	return fd;
}

RT_EXPORT int accept4(int s, struct sockaddr *addr, socklen_t *len, int flags)
{
	RT_REAL(real.accept4, "accept4");
	int fd = real.accept4(s, addr, len, flags);
	ONE_ARG(F_ACCEPT4, fd, "sockfd", s, false);
	return fd;
}

/* An interposer of a function of one int argument (and the flags of
 * eventfd) that returns a new descriptor. */
#define ONE_INT(name, F, params, call, key, v, hex)                            \
	RT_EXPORT int name params                                              \
	{                                                                      \
		RT_REAL(real.name, #name);                                     \
		int fd = real.name call;                                       \
		ONE_ARG(F, fd, key, v, hex);                                   \
		return fd;                                                     \
	}
ONE_INT(eventfd, F_EVENTFD, (unsigned init, int flags), (init, flags), "flags", flags, true)
ONE_INT(timerfd_create, F_TIMERFD, (int clock, int flags), (clock, flags), "clockid", clock, false)
ONE_INT(epoll_create, F_EPOLL, (int size), (size), "size", size, false)
ONE_INT(epoll_create1, F_EPOLL1, (int flags), (flags), "flags", flags, true)
ONE_INT(inotify_init, F_INOTIFY, (void), (), NULL, 0, false)
ONE_INT(inotify_init1, F_INOTIFY1, (int flags), (flags), "flags", flags, true)

RT_EXPORT int signalfd(int old, const void *mask, int flags)
{
	RT_REAL(real.signalfd, "signalfd");
	int fd = real.signalfd(old, mask, flags);
	if (old == -1) /* otherwise old's mask changed: nothing new */
		ONE_ARG(F_SIGNALFD, fd, "flags", flags, true);
	return fd;
}

static void memfd_done(int fd, const char *name, unsigned flags, uint64_t bt)
{
	char fl[20];
	rt_arg a[] = {{"name", name}, {"flags", rt_mod_hex(fl, flags)}};
	put_alloc(FN(F_MEMFD), fd, a, 2, bt);
}

RT_EXPORT int memfd_create(const char *name, unsigned flags)
{
	RT_REAL(real.memfd_create, "memfd_create");
	int fd = real.memfd_create(name, flags);
	if (fd >= 0 && rt_mod_tracing(&rt_mod_fd))
		memfd_done(fd, name, flags, rt_mod_bt());
	return fd;
}

/* --- exec: the close-on-exec descriptors go --- */

#define EXEC_MAX 1024
static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_execvpe)(const char *, char *const[], char *const[]);
static int (*real_fexecve)(int, char *const[], char *const[]);

/* Records the release of every live close-on-exec descriptor before the
 * exec (after it, nothing of this process runs); returns them, so that a
 * failed exec gives them back. Not in a vfork child, whose parent keeps
 * its descriptors (and whose trace this is). */
static unsigned exec_release(int *fds, uint64_t bt)
{
	unsigned n = 0;
	if (!rt_mod_tracing(&rt_mod_fd) || getpid() != rt_writer_pid())
		return 0;
	RT_REAL(real.fcntl, "fcntl");
	int err = errno;
	for (int w = 0; w < LIVE_MAX / 64; w++) {
		for (uint64_t bits = atomic_load(&live[w]); bits && n < EXEC_MAX; bits &= bits - 1) {
			int fd = w * 64 + __builtin_ctzll(bits), fl = real.fcntl(fd, F_GETFD);
			if (fl >= 0 && (fl & FD_CLOEXEC)) {
				fds[n++] = fd;
				put_free(0, FN(F_EXEC), fd, bt);
			}
		}
	}
	errno = err;
	return n;
}

static void exec_failed(const int *fds, unsigned n, uint64_t bt)
{
	static const rt_arg a[] = {{"exec", "failed"}};
	for (unsigned i = 0; i < n; i++)
		put_alloc(FN(F_EXEC), fds[i], a, 1, bt);
}

#define EXEC_WRAP(real_fn, name, prog, call)                                   \
	do {                                                                   \
		RT_REAL(real_fn, name);                                        \
		int fds_[EXEC_MAX];                                            \
		uint64_t bt_ = rt_mod_tracing(&rt_mod_fd) ? rt_mod_bt() : 0;  \
		unsigned n_ = exec_release(fds_, bt_);                         \
		rt_life_flush();                                               \
		rt_writer_exec(prog);                                          \
		int rc_ = real_fn call;                                        \
		int err_ = errno;                                              \
		rt_writer_exec(NULL);                                          \
		exec_failed(fds_, n_, bt_);                                    \
		errno = err_;                                                  \
		return rc_;                                                    \
	} while (0)

/* The real exec functions, found in the parent before a fork: a forked
 * child often execs at once (a shell's), and a dlsym in each was ~3% of
 * its CPU time in a traced shell loop. */
void rt_fd_atfork_prepare(void)
{
	RT_REAL(real_execve, "execve");
	RT_REAL(real_execvpe, "execvpe");
}

/* With the environment to pass (env.c: the tracer's variables when
 * children are followed). */
RT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	RT_ENV_FOR_EXEC(envp);
	EXEC_WRAP(real_execve, "execve", path, (path, argv, envp));
}

RT_EXPORT int execv(const char *path, char *const argv[])
{
	char *const *envp = environ;
	RT_ENV_FOR_EXEC(envp);
	EXEC_WRAP(real_execve, "execve", path, (path, argv, envp));
}

RT_EXPORT int execvp(const char *file, char *const argv[])
{
	char *const *envp = environ;
	RT_ENV_FOR_EXEC(envp);
	EXEC_WRAP(real_execvpe, "execvpe", file, (file, argv, envp));
}

RT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	RT_ENV_FOR_EXEC(envp);
	EXEC_WRAP(real_execvpe, "execvpe", file, (file, argv, envp));
}

RT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	RT_ENV_FOR_EXEC(envp);
	char self_[32]; /* the kernel's name for the program in fd */
	snprintf(self_, sizeof self_, "/proc/self/fd/%d", fd);
	char prog_[4096];
	ssize_t len_ = readlink(self_, prog_, sizeof prog_ - 1);
	prog_[len_ > 0 ? len_ : 0] = '\0';
	EXEC_WRAP(real_fexecve, "fexecve", len_ > 0 ? prog_ : self_, (fd, argv, envp));
}

/* execl, execlp, execle: the argument list as an array, then the array
 * form (which records). */
static size_t count_args(va_list ap)
{
	size_t n = 1;
	while (va_arg(ap, char *))
		n++;
	return n;
}

#define EXECL(name, target, with_env)                                          \
	RT_EXPORT int name(const char *path, const char *arg, ...)             \
	{                                                                      \
		va_list ap;                                                    \
		va_start(ap, arg);                                             \
		const char *first_ = arg;                                      \
		__asm__("" : "+r"(first_)); /* declared nonnull, may be NULL */ \
		size_t n = first_ ? count_args(ap) : 0;                        \
		va_end(ap);                                                    \
		char *argv[n + 1];                                             \
		argv[0] = (char *)arg;                                         \
		va_start(ap, arg);                                             \
		for (size_t i = 1; i <= n; i++) /* the last one is the NULL */ \
			argv[i] = va_arg(ap, char *);                          \
		char *const *envp = with_env ? va_arg(ap, char *const *) : environ; \
		va_end(ap);                                                    \
		(void)envp;                                                    \
		return target;                                                 \
	}
EXECL(execl, execve(path, argv, envp), false)
EXECL(execlp, execvp(path, argv), false)
EXECL(execle, execve(path, argv, envp), true)
