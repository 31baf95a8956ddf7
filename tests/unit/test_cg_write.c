/* The Callgrind writer and allocation profiles of traces: every profile
 * of tests/data/callgrind written (compressed and not, parts kept or
 * merged) reads back to the same costs, calls and jumps by name; the
 * exact bytes written for a small hand-written profile (name and
 * subposition compression, fi=/fe=, cob=/cfi=/cfn=/calls=, jump=/jcnd=,
 * summary:/totals:); and cg_profile_from_trace: event totals, self cost at
 * the allocation site, calls= along the stack (recursion counted once),
 * allocations without a backtrace, unfreed and leaked blocks, inline
 * chains, the written profile's summary/totals, and instr positions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_util.h"

#include "rtrace/callgrind.h"
#include "rtrace/heapcheck.h"
#include "rtrace/text.h"
#include "rtrace/trace.h"
#include "text/text_frame.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CG_DATA
#error "CG_DATA must name tests/data/callgrind"
#endif

/* --- helpers --- */

typedef struct warns {
	int n;
	char msg[8][640];
} warns;

static void on_warn(void *ctx, const rt_diag *d)
{
	warns *w = ctx;
	if (w->n < 8)
		rt_diag_format(d, w->msg[w->n], sizeof w->msg[0]);
	w->n++;
}

/* Reads buf into a new profile; *rc gets the reader's result. */
static cg_profile *read_buf(const char *buf, size_t len, const char *name, unsigned flags, warns *w, int *rc)
{
	static warns sink;
	rt_diag err;
	cg_profile *p = cg_profile_new();
	if (!w)
		w = &sink;
	memset(w, 0, sizeof *w);
	cg_read_opts o = {flags, on_warn, w};
	*rc = cg_read_mem(p, buf, len, name, &o, NULL, &err);
	if (*rc)
		rt_diag_format(&err, w->msg[w->n < 8 ? w->n : 7], sizeof w->msg[0]);
	return p;
}

static cg_profile *read_ok(const char *text, unsigned flags)
{
	int rc;
	warns w;
	cg_profile *p = read_buf(text, strlen(text), "t.cg", flags, &w, &rc);
	if (rc)
		fail_msg("%s", w.msg[w.n < 8 ? w.n : 7]);
	return p;
}

static const char *nm(const cg_profile *p, enum cg_kind k, uint32_t id)
{
	const char *s = cg_profile_name(p, k, id);
	return s ? s : "";
}

/* --- totals by name --- */

typedef struct entry {
	char *key;
	uint64_t v;
} entry;

typedef struct tally {
	entry *e;
	size_t n, cap;
} tally;

static void tally_add(tally *t, uint64_t v, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (t->n == t->cap)
		t->e = realloc(t->e, (t->cap = t->cap ? t->cap * 2 : 256) * sizeof *t->e);
	t->e[t->n++] = (entry){strdup(buf), v};
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const entry *)a)->key, ((const entry *)b)->key);
}

/* Sorts by key, sums equal keys, drops zero sums (an absent key is 0). */
static void tally_finish(tally *t)
{
	if (t->n)
		qsort(t->e, t->n, sizeof *t->e, entry_cmp);
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (k && !strcmp(t->e[k - 1].key, t->e[i].key)) {
			t->e[k - 1].v += t->e[i].v;
			free(t->e[i].key);
		} else {
			t->e[k++] = t->e[i];
		}
	}
	t->n = 0;
	for (size_t i = 0; i < k; i++) {
		if (t->e[i].v)
			t->e[t->n++] = t->e[i];
		else
			free(t->e[i].key);
	}
}

static void tally_free(tally *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].key);
	free(t->e);
}

static void fn_key(const cg_profile *p, uint32_t fn, char *buf, size_t n)
{
	size_t nf;
	const cg_fn *f = &cg_profile_fns(p, &nf)[fn];
	snprintf(buf, n, "%s|%s|%s", nm(p, CG_OBJECT, f->object), nm(p, CG_FILE, f->file),
		 nm(p, CG_FUNCTION, f->name));
}

static void tally_costs(const cg_profile *p, tally *t)
{
	size_t n, ne, nc;
	const cg_event *ev = cg_profile_events(p, &ne);
	const cg_code *codes = cg_profile_codes(p, &nc);
	const cg_cost *c = cg_profile_costs(p, &n);
	char f[2048];
	for (size_t i = 0; i < n; i++) {
		fn_key(p, codes[c[i].code].fn, f, sizeof f);
		for (size_t e = 0; e < ne; e++)
			if (ev[e].slot != CG_NONE)
				tally_add(t, c[i].v[ev[e].slot], "cost %s|%s|%s", f,
					  nm(p, CG_FILE, codes[c[i].code].file), ev[e].name);
	}
}

static void tally_calls(const cg_profile *p, tally *t)
{
	size_t n, ne, nc;
	const cg_event *ev = cg_profile_events(p, &ne);
	const cg_code *codes = cg_profile_codes(p, &nc);
	const cg_call *c = cg_profile_calls(p, &n);
	char from[2048], to[2048];
	for (size_t i = 0; i < n; i++) {
		fn_key(p, codes[c[i].code].fn, from, sizeof from);
		fn_key(p, c[i].callee, to, sizeof to);
		tally_add(t, c[i].count, "count %s -> %s", from, to);
		for (size_t e = 0; e < ne; e++)
			if (ev[e].slot != CG_NONE)
				tally_add(t, c[i].v[ev[e].slot], "call %s -> %s|%s", from, to, ev[e].name);
	}
}

static void tally_jumps(const cg_profile *p, tally *t)
{
	size_t n, nc;
	const cg_code *codes = cg_profile_codes(p, &nc);
	const cg_jump *j = cg_profile_jumps(p, &n);
	char from[2048], to[2048];
	for (size_t i = 0; i < n; i++) {
		fn_key(p, codes[j[i].code].fn, from, sizeof from);
		fn_key(p, j[i].to_fn, to, sizeof to);
		tally_add(t, j[i].executed, "executed %s -> %s", from, to);
		tally_add(t, j[i].followed, "followed %s -> %s", from, to);
	}
}

