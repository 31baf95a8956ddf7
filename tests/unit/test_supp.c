/* The suppression library (rtrace/supp.h): valgrind's and LeakSanitizer's
 * wildcards, the reading of both formats (and of malformed files, with
 * their file:line:column messages), the matching of frame lines against
 * stacks (prefix, "...", match-leak-kinds, fun: on linkage names, src:,
 * obj:), and the application to a trace's findings in valgrind's order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rtrace/heapcheck.h"
#include "rtrace/supp.h"
#include "supp/supp_int.h"

#include <stdio.h>
#include <string.h>

static void wildcards(void **state)
{
	(void)state;
	assert_true(rt_supp_wildcard("malloc", "malloc"));
	assert_false(rt_supp_wildcard("malloc", "mallocx"));
	assert_true(rt_supp_wildcard("_ZN3app*", "_ZN3app10make_cacheEm"));
	assert_true(rt_supp_wildcard("*", ""));
	assert_true(rt_supp_wildcard("_Zna?", "_Znam"));
	assert_false(rt_supp_wildcard("_Zna?", "_Zna"));
	assert_true(rt_supp_wildcard("a*b*c", "aXXbYYc"));
	assert_false(rt_supp_wildcard("a*b*c", "aXXbYY"));
	assert_true(rt_supp_wildcard("x\\*y", "x*y"));
	assert_false(rt_supp_wildcard("x\\*y", "xzy"));
	assert_false(rt_supp_wildcard("x\\", "x"));
	assert_true(rt_supp_wildcard("???", "???"));
	/* a star after a failed try takes more; one before it never needs to */
	assert_true(rt_supp_wildcard("*ab", "aab"));
	assert_true(rt_supp_wildcard("a*?b*c", "aXbcbXc"));
	assert_false(rt_supp_wildcard("a*?b", "ab"));
	assert_true(rt_supp_wildcard("*\\*", "x*"));
	assert_false(rt_supp_wildcard("*\\*", "xy"));
	assert_true(rt_supp_wildcard("**a**", "bab"));
	/* many stars and no match: a time in the product of the lengths (the
	 * recursive matcher ran for minutes on a fuzzed pattern like this) */
	char pat[400], str[400];
	memset(pat, '*', 300);
	strcpy(pat + 300, "x*y*z");
	memset(str, 'a', 350);
	str[350] = '\0';
	assert_false(rt_supp_wildcard(pat, str));
	for (int i = 0; i < 150; i++)
		pat[2 * i] = 'a', pat[2 * i + 1] = '*';
	strcpy(pat + 300, "b");
	assert_false(rt_supp_wildcard(pat, str));
	str[349] = 'b';
	assert_true(rt_supp_wildcard(pat, str));
}

static void lsan_templates(void **state)
{
	(void)state;
	assert_true(rt_supp_lsan_match("make_cache", "app::make_cache(unsigned long)"));
	assert_true(rt_supp_lsan_match("^app::", "app::make_cache(unsigned long)"));
	assert_false(rt_supp_lsan_match("^make", "app::make_cache(unsigned long)"));
	assert_true(rt_supp_lsan_match("c_alloc$", "c_alloc"));
	assert_false(rt_supp_lsan_match("^c_alloc$", "my_c_alloc"));
	assert_true(rt_supp_lsan_match("*/libfoo.so$", "/usr/lib/libfoo.so"));
	assert_true(rt_supp_lsan_match("a*c", "xxabbbcxx"));
	assert_false(rt_supp_lsan_match("a*c", "xxcbbbaxx"));
	assert_true(rt_supp_lsan_match("leak*$", "leak_a"));
	assert_false(rt_supp_lsan_match("anything", ""));
	assert_false(rt_supp_lsan_match("anything", NULL));
	assert_true(rt_supp_lsan_match("", "x"));
}

static rt_supp_set *read_ok(const char *text)
{
	rt_supp_set *s = rt_supp_new();
	rt_diag err;
	int rc = rt_supp_read_mem(s, text, strlen(text), "t.supp", &err);
	if (rc) {
		char msg[1024];
		rt_diag_format(&err, msg, sizeof msg);
		fail_msg("%s", msg);
	}
	return s;
}

