/* The lifetime filter (rtrace run --min-lifetime=N[ms]): allocations
 * that the allocating thread frees again within its next N memory calls
 * (or N ms: entries that old are then committed, the ring holding at most
 * RT_LIFE_MAX) leave no CALL records, only a count per stack (DROPPED records), so that a
 * trace grows with what lives rather than with what churns.
 *
 * Design. Each thread's memory CALL records go through a delay queue of
 * its own (a ring of N entries; the fields, not the encoded bytes, since
 * a record's time delta depends on the record committed before it). The
 * ring keeps the thread's records in index order, which the reader needs
 * (every record of a thread is in its chunks by increasing index): the
 * oldest entry is committed to the chunk when a new one needs its slot,
 * and the whole ring before any other record the thread writes (another
 * module's call, a heap error) and at every point where the trace must be
 * complete: exit (the exit path for its own thread; the other threads
 * from the leak check's park handler, or, with --leak-check=no, a stop of
 * the threads only for this), a thread's end (a key destructor), fork
 * (the parent's prepare handler) and exec.
 *
 * A release finds its block's allocation through the index the
 * live-block table keeps (unique, so a block freed by another thread and
 * reallocated at the same address is never mistaken for a held one):
 * found still held in this thread's ring, the allocation becomes a
 * tombstone and the release is not queued at all. Releases from another
 * thread of a block held here are queued as usual in their own thread
 * (the reader merges by index, so the allocation committed later is still
 * delivered first); the live-block table and so the leak checks never
 * see the filter.
 *
 * Totals stay exact: each dropped pair bumps a per-thread counter keyed
 * by (stack, function) with its bytes and whether heaptrack would call it
 * temporary (the call just before the release, globally, is an allocation
 * of the same size and stack: index - 1 is the thread's newest held
 * entry). The counters are written as DROPPED records at each flush, when
 * the table fills and every 65536 drops, so a killed run loses at most
 * that many counts of each thread. A committed record that follows a
 * dropped release says so (the CALL kind byte's bit 7 and the distance
 * back to that release): heaptrack's "last allocation" is reset by every
 * release, and the reader replays that reset when no call it delivered
 * came after the dropped release. A held allocation directly followed by
 * a queued release is pinned (never dropped), since that release's
 * temporary verdict depends on it.
 *
 * Cost: a 64-byte entry stored per event and a binary search of the ring
 * per release (bench/lifetime.sh, figures in bench/README.md). */
#define _GNU_SOURCE
#include "heap.h"
#include "lifetime.h"
#include "pages.h"

#include <pthread.h>
#include <string.h>

#define DROP_SLOTS 512u /* a power of two */
#define DROP_FLUSH 65536u

enum { HELD_LIVE = 0, HELD_DROPPED = 1, HELD_PINNED = 2 };

/* res_id, a block's address, is kept complemented: the ring is no root
 * of the leak check, which would see the block still pointed to. */
typedef struct held {
	uint64_t index, ns, res_id, size, bt;
	uint64_t marker; /* a release dropped just before this entry (0: none) */
	uint32_t context;
	uint8_t kind, fn, state;
} held;

typedef struct dropslot {
	uint64_t bt, index, count, bytes, temporary; /* index: the first one's */
	uint32_t fn; /* count 0: an empty slot */
} dropslot;

typedef struct life {
	held *ring;
	unsigned cap, head, n; /* the oldest entry at head */
	uint64_t marker;       /* a dropped release no entry follows yet */
	uint64_t carry;        /* a tombstone's marker, for the next committed entry */
	dropslot *drops;
	unsigned ndrops, since_flush;
} life;

static __thread life *lt __attribute__((tls_model("initial-exec")));
static pthread_key_t life_key;
static bool key_ok;

static void on_thread_end(void *p);

void rt_life_init(void)
{
	if (rt_opt.min_lifetime > RT_LIFE_MAX)
		rt_opt.min_lifetime = RT_LIFE_MAX;
	if (rt_opt.min_lifetime)
		key_ok = pthread_key_create(&life_key, on_thread_end) == 0;
}

static life *life_get(void)
{
	if (RT_LIKELY(lt != NULL))
		return lt;
	life *l = rt_pages(sizeof *l);
	if (!l)
		return NULL;
	l->cap = rt_opt.min_lifetime;
	l->ring = rt_pages(l->cap * sizeof *l->ring);
	l->drops = rt_pages(DROP_SLOTS * sizeof *l->drops);
	if (!l->ring || !l->drops)
		return NULL;
	if (key_ok)
		pthread_setspecific(life_key, l);
	return lt = l;
}

static inline held *at(const life *l, unsigned k) { return &l->ring[(l->head + k) % l->cap]; }

static void commit_oldest(life *l)
{
	held *e = at(l, 0);
	l->head = (l->head + 1) % l->cap;
	l->n--;
	if (e->marker > l->carry)
		l->carry = e->marker;
	if (e->state == HELD_DROPPED)
		return;
	rt_record_held(e->index, e->ns, e->kind, e->fn, ~e->res_id, e->size, e->bt, e->context, l->carry);
	l->carry = 0;
}

