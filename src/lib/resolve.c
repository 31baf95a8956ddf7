/* The resolver: the trace's memory map as a sorted table of mappings, a
 * cache of resolved addresses, and the pass over a trace's backtraces.
 *
 * Each module file is opened once (resolve_module.c) at its link-time
 * addresses; every mapping of it carries its own bias, so one module
 * serves all the places it was loaded at. Mappings of different modules
 * may overlap when a module was dlclose'd and another one dlopen'ed at the
 * same addresses: the call's index picks the mapping that was live then. */
#include "resolve_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libdwfl's search path for separate debug info: the module's directory
 * and its .debug subdirectory (for .gnu_debuglink), the --debug-dir
 * directories, then the system's (under the root). Build ids are looked
 * up under every absolute directory of it. */
static char *debuginfo_path(const rt_resolve_opts *o)
{
	size_t len = 64 + (o->root ? strlen(o->root) : 0);
	for (size_t i = 0; i < o->ndebug_dirs; i++)
		len += strlen(o->debug_dirs[i]) + 1;
	char *p = rt_xmalloc(len);
	strcpy(p, ":.debug");
	for (size_t i = 0; i < o->ndebug_dirs; i++) {
		strcat(p, ":");
		strcat(p, o->debug_dirs[i]);
	}
	strcat(p, ":");
	if (o->root)
		strcat(p, o->root);
	strcat(p, "/usr/lib/debug");
	return p;
}

static int map_cmp(const void *a, const void *b)
{
	const rt_rmap *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* One rt_rmap per mapping of the trace, sorted by start address; maxto
 * bounds the backward scan for mappings that overlap. */
static void build_maps(rt_resolver *r)
{
	size_t n = rt_trace_mmap_count(r->t);
	r->maps = rt_xcalloc(n ? n : 1, sizeof *r->maps);
	for (size_t i = 0; i < n; i++) {
		const rt_mmap *m = rt_trace_mmap_at(r->t, i);
		if (m->to <= m->from || !m->module || !*m->module)
			continue;
		uint32_t id = rt_strtab_intern(&r->paths, m->module, strlen(m->module));
		if (id >= r->nmods) {
			r->mods = rt_xrealloc(r->mods, (id + 1) * sizeof *r->mods);
			memset(&r->mods[id], 0, sizeof *r->mods);
			r->mods[id].path = r->paths.strs[id];
			r->nmods = id + 1;
		}
		rt_rmap *map = &r->maps[r->nmaps++];
		*map = (rt_rmap){m->from, m->to, m->offset, m->since, m->until, 0, id,
				 (uint32_t)i, false, false, 0};
	}
	qsort(r->maps, r->nmaps, sizeof *r->maps, map_cmp);
	uint64_t maxto = 0;
	for (size_t i = 0; i < r->nmaps; i++) {
		if (r->maps[i].to > maxto)
			maxto = r->maps[i].to;
		r->maps[i].maxto = maxto;
	}
}

rt_resolver *rt_resolve_new(const rt_trace *t, const rt_resolve_opts *opts)
{
	static const rt_resolve_opts none = {0};
	rt_resolver *r = rt_xcalloc(1, sizeof *r);
	r->t = t;
	r->o = opts ? *opts : none;
	rt_arena_init(&r->arena);
	rt_strtab_init(&r->strs, &r->arena);
	rt_strtab_init(&r->mangled, &r->arena);
	rt_strtab_init(&r->paths, &r->arena);
	if (r->o.root) /* module paths are absolute: ROOT + /lib/x.so */
		r->o.root = rt_arena_strndup(&r->arena, r->o.root,
					     strlen(r->o.root) - (r->o.root[0] && r->o.root[strlen(r->o.root) - 1] == '/'));
	r->debuginfo_path = debuginfo_path(&r->o);
	r->o.debug_dirs = NULL; /* not kept: only the path string is used */
	r->o.ndebug_dirs = 0;
	r->cb.find_elf = dwfl_build_id_find_elf;
	r->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	r->cb.section_address = dwfl_offline_section_address;
	r->cb.debuginfo_path = &r->debuginfo_path;
	build_maps(r);
	return r;
}

void rt_resolve_free(rt_resolver *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nmods; i++)
		rt_resolve_close_module(&r->mods[i]);
	free(r->mods);
	free(r->maps);
	free(r->ents);
	free(r->slots);
	free(r->locs);
	free(r->demangled);
	free(r->buf);
	free(r->debuginfo_path);
	rt_strtab_free(&r->strs);
	rt_strtab_free(&r->mangled);
	rt_strtab_free(&r->paths);
	rt_arena_free(&r->arena);
	free(r);
}

