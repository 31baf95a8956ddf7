/* The resolver's DWARF side: the inline chain at an address, function
 * names (linkage names demangled), and the text written after a frame's
 * address. Names are interned once per function DIE or symbol, paths
 * once per unit and file (resolve_funcs.c): what is left per address is
 * its scopes and its text. */
#include "resolve/resolve_int.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s soname: its demangler is the C++ ABI's entry point. */
#ifndef RTRACE_LIBSTDCXX
#define RTRACE_LIBSTDCXX "libstdc++.so.6"
#endif

/* libstdc++'s __cxa_demangle, loaded at the first C++ name: linked,
 * libstdc++ (with libm and libgcc_s) was ~0.4 ms of the start of every
 * rtrace command, `rtrace run` included, most of which demangle nothing.
 * NULL when it cannot be loaded: names then stay as they are. */
static char *(*demangler(rt_resolver *r))(const char *, char *, size_t *, int *)
{
	if (!r->cxx_tried) {
		r->cxx_tried = true;
		r->cxx = dlopen(RTRACE_LIBSTDCXX, RTLD_NOW | RTLD_LOCAL);
		if (r->cxx)
			*(void **)&r->demangle = dlsym(r->cxx, "__cxa_demangle");
		else
			rt_resolve_warn(r, "cannot load %s: C++ names are shown mangled", RTRACE_LIBSTDCXX);
	}
	return r->demangle;
}

#define MAX_SCOPES 128

/* A name and the name shown for it (RT_RNAME): a C++ symbol demangled,
 * with its linkage name, other names as they are. Each name is
 * demangled once: the result is kept by the name's interned id. */
uint64_t rt_resolve_demangle(rt_resolver *r, const char *name)
{
	if (name[0] != '_' || name[1] != 'Z')
		return RT_RNAME(rt_resolve_str(r, name, strlen(name)), RT_NONE);
	uint32_t id = rt_strtab_intern(&r->mangled, name, strlen(name));
	if (id >= r->ndemangled) {
		rt_grow((void **)&r->demangled, &r->cdemangled, id + 1, sizeof *r->demangled);
		while (r->ndemangled <= id)
			r->demangled[r->ndemangled++] = 0;
	}
	if (!r->demangled[id]) {
		int status = 0;
		char *(*fn)(const char *, char *, size_t *, int *) = demangler(r);
		char *d = fn ? fn(name, NULL, NULL, &status) : NULL;
		const char *s = d && !status ? d : name;
		r->demangled[id] = rt_resolve_str(r, s, strlen(s)) + 1;
		free(d);
	}
	uint32_t shown = r->demangled[id] - 1;
	if (!strcmp(rt_resolve_strp(r, shown), name))
		return RT_RNAME(shown, RT_NONE);
	return RT_RNAME(shown, rt_resolve_str(r, name, strlen(name)));
}

/* A symbol's name without its version ("__libc_start_main@@GLIBC_2.34"
 * in glibc's symbol table), demangled (RT_RNAME). */
static uint64_t unversioned_name(rt_resolver *r, const char *name)
{
	const char *at = strchr(name, '@');
	if (at && at != name) {
		size_t len = (size_t)(at - name);
		rt_grow((void **)&r->buf, &r->cbuf, len + 1, 1);
		memcpy(r->buf, name, len);
		r->buf[len] = '\0';
		name = r->buf;
	}
	return rt_resolve_demangle(r, name);
}

/* Of the aliases at sym's address (sym the first), the one valgrind
 * names the address by (storage.c's preferName): the shorter name up to
 * its version, of equal lengths a versioned one, else the first in
 * alphabetical order; so a constructor is _ZN1AC1Ev, not its alias
 * _ZN1AC2Ev. */
static const rt_rsym *preferred_alias(const rt_rmod *m, const rt_rsym *sym)
{
	const rt_rsym *best = sym;
	for (const rt_rsym *s = sym + 1; s < m->syms + m->nsyms && s->addr == sym->addr; s++) {
		size_t a = strcspn(s->name, "@"), b = strcspn(best->name, "@");
		bool av = s->name[a] != 0, bv = best->name[b] != 0;
		if (a < b || (a == b && av && !bv) || (a == b && av == bv && strcmp(s->name, best->name) < 0))
			best = s;
	}
	return best;
}

