/* Streaming heap profile. One pass over the calls, none of them kept:
 *  - live blocks sit in an open-addressing table keyed by address
 *    (size and allocation site), deleted by backward shift;
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
 * so every figure, is the same. */
#include "rtrace/heapprof.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define EMPTY UINT32_MAX
#define LOOKAHEAD 16 /* calls queued: ~16 calls' work hides a miss to DRAM */
#define SMALL_TABLE 8192 /* slots (256 KB): no lookahead up to this size */

typedef struct block {
	uint64_t addr, size;
	uint64_t born; /* the number of its allocation's event (rt_hp_event.seq) */
	uint32_t site; /* EMPTY: a free slot */
	bool out;      /* left out by the filter: kept for the temporary rule only */
} block;

typedef struct site {
	rt_hp_site pub;
	uint64_t live;  /* bytes allocated here and not freed yet */
	uint64_t nlive; /* blocks allocated here and not freed yet */
	uint64_t epoch; /* the peak epoch pub.cost.peak was taken in */
} site;

typedef struct pair {
	uint64_t size;
	uint32_t site;
	bool valid;
} pair;

struct rt_hp {
	block *blocks;
	size_t nslots, nlive;
	unsigned shift; /* 64 - log2(nslots): home() keeps the product's top bits */
	size_t nout; /* of the live blocks, those the filter left out */
	site *sites;
	size_t nsites, csites;
	uint32_t *by_bt; /* backtrace id + 1 -> site + 1 */
	size_t nby_bt;
	uint64_t live, epoch;
	uint64_t day; /* added to call times: days passed since the first */
	pair last, first;
	uint8_t is_mem[RT_MAX_RESOURCES + 1]; /* 0 unknown, 1 memory, 2 other */
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

void rt_hp_set_filter(rt_hp *h, rt_hp_filter *f)
{
	h->filter = f;
}

void rt_hp_set_listener(rt_hp *h, rt_hp_listener fn, void *ctx)
{
	h->listen = fn;
	h->listen_ctx = ctx;
}

static void tell(rt_hp *h, bool alloc, uint32_t si, uint64_t size, uint64_t born)
{
	uint64_t seq = h->seq++;
	if (!h->listen)
		return;
	rt_hp_event e = {alloc, si, size, h->sum.timed ? h->now_us - h->sum.first_us : 0, seq,
			 alloc ? seq : born, !alloc && h->temporary, h->sum.timed};
	h->listen(h->listen_ctx, &e);
}

/* Slots for n blocks. A table of 2 MB or more is put in huge pages
 * where the kernel gives them on request: each call touches a random
 * slot, and with 4 KB pages each was also a TLB miss (python3: 8 MB of
 * slots, 2048 pages; perf put half of rt_hp_feed's samples on the
 * instruction after the lookahead's prefetch). */
static block *alloc_slots(size_t n)
{
	const size_t huge = 2u << 20;
	size_t bytes = n * sizeof(block);
	void *p = NULL;
	if (bytes < huge || posix_memalign(&p, huge, bytes))
		return rt_xmalloc(bytes);
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

/* A block table of n free slots. */
static void new_slots(rt_hp *h, size_t n)
{
	h->nslots = n;
	h->shift = 64 - (unsigned)__builtin_ctzll(n);
	h->blocks = alloc_slots(n);
	for (size_t i = 0; i < n; i++)
		h->blocks[i].site = EMPTY;
}

rt_hp *rt_hp_new(void)
{
	rt_hp *h = rt_xcalloc(1, sizeof *h);
	new_slots(h, 1024);
	return h;
}

void rt_hp_free(rt_hp *h)
{
	if (!h)
		return;
	free(h->blocks);
	free(h->sites);
	free(h->by_bt);
	free(h);
}

/* Fibonacci hashing: one multiplication, the top bits. Addresses are
 * 16-aligned and dense; the product's top bits spread them (Knuth's
 * multiplicative hashing) at a third of rt_mix64's latency (two
 * multiplications, three shifts), which is on the path to the slot's
 * load: the table's cache miss is the cost of a call (python3: over
 * 100k live blocks, 8 MB of slots, past L2). */
static size_t home(const rt_hp *h, uint64_t addr)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> h->shift);
}

