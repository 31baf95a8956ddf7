/* Marking and classifying, with memcheck's definitions (mc_leakcheck.c):
 *
 *  - the blocks are the live-block table's, copied in address order (a
 *    radix sort) for a binary search of each word scanned;
 *  - a pointer to a block's start from a root (or from a block reached
 *    so) makes it reachable, a pointer inside it possibly lost unless one
 *    of memcheck's heuristics (stdstring, length64, newarray,
 *    multipleinheritance, all on by default) accepts it; what possibly
 *    lost blocks point to is possibly lost at best;
 *  - blocks not reached are lost: taking them in address order, each one
 *    still unreached leads a clique of the unreached blocks it reaches,
 *    which are indirectly lost; the leaders are definitely lost.
 *
 * Marking is depth first with an explicit stack (s->stack, one entry per
 * block at most twice), never recursion. */
#define _GNU_SOURCE
#include "leak_int.h"
#include "pages.h"

#include <string.h>
#include <sys/mman.h>

#define VTABLE_MAX_CHECK 20

/* --- the blocks --- */

static void add_block(void *ctx, const rt_heap_ent *e)
{
	scan *s = ctx;
	if (s->n == s->cap)
		return;
	s->b[s->n++] = (lblk){e->addr, e->meta & RT_HEAP_SIZE_MASK, e->bt, e->index, 0,
			      (uint8_t)(e->meta >> 56), ST_UNREACHED, RT_TF_HEUR_NONE};
}

/* LSD radix sort of (address, position) pairs, 16 bits a pass. */
static void sort_pairs(uint64_t (*a)[2], uint64_t (*t)[2], size_t n)
{
	static size_t count[65536] RT_COLD;
	for (int shift = 0; shift < 64; shift += 16) {
		memset(count, 0, sizeof count);
		for (size_t i = 0; i < n; i++)
			count[(a[i][0] >> shift) & 0xffff]++;
		if (count[(a[0][0] >> shift) & 0xffff] == n)
			continue; /* every key has this digit */
		for (size_t i = 0, sum = 0; i < 65536; i++) {
			size_t c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++) {
			size_t d = (a[i][0] >> shift) & 0xffff;
			t[count[d]][0] = a[i][0];
			t[count[d]++][1] = a[i][1];
		}
		memcpy(a, t, n * sizeof *a);
	}
}

/* Copies the table into address order. */
bool rt_leak_collect_blocks(scan *s)
{
	s->cap = rt_heap_count();
	s->b = rt_pages(s->cap * sizeof *s->b);
	lblk *sorted = rt_pages(s->cap * sizeof *sorted);
	uint64_t(*pairs)[2] = rt_pages(s->cap * sizeof *pairs);
	uint64_t(*tmp)[2] = rt_pages(s->cap * sizeof *tmp);
	s->starts = rt_pages(s->cap * sizeof *s->starts);
	s->stack = rt_pages((2 * s->cap + 16) * sizeof *s->stack);
	if (!s->b || !sorted || !pairs || !tmp || !s->starts || !s->stack)
		return false;
	rt_heap_each(add_block, s);
	for (size_t i = 0; i < s->n; i++) {
		pairs[i][0] = s->b[i].addr;
		pairs[i][1] = i;
	}
	if (s->n)
		sort_pairs(pairs, tmp, s->n);
	s->lo = UINTPTR_MAX;
	s->hi = 0;
	for (size_t i = 0; i < s->n; i++) {
		sorted[i] = s->b[pairs[i][1]];
		s->starts[i] = sorted[i].addr;
		uintptr_t end = sorted[i].addr + (sorted[i].size ? sorted[i].size : 1);
		s->lo = sorted[i].addr < s->lo ? sorted[i].addr : s->lo;
		s->hi = end > s->hi ? end : s->hi;
	}
	rt_pages_free(s->b, s->cap * sizeof *s->b);
	rt_pages_free(pairs, s->cap * sizeof *pairs);
	rt_pages_free(tmp, s->cap * sizeof *tmp);
	s->b = sorted;
	return true;
}

