/* Reader for the rtrace binary trace format (docs/binary-format.md).
 *
 * A trace is a file header and fixed-size chunks, each owned by one thread
 * and holding that thread's records. Calls carry a global index and the
 * model wants them in index order (the leak filter depends on it), so the
 * reader merges the threads' record streams:
 *
 *  1. a first pass reads the chunk headers only (16 bytes per chunk) and
 *     finds the threads, with the first and last chunk of each;
 *  2. every thread then keeps a cursor on its next CALL record (its head)
 *     and a heap hands out the head with the smallest index. One scanner
 *     walks the chunk headers forward once more and queues each chunk for
 *     its thread, so finding a thread's next chunk takes no search.
 *
 * A stream keeps the turn while its next call still comes first, so the
 * heap is only touched where threads interleave (a push and a pop were
 * 11-15 ns of a call's ~60 on churn), and not at all for one thread.
 *
 * Memory follows the number of threads (and of distinct stacks, functions
 * and modules), not the length of the trace: one call per thread waits. A
 * mapped raw file's chunks are given back to the kernel once read, a
 * compressed file's frames are read with pread (rt_bin_zframe_at) and
 * never mapped, and the passes over chunk headers read them with pread,
 * so that the resident size of a trace is not the file's (churn: 110 MB
 * before, 16 after).
 *
 * Errors keep the delivered calls a prefix of the trace in index order: a
 * thread whose stream breaks becomes a heap entry keyed by the lowest index
 * its lost calls can have, and the error is reported when the merge gets
 * there. Function, resource and backtrace ids are resolved when a call is
 * delivered, not when it is read ahead, so a definition that another thread
 * wrote before the call's index was taken is always known by then.
 *
 * A caller that takes calls by batches (opts->on_calls) gets them from a
 * buffer of RT_BIN_BATCH, handed over when full and before any warning.
 * A compressed frame's plain CALLs are model calls already, written by
 * its decoder (a worker with opts->threads > 1: bin_zpar.c); a stream's
 * run of them (up to the next other record or another stream's turn)
 * has its ids and times put in where it is and goes to on_calls by
 * pointer (rt_bin_take_calls; a short run, as of threads that
 * interleave call by call, into the batch): the head is read for its
 * index alone (rt_bin_zhead), and no call is copied. The reading
 * thread's own work (the merge, the ids, the times; the frames' decoding
 * and the analysis aside), callgrind on `rtrace heap` of churn: 116
 * instructions a call before, 38 now; whole, 552 -> 471 with -j1. The
 * merge, the ids and the callbacks stay on the caller's thread.
 *
 * This file is the merge (the file header, the chunks, the cursors and the
 * heap) and the entry points; bin_decode.c reads the records themselves,
 * and bin_int.h is the one-way interface between them. */
#include "bin_int.h"
#include "bin_zchunk.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NO_STREAM UINT32_MAX

/* The public header's magic (rt_bin_is_binary) is the format's. */
_Static_assert(RT_BIN_MAGIC_LEN == RT_TF_MAGIC_LEN && sizeof RT_BIN_MAGIC == sizeof RT_TF_MAGIC,
	       "binary.h's magic");

/* --- first pass: the chunk headers --- */

enum { CHUNK_OK, CHUNK_END, CHUNK_BAD };

/* The header of the chunk or frame at off, for the first pass and the
 * scanner. A mapped trace's headers are read with pread, not through the
 * map: a fault on the map brings in the pages around it as well (the
 * kernel's fault-around, 64 KB: a whole raw chunk), so a first pass over
 * the map had the whole file resident before the merge read a call. */
static const uint8_t *hdr(rd *r, uint64_t off)
{
	if (!r->mapped)
		return r->base + off;
	if (r->hbuf_ok && r->hbuf_off == off)
		return r->hbuf;
	size_t n = r->len - off < sizeof r->hbuf ? (size_t)(r->len - off) : sizeof r->hbuf;
	if (pread(r->fd, r->hbuf, n, (off_t)off) != (ssize_t)n)
		return r->base + off; /* the map then */
	r->hbuf_ok = true;
	r->hbuf_off = off;
	return r->hbuf;
}

/* The chunk after the one at off: a compressed trace's frames have the
 * length their header says. */
static uint64_t next_off(rd *r, uint64_t off)
{
	if (r->z)
		return off + RT_TF_ZFRAME_HEADER + le32(hdr(r, off) + RT_TF_OFF_ZLEN);
	return off + r->chunk_size;
}

/* A compressed trace without its end frame (rtrace run was stopped, or
 * is still writing it): every complete frame is read, and the reader
 * says once, as a warning, that the calls of the chunks not compressed
 * yet are missing (each thread's stream ends at its last frame). */
