/* The pass over a trace's backtraces (rt_resolve_trace).
 *
 * It walks the backtraces twice. The first walk collects the distinct
 * addresses; they are then looked up module by module, in address order
 * (consecutive addresses share their unit, function and line table rows),
 * and the second walk gives each frame its text, interned straight into
 * the trace. */
#include "resolve/resolve_int.h"
#include "rtrace/heapcheck.h"
#include "model/trace_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where a pending entry goes: by module, then by mapping and address
 * (within a mapping, libdwfl addresses are in the same order). */
typedef struct rt_rorder {
	uint32_t mod, map, ent;
	uint64_t addr;
} rt_rorder;

static int order_cmp(const void *a, const void *b)
{
	const rt_rorder *x = a, *y = b;
	if (x->mod != y->mod)
		return x->mod < y->mod ? -1 : 1;
	if (x->map != y->map)
		return x->map < y->map ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->ent < y->ent ? -1 : x->ent > y->ent;
}

/* Looks up every collected entry, module by module in address order.
 * Modules are opened and mappings placed in the order their first
 * address was seen, so that their warnings come in trace order. */
static void compute_pending(rt_resolver *r)
{
	rt_rorder *order = rt_xmalloc((r->nents ? r->nents : 1) * sizeof *order);
	size_t n = 0;
	for (size_t i = 0; i < r->nents; i++) {
		rt_rent *e = &r->ents[i];
		if (e->done)
			continue;
		rt_resolve_usable(r, &r->maps[e->map]);
		order[n++] = (rt_rorder){r->maps[e->map].mod, e->map, (uint32_t)i, e->addr};
	}
	rt_resolve_sort(order, n, sizeof *order, order_cmp);
	for (size_t i = 0; i < n; i++)
		rt_resolve_compute(r, &r->ents[order[i].ent]);
	free(order);
}

/* Records e's inline chain in the output trace, once. */
static void record(rt_resolver *r, rt_rent *e)
{
	rt_srcloc locs[64];
	uint32_t n = e->n < 64 ? e->n : 64;
	for (uint32_t i = 0; i < n; i++) {
		const rt_resolve_loc *l = &r->locs[e->off + i];
		locs[i].fn = r->lids[e->off + i].fn;
		locs[i].file = r->lids[e->off + i].file;
		locs[i].line = l->line;
		locs[i].flags = l->demangled ? RT_SRCLOC_DEMANGLED : 0;
		locs[i].linkage = r->lids[e->off + i].linkage != RT_NONE ? r->lids[e->off + i].linkage + 1 : 0;
	}
	rt_rmod *m = &r->mods[r->maps[e->map].mod];
	if (m->path_id == RT_NONE)
		m->path_id = rt_trace_intern(r->out, m->path, strlen(m->path));
	rt_frame f = {e->addr, e->text_id};
	rt_trace_set_frame_info(r->out, &f, m->path_id, locs, n);
	e->recorded = true;
}

/* A walk over the calls' backtraces: each backtrace is taken once, with
 * the index of its first call (which picks among overlapping mappings).
 * The first walk notes the entry of each unresolved frame (ents), the
 * second takes them back in the same order. */
typedef struct rt_rwalk {
	uint32_t *memo; /* new backtrace id by old; RT_NONE: not seen */
	rt_frame *buf;
	size_t cap;
	uint32_t *ents; /* entry index of each unresolved frame, RT_NONE: no mapping */
	size_t nents, cents, next;
	uint32_t nbt; /* backtraces before the pass: the memo's size */
	bool in_place;
	bool shared;   /* in place on the trace's tree: stacks share frames */
	bool had_text; /* a frame of the trace had a text before the pass */
	uint32_t *roots; /* walked instead of the calls (rt_resolve_bts), or NULL */
	const uint64_t *root_index;
	size_t nroots;
} rt_rwalk;

/* A frame's text field holding its entry during an in-place pass. */
#define RMARK 0x80000000u

/* In place, first walk: each unresolved frame of bt with a mapping takes
 * RMARK | its entry's index as text. Where stacks share their outer
 * frames (the trace's tree), a frame another stack marked ends the walk:
 * that stack's walk went on from it to the outermost frame, and its
 * entries are the same (the pass shares frames only when no mapping
 * overlaps another, so an address has one entry whatever the call). */
