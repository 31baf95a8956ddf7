/* Unit tests of the leak filter and the per-call selections (filter.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rtrace/filter.h"

enum { MEM = 1, SEG = 2 }; /* registry slots: memory, segment [refcount] */

static rt_trace *new_trace(void)
{
	rt_trace *t = rt_trace_new();
	assert_int_equal(rt_trace_add_resource(t, 1, "memory", "bytes", NULL), MEM);
	assert_int_equal(rt_trace_add_resource(t, 2, "segment", "segments", "refcount"), SEG);
	return t;
}

static rt_call mk(uint64_t index, uint8_t kind, uint8_t type, uint64_t id)
{
	rt_call c = {0};
	c.index = index;
	c.kind = kind;
	c.res_type = type;
	c.res_id = id;
	c.size = kind == RT_CALL_ALLOC ? 8 : 0;
	c.bt = c.args = RT_NONE;
	return c;
}

static void feed(rt_leaks *l, rt_trace *t, uint64_t index, uint8_t kind, uint8_t type, uint64_t id)
{
	rt_call c = mk(index, kind, type, id);
	rt_leaks_feed(l, t, &c);
	/* the filter queues calls to prefetch; drain so state is observable */
	rt_leaks_finish(l, t);
}

/* Indices of the calls still in the trace (dead ones skipped), in order. */
static size_t survivors(rt_trace *t, uint64_t *out, size_t max)
{
	const rt_call *c = rt_trace_calls_const(t);
	size_t n = 0;
	for (size_t i = 0; i < rt_trace_call_count(t); i++) {
		if (c[i].kind == RT_CALL_DEAD)
			continue;
		assert_int_equal(c[i].kind, RT_CALL_ALLOC);
		if (n < max)
			out[n] = c[i].index;
		n++;
	}
	return n;
}

/* --- rt_leaks --- */

static void leaks_alloc_free_removes_both(void **state)
{
	(void)state;
	rt_trace *t = new_trace();
	rt_leaks *l = rt_leaks_new();
	feed(l, t, 1, RT_CALL_ALLOC, MEM, 0x10);
	feed(l, t, 2, RT_CALL_ALLOC, MEM, 0x20);
	assert_int_equal(rt_leaks_live(l), 2);
	feed(l, t, 3, RT_CALL_FREE, MEM, 0x10);
	assert_int_equal(rt_leaks_live(l), 1);
	uint64_t s[4];
	assert_int_equal(survivors(t, s, 4), 1);
	assert_int_equal(s[0], 2);
	/* the id can be allocated again */
	feed(l, t, 4, RT_CALL_ALLOC, MEM, 0x10);
	feed(l, t, 5, RT_CALL_FREE, MEM, 0x20);
	assert_int_equal(survivors(t, s, 4), 1);
	assert_int_equal(s[0], 4);
	assert_int_equal(rt_leaks_live(l), 1);
	rt_leaks_free(l);
	rt_trace_free(t);
}

static void leaks_free_without_alloc_dropped(void **state)
{
	(void)state;
	rt_trace *t = new_trace();
	rt_leaks *l = rt_leaks_new();
	feed(l, t, 1, RT_CALL_FREE, MEM, 0x10);
	feed(l, t, 2, RT_CALL_FREE, SEG, 0x10);
	assert_int_equal(rt_trace_call_count(t), 0);
	assert_int_equal(rt_leaks_live(l), 0);
	feed(l, t, 3, RT_CALL_ALLOC, MEM, 0x10);
	feed(l, t, 4, RT_CALL_FREE, MEM, 0x10);
	feed(l, t, 5, RT_CALL_FREE, MEM, 0x10); /* double free */
	uint64_t s[4];
	assert_int_equal(survivors(t, s, 4), 0);
	assert_int_equal(rt_leaks_live(l), 0);
	rt_leaks_free(l);
	rt_trace_free(t);
}

static void leaks_repeated_alloc_plain(void **state)
{
	(void)state;
	rt_trace *t = new_trace();
	rt_leaks *l = rt_leaks_new();
	feed(l, t, 1, RT_CALL_ALLOC, MEM, 0x10);
	feed(l, t, 2, RT_CALL_ALLOC, MEM, 0x10);
	feed(l, t, 3, RT_CALL_FREE, MEM, 0x10);
	/* the first allocation was never released: it stays a leak */
	uint64_t s[4];
	assert_int_equal(survivors(t, s, 4), 1);
	assert_int_equal(s[0], 1);
	feed(l, t, 4, RT_CALL_FREE, MEM, 0x10);
	assert_int_equal(survivors(t, s, 4), 1);
	assert_int_equal(s[0], 1);
	rt_leaks_free(l);
	rt_trace_free(t);
}

