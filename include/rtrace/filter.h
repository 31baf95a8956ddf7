/* Filters over the trace model, with sp-rtrace post-processor semantics. */
#ifndef RTRACE_FILTER_H
#define RTRACE_FILTER_H

#include "rtrace/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Streaming leak filter: feed calls in trace order; allocations whose
 * resource is released later are dropped as soon as the release is seen,
 * releases are never kept. Memory stays proportional to live resources.
 * Resource types flagged refcount count repeated allocations of one id.
 * The filter owns each fed call's argument block (kept or released), and
 * remembers call positions: do not compact the trace while feeding. */
typedef struct rt_leaks rt_leaks;

RTRACE_API rt_leaks *rt_leaks_new(void);
RTRACE_API void rt_leaks_free(rt_leaks *l);
RTRACE_API void rt_leaks_feed(rt_leaks *l, rt_trace *t, const rt_call *c);
/* Matches the calls still queued; call once after the last feed, before
 * using the trace's calls. */
RTRACE_API void rt_leaks_finish(rt_leaks *l, rt_trace *t);
/* Allocations live after the calls matched so far (all of them once
 * rt_leaks_finish has run). */
RTRACE_API size_t rt_leaks_live(const rt_leaks *l);

/* The allocations of t not released by its end, in trace order (the
 * leak filter run on a scratch copy: t is not changed; the copies keep
 * their argument blocks, t's). Returns a malloc'ed array of *n calls. */
RTRACE_API rt_call *rt_leaks_unfreed(const rt_trace *t, size_t *n);

/* Per-call selection applied after reading (and after leak filtering). */
typedef struct rt_select {
	bool by_context;   /* keep calls whose context matches context_mask */
	uint32_t context_mask; /* 0: keep only calls without a context */
	const uint64_t *include; /* sorted record indices to keep, or NULL */
	size_t ninclude;
	const uint64_t *exclude; /* sorted record indices to drop, or NULL */
	size_t nexclude;
	bool by_address;   /* keep calls with a frame in [addr_from, addr_to) */
	uint64_t addr_from, addr_to;
} rt_select;

RTRACE_API bool rt_select_call(const rt_select *s, const rt_trace *t, const rt_call *c);
/* Removes every call the selection rejects; returns how many remain. */
RTRACE_API size_t rt_select_apply(const rt_select *s, rt_trace *t);

/* Marks resource types outside mask (registry ids, 1 << (n - 1)) removed;
 * rt_select_resource is false for a call of a removed type. */
RTRACE_API void rt_select_resources(rt_trace *t, uint32_t mask);
RTRACE_API bool rt_select_resource(const rt_trace *t, const rt_call *c);

/* Resolves "--call-address TARGET:START+SIZE" against the memory map:
 * TARGET is matched as a substring of a module path; START is relative to
 * that module's first mapping unless it already lies inside it. Returns
 * false when no module matches. */
RTRACE_API bool rt_select_address_range(const rt_trace *t, const char *target, uint64_t start,
						  uint64_t size, uint64_t *from, uint64_t *to);

#ifdef __cplusplus
}
#endif
#endif
