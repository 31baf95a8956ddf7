/* Backtraces: the cached-rule unwinder of cfi.c, with libunwind's
 * unw_backtrace for the stacks it leaves (signal frames, code without
 * CFI), and a per-thread table that gives each distinct stack an id, so a
 * stack is written to the trace once per thread and every later call
 * costs one id. Memory comes from mmap: this code runs inside malloc. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "preload.h"
#include "pages.h"
#include "cfi.h"

#include <dlfcn.h>
#include <link.h>
#include <libunwind.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <stdio.h>
#include <unistd.h>

#define MAX_DEPTH 256
/* the tracer's frames above the one unwinding: unwind() or check_stack(),
 * rt_backtrace, rt_record_call, the interposer */
#define OWN_FRAMES 4

typedef struct slot {
	uint64_t hash;
	uint64_t id;   /* 0: empty */
	uint32_t n;
	uint32_t off;  /* into ips[] */
} slot;

typedef struct rt_btcache {
	slot *slots;
	size_t nslots, count;
	uintptr_t *ips;
	size_t nips, cips;
	uint64_t last_id; /* id of the thread's previous stack, 0: none */
} rt_btcache;

static _Atomic uint64_t next_bt_id;
static pthread_key_t cache_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void cache_free(void *arg)
{
	rt_btcache *c = arg;
	if (!c)
		return;
	/* detached first: a signal handler of this thread that records a
	 * call meanwhile must not use the cache being unmapped */
	if (rt_t.bts == c)
		rt_t.bts = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (c->slots)
		rt_pages_free(c->slots, c->nslots * sizeof(slot));
	if (c->ips)
		rt_pages_free(c->ips, c->cips * sizeof(uintptr_t));
	rt_pages_free(c, sizeof *c);
}

static void make_key(void)
{
	pthread_key_create(&cache_key, cache_free);
}

/* libunwind is loaded (dlopen) at the first stack that needs it, not
 * linked: with Debian's build it brings liblzma, ~0.26 ms of loading in
 * every traced process (bench/README.md, "Per-process cost"), where most
 * stacks never need it. It also sets itself up on first use (a pipe to
 * probe memory, moved to high descriptors: ~27 system calls). A thread
 * that finds another loading it does not wait (that thread may wait for
 * ld.so's lock, which this one may hold, in a dlopen of the program):
 * its stack is left empty. */
enum { UNW_NONE, UNW_LOADING, UNW_READY, UNW_MISSING };
static _Atomic int unw_state;
static int (*unw_bt)(void **, int);

#define UNW_STR_(x) #x
#define UNW_STR(x) UNW_STR_(x)

static void unw_load(void)
{
	void *h = dlopen(RTRACE_LIBUNWIND, RTLD_NOW | RTLD_LOCAL);
	void (*policy)(unw_addr_space_t, unw_caching_policy_t) =
		h ? (void (*)(unw_addr_space_t, unw_caching_policy_t))dlsym(h, UNW_STR(unw_set_caching_policy)) : NULL;
	unw_addr_space_t *as = h ? (unw_addr_space_t *)dlsym(h, UNW_STR(unw_local_addr_space)) : NULL;
	unw_bt = h ? (int (*)(void **, int))dlsym(h, "unw_backtrace") : NULL;
	if (policy && as)
		policy(*as, UNW_CACHE_PER_THREAD);
	if (!unw_bt) {
		static const char msg[] = "rtrace: cannot load " RTRACE_LIBUNWIND
					  ": stacks the cached rules cannot read are left empty\n";
		(void)!write(2, msg, sizeof msg - 1);
	}
	atomic_store(&unw_state, unw_bt ? UNW_READY : UNW_MISSING);
}

/* libunwind's unw_backtrace, or NULL (missing, or being loaded). */
static int (*unw_get(void))(void **, int)
{
	int s = atomic_load(&unw_state), none = UNW_NONE;
	if (RT_LIKELY(s == UNW_READY))
		return unw_bt;
	if (s == UNW_NONE && atomic_compare_exchange_strong(&unw_state, &none, UNW_LOADING)) {
		unw_load();
		return unw_bt;
	}
	return NULL;
}

void rt_btcache_reset(void)
{
	/* after fork: ids must be defined again in the child's file */
	rt_btcache *c = rt_t.bts;
	if (c) {
		/* the slots' pages, shared with the parent until written, are
		 * dropped rather than cleared: a child that execs soon (a
		 * shell's) faults in only those it uses, as zero pages, where
		 * clearing copied each (24 KiB and more: 6 page faults and
		 * ~35 us in each of bash's fork children) */
		size_t len = c->nslots * sizeof(slot);
		if (syscall(SYS_madvise, c->slots, len, MADV_DONTNEED))
			memset(c->slots, 0, len);
		c->count = c->nips = 0;
		c->last_id = 0;
	}
}

