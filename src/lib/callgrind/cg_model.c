/* The Callgrind profile model: interned names, functions and their code
 * per source file, and costs, calls and jumps aggregated per position. */
#include "callgrind/cg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- hash index --- */

void cg_index_free(cg_index *x)
{
	free(x->slot);
	memset(x, 0, sizeof *x);
}

static void index_rehash(cg_index *x)
{
	uint32_t nslots = x->slot ? (x->mask + 1) * 2 : 64;
	uint64_t *slot = rt_xcalloc(nslots, sizeof *slot);
	for (uint32_t i = 0; x->slot && i <= x->mask; i++) {
		uint64_t e = x->slot[i];
		if (!e)
			continue;
		uint32_t s = (uint32_t)(e >> 32) & (nslots - 1);
		while (slot[s])
			s = (s + 1) & (nslots - 1);
		slot[s] = e;
	}
	free(x->slot);
	x->slot = slot;
	x->mask = nslots - 1;
}

void cg_index_add(cg_index *x, uint32_t h, uint32_t idx)
{
	if (!x->slot || (x->n + 1) * 2 > x->mask + 1)
		index_rehash(x);
	uint32_t s = h & x->mask;
	while (x->slot[s])
		s = (s + 1) & x->mask;
	x->slot[s] = (uint64_t)h << 32 | ((uint64_t)idx + 1);
	x->n++;
}

/* --- cost vector pool --- */

struct cg_pool_chunk {
	struct cg_pool_chunk *next;
	uint64_t v[];
};

#define CG_POOL_CHUNK 32768

/* Cost vectors are the bulk of a profile: a pool without per-vector
 * headers or rounding keeps them at 8 bytes per event. */
uint64_t *cg_pool_alloc(cg_pool *pl, uint32_t n)
{
	if (!n)
		return NULL;
	if ((size_t)(pl->end - pl->cur) < n) {
		size_t sz = n > CG_POOL_CHUNK / 4 ? n : CG_POOL_CHUNK;
		struct cg_pool_chunk *c = rt_xmalloc(sizeof *c + sz * sizeof(uint64_t));
		c->next = pl->head;
		pl->head = c;
		pl->cur = c->v;
		pl->end = c->v + sz;
	}
	uint64_t *v = pl->cur;
	pl->cur += n;
	memset(v, 0, n * sizeof *v);
	return v;
}

void cg_pool_free(cg_pool *pl)
{
	while (pl->head) {
		struct cg_pool_chunk *next = pl->head->next;
		free(pl->head);
		pl->head = next;
	}
	pl->cur = pl->end = NULL;
}

/* --- profile --- */

cg_profile *cg_profile_new(void)
{
	cg_profile *p = rt_xcalloc(1, sizeof *p);
	rt_arena_init(&p->arena);
	for (int k = 0; k < 3; k++)
		rt_strtab_init(&p->names[k], &p->arena);
	return p;
}

void cg_profile_free(cg_profile *p)
{
	if (!p)
		return;
	for (int k = 0; k < 3; k++)
		rt_strtab_free(&p->names[k]);
	for (size_t i = 0; i < p->nevents; i++)
		free(p->formulas[i].t);
	free(p->events);
	free(p->formulas);
	free(p->parts);
	free(p->fns);
	free(p->codes);
	free(p->costs);
	free(p->calls);
	free(p->jumps);
	cg_index_free(&p->event_ix);
	cg_index_free(&p->fn_ix);
	cg_index_free(&p->code_ix);
	cg_index_free(&p->cost_ix);
	cg_index_free(&p->call_ix);
	cg_index_free(&p->jump_ix);
	cg_pool_free(&p->pool);
	rt_arena_free(&p->arena);
	free(p);
}

uint32_t cg_intern(cg_profile *p, enum cg_kind k, const char *s, size_t n)
{
	return rt_strtab_intern(&p->names[k], s, n);
}

uint32_t cg_profile_name_count(const cg_profile *p, enum cg_kind kind)
{
	return (uint32_t)p->names[kind].n;
}

const char *cg_profile_name(const cg_profile *p, enum cg_kind kind, uint32_t id)
{
	return id < p->names[kind].n ? p->names[kind].strs[id] : NULL;
}

uint32_t cg_profile_slots(const cg_profile *p)
{
	return p->nslots;
}