static tally tally_of(const cg_profile *p)
{
	tally t = {0};
	tally_costs(p, &t);
	tally_calls(p, &t);
	tally_jumps(p, &t);
	tally_finish(&t);
	return t;
}

/* The first difference between the two, or NULL; in buf. */
static const char *tally_diff(const tally *a, const tally *b, char *buf, size_t n)
{
	for (size_t i = 0; i < a->n || i < b->n; i++) {
		if (i >= a->n || i >= b->n || strcmp(a->e[i].key, b->e[i].key) || a->e[i].v != b->e[i].v) {
			snprintf(buf, n, "#%zu: %s = %" PRIu64 " / %s = %" PRIu64, i, i < a->n ? a->e[i].key : "-",
				 i < a->n ? a->e[i].v : 0, i < b->n ? b->e[i].key : "-", i < b->n ? b->e[i].v : 0);
			return buf;
		}
	}
	return NULL;
}

/* --- 1. round trips of the data files --- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The data files (all but gen.sh), sorted; NULL-terminated. */
static char **data_files(void)
{
	DIR *d = opendir(CG_DATA);
	assert_non_null(d);
	char **v = calloc(256, sizeof *v);
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d)) && n < 255;)
		if (e->d_name[0] != '.' && strcmp(e->d_name, "gen.sh"))
			v[n++] = strdup(e->d_name);
	closedir(d);
	qsort(v, n, sizeof *v, name_cmp);
	assert_true(n >= 20);
	return v;
}

/* Writes p (read with `flags`) with o and reads it back: no error, no
 * warning (totals: add up), and the same totals by name. Returns the
 * read-back profile. */
static cg_profile *round_trip(const char *file, const cg_profile *p, const cg_write_opts *o, unsigned flags)
{
	size_t len;
	char *out = cg_write_mem(p, o, &len);
	assert_non_null(out);
	assert_int_equal(strlen(out), len);
	int rc;
	warns w;
	cg_profile *q = read_buf(out, len, "written.cg", 0, &w, &rc);
	if (rc || w.n)
		fail_msg("%s (compress %d/%d, flags %u): read back: rc %d, %d warnings: %s", file,
			 !o->no_compress_names, !o->no_compress_pos, flags, rc, w.n, w.msg[0]);
	tally a = tally_of(p), b = tally_of(q);
	char diff[9000];
	if (tally_diff(&a, &b, diff, sizeof diff))
		fail_msg("%s (compress %d/%d, flags %u): %s", file, !o->no_compress_names, !o->no_compress_pos,
			 flags, diff);
	tally_free(&a);
	tally_free(&b);
	free(out);
	return q;
}

static void round_trip_file(const char *file, unsigned flags)
{
	static const cg_write_opts modes[2] = {{false, false, false}, {true, true, false}};
	size_t len;
	char *text = test_slurp(CG_DATA, file, &len);
	int rc;
	cg_profile *p = read_buf(text, len, file, flags, NULL, &rc);
	for (int m = 0; m < 2; m++) {
		cg_profile *q = round_trip(file, p, &modes[m], flags);
		size_t np, nq;
		cg_profile_parts(p, &np);
		cg_profile_parts(q, &nq);
		if (flags & CG_READ_MERGE_PARTS)
			assert_true(nq <= 1);
		else
			assert_true(nq <= np);
		cg_profile_free(q);
	}
	cg_profile_free(p);
	free(text);
}

static void test_round_trip_data(void **state)
{
	(void)state;
	char **files = data_files();
	for (size_t i = 0; files[i]; i++) {
		round_trip_file(files[i], 0);
		round_trip_file(files[i], CG_READ_MERGE_PARTS | CG_READ_LINES);
		free(files[i]);
	}
	free(files);
}

/* The round trip really compares: a changed cost is a difference. */
static void test_tally_detects_change(void **state)
{
	(void)state;
	cg_profile *p = read_ok("events: Ir\nfn=a\n1 5\n", 0);
	cg_profile *q = read_ok("events: Ir\nfn=a\n1 6\n", 0);
	cg_profile *r = read_ok("events: Ir\nfn=b\n1 5\n", 0);
	tally a = tally_of(p), b = tally_of(q), c = tally_of(r);
	char diff[9000];
	assert_non_null(tally_diff(&a, &b, diff, sizeof diff));
	assert_non_null(tally_diff(&a, &c, diff, sizeof diff));
	assert_null(tally_diff(&a, &a, diff, sizeof diff));
	tally_free(&a);
	tally_free(&b);
	tally_free(&c);
	cg_profile_free(p);
	cg_profile_free(q);
	cg_profile_free(r);
}

/* A file whose reading fails half way: what was read is written and
 * reads back. */
static void test_round_trip_after_error(void **state)
{
	(void)state;
	const char *text = "events: Ir Dr\nfl=a.c\nfn=main\n3 4 1\ncfn=f\ncalls=2 9\n4 7 2\nfn=f\n9 7 2\n"
			   "bogus line here\n";
	int rc;
	cg_profile *p = read_buf(text, strlen(text), "bad.cg", 0, NULL, &rc);
	assert_int_not_equal(rc, 0);
	static const cg_write_opts o = {0};
	cg_profile *q = round_trip("bad.cg", p, &o, 0);
	size_t n;
	cg_profile_costs(q, &n);
	assert_int_equal(n, 2);
	cg_profile_free(q);
	cg_profile_free(p);
}

/* --- 2. exact output --- */

