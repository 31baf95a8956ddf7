/* Unit tests of the trace model (include/rtrace/trace.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrace/trace.h"

static uint32_t intern(rt_trace *t, const char *s)
{
	return rt_trace_intern(t, s, strlen(s));
}

/* --- strings --- */

static void intern_equal_and_different(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	uint32_t a = intern(t, "malloc");
	uint32_t b = intern(t, "free");
	assert_int_not_equal(a, b);
	assert_int_equal(intern(t, "malloc"), a);
	assert_int_equal(intern(t, "free"), b);
	/* a copy in another buffer, and a length-bounded prefix */
	char buf[] = "mallocXYZ";
	assert_int_equal(rt_trace_intern(t, buf, 6), a);
	assert_int_not_equal(rt_trace_intern(t, buf, 5), a);
	/* the empty string is a string like any other */
	uint32_t e = rt_trace_intern(t, "", 0);
	assert_int_not_equal(e, a);
	assert_int_equal(rt_trace_intern(t, "x", 0), e);
	assert_string_equal(rt_trace_str(t, a), "malloc");
	assert_string_equal(rt_trace_str(t, e), "");
	rt_trace_free(t);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static void intern_stable_across_growth(void **state)
{
	(void)state;
	enum { N = 20000 };
	rt_trace *t = rt_trace_new();
	uint32_t *ids = malloc(N * sizeof *ids);
	char buf[32];
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof buf, "fn_%d", i);
		ids[i] = intern(t, buf);
	}
	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof buf, "fn_%d", i);
		assert_int_equal(intern(t, buf), ids[i]);
		assert_string_equal(rt_trace_str(t, ids[i]), buf);
	}
	/* distinct strings, distinct ids */
	qsort(ids, N, sizeof *ids, cmp_u32);
	for (int i = 1; i < N; i++)
		assert_int_not_equal(ids[i], ids[i - 1]);
	free(ids);
	rt_trace_free(t);
}

static void strdup_copies(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	char buf[] = "hello world";
	const char *s = rt_trace_strdup(t, buf, 5);
	buf[0] = 'J';
	assert_string_equal(s, "hello");
	rt_trace_free(t);
}

/* --- backtraces --- */

static void bt_interning(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	uint32_t zero = intern(t, "zero() from /bin/x");
	uint32_t one = intern(t, "one() from /bin/x");
	rt_frame a[] = {{0x8048526, zero}, {0x80485b5, one}, {0x14cce7, RT_NONE}};
	rt_frame same[] = {{0x8048526, zero}, {0x80485b5, one}, {0x14cce7, RT_NONE}};
	rt_frame text[] = {{0x8048526, one}, {0x80485b5, one}, {0x14cce7, RT_NONE}};
	rt_frame addr[] = {{0x8048526, zero}, {0x80485b6, one}, {0x14cce7, RT_NONE}};

	uint32_t ia = rt_trace_intern_bt(t, a, 3);
	assert_int_equal(rt_trace_intern_bt(t, same, 3), ia);
	uint32_t it = rt_trace_intern_bt(t, text, 3);
	uint32_t ix = rt_trace_intern_bt(t, addr, 3);
	uint32_t ip = rt_trace_intern_bt(t, a, 2); /* a prefix */
	uint32_t ie = rt_trace_intern_bt(t, NULL, 0);
	uint32_t ids[] = {ia, it, ix, ip, ie};
	for (int i = 0; i < 5; i++)
		for (int j = i + 1; j < 5; j++)
			assert_int_not_equal(ids[i], ids[j]);
	assert_int_equal(rt_trace_bt_count(t), 5);
	assert_int_equal(rt_trace_intern_bt(t, NULL, 0), ie);
	assert_int_equal(rt_trace_bt_len(t, ie), 0);

	assert_int_equal(rt_trace_bt_len(t, ia), 3);
	assert_int_equal(rt_trace_bt_len(t, ip), 2);
	const rt_frame *f = rt_trace_bt_frames(t, ix);
	assert_int_equal(f[1].addr, 0x80485b6);
	assert_int_equal(f[1].text, one);
	assert_int_equal(f[2].text, RT_NONE);
	/* the caller's array is copied */
	a[0].addr = 1;
	assert_int_equal(rt_trace_bt_frames(t, ia)[0].addr, 0x8048526);
	rt_trace_free(t);
}

