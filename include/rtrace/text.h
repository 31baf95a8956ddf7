/* The rtrace text protocol (sp-rtrace's format): streaming reader and the
 * writer that reproduces sp-rtrace's post-processor layout byte for byte. */
#ifndef RTRACE_TEXT_H
#define RTRACE_TEXT_H

#include "rtrace/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtrace/diag.h"
#include "rtrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest line the reader accepts; longer ones are an error, so that a
 * binary or corrupt file cannot make the reader buffer without bound. */
#define RT_TEXT_MAX_LINE (1u << 20)

typedef struct rt_read_opts {
	/* Keep at most this many frames of each backtrace (0 = all). */
	uint32_t max_depth;
	/* Receives each call once its backtrace is known. NULL appends the
	 * call to the trace. The call's backtrace is already interned. */
	void (*on_call)(void *ctx, rt_trace *t, const rt_call *c);
	/* Receives warnings (lines kept as comments, stray frames). */
	void (*warn)(void *ctx, const rt_diag *d);
	void *ctx;
	/* Binary compressed traces: frames are decompressed and decoded on
	 * threads - 1 worker threads ahead of the reader (0 or 1: none, the
	 * reader decodes each itself). Calls, warnings and errors are the
	 * same whatever the number; callbacks run on the caller's thread. */
	unsigned threads;
	/* Binary traces: when set, receives the calls by batches instead of
	 * on_call, in index order, each as on_call would (the trace may hold
	 * definitions read after it); warnings come between batches, after
	 * the calls delivered before them. A batch is the reader's memory,
	 * valid during the call only (a compressed frame's run of calls, in
	 * place: any length). Text traces use on_call: set both. */
	void (*on_calls)(void *ctx, rt_trace *t, const rt_call *c, size_t n);
} rt_read_opts;

typedef struct rt_read_stats {
	uint64_t lines, calls, bytes;
	/* Binary traces: why the trace ends before its process did ("trace
	 * incomplete: tracing stopped at call N: <reason>"), or empty. */
	char incomplete[256];
} rt_read_stats;

/* Read a whole text trace into t. Return 0 on success, -1 on error with
 * *err filled in; everything read before the error is in t (and was passed
 * to on_call), so callers can still write a partial result. */
RTRACE_API int rt_text_read_fd(rt_trace *t, int fd, const char *name,
		    const rt_read_opts *opts, rt_read_stats *stats, rt_diag *err);
RTRACE_API int rt_text_read_mem(rt_trace *t, const char *buf, size_t len, const char *name,
		     const rt_read_opts *opts, rt_read_stats *stats, rt_diag *err);

/* True when the first n bytes of an input start with a text trace's header
 * line: empty, or "key=value" fields separated by commas, each key a word
 * (letters, digits, '_', '-', '.', spaces inside). A line cut at n is
 * judged on what it holds. Anything else is no text trace. */
RTRACE_API bool rt_text_sniff(const char *head, size_t n);

enum rt_sort {
	RT_SORT_SIZE_ASC = 0, /* sp-rtrace's default */
	RT_SORT_SIZE_DESC,
	RT_SORT_COUNT_ASC,
	RT_SORT_COUNT_DESC,
};

typedef struct rt_write_opts {
	unsigned filter_bits; /* header filter field, RT_FILTER_* */
	bool compress;        /* group calls by backtrace */
	enum rt_sort sort;    /* order of groups when compressing */
	bool leak_summary;    /* "# Resource - ..." totals at the end */
	/* Print the context registry; sp-rtrace drops it when a context
	 * filter was applied. */
	bool contexts;
} rt_write_opts;

/* Write t in the text protocol. Return 0, or -errno on a write error. */
RTRACE_API int rt_text_write_fd(const rt_trace *t, int fd, const rt_write_opts *opts);
/* Same into a malloc'ed buffer (caller frees); for tests and embedding. */
RTRACE_API char *rt_text_write_mem(const rt_trace *t, const rt_write_opts *opts, size_t *len);

/* The text the protocol prints after a frame's address for details fi
 * (its innermost function): "fn() at /src/file.c:12", "fn() from
 * /lib/x.so", "from /bin/app", as sp-rtrace's resolver wrote it, into
 * buf (n bytes, NUL-terminated, cut short when too small). Returns the
 * length the whole text has. Frames read from a text trace keep the text
 * as read (rt_frame.text), and their details are what it says. */
RTRACE_API size_t rt_text_frame_format(const rt_trace *t, const rt_frame_info *fi, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
