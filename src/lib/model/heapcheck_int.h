/* Heap checking results inside librtrace: their text-protocol form. */
#ifndef RT_HEAPCHECK_INT_H
#define RT_HEAPCHECK_INT_H

#include "util/out.h"
#include "rtrace/trace.h"

/* The leak check's totals, per-block verdicts (of the calls present) and
 * heap errors as permanent comments; nothing when the trace has none. */
void rt_hc_write_text(const rt_trace *t, rt_out *out);

/* leak_checks.c: memcheck's loss-record order (qsort's comparison of
 * rt_loss_record), a stack as "##   title by fn" and "##\t0x..." lines,
 * and the checks on demand as comments. */
int rt_hc_loss_cmp(const void *a, const void *b);
void rt_hc_write_stack(const rt_trace *t, const char *title, uint32_t fn, uint32_t bt, rt_out *out);
void rt_hc_write_checks(const rt_trace *t, rt_out *out);
/* dropped.c: the lifetime filter's counts as comments. */
void rt_dropped_write_text(const rt_trace *t, rt_out *out);

#endif
