/* Unit tests of the compressed container's chunk codec (bin_zchunk.c):
 * chunks of every record kind, and of records the fast path of the
 * encoder must leave to the careful one (varints not in their shortest
 * form or over 8 bytes, a kind byte with its top bit, addresses too far
 * apart, records near the chunk's end), go through rt_bin_zc_encode and
 * come back byte for byte from rt_bin_zc_decode; a churn-like chunk
 * keeps the size the recency coding of releases gives. The reader's
 * decoder (rt_bin_zc_decode_calls: plain CALLs as fields, column at a
 * time or through the join) gives the rows' calls and bytes, and on
 * frames whose columns are cut or changed, the rows' verdict and
 * message. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/bin_zchunk.h"
#include "format/trace_format.h"
#include "format/varint.h"

#include <zstd.h>

#define CHUNK (64 * 1024 - RT_TF_CHUNK_HEADER)

typedef struct gen {
	uint8_t *b;
	size_t n;
	uint64_t rng;
	int odd; /* percent of odd varints (long forms, 9 and 10 bytes) */
} gen;

static uint64_t rnd(gen *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

static void u8(gen *g, uint8_t v) { g->b[g->n++] = v; }

/* v as a varint, sometimes (g->odd percent) padded to a longer form. */
static void var(gen *g, uint64_t v)
{
	int pad = (int)(rnd(g) % 100) < g->odd ? (int)(rnd(g) % 3) + 1 : 0;
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		u8(g, (uint8_t)(b | (v || pad ? 0x80 : 0)));
	} while (v);
	for (; pad; pad--)
		u8(g, pad > 1 ? 0x80 : 0);
}

/* A value of 1 to 10 varint bytes, small ones most often. */
static uint64_t val(gen *g)
{
	int bits = (int)(rnd(g) % 100) < 70 ? (int)(rnd(g) % 15) : (int)(rnd(g) % 65);
	return bits >= 64 ? rnd(g) : rnd(g) & ((1ull << bits) - 1);
}

/* A CALL or CALLA: index, delta, kind, fn, res, addr, [size], bt, ctx. */
static void call(gen *g, uint64_t *index, uint64_t *live, size_t *nlive)
{
	static const uint8_t kinds[] = {RT_TF_CALL_ALLOC, RT_TF_CALL_FREE, 0, 3, RT_TF_CALL_ALLOC | RT_TF_CALL_AFTER_DROP};
	bool calla = rnd(g) % 10 == 0;
	uint8_t kind = kinds[rnd(g) % 10 < 8 ? rnd(g) % 2 : 2 + rnd(g) % 3];
	uint64_t addr = 0x7f0000001000ull + (rnd(g) % 65536) * 16;
	if (kind == RT_TF_CALL_FREE && *nlive && rnd(g) % 4)
		addr = live[rnd(g) % *nlive]; /* a recent allocation's */
	else if (rnd(g) % 50 == 0)
		addr = rnd(g); /* too far from the last allocation's */
	if (kind == RT_TF_CALL_ALLOC)
		live[(*nlive < 512 ? (*nlive)++ : rnd(g) % 512)] = addr;
	*index += 1 + (rnd(g) % 4 == 0 ? rnd(g) % 1000 : 0);
	u8(g, calla ? RT_REC_CALLA : RT_REC_CALL);
	var(g, *index);
	var(g, val(g));
	u8(g, kind);
	if (kind & RT_TF_CALL_AFTER_DROP)
		var(g, val(g));
	var(g, rnd(g) % 40);
	var(g, 1 + rnd(g) % 3);
	var(g, addr);
	if ((kind & 0x7f) == RT_TF_CALL_ALLOC)
		var(g, val(g));
	var(g, val(g));
	var(g, rnd(g) % 4);
	if (!calla)
		return;
	uint64_t nargs = 1 + rnd(g) % 3;
	var(g, nargs);
	for (uint64_t i = 0; i < 2 * nargs; i++) {
		var(g, 3);
		u8(g, 'a'), u8(g, 'b'), u8(g, (uint8_t)('0' + i));
	}
}

