/* librtrace-context.so: the context API for programs that run without the
 * tracer. librtrace-preload.so defines the same functions and, being
 * loaded first, is the one programs reach when they are traced. */
#include "rtrace/context.h"

#include <stdatomic.h>

static _Atomic uint32_t used;

uint32_t rt_context_create(const char *name)
{
	(void)name;
	uint32_t old = atomic_load(&used), bit;
	do {
		if (old == UINT32_MAX)
			return 0;
		bit = ~old & (old + 1); /* lowest free bit */
	} while (!atomic_compare_exchange_weak(&used, &old, old | bit));
	return bit;
}

void rt_context_enter(uint32_t context) { (void)context; }
void rt_context_leave(uint32_t context) { (void)context; }
