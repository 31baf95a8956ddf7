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
 * chunk goes into the tail column as it was. */
#include "bin_zchunk.h"
#include "bin_varint.h"
#include "format/trace_format.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

enum { C_TYPE, C_IDX, C_DT, C_KIND, C_FN, C_RES, C_ADDR, C_SIZE, C_BT, C_CTX, C_ARGS, C_BTREC, C_TAIL, NCOL };
#define RING 4096u         /* allocated addresses a release can refer to */
#define HASH (2 * RING)    /* address -> allocation ordinal, per chunk */
#define MAX_COLS(n) (2 * (n) + 1024) /* a longer column coding is not used */

typedef struct col {
	uint8_t *p;
	size_t n, cap;
} col;

typedef struct hslot {
	uint64_t addr;
	uint32_t ord, gen;
} hslot;

struct rt_bin_zc {
	ZSTD_CCtx *c;
	ZSTD_DCtx *d;
	col col[NCOL];
	uint8_t *buf, *out;
	size_t bcap, ocap;
	uint64_t ring[RING];
	hslot hash[HASH];
	uint32_t gen;
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
	free(z);
}
/* --- the column coding's state, the same on both sides --- */

typedef struct cstate {
	uint64_t index, alloc_addr, size;
	uint32_t nalloc;
} cstate;

static void col_put(col *c, const void *p, size_t n)
{
	memcpy(c->p + c->n, p, n);
	c->n += n;
}

/* Columns have room for what a chunk of n bytes can put in them (split
 * reserves 2n): a record is 9 bytes at least and puts at most 10 in
 * each column. */
static inline void col_v(col *c, uint64_t v)
{
	c->n = (size_t)(rt_put_varint(c->p + c->n, v) - c->p);
}

static inline void col_u8(col *c, uint8_t v) { c->p[c->n++] = v; }

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

static hslot *hash_slot(rt_bin_zc *z, uint64_t addr)
{
	for (size_t i = rt_mix64(addr) & (HASH - 1);; i = (i + 1) & (HASH - 1))
		if (z->hash[i].gen != z->gen || z->hash[i].addr == addr)
			return &z->hash[i];
}

/* A release's address: 2d when it is the d-th last address allocated in
 * the chunk (d <= RING), else 1 + 2 * zigzag(its distance to the last). */
static void put_addr(rt_bin_zc *z, cstate *s, const call_f *f)
{
	col *c = &z->col[C_ADDR];
	if (f->kind == RT_TF_CALL_FREE) {
		hslot *h = hash_slot(z, f->addr);
		if (h->gen == z->gen && h->ord < s->nalloc && s->nalloc - h->ord <= RING &&
		    z->ring[h->ord % RING] == f->addr)
			return col_v(c, 2 * (uint64_t)(s->nalloc - h->ord));
		return col_v(c, 1 + 2 * rt_zigzag((int64_t)(f->addr - s->alloc_addr)));
	}
	col_v(c, rt_zigzag((int64_t)(f->addr - s->alloc_addr)));
	if (f->kind != RT_TF_CALL_ALLOC)
		return;
	if (s->nalloc && s->nalloc % (HASH / 2) == 0) { /* half full: start over */
		memset(z->hash, 0, sizeof z->hash);
		z->gen = 1;
	}
	*hash_slot(z, f->addr) = (hslot){f->addr, s->nalloc, z->gen};
	z->ring[s->nalloc++ % RING] = f->addr;
	s->alloc_addr = f->addr;
}

