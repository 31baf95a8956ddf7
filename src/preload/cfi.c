/* Stack unwinding from cached call-frame rules (see cfi.h).
 *
 * On x86-64 nearly every return address in compiled code has a rule of
 * the form "the caller's frame (CFA) is rsp+N or rbp+N; the return address
 * is saved at CFA+r; rbp is saved at CFA+b or unchanged". Such a rule fits
 * in 16 bytes, so each thread keeps a table from return address to rule
 * and a backtrace is a loop of lookups and two loads per frame.
 *
 * A missing rule is read from the module's .eh_frame in memory
 * (ehframe.c: the loaded PT_GNU_EH_FRAME segment's search table, one
 * FDE's program; ~1-3 us), under a lock that guards the list of modules
 * only and is held around no call that allocates or waits on another
 * lock but ld.so's (dl_iterate_phdr, once per module). Anything else
 * (DWARF expressions, registers saved in registers, code without CFI, a
 * frame outside the thread's stack) makes rt_cfi_backtrace() return -1
 * and the caller falls back to a general unwinder, so unusual stacks are
 * as correct as that unwinder makes them; signal frames are read from
 * the kernel's ucontext.
 *
 * This code runs inside malloc: its own memory comes from mmap, and it
 * allocates nothing else. */
#define _GNU_SOURCE
#include "cfi.h"
#include "ehframe.h"
#include "pages.h"

#if defined(__x86_64__)

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/ucontext.h>
#include <unistd.h>

#define RT_CFI_UNLIKELY(x) __builtin_expect(!!(x), 0)

enum { DW_RBP = 6, DW_RSP = 7 };

enum rule_kind {
	RULE_SP = RT_CFI_SP, RULE_BP = RT_CFI_BP, RULE_END = RT_CFI_END,
	RULE_SIGNAL = RT_CFI_SIGNAL, RULE_OTHER = RT_CFI_OTHER,
};

typedef struct rule {
	uintptr_t key;   /* lookup address; 0 = empty slot */
	int32_t cfa_off;
	int16_t rbp_off; /* where rbp is saved, from CFA; 0 = unchanged */
	int8_t ra_off;   /* where the return address is saved, from CFA */
	uint8_t kind;
} rule;

#define MEMO_CAP 320 /* steps of a walk: depth limit + the tracer's frames */

enum walk_end { END_RULE = 1, END_ZERO, END_LIMIT };

typedef struct step {
	uintptr_t key, sp, bp;          /* state before the step */
	const uintptr_t *ra_at, *bp_at; /* the words it read */
	uintptr_t ra, bpv;              /* and their values */
	bool uses_bp, loads_bp;         /* its CFA is rbp-based; it reloads rbp */
	bool need_bp;                   /* the rest of the walk depends on bp */
} step;

typedef struct walk {
	uintptr_t key, sp, bp, hi;
	int end;                  /* enum walk_end, once ended */
	const uintptr_t *zero_at; /* END_ZERO: where the 0 was read */
	bool no_memo;             /* the walk crossed a signal frame or ran on an
				     alternate signal stack: not kept in the memo */
} walk;

/* A stack word a reuse of the memo checks, and the value it had. */
typedef struct check {
	const uintptr_t *at;
	uintptr_t v;
} check;

typedef struct memo {
	int m; /* steps; 0: none */
	walk last; /* state after the last step, and how the walk ended */
	step steps[MEMO_CAP];
	/* the words the steps read that their reuse depends on, packed
	 * (a return address a step, a saved rbp only where the rest of the
	 * walk uses it, the zero that ended it): suffix_holds reads 16
	 * bytes a frame instead of a 64-byte step, half the loads */
	int first[MEMO_CAP + 1]; /* steps[s]'s first word in checks[] */
	int nchecks;
	check checks[2 * MEMO_CAP + 1];
} memo;

typedef struct rule_table {
	memo *memo;   /* the thread's last walk */
	step *fresh;  /* scratch for a new walk's own steps */
	rule *slots;
	size_t mask, count;
	unsigned gen;
	uintptr_t stack_lo, stack_hi; /* this thread's stack */
} rule_table;

typedef struct module {
	uintptr_t lo, hi;
	rt_eh_src src;
	bool has_cfi;
} module;

#define MAX_MODULES 1024

/* The lock and the count among the variables every process writes, the
 * 72 KiB of modules with the cold tables: a rule read in a forked child
 * (a shell's, between its fork and its exec) took the lock on the
 * modules' first page, a copy of that page (a page fault) for each. */
