/* The live-block table: every block the program holds, with its size,
 * allocating function and allocation stack, so that releases can be
 * checked as they happen (invalid and mismatched frees) and the exit scan
 * knows the heap. Kept from the first allocation on, whether tracing is on
 * or not, so that a block allocated before tracing started is no invalid
 * free later.
 *
 * The table is made of parts, each an open-addressing table (linear
 * probing, backward-shift deletion) behind its own spinlock, with a ring
 * of its most recently freed blocks (memcheck's freed-blocks queue, to
 * describe a double free):
 * - fronts: each thread (up to 64 at once) enters the blocks it allocates
 *   in a part of its own, so that the common case, a block freed by the
 *   thread that allocated it, touches only that thread's lock (never
 *   contended: its cache line stays with the thread), its slots and its
 *   ring, which stay in the thread's cache. A front outlives its thread
 *   (its blocks are still live) and is taken over by the next thread;
 * - 64 stripes by address hash, shared: the blocks of threads beyond 64,
 *   of a thread before the tracer started or after its front left, and
 *   those a signal handler allocates while its thread is in the table.
 * A block never moves between parts. A release looks in the thread's own
 * front, then in the fronts that the page hint names, then in its
 * stripe: hints[] has a bit per front for each 4 KiB page (a direct-mapped
 * table, bits only ever set), set by a front's first block in that page,
 * so a block is always in one of the parts looked in (no false negative).
 * Measured alone on churn's pattern (bench/heap_table.c, a loaded 2-core
 * machine): 31-63 ns a call with the stripes alone (slots and rings
 * spread over 330 KiB that the trace's stores evict from the cache),
 * 16-45 with the fronts; 46-89 against 35-55 with 4 threads, where a
 * thread preempted while holding a shared stripe sent the others to
 * sched_yield; the whole traced churn with 4 threads takes 18% less CPU
 * (bench/README.md, "The live-block table's parts per thread"). The
 * front's lock is still a locked exchange, on a line no other thread
 * touches but for a release of its blocks or a scan. Memory comes from
 * mmap, since this code runs inside malloc. */
#define _GNU_SOURCE
#include "heap.h"
#include "pages.h"

#include <pthread.h>
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
#define FRONTS 64u /* a bit each in a hint word */
#define INIT_SLOTS 64u
#define RING 64u
#define LF_NUM 3 /* a part grows past this load */
#define LF_DEN 4
#define HINT_WORDS (1u << 16) /* 512 KiB: 256 MiB of pages without aliasing */

typedef struct freed {
	uintptr_t addr;
	uint64_t size, alloc_bt, free_bt;
	uint64_t seq; /* the call index then: the latest of all parts' rings */
	uint8_t alloc_fn, free_fn;
} freed;

typedef struct rt_heap_table {
	_Atomic int lock;
	uint32_t ring_next;
	rt_heap_ent *slots;
	size_t mask, count;
	freed *ring;
	_Atomic int owned; /* a front: a thread has it */
} __attribute__((aligned(64))) table;

static table stripes[STRIPES] RT_COLD, fronts[FRONTS] RT_COLD;
static _Atomic(_Atomic uint64_t *) hints;
/* A bit per part (part(k)) that has its slots: the walks over every part
 * at exit look at those alone. The parts' 8 KiB, never touched in a
 * process that allocates nothing before its exit (/bin/true), were 3 page
 * faults of its exit's check that nothing is live. */
static _Atomic uint64_t ready_parts[2];
_Atomic int rt_heap_quiet;
static void (*real_free)(void *);
static void drain_deferred(void);

