/* Backtraces: libunwind's unw_backtrace (its fast path caches unwind
 * rules per return address), and a per-thread table that gives each
 * distinct stack an id, so a stack is written to the trace once per thread
 * and every later call costs one id. Memory comes from mmap: this code
 * runs inside malloc. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "preload.h"

#include <libunwind.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_DEPTH 256
/* frames of the tracer itself: rt_backtrace, rt_record_call, interposer */
#define SKIP 3

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
} rt_btcache;

static _Atomic uint64_t next_bt_id;
static pthread_key_t cache_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void *map_zeroed(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void cache_free(void *arg)
{
	rt_btcache *c = arg;
	if (!c)
		return;
	if (c->slots)
		munmap(c->slots, c->nslots * sizeof(slot));
	if (c->ips)
		munmap(c->ips, c->cips * sizeof(uintptr_t));
	munmap(c, sizeof *c);
	if (rt_t.bts == c)
		rt_t.bts = NULL;
}

static void make_key(void)
{
	pthread_key_create(&cache_key, cache_free);
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

void rt_btcache_reset(void)
{
	/* after fork: ids must be defined again in the child's file */
	rt_btcache *c = rt_t.bts;
	if (c) {
		memset(c->slots, 0, c->nslots * sizeof(slot));
		c->count = c->nips = 0;
	}
}

static rt_btcache *cache_get(void)
{
	if (RT_LIKELY(rt_t.bts != NULL))
		return rt_t.bts;
	pthread_once(&key_once, make_key);
	rt_btcache *c = map_zeroed(sizeof *c);
	if (!c)
		return NULL;
	c->nslots = 4096;
	c->slots = map_zeroed(c->nslots * sizeof(slot));
	c->cips = 65536;
	c->ips = map_zeroed(c->cips * sizeof(uintptr_t));
	if (!c->slots || !c->ips)
		return NULL;
	rt_t.bts = c;
	pthread_setspecific(cache_key, c);
	return c;
}

static bool cache_grow(rt_btcache *c)
{
	size_t nslots = c->nslots * 2;
	slot *s = map_zeroed(nslots * sizeof(slot));
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
	munmap(c->slots, c->nslots * sizeof(slot));
	c->slots = s;
	c->nslots = nslots;
	return true;
}

static bool ips_reserve(rt_btcache *c, size_t n)
{
	if (c->nips + n <= c->cips)
		return true;
	size_t cap = c->cips * 2;
	uintptr_t *p = mremap(c->ips, c->cips * sizeof(uintptr_t), cap * sizeof(uintptr_t), MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		return false;
	c->ips = p;
	c->cips = cap;
	return true;
}

static uint64_t hash_ips(void *const *ips, int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
	for (int i = 0; i < n; i++) {
		h = (h ^ (uint64_t)(uintptr_t)ips[i]) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return h | 1;
}

static void write_bt(uint64_t id, void *const *ips, int n)
{
	uint8_t *p = rt_reserve(1 + 10 + 10 + (size_t)n * 10);
	if (!p)
		return;
	*p++ = REC_BT;
	p = rt_put_varint(p, id);
	p = rt_put_varint(p, (uint64_t)n);
	int64_t prev = 0;
	for (int i = 0; i < n; i++) {
		int64_t a = (int64_t)(uintptr_t)ips[i];
		p = rt_put_svarint(p, a - prev);
		prev = a;
	}
	rt_commit(p);
}

/* Looks the stack up; a new one gets an id and a BT record. */
static uint64_t intern(rt_btcache *c, void *const *ips, int n)
{
	uint64_t h = hash_ips(ips, n);
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

__attribute__((noinline)) uint64_t rt_backtrace(void)
{
	void *ips[MAX_DEPTH + SKIP];
	int n = unw_backtrace(ips, (int)rt_opt.depth + SKIP);
	if (n <= SKIP)
		return 0;
	rt_btcache *c = cache_get();
	if (!c)
		return 0;
	return intern(c, ips + SKIP, n - SKIP);
}