static void mark_bt(rt_resolver *r, rt_trace *t, uint32_t bt, uint64_t call_index, rt_rwalk *w)
{
	rt_bt_iter it;
	rt_trace_bt_iter(t, bt, &it);
	uint64_t addr;
	for (uint32_t *text; (text = rt_trace_bt_next_text(&it, &addr));) {
		if (*text != RT_NONE) {
			if (*text & RMARK && w->shared)
				return;
			continue;
		}
		rt_rent *e = rt_resolve_entry(r, addr, call_index, false);
		if (e)
			*text = RMARK | (uint32_t)(e - r->ents);
	}
}

/* In place, second walk: the marked frames of bt take their texts. On
 * the tree with no text before the pass, a frame with a text was given
 * it by another stack's walk, which went on to the outermost frame. */
static void unmark_bt(rt_resolver *r, rt_trace *t, uint32_t bt, const rt_rwalk *w)
{
	rt_bt_iter it;
	rt_trace_bt_iter(t, bt, &it);
	uint64_t addr;
	for (uint32_t *text; (text = rt_trace_bt_next_text(&it, &addr));) {
		if (*text == RT_NONE)
			continue;
		if (!(*text & RMARK)) {
			if (w->shared && !w->had_text)
				return;
			continue;
		}
		rt_rent *e = &r->ents[*text & ~RMARK];
		if (e->text_id != RT_NONE && !e->recorded)
			record(r, e);
		*text = e->text_id;
	}
}

static void collect_bt(rt_resolver *r, rt_trace *t, uint32_t bt, uint64_t call_index, rt_rwalk *w)
{
	const rt_frame *f = rt_trace_bt_frames(t, bt);
	for (uint32_t i = 0, n = rt_trace_bt_len(t, bt); i < n; i++) {
		if (f[i].text != RT_NONE)
			continue;
		rt_rent *e = rt_resolve_entry(r, f[i].addr, call_index, false);
		uint32_t id = e ? (uint32_t)(e - r->ents) : RT_NONE;
		RT_PUSH(w->ents, w->nents, w->cents, id);
	}
}

/* The backtrace bt with its unresolved frames resolved, interned. */
static uint32_t resolve_bt(rt_resolver *r, rt_trace *t, uint32_t bt, rt_rwalk *w)
{
	uint32_t n = rt_trace_bt_len(t, bt);
	if (!n)
		return bt;
	rt_grow((void **)&w->buf, &w->cap, n, sizeof *w->buf);
	memcpy(w->buf, rt_trace_bt_frames(t, bt), n * sizeof *w->buf);
	bool changed = false;
	for (uint32_t i = 0; i < n; i++) {
		rt_frame *f = &w->buf[i];
		if (f->text != RT_NONE)
			continue; /* resolved already, perhaps on the traced machine */
		uint32_t id = w->ents[w->next++];
		rt_rent *e = id != RT_NONE ? &r->ents[id] : NULL;
		if (!e || e->text_id == RT_NONE)
			continue;
		if (!e->recorded)
			record(r, e);
		f->text = e->text_id;
		changed = true;
	}
	return changed ? rt_trace_intern_bt(t, w->buf, n) : bt;
}

/* One backtrace of a walk: collected the first time it is seen, or
 * rewritten (the memo gives each backtrace its resolved id once). */
static void walk_bt(rt_resolver *r, rt_trace *t, rt_rwalk *w, uint32_t *bt, uint64_t index,
		    bool resolve)
{
	if (*bt >= w->nbt)
		return;
	if (w->memo[*bt] == RT_NONE && !resolve) {
		if (w->in_place)
			mark_bt(r, t, *bt, index, w);
		else
			collect_bt(r, t, *bt, index, w);
		w->memo[*bt] = *bt;
	} else if (w->memo[*bt] == RT_NONE && w->in_place) {
		unmark_bt(r, t, *bt, w);
		w->memo[*bt] = *bt;
	} else if (w->memo[*bt] == RT_NONE) {
		w->memo[*bt] = resolve_bt(r, t, *bt, w);
	}
	if (resolve)
		*bt = w->memo[*bt];
}

/* One walk over the calls, then the stacks of the heap checking results
 * (loss records read from Valgrind XML or of checks on demand, heap
 * errors' release, allocation and free stacks, which need not be any
 * call's): collecting (resolve
 * false) or rewriting their backtraces. */
