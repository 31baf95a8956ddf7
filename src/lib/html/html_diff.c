/* Diff of two traces: each call site's growth from the first input to
 * the second in allocations, temporary allocations, peak and leaked
 * bytes. The two runs' addresses differ (ASLR, another build), so a site
 * is matched by its resolved stack: the names of its frames, the
 * allocating one first. Sites of either run alone count from zero. The
 * rows come sorted by peak growth, then leak growth; the page sorts on
 * any column. */
#include "html/html_int.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dsite {
	char *key;
	uint32_t bt;  /* a stack of it, in trace `side` */
	int side;     /* 0 the first input, 1 the second */
	rt_hp_cost cost;
} dsite;

typedef struct drow {
	size_t first;         /* its first dsite */
	rt_hp_cost c[2];      /* before, after */
	int64_t dpeak, dleak;
} drow;

static char *stack_key(const rt_trace *t, uint32_t bt)
{
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(t, bt);
	const rt_frame *f = n ? rt_trace_bt_frames(t, bt) : NULL;
	char key[4096], fn[512];
	size_t len = 0;
	key[0] = '\0';
	for (uint32_t k = 0; k < n && len + 1 < sizeof key; k++) {
		int w = snprintf(key + len, sizeof key - len, "%s%s", k ? ";" : "", hw_func(t, &f[k], fn, sizeof fn));
		if (w < 0)
			break;
		len += (size_t)w;
	}
	return rt_xstrdup(n ? key : "[no backtrace]");
}

static int cmp_key(const void *a, const void *b)
{
	const dsite *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : x->side - y->side;
}

static int cmp_growth(const void *a, const void *b)
{
	const drow *x = a, *y = b;
	if (x->dpeak != y->dpeak)
		return x->dpeak < y->dpeak ? 1 : -1;
	return (x->dleak < y->dleak) - (x->dleak > y->dleak);
}

static void add(rt_hp_cost *to, const rt_hp_cost *c)
{
	to->allocations += c->allocations;
	to->temporary += c->temporary;
	to->bytes += c->bytes;
	to->peak += c->peak;
	to->leaked += c->leaked;
}

static void delta_td(rt_out *o, uint64_t before, uint64_t after)
{
	char b[48];
	int64_t d = (int64_t)(after - before);
	snprintf(b, sizeof b, "<td class=\"n %s\" data-v=%" PRId64 ">%+" PRId64 "</td>", d > 0 ? "grow" : d < 0 ? "shrink" : "",
		 d, d);
	rt_out_str(o, b);
}

static void row(hw *w, const dsite *s, const drow *r)
{
	char fn[512];
	const rt_trace *t = w->in[s->side].trace;
	rt_out_str(w->o, "<tr><td><details><summary>");
	hw_text(w->o, s->bt == RT_NONE || !rt_trace_bt_len(t, s->bt) ? "[no backtrace]"
								   : hw_func(t, rt_trace_bt_frames(t, s->bt), fn, sizeof fn));
	rt_out_str(w->o, "</summary>");
	hw_stack(w, t, s->bt, false, HW_SITE_FRAMES);
	rt_out_str(w->o, "</details></td>");
	uint64_t b[4] = {r->c[0].peak, r->c[0].leaked, r->c[0].allocations, r->c[0].temporary};
	uint64_t a[4] = {r->c[1].peak, r->c[1].leaked, r->c[1].allocations, r->c[1].temporary};
	for (size_t k = 0; k < 4; k++) {
		hw_num_td(w->o, b[k]);
		hw_num_td(w->o, a[k]);
		delta_td(w->o, b[k], a[k]);
	}
	rt_out_str(w->o, "</tr>\n");
}

static void table(hw *w, const dsite *s, const drow *r, size_t nr)
{
	static const char *const what[] = {"peak", "leaked", "allocations", "temporary"};
	rt_out_str(w->o, "<input class=filter type=search placeholder=\"filter rows\" data-for=\"diff-0\">"
			 "<table class=data id=\"diff-0\"><thead><tr><th class=sort>call site</th>");
	for (size_t k = 0; k < 4; k++) {
		char b[160];
		snprintf(b, sizeof b, "<th class=\"sort n\">%s before</th><th class=\"sort n\">%s after</th>"
				      "<th class=\"sort n\">%s change</th>", what[k], what[k], what[k]);
		rt_out_str(w->o, b);
	}
	rt_out_str(w->o, "</tr></thead><tbody>\n");
	size_t shown = 0;
	for (size_t i = 0; i < nr && shown < w->max_rows; i++) {
		if (!memcmp(&r[i].c[0], &r[i].c[1], sizeof r[i].c[0]))
			continue;
		row(w, &s[r[i].first], &r[i]);
		shown++;
	}
	rt_out_str(w->o, "</tbody></table>");
	if (!shown)
		rt_out_str(w->o, "<p class=muted>No call site changed.</p>");
}

void hw_diff(hw *w)
{
	if (w->n != 2 || !w->in[0].hp || !w->in[1].hp) {
		rt_out_str(w->o, "<p class=muted>A diff needs two traces with allocation calls.</p>");
		return;
	}
	size_t n0 = rt_hp_site_count(w->in[0].hp), n = n0 + rt_hp_site_count(w->in[1].hp), nr = 0;
	dsite *s = rt_xmalloc((n ? n : 1) * sizeof *s);
	drow *r = rt_xmalloc((n ? n : 1) * sizeof *r);
	for (size_t i = 0; i < n; i++) {
		int side = i >= n0;
		const rt_hp_site *hs = rt_hp_site_at(w->in[side].hp, side ? i - n0 : i);
		s[i] = (dsite){stack_key(w->in[side].trace, hs->bt), hs->bt, side, hs->cost};
	}
	qsort(s, n, sizeof *s, cmp_key);
	for (size_t i = 0; i < n; i++) {
		if (!i || strcmp(s[i].key, s[i - 1].key))
			r[nr++] = (drow){i, {{0}, {0}}, 0, 0};
		add(&r[nr - 1].c[s[i].side], &s[i].cost);
	}
	for (size_t i = 0; i < nr; i++) {
		r[i].dpeak = (int64_t)(r[i].c[1].peak - r[i].c[0].peak);
		r[i].dleak = (int64_t)(r[i].c[1].leaked - r[i].c[0].leaked);
	}
	qsort(r, nr, sizeof *r, cmp_growth);
	table(w, s, r, nr);
	for (size_t i = 0; i < n; i++)
		free(s[i].key);
	free(s);
	free(r);
}
