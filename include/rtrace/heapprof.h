/* rtrace heap profile: heaptrack's numbers (allocation calls, temporary
 * allocations, peak heap and who held it, leaked bytes) computed in one
 * pass over a trace's calls. Calls are fed one at a time, as a reader's
 * call callback gives them, and are not kept: memory follows the blocks
 * live at each moment plus one record per distinct backtrace. */
#ifndef RTRACE_HEAPPROF_H
#define RTRACE_HEAPPROF_H

#include "rtrace/export.h"
#include "rtrace/resolve.h"
#include "rtrace/trace.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Costs, of the whole trace or of one allocation site (a backtrace). */
typedef struct rt_hp_cost {
	uint64_t allocations; /* calls to allocation functions */
	uint64_t temporary;   /* of them, blocks freed with no allocation between */
	uint64_t bytes;       /* bytes allocated, all calls */
	uint64_t peak;        /* bytes live at the moment of the global peak */
	uint64_t leaked;      /* bytes never freed */
} rt_hp_cost;

typedef struct rt_hp_summary {
	rt_hp_cost total;       /* total.peak: the peak heap consumption */
	uint64_t frees;         /* releases of blocks the trace allocated */
	uint64_t leaked_blocks; /* blocks never freed */
	uint64_t peak_index;    /* call index that reached the peak */
	/* Times in microseconds since the first call's midnight (a trace
	 * that runs past midnight goes on counting): the peak's, the first
	 * and the last call's. */
	uint64_t peak_us;
	uint64_t first_us, last_us;
	bool timed;             /* the calls carry times */
} rt_hp_summary;

/* One allocation site: a distinct backtrace (RT_NONE: calls without). */
typedef struct rt_hp_site {
	uint32_t bt;
	uint64_t first_index; /* call index of its first allocation */
	rt_hp_cost cost;
} rt_hp_site;

typedef enum rt_hp_cost_type {
	RT_HP_ALLOCATIONS,
	RT_HP_TEMPORARY,
	RT_HP_BYTES,
	RT_HP_PEAK,
	RT_HP_LEAKED,
} rt_hp_cost_type;

typedef struct rt_hp rt_hp;

RTRACE_API rt_hp *rt_hp_new(void);
RTRACE_API void rt_hp_free(rt_hp *h);
/* Accounts call c of trace t (allocations and releases of the "memory"
 * resource, or of the filter's; other calls are ignored). c is not kept: its arguments are
 * released. Calls come in record order. */
RTRACE_API void rt_hp_feed(rt_hp *h, rt_trace *t, const rt_call *c);
/* Accounts calls[0 .. n) of t in order, as rt_hp_feed each would (their
 * arguments are released), fetching the blocks of the calls ahead where
 * the lookahead is on, without queueing: for a reader that hands over
 * its calls by batches. */
RTRACE_API void rt_hp_feed_calls(rt_hp *h, rt_trace *t, const rt_call *calls, size_t n);
/* On: rt_hp_feed accounts each call a few calls later, having fetched
 * its block's memory meanwhile (faster where the live blocks outgrow
 * the caches). Until rt_hp_finish the profile's figures then lag behind
 * the calls fed: only for readers of the finished profile. */
RTRACE_API void rt_hp_set_lookahead(rt_hp *h, bool on);
/* Closes the pass: the leaked and peak costs of each site (the live
 * blocks go: nothing more can be fed). Call once,
 * after the last call was fed. */
RTRACE_API void rt_hp_finish(rt_hp *h);
/* Adds the calls the tracer's lifetime filter dropped (rt_dropped) to
 * the totals; after the last rt_hp_feed, before rt_hp_finish. */
RTRACE_API void rt_hp_add_dropped(rt_hp *h, rt_trace *t);
RTRACE_API const rt_hp_summary *rt_hp_get_summary(const rt_hp *h);
/* The sites, in the order first seen. */
RTRACE_API size_t rt_hp_site_count(const rt_hp *h);
RTRACE_API const rt_hp_site *rt_hp_site_at(const rt_hp *h, size_t i);
/* Gives site i another backtrace id: the one a resolver rewrote its
 * backtrace to (the resolver walks calls: give it one per site, made
 * with the site's bt and first_index). */
