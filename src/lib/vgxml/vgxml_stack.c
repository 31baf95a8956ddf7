/* The frames of a Valgrind <stack> as the trace's backtraces: one rt_frame
 * per machine address (Valgrind prints an inline chain as several <frame>s
 * with the same <ip>), whose text is what sp-rtrace's resolver would have
 * printed after the address and whose details (rt_trace_frame_info) keep
 * every <frame>'s obj/fn/dir/file/line. Also the reader's cache of stacks
 * already seen. */
#include "util/util.h"
#include "vgxml/vgxml_read_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest inline chain kept as one frame; Valgrind's are a few deep. */
#define VGXML_CHAIN_MAX 64

static bool vgxml_str_eq(vgxml_str a, vgxml_str b)
{
	if (!a.s || !b.s)
		return !a.s && !b.s;
	return a.len == b.len && !memcmp(a.s, b.s, a.len);
}

static bool vgxml_same_loc(const vgxml_frame *a, const vgxml_frame *b)
{
	return a->line == b->line && vgxml_str_eq(a->fn, b->fn) && vgxml_str_eq(a->file, b->file) &&
	       vgxml_str_eq(a->dir, b->dir);
}

uint32_t rt_vgxml_chain_len(const vgxml_frame *f, uint32_t n)
{
	uint32_t k = 1;
	while (k < n && k < VGXML_CHAIN_MAX && f[k].ip == f[0].ip &&
	       vgxml_str_eq(f[k].obj, f[0].obj) && !vgxml_same_loc(&f[k - 1], &f[k]))
		k++;
	return k;
}

static uint32_t vgxml_intern(rt_trace *t, vgxml_str s)
{
	return s.s ? rt_trace_intern(t, s.s, s.len) : RT_NONE;
}

/* A growable scratch string; small ones stay on the caller's stack. */
typedef struct vgxml_buf {
	char *p;
	size_t n, cap;
	char local[256];
} vgxml_buf;

static void vgxml_buf_init(vgxml_buf *b)
{
	b->p = b->local;
	b->n = 0;
	b->cap = sizeof b->local;
}

static void vgxml_buf_put(vgxml_buf *b, const char *s, size_t len)
{
	if (b->n + len > b->cap) {
		size_t cap = (b->n + len) * 2;
		char *p = rt_xmalloc(cap);
		memcpy(p, b->p, b->n);
		if (b->p != b->local)
			free(b->p);
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, len);
	b->n += len;
}

static void vgxml_buf_free(vgxml_buf *b)
{
	if (b->p != b->local)
		free(b->p);
}

/* "<dir>/<file>" when dir is there and not empty, else <file>. */
static uint32_t vgxml_file_id(rt_trace *t, const vgxml_frame *f)
{
	if (!f->file.s)
		return RT_NONE;
	if (!f->dir.s || !f->dir.len)
		return vgxml_intern(t, f->file);
	vgxml_buf b;
	vgxml_buf_init(&b);
	vgxml_buf_put(&b, f->dir.s, f->dir.len);
	vgxml_buf_put(&b, "/", 1);
	vgxml_buf_put(&b, f->file.s, f->file.len);
	uint32_t id = rt_trace_intern(t, b.p, b.n);
	vgxml_buf_free(&b);
	return id;
}

/* The text after the address, from the innermost location, as the
 * resolver writes it: "FN at FILE:LINE", "FN from OBJ", "FN", "from OBJ"
 * (FN gets "()" unless it has a parameter list already). */
static uint32_t vgxml_frame_text(rt_trace *t, const rt_srcloc *loc, uint32_t module)
{
	if (loc->fn == RT_NONE && module == RT_NONE)
		return RT_NONE;
	vgxml_buf b;
	vgxml_buf_init(&b);
	if (loc->fn != RT_NONE) {
		const char *fn = rt_trace_str(t, loc->fn);
		vgxml_buf_put(&b, fn, strlen(fn));
		if (!strchr(fn, '('))
			vgxml_buf_put(&b, "()", 2);
	}
	const char *where = NULL;
	char num[16] = "";
	if (loc->fn != RT_NONE && loc->file != RT_NONE && loc->line) {
		where = rt_trace_str(t, loc->file);
		vgxml_buf_put(&b, " at ", 4);
		snprintf(num, sizeof num, ":%u", (unsigned)loc->line);
	} else if (module != RT_NONE) {
		where = rt_trace_str(t, module);
		vgxml_buf_put(&b, b.n ? " from " : "from ", b.n ? 6 : 5);
	}
	if (where)
		vgxml_buf_put(&b, where, strlen(where));
	vgxml_buf_put(&b, num, strlen(num));
	uint32_t id = rt_trace_intern(t, b.p, b.n);
	vgxml_buf_free(&b);
	return id;
}