static pthread_mutex_t reader_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t reader_nmods;
static module reader_mods[MAX_MODULES] RT_COLD;

static _Atomic unsigned rules_gen;
static __thread rule_table *t_rules __attribute__((tls_model("initial-exec")));
static pthread_key_t table_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* ---- reading rules from .eh_frame ---- */

/* The module holding pc, found once with dl_iterate_phdr; its call-frame
 * information is read from its mapped memory (ehframe.c). */
static module *module_for(uintptr_t pc)
{
	for (size_t i = 0; i < reader_nmods; i++)
		if (pc >= reader_mods[i].lo && pc < reader_mods[i].hi)
			return &reader_mods[i];
	if (reader_nmods == MAX_MODULES)
		return NULL;
	module *m = &reader_mods[reader_nmods];
	m->has_cfi = rt_eh_src_of(pc, &m->src, &m->lo, &m->hi);
	if (m->hi <= m->lo)
		return NULL; /* not in any loaded object (JIT code) */
	reader_nmods++;
	return m;
}

/* A register's rule: 1 with *off set for "saved at CFA+off", 0 for
 * "unchanged", -1 for undefined, -2 for anything else. An unspecified
 * frame pointer is unchanged (callee-saved in the ABI); an unspecified
 * return address is not known. */
static int reg_rule(const rt_eh_reg *g, bool is_ra, int64_t *off)
{
	switch (g->rule) {
	case RT_EH_OFFSET: *off = g->off; return 1;
	case RT_EH_SAME: return 0;
	case RT_EH_UNDEF: return -1;
	case RT_EH_UNSPEC: return is_ra ? -2 : 0;
	default: return -2;
	}
}

void rt_cfi_rule_of(const rt_eh_row *row, rt_cfi_rule *r)
{
	int64_t ra_off = 0, bp_off = 0;
	*r = (rt_cfi_rule){.kind = row->signal ? RT_CFI_SIGNAL : RT_CFI_OTHER};
	if (row->signal)
		return;
	int ra_kind = reg_rule(&row->ra, true, &ra_off);
	if (ra_kind == -1) {
		r->kind = RT_CFI_END;
		return;
	}
	if (row->cfa_expr || ra_kind != 1 || ra_off < -128 || ra_off > 127)
		return;
	int bp_kind = reg_rule(&row->fp, false, &bp_off);
	if (bp_kind == -2 || (bp_kind == 1 && (bp_off == 0 || bp_off < INT16_MIN || bp_off > INT16_MAX)))
		return;
	if ((row->cfa_reg != DW_RSP && row->cfa_reg != DW_RBP) || row->cfa_off < INT32_MIN ||
	    row->cfa_off > INT32_MAX)
		return;
	r->kind = row->cfa_reg == DW_RSP ? RT_CFI_SP : RT_CFI_BP;
	r->cfa_off = (int32_t)row->cfa_off;
	r->ra_off = (int8_t)ra_off;
	r->rbp_off = bp_kind == 1 ? (int16_t)bp_off : 0; /* undefined rbp: left as is */
}

/* The dynamic linker's code without call-frame information is its entry
 * (_dl_start_user), the outermost frame of the library constructors it
 * runs before main: the stack ends there, as libunwind ends it. Without
 * this every constructor's allocation went to libunwind, which is then
 * loaded (unwind.c) in most programs that link a library. */
static bool in_ldso(uintptr_t pc)
{
	Dl_info di;
	uintptr_t base = (uintptr_t)getauxval(AT_BASE);
	return base && dladdr((void *)pc, &di) && (uintptr_t)di.dli_fbase == base;
}

static void read_rule(uintptr_t key, rule *r)
{
	r->kind = RULE_OTHER;
	pthread_mutex_lock(&reader_lock);
	module *m = module_for(key);
	rt_eh_row row;
	if (m && m->has_cfi && rt_eh_find(&m->src, key, DW_RBP, &row) == 0) {
		rt_cfi_rule cr;
		rt_cfi_rule_of(&row, &cr);
		r->kind = cr.kind;
		r->cfa_off = cr.cfa_off;
		r->ra_off = cr.ra_off;
		r->rbp_off = cr.rbp_off;
	} else if (m && in_ldso(key)) {
		r->kind = RULE_END;
	}
	pthread_mutex_unlock(&reader_lock);
}

