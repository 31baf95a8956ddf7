/* rtrace heap: heaptrack_print's questions on an rtrace trace. The trace
 * is read with a call callback that feeds the heap profile (rt_hp) and
 * keeps no call, so memory follows the live blocks and the distinct
 * backtraces, not the trace's length. After the pass, one call per
 * allocation site is given to the resolver, and the sites are reported
 * (merged by allocating function, as heaptrack_print does, or per
 * backtrace) or written as collapsed stacks for flame graphs, or as
 * valgrind massif's output, whose snapshots are taken during the pass,
 * or as the series over time and the size histogram (heap_series.c).
 * Filters (rt_hp_filter) select the allocations fed, for every output;
 * --diff profiles two traces the same way and hands both to heap_diff.c.
 * The report groups the sites by their allocating frame's description:
 * each distinct frame is described once and the descriptions sorted
 * alone, the sites then counted into place by rank (python3: 87,902
 * sites, 345 frames; the report took 0.18-0.34 s after the pass with a
 * description, a strdup and strcmp's sort per site, 0.07 s with the
 * sites sorted by frame and by rank, ~0.05 s now). */
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

enum { OPT_NO_RESOLVE = 256, OPT_COLLAPSED, OPT_STACKS, OPT_HEAPTRACK, OPT_MASSIF, OPT_TIME_UNIT,
       OPT_SERIES, OPT_BUCKETS, OPT_HISTOGRAM };
enum { OPT_DIFF = 0x2000, OPT_GROWN, OPT_CALLS, OPT_TIME, OPT_CONTEXT, OPT_RESOURCE, OPT_BT_FUNCTION };
/* --fail-if-grown's exit status: the comparison was made, something grew */
enum { HEAP_EXIT_GROWN = 3 };

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
	{0, "series", NULL, OPT_SERIES, "print consumption over time instead: per bucket\n"
					"of time, allocations, frees, live bytes and blocks"},
	{0, "buckets", "=N", OPT_BUCKETS, "at most N buckets in --series (default 32)"},
	{0, "histogram", "=HOW", OPT_HISTOGRAM, "print the allocation sizes instead: pow2 (ranges)\n"
						"or exact (heaptrack_print -H's lines)"},
	{'o', "output", " FILE", 'o', "write FILE (default: standard output)"},
	{0, "calls", "=FROM-TO", OPT_CALLS, "only allocations of calls FROM to TO (call\n"
					     "indices; either may be left out)"},
	{0, "time", "=FROM-TO", OPT_TIME, "only allocations made FROM to TO seconds after\n"
					  "the first call (either may be left out)"},
	{0, "context", "=MASK", OPT_CONTEXT, "only allocations made in a context of MASK\n"
					     "(0: in none), or in the context so named"},
	{0, "resource", "=TYPE", OPT_RESOURCE, "profile resource TYPE (default memory): mmap,\n"
					       "fd, ... as the trace names them"},
	{0, "filter-bt-function", "=NAME", OPT_BT_FUNCTION, "\nonly allocations with a function whose name\n"
							    "holds NAME on their stack"},
	{0, "diff", NULL, OPT_DIFF, "compare two traces, OLD and NEW: the change of\n"
				    "each call site and of the summary"},
	{0, "fail-if-grown", "=COST:AMOUNT", OPT_GROWN, "\nwith --diff, exit 3 when COST's total grew by\n"
							"more than AMOUNT (a number, K, M, G, or N%)"},
	{0, "no-resolve", NULL, OPT_NO_RESOLVE, "keep addresses unresolved"},
	CLI_THREADS_OPTION,
	CLI_RESOLVE_DEFAULT_OPTIONS,
	CLI_QUIET_HELP_OPTIONS("no warnings"),
};

