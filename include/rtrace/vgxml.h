/* Valgrind's XML output (protocols 1 to 6, every tool), both ways.
 *
 * The reader is a streaming expat parser that fills the trace's Valgrind
 * documents (rtrace/vgdoc.h): every element as a node, each <stack> as a
 * backtrace whose frames carry obj/fn/dir/file/line as frame details. An
 * element's text is its character data as read (none when it has child
 * elements; blanks alone in an element that holds others, like
 * <errorcounts>, are none), <usercomment>'s its raw XML (RT_VGXML_RAW),
 * <rawtext>'s its CDATA sections (RT_VGXML_CDATA). It accepts what Valgrind
 * really writes: files cut off when Valgrind or the program was killed
 * (every complete element is kept, a warning says where the input ended),
 * several documents in one file (children traced into one file, the
 * child's document inside its parent's), and protocol 1-3's quirks. It
 * never expands a DTD or an entity.
 *
 * The writer prints protocol 4, memcheck's variant when it builds the
 * document itself, from any model: the documents a trace holds (read from
 * Valgrind XML), or one built from rtrace's own findings (leak verdicts,
 * heap errors) or, for a trace without verdicts, from the blocks still
 * allocated at its end.
 *
 * Findings are held once: rtrace's are the heap checking results
 * (rtrace/heapcheck.h), whose memcheck document is built when it is
 * written and not kept; a trace read from Valgrind XML keeps Valgrind's
 * documents, and its heap checking results are a view of them filled
 * once (rt_vgxml_to_heapcheck); the writer writes the documents. */
#ifndef RTRACE_VGXML_H
#define RTRACE_VGXML_H

#include "rtrace/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtrace/diag.h"
#include "rtrace/trace.h"
#include "rtrace/vgdoc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_vgxml_read_opts {
	/* Called for each complete child of a document's root (<error>,
	 * <errorcounts>, <status>, <clientmsg>, <preamble>, ...), in file
	 * order, once its subtree is in t: a GUI can show each error as it
	 * arrives. Return false to drop the element from t (streaming in
	 * constant memory), true to keep it. NULL keeps everything.
	 * A dropped element goes with the strings first seen in it, unless
	 * the call added strings or backtraces to t: string ids taken from
	 * its nodes, or interned from its texts, are not valid once false is
	 * returned (copy the text instead). Its backtraces and their frames'
	 * details stay. */
	bool (*on_element)(void *ctx, rt_trace *t, uint32_t node);
	/* Receives warnings (input cut off, repaired protocol 1-3 quirks,
	 * unknown elements). */
	void (*warn)(void *ctx, const rt_diag *d);
	void *ctx;
} rt_vgxml_read_opts;

typedef struct rt_vgxml_stats {
	uint64_t bytes;    /* input bytes read */
	uint64_t docs;     /* <valgrindoutput> documents started */
	uint64_t errors;   /* complete <error> elements */
	uint64_t elements; /* complete children of the roots */
	bool truncated;    /* the input ended inside a document */
} rt_vgxml_stats;

/* Reads a whole Valgrind XML file into t. Returns 0 on success (a
 * truncated document is a success, with a warning and stats->truncated),
 * -1 on malformed input with *err filled in ("file:line:col: what was
 * expected"); everything complete before the error is in t. */
RTRACE_API int rt_vgxml_read_fd(rt_trace *t, int fd, const char *name, const rt_vgxml_read_opts *opts,
		     rt_vgxml_stats *stats, rt_diag *err);
RTRACE_API int rt_vgxml_read_mem(rt_trace *t, const char *buf, size_t len, const char *name,
		      const rt_vgxml_read_opts *opts, rt_vgxml_stats *stats, rt_diag *err);

/* Whether the start of a file (len bytes of it) looks like Valgrind XML. */
RTRACE_API bool rt_vgxml_sniff(const char *buf, size_t len);

typedef struct rt_vgxml_write_opts {
	/* Give each error a <suppression> (--gen-suppressions=all), for the
	 * documents the writer builds; documents read keep what they had. */
	bool gen_suppressions;
	/* Leak kinds (bit 1 << enum rt_leak_kind) whose loss records are
	 * written; 0 means memcheck's default, definite and possible, and
	 * RT_VGXML_SHOW_NONE (a bit no kind uses) none. */
	unsigned show_leak_kinds;
	/* The protocol of that document: 0 writes 5 only when it holds a
	 * descriptor error (FdBadClose, FdNotClosed: protocol 5's kinds), 4
	 * otherwise; 4 leaves the descriptor errors out (the readers that
	 * know protocol 4 only refuse them), 5 writes them all in 5. */
	unsigned protocol;
	/* How the stacks are cut, as memcheck cuts its XML's (--num-callers,
	 * --show-below-main; rt_vgxml_stack); NULL: memcheck's defaults, no
	 * limit on the frames. */
	const struct rt_vgxml_stack_opts *stack;
} rt_vgxml_write_opts;

