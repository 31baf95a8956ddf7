/* Memory for the tracer's own tables. The tracer runs inside malloc, so
 * its tables come straight from mmap: zeroed, private, never the
 * program's heap. Header-only: cfi.c is also built outside the preload
 * library (bench/unwind.sh). */
#ifndef RT_PAGES_H
#define RT_PAGES_H

#include <stddef.h>
#include <sys/mman.h>

/* n bytes of zeroed pages (at least one page), or NULL. */
static inline void *rt_pages(size_t n)
{
	void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

#endif
