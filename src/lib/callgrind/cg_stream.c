/* The allocation profile's pass over a trace's calls, streaming: each
 * call is accounted as the reader hands it over and none is kept, so
 * memory follows the distinct backtraces and the blocks live at each
 * moment, not the trace's length (python3 at 16M allocations: 2.36 GB
 * when every call was loaded into the model first, see bench/README.md,
 * "Allocation profiles").
 *
 * Per backtrace (by its id, as read) and resource type key (0: memory),
 * costs: allocation calls, their sizes, what is still allocated at the
 * end, and for memory the heap profile's temporary allocations and bytes
 * live at the peak. Memory's blocks are the heap profile's (rt_hp: its
 * leaked blocks and bytes, temporary, peak, the figures `rtrace heap`
 * prints; an address allocated again without a release releases the
 * first block, as heaptrack's interpreter does); other types' postproc's
 * leak filter (rt_leaks, into a scratch trace: refcount resources
 * counted, an id allocated again without a release leaves the first
 * allocation unfreed). Memory's costs are the heap profile's sites',
 * which count its allocation calls and bytes too: the pass keeps records
 * only for other types, the trace's dropped allocations, and memory's
 * calls where the sites' byte sums could wrap (go_own). On every call it
 * tests one bit, its backtrace's first sight, and sums memory's bytes
 * (python3, 16.6M calls: a 56-byte record per backtrace touched on each
 * allocation and a 24-byte one on each call were 11% of the samples of
 * the reading thread, and 9.7 MB; see bench/README.md).
 *
 * The backtraces are resolved after the pass: cg_stream_end appends one
 * call per backtrace with a cost, in the order their first calls came
 * (so the resolver interns the resolved backtraces in the order it would
 * have over every call, and the profile is the same file), and
 * cg_stream_profile reads the ids those calls were rewritten to. */
#include "callgrind/cg_trace.h"
#include "rtrace/filter.h"
#include "rtrace/heapcheck.h"
#include "rtrace/heapprof.h"

#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX

/* Costs of a (backtrace, key) the heap profile does not hold: other
 * types', the trace's dropped allocations, memory's own counts once the
 * pass counts them itself (see go_own). */
typedef struct rec {
	uint64_t v[CG_EV_N];
	uint32_t next; /* the backtrace's next record (another key), or NONE32 */
	uint32_t k;    /* backtrace id + 1 (0: calls without one) */
	uint8_t key;
} rec;

/* A backtrace's first call (index), in the order first seen. */
typedef struct sight {
	uint64_t first;
	uint32_t k;
} sight;

/* gate[res_type]: whether the heap profile takes the type's calls, as
 * its own gate decides it (once, at the type's first call) */
enum { GATE_ASK = 0, GATE_HP, GATE_OWN };

struct cg_stream {
	uint64_t *seen; /* a bit per backtrace id + 1: first call seen */
	size_t nseen;   /* words */
	sight *sights;  /* each backtrace's first call */
	size_t nsights, csights;
	uint32_t *rhead; /* by backtrace id + 1: its first record, or NONE32 */
	size_t nrhead;
	rec *recs;
	size_t nrecs, crecs;
	rt_trace *live; /* other types' live allocations (rt_leaks) */
	rt_leaks *leaks;
	rt_hp *hp;
	uint8_t gate[RT_MAX_RESOURCES + 1];
	uint8_t key_of[RT_MAX_RESOURCES + 1]; /* type -> key + 1; 0: not known yet */
	bool in_hp[RT_MAX_RESOURCES + 1];     /* the type's blocks are rt_hp's */
	/* memory's allocation calls and bytes are the heap profile's sites'
	 * (which count them too) until own: then the records' (go_own) */
	bool own;
	uint64_t hp_bytes; /* bytes of the allocations the heap profile counts */
	cg_usage u;
	uint32_t *proxy; /* cg_stream_end: by backtrace id + 1, its call after base */
	size_t nproxy_slots;
	size_t base, nproxies; /* cg_stream_end's calls in t: [base, base + nproxies) */
	bool proxied;
	bool merged; /* the heap profile's costs went into the records */
	cg_site_cost *sites; /* take_costs: the costs, by k until ids_now */
	size_t nsites;
	/* cg_stream_end's look at the stacks the resolver walks, in its
	 * order (the calls', then the leak records'): each one's frames
	 * without a text then (stack_order) */
	uint32_t *pre_bare;
	size_t npre;
	uint32_t pre_nbt;
	bool ended;
};