/* The block at addr, or the free slot where it would go. */
static block *probe(const rt_hp *h, uint64_t addr)
{
	for (size_t i = home(h, addr);; i = (i + 1) & (h->nslots - 1)) {
		block *b = &h->blocks[i];
		if (b->site == EMPTY || b->addr == addr)
			return b;
	}
}

static void grow_blocks(rt_hp *h)
{
	block *old = h->blocks;
	size_t nold = h->nslots;
	new_slots(h, nold * 2);
	for (size_t i = 0; i < nold; i++)
		if (old[i].site != EMPTY)
			*probe(h, old[i].addr) = old[i];
	free(old);
}

/* Linear-probing deletion by backward shift: no tombstones. */
static void erase(rt_hp *h, block *b)
{
	size_t mask = h->nslots - 1, i = (size_t)(b - h->blocks);
	for (size_t j = (i + 1) & mask; h->blocks[j].site != EMPTY; j = (j + 1) & mask) {
		size_t k = home(h, h->blocks[j].addr);
		if (((j - k) & mask) >= ((j - i) & mask)) {
			h->blocks[i] = h->blocks[j];
			i = j;
		}
	}
	h->blocks[i].site = EMPTY;
	h->nlive--;
}

static uint32_t site_of(rt_hp *h, uint32_t bt)
{
	size_t k = bt == RT_NONE ? 0 : (size_t)bt + 1;
	if (k >= h->nby_bt) {
		size_t n = h->nby_bt ? h->nby_bt : 256;
		while (n <= k)
			n *= 2;
		h->by_bt = rt_xrealloc(h->by_bt, n * sizeof *h->by_bt);
		memset(h->by_bt + h->nby_bt, 0, (n - h->nby_bt) * sizeof *h->by_bt);
		h->nby_bt = n;
	}
	if (!h->by_bt[k]) {
		if (h->nsites == h->csites) {
			h->csites = h->csites ? h->csites * 2 : 256;
			h->sites = rt_xrealloc(h->sites, h->csites * sizeof *h->sites);
		}
		h->sites[h->nsites] = (site){{bt, 0, {0}}, 0, 0, 0};
		h->by_bt[k] = (uint32_t)++h->nsites;
	}
	return h->by_bt[k] - 1;
}

/* Takes the site's bytes at the latest peak before they change. */
static site *touch(rt_hp *h, uint32_t i)
{
	site *s = &h->sites[i];
	if (s->epoch != h->epoch) {
		s->pub.cost.peak = s->live;
		s->epoch = h->epoch;
	}
	return s;
}

static void release(rt_hp *h, block *b)
{
	site *s = touch(h, b->site);
	tell(h, false, b->site, b->size, b->born);
	s->live -= b->size;
	s->nlive--;
	h->live -= b->size;
	erase(h, b);
}

/* A block the filter left out goes without a trace in the costs. */
static void forget(rt_hp *h, block *b)
{
	h->nout--;
	erase(h, b);
}

/* An allocation; `out`: left out by the filter, yet kept so that the
 * temporary rule sees the program's whole sequence of calls, as
 * heaptrack_print's --filter-bt-function does. */
static void on_alloc(rt_hp *h, const rt_call *c, uint64_t now, uint32_t si, bool out)
{
	if ((h->nlive + 1) * 10 > h->nslots * 7)
		grow_blocks(h);
	block *b = probe(h, c->res_id);
	if (b->site != EMPTY) { /* its release was not recorded */
		if (b->out)
			forget(h, b);
		else
			release(h, b);
		b = probe(h, c->res_id);
	}
	*b = (block){c->res_id, c->size, h->seq, si, out};
	h->nlive++;
	h->last = (pair){c->size, si, true};
	if (!h->first.valid)
		h->first = h->last;
	if (!h->sites[si].pub.cost.allocations)
		h->sites[si].pub.first_index = c->index;
	if (out) {
		h->nout++;
		return;
	}
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
	tell(h, true, si, c->size, 0);
}

