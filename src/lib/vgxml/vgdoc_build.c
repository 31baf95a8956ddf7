/* A memcheck protocol 4 document built from rtrace's own findings: the
 * heap errors and leak verdicts of the tracer (or, in a trace without
 * verdicts, the blocks still allocated at its end), in the words,
 * grouping and order memcheck 3.19 uses for the same bugs, so that tools
 * reading memcheck's XML read rtrace's. Stacks follow memcheck's
 * conventions: a first frame for the allocator function, frame addresses
 * inside the call instruction (return address - 1), nothing below main.
 * The document is built in a trace of its own, from the findings of a
 * trace left unchanged: the XML writer builds it for one write and frees
 * it, so that the findings are only ever held as heap checking results. */
#define _GNU_SOURCE /* qsort_r */
#include "rtrace/filter.h"
#include "rtrace/heapcheck.h"
#include "rtrace/rtrace.h"
#include "rtrace/vgxml.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The document being built: read from src, built in t, a trace of its
 * own that holds the document and what it refers to (strings, stacks and
 * their frames' details, copied from src). */
typedef struct bld {
	const rt_trace *src;
	rt_trace *t;
	const rt_vgxml_write_opts *o;
	uint32_t root;
	uint64_t unique;  /* next error's <unique> */
	bool verdicts;    /* the trace has the leak check's per-block verdicts */
} bld;

static uint32_t add(bld *b, uint32_t parent, const char *name, const char *text)
{
	return text ? rt_vgxml_add_text(b->t, parent, name, text, strlen(text)) : rt_vgxml_add(b->t, parent, name);
}

static uint32_t add_u64(bld *b, uint32_t parent, const char *name, uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "%" PRIu64, v);
	return add(b, parent, name, buf);
}

/* --- stacks --- */

/* The allocator functions rtrace interposes: as memcheck shows them in a
 * stack, and their symbols for a suppression (LP64). */
static const struct alloc_fn {
	const char *rt, *shown, *symbol;
} alloc_fns[] = {
	{"operator new", "operator new(unsigned long)", "_Znwm"},
	{"operator new[]", "operator new[](unsigned long)", "_Znam"},
	{"operator delete", "operator delete(void*)", "_ZdlPv"},
	{"operator delete[]", "operator delete[](void*)", "_ZdaPv"},
	{"operator new(nothrow)", "operator new(unsigned long, std::nothrow_t const&)", "_ZnwmRKSt9nothrow_t"},
	{"operator new[](nothrow)", "operator new[](unsigned long, std::nothrow_t const&)", "_ZnamRKSt9nothrow_t"},
	{"operator delete(sized)", "operator delete(void*, unsigned long)", "_ZdlPvm"},
	{"operator delete[](sized)", "operator delete[](void*, unsigned long)", "_ZdaPvm"},
	{"operator new(align)", "operator new(unsigned long, std::align_val_t)", "_ZnwmSt11align_val_t"},
	{"operator new[](align)", "operator new[](unsigned long, std::align_val_t)", "_ZnamSt11align_val_t"},
	{"operator delete(align)", "operator delete(void*, std::align_val_t)", "_ZdlPvSt11align_val_t"},
	{"operator delete[](align)", "operator delete[](void*, std::align_val_t)", "_ZdaPvSt11align_val_t"},
};

static const struct alloc_fn *alloc_fn_of(const char *name, bool shown)
{
	for (size_t i = 0; i < sizeof alloc_fns / sizeof *alloc_fns; i++)
		if (!strcmp(name, shown ? alloc_fns[i].shown : alloc_fns[i].rt))
			return &alloc_fns[i];
	return NULL;
}

static uint32_t intern(rt_trace *t, const char *s, size_t n) { return rt_trace_intern(t, s, n); }

/* String id of src as a string id of the document's trace. */
static uint32_t xstr(bld *b, uint32_t id)
{
	if (id == RT_NONE)
		return RT_NONE;
	const char *s = rt_trace_str(b->src, id);
	return intern(b->t, s, strlen(s));
}

/* The tracer's module, where the interposed functions are, when the
 * trace's memory map has it. */
static uint32_t tracer_module(bld *b)
{
	static const char name[] = "/librtrace-preload.so";
	for (size_t i = 0; i < rt_trace_mmap_count(b->src); i++) {
		const char *m = rt_trace_mmap_at(b->src, i)->module;
		size_t n = strlen(m);
		if (n >= sizeof name - 1 && !strcmp(m + n - (sizeof name - 1), name))
			return intern(b->t, m, n);
	}
	return RT_NONE;
}

