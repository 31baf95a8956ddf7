/* First plugin of the resolver tests (dlopen'ed, then dlclose'd). */
#include <stdlib.h>

__attribute__((noinline)) static void *plug_a_work(size_t n)
{
	void *p = malloc(n); /* plug_a_work: malloc */
	__asm__ volatile("" ::: "memory");
	return p;
}

void *plugin_alloc(size_t n)
{
	void *p = plug_a_work(n);
	__asm__ volatile("" ::: "memory");
	return p;
}
