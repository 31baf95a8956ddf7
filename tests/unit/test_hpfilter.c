/* Selections of the heap profile (hp_filter.c) and the diff of two
 * profiles (hp_diff.c), on hand-built text traces: call-index and time
 * ranges (blocks of the range live at its end are its leaks, releases of
 * earlier blocks count for nothing), contexts, another resource type, a
 * function on the stack (names from the trace, the temporary rule on the
 * whole sequence of calls as heaptrack_print's), and the diff's matching
 * of stacks at other addresses, its deltas and its difffolded lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "rtrace/heapprof.h"
#include "rtrace/text.h"
#include "rtrace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER                                                                  \
	"version=2.0, arch=x86_64, timestamp=2026.11.26 10:00:00, process=/bin/t, " \
	"pid=1, filter=resolve, origin=test, \n"                                    \
	"<1> : memory (memory allocation in bytes)\n"                               \
	"<2> : fd (file descriptor)\n"
#define A "\t0x1001 f() at /src/a.c:1\n\t0x2001 main() at /src/m.c:9\n\n"
#define B "\t0x1002 g() at /src/b.c:2\n\t0x2002 main() at /src/m.c:10\n\n"
/* A and B of another build: other addresses and directories, same lines */
#define A2 "\t0x7001 f() at /other/a.c:1\n\t0x8001 main() at /other/m.c:9\n\n"
#define B2 "\t0x7002 g() at /other/b.c:2\n\t0x8002 main() at /other/m.c:10\n\n"

static void feed(void *ctx, rt_trace *t, const rt_call *c)
{
	rt_hp_feed(ctx, t, c);
}

/* Profiles the text trace body (after HEADER) through filter o (NULL: none). */
static rt_hp *profile(const char *body, const rt_hp_filter_opts *o, rt_trace **tp)
{
	char buf[8192];
	snprintf(buf, sizeof buf, "%s%s", HEADER, body);
	rt_hp *h = rt_hp_new();
	rt_hp_filter *f = o ? rt_hp_filter_new(o) : NULL;
	rt_hp_set_filter(h, f);
	rt_trace *t = rt_trace_new();
	rt_read_opts ro = {0, feed, NULL, h};
	rt_diag err;
	assert_int_equal(rt_text_read_mem(t, buf, strlen(buf), "t.txt", &ro, NULL, &err), 0);
	rt_hp_finish(h);
	rt_hp_filter_free(f);
	*tp = t;
	return h;
}

static const char *const ranges_trace = "1. [10:00:00.000] malloc(100) = 0x10\n" A
					"2. [10:00:01.000] malloc(200) = 0x20\n" B
					"3. [10:00:02.000] free(0x10)\n\n"
					"4. [10:00:03.000] malloc(300) = 0x30\n" A
					"5. [10:00:04.000] free(0x20)\n\n"
					"6. [10:00:05.000] malloc(400) = 0x40\n" B;

static void check(const rt_hp *h, uint64_t allocs, uint64_t peak, uint64_t leaked, uint64_t frees)
{
	const rt_hp_summary *s = rt_hp_get_summary(h);
	assert_int_equal(s->total.allocations, allocs);
	assert_int_equal(s->total.peak, peak);
	assert_int_equal(s->total.leaked, leaked);
	assert_int_equal(s->frees, frees);
}

static void call_range(void **state)
{
	(void)state;
	rt_trace *t;
	/* calls 2 to 4: 0x20 and 0x30; 0x10's release counts for nothing,
	 * 0x20's comes after the range: both are the range's leaks */
	rt_hp_filter_opts o = {.by_index = true, .from_index = 2, .to_index = 4};
	rt_hp *h = profile(ranges_trace, &o, &t);
	check(h, 2, 500, 500, 0);
	assert_int_equal(rt_hp_get_summary(h)->leaked_blocks, 2);
	rt_hp_free(h);
	rt_trace_free(t);
	/* open end: 0x20's release is in, 0x40 too */
	o.to_index = UINT64_MAX;
	h = profile(ranges_trace, &o, &t);
	check(h, 3, 700, 700, 1);
	rt_hp_free(h);
	rt_trace_free(t);
}

static void time_range(void **state)
{
	(void)state;
	rt_trace *t;
	rt_hp_filter_opts o = {.by_time = true, .from_us = 1000000, .to_us = 4000000};
	rt_hp *h = profile(ranges_trace, &o, &t); /* [1 s, 4 s): calls 2 to 4 */
	check(h, 2, 500, 500, 0);
	rt_hp_free(h);
	rt_trace_free(t);
	o.from_us = 3500000; /* [3.5 s, 4 s): none */
	h = profile(ranges_trace, &o, &t);
	check(h, 0, 0, 0, 0);
	rt_hp_free(h);
	rt_trace_free(t);
}

