/* A unit's line table, decoded from .debug_line by the resolver itself.
 *
 * libdw's dwarf_getsrclines keeps every row with all its registers,
 * allocating and sorting them one by one (80 ms for the 780,000 rows of
 * one big unit), where a lookup needs a row's address, line and file.
 * This decoder keeps those, ordered as libdw orders its rows (by address,
 * an end of sequence first, then in program order), and a lookup picks
 * the row dwfl_module_getsrc picks: the last one at or below the address,
 * none when that one ends a sequence. File names are joined with their
 * directories as libdw joins them.
 *
 * Whatever this decoder does not take exactly as libdw does (an unusual
 * form or opcode, a value wider than libdw's fields, a big-endian or
 * relocatable file, malformed data) makes rt_resolve_lines_load fail, and the
 * caller asks libdw for that unit instead: the answers are libdw's
 * either way. */
#include "resolve/resolve_int.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#define END_BIT 0x80000000u /* in rt_lrow.file: the row ends a sequence */

typedef struct rt_lrow {
	uint64_t addr;
	int32_t line;
	uint32_t file;
} rt_lrow;

/* A sequence of rows, in order; rows[start] is first. */
typedef struct rt_lseq {
	const rt_lrow *first;
	size_t start, n;
} rt_lseq;

struct rt_rlines {
	rt_lrow *rows;  /* in program order */
	rt_lseq *seqs;  /* sorted: the rows in libdw's order, one after the other */
	size_t nseqs;
	const rt_lseq *hint_seq; /* where the last lookup ended */
	size_t hint;
	const char **files; /* by the rows' file index */
	size_t nfiles;
};

/* A bounded little-endian reader; any overrun or value out of range
 * sets bad, and the unit goes to libdw. */
typedef struct rd {
	const unsigned char *p, *end;
	bool bad;
} rd;