static int ztruncated(rd *r, uint64_t off, const char *what)
{
	snprintf(r->ztrunc_msg, sizeof r->ztrunc_msg, "truncated compressed trace (%s at byte offset %" PRIu64
		 "): read to its last complete frame; the calls of chunks not compressed yet are missing", what, off);
	r->ztrunc = true;
	return CHUNK_END;
}

/* A frame of a compressed trace: one to read, the end frame, or bad. */
static int zclassify(rd *r, uint64_t off)
{
	if (off >= r->len)
		return ztruncated(r, off, "no end frame");
	const uint8_t *h = hdr(r, off);
	size_t rem = r->len - (size_t)off;
	if (rem >= RT_TF_CHUNK_MAGIC_LEN && !memcmp(h, RT_TF_ZEND_MAGIC, RT_TF_CHUNK_MAGIC_LEN))
		return rem >= RT_TF_ZFRAME_HEADER ? CHUNK_END : ztruncated(r, off, "end frame cut short");
	if (rem < RT_TF_ZFRAME_HEADER)
		return ztruncated(r, off, "frame header cut short");
	if (memcmp(h, RT_TF_CHUNK_MAGIC, RT_TF_CHUNK_MAGIC_LEN)) {
		rt_bin_bad(r, off, "expected frame magic \"" RT_TF_CHUNK_MAGIC "\" or the end frame \"" RT_TF_ZEND_MAGIC "\"");
		return CHUNK_BAD;
	}
	uint32_t used = le32(h + RT_TF_OFF_USED), zlen = le32(h + RT_TF_OFF_ZLEN);
	if (used > r->chunk_size - RT_TF_CHUNK_HEADER || zlen > RT_TF_ZMAX_PAYLOAD(r->chunk_size)) {
		rt_bin_bad(r, off + RT_TF_OFF_USED, "expected at most %u used bytes and %u compressed bytes in the frame, found %u and %u",
			   r->chunk_size - RT_TF_CHUNK_HEADER, RT_TF_ZMAX_PAYLOAD(r->chunk_size), used, zlen);
		return CHUNK_BAD;
	}
	if (zlen > rem - RT_TF_ZFRAME_HEADER)
		return ztruncated(r, off, "last frame cut short");
	return CHUNK_OK;
}


static int bad_magic(rd *r, uint64_t off)
{
	if (r->data_end)
		rt_bin_bad(r, off, "expected chunk magic \"" RT_TF_CHUNK_MAGIC "\" (data_end says chunks go on to byte offset %" PRIu64 ")",
			   r->data_end);
	else
		rt_bin_bad(r, off, "expected chunk magic \"" RT_TF_CHUNK_MAGIC "\", or zero bytes where the trace ends");
	return CHUNK_BAD;
}

/* Fewer than 16 bytes of a chunk: a copy cut inside its header. Nothing
 * is lost when they are zero or say that no bytes are used. */
static int cut_header(rd *r, uint64_t off)
{
	const uint8_t *h = hdr(r, off);
	size_t rem = r->len - (size_t)off, m = rem < RT_TF_CHUNK_MAGIC_LEN ? rem : RT_TF_CHUNK_MAGIC_LEN;
	static const uint8_t zero[4];
	if (!r->data_end && !memcmp(h, zero, m))
		return CHUNK_END;
	if (memcmp(h, RT_TF_CHUNK_MAGIC, m))
		return bad_magic(r, off);
	if (rem >= RT_TF_OFF_USED + 4 && le32(h + RT_TF_OFF_USED) == 0)
		return CHUNK_END;
	rt_bin_bad(r, off, "expected a %d-byte chunk header, found end of file after %zu bytes (truncated trace)",
		   RT_TF_CHUNK_HEADER, rem);
	return CHUNK_BAD;
}

/* The file ends at a chunk boundary before data_end: a copy cut short.
 * Only a chunk cut inside its used bytes is an error (the spec), but the
 * caller hears of it. */
static int short_file(rd *r, uint64_t off)
{
	if (r->data_end)
		rt_bin_warn(r, off, "expected chunks up to data_end (byte offset %" PRIu64 "), found end of file: "
			    "a truncated copy? reading the chunks present", r->data_end);
	return CHUNK_END;
}

/* Sorts the chunk at off: one to read, the end of the trace, or a bad one
 * (r->diag says why). */
static int classify(rd *r, uint64_t off)
{
	if (r->z)
		return zclassify(r, off);
	if (r->data_end && off >= r->data_end)
		return CHUNK_END;
	if (off >= r->len)
		return short_file(r, off);
	if (r->len - off < RT_TF_CHUNK_HEADER)
		return cut_header(r, off);
	const uint8_t *h = hdr(r, off);
	if (!r->data_end && le32(h) == 0)
		return CHUNK_END;
	if (memcmp(h, RT_TF_CHUNK_MAGIC, RT_TF_CHUNK_MAGIC_LEN))
		return bad_magic(r, off);
	if (le32(h + RT_TF_OFF_USED) > r->chunk_size - RT_TF_CHUNK_HEADER) {
		rt_bin_bad(r, off + RT_TF_OFF_USED, "expected at most %u used bytes in the chunk, found %u",
			   r->chunk_size - RT_TF_CHUNK_HEADER, le32(h + RT_TF_OFF_USED));
		return CHUNK_BAD;
	}
	return CHUNK_OK;
}

