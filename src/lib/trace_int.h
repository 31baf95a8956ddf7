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

#endif