/* Each function's family, by function id. */
static const uint8_t family[FN_COUNT] = {
	[FN_MALLOC] = FAM_MALLOC, [FN_CALLOC] = FAM_MALLOC, [FN_REALLOC] = FAM_MALLOC,
	[FN_REALLOCARRAY] = FAM_MALLOC, [FN_FREE] = FAM_MALLOC, [FN_POSIX_MEMALIGN] = FAM_MALLOC,
	[FN_ALIGNED_ALLOC] = FAM_MALLOC, [FN_MEMALIGN] = FAM_MALLOC, [FN_VALLOC] = FAM_MALLOC,
	[FN_PVALLOC] = FAM_MALLOC,
	[FN_NEW] = FAM_NEW, [FN_NEW_NOTHROW] = FAM_NEW, [FN_NEW_ALIGNED] = FAM_NEW,
	[FN_DELETE] = FAM_NEW, [FN_DELETE_SIZED] = FAM_NEW, [FN_DELETE_ALIGNED] = FAM_NEW,
	[FN_NEW_ARRAY] = FAM_NEW_ARRAY, [FN_NEW_ARRAY_NOTHROW] = FAM_NEW_ARRAY,
	[FN_NEW_ARRAY_ALIGNED] = FAM_NEW_ARRAY, [FN_DELETE_ARRAY] = FAM_NEW_ARRAY,
	[FN_DELETE_ARRAY_SIZED] = FAM_NEW_ARRAY, [FN_DELETE_ARRAY_ALIGNED] = FAM_NEW_ARRAY,
};

int rt_fn_family(int fn) { return fn > 0 && fn < FN_COUNT ? family[fn] : FAM_NONE; }

/* A block's hash is its 1 KiB of address's: it picks the stripe and the
 * block's group of 64 slots in a part, and home() places the block in its
 * group by its 16-byte granule. Blocks close in memory then have their
 * slots close in the table: a shell's loop allocates and frees the same
 * few blocks of a few heap pages at each command, and every fork makes
 * each page of the table it then writes a page fault (a copy while the
 * child lives), in the parent and in the child. With a hash of the whole
 * address those blocks were spread over 6-9 pages of bash's table, the
 * largest cost of the tracer in a traced shell's loop (bench/README.md,
 * "Per-process cost"); with their slots grouped, 3. The granule is
 * permuted by the hash (an XOR), so that blocks at the same offset of
 * their 1 KiB (page-aligned ones) do not all start their probes at one
 * place of their groups. A group holds a slot for every granule of its
 * 1 KiB, so a dense unit (32-byte blocks) fills half of it: with 4 KiB
 * units and groups of 256 the overflow of two dense units sharing a group
 * ran into the next ones, and 300,000 blocks of 24 bytes took 410 ms
 * traced against 335 ms hashed whole; with 1 KiB, 255 ms (the slots of
 * consecutive blocks are neighbours in the cache too). */
#define UNIT_SHIFT 10
#define GROUP 64u

static inline uint64_t mix(uintptr_t p)
{
	uint64_t x = (uint64_t)p >> UNIT_SHIFT;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 29;
	return x;
}

static inline size_t home(uintptr_t p, uint64_t h, size_t mask)
{
	return (size_t)(((h >> 6) & ~(uint64_t)(GROUP - 1)) | ((h ^ (p >> 4)) & (GROUP - 1))) & mask;
}

/* An entry's home, its hash not at hand (a move in the table). */
static inline size_t home_of(uintptr_t p, size_t mask) { return home(p, mix(p), mask); }

static inline table *stripe_of(uint64_t h) { return &stripes[h & (STRIPES - 1)]; }

/* rt_h.table counts the parts this thread holds or is taking, for its
 * signal handlers: set before the lock is tried, cleared after it is
 * given back (a handler in between only defers needlessly). */
static inline void st_lock(table *s)
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

