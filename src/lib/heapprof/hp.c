/* Streaming heap profile. One pass over the calls, none of them kept:
 *  - live blocks sit in an open-addressing table keyed by address,
 *    deleted by backward shift, 16 bytes a slot: the address, a 32-bit
 *    size (blocks of 4 GB and more have theirs in a second, small table)
 *    and the site, whose top bit marks a block the filter left out; the
 *    number of each block's allocation event, which only a listener
 *    needs, is kept beside the slots then (python3's 2^18 slots: 4 MB,
 *    8 MB at 32 bytes a slot; the table is the pass's cache misses);
 *  - allocation sites are the trace's distinct backtraces, indexed by
 *    backtrace id, each with its costs and its live bytes;
 *  - the peak's owners without a second pass: a new global peak starts a
 *    new epoch, and a site's live bytes are copied to its peak cost the
 *    first time the site changes after that epoch began (or at the end):
 *    until then they are what they were at the peak.
 * Temporary allocations follow heaptrack's analyzer exactly (its
 * accumulatedtracedata.cpp): a release is temporary when the last record
 * before it was an allocation of the same (size, backtrace) pair; each
 * release resets "the last allocation" to the pair heaptrack numbers 0,
 * the first pair of the trace, as its reset value is that index. realloc
 * is a release then an allocation in both recordings, so a block
 * realloc'ed right after its allocation is temporary, as in heaptrack.
 * Releases of blocks never seen allocated count for nothing, as
 * heaptrack's interpreter drops them. A listener (rt_hp_set_listener) is
 * told each allocation and release as it is accounted, so that exports
 * which need every event in order (heaptrack's format) stream them
 * without a second pass and agree with the profile's figures.
 * A filter (hp_filter.c) decides per call: an allocation it leaves out
 * is still a live block, marked out, so that the temporary rule runs on
 * the program's whole sequence of calls (heaptrack_print's figures with
 * --filter-bt-function), and costs nothing; a call past its ranges
 * closes the profile, whose live blocks are then the range's leaks.
 * With a lookahead (rt_hp_set_lookahead), a call is queued for
 * LOOKAHEAD calls while its block's slot is prefetched: the slot's
 * cache miss was the cost of a call where the live blocks outgrow the
 * caches (python3: over 100k blocks, 8 MB of slots; rt_hp_feed a third of
 * `rtrace convert --to callgrind`'s time). The order of the calls, and
 * so every figure, is the same. A batch of calls (rt_hp_feed_calls)
 * needs no queue: the slots of the calls ahead in the batch are fetched.
 * Batches of a profile with no filter and no listener (`rtrace heap`'s
 * report and --collapsed) take a path of their own (feed_fast): no
 * test for either, the state of the common calls in registers, every
 * other call handed to the general path whole; callgrind over the
 * python3 trace's first 3M calls fed from memory: 173 instructions a
 * call before, 108 after (churn: 179, 102).
 * The types of calls profiled are a byte per resource type (gate), the
 * one test most calls pass before the work. */
#include "rtrace/heapprof.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define EMPTY UINT32_MAX
#define OUT 0x80000000u /* block.site: left out by the filter */
#define WIDE UINT32_MAX /* block.size: 2^32 - 1 bytes or more, in rt_hp.wide */
#define LOOKAHEAD 16 /* calls queued: ~16 calls' work hides a miss to DRAM */
#define SMALL_TABLE 16384 /* slots (256 KB): no lookahead up to this size */

/* 16 bytes, four to a cache line (python3: 2^18 slots, 4 MB; 8 MB when
 * a slot also held a 64-bit size and the event number, 32 bytes). */
typedef struct block {
	uint64_t addr;
	uint32_t size; /* WIDE: the size is rt_hp.wide's */
	uint32_t site; /* EMPTY: a free slot; | OUT: left out by the filter,
			* kept for the temporary rule only */
} block;

/* An open-addressing table keyed by address, deleted by backward shift,
 * with a 64-bit value per slot beside the slots where one is kept (aux):
 * the blocks' event numbers for a listener, the wide blocks' sizes. */
typedef struct table {
	block *slots;
	uint64_t *aux; /* NULL: none */
	size_t nslots, nlive;
	unsigned shift; /* 64 - log2(nslots): home() keeps the product's top bits */
} table;

typedef struct site {
	rt_hp_site pub;
	uint64_t live;  /* bytes allocated here and not freed yet */
	uint64_t nlive; /* blocks allocated here and not freed yet */
	uint64_t epoch; /* the peak epoch pub.cost.peak was taken in */
} site;

