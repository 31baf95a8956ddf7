/* Callgrind profiles: the format Callgrind and Cachegrind write, and
 * Xdebug's profiler and `pprof -callgrind` too. A model of what a profile
 * says, a streaming reader for both revisions of the format (Valgrind
 * 3.2.1's and the current one), and callgrind_annotate's report.
 *
 * The model aggregates as it is read: names (objects, files, functions)
 * are interned per kind with small ids; a function is (object, file,
 * name); a "code" is the part of a function that comes from one source
 * file (its own, or one inlined into it: fi=/fe=); self costs are kept per
 * (code, position), calls per (code, call site, callee) with their count
 * and inclusive cost, jumps per (source, target). Memory follows the
 * number of distinct names and positions, not the size of the file.
 * Position lines carry no information of their own (the format says so):
 * a function exists once a cost, call or jump line uses it, so fn= lines
 * that only define a compressed name make none. */
#ifndef RTRACE_CALLGRIND_H
#define RTRACE_CALLGRIND_H

#include "rtrace/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtrace/diag.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CG_NONE UINT32_MAX

/* The three name spaces: ob=/cob=, fl=/fi=/fe=/cfi=/cfl=/jfi=, fn=/cfn=/jfn=. */
enum cg_kind { CG_OBJECT = 0, CG_FILE = 1, CG_FUNCTION = 2 };

/* One term of a derived event's formula: factor * raw event. */
typedef struct cg_term {
	uint64_t factor;
	uint32_t slot; /* cost slot of a raw event */
} cg_term;

/* An event type. Raw events have data in cost lines ("events:") and a
 * slot in every cost vector; derived ones ("event: NAME = FORMULA") are
 * computed from raw events. */
typedef struct cg_event {
	const char *name;
	const char *long_name; /* "event: NAME : LONG NAME", or NULL */
	const char *formula;   /* the formula as written, or NULL */
	const cg_term *terms;  /* derived: the formula over raw events */
	uint32_t nterms;
	uint32_t slot; /* raw: index in cost vectors; CG_NONE otherwise */
} cg_event;

/* Subposition kinds of cost lines ("positions:"), in file order. */
enum cg_pos_kind { CG_POS_INSTR = 1, CG_POS_BB = 2, CG_POS_LINE = 3 };

typedef struct cg_desc {
	const char *text;  /* after "desc:" and its spaces, e.g. "I1 cache: 32768 B" */
	const char *key;   /* before the first ':' ("I1 cache") */
	const char *value; /* after it and its spaces ("32768 B") */
} cg_desc;

enum {
	CG_HAS_PID = 0x01,
	CG_HAS_THREAD = 0x02,
	CG_HAS_PART = 0x04,
	CG_HAS_SUMMARY = 0x08,
	CG_HAS_TOTALS = 0x10,
	CG_PART_TRUNCATED = 0x20, /* the input ended in this part's middle */
};

/* A part: one dump of one process/thread, with its own header. */
typedef struct cg_part {
	const char *source;  /* name of the input it was read from */
	uint64_t first_line; /* its first header line in that input */
	uint32_t version;    /* the file's "version:", 1 when absent */
	const char *creator; /* the file's "creator:", or NULL */
	const char *cmd;     /* or NULL */
	uint64_t pid, thread, number;
	unsigned flags; /* CG_HAS_*, CG_PART_TRUNCATED */
	const cg_desc *desc;
	uint32_t ndesc;
	uint32_t npositions;
	uint8_t positions[3]; /* enum cg_pos_kind, in cost line order */
	/* Columns of the cost lines: profile event indices. */
	const uint32_t *events;
	uint32_t nevents;
	/* "summary:" and "totals:" as given, per column (n* values given). */
	const uint64_t *summary, *totals;
	uint32_t nsummary, ntotals;
	const uint64_t *sum; /* self cost read, per column */
	uint64_t cost_lines;
} cg_part;

typedef struct cg_fn {
	uint32_t object, file, name; /* name ids */
	/* Order of the last fn= line naming it (0: only ever called): which
	 * of several same-named functions was seen last. */
	uint64_t last_named;
} cg_fn;

/* A function's code from one source file, in one part (part 0 for all
 * when parts are merged). */
typedef struct cg_code {
	uint32_t fn;   /* cg_fn index */
	uint32_t file; /* file name id */
	uint32_t part;
} cg_code;

/* Values given for the first `given` slots (producers leave out trailing
 * zero costs); v has cg_profile_slots() values, the rest 0. */
typedef struct cg_cost {
	uint64_t addr, line; /* 0 for a subposition the part does not have */
	uint32_t code;
	uint32_t given;
	const uint64_t *v;
} cg_cost;