/* The first frame, for the interposed function itself: its address in
 * the tracer is not in the trace, so <ip> is 0x0 ("unknown"). */
static rt_frame allocator_frame(bld *b, uint32_t fn)
{
	const char *name = rt_trace_str(b->src, fn);
	const struct alloc_fn *a = alloc_fn_of(name, false);
	const char *shown = a ? a->shown : name;
	rt_frame f = {0, intern(b->t, shown, strlen(shown))};
	rt_frame_info fi;
	if (!rt_trace_frame_info(b->t, &f, &fi)) {
		rt_srcloc l = {f.text, RT_NONE, 0, a ? RT_SRCLOC_DEMANGLED : 0,
			       a ? intern(b->t, a->symbol, strlen(a->symbol)) + 1 : 0};
		rt_trace_set_frame_info(b->t, &f, tracer_module(b), &l, 1);
	}
	return f;
}

/* The module mapped at addr, as a string id. */
static uint32_t module_at(bld *b, uint64_t addr)
{
	const char *m = rt_trace_module_at(b->src, addr);
	return m ? intern(b->t, m, strlen(m)) : RT_NONE;
}

/* Frame f of a trace backtrace as memcheck would show it: its address
 * inside the call (return address - 1), with f's details; when they name
 * no module (a text trace's frame names it only when no source line is
 * known), the module the memory map places f in. */
static rt_frame doc_frame(bld *b, const rt_frame *f)
{
	rt_frame nf = {f->addr ? f->addr - 1 : 0, xstr(b, f->text)};
	rt_frame_info fi = {RT_NONE, 0, NULL};
	if (rt_trace_frame_info(b->t, &nf, &fi))
		return nf;
	rt_trace_frame_info(b->src, f, &fi);
	uint32_t module = fi.module != RT_NONE ? xstr(b, fi.module) : module_at(b, f->addr);
	if (!fi.n && module == RT_NONE)
		return nf;
	rt_srcloc *locs = rt_xmalloc((fi.n ? fi.n : 1) * sizeof *locs);
	for (uint32_t k = 0; k < fi.n; k++)
		locs[k] = (rt_srcloc){xstr(b, fi.locs[k].fn), xstr(b, fi.locs[k].file), fi.locs[k].line,
				      fi.locs[k].flags, fi.locs[k].linkage ? xstr(b, fi.locs[k].linkage - 1) + 1 : 0};
	rt_trace_set_frame_info(b->t, &nf, module, locs, fi.n);
	free(locs);
	return nf;
}

static bool is_main(const rt_trace *t, const rt_frame *f)
{
	rt_frame_info fi;
	return rt_trace_frame_info(t, f, &fi) && fi.n && fi.locs[fi.n - 1].fn != RT_NONE &&
	       !strcmp(rt_trace_str(t, fi.locs[fi.n - 1].fn), "main");
}

/* The stack of a call to fn from backtrace bt (of src), ending at main as
 * memcheck's do unless o says --show-below-main=yes, at most o's
 * --num-callers frames (the allocator's counts, as in memcheck). RT_NONE
 * when nothing is known. */
static uint32_t stack_with(bld *b, uint32_t fn, uint32_t bt, const rt_vgxml_stack_opts *o)
{
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(b->src, bt), k = 0;
	uint32_t max = o && o->num_callers ? o->num_callers : UINT32_MAX;
	rt_frame *v = rt_xmalloc((n + 1) * sizeof *v);
	if (fn != RT_NONE && *rt_trace_str(b->src, fn))
		v[k++] = allocator_frame(b, fn);
	for (uint32_t i = 0; i < n && k < max; i++) {
		v[k] = doc_frame(b, &rt_trace_bt_frames(b->src, bt)[i]);
		if (is_main(b->t, &v[k++]) && !(o && o->below_main))
			break;
	}
	uint32_t id = k ? rt_trace_intern_bt(b->t, v, k) : RT_NONE;
	free(v);
	return id;
}

static uint32_t doc_stack(bld *b, uint32_t fn, uint32_t bt)
{
	return stack_with(b, fn, bt, b->o ? b->o->stack : NULL);
}