static void walk_calls(rt_resolver *r, rt_trace *t, rt_rwalk *w, bool resolve)
{
	rt_call *calls = w->roots ? NULL : rt_trace_calls(t);
	for (size_t i = 0, n = calls ? rt_trace_call_count(t) : 0; i < n; i++)
		if (calls[i].kind != RT_CALL_DEAD)
			walk_bt(r, t, w, &calls[i].bt, calls[i].index, resolve);
	for (size_t i = 0; i < w->nroots; i++)
		walk_bt(r, t, w, &w->roots[i], w->root_index[i], resolve);
	size_t nl = rt_trace_leak_count(t), ne = rt_trace_heap_error_count(t);
	rt_leak *l = nl ? rt_trace_leaks(t) : NULL;
	for (size_t i = 0; i < nl; i++)
		walk_bt(r, t, w, &l[i].bt, l[i].index, resolve);
	rt_heap_error *e = ne ? rt_trace_heap_errors(t) : NULL;
	for (size_t i = 0; i < ne; i++) {
		walk_bt(r, t, w, &e[i].bt, e[i].index, resolve);
		walk_bt(r, t, w, &e[i].alloc_bt, e[i].index, resolve);
		walk_bt(r, t, w, &e[i].free_bt, e[i].index, resolve);
	}
	rt_leak_check *c = rt_trace_checks(t); /* the loss records of checks on demand */
	for (size_t i = 0, n = rt_trace_check_count(t); i < n; i++)
		for (size_t k = 0; k < c[i].nloss; k++)
			walk_bt(r, t, w, &c[i].loss[k].bt, c[i].index, resolve);
	rt_dropped *d = rt_trace_dropped(t); /* the lifetime filter's counts */
	for (size_t i = 0, n = rt_trace_dropped_count(t); i < n; i++)
		walk_bt(r, t, w, &d[i].bt, d[i].index, resolve);
}

static void mark_resolved(rt_trace *t)
{
	if (rt_trace_filter_bits(t) & RT_FILTER_RESOLVE)
		return;
	const char *f = rt_trace_header(t, "filter");
	char buf[256];
	snprintf(buf, sizeof buf, "%s%sresolve", f ? f : "", f && *f ? "|" : "");
	rt_trace_set_header(t, "filter", buf);
}

static void resolve_walks(rt_trace *t, rt_rwalk *wp, const rt_resolve_opts *opts, rt_resolve_stats *st)
{
	rt_resolver *r = rt_resolve_new_for(t, opts, t);
	uint32_t nbt = rt_trace_bt_count(t);
	rt_rwalk w = *wp;
	w.memo = rt_xmalloc((nbt ? nbt : 1) * sizeof *w.memo);
	w.nbt = nbt;
	/* string ids and entries must stay below RMARK to be told apart */
	w.in_place = opts && opts->in_place && rt_trace_str_count(t) < RMARK;
	/* stacks share frames while the trace keeps them as a tree: in place,
	 * only where an address resolves the same at every call (python3's
	 * 2.13M frames are 271k nodes: no 34 MB array is laid out) */
	if (w.in_place && rt_trace_bts_shared(t) && !r->all_alone)
		rt_trace_bts_unshare(t);
	w.shared = w.in_place && rt_trace_bts_shared(t);
	w.had_text = rt_trace_bts_have_text(t);
	size_t memo_size = (nbt ? nbt : 1) * sizeof *w.memo;
	memset(w.memo, 0xff, memo_size); /* RT_NONE */
	walk_calls(r, t, &w, false);
	compute_pending(r);
	memset(w.memo, 0xff, memo_size);
	walk_calls(r, t, &w, true);
	/* in place, stacks that came out equal: every id to the first's; none
	 * can where no frame had a text (they still differ in an address),
	 * and the table waits for the next stack interned */
	if (w.in_place && !w.had_text)
		rt_trace_bts_reindex_later(t);
	else if (w.in_place && rt_trace_bts_reindex(t, w.memo))
		walk_calls(r, t, &w, true);
	mark_resolved(t);
	if (st)
		*st = r->st;
	free(w.buf);
	free(w.ents);
	free(w.memo);
	rt_resolve_free(r);
}

/* Stacks given as (bt, index) pairs rather than calls: `rtrace heap`
 * kept no calls, and a call per site to walk was 56 bytes where the pair
 * is 12 (python3's 87,902 sites: 4.9 MB of calls at the peak of RSS). */
void rt_resolve_bts(rt_trace *t, uint32_t *bts, const uint64_t *index, size_t n,
		    const rt_resolve_opts *opts, rt_resolve_stats *st)
{
	rt_rwalk w = {.roots = bts, .root_index = index, .nroots = n};
	resolve_walks(t, &w, opts, st);
}

void rt_resolve_trace(rt_trace *t, const rt_resolve_opts *opts, rt_resolve_stats *st)
{
	rt_rwalk w = {0};
	resolve_walks(t, &w, opts, st);
}