RTRACE_API void rt_hp_set_site_bt(rt_hp *h, size_t i, uint32_t bt);
/* A block event as the profile saw it: an allocation, or the release of
 * a block it saw allocated (releases of unknown blocks are dropped; an
 * allocation at the address of a live block releases that block first). */
typedef struct rt_hp_event {
	bool alloc;
	uint32_t site;    /* rt_hp site index */
	uint64_t size;    /* the block's size */
	uint64_t time_us; /* since the first timed call; 0 when untimed */
	uint64_t seq;     /* block events before this one */
	uint64_t born;    /* a release: its allocation's seq (an allocation: seq) */
	bool temporary;   /* a release counted as a temporary allocation */
	bool timed;       /* the calls carry times (time_us is meaningful) */
} rt_hp_event;

typedef void (*rt_hp_listener)(void *ctx, const rt_hp_event *e);
/* Has fn told every block event while calls are fed (exports that stream). */
RTRACE_API void rt_hp_set_listener(rt_hp *h, rt_hp_listener fn, void *ctx);
/* A cost by type ("allocations", "temporary", "bytes", "peak", "leaked"). */
RTRACE_API uint64_t rt_hp_cost_of(const rt_hp_cost *c, rt_hp_cost_type type);
/* Adds each cost of c to to's. */
RTRACE_API void rt_hp_cost_add(rt_hp_cost *to, const rt_hp_cost *c);
/* Parses a cost type name; false when it is none. */
RTRACE_API bool rt_hp_parse_cost(const char *name, rt_hp_cost_type *type);

/* Writes the sites as collapsed stacks ("outer;...;inner weight" per
 * line, flamegraph.pl's and inferno's input) weighted by `type`; sites
 * of weight 0 are left out, so the weights sum to the total's cost.
 * Frames are named by their resolved function (inlined calls are frames
 * of their own), else "module+0xoffset", else the address. 0 or -errno. */
RTRACE_API int rt_hp_write_collapsed(const rt_hp *h, const rt_trace *t, rt_hp_cost_type type, FILE *fp);

/* heaptrack's interpreted data format (docs/heaptrack-format.md), the
 * file heaptrack_print and heaptrack_gui read. Streams: made before the
 * pass, its rt_hp_heaptrack_event is the profile's listener and writes
 * the allocation records to `body` (a temporary file); after the pass and
 * the resolution of the sites, rt_hp_heaptrack_write writes the strings,
 * instruction pointers, trace tree and allocation kinds, then the body. */
typedef struct rt_hp_heaptrack rt_hp_heaptrack;

RTRACE_API rt_hp_heaptrack *rt_hp_heaptrack_new(FILE *body);
RTRACE_API void rt_hp_heaptrack_free(rt_hp_heaptrack *x);
/* An rt_hp_listener; ctx is the rt_hp_heaptrack. */
RTRACE_API void rt_hp_heaptrack_event(void *ctx, const rt_hp_event *e);
/* Writes the file to fd, gzip-compressed when gzip (else plain text);
 * exe names the program (heaptrack's X record). 0 or -errno. */
RTRACE_API int rt_hp_heaptrack_write(rt_hp_heaptrack *x, const rt_hp *h, const rt_trace *t, const char *exe,
				     int fd, bool gzip);

/* The bytes live now, and those of site i: what a sampler reads between
 * two calls fed. */
RTRACE_API uint64_t rt_hp_live(const rt_hp *h);
RTRACE_API uint64_t rt_hp_site_live(const rt_hp *h, size_t i);
/* The blocks of site i live now (after rt_hp_finish: leaked). */
RTRACE_API uint64_t rt_hp_site_live_blocks(const rt_hp *h, size_t i);

/* Valgrind massif's output (ms_print, massif-visualizer): snapshots of
 * the heap taken while the calls are fed, massif's way (at most 100,
 * halved and spaced wider when full, every 10th detailed), the peak's
 * snapshot detailed from the sites' peak costs. docs/massif-format.md. */
typedef struct rt_hp_massif rt_hp_massif;
typedef enum rt_hp_time_unit {
	RT_HP_TIME_DEFAULT, /* ms when the calls carry times, else i */
	RT_HP_TIME_CALLS,   /* "i": calls to allocation and release functions */
	RT_HP_TIME_MS,      /* "ms": milliseconds since the first call */
	RT_HP_TIME_BYTES,   /* "B": bytes allocated and released */
} rt_hp_time_unit;