static const cli_command command = {
	"heap",
	"usage: rtrace heap [options] TRACE\n"
	"       rtrace heap --diff [options] OLD NEW\n"
	"\n"
	"Heap profile of a trace, in heaptrack_print's terms: allocation calls,\n"
	"temporary allocations (freed with no allocation in between), the peak\n"
	"heap consumption and who held it, leaked bytes; then the top call\n"
	"sites by peak, allocations, temporary allocations and leaks. TRACE\n"
	"('-': standard input) is a binary or text trace of memory.\n"
	"\n",
	options, sizeof options / sizeof *options, 28,
	"\n"
	"Exit status: 0 ok, 1 bad input or I/O error, 2 bad command line,\n"
	"3 a total grew past --fail-if-grown.\n",
	false,
};

typedef struct heap_opts {
	const char *input, *output, *heaptrack;
	uint64_t limit, sub_limit;
	bool stacks, no_resolve, collapsed, massif;
	bool series;
	int histogram; /* 0 none, 1 power-of-two ranges, 2 exact sizes */
	uint64_t buckets;
	rt_hp_cost_type cost;
	rt_hp_time_unit time_unit;
	cli_resolve_opts res;
	rt_hp_filter_opts filter;
	bool filtered, diff;
	const char *old_input; /* --diff: the first trace */
	cli_heap_growth grown[8];
	size_t ngrown;
	rt_resolve_opts ropts; /* the filter's resolver, once made */
	char *rcache;
	bool has_ropts;
	unsigned threads; /* -j: the reader's threads (0: automatic) */
} heap_opts;

static uint64_t parse_count(const char *arg, const char *opt)
{
	uint64_t v;
	if (!cli_parse_u64(arg, 10, &v))
		cli_die_usage("heap", "invalid %s '%s': expected a number", opt, arg);
	return v;
}

/* One bound of a range: a call index, or seconds as microseconds. */
static bool parse_bound(const char *s, size_t n, bool secs, uint64_t *v)
{
	char buf[64];
	if (!n || n >= sizeof buf)
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (!secs)
		return cli_parse_u64(buf, 10, v);
	char *end;
	double d = strtod(buf, &end);
	if (*end || !(d >= 0) || d > 1.8e13 || buf[0] == '-' || buf[0] == '+')
		return false;
	*v = (uint64_t)(d * 1e6 + 0.5);
	return true;
}

/* FROM-TO, either left out: [*from, *to] (open ends 0 and UINT64_MAX). */
static void parse_range(const char *arg, const char *opt, bool secs, uint64_t *from, uint64_t *to)
{
	const char *dash = strchr(arg, '-');
	*from = 0;
	*to = UINT64_MAX;
	bool ok = dash && (dash > arg || dash[1]);
	if (ok && dash > arg)
		ok = parse_bound(arg, (size_t)(dash - arg), secs, from);
	if (ok && dash[1])
		ok = parse_bound(dash + 1, strlen(dash + 1), secs, to);
	if (!ok || *from > *to)
		cli_die_usage("heap", "invalid %s '%s': expected FROM-TO (%s; either may be left out)", opt, arg,
			      secs ? "seconds" : "call indices");
}

/* The filter options; false when c is none of them. */
static bool filter_option(heap_opts *o, int c, const char *arg)
{
	rt_hp_filter_opts *f = &o->filter;
	uint64_t v;
	switch (c) {
	case OPT_CALLS: parse_range(arg, "--calls", false, &f->from_index, &f->to_index); f->by_index = true; break;
	case OPT_TIME: parse_range(arg, "--time", true, &f->from_us, &f->to_us); f->by_time = true; break;
	case OPT_CONTEXT:
		if (!*arg || (cli_parse_u64(arg, 0, &v) && v > UINT32_MAX))
			cli_die_usage("heap", "invalid --context '%s': expected a context mask or name", arg);
		f->by_context = true;
		if (cli_parse_u64(arg, 0, &v))
			f->context_mask = (uint32_t)v;
		else
			f->context_name = arg;
		break;
	case OPT_RESOURCE:
		if (!*arg)
			cli_die_usage("heap", "invalid --resource '': expected a resource type");
		f->resource = arg;
		break;
	case OPT_BT_FUNCTION: f->bt_function = arg; break;
	default: return false;
	}
	o->filtered = true;
	return true;
}

