/* rtrace report: one HTML file of one or more traces (the processes of a
 * run, --follow-children's files), or the diff of two. Each input is
 * read once with a call callback: memory calls feed a heap profile
 * (rt_hp) and its series (rt_hp_series, per site and time bucket) and
 * are not kept, so a trace of millions of allocations costs its live
 * blocks and distinct stacks; the few calls of other resources are kept
 * for the resources tab. Then one call per allocation site is given to
 * the resolver with the kept calls and the leak check's findings, the
 * site calls are dropped again, and the library writes the page
 * (rtrace/html.h). Valgrind XML inputs give their findings alone. */
#include "cli.h"
#include "rtrace/rtrace.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_DIFF = 256, OPT_TITLE, OPT_BUCKETS, OPT_CONTEXT, OPT_MAX_ROWS, OPT_NO_RESOLVE };

static const cli_option options[] = {
	{'o', "output", " FILE", 'o', "write the report to FILE (default report.html)"},
	{0, "diff", NULL, OPT_DIFF, "two traces: add the growth per call site from the\n"
				    "first to the second"},
	{0, "title", "=TEXT", OPT_TITLE, "the page's title (default \"rtrace report\")"},
	{0, "buckets", "=N", OPT_BUCKETS, "time buckets over the run (default 64)"},
	{0, "context", "=N", OPT_CONTEXT, "source lines shown each side of a frame's line\n"
					  "(default 2; 0: the line alone)"},
	{0, "max-rows", "=N", OPT_MAX_ROWS, "rows of a table at most (default 200)"},
	{0, "no-resolve", NULL, OPT_NO_RESOLVE, "keep addresses unresolved"},
	CLI_RESOLVE_DEFAULT_OPTIONS,
	CLI_QUIET_HELP_OPTIONS("no warnings"),
};

static const cli_command command = {
	"report",
	"usage: rtrace report [options] TRACE...\n"
	"\n"
	"One self-contained HTML report of the traces (binary, text or Valgrind\n"
	"XML; several for the processes of one run): summary, leaks and errors\n"
	"in memcheck's terms with stacks and source lines, flame graph, memory\n"
	"over time, allocation sizes, call sites, other resources.\n"
	"\n",
	options, sizeof options / sizeof *options, 28,
	"\n"
	"Exit status: 0 ok, 1 bad input or I/O error, 2 bad command line.\n",
	false,
};

typedef struct report_opts {
	const char *output;
	char **inputs;
	size_t ninputs;
	uint64_t buckets;
	bool no_resolve;
	rt_html_opts html;
	cli_resolve_opts res;
} report_opts;

static uint64_t count_arg(const char *arg, const char *opt, uint64_t min, uint64_t max)
{
	uint64_t v;
	if (!cli_parse_u64(arg, 10, &v) || v < min || v > max)
		cli_die_usage("report", "invalid %s '%s': expected a number from %llu to %llu", opt, arg,
			      (unsigned long long)min, (unsigned long long)max);
	return v;
}

static void parse_options(int argc, char **argv, report_opts *o)
{
	int c;
	o->output = "report.html";
	o->buckets = 64;
	o->html.context = 2;
	while ((c = cli_getopt(&command, argc, argv)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case OPT_DIFF: o->html.diff = true; break;
		case OPT_TITLE: o->html.title = optarg; break;
		case OPT_BUCKETS: o->buckets = count_arg(optarg, "--buckets", 2, 4096); break;
		case OPT_CONTEXT: o->html.context = (unsigned)count_arg(optarg, "--context", 0, 50); break;
		case OPT_MAX_ROWS: o->html.max_rows = (unsigned)count_arg(optarg, "--max-rows", 1, 1000000); break;
		case OPT_NO_RESOLVE: o->no_resolve = true; break;
		default: cli_resolve_option(&o->res, "report", c, optarg); break;
		}
	}
	if (optind >= argc)
		cli_die_usage("report", "no trace given (files, or - for standard input)");
	o->inputs = argv + optind;
	o->ninputs = (size_t)(argc - optind);
	if (o->html.diff && o->ninputs != 2)
		cli_die_usage("report", "--diff compares two traces: give two, not %zu", o->ninputs);
}

typedef struct input {
	rt_trace *t;
	rt_hp *hp;
	rt_hp_series *series;
	unsigned warnings;
	bool vgxml;
} input;