/* An allocation's (size, site); site EMPTY: none yet. */
typedef struct pair {
	uint64_t size;
	uint32_t site;
} pair;

/* gate[res_type]: what the fast path does with a call of that type */
enum { GATE_ASK = 0, GATE_FEED, GATE_SKIP };

struct rt_hp {
	table blocks; /* aux: each block's allocation event number, with a listener */
	table wide;   /* aux: the size of each block of WIDE size */
	size_t nout;  /* of the live blocks, those the filter left out */
	site *sites;
	size_t nsites, csites;
	uint32_t *by_bt; /* backtrace id + 1 -> site + 1 */
	size_t nby_bt;
	uint64_t live, epoch;
	uint64_t day; /* added to call times: days passed since the first */
	pair last, first;
	uint8_t gate[256]; /* by res_type; all GATE_SKIP once closed */
	rt_hp_summary sum;
	rt_hp_listener listen; /* told every block event, or NULL */
	void *listen_ctx;
	uint64_t now_us; /* the time of the call being fed */
	rt_hp_filter *filter; /* the selection fed, or NULL: all */
	bool closed;          /* past the filter's ranges: nothing more is fed */
	uint64_t seq;    /* block events so far */
	bool temporary;  /* the release being told is a temporary one */
	bool lookahead;  /* calls wait in q while their slots are fetched */
	rt_trace *qt;    /* the trace of the queued calls */
	rt_call q[LOOKAHEAD];
	size_t qhead, nq;
};

/* Slots for n blocks. A table of 2 MB or more is put in huge pages
 * where the kernel gives them on request: each call touches a random
 * slot, and with 4 KB pages each was also a TLB miss (python3: 8 MB of
 * slots, 2048 pages; perf put half of rt_hp_feed's samples on the
 * instruction after the lookahead's prefetch). */
static void *alloc_slots(size_t bytes)
{
	const size_t huge = 2u << 20;
	void *p = NULL;
	if (bytes < huge || posix_memalign(&p, huge, bytes))
		return rt_xmalloc(bytes);
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

/* n free slots (a power of 2), values beside them when aux. */
static void table_init(table *tb, size_t n, bool aux)
{
	tb->nslots = n;
	tb->nlive = 0;
	tb->shift = 64 - (unsigned)__builtin_ctzll(n);
	tb->slots = alloc_slots(n * sizeof *tb->slots);
	tb->aux = aux ? alloc_slots(n * sizeof *tb->aux) : NULL;
	for (size_t i = 0; i < n; i++)
		tb->slots[i].site = EMPTY;
}

static void table_free(table *tb)
{
	free(tb->slots);
	free(tb->aux);
}

/* Fibonacci hashing: one multiplication, the top bits. Addresses are
 * 16-aligned and dense; the product's top bits spread them (Knuth's
 * multiplicative hashing) at a third of rt_mix64's latency (two
 * multiplications, three shifts), which is on the path to the slot's
 * load: the table's cache miss is the cost of a call (python3: over
 * 100k live blocks, past L2). */
static inline size_t hash_home(uint64_t addr, unsigned shift)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> shift);
}

static inline size_t home(const table *tb, uint64_t addr)
{
	return hash_home(addr, tb->shift);
}

/* The block at addr in slots, or the free slot where it would go (on the
 * slots alone: the batches' fast path keeps the table's fields in
 * registers). */
static inline __attribute__((always_inline)) block *slots_probe(block *slots, size_t mask, unsigned shift,
								uint64_t addr)
{
	for (size_t i = hash_home(addr, shift);; i = (i + 1) & mask) {
		block *b = &slots[i];
		if (b->site == EMPTY || b->addr == addr)
			return b;
	}
}

static inline block *probe(const table *tb, uint64_t addr)
{
	return slots_probe(tb->slots, tb->nslots - 1, tb->shift, addr);
}

static inline uint64_t *aux_of(const table *tb, const block *b)
{
	return &tb->aux[b - tb->slots];
}

/* Twice the slots, the blocks placed again. */
static __attribute__((noinline)) void table_grow(table *tb)
{
	table old = *tb;
	table_init(tb, old.nslots * 2, old.aux != NULL);
	tb->nlive = old.nlive;
	for (size_t i = 0; i < old.nslots; i++) {
		if (old.slots[i].site == EMPTY)
			continue;
		block *b = probe(tb, old.slots[i].addr);
		*b = old.slots[i];
		if (tb->aux)
			*aux_of(tb, b) = old.aux[i];
	}
	table_free(&old);
}

