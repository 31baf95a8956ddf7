/* Heap checking inside the tracer: the table of live blocks that the
 * interposers keep (heap.c), the errors found on release, and the leak
 * check at exit (leak.c). */
#ifndef RT_HEAP_H
#define RT_HEAP_H

#include "lifetime.h"
#include "preload.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/types.h>

/* Allocator families: a block must go back through its own family. */
enum rt_family { FAM_NONE = 0, FAM_MALLOC, FAM_NEW, FAM_NEW_ARRAY };

/* How a release went (rt_heap_remove). */
enum rt_heap_check { HEAP_OK = 0, HEAP_INVALID, HEAP_MISMATCH };

/* Error kinds of the HEAPERR record (docs/binary-format.md), and the
 * arguments of a FishyValue one. */
enum { HERR_INVALID_FREE = 1, HERR_MISMATCHED_FREE = 2, HERR_FISHY_VALUE = 3 };
enum { HARG_SIZE = 1, HARG_NMEMB = 2 };

/* What is known of the block an error is about. state: 0 none, 1 live
 * (alloc'd), 2 freed recently. */
typedef struct rt_heap_blk {
	uintptr_t addr;
	uint64_t size, alloc_bt, free_bt, index;
	uint8_t alloc_fn, free_fn, state;
} rt_heap_blk;

/* A live block as the exit scan sees it. */
typedef struct rt_heap_ent {
	uintptr_t addr; /* 0: empty slot */
	uint64_t meta;  /* size (low 56 bits) | alloc function << 56 */
	uint64_t bt;    /* allocation stack id, 0 when not traced */
	uint64_t index; /* allocation call index, 0 when not traced */
} rt_heap_ent;

#define RT_HEAP_SIZE_MASK ((UINT64_C(1) << 56) - 1)

int rt_fn_family(int fn);

/* Adds (or replaces) the block at p. */
void rt_heap_insert(uintptr_t p, uint64_t size, int fn, uint64_t bt, uint64_t index);
/* Removes the block at p for release function fn and checks the release;
 * on HEAP_MISMATCH *blk is the removed block. keep: remember it in the
 * freed-blocks queue, as the keep-th release (the release's call index,
 * 1 when untraced; 0: not kept, for the release half of a realloc that
 * may fail and put the block back). */
int rt_heap_remove(uintptr_t p, int fn, uint64_t free_bt, uint64_t keep, rt_heap_blk *blk);
/* For an invalid release: the live block p points into, or the most
 * recently freed one it points into. False when none. */
bool rt_heap_describe(uintptr_t p, rt_heap_blk *blk);
/* Writes a HEAPERR record. */
void rt_heap_write_error(int kind, uint64_t index, int fn, uintptr_t p, uint64_t bt,
			 const rt_heap_blk *blk);

/* The exit scan takes every part, so that no thread is half-way
 * through an update, and then reads the table directly. */
void rt_heap_lock_all(void);
void rt_heap_unlock_all(void);
/* Calls fn for each live block; the table must be locked. */
void rt_heap_each(void (*fn)(void *ctx, const rt_heap_ent *e), void *ctx);
size_t rt_heap_count(void);
/* Calls fn for each memory range of the table itself (no root: the
 * kernel may have merged it with a neighbouring mapping). */
void rt_heap_each_map(void (*fn)(void *ctx, uintptr_t lo, uintptr_t hi), void *ctx);
void rt_heap_atfork_prepare(void);
void rt_heap_atfork_parent(void);
void rt_heap_atfork_child(bool locked);

/* Per-thread state of the heap checking, which signal handlers of the
 * same thread read too.
 *
 * Safe points (depth): a thread inside an interposer (the real
 * allocator's locks, the tracer's own) is never stopped by the exit scan;
 * the stop request (park) waits until it leaves.
 *
 * heap: inside one of the heap interposers (malloc's family, the C++
 * operators), where glibc may hold its arena lock: a module's call made
 * by a signal handler then is not traced (reading its stack may allocate).
 *
 * table: holding (or taking) a lock of the live-block table. A release by
 * a signal handler then waits in deferred[] (the lock may be the one its
 * block needs, and the thread would wait for itself) until the table
 * operation ends; an allocation by a signal handler goes to the shared
 * stripes, never to the thread's own part of the table (heap.c), which
 * the thread may be holding. */
