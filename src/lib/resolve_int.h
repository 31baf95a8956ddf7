/* Internals of the resolver (resolve.c, resolve_module.c, resolve_dwarf.c). */
#ifndef RT_RESOLVE_INT_H
#define RT_RESOLVE_INT_H

#include "rtrace/resolve.h"
#include "util.h"

#include <elfutils/libdwfl.h>

typedef struct rt_rcu rt_rcu; /* a unit's functions by address (resolve_funcs.c) */

/* A function symbol of a module, in libdwfl's address space. */
typedef struct rt_rsym {
	uint64_t addr, size;
	const char *name;
	int index; /* in the symbol table */
} rt_rsym;

enum { MOD_UNOPENED = 0, MOD_OK, MOD_FAILED };

/* A module file, opened once however many mappings it has. */
typedef struct rt_rmod {
	const char *path; /* as the trace names it */
	int state;
	Dwfl *dwfl;       /* one per module: mappings of different modules may
			   * overlap (dlclose then dlopen) */
	Dwfl_Module *mod;
	uint64_t dwfl_bias; /* libdwfl address = link-time address + this */
	Elf *elf;           /* main file, for its program headers */
	rt_rsym *syms;      /* sorted by addr; from .symtab, else .dynsym */
	size_t nsyms;
	rt_rcu **cus;       /* units looked into, sorted by DIE offset */
	size_t ncus, ccus;
} rt_rmod;

/* A mapping of the trace, with the module behind it. */
typedef struct rt_rmap {
	uint64_t from, to, offset, since, until;
	uint64_t maxto; /* highest `to` of this and every earlier mapping */
	uint32_t mod;   /* index into mods */
	uint32_t order; /* position in the trace's map (later wins a tie) */
	bool placed;    /* bias computed */
	bool bad;       /* the module has no segment for this mapping */
	int64_t bias;   /* libdwfl address = runtime address - bias */
} rt_rmap;

/* A resolved address, cached. */
typedef struct rt_rent {
	uint64_t addr;
	uint32_t map;
	uint32_t n, off; /* inline chain: locs[off .. off + n) */
	const char *text;
	uint32_t text_id; /* in the trace, for rt_resolve_trace; RT_NONE until then */
} rt_rent;

struct rt_resolver {
	const rt_trace *t;
	rt_resolve_opts o;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	rt_arena arena;
	rt_strtab strs; /* names and files, one copy each */
	rt_strtab mangled;       /* C++ symbols seen, by id: */
	const char **demangled;  /* their demangled form, NULL until needed */
	size_t ndemangled, cdemangled;
	rt_strtab paths;         /* module paths; a path's id indexes mods */
	rt_rmod *mods;
	size_t nmods;
	rt_rmap *maps; /* sorted by from */
	size_t nmaps;
	rt_rent *ents;
	size_t nents, cents;
	uint32_t *slots; /* ents index + 1 */
	size_t nslots;
	rt_resolve_loc *locs;
	size_t nlocs, clocs;
	rt_resolve_stats st;
	char *buf; /* text being formatted */
	size_t cbuf;
};

/* resolve_module.c */
bool rt_resolve_open_module(rt_resolver *r, rt_rmod *m, const rt_rmap *map);
void rt_resolve_close_module(rt_rmod *m);
bool rt_resolve_place(rt_resolver *r, rt_rmap *map);
const rt_rsym *rt_resolve_symbol(const rt_rmod *m, uint64_t addr);
void rt_resolve_warn(rt_resolver *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* resolve_funcs.c: the function definition containing pc in a unit */
bool rt_resolve_function(rt_rmod *m, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *out);
void rt_resolve_free_units(rt_rmod *m);

/* resolve_dwarf.c */
const char *rt_resolve_intern(rt_resolver *r, const char *s);
const char *rt_resolve_demangle(rt_resolver *r, const char *name, bool *demangled);
const char *rt_resolve_symbol_name(rt_resolver *r, const char *sym, bool *demangled);
/* Appends the inline chain of libdwfl address a in m to r->locs; returns
 * its length (0 when the module has no DWARF for it). */
uint32_t rt_resolve_dwarf(rt_resolver *r, rt_rmod *m, uint64_t a);
const char *rt_resolve_format(rt_resolver *r, const char *module, const rt_resolve_loc *locs,
			      uint32_t n);

#endif
