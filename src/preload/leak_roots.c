/* The roots of the leak check, as memcheck has them: the registers of
 * every thread, every thread's stack from its stack pointer up (static
 * TLS and the thread descriptor sit at the top of a thread's stack
 * mapping), and every other readable and writable mapping except
 * malloc's own heaps, the tracer's memory and devices. Dynamic TLS and
 * the DTV are heap blocks, found through the thread descriptor like any
 * other block. The exiting thread's stack starts above the tracer's
 * frames and above the frames of exit's machinery (leak.c), whose
 * unwritten slots hold what earlier calls left there.
 *
 * What is no root is collected as excluded ranges (glibc's arenas and
 * mmapped chunks, the tracer's writable segments and tables, the dead
 * stack below each stack pointer), sorted, and the root mappings are
 * scanned around them. */
#define _GNU_SOURCE
#include "leak_int.h"
#include "cfi.h"
#include "pages.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA_ALIGN ((uintptr_t)64 << 20) /* glibc's HEAP_MAX_SIZE, 64-bit */

/* --- what is not a root --- */

static void exclude(scan *s, uintptr_t lo, uintptr_t hi)
{
	if (hi <= lo)
		return;
	if (s->nex == s->cex) {
		size_t cap = s->cex ? s->cex * 2 : 4096;
		range *r = rt_pages(cap * sizeof *r);
		if (!r)
			return;
		if (s->ex) {
			memcpy(r, s->ex, s->nex * sizeof *r);
			rt_pages_free(s->ex, s->cex * sizeof *r);
		}
		s->ex = r;
		s->cex = cap;
	}
	s->ex[s->nex++] = (range){lo, hi};
}

/* Blocks glibc served with mmap of their own: the chunk header says so
 * (IS_MMAPPED, and the alignment offset in prev_size). Checked against
 * the mappings, so that another allocator's headers exclude nothing. A
 * block whose header the program made unreadable is no root either. */
static void exclude_mmapped_chunks(scan *s)
{
	for (size_t i = 0; i < s->n; i++) {
		uintptr_t a = s->b[i].addr;
		if (a % 16 || a < 4096)
			continue;
		if (!rt_leak_readable(s, a - 16, 16)) { /* made unreadable: the block at least */
			exclude(s, a, a + s->b[i].size);
			continue;
		}
		size_t hdr = ((const size_t *)a)[-1], prev = ((const size_t *)a)[-2];
		if (!(hdr & 2) || (hdr & 1) || prev >= ((size_t)1 << 20))
			continue;
		uintptr_t lo = a - 16 - prev, hi = a - 16 + (hdr & ~(size_t)7);
		const vma *v = rt_leak_vma_of(s, lo);
		if (lo % 4096 == 0 && hi % 4096 == 0 && v && !v->file && v->hi >= hi && hi > a)
			exclude(s, lo, hi);
	}
}

/* glibc's non-main arenas: 64 MiB aligned heaps starting with a heap_info
 * (ar_ptr, prev, size, mprotect_size). */
static void exclude_arenas(scan *s, const vma *v)
{
	for (uintptr_t a = (v->lo + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1); a + 4096 <= v->hi; a += ARENA_ALIGN) {
		const uintptr_t *h = (const uintptr_t *)a;
		bool first = h[0] >= a && h[0] < a + 4096;
		bool later = h[1] && h[1] % ARENA_ALIGN == 0;
		if ((first || later) && h[2] >= 4096 && h[2] <= h[3] && h[3] <= ARENA_ALIGN)
			exclude(s, a, a + h[3]);
	}
}

static int find_allocator(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	scan *s = ctx;
	if (info->dlpi_addr != s->alloc_base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && s->nalloc < 4; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
			uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
			/* the bss past the file's pages is an anonymous mapping */
			s->alloc[s->nalloc++] = (range){lo & ~(uintptr_t)4095,
							(lo + ph->p_memsz + 4095) & ~(uintptr_t)4095};
		}
	}
	return 1;
}

static int exclude_module(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	scan *s = ctx;
	Dl_info self;
	if (!dladdr((void *)exclude_module, &self) || (uintptr_t)self.dli_fbase != info->dlpi_addr)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
			uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
			exclude(s, lo & ~(uintptr_t)4095, (lo + ph->p_memsz + 4095) & ~(uintptr_t)4095);
		}
	}
	return 1;
}

