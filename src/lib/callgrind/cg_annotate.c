/* callgrind_annotate's report (Valgrind 3.19), byte for byte: the
 * header, the program totals, the function table with its caller and
 * callee trees; cg_annotate_src.c adds the annotated sources.
 *
 * The model keeps costs per position; this builds what callgrind_annotate
 * keeps while it reads (totals per "file:function", per source line, per
 * caller/callee pair) and prints it with the same arithmetic: Perl's
 * integers and doubles for percentages and thresholds. Where
 * callgrind_annotate's order comes from Perl's hash order (random from one
 * run to the next), ties go by name. */
#define _GNU_SOURCE /* qsort_r */
#include "callgrind/cg_ann.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- columns and options --- */

static uint32_t col_of(cg_ann *a, const char *name)
{
	uint32_t ev = cg_profile_find_event(a->p, name);
	if (ev == CG_NONE)
		return CG_NONE;
	for (uint32_t c = 0; c < a->ncols; c++)
		if (a->col_ev[c] == ev)
			return c;
	const cg_event *e = &a->p->events[ev];
	if (e->slot == CG_NONE && !e->nterms)
		return CG_NONE;
	a->col_ev[a->ncols] = ev;
	return a->ncols++;
}

/* Columns for --show/--sort names; the raw events when there are none. */
static int pick_cols(cg_ann *a, const char **names, uint32_t n, uint32_t **out, uint32_t *nout,
		     const char *opt, char *msg, size_t msglen)
{
	*out = rt_arena_alloc(&a->arena, (n ? n : a->W ? a->W : 1) * sizeof **out);
	if (!names) {
		for (uint32_t c = 0; c < a->W; c++)
			(*out)[c] = c;
		*nout = a->W;
		return 0;
	}
	for (uint32_t i = 0; i < n; i++)
		if (((*out)[i] = col_of(a, names[i])) == CG_NONE) {
			snprintf(msg, msglen, "--%s event '%s' is not in the profile", opt, names[i]);
			return -EINVAL;
		}
	*nout = n;
	return 0;
}

static int setup_columns(cg_ann *a, char *msg, size_t msglen)
{
	const cg_annotate_opts *o = a->o;
	size_t nev;
	cg_profile_events(a->p, &nev);
	a->col_ev = rt_arena_alloc(&a->arena, (nev + 1) * sizeof *a->col_ev);
	for (size_t ev = 0; ev < nev; ev++)
		if (a->p->events[ev].slot != CG_NONE)
			a->col_ev[a->p->events[ev].slot] = (uint32_t)ev;
	a->ncols = a->W;
	int rc = pick_cols(a, o->show, o->nshow, &a->show, &a->nshow, "show", msg, msglen);
	if (!rc)
		rc = pick_cols(a, o->sort, o->nsort, &a->sort, &a->nsort, "sort", msg, msglen);
	if (rc)
		return rc;
	a->thr = rt_arena_alloc(&a->arena, (a->nsort ? a->nsort : 1) * sizeof *a->thr);
	a->thr_str = rt_arena_alloc(&a->arena, (a->nsort ? a->nsort : 1) * sizeof *a->thr_str);
	bool per_event = false;
	for (uint32_t i = 0; o->sort_thresholds && i < a->nsort; i++)
		per_event |= o->sort_thresholds[i] != NULL;
	const char *single = o->threshold ? o->threshold : "99";
	for (uint32_t i = 0; i < a->nsort; i++) {
		const char *t = per_event ? o->sort_thresholds[i] : i == 0 ? single : NULL;
		a->thr_str[i] = t ? t : "0";
		a->thr[i] = strtod(a->thr_str[i], NULL);
	}
	a->single_thr = per_event ? 0 : strtod(single, NULL);
	return 0;
}

/* --- the view --- */

typedef struct name_key {
	const cg_ann *a;
	uint32_t file, fn;
} name_key;

static bool name_eq(const void *ctx, uint32_t i)
{
	const name_key *k = ctx;
	return k->a->names[i].fn == k->fn && k->a->names[i].file == k->file;
}

