/* Consumption over time and the allocation size histogram, streamed from
 * the heap profile's block events (rt_hp_series_event is its listener).
 *
 * Buckets: at most k (64 for a report, 32 for `rtrace heap --series`)
 * of one width w on the axis (microseconds, or block events when the
 * calls carry no time); bucket i covers [i*w, (i+1)*w). An event past the
 * last bucket merges the buckets pairwise and doubles w until it fits, so
 * the run's length need not be known and memory stays k buckets: a run of
 * 10 minutes at k = 64 takes about 24 merges of 64 buckets each. Each
 * bucket keeps its counts, the live bytes and blocks at its end and the
 * most live bytes during it (the chart's envelope: the peak is never
 * lost to a merge).
 *
 * Per site (a report's filter on a range): a cell per (site, bucket)
 * with the costs of the blocks allocated in that bucket, in an
 * open-addressing table rebuilt at each merge; at most sites x k cells,
 * far fewer in practice (a site allocates in a few stretches of a run).
 * A release finds its allocation's bucket from the event's `born` number:
 * buckets partition the event numbers in order (the axis is kept
 * monotonic), so a binary search over each bucket's first event number
 * finds it with no per-block memory here. Peak costs use the profile's
 * epoch trick: a cell's live bytes are taken as its peak cost the first
 * time it changes after a new global peak, so the cells' peaks sum to the
 * sites' peaks.
 *
 * Sizes: an open-addressing table of distinct sizes (a program has a few
 * hundred to a few thousand), sorted once at the end. */
#include "rtrace/heapprof.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct cell {
	rt_hp_cell pub;
	uint64_t live, live_blocks, epoch;
	bool used;
} cell;

typedef struct size_slot {
	uint64_t size, n; /* n == 0: a free slot */
} size_slot;

struct rt_hp_series {
	size_t k, used;  /* buckets: capacity, up to the last with events */
	rt_hp_bucket *b;
	uint64_t *seq0;  /* per bucket: the first event at or after its start */
	uint64_t width, last_x;
	int axis;        /* -1 not known yet, 0 events, 1 microseconds */
	uint64_t live, blocks, peak, epoch;
	bool per_site;
	cell *cells;     /* open addressing on (site, bucket) */
	size_t ncells, cslots;
	rt_hp_cell *out; /* the cells gathered by rt_hp_series_cells */
	size_slot *sizes;
	size_t nsizes, csizes;
	rt_hp_size_count *sorted;
};

rt_hp_series *rt_hp_series_new(size_t nbuckets, bool per_site)
{
	rt_hp_series *s = rt_xcalloc(1, sizeof *s);
	s->k = nbuckets < 2 ? 2 : nbuckets;
	s->b = rt_xcalloc(s->k, sizeof *s->b);
	s->seq0 = rt_xcalloc(s->k, sizeof *s->seq0);
	s->width = 1;
	s->axis = -1;
	s->per_site = per_site;
	s->cslots = 256;
	s->cells = per_site ? rt_xcalloc(s->cslots, sizeof *s->cells) : NULL;
	s->csizes = 256;
	s->sizes = rt_xcalloc(s->csizes, sizeof *s->sizes);
	return s;
}

void rt_hp_series_free(rt_hp_series *s)
{
	if (!s)
		return;
	free(s->b);
	free(s->seq0);
	free(s->cells);
	free(s->out);
	free(s->sizes);
	free(s->sorted);
	free(s);
}

/* --- cells --- */

static cell *cell_slot(cell *v, size_t cap, uint32_t site, uint32_t bucket)
{
	size_t i = rt_mix64(((uint64_t)site << 32) | bucket) & (cap - 1);
	while (v[i].used && (v[i].pub.site != site || v[i].pub.bucket != bucket))
		i = (i + 1) & (cap - 1);
	return &v[i];
}

/* Takes the cell's bytes at the latest peak before they change. */
static void touch(const rt_hp_series *s, cell *c)
{
	if (c->epoch != s->epoch) {
		c->pub.cost.peak = c->live;
		c->epoch = s->epoch;
	}
}

static void add_cell(cell *to, const cell *c)
{
	to->live += c->live;
	to->live_blocks += c->live_blocks;
	to->pub.cost.allocations += c->pub.cost.allocations;
	to->pub.cost.temporary += c->pub.cost.temporary;
	to->pub.cost.bytes += c->pub.cost.bytes;
	to->pub.cost.peak += c->pub.cost.peak;
}

