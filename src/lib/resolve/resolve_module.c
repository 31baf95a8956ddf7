/* The resolver's modules: opening each file once (under --root, or the
 * running vDSO), placing each mapping of the trace, and a sorted symbol
 * table for the addresses DWARF does not cover. */
#define _GNU_SOURCE
#include "resolve/resolve_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#define PAGE 4096u
#define PADDING 64u /* most a function's end is aligned to */ /* of the traced machine when its map gives no file offset */

/* The running kernel's vDSO stands for the traced one only when the trace
 * was taken here (no --root), on this architecture, and its [vdso]
 * mapping has the size of ours; otherwise its addresses stay unresolved,
 * quietly: no file was missing. */
static int open_vdso(rt_resolver *r, uint64_t map_len)
{
	const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct utsname u;
	const char *arch = rt_trace_header(r->t, "arch");
	if (!img || r->o.root || memcmp(img, ELFMAG, SELFMAG) || img[EI_CLASS] != ELFCLASS64 ||
	    uname(&u) || (arch && strcmp(arch, u.machine)))
		return -1;
	const Elf64_Ehdr *eh = (const void *)img;
	size_t len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (map_len != ((len + PAGE - 1) & ~(uint64_t)(PAGE - 1)))
		return -1;
	int fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, img, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return fd;
}

static int open_file(rt_resolver *r, const char *path, char *full, size_t len)
{
	snprintf(full, len, "%s%s", r->o.root ? r->o.root : "", path);
	int fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		rt_resolve_warn(r, "cannot open module '%s': %s; its addresses stay unresolved",
				full, strerror(errno));
	return fd;
}

static int sym_cmp(const void *a, const void *b)
{
	const rt_rsym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Function symbols of .symtab (main file or debug file), else .dynsym,
 * sorted once: libdwfl's own lookup scans the table for every address.
 * Aliases at one address stay in table order. */
static void load_symbols(rt_rmod *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	size_t cap = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, NULL, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		rt_rsym s = {addr, sym.st_size, name, i, RT_RNAME_UNKNOWN};
		RT_PUSH(m->syms, m->nsyms, cap, s);
	}
	rt_resolve_sort(m->syms, m->nsyms, sizeof *m->syms, sym_cmp);
}

/* The function symbol containing a, or the nearest one below it when a
 * is in the alignment padding after it (as addr2line names padding) or it
 * has no size; of aliases, the first in the table (the others follow). */
rt_rsym *rt_resolve_symbol(const rt_rmod *m, uint64_t a)
{
	size_t lo = RT_COUNT_UPTO(m->syms, m->nsyms, addr, a);
	/* nested symbols: a few entries back may still contain a */
	for (size_t i = lo, k = 0; i > 0 && k < 8; i--, k++) {
		rt_rsym *s = &m->syms[i - 1];
		bool padding = k == 0 && a - s->addr < s->size + PADDING;
		if (a < s->addr + s->size || padding || (s->size == 0 && k == 0)) {
			while (s > m->syms && s[-1].addr == s->addr)
				s--;
			return s;
		}
	}
	return NULL;
}

static bool report(rt_resolver *r, rt_rmod *m, int fd, const char *full)
{
	m->dwfl = dwfl_begin(&r->cb);
	if (!m->dwfl) {
		close(fd);
		return false;
	}
	dwfl_report_begin(m->dwfl);
	/* link-time addresses: each mapping's own bias is applied by the
	 * resolver, so one module serves every place it was loaded at */
	m->mod = dwfl_report_elf(m->dwfl, m->path, full, fd, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	void **userdata;
	if (m->mod && dwfl_module_info(m->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL))
		*userdata = m; /* for rt_resolve_find_debuginfo */
	if (!m->mod) {
		close(fd);
		rt_resolve_warn(r, "cannot read module '%s': %s; its addresses stay unresolved",
				full, dwfl_errmsg(-1));
		return false;
	}
	GElf_Addr bias = 0;
	m->elf = dwfl_module_getelf(m->mod, &bias);
	m->dwfl_bias = bias;
	return m->elf != NULL;
}

bool rt_resolve_open_module(rt_resolver *r, rt_rmod *m, const rt_rmap *map)
{
	if (m->state != MOD_UNOPENED)
		return m->state == MOD_OK;
	m->state = MOD_FAILED;
	char full[4096];
	int fd;
	if (m->path[0] == '[') {
		if (strcmp(m->path, "[vdso]") || (fd = open_vdso(r, map->to - map->from)) < 0)
			return false;
		snprintf(full, sizeof full, "%s", m->path);
	} else if ((fd = open_file(r, m->path, full, sizeof full)) < 0) {
		r->st.missing++;
		return false;
	}
	if (!report(r, m, fd, full)) {
		r->st.missing++;
		return false;
	}
	load_symbols(m);
	r->st.modules++;
	m->state = MOD_OK;
	return true;
}

void rt_resolve_close_module(rt_rmod *m)
{
	rt_resolve_free_units(m);
	rt_resolve_hash_free(&m->names);
	rt_arena_free(&m->arena);
	free(m->debug_file);
	free(m->debug_link);
	if (m->dwfl)
		dwfl_end(m->dwfl);
	free(m->syms);
}

/* The loadable segment a mapping shows: one whose file bytes overlap the
 * mapping's, an executable one first; without a file offset (text
 * traces), the first executable segment, which is what memory maps list. */
static bool find_segment(Elf *elf, const rt_rmap *map, GElf_Phdr *out)
{
	size_t phnum;
	int best = 0; /* 1: overlaps, 2: overlaps and is executable */
	if (elf_getphdrnum(elf, &phnum))
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		bool x = ph.p_flags & PF_X;
		bool fits = map->offset == RT_OFFSET_UNKNOWN
				    ? x
				    : ph.p_offset < map->offset + (map->to - map->from) &&
					      map->offset < ph.p_offset + ph.p_filesz;
		int score = fits ? 1 + x : 0;
		if (score > best) {
			best = score;
			*out = ph;
		}
	}
	return best > 0;
}

/* Computes the mapping's bias: libdwfl address = runtime address - bias.
 * A fixed-address executable is where it was linked. */
bool rt_resolve_place(rt_resolver *r, rt_rmap *map)
{
	rt_rmod *m = &r->mods[map->mod];
	GElf_Ehdr eh;
	GElf_Phdr ph;
	map->placed = true;
	map->bad = true;
	if (!gelf_getehdr(m->elf, &eh))
		return false;
	if (eh.e_type == ET_EXEC) {
		map->bias = -(int64_t)m->dwfl_bias;
	} else {
		if (!find_segment(m->elf, map, &ph)) {
			rt_resolve_warn(r, "module '%s' has no loadable segment for its mapping at 0x%" PRIx64
					" (not the file that was traced?); its addresses there stay unresolved",
					m->path, map->from);
			return false;
		}
		uint64_t vaddr = map->offset == RT_OFFSET_UNKNOWN
					 ? ph.p_vaddr & ~(uint64_t)(PAGE - 1)
					 : ph.p_vaddr - ph.p_offset + map->offset;
		map->bias = (int64_t)(map->from - vaddr - m->dwfl_bias);
	}
	map->bad = false;
	return true;
}