/* A chunk of about `want` bytes of random records of every kind. */
static size_t chunk(gen *g, size_t want)
{
	uint64_t index = rnd(g) % 100000, live[512];
	size_t nlive = 0;
	g->n = 0;
	while (g->n < want) {
		unsigned r = (unsigned)(rnd(g) % 100);
		if (r < 80) {
			call(g, &index, live, &nlive);
		} else if (r < 95) { /* BT: id, depth, frames */
			u8(g, RT_REC_BT);
			var(g, val(g));
			uint64_t depth = rnd(g) % 30;
			var(g, depth);
			for (uint64_t i = 0; i < depth; i++)
				var(g, val(g));
		} else if (r < 97) { /* any other record: the tail takes it, and the rest */
			u8(g, (uint8_t)(RT_REC_MESSAGE + rnd(g) % 3));
			for (int i = (int)(rnd(g) % 40); i > 0; i--)
				u8(g, (uint8_t)rnd(g));
		} else if (g->n + 5 < want) { /* a record cut short by the chunk's end */
			u8(g, RT_REC_CALL);
			var(g, index + 1);
			break;
		}
	}
	return g->n < want ? g->n : want;
}

static void round_trip(rt_bin_zc *z, const uint8_t *rec, size_t n)
{
	const uint8_t *out;
	uint32_t coding;
	char why[200] = "";
	size_t zlen = rt_bin_zc_encode(z, rec, n, 1, &out, &coding);
	assert_true(zlen > 0);
	uint8_t *frame = malloc(zlen), *back = malloc(n + RT_BIN_ZC_SLACK);
	assert_non_null(frame);
	assert_non_null(back);
	memcpy(frame, out, zlen);
	if (!rt_bin_zc_decode(z, frame, zlen, coding, back, n, why, sizeof why))
		fail_msg("a chunk of %zu bytes (coding %u) does not decode: %s", n, (unsigned)coding, why);
	for (size_t i = 0; i < n; i++)
		if (back[i] != rec[i])
			fail_msg("a chunk of %zu bytes comes back changed at byte %zu", n, i);
	free(frame);
	free(back);
}

/* Random chunks, clean (the tracer's records) and with odd varints. */
static void test_every_kind(void **state)
{
	(void)state;
	rt_bin_zc *z = rt_bin_zc_new();
	gen g = {.b = malloc(CHUNK + 4096), .rng = 0x9e3779b97f4a7c15ull};
	assert_non_null(g.b);
	for (int i = 0; i < 400; i++) {
		g.odd = i % 4 == 0 ? 5 : 0;
		size_t want = i % 3 == 0 ? (size_t)(rnd(&g) % 300) : CHUNK - (size_t)(rnd(&g) % 2000);
		size_t n = chunk(&g, want);
		round_trip(z, g.b, n);
	}
	free(g.b);
	rt_bin_zc_free(z);
}

/* One record of each odd form placed at every offset of the last 200
 * bytes of a chunk of plain records: where the fast path stops (it needs
 * 128 bytes) and where it takes over must agree. */
static void test_odd_records_at_the_end(void **state)
{
	(void)state;
	rt_bin_zc *z = rt_bin_zc_new();
	gen g = {.b = malloc(CHUNK + 4096), .rng = 12345};
	uint8_t *rec = malloc(CHUNK + 4096);
	assert_non_null(g.b);
	assert_non_null(rec);
	for (int odd = 0; odd < 3; odd++)
		for (size_t lead = 1000; lead < 1200; lead += 3) {
			g.odd = 0;
			size_t n = chunk(&g, lead);
			memcpy(rec, g.b, n);
			g.odd = odd == 2 ? 100 : odd * 30;
			size_t m = chunk(&g, 400);
			memcpy(rec + n, g.b, m);
			round_trip(z, rec, n + m);
		}
	free(rec);
	free(g.b);
	rt_bin_zc_free(z);
}

