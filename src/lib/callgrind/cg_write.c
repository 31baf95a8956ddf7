/* Writes a Callgrind profile model in the Callgrind format: each part
 * with its header, its functions' cost lines, calls and jumps.
 *
 * Lines of one function's code (one source file of it) come together,
 * sorted by position: cost line, then the calls made there, then the
 * jumps from there; summary: and totals: where the part had them,
 * totals: as the sum of the cost lines written. Names are compressed as Callgrind does ("(id) name"
 * the first time in a part, "(id)" after; ids are the model's name ids
 * plus one, so they are the same in every part), subpositions relative
 * to the previous cost line ("+n", "-n", "*"), absolute again after each
 * change of function or file, as Callgrind writes them.
 *
 * A call's cob= is written where Callgrind writes it (the callee's object
 * is not ob=) and also where the last cob= written names another object:
 * the format makes cob= hold for the next call only (callgrind_annotate,
 * KCachegrind and Qt Creator forget it after the call, and a cob= naming
 * ob= reads as none), but gprof2dot keeps the last cob= until the next
 * self-cost line, so an allocation profile, where callers have no self
 * cost, gave it the previous callee's object. cfi= stays as Callgrind
 * writes it: callgrind_annotate strips its working directory from fl=
 * names and not from cfi= ones, so a cfi= naming the current file would
 * rename the callee there, and no reader examined keeps cfi= across
 * calls (gprof2dot names functions without their file). */
#define _GNU_SOURCE /* qsort_r */
#include "callgrind/cg_int.h"
#include "util/out.h"

#include <stdlib.h>
#include <string.h>

enum item_kind { ITEM_COST = 0, ITEM_CALL = 1, ITEM_JUMP = 2 };

/* A cost line, call or jump, in writing order. */
typedef struct item {
	uint32_t rank; /* its code's rank in writing order */
	uint8_t kind;  /* enum item_kind */
	uint32_t idx;
	uint64_t addr, line;
} item;

typedef struct writer {
	const cg_profile *p;
	const cg_write_opts *o;
	rt_out out;
	uint8_t *named[3]; /* per kind and name id: defined in this part */
	const cg_part *part;
	uint32_t parts_written;
	uint8_t pos[2]; /* positions written: CG_POS_INSTR and/or CG_POS_LINE */
	uint32_t npos;
	uint32_t ob, fl, file, fn; /* the current context, CG_NONE: none */
	uint32_t cob;              /* the last cob= written, CG_NONE: none */
	uint64_t last[4];          /* the last cost line's positions */
	bool absolute;             /* the next cost line: absolute positions */
	uint64_t *sum;             /* cost written, per column of the part */
} writer;

/* --- ordering --- */

static int code_cmp(const void *a, const void *b, void *ctx)
{
	const cg_profile *p = ctx;
	const cg_code *x = &p->codes[*(const uint32_t *)a], *y = &p->codes[*(const uint32_t *)b];
	const cg_fn *fx = &p->fns[x->fn], *fy = &p->fns[y->fn];
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	if (fx->object != fy->object)
		return fx->object < fy->object ? -1 : 1;
	if (fx->file != fy->file)
		return fx->file < fy->file ? -1 : 1;
	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	bool ox = x->file == fx->file, oy = y->file == fy->file; /* its own file first */
	if (ox != oy)
		return ox ? -1 : 1;
	return (x->file > y->file) - (x->file < y->file);
}

