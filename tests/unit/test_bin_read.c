/* Unit tests of the binary trace reader (rt_bin_read_mem, rt_bin_read_fd)
 * on traces built from the spec by the encoder in tests/cli/bin_encoder.h.
 * TZ is UTC for the whole run, so local times are known. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtrace/binary.h"
#include "rtrace/filter.h"
#include "rtrace/heapcheck.h"
#include "rtrace/heapprof.h"
#include "rtrace/text.h"

#include "../cli/bin_encoder.h"
#include "binary/bin_zpar.h"
#include "format/trace_format.h"
#include "format/varint.h"

#include <zstd.h>

#define START_SEC 1308239388ull /* 2011-06-16 15:49:48 UTC */
#define DAY_US(h, m, s) ((((uint64_t)(h) * 60 + (m)) * 60 + (s)) * 1000000ull)

enum { FN_MALLOC = 1, FN_FREE = 2, FN_SHMGET = 3 };
enum { ALLOC = 1, FREE = 2 };

/* Calls and warnings seen through the callbacks. */
typedef struct seen {
	rt_call *calls;
	size_t n, cap;
	int nwarn;
	rt_diag warn[8];
	rt_leaks *leaks; /* feed the leak filter instead of keeping calls */
	rt_read_stats st; /* of the last read */
	int tasks; /* the most threads the process had at a call (every 256th) */
	size_t warn_at[8]; /* calls delivered before each warning */
	size_t batches, most; /* on_calls: batches, the longest */
} seen;

/* The "Threads:" line of /proc/self/status. */
static int task_count(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

static void on_call(void *ctx, rt_trace *t, const rt_call *c)
{
	seen *s = ctx;
	/* delivered calls are complete: interned backtrace, known names */
	assert_true(c->bt < rt_trace_bt_count(t));
	assert_non_null(rt_trace_str(t, c->fn));
	if (s->leaks)
		rt_leaks_feed(s->leaks, t, c);
	if (s->n % 256 == 0) {
		int k = task_count();
		s->tasks = k > s->tasks ? k : s->tasks;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->calls = realloc(s->calls, s->cap * sizeof *s->calls);
		assert_non_null(s->calls);
	}
	s->calls[s->n++] = *c;
}

static void on_warn(void *ctx, const rt_diag *d)
{
	seen *s = ctx;
	if (s->nwarn < 8) {
		s->warn[s->nwarn] = *d;
		s->warn_at[s->nwarn] = s->n;
	}
	s->nwarn++;
}

/* rt_read_opts.on_calls: each call as on_call would take it. */
static void on_calls(void *ctx, rt_trace *t, const rt_call *c, size_t n)
{
	seen *s = ctx;
	assert_true(n > 0);
	s->batches++;
	s->most = n > s->most ? n : s->most;
	for (size_t i = 0; i < n; i++)
		on_call(ctx, t, &c[i]);
}

static void seen_free(seen *s)
{
	free(s->calls);
	memset(s, 0, sizeof *s);
}

static int read_len(rt_trace *t, const bfile *bf, size_t len, uint32_t depth, seen *s,
		    rt_diag *err)
{
	rt_read_opts o = {depth, s ? on_call : NULL, s ? on_warn : NULL, s};
	rt_read_stats st;
	int rc = rt_bin_read_mem(t, bf->f.b, len, "t.rtrace", &o, &st, err);
	assert_int_equal(st.bytes, len);
	if (s) {
		assert_int_equal(st.calls, s->n);
		s->st = st;
	}
	return rc;
}

static int read_bf(rt_trace *t, const bfile *bf, seen *s, rt_diag *err)
{
	return read_len(t, bf, bf->f.len, 0, s, err);
}

static void read_ok(rt_trace *t, const bfile *bf, uint32_t depth, seen *s)
{
	rt_diag err;
	int rc = read_len(t, bf, bf->f.len, depth, s, &err);
	if (rc != 0)
		fail_msg("read failed: %s", err.msg);
}

/* The process, one generation of maps, memory and two functions. */
static void preamble(bfile *bf, bthread *t, uint64_t flags)
{
	enc_process(bf, t, 4242, 1, START_SEC, 500000000, "x86_64", "/usr/bin/app",
		    "app --run", 10, flags);
	enc_maps(bf, t, 1);
	enc_module(bf, t, 0x400000, 0x401000, 0, "/usr/bin/app");
	enc_module(bf, t, 0x7f0000000000, 0x7f0000100000, 0x1000, "/lib/libc.so.6");
	enc_resource(bf, t, 1, "memory", "memory allocation in bytes", 0);
	enc_function(bf, t, FN_MALLOC, "malloc");
	enc_function(bf, t, FN_FREE, "free");
}

/* One thread: the preamble, stack 1, then allocations 1..n. */
static void simple(bfile *bf, bthread *a, uint32_t chunk, int n)
{
	static const uint64_t stack[] = {0x400123, 0x400200};
	bf_init(bf, chunk, 4242);
	*a = bf_thread(100);
	preamble(bf, a, 0);
	enc_bt(bf, a, 1, 2, stack);
	for (int i = 1; i <= n; i++)
		enc_call(bf, a, (uint64_t)i, 0, ALLOC, FN_MALLOC, 1, 0x1000 + (uint64_t)i * 16,
			 (uint64_t)i, 1, 0);
}

static size_t chunk_off(const bfile *bf, int k)
{
	return 64 + (size_t)k * bf->chunk_size;
}

/* --- the model --- */

static const uint64_t every_stack[] = {0x400123, 0x7f0000000456, 0x400100};

/* One thread writing every record type; returns the MESSAGE's offset. */
static size_t build_every_type(bfile *bf)
{
	bf_init(bf, 4096, 99);
	bthread a = bf_thread(100);
	preamble(bf, &a, 1);
	enc_resource(bf, &a, 3, "segment", "shared memory segment", 1);
	enc_function(bf, &a, FN_SHMGET, "shmget");
	enc_context(bf, &a, 1, "first context");
	enc_context(bf, &a, 2, "second context");
	enc_bt(bf, &a, 1, 3, every_stack);
	enc_call(bf, &a, 1, 1500000, ALLOC, FN_MALLOC, 1, 0x1000, 24, 1, 1);
	enc_call(bf, &a, 2, 1000, ALLOC, FN_SHMGET, 3, 0x77, 1024, 1, 2);
	size_t msg = enc_message(bf, &a, "disk full\nstopped");
	enc_call(bf, &a, 3, 1000, FREE, FN_FREE, 1, 0x1000, 0, 0, 0);
	enc_end(bf, &a, 3);
	bf_finish(bf);
	return msg;
}

static void check_every_header(const rt_trace *t)
{
	assert_string_equal(rt_trace_header(t, "version"), "2.0");
	assert_string_equal(rt_trace_header(t, "arch"), "x86_64");
	assert_string_equal(rt_trace_header(t, "timestamp"), "2011.6.16 15:49:48");
	assert_string_equal(rt_trace_header(t, "process"), "/usr/bin/app");
	assert_string_equal(rt_trace_header(t, "pid"), "4242"); /* PROCESS over file header */
	assert_string_equal(rt_trace_header(t, "backtrace depth"), "10");
	assert_string_equal(rt_trace_header(t, "origin"), "rtrace 0.1.0");
}

static void check_every_registry(const rt_trace *t)
{
	assert_int_equal(rt_trace_resource_count(t), 2);
	const rt_resource *mem = rt_trace_resource_get(t, 1), *seg = rt_trace_resource_get(t, 2);
	assert_int_equal(mem->mask, 1);
	assert_string_equal(mem->type, "memory");
	assert_string_equal(mem->desc, "memory allocation in bytes");
	assert_null(mem->flags);
	assert_false(mem->refcount);
	assert_int_equal(seg->mask, 4); /* resource id 3 */
	assert_string_equal(seg->flags, "refcount");
	assert_true(seg->refcount);
	assert_int_equal(rt_trace_mmap_count(t), 2);
	assert_string_equal(rt_trace_mmap_at(t, 1)->module, "/lib/libc.so.6");
	assert_int_equal(rt_trace_mmap_at(t, 1)->from, 0x7f0000000000);
	assert_int_equal(rt_trace_mmap_at(t, 1)->to, 0x7f0000100000);
	assert_int_equal(rt_trace_context_count(t), 2);
	assert_int_equal(rt_trace_context_at(t, 1)->id, 2);
	assert_string_equal(rt_trace_context_at(t, 1)->name, "second context");
}

static void check_every_calls(const rt_trace *t, const rt_call *c)
{
	assert_int_equal(c[0].index, 1);
	assert_int_equal(c[0].kind, RT_CALL_ALLOC);
	assert_int_equal(c[0].size, 24);
	assert_int_equal(c[0].res_id, 0x1000);
	assert_string_equal(rt_trace_str(t, c[0].fn), "malloc");
	assert_int_equal(c[0].res_type, 1);
	assert_int_equal(c[0].context, 1);
	assert_int_equal(c[0].args, RT_NONE);
	assert_int_equal(rt_trace_bt_len(t, c[0].bt), 3);
	const rt_frame *f = rt_trace_bt_frames(t, c[0].bt);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(f[i].addr, every_stack[i]);
		assert_int_equal(f[i].text, RT_NONE);
	}
	assert_true(c[0].flags & RT_CALL_HAS_TIMESTAMP);
	assert_int_equal(c[0].timestamp_us, DAY_US(15, 49, 48) + 501500);
	assert_string_equal(rt_trace_str(t, c[1].fn), "shmget");
	assert_int_equal(c[1].res_type, 2);
	assert_int_equal(c[1].context, 2);
	assert_int_equal(c[1].timestamp_us, DAY_US(15, 49, 48) + 501501);
	assert_int_equal(c[2].kind, RT_CALL_FREE);
	assert_int_equal(c[2].size, 0);
	assert_int_equal(c[2].context, 0);
	assert_int_equal(rt_trace_bt_len(t, c[2].bt), 0); /* bt 0: the empty stack */
}

/* The tracer's message: a warning, and a comment after call 2. */
static void check_every_message(const rt_trace *t, const seen *s, size_t msg)
{
	assert_int_equal(s->nwarn, 1);
	assert_int_equal(s->warn[0].line, 0);
	char want[128];
	snprintf(want, sizeof want, "byte offset %zu: tracer message: disk full?stopped", msg);
	assert_string_equal(s->warn[0].msg, want);
	assert_int_equal(rt_trace_comment_count(t), 1);
	assert_int_equal(rt_trace_comment_at(t, 0)->after, 2);
	assert_string_equal(rt_trace_comment_at(t, 0)->text, "## disk full?stopped");
}

static void every_record_type(void **state)
{
	(void)state;
	bfile bf;
	size_t msg = build_every_type(&bf);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	rt_read_stats st;
	rt_read_opts o = {0, on_call, on_warn, &s};
	rt_diag err;
	assert_int_equal(rt_bin_read_mem(t, bf.f.b, bf.f.len, "t", &o, &st, &err), 0);
	assert_int_equal(st.lines, 17);
	assert_int_equal(st.calls, 3);
	assert_int_equal(s.n, 3);
	check_every_header(t);
	check_every_registry(t);
	check_every_calls(t, s.calls);
	check_every_message(t, &s, msg);
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* A tracer that stopped early (a full disk: reason 1, ENOSPC 28) left
 * its reason in the file header: the trace reads, and says it is
 * incomplete in a warning, a comment after the last call and the stats.
 * A trace without a reason says nothing of the kind. */
static void stopped_trace_says_incomplete(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 256, 5);
	bf_stopped(&bf, 7, 1, 28);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, &bf, 0, &s);
	assert_int_equal(s.n, 5);
	const char *want = "trace incomplete: tracing stopped at call 7: cannot extend the trace file: "
			   "No space left on device";
	assert_string_equal(s.st.incomplete, want);
	assert_int_equal(s.nwarn, 1);
	assert_non_null(strstr(s.warn[0].msg, want));
	assert_int_equal(rt_trace_comment_count(t), 1);
	assert_int_equal(rt_trace_comment_at(t, 0)->after, 5);
	assert_non_null(strstr(rt_trace_comment_at(t, 0)->text, want));
	seen_free(&s);
	rt_trace_free(t);
	bf_stopped(&bf, 0, 0, 0);
	t = rt_trace_new();
	read_ok(t, &bf, 0, &s);
	assert_string_equal(s.st.incomplete, "");
	assert_int_equal(s.nwarn, 0);
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

static void calls_appended_without_callback(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 256, 20);
	rt_trace *t = rt_trace_new();
	read_ok(t, &bf, 0, NULL);
	assert_int_equal(rt_trace_call_count(t), 20);
	for (size_t i = 0; i < 20; i++)
		assert_int_equal(rt_trace_calls(t)[i].index, i + 1);
	/* no PROCESS flags: no timestamps */
	assert_false(rt_trace_calls(t)[0].flags & RT_CALL_HAS_TIMESTAMP);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* Threads write calls with pseudo-random interleaving into small chunks;
 * the reader hands them out in index order. */
/* Reads bf: n calls in index order, call i of thread k (its size) at
 * address i with a stack whose frame is unit * (k + 1). */
static void read_merged(const bfile *bf, size_t n, uint64_t unit)
{
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, bf, 0, &s);
	assert_int_equal(s.n, n);
	for (size_t i = 0; i < s.n; i++) {
		assert_int_equal(s.calls[i].index, i + 1);
		assert_int_equal(s.calls[i].res_id, i + 1);
		const rt_frame *f = rt_trace_bt_frames(t, s.calls[i].bt);
		assert_int_equal(f[0].addr, unit * (s.calls[i].size + 1));
	}
	seen_free(&s);
	rt_trace_free(t);
}

static void threads_merged_in_index_order(void **state)
{
	(void)state;
	enum { NT = 4, NCALLS = 400 };
	bfile bf;
	bf_init(&bf, 96, 1);
	bthread th[NT];
	for (int i = 0; i < NT; i++)
		th[i] = bf_thread(10 + (uint32_t)i);
	preamble(&bf, &th[0], 0);
	uint32_t x = 12345;
	bool has_bt[NT] = {false};
	for (uint64_t i = 1; i <= NCALLS; i++) {
		x = x * 1103515245 + 12345;
		/* thread 3 starts late, thread 2 is bursty */
		int k = (int)((x >> 16) % (i < 200 ? 3 : NT));
		if (k == 2 && (x >> 8) % 4)
			k = 1;
		uint64_t frame = 0x1000 * (uint64_t)(k + 1);
		if (!has_bt[k]) {
			enc_bt(&bf, &th[k], (uint64_t)k + 1, 1, &frame);
			has_bt[k] = true;
		}
		enc_call(&bf, &th[k], i, 10, ALLOC, FN_MALLOC, 1, i, (uint64_t)k, (uint64_t)k + 1, 0);
	}
	read_merged(&bf, NCALLS, 0x1000);
	be_free(&bf.f);
}