/* A frame's coding word (its flags), read as hdr reads headers: a read
 * through the map would bring the 64 KB around it back in. */
static uint32_t zcoding_at(const rd *r, uint64_t off)
{
	uint8_t b[4];
	if (r->mapped && pread(r->fd, b, sizeof b, (off_t)(off + RT_TF_OFF_ZCODING)) == (ssize_t)sizeof b)
		return le32(b);
	return le32(r->base + off + RT_TF_OFF_ZCODING);
}

static uint32_t new_stream(rd *r, uint32_t tid, uint64_t off, uint32_t seq)
{
	if (r->ns == r->cs)
		rt_grow((void **)&r->s, &r->cs, r->ns + 1, sizeof *r->s);
	stream *s = &r->s[r->ns];
	memset(s, 0, sizeof *s);
	s->tid = tid;
	s->seq = seq;
	s->first = s->last = s->chunk = off;
	s->next_gen = NO_STREAM;
	s->bound = 1;
	rt_bin_idmap_put(&r->tids, tid, (uint32_t)r->ns);
	return (uint32_t)r->ns++;
}

/* Adds the chunk at off to its thread's stream. Any first seq is taken;
 * then seq 0 is a new thread that got a dead thread's tid, and any other
 * break in the sequence ends the stream (an error once it is read). */
static void index_chunk(rd *r, uint64_t off)
{
	const uint8_t *h = hdr(r, off);
	uint32_t tid = le32(h + RT_TF_OFF_TID), seq = le32(h + RT_TF_OFF_SEQ);
	uint32_t *sid = rt_bin_idmap_get(&r->tids, tid);
	if (!sid) {
		rt_bin_idmap_put(&r->scan_tids, tid, new_stream(r, tid, off, seq));
		return;
	}
	uint32_t prev = *sid;
	stream *s = &r->s[prev];
	if (r->z && !s->broken && seq == s->seq &&
	    (zcoding_at(r, s->last) & RT_TF_ZFLAG_SNAP)) {
		/* a later, longer copy of a chunk written while it grew */
		rt_bin_idmap_put(&r->zsuper, s->last, 1);
		if (s->first == s->last)
			s->first = s->chunk = off;
		s->last = off;
		return;
	}
	if (seq == 0) {
		uint32_t n = new_stream(r, tid, off, seq);
		r->s[prev].next_gen = n;
	} else if (!s->broken && seq == s->seq + 1) {
		s->last = off;
		s->seq = seq;
	} else if (!s->broken) {
		rt_bin_bad(r, off + RT_TF_OFF_SEQ, "expected seq %" PRIu32 " for the next chunk of thread %" PRIu32
			   " (or 0 for a new thread reusing its id), found %" PRIu32 "; its later chunks are skipped",
			   s->seq + 1, tid, seq);
		s->tail = rt_bin_diag_dup(&r->diag);
		s->broken = true;
	}
}

/* The file ends inside the used bytes of the chunk at off (the last one):
 * its thread fails where its records break off, and since every other
 * thread may have had chunks past the cut as well, each fails once its
 * chunks run out, which keeps the delivered calls a prefix. */
static void note_cut(rd *r, uint64_t off)
{
	uint64_t used_end = off + RT_TF_CHUNK_HEADER + le32(hdr(r, off) + RT_TF_OFF_USED);
	if (used_end <= r->len || r->pending)
		return;
	rt_bin_bad(r, r->len, "expected %" PRIu64 " more used bytes of the chunk at byte offset %" PRIu64
		   ", found end of file (truncated trace)", used_end - r->len, off);
	r->pending = rt_bin_diag_dup(&r->diag);
}

static void index_chunks(rd *r)
{
	uint64_t off = r->header_size;
	for (;; off = next_off(r, off)) {
		int k = classify(r, off);
		if (k == CHUNK_OK) {
			index_chunk(r, off);
			if (!r->z)
				note_cut(r, off);
			continue;
		}
		/* a bad chunk (or a compressed trace cut short): any thread may
		 * have had chunks past it */
		if (k == CHUNK_BAD && !r->pending)
			r->pending = rt_bin_diag_dup(&r->diag);
		break;
	}
	r->limit = off;
}
/* --- chunk cursors --- */

static void queue_push(stream *s, uint64_t off)
{
	if (s->qhead && s->qhead * 2 >= s->qlen) {
		memmove(s->q, s->q + s->qhead, (s->qlen - s->qhead) * sizeof *s->q);
		s->qlen -= s->qhead;
		s->qhead = 0;
	}
	RT_PUSH(s->q, s->qlen, s->qcap, off);
}

