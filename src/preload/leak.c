/* The leak check at exit, with memcheck's definitions (mc_leakcheck.c):
 *
 *  1. every other thread is stopped at a safe point (a signal; a thread
 *     inside an interposer parks when it leaves it) with its registers;
 *  2. glibc and libstdc++ release their own memory (__libc_freeres,
 *     __gnu_cxx::__freeres), as under memcheck;
 *  3. roots: the registers of every thread, every thread's stack from its
 *     stack pointer up (static TLS and the thread descriptor sit at the top
 *     of a thread's stack mapping), and every other readable and writable
 *     mapping except malloc's own heaps, the tracer's memory and devices.
 *     Dynamic TLS and the DTV are heap blocks, found through the thread
 *     descriptor like any other block;
 *  4. marking: a pointer to a block's start from a root (or from a block
 *     reached so) makes it reachable, a pointer inside it possibly lost
 *     unless one of memcheck's heuristics (stdstring, length64, newarray,
 *     multipleinheritance, all on by default) accepts it; what possibly
 *     lost blocks point to is possibly lost at best;
 *  5. blocks not reached are lost: taking them in address order, each one
 *     still unreached leads a clique of the unreached blocks it reaches,
 *     which are indirectly lost; the leaders are definitely lost.
 *
 * Verdicts go into the trace (LEAK and LEAKSUM records). This code runs
 * with the heap table locked and other threads stopped: it allocates
 * nothing (mmap only) and reads root memory with process_vm_readv, so an
 * unmapped or truncated page is skipped instead of faulting.
 *
 * This file holds the check's course: its entries (exit's last handler,
 * _exit, a fatal signal through fatal.c's handler), glibc's and
 * libstdc++'s freeres, the verdicts written to the trace. Step 1 is
 * leak_stop.c, step 3 leak_roots.c, steps 4 and 5 leak_mark.c (leak_int.h
 * shows the layering). */
#define _GNU_SOURCE
#include "leak_int.h"
#include "pages.h"
#include "maps.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <setjmp.h>
#include <sys/single_threaded.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RT_HIDDEN __attribute__((visibility("hidden")))
/* exit's handler, and its C part once the state is saved */
RT_HIDDEN void rt_leak_exit_entry(void *arg);
RT_HIDDEN void rt_leak_exit_at(void *arg, const entry_state *self);
/* _exit's C part */
RT_HIDDEN __attribute__((noreturn)) void rt_leak__exit_at(int status, const entry_state *self);

/* Where exit's machinery (libc's exit and its loop over the handlers)
 * builds its frames, recorded by the x86-64 entries below without a frame
 * of their own (stacks are unchanged): the stack pointer of the
 * program's call of exit, or where main's frame was and main's return
 * address (once main returned, libc's call of exit overwrote it). */
RT_HIDDEN _Atomic uintptr_t rt_leak_exit_sp;
RT_HIDDEN uintptr_t rt_leak_main_sp, rt_leak_main_ret, rt_leak_program_main;
RT_HIDDEN void *rt_leak_next_exit, *rt_leak_next_start_main;
#define EXIT_FRAMES_MAX (64u << 10)

static int mode = LEAK_CHECK_FULL;
static void *real_malloc;      /* the allocator's malloc ... */
static uintptr_t alloc_base;   /* ... and the load address of its module */
static pid_t owner;
static _Atomic int ran;

__thread rt_heap_tls rt_h __attribute__((tls_model("initial-exec")));

void rt_leak_init(int m)
{
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	mode = m;
	owner = getpid();
	if (!rt_leak_next_exit)
		rt_leak_next_exit = dlsym(RTLD_NEXT, "exit");
	if (!rt_leak_next_start_main)
		rt_leak_next_start_main = dlsym(RTLD_NEXT, "__libc_start_main");
}

/* --- results --- */

static void write_leak(const lblk *b)
{
	uint8_t *p = rt_reserve(1 + 7 * 10 + 2);
	if (!p)
		return;
	*p++ = RT_REC_LEAK;
	p = rt_put_varint(p, b->index);
	p = rt_put_varint(p, b->addr);
	p = rt_put_varint(p, b->size);
	*p++ = (uint8_t)rt_leak_kind(b);
	*p++ = b->state == ST_REACHABLE ? b->heur : 0;
	p = rt_put_varint(p, b->fn);
	p = rt_put_varint(p, b->bt);
	p = rt_put_varint(p, b->state == ST_UNREACHED ? b->indirect : 0);
	rt_commit(p);
}