/* bench/churn.c's pattern: 256 slots, each released and allocated again
 * in a random order, so a release is mostly of an allocation some 256
 * calls back in the chunk; the slots' addresses are far apart (a 1 GiB
 * range), so an address difference costs 4 bytes of noise, and a
 * release coded by recency 1 or 2 bytes. The chunks take 4.46 bytes a
 * record; with every release coded by its address difference, 5.66. */
static void test_churn_size(void **state)
{
	(void)state;
	rt_bin_zc *z = rt_bin_zc_new();
	gen g = {.b = malloc(CHUNK + 4096), .rng = 777};
	uint64_t addr[256], index = 5000000, records = 0;
	bool live[256] = {0};
	size_t total = 0;
	for (int k = 0; k < 256; k++)
		addr[k] = 0x7f0000000000ull + (rnd(&g) % (1u << 26)) * 16;
	for (int c = 0; c < 20; c++) {
		g.n = 0;
		while (g.n < CHUNK - 200) {
			unsigned k = (unsigned)(rnd(&g) % 256);
			if (live[k]) {
				u8(&g, RT_REC_CALL), var(&g, ++index), var(&g, 40 + rnd(&g) % 4), u8(&g, RT_TF_CALL_FREE);
				var(&g, 2), var(&g, 1), var(&g, addr[k]), var(&g, 5), var(&g, 0);
				records++;
			}
			live[k] = true;
			u8(&g, RT_REC_CALL), var(&g, ++index), var(&g, 60 + rnd(&g) % 4), u8(&g, RT_TF_CALL_ALLOC);
			var(&g, 1), var(&g, 1), var(&g, addr[k]), var(&g, 16 + k), var(&g, 7), var(&g, 0);
			records++;
		}
		const uint8_t *out;
		uint32_t coding;
		total += rt_bin_zc_encode(z, g.b, g.n, 1, &out, &coding);
		assert_int_equal(coding & RT_TF_ZCODING_MASK, RT_TF_ZCODING_COLUMNS);
		round_trip(z, g.b, g.n);
	}
	double bpr = (double)total / (double)records;
	printf("churn-like chunks: %.2f bytes a record\n", bpr);
	assert_true(bpr < 5.0);
	free(g.b);
	rt_bin_zc_free(z);
}

/* A CALL whose index has no last byte in the 64 bytes the fast path
 * looks at (found by fuzz_bin_zread: a shift by 64 under UBSan). */
static void test_endless_varint(void **state)
{
	(void)state;
	rt_bin_zc *z = rt_bin_zc_new();
	uint8_t rec[400];
	memset(rec, 0x58, sizeof rec);
	rec[0] = RT_REC_CALL;
	memset(rec + 1, 0x9b, 80);
	round_trip(z, rec, sizeof rec);
	rt_bin_zc_free(z);
}

/* A kept call's row, as the tracer writes it: the raw model call of
 * bin_zchunk.h (its time delta in timestamp_us, its resource id in
 * res_type, the trace's function and stack ids). */
static size_t call_row(const rt_call *c, uint8_t *o)
{
	uint8_t *p = o;
	assert_int_equal(c->args, RT_NONE);
	assert_int_equal(c->flags, 0);
	*p++ = RT_REC_CALL;
	p = rt_put_varint(p, c->index);
	p = rt_put_varint(p, c->timestamp_us);
	*p++ = c->kind;
	p = rt_put_varint(p, c->fn);
	p = rt_put_varint(p, c->res_type);
	p = rt_put_varint(p, c->res_id);
	if (c->kind == RT_TF_CALL_ALLOC)
		p = rt_put_varint(p, c->size);
	else
		assert_int_equal(c->size, 0);
	p = rt_put_varint(p, c->bt);
	p = rt_put_varint(p, c->context);
	return (size_t)(p - o);
}