#define CG_ARRAY_GETTER(fn, type, arr, cnt)                  \
	const type *fn(const cg_profile *p, size_t *n)       \
	{                                                    \
		*n = p->cnt;                                 \
		return p->arr;                               \
	}
CG_ARRAY_GETTER(cg_profile_events, cg_event, events, nevents)
CG_ARRAY_GETTER(cg_profile_parts, cg_part, parts, nparts)
CG_ARRAY_GETTER(cg_profile_fns, cg_fn, fns, nfns)
CG_ARRAY_GETTER(cg_profile_codes, cg_code, codes, ncodes)
CG_ARRAY_GETTER(cg_profile_costs, cg_cost, costs, ncosts)
CG_ARRAY_GETTER(cg_profile_calls, cg_call, calls, ncalls)
CG_ARRAY_GETTER(cg_profile_jumps, cg_jump, jumps, njumps)

/* --- events --- */

typedef struct event_key {
	const cg_profile *p;
	const char *s;
	size_t n;
} event_key;

static bool event_eq(const void *ctx, uint32_t i)
{
	const event_key *k = ctx;
	const char *name = k->p->events[i].name;
	return !strncmp(name, k->s, k->n) && !name[k->n];
}

static uint32_t event_hash(const char *s, size_t n)
{
	return (uint32_t)(rt_hash_bytes(s, n) >> 32);
}

uint32_t cg_profile_find_event(const cg_profile *p, const char *name)
{
	event_key k = {p, name, strlen(name)};
	return cg_index_find(&p->event_ix, event_hash(name, k.n), event_eq, &k);
}

uint32_t cg_event_get(cg_profile *p, const char *s, size_t n)
{
	event_key k = {p, s, n};
	uint32_t h = event_hash(s, n), found = cg_index_find(&p->event_ix, h, event_eq, &k);
	if (found != CG_NONE)
		return found;
	if (p->nevents == p->cevents) {
		size_t cap = p->cevents;
		rt_grow((void **)&p->events, &cap, p->nevents + 1, sizeof *p->events);
		rt_grow((void **)&p->formulas, &p->cevents, p->nevents + 1, sizeof *p->formulas);
	}
	cg_event *e = &p->events[p->nevents];
	memset(e, 0, sizeof *e);
	memset(&p->formulas[p->nevents], 0, sizeof *p->formulas);
	e->name = rt_arena_strndup(&p->arena, s, n);
	e->slot = CG_NONE;
	cg_index_add(&p->event_ix, h, (uint32_t)p->nevents);
	return (uint32_t)p->nevents++;
}

/* Moves one entry's values into a vector of the new width. */
static const uint64_t *widen(cg_pool *pl, const uint64_t *v, uint32_t from, uint32_t to)
{
	uint64_t *w = cg_pool_alloc(pl, to);
	if (from)
		memcpy(w, v, from * sizeof *w);
	return w;
}

/* A later part can name events the earlier ones did not have: every
 * vector gets the new slot (rare, and then once per new event). */
void cg_event_make_raw(cg_profile *p, uint32_t ev)
{
	if (p->events[ev].slot != CG_NONE)
		return;
	uint32_t from = p->nslots, to = from + 1;
	p->events[ev].slot = p->nslots++;
	for (size_t i = 0; i < p->ncosts; i++)
		p->costs[i].v = widen(&p->pool, p->costs[i].v, from, to);
	for (size_t i = 0; i < p->ncalls; i++)
		p->calls[i].v = widen(&p->pool, p->calls[i].v, from, to);
}

uint64_t cg_event_value(const cg_profile *p, uint32_t ev, const uint64_t *v,
			uint32_t given, bool *defined)
{
	const cg_event *e = &p->events[ev];
	bool def = false;
	uint64_t x = 0;
	if (e->slot != CG_NONE) {
		def = e->slot < given;
		x = def ? v[e->slot] : 0;
	} else {
		for (uint32_t i = 0; i < e->nterms; i++)
			if (e->terms[i].slot < given) {
				def = true;
				x += e->terms[i].factor * v[e->terms[i].slot];
			}
	}
	if (defined)
		*defined = def;
	return x;
}

