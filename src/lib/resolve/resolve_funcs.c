/* The compilation units the resolver looks into, each prepared the first
 * time an address falls in it: its functions by address, so that a
 * lookup is a binary search and a walk down one function's scopes, not a
 * walk over the whole unit (which made resolving quadratic in the size of
 * big units); its line table (resolve_lines.c, else libdw's); and the
 * paths of its files, interned once. */
#include "resolve/resolve_int.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

struct rt_rcu {
	Dwarf_Off off;    /* of the unit's DIE */
	Dwarf_Die die;
	const char *comp_dir;
	rt_rfunc *f;      /* sorted by lo */
	size_t n, cap;
	rt_rlines *lines; /* NULL: libdw's (dwfl_module_getsrc) */
	uint32_t *file_ids; /* by file index: interned path + 1, 0 until asked */
	Dwarf_Files *files; /* libdw's, for call sites when lines is NULL */
	bool files_read;
};

static void add_ranges(rt_rcu *cu, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		rt_rfunc f = {lo, hi, *die, RT_RNAME_UNKNOWN, NULL, 0, -1};
		RT_PUSH(cu->f, cu->n, cu->cap, f);
	}
}

/* Function definitions are children of the unit, or of the namespaces and
 * classes in it (C++). */
static void collect(rt_rcu *cu, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;
	if (depth > 16 || dwarf_child(parent, &child) != 0)
		return;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_entry_point:
			add_ranges(cu, &child);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			collect(cu, &child, depth + 1);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int func_cmp(const void *a, const void *b)
{
	const rt_rfunc *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static rt_rcu *new_unit(rt_rmod *m, Dwarf_Die *cudie, Dwarf_Off off)
{
	Dwarf_Attribute attr;
	rt_rcu *cu = rt_xcalloc(1, sizeof *cu);
	cu->off = off;
	cu->die = *cudie;
	cu->comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	collect(cu, cudie, 0);
	rt_resolve_sort(cu->f, cu->n, sizeof *cu->f, func_cmp);
	cu->lines = rt_resolve_lines_load(m, cudie);
	return cu;
}

rt_rcu *rt_resolve_unit(rt_rmod *m, Dwarf_Die *cudie)
{
	Dwarf_Off off = dwarf_dieoffset(cudie);
	if (m->last_cu && m->last_cu->off == off)
		return m->last_cu;
	size_t lo = 0, hi = m->ncus;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->cus[mid]->off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->ncus || m->cus[lo]->off != off) {
		rt_grow((void **)&m->cus, &m->ccus, m->ncus + 1, sizeof *m->cus);
		memmove(m->cus + lo + 1, m->cus + lo, (m->ncus - lo) * sizeof *m->cus);
		m->cus[lo] = new_unit(m, cudie, off);
		m->ncus++;
	}
	return m->last_cu = m->cus[lo];
}

rt_rfunc *rt_resolve_function(const rt_rcu *cu, Dwarf_Addr pc)
{
	size_t lo = RT_COUNT_UPTO(cu->f, cu->n, lo, pc);
	/* ranges do not nest at the top level: a few entries back at most */
	for (size_t i = lo, k = 0; i > 0 && k < 4; i--, k++) {
		if (pc < cu->f[i - 1].hi)
			return &cu->f[i - 1];
	}
	return NULL;
}

/* A source path as addr2line prints it: libdw has joined it with the
 * compilation directory when that is absolute; a relative one (glibc's
 * "./libio") is put in front of a relative path as binutils and elfutils
 * do. */
static uint32_t src_path(rt_resolver *r, const rt_rcu *cu, const char *file)
{
	const char *dir = file[0] == '/' ? NULL : cu->comp_dir;
	if (!dir)
		return rt_resolve_str(r, file, strlen(file));
	size_t dl = strlen(dir), fl = strlen(file);
	rt_grow((void **)&r->buf, &r->cbuf, dl + fl + 2, 1);
	memcpy(r->buf, dir, dl);
	r->buf[dl] = '/';
	memcpy(r->buf + dl + 1, file, fl + 1);
	return rt_resolve_str(r, r->buf, dl + fl + 1);
}

/* The path of file number index of the unit's own table, interned once. */
static uint32_t table_file(rt_resolver *r, rt_rcu *cu, uint64_t index)
{
	const char *name = rt_resolve_lines_file(cu->lines, index);
	if (!name)
		return RT_NONE;
	if (!cu->file_ids)
		cu->file_ids = rt_xcalloc(rt_resolve_lines_nfiles(cu->lines), sizeof *cu->file_ids);
	if (!cu->file_ids[index])
		cu->file_ids[index] = src_path(r, cu, name) + 1;
	return cu->file_ids[index] - 1;
}

bool rt_resolve_line(rt_resolver *r, rt_rmod *m, rt_rcu *cu, uint64_t a, uint64_t pc,
		     uint32_t *file, uint32_t *line)
{
	int l = 0;
	if (cu->lines) {
		uint32_t index;
		if (!rt_resolve_lines_find(cu->lines, pc, &index, &l) || l <= 0 ||
		    (*file = table_file(r, cu, index)) == RT_NONE)
			return false;
	} else {
		Dwfl_Line *dl = dwfl_module_getsrc(m->mod, a);
		const char *name = dl ? dwfl_lineinfo(dl, NULL, &l, NULL, NULL, NULL) : NULL;
		if (!name || l <= 0)
			return false;
		*file = src_path(r, cu, name);
	}
	*line = (uint32_t)l;
	return true;
}

uint32_t rt_resolve_file(rt_resolver *r, rt_rcu *cu, uint64_t index)
{
	if (cu->lines)
		return table_file(r, cu, index);
	if (!cu->files_read && dwarf_getsrcfiles(&cu->die, &cu->files, NULL) != 0)
		cu->files = NULL;
	cu->files_read = true;
	const char *name = cu->files ? dwarf_filesrc(cu->files, index, NULL, NULL) : NULL;
	return name ? src_path(r, cu, name) : RT_NONE;
}

void rt_resolve_free_units(rt_rmod *m)
{
	for (size_t i = 0; i < m->ncus; i++) {
		rt_resolve_lines_free(m->cus[i]->lines);
		free(m->cus[i]->file_ids);
		free(m->cus[i]->f);
		free(m->cus[i]);
	}
	free(m->cus);
}
