/* Unit tests of the text-protocol writer (rt_text_write_mem): the exact
 * layout of sp-rtrace's post-processor, and read/write round trips of the
 * conformance fixtures (directory from the FIXTURES environment variable,
 * as for the CLI tests: FIXTURES/sp-rtrace/postproc). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_util.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rtrace/filter.h"
#include "rtrace/text.h"

#define HDR "version=2.0, \n"

static rt_trace *read_ok(const char *text, size_t len)
{
	rt_trace *t = rt_trace_new();
	rt_diag err;
	if (rt_text_read_mem(t, text, len, "mem", NULL, NULL, &err) != 0)
		fail_msg("read failed: %" PRIu64 ":%u: %s", err.line, err.col, err.msg);
	return t;
}

static rt_trace *read_str(const char *text)
{
	return read_ok(text, strlen(text));
}

static char *write_str(const rt_trace *t, const rt_write_opts *o)
{
	size_t len;
	char *s = rt_text_write_mem(t, o, &len);
	assert_non_null(s);
	assert_int_equal(strlen(s), len);
	return s;
}

/* Reads `in`, writes it with `o` and compares with `want`. */
static void check_rewrite(const char *in, const rt_write_opts *o, const char *want)
{
	rt_trace *t = read_str(in);
	char *s = write_str(t, o);
	assert_string_equal(s, want);
	free(s);
	rt_trace_free(t);
}

static const rt_write_opts plain = {0, false, RT_SORT_SIZE_ASC, false, true};

/* --- header and registries --- */

static void header_order_and_filter(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	rt_trace_set_header(t, "origin", "sp-rtrace 1.6");
	rt_trace_set_header(t, "foo", "1");
	rt_trace_set_header(t, "pid", "17913");
	rt_trace_set_header(t, "filter", "leaks|compress");
	rt_trace_set_header(t, "backtrace depth", "10");
	rt_trace_set_header(t, "process", "../bin/x");
	rt_trace_set_header(t, "timestamp", "2011.6.16 15:49:48");
	rt_trace_set_header(t, "arch", "i686");
	rt_trace_set_header(t, "version", "2.0");
	rt_trace_set_header(t, "bar", "2");
	static const struct { unsigned bits; const char *filter; } cases[] = {
		{0, ""},
		{RT_FILTER_LEAKS, "filter=leaks, "},
		{RT_FILTER_RESOLVE, "filter=resolve, "},
		{RT_FILTER_LEAKS | RT_FILTER_COMPRESS, "filter=leaks|compress, "},
		{RT_FILTER_COMPRESS | RT_FILTER_RESOLVE, "filter=compress|resolve, "},
		{RT_FILTER_LEAKS | RT_FILTER_COMPRESS | RT_FILTER_RESOLVE,
		 "filter=leaks|compress|resolve, "},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		rt_write_opts o = plain;
		o.filter_bits = cases[i].bits;
		char want[512];
		snprintf(want, sizeof want,
			 "version=2.0, arch=i686, timestamp=2011.6.16 15:49:48, process=../bin/x, "
			 "pid=17913, %sbacktrace depth=10, origin=sp-rtrace 1.6, foo=1, bar=2, \n",
			 cases[i].filter);
		char *s = write_str(t, &o);
		assert_string_equal(s, want);
		free(s);
	}
	rt_trace_free(t);

	/* an empty header is still a line */
	t = rt_trace_new();
	char *s = write_str(t, &plain);
	assert_string_equal(s, "\n");
	free(s);
	rt_trace_free(t);
}

static void registries_layout(void **state)
{
	(void)state;
	const char *in = HDR
			 "@ 1 : first context\n"
			 "@ 1f : second context\n"
			 "<1> : segment (shared memory segment) [refcount]\n"
			 "<2> : address (shared memory attachments)\n"
			 "<4> : control (shared memory segment control operation)\n"
			 ": /lib/libc-2.12.1.so => 0x136000-0x28d000\n"
			 ": /bin/x => 0x8048000-0x8049000\n";
	const char *regs = "<1> : segment (shared memory segment) [refcount]\n"
			   "<2> : address (shared memory attachments)\n"
			   "<4> : control (shared memory segment control operation)\n"
			   ": /lib/libc-2.12.1.so => 0x136000-0x28d000\n"
			   ": /bin/x => 0x8048000-0x8049000\n";
	char want[1024];
	snprintf(want, sizeof want, "%s@ 1 : first context\n@ 1f : second context\n%s", HDR, regs);
	check_rewrite(in, &plain, want);
	/* contexts are left out on request (sp-rtrace does after -C) */
	rt_write_opts o = plain;
	o.contexts = false;
	snprintf(want, sizeof want, "%s%s", HDR, regs);
	check_rewrite(in, &o, want);
}

