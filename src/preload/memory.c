/* The memory module: malloc's family and the C++ operators. Each
 * interposer calls the real function and records the result. Releases are
 * recorded before the memory goes back to the allocator and allocations
 * after it came out, so call indices order a reused block correctly across
 * threads; the live-block table (heap.c) follows the same order. errno is
 * what the real function left. */
#define _GNU_SOURCE
#include "module.h"
#include "pages.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*memalign_fn)(size_t, size_t);
typedef void (*sized_free_fn)(void *, size_t);
typedef void (*aligned_free_fn)(void *, size_t);

static struct {
	malloc_fn malloc, valloc, pvalloc;
	calloc_fn calloc;
	realloc_fn realloc;
	free_fn free;
	posix_memalign_fn posix_memalign;
	memalign_fn memalign, aligned_alloc;
} real;

/* dlsym may allocate (calloc for its error state) before the real
 * functions are known: such requests are served from this buffer, and
 * free() recognises its pointers. */
static _Alignas(64) uint8_t boot_buf[64 * 1024] RT_COLD;
static _Atomic size_t boot_used;

static bool is_boot(const void *p)
{
	return (const uint8_t *)p >= boot_buf && (const uint8_t *)p < boot_buf + sizeof boot_buf;
}

/* NULL and ENOMEM, as malloc says it, when the buffer cannot hold n
 * (checked before rounding, which would wrap a size near SIZE_MAX). */
static void *boot_alloc(size_t n)
{
	if (n > sizeof boot_buf) {
		errno = ENOMEM;
		return NULL;
	}
	n = (n + 15) & ~(size_t)15;
	size_t off = atomic_fetch_add(&boot_used, n);
	if (off + n <= sizeof boot_buf)
		return boot_buf + off;
	errno = ENOMEM;
	return NULL;
}

static const rt_restype memory_types[] = {{"memory", "memory allocation in bytes", false}};
rt_module rt_mod_memory = {
	.name = "memory",
	.desc = "heap memory: malloc's family and the C++ operators",
	.res = memory_types, .nres = 1, .fns = rt_fn_names, .nfns = FN_COUNT,
};

static _Atomic int resolving;