#define RT_VGXML_SHOW_NONE 0x01u

/* The memcheck document of t's rtrace findings: heap errors, loss records
 * grouped as memcheck groups them (for a trace without leak verdicts, the
 * blocks still allocated at its end, said to be no more than that),
 * error and suppression counts, in memcheck 3.19's words. It is built in
 * a new trace (its only document, rt_vgxml_doc_root(d, 0), with the strings,
 * stacks and frame details it refers to), which the caller frees with
 * rt_trace_free; t is not changed. rt_vgxml_write_* build it themselves:
 * this is for looking at the document. */
RTRACE_API rt_trace *rt_vgxml_build(const rt_trace *t, const rt_vgxml_write_opts *opts);

/* How memcheck cuts a stack it prints (rt_vgxml_stack). */
typedef struct rt_vgxml_stack_opts {
	uint32_t num_callers; /* --num-callers: at most this many frames, the
			       * allocator's included; 0: all */
	bool below_main;      /* --show-below-main=yes: keep the frames below main */
} rt_vgxml_stack_opts;

/* The stack of a call to fn from backtrace bt of src as memcheck shows
 * it, the one the documents rt_vgxml_build makes hold: a first frame for
 * the interposed function fn (address 0, memcheck's name for it, the
 * tracer's module), then src's frames at addresses inside their call
 * instructions (return address - 1) with src's details for them, ending
 * at main unless o says otherwise (o NULL: memcheck's defaults, no limit
 * on the frames). Built in dst, frames and their details copied; returns
 * its backtrace id in dst, RT_NONE when nothing is known. */
RTRACE_API uint32_t rt_vgxml_stack(rt_trace *dst, const rt_trace *src, uint32_t fn, uint32_t bt,
				   const rt_vgxml_stack_opts *o);

/* The suppression that hides an error of memcheck's kind ("Memcheck:Leak",
 * "Memcheck:Free") at stack bt of t (one rt_vgxml_stack built), with
 * its extra line aux ("match-leak-kinds: definite") or NULL, as memcheck's
 * --gen-suppressions writes it: "{", "<insert_a_suppression_name_here>",
 * the kind, aux, a "fun:LINKAGE_NAME" line per frame (an inlined call
 * one of its own), "obj:MODULE" where no linkage name is known, "}",
 * each line ending in a newline. malloc'ed. */
RTRACE_API char *rt_vgxml_suppression_text(const rt_trace *t, uint32_t bt, const char *kind, const char *aux);

/* The descriptor errors the memcheck document of t's findings holds
 * in protocol 5 (bad closes, descriptors 3 and up left open): what
 * protocol 4 leaves out. */
RTRACE_API size_t rt_vgxml_fd_error_count(const rt_trace *t);

/* Writes t's Valgrind findings as protocol 4 XML (5 for descriptor
 * errors, see rt_vgxml_write_opts.protocol) in Valgrind 3.19's exact
 * layout: every document t holds, one after the other (documents read in
 * an older protocol are upgraded; a protocol 4 file read and written back
 * is the same bytes); a trace that holds none (rtrace's own findings)
 * gets the memcheck document rt_vgxml_build makes of them, built for the
 * write and discarded. opts is for that document: documents held are
 * written as they are.
 * Returns 0 or -errno on a write error; the _mem form returns a malloc'ed,
 * NUL-terminated buffer of *len bytes. docs/valgrind-xml.md. */
RTRACE_API int rt_vgxml_write_fd(const rt_trace *t, int fd, const rt_vgxml_write_opts *opts);
RTRACE_API char *rt_vgxml_write_mem(const rt_trace *t, const rt_vgxml_write_opts *opts, size_t *len);

/* Fills the trace's heap checking results (rtrace/heapcheck.h) from its
 * Valgrind documents: one rt_leak per loss record (size: its bytes,
 * blocks: its blocks), the leak summary they add up to, and the
 * InvalidFree / MismatchedFree errors; so the text protocol and rtrace's
 * reports show Valgrind's findings. The documents stay the source (the
 * XML writer writes them): the results are a view of them, filled once
 * (later calls do nothing). */
RTRACE_API void rt_vgxml_to_heapcheck(rt_trace *t);

#ifdef __cplusplus
}
#endif
#endif