/* The reader's decoder against the rows of the same payload: the same
 * verdict and message; when it decodes, the kept calls' rows fill the
 * gaps it left, to the rows' bytes, and the join gives what the column
 * at a time path gives. Returns the calls kept. */
static size_t same_as_rows(rt_bin_zc *z, const uint8_t *frame, size_t zlen, uint32_t coding, size_t n)
{
	uint8_t *rows = calloc(1, n + RT_BIN_ZC_SLACK), *dst[2] = {calloc(1, n + RT_BIN_ZC_SLACK), calloc(1, n + RT_BIN_ZC_SLACK)};
	char why_rows[200] = "", why[2][200] = {"", ""};
	rt_bin_zcalls calls[2] = {{0}, {0}};
	assert_non_null(rows);
	bool ok_rows = rt_bin_zc_decode(z, frame, zlen, coding, rows, n, why_rows, sizeof why_rows);
	for (int exact = 0; exact < 2; exact++) {
		rt_bin_zc_set_exact(z, exact);
		bool ok = rt_bin_zc_decode_calls(z, frame, zlen, coding, dst[exact], n, &calls[exact], why[exact], sizeof why[exact]);
		if (ok != ok_rows || strcmp(why[exact], why_rows))
			fail_msg("%s path: %d (%s), rows: %d (%s)", exact ? "join" : "column", ok, why[exact], ok_rows, why_rows);
		if (!ok)
			continue;
		uint8_t *gap = calloc(1, n + 1), row[128];
		size_t at = 0;
		for (size_t k = 0; k < calls[exact].n; k++) {
			const rt_call *c = &calls[exact].v[k];
			const uint32_t *pl = calls[exact].at[k];
			size_t len = call_row(c, row);
			assert_true(pl[0] >= at && pl[1] == pl[0] + len && pl[1] <= n);
			if (memcmp(rows + pl[0], row, len))
				fail_msg("call %zu (index %llu) is not its row at %u", k, (unsigned long long)c->index, pl[0]);
			memset(gap + pl[0], 1, len);
			at = pl[1];
		}
		for (size_t i = 0; i < n; i++)
			if (!gap[i] && dst[exact][i] != rows[i])
				fail_msg("byte %zu of the records differs from the rows'", i);
		free(gap);
	}
	rt_bin_zc_set_exact(z, false);
	if (ok_rows) {
		assert_int_equal(calls[0].n, calls[1].n);
		for (size_t k = 0; k < calls[0].n; k++) {
			const rt_call *a = &calls[0].v[k], *b = &calls[1].v[k];
			const uint32_t *pa = calls[0].at[k], *pb = calls[1].at[k];
			uint64_t fa[] = {a->index, a->timestamp_us, a->fn, a->res_type, a->res_id, a->size, a->bt, a->context, pa[0], pa[1], a->kind};
			uint64_t fb[] = {b->index, b->timestamp_us, b->fn, b->res_type, b->res_id, b->size, b->bt, b->context, pb[0], pb[1], b->kind};
			assert_memory_equal(fa, fb, sizeof fa);
		}
	}
	size_t kept = ok_rows ? calls[0].n : 0;
	rt_bin_zcalls_free(&calls[0]);
	rt_bin_zcalls_free(&calls[1]);
	free(rows);
	free(dst[0]);
	free(dst[1]);
	return kept;
}

static size_t encode_copy(rt_bin_zc *z, const uint8_t *rec, size_t n, uint8_t **frame, uint32_t *coding)
{
	const uint8_t *out;
	size_t zlen = rt_bin_zc_encode(z, rec, n, 1, &out, coding);
	assert_true(zlen > 0);
	*frame = malloc(zlen);
	assert_non_null(*frame);
	memcpy(*frame, out, zlen);
	return zlen;
}

/* Chunks of every record kind, and the tracer's (CALLs and BTs only,
 * which the column at a time path takes): the reader's decoder keeps
 * the plain CALLs before the first record only rows give back. */
