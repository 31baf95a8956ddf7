/* Internals of the resolver (resolve*.c). */
#ifndef RT_RESOLVE_INT_H
#define RT_RESOLVE_INT_H

#include "rtrace/resolve.h"
#include "util/util.h"

#include <elfutils/libdwfl.h>

typedef struct rt_rcu rt_rcu;       /* a unit looked into (resolve_funcs.c) */
typedef struct rt_rlines rt_rlines; /* a unit's line table (resolve_lines.c) */

#define RT_RNAME_UNKNOWN UINT64_MAX

/* A function definition of a unit (one per address range), with what
 * resolve_dwarf.c learnt of it: its name, and whether it has scopes
 * inside (inlined calls, blocks) to walk down. */
typedef struct rt_rfunc {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
	uint64_t name;            /* as function_name packs it; RT_RNAME_UNKNOWN */
	const void *named_sym;    /* the symbol named was computed for */
	uint64_t named;
	int8_t scopes;            /* -1 not known yet */
} rt_rfunc;

/* How many elements of arr[0 .. n), sorted by their key, have a key at
 * or below x: the one before is the last at or below it. key names the
 * key from an element ("addr", "first->addr"). */
#define RT_COUNT_UPTO(arr, n, key, x)                                     \
	({                                                                \
		size_t lo_ = 0, hi_ = (n);                                \
		while (lo_ < hi_) {                                       \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;              \
			if ((arr)[mid_].key <= (x))                       \
				lo_ = mid_ + 1;                           \
			else                                              \
				hi_ = mid_;                               \
		}                                                         \
		lo_;                                                      \
	})

/* A map from two 64-bit keys to a 64-bit value, for the resolver's
 * caches (names of inlined functions by DIE offset and symbol). */
typedef struct rt_rhash {
	struct rt_rslot *slots;
	size_t n, nslots;
} rt_rhash;


/* A function symbol of a module, in libdwfl's address space. */
typedef struct rt_rsym {
	uint64_t addr, size;
	const char *name;
	int index;      /* in the symbol table */
	uint64_t fn_name; /* RT_RNAME of its name (rt_resolve_symbol_name); RT_RNAME_UNKNOWN until asked */
} rt_rsym;

/* A section's bytes, as libdw reads them. */
typedef struct rt_rsec {
	const unsigned char *p;
	size_t n;
} rt_rsec;

enum { MOD_UNOPENED = 0, MOD_OK, MOD_FAILED };

/* A module file, opened once however many mappings it has. */
typedef struct rt_rmod {
	const char *path; /* as the trace names it */
	uint32_t path_id; /* in the output trace; RT_NONE until needed */
	int state;
	struct rt_resolver *owner; /* for libdwfl's callbacks */
	bool asked_debuginfo;      /* the debug file was looked for, as: */
	char *debug_file, *debug_link; /* (resolve_find.c) */
	Dwfl *dwfl;       /* one per module: mappings of different modules may
			   * overlap (dlclose then dlopen) */
	Dwfl_Module *mod;
	uint64_t dwfl_bias; /* libdwfl address = link-time address + this */
	Elf *elf;           /* main file, for its program headers */
	rt_rsym *syms;      /* sorted by addr; from .symtab, else .dynsym */
	size_t nsyms;
	rt_rcu **cus;       /* units looked into, sorted by DIE offset */
	size_t ncus, ccus;
	rt_rcu *last_cu;
	rt_rhash names;     /* names of inner functions by DIE offset (resolve_dwarf.c) */
	rt_arena arena;     /* the units' line tables and file names */
	int secs_state;     /* resolve_lines.c: 0 unread, 1 read, 2 unusable */
	rt_rsec line, str, line_str;
} rt_rmod;

