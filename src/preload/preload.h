/* librtrace-preload.so: internal interfaces. The hot path is an interposer
 * calling rt_record_call(); everything it touches is per-thread except the
 * global call index and, once per 64 KiB, the chunk allocator. What it
 * writes is format/trace_format.h's layout, shared with the reader. */
#ifndef RT_PRELOAD_H
#define RT_PRELOAD_H

#include "format/trace_format.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define RT_EXPORT __attribute__((visibility("default")))
#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)

struct rt_arg;

/* Function ids of the memory module (FUNCTION records). */
enum rt_fn {
	FN_MALLOC = 1, FN_CALLOC, FN_REALLOC, FN_REALLOCARRAY, FN_FREE,
	FN_POSIX_MEMALIGN, FN_ALIGNED_ALLOC, FN_MEMALIGN, FN_VALLOC, FN_PVALLOC,
	FN_NEW, FN_NEW_ARRAY, FN_DELETE, FN_DELETE_ARRAY,
	FN_NEW_NOTHROW, FN_NEW_ARRAY_NOTHROW, FN_DELETE_SIZED, FN_DELETE_ARRAY_SIZED,
	FN_NEW_ALIGNED, FN_NEW_ARRAY_ALIGNED, FN_DELETE_ALIGNED, FN_DELETE_ARRAY_ALIGNED,
	FN_COUNT
};
extern const char *const rt_fn_names[FN_COUNT];
_Static_assert(FN_COUNT == 23, "memory keeps function ids 1 to 22 (docs/binary-format.md)");

#define RES_MEMORY 1 /* the memory module's resource id */

typedef struct rt_options {
	unsigned depth;      /* frames per backtrace */
	bool timestamps;
	bool trace_frees;    /* backtraces for releases too */
	bool follow;         /* children started with exec are traced */
	int toggle_signal;   /* 0: none */
	int check_signal;    /* asks for a leak check now (leak_live.c); 0: none */
	bool start_paused;
	bool libunwind;      /* every stack through libunwind (no cached rules) */
	bool check_unwind;   /* both unwinders, differences reported at exit */
	bool raw_suffix;     /* `rtrace run` compresses: data goes to PATH.raw */
	unsigned min_lifetime; /* lifetime filter's ring, in calls (lifetime.c); 0: off */
	uint64_t min_lifetime_ns; /* or its time bound (the ring then the longest) */
	char dir[1024];
	char manifest[1024]; /* file receiving one line per trace created */
	char pool[64];       /* name prefix of rtrace run's trace files made ahead, in dir (format/run_env.h), or "" */
} rt_options;

extern rt_options rt_opt;
/* Flags read on every call: relaxed loads and stores (RT_LOAD, RT_STORE),
 * as nothing else is published through them. */
#define RT_LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define RT_STORE(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)
/* Tracing is on: initialised, not disabled after an error, not paused. */
extern _Atomic int rt_active;
/* The trace cannot be written any more (set once, by rt_disable). */
extern _Atomic int rt_stopped;
/* preload.c: starts the tracer (its constructor, or the first allocation
 * when that comes earlier: a constructor of a library the program links).
 * rt_started is set once it began. */
extern _Atomic int rt_started;
void rt_start(void);

/* Per-thread state. `busy` marks code of the tracer itself, so that the
 * allocations it (or libunwind, or libc inside it) makes are not traced. */
typedef struct rt_tls {
	int busy;
	unsigned gen;        /* writer generation (changes in a forked child) */
	uint8_t *chunk;      /* current chunk in the mapped file, or NULL */
	uint32_t used;
	uint32_t cap;        /* payload bytes with disk blocks behind them (0: no chunk) */
	uint64_t last_ns;
	int inside;          /* in a module's interposer: inner calls are libc's */
	uint32_t context;    /* mask of the contexts the thread is in */
	struct rt_btcache *bts;
} rt_tls;

extern __thread rt_tls rt_t __attribute__((tls_model("initial-exec")));

/* env.c: the tracer's variables out of environ at start; with
 * follow_children, back in what is passed to exec. RT_ENV_FOR_EXEC(env)
 * replaces the environment variable env of the calling function by the
 * one to pass (itself, or a copy on the caller's stack). */
void rt_env_init(bool follow_children);
size_t rt_env_exec_size(char *const *envp);
char *const *rt_env_exec(char *const *envp, void *buf);
struct _IO_FILE;
struct _IO_FILE *rt_env_popen(struct _IO_FILE *(*real)(const char *, const char *),
			      const char *cmd, const char *mode);