static inline void st_unlock(table *s)
{
	atomic_store_explicit(&s->lock, 0, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	if (--rt_h.table == 0 && RT_UNLIKELY(atomic_load_explicit(&rt_h.ndeferred, memory_order_relaxed)))
		drain_deferred();
}

void rt_heap_set_free(void (*fn)(void *)) { real_free = fn; }

/* Both ends of the queue change ndeferred with a compare-and-swap, which
 * no signal handler of this thread can split: between the thread's read
 * of the count and its update, a handler may push (its free while the
 * thread holds a part) or drain the whole queue (its own table operation
 * ends while the count is nonzero, and st_unlock drains). Read once and
 * decremented after, a count a handler had drained to 0 in between made
 * the next pop read deferred[0u - 1], 32 GiB past the array: the SIGSEGV
 * of cli.run's tp_sigheap free under load, 1 run in ~50. */
bool rt_heap_defer(uintptr_t p)
{
	unsigned n = atomic_load_explicit(&rt_h.ndeferred, memory_order_relaxed);
	do {
		if (n == RT_HEAP_DEFERRED)
			return false;
		rt_h.deferred[n] = p; /* a nested handler's push overwrites it: the swap fails, and it goes above */
		atomic_signal_fence(memory_order_seq_cst);
	} while (!atomic_compare_exchange_weak_explicit(&rt_h.ndeferred, &n, n + 1, memory_order_relaxed,
							 memory_order_relaxed));
	return true;
}

/* The releases this thread's signal handlers made while it was in the
 * table, done as a busy thread's release is (the thread was inside the
 * tracer): out of the table, back to the allocator. Each is taken off the
 * queue before the table is touched, so a handler that comes meanwhile
 * queues behind it, and the nested unlock releases that one. */
static void drain_deferred(void)
{
	unsigned n = atomic_load_explicit(&rt_h.ndeferred, memory_order_relaxed);
	while (n) {
		uintptr_t p = rt_h.deferred[n - 1];
		atomic_signal_fence(memory_order_seq_cst);
		if (!atomic_compare_exchange_weak_explicit(&rt_h.ndeferred, &n, n - 1, memory_order_relaxed,
							   memory_order_relaxed))
			continue; /* a handler pushed or drained: n is the count now */
		rt_heap_blk blk;
		if (rt_heap_remove(p, FN_FREE, 0, 0, &blk) != HEAP_INVALID && real_free)
			real_free((void *)p);
		n = atomic_load_explicit(&rt_h.ndeferred, memory_order_relaxed);
	}
}

/* First use of a part: its slots and its freed-blocks ring. */
static bool st_ready(table *s)
{
	if (RT_LIKELY(s->slots != NULL))
		return true;
	s->slots = rt_pages(INIT_SLOTS * sizeof *s->slots);
	s->ring = rt_pages(RING * sizeof *s->ring);
	unsigned k = s >= fronts && s < fronts + FRONTS ? STRIPES + (unsigned)(s - fronts) : (unsigned)(s - stripes);
	if (s->slots || s->ring) /* mapped: the walks see them */
		atomic_fetch_or(&ready_parts[k / 64], 1ull << (k % 64));
	if (!s->slots || !s->ring)
		return false;
	s->mask = INIT_SLOTS - 1;
	return true;
}

/* Doubles the part's table; false when memory ran out (the block is
 * then not tracked: a later release of it is not checked either). */
static bool st_grow(table *s)
{
	size_t n = (s->mask + 1) * 2;
	rt_heap_ent *t = rt_pages(n * sizeof *t);
	if (!t)
		return false;
	for (size_t i = 0; i <= s->mask; i++) {
		if (!s->slots[i].addr)
			continue;
		size_t j = home_of(s->slots[i].addr, n - 1);
		while (t[j].addr)
			j = (j + 1) & (n - 1);
		t[j] = s->slots[i];
	}
	rt_pages_free(s->slots, (s->mask + 1) * sizeof *s->slots);
	s->slots = t;
	s->mask = n - 1;
	return true;
}

static inline size_t st_find(const table *s, uintptr_t p, uint64_t h)
{
	size_t i = home(p, h, s->mask);
	while (s->slots[i].addr && s->slots[i].addr != p)
		i = (i + 1) & s->mask;
	return i;
}

/* --- fronts --- */

static pthread_key_t front_key;
static pthread_once_t front_once = PTHREAD_ONCE_INIT;

/* Thread exit (a key's destructor): the front goes to the next thread
 * that needs one, with its blocks; this thread's later calls (other
 * destructors) use the stripes. */
static void front_leave(void *arg)
{
	table *t = arg;
	if (rt_h.front == t) {
		rt_h.front = NULL;
		rt_h.nofront = 1;
	}
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&t->owned, 0, memory_order_release);
}

