/* Internal hooks of the model: extensions kept in a trace, and hooks for
 * readers that pipeline their work. */
#ifndef RT_TRACE_INT_H
#define RT_TRACE_INT_H

#include "rtrace/trace.h"

uint32_t rt_bt_hash(const rt_frame *f, uint32_t n);
/* Starts loading the table slot a stack with this hash probes first. */
void rt_trace_prefetch_bt(const rt_trace *t, uint32_t hash);
/* rt_trace_intern_bt with the hash already computed by rt_bt_hash. */
uint32_t rt_trace_intern_bt_hashed(rt_trace *t, const rt_frame *frames, uint32_t n,
				   uint32_t hash);
/* rt_trace_bt_next, for the resolver's in-place pass: the next frame's
 * address into *addr and where its text is kept, to rewrite it; NULL
 * after the last. While the frames are a tree (rt_trace_bts_shared), a
 * frame is shared by the stacks that hold it: rewriting its text
 * rewrites it for each of them. rt_trace_bts_reindex (or _later) must
 * follow before the next rt_trace_intern_bt. */
uint32_t *rt_trace_bt_next_text(rt_bt_iter *it, uint64_t *addr);
/* Whether the frames are still a tree (stacks share their outer frames). */
bool rt_trace_bts_shared(const rt_trace *t);
/* Lays the frames out as one array (rt_trace_bt_frames does at its first
 * call), so that each stack has its own. */
void rt_trace_bts_unshare(rt_trace *t);
/* After frames were rewritten in place: every backtrace is hashed again
 * and the table rebuilt in id order; one whose frames now equal an
 * earlier one's stays out of it and same[id] names that one (same[id] =
 * id otherwise; same has rt_trace_bt_count entries). Returns how many
 * stayed out. */
size_t rt_trace_bts_reindex(rt_trace *t, uint32_t *same);
/* rt_trace_bts_reindex at the next rt_trace_intern_bt, for a caller that
 * knows no two stacks came out equal (no frame had a text before it
 * rewrote them, rt_trace_bts_have_text: stacks that differed still
 * differ in an address). */
void rt_trace_bts_reindex_later(rt_trace *t);
/* Whether a frame of any stack has a text (or may have: rewritten in
 * place, then re-indexed). */
bool rt_trace_bts_have_text(const rt_trace *t);
/* Strings interned in t (ids are below it). */
size_t rt_trace_str_count(const rt_trace *t);

/* Extensions: what other parts of the library keep in a trace (frame
 * details, heap checking results, Valgrind documents) without the core
 * model knowing them. An extension is a static descriptor; the trace
 * holds one pointer per descriptor and frees it with the descriptor's
 * destructor. */
typedef struct rt_trace_ext {
	const char *name;          /* for diagnostics */
	void (*destroy)(void *data); /* frees what rt_trace_ext_set stored */
} rt_trace_ext;

/* The data stored for ext, or NULL. */
void *rt_trace_ext_get(const rt_trace *t, const rt_trace_ext *ext);
/* Stores data for ext (replacing, without freeing, what was there). */
void rt_trace_ext_set(rt_trace *t, const rt_trace_ext *ext, void *data);
/* The data for ext, a zeroed allocation of size bytes made on first use. */
void *rt_trace_ext_need(rt_trace *t, const rt_trace_ext *ext, size_t size);

/* Where the trace's strings stand: a streaming reader that drops an
 * element nothing refers to any more gives back the strings first seen in
 * it (rt_trace_str_release), so that it reads in constant memory. */
typedef struct rt_str_mark {
	size_t nstrs;
	struct rt_arena_chunk *head;
	char *cur, *end;
} rt_str_mark;

void rt_trace_str_mark(const rt_trace *t, rt_str_mark *m);
/* Whether nothing was interned or copied into the trace since m. */
bool rt_trace_str_unchanged(const rt_trace *t, const rt_str_mark *m);
/* Forgets the strings interned since m and frees their bytes; ids and
 * pointers of those strings must no longer be in use. */
void rt_trace_str_release(rt_trace *t, const rt_str_mark *m);

#endif