uint32_t rt_vgxml_stack(rt_trace *dst, const rt_trace *src, uint32_t fn, uint32_t bt,
			const rt_vgxml_stack_opts *o)
{
	bld b = {src, dst, NULL, RT_NONE, 0, false};
	return stack_with(&b, fn, bt, o);
}

/* A <stack>: at least one frame, as the protocol wants; an unknown place
 * is one frame at address 0x0. */
static void add_stack(bld *b, uint32_t parent, uint32_t bt)
{
	if (bt == RT_NONE) {
		rt_frame f = {0, RT_NONE};
		bt = rt_trace_intern_bt(b->t, &f, 1);
	}
	rt_vgxml_add_stack(b->t, parent, bt);
}

/* --- suppressions --- */

/* "fun:NAME" with the linkage name, which memcheck writes and matches,
 * "obj:MODULE" for a function known only by a demangled name (a Valgrind
 * XML input's) or not at all. */
static char *sframe_text(const rt_trace *t, const rt_frame_info *fi, uint32_t k)
{
	const rt_srcloc *l = k < fi->n ? &fi->locs[k] : NULL;
	const char *fn = l && l->fn != RT_NONE ? rt_trace_str(t, l->fn) : NULL;
	const struct alloc_fn *a = fn ? alloc_fn_of(fn, true) : NULL;
	if (l && l->linkage)
		return rt_xasprintf("fun:%s", rt_trace_str(t, l->linkage - 1));
	bool demangled = fn && !a && ((l->flags & RT_SRCLOC_DEMANGLED) || strpbrk(fn, "(: <"));
	const char *obj = fi->module == RT_NONE ? "*" : rt_trace_str(t, fi->module);
	return fn && !demangled ? rt_xasprintf("fun:%s", a ? a->symbol : fn) : rt_xasprintf("obj:%s", obj);
}

/* The frame lines of a suppression for stack bt of t, "fun:"/"obj:" each
 * (an inlined call a line of its own, as valgrind writes them); a
 * malloc'ed array of *n malloc'ed strings. */
static char **sframe_lines(const rt_trace *t, uint32_t bt, size_t *n)
{
	uint32_t nf = bt == RT_NONE ? 0 : rt_trace_bt_len(t, bt);
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	for (uint32_t i = 0; i < nf; i++) {
		rt_frame_info fi = {RT_NONE, 0, NULL};
		rt_trace_frame_info(t, &rt_trace_bt_frames(t, bt)[i], &fi);
		for (uint32_t k = 0; k < (fi.n ? fi.n : 1); k++)
			RT_PUSH(v, *n, cap, sframe_text(t, &fi, k));
	}
	return v;
}

char *rt_vgxml_suppression_text(const rt_trace *t, uint32_t bt, const char *kind, const char *aux)
{
	size_t n;
	char **lines = sframe_lines(t, bt, &n);
	char *raw = rt_xasprintf("{\n   <insert_a_suppression_name_here>\n   %s\n%s%s%s", kind, aux ? "   " : "",
				 aux ? aux : "", aux ? "\n" : "");
	for (size_t i = 0; i < n; i++) {
		char *r = rt_xasprintf("%s   %s\n", raw, lines[i]);
		free(raw);
		free(lines[i]);
		raw = r;
	}
	free(lines);
	char *r = rt_xasprintf("%s}\n", raw);
	free(raw);
	return r;
}

/* memcheck's <suppression> for an error at stack bt (--gen-suppressions):
 * structured, then as the text of a suppressions file. */
static void add_suppression(bld *b, uint32_t err, const char *kind, const char *aux, uint32_t bt)
{
	uint32_t supp = rt_vgxml_add(b->t, err, "suppression");
	add(b, supp, "sname", "insert_a_suppression_name_here");
	add(b, supp, "skind", kind);
	if (aux)
		add(b, supp, "skaux", aux);
	size_t n;
	char **lines = sframe_lines(b->t, bt, &n);
	for (size_t i = 0; i < n; i++) {
		uint32_t sf = rt_vgxml_add(b->t, supp, "sframe");
		rt_vgxml_add_text(b->t, sf, lines[i][0] == 'f' ? "fun" : "obj", lines[i] + 4, strlen(lines[i] + 4));
		free(lines[i]);
	}
	free(lines);
	char *text = rt_vgxml_suppression_text(b->t, bt, kind, aux);
	char *r = rt_xasprintf("\n%s", text);
	uint32_t rt = add(b, supp, "rawtext", r);
	rt_vgxml_set_flags(b->t, rt, RT_VGXML_CDATA);
	free(text);
	free(r);
}

