/* The trace model: registries, interned strings and backtraces, calls.
 * What other parts of the library attach to a trace (frame details,
 * heap checking results, Valgrind documents) are extensions: the trace
 * keeps a pointer per extension descriptor and frees it through the
 * descriptor, so the core knows none of them (trace_int.h).
 * Backtraces are interned in one array of frames, indexed by an open
 * table of 8-byte slots (hash, id): python3's trace, 87,903 stacks of
 * 2.13M frames, keeps 34 MB of frames and 2 MB of slots (6.3 MB when a
 * slot also held the stack's length and offset: `rtrace heap`'s peak RSS
 * 82 -> 77 MB).
 * While the trace is read, the frames are a tree of (parent, frame) nodes
 * instead, as heaptrack keeps them: stacks share their outer frames, and
 * python3's 2.13M frames are 271k nodes of 16 bytes (4.3 MB, and 2 MB of
 * child slots, for 34 MB). The first reader of frames (rt_trace_bt_frames,
 * the resolver's in-place pass) lays them out as one array, in id order as
 * interning them there would have: readers see the same frames at the
 * same places, and the array exists once the mapped trace is gone
 * (`rtrace heap`'s peak RSS at the end of its pass). */
#include "rtrace/trace.h"
#include "model/trace_int.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rt_bt {
	uint64_t off; /* into frames[]; in the tree, the innermost frame's node */
	uint32_t n;
	uint32_t hash;
} rt_bt;

/* A slot carries the hash, so that a probe reads bts[] and the frames
 * only for a probable match (nearly always the match): 8 bytes, not the
 * 24 of a slot that also held the length and the offset (python3's
 * 87,903 stacks: 262,144 slots, 2 MB instead of 6.3 MB). */
struct bt_slot {
	uint32_t hash;
	uint32_t id1; /* bt id + 1; 0 = empty */
};

/* A frame of the tree: 16 bytes, rt_frame's padding holding the parent. */
typedef struct bt_node {
	uint64_t addr;
	uint32_t text;
	uint32_t parent1; /* parent node + 1; 0: an outermost frame */
} bt_node;

/* The tree of frames, while no reader wanted them as an array: nodes,
 * and an open table of node + 1 by (parent, frame). */
typedef struct bt_tree {
	bt_node *nodes;
	size_t nnodes, cnodes;
	uint32_t *slots;
	size_t nslots;
} bt_tree;

/* Extensions are few (frame details, heap checking results, Valgrind
 * documents): a short array searched linearly. */
#define RT_TRACE_MAX_EXTS 8

struct rt_ext_slot {
	const rt_trace_ext *ext;
	void *data;
};

typedef struct rt_argblock {
	uint32_t n;
	rt_kv *kv; /* n entries; strings are in the same allocation */
} rt_argblock;

struct rt_trace {
	rt_arena arena;
	rt_strtab strs;

	rt_kv *header;
	size_t nheader, cheader;
	rt_strtab header_keys; /* key id == position in header[] */
	rt_mmap *mmaps;
	size_t nmmaps, cmmaps;
	rt_context *contexts;
	size_t ncontexts, ccontexts;
	rt_resource resources[RT_MAX_RESOURCES];
	size_t nresources;
	rt_comment *comments;
	size_t ncomments, ccomments;
	rt_attachment *attachments;
	size_t nattachments, cattachments;

	rt_frame *frames; /* NULL while the tree holds them */
	size_t nframes, cframes;
	bt_tree tree;
	bool flat; /* frames[] holds the frames, the tree is gone */
	rt_bt *bts;
	size_t nbts, cbts;
	struct bt_slot *bt_slots;
	size_t nbt_slots;
	uint32_t empty_bt; /* id of the empty backtrace, RT_NONE until seen */
	bool bts_stale; /* rt_trace_bts_reindex_later: hashes and table to redo */
	bool bt_texts;  /* a frame of a stack has a text (or may: rewritten) */

	rt_argblock *args;
	size_t nargs, cargs;
	uint32_t *free_args;
	size_t nfree_args, cfree_args;