/* One live resource type: printed as <1>, and call lines omit it. */
static void single_resource_renumbered(void **state)
{
	(void)state;
	const char *in = HDR
			 "<1> : memory (memory allocation in bytes)\n"
			 "<4> : fd (file descriptors) [refcount]\n"
			 "1. open<fd>(1) = 0x3\n\n"
			 "2. malloc<memory>(8) = 0x10\n\n"
			 "3. close<fd>(0x3)\n\n";
	/* both live: types shown */
	check_rewrite(in, &plain,
		      HDR
		      "<1> : memory (memory allocation in bytes)\n"
		      "<4> : fd (file descriptors) [refcount]\n"
		      "1. open<fd>(1) = 0x3\n\n"
		      "2. malloc<memory>(8) = 0x10\n\n"
		      "3. close<fd>(0x3)\n\n");

	/* memory filtered out: fd is alone */
	rt_trace *t = read_str(in);
	rt_select_resources(t, 4);
	rt_call *calls = rt_trace_calls(t);
	for (size_t i = 0; i < rt_trace_call_count(t); i++)
		if (!rt_select_resource(t, &calls[i]))
			rt_trace_kill_call(t, &calls[i]);
	rt_trace_compact(t);
	char *s = write_str(t, &plain);
	assert_string_equal(s, HDR
			    "<1> : fd (file descriptors) [refcount]\n"
			    "1. open(1) = 0x3\n\n"
			    "3. close(0x3)\n\n");
	free(s);
	rt_trace_free(t);

	/* a trace with a single type registered as <2> */
	check_rewrite(HDR "<2> : memory (bytes)\n1. malloc(8) = 0x10\n\n2. free<memory>(0x10)\n\n",
		      &plain,
		      HDR "<1> : memory (bytes)\n1. malloc(8) = 0x10\n\n2. free(0x10)\n\n");
}

/* --- call records --- */

static void call_record_layout(void **state)
{
	(void)state;
	check_rewrite(HDR
		      "1. @3 [14:54:26.319] malloc(24) = 0x10\n"
		      "\t$shmid = 0x1088018\n"
		      "\t$cpid = 17913\n"
		      "\t0x8048526 zero() from /bin/x\n"
		      "\t0x1 f() at a.c:12\n"
		      "\t0xabcdef\n"
		      "\n"
		      "2. @1f free(0x10)\n"
		      "\n"
		      "3. operator new[](0) = 0x0\n"
		      "\t0x1\n"
		      "\n",
		      &plain,
		      HDR
		      "1. @3 [14:54:26.319] malloc(24) = 0x10\n"
		      "\t$shmid = 0x1088018\n"
		      "\t$cpid = 17913\n"
		      "\t0x8048526 zero() from /bin/x\n"
		      "\t0x1 f() at a.c:12\n"
		      "\t0xabcdef\n"
		      "\n"
		      "2. @1f free(0x10)\n"
		      "\n"
		      "3. operator new[](0) = 0x0\n"
		      "\t0x1\n"
		      "\n");
}

static void calls_built_in_memory(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	rt_trace_set_header(t, "version", "2.0");
	rt_frame f[] = {{0xdeadbeef, RT_NONE}, {0x10, rt_trace_intern(t, "main() at m.c:3", 15)}};
	rt_kv kv[] = {{"fd", "3"}};
	rt_call c = {0};
	c.index = 42;
	c.res_id = 0xABC;
	c.size = 18446744073709551615ULL;
	c.context = 0xff;
	c.fn = rt_trace_intern(t, "malloc", 6);
	c.bt = rt_trace_intern_bt(t, f, 2);
	c.args = rt_trace_add_args(t, kv, 1);
	c.kind = RT_CALL_ALLOC;
	rt_trace_append_call(t, &c);
	c.index = 43;
	c.kind = RT_CALL_FREE;
	c.fn = rt_trace_intern(t, "free", 4);
	c.context = 0;
	c.bt = RT_NONE; /* no backtrace at all */
	c.args = RT_NONE;
	rt_trace_append_call(t, &c);
	char *s = write_str(t, &plain);
	assert_string_equal(s, "version=2.0, \n"
			       "42. @ff malloc(18446744073709551615) = 0xabc\n"
			       "\t$fd = 3\n"
			       "\t0xdeadbeef\n"
			       "\t0x10 main() at m.c:3\n"
			       "\n"
			       "43. free(0xabc)\n"
			       "\n");
	free(s);
	/* dead calls are not written */
	rt_trace_kill_call(t, &rt_trace_calls(t)[0]);
	s = write_str(t, &plain);
	assert_string_equal(s, "version=2.0, \n43. free(0xabc)\n\n");
	free(s);
	rt_trace_free(t);
}

