/* A reader of call-frame information from memory: .eh_frame_hdr's
 * binary search table, .eh_frame's CIEs and FDEs, and the DW_CFA_*
 * program of one FDE run up to an address. It answers the questions a
 * stack walk asks (where the caller's frame starts, where the return
 * address and the frame pointer were saved) and leaves every other
 * register alone. It reads only the two memory views it is given, each
 * read bounds-checked; it allocates nothing, takes no lock and makes no
 * system call, so the tracer calls it from inside malloc. */
#ifndef RT_EHFRAME_H
#define RT_EHFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Readable memory: addresses [lo, hi) at base + (address - lo). Inside
 * a process base is lo itself; a test or a fuzzer maps a file's bytes
 * or its input at any address. */
typedef struct rt_eh_mem {
	const uint8_t *base;
	uint64_t lo, hi;
} rt_eh_mem;

/* One module's call-frame information: its .eh_frame_hdr (the
 * PT_GNU_EH_FRAME segment) and the loaded segment holding .eh_frame. */
typedef struct rt_eh_src {
	rt_eh_mem hdr, frame;
} rt_eh_src;

/* A register's rule. */
enum rt_eh_rule {
	RT_EH_UNSPEC,    /* no rule given by the CIE or the FDE */
	RT_EH_UNDEF,     /* DW_CFA_undefined: no value (the outermost frame's RA) */
	RT_EH_SAME,      /* DW_CFA_same_value */
	RT_EH_OFFSET,    /* saved at CFA + off */
	RT_EH_OTHER,     /* in a register, a value, an expression */
};

typedef struct rt_eh_reg {
	uint8_t rule; /* enum rt_eh_rule */
	int64_t off;  /* RT_EH_OFFSET */
} rt_eh_reg;

/* The row of the CFA table at one address. */
typedef struct rt_eh_row {
	uint64_t start, end;  /* the FDE's addresses */
	bool signal;          /* 'S' augmentation: a signal trampoline */
	bool cfa_expr;        /* the CFA is a DWARF expression */
	unsigned cfa_reg;     /* otherwise: CFA = cfa_reg + cfa_off */
	int64_t cfa_off;
	unsigned ra_reg;      /* the CIE's return address column */
	rt_eh_reg ra, fp;     /* rules of ra_reg and of the frame pointer */
} rt_eh_row;

/* The row for pc (an address in the views' space) with fp_reg's rule as
 * row->fp. 0 when found; -1 when no FDE covers pc or the information is
 * malformed or beyond what the reader interprets (then nothing is known:
 * the caller needs another unwinder). */
int rt_eh_find(const rt_eh_src *s, uint64_t pc, unsigned fp_reg, rt_eh_row *row);

/* The address .eh_frame_hdr gives for .eh_frame; false if it has none. */
bool rt_eh_frame_of(const rt_eh_mem *hdr, uint64_t *frame);

/* The loaded module holding pc, from dl_iterate_phdr: its call-frame
 * information in this process's memory and its address range. false when
 * pc is in no module or the module has no PT_GNU_EH_FRAME. */
bool rt_eh_src_of(uintptr_t pc, rt_eh_src *s, uintptr_t *lo, uintptr_t *hi);

#endif
