/* The allocation profile's pass over a trace's calls, streaming: each
 * call is accounted as the reader hands it over and none is kept, so
 * memory follows the distinct backtraces and the blocks live at each
 * moment, not the trace's length (python3 at 16M allocations: 2.36 GB
 * when every call was loaded into the model first, see bench/README.md,
 * "Allocation profiles").
 *
 * Per backtrace (by its id, as read) and resource type key (0: memory),
 * a record of costs: allocation calls, their sizes, what is still
 * allocated at the end, and for memory the heap profile's temporary
 * allocations and bytes live at the peak. Memory's blocks are the heap
 * profile's (rt_hp: its leaked blocks and bytes, temporary, peak, the
 * figures `rtrace heap` prints; an address allocated again without a
 * release releases the first block, as heaptrack's interpreter does);
 * other types' postproc's leak filter (rt_leaks, into a scratch trace:
 * refcount resources counted, an id allocated again without a release
 * leaves the first allocation unfreed). One table per call:
 * at 16M calls and ~10^5 live blocks each probe is a cache miss, the
 * pass's largest cost after decoding.
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

typedef struct rec {
	uint64_t v[CG_EV_N];
	uint32_t next; /* the backtrace's next record (another key), or NONE32 */
	uint8_t key;
} rec;

typedef struct bt_info {
	uint64_t first; /* index of the first call with this backtrace */
	uint32_t head;  /* first record, or NONE32 */
	uint32_t proxy; /* cg_stream_end: its call, after s->base */
	bool seen;
} bt_info;

struct cg_stream {
	bt_info *bts; /* by backtrace id + 1 (0: calls without one) */
	size_t nbts;
	rec *recs;
	size_t nrecs, crecs;
	rt_trace *live; /* other types' live allocations (rt_leaks) */
	rt_leaks *leaks;
	rt_hp *hp;
	uint8_t key_of[RT_MAX_RESOURCES + 1]; /* type -> key + 1; 0: not known yet */
	bool in_hp[RT_MAX_RESOURCES + 1];     /* the type's blocks are rt_hp's */
	cg_usage u;
	size_t base, nproxies; /* cg_stream_end's calls in t: [base, base + nproxies) */
	bool proxied;
	/* cg_stream_end's look at the stacks the resolver walks, in its
	 * order (the calls', then the leak records'): each one's id and its
	 * frames without a text then (stack_order) */
	uint32_t *pre_bt, *pre_bare;
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
	free(s->bts);
	free(s->recs);
	free(s->pre_bt);
	free(s->pre_bare);
	rt_leaks_free(s->leaks);
	rt_trace_free(s->live);
	rt_hp_free(s->hp);
	free(s);
}

/* --- per backtrace --- */

static bt_info *bt_of(cg_stream *s, uint32_t bt)
{
	size_t k = bt == RT_NONE ? 0 : (size_t)bt + 1;
	if (k >= s->nbts) {
		size_t n = s->nbts ? s->nbts : 256;
		while (n <= k)
			n *= 2;
		s->bts = rt_xrealloc(s->bts, n * sizeof *s->bts);
		memset(s->bts + s->nbts, 0, (n - s->nbts) * sizeof *s->bts);
		s->nbts = n;
	}
	return &s->bts[k];
}

static uint64_t *costs(cg_stream *s, uint32_t bt, uint8_t key)
{
	bt_info *b = bt_of(s, bt);
	uint32_t *link = &b->head;
	if (!b->seen)
		b->head = NONE32;
	b->seen = true;
	for (; *link != NONE32; link = &s->recs[*link].next)
		if (s->recs[*link].key == key)
			return s->recs[*link].v;
	rec r = {{0}, NONE32, key};
	RT_PUSH(s->recs, s->nrecs, s->crecs, r);
	*link = (uint32_t)(s->nrecs - 1);
	return s->recs[s->nrecs - 1].v;
}