/* Queues the scanner's next chunk for its stream; false past the chunks
 * of the first pass. The tid's generations follow in file order. */
static bool scan_one(rd *r)
{
	if (r->scan >= r->limit)
		return false;
	uint64_t off = r->scan;
	r->scan = next_off(r, off);
	if (r->z && rt_bin_idmap_get(&r->zsuper, off))
		return true; /* replaced by a later frame */
	uint32_t *g = rt_bin_idmap_get(&r->scan_tids, le32(hdr(r, off) + RT_TF_OFF_TID));
	if (!g)
		return true;
	stream *s = &r->s[*g];
	while (off > s->last && s->next_gen != NO_STREAM) {
		*g = s->next_gen;
		s = &r->s[*g];
	}
	if (off > s->chunk && off <= s->last)
		queue_push(s, off);
	return true;
}

/* The frames after s's current one are queued for the workers, up to
 * r->zdepth of them: the scanner runs ahead as far as s's next ones (it
 * queues each chunk for its stream as it would later; only earlier). */
static void zahead(rd *r, stream *s)
{
	while (s->zjn < r->zdepth) {
		/* scan_one may move s->q's entries to its front: qhead with them */
		while (s->qhead + s->zjn >= s->qlen && (s->qlen ? s->q[s->qlen - 1] : s->chunk) < s->last &&
		       scan_one(r))
			;
		size_t i = s->qhead + s->zjn;
		uint32_t job;
		if (i >= s->qlen || !rt_bin_zpar_submit(r->zpar, s->q[i], &job))
			return;
		unsigned k = (s->zjh + s->zjn++) % RT_BIN_ZLOOK;
		s->zjob[k] = job;
		s->zjoff[k] = s->q[i];
	}
}

/* A compressed trace's frame at off, decoded into s->zbuf (its chunk
 * header, then the records), by a worker if it was queued. False with
 * r->diag when it does not decode. */
static bool zenter(rd *r, stream *s, uint64_t off)
{
	const uint8_t *h = hdr(r, off);
	uint32_t used = le32(h + RT_TF_OFF_USED), zlen = le32(h + RT_TF_OFF_ZLEN);
	if (!r->zc)
		r->zc = rt_bin_zc_new();
	rt_bin_zframe f = {s->zbuf, s->zcap, s->zc, false, ""};
	if (s->zjn && s->zjoff[s->zjh] == off) {
		uint32_t job = s->zjob[s->zjh];
		s->zjh = (s->zjh + 1) % RT_BIN_ZLOOK;
		s->zjn--;
		rt_bin_zpar_take(r->zpar, job, r->zc, &f);
	} else
		rt_bin_zframe_decode(r->zc, rt_bin_zframe_at(r->zc, r->fd, r->base, off), &f);
	s->zbuf = f.buf;
	s->zcap = f.cap;
	s->zc = f.calls;
	s->zci = s->zrun = 0;
	s->znext = NULL;
	s->hz = false;
	if (!f.ok)
		return rt_bin_bad(r, off, "expected a frame that decodes to its %" PRIu32 " used bytes: %s", used, f.why);
	s->chunk = off;
	s->used_end = off + RT_TF_ZFRAME_HEADER + zlen; /* in the file: the reader's "end" of the chunk */
	s->p = s->zbuf + RT_TF_CHUNK_HEADER;
	s->end = s->p + used;
	s->znext = s->zc.n ? s->p + s->zc.at[0][0] : NULL;
	if (r->zpar)
		zahead(r, s);
	return true;
}

/* Whether the frame at off is the last chunk of its thread. */
static bool zlast(const rd *r, uint64_t off)
{
	return r->z && (zcoding_at(r, off) & RT_TF_ZFLAG_LAST);
}

/* A mapped raw trace's pages of the chunk s leaves are given back
 * to the kernel: each is read once, by its thread, and the reader's
 * resident size was the whole file (106 MB on churn, twice
 * heaptrack_print's). Only the pages wholly inside the chunk go (15 of a
 * raw chunk's 16); those it shares with its neighbours stay. They are
 * clean pages of a read-only map: a page touched again (the scanner
 * reading a header) is read back from the file, never lost. */
static void release_chunk(rd *r, const stream *s)
{
	uint64_t page = r->page, from = s->chunk, to = s->chunk + r->chunk_size;
	if (to > r->len)
		to = r->len;
	from = (from + page - 1) / page * page;
	to = to / page * page;
	if (from < to)
		madvise((void *)(uintptr_t)(r->base + from), (size_t)(to - from), MADV_DONTNEED);
}

