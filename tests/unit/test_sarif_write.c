/* Unit tests of the SARIF writer (rt_sarif_write_mem) on Valgrind
 * documents built by hand: one result per error with its tool/kind as
 * ruleId and each rule once; the location at the first frame in the
 * user's code (past valgrind's malloc and libc, under the source root,
 * relative with uriBaseId, else an absolute file: URI); every stack a
 * code flow; JSON escaping of any byte; fingerprints that ignore
 * addresses, lines and directories and tell repeated findings apart by
 * rank. tests/cli/sarif.sh runs Microsoft's validator on real logs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrace/sarif.h"
#include "rtrace/vgdoc.h"

static uint32_t id(rt_trace *t, const char *s)
{
	return rt_trace_intern(t, s, strlen(s));
}

/* One frame at addr: module mod, function fn in file:line (fn NULL:
 * nothing but the module known). */
static rt_frame frame(rt_trace *t, uint64_t addr, const char *mod, const char *fn, const char *file,
		      uint32_t line)
{
	rt_frame f = {addr, RT_NONE};
	rt_srcloc l = {fn ? id(t, fn) : RT_NONE, file ? id(t, file) : RT_NONE, line, 0};
	rt_trace_set_frame_info(t, &f, id(t, mod), &l, fn ? 1 : 0);
	return f;
}

#define VGPRELOAD "/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so"

/* malloc <- strdup (libc, with its debug source) <- make (dir/lib/a.c)
 * <- main (dir/main.c), at addresses moved by base, lines by shift. */
static uint32_t leak_stack(rt_trace *t, uint64_t base, uint32_t shift, const char *dir)
{
	char a[256], m[256];
	snprintf(a, sizeof a, "%s/lib/a.c", dir);
	snprintf(m, sizeof m, "%s/main.c", dir);
	rt_frame f[4] = {
		frame(t, base + 0x10, VGPRELOAD, "malloc", "/build/valgrind/coregrind/vg_replace_malloc.c", 381),
		frame(t, base + 0x20, "/lib/x86_64-linux-gnu/libc.so.6", "strdup", "./string/strdup.c", 42),
		frame(t, base + 0x30, "/bin/app", "make", a, 10 + shift),
		frame(t, base + 0x40, "/bin/app", "main", m, 5 + shift),
	};
	return rt_trace_intern_bt(t, f, 4);
}

static void add_leak(rt_trace *t, uint32_t root, uint32_t bt, const char *text)
{
	uint32_t e = rt_vgxml_add(t, root, "error");
	rt_vgxml_add_text(t, e, "kind", "Leak_DefinitelyLost", 19);
	uint32_t xw = rt_vgxml_add(t, e, "xwhat");
	rt_vgxml_add_text(t, xw, "text", text, strlen(text));
	rt_vgxml_add_text(t, xw, "leakedbytes", "300", 3);
	rt_vgxml_add_stack(t, e, bt);
}

/* A memcheck document: two leaks with the same stack (loss records of
 * two programs' runs would not, but a hand-made model may), and an
 * invalid free with the free'd block's stack. */
static rt_trace *model(uint64_t base, uint32_t shift, const char *dir)
{
	rt_trace *t = rt_trace_new();
	uint32_t root = rt_vgxml_add(t, RT_NONE, "valgrindoutput");
	rt_vgxml_add_text(t, root, "protocolversion", "4", 1);
	rt_vgxml_add_text(t, root, "protocoltool", "memcheck", 8);
	add_leak(t, root, leak_stack(t, base, shift, dir), "300 bytes in 3 blocks are definitely lost in loss record 2 of 3");
	add_leak(t, root, leak_stack(t, base + 0x1000, shift, dir), "1 bytes in 1 blocks are definitely lost in loss record 1 of 3");
	uint32_t e = rt_vgxml_add(t, root, "error");
	rt_vgxml_add_text(t, e, "kind", "InvalidFree", 11);
	rt_vgxml_add_text(t, e, "what", "Invalid \"free\" \xff", 16);
	rt_frame g[2] = {frame(t, base + 0x50, VGPRELOAD, "free", NULL, 0), frame(t, base + 0x60, "/bin/app", NULL, NULL, 0)};
	rt_vgxml_add_stack(t, e, rt_trace_intern_bt(t, g, 2));
	rt_vgxml_add_text(t, e, "auxwhat", "Address 0x1 is 0 bytes inside a block of size 3 free'd", 54);
	rt_vgxml_add_stack(t, e, leak_stack(t, base, shift, dir));
	return t;
}