static void timestamps(void **state)
{
	(void)state;
	const char *in3 = HDR "1. [14:54:26.319] malloc(1) = 0x1\n\n"
			      "2. [00:00:00.005] malloc(1) = 0x2\n\n"
			      "3. [23:59:59.999] free(0x1)\n\n";
	check_rewrite(in3, &plain, in3);
	/* one six-digit timestamp switches the whole trace to six digits */
	check_rewrite(HDR "1. [14:54:26.319] malloc(1) = 0x1\n\n"
		      "2. [00:00:00.000005] malloc(1) = 0x2\n\n",
		      &plain,
		      HDR "1. [14:54:26.319000] malloc(1) = 0x1\n\n"
		      "2. [00:00:00.000005] malloc(1) = 0x2\n\n");

	rt_trace *t = rt_trace_new();
	rt_call c = {0};
	c.index = 1;
	c.kind = RT_CALL_FREE;
	c.fn = rt_trace_intern(t, "free", 4);
	c.bt = c.args = RT_NONE;
	c.flags = RT_CALL_HAS_TIMESTAMP;
	c.timestamp_us = 86399123456ULL; /* 23:59:59.123456 */
	rt_trace_append_call(t, &c);
	char *s = write_str(t, &plain);
	assert_string_equal(s, "\n1. [23:59:59.123] free(0x0)\n\n");
	free(s);
	rt_trace_set_ts_digits(t, 6);
	s = write_str(t, &plain);
	assert_string_equal(s, "\n1. [23:59:59.123456] free(0x0)\n\n");
	free(s);
	rt_trace_free(t);
}

/* --- comments --- */

static void comments_interleaved(void **state)
{
	(void)state;
	rt_trace *t = read_str(HDR
			       "## first\n"
			       "1. malloc(1) = 0x1\n\n"
			       "## after one\n"
			       "## also after one\n"
			       "2. malloc(2) = 0x2\n\n"
			       "3. malloc(3) = 0x3\n\n"
			       "## after three\n"
			       "5. malloc(5) = 0x5\n\n"
			       "## last\n");
	/* drop call 3: its comment goes before the next larger index */
	rt_trace_kill_call(t, &rt_trace_calls(t)[2]);
	rt_trace_compact(t);
	char *s = write_str(t, &plain);
	assert_string_equal(s, HDR
			    "## first\n"
			    "1. malloc(1) = 0x1\n\n"
			    "## after one\n"
			    "## also after one\n"
			    "2. malloc(2) = 0x2\n\n"
			    "## after three\n"
			    "5. malloc(5) = 0x5\n\n"
			    "## last\n");
	free(s);
	rt_trace_free(t);

	/* with no calls left every comment is flushed after the registries,
	 * before the leak summary */
	t = read_str(HDR "<1> : memory (bytes)\n## a\n1. malloc(1) = 0x1\n\n## b\n");
	rt_trace_kill_call(t, &rt_trace_calls(t)[0]);
	rt_trace_compact(t);
	rt_write_opts o = plain;
	o.leak_summary = true;
	s = write_str(t, &o);
	assert_string_equal(s, HDR "<1> : memory (bytes)\n## a\n## b\n"
			       "# Resource - memory (bytes):\n"
			       "# 0 block(s) leaked with total size of 0 bytes\n");
	free(s);
	rt_trace_free(t);
}

/* --- compressed output --- */

/* Groups: A = 2 calls, size 20; B = 1 call, size 30; C = 4 calls, size 20;
 * D = 1 call, size 20. First seen in the order A, B, C, D. */
