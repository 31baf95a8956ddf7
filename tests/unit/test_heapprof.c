/* The streaming heap profile (rt_hp) on hand-built text traces: the
 * summary's figures, heaptrack's temporary rule (same size and stack as
 * the last allocation; a release resets it to the first pair; realloc as
 * release then allocation), the owners of the peak when later peaks
 * replace earlier ones, leaks per site, other resources and unknown
 * releases ignored, and the collapsed stacks (outermost first, inlined
 * and unresolved frames, weights summing to the totals); the heaptrack
 * export's records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "rtrace/heapprof.h"
#include "rtrace/text.h"
#include "rtrace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEADER                                                                  \
	"version=2.0, arch=x86_64, timestamp=2026.11.26 10:00:00, process=/bin/t, " \
	"pid=1, filter=resolve, origin=test, \n"                                    \
	"<1> : memory (memory allocation in bytes)\n"                               \
	"<2> : fd (file descriptor)\n"
/* three stacks: A (f called by main), B (g called by main), C (h, no names) */
#define A "\t0x1001 f() at a.c:1\n\t0x2001 main() at m.c:9\n\n"
#define B "\t0x1002 g() at b.c:2\n\t0x2002 main() at m.c:10\n\n"
#define C "\t0x1003\n\t0x2003\n\n"

static void feed(void *ctx, rt_trace *t, const rt_call *c);

/* Text of n calls in rounds: allocations of growing sizes from the three
 * stacks, most freed a few calls later (temporary ones among them), every
 * seventh kept, so that the live blocks outgrow the first block table. */
static char *churn_body(int n)
{
	size_t cap = (size_t)n * 64 + 1, len = 0;
	char *b = malloc(cap);
	const char *st[] = {A, B, C};
	for (int i = 1; i <= n; i++) {
		unsigned addr = 0x100 + (unsigned)(i - 1) / 2 * 16;
		if (i % 2)
			len += (size_t)snprintf(b + len, cap - len, "%d. malloc(%d) = 0x%x\n%s", i, i % 97 + 1, addr, st[i % 3]);
		else if ((i / 2) % 7)
			len += (size_t)snprintf(b + len, cap - len, "%d. free(0x%x)\n\n", i, addr - (i % 6 ? 0 : 16));
		else
			len += (size_t)snprintf(b + len, cap - len, "%d. free(0x1)\n\n", i);
	}
	return b;
}

/* The profile of body, its calls queued (lookahead) or accounted at
 * once, fn (if any) listening. */
static rt_hp *profile_heard(const char *body, bool ahead, rt_hp_listener fn, void *ctx, rt_trace **tp)
{
	size_t n = strlen(HEADER) + strlen(body) + 1;
	char *buf = malloc(n);
	snprintf(buf, n, "%s%s", HEADER, body);
	rt_hp *h = rt_hp_new();
	if (fn)
		rt_hp_set_listener(h, fn, ctx);
	rt_hp_set_lookahead(h, ahead);
	rt_trace *t = rt_trace_new();
	rt_read_opts o = {0, feed, NULL, h};
	rt_diag err;
	assert_int_equal(rt_text_read_mem(t, buf, n - 1, "t.txt", &o, NULL, &err), 0);
	rt_hp_finish(h);
	free(buf);
	*tp = t;
	return h;
}

static rt_hp *profile_ahead(const char *body, bool ahead, rt_trace **tp)
{
	return profile_heard(body, ahead, NULL, NULL, tp);
}

static void lookahead_same_profile_of(int n, uint64_t min_leaked)
{
	char *body = churn_body(n);
	rt_trace *t0, *t1;
	rt_hp *h0 = profile_ahead(body, false, &t0), *h1 = profile_ahead(body, true, &t1);
	const rt_hp_summary *s0 = rt_hp_get_summary(h0), *s1 = rt_hp_get_summary(h1);
	assert_true(s0->total.allocations > (uint64_t)n / 3 && s0->total.temporary > 0 && s0->leaked_blocks > min_leaked);
	assert_memory_equal(s0, s1, sizeof *s0);
	assert_int_equal(rt_hp_site_count(h0), rt_hp_site_count(h1));
	for (size_t i = 0; i < rt_hp_site_count(h0); i++)
		assert_memory_equal(&rt_hp_site_at(h0, i)->cost, &rt_hp_site_at(h1, i)->cost, sizeof(rt_hp_cost));
	rt_hp_free(h0);
	rt_hp_free(h1);
	rt_trace_free(t0);
	rt_trace_free(t1);
	free(body);
}

