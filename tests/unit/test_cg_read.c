/* The Callgrind reader and model: every rule of the format's grammar
 * (both revisions), name and subposition compression, derived events,
 * the totals check, several parts and files, other producers (Cachegrind,
 * Xdebug, pprof), truncated input, and errors with their exact position. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_util.h"

#include "rtrace/callgrind.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CG_DATA
#error "CG_DATA must name tests/data/callgrind"
#endif

typedef struct warns {
	int n;
	char msg[16][640];
} warns;

static void on_warn(void *ctx, const rt_diag *d)
{
	warns *w = ctx;
	if (w->n < 16)
		rt_diag_format(d, w->msg[w->n], sizeof w->msg[0]);
	w->n++;
}

static bool warned(const warns *w, const char *needle)
{
	for (int i = 0; i < w->n && i < 16; i++)
		if (strstr(w->msg[i], needle))
			return true;
	return false;
}

/* Reads text (name "t.cg"); *rc gets the reader's result. */
static cg_profile *parse(const char *text, unsigned flags, warns *w, rt_diag *err, int *rc)
{
	static warns sink;
	static rt_diag e;
	cg_profile *p = cg_profile_new();
	if (!w)
		w = &sink;
	memset(w, 0, sizeof *w);
	cg_read_opts o = {flags, on_warn, w};
	int r = cg_read_mem(p, text, strlen(text), "t.cg", &o, NULL, err ? err : &e);
	if (rc)
		*rc = r;
	else
		assert_int_equal(r, 0);
	return p;
}

static cg_profile *parse_file(const char *name, unsigned flags, warns *w)
{
	size_t len;
	char *text = test_slurp(CG_DATA, name, &len);
	cg_profile *p = cg_profile_new();
	memset(w, 0, sizeof *w);
	cg_read_opts o = {flags, on_warn, w};
	rt_diag err;
	int rc = cg_read_mem(p, text, len, name, &o, NULL, &err);
	if (rc) {
		char buf[700];
		rt_diag_format(&err, buf, sizeof buf);
		fail_msg("%s", buf);
	}
	free(text);
	return p;
}

static const char *nm(const cg_profile *p, enum cg_kind k, uint32_t id)
{
	return cg_profile_name(p, k, id);
}

/* The cost at (function, code file, line, addr) in any part, or NULL. */
static const cg_cost *cost_at(const cg_profile *p, const char *fn, const char *file, uint64_t line,
			      uint64_t addr)
{
	size_t n, nc;
	const cg_cost *c = cg_profile_costs(p, &n);
	const cg_code *codes = cg_profile_codes(p, &nc);
	const cg_fn *fns = cg_profile_fns(p, &nc);
	for (size_t i = 0; i < n; i++) {
		const cg_code *k = &codes[c[i].code];
		if (c[i].line == line && c[i].addr == addr && !strcmp(nm(p, CG_FUNCTION, fns[k->fn].name), fn) &&
		    !strcmp(nm(p, CG_FILE, k->file), file))
			return &c[i];
	}
	return NULL;
}

static const cg_call *call_of(const cg_profile *p, const char *caller, const char *callee, uint64_t line)
{
	size_t n, nc;
	const cg_call *c = cg_profile_calls(p, &n);
	const cg_code *codes = cg_profile_codes(p, &nc);
	const cg_fn *fns = cg_profile_fns(p, &nc);
	for (size_t i = 0; i < n; i++)
		if (c[i].line == line && !strcmp(nm(p, CG_FUNCTION, fns[codes[c[i].code].fn].name), caller) &&
		    !strcmp(nm(p, CG_FUNCTION, fns[c[i].callee].name), callee))
			return &c[i];
	return NULL;
}

typedef struct strbuf {
	char *s;
	size_t len, cap;
} strbuf;

/* Appends to a buffer that grows by doubling (the dumps of big profiles
 * are long; a realloc per line is quadratic under ASan). */
