/* Suppressions: Valgrind suppression files (memcheck's, the format of
 * valgrind --suppressions) and LeakSanitizer suppression files
 * (leak:PATTERN lines), read into one set, matched against stacks, and
 * applied to a trace's heap checking results as memcheck applies them.
 *
 * A Valgrind file is a list of blocks: "{", a name, "Tool:Kind" (tools
 * comma separated), a line of its own for some kinds (Memcheck:Leak's
 * "match-leak-kinds: definite,possible", Memcheck:Param's parameter),
 * then the frames from the innermost out: "fun:NAME", "obj:PATH",
 * "src:FILE[:LINE]" with the wildcards '*' and '?' ('\' escapes), or
 * "..." for any number of frames, then "}". '#' starts a comment line.
 * Blocks of other tools are read and ignored. fun: matches a frame's
 * linkage (mangled) name, as valgrind matches it; the frames are
 * memcheck's: the allocator's first, inlined calls each a frame of their
 * own, and the block need only match the start of the stack.
 *
 * A LeakSanitizer file has "leak:PATTERN" lines ('#' comments): a leak is
 * suppressed when PATTERN matches the function (demangled), source file or
 * module of any of its frames, as LeakSanitizer matches it: anywhere in
 * the name unless anchored with '^' or '$', '*' any characters.
 *
 * The two formats are told apart by content: a file whose first line
 * (after comments and blank lines) is "{" is Valgrind's. */
#ifndef RTRACE_SUPP_H
#define RTRACE_SUPP_H

#include "rtrace/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtrace/diag.h"
#include "rtrace/trace.h"
#include "rtrace/vgxml.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_supp_set rt_supp_set;

RTRACE_API rt_supp_set *rt_supp_new(void);
RTRACE_API void rt_supp_free(rt_supp_set *s);

/* Adds the suppressions of a file's contents (buf, len bytes; name as
 * messages and used-suppression lines give it). Returns 0, or -1 on a
 * malformed file with *err saying where ("file:line:col: expected
 * ..."); the suppressions read before the error stay in the set. */
RTRACE_API int rt_supp_read_mem(rt_supp_set *s, const char *buf, size_t len, const char *name, rt_diag *err);
/* The same for the file at path; an unreadable file is an error too. */
RTRACE_API int rt_supp_read_file(rt_supp_set *s, const char *path, rt_diag *err);

/* The suppressions read, in file order (those of other tools left out). */
RTRACE_API size_t rt_supp_count(const rt_supp_set *s);

typedef struct rt_supp_info {
	const char *name;  /* the block's name; LeakSanitizer's: the line */
	const char *file;  /* the file name as given */
	uint32_t line;     /* the line of its name (LeakSanitizer: of the line) */
	const char *kind;  /* "Leak", "Free", ... (LeakSanitizer: "Leak") */
	bool lsan;         /* a LeakSanitizer suppression */
} rt_supp_info;

RTRACE_API void rt_supp_get(const rt_supp_set *s, size_t i, rt_supp_info *out);

/* A frame as suppressions see it: fn is the name valgrind matches (the
 * linkage name), shown the name LeakSanitizer matches (demangled; NULL:
 * fn). NULLs for what is unknown. */
typedef struct rt_supp_frame {
	const char *fn, *shown, *obj, *file;
	uint32_t line;
} rt_supp_frame;

/* Whether suppression i matches an error of memcheck's kind ("Leak",
 * "Free", ...; leak_kind: enum rt_leak_kind for "Leak") at the stack
 * frames[0..n), innermost first. */
RTRACE_API bool rt_supp_matches(const rt_supp_set *s, size_t i, const char *kind, unsigned leak_kind,
				const rt_supp_frame *frames, size_t n);

/* The frames of backtrace bt of t (a stack rt_vgxml_stack built), each
 * entry of an inline chain a frame, as suppressions match them; a
 * malloc'ed array of *n (strings are t's). */
RTRACE_API rt_supp_frame *rt_supp_frames(const rt_trace *t, uint32_t bt, size_t *n);

/* Applies the set to t's heap checking results as memcheck applies its
 * suppressions: each heap error context and each loss record is matched
 * once, in memcheck's order (errors as they happened, then loss records
 * in their order), against the suppressions in valgrind's search order
 * (the one that matched last first). What matches is marked suppressed
 * (rt_leak.suppressed, rt_heap_error.suppressed) and left out of the
 * leak summary's kinds, its blocks and direct bytes counted as
 * suppressed; each suppression used is added to the trace's used
 * suppressions (rt_trace_supp_used). Stacks are built as memcheck's
 * (rt_vgxml_stack with so, below main included). */
RTRACE_API void rt_supp_apply(const rt_supp_set *s, rt_trace *t, const rt_vgxml_stack_opts *so);

#ifdef __cplusplus
}
#endif
#endif
