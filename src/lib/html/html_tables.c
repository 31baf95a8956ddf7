/* The heap profile's HTML tables, read without JavaScript: the call
 * sites (the heaviest first, at most max_rows, each opening to its
 * stack), the buckets over time, the size ranges. The script updates
 * the sites' cost cells (data-k) to a range brushed on the chart. */
#define _GNU_SOURCE /* qsort_r */
#include "html/html_int.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_sites(const void *a, const void *b, void *ctx)
{
	const rt_hp *h = ctx;
	const rt_hp_cost *x = &rt_hp_site_at(h, *(const size_t *)a)->cost;
	const rt_hp_cost *y = &rt_hp_site_at(h, *(const size_t *)b)->cost;
	if (x->peak != y->peak)
		return x->peak < y->peak ? 1 : -1;
	if (x->leaked != y->leaked)
		return x->leaked < y->leaked ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return (x->allocations < y->allocations) - (x->allocations > y->allocations);
}

static void table_head(rt_out *o, const char *id, const char *const *cols, size_t n, size_t first_num)
{
	rt_out_str(o, "<input class=filter type=search placeholder=\"filter rows\" data-for=\"");
	hw_text(o, id);
	rt_out_str(o, "\"><table class=data id=\"");
	hw_text(o, id);
	rt_out_str(o, "\"><thead><tr>");
	for (size_t i = 0; i < n; i++) {
		rt_out_str(o, i >= first_num ? "<th class=\"sort n\">" : "<th class=sort>");
		hw_text(o, cols[i]);
		rt_out_str(o, "</th>");
	}
	rt_out_str(o, "</tr></thead><tbody>\n");
}

/* The site's first frame named, its stack under it. */
static void site_cell(hw *w, const rt_trace *t, uint32_t bt)
{
	char fn[512], at[512];
	rt_out_str(w->o, "<td><details><summary>");
	if (bt == RT_NONE || !rt_trace_bt_len(t, bt)) {
		rt_out_str(w->o, "[no backtrace]</summary></details></td>");
		return;
	}
	const rt_frame *f = rt_trace_bt_frames(t, bt);
	hw_text(w->o, hw_func(t, f, fn, sizeof fn));
	if (*hw_where(t, f, at, sizeof at)) {
		rt_out_str(w->o, " <span class=muted>");
		hw_text(w->o, at);
		rt_out_str(w->o, "</span>");
	}
	rt_out_str(w->o, "</summary>");
	hw_stack(w, t, bt, false, HW_SITE_FRAMES);
	rt_out_str(w->o, "</details></td>");
}

void hw_sites_table(hw *w, size_t i)
{
	const rt_hp *h = w->in[i].hp;
	static const char *const cols[] = {"allocated at", "allocations", "temporary", "bytes", "peak", "leaked"};
	char id[32];
	if (!h) {
		rt_out_str(w->o, "<p class=muted>No allocation calls in this input.</p>");
		return;
	}
	size_t n = rt_hp_site_count(h), *v = rt_xmalloc((n ? n : 1) * sizeof *v);
	for (size_t k = 0; k < n; k++)
		v[k] = k;
	qsort_r(v, n, sizeof *v, cmp_sites, (void *)h);
	snprintf(id, sizeof id, "sites-%zu", i);
	table_head(w->o, id, cols, 6, 1);
	for (size_t k = 0; k < n && k < w->max_rows; k++) {
		const rt_hp_site *s = rt_hp_site_at(h, v[k]);
		rt_out_str(w->o, "<tr data-site=");
		rt_out_u64(w->o, v[k]);
		rt_out_ch(w->o, '>');
		site_cell(w, w->in[i].trace, s->bt);
		uint64_t c[5] = {s->cost.allocations, s->cost.temporary, s->cost.bytes, s->cost.peak, s->cost.leaked};
		for (unsigned j = 0; j < 5; j++)
			hw_cost_td(w->o, j, c[j]);
		rt_out_str(w->o, "</tr>\n");
	}
	rt_out_str(w->o, "</tbody></table>");
	if (n > w->max_rows) {
		char b[96];
		snprintf(b, sizeof b, "<p class=muted>%zu more sites not listed.</p>", n - w->max_rows);
		rt_out_str(w->o, b);
	}
	free(v);
}

void hw_time_table(hw *w, size_t i)
{
	const rt_hp_series *s = w->in[i].series;
	static const char *const cols[] = {"from", "to", "allocations", "frees", "live bytes", "live blocks",
					   "most live bytes"};
	char id[32];
	if (!s)
		return;
	bool timed = rt_hp_series_timed(s);
	snprintf(id, sizeof id, "time-%zu", i);
	rt_out_str(w->o, "<details><summary>The buckets as a table (");
	rt_out_str(w->o, timed ? "microseconds since the first call" : "block events");
	rt_out_str(w->o, ")</summary>");
	table_head(w->o, id, cols, 7, 0);
	for (size_t k = 0; k < rt_hp_series_count(s); k++) {
		const rt_hp_bucket *b = rt_hp_series_at(s, k);
		uint64_t v[7] = {b->start, b->end, b->allocations, b->frees, b->live_bytes, b->live_blocks,
				 b->max_live_bytes};
		rt_out_str(w->o, "<tr>");
		for (size_t j = 0; j < 7; j++)
			hw_num_td(w->o, v[j]);
		rt_out_str(w->o, "</tr>\n");
	}
	rt_out_str(w->o, "</tbody></table></details>");
}

void hw_sizes_table(hw *w, size_t i)
{
	static const char *const cols[] = {"from (bytes)", "to (bytes)", "allocations", "bytes"};
	uint64_t r[65][4];
	char id[32];
	if (!w->in[i].series)
		return;
	size_t n = hw_size_ranges(w->in[i].series, r);
	snprintf(id, sizeof id, "sizes-%zu", i);
	table_head(w->o, id, cols, 4, 0);
	for (size_t k = 0; k < n; k++) {
		if (!r[k][2])
			continue;
		rt_out_str(w->o, "<tr>");
		for (size_t j = 0; j < 4; j++)
			hw_num_td(w->o, r[k][j]);
		rt_out_str(w->o, "</tr>\n");
	}
	rt_out_str(w->o, "</tbody></table>");
}
