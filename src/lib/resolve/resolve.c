/* The resolver: the trace's memory map as a sorted table of mappings, a
 * cache of resolved addresses. The pass over a trace's backtraces is
 * resolve_pass.c; the strings, hash and sort every resolver file uses are
 * resolve_base.c.
 *
 * Each module file is opened once (resolve_module.c) at its link-time
 * addresses; every mapping of it carries its own bias, so one module
 * serves all the places it was loaded at. Mappings of different modules
 * may overlap when a module was dlclose'd and another one dlopen'ed at the
 * same addresses: the call's index picks the mapping that was live then.
 * An address of a mapping that overlaps no other has one entry for every
 * call, found again through a direct-mapped cache by address (python3's
 * 2.1M frames, 3,674 addresses: `rtrace heap`'s resolution 0.15 -> 0.08 s). */
#include "resolve/resolve_int.h"

#include <stdio.h>
#include <dlfcn.h>
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
			r->mods[id].path_id = RT_NONE;
			r->nmods = id + 1;
		}
		rt_rmap *map = &r->maps[r->nmaps++];
		*map = (rt_rmap){m->from, m->to, m->offset, m->since, m->until, 0, id,
				 (uint32_t)i, false, false, false, 0};
	}
	qsort(r->maps, r->nmaps, sizeof *r->maps, map_cmp);
	uint64_t maxto = 0;
	r->all_alone = true;
	for (size_t i = 0; i < r->nmaps; i++) {
		r->maps[i].alone = r->maps[i].from >= maxto && (i + 1 == r->nmaps || r->maps[i + 1].from >= r->maps[i].to);
		r->all_alone &= r->maps[i].alone;
		if (r->maps[i].to > maxto)
			maxto = r->maps[i].to;
		r->maps[i].maxto = maxto;
	}
	for (size_t i = 0; i < r->nmods; i++)
		r->mods[i].owner = r;
}

rt_resolver *rt_resolve_new_for(const rt_trace *t, const rt_resolve_opts *opts, rt_trace *out)
{
	static const rt_resolve_opts none = {0};
	rt_resolver *r = rt_xcalloc(1, sizeof *r);
	r->t = t;
	r->out = out;
	r->o = opts ? *opts : none;
	rt_arena_init(&r->arena);
	rt_strtab_init(&r->strs, &r->arena);
	rt_strtab_init(&r->mangled, &r->arena);
	rt_strtab_init(&r->paths, &r->arena);
	if (r->o.root) /* module paths are absolute: ROOT + /lib/x.so */
		r->o.root = rt_arena_strndup(&r->arena, r->o.root,
					     strlen(r->o.root) - (r->o.root[0] && r->o.root[strlen(r->o.root) - 1] == '/'));
	if (r->o.cache_dir)
		r->o.cache_dir = rt_arena_strndup(&r->arena, r->o.cache_dir, strlen(r->o.cache_dir));
	r->debuginfo_path = debuginfo_path(&r->o);
	r->o.debug_dirs = NULL; /* not kept: only the path string is used */
	r->o.ndebug_dirs = 0;
	r->cb.find_elf = dwfl_build_id_find_elf;
	r->cb.find_debuginfo = rt_resolve_find_debuginfo;
	r->cb.section_address = dwfl_offline_section_address;
	r->cb.debuginfo_path = &r->debuginfo_path;
	build_maps(r);
	return r;
}