/* With the lookahead, the calls are accounted later but in order: the
 * same summary and the same costs per site, across a table growth; and
 * across the growth past the size where the lookahead starts (16384
 * slots: up to there calls are accounted at once; 14000 live blocks
 * outgrow them). */
static void lookahead_same_profile(void **state)
{
	(void)state;
	for (int big = 0; big < 2; big++)
		lookahead_same_profile_of(big ? 200000 : 6000, big ? 12000 : 400);
}

static void feed(void *ctx, rt_trace *t, const rt_call *c)
{
	rt_hp_feed(ctx, t, c);
}

/* Profiles the text trace body (after HEADER), fn (if any) listening. */
static rt_hp *profile_to(const char *body, rt_trace **tp, rt_hp_listener fn, void *ctx)
{
	char buf[8192];
	snprintf(buf, sizeof buf, "%s%s", HEADER, body);
	rt_hp *h = rt_hp_new();
	if (fn)
		rt_hp_set_listener(h, fn, ctx);
	rt_trace *t = rt_trace_new();
	rt_read_opts o = {0, feed, NULL, h};
	rt_diag err;
	assert_int_equal(rt_text_read_mem(t, buf, strlen(buf), "t.txt", &o, NULL, &err), 0);
	assert_int_equal(rt_trace_call_count(t), 0); /* nothing kept */
	rt_hp_finish(h);
	*tp = t;
	return h;
}

static rt_hp *profile(const char *body, rt_trace **tp)
{
	return profile_to(body, tp, NULL, NULL);
}

/* The site whose first frame is at addr. */
static const rt_hp_cost *site(const rt_hp *h, const rt_trace *t, uint64_t addr)
{
	for (size_t i = 0; i < rt_hp_site_count(h); i++) {
		const rt_hp_site *s = rt_hp_site_at(h, i);
		if (s->bt != RT_NONE && rt_trace_bt_frames(t, s->bt)[0].addr == addr)
			return &s->cost;
	}
	fail_msg("no site at 0x%llx", (unsigned long long)addr);
	return NULL;
}

static void summary_and_sites(void **state)
{
	(void)state;
	rt_trace *t;
	rt_hp *h = profile("1. [10:00:00.000] malloc(100) = 0x10\n" A
			   "2. [10:00:00.500] free(0x10)\n\n"                 /* temporary */
			   "3. [10:00:01.000] malloc(200) = 0x20\n" A
			   "4. [10:00:01.000] malloc(300) = 0x30\n" B
			   "5. [10:00:01.000] free(0x20)\n\n"                 /* not: 0x30 came between */
			   "6. [10:00:01.000] open<fd>(3) = 0x3\n" C          /* not memory */
			   "7. [10:00:01.000] free(0x999)\n\n"                /* never allocated */
			   "8. [10:00:01.000] malloc(50) = 0x40\n" C
			   "9. [10:00:02.000] free(0x30)\n\n",
			   &t);
	const rt_hp_summary *s = rt_hp_get_summary(h);
	assert_int_equal(s->total.allocations, 4);
	assert_int_equal(s->total.temporary, 1);
	assert_int_equal(s->total.bytes, 650);
	assert_int_equal(s->total.peak, 500); /* calls 3 and 4 */
	assert_int_equal(s->peak_index, 4);
	assert_int_equal(s->total.leaked, 50);
	assert_int_equal(s->leaked_blocks, 1);
	assert_int_equal(s->frees, 3);
	assert_true(s->timed);
	assert_int_equal(s->last_us - s->first_us, 2000000);
	assert_int_equal(rt_hp_site_count(h), 3);
	const rt_hp_cost *a = site(h, t, 0x1001), *b = site(h, t, 0x1002), *c = site(h, t, 0x1003);
	assert_int_equal(a->allocations, 2);
	assert_int_equal(a->temporary, 1);
	assert_int_equal(a->peak, 200);
	assert_int_equal(b->peak, 300);
	assert_int_equal(c->peak, 0);
	assert_int_equal(c->leaked, 50);
	assert_int_equal(a->leaked + b->leaked, 0);
	rt_hp_free(h);
	rt_trace_free(t);
}

/* heaptrack compares (size, stack) pairs, not blocks, and resets the
 * last allocation to pair number 0, the trace's first. */