enum { CG_CALL_FILE_GIVEN = 0x1 /* the callee's file was named (cfi=/cfl=) */ };

typedef struct cg_call {
	uint64_t addr, line;       /* the call site */
	uint64_t to_addr, to_line; /* the target position, as first given */
	uint32_t code;             /* the caller's code at the call site */
	uint32_t callee;           /* cg_fn index */
	uint32_t given;
	uint32_t flags; /* CG_CALL_* */
	uint64_t count;
	const uint64_t *v; /* inclusive cost of the calls */
} cg_call;

typedef struct cg_jump {
	uint64_t addr, line;       /* source */
	uint64_t to_addr, to_line; /* target */
	uint32_t code;             /* source code */
	uint32_t to_fn, to_file;   /* target function (cg_fn) and file (name id) */
	uint32_t conditional;      /* 1: jcnd=, 0: jump= */
	uint64_t executed, followed; /* followed == executed for jump= */
} cg_jump;

typedef struct cg_profile cg_profile;

RTRACE_API cg_profile *cg_profile_new(void);
RTRACE_API void cg_profile_free(cg_profile *p);

RTRACE_API uint32_t cg_profile_name_count(const cg_profile *p, enum cg_kind kind);
RTRACE_API const char *cg_profile_name(const cg_profile *p, enum cg_kind kind, uint32_t id);
/* Cost vectors' length: the number of raw events. */
RTRACE_API uint32_t cg_profile_slots(const cg_profile *p);

RTRACE_API const cg_event *cg_profile_events(const cg_profile *p, size_t *n);
/* Index of the event named `name`, or CG_NONE. */
RTRACE_API uint32_t cg_profile_find_event(const cg_profile *p, const char *name);
/* Event ev's value for the cost vector v of which `given` slots were
 * given; *defined (may be NULL) tells whether any of them was. */
RTRACE_API uint64_t cg_event_value(const cg_profile *p, uint32_t ev, const uint64_t *v,
			uint32_t given, bool *defined);

RTRACE_API const cg_part *cg_profile_parts(const cg_profile *p, size_t *n);
RTRACE_API const cg_fn *cg_profile_fns(const cg_profile *p, size_t *n);
RTRACE_API const cg_code *cg_profile_codes(const cg_profile *p, size_t *n);
RTRACE_API const cg_cost *cg_profile_costs(const cg_profile *p, size_t *n);
RTRACE_API const cg_call *cg_profile_calls(const cg_profile *p, size_t *n);
RTRACE_API const cg_jump *cg_profile_jumps(const cg_profile *p, size_t *n);

/* --- reader --- */

enum {
	CG_READ_MERGE_PARTS = 0x1, /* one set of costs for all parts */
	CG_READ_LINES = 0x2,       /* drop instruction addresses: keep lines */
};

/* Longest line the reader accepts (a binary file cannot make it buffer
 * without bound). */
#define CG_MAX_LINE (1u << 20)

typedef struct cg_read_opts {
	unsigned flags; /* CG_READ_* */
	/* Warnings: totals that do not add up, redefined names, a truncated
	 * input. NULL drops them. */
	void (*warn)(void *ctx, const rt_diag *d);
	void *ctx;
} cg_read_opts;

typedef struct cg_read_stats {
	uint64_t lines, bytes;
	uint32_t parts;
	bool truncated; /* the input ended inside a line or a record */
} cg_read_stats;

/* Reads one profile file into p; call again to add more files' parts.
 * Returns 0, or -1 with *err filled in ("expected ..." at file:line:col):
 * everything read before the error is in p. A truncated input (the
 * profiled program was killed while the profile was written) is not an
 * error: what was complete is kept and a warning says where it ended. */
RTRACE_API int cg_read_fd(cg_profile *p, int fd, const char *name, const cg_read_opts *o,
	       cg_read_stats *st, rt_diag *err);
RTRACE_API int cg_read_mem(cg_profile *p, const char *buf, size_t len, const char *name,
		const cg_read_opts *o, cg_read_stats *st, rt_diag *err);

/* --- writer --- */

typedef struct cg_write_opts {
	bool no_compress_names; /* full names on every line (--compress-strings=no),
				   but for names that start like an id, "(1)..." */
	bool no_compress_pos;   /* absolute subpositions (--compress-pos=no) */
	bool lines_only;        /* leave instruction addresses out */
} cg_write_opts;

/* Writes p in the Callgrind format: every part with its header, its
 * functions' cost lines, calls and jumps (grouped by function and
 * sorted by position), summary: as given and totals: (where the part
 * had one) as the sum of the cost lines written. The numbers a reader adds up are the model's, so
 * reading the output gives the same profile. opts may be NULL (names
 * and positions compressed). Returns 0 or -errno. */