/* The symbol's name as shown, kept in the symbol. A C++ name's linkage
 * name, which valgrind's suppressions match, is that of the alias
 * valgrind prefers when it shows the same name. */
uint64_t rt_resolve_symbol_name(rt_resolver *r, const rt_rmod *m, rt_rsym *sym)
{
	if (sym->fn_name != RT_RNAME_UNKNOWN)
		return sym->fn_name;
	uint64_t name = unversioned_name(r, sym->name);
	const rt_rsym *p = RT_RNAME_LINKAGE(name) != RT_NONE ? preferred_alias(m, sym) : sym;
	if (p != sym) {
		uint64_t alias = unversioned_name(r, p->name);
		if (RT_RNAME_SHOWN(alias) == RT_RNAME_SHOWN(name) && RT_RNAME_LINKAGE(alias) != RT_NONE)
			name = alias;
	}
	sym->fn_name = name;
	return name;
}

/* The attributes a function's name comes from, as dwarf_attr_integrate
 * finds them: on the DIE, else on its abstract origin or specification,
 * and so on (8 DIEs at most). One pass over each DIE's attributes finds
 * them all, where dwarf_attr_integrate makes three passes for each. */
enum { A_LINKAGE, A_MIPS_LINKAGE, A_NAME, A_ORIGIN, A_SPEC, A_COUNT };

typedef struct rt_rattrs {
	Dwarf_Attribute a[A_COUNT];
	bool has[A_COUNT];
} rt_rattrs;

static int note_attr(Dwarf_Attribute *attr, void *arg)
{
	static const unsigned codes[A_COUNT] = {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name,
						DW_AT_abstract_origin, DW_AT_specification};
	rt_rattrs *n = arg;
	for (int i = 0; i < A_COUNT; i++) {
		if (dwarf_whatattr(attr) == codes[i] && !n->has[i]) {
			n->a[i] = *attr;
			n->has[i] = true;
		}
	}
	return DWARF_CB_OK;
}

/* The first of the name attributes along die's chain of origins: found[i]
 * for A_LINKAGE, A_MIPS_LINKAGE and A_NAME. False when a DIE cannot be
 * read (dwarf_attr_integrate then does the work). */
static bool integrate_names(Dwarf_Die *die, rt_rattrs *found)
{
	Dwarf_Die mem[2];
	memset(found, 0, sizeof *found);
	for (int depth = 0; die && depth < 8; depth++) {
		rt_rattrs n = {0};
		if (dwarf_getattrs(die, note_attr, &n, 0) != 1)
			return false;
		for (int i = A_LINKAGE; i <= A_NAME; i++) {
			if (n.has[i] && !found->has[i]) {
				found->a[i] = n.a[i];
				found->has[i] = true;
			}
		}
		Dwarf_Attribute *next = n.has[A_ORIGIN] ? &n.a[A_ORIGIN] : n.has[A_SPEC] ? &n.a[A_SPEC] : NULL;
		if (!next || (found->has[A_LINKAGE] && found->has[A_MIPS_LINKAGE] && found->has[A_NAME]))
			break;
		die = dwarf_formref_die(next, &mem[depth & 1]);
	}
	return true;
}

static const char *found_string(rt_rattrs *found, int i)
{
	return found->has[i] ? dwarf_formstring(&found->a[i]) : NULL;
}

/* The name addr2line and Valgrind show: the linkage name when there is
 * one (C++), the plain name otherwise (C), following abstract origins and
 * specifications. */
static uint64_t die_name(rt_resolver *r, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	rt_rattrs found;
	bool fast = integrate_names(die, &found);
	const char *name = fast ? found_string(&found, A_LINKAGE)
				: dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = fast ? found_string(&found, A_MIPS_LINKAGE)
			    : dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (name) { /* the linkage name, which valgrind's suppressions match */
		uint64_t n = rt_resolve_demangle(r, name);
		uint32_t linkage = RT_RNAME_LINKAGE(n);
		return RT_RNAME(RT_RNAME_SHOWN(n), linkage != RT_NONE ? linkage : RT_RNAME_SHOWN(n));
	}
	name = fast ? found_string(&found, A_NAME) : dwarf_diename(die);
	return name ? rt_resolve_demangle(r, name) : RT_RNAME(RT_NONE, RT_NONE);
}