static void on_free(rt_hp *h, const rt_call *c)
{
	block *b = probe(h, c->res_id);
	if (b->site == EMPTY)
		return;
	if (b->out) {
		h->last = h->first;
		forget(h, b);
		return;
	}
	h->temporary = h->last.valid && h->last.size == b->size && h->last.site == b->site;
	if (h->temporary) {
		h->sites[b->site].pub.cost.temporary++;
		h->sum.total.temporary++;
	}
	h->last = h->first;
	h->sum.frees++;
	release(h, b);
	h->temporary = false;
}

static bool is_profiled(rt_hp *h, rt_trace *t, uint8_t type)
{
	if (!h->is_mem[type])
		h->is_mem[type] = rt_hp_filter_resource(h->filter, t, type) ? 1 : 2;
	return h->is_mem[type] == 1;
}

/* Call times are microseconds since midnight: a time more than half a
 * day before the last one is the next day's. Returns the time on a line
 * that does not wrap. */
static uint64_t timeline(rt_hp *h, uint64_t us)
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

/* Whether c is past the filter's ranges (which closes the profile);
 * *out: an allocation the filter does not select. */
static bool past_filter(rt_hp *h, const rt_trace *t, const rt_call *c, uint64_t now, bool *out)
{
	uint64_t rel = h->sum.timed ? now - h->sum.first_us : 0;
	if (rt_hp_filter_past(h->filter, c, rel)) {
		h->closed = true;
		return true;
	}
	*out = c->kind == RT_CALL_ALLOC && !rt_hp_filter_alloc(h->filter, t, c, rel);
	return false;
}

static void feed_now(rt_hp *h, rt_trace *t, const rt_call *c)
{
	if (h->closed || c->kind == RT_CALL_DEAD || c->res_type > RT_MAX_RESOURCES || !is_profiled(h, t, c->res_type))
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

/* Accounts the queued calls. */
static void drain(rt_hp *h)
{
	for (; h->nq; h->nq--, h->qhead = (h->qhead + 1) % LOOKAHEAD)
		feed_now(h, h->qt, &h->q[h->qhead]);
}

void rt_hp_feed(rt_hp *h, rt_trace *t, const rt_call *c)
{
	if (c->args != RT_NONE)
		rt_trace_release_args(t, c->args);
	/* a table that fits in L2 misses no cache: nothing to hide, and the
	 * queue's copy of each call was a tenth of `rtrace heap` on churn
	 * (256 live blocks); the queue starts once the table grows */
	if (!h->lookahead || (!h->nq && h->nslots <= SMALL_TABLE)) {
		feed_now(h, t, c);
		return;
	}
	if (h->nq && t != h->qt)
		drain(h);
	__builtin_prefetch(&h->blocks[home(h, c->res_id)]);
	if (h->nq == LOOKAHEAD) {
		feed_now(h, t, &h->q[h->qhead]);
		h->qhead = (h->qhead + 1) % LOOKAHEAD;
		h->nq--;
	}
	h->q[(h->qhead + h->nq++) % LOOKAHEAD] = *c;
	h->qt = t;
}

/* The lifetime filter's dropped calls (rt_dropped): allocations and
 * releases that were never live at once with much else, counted in the
 * totals; the peak and what leaked are the recorded calls'. */
void rt_hp_add_dropped(rt_hp *h, rt_trace *t)
{
	drain(h);
	for (size_t i = 0, n = rt_trace_dropped_count(t); i < n; i++) {
		const rt_dropped *d = rt_trace_dropped_at(t, i);
		if (!is_profiled(h, t, d->res_type) || (h->filter && !rt_hp_filter_dropped(h->filter, t, d)))
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

void rt_hp_finish(rt_hp *h)
{
	drain(h);
	h->sum.total.leaked = h->live;
	h->sum.leaked_blocks = h->nlive - h->nout;
	for (size_t i = 0; i < h->nsites; i++) {
		site *s = touch(h, (uint32_t)i);
		s->pub.cost.leaked = s->live;
	}
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