cg_stream *cg_stream_new(void)
{
	cg_stream *s = rt_xcalloc(1, sizeof *s);
	s->live = rt_trace_new();
	s->leaks = rt_leaks_new();
	s->hp = rt_hp_new();
	rt_hp_set_lookahead(s->hp, true); /* read once finished */
	return s;
}

void cg_stream_free(cg_stream *s)
{
	if (!s)
		return;
	free(s->seen);
	free(s->sights);
	free(s->rhead);
	free(s->recs);
	free(s->proxy);
	free(s->pre_bare);
	free(s->sites);
	rt_leaks_free(s->leaks);
	rt_trace_free(s->live);
	rt_hp_free(s->hp);
	free(s);
}

/* --- per backtrace --- */

static inline uint32_t k_of(uint32_t bt)
{
	return bt == RT_NONE ? 0 : bt + 1;
}

static uint32_t bt_of_k(uint32_t k)
{
	return k ? k - 1 : RT_NONE;
}

/* A dense array of *n entries of `size` bytes, grown to hold index k,
 * the new entries set to byte `fill`. */
static void *dense(void *a, size_t *n, size_t k, size_t size, int fill)
{
	if (k < *n)
		return a;
	size_t m = *n ? *n : 256;
	while (m <= k)
		m *= 2;
	a = rt_xrealloc(a, m * size);
	memset((char *)a + *n * size, fill, (m - *n) * size);
	*n = m;
	return a;
}

static uint64_t *costs(cg_stream *s, uint32_t bt, uint8_t key)
{
	uint32_t k = k_of(bt);
	s->rhead = dense(s->rhead, &s->nrhead, k, sizeof *s->rhead, 0xff);
	uint32_t *link = &s->rhead[k];
	for (; *link != NONE32; link = &s->recs[*link].next)
		if (s->recs[*link].key == key)
			return s->recs[*link].v;
	rec r = {{0}, NONE32, k, key};
	RT_PUSH(s->recs, s->nrecs, s->crecs, r);
	*link = (uint32_t)(s->nrecs - 1);
	return s->recs[s->nrecs - 1].v;
}

/* The first call of backtrace k, at index: kept in the order seen. A
 * bit per backtrace is the test on every call (python3: 131k ids, 16
 * KB of bits, where a 24-byte record per id was 3 MB of cache misses). */
static __attribute__((noinline)) void first_sight(cg_stream *s, uint32_t k, uint64_t index)
{
	s->seen = dense(s->seen, &s->nseen, k / 64, sizeof *s->seen, 0);
	s->seen[k / 64] |= 1ull << (k % 64);
	sight x = {index, k};
	RT_PUSH(s->sights, s->nsights, s->csights, x);
}

static inline void saw(cg_stream *s, const rt_call *c)
{
	uint32_t k = k_of(c->bt);
	if (k / 64 >= s->nseen || !(s->seen[k / 64] >> (k % 64) & 1))
		first_sight(s, k, c->index);
}

/* Memory (untyped calls, a type without a declaration, "memory") is key
 * 0; each other type its own. */
static uint8_t key_of(cg_stream *s, const rt_trace *t, uint8_t type)
{
	if (s->key_of[type])
		return s->key_of[type] - 1;
	const rt_resource *r = type ? rt_trace_resource_get(t, type) : NULL;
	uint8_t k = !r || !strcmp(r->type, "memory") ? 0 : type;
	if (r || !type) {
		s->key_of[type] = (uint8_t)(k + 1);
		s->in_hp[type] = !type || rt_trace_res_is(t, type, "memory");
	}
	return k;
}

