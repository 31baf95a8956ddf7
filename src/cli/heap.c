/* rtrace heap: heaptrack_print's questions on an rtrace trace. The trace
 * is read with a call callback that feeds the heap profile (rt_hp) and
 * keeps no call, so memory follows the live blocks and the distinct
 * backtraces, not the trace's length. After the pass, one call per
 * allocation site is given to the resolver, and the sites are reported
 * (merged by allocating function, as heaptrack_print does, or per
 * backtrace) or written as collapsed stacks for flame graphs, or as
 * valgrind massif's output, whose snapshots are taken during the pass. */
#include "cli.h"
#include "rtrace/rtrace.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_NO_RESOLVE = 256, OPT_COLLAPSED, OPT_STACKS, OPT_HEAPTRACK, OPT_MASSIF, OPT_TIME_UNIT };

static const cli_option options[] = {
	{'n', "limit", " N", 'n', "call sites in each list (default 10)"},
	{'s', "sub-limit", " N", 's', "backtraces under each merged call site (default 5)"},
	{0, "stacks", NULL, OPT_STACKS, "a call site per backtrace, not merged by the\n"
					"allocating function"},
	{0, "collapsed", "=COST", OPT_COLLAPSED, "write collapsed stacks for flame graphs instead,\n"
						 "weighted by COST: allocations, temporary,\n"
						 "bytes, peak or leaked"},
	{0, "heaptrack", "=FILE", OPT_HEAPTRACK, "write FILE in heaptrack's format instead, for\n"
						 "heaptrack_print and heaptrack_gui (gzip-\n"
						 "compressed when FILE ends in .gz)"},
	{0, "massif", NULL, OPT_MASSIF, "write valgrind massif's output instead (ms_print,\n"
					"massif-visualizer): the heap over time, the peak"},
	{0, "time-unit", "=UNIT", OPT_TIME_UNIT, "massif's time: i (calls), ms or B (bytes\n"
						 "allocated and freed); default ms if timed, else i"},
	{'o', "output", " FILE", 'o', "write FILE (default: standard output)"},
	{0, "no-resolve", NULL, OPT_NO_RESOLVE, "keep addresses unresolved"},
	CLI_RESOLVE_OPTIONS("look for separate debug info in DIR too (repeatable)",
			    "resolve against DIR, a copy of the traced machine's\n"
			    "file system",
			    "no cache of inflated debug files"),
	CLI_QUIET_HELP_OPTIONS("no warnings"),
};

static const cli_command command = {
	"heap",
	"usage: rtrace heap [options] TRACE\n"
	"\n"
	"Heap profile of a trace, in heaptrack_print's terms: allocation calls,\n"
	"temporary allocations (freed with no allocation in between), the peak\n"
	"heap consumption and who held it, leaked bytes; then the top call\n"
	"sites by peak, allocations, temporary allocations and leaks. TRACE\n"
	"('-': standard input) is a binary or text trace of memory.\n"
	"\n",
	options, sizeof options / sizeof *options, 28,
	"\n"
	"Exit status: 0 ok, 1 bad input or I/O error, 2 bad command line.\n",
	false,
};

typedef struct heap_opts {
	const char *input, *output, *heaptrack;
	uint64_t limit, sub_limit;
	bool stacks, no_resolve, collapsed, massif;
	rt_hp_cost_type cost;
	rt_hp_time_unit time_unit;
	cli_resolve_opts res;
} heap_opts;

static uint64_t parse_count(const char *arg, const char *opt)
{
	uint64_t v;
	if (!cli_parse_u64(arg, 10, &v))
		cli_die_usage("heap", "invalid %s '%s': expected a number", opt, arg);
	return v;
}