/* --- the process --- */

/* The "args" header (the program's arguments after argv[0], separated
 * by spaces, with space and backslash escaped by a backslash) as the
 * arguments, NUL-separated in *v (malloc'ed); returns their count. */
static size_t split_args(const char *args, char **v)
{
	size_t n = 0, k = 0;
	char *d = *v = rt_xmalloc(strlen(args) + 1);
	for (const char *p = args; *p; n++) {
		for (; *p && *p != ' '; p++)
			d[k++] = *p == '\\' && p[1] ? *++p : *p;
		d[k++] = '\0';
		p += *p == ' ';
	}
	return n;
}

/* "Command: " and the command line, as Valgrind prints it. */
static char *command_line(const char *process, const char *args, size_t nargs)
{
	char *cmd = rt_xasprintf("Command: %s", process);
	for (size_t i = 0; i < nargs; i++, args += strlen(args) + 1) {
		char *c = rt_xasprintf("%s %s", cmd, args);
		free(cmd);
		cmd = c;
	}
	return cmd;
}

static void add_preamble(bld *b, const char *process, const char *args, size_t nargs)
{
	const char *origin = rt_trace_header(b->src, "origin");
	uint32_t pre = rt_vgxml_add(b->t, b->root, "preamble");
	add(b, pre, "line", "rtrace, a resource consumption tracer");
	char *line = rt_xasprintf("Using rtrace-%s%s%s", RTRACE_VERSION, origin ? "; trace written by " : "",
				  origin ? origin : "");
	add(b, pre, "line", line);
	free(line);
	add(b, pre, "line", b->verdicts ? "Leak verdicts: rtrace's leak check at exit"
					: "No leak check in the trace: loss records are the blocks still "
					  "allocated at its end");
	if (process) {
		line = command_line(process, args, nargs);
		add(b, pre, "line", line);
		free(line);
	}
}

/* The preamble, pid, ppid, tool and args: what the trace's header says
 * of the process (ppid and args: binary traces of rtrace run). */
static void add_process(bld *b)
{
	const char *process = rt_trace_header(b->src, "process"), *pid = rt_trace_header(b->src, "pid");
	const char *ppid = rt_trace_header(b->src, "ppid"), *hargs = rt_trace_header(b->src, "args");
	char *args = NULL;
	size_t nargs = split_args(hargs ? hargs : "", &args);
	add_preamble(b, process, args, nargs);
	if (pid)
		add(b, b->root, "pid", pid);
	if (ppid)
		add(b, b->root, "ppid", ppid);
	add(b, b->root, "tool", "memcheck");
	uint32_t av = rt_vgxml_add(b->t, b->root, "args");
	add(b, rt_vgxml_add(b->t, av, "vargv"), "exe", "rtrace");
	uint32_t argv = rt_vgxml_add(b->t, av, "argv");
	add(b, argv, "exe", process ? process : "");
	const char *a = args;
	for (size_t i = 0; i < nargs; i++, a += strlen(a) + 1)
		add(b, argv, "arg", a);
	free(args);
}

/* --- times --- */

#define US_PER_DAY (86400ull * 1000000ull)

/* The header's start time ("2011.6.16 15:49:48") as microseconds since
 * midnight, the unit of the calls' timestamps. */
static bool start_us(const rt_trace *t, uint64_t *us)
{
	const char *ts = rt_trace_header(t, "timestamp");
	unsigned y, mo, d, h, mi, s;
	if (!ts || sscanf(ts, "%u.%u.%u %u:%u:%u", &y, &mo, &d, &h, &mi, &s) != 6 || h > 23 || mi > 59 || s > 60)
		return false;
	*us = ((uint64_t)h * 3600 + mi * 60 + s) * 1000000;
	return true;
}

/* Time from the start to the last call read, when the trace says both
 * (a leak-filtered text trace lost its last calls). */
static bool finish_us(const rt_trace *t, uint64_t *us)
{
	uint64_t start, end;
	if ((rt_trace_filter_bits(t) & RT_FILTER_LEAKS) || !start_us(t, &start) ||
	    !rt_trace_last_timestamp(t, &end))
		return false;
	end %= US_PER_DAY;
	*us = end >= start ? end - start : end + US_PER_DAY - start;
	return true;
}

