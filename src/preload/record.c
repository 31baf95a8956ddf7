/* Records: process description, module maps, and the per-call record on
 * the hot path. */
#define _GNU_SOURCE
#include "lifetime.h"
#include "module.h"
#include "maps.h"
#include "pages.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* The call index, and beside it (the same cache line, which every call's
 * index already brings to its thread) the index of the latest release
 * the lifetime filter dropped in any thread. */
static struct {
	_Atomic uint64_t index, dropped;
} __attribute__((aligned(64))) calls;
#define call_index calls.index
static uint64_t start_ns; /* monotonic clock at start */

const char *const rt_fn_names[FN_COUNT] = {
	[FN_MALLOC] = "malloc", [FN_CALLOC] = "calloc", [FN_REALLOC] = "realloc",
	[FN_REALLOCARRAY] = "reallocarray", [FN_FREE] = "free",
	[FN_POSIX_MEMALIGN] = "posix_memalign", [FN_ALIGNED_ALLOC] = "aligned_alloc",
	[FN_MEMALIGN] = "memalign", [FN_VALLOC] = "valloc", [FN_PVALLOC] = "pvalloc",
	[FN_NEW] = "operator new", [FN_NEW_ARRAY] = "operator new[]",
	[FN_DELETE] = "operator delete", [FN_DELETE_ARRAY] = "operator delete[]",
	[FN_NEW_NOTHROW] = "operator new(nothrow)",
	[FN_NEW_ARRAY_NOTHROW] = "operator new[](nothrow)",
	[FN_DELETE_SIZED] = "operator delete(sized)",
	[FN_DELETE_ARRAY_SIZED] = "operator delete[](sized)",
	[FN_NEW_ALIGNED] = "operator new(align)",
	[FN_NEW_ARRAY_ALIGNED] = "operator new[](align)",
	[FN_DELETE_ALIGNED] = "operator delete(align)",
	[FN_DELETE_ARRAY_ALIGNED] = "operator delete[](align)",
};

uint64_t rt_next_index(void)
{
	return atomic_fetch_add_explicit(&call_index, 1, memory_order_relaxed) + 1;
}

void rt_note_dropped(uint64_t index)
{
	if (atomic_load_explicit(&calls.dropped, memory_order_relaxed) < index)
		atomic_store_explicit(&calls.dropped, index, memory_order_relaxed);
}

uint64_t rt_last_dropped(void) { return atomic_load_explicit(&calls.dropped, memory_order_relaxed); }

uint64_t rt_last_index(void)
{
	return atomic_load(&call_index);
}

/* The hot path: one CALL record in this thread's chunk. Not inlined: the
 * unwinder skips a fixed number of the tracer's own frames. */
__attribute__((noinline)) uint64_t rt_record_call(uint64_t index, int kind, int fn, uint64_t res_id,
						  uint64_t size, bool with_bt)
{
	if (RT_UNLIKELY(!RT_LOAD(rt_mod_memory.on)))
		return 0;
	uint64_t bt = with_bt ? rt_backtrace() : 0;
	rt_record_call_bt(index, kind, fn, res_id, size, bt);
	return bt;
}

bool rt_memory_on(void) { return RT_LOAD(rt_mod_memory.on); }

/* The longest CALL record, reserved whole before it is written: the type
 * and kind bytes, and nine varints (index, time delta, the distance back
 * to a dropped release, function, resource, id, size, stack, contexts) of
 * at most 10 bytes each. A CALLA adds its argument count and arguments. */
#define CALL_VARINT_MAX 10
#define CALL_MAX (2 + 9 * CALL_VARINT_MAX)

/* The fields every CALL record starts with, up to the resource, for a
 * call made at `now`; dropped: the index of a release the lifetime
 * filter dropped just before it (0: none; format 1.5). */
static inline __attribute__((always_inline)) uint8_t *call_head_at(uint8_t *p, int type, uint64_t index, int kind, unsigned fn, uint64_t now,
			     uint64_t dropped)
{
	uint64_t delta = now - (rt_t.last_ns ? rt_t.last_ns : start_ns);
	rt_t.last_ns = now;
	*p++ = (uint8_t)type;
	p = rt_put_varint(p, index);
	p = rt_put_varint(p, rt_opt.timestamps ? delta : 0);
	*p++ = (uint8_t)(kind | (dropped ? RT_TF_CALL_AFTER_DROP : 0));
	if (dropped)
		p = rt_put_varint(p, index - dropped);
	return rt_put_varint(p, fn);
}

static inline __attribute__((always_inline)) uint8_t *call_head(uint8_t *p, int type, uint64_t index, int kind, unsigned fn)
{
	return call_head_at(p, type, index, kind, fn, rt_opt.timestamps ? rt_now_ns() : 0, 0);
}

