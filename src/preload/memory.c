/* The memory module: malloc's family and the C++ operators. Each
 * interposer calls the real function and records the result. Releases are
 * recorded before the memory goes back to the allocator and allocations
 * after it came out, so call indices order a reused block correctly across
 * threads. errno is what the real function left. */
#define _GNU_SOURCE
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void *(*reallocarray_fn)(void *, size_t, size_t);
typedef void (*free_fn)(void *);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*memalign_fn)(size_t, size_t);
typedef void (*sized_free_fn)(void *, size_t);
typedef void (*aligned_free_fn)(void *, size_t);

static struct {
	malloc_fn malloc, valloc, pvalloc;
	calloc_fn calloc;
	realloc_fn realloc;
	reallocarray_fn reallocarray;
	free_fn free;
	posix_memalign_fn posix_memalign;
	memalign_fn memalign, aligned_alloc;
} real;

/* dlsym may allocate (calloc for its error state) before the real
 * functions are known: such requests are served from this buffer, and
 * free() recognises its pointers. */
static _Alignas(64) uint8_t boot_buf[64 * 1024];
static _Atomic size_t boot_used;

static bool is_boot(const void *p)
{
	return (const uint8_t *)p >= boot_buf && (const uint8_t *)p < boot_buf + sizeof boot_buf;
}

static void *boot_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	size_t off = atomic_fetch_add(&boot_used, n);
	return off + n <= sizeof boot_buf ? boot_buf + off : NULL;
}

static _Atomic int resolving;

void rt_memory_init(void)
{
	if (real.free || atomic_exchange(&resolving, 1))
		return;
	real.calloc = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
	real.malloc = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
	real.realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
	real.reallocarray = (reallocarray_fn)dlsym(RTLD_NEXT, "reallocarray");
	real.posix_memalign = (posix_memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
	real.memalign = (memalign_fn)dlsym(RTLD_NEXT, "memalign");
	real.aligned_alloc = (memalign_fn)dlsym(RTLD_NEXT, "aligned_alloc");
	real.valloc = (malloc_fn)dlsym(RTLD_NEXT, "valloc");
	real.pvalloc = (malloc_fn)dlsym(RTLD_NEXT, "pvalloc");
	real.free = (free_fn)dlsym(RTLD_NEXT, "free");
}

/* Tracing applies to calls of the program, not to the tracer's own. */
#define TRACED() (RT_LIKELY(rt_active) && !rt_t.busy)

static inline void record_alloc(int fn, void *p, size_t size)
{
	int err = errno;
	rt_t.busy = 1;
	rt_record_call(rt_next_index(), KIND_ALLOC, fn, (uint64_t)(uintptr_t)p, size, true);
	rt_t.busy = 0;
	errno = err;
}

/* index: taken before the block went back to the allocator */
static inline void record_free_at(uint64_t index, int fn, void *p)
{
	int err = errno;
	rt_t.busy = 1;
	rt_record_call(index, KIND_FREE, fn, (uint64_t)(uintptr_t)p, 0, rt_opt.trace_frees);
	rt_t.busy = 0;
	errno = err;
}

static inline void record_free(int fn, void *p)
{
	record_free_at(rt_next_index(), fn, p);
}

RT_EXPORT void *malloc(size_t n)
{
	if (RT_UNLIKELY(!real.malloc)) {
		rt_memory_init();
		if (!real.malloc)
			return boot_alloc(n);
	}
	void *p = real.malloc(n);
	if (p && TRACED())
		record_alloc(FN_MALLOC, p, n);
	return p;
}

RT_EXPORT void *calloc(size_t n, size_t size)
{
	if (RT_UNLIKELY(!real.calloc)) {
		rt_memory_init();
		if (!real.calloc)
			return boot_alloc(n * size); /* zeroed: static storage */
	}
	void *p = real.calloc(n, size);
	if (p && TRACED())
		record_alloc(FN_CALLOC, p, n * size);
	return p;
}

RT_EXPORT void free(void *p)
{
	if (!p || RT_UNLIKELY(is_boot(p)))
		return;
	if (TRACED())
		record_free(FN_FREE, p);
	if (RT_UNLIKELY(!real.free))
		rt_memory_init();
	real.free(p);
}

/* realloc is a release of the old block and an allocation of the new one
 * (sp-rtrace recorded it so); a failed realloc releases nothing. */
static void *do_realloc(int fn, void *old, size_t n, void *(*call)(void *, size_t, size_t),
			size_t m)
{
	if (RT_UNLIKELY(is_boot(old))) {
		size_t size = n * m;
		void *p = malloc(size);
		size_t room = sizeof boot_buf - (size_t)((const uint8_t *)old - boot_buf);
		if (p)
			memcpy(p, old, size < room ? size : room);
		return p;
	}
	bool traced = TRACED();
	size_t size = n * m; /* overflow was checked by the caller */
	/* the release's index must precede the allocator's reuse of the block,
	 * but it is recorded only if the release happened: a failed realloc
	 * leaves the old block allocated */
	uint64_t index = traced && old ? rt_next_index() : 0;
	void *p = call(old, n, m);
	if (index && (p || size == 0))
		record_free_at(index, fn, old);
	if (traced && p && size != 0)
		record_alloc(fn, p, size);
	return p;
}

static void *call_realloc(void *old, size_t n, size_t m)
{
	(void)m;
	return real.realloc(old, n);
}

static void *call_reallocarray(void *old, size_t n, size_t m)
{
	return real.reallocarray(old, n, m);
}

RT_EXPORT void *realloc(void *old, size_t n)
{
	if (RT_UNLIKELY(!real.realloc))
		rt_memory_init();
	return do_realloc(FN_REALLOC, old, n, call_realloc, 1);
}

RT_EXPORT void *reallocarray(void *old, size_t n, size_t m)
{
	if (RT_UNLIKELY(!real.reallocarray))
		rt_memory_init();
	if (m && n > SIZE_MAX / m) {
		errno = ENOMEM;
		return NULL;
	}
	return do_realloc(FN_REALLOCARRAY, old, n, call_reallocarray, m);
}

RT_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (RT_UNLIKELY(!real.posix_memalign))
		rt_memory_init();
	int rc = real.posix_memalign(out, align, n);
	if (rc == 0 && TRACED())
		record_alloc(FN_POSIX_MEMALIGN, *out, n);
	return rc;
}

#define ALIGNED(name, FN)                                                      \
	RT_EXPORT void *name(size_t align, size_t n)                           \
	{                                                                      \
		if (RT_UNLIKELY(!real.name))                                   \
			rt_memory_init();                                      \
		void *p = real.name(align, n);                                 \
		if (p && TRACED())                                             \
			record_alloc(FN, p, n);                                \
		return p;                                                      \
	}
ALIGNED(memalign, FN_MEMALIGN)
ALIGNED(aligned_alloc, FN_ALIGNED_ALLOC)

#define PAGED(name, FN)                                                        \
	RT_EXPORT void *name(size_t n)                                         \
	{                                                                      \
		if (RT_UNLIKELY(!real.name))                                   \
			rt_memory_init();                                      \
		void *p = real.name(n);                                        \
		if (p && TRACED())                                             \
			record_alloc(FN, p, n);                                \
		return p;                                                      \
	}
PAGED(valloc, FN_VALLOC)
PAGED(pvalloc, FN_PVALLOC)