static void parse_growth(heap_opts *o, const char *arg)
{
	if (o->ngrown == sizeof o->grown / sizeof *o->grown)
		cli_die_usage("heap", "too many --fail-if-grown (at most %zu)", o->ngrown);
	if (!cli_heap_parse_growth(arg, &o->grown[o->ngrown++]))
		cli_die_usage("heap", "invalid --fail-if-grown '%s': expected COST:AMOUNT, COST one of allocations, "
			  "temporary, bytes, peak, leaked, AMOUNT a number (K, M, G) or N%%", arg);
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
		case 'j': o->threads = cli_parse_threads("heap", optarg); break;
		case OPT_COLLAPSED:
			if (!rt_hp_parse_cost(optarg, &o->cost))
				cli_die_usage("heap", "invalid cost '%s': expected allocations, temporary, "
					  "bytes, peak or leaked", optarg);
			o->collapsed = true;
			break;
		case OPT_MASSIF: o->massif = true; break;
		case OPT_SERIES: o->series = true; break;
		case OPT_BUCKETS:
			o->buckets = parse_count(optarg, "--buckets");
			if (o->buckets < 2 || o->buckets > 100000)
				cli_die_usage("heap", "invalid --buckets '%s': expected 2 to 100000", optarg);
			break;
		case OPT_HISTOGRAM:
			if (strcmp(optarg, "pow2") && strcmp(optarg, "exact"))
				cli_die_usage("heap", "invalid --histogram '%s': expected pow2 or exact", optarg);
			o->histogram = strcmp(optarg, "pow2") ? 2 : 1;
			break;
		case OPT_TIME_UNIT:
			if (!rt_hp_parse_time_unit(optarg, &o->time_unit))
				cli_die_usage("heap", "invalid time unit '%s': expected i, ms or B", optarg);
			break;
		case OPT_DIFF: o->diff = true; break;
		case OPT_GROWN: parse_growth(o, optarg); break;
		default:
			if (!filter_option(o, c, optarg))
				cli_resolve_option(&o->res, "heap", c, optarg);
			break;
		}
	}
	if (o->ngrown && !o->diff)
		cli_die_usage("heap", "--fail-if-grown compares two traces: give --diff OLD NEW");
	if (o->diff && (o->heaptrack || o->massif))
		cli_die_usage("heap", "--diff writes a report or collapsed stacks, not --heaptrack or --massif");
	if (o->diff && optind + 2 != argc)
		cli_die_usage("heap", "--diff takes two traces: OLD NEW");
	if (o->diff)
		o->old_input = argv[optind++];
	if (o->heaptrack && o->collapsed)
		cli_die_usage("heap", "--heaptrack and --collapsed are two outputs: give one");
	if (o->massif && o->collapsed)
		cli_die_usage("heap", "--massif and --collapsed are two outputs: one at a time");
	if (o->time_unit && !o->massif)
		cli_die_usage("heap", "--time-unit is massif's: give --massif too");
	if (o->heaptrack && o->massif)
		cli_die_usage("heap", "--heaptrack and --massif are two outputs: give one");
	if ((o->series || o->histogram) && (o->heaptrack || o->massif || o->collapsed || (o->series && o->histogram)))
		cli_die_usage("heap", "--series and --histogram are outputs of their own: one at a time");
	if (o->buckets && !o->series)
		cli_die_usage("heap", "--buckets is --series': give --series too");
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

/* A binary trace's calls by batches: the profile's own loop over them,
 * or, for massif's snapshots after every call, on_call each. */