	rt_call *calls;
	size_t ncalls, ccalls, ndead;
	int ts_digits;
	uint64_t last_ts_us; /* rt_trace_saw_call */
	bool has_last_ts;
	struct rt_ext_slot exts[RT_TRACE_MAX_EXTS];
	size_t nexts;
};

rt_trace *rt_trace_new(void)
{
	rt_trace *t = rt_xcalloc(1, sizeof *t);
	rt_arena_init(&t->arena);
	rt_strtab_init(&t->strs, &t->arena);
	rt_strtab_init(&t->header_keys, &t->arena);
	t->ts_digits = 3;
	t->empty_bt = RT_NONE;
	return t;
}

void rt_trace_free(rt_trace *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nargs; i++)
		free(t->args[i].kv);
	free(t->args);
	free(t->free_args);
	free(t->header);
	free(t->mmaps);
	free(t->contexts);
	free(t->comments);
	free(t->attachments);
	free(t->frames);
	free(t->tree.nodes);
	free(t->tree.slots);
	free(t->bts);
	free(t->bt_slots);
	free(t->calls);
	for (size_t i = 0; i < t->nexts; i++)
		if (t->exts[i].data && t->exts[i].ext->destroy)
			t->exts[i].ext->destroy(t->exts[i].data);
	rt_strtab_free(&t->strs);
	rt_strtab_free(&t->header_keys);
	rt_arena_free(&t->arena);
	free(t);
}

const char *rt_trace_strdup(rt_trace *t, const char *s, size_t len)
{
	return rt_arena_strndup(&t->arena, s, len);
}

uint32_t rt_trace_intern(rt_trace *t, const char *s, size_t len)
{
	return rt_strtab_intern(&t->strs, s, len);
}

const char *rt_trace_str(const rt_trace *t, uint32_t id)
{
	return id < t->strs.n ? t->strs.strs[id] : "";
}

void rt_trace_str_mark(const rt_trace *t, rt_str_mark *m)
{
	rt_arena_mark a = rt_arena_get_mark(&t->arena);
	m->nstrs = t->strs.n;
	m->head = a.head;
	m->cur = a.cur;
	m->end = a.end;
}

bool rt_trace_str_unchanged(const rt_trace *t, const rt_str_mark *m)
{
	return t->strs.n == m->nstrs && t->arena.head == m->head && t->arena.cur == m->cur;
}

void rt_trace_str_release(rt_trace *t, const rt_str_mark *m)
{
	rt_strtab_truncate(&t->strs, m->nstrs);
	rt_arena_mark a = {m->head, m->cur, m->end};
	rt_arena_rewind(&t->arena, a);
}

static const char *dup0(rt_trace *t, const char *s)
{
	return s ? rt_arena_strndup(&t->arena, s, strlen(s)) : NULL;
}

void rt_trace_set_header(rt_trace *t, const char *key, const char *value)
{
	/* keys are interned in order of first appearance, so a key's id is
	 * its position: no linear search (a header line may hold 10^5 keys) */
	uint32_t id = rt_strtab_intern(&t->header_keys, key, strlen(key));
	if (id < t->nheader) {
		t->header[id].value = dup0(t, value);
		return;
	}
	rt_kv kv = {t->header_keys.strs[id], dup0(t, value)};
	RT_PUSH(t->header, t->nheader, t->cheader, kv);
}

const char *rt_trace_header(const rt_trace *t, const char *key)
{
	for (size_t i = 0; i < t->nheader; i++)
		if (strcmp(t->header[i].key, key) == 0)
			return t->header[i].value;
	return NULL;
}

size_t rt_trace_header_count(const rt_trace *t) { return t->nheader; }
const rt_kv *rt_trace_header_at(const rt_trace *t, size_t i) { return &t->header[i]; }

unsigned rt_trace_filter_bits(const rt_trace *t)
{
	const char *f = rt_trace_header(t, "filter");
	unsigned bits = 0;
	if (!f)
		return 0;
	/* sp-rtrace matches the tags anywhere in the field */
	if (strstr(f, "leaks"))
		bits |= RT_FILTER_LEAKS;
	if (strstr(f, "compress"))
		bits |= RT_FILTER_COMPRESS;
	if (strstr(f, "resolve"))
		bits |= RT_FILTER_RESOLVE;
	return bits;
}

