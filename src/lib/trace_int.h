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

#endif