static bool enter_chunk(rd *r, stream *s, uint64_t off)
{
	if (r->z)
		return zenter(r, s, off);
	uint32_t used = le32(r->base + off + RT_TF_OFF_USED);
	/* checked by the first pass; a live trace may have grown it since */
	if (used > r->chunk_size - RT_TF_CHUNK_HEADER)
		used = r->chunk_size - RT_TF_CHUNK_HEADER;
	s->chunk = off;
	s->used_end = off + RT_TF_CHUNK_HEADER + used;
	s->p = r->base + off + RT_TF_CHUNK_HEADER;
	s->end = r->base + (s->used_end < r->len ? s->used_end : r->len);
	return true;
}

/* 1: s entered its next chunk; 0: it has none; -1: it does not decode. */
static int next_chunk(rd *r, stream *s)
{
	if (s->chunk >= s->last)
		return 0;
	while (s->qhead == s->qlen)
		if (!scan_one(r))
			return 0;
	if (r->mapped && !r->z) /* a compressed trace's frames are read, not mapped */
		release_chunk(r, s);
	return enter_chunk(r, s, s->q[s->qhead++]) ? 1 : -1;
}
/* --- the merge --- */

static void fail(stream *s, const rt_diag *d)
{
	s->failed = true;
	s->err = rt_bin_diag_dup(d);
}

static const rt_diag *cut_chunk(rd *r, const stream *s)
{
	rt_bin_bad(r, r->len, "expected %" PRIu64 " more used bytes of the chunk at byte offset %" PRIu64
		   ", found end of file (truncated trace)", s->used_end - r->len, s->chunk);
	return &r->diag;
}

/* The record at s->p: a plain CALL of a compressed frame as the decoder
 * made it (where its row is not written), else from the chunk's bytes. */
static inline bool next_record(rd *r, stream *s)
{
	if (s->p != s->znext)
		return rt_bin_read_record(r, s);
	return r->batch ? rt_bin_zhead(r, s) : rt_bin_take_call(r, s);
}

/* A stream that has read its last chunk gives its decoding buffers back
 * (a compressed trace: up to 64 KB of rows and 260 KB of calls): a trace
 * of many threads, one after another, would otherwise hold them all. */
static void drop_buffers(stream *s)
{
	free(s->zbuf);
	rt_bin_zcalls_free(&s->zc);
	s->zbuf = NULL;
	s->zcap = s->zci = 0;
	s->znext = NULL;
	s->p = s->end = NULL;
}

/* Reads s up to its next CALL record, its head. On an error s fails, to
 * be reported when the merge reaches s->bound. */
static void advance(rd *r, stream *s)
{
	s->has_head = false;
	s->bound = s->last_index == UINT64_MAX ? UINT64_MAX : s->last_index + 1;
	while (!s->has_head) {
		if (s->p < s->end) {
			r->zbuf = s->zbuf; /* off_of: the decoded chunk, if any */
			r->zoff = s->chunk;
			r->zlen = s->zbuf ? (uint64_t)(s->end - s->zbuf) : 0;
			if (!next_record(r, s)) {
				fail(s, &r->diag);
				return;
			}
			continue;
		}
		if (s->used_end > r->len) {
			fail(s, cut_chunk(r, s));
			return;
		}
		int k = next_chunk(r, s);
		if (k < 0) {
			fail(s, &r->diag);
			return;
		}
		if (k)
			continue;
		drop_buffers(s);
		const rt_diag *why = s->tail ? s->tail : r->pending;
		/* a thread's last frame: nothing of it was lost */
		if (why && !(s->tail == NULL && zlast(r, s->chunk)))
			fail(s, why);
		return;
	}
}

static uint64_t key_of(const stream *s)
{
	return s->failed ? s->bound : s->h.c.index;
}

/* Heap order: smallest index; an error before a call of the same index.
 * Inlined: the merge asks it once a call (is the stream's run over?). */
static inline __attribute__((always_inline)) bool before(const rd *r, uint32_t a, uint32_t b)
{
	const stream *x = &r->s[a], *y = &r->s[b];
	uint64_t kx = key_of(x), ky = key_of(y);
	if (kx != ky)
		return kx < ky;
	if (x->failed != y->failed)
		return x->failed;
	return a < b;
}

static void heap_push(rd *r, uint32_t v)
{
	size_t i = r->nheap++;
	while (i && before(r, v, r->heap[(i - 1) / 2])) {
		r->heap[i] = r->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->heap[i] = v;
}

static uint32_t heap_pop(rd *r)
{
	uint32_t top = r->heap[0], v = r->heap[--r->nheap];
	size_t i = 0, n = r->nheap;
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && before(r, r->heap[c + 1], r->heap[c]))
			c++;
		if (!before(r, r->heap[c], v))
			break;
		r->heap[i] = r->heap[c];
	}
	if (n)
		r->heap[i] = v;
	return top;
}