/* Whether the heap profile takes calls of the type: its gate's answer,
 * asked at the same call (the type's first), so the same. */
static inline bool hp_takes(cg_stream *s, const rt_trace *t, uint8_t type)
{
	if (s->gate[type] == GATE_ASK)
		s->gate[type] = rt_hp_filter_resource(NULL, t, type) ? GATE_HP : GATE_OWN;
	return s->gate[type] == GATE_HP;
}

/* --- live resources of other types: rt_leaks's --- */

/* The scratch trace's resources are t's, in the same slots. */
static void sync_resources(cg_stream *s, const rt_trace *t)
{
	for (size_t i = rt_trace_resource_count(s->live); i < rt_trace_resource_count(t); i++) {
		const rt_resource *r = rt_trace_resource_get(t, (uint8_t)(i + 1));
		rt_trace_add_resource(s->live, r->mask, r->type, r->desc, r->flags);
	}
}

static void unfreed(cg_stream *s, uint32_t bt, uint8_t key, uint64_t size)
{
	uint64_t *v = costs(s, bt, key);
	s->u.saturated |= !cg_sat_add(&v[CG_EV_UNFREED], 1);
	s->u.saturated |= !cg_sat_add(&v[CG_EV_UNFREED_SIZE], size);
}

static void track(cg_stream *s, const rt_trace *t, const rt_call *c)
{
	sync_resources(s, t);
	rt_call k = *c;
	k.args = RT_NONE; /* the caller's */
	rt_leaks_feed(s->leaks, s->live, &k);
}

/* --- the pass --- */

static void count_alloc(cg_stream *s, const rt_call *c, uint8_t key)
{
	uint64_t *v = costs(s, c->bt, key);
	s->u.saturated |= !cg_sat_add(&v[CG_EV_ALLOCS], 1);
	s->u.saturated |= !cg_sat_add(&v[CG_EV_SIZE], c->size);
	s->u.used[key] = true;
	s->u.sized[key] |= c->size != 1;
}

/* From now on memory's allocation calls and bytes are counted here, in
 * the records, starting from the heap profile's sites' counts so far
 * (it has accounted every call it was given: a batch drains its queue).
 * For the calls fed one at a time (their profile lags behind) and where
 * the heap profile's byte sums could wrap, which the records' hold at
 * 2^64-1. */
static void go_own(cg_stream *s, rt_trace *t)
{
	if (s->own)
		return;
	s->own = true;
	rt_hp_feed_calls(s->hp, t, NULL, 0);
	for (size_t i = 0; i < rt_hp_site_count(s->hp); i++) {
		const rt_hp_site *h = rt_hp_site_at(s->hp, i);
		uint64_t *v = costs(s, h->bt, 0);
		s->u.saturated |= !cg_sat_add(&v[CG_EV_ALLOCS], h->cost.allocations);
		s->u.saturated |= !cg_sat_add(&v[CG_EV_SIZE], h->cost.bytes);
	}
}

/* True when c went to the heap profile, which released its arguments. */
static bool feed(cg_stream *s, rt_trace *t, const rt_call *c)
{
	go_own(s, t);
	if (c->kind == RT_CALL_DEAD || c->res_type > RT_MAX_RESOURCES)
		return false;
	saw(s, c);
	uint8_t key = key_of(s, t, c->res_type);
	if (c->kind == RT_CALL_ALLOC)
		count_alloc(s, c, key);
	if (!s->in_hp[c->res_type]) {
		track(s, t, c);
		return false;
	}
	rt_hp_feed(s->hp, t, c); /* not a copy without arguments: 56 bytes a call */
	return true;
}

void cg_stream_feed(void *ctx, rt_trace *t, const rt_call *c)
{
	cg_stream *s = ctx;
	if (!feed(s, t, c) && c->args != RT_NONE)
		rt_trace_release_args(t, c->args);
}

/* An allocation the heap profile counts: its bytes summed, so that the
 * sites' sums are known not to wrap (false: they could, the records
 * count from now on). */