static void on_call(void *ctx, rt_trace *t, const rt_call *c)
{
	input *in = ctx;
	if (c->kind == RT_CALL_DEAD || !c->res_type || rt_trace_res_is(t, c->res_type, "memory"))
		rt_hp_feed(in->hp, t, c);
	else
		rt_trace_append_call(t, c); /* kept, its arguments with it */
}

static void on_warning(void *ctx, const rt_diag *d)
{
	cli_count_warning(&((input *)ctx)->warnings, d);
}

/* One pass over the input; false when nothing usable was read. */
static bool read_one(input *in, const char *path, const report_opts *o)
{
	bool is_stdin = !strcmp(path, "-");
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		cli_die("cannot open '%s': %s", path, strerror(errno));
	in->t = rt_trace_new();
	in->hp = rt_hp_new();
	in->series = rt_hp_series_new(o->buckets, true);
	rt_hp_set_listener(in->hp, rt_hp_series_event, in->series);
	rt_read_opts ro = {0, on_call, on_warning, in};
	rt_read_stats st;
	rt_diag err;
	enum cli_format format;
	int rc = cli_read_input(in->t, fd, is_stdin ? "<stdin>" : path, &ro, &st, &err, &format);
	if (!is_stdin)
		close(fd);
	cli_warnings_end(in->warnings);
	rt_hp_finish(in->hp);
	rt_hp_series_finish(in->series);
	in->vgxml = format == CLI_VGXML;
	if (rc)
		cli_diag_error(&err);
	if (rc && !rt_trace_header_count(in->t) && !rt_vgxml_doc_count(in->t))
		return false;
	if (rc)
		cli_info("note: the report of %s is partial: it covers what was read before the error", path);
	return true;
}

/* The resolver walks the trace's calls: one more per site, whose
 * rewritten backtrace the site takes; then they are dropped. */
static void resolve(input *in, const report_opts *o)
{
	if (o->no_resolve || (rt_trace_filter_bits(in->t) & RT_FILTER_RESOLVE))
		return;
	size_t first = rt_trace_call_count(in->t), n = rt_hp_site_count(in->hp);
	for (size_t i = 0; i < n; i++) {
		const rt_hp_site *s = rt_hp_site_at(in->hp, i);
		rt_call c = {.index = s->first_index, .bt = s->bt, .fn = RT_NONE, .args = RT_NONE,
			     .kind = RT_CALL_ALLOC};
		rt_trace_append_call(in->t, &c);
	}
	cli_resolve(in->t, &o->res);
	rt_call *calls = rt_trace_calls(in->t);
	for (size_t i = 0; i < n; i++) {
		rt_hp_set_site_bt(in->hp, i, calls[first + i].bt);
		rt_trace_kill_call(in->t, &calls[first + i]);
	}
	rt_trace_compact(in->t);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

int cmd_report(int argc, char **argv)
{
	report_opts o = {0};
	parse_options(argc, argv, &o);
	input *in = cli_xrealloc(NULL, o.ninputs, sizeof *in);
	rt_html_input *hi = cli_xrealloc(NULL, o.ninputs, sizeof *hi);
	int status = RT_EXIT_OK;
	size_t n = 0;
	for (size_t i = 0; i < o.ninputs; i++) {
		memset(&in[n], 0, sizeof in[n]);
		if (!read_one(&in[n], o.inputs[i], &o)) {
			status = RT_EXIT_DATA;
			rt_trace_free(in[n].t);
			rt_hp_free(in[n].hp);
			rt_hp_series_free(in[n].series);
			continue;
		}
		resolve(&in[n], &o);
		hi[n] = (rt_html_input){in[n].t, in[n].vgxml ? NULL : in[n].hp, in[n].vgxml ? NULL : in[n].series,
					base_name(o.inputs[i])};
		n++;
	}
	if (n) {
		int fd = open(o.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		int rc = fd < 0 ? -errno : rt_html_write_fd(hi, n, &o.html, fd);
		if (fd >= 0 && close(fd) && !rc)
			rc = -errno;
		if (rc) {
			cli_error("cannot write '%s': %s", o.output, strerror(-rc));
			status = RT_EXIT_DATA;
		}
	}
	for (size_t i = 0; i < n; i++) {
		rt_hp_series_free(in[i].series);
		rt_hp_free(in[i].hp);
		rt_trace_free(in[i].t);
	}
	free(in);
	free(hi);
	cli_resolve_opts_free(&o.res);
	return status;
}
