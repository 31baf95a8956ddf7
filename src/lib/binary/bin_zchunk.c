/* The codec of the compressed container's frames: one raw chunk's
 * records, split in columns, then zstd (docs/binary-format.md,
 * "Compressed traces").
 *
 * Why columns: zstd alone on the tracer's chunks gives 4.3-5.3 bytes per
 * record on bench/churn.c (level 3; 3.4-4.3 at level 19), since every
 * CALL holds a growing index and a fresh address between the repeated
 * fields. Re-encoding each CALL field against the one before (the index
 * as its distance to the previous one, the size as a difference) and
 * putting each field in a column of its own leaves the address as the
 * only costly field (1.7 of 1.73 bytes per record); a release's address
 * is then coded as how many allocations ago it was allocated (within the
 * chunk), which the reader finds in a ring of the chunk's last 4096
 * allocated addresses: 1.15 bytes per record with 1 thread and 1.40
 * with 4 (levels 1-3; 18 in the raw file). Measured in bench/README.md,
 * "Trace size".
 *
 * The coding is lossless for any bytes: a record that is not a CALL,
 * CALLA or BT, or one whose varints are not in their shortest form (the
 * tracer writes no such thing), stops the columns, and the rest of the
 * chunk goes into the tail column as it was.
 *
 * Reading, the frame's plain CALLs go from the columns straight into the
 * model calls (rt_call) that the reader hands over in place
 * (rt_bin_zc_decode_calls, a column at a time, on a worker thread with
 * -j: only their ids and times are left to the reader), the other
 * records as rows at their places; the record at a time join gives the
 * rows (rt_bin_zc_decode) and every message. */
#include "bin_zchunk.h"
#include "bin_varint.h"
#include "format/trace_format.h"
#include "util/util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

enum { C_TYPE, C_IDX, C_DT, C_KIND, C_FN, C_RES, C_ADDR, C_SIZE, C_BT, C_CTX, C_ARGS, C_BTREC, C_TAIL, NCOL };
#define RING 4096u         /* allocated addresses a release can refer to */
#define TAB_BITS 14        /* the encoder's address -> ordinal slots: 16384 */
#define MAX_COLS(n) (2 * (n) + 1024) /* a longer column coding is not used */
#define ZSLACK 16          /* readable bytes after the decompressed columns */

typedef struct col {
	uint8_t *p;
	size_t n, cap;
} col;

struct rt_bin_zc {
	ZSTD_CCtx *c;
	ZSTD_DCtx *d;
	col col[NCOL];
	uint8_t *buf, *out;
	size_t bcap, ocap;
	uint64_t ring[RING]; /* the decoder's */
	uint8_t *raw;        /* rt_bin_zc_raw's */
	size_t rawcap;
	uint64_t *sizes;     /* the fast path's size column */
	size_t scap;
	bool exact;          /* rt_bin_zc_set_exact */
	uint64_t fast_frames; /* frames the column at a time path decoded */
	/* the encoder's: its allocations' addresses by ordinal (ord, counted
	 * over every chunk), and the last ordinal of each address's slot */
	uint64_t ering[RING];
	uint16_t tab[1u << TAB_BITS]; /* an ordinal's low 16 bits */
	uint32_t ord;
	int level;
	bool level_set;
};

rt_bin_zc *rt_bin_zc_new(void)
{
	rt_bin_zc *z = rt_xcalloc(1, sizeof *z);
	z->c = ZSTD_createCCtx();
	z->d = ZSTD_createDCtx();
	if (!z->c || !z->d) {
		fprintf(stderr, "rtrace: out of memory\n");
		abort();
	}
	return z;
}

void rt_bin_zc_free(rt_bin_zc *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->c);
	ZSTD_freeDCtx(z->d);
	for (int i = 0; i < NCOL; i++)
		free(z->col[i].p);
	free(z->buf);
	free(z->out);
	free(z->raw);
	free(z->sizes);
	free(z);
}
/* --- the column coding's state, the same on both sides --- */

typedef struct cstate {
	uint64_t index, alloc_addr, size;
	uint32_t nalloc;
} cstate;

/* A varint in its shortest form, the only one the coding keeps as is. */
static inline bool get_v(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	if (*p < end && **p < 0x80) {
		*v = *(*p)++;
		return true;
	}
	int n = rt_varint_get(*p, end, v);
	if (n <= 0 || (n > 1 && (*p)[n - 1] == 0))
		return false;
	*p += n;
	return true;
}

static bool skip_str(const uint8_t **p, const uint8_t *end)
{
	uint64_t n;
	if (!get_v(p, end, &n) || n > (uint64_t)(end - *p))
		return false;
	*p += n;
	return true;
}
/* --- encoding --- */

/* Where the time goes (bench/README.md, "Compressor rate", 6M records
 * of bench/churn.c on one core): the first version parsed and wrote
 * each varint a byte at a time and found a release's allocation in a
 * probed hash of (address, ordinal) pairs: 65 ns a record in the split,
 * 408 instructions and 3.9 mispredicted branches. Now a CALL is parsed
 * from two masks of the 64 bytes at it (which bytes have their top bit,
 * which are 0): a field ends at the next byte without it, the fields
 * that go to a column unchanged are stored as the 8 bytes loaded, the
 * three re-coded ones read and written with masks and shifts, and the
 * release's lookup is one slot of a direct-mapped table of ordinals,
 * checked against the ring of addresses (a missed slot costs only size:
 * the coding of a release is what the ring says, not what the table
 * says): 38 ns, 352 instructions and 1.3 mispredictions; zstd level 1
 * adds 16-20. */

#define FAST_MIN 128 /* bytes left: fast_call reads 72 from its record's start */

/* The columns' write positions and the coding's state in one chunk. */
typedef struct enc {
	uint8_t *o[NCOL];
	uint64_t index, alloc_addr, size;
	uint32_t ord, base; /* z->ord now and at the chunk's start */
} enc;

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* The value of the n-byte varint loaded as x (n <= 8); up to 4 bytes
 * (an index, a size) with 32-bit masks. */
static inline uint64_t fv_val(uint64_t x, unsigned n)
{
	if (n <= 4) {
		uint32_t y = (uint32_t)x & (0xffffffffu >> (32 - 8 * n));
		return (y & 0x7f) | (y & 0x7f00) >> 1 | (y & 0x7f0000) >> 2 | (y & 0x7f000000) >> 3;
	}
	x &= ~0ull >> (64 - 8 * n) & 0x7f7f7f7f7f7f7f7full;
	x = (x & 0x007f007f007f007full) | (x & 0x7f007f007f007f00ull) >> 1;
	x = (x & 0x00003fff00003fffull) | (x & 0x3fff00003fff0000ull) >> 2;
	return (x & 0x000000000fffffffull) | (x & 0x0fffffff00000000ull) >> 4;
}

/* v as a varint at o, with 8 bytes of room: 8 bytes stored at once
 * below 2^56 (n - 1 = bits / 7 as bits * 37 >> 8, exact below 64). */
static inline uint8_t *fput_long(uint8_t *o, uint64_t v)
{
	if (v >> 56)
		return rt_put_varint(o, v);
	unsigned n = ((unsigned)(63 - __builtin_clzll(v)) * 37 >> 8) + 1;
	uint64_t x = (v & 0x000000000fffffffull) | (v & 0x00fffffff0000000ull) << 4;
	x = (x & 0x00003fff00003fffull) | (x & 0x0fffc0000fffc000ull) << 2;
	x = (x & 0x007f007f007f007full) | (x & 0x3f803f803f803f80ull) << 1;
	x |= 0x8080808080808080ull & ((1ull << (8 * (n - 1))) - 1);
	memcpy(o, &x, 8);
	return o + n;
}

