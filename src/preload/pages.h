/* Memory for the tracer's own tables. The tracer runs inside malloc, so
 * its tables come straight from mmap: zeroed, private, never the
 * program's heap. Through the system call itself, not the mmap module's
 * interposers: the tracer's own mappings are none of the program's
 * (the leak check maps its tables while the program's calls are still
 * traced). Header-only: cfi.c is also built outside the preload library
 * (bench/unwind.sh). */
#ifndef RT_PAGES_H
#define RT_PAGES_H

#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The tracer's large static tables that a process may never touch (the
 * unwinder's, the leak check's, a module's, the growth of a long trace)
 * go after every other variable of the library (x86-64's large-data
 * .lbss, zero-filled like .bss), instead of between them: the small
 * variables every traced process writes at start then share 3 pages
 * where they were spread over 19, each a page fault of ~2.5 us here
 * (a copy-on-write fault in a forked child). Zero-initialised only. */
#if defined(__x86_64__)
#define RT_COLD __attribute__((section(".lbss.rtrace")))
#else
#define RT_COLD
#endif

/* n bytes of zeroed pages (at least one page), or NULL. */
static inline void *rt_pages(size_t n)
{
	void *p = (void *)syscall(SYS_mmap, NULL, n ? n : 1, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Gives back what rt_pages (or rt_pages_grow) returned. */
static inline void rt_pages_free(void *p, size_t n)
{
	syscall(SYS_munmap, p, n ? n : 1);
}

/* Moves p's n bytes to m bytes (mremap, may move); NULL: p stays. */
static inline void *rt_pages_grow(void *p, size_t n, size_t m)
{
	void *q = (void *)syscall(SYS_mremap, p, n, m, MREMAP_MAYMOVE);
	return q == MAP_FAILED ? NULL : q;
}

#endif