static uint64_t rd_uleb(rd *d)
{
	uint64_t v = 0;
	for (unsigned shift = 0; d->p < d->end && shift < 64; shift += 7) {
		unsigned char b = *d->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	d->bad = true;
	return 0;
}

static int64_t rd_sleb(rd *d)
{
	uint64_t v = 0;
	for (unsigned shift = 0; d->p < d->end && shift < 64; shift += 7) {
		unsigned char b = *d->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (shift + 7 < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << (shift + 7);
			return (int64_t)v;
		}
	}
	d->bad = true;
	return 0;
}

/* libdw reads most operands into 32-bit variables */
static uint32_t rd_uleb32(rd *d)
{
	uint64_t v = rd_uleb(d);
	if (v > UINT32_MAX)
		d->bad = true;
	return (uint32_t)v;
}

static uint64_t rd_fixed(rd *d, unsigned n)
{
	uint64_t v = 0;
	if ((size_t)(d->end - d->p) < n) {
		d->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)d->p[i] << (8 * i);
	d->p += n;
	return v;
}

static const char *rd_cstr(rd *d)
{
	const unsigned char *nul = d->p < d->end ? memchr(d->p, 0, (size_t)(d->end - d->p)) : NULL;
	if (!nul) {
		d->bad = true;
		return NULL;
	}
	const char *s = (const char *)d->p;
	d->p = nul + 1;
	return s;
}

/* The unit header, as far as the program needs it. */
typedef struct lhdr {
	unsigned version, offset_size, addr_size, min_len, line_range, opcode_base;
	int line_base;
	uint8_t default_is_stmt;
	const unsigned char *std_len; /* std_len[op] for 0 < op < opcode_base */
	const char *comp_dir;
} lhdr;

/* A string of a directory or file entry (DWARF 5): DW_FORM_string, strp
 * or line_strp, as dwarf_formstring reads them. */
static const char *form_string(const rt_rmod *m, const lhdr *h, unsigned form, rd *d)
{
	if (form == DW_FORM_string)
		return rd_cstr(d);
	const rt_rsec *s = form == DW_FORM_line_strp ? &m->line_str : form == DW_FORM_strp ? &m->str : NULL;
	uint64_t off = rd_fixed(d, h->offset_size);
	if (!s || !s->p || d->bad || off >= s->n || !memchr(s->p + off, 0, s->n - off)) {
		d->bad = true;
		return NULL;
	}
	return (const char *)s->p + off;
}

/* An entry's value of a form libdw reads with dwarf_formudata; others
 * (MD5, sizes) are skipped by their length. */
static uint64_t form_value(unsigned form, rd *d)
{
	switch (form) {
	case DW_FORM_data1: return rd_fixed(d, 1);
	case DW_FORM_data2: return rd_fixed(d, 2);
	case DW_FORM_data4: return rd_fixed(d, 4);
	case DW_FORM_data8: return rd_fixed(d, 8);
	case DW_FORM_udata: return rd_uleb(d);
	case DW_FORM_data16: rd_fixed(d, 8); rd_fixed(d, 8); return UINT64_MAX;
	case DW_FORM_block: {
		uint64_t n = rd_uleb(d);
		if (n > (size_t)(d->end - d->p))
			d->bad = true;
		else
			d->p += n;
		return UINT64_MAX;
	}
	default: d->bad = true; return UINT64_MAX;
	}
}

/* dir + "/" + name as libdw joins them: absolute names alone, no
 * directory (DWARF < 5 without DW_AT_comp_dir) leaves the name alone. */
static const char *join_path(rt_arena *a, const char *dir, const char *name)
{
	if (name[0] == '/' || !dir)
		return name;
	size_t dl = strlen(dir), nl = strlen(name);
	char *p = rt_arena_alloc(a, dl + nl + 2);
	memcpy(p, dir, dl);
	p[dl] = '/';
	memcpy(p + dl + 1, name, nl + 1);
	return p;
}

typedef struct lform {
	unsigned n, path, index; /* entry formats, which one is the path, the directory */
	unsigned forms[256];
} lform;

static void read_formats(rd *d, lform *f, bool need_index)
{
	f->n = (unsigned)rd_fixed(d, 1);
	f->path = f->index = UINT32_MAX;
	for (unsigned i = 0; i < f->n && !d->bad; i++) {
		uint64_t desc = rd_uleb(d), form = rd_uleb(d);
		if (desc > 0xffff || form > 0xffff) /* libdw truncates them */
			d->bad = true;
		f->forms[i] = (unsigned)form;
		if (desc == DW_LNCT_path)
			f->path = i;
		else if (desc == DW_LNCT_directory_index)
			f->index = i;
	}
	if (f->n && (f->path == UINT32_MAX || (need_index && f->index == UINT32_MAX)))
		d->bad = true;
}

/* One DWARF 5 entry: its path and directory index. */
static const char *read_entry(const rt_rmod *m, const lhdr *h, const lform *f, rd *d, uint64_t *index)
{
	const char *path = NULL;
	for (unsigned i = 0; i < f->n && !d->bad; i++) {
		if (i == f->path)
			path = form_string(m, h, f->forms[i], d);
		else if (i == f->index)
			*index = form_value(f->forms[i], d);
		else
			form_value(f->forms[i], d);
	}
	if (!path)
		d->bad = true;
	return path;
}

static void dirs_and_files_v5(rt_arena *a, const rt_rmod *m, lhdr *h, rd *d, rt_rlines *l)
{
	lform f;
	read_formats(d, &f, false);
	uint64_t n = rd_uleb(d);
	if (d->bad || (f.n == 0 && n) || (f.n && n > (size_t)(d->end - d->p) / f.n)) {
		d->bad = true;
		return;
	}
	const char **dirs = rt_xmalloc((n ? n : 1) * sizeof *dirs);
	size_t ndirs = 0;
	for (; ndirs < n && !d->bad; ndirs++) {
		uint64_t unused;
		dirs[ndirs] = read_entry(m, h, &f, d, &unused);
	}
	read_formats(d, &f, true);
	n = d->bad ? 0 : rd_uleb(d);
	if (d->bad || (f.n == 0 && n) || (f.n && n > (size_t)(d->end - d->p) / f.n))
		d->bad = true;
	l->files = rt_arena_alloc(a, (n ? n : 1) * sizeof *l->files);
	l->files[0] = "???"; /* libdw's name when there is no entry 0 */
	l->nfiles = n ? n : 1;
	for (uint64_t i = 0; i < n && !d->bad; i++) {
		uint64_t dir = UINT64_MAX;
		const char *name = read_entry(m, h, &f, d, &dir);
		if (d->bad || dir >= ndirs)
			d->bad = true;
		else
			l->files[i] = join_path(a, dirs[dir], name);
	}
	free(dirs);
}

/* DWARF 2-4: directory 0 is the unit's DW_AT_comp_dir, file 0 does not
 * exist ("???"), both lists end with an empty string. */
static void dirs_and_files_v4(rt_arena *a, lhdr *h, rd *d, rt_rlines *l)
{
	size_t ndirs = 1, nfiles = 1, cdirs = 16, cfiles = 16;
	const char **dirs = rt_xmalloc(cdirs * sizeof *dirs);
	dirs[0] = h->comp_dir;
	while (d->p < d->end && *d->p && !d->bad) {
		const char *dir = rd_cstr(d);
		RT_PUSH(dirs, ndirs, cdirs, dir);
	}
	const char **files = rt_xmalloc(cfiles * sizeof *files);
	files[0] = "???";
	for (rd_fixed(d, 1); d->p < d->end && *d->p && !d->bad;) {
		const char *name = rd_cstr(d);
		uint64_t dir = rd_uleb(d);
		rd_uleb(d); /* mtime */
		rd_uleb(d); /* length */
		if (!d->bad && dir >= ndirs)
			d->bad = true;
		if (d->bad)
			break;
		const char *path = join_path(a, dirs[dir], name);
		RT_PUSH(files, nfiles, cfiles, path);
	}
	if (d->p >= d->end || *d->p)
		d->bad = true;
	d->p++;
	l->files = rt_arena_alloc(a, nfiles * sizeof *files);
	memcpy(l->files, files, nfiles * sizeof *files);
	l->nfiles = nfiles;
	free(files);
	free(dirs);
}

/* The header up to the program; d is left at the program's start. */
static bool read_header(rt_arena *a, const rt_rmod *m, lhdr *h, rd *d, rt_rlines *l)
{
	uint64_t len = rd_fixed(d, 4);
	h->offset_size = 4;
	if (len == 0xffffffffu) {
		len = rd_fixed(d, 8);
		h->offset_size = 8;
	}
	if (d->bad || len > (size_t)(d->end - d->p))
		return false;
	d->end = d->p + len;
	h->version = (unsigned)rd_fixed(d, 2);
	if (h->version < 2 || h->version > 5 ||
	    (h->version >= 5 && (rd_fixed(d, 1) != h->addr_size || rd_fixed(d, 1) != 0)))
		return false;
	uint64_t hlen = rd_fixed(d, h->offset_size);
	const unsigned char *start = d->p;
	h->min_len = (unsigned)rd_fixed(d, 1);
	if (h->version >= 4 && rd_fixed(d, 1) != 1)
		return false; /* VLIW op_index: libdw's, not ours */
	h->default_is_stmt = (uint8_t)rd_fixed(d, 1);
	h->line_base = (int8_t)rd_fixed(d, 1);
	h->line_range = (unsigned)rd_fixed(d, 1);
	h->opcode_base = (unsigned)rd_fixed(d, 1);
	if (d->bad || h->default_is_stmt > 1 || h->opcode_base == 0 || h->line_range == 0 ||
	    (size_t)(d->end - d->p) < h->opcode_base - 1)
		return false;
	h->std_len = d->p - 1;
	d->p += h->opcode_base - 1;
	if (h->version >= 5)
		dirs_and_files_v5(a, m, h, d, l);
	else
		dirs_and_files_v4(a, h, d, l);
	return !d->bad && hlen <= (size_t)(d->end - start) && d->p == start + hlen;
}

/* The state machine's registers that decide a row, and those whose
 * width libdw checks when it stores one (a row libdw cannot store makes
 * it reject the whole table). */
typedef struct lstate {
	uint64_t addr;
	int64_t line;
	uint32_t file, column, isa, discriminator;
	uint8_t is_stmt;
} lstate;

typedef struct lrows {
	rt_lrow *v;
	size_t n, cap;
} lrows;

static void reset(lstate *s, const lhdr *h)
{
	memset(s, 0, sizeof *s);
	s->file = 1;
	s->line = 1;
	s->is_stmt = h->default_is_stmt;
}

/* Adds a row. A row at the address of the previous one in the same
 * sequence replaces it: after sorting, a lookup would only ever find the
 * later one (an end of sequence is kept, it sorts first). */
static bool emit(lrows *rows, const lstate *s, bool end)
{
	if (s->line < INT32_MIN || s->line > INT32_MAX || s->column > 0xffff || s->isa > 0xff ||
	    s->discriminator > 0xffffff || s->is_stmt > 1 || s->file >= END_BIT)
		return false;
	rt_lrow row = {s->addr, (int32_t)s->line, s->file | (end ? END_BIT : 0)};
	rt_lrow *last = rows->n ? &rows->v[rows->n - 1] : NULL;
	if (!end && last && last->addr == row.addr && !(last->file & END_BIT))
		*last = row;
	else
		RT_PUSH(rows->v, rows->n, rows->cap, row);
	return true;
}

/* An extended opcode; its length is one byte in libdw. */
static bool extended(const lhdr *h, lstate *s, rd *d, lrows *rows)
{
	if (d->end - d->p < 2)
		return false;
	unsigned len = *d->p++, op = *d->p++;
	if ((size_t)(d->end - d->p) + 1 < len)
		return false;
	switch (op) {
	case DW_LNE_end_sequence:
		if (!emit(rows, s, true))
			return false;
		reset(s, h);
		return true;
	case DW_LNE_set_address:
		s->addr = rd_fixed(d, h->addr_size);
		return h->addr_size == 4 || h->addr_size == 8;
	case DW_LNE_set_discriminator:
		if (h->std_len[op] != 1)
			return false;
		s->discriminator = rd_uleb32(d);
		return true;
	default: /* DW_LNE_define_file and the vendors': libdw's */
		return false;
	}
}

/* A standard opcode below opcode_base. */
static bool standard(const lhdr *h, lstate *s, rd *d, lrows *rows, unsigned op)
{
	static const unsigned char nargs[] = {0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
	if (op > DW_LNS_set_isa) { /* unknown: skip its operands */
		for (unsigned i = h->std_len[op]; i > 0 && !d->bad; i--)
			rd_uleb(d);
		return !d->bad;
	}
	if (h->std_len[op] != nargs[op])
		return false;
	switch (op) {
	case DW_LNS_copy:
		if (!emit(rows, s, false))
			return false;
		s->discriminator = 0;
		break;
	case DW_LNS_advance_pc: s->addr += (uint32_t)(h->min_len * rd_uleb32(d)); break;
	case DW_LNS_advance_line: {
		int64_t v = rd_sleb(d);
		if (v < INT32_MIN || v > INT32_MAX)
			return false;
		s->line += v;
		break;
	}
	case DW_LNS_set_file: s->file = rd_uleb32(d); break;
	case DW_LNS_set_column: s->column = rd_uleb32(d); break;
	case DW_LNS_negate_stmt: s->is_stmt = (uint8_t)(1 - s->is_stmt); break;
	case DW_LNS_const_add_pc:
		s->addr += (uint32_t)(h->min_len * ((255 - h->opcode_base) / h->line_range));
		break;
	case DW_LNS_fixed_advance_pc: s->addr += rd_fixed(d, 2); break;
	case DW_LNS_set_isa: s->isa = rd_uleb32(d); break;
	default: break; /* basic block, prologue end, epilogue begin */
	}
	return !d->bad;
}

static bool run_program(const lhdr *h, rd *d, lrows *rows)
{
	lstate s;
	reset(&s, h);
	while (d->p < d->end) {
		unsigned op = *d->p++;
		if (op >= h->opcode_base) {
			unsigned adv = op - h->opcode_base;
			s.line += h->line_base + (int)(adv % h->line_range);
			s.addr += (uint32_t)(h->min_len * (adv / h->line_range));
			if (!emit(rows, &s, false))
				return false;
			s.discriminator = 0;
		} else if (op == 0 ? !extended(h, &s, d, rows) : !standard(h, &s, d, rows, op)) {
			return false;
		}
	}
	return true;
}

/* libdw's row order: address, an end of sequence before a row at the
 * same address, program order. */
static bool row_before(const rt_lrow *a, size_t ia, const rt_lrow *b, size_t ib)
{
	if (a->addr != b->addr)
		return a->addr < b->addr;
	if ((a->file & END_BIT) != (b->file & END_BIT))
		return a->file & END_BIT;
	return ia < ib;
}

typedef struct lsort {
	rt_lrow row;
	size_t ord;
} lsort;

static int lsort_cmp(const void *a, const void *b)
{
	const lsort *x = a, *y = b;
	return row_before(&x->row, x->ord, &y->row, y->ord) ? -1 : 1;
}

/* Sorts all rows in libdw's order, when their sequences overlap. */
static void sort_all(lrows *rows)
{
	size_t n = rows->n;
	lsort *tmp = rt_xmalloc((n ? n : 1) * sizeof *tmp);
	for (size_t i = 0; i < n; i++)
		tmp[i] = (lsort){rows->v[i], i};
	qsort(tmp, n, sizeof *tmp, lsort_cmp);
	for (size_t i = 0; i < n; i++)
		rows->v[i] = tmp[i].row;
	free(tmp);
}

static int lseq_cmp(const void *a, const void *b)
{
	const rt_lseq *x = a, *y = b;
	return row_before(x->first, x->start, y->first, y->start) ? -1 : 1;
}

/* The sequences of rows (split after each end of sequence), or false
 * when one of them is not in order by itself. */
static bool split_sequences(const lrows *rows, rt_rlines *l)
{
	size_t cap = 16;
	l->seqs = rt_xmalloc(cap * sizeof *l->seqs);
	for (size_t i = 0, start = 0; i < rows->n; i++) {
		if (i > start && row_before(&rows->v[i], i, &rows->v[i - 1], i - 1))
			return false;
		if ((rows->v[i].file & END_BIT) || i + 1 == rows->n) {
			rt_lseq q = {&rows->v[start], start, i + 1 - start};
			RT_PUSH(l->seqs, l->nseqs, cap, q);
			start = i + 1;
		}
	}
	return true;
}

/* Puts the rows in libdw's order without moving them: sequences (each in
 * order by itself) sorted by their first row, which is that order when
 * they do not overlap, the common case (a compiler emits one sequence
 * per code section, in any order). Overlapping ones are sorted row by
 * row into a single sequence. libdw then marks the last row as an end of
 * sequence. */
static void order_rows(lrows *rows, rt_rlines *l)
{
	bool split = split_sequences(rows, l);
	if (split && l->nseqs > 1)
		qsort(l->seqs, l->nseqs, sizeof *l->seqs, lseq_cmp);
	for (size_t i = 1; split && i < l->nseqs; i++) {
		const rt_lseq *a = &l->seqs[i - 1], *b = &l->seqs[i];
		if (row_before(b->first, b->start, &a->first[a->n - 1], a->start + a->n - 1))
			split = false;
	}
	if (!split) {
		sort_all(rows);
		l->nseqs = 1;
		l->seqs[0] = (rt_lseq){rows->v, 0, rows->n};
	}
	if (rows->n) {
		rt_lseq *last = &l->seqs[l->nseqs - 1];
		rows->v[last->start + last->n - 1].file |= END_BIT;
	}
}

/* .debug_line, .debug_str and .debug_line_str of the file libdw reads
 * the module's DWARF from (sections it decompressed are read
 * decompressed), once per module. */
static bool load_sections(rt_rmod *m, Dwarf *dw)
{
	if (m->secs_state)
		return m->secs_state == 1;
	m->secs_state = 2;
	Elf *elf = dwarf_getelf(dw);
	GElf_Ehdr eh;
	size_t shstrndx;
	const unsigned char one = 1;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_ident[EI_DATA] != (*(const char *)&one ? ELFDATA2LSB : ELFDATA2MSB) ||
	    eh.e_type == ET_REL || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		rt_rsec *s = !strcmp(name, ".debug_line")       ? &m->line
			     : !strcmp(name, ".debug_str")      ? &m->str
			     : !strcmp(name, ".debug_line_str") ? &m->line_str
								: NULL;
		Elf_Data *data;
		if (!s || s->p || (sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS ||
		    !(data = elf_getdata(scn, NULL)) || !data->d_buf)
			continue;
		s->p = data->d_buf;
		s->n = data->d_size;
	}
	if (!m->line.p)
		return false;
	m->secs_state = 1;
	return true;
}

/* The unit's DW_AT_stmt_list, address size and comp_dir; units other
 * than plain compile units (split, skeleton, type) are libdw's. */
static bool unit_info(Dwarf_Die *cudie, uint64_t *off, lhdr *h)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;
	Dwarf_Half version;
	uint8_t unit_type, asize, osize;
	Dwarf_Die cu;
	if (dwarf_tag(cudie) != DW_TAG_compile_unit ||
	    dwarf_cu_info(cudie->cu, &version, &unit_type, NULL, NULL, NULL, NULL, NULL) ||
	    (unit_type != DW_UT_compile && version >= 5) ||
	    !dwarf_diecu(cudie, &cu, &asize, &osize) ||
	    dwarf_formudata(dwarf_attr(cudie, DW_AT_stmt_list, &attr), &v))
		return false;
	*off = v;
	h->addr_size = asize;
	h->comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	return true;
}

rt_rlines *rt_resolve_lines_load(rt_rmod *m, Dwarf_Die *cudie)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(m->mod, &bias);
	lhdr h = {0};
	uint64_t off;
	if (!dw || !load_sections(m, dw) || !unit_info(cudie, &off, &h) || off >= m->line.n)
		return NULL;
	rd d = {m->line.p + off, m->line.p + m->line.n, false};
	rt_rlines *l = rt_arena_alloc(&m->arena, sizeof *l);
	memset(l, 0, sizeof *l);
	lrows rows = {0};
	bool ok = read_header(&m->arena, m, &h, &d, l);
	if (ok) { /* a row takes an opcode byte at least: untouched pages cost nothing */
		rows.cap = (size_t)(d.end - d.p) + 1;
		rows.v = rt_xmalloc(rows.cap * sizeof *rows.v);
	}
	if (!ok || !run_program(&h, &d, &rows)) {
		free(rows.v);
		return NULL;
	}
	l->rows = rows.v = rt_xrealloc(rows.v, (rows.n ? rows.n : 1) * sizeof *rows.v);
	order_rows(&rows, l);
	for (size_t i = 0; i < l->nseqs; i++)
		l->seqs[i].first = l->rows + l->seqs[i].start;
	l->hint_seq = l->nseqs ? l->seqs : NULL;
	return l;
}