static void parse_options(int argc, char **argv, heap_opts *o)
{
	int c;
	o->limit = 10;
	o->sub_limit = 5;
	while ((c = cli_getopt(&command, argc, argv)) != -1) {
		switch (c) {
		case 'n': o->limit = parse_count(optarg, "--limit"); break;
		case 's': o->sub_limit = parse_count(optarg, "--sub-limit"); break;
		case 'o': o->output = optarg; break;
		case OPT_STACKS: o->stacks = true; break;
		case OPT_HEAPTRACK: o->heaptrack = optarg; break;
		case OPT_NO_RESOLVE: o->no_resolve = true; break;
		case OPT_COLLAPSED:
			if (!rt_hp_parse_cost(optarg, &o->cost))
				cli_die_usage("heap", "invalid cost '%s': expected allocations, temporary, "
					  "bytes, peak or leaked", optarg);
			o->collapsed = true;
			break;
		case OPT_MASSIF: o->massif = true; break;
		case OPT_TIME_UNIT:
			if (!rt_hp_parse_time_unit(optarg, &o->time_unit))
				cli_die_usage("heap", "invalid time unit '%s': expected i, ms or B", optarg);
			break;
		default: cli_resolve_option(&o->res, "heap", c, optarg); break;
		}
	}
	if (o->heaptrack && o->collapsed)
		cli_die_usage("heap", "--heaptrack and --collapsed are two outputs: give one");
	if (o->massif && o->collapsed)
		cli_die_usage("heap", "--massif and --collapsed are two outputs: one at a time");
	if (o->time_unit && !o->massif)
		cli_die_usage("heap", "--time-unit is massif's: give --massif too");
	if (o->heaptrack && o->massif)
		cli_die_usage("heap", "--heaptrack and --massif are two outputs: give one");
	if (optind >= argc)
		cli_die_usage("heap", "no trace given (a file, or - for standard input)");
	if (optind + 1 < argc)
		cli_die_usage("heap", "unexpected argument '%s' (one trace at a time)", argv[optind + 1]);
	o->input = argv[optind];
}

typedef struct sink {
	rt_hp *hp;
	rt_hp_massif *massif; /* NULL: no snapshots */
	unsigned warnings;
} sink;

static void on_call(void *ctx, rt_trace *t, const rt_call *c)
{
	sink *s = ctx;
	rt_hp_feed(s->hp, t, c);
	if (s->massif)
		rt_hp_massif_sample(s->massif, s->hp);
}

static void on_warning(void *ctx, const rt_diag *d)
{
	cli_count_warning(&((sink *)ctx)->warnings, d);
}

/* One pass over the trace into h; -1 when nothing usable was read. */
static int read_profile(rt_trace *t, rt_hp *h, rt_hp_massif *m, const heap_opts *o)
{
	bool is_stdin = !strcmp(o->input, "-");
	int fd = is_stdin ? STDIN_FILENO : open(o->input, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		cli_die("cannot open '%s': %s", o->input, strerror(errno));
	sink s = {h, m, 0};
	rt_read_opts ro = {0, on_call, on_warning, &s};
	rt_read_stats st;
	rt_diag err;
	enum cli_format format;
	int rc = cli_read_input(t, fd, is_stdin ? "<stdin>" : o->input, &ro, &st, &err, &format);
	if (!is_stdin)
		close(fd);
	cli_warnings_end(s.warnings);
	rt_hp_add_dropped(h, t);
	rt_hp_finish(h);
	if (rc)
		cli_diag_error(&err);
	if (format == CLI_VGXML) {
		cli_error("%s is Valgrind XML: it has no allocation calls to profile", o->input);
		return -1;
	}
	if (rc && rt_trace_header_count(t) == 0)
		return -1;
	if (rc)
		cli_info("note: the profile is partial: it covers what was read before the error");
	return rc ? 1 : 0;
}

/* The resolver walks the trace's calls: one call per site, then each
 * site takes the backtrace its call was rewritten to. */
static void resolve_sites(rt_trace *t, rt_hp *h, const heap_opts *o)
{
	if (o->no_resolve || (rt_trace_filter_bits(t) & RT_FILTER_RESOLVE))
		return;
	size_t n = rt_hp_site_count(h);
	for (size_t i = 0; i < n; i++) {
		const rt_hp_site *s = rt_hp_site_at(h, i);
		rt_call c = {.index = s->first_index, .bt = s->bt, .fn = RT_NONE, .args = RT_NONE,
			     .kind = RT_CALL_ALLOC};
		rt_trace_append_call(t, &c);
	}
	cli_resolve(t, &o->res);
	const rt_call *calls = rt_trace_calls_const(t);
	for (size_t i = 0; i < n; i++)
		rt_hp_set_site_bt(h, i, calls[i].bt);
}


/* Bytes as heaptrack_print prints them: 1000B, 2.00K, 158.12K. */
static const char *fmt_bytes(uint64_t v, char buf[32])
{
	static const char units[] = "BKMGTPE";
	double d = (double)v;
	size_t u = 0;
	while (d > 1000 && u + 1 < sizeof units - 1) {
		d /= 1000;
		u++;
	}
	if (u)
		snprintf(buf, 32, "%.2f%c", d, units[u]);
	else
		snprintf(buf, 32, "%" PRIu64 "B", v);
	return buf;
}

/* "func (file:line)", "func (in module)" or "0xADDR (in module)": the
 * function really called, inlined calls folded into it. */
static void describe_frame(const rt_trace *t, const rt_frame *f, char *buf, size_t n)
{
	rt_frame_info info;
	bool known = rt_trace_frame_info(t, f, &info) && info.n;
	const rt_srcloc *fn = known ? &info.locs[info.n - 1] : NULL;
	const rt_srcloc *at = known ? &info.locs[0] : NULL;
	const char *mod = known && info.module != RT_NONE ? rt_trace_str(t, info.module) : rt_trace_module_at(t, f->addr);
	char name[32];
	snprintf(name, sizeof name, "0x%" PRIx64, f->addr);
	const char *func = fn && fn->fn != RT_NONE ? rt_trace_str(t, fn->fn) : name;
	if (at && at->file != RT_NONE && at->line) {
		const char *file = rt_trace_str(t, at->file), *base = strrchr(file, '/');
		snprintf(buf, n, "%s (%s:%u)", func, base ? base + 1 : file, at->line);
	} else if (mod) {
		snprintf(buf, n, "%s (in %s)", func, mod);
	} else {
		snprintf(buf, n, "%s", func);
	}
}

/* A site is its backtrace; merged, it is its allocating frame. */
typedef struct entry {
	char *key;    /* the allocating frame described */
	size_t site;  /* rt_hp site index */
	uint64_t w;   /* the cost being ranked */
} entry;

typedef struct group {
	size_t first, n; /* entries [first, first + n) */
	rt_hp_cost cost;
	uint64_t w;
} group;

typedef struct report {
	FILE *fp;
	const rt_trace *t;
	const rt_hp *h;
	entry *e;
	group *g;
	size_t ne, ng;
	uint64_t limit, sub_limit;
} report;

static int cmp_key(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->site > y->site) - (x->site < y->site);
}