static void leaks_refcount(void **state)
{
	(void)state;
	rt_trace *t = new_trace();
	rt_leaks *l = rt_leaks_new();
	feed(l, t, 1, RT_CALL_ALLOC, SEG, 0x10);
	feed(l, t, 2, RT_CALL_ALLOC, SEG, 0x10);
	feed(l, t, 3, RT_CALL_FREE, SEG, 0x10);
	uint64_t s[4];
	assert_int_equal(survivors(t, s, 4), 1); /* one reference left */
	assert_int_equal(s[0], 1);
	assert_int_equal(rt_leaks_live(l), 1);
	feed(l, t, 4, RT_CALL_FREE, SEG, 0x10);
	assert_int_equal(survivors(t, s, 4), 0);
	assert_int_equal(rt_leaks_live(l), 0);
	/* a third release has nothing to match */
	feed(l, t, 5, RT_CALL_FREE, SEG, 0x10);
	assert_int_equal(survivors(t, s, 4), 0);
	rt_leaks_free(l);
	rt_trace_free(t);
}

static void leaks_types_do_not_match(void **state)
{
	(void)state;
	rt_trace *t = new_trace();
	rt_leaks *l = rt_leaks_new();
	feed(l, t, 1, RT_CALL_ALLOC, MEM, 0x10);
	feed(l, t, 2, RT_CALL_ALLOC, SEG, 0x10);
	feed(l, t, 3, RT_CALL_ALLOC, 0, 0x10);
	feed(l, t, 4, RT_CALL_FREE, SEG, 0x10);
	uint64_t s[4];
	assert_int_equal(survivors(t, s, 4), 2);
	assert_int_equal(s[0], 1);
	assert_int_equal(s[1], 3);
	feed(l, t, 5, RT_CALL_FREE, MEM, 0x10);
	assert_int_equal(survivors(t, s, 4), 1);
	assert_int_equal(s[0], 3);
	rt_leaks_free(l);
	rt_trace_free(t);
}

/* Fed back to back (the queue full of pending calls, including frees of
 * blocks still queued), the filter ends with the same survivors as when
 * every call is matched at once. */
static void leaks_queued_equals_drained(void **state)
{
	(void)state;
	enum { OPS = 50000 };
	rt_trace *a = new_trace(), *b = new_trace();
	rt_leaks *la = rt_leaks_new(), *lb = rt_leaks_new();
	uint64_t seed = 42;
	for (uint64_t i = 1; i <= OPS; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		uint8_t kind = (seed >> 33) % 3 ? RT_CALL_ALLOC : RT_CALL_FREE;
		uint64_t id = 0x1000 + ((seed >> 40) % 64) * 16; /* heavy reuse */
		rt_call c = mk(i, kind, MEM, id);
		rt_leaks_feed(la, a, &c); /* queued */
		feed(lb, b, i, kind, MEM, id); /* drained after each call */
	}
	rt_leaks_finish(la, a);
	assert_int_equal(rt_leaks_live(la), rt_leaks_live(lb));
	uint64_t *ga = malloc(OPS * sizeof *ga), *gb = malloc(OPS * sizeof *gb);
	size_t na = survivors(a, ga, OPS), nb = survivors(b, gb, OPS);
	assert_int_equal(na, nb);
	assert_true(na > 0);
	assert_memory_equal(ga, gb, na * sizeof *ga);
	free(ga);
	free(gb);
	rt_leaks_free(la);
	rt_leaks_free(lb);
	rt_trace_free(a);
	rt_trace_free(b);
}