/* ---- the per-thread table ---- */

/* Every thread's memo and scratch steps, for rt_cfi_each_memo: slots
 * taken and given back without a lock (the leak check reads them while
 * threads are stopped anywhere). */
#define MEMOS_MAX 4096
#define MEMO_BYTES (sizeof(memo) + MEMO_CAP * sizeof(step))
static memo *_Atomic memos[MEMOS_MAX] RT_COLD;

static void memo_register(memo *m)
{
	for (size_t i = 0; i < MEMOS_MAX; i++) {
		memo *none = NULL;
		if (atomic_compare_exchange_strong(&memos[i], &none, m))
			return;
	}
}

static void memo_unregister(memo *m)
{
	for (size_t i = 0; i < MEMOS_MAX; i++)
		if (atomic_load(&memos[i]) == m)
			atomic_store(&memos[i], NULL);
}

void rt_cfi_each_memo(void (*fn)(void *ctx, uintptr_t lo, uintptr_t hi), void *ctx)
{
	for (size_t i = 0; i < MEMOS_MAX; i++) {
		memo *m = atomic_load(&memos[i]);
		if (m)
			fn(ctx, (uintptr_t)m, (uintptr_t)m + MEMO_BYTES);
	}
}

static void table_free(void *arg)
{
	rule_table *t = arg;
	if (!t)
		return;
	if (t->slots)
		rt_pages_free(t->slots, (t->mask + 1) * sizeof(rule));
	if (t->memo) {
		memo_unregister(t->memo);
		rt_pages_free(t->memo, MEMO_BYTES);
	}
	rt_pages_free(t, sizeof *t);
	if (t_rules == t)
		t_rules = NULL;
}

static void make_key(void)
{
	pthread_key_create(&table_key, table_free);
}

/* The main thread's stack: from the top of its mapping (the kernel puts
 * the program's file name, AT_EXECFN, in its last page) down by the
 * stack limit, as glibc's pthread_getattr_np does but without the read
 * of /proc/self/maps through stdio it makes to clamp the limit (an
 * fopen, a malloc'd buffer, a line per mapping: ~30 us in a shell, in
 * every traced process that allocates). false: another thread, or no
 * finite limit below the stack's top (then glibc's). */
static bool main_stack(rule_table *t)
{
	struct rlimit rl;
	uintptr_t name = (uintptr_t)getauxval(AT_EXECFN);
	if (!name || gettid() != getpid() || getrlimit(RLIMIT_STACK, &rl) != 0 ||
	    rl.rlim_cur == RLIM_INFINITY)
		return false;
	uintptr_t hi = (name | 4095) + 1;
	if (rl.rlim_cur >= hi || (uintptr_t)&rl >= hi || (uintptr_t)&rl < hi - rl.rlim_cur)
		return false;
	t->stack_lo = hi - rl.rlim_cur;
	t->stack_hi = hi;
	return true;
}

static void stack_bounds(rule_table *t)
{
	if (main_stack(t))
		return;
	pthread_attr_t a;
	void *addr;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	if (pthread_attr_getstack(&a, &addr, &size) == 0) {
		t->stack_lo = (uintptr_t)addr;
		t->stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&a);
}

static rule_table *table_get(void)
{
	rule_table *t = t_rules;
	if (__builtin_expect(t != NULL, 1)) {
		unsigned gen = atomic_load_explicit(&rules_gen, memory_order_acquire);
		if (__builtin_expect(t->gen != gen, 0)) {
			memset(t->slots, 0, (t->mask + 1) * sizeof(rule));
			t->count = 0;
			t->memo->m = 0;
			t->gen = gen;
		}
		return t;
	}
	pthread_once(&key_once, make_key);
	t = rt_pages(sizeof *t);
	if (!t)
		return NULL;
	t->mask = 1023; /* 16 KiB, doubled as rules come: a short process touches few pages */
	t->slots = rt_pages((t->mask + 1) * sizeof(rule));
	t->memo = rt_pages(MEMO_BYTES);
	if (!t->slots || !t->memo) {
		table_free(t);
		return NULL;
	}
	memo_register(t->memo);
	t->fresh = (step *)(t->memo + 1);
	t->gen = atomic_load(&rules_gen);
	stack_bounds(t);
	t_rules = t;
	pthread_setspecific(table_key, t);
	return t;
}

static inline size_t slot_of(uintptr_t key, size_t mask)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20) & mask;
}