static void put_call(rt_bin_zc *z, cstate *s, uint8_t type, const call_f *f)
{
	col_u8(&z->col[C_TYPE], type);
	col_v(&z->col[C_IDX], rt_zigzag((int64_t)(f->index - s->index - 1)));
	s->index = f->index;
	col_v(&z->col[C_DT], f->dt);
	col_u8(&z->col[C_KIND], f->kind);
	col_v(&z->col[C_FN], f->fn);
	col_v(&z->col[C_RES], f->res);
	put_addr(z, s, f);
	if (f->kind == RT_TF_CALL_ALLOC) {
		col_v(&z->col[C_SIZE], rt_zigzag((int64_t)(f->size - s->size)));
		s->size = f->size;
	}
	col_v(&z->col[C_BT], f->bt);
	col_v(&z->col[C_CTX], f->ctx);
	if (type == RT_REC_CALLA)
		col_put(&z->col[C_ARGS], f->args, (size_t)(f->args_end - f->args));
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

/* The records into the columns; whatever they cannot hold goes to the
 * tail after a type byte 0. */
static void split(rt_bin_zc *z, const uint8_t *p, const uint8_t *end)
{
	cstate s = {0};
	call_f f;
	if (++z->gen == 0)
		memset(z->hash, 0, sizeof z->hash), z->gen = 1;
	for (int i = 0; i < NCOL; i++) {
		z->col[i].n = 0;
		if (z->col[i].cap < 2 * (size_t)(end - p) + 16)
			rt_grow((void **)&z->col[i].p, &z->col[i].cap, 2 * (size_t)(end - p) + 16, 1);
	}
	while (p < end) {
		const uint8_t *q = p + 1;
		if ((*p == RT_REC_CALL || *p == RT_REC_CALLA) && parse_call(&q, end, *p == RT_REC_CALLA, &f) &&
		    rt_zigzag((int64_t)(f.addr - s.alloc_addr)) >> 62 == 0) { /* 1 + 2 zigzag fits */
			put_call(z, &s, *p, &f);
		} else if (*p == RT_REC_BT && parse_bt(&q, end)) {
			col_u8(&z->col[C_TYPE], RT_REC_BT);
			col_put(&z->col[C_BTREC], p + 1, (size_t)(q - p - 1));
		} else {
			col_u8(&z->col[C_TYPE], 0);
			col_put(&z->col[C_TAIL], p, (size_t)(end - p));
			return;
		}
		p = q;
	}
}

static const uint8_t *zstd_to_out(rt_bin_zc *z, const uint8_t *src, size_t n, int level, size_t *len)
{
	size_t bound = ZSTD_compressBound(n);
	if (bound > z->ocap)
		rt_grow((void **)&z->out, &z->ocap, bound, 1);
	ZSTD_CCtx_reset(z->c, ZSTD_reset_session_and_parameters);
	ZSTD_CCtx_setParameter(z->c, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(z->c, ZSTD_c_checksumFlag, 1);
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

typedef struct dec {
	const uint8_t *p[NCOL], *end[NCOL];
	uint8_t *o, *oend;
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

/* A CALL or CALLA record back from the columns. */
static bool join_call(rt_bin_zc *z, dec *d, cstate *s, uint8_t type)
{
	uint64_t di, dt, fn, res, addr, ds = 0, bt, ctx;
	if (d->p[C_KIND] >= d->end[C_KIND])
		return fail(d, "the kind column ends early");
	uint8_t kind = *d->p[C_KIND]++;
	if (!take_v(d, C_IDX, &di) || !take_v(d, C_DT, &dt) || !take_v(d, C_FN, &fn) ||
	    !take_v(d, C_RES, &res) || !take_addr(z, d, s, kind, &addr) ||
	    (kind == RT_TF_CALL_ALLOC && !take_v(d, C_SIZE, &ds)) || !take_v(d, C_BT, &bt) ||
	    !take_v(d, C_CTX, &ctx))
		return false;
	s->index += (uint64_t)rt_unzigzag(di) + 1;
	s->size += (uint64_t)rt_unzigzag(ds);
	if (d->oend - d->o < 2 + 8 * RT_VARINT_MAX + 8)
		return fail(d, "the frame decodes to more bytes than its chunk header's used");
	*d->o++ = type;
	put_v(d, s->index);
	put_v(d, dt);
	*d->o++ = kind;
	put_v(d, fn);
	put_v(d, res);
	put_v(d, addr);
	if (kind == RT_TF_CALL_ALLOC)
		put_v(d, s->size);
	put_v(d, bt);
	put_v(d, ctx);
	if (type != RT_REC_CALLA)
		return true;
	const uint8_t *a = d->p[C_ARGS];
	if (!parse_args(&a, d->end[C_ARGS]))
		return fail(d, "the arguments column ends early");
	bool ok = emit(d, d->p[C_ARGS], (size_t)(a - d->p[C_ARGS]));
	d->p[C_ARGS] = a;
	return ok;
}

static bool join(rt_bin_zc *z, dec *d)
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
			if (!emit(d, d->p[C_TAIL], (size_t)(d->end[C_TAIL] - d->p[C_TAIL])))
				return false;
			d->p[C_TAIL] = d->end[C_TAIL];
		} else {
			return fail(d, "the type column holds a type the coding has no columns for");
		}
	}
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
	if (size + 1 > z->bcap)
		rt_grow((void **)&z->buf, &z->bcap, (size_t)size + 1, 1);
	size_t r = ZSTD_decompressDCtx(z->d, z->buf, (size_t)size, src, len);
	if (ZSTD_isError(r) || r != size) {
		snprintf(d->why, d->whylen, "zstd: %s", ZSTD_isError(r) ? ZSTD_getErrorName(r) : "short frame");
		return false;
	}
	*n = r;
	return true;
}

bool rt_bin_zc_decode(rt_bin_zc *z, const uint8_t *src, size_t len, uint32_t coding, uint8_t *dst,
		      size_t n, char *why, size_t whylen)
{
	dec d = {.o = dst, .oend = dst + n + RT_BIN_ZC_SLACK, .why = why, .whylen = whylen};
	size_t got;
	uint32_t c = coding & RT_TF_ZCODING_MASK;
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
	    !cut_columns(&d, z->buf, z->buf + got) || !join(z, &d))
		return false;
	if (d.o != dst + n)
		return fail(&d, d.o < dst + n ? "the frame decodes to fewer bytes than its chunk header's used"
					      : "the frame decodes to more bytes than its chunk header's used");
	return true;
}
