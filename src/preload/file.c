/* The file module: stdio streams and directory streams, with the path
 * and mode that opened them. The descriptor under a stream is the
 * stream's: libc's own calls inside these interposers (rt_t.inside) are
 * not the program's descriptors, and one the program hands to fdopen or
 * fdopendir is released to the stream. */
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

#define FREE_BT() (rt_opt.trace_frees ? rt_mod_bt() : 0)

/* popen's shell gets the tracer's variables when children are followed */
#define popen_env(cmd, mode) rt_env_popen(real.popen, cmd, mode)

#define FOPEN(name, F, key, call)                                              \
	RT_EXPORT FILE *name(const char *path, const char *mode)               \
	{                                                                      \
		RT_REAL(real.name, #name);                                     \
		FILE *fp;                                                      \
		INNER(fp = call(path, mode));                                  \
		if (fp && rt_mod_tracing(&rt_mod_file))                        \
			opened(F, RES_FP, fp, key, path, "mode", mode, rt_mod_bt()); \
		return fp;                                                     \
	}
FOPEN(fopen, S_FOPEN, "path", real.fopen)
FOPEN(fopen64, S_FOPEN64, "path", real.fopen64)
FOPEN(popen, S_POPEN, "command", popen_env)

RT_EXPORT FILE *fdopen(int fd, const char *mode)
{
	RT_REAL(real.fdopen, "fdopen");
	FILE *fp;
	INNER(fp = real.fdopen(fd, mode));
	if (fp && rt_fd_tracing())
		rt_fd_to_stream(fd, false, rt_mod_bt());
	if (fp && rt_mod_tracing(&rt_mod_file)) {
		char buf[24];
		opened(S_FDOPEN, RES_FP, fp, "fd", rt_mod_dec(buf, fd), "mode", mode, rt_mod_bt());
	}
	return fp;
}

RT_EXPORT FILE *freopen(const char *path, const char *mode, FILE *old)
{
	RT_REAL(real.freopen, "freopen");
	if (!rt_mod_tracing(&rt_mod_file)) {
		FILE *fp;
		INNER(fp = real.freopen(path, mode, old));
		return fp;
	}
	/* recorded before the call: what libc frees inside it comes after,
	 * and the old stream is closed even when reopening fails */
	uint64_t bt = rt_mod_bt();
	closed(0, S_FREOPEN, RES_FP, old, bt);
	FILE *fp;
	INNER(fp = real.freopen(path, mode, old));
	if (fp)
		opened(S_FREOPEN, RES_FP, fp, "path", path ? path : "", "mode", mode, bt);
	return fp;
}

#define CLOSE(name, F, RES, T)                                                 \
	RT_EXPORT int name(T *p)                                               \
	{                                                                      \
		RT_REAL(real.name, #name);                                     \
		if (!rt_mod_tracing(&rt_mod_file)) {                           \
			int rc;                                                \
			INNER(rc = real.name(p));                              \
			return rc;                                             \
		}                                                              \
		/* before the call: the buffers libc frees inside it are  \
		 * recorded after (each thread's calls in index order)    \
		 * and the stream is released even when the call fails */ \
		closed(0, F, RES, p, FREE_BT());                               \
		int rc;                                                        \
		INNER(rc = real.name(p));                                      \
		return rc;                                                     \
	}
CLOSE(fclose, S_FCLOSE, RES_FP, FILE)
CLOSE(pclose, S_PCLOSE, RES_FP, FILE)
CLOSE(closedir, S_CLOSEDIR, RES_DIR, DIR)

RT_EXPORT FILE *tmpfile(void)
{
	RT_REAL(real.tmpfile, "tmpfile");
	FILE *fp;
	INNER(fp = real.tmpfile());
	if (fp && rt_mod_tracing(&rt_mod_file))
		opened(S_TMPFILE, RES_FP, fp, NULL, NULL, NULL, NULL, rt_mod_bt());
	return fp;
}

RT_EXPORT DIR *opendir(const char *path)
{
	RT_REAL(real.opendir, "opendir");
	DIR *d;
	INNER(d = real.opendir(path));
	if (d && rt_mod_tracing(&rt_mod_file))
		opened(S_OPENDIR, RES_DIR, d, "path", path, NULL, NULL, rt_mod_bt());
	return d;
}

RT_EXPORT DIR *fdopendir(int fd)
{
	RT_REAL(real.fdopendir, "fdopendir");
	DIR *d;
	INNER(d = real.fdopendir(fd));
	if (d && rt_fd_tracing())
		rt_fd_to_stream(fd, true, rt_mod_bt());
	if (d && rt_mod_tracing(&rt_mod_file)) {
		char buf[24];
		opened(S_FDOPENDIR, RES_DIR, d, "fd", rt_mod_dec(buf, fd), NULL, NULL, rt_mod_bt());
	}
	return d;
}
