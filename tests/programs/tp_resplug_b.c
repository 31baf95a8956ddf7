/* Second plugin of the resolver tests: loaded after the first one was
 * unloaded, usually at the same addresses. */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void *plug_b_work(size_t n)
{
	void *p = calloc(1, n); /* plug_b_work: calloc */
	__asm__ volatile("" ::: "memory");
	return p;
}

void *plugin_alloc(size_t n)
{
	void *p = plug_b_work(n + 2);
	__asm__ volatile("" ::: "memory");
	return p;
}