static void temporary_rule(void **state)
{
	(void)state;
	rt_trace *t;
	rt_hp *h = profile("1. malloc(64) = 0x10\n" A     /* the first pair */
			   "2. malloc(8) = 0x20\n" B
			   "3. malloc(8) = 0x30\n" B
			   "4. free(0x20)\n\n"            /* same pair as call 3: temporary */
			   "5. free(0x30)\n\n"            /* after a release: not */
			   "6. free(0x10)\n\n"            /* the first pair after a release: temporary */
			   "7. malloc(16) = 0x50\n" C
			   "8. free(0x50)\n\n"            /* realloc: release ... */
			   "9. realloc(32) = 0x60\n" C    /* ... then allocation */
			   "10. free(0x60)\n\n"           /* both halves temporary */
			   "11. malloc(4) = 0x70\n" C
			   "12. free(0x999)\n\n"          /* unknown: resets nothing */
			   "13. free(0x70)\n\n",          /* still temporary */
			   &t);
	assert_int_equal(rt_hp_get_summary(h)->total.temporary, 5);
	assert_int_equal(site(h, t, 0x1001)->temporary, 1);
	assert_int_equal(site(h, t, 0x1002)->temporary, 1);
	assert_int_equal(site(h, t, 0x1003)->temporary, 3);
	rt_hp_free(h);
	rt_trace_free(t);
}

/* A later, higher peak takes the owners from the earlier one; sites
 * untouched since keep what they held. */
static void peak_owners(void **state)
{
	(void)state;
	rt_trace *t;
	rt_hp *h = profile("1. malloc(1000) = 0x10\n" A
			   "2. malloc(10) = 0x20\n" B
			   "3. free(0x10)\n\n"           /* first peak: A 1000, B 10 */
			   "4. malloc(600) = 0x30\n" C
			   "5. malloc(600) = 0x40\n" C   /* second peak: B 10, C 1200 */
			   "6. free(0x30)\n\n"
			   "7. malloc(100) = 0x50\n" A   /* 720: not a peak */
			   "8. free(0x20)\n\n",
			   &t);
	assert_int_equal(rt_hp_get_summary(h)->total.peak, 1210);
	assert_int_equal(site(h, t, 0x1001)->peak, 0);
	assert_int_equal(site(h, t, 0x1002)->peak, 10);
	assert_int_equal(site(h, t, 0x1003)->peak, 1200);
	assert_int_equal(site(h, t, 0x1001)->leaked, 100);
	assert_int_equal(site(h, t, 0x1003)->leaked, 600);
	rt_hp_free(h);
	rt_trace_free(t);
}

/* Call times are since midnight: a trace running past it goes on. */
static void past_midnight(void **state)
{
	(void)state;
	rt_trace *t;
	rt_hp *h = profile("1. [23:59:59.000] malloc(10) = 0x10\n" A
			   "2. [00:00:01.500] malloc(20) = 0x20\n" A
			   "3. [00:00:02.000] free(0x10)\n\n",
			   &t);
	const rt_hp_summary *s = rt_hp_get_summary(h);
	assert_int_equal(s->last_us - s->first_us, 3000000);
	assert_int_equal(s->peak_us - s->first_us, 2500000);
	rt_hp_free(h);
	rt_trace_free(t);
}

static char *collapsed(const rt_hp *h, const rt_trace *t, rt_hp_cost_type type)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	assert_non_null(fp);
	assert_int_equal(rt_hp_write_collapsed(h, t, type, fp), 0);
	fclose(fp);
	return buf;
}