/* Room for one more block: at most 70% of the slots used. */
static inline void table_reserve(table *tb)
{
	if ((tb->nlive + 1) * 10 > tb->nslots * 7)
		table_grow(tb);
}

/* Linear-probing deletion by backward shift, no tombstones; aux (or
 * NULL) moves with the slots. On the slots alone, for the fast path. */
static __attribute__((noinline)) void shift_slots(block *slots, uint64_t *aux, size_t mask, unsigned shift,
						  size_t i)
{
	for (size_t j = (i + 1) & mask; slots[j].site != EMPTY; j = (j + 1) & mask) {
		size_t k = hash_home(slots[j].addr, shift);
		if (((j - k) & mask) >= ((j - i) & mask)) {
			slots[i] = slots[j];
			if (aux)
				aux[i] = aux[j];
			i = j;
		}
	}
	slots[i].site = EMPTY;
}

static void shift_back(table *tb, size_t i)
{
	shift_slots(tb->slots, tb->aux, tb->nslots - 1, tb->shift, i);
}

/* Most slots are followed by a free one (the table is at most 70% full,
 * and spread): then the slot is just freed. */
static inline void table_erase(table *tb, block *b)
{
	size_t i = (size_t)(b - tb->slots);
	tb->nlive--;
	if (tb->slots[(i + 1) & (tb->nslots - 1)].site == EMPTY)
		b->site = EMPTY;
	else
		shift_back(tb, i);
}

void rt_hp_set_filter(rt_hp *h, rt_hp_filter *f)
{
	h->filter = f;
}

/* With a listener, each block keeps the number of its allocation's event
 * (rt_hp_event.born) beside the table. Set before the pass. */
void rt_hp_set_listener(rt_hp *h, rt_hp_listener fn, void *ctx)
{
	h->listen = fn;
	h->listen_ctx = ctx;
	if (fn && !h->blocks.aux) {
		h->blocks.aux = alloc_slots(h->blocks.nslots * sizeof *h->blocks.aux);
		memset(h->blocks.aux, 0, h->blocks.nslots * sizeof *h->blocks.aux);
	}
}

static void tell(rt_hp *h, bool alloc, uint32_t si, uint64_t size, uint64_t born)
{
	uint64_t seq = h->seq - 1;
	rt_hp_event e = {alloc, si, size, h->sum.timed ? h->now_us - h->sum.first_us : 0, seq,
			 alloc ? seq : born, !alloc && h->temporary, h->sum.timed};
	h->listen(h->listen_ctx, &e);
}

rt_hp *rt_hp_new(void)
{
	rt_hp *h = rt_xcalloc(1, sizeof *h);
	table_init(&h->blocks, 1024, false);
	table_init(&h->wide, 16, true);
	for (size_t i = RT_MAX_RESOURCES + 1; i < sizeof h->gate; i++)
		h->gate[i] = GATE_SKIP;
	h->last = h->first = (pair){0, EMPTY};
	return h;
}

void rt_hp_free(rt_hp *h)
{
	if (!h)
		return;
	table_free(&h->blocks);
	table_free(&h->wide);
	free(h->sites);
	free(h->by_bt);
	free(h);
}

/* The site of a new backtrace (or a first one past by_bt's end). */
static uint32_t new_site(rt_hp *h, size_t k, uint32_t bt)
{
	if (k >= h->nby_bt) {
		size_t n = h->nby_bt ? h->nby_bt : 256;
		while (n <= k)
			n *= 2;
		h->by_bt = rt_xrealloc(h->by_bt, n * sizeof *h->by_bt);
		memset(h->by_bt + h->nby_bt, 0, (n - h->nby_bt) * sizeof *h->by_bt);
		h->nby_bt = n;
	}
	if (!h->by_bt[k]) { /* sites stay below OUT: 2^31 of them are 170 GB */
		if (h->nsites == h->csites) {
			h->csites = h->csites ? h->csites * 2 : 256;
			h->sites = rt_xrealloc(h->sites, h->csites * sizeof *h->sites);
		}
		h->sites[h->nsites] = (site){{bt, 0, {0}}, 0, 0, 0};
		h->by_bt[k] = (uint32_t)++h->nsites;
	}
	return h->by_bt[k] - 1;
}