/* The "file:function" row of a display file and a function name id
 * (callgrind_annotate keys by the joined string: pairs that join to the
 * same string, with ':' in the file name, stay apart here). */
static uint32_t name_get(cg_ann *a, uint32_t file, uint32_t fn)
{
	name_key k = {a, file, fn};
	bool added;
	uint32_t i = cg_index_intern(&a->name_ix, cg_hash(file, fn, 7), name_eq, &k,
				     (void **)&a->names, &a->nnames, &a->cnames, sizeof *a->names,
				     &added);
	if (added)
		a->names[i] = (cg_ann_name){.file = file, .fn = fn, .callers = CG_NONE,
					    .callees = CG_NONE};
	return i;
}

/* Display names of the model's files: with the current directory
 * stripped, as callgrind_annotate does for fl=/fi=/fe=, and as written,
 * as it keeps cfi=/cfl= ones. */
static void map_files(cg_ann *a)
{
	uint32_t n = cg_profile_name_count(a->p, CG_FILE);
	const char *cwd = a->o->cwd;
	size_t cl = cwd ? strlen(cwd) : 0;
	a->fstrip = rt_arena_alloc(&a->arena, (n + 1) * sizeof *a->fstrip);
	a->fraw = rt_arena_alloc(&a->arena, (n + 1) * sizeof *a->fraw);
	for (uint32_t f = 0; f < n; f++) {
		const char *s = cg_profile_name(a->p, CG_FILE, f);
		size_t len = strlen(s);
		a->fraw[f] = rt_strtab_intern(&a->files, s, len);
		bool strip = cwd && len >= cl + 1 && !memcmp(s, cwd, cl) && s[cl] == '/';
		a->fstrip[f] = strip ? rt_strtab_intern(&a->files, s + cl + 1, len - cl - 1) : a->fraw[f];
	}
}

static cg_ann_line *line_get(cg_ann *a, uint32_t file, uint64_t line)
{
	cg_ann_line_key k = {a, file, line};
	bool added;
	uint32_t i = cg_index_intern(&a->line_ix, cg_hash(file, line, 11), cg_ann_line_eq, &k,
				     (void **)&a->lines, &a->nlines, &a->clines, sizeof *a->lines,
				     &added);
	if (added)
		a->lines[i] = (cg_ann_line){file, line, {NULL, 0}, CG_NONE, CG_NONE, false};
	return &a->lines[i];
}

/* Self costs per function name and per source line; the object of the
 * last fn= line naming each function. */
static uint32_t *add_self_costs(cg_ann *a)
{
	const cg_profile *p = a->p;
	uint32_t *cname = rt_xmalloc((p->ncodes ? p->ncodes : 1) * sizeof *cname);
	for (size_t c = 0; c < p->ncodes; c++) {
		cname[c] = name_get(a, a->fstrip[p->codes[c].file], p->fns[p->codes[c].fn].name);
		a->names[cname[c]].has_tot = true;
	}
	for (size_t i = 0; i < p->nfns; i++) {
		const cg_fn *f = &p->fns[i];
		if (!f->last_named)
			continue;
		cg_ann_name *n = &a->names[name_get(a, a->fstrip[f->file], f->name)];
		if (!n->has_obj || f->last_named > n->obj_stamp) {
			n->has_obj = true;
			n->obj = f->object;
			n->obj_stamp = f->last_named;
		}
	}
	for (size_t i = 0; i < p->ncosts; i++) {
		const cg_cost *c = &p->costs[i];
		cg_ann_cc_add(a, &a->names[cname[c->code]].tot, c->v, c->given);
		cg_ann_line *l = line_get(a, a->fstrip[p->codes[c->code].file], c->line);
		cg_ann_cc_add(a, &l->cc, c->v, c->given);
		l->listed = true;
	}
	/* callgrind_annotate takes a jump's source line for a cost line */
	for (size_t i = 0; i < p->njumps; i++)
		line_get(a, a->fstrip[p->codes[p->jumps[i].code].file], p->jumps[i].line)->listed = true;
	return cname;
}