static void same_stack_two_threads_is_one_backtrace(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 4096, 1);
	bthread a = bf_thread(1), b = bf_thread(2);
	preamble(&bf, &a, 0);
	static const uint64_t abc[] = {0xa, 0xb, 0xc}, abd[] = {0xa, 0xb, 0xd};
	enc_bt(&bf, &a, 1, 3, abc);
	enc_call(&bf, &a, 1, 0, ALLOC, FN_MALLOC, 1, 0x10, 1, 1, 0);
	enc_bt(&bf, &b, 7, 3, abc);
	enc_call(&bf, &b, 2, 0, ALLOC, FN_MALLOC, 1, 0x20, 1, 7, 0);
	enc_bt(&bf, &a, 2, 3, abd);
	enc_call(&bf, &a, 3, 0, ALLOC, FN_MALLOC, 1, 0x30, 1, 2, 0);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, &bf, 0, &s);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.calls[0].bt, s.calls[1].bt);
	assert_true(s.calls[0].bt != s.calls[2].bt);
	assert_int_equal(rt_trace_bt_count(t), 2);
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

static void max_depth_keeps_the_top_frames(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 4096, 1);
	bthread a = bf_thread(1);
	preamble(&bf, &a, 0);
	static const uint64_t s1[] = {1, 2, 3, 4, 5}, s2[] = {1, 2, 9, 9};
	enc_bt(&bf, &a, 1, 5, s1);
	enc_bt(&bf, &a, 2, 4, s2);
	enc_call(&bf, &a, 1, 0, ALLOC, FN_MALLOC, 1, 0x10, 1, 1, 0);
	enc_call(&bf, &a, 2, 0, ALLOC, FN_MALLOC, 1, 0x20, 1, 2, 0);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, &bf, 2, &s);
	assert_int_equal(s.calls[0].bt, s.calls[1].bt);
	assert_int_equal(rt_trace_bt_len(t, s.calls[0].bt), 2);
	assert_int_equal(rt_trace_bt_frames(t, s.calls[0].bt)[1].addr, 2);
	seen_free(&s);
	rt_trace_free(t);

	t = rt_trace_new(); /* and all frames without a limit */
	read_ok(t, &bf, 0, NULL);
	assert_int_equal(rt_trace_bt_len(t, rt_trace_calls(t)[0].bt), 5);
	assert_int_equal(rt_trace_bt_frames(t, rt_trace_calls(t)[0].bt)[4].addr, 5);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* A later generation lists the modules that stayed: only new mappings are
 * added, and a module's old mapping stays after it moved. */
static void maps_generations_add_new_modules(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 4096, 1);
	bthread a = bf_thread(1), b = bf_thread(2);
	preamble(&bf, &a, 0);
	enc_call(&bf, &a, 1, 0, ALLOC, FN_MALLOC, 1, 0x10, 1, 0, 0);
	enc_maps(&bf, &b, 2); /* b dlopens libfoo */
	enc_module(&bf, &b, 0x400000, 0x401000, 0, "/usr/bin/app");
	enc_module(&bf, &b, 0x7f0000000000, 0x7f0000100000, 0x1000, "/lib/libc.so.6");
	enc_module(&bf, &b, 0x7f1000000000, 0x7f1000010000, 0, "/usr/lib/libfoo.so");
	enc_call(&bf, &b, 2, 0, ALLOC, FN_MALLOC, 1, 0x20, 1, 0, 0);
	enc_maps(&bf, &a, 3); /* a: dlclose, dlopen again elsewhere */
	enc_module(&bf, &a, 0x400000, 0x401000, 0, "/usr/bin/app");
	enc_module(&bf, &a, 0x7f0000000000, 0x7f0000100000, 0x1000, "/lib/libc.so.6");
	enc_module(&bf, &a, 0x7f2000000000, 0x7f2000010000, 0, "/usr/lib/libfoo.so");
	rt_trace *t = rt_trace_new();
	read_ok(t, &bf, 0, NULL);
	assert_int_equal(rt_trace_mmap_count(t), 4);
	assert_string_equal(rt_trace_mmap_at(t, 2)->module, "/usr/lib/libfoo.so");
	assert_int_equal(rt_trace_mmap_at(t, 2)->from, 0x7f1000000000);
	assert_string_equal(rt_trace_mmap_at(t, 3)->module, "/usr/lib/libfoo.so");
	assert_int_equal(rt_trace_mmap_at(t, 3)->from, 0x7f2000000000);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* The leak filter needs index order: in file order thread a's two
 * allocations of 0x10 come before b's release between them. */
static void leak_filter_sees_index_order(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 4096, 1);
	bthread a = bf_thread(1), b = bf_thread(2);
	preamble(&bf, &a, 0);
	enc_resource(&bf, &a, 2, "segment", "shared memory segment", 1);
	enc_function(&bf, &a, FN_SHMGET, "shmget");
	enc_call(&bf, &a, 1, 0, ALLOC, FN_MALLOC, 1, 0x10, 8, 0, 0);
	enc_call(&bf, &b, 2, 0, FREE, FN_FREE, 1, 0x10, 0, 0, 0);
	enc_call(&bf, &a, 3, 0, ALLOC, FN_MALLOC, 1, 0x10, 8, 0, 0);
	/* refcount: two attachments of segment 5, one release: still live */
	enc_call(&bf, &a, 4, 0, ALLOC, FN_SHMGET, 2, 5, 64, 0, 0);
	enc_call(&bf, &a, 5, 0, ALLOC, FN_SHMGET, 2, 5, 64, 0, 0);
	enc_call(&bf, &b, 6, 0, FREE, FN_FREE, 2, 5, 0, 0, 0);
	assert_true(b.chunk > a.chunk); /* b's chunk follows a's in the file */

	rt_trace *t = rt_trace_new();
	seen s = {0};
	s.leaks = rt_leaks_new();
	read_ok(t, &bf, 0, &s);
	rt_leaks_finish(s.leaks, t);
	rt_trace_compact(t); /* released allocations are dead until then */
	assert_int_equal(rt_trace_call_count(t), 2);
	assert_int_equal(rt_trace_calls(t)[0].index, 3);
	assert_int_equal(rt_trace_calls(t)[1].index, 4);
	assert_true(rt_trace_resource_get(t, rt_trace_calls(t)[1].res_type)->refcount);
	rt_leaks_free(s.leaks);
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

static void timestamps_from_process_start(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 4096, 1);
	bthread a = bf_thread(1), b = bf_thread(2);
	preamble(&bf, &a, 1); /* starts at 15:49:48.500 */
	enc_call(&bf, &a, 1, 1500000, ALLOC, FN_MALLOC, 1, 0x10, 1, 0, 0);
	enc_call(&bf, &b, 2, 250000, ALLOC, FN_MALLOC, 1, 0x20, 1, 0, 0);
	enc_call(&bf, &a, 3, 2000000000, ALLOC, FN_MALLOC, 1, 0x30, 1, 0, 0);
	enc_call(&bf, &b, 4, 86400ull * 1000000000, ALLOC, FN_MALLOC, 1, 0x40, 1, 0, 0);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, &bf, 0, &s);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.calls[0].timestamp_us, DAY_US(15, 49, 48) + 501500);
	assert_int_equal(s.calls[1].timestamp_us, DAY_US(15, 49, 48) + 500250);
	assert_int_equal(s.calls[2].timestamp_us, DAY_US(15, 49, 50) + 501500);
	/* a day later: the time of day again */
	assert_int_equal(s.calls[3].timestamp_us, DAY_US(15, 49, 48) + 500250);
	for (int i = 0; i < 4; i++)
		assert_int_equal(s.calls[i].flags, RT_CALL_HAS_TIMESTAMP);
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

static void timestamps_across_midnight(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 4096, 1);
	bthread a = bf_thread(1);
	enc_process(&bf, &a, 1, 0, 1308268799, 900000000, "i686", "/bin/x", "", 0, 1);
	enc_resource(&bf, &a, 1, "memory", "memory allocation in bytes", 0);
	enc_function(&bf, &a, FN_MALLOC, "malloc");
	enc_call(&bf, &a, 1, 50000000, ALLOC, FN_MALLOC, 1, 0x10, 1, 0, 0);
	enc_call(&bf, &a, 2, 150000000, ALLOC, FN_MALLOC, 1, 0x20, 1, 0, 0);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, &bf, 0, &s);
	assert_string_equal(rt_trace_header(t, "timestamp"), "2011.6.16 23:59:59");
	assert_int_equal(s.calls[0].timestamp_us, DAY_US(23, 59, 59) + 950000);
	assert_int_equal(s.calls[1].timestamp_us, 100000);
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* A tid taken again by a new thread: its chunks restart at seq 0 and its
 * time counts from the process start again. */
static void reused_tid_is_a_new_thread(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 64, 1);
	bthread a = bf_thread(1), old = bf_thread(7), b = bf_thread(8);
	preamble(&bf, &a, 1);
	for (uint64_t i = 1; i <= 8; i++)
		enc_call(&bf, &old, i, 1000000, ALLOC, FN_MALLOC, 1, i, 1, 0, 0);
	assert_true(old.seq >= 1);
	enc_call(&bf, &b, 9, 1000, ALLOC, FN_MALLOC, 1, 9, 1, 0, 0);
	bthread young = bf_thread(7);
	for (uint64_t i = 10; i <= 14; i++)
		enc_call(&bf, &young, i, 1000000, ALLOC, FN_MALLOC, 1, i, 1, 0, 0);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, &bf, 0, &s);
	assert_int_equal(s.n, 14);
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.calls[i].index, i + 1);
	assert_int_equal(s.calls[7].timestamp_us, DAY_US(15, 49, 48) + 508000);
	assert_int_equal(s.calls[9].timestamp_us, DAY_US(15, 49, 48) + 501000);
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* A killed program: data_end 0 and zero-filled chunks after the data. */
static void killed_program_zero_chunks(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 128, 30);
	bthread spare = bf_thread(0);
	bf_new_chunk(&bf, &spare);
	memset(bf.f.b + spare.chunk, 0, bf.chunk_size); /* taken, never written */
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, &bf, 0, &s);
	assert_int_equal(s.n, 30);
	seen_free(&s);
	rt_trace_free(t);

	/* the first zero chunk ends the trace, even with chunks after it */
	bthread late = bf_thread(5);
	enc_call(&bf, &late, 31, 0, ALLOC, FN_MALLOC, 1, 31, 1, 0, 0);
	t = rt_trace_new();
	read_ok(t, &bf, 0, &s);
	assert_int_equal(s.n, 30);
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* Another thread's definition, written before a call's index was taken,
 * is known when the call is delivered even though the call was read
 * ahead of it. */
static void definitions_from_other_threads(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 4096, 1);
	bthread a = bf_thread(1), b = bf_thread(2);
	preamble(&bf, &a, 0);
	/* b reads call 4 ahead while a is at call 3, before FUNCTION 9 */
	enc_call(&bf, &a, 1, 0, ALLOC, FN_MALLOC, 1, 0x10, 1, 0, 0);
	enc_call(&bf, &b, 2, 0, ALLOC, FN_MALLOC, 1, 0x20, 1, 0, 0);
	enc_call(&bf, &a, 3, 0, ALLOC, FN_MALLOC, 1, 0x30, 1, 0, 0);
	enc_function(&bf, &a, 9, "calloc");
	enc_call(&bf, &b, 4, 0, ALLOC, 9, 1, 0x40, 1, 0, 0);
	enc_call(&bf, &a, 5, 0, ALLOC, 9, 1, 0x50, 1, 0, 0);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, &bf, 0, &s);
	assert_int_equal(s.n, 5);
	assert_string_equal(rt_trace_str(t, s.calls[3].fn), "calloc");
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

static void fd_file_and_pipe(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 512, 25);
	bf_finish(&bf);
	char path[] = "/tmp/test_bin_read.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, bf.f.b, bf.f.len), (ssize_t)bf.f.len);
	rt_trace *t = rt_trace_new();
	rt_read_stats st;
	rt_diag err;
	assert_int_equal(rt_bin_read_fd(t, fd, path, NULL, &st, &err), 0);
	assert_int_equal(rt_trace_call_count(t), 25);
	assert_int_equal(st.bytes, bf.f.len);
	rt_trace_free(t);
	close(fd);
	unlink(path);

	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_true(bf.f.len < 60000); /* fits in the pipe's buffer */
	assert_int_equal(write(p[1], bf.f.b, bf.f.len), (ssize_t)bf.f.len);
	close(p[1]);
	t = rt_trace_new();
	assert_int_equal(rt_bin_read_fd(t, p[0], "<pipe>", NULL, &st, &err), 0);
	assert_int_equal(rt_trace_call_count(t), 25);
	rt_trace_free(t);
	close(p[0]);
	be_free(&bf.f);
}

static void detection(void **state)
{
	(void)state;
	assert_true(rt_bin_is_binary("RTRACE\0\1", 8));
	assert_true(rt_bin_is_binary("RTRACE\0\2", 8)); /* the reader names the version */
	assert_true(rt_bin_is_binary("RTRACE\0", 7));
	assert_false(rt_bin_is_binary("RTRACE", 6));
	assert_false(rt_bin_is_binary("version=2.0, arch=i686", 22));
	assert_false(rt_bin_is_binary("", 0));
}

/* --- errors --- */

/* Reads, expects an error at byte offset off whose message contains want,
 * and that the first ncalls calls (1..ncalls) were delivered. */
static void expect_error(const bfile *bf, size_t len, size_t off, const char *want,
			 size_t ncalls)
{
	rt_trace *t = rt_trace_new();
	seen s = {0};
	rt_diag err;
	int rc = read_len(t, bf, len, 0, &s, &err);
	char prefix[64];
	snprintf(prefix, sizeof prefix, "byte offset %zu: expected ", off);
	if (rc != -1 || strncmp(err.msg, prefix, strlen(prefix)) || !strstr(err.msg, want))
		fail_msg("rc %d, message '%s'; wanted '%s...%s'", rc, err.msg, prefix, want);
	assert_int_equal(err.line, 0);
	assert_string_equal(err.file, "t.rtrace");
	char buf[600];
	rt_diag_format(&err, buf, sizeof buf);
	assert_true(!strncmp(buf, "t.rtrace: byte offset ", 22));
	if (s.n != ncalls)
		fail_msg("%zu calls delivered before '%s', expected %zu", s.n, err.msg, ncalls);
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.calls[i].index, i + 1);
	seen_free(&s);
	rt_trace_free(t);
}

/* --- the fast paths: a stream's run, CALL fields with room, mapped files --- */

/* A trace of nt threads (tids tid0...), the first writing the preamble. */
static void threads_init(bfile *bf, uint32_t chunk, bthread *th, int nt, uint32_t tid0)
{
	bf_init(bf, chunk, 1);
	for (int i = 0; i < nt; i++)
		th[i] = bf_thread(tid0 + (uint32_t)i);
	preamble(bf, &th[0], 0);
}