/* Valgrind's elapsed wall clock time, "DD:HH:MM:SS.mmm " (with its
 * trailing space). */
static void add_status(bld *b, const char *state, bool known, uint64_t us)
{
	uint32_t st = rt_vgxml_add(b->t, b->root, "status");
	add(b, st, "state", state);
	char buf[64];
	uint64_t ms = us / 1000, s = ms / 1000;
	snprintf(buf, sizeof buf, "%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 ".%03" PRIu64 " ",
		 s / 86400, s / 3600 % 24, s / 60 % 60, s % 60, ms % 1000);
	add(b, st, "time", known ? buf : "unknown");
}

/* --- heap errors --- */

/* An <error>'s head: unique, tid, kind. rtrace does not record which
 * thread an error happened in: tid is 1, memcheck's main thread. */
static uint32_t add_error(bld *b, const char *kind)
{
	uint32_t e = rt_vgxml_add(b->t, b->root, "error");
	char buf[32];
	snprintf(buf, sizeof buf, "0x%" PRIx64, b->unique++);
	add(b, e, "unique", buf);
	add(b, e, "tid", "1");
	add(b, e, "kind", kind);
	return e;
}

/* memcheck's FishyValue: its <what> ends in a newline (vgxml_write.c
 * prints it so). */
static void add_fishy(bld *b, const rt_heap_error *h)
{
	char what[160];
	uint32_t e = add_error(b, rt_heap_error_kind_name(h->kind));
	rt_heap_error_fishy_what(b->src, h, what, sizeof what - 1);
	strcat(what, "\n");
	add(b, e, "what", what);
	uint32_t at = doc_stack(b, h->fn, h->bt);
	add_stack(b, e, at);
	char aux[160]; /* memcheck's skaux: "malloc(size)" */
	if (b->o && b->o->gen_suppressions)
		add_suppression(b, e, "Memcheck:FishyValue", rt_heap_error_fishy_aux(b->src, h, aux, sizeof aux), at);
}

static void add_heap_error(bld *b, const rt_heap_error *h)
{
	if (h->kind == RT_ERR_FISHY_VALUE) {
		add_fishy(b, h);
		return;
	}
	bool invalid = h->kind == RT_ERR_INVALID_FREE;
	uint32_t e = add_error(b, rt_heap_error_kind_name(h->kind));
	add(b, e, "what", invalid ? "Invalid free() / delete / delete[] / realloc()"
				  : "Mismatched free() / delete / delete []");
	uint32_t at = doc_stack(b, h->fn, h->bt);
	add_stack(b, e, at);
	char buf[160], size[32];
	if (h->block == RT_BLOCK_UNKNOWN)
		snprintf(buf, sizeof buf, "Address 0x%" PRIx64 " is not stack'd, malloc'd or (recently) free'd", h->addr);
	else
		snprintf(buf, sizeof buf, "Address 0x%" PRIx64 " is %" PRIu64 " bytes inside a block of size %s %s",
			 h->addr, h->addr - h->block_addr, rt_grouped(h->block_size, size),
			 h->block == RT_BLOCK_LIVE ? "alloc'd" : "free'd");
	add(b, e, "auxwhat", buf);
	if (h->block == RT_BLOCK_FREED) {
		add_stack(b, e, doc_stack(b, h->free_fn, h->free_bt));
		add(b, e, "auxwhat", "Block was alloc'd at");
	}
	if (h->block != RT_BLOCK_UNKNOWN)
		add_stack(b, e, doc_stack(b, h->alloc_fn, h->alloc_bt));
	if (b->o && b->o->gen_suppressions)
		add_suppression(b, e, "Memcheck:Free", NULL, at);
}

/* One heap error context: an error kind at one place (memcheck's error
 * identity), counted, with its first and last occurrence. */
typedef struct ctx {
	size_t first, last;
	uint64_t count, unique;
} ctx;

static int by_context(const void *a, const void *b, void *errs)
{
	const rt_heap_error *e = errs, *x = &e[*(const size_t *)a], *y = &e[*(const size_t *)b];
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->bt != y->bt)
		return x->bt < y->bt ? -1 : 1;
	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

static int by_first(const void *a, const void *b)
{
	const ctx *x = a, *y = b;
	return (x->first > y->first) - (x->first < y->first);
}

/* The contexts of the trace's n heap errors, in order of first
 * occurrence (memcheck prints the first, counts the others); suppressed
 * errors are left out, as memcheck leaves them out of both. */
