/* Unit tests of the text-protocol reader (rt_text_read_mem). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrace/text.h"

#define HDR "version=2.0, arch=i686, \n"
#define REG3 "<1> : segment (shared memory segment) [refcount]\n" \
	     "<2> : address (shared memory attachments)\n"             \
	     "<4> : control (shared memory segment control operation)\n"

/* Warnings and calls seen through the callbacks. */
typedef struct seen {
	int nwarn;
	rt_diag warn[8];
	size_t ncalls;
	rt_call calls[16];
} seen;

static void on_warn(void *ctx, const rt_diag *d)
{
	seen *s = ctx;
	if (s->nwarn < 8)
		s->warn[s->nwarn] = *d;
	s->nwarn++;
}

static void on_call(void *ctx, rt_trace *t, const rt_call *c)
{
	seen *s = ctx;
	/* the backtrace is interned before the call is handed on */
	assert_true(c->bt < rt_trace_bt_count(t));
	if (s->ncalls < 16)
		s->calls[s->ncalls] = *c;
	s->ncalls++;
}

static int read_opts(rt_trace *t, const char *text, const rt_read_opts *o, rt_diag *err)
{
	rt_read_stats st;
	return rt_text_read_mem(t, text, strlen(text), "mem.txt", o, &st, err);
}

/* Reads text that must parse; returns the trace. */
static rt_trace *read_ok(const char *text)
{
	rt_trace *t = rt_trace_new();
	rt_diag err;
	int rc = read_opts(t, text, NULL, &err);
	if (rc != 0)
		fail_msg("read failed: %" PRIu64 ":%u: %s", err.line, err.col, err.msg);
	return t;
}

static const rt_call *call(rt_trace *t, size_t i)
{
	assert_true(i < rt_trace_call_count(t));
	return &rt_trace_calls_const(t)[i];
}

static const char *fn(rt_trace *t, size_t i)
{
	return rt_trace_str(t, call(t, i)->fn);
}

/* Expects a read error at line:col (col 0: any) with a message starting
 * "expected". */
static void expect_error(const char *text, size_t len, uint64_t line, uint32_t col)
{
	rt_trace *t = rt_trace_new();
	rt_diag err;
	int rc = rt_text_read_mem(t, text, len, "bad.txt", NULL, NULL, &err);
	rt_trace_free(t); /* before any failure: no leak reports under ASan */
	if (rc != -1)
		fail_msg("read returned %d; expected an error at %" PRIu64 ":%u", rc, line, col);
	if (strncmp(err.msg, "expected", 8) != 0)
		fail_msg("message does not start with 'expected': %s", err.msg);
	assert_string_equal(err.file, "bad.txt");
	if (err.line != line || (col && err.col != col))
		fail_msg("error at %" PRIu64 ":%u, expected at %" PRIu64 ":%u (%s)",
			 err.line, err.col, line, col, err.msg);
}

#define EXPECT_ERROR(s, line, col) expect_error(s, sizeof(s) - 1, line, col)

/* --- records --- */

static void header_fields(void **state)
{
	(void)state;
	rt_trace *t = read_ok("version=2.0, arch=i686, timestamp=2011.6.16 15:49:48, "
			      "process=../bin/shmseg_test, pid=17913, filter=leaks|resolve, "
			      "backtrace depth=10, origin=sp-rtrace 1.6, \n");
	assert_int_equal(rt_trace_header_count(t), 8);
	static const char *const keys[] = {"version", "arch", "timestamp", "process",
					   "pid", "filter", "backtrace depth", "origin"};
	static const char *const vals[] = {"2.0", "i686", "2011.6.16 15:49:48",
					   "../bin/shmseg_test", "17913", "leaks|resolve",
					   "10", "sp-rtrace 1.6"};
	for (size_t i = 0; i < 8; i++) {
		assert_string_equal(rt_trace_header_at(t, i)->key, keys[i]);
		assert_string_equal(rt_trace_header_at(t, i)->value, vals[i]);
	}
	assert_int_equal(rt_trace_filter_bits(t), RT_FILTER_LEAKS | RT_FILTER_RESOLVE);
	assert_int_equal(rt_trace_call_count(t), 0);
	rt_trace_free(t);

	/* no trailing ", ", and a value containing '=' */
	t = read_ok("version=2.0,x=a=b\n");
	assert_int_equal(rt_trace_header_count(t), 2);
	assert_string_equal(rt_trace_header(t, "version"), "2.0");
	assert_string_equal(rt_trace_header(t, "x"), "a=b");
	rt_trace_free(t);
}

