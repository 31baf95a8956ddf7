/* Life cycle of the tracer inside the traced process: options from the
 * environment `rtrace run` sets, start, fork, dlopen/dlclose, exec, exit. */
#define _GNU_SOURCE
#include "preload.h"
#include "cfi.h"
#include "leak_int.h"
#include "lifetime.h"
#include "module.h"
#include "pages.h"
#include "format/run_env.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <unistd.h>

/* Written once at start and only read after: with the cold tables
 * (pages.h), its 2 KiB of paths off the pages every fork writes. */
rt_options rt_opt RT_COLD;
_Atomic int rt_active;
_Atomic int rt_stopped;
static _Atomic int paused;

void rt_memory_init(void);
void rt_write_preamble(void);
void rt_write_end(void);
void rt_fatal_init(void);

/* heap.c and leak.c write heap.h's values into HEAPERR and LEAKSUM. */
_Static_assert((int)HERR_INVALID_FREE == RT_TF_ERR_INVALID_FREE &&
	       (int)HERR_MISMATCHED_FREE == RT_TF_ERR_MISMATCHED_FREE &&
	       (int)HERR_FISHY_VALUE == RT_TF_ERR_FISHY_VALUE, "HEAPERR kinds");
_Static_assert((int)HARG_SIZE == RT_TF_ARG_SIZE && (int)HARG_NMEMB == RT_TF_ARG_NMEMB, "FishyValue arguments");
_Static_assert((int)LEAK_CHECK_SUMMARY == RT_TF_LEAKSUM_SUMMARY &&
	       (int)LEAK_CHECK_FULL == RT_TF_LEAKSUM_FULL, "LEAKSUM modes");

static void copy_env(char *dst, size_t n, const char *name, const char *def)
{
	const char *v = getenv(name);
	if (!v)
		v = def;
	size_t len = strlen(v);
	if (len >= n)
		len = n - 1;
	memcpy(dst, v, len);
	dst[len] = '\0';
}

/* RT_ENV_FLAGS holds the one-letter flag. */
static bool has_flag(const char *flags, const char *letter)
{
	return strchr(flags, letter[0]) != NULL;
}

static void read_options(void)
{
	const char *v;
	rt_opt.depth = 32;
	rt_opt.timestamps = true;
	copy_env(rt_opt.dir, sizeof rt_opt.dir, RT_ENV_DIR, ".");
	copy_env(rt_opt.manifest, sizeof rt_opt.manifest, RT_ENV_MANIFEST, "");
	copy_env(rt_opt.pool, sizeof rt_opt.pool, RT_ENV_POOL, "");
	if ((v = getenv(RT_ENV_DEPTH)) && atoi(v) > 0)
		rt_opt.depth = (unsigned)atoi(v) > 256 ? 256 : (unsigned)atoi(v);
	v = getenv(RT_ENV_FLAGS);
	if (v) {
		rt_opt.timestamps = !has_flag(v, RT_FLAG_NO_TIMESTAMPS);
		rt_opt.trace_frees = has_flag(v, RT_FLAG_TRACE_FREES);
		rt_opt.follow = has_flag(v, RT_FLAG_FOLLOW);
		rt_opt.start_paused = has_flag(v, RT_FLAG_START_PAUSED);
		rt_opt.libunwind = has_flag(v, RT_FLAG_LIBUNWIND);
		rt_opt.check_unwind = has_flag(v, RT_FLAG_CHECK_UNWIND);
		rt_opt.raw_suffix = has_flag(v, RT_FLAG_COMPRESS);
	}
	if ((v = getenv(RT_ENV_TOGGLE_SIGNAL)))
		rt_opt.toggle_signal = atoi(v);
	if ((v = getenv(RT_ENV_CHECK_SIGNAL)))
		rt_opt.check_signal = atoi(v);
	if ((v = getenv(RT_ENV_MIN_LIFETIME)) && atoi(v) > 0) {
		char *unit;
		unsigned long n = strtoul(v, &unit, 10);
		rt_opt.min_lifetime = !strcmp(unit, "ms") ? RT_LIFE_MAX : (unsigned)n;
		rt_opt.min_lifetime_ns = !strcmp(unit, "ms") ? n * 1000000ull : 0;
	}
	rt_life_init();
	v = getenv(RT_ENV_LEAK_CHECK);
	rt_leak_init(!v || !strcmp(v, RT_ENV_LEAK_FULL) ? LEAK_CHECK_FULL
		     : !strcmp(v, RT_ENV_LEAK_SUMMARY)   ? LEAK_CHECK_SUMMARY
						       : LEAK_CHECK_NO);
	rt_modules_init();
	if (!rt_memory_on())
		rt_leak_init(LEAK_CHECK_NO);
	rt_leak_reserve();
}

static void update_active(void)
{
	RT_STORE(rt_active, !RT_LOAD(paused) && !RT_LOAD(rt_stopped));
}

static void on_toggle(int sig)
{
	(void)sig;
	RT_STORE(paused, !RT_LOAD(paused));
	update_active();
}

static void start_tracing(void)
{
	if (rt_writer_open()) {
		update_active();
		return;
	}
	rt_write_preamble();
	update_active();
}

