/* The suppression set's insides (rtrace/supp.h), shared by the reader
 * (supp_read.c), the matcher (supp_match.c) and the application to a
 * trace (supp_apply.c). */
#ifndef RT_SUPP_INT_H
#define RT_SUPP_INT_H

#include "rtrace/supp.h"
#include "util/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A frame line of a Valgrind suppression. */
enum supp_loc_ty { LOC_FUN, LOC_OBJ, LOC_SRC, LOC_DOTS };

typedef struct supp_loc {
	uint8_t ty;       /* enum supp_loc_ty */
	const char *name; /* the pattern (LOC_DOTS: none) */
	uint32_t line;    /* src:FILE:LINE's line, 0: any */
} supp_loc;

typedef struct supp {
	const char *name, *file, *kind;
	uint32_t line;
	bool lsan;           /* a leak:PATTERN line: name is the pattern */
	unsigned leak_kinds; /* Leak: bit 1 << enum rt_leak_kind of each kind matched */
	const char *extra;   /* Param's parameter, FishyValue's function */
	supp_loc *locs;
	uint32_t nlocs;
} supp;

struct rt_supp_set {
	rt_arena arena; /* names, patterns and frame lines */
	supp *v;
	size_t n, cap;
};

/* Whether su matches an error of kind (leak_kind for "Leak") at frames,
 * with only its first max frame lines (valgrind reads no more than
 * --num-callers of them; 0: all). */
bool rt_supp_match_one(const supp *su, const char *kind, const char *extra, unsigned leak_kind,
		       const rt_supp_frame *f, size_t n,
		       uint32_t max);
/* valgrind's wildcard match: '*' any characters, '?' one, '\' escapes. */
bool rt_supp_wildcard(const char *pat, const char *s);
/* LeakSanitizer's TemplateMatch: a substring unless anchored by '^' or
 * '$', '*' any characters; never an empty s. */
bool rt_supp_lsan_match(const char *pat, const char *s);

#endif
