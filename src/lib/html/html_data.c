/* The report's aggregates: the JSON the page's script draws from, and
 * the same figures as HTML tables for readers without JavaScript.
 *
 * Per trace the JSON holds the frame names once (fr, with a place each,
 * fl), the stacks as a trie of (parent, frame) nodes (tn) and each
 * site's innermost node (ts), each
 * site's five costs (sc), the buckets over time (b) and the (site,
 * bucket) cells of rt_hp_series, flat (7 numbers a cell), and the sizes
 * in power-of-two ranges. Its size follows distinct stacks x buckets
 * used, not calls: tp_churn's 2 million allocations from one stack give a
 * few kilobytes. */
#include "html/html_int.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frame names interned: open addressing over their hashes. */
typedef struct names {
	char **s;
	uint32_t *slot; /* index + 1 */
	size_t n, cap, nslots;
} names;

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static uint64_t name_hash(const void *m, size_t i)
{
	return hash_str(((const names *)m)->s[i]);
}

static void names_grow(names *m)
{
	rt_index_grow(&m->slot, &m->nslots, 1024, m->n, name_hash, m);
}

/* The index of name; *fresh when it was new. */
static size_t intern(names *m, const char *name, bool *fresh)
{
	if ((m->n + 1) * 2 > m->nslots)
		names_grow(m);
	size_t j = hash_str(name) & (m->nslots - 1);
	for (; m->slot[j]; j = (j + 1) & (m->nslots - 1))
		if (!strcmp(m->s[m->slot[j] - 1], name)) {
			*fresh = false;
			return m->slot[j] - 1;
		}
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 256;
		m->s = rt_xrealloc(m->s, m->cap * sizeof *m->s);
	}
	m->s[m->n] = rt_xstrdup(name);
	m->slot[j] = (uint32_t)++m->n;
	*fresh = true;
	return m->n - 1;
}

static void names_free(names *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->s[i]);
	free(m->s);
	free(m->slot);
}

/* The stacks as a trie (node = its parent and frame; the root is 0), so
 * stacks sharing their outer frames share their nodes: python3's 3,000
 * sites of ~50 frames take ~20,000 nodes instead of 150,000 frames. */
typedef struct trie {
	uint64_t *key;  /* parent << 32 | frame, + 1; 0: a free slot */
	uint32_t *id;
	size_t n, nslots;
	rt_out nodes;   /* "parent,frame," per node, in id order */
} trie;

static uint32_t trie_node(trie *tr, uint32_t parent, uint32_t frame)
{
	if ((tr->n + 1) * 2 > tr->nslots) {
		uint64_t *ok = tr->key;
		uint32_t *oid = tr->id;
		size_t on = tr->nslots;
		tr->nslots = on ? on * 2 : 4096;
		tr->key = rt_xcalloc(tr->nslots, sizeof *tr->key);
		tr->id = rt_xmalloc(tr->nslots * sizeof *tr->id);
		for (size_t i = 0; i < on; i++)
			if (ok[i]) {
				size_t j = rt_mix64(ok[i]) & (tr->nslots - 1);
				while (tr->key[j])
					j = (j + 1) & (tr->nslots - 1);
				tr->key[j] = ok[i];
				tr->id[j] = oid[i];
			}
		free(ok);
		free(oid);
	}
	uint64_t k = ((uint64_t)parent << 32 | frame) + 1;
	size_t j = rt_mix64(k) & (tr->nslots - 1);
	for (; tr->key[j]; j = (j + 1) & (tr->nslots - 1))
		if (tr->key[j] == k)
			return tr->id[j];
	tr->key[j] = k;
	tr->id[j] = (uint32_t)++tr->n;
	if (tr->n > 1)
		rt_out_ch(&tr->nodes, ',');
	rt_out_u64(&tr->nodes, parent);
	rt_out_ch(&tr->nodes, ',');
	rt_out_u64(&tr->nodes, frame);
	return tr->id[j];
}

