/* The context API inside the tracer: ids are bits of a process-wide mask,
 * each thread keeps the mask of the contexts it is in, and every CALL
 * record carries it. Creating a context writes its CONTEXT record. */
#define _GNU_SOURCE
#include "preload.h"
#include "rtrace/context.h"

#include <stdatomic.h>
#include <string.h>

static _Atomic uint32_t used;

RT_EXPORT uint32_t rt_context_create(const char *name)
{
	uint32_t old = atomic_load(&used), bit;
	do {
		if (old == UINT32_MAX)
			return 0;
		bit = ~old & (old + 1);
	} while (!atomic_compare_exchange_weak(&used, &old, old | bit));
	size_t n = name ? strnlen(name, 1024) : 0;
	int busy = rt_t.busy;
	rt_t.busy = 1;
	uint8_t *p = rt_reserve(1 + 10 + 10 + n);
	if (p) {
		*p++ = RT_REC_CONTEXT;
		p = rt_put_varint(p, bit);
		p = rt_put_str(p, name ? name : "", n);
		rt_commit(p);
	}
	rt_t.busy = busy;
	return bit;
}

RT_EXPORT void rt_context_enter(uint32_t context) { rt_t.context |= context; }
RT_EXPORT void rt_context_leave(uint32_t context) { rt_t.context &= ~context; }