static void collapsed_stacks(void **state)
{
	(void)state;
	rt_trace *t;
	rt_hp *h = profile("1. malloc(100) = 0x10\n" A
			   "2. free(0x10)\n\n"
			   "3. malloc(7) = 0x20\n" B
			   "4. malloc(9) = 0x30\n" C
			   "5. malloc(3) = 0x40\n\n",     /* no backtrace */
			   &t);
	/* an inlined call: h2 inlined into the frame of g */
	rt_frame f = rt_trace_bt_frames(t, rt_hp_site_at(h, 1)->bt)[0];
	rt_srcloc locs[2] = {{rt_trace_intern(t, "h2", 2), RT_NONE, 0, 0, 0},
			     {rt_trace_intern(t, "g", 1), RT_NONE, 0, 0, 0}};
	rt_trace_set_frame_info(t, &f, RT_NONE, locs, 2);
	char *s = collapsed(h, t, RT_HP_LEAKED);
	assert_string_equal(s, "main;g;h2 7\n0x2003;0x1003 9\n[no backtrace] 3\n");
	free(s);
	s = collapsed(h, t, RT_HP_TEMPORARY);
	assert_string_equal(s, "main;f 1\n");
	free(s);
	for (rt_hp_cost_type ty = RT_HP_ALLOCATIONS; ty <= RT_HP_LEAKED; ty++) {
		s = collapsed(h, t, ty);
		uint64_t sum = 0;
		for (const char *p = s; (p = strchr(p, ' ')); p++)
			sum += strtoull(p + 1, NULL, 10);
		assert_int_equal(sum, rt_hp_cost_of(&rt_hp_get_summary(h)->total, ty));
		free(s);
	}
	rt_hp_cost_type ty;
	assert_true(rt_hp_parse_cost("peak", &ty));
	assert_int_equal(ty, RT_HP_PEAK);
	assert_false(rt_hp_parse_cost("size", &ty));
	rt_hp_free(h);
	rt_trace_free(t);
}

/* The heaptrack export of a profile fed with the exporter listening. */
static char *heaptrack_export(const char *body)
{
	FILE *tmp = tmpfile(), *out = tmpfile();
	assert_non_null(tmp);
	assert_non_null(out);
	rt_hp_heaptrack *x = rt_hp_heaptrack_new(tmp);
	rt_trace *t;
	rt_hp *h = profile_to(body, &t, rt_hp_heaptrack_event, x);
	assert_int_equal(rt_hp_heaptrack_write(x, h, t, "/bin/t -x", dup(fileno(out)), false), 0);
	size_t n = (size_t)ftell(out);
	char *s = calloc(1, n + 1);
	rewind(out);
	assert_int_equal(fread(s, 1, n, out), n);
	fclose(out);
	fclose(tmp);
	rt_hp_heaptrack_free(x);
	rt_hp_free(h);
	rt_trace_free(t);
	return s;
}

/* Strings, frames, the trace tree (main shared by f and g), allocation
 * kinds numbered by (size, stack) in order of first use, + and - naming
 * them, times in ms; an allocation over a live block releases it first;
 * releases of unknown blocks and other resources are left out. */
/* Collapsed stacks name each distinct frame once: frames at one
 * address with different texts (two modules loaded there in turn) keep
 * their own names, ';' in a name is replaced, and the names stay right
 * past the first table of names (3,000 distinct frames). */
static void collapsed_names_per_frame(void **state)
{
	(void)state;
	size_t cap = 3000 * 128 + 512, len = 0;
	char *body = malloc(cap), *want = malloc(cap);
	len += (size_t)snprintf(body + len, cap - len,
				"1. malloc(1) = 0x10\n\t0x1001 f() at a.c:1\n\t0x2001 main() at m.c:9\n\n"
				"2. malloc(1) = 0x20\n\t0x1001 k() at k.c:3\n\t0x2001 main() at m.c:9\n\n"
				"3. malloc(1) = 0x30\n\t0x1001 f() at a.c:1\n\t0x2001 main() at m.c:9\n\n"
				"4. malloc(1) = 0x40\n\t0x1002 operator;() at o.c:2\n\n");
	size_t wl = (size_t)snprintf(want, cap, "main;f 2\nmain;k 1\noperator: 1\n");
	for (int i = 0; i < 3000; i++) {
		len += (size_t)snprintf(body + len, cap - len, "%d. malloc(1) = 0x%x\n\t0x%x fn%d() at a.c:%d\n\t0x2001 main() at m.c:9\n\n",
					5 + i, 0x100000 + i * 16, 0x300000 + i, i, i + 1);
		wl += (size_t)snprintf(want + wl, cap - wl, "main;fn%d 1\n", i);
	}
	rt_trace *t;
	rt_hp *h = profile_ahead(body, false, &t);
	char *got = collapsed(h, t, RT_HP_ALLOCATIONS);
	assert_string_equal(got, want);
	free(got);
	free(body);
	free(want);
	rt_hp_free(h);
	rt_trace_free(t);
}

