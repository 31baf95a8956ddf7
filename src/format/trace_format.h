/* The binary trace format (docs/binary-format.md), as one contract for
 * both sides of the process boundary: the tracer (src/preload/) writes it
 * inside the traced program, the reader (src/lib/binary/) reads it in
 * `rtrace`. Both include this header and neither re-declares what it
 * holds, so a record kind, a header field or a value on disk cannot drift
 * between them; the _Static_asserts pin every number the format document
 * gives, so changing one here is a format change and fails the build
 * until this header and docs/binary-format.md say so together.
 *
 * What is here: the file and chunk header layout (structs whose offsets
 * are the documented ones; all integers little endian: the reader decodes
 * them bytewise, the tracer stores native integers and so only builds for
 * little-endian hosts), the limits a reader accepts, the record kinds with
 * their on-disk values, and the values of the record fields that have a
 * fixed meaning. The varints are format/varint.h's, included here.
 * Deliberately not here: the tracer's own choices within the format
 * (header size, chunk size, ids it assigns) and the reader's model.
 *
 * The independent test encoder (tests/cli/bin_encoder.h) does not include
 * this header on purpose: it writes the format from the document, so the
 * tests catch a change here that the document does not make. */
#ifndef RT_TRACE_FORMAT_H
#define RT_TRACE_FORMAT_H

#include "format/varint.h"

#include <stddef.h>
#include <stdint.h>

/* --- the file header --- */

#define RT_TF_MAGIC "RTRACE\0\1" /* the 8th byte is the major version */
#define RT_TF_MAGIC_LEN 8
#define RT_TF_VERSION 1

/* The first RT_TF_FILE_HEADER bytes of the file; header_size (at least
 * that) says where the first chunk starts. */
typedef struct rt_tf_file_header {
	char magic[RT_TF_MAGIC_LEN];
	uint32_t header_size;
	uint32_t chunk_size;
	uint64_t data_end; /* where the chunks end; 0 while the process runs */
	uint64_t pid;
	/* format 1.3: why the tracer stopped before the process ended (it
	 * writes these into the header it already wrote, which needs no new
	 * disk blocks, so even a full disk cannot stop it from saying so) */
	uint64_t stop_index;  /* the last call index handed out then */
	uint32_t stop_reason; /* RT_TF_STOP_*; 0: it did not stop */
	uint32_t stop_errno;  /* the error behind it (Linux errno), or 0 */
	uint8_t reserved[16];
} rt_tf_file_header;

#define RT_TF_FILE_HEADER 64
#define RT_TF_OFF_VERSION (RT_TF_MAGIC_LEN - 1)
#define RT_TF_OFF_HEADER_SIZE offsetof(rt_tf_file_header, header_size)
#define RT_TF_OFF_CHUNK_SIZE offsetof(rt_tf_file_header, chunk_size)
#define RT_TF_OFF_DATA_END offsetof(rt_tf_file_header, data_end)
#define RT_TF_OFF_PID offsetof(rt_tf_file_header, pid)
#define RT_TF_OFF_STOP offsetof(rt_tf_file_header, stop_index)
#define RT_TF_OFF_STOP_REASON offsetof(rt_tf_file_header, stop_reason)
#define RT_TF_OFF_STOP_ERRNO offsetof(rt_tf_file_header, stop_errno)

_Static_assert(sizeof(rt_tf_file_header) == RT_TF_FILE_HEADER, "file header: 64 bytes");
_Static_assert(RT_TF_OFF_HEADER_SIZE == 8 && RT_TF_OFF_CHUNK_SIZE == 12 &&
	       RT_TF_OFF_DATA_END == 16 && RT_TF_OFF_PID == 24 && RT_TF_OFF_STOP == 32 &&
	       RT_TF_OFF_STOP_REASON == 40 && RT_TF_OFF_STOP_ERRNO == 44,
	       "file header offsets of docs/binary-format.md");
_Static_assert(sizeof RT_TF_MAGIC - 1 == RT_TF_MAGIC_LEN, "magic: 8 bytes");

/* Why tracing stopped (stop_reason), as both sides say it; the reader
 * adds the error's text when stop_errno is set. */