void rt_trace_add_mmap(rt_trace *t, const char *module, uint64_t from, uint64_t to)
{
	rt_mmap m = {module, from, to, RT_OFFSET_UNKNOWN, 0, UINT64_MAX};
	rt_trace_add_mmap_full(t, &m);
}

size_t rt_trace_add_mmap_full(rt_trace *t, const rt_mmap *m)
{
	rt_mmap c = *m;
	c.module = dup0(t, m->module);
	RT_PUSH(t->mmaps, t->nmmaps, t->cmmaps, c);
	return t->nmmaps - 1;
}

void rt_trace_set_mmap_until(rt_trace *t, size_t i, uint64_t until)
{
	if (i < t->nmmaps)
		t->mmaps[i].until = until;
}

size_t rt_trace_mmap_count(const rt_trace *t) { return t->nmmaps; }
const rt_mmap *rt_trace_mmap_at(const rt_trace *t, size_t i) { return &t->mmaps[i]; }

const char *rt_trace_module_at(const rt_trace *t, uint64_t addr)
{
	for (size_t i = t->nmmaps; i-- > 0;)
		if (addr >= t->mmaps[i].from && addr < t->mmaps[i].to)
			return t->mmaps[i].module;
	return NULL;
}

void rt_trace_add_context(rt_trace *t, uint32_t id, const char *name)
{
	rt_context c = {id, dup0(t, name)};
	RT_PUSH(t->contexts, t->ncontexts, t->ccontexts, c);
}

size_t rt_trace_context_count(const rt_trace *t) { return t->ncontexts; }
const rt_context *rt_trace_context_at(const rt_trace *t, size_t i) { return &t->contexts[i]; }
void rt_trace_clear_contexts(rt_trace *t) { t->ncontexts = 0; }

uint8_t rt_trace_find_resource(const rt_trace *t, const char *type, size_t len)
{
	for (size_t i = 0; i < t->nresources; i++) {
		const char *rt = t->resources[i].type;
		if (strlen(rt) == len && memcmp(rt, type, len) == 0)
			return (uint8_t)(i + 1);
	}
	return 0;
}

uint8_t rt_trace_add_resource(rt_trace *t, uint32_t mask, const char *type,
			      const char *desc, const char *flags)
{
	uint8_t have = rt_trace_find_resource(t, type, strlen(type));
	if (have)
		return have;
	if (t->nresources == RT_MAX_RESOURCES)
		return 0;
	rt_resource *r = &t->resources[t->nresources++];
	r->mask = mask;
	r->type = dup0(t, type);
	r->desc = dup0(t, desc ? desc : "");
	r->flags = dup0(t, flags);
	r->refcount = flags && strstr(flags, "refcount");
	r->removed = false;
	return (uint8_t)t->nresources;
}

size_t rt_trace_resource_count(const rt_trace *t) { return t->nresources; }
rt_resource *rt_trace_resource_at(rt_trace *t, size_t i) { return &t->resources[i]; }

const rt_resource *rt_trace_resource_get(const rt_trace *t, uint8_t res_type)
{
	return res_type && res_type <= t->nresources ? &t->resources[res_type - 1] : NULL;
}

size_t rt_trace_resource_live(const rt_trace *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nresources; i++)
		n += !t->resources[i].removed;
	return n;
}

void rt_trace_add_comment(rt_trace *t, uint64_t after, const char *text, size_t len)
{
	rt_comment c = {after, rt_arena_strndup(&t->arena, text, len)};
	RT_PUSH(t->comments, t->ncomments, t->ccomments, c);
}

size_t rt_trace_comment_count(const rt_trace *t) { return t->ncomments; }
const rt_comment *rt_trace_comment_at(const rt_trace *t, size_t i) { return &t->comments[i]; }

void rt_trace_add_attachment(rt_trace *t, const char *name, const char *path)
{
	rt_attachment a = {dup0(t, name), dup0(t, path)};
	RT_PUSH(t->attachments, t->nattachments, t->cattachments, a);
}

