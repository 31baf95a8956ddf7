/* Allocation contexts: a program marks the periods during which its
 * allocations belong to a task ("parsing", "request"), as sp-rtrace's
 * context API did. Link with -lrtrace-context. Without the tracer the
 * calls do nothing (create still hands out distinct ids); under
 * `rtrace run` every call record carries the mask of the contexts its
 * thread is in, and the trace lists the names (`@ id : name`). */
#ifndef RTRACE_CONTEXT_H
#define RTRACE_CONTEXT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returns a context id (a single bit), or 0 when all 32 are taken. */
uint32_t rt_context_create(const char *name);
/* The calling thread enters / leaves the context. */
void rt_context_enter(uint32_t context);
void rt_context_leave(uint32_t context);

#ifdef __cplusplus
}
#endif
#endif
