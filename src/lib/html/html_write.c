/* The report page: one HTML file, its CSS and script inside it (made at
 * build time from src/lib/html/assets/, html_assets.c), nothing fetched
 * when it opens. Every table is HTML and every section is on the page in
 * order, so a browser without JavaScript shows it all; the script turns
 * the sections into tabs, draws the charts from the embedded JSON
 * (html_data.c) and sorts and filters the tables. Several inputs (the
 * processes of one run) share the page: a selector shows one at a time;
 * with the diff option two inputs also get the table of growth per call
 * site (html_diff.c). Layout: summary, flame graph, memory over time,
 * sizes, call sites, leaks, errors, a tab per other resource type
 * traced (descriptors, streams, mappings, ...), diff. */
#include "html/html_int.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char rt_html_css[], rt_html_js[];

static void kv(rt_out *o, const char *k, const char *v, const char *id)
{
	rt_out_str(o, "<tr><td>");
	hw_text(o, k);
	rt_out_str(o, id ? "</td><td id=\"" : "</td><td>");
	if (id) {
		rt_out_str(o, id);
		rt_out_str(o, "\">");
	}
	hw_text(o, v ? v : "unknown");
	rt_out_str(o, "</td></tr>\n");
}

/* The program, its arguments and pid: the trace's headers, or the
 * Valgrind document's <args> and <pid>. */
static void identity(hw *w, size_t i)
{
	const rt_trace *t = w->in[i].trace, *d = w->docs[i];
	uint32_t root = d && rt_vgxml_doc_count(d) ? rt_vgxml_doc_root(d, 0) : RT_NONE;
	uint32_t args = root == RT_NONE ? RT_NONE : rt_vgxml_find(d, root, "args", RT_NONE);
	uint32_t argv = args == RT_NONE ? RT_NONE : rt_vgxml_find(d, args, "argv", RT_NONE);
	const char *exe = rt_trace_header(t, "process");
	if (!exe && argv != RT_NONE)
		exe = rt_vgxml_child_text(d, argv, "exe");
	kv(w->o, "input", w->in[i].name, NULL);
	kv(w->o, "program", exe, NULL);
	if (argv != RT_NONE) {
		char line[4096];
		size_t len = (size_t)snprintf(line, sizeof line, "%s", exe ? exe : "");
		for (uint32_t a = rt_vgxml_find(d, argv, "arg", RT_NONE); a != RT_NONE && len < sizeof line;
		     a = rt_vgxml_find(d, argv, "arg", a))
			len += (size_t)snprintf(line + len, sizeof line - len, " %s", rt_vgxml_text(d, a) ? rt_vgxml_text(d, a) : "");
		kv(w->o, "command line", line, NULL);
	}
	const char *pid = rt_trace_header(t, "pid");
	if (!pid && root != RT_NONE)
		pid = rt_vgxml_child_text(d, root, "pid");
	kv(w->o, "pid", pid, NULL);
	static const char *const more[] = {"cmdline", "timestamp", "arch", "origin"};
	for (size_t k = 0; k < sizeof more / sizeof *more; k++)
		if (rt_trace_header(t, more[k]))
			kv(w->o, more[k], rt_trace_header(t, more[k]), NULL);
}

static void heap_summary(hw *w, size_t i)
{
	const rt_hp *h = w->in[i].hp;
	char v[160], id[48], a[32];
	if (!h) {
		kv(w->o, "heap profile", "none: this input has no allocation calls (Valgrind XML)", NULL);
		return;
	}
	const rt_hp_summary *s = rt_hp_get_summary(h);
	if (s->timed)
		snprintf(v, sizeof v, "%.3f s", (double)(s->last_us - s->first_us) / 1e6);
	kv(w->o, "duration", s->timed ? v : "unknown (no call times)", NULL);
	snprintf(v, sizeof v, "%" PRIu64, s->total.allocations);
	snprintf(id, sizeof id, "calls-%zu", i);
	kv(w->o, "calls to allocation functions", v, id);
	snprintf(v, sizeof v, "%" PRIu64, s->total.temporary);
	snprintf(id, sizeof id, "temporary-%zu", i);
	kv(w->o, "temporary memory allocations", v, id);
	snprintf(v, sizeof v, "%" PRIu64 " bytes (%s), %" PRIu64 " frees", s->total.bytes, hw_bytes(s->total.bytes, a),
		 s->frees);
	kv(w->o, "bytes allocated in total", v, NULL);
	int k = snprintf(v, sizeof v, "%" PRIu64 " bytes (%s), at call %" PRIu64, s->total.peak,
			 hw_bytes(s->total.peak, a), s->peak_index);
	if (s->timed && k > 0)
		snprintf(v + k, sizeof v - (size_t)k, ", after %.3f s", (double)(s->peak_us - s->first_us) / 1e6);
	snprintf(id, sizeof id, "peak-%zu", i);
	kv(w->o, "peak heap memory consumption", v, id);
	snprintf(v, sizeof v, "%" PRIu64 " bytes in %" PRIu64 " blocks", s->total.leaked, s->leaked_blocks);
	snprintf(id, sizeof id, "leaked-%zu", i);
	kv(w->o, "total memory leaked", v, id);
}