size_t rt_trace_attachment_count(const rt_trace *t) { return t->nattachments; }
const rt_attachment *rt_trace_attachment_at(const rt_trace *t, size_t i) { return &t->attachments[i]; }

/* --- backtraces --- */

/* One multiply per frame and a full mix at the end: stacks are long and
 * interned once per call, so this sits on the reader's hot path. */
static inline uint64_t bt_hash_step(uint64_t h, uint64_t addr, uint32_t text)
{
	h = (h ^ addr ^ ((uint64_t)text << 40)) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

static inline uint32_t bt_hash_end(uint64_t h)
{
	h = rt_mix64(h);
	return (uint32_t)(h ^ (h >> 32));
}

uint32_t rt_bt_hash(const rt_frame *f, uint32_t n)
{
	uint64_t h = 0x2545f4914f6cdd1dULL + n;
	for (uint32_t i = 0; i < n; i++)
		h = bt_hash_step(h, f[i].addr, f[i].text);
	return bt_hash_end(h);
}

static void bt_rehash(rt_trace *t)
{
	size_t nslots = t->nbt_slots ? t->nbt_slots * 2 : 1024;
	struct bt_slot *slots = rt_xcalloc(nslots, sizeof *slots);
	for (size_t id = 0; id < t->nbts; id++) {
		size_t i = t->bts[id].hash & (nslots - 1);
		while (slots[i].id1)
			i = (i + 1) & (nslots - 1);
		slots[i] = (struct bt_slot){t->bts[id].hash, (uint32_t)id + 1};
	}
	free(t->bt_slots);
	t->bt_slots = slots;
	t->nbt_slots = nslots;
}

/* --- the tree of frames, while the trace is read --- */

static size_t node_hash(uint32_t parent1, uint64_t addr, uint32_t text)
{
	return (size_t)rt_mix64(addr ^ ((uint64_t)text << 40) ^ (parent1 * 0x9e3779b97f4a7c15ULL));
}

static uint64_t node_hash_of(const void *tr, size_t i)
{
	const bt_node *nd = &((const bt_tree *)tr)->nodes[i];
	return node_hash(nd->parent1, nd->addr, nd->text);
}

static void tree_rehash(bt_tree *tr)
{
	rt_index_grow(&tr->slots, &tr->nslots, 4096, tr->nnodes, node_hash_of, tr);
}

/* The node of frame f under node parent1 - 1 (0: none), added if new;
 * returns the node + 1. */
static uint32_t tree_child(bt_tree *tr, uint32_t parent1, const rt_frame *f)
{
	if ((tr->nnodes + 1) * 10 > tr->nslots * 7)
		tree_rehash(tr);
	size_t mask = tr->nslots - 1, j = node_hash(parent1, f->addr, f->text) & mask;
	for (; tr->slots[j]; j = (j + 1) & mask) {
		const bt_node *nd = &tr->nodes[tr->slots[j] - 1];
		if (nd->parent1 == parent1 && nd->addr == f->addr && nd->text == f->text)
			return tr->slots[j];
	}
	rt_grow((void **)&tr->nodes, &tr->cnodes, tr->nnodes + 1, sizeof *tr->nodes);
	tr->nodes[tr->nnodes] = (bt_node){f->addr, f->text, parent1};
	tr->slots[j] = (uint32_t)++tr->nnodes;
	return tr->slots[j];
}

/* The node of a new stack's innermost frame, outermost frame first. */
static uint64_t tree_add(bt_tree *tr, const rt_frame *f, uint32_t n)
{
	uint32_t at = 0;
	for (uint32_t i = n; i-- > 0;)
		at = tree_child(tr, at, &f[i]);
	return at - 1;
}

/* Copies the frames of the stack whose innermost node is leaf to g. */
static void tree_copy(const bt_tree *tr, uint64_t leaf, uint32_t n, rt_frame *g)
{
	const bt_node *nd = &tr->nodes[leaf];
	for (uint32_t i = 0; i < n; i++, nd = &tr->nodes[nd->parent1 - 1]) {
		g[i].addr = nd->addr; /* field by field: the padding stays zero */
		g[i].text = nd->text;
		if (i + 1 == n)
			break;
	}
}

/* The frames laid out as one array, in id order, the tree freed: what a
 * reader of frames needs (the array is calloc'ed: its padding is zero,
 * as the frames' copies had it). */
static void bt_flatten(rt_trace *t)
{
	if (t->flat)
		return;
	bt_tree tr = t->tree;
	t->tree = (bt_tree){0};
	t->flat = true;
	if (t->nframes)
		t->frames = rt_xcalloc(t->nframes, sizeof *t->frames);
	t->cframes = t->nframes;
	uint64_t off = 0;
	for (size_t id = 0; id < t->nbts; id++) {
		rt_bt *b = &t->bts[id];
		if (b->n)
			tree_copy(&tr, b->off, b->n, t->frames + off);
		b->off = off;
		off += b->n;
	}
	free(tr.nodes);
	free(tr.slots);
}

void rt_trace_bt_iter(const rt_trace *t, uint32_t bt, rt_bt_iter *it)
{
	bool some = bt < t->nbts && t->bts[bt].n;
	*it = (rt_bt_iter){t, some ? t->bts[bt].off : 0, some ? t->bts[bt].n : 0};
}

/* The next frame's address and where its text is, in the tree or the
 * array; NULL after the last. */
static inline uint32_t *bt_step(rt_bt_iter *it, uint64_t *addr)
{
	if (!it->left)
		return NULL;
	rt_trace *t = (rt_trace *)it->t; /* the caller's alone, as for rt_trace_bt_frames */
	it->left--;
	if (t->flat) {
		rt_frame *f = &t->frames[it->at++];
		*addr = f->addr;
		return &f->text;
	}
	bt_node *nd = &t->tree.nodes[it->at];
	it->at = nd->parent1 - 1;
	*addr = nd->addr;
	return &nd->text;
}

uint32_t *rt_trace_bt_next_text(rt_bt_iter *it, uint64_t *addr)
{
	return bt_step(it, addr);
}

bool rt_trace_bt_next(rt_bt_iter *it, rt_frame *f)
{
	uint64_t addr;
	const uint32_t *text = bt_step(it, &addr);
	if (!text)
		return false;
	*f = (rt_frame){addr, *text};
	return true;
}

uint32_t rt_trace_bt_copy(const rt_trace *t, uint32_t bt, rt_frame *f)
{
	uint32_t n = bt < t->nbts ? t->bts[bt].n : 0;
	if (!n)
		return 0;
	if (t->flat)
		memcpy(f, t->frames + t->bts[bt].off, n * sizeof *f);
	else
		tree_copy(&t->tree, t->bts[bt].off, n, f);
	return n;
}

bool rt_trace_bts_shared(const rt_trace *t)
{
	return !t->flat;
}

void rt_trace_bts_unshare(rt_trace *t)
{
	bt_flatten(t);
}

/* rt_bt_hash of stack id's frames, where they are kept. */
static uint32_t bt_hash_of(const rt_trace *t, uint32_t id)
{
	rt_bt_iter it;
	rt_trace_bt_iter(t, id, &it);
	uint64_t h = 0x2545f4914f6cdd1dULL + t->bts[id].n, addr;
	for (const uint32_t *text; (text = bt_step(&it, &addr));)
		h = bt_hash_step(h, addr, *text);
	return bt_hash_end(h);
}

/* Whether stack id's frames, where they are kept, are f[0..n). */
static bool bt_is(const rt_trace *t, uint32_t id, const rt_frame *f, uint32_t n)
{
	if (t->bts[id].n != n)
		return false;
	rt_bt_iter it;
	rt_trace_bt_iter(t, id, &it);
	uint64_t addr = 0;
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t *text = bt_step(&it, &addr);
		if (addr != f[i].addr || *text != f[i].text)
			return false;
	}
	return true;
}