/* by_bt is indexed by bt + 1: RT_NONE's is 0 (uint32_t wraps). */
static inline uint32_t site_of(rt_hp *h, uint32_t bt)
{
	uint32_t k = bt + 1;
	if (k < h->nby_bt && h->by_bt[k])
		return h->by_bt[k] - 1;
	return new_site(h, k, bt);
}

/* Takes the site's bytes at the latest peak before they change. */
static inline __attribute__((always_inline)) site *site_touch(site *sites, uint64_t epoch, uint32_t i)
{
	site *s = &sites[i];
	if (s->epoch != epoch) {
		s->pub.cost.peak = s->live;
		s->epoch = epoch;
	}
	return s;
}

static inline site *touch(rt_hp *h, uint32_t i)
{
	return site_touch(h->sites, h->epoch, i);
}

static inline uint64_t size_of(const rt_hp *h, const block *b)
{
	return b->size != WIDE ? b->size : *aux_of(&h->wide, probe(&h->wide, b->addr));
}

/* Takes block b (its size is size_of's) out of the tables. */
static inline void drop(rt_hp *h, block *b)
{
	if (b->size == WIDE)
		table_erase(&h->wide, probe(&h->wide, b->addr));
	table_erase(&h->blocks, b);
}

static inline __attribute__((always_inline)) void release(rt_hp *h, block *b, uint64_t size)
{
	uint32_t si = b->site;
	site *s = touch(h, si);
	h->seq++;
	if (h->listen)
		tell(h, false, si, size, *aux_of(&h->blocks, b));
	s->live -= size;
	s->nlive--;
	h->live -= size;
	drop(h, b);
}

/* A block the filter left out goes without a trace in the costs. */
static void forget(rt_hp *h, block *b)
{
	h->nout--;
	drop(h, b);
}

/* Records a block at free slot b of the table. */
static void put(rt_hp *h, block *b, const rt_call *c, uint32_t si)
{
	bool wide = c->size >= WIDE;
	*b = (block){c->res_id, wide ? WIDE : (uint32_t)c->size, si};
	if (h->blocks.aux)
		*aux_of(&h->blocks, b) = h->seq;
	h->blocks.nlive++;
	if (wide) {
		table_reserve(&h->wide);
		block *w = probe(&h->wide, c->res_id);
		*w = (block){c->res_id, 0, 0};
		*aux_of(&h->wide, w) = c->size;
		h->wide.nlive++;
	}
}

/* An allocation's costs, a peak it sets. */
static inline void account(rt_hp *h, const rt_call *c, uint64_t now, uint32_t si)
{
	site *s = touch(h, si);
	s->live += c->size;
	s->nlive++;
	s->pub.cost.allocations++;
	s->pub.cost.bytes += c->size;
	h->live += c->size;
	h->sum.total.allocations++;
	h->sum.total.bytes += c->size;
	if (h->live > h->sum.total.peak) {
		h->sum.total.peak = h->live;
		h->sum.peak_index = c->index;
		h->sum.peak_us = now;
		h->epoch++;
	}
	h->seq++;
	if (h->listen)
		tell(h, true, si, c->size, 0);
}

/* An allocation; `out`: left out by the filter, yet kept so that the
 * temporary rule sees the program's whole sequence of calls, as
 * heaptrack_print's --filter-bt-function does. */
static inline void on_alloc(rt_hp *h, const rt_call *c, uint64_t now, uint32_t si, bool out)
{
	table_reserve(&h->blocks);
	block *b = probe(&h->blocks, c->res_id);
	if (b->site != EMPTY) { /* its release was not recorded */
		if (b->site & OUT)
			forget(h, b);
		else
			release(h, b, size_of(h, b));
		b = probe(&h->blocks, c->res_id);
	}
	put(h, b, c, out ? si | OUT : si);
	h->last = (pair){c->size, si};
	if (h->first.site == EMPTY)
		h->first = h->last;
	if (!h->sites[si].pub.cost.allocations)
		h->sites[si].pub.first_index = c->index;
	if (out)
		h->nout++;
	else
		account(h, c, now, si);
}

static inline void on_free(rt_hp *h, const rt_call *c)
{
	block *b = probe(&h->blocks, c->res_id);
	if (b->site == EMPTY)
		return;
	if (b->site & OUT) {
		h->last = h->first;
		forget(h, b);
		return;
	}
	uint64_t size = size_of(h, b);
	h->temporary = h->last.size == size && h->last.site == b->site;
	if (h->temporary) {
		h->sites[b->site].pub.cost.temporary++;
		h->sum.total.temporary++;
	}
	h->last = h->first;
	h->sum.frees++;
	release(h, b, size);
	h->temporary = false;
}

