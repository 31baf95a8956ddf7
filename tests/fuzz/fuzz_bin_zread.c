/* libFuzzer harness for compressed traces (docs/binary-format.md,
 * "Compressed traces"): the container reader and the frame codec.
 *
 * An input starting with 'R' is a container (seeds in corpus-zbin/, the
 * traces of corpus-bin/ compressed by tests/cli/zpack), read with
 * rt_bin_read_mem: calls come in index order with interned stacks, an
 * error is a "byte offset N: expected ..." message, a warning either that
 * or "truncated compressed trace ...", and when the input reads without
 * error, the same input cut short (at a point a byte of it picks)
 * delivers calls of the whole input only; read again by batches
 * (rt_read_opts.on_calls) with frames decoded on 2 worker threads, it
 * gives the same calls and the same error, and so does the input read
 * from a file (a memfd: mapped, its frames read with pread, on 1 and 3
 * threads). Any other input is a chunk's records after one
 * byte: the codec must give them back byte for byte (it is lossless for
 * any bytes), and decoding the input as a frame's payload, of either
 * coding and of the length that byte says, must fail cleanly or give
 * that many bytes; the reader's decoder (rt_bin_zc_decode_calls, column
 * at a time and through the join) must say what the rows say, give the
 * rows' bytes where it did not keep a call, raw model calls that are
 * their rows, and runs, order and id bounds that hold. */
#define _GNU_SOURCE /* memfd_create */
#include "binary/bin_zchunk.h"
#include "format/trace_format.h"
#include "format/varint.h"
#include "rtrace/binary.h"
#include "rtrace/trace.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct sink {
	uint64_t last, n;
	uint64_t *index; /* every call's index, when kept */
	size_t cap;
} sink;

static void check(int ok, const char *what)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz_bin_zread: %s\n", what);
	abort();
}

static void on_call(void *ctx, rt_trace *t, const rt_call *c)
{
	sink *s = ctx;
	check(c->index >= s->last, "calls out of index order");
	check(c->bt < rt_trace_bt_count(t), "backtrace not interned");
	s->last = c->index;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->index = realloc(s->index, s->cap * sizeof *s->index);
		check(s->index != NULL, "out of memory");
	}
	s->index[s->n++] = c->index;
	rt_trace_append_call(t, c);
}

static void on_calls(void *ctx, rt_trace *t, const rt_call *c, size_t n)
{
	check(n > 0, "an empty batch");
	for (size_t i = 0; i < n; i++)
		on_call(ctx, t, &c[i]);
}

static void on_warn(void *ctx, const rt_diag *d)
{
	(void)ctx;
	check(d->line == 0 && (!strncmp(d->msg, "byte offset ", 12) || !strncmp(d->msg, "truncated ", 10)),
	      "malformed warning");
}

/* threads and on_calls as rt_read_opts; why: the error's message; fd:
 * the input's file (rt_bin_read_fd), or -1 (rt_bin_read_mem) */
static int read_container(const uint8_t *data, size_t size, sink *s, unsigned threads, bool batch, char *why,
			  int fd)
{
	rt_trace *t = rt_trace_new();
	rt_read_opts ro = {0, on_call, on_warn, s, threads, batch ? on_calls : NULL};
	rt_diag err = {0};
	int rc = fd >= 0 ? rt_bin_read_fd(t, fd, "fuzz", &ro, NULL, &err)
			 : rt_bin_read_mem(t, data, size, "fuzz", &ro, NULL, &err);
	snprintf(why, sizeof err.msg, "%s", rc ? err.msg : "");
	if (rc)
		check(err.line == 0 && !strncmp(err.msg, "byte offset ", 12), "malformed error");
	rt_trace_free(t);
	return rc;
}

static void container(const uint8_t *data, size_t size)
{
	sink whole = {0}, cut = {0}, par = {0};
	char why[sizeof((rt_diag *)0)->msg], why_par[sizeof why];
	int rc = read_container(data, size, &whole, 1, false, why, -1);
	read_container(data, size > 1 ? (size_t)data[size / 2] * size / 256 : 0, &cut, 1, false, why_par, -1);
	check(read_container(data, size, &par, 3, true, why_par, -1) == rc && !strcmp(why, why_par) &&
	      par.n == whole.n && (!par.n || !memcmp(par.index, whole.index, par.n * sizeof *par.index)),
	      "by batches on worker threads, not the calls or error of one thread");
	free(par.index);
	int fd = memfd_create("fuzz_bin_zread", MFD_CLOEXEC);
	check(fd >= 0 && write(fd, data, size) == (ssize_t)size, "memfd");
	for (unsigned threads = 1; threads <= 3; threads += 2) {
		sink file = {0};
		check(read_container(data, size, &file, threads, false, why_par, fd) == rc && !strcmp(why, why_par) &&
		      file.n == whole.n && (!file.n || !memcmp(file.index, whole.index, file.n * sizeof *file.index)),
		      "from a file, not the calls or error from memory");
		free(file.index);
	}
	close(fd);
	size_t j = 0;
	/* an error past the cut may stop the whole read before calls the cut
	 * one reads (a truncated container is read to its last frame) */
	for (size_t i = 0; i < cut.n && !rc; i++, j++) {
		while (j < whole.n && whole.index[j] != cut.index[i])
			j++;
		check(j < whole.n, "the cut input delivers a call the whole one does not");
	}
	free(whole.index);
	free(cut.index);
}

