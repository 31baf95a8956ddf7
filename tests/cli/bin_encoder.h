/* A small encoder of the binary trace format (docs/binary-format.md) for
 * the tests: written from the spec, sharing no code with the reader, and
 * laying chunks out as the tracer does (a thread takes the next chunk of
 * the file when its record does not fit in its current one).
 * Used by tests/unit/test_bin_read.c and tests/cli/gen_bin_trace.c. */
#ifndef RT_TEST_BIN_ENCODER_H
#define RT_TEST_BIN_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growable byte buffer. */
typedef struct benc {
	uint8_t *b;
	size_t len, cap;
} benc;

static inline void be_bytes(benc *e, const void *p, size_t n)
{
	if (e->len + n > e->cap) {
		e->cap = (e->len + n) * 2 + 64;
		e->b = realloc(e->b, e->cap);
		if (!e->b)
			abort();
	}
	if (n)
		memcpy(e->b + e->len, p, n);
	e->len += n;
}

static inline void be_u8(benc *e, uint8_t v) { be_bytes(e, &v, 1); }

static inline void be_u32(benc *e, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		be_u8(e, (uint8_t)(v >> (8 * i)));
}

static inline void be_u64(benc *e, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		be_u8(e, (uint8_t)(v >> (8 * i)));
}

static inline void be_var(benc *e, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		be_u8(e, (uint8_t)(b | (v ? 0x80 : 0)));
	} while (v);
}

static inline void be_svar(benc *e, int64_t v)
{
	be_var(e, v < 0 ? ((uint64_t)(-(v + 1)) << 1) | 1 : (uint64_t)v << 1);
}

static inline void be_str(benc *e, const char *s)
{
	be_var(e, strlen(s));
	be_bytes(e, s, strlen(s));
}

static inline void be_free(benc *e)
{
	free(e->b);
	memset(e, 0, sizeof *e);
}

/* Little-endian stores into a finished buffer. */
static inline void be_set32(benc *e, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		e->b[at + i] = (uint8_t)(v >> (8 * i));
}

static inline void be_set64(benc *e, size_t at, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		e->b[at + i] = (uint8_t)(v >> (8 * i));
}

/* A trace file: the file header, then chunks of chunk_size bytes. */
typedef struct bfile {
	benc f;
	uint32_t chunk_size;
	size_t last_len; /* length of the record placed last */
} bfile;

/* A writing thread: its current chunk (an offset in the file). */
typedef struct bthread {
	uint32_t tid, seq;
	size_t chunk;
	bool has_chunk;
} bthread;

static inline void bf_init(bfile *bf, uint32_t chunk_size, uint64_t pid)
{
	memset(bf, 0, sizeof *bf);
	bf->chunk_size = chunk_size;
	be_bytes(&bf->f, "RTRACE\0\1", 8);
	be_u32(&bf->f, 64);
	be_u32(&bf->f, chunk_size);
	be_u64(&bf->f, 0); /* data_end: 0 until a clean exit */
	be_u64(&bf->f, pid);
	be_u64(&bf->f, 0); /* stop_index (format 1.3) */
	be_u32(&bf->f, 0); /* stop_reason: 0, tracing did not stop */
	be_u32(&bf->f, 0); /* stop_errno */
	for (int i = 0; i < 16; i++)
		be_u8(&bf->f, 0);
}

/* The tracer stopped at call `at` (format 1.3): reason, errno. */
static inline void bf_stopped(bfile *bf, uint64_t at, uint32_t reason, uint32_t err)
{
	be_set64(&bf->f, 32, at);
	be_set32(&bf->f, 40, reason);
	be_set32(&bf->f, 44, err);
}

static inline bthread bf_thread(uint32_t tid)
{
	bthread t = {tid, 0, 0, false};
	return t;
}

/* Takes the next chunk of the file for t, zero-filled, header written. */
static inline void bf_new_chunk(bfile *bf, bthread *t)
{
	if (t->has_chunk)
		t->seq++;
	t->chunk = bf->f.len;
	t->has_chunk = true;
	be_bytes(&bf->f, "RTCK", 4);
	be_u32(&bf->f, 0);
	be_u32(&bf->f, t->tid);
	be_u32(&bf->f, t->seq);
	size_t room = bf->chunk_size - 16;
	uint8_t zero[256] = {0};
	for (; room > sizeof zero; room -= sizeof zero)
		be_bytes(&bf->f, zero, sizeof zero);
	be_bytes(&bf->f, zero, room);
}

