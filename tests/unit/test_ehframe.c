/* The tracer's .eh_frame reader (src/preload/ehframe.c) against the two
 * references it replaces or stands beside:
 *
 * - libdw's dwarf_cfi_addrframe on the files of real binaries (libc,
 *   libstdc++, this test, a PIE and a non-PIE test program), at every
 *   address of the first FDEs and at thousands of addresses spread over
 *   the code: the same FDE (libdw's row within its range) and the same rule (CFA, return address,
 *   rbp) in the unwinder's terms, and the same "no FDE here";
 * - libunwind's unw_step on a live chain of frames in this process:
 *   each frame's rule applied to libunwind's registers gives libunwind's
 *   next ip, sp and rbp;
 * - every truncation of a real .eh_frame: the answer is the full one or
 *   nothing (bounds).
 *
 * The binaries' file images are mapped at their link-time addresses
 * (views over the file), as the tracer maps the loaded segments. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "cfi.h"
#include "ehframe.h"

#include <alloca.h>
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libunwind.h>
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

enum { DW_RBP = 6, DW_RSP = 7 };

/* ---- libdw's answer, in the unwinder's terms (as cfi.c made them
 * before it had its own reader) ---- */

static int dw_reg_rule(Dwarf_Frame *fr, int reg, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	if (dwarf_frame_register(fr, reg, mem, &ops, &n) != 0)
		return -2;
	if (n == 0)
		return ops ? -1 : 0;
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return -2;
	if (n == 1) {
		*off = 0;
		return 1;
	}
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return 1;
	}
	return -2;
}

static rt_cfi_rule dw_rule(Dwarf_Frame *fr)
{
	bool signal = false;
	int ra = dwarf_frame_info(fr, NULL, NULL, &signal);
	Dwarf_Op *ops;
	size_t n;
	int64_t ra_off = 0, bp_off = 0;
	rt_cfi_rule r = {.kind = signal ? RT_CFI_SIGNAL : RT_CFI_OTHER};
	if (ra < 0 || signal || dwarf_frame_cfa(fr, &ops, &n) != 0)
		return r;
	int ra_kind = dw_reg_rule(fr, ra, &ra_off);
	if (ra_kind == -1) {
		r.kind = RT_CFI_END;
		return r;
	}
	if (n != 1 || ops[0].atom != DW_OP_bregx || ra_kind != 1 || ra_off < -128 || ra_off > 127)
		return r;
	int bp_kind = dw_reg_rule(fr, DW_RBP, &bp_off);
	if (bp_kind == -2 || (bp_kind == 1 && (bp_off == 0 || bp_off < INT16_MIN || bp_off > INT16_MAX)))
		return r;
	int64_t cfa_off = (int64_t)ops[0].number2;
	if ((ops[0].number != DW_RSP && ops[0].number != DW_RBP) || cfa_off < INT32_MIN || cfa_off > INT32_MAX)
		return r;
	r.kind = ops[0].number == DW_RSP ? RT_CFI_SP : RT_CFI_BP;
	r.cfa_off = (int32_t)cfa_off;
	r.ra_off = (int8_t)ra_off;
	r.rbp_off = bp_kind == 1 ? (int16_t)bp_off : 0;
	return r;
}

/* ---- a binary's file, its views at link-time addresses ---- */

typedef struct image {
	const char *path;
	int fd;
	uint8_t *bytes;
	size_t size;
	Elf *elf;
	Dwarf_CFI *cfi;
	rt_eh_src src;
	uint64_t text_lo, text_hi; /* the executable PT_LOAD */
} image;

static bool view_of(const GElf_Phdr *ph, const image *im, rt_eh_mem *m)
{
	if (ph->p_offset > im->size || ph->p_filesz > im->size - ph->p_offset)
		return false;
	*m = (rt_eh_mem){im->bytes + ph->p_offset, ph->p_vaddr, ph->p_vaddr + ph->p_filesz};
	return true;
}