/* The same, with no branch on the bytes below 2^14 (most deltas). */
static inline uint8_t *fput_v(uint8_t *o, uint64_t v)
{
	if (v >> 14)
		return fput_long(o, v);
	unsigned big = v >= 0x80;
	uint16_t x = (uint16_t)((v & 0x7f) | big << 7 | (v >> 7) << 8);
	memcpy(o, &x, 2);
	return o + 1 + big;
}

/* The bytes of a varint loaded as x, n long, at o (8 bytes of room). */
static inline uint8_t *fput_raw(uint8_t *o, uint64_t x, unsigned n)
{
	memcpy(o, &x, 8);
	return o + n;
}

static inline uint32_t tab_at(uint64_t addr)
{
	return (uint32_t)(((addr >> 4) * 0x9e3779b97f4a7c15ull) >> (64 - TAB_BITS));
}

/* The address column's value (see the table in docs/binary-format.md):
 * a release's is 2d when it is the d-th last address allocated in the
 * chunk (d <= RING), else 1 + 2 * zigzag(its distance to the last). */
static inline uint64_t addr_code(rt_bin_zc *z, enc *e, uint8_t kind, uint64_t addr)
{
	uint64_t diff = rt_zigzag((int64_t)(addr - e->alloc_addr));
	uint32_t at = tab_at(addr);
	if (kind == RT_TF_CALL_FREE) {
		uint32_t d = (uint16_t)(e->ord - z->tab[at]);
		if (d - 1 < RING && d <= e->ord - e->base && z->ering[(e->ord - d) % RING] == addr)
			return 2 * (uint64_t)d;
		return 1 + 2 * diff;
	}
	if (kind == RT_TF_CALL_ALLOC) {
		z->tab[at] = (uint16_t)e->ord;
		z->ering[e->ord++ % RING] = addr;
		e->alloc_addr = addr;
	}
	return diff;
}

/* The 64 bytes at p: bit k of *cont is byte k's top bit (a varint goes
 * on), of *zero whether byte k is 0. */
static inline void byte_masks(const uint8_t *p, uint64_t *cont, uint64_t *zero)
{
#ifdef __SSE2__
	__m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
	__m128i v2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
	__m128i v3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48)), z0 = _mm_setzero_si128();
	*cont = (uint64_t)(uint32_t)_mm_movemask_epi8(v0) | (uint64_t)(uint32_t)_mm_movemask_epi8(v1) << 16 |
		(uint64_t)(uint32_t)_mm_movemask_epi8(v2) << 32 | (uint64_t)(uint32_t)_mm_movemask_epi8(v3) << 48;
	*zero = (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v0, z0)) |
		(uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v1, z0)) << 16 |
		(uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v2, z0)) << 32 |
		(uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v3, z0)) << 48;
#else
	uint64_t c = 0, zm = 0;
	for (int i = 0; i < 8; i++) {
		uint64_t x = load64(p + 8 * i), h = 0x8080808080808080ull;
		uint64_t z0 = ~(((x & ~h) + ~h) | x) & h; /* 0x80 in each zero byte */
		c |= ((x & h) >> 7) * 0x0102040810204080ull >> 56 << (8 * i);
		zm |= (z0 >> 7) * 0x0102040810204080ull >> 56 << (8 * i);
	}
	*cont = c, *zero = zm;
#endif
}

/* The offset after the lowest terminator left in *t (64 when none is
 * left), which it clears. */
static inline unsigned next_end(uint64_t *t)
{
	unsigned end = (unsigned)__builtin_ctzll(*t | 1ull << 63) + 1;
	*t &= *t - 1;
	return end;
}

/* Whether the CALL at p, its masks given, can take the fast path: its
 * fields end within the 64 bytes, its kind has no top bit, its varints
 * are at most 8 bytes (no 8 continuation bits in a row) and in their
 * shortest form (no 0 byte after a continuation bit). */
static inline bool fast_ok(const uint8_t *p, uint64_t cont, uint64_t zero, uint64_t t)
{
	next_end(&t); /* the index */
	unsigned ed = next_end(&t);
	t &= t - 1, t &= t - 1, t &= t - 1, t &= t - 1, t &= t - 1; /* kind fn res addr bt */
	if (p[ed] == RT_TF_CALL_ALLOC)
		t &= t - 1; /* size */
	unsigned ec = next_end(&t); /* ctx */
	uint64_t span = (2ull << (ec & 63)) - 1, run = cont & cont >> 1;
	run &= run >> 2;
	run &= run >> 4;
	return !((cont >> (ed & 63) & 1) | ec >> 6 | (((zero & cont << 1) | run) & span)); /* ed 64: ec too */
}

/* A CALL from the masks of the 64 bytes at p (a chunk's records have
 * FAST_MIN bytes after p): a field ends at the next byte without its
 * top bit, whose offset the masks give at once. The end of the record,
 * or NULL for the careful path (fast_ok, or an address too far). */
static inline __attribute__((always_inline)) const uint8_t *fast_call(rt_bin_zc *z, enc *e, const uint8_t *p)
{
	uint64_t cont, zero;
	byte_masks(p, &cont, &zero);
	uint64_t t = ~cont & ~1ull; /* the fields' last bytes, after the type */
	if (!fast_ok(p, cont, zero, t))
		return NULL;
	unsigned ei = next_end(&t), ed = next_end(&t), ek = next_end(&t);
	unsigned ef = next_end(&t), er = next_end(&t), ea = next_end(&t);
	uint8_t kind = p[ed];
	uint64_t index = fv_val(load64(p + 1), ei - 1), addr = fv_val(load64(p + er), ea - er);
	if (rt_zigzag((int64_t)(addr - e->alloc_addr)) >> 62)
		return NULL;
	*e->o[C_TYPE]++ = RT_REC_CALL;
	e->o[C_IDX] = fput_v(e->o[C_IDX], rt_zigzag((int64_t)(index - e->index - 1)));
	e->index = index;
	e->o[C_DT] = fput_raw(e->o[C_DT], load64(p + ei), ed - ei);
	*e->o[C_KIND]++ = kind;
	e->o[C_FN] = fput_raw(e->o[C_FN], load64(p + ek), ef - ek);
	e->o[C_RES] = fput_raw(e->o[C_RES], load64(p + ef), er - ef);
	e->o[C_ADDR] = fput_v(e->o[C_ADDR], addr_code(z, e, kind, addr));
	unsigned es = ea;
	if (kind == RT_TF_CALL_ALLOC) {
		es = next_end(&t);
		uint64_t size = fv_val(load64(p + ea), es - ea);
		e->o[C_SIZE] = fput_v(e->o[C_SIZE], rt_zigzag((int64_t)(size - e->size)));
		e->size = size;
	}
	unsigned eb = next_end(&t), ec = next_end(&t);
	e->o[C_BT] = fput_raw(e->o[C_BT], load64(p + es), eb - es);
	e->o[C_CTX] = fput_raw(e->o[C_CTX], load64(p + eb), ec - eb);
	return p + ec;
}

/* --- the careful path: any record, near the chunk's end too --- */