static bool is_profiled(rt_hp *h, rt_trace *t, uint8_t type)
{
	if (h->gate[type] == GATE_ASK)
		h->gate[type] = rt_hp_filter_resource(h->filter, t, type) ? GATE_FEED : GATE_SKIP;
	return h->gate[type] == GATE_FEED;
}

/* Call times are microseconds since midnight: a time more than half a
 * day before the last one is the next day's. Returns the time on a line
 * that does not wrap. */
static inline uint64_t timeline(rt_hp *h, uint64_t us)
{
	const uint64_t day = 86400000000u;
	us += h->day;
	if (h->sum.timed && us + day / 2 < h->sum.last_us) {
		h->day += day;
		us += day;
	}
	if (!h->sum.timed)
		h->sum.first_us = us;
	h->sum.timed = true;
	h->sum.last_us = us;
	h->now_us = us;
	return us;
}

/* Whether c is past the filter's ranges (which closes the profile:
 * every type's gate shuts); *out: an allocation the filter does not
 * select. */
static bool past_filter(rt_hp *h, const rt_trace *t, const rt_call *c, uint64_t now, bool *out)
{
	uint64_t rel = h->sum.timed ? now - h->sum.first_us : 0;
	if (rt_hp_filter_past(h->filter, c, rel)) {
		h->closed = true;
		memset(h->gate, GATE_SKIP, sizeof h->gate);
		return true;
	}
	*out = c->kind == RT_CALL_ALLOC && !rt_hp_filter_alloc(h->filter, t, c, rel);
	return false;
}

/* One call: the type's gate (a byte per type: profiled, not, not known
 * yet) is the only test before the work on most calls. */
static inline __attribute__((always_inline)) void feed_now(rt_hp *h, rt_trace *t, const rt_call *c)
{
	if (h->gate[c->res_type] != GATE_FEED && (h->closed || !is_profiled(h, t, c->res_type)))
		return;
	if (c->kind != RT_CALL_ALLOC && c->kind != RT_CALL_FREE)
		return;
	/* the call's time on the profile's line, passed along rather than a
	 * copy of the call with it (a 56-byte copy per call) */
	uint64_t now = c->flags & RT_CALL_HAS_TIMESTAMP ? timeline(h, c->timestamp_us) : c->timestamp_us;
	if (c->flags & RT_CALL_AFTER_DROP) /* a release left out of the trace came first */
		h->last = h->first;
	bool out = false;
	if (h->filter && past_filter(h, t, c, now, &out))
		return;
	if (c->kind == RT_CALL_ALLOC)
		on_alloc(h, c, now, site_of(h, c->bt), out);
	else
		on_free(h, c);
}

void rt_hp_set_lookahead(rt_hp *h, bool on)
{
	h->lookahead = on;
}

/* One call at once, out of line for the queue's and the batches' uses. */
static __attribute__((noinline)) void feed_one(rt_hp *h, rt_trace *t, const rt_call *c)
{
	feed_now(h, t, c);
}

/* Accounts the queued calls. */
static void drain(rt_hp *h)
{
	for (; h->nq; h->nq--, h->qhead = (h->qhead + 1) % LOOKAHEAD)
		feed_one(h, h->qt, &h->q[h->qhead]);
}

/* The lookahead: c waits while its slot is fetched, the oldest goes. */
static __attribute__((noinline)) void enqueue(rt_hp *h, rt_trace *t, const rt_call *c)
{
	if (h->nq && t != h->qt)
		drain(h);
	__builtin_prefetch(&h->blocks.slots[home(&h->blocks, c->res_id)]);
	if (h->nq == LOOKAHEAD) {
		feed_one(h, t, &h->q[h->qhead]);
		h->qhead = (h->qhead + 1) % LOOKAHEAD;
		h->nq--;
	}
	h->q[(h->qhead + h->nq++) % LOOKAHEAD] = *c;
	h->qt = t;
}

/* The queue and the batches go out of line, so that a call accounted at
 * once (churn: every call) pays for no more than its own work. */