static void leaks_churn_compacts(void **state)
{
	(void)state;
	enum { PAIRS = 200000, LIVE = 1000 };
	rt_trace *t = new_trace();
	rt_leaks *l = rt_leaks_new();
	uint64_t index = 0, live = 0;
	uint64_t *want = malloc(LIVE * sizeof *want);
	uint8_t *type = malloc(LIVE);
	size_t peak = 0;
	for (uint64_t i = 0; i < PAIRS; i++) {
		if (i % (PAIRS / LIVE) == 7) {
			want[live] = ++index;
			type[live] = i % 3 ? MEM : SEG;
			feed(l, t, index, RT_CALL_ALLOC, type[live], 0x100000000ULL + live);
			live++;
		}
		uint64_t id = 0x1000 + (i % 5000) * 16;
		feed(l, t, ++index, RT_CALL_ALLOC, MEM, id);
		feed(l, t, ++index, RT_CALL_FREE, MEM, id);
		if (rt_trace_call_count(t) > peak)
			peak = rt_trace_call_count(t);
	}
	assert_int_equal(live, LIVE);
	assert_int_equal(rt_leaks_live(l), LIVE);
	/* memory follows the live set, not the length of the trace */
	assert_true(peak < 4 * LIVE + 10000);
	uint64_t *got = malloc(LIVE * sizeof *got);
	assert_int_equal(survivors(t, got, LIVE), LIVE);
	for (size_t i = 0; i < LIVE; i++)
		assert_int_equal(got[i], want[i]);
	assert_int_equal(rt_trace_call_count(t) - rt_trace_dead_count(t), LIVE);
	/* the survivors can still be released (the filter owns the positions:
	 * no outside compaction while feeding) */
	for (uint64_t i = 0; i < LIVE; i++)
		feed(l, t, ++index, RT_CALL_FREE, type[i], 0x100000000ULL + i);
	assert_int_equal(rt_leaks_live(l), 0);
	assert_int_equal(survivors(t, got, LIVE), 0);
	free(type);
	free(got);
	free(want);
	rt_leaks_free(l);
	rt_trace_free(t);
}

/* Random operations against a straightforward model of the semantics. */
typedef struct ref_entry {
	uint64_t index, id;
	uint32_t refs;
	uint8_t type;
	bool released;
} ref_entry;

static void leaks_random_against_model(void **state)
{
	(void)state;
	enum { OPS = 300000, IDS = 1500 };
	rt_trace *t = new_trace();
	rt_leaks *l = rt_leaks_new();
	ref_entry *ref = calloc(OPS, sizeof *ref); /* allocations, in order */
	size_t nref = 0;
	/* current live entry per (type, id): position in ref + 1 */
	size_t *cur = calloc(3 * IDS, sizeof *cur);
	uint64_t x = 88172645463325252ULL;
	for (uint64_t i = 1; i <= OPS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint8_t type = (uint8_t)(x % 3); /* 0: untyped, MEM, SEG */
		uint64_t id = (x >> 8) % IDS;
		/* mostly release live ids and allocate free ones, with some
		 * repeated allocations and unmatched releases */
		bool is_live = cur[type * IDS + id] != 0;
		bool alloc = (x >> 40) % 100 < (is_live ? 10u : 95u);
		size_t *slot = &cur[type * IDS + id];
		if (alloc) {
			feed(l, t, i, RT_CALL_ALLOC, type, id);
			if (*slot && type == SEG) {
				ref[*slot - 1].refs++;
				continue;
			}
			ref[nref] = (ref_entry){i, id, 1, type, false};
			*slot = ++nref;
		} else {
			feed(l, t, i, RT_CALL_FREE, type, id);
			if (!*slot)
				continue;
			ref_entry *e = &ref[*slot - 1];
			if (type != SEG || --e->refs == 0) {
				e->released = true;
				*slot = 0;
			}
		}
	}
	size_t nlive = 0, nslots = 0;
	for (size_t i = 0; i < nref; i++)
		nlive += !ref[i].released;
	for (size_t i = 0; i < 3 * IDS; i++)
		nslots += cur[i] != 0;
	uint64_t *got = malloc((nref + 1) * sizeof *got);
	assert_int_equal(survivors(t, got, nref + 1), nlive);
	for (size_t i = 0, k = 0; i < nref; i++)
		if (!ref[i].released)
			assert_int_equal(got[k++], ref[i].index);
	assert_int_equal(rt_leaks_live(l), nslots);
	/* compaction kept the trace near the live set */
	assert_true(rt_trace_call_count(t) < 2 * nlive + 8192);
	free(got);
	free(cur);
	free(ref);
	rt_leaks_free(l);
	rt_trace_free(t);
}

/* Dropped releases must not pile up argument blocks: the filter promises
 * memory proportional to the live resources. */
static void leaks_release_args_of_dropped_calls(void **state)
{
	(void)state;
	rt_trace *t = new_trace();
	rt_leaks *l = rt_leaks_new();
	rt_kv kv[] = {{"fd", "3"}};
	uint32_t max_id = 0;
	for (uint64_t i = 0; i < 10000; i++) {
		rt_call a = mk(2 * i + 1, RT_CALL_ALLOC, MEM, 0x10);
		a.args = rt_trace_add_args(t, kv, 1);
		rt_leaks_feed(l, t, &a);
		rt_call f = mk(2 * i + 2, RT_CALL_FREE, MEM, 0x10);
		f.args = rt_trace_add_args(t, kv, 1);
		rt_leaks_feed(l, t, &f);
		if (a.args > max_id)
			max_id = a.args;
		if (f.args > max_id)
			max_id = f.args;
	}
	rt_leaks_free(l);
	rt_trace_free(t);
	if (max_id > 100)
		fail_msg("argument block ids reached %u for one live resource: the "
			 "arguments of dropped calls are never released", max_id);
}