/* Whether stacks a and b hold the same frames, where they are kept. */
static bool bts_same(const rt_trace *t, uint32_t a, uint32_t b)
{
	if (t->bts[a].n != t->bts[b].n)
		return false;
	rt_bt_iter x, y;
	rt_trace_bt_iter(t, a, &x);
	rt_trace_bt_iter(t, b, &y);
	uint64_t ax = 0, ay = 0;
	for (const uint32_t *tx; (tx = bt_step(&x, &ax));) {
		const uint32_t *ty = bt_step(&y, &ay);
		if (ax != ay || *tx != *ty)
			return false;
	}
	return true;
}

/* The table is probed for every call a reader sees, and at millions of
 * stacks each touch of bts[] or frames[] is a cache miss: slots carry the
 * hash so that only a probable match reads them, and the empty stack
 * (every release without a backtrace) skips the table altogether. */
void rt_trace_prefetch_bt(const rt_trace *t, uint32_t hash)
{
	if (t->nbt_slots)
		__builtin_prefetch(&t->bt_slots[hash & (t->nbt_slots - 1)]);
}

uint32_t rt_trace_intern_bt(rt_trace *t, const rt_frame *frames, uint32_t n)
{
	if (n == 0 && t->empty_bt != RT_NONE)
		return t->empty_bt;
	return rt_trace_intern_bt_hashed(t, frames, n, rt_bt_hash(frames, n));
}

