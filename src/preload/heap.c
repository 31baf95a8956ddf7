/* The live-block table: every block the program holds, with its size,
 * allocating function and allocation stack, so that releases can be
 * checked as they happen (invalid and mismatched frees) and the exit scan
 * knows the heap. Kept from the first allocation on, whether tracing is on
 * or not, so that a block allocated before tracing started is no invalid
 * free later.
 *
 * The table is split into stripes by address hash, each an open-addressing
 * table (linear probing, backward-shift deletion) behind its own spinlock:
 * an update is a few stores under an uncontended lock. Memory comes from
 * mmap, since this code runs inside malloc. Each stripe also remembers its
 * most recently freed blocks (a ring), as memcheck's freed-blocks queue
 * does, to describe a double free. */
#define _GNU_SOURCE
#include "heap.h"
#include "pages.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ volatile("yield")
#else
#define cpu_relax() ((void)0)
#endif

#define STRIPES 64u
#define INIT_SLOTS 64u
#define RING 64u

typedef struct freed {
	uintptr_t addr;
	uint64_t size, alloc_bt, free_bt;
	uint8_t alloc_fn, free_fn;
} freed;

typedef struct stripe {
	_Atomic int lock;
	uint32_t ring_next;
	rt_heap_ent *slots;
	size_t mask, count;
	freed *ring;
} __attribute__((aligned(64))) stripe;

static stripe stripes[STRIPES];
_Atomic int rt_heap_quiet;
static void (*real_free)(void *);
static void drain_deferred(void);

int rt_fn_family(int fn)
{
	switch (fn) {
	case FN_MALLOC: case FN_CALLOC: case FN_REALLOC: case FN_REALLOCARRAY: case FN_FREE:
	case FN_POSIX_MEMALIGN: case FN_ALIGNED_ALLOC: case FN_MEMALIGN: case FN_VALLOC:
	case FN_PVALLOC:
		return FAM_MALLOC;
	case FN_NEW: case FN_NEW_NOTHROW: case FN_NEW_ALIGNED: case FN_DELETE:
	case FN_DELETE_SIZED: case FN_DELETE_ALIGNED:
		return FAM_NEW;
	case FN_NEW_ARRAY: case FN_NEW_ARRAY_NOTHROW: case FN_NEW_ARRAY_ALIGNED:
	case FN_DELETE_ARRAY: case FN_DELETE_ARRAY_SIZED: case FN_DELETE_ARRAY_ALIGNED:
		return FAM_NEW_ARRAY;
	default:
		return FAM_NONE;
	}
}

static inline uint64_t mix(uintptr_t p)
{
	uint64_t x = (uint64_t)p >> 4;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 29;
	return x;
}

static inline stripe *stripe_of(uint64_t h) { return &stripes[h & (STRIPES - 1)]; }

/* rt_h.table counts the stripes this thread holds or is taking, for its
 * signal handlers: set before the lock is tried, cleared after it is
 * given back (a handler in between only defers needlessly). */
static inline void st_lock(stripe *s)
{
	rt_h.table++;
	atomic_signal_fence(memory_order_seq_cst);
	for (unsigned spins = 0; atomic_exchange_explicit(&s->lock, 1, memory_order_acquire);) {
		while (atomic_load_explicit(&s->lock, memory_order_relaxed)) {
			if (++spins > 200)
				sched_yield();
			else
				cpu_relax();
		}
	}
}