static const char hand_profile[] =
	"# callgrind format\n"
	"version: 1\n"
	"creator: hand 1.0\n"
	"pid: 42\n"
	"cmd: ./prog -x\n"
	"part: 1\n"
	"desc: Trigger: end\n"
	"\n"
	"positions: instr line\n"
	"events: Ir Dr\n"
	"summary: 51 12\n"
	"\n"
	"ob=/bin/prog\n"
	"fl=prog.c\n"
	"fn=main\n"
	"0x1000 10 5 1\n"
	"0x1004 12 3\n"
	"cob=/lib/libc.so\n"
	"cfi=alloc.c\n"
	"cfn=malloc\n"
	"calls=2 0x9000 1\n"
	"0x1008 12 20 4\n"
	"0x1002 11 2 1\n"
	"fi=inline.h\n"
	"0x1010 50 7 2\n"
	"fe=prog.c\n"
	"0x1020 13 1 1\n"
	"jump=3 0x1000 10\n"
	"0x1024 14\n"
	"jcnd=1/4 0x1030 15\n"
	"0x1028 14\n"
	"fn=helper\n"
	"0x1100 30 9 3\n"
	"jfn=main\n"
	"jump=1 0x1000 10\n"
	"0x1104 31\n"
	"fl=other.c\n"
	"fn=other\n"
	"0x2000 5 4\n"
	"cfi=prog.c\n"
	"cfn=helper\n"
	"calls=1 0x1100 30\n"
	"0x2002 6 12 3\n"
	"jfi=prog.c\n"
	"jfn=helper\n"
	"jump=2 0x1100 30\n"
	"0x2004 7\n"
	"ob=/lib/libc.so\n"
	"fl=alloc.c\n"
	"fn=malloc\n"
	"0x9000 1 20 4\n"
	"\n"
	"totals: 51 12\n";

#define HAND_HEADER                 \
	"# callgrind format\n"      \
	"version: 1\n"              \
	"creator: hand 1.0\n"       \
	"pid: 42\n"                 \
	"cmd: ./prog -x\n"          \
	"part: 1\n"                 \
	"desc: Trigger: end\n"      \
	"\n"                        \
	"positions: instr line\n"   \
	"events: Ir Dr\n"           \
	"summary: 51 12\n"          \
	"\n"

/* Name ids are the model's plus one; "" is id 0 of every kind (the
 * reader interns it first), so names start at (2). Positions are
 * relative to the last cost line, absolute after fn=/fi=/fe=/fl=.
 * other's call to helper names /bin/prog in a cob= although it is ob=:
 * the last cob= named libc, which a reader that keeps it would read. */
static const char hand_compressed[] = HAND_HEADER
	"ob=(2) /bin/prog\n"
	"fl=(2) prog.c\n"
	"fn=(2) main\n"
	"0x1000 10 5 1\n"
	"+2 +1 2 1\n"
	"+2 +1 3\n"
	"cob=(3) /lib/libc.so\n"
	"cfi=(3) alloc.c\n"
	"cfn=(3) malloc\n"
	"calls=2 +32764 -11\n"
	"+4 * 20 4\n"
	"+24 +1 1 1\n"
	"jump=3 -32 -3\n"
	"+4 +1\n"
	"jcnd=1/4 +12 +1\n"
	"+4 *\n"
	"fi=(4) inline.h\n"
	"0x1010 50 7 2\n"
	"fe=(2)\n"
	"fn=(4) helper\n"
	"0x1100 30 9 3\n"
	"jfn=(2)\n"
	"jump=1 -256 -20\n"
	"+4 +1\n"
	"fl=(5) other.c\n"
	"fn=(5) other\n"
	"0x2000 5 4\n"
	"cob=(2)\n"
	"cfi=(2)\n"
	"cfn=(4)\n"
	"calls=1 -3840 +25\n"
	"+2 +1 12 3\n"
	"jfi=(2)\n"
	"jfn=(4)\n"
	"jump=2 -3842 +24\n"
	"+2 +1\n"
	"ob=(3)\n"
	"fl=(3)\n"
	"fn=(3)\n"
	"0x9000 1 20 4\n"
	"\n"
	"totals: 51 12\n";

static const char hand_plain[] = HAND_HEADER
	"ob=/bin/prog\n"
	"fl=prog.c\n"
	"fn=main\n"
	"0x1000 10 5 1\n"
	"0x1002 11 2 1\n"
	"0x1004 12 3\n"
	"cob=/lib/libc.so\n"
	"cfi=alloc.c\n"
	"cfn=malloc\n"
	"calls=2 0x9000 1\n"
	"0x1008 12 20 4\n"
	"0x1020 13 1 1\n"
	"jump=3 0x1000 10\n"
	"0x1024 14\n"
	"jcnd=1/4 0x1030 15\n"
	"0x1028 14\n"
	"fi=inline.h\n"
	"0x1010 50 7 2\n"
	"fe=prog.c\n"
	"fn=helper\n"
	"0x1100 30 9 3\n"
	"jfn=main\n"
	"jump=1 0x1000 10\n"
	"0x1104 31\n"
	"fl=other.c\n"
	"fn=other\n"
	"0x2000 5 4\n"
	"cob=/bin/prog\n"
	"cfi=prog.c\n"
	"cfn=helper\n"
	"calls=1 0x1100 30\n"
	"0x2002 6 12 3\n"
	"jfi=prog.c\n"
	"jfn=helper\n"
	"jump=2 0x1100 30\n"
	"0x2004 7\n"
	"ob=/lib/libc.so\n"
	"fl=alloc.c\n"
	"fn=malloc\n"
	"0x9000 1 20 4\n"
	"\n"
	"totals: 51 12\n";

static void expect_output(const cg_profile *p, const cg_write_opts *o, const char *want)
{
	size_t len;
	char *got = cg_write_mem(p, o, &len);
	assert_non_null(got);
	assert_int_equal(len, strlen(got));
	assert_string_equal(got, want);
	free(got);
}

static void test_exact_compressed(void **state)
{
	(void)state;
	cg_profile *p = read_ok(hand_profile, 0);
	expect_output(p, NULL, hand_compressed);
	static const cg_write_opts o = {0};
	expect_output(p, &o, hand_compressed);
	cg_profile_free(p);
}