static void on_calls(void *ctx, rt_trace *t, const rt_call *c, size_t n)
{
	sink *s = ctx;
	if (!s->massif)
		rt_hp_feed_calls(s->hp, t, c, n);
	else
		for (size_t i = 0; i < n; i++)
			on_call(ctx, t, &c[i]);
}

static void on_warning(void *ctx, const rt_diag *d)
{
	cli_count_warning(&((sink *)ctx)->warnings, d);
}

/* One pass over the trace into h; -1 when nothing usable was read. */
static int read_profile(rt_trace *t, rt_hp *h, rt_hp_massif *m, const char *input, unsigned threads)
{
	bool is_stdin = !strcmp(input, "-");
	int fd = is_stdin ? STDIN_FILENO : open(input, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		cli_die("cannot open '%s': %s", input, strerror(errno));
	sink s = {h, m, 0};
	if (!m) /* massif samples the profile after every call */
		rt_hp_set_lookahead(h, true);
	rt_read_opts ro = {0, on_call, on_warning, &s, cli_threads(threads), on_calls};
	rt_read_stats st;
	rt_diag err;
	enum cli_format format;
	int rc = cli_read_input(t, fd, is_stdin ? "<stdin>" : input, &ro, &st, &err, &format);
	if (!is_stdin)
		close(fd);
	cli_warnings_end(s.warnings);
	rt_hp_add_dropped(h, t);
	rt_hp_finish(h);
	if (rc)
		cli_diag_error(&err);
	if (format == CLI_VGXML) {
		cli_error("%s is Valgrind XML: it has no allocation calls to profile", input);
		return -1;
	}
	if (rc && rt_trace_header_count(t) == 0)
		return -1;
	if (rc)
		cli_info("note: the profile is partial: it covers what was read before the error");
	return rc ? 1 : 0;
}

/* The resolver walks the sites' backtraces, each with the index of its
 * first call, and each site takes the backtrace it was rewritten to. In
 * place: the stacks are resolved where they are, without a second copy;
 * 12 bytes a site, where a call appended per site to walk was 56 (python3:
 * 4.9 MB at the peak of RSS). */
static void resolve_sites(rt_trace *t, rt_hp *h, const heap_opts *o)
{
	if (o->no_resolve || (rt_trace_filter_bits(t) & RT_FILTER_RESOLVE))
		return;
	size_t n = rt_hp_site_count(h);
	uint32_t *bts = cli_xrealloc(NULL, n ? n : 1, sizeof *bts);
	uint64_t *index = cli_xrealloc(NULL, n ? n : 1, sizeof *index);
	for (size_t i = 0; i < n; i++) {
		bts[i] = rt_hp_site_at(h, i)->bt;
		index[i] = rt_hp_site_at(h, i)->first_index;
	}
	cli_resolve_opts res = o->res;
	res.in_place = true;
	cli_resolve_bts(t, &res, bts, index, n);
	for (size_t i = 0; i < n; i++)
		rt_hp_set_site_bt(h, i, bts[i]);
	free(bts);
	free(index);
}


/* Bytes as heaptrack_print prints them: 1000B, 2.00K, 158.12K. */
static const char *fmt_bytes(uint64_t v, char buf[40])
{
	return cli_heap_fmt((int64_t)v, true, buf);
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
	const char *key; /* the allocating frame described (report.keys) */
	size_t site;     /* rt_hp site index */
	uint64_t w;      /* the cost being ranked */
	size_t rank;     /* of key among the keys, in strcmp's order */
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
	char **keys; /* one per distinct allocating frame */
	size_t nkeys;
} report;

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

/* A distinct allocating frame (none: the site has no frame) and the key
 * it was given, in a table of the frames met (open addressing). */
typedef struct frame_key {
	uint64_t addr;
	uint32_t text, k1; /* k1: key + 1, 0 for a free slot */
	bool none;
} frame_key;

/* The key of site i's allocating frame, made at its first site. */
static size_t site_key(report *r, frame_key *tab, size_t mask, size_t i)
{
	const rt_hp_site *s = rt_hp_site_at(r->h, i);
	bool none = s->bt == RT_NONE || !rt_trace_bt_len(r->t, s->bt);
	rt_frame first = {0, 0}, *f = none ? NULL : &first;
	rt_bt_iter it;
	rt_trace_bt_iter(r->t, none ? RT_NONE : s->bt, &it);
	rt_trace_bt_next(&it, &first); /* where the trace keeps it: no array of every stack */
	uint64_t addr = first.addr;
	uint32_t text = first.text;
	size_t j = (size_t)(((addr ^ (uint64_t)text << 40) * 0x9e3779b97f4a7c15ull) >> 20) & mask;
	for (; tab[j].k1; j = (j + 1) & mask)
		if (tab[j].addr == addr && tab[j].text == text && tab[j].none == none)
			return tab[j].k1 - 1;
	char buf[1024];
	if (none)
		snprintf(buf, sizeof buf, "[no backtrace]");
	else
		describe_frame(r->t, f, buf, sizeof buf);
	if (!(r->keys[r->nkeys] = strdup(buf)))
		cli_die("out of memory");
	tab[j] = (frame_key){addr, text, (uint32_t)++r->nkeys, none};
	return r->nkeys - 1;
}

/* Each site's key, described once per distinct allocating frame (sites
 * share them: python3's 87,902 sites have 345), found through a table
 * of the frames: sorting the sites by frame and then by key's rank was
 * a quarter of the time after the pass. e[i].rank: the key's index. */
static void describe_sites(report *r)
{
	size_t n = 64;
	while (n < 2 * r->ne)
		n *= 2;
	frame_key *tab = cli_xrealloc(NULL, n, sizeof *tab);
	memset(tab, 0, n * sizeof *tab);
	r->keys = cli_xrealloc(NULL, r->ne ? r->ne : 1, sizeof *r->keys);
	r->nkeys = 0;
	for (size_t i = 0; i < r->ne; i++) {
		size_t k = site_key(r, tab, n - 1, i);
		r->e[i] = (entry){r->keys[k], i, 0, k};
	}
	free(tab);
}

/* A key and where it is in report.keys. */
typedef struct key_at {
	const char *s;
	size_t k;
} key_at;

static int cmp_key_at(const void *a, const void *b)
{
	return strcmp(((const key_at *)a)->s, ((const key_at *)b)->s);
}

/* Entries in order of key (strcmp on the distinct keys alone), then of
 * site (counted into place by rank), grouped (one group per entry with
 * --stacks). */
static void build_groups(report *r, bool stacks)
{
	r->ne = rt_hp_site_count(r->h);
	entry *by_site = cli_xrealloc(NULL, r->ne ? r->ne : 1, sizeof *by_site);
	r->e = by_site;
	r->g = cli_xrealloc(NULL, r->ne ? r->ne : 1, sizeof *r->g);
	describe_sites(r);
	key_at *v = cli_xrealloc(NULL, r->nkeys ? r->nkeys : 1, sizeof *v);
	for (size_t k = 0; k < r->nkeys; k++)
		v[k] = (key_at){r->keys[k], k};
	qsort(v, r->nkeys, sizeof *v, cmp_key_at);
	size_t *rank = cli_xrealloc(NULL, r->nkeys ? r->nkeys : 1, sizeof *rank);
	size_t *at = cli_xrealloc(NULL, r->nkeys + 1, sizeof *at);
	memset(at, 0, (r->nkeys + 1) * sizeof *at);
	for (size_t i = 0, n = 0; i < r->nkeys; i++) /* equal keys, one rank */
		rank[v[i].k] = n += i && strcmp(v[i].s, v[i - 1].s);
	for (size_t i = 0; i < r->ne; i++)
		at[(by_site[i].rank = rank[by_site[i].rank]) + 1]++;
	for (size_t k = 0; k < r->nkeys; k++) /* where each rank's entries start */
		at[k + 1] += at[k];
	r->e = cli_xrealloc(NULL, r->ne ? r->ne : 1, sizeof *r->e);
	for (size_t i = 0; i < r->ne; i++) /* by rank, then site */
		r->e[at[by_site[i].rank]++] = by_site[i];
	free(by_site);
	free(v);
	free(rank);
	free(at);
	r->ng = 0;
	for (size_t i = 0; i < r->ne; i++) {
		if (stacks || !i || r->e[i].rank != r->e[i - 1].rank)
			r->g[r->ng++] = (group){i, 0, {0}, 0};
		group *g = &r->g[r->ng - 1];
		g->n++;
		rt_hp_cost_add(&g->cost, &rt_hp_site_at(r->h, r->e[i].site)->cost);
	}
}

/* The callers of a site, frame 1 on. */
static void print_callers(const report *r, uint32_t bt, const char *indent)
{
	char buf[1024];
	rt_bt_iter it;
	rt_frame f;
	rt_trace_bt_iter(r->t, bt, &it);
	for (uint32_t k = 0; rt_trace_bt_next(&it, &f); k++) {
		if (!k)
			continue;
		describe_frame(r->t, &f, buf, sizeof buf);
		fprintf(r->fp, "%s%s\n", indent, buf);
	}
}

static void print_cost(const report *r, rt_hp_cost_type type, const rt_hp_cost *c, bool sub)
{
	char a[40];
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
	char a[40], b[40];
	double secs = s->timed ? (double)(s->last_us - s->first_us) / 1e6 : 0;
	if (s->timed)
		fprintf(fp, "total runtime: %.2fs.\n", secs);
	else
		fprintf(fp, "total runtime: unknown (no call times).\n");
	fprintf(fp, "calls to allocation functions: %" PRIu64 "\n", s->total.allocations);
	fprintf(fp, "temporary memory allocations: %" PRIu64 "\n", s->total.temporary);
	fprintf(fp, "peak heap memory consumption: %s (%" PRIu64 " bytes, at call %" PRIu64, fmt_bytes(s->total.peak, a),
		s->total.peak, s->peak_index);
	if (s->timed && s->total.peak) /* no peak (nothing selected): no time */
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
	report r = {fp, t, h, NULL, NULL, 0, 0, limit, sub_limit, NULL, 0};
	build_groups(&r, stacks);
	print_list(&r, RT_HP_PEAK, "PEAK MEMORY CONSUMERS");
	print_list(&r, RT_HP_ALLOCATIONS, "MOST CALLS TO ALLOCATION FUNCTIONS");
	print_list(&r, RT_HP_TEMPORARY, "MOST TEMPORARY ALLOCATIONS");
	print_list(&r, RT_HP_LEAKED, "MEMORY LEAKS");
	print_summary(fp, t, h);
	for (size_t i = 0; i < r.nkeys; i++)
		free(r.keys[i]);
	free(r.keys);
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

/* The filter of the options, NULL without one. Names for
 * --filter-bt-function come from the resolver, as the report's do. */
static rt_hp_filter *make_filter(heap_opts *o)
{
	if (!o->filtered)
		return NULL;
	if (!o->no_resolve && !o->has_ropts)
		o->filter.resolve = cli_resolve_opts_for(&o->res, &o->ropts, &o->rcache);
	o->has_ropts = true;
	return rt_hp_filter_new(&o->filter);
}

/* --fail-if-grown: each threshold passed is told; true if any was. */
static bool grown(const heap_opts *o, const rt_hp *before, const rt_hp *after)
{
	bool any = false;
	char why[256];
	for (size_t i = 0; i < o->ngrown; i++)
		if (cli_heap_grown(&o->grown[i], rt_hp_get_summary(before), rt_hp_get_summary(after), why,
				   sizeof why)) {
			cli_error("%s", why);
			any = true;
		}
	return any;
}

/* Both traces profiled with the same filters and resolved, their sites
 * matched: the diff's report or its folded stacks, then the thresholds. */
static int heap_diff(heap_opts *o, FILE *fp)
{
	const char *in[2] = {o->old_input, o->input};
	rt_trace *t[2];
	rt_hp *h[2];
	rt_hp_filter *f[2];
	int rc = 0;
	for (int i = 0; i < 2; i++) {
		t[i] = rt_trace_new();
		h[i] = rt_hp_new();
		f[i] = make_filter(o);
		rt_hp_set_filter(h[i], f[i]);
		int r = read_profile(t[i], h[i], NULL, in[i], o->threads);
		rc = r < 0 || rc < 0 ? -1 : r || rc;
		if (r >= 0)
			resolve_sites(t[i], h[i], o);
	}
	int status = RT_EXIT_DATA;
	if (rc >= 0) {
		rt_hp_diff *d = rt_hp_diff_new(h[0], t[0], h[1], t[1]);
		cli_heap_diff_opts dop = {o->limit, o->sub_limit, o->stacks};
		int wrc = o->collapsed ? rt_hp_diff_write_folded(d, o->cost, fp) : cli_heap_diff_report(fp, d, h[0], h[1], &dop);
		rt_hp_diff_free(d);
		if (wrc)
			cli_error("cannot write %s", o->output ? o->output : "standard output");
		status = rc || wrc ? RT_EXIT_DATA : grown(o, h[0], h[1]) ? HEAP_EXIT_GROWN : RT_EXIT_OK;
	}
	for (int i = 0; i < 2; i++) {
		rt_hp_free(h[i]);
		rt_hp_filter_free(f[i]);
		rt_trace_free(t[i]);
	}
	return status;
}

static int diff_main(heap_opts *o)
{
	FILE *fp = o->output ? fopen(o->output, "w") : stdout;
	int status = RT_EXIT_DATA;
	if (!fp)
		cli_error("cannot create '%s': %s", o->output, strerror(errno));
	else
		status = heap_diff(o, fp);
	if (fp && fp != stdout && fclose(fp) && status != RT_EXIT_DATA) {
		cli_error("cannot write %s: %s", o->output, strerror(errno));
		status = RT_EXIT_DATA;
	}
	free(o->rcache);
	cli_resolve_opts_free(&o->res);
	return status;
}

int cmd_heap(int argc, char **argv)
{
	heap_opts o = {0};
	parse_options(argc, argv, &o);
	if (o.diff)
		return diff_main(&o);
	rt_trace *t = rt_trace_new();
	rt_hp *h = rt_hp_new();
	FILE *body = NULL;
	rt_hp_heaptrack *x = o.heaptrack ? start_heaptrack(h, &body) : NULL;
	rt_hp_massif *m = o.massif ? rt_hp_massif_new() : NULL;
	rt_hp_series *ser = o.series || o.histogram ? rt_hp_series_new(o.buckets ? o.buckets : 32, false) : NULL;
	if (ser)
		rt_hp_set_listener(h, rt_hp_series_event, ser);
	int status = RT_EXIT_DATA;
	rt_hp_filter *f = make_filter(&o);
	rt_hp_set_filter(h, f);
	int rc = read_profile(t, h, m, o.input, o.threads);
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
	if (ser)
		rt_hp_series_finish(ser);
	if (o.series)
		cli_print_series(fp, ser);
	else if (o.histogram)
		cli_print_sizes(fp, ser, o.histogram == 2);
	int wrc = ser ? (fflush(fp) || ferror(fp) ? -EIO : 0)
		  : o.collapsed ? rt_hp_write_collapsed(h, t, o.cost, fp)
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
	rt_hp_series_free(ser);
	rt_hp_free(h);
	rt_hp_filter_free(f);
	free(o.rcache);
	rt_trace_free(t);
	cli_resolve_opts_free(&o.res);
	return status;
}