static inline void st_unlock(stripe *s)
{
	atomic_store_explicit(&s->lock, 0, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	if (--rt_h.table == 0 && RT_UNLIKELY(rt_h.ndeferred))
		drain_deferred();
}

void rt_heap_set_free(void (*fn)(void *)) { real_free = fn; }

bool rt_heap_defer(uintptr_t p)
{
	if (rt_h.ndeferred == RT_HEAP_DEFERRED)
		return false;
	rt_h.deferred[rt_h.ndeferred] = p;
	atomic_signal_fence(memory_order_seq_cst);
	rt_h.ndeferred++;
	return true;
}

/* The releases this thread's signal handlers made while it was in the
 * table, done as a busy thread's release is (the thread was inside the
 * tracer): out of the table, back to the allocator. Each is taken off the
 * queue before the table is touched, so a handler that comes meanwhile
 * queues behind it, and the nested unlock releases that one. */
static void drain_deferred(void)
{
	while (rt_h.ndeferred) {
		uintptr_t p = rt_h.deferred[rt_h.ndeferred - 1];
		atomic_signal_fence(memory_order_seq_cst);
		rt_h.ndeferred--;
		rt_heap_blk blk;
		if (rt_heap_remove(p, FN_FREE, 0, false, &blk) != HEAP_INVALID && real_free)
			real_free((void *)p);
	}
}

/* First use of a stripe: its slots and its freed-blocks ring. */
static bool st_ready(stripe *s)
{
	if (RT_LIKELY(s->slots != NULL))
		return true;
	s->slots = rt_pages(INIT_SLOTS * sizeof *s->slots);
	s->ring = rt_pages(RING * sizeof *s->ring);
	if (!s->slots || !s->ring)
		return false;
	s->mask = INIT_SLOTS - 1;
	return true;
}

/* Doubles the stripe's table; false when memory ran out (the block is
 * then not tracked: a later release of it is not checked either). */
static bool st_grow(stripe *s)
{
	size_t n = (s->mask + 1) * 2;
	rt_heap_ent *t = rt_pages(n * sizeof *t);
	if (!t)
		return false;
	for (size_t i = 0; i <= s->mask; i++) {
		if (!s->slots[i].addr)
			continue;
		size_t j = (mix(s->slots[i].addr) >> 6) & (n - 1);
		while (t[j].addr)
			j = (j + 1) & (n - 1);
		t[j] = s->slots[i];
	}
	rt_pages_free(s->slots, (s->mask + 1) * sizeof *s->slots);
	s->slots = t;
	s->mask = n - 1;
	return true;
}

static inline size_t st_find(const stripe *s, uintptr_t p, uint64_t h)
{
	size_t i = (h >> 6) & s->mask;
	while (s->slots[i].addr && s->slots[i].addr != p)
		i = (i + 1) & s->mask;
	return i;
}

void rt_heap_insert(uintptr_t p, uint64_t size, int fn, uint64_t bt, uint64_t index)
{
	uint64_t h = mix(p);
	stripe *s = stripe_of(h);
	st_lock(s);
	if (st_ready(s) && ((s->count + 1) * 4 <= (s->mask + 1) * 3 || st_grow(s))) {
		size_t i = st_find(s, p, h);
		if (!s->slots[i].addr)
			s->count++;
		s->slots[i] = (rt_heap_ent){p, (size & RT_HEAP_SIZE_MASK) | (uint64_t)fn << 56, bt, index};
	}
	st_unlock(s);
}

/* Backward-shift deletion: the entries after a hole that probed past it
 * move up, so lookups never need tombstones. */
static void st_delete(stripe *s, size_t i)
{
	size_t j = i;
	for (;;) {
		s->slots[i].addr = 0;
		for (;;) {
			j = (j + 1) & s->mask;
			if (!s->slots[j].addr)
				return;
			size_t home = (mix(s->slots[j].addr) >> 6) & s->mask;
			/* can the entry at j move to the hole at i? */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		s->slots[i] = s->slots[j];
		i = j;
	}
}

static void blk_from(rt_heap_blk *b, const rt_heap_ent *e)
{
	b->addr = e->addr;
	b->size = e->meta & RT_HEAP_SIZE_MASK;
	b->alloc_fn = (uint8_t)(e->meta >> 56);
	b->alloc_bt = e->bt;
	b->index = e->index;
	b->free_bt = 0;
	b->free_fn = 0;
	b->state = 1;
}

int rt_heap_remove(uintptr_t p, int fn, uint64_t free_bt, bool keep_freed, rt_heap_blk *blk)
{
	uint64_t h = mix(p);
	stripe *s = stripe_of(h);
	int rc = HEAP_INVALID;
	st_lock(s);
	if (st_ready(s)) {
		size_t i = st_find(s, p, h);
		if (s->slots[i].addr) {
			blk_from(blk, &s->slots[i]);
			/* an internal block (function 0) has no family to match */
			rc = !blk->alloc_fn || rt_fn_family(blk->alloc_fn) == rt_fn_family(fn) ? HEAP_OK
												 : HEAP_MISMATCH;
			st_delete(s, i);
			s->count--;
			if (keep_freed) {
				s->ring[s->ring_next++ % RING] = (freed){p, blk->size, blk->alloc_bt, free_bt,
									 blk->alloc_fn, (uint8_t)fn};
			}
		}
	}
	st_unlock(s);
	return rc;
}

/* The live block that p points inside of (not at its start). */
static bool find_live_around(uintptr_t p, rt_heap_blk *blk)
{
	bool found = false;
	for (unsigned k = 0; k < STRIPES && !found; k++) {
		stripe *s = &stripes[k];
		st_lock(s);
		for (size_t i = 0; s->slots && i <= s->mask && !found; i++) {
			const rt_heap_ent *e = &s->slots[i];
			if (e->addr && e->meta >> 56 && p >= e->addr && p - e->addr < (e->meta & RT_HEAP_SIZE_MASK)) {
				blk_from(blk, e);
				found = true;
			}
		}
		st_unlock(s);
	}
	return found;
}

/* The most recently freed block that p points into; freed blocks of p's
 * own stripe first (a double free), then those of every stripe. */
static bool find_freed(uintptr_t p, rt_heap_blk *blk)
{
	stripe *home = stripe_of(mix(p));
	for (unsigned k = 0; k <= STRIPES; k++) {
		stripe *s = k == 0 ? home : &stripes[k - 1];
		if (k && s == home)
			continue;
		bool found = false;
		st_lock(s);
		for (uint32_t n = 0; s->ring && n < RING && n < s->ring_next && !found; n++) {
			const freed *f = &s->ring[(s->ring_next - 1 - n) % RING];
			if (p == f->addr || (p > f->addr && p - f->addr < f->size)) {
				*blk = (rt_heap_blk){f->addr, f->size, f->alloc_bt, f->free_bt, 0,
						     f->alloc_fn, f->free_fn, 2};
				found = true;
			}
		}
		st_unlock(s);
		if (found)
			return true;
	}
	return false;
}

bool rt_heap_describe(uintptr_t p, rt_heap_blk *blk)
{
	memset(blk, 0, sizeof *blk);
	return find_live_around(p, blk) || find_freed(p, blk);
}

__attribute__((noinline)) uint64_t rt_heap_bt(void)
{
	uint64_t bt = rt_backtrace();
	__asm__ volatile("" ::: "memory"); /* no tail call: this frame counts */
	return bt;
}

void rt_heap_note_freed(const rt_heap_blk *blk, int fn, uint64_t free_bt)
{
	stripe *s = stripe_of(mix(blk->addr));
	st_lock(s);
	if (st_ready(s))
		s->ring[s->ring_next++ % RING] = (freed){blk->addr, blk->size, blk->alloc_bt, free_bt,
							 blk->alloc_fn, (uint8_t)fn};
	st_unlock(s);
}

void rt_heap_error(int rc, uint64_t index, int fn, uintptr_t p, uint64_t bt, rt_heap_blk *blk)
{
	if (rc == HEAP_INVALID) {
		rt_heap_write_error(HERR_INVALID_FREE, index, fn, p, bt, blk);
	} else {
		rt_heap_write_error(HERR_MISMATCHED_FREE, index, fn, p, bt, blk);
	}
}

void rt_heap_write_error(int kind, uint64_t index, int fn, uintptr_t p, uint64_t bt,
			 const rt_heap_blk *blk)
{
	if (!rt_memory_on())
		return;
	if (rt_opt.min_lifetime)
		rt_life_commit(); /* the calls before it first */
	uint8_t *q = rt_reserve(2 + 12 * 10 + 3);
	if (!q)
		return;
	*q++ = RT_REC_HEAPERR;
	*q++ = (uint8_t)kind;
	q = rt_put_varint(q, index);
	q = rt_put_varint(q, (uint64_t)fn);
	q = rt_put_varint(q, p);
	q = rt_put_varint(q, bt);
	*q++ = blk->state;
	q = rt_put_varint(q, blk->addr);
	q = rt_put_varint(q, blk->size);
	q = rt_put_varint(q, blk->alloc_fn);
	q = rt_put_varint(q, blk->alloc_bt);
	q = rt_put_varint(q, blk->free_fn);
	q = rt_put_varint(q, blk->free_bt);
	rt_commit(q);
}

void rt_heap_lock_all(void)
{
	for (unsigned k = 0; k < STRIPES; k++)
		st_lock(&stripes[k]);
}

void rt_heap_unlock_all(void)
{
	for (unsigned k = STRIPES; k-- > 0;)
		st_unlock(&stripes[k]);
}

void rt_heap_each(void (*fn)(void *ctx, const rt_heap_ent *e), void *ctx)
{
	for (unsigned k = 0; k < STRIPES; k++) {
		const stripe *s = &stripes[k];
		for (size_t i = 0; s->slots && i <= s->mask; i++)
			if (s->slots[i].addr)
				fn(ctx, &s->slots[i]);
	}
}

size_t rt_heap_count(void)
{
	size_t n = 0;
	for (unsigned k = 0; k < STRIPES; k++)
		n += stripes[k].count;
	return n;
}

void rt_heap_each_map(void (*fn)(void *ctx, uintptr_t lo, uintptr_t hi), void *ctx)
{
	for (unsigned k = 0; k < STRIPES; k++) {
		const stripe *s = &stripes[k];
		if (s->slots)
			fn(ctx, (uintptr_t)s->slots, (uintptr_t)(s->slots + s->mask + 1));
		if (s->ring)
			fn(ctx, (uintptr_t)s->ring, (uintptr_t)(s->ring + RING));
	}
}

/* fork: no stripe may be held by a thread that does not exist in the
 * child, so the forking thread holds them all across the fork. */
void rt_heap_atfork_prepare(void) { rt_heap_lock_all(); }
void rt_heap_atfork_parent(void) { rt_heap_unlock_all(); }
void rt_heap_atfork_child(void) { rt_heap_unlock_all(); }