void rt_hp_feed(rt_hp *h, rt_trace *t, const rt_call *c)
{
	if (c->args != RT_NONE)
		rt_trace_release_args(t, c->args);
	/* a table that fits in L2 misses no cache: nothing to hide, and the
	 * queue's copy of each call was a tenth of `rtrace heap` on churn
	 * (256 live blocks); the queue starts once the table grows */
	if (h->lookahead && (h->nq || h->blocks.nslots > SMALL_TABLE))
		enqueue(h, t, c);
	else
		feed_now(h, t, c);
}

/* What the fast path reads and changes on most calls, in locals for a
 * batch: the compiler keeps them in registers, where h's fields were
 * loaded and stored again around every store into a slot or a site
 * (all uint64_t: they may alias for it). Counters only added to stay
 * in h (an add to memory is one instruction). */
typedef struct hot {
	block *slots;
	size_t mask;
	unsigned shift;
	size_t room; /* allocations before the table grows */
	site *sites;
	uint64_t live, epoch;
	uint64_t last_us; /* UINT64_MAX: no timed call yet */
	pair last;
} hot;

static inline __attribute__((always_inline)) void hot_load(const rt_hp *h, hot *v)
{
	*v = (hot){h->blocks.slots, h->blocks.nslots - 1, h->blocks.shift,
		   h->blocks.nslots * 7 / 10 - h->blocks.nlive, h->sites, h->live, h->epoch,
		   h->sum.timed ? h->sum.last_us : UINT64_MAX, h->last};
}

static inline __attribute__((always_inline)) void hot_store(rt_hp *h, const hot *v)
{
	h->blocks.nlive = h->blocks.nslots * 7 / 10 - v->room;
	h->live = v->live;
	h->epoch = v->epoch;
	if (h->sum.timed)
		h->sum.last_us = h->now_us = v->last_us;
	h->last = v->last;
}

/* The table twice as large, for the fast path's next allocation. */
static __attribute__((noinline)) void fast_grow(rt_hp *h, hot *v)
{
	h->blocks.nlive = h->blocks.nslots * 7 / 10 - v->room;
	table_grow(&h->blocks);
	v->slots = h->blocks.slots;
	v->mask = h->blocks.nslots - 1;
	v->shift = h->blocks.shift;
	v->room = h->blocks.nslots * 7 / 10 - h->blocks.nlive;
}

/* The slot of addr's block, or the free one where it would go. */
static inline __attribute__((always_inline)) block *fast_probe(const hot *v, uint64_t addr)
{
	return slots_probe(v->slots, v->mask, v->shift, addr);
}

/* Takes the site's bytes at the latest peak before they change. */
static inline __attribute__((always_inline)) site *fast_touch(hot *v, uint32_t si)
{
	return site_touch(v->sites, v->epoch, si);
}

/* An allocation of the fast path: a new block of a narrow size at free
 * slot b, from site si, at time now. */
static inline __attribute__((always_inline)) void fast_alloc(rt_hp *h, hot *v, const rt_call *c, block *b,
							     uint32_t si, uint64_t now)
{
	uint64_t size = c->size;
	*b = (block){c->res_id, (uint32_t)size, si};
	v->room--;
	v->last = (pair){size, si};
	site *s = fast_touch(v, si);
	s->live += size;
	s->nlive++;
	s->pub.cost.allocations++;
	s->pub.cost.bytes += size;
	h->sum.total.allocations++;
	h->sum.total.bytes += size;
	h->seq++;
	v->live += size;
	if (v->live > h->sum.total.peak) {
		h->sum.total.peak = v->live;
		h->sum.peak_index = c->index;
		h->sum.peak_us = now;
		v->epoch++;
	}
}

/* A release of the fast path: live block b, of a narrow size. */
static inline __attribute__((always_inline)) void fast_free(rt_hp *h, hot *v, block *b)
{
	uint64_t size = b->size;
	uint32_t si = b->site;
	site *s = fast_touch(v, si);
	if (v->last.size == size && v->last.site == si) {
		s->pub.cost.temporary++;
		h->sum.total.temporary++;
	}
	v->last = h->first;
	h->sum.frees++;
	h->seq++;
	s->live -= size;
	s->nlive--;
	v->live -= size;
	v->room++;
	size_t i = (size_t)(b - v->slots);
	if (v->slots[(i + 1) & v->mask].site == EMPTY)
		b->site = EMPTY;
	else
		shift_slots(v->slots, NULL, v->mask, v->shift, i);
}

/* The time of a timed call on the profile's line (timeline's): false
 * when it is the first one (timeline starts the line). */
