/* The leak check's internal interface. The check is four files, each
 * calling only those below it:
 *
 *   leak.c        the check's course at exit (entries, freeres, verdicts
 *                 into the trace)
 *   leak_roots.c  what is a root and what is not; scans the roots
 *   leak_mark.c   the blocks, marking from a root, memcheck's heuristics,
 *                 the cliques of lost blocks
 *   leak_stop.c   stopping the other threads; the mappings
 *
 * All of it runs in the exiting thread with the heap table locked: it
 * allocates nothing (rt_pages) and works on one `scan`. */
#ifndef RT_LEAK_INT_H
#define RT_LEAK_INT_H

#include "heap.h"

#include <setjmp.h>
#include <ucontext.h>

#define WORD sizeof(uintptr_t)
#define MAX_PARKED 16384u
#if defined(__x86_64__)
#define REDZONE 128u
#define NREGS NGREG
#elif defined(__aarch64__)
#define REDZONE 0u
#define NREGS 32
#else
#define REDZONE 0u
#define NREGS 0
#endif

enum { ST_UNREACHED, ST_INDIRECT, ST_POSSIBLE, ST_REACHABLE };
/* the LEAK records' kinds and heuristics are format/trace_format.h's */
enum { H_COUNT = RT_TF_HEUR_MULTIPLE + 1 };

/* A thread stopped by the check, with its registers. */
typedef struct park_slot {
	_Atomic int ready;
	int tid;
	uintptr_t sp;
	uintptr_t regs[NREGS + 1];
} park_slot;

/* The exiting thread as the program left it when it called into the
 * tracer (exit's handler, _exit): its stack pointer before the call, and
 * the registers live across a call (the callee-saved ones). The tracer's
 * own frames below that stack pointer are no root: their unwritten slots
 * hold whatever the program's deeper calls left there. */
#if defined(__x86_64__)
#define ENTRY_REGS 6 /* rbx, rbp, r12-r15 */
#else
#define ENTRY_REGS (NREGS + 1)
#endif
typedef struct entry_state {
	uintptr_t sp;
	uintptr_t regs[ENTRY_REGS];
} entry_state;

typedef struct lblk {
	uintptr_t addr;
	uint64_t size, bt, index, indirect;
	uint8_t fn, state, heur;
} lblk;

typedef struct vma {
	uintptr_t lo, hi;
	uint8_t r, w, x, file;
	uint32_t path; /* offset of the path in the maps text, 0: none */
} vma;

typedef struct range {
	uintptr_t lo, hi;
} range;

/* Everything the scan works with; one instance, in the exiting thread. */
typedef struct scan {
	lblk *b;
	uintptr_t *starts;
	size_t n, cap;
	uintptr_t lo, hi; /* span of all blocks */
	uint32_t *stack;
	size_t top;
	char *maps;
	size_t maps_len, maps_cap;
	vma *v;
	size_t nv, cv;
	range *ex;
	size_t nex, cex;
	int clique; /* -1: marking from roots */
	uintptr_t alloc_base; /* load address of the module malloc is in */
	range alloc[4];  /* writable segments of the allocator's module */
	size_t nalloc;
	bool in_alloc;   /* the root range being scanned is one of them */
	uintptr_t self_sp;
	uint8_t buf[65536];
} scan;

/* leak_stop.c */
uint64_t rt_leak_now_us(void);
void rt_leak_save_regs(park_slot *s, const ucontext_t *uc);
/* Stops every other thread (parked for good); false: none stopped (no
 * free signal, or no list of the threads). */
bool rt_leak_stop_threads(void);
/* Lets the threads rt_leak_stop_threads stopped go on (a check on
 * demand). */
void rt_leak_resume_threads(void);
/* Why rt_leak_stop_threads stopped none: the trace's message. */
const char *rt_leak_stop_why(void);
/* The leak check's descriptor for the list of threads (fdres.h). */
void rt_leak_reserve_tasks(void);
/* Appends s to the NUL-terminated buf of cap bytes, *n long (messages
 * without stdio, which may allocate). */
void rt_leak_cat(char *buf, size_t cap, size_t *n, const char *s);
/* The parked threads' slots (those with ready set are filled), the
 * memory they are in (MAX_PARKED slots), and how many were taken. */
park_slot *rt_leak_parked(unsigned *n);
/* /proc/self/maps into s->maps and s->v (sorted by address). */
bool rt_leak_read_maps(scan *s);
const vma *rt_leak_vma_of(const scan *s, uintptr_t a);
/* The first mapping ending above a (it may start above a); NULL: none. */
const vma *rt_leak_vma_from(const scan *s, uintptr_t a);
/* Whether the n bytes at a (1 if n is 0) are in readable mappings: the
 * pages the program made inaccessible are skipped, as memcheck skips
 * them, and a pointer into them is no pointer. */
bool rt_leak_readable(const scan *s, uintptr_t a, size_t n);
const char *rt_leak_path_of(const scan *s, const vma *v);
/* A fault (SIGSEGV, SIGBUS) jumps to env until rt_leak_unguard, which
 * gives the address of the last fault. */
void rt_leak_guard(sigjmp_buf *env);
uintptr_t rt_leak_unguard(void);
/* Reads memory that may be gone: false instead of a fault. */
bool rt_leak_safe_read(void *dst, uintptr_t src, size_t n);

/* leak_mark.c */
/* Copies the live-block table into s, in address order. */
bool rt_leak_collect_blocks(scan *s);
/* The block v points into, -1: none. */
long rt_leak_find_block(const scan *s, uintptr_t v);
/* Marks from a root range (read page by page where a read fails) and
 * from registers. */
void rt_leak_scan_range(scan *s, uintptr_t lo, uintptr_t hi);
void rt_leak_scan_regs(scan *s, const uintptr_t *regs, size_t n);
/* After the roots: the lost blocks' cliques. */
void rt_leak_find_cliques(scan *s);
int rt_leak_kind(const lblk *b);

/* leak.c: a check on demand (leak_live.c): the threads stopped, the
 * blocks classified, the threads resumed; the scan (rt_leak_scan_free
 * gives it back) or NULL, with the reason written to the trace. */
scan *rt_leak_check_live(uint64_t *us);
void rt_leak_scan_free(scan *s);

/* leak_roots.c: excludes what is no root, then scans the roots: root
 * mappings, the exiting thread's (self) and the parked threads'
 * registers. */
void rt_leak_scan_roots(scan *s, const entry_state *self);

#endif