/* The call of s's head to the caller: into the batch (opts->on_calls;
 * handed over when full: one indirect call, and the analysis's loop over
 * the batch, instead of one a call), or to on_call, or into the trace.
 * A head in a compressed frame (s->hz) goes with the calls after it
 * below limit, by pointer (rt_bin_take_calls); one whose ids fail is
 * read as a head, for the message. */
static bool deliver(rd *r, stream *s, uint64_t limit)
{
	if (s->hz) {
		if (rt_bin_take_calls(r, s, limit))
			return true;
		if (!rt_bin_take_call(r, s))
			return false;
	}
	if (r->batch) {
		rt_call *b = &r->batch[r->nbatch];
		if (!rt_bin_call_of(r, s, b))
			return false;
		rt_trace_saw_call(r->t, b);
		r->stats.calls++;
		r->delivered = b->index;
		if (++r->nbatch == RT_BIN_BATCH)
			rt_bin_flush(r);
		return true;
	}
	rt_call c;
	if (!rt_bin_call_of(r, s, &c))
		return false;
	if (r->o && r->o->on_call) {
		rt_trace_saw_call(r->t, &c);
		r->o->on_call(r->o->ctx, r->t, &c);
	} else
		rt_trace_append_call(r->t, &c);
	r->stats.calls++;
	r->delivered = c.index;
	return true;
}

/* "FILE: truncated compressed trace ...", a warning; a call whose ids
 * were defined in a chunk not compressed yet ends the reading there. */
static int ztrunc_warn(rd *r, const rt_diag *stop)
{
	rt_bin_flush(r);
	rt_diag d = {r->file, 0, 0, ""};
	snprintf(d.msg, sizeof d.msg, "%.250s%s%.200s", r->ztrunc_msg, stop ? "; stopped at " : "", stop ? stop->msg : "");
	if (r->o && r->o->warn)
		r->o->warn(r->o->ctx, &d);
	snprintf(r->stats.incomplete, sizeof r->stats.incomplete, "%s", r->ztrunc_msg);
	return 0;
}

/* Every stream reads up to its first call, then the heap hands the calls
 * out in index order until an error or the end. A stream whose next call
 * still comes before the heap's top keeps the turn without going through
 * the heap (a push and a pop were 11-15 ns of a call's ~60 on churn):
 * threads run in bursts of calls, and a trace of one thread never
 * touches the heap after its first call. The order is the heap's: the
 * stream is delivered next exactly when it would be the top again. */
static int merge(rd *r, rt_diag *err)
{
	r->heap = rt_xmalloc((r->ns ? r->ns : 1) * sizeof *r->heap);
	r->scan = r->header_size;
	for (uint32_t i = 0; i < r->ns; i++) {
		if (enter_chunk(r, &r->s[i], r->s[i].first))
			advance(r, &r->s[i]);
		else
			fail(&r->s[i], &r->diag);
		if (r->s[i].has_head || r->s[i].failed)
			heap_push(r, i);
	}
	while (r->nheap) {
		uint32_t i = heap_pop(r);
		stream *s = &r->s[i];
		for (;;) { /* s's run: its calls before every other stream's */
			if (s->failed)
				return *err = *s->err, -1;
			if (!deliver(r, s, r->nheap ? key_of(&r->s[r->heap[0]]) : UINT64_MAX))
				return r->ztrunc ? ztrunc_warn(r, &r->diag) : (*err = r->diag, -1);
			advance(r, s);
			if (!s->has_head && !s->failed)
				break;
			if (r->nheap && !before(r, i, r->heap[0])) {
				heap_push(r, i);
				break;
			}
		}
	}
	if (r->ztrunc)
		return ztrunc_warn(r, NULL);
	if (r->pending) /* no stream ran into it: there was none */
		return *err = *r->pending, -1;
	return 0;
}
/* --- file header and entry points --- */