static void context_and_resource(void **state)
{
	(void)state;
	rt_trace *t;
	const char *body = "1. @1 malloc(100) = 0x10\n" A
			   "2. @2 malloc(200) = 0x20\n" B
			   "3. @3 malloc(300) = 0x30\n" A
			   "4. malloc(400) = 0x40\n" B
			   "5. open<fd>(1) = 0x3\n" A
			   "6. @2 free(0x10)\n\n";
	rt_hp_filter_opts o = {.by_context = true, .context_mask = 1};
	rt_hp *h = profile(body, &o, &t);
	check(h, 2, 400, 300, 1); /* 0x10 and 0x30; 0x10 freed in another context */
	rt_hp_free(h);
	rt_trace_free(t);
	char named[1024];
	snprintf(named, sizeof named, "@ 2 : parse\n%s", body); /* by name: 0x20, 0x30 */
	o = (rt_hp_filter_opts){.by_context = true, .context_name = "parse"};
	h = profile(named, &o, &t);
	check(h, 2, 500, 500, 0);
	rt_hp_free(h);
	rt_trace_free(t);
	o = (rt_hp_filter_opts){.by_context = true, .context_mask = 0}; /* no context: 0x40 */
	h = profile(body, &o, &t);
	check(h, 1, 400, 400, 0);
	rt_hp_free(h);
	rt_trace_free(t);
	o = (rt_hp_filter_opts){.resource = "fd"};
	h = profile(body, &o, &t);
	check(h, 1, 1, 1, 0);
	assert_true(rt_hp_filter_resource(NULL, t, 0)); /* untyped is memory */
	rt_hp_free(h);
	rt_trace_free(t);
	rt_hp_filter_opts none = {.resource = ""};
	assert_null(rt_hp_filter_new(&none));
}

static void function_on_stack(void **state)
{
	(void)state;
	rt_trace *t;
	/* g's first block is freed right after its allocation: temporary;
	 * its second is freed after an allocation of f's: not temporary,
	 * though f's calls are not selected (heaptrack_print's figures) */
	const char *body = "1. malloc(100) = 0x10\n" B
			   "2. free(0x10)\n\n"
			   "3. malloc(100) = 0x20\n" B
			   "4. malloc(50) = 0x30\n" A
			   "5. free(0x20)\n\n"
			   "6. free(0x30)\n\n";
	rt_hp_filter_opts o = {.bt_function = "g"};
	rt_hp *h = profile(body, &o, &t);
	check(h, 2, 100, 0, 2);
	assert_int_equal(rt_hp_get_summary(h)->total.temporary, 1);
	rt_hp_free(h);
	rt_trace_free(t);
	o.bt_function = "main"; /* everything */
	h = profile(body, &o, &t);
	check(h, 3, 150, 0, 3);
	rt_hp_free(h);
	rt_trace_free(t);
	o.bt_function = "nowhere";
	h = profile(body, &o, &t);
	check(h, 0, 0, 0, 0);
	rt_hp_free(h);
	rt_trace_free(t);
}

static const rt_hp_diff_entry *entry(const rt_hp_diff *d, const char *suffix)
{
	for (size_t i = 0; i < rt_hp_diff_count(d); i++) {
		const char *k = rt_hp_diff_at(d, i)->key;
		size_t n = strlen(k), m = strlen(suffix);
		if (n >= m && !strcmp(k + n - m, suffix))
			return rt_hp_diff_at(d, i);
	}
	fail_msg("no stack ending in %s", suffix);
	return NULL;
}

static void diff_by_stack(void **state)
{
	(void)state;
	rt_trace *tb, *ta;
	rt_hp *b = profile("1. malloc(100) = 0x10\n" A "2. malloc(200) = 0x20\n" B "3. free(0x20)\n\n", NULL, &tb);
	rt_hp *a = profile("1. malloc(100) = 0x90\n" A2 "2. malloc(100) = 0x98\n" A2 "3. malloc(300) = 0xa0\n" B2
			   "4. malloc(10) = 0xb0\n\t0x9999 new() at /x/n.c:5\n\n",
			   NULL, &ta);
	rt_hp_diff *d = rt_hp_diff_new(b, tb, a, ta);
	assert_int_equal(rt_hp_diff_count(d), 3); /* f's, g's, new()'s */
	const rt_hp_diff_entry *f = entry(d, ";f (a.c:1)");
	assert_string_equal(f->key, "main (m.c:9);f (a.c:1)");
	assert_int_equal(f->before.allocations, 1);
	assert_int_equal(f->after.allocations, 2);
	assert_int_equal(rt_hp_cost_delta(&f->before, &f->after, RT_HP_LEAKED), 100);
	const rt_hp_diff_entry *g = entry(d, ";g (b.c:2)");
	assert_int_equal(rt_hp_cost_delta(&g->before, &g->after, RT_HP_LEAKED), 300);
	assert_int_equal(rt_hp_cost_delta(&g->before, &g->after, RT_HP_TEMPORARY), -1);
	const rt_hp_diff_entry *n = entry(d, "new (n.c:5)");
	assert_int_equal(n->before_site, SIZE_MAX);
	assert_int_not_equal(n->after_site, SIZE_MAX);

	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	assert_int_equal(rt_hp_diff_write_folded(d, RT_HP_ALLOCATIONS, fp), 0);
	fclose(fp);
	assert_string_equal(buf, "main (m.c:10);g (b.c:2) 1 1\n"
				 "main (m.c:9);f (a.c:1) 1 2\n"
				 "new (n.c:5) 0 1\n");
	free(buf);
	rt_hp_diff_free(d);
	rt_hp_free(a);
	rt_hp_free(b);
	rt_trace_free(ta);
	rt_trace_free(tb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(call_range),
		cmocka_unit_test(time_range),
		cmocka_unit_test(context_and_resource),
		cmocka_unit_test(function_on_stack),
		cmocka_unit_test(diff_by_stack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