static void registries(void **state)
{
	(void)state;
	rt_trace *t = read_ok(HDR
			      "@ 1 : first context\n"
			      "@ 1f : second context\n"
			      REG3
			      ": /lib/libc-2.12.1.so => 0x136000-0x28d000\n"
			      ": /odd => path/x.so => 0x8048000-0x8049000\n"
			      "& core : /tmp/core dump.1\n");
	assert_int_equal(rt_trace_context_count(t), 2);
	assert_int_equal(rt_trace_context_at(t, 0)->id, 1);
	assert_string_equal(rt_trace_context_at(t, 0)->name, "first context");
	assert_int_equal(rt_trace_context_at(t, 1)->id, 0x1f);
	assert_string_equal(rt_trace_context_at(t, 1)->name, "second context");

	assert_int_equal(rt_trace_resource_count(t), 3);
	const rt_resource *r = rt_trace_resource_get(t, 1);
	assert_int_equal(r->mask, 1);
	assert_string_equal(r->type, "segment");
	assert_string_equal(r->desc, "shared memory segment");
	assert_string_equal(r->flags, "refcount");
	assert_true(r->refcount);
	r = rt_trace_resource_get(t, 2);
	assert_int_equal(r->mask, 2);
	assert_string_equal(r->type, "address");
	assert_string_equal(r->desc, "shared memory attachments");
	assert_null(r->flags);
	assert_false(r->refcount);
	r = rt_trace_resource_get(t, 3);
	assert_int_equal(r->mask, 4);
	assert_string_equal(r->desc, "shared memory segment control operation");

	assert_int_equal(rt_trace_mmap_count(t), 2);
	assert_string_equal(rt_trace_mmap_at(t, 0)->module, "/lib/libc-2.12.1.so");
	assert_int_equal(rt_trace_mmap_at(t, 0)->from, 0x136000);
	assert_int_equal(rt_trace_mmap_at(t, 0)->to, 0x28d000);
	assert_string_equal(rt_trace_mmap_at(t, 1)->module, "/odd => path/x.so");
	assert_int_equal(rt_trace_mmap_at(t, 1)->from, 0x8048000);

	assert_int_equal(rt_trace_attachment_count(t), 1);
	assert_string_equal(rt_trace_attachment_at(t, 0)->name, "core");
	assert_string_equal(rt_trace_attachment_at(t, 0)->path, "/tmp/core dump.1");
	assert_int_equal(rt_trace_comment_count(t), 0);
	rt_trace_free(t);
}

static void call_records(void **state)
{
	(void)state;
	rt_trace *t = read_ok(HDR
			      "1. malloc(24) = 0x10\n\n"
			      "2. @3 [14:54:26.319] calloc(1000) = 0x84d2a80\n\n"
			      "3. @1f free(0x84d2a80)\n\n"
			      "4. [00:00:01.002] free(0x10)\n\n"
			      "5. operator new[](24) = 0x20\n\n"
			      "6. operator delete[](0x20)\n\n"
			      "18446744073709551615. realloc(18446744073709551615) = 0xffffffffffffffff\n\n");
	assert_int_equal(rt_trace_call_count(t), 7);
	const rt_call *c = call(t, 0);
	assert_int_equal(c->index, 1);
	assert_string_equal(fn(t, 0), "malloc");
	assert_int_equal(c->kind, RT_CALL_ALLOC);
	assert_int_equal(c->size, 24);
	assert_int_equal(c->res_id, 0x10);
	assert_int_equal(c->context, 0);
	assert_int_equal(c->flags, 0);
	assert_int_equal(c->res_type, 0); /* no registry */
	assert_int_equal(c->args, RT_NONE);
	assert_int_equal(rt_trace_bt_len(t, c->bt), 0);

	c = call(t, 1);
	assert_int_equal(c->index, 2);
	assert_string_equal(fn(t, 1), "calloc");
	assert_int_equal(c->context, 3);
	assert_true(c->flags & RT_CALL_HAS_TIMESTAMP);
	assert_int_equal(c->timestamp_us, ((14 * 60 + 54) * 60 + 26) * 1000000ULL + 319000);
	assert_int_equal(c->size, 1000);
	assert_int_equal(c->res_id, 0x84d2a80);

	c = call(t, 2);
	assert_int_equal(c->kind, RT_CALL_FREE);
	assert_string_equal(fn(t, 2), "free");
	assert_int_equal(c->context, 0x1f);
	assert_int_equal(c->res_id, 0x84d2a80);
	assert_int_equal(c->size, 0);
	assert_false(c->flags & RT_CALL_HAS_TIMESTAMP);

	c = call(t, 3);
	assert_int_equal(c->context, 0);
	assert_int_equal(c->timestamp_us, 1002000);
	assert_int_equal(c->kind, RT_CALL_FREE);

	assert_string_equal(fn(t, 4), "operator new[]");
	assert_int_equal(call(t, 4)->size, 24);
	assert_int_equal(call(t, 4)->res_id, 0x20);
	assert_string_equal(fn(t, 5), "operator delete[]");
	assert_int_equal(call(t, 5)->kind, RT_CALL_FREE);
	assert_int_equal(call(t, 5)->res_id, 0x20);

	c = call(t, 6);
	assert_int_equal(c->index, UINT64_MAX);
	assert_int_equal(c->size, UINT64_MAX);
	assert_int_equal(c->res_id, UINT64_MAX);
	assert_int_equal(rt_trace_ts_digits(t), 3);
	rt_trace_free(t);
}