static const char valgrind_file[] =
	"# comment\n"
	"{\n"
	"   leak_def\n"
	"   Memcheck:Leak\n"
	"   match-leak-kinds: definite,possible\n"
	"   fun:malloc\n"
	"   fun:_ZN3app*\n"
	"}\n"
	"  # indented comment\n"
	"{\n"
	"   other_tool\n"
	"   Helgrind:Race\n"
	"   fun:x\n"
	"}\n"
	"{\n"
	"   leak_any\r\n"
	"   Memcheck,Addrcheck:Leak\n"
	"   fun:calloc\n"
	"   ...\n"
	"   src:app.c:12\n"
	"}\n"
	"{\n"
	"   free_obj\n"
	"   Memcheck:Free\n"
	"   fun:free\n"
	"   obj:*/libc.so.*\n"
	"}\n"
	"{\n"
	"   param\n"
	"   Memcheck:Param\n"
	"   write(buf)\n"
	"   fun:write\n"
	"}\n";

static void reads_valgrind(void **state)
{
	(void)state;
	rt_supp_set *s = read_ok(valgrind_file);
	assert_int_equal(rt_supp_count(s), 4); /* Helgrind's left out */
	static const struct {
		const char *name, *kind;
		uint32_t line;
	} want[] = {{"leak_def", "Leak", 3}, {"leak_any", "Leak", 16}, {"free_obj", "Free", 23}, {"param", "Param", 29}};
	for (size_t i = 0; i < 4; i++) {
		rt_supp_info in;
		rt_supp_get(s, i, &in);
		assert_string_equal(in.name, want[i].name);
		assert_string_equal(in.kind, want[i].kind);
		assert_string_equal(in.file, "t.supp");
		assert_int_equal(in.line, want[i].line);
		assert_false(in.lsan);
	}
	rt_supp_free(s);
}

