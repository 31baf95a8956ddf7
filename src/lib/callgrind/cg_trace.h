/* Internals of the allocation profile of a trace: the pass over the calls
 * (cg_stream.c) hands the profile builder (cg_trace.c) its costs summed
 * per backtrace and resource type. */
#ifndef RT_CG_TRACE_H
#define RT_CG_TRACE_H

#include "callgrind/cg_int.h"
#include "rtrace/trace.h"

/* Costs per resource type; the events they become are cg_trace.c's. */
enum {
	CG_EV_ALLOCS,       /* allocation calls */
	CG_EV_SIZE,         /* their sizes */
	CG_EV_UNFREED,      /* not released by the end (Leaks with verdicts) */
	CG_EV_UNFREED_SIZE, /* their sizes (LeakedBytes with verdicts) */
	CG_EV_TEMPORARY,    /* memory: temporary allocations (rt_hp's) */
	CG_EV_PEAK,         /* memory: bytes live at the peak (rt_hp's) */
	CG_EV_N
};

typedef struct cg_site_cost {
	uint32_t bt; /* backtrace id in the trace now, or RT_NONE */
	uint8_t key; /* resource type; 0: memory */
	uint64_t v[CG_EV_N];
} cg_site_cost;

/* Resource types (keys) with allocation calls, and with a size not 1;
 * whether a site's sum was held at 2^64-1. */
typedef struct cg_usage {
	bool used[RT_MAX_RESOURCES + 1], sized[RT_MAX_RESOURCES + 1];
	bool saturated;
} cg_usage;

/* The profile of trace t from its site costs (several may share a
 * backtrace) and the trace's leak verdicts; the stacks taken in the
 * order of order[0 .. bt count] (ids, RT_NONE once), or NULL: by id,
 * RT_NONE last. */
cg_profile *cg_profile_build(rt_trace *t, const cg_trace_opts *opts, const cg_site_cost *c, size_t n,
			     const cg_usage *u, const uint32_t *order);

#endif
