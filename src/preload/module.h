/* Tracing modules: each one is a source file that declares the resource
 * types it records, the names of its functions and its interposers. The
 * registry (module.c) turns them on from RTRACE_MODULES and gives their
 * resource types and functions the ids the trace uses. */
#ifndef RT_MODULE_H
#define RT_MODULE_H

#include "heap.h"

#include <errno.h>

typedef struct rt_restype {
	const char *type, *desc; /* as the text protocol's registry prints them */
	bool refcount;
} rt_restype;

typedef struct rt_module {
	const char *name, *desc;
	const rt_restype *res;
	unsigned nres;
	const char *const *fns; /* function names; an empty or NULL one has no record */
	unsigned nfns;
	_Atomic int on;    /* selected */
	unsigned res_base; /* trace id of res[0] */
	unsigned fn_base;  /* trace id of fns[0] */
} rt_module;

extern rt_module rt_mod_memory, rt_mod_fd, rt_mod_file, rt_mod_mmap, rt_mod_shm;

/* One "$name = value" argument of a call. */
typedef struct rt_arg {
	const char *name, *value;
} rt_arg;

/* Reads RTRACE_MODULES (default: memory) and assigns the ids. */
void rt_modules_init(void);
/* RESOURCE and FUNCTION records of the modules that are on. */
void rt_modules_write_registry(void);
/* Prints the modules (RTRACE_LIST_MODULES, `rtrace run --list-modules`). */
void rt_modules_list(void);

/* A call of module m is recorded: m is on, tracing is active, and the
 * call comes from the program, not from the tracer or from inside another
 * module's interposer (libc's fopen opening its descriptor), nor from a
 * signal handler that interrupted a heap interposer (glibc may hold its
 * arena lock, and reading the stack may allocate: the thread would wait
 * for itself). */
static inline bool rt_mod_tracing(const rt_module *m)
{
	return RT_UNLIKELY(RT_LOAD(m->on)) && RT_LOAD(rt_active) && !rt_t.busy && !rt_t.inside &&
	       !rt_h.heap;
}

/* The caller's stack, taken from an interposer (always inlined into it,
 * so that the unwinder skips the same frames as for the memory module). */
static inline __attribute__((always_inline)) uint64_t rt_mod_bt(void)
{
	int err = errno;
	rt_heap_pin();
	rt_t.busy = 1;
	uint64_t bt = rt_heap_bt();
	rt_t.busy = 0;
	rt_heap_unpin();
	errno = err;
	return bt;
}

/* Writes a CALL (with its arguments) for function fn of resource type res
 * (trace ids); index 0 takes the next one. errno is kept. */
void rt_mod_put(uint64_t index, int kind, unsigned fn, unsigned res, uint64_t id, uint64_t size,
		uint64_t bt, const rt_arg *args, unsigned nargs);

/* The function the program would have called, looked up on first use. */
void *rt_mod_next(const char *name);
#define RT_REAL(var, name)                                                     \
	do {                                                                   \
		if (RT_UNLIKELY(!(var)))                                       \
			(var) = (__typeof__(var))rt_mod_next(name);            \
	} while (0)

/* "0x%x" of v into buf (at least 20 bytes); returns buf. */
const char *rt_mod_hex(char *buf, uint64_t v);
const char *rt_mod_dec(char *buf, int64_t v);

/* fd.c, for the modules whose calls make or take descriptors: the fd
 * module records (rt_fd_tracing) the descriptor under a stream, opened
 * (path or command: key and v; mode) and released by the stream's calls
 * (fdopen and fdopendir take one the fd module knows already: it stays
 * open until the stream's close), and one shm_open made. */
enum rt_fd_stream {
	RT_FDS_FOPEN, RT_FDS_FOPEN64, RT_FDS_FREOPEN, RT_FDS_POPEN, RT_FDS_TMPFILE, RT_FDS_OPENDIR,
	RT_FDS_FCLOSE, RT_FDS_PCLOSE, RT_FDS_CLOSEDIR, RT_FDS_COUNT
};
bool rt_fd_tracing(void);
/* Before a fork, in the parent: the real exec functions looked up. */
void rt_fd_atfork_prepare(void);
void rt_fd_stream_opened(enum rt_fd_stream f, int fd, const char *key, const char *v,
			 const char *mode, uint64_t bt);
void rt_fd_stream_closed(enum rt_fd_stream f, int fd, uint64_t bt);
void rt_fd_shm_open(int fd, const char *name, int oflag, uint64_t bt);

#endif