static int item_cmp(const void *a, const void *b)
{
	const item *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Every cost, call and jump, sorted by code (in writing order) and
 * position. The codes' comparison reads the profile as qsort_r's context
 * (glibc's, as the annotate report's sorts): no global, so that two
 * profiles can be written at once. */
static item *sorted_items(const cg_profile *p, size_t *count)
{
	uint32_t *order = rt_xmalloc((p->ncodes ? p->ncodes : 1) * sizeof *order);
	uint32_t *rank = rt_xmalloc((p->ncodes ? p->ncodes : 1) * sizeof *rank);
	for (uint32_t i = 0; i < p->ncodes; i++)
		order[i] = i;
	qsort_r(order, p->ncodes, sizeof *order, code_cmp, (void *)p);
	for (uint32_t i = 0; i < p->ncodes; i++)
		rank[order[i]] = i;
	free(order);
	size_t n = p->ncosts + p->ncalls + p->njumps, k = 0;
	item *it = rt_xmalloc((n ? n : 1) * sizeof *it);
	for (size_t i = 0; i < p->ncosts; i++)
		it[k++] = (item){rank[p->costs[i].code], ITEM_COST, (uint32_t)i, p->costs[i].addr, p->costs[i].line};
	for (size_t i = 0; i < p->ncalls; i++)
		it[k++] = (item){rank[p->calls[i].code], ITEM_CALL, (uint32_t)i, p->calls[i].addr, p->calls[i].line};
	for (size_t i = 0; i < p->njumps; i++)
		it[k++] = (item){rank[p->jumps[i].code], ITEM_JUMP, (uint32_t)i, p->jumps[i].addr, p->jumps[i].line};
	free(rank);
	qsort(it, n, sizeof *it, item_cmp);
	*count = n;
	return it;
}

/* --- names and positions --- */

/* "key=(id) name" the first time in the part (or the name itself when
 * not compressing), "key=(id)" after. */
static void spec(writer *w, const char *key, enum cg_kind kind, uint32_t id)
{
	rt_out *o = &w->out;
	rt_out_str(o, key);
	rt_out_ch(o, '=');
	const char *name = cg_profile_name(w->p, kind, id);
	/* "(n)" alone is a reference; a name that starts like one is only
	 * written safely after its id */
	bool like_id = name && name[0] == '(' && name[1] >= '0' && name[1] <= '9';
	if ((w->o->no_compress_names && !like_id) || !name || !*name) {
		rt_out_str(o, name ? name : "");
		rt_out_ch(o, '\n');
		return;
	}
	rt_out_ch(o, '(');
	rt_out_u64(o, (uint64_t)id + 1);
	rt_out_ch(o, ')');
	if (!w->named[kind][id]) {
		w->named[kind][id] = 1;
		rt_out_ch(o, ' ');
		rt_out_str(o, name ? name : "");
	}
	rt_out_ch(o, '\n');
}

static void number(writer *w, uint64_t v, bool hex)
{
	if (!hex) {
		rt_out_u64(&w->out, v);
		return;
	}
	rt_out_str(&w->out, "0x");
	rt_out_hex(&w->out, v, 1);
}

/* One subposition, relative to `last` when compressing and allowed. */
static void subposition(writer *w, uint64_t v, uint64_t last, bool hex, bool relative)
{
	rt_out *o = &w->out;
	if (!relative || w->o->no_compress_pos) {
		number(w, v, hex);
	} else if (v == last) {
		rt_out_ch(o, '*');
	} else if (v > last) {
		rt_out_ch(o, '+');
		rt_out_u64(o, v - last);
	} else {
		rt_out_ch(o, '-');
		rt_out_u64(o, last - v);
	}
}

/* The part's subpositions of (addr, line); a cost line's become the base
 * of the next ones, a call's or jump's target does not. */
static void positions(writer *w, uint64_t addr, uint64_t line, bool target)
{
	for (uint32_t i = 0; i < w->npos; i++) {
		bool instr = w->pos[i] == CG_POS_INSTR;
		if (i)
			rt_out_ch(&w->out, ' ');
		subposition(w, instr ? addr : line, w->last[w->pos[i]], instr, !w->absolute);
	}
	if (!target) {
		w->last[CG_POS_INSTR] = addr;
		w->last[CG_POS_LINE] = line;
		w->absolute = false;
	}
}

/* The values of v for the part's columns, up to the last given one. */
static void costs(writer *w, const uint64_t *v, uint32_t given, bool self)
{
	const cg_part *pt = w->part;
	uint32_t n = 0;
	for (uint32_t i = 0; i < pt->nevents; i++)
		if (w->p->events[pt->events[i]].slot < given)
			n = i + 1;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = w->p->events[pt->events[i]].slot;
		uint64_t x = slot < given ? v[slot] : 0;
		rt_out_ch(&w->out, ' ');
		rt_out_u64(&w->out, x);
		if (self) /* held at 2^64-1 as the part's summary is */
			cg_sat_add(&w->sum[i], x);
	}
	rt_out_ch(&w->out, '\n');
}