static void test_exact_uncompressed(void **state)
{
	(void)state;
	cg_profile *p = read_ok(hand_profile, 0);
	static const cg_write_opts o = {true, true, false};
	expect_output(p, &o, hand_plain);
	assert_null(strchr(hand_plain, '('));
	cg_profile_free(p);
}

/* Both outputs read back to the hand-written profile. */
static void test_exact_reads_back(void **state)
{
	(void)state;
	cg_profile *p = read_ok(hand_profile, 0);
	const char *outs[2] = {hand_compressed, hand_plain};
	tally a = tally_of(p);
	for (int i = 0; i < 2; i++) {
		cg_profile *q = read_ok(outs[i], 0);
		tally b = tally_of(q);
		char diff[9000];
		assert_null(tally_diff(&a, &b, diff, sizeof diff));
		tally_free(&b);
		cg_profile_free(q);
	}
	tally_free(&a);
	cg_profile_free(p);
}

/* --- 3. allocation profiles of traces --- */

#define TRACE_HDR "version=2.0, arch=x86_64, process=/bin/app, pid=7, \n"

static rt_trace *trace_of(const char *text)
{
	rt_trace *t = rt_trace_new();
	rt_diag err;
	if (rt_text_read_mem(t, text, strlen(text), "t.txt", NULL, NULL, &err)) {
		char buf[700];
		rt_diag_format(&err, buf, sizeof buf);
		fail_msg("%s", buf);
	}
	return t;
}

static uint32_t slot_of(const cg_profile *p, const char *event)
{
	uint32_t e = cg_profile_find_event(p, event);
	if (e == CG_NONE)
		fail_msg("no event %s", event);
	size_t n;
	uint32_t s = cg_profile_events(p, &n)[e].slot;
	assert_int_not_equal(s, CG_NONE);
	return s;
}

static const char *fn_name(const cg_profile *p, uint32_t fn)
{
	size_t n;
	return nm(p, CG_FUNCTION, cg_profile_fns(p, &n)[fn].name);
}

static const char *code_fn(const cg_profile *p, uint32_t code)
{
	size_t n;
	return fn_name(p, cg_profile_codes(p, &n)[code].fn);
}

/* Self cost of event in function fn (any line when line is UINT64_MAX). */
static uint64_t self_cost(const cg_profile *p, const char *fn, uint64_t line, const char *event)
{
	uint32_t s = slot_of(p, event);
	size_t n;
	const cg_cost *c = cg_profile_costs(p, &n);
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(code_fn(p, c[i].code), fn) && (line == UINT64_MAX || c[i].line == line))
			sum += c[i].v[s];
	return sum;
}

static uint64_t total(const cg_profile *p, const char *event)
{
	uint32_t s = slot_of(p, event);
	size_t n;
	const cg_cost *c = cg_profile_costs(p, &n);
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += c[i].v[s];
	return sum;
}

/* The call from caller at line to callee; fails when there is not
 * exactly one. */
static const cg_call *call_at(const cg_profile *p, const char *caller, uint64_t line, const char *callee)
{
	size_t n;
	const cg_call *c = cg_profile_calls(p, &n), *found = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(code_fn(p, c[i].code), caller) || strcmp(fn_name(p, c[i].callee), callee) ||
		    c[i].line != line)
			continue;
		if (found)
			fail_msg("two calls %s:%" PRIu64 " -> %s", caller, line, callee);
		found = &c[i];
	}
	if (!found)
		fail_msg("no call %s:%" PRIu64 " -> %s", caller, line, callee);
	return found;
}

static size_t call_count(const cg_profile *p)
{
	size_t n;
	cg_profile_calls(p, &n);
	return n;
}

/* The object of the (only) function named fn. */
static const char *object_of(const cg_profile *p, const char *fn)
{
	size_t n;
	const cg_fn *f = cg_profile_fns(p, &n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(nm(p, CG_FUNCTION, f[i].name), fn))
			return nm(p, CG_OBJECT, f[i].object);
	fail_msg("no function %s", fn);
	return NULL;
}

/* Three mallocs from two stacks, one freed:
 *   f@10 <- main@5: 16 and 32 bytes (0x1000 freed), g@30 <- main@6: 8. */
static const char two_stacks[] = TRACE_HDR
	": /bin/app => 0x400000-0x500000\n"
	"1. malloc(16) = 0x1000\n"
	"\t0x400110 f() at /src/a.c:10\n"
	"\t0x400205 main() at /src/a.c:5\n"
	"\n"
	"2. malloc(32) = 0x2000\n"
	"\t0x400110 f() at /src/a.c:10\n"
	"\t0x400205 main() at /src/a.c:5\n"
	"\n"
	"3. malloc(8) = 0x3000\n"
	"\t0x400330 g() at /src/b.c:30\n"
	"\t0x400206 main() at /src/a.c:6\n"
	"\n"
	"4. free(0x1000)\n"
	"\n";

static void test_trace_totals(void **state)
{
	(void)state;
	rt_trace *t = trace_of(two_stacks);
	cg_profile *p = cg_profile_from_trace(t, NULL);
	assert_int_equal(total(p, "Allocs"), 3);
	assert_int_equal(total(p, "Bytes"), 56);
	assert_int_equal(total(p, "Unfreed"), 2);
	assert_int_equal(total(p, "UnfreedBytes"), 40);
	assert_int_equal(cg_profile_find_event(p, "Leaks"), CG_NONE);
	size_t np;
	const cg_part *pt = cg_profile_parts(p, &np);
	assert_int_equal(np, 1);
	assert_string_equal(pt->cmd, "/bin/app");
	assert_int_equal(pt->pid, 7);
	cg_profile_free(p);
	rt_trace_free(t);
}