/* The hashes and the table after rt_trace_bts_reindex_later. */
static __attribute__((noinline)) void bts_refresh(rt_trace *t)
{
	uint32_t *same = rt_xmalloc((t->nbts ? t->nbts : 1) * sizeof *same);
	rt_trace_bts_reindex(t, same);
	free(same);
}

uint32_t rt_trace_intern_bt_hashed(rt_trace *t, const rt_frame *frames, uint32_t n,
				   uint32_t h)
{
	if (__builtin_expect(t->bts_stale, 0))
		bts_refresh(t);
	if (n == 0 && t->empty_bt != RT_NONE)
		return t->empty_bt;
	if ((t->nbts + 1) * 2 > t->nbt_slots)
		bt_rehash(t);
	size_t mask = t->nbt_slots - 1, i = h & mask;
	for (; t->bt_slots[i].id1; i = (i + 1) & mask) {
		const struct bt_slot *slot = &t->bt_slots[i];
		if (slot->hash == h && bt_is(t, slot->id1 - 1, frames, n))
			return slot->id1 - 1;
	}
	if (!t->flat && t->tree.nnodes + n >= UINT32_MAX)
		bt_flatten(t); /* node numbers are 32-bit */
	for (uint32_t k = 0; k < n && !t->bt_texts; k++)
		t->bt_texts = frames[k].text != RT_NONE;
	rt_bt b = {t->nframes, n, h};
	if (n && !t->flat)
		b.off = tree_add(&t->tree, frames, n);
	else if (n) {
		rt_grow((void **)&t->frames, &t->cframes, t->nframes + n, sizeof *t->frames);
		memcpy(t->frames + t->nframes, frames, n * sizeof *frames);
	}
	t->nframes += n;
	RT_PUSH(t->bts, t->nbts, t->cbts, b);
	t->bt_slots[i] = (struct bt_slot){h, (uint32_t)t->nbts};
	if (n == 0)
		t->empty_bt = (uint32_t)t->nbts - 1;
	return (uint32_t)t->nbts - 1;
}

uint32_t rt_trace_bt_count(const rt_trace *t) { return (uint32_t)t->nbts; }

size_t rt_trace_str_count(const rt_trace *t) { return t->strs.n; }

void rt_trace_bts_reindex_later(rt_trace *t)
{
	t->bts_stale = true;
	t->bt_texts = true;
}

bool rt_trace_bts_have_text(const rt_trace *t)
{
	return t->bt_texts;
}

/* The table keeps its size (its load is that of the same stacks); a probe
 * that meets equal frames makes the later id a duplicate, as interning
 * the rewritten frames one by one would have. */
