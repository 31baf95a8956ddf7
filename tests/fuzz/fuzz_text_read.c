/* libFuzzer harness for the text-protocol reader and writer.
 *
 * The whole input is read as a text trace (rt_text_read_mem), so the
 * conformance fixtures are valid seeds as they are. Its first byte also
 * picks the options: since the first line is the header, whose key names
 * do not matter to the reader, flipping bits of that byte keeps seeds
 * parseable (any byte >= 0x20 is header text).
 *
 *   bit 0      write: compress (group calls by backtrace)
 *   bits 1-2   write: sort order of the groups (enum rt_sort)
 *   bit 3      write: leak summary ("# Resource - ..." totals)
 *   bit 4      write: print the context registry
 *   bit 5      write: keep the input header's leaks|resolve filter bits
 *   bit 6      write: add the resolve filter bit
 *   bit 7      read:  feed every call through rt_leaks (leak filter) from
 *              the on_call callback instead of appending it
 *
 * The last byte picks a backtrace depth limit: when its bit 4 is set
 * (digits do, '\n' does not), max_depth = its low nibble.
 *
 * Invariant checked: when the input reads without error, the writer's
 * output must read back without error too (abort otherwise). */
#include "rtrace/diag.h"
#include "rtrace/filter.h"
#include "rtrace/text.h"
#include "rtrace/trace.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sink {
	rt_leaks *leaks; /* NULL: append every call */
	unsigned warnings;
} sink;

static void on_call(void *ctx, rt_trace *t, const rt_call *c)
{
	sink *s = ctx;
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
	/* exercises the diagnostic formatting on every warning */
	rt_diag_format(d, buf, sizeof buf);
}

static void dump(const char *what, const char *buf, size_t len)
{
	fprintf(stderr, "---- %s (%zu bytes) ----\n", what, len);
	fwrite(buf, 1, len, stderr);
	fprintf(stderr, "\n---- end of %s ----\n", what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t ctl = size ? data[0] : 0;
	const uint8_t last = size ? data[size - 1] : 0;
	const char *text = (const char *)data;

	/* 0. the input detection's test of a text trace's header line */
	(void)rt_text_sniff(text, size);

	/* 1. read */
	rt_trace *t = rt_trace_new();
	sink s = {ctl & 0x80 ? rt_leaks_new() : NULL, 0};
	rt_read_opts ro = {(last & 0x10) ? (uint32_t)(last & 0x0f) : 0, on_call, on_warn, &s};
	rt_read_stats st;
	rt_diag err;
	int rc = rt_text_read_mem(t, text, size, "fuzz", &ro, &st, &err);
	char msg[1024];
	rt_diag_format(&err, msg, sizeof msg);
	if (s.leaks) {
		rt_leaks_finish(s.leaks, t);
		(void)rt_leaks_live(s.leaks);
		rt_leaks_free(s.leaks);
	}

	/* 2. write back (also after a read error: the CLI writes the partial
	 * result in that case, so the writer must cope with it) */
	rt_write_opts wo = {0};
	wo.compress = ctl & 0x01;
	wo.sort = (enum rt_sort)((ctl >> 1) & 3);
	wo.leak_summary = (ctl >> 3) & 1;
	wo.contexts = (ctl >> 4) & 1;
	wo.filter_bits = ((ctl & 0x20) ? rt_trace_filter_bits(t) &
						 (RT_FILTER_LEAKS | RT_FILTER_RESOLVE)
				       : 0) |
			 ((ctl & 0x40) ? RT_FILTER_RESOLVE : 0) |
			 ((ctl & 0x80) ? RT_FILTER_LEAKS : 0) |
			 (wo.compress ? RT_FILTER_COMPRESS : 0);
	size_t outlen = 0;
	char *out = rt_text_write_mem(t, &wo, &outlen);
	if (!out || strlen(out) != outlen) {
		fprintf(stderr, "fuzz_text_read: writer returned %s (len %zu)\n",
			out ? "a buffer with an embedded NUL" : "NULL", outlen);
		abort();
	}

	/* 3. the writer's output must always be valid input */
	if (rc == 0) {
		rt_trace *t2 = rt_trace_new();
		sink s2 = {NULL, 0};
		rt_read_opts ro2 = {0, NULL, on_warn, &s2};
		rt_diag err2;
		int rc2 = rt_text_read_mem(t2, out, outlen, "rewritten", &ro2, NULL, &err2);
		if (rc2 != 0) {
			char msg2[1024];
			rt_diag_format(&err2, msg2, sizeof msg2);
			fprintf(stderr,
				"fuzz_text_read: the writer's output does not read back\n"
				"  write opts: compress=%d sort=%d leak_summary=%d contexts=%d "
				"filter_bits=0x%x, read with leak filter=%d max_depth=%u\n"
				"  error: %s\n",
				wo.compress, (int)wo.sort, wo.leak_summary, wo.contexts,
				wo.filter_bits, (ctl & 0x80) != 0, ro.max_depth, msg2);
			dump("input", text, size);
			dump("output", out, outlen);
			abort();
		}
		rt_trace_free(t2);
	}

	free(out);
	rt_trace_free(t);
	return 0;
}