/* The fields after the function: resource, id, size, stack, contexts. */
static inline __attribute__((always_inline)) uint8_t *call_tail(uint8_t *p, int kind, unsigned res, uint64_t res_id, uint64_t size, uint64_t bt,
			  uint32_t context)
{
	p = rt_put_varint(p, res);
	p = rt_put_addr(p, res_id); /* followed by at least two fields */
	if (kind == RT_TF_CALL_ALLOC)
		p = rt_put_varint(p, size);
	p = rt_put_varint(p, bt);
	return rt_put_varint(p, context);
}

#define ARG_MAX 1024 /* bytes of an argument's value kept */
#define ARGS_MAX 8
_Static_assert(ARGS_MAX <= RT_TF_MAX_ARGS, "a CALLA record's arguments");
#define ARG_NAME_MAX 64
/* a name and a value, with their lengths (varints of 2 bytes at most) */
#define CALLA_ARG_MAX (ARG_NAME_MAX + ARG_MAX + 8)
_Static_assert(CALL_MAX + CALL_VARINT_MAX + ARGS_MAX * CALLA_ARG_MAX <= RT_RESERVE_MAX,
	       "the longest CALLA record fits in a chunk");

void rt_record_ex(uint64_t index, int kind, unsigned fn, unsigned res, uint64_t res_id,
		  uint64_t size, uint64_t bt, const rt_arg *args, unsigned nargs)
{
	size_t need = CALL_MAX + CALL_VARINT_MAX, len[ARGS_MAX][2];
	if (RT_UNLIKELY(rt_opt.min_lifetime))
		rt_life_commit(); /* the thread's held calls come first */
	if (nargs > ARGS_MAX)
		nargs = ARGS_MAX;
	for (unsigned i = 0; i < nargs; i++) {
		len[i][0] = strnlen(args[i].name, ARG_NAME_MAX);
		len[i][1] = args[i].value ? strnlen(args[i].value, ARG_MAX) : 0;
		need += len[i][0] + len[i][1] + 8;
	}
	uint8_t *p = rt_reserve(need);
	if (!p)
		return;
	p = call_head(p, nargs ? RT_REC_CALLA : RT_REC_CALL, index, kind, fn);
	p = call_tail(p, kind, res, res_id, size, bt, rt_t.context);
	if (nargs) {
		p = rt_put_varint(p, nargs);
		for (unsigned i = 0; i < nargs; i++) {
			p = rt_put_str(p, args[i].name, len[i][0]);
			p = rt_put_str(p, args[i].value ? args[i].value : "", len[i][1]);
		}
	}
	rt_commit(p);
}

void rt_record_call_bt(uint64_t index, int kind, int fn, uint64_t res_id, uint64_t size, uint64_t bt)
{
	if (RT_UNLIKELY(!RT_LOAD(rt_mod_memory.on)))
		return;
	if (RT_UNLIKELY(rt_opt.min_lifetime)) {
		rt_life_hold(index, kind, fn, res_id, size, bt);
		return;
	}
	uint8_t *p = rt_reserve(CALL_MAX);
	if (!p)
		return;
	p = call_head(p, RT_REC_CALL, index, kind, (unsigned)fn);
	rt_commit(call_tail(p, kind, RES_MEMORY, res_id, size, bt, rt_t.context));
}

void rt_record_held(uint64_t index, uint64_t ns, int kind, int fn, uint64_t res_id, uint64_t size,
		    uint64_t bt, uint32_t context, uint64_t dropped)
{
	uint8_t *p = rt_reserve(CALL_MAX);
	if (!p)
		return;
	p = call_head_at(p, RT_REC_CALL, index, kind, (unsigned)fn, ns, dropped);
	rt_commit(call_tail(p, kind, RES_MEMORY, res_id, size, bt, context));
}

/* Records that may be long (paths, command lines) go through a buffer
 * and are cut to what a chunk holds. */
static void put_record(const uint8_t *buf, size_t n)
{
	uint8_t *p = rt_reserve(n);
	if (!p)
		return;
	memcpy(p, buf, n);
	rt_commit(p + n);
}

static size_t read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t n = 0;
	ssize_t r;
	while (n < cap && (r = read(fd, buf + n, cap - n)) > 0)
		n += (size_t)r;
	close(fd);
	return n;
}

/* The arguments' strings, where the kernel put them: [args_lo, args_hi),
 * each ended by a NUL, which is what /proc/self/cmdline reads from the
 * process's memory. Taken from the constructor's argv when its strings
 * lie end to end (as exec lays them out): the PROCESS record then costs
 * no open and read of /proc/self/cmdline (4 system calls and the proc
 * file's setup, ~10 us), in a forked child too, whose copy of that
 * memory is what its own /proc/self/cmdline would read. */