enum {
	RT_TF_STOP_NONE = 0,
	RT_TF_STOP_EXTEND = 1, /* the file could not grow (a full disk) */
	RT_TF_STOP_FSIZE = 2,  /* the file size limit (RLIMIT_FSIZE) */
	RT_TF_STOP_MAX = 3,    /* the tracer's own limit on the file size */
	RT_TF_STOP_MAP = 4,    /* the file could not be mapped */
	RT_TF_STOP_REASONS = 5,
};

static inline const char *rt_tf_stop_text(uint32_t reason)
{
	static const char *const text[RT_TF_STOP_REASONS] = {
		[RT_TF_STOP_NONE] = "no reason recorded",
		[RT_TF_STOP_EXTEND] = "cannot extend the trace file",
		[RT_TF_STOP_FSIZE] = "the trace file reached the file size limit (RLIMIT_FSIZE)",
		[RT_TF_STOP_MAX] = "the trace file reached its size limit",
		[RT_TF_STOP_MAP] = "cannot map the trace file",
	};
	return reason < RT_TF_STOP_REASONS ? text[reason] : "an unknown reason (written by a newer rtrace?)";
}

/* --- chunks --- */

#define RT_TF_CHUNK_MAGIC "RTCK"
#define RT_TF_CHUNK_MAGIC_LEN 4

/* The start of every chunk; `used` bytes of records follow. */
typedef struct rt_tf_chunk_header {
	char magic[RT_TF_CHUNK_MAGIC_LEN];
	uint32_t used; /* stored last (release) by the tracer, after the records */
	uint32_t tid;  /* kernel thread id of the writer */
	uint32_t seq;  /* the chunk's number within its thread, from 0 */
} rt_tf_chunk_header;

#define RT_TF_CHUNK_HEADER 16
#define RT_TF_OFF_USED offsetof(rt_tf_chunk_header, used)
#define RT_TF_OFF_TID offsetof(rt_tf_chunk_header, tid)
#define RT_TF_OFF_SEQ offsetof(rt_tf_chunk_header, seq)

_Static_assert(sizeof(rt_tf_chunk_header) == RT_TF_CHUNK_HEADER, "chunk header: 16 bytes");
_Static_assert(RT_TF_OFF_USED == 4 && RT_TF_OFF_TID == 8 && RT_TF_OFF_SEQ == 12,
	       "chunk header offsets of docs/binary-format.md");
_Static_assert(sizeof RT_TF_CHUNK_MAGIC - 1 == RT_TF_CHUNK_MAGIC_LEN, "chunk magic: 4 bytes");

/* What a reader accepts: a writer's header_size and chunk_size must be
 * within these. */
#define RT_TF_MIN_CHUNK 32u         /* a header and a few records */
#define RT_TF_MAX_CHUNK (1u << 30)
#define RT_TF_MAX_HEADER (1u << 20)

/* --- records: a u8 kind, then the kind's fields --- */

enum rt_rec_kind {
	RT_REC_PROCESS = 1,
	RT_REC_MODULE = 2,
	RT_REC_MAPS = 3,
	RT_REC_RESOURCE = 4,
	RT_REC_FUNCTION = 5,
	RT_REC_CONTEXT = 6,
	RT_REC_BT = 7,
	RT_REC_CALL = 8,
	RT_REC_END = 9,
	RT_REC_MESSAGE = 10,
	RT_REC_LEAK = 11,    /* heap checking, format 1.1 */
	RT_REC_LEAKSUM = 12, /* format 1.1 */
	RT_REC_HEAPERR = 13, /* format 1.1 */
	RT_REC_CALLA = 14,   /* a CALL with arguments, format 1.2 */
	RT_REC_CHECK = 15,     /* a leak check on demand, format 1.4 */
	RT_REC_CHECKLOSS = 16, /* one of its loss records, format 1.4 */
	RT_REC_DROPPED = 17,   /* calls the lifetime filter dropped, format 1.5 */
	RT_REC_KINDS           /* one past the last kind */
};
_Static_assert(RT_REC_KINDS == 18,
	       "a new record kind goes in docs/binary-format.md and the reader's tables too");

/* PROCESS flags */
enum {
	RT_TF_PROC_TIMESTAMPS = 1, /* CALL deltas are recorded */
	RT_TF_PROC_FREE_BTS = 2,   /* releases have backtraces */
};