#define RT_ENV_FOR_EXEC(env)                                                   \
	void *rt_envbuf_[rt_env_exec_size(env) / sizeof(void *) + 1];          \
	(env) = rt_env_exec((env), rt_envbuf_)

/* pool.c: takes a file of rtrace run's pool (format/run_env.h, RT_ENV_POOL)
 * under the name path: its descriptor, or -1 with errno EEXIST (path is
 * taken) or another (no file to take: the caller creates its own). */
int rt_pool_take(const char *path);

/* writer.c */
int rt_writer_open(void);
/* Before an exec of file (a name execvp looks up along PATH, or a path)
 * that children are not followed into: tells `rtrace run` which program
 * goes on untraced. file NULL after the exec failed: none does. */
void rt_writer_exec(const char *file);
void rt_writer_close(void);
/* In a fork child: the parent's file let go (its number held); the
 * child's trace begins at its first record, preamble() written first,
 * in memory until it needs its file (writer.c, mem_chunk). */
void rt_writer_fork_child(void (*preamble)(void), bool locked);
/* A fork child's file is still to be created (nothing recorded yet). */
bool rt_writer_pending(void);
/* A fork child's trace that began in memory (writer.c, mem_chunk): the
 * records made so far must outlive an exec (a resource other than
 * memory, a heap error, a leak check), or must be in the file now. */
void rt_writer_keep(void);
void rt_writer_settle(void);
/* The program sets its descriptor limit to cur: a trace in memory makes
 * its file first when the number held for it would be out of reach. */
void rt_writer_limit(uint64_t cur);
/* The trace file's descriptor (-1: none); whether fd is it (the program
 * closing it gets EBADF, as it would without the tracer). */
int rt_writer_fd(void);
bool rt_writer_owns(int fd);
/* The program dup2s onto fd: a number the tracer holds there becomes the
 * program's, so that its close works: the trace's descriptor moves to
 * another number, a fork child's held for its file (writer.c, hold_fd)
 * is let go, a reserved descriptor (fdres.c) is given up (its reader
 * finds another file there and opens its own). */
void rt_fd_taken(int fd);
/* fd moved to a high number (the tracer's own descriptors, and those of
 * the libraries it calls, must not take the program's numbers). */
int rt_place_fd(int fd);
/* fd is one of those (the trace file's, libunwind's pipe). */
bool rt_fd_hidden(int fd);
/* The hidden descriptors in [first, last], sorted (at most 8). */
int rt_fd_hidden_in(unsigned first, unsigned last, int *out);
/* The process whose trace the writer writes. */
int rt_writer_pid(void);
void rt_writer_lock(void);
void rt_writer_unlock(void);
/* Reserves n bytes (at most RT_RESERVE_MAX, a chunk's payload) in this
 * thread's chunk; NULL when tracing stopped. Inline: a bounds check on
 * every record against rt_t.cap (the chunk's payload, less for the file's
 * first chunk while only its start has disk blocks: writer.c), the rest
 * (a new chunk, the first chunk's blocks) in writer.c's rt_reserve_slow.
 * rt_writer_gen changes in a forked child: the thread's chunk before it
 * is the parent's. */
#define RT_RESERVE_MAX (65536u - 16u)
extern _Atomic unsigned rt_writer_gen;
uint8_t *rt_reserve_slow(size_t n);
/* Text into buf (cap bytes, NUL-terminated, cut at cap), at *n, which
 * moves on: the tracer's own formatting where snprintf cost too much. In
 * a forked child, vfprintf's code and tables are pages the child has not
 * mapped yet (file pages are not copied at a fork): 4-5 page faults,
 * ~15 us of each traced shell's fork child, for one file name. */
static inline void rt_cat(char *buf, size_t cap, size_t *n, const char *s)
{
	for (; *s && *n + 1 < cap; s++)
		buf[(*n)++] = *s;
	if (*n < cap)
		buf[*n] = '\0';
}

static inline void rt_cat_dec(char *buf, size_t cap, size_t *n, uint64_t v)
{
	char d[21];
	int i = (int)sizeof d - 1;
	d[i] = '\0';
	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) && i > 0);
	rt_cat(buf, cap, n, d + i);
}

static inline uint8_t *rt_reserve(size_t n)
{
	if (RT_LIKELY(rt_t.used + n <= rt_t.cap &&
		      rt_t.gen == atomic_load_explicit(&rt_writer_gen, memory_order_relaxed)))
		return rt_t.chunk + RT_TF_CHUNK_HEADER + rt_t.used;
	return rt_reserve_slow(n);
}
/* Ends the record reserved at end; readers of a killed process's file
 * trust the chunk's `used`: it is published last. */