static void test_calls_as_rows(void **state)
{
	(void)state;
	rt_bin_zc *z = rt_bin_zc_new();
	gen g = {.b = malloc(CHUNK + 4096), .rng = 4242};
	assert_non_null(g.b);
	size_t kept = 0;
	for (int i = 0; i < 300; i++) {
		size_t n;
		if (i % 2) {
			g.odd = i % 6 == 1 ? 5 : 0;
			n = chunk(&g, i % 5 == 0 ? (size_t)(rnd(&g) % 300) : CHUNK - (size_t)(rnd(&g) % 2000));
		} else { /* the tracer's: allocations, releases of them, stacks */
			uint64_t index = 1 + rnd(&g) % 1000, live[64];
			size_t nlive = 0, want = 100 + (size_t)(rnd(&g) % CHUNK);
			g.n = 0;
			g.odd = 0;
			while (g.n + 200 < want) {
				if (rnd(&g) % 20 == 0) {
					u8(&g, RT_REC_BT), var(&g, 1 + rnd(&g) % 500), var(&g, 3);
					var(&g, 0x401000), var(&g, rnd(&g) % 300), var(&g, rnd(&g) % 300);
					continue;
				}
				bool rel = nlive && rnd(&g) % 2;
				uint64_t addr = rel ? live[rnd(&g) % nlive] : 0x7f0000001000ull + (rnd(&g) % 65536) * 16;
				u8(&g, RT_REC_CALL), var(&g, index += 1 + rnd(&g) % 3), var(&g, rnd(&g) % 300);
				u8(&g, rel ? RT_TF_CALL_FREE : RT_TF_CALL_ALLOC), var(&g, 1 + rnd(&g) % 5), var(&g, 1), var(&g, addr);
				if (!rel)
					var(&g, rnd(&g) % 100000);
				var(&g, rnd(&g) % 600), var(&g, rnd(&g) % 3);
				if (!rel)
					live[nlive < 64 ? nlive++ : rnd(&g) % 64] = addr;
			}
			n = g.n;
		}
		uint8_t *frame;
		uint32_t coding;
		size_t zlen = encode_copy(z, g.b, n, &frame, &coding);
		uint64_t fast = rt_bin_zc_fast_frames(z);
		kept += same_as_rows(z, frame, zlen, coding, n);
		if (i % 2 == 0) /* the tracer's: the column at a time path's */
			assert_int_equal(rt_bin_zc_fast_frames(z), fast + 1);
		free(frame);
	}
	assert_true(kept > 100000);
	free(g.b);
	rt_bin_zc_free(z);
}

/* The columns of a tracer's frame cut, or a byte of them changed, then
 * compressed again: every decoder says what the rows say. */