/* What the decoder says of its calls for the reader's loop (a run ends
 * where a row comes between two calls; the indices go up when it says
 * so; every id's bits are in the ors) is true. */
static void frame_summary(const rt_bin_zcalls *c, bool ok)
{
	if (!ok || !c->n)
		return;
	size_t r = 0;
	for (size_t k = 0; k < c->n; k++) {
		check((c->v[k].fn & ~c->fn_or) == 0 && (c->v[k].bt & ~c->bt_or) == 0, "an id past the frame's bounds");
		check(!c->sorted || !k || c->v[k].index > c->v[k - 1].index, "a frame said sorted is not");
		if (k && c->at[k][0] != c->at[k - 1][1]) {
			check(r < c->nruns && c->runs[r] == k, "a run's end not where a row comes");
			r++;
		}
	}
	check(r + 1 == c->nruns && c->runs[r] == c->n, "the runs do not end at the last call");
}

/* The reader's decoder on the payload against the rows' verdict, message
 * and bytes (rows, when they decoded: n bytes). */
static void calls_as_rows(rt_bin_zc *z, const uint8_t *src, size_t len, uint32_t coding, size_t n, bool ok_rows,
			  const char *why_rows, const uint8_t *rows)
{
	for (int exact = 0; exact < 2; exact++) {
		rt_bin_zcalls calls = {0};
		uint8_t *dst = malloc(n + RT_BIN_ZC_SLACK), *gap = calloc(1, n + 1);
		char why[200] = "";
		check(dst && gap, "out of memory");
		rt_bin_zc_set_exact(z, exact);
		bool ok = rt_bin_zc_decode_calls(z, src, len, coding, dst, n, &calls, why, sizeof why);
		check(ok == ok_rows && !strcmp(why, why_rows), "the reader's decoder and the rows disagree");
		for (size_t k = 0; ok && k < calls.n; k++) {
			/* a raw model call (bin_zchunk.h): its delta in timestamp_us,
			 * its resource id in res_type */
			const rt_call *c = &calls.v[k];
			const uint32_t *at = calls.at[k];
			check(at[0] < at[1] && at[1] <= n && (k == 0 || at[0] >= calls.at[k - 1][1]), "a kept call's place");
			check(c->args == RT_NONE && c->flags == 0 && (c->kind == RT_TF_CALL_ALLOC || c->size == 0) &&
			      c->res_type >= 1 && c->res_type <= RT_TF_MAX_RES, "a kept call's fields");
			uint8_t row[128], *o = row;
			*o++ = RT_REC_CALL;
			o = rt_put_varint(rt_put_varint(o, c->index), c->timestamp_us);
			*o++ = c->kind;
			o = rt_put_varint(rt_put_varint(rt_put_varint(o, c->fn), c->res_type), c->res_id);
			if (c->kind == RT_TF_CALL_ALLOC)
				o = rt_put_varint(o, c->size);
			o = rt_put_varint(rt_put_varint(o, c->bt), c->context);
			check((size_t)(o - row) == at[1] - at[0] && !memcmp(rows + at[0], row, at[1] - at[0]), "a kept call is not its row");
			memset(gap + at[0], 1, at[1] - at[0]);
		}
		for (size_t i = 0; ok && i < n; i++)
			check(gap[i] || dst[i] == rows[i], "the reader's decoder changed a row");
		frame_summary(&calls, ok);
		rt_bin_zcalls_free(&calls);
		free(dst);
		free(gap);
	}
	rt_bin_zc_set_exact(z, false);
}

static void codec(const uint8_t *data, size_t size)
{
	static rt_bin_zc *z;
	const uint8_t *out;
	uint32_t coding;
	char why[200];
	if (!z)
		z = rt_bin_zc_new();
	size_t n = size - 1, zlen = rt_bin_zc_encode(z, data + 1, n, 1, &out, &coding);
	check(zlen > 0, "zstd failed");
	uint8_t *frame = malloc(zlen), *back = malloc(n + 4096 + RT_BIN_ZC_SLACK);
	check(frame && back, "out of memory");
	memcpy(frame, out, zlen);
	check(rt_bin_zc_decode(z, frame, zlen, coding, back, n, why, sizeof why), "a frame of ours does not decode");
	check(!memcmp(back, data + 1, n), "the codec changed the records");
	calls_as_rows(z, frame, zlen, coding, n, true, "", back);
	size_t want = (size_t)data[0] * 16;
	why[0] = '\0';
	bool ok = rt_bin_zc_decode(z, data + 1, n, data[0] & 1, back, want, why, sizeof why);
	if (ok)
		check(want <= n * 4096 + 4096, "decoded more than a payload can hold");
	calls_as_rows(z, data + 1, n, data[0] & 1, want, ok, why, back);
	free(frame);
	free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size && data[0] == 'R')
		container(data, size);
	else if (size)
		codec(data, size);
	return 0;
}
