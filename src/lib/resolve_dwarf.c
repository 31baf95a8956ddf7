/* The resolver's DWARF side: the inline chain at an address, function
 * names (linkage names demangled), and the text written after a frame's
 * address. */
#include "resolve_int.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (the C++ ABI's entry point). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define MAX_SCOPES 128

const char *rt_resolve_intern(rt_resolver *r, const char *s)
{
	uint32_t id = rt_strtab_intern(&r->strs, s, strlen(s)); /* may grow strs */
	return r->strs.strs[id];
}

/* A symbol's name without its version ("__libc_start_main@@GLIBC_2.34"
 * in glibc's symbol table), demangled. */
const char *rt_resolve_symbol_name(rt_resolver *r, const char *sym, bool *demangled)
{
	const char *at = strchr(sym, '@');
	if (!at || at == sym)
		return rt_resolve_demangle(r, sym, demangled);
	size_t len = (size_t)(at - sym);
	rt_grow((void **)&r->buf, &r->cbuf, len + 1, 1);
	memcpy(r->buf, sym, len);
	r->buf[len] = '\0';
	return rt_resolve_demangle(r, r->buf, demangled);
}

/* Demangles a C++ symbol; other names come back as they are. Each name is
 * demangled once: the result is kept by the name's interned id. */
const char *rt_resolve_demangle(rt_resolver *r, const char *name, bool *demangled)
{
	*demangled = false;
	if (name[0] != '_' || name[1] != 'Z')
		return rt_resolve_intern(r, name);
	uint32_t id = rt_strtab_intern(&r->mangled, name, strlen(name));
	if (id >= r->ndemangled) {
		rt_grow((void **)&r->demangled, &r->cdemangled, id + 1, sizeof *r->demangled);
		while (r->ndemangled <= id)
			r->demangled[r->ndemangled++] = NULL;
	}
	if (!r->demangled[id]) {
		int status = 0;
		char *d = __cxa_demangle(name, NULL, NULL, &status);
		r->demangled[id] = rt_resolve_intern(r, d && !status ? d : name);
		free(d);
	}
	*demangled = strcmp(r->demangled[id], name) != 0;
	return r->demangled[id];
}

/* The name addr2line and Valgrind show: the linkage name when there is
 * one (C++), the plain name otherwise (C), following abstract origins and
 * specifications. */
static const char *die_name(rt_resolver *r, Dwarf_Die *die, bool *demangled, bool *linkage)
{
	Dwarf_Attribute attr;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	*linkage = name != NULL;
	if (!name)
		name = dwarf_diename(die);
	*demangled = false;
	return name ? rt_resolve_demangle(r, name, demangled) : NULL;
}

/* A function known by its plain DWARF name (C, or C++ with internal
 * linkage) is named by its symbol when the symbol holding the address
 * starts inside it, as addr2line and Valgrind name it: with the
 * parameters of a C++ function, "[clone .constprop.0]" for a clone. Of
 * aliases, one spelled as DWARF has it wins (glibc's
 * __libc_start_main_impl has three other names), else the first. */
static void symbol_for_function(rt_resolver *r, rt_rmod *m, Dwarf_Die *die, Dwarf_Addr bias,
				uint64_t a, rt_resolve_loc *loc)
{
	const rt_rsym *sym = rt_resolve_symbol(m, a), *end = m->syms + m->nsyms;
	if (!sym || sym->addr < bias || dwarf_haspc(die, sym->addr - bias) <= 0)
		return;
	for (const rt_rsym *s = sym; loc->fn && s < end && s->addr == sym->addr; s++) {
		size_t n = strlen(loc->fn);
		if (!strncmp(s->name, loc->fn, n) && (!s->name[n] || s->name[n] == '@'))
			return;
	}
	loc->fn = rt_resolve_symbol_name(r, sym->name, &loc->demangled);
}