static void saw(cg_stream *s, const rt_call *c)
{
	bt_info *b = bt_of(s, c->bt);
	if (!b->seen) {
		b->seen = true;
		b->head = NONE32;
		b->first = c->index;
	}
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

/* True when c went to the heap profile, which released its arguments. */
static bool feed(cg_stream *s, rt_trace *t, const rt_call *c)
{
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

/* The batch's own accounting first, then the whole batch to the heap
 * profile (rt_hp_feed_calls: its loop for batches, which fetches the
 * blocks of the calls ahead and releases every call's arguments; it
 * skips the calls feed() does not give it, by their type's gate and
 * their kind). A call at a time, the profile queued each call for its
 * lookahead: python3's 16.6M calls, 2.3 s -> see bench/README.md,
 * "Allocation profiles". */
void cg_stream_feed_calls(void *ctx, rt_trace *t, const rt_call *calls, size_t n)
{
	cg_stream *s = ctx;
	for (size_t i = 0; i < n; i++) {
		const rt_call *c = &calls[i];
		if (c->kind == RT_CALL_DEAD || c->res_type > RT_MAX_RESOURCES)
			continue;
		saw(s, c);
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
		bt_info *bi = bt_of(s, d->bt);
		if (!bi->seen || d->index < bi->first)
			bi->first = d->index;
		uint8_t key = key_of(s, t, d->res_type);
		uint64_t *v = costs(s, d->bt, key);
		s->u.saturated |= !cg_sat_add(&v[CG_EV_ALLOCS], d->count);
		s->u.saturated |= !cg_sat_add(&v[CG_EV_SIZE], d->bytes);
		s->u.saturated |= !cg_sat_add(&v[CG_EV_TEMPORARY], d->temporary);
		s->u.used[key] = true;
		s->u.sized[key] |= d->bytes != d->count;
	}
}

/* The heap profile's temporary allocations and peak bytes, what is still
 * live and what the trace left out: into the records, once. */
static void close_pass(cg_stream *s, const rt_trace *t)
{
	if (s->ended)
		return;
	s->ended = true;
	add_dropped(s, t);
	rt_hp_finish(s->hp);
	for (size_t i = 0; i < rt_hp_site_count(s->hp); i++) {
		const rt_hp_site *h = rt_hp_site_at(s->hp, i);
		uint64_t blocks = rt_hp_site_live_blocks(s->hp, i);
		if (!h->cost.temporary && !h->cost.peak && !blocks)
			continue;
		uint64_t *v = costs(s, h->bt, 0);
		/* rt_hp's byte sums wrap: where the site's allocated bytes were
		 * held at 2^64-1, its live bytes are held there too */
		bool held = v[CG_EV_SIZE] == UINT64_MAX;
		s->u.saturated |= !cg_sat_add(&v[CG_EV_TEMPORARY], h->cost.temporary);
		s->u.saturated |= !cg_sat_add(&v[CG_EV_PEAK], held && h->cost.peak ? UINT64_MAX : h->cost.peak);
		s->u.saturated |= !cg_sat_add(&v[CG_EV_UNFREED], blocks);
		s->u.saturated |= !cg_sat_add(&v[CG_EV_UNFREED_SIZE], held && blocks ? UINT64_MAX : h->cost.leaked);
	}
	rt_leaks_finish(s->leaks, s->live);
	const rt_call *c = rt_trace_calls_const(s->live);
	for (size_t i = 0, n = rt_trace_call_count(s->live); i < n; i++)
		if (c[i].kind == RT_CALL_ALLOC)
			unfreed(s, c[i].bt, s->key_of[c[i].res_type] ? s->key_of[c[i].res_type] - 1 : 0, c[i].size);
}

/* The backtraces with records, by their first call (ties by id). */
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
	const rt_frame *f = rt_trace_bt_frames(t, bt);
	uint32_t n = 0;
	for (uint32_t i = 0, len = rt_trace_bt_len(t, bt); i < len; i++)
		n += f[i].text == RT_NONE;
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
	free(s->pre_bt);
	free(s->pre_bare);
	s->npre = rt_trace_call_count(t) + rt_trace_leak_count(t);
	s->pre_nbt = rt_trace_bt_count(t);
	s->pre_bt = rt_xmalloc((s->npre ? s->npre : 1) * sizeof *s->pre_bt);
	s->pre_bare = rt_xmalloc((s->npre ? s->npre : 1) * sizeof *s->pre_bare);
	for (size_t j = 0; j < s->npre; j++) {
		s->pre_bt[j] = walked_bt(t, j);
		s->pre_bare[j] = bare_frames(t, s->pre_bt[j]);
	}
}

void cg_stream_end(cg_stream *s, rt_trace *t)
{
	close_pass(s, t);
	first_key *v = rt_xmalloc((s->nbts ? s->nbts : 1) * sizeof *v);
	size_t n = 0;
	for (size_t k = 0; k < s->nbts; k++)
		if (s->bts[k].seen && s->bts[k].head != NONE32)
			v[n++] = (first_key){s->bts[k].first, (uint32_t)k};
	qsort(v, n, sizeof *v, first_cmp);
	s->base = rt_trace_call_count(t);
	s->nproxies = n;
	s->proxied = true;
	for (size_t i = 0; i < n; i++) {
		uint32_t k = v[i].k;
		s->bts[k].proxy = (uint32_t)i;
		rt_call c = {.index = v[i].first, .bt = k ? k - 1 : RT_NONE, .fn = RT_NONE,
			     .args = RT_NONE, .kind = RT_CALL_ALLOC};
		rt_trace_append_call(t, &c);
	}
	free(v);
	look_before(s, t);
}

/* The records as site costs, under the backtrace ids of t now: those
 * cg_stream_end's calls were rewritten to, else the ids as read. */
static cg_site_cost *site_costs(cg_stream *s, const rt_trace *t, size_t *n)
{
	size_t m = 0;
	cg_site_cost *v = rt_xmalloc((s->nrecs ? s->nrecs : 1) * sizeof *v);
	const rt_call *calls = rt_trace_calls_const(t);
	bool mapped = s->proxied && rt_trace_call_count(t) >= s->base + s->nproxies;
	for (size_t k = 0; k < s->nbts; k++) {
		if (!s->bts[k].seen || s->bts[k].head == NONE32)
			continue;
		uint32_t bt = k ? (uint32_t)k - 1 : RT_NONE;
		if (mapped)
			bt = calls[s->base + s->bts[k].proxy].bt;
		for (uint32_t r = s->bts[k].head; r != NONE32; r = s->recs[r].next) {
			v[m].bt = bt;
			v[m].key = s->recs[r].key;
			memcpy(v[m].v, s->recs[r].v, sizeof v[m].v);
			m++;
		}
	}
	*n = m;
	return v;
}

typedef struct rank_key {
	uint64_t rank;
	uint32_t bt;
} rank_key;

static int rank_cmp(const void *a, const void *b)
{
	const rank_key *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->bt > y->bt) - (x->bt < y->bt);
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
	rank_key *k = rt_xmalloc(((size_t)nbt + 1) * sizeof *k);
	for (uint32_t i = 0; i < nbt; i++)
		k[i] = (rank_key){UINT64_MAX, i};
	for (size_t j = 0; j < s->npre; j++) {
		uint32_t r = walked_bt(t, j);
		if (r == RT_NONE || r >= nbt)
			continue;
		uint64_t v = bare_frames(t, r) < s->pre_bare[j] ? (uint64_t)s->pre_nbt + j : r;
		if (v < k[r].rank)
			k[r].rank = v;
	}
	for (uint32_t i = 0; i < nbt; i++)
		if (k[i].rank == UINT64_MAX) /* not walked: by id */
			k[i].rank = i;
	qsort(k, nbt, sizeof *k, rank_cmp);
	uint32_t *order = rt_xmalloc(((size_t)nbt + 1) * sizeof *order);
	for (uint32_t i = 0; i < nbt; i++)
		order[i] = k[i].bt;
	order[nbt] = RT_NONE; /* calls without a stack: last, as by id */
	free(k);
	return order;
}

cg_profile *cg_stream_profile(cg_stream *s, rt_trace *t, const cg_trace_opts *opts)
{
	close_pass(s, t);
	size_t n;
	cg_site_cost *v = site_costs(s, t, &n);
	uint32_t *order = s->proxied ? stack_order(s, t) : NULL;
	cg_profile *p = cg_profile_build(t, opts, v, n, &s->u, order);
	free(order);
	free(v);
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
