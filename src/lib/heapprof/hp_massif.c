/* Valgrind massif's output format from a heap profile (what ms_print
 * and massif-visualizer read; docs/massif-format.md says what of it is
 * relied on). Snapshots are taken while the calls stream through rt_hp,
 * with massif's policy in its simple form: a snapshot per call until
 * 100 are kept, then one of each pair is dropped and the spacing grows,
 * so memory stays bounded whatever the trace's length; every 10th
 * snapshot kept is detailed (the live bytes of each site, copied). The
 * peak is only known at the end: its snapshot is put in time order when
 * writing, its tree made of the sites' peak costs, which rt_hp computes
 * in the same pass. Trees are written as massif does: from the
 * allocating frame outward, siblings merged by code address and sorted
 * by bytes, an inlined call a node of its own at the same address, the
 * stack cut below main, and children under 1% of the snapshot's heap
 * folded into one "in K places, all below massif's threshold" line. */
#include "rtrace/heapprof.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SNAPSHOTS = 100, DETAILED_FREQ = 10 };

typedef struct item {
	uint32_t site, len; /* len: frames kept, up to main */
	uint64_t bytes;
	const rt_frame *f;
	uint64_t key; /* the frame address at the depth being grouped */
	bool has;     /* the backtrace reaches that depth */
} item;

typedef struct snap {
	uint64_t calls, us, moved, heap; /* moved: bytes allocated and released */
	item *detail;                    /* NULL: not detailed */
	size_t ndetail;
} snap;

struct rt_hp_massif {
	snap *s;
	size_t n;
	uint64_t interval, calls;
	snap peak;
};

rt_hp_massif *rt_hp_massif_new(void)
{
	rt_hp_massif *m = rt_xcalloc(1, sizeof *m);
	m->s = rt_xmalloc(MAX_SNAPSHOTS * sizeof *m->s);
	return m;
}

void rt_hp_massif_free(rt_hp_massif *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->s[i].detail);
	free(m->s);
	free(m);
}

static snap now_of(const rt_hp *h)
{
	const rt_hp_summary *sum = rt_hp_get_summary(h);
	uint64_t live = rt_hp_live(h);
	return (snap){sum->total.allocations + sum->frees, sum->timed ? sum->last_us - sum->first_us : 0,
		      2 * sum->total.bytes - live, live, NULL, 0};
}

/* The live bytes of each site seen so far: those with none are kept too,
 * as massif's tree keeps the places that allocated before (they count
 * among the places below the threshold). */
static void take_detail(snap *s, const rt_hp *h)
{
	size_t n = rt_hp_site_count(h);
	s->detail = rt_xmalloc((n ? n : 1) * sizeof *s->detail);
	for (size_t i = 0; i < n; i++)
		s->detail[i] = (item){.site = (uint32_t)i, .bytes = rt_hp_site_live(h, i)};
	s->ndetail = n;
}

/* A snapshot is detailed when it lands in every 10th place of the list. */
static bool detailed_place(size_t i)
{
	return i % DETAILED_FREQ == DETAILED_FREQ - 1;
}

/* Full: one snapshot of each pair goes, and the next ones are spaced so
 * that the kept half spans about the same again. Place k keeps the pair
 * (2k, 2k + 1): the first, but in a detailed place the second, which sat
 * in one too; so every 10th snapshot stays detailed, evenly spread, and
 * at most a tenth of them hold trees. */
static void cull(rt_hp_massif *m)
{
	size_t k = 0;
	for (size_t i = 0; i + 1 < m->n; i += 2, k++) {
		bool second = detailed_place(k);
		free(m->s[second ? i : i + 1].detail);
		m->s[k] = m->s[second ? i + 1 : i];
	}
	m->n = k;
	uint64_t spread = (m->s[k - 1].calls - m->s[0].calls) / k;
	m->interval = spread > m->interval * 2 ? spread : m->interval * 2;
	if (!m->interval)
		m->interval = 1;
}

void rt_hp_massif_sample(rt_hp_massif *m, const rt_hp *h)
{
	snap now = now_of(h);
	if (now.calls == m->calls) /* not a memory call */
		return;
	m->calls = now.calls;
	if (now.heap > m->peak.heap)
		m->peak = now;
	if (m->n && now.calls - m->s[m->n - 1].calls < m->interval)
		return;
	if (m->n == MAX_SNAPSHOTS)
		cull(m);
	if (detailed_place(m->n))
		take_detail(&now, h);
	m->s[m->n++] = now;
}

bool rt_hp_parse_time_unit(const char *name, rt_hp_time_unit *unit)
{
	static const char *const names[] = {"i", "ms", "B"};
	for (size_t i = 0; i < 3; i++)
		if (!strcmp(name, names[i])) {
			*unit = (rt_hp_time_unit)(RT_HP_TIME_CALLS + i);
			return true;
		}
	return false;
}