static const char grouped_in[] = HDR
	"1. malloc(10) = 0x1\n\t0xa\n\n"
	"2. malloc(30) = 0x2\n\t0xb\n\n"
	"3. malloc(5) = 0x3\n\t0xc\n\n"
	"4. malloc(20) = 0x4\n\t0xd\n\n"
	"5. malloc(5) = 0x5\n\t0xc\n\n"
	"6. malloc(10) = 0x6\n\t0xa\n\n"
	"7. malloc(5) = 0x7\n\t0xc\n\n"
	"8. malloc(5) = 0x8\n\t0xc\n\n";

#define GROUP_A "1. malloc(10) = 0x1\n6. malloc(10) = 0x6\n" \
		"# allocation summary: 2 block(s) with total size 20\n\t0xa\n\n"
#define GROUP_B "2. malloc(30) = 0x2\n" \
		"# allocation summary: 1 block(s) with total size 30\n\t0xb\n\n"
#define GROUP_C "3. malloc(5) = 0x3\n5. malloc(5) = 0x5\n7. malloc(5) = 0x7\n8. malloc(5) = 0x8\n" \
		"# allocation summary: 4 block(s) with total size 20\n\t0xc\n\n"
#define GROUP_D "4. malloc(20) = 0x4\n" \
		"# allocation summary: 1 block(s) with total size 20\n\t0xd\n\n"

static void compressed_sort_orders(void **state)
{
	(void)state;
	static const struct { enum rt_sort sort; const char *body; } cases[] = {
		{RT_SORT_SIZE_ASC, GROUP_A GROUP_C GROUP_D GROUP_B},
		{RT_SORT_SIZE_DESC, GROUP_B GROUP_A GROUP_C GROUP_D},
		{RT_SORT_COUNT_ASC, GROUP_B GROUP_D GROUP_A GROUP_C},
		{RT_SORT_COUNT_DESC, GROUP_C GROUP_A GROUP_B GROUP_D},
	};
	for (size_t i = 0; i < 4; i++) {
		rt_write_opts o = plain;
		o.compress = true;
		o.filter_bits = RT_FILTER_COMPRESS;
		o.sort = cases[i].sort;
		char want[2048];
		snprintf(want, sizeof want, "version=2.0, filter=compress, \n%s", cases[i].body);
		check_rewrite(grouped_in, &o, want);
	}
}

static void compressed_layout(void **state)
{
	(void)state;
	rt_write_opts o = plain;
	o.compress = true;
	o.leak_summary = true;
	o.filter_bits = RT_FILTER_LEAKS | RT_FILTER_COMPRESS;
	check_rewrite(HDR
		      "@ 2 : ctx\n"
		      "<1> : memory (memory allocation in bytes)\n"
		      "## c\n"
		      "1. @2 [14:54:27.465] malloc(1002) = 0x84cd7d0\n"
		      "\t$a = 1\n"
		      "\t0x80486aa\n"
		      "\t0x126ce7 __libc_start_main() from /lib/libc.so\n\n"
		      "2. [14:54:27.466] malloc(1) = 0x2\n\n"
		      "3. @2 [14:54:27.466] malloc(1002) = 0x84d16d0\n"
		      "\t0x80486aa\n"
		      "\t0x126ce7 __libc_start_main() from /lib/libc.so\n\n",
		      &o,
		      "version=2.0, filter=leaks|compress, \n"
		      "@ 2 : ctx\n"
		      "<1> : memory (memory allocation in bytes)\n"
		      "## c\n"
		      "2. [14:54:27.466] malloc(1) = 0x2\n"
		      "# allocation summary: 1 block(s) with total size 1\n"
		      "\n"
		      "1. @2 [14:54:27.465] malloc(1002) = 0x84cd7d0\n"
		      "\t$a = 1\n"
		      "3. @2 [14:54:27.466] malloc(1002) = 0x84d16d0\n"
		      "# allocation summary: 2 block(s) with total size 2004\n"
		      "\t0x80486aa\n"
		      "\t0x126ce7 __libc_start_main() from /lib/libc.so\n"
		      "\n"
		      "# Resource - memory (memory allocation in bytes):\n"
		      "# 3 block(s) leaked with total size of 2005 bytes\n");
}

/* --- leak summary --- */