static void image_views(image *im)
{
	size_t n;
	GElf_Phdr ph, hdr = {0};
	assert_int_equal(elf_getphdrnum(im->elf, &n), 0);
	for (size_t i = 0; i < n && gelf_getphdr(im->elf, (int)i, &ph); i++) {
		if (ph.p_type == PT_GNU_EH_FRAME)
			hdr = ph;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			im->text_lo = ph.p_vaddr;
			im->text_hi = ph.p_vaddr + ph.p_memsz;
		}
	}
	assert_int_equal(hdr.p_type, PT_GNU_EH_FRAME);
	assert_true(view_of(&hdr, im, &im->src.hdr));
	uint64_t frame;
	assert_true(rt_eh_frame_of(&im->src.hdr, &frame));
	for (size_t i = 0; i < n && gelf_getphdr(im->elf, (int)i, &ph); i++)
		if (ph.p_type == PT_LOAD && frame >= ph.p_vaddr && frame < ph.p_vaddr + ph.p_filesz)
			assert_true(view_of(&ph, im, &im->src.frame));
	assert_non_null(im->src.frame.base);
}

static void image_open(image *im, const char *path)
{
	*im = (image){.path = path};
	im->fd = open(path, O_RDONLY);
	if (im->fd < 0)
		fail_msg("cannot open %s", path);
	struct stat st;
	assert_int_equal(fstat(im->fd, &st), 0);
	im->size = (size_t)st.st_size;
	im->bytes = mmap(NULL, im->size, PROT_READ, MAP_PRIVATE, im->fd, 0);
	assert_true(im->bytes != MAP_FAILED);
	elf_version(EV_CURRENT);
	im->elf = elf_begin(im->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(im->elf);
	im->cfi = dwarf_getcfi_elf(im->elf);
	assert_non_null(im->cfi);
	image_views(im);
}

static void image_close(image *im)
{
	dwarf_cfi_end(im->cfi);
	elf_end(im->elf);
	munmap(im->bytes, im->size);
	close(im->fd);
}

/* ---- comparison at one address ---- */

typedef struct tally {
	unsigned addrs, found, same, differ, rules[RT_CFI_OTHER + 1];
} tally;

static void compare_at(const image *im, uint64_t pc, tally *t, uint64_t *next_fde)
{
	Dwarf_Frame *fr = NULL;
	rt_eh_row row;
	int dw = dwarf_cfi_addrframe(im->cfi, pc, &fr);
	int mine = rt_eh_find(&im->src, pc, DW_RBP, &row);
	t->addrs++;
	*next_fde = 0;
	if (dw != 0 || mine != 0) {
		if ((dw == 0) != (mine == 0) && t->differ++ < 5)
			print_message("%s %#lx: libdw %s, ehframe %s\n", im->path, (unsigned long)pc,
				      dw == 0 ? "found" : "none", mine == 0 ? "found" : "none");
		free(fr);
		return;
	}
	Dwarf_Addr start, end;
	bool signal;
	dwarf_frame_info(fr, &start, &end, &signal);
	rt_cfi_rule a = dw_rule(fr), b;
	rt_cfi_rule_of(&row, &b);
	free(fr);
	t->found++;
	t->rules[b.kind]++;
	*next_fde = row.end;
	if (start >= row.start && end <= row.end && !memcmp(&a, &b, sizeof a)) { /* libdw's range: the row's */
		t->same++;
		return;
	}
	if (t->differ++ < 5)
		print_message("%s %#lx: libdw [%#lx,%#lx) kind %d cfa %d ra %d rbp %d; ehframe [%#lx,%#lx) "
			      "kind %d cfa %d ra %d rbp %d\n",
			      im->path, (unsigned long)pc, (unsigned long)start, (unsigned long)end, a.kind,
			      a.cfa_off, a.ra_off, a.rbp_off, (unsigned long)row.start, (unsigned long)row.end,
			      b.kind, b.cfa_off, b.ra_off, b.rbp_off);
}

/* Every address of the first `dense` FDEs, then `spread` addresses over
 * the whole executable segment. */
static tally compare_image(const char *path, unsigned dense, unsigned spread)
{
	image im;
	tally t = {0};
	image_open(&im, path);
	uint64_t pc = im.text_lo, next;
	for (unsigned k = 0; k < dense && pc < im.text_hi; pc++) {
		compare_at(&im, pc, &t, &next);
		if (next && pc + 1 == next)
			k++;
	}
	uint64_t stride = (im.text_hi - im.text_lo) / spread + 1;
	for (pc = im.text_lo + 3; pc < im.text_hi; pc += stride)
		compare_at(&im, pc, &t, &next);
	print_message("%s: %u addresses, %u with an FDE, %u same, %u differ; rules sp %u bp %u end %u "
		      "signal %u other %u\n",
		      path, t.addrs, t.found, t.same, t.differ, t.rules[RT_CFI_SP], t.rules[RT_CFI_BP],
		      t.rules[RT_CFI_END], t.rules[RT_CFI_SIGNAL], t.rules[RT_CFI_OTHER]);
	image_close(&im);
	return t;
}

static void expect_same(const char *path, unsigned min_found)
{
	tally t = compare_image(path, 300, 20000);
	assert_int_equal(t.differ, 0);
	assert_true(t.found >= min_found);
	/* not all left to another unwinder */
	assert_true(t.rules[RT_CFI_SP] + t.rules[RT_CFI_BP] > t.found / 2);
}

/* The file of the loaded object whose name contains `part`. */
static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const char **want = arg;
	if (info->dlpi_name && strstr(info->dlpi_name, want[0])) {
		want[1] = info->dlpi_name;
		return 1;
	}
	return 0;
}