static void bt_many_survive_rehash(void **state)
{
	(void)state;
	enum { N = 150000 };
	rt_trace *t = rt_trace_new();
	uint32_t *ids = malloc(N * sizeof *ids);
	for (uint32_t i = 0; i < N; i++) {
		rt_frame f[3] = {{0x400000 + i, RT_NONE}, {i * 7u, RT_NONE}, {0x1000, RT_NONE}};
		ids[i] = rt_trace_intern_bt(t, f, 1 + i % 3);
	}
	assert_int_equal(rt_trace_bt_count(t), N);
	for (uint32_t i = 0; i < N; i++) {
		rt_frame f[3] = {{0x400000 + i, RT_NONE}, {i * 7u, RT_NONE}, {0x1000, RT_NONE}};
		uint32_t n = 1 + i % 3;
		assert_int_equal(rt_trace_intern_bt(t, f, n), ids[i]);
		assert_int_equal(rt_trace_bt_len(t, ids[i]), n);
		const rt_frame *g = rt_trace_bt_frames(t, ids[i]);
		for (uint32_t k = 0; k < n; k++) {
			assert_int_equal(g[k].addr, f[k].addr);
			assert_int_equal(g[k].text, f[k].text);
		}
	}
	assert_int_equal(rt_trace_bt_count(t), N);
	free(ids);
	rt_trace_free(t);
}

/* Stacks sharing their outer frames, some twice, one text apart: the
 * frames are a tree while only interned (trace.c), an array once read.
 * Each stack, looked up in either, keeps its id and reads back whole. */
enum { TREE_N = 2000, TREE_DEPTH = 24 };

static uint32_t tree_stack(uint32_t i, rt_frame *f)
{
	uint32_t d = 1 + (i * 7) % TREE_DEPTH, v = i % 1500; /* 500 twice */
	for (uint32_t k = 0; k < d; k++) {
		uint32_t branch = k + 1 < d ? (v >> (k % 8)) & 1 : v; /* the innermost: its own */
		f[k] = (rt_frame){0x400000 + 0x40 * (uint64_t)(d - k) + branch, RT_NONE};
	}
	if (d > 2 && v % 5 == 0)
		f[1].text = 3; /* the same address with a text */
	return d;
}

static bool same_frames(const rt_frame *a, const rt_frame *b, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		if (a[k].addr != b[k].addr || a[k].text != b[k].text)
			return false;
	return true;
}

static void bt_tree_then_array(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	static rt_frame f[TREE_N][TREE_DEPTH];
	uint32_t n[TREE_N], id[TREE_N];
	for (uint32_t i = 0; i < TREE_N; i++) {
		n[i] = tree_stack(i, f[i]);
		id[i] = rt_trace_intern_bt(t, f[i], n[i]);
	}
	uint32_t distinct = 0; /* each stack's id is that of its first equal */
	for (uint32_t i = 0; i < TREE_N; i++) {
		uint32_t j = 0;
		while (j < i && (n[j] != n[i] || !same_frames(f[j], f[i], n[i])))
			j++;
		distinct += j == i;
		assert_int_equal(id[i], id[j]);
		assert_int_equal(rt_trace_intern_bt(t, f[i], n[i]), id[i]); /* in the tree */
	}
	assert_int_equal(rt_trace_bt_count(t), distinct);
	for (int flat = 0; flat < 2; flat++) /* read where they are: in the tree, then in the array */
		for (uint32_t i = 0; i < TREE_N; i++) {
			rt_frame c[TREE_DEPTH], x;
			rt_bt_iter it;
			assert_int_equal(rt_trace_bt_copy(t, id[i], c), n[i]);
			rt_trace_bt_iter(t, id[i], &it);
			for (uint32_t k = 0; k < n[i]; k++) {
				assert_true(rt_trace_bt_next(&it, &x));
				assert_true(x.addr == f[i][k].addr && x.text == f[i][k].text);
				assert_true(c[k].addr == f[i][k].addr && c[k].text == f[i][k].text);
			}
			assert_false(rt_trace_bt_next(&it, &x));
			if (flat == 0 && i + 1 == TREE_N)
				rt_trace_bt_frames(t, 0); /* laid out as the array */
		}
	rt_bt_iter none;
	rt_frame x;
	rt_trace_bt_iter(t, RT_NONE, &none);
	assert_false(rt_trace_bt_next(&none, &x));
	for (uint32_t i = 0; i < TREE_N; i++) {
		assert_int_equal(rt_trace_bt_len(t, id[i]), n[i]);
		const rt_frame *g = rt_trace_bt_frames(t, id[i]); /* the array */
		for (uint32_t k = 0; k < n[i]; k++) {
			assert_int_equal(g[k].addr, f[i][k].addr);
			assert_int_equal(g[k].text, f[i][k].text);
		}
		assert_int_equal(rt_trace_intern_bt(t, f[i], n[i]), id[i]);
	}
	rt_frame late[] = {{0x400040, RT_NONE}, {0x999, RT_NONE}}; /* after the array */
	uint32_t l = rt_trace_intern_bt(t, late, 2);
	assert_int_equal(l, distinct);
	assert_int_equal(rt_trace_bt_frames(t, l)[1].addr, 0x999);
	assert_int_equal(rt_trace_bt_frames(t, id[0])[0].addr, f[0][0].addr);
	rt_trace_free(t);
}

