/* Internals of the Callgrind profile model, shared by its reader and the
 * annotate report: the profile's tables and the hash index over them. */
#ifndef RT_CG_INT_H
#define RT_CG_INT_H

#include "rtrace/callgrind.h"
#include "util/util.h"

/* Open-addressing index from a 32-bit hash to entry indices of a table
 * that keeps its own keys: each slot holds (hash << 32) | (index + 1). */
typedef struct cg_index {
	uint64_t *slot;
	uint32_t mask, n;
} cg_index;

void cg_index_free(cg_index *x);
void cg_index_add(cg_index *x, uint32_t h, uint32_t idx);

/* The index with hash h whose entry eq() accepts, or CG_NONE. Inlined
 * with eq known at the call site: this is the reader's hot path. */
static inline uint32_t cg_index_find(const cg_index *x, uint32_t h,
				     bool (*eq)(const void *ctx, uint32_t i), const void *ctx)
{
	if (!x->n)
		return CG_NONE;
	for (uint32_t s = h & x->mask;; s = (s + 1) & x->mask) {
		uint64_t e = x->slot[s];
		if (!e)
			return CG_NONE;
		if ((uint32_t)(e >> 32) == h && eq(ctx, (uint32_t)e - 1))
			return (uint32_t)e - 1;
	}
}

/* Find-or-add, for every table of the model and of the report: the index
 * of the entry of the table (*arr, *n, *cap of `size`-byte entries) that
 * eq() accepts under hash h, else of a new entry at the table's end, in
 * the index x, that the caller fills (*added says so). Nothing is built
 * for a lookup that finds its entry. Inlined like cg_index_find. */
static inline uint32_t cg_index_intern(cg_index *x, uint32_t h,
				       bool (*eq)(const void *ctx, uint32_t i), const void *key,
				       void **arr, size_t *n, size_t *cap, size_t size, bool *added)
{
	uint32_t i = cg_index_find(x, h, eq, key);
	*added = i == CG_NONE;
	if (!*added)
		return i;
	if (*n == *cap)
		rt_grow(arr, cap, *n + 1, size);
	i = (uint32_t)(*n)++;
	cg_index_add(x, h, i);
	return i;
}

static inline uint32_t cg_hash(uint64_t a, uint64_t b, uint64_t c)
{
	return (uint32_t)(rt_mix64(a * 0x9e3779b97f4a7c15ULL ^ rt_mix64(b + 0x632be59bd9b4e019ULL) ^ c) >> 16);
}

/* *dst += v, held at 2^64-1 (false when it was): sums of costs never
 * wrap round to small numbers. */
static inline bool cg_sat_add(uint64_t *dst, uint64_t v)
{
	if (!__builtin_add_overflow(*dst, v, dst))
		return true;
	*dst = UINT64_MAX;
	return false;
}

/* Cost vectors: fixed-size runs of u64 in chunks that never move. */
typedef struct cg_pool {
	struct cg_pool_chunk *head;
	uint64_t *cur, *end;
} cg_pool;

uint64_t *cg_pool_alloc(cg_pool *pl, uint32_t n);
void cg_pool_free(cg_pool *pl);

/* A derived event's formula as read: terms name events by index. */
typedef struct cg_formula {
	struct cg_fterm {
		uint64_t factor;
		uint32_t ev;
	} *t;
	uint32_t n;
	uint64_t line; /* where it was defined, for warnings */
	const char *source;
} cg_formula;

struct cg_profile {
	rt_arena arena;
	cg_pool pool;
	rt_strtab names[3];

	cg_event *events;
	cg_formula *formulas; /* parallel to events */
	size_t nevents, cevents;
	cg_index event_ix; /* by name: events: lines of 100k names stay linear */
	uint32_t nslots;

	cg_part *parts;
	size_t nparts, cparts;

	cg_fn *fns;
	size_t nfns, cfns;
	cg_index fn_ix;
	cg_code *codes;
	size_t ncodes, ccodes;
	cg_index code_ix;
	cg_cost *costs;
	size_t ncosts, ccosts;
	cg_index cost_ix;
	uint32_t last_cost; /* the entry of the last cost line */
	cg_call *calls;
	size_t ncalls, ccalls;
	cg_index call_ix;
	cg_jump *jumps;
	size_t njumps, cjumps;
	cg_index jump_ix;

	uint64_t fn_lines; /* fn= lines so far: cg_fn.last_named */
	bool merged;       /* read with CG_READ_MERGE_PARTS: all costs in part 0 */
	bool no_addrs;     /* read with CG_READ_LINES: addresses dropped */
};

uint32_t cg_intern(cg_profile *p, enum cg_kind k, const char *s, size_t n);
/* The event named s (added without data when new). */
uint32_t cg_event_get(cg_profile *p, const char *s, size_t n);
/* Gives event ev a cost slot (when it has none), widening every vector. */
void cg_event_make_raw(cg_profile *p, uint32_t ev);
/* Expands derived events' formulas to raw terms; problems go to warn. */
void cg_resolve_formulas(cg_profile *p, void (*warn)(void *, const rt_diag *), void *ctx);

uint32_t cg_fn_get(cg_profile *p, uint32_t object, uint32_t file, uint32_t name);
uint32_t cg_code_get(cg_profile *p, uint32_t part, uint32_t fn, uint32_t file);

/* Adds the first `given` values of v (slot order) at the position; false
 * when a sum was held at 2^64-1. */
bool cg_add_cost(cg_profile *p, uint32_t code, uint64_t addr, uint64_t line,
		 const uint64_t *v, uint32_t given);
/* Adds a call: key fields of c (code, addr, line, callee), its count,
 * flags and first target; v as for cg_add_cost (c->given values). False
 * when its count or a cost was held at 2^64-1. */
bool cg_add_call(cg_profile *p, const cg_call *c, const uint64_t *v);
/* The call of c's key (code, addr, line, callee), or CG_NONE; adds c's
 * count, flags and values v (c->given of them) to call i, false as
 * cg_add_call: a look-up apart from the sums, for the allocation
 * profile's stacks, which add each distinct call once. */
uint32_t cg_call_find(const cg_profile *p, const cg_call *c);
bool cg_call_add_at(cg_profile *p, uint32_t i, const cg_call *c, const uint64_t *v);
void cg_add_jump(cg_profile *p, const cg_jump *j);

#endif