/* The part of a thread's stack below its stack pointer is dead. */
static void exclude_below(scan *s, uintptr_t sp)
{
	const vma *v = sp ? rt_leak_vma_of(s, sp) : NULL;
	if (v)
		exclude(s, v->lo, sp - REDZONE > v->lo ? sp - REDZONE : v->lo);
}

static void exclude_cb(void *ctx, uintptr_t lo, uintptr_t hi) { exclude(ctx, lo, hi); }

static void exclude_own(scan *s)
{
	size_t n = s->cap ? s->cap : 1;
	exclude(s, (uintptr_t)s, (uintptr_t)s + sizeof *s);
	exclude(s, (uintptr_t)s->b, (uintptr_t)s->b + n * sizeof *s->b);
	exclude(s, (uintptr_t)s->starts, (uintptr_t)s->starts + n * sizeof *s->starts);
	exclude(s, (uintptr_t)s->stack, (uintptr_t)s->stack + (2 * n + 16) * sizeof *s->stack);
	exclude(s, (uintptr_t)s->v, (uintptr_t)s->v + (s->nv + 1) * sizeof *s->v);
	exclude(s, (uintptr_t)s->maps, (uintptr_t)s->maps + s->maps_len + 1);
	unsigned np;
	park_slot *parked = rt_leak_parked(&np);
	exclude(s, (uintptr_t)parked, (uintptr_t)parked + MAX_PARKED * sizeof *parked);
	dl_iterate_phdr(exclude_module, s);
	if (s->alloc_base)
		dl_iterate_phdr(find_allocator, s);
	rt_heap_each_map(exclude_cb, s);
	rt_cfi_each_memo(exclude_cb, s);
	/* at a call the red zone below the caller's stack pointer is dead */
	const vma *self = rt_leak_vma_of(s, s->self_sp);
	if (self)
		exclude(s, self->lo, s->self_sp);
	for (unsigned i = 0; i < np; i++)
		if (atomic_load(&parked[i].ready))
			exclude_below(s, parked[i].sp);
}

static bool is_root_vma(const scan *s, const vma *v)
{
	const char *p = rt_leak_path_of(s, v);
	if (!v->r || !v->w || !strcmp(p, "[heap]") || !strcmp(p, "[vvar]") ||
	    !strcmp(p, "[vsyscall]") || !strcmp(p, "[vdso]"))
		return false;
	if (!strncmp(p, "/dev/", 5) && strcmp(p, "/dev/zero") && strncmp(p, "/dev/shm/", 9))
		return false;
	/* the trace's own mapping: under its name, or its raw name once
	 * it grew past its first chunk (writer.c) */
	const char *trace = rt_trace_path(), *raw = rt_trace_data_path();
	return !(trace[0] && (!strcmp(p, trace) || !strcmp(p, raw)));
}

static void sort_ranges(range *r, size_t n)
{
	for (size_t i = 1; i < n; i++) { /* few and nearly sorted: insertion */
		range x = r[i];
		size_t j = i;
		for (; j > 0 && r[j - 1].lo > x.lo; j--)
			r[j] = r[j - 1];
		r[j] = x;
	}
}

/* --- roots --- */

/* Each root mapping minus the excluded ranges (sorted). */
static void scan_vmas(scan *s)
{
	for (size_t i = 0; i < s->nv; i++) {
		const vma *v = &s->v[i];
		if (!is_root_vma(s, v))
			continue;
		uintptr_t at = v->lo;
		for (size_t k = 0; k < s->nex && at < v->hi; k++) {
			const range *x = &s->ex[k];
			if (x->hi <= at || x->lo >= v->hi)
				continue;
			if (x->lo > at)
				rt_leak_scan_range(s, at, x->lo);
			at = x->hi > at ? x->hi : at;
		}
		if (at < v->hi)
			rt_leak_scan_range(s, at, v->hi);
	}
}

void rt_leak_scan_roots(scan *s, const entry_state *self)
{
	exclude_mmapped_chunks(s);
	for (size_t i = 0; i < s->nv; i++) {
		const vma *v = &s->v[i];
		if (v->r && v->w && !v->file && v->hi - v->lo >= 4096)
			exclude_arenas(s, v);
	}
	exclude_own(s);
	sort_ranges(s->ex, s->nex);
	scan_vmas(s);
	rt_leak_scan_regs(s, self->regs, ENTRY_REGS);
	unsigned np;
	park_slot *parked = rt_leak_parked(&np);
	for (unsigned i = 0; i < np; i++)
		if (atomic_load(&parked[i].ready))
			rt_leak_scan_regs(s, parked[i].regs, NREGS);
}

