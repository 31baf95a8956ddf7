/* Call-frame information read from a module's mapped memory (ehframe.h).
 *
 * Why not libdw: the tracer needs one answer per return address (a few
 * hundred to a few thousand per process), and it needs it inside malloc.
 * libdw brought libelf, libz, liblzma and libbz2 into every traced
 * program (+0.4-1.0 ms of loading per process, and their copies next to
 * the program's own), opened the module's file, allocated, and needed a
 * lock of its own. The loaded PT_GNU_EH_FRAME segment has all of it: the
 * linker's sorted table of (initial location, FDE) pairs gives the FDE in
 * log2(FDEs) steps (12 for libc's 3,713 FDEs, 13 for libstdc++'s 4,867),
 * and one FDE's program is a few dozen bytes: ~1.3 us a rule, read once
 * per return address and thread (bench/README.md, "Per-process cost").
 *
 * Format (LSB 5.0 "Exception Frames", DWARF 4 section 6.4): a CIE holds
 * the alignment factors, the return address column, the augmentation
 * ("zR", "zPLR", "S" for signal trampolines) with the FDEs' pointer
 * encoding, and the initial instructions; an FDE holds its address range
 * and the instructions from there. Running them up to pc gives the row.
 * Only the CFA and two registers are tracked; remember_state keeps up to
 * STATE_DEPTH rows (GCC nests at most a few).
 *
 * Every read goes through a cursor bounded by its view: a length, an
 * offset or a pointer that leads outside makes the lookup fail (-1), and
 * a failed lookup only means "ask the other unwinder" (fuzzed by
 * tests/fuzz/fuzz_ehframe.c). Checked against libdw's dwarf_cfi_addrframe
 * and libunwind's unw_step on real binaries: tests/unit/test_ehframe.c. */
#define _GNU_SOURCE
#include "ehframe.h"

#include <link.h>
#include <string.h>

enum {
	PE_OMIT = 0xff, PE_ULEB = 0x01, PE_U2 = 0x02, PE_U4 = 0x03, PE_U8 = 0x04,
	PE_SLEB = 0x09, PE_S2 = 0x0a, PE_S4 = 0x0b, PE_S8 = 0x0c,
	PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_INDIRECT = 0x80,
};

#define STATE_DEPTH 8

typedef struct cursor {
	const rt_eh_mem *m;
	uint64_t at, end; /* addresses; end <= m->hi */
	bool bad;
} cursor;

static bool readable(const rt_eh_mem *m, uint64_t a, uint64_t n)
{
	return a >= m->lo && a <= m->hi && n <= m->hi - a;
}

static cursor cursor_at(const rt_eh_mem *m, uint64_t at, uint64_t end)
{
	cursor c = {m, at, end, !readable(m, at, 0) || end < at || end > m->hi};
	return c;
}

/* n little-endian bytes (n <= 8); 0 and c->bad past the end. */
static uint64_t get_n(cursor *c, unsigned n)
{
	if (c->bad || n > c->end - c->at) {
		c->bad = true;
		return 0;
	}
	uint64_t v = 0;
	const uint8_t *p = c->m->base + (c->at - c->m->lo);
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	c->at += n;
	return v;
}

