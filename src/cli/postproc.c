/* rtrace postproc: sp-rtrace-postproc's job on text traces: leak
 * filtering, grouping by backtrace, context/resource/index selection,
 * resolving (-r, with the resolver of resolve.c).
 * Binary traces (rtrace's own format) are read too, told by content. */
#include "cli.h"
#include "rtrace/binary.h"
#include "rtrace/rtrace.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { OPT_INCLUDE = 256, OPT_EXCLUDE, OPT_CALL_ADDRESS };

static const cli_option options[] = {
	{'i', "input-file", " FILE", 'i', "read FILE (default: standard input)"},
	{'o', "output-dir", " DIR", 'o', "write a new file in DIR, named after the traced\n"
					 "process and pid; never overwrites (default: stdout)"},
	{'l', "filter-leaks", NULL, 'l', "drop resources that were released, and releases"},
	{'c', "compress", NULL, 'c', "group calls by backtrace, with per-group totals"},
	{'s', "sort", " ORDER", 's', "group order with -c: size-asc (default), size,\n"
				     "count, count-asc"},
	{'C', "context", " MASK", 'C', "keep calls whose context matches the hex MASK\n"
					"(0: calls made outside any context)"},
	{'R', "resource", " MASK", 'R', "keep resource types in the hex MASK of registry ids"},
	{'b', "backtrace-depth", " N", 'b', "keep at most N frames of each backtrace"},
	{'r', "resolve", NULL, 'r', "resolve addresses to functions, files and lines\n"
				    "(as 'rtrace resolve'; after the other filters)"},
	CLI_RESOLVE_OPTIONS("with -r: look for separate debug info in DIR too\n"
			    "(by build id and .gnu_debuglink; repeatable)",
			    "with -r: read modules and /usr/lib/debug under DIR,\n"
			    "a copy of the traced machine's file system",
			    "with -r: no cache of inflated debug files (see\n"
			    "'rtrace resolve --help')"),
	{0, "include", " FILE", OPT_INCLUDE, "keep only the calls whose index is listed in FILE"},
	{0, "exclude", " FILE", OPT_EXCLUDE, "drop the calls whose index is listed in FILE\n"
					     "(one index per line, decimal or 0x hex)"},
	{0, "call-address", " TARGET:START+SIZE", OPT_CALL_ADDRESS,
	 "\nkeep calls with a frame in [START, START+SIZE) of\n"
	 "the module whose path contains TARGET (START is\n"
	 "relative to the module unless inside its mapping)"},
	CLI_QUIET_HELP_OPTIONS("no warnings"),
};

static const cli_command command = {
	"postproc",
	"usage: rtrace postproc [options]\n"
	"\n"
	"Post-processes a trace in the rtrace text protocol (sp-rtrace's format), a\n"
	"binary trace from `rtrace run` or Valgrind's XML (told by content) and\n"
	"writes the result in the text protocol. Drop-in for sp-rtrace-postproc.\n"
	"Valgrind's loss records and heap errors become the trace's leak verdicts\n"
	"and heap errors (\"## \" comments), its other errors comments.\n"
	"\n",
	options, sizeof options / sizeof *options, 28,
	"\n"
	"Short options combine as in sp-rtrace: 'rtrace postproc -lci trace.txt'.\n"
	"'rtrace postproc -lcr -i TRACE' lists the leaks by stack, with names.\n"
	"Exit status: 0 ok, 1 bad input or I/O error (what was read before the\n"
	"error is still written), 2 bad command line.\n",
	false,
};

typedef struct postproc_opts {
	const char *input, *output_dir;
	bool leaks, compress, sort_given, resolve;
	cli_resolve_opts res;
	enum rt_sort sort;
	bool by_context, by_resource;
	uint32_t context_mask, resource_mask;
	uint32_t depth;
	const char *include, *exclude;
	const char *call_address;
} postproc_opts;

static uint32_t parse_mask(const char *arg, const char *what)
{
	uint64_t v;
	const char *s = arg;
	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		s += 2;
	if (!cli_parse_u64(s, 16, &v) || v > UINT32_MAX)
		cli_die_usage("postproc", "invalid %s mask '%s': expected a hexadecimal number", what, arg);
	return (uint32_t)v;
}

static enum rt_sort parse_sort(const char *arg)
{
	static const struct { const char *name; enum rt_sort sort; } orders[] = {
		{"size", RT_SORT_SIZE_DESC}, {"size-asc", RT_SORT_SIZE_ASC},
		{"count", RT_SORT_COUNT_DESC}, {"count-asc", RT_SORT_COUNT_ASC},
	};
	for (size_t i = 0; i < sizeof orders / sizeof *orders; i++)
		if (!strcmp(arg, orders[i].name))
			return orders[i].sort;
	cli_die_usage("postproc", "invalid sort order '%s': expected size, size-asc, count or count-asc", arg);
}

