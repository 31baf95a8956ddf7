/* Heap checking results carried by a trace: the leak check's verdict on
 * each block still allocated at exit and its totals (as Valgrind memcheck
 * classifies them), and the heap errors found as the program ran (invalid
 * and mismatched releases). Readers fill them from the binary trace's
 * LEAK, LEAKSUM and HEAPERR records; writers print them. */
#ifndef RTRACE_HEAPCHECK_H
#define RTRACE_HEAPCHECK_H

#include "rtrace/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* memcheck's leak kinds, in its order. */
enum rt_leak_kind {
	RT_LEAK_DEFINITE = 1,  /* no pointer to the block at all */
	RT_LEAK_INDIRECT = 2,  /* reachable only from lost blocks */
	RT_LEAK_POSSIBLE = 3,  /* only interior pointers to it */
	RT_LEAK_REACHABLE = 4, /* a pointer to its start (or accepted by a heuristic) */
};
#define RT_LEAK_KINDS 4

/* memcheck's interior-pointer heuristics that made a block reachable. */
enum rt_leak_heuristic {
	RT_HEUR_NONE = 0,
	RT_HEUR_STDSTRING = 1,
	RT_HEUR_LENGTH64 = 2,
	RT_HEUR_NEWARRAY = 3,
	RT_HEUR_MULTIPLE_INHERITANCE = 4,
};
#define RT_LEAK_HEURISTICS 4

/* The verdict on one block still allocated at exit. */
typedef struct rt_leak {
	uint64_t index;    /* the allocation's call index; 0: not traced */
	uint64_t addr, size;
	uint64_t indirect; /* definitely lost: bytes of the blocks it leaks with it */
	uint64_t blocks;   /* blocks it stands for: 0 is one (a loss record read
			      from Valgrind XML stands for several) */
	uint32_t fn;       /* allocating function (string id) or RT_NONE */
	uint32_t bt;       /* allocation backtrace id or RT_NONE */
	uint8_t kind;      /* enum rt_leak_kind */
	uint8_t heuristic; /* enum rt_leak_heuristic, reachable blocks only */
	uint8_t suppressed; /* its loss record matched a suppression (rtrace/supp.h) */
} rt_leak;

enum rt_leak_mode { RT_LEAK_CHECK_SUMMARY = 1, RT_LEAK_CHECK_FULL = 2 };

/* Totals of the leak check (arrays indexed by kind or heuristic). */
typedef struct rt_leak_summary {
	uint8_t mode; /* enum rt_leak_mode: full also lists each block */
	uint64_t bytes[RT_LEAK_KINDS + 1], blocks[RT_LEAK_KINDS + 1];
	uint64_t heur_bytes[RT_LEAK_HEURISTICS + 1], heur_blocks[RT_LEAK_HEURISTICS + 1];
	uint64_t checked; /* blocks the check looked at */
	uint64_t us;      /* time the check took, in microseconds */
	/* Blocks of suppressed loss records and their direct bytes, left out
	 * of the kinds above (memcheck's "suppressed:"). */
	uint64_t suppressed_bytes, suppressed_blocks;
} rt_leak_summary;

enum rt_heap_error_kind {
	RT_ERR_INVALID_FREE = 1,    /* release of a pointer that is no live block */
	RT_ERR_MISMATCHED_FREE = 2, /* released by another family than allocated */
	RT_ERR_FISHY_VALUE = 3,     /* a size argument negative as a signed number */
};

/* The argument of a FishyValue error, as memcheck names it. */
enum rt_fishy_arg { RT_ARG_SIZE = 1, RT_ARG_NMEMB = 2 };

/* What the released pointer was. */
enum rt_block_state {
	RT_BLOCK_UNKNOWN = 0, /* not stack'd, malloc'd or (recently) free'd */
	RT_BLOCK_LIVE = 1,    /* in (or at) a live block: alloc'd */
	RT_BLOCK_FREED = 2,   /* in (or at) a block freed recently: free'd */
};