static void timestamp_six_digits(void **state)
{
	(void)state;
	rt_trace *t = read_ok(HDR "1. [14:54:26.319] malloc(1) = 0x1\n\n"
			      "2. [23:59:59.123456] malloc(1) = 0x2\n\n");
	assert_int_equal(rt_trace_ts_digits(t), 6);
	assert_int_equal(call(t, 0)->timestamp_us, 53666319000ULL);
	assert_int_equal(call(t, 1)->timestamp_us, 86399123456ULL);
	rt_trace_free(t);
}

static void typed_calls(void **state)
{
	(void)state;
	rt_trace *t = read_ok(HDR REG3
			      "1. [14:54:26.319] shmget<segment>(1024) = 0x1088018\n\n"
			      "2. [14:54:26.319] shmat<address>(1024) = 0xb7700000\n\n"
			      "3. shmctl<control>(0x1088018)\n\n"
			      "4. untyped(8) = 0x8\n\n");
	assert_int_equal(rt_trace_call_count(t), 4);
	assert_string_equal(fn(t, 0), "shmget");
	assert_int_equal(call(t, 0)->res_type, 1);
	assert_string_equal(fn(t, 1), "shmat");
	assert_int_equal(call(t, 1)->res_type, 2);
	assert_int_equal(call(t, 1)->size, 1024);
	assert_int_equal(call(t, 1)->res_id, 0xb7700000);
	assert_string_equal(fn(t, 2), "shmctl");
	assert_int_equal(call(t, 2)->res_type, 3);
	assert_int_equal(call(t, 2)->kind, RT_CALL_FREE);
	/* a call without <type> belongs to the first resource type */
	assert_int_equal(call(t, 3)->res_type, 1);
	rt_trace_free(t);
}

/* A resolved frame's text gives the frame its details (what every writer
 * but the text writer uses), and formats back to the same text. */
static void frame_details(void **state)
{
	(void)state;
	rt_trace *t = read_ok(HDR REG3
			      "1. malloc(24) = 0x1000\n"
			      "\t0x8048526 zero() from /bin/x\n"
			      "\t0x1 ns::f(int) at /s/a.c:12\n"
			      "\t0x2 from /lib/y.so\n"
			      "\t0x3 h()\n"
			      "\t0xABCDEF\n"
			      "\n");
	const rt_frame *f = rt_trace_bt_frames(t, call(t, 0)->bt);
	static const struct {
		const char *fn, *file, *module;
		uint32_t line, n;
	} want[] = {{"zero", NULL, "/bin/x", 0, 1}, {"ns::f(int)", "/s/a.c", NULL, 12, 1},
		    {NULL, NULL, "/lib/y.so", 0, 0}, {"h", NULL, NULL, 0, 1}};
	for (int i = 0; i < 4; i++) {
		rt_frame_info fi;
		assert_true(rt_trace_frame_info(t, &f[i], &fi));
		assert_int_equal(fi.n, want[i].n);
		if (want[i].module)
			assert_string_equal(rt_trace_str(t, fi.module), want[i].module);
		else
			assert_int_equal(fi.module, RT_NONE);
		if (want[i].fn)
			assert_string_equal(rt_trace_str(t, fi.locs[0].fn), want[i].fn);
		if (want[i].file)
			assert_string_equal(rt_trace_str(t, fi.locs[0].file), want[i].file);
		if (fi.n)
			assert_int_equal(fi.locs[0].line, want[i].line);
		char buf[64];
		size_t len = rt_text_frame_format(t, &fi, buf, sizeof buf);
		assert_string_equal(buf, rt_trace_str(t, f[i].text));
		assert_int_equal(len, strlen(buf));
	}
	rt_frame_info fi;
	assert_false(rt_trace_frame_info(t, &f[4], &fi));
	rt_trace_free(t);
}

