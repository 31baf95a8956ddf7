/* rtrace heap --series and --histogram: the text tables of the series a
 * pass over the trace streamed (rt_hp_series): one row per bucket of
 * time (or of block events when the trace has no times), and the
 * allocation sizes, either exact as heaptrack_print --print-histogram
 * writes them ("SIZE<tab>COUNT") or in power-of-two ranges with a bar,
 * the shape of heaptrack_gui's and sp-rtrace-timeline's histograms. Raw
 * numbers, no units, so that scripts and plots read the columns. */
#include "cli.h"

#include <inttypes.h>
#include <stdio.h>

void cli_print_series(FILE *fp, const rt_hp_series *s)
{
	size_t n = rt_hp_series_count(s);
	bool timed = rt_hp_series_timed(s);
	fprintf(fp, "# %zu buckets of %" PRIu64 " %s; live figures at each bucket's end\n", n,
		n ? rt_hp_series_at(s, 0)->end : 0, timed ? "us" : "block events");
	fprintf(fp, "%12s %12s %10s %10s %14s %14s %14s %11s %14s\n", timed ? "start_us" : "start_event",
		timed ? "end_us" : "end_event", "allocs", "frees", "bytes_alloc", "bytes_freed", "live_bytes",
		"live_blocks", "max_live");
	for (size_t i = 0; i < n; i++) {
		const rt_hp_bucket *b = rt_hp_series_at(s, i);
		fprintf(fp,
			"%12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %10" PRIu64 " %14" PRIu64 " %14" PRIu64
			" %14" PRIu64 " %11" PRIu64 " %14" PRIu64 "\n",
			b->start, b->end, b->allocations, b->frees, b->bytes_allocated, b->bytes_freed, b->live_bytes,
			b->live_blocks, b->max_live_bytes);
	}
}

/* Power-of-two ranges [2^k, 2^(k+1)), 0 in the first. */
static unsigned range_of(uint64_t size)
{
	unsigned k = 0;
	while (size >> (k + 1))
		k++;
	return size ? k + 1 : 0;
}

static void print_ranges(FILE *fp, const rt_hp_size_count *v, size_t n)
{
	uint64_t count[66] = {0}, bytes[66] = {0}, total = 0, most = 0;
	unsigned lo = 65, hi = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned r = range_of(v[i].size);
		count[r] += v[i].allocations;
		bytes[r] += v[i].allocations * v[i].size;
		total += v[i].allocations;
		lo = r < lo ? r : lo;
		hi = r > hi ? r : hi;
	}
	for (unsigned r = lo; r <= hi && n; r++)
		most = count[r] > most ? count[r] : most;
	fprintf(fp, "%10s %10s %12s %14s %7s\n", "min_size", "max_size", "allocations", "bytes", "percent");
	for (unsigned r = lo; r <= hi && n; r++) {
		uint64_t min = r ? (uint64_t)1 << (r - 1) : 0, max = r ? (min << 1) - 1 : 0;
		int bar = most ? (int)((count[r] * 40 + most - 1) / most) : 0;
		fprintf(fp, "%10" PRIu64 " %10" PRIu64 " %12" PRIu64 " %14" PRIu64 " %6.2f%% %.*s\n", min, max,
			count[r], bytes[r], total ? 100.0 * (double)count[r] / (double)total : 0.0, bar,
			"########################################");
	}
}

void cli_print_sizes(FILE *fp, const rt_hp_series *s, bool exact)
{
	const rt_hp_size_count *v;
	size_t n = rt_hp_series_sizes(s, &v);
	if (!exact) {
		print_ranges(fp, v, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "%" PRIu64 "\t%" PRIu64 "\n", v[i].size, v[i].allocations);
}
