/* The functions of each compilation unit, by address: built the first
 * time an address falls in the unit, so that a lookup is a binary search
 * and a walk down one function's scopes, not a walk over the whole unit
 * (which made resolving quadratic in the size of big units). */
#include "resolve_int.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

typedef struct rt_rfunc {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
} rt_rfunc;

struct rt_rcu {
	Dwarf_Off off; /* of the unit's DIE */
	rt_rfunc *f;   /* sorted by lo */
	size_t n, cap;
};

static void add_ranges(rt_rcu *cu, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		rt_rfunc f = {lo, hi, *die};
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

/* The unit's index, built on first use; units are kept sorted by offset. */
static rt_rcu *unit(rt_rmod *m, Dwarf_Die *cudie)
{
	Dwarf_Off off = dwarf_dieoffset(cudie);
	size_t lo = 0, hi = m->ncus;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->cus[mid]->off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->ncus && m->cus[lo]->off == off)
		return m->cus[lo];
	rt_rcu *cu = rt_xcalloc(1, sizeof *cu);
	cu->off = off;
	collect(cu, cudie, 0);
	if (cu->n)
		qsort(cu->f, cu->n, sizeof *cu->f, func_cmp);
	rt_grow((void **)&m->cus, &m->ccus, m->ncus + 1, sizeof *m->cus);
	memmove(m->cus + lo + 1, m->cus + lo, (m->ncus - lo) * sizeof *m->cus);
	m->cus[lo] = cu;
	m->ncus++;
	return cu;
}

bool rt_resolve_function(rt_rmod *m, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *out)
{
	rt_rcu *cu = unit(m, cudie);
	size_t lo = 0, hi = cu->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cu->f[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges do not nest at the top level: a few entries back at most */
	for (size_t i = lo, k = 0; i > 0 && k < 4; i--, k++) {
		if (pc < cu->f[i - 1].hi) {
			*out = cu->f[i - 1].die;
			return true;
		}
	}
	return false;
}

void rt_resolve_free_units(rt_rmod *m)
{
	for (size_t i = 0; i < m->ncus; i++) {
		free(m->cus[i]->f);
		free(m->cus[i]);
	}
	free(m->cus);
}