static void leak_summary_lines(void **state)
{
	(void)state;
	rt_write_opts o = plain;
	o.leak_summary = true;
	const char *in = HDR
			 "<1> : memory (memory allocation in bytes)\n"
			 "<2> : fd (file descriptors)\n"
			 "<4> : shm (segments)\n"
			 "1. malloc<memory>(10) = 0x1\n\n"
			 "2. open<fd>(1) = 0x3\n\n"
			 "3. malloc(20) = 0x2\n\n"
			 "4. free<memory>(0x7)\n\n";
	check_rewrite(in, &o,
		      HDR
		      "<1> : memory (memory allocation in bytes)\n"
		      "<2> : fd (file descriptors)\n"
		      "<4> : shm (segments)\n"
		      "1. malloc<memory>(10) = 0x1\n\n"
		      "2. open<fd>(1) = 0x3\n\n"
		      "3. malloc<memory>(20) = 0x2\n\n"
		      "4. free<memory>(0x7)\n\n"
		      "# Resource - memory (memory allocation in bytes):\n"
		      "# 2 block(s) leaked with total size of 30 bytes\n"
		      "# Resource - fd (file descriptors):\n"
		      "# 1 block(s) leaked with total size of 1 bytes\n"
		      "# Resource - shm (segments):\n"
		      "# 0 block(s) leaked with total size of 0 bytes\n");
}

/* --- round trips --- */

/* Compressed output must read back into the same groups even when
 * permanent comments sit between calls of the input. */
static void round_trip_compressed_with_comments(void **state)
{
	(void)state;
	rt_write_opts o = plain;
	o.compress = true;
	const char *in = HDR
			 "1. malloc(10) = 0x1\n\t0xa\n\n"
			 "2. malloc(5) = 0x2\n\t0xb\n\n"
			 "## mid\n"
			 "3. malloc(10) = 0x3\n\t0xa\n\n";
	rt_trace *t = read_str(in);
	char *one = write_str(t, &o);
	rt_trace_free(t);
	t = read_str(one);
	/* every call keeps its backtrace */
	uint64_t lost = 0;
	const rt_call *c = rt_trace_calls_const(t);
	for (size_t i = 0; i < rt_trace_call_count(t); i++)
		if (rt_trace_bt_len(t, c[i].bt) != 1)
			lost = c[i].index;
	char *two = write_str(t, &o);
	rt_trace_free(t);
	int same = strcmp(one, two) == 0;
	static char msg[2048];
	snprintf(msg, sizeof msg, "--- first pass\n%s--- second pass\n%s", one, two);
	free(one);
	free(two);
	if (lost)
		fail_msg("call %" PRIu64 " lost its backtrace reading back the compressed output:\n%s",
			 lost, msg);
	if (!same)
		fail_msg("second pass differs:\n%s", msg);
}

static const char *fixtures_dir(void)
{
	static char dir[4096];
	const char *f = getenv("FIXTURES");
	if (!f || !*f)
		fail_msg("FIXTURES is not set: it must name the shared fixtures directory "
			 "(ctest sets it from -DRTRACE_FIXTURES)");
	snprintf(dir, sizeof dir, "%s/sp-rtrace/postproc", f);
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		fail_msg("fixtures not found at '%s'", dir);
	return dir;
}

static void round_trip_opts(const char *name, const char *text, size_t len,
			    rt_write_opts o)
{
	rt_trace *t = read_ok(text, len);
	o.filter_bits |= rt_trace_filter_bits(t) & ~(unsigned)RT_FILTER_COMPRESS;
	char *one = write_str(t, &o);
	rt_trace_free(t);
	t = read_str(one);
	char *two = write_str(t, &o);
	if (strcmp(one, two) != 0)
		fail_msg("%s (compress=%d): second pass differs:\n--- one\n%s\n--- two\n%s",
			 name, o.compress, one, two);
	free(one);
	free(two);
	rt_trace_free(t);
}

static void round_trip_fixtures(void **state)
{
	(void)state;
	const char *dir = fixtures_dir();
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	int files = 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "sample.txt", 10) && strncmp(e->d_name, "context.txt", 11))
			continue;
		size_t len;
		char *text = test_slurp(dir, e->d_name, &len);
		rt_write_opts o = plain;
		round_trip_opts(e->d_name, text, len, o);
		o.compress = true;
		o.leak_summary = true;
		o.filter_bits = RT_FILTER_COMPRESS;
		round_trip_opts(e->d_name, text, len, o);
		o.sort = RT_SORT_COUNT_DESC;
		round_trip_opts(e->d_name, text, len, o);
		free(text);
		files++;
	}
	closedir(d);
	assert_true(files >= 30);
}