static bool read_file_header(rd *r)
{
	const uint8_t *b = r->base;
	if (r->len < RT_BIN_MAGIC_LEN && (!r->len || !memcmp(b, RT_BIN_MAGIC, r->len)))
		return rt_bin_bad(r, r->len, "expected the %d-byte file header of an rtrace binary trace, found end of file",
				  RT_TF_FILE_HEADER);
	if (!rt_bin_is_binary(b, r->len))
		return rt_bin_bad(r, 0, "expected the magic \"RTRACE\\0\\1\" of an rtrace binary trace");
	if (b[RT_TF_OFF_VERSION] != RT_TF_VERSION && b[RT_TF_OFF_VERSION] != RT_TF_ZVERSION)
		return rt_bin_bad(r, RT_TF_OFF_VERSION, "expected binary format version %d (or %d, compressed), found version %u (written by a newer rtrace?)",
				  RT_TF_VERSION, RT_TF_ZVERSION, b[RT_TF_OFF_VERSION]);
	r->z = b[RT_TF_OFF_VERSION] == RT_TF_ZVERSION;
	if (r->len < RT_TF_FILE_HEADER)
		return rt_bin_bad(r, r->len, "expected the %d-byte file header, found end of file (truncated trace)", RT_TF_FILE_HEADER);
	r->header_size = le32(b + RT_TF_OFF_HEADER_SIZE);
	r->chunk_size = le32(b + RT_TF_OFF_CHUNK_SIZE);
	r->data_end = le64(b + RT_TF_OFF_DATA_END);
	if (r->header_size < RT_TF_FILE_HEADER || r->header_size > RT_TF_MAX_HEADER)
		return rt_bin_bad(r, RT_TF_OFF_HEADER_SIZE, "expected a header size between %d and %u, found %" PRIu32, RT_TF_FILE_HEADER, RT_TF_MAX_HEADER, r->header_size);
	if (r->chunk_size < RT_TF_MIN_CHUNK || r->chunk_size > RT_TF_MAX_CHUNK)
		return rt_bin_bad(r, RT_TF_OFF_CHUNK_SIZE, "expected a chunk size between %u and %u, found %" PRIu32, RT_TF_MIN_CHUNK, RT_TF_MAX_CHUNK, r->chunk_size);
	if (r->z && le32(b + RT_TF_OFF_ZFORMAT) != RT_TF_ZFORMAT)
		return rt_bin_bad(r, RT_TF_OFF_ZFORMAT, "expected frame format %d, found %" PRIu32 " (written by a newer rtrace?)",
				  RT_TF_ZFORMAT, le32(b + RT_TF_OFF_ZFORMAT));
	if (r->data_end && !r->z && (r->data_end < r->header_size || (r->data_end - r->header_size) % r->chunk_size))
		return rt_bin_bad(r, RT_TF_OFF_DATA_END, "expected data_end 0 or the end of a chunk (%" PRIu32 " + n * %" PRIu32 "), found %" PRIu64,
				  r->header_size, r->chunk_size, r->data_end);
	return true;
}

/* A tracer that stopped before its process ended recorded why in the
 * file header (format 1.3): the trace says so wherever it is read, as a
 * warning, a comment after the last call and stats->incomplete. */
static void note_stop(rd *r)
{
	uint32_t why = le32(r->base + RT_TF_OFF_STOP_REASON), err = le32(r->base + RT_TF_OFF_STOP_ERRNO);
	if (!why)
		return;
	char *m = r->stats.incomplete;
	size_t n = sizeof r->stats.incomplete;
	int k = snprintf(m, n, "trace incomplete: tracing stopped at call %" PRIu64 ": %s",
			 le64(r->base + RT_TF_OFF_STOP), rt_tf_stop_text(why));
	if (err && k > 0 && (size_t)k < n)
		snprintf(m + k, n - (size_t)k, ": %s", strerror((int)err));
	rt_bin_warn(r, RT_TF_OFF_STOP, "%s", m);
	char c[sizeof r->stats.incomplete + 3];
	k = snprintf(c, sizeof c, "## %s", m);
	rt_trace_add_comment(r->t, r->delivered, c, (size_t)k);
}

/* Header fields known from the file header; PROCESS adds the others. */
static void set_file_fields(rd *r)
{
	rt_trace_set_header(r->t, "version", "2.0");
	rt_bin_set_u64(r, "pid", le64(r->base + RT_TF_OFF_PID));
	rt_trace_set_header(r->t, "origin", "rtrace " RTRACE_VERSION);
}

static void rd_free(rd *r)
{
	for (size_t i = 0; i < r->ns; i++) {
		free(r->s[i].q);
		free(r->s[i].tail);
		free(r->s[i].err);
		free(r->s[i].zbuf);
		rt_bin_zcalls_free(&r->s[i].zc);
	}
	rt_bin_zpar_free(r->zpar); /* first: its workers read the trace */
	free(r->batch);
	rt_bin_zc_free(r->zc);
	free(r->zsuper.slots);
	free(r->s);
	free(r->heap);
	free(r->pending);
	free(r->tids.slots);
	free(r->scan_tids.slots);
	free(r->fns.slots);
	free(r->bts.slots);
	free(r->ctxs.slots);
	free(r->fnflat.v);
	free(r->btflat.v);
	free(r->mods.slots);
	free(r->mod_gen);
	free(r->frames);
	free(r->tmp[0]);
	free(r->tmp[1]);
	free(r->leak_ids);
	free(r->err_ids);
}

bool rt_bin_is_binary(const void *head, size_t len)
{
	return len >= RT_BIN_MAGIC_LEN - 1 && !memcmp(head, RT_BIN_MAGIC, RT_BIN_MAGIC_LEN - 1);
}

