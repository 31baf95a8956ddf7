/* Frames of a compressed trace decoded ahead on worker threads
 * (bin_zpar.c), for the merge of bin_merge.c. */
#ifndef RT_BIN_ZPAR_H
#define RT_BIN_ZPAR_H

#include "bin_zchunk.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A frame decoded: its chunk header and records in buf (cap bytes), its
 * plain CALLs in calls; ok false with why when it does not decode. */
typedef struct rt_bin_zframe {
	uint8_t *buf;
	size_t cap;
	rt_bin_zcalls calls;
	bool ok;
	char why[200];
} rt_bin_zframe;

/* The frame at byte offset off of the trace (its header, then its
 * payload): read from fd into z's buffer, or where it is in base when fd
 * is -1 or the read fails. */
const uint8_t *rt_bin_zframe_at(rt_bin_zc *z, int fd, const uint8_t *base, uint64_t off);
/* Decodes the frame whose header is at h (its payload follows) into f,
 * growing its buffers: what the merge does inline, and each worker. */
void rt_bin_zframe_decode(rt_bin_zc *z, const uint8_t *h, rt_bin_zframe *f);

typedef struct rt_bin_zpar rt_bin_zpar;

/* workers threads decoding frames of the trace at base (read from fd,
 * or -1: in base) into at most slots frames at a time; NULL when no
 * thread starts. */
rt_bin_zpar *rt_bin_zpar_new(const uint8_t *base, int fd, unsigned workers, unsigned slots);
/* Stops the workers (a frame being decoded is finished first), frees all. */
void rt_bin_zpar_free(rt_bin_zpar *p);
/* Queues the frame at byte offset off; its job's number in *job, or
 * false when every slot is taken (the caller decodes it itself). */
bool rt_bin_zpar_submit(rt_bin_zpar *p, uint64_t off, uint32_t *job);
/* The frame of job, decoded (by a worker, waited for, or here when no
 * worker has started it; while waiting, the frames queued after it are
 * decoded here), swapped into f, whose buffers the slot keeps
 * for its next frame; the slot is free again. */
void rt_bin_zpar_take(rt_bin_zpar *p, uint32_t job, rt_bin_zc *z, rt_bin_zframe *f);
/* For tests: while held, a worker that took a frame waits before
 * decoding it (as one slowed down by a busy machine). */
void rt_bin_zpar_hold(rt_bin_zpar *p, bool hold);
/* The workers waiting so, and the frames rt_bin_zpar_take decoded for
 * them while it waited for another. */
void rt_bin_zpar_counts(rt_bin_zpar *p, unsigned *held, uint64_t *helped);

#endif