/* Whether the trace already has these details for fr, or a longer chain
 * they begin (the same chain cut short by --num-callers). */
static bool vgxml_info_known(const rt_trace *t, const rt_frame *fr, uint32_t module,
			     const rt_srcloc *locs, uint32_t n)
{
	rt_frame_info info;
	if (!rt_trace_frame_info(t, fr, &info))
		return false;
	return info.module == module && info.n >= n && !memcmp(info.locs, locs, n * sizeof *locs);
}

rt_frame rt_vgxml_make_frame(rt_trace *t, const vgxml_frame *f, uint32_t n, bool *recorded)
{
	rt_srcloc locs[VGXML_CHAIN_MAX];
	if (n > VGXML_CHAIN_MAX)
		n = VGXML_CHAIN_MAX;
	uint32_t module = vgxml_intern(t, f[0].obj);
	bool any = module != RT_NONE || n > 1;
	for (uint32_t i = 0; i < n; i++) {
		locs[i] = (rt_srcloc){vgxml_intern(t, f[i].fn), vgxml_file_id(t, &f[i]), f[i].line, 0};
		any = any || locs[i].fn != RT_NONE || locs[i].file != RT_NONE || locs[i].line;
	}
	rt_frame fr = {f[0].ip, vgxml_frame_text(t, &locs[0], module)};
	*recorded = false;
	if (any && !vgxml_info_known(t, &fr, module, locs, n)) {
		rt_trace_set_frame_info(t, &fr, module, locs, n);
		*recorded = true;
	}
	return fr;
}

/* ---- stacks already seen ---- */

typedef struct vgxml_cached {
	uint64_t hash;
	uint64_t off; /* key bytes in keys[] */
	uint32_t len;
	uint32_t bt; /* RT_NONE: empty slot */
} vgxml_cached;

struct vgxml_stack_cache {
	vgxml_cached *slots;
	size_t nslots, n;
	char *keys;
	size_t nkeys, ckeys;
};

vgxml_stack_cache *rt_vgxml_stack_cache_new(void)
{
	vgxml_stack_cache *c = rt_xcalloc(1, sizeof *c);
	c->nslots = 1024;
	c->slots = rt_xmalloc(c->nslots * sizeof *c->slots);
	for (size_t i = 0; i < c->nslots; i++)
		c->slots[i].bt = RT_NONE;
	return c;
}

void rt_vgxml_stack_cache_free(vgxml_stack_cache *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c->keys);
	free(c);
}

static vgxml_cached *vgxml_cache_slot(const vgxml_stack_cache *c, const char *key, size_t len,
				      uint64_t hash)
{
	size_t mask = c->nslots - 1;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		vgxml_cached *s = &c->slots[i];
		if (s->bt == RT_NONE ||
		    (s->hash == hash && s->len == len && !memcmp(c->keys + s->off, key, len)))
			return s;
	}
}

uint32_t rt_vgxml_stack_cache_get(const vgxml_stack_cache *c, const char *key, size_t len,
				  uint64_t hash)
{
	return vgxml_cache_slot(c, key, len, hash)->bt;
}

static void vgxml_cache_grow(vgxml_stack_cache *c)
{
	vgxml_cached *old = c->slots;
	size_t nold = c->nslots;
	c->nslots *= 2;
	c->slots = rt_xmalloc(c->nslots * sizeof *c->slots);
	for (size_t i = 0; i < c->nslots; i++)
		c->slots[i].bt = RT_NONE;
	for (size_t i = 0; i < nold; i++)
		if (old[i].bt != RT_NONE)
			*vgxml_cache_slot(c, c->keys + old[i].off, old[i].len, old[i].hash) = old[i];
	free(old);
}

void rt_vgxml_stack_cache_put(vgxml_stack_cache *c, const char *key, size_t len, uint64_t hash,
			      uint32_t bt)
{
	if ((c->n + 1) * 2 > c->nslots)
		vgxml_cache_grow(c);
	vgxml_cached *s = vgxml_cache_slot(c, key, len, hash);
	if (s->bt != RT_NONE)
		return;
	rt_grow((void **)&c->keys, &c->ckeys, c->nkeys + len + 1, 1);
	memcpy(c->keys + c->nkeys, key, len);
	*s = (vgxml_cached){hash, c->nkeys, (uint32_t)len, bt};
	c->nkeys += len;
	c->n++;
}