static inline bool hp_counts(cg_stream *s, const rt_call *c)
{
	s->u.used[0] = true;
	return !__builtin_add_overflow(s->hp_bytes, c->size, &s->hp_bytes) && s->hp_bytes != UINT64_MAX;
}

/* go_own in the middle of a batch, before the heap profile had it: the
 * allocations of calls[0 .. n) it was to count are counted here. */
static void own_from(cg_stream *s, rt_trace *t, const rt_call *calls, size_t n)
{
	go_own(s, t);
	for (size_t i = 0; i < n; i++)
		if (calls[i].kind == RT_CALL_ALLOC && calls[i].res_type <= RT_MAX_RESOURCES &&
		    s->gate[calls[i].res_type] == GATE_HP)
			count_alloc(s, &calls[i], 0);
}

/* The batch's own accounting first, then the whole batch to the heap
 * profile (rt_hp_feed_calls: its loop for batches, which fetches the
 * blocks of the calls ahead and releases every call's arguments; it
 * skips the calls feed() does not give it, by their type's gate and
 * their kind). A call at a time, the profile queued each call for its
 * lookahead: python3's 16.6M calls, 2.3 s -> see bench/README.md,
 * "Allocation profiles". The calls the heap profile counts are not
 * counted again here: its sites' allocations and bytes are memory's
 * (a record per call's backtrace was a cache miss a call, and 6.6 MB). */
void cg_stream_feed_calls(void *ctx, rt_trace *t, const rt_call *calls, size_t n)
{
	cg_stream *s = ctx;
	for (size_t i = 0; i < n; i++) {
		const rt_call *c = &calls[i];
		if (c->res_type > RT_MAX_RESOURCES)
			continue;
		bool hp = hp_takes(s, t, c->res_type); /* asked where rt_hp asks */
		if (c->kind == RT_CALL_DEAD)
			continue;
		saw(s, c);
		if (hp && !s->own && (c->kind != RT_CALL_ALLOC || hp_counts(s, c)))
			continue;
		if (hp && !s->own)
			own_from(s, t, calls, i);
		uint8_t key = key_of(s, t, c->res_type);
		if (c->kind == RT_CALL_ALLOC)
			count_alloc(s, c, key);
		if (!s->in_hp[c->res_type])
			track(s, t, c);
	}
	rt_hp_feed_calls(s->hp, t, calls, n);
}

/* The allocations the tracer's lifetime filter left out of the trace
 * (rt_dropped, counted per stack): into their stacks' records, so that
 * allocation, byte and temporary totals are the unfiltered run's. */
static void add_dropped(cg_stream *s, const rt_trace *t)
{
	for (size_t i = 0, n = rt_trace_dropped_count(t); i < n; i++) {
		const rt_dropped *d = rt_trace_dropped_at(t, i);
		if (d->res_type > RT_MAX_RESOURCES)
			continue;
		sight x = {d->index, k_of(d->bt)};
		RT_PUSH(s->sights, s->nsights, s->csights, x); /* the earliest counts */
		uint8_t key = key_of(s, t, d->res_type);
		uint64_t *v = costs(s, d->bt, key);
		s->u.saturated |= !cg_sat_add(&v[CG_EV_ALLOCS], d->count);
		s->u.saturated |= !cg_sat_add(&v[CG_EV_SIZE], d->bytes);
		s->u.saturated |= !cg_sat_add(&v[CG_EV_TEMPORARY], d->temporary);
		s->u.used[key] = true;
		s->u.sized[key] |= d->bytes != d->count;
	}
}

/* Whether the heap profile's sites and memory's records may stay
 * apart, the profile builder adding them up: when no sum of theirs can
 * reach 2^64-1 (a crafted trace's sizes), where the records' would have
 * been held and the sites' wrapped. */
static bool apart(const cg_stream *s)
{
	uint64_t bytes = s->hp_bytes, calls = rt_hp_get_summary(s->hp)->total.allocations;
	for (size_t i = 0; i < s->nrecs; i++)
		if (!s->recs[i].key && (__builtin_add_overflow(bytes, s->recs[i].v[CG_EV_SIZE], &bytes) ||
					__builtin_add_overflow(calls, s->recs[i].v[CG_EV_ALLOCS], &calls)))
			return false;
	return !s->own && bytes != UINT64_MAX && calls != UINT64_MAX;
}