static void args_and_frames(void **state)
{
	(void)state;
	rt_trace *t = read_ok(HDR REG3
			      "2. [14:54:26.319] shmat<address>(1024) = 0xb7700000\n"
			      "\t$shmid = 0x1088018\n"
			      "\t$cpid = 17913 and more\n"
			      "\t0x8048526 zero() from /bin/x\n"
			      "\t0x1 f() at a.c:12\n"
			      "\t0xABCDEF\n"
			      "\n"
			      "3. shmdt<address>(0xb7700000)\n"
			      "\t0x8048526\n"
			      "\n");
	assert_int_equal(rt_trace_call_count(t), 2);
	const rt_call *c = call(t, 0);
	assert_int_equal(rt_trace_args_len(t, c->args), 2);
	const rt_kv *a = rt_trace_args_at(t, c->args);
	assert_string_equal(a[0].key, "shmid");
	assert_string_equal(a[0].value, "0x1088018");
	assert_string_equal(a[1].key, "cpid");
	assert_string_equal(a[1].value, "17913 and more");

	assert_int_equal(rt_trace_bt_len(t, c->bt), 3);
	const rt_frame *f = rt_trace_bt_frames(t, c->bt);
	assert_int_equal(f[0].addr, 0x8048526);
	assert_string_equal(rt_trace_str(t, f[0].text), "zero() from /bin/x");
	assert_int_equal(f[1].addr, 1);
	assert_string_equal(rt_trace_str(t, f[1].text), "f() at a.c:12");
	assert_int_equal(f[2].addr, 0xabcdef);
	assert_int_equal(f[2].text, RT_NONE);

	c = call(t, 1);
	assert_int_equal(c->args, RT_NONE);
	assert_int_equal(rt_trace_bt_len(t, c->bt), 1);
	assert_int_equal(rt_trace_bt_frames(t, c->bt)[0].addr, 0x8048526);
	assert_int_equal(rt_trace_bt_frames(t, c->bt)[0].text, RT_NONE);
	rt_trace_free(t);
}

static void identical_backtraces_shared(void **state)
{
	(void)state;
	rt_trace *t = read_ok(HDR
			      "1. malloc(1) = 0x1\n\t0x10\n\t0x20\n\n"
			      "2. malloc(1) = 0x2\n\t0x10\n\n"
			      "3. malloc(1) = 0x3\n\t0x10\n\t0x20\n\n");
	assert_int_equal(call(t, 0)->bt, call(t, 2)->bt);
	assert_int_not_equal(call(t, 0)->bt, call(t, 1)->bt);
	rt_trace_free(t);
}