/* RESOURCE: ids are registry bit numbers 1..RT_TF_MAX_RES; flags. */
#define RT_TF_MAX_RES 32
enum { RT_TF_RES_REFCOUNT = 1 };

/* CALL and CALLA: the kind byte; CALLA carries 1..RT_TF_MAX_ARGS
 * arguments. */
enum { RT_TF_CALL_ALLOC = 1, RT_TF_CALL_FREE = 2 };
/* format 1.5: a kind byte with this bit is followed by a varint, the
 * distance back from the call's index to a release of the same thread
 * that the lifetime filter dropped (the latest since the thread's
 * previous CALL record) */
#define RT_TF_CALL_AFTER_DROP 0x80
#define RT_TF_MAX_ARGS 64

/* LEAK: the kind and heuristic bytes (memcheck's). */
enum {
	RT_TF_LEAK_DEFINITE = 1,
	RT_TF_LEAK_INDIRECT = 2,
	RT_TF_LEAK_POSSIBLE = 3,
	RT_TF_LEAK_REACHABLE = 4,
	RT_TF_LEAK_KINDS = 4,
};
enum {
	RT_TF_HEUR_NONE = 0,
	RT_TF_HEUR_STDSTRING = 1,
	RT_TF_HEUR_LENGTH64 = 2,
	RT_TF_HEUR_NEWARRAY = 3,
	RT_TF_HEUR_MULTIPLE = 4,
	RT_TF_HEURISTICS = 4,
};

/* LEAKSUM: the mode byte. */
enum { RT_TF_LEAKSUM_SUMMARY = 1, RT_TF_LEAKSUM_FULL = 2 };

/* CHECK: the mode byte (what the request asked to be shown; the loss
 * records are all there either way). */
enum { RT_TF_CHECK_FULL = 1, RT_TF_CHECK_INCREASED = 2 };

/* HEAPERR: the kind and block bytes; a FishyValue's block byte names the
 * argument (format 1.3). */
enum { RT_TF_ERR_INVALID_FREE = 1, RT_TF_ERR_MISMATCHED_FREE = 2, RT_TF_ERR_FISHY_VALUE = 3 };
enum { RT_TF_BLOCK_UNKNOWN = 0, RT_TF_BLOCK_LIVE = 1, RT_TF_BLOCK_FREED = 2 };
enum { RT_TF_ARG_SIZE = 1, RT_TF_ARG_NMEMB = 2 };

/* --- the compressed container (docs/binary-format.md, "Compressed
 * traces"): written by `rtrace run` from the tracer's raw file --- */

/* The magic's 8th byte: 2 for the container, whose chunks hold the
 * records of version 1. Its file header is rt_tf_file_header with
 * header_size 64, chunk_size the raw chunks' size, data_end the offset
 * of the end frame (0 while it is written), and the format of the frames
 * (RT_TF_ZFORMAT) in the first reserved u32. */
#define RT_TF_ZVERSION 2
#define RT_TF_ZFORMAT 1
#define RT_TF_OFF_ZFORMAT offsetof(rt_tf_file_header, reserved)

/* A frame: the raw chunk's 16-byte header as it was (magic, used, tid,
 * seq), u32 zlen, u32 coding, then zlen bytes of zstd. The end frame is
 * "RTZE", u32 0, u64 frames before it, u64 0. */
#define RT_TF_ZFRAME_HEADER 24
#define RT_TF_OFF_ZLEN 16
#define RT_TF_OFF_ZCODING 20
#define RT_TF_ZEND_MAGIC "RTZE"
#define RT_TF_ZMAX_PAYLOAD(chunk) ((chunk) + (chunk) / 128u + 4096u) /* above zstd's bound */
enum {
	RT_TF_ZCODING_ZSTD = 0,    /* the records as they were */
	RT_TF_ZCODING_COLUMNS = 1, /* the records split in columns */
	RT_TF_ZCODING_MASK = 0xff,
	RT_TF_ZFLAG_LAST = 0x100,  /* the last chunk of its thread */
	RT_TF_ZFLAG_SNAP = 0x200,  /* a copy of a chunk still growing: a later
				    * frame of the same tid and seq replaces it */
};
_Static_assert(RT_TF_OFF_ZFORMAT == 48, "container header: frame format at 48");

#endif