static void per_trace(hw *w, void (*fn)(hw *, size_t))
{
	for (size_t i = 0; i < w->n; i++) {
		char b[64];
		snprintf(b, sizeof b, "<div data-trace=%zu>", i);
		rt_out_str(w->o, b);
		if (w->n > 1) {
			rt_out_str(w->o, "<h3>");
			hw_text(w->o, w->in[i].name);
			rt_out_str(w->o, "</h3>");
		}
		fn(w, i);
		rt_out_str(w->o, "</div>\n");
	}
}

static void summary(hw *w, size_t i)
{
	rt_out_str(w->o, "<table class=kv>");
	identity(w, i);
	heap_summary(w, i);
	hw_error_counts(w, i);
	hw_resource_summary(w, i);
	rt_out_str(w->o, "</table>");
}

static void leaks(hw *w, size_t i) { hw_findings(w, i, true); }
static void resources(hw *w, size_t i) { hw_resources(w, i, w->res_type); }
static void errors(hw *w, size_t i) { hw_findings(w, i, false); }

static void open_section(hw *w, const char *id, const char *title, const char *intro)
{
	rt_out_str(w->o, "<section class=tab id=\"");
	hw_text(w->o, id);
	rt_out_str(w->o, "\"><h2>");
	hw_text(w->o, title);
	rt_out_str(w->o, "</h2>");
	if (intro) {
		rt_out_str(w->o, "<p class=muted>");
		hw_text(w->o, intro);
		rt_out_str(w->o, "</p>");
	}
}

static const char *const tabs[][2] = {
	{"summary", "Summary"}, {"flame", "Flame graph"}, {"time", "Memory over time"}, {"sizes", "Sizes"},
	{"sites", "Call sites"}, {"leaks", "Leaks"},	   {"errors", "Errors"},
};

#define MAX_RES_TABS 16

/* A resource type's tab title: the modules' types in words. */
static const char *res_title(const char *type)
{
	static const char *const names[][2] = {{"fd", "Descriptors"},	     {"fp", "Streams"},
					       {"dir", "Directory streams"}, {"mmap", "Mappings"},
					       {"shm", "Shared memory"},     {"sem", "Semaphores"}};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(type, names[i][0]))
			return names[i][1];
	return type;
}

static void tab_link(rt_out *o, const char *prefix, const char *id, const char *title)
{
	rt_out_str(o, "<a href=\"#");
	rt_out_str(o, prefix);
	hw_text(o, id);
	rt_out_str(o, "\">");
	hw_text(o, title);
	rt_out_str(o, "</a>");
}

static void head(hw *w, const char *const *types, size_t ntypes)
{
	const char *title = w->opt->title ? w->opt->title : "rtrace report";
	rt_out_str(w->o, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
			 "<meta name=viewport content=\"width=device-width,initial-scale=1\"><title>");
	hw_text(w->o, title);
	rt_out_str(w->o, "</title><style>");
	rt_out_str(w->o, rt_html_css);
	rt_out_str(w->o, "</style></head>\n<body data-ready=0><header><h1>");
	hw_text(w->o, title);
	rt_out_str(w->o, "</h1><div class=sub>rtrace " RTRACE_VERSION);
	for (size_t i = 0; i < w->n; i++) {
		rt_out_str(w->o, i ? ", " : " \xc2\xb7 ");
		hw_text(w->o, w->in[i].name);
	}
	rt_out_str(w->o, "</div></header>\n<nav>");
	for (size_t k = 0; k < sizeof tabs / sizeof *tabs; k++)
		tab_link(w->o, "", tabs[k][0], tabs[k][1]);
	for (size_t k = 0; k < ntypes; k++)
		tab_link(w->o, "res-", types[k], res_title(types[k]));
	if (w->opt->diff)
		tab_link(w->o, "", "diff", "Diff");
	if (w->n > 1) {
		rt_out_str(w->o, "<select id=trace title=\"the trace shown\">");
		for (size_t i = 0; i < w->n; i++) {
			char b[48];
			snprintf(b, sizeof b, "<option value=%zu>", i);
			rt_out_str(w->o, b);
			hw_text(w->o, w->in[i].name);
			rt_out_str(w->o, "</option>");
		}
		rt_out_str(w->o, "</select>");
	}
	rt_out_str(w->o, "</nav>\n<main><div id=\"js-errors\"></div>\n");
}