/* LEAKSUM: the totals per kind and per heuristic, and the check's cost. */
static void write_summary(const lblk *all, size_t n, uint64_t us)
{
	uint64_t bytes[5] = {0}, blocks[5] = {0}, hbytes[H_COUNT] = {0}, hblocks[H_COUNT] = {0};
	for (size_t i = 0; i < n; i++) {
		const lblk *b = &all[i];
		if (!b->fn)
			continue;
		int k = rt_leak_kind(b);
		bytes[k] += b->size;
		blocks[k]++;
		if (k == RT_TF_LEAK_REACHABLE && b->heur) {
			hbytes[b->heur] += b->size;
			hblocks[b->heur]++;
		}
	}
	uint8_t *p = rt_reserve(2 + 18 * 10);
	if (!p)
		return;
	*p++ = RT_REC_LEAKSUM;
	*p++ = (uint8_t)mode;
	for (int k = RT_TF_LEAK_DEFINITE; k <= RT_TF_LEAK_REACHABLE; k++) {
		p = rt_put_varint(p, bytes[k]);
		p = rt_put_varint(p, blocks[k]);
	}
	for (int h = RT_TF_HEUR_STDSTRING; h < H_COUNT; h++) {
		p = rt_put_varint(p, hbytes[h]);
		p = rt_put_varint(p, hblocks[h]);
	}
	p = rt_put_varint(p, n);
	p = rt_put_varint(p, us);
	rt_commit(p);
}

static void message(const char *text)
{
	uint8_t *p = rt_reserve(1 + 10 + strlen(text));
	if (!p)
		return;
	*p++ = RT_REC_MESSAGE;
	p = rt_put_str(p, text, strlen(text));
	rt_commit(p);
}

static void (*libc_freeres)(void);
static void (*cxx_freeres)(void);

/* Like memcheck, let libstdc++ and glibc give back their own memory
 * first, so that their internals are not reported. Only on exit: after
 * _exit they would flush stdio buffers the program meant to drop. */
static void run_freeres(void)
{
	RT_STORE(rt_heap_quiet, 1);
	if (cxx_freeres)
		cxx_freeres();
	if (libc_freeres)
		libc_freeres();
	RT_STORE(rt_heap_quiet, 0);
}

/* libstdc++'s __freeres, if libstdc++ is loaded: looked up in it alone,
 * since a failed dlsym leaves an error buffer for libc to free later. */
static int find_cxx_freeres(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "/libstdc++.so"))
		return 0;
	void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (h) /* not closed: the process is ending, and dlclose does work */
		cxx_freeres = (void (*)(void))dlsym(h, "_ZN9__gnu_cxx9__freeresEv");
	return 1;
}

/* The blocks and the mappings; NULL, or the message saying why the check
 * cannot go on (the run's report counts it as an error: "no verdicts"). */
static const char *prepare(scan **sp)
{
	static char why[200];
	scan *s = *sp = rt_pages(sizeof *s);
	if (!s || !rt_leak_collect_blocks(s))
		return "leak check: out of memory; no verdicts";
	if (!s->n) /* nothing a root could reach: no root is read */
		return NULL;
	/* looked up here, not at start: dladdr reads the allocator module's
	 * symbol table one by one, 2% of a traced /bin/true's CPU */
	Dl_info di;
	if (!alloc_base && real_malloc && dladdr(real_malloc, &di))
		alloc_base = (uintptr_t)di.dli_fbase;
	errno = 0;
	if (rt_leak_read_maps(s))
		return NULL;
	if (s->maps || !errno)
		return "leak check: out of memory; no verdicts";
	const char *e = strerrordesc_np(errno);
	size_t n = 0;
	rt_leak_cat(why, sizeof why, &n, "leak check: cannot read /proc/self/maps (");
	rt_leak_cat(why, sizeof why, &n, e ? e : "error");
	rt_leak_cat(why, sizeof why, &n, "); no verdicts");
	return why;
}

/* The check's descriptors, kept from the start so that a program that
 * leaves none free is still checked. */