void rt_resolve_get_stats(const rt_resolver *r, rt_resolve_stats *st)
{
	*st = r->st;
}

/* The mapping holding a: of several (a module unloaded, another loaded at
 * its place), the one live at the call, else the one mapped last. */
static rt_rmap *find_map(rt_resolver *r, uint64_t a, uint64_t call_index)
{
	size_t lo = 0, hi = r->nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->maps[mid].from <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	rt_rmap *best = NULL;
	bool best_live = false;
	for (size_t i = lo; i > 0 && r->maps[i - 1].maxto > a; i--) {
		rt_rmap *m = &r->maps[i - 1];
		if (a >= m->to)
			continue;
		bool live = call_index >= m->since && call_index < m->until;
		if (!best || live > best_live ||
		    (live == best_live && (m->since > best->since ||
					   (m->since == best->since && m->order > best->order)))) {
			best = m;
			best_live = live;
		}
	}
	return best;
}

/* The function name from the symbol table, for an address that DWARF
 * does not name. */
static void symbol_name(rt_resolver *r, rt_rmod *m, uint64_t a, uint32_t *n)
{
	const rt_rsym *sym = rt_resolve_symbol(m, a);
	if (!sym)
		return;
	bool demangled;
	const char *fn = rt_resolve_symbol_name(r, sym->name, &demangled);
	if (*n) { /* a line without a function */
		r->locs[r->nlocs - *n].fn = fn;
		r->locs[r->nlocs - *n].demangled = demangled;
		return;
	}
	rt_resolve_loc loc = {fn, NULL, 0, demangled};
	RT_PUSH(r->locs, r->nlocs, r->clocs, loc);
	*n = 1;
}

/* Looks up libdwfl address a (the call instruction for a return address)
 * of mapping map: the inline chain from DWARF, else a symbol's name. */
static void compute(rt_resolver *r, rt_rmap *map, uint64_t a, rt_rent *e)
{
	rt_rmod *m = &r->mods[map->mod];
	e->off = (uint32_t)r->nlocs;
	e->n = 0;
	r->st.addrs++;
	e->text = NULL;
	e->text_id = RT_NONE;
	/* an unreadable module leaves the address bare, so that a later run
	 * (with --root or --debug-dir) can still resolve it */
	if (!rt_resolve_open_module(r, m, map) || (!map->placed && !rt_resolve_place(r, map)) ||
	    map->bad)
		return;
	uint64_t da = a - (uint64_t)map->bias;
	e->n = rt_resolve_dwarf(r, m, da);
	if (!e->n || !r->locs[e->off].fn)
		symbol_name(r, m, da, &e->n);
	if (e->n && r->locs[e->off].fn)
		r->st.functions++;
	if (e->n && r->locs[e->off].file)
		r->st.lines++;
	e->text = rt_resolve_format(r, m->path, r->locs + e->off, e->n);
}

static size_t ent_hash(uint64_t addr, uint32_t map)
{
	return (size_t)rt_mix64(addr * 31 + map);
}

static void ents_rehash(rt_resolver *r)
{
	free(r->slots);
	r->nslots = r->nslots ? r->nslots * 2 : 1024;
	r->slots = rt_xcalloc(r->nslots, sizeof *r->slots);
	for (size_t i = 0; i < r->nents; i++) {
		size_t j = ent_hash(r->ents[i].addr, r->ents[i].map) & (r->nslots - 1);
		while (r->slots[j])
			j = (j + 1) & (r->nslots - 1);
		r->slots[j] = (uint32_t)i + 1;
	}
}

/* The cached entry for addr, computing it on first sight; NULL when addr
 * is in no mapping. */
