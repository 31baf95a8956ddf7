/* The rtrace binary trace format (docs/binary-format.md), as written by
 * librtrace-preload.so: reader into the trace model, and detection. */
#ifndef RTRACE_BINARY_H
#define RTRACE_BINARY_H

#include "rtrace/export.h"

#include <stdbool.h>
#include <stddef.h>

#include "rtrace/diag.h"
#include "rtrace/text.h" /* rt_read_opts, rt_read_stats */
#include "rtrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The file magic: "RTRACE\0" and the format's major version (1). */
#define RT_BIN_MAGIC "RTRACE\0\1"
#define RT_BIN_MAGIC_LEN 8

/* True when the first len bytes of a file start like a binary trace (of
 * any major version: the reader then says which versions it knows). At
 * least 7 bytes are needed; text traces never start so. */
RTRACE_API bool rt_bin_is_binary(const void *head, size_t len);

/* Read a whole binary trace into t, with the text reader's contract: the
 * header (version, arch, timestamp, process, pid, backtrace depth,
 * origin), the resource and context registries, the module maps and the
 * calls, handed to opts->on_call (or appended) in index order across all
 * threads, with interned backtraces (at most opts->max_depth frames).
 * Tracer messages go to opts->warn and stay in the trace as "## " comments.
 *
 * Return 0 on success, -1 on error with *err filled in ("byte offset N:
 * expected ...", line 0). On an error the calls delivered are those below
 * the lowest index that the broken part can have held: a prefix, in index
 * order, of the calls of the threads that have chunks in the input. A
 * trace that just ends (a killed program: data_end 0, zero-filled chunks)
 * is no error and gives every complete record; one cut inside a chunk's
 * header or used bytes is an error, and since any thread may have lost
 * chunks past the cut, each thread then stops where its chunks run out.
 * A file ending at a chunk boundary before data_end is only warned about.
 * stats->lines counts records, stats->bytes the input.
 *
 * rt_bin_read_fd maps a regular file (from its start) and reads anything
 * else (a pipe) into memory first. */
RTRACE_API int rt_bin_read_fd(rt_trace *t, int fd, const char *name,
		   const rt_read_opts *opts, rt_read_stats *stats, rt_diag *err);
RTRACE_API int rt_bin_read_mem(rt_trace *t, const void *buf, size_t len, const char *name,
		    const rt_read_opts *opts, rt_read_stats *stats, rt_diag *err);

/* Compressed traces (docs/binary-format.md, "Compressed traces"): the
 * raw chunks of a trace, each compressed into a frame of a container
 * that the readers above read as they read a raw trace. The raw trace
 * may still be growing: rt_bin_zstep compresses the chunks that are
 * complete (their thread went on to another chunk, or its process ended)
 * and punches them out of the raw file, so that its disk use stays
 * bounded, and rt_bin_zclose finishes the container. `rtrace run` does
 * this while the program runs. */
typedef struct rt_bin_zwriter rt_bin_zwriter;

typedef struct rt_bin_zstats {
	uint64_t chunks;    /* frames written */
	uint64_t raw_bytes; /* their chunks' headers and used bytes */
	uint64_t out_bytes; /* the container's size so far */
} rt_bin_zstats;

/* Starts the container out (created, 0600; an existing file is an
 * error) for the raw trace raw, with zstd level (1 to 19). NULL with
 * *err when either file cannot be opened or raw is no raw trace. */
RTRACE_API rt_bin_zwriter *rt_bin_zopen(const char *raw, const char *out, int level, rt_diag *err);
/* Compresses the chunks of the raw trace that are complete now; with
 * ended set, its process has ended and every chunk is. *done (may be
 * NULL) tells that the process ended cleanly (the raw trace says so):
 * everything is compressed. Returns the chunks compressed, -1 with *err. */
RTRACE_API long rt_bin_zstep(rt_bin_zwriter *w, bool ended, bool *done, rt_diag *err);
/* With finish: compresses the rest (the process has ended), ends the
 * container and removes the raw file. Without: leaves both as they are
 * (the container then reads as truncated). Frees w; 0, or -1 with *err. */
RTRACE_API int rt_bin_zclose(rt_bin_zwriter *w, bool finish, rt_diag *err);
RTRACE_API void rt_bin_zstats_get(const rt_bin_zwriter *w, rt_bin_zstats *s);
/* A raw trace whose process has ended (raw), compressed into its own
 * file, which is then renamed out (an existing out is an error): no file
 * is created or removed (on ext4 without a journal, each removed inode
 * slows every later creation in its group for a minute or more). Done
 * only for a raw trace of at most 4 chunks whose container fits in the
 * raw header's bytes (a short process's trace); rt_bin_zpack returns 1 when done, 0 when not (raw is
 * unchanged: compress it with rt_bin_zopen), -1 with *err. A packer
 * keeps its zstd context (level 1 to 19) from one trace to the next. */
typedef struct rt_bin_zpacker rt_bin_zpacker;
RTRACE_API rt_bin_zpacker *rt_bin_zpacker_new(int level);
RTRACE_API int rt_bin_zpack(rt_bin_zpacker *p, const char *raw, const char *out, rt_diag *err);
RTRACE_API void rt_bin_zpacker_free(rt_bin_zpacker *p);

#ifdef __cplusplus
}
#endif
#endif