static void compressed_groups(void **state)
{
	(void)state;
	rt_trace *t = read_ok(HDR
			      "63. @3 [14:54:27.466] malloc(1000) = 0x84d2a80\n"
			      "\t$n = 1\n"
			      "72. @3 [14:54:27.466] malloc(1000) = 0x84d3650\n"
			      "81. @3 [14:54:27.466] malloc(1000) = 0x84d4220\n"
			      "\t$n = 3\n"
			      "# allocation summary: 3 block(s) with total size 3000\n"
			      "\t0x8048616\n"
			      "\t0x8048668\n"
			      "\n"
			      "62. @3 [14:54:27.466] malloc(1001) = 0x84d2690\n"
			      "71. @3 [14:54:27.466] malloc(1001) = 0x84d3260\n"
			      "# allocation summary: 2 block(s) with total size 2002\n"
			      "\t0x8048653\n"
			      "\n");
	assert_int_equal(rt_trace_call_count(t), 5);
	uint32_t bt = call(t, 0)->bt;
	assert_int_equal(call(t, 1)->bt, bt);
	assert_int_equal(call(t, 2)->bt, bt);
	assert_int_equal(rt_trace_bt_len(t, bt), 2);
	assert_int_equal(rt_trace_bt_frames(t, bt)[1].addr, 0x8048668);
	assert_int_equal(call(t, 3)->bt, call(t, 4)->bt);
	assert_int_not_equal(call(t, 3)->bt, bt);
	assert_int_equal(rt_trace_bt_len(t, call(t, 3)->bt), 1);
	/* arguments stay with their own call */
	assert_string_equal(rt_trace_args_at(t, call(t, 0)->args)[0].value, "1");
	assert_int_equal(call(t, 1)->args, RT_NONE);
	assert_string_equal(rt_trace_args_at(t, call(t, 2)->args)[0].value, "3");
	/* the temporary "# allocation summary" comments are dropped */
	assert_int_equal(rt_trace_comment_count(t), 0);
	assert_int_equal(call(t, 0)->index, 63);
	assert_int_equal(call(t, 4)->index, 71);
	rt_trace_free(t);
}

static void comments(void **state)
{
	(void)state;
	seen s = {0};
	rt_read_opts o = {0};
	o.warn = on_warn;
	o.ctx = &s;
	rt_trace *t = rt_trace_new();
	rt_diag err;
	int rc = read_opts(t, HDR
			   "## tracing module: [0] main (1.0)\n"
			   "# temporary\n"
			   "1. malloc(1) = 0x1\n"
			   "\t0x10\n"
			   "\n"
			   "## after one\n"
			   "5. free(0x1)\n"
			   "\n"
			   "# Resource - memory (bytes):\n"
			   "hello there\n"
			   "##\n"
			   "#no-space\n",
			   &o, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(rt_trace_comment_count(t), 5);
	static const struct { uint64_t after; const char *text; } want[] = {
		{0, "## tracing module: [0] main (1.0)"},
		{1, "## after one"},
		{5, "hello there"},
		{5, "##"},
		{5, "#no-space"},
	};
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(rt_trace_comment_at(t, i)->after, want[i].after);
		assert_string_equal(rt_trace_comment_at(t, i)->text, want[i].text);
	}
	/* only the line that does not start with '#' warns */
	assert_int_equal(s.nwarn, 1);
	assert_int_equal(s.warn[0].line, 11);
	assert_int_equal(s.warn[0].col, 1);
	assert_string_equal(s.warn[0].file, "mem.txt");
	assert_non_null(strstr(s.warn[0].msg, "comment"));
	assert_int_equal(rt_trace_call_count(t), 2);
	rt_trace_free(t);
}

static void stray_frame_warns(void **state)
{
	(void)state;
	seen s = {0};
	rt_read_opts o = {0};
	o.warn = on_warn;
	o.ctx = &s;
	rt_trace *t = rt_trace_new();
	rt_diag err;
	assert_int_equal(read_opts(t, HDR "\t0x10\n1. malloc(1) = 0x1\n\t0x20\n\n", &o, &err), 0);
	assert_int_equal(s.nwarn, 1);
	assert_int_equal(s.warn[0].line, 2);
	assert_int_equal(rt_trace_call_count(t), 1);
	assert_int_equal(rt_trace_bt_len(t, call(t, 0)->bt), 1);
	assert_int_equal(rt_trace_bt_frames(t, call(t, 0)->bt)[0].addr, 0x20);
	rt_trace_free(t);
}

