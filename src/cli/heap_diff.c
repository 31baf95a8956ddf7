/* rtrace heap --diff: two heap profiles compared call site by call site
 * (the library's rt_hp_diff matches the sites by resolved stack), printed
 * as heaptrack_print -d prints its diff: signed changes, the lists sorted
 * by the size of the change, the summary's deltas worded as its summary
 * (so that one script reads both); and the thresholds of
 * --fail-if-grown, checked on the summary's totals. A site of the merged
 * view is the innermost frame of its stacks, read back from the key
 * (frames separated by ';'), so this file needs nothing of heap.c. */
#include "cli.h"
#include "rtrace/rtrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* heaptrack_print's figures with a sign: 2.00K, -67.54K, -3, 0B. */
const char *cli_heap_fmt(int64_t v, bool bytes, char buf[40])
{
	static const char units[] = "BKMGTPE";
	uint64_t m = v < 0 ? -(uint64_t)v : (uint64_t)v;
	const char *sign = v < 0 ? "-" : "";
	if (!bytes) {
		snprintf(buf, 40, "%s%" PRIu64, sign, m);
		return buf;
	}
	double d = (double)m;
	size_t u = 0;
	while (d > 1000 && u + 1 < sizeof units - 1) {
		d /= 1000;
		u++;
	}
	if (u)
		snprintf(buf, 40, "%s%.2f%c", sign, d, units[u]);
	else
		snprintf(buf, 40, "%s%" PRIu64 "B", sign, m);
	return buf;
}

static bool is_bytes(rt_hp_cost_type type)
{
	return type == RT_HP_BYTES || type == RT_HP_PEAK || type == RT_HP_LEAKED;
}

/* "DELTA (BEFORE -> AFTER)" of one cost. */
static void put_change(FILE *fp, rt_hp_cost_type type, const rt_hp_cost *b, const rt_hp_cost *a)
{
	char d[40], x[40], y[40];
	bool by = is_bytes(type);
	fprintf(fp, "%s (%s -> %s)", cli_heap_fmt(rt_hp_cost_delta(b, a, type), by, d),
		cli_heap_fmt((int64_t)rt_hp_cost_of(b, type), by, x), cli_heap_fmt((int64_t)rt_hp_cost_of(a, type), by, y));
}

/* The innermost frame of a key: its text after the last ';'. */
static const char *innermost(const char *key)
{
	const char *s = strrchr(key, ';');
	return s ? s + 1 : key;
}

typedef struct dentry {
	const rt_hp_diff_entry *e;
	const char *label;
	uint64_t w; /* |change| of the cost ranked */
} dentry;

typedef struct dgroup {
	size_t first, n;
	rt_hp_cost before, after;
	uint64_t w;
} dgroup;

typedef struct dreport {
	FILE *fp;
	dentry *e;
	dgroup *g;
	size_t ne, ng;
	const cli_heap_diff_opts *o;
} dreport;

static int cmp_label(const void *a, const void *b)
{
	const dentry *x = a, *y = b;
	int c = strcmp(x->label, y->label);
	return c ? c : strcmp(x->e->key, y->e->key);
}

static int cmp_dentry_w(const void *a, const void *b)
{
	const dentry *x = a, *y = b;
	if (x->w != y->w)
		return (x->w < y->w) - (x->w > y->w);
	return strcmp(x->e->key, y->e->key);
}

static int cmp_dgroup_w(const void *a, const void *b)
{
	const dgroup *x = a, *y = b;
	if (x->w != y->w)
		return (x->w < y->w) - (x->w > y->w);
	return (x->first > y->first) - (x->first < y->first);
}

/* Entries grouped by innermost frame (one group per stack with --stacks). */
static void build(dreport *r, const rt_hp_diff *d)
{
	r->ne = rt_hp_diff_count(d);
	r->e = cli_xrealloc(NULL, r->ne ? r->ne : 1, sizeof *r->e);
	r->g = cli_xrealloc(NULL, r->ne ? r->ne : 1, sizeof *r->g);
	for (size_t i = 0; i < r->ne; i++) {
		const rt_hp_diff_entry *e = rt_hp_diff_at(d, i);
		r->e[i] = (dentry){e, innermost(e->key), 0};
	}
	qsort(r->e, r->ne, sizeof *r->e, cmp_label);
	for (size_t i = 0; i < r->ne; i++) {
		if (r->o->stacks || !i || strcmp(r->e[i].label, r->e[i - 1].label))
			r->g[r->ng++] = (dgroup){i, 0, {0}, {0}, 0};
		dgroup *g = &r->g[r->ng - 1];
		g->n++;
		rt_hp_cost_add(&g->before, &r->e[i].e->before);
		rt_hp_cost_add(&g->after, &r->e[i].e->after);
	}
}