/* --- body --- */

/* ob=, fl=, fn=, fi=/fe= for the code of the next lines. */
static void enter_code(writer *w, uint32_t code)
{
	const cg_code *c = &w->p->codes[code];
	const cg_fn *f = &w->p->fns[c->fn];
	if (f->object != w->ob) {
		spec(w, "ob", CG_OBJECT, f->object);
		w->ob = f->object;
		w->fn = CG_NONE;
	}
	if (f->file != w->fl) {
		spec(w, "fl", CG_FILE, f->file);
		w->fl = w->file = f->file;
		w->fn = CG_NONE;
	} else if (c->fn != w->fn && w->file != w->fl) {
		/* back from an inlined file before fn=: callgrind_annotate
		 * names a function by the current file, fi= included */
		spec(w, "fe", CG_FILE, w->fl);
		w->file = w->fl;
	}
	if (c->fn != w->fn) {
		spec(w, "fn", CG_FUNCTION, f->name);
		w->fn = c->fn;
		w->file = w->fl;
	}
	if (c->file != w->file) {
		spec(w, c->file == w->fl ? "fe" : "fi", CG_FILE, c->file);
		w->file = c->file;
	}
	w->absolute = true;
}

/* cob= for a call to an object: where Callgrind writes it, and where the
 * last cob= written names another object, which a reader that keeps it
 * (see atop) would read; a reader that has read none holds no object,
 * which an unnamed one is (a profile without ob=). */
static bool cob_needed(const writer *w, uint32_t obj)
{
	if (obj != w->ob)
		return true;
	if (obj == w->cob)
		return false;
	const char *name = cg_profile_name(w->p, CG_OBJECT, obj);
	return w->cob != CG_NONE || (name && *name);
}

static void write_call(writer *w, const cg_call *c)
{
	const cg_fn *callee = &w->p->fns[c->callee];
	if (cob_needed(w, callee->object)) {
		spec(w, "cob", CG_OBJECT, callee->object);
		w->cob = callee->object;
	}
	if (callee->file != w->file)
		spec(w, "cfi", CG_FILE, callee->file);
	spec(w, "cfn", CG_FUNCTION, callee->name);
	rt_out_str(&w->out, "calls=");
	rt_out_u64(&w->out, c->count);
	rt_out_ch(&w->out, ' ');
	positions(w, c->to_addr, c->to_line, true);
	rt_out_ch(&w->out, '\n');
	positions(w, c->addr, c->line, false);
	costs(w, c->v, c->given, false);
}

/* jump=COUNT TARGET or jcnd=FOLLOWED/EXECUTED TARGET (Callgrind's
 * spelling), then the source position. */
static void write_jump(writer *w, const cg_jump *j)
{
	if (j->to_file != w->file)
		spec(w, "jfi", CG_FILE, j->to_file);
	if (j->to_fn != w->fn)
		spec(w, "jfn", CG_FUNCTION, w->p->fns[j->to_fn].name);
	rt_out *o = &w->out;
	rt_out_str(o, j->conditional ? "jcnd=" : "jump=");
	rt_out_u64(o, j->followed);
	if (j->conditional) {
		rt_out_ch(o, '/');
		rt_out_u64(o, j->executed);
	}
	rt_out_ch(o, ' ');
	positions(w, j->to_addr, j->to_line, true);
	rt_out_ch(o, '\n');
	positions(w, j->addr, j->line, false);
	rt_out_ch(o, '\n');
}

static void write_item(writer *w, const item *it)
{
	const cg_profile *p = w->p;
	if (it->kind == ITEM_COST) {
		const cg_cost *c = &p->costs[it->idx];
		positions(w, c->addr, c->line, false);
		costs(w, c->v, c->given, true);
	} else if (it->kind == ITEM_CALL) {
		write_call(w, &p->calls[it->idx]);
	} else {
		write_jump(w, &p->jumps[it->idx]);
	}
}