RTRACE_API int cg_write_fd(const cg_profile *p, int fd, const cg_write_opts *opts);
/* The same into a malloc'ed, NUL-terminated buffer of *len bytes. */
RTRACE_API char *cg_write_mem(const cg_profile *p, const cg_write_opts *opts, size_t *len);

/* --- allocation profiles from rtrace traces --- */

struct rt_trace;

typedef struct cg_trace_opts {
	bool instr;       /* positions: instr line (the frames' addresses) */
	const char *cmd;  /* cmd: line; NULL: the trace's process name */
	/* told once when costs add up past 2^64-1: such sums are held there
	 * rather than wrapping (may be NULL) */
	void (*warn)(void *ctx, const rt_diag *d);
	void *ctx;
} cg_trace_opts;

/* An allocation profile of trace t (src/lib/callgrind/cg_trace.c): per resource
 * type, events for its allocation calls, their sizes and, the leaks
 * (leak verdicts: definitely and indirectly lost blocks; without
 * verdicts: what is still allocated at the end of the trace). Self cost
 * at each allocation site (the innermost frame of its backtrace), calls=
 * with the inclusive cost along each backtrace, every inlined function a
 * function of its own. Frames are named by the trace's frame details
 * (resolve the trace first) or their texts. opts may be NULL. */
RTRACE_API cg_profile *cg_profile_from_trace(struct rt_trace *t, const cg_trace_opts *opts);

/* The same profile, streaming (src/lib/callgrind/cg_stream.c): the calls
 * are accounted as a reader hands them over (cg_stream_feed is an
 * rt_read_opts.on_call) and not kept; memory follows the distinct
 * backtraces and the blocks live at each moment. The profile's events
 * also hold, for memory, Temporary (allocations freed with no allocation
 * in between) and PeakBytes (bytes live at the peak heap consumption),
 * rtrace heap's figures. After the pass, cg_stream_end appends to t one
 * call per backtrace with a cost, for the resolver (resolve t then, or
 * not), and cg_stream_profile builds the profile from t as it is then
 * (once: the pass's costs go into it).
 * cg_profile_from_trace feeds a loaded trace's calls the same way. */
struct rt_call;
typedef struct cg_stream cg_stream;
RTRACE_API cg_stream *cg_stream_new(void);
RTRACE_API void cg_stream_free(cg_stream *s);
RTRACE_API void cg_stream_feed(void *s, struct rt_trace *t, const struct rt_call *c);
/* calls[0 .. n) in order, as cg_stream_feed each would (a reader's
 * rt_read_opts.on_calls): the heap profile takes them as one batch. */
RTRACE_API void cg_stream_feed_calls(void *s, struct rt_trace *t, const struct rt_call *calls, size_t n);
RTRACE_API void cg_stream_end(cg_stream *s, struct rt_trace *t);
RTRACE_API cg_profile *cg_stream_profile(cg_stream *s, struct rt_trace *t, const cg_trace_opts *opts);

/* Whether a file starting with head[0 .. n) looks like a Callgrind or
 * Cachegrind profile: its first line that is not blank or a comment is
 * one of the format's header lines (or it starts "# callgrind format"). */
RTRACE_API bool cg_sniff(const char *head, size_t n);

/* --- callgrind_annotate's report --- */

typedef struct cg_annotate_opts {
	const char *input;      /* the profile as named on the command line */
	bool searched;          /* it was found by name: "Reading data from" */
	const char **show;      /* event names to show; NULL: all */
	uint32_t nshow;
	const char **sort;      /* sort events; NULL: the events in order */
	const char **sort_thresholds; /* per sort event: "N" as given, or NULL */
	uint32_t nsort;
	const char *threshold;  /* percentage as given; NULL: "99" */
	bool no_percs;          /* --show-percs=no */
	bool no_auto;           /* --auto=no */
	bool inclusive;
	bool tree_caller, tree_calling;
	uint32_t context; /* lines around annotated ones (8) */
	const char **include_dirs; /* as given */
	uint32_t ninclude;
	const char **user_files; /* source files named on the command line */
	uint32_t nuser;
	const char *cwd; /* prefix stripped from file names; NULL: none */
} cg_annotate_opts;

/* Writes callgrind_annotate's report on p to fd, byte for byte what
 * callgrind_annotate 3.19 prints (where it orders by hash order, ties go
 * by name). Returns 0; -EINVAL with msg filled in when an option names
 * an event the profile does not have (nothing is written); -errno on a
 * write error. */
RTRACE_API int cg_annotate_write(const cg_profile *p, int fd, const cg_annotate_opts *o,
		      char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif
