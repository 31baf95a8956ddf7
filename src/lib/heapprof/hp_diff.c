/* Two heap profiles compared by call site. A site is a backtrace id,
 * which means nothing across traces, and its addresses move with ASLR
 * and rebuilds; so each site gets a key from what its frames resolved to
 * (function, source file's base name, line, inlined calls, module's base
 * name; module+offset when unresolved) and the two profiles' sites are
 * matched by sorting (key, side) pairs: O(s log s) for s sites, memory
 * one key per site. The file's directory is left out so that two builds
 * in two trees match; the line is kept, as heaptrack's diff keeps it. */
#include "rtrace/heapprof.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct rt_hp_diff {
	rt_hp_diff_entry *e;
	size_t n;
};

typedef struct keybuf {
	char *s;
	size_t n, cap;
} keybuf;

/* Appends s, its ';' (the frame separator) turned into ':'. */
static void put(keybuf *k, const char *s)
{
	size_t len = strlen(s);
	if (k->n + len + 2 > k->cap) { /* room for a separator too */
		k->cap = (k->n + len + 2) * 2;
		k->s = rt_xrealloc(k->s, k->cap);
	}
	for (size_t i = 0; i < len; i++)
		k->s[k->n++] = s[i] == ';' ? ':' : s[i];
	k->s[k->n] = 0;
}

static void sep(keybuf *k)
{
	put(k, "");
	k->s[k->n++] = ';';
	k->s[k->n] = 0;
}

static const char *base(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* The mapping holding addr (the latest), or NULL. */
static const rt_mmap *mapping_at(const rt_trace *t, uint64_t addr)
{
	for (size_t i = rt_trace_mmap_count(t); i-- > 0;) {
		const rt_mmap *m = rt_trace_mmap_at(t, i);
		if (addr >= m->from && addr < m->to)
			return m;
	}
	return NULL;
}

static void put_unresolved(keybuf *k, const rt_trace *t, uint64_t addr)
{
	char num[64];
	const rt_mmap *m = mapping_at(t, addr);
	if (!m || !m->module) {
		snprintf(num, sizeof num, "0x%" PRIx64, addr);
		put(k, num);
		return;
	}
	uint64_t off = addr - m->from + (m->offset == RT_OFFSET_UNKNOWN ? 0 : m->offset);
	put(k, base(m->module));
	snprintf(num, sizeof num, "+0x%" PRIx64, off);
	put(k, num);
}

static void put_frame(keybuf *k, const rt_trace *t, const rt_frame *f)
{
	rt_frame_info info;
	if (!rt_trace_frame_info(t, f, &info) || !info.n) {
		put_unresolved(k, t, f->addr);
		return;
	}
	char num[32];
	for (uint32_t i = info.n; i-- > 0;) {
		const rt_srcloc *l = &info.locs[i];
		put(k, l->fn != RT_NONE ? rt_trace_str(t, l->fn) : "??");
		if (l->file != RT_NONE) {
			put(k, " (");
			put(k, base(rt_trace_str(t, l->file)));
			snprintf(num, sizeof num, ":%" PRIu32 ")", l->line);
			put(k, num);
		}
		if (i)
			sep(k);
	}
	if (info.module != RT_NONE) {
		put(k, " in ");
		put(k, base(rt_trace_str(t, info.module)));
	}
}

static char *stack_key(const rt_trace *t, uint32_t bt)
{
	keybuf k = {0};
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(t, bt);
	const rt_frame *f = n ? rt_trace_bt_frames(t, bt) : NULL;
	put(&k, n ? "" : "[no backtrace]");
	for (uint32_t i = n; i-- > 0;) {
		put_frame(&k, t, &f[i]);
		if (i)
			sep(&k);
	}
	return k.s;
}

typedef struct side_site {
	char *key;
	int side; /* 0 before, 1 after */
	size_t site;
} side_site;

static int cmp_side_site(const void *a, const void *b)
{
	const side_site *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	if (x->side != y->side)
		return x->side - y->side;
	return (x->site > y->site) - (x->site < y->site);
}

/* Folds the sorted pairs into entries, one per distinct key. */
static void fold(rt_hp_diff *d, side_site *v, size_t nv, const rt_hp *const h[2])
{
	for (size_t i = 0; i < nv; i++) {
		if (!d->n || strcmp(d->e[d->n - 1].key, v[i].key))
			d->e[d->n++] = (rt_hp_diff_entry){v[i].key, SIZE_MAX, SIZE_MAX, {0}, {0}};
		else
			free(v[i].key);
		rt_hp_diff_entry *e = &d->e[d->n - 1];
		size_t *site = v[i].side ? &e->after_site : &e->before_site;
		if (*site == SIZE_MAX)
			*site = v[i].site;
		rt_hp_cost_add(v[i].side ? &e->after : &e->before, &rt_hp_site_at(h[v[i].side], v[i].site)->cost);
	}
}

rt_hp_diff *rt_hp_diff_new(const rt_hp *before, const rt_trace *tb, const rt_hp *after, const rt_trace *ta)
{
	const rt_hp *h[2] = {before, after};
	const rt_trace *t[2] = {tb, ta};
	size_t nv = rt_hp_site_count(before) + rt_hp_site_count(after), k = 0;
	side_site *v = rt_xmalloc((nv ? nv : 1) * sizeof *v);
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < rt_hp_site_count(h[side]); i++)
			v[k++] = (side_site){stack_key(t[side], rt_hp_site_at(h[side], i)->bt), side, i};
	qsort(v, nv, sizeof *v, cmp_side_site);
	rt_hp_diff *d = rt_xcalloc(1, sizeof *d);
	d->e = rt_xmalloc((nv ? nv : 1) * sizeof *d->e);
	fold(d, v, nv, h);
	free(v);
	return d;
}

void rt_hp_diff_free(rt_hp_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free((char *)d->e[i].key);
	free(d->e);
	free(d);
}

size_t rt_hp_diff_count(const rt_hp_diff *d) { return d->n; }
const rt_hp_diff_entry *rt_hp_diff_at(const rt_hp_diff *d, size_t i) { return &d->e[i]; }

int64_t rt_hp_cost_delta(const rt_hp_cost *before, const rt_hp_cost *after, rt_hp_cost_type type)
{
	return (int64_t)(rt_hp_cost_of(after, type) - rt_hp_cost_of(before, type));
}

int rt_hp_diff_write_folded(const rt_hp_diff *d, rt_hp_cost_type type, FILE *fp)
{
	for (size_t i = 0; i < d->n; i++) {
		const rt_hp_diff_entry *e = &d->e[i];
		uint64_t b = rt_hp_cost_of(&e->before, type), a = rt_hp_cost_of(&e->after, type);
		if (!b && !a)
			continue;
		fprintf(fp, "%s %" PRIu64 " %" PRIu64 "\n", e->key, b, a);
	}
	if (fflush(fp) || ferror(fp))
		return errno ? -errno : -EIO;
	return 0;
}