/* A mapping of the trace, with the module behind it. */
typedef struct rt_rmap {
	uint64_t from, to, offset, since, until;
	uint64_t maxto; /* highest `to` of this and every earlier mapping */
	uint32_t mod;   /* index into mods */
	uint32_t order; /* position in the trace's map (later wins a tie) */
	bool placed;    /* bias computed */
	bool bad;       /* the module has no segment for this mapping */
	bool alone;     /* no other mapping overlaps it: its addresses' entries
			 * do not depend on the call */
	int64_t bias;   /* libdwfl address = runtime address - bias */
} rt_rmap;

/* A slot of the resolver's direct-mapped cache of entries by address
 * (rt_resolve_entry): ent + 1, 0 empty, RT_RQUICK_NONE in no mapping. */
typedef struct rt_rquick {
	uint64_t addr;
	uint32_t ent1;
} rt_rquick;
#define RT_RQUICK 4096
#define RT_RQUICK_NONE UINT32_MAX

/* A resolved address, cached. */
typedef struct rt_rent {
	uint64_t addr;
	uint32_t map;
	uint32_t n, off;  /* inline chain: locs[off .. off + n) */
	uint32_t text_id; /* RT_NONE: no text */
	bool done;        /* looked up (rt_resolve_trace collects first) */
	bool recorded;    /* its frame info is in the output trace */
} rt_rent;

/* The string ids of a loc (rt_resolve_loc holds the strings). */
typedef struct rt_rlid {
	uint32_t fn, file;
	uint32_t linkage; /* the linkage name fn was demangled from, or RT_NONE */
} rt_rlid;

/* A function's name as the resolver caches it: the id of the name shown
 * in the low 32 bits, above them the id + 1 of its linkage name (0: none
 * known). A DWARF name has one when the DIE has a linkage name, a symbol
 * when its name was demangled; fn is demangled when the two differ. */
#define RT_RNAME(shown, linkage) \
	((uint64_t)(uint32_t)(shown) | (uint64_t)((linkage) == RT_NONE ? 0u : (uint32_t)(linkage) + 1u) << 32)
#define RT_RNAME_SHOWN(n) ((uint32_t)(n))
#define RT_RNAME_LINKAGE(n) ((n) >> 32 ? (uint32_t)((n) >> 32) - 1u : RT_NONE)

struct rt_resolver {
	const rt_trace *t;
	rt_trace *out; /* names and texts are interned here (rt_resolve_trace) */
	rt_resolve_opts o;
	char *debuginfo_path;
	bool cache_warned;
	Dwfl_Callbacks cb;
	rt_arena arena;
	rt_strtab strs;         /* names, files and texts when out is NULL */
	rt_strtab mangled;      /* C++ symbols seen, by id: */
	uint32_t *demangled;    /* their demangled form's id + 1, 0 until needed */
	size_t ndemangled, cdemangled;
	void *cxx;              /* libstdc++, loaded at the first C++ name */
	char *(*demangle)(const char *, char *, size_t *, int *);
	bool cxx_tried;
	rt_strtab paths;        /* module paths; a path's id indexes mods */
	rt_rmod *mods;
	size_t nmods;
	rt_rmap *maps; /* sorted by from */
	size_t nmaps;
	bool all_alone; /* no mapping overlaps another: an address has one
			 * entry whatever the call (stacks may share frames) */
	rt_rent *ents;
	size_t nents, cents;
	uint32_t *slots; /* ents index + 1 */
	size_t nslots;
	rt_rquick *quick; /* RT_RQUICK slots, made at the first entry */
	rt_resolve_loc *locs;
	rt_rlid *lids; /* parallel to locs */
	size_t nlocs, clocs;
	rt_resolve_stats st;
	char *buf; /* text being formatted */
	size_t cbuf;
};

