/* The mmap module: memory mappings made with mmap and mremap, released
 * with munmap. A partial unmap (or a MAP_FIXED mapping over part of one)
 * releases the mapping and allocates what is left of it again, with the
 * stack of the original mapping, so that leaks show where it was made. */
#define _GNU_SOURCE
#include "module.h"
#include "pages.h"

#include <pthread.h>
#include <stdarg.h>
#include <sys/mman.h>

enum { M_MMAP, M_MMAP64, M_MUNMAP, M_MREMAP, M_COUNT };
static const char *const names[M_COUNT] = {"mmap", "mmap64", "munmap", "mremap"};
static const rt_restype types[] = {{"mmap", "memory mapping", false}};
rt_module rt_mod_mmap = {
	.name = "mmap",
	.desc = "memory mappings: mmap, mremap, munmap (partial unmaps split them)",
	.res = types, .nres = 1, .fns = names, .nfns = M_COUNT,
};
#define FN(f) (rt_mod_mmap.fn_base + (f))
#define RES rt_mod_mmap.res_base

/* The mappings recorded and not released, to split on a partial unmap. */
#define MAPS_MAX 4096
typedef struct map {
	uintptr_t lo, hi; /* hi 0: free slot */
	uint64_t bt;
} map;
static map maps[MAPS_MAX] RT_COLD;
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	void *(*mmap)(void *, size_t, int, int, int, off_t), *(*mmap64)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
} real;

/* Set once the table was full: mappings were recorded that it does not
 * hold, so an unmap it knows nothing of may be one of theirs. */
static bool overflowed;

static void remember(uintptr_t lo, uintptr_t hi, uint64_t bt)
{
	for (size_t i = 0; i < MAPS_MAX; i++)
		if (!maps[i].hi) {
			maps[i] = (map){lo, hi, bt};
			return;
		}
	overflowed = true;
}

/* Takes [lo, hi) out of the recorded mappings: each mapping it touches is
 * released, and its parts outside the range allocated again. */
static void cut(uintptr_t lo, uintptr_t hi, unsigned fn)
{
	static const rt_arg split[] = {{"split", "yes"}};
	map gone[32];
	size_t n = 0;
	pthread_mutex_lock(&maps_lock);
	for (size_t i = 0; i < MAPS_MAX && n < 32; i++) {
		if (!maps[i].hi || maps[i].hi <= lo || maps[i].lo >= hi)
			continue;
		gone[n++] = maps[i];
		maps[i].hi = 0;
		if (gone[n - 1].lo < lo)
			remember(gone[n - 1].lo, lo, gone[n - 1].bt);
		if (gone[n - 1].hi > hi)
			remember(hi, gone[n - 1].hi, gone[n - 1].bt);
	}
	bool unknown = !n && overflowed;
	pthread_mutex_unlock(&maps_lock);
	if (unknown) /* released whole, as the table cannot tell the parts */
		rt_mod_put(0, RT_TF_CALL_FREE, fn, RES, lo, 0, 0, NULL, 0);
	for (size_t i = 0; i < n; i++) {
		rt_mod_put(0, RT_TF_CALL_FREE, fn, RES, gone[i].lo, 0, 0, NULL, 0);
		if (gone[i].lo < lo)
			rt_mod_put(0, RT_TF_CALL_ALLOC, fn, RES, gone[i].lo, lo - gone[i].lo, gone[i].bt, split, 1);
		if (gone[i].hi > hi)
			rt_mod_put(0, RT_TF_CALL_ALLOC, fn, RES, hi, gone[i].hi - hi, gone[i].bt, split, 1);
	}
}

static uintptr_t page_end(uintptr_t p, size_t len)
{
	return (p + len + 4095) & ~(uintptr_t)4095;
}

static void mapped(unsigned f, void *p, size_t len, int prot, int flags, int fd, off_t off, uint64_t bt)
{
	uintptr_t lo = (uintptr_t)p, hi = page_end(lo, len);
	if (flags & MAP_FIXED)
		cut(lo, hi, FN(f));
	pthread_mutex_lock(&maps_lock);
	remember(lo, hi, bt);
	pthread_mutex_unlock(&maps_lock);
	char a1[20], a2[20], a3[24], a4[20];
	rt_arg a[] = {{"prot", rt_mod_hex(a1, (unsigned)prot)}, {"flags", rt_mod_hex(a2, (unsigned)flags)},
		      {"fd", rt_mod_dec(a3, fd)}, {"offset", rt_mod_hex(a4, (uint64_t)off)}};
	rt_mod_put(0, RT_TF_CALL_ALLOC, FN(f), RES, lo, len, bt, a, 4);
}

#define MMAP(name, F)                                                          \
	RT_EXPORT void *name(void *addr, size_t len, int prot, int flags, int fd, off_t off) \
	{                                                                      \
		RT_REAL(real.name, #name);                                     \
		void *p = real.name(addr, len, prot, flags, fd, off);          \
		if (p != MAP_FAILED && rt_mod_tracing(&rt_mod_mmap))           \
			mapped(F, p, len, prot, flags, fd, off, rt_mod_bt());  \
		return p;                                                      \
	}
MMAP(mmap, M_MMAP)
MMAP(mmap64, M_MMAP64)

RT_EXPORT int munmap(void *p, size_t len)
{
	RT_REAL(real.munmap, "munmap");
	int rc = real.munmap(p, len);
	if (rc == 0 && rt_mod_tracing(&rt_mod_mmap))
		cut((uintptr_t)p, page_end((uintptr_t)p, len), FN(M_MUNMAP));
	return rc;
}

static void remapped(void *old, size_t oldlen, void *p, size_t len, uint64_t bt)
{
	cut((uintptr_t)old, page_end((uintptr_t)old, oldlen ? oldlen : 1), FN(M_MREMAP));
	pthread_mutex_lock(&maps_lock);
	remember((uintptr_t)p, page_end((uintptr_t)p, len), bt);
	pthread_mutex_unlock(&maps_lock);
	char o[20];
	rt_arg a[] = {{"old", rt_mod_hex(o, (uintptr_t)old)}};
	rt_mod_put(0, RT_TF_CALL_ALLOC, FN(M_MREMAP), RES, (uintptr_t)p, len, bt, a, 1);
}

RT_EXPORT void *mremap(void *old, size_t oldlen, size_t len, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	void *want = flags & MREMAP_FIXED ? va_arg(ap, void *) : NULL;
	va_end(ap);
	RT_REAL(real.mremap, "mremap");
	void *p = real.mremap(old, oldlen, len, flags, want);
	if (p != MAP_FAILED && rt_mod_tracing(&rt_mod_mmap))
		remapped(old, oldlen, p, len, rt_mod_bt());
	return p;
}