static inline __attribute__((always_inline)) bool fast_line(rt_hp *h, hot *v, uint64_t *now)
{
	const uint64_t day = 86400000000u;
	*now += h->day;
	if (__builtin_expect(*now + day / 2 < v->last_us, 0)) {
		if (!h->sum.timed)
			return false;
		h->day += day;
		*now += day;
	}
	v->last_us = *now;
	return true;
}

/* The call's time, as timeline and feed_now take it; false when the
 * call is the first timed one. */
static inline __attribute__((always_inline)) bool fast_time(rt_hp *h, hot *v, const rt_call *c, uint64_t *now)
{
	*now = c->timestamp_us;
	if (__builtin_expect(c->flags == RT_CALL_HAS_TIMESTAMP, 1))
		return fast_line(h, v, now);
	if ((c->flags & RT_CALL_HAS_TIMESTAMP) && !h->sum.timed)
		return false;
	if (c->flags & RT_CALL_AFTER_DROP)
		v->last = h->first;
	return !(c->flags & RT_CALL_HAS_TIMESTAMP) || fast_line(h, v, now);
}

/* An allocation of the fast path; false (nothing changed but the
 * table's size) when it is not the common case. */
static inline __attribute__((always_inline)) bool fast_alloc_call(rt_hp *h, hot *v, const rt_call *c)
{
	if (c->size >= WIDE)
		return false;
	if (!v->room)
		fast_grow(h, v);
	block *b = fast_probe(v, c->res_id);
	uint64_t now;
	if (b->site != EMPTY || !fast_time(h, v, c, &now))
		return false;
	uint32_t k = c->bt + 1, si;
	if (k < h->nby_bt && h->by_bt[k])
		si = h->by_bt[k] - 1;
	else {
		si = new_site(h, k, c->bt);
		v->sites = h->sites;
		v->sites[si].pub.first_index = c->index;
	}
	fast_alloc(h, v, c, b, si, now);
	return true;
}

/* One call of the fast path; false when it is not the common case (the
 * first timed call, a type not known yet, a wide size, an allocation
 * at a live block's address): nothing was changed then but the table's
 * size, and the call goes to feed_one whole. */
static inline __attribute__((always_inline)) bool fast_call(rt_hp *h, hot *v, const rt_call *c)
{
	uint8_t g = h->gate[c->res_type];
	if (__builtin_expect(g != GATE_FEED, 0))
		return g == GATE_SKIP;
	if (c->kind == RT_CALL_ALLOC)
		return fast_alloc_call(h, v, c);
	if (c->kind != RT_CALL_FREE)
		return true;
	block *b = fast_probe(v, c->res_id);
	uint64_t now;
	if ((b->site != EMPTY && (b->site >= OUT || b->size == WIDE)) || !fast_time(h, v, c, &now))
		return false;
	if (b->site != EMPTY)
		fast_free(h, v, b);
	return true;
}

/* The batches of a profile with no filter and no listener (`rtrace heap`'s
 * report, --collapsed): the checks for both are left out, the state of
 * the most frequent calls kept in registers (hot); a call that is not
 * the common case goes through feed_one, the state stored before and
 * loaded after. */
static void feed_fast(rt_hp *h, rt_trace *t, const rt_call *calls, size_t n)
{
	const rt_call *c = calls, *end = calls + n;
	for (; c < end && h->first.site == EMPTY; c++) /* heaptrack's pair 0 comes first */
		feed_one(h, t, c);
	hot v;
	hot_load(h, &v);
	for (const rt_call *p = c; p < end && p < c + LOOKAHEAD; p++)
		__builtin_prefetch(&v.slots[hash_home(p->res_id, v.shift)]);
	for (; c < end; c++) {
		const rt_call *ahead = c + LOOKAHEAD < end ? c + LOOKAHEAD : c;
		__builtin_prefetch(&v.slots[hash_home(ahead->res_id, v.shift)]);
		if (c->args != RT_NONE)
			rt_trace_release_args(t, c->args);
		if (!fast_call(h, &v, c)) {
			hot_store(h, &v);
			feed_one(h, t, c);
			hot_load(h, &v);
		}
	}
	hot_store(h, &v);
}

/* A batch needs no queue: call i + LOOKAHEAD's slot is fetched while
 * call i is accounted where it lies (no copy), the calls queued before
 * first. */