/* A CALLA's argument count and its name and value strings. */
static bool parse_args(const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint64_t n;
	if (!get_v(&p, end, &n) || n > RT_TF_MAX_ARGS)
		return false;
	for (uint64_t i = 0; i < 2 * n; i++)
		if (!skip_str(&p, end))
			return false;
	*pp = p;
	return true;
}

typedef struct call_f {
	uint64_t index, dt, fn, res, addr, size, bt, ctx;
	uint8_t kind;
	const uint8_t *args, *args_end; /* CALLA: the argument count and arguments */
} call_f;

static bool parse_call(const uint8_t **pp, const uint8_t *end, bool calla, call_f *f)
{
	const uint8_t *p = *pp;
	if (!get_v(&p, end, &f->index) || !get_v(&p, end, &f->dt) || p >= end)
		return false;
	f->kind = *p++;
	f->size = 0;
	if (!get_v(&p, end, &f->fn) || !get_v(&p, end, &f->res) || !get_v(&p, end, &f->addr) ||
	    (f->kind == RT_TF_CALL_ALLOC && !get_v(&p, end, &f->size)) || !get_v(&p, end, &f->bt) ||
	    !get_v(&p, end, &f->ctx))
		return false;
	f->args = p;
	if (calla && !parse_args(&p, end))
		return false;
	f->args_end = p;
	*pp = p;
	return true;
}

static uint8_t *put_bytes(uint8_t *o, const uint8_t *p, size_t n)
{
	memcpy(o, p, n);
	return o + n;
}

static void put_call(rt_bin_zc *z, enc *e, uint8_t type, const call_f *f)
{
	*e->o[C_TYPE]++ = type;
	e->o[C_IDX] = fput_v(e->o[C_IDX], rt_zigzag((int64_t)(f->index - e->index - 1)));
	e->index = f->index;
	e->o[C_DT] = fput_v(e->o[C_DT], f->dt);
	*e->o[C_KIND]++ = f->kind;
	e->o[C_FN] = fput_v(e->o[C_FN], f->fn);
	e->o[C_RES] = fput_v(e->o[C_RES], f->res);
	e->o[C_ADDR] = fput_v(e->o[C_ADDR], addr_code(z, e, f->kind, f->addr));
	if (f->kind == RT_TF_CALL_ALLOC) {
		e->o[C_SIZE] = fput_v(e->o[C_SIZE], rt_zigzag((int64_t)(f->size - e->size)));
		e->size = f->size;
	}
	e->o[C_BT] = fput_v(e->o[C_BT], f->bt);
	e->o[C_CTX] = fput_v(e->o[C_CTX], f->ctx);
	if (type == RT_REC_CALLA)
		e->o[C_ARGS] = put_bytes(e->o[C_ARGS], f->args, (size_t)(f->args_end - f->args));
}

static bool parse_bt(const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint64_t id, n, v;
	if (!get_v(&p, end, &id) || !get_v(&p, end, &n) || n > (uint64_t)(end - p))
		return false;
	for (uint64_t i = 0; i < n; i++)
		if (!get_v(&p, end, &v))
			return false;
	*pp = p;
	return true;
}

/* One record the careful way; false when it went to the tail, with the
 * rest of the chunk. */
static __attribute__((noinline)) bool careful(rt_bin_zc *z, enc *e, const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp, *q = p + 1;
	call_f f;
	if ((*p == RT_REC_CALL || *p == RT_REC_CALLA) && parse_call(&q, end, *p == RT_REC_CALLA, &f) &&
	    rt_zigzag((int64_t)(f.addr - e->alloc_addr)) >> 62 == 0) { /* 1 + 2 zigzag fits */
		put_call(z, e, *p, &f);
	} else if (*p == RT_REC_BT && parse_bt(&q, end)) {
		*e->o[C_TYPE]++ = RT_REC_BT;
		e->o[C_BTREC] = put_bytes(e->o[C_BTREC], p + 1, (size_t)(q - p - 1));
	} else {
		*e->o[C_TYPE]++ = 0;
		e->o[C_TAIL] = put_bytes(e->o[C_TAIL], p, (size_t)(end - p));
		return false;
	}
	*pp = q;
	return true;
}

/* The records into the columns; whatever they cannot hold goes to the
 * tail after a type byte 0. Columns have room for what a chunk of n
 * bytes can put in them, and 8 bytes more: a record is 9 bytes at least
 * and puts at most 10 in each column. */
static void split(rt_bin_zc *z, const uint8_t *p, const uint8_t *end)
{
	enc e = {.ord = z->ord, .base = z->ord};
	size_t room = 2 * (size_t)(end - p) + 16;
	for (int i = 0; i < NCOL; i++) {
		if (z->col[i].cap < room)
			rt_grow((void **)&z->col[i].p, &z->col[i].cap, room, 1);
		e.o[i] = z->col[i].p;
	}
	while (p < end) {
		const uint8_t *q;
		if (*p == RT_REC_CALL && (size_t)(end - p) >= FAST_MIN && (q = fast_call(z, &e, p))) {
			p = q;
			continue;
		}
		enc c = e; /* e stays in registers: careful() gets a copy */
		bool more = careful(z, &c, &p, end);
		e = c;
		if (!more)
			break;
	}
	for (int i = 0; i < NCOL; i++)
		z->col[i].n = (size_t)(e.o[i] - z->col[i].p);
	z->ord = e.ord;
}

/* zstd, its parameters set once: a context keeps them across frames. */
static const uint8_t *zstd_to_out(rt_bin_zc *z, const uint8_t *src, size_t n, int level, size_t *len)
{
	size_t bound = ZSTD_compressBound(n);
	if (bound > z->ocap)
		rt_grow((void **)&z->out, &z->ocap, bound, 1);
	if (level != z->level || !z->level_set) {
		ZSTD_CCtx_reset(z->c, ZSTD_reset_session_and_parameters);
		ZSTD_CCtx_setParameter(z->c, ZSTD_c_compressionLevel, level);
		ZSTD_CCtx_setParameter(z->c, ZSTD_c_checksumFlag, 1);
		z->level = level;
		z->level_set = true;
	}
	size_t r = ZSTD_compress2(z->c, z->out, z->ocap, src, n);
	*len = ZSTD_isError(r) ? 0 : r;
	return z->out;
}

size_t rt_bin_zc_encode(rt_bin_zc *z, const uint8_t *rec, size_t n, int level, const uint8_t **out,
			uint32_t *coding)
{
	split(z, rec, rec + n);
	size_t total = NCOL * RT_VARINT_MAX;
	for (int i = 0; i < NCOL; i++)
		total += z->col[i].n;
	size_t len;
	if (total > MAX_COLS(n)) {
		*coding = RT_TF_ZCODING_ZSTD;
		*out = zstd_to_out(z, rec, n, level, &len);
		return len;
	}
	if (total > z->bcap)
		rt_grow((void **)&z->buf, &z->bcap, total, 1);
	uint8_t *p = z->buf;
	for (int i = 0; i < NCOL; i++)
		p = rt_put_varint(p, z->col[i].n);
	for (int i = 0; i < NCOL; i++) {
		if (z->col[i].n)
			memcpy(p, z->col[i].p, z->col[i].n);
		p += z->col[i].n;
	}
	*coding = RT_TF_ZCODING_COLUMNS;
	*out = zstd_to_out(z, z->buf, (size_t)(p - z->buf), level, &len);
	return len;
}
/* --- decoding --- */