static void heaptrack_records(void **state)
{
	(void)state;
	char *s = heaptrack_export("1. [10:00:00.000] malloc(100) = 0x10\n" A
				   "2. [10:00:00.005] free(0x10)\n\n"
				   "3. [10:00:00.005] malloc(100) = 0x10\n" A
				   "4. [10:00:00.010] malloc(300) = 0x30\n" B
				   "5. [10:00:00.010] open<fd>(3) = 0x3\n" C
				   "6. [10:00:00.010] free(0x999)\n\n"
				   "7. [10:00:00.011] malloc(50) = 0x30\n" C
				   "8. [10:00:01.020] free(0x10)\n\n");
	assert_string_equal(s, "v 10400 3\nX /bin/t -x\n"
			       "s 4 main\ns 3 m.c\ni 2001 0 1 2 9\nt 1 0\n"
			       "s 1 f\ns 3 a.c\ni 1001 0 3 4 1\nt 2 1\n"
			       "i 2002 0 1 2 a\nt 3 0\ns 1 g\ns 3 b.c\ni 1002 0 5 6 2\nt 4 3\n"
			       "i 2003 0\nt 5 0\ni 1003 0\nt 6 5\n"
			       "a 64 2\na 12c 4\na 32 6\n"
			       "+ 0\nc 5\n- 0\n+ 0\nc a\n+ 1\nc b\n- 1\n+ 2\nc 3fc\n- 0\n");
	free(s);
}

/* The series over 9 s in 4 buckets: merged until the width (2^22 us)
 * holds the run; a bucket's figures; the cells (per site and bucket of
 * allocation) sum to the sites' costs; a release finds its allocation's
 * bucket after merges; the sizes. */
static void series_buckets(void **state)
{
	(void)state;
	const char *body = "1. [10:00:00.000] malloc(100) = 0x10\n" A
			   "2. [10:00:00.500] free(0x10)\n\n"
			   "3. [10:00:01.000] malloc(200) = 0x20\n" A
			   "4. [10:00:01.000] malloc(300) = 0x30\n" B
			   "5. [10:00:01.000] free(0x20)\n\n"
			   "6. [10:00:03.000] malloc(50) = 0x40\n" C
			   "7. [10:00:07.000] free(0x30)\n\n"
			   "8. [10:00:09.000] malloc(100) = 0x50\n" A;
	rt_hp_series *s = rt_hp_series_new(4, true);
	rt_trace *t;
	rt_hp *h = profile_to(body, &t, rt_hp_series_event, s);
	rt_hp_series_finish(s);
	assert_true(rt_hp_series_timed(s));
	assert_int_equal(rt_hp_series_count(s), 3);
	const rt_hp_bucket *b0 = rt_hp_series_at(s, 0), *b1 = rt_hp_series_at(s, 1), *b2 = rt_hp_series_at(s, 2);
	assert_int_equal(b0->end, 1 << 22);
	assert_int_equal(b2->start, 2 << 22);
	assert_int_equal(b0->allocations, 4);
	assert_int_equal(b0->frees, 2);
	assert_int_equal(b0->bytes_allocated, 650);
	assert_int_equal(b0->bytes_freed, 300);
	assert_int_equal(b0->live_bytes, 350);
	assert_int_equal(b0->live_blocks, 2);
	assert_int_equal(b0->max_live_bytes, 500);
	assert_int_equal(b1->frees, 1);
	assert_int_equal(b1->live_bytes, 50);
	assert_int_equal(b1->max_live_bytes, 350);
	assert_int_equal(b2->live_bytes, 150);
	const rt_hp_cell *cells;
	size_t n = rt_hp_series_cells(s, &cells);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < rt_hp_site_count(h); i++) {
		rt_hp_cost sum = {0};
		uint64_t leaked_blocks = 0;
		for (size_t k = 0; k < n; k++) {
			if (cells[k].site != i)
				continue;
			sum.allocations += cells[k].cost.allocations;
			sum.temporary += cells[k].cost.temporary;
			sum.bytes += cells[k].cost.bytes;
			sum.peak += cells[k].cost.peak;
			sum.leaked += cells[k].cost.leaked;
			leaked_blocks += cells[k].leaked_blocks;
			if (cells[k].bucket == 2)
				assert_int_equal(cells[k].cost.leaked, 100);
		}
		assert_memory_equal(&sum, &rt_hp_site_at(h, i)->cost, sizeof sum);
		assert_int_equal(leaked_blocks, sum.leaked ? 1 : 0);
	}
	const rt_hp_size_count *sz;
	assert_int_equal(rt_hp_series_sizes(s, &sz), 4);
	assert_int_equal(sz[0].size, 50);
	assert_int_equal(sz[1].size, 100);
	assert_int_equal(sz[1].allocations, 2);
	assert_int_equal(sz[3].size, 300);
	rt_hp_series_free(s);
	rt_hp_free(h);
	rt_trace_free(t);
}