size_t rt_trace_bts_reindex(rt_trace *t, uint32_t *same)
{
	size_t dups = 0, mask = t->nbt_slots - 1;
	t->bts_stale = false;
	t->bt_texts = true;
	if (t->nbt_slots)
		memset(t->bt_slots, 0, t->nbt_slots * sizeof *t->bt_slots);
	for (size_t id = 0; id < t->nbts; id++) {
		rt_bt *b = &t->bts[id];
		b->hash = bt_hash_of(t, (uint32_t)id);
		size_t i = b->hash & mask;
		same[id] = (uint32_t)id;
		for (; t->bt_slots[i].id1; i = (i + 1) & mask)
			if (t->bt_slots[i].hash == b->hash && bts_same(t, t->bt_slots[i].id1 - 1, (uint32_t)id)) {
				same[id] = t->bt_slots[i].id1 - 1;
				break;
			}
		if (same[id] != id) {
			dups++;
			continue;
		}
		t->bt_slots[i] = (struct bt_slot){b->hash, (uint32_t)id + 1};
	}
	return dups;
}

uint32_t rt_trace_bt_len(const rt_trace *t, uint32_t bt)
{
	return bt < t->nbts ? t->bts[bt].n : 0;
}

const rt_frame *rt_trace_bt_frames(const rt_trace *t, uint32_t bt)
{
	/* a trace is the caller's alone while it reads one (the tree is laid
	 * out once, at the first reader) */
	bt_flatten((rt_trace *)t);
	/* an empty backtrace has no frames (and t->frames may be NULL) */
	return bt < t->nbts && t->bts[bt].n ? t->frames + t->bts[bt].off : NULL;
}

/* --- argument blocks --- */

uint32_t rt_trace_add_args(rt_trace *t, const rt_kv *args, uint32_t n)
{
	size_t bytes = n * sizeof(rt_kv);
	for (uint32_t i = 0; i < n; i++)
		bytes += strlen(args[i].key) + strlen(args[i].value) + 2;
	rt_kv *kv = rt_xmalloc(bytes);
	char *s = (char *)(kv + n);
	for (uint32_t i = 0; i < n; i++) {
		size_t kl = strlen(args[i].key) + 1, vl = strlen(args[i].value) + 1;
		kv[i].key = memcpy(s, args[i].key, kl);
		s += kl;
		kv[i].value = memcpy(s, args[i].value, vl);
		s += vl;
	}
	uint32_t id;
	if (t->nfree_args)
		id = t->free_args[--t->nfree_args];
	else {
		rt_argblock empty = {0, NULL};
		RT_PUSH(t->args, t->nargs, t->cargs, empty);
		id = (uint32_t)t->nargs - 1;
	}
	t->args[id].n = n;
	t->args[id].kv = kv;
	return id;
}

uint32_t rt_trace_args_len(const rt_trace *t, uint32_t id)
{
	return id < t->nargs ? t->args[id].n : 0;
}

const rt_kv *rt_trace_args_at(const rt_trace *t, uint32_t id)
{
	return id < t->nargs ? t->args[id].kv : NULL;
}

const char *rt_trace_call_arg(const rt_trace *t, const rt_call *c, const char *key)
{
	if (c->args == RT_NONE || c->args >= t->nargs)
		return NULL;
	const rt_argblock *a = &t->args[c->args];
	for (uint32_t i = 0; a->kv && i < a->n; i++)
		if (!strcmp(a->kv[i].key, key))
			return a->kv[i].value;
	return NULL;
}

bool rt_trace_res_is(const rt_trace *t, uint8_t res_type, const char *type)
{
	const rt_resource *r = rt_trace_resource_get(t, res_type);
	return r && !strcmp(r->type, type);
}

bool rt_trace_is_bad_close(const rt_trace *t, const rt_call *c)
{
	const char *e = c->kind == RT_CALL_FREE ? rt_trace_call_arg(t, c, "error") : NULL;
	return e && !strcmp(e, "EBADF") && rt_trace_res_is(t, c->res_type, "fd");
}

void rt_trace_fd_describe(const rt_trace *t, const rt_call *c, char *buf, size_t n)
{
	const char *path = rt_trace_call_arg(t, c, "path");
	const char *dom = rt_trace_call_arg(t, c, "domain"), *type = rt_trace_call_arg(t, c, "type");
	const char *fn = c->fn != RT_NONE ? rt_trace_str(t, c->fn) : "?";
	if (path)
		snprintf(buf, n, "%s", path);
	else if (dom)
		snprintf(buf, n, "<%s %s socket from %s>", dom, type ? type : "", fn);
	else
		snprintf(buf, n, "<%s>", fn);
}