/* Moves every cell to bucket >> shift in a table of cap slots. */
static void rehash(rt_hp_series *s, size_t cap, unsigned shift)
{
	cell *old = s->cells;
	size_t nold = s->cslots;
	s->cells = rt_xcalloc(cap, sizeof *s->cells);
	s->cslots = cap;
	s->ncells = 0;
	for (size_t i = 0; i < nold; i++) {
		if (!old[i].used)
			continue;
		touch(s, &old[i]);
		uint32_t b = old[i].pub.bucket >> shift;
		cell *c = cell_slot(s->cells, cap, old[i].pub.site, b);
		if (!c->used) {
			*c = (cell){{old[i].pub.site, b, 0, {0}}, 0, 0, s->epoch, true};
			s->ncells++;
		}
		add_cell(c, &old[i]);
	}
	free(old);
}

static cell *get_cell(rt_hp_series *s, uint32_t site, uint32_t bucket)
{
	if ((s->ncells + 1) * 10 > s->cslots * 7)
		rehash(s, s->cslots * 2, 0);
	cell *c = cell_slot(s->cells, s->cslots, site, bucket);
	if (!c->used) {
		*c = (cell){{site, bucket, 0, {0}}, 0, 0, s->epoch, true};
		s->ncells++;
	}
	touch(s, c);
	return c;
}

/* --- buckets --- */

static void merge_bucket(rt_hp_bucket *to, const rt_hp_bucket *a, const rt_hp_bucket *b, bool has_b)
{
	rt_hp_bucket m = *a;
	if (has_b) {
		m.allocations += b->allocations;
		m.frees += b->frees;
		m.bytes_allocated += b->bytes_allocated;
		m.bytes_freed += b->bytes_freed;
		m.live_bytes = b->live_bytes;
		m.live_blocks = b->live_blocks;
		if (b->max_live_bytes > m.max_live_bytes)
			m.max_live_bytes = b->max_live_bytes;
	}
	*to = m;
}

/* Halves the buckets: pairs merged, the width doubled. */
static void merge_pairs(rt_hp_series *s)
{
	for (size_t i = 0; 2 * i < s->used; i++) {
		merge_bucket(&s->b[i], &s->b[2 * i], &s->b[2 * i + 1], 2 * i + 1 < s->used);
		s->seq0[i] = s->seq0[2 * i];
	}
	s->used = (s->used + 1) / 2;
	memset(s->b + s->used, 0, (s->k - s->used) * sizeof *s->b);
	s->width *= 2;
	for (size_t i = 0; i < s->used; i++) {
		s->b[i].start = i * s->width;
		s->b[i].end = (i + 1) * s->width;
	}
	if (s->per_site)
		rehash(s, s->cslots, 1);
}

/* The bucket of axis position x for event seq, made when new: the
 * buckets skipped since the last event carry the live figures on. */
static size_t place(rt_hp_series *s, uint64_t x, uint64_t seq)
{
	while (x / s->width >= s->k)
		merge_pairs(s);
	size_t j = (size_t)(x / s->width);
	for (; s->used <= j; s->used++) {
		rt_hp_bucket *b = &s->b[s->used];
		*b = (rt_hp_bucket){s->used * s->width, (s->used + 1) * s->width, 0, 0, 0, 0, s->live, s->blocks,
				    s->live};
		s->seq0[s->used] = seq;
	}
	return j;
}

/* The bucket holding the allocation numbered born: the last bucket whose
 * first event is at or before it. */
static uint32_t bucket_of(const rt_hp_series *s, uint64_t born)
{
	size_t lo = 0, hi = s->used; /* seq0[lo] <= born < seq0[hi] */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->seq0[mid] <= born)
			lo = mid;
		else
			hi = mid;
	}
	return (uint32_t)lo;
}

/* --- sizes --- */