void rt_leak_reserve(void)
{
	if (mode == LEAK_CHECK_NO)
		return;
	rt_maps_reserve();
	rt_leak_reserve_tasks();
}

/* The scan, from the roots to the cliques, with faults caught: false
 * (the table unlocked, the trace told why) when one ended it. */
static bool scan_guarded(scan *s, const entry_state *self, const park_slot *all)
{
	static sigjmp_buf env;
	if (sigsetjmp(env, 1)) {
		char why[100], hex[2 + 16 + 1] = "0x";
		uintptr_t a = rt_leak_unguard();
		for (int i = 0; i < 16; i++)
			hex[2 + i] = "0123456789abcdef"[(a >> (60 - 4 * i)) & 15];
		hex[18] = '\0';
		size_t n = 0;
		rt_leak_cat(why, sizeof why, &n, "leak check: memory fault at ");
		rt_leak_cat(why, sizeof why, &n, hex);
		rt_leak_cat(why, sizeof why, &n, " during the scan; no verdicts");
		rt_heap_unlock_all();
		message(why);
		return false;
	}
	rt_leak_guard(&env);
	rt_leak_scan_roots(s, self);
	if (all)
		rt_leak_scan_regs(s, all->regs, NREGS);
	rt_leak_find_cliques(s);
	rt_leak_unguard();
	return true;
}

/* A process that never started a thread and ends with no live block (a
 * short one: /bin/true, a shell's child) has nothing to check: no thread
 * to stop, no memory of glibc's to release (none is live), no table to
 * map; its summary, all zeros, is what the check would write. Stopping,
 * releasing and mapping were 6.8% of a traced /bin/true's CPU (~125 us
 * wall). */
static bool nothing_live(void)
{
	return __libc_single_threaded && rt_heap_count() == 0;
}

/* The whole check, in the exiting thread. Other threads stay stopped: the
 * process ends right after. all: every register of the thread when a
 * signal interrupted it (NULL at a call, where self's are the live ones). */
static void check_now(bool freeres, const entry_state *self, const park_slot *all)
{
	uint64_t t0 = rt_leak_now_us();
	if (nothing_live()) {
		rt_t.busy = 1;
		write_summary(NULL, 0, rt_leak_now_us() - t0);
		return;
	}
	bool stopped = rt_leak_stop_threads();
	if (freeres)
		run_freeres();
	rt_t.busy = 1;
	rt_heap_lock_all();
	scan *s;
	const char *why = prepare(&s);
	if (why) {
		rt_heap_unlock_all();
		message(why);
		return;
	}
	s->clique = -1;
	s->self_sp = self->sp;
	s->alloc_base = alloc_base;
	/* a process that ends with no block has nothing to scan */
	if (s->n && !scan_guarded(s, self, all))
		return;
	if (!stopped)
		message(rt_leak_stop_why());
	if (mode == LEAK_CHECK_FULL)
		for (size_t i = 0; i < s->n; i++)
			if (s->b[i].fn) /* internal blocks are no verdict of the program's */
				write_leak(&s->b[i]);
	write_summary(s->b, s->n, rt_leak_now_us() - t0);
	/* what is left of exit may still allocate and free (the tracer's
	 * own report, stdio): the table must be usable again */
	rt_heap_unlock_all();
}

/* Everything the scan mapped. */
void rt_leak_scan_free(scan *s)
{
	if (!s)
		return;
	if (s->b)
		rt_pages_free(s->b, s->cap * sizeof *s->b);
	if (s->starts)
		rt_pages_free(s->starts, s->cap * sizeof *s->starts);
	if (s->stack)
		rt_pages_free(s->stack, (2 * s->cap + 16) * sizeof *s->stack);
	if (s->maps)
		rt_pages_free(s->maps, s->maps_cap);
	if (s->v)
		rt_pages_free(s->v, s->cv * sizeof *s->v);
	if (s->ex)
		rt_pages_free(s->ex, s->cex * sizeof *s->ex);
	rt_pages_free(s, sizeof *s);
}

/* The calling thread as a root: from this frame up (the program's frames
 * above the interposer it called), and its callee-saved registers as
 * getcontext gives them (the others are dead across the call the program
 * made). */