/* Two outputs from one walk over the columns: rows (rt_bin_zc_decode:
 * the records as they were) or, for the reader, the plain CALLs as
 * fields (rt_bin_zc_decode_calls), the other records as rows at their
 * places. d->o is the next record's place in the records either way: a
 * CALL kept as fields moves it by its row's length without writing it,
 * so every check on lengths, and every message, is the rows'. */
typedef struct dec {
	const uint8_t *p[NCOL], *end[NCOL];
	uint8_t *o, *oend, *base;
	rt_bin_zcalls *calls; /* NULL: every record as a row */
	bool rows;            /* a record only its row gives back was met: rows from now on */
	char *why;
	size_t whylen;
} dec;

static bool fail(dec *d, const char *what)
{
	snprintf(d->why, d->whylen, "%s", what);
	return false;
}

/* A column's varint: one byte at once, up to 8 in one load where the
 * column has 8 bytes left (bin_varint.h), else the byte loop. */
static inline bool take_v(dec *d, int c, uint64_t *v)
{
	if (d->p[c] < d->end[c] && *d->p[c] < 0x80) {
		*v = *d->p[c]++;
		return true;
	}
	int n = d->end[c] - d->p[c] >= 8 ? rt_bin_varint8_get(d->p[c], v) : 0;
	if (n > 0) {
		d->p[c] += n;
		return true;
	}
	n = rt_varint_get(d->p[c], d->end[c], v);
	if (n <= 0)
		return fail(d, "a column of the frame ends early or holds a bad varint");
	d->p[c] += n;
	return true;
}

static bool emit(dec *d, const void *p, size_t n)
{
	if (n > (size_t)(d->oend - d->o))
		return fail(d, "the frame decodes to more bytes than its chunk header's used");
	memcpy(d->o, p, n);
	d->o += n;
	return true;
}

/* Unchecked: join_call checks for room for a whole CALL first (and 8
 * bytes more for the last 8-byte store, bin_varint.h). */
static inline void put_v(dec *d, uint64_t v)
{
	if (v < 0x80) {
		*d->o++ = (uint8_t)v;
		return;
	}
	int n = rt_bin_varint8_put(d->o, v);
	d->o = n ? d->o + n : rt_put_varint(d->o, v);
}

static bool take_addr(rt_bin_zc *z, dec *d, cstate *s, uint8_t kind, uint64_t *addr)
{
	uint64_t v;
	if (!take_v(d, C_ADDR, &v))
		return false;
	if (kind == RT_TF_CALL_FREE && !(v & 1)) {
		uint64_t back = v / 2;
		if (back < 1 || back > RING || back > s->nalloc)
			return fail(d, "a release refers to an allocation the frame does not hold");
		*addr = z->ring[(s->nalloc - back) % RING];
		return true;
	}
	*addr = s->alloc_addr + (uint64_t)rt_unzigzag(kind == RT_TF_CALL_FREE ? v / 2 : v);
	if (kind == RT_TF_CALL_ALLOC) {
		z->ring[s->nalloc++ % RING] = *addr;
		s->alloc_addr = *addr;
	}
	return true;
}

/* A CALL's or CALLA's fields, as its row has them. */
typedef struct zfields {
	uint64_t index, dt, fn, res, addr, size, bt, ctx;
	uint8_t kind;
} zfields;

/* A CALL's or CALLA's fields from the columns (size 0 but for an
 * allocation, as the row has none). */
static inline __attribute__((always_inline)) bool take_call(rt_bin_zc *z, dec *d, cstate *s, zfields *f)
{
	uint64_t di, ds = 0;
	if (d->p[C_KIND] >= d->end[C_KIND])
		return fail(d, "the kind column ends early");
	uint8_t kind = f->kind = *d->p[C_KIND]++;
	if (!take_v(d, C_IDX, &di) || !take_v(d, C_DT, &f->dt) || !take_v(d, C_FN, &f->fn) ||
	    !take_v(d, C_RES, &f->res) || !take_addr(z, d, s, kind, &f->addr) ||
	    (kind == RT_TF_CALL_ALLOC && !take_v(d, C_SIZE, &ds)) || !take_v(d, C_BT, &f->bt) ||
	    !take_v(d, C_CTX, &f->ctx))
		return false;
	f->index = s->index += (uint64_t)rt_unzigzag(di) + 1;
	s->size += (uint64_t)rt_unzigzag(ds);
	f->size = kind == RT_TF_CALL_ALLOC ? s->size : 0;
	return true;
}

static void put_row(dec *d, uint8_t type, const zfields *f)
{
	*d->o++ = type;
	put_v(d, f->index);
	put_v(d, f->dt);
	*d->o++ = f->kind;
	put_v(d, f->fn);
	put_v(d, f->res);
	put_v(d, f->addr);
	if (f->kind == RT_TF_CALL_ALLOC)
		put_v(d, f->size);
	put_v(d, f->bt);
	put_v(d, f->ctx);
}

/* The bytes of v as a varint in its shortest form, by its leading
 * zeros: ceil((64 - clz) / 7), a table rather than the division. */
static const uint8_t vlen_by_clz[64] = {
	10, 9, 9, 9, 9, 9, 9, 9, 8, 8, 8, 8, 8, 8, 8, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 5, 5, 5,
	5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
};

static inline size_t vlen(uint64_t v)
{
	return vlen_by_clz[__builtin_clzll(v | 1)];
}

/* A CALL's row's length: put_row's without writing it. */
static inline size_t row_len(const zfields *f)
{
	return 2 + vlen(f->index) + vlen(f->dt) + vlen(f->fn) + vlen(f->res) + vlen(f->addr) +
	       (f->kind == RT_TF_CALL_ALLOC ? vlen(f->size) : 0) + vlen(f->bt) + vlen(f->ctx);
}

/* Room for one call more in c (its rt_call and its row's place). */
static inline void calls_room(rt_bin_zcalls *c, size_t n)
{
	if (n <= c->cap)
		return;
	size_t cap = c->cap;
	rt_grow((void **)&c->v, &c->cap, n, sizeof *c->v);
	rt_grow((void **)&c->at, &cap, c->cap, sizeof *c->at);
}

/* A plain CALL kept as a raw model call (bin_zchunk.h), with its row's
 * place. */
static inline void keep_call(dec *d, const zfields *f)
{
	rt_bin_zcalls *c = d->calls;
	calls_room(c, c->n + 1);
	c->at[c->n][0] = (uint32_t)(d->o - d->base);
	d->o += row_len(f);
	c->at[c->n][1] = (uint32_t)(d->o - d->base);
	c->v[c->n++] = (rt_call){.index = f->index, .res_id = f->addr, .size = f->size, .timestamp_us = f->dt,
				 .context = (uint32_t)f->ctx, .fn = (uint32_t)f->fn, .bt = (uint32_t)f->bt,
				 .args = RT_NONE, .res_type = (uint8_t)f->res, .kind = f->kind};
}

/* Whether a call's ids fit a model call's fields (rt_bin_zcalls). */
static inline bool fits(const zfields *f)
{
	return !((f->fn | f->bt | f->ctx) >> 32) && f->res - 1 < RT_TF_MAX_RES;
}

/* A CALL or CALLA record back from the columns: kept as fields when it
 * is a plain CALL (kind 1 or 2; rows give back any other as it was,
 * and the reader parses those records, and every one after them, from
 * their rows), else as its row. */
