/* The library's ground floor (util.h), used by every format and the model:
 * allocation that dies loudly instead of failing silently (a reader that
 * cannot grow its model cannot report anything useful), growable arrays
 * that double, an arena for the model's strings (one free per trace, not
 * one per string: a 138 MB profile interns millions of names), a string
 * table whose slots keep each string's hash (probes compare hashes before
 * bytes, growth rehashes nothing), and the chunked line stream
 * (rt_stream_fd) that the text and Callgrind readers share. Nothing here
 * knows a format. */
#include "util/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const uint8_t rt_hexval[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
	['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13,
	['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13,
	['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* Out of memory is not recoverable for a post-processor holding a model:
 * fail loudly instead of returning half-built data. */
static void rt_oom(size_t n)
{
	fprintf(stderr, "rtrace: out of memory (allocating %zu bytes)\n", n);
	abort();
}

void *rt_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		rt_oom(n);
	return p;
}

void *rt_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		rt_oom(n * size);
	return p;
}

void rt_index_grow(uint32_t **slots, size_t *nslots, size_t first, size_t n,
		   uint64_t (*hash)(const void *ctx, size_t id), const void *ctx)
{
	size_t ns = *nslots ? *nslots * 2 : first;
	free(*slots);
	*slots = rt_xcalloc(ns, sizeof **slots);
	*nslots = ns;
	for (size_t i = 0; i < n; i++) {
		size_t j = (size_t)hash(ctx, i) & (ns - 1);
		while ((*slots)[j])
			j = (j + 1) & (ns - 1);
		(*slots)[j] = (uint32_t)i + 1;
	}
}

void *rt_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		rt_oom(n);
	return p;
}

char *rt_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(rt_xmalloc(n), s, n);
}

char *rt_xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = rt_xmalloc(n > 0 ? (size_t)n + 1 : 1);
	va_start(ap, fmt);
	vsnprintf(s, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
	va_end(ap);
	return s;
}

void rt_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return;
	size_t ncap = *cap < 16 ? 16 : *cap + *cap / 2;
	if (ncap < need)
		ncap = need;
	*p = rt_xrealloc(*p, ncap * elem);
	*cap = ncap;
}

struct rt_arena_chunk {
	struct rt_arena_chunk *next;
	max_align_t data[];
};

#define RT_ARENA_CHUNK (256 * 1024)

void rt_arena_init(rt_arena *a)
{
	a->head = NULL;
	a->cur = a->end = NULL;
}

void rt_arena_free(rt_arena *a)
{
	struct rt_arena_chunk *c = a->head;
	while (c) {
		struct rt_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	rt_arena_init(a);
}

void *rt_arena_alloc(rt_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if ((size_t)(a->end - a->cur) < n) {
		size_t sz = n > RT_ARENA_CHUNK / 4 ? n : RT_ARENA_CHUNK;
		struct rt_arena_chunk *c = rt_xmalloc(sizeof *c + sz);
		c->next = a->head;
		a->head = c;
		a->cur = (char *)c->data;
		a->end = a->cur + sz;
	}
	void *p = a->cur;
	a->cur += n;
	return p;
}

char *rt_arena_strndup(rt_arena *a, const char *s, size_t n)
{
	char *p = rt_arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

rt_arena_mark rt_arena_get_mark(const rt_arena *a)
{
	rt_arena_mark m = {a->head, a->cur, a->end};
	return m;
}

void rt_arena_rewind(rt_arena *a, rt_arena_mark m)
{
	while (a->head != m.head) {
		struct rt_arena_chunk *next = a->head->next;
		free(a->head);
		a->head = next;
	}
	a->cur = m.cur;
	a->end = m.end;
}

/* One multiply and shift per word, the full mix once at the end: names
 * of kilobytes (C++ templates, Callgrind's caller chains) are hashed at
 * memory speed. */
uint64_t rt_hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
		s += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, s, n);
	return rt_mix64(h ^ w ^ 0x5bd1e995);
}

void rt_strtab_init(rt_strtab *t, rt_arena *arena)
{
	memset(t, 0, sizeof *t);
	t->arena = arena;
}