static __attribute__((noinline)) void live_self(entry_state *self)
{
	ucontext_t uc;
	park_slot me;
	memset(&uc, 0, sizeof uc);
	memset(&me, 0, sizeof me);
	getcontext(&uc);
	rt_leak_save_regs(&me, &uc);
#if defined(__x86_64__)
	static const int callee_saved[ENTRY_REGS] = {REG_RBX, REG_RBP, REG_R12, REG_R13, REG_R14, REG_R15};
	for (int i = 0; i < ENTRY_REGS; i++)
		self->regs[i] = me.regs[callee_saved[i]];
#else
	memcpy(self->regs, me.regs, sizeof self->regs);
#endif
	self->sp = (uintptr_t)__builtin_frame_address(0);
}

/* A check on demand, at a safe point of the calling thread (outside the
 * tracer and the allocator): the exit check's steps without freeres,
 * then the other threads go on. Not once the exit check began. */
scan *rt_leak_check_live(uint64_t *us)
{
	if (atomic_load(&ran) || getpid() != owner)
		return NULL;
	uint64_t t0 = rt_leak_now_us();
	entry_state self;
	live_self(&self);
	bool stopped = rt_leak_stop_threads();
	rt_heap_lock_all();
	scan *s;
	const char *why = prepare(&s);
	bool ok = !why;
	if (ok) {
		s->clique = -1;
		s->self_sp = self.sp;
		s->alloc_base = alloc_base;
		ok = !s->n || scan_guarded(s, &self, NULL); /* unlocks when it fails */
	}
	if (ok || why)
		rt_heap_unlock_all();
	if (stopped)
		rt_leak_resume_threads();
	if (why)
		message(why);
	if (ok && !stopped)
		message(rt_leak_stop_why());
	*us = rt_leak_now_us() - t0;
	if (!ok) {
		rt_leak_scan_free(s);
		return NULL;
	}
	return s;
}

/* The top of the frames exit's machinery built below the program's last
 * live frame, up to the handler's caller at sp; sp when unknown (exit
 * called inside libc, as error() does, or main still live). Memcheck
 * reads only the words of these frames that they wrote since they were
 * pushed; the rest holds what earlier calls left below the program's
 * frame, the tracer's interposers among them (a block's address the
 * program dropped). The check cannot tell which were written, and takes
 * none of them: they are libc's exit state, never the program's. */
static uintptr_t exit_frames_top(uintptr_t sp)
{
	uintptr_t top = atomic_exchange(&rt_leak_exit_sp, 0);
	if (top > sp && top - sp < EXIT_FRAMES_MAX)
		return top;
	top = rt_leak_main_sp;
	if (top > sp && top - sp < EXIT_FRAMES_MAX && ((const uintptr_t *)top)[-1] != rt_leak_main_ret)
		return top - sizeof(uintptr_t);
	return sp;
}

/* Called by exit after every destructor (through rt_leak_exit_entry). */
__attribute__((used)) void rt_leak_exit_at(void *arg, const entry_state *self)
{
	(void)arg;
	if (atomic_exchange(&ran, 1))
		return;
	entry_state below = *self;
	below.sp = exit_frames_top(self->sp);
	check_now(true, &below, NULL);
	rt_finish();
}

extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

bool rt_leak_defer(void)
{
	if (mode == LEAK_CHECK_NO || !RT_LOAD(rt_active) || getpid() != owner)
		return false;
	libc_freeres = (void (*)(void))dlsym(RTLD_DEFAULT, "__libc_freeres");
	dl_iterate_phdr(find_cxx_freeres, NULL);
	/* registered while exit runs the handlers: glibc runs it after the
	 * handler running now (the destructors), i.e. after every destructor */
	return __cxa_atexit(rt_leak_exit_entry, NULL, NULL) == 0;
}

void rt_leak_fork_child(void)
{
	owner = getpid();
	atomic_store(&ran, 0);
	/* the parent's reserved descriptors hold their numbers until the
	 * child needs its own (fdres.c): no open of /proc at each fork */
}

/* A forked child's own reserved descriptors before the program lowers its
 * descriptor limit, which may leave the placeholders' numbers above it,
 * where no open lands (fdres.c). Any other call goes straight on. */