/* Without filtering, the writer reproduces the post-processor's output. */
static void fixtures_exact(void **state)
{
	(void)state;
	static const struct { const char *in, *want; bool lc; } cases[] = {
		{"sample.txt.", "sample.txt..", false},
		{"sample.txt.r", "sample.txt.r.", false},
		{"sample.txt.lc", "sample.txt.lc.", false},
		{"sample.txt.lcr", "sample.txt.lcr.", false},
		{"sample.txt.lc", "sample.txt.lc.lc", true},
		{"sample.txt.lcr", "sample.txt.lcr.lc", true},
	};
	const char *dir = fixtures_dir();
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		size_t len, wlen;
		char *text = test_slurp(dir, cases[i].in, &len);
		char *want = test_slurp(dir, cases[i].want, &wlen);
		rt_trace *t = read_ok(text, len);
		rt_write_opts o = plain;
		o.filter_bits = rt_trace_filter_bits(t) & ~(unsigned)RT_FILTER_COMPRESS;
		if (cases[i].lc) {
			o.filter_bits |= RT_FILTER_LEAKS | RT_FILTER_COMPRESS;
			o.compress = o.leak_summary = true;
		}
		size_t olen;
		char *out = rt_text_write_mem(t, &o, &olen);
		if (olen != wlen || memcmp(out, want, wlen) != 0)
			fail_msg("%s -> %s differs:\n%s", cases[i].in, cases[i].want, out);
		free(out);
		free(want);
		free(text);
		rt_trace_free(t);
	}
}

static void leaks_on_call(void *ctx, rt_trace *t, const rt_call *c)
{
	rt_leaks_feed(ctx, t, c);
}

/* context.txt -lc, with the registry sp-rtrace 1.6 lost (see README.md). */
static void fixture_context_leaks_compressed(void **state)
{
	(void)state;
	const char *dir = fixtures_dir();
	size_t len, wlen;
	char *text = test_slurp(dir, "context.txt", &len);
	char *want = test_slurp(dir, "context.txt..lc", &wlen);
	const char *bad = "@ 0 : (null)\n@ 0 : (null)\n";
	const char *good = "@ 1 : first context\n@ 2 : second context\n";
	char *at = strstr(want, bad);
	assert_non_null(at);
	char *fixed = malloc(wlen + strlen(good) + 1);
	size_t pre = (size_t)(at - want);
	memcpy(fixed, want, pre);
	strcpy(fixed + pre, good);
	strcat(fixed, at + strlen(bad));
	free(want);
	want = fixed;
	rt_leaks *l = rt_leaks_new();
	rt_read_opts ro = {0, leaks_on_call, NULL, l};
	rt_trace *t = rt_trace_new();
	rt_diag err;
	assert_int_equal(rt_text_read_mem(t, text, len, "context.txt", &ro, NULL, &err), 0);
	rt_leaks_finish(l, t);
	rt_trace_compact(t);
	rt_write_opts o = plain;
	o.filter_bits = RT_FILTER_LEAKS | RT_FILTER_COMPRESS;
	o.compress = o.leak_summary = true;
	char *out = write_str(t, &o);
	assert_string_equal(out, want);
	free(out);
	free(want);
	free(text);
	rt_leaks_free(l);
	rt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header_order_and_filter),
		cmocka_unit_test(registries_layout),
		cmocka_unit_test(single_resource_renumbered),
		cmocka_unit_test(call_record_layout),
		cmocka_unit_test(calls_built_in_memory),
		cmocka_unit_test(timestamps),
		cmocka_unit_test(comments_interleaved),
		cmocka_unit_test(compressed_sort_orders),
		cmocka_unit_test(compressed_layout),
		cmocka_unit_test(leak_summary_lines),
		cmocka_unit_test(round_trip_compressed_with_comments),
		cmocka_unit_test(round_trip_fixtures),
		cmocka_unit_test(fixtures_exact),
		cmocka_unit_test(fixture_context_leaks_compressed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