void rt_resolve_lines_free(rt_rlines *l)
{
	if (l) {
		free(l->rows);
		free(l->seqs);
	}
}

/* Lookups come in address order: the row of the last one, or one of the
 * next few, is most often the answer. */
static bool find_near(const rt_rlines *l, uint64_t pc, size_t *row)
{
	const rt_lseq *q = l->hint_seq;
	size_t i = l->hint;
	if (!q || q->first[i].addr > pc)
		return false;
	for (size_t k = 0; k < 8; k++, i++) {
		if (i + 1 == q->n && q + 1 < l->seqs + l->nseqs && q[1].first->addr <= pc)
			return false; /* in a later sequence */
		if (i + 1 == q->n || q->first[i + 1].addr > pc) {
			*row = i;
			return true;
		}
	}
	return false;
}

bool rt_resolve_lines_find(rt_rlines *l, uint64_t pc, uint32_t *file, int *line)
{
	size_t i;
	if (!find_near(l, pc, &i)) {
		size_t k = RT_COUNT_UPTO(l->seqs, l->nseqs, first->addr, pc);
		if (!k)
			return false;
		l->hint_seq = &l->seqs[k - 1]; /* it starts at or below pc */
		i = RT_COUNT_UPTO(l->hint_seq->first, l->hint_seq->n, addr, pc) - 1;
	}
	l->hint = i;
	const rt_lrow *row = &l->hint_seq->first[i];
	if (row->file & END_BIT)
		return false;
	*file = row->file;
	*line = row->line;
	return true;
}

size_t rt_resolve_lines_nfiles(const rt_rlines *l)
{
	return l->nfiles;
}

const char *rt_resolve_lines_file(const rt_rlines *l, uint64_t index)
{
	return index < l->nfiles ? l->files[index] : NULL;
}