static void limit_lowering(int res, const struct rlimit *rl)
{
	if (res == RLIMIT_NOFILE && rl && RT_LOAD(rt_started)) {
		int busy = rt_t.busy, err = errno;
		rt_t.busy = 1;
		rt_leak_reserve();
		rt_writer_limit((uint64_t)rl->rlim_cur);
		rt_t.busy = busy;
		errno = err;
	}
}

/* The C library's function (dlsym allocates: busy, as rt_mod_next). */
#define NEXT(name)                                                   \
	static __typeof__(name) *next;                               \
	if (!next) {                                                 \
		int busy_ = rt_t.busy;                               \
		rt_t.busy = 1;                                       \
		next = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);  \
		rt_t.busy = busy_;                                   \
	}

RT_EXPORT int setrlimit(__rlimit_resource_t res, const struct rlimit *rl)
{
	NEXT(setrlimit);
	limit_lowering(res, rl);
	return next(res, rl);
}

RT_EXPORT int setrlimit64(__rlimit_resource_t res, const struct rlimit64 *rl)
{
	NEXT(setrlimit64);
	limit_lowering(res, (const struct rlimit *)rl);
	return next(res, rl);
}

RT_EXPORT int prlimit(pid_t pid, __rlimit_resource_t res, const struct rlimit *rl, struct rlimit *old)
{
	NEXT(prlimit);
	if (!pid || pid == getpid())
		limit_lowering(res, rl);
	return next(pid, res, rl, old);
}

RT_EXPORT int prlimit64(pid_t pid, __rlimit_resource_t res, const struct rlimit64 *rl, struct rlimit64 *old)
{
	NEXT(prlimit64);
	if (!pid || pid == getpid())
		limit_lowering(res, (const struct rlimit *)rl);
	return next(pid, res, rl, old);
}

/* _exit skips the exit handlers: the check runs here, without freeres. */
__attribute__((used)) void rt_leak__exit_at(int status, const entry_state *self)
{
	if (mode != LEAK_CHECK_NO && RT_LOAD(rt_active) && !rt_t.busy && getpid() == owner &&
	    !atomic_exchange(&ran, 1)) {
		check_now(false, self, NULL);
		rt_finish();
	} else if (mode == LEAK_CHECK_NO && rt_opt.min_lifetime && RT_LOAD(rt_active) && !rt_t.busy &&
		   !atomic_exchange(&ran, 1)) {
		rt_leak_stop_threads(); /* they write what their lifetime filter holds */
		rt_finish();
	}
	for (;;)
		syscall(SYS_exit_group, status);
}

int rt_leak_mode(void) { return mode; }

/* At a fatal signal (fatal.c), in the thread it interrupted: exit's
 * check without freeres (as after _exit: the program's state is what it
 * was when the signal came), the thread's roots taken from the
 * interrupted context, where every register is live and so is the red
 * zone below the stack pointer. Then the trace is finished. Returns why
 * the check could not run (stderr says it), or NULL. */
const char *rt_leak_at_signal(const ucontext_t *uc)
{
	if (mode == LEAK_CHECK_NO || !RT_LOAD(rt_active) || getpid() != owner || atomic_load(&ran))
		return NULL;
	/* the table's lock (and the writer's) may be this thread's: taking
	 * them again would wait for ever */
	if (rt_h.table)
		return "inside the tracer's live-block table";
	if (rt_t.busy)
		return "inside the tracer";
	if (atomic_exchange(&ran, 1))
		return NULL;
	park_slot all;
	memset(&all, 0, sizeof all);
	rt_leak_save_regs(&all, uc);
	entry_state self = {.sp = all.sp > REDZONE ? all.sp - REDZONE : all.sp};
#if defined(__x86_64__)
	static const int callee_saved[ENTRY_REGS] = {REG_RBX, REG_RBP, REG_R12, REG_R13, REG_R14, REG_R15};
	for (int i = 0; i < ENTRY_REGS; i++)
		self.regs[i] = all.regs[callee_saved[i]];
#else
	memcpy(self.regs, all.regs, sizeof self.regs);
#endif
	check_now(false, &self, &all);
	rt_finish();
	return NULL;
}

#if defined(__x86_64__)
/* The entries save the callee-saved registers and the caller's stack
 * pointer before any C code of the tracer can change them, and pass them
 * (on the stack, below the caller's) as an entry_state. */