static void test_trace_self_cost(void **state)
{
	(void)state;
	rt_trace *t = trace_of(two_stacks);
	cg_profile *p = cg_profile_from_trace(t, NULL);
	assert_int_equal(self_cost(p, "f", 10, "Allocs"), 2);
	assert_int_equal(self_cost(p, "f", 10, "Bytes"), 48);
	assert_int_equal(self_cost(p, "g", 30, "Bytes"), 8);
	assert_int_equal(self_cost(p, "main", UINT64_MAX, "Allocs"), 0);
	assert_int_equal(self_cost(p, "f", 10, "UnfreedBytes"), 32);
	assert_string_equal(object_of(p, "f"), "/bin/app");
	size_t n, nf;
	const cg_cost *c = cg_profile_costs(p, &n);
	const cg_code *codes = cg_profile_codes(p, &nf);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(c[i].addr, 0); /* no instr option */
		if (!strcmp(code_fn(p, c[i].code), "g"))
			assert_string_equal(nm(p, CG_FILE, codes[c[i].code].file), "/src/b.c");
	}
	cg_profile_free(p);
	rt_trace_free(t);
}

static void test_trace_calls(void **state)
{
	(void)state;
	rt_trace *t = trace_of(two_stacks);
	cg_profile *p = cg_profile_from_trace(t, NULL);
	assert_int_equal(call_count(p), 2);
	const cg_call *c = call_at(p, "main", 5, "f");
	assert_int_equal(c->count, 2);
	assert_int_equal(c->to_line, 10);
	assert_int_equal(c->v[slot_of(p, "Allocs")], 2);
	assert_int_equal(c->v[slot_of(p, "Bytes")], 48);
	assert_int_equal(c->v[slot_of(p, "Unfreed")], 1);
	c = call_at(p, "main", 6, "g");
	assert_int_equal(c->count, 1);
	assert_int_equal(c->v[slot_of(p, "Bytes")], 8);
	cg_profile_free(p);
	rt_trace_free(t);
}

static void test_trace_recursion(void **state)
{
	(void)state;
	rt_trace *t = trace_of(TRACE_HDR
			       "1. malloc(100) = 0x1000\n"
			       "\t0x400110 f() at /src/a.c:10\n"
			       "\t0x400120 f() at /src/a.c:20\n"
			       "\t0x400120 f() at /src/a.c:20\n"
			       "\t0x400205 main() at /src/a.c:5\n"
			       "\n"
			       "2. malloc(1) = 0x2000\n"
			       "\t0x400110 f() at /src/a.c:10\n"
			       "\t0x400120 f() at /src/a.c:20\n"
			       "\t0x400120 f() at /src/a.c:20\n"
			       "\t0x400205 main() at /src/a.c:5\n"
			       "\n");
	cg_profile *p = cg_profile_from_trace(t, NULL);
	assert_int_equal(call_count(p), 2);
	const cg_call *c = call_at(p, "f", 20, "f");
	assert_int_equal(c->count, 2);
	assert_int_equal(c->v[slot_of(p, "Allocs")], 2);
	assert_int_equal(c->v[slot_of(p, "Bytes")], 101);
	c = call_at(p, "main", 5, "f");
	assert_int_equal(c->count, 2);
	assert_int_equal(c->v[slot_of(p, "Bytes")], 101);
	assert_int_equal(self_cost(p, "f", 10, "Bytes"), 101);
	assert_int_equal(self_cost(p, "f", 20, "Bytes"), 0);
	cg_profile_free(p);
	rt_trace_free(t);
}

static void test_trace_no_backtrace(void **state)
{
	(void)state;
	rt_trace *t = trace_of(TRACE_HDR "1. malloc(24) = 0x1000\n\n"
					 "2. malloc(8) = 0x2000\n\t0x400110 f() at /src/a.c:10\n\n");
	cg_profile *p = cg_profile_from_trace(t, NULL);
	assert_int_equal(self_cost(p, "(no backtrace)", UINT64_MAX, "Bytes"), 24);
	assert_int_equal(self_cost(p, "(no backtrace)", UINT64_MAX, "Allocs"), 1);
	assert_int_equal(self_cost(p, "f", 10, "Bytes"), 8);
	assert_int_equal(total(p, "Bytes"), 32);
	assert_int_equal(call_count(p), 0);
	cg_profile_free(p);
	rt_trace_free(t);
}

/* The three allocations of two_stacks: 0x1000 (16) freed, 0x2000 (32),
 * 0x3000 (8); verdicts: 0x2000 definite, 0x3000 indirect, and a possibly
 * lost block (not traced) that must not count. */
static void add_verdicts(rt_trace *t)
{
	const rt_call *c = rt_trace_calls_const(t);
	rt_leak_summary s = {0};
	s.mode = RT_LEAK_CHECK_FULL;
	rt_trace_set_leak_summary(t, &s);
	rt_leak l = {2, 0x2000, 32, 0, 0, c[1].fn, c[1].bt, RT_LEAK_DEFINITE, 0};
	rt_trace_add_leak(t, &l);
	l = (rt_leak){3, 0x3000, 8, 0, 0, c[2].fn, c[2].bt, RT_LEAK_INDIRECT, 0};
	rt_trace_add_leak(t, &l);
	l = (rt_leak){1, 0x1000, 1000, 0, 0, c[0].fn, c[0].bt, RT_LEAK_POSSIBLE, 0};
	rt_trace_add_leak(t, &l);
	/* a stack no traced call has (Valgrind XML): 3 blocks, 300 bytes */
	rt_frame fr[2] = {{0x400440, rt_trace_intern(t, "h() at /src/c.c:44", 18)},
			  {0x400207, rt_trace_intern(t, "main() at /src/a.c:7", 20)}};
	rt_text_frame_details(t, &fr[0]); /* what the text reader records */
	rt_text_frame_details(t, &fr[1]);
	l = (rt_leak){0, 0x5000, 300, 0, 3, c[0].fn, rt_trace_intern_bt(t, fr, 2), RT_LEAK_DEFINITE, 0};
	rt_trace_add_leak(t, &l);
}