void rt_hp_feed_calls(rt_hp *h, rt_trace *t, const rt_call *calls, size_t n)
{
	drain(h);
	if (!h->filter && !h->listen && !h->closed) {
		feed_fast(h, t, calls, n);
		return;
	}
	bool ahead = h->lookahead;
	for (size_t i = 0; ahead && i < n && i < LOOKAHEAD; i++)
		__builtin_prefetch(&h->blocks.slots[home(&h->blocks, calls[i].res_id)]);
	for (size_t i = 0; i < n; i++) {
		if (ahead && i + LOOKAHEAD < n)
			__builtin_prefetch(&h->blocks.slots[home(&h->blocks, calls[i + LOOKAHEAD].res_id)]);
		if (calls[i].args != RT_NONE)
			rt_trace_release_args(t, calls[i].args);
		feed_one(h, t, &calls[i]);
	}
}

/* The lifetime filter's dropped calls (rt_dropped): allocations and
 * releases that were never live at once with much else, counted in the
 * totals; the peak and what leaked are the recorded calls'. */
void rt_hp_add_dropped(rt_hp *h, rt_trace *t)
{
	drain(h);
	for (size_t i = 0, n = rt_trace_dropped_count(t); i < n; i++) {
		const rt_dropped *d = rt_trace_dropped_at(t, i);
		if (d->res_type > RT_MAX_RESOURCES || !rt_hp_filter_resource(h->filter, t, d->res_type) ||
		    (h->filter && !rt_hp_filter_dropped(h->filter, t, d)))
			continue;
		uint32_t si = site_of(h, d->bt); /* may move the sites */
		site *s = &h->sites[si];
		s->pub.cost.allocations += d->count;
		s->pub.cost.bytes += d->bytes;
		s->pub.cost.temporary += d->temporary;
		h->sum.total.allocations += d->count;
		h->sum.total.bytes += d->bytes;
		h->sum.total.temporary += d->temporary;
		h->sum.frees += d->count;
	}
}

/* The block table goes: nothing reads it after the pass, and the
 * resolution that follows in `rtrace heap` is its peak of memory. */
void rt_hp_finish(rt_hp *h)
{
	drain(h);
	h->sum.total.leaked = h->live;
	h->sum.leaked_blocks = h->blocks.nlive - h->nout;
	for (size_t i = 0; i < h->nsites; i++) {
		site *s = touch(h, (uint32_t)i);
		s->pub.cost.leaked = s->live;
	}
	table_free(&h->blocks);
	table_free(&h->wide);
	table_init(&h->blocks, 16, false);
	table_init(&h->wide, 16, true);
}

uint64_t rt_hp_live(const rt_hp *h) { return h->live; }
uint64_t rt_hp_site_live(const rt_hp *h, size_t i) { return h->sites[i].live; }
uint64_t rt_hp_site_live_blocks(const rt_hp *h, size_t i) { return h->sites[i].nlive; }
void rt_hp_set_site_bt(rt_hp *h, size_t i, uint32_t bt) { h->sites[i].pub.bt = bt; }
const rt_hp_summary *rt_hp_get_summary(const rt_hp *h) { return &h->sum; }
size_t rt_hp_site_count(const rt_hp *h) { return h->nsites; }
const rt_hp_site *rt_hp_site_at(const rt_hp *h, size_t i) { return &h->sites[i].pub; }

static const char *const cost_names[] = {"allocations", "temporary", "bytes", "peak", "leaked"};

uint64_t rt_hp_cost_of(const rt_hp_cost *c, rt_hp_cost_type type)
{
	switch (type) {
	case RT_HP_ALLOCATIONS: return c->allocations;
	case RT_HP_TEMPORARY: return c->temporary;
	case RT_HP_BYTES: return c->bytes;
	case RT_HP_PEAK: return c->peak;
	case RT_HP_LEAKED: return c->leaked;
	}
	return 0;
}

void rt_hp_cost_add(rt_hp_cost *to, const rt_hp_cost *c)
{
	to->allocations += c->allocations;
	to->temporary += c->temporary;
	to->bytes += c->bytes;
	to->peak += c->peak;
	to->leaked += c->leaked;
}

bool rt_hp_parse_cost(const char *name, rt_hp_cost_type *type)
{
	for (size_t i = 0; i < sizeof cost_names / sizeof *cost_names; i++)
		if (!strcmp(name, cost_names[i])) {
			*type = (rt_hp_cost_type)i;
			return true;
		}
	return false;
}