/* The block v points into (a zero-sized block: only at its start). */
long rt_leak_find_block(const scan *s, uintptr_t v)
{
	if (v < s->lo || v >= s->hi)
		return -1;
	size_t l = 0, r = s->n;
	while (l < r) {
		size_t m = (l + r) / 2;
		if (s->starts[m] <= v)
			l = m + 1;
		else
			r = m;
	}
	if (l == 0)
		return -1;
	const lblk *b = &s->b[l - 1];
	if (v - b->addr < b->size || v == b->addr)
		return (long)(l - 1);
	return -1;
}

/* --- memcheck's heuristics for interior pointers --- */

/* A vtable: in a readable file mapping, with two function pointers into
 * executable file mappings among its first entries and nothing else. */
static bool is_vtable(const scan *s, uintptr_t a)
{
	const vma *v = rt_leak_vma_of(s, a);
	if (!v || !v->file || !v->r)
		return false;
	uintptr_t w[VTABLE_MAX_CHECK];
	size_t n = (v->hi - a) / WORD;
	n = n > VTABLE_MAX_CHECK ? VTABLE_MAX_CHECK : n;
	if (!rt_leak_safe_read(w, a, n * WORD))
		return false;
	int fns = 0;
	for (size_t i = 0; i < n; i++) {
		if (!w[i])
			continue;
		const vma *f = rt_leak_vma_of(s, w[i]);
		if (!f || !f->file || !f->x)
			return false;
		if (++fns == 2)
			return true;
	}
	return false;
}

static int heuristic(const scan *s, const lblk *b, uintptr_t p)
{
	const uintptr_t *w = (const uintptr_t *)b->addr;
	if (!rt_leak_readable(s, b->addr, b->size < 3 * WORD ? b->size : 3 * WORD))
		return RT_TF_HEUR_NONE; /* its header words are unreadable */
	if (p == b->addr + 3 * WORD && b->size >= 3 * WORD && 3 * WORD + w[1] + 1 == b->size &&
	    w[0] <= w[1])
		return RT_TF_HEUR_STDSTRING;
	if (p == b->addr + 8 && b->size >= 8 && w[0] > 0 && b->size - 8 == w[0])
		return RT_TF_HEUR_LENGTH64;
	if (p == b->addr + WORD && b->size >= WORD && w[0] > 0 && (b->size - WORD) % w[0] == 0)
		return RT_TF_HEUR_NEWARRAY;
	if (p % WORD == 0 && p + WORD <= b->addr + b->size && b->size >= WORD) {
		uintptr_t inner = *(const uintptr_t *)p, first = w[0];
		if (inner % WORD == 0 && inner >= 4096 && first % WORD == 0 && first >= 4096 &&
		    is_vtable(s, inner) && is_vtable(s, first))
			return RT_TF_HEUR_MULTIPLE;
	}
	return RT_TF_HEUR_NONE;
}

/* --- marking --- */

static void push(scan *s, long i) { s->stack[s->top++] = (uint32_t)i; }

/* A word from a root or from a block being scanned (prior_definite: that
 * block is reachable, not just possibly). */
static void mark_word(scan *s, uintptr_t v, bool prior_definite)
{
	long i = rt_leak_find_block(s, v);
	if (i < 0 || !rt_leak_readable(s, v, 1)) /* memcheck's: no pointer then */
		return;
	lblk *b = &s->b[i];
	if (s->clique >= 0) {
		if (b->state == ST_UNREACHED && i != s->clique) {
			push(s, i);
			s->b[s->clique].indirect += b->size + b->indirect;
			b->state = ST_INDIRECT;
		}
		return;
	}
	if (b->state == ST_REACHABLE) {
		if (b->heur && v == b->addr)
			b->heur = RT_TF_HEUR_NONE;
		return;
	}
	bool via_start = v == b->addr;
	if (!via_start) {
		b->heur = (uint8_t)heuristic(s, b, v);
		via_start = b->heur != RT_TF_HEUR_NONE;
	}
	if (via_start && prior_definite) {
		b->state = ST_REACHABLE;
		push(s, i);
	} else if (b->state == ST_UNREACHED) {
		b->state = ST_POSSIBLE;
		push(s, i);
	}
}