static uint32_t item_code(const cg_profile *p, const item *it)
{
	return it->kind == ITEM_COST ? p->costs[it->idx].code
	       : it->kind == ITEM_CALL ? p->calls[it->idx].code
				       : p->jumps[it->idx].code;
}

/* --- header --- */

static void key_u64(writer *w, const char *key, uint64_t v)
{
	rt_out_str(&w->out, key);
	rt_out_u64(&w->out, v);
	rt_out_ch(&w->out, '\n');
}

static void key_costs(writer *w, const char *key, const uint64_t *v, uint32_t n)
{
	rt_out_str(&w->out, key);
	for (uint32_t i = 0; i < n; i++) {
		rt_out_ch(&w->out, ' ');
		rt_out_u64(&w->out, v[i]);
	}
	rt_out_ch(&w->out, '\n');
}

/* event: lines for long names and derived events (once, in the first
 * part: they hold for the whole file). */
static void event_specs(writer *w)
{
	for (size_t i = 0; i < w->p->nevents; i++) {
		const cg_event *e = &w->p->events[i];
		if (!e->formula && !e->long_name)
			continue;
		rt_out_str(&w->out, "event: ");
		rt_out_str(&w->out, e->name);
		if (e->formula) {
			rt_out_str(&w->out, " = ");
			rt_out_str(&w->out, e->formula);
		}
		if (e->long_name) {
			rt_out_str(&w->out, " : ");
			rt_out_str(&w->out, e->long_name);
		}
		rt_out_ch(&w->out, '\n');
	}
}

static void part_header(writer *w)
{
	const cg_part *pt = w->part;
	rt_out *o = &w->out;
	if (!w->parts_written) {
		rt_out_str(o, "# callgrind format\nversion: 1\n");
		if (pt->creator) {
			rt_out_str(o, "creator: ");
			rt_out_str(o, pt->creator);
			rt_out_ch(o, '\n');
		}
	}
	if (pt->flags & CG_HAS_PID)
		key_u64(w, "pid: ", pt->pid);
	if (pt->cmd) {
		rt_out_str(o, "cmd: ");
		rt_out_str(o, pt->cmd);
		rt_out_ch(o, '\n');
	}
	if (pt->flags & CG_HAS_PART)
		key_u64(w, "part: ", pt->number);
	if (pt->flags & CG_HAS_THREAD)
		key_u64(w, "thread: ", pt->thread);
	for (uint32_t i = 0; i < pt->ndesc; i++) {
		rt_out_str(o, "desc: ");
		rt_out_str(o, pt->desc[i].text);
		rt_out_ch(o, '\n');
	}
	rt_out_str(o, "\npositions:");
	for (uint32_t i = 0; i < w->npos; i++)
		rt_out_str(o, w->pos[i] == CG_POS_INSTR ? " instr" : " line");
	rt_out_ch(o, '\n');
	if (!w->parts_written)
		event_specs(w);
	rt_out_str(o, "events:");
	for (uint32_t i = 0; i < pt->nevents; i++) {
		rt_out_ch(o, ' ');
		rt_out_str(o, w->p->events[pt->events[i]].name);
	}
	rt_out_ch(o, '\n');
	if (pt->flags & CG_HAS_SUMMARY)
		key_costs(w, "summary:", pt->summary, pt->nsummary);
	rt_out_ch(o, '\n');
}

/* The positions to write for part pt: its own, without bb (the model
 * keeps none), instr only when the addresses were kept. */
static void part_positions(writer *w, const cg_part *pt)
{
	w->npos = 0;
	for (uint32_t i = 0; i < pt->npositions; i++) {
		uint8_t k = pt->positions[i];
		if (k == CG_POS_LINE || (k == CG_POS_INSTR && !w->o->lines_only && !w->p->no_addrs))
			w->pos[w->npos++] = k;
	}
	if (!w->npos)
		w->pos[w->npos++] = CG_POS_LINE;
}

static void start_part(writer *w, const cg_part *pt)
{
	w->part = pt;
	part_positions(w, pt);
	for (int k = 0; k < 3; k++)
		memset(w->named[k], 0, cg_profile_name_count(w->p, k));
	w->ob = w->fl = w->file = w->fn = w->cob = CG_NONE;
	memset(w->last, 0, sizeof w->last);
	free(w->sum);
	w->sum = rt_xcalloc(pt->nevents ? pt->nevents : 1, sizeof *w->sum);
	part_header(w);
}

