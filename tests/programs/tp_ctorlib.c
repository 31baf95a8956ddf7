/* A library whose constructor allocates before the tracer's constructor
 * runs (libraries a program links are initialised before a preloaded
 * one): 40 bytes lost, 24 bytes still reachable. */
#include <stdlib.h>
#include <string.h>

static void *kept;

static __attribute__((noinline)) void *ctor_alloc(size_t n)
{
	void *p = malloc(n);
	memset(p, 2, n);
	return p;
}

__attribute__((constructor)) static void tp_ctorlib_init(void)
{
	(void)ctor_alloc(40);
	kept = ctor_alloc(24);
}

/* The program's reference that links the library in. */
void tp_ctorlib_touch(void)
{
	if (!kept)
		abort();
}