static void crlf_line_endings(void **state)
{
	(void)state;
	rt_trace *t = read_ok("version=2.0, arch=i686, \r\n"
			      "<1> : memory (memory allocation in bytes)\r\n"
			      ": /lib/x.so => 0x10-0x20\r\n"
			      "@ 1 : ctx\r\n"
			      "## note\r\n"
			      "1. @1 [14:54:26.319] malloc(24) = 0x10\r\n"
			      "\t$a = b\r\n"
			      "\t0x8048526 zero() from /bin/x\r\n"
			      "\t0x20\r\n"
			      "\r\n"
			      "2. free(0x10)\r\n"
			      "\r\n");
	assert_string_equal(rt_trace_header(t, "arch"), "i686");
	assert_string_equal(rt_trace_resource_get(t, 1)->desc, "memory allocation in bytes");
	assert_int_equal(rt_trace_mmap_at(t, 0)->to, 0x20);
	assert_string_equal(rt_trace_context_at(t, 0)->name, "ctx");
	assert_string_equal(rt_trace_comment_at(t, 0)->text, "## note");
	assert_int_equal(rt_trace_call_count(t), 2);
	const rt_call *c = call(t, 0);
	assert_int_equal(c->res_id, 0x10);
	assert_string_equal(rt_trace_args_at(t, c->args)[0].value, "b");
	assert_int_equal(rt_trace_bt_len(t, c->bt), 2);
	assert_string_equal(rt_trace_str(t, rt_trace_bt_frames(t, c->bt)[0].text),
			    "zero() from /bin/x");
	assert_int_equal(rt_trace_bt_frames(t, c->bt)[1].text, RT_NONE);
	assert_int_equal(call(t, 1)->kind, RT_CALL_FREE);
	rt_trace_free(t);
}

static void max_depth_trims(void **state)
{
	(void)state;
	rt_read_opts o = {0};
	o.max_depth = 2;
	rt_trace *t = rt_trace_new();
	rt_diag err;
	int rc = read_opts(t, HDR
			   "1. malloc(1) = 0x1\n\t0x1\n\t0x2\n\t0x3\n\t0x4\n\n"
			   "2. malloc(1) = 0x2\n\t0x1\n\t0x2\n\t0x5\n\n"
			   "3. malloc(1) = 0x3\n\t0x7\n\n",
			   &o, &err);
	assert_int_equal(rc, 0);
	assert_int_equal(rt_trace_call_count(t), 3);
	const rt_call *c = call(t, 0);
	assert_int_equal(rt_trace_bt_len(t, c->bt), 2);
	assert_int_equal(rt_trace_bt_frames(t, c->bt)[0].addr, 1);
	assert_int_equal(rt_trace_bt_frames(t, c->bt)[1].addr, 2);
	/* trimmed to the same two frames: the same backtrace */
	assert_int_equal(call(t, 1)->bt, c->bt);
	assert_int_equal(rt_trace_bt_len(t, call(t, 2)->bt), 1);
	rt_trace_free(t);
}

static void on_call_receives_calls(void **state)
{
	(void)state;
	seen s = {0};
	rt_read_opts o = {0};
	o.on_call = on_call;
	o.ctx = &s;
	rt_trace *t = rt_trace_new();
	rt_diag err;
	rt_read_stats st;
	const char *text = HDR
			   "1. malloc(8) = 0x1\n\t$x = y\n\t0x10\n\n"
			   "2. free(0x1)\n\t0x20\n\n"
			   "3. malloc(9) = 0x2\n"
			   "4. malloc(9) = 0x3\n"
			   "# allocation summary: 2 block(s) with total size 18\n"
			   "\t0x30\n\n";
	assert_int_equal(rt_text_read_mem(t, text, strlen(text), "x", &o, &st, &err), 0);
	/* the callback decides: nothing was appended */
	assert_int_equal(rt_trace_call_count(t), 0);
	assert_int_equal(s.ncalls, 4);
	assert_int_equal(st.calls, 4);
	assert_int_equal(st.lines, 13);
	assert_int_equal(st.bytes, strlen(text));
	assert_int_equal(s.calls[0].index, 1);
	assert_int_equal(s.calls[0].size, 8);
	assert_string_equal(rt_trace_args_at(t, s.calls[0].args)[0].key, "x");
	assert_int_equal(rt_trace_bt_frames(t, s.calls[0].bt)[0].addr, 0x10);
	assert_int_equal(s.calls[1].kind, RT_CALL_FREE);
	assert_int_equal(rt_trace_bt_frames(t, s.calls[1].bt)[0].addr, 0x20);
	assert_int_equal(s.calls[2].index, 3);
	assert_int_equal(s.calls[3].index, 4);
	assert_int_equal(s.calls[2].bt, s.calls[3].bt);
	assert_int_equal(rt_trace_bt_frames(t, s.calls[3].bt)[0].addr, 0x30);
	rt_trace_free(t);
}

