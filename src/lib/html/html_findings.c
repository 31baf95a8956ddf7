/* The leak and error tables, from the Valgrind documents of each input:
 * those read from Valgrind XML, or memcheck's document of rtrace's own
 * findings (rt_vgxml_build, every leak kind listed), the path the XML
 * and SARIF writers take too, so the page says what memcheck would.
 * A loss record of an rtrace trace is tied to its call site (data-site)
 * by its stack: the document's frames after the allocator's are the
 * site's return addresses less one, so the brushed range filters the
 * leaks to those allocated in it. */
#include "html/html_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *leak_words(const char *kind)
{
	static const char *const k[][2] = {{"Leak_DefinitelyLost", "definitely lost"},
					   {"Leak_IndirectlyLost", "indirectly lost"},
					   {"Leak_PossiblyLost", "possibly lost"},
					   {"Leak_StillReachable", "still reachable"}};
	for (size_t i = 0; i < sizeof k / sizeof *k; i++)
		if (!strcmp(kind, k[i][0]))
			return k[i][1];
	return kind;
}

static uint64_t num(const char *s)
{
	return s ? strtoull(s, NULL, 10) : 0;
}

/* The site whose stack the document's stack bt (of dt) shows, or -1. */
static long site_of(const hw *w, size_t i, const rt_trace *dt, uint32_t bt)
{
	const rt_hp *h = w->in[i].hp;
	const rt_trace *t = w->in[i].trace;
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(dt, bt);
	if (!h || n < 2)
		return -1;
	const rt_frame *d = rt_trace_bt_frames(dt, bt) + 1;
	n--;
	for (size_t s = 0; s < rt_hp_site_count(h); s++) {
		uint32_t sb = rt_hp_site_at(h, s)->bt, m = sb == RT_NONE ? 0 : rt_trace_bt_len(t, sb);
		const rt_frame *f = m ? rt_trace_bt_frames(t, sb) : NULL;
		if (!m || f[0].addr - 1 != d[0].addr || m < n)
			continue;
		uint32_t k = 1;
		while (k < n && f[k].addr - 1 == d[k].addr)
			k++;
		if (k == n)
			return (long)s;
	}
	return -1;
}

/* An error's stacks, each after the words that precede it. */
static void stacks(hw *w, const rt_trace *t, uint32_t err)
{
	for (uint32_t c = rt_vgxml_node_at(t, err)->child; c != RT_NONE; c = rt_vgxml_node_at(t, c)->next) {
		const char *name = rt_vgxml_name(t, c);
		if (!strcmp(name, "stack")) {
			hw_stack(w, t, rt_vgxml_node_at(t, c)->bt, true, 0);
		} else if (!strcmp(name, "auxwhat") && rt_vgxml_text(t, c)) {
			rt_out_str(w->o, "<div class=muted>");
			hw_text(w->o, rt_vgxml_text(t, c));
			rt_out_str(w->o, "</div>");
		} else if (!strcmp(name, "xauxwhat") && rt_vgxml_child_text(t, c, "text")) {
			rt_out_str(w->o, "<div class=muted>");
			hw_text(w->o, rt_vgxml_child_text(t, c, "text"));
			rt_out_str(w->o, "</div>");
		}
	}
}

static const char *what(const rt_trace *t, uint32_t err)
{
	const char *s = rt_vgxml_child_text(t, err, "what");
	uint32_t xw = rt_vgxml_find(t, err, "xwhat", RT_NONE);
	if (!s && xw != RT_NONE)
		s = rt_vgxml_child_text(t, xw, "text");
	return s ? s : "";
}

static void what_cell(hw *w, const rt_trace *t, uint32_t err)
{
	rt_out_str(w->o, "<td><details><summary>");
	hw_text(w->o, what(t, err));
	rt_out_str(w->o, "</summary>");
	stacks(w, t, err);
	rt_out_str(w->o, "</details></td>");
}

static void leak_row(hw *w, size_t i, const rt_trace *t, uint32_t err, const char *kind)
{
	uint32_t xw = rt_vgxml_find(t, err, "xwhat", RT_NONE);
	const char *rec = strstr(what(t, err), "loss record ");
	uint32_t st = rt_vgxml_find(t, err, "stack", RT_NONE);
	long site = st == RT_NONE ? -1 : site_of(w, i, t, rt_vgxml_node_at(t, st)->bt);
	rt_out_str(w->o, "<tr data-leak");
	if (site >= 0) {
		rt_out_str(w->o, " data-site=");
		rt_out_u64(w->o, (uint64_t)site);
	}
	rt_out_str(w->o, "><td>");
	hw_text(w->o, leak_words(kind));
	rt_out_str(w->o, "</td>");
	hw_num_td(w->o, num(xw == RT_NONE ? NULL : rt_vgxml_child_text(t, xw, "leakedbytes")));
	hw_num_td(w->o, num(xw == RT_NONE ? NULL : rt_vgxml_child_text(t, xw, "leakedblocks")));
	rt_out_str(w->o, "<td class=n data-v=");
	rt_out_u64(w->o, num(rec ? rec + 12 : NULL));
	rt_out_ch(w->o, '>');
	hw_text(w->o, rec ? rec + 12 : "");
	rt_out_str(w->o, "</td>");
	what_cell(w, t, err);
	rt_out_str(w->o, "</tr>\n");
}