#define RT_HEAP_DEFERRED 16
typedef struct rt_heap_tls {
	int depth;
	int heap;
	_Atomic int park;
	int table;
	_Atomic unsigned ndeferred; /* pushed and popped with compare-and-swap: */
	uintptr_t deferred[RT_HEAP_DEFERRED]; /* a handler may push or drain in between */
	/* heap.c: the thread's own part of the table (NULL: none yet, or
	 * none to have: nofront), and its number */
	struct rt_heap_table *front;
	unsigned front_id;
	int nofront;
} rt_heap_tls;
extern __thread rt_heap_tls rt_h __attribute__((tls_model("initial-exec")));
void rt_leak_park_pending(void);

/* A section that is no safe point (modules' records, dlopen). */
static inline __attribute__((always_inline)) void rt_heap_pin(void)
{
	rt_h.depth++;
	__asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void rt_heap_unpin(void)
{
	__asm__ volatile("" ::: "memory");
	if (--rt_h.depth == 0 && RT_UNLIKELY(atomic_load_explicit(&rt_h.park, memory_order_relaxed)))
		rt_leak_park_pending();
}

/* leak_live.c: a leak check asked for by the check signal (its mode;
 * 0: none), run by the next heap interposer that enters from the
 * program (a safe point: no lock of the allocator's or the tracer's
 * held). */
extern _Atomic int rt_leak_live_pending;
void rt_leak_live_init(int sig);
void rt_leak_live_run(void);
void rt_leak_live_fork_child(void);

/* A heap interposer. */
static inline __attribute__((always_inline)) void rt_heap_enter(void)
{
	if (RT_UNLIKELY(atomic_load_explicit(&rt_leak_live_pending, memory_order_relaxed)))
		rt_leak_live_run();
	rt_h.heap++;
	rt_heap_pin();
}

static inline __attribute__((always_inline)) void rt_heap_leave(void)
{
	rt_h.heap--;
	rt_heap_unpin();
}

/* A signal handler's release while its thread is in the table: queued,
 * released when the table operation ends (false: the queue is full and
 * the block stays allocated). */
bool rt_heap_defer(uintptr_t p);
/* The allocator's free, for the deferred releases. */
void rt_heap_set_free(void (*real_free)(void *));

/* Takes the caller's caller's stack: called from an interposer, like
 * rt_record_call, so the unwinder skips the same frames. */
uint64_t rt_heap_bt(void);
/* Set while glibc and libstdc++ free their own memory at exit: they also
 * free what they allocated for the tracer (dlerror's buffers), which the
 * table never saw. Releases of unknown blocks are then not reported. */
extern _Atomic int rt_heap_quiet;
/* Remembers a block a realloc moved away from as freed. */
void rt_heap_note_freed(const rt_heap_blk *blk, int fn, uint64_t free_bt, uint64_t index);
/* Reports the error rt_heap_remove found (rc) as a HEAPERR record; *blk
 * is the removed block (mismatch) or rt_heap_describe's (invalid). */
void rt_heap_error(int rc, uint64_t index, int fn, uintptr_t p, uint64_t bt, rt_heap_blk *blk);

/* An allocation of the program: recorded while tracing, entered in the
 * table in any case. One made while the tracer is busy (its own, or the
 * inner calls of libstdc++'s operators, or what those make before they
 * return: an exception object) goes in as an internal block (function 0):
 * never reported, but known when the program frees it. */
static inline __attribute__((always_inline)) void rt_heap_alloc(int fn, void *p, uint64_t size)
{
	if (rt_t.busy) {
		rt_heap_insert((uintptr_t)p, size, 0, 0, 0);
		return;
	}
	int err = errno;
	rt_t.busy = 1;
	uint64_t index = 0, bt = 0;
	if (RT_UNLIKELY(!RT_LOAD(rt_active)) && RT_UNLIKELY(!RT_LOAD(rt_started)))
		rt_start(); /* before the tracer's constructor */
	if (RT_LIKELY(RT_LOAD(rt_active))) {
		index = rt_next_index();
		bt = rt_record_call(index, RT_TF_CALL_ALLOC, fn, (uint64_t)(uintptr_t)p, size, true);
	}
	rt_heap_insert((uintptr_t)p, size, fn, bt, index);
	rt_t.busy = 0;
	errno = err;
}

/* memcheck's FishyValue: an allocation function's size argument that
 * would be negative as a signed number (malloc(-1)), reported with the
 * call's stack; the call itself goes on to the allocator unchanged. fn:
 * the function memcheck names (memalign for its family, malloc for
 * realloc(NULL, n)), arg: HARG_SIZE or HARG_NMEMB. Inlined into the
 * interposer, whose caller's stack rt_heap_bt takes. */
static inline __attribute__((always_inline)) void rt_heap_fishy(int fn, int arg, size_t value)
{
	if (RT_LIKELY((ssize_t)value >= 0) || rt_t.busy || !RT_LOAD(rt_active))
		return;
	int err = errno;
	rt_heap_enter();
	rt_t.busy = 1;
	uint64_t index = rt_next_index(), bt = rt_heap_bt();
	rt_heap_blk blk = {0};
	blk.state = (uint8_t)arg;
	rt_heap_write_error(HERR_FISHY_VALUE, index, fn, value, bt, &blk);
	rt_t.busy = 0;
	rt_heap_leave();
	errno = err;
}

/* A release of the program, before the block goes back to the allocator:
 * checked against the table, the error (if any) recorded. Returns whether
 * the pointer goes on to the allocator: like memcheck, a release of what
 * is no live block is reported and dropped, since glibc's own checks are
 * no longer reliable once the tracer's allocations may have reused the
 * freed chunk (and a corrupted heap would take the tracer down too). */
static inline __attribute__((always_inline)) bool rt_heap_release(int fn, void *p)
{
	rt_heap_blk blk;
	if (RT_UNLIKELY(rt_h.table)) {
		rt_heap_defer((uintptr_t)p);
		return false;
	}
	if (rt_t.busy) {
		rt_heap_remove((uintptr_t)p, fn, 0, 0, &blk);
		return true;
	}
	int err = errno;
	rt_t.busy = 1;
	bool traced = RT_LOAD(rt_active);
	uint64_t index = traced ? rt_next_index() : 0;
	uint64_t bt = traced && rt_opt.trace_frees ? rt_heap_bt() : 0;
	int rc = rt_heap_remove((uintptr_t)p, fn, bt, index ? index : 1, &blk);
	bool pass = true;
	if (traced && !(RT_UNLIKELY(rc == HEAP_INVALID) && RT_LOAD(rt_heap_quiet))) {
		/* described before the unwinder (which allocates) may reuse p */
		if (RT_UNLIKELY(rc == HEAP_INVALID))
			rt_heap_describe((uintptr_t)p, &blk);
		if (RT_UNLIKELY(rc != HEAP_OK) && !bt)
			bt = rt_heap_bt();
		/* the lifetime filter drops it with its allocation, if held */
		if (RT_LIKELY(!rt_opt.min_lifetime) || rc != HEAP_OK || !blk.index ||
		    !rt_life_drop(index, blk.index))
			rt_record_call_bt(index, RT_TF_CALL_FREE, fn, (uint64_t)(uintptr_t)p, 0, bt);
		if (RT_UNLIKELY(rc != HEAP_OK))
			rt_heap_error(rc, index, fn, (uintptr_t)p, bt, &blk);
		pass = rc != HEAP_INVALID;
	}
	rt_t.busy = 0;
	errno = err;
	return pass;
}

/* leak.c: the check at exit. */
enum { LEAK_CHECK_NO = 0, LEAK_CHECK_SUMMARY = 1, LEAK_CHECK_FULL = 2 };
void rt_leak_init(int mode);
/* Called by the tracer's destructor: arranges for the check to run after
 * every other destructor, followed by rt_finish(). False when there is no
 * check (the caller finishes at once). */
bool rt_leak_defer(void);
void rt_leak_fork_child(void);
/* Opens the descriptors the check reads through when the program leaves
 * none free (after rt_leak_init and the modules' init). */
void rt_leak_reserve(void);
/* fatal.c's: the check at a fatal signal (the reason when it cannot
 * run, or NULL), the mode, and a signal to send again when the thread
 * leaves the interposer it is in. */
struct ucontext_t;
const char *rt_leak_at_signal(const struct ucontext_t *uc);
int rt_leak_mode(void);
void rt_leak_defer_signal(int sig);

#endif