static void test_trace_leak_verdicts(void **state)
{
	(void)state;
	rt_trace *t = trace_of(two_stacks);
	add_verdicts(t);
	cg_profile *p = cg_profile_from_trace(t, NULL);
	assert_int_equal(cg_profile_find_event(p, "Unfreed"), CG_NONE);
	assert_int_equal(cg_profile_find_event(p, "UnfreedBytes"), CG_NONE);
	assert_int_equal(total(p, "Leaks"), 5);
	assert_int_equal(total(p, "LeakedBytes"), 340);
	assert_int_equal(total(p, "Allocs"), 3);
	assert_int_equal(self_cost(p, "h", 44, "Leaks"), 3);
	assert_int_equal(self_cost(p, "h", 44, "Allocs"), 0);
	const cg_call *c = call_at(p, "main", 7, "h");
	assert_int_equal(c->count, 3); /* known by its leaks only */
	assert_int_equal(c->v[slot_of(p, "LeakedBytes")], 300);
	assert_int_equal(self_cost(p, "f", 10, "LeakedBytes"), 32);
	assert_int_equal(self_cost(p, "g", 30, "Leaks"), 1);
	assert_int_equal(call_at(p, "main", 5, "f")->v[slot_of(p, "LeakedBytes")], 32);
	cg_profile_free(p);
	rt_trace_free(t);
}

/* Other resource types: events prefixed by the type, sizes only when
 * some size is not 1. */
static void test_trace_typed(void **state)
{
	(void)state;
	rt_trace *t = trace_of(TRACE_HDR "<1> : memory (memory allocation in bytes)\n"
					 "<2> : fd (file descriptor)\n"
					 "1. malloc<memory>(16) = 0x1000\n\t0x400110 f() at /src/a.c:10\n\t0x400205 main() at /src/a.c:5\n\n"
					 "2. open<fd>(1) = 0x3\n\t0x400120 g() from /lib/x.so\n\t0x400205 main() at /src/a.c:5\n\n"
					 "3. open<fd>(1) = 0x4\n\t0x400130 from /lib/y.so\n\t0x400205 main() at /src/a.c:5\n\n"
					 "4. close<fd>(0x3)\n\n");
	cg_profile *p = cg_profile_from_trace(t, NULL);
	assert_int_equal(total(p, "Allocs"), 1);
	assert_int_equal(total(p, "Bytes"), 16);
	assert_int_equal(total(p, "FdAllocs"), 2);
	assert_int_equal(total(p, "FdUnfreed"), 1);
	assert_int_equal(cg_profile_find_event(p, "FdSize"), CG_NONE);
	assert_int_equal(cg_profile_find_event(p, "FdUnfreedSize"), CG_NONE);
	assert_int_equal(self_cost(p, "g", UINT64_MAX, "FdAllocs"), 1);
	assert_string_equal(object_of(p, "g"), "/lib/x.so");
	assert_int_equal(self_cost(p, "0x0000000000400130", UINT64_MAX, "FdUnfreed"), 1);
	assert_string_equal(object_of(p, "0x0000000000400130"), "/lib/y.so");
	const cg_call *c = call_at(p, "main", 5, "f");
	assert_int_equal(c->v[slot_of(p, "FdAllocs")], 0);
	assert_int_equal(c->v[slot_of(p, "Bytes")], 16);
	cg_profile_free(p);
	rt_trace_free(t);
}

/* A summary-only leak check is no verdict: unfreed blocks count. */
static void test_trace_summary_only_verdicts(void **state)
{
	(void)state;
	rt_trace *t = trace_of(two_stacks);
	rt_leak_summary s = {0};
	s.mode = RT_LEAK_CHECK_SUMMARY;
	rt_trace_set_leak_summary(t, &s);
	cg_profile *p = cg_profile_from_trace(t, NULL);
	assert_int_equal(total(p, "Unfreed"), 2);
	assert_int_equal(cg_profile_find_event(p, "Leaks"), CG_NONE);
	cg_profile_free(p);
	rt_trace_free(t);
}

/* One call of 10 bytes at frame 0x401000 (outer inlining inner at
 * a.c:42, inner's code at inl.h:7), called from main at a.c:5. */
static rt_trace *inline_trace(void)
{
	rt_trace *t = rt_trace_new();
	rt_trace_set_header(t, "version", "2.0");
	rt_trace_add_mmap(t, "/bin/app", 0x400000, 0x500000);
	const char *main_text = "main() at /src/a.c:5";
	rt_frame fr[2] = {{0x401000, RT_NONE}, {0x400205, rt_trace_intern(t, main_text, strlen(main_text))}};
	rt_srcloc locs[2] = {{rt_trace_intern(t, "inner", 5), rt_trace_intern(t, "/src/inl.h", 10), 7, 0},
			     {rt_trace_intern(t, "outer", 5), rt_trace_intern(t, "/src/a.c", 8), 42, 0}};
	rt_trace_set_frame_info(t, &fr[0], rt_trace_intern(t, "/bin/app", 8), locs, 2);
	rt_text_frame_details(t, &fr[1]); /* what the text reader records */
	rt_call c = {0};
	c.index = 1;
	c.res_id = 0x1000;
	c.size = 10;
	c.fn = rt_trace_intern(t, "malloc", 6);
	c.bt = rt_trace_intern_bt(t, fr, 2);
	c.args = RT_NONE;
	c.kind = RT_CALL_ALLOC;
	rt_trace_append_call(t, &c);
	return t;
}