void rt_life_hold(uint64_t index, int kind, int fn, uint64_t res_id, uint64_t size, uint64_t bt)
{
	life *l = life_get();
	if (!l) { /* no memory for the ring: unfiltered */
		rt_record_held(index, rt_opt.timestamps ? rt_now_ns() : 0, kind, fn, res_id, size, bt,
			       rt_t.context, 0);
		return;
	}
	uint64_t now = rt_opt.timestamps || rt_opt.min_lifetime_ns ? rt_now_ns() : 0;
	if (l->n == l->cap)
		commit_oldest(l);
	/* a time bound: what lived that long is recorded */
	while (rt_opt.min_lifetime_ns && l->n && now - at(l, 0)->ns >= rt_opt.min_lifetime_ns)
		commit_oldest(l);
	if (kind == RT_TF_CALL_FREE && l->n) {
		held *last = at(l, l->n - 1);
		if (last->index + 1 == index && last->kind == RT_TF_CALL_ALLOC && last->state == HELD_LIVE)
			last->state = HELD_PINNED;
	}
	/* the latest release dropped before this call, in any thread */
	uint64_t marker = rt_last_dropped();
	if (marker >= index || marker < l->marker)
		marker = l->marker;
	*at(l, l->n++) = (held){index, now, ~res_id, size, bt, marker,
				rt_t.context, (uint8_t)kind, (uint8_t)fn, HELD_LIVE};
	l->marker = 0;
}

static void drop_write(const dropslot *d)
{
	uint8_t *p = rt_reserve(1 + 7 * 10);
	if (!p)
		return;
	*p++ = RT_REC_DROPPED;
	p = rt_put_varint(p, d->fn);
	p = rt_put_varint(p, RES_MEMORY);
	p = rt_put_varint(p, d->bt);
	p = rt_put_varint(p, d->index);
	p = rt_put_varint(p, d->count);
	p = rt_put_varint(p, d->bytes);
	p = rt_put_varint(p, d->temporary);
	rt_commit(p);
}

/* The dropped counts so far as DROPPED records; the table empties. */
static void drops_flush(life *l)
{
	for (unsigned i = 0; i < DROP_SLOTS && l->ndrops; i++) {
		dropslot *d = &l->drops[i];
		if (!d->count)
			continue;
		drop_write(d);
		d->count = 0;
		l->ndrops--;
	}
	l->since_flush = 0;
}

static void drops_add(life *l, const held *e, bool temporary)
{
	if (l->ndrops * 4 >= DROP_SLOTS * 3 || l->since_flush >= DROP_FLUSH)
		drops_flush(l);
	uint64_t h = (e->bt * 0x9e3779b97f4a7c15ULL) ^ e->fn;
	unsigned i = (unsigned)(h >> 40) & (DROP_SLOTS - 1);
	while (l->drops[i].count && (l->drops[i].bt != e->bt || l->drops[i].fn != e->fn))
		i = (i + 1) & (DROP_SLOTS - 1);
	dropslot *d = &l->drops[i];
	if (!d->count) {
		*d = (dropslot){e->bt, e->index, 0, 0, 0, e->fn};
		l->ndrops++;
	}
	d->count++;
	d->bytes += e->size;
	d->temporary += temporary;
	l->since_flush++;
}

/* The ring's entry of call index, or NULL: the ring is in index order,
 * so a binary search (10 steps for a ring of 1024, where a scan from the
 * newest entry took 250 on churn's blocks). */
static held *find(const life *l, uint64_t index)
{
	unsigned lo = 0, hi = l->n;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (at(l, mid)->index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && at(l, lo)->index == index ? at(l, lo) : NULL;
}

bool rt_life_drop(uint64_t free_index, uint64_t alloc_index)
{
	life *l = lt;
	if (!l || !l->n || alloc_index < at(l, 0)->index)
		return false;
	held *e = find(l, alloc_index);
	if (!e || e->kind != RT_TF_CALL_ALLOC || e->state != HELD_LIVE)
		return false;
	const held *last = at(l, l->n - 1);
	bool temporary = last->index + 1 == free_index && last->kind == RT_TF_CALL_ALLOC &&
			 last->size == e->size && last->bt == e->bt;
	e->state = HELD_DROPPED;
	l->marker = free_index;
	rt_note_dropped(free_index);
	drops_add(l, e, temporary);
	return true;
}

void rt_life_commit(void)
{
	life *l = lt;
	while (l && l->n)
		commit_oldest(l);
}

void rt_life_flush(void)
{
	if (!lt || RT_LOAD(rt_stopped))
		return;
	int busy = rt_t.busy;
	rt_t.busy = 1;
	rt_heap_pin();
	rt_life_commit();
	drops_flush(lt);
	rt_heap_unpin();
	rt_t.busy = busy;
}

static void on_thread_end(void *p)
{
	life *l = p;
	rt_life_flush();
	lt = NULL;
	rt_pages_free(l->ring, l->cap * sizeof *l->ring);
	rt_pages_free(l->drops, DROP_SLOTS * sizeof *l->drops);
	rt_pages_free(l, sizeof *l);
}