/* --- header --- */

static void header_set_replace_lookup(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	assert_null(rt_trace_header(t, "version"));
	assert_int_equal(rt_trace_filter_bits(t), 0);
	rt_trace_set_header(t, "version", "2.0");
	rt_trace_set_header(t, "arch", "i686");
	rt_trace_set_header(t, "backtrace depth", "10");
	rt_trace_set_header(t, "version", "3.0"); /* replaces, keeps position */
	assert_int_equal(rt_trace_header_count(t), 3);
	assert_string_equal(rt_trace_header(t, "version"), "3.0");
	assert_string_equal(rt_trace_header(t, "backtrace depth"), "10");
	assert_null(rt_trace_header(t, "vers"));
	assert_string_equal(rt_trace_header_at(t, 0)->key, "version");
	assert_string_equal(rt_trace_header_at(t, 0)->value, "3.0");
	assert_string_equal(rt_trace_header_at(t, 1)->key, "arch");
	assert_string_equal(rt_trace_header_at(t, 2)->key, "backtrace depth");
	/* the model keeps its own copies */
	char key[] = "pid", val[] = "17913";
	rt_trace_set_header(t, key, val);
	key[0] = val[0] = 'X';
	assert_string_equal(rt_trace_header(t, "pid"), "17913");
	rt_trace_free(t);
}

static void header_filter_bits(void **state)
{
	(void)state;
	static const struct { const char *v; unsigned bits; } cases[] = {
		{"", 0},
		{"leaks", RT_FILTER_LEAKS},
		{"compress", RT_FILTER_COMPRESS},
		{"resolve", RT_FILTER_RESOLVE},
		{"leaks|compress", RT_FILTER_LEAKS | RT_FILTER_COMPRESS},
		{"leaks|compress|resolve", RT_FILTER_LEAKS | RT_FILTER_COMPRESS | RT_FILTER_RESOLVE},
		{"resolve|leaks", RT_FILTER_LEAKS | RT_FILTER_RESOLVE},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		rt_trace *t = rt_trace_new();
		rt_trace_set_header(t, "filter", cases[i].v);
		assert_int_equal(rt_trace_filter_bits(t), cases[i].bits);
		rt_trace_free(t);
	}
}

/* --- registries --- */

static void resource_registry(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	assert_int_equal(rt_trace_resource_count(t), 0);
	assert_null(rt_trace_resource_get(t, 1));
	uint8_t seg = rt_trace_add_resource(t, 1, "segment", "shared memory segment", "refcount");
	uint8_t addr = rt_trace_add_resource(t, 2, "address", "shared memory attachments", NULL);
	uint8_t ctl = rt_trace_add_resource(t, 4, "control", NULL, "foo|refcount|bar");
	assert_int_equal(seg, 1);
	assert_int_equal(addr, 2);
	assert_int_equal(ctl, 3);
	/* a type already registered keeps its slot */
	assert_int_equal(rt_trace_add_resource(t, 8, "address", "other", "refcount"), addr);
	assert_int_equal(rt_trace_resource_count(t), 3);

	assert_int_equal(rt_trace_find_resource(t, "address", 7), addr);
	assert_int_equal(rt_trace_find_resource(t, "addressXX", 7), addr);
	assert_int_equal(rt_trace_find_resource(t, "addr", 4), 0);
	assert_int_equal(rt_trace_find_resource(t, "memory", 6), 0);

	const rt_resource *r = rt_trace_resource_get(t, seg);
	assert_int_equal(r->mask, 1);
	assert_string_equal(r->type, "segment");
	assert_string_equal(r->desc, "shared memory segment");
	assert_string_equal(r->flags, "refcount");
	assert_true(r->refcount);
	assert_false(r->removed);
	r = rt_trace_resource_get(t, addr);
	assert_int_equal(r->mask, 2);
	assert_string_equal(r->desc, "shared memory attachments");
	assert_null(r->flags);
	assert_false(r->refcount);
	r = rt_trace_resource_get(t, ctl);
	assert_string_equal(r->desc, "");
	assert_true(r->refcount);
	assert_ptr_equal(rt_trace_resource_at(t, 1), rt_trace_resource_get(t, addr));
	assert_null(rt_trace_resource_get(t, 0));
	assert_null(rt_trace_resource_get(t, 4));

	assert_int_equal(rt_trace_resource_live(t), 3);
	rt_trace_resource_at(t, 0)->removed = true;
	assert_int_equal(rt_trace_resource_live(t), 2);
	rt_trace_free(t);
}