static inline __attribute__((always_inline)) bool join_call(rt_bin_zc *z, dec *d, cstate *s, uint8_t type)
{
	zfields f;
	if (!take_call(z, d, s, &f))
		return false;
	if (d->oend - d->o < 2 + 8 * RT_VARINT_MAX + 8)
		return fail(d, "the frame decodes to more bytes than its chunk header's used");
	bool plain = f.kind == RT_TF_CALL_ALLOC || f.kind == RT_TF_CALL_FREE;
	if (d->calls && !d->rows && plain && type == RT_REC_CALL && fits(&f)) {
		keep_call(d, &f);
		return true;
	}
	d->rows |= !plain;
	put_row(d, type, &f);
	if (type != RT_REC_CALLA)
		return true;
	const uint8_t *a = d->p[C_ARGS];
	if (!parse_args(&a, d->end[C_ARGS]))
		return fail(d, "the arguments column ends early");
	bool ok = emit(d, d->p[C_ARGS], (size_t)(a - d->p[C_ARGS]));
	d->p[C_ARGS] = a;
	return ok;
}

static inline __attribute__((always_inline)) bool join(rt_bin_zc *z, dec *d)
{
	cstate s = {0};
	while (d->p[C_TYPE] < d->end[C_TYPE]) {
		uint8_t type = *d->p[C_TYPE]++;
		if (type == RT_REC_CALL || type == RT_REC_CALLA) {
			if (!join_call(z, d, &s, type))
				return false;
		} else if (type == RT_REC_BT) {
			const uint8_t *q = d->p[C_BTREC];
			if (!parse_bt(&q, d->end[C_BTREC]))
				return fail(d, "the stacks column ends early");
			if (!emit(d, &type, 1) || !emit(d, d->p[C_BTREC], (size_t)(q - d->p[C_BTREC])))
				return false;
			d->p[C_BTREC] = q;
		} else if (type == 0) {
			d->rows = true;
			if (!emit(d, d->p[C_TAIL], (size_t)(d->end[C_TAIL] - d->p[C_TAIL])))
				return false;
			d->p[C_TAIL] = d->end[C_TAIL];
		} else {
			return fail(d, "the type column holds a type the coding has no columns for");
		}
	}
	return true;
}

/* --- the reader's fast path: a column at a time --- */

/* Why: the join above takes a record at a time, nine columns in turn,
 * every varint checked against its column's end, then writes the row,
 * which the reader parses again: 560 instructions a call from frame to
 * the reader's head on churn (callgrind: 369 in the join with zstd's 46,
 * 191 in call_fields), 671 on python3. A column at a time, each a loop
 * over its varints (eight one-byte values at once where they are) with
 * the checks gathered per column, and no row written for a plain CALL,
 * it is 316 on churn (zstd 46, the columns 214, the reader's take of
 * the fields 56) and 428 on python3 (zstd 104, the columns 268, 56). It
 * takes the frames the tracer writes after its first: CALLs of kind 1 or
 * 2 and BT records, that decode whole (churn: every frame but the
 * first; python3: 414 of 418). On anything else (a CALLA, the tail, a
 * column that ends early, a length that is not the chunk's), the join
 * decodes the frame again, for its result or its message: the fast path
 * gives exactly what the join gives, or leaves it to the join.
 *
 * The columns are written into the reader's model calls (rt_call: each
 * field at its width, the ids raw), so that what the reader did per
 * call (a copy of 56 bytes, id look-ups, index and bound checks: 116
 * instructions a call on churn, with the merge) is a loop that puts the
 * ids and times in (38 with the merge); the run boundaries, the order of
 * the indices and the bounds of the ids come from here, where they cost
 * a few instructions a call on a worker: the decode is 255 instructions
 * a call on churn (zstd's 37 in it), as before. */

/* A column's value into a call's field of width bytes (8, 4 or 1). */
static inline __attribute__((always_inline)) void put_w(char *to, uint64_t v, int width)
{
	if (width == 8) {
		memcpy(to, &v, 8);
	} else if (width == 4) {
		uint32_t x = (uint32_t)v;
		memcpy(to, &x, 4);
	} else {
		*(uint8_t *)to = (uint8_t)v;
	}
}

/* n varints of a column, into the fields of width bytes at to + k *
 * stride (cut to the width: *wide gets the bits of every value of more
 * than a byte, for the caller's check); false when the column ends
 * early or holds a bad varint. A varint's 8-byte load may reach past
 * its column (into the next one, or unzstd's zeroed slack after the
 * last): what the column ends inside of is found once, at the end, and
 * left to the join. */
static inline __attribute__((always_inline)) bool col_fill_w(const uint8_t **pp, const uint8_t *end, char *to,
							     size_t n, size_t stride, int width, uint64_t *wide)
{
	const uint8_t *p = *pp;
	uint64_t acc = 0;
	for (size_t k = 0; k < n;) {
		/* eight values of one byte each at once (ids, masks, most
		 * deltas: churn's function, resource, stack and context
		 * columns are all of them), else up to eight one by one */
		uint64_t w;
		if (k + 8 <= n && p + 8 <= end && !((w = load64(p)) & 0x8080808080808080ull)) {
#pragma GCC unroll 8
			for (int j = 0; j < 8; j++)
				put_w(to + (size_t)j * stride, (w >> (8 * j)) & 0xff, width);
			to += 8 * stride;
			p += 8;
			k += 8;
			continue;
		}
		for (size_t lim = k + 8 < n ? k + 8 : n; k < lim; k++, to += stride) {
			uint64_t v = p[0];
			int m = v < 0x80 ? 1 : rt_bin_varint8_get(p, &v);
			if (__builtin_expect(!m || p > end, 0))
				return false; /* over 8 bytes (or past the end): the join's */
			p += m;
			acc |= v;
			put_w(to, v, width);
		}
	}
	*pp = p;
	*wide = acc;
	return p <= end;
}

static bool col_fill(const uint8_t **pp, const uint8_t *end, char *to, size_t n, size_t stride)
{
	uint64_t wide;
	return col_fill_w(pp, end, to, n, stride, 8, &wide);
}

/* A column of ids into 32-bit fields: false when one is 2^32 or more
 * (the join keeps such a call as its row); *or: every id's bits. */
static bool col_fill32(const uint8_t **pp, const uint8_t *end, char *to, size_t n, size_t stride, uint32_t *or)
{
	uint64_t wide = 0;
	bool ok = col_fill_w(pp, end, to, n, stride, 4, &wide) && !(wide >> 32);
	*or = (uint32_t)wide | 0x7f; /* and those of one byte */
	return ok;
}

/* The address and stack columns (n varints each) into the calls' 8-byte
 * res_id and 4-byte bt fields, one value of each per step: a varint's
 * place is the end of the one before, so a column is one chain of loads,
 * and the two chains overlap where one column at a time waited on each
 * (python3: 2.6 and 1.8 bytes a call, the widest columns). false as
 * col_fill_w, or when a stack id is 2^32 or more; *bt_or: every id's
 * bits. */