static void charts(hw *w)
{
	open_section(w, "flame", "Flame graph", "Allocation stacks, the outermost frame on top; click a frame to "
						"zoom in, search to highlight.");
	rt_out_str(w->o, "<div class=controls><label>cost <select id=fg-cost><option>allocations</option>"
			 "<option>bytes</option><option>temporary</option><option>leaked</option>"
			 "<option>peak</option></select></label><label>search <input id=fg-search type=search>"
			 "</label><button id=fg-reset type=button>Reset zoom</button> <span id=fg-match></span></div>"
			 "<svg id=fg class=fg></svg><noscript><p>The flame graph needs JavaScript; the call sites "
			 "tab has its figures.</p></noscript></section>\n");
	open_section(w, "time", "Memory over time", "Drag over the chart to keep the allocations made in a range: "
						    "the flame graph, the call sites and the leaks follow.");
	rt_out_str(w->o, "<div class=controls>range: <span id=tm-range>whole run</span> "
			 "<button id=tm-clear type=button>Clear</button></div><svg id=tm></svg>");
	per_trace(w, hw_time_table);
	rt_out_str(w->o, "</section>\n");
	open_section(w, "sizes", "Allocation sizes", "Allocations by size, in power-of-two ranges.");
	rt_out_str(w->o, "<svg id=hist></svg>");
	per_trace(w, hw_sizes_table);
	rt_out_str(w->o, "</section>\n");
}

static void fill(rt_out *o, const void *model, const void *opts)
{
	hw *w = (hw *)model;
	const char *types[MAX_RES_TABS];
	size_t ntypes = hw_resource_types(w, types, MAX_RES_TABS);
	(void)opts;
	w->o = o;
	head(w, types, ntypes);
	open_section(w, "summary", "Summary", NULL);
	per_trace(w, summary);
	rt_out_str(o, "</section>\n");
	charts(w);
	open_section(w, "sites", "Call sites", "Each allocation stack's costs; bytes live at the peak, leaked at exit.");
	per_trace(w, hw_sites_table);
	rt_out_str(o, "</section>\n");
	open_section(w, "leaks", "Leaks", "memcheck's loss records, every kind; open a row for its stack.");
	per_trace(w, leaks);
	rt_out_str(o, "</section>\n");
	open_section(w, "errors", "Errors", "Invalid and mismatched frees, descriptor errors, and the other "
					    "errors of the input's tool.");
	per_trace(w, errors);
	rt_out_str(o, "</section>\n");
	for (size_t k = 0; k < ntypes; k++) {
		char id[64];
		snprintf(id, sizeof id, "res-%s", types[k]);
		open_section(w, id, res_title(types[k]), "Those held at exit, the most recent first, with the stacks "
							 "that made them.");
		w->res_type = types[k];
		per_trace(w, resources);
		rt_out_str(o, "</section>\n");
	}
	if (w->opt->diff) {
		open_section(w, "diff", "Diff", "Growth per call site from the first trace to the second.");
		hw_diff(w);
		rt_out_str(o, "</section>\n");
	}
	rt_out_str(o, "</main>\n");
	hw_data_json(w);
	rt_out_str(o, "<script>");
	rt_out_str(o, rt_html_js);
	rt_out_str(o, "</script></body></html>\n");
}

int rt_html_write_fd(const rt_html_input *in, size_t n, const rt_html_opts *opts, int fd)
{
	rt_html_opts def = {0};
	hw w = {NULL, in, n, opts ? opts : &def, 0, NULL, NULL};
	w.max_rows = w.opt->max_rows ? w.opt->max_rows : 200;
	rt_trace **built = rt_xcalloc(n ? n : 1, sizeof *built);
	w.docs = rt_xcalloc(n ? n : 1, sizeof *w.docs);
	rt_vgxml_write_opts vo = {0};
	vo.show_leak_kinds = (1u << RT_LEAK_DEFINITE) | (1u << RT_LEAK_INDIRECT) | (1u << RT_LEAK_POSSIBLE) |
			     (1u << RT_LEAK_REACHABLE);
	for (size_t i = 0; i < n; i++) {
		if (!rt_vgxml_doc_count(in[i].trace))
			built[i] = rt_vgxml_build(in[i].trace, &vo);
		w.docs[i] = built[i] ? built[i] : in[i].trace;
	}
	int rc = rt_out_write_fd(fd, fill, &w, NULL);
	for (size_t i = 0; i < n; i++)
		rt_trace_free(built[i]);
	free(built);
	free(w.docs);
	hw_free_sources(&w);
	return rc;
}