void rt_strtab_free(rt_strtab *t)
{
	free(t->strs);
	free(t->lens);
	free(t->slots);
	memset(t, 0, sizeof *t);
}

/* A slot holds id + 1 in its low half and the string's hash in its high
 * half: probing compares hashes before touching a string, and a rehash
 * needs no string at all. */
#define SLOT_ID(v) ((uint32_t)(v))
#define SLOT_HASH(v) ((uint32_t)((v) >> 32))

static void strtab_place(uint64_t *slots, size_t nslots, uint32_t h, uint32_t id)
{
	size_t i = h & (nslots - 1);
	while (slots[i])
		i = (i + 1) & (nslots - 1);
	slots[i] = (uint64_t)h << 32 | (id + 1);
}

/* Re-inserts in id order, which rt_strtab_truncate relies on. */
static void strtab_rehash(rt_strtab *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 64;
	uint32_t *hash = rt_xmalloc((t->n ? t->n : 1) * sizeof *hash);
	for (size_t i = 0; i < t->nslots; i++) {
		if (t->slots[i])
			hash[SLOT_ID(t->slots[i]) - 1] = SLOT_HASH(t->slots[i]);
	}
	uint64_t *slots = rt_xcalloc(nslots, sizeof *slots);
	for (size_t id = 0; id < t->n; id++)
		strtab_place(slots, nslots, hash[id], (uint32_t)id);
	free(hash);
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
}

uint32_t rt_strtab_intern(rt_strtab *t, const char *s, size_t len)
{
	if ((t->n + 1) * 2 > t->nslots)
		strtab_rehash(t);
	uint32_t h = (uint32_t)rt_hash_bytes(s, len);
	size_t i = h & (t->nslots - 1);
	for (uint64_t v; (v = t->slots[i]); i = (i + 1) & (t->nslots - 1)) {
		uint32_t id = SLOT_ID(v) - 1;
		if (SLOT_HASH(v) == h && t->lens[id] == len && memcmp(t->strs[id], s, len) == 0)
			return id;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap;
		rt_grow((void **)&t->strs, &cap, t->n + 1, sizeof *t->strs);
		rt_grow((void **)&t->lens, &t->cap, t->n + 1, sizeof *t->lens);
	}
	uint32_t id = (uint32_t)t->n++;
	t->strs[id] = rt_arena_strndup(t->arena, s, len);
	t->lens[id] = (uint32_t)len;
	t->slots[i] = (uint64_t)h << 32 | (id + 1);
	return id;
}

/* Linear probing lets the most recent key go by just emptying its slot:
 * no key inserted before it (or re-inserted before it by a rehash, which
 * goes in id order) probed past that slot, since it was empty then. */
void rt_strtab_truncate(rt_strtab *t, size_t n)
{
	while (t->n > n) {
		uint32_t id = (uint32_t)--t->n;
		size_t i = (uint32_t)rt_hash_bytes(t->strs[id], t->lens[id]) & (t->nslots - 1);
		while (SLOT_ID(t->slots[i]) != id + 1)
			i = (i + 1) & (t->nslots - 1);
		t->slots[i] = 0;
	}
}

/* The buffer grows (by doubling) only when less than half a chunk is
 * free, that is for a line longer than half a chunk, up to max_line. */
int rt_stream_fd(int fd, const rt_stream *st)
{
	size_t cap = st->chunk, len = 0;
	char *buf = rt_xmalloc(cap);
	int rc = 0;
	for (;;) {
		if (cap - len < st->chunk / 2) {
			if (len > st->max_line) {
				rc = st->error(st->ctx, 0, buf, len);
				break;
			}
			buf = rt_xrealloc(buf, cap *= 2);
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? st->error(st->ctx, errno, NULL, 0) : len ? st->last(st->ctx, buf, len) : 0;
			break;
		}
		*st->bytes += (uint64_t)n;
		len += (size_t)n;
		ssize_t used = st->feed(st->ctx, buf, len);
		if (used < 0) {
			rc = -1;
			break;
		}
		memmove(buf, buf + used, len - (size_t)used);
		len -= (size_t)used;
	}
	free(buf);
	return rc;
}

size_t rt_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
		return 0;
	return len;
}