typedef struct rt_heap_error {
	uint64_t index; /* call index of the release (its CALL may be missing
			   when the allocator aborted the program) */
	uint64_t addr;  /* the pointer released; FishyValue: the argument's value */
	uint32_t fn;    /* releasing function (string id) */
	uint32_t bt;    /* where it was released, or RT_NONE */
	uint8_t kind;   /* enum rt_heap_error_kind */
	uint8_t block;  /* enum rt_block_state (FishyValue: RT_BLOCK_UNKNOWN) */
	uint64_t block_addr, block_size;
	uint32_t alloc_fn, alloc_bt; /* the block's allocation, RT_NONE if unknown */
	uint32_t free_fn, free_bt;   /* its release (freed blocks), RT_NONE if unknown */
	uint8_t suppressed; /* matched a suppression (rtrace/supp.h) */
	uint8_t arg; /* FishyValue: enum rt_fishy_arg; fn is the function memcheck
			names (memalign for posix_memalign, valloc, aligned_alloc;
			malloc for realloc(NULL, n)), bt the call's stack */
} rt_heap_error;

/* NULL when the trace has no leak check results. */
RTRACE_API const rt_leak_summary *rt_trace_leak_summary(const rt_trace *t);
RTRACE_API void rt_trace_set_leak_summary(rt_trace *t, const rt_leak_summary *s);

RTRACE_API void rt_trace_add_leak(rt_trace *t, const rt_leak *l);
RTRACE_API size_t rt_trace_leak_count(const rt_trace *t);
RTRACE_API const rt_leak *rt_trace_leak_at(const rt_trace *t, size_t i);
RTRACE_API rt_leak *rt_trace_leaks(rt_trace *t);

RTRACE_API void rt_trace_add_heap_error(rt_trace *t, const rt_heap_error *e);
RTRACE_API size_t rt_trace_heap_error_count(const rt_trace *t);
RTRACE_API const rt_heap_error *rt_trace_heap_error_at(const rt_trace *t, size_t i);
RTRACE_API rt_heap_error *rt_trace_heap_errors(rt_trace *t);

/* Blocks of one leak kind allocated at one place (function and stack):
 * memcheck's loss record. */
typedef struct rt_loss_record {
	uint8_t kind;    /* enum rt_leak_kind */
	uint32_t fn, bt; /* as in rt_leak */
	uint64_t bytes;    /* direct bytes: the blocks' own sizes */
	uint64_t indirect; /* definitely lost: bytes indirectly lost through them */
	uint64_t blocks;
	uint8_t suppressed; /* its blocks matched a suppression: not reported */
} rt_loss_record;

/* Groups n leaks into loss records as memcheck does (one per kind and
 * allocation place; a leak with blocks > 1 counts that many blocks) in
 * memcheck's order: total bytes (direct + indirect), then kind, then
 * blocks, then place. Returns a malloc'ed array of *count records (NULL
 * when n is 0). */
RTRACE_API rt_loss_record *rt_loss_records(const rt_leak *leaks, size_t n, size_t *count);
/* The same for the trace's leak verdicts. */
RTRACE_API rt_loss_record *rt_trace_loss_records(const rt_trace *t, size_t *count);

/* A leak check on demand (`rtrace run --check-signal`, `rtrace check`):
 * the loss records of every kind at that moment, and memcheck's totals.
 * The mode says what was asked to be shown: everything, or (memcheck's
 * `leak_check ... increased`) only what grew since the previous check;
 * the deltas come from the previous check's loss records
 * (rt_check_deltas). Checks are numbered from 1 in the order they ran. */
enum rt_check_mode { RT_CHECK_FULL = 1, RT_CHECK_INCREASED = 2 };

typedef struct rt_leak_check {
	uint64_t number;
	uint64_t index; /* the last call index handed out when it ran */
	uint8_t mode;   /* enum rt_check_mode */
	uint64_t checked, us; /* blocks looked at, microseconds it took */
	uint64_t bytes[RT_LEAK_KINDS + 1], blocks[RT_LEAK_KINDS + 1];
	rt_loss_record *loss; /* its loss records, in the order read */
	size_t nloss;
} rt_leak_check;

/* Adds a check (its loss records copied) to the list, kept in number
 * order (checks read from several threads' chunks come in any order). */
RTRACE_API void rt_trace_add_check(rt_trace *t, const rt_leak_check *c);
/* Adds a loss record to the check numbered number (the last one with
 * that number); false when there is none. */