static void test_trace_inline_chain(void **state)
{
	(void)state;
	rt_trace *t = inline_trace();
	cg_profile *p = cg_profile_from_trace(t, NULL);
	assert_int_equal(self_cost(p, "inner", 7, "Bytes"), 10);
	assert_int_equal(self_cost(p, "outer", UINT64_MAX, "Bytes"), 0);
	assert_int_equal(call_count(p), 2);
	const cg_call *c = call_at(p, "outer", 42, "inner");
	assert_int_equal(c->count, 1);
	assert_int_equal(c->to_line, 7);
	assert_int_equal(c->v[slot_of(p, "Bytes")], 10);
	c = call_at(p, "main", 5, "outer");
	assert_int_equal(c->v[slot_of(p, "Allocs")], 1);
	assert_string_equal(object_of(p, "inner"), "/bin/app");
	assert_string_equal(object_of(p, "main"), "/bin/app");
	cg_profile_free(p);
	rt_trace_free(t);
}

/* The first line of text starting with key, without its end of line. */
static char *line_of(const char *text, const char *key)
{
	for (const char *s = text; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
		if (!strncmp(s, key, strlen(key))) {
			const char *e = strchr(s, '\n');
			return strndup(s, e ? (size_t)(e - s) : strlen(s));
		}
	}
	fail_msg("no %s line", key);
	return NULL;
}

static void test_trace_written(void **state)
{
	(void)state;
	rt_trace *t = trace_of(two_stacks);
	cg_profile *p = cg_profile_from_trace(t, NULL);
	size_t len;
	char *out = cg_write_mem(p, NULL, &len);
	cg_profile *q = read_ok(out, 0);
	static const char *const events[] = {"Allocs", "Bytes", "Unfreed", "UnfreedBytes"};
	for (int i = 0; i < 4; i++)
		assert_int_equal(total(q, events[i]), total(p, events[i]));
	char *ev = line_of(out, "events:"), *sum = line_of(out, "summary:"), *tot = line_of(out, "totals:");
	assert_string_equal(ev, "events: Allocs Bytes Unfreed UnfreedBytes Temporary PeakBytes");
	assert_string_equal(sum, "summary: 3 56 2 40 0 56");
	assert_string_equal(tot, "totals: 3 56 2 40 0 56");
	assert_non_null(strstr(out, "\ncmd: /bin/app\n"));
	assert_non_null(strstr(out, "\npositions: line\n"));
	tally a = tally_of(p), b = tally_of(q);
	char diff[9000];
	assert_null(tally_diff(&a, &b, diff, sizeof diff));
	tally_free(&a);
	tally_free(&b);
	free(ev);
	free(sum);
	free(tot);
	free(out);
	cg_profile_free(q);
	cg_profile_free(p);
	rt_trace_free(t);
}

static void test_trace_instr(void **state)
{
	(void)state;
	rt_trace *t = trace_of(two_stacks);
	cg_trace_opts o = {true, "app --x"};
	cg_profile *p = cg_profile_from_trace(t, &o);
	size_t n;
	const cg_cost *c = cg_profile_costs(p, &n);
	for (size_t i = 0; i < n; i++) {
		bool f = !strcmp(code_fn(p, c[i].code), "f");
		assert_int_equal(c[i].addr, f ? 0x400110 : 0x400330);
		assert_int_equal(c[i].line, f ? 10 : 30);
	}
	const cg_call *k = call_at(p, "main", 5, "f");
	assert_int_equal(k->addr, 0x400205);
	assert_int_equal(k->to_addr, 0x400110);
	assert_int_equal(call_at(p, "main", 6, "g")->addr, 0x400206);
	char *out = cg_write_mem(p, NULL, NULL);
	assert_non_null(strstr(out, "\npositions: instr line\n"));
	assert_non_null(strstr(out, "\ncmd: app --x\n"));
	assert_non_null(strstr(out, "\n0x400110 10 2 48 1 32 0 48\n"));
	cg_profile *q = read_ok(out, 0);
	assert_int_equal(total(q, "Bytes"), 56);
	cg_profile_free(q);
	free(out);
	cg_profile_free(p);
	rt_trace_free(t);
}

/* Temporary and PeakBytes: rtrace heap's figures per site, inclusive
 * along the stacks; the streaming pass (calls fed, not loaded) gives the
 * same profile. */
static const char heap_events[] = TRACE_HDR
	": /bin/app => 0x400000-0x500000\n"
	"1. malloc(16) = 0x1000\n"
	"\t0x400110 f() at /src/a.c:10\n"
	"\t0x400205 main() at /src/a.c:5\n"
	"\n"
	"2. free(0x1000)\n"
	"\n"
	"3. malloc(32) = 0x2000\n"
	"\t0x400330 g() at /src/b.c:30\n"
	"\t0x400206 main() at /src/a.c:6\n"
	"\n"
	"4. malloc(8) = 0x3000\n"
	"\t0x400110 f() at /src/a.c:10\n"
	"\t0x400205 main() at /src/a.c:5\n"
	"\n"
	"5. free(0x2000)\n"
	"\n";

static void test_trace_heap_events(void **state)
{
	(void)state;
	rt_trace *t = trace_of(heap_events);
	cg_profile *p = cg_profile_from_trace(t, NULL);
	assert_int_equal(total(p, "Temporary"), 1);
	assert_int_equal(total(p, "PeakBytes"), 40);
	assert_int_equal(self_cost(p, "f", 10, "Temporary"), 1);
	assert_int_equal(self_cost(p, "f", 10, "PeakBytes"), 8);
	assert_int_equal(self_cost(p, "g", 30, "PeakBytes"), 32);
	assert_int_equal(call_at(p, "main", 6, "g")->v[slot_of(p, "PeakBytes")], 32);
	assert_int_equal(call_at(p, "main", 5, "f")->v[slot_of(p, "Temporary")], 1);
	char *a = cg_write_mem(p, NULL, NULL);
	rt_trace *ref = trace_of(heap_events);
	cg_stream *st = cg_stream_new();
	const rt_call *c = rt_trace_calls_const(ref);
	for (size_t i = 0; i < rt_trace_call_count(ref); i++)
		cg_stream_feed(st, ref, &c[i]);
	cg_stream_end(st, ref);
	cg_profile *q = cg_stream_profile(st, ref, NULL);
	char *b = cg_write_mem(q, NULL, NULL);
	assert_string_equal(a, b);
	free(a);
	free(b);
	cg_profile_free(q);
	cg_stream_free(st);
	rt_trace_free(ref);
	cg_profile_free(p);
	rt_trace_free(t);
}