static void front_key_make(void)
{
	if (pthread_key_create(&front_key, front_leave) == 0)
		return;
	front_key = (pthread_key_t)-1;
}

static bool hints_ready(void)
{
	if (RT_LIKELY(atomic_load_explicit(&hints, memory_order_acquire) != NULL))
		return true;
	_Atomic uint64_t *h = rt_pages(HINT_WORDS * sizeof *h), *none = NULL;
	if (!h)
		return false;
	if (!atomic_compare_exchange_strong(&hints, &none, h))
		rt_pages_free(h, HINT_WORDS * sizeof *h);
	return true;
}

/* A thread's first table operation once the tracer started: a free
 * front, or none (the thread uses the stripes for good). Set nofront
 * first: what pthread_setspecific allocates goes to the stripes. */
static __attribute__((noinline)) table *front_claim(void)
{
	if (!RT_LOAD(rt_started))
		return NULL; /* too early for pthread keys: stripes until then */
	rt_h.nofront = 1;
	pthread_once(&front_once, front_key_make);
	if (front_key == (pthread_key_t)-1 || !hints_ready())
		return NULL;
	for (unsigned k = 0; k < FRONTS; k++) {
		table *t = &fronts[k];
		int free_ = 0;
		if (atomic_load_explicit(&t->owned, memory_order_relaxed) ||
		    !atomic_compare_exchange_strong(&t->owned, &free_, 1))
			continue;
		if (pthread_setspecific(front_key, t) != 0) {
			atomic_store(&t->owned, 0);
			return NULL;
		}
		rt_h.front_id = k;
		rt_h.front = t;
		rt_h.nofront = 0;
		return t;
	}
	return NULL;
}

/* The calling thread's front, or NULL: none, or a signal handler came
 * while the thread is in the table (it may hold its front). */
static inline table *own_front(void)
{
	if (RT_UNLIKELY(rt_h.table))
		return NULL;
	if (RT_LIKELY(rt_h.front != NULL))
		return rt_h.front;
	return rt_h.nofront ? NULL : front_claim();
}

static inline _Atomic uint64_t *hint_of(uintptr_t p)
{
	return &atomic_load_explicit(&hints, memory_order_relaxed)[(p >> 12) & (HINT_WORDS - 1)];
}

/* The front's bit in p's page hint, set before the block is entered (a
 * thread that frees p got it from this one after that). */
static inline void hint_note(uintptr_t p, unsigned id)
{
	_Atomic uint64_t *w = hint_of(p);
	uint64_t bit = UINT64_C(1) << id;
	if (RT_UNLIKELY(!(atomic_load_explicit(w, memory_order_relaxed) & bit)))
		atomic_fetch_or_explicit(w, bit, memory_order_relaxed);
}

/* --- one part --- */

static void t_insert(table *s, uintptr_t p, uint64_t h, uint64_t meta, uint64_t bt, uint64_t index)
{
	st_lock(s);
	if (st_ready(s) && ((s->count + 1) * LF_DEN <= (s->mask + 1) * LF_NUM || st_grow(s))) {
		size_t i = st_find(s, p, h);
		if (!s->slots[i].addr)
			s->count++;
		s->slots[i] = (rt_heap_ent){p, meta, bt, index};
	}
	st_unlock(s);
}

void rt_heap_insert(uintptr_t p, uint64_t size, int fn, uint64_t bt, uint64_t index)
{
	uint64_t h = mix(p), meta = (size & RT_HEAP_SIZE_MASK) | (uint64_t)fn << 56;
	table *f = own_front();
	if (RT_LIKELY(f != NULL)) {
		hint_note(p, rt_h.front_id);
		t_insert(f, p, h, meta, bt, index);
	} else {
		t_insert(stripe_of(h), p, h, meta, bt, index);
	}
}

/* Backward-shift deletion: the entries after a hole that probed past it
 * move up, so lookups never need tombstones. */