static inline uint32_t bf_used(const bfile *bf, const bthread *t)
{
	const uint8_t *p = bf->f.b + t->chunk + 4;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Appends a record to t's chunk (a new one when it does not fit) and
 * updates the chunk's used bytes. Returns the record's file offset. */
static inline size_t bf_put(bfile *bf, bthread *t, const benc *rec)
{
	if (rec->len > bf->chunk_size - 16)
		abort();
	if (!t->has_chunk || bf_used(bf, t) + rec->len > bf->chunk_size - 16)
		bf_new_chunk(bf, t);
	uint32_t used = bf_used(bf, t);
	size_t at = t->chunk + 16 + used;
	memcpy(bf->f.b + at, rec->b, rec->len);
	be_set32(&bf->f, t->chunk + 4, used + (uint32_t)rec->len);
	bf->last_len = rec->len;
	return at;
}

/* A clean exit: data_end says where the chunks end. */
static inline void bf_finish(bfile *bf)
{
	be_set64(&bf->f, 16, bf->f.len);
}

/* --- records: each built in a scratch buffer, then placed --- */

static inline size_t enc_put(bfile *bf, bthread *t, benc *r)
{
	size_t at = bf_put(bf, t, r);
	be_free(r);
	return at;
}

static inline size_t enc_process(bfile *bf, bthread *t, uint64_t pid, uint64_t ppid,
				 uint64_t sec, uint64_t nsec, const char *arch,
				 const char *proc, const char *cmdline, uint64_t depth,
				 uint64_t flags)
{
	benc r = {0};
	be_u8(&r, 1);
	be_var(&r, pid);
	be_var(&r, ppid);
	be_var(&r, sec);
	be_var(&r, nsec);
	be_str(&r, arch);
	be_str(&r, proc);
	be_str(&r, cmdline);
	be_var(&r, depth);
	be_var(&r, flags);
	return enc_put(bf, t, &r);
}

static inline size_t enc_module(bfile *bf, bthread *t, uint64_t start, uint64_t end,
				uint64_t offset, const char *path)
{
	benc r = {0};
	be_u8(&r, 2);
	be_var(&r, start);
	be_var(&r, end);
	be_var(&r, offset);
	be_str(&r, path);
	return enc_put(bf, t, &r);
}

static inline size_t enc_maps(bfile *bf, bthread *t, uint64_t generation)
{
	benc r = {0};
	be_u8(&r, 3);
	be_var(&r, generation);
	return enc_put(bf, t, &r);
}

static inline size_t enc_resource(bfile *bf, bthread *t, uint64_t id, const char *type,
				  const char *desc, uint64_t flags)
{
	benc r = {0};
	be_u8(&r, 4);
	be_var(&r, id);
	be_str(&r, type);
	be_str(&r, desc);
	be_var(&r, flags);
	return enc_put(bf, t, &r);
}

static inline size_t enc_function(bfile *bf, bthread *t, uint64_t id, const char *name)
{
	benc r = {0};
	be_u8(&r, 5);
	be_var(&r, id);
	be_str(&r, name);
	return enc_put(bf, t, &r);
}

static inline size_t enc_context(bfile *bf, bthread *t, uint64_t id, const char *name)
{
	benc r = {0};
	be_u8(&r, 6);
	be_var(&r, id);
	be_str(&r, name);
	return enc_put(bf, t, &r);
}

/* frames: the return addresses themselves; the record holds deltas. */
static inline size_t enc_bt(bfile *bf, bthread *t, uint64_t id, uint32_t n,
			    const uint64_t *frames)
{
	benc r = {0};
	be_u8(&r, 7);
	be_var(&r, id);
	be_var(&r, n);
	uint64_t prev = 0;
	for (uint32_t i = 0; i < n; i++) {
		be_svar(&r, (int64_t)(frames[i] - prev));
		prev = frames[i];
	}
	return enc_put(bf, t, &r);
}

/* The fields of a CALL, after the record type. */
static inline void be_call_fields(benc *r, uint64_t index, uint64_t delta_ns, uint8_t kind,
				  uint64_t fn, uint64_t res, uint64_t res_id, uint64_t size,
				  uint64_t bt, uint64_t ctx)
{
	be_var(r, index);
	be_var(r, delta_ns);
	be_u8(r, kind);
	be_var(r, fn);
	be_var(r, res);
	be_var(r, res_id);
	if (kind == 1)
		be_var(r, size);
	be_var(r, bt);
	be_var(r, ctx);
}

static inline size_t enc_call(bfile *bf, bthread *t, uint64_t index, uint64_t delta_ns,
			      uint8_t kind, uint64_t fn, uint64_t res, uint64_t res_id,
			      uint64_t size, uint64_t bt, uint64_t ctx)
{
	benc r = {0};
	be_u8(&r, 8);
	be_call_fields(&r, index, delta_ns, kind, fn, res, res_id, size, bt, ctx);
	return enc_put(bf, t, &r);
}

/* CALLA (format 1.2): a CALL, then the argument count n, then npairs
 * (name, value) pairs from kv[0..2 * npairs - 1]. n is npairs in a valid
 * record; another count makes a malformed one. */
static inline size_t enc_calla_n(bfile *bf, bthread *t, uint64_t index, uint64_t delta_ns,
				 uint8_t kind, uint64_t fn, uint64_t res, uint64_t res_id,
				 uint64_t size, uint64_t bt, uint64_t ctx, uint64_t n,
				 uint32_t npairs, const char *const *kv)
{
	benc r = {0};
	be_u8(&r, 14);
	be_call_fields(&r, index, delta_ns, kind, fn, res, res_id, size, bt, ctx);
	be_var(&r, n);
	for (uint32_t i = 0; i < 2 * npairs; i++)
		be_str(&r, kv[i]);
	return enc_put(bf, t, &r);
}

static inline size_t enc_calla(bfile *bf, bthread *t, uint64_t index, uint64_t delta_ns,
			       uint8_t kind, uint64_t fn, uint64_t res, uint64_t res_id,
			       uint64_t size, uint64_t bt, uint64_t ctx, uint32_t nargs,
			       const char *const *kv)
{
	return enc_calla_n(bf, t, index, delta_ns, kind, fn, res, res_id, size, bt, ctx, nargs,
			   nargs, kv);
}

static inline size_t enc_end(bfile *bf, bthread *t, uint64_t calls)
{
	benc r = {0};
	be_u8(&r, 9);
	be_var(&r, calls);
	return enc_put(bf, t, &r);
}

static inline size_t enc_message(bfile *bf, bthread *t, const char *text)
{
	benc r = {0};
	be_u8(&r, 10);
	be_str(&r, text);
	return enc_put(bf, t, &r);
}

/* LEAK (format 1.1): the leak check's verdict on one block. */
static inline size_t enc_leak(bfile *bf, bthread *t, uint64_t index, uint64_t addr, uint64_t size,
			      uint8_t kind, uint8_t heuristic, uint64_t fn, uint64_t bt,
			      uint64_t indirect)
{
	benc r = {0};
	be_u8(&r, 11);
	be_var(&r, index);
	be_var(&r, addr);
	be_var(&r, size);
	be_u8(&r, kind);
	be_u8(&r, heuristic);
	be_var(&r, fn);
	be_var(&r, bt);
	be_var(&r, indirect);
	return enc_put(bf, t, &r);
}

/* LEAKSUM: mode, (bytes, blocks) for the 4 kinds and the 4 heuristics
 * (v[0..15]), blocks checked, microseconds. */
static inline size_t enc_leaksum(bfile *bf, bthread *t, uint8_t mode, const uint64_t v[16],
				 uint64_t checked, uint64_t us)
{
	benc r = {0};
	be_u8(&r, 12);
	be_u8(&r, mode);
	for (int i = 0; i < 16; i++)
		be_var(&r, v[i]);
	be_var(&r, checked);
	be_var(&r, us);
	return enc_put(bf, t, &r);
}

/* CHECK (format 1.4): number, index, mode, blocks checked, microseconds,
 * then bytes and blocks per kind 1-4 (v[8]). */
static inline size_t enc_check(bfile *bf, bthread *t, uint64_t number, uint64_t index, uint8_t mode,
			       uint64_t checked, uint64_t us, const uint64_t v[8])
{
	benc r = {0};
	be_u8(&r, 15);
	be_var(&r, number);
	be_var(&r, index);
	be_u8(&r, mode);
	be_var(&r, checked);
	be_var(&r, us);
	for (int i = 0; i < 8; i++)
		be_var(&r, v[i]);
	return enc_put(bf, t, &r);
}

/* CHECKLOSS (format 1.4): number, kind, fn, bt, bytes, blocks, indirect. */
static inline size_t enc_checkloss(bfile *bf, bthread *t, uint64_t number, uint8_t kind, uint64_t fn,
				   uint64_t bt, uint64_t bytes, uint64_t blocks, uint64_t indirect)
{
	benc r = {0};
	be_u8(&r, 16);
	be_var(&r, number);
	be_u8(&r, kind);
	be_var(&r, fn);
	be_var(&r, bt);
	be_var(&r, bytes);
	be_var(&r, blocks);
	be_var(&r, indirect);
	return enc_put(bf, t, &r);
}

/* HEAPERR: kind, index, fn, addr, bt, block state, block addr and size,
 * then the ids of the allocating fn and bt and the freeing fn and bt. */
static inline size_t enc_heaperr(bfile *bf, bthread *t, uint8_t kind, uint64_t index, uint64_t fn,
				 uint64_t addr, uint64_t bt, uint8_t block, uint64_t baddr,
				 uint64_t bsize, const uint64_t ids[4])
{
	benc r = {0};
	be_u8(&r, 13);
	be_u8(&r, kind);
	be_var(&r, index);
	be_var(&r, fn);
	be_var(&r, addr);
	be_var(&r, bt);
	be_u8(&r, block);
	be_var(&r, baddr);
	be_var(&r, bsize);
	for (int i = 0; i < 4; i++)
		be_var(&r, ids[i]);
	return enc_put(bf, t, &r);
}

/* Raw bytes as one "record" (for malformed input). */
static inline size_t enc_raw(bfile *bf, bthread *t, const void *p, size_t n)
{
	benc r = {0};
	be_bytes(&r, p, n);
	return enc_put(bf, t, &r);
}

static inline int bf_write(const bfile *bf, const char *path)
{
	FILE *fp = fopen(path, "wb");
	if (!fp)
		return -1;
	size_t n = fwrite(bf->f.b, 1, bf->f.len, fp);
	return fclose(fp) || n != bf->f.len ? -1 : 0;
}

#endif