static int cmp_entry_w(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	return (x->w < y->w) - (x->w > y->w);
}

static int cmp_group_w(const void *a, const void *b)
{
	const group *x = a, *y = b;
	if (x->w != y->w)
		return (x->w < y->w) - (x->w > y->w);
	return (x->first > y->first) - (x->first < y->first);
}

static void add_cost(rt_hp_cost *to, const rt_hp_cost *c)
{
	to->allocations += c->allocations;
	to->temporary += c->temporary;
	to->bytes += c->bytes;
	to->peak += c->peak;
	to->leaked += c->leaked;
}

/* Entries sorted by key, grouped (one group per entry with --stacks). */
static void build_groups(report *r, bool stacks)
{
	char buf[1024];
	r->ne = rt_hp_site_count(r->h);
	r->e = cli_xrealloc(NULL, r->ne ? r->ne : 1, sizeof *r->e);
	r->g = cli_xrealloc(NULL, r->ne ? r->ne : 1, sizeof *r->g);
	for (size_t i = 0; i < r->ne; i++) {
		const rt_hp_site *s = rt_hp_site_at(r->h, i);
		if (s->bt == RT_NONE || !rt_trace_bt_len(r->t, s->bt))
			snprintf(buf, sizeof buf, "[no backtrace]");
		else
			describe_frame(r->t, rt_trace_bt_frames(r->t, s->bt), buf, sizeof buf);
		r->e[i] = (entry){strdup(buf), i, 0};
		if (!r->e[i].key)
			cli_die("out of memory");
	}
	qsort(r->e, r->ne, sizeof *r->e, cmp_key);
	r->ng = 0;
	for (size_t i = 0; i < r->ne; i++) {
		if (stacks || !i || strcmp(r->e[i].key, r->e[i - 1].key))
			r->g[r->ng++] = (group){i, 0, {0}, 0};
		group *g = &r->g[r->ng - 1];
		g->n++;
		add_cost(&g->cost, &rt_hp_site_at(r->h, r->e[i].site)->cost);
	}
}

/* The callers of a site, frame 1 on. */
static void print_callers(const report *r, uint32_t bt, const char *indent)
{
	char buf[1024];
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(r->t, bt);
	const rt_frame *f = n ? rt_trace_bt_frames(r->t, bt) : NULL;
	for (uint32_t k = 1; k < n; k++) {
		describe_frame(r->t, &f[k], buf, sizeof buf);
		fprintf(r->fp, "%s%s\n", indent, buf);
	}
}