static const rt_supp_frame cxx[] = {
	{"malloc", NULL, "/lib/librtrace-preload.so", NULL, 0},
	{"_ZN3app10make_cacheEm", "app::make_cache(unsigned long)", "/bin/app", "/src/app.cpp", 17},
	{"main", NULL, "/bin/app", "/src/app.cpp", 40},
};
static const rt_supp_frame c[] = {
	{"calloc", NULL, "/lib/librtrace-preload.so", NULL, 0},
	{"leak_b", NULL, "/bin/app", "/src/app.c", 11},
	{NULL, NULL, NULL, NULL, 0},
	{"helper", NULL, "/bin/app", "/src/app.c", 12},
	{"main", NULL, "/bin/app", "/src/app.c", 30},
};
static const rt_supp_frame libc_free[] = {
	{"free", NULL, "/lib/librtrace-preload.so", NULL, 0},
	{"fclose", NULL, "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL, 0},
};

/* "..." between frame lines, many of them, against a deep stack that
 * has no frame the last line names: false, at once (the recursive
 * matcher's time grew as the stack's depth to the number of "...") */
static void many_dots(void **state)
{
	(void)state;
	char text[4096];
	size_t k = (size_t)snprintf(text, sizeof text, "{\n dots\n Memcheck:Leak\n");
	for (int i = 0; i < 11; i++)
		k += (size_t)snprintf(text + k, sizeof text - k, " ...\n fun:f\n");
	snprintf(text + k, sizeof text - k, " ...\n fun:nowhere\n}\n");
	rt_supp_set *s = read_ok(text);
	rt_supp_frame deep[200];
	for (int i = 0; i < 200; i++)
		deep[i] = (rt_supp_frame){"f", NULL, "/bin/app", NULL, 0};
	assert_false(rt_supp_matches(s, 0, "Leak", 1, deep, 200));
	deep[150].fn = "nowhere";
	assert_true(rt_supp_matches(s, 0, "Leak", 1, deep, 200));
	deep[5].fn = "nowhere"; /* too early: 11 f before it */
	deep[150].fn = "f";
	assert_false(rt_supp_matches(s, 0, "Leak", 1, deep, 200));
	rt_supp_free(s);
}

static void matches_valgrind(void **state)
{
	(void)state;
	rt_supp_set *s = read_ok(valgrind_file);
	/* leak_def: kinds definite and possible, a prefix of the stack */
	assert_true(rt_supp_matches(s, 0, "Leak", RT_LEAK_DEFINITE, cxx, 3));
	assert_true(rt_supp_matches(s, 0, "Leak", RT_LEAK_POSSIBLE, cxx, 2));
	assert_false(rt_supp_matches(s, 0, "Leak", RT_LEAK_INDIRECT, cxx, 3));
	assert_false(rt_supp_matches(s, 0, "Leak", RT_LEAK_DEFINITE, cxx, 1)); /* stack too short */
	assert_false(rt_supp_matches(s, 0, "Free", 0, cxx, 3));
	assert_false(rt_supp_matches(s, 0, "Leak", RT_LEAK_DEFINITE, c, 5));
	/* leak_any: every kind; "..." over frames, the unknown one included */
	for (unsigned k = RT_LEAK_DEFINITE; k <= RT_LEAK_REACHABLE; k++)
		assert_true(rt_supp_matches(s, 1, "Leak", k, c, 5));
	assert_false(rt_supp_matches(s, 1, "Leak", RT_LEAK_DEFINITE, c, 3)); /* src:app.c:12 cut off */
	/* free_obj */
	assert_true(rt_supp_matches(s, 2, "Free", 0, libc_free, 2));
	assert_false(rt_supp_matches(s, 2, "Free", 0, c, 5));
	rt_supp_free(s);
}

static void frame_lines(void **state)
{
	(void)state;
	rt_supp_set *s = read_ok("{\n n1\n Memcheck:Leak\n fun:malloc\n ...\n}\n"
				 "{\n n2\n Memcheck:Leak\n ...\n fun:main\n ...\n}\n"
				 "{\n n3\n Memcheck:Leak\n fun:calloc\n fun:???\n}\n"
				 "{\n n4\n Memcheck:Leak\n fun:calloc\n fun:leak_b\n obj:???\n}\n"
				 "{\n n5\n Memcheck:Leak\n fun:calloc\n fun:leak_b\n fun:\\?\\?\\?\n}\n"
				 "{\n n6\n Memcheck:Leak\n ...\n src:app.c\n ...\n src:app.c:12\n}\n"
				 "{\n n7\n Memcheck:Leak\n fun:app::make_cache*\n}\n"
				 "{\n n8\n Memcheck:Leak\n ...\n ...\n fun:_ZN3app10make_cacheEm\n fun:main\n}\n");
	assert_true(rt_supp_matches(s, 0, "Leak", 1, cxx, 3));
	assert_true(rt_supp_matches(s, 1, "Leak", 1, c, 5));
	assert_true(rt_supp_matches(s, 1, "Leak", 1, cxx, 3));
	assert_false(rt_supp_matches(s, 2, "Leak", 1, c, 5)); /* '?' is one character: not leak_b */
	assert_true(rt_supp_matches(s, 3, "Leak", 1, c, 5));  /* the unknown frame's obj is "???" */
	assert_false(rt_supp_matches(s, 4, "Leak", 1, c, 2));
	assert_true(rt_supp_matches(s, 4, "Leak", 1, c, 3));  /* its function too */
	assert_true(rt_supp_matches(s, 5, "Leak", 1, c, 5));  /* base names, line 12 */
	assert_false(rt_supp_matches(s, 6, "Leak", 1, cxx, 3)); /* fun: is the linkage name */
	assert_true(rt_supp_matches(s, 7, "Leak", 1, cxx, 3));
	rt_supp_free(s);
}

static void reads_lsan(void **state)
{
	(void)state;
	rt_supp_set *s = read_ok("# LeakSanitizer\n\nleak:make_cache\n  leak:^main$  \nleak:*/libc.so*\nleak:app.c\n");
	assert_int_equal(rt_supp_count(s), 4);
	rt_supp_info in;
	rt_supp_get(s, 1, &in);
	assert_string_equal(in.name, "^main$");
	assert_int_equal(in.line, 4);
	assert_true(in.lsan);
	assert_string_equal(in.kind, "Leak");
	assert_true(rt_supp_matches(s, 0, "Leak", RT_LEAK_REACHABLE, cxx, 3)); /* the demangled name */
	assert_true(rt_supp_matches(s, 1, "Leak", RT_LEAK_DEFINITE, c, 5));  /* any frame */
	assert_false(rt_supp_matches(s, 1, "Leak", RT_LEAK_DEFINITE, c, 4));
	assert_true(rt_supp_matches(s, 2, "Leak", RT_LEAK_DEFINITE, libc_free, 2)); /* module */
	assert_true(rt_supp_matches(s, 3, "Leak", RT_LEAK_DEFINITE, c, 5));  /* file */
	assert_false(rt_supp_matches(s, 3, "Free", 0, c, 5));               /* leaks only */
	rt_supp_free(s);
}

static void malformed(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"{\n  x\n  Memcheck:Leak\n  fun:a\n", "t.supp:5:1: expected '}' closing the suppression opened at line 1"},
		{"{\n  x\n  Memcheck:Leak\n  fun:a", "t.supp:4:8: expected '}' closing"},
		{"{\n", "t.supp:2:1: expected the suppression's name, found end of file"},
		{"{\n}\n", "t.supp:2:1: expected the suppression's name, found '}'"},
		{"{\n x\n}\n", "t.supp:3:1: expected 'Tool:Kind' (such as Memcheck:Leak), found '}'"},
		{"{\n x\n Leak\n", "t.supp:3:2: expected 'Tool:Kind'"},
		{"{\n x\n Memcheck:Lek\n", "t.supp:3:11: expected a memcheck suppression kind"},
		{"{\n x\n Memcheck:Leak\n match-leak-kinds:  definite,\n fun:a\n}\n",
		 "t.supp:4:21: expected leak kinds (definite, indirect, possible, reachable separated by ',', "
		 "or all or none), found 'definite,'"},
		{"{\n x\n Memcheck:Leak\n match-leak-kinds: some\n fun:a\n}\n", "t.supp:4:20: expected leak kinds"},
		{"{\n x\n Memcheck:Free\n fn:a\n}\n", "t.supp:4:2: expected a frame line (fun:NAME, obj:NAME, "
						       "src:FILE[:LINE] or ...), found 'fn:a'"},
		{"{\n x\n Memcheck:Free\n src:a.c:x\n}\n", "t.supp:4:2: expected a frame line"},
		{"{\n x\n Memcheck:Free\n src:a.c:0\n}\n", "t.supp:4:2: expected a frame line"},
		{"{\n x\n Memcheck:Free\n ...\n ...\n}\n", "t.supp:6:1: expected a fun:, obj: or src: frame line besides '...'"},
		{"{\n x\n Memcheck:Free\n}\n", "t.supp:4:1: expected a frame line (fun:, obj:, src: or ...) before '}'"},
		{"{\n x\n Memcheck:Param\n}\n", "t.supp:4:1: expected Memcheck:Param's extra line, found '}'"},
		{"{\n x\n Helgrind:Race\n fun:a\n", "t.supp:5:1: expected '}' closing the suppression opened at line 1"},
		{"{\n x\n Memcheck:Free\n fun:a\n}\nfun:b\n", "t.supp:6:1: expected '{' starting a suppression"},
		{"leak:a\n# c\n  race:b\n", "t.supp:3:3: expected '{' (a Valgrind suppression) or 'leak:PATTERN' "
					     "(LeakSanitizer), found 'race:b'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		rt_supp_set *s = rt_supp_new();
		rt_diag err;
		char msg[1024];
		assert_int_equal(rt_supp_read_mem(s, cases[i].text, strlen(cases[i].text), "t.supp", &err), -1);
		rt_diag_format(&err, msg, sizeof msg);
		if (strncmp(msg, cases[i].want, strlen(cases[i].want)))
			fail_msg("case %zu: got '%s', want '%s'", i, msg, cases[i].want);
		rt_supp_free(s);
	}
	/* empty files and files of comments hold no suppression, without error */
	rt_supp_set *s = read_ok("\n# nothing\n   \n");
	assert_int_equal(rt_supp_count(s), 0);
	rt_supp_free(s);
}