typedef struct writer {
	FILE *fp;
	const rt_hp *h;
	const rt_trace *t;
	rt_hp_time_unit unit;
	uint64_t total; /* the snapshot's heap: the threshold's base */
	size_t num;     /* the next snapshot's number */
} writer;

/* Text that ms_print takes as it is: no '#' (a comment), no line end. */
static void put_text(FILE *fp, const char *s)
{
	for (; *s; s++)
		fputc(*s == '#' ? '?' : *s == '\n' || *s == '\r' ? ' ' : *s, fp);
}

static void put_indent(FILE *fp, int indent)
{
	for (int i = 0; i < indent; i++)
		fputc(' ', fp);
}

/* "fn (file:line)", or "??? (in module)" as massif names a frame. */
static void put_loc(const writer *w, const rt_frame *f, const rt_srcloc *loc, uint32_t module)
{
	put_text(w->fp, loc && loc->fn != RT_NONE ? rt_trace_str(w->t, loc->fn) : "???");
	const char *mod = module != RT_NONE ? rt_trace_str(w->t, module) : rt_trace_module_at(w->t, f->addr);
	if (loc && loc->file != RT_NONE && loc->line) {
		const char *file = rt_trace_str(w->t, loc->file), *base = strrchr(file, '/');
		fputs(" (", w->fp);
		put_text(w->fp, base ? base + 1 : file);
		fprintf(w->fp, ":%u)", loc->line);
	} else if (mod) {
		fputs(" (in ", w->fp);
		put_text(w->fp, mod);
		fputc(')', w->fp);
	}
}

/* A frame's node lines: one per function of its inline chain, innermost
 * first, each but the last with the next as its one child. Returns the
 * indent of the last, whose line gives `nchildren`. */
static int put_frame(const writer *w, const rt_frame *f, uint64_t bytes, size_t nchildren, int indent)
{
	rt_frame_info info;
	bool known = rt_trace_frame_info(w->t, f, &info) && info.n;
	uint32_t n = known ? info.n : 1;
	for (uint32_t k = 0; k < n; k++, indent++) {
		put_indent(w->fp, indent);
		fprintf(w->fp, "n%zu: %" PRIu64 " 0x%" PRIX64 ": ", k + 1 < n ? 1 : nchildren, bytes, f->addr);
		put_loc(w, f, known ? &info.locs[k] : NULL, known ? info.module : RT_NONE);
		fputc('\n', w->fp);
	}
	return indent - 1;
}

static int cmp_item(const void *a, const void *b)
{
	const item *x = a, *y = b;
	if (x->has != y->has)
		return x->has ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

typedef struct group {
	size_t first, n;
	uint64_t bytes, key;
} group;

static int cmp_group(const void *a, const void *b)
{
	const group *x = a, *y = b;
	if (x->bytes != y->bytes)
		return (x->bytes < y->bytes) - (x->bytes > y->bytes);
	return (x->key > y->key) - (x->key < y->key);
}

/* The items' frames at depth d, merged by address, heaviest first. */
static size_t group_at(item *it, size_t n, uint32_t d, group **out)
{
	for (size_t i = 0; i < n; i++) {
		it[i].has = it[i].len > d;
		it[i].key = it[i].has ? it[i].f[d].addr : 0;
	}
	qsort(it, n, sizeof *it, cmp_item);
	group *g = rt_xmalloc((n ? n : 1) * sizeof *g);
	size_t ng = 0;
	for (size_t i = 0; i < n && it[i].has; i++) {
		if (!ng || it[i].key != g[ng - 1].key)
			g[ng++] = (group){i, 0, 0, it[i].key};
		g[ng - 1].n++;
		g[ng - 1].bytes += it[i].bytes;
	}
	qsort(g, ng, sizeof *g, cmp_group);
	*out = g;
	return ng;
}

static bool significant(const writer *w, uint64_t bytes)
{
	return w->total && bytes * 100 >= w->total; /* massif's 1.00% */
}

/* A node (the root when f is NULL) and, below it, its callers at depth d. */
static void put_node(const writer *w, const rt_frame *f, item *it, size_t n, uint64_t bytes, uint32_t d, int indent)
{
	group *g;
	size_t ng = group_at(it, n, d, &g), nsig = 0;
	uint64_t insig = 0;
	for (size_t i = 0; i < ng; i++) {
		if (significant(w, g[i].bytes))
			nsig++;
		else
			insig += g[i].bytes;
	}
	size_t nchildren = nsig + (nsig < ng);
	if (f) {
		indent = put_frame(w, f, bytes, nchildren, indent);
	} else {
		fprintf(w->fp, "n%zu: %" PRIu64 " (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n",
			nchildren, bytes);
	}
	for (size_t i = 0; i < nsig; i++)
		put_node(w, &it[g[i].first].f[d], it + g[i].first, g[i].n, g[i].bytes, d + 1, indent + 1);
	if (nsig < ng) {
		put_indent(w->fp, indent + 1);
		fprintf(w->fp, "n0: %" PRIu64 " in %zu place%s, %sbelow massif's threshold (1.00%%)\n", insig, ng - nsig,
			ng - nsig > 1 ? "s" : "", ng - nsig > 1 ? "all " : "");
	}
	free(g);
}

/* How many frames of a backtrace massif shows: up to main. */
static uint32_t shown_len(const rt_trace *t, const rt_frame *f, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		rt_frame_info info;
		if (rt_trace_frame_info(t, &f[k], &info) && info.n && info.locs[info.n - 1].fn != RT_NONE &&
		    !strcmp(rt_trace_str(t, info.locs[info.n - 1].fn), "main"))
			return k + 1;
	}
	return n;
}