/* A function known by its plain DWARF name (C, or C++ with internal
 * linkage) is named by its symbol when the symbol holding the address
 * starts inside it, as addr2line and Valgrind name it: with the
 * parameters of a C++ function, "[clone .constprop.0]" for a clone. Of
 * aliases, one spelled as DWARF has it wins (glibc's
 * __libc_start_main_impl has three other names), else the first. */
static uint64_t symbol_for_function(rt_resolver *r, rt_rmod *m, Dwarf_Die *die, Dwarf_Addr bias,
				    rt_rsym *sym, uint64_t name)
{
	const rt_rsym *end = m->syms + m->nsyms;
	if (sym->addr < bias || dwarf_haspc(die, sym->addr - bias) <= 0)
		return name;
	const char *fn = RT_RNAME_SHOWN(name) != RT_NONE ? rt_resolve_strp(r, RT_RNAME_SHOWN(name)) : NULL;
	for (const rt_rsym *s = sym; fn && s < end && s->addr == sym->addr; s++) {
		size_t n = strlen(fn);
		if (!strncmp(s->name, fn, n) && (!s->name[n] || s->name[n] == '@'))
			return name;
	}
	return rt_resolve_symbol_name(r, m, sym);
}

/* A function DIE's linkage name (RT_RNAME name), as valgrind names it:
 * by the symbol holding the address, the alias it prefers among those
 * (rt_resolve_symbol_name), when that shows the same name; a constructor
 * DWARF names _ZN1AC2Ev is its alias _ZN1AC1Ev then. */
static uint64_t symbol_linkage(rt_resolver *r, const rt_rmod *m, rt_rsym *sym, uint64_t name)
{
	uint64_t s = rt_resolve_symbol_name(r, m, sym);
	if (RT_RNAME_SHOWN(s) != RT_RNAME_SHOWN(name) || RT_RNAME_LINKAGE(s) == RT_NONE)
		return name;
	return RT_RNAME(RT_RNAME_SHOWN(name), RT_RNAME_LINKAGE(s));
}

/* The name of function DIE die (tag) at libdwfl address a, cached by the
 * DIE (in f when die is f's), and for a subprogram with a plain name also
 * by the symbol holding a. */
static uint64_t function_name(rt_resolver *r, rt_rmod *m, Dwarf_Die *die, int tag,
			      Dwarf_Addr bias, uint64_t a, rt_rfunc *f)
{
	uint64_t off = f ? 0 : dwarf_dieoffset(die), name = f ? f->name : RT_RNAME_UNKNOWN, named;
	if (name == RT_RNAME_UNKNOWN && (f || !rt_resolve_hash_get(&m->names, off, 0, &name))) {
		name = die_name(r, die);
		if (f)
			f->name = name;
		else
			rt_resolve_hash_put(&m->names, off, 0, name);
	}
	rt_rsym *sym;
	if (tag != DW_TAG_subprogram || !(sym = rt_resolve_symbol(m, a)))
		return name;
	if (RT_RNAME_LINKAGE(name) != RT_NONE)
		return symbol_linkage(r, m, sym, name);
	if (f && f->named_sym == sym)
		return f->named;
	if (f || !rt_resolve_hash_get(&m->names, off, (uintptr_t)sym, &named)) {
		named = symbol_for_function(r, m, die, bias, sym, name);
		if (f) {
			f->named_sym = sym;
			f->named = named;
		} else {
			rt_resolve_hash_put(&m->names, off, (uintptr_t)sym, named);
		}
	}
	return named;
}

static bool is_function(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

static bool is_scope(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_entry_point:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
		return true;
	default:
		return false;
	}
}

/* Walks down from parent (a function) to the innermost scope containing
 * pc, appending each scope to chain: inlined calls, lexical blocks.
 * *scopes (when not NULL) says whether parent has scopes at all. */