/* A trace with one frame per backtrace: app's function fn at addr. */
static uint32_t bt_of(rt_trace *t, uint64_t addr, const char *fn)
{
	rt_frame f = {addr, RT_NONE};
	rt_srcloc l = {rt_trace_intern(t, fn, strlen(fn)), RT_NONE, 0, 0, 0};
	rt_trace_set_frame_info(t, &f, rt_trace_intern(t, "/bin/app", 8), &l, 1);
	return rt_trace_intern_bt(t, &f, 1);
}

static void applies_in_valgrind_order(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	uint32_t malloc_fn = rt_trace_intern(t, "malloc", 6), free_fn = rt_trace_intern(t, "free", 4);
	uint32_t a = bt_of(t, 0x1000, "leak_a"), b = bt_of(t, 0x2000, "leak_b"), f = bt_of(t, 0x3000, "drop");
	rt_leak_summary sum = {.mode = RT_LEAK_CHECK_FULL};
	for (int i = 0; i < 3; i++)
		rt_trace_add_leak(t, &(rt_leak){.size = 100, .fn = malloc_fn, .bt = a, .kind = RT_LEAK_DEFINITE});
	rt_trace_add_leak(t, &(rt_leak){.size = 10, .indirect = 5, .fn = malloc_fn, .bt = b, .kind = RT_LEAK_DEFINITE});
	rt_trace_add_leak(t, &(rt_leak){.size = 5, .fn = malloc_fn, .bt = b, .kind = RT_LEAK_INDIRECT});
	sum.bytes[RT_LEAK_DEFINITE] = 310, sum.blocks[RT_LEAK_DEFINITE] = 4;
	sum.bytes[RT_LEAK_INDIRECT] = 5, sum.blocks[RT_LEAK_INDIRECT] = 1;
	rt_trace_set_leak_summary(t, &sum);
	for (int i = 0; i < 2; i++)
		rt_trace_add_heap_error(t, &(rt_heap_error){.fn = free_fn, .bt = f, .kind = RT_ERR_INVALID_FREE,
							   .alloc_fn = RT_NONE, .alloc_bt = RT_NONE,
							   .free_fn = RT_NONE, .free_bt = RT_NONE});
	/* "all" and "b_def" both match leak_b's definite record: the later
	 * block is searched first; "all" then hides leak_a's and moves first */
	rt_supp_set *s = read_ok("{\n all\n Memcheck:Leak\n match-leak-kinds: definite\n fun:malloc\n}\n"
				 "{\n b_def\n Memcheck:Leak\n fun:malloc\n fun:leak_b\n}\n"
				 "{\n frees\n Memcheck:Free\n fun:free\n fun:drop\n}\n");
	rt_supp_apply(s, t, NULL);
	const rt_leak_summary *r = rt_trace_leak_summary(t);
	assert_int_equal(r->bytes[RT_LEAK_DEFINITE], 0);
	assert_int_equal(r->blocks[RT_LEAK_DEFINITE], 0);
	assert_int_equal(r->bytes[RT_LEAK_INDIRECT], 0); /* b_def: every kind */
	assert_int_equal(r->suppressed_bytes, 315);
	assert_int_equal(r->suppressed_blocks, 5);
	for (size_t i = 0; i < rt_trace_leak_count(t); i++)
		assert_true(rt_trace_leak_at(t, i)->suppressed);
	assert_true(rt_trace_heap_error_at(t, 0)->suppressed && rt_trace_heap_error_at(t, 1)->suppressed);
	assert_int_equal(rt_trace_supp_used_count(t), 3);
	static const struct {
		const char *name;
		uint64_t count, bytes, blocks;
	} want[] = {{"all", 1, 300, 3}, {"b_def", 2, 20, 2}, {"frees", 2, 0, 0}};
	for (size_t i = 0; i < 3; i++) {
		const rt_supp_used *u = rt_trace_supp_used_at(t, i);
		assert_string_equal(u->name, want[i].name);
		assert_int_equal(u->count, want[i].count);
		assert_int_equal(u->bytes, want[i].bytes);
		assert_int_equal(u->blocks, want[i].blocks);
	}
	rt_supp_free(s);
	rt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wildcards),
		cmocka_unit_test(many_dots),
		cmocka_unit_test(lsan_templates),
		cmocka_unit_test(reads_valgrind),
		cmocka_unit_test(matches_valgrind),
		cmocka_unit_test(frame_lines),
		cmocka_unit_test(reads_lsan),
		cmocka_unit_test(malformed),
		cmocka_unit_test(applies_in_valgrind_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