/* --- rt_select --- */

static rt_trace *ctx_trace(void)
{
	rt_trace *t = new_trace();
	static const uint32_t ctx[] = {0, 1, 2, 3, 4, 0, 5};
	for (size_t i = 0; i < 7; i++) {
		rt_call c = mk(i + 1, RT_CALL_ALLOC, MEM, 0x10 + i);
		c.context = ctx[i];
		rt_trace_append_call(t, &c);
	}
	return t;
}

static void check_select(const rt_select *s, const uint64_t *want, size_t nwant)
{
	rt_trace *t = ctx_trace();
	size_t n = rt_select_apply(s, t);
	assert_int_equal(n, nwant);
	assert_int_equal(rt_trace_call_count(t), nwant);
	assert_int_equal(rt_trace_dead_count(t), 0);
	for (size_t i = 0; i < nwant; i++)
		assert_int_equal(rt_trace_calls_const(t)[i].index, want[i]);
	rt_trace_free(t);
}

static void select_context_mask(void **state)
{
	(void)state;
	rt_select s = {0};
	check_select(&s, (const uint64_t[]){1, 2, 3, 4, 5, 6, 7}, 7); /* no selection */
	s.by_context = true;
	s.context_mask = 0;
	check_select(&s, (const uint64_t[]){1, 6}, 2);
	s.context_mask = 3;
	check_select(&s, (const uint64_t[]){2, 3, 4, 7}, 4);
	s.context_mask = 4;
	check_select(&s, (const uint64_t[]){5, 7}, 2);
	s.context_mask = 8;
	check_select(&s, NULL, 0);

	rt_trace *t = ctx_trace();
	s.context_mask = 2;
	assert_false(rt_select_call(&s, t, &rt_trace_calls_const(t)[1])); /* ctx 1 */
	assert_true(rt_select_call(&s, t, &rt_trace_calls_const(t)[2]));  /* ctx 2 */
	assert_true(rt_select_call(&s, t, &rt_trace_calls_const(t)[3]));  /* ctx 3 */
	rt_trace_free(t);
}

static void select_include_exclude(void **state)
{
	(void)state;
	rt_select s = {0};
	const uint64_t inc[] = {2, 4, 5, 7, 100};
	const uint64_t exc[] = {1, 4};
	s.include = inc;
	s.ninclude = 5;
	check_select(&s, (const uint64_t[]){2, 4, 5, 7}, 4);
	s.exclude = exc;
	s.nexclude = 2;
	check_select(&s, (const uint64_t[]){2, 5, 7}, 3);
	s.include = NULL;
	s.ninclude = 0;
	check_select(&s, (const uint64_t[]){2, 3, 5, 6, 7}, 5);
	/* an empty include list keeps nothing */
	s.exclude = NULL;
	s.nexclude = 0;
	s.include = inc;
	s.ninclude = 0;
	check_select(&s, NULL, 0);
	/* combined with a context mask */
	s.include = inc;
	s.ninclude = 5;
	s.by_context = true;
	s.context_mask = 1;
	check_select(&s, (const uint64_t[]){2, 4, 7}, 3);
}

static void select_by_address(void **state)
{
	(void)state;
	rt_trace *t = new_trace();
	rt_frame f1[] = {{0x8048526, RT_NONE}, {0x14cce7, RT_NONE}};
	rt_frame f2[] = {{0x8049000, RT_NONE}, {0x136000, RT_NONE}};
	rt_frame f3[] = {{0x8047fff, RT_NONE}};
	uint32_t bts[] = {rt_trace_intern_bt(t, f1, 2), rt_trace_intern_bt(t, f2, 2),
			  rt_trace_intern_bt(t, f3, 1), RT_NONE};
	for (size_t i = 0; i < 4; i++) {
		rt_call c = mk(i + 1, RT_CALL_ALLOC, MEM, i);
		c.bt = bts[i];
		rt_trace_append_call(t, &c);
	}
	rt_select s = {0};
	s.by_address = true;
	s.addr_from = 0x8048000;
	s.addr_to = 0x8049000; /* end excluded */
	const rt_call *c = rt_trace_calls_const(t);
	assert_true(rt_select_call(&s, t, &c[0]));
	assert_false(rt_select_call(&s, t, &c[1]));
	assert_false(rt_select_call(&s, t, &c[2]));
	assert_false(rt_select_call(&s, t, &c[3]));
	s.addr_from = 0x136000; /* start included; any frame counts */
	s.addr_to = 0x136001;
	assert_false(rt_select_call(&s, t, &c[0]));
	assert_true(rt_select_call(&s, t, &c[1]));
	s.addr_from = 0;
	s.addr_to = UINT64_MAX;
	assert_int_equal(rt_select_apply(&s, t), 3);
	c = rt_trace_calls_const(t);
	assert_int_equal(c[2].index, 3);
	rt_trace_free(t);
}