static ctx *heap_contexts(const rt_trace *t, size_t n, size_t *count)
{
	size_t *ix = rt_xmalloc((n ? n : 1) * sizeof *ix), nc = 0;
	ctx *c = rt_xmalloc((n ? n : 1) * sizeof *c);
	const rt_heap_error *errs = n ? rt_trace_heap_error_at(t, 0) : NULL;
	size_t all = n;
	n = 0;
	for (size_t i = 0; i < all; i++)
		if (!errs[i].suppressed)
			ix[n++] = i;
	qsort_r(ix, n, sizeof *ix, by_context, (void *)errs);
	for (size_t i = 0; i < n; i++) {
		const rt_heap_error *e = &errs[ix[i]], *p = i ? &errs[ix[i - 1]] : NULL;
		if (!p || p->kind != e->kind || p->bt != e->bt || p->fn != e->fn)
			c[nc++] = (ctx){ix[i], ix[i], 0, 0};
		c[nc - 1].last = ix[i];
		c[nc - 1].count++;
	}
	free(ix);
	qsort(c, nc, sizeof *c, by_first);
	*count = nc;
	return c;
}

static int by_last_desc(const void *a, const void *b)
{
	const ctx *x = a, *y = b;
	return (x->last < y->last) - (x->last > y->last);
}

/* <errorcounts> lists the contexts most recently seen first: memcheck
 * moves an error to the front of its list each time it recurs. */
static void add_errorcounts(bld *b, ctx *c, size_t nc)
{
	uint32_t ec = rt_vgxml_add(b->t, b->root, "errorcounts");
	qsort(c, nc, sizeof *c, by_last_desc);
	for (size_t i = 0; i < nc; i++) {
		uint32_t p = rt_vgxml_add(b->t, ec, "pair");
		char buf[32];
		add_u64(b, p, "count", c[i].count);
		snprintf(buf, sizeof buf, "0x%" PRIx64, c[i].unique);
		add(b, p, "unique", buf);
	}
}

/* <suppcounts>: the suppressions used, each with its count, in
 * memcheck's order (rt_supp_apply's). */
static void add_suppcounts(bld *b)
{
	uint32_t sc = rt_vgxml_add(b->t, b->root, "suppcounts");
	for (size_t i = 0; i < rt_trace_supp_used_count(b->src); i++) {
		const rt_supp_used *u = rt_trace_supp_used_at(b->src, i);
		uint32_t p = rt_vgxml_add(b->t, sc, "pair");
		add_u64(b, p, "count", u->count);
		add(b, p, "name", u->name);
	}
}

/* --- loss records --- */

static const char *leak_kind_tag(unsigned kind)
{
	static const char *const tags[] = {"", "Leak_DefinitelyLost", "Leak_IndirectlyLost",
					   "Leak_PossiblyLost", "Leak_StillReachable"};
	return kind <= RT_LEAK_KINDS ? tags[kind] : "";
}

/* memcheck's loss record text, or for a block the trace has no verdict
 * on, what is known: it was still allocated. */
static char *loss_text(const bld *b, const rt_loss_record *r, size_t i, size_t n)
{
	char t[32], d[32], in[32], nb[32], ri[32], rn[32];
	rt_grouped(r->bytes + r->indirect, t);
	rt_grouped(r->bytes, d);
	rt_grouped(r->indirect, in);
	rt_grouped(r->blocks, nb);
	rt_grouped(i + 1, ri);
	rt_grouped(n, rn);
	if (!b->verdicts)
		return rt_xasprintf("%s bytes in %s blocks are still allocated at the end of the trace "
				    "(reachability not checked) in loss record %s of %s", t, nb, ri, rn);
	if (r->indirect)
		return rt_xasprintf("%s (%s direct, %s indirect) bytes in %s blocks are %s in loss record %s of %s",
				    t, d, in, nb, rt_leak_kind_name(r->kind), ri, rn);
	return rt_xasprintf("%s bytes in %s blocks are %s in loss record %s of %s", t, nb,
			    rt_leak_kind_name(r->kind), ri, rn);
}