static void parse_options(int argc, char **argv, postproc_opts *o)
{
	uint64_t v;
	int c;
	while ((c = cli_getopt(&command, argc, argv)) != -1) {
		switch (c) {
		case 'i': o->input = optarg; break;
		case 'o': o->output_dir = optarg; break;
		case 'l': o->leaks = true; break;
		case 'c': o->compress = true; break;
		case 'r': o->resolve = true; break;
		case 's': o->sort = parse_sort(optarg); o->sort_given = true; break;
		case 'C': o->by_context = true; o->context_mask = parse_mask(optarg, "context"); break;
		case 'R': o->by_resource = true; o->resource_mask = parse_mask(optarg, "resource"); break;
		case 'b':
			if (!cli_parse_u64(optarg, 10, &v) || v == 0 || v > UINT32_MAX)
				cli_die_usage("postproc", "invalid backtrace depth '%s': expected a positive number", optarg);
			o->depth = (uint32_t)v;
			break;
		case OPT_INCLUDE: o->include = optarg; break;
		case OPT_EXCLUDE: o->exclude = optarg; break;
		case OPT_CALL_ADDRESS: o->call_address = optarg; break;
		default: cli_resolve_option(&o->res, "postproc", c, optarg); break;
		}
	}
	if (optind < argc)
		cli_die_usage("postproc", "unexpected argument '%s' (the input is given with -i)", argv[optind]);
	if (o->sort_given && !o->compress)
		cli_die_usage("postproc", "--sort orders the groups of --compress; add -c");
	if (cli_resolve_opts_given(&o->res) && !o->resolve)
		cli_die_usage("postproc", "--debug-dir, --root and --no-cache are options of --resolve; add -r");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Reads "one index per line" files of --include/--exclude, sorted. */
static uint64_t *load_index_file(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		cli_die("cannot open index file '%s': %s", path, strerror(errno));
	uint64_t *v = NULL;
	size_t cap = 0, line = 0;
	char *buf = NULL;
	size_t bufcap = 0;
	*n = 0;
	while (getline(&buf, &bufcap, fp) >= 0) {
		line++;
		char *s = buf + strspn(buf, " \t");
		s[strcspn(s, "\r\n")] = '\0';
		if (!*s || *s == '#')
			continue;
		uint64_t x;
		int base = !strncmp(s, "0x", 2) ? 16 : 10;
		char *end = s + strcspn(s, " \t");
		char save = *end;
		*end = '\0';
		if (!cli_parse_u64(base == 16 ? s + 2 : s, base, &x))
			cli_die("%s:%zu:%td: expected a call index (decimal or 0x hex)", path, line, s - buf + 1);
		*end = save;
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			v = cli_xrealloc(v, cap, sizeof *v);
		}
		v[(*n)++] = x;
	}
	free(buf);
	fclose(fp);
	qsort(v, *n, sizeof *v, cmp_u64);
	return v;
}

typedef struct sink {
	const postproc_opts *o;
	rt_leaks *leaks;
	unsigned warnings;
} sink;

/* Resource selection and leak matching happen while reading, so memory
 * follows the live set rather than the whole trace. */
static void on_call(void *ctx, rt_trace *t, const rt_call *c)
{
	sink *s = ctx;
	if (s->o->by_resource) {
		const rt_resource *r = rt_trace_resource_get(t, c->res_type);
		if (r && !(r->mask & s->o->resource_mask)) {
			rt_trace_release_args(t, c->args);
			return;
		}
	}
	if (s->leaks)
		rt_leaks_feed(s->leaks, t, c);
	else
		rt_trace_append_call(t, c);
}

static void on_warning(void *ctx, const rt_diag *d)
{
	cli_count_warning(&((sink *)ctx)->warnings, d);
}

static void select_calls(rt_trace *t, const postproc_opts *o)
{
	rt_select sel = {0};
	uint64_t *inc = NULL, *exc = NULL;
	sel.by_context = o->by_context;
	sel.context_mask = o->context_mask;
	if (o->include) {
		inc = load_index_file(o->include, &sel.ninclude);
		sel.include = inc ? inc : (const uint64_t[]){0};
	}
	if (o->exclude)
		sel.exclude = exc = load_index_file(o->exclude, &sel.nexclude);
	if (o->call_address) {
		char *target = strdup(o->call_address);
		char *colon = target ? strrchr(target, ':') : NULL;
		char *plus = colon ? strchr(colon, '+') : NULL;
		uint64_t start, size;
		if (!colon || !plus || colon == target)
			cli_die_usage("postproc", "invalid --call-address '%s': expected TARGET:START+SIZE", o->call_address);
		*colon = *plus = '\0';
		if (!cli_parse_u64(colon + 1, 0, &start) || !cli_parse_u64(plus + 1, 0, &size))
			cli_die_usage("postproc", "invalid --call-address '%s': START and SIZE are numbers", o->call_address);
		sel.by_address = true;
		if (!rt_select_address_range(t, target, start, size, &sel.addr_from, &sel.addr_to)) {
			cli_warning("--call-address: no module in the memory map matches '%s'; no call selected", target);
			sel.addr_from = sel.addr_to = 0;
		}
		free(target);
	}
	if (sel.by_context || sel.include || sel.exclude || sel.by_address)
		rt_select_apply(&sel, t);
	free(inc);
	free(exc);
}