static bool col_fill_addr_bt(const uint8_t **pa, const uint8_t *ea, const uint8_t **pb, const uint8_t *eb,
			     rt_call *c, size_t n, uint32_t *bt_or)
{
	const uint8_t *p = *pa, *q = *pb;
	uint64_t acc = 0;
	for (size_t k = 0; k < n; k++) {
		uint64_t v = p[0], u = q[0];
		int m = v < 0x80 ? 1 : rt_bin_varint8_get(p, &v);
		int l = u < 0x80 ? 1 : rt_bin_varint8_get(q, &u);
		if (__builtin_expect(!m || !l || p > ea || q > eb, 0))
			return false; /* over 8 bytes (or past the end): the join's */
		p += m;
		q += l;
		acc |= u;
		c[k].res_id = v;
		c[k].bt = (uint32_t)u;
	}
	*pa = p;
	*pb = q;
	*bt_or = (uint32_t)acc | 0x7f;
	return p <= ea && q <= eb && !(acc >> 32);
}

#define FIELD(c, f) ((char *)(c) + offsetof(rt_call, f))

/* What the column at a time path carries from one block of calls to
 * the next: the last allocation's address and the allocations so far
 * (the ring's ordinal), the last size, the last index, the row's place
 * and the next record's type and stack row. */
typedef struct fstate {
	uint64_t last_addr, size, index;
	uint32_t na;
	size_t pos, ti;
	const uint8_t *btrec;
	bool down; /* an index not above the one before, anywhere */
} fstate;

/* The addresses, as take_addr finds them, without a branch on the kind. */
static bool fast_addr(rt_bin_zc *z, rt_call *c, size_t n, fstate *st, bool *wide)
{
	uint64_t last = st->last_addr, bad = 0, lo = UINT64_MAX, hi = 0;
	uint32_t na = st->na;
	for (size_t k = 0; k < n; k++) {
		uint64_t v = c[k].res_id, back = v / 2, *slot = &z->ring[na % RING];
		bool is_free = c[k].kind == RT_TF_CALL_FREE, ref = is_free && !(v & 1), alloc = !is_free;
		uint64_t addr = last + (uint64_t)rt_unzigzag(is_free ? back : v);
		if (ref)
			bad |= (back - 1 >= RING) | (back > na);
		addr = ref ? z->ring[(na - (uint32_t)back) % RING] : addr;
		*slot = alloc ? addr : *slot;
		last = alloc ? addr : last;
		na += alloc;
		c[k].res_id = addr;
		lo = addr < lo ? addr : lo;
		hi |= addr;
	}
	st->last_addr = last;
	st->na = na;
	*wide = n && vlen(lo) != vlen(hi); /* the addresses' varints not all of one length */
	return !bad;
}

/* The allocations' sizes (the others' 0). */
static bool fast_size(rt_bin_zc *z, const uint8_t **pp, const uint8_t *end, rt_call *c, size_t n, size_t na,
		      fstate *st)
{
	if (z->scap < na + 1)
		rt_grow((void **)&z->sizes, &z->scap, na + 1, sizeof *z->sizes);
	if (!col_fill(pp, end, (char *)z->sizes, na, sizeof *z->sizes))
		return false;
	z->sizes[na] = 0;
	uint64_t size = st->size;
	for (size_t k = 0, j = 0; k < n; k++) {
		bool alloc = c[k].kind == RT_TF_CALL_ALLOC;
		size += alloc ? (uint64_t)rt_unzigzag(z->sizes[j]) : 0;
		c[k].size = alloc ? size : 0;
		j += alloc;
	}
	st->size = size;
	return true;
}

/* The unchanged columns (delta, fn, bt, ctx) whose values may take
 * more than a byte: wide's bits, in that order (the resource's is never
 * wide: a resource id is at most 32). */
enum { W_DT = 1, W_FN = 2, W_BT = 4, W_CTX = 8, W_IDX = 16, W_ADDR = 32 };

/* row_len less its type, kind and resource bytes and the one byte of
 * each unchanged column that is not wide: where every value of a column is
 * one byte (most are), its varint's length is no question, and the
 * table's look-ups were a tenth of the frame's decoding. */
static inline size_t row_len_wide(const rt_call *f, unsigned wide)
{
	return (wide & W_IDX ? vlen(f->index) : 0) + (wide & W_ADDR ? vlen(f->res_id) : 0) +
	       (f->kind == RT_TF_CALL_ALLOC ? vlen(f->size) : 0) +
	       (wide & W_DT ? vlen(f->timestamp_us) : 0) + (wide & W_FN ? vlen(f->fn) : 0) +
	       (wide & W_BT ? vlen(f->bt) : 0) + (wide & W_CTX ? vlen(f->context) : 0);
}

/* The bytes every call's row of the frame has whatever its values: its
 * type, kind and resource, one for each unchanged column that is not
 * wide, and the index's and the address's varints where they are of one
 * length for every call (the indices go up: the first's and the last's
 * lengths tell; the addresses: the least's and that of all their bits);
 * *wide gets W_IDX, W_ADDR where they are not. python3's frames: every
 * one, which takes two of the seven varint lengths a call off the walk. */
static size_t row_fixed(const rt_call *c, size_t nc, bool sorted, bool addr_wide, unsigned *wide)
{
	unsigned w = *wide;
	size_t fixed = 7 - (w & 1) - (w >> 1 & 1) - (w >> 2 & 1) - (w >> 3 & 1);
	if (nc && sorted && vlen(c[0].index) == vlen(c[nc - 1].index))
		fixed += vlen(c[0].index);
	else
		w |= W_IDX;
	if (nc && !addr_wide)
		fixed += vlen(c[0].res_id);
	else
		w |= W_ADDR;
	*wide = w;
	return fixed;
}

/* The records in order from type st->ti, up to and not including the
 * (m + 1)th CALL (all of them: m SIZE_MAX): the places of the block's m
 * calls c (cs->v + k0), the BT rows written at theirs; false when a row
 * does not fit the n bytes. fixed: the bytes every call's row of the
 * block has whatever its values (the columns not wide). */
static inline __attribute__((always_inline)) size_t run_places_w(const rt_call *c, uint32_t (*at)[2], size_t r,
								   size_t pos, size_t fixed, unsigned wide)
{
	for (size_t k = 0; k < r; k++) {
		at[k][0] = (uint32_t)pos;
		pos += fixed + row_len_wide(&c[k], wide);
		at[k][1] = (uint32_t)pos;
	}
	return pos;
}

/* The places of a run of r calls from pos: the loop made for the wide
 * columns the tracer's frames have (none; the stack ids; they and the
 * time deltas or the addresses), where it tested each flag for every
 * call (python3: a tenth of the frames' decoding). */
static size_t run_places(const rt_call *c, uint32_t (*at)[2], size_t r, size_t pos, size_t fixed, unsigned wide)
{
	switch (wide) {
	case 0: return run_places_w(c, at, r, pos, fixed, 0);
	case W_BT: return run_places_w(c, at, r, pos, fixed, W_BT);
	case W_BT | W_DT: return run_places_w(c, at, r, pos, fixed, W_BT | W_DT);
	case W_BT | W_ADDR: return run_places_w(c, at, r, pos, fixed, W_BT | W_ADDR);
	default: return run_places_w(c, at, r, pos, fixed, wide);
	}
}