static bool table_grow(rule_table *t)
{
	size_t mask = t->mask * 2 + 1;
	rule *s = rt_pages((mask + 1) * sizeof(rule));
	if (!s)
		return false;
	for (size_t i = 0; i <= t->mask; i++) {
		if (!t->slots[i].key)
			continue;
		size_t j = slot_of(t->slots[i].key, mask);
		while (s[j].key)
			j = (j + 1) & mask;
		s[j] = t->slots[i];
	}
	rt_pages_free(t->slots, (t->mask + 1) * sizeof(rule));
	t->slots = s;
	t->mask = mask;
	return true;
}

static __attribute__((noinline)) rule miss(rule_table *t, uintptr_t key)
{
	rule r = {.key = key};
	read_rule(key, &r);
	if ((t->count + 1) * 2 > t->mask + 1 && !table_grow(t))
		return r; /* used, not kept */
	size_t i = slot_of(key, t->mask);
	while (t->slots[i].key)
		i = (i + 1) & t->mask;
	t->slots[i] = r;
	t->count++;
	return r;
}

static inline rule lookup(rule_table *t, uintptr_t key)
{
	for (size_t i = slot_of(key, t->mask);; i = (i + 1) & t->mask) {
		if (t->slots[i].key == key)
			return t->slots[i];
		if (!t->slots[i].key)
			return miss(t, key);
	}
}

/* ---- the walk ----
 *
 * Consecutive allocations of a thread mostly come from stacks that share
 * their outer frames, often all of them. Each thread keeps a memo of its
 * last walk: every step's starting state (lookup address, sp, rbp) and
 * the stack words it read. When a new walk reaches a state the memo holds,
 * and every word the memo's remaining steps read still holds the same
 * value, those steps would repeat exactly (a walk is a function of its
 * state, the rules and the words it reads), so they are taken from the
 * memo: a load and compare per frame instead of a rule lookup and two
 * dependent loads. */

static const uintptr_t zero_word;

static inline bool on_stack(const walk *w, uintptr_t a)
{
	return a >= w->sp && a + 8 <= w->hi;
}

/* The signal trampoline's frame: the kernel saved the interrupted
 * registers in a ucontext where the handler's frame ends. The interrupted
 * pc is exact (not a return address), and its stack may be another one
 * (the handler ran on an alternate signal stack). */
static int signal_step(const rule_table *t, walk *w, step *s)
{
	const ucontext_t *uc = (const ucontext_t *)w->sp;
	if (w->sp + sizeof *uc > w->hi)
		return -1;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	uintptr_t bp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	if (sp >= t->stack_lo && sp < t->stack_hi)
		w->hi = t->stack_hi;
	else if (sp < w->sp || sp >= w->hi)
		return -1;
	if (!ip) {
		w->end = END_RULE;
		return 0;
	}
	*s = (step){.key = w->key, .sp = w->sp, .bp = w->bp, .ra = ip, .ra_at = &zero_word, .bp_at = &zero_word};
	*w = (walk){ip, sp, bp, w->hi, 0, NULL, true};
	return 1;
}

/* One frame, by the rule of w->key. Returns 1 after a step, 0 when the
 * walk ended (w->end says how), -1 when the general unwinder must take
 * this stack. */
static inline int take_step(rule_table *t, walk *w, step *s)
{
	rule r = lookup(t, w->key);
	if (r.kind == RULE_END) {
		w->end = END_RULE;
		return 0;
	}
	if (RT_CFI_UNLIKELY(r.kind == RULE_SIGNAL))
		return signal_step(t, w, s);
	if (r.kind != RULE_SP && r.kind != RULE_BP)
		return -1;
	uintptr_t cfa = (r.kind == RULE_SP ? w->sp : w->bp) + (uintptr_t)(intptr_t)r.cfa_off;
	if (cfa <= w->sp || cfa > w->hi || (cfa & 7))
		return -1;
	const uintptr_t *ra_at = (const uintptr_t *)(cfa + (uintptr_t)(intptr_t)r.ra_off);
	const uintptr_t *bp_at = &zero_word;
	if (r.rbp_off)
		bp_at = (const uintptr_t *)(cfa + (uintptr_t)(intptr_t)r.rbp_off);
	if (!on_stack(w, (uintptr_t)ra_at) || (r.rbp_off && !on_stack(w, (uintptr_t)bp_at)))
		return -1;
	uintptr_t ra = *ra_at;
	if (!ra) {
		w->end = END_ZERO;
		w->zero_at = ra_at;
		return 0;
	}
	*s = (step){w->key, w->sp, w->bp, ra_at, bp_at, ra, *bp_at, r.kind == RULE_BP, r.rbp_off != 0, false};
	w->bp = r.rbp_off ? s->bpv : w->bp;
	w->sp = cfa;
	w->key = ra - 1; /* the call instruction: ra may start another function */
	return 1;
}