static const char *loaded(const char *part)
{
	const char *want[2] = {part, NULL};
	dl_iterate_phdr(find_lib, want);
	if (!want[1])
		fail_msg("%s is not loaded", part);
	return want[1];
}

static char *program(const char *name)
{
	static char buf[4][4096];
	static int k;
	const char *dir = getenv("PROGRAMS");
	if (!dir)
		fail_msg("PROGRAMS is not set");
	char *b = buf[k++ & 3];
	snprintf(b, sizeof buf[0], "%s/%s", dir, name);
	return b;
}

static void on_signal(int sig) { (void)sig; }

/* libc's signal trampoline (the restorer glibc gives the kernel): a
 * signal frame ('S') for both readers, at its first byte and the one
 * before, where a return address into it is looked up. */
static void test_libc(void **state)
{
	(void)state;
	const char *path = loaded("libc.so");
	expect_same(path, 1500);
	struct sigaction sa = {.sa_handler = on_signal}, old;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	assert_int_equal(sigaction(SIGUSR1, NULL, &old), 0);
	Dl_info di;
	assert_true(old.sa_restorer && dladdr((void *)old.sa_restorer, &di));
	image im;
	tally t = {0};
	uint64_t next, at = (uint64_t)((uintptr_t)old.sa_restorer - (uintptr_t)di.dli_fbase);
	image_open(&im, path);
	compare_at(&im, at, &t, &next);
	compare_at(&im, at - 1, &t, &next);
	image_close(&im);
	assert_int_equal(t.differ, 0);
	assert_int_equal(t.rules[RT_CFI_SIGNAL], 2);
}

static void test_libstdcxx(void **state)
{
	(void)state;
	expect_same(loaded("libstdc++"), 1500);
}

static void test_self(void **state)
{
	(void)state;
	static char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(n > 0);
	self[n] = '\0';
	expect_same(self, 50);
}

static void test_pie(void **state)
{
	(void)state;
	expect_same(program("tp_unwind"), 10);
}

static void test_non_pie(void **state)
{
	(void)state;
	expect_same(program("tp_heaperr"), 10);
}

static bool same_row(const rt_eh_row *a, const rt_eh_row *b)
{
	return a->start == b->start && a->end == b->end && a->signal == b->signal &&
	       a->cfa_expr == b->cfa_expr && a->cfa_reg == b->cfa_reg && a->cfa_off == b->cfa_off &&
	       a->ra_reg == b->ra_reg && a->ra.rule == b->ra.rule && a->ra.off == b->ra.off &&
	       a->fp.rule == b->fp.rule && a->fp.off == b->fp.off;
}

/* Every shorter .eh_frame view: the row is the full view's or none (and
 * no read outside: the views are exact, ASan's build checks them). */