static uint64_t get_uleb(cursor *c, bool sign)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		b = (uint8_t)get_n(c, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

#define get_sleb(c) ((int64_t)get_uleb((c), true))

/* A pointer in encoding enc; datarel is relative to `data` (the
 * .eh_frame_hdr). Indirect pointers (personality routines) are skipped
 * over, never followed: 0 is returned for them. */
static uint64_t get_ptr(cursor *c, uint8_t enc, uint64_t data)
{
	uint64_t field = c->at, v;
	switch (enc & 0x0f) {
	case 0: v = get_n(c, 8); break;
	case PE_ULEB: v = get_uleb(c, false); break;
	case PE_U2: v = get_n(c, 2); break;
	case PE_U4: v = get_n(c, 4); break;
	case PE_U8: case PE_S8: v = get_n(c, 8); break;
	case PE_SLEB: v = get_uleb(c, true); break;
	case PE_S2: v = (uint64_t)(int64_t)(int16_t)get_n(c, 2); break;
	case PE_S4: v = (uint64_t)(int64_t)(int32_t)get_n(c, 4); break;
	default: c->bad = true; return 0;
	}
	switch (enc & 0x70) {
	case 0: break;
	case PE_PCREL: v += field; break;
	case PE_DATAREL: v += data; break;
	default: c->bad = true; return 0;
	}
	return (enc & PE_INDIRECT) ? 0 : v;
}

/* ---- CIE and FDE ---- */

typedef struct cie {
	uint64_t code_align;
	int64_t data_align;
	unsigned ra_reg;
	uint8_t fde_enc;
	bool signal, has_z;
	uint64_t insns, end; /* initial instructions */
} cie;

/* The length field of an entry at c->at: *end receives the entry's end,
 * the cursor is left at its id field. false: a terminator or malformed. */
static bool entry_head(cursor *c, uint64_t *end, bool *wide)
{
	uint64_t len = get_n(c, 4);
	*wide = len == 0xffffffffu;
	if (*wide)
		len = get_n(c, 8);
	if (c->bad || len == 0 || len > c->end - c->at)
		return false;
	*end = c->at + len;
	return true;
}

/* The augmentation data, letter by letter ("zPLR", "zRS"...). */
static bool cie_augmentation(cursor *c, const char *aug, size_t n, cie *ci)
{
	if (n == 0)
		return true;
	if (aug[0] != 'z')
		return false; /* "eh" and other pre-'z' forms: not read */
	ci->has_z = true;
	uint64_t len = get_uleb(c, false);
	if (c->bad || len > c->end - c->at)
		return false;
	uint64_t data_end = c->at + len;
	for (size_t i = 1; i < n; i++) {
		switch (aug[i]) {
		case 'R': ci->fde_enc = (uint8_t)get_n(c, 1); break;
		case 'L': get_n(c, 1); break;
		case 'P': get_ptr(c, (uint8_t)get_n(c, 1) & 0x0f, 0); break; /* skipped */
		case 'S': ci->signal = true; break;
		case 'B': case 'G': break; /* AArch64 BTI, MTE */
		default: i = n; break;     /* unknown: the rest is skipped by 'z' */
		}
	}
	c->at = data_end;
	return !c->bad;
}

static bool read_cie(const rt_eh_mem *m, uint64_t at, cie *ci)
{
	cursor c = cursor_at(m, at, m->hi);
	uint64_t end;
	bool wide;
	if (!entry_head(&c, &end, &wide))
		return false;
	c.end = end;
	if (get_n(&c, wide ? 8 : 4) != 0)
		return false; /* not a CIE */
	uint8_t version = (uint8_t)get_n(&c, 1);
	char aug[8];
	size_t n = 0;
	for (uint8_t ch; (ch = (uint8_t)get_n(&c, 1)) != 0 && !c.bad;)
		if (n < sizeof aug)
			aug[n++] = (char)ch;
		else
			return false;
	if (version != 1 && version != 3 && version != 4)
		return false;
	if (version == 4 && (get_n(&c, 1) != 8 || get_n(&c, 1) != 0))
		return false; /* address size, segment selector size */
	*ci = (cie){.fde_enc = 0};
	ci->code_align = get_uleb(&c, false);
	ci->data_align = get_sleb(&c);
	ci->ra_reg = (unsigned)(version == 1 ? get_n(&c, 1) : get_uleb(&c, false));
	if (c.bad || !cie_augmentation(&c, aug, n, ci))
		return false;
	ci->insns = c.at;
	ci->end = end;
	return true;
}

typedef struct fde {
	uint64_t start, end, insns, insns_end;
	cie ci;
} fde;

/* The FDE at `at` (and its CIE); false if it is a CIE or malformed. */
static bool read_fde(const rt_eh_src *s, uint64_t at, fde *f)
{
	cursor c = cursor_at(&s->frame, at, s->frame.hi);
	uint64_t end;
	bool wide;
	if (!entry_head(&c, &end, &wide))
		return false;
	c.end = end;
	uint64_t id_at = c.at, id = get_n(&c, wide ? 8 : 4);
	if (c.bad || id == 0 || id > id_at || !read_cie(&s->frame, id_at - id, &f->ci))
		return false;
	f->start = get_ptr(&c, f->ci.fde_enc, s->hdr.lo);
	uint64_t range = get_ptr(&c, f->ci.fde_enc & 0x0f, 0);
	if (f->ci.has_z) {
		uint64_t len = get_uleb(&c, false);
		if (c.bad || len > c.end - c.at)
			return false;
		c.at += len;
	}
	f->end = f->start + range;
	f->insns = c.at;
	f->insns_end = end;
	return !c.bad && f->end >= f->start;
}

/* ---- the CFA program ---- */

typedef struct state {
	bool cfa_expr;
	unsigned cfa_reg;
	int64_t cfa_off;
	rt_eh_reg reg[2]; /* the return address, the frame pointer */
} state;

typedef struct machine {
	const rt_eh_src *s;
	const fde *f;
	unsigned regno[2];
	state row, init, stack[STATE_DEPTH];
	unsigned depth;
	uint64_t loc, pc;
} machine;

static rt_eh_reg *reg_of(machine *mc, uint64_t r)
{
	for (int i = 0; i < 2; i++)
		if (r == mc->regno[i])
			return &mc->row.reg[i];
	return NULL; /* a register nobody asks about */
}

static void set_reg(machine *mc, uint64_t r, uint8_t rule, int64_t off)
{
	rt_eh_reg *g = reg_of(mc, r);
	if (g)
		*g = (rt_eh_reg){rule, off};
}

static void restore_reg(machine *mc, uint64_t r)
{
	rt_eh_reg *g = reg_of(mc, r);
	if (g)
		*g = mc->init.reg[g - mc->row.reg];
}

/* Scaled by the data alignment factor, wrapping (never undefined). */
static int64_t scaled(const machine *mc, uint64_t v)
{
	return (int64_t)(v * (uint64_t)mc->f->ci.data_align);
}

/* advance_loc*: false once the location passes pc (the row is done). */
static bool advance(machine *mc, uint64_t delta)
{
	mc->loc += delta * mc->f->ci.code_align;
	return mc->loc <= mc->pc;
}

static bool remember(machine *mc, bool push)
{
	if (push) {
		if (mc->depth == STATE_DEPTH)
			return false;
		mc->stack[mc->depth++] = mc->row;
		return true;
	}
	if (mc->depth == 0)
		return false;
	mc->row = mc->stack[--mc->depth];
	return true;
}

/* The CFA instructions (DW_CFA_def_cfa*). 0: done, 1: not one of them,
 * -1: malformed. */
static int cfa_op(machine *mc, cursor *c, uint8_t op)
{
	state *r = &mc->row;
	switch (op) {
	case 0x0c: r->cfa_reg = (unsigned)get_uleb(c, false); r->cfa_off = (int64_t)get_uleb(c, false); r->cfa_expr = false; break;
	case 0x12: r->cfa_reg = (unsigned)get_uleb(c, false); r->cfa_off = scaled(mc, get_uleb(c, true)); r->cfa_expr = false; break;
	case 0x0d: r->cfa_reg = (unsigned)get_uleb(c, false); if (r->cfa_expr) return -1; break;
	case 0x0e: r->cfa_off = (int64_t)get_uleb(c, false); if (r->cfa_expr) return -1; break;
	case 0x13: r->cfa_off = scaled(mc, get_uleb(c, true)); if (r->cfa_expr) return -1; break;
	case 0x0f: {
		uint64_t len = get_uleb(c, false);
		if (c->bad || len > c->end - c->at)
			return -1;
		c->at += len;
		r->cfa_expr = true;
		break;
	}
	default: return 1;
	}
	return 0;
}

/* The extended register instructions. 0: done, -1: malformed or not
 * interpreted. */
static int reg_op(machine *mc, cursor *c, uint8_t op)
{
	uint64_t r = get_uleb(c, false), v;
	switch (op) {
	case 0x05: set_reg(mc, r, RT_EH_OFFSET, scaled(mc, get_uleb(c, false))); break;
	case 0x11: set_reg(mc, r, RT_EH_OFFSET, scaled(mc, get_uleb(c, true))); break;
	case 0x2f: set_reg(mc, r, RT_EH_OFFSET, scaled(mc, 0 - get_uleb(c, false))); break;
	case 0x06: restore_reg(mc, r); break;
	case 0x07: set_reg(mc, r, RT_EH_UNDEF, 0); break;
	case 0x08: set_reg(mc, r, RT_EH_SAME, 0); break;
	case 0x09: get_uleb(c, false); set_reg(mc, r, RT_EH_OTHER, 0); break;
	case 0x14: case 0x15: get_uleb(c, false); set_reg(mc, r, RT_EH_OTHER, 0); break;
	case 0x10: case 0x16:
		v = get_uleb(c, false);
		if (c->bad || v > c->end - c->at)
			return -1;
		c->at += v;
		set_reg(mc, r, RT_EH_OTHER, 0);
		break;
	default: return -1;
	}
	return 0;
}

/* One instruction. 1: go on, 0: the row for pc is reached, -1: stop with
 * an error. */
static int step(machine *mc, cursor *c)
{
	uint8_t op = (uint8_t)get_n(c, 1), low = op & 0x3f;
	switch (op >> 6) {
	case 1: return advance(mc, low) ? 1 : 0;
	case 2: set_reg(mc, low, RT_EH_OFFSET, scaled(mc, get_uleb(c, false))); return 1;
	case 3: restore_reg(mc, low); return 1;
	}
	switch (op) {
	case 0x00: return 1;
	case 0x01: mc->loc = get_ptr(c, mc->f->ci.fde_enc, mc->s->hdr.lo); return mc->loc <= mc->pc ? 1 : 0;
	case 0x02: return advance(mc, get_n(c, 1)) ? 1 : 0;
	case 0x03: return advance(mc, get_n(c, 2)) ? 1 : 0;
	case 0x04: return advance(mc, get_n(c, 4)) ? 1 : 0;
	case 0x0a: case 0x0b: return remember(mc, op == 0x0a) ? 1 : -1;
	case 0x2e: get_uleb(c, false); return 1; /* GNU_args_size */
	}
	int rc = cfa_op(mc, c, op);
	if (rc == 1)
		rc = reg_op(mc, c, op);
	return rc < 0 ? -1 : 1;
}

/* Runs [at, end) until the row for pc; false on an error. */
static bool run(machine *mc, uint64_t at, uint64_t end)
{
	cursor c = cursor_at(&mc->s->frame, at, end);
	while (!c.bad && c.at < c.end) {
		int rc = step(mc, &c);
		if (rc <= 0)
			return rc == 0 && !c.bad;
	}
	return !c.bad;
}

static int row_of(const rt_eh_src *s, const fde *f, uint64_t pc, unsigned fp_reg, rt_eh_row *row)
{
	machine mc = {.s = s, .f = f, .regno = {f->ci.ra_reg, fp_reg}, .loc = f->start, .pc = pc};
	mc.row.cfa_expr = true; /* no CFA until the CIE defines one */
	if (!run(&mc, f->ci.insns, f->ci.end))
		return -1;
	mc.init = mc.row;
	mc.loc = f->start;
	if (!run(&mc, f->insns, f->insns_end))
		return -1;
	*row = (rt_eh_row){f->start, f->end, f->ci.signal, mc.row.cfa_expr, mc.row.cfa_reg,
			   mc.row.cfa_off, f->ci.ra_reg, mc.row.reg[0], mc.row.reg[1]};
	return 0;
}

/* ---- finding the FDE ---- */

typedef struct hdr {
	uint64_t frame, count, table;
	uint8_t table_enc;
} hdr;

static bool read_hdr(const rt_eh_mem *m, hdr *h)
{
	cursor c = cursor_at(m, m->lo, m->hi);
	uint8_t version = (uint8_t)get_n(&c, 1), frame_enc = (uint8_t)get_n(&c, 1);
	uint8_t count_enc = (uint8_t)get_n(&c, 1);
	h->table_enc = (uint8_t)get_n(&c, 1);
	if (c.bad || version != 1 || frame_enc == PE_OMIT)
		return false;
	h->frame = get_ptr(&c, frame_enc, m->lo);
	h->count = count_enc == PE_OMIT ? 0 : get_ptr(&c, count_enc, m->lo);
	h->table = c.at;
	return !c.bad;
}

bool rt_eh_frame_of(const rt_eh_mem *m, uint64_t *frame)
{
	hdr h;
	if (!read_hdr(m, &h))
		return false;
	*frame = h.frame;
	return true;
}

/* The table's last entry whose initial location is <= pc (entries of
 * two signed 4-byte offsets from the header, sorted). */
static bool search_table(const rt_eh_mem *m, const hdr *h, uint64_t pc, uint64_t *fde_at)
{
	if (h->table_enc != (PE_DATAREL | PE_S4) || h->count == 0 ||
	    h->count > (m->hi - h->table) / 8)
		return false;
	uint64_t lo = 0, hi = h->count; /* the answer is in [lo, hi) */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		cursor c = cursor_at(m, h->table + mid * 8, m->hi);
		uint64_t loc = m->lo + (uint64_t)(int64_t)(int32_t)get_n(&c, 4);
		if (loc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	cursor c = cursor_at(m, h->table + lo * 8, m->hi);
	uint64_t loc = m->lo + (uint64_t)(int64_t)(int32_t)get_n(&c, 4);
	*fde_at = m->lo + (uint64_t)(int64_t)(int32_t)get_n(&c, 4);
	return !c.bad && loc <= pc;
}

/* Without a usable table: every entry of .eh_frame in turn. */
static bool scan_frames(const rt_eh_src *s, uint64_t at, uint64_t pc, fde *f)
{
	for (;;) {
		cursor c = cursor_at(&s->frame, at, s->frame.hi);
		uint64_t end;
		bool wide;
		if (!entry_head(&c, &end, &wide))
			return false;
		if (read_fde(s, at, f) && pc >= f->start && pc < f->end)
			return true;
		at = end;
	}
}

int rt_eh_find(const rt_eh_src *s, uint64_t pc, unsigned fp_reg, rt_eh_row *row)
{
	hdr h;
	fde f;
	uint64_t at;
	if (!read_hdr(&s->hdr, &h))
		return -1;
	if (search_table(&s->hdr, &h, pc, &at)) {
		if (!read_fde(s, at, &f) || pc < f.start || pc >= f.end)
			return -1;
	} else if (h.table_enc != (PE_DATAREL | PE_S4) || h.count == 0) {
		if (!scan_frames(s, h.frame, pc, &f))
			return -1;
	} else {
		return -1; /* pc below the first entry */
	}
	return row_of(s, &f, pc, fp_reg, row);
}

/* ---- the loaded modules ---- */

typedef struct find_ctx {
	uintptr_t pc, lo, hi;
	rt_eh_src *s;
	bool found, has_hdr;
} find_ctx;

/* The PT_LOAD segment of info holding address a, as a view. */
static bool load_view(const struct dl_phdr_info *info, uint64_t a, rt_eh_mem *m)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && a >= lo && a - lo < ph->p_filesz) {
			*m = (rt_eh_mem){(const uint8_t *)(uintptr_t)lo, lo, lo + ph->p_filesz};
			return true;
		}
	}
	return false;
}

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	find_ctx *f = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	const ElfW(Phdr) *eh = NULL;
	bool hit = false;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		if (ph->p_type == PT_GNU_EH_FRAME)
			eh = ph;
		if (ph->p_type != PT_LOAD)
			continue;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
		hit |= f->pc >= a && f->pc < b;
	}
	if (!hit)
		return 0;
	f->found = true;
	f->lo = lo;
	f->hi = hi;
	if (eh) {
		uint64_t a = info->dlpi_addr + eh->p_vaddr, frame;
		f->s->hdr = (rt_eh_mem){(const uint8_t *)(uintptr_t)a, a, a + eh->p_memsz};
		f->has_hdr = rt_eh_frame_of(&f->s->hdr, &frame) && load_view(info, frame, &f->s->frame);
	}
	return 1;
}

bool rt_eh_src_of(uintptr_t pc, rt_eh_src *s, uintptr_t *lo, uintptr_t *hi)
{
	find_ctx f = {.pc = pc, .s = s};
	memset(s, 0, sizeof *s);
	dl_iterate_phdr(find_object, &f);
	*lo = f.lo;
	*hi = f.hi;
	return f.found && f.has_hdr;
}
