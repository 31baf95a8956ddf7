/* Internal interface between the two halves of the binary trace reader:
 *
 *   bin_merge.c   the file and its chunks: the file header, the first pass
 *                 over the chunk headers, one cursor per thread, the heap
 *                 that hands calls out in index order, the entry points;
 *   bin_decode.c  the records inside a thread's chunks: fields, record
 *                 kinds, ids, modules, and turning a CALL into a model call.
 *
 * Calls go one way: the merger calls the decoder (rt_bin_read_record for
 * the next record of a stream, rt_bin_call_of when a call's turn comes,
 * and the shared diagnostics and id maps below); the decoder only reads
 * the stream state the merger keeps (its cursor and last index). Both work
 * on one `rd`, the reader's state for one trace. The layout itself is
 * format/trace_format.h's, shared with the tracer. */
#ifndef RT_BIN_INT_H
#define RT_BIN_INT_H

#include "rtrace/binary.h"
#include "rtrace/rtrace.h"
#include "format/trace_format.h"
#include "bin_zchunk.h"
#include "bin_zpar.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bstr {
	const uint8_t *p;
	size_t n;
} bstr;

/* u64 id -> u32 value (functions, backtraces, threads), open addressing. */
typedef struct idslot {
	uint64_t key;
	uint32_t val;
	uint32_t used;
} idslot;

typedef struct idmap {
	idslot *slots;
	size_t n, cap;
} idmap;

/* The same ids below n, directly: v[id] holds the value + 1 (0: not
 * defined). The tracer numbers functions and stacks from 1 up, so
 * every id it writes is here and a call's look-up is one load (the
 * direct-mapped caches before missed one stack in ten on python3);
 * ids far past the count defined stay in the idmap only. */
typedef struct idflat {
	uint32_t *v;
	size_t n;
} idflat;

/* Modules already in the model: slots hold the mmap index + 1. */
typedef struct modset {
	uint32_t *slots;
	size_t n, cap;
} modset;

/* A CALL record read ahead, waiting for its turn in index order. */
typedef struct head {
	rt_call c;            /* index, res_id, size, context, kind */
	uint64_t fn, res, bt; /* ids, resolved on delivery */
	uint64_t ns;          /* time since process start */
	const uint8_t *rec;   /* the record, in its stream's current chunk */
	uint64_t dropped;     /* a release dropped before it (format 1.5), 0: none */
} head;

/* Calls handed to opts->on_calls at a time (56 bytes each), copied
 * into a batch; a compressed frame's runs of at least RT_BIN_SLICE
 * calls go by pointer instead (rt_bin_take_calls). */
#define RT_BIN_BATCH 256
#define RT_BIN_SLICE 32
/* At most this many frames of a stream are decoded ahead. */
#define RT_BIN_ZLOOK 8

/* One thread's records. A tid that a new thread reuses (its chunks start
 * again at seq 0) gets a stream of its own: the generations never overlap
 * in time, and each counts its time from the process start. */
typedef struct stream {
	uint32_t tid, seq;       /* seq of its last chunk (first pass) */
	uint32_t next_gen;       /* stream of the next thread with this tid */
	bool broken;             /* first pass: its later chunks are skipped */
	uint64_t first, last;    /* byte offsets of its first and last chunk */
	uint64_t chunk;          /* byte offset of the chunk being read */
	uint64_t used_end;       /* where the chunk's used bytes end */
	const uint8_t *p, *end;  /* records left, cut at the end of the file */
	const uint8_t *rec;      /* start of the record being read */
	uint8_t type;            /* its type */
	uint64_t last_index, ns; /* of its last CALL */
	uint64_t bound;          /* lowest index a call lost now could have */
	head h;
	bool has_head, failed;
	rt_diag *tail; /* error to report once its chunks run out */
	rt_diag *err;  /* its error, once failed */
	uint64_t *q;   /* its chunks that the scanner found, in file order */
	size_t qhead, qlen, qcap;
	uint8_t *zbuf; /* compressed trace: its chunk, decoded (header too) */
	size_t zcap;
	rt_bin_zcalls zc; /* the frame's plain CALLs, not in zbuf (rt_bin_zc_decode_calls) */
	size_t zci;       /* the next of them */
	const uint8_t *znext; /* where its row would be; NULL: none left */
	bool hz;          /* the head is zc.v[zci], its index alone read (rt_bin_zhead) */
	size_t zrun;      /* the run of zc.runs that zci is in */
	/* its next frames queued for the workers (bin_zpar.c): a ring */
	uint32_t zjob[RT_BIN_ZLOOK];
	uint64_t zjoff[RT_BIN_ZLOOK];
	unsigned zjh, zjn;
} stream;