typedef struct pair_key {
	const cg_ann *a;
	uint32_t caller, callee;
	uint64_t line;
} pair_key;

static bool pair_eq(const void *ctx, uint32_t i)
{
	const pair_key *k = ctx;
	return k->a->pairs[i].caller == k->caller && k->a->pairs[i].callee == k->callee;
}

static bool pline_eq(const void *ctx, uint32_t i)
{
	const pair_key *k = ctx;
	const cg_ann_pline *l = &k->a->plines[i];
	return l->caller == k->caller && l->callee == k->callee && l->line == k->line;
}

static uint32_t pair_get(cg_ann *a, uint32_t caller, uint32_t callee)
{
	pair_key k = {a, caller, callee, 0};
	bool added;
	uint32_t i = cg_index_intern(&a->pair_ix, cg_hash(caller, callee, 13), pair_eq, &k,
				     (void **)&a->pairs, &a->npairs, &a->cpairs, sizeof *a->pairs,
				     &added);
	if (added) {
		a->pairs[i] = (cg_ann_pair){caller, callee, a->names[callee].callers,
					    a->names[caller].callees, {NULL, 0}, 0};
		a->names[callee].callers = a->names[caller].callees = i;
	}
	return i;
}

static cg_ann_pline *pline_get(cg_ann *a, uint32_t pair, uint64_t line, cg_ann_line *at)
{
	const cg_ann_pair *pr = &a->pairs[pair];
	pair_key k = {a, pr->caller, pr->callee, line};
	bool added;
	uint32_t i = cg_index_intern(&a->pline_ix, cg_hash(pr->caller, pr->callee, line), pline_eq,
				     &k, (void **)&a->plines, &a->nplines, &a->cplines,
				     sizeof *a->plines, &added);
	if (!added)
		return &a->plines[i];
	cg_ann_pline *l = &a->plines[i];
	*l = (cg_ann_pline){pr->caller, pr->callee, pair, CG_NONE, line, {NULL, 0}, 0};
	if (at->func == pr->caller) {
		l->next = at->plines;
		at->plines = i;
	}
	return &a->plines[i];
}

/* Calls, in the order they were first read (which caller came first on
 * a line decides whose calls the source annotation shows there). A call
 * counted 0 times (Callgrind's dumps after the first, for calls made
 * before them; pprof always) is a cost line to callgrind_annotate: its
 * cost is the caller's own. */
static void add_calls(cg_ann *a, const uint32_t *cname)
{
	const cg_profile *p = a->p;
	for (size_t i = 0; i < p->ncalls; i++) {
		const cg_call *c = &p->calls[i];
		const cg_fn *f = &p->fns[c->callee];
		uint32_t caller = cname[c->code];
		if (!c->count) {
			cg_ann_cc_add(a, &a->names[caller].tot, c->v, c->given);
			cg_ann_line *l = line_get(a, a->names[caller].file, c->line);
			cg_ann_cc_add(a, &l->cc, c->v, c->given);
			l->listed = true;
			continue;
		}
		uint32_t file = c->flags & CG_CALL_FILE_GIVEN ? a->fraw[f->file] : a->fstrip[f->file];
		uint32_t callee = name_get(a, file, f->name);
		uint32_t pair = pair_get(a, caller, callee);
		cg_ann_cc_add(a, &a->pairs[pair].cc, c->v, c->given);
		a->pairs[pair].count += c->count;
		cg_ann_line *at = line_get(a, a->names[caller].file, c->line);
		if (at->func == CG_NONE)
			at->func = caller;
		cg_ann_pline *l = pline_get(a, pair, c->line, at);
		cg_ann_cc_add(a, &l->cc, c->v, c->given);
		l->count += c->count;
		cg_ann_name *ce = &a->names[callee];
		cg_ann_cc_add(a, &ce->cfn, c->v, c->given);
		ce->has_cfn = true;
		if (a->o->inclusive)
			cg_ann_cc_add(a, &a->names[caller].tot, c->v, c->given);
	}
	if (a->o->inclusive)
		for (size_t i = 0; i < a->nnames; i++)
			if (a->names[i].has_cfn) {
				a->names[i].tot = a->names[i].cfn;
				a->names[i].has_tot = true;
			}
}

