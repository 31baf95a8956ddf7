/* Heap checking results inside librtrace: their text-protocol form. */
#ifndef RT_HEAPCHECK_INT_H
#define RT_HEAPCHECK_INT_H

#include "util/out.h"
#include "rtrace/trace.h"

/* The leak check's totals, per-block verdicts (of the calls present) and
 * heap errors as permanent comments; nothing when the trace has none. */
void rt_hc_write_text(const rt_trace *t, rt_out *out);

#endif