/* glibc's arena state (main_arena, in libc's data) points at the chunk
 * after the last block (the top chunk), which lies inside the block's
 * last bytes: malloc's bookkeeping, not the program's pointer (under
 * memcheck, glibc's malloc is not even used). */
static bool is_next_chunk(const scan *s, uintptr_t v)
{
	long i = rt_leak_find_block(s, v);
	if (i < 0 || v == s->b[i].addr || s->b[i].addr % 16 || !rt_leak_readable(s, s->b[i].addr - WORD, WORD))
		return false;
	size_t hdr = ((const size_t *)s->b[i].addr)[-1] & ~(size_t)7;
	return v == s->b[i].addr - 16 + hdr;
}

static void scan_words(scan *s, const uintptr_t *w, size_t n, bool prior_definite)
{
	for (size_t i = 0; i < n; i++)
		if (w[i] >= s->lo && w[i] < s->hi && !(s->in_alloc && is_next_chunk(s, w[i])))
			mark_word(s, w[i], prior_definite);
}

/* A block's words, on its readable pages only (mappings are page
 * aligned, from and to word aligned). */
static void scan_block(scan *s, uintptr_t from, uintptr_t to, bool definite)
{
	while (from < to) {
		const vma *v = rt_leak_vma_from(s, from);
		if (!v || v->lo >= to)
			return;
		uintptr_t lo = v->lo > from ? v->lo : from, hi = v->hi < to ? v->hi : to;
		if (v->r)
			scan_words(s, (const uintptr_t *)lo, (hi - lo) / WORD, definite);
		from = hi;
	}
}

static void drain(scan *s)
{
	while (s->top) {
		const lblk *b = &s->b[s->stack[--s->top]];
		bool definite = b->state != ST_POSSIBLE;
		uintptr_t from = (b->addr + WORD - 1) & ~(WORD - 1);
		uintptr_t to = (b->addr + b->size) & ~(WORD - 1);
		if (to > from)
			scan_block(s, from, to, definite);
	}
}

void rt_leak_scan_range(scan *s, uintptr_t lo, uintptr_t hi)
{
	s->in_alloc = false;
	for (size_t k = 0; k < s->nalloc; k++)
		s->in_alloc |= lo < s->alloc[k].hi && hi > s->alloc[k].lo;
	lo = (lo + WORD - 1) & ~(WORD - 1);
	hi &= ~(WORD - 1);
	while (lo < hi) {
		size_t n = hi - lo > sizeof s->buf ? sizeof s->buf : hi - lo;
		if (rt_leak_safe_read(s->buf, lo, n)) {
			scan_words(s, (const uintptr_t *)s->buf, n / WORD, true);
			drain(s);
			lo += n;
			continue;
		}
		uintptr_t page_end = (lo | 4095) + 1;
		n = page_end - lo < n ? page_end - lo : n;
		if (rt_leak_safe_read(s->buf, lo, n)) {
			scan_words(s, (const uintptr_t *)s->buf, n / WORD, true);
			drain(s);
		}
		lo += n;
	}
}

void rt_leak_scan_regs(scan *s, const uintptr_t *regs, size_t n)
{
	scan_words(s, regs, n, true);
	drain(s);
}

/* Lost blocks in address order: each one still unreached leads the
 * clique of the unreached blocks it reaches (indirectly lost). */
void rt_leak_find_cliques(scan *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->b[i].state != ST_UNREACHED)
			continue;
		s->clique = (int)i;
		push(s, (long)i);
		drain(s);
	}
	s->clique = -1;
}

int rt_leak_kind(const lblk *b)
{
	static const int kinds[] = {[ST_UNREACHED] = RT_TF_LEAK_DEFINITE, [ST_INDIRECT] = RT_TF_LEAK_INDIRECT,
				    [ST_POSSIBLE] = RT_TF_LEAK_POSSIBLE, [ST_REACHABLE] = RT_TF_LEAK_REACHABLE};
	return kinds[b->state];
}

