/* libFuzzer harness for the binary trace reader (rt_bin_read_mem).
 *
 * The whole input is a binary trace, so the seeds in tests/fuzz/corpus-bin/
 * (written by tests/cli/gen_bin_trace) are valid as they are; they use
 * small chunks so that inputs of a few hundred bytes span many chunks and
 * threads. The last byte picks the options, since the first ones are the
 * magic (and the last one of a seed is usually chunk padding, 0):
 *
 *   bits 0-3   read: max_depth, when bit 4 is set
 *   bit 5      read: feed every call through rt_leaks (leak filter)
 *   bit 6      write: compress (group calls by backtrace)
 *
 * Invariants checked (abort otherwise): calls come in index order, each
 * with an interned backtrace, a function name and a known resource type;
 * the call count in the stats is what was delivered; an error is a
 * "byte offset N: expected ..." message without a line; the model, however
 * partial, can be written as text; and when the input reads without error,
 * the same input cut short (where a byte of it says) delivers some of the
 * same calls, in the same order, with the same fields. */
#include "rtrace/binary.h"
#include "rtrace/diag.h"
#include "rtrace/filter.h"
#include "rtrace/text.h"
#include "rtrace/trace.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct sink {
	rt_leaks *leaks; /* NULL: append every call */
	uint64_t ncalls, last_index;
	unsigned warnings;
	rt_call *calls; /* every call delivered, when keep */
	size_t cap;
	int keep;
} sink;

static void check(int ok, const char *what, uint64_t index)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz_bin_read: %s (call %" PRIu64 ")\n", what, index);
	abort();
}

static void on_call(void *ctx, rt_trace *t, const rt_call *c)
{
	sink *s = ctx;
	check(c->index >= s->last_index, "calls out of index order", c->index);
	check(c->bt < rt_trace_bt_count(t), "backtrace not interned", c->index);
	check(rt_trace_str(t, c->fn) != NULL, "no function name", c->index);
	check(rt_trace_resource_get(t, c->res_type) != NULL, "unknown resource type", c->index);
	check(c->kind == RT_CALL_ALLOC || c->kind == RT_CALL_FREE, "bad call kind", c->index);
	check(c->kind == RT_CALL_ALLOC || c->size == 0, "a release with a size", c->index);
	s->last_index = c->index;
	if (s->keep) {
		if (s->ncalls == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 256;
			s->calls = realloc(s->calls, s->cap * sizeof *s->calls);
			check(s->calls != NULL, "out of memory", c->index);
		}
		s->calls[s->ncalls] = *c;
	}
	s->ncalls++;
	if (s->leaks)
		rt_leaks_feed(s->leaks, t, c);
	else
		rt_trace_append_call(t, c);
}

static void on_warn(void *ctx, const rt_diag *d)
{
	sink *s = ctx;
	char buf[1024];
	s->warnings++;
	check(d->line == 0 && (!strncmp(d->msg, "byte offset ", 12) || !strncmp(d->msg, "truncated compressed", 20)),
	      "malformed warning", 0);
	rt_diag_format(d, buf, sizeof buf);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("TZ", "UTC", 1); /* local times: the same on every machine */
	tzset();
	return 0;
}

/* b, read from the cut input, is a as the whole input gave it. Only its
 * time may be missing: the whole read may have found the PROCESS record
 * past the cut by reading ahead. */
static int same_call(const rt_trace *ta, const rt_call *a, const rt_trace *tb, const rt_call *b)
{
	uint32_t n = rt_trace_bt_len(ta, a->bt);
	int same_time = !(b->flags & RT_CALL_HAS_TIMESTAMP) ||
			(a->flags == b->flags && a->timestamp_us == b->timestamp_us);
	return a->index == b->index && a->res_id == b->res_id && a->size == b->size &&
	       a->kind == b->kind && a->context == b->context && same_time &&
	       a->res_type == b->res_type &&
	       !strcmp(rt_trace_str(ta, a->fn), rt_trace_str(tb, b->fn)) &&
	       n == rt_trace_bt_len(tb, b->bt) &&
	       (!n || !memcmp(rt_trace_bt_frames(ta, a->bt), rt_trace_bt_frames(tb, b->bt),
			      n * sizeof(rt_frame)));
}

/* The input cut short: a subsequence of the whole input's calls. */
static void check_cut(const uint8_t *data, size_t size, const rt_trace *t, const sink *whole)
{
	size_t cut = (size_t)data[size / 2] * size / 256;
	rt_trace *tc = rt_trace_new();
	sink s = {NULL, 0, 0, 0, NULL, 0, 1};
	rt_read_opts ro = {0, on_call, on_warn, &s};
	rt_diag err;
	rt_bin_read_mem(tc, data, cut, "cut", &ro, NULL, &err);
	size_t j = 0;
	for (size_t i = 0; i < s.ncalls; i++, j++) {
		while (j < whole->ncalls && whole->calls[j].index != s.calls[i].index)
			j++;
		check(j < whole->ncalls, "the cut input delivers a call the whole one does not", s.calls[i].index);
		check(same_call(t, &whole->calls[j], tc, &s.calls[i]),
		      "the cut input delivers a call differently", s.calls[i].index);
	}
	free(s.calls);
	rt_trace_free(tc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t ctl = size ? data[size - 1] : 0;
	rt_trace *t = rt_trace_new();
	sink s = {(ctl & 0x20) ? rt_leaks_new() : NULL, 0, 0, 0, NULL, 0, 1};
	rt_read_opts ro = {(ctl & 0x10) ? (uint32_t)(ctl & 0x0f) : 0, on_call, on_warn, &s};
	rt_read_stats st;
	rt_diag err;
	int rc = rt_bin_read_mem(t, data, size, "fuzz", &ro, &st, &err);
	check(st.calls == s.ncalls && st.bytes == size, "stats disagree with the calls delivered", st.calls);
	if (rc) {
		check(rc == -1 && err.line == 0, "bad return code or error line", 0);
		check(!strncmp(err.msg, "byte offset ", 12) && strstr(err.msg, ": expected "),
		      "error message not 'byte offset N: expected ...'", 0);
	}
	if (rc == 0 && size && ro.max_depth == 0)
		check_cut(data, size, t, &s);
	free(s.calls);
	if (s.leaks) {
		rt_leaks_finish(s.leaks, t);
		rt_leaks_free(s.leaks);
	}

	/* the CLI writes the partial result of a failed read too */
	rt_write_opts wo = {0};
	wo.compress = (ctl & 0x40) != 0;
	wo.leak_summary = s.leaks != NULL;
	wo.contexts = true;
	size_t outlen = 0;
	char *out = rt_text_write_mem(t, &wo, &outlen);
	check(out && strlen(out) == outlen, "writer output with an embedded NUL", 0);
	free(out);
	rt_trace_free(t);
	return 0;
}