static bool is_zero(const cg_ann *a, const cg_ann_cc *cc)
{
	for (uint32_t i = 0; i < cc->given && i < a->W; i++)
		if (cc->v[i])
			return false;
	return true;
}

/* A part's total as callgrind_annotate takes it: summary:, else totals:
 * (either when not all zero), else the sum of its cost lines. */
static bool part_total(cg_ann *a, const cg_part *pt, cg_ann_cc *out)
{
	const uint64_t *src[3] = {pt->summary, pt->totals, pt->sum};
	uint32_t n[3] = {pt->nsummary, pt->ntotals, pt->nevents};
	bool has[3] = {pt->flags & CG_HAS_SUMMARY, pt->flags & CG_HAS_TOTALS, true};
	for (int k = 0; k < 3; k++) {
		if (!has[k])
			continue;
		cg_ann_cc cc = {cg_pool_alloc(&a->pool, a->W), 0};
		for (uint32_t i = 0; i < n[k]; i++) {
			uint32_t slot = a->p->events[pt->events[i]].slot;
			cc.v[slot] = src[k][i];
			if (slot + 1 > cc.given)
				cc.given = slot + 1;
		}
		if (k < 2 && is_zero(a, &cc))
			continue;
		cg_ann_cc_add(a, out, cc.v, cc.given);
		return k < 2;
	}
	return false;
}

static void compute_summary(cg_ann *a)
{
	size_t nparts;
	const cg_part *parts = cg_profile_parts(a->p, &nparts);
	bool given = false;
	cg_ann_cc sum = {NULL, 0};
	for (size_t i = 0; i < nparts; i++)
		given |= part_total(a, &parts[i], &sum);
	if (given) {
		a->summary = sum;
		return;
	}
	a->calculated = true;
	for (size_t i = 0; i < a->nnames; i++)
		if (a->names[i].has_tot)
			cg_ann_cc_add(a, &a->summary, a->names[i].tot.v, a->names[i].tot.given);
}

static void cg_ann_free(cg_ann *a)
{
	free(a->names);
	free(a->pairs);
	free(a->plines);
	free(a->lines);
	cg_index_free(&a->name_ix);
	cg_index_free(&a->pair_ix);
	cg_index_free(&a->pline_ix);
	cg_index_free(&a->line_ix);
	rt_strtab_free(&a->files);
	cg_pool_free(&a->pool);
	rt_arena_free(&a->arena);
}

/* --- the report --- */

/* "Label:   first\n" and the others aligned under it. */
static void print_list(cg_ann *a, const char *label, const char **v, uint32_t n)
{
	rt_out_str(&a->out, label);
	rt_out_str(&a->out, n ? v[0] : "");
	rt_out_ch(&a->out, '\n');
	for (uint32_t i = 1; i < n; i++) {
		rt_out_str(&a->out, "                  ");
		rt_out_str(&a->out, v[i]);
		rt_out_ch(&a->out, '\n');
	}
}

/* "Label: a b c\n", as Perl interpolates an array. */
static void print_joined(cg_ann *a, const char *label, const char **v, uint32_t n)
{
	rt_out_str(&a->out, label);
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			rt_out_ch(&a->out, ' ');
		rt_out_str(&a->out, v[i]);
	}
	rt_out_ch(&a->out, '\n');
}

static void print_cols(cg_ann *a, const char *label, const uint32_t *cols, uint32_t n)
{
	const char **v = rt_arena_alloc(&a->arena, (n + 1) * sizeof *v);
	for (uint32_t i = 0; i < n; i++)
		v[i] = cg_ann_col_name(a, cols ? cols[i] : i);
	print_joined(a, label, v, n);
}

