/* One chunk's records, compressed and back (docs/binary-format.md,
 * "Compressed traces"): the codec of the compressed container's frames,
 * shared by its writer (bin_zfollow.c) and its reader (bin_merge.c). */
#ifndef RT_BIN_ZCHUNK_H
#define RT_BIN_ZCHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtrace/trace.h"

typedef struct rt_bin_zc rt_bin_zc;

#define RT_BIN_ZC_SLACK 128

rt_bin_zc *rt_bin_zc_new(void);
void rt_bin_zc_free(rt_bin_zc *z);

/* Compresses the n bytes of records rec (a chunk's used bytes) at zstd
 * level `level`: *out (valid until the next call) gets the frame's
 * payload, *coding its coding; returns the payload's length, 0 when zstd
 * failed. */
size_t rt_bin_zc_encode(rt_bin_zc *z, const uint8_t *rec, size_t n, int level, const uint8_t **out,
			uint32_t *coding);

/* Decodes the payload src of len bytes (coding as in the frame header)
 * into exactly n bytes at dst, which has room for RT_BIN_ZC_SLACK more
 * (the decoder writes a whole CALL before it checks the length). False with why (a sentence) when the
 * payload is not what the coding says or does not give n bytes. */
bool rt_bin_zc_decode(rt_bin_zc *z, const uint8_t *src, size_t len, uint32_t coding, uint8_t *dst,
		      size_t n, char *why, size_t whylen);

/* The plain CALLs of a frame (kind 1 or 2, no arguments, function,
 * stack and context ids below 2^32, a resource id 1 to 32) as the
 * reader hands them over: model calls, written here, on the thread that
 * decodes the frame (a worker: bin_zpar.c), in their final place, so
 * that the reader only puts its ids in and passes them on by pointer
 * (bin_decode.c, rt_bin_take_calls). Until then a call is raw: fn and
 * bt are the trace's ids, res_type its resource id, timestamp_us the
 * record's time delta (ns), flags 0, args RT_NONE; size 0 for a
 * release. at[k]: where call k's row would be in the records, [start,
 * end). */
typedef struct rt_bin_zcalls {
	rt_call *v;
	uint32_t (*at)[2];
	size_t n, cap;
	/* for the reader's loop, found here (on the worker) in one pass:
	 * runs[j] is the first call of run j + 1, a row (a BT record, ...)
	 * before it, runs[nruns - 1] = n; sorted: the indices go up; fn_or,
	 * bt_or: every function and stack id's bits */
	uint32_t *runs;
	size_t nruns, cruns;
	bool sorted;
	uint32_t fn_or, bt_or;
} rt_bin_zcalls;

void rt_bin_zcalls_free(rt_bin_zcalls *c);

/* rt_bin_zc_decode, with the same checks and messages, but the plain
 * CALLs go to calls (grown as needed; in record order) instead of dst,
 * up to the first record only a row gives back as the reader reads it
 * (a CALL or CALLA of another kind, the tail): dst gets every other
 * record at its place, and nothing where those calls' rows would be.
 * Coding 0 gives no calls. */
bool rt_bin_zc_decode_calls(rt_bin_zc *z, const uint8_t *src, size_t len, uint32_t coding, uint8_t *dst,
			    size_t n, rt_bin_zcalls *calls, char *why, size_t whylen);
/* Tests: with exact set, rt_bin_zc_decode_calls takes the record at a
 * time path (the join) only, not the column at a time one it tries
 * first; both give the same calls, rows and messages. */
void rt_bin_zc_set_exact(rt_bin_zc *z, bool exact);
/* How many frames the column at a time path decoded. */
uint64_t rt_bin_zc_fast_frames(const rt_bin_zc *z);
/* A buffer of at least n bytes of z's, for a frame read from its file
 * (rt_bin_zframe_at), valid until the next call. */
uint8_t *rt_bin_zc_raw(rt_bin_zc *z, size_t n);

#endif