/* What a listener was told: each event by its number. */
typedef struct told {
	rt_hp_event *ev;
	size_t n, cap, releases;
} told;

static void tell_fn(void *ctx, const rt_hp_event *e)
{
	told *w = ctx;
	assert_int_equal(e->seq, w->n);
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 1024;
		w->ev = realloc(w->ev, w->cap * sizeof *w->ev);
	}
	w->ev[w->n++] = *e;
}

/* The listener's events of text trace body (after HEADER), checked: a
 * release's `born` is its own block's allocation event. */
static void check_born(const char *body, size_t min_releases)
{
	told w = {NULL, 0, 0, 0};
	rt_trace *t;
	rt_hp *h = profile_heard(body, true, tell_fn, &w, &t);
	for (size_t i = 0; i < w.n; i++) {
		const rt_hp_event *e = &w.ev[i];
		if (e->alloc)
			continue;
		w.releases++;
		assert_true(e->born < e->seq && w.ev[e->born].alloc);
		assert_int_equal(w.ev[e->born].size, e->size);
		assert_int_equal(w.ev[e->born].site, e->site);
	}
	assert_int_equal(w.releases, rt_hp_get_summary(h)->frees);
	assert_true(w.releases >= min_releases);
	free(w.ev);
	rt_hp_free(h);
	rt_trace_free(t);
}

/* Each block's event number is kept beside the table across its
 * growths (to 32768 slots, lookahead on) and across the backward shifts
 * of deletion: 64 blocks whose addresses share a home slot in the first
 * table (1024 slots, the top 10 bits of the address times 2^64/phi),
 * released from the cluster's front. */
static void listener_born(void **state)
{
	(void)state;
	char *body = churn_body(200000);
	check_born(body, 60000);
	free(body);
	size_t cap = 64 * 128, len = 0;
	body = malloc(cap);
	uint64_t addr[64];
	for (uint64_t k = 1, n = 0; n < 64; k++)
		if ((k * 16 * 0x9e3779b97f4a7c15ull) >> 54 == 0)
			addr[n++] = k * 16;
	for (int i = 0; i < 64; i++)
		len += (size_t)snprintf(body + len, cap - len, "%d. malloc(%d) = 0x%llx\n%s", i + 1, i + 1,
					(unsigned long long)addr[i], i % 2 ? A : B);
	for (int i = 0; i < 64; i++)
		len += (size_t)snprintf(body + len, cap - len, "%d. free(0x%llx)\n\n", i + 65,
					(unsigned long long)addr[(i * 7) % 64]);
	check_born(body, 64);
	free(body);
}

/* Blocks of 2^32 - 1 bytes and more keep their sizes (beside the block
 * table, whose slots hold 32 bits): in the totals, the peak, the leaks,
 * the temporary rule; more of them than the first wide table holds. */
static void wide_sizes(void **state)
{
	(void)state;
	char body[8192];
	size_t len = (size_t)snprintf(body, sizeof body,
				      "1. malloc(5000000000) = 0x10\n" A
				      "2. malloc(4294967295) = 0x20\n" B
				      "3. malloc(4294967294) = 0x30\n" B
				      "4. free(0x30)\n\n" /* temporary: the same pair */
				      "5. malloc(5000000000) = 0x40\n" A
				      "6. free(0x40)\n\n" /* temporary: 5000000000 kept whole */
				      "7. free(0x20)\n\n");
	for (int i = 0; i < 40; i++) /* 0x1000 ... : 20 left live */
		len += (size_t)snprintf(body + len, sizeof body - len, "%d. malloc(%llu) = 0x%x\n" C, 8 + i,
					(unsigned long long)(1ull << 33) + (unsigned)i, 0x1000 + i * 16);
	for (int i = 0; i < 40; i += 2)
		len += (size_t)snprintf(body + len, sizeof body - len, "%d. free(0x%x)\n\n", 48 + i, 0x1000 + i * 16);
	rt_trace *t;
	rt_hp *h = profile(body, &t);
	const rt_hp_summary *s = rt_hp_get_summary(h);
	uint64_t c_all = 0, c_kept = 0;
	for (unsigned i = 0; i < 40; i++) {
		c_all += (1ull << 33) + i;
		c_kept += i % 2 ? (1ull << 33) + i : 0;
	}
	assert_int_equal(s->total.allocations, 44);
	assert_int_equal(s->total.temporary, 2);
	assert_int_equal(s->total.bytes, 10000000000ull + 4294967295ull + 4294967294ull + c_all);
	assert_int_equal(s->total.peak, 5000000000ull + c_all);
	assert_int_equal(s->total.leaked, 5000000000ull + c_kept);
	assert_int_equal(s->leaked_blocks, 21);
	assert_int_equal(site(h, t, 0x1001)->temporary, 1);
	assert_int_equal(site(h, t, 0x1002)->temporary, 1);
	assert_int_equal(site(h, t, 0x1003)->leaked, c_kept);
	rt_hp_free(h);
	rt_trace_free(t);
}

