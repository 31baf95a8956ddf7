/* Stack unwinding from cached call-frame rules. A backtrace on the
 * tracer's hot path costs one small hash lookup per frame: the rule for
 * each return address (where the caller's frame starts and where the
 * return address and rbp were saved) is read once from the module's
 * .eh_frame in memory (ehframe.h) and kept per thread. Stacks the rules cannot
 * describe (signal frames, code without CFI, alternate signal stacks,
 * other architectures) are left to a general unwinder. */
#ifndef RT_CFI_H
#define RT_CFI_H

#include <stdbool.h>
#include <stdint.h>

struct rt_eh_row;

/* A return address's rule, as the walk uses it. */
enum rt_cfi_kind {
	RT_CFI_SP = 1, /* CFA = rsp + cfa_off */
	RT_CFI_BP,     /* CFA = rbp + cfa_off */
	RT_CFI_END,    /* outermost frame: the return address is undefined */
	RT_CFI_SIGNAL, /* signal trampoline: the caller's registers are in a ucontext */
	RT_CFI_OTHER,  /* needs the general unwinder */
};

typedef struct rt_cfi_rule {
	int32_t cfa_off;
	int16_t rbp_off; /* where rbp is saved, from CFA; 0 = unchanged */
	int8_t ra_off;   /* where the return address is saved, from CFA */
	uint8_t kind;    /* enum rt_cfi_kind */
} rt_cfi_rule;

/* The rule of a CFA table row (x86-64). */
void rt_cfi_rule_of(const struct rt_eh_row *row, rt_cfi_rule *r);

/* Fills ips[] with up to max return addresses of the caller's stack,
 * after dropping the innermost `skip` of them (the caller's own frames).
 * *hash receives rt_stack_hash() of the kept addresses. Returns the
 * number kept, or -1 when this stack needs a general unwinder. *same is
 * set when the kept addresses are those of the thread's previous call;
 * ips[] and *hash are then left as they are. */
int rt_cfi_backtrace(uintptr_t *ips, int max, int skip, uint64_t *hash, bool *same);

/* Drops the thread's memo of its last walk: the next walk reads every
 * frame by its rule (for diagnostics and benchmarks). */
void rt_cfi_forget(void);

/* Rules are cached by absolute address: after dlclose, code at an
 * address may be another module's. */
void rt_cfi_invalidate(void);

/* Calls fn with the memory of every thread's memo: its walks hold words
 * read from the stacks (register values: pointers the program may have
 * dropped since), which the leak check must not take for roots. */
void rt_cfi_each_memo(void (*fn)(void *ctx, uintptr_t lo, uintptr_t hi), void *ctx);

/* fork(): the rule reader's lock must not be inherited held. */
void rt_cfi_atfork_prepare(void);
void rt_cfi_atfork_parent(void);
void rt_cfi_atfork_child(void);

/* The stack hash, the same whichever unwinder produced the stack. */
static inline uint64_t rt_stack_hash_step(uint64_t h, uintptr_t ip)
{
	h = (h ^ (uint64_t)ip) * 0xff51afd7ed558ccdULL;
	return h ^ (h >> 32);
}

static inline uint64_t rt_stack_hash_end(uint64_t h, int n)
{
	return (h ^ ((uint64_t)n * 0x9e3779b97f4a7c15ULL)) | 1;
}

#define RT_STACK_HASH_SEED 0x243f6a8885a308d3ULL

static inline uint64_t rt_stack_hash(const uintptr_t *ips, int n)
{
	uint64_t h = RT_STACK_HASH_SEED;
	for (int i = 0; i < n; i++)
		h = rt_stack_hash_step(h, ips[i]);
	return rt_stack_hash_end(h, n);
}

#endif
