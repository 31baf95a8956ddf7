/* The parts of callgrind_annotate's report that both its halves use
 * (cg_annotate.c: header, totals, functions and trees; cg_annotate_src.c:
 * annotated sources): cost arrays and their columns, the printing of
 * counts, percentages and names, the per-line table's lookup. They are
 * a file of their own so that the two halves call down into it and never
 * each other in a loop (tests/cli/layout.sh). */
#include "callgrind/cg_ann.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- cost arrays --- */

void cg_ann_cc_add(cg_ann *a, cg_ann_cc *dst, const uint64_t *v, uint32_t given)
{
	if (!given)
		return;
	if (!dst->v)
		dst->v = cg_pool_alloc(&a->pool, a->W);
	for (uint32_t i = 0; i < given; i++)
		dst->v[i] += v[i];
	if (given > dst->given)
		dst->given = given;
}

uint64_t cg_ann_col(const cg_ann *a, const cg_ann_cc *cc, uint32_t c, bool *def)
{
	if (c < a->W) {
		*def = c < cc->given;
		return *def ? cc->v[c] : 0;
	}
	return cg_event_value(a->p, a->col_ev[c], cc->v, cc->given, def);
}

int cg_ann_cmp_cc(const cg_ann *a, const cg_ann_cc *x, const cg_ann_cc *y)
{
	for (uint32_t i = 0; i < a->nsort; i++) {
		bool dx, dy;
		uint64_t vx = cg_ann_col(a, x, a->sort[i], &dx), vy = cg_ann_col(a, y, a->sort[i], &dy);
		if (dx != dy)
			return dx ? -1 : 1;
		if (vx != vy)
			return vx > vy ? -1 : 1;
	}
	return 0;
}

/* --- printing --- */

static uint32_t digits(uint64_t v)
{
	uint32_t n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

void cg_ann_commify(rt_out *o, uint64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			rt_out_ch(o, ',');
		rt_out_ch(o, tmp[i]);
	}
}

const char *cg_ann_col_name(const cg_ann *a, uint32_t c)
{
	return a->p->events[a->col_ev[c]].name;
}

void cg_ann_widths_init(const cg_ann *a, uint32_t *w)
{
	for (uint32_t c = 0; c < a->ncols; c++)
		w[c] = (uint32_t)strlen(cg_ann_col_name(a, c));
}

void cg_ann_widths_add(const cg_ann *a, uint32_t *w, const cg_ann_cc *cc)
{
	for (uint32_t c = 0; c < a->ncols; c++) {
		bool def;
		uint64_t v = cg_ann_col(a, cc, c, &def);
		if (!def)
			continue;
		uint32_t len = digits(v), width = len + (len - 1) / 3 + (a->percs ? 9 : 0);
		if (width > w[c])
			w[c] = width;
	}
}

static void spaces(rt_out *o, int64_t n)
{
	for (; n > 0; n--)
		rt_out_ch(o, ' ');
}

/* One column: count (or "."), percentage of the program total (or
 * blanks), right-aligned in its width, then a space. */
static void print_col(cg_ann *a, const cg_ann_cc *cc, uint32_t c, uint32_t width)
{
	bool def, sdef;
	uint64_t v = cg_ann_col(a, cc, c, &def), s = cg_ann_col(a, &a->summary, c, &sdef);
	rt_out text;
	rt_out_init_mem(&text);
	if (def)
		cg_ann_commify(&text, v);
	else
		rt_out_ch(&text, '.');
	if (a->percs && def && v) {
		double pc = sdef && s ? cg_ann_perl_pct(v, s) : 0;
		char buf[48];
		snprintf(buf, sizeof buf, -9.995 < pc && pc < 99.995 ? " (%5.2f%%)" : " (%5.1f%%)", pc);
		rt_out_str(&text, buf);
	} else if (a->percs) {
		rt_out_str(&text, "         ");
	}
	spaces(&a->out, (int64_t)width - (int64_t)text.len);
	rt_out_mem(&a->out, text.buf, text.len);
	rt_out_ch(&a->out, ' ');
	free(text.buf);
}

void cg_ann_print_cc(cg_ann *a, const cg_ann_cc *cc, const uint32_t *w)
{
	for (uint32_t i = 0; i < a->nshow; i++)
		print_col(a, cc, a->show[i], w[a->show[i]]);
}

void cg_ann_print_events(cg_ann *a, const uint32_t *w)
{
	for (uint32_t i = 0; i < a->nshow; i++) {
		const char *name = cg_ann_col_name(a, a->show[i]);
		rt_out_str(&a->out, name);
		spaces(&a->out, (int64_t)w[a->show[i]] - (int64_t)strlen(name));
		rt_out_ch(&a->out, ' ');
	}
}

/* The parts of a joined name: file, ":", function. */
typedef struct name_parts {
	const char *p[3];
	size_t n[3];
} name_parts;

static void name_parts_of(const cg_ann *a, uint32_t name, name_parts *np)
{
	const cg_ann_name *n = &a->names[name];
	np->p[0] = a->files.strs[n->file];
	np->n[0] = a->files.lens[n->file];
	np->p[1] = ":";
	np->n[1] = 1;
	np->p[2] = a->p->names[CG_FUNCTION].strs[n->fn];
	np->n[2] = a->p->names[CG_FUNCTION].lens[n->fn];
}

/* memcmp of the joined strings, a run of bytes that lies within one part
 * of each at a time; the shorter first when one is a prefix. */
int cg_ann_name_cmp(const cg_ann *a, uint32_t x, uint32_t y)
{
	name_parts u, v;
	name_parts_of(a, x, &u);
	name_parts_of(a, y, &v);
	int i = 0, j = 0;
	size_t oi = 0, oj = 0;
	while (i < 3 && j < 3) {
		size_t n = u.n[i] - oi < v.n[j] - oj ? u.n[i] - oi : v.n[j] - oj;
		int c = n ? memcmp(u.p[i] + oi, v.p[j] + oj, n) : 0;
		if (c)
			return c;
		if ((oi += n) == u.n[i])
			i++, oi = 0;
		if ((oj += n) == v.n[j])
			j++, oj = 0;
	}
	return (i < 3) - (j < 3);
}

void cg_ann_name_print(cg_ann *a, uint32_t name)
{
	name_parts u;
	name_parts_of(a, name, &u);
	for (int i = 0; i < 3; i++)
		rt_out_mem(&a->out, u.p[i], u.n[i]);
}

const cg_ann_line *cg_ann_line_find(const cg_ann *a, uint32_t file, uint64_t line)
{
	cg_ann_line_key k = {a, file, line};
	uint32_t i = cg_index_find(&a->line_ix, cg_hash(file, line, 11), cg_ann_line_eq, &k);
	return i == CG_NONE ? NULL : &a->lines[i];
}
