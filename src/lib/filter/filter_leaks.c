/* Streaming leak filter. Live allocations sit in the trace's call array in
 * trace order; a hash table maps (resource type, resource id) to their
 * position. Released allocations are marked dead and the array is
 * compacted once dead entries outnumber live ones, so memory follows the
 * live set, not the length of the trace. */
#include "rtrace/filter.h"
#include "util/util.h"

#include <stdlib.h>

typedef struct entry {
	uint64_t res_id;
	uint32_t pos;  /* call position in the trace */
	uint32_t refs; /* allocations of a refcount resource */
	uint8_t type;
	bool used;
} entry;

/* Calls wait in a short queue so that their hash slot can be prefetched
 * before they are matched: at millions of live blocks every probe is a
 * cache miss, and the queue lets several misses overlap. */
#define QUEUE 16

struct rt_leaks {
	entry *slots;
	size_t nslots, n;
	rt_call queue[QUEUE];
	size_t qhead, qlen;
};

rt_leaks *rt_leaks_new(void)
{
	rt_leaks *l = rt_xcalloc(1, sizeof *l);
	l->nslots = 1024;
	l->slots = rt_xcalloc(l->nslots, sizeof *l->slots);
	return l;
}

void rt_leaks_free(rt_leaks *l)
{
	if (l)
		free(l->slots);
	free(l);
}

size_t rt_leaks_live(const rt_leaks *l) { return l->n; }

static size_t slot_of(const rt_leaks *l, uint8_t type, uint64_t id)
{
	return rt_mix64(id ^ ((uint64_t)type << 56)) & (l->nslots - 1);
}

/* The entry for (type, id), or the empty slot where it would go. */
static entry *probe(rt_leaks *l, uint8_t type, uint64_t id)
{
	for (size_t i = slot_of(l, type, id);; i = (i + 1) & (l->nslots - 1)) {
		entry *e = &l->slots[i];
		if (!e->used || (e->res_id == id && e->type == type))
			return e;
	}
}

static entry *find(rt_leaks *l, uint8_t type, uint64_t id)
{
	entry *e = probe(l, type, id);
	return e->used ? e : NULL;
}

static entry *insert(rt_leaks *l, uint8_t type, uint64_t id);

static void grow(rt_leaks *l)
{
	entry *old = l->slots;
	size_t nold = l->nslots;
	l->nslots *= 2;
	l->slots = rt_xcalloc(l->nslots, sizeof *l->slots);
	l->n = 0;
	for (size_t i = 0; i < nold; i++)
		if (old[i].used)
			*insert(l, old[i].type, old[i].res_id) = old[i];
	free(old);
}

static entry *insert(rt_leaks *l, uint8_t type, uint64_t id)
{
	if ((l->n + 1) * 10 > l->nslots * 7)
		grow(l);
	entry *e = probe(l, type, id);
	e->used = true;
	e->res_id = id;
	e->type = type;
	l->n++;
	return e;
}

/* Linear-probing deletion by backward shift: no tombstones to age. */
static void erase(rt_leaks *l, entry *e)
{
	size_t mask = l->nslots - 1, i = (size_t)(e - l->slots);
	for (size_t j = (i + 1) & mask; l->slots[j].used; j = (j + 1) & mask) {
		size_t home = slot_of(l, l->slots[j].type, l->slots[j].res_id);
		/* move j into the hole at i if its home is not in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			l->slots[i] = l->slots[j];
			i = j;
		}
	}
	l->slots[i].used = false;
	l->n--;
}

static void compact(rt_leaks *l, rt_trace *t)
{
	rt_call *calls = rt_trace_calls(t);
	size_t n = rt_trace_call_count(t), j = 0;
	for (size_t i = 0; i < n; i++) {
		if (calls[i].kind == RT_CALL_DEAD)
			continue;
		entry *e = find(l, calls[i].res_type, calls[i].res_id);
		if (e && e->pos == i)
			e->pos = (uint32_t)j;
		j++;
	}
	rt_trace_compact(t);
}

static void match(rt_leaks *l, rt_trace *t, const rt_call *c);

void rt_leaks_feed(rt_leaks *l, rt_trace *t, const rt_call *c)
{
	__builtin_prefetch(&l->slots[slot_of(l, c->res_type, c->res_id)]);
	if (l->qlen == QUEUE) {
		match(l, t, &l->queue[l->qhead]);
		l->queue[l->qhead] = *c;
		l->qhead = (l->qhead + 1) % QUEUE;
		return;
	}
	l->queue[(l->qhead + l->qlen++) % QUEUE] = *c;
}

void rt_leaks_finish(rt_leaks *l, rt_trace *t)
{
	for (; l->qlen; l->qlen--) {
		match(l, t, &l->queue[l->qhead]);
		l->qhead = (l->qhead + 1) % QUEUE;
	}
}

static void match(rt_leaks *l, rt_trace *t, const rt_call *c)
{
	const rt_resource *r = rt_trace_resource_get(t, c->res_type);
	entry *e = probe(l, c->res_type, c->res_id);
	if (!e->used)
		e = NULL;
	if (c->kind == RT_CALL_ALLOC) {
		if (e && r && r->refcount) {
			e->refs++;
			rt_trace_release_args(t, c->args);
			return;
		}
		/* a repeated id of a plain resource: the earlier allocation was
		 * never released as far as the trace knows, so it stays a leak */
		if (!e)
			e = insert(l, c->res_type, c->res_id);
		e->pos = (uint32_t)rt_trace_call_count(t);
		e->refs = 1;
		rt_trace_append_call(t, c);
		return;
	}
	/* releases are never kept: the call's arguments go with it */
	rt_trace_release_args(t, c->args);
	if (c->kind != RT_CALL_FREE || !e)
		return;
	if (--e->refs == 0 || !(r && r->refcount)) {
		rt_trace_kill_call(t, &rt_trace_calls(t)[e->pos]);
		erase(l, e);
	}
	size_t dead = rt_trace_dead_count(t);
	if (dead > 4096 && dead * 2 > rt_trace_call_count(t))
		compact(l, t);
}

rt_call *rt_leaks_unfreed(const rt_trace *t, size_t *n)
{
	rt_trace *live = rt_trace_new();
	for (size_t i = 0; i < rt_trace_resource_count(t); i++) {
		const rt_resource *r = rt_trace_resource_get(t, (uint8_t)(i + 1));
		rt_trace_add_resource(live, r->mask, r->type, r->desc, r->flags);
	}
	rt_leaks *lf = rt_leaks_new();
	const rt_call *c = rt_trace_calls_const(t);
	for (size_t i = 0; i < rt_trace_call_count(t); i++) {
		rt_call k = c[i];
		/* argument blocks stay t's: the scratch trace has none, so
		 * the filter's releases of this tag (the call's position)
		 * do nothing, and it tells the call's own block after */
		k.args = (uint32_t)i;
		if (k.kind != RT_CALL_DEAD)
			rt_leaks_feed(lf, live, &k);
	}
	rt_leaks_finish(lf, live);
	rt_leaks_free(lf);
	size_t nl = rt_trace_call_count(live), k = 0;
	rt_call *v = rt_xmalloc((nl ? nl : 1) * sizeof *v);
	for (const rt_call *l = rt_trace_calls_const(live); nl--; l++) {
		if (l->kind != RT_CALL_ALLOC)
			continue;
		v[k] = *l;
		v[k++].args = c[l->args].args;
	}
	rt_trace_free(live);
	*n = k;
	return v;
}
