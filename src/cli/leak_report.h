/* rtrace run's report of the heap checking results a trace carries, in
 * memcheck's words (see leak_report.c). */
#ifndef RT_LEAK_REPORT_H
#define RT_LEAK_REPORT_H

#include "rtrace/heapcheck.h"
#include "rtrace/vgxml.h"

#include <stdbool.h>
#include <stdint.h>

/* Sets of leak kinds: bit (1 << kind) for each enum rt_leak_kind. */
#define LEAK_KINDS_ALL 0x1eu
#define LEAK_KINDS_DEFAULT ((1u << RT_LEAK_DEFINITE) | (1u << RT_LEAK_POSSIBLE))

typedef struct leak_opts {
	unsigned show;       /* kinds whose loss records are printed */
	unsigned errors_for; /* kinds whose loss records count as errors */
	rt_vgxml_stack_opts stack; /* --num-callers, --show-below-main */
	/* The leak check asked for (enum rt_leak_mode, 0: none): the trace's
	 * may be fuller (with --xml-file it runs in full, as memcheck's
	 * does), the report is the one asked for. */
	unsigned mode;
	bool gen_suppressions; /* print each error's suppression after it */
} leak_opts;

/* "definite,possible", "all", "none": false when s names no such set. */
bool leak_parse_kinds(const char *s, unsigned *set);

typedef struct leak_counts {
	uint64_t errors, contexts;
	uint64_t supp_errors, supp_contexts; /* suppressed (--suppressions) */
	bool supp; /* suppressions were given: the ERROR SUMMARY says what they hid */
} leak_counts;

/* Prints the trace's heap errors, then (with the HEAP SUMMARY printed
 * before by the caller) the loss records and the LEAK SUMMARY; returns
 * the errors for the ERROR SUMMARY. */
void leak_report_errors(const rt_trace *t, const leak_opts *o, leak_counts *n);
void leak_report_leaks(const rt_trace *t, const leak_opts *o, leak_counts *n);
void leak_report_end(const leak_counts *n);
/* The leak checks on demand the trace holds, in the order they ran, as
 * memcheck prints the checks its client requests ask for. */
void leak_report_checks(const rt_trace *t, const leak_opts *o, leak_counts *n);
/* memcheck's -v list of the suppressions that were used, from the
 * trace's (rt_supp_apply): "used_suppression: COUNT NAME FILE:LINE". */
void leak_report_used_suppressions(const rt_trace *t);
/* "   at FN" then "   by 0xADDR: fn (file:line)" for each frame, as
 * memcheck prints a stack (t resolved before). */
void leak_print_stack(const rt_trace *t, const rt_vgxml_stack_opts *so, uint32_t fn, uint32_t bt);

/* The fd module's findings, as valgrind --track-fds=yes reports them:
 * bad closes as they happened, then the descriptors open at exit. */
typedef struct fd_track fd_track;
fd_track *fd_track_new(void);
void fd_track_free(fd_track *f);
/* Each call of the trace, in order (before the leak filter). */
void fd_track_call(fd_track *f, rt_trace *t, const rt_call *c);
/* The path descriptor fd last had (a duplicate's is its original's), or
 * NULL. */
const char *fd_track_path(const fd_track *f, const rt_trace *t, uint64_t fd);
/* Prints the report; t holds the calls live at the end. Adds its errors
 * (bad closes, descriptors left open) to n. */
void fd_report(const rt_trace *t, const fd_track *f, const rt_vgxml_stack_opts *so, leak_counts *n);
/* The streams, directory streams and memory mappings open at exit (the
 * file and mmap modules), in rtrace's words; no errors. */
void fd_report_streams(const rt_trace *t, const rt_vgxml_stack_opts *so);

#endif