/* h's summary and sites are h0's: each site's costs, stack, first call
 * and blocks left. */
static void assert_same_profile(const rt_hp *h0, const rt_hp *h)
{
	assert_memory_equal(rt_hp_get_summary(h0), rt_hp_get_summary(h), sizeof(rt_hp_summary));
	assert_int_equal(rt_hp_site_count(h0), rt_hp_site_count(h));
	for (size_t i = 0; i < rt_hp_site_count(h0); i++) {
		const rt_hp_site *a = rt_hp_site_at(h0, i), *b = rt_hp_site_at(h, i);
		assert_memory_equal(&a->cost, &b->cost, sizeof a->cost);
		assert_int_equal(a->bt, b->bt);
		assert_int_equal(a->first_index, b->first_index);
		assert_int_equal(rt_hp_site_live_blocks(h0, i), rt_hp_site_live_blocks(h, i));
	}
}

/* Calls handed over by batches (the reader keeps them here) make the
 * profile that calls fed one at a time make, lookahead on or off; the
 * first three quarters fed one at a time (with the lookahead, the last
 * 16 are still queued when the batches come: 16000 live blocks, 32768
 * slots). */
static void batch_same_profile(void **state)
{
	(void)state;
	char *body = churn_body(300000);
	size_t n = strlen(HEADER) + strlen(body) + 1;
	char *buf = malloc(n);
	snprintf(buf, n, "%s%s", HEADER, body);
	rt_trace *t0;
	rt_hp *h0 = profile_ahead(body, false, &t0);
	for (int ahead = 0; ahead < 2; ahead++) {
		rt_trace *t = rt_trace_new();
		rt_diag err;
		assert_int_equal(rt_text_read_mem(t, buf, n - 1, "t.txt", NULL, NULL, &err), 0);
		rt_hp *h = rt_hp_new();
		rt_hp_set_lookahead(h, ahead);
		const rt_call *calls = rt_trace_calls_const(t);
		size_t nc = rt_trace_call_count(t);
		size_t i = 0;
		for (; i < nc / 4 * 3; i++)
			rt_hp_feed(h, t, &calls[i]);
		for (; i < nc; i += 1000)
			rt_hp_feed_calls(h, t, calls + i, nc - i < 1000 ? nc - i : 1000);
		rt_hp_finish(h);
		assert_same_profile(h0, h);
		rt_hp_free(h);
		rt_trace_free(t);
	}
	rt_hp_free(h0);
	rt_trace_free(t0);
	free(buf);
	free(body);
}

/* A trace with every case the batches' fast path hands back to the
 * general one, mixed with the common ones: calls without a time, then
 * timed ones past midnight; another resource's calls (with arguments);
 * blocks of 4 GB and more; allocations at a live block's address;
 * releases of unknown blocks; 700 stacks (sites past the first index
 * array); the table's growths; RT_CALL_AFTER_DROP on some calls. */
