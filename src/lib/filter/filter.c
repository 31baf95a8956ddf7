/* Per-call selections: context mask, include/exclude index lists, code
 * address range, resource type mask. */
#include "rtrace/filter.h"

#include <string.h>

static bool in_sorted(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == x;
}

static bool has_frame_in(const rt_trace *t, uint32_t bt, uint64_t from, uint64_t to)
{
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(t, bt);
	const rt_frame *f = rt_trace_bt_frames(t, bt);
	for (uint32_t i = 0; i < n; i++)
		if (f[i].addr >= from && f[i].addr < to)
			return true;
	return false;
}

bool rt_select_call(const rt_select *s, const rt_trace *t, const rt_call *c)
{
	if (s->by_context) {
		/* sp-rtrace: mask 0 selects the calls made outside any context */
		if (s->context_mask ? !(c->context & s->context_mask) : c->context != 0)
			return false;
	}
	if (s->include && !in_sorted(s->include, s->ninclude, c->index))
		return false;
	if (s->exclude && in_sorted(s->exclude, s->nexclude, c->index))
		return false;
	if (s->by_address && !has_frame_in(t, c->bt, s->addr_from, s->addr_to))
		return false;
	return true;
}

size_t rt_select_apply(const rt_select *s, rt_trace *t)
{
	rt_call *calls = rt_trace_calls(t);
	size_t n = rt_trace_call_count(t);
	for (size_t i = 0; i < n; i++)
		if (calls[i].kind != RT_CALL_DEAD && !rt_select_call(s, t, &calls[i]))
			rt_trace_kill_call(t, &calls[i]);
	return rt_trace_compact(t);
}

void rt_select_resources(rt_trace *t, uint32_t mask)
{
	for (size_t i = 0; i < rt_trace_resource_count(t); i++) {
		rt_resource *r = rt_trace_resource_at(t, i);
		if (!(r->mask & mask))
			r->removed = true;
	}
}

bool rt_select_resource(const rt_trace *t, const rt_call *c)
{
	const rt_resource *r = rt_trace_resource_get(t, c->res_type);
	return !r || !r->removed;
}

bool rt_select_address_range(const rt_trace *t, const char *target, uint64_t start,
						  uint64_t size, uint64_t *from, uint64_t *to)
{
	for (size_t i = 0; i < rt_trace_mmap_count(t); i++) {
		const rt_mmap *m = rt_trace_mmap_at(t, i);
		if (!strstr(m->module, target))
			continue;
		*from = start >= m->from && start < m->to ? start : m->from + start;
		*to = *from + size;
		return true;
	}
	return false;
}