static int descend(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *chain, int depth, int8_t *scopes)
{
	Dwarf_Die child;
	if (scopes)
		*scopes = 0;
	if (depth >= MAX_SCOPES || dwarf_child(parent, &child) != 0)
		return depth;
	do {
		if (!is_scope(dwarf_tag(&child)))
			continue;
		if (scopes)
			*scopes = 1;
		if (dwarf_haspc(&child, pc) > 0) {
			chain[depth] = child;
			return descend(&chain[depth], pc, chain, depth + 1, NULL);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return depth;
}

/* Where an inlined call was made: its DW_AT_call_file and DW_AT_call_line
 * (a line without a known file is kept, as libdw gives it). */
static void call_site(rt_resolver *r, rt_rcu *cu, Dwarf_Die *die, uint32_t *file, uint32_t *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;
	uint32_t f = RT_NONE;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &v) == 0)
		f = rt_resolve_file(r, cu, v);
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &v) == 0)
		*line = (uint32_t)v;
	*file = f != RT_NONE && *line ? f : RT_NONE;
}

void rt_resolve_push(rt_resolver *r, uint64_t name, uint32_t file, uint32_t line)
{
	if (r->nlocs == r->clocs) {
		size_t cap = r->clocs;
		rt_grow((void **)&r->locs, &cap, r->nlocs + 1, sizeof *r->locs);
		rt_grow((void **)&r->lids, &r->clocs, r->nlocs + 1, sizeof *r->lids);
	}
	uint32_t fn = RT_RNAME_SHOWN(name), linkage = RT_RNAME_LINKAGE(name);
	if (linkage == fn)
		linkage = RT_NONE;
	r->locs[r->nlocs] = (rt_resolve_loc){fn != RT_NONE ? rt_resolve_strp(r, fn) : NULL,
					     file != RT_NONE ? rt_resolve_strp(r, file) : NULL, line,
					     linkage != RT_NONE, linkage != RT_NONE ? rt_resolve_strp(r, linkage) : NULL};
	r->lids[r->nlocs++] = (rt_rlid){fn, file, linkage};
}

uint32_t rt_resolve_dwarf(rt_resolver *r, rt_rmod *m, uint64_t a)
{
	Dwarf_Addr bias;
	Dwarf_Die *cudie = dwfl_module_addrdie(m->mod, a, &bias);
	if (!cudie)
		return 0;
	rt_rcu *cu = rt_resolve_unit(m, cudie);
	Dwarf_Die chain[MAX_SCOPES];
	int n = 0;
	rt_rfunc *f = rt_resolve_function(cu, a - bias);
	if (f) {
		chain[0] = f->die;
		n = f->scopes ? descend(&chain[0], a - bias, chain, 1, f->scopes < 0 ? &f->scopes : NULL) : 1;
	}
	uint32_t file = RT_NONE, line = 0, count = 0;
	if (!rt_resolve_line(r, m, cu, a, a - bias, &file, &line))
		file = RT_NONE, line = 0;
	for (int i = n - 1; i >= 0; i--) {
		int tag = dwarf_tag(&chain[i]);
		if (!is_function(tag))
			continue;
		uint64_t name = function_name(r, m, &chain[i], tag, bias, a, i == 0 ? f : NULL);
		rt_resolve_push(r, name, file, line);
		count++;
		if (tag != DW_TAG_inlined_subroutine)
			break;
		call_site(r, cu, &chain[i], &file, &line); /* the caller's file:line */
	}
	if (!count && file != RT_NONE) { /* a line without a function */
		rt_resolve_push(r, RT_RNAME(RT_NONE, RT_NONE), file, line);
		count = 1;
	}
	return count;
}

static void append(rt_resolver *r, size_t *len, const char *s, size_t n)
{
	rt_grow((void **)&r->buf, &r->cbuf, *len + n + 1, 1);
	memcpy(r->buf + *len, s, n);
	*len += n;
}

/* sp-rtrace's frame text: "fn() at file:line", "fn() from module",
 * "from module"; a demangled C++ name already has its parameters. */
uint32_t rt_resolve_format(rt_resolver *r, const char *module, uint32_t off, uint32_t n)
{
	const rt_resolve_loc *l = r->locs + off;
	size_t len = 0;
	char num[16];
	if (n && l->fn) {
		append(r, &len, l->fn, strlen(l->fn));
		append(r, &len, l->demangled ? " " : "() ", l->demangled ? 1 : 3);
	}
	if (n && l->file) {
		append(r, &len, "at ", 3);
		append(r, &len, l->file, strlen(l->file));
		append(r, &len, num, (size_t)snprintf(num, sizeof num, ":%u", l->line));
	} else {
		append(r, &len, "from ", 5);
		append(r, &len, module, strlen(module));
	}
	return rt_resolve_str(r, r->buf, len);
}