static void st_delete(table *s, size_t i)
{
	size_t j = i;
	for (;;) {
		s->slots[i].addr = 0;
		for (;;) {
			j = (j + 1) & s->mask;
			if (!s->slots[j].addr)
				return;
			size_t k = home_of(s->slots[j].addr, s->mask);
			/* can the entry at j move to the hole at i? */
			if (i <= j ? (k <= i || k > j) : (k <= i && k > j))
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

static inline void ring_put(table *s, const rt_heap_blk *b, int fn, uint64_t free_bt, uint64_t seq)
{
	freed *f = &s->ring[s->ring_next++ % RING];
	f->addr = b->addr;
	f->size = b->size;
	f->alloc_bt = b->alloc_bt;
	f->free_bt = free_bt;
	f->seq = seq;
	f->alloc_fn = b->alloc_fn;
	f->free_fn = (uint8_t)fn;
}

/* Takes p out of one part: false when it is not there. Inlined into the
 * common case, the thread's own front. */
static inline __attribute__((always_inline)) bool t_take(table *s, uintptr_t p, uint64_t h, int fn,
							 uint64_t free_bt, uint64_t keep,
							 rt_heap_blk *blk, int *rc)
{
	bool found = false;
	st_lock(s);
	if (RT_LIKELY(s->slots != NULL)) {
		size_t i = st_find(s, p, h);
		if (RT_LIKELY(s->slots[i].addr != 0)) {
			blk_from(blk, &s->slots[i]);
			/* an internal block (function 0) has no family to match */
			*rc = !blk->alloc_fn || family[blk->alloc_fn] == family[fn] ? HEAP_OK : HEAP_MISMATCH;
			st_delete(s, i);
			s->count--;
			if (keep)
				ring_put(s, blk, fn, free_bt, keep);
			found = true;
		}
	}
	st_unlock(s);
	return found;
}

/* Where the thread's own front did not hold p: the other fronts its
 * page's hint names, then its stripe. A signal handler's call while its
 * thread is in the table skips the thread's own front (held, perhaps
 * half-way through an update). */
static __attribute__((noinline)) int remove_elsewhere(uintptr_t p, uint64_t h, int fn, uint64_t free_bt,
						      uint64_t keep, rt_heap_blk *blk)
{
	int rc = HEAP_INVALID;
	if (atomic_load_explicit(&hints, memory_order_relaxed)) {
		uint64_t m = atomic_load_explicit(hint_of(p), memory_order_relaxed);
		if (rt_h.front)
			m &= ~(UINT64_C(1) << rt_h.front_id);
		for (; m; m &= m - 1)
			if (t_take(&fronts[__builtin_ctzll(m)], p, h, fn, free_bt, keep, blk, &rc))
				return rc;
	}
	t_take(stripe_of(h), p, h, fn, free_bt, keep, blk, &rc);
	return rc;
}

int rt_heap_remove(uintptr_t p, int fn, uint64_t free_bt, uint64_t keep, rt_heap_blk *blk)
{
	uint64_t h = mix(p);
	int rc = HEAP_INVALID;
	table *f = own_front();
	if (RT_LIKELY(f != NULL) && t_take(f, p, h, fn, free_bt, keep, blk, &rc))
		return rc;
	return remove_elsewhere(p, h, fn, free_bt, keep, blk);
}

/* Every part: the stripes, then the fronts. */
static inline table *part(unsigned k) { return k < STRIPES ? &stripes[k] : &fronts[k - STRIPES]; }
#define PARTS (STRIPES + FRONTS)

/* The live block that p points inside of (not at its start). */
static bool find_live_around(uintptr_t p, rt_heap_blk *blk)
{
	bool found = false;
	for (unsigned k = 0; k < PARTS && !found; k++) {
		table *s = part(k);
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

/* The most recently freed block that p points into, of every part's
 * ring: one freed at p itself (a double free) before one p points
 * inside of. */
static bool find_freed(uintptr_t p, rt_heap_blk *blk)
{
	const freed *best = NULL;
	freed copy;
	for (unsigned k = 0; k < PARTS; k++) {
		table *s = part(k);
		st_lock(s);
		for (uint32_t n = 0; s->ring && n < RING && n < s->ring_next; n++) {
			const freed *f = &s->ring[(s->ring_next - 1 - n) % RING];
			if (p != f->addr && !(p > f->addr && p - f->addr < f->size))
				continue;
			bool at = p == f->addr, best_at = best && p == copy.addr;
			if (!best || at > best_at || (at == best_at && f->seq > copy.seq)) {
				copy = *f;
				best = &copy;
			}
		}
		st_unlock(s);
	}
	if (best)
		*blk = (rt_heap_blk){copy.addr, copy.size, copy.alloc_bt, copy.free_bt, 0,
				     copy.alloc_fn, copy.free_fn, 2};
	return best != NULL;
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

void rt_heap_note_freed(const rt_heap_blk *blk, int fn, uint64_t free_bt, uint64_t index)
{
	table *s = own_front();
	if (!s)
		s = stripe_of(mix(blk->addr));
	st_lock(s);
	if (st_ready(s))
		ring_put(s, blk, fn, free_bt, index);
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
	rt_writer_keep();
}

void rt_heap_lock_all(void)
{
	for (unsigned k = 0; k < PARTS; k++)
		st_lock(part(k));
}

void rt_heap_unlock_all(void)
{
	for (unsigned k = PARTS; k-- > 0;)
		st_unlock(part(k));
}

/* Each part with slots, k from 0 up: for (k = -1; (k = next_ready(k)) >= 0;). */
static int next_ready(int k)
{
	for (unsigned w = (unsigned)(k + 1) / 64; w < 2; w++) {
		uint64_t bits = atomic_load(&ready_parts[w]);
		if (w == (unsigned)(k + 1) / 64)
			bits &= ~0ull << ((unsigned)(k + 1) % 64);
		if (bits)
			return (int)(w * 64 + (unsigned)__builtin_ctzll(bits));
	}
	return -1;
}

void rt_heap_each(void (*fn)(void *ctx, const rt_heap_ent *e), void *ctx)
{
	for (int k = -1; (k = next_ready(k)) >= 0;) {
		const table *s = part((unsigned)k);
		for (size_t i = 0; s->slots && i <= s->mask; i++)
			if (s->slots[i].addr)
				fn(ctx, &s->slots[i]);
	}
}

size_t rt_heap_count(void)
{
	size_t n = 0;
	for (int k = -1; (k = next_ready(k)) >= 0;)
		n += part((unsigned)k)->count;
	return n;
}

void rt_heap_each_map(void (*fn)(void *ctx, uintptr_t lo, uintptr_t hi), void *ctx)
{
	for (int k = -1; (k = next_ready(k)) >= 0;) {
		const table *s = part((unsigned)k);
		if (s->slots)
			fn(ctx, (uintptr_t)s->slots, (uintptr_t)(s->slots + s->mask + 1));
		if (s->ring)
			fn(ctx, (uintptr_t)s->ring, (uintptr_t)(s->ring + RING));
	}
	_Atomic uint64_t *h = atomic_load(&hints);
	if (h)
		fn(ctx, (uintptr_t)h, (uintptr_t)(h + HINT_WORDS));
}

/* fork: no part may be held by a thread that does not exist in the
 * child, so the forking thread holds them all across the fork. In the
 * child, the fronts of the threads that did not come along (their
 * blocks still live there) go to the child's next threads. A process
 * without other threads forks with none held (preload.c, atfork_prepare):
 * locked is false, nothing to release. */
void rt_heap_atfork_prepare(void) { rt_heap_lock_all(); }
void rt_heap_atfork_parent(void) { rt_heap_unlock_all(); }

void rt_heap_atfork_child(bool locked)
{
	/* stored only where set: each store copies its page in the child */
	for (unsigned k = 0; k < FRONTS; k++)
		if (&fronts[k] != rt_h.front && atomic_load_explicit(&fronts[k].owned, memory_order_relaxed))
			atomic_store(&fronts[k].owned, 0);
	if (locked)
		rt_heap_unlock_all();
}