/* Threads in bursts whose runs cross chunk boundaries and interleave:
 * the merge lets a stream keep its turn only while its next call comes
 * first. Wrong there, calls would come out of index order. */
static void runs_of_threads_keep_index_order(void **state)
{
	(void)state;
	enum { NT = 3, NCALLS = 20000 };
	bfile bf;
	bthread th[NT];
	threads_init(&bf, 8192, th, NT, 20);
	for (int k = 0; k < NT; k++) {
		uint64_t frame = 0x2000 * (uint64_t)(k + 1);
		enc_bt(&bf, &th[k], (uint64_t)k + 1, 1, &frame);
	}
	uint32_t x = 777;
	int k = 0, left = 0;
	for (uint64_t i = 1; i <= NCALLS; i++) {
		if (!left) { /* a run of 1 to 200 calls of one thread */
			x = x * 1103515245 + 12345;
			k = (int)((x >> 16) % NT);
			left = 1 + (int)((x >> 8) % 200);
		}
		left--;
		enc_call(&bf, &th[k], i, 10, ALLOC, FN_MALLOC, 1, i, (uint64_t)k, (uint64_t)k + 1, 0);
	}
	read_merged(&bf, NCALLS, 0x2000);
	/* a thread's run that breaks off (a bad record in its third chunk):
	 * every call before the break is delivered, in order, then the error */
	size_t cut = chunk_off(&bf, 10) + 16 + 1; /* the 11th chunk's first record */
	uint8_t was = bf.f.b[cut - 1];
	bf.f.b[cut - 1] = 0xee; /* no record type */
	rt_trace *t = rt_trace_new();
	seen s = {0};
	rt_diag err;
	assert_int_equal(read_bf(t, &bf, &s, &err), -1);
	assert_non_null(strstr(err.msg, "expected a record type"));
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.calls[i].index, i + 1);
	assert_true(s.n > 0 && s.n < NCALLS);
	bf.f.b[cut - 1] = was;
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* A CALL record read with room to spare in its chunk (no bound checked
 * per field) and the same record as the chunk's last bytes (every field
 * checked) give the same call or the same error at the same offset. */