static void formula_warn(cg_profile *p, uint32_t ev, void (*warn)(void *, const rt_diag *),
			 void *ctx, const char *what, const char *name)
{
	if (!warn)
		return;
	rt_diag d = {p->formulas[ev].source, p->formulas[ev].line, 1, ""};
	snprintf(d.msg, sizeof d.msg, "event '%s': %s '%s' in its formula; the term is left out",
		 p->events[ev].name, what, name);
	warn(ctx, &d);
}

/* Appends factor * event ev to out, expanding derived events; depth
 * guards against formulas that refer to themselves. */
static void expand_term(cg_profile *p, uint32_t top, uint32_t ev, uint64_t factor, int depth,
			cg_term **out, size_t *n, size_t *cap,
			void (*warn)(void *, const rt_diag *), void *ctx)
{
	const cg_event *e = &p->events[ev];
	if (e->slot != CG_NONE) {
		cg_term t = {factor, e->slot};
		RT_PUSH(*out, *n, *cap, t);
		return;
	}
	if (depth > 16 || (depth > 0 && ev == top)) {
		formula_warn(p, top, warn, ctx, "circular reference to", e->name);
		return;
	}
	if (!p->formulas[ev].n) {
		formula_warn(p, top, warn, ctx, "no data for event", e->name);
		return;
	}
	for (uint32_t i = 0; i < p->formulas[ev].n; i++) {
		const struct cg_fterm *t = &p->formulas[ev].t[i];
		expand_term(p, top, t->ev, factor * t->factor, depth + 1, out, n, cap, warn, ctx);
	}
}

void cg_resolve_formulas(cg_profile *p, void (*warn)(void *, const rt_diag *), void *ctx)
{
	for (size_t ev = 0; ev < p->nevents; ev++) {
		cg_event *e = &p->events[ev];
		if (e->slot != CG_NONE || !p->formulas[ev].n)
			continue;
		cg_term *terms = NULL;
		size_t n = 0, cap = 0;
		expand_term(p, (uint32_t)ev, (uint32_t)ev, 1, 0, &terms, &n, &cap, warn, ctx);
		cg_term *t = rt_arena_alloc(&p->arena, (n ? n : 1) * sizeof *t);
		if (n)
			memcpy(t, terms, n * sizeof *t);
		free(terms);
		e->terms = t;
		e->nterms = (uint32_t)n;
	}
}

/* --- functions and code --- */

typedef struct fn_key {
	const cg_profile *p;
	uint32_t object, file, name;
} fn_key;

static bool fn_eq(const void *ctx, uint32_t i)
{
	const fn_key *k = ctx;
	const cg_fn *f = &k->p->fns[i];
	return f->name == k->name && f->file == k->file && f->object == k->object;
}

uint32_t cg_fn_get(cg_profile *p, uint32_t object, uint32_t file, uint32_t name)
{
	fn_key k = {p, object, file, name};
	bool added;
	uint32_t i = cg_index_intern(&p->fn_ix, cg_hash(object, file, name), fn_eq, &k,
				     (void **)&p->fns, &p->nfns, &p->cfns, sizeof *p->fns, &added);
	if (added)
		p->fns[i] = (cg_fn){object, file, name, 0};
	return i;
}

typedef struct code_key {
	const cg_profile *p;
	uint32_t part, fn, file;
} code_key;

static bool code_eq(const void *ctx, uint32_t i)
{
	const code_key *k = ctx;
	const cg_code *c = &k->p->codes[i];
	return c->fn == k->fn && c->file == k->file && c->part == k->part;
}

uint32_t cg_code_get(cg_profile *p, uint32_t part, uint32_t fn, uint32_t file)
{
	code_key k = {p, part, fn, file};
	bool added;
	uint32_t i = cg_index_intern(&p->code_ix, cg_hash(fn, file, part), code_eq, &k,
				     (void **)&p->codes, &p->ncodes, &p->ccodes, sizeof *p->codes,
				     &added);
	if (added)
		p->codes[i] = (cg_code){fn, file, part};
	return i;
}

/* --- costs, calls, jumps --- */

/* false when a sum was held at 2^64-1 */
static bool add_values(uint64_t *dst, uint32_t *dgiven, const uint64_t *v, uint32_t given)
{
	bool ok = true;
	for (uint32_t i = 0; i < given; i++)
		ok &= cg_sat_add(&dst[i], v[i]);
	if (given > *dgiven)
		*dgiven = given;
	return ok;
}

typedef struct cost_key {
	const cg_profile *p;
	uint64_t addr, line;
	uint32_t code;
} cost_key;