static const char *args_lo, *args_hi;
#define CMD_MAX 8192

void rt_set_args(int argc, char **argv)
{
	if (argc <= 0 || !argv || !argv[0])
		return;
	const char *end = argv[0];
	for (int i = 0; i < argc && end - argv[0] < CMD_MAX; i++) {
		if (argv[i] != end)
			return; /* not the kernel's layout: /proc/self/cmdline */
		end += strlen(end) + 1;
	}
	args_lo = argv[0];
	args_hi = end;
}

/* The command line (at most CMD_MAX - 1 bytes): in memory, or read into
 * a buffer that only then is touched. */
static const char *cmdline(size_t *n)
{
	static char cmd[CMD_MAX] RT_COLD;
	if (!args_lo) {
		*n = read_file("/proc/self/cmdline", cmd, sizeof cmd - 1);
		return cmd;
	}
	*n = (size_t)(args_hi - args_lo) < sizeof cmd - 1 ? (size_t)(args_hi - args_lo) : sizeof cmd - 1;
	return args_lo;
}

/* The PROCESS record, written in place in the chunk (no buffer of its
 * own to fault in): type, 4 varints, arch, exe, cmdline, 2 varints. */
#define PROCESS_MAX (1 + 4 * 10 + 1 + 8 + 2 + 4096 + 2 + 4096 + 2 * 10)
_Static_assert(PROCESS_MAX <= RT_RESERVE_MAX, "a PROCESS record fits in a chunk");

static void write_process(void)
{
	/* the arguments as the kernel keeps them, each ended by a NUL (the
	 * last one's dropped), so that arguments with spaces survive */
	size_t n;
	const char *cmd = cmdline(&n);
	if (n && cmd[n - 1] == '\0')
		n--;
	const char *exe = rt_exe_path();
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	start_ns = rt_now_ns();
	uint8_t *p = rt_reserve(PROCESS_MAX);
	if (!p)
		return;
	*p++ = RT_REC_PROCESS;
	p = rt_put_varint(p, (uint64_t)getpid());
	p = rt_put_varint(p, (uint64_t)getppid());
	p = rt_put_varint(p, (uint64_t)rt.tv_sec);
	p = rt_put_varint(p, (uint64_t)rt.tv_nsec);
#if defined(__x86_64__)
	p = rt_put_str(p, "x86_64", 6);
#elif defined(__aarch64__)
	p = rt_put_str(p, "aarch64", 7);
#else
	p = rt_put_str(p, "unknown", 7);
#endif
	size_t elen = strlen(exe);
	p = rt_put_str(p, exe, elen > 4095 ? 4095 : elen);
	p = rt_put_str(p, cmd, n > 4096 ? 4096 : n);
	p = rt_put_varint(p, rt_opt.depth);
	p = rt_put_varint(p, (rt_opt.timestamps ? RT_TF_PROC_TIMESTAMPS : 0u) |
			     (rt_opt.trace_frees ? RT_TF_PROC_FREE_BTS : 0u));
	rt_commit(p);
}

/* One MODULE record for an executable mapping of a file or a named
 * region ("[vdso]"). */
static void write_module(const rt_maps_line *l)
{
	if (!l->x || !l->path_len || (l->path[0] != '/' && l->path[0] != '['))
		return;
	uint8_t rec[4200], *p = rec;
	size_t plen = l->path_len > 4096 ? 4096 : l->path_len;
	*p++ = RT_REC_MODULE;
	p = rt_put_varint(p, l->lo);
	p = rt_put_varint(p, l->hi);
	p = rt_put_varint(p, l->off);
	p = rt_put_str(p, l->path, plen);
	put_record(rec, (size_t)(p - rec));
}

void rt_write_maps(void)
{
	static _Atomic uint64_t generation;
	size_t n = 0, cap = 0;
	char *maps = rt_maps_read_modules(&n, &cap);
	uint8_t rec[16], *p = rec;
	*p++ = RT_REC_MAPS;
	p = rt_put_varint(p, atomic_fetch_add(&generation, 1) + 1);
	put_record(rec, (size_t)(p - rec));
	rt_maps_line l;
	for (const char *at = maps; maps && rt_maps_next(&at, maps + n, &l);)
		write_module(&l);
	rt_maps_release(maps, cap);
}

void rt_write_preamble(void)
{
	write_process();
	rt_modules_write_registry();
	rt_write_maps();
}

void rt_write_end(void)
{
	uint8_t rec[16], *p = rec;
	*p++ = RT_REC_END;
	p = rt_put_varint(p, atomic_load(&call_index));
	put_record(rec, (size_t)(p - rec));
}
