/* callgrind_annotate's view of a profile, shared by the report's parts
 * (cg_annotate.c: header, totals, functions and trees; cg_annotate_src.c:
 * annotated source files; cg_ann.c: what both of them use).
 *
 * callgrind_annotate keys everything by "file:function" strings, where the
 * file is the one the code comes from (fi=/fe= included) with the current
 * directory stripped; costs are arrays whose trailing entries may be
 * undefined (printed "."), which is what `given` counts. */
#ifndef RT_CG_ANN_H
#define RT_CG_ANN_H

#include "callgrind/cg_int.h"
#include "util/out.h"

typedef struct cg_ann_cc {
	uint64_t *v; /* W values */
	uint32_t given;
} cg_ann_cc;

/* A "file:function" row; the string is not stored: cg_ann_name_cmp()
 * compares and cg_ann_name_print() prints the two parts joined. */
typedef struct cg_ann_name {
	uint32_t file;     /* display file id */
	uint32_t fn;       /* function name id */
	cg_ann_cc tot;        /* the function table's entry */
	cg_ann_cc cfn;        /* cost of the calls to it */
	bool has_tot, has_cfn, has_obj;
	uint32_t obj; /* object name id of the last fn= naming it */
	uint64_t obj_stamp;
	uint32_t callers, callees; /* first pair in the lists */
} cg_ann_name;

typedef struct cg_ann_pair {
	uint32_t caller, callee;
	uint32_t next_caller, next_callee; /* lists by callee / by caller */
	cg_ann_cc cc;
	uint64_t count;
} cg_ann_pair;

/* Calls from a caller to a callee at one line; chained per (caller, line). */
typedef struct cg_ann_pline {
	uint32_t caller, callee, pair, next;
	uint64_t line;
	cg_ann_cc cc;
	uint64_t count;
} cg_ann_pline;

typedef struct cg_ann_line {
	uint32_t file;
	uint64_t line;
	cg_ann_cc cc;
	uint32_t func; /* first caller with a call on this line, or CG_NONE */
	uint32_t plines; /* that caller's calls on this line (first cg_ann_pline) */
	bool listed; /* a cost line was here (not only calls) */
} cg_ann_line;

typedef struct cg_ann {
	const cg_profile *p;
	const cg_annotate_opts *o;
	rt_arena arena;
	cg_pool pool;
	rt_out out;
	uint32_t W; /* cost slots */

	/* columns: the raw events by slot, then derived ones asked for */
	uint32_t ncols;
	uint32_t *col_ev;
	uint32_t *show, nshow;
	uint32_t *sort, nsort;
	double *thr;
	const char **thr_str;
	double single_thr;
	bool percs;

	rt_strtab files;
	uint32_t *fstrip, *fraw; /* model file id -> display file id */

	cg_ann_name *names;
	size_t nnames, cnames;
	cg_index name_ix;
	cg_ann_pair *pairs;
	size_t npairs, cpairs;
	cg_index pair_ix;
	cg_ann_pline *plines;
	size_t nplines, cplines;
	cg_index pline_ix;
	cg_ann_line *lines;
	size_t nlines, clines;
	cg_index line_ix;

	cg_ann_cc summary;
	bool calculated;
} cg_ann;

/* Perl's arithmetic for the percentages and thresholds callgrind_annotate
 * prints (inlined into the printing loops): ($x * 100) / $den (den > 0) is
 * an integer product when it fits 64 bits, a double otherwise; the
 * quotient is exact when it divides. */
static inline double cg_ann_perl_pct(__int128 x, uint64_t den)
{
	__int128 m = x * 100;
	if (m < INT64_MIN || m > (__int128)UINT64_MAX)
		return ((double)x * 100.0) / (double)den;
	if (m % (__int128)den == 0)
		return (double)(m / (__int128)den);
	return (double)m / (double)den;
}

static inline double cg_ann_perl_times100(__int128 x)
{
	__int128 m = x * 100;
	if (m < INT64_MIN || m > (__int128)UINT64_MAX)
		return (double)x * 100.0;
	return (double)m;
}

/* The per-line table's key and match, for its lookup (cg_ann.c) and its
 * find-or-add (cg_annotate.c), both inlined into their loops. */
typedef struct cg_ann_line_key {
	const cg_ann *a;
	uint32_t file;
	uint64_t line;
} cg_ann_line_key;

static inline bool cg_ann_line_eq(const void *ctx, uint32_t i)
{
	const cg_ann_line_key *k = ctx;
	return k->a->lines[i].line == k->line && k->a->lines[i].file == k->file;
}

/* cg_ann.c */
const cg_ann_line *cg_ann_line_find(const cg_ann *a, uint32_t file, uint64_t line);
/* The event name of column c. */
const char *cg_ann_col_name(const cg_ann *a, uint32_t c);
/* Value of column c of cc; *def: whether it is defined. */
uint64_t cg_ann_col(const cg_ann *a, const cg_ann_cc *cc, uint32_t c, bool *def);
/* Column widths (a->ncols values) for the given CCs. */
void cg_ann_widths_init(const cg_ann *a, uint32_t *w);
void cg_ann_widths_add(const cg_ann *a, uint32_t *w, const cg_ann_cc *cc);
void cg_ann_print_cc(cg_ann *a, const cg_ann_cc *cc, const uint32_t *w);
void cg_ann_print_events(cg_ann *a, const uint32_t *w);
/* callgrind_annotate's mycmp: by the sort events, biggest first. */
int cg_ann_cmp_cc(const cg_ann *a, const cg_ann_cc *x, const cg_ann_cc *y);
void cg_ann_cc_add(cg_ann *a, cg_ann_cc *dst, const uint64_t *v, uint32_t given);
/* Names ordered as Perl's cmp orders the joined strings. */
int cg_ann_name_cmp(const cg_ann *a, uint32_t x, uint32_t y);
void cg_ann_name_print(cg_ann *a, uint32_t name);
/* Digits grouped by three ("1,234,567"). */
void cg_ann_commify(rt_out *o, uint64_t v);

#define CG_ANN_FANCY "--------------------------------------------------------------------------------\n"

/* cg_annotate_src.c: the --auto=yes and user-named source files, with their costs per line.
 * tfiles: display file ids of the functions printed (repeats allowed). */
void cg_ann_sources(cg_ann *a, const uint32_t *tfiles, size_t ntfiles);

#endif
