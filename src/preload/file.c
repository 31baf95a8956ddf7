/* The file module: stdio streams and directory streams, with the path
 * and mode that opened them. The descriptor under a stream is the
 * stream's: libc's own calls inside these interposers (rt_t.inside) are
 * not recorded as such; the fd module records it (as valgrind
 * --track-fds=yes counts it) as opened by the stream's call and released
 * by its close, with or without this module; one the program hands to
 * fdopen or fdopendir stays the descriptor it was, until the close. */
#define _GNU_SOURCE
#include "module.h"

#include <dirent.h>
#include <stdio.h>

enum {
	S_FOPEN, S_FOPEN64, S_FDOPEN, S_FREOPEN, S_FCLOSE, S_POPEN, S_PCLOSE, S_TMPFILE,
	S_OPENDIR, S_FDOPENDIR, S_CLOSEDIR, S_COUNT
};
static const char *const names[S_COUNT] = {
	"fopen", "fopen64", "fdopen", "freopen", "fclose", "popen", "pclose", "tmpfile",
	"opendir", "fdopendir", "closedir",
};
static const rt_restype types[] = {
	{"fp", "file pointer", false},
	{"dir", "directory stream", false},
};
rt_module rt_mod_file = {
	.name = "file",
	.desc = "streams: fopen, fdopen, freopen, popen, tmpfile, opendir ... and their closes",
	.res = types, .nres = 2, .fns = names, .nfns = S_COUNT,
};
#define FN(f) (rt_mod_file.fn_base + (f))
#define RES_FP rt_mod_file.res_base
#define RES_DIR (rt_mod_file.res_base + 1)

static struct {
	FILE *(*fopen)(const char *, const char *), *(*fopen64)(const char *, const char *);
	FILE *(*fdopen)(int, const char *), *(*freopen)(const char *, const char *, FILE *);
	int (*fclose)(FILE *), (*pclose)(FILE *), (*closedir)(DIR *);
	FILE *(*popen)(const char *, const char *), *(*tmpfile)(void);
	DIR *(*opendir)(const char *), *(*fdopendir)(int);
} real;

#define INNER(expr)                                                            \
	do {                                                                   \
		rt_t.inside++;                                                 \
		expr;                                                          \
		rt_t.inside--;                                                 \
	} while (0)

static void opened(unsigned f, unsigned res, const void *p, const char *k1, const char *v1,
		   const char *k2, const char *v2, uint64_t bt)
{
	rt_arg a[] = {{k1, v1}, {k2, v2}};
	unsigned n = k2 ? 2 : k1 ? 1 : 0;
	rt_mod_put(0, RT_TF_CALL_ALLOC, FN(f), res, (uint64_t)(uintptr_t)p, 1, bt, a, n);
}

static void closed(uint64_t index, unsigned f, unsigned res, const void *p, uint64_t bt)
{
	rt_mod_put(index, RT_TF_CALL_FREE, FN(f), res, (uint64_t)(uintptr_t)p, 0, bt, NULL, 0);
}

/* Either module records a stream's calls: file the stream, fd the
 * descriptor under it. */
static bool tracing(void) { return rt_mod_tracing(&rt_mod_file) || rt_fd_tracing(); }

static void stream_opened(unsigned f, enum rt_fd_stream fds, unsigned res, const void *p, int fd,
			  const char *key, const char *v, const char *mode, uint64_t bt)
{
	if (rt_fd_tracing())
		rt_fd_stream_opened(fds, fd, key, v, mode, bt);
	if (rt_mod_tracing(&rt_mod_file))
		opened(f, res, p, key, v, mode ? "mode" : NULL, mode, bt);
}

/* Before the stream's close: the buffers libc frees inside it are
 * recorded after (each thread's calls in index order) and the stream is
 * released even when the call fails. */
static void stream_closed(unsigned f, enum rt_fd_stream fds, unsigned res, const void *p, int fd, uint64_t bt)
{
	if (rt_fd_tracing())
		rt_fd_stream_closed(fds, fd, bt);
	if (rt_mod_tracing(&rt_mod_file))
		closed(0, f, res, p, bt);
}

#define FREE_BT() (rt_opt.trace_frees ? rt_mod_bt() : 0)

/* popen's shell gets the tracer's variables when children are followed */
#define popen_env(cmd, mode) rt_env_popen(real.popen, cmd, mode)