typedef struct rd {
	rt_trace *t;
	const rt_read_opts *o;
	const char *file;
	const uint8_t *base;
	size_t len;
	uint32_t header_size, chunk_size;
	uint64_t data_end;
	uint64_t delivered; /* index of the last call delivered */
	uint64_t limit;   /* the first pass read the chunks below it */
	uint64_t scan;    /* the scanner's next chunk */
	rt_diag diag;     /* the last error that rt_bin_bad() made */
	rt_diag *pending; /* a bad or cut chunk: every thread may have lost calls */
	stream *s;
	size_t ns, cs;
	idmap tids;      /* first pass: tid -> its latest stream */
	idmap scan_tids; /* scanner: tid -> the stream it is in */
	uint32_t *heap;
	size_t nheap;
	idmap fns, bts, ctxs;
	idflat fnflat, btflat; /* btflat[0]: the empty stack, once interned */
	uint8_t res[RT_MAX_RESOURCES + 1]; /* resource id -> res_type */
	modset mods;
	uint64_t gen, gen_since; /* MAPS records seen; first call index of the last */
	uint64_t *mod_gen;       /* mmap index -> last generation listing it */
	size_t nmod_gen, cmod_gen;
	bool have_process, timestamps;
	uint64_t start_sec, start_nsec;
	bool tm_ok; /* tm_us is the local time of day of second tm_sec */
	uint64_t tm_sec, tm_us;
	bool stamp_ok; /* stamp_us is the time of day of a call at stamp_ns */
	uint64_t stamp_ns, stamp_us;
	rt_frame *frames;
	size_t cframes;
	char *tmp[2];
	size_t ctmp[2];
	rt_read_stats stats;
	/* heap checking records: function and backtrace ids, resolved once
	 * every thread's definitions are read (rec_leak, rec_heaperr) */
	uint64_t (*leak_ids)[2], (*err_ids)[6];
	size_t nleak_ids, cleak_ids, nerr_ids, cerr_ids, leak_base, err_base;
	bool have_leaksum;
	/* CHECKLOSS records: check position, loss position, fn and bt ids
	 * (format 1.4), resolved and freed with the others */
	uint64_t (*check_ids)[4];
	size_t ncheck_ids, ccheck_ids;
	/* a compressed trace (docs/binary-format.md, "Compressed traces"):
	 * chunks are frames, decoded into their stream's zbuf; off_of counts
	 * the bytes of the one being read (zbuf, zlen) from its frame's
	 * offset zoff */
	bool z, ztrunc;
	char ztrunc_msg[200];
	idmap zsuper; /* frames a later one of the same chunk replaces */
	/* a trace mapped by rt_bin_read_fd: the pages of the chunks read are
	 * given back (bin_merge.c, release_chunk) */
	bool mapped;
	uint64_t page;
	int fd;                               /* the mapped file (-1: a caller's buffer):
					       * headers and compressed frames by pread */
	uint8_t hbuf[RT_TF_ZFRAME_HEADER];    /* the header last read so */
	uint64_t hbuf_off;
	bool hbuf_ok;
	struct rt_bin_zc *zc;
	rt_call *batch; /* opts->on_calls: calls not handed over yet */
	size_t nbatch;
	rt_bin_zpar *zpar; /* opts->threads > 1: frames decoded ahead */
	unsigned zdepth;   /* by so many per stream */
	const uint8_t *zbuf;
	uint64_t zoff, zlen;
} rd;

static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static inline uint64_t off_of(const rd *r, const uint8_t *p)
{
	uintptr_t a = (uintptr_t)p, z = (uintptr_t)r->zbuf;
	if (r->zbuf && a >= z && a - z <= r->zlen)
		return r->zoff + (uint64_t)(a - z);
	return (uint64_t)(p - r->base);
}

/* --- bin_decode.c: diagnostics and id maps, for both halves --- */

/* Puts "byte offset N: <msg>" in r->diag; returns false for the caller. */
__attribute__((format(printf, 3, 4)))
bool rt_bin_bad(rd *r, uint64_t off, const char *fmt, ...);
/* The same through opts->warn, if any; reading goes on. */
__attribute__((format(printf, 3, 4)))
void rt_bin_warn(rd *r, uint64_t off, const char *fmt, ...);
rt_diag *rt_bin_diag_dup(const rt_diag *d);
uint32_t *rt_bin_idmap_get(const idmap *m, uint64_t key);
void rt_bin_idmap_put(idmap *m, uint64_t key, uint32_t val);
/* Header key = v in decimal. */
void rt_bin_set_u64(rd *r, const char *key, uint64_t v);

/* --- bin_decode.c: records --- */

/* Reads the record at s->p (there is one: s->p < s->end); a CALL or CALLA
 * becomes s->h, with s->has_head set. False with r->diag on an error. */
bool rt_bin_read_record(rd *r, stream *s);
/* The next plain CALL of a compressed frame (s->zc.v[s->zci], whose
 * row's place s->p is), taken as rt_bin_read_record would read its row:
 * s's head. */
bool rt_bin_take_call(rd *r, stream *s);
/* The same with opts->on_calls: only its index is read (s->hz), for
 * the merge's order; rt_bin_take_calls hands it over in place. */
bool rt_bin_zhead(rd *r, stream *s);
/* The model call of s's head, its ids resolved and its time stamped; false
 * (r->diag) when an id has no definition yet. */
bool rt_bin_call_of(rd *r, const stream *s, rt_call *c);
/* With opts->on_calls and s->hz: s's head and the plain CALLs after it
 * below limit, their ids and times put in where they are and handed to
 * on_calls by pointer, after r->batch; returns how many (0: the head's
 * call has an id not defined: rt_bin_take_call and rt_bin_call_of say
 * which). bin_decode.c. */
size_t rt_bin_take_calls(rd *r, stream *s, uint64_t limit);
/* The calls of r->batch to opts->on_calls, before a warning or at the end. */
void rt_bin_flush(rd *r);
/* Once every record is read: the ids of LEAK and HEAPERR records. */
void rt_bin_resolve_heapcheck(rd *r);
/* The mappings the last MAPS generation no longer lists end. */
void rt_bin_close_generation(rd *r);

#endif