static void error_row(hw *w, const rt_trace *t, uint32_t err, const char *kind)
{
	rt_out_str(w->o, "<tr><td>");
	hw_text(w->o, kind);
	rt_out_str(w->o, "</td>");
	what_cell(w, t, err);
	rt_out_str(w->o, "</tr>\n");
}

void hw_findings(hw *w, size_t i, bool leaks)
{
	static const char *const lc[] = {"kind", "bytes", "blocks", "loss record", "what (open for the stack)"};
	static const char *const ec[] = {"kind", "what (open for the stacks)"};
	const rt_trace *t = w->docs[i];
	char id[32];
	size_t rows = 0;
	snprintf(id, sizeof id, "%s-%zu", leaks ? "leaks" : "errors", i);
	rt_out_str(w->o, "<input class=filter type=search placeholder=\"filter rows\" data-for=\"");
	rt_out_str(w->o, id);
	rt_out_str(w->o, "\"><table class=data id=\"");
	rt_out_str(w->o, id);
	rt_out_str(w->o, "\"><thead><tr>");
	for (size_t k = 0; k < (leaks ? 5u : 2u); k++) {
		rt_out_str(w->o, leaks && k && k < 4 ? "<th class=\"sort n\">" : "<th class=sort>");
		rt_out_str(w->o, leaks ? lc[k] : ec[k]);
		rt_out_str(w->o, "</th>");
	}
	rt_out_str(w->o, "</tr></thead><tbody>\n");
	for (size_t d = 0; t && d < rt_vgxml_doc_count(t); d++) {
		uint32_t root = rt_vgxml_doc_root(t, d);
		for (uint32_t e = rt_vgxml_find(t, root, "error", RT_NONE); e != RT_NONE && rows < w->max_rows;
		     e = rt_vgxml_find(t, root, "error", e)) {
			const char *kind = rt_vgxml_child_text(t, e, "kind");
			if (!kind || !strncmp(kind, "Leak_", 5) != leaks)
				continue;
			if (leaks)
				leak_row(w, i, t, e, kind);
			else
				error_row(w, t, e, kind);
			rows++;
		}
	}
	rt_out_str(w->o, "</tbody></table>");
	if (!rows)
		rt_out_str(w->o, leaks ? "<p class=muted>No loss records.</p>" : "<p class=muted>No errors.</p>");
}

/* memcheck's ERROR SUMMARY: errors other than leaks, and the loss
 * records of the kinds it counts as errors (definite, possible). */
void hw_error_counts(hw *w, size_t i)
{
	const rt_trace *t = w->docs[i];
	uint64_t contexts = 0, leak_bytes[5] = {0}, leak_blocks[5] = {0};
	static const char *const kinds[] = {"", "Leak_DefinitelyLost", "Leak_IndirectlyLost", "Leak_PossiblyLost",
					    "Leak_StillReachable"};
	char line[256], a[32], b[32];
	for (size_t d = 0; t && d < rt_vgxml_doc_count(t); d++) {
		uint32_t root = rt_vgxml_doc_root(t, d);
		for (uint32_t e = rt_vgxml_find(t, root, "error", RT_NONE); e != RT_NONE;
		     e = rt_vgxml_find(t, root, "error", e)) {
			const char *kind = rt_vgxml_child_text(t, e, "kind");
			uint32_t xw = rt_vgxml_find(t, e, "xwhat", RT_NONE);
			for (size_t k = 1; kind && k < 5; k++)
				if (!strcmp(kind, kinds[k]) && xw != RT_NONE) {
					leak_bytes[k] += num(rt_vgxml_child_text(t, xw, "leakedbytes"));
					leak_blocks[k] += num(rt_vgxml_child_text(t, xw, "leakedblocks"));
				}
			contexts += kind && (strncmp(kind, "Leak_", 5) || !strcmp(kind, kinds[1]) || !strcmp(kind, kinds[3]));
		}
	}
	const rt_leak_summary *ls = rt_trace_leak_summary(w->in[i].trace);
	for (unsigned k = RT_LEAK_DEFINITE; k <= RT_LEAK_KINDS; k++) {
		uint64_t by = ls ? ls->bytes[k] : leak_bytes[k], bl = ls ? ls->blocks[k] : leak_blocks[k];
		snprintf(line, sizeof line, "<tr><td>%s</td><td>%s bytes in %s blocks</td></tr>\n", rt_leak_kind_name(k),
			 rt_grouped(by, a), rt_grouped(bl, b));
		rt_out_str(w->o, line);
	}
	snprintf(line, sizeof line, "<tr><td>ERROR SUMMARY</td><td id=\"error-summary-%zu\">%" PRIu64
		 " errors from %" PRIu64 " contexts</td></tr>\n", i, contexts, contexts);
	rt_out_str(w->o, line);
}