static int strp_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* "Profiled target:  cmd (PID n, part n, thread n)" from the first part. */
static void print_target(cg_ann *a, const cg_part *pt)
{
	rt_out *o = &a->out;
	rt_out_str(o, "Profiled target:  ");
	rt_out_str(o, pt && pt->cmd && *pt->cmd ? pt->cmd : "(unknown)");
	if (pt && (pt->flags & CG_HAS_PID)) {
		rt_out_str(o, " (PID ");
		rt_out_u64(o, pt->pid);
		if (pt->flags & CG_HAS_PART) {
			rt_out_str(o, ", part ");
			rt_out_u64(o, pt->number);
		}
		if (pt->flags & CG_HAS_THREAD) {
			rt_out_str(o, ", thread ");
			rt_out_u64(o, pt->thread);
		}
		rt_out_ch(o, ')');
	}
	rt_out_ch(o, '\n');
}

/* Include dirs as callgrind_annotate lists them: trailing '/' trimmed,
 * then one added. */
static const char **include_dirs(cg_ann *a)
{
	const cg_annotate_opts *o = a->o;
	const char **inc = rt_arena_alloc(&a->arena, (o->ninclude + 1) * sizeof *inc);
	for (uint32_t i = 0; i < o->ninclude; i++) {
		size_t l = strlen(o->include_dirs[i]);
		if (l && o->include_dirs[i][l - 1] == '/')
			l--;
		char *d = rt_arena_alloc(&a->arena, l + 2);
		memcpy(d, o->include_dirs[i], l);
		memcpy(d + l, "/", 2);
		inc[i] = d;
	}
	return inc;
}

static void print_options(cg_ann *a)
{
	const cg_annotate_opts *o = a->o;
	size_t nparts;
	const cg_part *parts = cg_profile_parts(a->p, &nparts);
	const cg_part *pt = nparts ? &parts[0] : NULL;
	rt_out *out = &a->out;
	rt_out_str(out, CG_ANN_FANCY "Profile data file '");
	rt_out_str(out, o->input ? o->input : "");
	rt_out_ch(out, '\'');
	if (pt && pt->creator && *pt->creator) {
		rt_out_str(out, " (creator: ");
		rt_out_str(out, pt->creator);
		rt_out_ch(out, ')');
	}
	rt_out_str(out, "\n" CG_ANN_FANCY);
	for (uint32_t i = 0; pt && i < pt->ndesc; i++)
		if (strncmp(pt->desc[i].text, "Option:", 7)) {
			rt_out_str(out, pt->desc[i].text);
			rt_out_ch(out, '\n');
		}
	print_target(a, pt);
	print_cols(a, "Events recorded:  ", NULL, a->W);
	print_cols(a, "Events shown:     ", a->show, a->nshow);
	print_cols(a, "Event sort order: ", a->sort, a->nsort);
	print_joined(a, "Thresholds:       ", a->thr_str, a->nsort);
	print_list(a, "Include dirs:     ", include_dirs(a), o->ninclude);
	const char **user = rt_arena_alloc(&a->arena, (o->nuser + 1) * sizeof *user);
	if (o->nuser)
		memcpy(user, o->user_files, o->nuser * sizeof *user);
	qsort(user, o->nuser, sizeof *user, strp_cmp);
	print_list(a, "User annotated:   ", user, o->nuser);
	rt_out_str(out, o->no_auto ? "Auto-annotation:  off\n\n" : "Auto-annotation:  on\n\n");
}

static void print_summary(cg_ann *a)
{
	uint32_t *w = rt_arena_alloc(&a->arena, a->ncols * sizeof *w);
	cg_ann_widths_init(a, w);
	cg_ann_widths_add(a, w, &a->summary);
	rt_out_str(&a->out, CG_ANN_FANCY);
	cg_ann_print_events(a, w);
	rt_out_str(&a->out, "\n" CG_ANN_FANCY);
	cg_ann_print_cc(a, &a->summary, w);
	rt_out_str(&a->out, a->calculated ? " PROGRAM TOTALS (calculated)\n\n" : " PROGRAM TOTALS\n\n");
}

static int name_qcmp(const void *x, const void *y, void *ctx)
{
	const cg_ann *a = ctx;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	int c = cg_ann_cmp_cc(a, &a->names[i].tot, &a->names[j].tot);
	return c ? c : cg_ann_name_cmp(a, i, j);
}