/* The frame names of a frame, outermost first (inlined calls are
 * frames of their own), interned; the places of new names go to fl.
 * Returns the trie node of the last. */
static uint32_t put_frame(trie *tr, uint32_t node, const rt_trace *t, const rt_frame *f, names *fr, rt_out *fl)
{
	char name[512], where[512];
	bool fresh;
	rt_frame_info info;
	bool known = rt_trace_frame_info(t, f, &info) && info.n;
	for (uint32_t l = known ? info.n : 1; l-- > 0;) {
		if (known && info.locs[l].fn == RT_NONE)
			continue;
		if (known)
			snprintf(name, sizeof name, "%s", rt_trace_str(t, info.locs[l].fn));
		else
			hw_func(t, f, name, sizeof name);
		size_t i = intern(fr, name, &fresh);
		if (fresh) {
			rt_out_ch(fl, fr->n > 1 ? ',' : '[');
			hw_json(fl, hw_where(t, f, where, sizeof where));
		}
		node = trie_node(tr, node, (uint32_t)i);
	}
	return node;
}

/* A site's stack: the trie node of its innermost frame. */
static uint32_t site_node(trie *tr, const rt_trace *t, uint32_t bt, names *fr, rt_out *fl)
{
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(t, bt), node = 0;
	const rt_frame *f = n ? rt_trace_bt_frames(t, bt) : NULL;
	for (uint32_t k = n; k-- > 0;)
		node = put_frame(tr, node, t, &f[k], fr, fl);
	return node;
}

static void put_u64s(rt_out *o, const char *key, const uint64_t *v, size_t n, bool comma)
{
	if (comma)
		rt_out_ch(o, ',');
	if (key) {
		hw_json(o, key);
		rt_out_ch(o, ':');
	}
	rt_out_ch(o, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			rt_out_ch(o, ',');
		rt_out_u64(o, v[i]);
	}
	rt_out_ch(o, ']');
}

static void put_buckets(rt_out *o, const rt_hp_series *s)
{
	size_t n = rt_hp_series_count(s);
	uint64_t *v = rt_xmalloc((n ? n : 1) * 5 * sizeof *v);
	for (size_t i = 0; i < n; i++) {
		const rt_hp_bucket *b = rt_hp_series_at(s, i);
		v[i] = b->live_bytes;
		v[n + i] = b->live_blocks;
		v[2 * n + i] = b->max_live_bytes;
		v[3 * n + i] = b->allocations;
		v[4 * n + i] = b->frees;
	}
	rt_out_str(o, ",\"b\":{\"w\":");
	rt_out_u64(o, n ? rt_hp_series_at(s, 0)->end : 1);
	put_u64s(o, "live", v, n, true);
	put_u64s(o, "blocks", v + n, n, true);
	put_u64s(o, "max", v + 2 * n, n, true);
	put_u64s(o, "allocs", v + 3 * n, n, true);
	put_u64s(o, "frees", v + 4 * n, n, true);
	rt_out_ch(o, '}');
	free(v);
	const rt_hp_cell *c;
	size_t nc = rt_hp_series_cells(s, &c);
	rt_out_str(o, ",\"cells\":[");
	for (size_t i = 0; i < nc; i++) {
		uint64_t row[7] = {c[i].site,	       c[i].bucket,	  c[i].cost.allocations, c[i].cost.temporary,
				   c[i].cost.bytes, c[i].cost.peak, c[i].cost.leaked};
		for (size_t k = 0; k < 7; k++) {
			if (i || k)
				rt_out_ch(o, ',');
			rt_out_u64(o, row[k]);
		}
	}
	rt_out_ch(o, ']');
}

