/* Selections of a heap profile, decided call by call while the trace is
 * read, so that every output of the profile (report, collapsed stacks,
 * heaptrack's and massif's files) sees the same selection and memory
 * stays bounded by the live blocks plus one byte per distinct backtrace:
 *  - ranges (call index, time since the first call) and the context mask
 *    are tests on the call itself;
 *  - the function on the stack is decided once per backtrace and cached
 *    (one byte per backtrace id: unknown, in, out). Its frames are named
 *    by what the trace knows (a resolved trace, a text trace with
 *    names), else by a resolver made on the trace's memory map as read
 *    so far, and another when an address is in none of the resolvers'
 *    maps and the map has grown (dlopen): a module is mapped before any
 *    call returns into it, so its mapping is there when its first
 *    backtrace is. On python3 (11 maps as it loads its modules) this
 *    reads each module's debug info once. heaptrack_print's --filter-bt-function
 *    matches the same way: the text anywhere in a function's name,
 *    inlined functions included. */
#include "rtrace/heapprof.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

enum { BT_UNKNOWN, BT_IN, BT_OUT };

struct rt_hp_filter {
	rt_hp_filter_opts o;
	char *resource, *function, *context; /* the copies o points to */
	rt_resolve_opts ropts;
	bool resolve;
	rt_resolver **res; /* one per state of the map, oldest first */
	size_t nres;
	size_t res_maps; /* the trace's mappings when the last was made */
	uint8_t *bt;     /* BT_* per backtrace id */
	size_t nbt;
};

static char *dup_or_null(const char *s)
{
	return s ? rt_xstrdup(s) : NULL;
}

rt_hp_filter *rt_hp_filter_new(const rt_hp_filter_opts *o)
{
	if (o->resource && !*o->resource)
		return NULL;
	rt_hp_filter *f = rt_xcalloc(1, sizeof *f);
	f->o = *o;
	f->o.resource = f->resource = dup_or_null(o->resource);
	f->o.bt_function = f->function = dup_or_null(o->bt_function);
	f->o.context_name = f->context = dup_or_null(o->context_name);
	if (o->resolve) {
		f->ropts = *o->resolve;
		f->resolve = true;
	}
	f->o.resolve = NULL;
	return f;
}

void rt_hp_filter_free(rt_hp_filter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nres; i++)
		rt_resolve_free(f->res[i]);
	free(f->res);
	free(f->resource);
	free(f->function);
	free(f->context);
	free(f->bt);
	free(f);
}

bool rt_hp_filter_resource(const rt_hp_filter *f, const rt_trace *t, uint8_t res_type)
{
	const char *type = f && f->o.resource ? f->o.resource : "memory";
	if (!res_type) /* untyped: sp-rtrace's traces of one resource, memory */
		return !strcmp(type, "memory");
	return rt_trace_res_is(t, res_type, type);
}

/* Resolves addr with the first resolver whose map holds it, a new one
 * (on the map as read so far) when none does and the map has grown
 * since the last was made. Earlier resolvers are kept, each with the
 * modules it opened, so that a module's debug info is read once however
 * many modules are loaded after it. */
static bool resolve(rt_hp_filter *f, const rt_trace *t, uint64_t addr, uint64_t index, rt_resolved *r)
{
	for (size_t i = 0; i < f->nres; i++)
		if (rt_resolve_addr(f->res[i], addr, index, r))
			return true;
	if (f->nres && f->res_maps == rt_trace_mmap_count(t))
		return false;
	f->res = rt_xrealloc(f->res, (f->nres + 1) * sizeof *f->res);
	f->res[f->nres++] = rt_resolve_new(t, &f->ropts);
	f->res_maps = rt_trace_mmap_count(t);
	return rt_resolve_addr(f->res[f->nres - 1], addr, index, r);
}

static bool name_has(const char *name, const char *text)
{
	return name && strstr(name, text);
}

/* Whether frame f's function, or one inlined at it, is named with text. */
static bool frame_has(rt_hp_filter *f, const rt_trace *t, const rt_frame *fr, uint64_t index)
{
	const char *text = f->o.bt_function;
	rt_frame_info info;
	if (rt_trace_frame_info(t, fr, &info) && info.n) {
		for (uint32_t k = 0; k < info.n; k++)
			if (info.locs[k].fn != RT_NONE && name_has(rt_trace_str(t, info.locs[k].fn), text))
				return true;
		return false;
	}
	rt_resolved r;
	if (!f->resolve || !resolve(f, t, fr->addr, index, &r))
		return false;
	for (uint32_t k = 0; k < r.n; k++)
		if (name_has(r.locs[k].fn, text))
			return true;
	return false;
}

bool rt_hp_filter_bt(rt_hp_filter *f, const rt_trace *t, uint32_t bt, uint64_t call_index)
{
	if (!f->o.bt_function)
		return true;
	if (bt == RT_NONE)
		return false;
	if (bt >= f->nbt) {
		size_t n = f->nbt ? f->nbt : 256;
		while (n <= bt)
			n *= 2;
		f->bt = rt_xrealloc(f->bt, n);
		memset(f->bt + f->nbt, BT_UNKNOWN, n - f->nbt);
		f->nbt = n;
	}
	if (f->bt[bt] == BT_UNKNOWN) {
		uint32_t n = rt_trace_bt_len(t, bt);
		const rt_frame *fr = rt_trace_bt_frames(t, bt);
		bool in = false;
		for (uint32_t k = 0; k < n && !in; k++)
			in = frame_has(f, t, &fr[k], call_index);
		f->bt[bt] = in ? BT_IN : BT_OUT;
	}
	return f->bt[bt] == BT_IN;
}

bool rt_hp_filter_past(const rt_hp_filter *f, const rt_call *c, uint64_t rel_us)
{
	return (f->o.by_index && c->index > f->o.to_index) || (f->o.by_time && rel_us >= f->o.to_us);
}

/* The mask of the context named name: looked up until the trace's
 * registry has it (a context is registered before any call is made in
 * it); 0 until then, which selects nothing of a named context. */
static uint32_t named_mask(rt_hp_filter *f, const rt_trace *t)
{
	if (!f->o.context_mask)
		for (size_t i = 0; i < rt_trace_context_count(t); i++)
			if (!strcmp(rt_trace_context_at(t, i)->name, f->o.context_name))
				f->o.context_mask = rt_trace_context_at(t, i)->id;
	return f->o.context_mask;
}

bool rt_hp_filter_alloc(rt_hp_filter *f, const rt_trace *t, const rt_call *c, uint64_t rel_us)
{
	const rt_hp_filter_opts *o = &f->o;
	if (o->by_context && o->context_name && !(c->context & named_mask(f, t)))
		return false;
	if (o->by_index && (c->index < o->from_index || c->index > o->to_index))
		return false;
	if (o->by_time && (rel_us < o->from_us || rel_us >= o->to_us))
		return false;
	if (o->by_context && !o->context_name && (o->context_mask ? !(c->context & o->context_mask) : c->context != 0))
		return false;
	return rt_hp_filter_bt(f, t, c->bt, c->index);
}

/* Dropped allocations (the tracer's lifetime filter) carry a stack but
 * no time or context, and only their first call's index: a selection by
 * range or context cannot place them, so it leaves them out. */
bool rt_hp_filter_dropped(rt_hp_filter *f, const rt_trace *t, const rt_dropped *d)
{
	const rt_hp_filter_opts *o = &f->o;
	if (o->by_index || o->by_time || o->by_context)
		return false;
	return rt_hp_filter_bt(f, t, d->bt, d->index);
}