static void test_truncated(void **state)
{
	(void)state;
	image im;
	image_open(&im, program("tp_unwind"));
	uint64_t pcs[8];
	rt_eh_row full[8];
	int nfull = 0;
	for (uint64_t pc = im.text_lo; pc < im.text_hi && nfull < 8; pc += 37)
		if (rt_eh_find(&im.src, pc, DW_RBP, &full[nfull]) == 0)
			pcs[nfull++] = pc;
	assert_true(nfull == 8);
	rt_eh_src cut = im.src;
	unsigned found = 0;
	for (uint64_t hi = im.src.frame.lo; hi <= im.src.frame.hi; hi++) {
		cut.frame.hi = hi;
		for (int i = 0; i < nfull; i++) {
			rt_eh_row row;
			if (rt_eh_find(&cut, pcs[i], DW_RBP, &row) == 0) {
				assert_true(same_row(&row, &full[i]));
				found++;
			}
		}
	}
	assert_true(found > 0);
	image_close(&im);
}

/* ---- against libunwind, on this process's own stack ---- */

typedef struct walk_tally {
	int frames, end_seen;
} walk_tally;

static void unwind_compare(walk_tally *w)
{
	unw_context_t uc;
	unw_cursor_t c;
	unw_getcontext(&uc);
	assert_int_equal(unw_init_local(&c, &uc), 0);
	for (int depth = 0; depth < 200; depth++) {
		unw_word_t ip, sp, bp;
		unw_get_reg(&c, UNW_REG_IP, &ip);
		unw_get_reg(&c, UNW_REG_SP, &sp);
		unw_get_reg(&c, UNW_X86_64_RBP, &bp);
		rt_eh_src src;
		uintptr_t lo, hi;
		rt_eh_row row;
		rt_cfi_rule r = {.kind = RT_CFI_OTHER};
		if (rt_eh_src_of(ip - 1, &src, &lo, &hi) && rt_eh_find(&src, ip - 1, DW_RBP, &row) == 0)
			rt_cfi_rule_of(&row, &r);
		if (r.kind == RT_CFI_END) {
			w->end_seen = 1;
			return;
		}
		if (r.kind != RT_CFI_SP && r.kind != RT_CFI_BP)
			return;
		uintptr_t cfa = (r.kind == RT_CFI_SP ? sp : bp) + (uintptr_t)(intptr_t)r.cfa_off;
		uintptr_t ra = *(const uintptr_t *)(cfa + (uintptr_t)(intptr_t)r.ra_off);
		uintptr_t nbp = r.rbp_off ? *(const uintptr_t *)(cfa + (uintptr_t)(intptr_t)r.rbp_off) : bp;
		if (unw_step(&c) <= 0)
			fail_msg("frame %d: libunwind ends where the rule goes on", depth);
		unw_get_reg(&c, UNW_REG_IP, &ip);
		unw_get_reg(&c, UNW_REG_SP, &sp);
		unw_get_reg(&c, UNW_X86_64_RBP, &bp);
		if (ip != ra || sp != cfa || bp != nbp)
			fail_msg("frame %d: libunwind ip %#lx sp %#lx rbp %#lx, rule %#lx %#lx %#lx", depth,
				 (unsigned long)ip, (unsigned long)sp, (unsigned long)bp, (unsigned long)ra,
				 (unsigned long)cfa, (unsigned long)nbp);
		w->frames++;
	}
}

/* A chain of frames of both kinds: rsp-based (plain) and rbp-based
 * (alloca of a variable size forces a frame pointer). */
static __attribute__((noinline)) int chain(int n, walk_tally *w);

static __attribute__((noinline)) int chain_alloca(int n, walk_tally *w)
{
	volatile char *p = alloca((size_t)n * 16 + 1);
	p[0] = (char)n;
	return chain(n - 1, w) + p[0];
}

static __attribute__((noinline)) int chain(int n, walk_tally *w)
{
	if (n <= 0) {
		unwind_compare(w);
		return 0;
	}
	int r = (n % 3 == 0) ? chain_alloca(n, w) : chain(n - 1, w);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

static void test_libunwind_chain(void **state)
{
	(void)state;
	walk_tally w = {0};
	chain(30, &w);
	print_message("libunwind chain: %d frames compared, outermost frame %s\n", w.frames,
		      w.end_seen ? "reached" : "not reached");
	assert_true(w.frames >= 30);
	assert_true(w.end_seen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_libstdcxx),
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_non_pie),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_libunwind_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