/* resolve_base.c: what every resolver file uses; calls no other one */
/* A string interned (in out, else the resolver's table), and back. */
uint32_t rt_resolve_str(rt_resolver *r, const char *s, size_t len);
const char *rt_resolve_strp(const rt_resolver *r, uint32_t id);
/* qsort, after a look whether base is in order already (often so) */
void rt_resolve_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
bool rt_resolve_hash_get(const rt_rhash *h, uint64_t a, uint64_t b, uint64_t *v);
void rt_resolve_hash_put(rt_rhash *h, uint64_t a, uint64_t b, uint64_t v);
void rt_resolve_hash_free(rt_rhash *h);
void rt_resolve_warn(rt_resolver *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* resolve.c */
/* A resolver whose names and texts go into out, when not NULL. */
rt_resolver *rt_resolve_new_for(const rt_trace *t, const rt_resolve_opts *opts, rt_trace *out);
/* The entry for addr, made on first sight (looked up at once when now
 * is set); NULL when addr is in no mapping. */
rt_rent *rt_resolve_entry(rt_resolver *r, uint64_t addr, uint64_t call_index, bool now);
/* Looks up the entry: the inline chain from DWARF, else a symbol's name. */
void rt_resolve_compute(rt_resolver *r, rt_rent *e);
/* Whether the mapping's module is open and the mapping placed: an
 * unreadable module leaves its addresses bare, so that a later run (with
 * --root or --debug-dir) can still resolve them. */
bool rt_resolve_usable(rt_resolver *r, rt_rmap *map);

/* resolve_module.c */
bool rt_resolve_open_module(rt_resolver *r, rt_rmod *m, const rt_rmap *map);
void rt_resolve_close_module(rt_rmod *m);
bool rt_resolve_place(rt_resolver *r, rt_rmap *map);
rt_rsym *rt_resolve_symbol(const rt_rmod *m, uint64_t addr);

/* resolve_find.c: libdwfl's find_debuginfo callback (the cache, and the
 * standard search without its debuginfod fallback when no server is set) */
int rt_resolve_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name);

/* resolve_cache.c: decompressed copies of debug files, by build id */
int rt_resolve_cache_open(const char *dir, const unsigned char *id, size_t len, char **name);
bool rt_resolve_cache_wanted(int fd, const unsigned char *id, size_t len);
int rt_resolve_cache_build(rt_resolver *r, int fd, const unsigned char *id, size_t len,
			   char **name);

/* resolve_funcs.c: the units of a module, with their functions by
 * address, line tables and file names */
rt_rcu *rt_resolve_unit(rt_rmod *m, Dwarf_Die *cudie);
rt_rfunc *rt_resolve_function(const rt_rcu *cu, Dwarf_Addr pc);
/* file:line of libdwfl address a (pc in the unit); false when unknown */
bool rt_resolve_line(rt_resolver *r, rt_rmod *m, rt_rcu *cu, uint64_t a, uint64_t pc,
		     uint32_t *file, uint32_t *line);
/* The path of the unit's file number index (DW_AT_call_file); RT_NONE */
uint32_t rt_resolve_file(rt_resolver *r, rt_rcu *cu, uint64_t index);
void rt_resolve_free_units(rt_rmod *m);

/* resolve_lines.c */
rt_rlines *rt_resolve_lines_load(rt_rmod *m, Dwarf_Die *cudie);
bool rt_resolve_lines_find(rt_rlines *l, uint64_t pc, uint32_t *file, int *line);
const char *rt_resolve_lines_file(const rt_rlines *l, uint64_t index);
size_t rt_resolve_lines_nfiles(const rt_rlines *l);
void rt_resolve_lines_free(rt_rlines *l);

/* resolve_dwarf.c */
uint64_t rt_resolve_demangle(rt_resolver *r, const char *name);
uint64_t rt_resolve_symbol_name(rt_resolver *r, const rt_rmod *m, rt_rsym *sym);
void rt_resolve_push(rt_resolver *r, uint64_t name, uint32_t file, uint32_t line);
/* Appends the inline chain of libdwfl address a in m to r->locs; returns
 * its length (0 when the module has no DWARF for it). */
uint32_t rt_resolve_dwarf(rt_resolver *r, rt_rmod *m, uint64_t a);
uint32_t rt_resolve_format(rt_resolver *r, const char *module, uint32_t off, uint32_t n);

#endif