/* --- errors --- */

static void error_truncated_call(void **state)
{
	(void)state;
	/* the '(' is missing: reported at the end of the line */
	EXPECT_ERROR(HDR REG3 "5. [14:54:26.319] shmdt<addr\n", 5, 29);
	/* same without the final newline (a cut file) */
	EXPECT_ERROR(HDR REG3 "5. [14:54:26.319] shmdt<addr", 5, 29);
	EXPECT_ERROR(HDR "5. [14:54:26.319] malloc(12\n", 2, 28);
	EXPECT_ERROR(HDR "5. [14:54:26.319] malloc(12) = \n", 2, 32);
	EXPECT_ERROR(HDR "5. [14:54:26.319] malloc(abc) = 0x1\n", 2, 26);
	EXPECT_ERROR(HDR "5. [14:54:26.319] free(0x1\n", 2, 27);
	EXPECT_ERROR(HDR "5. [14:54:26.319] free(0x1) x\n", 2, 28);
	EXPECT_ERROR(HDR "5. [14:54:2\n", 2, 12);
	EXPECT_ERROR(HDR "5. @zz malloc(1) = 0x1\n", 2, 5);
}

static void error_bad_frame(void **state)
{
	(void)state;
	EXPECT_ERROR(HDR "1. malloc(1) = 0x1\n\t0xfoo\n", 3, 5);
	EXPECT_ERROR(HDR "1. malloc(1) = 0x1\n\tmain()\n", 3, 2);
	/* "\t0x" is there: the offending byte is the first 'Z', not the '0' */
	EXPECT_ERROR(HDR "1. malloc(1) = 0x1\n\t0xZZ\n", 3, 4);
}

static void error_unknown_resource_type(void **state)
{
	(void)state;
	EXPECT_ERROR(HDR "<1> : memory (bytes)\n1. malloc<mem>(1) = 0x1\n\n", 3, 11);
	/* with no registry at all */
	EXPECT_ERROR(HDR "1. shmat<address>(1024) = 0x1\n\n", 2, 10);
}

static void error_control_bytes(void **state)
{
	(void)state;
	EXPECT_ERROR(HDR "1. mal\0loc(1) = 0x1\n", 2, 7);
	EXPECT_ERROR(HDR "1. malloc(1) = 0x1\n\x01\x02garbage\n", 3, 1);
	EXPECT_ERROR(HDR "## a\x1b[0m comment\n", 2, 5);
	EXPECT_ERROR("version=2\x01\n", 1, 10);
	/* a lone CR inside a line is a control byte too */
	EXPECT_ERROR(HDR "1. malloc(1) = 0x1\r\t0x1\n", 2, 19);
}

/* Temporary comments are dropped, but binary data in them is still an
 * error (docs/text-protocol.md: any control byte other than TAB). */
static void error_control_byte_in_temporary_comment(void **state)
{
	(void)state;
	EXPECT_ERROR(HDR "1. malloc(1) = 0x1\n# temp\x01\n", 3, 7);
}

static void error_long_line(void **state)
{
	(void)state;
	size_t hl = strlen(HDR), n = RT_TEXT_MAX_LINE + 10;
	char *buf = malloc(hl + n + 1);
	memcpy(buf, HDR, hl);
	memset(buf + hl, 'x', n);
	buf[hl + n] = '\n';
	expect_error(buf, hl + n + 1, 2, RT_TEXT_MAX_LINE + 1);
	/* exactly the limit is fine (a comment, with a warning) */
	buf[hl + RT_TEXT_MAX_LINE] = '\n';
	rt_trace *t = rt_trace_new();
	rt_diag err;
	assert_int_equal(rt_text_read_mem(t, buf, hl + RT_TEXT_MAX_LINE + 1, "x", NULL, NULL, &err), 0);
	assert_int_equal(rt_trace_comment_count(t), 1);
	rt_trace_free(t);
	free(buf);
}