static void add_loss_record(bld *b, const rt_loss_record *r, size_t i, size_t n)
{
	static const char *const kinds[] = {"", "definite", "indirect", "possible", "reachable"};
	uint32_t e = add_error(b, leak_kind_tag(r->kind));
	uint32_t xw = rt_vgxml_add(b->t, e, "xwhat");
	char *text = loss_text(b, r, i, n);
	add(b, xw, "text", text);
	free(text);
	add_u64(b, xw, "leakedbytes", r->bytes + r->indirect);
	add_u64(b, xw, "leakedblocks", r->blocks);
	uint32_t bt = doc_stack(b, r->fn, r->bt);
	add_stack(b, e, bt);
	if (!b->o || !b->o->gen_suppressions)
		return;
	char *aux = rt_xasprintf("match-leak-kinds: %s", b->verdicts ? kinds[r->kind] : "all");
	add_suppression(b, e, "Memcheck:Leak", aux, bt);
	free(aux);
}

static bool is_memory(const rt_trace *t, uint8_t res_type)
{
	const rt_resource *r = rt_trace_resource_get(t, res_type);
	return !r || !strcmp(r->type, "memory");
}

/* The heap blocks allocated and not released by the end of the trace,
 * as verdict-less leaks. */
static rt_leak *live_blocks(const rt_trace *t, size_t *count)
{
	size_t n, nl = 0;
	rt_call *c = rt_leaks_unfreed(t, &n);
	rt_leak *v = rt_xmalloc((n ? n : 1) * sizeof *v);
	for (size_t i = 0; i < n; i++)
		if (is_memory(t, c[i].res_type))
			v[nl++] = (rt_leak){.index = c[i].index, .addr = c[i].res_id, .size = c[i].size,
					   .fn = c[i].fn, .bt = c[i].bt, .kind = RT_LEAK_POSSIBLE};
	free(c);
	*count = nl;
	return v;
}

static void add_loss_records(bld *b)
{
	unsigned show = b->o && b->o->show_leak_kinds ? b->o->show_leak_kinds
						       : (1u << RT_LEAK_DEFINITE) | (1u << RT_LEAK_POSSIBLE);
	size_t n = 0, nl = 0;
	rt_loss_record *r;
	if (b->verdicts) {
		r = rt_trace_loss_records(b->src, &n);
	} else {
		rt_leak *live = live_blocks(b->src, &nl);
		r = rt_loss_records(live, nl, &n);
		free(live);
	}
	for (size_t i = 0; i < n; i++)
		if (show & (1u << r[i].kind) && !r[i].suppressed)
			add_loss_record(b, &r[i], i, n);
	free(r);
}

/* --- descriptors: protocol 5's FdBadClose and FdNotClosed ---
 * Written in protocol 5 only: the readers of protocol 4 (Qt Creator,
 * Test::Valgrind, the RNG) refuse the document for an unknown kind or
 * version, so a document without them stays in 4. */

static bool has_fds(const rt_trace *t)
{
	for (size_t i = 1; i <= rt_trace_resource_count(t); i++)
		if (rt_trace_res_is(t, (uint8_t)i, "fd"))
			return true;
	return false;
}

/* A bad close, or at the end (a call still open) a descriptor above the
 * standard ones (valgrind --track-fds=yes does not report those). */
static bool is_fd_error(const rt_trace *t, const rt_call *c, bool at_end)
{
	if (!rt_trace_res_is(t, c->res_type, "fd"))
		return false;
	return at_end ? c->res_id >= 3 : c->res_id < 1u << 20 && rt_trace_is_bad_close(t, c);
}

/* The bad closes add_bad_closes reports and the descriptors
 * add_open_fds reports, counted by the same tests. */
size_t rt_vgxml_fd_error_count(const rt_trace *t)
{
	size_t n = 0, nopen;
	if (!has_fds(t)) /* no second pass of the leak filter */
		return 0;
	for (size_t i = 0; i < rt_trace_call_count(t); i++)
		n += is_fd_error(t, &rt_trace_calls_const(t)[i], false);
	rt_call *open = rt_leaks_unfreed(t, &nopen);
	for (size_t i = 0; i < nopen; i++)
		n += is_fd_error(t, &open[i], true);
	free(open);
	return n;
}

/* An error of its own context (counted once in <errorcounts>, after the
 * heap errors). */
static void add_fd_error(bld *b, ctx **c, size_t *nc, const char *kind, uint64_t fd,
			 const char *path, const char *what, const rt_call *call)
{
	*c = rt_xrealloc(*c, (*nc + 1) * sizeof **c);
	(*c)[*nc] = (ctx){0, SIZE_MAX - *nc, 1, b->unique};
	++*nc;
	uint32_t e = add_error(b, kind);
	add_u64(b, e, "fd", fd);
	if (path)
		add(b, e, "path", path);
	add(b, e, "what", what);
	add_stack(b, e, doc_stack(b, call->fn, call->bt));
}

