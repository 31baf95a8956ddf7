/* The HTML report's shared pieces: the writer state, escaping (HTML text
 * and JSON inside a <script>), frame names, and the parts of the page,
 * one file each. */
#ifndef RT_HTML_INT_H
#define RT_HTML_INT_H

#include "rtrace/html.h"
#include "rtrace/rtrace.h"
#include "util/out.h"

typedef struct hw {
	rt_out *o;
	const rt_html_input *in;
	size_t n;
	const rt_html_opts *opt;
	unsigned max_rows;
	/* per input: its Valgrind documents' trace (held or built) */
	const rt_trace **docs;
	struct hw_src *src; /* the source files read so far (html_util.c) */
	const char *res_type; /* the resource tab being written */
} hw;

/* HTML text: & < > " ' escaped. */
void hw_text(rt_out *o, const char *s);
void hw_textn(rt_out *o, const char *s, size_t n);
/* A JSON string, quotes included, '<' as \u003c (safe in a <script>). */
void hw_json(rt_out *o, const char *s);
void hw_u64(rt_out *o, uint64_t v);
/* "<td class=n data-v=V>V</td>" and the cost cell the script updates. */
void hw_num_td(rt_out *o, uint64_t v);
void hw_cost_td(rt_out *o, unsigned k, uint64_t v);
/* Bytes as a human reads them: 12.3 KB. */
const char *hw_bytes(uint64_t v, char buf[32]);
/* A frame's function (inlined chain outermost first: k of n names), its
 * "file:line", as the resolver or the reader recorded them; the
 * module and address when nothing is known. */
const char *hw_func(const rt_trace *t, const rt_frame *f, char *buf, size_t n);
const char *hw_where(const rt_trace *t, const rt_frame *f, char *buf, size_t n);
/* A stack, one frame a line ("at"/"by" ADDR: func (file:line)), each
 * followed by its source lines when the file is readable; at most max
 * frames (0: all). */
void hw_stack(hw *w, const rt_trace *t, uint32_t bt, bool source, uint32_t max);
/* The frames a stack of a call site's row shows: deep stacks (python's
 * ~100) would make the tables most of the page. */
#define HW_SITE_FRAMES 24
void hw_free_sources(hw *w);

/* The parts (html_data.c, html_findings.c, html_res.c, html_diff.c). */
void hw_data_json(hw *w);
void hw_sites_table(hw *w, size_t i);
void hw_time_table(hw *w, size_t i);
void hw_sizes_table(hw *w, size_t i);
/* Power-of-two ranges of sizes: [lo, hi, allocations, bytes]; the count. */
size_t hw_size_ranges(const rt_hp_series *s, uint64_t r[65][4]);
void hw_findings(hw *w, size_t i, bool leaks);
void hw_error_counts(hw *w, size_t i);
/* The types of resource other than memory with calls in any input (at
 * most max, registry order), and the table of one type held at exit. */
size_t hw_resource_types(const hw *w, const char **types, size_t max);
void hw_resources(hw *w, size_t i, const char *type);
void hw_resource_summary(hw *w, size_t i);
void hw_diff(hw *w);

#endif
