/* Internal hooks of the model for readers that pipeline their work. */
#ifndef RT_TRACE_INT_H
#define RT_TRACE_INT_H

#include "rtrace/trace.h"

uint32_t rt_bt_hash(const rt_frame *f, uint32_t n);
/* Starts loading the table slot a stack with this hash probes first. */
void rt_trace_prefetch_bt(const rt_trace *t, uint32_t hash);
/* rt_trace_intern_bt with the hash already computed by rt_bt_hash. */
uint32_t rt_trace_intern_bt_hashed(rt_trace *t, const rt_frame *frames, uint32_t n,
				   uint32_t hash);

/* Resolved frames' details (frame_info.c), owned by the trace. */
struct rt_finfo_tab;
struct rt_finfo_tab **rt_trace_finfo_slot(const rt_trace *t);
void rt_finfo_free(struct rt_finfo_tab *tab);

/* Heap checking results (heapcheck.c), owned by the trace. */
struct rt_hc;
struct rt_hc **rt_trace_hc_slot(const rt_trace *t);
void rt_hc_free(struct rt_hc *hc);

/* Valgrind documents (vgdoc.c), owned by the trace. */
struct rt_vgdoc;
struct rt_vgdoc **rt_trace_vg_slot(const rt_trace *t);
void rt_vgdoc_free(struct rt_vgdoc *vg);
/* rt_vg_add with the element name's string id (a reader caches them). */
uint32_t rt_vg_add_id(rt_trace *t, uint32_t parent, uint32_t name);

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