/* Power-of-two ranges of sizes: [lo, hi, allocations, bytes]. */
size_t hw_size_ranges(const rt_hp_series *s, uint64_t r[65][4])
{
	const rt_hp_size_count *v;
	size_t n = rt_hp_series_sizes(s, &v), used = 0;
	memset(r, 0, 65 * sizeof *r);
	for (size_t i = 0; i < n; i++) {
		unsigned k = 0;
		while (k < 64 && v[i].size >> k > 1)
			k++;
		k = v[i].size ? k + 1 : 0;
		r[k][2] += v[i].allocations;
		r[k][3] += v[i].allocations * v[i].size;
		used = k + 1 > used ? k + 1 : used;
	}
	for (size_t k = 0; k < used; k++) {
		r[k][0] = k ? (uint64_t)1 << (k - 1) : 0;
		r[k][1] = k ? (k < 64 ? ((uint64_t)1 << k) - 1 : UINT64_MAX) : 0;
	}
	return used;
}

static void put_sizes(rt_out *o, const rt_hp_series *s)
{
	uint64_t r[65][4];
	size_t n = hw_size_ranges(s, r), first = 0;
	while (first < n && !r[first][2])
		first++;
	rt_out_str(o, ",\"sizes\":[");
	for (size_t k = first; k < n; k++) {
		rt_out_str(o, k > first ? ",[" : "[");
		for (size_t j = 0; j < 4; j++) {
			if (j)
				rt_out_ch(o, ',');
			rt_out_u64(o, r[k][j]);
		}
		rt_out_ch(o, ']');
	}
	rt_out_ch(o, ']');
}

static void put_trace(hw *w, size_t i)
{
	rt_out *o = w->o;
	const rt_html_input *in = &w->in[i];
	rt_out_str(o, i ? ",{\"name\":" : "{\"name\":");
	hw_json(o, in->name);
	rt_out_str(o, ",\"timed\":");
	rt_out_str(o, in->series && rt_hp_series_timed(in->series) ? "true" : "false");
	if (in->hp) {
		names fr = {0};
		rt_out fl;
		rt_out_init_mem(&fl);
		trie tr = {0};
		rt_out_init_mem(&tr.nodes);
		rt_out_str(o, ",\"ts\":[");
		size_t ns = rt_hp_site_count(in->hp);
		for (size_t s = 0; s < ns; s++) {
			if (s)
				rt_out_ch(o, ',');
			rt_out_u64(o, site_node(&tr, in->trace, rt_hp_site_at(in->hp, s)->bt, &fr, &fl));
		}
		rt_out_str(o, "],\"tn\":[");
		rt_out_mem(o, tr.nodes.buf, tr.nodes.len);
		free(tr.nodes.buf);
		free(tr.key);
		free(tr.id);
		rt_out_str(o, "],\"sc\":[");
		for (size_t s = 0; s < ns; s++) {
			const rt_hp_cost *c = &rt_hp_site_at(in->hp, s)->cost;
			uint64_t v[5] = {c->allocations, c->temporary, c->bytes, c->peak, c->leaked};
			put_u64s(o, NULL, v, 5, s > 0);
		}
		rt_out_str(o, "],\"fr\":[");
		for (size_t k = 0; k < fr.n; k++) {
			if (k)
				rt_out_ch(o, ',');
			hw_json(o, fr.s[k]);
		}
		rt_out_str(o, "],\"fl\":");
		rt_out_mem(o, fl.buf, fl.len);
		rt_out_str(o, fr.n ? "]" : "[]");
		free(fl.buf);
		names_free(&fr);
	}
	if (in->series) {
		put_buckets(o, in->series);
		put_sizes(o, in->series);
	}
	rt_out_ch(o, '}');
}

void hw_data_json(hw *w)
{
	rt_out_str(w->o, "<script type=\"application/json\" id=\"rt-data\">{\"version\":");
	hw_json(w->o, RTRACE_VERSION);
	rt_out_str(w->o, ",\"traces\":[");
	for (size_t i = 0; i < w->n; i++)
		put_trace(w, i);
	rt_out_str(w->o, "]}</script>\n");
}