static void count_size(rt_hp_series *s, uint64_t size)
{
	if ((s->nsizes + 1) * 10 > s->csizes * 7) {
		size_slot *old = s->sizes;
		size_t nold = s->csizes;
		s->csizes *= 2;
		s->sizes = rt_xcalloc(s->csizes, sizeof *s->sizes);
		s->nsizes = 0;
		for (size_t i = 0; i < nold; i++)
			if (old[i].n) {
				size_t j = rt_mix64(old[i].size) & (s->csizes - 1);
				while (s->sizes[j].n)
					j = (j + 1) & (s->csizes - 1);
				s->sizes[j] = old[i];
				s->nsizes++;
			}
		free(old);
	}
	size_t j = rt_mix64(size) & (s->csizes - 1);
	while (s->sizes[j].n && s->sizes[j].size != size)
		j = (j + 1) & (s->csizes - 1);
	if (!s->sizes[j].n++) {
		s->sizes[j].size = size;
		s->nsizes++;
	}
}

/* --- events --- */

static void on_alloc(rt_hp_series *s, const rt_hp_event *e, size_t j)
{
	rt_hp_bucket *b = &s->b[j];
	b->allocations++;
	b->bytes_allocated += e->size;
	count_size(s, e->size);
	if (s->per_site) {
		cell *c = get_cell(s, e->site, (uint32_t)j);
		c->live += e->size;
		c->live_blocks++;
		c->pub.cost.allocations++;
		c->pub.cost.bytes += e->size;
	}
	s->live += e->size;
	s->blocks++;
	if (s->live > s->peak) {
		s->peak = s->live;
		s->epoch++;
	}
}

static void on_free(rt_hp_series *s, const rt_hp_event *e, size_t j)
{
	rt_hp_bucket *b = &s->b[j];
	b->frees++;
	b->bytes_freed += e->size;
	if (s->per_site) {
		cell *c = get_cell(s, e->site, bucket_of(s, e->born));
		c->live -= e->size;
		c->live_blocks--;
		c->pub.cost.temporary += e->temporary;
	}
	s->live -= e->size;
	s->blocks--;
}

void rt_hp_series_event(void *ctx, const rt_hp_event *e)
{
	rt_hp_series *s = ctx;
	if (s->axis < 0)
		s->axis = e->timed;
	uint64_t x = s->axis ? e->time_us : e->seq;
	if (x < s->last_x)
		x = s->last_x;
	s->last_x = x;
	size_t j = place(s, x, e->seq);
	if (e->alloc)
		on_alloc(s, e, j);
	else
		on_free(s, e, j);
	rt_hp_bucket *b = &s->b[j];
	b->live_bytes = s->live;
	b->live_blocks = s->blocks;
	if (s->live > b->max_live_bytes)
		b->max_live_bytes = s->live;
}

static int cmp_size(const void *a, const void *b)
{
	const rt_hp_size_count *x = a, *y = b;
	return (x->size > y->size) - (x->size < y->size);
}

void rt_hp_series_finish(rt_hp_series *s)
{
	size_t n = 0;
	free(s->sorted);
	s->sorted = rt_xmalloc((s->nsizes ? s->nsizes : 1) * sizeof *s->sorted);
	for (size_t i = 0; i < s->csizes; i++)
		if (s->sizes[i].n)
			s->sorted[n++] = (rt_hp_size_count){s->sizes[i].size, s->sizes[i].n};
	qsort(s->sorted, n, sizeof *s->sorted, cmp_size);
	free(s->out);
	s->out = rt_xmalloc((s->ncells ? s->ncells : 1) * sizeof *s->out);
	n = 0;
	for (size_t i = 0; s->per_site && i < s->cslots; i++) {
		cell *c = &s->cells[i];
		if (!c->used)
			continue;
		touch(s, c);
		c->pub.cost.leaked = c->live;
		c->pub.leaked_blocks = c->live_blocks;
		s->out[n++] = c->pub;
	}
}

bool rt_hp_series_timed(const rt_hp_series *s) { return s->axis > 0; }
size_t rt_hp_series_count(const rt_hp_series *s) { return s->used; }
const rt_hp_bucket *rt_hp_series_at(const rt_hp_series *s, size_t i) { return &s->b[i]; }

size_t rt_hp_series_cells(const rt_hp_series *s, const rt_hp_cell **cells)
{
	*cells = s->out;
	return s->out ? s->ncells : 0;
}

size_t rt_hp_series_sizes(const rt_hp_series *s, const rt_hp_size_count **sizes)
{
	*sizes = s->sorted;
	return s->sorted ? s->nsizes : 0;
}