static bool is_function(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* Walks down from parent (a function) to the innermost scope containing
 * pc, appending each scope to chain: inlined calls, lexical blocks. */
static int descend(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *chain, int depth)
{
	Dwarf_Die child;
	if (depth >= MAX_SCOPES || dwarf_child(parent, &child) != 0)
		return depth;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_entry_point:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_with_stmt:
			if (dwarf_haspc(&child, pc) > 0) {
				chain[depth] = child;
				return descend(&chain[depth], pc, chain, depth + 1);
			}
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return depth;
}

/* A source path as addr2line prints it: libdw has joined it with the
 * compilation directory when that is absolute; a relative one (glibc's
 * "./libio") is put in front of a relative path as binutils and elfutils
 * do. */
static const char *src_path(rt_resolver *r, Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute attr;
	const char *dir = file[0] == '/' ? NULL : dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (!dir)
		return rt_resolve_intern(r, file);
	size_t len = strlen(dir) + strlen(file) + 2;
	rt_grow((void **)&r->buf, &r->cbuf, len, 1);
	snprintf(r->buf, len, "%s/%s", dir, file);
	return rt_resolve_intern(r, r->buf);
}

/* Where an inlined call was made: its DW_AT_call_file and DW_AT_call_line. */
static void call_site(rt_resolver *r, Dwarf_Die *cu, Dwarf_Die *die, Dwarf_Files *files,
		      rt_resolve_loc *loc)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;
	const char *file = NULL;
	loc->file = NULL;
	loc->line = 0;
	if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &v) == 0)
		file = dwarf_filesrc(files, v, NULL, NULL);
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &v) == 0)
		loc->line = (uint32_t)v;
	if (file && loc->line)
		loc->file = src_path(r, cu, file);
}

static void push_loc(rt_resolver *r, const rt_resolve_loc *loc)
{
	RT_PUSH(r->locs, r->nlocs, r->clocs, *loc);
}

uint32_t rt_resolve_dwarf(rt_resolver *r, rt_rmod *m, uint64_t a)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, a, &bias);
	if (!cu)
		return 0;
	Dwarf_Die chain[MAX_SCOPES];
	int n = 0;
	if (rt_resolve_function(m, cu, a - bias, &chain[0]))
		n = descend(&chain[0], a - bias, chain, 1);
	rt_resolve_loc loc = {NULL, NULL, 0, false};
	int line = 0;
	Dwfl_Line *l = dwfl_module_getsrc(m->mod, a);
	const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
	if (file && line > 0) {
		loc.file = src_path(r, cu, file);
		loc.line = (uint32_t)line;
	}
	Dwarf_Files *files = NULL;
	if (dwarf_getsrcfiles(cu, &files, NULL) != 0)
		files = NULL;
	uint32_t count = 0;
	for (int i = n - 1; i >= 0; i--) {
		int tag = dwarf_tag(&chain[i]);
		if (!is_function(tag))
			continue;
		bool linkage;
		loc.fn = die_name(r, &chain[i], &loc.demangled, &linkage);
		if (!linkage && tag == DW_TAG_subprogram)
			symbol_for_function(r, m, &chain[i], bias, a, &loc);
		push_loc(r, &loc);
		count++;
		if (tag != DW_TAG_inlined_subroutine)
			break;
		call_site(r, cu, &chain[i], files, &loc); /* the caller's file:line */
	}
	if (!count && loc.file) { /* a line without a function */
		push_loc(r, &loc);
		count = 1;
	}
	return count;
}

static void put(rt_resolver *r, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put(rt_resolver *r, size_t *len, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(r->buf + *len, r->cbuf - *len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (*len + (size_t)n < r->cbuf) {
			*len += (size_t)n;
			return;
		}
		rt_grow((void **)&r->buf, &r->cbuf, *len + (size_t)n + 1, 1);
	}
}

/* sp-rtrace's frame text: "fn() at file:line", "fn() from module",
 * "from module"; a demangled C++ name already has its parameters. */
const char *rt_resolve_format(rt_resolver *r, const char *module, const rt_resolve_loc *locs,
			      uint32_t n)
{
	size_t len = 0;
	if (!module)
		return NULL;
	if (r->cbuf < 256)
		rt_grow((void **)&r->buf, &r->cbuf, 256, 1);
	if (n && locs[0].fn)
		put(r, &len, "%s%s ", locs[0].fn, locs[0].demangled ? "" : "()");
	if (n && locs[0].file)
		put(r, &len, "at %s:%u", locs[0].file, locs[0].line);
	else
		put(r, &len, "from %s", module);
	return rt_resolve_intern(r, r->buf);
}