static rt_rent *entry(rt_resolver *r, uint64_t addr, uint64_t call_index)
{
	uint64_t a = r->o.exact ? addr : addr - 1;
	rt_rmap *map = find_map(r, a, call_index);
	if (!map)
		return NULL;
	uint32_t mi = (uint32_t)(map - r->maps);
	if ((r->nents + 1) * 2 > r->nslots)
		ents_rehash(r);
	size_t j = ent_hash(addr, mi) & (r->nslots - 1);
	for (; r->slots[j]; j = (j + 1) & (r->nslots - 1)) {
		rt_rent *e = &r->ents[r->slots[j] - 1];
		if (e->addr == addr && e->map == mi)
			return e;
	}
	rt_rent e = {addr, mi, 0, 0, NULL, RT_NONE};
	compute(r, map, a, &e);
	RT_PUSH(r->ents, r->nents, r->cents, e);
	r->slots[j] = (uint32_t)r->nents;
	return &r->ents[r->nents - 1];
}

bool rt_resolve_addr(rt_resolver *r, uint64_t addr, uint64_t call_index, rt_resolved *out)
{
	rt_rent *e = entry(r, addr, call_index);
	memset(out, 0, sizeof *out);
	if (!e)
		return false;
	out->module = r->mods[r->maps[e->map].mod].path;
	out->n = e->n;
	out->locs = e->n ? r->locs + e->off : NULL;
	out->text = e->text;
	return true;
}

/* Interns e's text in t and records the frame's inline chain there. */
static uint32_t record(rt_resolver *r, rt_trace *t, rt_rent *e)
{
	e->text_id = rt_trace_intern(t, e->text, strlen(e->text));
	rt_srcloc locs[64];
	uint32_t n = e->n < 64 ? e->n : 64;
	for (uint32_t i = 0; i < n; i++) {
		const rt_resolve_loc *l = &r->locs[e->off + i];
		locs[i].fn = l->fn ? rt_trace_intern(t, l->fn, strlen(l->fn)) : RT_NONE;
		locs[i].file = l->file ? rt_trace_intern(t, l->file, strlen(l->file)) : RT_NONE;
		locs[i].line = l->line;
		locs[i].flags = l->demangled ? RT_SRCLOC_DEMANGLED : 0;
	}
	const char *mod = r->mods[r->maps[e->map].mod].path;
	rt_frame f = {e->addr, e->text_id};
	rt_trace_set_frame_info(t, &f, rt_trace_intern(t, mod, strlen(mod)), locs, n);
	return e->text_id;
}

/* The backtrace bt with its unresolved frames resolved, interned. */
static uint32_t resolve_bt(rt_resolver *r, rt_trace *t, uint32_t bt, uint64_t call_index,
			   rt_frame **buf, size_t *cap)
{
	uint32_t n = rt_trace_bt_len(t, bt);
	if (!n)
		return bt;
	rt_grow((void **)buf, cap, n, sizeof **buf);
	memcpy(*buf, rt_trace_bt_frames(t, bt), n * sizeof **buf);
	bool changed = false;
	for (uint32_t i = 0; i < n; i++) {
		rt_frame *f = &(*buf)[i];
		if (f->text != RT_NONE)
			continue; /* resolved already, perhaps on the traced machine */
		rt_rent *e = entry(r, f->addr, call_index);
		if (!e || !e->text)
			continue;
		f->text = e->text_id != RT_NONE ? e->text_id : record(r, t, e);
		changed = true;
	}
	return changed ? rt_trace_intern_bt(t, *buf, n) : bt;
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

void rt_resolve_trace(rt_trace *t, const rt_resolve_opts *opts, rt_resolve_stats *st)
{
	rt_resolver *r = rt_resolve_new(t, opts);
	uint32_t nbt = rt_trace_bt_count(t);
	uint32_t *memo = rt_xmalloc((nbt ? nbt : 1) * sizeof *memo);
	memset(memo, 0xff, (nbt ? nbt : 1) * sizeof *memo); /* RT_NONE */
	rt_frame *buf = NULL;
	size_t cap = 0;
	rt_call *calls = rt_trace_calls(t);
	for (size_t i = 0, n = rt_trace_call_count(t); i < n; i++) {
		rt_call *c = &calls[i];
		if (c->kind == RT_CALL_DEAD || c->bt >= nbt)
			continue;
		if (memo[c->bt] == RT_NONE)
			memo[c->bt] = resolve_bt(r, t, c->bt, c->index, &buf, &cap);
		c->bt = memo[c->bt];
	}
	mark_resolved(t);
	if (st)
		*st = r->st;
	free(buf);
	free(memo);
	rt_resolve_free(r);
}