/* A profile read with its parts merged is one part: the first one's
 * header, every raw event a column, the positions any part had, totals:
 * when a part had them (its summary: no longer holds). The columns are
 * kept in *cols (malloc'ed). */
static cg_part merged_part(const cg_profile *p, uint32_t **cols)
{
	cg_part m = p->parts[0];
	m.flags &= ~(unsigned)(CG_HAS_SUMMARY | CG_HAS_TOTALS | CG_HAS_PART | CG_HAS_THREAD);
	*cols = rt_xmalloc((p->nslots ? p->nslots : 1) * sizeof **cols);
	for (size_t i = 0; i < p->nevents; i++)
		if (p->events[i].slot != CG_NONE)
			(*cols)[p->events[i].slot] = (uint32_t)i;
	m.events = *cols;
	m.nevents = p->nslots;
	bool instr = false;
	for (size_t i = 0; i < p->nparts; i++) {
		m.flags |= p->parts[i].flags & CG_HAS_TOTALS;
		for (uint32_t k = 0; k < p->parts[i].npositions; k++)
			instr |= p->parts[i].positions[k] == CG_POS_INSTR;
	}
	m.npositions = 0;
	if (instr)
		m.positions[m.npositions++] = CG_POS_INSTR;
	m.positions[m.npositions++] = CG_POS_LINE;
	return m;
}

/* totals: when the part had one (callgrind_annotate tells "calculated"
 * totals from given ones): the cost lines' sum, which a reader checks. */
static void end_part(writer *w)
{
	rt_out_ch(&w->out, '\n');
	if (w->part->flags & CG_HAS_TOTALS)
		key_costs(w, "totals:", w->sum, w->part->nevents);
}

/* Writes part pt with the items it[0 .. n). */
static void write_part(writer *w, const cg_part *pt, const item *it, size_t n)
{
	start_part(w, pt);
	uint32_t cur = CG_NONE;
	for (size_t i = 0; i < n; i++) {
		uint32_t code = item_code(w->p, &it[i]);
		if (code != cur)
			enter_code(w, code);
		cur = code;
		write_item(w, &it[i]);
	}
	end_part(w);
	w->parts_written++;
}

/* Parts without a cost, call or jump are left out (a reader would take
 * the next part's header for theirs), unless no part has any: then the
 * first with events is written, header only. */
static void write_all(const cg_profile *p, rt_out *out, const cg_write_opts *opts)
{
	static const cg_write_opts defaults = {0};
	writer w = {p, opts ? opts : &defaults};
	w.out = *out;
	for (int k = 0; k < 3; k++)
		w.named[k] = rt_xcalloc(cg_profile_name_count(p, k) + 1, 1);
	size_t n, i = 0;
	item *it = sorted_items(p, &n);
	uint32_t *cols = NULL;
	if (p->merged && p->nparts) {
		cg_part m = merged_part(p, &cols);
		write_part(&w, &m, it, n);
	}
	for (uint32_t part = 0; !p->merged && part < p->nparts; part++) {
		size_t from = i;
		while (i < n && p->codes[item_code(p, &it[i])].part == part)
			i++;
		if (p->parts[part].nevents && i > from)
			write_part(&w, &p->parts[part], it + from, i - from);
	}
	for (uint32_t part = 0; !w.parts_written && part < p->nparts; part++)
		if (p->parts[part].nevents)
			write_part(&w, &p->parts[part], NULL, 0);
	free(cols);
	free(it);
	free(w.sum);
	for (int k = 0; k < 3; k++)
		free(w.named[k]);
	*out = w.out;
}

static void fill(rt_out *o, const void *model, const void *opts)
{
	write_all(model, o, opts);
}

int cg_write_fd(const cg_profile *m, int fd, const cg_write_opts *opts)
{
	return rt_out_write_fd(fd, fill, m, opts);
}

char *cg_write_mem(const cg_profile *m, const cg_write_opts *opts, size_t *len)
{
	return rt_out_write_mem(len, fill, m, opts);
}
