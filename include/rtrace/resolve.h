/* Resolving backtrace addresses to functions, source files and lines, with
 * elfutils (libdwfl/libdw). Modules are placed where the trace's own
 * memory map says they were. Each resolved frame gets its details (module
 * and inline chain, rt_trace_frame_info), which every writer but the text
 * writer uses, and the text the text protocol prints after its address,
 * sp-rtrace's ("func() at /src/file.c:12", "func() from /lib/x.so",
 * "from /bin/app"), which also tells frames at one address apart when
 * modules were loaded there at different times. */
#ifndef RTRACE_RESOLVE_H
#define RTRACE_RESOLVE_H

#include "rtrace/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_resolve_opts {
	/* Directories searched for separate debug info before the system's
	 * (by build id under DIR/.build-id/, and by .gnu_debuglink name). */
	const char *const *debug_dirs;
	size_t ndebug_dirs;
	/* A copy of the traced machine's file system: modules and
	 * /usr/lib/debug are looked up under it. NULL: this machine. */
	const char *root;
	/* Addresses are instruction addresses rather than return addresses
	 * (a backtrace's frames are return addresses: by default the call
	 * instruction before each one is looked up). */
	bool exact;
	/* Receives one warning per module that cannot be read. */
	void (*warn)(void *ctx, const char *msg);
	void *ctx;
	/* A directory for decompressed copies of separate debug files whose
	 * sections are compressed, named by build id (created if need be):
	 * later resolvers read the copy instead of inflating the sections
	 * again. NULL: no cache. */
	const char *cache_dir;
	/* rt_resolve_trace writes the texts into the trace's backtraces
	 * where they are, keeping their ids, instead of interning a resolved
	 * copy of each (half the frames' memory); a backtrace that comes out
	 * equal to one of a lower id is replaced by it, as by interning. */
	bool in_place;
} rt_resolve_opts;

typedef struct rt_resolve_stats {
	uint64_t addrs;     /* distinct addresses looked up */
	uint64_t functions; /* of those, with a function name */
	uint64_t lines;     /* of those, with a file and line */
	uint32_t modules;   /* modules read */
	uint32_t missing;   /* modules that could not be read */
} rt_resolve_stats;

/* One function of an address's inline chain (see rt_srcloc in trace.h
 * for the order): strings owned by the resolver. */
typedef struct rt_resolve_loc {
	const char *fn;   /* NULL when no name is known */
	const char *file; /* NULL when no line is known */
	uint32_t line;
	bool demangled; /* fn is a demangled C++ name (printed without "()") */
	const char *linkage; /* the linkage name fn was demangled from, or NULL */
} rt_resolve_loc;

typedef struct rt_resolved {
	const char *module; /* module path as the trace names it; NULL: none */
	uint32_t n;         /* entries in locs; 0 when no function is known */
	const rt_resolve_loc *locs;
	const char *text;   /* the text after the address, NULL when none */
} rt_resolved;

typedef struct rt_resolver rt_resolver;

/* A resolver over t's memory map. t must outlive it; opts is copied. */
RTRACE_API rt_resolver *rt_resolve_new(const rt_trace *t, const rt_resolve_opts *opts);
RTRACE_API void rt_resolve_free(rt_resolver *r);

/* Resolves addr as seen by the call with index call_index (which tells
 * modules loaded at the same addresses at different times apart). Each
 * distinct address is looked up once; *out stays valid until
 * rt_resolve_free. Returns false when addr is in no mapping. */
RTRACE_API bool rt_resolve_addr(rt_resolver *r, uint64_t addr, uint64_t call_index, rt_resolved *out);

RTRACE_API void rt_resolve_get_stats(const rt_resolver *r, rt_resolve_stats *st);

/* Resolves the frames of every call's backtrace that have no text yet,
 * records their inline chains in t, and adds "resolve" to the header's
 * filter field. Modules that cannot be read leave their addresses without
 * a function (one warning each); this is not an error. */
RTRACE_API void rt_resolve_trace(rt_trace *t, const rt_resolve_opts *opts, rt_resolve_stats *st);

/* As rt_resolve_trace, with the n backtraces bts[i] (each seen first at
 * call index[i]) walked in place of the calls, which are left as they
 * are: each bts[i] becomes its resolved backtrace's id. For a caller that
 * kept stacks without their calls (`rtrace heap`'s sites). */
RTRACE_API void rt_resolve_bts(rt_trace *t, uint32_t *bts, const uint64_t *index, size_t n,
			       const rt_resolve_opts *opts, rt_resolve_stats *st);

#ifdef __cplusplus
}
#endif
#endif
