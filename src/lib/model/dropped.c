/* What the tracer's lifetime filter (`rtrace run --min-lifetime`) left
 * out of a trace, in the model: per allocation stack and function, the
 * allocations dropped with their releases, their bytes and how many of
 * them were temporary in heaptrack's sense. The DROPPED records of a
 * thread repeat a stack each time the thread flushes its counters (at
 * most every 65536 drops, and at exit, fork and exec), so entries with
 * the same (function, stack, resource) are summed here: a few hundred
 * entries for a program of a few hundred churning call sites, kept in a
 * list (a linear search per record; records come once per flush). The
 * readers that total allocations (rtrace heap, the Callgrind profile)
 * add these to the calls they saw; the text protocol keeps them as
 * permanent comments ("## dropped: ..."), so a converted trace says
 * that its calls are not all there. */
#include "model/heapcheck_int.h"
#include "model/trace_int.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

struct rt_drops {
	rt_dropped *d;
	size_t n, cap;
};

static void drops_free(void *data)
{
	struct rt_drops *ds = data;
	free(ds->d);
	free(ds);
}

static const rt_trace_ext drops_ext = {"calls the lifetime filter dropped", drops_free};

void rt_trace_add_dropped(rt_trace *t, const rt_dropped *d)
{
	struct rt_drops *ds = rt_trace_ext_need(t, &drops_ext, sizeof *ds);
	for (size_t i = 0; i < ds->n; i++) {
		rt_dropped *e = &ds->d[i];
		if (e->fn == d->fn && e->bt == d->bt && e->res_type == d->res_type) {
			e->index = d->index < e->index ? d->index : e->index;
			e->count += d->count;
			e->bytes += d->bytes;
			e->temporary += d->temporary;
			return;
		}
	}
	RT_PUSH(ds->d, ds->n, ds->cap, *d);
}

size_t rt_trace_dropped_count(const rt_trace *t)
{
	const struct rt_drops *ds = rt_trace_ext_get(t, &drops_ext);
	return ds ? ds->n : 0;
}

rt_dropped *rt_trace_dropped(rt_trace *t)
{
	struct rt_drops *ds = rt_trace_ext_get(t, &drops_ext);
	return ds ? ds->d : NULL;
}

const rt_dropped *rt_trace_dropped_at(const rt_trace *t, size_t i)
{
	return &((const struct rt_drops *)rt_trace_ext_get(t, &drops_ext))->d[i];
}

/* "## dropped: 3000 allocations of 96 bytes in all (1000 temporary)",
 * then the stack. */
void rt_dropped_write_text(const rt_trace *t, rt_out *out)
{
	size_t n = rt_trace_dropped_count(t);
	for (size_t i = 0; i < n; i++) {
		const rt_dropped *d = rt_trace_dropped_at(t, i);
		char line[200];
		snprintf(line, sizeof line, "## dropped: %" PRIu64 " allocations of %" PRIu64
			 " bytes in all (%" PRIu64 " temporary), each freed soon after\n", d->count, d->bytes,
			 d->temporary);
		rt_out_str(out, line);
		rt_hc_write_stack(t, "allocated at", d->fn, d->bt, out);
	}
}
