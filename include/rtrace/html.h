/* One self-contained HTML report of one or several traces (the processes
 * of a run), or a diff of two: summary, leak and error tables in
 * memcheck's terms with resolved stacks and source lines, an interactive
 * flame graph, memory over time with a brushable range, the allocation
 * size histogram, the other resources traced. The tables are HTML, read
 * with JavaScript off; the page's script (no library, no network) draws
 * the charts from aggregates embedded as JSON: per call site, per time
 * bucket (rt_hp_series), never per call, so the page stays a few hundred
 * kilobytes for millions of allocations. Inputs without calls (Valgrind
 * XML) give the findings alone. docs/rtrace-report.1. */
#ifndef RTRACE_HTML_H
#define RTRACE_HTML_H

#include "rtrace/export.h"
#include "rtrace/heapprof.h"
#include "rtrace/trace.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_html_input {
	/* The trace, resolved: its headers, heap findings or Valgrind
	 * documents, and the calls of resources other than memory (kept
	 * while the memory calls were fed to hp). */
	const rt_trace *trace;
	const rt_hp *hp;            /* after rt_hp_finish; NULL: no calls */
	const rt_hp_series *series; /* per_site, finished; NULL: none */
	const char *name;           /* the input file's name */
} rt_html_input;

typedef struct rt_html_opts {
	const char *title;  /* NULL: "rtrace report" */
	bool diff;          /* two inputs: the second's growth over the first */
	unsigned context;   /* source lines shown each side of a frame's line */
	unsigned max_rows;  /* rows of a table at most (0: 200) */
} rt_html_opts;

/* Writes the report of the n inputs to fd. 0 or -errno. */
RTRACE_API int rt_html_write_fd(const rt_html_input *in, size_t n, const rt_html_opts *opts, int fd);

#ifdef __cplusplus
}
#endif
#endif