rt_resolver *rt_resolve_new(const rt_trace *t, const rt_resolve_opts *opts)
{
	return rt_resolve_new_for(t, opts, NULL);
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
	free(r->quick);
	free(r->locs);
	free(r->lids);
	free(r->demangled);
	if (r->cxx)
		dlclose(r->cxx);
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
	size_t lo = RT_COUNT_UPTO(r->maps, r->nmaps, from, a);
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
static void symbol_name(rt_resolver *r, rt_rmod *m, uint64_t a, rt_rent *e)
{
	rt_rsym *sym = rt_resolve_symbol(m, a);
	if (!sym)
		return;
	uint64_t name = rt_resolve_symbol_name(r, m, sym);
	if (e->n) { /* a line without a function */
		uint32_t fn = RT_RNAME_SHOWN(name), linkage = RT_RNAME_LINKAGE(name);
		r->locs[e->off].fn = rt_resolve_strp(r, fn);
		r->locs[e->off].demangled = linkage != RT_NONE;
		r->locs[e->off].linkage = linkage != RT_NONE ? rt_resolve_strp(r, linkage) : NULL;
		r->lids[e->off].fn = fn;
		r->lids[e->off].linkage = linkage;
		return;
	}
	rt_resolve_push(r, name, RT_NONE, 0);
	e->n = 1;
}

bool rt_resolve_usable(rt_resolver *r, rt_rmap *map)
{
	return rt_resolve_open_module(r, &r->mods[map->mod], map) &&
	       (map->placed || rt_resolve_place(r, map)) && !map->bad;
}

void rt_resolve_compute(rt_resolver *r, rt_rent *e)
{
	rt_rmap *map = &r->maps[e->map];
	rt_rmod *m = &r->mods[map->mod];
	e->off = (uint32_t)r->nlocs;
	e->n = 0;
	e->done = true;
	r->st.addrs++;
	if (!rt_resolve_usable(r, map))
		return;
	/* the call instruction of a return address */
	uint64_t da = (r->o.exact ? e->addr : e->addr - 1) - (uint64_t)map->bias;
	e->n = rt_resolve_dwarf(r, m, da);
	if (!e->n || !r->locs[e->off].fn)
		symbol_name(r, m, da, e);
	if (e->n && r->locs[e->off].fn)
		r->st.functions++;
	if (e->n && r->locs[e->off].file)
		r->st.lines++;
	e->text_id = rt_resolve_format(r, m->path, e->off, e->n);
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

/* The frames of a trace's stacks repeat a few thousand addresses
 * (python3: 2.1M frames, 3,674 addresses), and the search for the
 * mapping (a binary search, then a walk back over the mappings that may
 * overlap) and the entry's hash cost ~135 instructions a frame: an
 * address whose mapping overlaps no other (its entry is the same for
 * every call) is found again through a direct-mapped cache by address,
 * ~15. */
static rt_rquick *quick_slot(rt_resolver *r, uint64_t addr)
{
	if (!r->quick)
		r->quick = rt_xcalloc(RT_RQUICK, sizeof *r->quick);
	return &r->quick[(addr * 0x9e3779b97f4a7c15ull) >> (64 - 12)];
}

rt_rent *rt_resolve_entry(rt_resolver *r, uint64_t addr, uint64_t call_index, bool now)
{
	_Static_assert(RT_RQUICK == 1 << 12, "quick_slot's shift");
	rt_rquick *q = quick_slot(r, addr);
	if (q->ent1 && q->addr == addr)
		return q->ent1 != RT_RQUICK_NONE ? &r->ents[q->ent1 - 1] : NULL;
	rt_rmap *map = find_map(r, r->o.exact ? addr : addr - 1, call_index);
	if (!map) { /* in no mapping, at any call */
		*q = (rt_rquick){addr, RT_RQUICK_NONE};
		return NULL;
	}
	uint32_t mi = (uint32_t)(map - r->maps);
	if (map->alone)
		*q = (rt_rquick){addr, 0};
	if ((r->nents + 1) * 2 > r->nslots)
		ents_rehash(r);
	size_t j = ent_hash(addr, mi) & (r->nslots - 1);
	for (; r->slots[j]; j = (j + 1) & (r->nslots - 1)) {
		rt_rent *e = &r->ents[r->slots[j] - 1];
		if (e->addr == addr && e->map == mi) {
			if (map->alone)
				q->ent1 = r->slots[j];
			return e;
		}
	}
	rt_rent e = {addr, mi, 0, 0, RT_NONE, false, false};
	RT_PUSH(r->ents, r->nents, r->cents, e);
	r->slots[j] = (uint32_t)r->nents;
	if (map->alone)
		q->ent1 = (uint32_t)r->nents;
	if (now)
		rt_resolve_compute(r, &r->ents[r->nents - 1]);
	return &r->ents[r->nents - 1];
}

bool rt_resolve_addr(rt_resolver *r, uint64_t addr, uint64_t call_index, rt_resolved *out)
{
	rt_rent *e = rt_resolve_entry(r, addr, call_index, true);
	memset(out, 0, sizeof *out);
	if (!e)
		return false;
	out->module = r->mods[r->maps[e->map].mod].path;
	out->n = e->n;
	out->locs = e->n ? r->locs + e->off : NULL;
	out->text = e->text_id != RT_NONE ? rt_resolve_strp(r, e->text_id) : NULL;
	return true;
}