static inline bool state_is(const step *s, const walk *w)
{
	return s->key == w->key && s->sp == w->sp && (!s->need_bp || s->bp == w->bp);
}

/* The memo's steps from j on would repeat: every word they read is
 * unchanged. */
static bool suffix_holds(const memo *mo, int j)
{
	/* two words a turn into two accumulators: the loads are what it
	 * costs (three a word), the loop's own compare and branch half of
	 * the rest; ~26 words on churn's stack, every allocation */
	uintptr_t d0 = 0, d1 = 0;
	int i = mo->first[j], n = mo->nchecks;
	for (; i + 1 < n; i += 2) {
		d0 |= *mo->checks[i].at ^ mo->checks[i].v;
		d1 |= *mo->checks[i + 1].at ^ mo->checks[i + 1].v;
	}
	if (i < n)
		d0 |= *mo->checks[i].at ^ mo->checks[i].v;
	return !(d0 | d1);
}

/* The memo's checks[], after its steps changed. */
static void pack_checks(memo *mo)
{
	int n = 0;
	for (int s = 0; s < mo->m; s++) {
		const step *st = &mo->steps[s];
		mo->first[s] = n;
		mo->checks[n++] = (check){st->ra_at, st->ra};
		if (st->bp_at != &zero_word)
			mo->checks[n++] = (check){st->bp_at, st->bpv};
	}
	mo->first[mo->m] = n;
	if (mo->last.end == END_ZERO)
		mo->checks[n++] = (check){mo->last.zero_at, 0};
	mo->nchecks = n;
}

/* need_bp of each step, from the end: does the rest of the walk use the
 * incoming rbp before reloading it? A saved rbp that nothing uses is not
 * checked when the memo is reused: code without frame pointers keeps data
 * in rbp, and that data changes from call to call. */
static void mark_bp_needs(memo *mo)
{
	bool need = mo->last.end != END_RULE;
	for (int s = mo->m - 1; s >= 0; s--) {
		step *st = &mo->steps[s];
		if (!need) {
			st->bp_at = &zero_word;
			st->bpv = 0;
		}
		need = st->uses_bp || (!st->loads_bp && need);
		st->need_bp = need;
	}
	pack_checks(mo);
}

/* Fresh steps until the walk ends, reaches `limit` steps, or reaches a
 * state of the memo whose remaining steps still hold (*matched = its
 * index). Steps go to fresh[]. Returns the number taken, -1 to give up. */
static int walk_fresh(rule_table *t, walk *w, step *fresh, int limit, int *matched)
{
	const memo *mo = t->memo;
	int k = 0, j = 0, attempts = 0;
	*matched = -1;
	while (k < limit) {
		while (j < mo->m && mo->steps[j].sp < w->sp)
			j++;
		if (j < mo->m && attempts < 2 && state_is(&mo->steps[j], w)) {
			attempts++;
			if (suffix_holds(mo, j)) {
				*matched = j;
				return k;
			}
		}
		int rc = take_step(t, w, &fresh[k]);
		if (rc <= 0)
			return rc < 0 ? -1 : k;
		k++;
	}
	w->end = END_LIMIT;
	return k;
}

/* The memo becomes fresh[0..k) followed by its own steps from j on, cut
 * at `limit` steps or continued past its end when it had been cut. */
static int memo_splice(rule_table *t, step *fresh, int k, int j, int limit)
{
	memo *mo = t->memo;
	int keep = mo->m - j;
	if (k + keep >= limit && keep > 0) {
		keep = limit - k;
		if (j + keep < mo->m) {
			const step *cut = &mo->steps[j + keep];
			mo->last = (walk){cut->key, cut->sp, cut->bp, mo->last.hi, END_LIMIT, NULL};
		}
	}
	if (k != j)
		memmove(mo->steps + k, mo->steps + j, (size_t)keep * sizeof(step));
	memcpy(mo->steps, fresh, (size_t)k * sizeof(step));
	mo->m = k + keep;
	if (mo->last.end == END_LIMIT && mo->m < limit) {
		walk w = mo->last; /* the previous walk had been cut: go on */
		int rc;
		while (mo->m < limit && (rc = take_step(t, &w, &mo->steps[mo->m])) > 0)
			mo->m++;
		if (rc < 0)
			return -1;
		w.end = mo->m == limit ? END_LIMIT : w.end;
		mo->last = w;
	}
	return 0;
}