void rt_memory_init(void)
{
	if (real.free || atomic_exchange(&resolving, 1))
		return;
	real.calloc = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
	real.malloc = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
	real.realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
	real.posix_memalign = (posix_memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
	real.memalign = (memalign_fn)dlsym(RTLD_NEXT, "memalign");
	real.aligned_alloc = (memalign_fn)dlsym(RTLD_NEXT, "aligned_alloc");
	real.valloc = (malloc_fn)dlsym(RTLD_NEXT, "valloc");
	real.pvalloc = (malloc_fn)dlsym(RTLD_NEXT, "pvalloc");
	real.free = (free_fn)dlsym(RTLD_NEXT, "free");
	rt_heap_set_free(real.free);
}

/* Every interposer runs between rt_heap_enter and rt_heap_leave, so that
 * the exit scan never stops a thread inside the real allocator. */

RT_EXPORT void *malloc(size_t n)
{
	if (RT_UNLIKELY(!real.malloc)) {
		rt_memory_init();
		if (!real.malloc)
			return boot_alloc(n);
	}
	rt_heap_fishy(FN_MALLOC, HARG_SIZE, n);
	rt_heap_enter();
	void *p = real.malloc(n);
	if (p)
		rt_heap_alloc(FN_MALLOC, p, n);
	rt_heap_leave();
	return p;
}

RT_EXPORT void *calloc(size_t n, size_t size)
{
	if (RT_UNLIKELY(!real.calloc)) {
		rt_memory_init();
		if (!real.calloc) { /* n * size may not wrap, as calloc checks */
			if (size && n > SIZE_MAX / size) {
				errno = ENOMEM;
				return NULL;
			}
			return boot_alloc(n * size); /* zeroed: static storage */
		}
	}
	if (!size || n <= SIZE_MAX / size) { /* memcheck's: no error when n * size wraps */
		rt_heap_fishy(FN_CALLOC, HARG_NMEMB, n);
		if ((ssize_t)n >= 0)
			rt_heap_fishy(FN_CALLOC, HARG_SIZE, size);
	}
	rt_heap_enter();
	void *p = real.calloc(n, size);
	if (p)
		rt_heap_alloc(FN_CALLOC, p, (uint64_t)n * size);
	rt_heap_leave();
	return p;
}

RT_EXPORT void free(void *p)
{
	if (!p || RT_UNLIKELY(is_boot(p)))
		return;
	rt_heap_enter();
	if (rt_heap_release(FN_FREE, p)) {
		if (RT_UNLIKELY(!real.free))
			rt_memory_init();
		real.free(p);
	}
	rt_heap_leave();
}

static void *realloc_boot(void *old, size_t size)
{
	void *p = malloc(size);
	size_t room = sizeof boot_buf - (size_t)((const uint8_t *)old - boot_buf);
	if (p)
		memcpy(p, old, size < room ? size : room);
	return p;
}

/* The release half of a realloc, before the allocator sees the pointer:
 * the old block leaves the table (and goes back if the realloc fails). */
static inline __attribute__((always_inline)) int realloc_check(int fn, void *old, uint64_t *indexp,
							       uint64_t *bt, rt_heap_blk *blk)
{
	uint64_t index = *indexp;
	int rc = rt_heap_remove((uintptr_t)old, fn, 0, 0, blk);
	if (rc == HEAP_INVALID && RT_LOAD(rt_heap_quiet))
		index = 0; /* glibc's own memory at exit: not reported */
	if (index && rc == HEAP_INVALID)
		rt_heap_describe((uintptr_t)old, blk);
	if (index && (rc != HEAP_OK || rt_opt.trace_frees))
		*bt = rt_heap_bt();
	if (index && rc != HEAP_OK)
		rt_heap_error(rc, index, fn, (uintptr_t)old, *bt, blk);
	*indexp = index;
	return rc;
}

/* realloc is a release of the old block and an allocation of the new one
 * (sp-rtrace recorded it so); a failed realloc releases nothing. The
 * release's index is taken before the allocator may reuse the block, but
 * recorded only if the release happened. */
static inline __attribute__((always_inline)) void *
do_realloc(int fn, void *old, size_t n, void *(*call)(void *, size_t, size_t), size_t m)
{
	if (RT_UNLIKELY(is_boot(old)))
		return realloc_boot(old, n * m);
	size_t size = n * m; /* overflow was checked by the caller */
	if (!old || rt_t.busy) {
		rt_heap_blk blk;
		rt_heap_enter();
		int rc = old ? rt_heap_remove((uintptr_t)old, fn, 0, 0, &blk) : HEAP_INVALID;
		void *p = call(old, n, m);
		if (!p && size != 0 && rc != HEAP_INVALID) /* failed: the old block stays */
			rt_heap_insert(blk.addr, blk.size, blk.alloc_fn, blk.alloc_bt, blk.index);
		if (p && size != 0)
			rt_heap_alloc(fn, p, size);
		rt_heap_leave();
		return p;
	}
	rt_heap_enter();
	int err = errno;
	rt_t.busy = 1;
	uint64_t index = RT_LOAD(rt_active) ? rt_next_index() : 0, bt = 0;
	rt_heap_blk blk;
	int rc = realloc_check(fn, old, &index, &bt, &blk);
	/* busy until the release is recorded: a signal handler's calls in
	 * between would be written first, with higher indices */
	if (rc == HEAP_INVALID && index && !RT_LOAD(rt_heap_quiet)) {
		rt_t.busy = 0;
		rt_heap_leave(); /* reported and dropped, as memcheck does */
		errno = ENOMEM;
		return NULL;
	}
	errno = err;
	void *p = call(old, n, m);
	err = errno;
	if (p || size == 0) {
		if (index)
			rt_record_call_bt(index, RT_TF_CALL_FREE, fn, (uint64_t)(uintptr_t)old, 0, bt);
		if (rc != HEAP_INVALID && p != old)
			rt_heap_note_freed(&blk, fn, bt, index ? index : 1);
	} else if (rc != HEAP_INVALID) {
		rt_heap_insert(blk.addr, blk.size, blk.alloc_fn, blk.alloc_bt, blk.index);
	}
	rt_t.busy = 0;
	if (p && size != 0)
		rt_heap_alloc(fn, p, size);
	errno = err;
	rt_heap_leave();
	return p;
}

static void *call_realloc(void *old, size_t n, size_t m)
{
	(void)m;
	return real.realloc(old, n);
}

/* glibc's reallocarray calls realloc through the PLT, which is this
 * interposer: the block would be recorded twice, once with the tracer's
 * frame in its stack. The caller checked n * m for overflow, which is all
 * reallocarray adds to realloc. */
static void *call_reallocarray(void *old, size_t n, size_t m)
{
	return real.realloc(old, n * m);
}

RT_EXPORT void *realloc(void *old, size_t n)
{
	if (RT_UNLIKELY(!real.realloc))
		rt_memory_init();
	rt_heap_fishy(old ? FN_REALLOC : FN_MALLOC, HARG_SIZE, n); /* memcheck's names */
	return do_realloc(FN_REALLOC, old, n, call_realloc, 1);
}

RT_EXPORT void *reallocarray(void *old, size_t n, size_t m)
{
	if (RT_UNLIKELY(!real.realloc))
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
	rt_heap_fishy(FN_MEMALIGN, HARG_SIZE, n);
	rt_heap_enter();
	int rc = real.posix_memalign(out, align, n);
	if (rc == 0)
		rt_heap_alloc(FN_POSIX_MEMALIGN, *out, n);
	rt_heap_leave();
	return rc;
}

#define ALIGNED(name, FN)                                                      \
	RT_EXPORT void *name(size_t align, size_t n)                           \
	{                                                                      \
		if (RT_UNLIKELY(!real.name))                                   \
			rt_memory_init();                                      \
		rt_heap_fishy(FN_MEMALIGN, HARG_SIZE, n);                      \
		rt_heap_enter();                                               \
		void *p = real.name(align, n);                                 \
		if (p)                                                         \
			rt_heap_alloc(FN, p, n);                               \
		rt_heap_leave();                                               \
		return p;                                                      \
	}
ALIGNED(memalign, FN_MEMALIGN)
ALIGNED(aligned_alloc, FN_ALIGNED_ALLOC)

#define PAGED(name, FN)                                                        \
	RT_EXPORT void *name(size_t n)                                         \
	{                                                                      \
		if (RT_UNLIKELY(!real.name))                                   \
			rt_memory_init();                                      \
		if (FN == FN_VALLOC)                                           \
			rt_heap_fishy(FN_MEMALIGN, HARG_SIZE, n);              \
		rt_heap_enter();                                               \
		void *p = real.name(n);                                        \
		if (p)                                                         \
			rt_heap_alloc(FN, p, n);                               \
		rt_heap_leave();                                               \
		return p;                                                      \
	}
PAGED(valloc, FN_VALLOC)
PAGED(pvalloc, FN_PVALLOC)
