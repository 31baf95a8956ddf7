/* A shared library for the resolver tests: a leak two calls below the
 * program, through a helper that is always inlined. */
#include <stdlib.h>
#include <string.h>

static inline __attribute__((always_inline)) char *reslib_fill(size_t n)
{
	char *p = malloc(n); /* reslib_fill: malloc */
	if (p)
		memset(p, 'r', n);
	return p;
}

__attribute__((noinline)) char *reslib_make(size_t n)
{
	char *p = reslib_fill(n);
	if (p)
		p[0] = 'R';
	return p;
}