/* Opens DIR/<process>-<pid>.rtrace.txt, adding -N until the name is new. */
static int open_output(const char *dir, const rt_trace *t, char *path, size_t len)
{
	const char *proc = rt_trace_header(t, "process");
	const char *pid = rt_trace_header(t, "pid");
	const char *base = proc && *proc ? strrchr(proc, '/') : NULL;
	base = base ? base + 1 : (proc && *proc ? proc : "trace");
	for (int n = 0; n < 10000; n++) {
		if (n)
			snprintf(path, len, "%s/%s-%s-%d.rtrace.txt", dir, base, pid ? pid : "0", n);
		else
			snprintf(path, len, "%s/%s-%s.rtrace.txt", dir, base, pid ? pid : "0");
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

static int write_result(rt_trace *t, const postproc_opts *o)
{
	rt_write_opts w = {0};
	w.filter_bits = (rt_trace_filter_bits(t) & (RT_FILTER_LEAKS | RT_FILTER_RESOLVE)) |
			(o->leaks ? RT_FILTER_LEAKS : 0) | (o->compress ? RT_FILTER_COMPRESS : 0);
	w.compress = o->compress;
	w.sort = o->sort;
	w.leak_summary = o->leaks;
	w.contexts = !o->by_context;
	if (o->depth) {
		char buf[16];
		snprintf(buf, sizeof buf, "%u", o->depth);
		rt_trace_set_header(t, "backtrace depth", buf);
	}
	int fd = STDOUT_FILENO;
	char path[4096];
	if (o->output_dir) {
		fd = open_output(o->output_dir, t, path, sizeof path);
		if (fd < 0) {
			cli_error("cannot create an output file in '%s': %s", o->output_dir, strerror(errno));
			return -1;
		}
	}
	int rc = rt_text_write_fd(t, fd, &w);
	if (o->output_dir) {
		if (close(fd) && !rc)
			rc = -errno;
		if (!rc)
			cli_info("created text trace %s", path);
	}
	if (rc) {
		cli_error("cannot write %s: %s", o->output_dir ? path : "standard output", strerror(-rc));
		return -1;
	}
	return 0;
}

int cmd_postproc(int argc, char **argv)
{
	postproc_opts o = {0};
	parse_options(argc, argv, &o);

	int fd = STDIN_FILENO;
	const char *name = "<stdin>";
	if (o.input) {
		fd = open(o.input, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			cli_die("cannot open '%s': %s", o.input, strerror(errno));
		name = o.input;
	}
	rt_trace *t = rt_trace_new();
	sink s = {&o, o.leaks ? rt_leaks_new() : NULL, 0};
	rt_read_opts ro = {o.depth, on_call, on_warning, &s};
	rt_read_stats st;
	rt_diag err;
	enum cli_format format;
	int rc = cli_read_input(t, fd, name, &ro, &st, &err, &format);
	if (fd != STDIN_FILENO)
		close(fd);
	if (format == CLI_VGXML)
		rt_vgxml_to_heapcheck(t);
	if (s.leaks)
		rt_leaks_finish(s.leaks, t);
	rt_leaks_free(s.leaks);
	cli_warnings_end(s.warnings);
	if (rc)
		cli_diag_error(&err);
	if (rc && rt_trace_header_count(t) == 0) {
		/* nothing usable was read: writing an empty trace would mislead */
		rt_trace_free(t);
		return RT_EXIT_DATA;
	}
	if (o.by_resource)
		rt_select_resources(t, o.resource_mask);
	select_calls(t, &o);
	if (o.resolve)
		cli_resolve(t, &o.res);
	int wrc = write_result(t, &o);
	if (rc && !wrc)
		cli_info("note: the output is partial: it holds what was read before the error (%" PRIu64 " call record(s))",
		     st.calls);
	rt_trace_free(t);
	cli_resolve_opts_free(&o.res);
	return rc || wrc ? RT_EXIT_DATA : RT_EXIT_OK;
}