static bool cost_eq(const void *ctx, uint32_t i)
{
	const cost_key *k = ctx;
	const cg_cost *c = &k->p->costs[i];
	return c->line == k->line && c->addr == k->addr && c->code == k->code;
}

/* Consecutive cost lines often fall on the same position (instructions
 * of one source line, when addresses are dropped): the last one is
 * checked before the index. */
bool cg_add_cost(cg_profile *p, uint32_t code, uint64_t addr, uint64_t line,
		 const uint64_t *v, uint32_t given)
{
	cost_key k = {p, addr, line, code};
	uint32_t i = p->last_cost;
	if (i < p->ncosts && cost_eq(&k, i))
		goto add;
	bool added;
	i = cg_index_intern(&p->cost_ix, cg_hash(addr, line, code), cost_eq, &k, (void **)&p->costs,
			    &p->ncosts, &p->ccosts, sizeof *p->costs, &added);
	if (added)
		p->costs[i] = (cg_cost){addr, line, code, 0, cg_pool_alloc(&p->pool, p->nslots)};
	p->last_cost = i;
add:;
	cg_cost *c = &p->costs[i];
	return add_values((uint64_t *)c->v, &c->given, v, given);
}

typedef struct call_key {
	const cg_profile *p;
	const cg_call *c;
} call_key;

static bool call_eq(const void *ctx, uint32_t i)
{
	const call_key *k = ctx;
	const cg_call *a = &k->p->calls[i], *b = k->c;
	return a->line == b->line && a->addr == b->addr && a->code == b->code &&
	       a->callee == b->callee;
}

static uint32_t call_hash(const cg_call *c)
{
	return cg_hash(c->addr, c->line, (uint64_t)c->code << 32 | c->callee);
}

uint32_t cg_call_find(const cg_profile *p, const cg_call *c)
{
	call_key k = {p, c};
	return cg_index_find(&p->call_ix, call_hash(c), call_eq, &k);
}

bool cg_call_add_at(cg_profile *p, uint32_t i, const cg_call *c, const uint64_t *v)
{
	cg_call *e = &p->calls[i];
	e->flags |= c->flags;
	bool ok = cg_sat_add(&e->count, c->count);
	return add_values((uint64_t *)e->v, &e->given, v, c->given) && ok;
}

bool cg_add_call(cg_profile *p, const cg_call *c, const uint64_t *v)
{
	call_key k = {p, c};
	bool added;
	uint32_t i = cg_index_intern(&p->call_ix, call_hash(c), call_eq, &k, (void **)&p->calls, &p->ncalls,
				     &p->ccalls, sizeof *p->calls, &added);
	cg_call *e = &p->calls[i];
	if (added) { /* c's position and callee, nothing counted yet */
		*e = *c;
		e->given = 0;
		e->count = 0;
		e->flags = 0;
		e->v = cg_pool_alloc(&p->pool, p->nslots);
	}
	return cg_call_add_at(p, i, c, v);
}

typedef struct jump_key {
	const cg_profile *p;
	const cg_jump *j;
} jump_key;

static bool jump_eq(const void *ctx, uint32_t i)
{
	const jump_key *k = ctx;
	const cg_jump *a = &k->p->jumps[i], *b = k->j;
	return a->addr == b->addr && a->line == b->line && a->to_addr == b->to_addr &&
	       a->to_line == b->to_line && a->code == b->code && a->to_fn == b->to_fn &&
	       a->to_file == b->to_file && a->conditional == b->conditional;
}

void cg_add_jump(cg_profile *p, const cg_jump *j)
{
	jump_key k = {p, j};
	uint32_t h = cg_hash(j->addr ^ j->line << 20, j->to_addr ^ j->to_line << 20,
			     (uint64_t)j->code << 32 ^ (uint64_t)j->to_fn << 8 ^ j->to_file ^
				     (uint64_t)j->conditional << 63);
	bool added;
	uint32_t i = cg_index_intern(&p->jump_ix, h, jump_eq, &k, (void **)&p->jumps, &p->njumps,
				     &p->cjumps, sizeof *p->jumps, &added);
	if (added) {
		p->jumps[i] = *j;
		p->jumps[i].executed = p->jumps[i].followed = 0;
	}
	p->jumps[i].executed += j->executed;
	p->jumps[i].followed += j->followed;
}