/* A handler running on the alternate signal stack: that stack bounds the
 * walk until the signal frame leads back to the thread's stack. */
static bool on_altstack(walk *w)
{
	stack_t ss;
	if (sigaltstack(NULL, &ss) != 0 || !(ss.ss_flags & SS_ONSTACK))
		return false;
	uintptr_t lo = (uintptr_t)ss.ss_sp, hi = lo + ss.ss_size;
	if (w->sp < lo || w->sp >= hi)
		return false;
	w->hi = hi;
	w->no_memo = true;
	return true;
}

static bool same_kept(const memo *mo, const step *fresh, int k, int j, int skip)
{
	if (k != j || mo->m == 0)
		return false;
	for (int s = skip; s < k; s++)
		if (fresh[s].ra != mo->steps[s].ra)
			return false;
	return true;
}

__attribute__((noinline)) int rt_cfi_backtrace(uintptr_t *ips, int max, int skip, uint64_t *hash, bool *same)
{
	uintptr_t pc, sp, bp;
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(pc), "=r"(sp), "=r"(bp));
	rule_table *t = table_get();
	if (!t || !t->stack_hi)
		return -1;
	int limit = skip + max < MEMO_CAP ? skip + max : MEMO_CAP;
	memo *mo = t->memo;
	walk w = {pc, sp, bp, t->stack_hi, 0, NULL, false};
	if (RT_CFI_UNLIKELY(sp < t->stack_lo || sp >= t->stack_hi) && !on_altstack(&w))
		return -1;
	/* without a memo the walk can write it in place */
	step *fresh = mo->m ? t->fresh : mo->steps;
	int j, k = walk_fresh(t, &w, fresh, limit, &j);
	if (k < 0) {
		mo->m = 0;
		return -1;
	}
	*same = j >= 0 && same_kept(mo, fresh, k, j, skip);
	if (j >= 0 && *same && k == j)
		return mo->m > skip ? mo->m - skip : 0;
	if (j >= 0) {
		if (memo_splice(t, fresh, k, j, limit) < 0) {
			mo->m = 0;
			return -1;
		}
	} else {
		if (fresh != mo->steps)
			memcpy(mo->steps, fresh, (size_t)k * sizeof(step));
		mo->m = k;
		mo->last = w;
	}
	mark_bp_needs(mo);
	int n = mo->m > skip ? mo->m - skip : 0;
	for (int i = 0; i < n; i++)
		ips[i] = mo->steps[skip + i].ra;
	*hash = rt_stack_hash(ips, n);
	if (w.no_memo || mo->last.no_memo)
		mo->m = 0;
	return n;
}

void rt_cfi_forget(void)
{
	if (t_rules)
		t_rules->memo->m = 0;
}

void rt_cfi_invalidate(void)
{
	pthread_mutex_lock(&reader_lock);
	reader_nmods = 0;
	atomic_fetch_add_explicit(&rules_gen, 1, memory_order_release);
	pthread_mutex_unlock(&reader_lock);
}

void rt_cfi_atfork_prepare(void) { pthread_mutex_lock(&reader_lock); }
void rt_cfi_atfork_parent(void) { pthread_mutex_unlock(&reader_lock); }
/* By assignment, not pthread_mutex_init: a function the parent never
 * called is bound by ld.so in each fork child, a symbol lookup through
 * every library's hash tables that were not mapped there yet (~36 us of
 * each traced shell's fork child). */
void rt_cfi_atfork_child(void) { reader_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER; }

#else /* no cached rules: every stack goes to the general unwinder */

int rt_cfi_backtrace(uintptr_t *ips, int max, int skip, uint64_t *hash, bool *same)
{
	(void)ips, (void)max, (void)skip, (void)hash, (void)same;
	return -1;
}
void rt_cfi_invalidate(void) {}
void rt_cfi_forget(void) {}
void rt_cfi_atfork_prepare(void) {}
void rt_cfi_atfork_parent(void) {}
void rt_cfi_atfork_child(void) {}

#endif