static void append(strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (b->len + (size_t)n + 1 > b->cap) {
		b->cap = (b->len + (size_t)n + 1) * 2;
		b->s = realloc(b->s, b->cap);
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static void append_vec(strbuf *b, const uint64_t *v, uint32_t slots)
{
	for (uint32_t i = 0; i < slots; i++)
		append(b, " %" PRIu64, v[i]);
	append(b, "\n");
}

static int line_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Everything the model holds, by name, one sorted line per entry: two
 * profiles that say the same compare equal however they were written. */
static char *dump(const cg_profile *p)
{
	strbuf b = {0};
	size_t n, nf, nc;
	const cg_fn *fns = cg_profile_fns(p, &nf);
	const cg_code *codes = cg_profile_codes(p, &nc);
	uint32_t slots = cg_profile_slots(p);
	const cg_cost *c = cg_profile_costs(p, &n);
	for (size_t i = 0; i < n; i++) {
		const cg_fn *f = &fns[codes[c[i].code].fn];
		append(&b, "cost %s|%s|%s|%s|%u|%" PRIx64 "|%" PRIu64 "|%u:", nm(p, CG_OBJECT, f->object),
		       nm(p, CG_FILE, f->file), nm(p, CG_FUNCTION, f->name), nm(p, CG_FILE, codes[c[i].code].file),
		       codes[c[i].code].part, c[i].addr, c[i].line, c[i].given);
		append_vec(&b, c[i].v, slots);
	}
	const cg_call *k = cg_profile_calls(p, &n);
	for (size_t i = 0; i < n; i++) {
		const cg_fn *f = &fns[codes[k[i].code].fn], *t = &fns[k[i].callee];
		append(&b, "call %s|%s|%s|%" PRIx64 "|%" PRIu64 " -> %s|%s|%s|%" PRIx64 "|%" PRIu64 " x%" PRIu64 ":",
		       nm(p, CG_FILE, codes[k[i].code].file), nm(p, CG_FUNCTION, f->name), nm(p, CG_OBJECT, f->object),
		       k[i].addr, k[i].line, nm(p, CG_OBJECT, t->object), nm(p, CG_FILE, t->file),
		       nm(p, CG_FUNCTION, t->name), k[i].to_addr, k[i].to_line, k[i].count);
		append_vec(&b, k[i].v, slots);
	}
	char **lines = NULL;
	size_t nl = 0, cap = 0;
	for (char *s = b.s; s && *s;) {
		char *e = strchr(s, '\n');
		*e = '\0';
		if (nl == cap)
			lines = realloc(lines, (cap = cap ? cap * 2 : 256) * sizeof *lines);
		lines[nl++] = s;
		s = e + 1;
	}
	qsort(lines, nl, sizeof *lines, line_cmp);
	strbuf out = {0};
	append(&out, "");
	for (size_t i = 0; i < nl; i++)
		append(&out, "%s\n", lines[i]);
	free(lines);
	free(b.s);
	return out.s;
}

/* --- the spec's examples --- */

static void test_simple_example(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("spec_simple.cg", 0, &w);
	size_t n;
	const cg_event *ev = cg_profile_events(p, &n);
	assert_int_equal(n, 3);
	assert_string_equal(ev[0].name, "Cycles");
	assert_string_equal(ev[2].name, "Flops");
	assert_int_equal(cg_profile_slots(p), 3);
	const cg_cost *c = cost_at(p, "main", "file.f", 15, 0);
	assert_non_null(c);
	assert_int_equal(c->given, 3);
	assert_int_equal(c->v[0], 90);
	assert_int_equal(c->v[1], 14);
	assert_int_equal(c->v[2], 2);
	c = cost_at(p, "main", "file.f", 16, 0);
	assert_int_equal(c->given, 2); /* Flops not given: 0 */
	assert_int_equal(c->v[0], 20);
	assert_int_equal(c->v[2], 0);
	const cg_part *pt = cg_profile_parts(p, &n);
	assert_int_equal(n, 1);
	assert_int_equal(pt->npositions, 1);
	assert_int_equal(pt->positions[0], CG_POS_LINE);
	assert_int_equal(pt->sum[0], 110);
	assert_int_equal(pt->sum[1], 26);
	assert_int_equal(pt->sum[2], 2);
	assert_int_equal(pt->version, 1);
	assert_int_equal(w.n, 0);
	cg_profile_free(p);
}

static void check_extended(const cg_profile *p)
{
	size_t n;
	cg_profile_fns(p, &n);
	assert_int_equal(n, 3);
	assert_int_equal(cost_at(p, "main", "file1.c", 16, 0)->v[0], 20);
	assert_int_equal(cost_at(p, "func1", "file1.c", 51, 0)->v[0], 100);
	assert_int_equal(cost_at(p, "func2", "file2.c", 20, 0)->v[0], 700);
	const cg_call *c = call_of(p, "main", "func1", 16);
	assert_non_null(c);
	assert_int_equal(c->count, 1);
	assert_int_equal(c->v[0], 400);
	assert_int_equal(c->to_line, 50);
	const cg_fn *fns = cg_profile_fns(p, &n);
	assert_string_equal(cg_profile_name(p, CG_FILE, fns[c->callee].file), "file1.c");
	assert_int_equal(c->flags, 0); /* no cfi=: the current file */
	c = call_of(p, "main", "func2", 16);
	assert_int_equal(c->count, 3);
	assert_int_equal(c->v[0], 400);
	assert_string_equal(cg_profile_name(p, CG_FILE, fns[c->callee].file), "file2.c");
	assert_int_equal(c->flags, CG_CALL_FILE_GIVEN);
	c = call_of(p, "func1", "func2", 51);
	assert_int_equal(c->count, 2);
	assert_int_equal(c->v[0], 300);
}

/* The extended example, with name compression, and with the mappings
 * defined up front: one model. */
static void test_extended_and_compressed(void **state)
{
	(void)state;
	const char *files[] = {"spec_extended.cg", "spec_compressed.cg", "spec_predefined.cg"};
	char *first = NULL;
	for (int i = 0; i < 3; i++) {
		warns w;
		cg_profile *p = parse_file(files[i], 0, &w);
		check_extended(p);
		assert_int_equal(w.n, 0);
		char *d = dump(p);
		if (first)
			assert_string_equal(d, first);
		else
			first = d;
		if (d != first)
			free(d);
		cg_profile_free(p);
	}
	free(first);
}

/* positions: instr line with +n, -n and *; part 2 spells it out. */
static void test_subpositions(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("subpositions.cg", 0, &w);
	size_t n;
	cg_profile_parts(p, &n);
	assert_int_equal(n, 2);
	const cg_cost *c = cg_profile_costs(p, &n);
	assert_int_equal(n, 6); /* three positions in each part */
	uint64_t want[][3] = {{0x80001234, 90, 6}, {0x80001237, 90, 5}, {0x80001238, 91, 6}};
	for (int k = 0; k < 3; k++) {
		int seen = 0;
		for (size_t i = 0; i < n; i++)
			if (c[i].addr == want[k][0] && c[i].line == want[k][1]) {
				assert_int_equal(c[i].v[0], want[k][2]);
				seen++;
			}
		assert_int_equal(seen, 2);
	}
	cg_profile_free(p);
	p = parse_file("subpositions.cg", CG_READ_MERGE_PARTS, &w);
	assert_int_equal(cost_at(p, "func", "func.c", 90, 0x80001234)->v[0], 12);
	cg_profile_costs(p, &n);
	assert_int_equal(n, 3);
	cg_profile_free(p);
	p = parse_file("subpositions.cg", CG_READ_MERGE_PARTS | CG_READ_LINES, &w);
	assert_int_equal(cost_at(p, "func", "func.c", 90, 0)->v[0], 22);
	assert_int_equal(cost_at(p, "func", "func.c", 91, 0)->v[0], 12);
	cg_profile_free(p);
}

static void test_hex_numbers(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("hex.cg", 0, &w);
	assert_int_equal(w.n, 0); /* totals: 0x120 is the sum */
	const cg_cost *c = cost_at(p, "f", "hex.c", 16, 0x401000);
	assert_non_null(c);
	assert_int_equal(c->v[0], 32);
	assert_int_equal(c->v[1], 10);
	assert_int_equal(cost_at(p, "f", "hex.c", 17, 0x401004)->v[0], 255);
	c = cost_at(p, "f", "hex.c", 18, 0x401008);
	assert_non_null(c);
	assert_int_equal(c->given, 2);
	cg_profile_free(p);
}

static uint32_t event(const cg_profile *p, const char *name)
{
	uint32_t ev = cg_profile_find_event(p, name);
	assert_int_not_equal(ev, CG_NONE);
	return ev;
}

/* Long names, formulas over raw events, a derived event of a derived one,
 * event: lines before and after events:. */
static void test_events(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("events.cg", 0, &w);
	assert_int_equal(w.n, 0);
	size_t n;
	const cg_event *ev = cg_profile_events(p, &n);
	assert_int_equal(n, 7);
	assert_int_equal(cg_profile_slots(p), 4);
	assert_string_equal(ev[event(p, "Ir")].long_name, "Instruction Fetches");
	assert_string_equal(ev[event(p, "Dr")].long_name, "Data Reads");
	assert_int_equal(ev[event(p, "Bm")].slot, 2);
	const cg_event *sum = &ev[event(p, "Sum")];
	assert_int_equal(sum->slot, CG_NONE);
	assert_string_equal(sum->formula, "Ir + Dr");
	assert_int_equal(sum->nterms, 2);
	assert_string_equal(ev[event(p, "Twice")].long_name, "Sum, twice");
	const cg_cost *c = cost_at(p, "e", "e.c", 1, 0);
	bool def;
	assert_int_equal(cg_event_value(p, event(p, "Sum"), c->v, c->given, &def), 120);
	assert_true(def);
	assert_int_equal(cg_event_value(p, event(p, "CEst"), c->v, c->given, &def), 230);
	assert_int_equal(cg_event_value(p, event(p, "Twice"), c->v, c->given, &def), 240);
	c = cost_at(p, "e", "e.c", 2, 0);
	assert_int_equal(cg_event_value(p, event(p, "CEst"), c->v, c->given, &def), 50);
	assert_true(def);
	cg_event_value(p, event(p, "L1m"), c->v, c->given, &def);
	assert_false(def); /* not given on that line */
	cg_profile_free(p);
}

static void test_event_formula_problems(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse("event: X = Ir + 3 Nope\nevent: L = L + Ir\nevents: Ir\nfn=f\n1 2\n", 0, &w, NULL, NULL);
	assert_true(warned(&w, "t.cg:1:1: event 'X': no data for event 'Nope'"));
	assert_true(warned(&w, "t.cg:2:1: event 'L': circular reference to 'L'"));
	const cg_cost *c = cost_at(p, "f", "", 1, 0);
	assert_int_equal(cg_event_value(p, event(p, "X"), c->v, c->given, NULL), 2);
	cg_profile_free(p);
	/* a formula naming more new events than the table holds (fuzzing) */
	p = parse("event: S = A1 + A2 + A3 + A4 + A5 + A6 + A7 + A8 + A9 + A10 + A11 + A12 + A13 + A14 "
		  "+ A15 + A16 + A17 + A18 + A19 + A20\nevents: A1 A2\nfn=f\n1 2 3\n", 0, &w, NULL, NULL);
	c = cost_at(p, "f", "", 1, 0);
	assert_int_equal(cg_event_value(p, event(p, "S"), c->v, c->given, NULL), 5);
	assert_int_equal(w.n, 18); /* A3..A20 have no data */
	cg_profile_free(p);
}

/* --- totals --- */

static void test_totals_check(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("totals_bad.cg", 0, &w);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.msg[0], "totals_bad.cg:6:1: totals: Dr is 4, but the cost lines add up to 3");
	cg_profile_free(p);
	p = parse("events: Ir\nsummary: 5\nfn=f\n1 10\n", 0, &w, NULL, NULL);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.msg[0], "t.cg:2:1: summary: Ir is 5, less than the cost lines' 10");
	cg_profile_free(p);
	/* summary: may exceed the cost lines when totals: confirms them */
	p = parse("events: Ir\nsummary: 50\nfn=f\n1 10\ntotals: 10\n", 0, &w, NULL, NULL);
	assert_int_equal(w.n, 0);
	cg_profile_free(p);
	/* call costs are inclusive: not part of the sum */
	p = parse("events: Ir\nfn=f\n1 10\ncfn=g\ncalls=1 5\n1 99\ntotals: 10\n", 0, &w, NULL, NULL);
	assert_int_equal(w.n, 0);
	cg_profile_free(p);
}