typedef struct tree_ctx {
	const cg_ann *a;
	bool by_caller;
} tree_ctx;

static int pair_qcmp(const void *x, const void *y, void *ctx)
{
	const tree_ctx *t = ctx;
	const cg_ann *a = t->a;
	const cg_ann_pair *p = &a->pairs[*(const uint32_t *)x], *q = &a->pairs[*(const uint32_t *)y];
	int c = cg_ann_cmp_cc(a, &p->cc, &q->cc);
	if (c)
		return c;
	return t->by_caller ? cg_ann_name_cmp(a, p->caller, q->caller)
			    : cg_ann_name_cmp(a, p->callee, q->callee);
}

/* The callers (< ...) or callees (> ...) of one function. */
static void print_tree(cg_ann *a, uint32_t name, bool callers, const uint32_t *w)
{
	uint32_t *v = NULL;
	size_t n = 0, cap = 0;
	for (uint32_t i = callers ? a->names[name].callers : a->names[name].callees; i != CG_NONE;
	     i = callers ? a->pairs[i].next_caller : a->pairs[i].next_callee)
		RT_PUSH(v, n, cap, i);
	tree_ctx t = {a, callers};
	if (n > 1)
		qsort_r(v, n, sizeof *v, pair_qcmp, &t);
	for (size_t i = 0; i < n; i++) {
		const cg_ann_pair *pr = &a->pairs[v[i]];
		const cg_ann_name *other = &a->names[callers ? pr->caller : pr->callee];
		cg_ann_print_cc(a, &pr->cc, w);
		rt_out_str(&a->out, callers ? " < " : " >   ");
		cg_ann_name_print(a, callers ? pr->caller : pr->callee);
		rt_out_str(&a->out, " (");
		cg_ann_commify(&a->out, pr->count);
		rt_out_str(&a->out, "x)");
		if (other->has_obj) {
			rt_out_str(&a->out, " [");
			rt_out_str(&a->out, cg_profile_name(a->p, CG_OBJECT, other->obj));
			rt_out_ch(&a->out, ']');
		}
		rt_out_ch(&a->out, '\n');
	}
	free(v);
}

/* Stop when every sort event's running total reached its threshold. */
static bool thresholds_reached(const cg_ann *a, const __int128 *cur)
{
	for (uint32_t i = 0; i < a->nsort; i++) {
		bool def;
		uint64_t s = cg_ann_col(a, &a->summary, a->sort[i], &def);
		double prop = def && s > 0 ? cg_ann_perl_pct(cur[i], s) : cg_ann_perl_times100(cur[i]);
		if (!(prop >= a->thr[i]))
			return false;
	}
	return true;
}

static void update_totals(const cg_ann *a, __int128 *cur, const cg_ann_cc *fn)
{
	for (uint32_t i = 0; i < a->nsort; i++) {
		bool def, sdef;
		uint64_t v = cg_ann_col(a, fn, a->sort[i], &def);
		if (!def)
			continue;
		if (a->o->inclusive)
			cur[i] = (__int128)cg_ann_col(a, &a->summary, a->sort[i], &sdef) - v;
		else
			cur[i] += v;
	}
}

/* The file part of "file:function" as callgrind_annotate's s/:.+$//
 * leaves it: up to the first ':' that has something after it (the file's
 * own, or the joining one); the display file id of that string. */
static uint32_t name_file(cg_ann *a, const cg_ann_name *n)
{
	const char *f = a->files.strs[n->file];
	const char *colon = strchr(f, ':');
	size_t fl = a->files.lens[n->file];
	if (colon) /* followed by its next byte or the joining ':' */
		return rt_strtab_intern(&a->files, f, (size_t)(colon - f));
	if (!a->p->names[CG_FUNCTION].lens[n->fn]) {
		char *s = rt_arena_alloc(&a->arena, fl + 2);
		memcpy(s, f, fl);
		memcpy(s + fl, ":", 2);
		return rt_strtab_intern(&a->files, s, fl + 1); /* "file:" has no ':' with text after it */
	}
	return n->file;
}