#define ENTRY_SAVE                                                             \
	"	.cfi_startproc\n"                                              \
	"	endbr64\n"                                                     \
	"	pushq %r15\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	pushq %r14\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	pushq %r13\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	pushq %r12\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	pushq %rbp\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	pushq %rbx\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	leaq 56(%rsp), %rax\n"                                          \
	"	pushq %rax\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	movq %rsp, %rsi\n"
__asm__(".text\n"
	"	.p2align 4\n"
	"	.hidden rt_leak_exit_entry\n"
	"	.globl rt_leak_exit_entry\n"
	"	.type rt_leak_exit_entry, @function\n"
	"rt_leak_exit_entry:\n" ENTRY_SAVE
	"	call rt_leak_exit_at\n"
	"	addq $8, %rsp\n	.cfi_adjust_cfa_offset -8\n"
	"	popq %rbx\n	.cfi_adjust_cfa_offset -8\n"
	"	popq %rbp\n	.cfi_adjust_cfa_offset -8\n"
	"	popq %r12\n	.cfi_adjust_cfa_offset -8\n"
	"	popq %r13\n	.cfi_adjust_cfa_offset -8\n"
	"	popq %r14\n	.cfi_adjust_cfa_offset -8\n"
	"	popq %r15\n	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size rt_leak_exit_entry, .-rt_leak_exit_entry\n"
	"	.p2align 4\n"
	"	.globl _exit\n"
	"	.type _exit, @function\n"
	"	.globl _Exit\n"
	"	.type _Exit, @function\n"
	"_exit:\n"
	"_Exit:\n" ENTRY_SAVE
	"	call rt_leak__exit_at\n"
	"	ud2\n"
	"	.cfi_endproc\n"
	"	.size _exit, .-_exit\n"
	"	.size _Exit, .-_Exit\n"
	/* the program's exit: its stack pointer, then libc's exit */
	"	.p2align 4\n"
	"	.globl exit\n"
	"	.type exit, @function\n"
	"exit:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	leaq 8(%rsp), %rax\n"
	"	movq %rax, rt_leak_exit_sp(%rip)\n"
	"	jmp *rt_leak_next_exit(%rip)\n"
	"	.cfi_endproc\n"
	"	.size exit, .-exit\n"
	/* main, called through rt_leak_main_entry, which notes its frame */
	"	.p2align 4\n"
	"	.globl __libc_start_main\n"
	"	.type __libc_start_main, @function\n"
	"__libc_start_main:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	movq %rdi, rt_leak_program_main(%rip)\n"
	"	leaq rt_leak_main_entry(%rip), %rdi\n"
	"	jmp *rt_leak_next_start_main(%rip)\n"
	"	.cfi_endproc\n"
	"	.size __libc_start_main, .-__libc_start_main\n"
	"	.p2align 4\n"
	"	.type rt_leak_main_entry, @function\n"
	"rt_leak_main_entry:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	movq (%rsp), %rax\n"
	"	movq %rax, rt_leak_main_ret(%rip)\n"
	"	leaq 8(%rsp), %rax\n"
	"	movq %rax, rt_leak_main_sp(%rip)\n"
	"	jmp *rt_leak_program_main(%rip)\n"
	"	.cfi_endproc\n"
	"	.size rt_leak_main_entry, .-rt_leak_main_entry\n");
#else
/* Elsewhere: the registers getcontext saves (the unsaved ones zero) and
 * the entry's frame address, which leaves this frame to the scan. */
static void capture(entry_state *self, uintptr_t frame)
{
	ucontext_t uc;
	park_slot me;
	memset(&uc, 0, sizeof uc);
	getcontext(&uc);
	memset(&me, 0, sizeof me);
	rt_leak_save_regs(&me, &uc);
	memcpy(self->regs, me.regs, sizeof self->regs);
	self->sp = frame;
}

void rt_leak_exit_entry(void *arg)
{
	entry_state self;
	capture(&self, (uintptr_t)__builtin_frame_address(0));
	rt_leak_exit_at(arg, &self);
}

static __attribute__((noreturn)) void exit_now(int status)
{
	entry_state self;
	capture(&self, (uintptr_t)__builtin_frame_address(0));
	rt_leak__exit_at(status, &self);
}

RT_EXPORT void _exit(int status) { exit_now(status); }
RT_EXPORT void _Exit(int status) { exit_now(status); }
#endif