/* A heap profile's site into memory's record of its backtrace: its
 * calls and bytes when the records do not count them, its temporary
 * allocations, peak bytes and what it leaves live. */
static void merge_site(cg_stream *s, size_t i)
{
	const rt_hp_site *h = rt_hp_site_at(s->hp, i);
	uint64_t blocks = rt_hp_site_live_blocks(s->hp, i);
	uint64_t *v = costs(s, h->bt, 0);
	if (!s->own) {
		s->u.saturated |= !cg_sat_add(&v[CG_EV_ALLOCS], h->cost.allocations);
		s->u.saturated |= !cg_sat_add(&v[CG_EV_SIZE], h->cost.bytes);
	}
	/* rt_hp's byte sums wrap: where the site's allocated bytes were
	 * held at 2^64-1, its live bytes are held there too */
	bool held = v[CG_EV_SIZE] == UINT64_MAX;
	s->u.saturated |= !cg_sat_add(&v[CG_EV_TEMPORARY], h->cost.temporary);
	s->u.saturated |= !cg_sat_add(&v[CG_EV_PEAK], held && h->cost.peak ? UINT64_MAX : h->cost.peak);
	s->u.saturated |= !cg_sat_add(&v[CG_EV_UNFREED], blocks);
	s->u.saturated |= !cg_sat_add(&v[CG_EV_UNFREED_SIZE], held && blocks ? UINT64_MAX : h->cost.leaked);
}

/* The heap profile's temporary allocations and peak bytes, what is still
 * live and what the trace left out: once. The heap profile's sites stay
 * apart from the records where they can (site_costs reads them), else
 * go into them. */
static void close_pass(cg_stream *s, const rt_trace *t)
{
	if (s->ended)
		return;
	s->ended = true;
	add_dropped(s, t);
	rt_hp_finish(s->hp);
	s->merged = !apart(s);
	for (size_t i = 0; s->merged && i < rt_hp_site_count(s->hp); i++)
		merge_site(s, i);
	rt_leaks_finish(s->leaks, s->live);
	const rt_call *c = rt_trace_calls_const(s->live);
	for (size_t i = 0, n = rt_trace_call_count(s->live); i < n; i++)
		if (c[i].kind == RT_CALL_ALLOC)
			unfreed(s, c[i].bt, s->key_of[c[i].res_type] ? s->key_of[c[i].res_type] - 1 : 0, c[i].size);
}

/* A stack and what orders it (ties by id): its first call's index
 * (by_first), or stack_order's rank. */
typedef struct first_key {
	uint64_t first;
	uint32_t k;
} first_key;