/* The tracer's locks are held across a fork only when another thread
 * could hold one: a process that never started a thread (glibc's
 * __libc_single_threaded: a shell, make) forks with none held, since the
 * forking thread holds none outside the tracer's own code. Taking and
 * releasing them wrote their pages (the live-block table's 128 parts,
 * 8 KiB; the writer's and the rule reader's mutexes) before the fork and
 * again after it, in the parent and in the child, where each write after
 * the fork copies the page: ~8 page faults per fork of a traced shell.
 * Written only when it changes: no copy of its own page at each fork. */
static bool fork_locked;

static void atfork_prepare(void)
{
	rt_fd_atfork_prepare();
	rt_life_flush(); /* the parent's held calls, in the parent's trace */
	bool locked = !__libc_single_threaded;
	if (fork_locked != locked)
		fork_locked = locked;
	if (!locked)
		return;
	rt_cfi_atfork_prepare();
	rt_writer_lock();
	rt_heap_atfork_prepare();
}

static void atfork_parent(void)
{
	if (!fork_locked)
		return;
	rt_heap_atfork_parent();
	rt_writer_unlock();
	rt_cfi_atfork_parent();
}

static void atfork_child(void)
{
	rt_heap_atfork_child(fork_locked);
	rt_leak_fork_child();
	rt_leak_live_fork_child();
	if (fork_locked)
		rt_cfi_atfork_child();
	rt_writer_fork_child(rt_write_preamble, fork_locked); /* the file at the first record */
	update_active();
	rt_t.busy = 0;
}

_Atomic int rt_started;

/* Libraries the program links are initialised before a preloaded one,
 * and their constructors allocate: the tracer starts at its constructor
 * or at the first allocation (rt_heap_alloc), whichever comes first, so
 * that those blocks are recorded with their stacks (not before libc set
 * the environment up, which holds the options). Once: a call made while
 * it starts (by this thread, or another) is not traced. */
void rt_start(void)
{
	extern char **environ;
	if (!environ) /* an allocation before libc set the environment up */
		return;
	if (RT_LOAD(rt_started) || atomic_exchange(&rt_started, 1))
		return;
	int busy = rt_t.busy;
	rt_t.busy = 1;
	rt_memory_init();
	if (getenv(RT_ENV_LIST_MODULES)) { /* rtrace run --list-modules */
		rt_modules_init();
		rt_modules_list();
		_exit(0);
	}
	read_options();
	rt_env_init(rt_opt.follow); /* the program sees the environment it was given */
	RT_STORE(paused, rt_opt.start_paused);
	if (rt_opt.toggle_signal > 0) {
		struct sigaction sa = {.sa_handler = on_toggle, .sa_flags = SA_RESTART};
		sigemptyset(&sa.sa_mask);
		sigaction(rt_opt.toggle_signal, &sa, NULL);
	}
	rt_fatal_init(); /* the leak check at a fatal signal too */
	rt_leak_live_init(rt_opt.check_signal); /* after: its handler replaces the fatal one */
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	start_tracing();
	rt_t.busy = busy;
}

/* glibc calls constructors with the program's arguments. */
__attribute__((constructor(101))) static void rt_init(int argc, char **argv, char **envp)
{
	(void)envp;
	if (!RT_LOAD(rt_started))
		rt_set_args(argc, argv);
	rt_start();
}

/* The end of the trace: the END record and the file's final size. */
void rt_finish(void)
{
	rt_t.busy = 1;
	rt_life_flush();
	if (RT_LOAD(rt_active) && !rt_writer_pending()) /* a fork child without records: no file */
		rt_write_end();
	RT_STORE(rt_active, 0);
	rt_unwind_report();
	rt_writer_close();
}

__attribute__((destructor(101))) static void rt_fini(void)
{
	rt_t.busy = 1;
	/* the leak check runs after every other destructor, then finishes */
	if (rt_leak_defer()) {
		rt_t.busy = 0;
		return;
	}
	/* no leak check to stop the other threads, whose park handler writes
	 * what their lifetime filter holds: stopped for that alone */
	if (rt_opt.min_lifetime && rt_leak_mode() == LEAK_CHECK_NO)
		rt_leak_stop_threads();
	rt_finish();
}

/* dlopen and dlclose change the mappings addresses resolve against. */
RT_EXPORT void *dlopen(const char *file, int mode)
{
	static void *(*next)(const char *, int);
	if (!next)
		next = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	rt_heap_pin(); /* not stopped by the leak check holding ld.so's lock */
	void *h = next(file, mode);
	if (h && RT_LOAD(rt_active) && !rt_t.busy) {
		rt_t.busy = 1;
		rt_write_maps();
		rt_t.busy = 0;
	}
	rt_heap_unpin();
	return h;
}

RT_EXPORT int dlclose(void *h)
{
	static int (*next)(void *);
	if (!next)
		next = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	rt_heap_pin();
	int rc = next(h);
	if (rc == 0) {
		int busy = rt_t.busy;
		rt_t.busy = 1; /* frees the tracer's own memory: not the program's */
		rt_cfi_invalidate();
		rt_t.busy = busy;
	}
	if (rc == 0 && RT_LOAD(rt_active) && !rt_t.busy) {
		rt_t.busy = 1;
		rt_write_maps();
		rt_t.busy = 0;
	}
	rt_heap_unpin();
	return rc;
}