static void print_cost(const report *r, rt_hp_cost_type type, const rt_hp_cost *c, bool sub)
{
	char a[32];
	const char *what = sub ? "" : " to allocation functions";
	switch (type) {
	case RT_HP_PEAK: fprintf(r->fp, "%s peak consumption", fmt_bytes(c->peak, a)); break;
	case RT_HP_ALLOCATIONS:
		fprintf(r->fp, "%" PRIu64 " calls%s with %s peak consumption", c->allocations, what, fmt_bytes(c->peak, a));
		break;
	case RT_HP_TEMPORARY:
		fprintf(r->fp, "%" PRIu64 " temporary allocations of %" PRIu64 " allocations (%.2f%%)", c->temporary,
			c->allocations, c->allocations ? 100.0 * (double)c->temporary / (double)c->allocations : 0.0);
		break;
	case RT_HP_LEAKED:
	case RT_HP_BYTES:
		fprintf(r->fp, "%s %s over %" PRIu64 " calls", fmt_bytes(rt_hp_cost_of(c, type), a),
			type == RT_HP_LEAKED ? "leaked" : "allocated", c->allocations);
		break;
	}
	fputs(sub ? " from:\n" : " from\n", r->fp);
}

/* One merged site: its cost, its frame, its heaviest backtraces. */
static void print_group(report *r, rt_hp_cost_type type, const group *g)
{
	print_cost(r, type, &g->cost, false);
	fprintf(r->fp, "%s\n", r->e[g->first].key);
	entry *e = &r->e[g->first];
	for (size_t i = 0; i < g->n; i++)
		e[i].w = rt_hp_cost_of(&rt_hp_site_at(r->h, e[i].site)->cost, type);
	qsort(e, g->n, sizeof *e, cmp_entry_w);
	for (size_t i = 0; i < g->n && i < r->sub_limit && e[i].w; i++) {
		const rt_hp_site *s = rt_hp_site_at(r->h, e[i].site);
		fputs("  ", r->fp);
		print_cost(r, type, &s->cost, true);
		print_callers(r, s->bt, "    ");
	}
	if (g->n > r->sub_limit)
		fprintf(r->fp, "  and %zu other backtrace(s)\n", g->n - (size_t)r->sub_limit);
	fputc('\n', r->fp);
}

static void print_list(report *r, rt_hp_cost_type type, const char *title)
{
	fprintf(r->fp, "%s\n", title);
	for (size_t i = 0; i < r->ng; i++)
		r->g[i].w = rt_hp_cost_of(&r->g[i].cost, type);
	qsort(r->g, r->ng, sizeof *r->g, cmp_group_w);
	for (size_t i = 0; i < r->ng && i < r->limit && r->g[i].w; i++)
		print_group(r, type, &r->g[i]);
	fputc('\n', r->fp);
}

/* The leak check's verdicts, when the trace carries them (rtrace run
 * --leak-check): what of the leaked bytes is lost, in memcheck's kinds. */
static void print_verdicts(FILE *fp, const rt_trace *t)
{
	const rt_leak_summary *ls = rt_trace_leak_summary(t);
	if (!ls)
		return;
	fprintf(fp, "leak check:");
	for (unsigned k = RT_LEAK_DEFINITE; k <= RT_LEAK_KINDS; k++)
		fprintf(fp, "%s %s %" PRIu64 " bytes in %" PRIu64 " blocks", k > RT_LEAK_DEFINITE ? "," : "",
			rt_leak_kind_name(k), ls->bytes[k], ls->blocks[k]);
	fputc('\n', fp);
}

static void print_summary(FILE *fp, const rt_trace *t, const rt_hp *h)
{
	const rt_hp_summary *s = rt_hp_get_summary(h);
	char a[32], b[32];
	double secs = s->timed ? (double)(s->last_us - s->first_us) / 1e6 : 0;
	if (s->timed)
		fprintf(fp, "total runtime: %.2fs.\n", secs);
	else
		fprintf(fp, "total runtime: unknown (no call times).\n");
	fprintf(fp, "calls to allocation functions: %" PRIu64 "\n", s->total.allocations);
	fprintf(fp, "temporary memory allocations: %" PRIu64 "\n", s->total.temporary);
	fprintf(fp, "peak heap memory consumption: %s (%" PRIu64 " bytes, at call %" PRIu64, fmt_bytes(s->total.peak, a),
		s->total.peak, s->peak_index);
	if (s->timed)
		fprintf(fp, ", after %.3fs", (double)(s->peak_us - s->first_us) / 1e6);
	fprintf(fp, ")\npeak RSS: not recorded\n");
	fprintf(fp, "total memory leaked: %s (%" PRIu64 " bytes in %" PRIu64 " blocks)\n", fmt_bytes(s->total.leaked, b),
		s->total.leaked, s->leaked_blocks);
	fprintf(fp, "bytes allocated in total: %s (%" PRIu64 " bytes), %" PRIu64 " frees\n",
		fmt_bytes(s->total.bytes, a), s->total.bytes, s->frees);
	print_verdicts(fp, t);
}

