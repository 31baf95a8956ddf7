/* The resolver's ground floor: what the other resolver files share (the
 * string ids that names and texts get, a two-key hash, a sort that skips
 * input already in order, warnings). It calls no other resolver file.
 * These used to live in resolve.c and resolve_module.c, which made
 * resolve.c, resolve_dwarf.c, resolve_funcs.c, resolve_module.c and
 * resolve_cache.c call each other in a loop; with them down here the
 * files call in one direction only: resolve.c -> resolve_dwarf.c ->
 * resolve_module.c -> resolve_funcs.c -> resolve_lines.c, resolve.c ->
 * resolve_find.c -> resolve_cache.c, and all of them into this file
 * (tests/cli/layout.sh keeps it so). */
#include "resolve/resolve_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rt_resolve_warn(rt_resolver *r, const char *fmt, ...)
{
	if (!r->o.warn)
		return;
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	r->o.warn(r->o.ctx, buf);
}

uint32_t rt_resolve_str(rt_resolver *r, const char *s, size_t len)
{
	return r->out ? rt_trace_intern(r->out, s, len) : rt_strtab_intern(&r->strs, s, len);
}

const char *rt_resolve_strp(const rt_resolver *r, uint32_t id)
{
	return r->out ? rt_trace_str(r->out, id) : r->strs.strs[id];
}

/* Most tables the resolver sorts (symbols, units, line rows) come in
 * order already: one pass to see it is cheaper than qsort's. */
void rt_resolve_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const char *p = base;
	for (size_t i = 1; i < n; i++) {
		if (cmp(p + (i - 1) * size, p + i * size) > 0) {
			qsort(base, n, size, cmp);
			return;
		}
	}
}

/* rt_rhash: open addressing on the mixed keys. */
struct rt_rslot {
	uint64_t a, b, v;
	bool used;
};

static struct rt_rslot *rhash_slot(const rt_rhash *h, uint64_t a, uint64_t b)
{
	size_t mask = h->nslots - 1;
	for (size_t i = rt_mix64(a ^ rt_mix64(b)) & mask;; i = (i + 1) & mask) {
		struct rt_rslot *s = &h->slots[i];
		if (!s->used || (s->a == a && s->b == b))
			return s;
	}
}

bool rt_resolve_hash_get(const rt_rhash *h, uint64_t a, uint64_t b, uint64_t *v)
{
	if (!h->nslots)
		return false;
	const struct rt_rslot *s = rhash_slot(h, a, b);
	if (s->used)
		*v = s->v;
	return s->used;
}

void rt_resolve_hash_put(rt_rhash *h, uint64_t a, uint64_t b, uint64_t v)
{
	if ((h->n + 1) * 2 > h->nslots) {
		rt_rhash old = *h;
		h->nslots = h->nslots ? h->nslots * 2 : 64;
		h->slots = rt_xcalloc(h->nslots, sizeof *h->slots);
		for (size_t i = 0; i < old.nslots; i++) {
			if (old.slots[i].used)
				*rhash_slot(h, old.slots[i].a, old.slots[i].b) = old.slots[i];
		}
		free(old.slots);
	}
	struct rt_rslot *s = rhash_slot(h, a, b);
	h->n += !s->used;
	*s = (struct rt_rslot){a, b, v, true};
}

void rt_resolve_hash_free(rt_rhash *h)
{
	free(h->slots);
	memset(h, 0, sizeof *h);
}