static void test_changed_columns(void **state)
{
	(void)state;
	rt_bin_zc *z = rt_bin_zc_new();
	gen g = {.b = malloc(CHUNK + 4096), .rng = 99};
	assert_non_null(g.b);
	uint64_t index = 1, live[16] = {0};
	size_t nlive = 0;
	while (g.n < 3000) {
		bool rel = nlive && rnd(&g) % 2;
		uint64_t addr = rel ? live[rnd(&g) % nlive] : 0x7f0000001000ull + (rnd(&g) % 4096) * 16;
		u8(&g, RT_REC_CALL), var(&g, index++), var(&g, rnd(&g) % 200), u8(&g, rel ? RT_TF_CALL_FREE : RT_TF_CALL_ALLOC);
		var(&g, 2), var(&g, 1), var(&g, addr);
		if (!rel)
			var(&g, 16 + rnd(&g) % 200), live[nlive < 16 ? nlive++ : rnd(&g) % 16] = addr;
		var(&g, 1 + rnd(&g) % 9), var(&g, 0);
		if (rnd(&g) % 30 == 0)
			u8(&g, RT_REC_BT), var(&g, 1 + rnd(&g) % 9), var(&g, 2), var(&g, 0x401000), var(&g, 24);
	}
	uint8_t *frame;
	uint32_t coding;
	size_t zlen = encode_copy(z, g.b, g.n, &frame, &coding);
	assert_int_equal(coding, RT_TF_ZCODING_COLUMNS);
	size_t m = ZSTD_getFrameContentSize(frame, zlen);
	uint8_t *cols = malloc(m), *bad = malloc(m), *re = malloc(ZSTD_compressBound(m));
	assert_int_equal(ZSTD_decompress(cols, m, frame, zlen), m);
	size_t failed = 0;
	for (int i = 0; i < 3000; i++) {
		memcpy(bad, cols, m);
		size_t len = m;
		if (i % 3 == 0)
			len = (size_t)(rnd(&g) % m); /* cut */
		else
			for (int k = 1 + (int)(rnd(&g) % 3); k > 0; k--)
				bad[rnd(&g) % m] = (uint8_t)(rnd(&g) % 4 ? (uint64_t)bad[rnd(&g) % m] + 1 : rnd(&g));
		size_t rl = ZSTD_compress(re, ZSTD_compressBound(m), bad, len, 1);
		assert_false(ZSTD_isError(rl));
		same_as_rows(z, re, rl, coding, g.n);
		char why[200];
		uint8_t *dst = malloc(g.n + RT_BIN_ZC_SLACK);
		failed += !rt_bin_zc_decode(z, re, rl, coding, dst, g.n, why, sizeof why);
		free(dst);
	}
	assert_true(failed > 1000); /* the changes were seen, mostly */
	free(cols);
	free(bad);
	free(re);
	free(frame);
	free(g.b);
	rt_bin_zc_free(z);
}

/* The tracer's frames whose calls' index or address varints are all of
 * one length, or not: the column at a time path takes the lengths that
 * are the same for every call once per frame (bin_zchunk.c, row_fixed),
 * and each call's row must still be at the place the rows say, whatever
 * the frame's index (one byte, crossing 2^7, 2^14, 2^21) and addresses
 * (all 7 bytes, 3 and 7 bytes, the least of them shorter than the
 * others, all short). */
static void test_row_lengths(void **state)
{
	(void)state;
	static const uint64_t first[] = {1, 100, 16300, (1ull << 21) - 300, 5000};
	static const uint64_t base[][2] = {{0x7f0000001000ull, 0x7f0000001000ull},
					   {0x7f0000001000ull, 0x20000ull},
					   {0x555555550000ull, 0x1000ull},
					   {0x30000ull, 0x30000ull},
					   {0x4000ull, 0x7fff0ull}};
	rt_bin_zc *z = rt_bin_zc_new();
	gen g = {.b = malloc(CHUNK + 4096), .rng = 777};
	assert_non_null(g.b);
	for (int i = 0; i < 5 * 5 * 2; i++) {
		uint64_t index = first[i % 5], live[32], lo = base[i / 5 % 5][0], hi = base[i / 5 % 5][1];
		bool mixed = i / 25; /* some calls' other columns wide too */
		size_t nlive = 0, want = 400 + (size_t)(rnd(&g) % 6000);
		g.n = 0;
		while (g.n + 200 < want) {
			if (rnd(&g) % 25 == 0) {
				u8(&g, RT_REC_BT), var(&g, 1 + rnd(&g) % 100), var(&g, 1), var(&g, 0x401000);
				continue;
			}
			bool rel = nlive && rnd(&g) % 2;
			uint64_t addr = rel ? live[rnd(&g) % nlive] : (rnd(&g) % 2 ? lo : hi) + (rnd(&g) % 256) * 16;
			u8(&g, RT_REC_CALL), var(&g, index += 1 + rnd(&g) % 2), var(&g, mixed ? rnd(&g) % 300 : 5);
			u8(&g, rel ? RT_TF_CALL_FREE : RT_TF_CALL_ALLOC), var(&g, mixed ? rnd(&g) % 200 : 3), var(&g, 1);
			var(&g, addr);
			if (!rel)
				var(&g, rnd(&g) % 3000);
			var(&g, mixed ? rnd(&g) % 400 : 7), var(&g, mixed ? rnd(&g) % 140 : 0);
			if (!rel)
				live[nlive < 32 ? nlive++ : rnd(&g) % 32] = addr;
		}
		uint8_t *frame;
		uint32_t coding;
		size_t zlen = encode_copy(z, g.b, g.n, &frame, &coding);
		uint64_t fast = rt_bin_zc_fast_frames(z);
		assert_true(same_as_rows(z, frame, zlen, coding, g.n) > 0);
		assert_int_equal(rt_bin_zc_fast_frames(z), fast + 1); /* the column at a time path's */
		free(frame);
	}
	free(g.b);
	rt_bin_zc_free(z);
}