RTRACE_API rt_hp_massif *rt_hp_massif_new(void);
RTRACE_API void rt_hp_massif_free(rt_hp_massif *m);
/* Takes a snapshot when due; call after each rt_hp_feed(h, ...). */
RTRACE_API void rt_hp_massif_sample(rt_hp_massif *m, const rt_hp *h);
/* Parses "i", "ms" or "B"; false when it is none. */
RTRACE_API bool rt_hp_parse_time_unit(const char *name, rt_hp_time_unit *unit);
/* Writes the massif file, after rt_hp_finish(h) (and the sites'
 * resolution): cmd is the traced command line, desc a description. */
RTRACE_API int rt_hp_write_massif(const rt_hp_massif *m, const rt_hp *h, const rt_trace *t, rt_hp_time_unit unit,
				  const char *cmd, const char *desc, FILE *fp);

/* Selections of a heap profile (hp_filter.c), applied while the calls
 * are fed: the profile of a selection is the profile of a trace that
 * held only the selected allocations and their releases (temporary
 * allocations and the peak are the selection's own). Allocations are
 * selected by when they were made (a call-index or time range), the
 * context they were made in, the resource type, and a function on their
 * stack. A range closes the profile at its end: blocks still allocated
 * then are its leaks, as in heaptrack_gui's "filter in on selection";
 * releases of blocks allocated before the range count for nothing. */
typedef struct rt_hp_filter_opts {
	bool by_index;                   /* allocations of calls [from_index, to_index] */
	uint64_t from_index, to_index;
	bool by_time;                    /* allocations made [from_us, to_us) after the first call */
	uint64_t from_us, to_us;
	bool by_context;                 /* allocations made in a context of context_mask */
	uint32_t context_mask;           /* 0: made in no context */
	const char *context_name;        /* by_context: the context of this name (registry
					  * of the trace), not context_mask; NULL: none */
	const char *resource;            /* the resource type profiled; NULL: "memory" */
	const char *bt_function;         /* a function whose name holds this text is on the stack */
	const rt_resolve_opts *resolve; /* names unknown to the trace are resolved so;
					 * NULL: only the trace's names */
} rt_hp_filter_opts;

typedef struct rt_hp_filter rt_hp_filter;

/* A filter of o (copied, strings too); NULL when o's resource is "". */
RTRACE_API rt_hp_filter *rt_hp_filter_new(const rt_hp_filter_opts *o);
RTRACE_API void rt_hp_filter_free(rt_hp_filter *f);
/* Has h feed only what f selects; f must outlive h's pass. */
RTRACE_API void rt_hp_set_filter(rt_hp *h, rt_hp_filter *f);
/* Whether f selects allocation c of t, made rel_us after the first call. */
RTRACE_API bool rt_hp_filter_alloc(rt_hp_filter *f, const rt_trace *t, const rt_call *c, uint64_t rel_us);
/* Whether c, made rel_us after the first call, is past f's ranges. */
RTRACE_API bool rt_hp_filter_past(const rt_hp_filter *f, const rt_call *c, uint64_t rel_us);
/* Whether res_type is f's resource type (f NULL: memory; 0, untyped, is memory). */
RTRACE_API bool rt_hp_filter_resource(const rt_hp_filter *f, const rt_trace *t, uint8_t res_type);
/* Whether backtrace bt holds a function named with f's text (true without one). */
RTRACE_API bool rt_hp_filter_bt(rt_hp_filter *f, const rt_trace *t, uint32_t bt, uint64_t call_index);
/* Whether f selects allocations the tracer's lifetime filter left out
 * (rt_dropped): never under a range or context selection, which they
 * carry nothing to place in. */
RTRACE_API bool rt_hp_filter_dropped(rt_hp_filter *f, const rt_trace *t, const rt_dropped *d);

/* Two profiles of one program compared call site by call site
 * (hp_diff.c). Sites are matched by their resolved stacks, not by
 * addresses (which ASLR and rebuilds move): each frame is its function,
 * source file name and line (inlined functions included) and module
 * name, or the module name and the offset in it when unresolved; the
 * sites of one profile whose stacks read the same add up. */