static void call_fields_with_and_without_room(void **state)
{
	(void)state;
	static const uint8_t max[] = {8, 2, 0, 1, 1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
				      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0};
	static const uint8_t eleven[] = {8, 2, 0, 1, 1, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
	static const uint8_t big[] = {8, 2, 0, 1, 1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
	static const uint8_t kind[] = {8, 2, 0, 3, 1, 1, 0x10, 0, 0};
	static const uint8_t order[] = {8, 1, 0, 1, 1, 1, 0x10, 4, 0, 0};
	static const uint8_t ctx[] = {8, 2, 0, 2, 1, 1, 0x10, 0, 0x80, 0x80, 0x80, 0x80, 0x10};
	const struct { const uint8_t *p; size_t n; size_t at; const char *want; } bad[] = {
		{eleven, sizeof eleven, 6, "varint of at most 10 bytes"},
		{big, sizeof big, 6, "varint below 2^64"},
		{kind, sizeof kind, 0, "call kind 1 (alloc) or 2 (free)"},
		{order, sizeof order, 0, "call index above 1"},
		{ctx, sizeof ctx, 0, "32-bit context mask"},
	};
	for (int room = 0; room < 2; room++) {
		bfile bf;
		bthread a;
		simple(&bf, &a, 4096, 1);
		enc_raw(&bf, &a, max, sizeof max);
		for (uint64_t i = 3; room && i < 20; i++) /* 100 bytes and more after it */
			enc_call(&bf, &a, i, 0, ALLOC, FN_MALLOC, 1, 0x10 * i, i, 0, 0);
		rt_trace *t = rt_trace_new();
		seen s = {0};
		read_ok(t, &bf, 0, &s);
		assert_int_equal(s.n, room ? 19 : 2);
		assert_int_equal(s.calls[1].res_id, UINT64_MAX);
		assert_int_equal(s.calls[1].size, (1ull << 63) - 1);
		seen_free(&s);
		rt_trace_free(t);
		be_free(&bf.f);
		for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
			simple(&bf, &a, 4096, 1);
			size_t at = enc_raw(&bf, &a, bad[k].p, bad[k].n);
			for (uint64_t i = 3; room && i < 20; i++)
				enc_call(&bf, &a, i, 0, ALLOC, FN_MALLOC, 1, 0x10 * i, i, 0, 0);
			expect_error(&bf, bf.f.len, at + bad[k].at, bad[k].want, 1);
			be_free(&bf.f);
		}
	}
}

/* The calls of a read, each with its stack's first frame, and its end. */
typedef struct outcome {
	seen s;
	uint64_t *frame;
	int rc;
	rt_diag err;
} outcome;

/* threads: rt_read_opts.threads; batch: the calls by on_calls */
static void outcome_of_jb(const char *path, const uint8_t *mem, size_t len, unsigned threads, bool batch,
			  outcome *o)
{
	memset(o, 0, sizeof *o);
	rt_trace *t = rt_trace_new();
	rt_read_opts ro = {0, on_call, on_warn, &o->s, threads, batch ? on_calls : NULL};
	rt_read_stats st;
	if (path) {
		int fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		o->rc = rt_bin_read_fd(t, fd, "f", &ro, &st, &o->err);
		close(fd);
	} else {
		o->rc = rt_bin_read_mem(t, mem, len, "f", &ro, &st, &o->err);
	}
	o->frame = calloc(o->s.n + 1, sizeof *o->frame);
	assert_non_null(o->frame);
	for (size_t i = 0; i < o->s.n; i++)
		o->frame[i] = rt_trace_bt_frames(t, o->s.calls[i].bt)[0].addr;
	rt_trace_free(t);
}

static void outcome_of_j(const char *path, const uint8_t *mem, size_t len, unsigned threads, outcome *o)
{
	outcome_of_jb(path, mem, len, threads, false, o);
}

static void outcome_of(const char *path, const uint8_t *mem, size_t len, outcome *o)
{
	outcome_of_j(path, mem, len, 0, o);
}

static void same_outcome(outcome *a, outcome *b)
{
	assert_int_equal(a->rc, b->rc);
	assert_string_equal(a->err.msg, b->err.msg);
	assert_int_equal(a->s.n, b->s.n);
	assert_int_equal(a->s.nwarn, b->s.nwarn);
	for (int i = 0; i < a->s.nwarn && i < 8; i++) {
		assert_string_equal(a->s.warn[i].msg, b->s.warn[i].msg);
		assert_int_equal(a->s.warn_at[i], b->s.warn_at[i]);
	}
	for (size_t i = 0; i < a->s.n; i++) {
		assert_int_equal(a->s.calls[i].index, b->s.calls[i].index);
		assert_int_equal(a->s.calls[i].res_id, b->s.calls[i].res_id);
		assert_int_equal(a->frame[i], b->frame[i]);
	}
	for (int k = 0; k < 2; k++) {
		outcome *o = k ? b : a;
		seen_free(&o->s);
		free(o->frame);
	}
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	uint8_t *b = malloc(*len + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

static void write_file(const char *path, const uint8_t *b, size_t n)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
}

/* A file read through its map (chunk headers by pread, read chunks given
 * back to the kernel) delivers what the same bytes in memory deliver:
 * raw and compressed, whole and cut at points inside chunks and frames. */
static void mapped_file_reads_as_memory(void **state)
{
	(void)state;
	enum { NT = 3, NCALLS = 6000 };
	bfile bf;
	bthread th[NT];
	threads_init(&bf, 16384, th, NT, 30);
	uint32_t x = 99;
	for (uint64_t i = 1; i <= NCALLS; i++) {
		x = x * 1103515245 + 12345;
		int k = (int)((x >> 16) % NT);
		uint64_t frame = 0x3000 + (i % 50) * 8;
		enc_bt(&bf, &th[k], i, 1, &frame);
		enc_call(&bf, &th[k], i, 5, ALLOC, FN_MALLOC, 1, 0x10000 + i * 32, i, i, 0);
	}
	bf_finish(&bf);
	char raw[] = "/tmp/test_bin_mapped.XXXXXX", z[sizeof raw + 2];
	int fd = mkstemp(raw);
	assert_true(fd >= 0);
	close(fd);
	snprintf(z, sizeof z, "%s.z", raw);
	write_file(raw, bf.f.b, bf.f.len);
	rt_diag err;
	rt_bin_zwriter *w = rt_bin_zopen(raw, z, 1, &err);
	assert_non_null(w);
	assert_int_equal(rt_bin_zclose(w, true, &err), 0); /* removes raw */
	size_t zlen;
	uint8_t *zb = slurp(z, &zlen);
	const struct { const uint8_t *b; size_t len; } file[] = {{bf.f.b, bf.f.len}, {zb, zlen}};
	outcome whole_raw, whole_z;
	outcome_of(NULL, bf.f.b, bf.f.len, &whole_raw);
	outcome_of(NULL, zb, zlen, &whole_z);
	assert_int_equal(whole_raw.rc, 0);
	assert_int_equal(whole_raw.s.n, NCALLS);
	same_outcome(&whole_raw, &whole_z); /* the container holds the same calls */
	for (int f = 0; f < 2; f++) {
		size_t cuts[] = {file[f].len, file[f].len - 1, file[f].len / 2 + 7, file[f].len / 3, 64 + 20000};
		for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
			write_file(raw, file[f].b, cuts[c]);
			outcome m, d;
			outcome_of(NULL, file[f].b, cuts[c], &m);
			outcome_of(raw, NULL, 0, &d);
			if (c == 0)
				assert_int_equal(d.s.n, NCALLS);
			same_outcome(&m, &d);
		}
	}
	unlink(raw);
	unlink(z);
	free(zb);
	be_free(&bf.f);
}

static void many_modules_and_repeated_contexts(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 65536, 1);
	bthread a = bf_thread(1);
	preamble(&bf, &a, 0);
	char path[64];
	for (uint64_t gen = 2; gen <= 3; gen++) {
		enc_maps(&bf, &a, gen);
		for (uint64_t i = 0; i < 100; i++) {
			snprintf(path, sizeof path, "/usr/lib/lib%" PRIu64 ".so", i);
			enc_module(&bf, &a, 0x10000000 * (i + 1), 0x10000000 * (i + 1) + 0x1000, 0, path);
		}
		enc_context(&bf, &a, 4, "again");
	}
	rt_trace *t = rt_trace_new();
	read_ok(t, &bf, 0, NULL);
	assert_int_equal(rt_trace_mmap_count(t), 102);
	assert_int_equal(rt_trace_context_count(t), 1);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* A file ending inside a chunk header: no error when nothing can be lost. */
static void partial_chunk_headers(void **state)
{
	(void)state;
	static const struct {
		const char *bytes;
		size_t n;
		const char *err; /* NULL: no error */
	} cases[] = {
		{"\0\0\0\0\0\0\0\0", 8, NULL},       /* zero-filled */
		{"RTCK\0\0\0\0\x07", 9, NULL},          /* no byte used */
		{"RTCK\x10\0\0\0\x07", 9, "16-byte chunk header, found end of file after 9 bytes"},
		{"RT", 2, "16-byte chunk header, found end of file after 2 bytes"},
		{"RTXX", 4, "chunk magic \"RTCK\", or zero bytes"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		bfile bf;
		bthread a;
		simple(&bf, &a, 128, 30);
		size_t at = bf.f.len;
		be_bytes(&bf.f, cases[i].bytes, cases[i].n);
		if (cases[i].err) {
			expect_error(&bf, bf.f.len, at, cases[i].err, 30);
		} else {
			rt_trace *t = rt_trace_new();
			read_ok(t, &bf, 0, NULL);
			assert_int_equal(rt_trace_call_count(t), 30);
			rt_trace_free(t);
		}
		be_free(&bf.f);
	}
}

/* A start time that is no date: no timestamps, no error. */
static void absurd_start_time(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 4096, 1);
	bthread a = bf_thread(1);
	enc_process(&bf, &a, 1, 0, 1ull << 50, 0, "x", "/bin/x", "", 0, 1);
	enc_resource(&bf, &a, 1, "memory", "memory allocation in bytes", 0);
	enc_function(&bf, &a, FN_MALLOC, "malloc");
	enc_call(&bf, &a, 1, UINT64_MAX, ALLOC, FN_MALLOC, 1, 0x10, 1, 0, 0);
	rt_trace *t = rt_trace_new();
	read_ok(t, &bf, 0, NULL);
	assert_null(rt_trace_header(t, "timestamp"));
	assert_false(rt_trace_calls(t)[0].flags & RT_CALL_HAS_TIMESTAMP);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* Options, stats, name and error are optional. */
static void null_arguments(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 256, 3);
	rt_trace *t = rt_trace_new();
	assert_int_equal(rt_bin_read_mem(t, bf.f.b, bf.f.len, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(rt_trace_call_count(t), 3);
	rt_trace_free(t);
	t = rt_trace_new();
	assert_int_equal(rt_bin_read_mem(t, bf.f.b, 30, NULL, NULL, NULL, NULL), -1);
	rt_diag err;
	assert_int_equal(rt_bin_read_mem(t, NULL, 0, NULL, NULL, NULL, &err), -1);
	assert_string_equal(err.file, "<input>");
	rt_trace_free(t);
	be_free(&bf.f);
}

/* More than a pipe's buffer, written by a child while it is read. */
static void large_trace_through_a_pipe(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 4096, 12000);
	assert_true(bf.f.len > 100000); /* a pipe holds 64 KiB */
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		size_t off = 0;
		while (off < bf.f.len) {
			ssize_t w = write(p[1], bf.f.b + off, bf.f.len - off);
			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(p[1]);
	rt_trace *t = rt_trace_new();
	rt_read_stats st;
	rt_diag err;
	assert_int_equal(rt_bin_read_fd(t, p[0], "<pipe>", NULL, &st, &err), 0);
	assert_int_equal(rt_trace_call_count(t), 12000);
	assert_int_equal(st.bytes, bf.f.len);
	close(p[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	rt_trace_free(t);
	be_free(&bf.f);
}

static void error_file_header(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 256, 2);
	expect_error(&bf, 0, 0, "file header", 0);
	expect_error(&bf, 5, 5, "file header", 0);
	expect_error(&bf, 40, 40, "64-byte file header, found end of file", 0);
	bf.f.b[7] = 3;
	expect_error(&bf, bf.f.len, 7, "version 1 (or 2, compressed), found version 3", 0);
	bf.f.b[7] = 2; /* the compressed container: its frame format at 48 */
	expect_error(&bf, bf.f.len, 48, "frame format 1, found 0", 0);
	bf.f.b[7] = 1;
	bf.f.b[0] = 'X';
	expect_error(&bf, bf.f.len, 0, "magic \"RTRACE\\0\\1\"", 0);
	bf.f.b[0] = 'R';
	be_set32(&bf.f, 8, 10);
	expect_error(&bf, bf.f.len, 8, "header size between 64", 0);
	be_set32(&bf.f, 8, 64);
	be_set32(&bf.f, 12, 8);
	expect_error(&bf, bf.f.len, 12, "chunk size between 32", 0);
	be_set32(&bf.f, 12, 256);
	be_set64(&bf.f, 16, bf.f.len - 1);
	expect_error(&bf, bf.f.len, 16, "data_end 0 or the end of a chunk", 0);
	be_free(&bf.f);
}

static void error_unknown_record_type(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 256, 2);
	size_t at = enc_raw(&bf, &a, "\x2a", 1);
	enc_call(&bf, &a, 3, 0, ALLOC, FN_MALLOC, 1, 0x10, 1, 0, 0);
	expect_error(&bf, bf.f.len, at, "record type between 1 and 17, found 42", 2);
	be_free(&bf.f);
}

static void error_record_past_used(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 256, 2);
	/* a CALL whose context mask is missing */
	static const uint8_t call[] = {8, 3, 0, 1, 1, 1, 0x10, 1, 0};
	size_t at = enc_raw(&bf, &a, call, sizeof call);
	expect_error(&bf, bf.f.len, at, "CALL record starting here to end within its chunk's used bytes", 2);
	be_free(&bf.f);
	/* a string longer than the chunk's rest */
	simple(&bf, &a, 256, 1);
	static const uint8_t fn[] = {5, 4, 50, 'a', 'b'};
	at = enc_raw(&bf, &a, fn, sizeof fn);
	expect_error(&bf, bf.f.len, at, "FUNCTION record", 1);
	be_free(&bf.f);
}

static void error_long_varints(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 256, 2);
	static const uint8_t eleven[] = {8, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
	size_t at = enc_raw(&bf, &a, eleven, sizeof eleven);
	expect_error(&bf, bf.f.len, at + 1, "varint of at most 10 bytes", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	static const uint8_t big[] = {8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
	at = enc_raw(&bf, &a, big, sizeof big);
	expect_error(&bf, bf.f.len, at + 1, "varint below 2^64", 2);
	be_free(&bf.f);
	/* the largest 10-byte varint is fine: 2^64 - 1 as a resource id */
	simple(&bf, &a, 256, 1);
	static const uint8_t max[] = {8, 2, 0, 1, 1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0};
	enc_raw(&bf, &a, max, sizeof max);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, &bf, 0, &s);
	assert_int_equal(s.calls[1].res_id, UINT64_MAX);
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

static void error_undefined_ids(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 256, 2);
	size_t at = enc_call(&bf, &a, 3, 0, ALLOC, FN_MALLOC, 1, 0x10, 1, 99, 0);
	expect_error(&bf, bf.f.len, at, "BT record defining backtrace id 99 before this CALL", 2);
	/* defined after its first use in the same thread: still an error */
	static const uint64_t st[] = {0x42};
	enc_bt(&bf, &a, 99, 1, st);
	expect_error(&bf, bf.f.len, at, "backtrace id 99", 2);
	be_free(&bf.f);

	simple(&bf, &a, 256, 2);
	at = enc_call(&bf, &a, 3, 0, ALLOC, 77, 1, 0x10, 1, 0, 0);
	expect_error(&bf, bf.f.len, at, "FUNCTION record defining function id 77", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_call(&bf, &a, 3, 0, ALLOC, FN_MALLOC, 5, 0x10, 1, 0, 0);
	expect_error(&bf, bf.f.len, at, "RESOURCE record defining resource id 5", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_call(&bf, &a, 3, 0, ALLOC, FN_MALLOC, 0, 0x10, 1, 0, 0);
	expect_error(&bf, bf.f.len, at, "resource id 0", 2);
	be_free(&bf.f);
}

/* Heap checking records: the exiting thread's verdicts name a backtrace
 * that another thread defines later in the file, so ids are resolved
 * after the merge; the text writer shows them as comments. */
/* A CALL after releases the lifetime filter dropped (format 1.5): kind
 * bit 7 and the distance back to the latest one; flagged when the call
 * delivered before it is older than that release. */
static size_t enc_call_after_drop(bfile *bf, bthread *t, uint64_t index, uint8_t kind, uint64_t back,
				  uint64_t res_id, uint64_t size)
{
	benc r = {0};
	be_u8(&r, 8);
	be_var(&r, index);
	be_var(&r, 0);
	be_u8(&r, (uint8_t)(kind | 0x80));
	be_var(&r, back);
	be_var(&r, kind == ALLOC ? FN_MALLOC : FN_FREE);
	be_var(&r, 1);
	be_var(&r, res_id);
	if (kind == ALLOC)
		be_var(&r, size);
	be_var(&r, 0);
	be_var(&r, 0);
	return enc_put(bf, t, &r);
}

/* DROPPED (format 1.5): fn, resource, bt, first index, count, bytes,
 * temporary. */
static size_t enc_dropped(bfile *bf, bthread *t, uint64_t bt, uint64_t count, uint64_t bytes, uint64_t tmp)
{
	benc r = {0};
	be_u8(&r, 17);
	be_var(&r, FN_MALLOC);
	be_var(&r, 1);
	be_var(&r, bt);
	be_var(&r, 100 - count);
	be_var(&r, count);
	be_var(&r, bytes);
	be_var(&r, tmp);
	return enc_put(bf, t, &r);
}

static void lifetime_filter_records(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 256, 1);
	bthread a = bf_thread(10), b = bf_thread(11);
	preamble(&bf, &a, 0);
	uint64_t frames[] = {0x400100};
	enc_bt(&bf, &a, 1, 1, frames);
	enc_call(&bf, &a, 1, 0, ALLOC, FN_MALLOC, 1, 0x5000, 48, 1, 0);
	enc_call(&bf, &b, 2, 0, ALLOC, FN_MALLOC, 1, 0x6000, 16, 0, 0);
	enc_call_after_drop(&bf, &a, 5, FREE, 1, 0x5000, 0);  /* dropped: 4, delivered before: 2 */
	enc_call(&bf, &b, 6, 0, FREE, FN_FREE, 1, 0x6000, 0, 0, 0);
	enc_call_after_drop(&bf, &a, 8, ALLOC, 3, 0x7000, 8); /* dropped: 5, delivered before: 6 */
	enc_dropped(&bf, &a, 1, 3, 96, 2);
	enc_dropped(&bf, &a, 1, 1, 32, 1);
	enc_dropped(&bf, &b, 0, 2, 10, 0);
	bf_finish(&bf);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, &bf, 0, &s);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.calls[2].index, 5);
	assert_true(s.calls[2].flags & RT_CALL_AFTER_DROP);
	assert_int_equal(s.calls[2].kind, RT_CALL_FREE);
	assert_false(s.calls[3].flags & RT_CALL_AFTER_DROP);
	assert_false(s.calls[4].flags & RT_CALL_AFTER_DROP);
	assert_int_equal(s.calls[4].size, 8);
	assert_int_equal(rt_trace_dropped_count(t), 2); /* a's two records summed */
	/* in the order the streams were read */
	size_t ia = rt_trace_dropped_at(t, 0)->bt == s.calls[0].bt ? 0 : 1;
	const rt_dropped *d = rt_trace_dropped_at(t, ia);
	assert_int_equal(d->count, 4);
	assert_int_equal(d->bytes, 128);
	assert_int_equal(d->temporary, 3);
	assert_int_equal(d->index, 97); /* the smaller first index of the two */
	assert_int_equal(d->bt, s.calls[0].bt);
	assert_string_equal(rt_trace_str(t, d->fn), "malloc");
	assert_int_equal(rt_trace_dropped_at(t, 1 - ia)->count, 2);
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

static void error_lifetime_filter_fields(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 256, 2);
	size_t at = enc_call_after_drop(&bf, &a, 3, ALLOC, 0, 0x10, 1);
	expect_error(&bf, bf.f.len, at, "the distance back to a dropped release, 1 to 2, found 0", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_dropped(&bf, &a, 0, 1, 8, 2);
	expect_error(&bf, bf.f.len, at, "at most 1 temporary calls in the DROPPED record, found 2", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_dropped(&bf, &a, 9, 1, 8, 0);
	expect_error(&bf, bf.f.len, at, "a BT record defining backtrace id 9 before this DROPPED record", 2);
	be_free(&bf.f);
}

static void heap_check_records(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 256, 1);
	bthread a = bf_thread(10), b = bf_thread(11);
	preamble(&bf, &a, 0);
	enc_call(&bf, &b, 1, 0, ALLOC, FN_MALLOC, 1, 0x5000, 48, 0, 0);
	enc_call(&bf, &b, 2, 0, FREE, FN_FREE, 1, 0x6000, 0, 0, 0);
	uint64_t ids[4] = {FN_MALLOC, 7, FN_FREE, 0};
	enc_heaperr(&bf, &b, RT_ERR_INVALID_FREE, 2, FN_FREE, 0x6000, 7, RT_BLOCK_FREED, 0x6000, 10, ids);
	uint64_t none[4] = {0, 0, 0, 0};
	enc_heaperr(&bf, &b, RT_ERR_FISHY_VALUE, 3, FN_MALLOC, (uint64_t)-1, 7, RT_ARG_NMEMB, 0, 0, none);
	enc_leak(&bf, &b, 1, 0x5000, 48, RT_LEAK_DEFINITE, 0, FN_MALLOC, 7, 196);
	enc_leak(&bf, &b, 0, 0x7000, 24, RT_LEAK_REACHABLE, RT_HEUR_STDSTRING, 0, 0, 0);
	uint64_t v[16] = {48, 1, 196, 4, 0, 0, 24, 1, 24, 1};
	enc_leaksum(&bf, &b, RT_LEAK_CHECK_FULL, v, 6, 1234);
	uint64_t frame = 0x401234;
	/* defined by another thread, after a call that comes later: read
	 * after the verdicts */
	enc_call(&bf, &a, 3, 0, ALLOC, FN_MALLOC, 1, 0x8000, 8, 0, 0);
	enc_bt(&bf, &a, 7, 1, &frame);
	bf_finish(&bf);
	rt_trace *t = rt_trace_new();
	read_ok(t, &bf, 0, NULL);
	const rt_leak_summary *m = rt_trace_leak_summary(t);
	assert_non_null(m);
	assert_int_equal(m->mode, RT_LEAK_CHECK_FULL);
	assert_int_equal(m->bytes[RT_LEAK_INDIRECT], 196);
	assert_int_equal(m->blocks[RT_LEAK_INDIRECT], 4);
	assert_int_equal(m->heur_blocks[RT_HEUR_STDSTRING], 1);
	assert_int_equal(m->checked, 6);
	assert_int_equal(m->us, 1234);
	assert_int_equal(rt_trace_leak_count(t), 2);
	const rt_leak *l = rt_trace_leak_at(t, 0);
	assert_int_equal(l->index, 1);
	assert_int_equal(l->indirect, 196);
	assert_string_equal(rt_trace_str(t, l->fn), "malloc");
	assert_int_equal(rt_trace_bt_frames(t, l->bt)[0].addr, 0x401234);
	assert_int_equal(rt_trace_leak_at(t, 1)->fn, RT_NONE);
	assert_int_equal(rt_trace_leak_at(t, 1)->bt, RT_NONE);
	assert_int_equal(rt_trace_heap_error_count(t), 2);
	const rt_heap_error *f = rt_trace_heap_error_at(t, 1);
	char what[160];
	assert_int_equal(f->kind, RT_ERR_FISHY_VALUE);
	assert_int_equal(f->block, RT_BLOCK_UNKNOWN);
	assert_int_equal(f->arg, RT_ARG_NMEMB);
	assert_string_equal(rt_heap_error_fishy_what(t, f, what, sizeof what),
			    "Argument 'nmemb' of function malloc has a fishy (possibly negative) value: -1");
	const rt_heap_error *e = rt_trace_heap_error_at(t, 0);
	assert_int_equal(e->kind, RT_ERR_INVALID_FREE);
	assert_int_equal(e->block, RT_BLOCK_FREED);
	assert_string_equal(rt_trace_str(t, e->fn), "free");
	assert_string_equal(rt_trace_str(t, e->alloc_fn), "malloc");
	assert_int_equal(e->alloc_bt, l->bt);
	assert_int_equal(e->free_bt, RT_NONE);
	rt_write_opts wo = {0};
	char *text = rt_text_write_mem(t, &wo, NULL);
	assert_non_null(strstr(text, "\n## leak check: indirectly lost: 196 bytes in 4 blocks\n"));
	assert_non_null(strstr(text, "\n## leak 1: definitely lost, 48 bytes by malloc (196 bytes indirectly lost with it)\n"));
	assert_non_null(strstr(text, "\n## leak -: still reachable, 24 bytes at 0x7000 (via heuristic stdstring)\n"));
	assert_non_null(strstr(text, "\n## error InvalidFree: free(0x6000) at call 2: 0 bytes inside a block of size 10 free'd\n"));
	assert_non_null(strstr(text, "\n## error FishyValue: malloc(nmemb = -1) at call 3\n"));
	free(text);
	rt_trace_free(t);
	be_free(&bf.f);
}

static void error_heap_check_fields(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	uint64_t v[16] = {0}, ids[4] = {0};
	simple(&bf, &a, 256, 2);
	size_t at = enc_leak(&bf, &a, 1, 0x10, 1, 5, 0, 0, 0, 0);
	expect_error(&bf, bf.f.len, at, "leak kind 1 to 4 and heuristic 0 to 4 in the LEAK record, found 5 and 0", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_leaksum(&bf, &a, 3, v, 0, 0);
	expect_error(&bf, bf.f.len, at, "mode 1 (summary) or 2 (full) in the LEAKSUM record, found 3", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	enc_leaksum(&bf, &a, 1, v, 0, 0);
	at = enc_leaksum(&bf, &a, 1, v, 0, 0);
	expect_error(&bf, bf.f.len, at, "one LEAKSUM record in the trace, found a second one", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_heaperr(&bf, &a, 4, 1, FN_FREE, 0x10, 0, 0, 0, 0, ids);
	expect_error(&bf, bf.f.len, at, "error kind 1 to 3 and block state 0 to 2 in the HEAPERR record, found 4 and 0", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2); /* a FishyValue's block byte names the argument */
	at = enc_heaperr(&bf, &a, 3, 1, FN_MALLOC, (uint64_t)-1, 0, 3, 0, 0, ids);
	expect_error(&bf, bf.f.len, at, "argument 1 or 2 in the FishyValue HEAPERR record, found 3", 2);
	be_free(&bf.f);
}

static void error_bad_fields(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 256, 2);
	size_t at = enc_call(&bf, &a, 3, 0, 3, FN_MALLOC, 1, 0x10, 1, 0, 0);
	expect_error(&bf, bf.f.len, at, "call kind 1 (alloc) or 2 (free) in the CALL record, found 3", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_call(&bf, &a, 2, 0, ALLOC, FN_MALLOC, 1, 0x10, 1, 0, 0);
	expect_error(&bf, bf.f.len, at, "call index above 2 (the thread's previous call), found 2", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_call(&bf, &a, 3, 0, ALLOC, FN_MALLOC, 1, 0x10, 1, 0, 1ull << 32);
	expect_error(&bf, bf.f.len, at, "32-bit context mask", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_resource(&bf, &a, 33, "x", "y", 0);
	expect_error(&bf, bf.f.len, at, "resource id between 1 and 32", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_context(&bf, &a, 1ull << 32, "x");
	expect_error(&bf, bf.f.len, at, "32-bit context id", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_bt(&bf, &a, 0, 0, NULL);
	expect_error(&bf, bf.f.len, at, "backtrace id above 0", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_process(&bf, &a, 1, 0, 1, 1000000000, "", "", "", 0, 1);
	expect_error(&bf, bf.f.len, at, "start_nsec below 10^9", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_process(&bf, &a, 1, 0, 1, 0, "", "", "", 0, 1);
	expect_error(&bf, bf.f.len, at, "one PROCESS record in the trace, found a second one", 2);
	be_free(&bf.f);
}

/* Ids are defined once; the same definition again is harmless. */
static void error_redefinitions(void **state)
{
	(void)state;
	static const uint64_t st[] = {0x400123, 0x400200}, other[] = {0x42};
	bfile bf;
	bthread a;
	simple(&bf, &a, 256, 2);
	enc_function(&bf, &a, FN_MALLOC, "malloc");
	enc_bt(&bf, &a, 1, 2, st);
	enc_resource(&bf, &a, 1, "memory", "memory allocation in bytes", 0);
	size_t at = enc_function(&bf, &a, FN_MALLOC, "calloc");
	expect_error(&bf, bf.f.len, at, "function id 1 to be defined once, found a second FUNCTION record", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_bt(&bf, &a, 1, 1, other);
	expect_error(&bf, bf.f.len, at, "backtrace id 1 to be defined once", 2);
	be_free(&bf.f);
	simple(&bf, &a, 256, 2);
	at = enc_resource(&bf, &a, 1, "fd", "file descriptors", 0);
	expect_error(&bf, bf.f.len, at, "resource id 1 to be defined once", 2);
	be_free(&bf.f);
}

/* Chunk headers: only the chunks before a bad one are read. */
static void error_bad_chunks(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 128, 40);
	bf_finish(&bf);
	assert_true(a.seq >= 3);
	/* calls 1..n1 are in the first two chunks */
	size_t c2 = chunk_off(&bf, 2);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_len(t, &bf, c2, 0, &s, &(rt_diag){0});
	size_t n1 = s.n;
	assert_true(n1 > 0 && n1 < 40);
	seen_free(&s);
	rt_trace_free(t);

	uint8_t save[16];
	memcpy(save, bf.f.b + c2, 16);
	memset(bf.f.b + c2, 0, 4);
	expect_error(&bf, bf.f.len, c2, "chunk magic \"RTCK\" (data_end says chunks go on", n1);
	memcpy(bf.f.b + c2, "XXXX", 4);
	expect_error(&bf, bf.f.len, c2, "chunk magic", n1);
	be_set64(&bf.f, 16, 0); /* data_end 0: garbage is still no end */
	expect_error(&bf, bf.f.len, c2, "chunk magic \"RTCK\", or zero bytes", n1);
	memcpy(bf.f.b + c2, save, 16);
	be_set32(&bf.f, c2 + 4, 9999);
	expect_error(&bf, bf.f.len, c2 + 4, "at most 112 used bytes in the chunk, found 9999", n1);
	memcpy(bf.f.b + c2, save, 16);
	be_set32(&bf.f, c2 + 12, 7);
	expect_error(&bf, bf.f.len, c2 + 12, "seq 2 for the next chunk of thread 100", n1);
	memcpy(bf.f.b + c2, save, 16);
	/* cut inside the used bytes, and inside the header */
	expect_error(&bf, c2 + 16 + 3, c2 + 16, "rest of the CALL record starting here, found end of file", n1);
	expect_error(&bf, c2 + 16, c2 + 16, "more used bytes of the chunk at byte offset", n1);
	expect_error(&bf, c2 + 10, c2, "16-byte chunk header, found end of file after 10 bytes", n1);
	be_free(&bf.f);
}

/* An error in one thread stops the merge at the lowest index its lost
 * calls could have: the delivered calls stay a prefix. */
static void error_keeps_a_prefix_across_threads(void **state)
{
	(void)state;
	bfile bf;
	bf_init(&bf, 4096, 1);
	bthread a = bf_thread(1), b = bf_thread(2);
	preamble(&bf, &a, 0);
	for (uint64_t i = 1; i <= 9; i += 2)
		enc_call(&bf, &a, i, 0, ALLOC, FN_MALLOC, 1, i, 1, 0, 0);
	enc_call(&bf, &b, 2, 0, ALLOC, FN_MALLOC, 1, 2, 1, 0, 0);
	enc_call(&bf, &b, 4, 0, ALLOC, FN_MALLOC, 1, 4, 1, 0, 0);
	size_t at = enc_raw(&bf, &b, "\x00", 1);
	expect_error(&bf, bf.f.len, at, "record type", 4); /* 1..4; 5 could follow */
	be_free(&bf.f);

	/* a broken CALL with a readable index: the calls below it go out */
	bf_init(&bf, 4096, 1);
	a = bf_thread(1);
	b = bf_thread(2);
	preamble(&bf, &a, 0);
	for (uint64_t i = 1; i <= 9; i += 2)
		enc_call(&bf, &a, i, 0, ALLOC, FN_MALLOC, 1, i, 1, 0, 0);
	enc_call(&bf, &b, 2, 0, ALLOC, FN_MALLOC, 1, 2, 1, 0, 0);
	at = enc_call(&bf, &b, 6, 0, 7, FN_MALLOC, 1, 6, 1, 0, 0);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	rt_diag err;
	assert_int_equal(read_bf(t, &bf, &s, &err), -1);
	assert_int_equal(s.n, 4); /* 1 2 3 5 */
	assert_int_equal(s.calls[3].index, 5);
	assert_non_null(strstr(err.msg, "call kind"));
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* --- call arguments (CALLA records, format 1.2) --- */

enum { RES_FD = 2, FN_OPEN = 23, FN_CLOSE = 24 };

static const char *const one_arg[] = {"path", "/etc/hostname"};
/* a value with spaces (inside and at both ends), an empty one, one
 * looking like another argument line */
static const char *const many_args[] = {
	"path", " /tmp/a file  with spaces ", "flags", "0x241", "mode", "", "note", "x = y",
};
static const char *const ebadf_arg[] = {"error", "EBADF"};

/* The preamble, the fd type, open and close, and the calls 1 and 2 (a
 * CALL and a CALLA) on one thread in one chunk. */
static void args_trace(bfile *bf, bthread *a)
{
	bf_init(bf, 4096, 1);
	*a = bf_thread(100);
	preamble(bf, a, 0);
	enc_resource(bf, a, RES_FD, "fd", "file descriptor", 0);
	enc_function(bf, a, FN_OPEN, "open");
	enc_function(bf, a, FN_CLOSE, "close");
	enc_call(bf, a, 1, 0, ALLOC, FN_MALLOC, 1, 0x1000, 16, 0, 0);
	enc_calla(bf, a, 2, 0, ALLOC, FN_OPEN, RES_FD, 3, 1, 0, 0, 1, one_arg);
}

/* Call c has exactly the n (name, value) pairs kv, in order. */
static void check_args(const rt_trace *t, const rt_call *c, uint32_t n, const char *const *kv)
{
	assert_int_not_equal(c->args, RT_NONE);
	assert_int_equal(rt_trace_args_len(t, c->args), n);
	const rt_kv *a = rt_trace_args_at(t, c->args);
	assert_non_null(a);
	for (uint32_t i = 0; i < n; i++) {
		assert_string_equal(a[i].key, kv[2 * i]);
		assert_string_equal(a[i].value, kv[2 * i + 1]);
		const char *v = rt_trace_call_arg(t, c, kv[2 * i]);
		assert_non_null(v);
		assert_string_equal(v, kv[2 * i + 1]);
	}
}

static void check_arg_calls(const rt_trace *t, const rt_call *c)
{
	assert_int_equal(c[0].args, RT_NONE); /* a CALL: no arguments */
	assert_null(rt_trace_call_arg(t, &c[0], "path"));
	assert_string_equal(rt_trace_str(t, c[1].fn), "open");
	assert_true(rt_trace_res_is(t, c[1].res_type, "fd"));
	assert_int_equal(c[1].kind, RT_CALL_ALLOC);
	assert_int_equal(c[1].res_id, 3);
	assert_int_equal(c[1].size, 1);
	check_args(t, &c[1], 1, one_arg);
	assert_null(rt_trace_call_arg(t, &c[1], "flags"));
	check_args(t, &c[2], 4, many_args);
	assert_int_equal(c[2].res_id, 4);
	assert_true(c[1].args != c[2].args);
	assert_null(rt_trace_call_arg(t, &c[2], "nosuch"));
	assert_int_equal(c[3].args, RT_NONE); /* arguments do not carry over */
	assert_int_equal(c[4].kind, RT_CALL_FREE);
	assert_int_equal(c[4].res_id, 99);
	check_args(t, &c[4], 1, ebadf_arg);
	assert_true(rt_trace_is_bad_close(t, &c[4]));
	assert_false(rt_trace_is_bad_close(t, &c[1]));
}

/* CALL and CALLA records with 1 and 4 arguments: the calls have exactly
 * those, whether delivered or appended. */
static void call_arguments(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	args_trace(&bf, &a);
	enc_calla(&bf, &a, 3, 0, ALLOC, FN_OPEN, RES_FD, 4, 1, 0, 0, 4, many_args);
	enc_call(&bf, &a, 4, 0, ALLOC, FN_MALLOC, 1, 0x2000, 16, 0, 0);
	enc_calla(&bf, &a, 5, 0, FREE, FN_CLOSE, RES_FD, 99, 0, 0, 0, 1, ebadf_arg);
	enc_end(&bf, &a, 5);
	bf_finish(&bf);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, &bf, 0, &s);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.nwarn, 0);
	check_arg_calls(t, s.calls);
	seen_free(&s);
	rt_trace_free(t);

	t = rt_trace_new();
	read_ok(t, &bf, 0, NULL);
	assert_int_equal(rt_trace_call_count(t), 5);
	check_arg_calls(t, rt_trace_calls(t));
	rt_trace_free(t);
	be_free(&bf.f);
}

/* 64 arguments, the most a CALLA holds. */
static void call_arguments_at_most_64(void **state)
{
	(void)state;
	char buf[2 * 64][16];
	const char *kv[2 * 64];
	for (int i = 0; i < 64; i++) {
		snprintf(buf[2 * i], sizeof buf[0], "arg%d", i);
		snprintf(buf[2 * i + 1], sizeof buf[0], "v %d", i * 7);
		kv[2 * i] = buf[2 * i];
		kv[2 * i + 1] = buf[2 * i + 1];
	}
	bfile bf;
	bthread a;
	args_trace(&bf, &a);
	enc_calla(&bf, &a, 3, 0, ALLOC, FN_OPEN, RES_FD, 4, 1, 0, 0, 64, kv);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	read_ok(t, &bf, 0, &s);
	assert_int_equal(s.n, 3);
	check_args(t, &s.calls[2], 64, kv);
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* A file cut inside a CALLA (its call fields or its arguments): an error
 * at the record's offset, the calls before it delivered. */
static void call_arguments_cut(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	args_trace(&bf, &a);
	size_t at = enc_calla(&bf, &a, 3, 0, ALLOC, FN_OPEN, RES_FD, 4, 1, 0, 0, 4, many_args);
	size_t len = bf.last_len;
	enc_call(&bf, &a, 4, 0, ALLOC, FN_MALLOC, 1, 0x2000, 16, 0, 0);
	bf_finish(&bf);
	/* the arguments: the count (one byte) and the strings at the end */
	size_t args = 1;
	for (size_t i = 0; i < sizeof many_args / sizeof *many_args; i++)
		args += 1 + strlen(many_args[i]);
	assert_true(args < len);
	for (size_t cut = at + 1; cut < at + len; cut++)
		expect_error(&bf, cut, at, "rest of the CALLA record starting here, found end of file", 2);
	/* cut after it: call 3 is whole */
	rt_trace *t = rt_trace_new();
	seen s = {0};
	rt_diag err;
	assert_int_equal(read_len(t, &bf, at + len, 0, &s, &err), -1);
	assert_int_equal(s.n, 3);
	check_args(t, &s.calls[2], 4, many_args);
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* A CALLA with a raw tail after its call fields and count n. */
static size_t calla_raw(bfile *bf, bthread *a, uint64_t n, const void *tail, size_t len)
{
	benc r = {0};
	be_u8(&r, 14);
	be_call_fields(&r, 3, 0, ALLOC, FN_OPEN, RES_FD, 4, 1, 0, 0);
	be_var(&r, n);
	be_bytes(&r, tail, len);
	return enc_put(bf, a, &r);
}

/* Argument counts the record does not hold, or out of 1 to 64: errors at
 * the CALLA's offset, the calls before it delivered. */
static void call_arguments_bad_count(void **state)
{
	(void)state;
	static const struct {
		uint64_t n;
		uint32_t pairs;
		const char *err;
	} cases[] = {
		{0, 0, "1 to 64 arguments in the CALLA record, found 0"},
		{0, 1, "1 to 64 arguments in the CALLA record, found 0"},
		{65, 65, "1 to 64 arguments in the CALLA record, found 65"},
		{UINT64_MAX, 1, "1 to 64 arguments in the CALLA record, found 18446744073709551615"},
		{3, 2, "CALLA record starting here to end within its chunk's used bytes"},
		{64, 1, "CALLA record starting here to end within its chunk's used bytes"},
	};
	char buf[2 * 65][16];
	const char *kv[2 * 65];
	for (int i = 0; i < 2 * 65; i++) {
		snprintf(buf[i], sizeof buf[0], "%c%d", i % 2 ? 'v' : 'k', i / 2);
		kv[i] = buf[i];
	}
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		bfile bf;
		bthread a;
		args_trace(&bf, &a);
		size_t at = enc_calla_n(&bf, &a, 3, 0, ALLOC, FN_OPEN, RES_FD, 4, 1, 0, 0, cases[i].n,
					cases[i].pairs, kv);
		bf_finish(&bf);
		expect_error(&bf, bf.f.len, at, cases[i].err, 2);
		be_free(&bf.f);
	}
	/* a name or value longer than the record */
	static const struct {
		const char *tail;
		size_t len;
	} raw[] = {
		{"\x04path\x80\x80\x80\x80\x80\x80\x80\x80\x7f/etc", 17}, /* value length 2^63 - 1 */
		{"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10},          /* name length 2^64 - 1 */
		{"\x04path\x05/etc", 10},                                  /* value one byte short */
		{"\x04path", 5},                                           /* no value */
	};
	for (size_t i = 0; i < sizeof raw / sizeof *raw; i++) {
		bfile bf;
		bthread a;
		args_trace(&bf, &a);
		size_t at = calla_raw(&bf, &a, 1, raw[i].tail, raw[i].len);
		bf_finish(&bf);
		expect_error(&bf, bf.f.len, at, "CALLA record starting here to end within its chunk's used bytes", 2);
		be_free(&bf.f);
	}
}

/* --- truncation at every byte offset --- */

typedef struct crec {
	size_t at, len, index_end;
	uint64_t index;
	uint32_t tid;
} crec;

typedef struct sweep {
	bfile bf;
	crec calls[128];
	size_t ncalls;
} sweep;

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void sweep_call(sweep *w, bthread *t, uint64_t index, uint64_t bt)
{
	crec *c = &w->calls[w->ncalls++];
	c->at = enc_call(&w->bf, t, index, 1000, ALLOC, FN_MALLOC, 1, index * 8, index, bt, 0);
	c->len = w->bf.last_len;
	c->index = index;
	c->index_end = c->at + 1 + varint_len(index);
	c->tid = t->tid;
}

/* Two threads, a late third one, stacks defined on the way, chunks of
 * 96 bytes: calls end up spread over many chunks. */
static void sweep_build(sweep *w)
{
	memset(w, 0, sizeof *w);
	bf_init(&w->bf, 96, 7);
	bthread t[3] = {bf_thread(1), bf_thread(2), bf_thread(3)};
	preamble(&w->bf, &t[0], 1);
	uint32_t x = 7;
	for (uint64_t i = 1; i <= 60; i++) {
		x = x * 1103515245 + 12345;
		int k = (int)((x >> 16) % (i > 40 ? 3 : 2));
		uint64_t frames[2] = {0x400000 + i, 0x400000};
		if (i % 7 == 1 || i == 41)
			enc_bt(&w->bf, &t[k], i, 2, frames);
		sweep_call(w, &t[k], i, i % 7 == 1 || i == 41 ? i : 0);
	}
}

/* The threads whose first chunk header is complete in the first cut
 * bytes; *cut_chunk: the chunk cut inside its used bytes, if any. */
static size_t sweep_threads(const sweep *w, size_t cut, uint32_t *tids, bool *error,
			    size_t *cut_chunk)
{
	const bfile *bf = &w->bf;
	size_t ntids = 0;
	*error = cut < 64;
	*cut_chunk = SIZE_MAX;
	for (size_t off = 64; off < bf->f.len && off < cut; off += bf->chunk_size) {
		uint32_t tid = bf->f.b[off + 8], used = bf->f.b[off + 4];
		if (cut < off + 16) {
			*error = true; /* cut inside the header */
			break;
		}
		if (cut < off + 16 + used)
			*error = true, *cut_chunk = off;
		bool have = false;
		for (size_t i = 0; i < ntids; i++)
			have |= tids[i] == tid;
		if (!have)
			tids[ntids++] = tid;
	}
	return ntids;
}

/* The lowest index that a cut can have taken from thread tid: the index
 * of its CALL cut after its index field, else its last complete one + 1. */
static uint64_t sweep_bound(const sweep *w, size_t cut, uint32_t tid, size_t cut_chunk)
{
	uint64_t last = 0;
	for (size_t j = 0; j < w->ncalls; j++) {
		const crec *c = &w->calls[j];
		if (c->tid != tid)
			continue;
		if (c->at + c->len <= cut)
			last = c->index;
		else if (c->at < cut && cut >= c->index_end && cut_chunk != SIZE_MAX && c->at > cut_chunk)
			return c->index;
	}
	return last + 1;
}

static bool has_tid(const uint32_t *tids, size_t n, uint32_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

/* The calls the reader must deliver from the first cut bytes, by the
 * reader's rules: every complete CALL of the threads whose first chunk
 * header is there (the present threads); when a chunk is cut (inside its
 * header or used bytes), only those below the lowest index a present
 * thread's lost calls could have: a prefix of the present threads' calls,
 * which *all lists. Threads whose chunks all lie past the cut are not
 * seen at all. */
static size_t sweep_expect(const sweep *w, size_t cut, uint64_t *want, bool *error,
			   uint64_t *all, size_t *nall)
{
	uint32_t tids[8];
	size_t cut_chunk, n = 0;
	size_t ntids = sweep_threads(w, cut, tids, error, &cut_chunk);
	uint64_t bound = UINT64_MAX;
	for (size_t i = 0; i < ntids && *error; i++) {
		uint64_t b = sweep_bound(w, cut, tids[i], cut_chunk);
		bound = b < bound ? b : bound;
	}
	for (size_t j = 0; j < w->ncalls; j++) {
		const crec *c = &w->calls[j];
		if (!has_tid(tids, ntids, c->tid))
			continue;
		if (c->at + c->len <= cut && c->index < bound)
			want[n++] = c->index;
		all[(*nall)++] = c->index;
	}
	return n;
}

static void sweep_check(sweep *w, size_t cut)
{
	uint64_t want[128], all[128];
	bool error;
	size_t nall = 0, n = sweep_expect(w, cut, want, &error, all, &nall);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	rt_diag err;
	int rc = read_len(t, &w->bf, cut, 0, &s, &err);
	if (rc != (error ? -1 : 0))
		fail_msg("cut at %zu: rc %d (%s), expected %d", cut, rc, err.msg, error ? -1 : 0);
	if (rc && strncmp(err.msg, "byte offset ", 12))
		fail_msg("cut at %zu: message '%s'", cut, err.msg);
	if (s.n != n)
		fail_msg("cut at %zu: %zu calls, expected %zu (%s)", cut, s.n, n, rc ? err.msg : "no error");
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(s.calls[i].index, want[i]);
		assert_int_equal(s.calls[i].res_id, want[i] * 8);
	}
	/* on an error, a prefix of the present threads' calls */
	for (size_t i = 0; rc && i < n; i++)
		if (want[i] != all[i])
			fail_msg("cut at %zu: not a prefix: call %zu is %" PRIu64 " (%s)", cut, i, want[i], err.msg);
	seen_free(&s);
	rt_trace_free(t);
}

static void truncation_at_every_offset(void **state)
{
	(void)state;
	sweep *w = malloc(sizeof *w);
	assert_non_null(w);
	sweep_build(w);
	assert_true(w->bf.f.len > 64 + 10 * 96);
	for (size_t cut = 0; cut <= w->bf.f.len; cut++)
		sweep_check(w, cut);
	/* the same with data_end set (a clean exit, then a cut copy) */
	bf_finish(&w->bf);
	for (size_t cut = 64; cut <= w->bf.f.len; cut++)
		sweep_check(w, cut);
	be_free(&w->bf.f);
	free(w);
}

/* A file cut at a chunk boundary before data_end: no error, a warning. */
static void short_copy_warns(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 128, 40);
	bf_finish(&bf);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	rt_diag err;
	assert_int_equal(read_len(t, &bf, chunk_off(&bf, 2), 0, &s, &err), 0);
	assert_int_equal(s.nwarn, 1);
	assert_non_null(strstr(s.warn[0].msg, "expected chunks up to data_end"));
	seen_free(&s);
	rt_trace_free(t);
	be_free(&bf.f);
}

/* The tracer's encoders (format/varint.h, shared with the reader) write
 * what the spec-written test encoder writes, and the layout header's magic
 * and offsets are the public header's and the document's. */
static void shared_encoders_match_the_spec(void **state)
{
	(void)state;
	static const uint64_t vals[] = {0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX,
					(uint64_t)1 << 56, INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX};
	for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
		for (int sign = 0; sign < 2; sign++) {
			uint8_t buf[RT_VARINT_MAX], *end;
			benc e = {0};
			if (sign) {
				end = rt_put_svarint(buf, -(int64_t)(vals[i] >> 1) - 1);
				be_svar(&e, -(int64_t)(vals[i] >> 1) - 1);
			} else {
				end = rt_put_varint(buf, vals[i]);
				be_var(&e, vals[i]);
				assert_int_equal(rt_varint_put(buf, vals[i]), end - buf);
			}
			assert_int_equal(end - buf, e.len);
			assert_memory_equal(buf, e.b, e.len);
			uint64_t v;
			assert_int_equal(rt_varint_get(buf, end, &v), end - buf);
			be_free(&e);
		}
	}
	assert_memory_equal(RT_BIN_MAGIC, RT_TF_MAGIC, RT_TF_MAGIC_LEN);
	rt_tf_file_header h = {.magic = RT_TF_MAGIC, .header_size = 4096, .chunk_size = 65536, .pid = 1234};
	uint8_t raw[sizeof h];
	memcpy(raw, &h, sizeof h);
	assert_memory_equal(raw, "RTRACE\0\1", 8);
	assert_int_equal(raw[RT_TF_OFF_CHUNK_SIZE + 2], 1); /* 65536, little endian */
	assert_int_equal(raw[RT_TF_OFF_PID], 1234 & 0xff);
}

/* --- compressed traces: the reader's decoding of a frame's plain CALLs
 * straight from its columns (bin_zchunk.c, rt_bin_zc_decode_calls) --- */

/* raw -> a container next to it (path.z), read back whole. */
static uint8_t *compress_bf(const bfile *bf, size_t *zlen)
{
	char raw[] = "/tmp/test_bin_z.XXXXXX", z[sizeof raw + 2];
	int fd = mkstemp(raw);
	assert_true(fd >= 0);
	close(fd);
	snprintf(z, sizeof z, "%s.z", raw);
	write_file(raw, bf->f.b, bf->f.len);
	rt_diag err;
	rt_bin_zwriter *w = rt_bin_zopen(raw, z, 1, &err);
	assert_non_null(w);
	assert_int_equal(rt_bin_zclose(w, true, &err), 0); /* removes raw */
	uint8_t *zb = slurp(z, zlen);
	unlink(z);
	return zb;
}

/* Every field of every call two reads delivered, by value. */
static void same_calls(const rt_trace *ta, const seen *a, const rt_trace *tb, const seen *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const rt_call *x = &a->calls[i], *y = &b->calls[i];
		uint64_t fx[] = {x->index, x->res_id, x->size, x->timestamp_us, x->context, x->kind, x->flags, x->res_type};
		uint64_t fy[] = {y->index, y->res_id, y->size, y->timestamp_us, y->context, y->kind, y->flags, y->res_type};
		if (memcmp(fx, fy, sizeof fx))
			fail_msg("call %zu (index %" PRIu64 " and %" PRIu64 ") differs", i, x->index, y->index);
		assert_string_equal(rt_trace_str(ta, x->fn), rt_trace_str(tb, y->fn));
		assert_int_equal(rt_trace_bt_len(ta, x->bt), rt_trace_bt_len(tb, y->bt));
		for (uint32_t k = 0; k < rt_trace_bt_len(ta, x->bt); k++)
			assert_int_equal(rt_trace_bt_frames(ta, x->bt)[k].addr, rt_trace_bt_frames(tb, y->bt)[k].addr);
		assert_int_equal(x->args == RT_NONE, y->args == RT_NONE);
		if (x->args != RT_NONE)
			assert_int_equal(rt_trace_args_len(ta, x->args), rt_trace_args_len(tb, y->args));
	}
}

/* The resident kilobytes of this process's map of path (its smaps Rss
 * lines, summed), or -1 when it has none. */
static long mapped_rss_kb(const char *path)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	assert_non_null(f);
	char line[512];
	long kb = -1, v;
	unsigned long from, to;
	bool in = false;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%lx-%lx ", &from, &to) == 2) /* a map's first line */
			in = strstr(line, path) != NULL;
		else if (in && sscanf(line, "Rss: %ld kB", &v) == 1)
			kb = (kb < 0 ? 0 : kb) + v;
	}
	fclose(f);
	return kb;
}

typedef struct rss_watch {
	const char *path;
	long most;
	size_t batches;
} rss_watch;

static void watch_call(void *ctx, rt_trace *t, const rt_call *c)
{
	(void)ctx, (void)t, (void)c;
}

static void watch_calls(void *ctx, rt_trace *t, const rt_call *c, size_t n)
{
	(void)t, (void)c, (void)n;
	rss_watch *w = ctx;
	if (w->batches++ % 8 == 0) {
		long kb = mapped_rss_kb(w->path);
		w->most = kb > w->most ? kb : w->most;
	}
}

/* A compressed trace read from its file: its frames are read with pread
 * into the decoder's buffer (bin_zpar.c, rt_bin_zframe_at), not through
 * the map, and the pages the file header brought in are given back, so
 * that its resident part stays small whatever the file's size. Read
 * through the map, about all the file stayed resident (the frames' 4 KiB
 * chunks being a page or so each), or a 2 MB folio the kernel mapped at
 * once. */
static void compressed_pages_given_back(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 4096, 0);
	uint64_t x = 11;
	for (uint64_t i = 1; i < 300000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		enc_call(&bf, &a, i, 0, ALLOC, FN_MALLOC, 1, (x >> 16) & ~15ull, x >> 52, 1, 0);
	}
	size_t zlen;
	uint8_t *zb = compress_bf(&bf, &zlen);
	assert_true(zlen > (1u << 20));
	char path[] = "/tmp/test_bin_zrss.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, zb, zlen);
	for (unsigned threads = 0; threads <= 1; threads++) {
		rss_watch w = {path, -1, 0};
		rt_trace *t = rt_trace_new();
		rt_read_opts ro = {0, watch_call, NULL, &w, threads, watch_calls};
		rt_read_stats st;
		rt_diag err;
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(rt_bin_read_fd(t, fd, "f", &ro, &st, &err), 0);
		close(fd);
		assert_int_equal(st.calls, 299999);
		assert_true(w.batches > 100);
		if (w.most < 0 || (size_t)w.most * 1024 > zlen / 4)
			fail_msg("%ld KB of the %zu KB trace resident with %u threads", w.most, zlen / 1024, threads);
		rt_trace_free(t);
	}
	unlink(path);
	free(zb);
	be_free(&bf.f);
}

/* A thread's calls of every kind the reader reads, with stacks, new
 * functions, messages, arguments and the lifetime filter's records
 * among them, in chunks of 4 KiB: the container delivers what the raw
 * trace does, field for field, with most calls taken from the columns. */
static void compressed_reads_as_raw(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	args_trace(&bf, &a);
	enc_bt(&bf, &a, 1, 3, every_stack);
	for (uint64_t b = 2; b <= 8; b++) {
		uint64_t stack[2] = {0x400100 + b * 16, 0x400300};
		enc_bt(&bf, &a, b, 2, stack);
	}
	uint64_t live[32] = {0}, x = 7;
	size_t nlive = 0;
	for (uint64_t i = 3; i < 20000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		unsigned r = (unsigned)(x >> 33) % 1000;
		uint64_t bt = 2 + (x >> 40) % 7, stack[2] = {0x400100 + bt * 16, 0x400300};
		if (r < 10) /* again, the same */
			enc_bt(&bf, &a, bt, 2, stack);
		bt = i % 9;
		if (r < 3) {
			enc_function(&bf, &a, 100 + i, "late_fn");
			enc_call(&bf, &a, i, 3, ALLOC, 100 + i, 1, 0x90000000 + i * 16, 8, 0, 0);
		} else if (r < 6) {
			enc_message(&bf, &a, "note");
		} else if (r < 10) {
			enc_calla(&bf, &a, i, 5, ALLOC, FN_OPEN, RES_FD, 3 + i, 0, 0, 0, 1, one_arg);
		} else if (r < 13) {
			enc_call_after_drop(&bf, &a, i, (x >> 20) % 2 ? ALLOC : FREE, 1 + (x >> 24) % (i - 1), 0x5000 + i, 24);
		} else if (nlive && r % 2) {
			size_t k = (size_t)(x >> 45) % nlive;
			enc_call(&bf, &a, i, r % 5, FREE, FN_FREE, 1, live[k], 0, bt, (x >> 50) % 3);
			live[k] = live[--nlive];
		} else {
			uint64_t addr = 0x7f0000000000ull + (x >> 30) % 100000 * 32;
			enc_call(&bf, &a, i, r % 7, ALLOC, FN_MALLOC, 1, addr, (x >> 12) % 5000, bt, 0);
			if (nlive < 32)
				live[nlive++] = addr;
		}
	}
	bf_finish(&bf);
	size_t zlen;
	uint8_t *zb = compress_bf(&bf, &zlen);
	rt_trace *tr = rt_trace_new(), *tz = rt_trace_new();
	seen sr = {0}, sz = {0};
	rt_read_opts orr = {0, on_call, on_warn, &sr}, oz = {0, on_call, on_warn, &sz};
	rt_diag er, ez;
	int rcr = rt_bin_read_mem(tr, bf.f.b, bf.f.len, "f", &orr, NULL, &er);
	int rcz = rt_bin_read_mem(tz, zb, zlen, "f", &oz, NULL, &ez);
	if (rcr || rcz)
		fail_msg("raw: %d %s, compressed: %d %s", rcr, rcr ? er.msg : "", rcz, rcz ? ez.msg : "");
	assert_true(sr.n > 10000);
	assert_int_equal(sr.nwarn, sz.nwarn);
	same_calls(tr, &sr, tz, &sz);
	/* by batches: the frames' kept calls by pointer, among rows */
	rt_trace *tb = rt_trace_new();
	seen sb = {0};
	rt_read_opts ob = {0, on_call, on_warn, &sb, 2, on_calls};
	rt_diag eb;
	assert_int_equal(rt_bin_read_mem(tb, zb, zlen, "f", &ob, NULL, &eb), 0);
	assert_int_equal(sb.nwarn, sz.nwarn);
	same_calls(tz, &sz, tb, &sb);
	rt_trace_free(tb);
	seen_free(&sb);
	rt_trace_free(tr);
	rt_trace_free(tz);
	seen_free(&sr);
	seen_free(&sz);
	free(zb);
	be_free(&bf.f);
}

/* The payload length of the container's frame at off (its header's). */
static uint32_t frame_zlen(const uint8_t *zb, size_t off)
{
	const uint8_t *z = zb + off + RT_TF_OFF_ZLEN;
	return (uint32_t)z[0] | (uint32_t)z[1] << 8 | (uint32_t)z[2] << 16 | (uint32_t)z[3] << 24;
}

/* The frame after the one at off. */
static size_t next_frame(const uint8_t *zb, size_t off) { return off + RT_TF_ZFRAME_HEADER + frame_zlen(zb, off); }

/* The first frame of columns from the middle of the container on. */
static size_t mid_columns_frame(const uint8_t *zb, size_t zlen)
{
	size_t off = 64;
	while (off < zlen / 2 || zb[off + RT_TF_OFF_ZCODING] != RT_TF_ZCODING_COLUMNS) {
		off = next_frame(zb, off);
		assert_true(off + RT_TF_ZFRAME_HEADER < zlen);
	}
	return off;
}

/* The payload of the frame at off, its columns changed by change, then
 * compressed again (with its checksum) in a copy of the container. */
static uint8_t *change_frame(const uint8_t *zb, size_t zlen, size_t off, void (*change)(uint8_t *cols, size_t n),
			     size_t *outlen)
{
	uint32_t plen = frame_zlen(zb, off);
	const uint8_t *pl = zb + off + RT_TF_ZFRAME_HEADER;
	size_t m = ZSTD_getFrameContentSize(pl, plen);
	uint8_t *cols = malloc(m), *re = malloc(ZSTD_compressBound(m));
	assert_int_equal(ZSTD_decompress(cols, m, pl, plen), m);
	change(cols, m);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	size_t rl = ZSTD_compress2(c, re, ZSTD_compressBound(m), cols, m);
	assert_false(ZSTD_isError(rl));
	ZSTD_freeCCtx(c);
	uint8_t *out = malloc(zlen + rl);
	size_t after = off + RT_TF_ZFRAME_HEADER + plen;
	memcpy(out, zb, off + RT_TF_ZFRAME_HEADER);
	memcpy(out + off + RT_TF_ZFRAME_HEADER, re, rl);
	memcpy(out + off + RT_TF_ZFRAME_HEADER + rl, zb + after, zlen - after);
	for (int i = 0; i < 4; i++)
		out[off + RT_TF_OFF_ZLEN + i] = (uint8_t)(rl >> (8 * i));
	uint64_t end = 0;
	for (int i = 7; i >= 0; i--)
		end = end << 8 | out[RT_TF_OFF_DATA_END + i];
	end += rl - plen;
	for (int i = 0; i < 8; i++)
		out[RT_TF_OFF_DATA_END + i] = (uint8_t)(end >> (8 * i));
	*outlen = zlen - plen + rl;
	free(cols);
	free(re);
	return out;
}

/* The last byte of the type column (after 13 varint lengths): a type
 * the coding has no columns for, checked only once every call before it
 * in the frame is decoded. */
static void bad_last_type(uint8_t *cols, size_t n)
{
	const uint8_t *p = cols;
	uint64_t len = 0;
	int k = rt_varint_get(p, cols + n, &len);
	assert_true(k > 0 && len > 100);
	for (int i = 0; i < 13; i++) {
		uint64_t v;
		p += rt_varint_get(p, cols + n, &v);
	}
	cols[(size_t)(p - cols) + len - 1] = 99;
}

/* A release that refers to an allocation the frame does not hold: the
 * first byte of the address column of a frame that starts with a
 * release (the chunks below do). */
static void bad_first_release(uint8_t *cols, size_t n)
{
	uint64_t len[13];
	const uint8_t *p = cols;
	for (int i = 0; i < 13; i++)
		p += rt_varint_get(p, cols + n, &len[i]);
	size_t at = (size_t)(p - cols);
	for (int i = 0; i < 6; i++) /* type, index, delta, kind, fn, res */
		at += len[i];
	cols[at] = 0x7e; /* 2d, d = 63: no allocation back there */
}

/* A frame whose columns are bad (zstd's checksum is right) fails the
 * thread at its offset with the columns' message, and none of its calls
 * is delivered: the calls read are those of the frames before it, as
 * when the container ends there. */
static void bad_columns_fail_before_their_calls(void **state)
{
	(void)state;
	bfile bf;
	bthread a;
	simple(&bf, &a, 4096, 0);
	for (int i = 1; i <= 3000; i++) { /* a release, then an allocation */
		enc_call(&bf, &a, (uint64_t)(2 * i), 1, FREE, FN_FREE, 1, 0x1000 + (uint64_t)i * 16, 0, 1, 0);
		enc_call(&bf, &a, (uint64_t)(2 * i + 1), 1, ALLOC, FN_MALLOC, 1, 0x1000 + (uint64_t)i * 16, 16, 1, 0);
	}
	bf_finish(&bf);
	size_t zlen, off = 64;
	uint8_t *zb = compress_bf(&bf, &zlen);
	for (int k = 0; k < 4; k++) /* the fifth frame */
		off = next_frame(zb, off);
	assert_int_equal(zb[off + RT_TF_OFF_ZCODING], RT_TF_ZCODING_COLUMNS);
	void (*changes[])(uint8_t *, size_t) = {bad_last_type, bad_first_release};
	const char *why[] = {"the type column holds a type the coding has no columns for",
			     "a release refers to an allocation the frame does not hold"};
	for (int c = 0; c < 2; c++) {
		size_t blen;
		uint8_t *bad = change_frame(zb, zlen, off, changes[c], &blen);
		outcome o, cut;
		outcome_of(NULL, bad, blen, &o);
		assert_int_equal(o.rc, -1);
		char want[300];
		snprintf(want, sizeof want, "byte offset %zu: expected a frame that decodes to its", off);
		if (strncmp(o.err.msg, want, strlen(want)) || !strstr(o.err.msg, why[c]))
			fail_msg("got \"%s\"", o.err.msg);
		outcome_of(NULL, zb, off, &cut); /* the container up to that frame */
		assert_int_equal(cut.rc, 0);
		assert_true(cut.s.n > 1000);
		assert_int_equal(cut.s.nwarn, 1);
		cut.s.nwarn = o.s.nwarn; /* the cut one warns that it is cut */
		cut.err = o.err, cut.rc = o.rc;
		same_outcome(&o, &cut);
		free(bad);
	}
	free(zb);
	be_free(&bf.f);
}

/* --- frames decoded ahead by worker threads (bin_zpar.c) --- */

/* Three threads in bursts of ~700 calls, in chunks of 4 KiB: each
 * stream has many frames, queued for the workers while the others run. */
static void threads_trace(bfile *bf)
{
	bf_init(bf, 4096, 1);
	bthread th[3] = {bf_thread(10), bf_thread(11), bf_thread(12)};
	preamble(bf, &th[0], 0);
	for (int k = 0; k < 3; k++) {
		uint64_t frame[2] = {0x400100 + (uint64_t)k * 16, 0x400300};
		enc_bt(bf, &th[k], (uint64_t)k + 1, 2, frame);
	}
	uint64_t x = 99;
	for (uint64_t i = 1; i <= 40000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		int k = (int)((i / 700 + (x >> 62)) % 3);
		if ((x >> 20) % 3 == 0 && i > 1)
			enc_call(bf, &th[k], i, 2, FREE, FN_FREE, 1, 0x1000 + (i - 1) * 16, 0, (uint64_t)k + 1, 0);
		else
			enc_call(bf, &th[k], i, 3, ALLOC, FN_MALLOC, 1, 0x1000 + i * 16, (x >> 30) % 4000,
				 (uint64_t)k + 1, 0);
	}
	bf_finish(bf);
}

/* The read of buf with 1 thread and with 2, 3 and 8: the same calls,
 * stacks, warnings and error; *tasks: the most threads seen with 3. */
static void same_with_threads(const char *path, const uint8_t *buf, size_t len, int *tasks)
{
	unsigned js[] = {2, 3, 8};
	for (size_t i = 0; i < sizeof js / sizeof *js; i++) {
		outcome one, many;
		outcome_of_j(path, buf, len, 1, &one);
		outcome_of_j(path, buf, len, js[i], &many);
		if (js[i] == 3 && tasks)
			*tasks = many.s.tasks;
		same_outcome(&one, &many);
	}
}

static void threads_read_as_one(void **state)
{
	(void)state;
	bfile bf;
	threads_trace(&bf);
	size_t zlen;
	uint8_t *zb = compress_bf(&bf, &zlen);
	int tasks = 0, one_task = task_count();
	same_with_threads(NULL, zb, zlen, &tasks);
	assert_true(tasks > one_task); /* the workers ran */
	char path[] = "/tmp/test_bin_zpar.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, zb, zlen); /* mapped: pages given back behind */
	same_with_threads(path, NULL, 0, NULL);
	unlink(path);
	for (int k = 1; k < 8; k++) /* cut: a truncated container */
		same_with_threads(NULL, zb, zlen * (size_t)k / 8 + (size_t)k, NULL);
	/* a frame that does not decode, past the middle: the same prefix */
	size_t off = mid_columns_frame(zb, zlen), n = 0;
	for (int c = 0; c < 2; c++) {
		uint8_t *bad = change_frame(zb, zlen, off, c ? bad_first_release : bad_last_type, &n);
		outcome o;
		outcome_of_j(NULL, bad, n, 2, &o);
		assert_int_equal(o.rc, -1);
		assert_true(o.s.n > 1000);
		seen_free(&o.s);
		free(o.frame);
		same_with_threads(NULL, bad, n, NULL);
		free(bad);
	}
	free(zb);
	be_free(&bf.f);
}

/* buf (len bytes) read from a file, its frames with pread (bin_zpar.c,
 * rt_bin_zframe_at), on 1 and 2 threads: what the reader gives from
 * memory, the same calls, warnings and error. */
static void same_from_file(const uint8_t *buf, size_t len)
{
	char path[] = "/tmp/test_bin_zfile.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, buf, len);
	for (unsigned j = 1; j <= 2; j++) {
		outcome mem, file;
		outcome_of_j(NULL, buf, len, 1, &mem);
		outcome_of_j(path, NULL, 0, j, &file);
		same_outcome(&mem, &file);
	}
	unlink(path);
}

/* A compressed trace read from its file, whole, cut anywhere (inside a
 * frame too) and with a frame that does not decode: the calls before
 * the cut or the bad frame are delivered and the same message names the
 * byte offset, as when read from memory. */
static void frames_read_from_file(void **state)
{
	(void)state;
	bfile bf;
	threads_trace(&bf);
	size_t zlen, n = 0;
	uint8_t *zb = compress_bf(&bf, &zlen);
	same_from_file(zb, zlen);
	for (int k = 1; k < 8; k++) {
		size_t cut = zlen * (size_t)k / 8 + (size_t)k * 7;
		outcome o;
		outcome_of_j(NULL, zb, cut, 1, &o);
		assert_true(o.s.n > 0); /* what was read before the cut */
		assert_true(o.s.nwarn > 0 || o.rc != 0);
		seen_free(&o.s);
		free(o.frame);
		same_from_file(zb, cut);
	}
	size_t off = mid_columns_frame(zb, zlen);
	uint8_t *bad = change_frame(zb, zlen, off, bad_first_release, &n);
	outcome o;
	outcome_of_j(NULL, bad, n, 1, &o);
	assert_int_equal(o.rc, -1);
	assert_non_null(strstr(o.err.msg, "byte offset"));
	seen_free(&o.s);
	free(o.frame);
	same_from_file(bad, n);
	free(bad);
	free(zb);
	be_free(&bf.f);
}

/* Lets the held worker go once the reader decoded two frames for it,
 * or after 5 s (a reader that only waits). */
static void *unhold_after_help(void *arg)
{
	rt_bin_zpar *p = arg;
	unsigned held;
	uint64_t helped = 0;
	for (int i = 0; i < 5000 && helped < 2; i++) {
		rt_bin_zpar_counts(p, &held, &helped);
		if (helped < 2)
			usleep(1000);
	}
	rt_bin_zpar_hold(p, false);
	return NULL;
}

/* A reader waiting for a frame its worker is slow to decode decodes the
 * frames queued after it meanwhile, and gets every frame as decoded in
 * place. */
static void reader_helps_a_slow_worker(void **state)
{
	(void)state;
	bfile bf;
	threads_trace(&bf);
	size_t zlen, o = 64;
	uint8_t *zb = compress_bf(&bf, &zlen);
	uint64_t off[3];
	for (int k = 0; k < 3; k++) {
		assert_true(o + RT_TF_ZFRAME_HEADER < zlen);
		off[k] = o;
		o = next_frame(zb, o);
	}
	rt_bin_zpar *p = rt_bin_zpar_new(zb, -1, 1, 4);
	assert_non_null(p);
	rt_bin_zpar_hold(p, true);
	uint32_t job[3];
	assert_true(rt_bin_zpar_submit(p, off[0], &job[0]));
	unsigned held = 0;
	uint64_t helped = 0;
	for (int i = 0; i < 5000 && !held; i++) { /* the worker took frame 0 */
		rt_bin_zpar_counts(p, &held, &helped);
		if (!held)
			usleep(1000);
	}
	assert_int_equal(held, 1);
	assert_true(rt_bin_zpar_submit(p, off[1], &job[1]) && rt_bin_zpar_submit(p, off[2], &job[2]));
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, unhold_after_help, p), 0);
	rt_bin_zc *z = rt_bin_zc_new(), *z2 = rt_bin_zc_new();
	size_t ncalls = 0;
	for (int k = 0; k < 3; k++) {
		rt_bin_zframe f = {0}, d = {0};
		rt_bin_zpar_take(p, job[k], z, &f);
		rt_bin_zframe_decode(z2, zb + off[k], &d);
		assert_true(f.ok && d.ok);
		assert_int_equal(f.calls.n, d.calls.n);
		ncalls += d.calls.n;
		for (size_t i = 0; i < d.calls.n; i++) {
			const rt_call *a = &f.calls.v[i], *b = &d.calls.v[i];
			assert_true(a->index == b->index && a->res_id == b->res_id && a->size == b->size &&
				    a->bt == b->bt && a->kind == b->kind);
		}
		free(f.buf);
		free(d.buf);
		rt_bin_zcalls_free(&f.calls);
		rt_bin_zcalls_free(&d.calls);
	}
	assert_true(ncalls > 100);
	pthread_join(th, NULL);
	rt_bin_zpar_counts(p, &held, &helped);
	assert_int_equal(helped, 2); /* frames 1 and 2, while frame 0 was held */
	rt_bin_zc_free(z);
	rt_bin_zc_free(z2);
	rt_bin_zpar_free(p);
	free(zb);
	be_free(&bf.f);
}

/* The read of buf (len bytes) by on_call and by on_calls, with 1 and
 * 3 threads: the same calls, stacks, warnings (after the same calls)
 * and error; the batches hold up to RT_BIN_BATCH calls, or a frame's
 * run of more by pointer (rt_bin_take_calls). */
static void same_by_batches(const uint8_t *buf, size_t len)
{
	for (unsigned j = 1; j <= 3; j += 2) {
		outcome one, batched;
		outcome_of_jb(NULL, buf, len, 1, false, &one);
		outcome_of_jb(NULL, buf, len, j, true, &batched);
		assert_int_equal(one.s.batches, 0);
		if (one.s.n > 1000) {
			assert_true(batched.s.batches > 0 && batched.s.batches < one.s.n / 100);
			assert_true(batched.s.most > 100);
		}
		same_outcome(&one, &batched);
	}
}

/* rt_hp_feed for each call and rt_hp_feed_calls for the batches give
 * the same profile: its summary and every site's costs. */
typedef struct hp_ctx {
	rt_hp *h;
} hp_ctx;

static void hp_one(void *ctx, rt_trace *t, const rt_call *c)
{
	rt_hp_feed(((hp_ctx *)ctx)->h, t, c);
}

static void hp_many(void *ctx, rt_trace *t, const rt_call *c, size_t n)
{
	rt_hp_feed_calls(((hp_ctx *)ctx)->h, t, c, n);
}

static rt_hp *hp_of(const uint8_t *buf, size_t len, bool batch, rt_trace **t)
{
	hp_ctx x = {rt_hp_new()};
	rt_hp_set_lookahead(x.h, true);
	*t = rt_trace_new();
	rt_read_opts ro = {0, hp_one, NULL, &x, 2, batch ? hp_many : NULL};
	rt_diag err;
	assert_int_equal(rt_bin_read_mem(*t, buf, len, "f", &ro, NULL, &err), 0);
	rt_hp_finish(x.h);
	return x.h;
}

static void same_profile(const uint8_t *buf, size_t len)
{
	rt_trace *ta, *tb;
	rt_hp *a = hp_of(buf, len, false, &ta), *b = hp_of(buf, len, true, &tb);
	const rt_hp_summary *x = rt_hp_get_summary(a), *y = rt_hp_get_summary(b);
	assert_true(x->total.allocations > 10000 && x->total.temporary > 100);
	assert_memory_equal(&x->total, &y->total, sizeof x->total);
	uint64_t fx[] = {x->frees, x->leaked_blocks, x->peak_index, x->peak_us, x->first_us, x->last_us};
	uint64_t fy[] = {y->frees, y->leaked_blocks, y->peak_index, y->peak_us, y->first_us, y->last_us};
	assert_memory_equal(fx, fy, sizeof fx);
	assert_int_equal(rt_hp_site_count(a), rt_hp_site_count(b));
	for (size_t i = 0; i < rt_hp_site_count(a); i++) {
		const rt_hp_site *p = rt_hp_site_at(a, i), *q = rt_hp_site_at(b, i);
		assert_int_equal(p->bt, q->bt);
		assert_int_equal(p->first_index, q->first_index);
		assert_memory_equal(&p->cost, &q->cost, sizeof p->cost);
	}
	rt_hp_free(a);
	rt_hp_free(b);
	rt_trace_free(ta);
	rt_trace_free(tb);
}

static void batches_read_as_calls(void **state)
{
	(void)state;
	bfile bf;
	threads_trace(&bf);
	size_t zlen, n;
	uint8_t *zb = compress_bf(&bf, &zlen);
	same_by_batches(bf.f.b, bf.f.len); /* raw */
	same_by_batches(zb, zlen);
	same_profile(bf.f.b, bf.f.len);
	same_profile(zb, zlen);
	for (int k = 1; k < 8; k++) { /* cut: raw with an error, compressed with a warning */
		same_by_batches(bf.f.b, bf.f.len * (size_t)k / 8 + (size_t)k);
		same_by_batches(zb, zlen * (size_t)k / 8 + (size_t)k);
	}
	size_t off = mid_columns_frame(zb, zlen);
	uint8_t *bad = change_frame(zb, zlen, off, bad_last_type, &n);
	same_by_batches(bad, n);
	free(bad);
	free(zb);
	be_free(&bf.f);
}

/* --- a frame's calls handed over by pointer (rt_bin_take_calls) --- */

enum { BY_POINTER_CALLS = 12000 };

/* One thread, frames of ~3000 calls with times, new stacks between
 * runs of calls, the empty stack, a second resource; at call `bad`
 * (0: none) what breaks the read: 1 an undefined function, 2 an
 * undefined stack, 3 a stack defined again otherwise. */
static void pointer_trace(bfile *bf, int what, uint64_t bad)
{
	bthread a;
	bf_init(bf, 65536, 4242);
	a = bf_thread(100);
	preamble(bf, &a, RT_TF_PROC_TIMESTAMPS);
	enc_resource(bf, &a, 2, "fd", "file descriptor", 0);
	uint64_t stack[2] = {0x400100, 0x400300}, bt = 1, x = 5;
	enc_bt(bf, &a, bt, 2, stack);
	for (uint64_t i = 1; i <= BY_POINTER_CALLS; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (i % 700 == 0) { /* a new stack between two runs */
			stack[0] += 16;
			enc_bt(bf, &a, ++bt, 2, stack);
		}
		if (i == bad && what == 3)
			enc_bt(bf, &a, 1, 1, stack);
		uint64_t fn = i == bad && what == 1 ? 77 : 0, use = i == bad && what == 2 ? 999 : (x >> 40) % 9 ? bt : 0;
		uint64_t dt = (x >> 20) % 50 ? 0 : 4000000, res = (x >> 30) % 97 ? 1 : 2;
		if (i > 1 && (x >> 10) % 2)
			enc_call(bf, &a, i, dt, FREE, fn ? fn : FN_FREE, res, 0x1000 + (i - 1) * 16, 0, use, 0);
		else
			enc_call(bf, &a, i, dt, ALLOC, fn ? fn : FN_MALLOC, res, 0x1000 + i * 16, (x >> 33) % 3000, use, (x >> 50) % 3);
	}
	bf_finish(bf);
}

/* The container's calls by on_call and by on_calls (1 and 3 threads),
 * field by field, and the same error; returns the longest batch. */
static size_t same_by_pointer(const uint8_t *zb, size_t zlen)
{
	rt_trace *t1 = rt_trace_new();
	seen s1 = {0};
	rt_read_opts o1 = {0, on_call, on_warn, &s1};
	rt_diag e1 = {0};
	int rc1 = rt_bin_read_mem(t1, zb, zlen, "f", &o1, NULL, &e1);
	size_t most = 0;
	for (unsigned j = 1; j <= 3; j += 2) {
		rt_trace *t = rt_trace_new();
		seen sb = {0};
		rt_read_opts ob = {0, on_call, on_warn, &sb, j, on_calls};
		rt_diag eb = {0};
		assert_int_equal(rt_bin_read_mem(t, zb, zlen, "f", &ob, NULL, &eb), rc1);
		assert_string_equal(e1.msg, eb.msg);
		assert_int_equal(s1.nwarn, sb.nwarn);
		same_calls(t1, &s1, t, &sb);
		uint64_t u1 = 0, ub = 0;
		assert_int_equal(rt_trace_last_timestamp(t1, &u1), rt_trace_last_timestamp(t, &ub));
		assert_int_equal(u1, ub);
		most = sb.most > most ? sb.most : most;
		rt_trace_free(t);
		seen_free(&sb);
	}
	rt_trace_free(t1);
	seen_free(&s1);
	return most;
}

/* The runs of a frame's plain calls reach on_calls by pointer, in
 * place, more than a batch's RT_BIN_BATCH at a time, as on_call gets
 * them one by one (their ids, times, resources), on the whole trace,
 * one cut anywhere, and one whose ids break the read inside a frame:
 * there the calls before it are handed over, then the message is the
 * record at a time path's. */
static void runs_by_pointer(void **state)
{
	(void)state;
	for (int what = 0; what <= 3; what++) {
		bfile bf;
		pointer_trace(&bf, what, what ? 5001 + (uint64_t)what : 0);
		size_t zlen;
		uint8_t *zb = compress_bf(&bf, &zlen);
		size_t most = same_by_pointer(zb, zlen);
		if (what == 0) {
			assert_true(most > 256); /* a run, not a batch */
			for (int k = 1; k < 6; k++)
				same_by_pointer(zb, zlen * (size_t)k / 6 + (size_t)k);
		} else {
			rt_trace *t = rt_trace_new();
			seen sv = {0};
			rt_read_opts o = {0, on_call, on_warn, &sv, 1, on_calls};
			rt_diag e = {0};
			assert_int_equal(rt_bin_read_mem(t, zb, zlen, "f", &o, NULL, &e), -1);
			assert_non_null(strstr(e.msg, what == 3 ? "to be defined once" : "before this CALL record"));
			assert_int_equal(sv.n, 5000 + (uint64_t)what); /* those before it */
			rt_trace_free(t);
			seen_free(&sv);
		}
		free(zb);
		be_free(&bf.f);
	}
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_record_type),
		cmocka_unit_test(heap_check_records),
		cmocka_unit_test(error_heap_check_fields),
		cmocka_unit_test(lifetime_filter_records),
		cmocka_unit_test(error_lifetime_filter_fields),
		cmocka_unit_test(calls_appended_without_callback),
		cmocka_unit_test(stopped_trace_says_incomplete),
		cmocka_unit_test(threads_merged_in_index_order),
		cmocka_unit_test(runs_of_threads_keep_index_order),
		cmocka_unit_test(call_fields_with_and_without_room),
		cmocka_unit_test(mapped_file_reads_as_memory),
		cmocka_unit_test(same_stack_two_threads_is_one_backtrace),
		cmocka_unit_test(max_depth_keeps_the_top_frames),
		cmocka_unit_test(maps_generations_add_new_modules),
		cmocka_unit_test(leak_filter_sees_index_order),
		cmocka_unit_test(timestamps_from_process_start),
		cmocka_unit_test(timestamps_across_midnight),
		cmocka_unit_test(reused_tid_is_a_new_thread),
		cmocka_unit_test(killed_program_zero_chunks),
		cmocka_unit_test(definitions_from_other_threads),
		cmocka_unit_test(fd_file_and_pipe),
		cmocka_unit_test(detection),
		cmocka_unit_test(many_modules_and_repeated_contexts),
		cmocka_unit_test(partial_chunk_headers),
		cmocka_unit_test(absurd_start_time),
		cmocka_unit_test(null_arguments),
		cmocka_unit_test(large_trace_through_a_pipe),
		cmocka_unit_test(error_file_header),
		cmocka_unit_test(error_unknown_record_type),
		cmocka_unit_test(error_record_past_used),
		cmocka_unit_test(error_long_varints),
		cmocka_unit_test(error_undefined_ids),
		cmocka_unit_test(error_bad_fields),
		cmocka_unit_test(error_redefinitions),
		cmocka_unit_test(error_bad_chunks),
		cmocka_unit_test(error_keeps_a_prefix_across_threads),
		cmocka_unit_test(truncation_at_every_offset),
		cmocka_unit_test(short_copy_warns),
		cmocka_unit_test(call_arguments),
		cmocka_unit_test(call_arguments_at_most_64),
		cmocka_unit_test(call_arguments_cut),
		cmocka_unit_test(call_arguments_bad_count),
		cmocka_unit_test(shared_encoders_match_the_spec),
		cmocka_unit_test(compressed_reads_as_raw),
		cmocka_unit_test(compressed_pages_given_back),
		cmocka_unit_test(bad_columns_fail_before_their_calls),
		cmocka_unit_test(threads_read_as_one),
		cmocka_unit_test(reader_helps_a_slow_worker),
		cmocka_unit_test(frames_read_from_file),
		cmocka_unit_test(batches_read_as_calls),
		cmocka_unit_test(runs_by_pointer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