static bool fast_walk(dec *d, const uint8_t *type, size_t nt, const uint8_t *bt_end, size_t n, fstate *st,
		      const rt_call *c, size_t m, unsigned wide, size_t fixed)
{
	rt_bin_zcalls *cs = d->calls;
	uint32_t(*at)[2] = cs->at + (c - cs->v);
	const rt_call *cend = m == SIZE_MAX ? c : c + m;
	size_t pos = st->pos, i = st->ti;
	const uint8_t *bt = st->btrec;
	while (i < nt) {
		if (type[i] == RT_REC_CALL) { /* a run of calls, up to the block's end */
			size_t r = 0, lim = (size_t)(cend - c) < nt - i ? (size_t)(cend - c) : nt - i;
			while (r + 8 <= lim && load64(type + i + r) == RT_REC_CALL * 0x0101010101010101ull)
				r += 8;
			while (r < lim && type[i + r] == RT_REC_CALL)
				r++;
			if (!r)
				break; /* the next block's */
			pos = run_places(c, at, r, pos, fixed, wide);
			c += r;
			at += r;
			i += r;
			continue;
		}
		const uint8_t *q = bt;
		if (!parse_bt(&q, bt_end) || pos > n || (size_t)(q - bt) >= n - pos)
			return false;
		uint32_t k = (uint32_t)(c - cs->v);
		if (k && (!cs->nruns || cs->runs[cs->nruns - 1] != k))
			RT_PUSH(cs->runs, cs->nruns, cs->cruns, k); /* a run ends before the row */
		d->base[pos] = RT_REC_BT;
		memcpy(d->base + pos + 1, bt, (size_t)(q - bt));
		pos += 1 + (size_t)(q - bt);
		bt = q;
		i++;
	}
	st->pos = pos;
	st->ti = i;
	st->btrec = bt;
	return true;
}

#define ONES 0x0101010101010101ull

/* The kinds, and the fields no column gives (args, and flags 0, in one
 * store with the kind: the resource byte between them comes after);
 * false on a kind other than 1 and 2. *na: the allocations. Eight
 * kinds at a time are checked and counted at once. */
static bool fast_kinds(rt_call *c, const uint8_t *kind, size_t nc, size_t *na)
{
	uint64_t bad = 0, a = 0;
	size_t k = 0;
	for (; k + 8 <= nc; k += 8) {
		uint64_t w = load64(kind + k);
		bad |= (w & 0xfcfcfcfcfcfcfcfcull) | (~(w | w >> 1) & ONES); /* a byte not 1 or 2 */
		a += (w & ONES) * ONES >> 56; /* the bytes' sum: no popcnt call (built without it) */
	}
	for (; k < nc; k++) {
		bad |= (uint8_t)(kind[k] - 1) > 1;
		a += kind[k] == RT_TF_CALL_ALLOC;
	}
	_Static_assert(offsetof(rt_call, res_type) == offsetof(rt_call, args) + 4 &&
		       offsetof(rt_call, kind) == offsetof(rt_call, args) + 5 &&
		       offsetof(rt_call, flags) == offsetof(rt_call, args) + 6 && sizeof(rt_call) >= offsetof(rt_call, args) + 8,
		       "args, res_type, kind and flags in 8 bytes");
	for (k = 0; k < nc; k++) {
		uint64_t w = 0xffffffffull | (uint64_t)kind[k] << 40; /* args RT_NONE, res 0, kind, flags 0 */
		memcpy((char *)&c[k] + offsetof(rt_call, args), &w, 8);
	}
	*na = (size_t)a;
	return !bad;
}

/* The records' types: how many CALLs, false on a type other than CALL
 * and BT; eight at a time where they are all CALLs. */
static bool fast_types(const uint8_t *type, size_t nt, size_t *nc)
{
	size_t i = 0, n = 0;
	unsigned bad = 0;
	for (; i + 8 <= nt; i += 8) {
		if (load64(type + i) == RT_REC_CALL * ONES) {
			n += 8;
			continue;
		}
		for (size_t j = i; j < i + 8; j++) {
			n += type[j] == RT_REC_CALL;
			bad |= type[j] != RT_REC_CALL && type[j] != RT_REC_BT;
		}
	}
	for (; i < nt; i++) {
		n += type[i] == RT_REC_CALL;
		bad |= type[i] != RT_REC_CALL && type[i] != RT_REC_BT;
	}
	*nc = n;
	return !bad;
}

/* The indices from their deltas (*down: one is not above the one
 * before, within the block; st->down: anywhere); the resource ids
 * checked (1 to 32). first: the block starts the frame. */
static bool fast_index(rt_call *c, size_t nc, fstate *st, bool first, bool *down_here)
{
	uint64_t index = st->index;
	unsigned bad = 0, down = 0;
	for (size_t k = 0; k < nc; k++) {
		int64_t d = rt_unzigzag(c[k].index);
		uint64_t next = index + (uint64_t)d + 1;
		down |= (k > 0 || !first) & ((d < 0) | (next <= index)); /* not above the one before */
		c[k].index = index = next;
		bad |= (uint8_t)(c[k].res_type - 1) >= RT_TF_MAX_RES;
	}
	st->index = index;
	st->down |= down;
	*down_here = down;
	return !bad;
}

/* One block of a frame's calls (c, m of them, from call k0), column
 * by column, then their places among the records. */
static bool fast_block(rt_bin_zc *z, dec *d, const uint8_t **p, fstate *st, rt_call *c, size_t m, size_t k0,
		       size_t nt, size_t n)
{
	const uint8_t *const *end = d->end;
	rt_bin_zcalls *cs = d->calls;
	bool addr_wide = false, down;
	size_t na = 0;
	uint64_t w;
	uint32_t fn_or, bt_or, ctx_or;
	const uint8_t *from[4] = {p[C_DT], p[C_FN], p[C_BT], p[C_CTX]}, *res = p[C_RES];
	if (!fast_kinds(c, d->p[C_KIND] + k0, m, &na) || !col_fill(&p[C_IDX], end[C_IDX], FIELD(c, index), m, sizeof *c) ||
	    !col_fill_addr_bt(&p[C_ADDR], end[C_ADDR], &p[C_BT], end[C_BT], c, m, &bt_or) ||
	    !fast_addr(z, c, m, st, &addr_wide) || !fast_size(z, &p[C_SIZE], end[C_SIZE], c, m, na, st))
		return false;
	if (!col_fill(&p[C_DT], end[C_DT], FIELD(c, timestamp_us), m, sizeof *c) ||
	    !col_fill32(&p[C_FN], end[C_FN], FIELD(c, fn), m, sizeof *c, &fn_or) ||
	    !col_fill_w(&p[C_RES], end[C_RES], FIELD(c, res_type), m, sizeof *c, 1, &w) ||
	    (size_t)(p[C_RES] - res) != m ||
	    !col_fill32(&p[C_CTX], end[C_CTX], FIELD(c, context), m, sizeof *c, &ctx_or) ||
	    !fast_index(c, m, st, k0 == 0, &down))
		return false;
	cs->fn_or |= fn_or;
	cs->bt_or |= bt_or;
	static const int same[4] = {C_DT, C_FN, C_BT, C_CTX};
	unsigned wide = 0;
	for (int i = 0; i < 4; i++) /* a value of more than a byte */
		wide |= (unsigned)((size_t)(p[same[i]] - from[i]) != m) << i;
	size_t fixed = row_fixed(c, m, !down, addr_wide, &wide);
	return fast_walk(d, d->p[C_TYPE], nt, end[C_BTREC], n, st, c, m, wide, fixed);
}