static int heap_report(FILE *fp, const rt_trace *t, const rt_hp *h, uint64_t limit, uint64_t sub_limit,
		       bool stacks)
{
	report r = {fp, t, h, NULL, NULL, 0, 0, limit, sub_limit};
	build_groups(&r, stacks);
	print_list(&r, RT_HP_PEAK, "PEAK MEMORY CONSUMERS");
	print_list(&r, RT_HP_ALLOCATIONS, "MOST CALLS TO ALLOCATION FUNCTIONS");
	print_list(&r, RT_HP_TEMPORARY, "MOST TEMPORARY ALLOCATIONS");
	print_list(&r, RT_HP_LEAKED, "MEMORY LEAKS");
	print_summary(fp, t, h);
	for (size_t i = 0; i < r.ne; i++)
		free(r.e[i].key);
	free(r.e);
	free(r.g);
	if (fflush(fp) || ferror(fp))
		return errno ? -errno : -EIO;
	return 0;
}

/* The heaptrack export's second half, once the sites are resolved. */
static int write_heaptrack(rt_hp_heaptrack *x, const rt_hp *h, const rt_trace *t, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		cli_error("cannot create '%s': %s", path, strerror(errno));
		return -1;
	}
	size_t n = strlen(path);
	bool gz = n > 3 && !strcmp(path + n - 3, ".gz");
	int rc = rt_hp_heaptrack_write(x, h, t, rt_trace_header(t, "process"), fd, gz);
	if (rc)
		cli_error("cannot write %s: %s", path, strerror(-rc));
	return rc ? -1 : 0;
}

/* The heaptrack export's first half: the profile's events streamed to a
 * temporary file during the pass. */
static rt_hp_heaptrack *start_heaptrack(rt_hp *h, FILE **body)
{
	if (!(*body = tmpfile()))
		cli_die("cannot create a temporary file: %s", strerror(errno));
	rt_hp_heaptrack *x = rt_hp_heaptrack_new(*body);
	rt_hp_set_listener(h, rt_hp_heaptrack_event, x);
	return x;
}

/* massif's header: the traced process as its command, the input as how. */
static int write_massif(const rt_hp_massif *m, const rt_hp *h, const rt_trace *t, const heap_opts *o, FILE *fp)
{
	char desc[1024];
	snprintf(desc, sizeof desc, "rtrace heap --massif %s", o->input);
	return rt_hp_write_massif(m, h, t, o->time_unit, rt_trace_header(t, "process"), desc, fp);
}

int cmd_heap(int argc, char **argv)
{
	heap_opts o = {0};
	parse_options(argc, argv, &o);
	rt_trace *t = rt_trace_new();
	rt_hp *h = rt_hp_new();
	FILE *body = NULL;
	rt_hp_heaptrack *x = o.heaptrack ? start_heaptrack(h, &body) : NULL;
	rt_hp_massif *m = o.massif ? rt_hp_massif_new() : NULL;
	int status = RT_EXIT_DATA;
	int rc = read_profile(t, h, m, &o);
	FILE *fp = stdout;
	if (rc < 0)
		goto out;
	resolve_sites(t, h, &o);
	if (x) {
		status = write_heaptrack(x, h, t, o.heaptrack) || rc ? RT_EXIT_DATA : RT_EXIT_OK;
		goto out;
	}
	if (o.output && !(fp = fopen(o.output, "w"))) {
		cli_error("cannot create '%s': %s", o.output, strerror(errno));
		fp = stdout;
		goto out;
	}
	int wrc = o.collapsed ? rt_hp_write_collapsed(h, t, o.cost, fp)
		  : m	      ? write_massif(m, h, t, &o, fp)
			      : heap_report(fp, t, h, o.limit, o.sub_limit, o.stacks);
	if (fp != stdout && fclose(fp) && !wrc)
		wrc = -errno;
	fp = stdout;
	if (wrc)
		cli_error("cannot write %s: %s", o.output ? o.output : "standard output", strerror(-wrc));
	status = rc || wrc ? RT_EXIT_DATA : RT_EXIT_OK;
out:
	if (fp != stdout)
		fclose(fp);
	if (body)
		fclose(body);
	rt_hp_heaptrack_free(x);
	rt_hp_massif_free(m);
	rt_hp_free(h);
	rt_trace_free(t);
	cli_resolve_opts_free(&o.res);
	return status;
}