static char *write_model(uint64_t base, uint32_t shift, const char *dir, const char *root)
{
	rt_trace *t = model(base, shift, dir);
	rt_sarif_write_opts o = {root};
	size_t len;
	const rt_trace *const v[1] = {t};
	char *s = rt_sarif_write_mem(v, 1, &o, &len);
	assert_non_null(s);
	assert_int_equal(strlen(s), len);
	rt_trace_free(t);
	return s;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* The i-th fingerprint's value, into buf. */
static const char *fingerprint(const char *s, int i, char *buf, size_t len)
{
	const char *p = s;
	for (int k = 0; k <= i; k++) {
		p = strstr(p, "\"rtrace/stack/v1\": \"");
		assert_non_null(p);
		p += 20;
	}
	size_t n = strcspn(p, "\"");
	assert_true(n < len);
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

static void test_results_and_rules(void **state)
{
	(void)state;
	char *s = write_model(0x400000, 0, "/src/proj", "/src/proj");
	assert_non_null(strstr(s, "\"version\": \"2.1.0\""));
	assert_int_equal(count(s, "\"ruleId\": "), 3);
	assert_int_equal(count(s, "\"id\": \"memcheck/Leak_DefinitelyLost\""), 1);
	assert_int_equal(count(s, "\"id\": \"memcheck/InvalidFree\""), 1);
	assert_int_equal(count(s, "\"ruleIndex\": 1"), 1);
	assert_non_null(strstr(s, "\"text\": \"300 bytes in 3 blocks are definitely lost in loss record 2 of 3\""));
	assert_non_null(strstr(s, "\"security-severity\": \"8.0\""));
	/* the user's frame, relative to the root */
	assert_non_null(strstr(s, "\"locations\": [\n            {\n              \"physicalLocation\": {\n"
				  "                \"artifactLocation\": {\n                  \"uri\": \"lib/a.c\",\n"
				  "                  \"uriBaseId\": \"SRCROOT\"\n                },\n"
				  "                \"region\": {\n                  \"startLine\": 10\n"));
	assert_non_null(strstr(s, "\"uri\": \"file:///src/proj/\""));
	/* four code flows (leak, leak, free + free'd block), outermost first */
	assert_int_equal(count(s, "\"threadFlows\""), 4);
	assert_non_null(strstr(s, "\"text\": \"main (main.c:5)\""));
	assert_non_null(strstr(s, "\"text\": \"??? (in /bin/app)\""));
	assert_int_equal(count(s, "\"relatedLocations\""), 1);
	/* escaped: the quotes, the byte that is not UTF-8 */
	assert_non_null(strstr(s, "\"text\": \"Invalid \\\"free\\\" \\\\xff\""));
	free(s);
}

static void test_without_root(void **state)
{
	(void)state;
	char *s = write_model(0x400000, 0, "/src/proj", NULL);
	assert_null(strstr(s, "SRCROOT"));
	assert_non_null(strstr(s, "\"uri\": \"file:///src/proj/lib/a.c\""));
	free(s);
	/* a root the files are not under: still past libc, absolute */
	s = write_model(0x400000, 0, "/src/proj", "/elsewhere");
	assert_non_null(strstr(s, "\"uri\": \"file:///src/proj/lib/a.c\""));
	assert_null(strstr(s, "\"startLine\": 42\n                }\n              },\n              \"logicalLocations\": [\n"
			      "                {\n                  \"fullyQualifiedName\": \"strdup\""));
	free(s);
}

static void test_fingerprints(void **state)
{
	(void)state;
	char *a = write_model(0x400000, 0, "/src/proj", "/src/proj");
	char *b = write_model(0x7f0000000000, 3, "/home/ci/checkout", "/home/ci/checkout");
	char fa[64], fb[64], f2[64];
	for (int i = 0; i < 3; i++)
		assert_string_equal(fingerprint(a, i, fa, sizeof fa), fingerprint(b, i, fb, sizeof fb));
	/* the two leaks look the same: ranked */
	fingerprint(a, 0, fa, sizeof fa);
	fingerprint(a, 1, f2, sizeof f2);
	assert_int_equal(strlen(fa), 34);
	assert_string_equal(fa + 32, ":1");
	assert_string_equal(f2 + 32, ":2");
	assert_memory_equal(fa, f2, 32);
	/* another kind, another identity */
	fingerprint(a, 2, f2, sizeof f2);
	assert_memory_not_equal(fa, f2, 32);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_results_and_rules),
		cmocka_unit_test(test_without_root),
		cmocka_unit_test(test_fingerprints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