static void test_fewer_costs(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("fewer_costs.cg", 0, &w);
	assert_int_equal(cost_at(p, "only_ir", "f.c", 1, 0)->given, 1);
	assert_int_equal(cost_at(p, "ir_dr", "f.c", 3, 0)->given, 2);
	const cg_cost *c = cost_at(p, "all", "f.c", 4, 0);
	assert_int_equal(c->given, 3);
	assert_int_equal(c->v[2], 3);
	cg_profile_free(p);
	p = parse_file("summary_short.cg", 0, &w);
	assert_int_equal(w.n, 0);
	size_t n;
	const cg_part *pt = cg_profile_parts(p, &n);
	assert_int_equal(pt->nsummary, 1);
	assert_true(pt->flags & CG_HAS_SUMMARY);
	cg_profile_free(p);
}

/* --- parts and files --- */

static void test_parts(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("multipart.cg", 0, &w);
	assert_int_equal(w.n, 0);
	size_t n;
	const cg_part *pt = cg_profile_parts(p, &n);
	assert_int_equal(n, 2);
	assert_int_equal(pt[0].pid, 4242);
	assert_int_equal(pt[0].number, 1);
	assert_int_equal(pt[0].thread, 1);
	assert_int_equal(pt[0].flags & (CG_HAS_PID | CG_HAS_PART | CG_HAS_THREAD | CG_HAS_SUMMARY | CG_HAS_TOTALS),
			 CG_HAS_PID | CG_HAS_PART | CG_HAS_THREAD | CG_HAS_SUMMARY | CG_HAS_TOTALS);
	assert_string_equal(pt[0].cmd, "./prog arg");
	assert_string_equal(pt[0].creator, "hand");
	assert_int_equal(pt[0].ndesc, 1);
	assert_string_equal(pt[0].desc[0].key, "Trigger");
	assert_string_equal(pt[0].desc[0].value, "Program termination");
	assert_int_equal(pt[0].first_line, 2);
	assert_int_equal(pt[1].number, 2);
	assert_int_equal(pt[1].thread, 2);
	assert_null(pt[1].cmd);
	assert_string_equal(pt[1].creator, "hand");
	assert_int_equal(pt[1].first_line, 18);
	assert_int_equal(pt[1].totals[0], 7);
	assert_int_equal(pt[1].sum[0], 7);
	const cg_call *c = call_of(p, "worker", "main", 6);
	assert_int_equal(c->count, 1);
	assert_int_equal(c->v[0], 4);
	const cg_code *codes = cg_profile_codes(p, &n);
	assert_int_equal(codes[c->code].part, 1);
	cg_profile_free(p);
	p = parse_file("multipart.cg", CG_READ_MERGE_PARTS, &w);
	codes = cg_profile_codes(p, &n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(codes[i].part, 0);
	cg_profile_free(p);
}

/* Two files into one profile: parts add up, events are matched by name. */
static void test_several_files(void **state)
{
	(void)state;
	cg_profile *p = cg_profile_new();
	rt_diag err;
	const char *a = "events: Cycles Instructions\nfl=x.c\nfn=f\n1 5 6\n";
	const char *b = "events: Instructions Flops\nfl=x.c\nfn=f\n1 10 2\n2 1\n";
	assert_int_equal(cg_read_mem(p, a, strlen(a), "a.cg", NULL, NULL, &err), 0);
	assert_int_equal(cg_read_mem(p, b, strlen(b), "b.cg", NULL, NULL, &err), 0);
	size_t n;
	const cg_part *pt = cg_profile_parts(p, &n);
	assert_int_equal(n, 2);
	assert_string_equal(pt[0].source, "a.cg");
	assert_string_equal(pt[1].source, "b.cg");
	assert_int_equal(cg_profile_slots(p), 3);
	const cg_cost *c = cost_at(p, "f", "x.c", 1, 0);
	assert_int_equal(c->v[0], 5);
	assert_int_equal(c->v[1], 6); /* part 1 alone: parts are kept apart */
	c = cost_at(p, "f", "x.c", 2, 0);
	assert_int_equal(c->v[1], 1);
	assert_int_equal(c->v[2], 0);
	cg_profile_free(p);
	p = cg_profile_new();
	cg_read_opts o = {CG_READ_MERGE_PARTS, NULL, NULL};
	assert_int_equal(cg_read_mem(p, a, strlen(a), "a.cg", &o, NULL, &err), 0);
	assert_int_equal(cg_read_mem(p, b, strlen(b), "b.cg", &o, NULL, &err), 0);
	c = cost_at(p, "f", "x.c", 1, 0);
	assert_int_equal(c->v[0], 5);
	assert_int_equal(c->v[1], 16);
	assert_int_equal(c->v[2], 2);
	cg_profile_free(p);
}

/* Files written one after the other (cat a b): the second numbers its
 * names afresh. */
static void test_concatenated_files(void **state)
{
	(void)state;
	warns w;
	const char *text = "version: 1\nevents: Ir\nfl=(1) a.c\nfn=(1) f\n1 1\n"
			   "version: 1\nevents: Ir\nfl=(1) b.c\nfn=(1) g\n2 2\nfn=(1)\n3 3\n";
	cg_profile *p = parse(text, 0, &w, NULL, NULL);
	assert_int_equal(w.n, 0);
	assert_int_equal(cost_at(p, "g", "b.c", 3, 0)->v[0], 3);
	cg_profile_free(p);
}

/* --- positions --- */

static void test_inline_files(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("inline.cg", 0, &w);
	size_t n;
	cg_profile_codes(p, &n);
	assert_int_equal(n, 3); /* main in main.c and util.h, helper */
	assert_int_equal(cost_at(p, "main", "util.h", 3, 0)->v[0], 5);
	assert_int_equal(cost_at(p, "main", "main.c", 11, 0)->v[0], 2);
	const cg_call *c = call_of(p, "main", "helper", 4);
	const cg_code *codes = cg_profile_codes(p, &n);
	const cg_fn *fns = cg_profile_fns(p, &n);
	assert_string_equal(cg_profile_name(p, CG_FILE, codes[c->code].file), "util.h");
	/* without cfi=, the callee is in the current (inlined) file */
	assert_string_equal(cg_profile_name(p, CG_FILE, fns[c->callee].file), "util.h");
	cg_profile_free(p);
	/* fn= starts in the fl= file again */
	p = parse("events: Ir\nfl=a.c\nfn=f\nfi=b.h\n1 1\nfn=g\n2 2\n", 0, NULL, NULL, NULL);
	assert_non_null(cost_at(p, "g", "a.c", 2, 0));
	assert_non_null(cost_at(p, "f", "b.h", 1, 0));
	cg_profile_free(p);
}

/* cob=/cfi= name the next call's target only; cfn= stays. */
static void test_called_position(void **state)
{
	(void)state;
	const char *text = "events: Ir\nob=A\nfl=a.c\nfn=f\ncob=B\ncfi=b.c\ncfn=g\ncalls=1 1\n1 5\n"
			   "cfn=h\ncalls=2 1\n1 6\ncalls=1 1\n2 7\n";
	cg_profile *p = parse(text, 0, NULL, NULL, NULL);
	size_t n;
	const cg_fn *fns = cg_profile_fns(p, &n);
	const cg_call *c = call_of(p, "f", "g", 1);
	assert_string_equal(cg_profile_name(p, CG_OBJECT, fns[c->callee].object), "B");
	assert_string_equal(cg_profile_name(p, CG_FILE, fns[c->callee].file), "b.c");
	c = call_of(p, "f", "h", 1);
	assert_string_equal(cg_profile_name(p, CG_OBJECT, fns[c->callee].object), "A");
	assert_string_equal(cg_profile_name(p, CG_FILE, fns[c->callee].file), "a.c");
	assert_int_equal(c->count, 2);
	assert_int_equal(call_of(p, "f", "h", 2)->v[0], 7);
	/* the order of fn= lines, for callgrind_annotate's [object]; called
	 * functions have none */
	cg_profile_fns(p, &n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(fns[i].last_named, !strcmp(nm(p, CG_FUNCTION, fns[i].name), "f") ? 1 : 0);
	cg_profile_free(p);
}

static void test_jumps(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("jumps.cg", 0, &w);
	assert_int_equal(w.n, 0);
	size_t n, nf;
	const cg_jump *j = cg_profile_jumps(p, &n);
	const cg_fn *fns = cg_profile_fns(p, &nf);
	assert_int_equal(n, 4);
	/* jcnd=2/3 +4 +1 after (0x12, 6): Callgrind's followed/executed */
	assert_int_equal(j[0].addr, 0x12);
	assert_int_equal(j[0].line, 6);
	assert_int_equal(j[0].to_addr, 0x16);
	assert_int_equal(j[0].to_line, 7);
	assert_true(j[0].conditional);
	assert_int_equal(j[0].executed, 3);
	assert_int_equal(j[0].followed, 2);
	assert_string_equal(cg_profile_name(p, CG_FUNCTION, fns[j[0].to_fn].name), "loop");
	/* jump=1 0x10 5 from (0x16, 7) */
	assert_false(j[1].conditional);
	assert_int_equal(j[1].addr, 0x16);
	assert_int_equal(j[1].to_addr, 0x10);
	assert_int_equal(j[1].executed, 1);
	assert_int_equal(j[1].followed, 1);
	/* jfi=/jfn=: into another function and file */
	assert_string_equal(cg_profile_name(p, CG_FUNCTION, fns[j[2].to_fn].name), "other");
	assert_string_equal(cg_profile_name(p, CG_FILE, j[2].to_file), "k.c");
	assert_int_equal(j[2].executed, 4);
	/* jcnd=EXECUTED FOLLOWED (the spec's form), jfi=/jfn= reset */
	assert_int_equal(j[3].executed, 5);
	assert_int_equal(j[3].followed, 2);
	assert_string_equal(cg_profile_name(p, CG_FILE, j[3].to_file), "j.c");
	/* the source lines are positions, not costs */
	assert_int_equal(cost_at(p, "loop", "j.c", 7, 0x16)->v[0], 1);
	cg_profile_free(p);
}

/* --- lexical rules --- */

static void test_crlf_and_comments(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("crlf.cg", 0, &w);
	cg_profile *q = parse("events: Ir\nfl=w.c\nfn=win\n1 5\n2 6\n", 0, NULL, NULL, NULL);
	char *a = dump(p), *b = dump(q);
	assert_string_equal(a, b);
	free(a);
	free(b);
	cg_profile_free(p);
	cg_profile_free(q);
	p = parse_file("comments.cg", 0, &w);
	assert_int_equal(cost_at(p, "c", "c.c", 1, 0)->v[0], 1);
	assert_int_equal(cost_at(p, "c", "c.c", 2, 0)->v[0], 2);
	cg_profile_free(p);
}

/* The older revision: "version:" with spaces, cfl=, "L2 cache". */
static void test_revision_321(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("revision321.cg", 0, &w);
	assert_int_equal(w.n, 0);
	size_t n;
	const cg_part *pt = cg_profile_parts(p, &n);
	assert_int_equal(pt->ndesc, 5);
	assert_string_equal(pt->desc[2].key, "L2 cache");
	assert_string_equal(pt->desc[2].text, "L2 cache: 1048576 B, 64 B, 16-way associative");
	const cg_call *c = call_of(p, "main", "work", 4);
	const cg_fn *fns = cg_profile_fns(p, &n);
	assert_string_equal(cg_profile_name(p, CG_FILE, fns[c->callee].file), "lib.c");
	assert_string_equal(cg_profile_name(p, CG_OBJECT, fns[c->callee].object), "/bin/old");
	cg_profile_free(p);
}

/* --- other producers --- */

static void test_xdebug(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("xdebug.cg", 0, &w);
	assert_int_equal(w.n, 0); /* summary: in the middle of the body is its total */
	size_t n;
	const cg_event *ev = cg_profile_events(p, &n);
	assert_string_equal(ev[1].name, "Memory_(bytes)");
	assert_int_equal(cost_at(p, "php::microtime", "php:internal", 2, 0)->v[0], 11);
	const cg_call *c = call_of(p, "{main}", "format", 2); /* "calls=1 0 0" */
	assert_int_equal(c->count, 1);
	assert_int_equal(c->v[1], 2048);
	assert_int_equal(call_of(p, "{main}", "php::microtime", 5)->count, 2);
	cg_profile_free(p);
	p = parse_file("xdebug2.cg", 0, &w);
	assert_int_equal(w.n, 0);
	assert_int_equal(call_of(p, "{main}", "php::define", 3)->v[1], 112);
	cg_profile_free(p);
}

static void test_pprof(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse_file("pprof.cg", 0, &w);
	assert_int_equal(w.n, 0);
	const cg_call *c = call_of(p, "runtime.main", "main.main", 250);
	assert_non_null(c);
	assert_int_equal(c->count, 0); /* pprof does not count calls */
	assert_int_equal(c->v[0], 70000000);
	assert_int_equal(c->to_addr, 4900120);
	assert_int_equal(cost_at(p, "main.work", "/home/u/app/main.go", 31, 4900340)->v[0], 50000000);
	size_t n;
	const cg_fn *fns = cg_profile_fns(p, &n);
	assert_string_equal(cg_profile_name(p, CG_OBJECT, fns[0].object), "");
	cg_profile_free(p);
}

/* The committed profiles that Valgrind wrote (gen.sh): all read without
 * a warning, so every totals: line matches its cost lines. */
static void test_valgrind_files(void **state)
{
	(void)state;
	const struct {
		const char *name;
		uint32_t slots, positions;
	} files[] = {{"vg-default.cg", 1, 1}, {"vg-nocompress.cg", 1, 1}, {"vg-instr.cg", 1, 2},
		     {"vg-jumps.cg", 1, 2}, {"vg-bb.cg", 1, 3}, {"vg-cache.cg", 13, 1},
		     {"vg-threads.cg-01", 1, 1}, {"vg-threads.cg-02", 1, 1}, {"vg-threads.cg-03", 1, 1},
		     {"vg-dump.cg", 1, 1}, {"vg-dump.cg.1", 1, 1}, {"vg-cachegrind.out", 1, 1}};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		warns w;
		cg_profile *p = parse_file(files[i].name, 0, &w);
		if (w.n)
			fail_msg("%s: %s", files[i].name, w.msg[0]);
		size_t n;
		const cg_part *pt = cg_profile_parts(p, &n);
		assert_int_equal(n, 1);
		assert_int_equal(cg_profile_slots(p), files[i].slots);
		assert_int_equal(pt->npositions, files[i].positions);
		assert_true(pt->flags & (CG_HAS_SUMMARY | CG_HAS_TOTALS));
		cg_profile_costs(p, &n);
		assert_true(n > 50);
		if (!strcmp(files[i].name, "vg-jumps.cg"))
			assert_true(cg_profile_jumps(p, &n) && n > 10);
		if (!strncmp(files[i].name, "vg-threads", 10))
			assert_true(pt->flags & CG_HAS_THREAD);
		if (strcmp(files[i].name, "vg-cachegrind.out"))
			assert_true(cg_profile_calls(p, &n) && n > 5);
		cg_profile_free(p);
	}
}

/* --- truncated input --- */

static void test_truncated(void **state)
{
	(void)state;
	size_t len;
	char *text = test_slurp(CG_DATA, "vg-default.cg", &len);
	/* the input up to a line two thirds in, then half a line */
	size_t keep = (size_t)(strchr(text + len * 2 / 3, '\n') + 1 - text);
	char *bad = malloc(keep + 8);
	memcpy(bad, text, keep);
	memcpy(bad + keep, "fn=(9", 6);
	warns w;
	memset(&w, 0, sizeof w);
	cg_read_opts o = {0, on_warn, &w};
	cg_read_stats st;
	rt_diag err;
	cg_profile *p = cg_profile_new();
	assert_int_equal(cg_read_mem(p, bad, keep + 5, "cut.cg", &o, &st, &err), 0);
	assert_true(st.truncated);
	assert_true(warned(&w, "the input ends inside this line (truncated?); it is left out"));
	size_t n;
	const cg_part *pt = cg_profile_parts(p, &n);
	assert_true(pt->flags & CG_PART_TRUNCATED);
	assert_true(pt->sum[0] > 0 && pt->sum[0] < pt->summary[0]);
	cg_profile_costs(p, &n);
	assert_true(n > 10);
	cg_profile_free(p);
	/* cut at a line's end: no totals:, and less than the summary */
	p = cg_profile_new();
	memset(&w, 0, sizeof w);
	assert_int_equal(cg_read_mem(p, text, keep, "cut.cg", &o, &st, &err), 0);
	assert_false(st.truncated);
	assert_true(warned(&w, "(truncated input?)"));
	cg_profile_free(p);
	/* ends after calls= */
	p = parse("events: Ir\nfn=f\ncfn=g\ncalls=1 2\n", 0, &w, NULL, NULL);
	assert_true(warned(&w, "t.cg:4:1: the input ends before the cost line of this calls= (truncated?)"));
	cg_profile_free(p);
	free(bad);
	free(text);
}

/* --- errors --- */

static void test_errors(void **state)
{
	(void)state;
	const struct {
		const char *text, *msg;
	} cases[] = {
		{"events: Ir\nfl=a\nfn=f\n1 x\n", "t.cg:4:3: expected a cost (a number), found 'x'"},
		{"events: Ir\nfn=f\n1 2x\n", "t.cg:3:4: expected a cost (a number), found 'x'"},
		{"events: Ir\nfn=(3)\n", "t.cg:2:4: undefined compressed name (3) for fn="},
		{"events: Ir\nfn=(3 x\n", "t.cg:2:6: expected ')' after the compressed name's id, found a space"},
		{"events: Ir\nfn=f\n1 2 3\n", "t.cg:3:5: more costs than events (1)"},
		{"events: Ir\nfoo=bar\n", "t.cg:2:1: unknown specification 'foo=' (expected fn=, fl=, calls=, ...)"},
		{"fn=f\n1 2\n", "t.cg:2:1: cost line before the 'events:' line"},
		{"events: Ir\nfn=f\n5 1\n-6 1\n", "t.cg:4:1: relative position -6 goes below 0 (last was 5)"},
		{"events: Ir\nfn=f\n? 1\n", "t.cg:3:1: expected a cost line, a position (fn=, fl=, ...), calls=, jump= or a header line, found '?'"},
		{"events: Ir\nfn=f\n1 99999999999999999999\n", "t.cg:3:3: number too large for 64 bits in a cost"},
		{"events: Ir\nfn=f\n0x10000000000000000 1\n", "t.cg:3:1: number too large for 64 bits in a position"},
		{"version: 2\nevents: Ir\n", "t.cg:1:10: unsupported format version 2 (this reader knows versions 0 and 1)"},
		{"positions: instr foo\nevents: Ir\n", "t.cg:1:18: expected 'instr', 'bb' or 'line', found 'f'"},
		{"positions: line line\n", "t.cg:1:17: position 'line' given twice"},
		{"events: Ir Ir\n", "t.cg:1:12: event 'Ir' listed twice"},
		{"events: Ir\nevents: Dr\n", "t.cg:2:1: a second 'events:' line in the part's header"},
		{"events: Ir Dr\nfn=f\n1 1 1\npart: 2\nsummary: 1 2\nevents: Ir\n",
		 "t.cg:6:1: 'events:' after the part's 'summary:' or 'totals:' line"},
		{"events:\n", "t.cg:1:8: expected event names, found end of line"},
		{"events: Ir\nsummary: 1 2\n", "t.cg:2:12: more values than events (1) in 'summary:'"},
		{"summary: 1\n", "t.cg:1:1: 'summary:' before the 'events:' line"},
		{"events: Ir\npid: abc\n", "t.cg:2:6: expected a process id (a number), found 'a'"},
		{"events: Ir\nfn=f\ncalls=1 2\n1 1\n", "t.cg:3:1: calls= without a cfn= line before it"},
		{"jump=1 2\nevents: Ir\n", "t.cg:1:1: 'jump=' before the 'events:' line"},
		{"jcnd=1/2 2\n", "t.cg:1:1: 'jcnd=' before the 'events:' line"},
		{"events: Ir\nfn=f\ncfn=g\ncalls=1 2\nfn=h\n", "t.cg:5:1: expected the cost line of the calls= on line 4, found another line"},
		{"events: Ir\nfn=f\njump=1 2\ncfn=g\n", "t.cg:4:1: expected the source line of the jump on line 3, found another line"},
		{"events: Ir\nfn=f\n1 1\n  2 2\n", "t.cg:4:1: expected a line that does not start with a space, found a space"},
		{"events: Ir\nfn=bin\x01" "ary\n", "t.cg:2:7: expected text, found byte 0x01 (binary data?)"},
		{"event: = Ir\n", "t.cg:1:8: expected an event name, found '='"},
		{"event: S = Ir +\n", "t.cg:1:16: expected an event name in the formula, found end of line"},
		{"event: S = Ir Dr\n", "t.cg:1:15: expected '+', ':' or the end of the line in the formula, found 'D'"},
		{"fl=a\n", "t.cg: no 'events:' line: not a Callgrind profile"},
		{"", "t.cg: empty input: not a Callgrind profile"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		rt_diag err;
		int rc;
		cg_profile *p = parse(cases[i].text, 0, NULL, &err, &rc);
		char buf[700];
		rt_diag_format(&err, buf, sizeof buf);
		if (rc != -1 || strcmp(buf, cases[i].msg))
			fail_msg("case %zu: rc %d, got \"%s\", want \"%s\"", i, rc, buf, cases[i].msg);
		cg_profile_free(p);
	}
}

/* What was read before an error stays in the model. */
static void test_error_keeps_data(void **state)
{
	(void)state;
	rt_diag err;
	int rc;
	cg_profile *p = parse("events: Ir\nfl=a\nfn=f\n1 5\ncfn=g\ncalls=1 1\n1 7\n2 x\n", 0, NULL, &err, &rc);
	assert_int_equal(rc, -1);
	assert_int_equal(err.line, 8);
	assert_int_equal(cost_at(p, "f", "a", 1, 0)->v[0], 5);
	assert_int_equal(call_of(p, "f", "g", 1)->v[0], 7);
	cg_profile_free(p);
}

static void test_redefined_name_warns(void **state)
{
	(void)state;
	warns w;
	cg_profile *p = parse("events: Ir\nfn=(1) a\n1 1\nfn=(1) b\n2 2\nfn=(1)\n3 3\n", 0, &w, NULL, NULL);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.msg[0], "t.cg:4:1: compressed name (1) for fn= redefined from 'a' to 'b'");
	assert_non_null(cost_at(p, "b", "", 3, 0));
	cg_profile_free(p);
	p = parse("events: Ir\n1 1\n", 0, &w, NULL, NULL);
	assert_true(warned(&w, "t.cg:2:1: cost line before any fn= line"));
	cg_profile_free(p);
}

/* --- streaming --- */

/* A profile bigger than the reader's chunk, read from a file descriptor
 * and from memory: the same model. */
static void test_fd_matches_mem(void **state)
{
	(void)state;
	strbuf t = {0};
	append(&t, "version: 1\npositions: instr line\nevents: Ir Dr\nsummary: 0\n");
	for (int f = 0; f < 9000; f++) {
		append(&t, "fl=(%d) /src/file%d.c\nfn=(%d) function_with_a_long_name_%d\n", f % 97, f % 97, f, f);
		append(&t, "0x%x %d %d %d\n", 0x400000 + f * 64, f % 500 + 1, f, f % 7);
		for (int k = 0; k < 20; k++)
			append(&t, "+%d %s %d\n", k % 5 + 1, k % 3 ? "*" : "+1", k);
		append(&t, "cfn=(%d) callee_%d\ncalls=%d +3 5\n* * %d %d\n", 50000 + f % 11, f % 11, f % 4 + 1, f * 3, f);
	}
	char *text = t.s;
	size_t len = t.len;
	assert_true(len > 2u << 20);
	char path[] = "/tmp/rtrace-cg-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	lseek(fd, 0, SEEK_SET);
	cg_profile *a = cg_profile_new(), *b = cg_profile_new();
	rt_diag err;
	cg_read_stats st;
	assert_int_equal(cg_read_fd(a, fd, "big.cg", NULL, &st, &err), 0);
	assert_int_equal(st.bytes, len);
	assert_int_equal(cg_read_mem(b, text, len, "big.cg", NULL, NULL, &err), 0);
	close(fd);
	unlink(path);
	char *da = dump(a), *db = dump(b);
	assert_string_equal(da, db);
	size_t n;
	cg_profile_costs(a, &n);
	assert_int_equal(n, 9000 * 21); /* every cost line a new instruction */
	free(da);
	free(db);
	free(text);
	cg_profile_free(a);
	cg_profile_free(b);
}

static void test_long_line(void **state)
{
	(void)state;
	size_t n = (size_t)CG_MAX_LINE * 3;
	char *text = malloc(n + 32);
	strcpy(text, "events: Ir\nfn=");
	memset(text + 14, 'a', n);
	text[14 + n] = '\0';
	char path[] = "/tmp/rtrace-cg-XXXXXX";
	int fd = mkstemp(path);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	lseek(fd, 0, SEEK_SET);
	cg_profile *p = cg_profile_new();
	rt_diag err;
	assert_int_equal(cg_read_fd(p, fd, "long.cg", NULL, NULL, &err), -1);
	assert_int_equal(err.line, 2);
	assert_non_null(strstr(err.msg, "line longer than"));
	close(fd);
	unlink(path);
	free(text);
	cg_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_example),
		cmocka_unit_test(test_extended_and_compressed),
		cmocka_unit_test(test_subpositions),
		cmocka_unit_test(test_hex_numbers),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_event_formula_problems),
		cmocka_unit_test(test_totals_check),
		cmocka_unit_test(test_fewer_costs),
		cmocka_unit_test(test_parts),
		cmocka_unit_test(test_several_files),
		cmocka_unit_test(test_concatenated_files),
		cmocka_unit_test(test_inline_files),
		cmocka_unit_test(test_called_position),
		cmocka_unit_test(test_jumps),
		cmocka_unit_test(test_crlf_and_comments),
		cmocka_unit_test(test_revision_321),
		cmocka_unit_test(test_xdebug),
		cmocka_unit_test(test_pprof),
		cmocka_unit_test(test_valgrind_files),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_error_keeps_data),
		cmocka_unit_test(test_redefined_name_warns),
		cmocka_unit_test(test_fd_matches_mem),
		cmocka_unit_test(test_long_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