static char *edge_body(int n)
{
	size_t cap = (size_t)n * 96 + 1, len = 0;
	char *b = malloc(cap);
	unsigned live[512] = {0}, r = 12345, next = 0x1000;
	unsigned hh = 23, mm = 59, ss = 0, ms = 0;
	for (int i = 1; i <= n; i++) {
		r = r * 1103515245u + 12345u;
		unsigned x = r >> 8, slot = x % 512, pick = x % 100;
		char when[32] = "";
		if (i > 50) { /* 50 untimed calls first */
			ms += 7 + x % 50;
			ss += ms / 1000, ms %= 1000, mm += ss / 60, ss %= 60, hh += mm / 60, mm %= 60, hh %= 24;
			snprintf(when, sizeof when, "[%02u:%02u:%02u.%03u] ", hh, mm, ss, ms);
		}
		if (pick < 2) {
			len += (size_t)snprintf(b + len, cap - len, "%d. %sopen<fd>(3) = 0x%x\n\t$path = /x\n" C, i, when, slot);
		} else if (pick < 55 || !live[slot]) {
			unsigned addr = pick == 55 && live[slot] ? live[slot] : (next += 16); /* at a live block: a realloc */
			unsigned long long size = x % 97 == 0 ? 4294967295ull + x % 3 : (unsigned long long)(x % 64 + 1);
			len += (size_t)snprintf(b + len, cap - len, "%d. %smalloc(%llu) = 0x%x\n\t0x%x\n\t0x2001\n\n", i, when, size,
						addr, 0x3000 + x % 700);
			live[slot] = addr;
			if (pick < 20) /* freed at once: temporary */
				len += (size_t)snprintf(b + len, cap - len, "%d. %sfree(0x%x)\n\n", ++i, when, addr), live[slot] = 0;
		} else {
			unsigned addr = pick < 60 ? 0x7 : live[slot]; /* never allocated, or a live one */
			len += (size_t)snprintf(b + len, cap - len, "%d. %sfree(0x%x)\n\n", i, when, addr);
			live[slot] = pick < 60 ? live[slot] : 0;
		}
	}
	return b;
}

/* The profile of body's calls, batches of `batch` calls (0: one call at
 * a time, no lookahead), every 50th call marked after a dropped release. */
static rt_hp *profile_batched(const char *body, size_t batch, rt_trace **tp)
{
	size_t n = strlen(HEADER) + strlen(body) + 1;
	char *buf = malloc(n);
	snprintf(buf, n, "%s%s", HEADER, body);
	rt_trace *t = rt_trace_new();
	rt_diag err;
	if (rt_text_read_mem(t, buf, n - 1, "t.txt", NULL, NULL, &err))
		fail_msg("%s:%d:%d: %s", err.file, err.line, err.col, err.msg);
	free(buf);
	rt_call *calls = rt_trace_calls(t);
	size_t nc = rt_trace_call_count(t);
	for (size_t i = 0; i < nc; i += 50)
		calls[i].flags |= RT_CALL_AFTER_DROP;
	rt_hp *h = rt_hp_new();
	rt_hp_set_lookahead(h, batch != 0);
	for (size_t i = 0; i < nc; i += batch ? batch : 1) {
		if (batch)
			rt_hp_feed_calls(h, t, calls + i, nc - i < batch ? nc - i : batch);
		else
			rt_hp_feed(h, t, &calls[i]);
	}
	rt_hp_finish(h);
	*tp = t;
	return h;
}

/* The batches' fast path (no filter, no listener) makes the profile one
 * call at a time makes, whatever the batch's length: the summary, and
 * each site's costs, stack, first call and blocks left. */
static void fast_path_same_profile(void **state)
{
	(void)state;
	char *body = edge_body(60000);
	rt_trace *t0;
	rt_hp *h0 = profile_batched(body, 0, &t0);
	const rt_hp_summary *s0 = rt_hp_get_summary(h0);

	assert_true(s0->timed && s0->last_us - s0->first_us > 60000000 && s0->total.temporary > 100);
	assert_true(s0->total.peak > 4294967295ull && rt_hp_site_count(h0) > 600 && s0->leaked_blocks > 200);
	size_t batches[] = {1, 7, 256, 100000};
	for (size_t k = 0; k < sizeof batches / sizeof *batches; k++) {
		rt_trace *t;
		rt_hp *h = profile_batched(body, batches[k], &t);
		assert_same_profile(h0, h);
		rt_hp_free(h);
		rt_trace_free(t);
	}
	rt_hp_free(h0);
	rt_trace_free(t0);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(summary_and_sites),
		cmocka_unit_test(temporary_rule),
		cmocka_unit_test(peak_owners),
		cmocka_unit_test(past_midnight),
		cmocka_unit_test(collapsed_stacks),
		cmocka_unit_test(collapsed_names_per_frame),
		cmocka_unit_test(heaptrack_records),
		cmocka_unit_test(series_buckets),
		cmocka_unit_test(lookahead_same_profile),
		cmocka_unit_test(listener_born),
		cmocka_unit_test(wide_sizes),
		cmocka_unit_test(batch_same_profile),
		cmocka_unit_test(fast_path_same_profile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