/* The written profile of text, its calls fed to the streaming pass by
 * batches of `batch` (as the binary reader hands them over; 0: one at
 * a time, as the text reader does). */
static char *streamed(const char *text, size_t batch)
{
	rt_trace *t = trace_of(text);
	cg_stream *st = cg_stream_new();
	const rt_call *c = rt_trace_calls_const(t);
	size_t n = rt_trace_call_count(t);
	for (size_t i = 0; i < n; i += batch ? batch : 1) {
		if (!batch)
			cg_stream_feed(st, t, &c[i]);
		else
			cg_stream_feed_calls(st, t, &c[i], i + batch < n ? batch : n - i);
	}
	cg_stream_end(st, t);
	cg_profile *p = cg_stream_profile(st, t, NULL);
	char *w = cg_write_mem(p, NULL, NULL);
	cg_profile_free(p);
	cg_stream_free(st);
	rt_trace_free(t);
	return w;
}

/* Memory's allocations from several stacks, one stack first seen at a
 * release (which places it: stacks go by their first call), a type of
 * its own, then (big) two allocations whose sizes add up past 2^64-1. */
#define BATCH_TRACE(big)                                                                                     \
	TRACE_HDR "<1> : memory (memory allocation in bytes)\n"                                             \
		  "<2> : fd (file descriptor)\n"                                                            \
		  ": /bin/app => 0x400000-0x500000\n"                                                       \
		  "1. free<memory>(0x9000)\n\t0x400330 g() at /src/b.c:30\n\t0x400206 main() at /src/a.c:6\n\n" \
		  "2. malloc<memory>(16) = 0x1000\n\t0x400110 f() at /src/a.c:10\n\t0x400205 main() at /src/a.c:5\n\n" \
		  "3. open<fd>(1) = 0x3\n\t0x400120 h() at /src/c.c:3\n\t0x400205 main() at /src/a.c:5\n\n" \
		  "4. free<memory>(0x1000)\n\t0x400140 k() at /src/c.c:9\n\n"                               \
		  "5. malloc<memory>(32) = 0x2000\n\t0x400330 g() at /src/b.c:30\n\t0x400206 main() at /src/a.c:6\n\n" \
		  "6. malloc<memory>(" big ") = 0x3000\n\t0x400110 f() at /src/a.c:10\n\t0x400205 main() at /src/a.c:5\n\n" \
		  "7. malloc<memory>(" big ") = 0x4000\n\t0x400110 f() at /src/a.c:10\n\t0x400205 main() at /src/a.c:5\n\n" \
		  "8. malloc<memory>(8) = 0x5000\n\t0x400330 g() at /src/b.c:30\n\t0x400206 main() at /src/a.c:6\n\n" \
		  "9. free<memory>(0x2000)\n\n"

/* By batches, memory's allocation calls and bytes are the heap
 * profile's sites' (the pass does not count them again) until a sum
 * could pass 2^64-1: then the pass counts them, from where it is in the
 * batch, and holds the sums. Every batching gives the profile of the
 * calls fed one at a time. */
static void test_trace_batches(void **state)
{
	(void)state;
	static const char *const texts[] = {BATCH_TRACE("24"), BATCH_TRACE("9223372036854775808")};
	for (size_t k = 0; k < 2; k++) {
		char *ref = streamed(texts[k], 0);
		/* the bytes held at 2^64-1 (summary:; totals: sums the lines) */
		assert_non_null(strstr(ref, k ? "\nsummary: 5 18446744073709551615 " : "\ntotals: 5 104 "));
		for (size_t batch = 1; batch <= 10; batch++) {
			char *b = streamed(texts[k], batch);
			assert_string_equal(ref, b);
			free(b);
		}
		free(ref);
	}
}

/* Frames without text: named by address, in the mapped module or "???". */
static void test_trace_unresolved(void **state)
{
	(void)state;
	rt_trace *t = trace_of(TRACE_HDR ": /bin/app => 0x400000-0x500000\n"
					 "1. malloc(5) = 0x1000\n\t0x400110\n\t0x900000\n\n");
	cg_profile *p = cg_profile_from_trace(t, NULL);
	assert_int_equal(self_cost(p, "0x0000000000400110", UINT64_MAX, "Bytes"), 5);
	assert_string_equal(object_of(p, "0x0000000000400110"), "/bin/app");
	assert_string_equal(object_of(p, "0x0000000000900000"), "???");
	const cg_call *c = call_at(p, "0x0000000000900000", 0, "0x0000000000400110");
	assert_int_equal(c->v[slot_of(p, "Allocs")], 1);
	cg_profile_free(p);
	rt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tally_detects_change),
		cmocka_unit_test(test_round_trip_data),
		cmocka_unit_test(test_round_trip_after_error),
		cmocka_unit_test(test_exact_compressed),
		cmocka_unit_test(test_exact_uncompressed),
		cmocka_unit_test(test_exact_reads_back),
		cmocka_unit_test(test_trace_totals),
		cmocka_unit_test(test_trace_self_cost),
		cmocka_unit_test(test_trace_calls),
		cmocka_unit_test(test_trace_recursion),
		cmocka_unit_test(test_trace_leak_verdicts),
		cmocka_unit_test(test_trace_summary_only_verdicts),
		cmocka_unit_test(test_trace_inline_chain),
		cmocka_unit_test(test_trace_written),
		cmocka_unit_test(test_trace_instr),
		cmocka_unit_test(test_trace_heap_events),
		cmocka_unit_test(test_trace_batches),
		cmocka_unit_test(test_trace_unresolved),
		cmocka_unit_test(test_trace_typed),
		cmocka_unit_test(test_trace_no_backtrace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
