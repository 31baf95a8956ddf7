/* rtrace heap profile: heaptrack's numbers (allocation calls, temporary
 * allocations, peak heap and who held it, leaked bytes) computed in one
 * pass over a trace's calls. Calls are fed one at a time, as a reader's
 * call callback gives them, and are not kept: memory follows the blocks
 * live at each moment plus one record per distinct backtrace. */
#ifndef RTRACE_HEAPPROF_H
#define RTRACE_HEAPPROF_H

#include "rtrace/export.h"
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
 * resource; other calls are ignored). c is not kept: its arguments are
 * released. Calls come in record order. */
RTRACE_API void rt_hp_feed(rt_hp *h, rt_trace *t, const rt_call *c);
/* Closes the pass: the leaked and peak costs of each site. Call once,
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
} rt_hp_event;

typedef void (*rt_hp_listener)(void *ctx, const rt_hp_event *e);
/* Has fn told every block event while calls are fed (exports that stream). */
RTRACE_API void rt_hp_set_listener(rt_hp *h, rt_hp_listener fn, void *ctx);
/* A cost by type ("allocations", "temporary", "bytes", "peak", "leaked"). */
RTRACE_API uint64_t rt_hp_cost_of(const rt_hp_cost *c, rt_hp_cost_type type);
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

#ifdef __cplusplus
}
#endif
#endif