#define FOPEN(name, F, FDS, key, call)                                         \
	RT_EXPORT FILE *name(const char *path, const char *mode)               \
	{                                                                      \
		RT_REAL(real.name, #name);                                     \
		FILE *fp;                                                      \
		INNER(fp = call(path, mode));                                  \
		if (fp && tracing())                                           \
			stream_opened(F, FDS, RES_FP, fp, fileno(fp), key, path, mode, rt_mod_bt()); \
		return fp;                                                     \
	}
FOPEN(fopen, S_FOPEN, RT_FDS_FOPEN, "path", real.fopen)
FOPEN(fopen64, S_FOPEN64, RT_FDS_FOPEN64, "path", real.fopen64)
FOPEN(popen, S_POPEN, RT_FDS_POPEN, "command", popen_env)

/* fdopen and fdopendir: the descriptor stays the one the fd module knows
 * (valgrind's view), released by the stream's close. */
RT_EXPORT FILE *fdopen(int fd, const char *mode)
{
	RT_REAL(real.fdopen, "fdopen");
	FILE *fp;
	INNER(fp = real.fdopen(fd, mode));
	if (fp && rt_mod_tracing(&rt_mod_file)) {
		char buf[24];
		opened(S_FDOPEN, RES_FP, fp, "fd", rt_mod_dec(buf, fd), "mode", mode, rt_mod_bt());
	}
	return fp;
}

RT_EXPORT FILE *freopen(const char *path, const char *mode, FILE *old)
{
	RT_REAL(real.freopen, "freopen");
	if (!tracing()) {
		FILE *fp;
		INNER(fp = real.freopen(path, mode, old));
		return fp;
	}
	/* recorded before the call: what libc frees inside it comes after,
	 * and the old stream is closed even when reopening fails */
	uint64_t bt = rt_mod_bt();
	stream_closed(S_FREOPEN, RT_FDS_FREOPEN, RES_FP, old, fileno(old), bt);
	FILE *fp;
	INNER(fp = real.freopen(path, mode, old));
	if (fp)
		stream_opened(S_FREOPEN, RT_FDS_FREOPEN, RES_FP, fp, fileno(fp), "path", path ? path : "", mode, bt);
	return fp;
}

#define CLOSE(name, F, FDS, RES, T, FD_OF)                                     \
	RT_EXPORT int name(T *p)                                               \
	{                                                                      \
		RT_REAL(real.name, #name);                                     \
		if (!tracing()) {                                              \
			int rc;                                                \
			INNER(rc = real.name(p));                              \
			return rc;                                             \
		}                                                              \
		stream_closed(F, FDS, RES, p, FD_OF(p), FREE_BT());            \
		int rc;                                                        \
		INNER(rc = real.name(p));                                      \
		return rc;                                                     \
	}
CLOSE(fclose, S_FCLOSE, RT_FDS_FCLOSE, RES_FP, FILE, fileno)
CLOSE(pclose, S_PCLOSE, RT_FDS_PCLOSE, RES_FP, FILE, fileno)
CLOSE(closedir, S_CLOSEDIR, RT_FDS_CLOSEDIR, RES_DIR, DIR, dirfd)

RT_EXPORT FILE *tmpfile(void)
{
	RT_REAL(real.tmpfile, "tmpfile");
	FILE *fp;
	INNER(fp = real.tmpfile());
	if (fp && tracing())
		stream_opened(S_TMPFILE, RT_FDS_TMPFILE, RES_FP, fp, fileno(fp), NULL, NULL, NULL, rt_mod_bt());
	return fp;
}

RT_EXPORT DIR *opendir(const char *path)
{
	RT_REAL(real.opendir, "opendir");
	DIR *d;
	INNER(d = real.opendir(path));
	if (d && tracing())
		stream_opened(S_OPENDIR, RT_FDS_OPENDIR, RES_DIR, d, dirfd(d), "path", path, NULL, rt_mod_bt());
	return d;
}

RT_EXPORT DIR *fdopendir(int fd)
{
	RT_REAL(real.fdopendir, "fdopendir");
	DIR *d;
	INNER(d = real.fdopendir(fd));
	if (d && rt_mod_tracing(&rt_mod_file)) {
		char buf[24];
		opened(S_FDOPENDIR, RES_DIR, d, "fd", rt_mod_dec(buf, fd), NULL, NULL, rt_mod_bt());
	}
	return d;
}