/* The tracer's own code: its interposers sit between the program and
 * what they call (dlopen's, fopen's, reallocarray's inner calls that
 * allocate), and are no frame of the program's stacks. */
static uintptr_t own_lo, own_hi;
static pthread_once_t own_once = PTHREAD_ONCE_INIT;

static int find_own(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	uintptr_t self = (uintptr_t)&rt_backtrace;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && self >= lo && self - lo < ph->p_memsz) {
			own_lo = lo;
			own_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static void own_init(void) { dl_iterate_phdr(find_own, NULL); }

/* Drops the tracer's frames from ips[0..n); *h is their hash again if
 * some went. Returns the number kept. */
static int drop_own(uintptr_t *ips, int n, uint64_t *h)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		if (ips[i] - own_lo >= own_hi - own_lo)
			ips[k++] = ips[i];
	if (k != n)
		*h = rt_stack_hash(ips, k);
	return k;
}

static rt_btcache *cache_get(void)
{
	if (RT_LIKELY(rt_t.bts != NULL))
		return rt_t.bts;
	pthread_once(&key_once, make_key);
	pthread_once(&own_once, own_init);
	rt_btcache *c = rt_pages(sizeof *c);
	if (!c)
		return NULL;
	c->nslots = 1024; /* 24 KiB, doubled as stacks come */
	c->slots = rt_pages(c->nslots * sizeof(slot));
	c->cips = 65536;
	c->ips = rt_pages(c->cips * sizeof(uintptr_t));
	if (!c->slots || !c->ips)
		return NULL;
	rt_t.bts = c;
	pthread_setspecific(cache_key, c);
	return c;
}

static bool cache_grow(rt_btcache *c)
{
	size_t nslots = c->nslots * 2;
	slot *s = rt_pages(nslots * sizeof(slot));
	if (!s)
		return false;
	for (size_t i = 0; i < c->nslots; i++) {
		if (!c->slots[i].id)
			continue;
		size_t j = c->slots[i].hash & (nslots - 1);
		while (s[j].id)
			j = (j + 1) & (nslots - 1);
		s[j] = c->slots[i];
	}
	rt_pages_free(c->slots, c->nslots * sizeof(slot));
	c->slots = s;
	c->nslots = nslots;
	return true;
}

static bool ips_reserve(rt_btcache *c, size_t n)
{
	if (c->nips + n <= c->cips)
		return true;
	size_t cap = c->cips * 2;
	uintptr_t *p = rt_pages_grow(c->ips, c->cips * sizeof(uintptr_t), cap * sizeof(uintptr_t));
	if (!p)
		return false;
	c->ips = p;
	c->cips = cap;
	return true;
}

static void write_bt(uint64_t id, const uintptr_t *ips, int n)
{
	uint8_t *p = rt_reserve(1 + 10 + 10 + (size_t)n * 10);
	if (!p)
		return;
	*p++ = RT_REC_BT;
	p = rt_put_varint(p, id);
	p = rt_put_varint(p, (uint64_t)n);
	int64_t prev = 0;
	for (int i = 0; i < n; i++) {
		int64_t a = (int64_t)ips[i];
		p = rt_put_svarint(p, a - prev);
		prev = a;
	}
	rt_commit(p);
}

/* Looks the stack up; a new one gets an id and a BT record. */
static uint64_t intern(rt_btcache *c, const uintptr_t *ips, int n, uint64_t h)
{
	size_t mask = c->nslots - 1, i = h & mask;
	for (; c->slots[i].id; i = (i + 1) & mask) {
		slot *s = &c->slots[i];
		if (s->hash == h && s->n == (uint32_t)n &&
		    memcmp(c->ips + s->off, ips, (size_t)n * sizeof *ips) == 0)
			return s->id;
	}
	uint64_t id = atomic_fetch_add_explicit(&next_bt_id, 1, memory_order_relaxed) + 1;
	write_bt(id, ips, n);
	if ((c->count + 1) * 2 > c->nslots || !ips_reserve(c, (size_t)n)) {
		if (!cache_grow(c) || !ips_reserve(c, (size_t)n))
			return id; /* written, just not cached */
		for (i = h & (c->nslots - 1); c->slots[i].id; i = (i + 1) & (c->nslots - 1))
			;
	}
	memcpy(c->ips + c->nips, ips, (size_t)n * sizeof *ips);
	c->slots[i] = (slot){h, id, (uint32_t)n, (uint32_t)c->nips};
	c->nips += (size_t)n;
	c->count++;
	return id;
}