void rt_trace_release_args(rt_trace *t, uint32_t id)
{
	if (id >= t->nargs || !t->args[id].kv)
		return;
	free(t->args[id].kv);
	t->args[id].kv = NULL;
	t->args[id].n = 0;
	RT_PUSH(t->free_args, t->nfree_args, t->cfree_args, id);
}

/* --- calls --- */

void rt_trace_saw_call(rt_trace *t, const rt_call *c)
{
	if (!(c->flags & RT_CALL_HAS_TIMESTAMP))
		return;
	t->last_ts_us = c->timestamp_us;
	t->has_last_ts = true;
}

bool rt_trace_last_timestamp(const rt_trace *t, uint64_t *us)
{
	*us = t->last_ts_us;
	return t->has_last_ts;
}

rt_call *rt_trace_append_call(rt_trace *t, const rt_call *c)
{
	rt_trace_saw_call(t, c);
	RT_PUSH(t->calls, t->ncalls, t->ccalls, *c);
	return &t->calls[t->ncalls - 1];
}

size_t rt_trace_call_count(const rt_trace *t) { return t->ncalls; }
rt_call *rt_trace_calls(rt_trace *t) { return t->calls; }
const rt_call *rt_trace_calls_const(const rt_trace *t) { return t->calls; }

void rt_trace_kill_call(rt_trace *t, rt_call *c)
{
	if (c->kind == RT_CALL_DEAD)
		return;
	if (c->args != RT_NONE)
		rt_trace_release_args(t, c->args);
	c->args = RT_NONE;
	c->kind = RT_CALL_DEAD;
	t->ndead++;
}

size_t rt_trace_dead_count(const rt_trace *t) { return t->ndead; }

size_t rt_trace_compact(rt_trace *t)
{
	size_t j = 0;
	for (size_t i = 0; i < t->ncalls; i++)
		if (t->calls[i].kind != RT_CALL_DEAD)
			t->calls[j++] = t->calls[i];
	t->ncalls = j;
	t->ndead = 0;
	return j;
}

static int call_cmp(const void *a, const void *b)
{
	uint64_t x = ((const rt_call *)a)->index, y = ((const rt_call *)b)->index;
	return x < y ? -1 : x > y;
}

void rt_trace_sort_calls(rt_trace *t)
{
	for (size_t i = 1; i < t->ncalls; i++) {
		if (t->calls[i].index < t->calls[i - 1].index) {
			/* qsort is not stable; equal indices keep no order anyway */
			qsort(t->calls, t->ncalls, sizeof *t->calls, call_cmp);
			return;
		}
	}
}

/* --- extensions --- */

void *rt_trace_ext_get(const rt_trace *t, const rt_trace_ext *ext)
{
	for (size_t i = 0; i < t->nexts; i++)
		if (t->exts[i].ext == ext)
			return t->exts[i].data;
	return NULL;
}

void rt_trace_ext_set(rt_trace *t, const rt_trace_ext *ext, void *data)
{
	for (size_t i = 0; i < t->nexts; i++)
		if (t->exts[i].ext == ext) {
			t->exts[i].data = data;
			return;
		}
	if (t->nexts == RT_TRACE_MAX_EXTS) { /* a library bug: descriptors are static */
		fprintf(stderr, "librtrace: trace extension '%s': too many extensions\n", ext->name);
		abort();
	}
	t->exts[t->nexts++] = (struct rt_ext_slot){ext, data};
}

void *rt_trace_ext_need(rt_trace *t, const rt_trace_ext *ext, size_t size)
{
	void *data = rt_trace_ext_get(t, ext);
	if (!data) {
		data = rt_xcalloc(1, size);
		rt_trace_ext_set(t, ext, data);
	}
	return data;
}

void rt_trace_set_ts_digits(rt_trace *t, int digits) { t->ts_digits = digits; }
int rt_trace_ts_digits(const rt_trace *t) { return t->ts_digits; }