/* A frame of CALLs (kinds 1 and 2) and BTs, column by column, into
 * model calls (bin_zchunk.h), FAST_BLOCK calls at a time: every column
 * of a block is filled while its calls are in the cache (python3's
 * frames hold ~40,000 calls, 2.2 MB of rt_calls, which eleven passes
 * over the whole frame read and wrote again from the L3 cache); false
 * (d->calls->n 0) leaves it to the join. */
#define FAST_BLOCK 512
static bool fast(rt_bin_zc *z, dec *d, size_t n)
{
	const uint8_t *p[NCOL], *type = d->p[C_TYPE];
	memcpy(p, d->p, sizeof p);
	size_t nt = (size_t)(d->end[C_TYPE] - type), nc = 0;
	if (!fast_types(type, nt, &nc) || (size_t)(d->end[C_KIND] - d->p[C_KIND]) < nc || nc > (uint32_t)-1)
		return false;
	rt_bin_zcalls *cs = d->calls;
	calls_room(cs, nc + 1); /* not NULL for a frame without calls */
	cs->fn_or = cs->bt_or = 0;
	cs->nruns = 0;
	fstate st = {.btrec = p[C_BTREC]};
	for (size_t k = 0; k < nc; k += FAST_BLOCK) {
		size_t m = nc - k < FAST_BLOCK ? nc - k : FAST_BLOCK;
		if (!fast_block(z, d, p, &st, cs->v + k, m, k, nt, n))
			return false;
	}
	/* the BT rows after the last call */
	if (!fast_walk(d, type, nt, d->end[C_BTREC], n, &st, cs->v + nc, SIZE_MAX, 0, 0) || st.pos != n)
		return false;
	uint32_t k = (uint32_t)nc;
	if (!cs->nruns || cs->runs[cs->nruns - 1] != k) /* BT rows after the last call: ended */
		RT_PUSH(cs->runs, cs->nruns, cs->cruns, k);
	cs->sorted = !st.down;
	cs->fn_or |= 0x7f; /* and those of one byte (col_fill32's) */
	cs->bt_or |= 0x7f;
	cs->n = nc;
	return true;
}

/* The columns' lengths, then the columns. */
static bool cut_columns(dec *d, const uint8_t *p, const uint8_t *end)
{
	uint64_t len[NCOL];
	for (int i = 0; i < NCOL; i++) {
		int n = rt_varint_get(p, end, &len[i]);
		if (n <= 0)
			return fail(d, "the frame's column lengths are cut short");
		p += n;
	}
	for (int i = 0; i < NCOL; i++) {
		if (len[i] > (uint64_t)(end - p))
			return fail(d, "a column runs past the end of the frame");
		d->p[i] = p;
		d->end[i] = p += len[i];
	}
	if (p != end)
		return fail(d, "the frame holds bytes after its columns");
	return true;
}

/* zstd's frame into z->buf: false when it is not one frame of at most
 * cap bytes. */
static bool unzstd(rt_bin_zc *z, dec *d, const uint8_t *src, size_t len, size_t cap, size_t *n)
{
	unsigned long long size = ZSTD_getFrameContentSize(src, len);
	if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
		return fail(d, "expected a zstd frame with its content size");
	if (size > cap)
		return fail(d, "the zstd frame holds more than a chunk's coding can");
	if (size + ZSLACK > z->bcap)
		rt_grow((void **)&z->buf, &z->bcap, (size_t)size + ZSLACK, 1);
	memset(z->buf + size, 0, ZSLACK); /* col_fill's loads past the last column */
	size_t r = ZSTD_decompressDCtx(z->d, z->buf, (size_t)size, src, len);
	if (ZSTD_isError(r) || r != size) {
		snprintf(d->why, d->whylen, "zstd: %s", ZSTD_isError(r) ? ZSTD_getErrorName(r) : "short frame");
		return false;
	}
	*n = r;
	return true;
}

/* The frame's runs and what the reader's loop may take for granted
 * (bin_zchunk.h), in one pass over its calls. */
static void summarize(rt_bin_zcalls *c)
{
	uint32_t fn_or = 0, bt_or = 0;
	unsigned down = 0;
	c->nruns = 0;
	for (size_t k = 0; k < c->n; k++) {
		fn_or |= c->v[k].fn;
		bt_or |= c->v[k].bt;
		if (k && c->at[k][0] != c->at[k - 1][1])
			RT_PUSH(c->runs, c->nruns, c->cruns, (uint32_t)k);
		down |= k && c->v[k].index <= c->v[k - 1].index;
	}
	RT_PUSH(c->runs, c->nruns, c->cruns, (uint32_t)c->n);
	c->sorted = !down;
	c->fn_or = fn_or;
	c->bt_or = bt_or;
}

/* Both decoders: calls NULL, rows only. */
static bool decode(rt_bin_zc *z, const uint8_t *src, size_t len, uint32_t coding, uint8_t *dst, size_t n,
		   rt_bin_zcalls *calls, char *why, size_t whylen)
{
	dec d = {.o = dst, .oend = dst + n + RT_BIN_ZC_SLACK, .base = dst, .calls = calls, .why = why, .whylen = whylen};
	size_t got;
	uint32_t c = coding & RT_TF_ZCODING_MASK;
	if (calls)
		calls->n = calls->nruns = 0;
	if (c == RT_TF_ZCODING_ZSTD) {
		if (!unzstd(z, &d, src, len, n, &got))
			return false;
		if (got != n)
			return fail(&d, "the frame decodes to fewer bytes than its chunk header's used");
		memcpy(dst, z->buf, n);
		return true;
	}
	if (c != RT_TF_ZCODING_COLUMNS)
		return fail(&d, "expected coding 0 (zstd) or 1 (columns) (written by a newer rtrace?)");
	if (!unzstd(z, &d, src, len, MAX_COLS(n) + NCOL * RT_VARINT_MAX, &got) ||
	    !cut_columns(&d, z->buf, z->buf + got))
		return false;
	if (calls && !z->exact && fast(z, &d, n))
		return ++z->fast_frames;
	if (!join(z, &d))
		return false;
	if (d.o != dst + n)
		return fail(&d, d.o < dst + n ? "the frame decodes to fewer bytes than its chunk header's used"
					      : "the frame decodes to more bytes than its chunk header's used");
	if (calls)
		summarize(calls);
	return true;
}

void rt_bin_zcalls_free(rt_bin_zcalls *c)
{
	free(c->v);
	free(c->at);
	free(c->runs);
	*c = (rt_bin_zcalls){0};
}

void rt_bin_zc_set_exact(rt_bin_zc *z, bool exact)
{
	z->exact = exact;
}

uint8_t *rt_bin_zc_raw(rt_bin_zc *z, size_t n)
{
	if (n > z->rawcap)
		rt_grow((void **)&z->raw, &z->rawcap, n, 1);
	return z->raw;
}

uint64_t rt_bin_zc_fast_frames(const rt_bin_zc *z)
{
	return z->fast_frames;
}

bool rt_bin_zc_decode(rt_bin_zc *z, const uint8_t *src, size_t len, uint32_t coding, uint8_t *dst,
		      size_t n, char *why, size_t whylen)
{
	return decode(z, src, len, coding, dst, n, NULL, why, whylen);
}

bool rt_bin_zc_decode_calls(rt_bin_zc *z, const uint8_t *src, size_t len, uint32_t coding, uint8_t *dst,
			    size_t n, rt_bin_zcalls *calls, char *why, size_t whylen)
{
	return decode(z, src, len, coding, dst, n, calls, why, whylen);
}