static uint64_t abs_delta(const rt_hp_cost *b, const rt_hp_cost *a, rt_hp_cost_type type)
{
	int64_t v = rt_hp_cost_delta(b, a, type);
	return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

/* The frames of a key but its innermost, innermost first. */
static void print_callers(FILE *fp, const char *key, const char *indent)
{
	const char *end = innermost(key);
	while (end > key) {
		const char *stop = end - 1, *start = stop;
		while (start > key && start[-1] != ';')
			start--;
		fprintf(fp, "%s%.*s\n", indent, (int)(stop - start), start);
		end = start;
	}
}

static const char *const what[] = {
	[RT_HP_ALLOCATIONS] = "calls to allocation functions",
	[RT_HP_TEMPORARY] = "temporary allocations",
	[RT_HP_BYTES] = "bytes allocated",
	[RT_HP_PEAK] = "peak consumption",
	[RT_HP_LEAKED] = "leaked",
};

static void print_group(dreport *r, rt_hp_cost_type type, const dgroup *g)
{
	FILE *fp = r->fp;
	put_change(fp, type, &g->before, &g->after);
	fprintf(fp, " %s from\n%s\n", what[type], r->e[g->first].label);
	dentry *e = &r->e[g->first];
	for (size_t i = 0; i < g->n; i++)
		e[i].w = abs_delta(&e[i].e->before, &e[i].e->after, type);
	qsort(e, g->n, sizeof *e, cmp_dentry_w);
	size_t shown = 0;
	for (size_t i = 0; i < g->n && i < r->o->sub_limit && e[i].w; i++, shown++) {
		if (!r->o->stacks) {
			fputs("  ", fp);
			put_change(fp, type, &e[i].e->before, &e[i].e->after);
			fputs(" from:\n", fp);
		}
		print_callers(fp, e[i].e->key, r->o->stacks ? "  " : "    ");
	}
	if (g->n > shown && !r->o->stacks)
		fprintf(fp, "  and %zu other backtrace(s)\n", g->n - shown);
	fputc('\n', fp);
}

static void print_list(dreport *r, rt_hp_cost_type type, const char *title)
{
	fprintf(r->fp, "%s\n", title);
	for (size_t i = 0; i < r->ng; i++)
		r->g[i].w = abs_delta(&r->g[i].before, &r->g[i].after, type);
	qsort(r->g, r->ng, sizeof *r->g, cmp_dgroup_w);
	for (size_t i = 0; i < r->ng && i < r->o->limit && r->g[i].w; i++)
		print_group(r, type, &r->g[i]);
	fputc('\n', r->fp);
}

static void print_summary(FILE *fp, const rt_hp_summary *b, const rt_hp_summary *a)
{
	static const struct {
		const char *label;
		rt_hp_cost_type type;
	} lines[] = {
		{"calls to allocation functions", RT_HP_ALLOCATIONS},
		{"temporary memory allocations", RT_HP_TEMPORARY},
		{"peak heap memory consumption", RT_HP_PEAK},
		{"total memory leaked", RT_HP_LEAKED},
		{"bytes allocated in total", RT_HP_BYTES},
	};
	for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
		fprintf(fp, "%s: ", lines[i].label);
		put_change(fp, lines[i].type, &b->total, &a->total);
		fputc('\n', fp);
	}
	char x[40];
	fprintf(fp, "leaked blocks: %s (%" PRIu64 " -> %" PRIu64 ")\n",
		cli_heap_fmt((int64_t)(a->leaked_blocks - b->leaked_blocks), false, x), b->leaked_blocks,
		a->leaked_blocks);
}

int cli_heap_diff_report(FILE *fp, const rt_hp_diff *d, const rt_hp *before, const rt_hp *after,
			 const cli_heap_diff_opts *o)
{
	dreport r = {fp, NULL, NULL, 0, 0, o};
	build(&r, d);
	print_list(&r, RT_HP_PEAK, "PEAK MEMORY CONSUMERS (change)");
	print_list(&r, RT_HP_ALLOCATIONS, "MOST CALLS TO ALLOCATION FUNCTIONS (change)");
	print_list(&r, RT_HP_TEMPORARY, "MOST TEMPORARY ALLOCATIONS (change)");
	print_list(&r, RT_HP_LEAKED, "MEMORY LEAKS (change)");
	print_summary(fp, rt_hp_get_summary(before), rt_hp_get_summary(after));
	free(r.e);
	free(r.g);
	return fflush(fp) || ferror(fp) ? -1 : 0;
}

/* COST:AMOUNT, AMOUNT a count (K, M, G: thousands, millions, billions,
 * as the figures print) or a percentage of the first trace's total. */
bool cli_heap_parse_growth(const char *arg, cli_heap_growth *g)
{
	const char *colon = strchr(arg, ':');
	if (!colon || colon - arg >= 16)
		return false;
	char name[16];
	memcpy(name, arg, (size_t)(colon - arg));
	name[colon - arg] = 0;
	if (!rt_hp_parse_cost(name, &g->type))
		return false;
	char *end;
	const char *num = colon + 1;
	if (*num < '0' || *num > '9')
		return false;
	double v = strtod(num, &end);
	static const char suffixes[] = "KMG";
	const char *u = *end ? strchr(suffixes, *end) : NULL;
	g->percent = *end == '%';
	if (u)
		for (const char *k = suffixes; k <= u; k++)
			v *= 1000;
	if ((u || g->percent) && *end)
		end++;
	if (*end || v < 0 || v > 1.8e19)
		return false;
	g->amount = v;
	return true;
}

/* Whether the summary's total of g's cost grew by more than g allows;
 * why: what grew, for the message. */
bool cli_heap_grown(const cli_heap_growth *g, const rt_hp_summary *b, const rt_hp_summary *a, char *why,
		    size_t n)
{
	uint64_t x = rt_hp_cost_of(&b->total, g->type), y = rt_hp_cost_of(&a->total, g->type);
	if (y <= x)
		return false;
	double grew = (double)(y - x), limit = g->percent ? g->amount * (double)x / 100 : g->amount;
	if (grew <= limit)
		return false;
	char d[40];
	snprintf(why, n, "%s grew by %s (%" PRIu64 " -> %" PRIu64 "), more than %g%s", what[g->type],
		 cli_heap_fmt((int64_t)(y - x), is_bytes(g->type), d), x, y, g->amount, g->percent ? "%" : "");
	return true;
}