static void print_function(cg_ann *a, uint32_t name, const uint32_t *w, bool tree)
{
	const cg_ann_name *n = &a->names[name];
	cg_ann_print_cc(a, &n->tot, w);
	if (tree)
		rt_out_str(&a->out, " * ");
	rt_out_ch(&a->out, ' ');
	cg_ann_name_print(a, name);
	const char *obj = n->has_obj ? cg_profile_name(a->p, CG_OBJECT, n->obj) : "";
	if (*obj) {
		rt_out_str(&a->out, " [");
		rt_out_str(&a->out, obj);
		rt_out_ch(&a->out, ']');
	}
	rt_out_ch(&a->out, '\n');
}

/* The function table. Returns the display file ids of the printed
 * functions (callgrind_annotate's threshold files), *nfiles of them. */
static uint32_t *print_functions(cg_ann *a, size_t *nfiles)
{
	uint32_t *w = rt_arena_alloc(&a->arena, a->ncols * sizeof *w), *order = NULL, *files = NULL;
	size_t n = 0, cap = 0, fcap = 0;
	cg_ann_widths_init(a, w);
	for (uint32_t i = 0; i < a->nnames; i++)
		if (a->names[i].has_tot) {
			cg_ann_widths_add(a, w, &a->names[i].tot);
			RT_PUSH(order, n, cap, i);
		}
	rt_out_str(&a->out, CG_ANN_FANCY);
	cg_ann_print_events(a, w);
	rt_out_str(&a->out, " file:function\n" CG_ANN_FANCY);
	if (n > 1)
		qsort_r(order, n, sizeof *order, name_qcmp, a);
	bool tree = a->o->tree_caller || a->o->tree_calling;
	__int128 *cur = rt_xcalloc(a->nsort + 1, sizeof *cur);
	*nfiles = 0;
	for (size_t k = 0; k < n; k++) {
		const cg_ann_name *nm = &a->names[order[k]];
		if (a->single_thr < 100 && thresholds_reached(a, cur))
			break;
		bool unknown = !strcmp(a->files.strs[nm->file], "???") &&
			       !strcmp(a->p->names[CG_FUNCTION].strs[nm->fn], "???");
		if (tree)
			rt_out_ch(&a->out, '\n');
		if (a->o->tree_caller && !unknown)
			print_tree(a, order[k], true, w);
		print_function(a, order[k], w, tree);
		if (a->o->tree_calling && !unknown)
			print_tree(a, order[k], false, w);
		uint32_t f = name_file(a, nm);
		RT_PUSH(files, *nfiles, fcap, f);
		update_totals(a, cur, &nm->tot);
	}
	rt_out_ch(&a->out, '\n');
	free(cur);
	free(order);
	return files;
}

int cg_annotate_write(const cg_profile *p, int fd, const cg_annotate_opts *o, char *msg,
		      size_t msglen)
{
	cg_ann a;
	memset(&a, 0, sizeof a);
	a.p = p;
	a.o = o;
	a.W = p->nslots;
	a.percs = !o->no_percs;
	rt_arena_init(&a.arena);
	rt_strtab_init(&a.files, &a.arena);
	int rc = setup_columns(&a, msg, msglen);
	if (rc) {
		cg_ann_free(&a);
		return rc;
	}
	rt_out_init_fd(&a.out, fd);
	map_files(&a);
	uint32_t *cname = add_self_costs(&a);
	add_calls(&a, cname);
	free(cname);
	compute_summary(&a);
	if (o->searched) {
		rt_out_str(&a.out, "Reading data from '");
		rt_out_str(&a.out, o->input);
		rt_out_str(&a.out, "'...\n");
	}
	print_options(&a);
	print_summary(&a);
	size_t nfiles;
	uint32_t *files = print_functions(&a, &nfiles);
	cg_ann_sources(&a, files, nfiles);
	free(files);
	rc = rt_out_finish(&a.out);
	cg_ann_free(&a);
	return rc;
}