static int first_cmp(const void *a, const void *b)
{
	const first_key *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* Frames of bt without a text (none resolved yet). */
static uint32_t bare_frames(const rt_trace *t, uint32_t bt)
{
	if (bt == RT_NONE || bt >= rt_trace_bt_count(t))
		return 0;
	rt_bt_iter it;
	rt_frame f;
	uint32_t n = 0;
	rt_trace_bt_iter(t, bt, &it);
	while (rt_trace_bt_next(&it, &f))
		n += f.text == RT_NONE;
	return n;
}

/* The stack of the j-th place the resolver walks, calls then leaks. */
static uint32_t walked_bt(const rt_trace *t, size_t j)
{
	size_t nc = rt_trace_call_count(t);
	return j < nc ? rt_trace_calls_const(t)[j].bt : rt_trace_leak_at(t, j - nc)->bt;
}

static void look_before(cg_stream *s, const rt_trace *t)
{
	free(s->pre_bare);
	s->npre = rt_trace_call_count(t) + rt_trace_leak_count(t);
	s->pre_nbt = rt_trace_bt_count(t);
	s->pre_bare = rt_xmalloc((s->npre ? s->npre : 1) * sizeof *s->pre_bare);
	for (size_t j = 0; j < s->npre; j++)
		s->pre_bare[j] = bare_frames(t, walked_bt(t, j));
}

/* Backtrace k (with costs) on the list v of those, once (proxy marks). */
static void list_bt(cg_stream *s, first_key *v, size_t *n, const uint64_t *first, size_t nfirst, uint32_t k)
{
	s->proxy = dense(s->proxy, &s->nproxy_slots, k, sizeof *s->proxy, 0xff);
	if (s->proxy[k] != NONE32)
		return;
	s->proxy[k] = 0;
	v[(*n)++] = (first_key){k < nfirst ? first[k] : UINT64_MAX, k};
}

/* The backtraces with costs (the heap profile's sites', the records'),
 * by their first call. */
static first_key *by_first(cg_stream *s, size_t *n)
{
	size_t nfirst = 0;
	uint64_t *first = NULL;
	for (size_t i = 0; i < s->nsights; i++) {
		first = dense(first, &nfirst, s->sights[i].k, sizeof *first, 0xff);
		if (s->sights[i].first < first[s->sights[i].k])
			first[s->sights[i].k] = s->sights[i].first;
	}
	size_t nh = rt_hp_site_count(s->hp);
	first_key *v = rt_xmalloc((nh + s->nrecs + 1) * sizeof *v);
	*n = 0;
	for (size_t i = 0; i < nh; i++)
		list_bt(s, v, n, first, nfirst, k_of(rt_hp_site_at(s->hp, i)->bt));
	for (size_t i = 0; i < s->nrecs; i++)
		list_bt(s, v, n, first, nfirst, s->recs[i].k);
	free(first);
	qsort(v, *n, sizeof *v, first_cmp);
	return v;
}

/* The heap profile's sites (unless merged) and the records as site
 * costs, each under its backtrace's k (id + 1 as read). */
static cg_site_cost *site_costs(const cg_stream *s, size_t *n)
{
	size_t m = 0, nh = s->merged || !s->hp ? 0 : rt_hp_site_count(s->hp);
	cg_site_cost *v = rt_xmalloc((nh + s->nrecs + 1) * sizeof *v);
	for (size_t i = 0; i < nh; i++) {
		const rt_hp_site *h = rt_hp_site_at(s->hp, i);
		v[m].bt = k_of(h->bt);
		v[m].key = 0;
		v[m].v[CG_EV_ALLOCS] = h->cost.allocations;
		v[m].v[CG_EV_SIZE] = h->cost.bytes;
		v[m].v[CG_EV_UNFREED] = rt_hp_site_live_blocks(s->hp, i);
		v[m].v[CG_EV_UNFREED_SIZE] = h->cost.leaked;
		v[m].v[CG_EV_TEMPORARY] = h->cost.temporary;
		v[m].v[CG_EV_PEAK] = h->cost.peak;
		m++;
	}
	for (size_t r = 0; r < s->nrecs; r++) {
		v[m].bt = s->recs[r].k;
		v[m].key = s->recs[r].key;
		memcpy(v[m].v, s->recs[r].v, sizeof v[m].v);
		m++;
	}
	*n = m;
	return v;
}

/* The costs taken out of the heap profile and the records, which go:
 * the resolution and the profile builder that follow are the command's
 * peak of memory once the block table is gone (python3: the sites, 10.5
 * MB with their index, against 5.6 MB of costs). */
static void take_costs(cg_stream *s)
{
	s->sites = site_costs(s, &s->nsites);
	rt_hp_free(s->hp);
	s->hp = NULL;
	free(s->recs);
	free(s->rhead);
	s->recs = NULL;
	s->rhead = NULL;
	s->nrecs = s->crecs = s->nrhead = 0;
}

void cg_stream_end(cg_stream *s, rt_trace *t)
{
	close_pass(s, t);
	size_t n;
	first_key *v = by_first(s, &n);
	s->base = rt_trace_call_count(t);
	s->nproxies = n;
	s->proxied = true;
	for (size_t i = 0; i < n; i++) {
		uint32_t k = v[i].k;
		s->proxy[k] = (uint32_t)i;
		rt_call c = {.index = v[i].first, .bt = bt_of_k(k), .fn = RT_NONE, .args = RT_NONE,
			     .kind = RT_CALL_ALLOC};
		rt_trace_append_call(t, &c);
	}
	free(v);
	free(s->sights);
	free(s->seen);
	s->sights = NULL;
	s->seen = NULL;
	s->nsights = s->csights = s->nseen = 0;
	take_costs(s);
	look_before(s, t);
}

/* The site costs' backtraces, k so far, as ids of t now: those
 * cg_stream_end's calls were rewritten to, else the ids as read. */
static void ids_now(const cg_stream *s, const rt_trace *t, cg_site_cost *v, size_t n)
{
	bool mapped = s->proxied && rt_trace_call_count(t) >= s->base + s->nproxies;
	const rt_call *calls = rt_trace_calls_const(t);
	for (size_t i = 0; i < n; i++)
		v[i].bt = mapped ? calls[s->base + s->proxy[v[i].bt]].bt : bt_of_k(v[i].bt);
}

/* The order the profile takes the stacks in: their ids, as a resolver
 * that interns a resolved copy of each stack leaves them (the order
 * names are numbered and functions written in). Resolved in place, ids
 * stay as read, so that order is worked out: a stack the resolver gave
 * a text to ranks after every stack read, by the first place the
 * resolver walked it at (where its copy's id would have come from); one
 * it left as it was, by its id. The profile is the same file either
 * way, without the copy (python3: 122 -> 88 MB peak). NULL: the walk
 * is not the one cg_stream_end looked at. */
static uint32_t *stack_order(const cg_stream *s, const rt_trace *t)
{
	if (rt_trace_call_count(t) + rt_trace_leak_count(t) != s->npre)
		return NULL;
	uint32_t nbt = rt_trace_bt_count(t);
	first_key *k = rt_xmalloc(((size_t)nbt + 1) * sizeof *k); /* first: the rank */
	for (uint32_t i = 0; i < nbt; i++)
		k[i] = (first_key){UINT64_MAX, i};
	for (size_t j = 0; j < s->npre; j++) {
		uint32_t r = walked_bt(t, j);
		if (r == RT_NONE || r >= nbt)
			continue;
		uint64_t v = bare_frames(t, r) < s->pre_bare[j] ? (uint64_t)s->pre_nbt + j : r;
		if (v < k[r].first)
			k[r].first = v;
	}
	for (uint32_t i = 0; i < nbt; i++)
		if (k[i].first == UINT64_MAX) /* not walked: by id */
			k[i].first = i;
	qsort(k, nbt, sizeof *k, first_cmp);
	uint32_t *order = rt_xmalloc(((size_t)nbt + 1) * sizeof *order);
	for (uint32_t i = 0; i < nbt; i++)
		order[i] = k[i].k;
	order[nbt] = RT_NONE; /* calls without a stack: last, as by id */
	free(k);
	return order;
}

cg_profile *cg_stream_profile(cg_stream *s, rt_trace *t, const cg_trace_opts *opts)
{
	close_pass(s, t);
	if (!s->sites)
		take_costs(s);
	ids_now(s, t, s->sites, s->nsites);
	uint32_t *order = s->proxied ? stack_order(s, t) : NULL;
	free(s->pre_bare);
	s->pre_bare = NULL;
	s->npre = 0;
	cg_profile *p = cg_profile_build(t, opts, s->sites, s->nsites, &s->u, order);
	free(order);
	free(s->sites);
	s->sites = NULL;
	return p;
}

cg_profile *cg_profile_from_trace(rt_trace *t, const cg_trace_opts *opts)
{
	cg_stream *s = cg_stream_new();
	const rt_call *c = rt_trace_calls_const(t);
	for (size_t i = 0, n = rt_trace_call_count(t); i < n; i++)
		feed(s, t, &c[i]);
	cg_profile *p = cg_stream_profile(s, t, opts);
	cg_stream_free(s);
	return p;
}