/* Closes of descriptors that were not open: "already closed" with the
 * path the descriptor last had, else "never opened". */
static void add_bad_closes(bld *b, ctx **c, size_t *nc)
{
	uint32_t *path = NULL; /* per descriptor: its last path's id + 1 */
	size_t cap = 0;
	for (size_t i = 0; i < rt_trace_call_count(b->src); i++) {
		rt_call k = rt_trace_calls_const(b->src)[i];
		if (!rt_trace_res_is(b->src, k.res_type, "fd") || k.res_id >= 1u << 20)
			continue;
		uint32_t known = k.res_id < cap && path[k.res_id] ? path[k.res_id] - 1 : RT_NONE;
		const char *p = known == RT_NONE ? NULL : rt_trace_str(b->t, known);
		if (is_fd_error(b->src, &k, false)) {
			const char *own = rt_trace_call_arg(b->src, &k, "path"); /* a trace without the open */
			p = own ? own : p;
			char *what = p ? rt_xasprintf("File descriptor %" PRIu64 ": %s is already closed", k.res_id, p)
				       : rt_xasprintf("File descriptor %" PRIu64 " was never opened", k.res_id);
			add_fd_error(b, c, nc, "FdBadClose", k.res_id, p, what, &k);
			free(what);
			continue;
		}
		const char *np = k.kind == RT_CALL_ALLOC ? rt_trace_call_arg(b->src, &k, "path") : NULL;
		if (!np)
			continue;
		if (k.res_id >= cap) {
			size_t old = cap;
			rt_grow((void **)&path, &cap, k.res_id + 1, sizeof *path);
			memset(path + old, 0, (cap - old) * sizeof *path);
		}
		path[k.res_id] = intern(b->t, np, strlen(np)) + 1;
	}
	free(path);
}

/* The descriptors left open at the end (the standard ones are not
 * reported, as valgrind --track-fds=yes does not). */
static void add_open_fds(bld *b, ctx **c, size_t *nc)
{
	size_t n;
	rt_call *open = rt_leaks_unfreed(b->src, &n);
	for (size_t i = 0; i < n; i++) {
		if (!is_fd_error(b->src, &open[i], true))
			continue;
		char d[1024];
		rt_trace_fd_describe(b->src, &open[i], d, sizeof d);
		char *what = rt_xasprintf("Open file descriptor %" PRIu64 ": %s", open[i].res_id, d);
		add_fd_error(b, c, nc, "FdNotClosed", open[i].res_id, rt_trace_call_arg(b->src, &open[i], "path"),
			     what, &open[i]);
		free(what);
	}
	free(open);
}

rt_trace *rt_vgxml_build(const rt_trace *t, const rt_vgxml_write_opts *opts)
{
	const rt_leak_summary *s = rt_trace_leak_summary(t);
	bld b = {t, rt_trace_new(), opts, RT_NONE, 0, s && s->mode == RT_LEAK_CHECK_FULL};
	b.root = rt_vgxml_add(b.t, RT_NONE, "valgrindoutput");
	unsigned v = opts && opts->protocol ? opts->protocol : rt_vgxml_fd_error_count(t) ? 5 : 4;
	bool fds = v == 5; /* descriptors' errors are protocol 5's */
	add(&b, b.root, "protocolversion", fds ? "5" : "4");
	add(&b, b.root, "protocoltool", "memcheck");
	add_process(&b);
	add_status(&b, "RUNNING", true, 0);
	size_t nerr = rt_trace_heap_error_count(t), nc = 0;
	ctx *c = heap_contexts(t, nerr, &nc);
	for (size_t i = 0; i < nc; i++) {
		c[i].unique = b.unique;
		add_heap_error(&b, rt_trace_heap_error_at(t, c[i].first));
	}
	if (fds)
		add_bad_closes(&b, &c, &nc);
	uint64_t us = 0;
	bool known = finish_us(t, &us);
	add_status(&b, "FINISHED", known, us);
	if (fds)
		add_open_fds(&b, &c, &nc);
	add_loss_records(&b);
	add_errorcounts(&b, c, nc);
	free(c);
	add_suppcounts(&b);
	return b.t;
}