/* --unwinder=check: every stack is read by both unwinders; differences
 * are counted and the first ones printed. */
static _Atomic uint64_t checked, differed, general;

static const uintptr_t *find_stack(const rt_btcache *c, uint64_t id, uint32_t *n)
{
	for (size_t i = 0; i < c->nslots; i++)
		if (c->slots[i].id == id) {
			*n = c->slots[i].n;
			return c->ips + c->slots[i].off;
		}
	*n = 0;
	return NULL;
}

static void print_stack(const char *what, uint64_t id, const uintptr_t *ips, uint32_t n)
{
	char buf[8192];
	int len = snprintf(buf, sizeof buf, "rtrace: %s (stack %llu):", what, (unsigned long long)id);
	for (uint32_t i = 0; i < n && len < (int)sizeof buf - 24; i++)
		len += snprintf(buf + len, sizeof buf - (size_t)len, " %#lx", (unsigned long)ips[i]);
	buf[len++] = '\n';
	if (write(2, buf, (size_t)len) < 0)
		return;
}

/* The stack read by libunwind and interned; ips[] holds MAX_DEPTH +
 * OWN_FRAMES addresses. Inlined, so that it adds no frame of its own. */
static inline __attribute__((always_inline)) uint64_t libunwind_stack(rt_btcache *c, uintptr_t *ips, int *n)
{
	int (*bt)(void **, int) = unw_get();
	*n = bt ? bt((void **)ips, (int)rt_opt.depth + OWN_FRAMES) - OWN_FRAMES : 0;
	if (*n <= 0)
		return 0;
	uint64_t h = rt_stack_hash(ips + OWN_FRAMES, *n);
	*n = drop_own(ips + OWN_FRAMES, *n, &h);
	return *n > 0 ? intern(c, ips + OWN_FRAMES, *n, h) : 0;
}

static __attribute__((noinline)) void check_stack(rt_btcache *c, uint64_t id)
{
	uintptr_t ips[MAX_DEPTH + OWN_FRAMES];
	int n;
	uint64_t ref = libunwind_stack(c, ips, &n);
	atomic_fetch_add(&checked, 1);
	if (ref == id || atomic_fetch_add(&differed, 1) >= 3)
		return;
	uint32_t m;
	const uintptr_t *mine = find_stack(c, id, &m);
	print_stack("cached rules", id, mine, m);
	print_stack("libunwind", ref, ips + OWN_FRAMES, n > 0 ? (uint32_t)n : 0);
	uint64_t h;
	bool same;
	rt_cfi_forget();
	n = rt_cfi_backtrace(ips, (int)rt_opt.depth, OWN_FRAMES, &h, &same);
	print_stack("cached rules, every frame", 0, ips, n > 0 ? (uint32_t)n : 0);
}

void rt_unwind_report(void)
{
	if (!rt_opt.check_unwind)
		return;
	char buf[200];
	int len = snprintf(buf, sizeof buf,
			   "rtrace: unwinder check: %llu stacks, %llu differ (%llu left to libunwind by the cached rules)\n",
			   (unsigned long long)atomic_load(&checked), (unsigned long long)atomic_load(&differed),
			   (unsigned long long)atomic_load(&general));
	if (write(2, buf, (size_t)len) < 0)
		return;
}

static __attribute__((noinline)) uint64_t unwind(rt_btcache *c)
{
	uintptr_t ips[MAX_DEPTH + OWN_FRAMES];
	uint64_t h = 0;
	bool same = false;
	int n = rt_opt.libunwind ? -1 : rt_cfi_backtrace(ips, (int)rt_opt.depth, OWN_FRAMES, &h, &same);
	if (n > 0 && same && c->last_id)
		return c->last_id;
	if (n > 0)
		n = drop_own(ips, n, &h);
	if (n >= 0)
		return c->last_id = n ? intern(c, ips, n, h) : 0;
	if (RT_UNLIKELY(rt_opt.check_unwind))
		atomic_fetch_add(&general, 1);
	return c->last_id = libunwind_stack(c, ips, &n);
}

__attribute__((noinline)) uint64_t rt_backtrace(void)
{
	rt_btcache *c = cache_get();
	if (!c)
		return 0;
	uint64_t id = unwind(c);
	if (RT_UNLIKELY(rt_opt.check_unwind))
		check_stack(c, id);
	return id;
}