static void error_empty_and_bad_header(void **state)
{
	(void)state;
	/* no line at all: the diagnostic is about the file, not a line */
	rt_trace *t = rt_trace_new();
	rt_diag err;
	assert_int_equal(rt_text_read_mem(t, "", 0, "empty.txt", NULL, NULL, &err), -1);
	assert_int_equal(strncmp(err.msg, "expected", 8), 0);
	assert_non_null(strstr(err.msg, "header"));
	assert_int_equal(err.line, 0);
	rt_trace_free(t);

	EXPECT_ERROR("hello\n", 1, 1);
	/* an empty first line is an empty header, not an error */
	t = rt_trace_new();
	assert_int_equal(rt_text_read_mem(t, "\n1. malloc(1) = 0x1\n\n", 21, "h", NULL, NULL, &err), 0);
	assert_int_equal(rt_trace_header_count(t), 0);
	assert_int_equal(rt_trace_call_count(t), 1);
	rt_trace_free(t);
	EXPECT_ERROR("version=2.0, garbage, \n", 1, 14);
}

static void error_keeps_records_before(void **state)
{
	(void)state;
	static const char *const bad[] = {
		HDR "1. malloc(1) = 0x1\n\t0x10\n\n2. malloc(2) = 0x2\n\t0x20\n\n"
		    "5. [14:54:26.319] shmdt<addr\n3. malloc(3) = 0x3\n\n",
		HDR "1. malloc(1) = 0x1\n\t0x10\n\n2. malloc(2) = 0x2\n\t0x20\n"
		    "\t0xZZ\n3. malloc(3) = 0x3\n\n",
		HDR "1. malloc(1) = 0x1\n\t0x10\n\n2. malloc(2) = 0x2\n\t0x20\n\n"
		    "x\0y\n3. malloc(3) = 0x3\n\n",
	};
	static const size_t lens[] = {0, 0, sizeof(HDR "1. malloc(1) = 0x1\n\t0x10\n\n2. malloc(2) = 0x2\n\t0x20\n\n"
						  "x\0y\n3. malloc(3) = 0x3\n\n") - 1};
	for (size_t i = 0; i < 3; i++) {
		size_t len = lens[i] ? lens[i] : strlen(bad[i]);
		/* appended to the trace */
		rt_trace *t = rt_trace_new();
		rt_diag err;
		assert_int_equal(rt_text_read_mem(t, bad[i], len, "x", NULL, NULL, &err), -1);
		assert_int_equal(rt_trace_call_count(t), 2);
		assert_int_equal(call(t, 1)->size, 2);
		assert_int_equal(rt_trace_bt_frames(t, call(t, 1)->bt)[0].addr, 0x20);
		rt_trace_free(t);
		/* and handed to on_call */
		seen s = {0};
		rt_read_opts o = {0};
		o.on_call = on_call;
		o.ctx = &s;
		rt_read_stats st;
		t = rt_trace_new();
		assert_int_equal(rt_text_read_mem(t, bad[i], len, "x", &o, &st, &err), -1);
		assert_int_equal(s.ncalls, 2);
		assert_int_equal(st.calls, 2);
		assert_int_equal(s.calls[0].index, 1);
		assert_int_equal(s.calls[1].index, 2);
		rt_trace_free(t);
	}
}

static void error_index_overflow(void **state)
{
	(void)state;
	/* one more than UINT64_MAX cannot be a record index; reading it as
	 * some other index would silently renumber the record */
	EXPECT_ERROR(HDR "18446744073709551616. malloc(1) = 0x1\n\n", 2, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header_fields),
		cmocka_unit_test(registries),
		cmocka_unit_test(call_records),
		cmocka_unit_test(timestamp_six_digits),
		cmocka_unit_test(typed_calls),
		cmocka_unit_test(args_and_frames),
		cmocka_unit_test(frame_details),
		cmocka_unit_test(identical_backtraces_shared),
		cmocka_unit_test(compressed_groups),
		cmocka_unit_test(comments),
		cmocka_unit_test(stray_frame_warns),
		cmocka_unit_test(crlf_line_endings),
		cmocka_unit_test(max_depth_trims),
		cmocka_unit_test(on_call_receives_calls),
		cmocka_unit_test(error_truncated_call),
		cmocka_unit_test(error_bad_frame),
		cmocka_unit_test(error_unknown_resource_type),
		cmocka_unit_test(error_control_bytes),
		cmocka_unit_test(error_control_byte_in_temporary_comment),
		cmocka_unit_test(error_long_line),
		cmocka_unit_test(error_empty_and_bad_header),
		cmocka_unit_test(error_keeps_records_before),
		cmocka_unit_test(error_index_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