/* A compressed trace read with opts->threads > 1: threads - 1 workers
 * (at most 16) decode frames ahead, each stream's next 2 * (workers + 1)
 * (at most RT_BIN_ZLOOK): a reader that would wait for a worker's frame
 * decodes the next one queued meanwhile (bin_zpar.c), and with only the
 * workers' frames queued the worker then found nothing left to do.
 * python3's trace (one worker): 0.85 s with workers + 1, 0.72 s with
 * twice that; 8 (0.73 s) took 2 MB more. */
static void start_workers(rd *r)
{
	unsigned n = r->o ? r->o->threads : 0;
	if (!r->z || n < 2)
		return;
	unsigned w = n - 1 > 16 ? 16 : n - 1;
	r->zdepth = 2 * (w + 1) < RT_BIN_ZLOOK ? 2 * (w + 1) : RT_BIN_ZLOOK;
	r->zpar = rt_bin_zpar_new(r->base, r->fd, w, 2 * r->zdepth);
}

/* mapped_fd: buf is rt_bin_read_fd's read-only map of this file, whose
 * pages the reader gives back behind itself; -1: a caller's buffer. */
static int read_mem(rt_trace *t, const void *buf, size_t len, const char *name, const rt_read_opts *opts,
		    rt_read_stats *stats, rt_diag *err, int mapped_fd)
{
	rt_diag local;
	rd r = {0};
	r.mapped = mapped_fd >= 0;
	r.fd = mapped_fd;
	r.page = (uint64_t)sysconf(_SC_PAGESIZE);
	r.t = t;
	r.o = opts;
	r.file = name ? name : "<input>";
	r.base = buf;
	r.len = len;
	if (!err)
		err = &local;
	memset(err, 0, sizeof *err);
	int rc = -1;
	if (!read_file_header(&r)) {
		*err = r.diag;
	} else {
		set_file_fields(&r);
		/* the pages the file header brought in (the kernel may map a
		 * 2 MB folio at once): a compressed trace's frames are read with
		 * pread (rt_bin_zframe_at), so nothing else faults them back */
		if (r.mapped && r.z)
			madvise((void *)(uintptr_t)r.base, len, MADV_DONTNEED);
		index_chunks(&r);
		r.leak_base = rt_trace_leak_count(t);
		r.err_base = rt_trace_heap_error_count(t);
		start_workers(&r);
		if (opts && opts->on_calls)
			r.batch = rt_xmalloc(RT_BIN_BATCH * sizeof *r.batch);
		rc = merge(&r, err);
		rt_bin_flush(&r);
		note_stop(&r);
		rt_bin_resolve_heapcheck(&r);
		if (r.gen)
			rt_bin_close_generation(&r);
	}
	r.stats.bytes = len;
	if (stats)
		*stats = r.stats;
	rd_free(&r);
	return rc;
}

int rt_bin_read_mem(rt_trace *t, const void *buf, size_t len, const char *name,
		    const rt_read_opts *opts, rt_read_stats *stats, rt_diag *err)
{
	return read_mem(t, buf, len, name, opts, stats, err, -1);
}

/* Pipes and other unmappable inputs: everything into memory first. */
static int read_slurp(rt_trace *t, int fd, const char *name, const rt_read_opts *opts,
		      rt_read_stats *stats, rt_diag *err)
{
	size_t len = 0, cap = 1u << 16;
	uint8_t *buf = rt_xmalloc(cap);
	for (;;) {
		if (len == cap)
			buf = rt_xrealloc(buf, cap *= 2);
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rt_diag d = {name ? name : "<input>", 0, 0, ""};
			snprintf(d.msg, sizeof d.msg, "byte offset %zu: read error: %s", len, strerror(errno));
			free(buf);
			if (err)
				*err = d;
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	int rc = rt_bin_read_mem(t, buf, len, name, opts, stats, err);
	free(buf);
	return rc;
}

/* A regular file is mapped read-only rather than read in chunks: the
 * merge visits each thread's chunks in its own order and so hops across
 * the file, which with a map is pointer arithmetic; the kernel pages the
 * chunks in on demand, and the merge gives each back once read
 * (release_chunk), so the resident size does not follow the file's.
 * Reading instead would need a chunk buffer and a pread per thread for
 * the same access pattern.
 * The cost: a file that shrinks while it is mapped raises SIGBUS. The
 * tracer only grows its file while the program runs, so a live trace maps
 * safely at its current size, except across the program's clean exit,
 * where the tracer cuts the unused reservation past data_end off. */
int rt_bin_read_fd(rt_trace *t, int fd, const char *name,
		   const rt_read_opts *opts, rt_read_stats *stats, rt_diag *err)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= SIZE_MAX) {
		size_t len = (size_t)st.st_size;
		void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			int rc = read_mem(t, m, len, name, opts, stats, err, fd);
			munmap(m, len);
			return rc;
		}
	}
	return read_slurp(t, fd, name, opts, stats, err);
}