/* --- resources and address ranges --- */

static void filter_resources(void **state)
{
	(void)state;
	rt_trace *t = new_trace();
	assert_int_equal(rt_trace_add_resource(t, 4, "control", "ops", NULL), 3);
	rt_call c[4] = {mk(1, RT_CALL_ALLOC, MEM, 1), mk(2, RT_CALL_ALLOC, SEG, 1),
			mk(3, RT_CALL_FREE, 3, 1), mk(4, RT_CALL_ALLOC, 0, 1)};
	for (size_t i = 0; i < 4; i++)
		assert_true(rt_select_resource(t, &c[i]));
	rt_select_resources(t, 5); /* memory and control */
	assert_false(rt_trace_resource_get(t, MEM)->removed);
	assert_true(rt_trace_resource_get(t, SEG)->removed);
	assert_false(rt_trace_resource_get(t, 3)->removed);
	assert_int_equal(rt_trace_resource_live(t), 2);
	assert_true(rt_select_resource(t, &c[0]));
	assert_false(rt_select_resource(t, &c[1]));
	assert_true(rt_select_resource(t, &c[2]));
	assert_true(rt_select_resource(t, &c[3])); /* untyped */
	rt_select_resources(t, 4);
	assert_int_equal(rt_trace_resource_live(t), 1);
	assert_false(rt_select_resource(t, &c[0]));
	assert_true(rt_select_resource(t, &c[2]));
	rt_trace_free(t);
}

static void address_range(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	rt_trace_add_mmap(t, "/lib/libc-2.12.1.so", 0x136000, 0x28d000);
	rt_trace_add_mmap(t, "/usr/lib/libsp-rtrace1.so.1.0.6", 0x9e0000, 0x9f4000);
	rt_trace_add_mmap(t, "/tests/bin/shmseg_test", 0x8048000, 0x8049000);
	uint64_t from = 0, to = 0;
	/* START relative to the module */
	assert_true(rt_select_address_range(t, "libc", 0x100, 0x20, &from, &to));
	assert_int_equal(from, 0x136100);
	assert_int_equal(to, 0x136120);
	/* START already inside the module: absolute */
	assert_true(rt_select_address_range(t, "shmseg_test", 0x8048526, 4, &from, &to));
	assert_int_equal(from, 0x8048526);
	assert_int_equal(to, 0x804852a);
	assert_true(rt_select_address_range(t, "shmseg_test", 0x8048000, 1, &from, &to));
	assert_int_equal(from, 0x8048000);
	/* the end of the mapping is outside it */
	assert_true(rt_select_address_range(t, "shmseg_test", 0x8049000, 1, &from, &to));
	assert_int_equal(from, 0x8048000 + 0x8049000);
	/* substring of the path */
	assert_true(rt_select_address_range(t, "sp-rtrace1", 0, 0x14000, &from, &to));
	assert_int_equal(from, 0x9e0000);
	assert_int_equal(to, 0x9f4000);
	from = to = 7;
	assert_false(rt_select_address_range(t, "libfoo", 0, 1, &from, &to));
	rt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(leaks_alloc_free_removes_both),
		cmocka_unit_test(leaks_queued_equals_drained),
		cmocka_unit_test(leaks_free_without_alloc_dropped),
		cmocka_unit_test(leaks_repeated_alloc_plain),
		cmocka_unit_test(leaks_refcount),
		cmocka_unit_test(leaks_types_do_not_match),
		cmocka_unit_test(leaks_churn_compacts),
		cmocka_unit_test(leaks_random_against_model),
		cmocka_unit_test(leaks_release_args_of_dropped_calls),
		cmocka_unit_test(select_context_mask),
		cmocka_unit_test(select_include_exclude),
		cmocka_unit_test(select_by_address),
		cmocka_unit_test(filter_resources),
		cmocka_unit_test(address_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