static inline void rt_commit(uint8_t *end)
{
	rt_t.used = (uint32_t)(end - (rt_t.chunk + RT_TF_CHUNK_HEADER));
	atomic_store_explicit((_Atomic uint32_t *)(rt_t.chunk + RT_TF_OFF_USED), rt_t.used, memory_order_release);
}
void rt_write_maps(void);
void rt_disable(const char *why, int err);
/* preload.c: ends the trace (END record, final file size) at exit. */
void rt_finish(void);
/* The coarse monotonic clock (a record's time): inline, so that the
 * record path pays the vdso call alone, without a call of its own. */
static inline __attribute__((always_inline)) uint64_t rt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
const char *rt_trace_path(void);
const char *rt_exe_path(void); /* the executable's path, read once */
/* record.c: the program's arguments as the kernel laid them out (the
 * constructor's argv), for the PROCESS record without /proc/self/cmdline. */
void rt_set_args(int argc, char **argv);
/* The raw name the records' file takes once the trace grows past its
 * first chunk, when `rtrace run` compresses (mapped: under either name
 * not a leak root). */
const char *rt_trace_data_path(void);

/* unwind.c: captures the caller's stack and returns its backtrace id,
 * defining it in the trace first when this thread has not seen it. */
uint64_t rt_backtrace(void);
void rt_btcache_reset(void);
void rt_unwind_report(void);

/* record.c */
/* index: rt_next_index() taken by the caller, before a release hands the
 * block back to the allocator and after an allocation got it from there. */
/* Returns the backtrace id recorded (0: none). */
uint64_t rt_record_call(uint64_t index, int kind, int fn, uint64_t res_id, uint64_t size, bool with_bt);
/* The same with a backtrace the caller took (rt_backtrace, called at the
 * depth rt_record_call calls it). */
void rt_record_call_bt(uint64_t index, int kind, int fn, uint64_t res_id, uint64_t size, uint64_t bt);
uint64_t rt_next_index(void);
/* The lifetime filter's latest dropped release (any thread): noted, and
 * read back for the records that follow it. */
void rt_note_dropped(uint64_t index);
uint64_t rt_last_dropped(void);
/* The last index rt_next_index handed out (0: none yet). */
uint64_t rt_last_index(void);
/* A memory CALL record the lifetime filter held: its time (ns), its
 * thread's context mask then, and the index of a release dropped just
 * before it (0: none). */
void rt_record_held(uint64_t index, uint64_t ns, int kind, int fn, uint64_t res_id, uint64_t size,
		    uint64_t bt, uint32_t context, uint64_t dropped);
/* Any module's call: function and resource type as trace ids, and the
 * call's arguments (nargs name/value pairs; long values are cut). */
void rt_record_ex(uint64_t index, int kind, unsigned fn, unsigned res, uint64_t res_id,
		  uint64_t size, uint64_t bt, const struct rt_arg *args, unsigned nargs);
/* The memory module is on (module.c). */
bool rt_memory_on(void);

/* Records are built with format/varint.h's rt_put_varint and
 * rt_put_svarint (static inline); a str field with this. */
uint8_t *rt_put_str(uint8_t *p, const char *s, size_t n);

/* A block's address as a varint, the same bytes as rt_put_varint's.
 * User-space addresses from 2^42 to 2^49 (x86-64's heap and mappings) are
 * 7 bytes: their groups are spread into a word and stored at once, where
 * the loop took 7 turns of a dependent shift and store. The word's 8th
 * byte lands where the next field goes: a field must follow, inside the
 * record's reserved bytes (tests/unit/test_putaddr.c). */
static inline __attribute__((always_inline)) uint8_t *rt_put_addr(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (RT_LIKELY(v - (UINT64_C(1) << 42) < (UINT64_C(127) << 42))) {
		uint64_t w = (v & 0x7f) | (v << 1 & 0x7f00) | (v << 2 & 0x7f0000) |
			     (v << 3 & 0x7f000000) | (v << 4 & UINT64_C(0x7f00000000)) |
			     (v << 5 & UINT64_C(0x7f0000000000)) | (v << 6 & UINT64_C(0x7f000000000000)) |
			     UINT64_C(0x0000808080808080);
		__builtin_memcpy(p, &w, 8);
		return p + 7;
	}
#endif
	return rt_put_varint(p, v);
}

#endif