static void resource_limit(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	char name[16];
	for (int i = 0; i < RT_MAX_RESOURCES; i++) {
		snprintf(name, sizeof name, "type%d", i);
		assert_int_equal(rt_trace_add_resource(t, 1u << i, name, "d", NULL), i + 1);
	}
	assert_int_equal(rt_trace_add_resource(t, 1, "one-too-many", "d", NULL), 0);
	assert_int_equal(rt_trace_resource_count(t), RT_MAX_RESOURCES);
	/* existing types are still found when full */
	assert_int_equal(rt_trace_add_resource(t, 1, "type31", "d", NULL), 32);
	assert_int_equal(rt_trace_find_resource(t, "one-too-many", 12), 0);
	assert_int_equal(rt_trace_resource_get(t, 32)->mask, 0x80000000u);
	rt_trace_free(t);
}

static void other_registries(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	rt_trace_add_mmap(t, "/lib/libc.so", 0x136000, 0x28d000);
	rt_trace_add_context(t, 1, "first context");
	rt_trace_add_context(t, 2, "second context");
	rt_trace_add_comment(t, 7, "## hello world", 8);
	rt_trace_add_attachment(t, "core", "/tmp/core");
	assert_int_equal(rt_trace_mmap_count(t), 1);
	assert_string_equal(rt_trace_mmap_at(t, 0)->module, "/lib/libc.so");
	assert_int_equal(rt_trace_mmap_at(t, 0)->to, 0x28d000);
	assert_int_equal(rt_trace_context_count(t), 2);
	assert_int_equal(rt_trace_context_at(t, 1)->id, 2);
	assert_string_equal(rt_trace_context_at(t, 1)->name, "second context");
	rt_trace_clear_contexts(t);
	assert_int_equal(rt_trace_context_count(t), 0);
	assert_int_equal(rt_trace_comment_at(t, 0)->after, 7);
	assert_string_equal(rt_trace_comment_at(t, 0)->text, "## hello");
	assert_string_equal(rt_trace_attachment_at(t, 0)->path, "/tmp/core");
	assert_int_equal(rt_trace_ts_digits(t), 3);
	rt_trace_set_ts_digits(t, 6);
	assert_int_equal(rt_trace_ts_digits(t), 6);
	rt_trace_free(t);
}

/* --- argument blocks --- */

static void args_add_release_reuse(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	char k[] = "shmid", v[] = "0x1088018";
	rt_kv kv[] = {{k, v}, {"cpid", "17913 with spaces"}};
	uint32_t a = rt_trace_add_args(t, kv, 2);
	uint32_t b = rt_trace_add_args(t, kv + 1, 1);
	assert_int_not_equal(a, b);
	k[0] = v[0] = 'X'; /* copied */
	assert_int_equal(rt_trace_args_len(t, a), 2);
	const rt_kv *got = rt_trace_args_at(t, a);
	assert_string_equal(got[0].key, "shmid");
	assert_string_equal(got[0].value, "0x1088018");
	assert_string_equal(got[1].key, "cpid");
	assert_string_equal(got[1].value, "17913 with spaces");
	assert_int_equal(rt_trace_args_len(t, b), 1);

	rt_trace_release_args(t, a);
	assert_int_equal(rt_trace_args_len(t, a), 0);
	rt_trace_release_args(t, a); /* twice is harmless */
	uint32_t c = rt_trace_add_args(t, kv, 1);
	assert_int_equal(c, a); /* the released id is reused */
	uint32_t d = rt_trace_add_args(t, kv, 1);
	assert_int_not_equal(d, a); /* ... once only */
	assert_int_not_equal(d, b);
	assert_string_equal(rt_trace_args_at(t, c)[0].key, "Xhmid");
	assert_string_equal(rt_trace_args_at(t, b)[0].key, "cpid");
	/* out of range ids */
	assert_int_equal(rt_trace_args_len(t, 1000), 0);
	assert_null(rt_trace_args_at(t, 1000));
	rt_trace_free(t);
}