/* Frames whose calls the column at a time path takes in blocks
 * (bin_zchunk.c, FAST_BLOCK: 512): stack rows right before and after a
 * block's last call, values of more than a byte in one block only,
 * indices and addresses whose lengths change at a block's edge. Each
 * call's row is still at its place and what the join gives. */
static void test_blocks(void **state)
{
	(void)state;
	static const size_t ncalls[] = {511, 512, 513, 1024, 1537};
	static const size_t bt_at[] = {0, 1, 510, 511, 512, 513, 1023, 1024, 1025};
	rt_bin_zc *z = rt_bin_zc_new();
	gen g = {.b = malloc(CHUNK + 4096), .rng = 31337};
	assert_non_null(g.b);
	for (size_t i = 0; i < sizeof ncalls / sizeof *ncalls; i++)
		for (int shape = 0; shape < 4; shape++) {
			/* wide values: 0 none, 1 in the first block, 2 after it, 3 at random */
			uint64_t index = shape & 1 ? 1 : 16384 - 512, live[32];
			size_t nlive = 0, n = ncalls[i];
			g.n = 0;
			for (size_t k = 0; k <= n; k++) {
				for (size_t b = 0; b < sizeof bt_at / sizeof *bt_at; b++)
					if (bt_at[b] == k)
						u8(&g, RT_REC_BT), var(&g, 1 + k % 100), var(&g, 1), var(&g, 0x401000 + k);
				if (k == n)
					break;
				bool wide = shape == 3 ? rnd(&g) % 2 : shape == 1 ? k < 512 : shape == 2 && k >= 512;
				bool rel = nlive && rnd(&g) % 2;
				uint64_t addr = rel ? live[rnd(&g) % nlive]
						    : (k < 512 ? 0x7f0000001000ull : 0x3000ull) + (rnd(&g) % 256) * 16;
				u8(&g, RT_REC_CALL), var(&g, index += 1), var(&g, wide ? 200 + rnd(&g) % 9000 : 5);
				u8(&g, rel ? RT_TF_CALL_FREE : RT_TF_CALL_ALLOC), var(&g, wide ? 300 : 2), var(&g, 1);
				var(&g, addr);
				if (!rel)
					var(&g, rnd(&g) % (wide ? 100000 : 100));
				var(&g, wide ? 70000 + k : k % 100), var(&g, wide ? 1000 : 0);
				if (!rel)
					live[nlive < 32 ? nlive++ : rnd(&g) % 32] = addr;
			}
			assert_true(g.n <= CHUNK);
			uint8_t *frame;
			uint32_t coding;
			size_t zlen = encode_copy(z, g.b, g.n, &frame, &coding);
			uint64_t fast = rt_bin_zc_fast_frames(z);
			assert_int_equal(same_as_rows(z, frame, zlen, coding, g.n), n);
			assert_int_equal(rt_bin_zc_fast_frames(z), fast + 1);
			free(frame);
		}
	free(g.b);
	rt_bin_zc_free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_odd_records_at_the_end),
		cmocka_unit_test(test_churn_size),
		cmocka_unit_test(test_endless_varint),
		cmocka_unit_test(test_calls_as_rows),
		cmocka_unit_test(test_changed_columns),
		cmocka_unit_test(test_row_lengths),
		cmocka_unit_test(test_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