static void put_tree(writer *w, item *it, size_t n, uint64_t heap)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t bt = rt_hp_site_at(w->h, it[i].site)->bt;
		uint32_t len = bt == RT_NONE ? 0 : rt_trace_bt_len(w->t, bt);
		it[i].f = len ? rt_trace_bt_frames(w->t, bt) : NULL;
		it[i].len = len ? shown_len(w->t, it[i].f, len) : 0;
	}
	w->total = heap;
	put_node(w, NULL, it, n, heap, 0, 0);
}

static uint64_t time_of(const writer *w, const snap *s)
{
	switch (w->unit) {
	case RT_HP_TIME_MS: return s->us / 1000;
	case RT_HP_TIME_BYTES: return s->moved;
	default: return s->calls;
	}
}

/* One snapshot; `tree`: its items (detailed or peak), else NULL. */
static void put_snapshot(writer *w, const snap *s, item *tree, size_t n, const char *kind)
{
	fprintf(w->fp, "#-----------\nsnapshot=%zu\n#-----------\n", w->num++);
	fprintf(w->fp, "time=%" PRIu64 "\nmem_heap_B=%" PRIu64 "\nmem_heap_extra_B=0\nmem_stacks_B=0\n", time_of(w, s),
		s->heap);
	fprintf(w->fp, "heap_tree=%s\n", kind);
	if (tree)
		put_tree(w, tree, n, s->heap);
}

/* The peak's tree: the bytes at the peak of the sites seen by then. */
static void put_peak(writer *w, const snap *peak)
{
	size_t n = rt_hp_site_count(w->h), k = 0;
	uint64_t at = rt_hp_get_summary(w->h)->peak_index;
	item *it = rt_xmalloc((n ? n : 1) * sizeof *it);
	for (size_t i = 0; i < n; i++) {
		const rt_hp_site *s = rt_hp_site_at(w->h, i);
		if (s->first_index <= at)
			it[k++] = (item){.site = (uint32_t)i, .bytes = s->cost.peak};
	}
	put_snapshot(w, peak, it, k, "peak");
	free(it);
}

static void put_header(FILE *fp, const char *desc, const char *cmd, const char *unit)
{
	fputs("desc: ", fp);
	put_text(fp, desc && *desc ? desc : "(none)");
	fputs("\ncmd: ", fp);
	put_text(fp, cmd && *cmd ? cmd : "(unknown)");
	fprintf(fp, "\ntime_unit: %s\n", unit);
}

int rt_hp_write_massif(const rt_hp_massif *m, const rt_hp *h, const rt_trace *t, rt_hp_time_unit unit,
		       const char *cmd, const char *desc, FILE *fp)
{
	if (unit == RT_HP_TIME_DEFAULT)
		unit = rt_hp_get_summary(h)->timed ? RT_HP_TIME_MS : RT_HP_TIME_CALLS;
	writer w = {fp, h, t, unit, 0, 0};
	put_header(fp, desc, cmd, unit == RT_HP_TIME_MS ? "ms" : unit == RT_HP_TIME_BYTES ? "B" : "i");
	snap zero = {0}, end = now_of(h);
	bool peak_done = !m->peak.heap;
	put_snapshot(&w, &zero, NULL, 0, "empty");
	for (size_t i = 0; i < m->n; i++) {
		const snap *s = &m->s[i];
		if (!peak_done && s->calls >= m->peak.calls) {
			put_peak(&w, &m->peak);
			peak_done = true;
			if (s->calls == m->peak.calls)
				continue;
		}
		put_snapshot(&w, s, s->detail, s->ndetail, s->detail ? "detailed" : "empty");
	}
	if (!peak_done)
		put_peak(&w, &m->peak);
	if (end.calls > (m->n ? m->s[m->n - 1].calls : 0) && end.calls > m->peak.calls)
		put_snapshot(&w, &end, NULL, 0, "empty");
	if (fflush(fp) || ferror(fp))
		return errno ? -errno : -EIO;
	return 0;
}