/* --- calls --- */

static rt_call mkcall(uint64_t index, uint8_t kind)
{
	rt_call c = {0};
	c.index = index;
	c.kind = kind;
	c.res_id = 0x1000 + index;
	c.size = index * 10;
	c.bt = c.args = RT_NONE;
	return c;
}

static void calls_append_kill_compact(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	for (uint64_t i = 1; i <= 10; i++) {
		rt_call c = mkcall(i, i % 3 ? RT_CALL_ALLOC : RT_CALL_FREE);
		rt_call *p = rt_trace_append_call(t, &c);
		assert_int_equal(p->index, i);
	}
	assert_int_equal(rt_trace_call_count(t), 10);
	assert_int_equal(rt_trace_dead_count(t), 0);
	rt_call *calls = rt_trace_calls(t);
	for (size_t i = 0; i < 10; i += 2)
		rt_trace_kill_call(t, &calls[i]); /* indices 1, 3, 5, 7, 9 */
	rt_trace_kill_call(t, &calls[0]);     /* already dead: not counted again */
	assert_int_equal(rt_trace_dead_count(t), 5);
	assert_int_equal(calls[0].kind, RT_CALL_DEAD);
	assert_int_equal(rt_trace_call_count(t), 10);

	assert_int_equal(rt_trace_compact(t), 5);
	assert_int_equal(rt_trace_call_count(t), 5);
	assert_int_equal(rt_trace_dead_count(t), 0);
	const rt_call *c = rt_trace_calls_const(t);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(c[i].index, 2 * i + 2);
		assert_int_equal(c[i].size, (2 * i + 2) * 10);
		assert_int_equal(c[i].kind, (2 * i + 2) % 3 ? RT_CALL_ALLOC : RT_CALL_FREE);
	}
	/* compacting again changes nothing */
	assert_int_equal(rt_trace_compact(t), 5);
	assert_int_equal(rt_trace_calls_const(t)[4].index, 10);
	rt_trace_free(t);
}

static void kill_releases_args(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	rt_kv kv[] = {{"a", "1"}};
	rt_call c = mkcall(1, RT_CALL_ALLOC);
	c.args = rt_trace_add_args(t, kv, 1);
	uint32_t id = c.args;
	rt_call *p = rt_trace_append_call(t, &c);
	rt_trace_kill_call(t, p);
	assert_int_equal(p->args, RT_NONE);
	assert_int_equal(rt_trace_args_len(t, id), 0);
	assert_int_equal(rt_trace_add_args(t, kv, 1), id);
	rt_trace_free(t);
}

static void calls_many_and_sort(void **state)
{
	(void)state;
	enum { N = 100000 };
	rt_trace *t = rt_trace_new();
	for (uint64_t i = 0; i < N; i++) {
		rt_call c = mkcall(N - i, RT_CALL_ALLOC);
		rt_trace_append_call(t, &c);
	}
	rt_call *calls = rt_trace_calls(t);
	for (size_t i = 0; i < N; i++)
		if (calls[i].index % 4)
			rt_trace_kill_call(t, &calls[i]);
	assert_int_equal(rt_trace_dead_count(t), N - N / 4);
	assert_int_equal(rt_trace_compact(t), N / 4);
	const rt_call *c = rt_trace_calls_const(t);
	for (size_t i = 1; i < N / 4; i++)
		assert_true(c[i].index < c[i - 1].index);
	rt_trace_sort_calls(t);
	c = rt_trace_calls_const(t);
	for (size_t i = 0; i < N / 4; i++)
		assert_int_equal(c[i].index, 4 * (i + 1));
	rt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(intern_equal_and_different),
		cmocka_unit_test(intern_stable_across_growth),
		cmocka_unit_test(strdup_copies),
		cmocka_unit_test(bt_interning),
		cmocka_unit_test(bt_many_survive_rehash),
		cmocka_unit_test(bt_tree_then_array),
		cmocka_unit_test(header_set_replace_lookup),
		cmocka_unit_test(header_filter_bits),
		cmocka_unit_test(resource_registry),
		cmocka_unit_test(resource_limit),
		cmocka_unit_test(other_registries),
		cmocka_unit_test(args_add_release_reuse),
		cmocka_unit_test(calls_append_kill_compact),
		cmocka_unit_test(kill_releases_args),
		cmocka_unit_test(calls_many_and_sort),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