RTRACE_API bool rt_trace_add_check_loss(rt_trace *t, uint64_t number, const rt_loss_record *l);
RTRACE_API size_t rt_trace_check_count(const rt_trace *t);
RTRACE_API const rt_leak_check *rt_trace_check_at(const rt_trace *t, size_t i);
RTRACE_API rt_leak_check *rt_trace_checks(rt_trace *t);

/* A loss record of a check beside its value at the check before, as
 * memcheck keeps them: old_* are the previous check's (0 for a record new
 * since), and a record of the previous check with blocks that has none
 * now is listed with zeros (memcheck numbers it too). */
typedef struct rt_loss_delta {
	rt_loss_record now;
	uint64_t old_bytes, old_indirect, old_blocks;
} rt_loss_delta;

/* The loss records of cur against prev (NULL: the first check) in
 * memcheck's order (rt_loss_records'); a malloc'ed array of *count. */
RTRACE_API rt_loss_delta *rt_check_deltas(const rt_leak_check *prev, const rt_leak_check *cur, size_t *count);
/* Whether a check of mode shows d (memcheck's get_printing_rules before
 * the kinds: any block, or, increased, bytes or blocks grew). */
RTRACE_API bool rt_check_shows(const rt_loss_delta *d, unsigned mode);
/* v grouped, with " (+N)" or " (-N)" against old when delta ("300 (+100)",
 * memcheck's increased mode); buf: 64 bytes. Returns buf. */
RTRACE_API const char *rt_grouped_delta(uint64_t now, uint64_t old, bool delta, char *buf);
/* memcheck's line for loss record i (from 0) of n: "100 (+100) bytes in
 * 1 (+1) blocks are definitely lost in loss record 3 of 4" (deltas when
 * delta). Returns buf. */
RTRACE_API const char *rt_loss_delta_text(const rt_loss_delta *d, bool delta, size_t i, size_t n, char *buf,
					  size_t cap);

/* A suppression that suppressed findings of the trace (rt_supp_apply),
 * as memcheck lists it (-v's used_suppression, the XML's <suppcounts>),
 * in memcheck's order. */
typedef struct rt_supp_used {
	const char *name, *file; /* the suppression's name, its file as given */
	uint32_t line;           /* of its name */
	uint64_t count;          /* heap errors and loss records suppressed */
	bool leak;               /* a leak suppression: */
	uint64_t bytes, blocks;  /* the bytes (direct and indirect, as memcheck
				  * counts them here) and blocks it suppressed */
} rt_supp_used;

/* Adds u (its strings copied) at the end of the list. */
RTRACE_API void rt_trace_add_supp_used(rt_trace *t, const rt_supp_used *u);
RTRACE_API size_t rt_trace_supp_used_count(const rt_trace *t);
RTRACE_API const rt_supp_used *rt_trace_supp_used_at(const rt_trace *t, size_t i);

/* v with its digits grouped by three ("1,234,567"), as memcheck prints
 * sizes and counts; buf: 27 bytes or more. Returns buf. */
RTRACE_API const char *rt_grouped(uint64_t v, char *buf);

/* "definitely lost", "indirectly lost", "possibly lost", "still reachable". */
RTRACE_API const char *rt_leak_kind_name(unsigned kind);
/* "stdstring", "length64", "newarray", "multipleinheritance". */
RTRACE_API const char *rt_leak_heuristic_name(unsigned heuristic);
/* "InvalidFree", "MismatchedFree" (Valgrind's error kind names). */
RTRACE_API const char *rt_heap_error_kind_name(unsigned kind);
/* A FishyValue error in memcheck's words, into buf (cap bytes): "Argument
 * 'size' of function malloc has a fishy (possibly negative) value: -1".
 * Returns buf. */
RTRACE_API const char *rt_heap_error_fishy_what(const rt_trace *t, const rt_heap_error *e, char *buf,
						size_t cap);
/* A FishyValue error's "function(argument)" in memcheck's names
 * ("malloc(size)", "__builtin_new(size)"): the line after the kind of
 * its suppression, which a suppression must equal to match it. */
RTRACE_API const char *rt_heap_error_fishy_aux(const rt_trace *t, const rt_heap_error *e, char *buf,
					       size_t cap);

#ifdef __cplusplus
}
#endif
#endif