typedef struct rt_hp_diff_entry {
	const char *key;            /* the stack, outermost frame first, ';' between */
	size_t before_site;         /* a site of the first profile, SIZE_MAX: none */
	size_t after_site;          /* a site of the second profile, SIZE_MAX: none */
	rt_hp_cost before, after;   /* the costs of the stack in each */
} rt_hp_diff_entry;

typedef struct rt_hp_diff rt_hp_diff;

/* Matches the sites of before (profile of tb) with those of after (of ta),
 * both finished and resolved. Entries come sorted by key. */
RTRACE_API rt_hp_diff *rt_hp_diff_new(const rt_hp *before, const rt_trace *tb, const rt_hp *after,
				      const rt_trace *ta);
RTRACE_API void rt_hp_diff_free(rt_hp_diff *d);
RTRACE_API size_t rt_hp_diff_count(const rt_hp_diff *d);
RTRACE_API const rt_hp_diff_entry *rt_hp_diff_at(const rt_hp_diff *d, size_t i);
/* after's cost minus before's, of one type. */
RTRACE_API int64_t rt_hp_cost_delta(const rt_hp_cost *before, const rt_hp_cost *after, rt_hp_cost_type type);
/* Writes the diff as flamegraph.pl's difffolded input ("stack before
 * after" per line), weighted by type; stacks of 0 on both sides are left
 * out. 0 or -errno. */
RTRACE_API int rt_hp_diff_write_folded(const rt_hp_diff *d, rt_hp_cost_type type, FILE *fp);
/* Consumption over time and allocation sizes, streamed from the
 * profile's events (rt_hp_series_event is an rt_hp_listener) in bounded
 * memory: a fixed number of buckets over the run, merged pairwise when
 * the run outgrows them, so the run's length need not be known. The axis
 * is time (microseconds since the first call) when the calls carry times,
 * else block events. With per_site, each bucket also keeps each site's
 * costs for the allocations made in it (what a report filters on). */
typedef struct rt_hp_series rt_hp_series;

typedef struct rt_hp_bucket {
	uint64_t start, end;  /* [start, end) on the axis */
	uint64_t allocations, frees;
	uint64_t bytes_allocated, bytes_freed;
	uint64_t live_bytes, live_blocks; /* at the bucket's end */
	uint64_t max_live_bytes;          /* the most live during the bucket */
} rt_hp_bucket;

/* A site's costs for the blocks allocated in one bucket: allocations,
 * bytes, temporary, peak (of them, live at the global peak), leaked. */
typedef struct rt_hp_cell {
	uint32_t site, bucket;
	uint64_t leaked_blocks;
	rt_hp_cost cost;
} rt_hp_cell;

typedef struct rt_hp_size_count {
	uint64_t size, allocations;
} rt_hp_size_count;

/* nbuckets: at most that many buckets (2 or more). */
RTRACE_API rt_hp_series *rt_hp_series_new(size_t nbuckets, bool per_site);
RTRACE_API void rt_hp_series_free(rt_hp_series *s);
/* An rt_hp_listener; ctx is the rt_hp_series. */
RTRACE_API void rt_hp_series_event(void *ctx, const rt_hp_event *e);
/* Closes the series after the pass: leaked and peak costs of the cells,
 * the sizes sorted. */
RTRACE_API void rt_hp_series_finish(rt_hp_series *s);
/* True when the axis is time in microseconds, false when block events. */
RTRACE_API bool rt_hp_series_timed(const rt_hp_series *s);
/* The buckets, up to the last one with events. */
RTRACE_API size_t rt_hp_series_count(const rt_hp_series *s);
RTRACE_API const rt_hp_bucket *rt_hp_series_at(const rt_hp_series *s, size_t i);
/* The cells (per_site only), in no order. */
RTRACE_API size_t rt_hp_series_cells(const rt_hp_series *s, const rt_hp_cell **cells);
/* The allocation sizes, smallest first, with their allocation counts
 * (heaptrack_print --print-histogram's figures). */
RTRACE_API size_t rt_hp_series_sizes(const rt_hp_series *s, const rt_hp_size_count **sizes);

#ifdef __cplusplus
}
#endif
#endif
