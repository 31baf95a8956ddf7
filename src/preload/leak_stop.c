/* Stopping the other threads for the leak check, and the mappings it
 * scans.
 *
 * Every other thread is stopped at a safe point: a real-time signal the
 * program does not use parks it (a thread inside an interposer, which may
 * hold the real allocator's locks or the tracer's, parks when it leaves
 * it), with its registers. After the check at exit it is never resumed,
 * since the process ends; after a check on demand (leak_live.c) it is:
 * the parked threads wait on a generation number, which the resume bumps
 * (a thread reads the generation before it looks whether a stop is on,
 * so one that comes late sees either the stop over or the old number).
 * A thread that blocks the signal never parks: its stack is then scanned
 * whole and its registers are unknown.
 *
 * /proc/self/maps (maps.c) becomes a sorted table of mappings; memory
 * that may have gone (the roots) is read with process_vm_readv, so an
 * unmapped or truncated page is skipped instead of faulting; heap blocks
 * are read where the table says their pages are readable. */
#define _GNU_SOURCE
#include "leak_int.h"
#include "maps.h"
#include "pages.h"
#include "fdres.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/single_threaded.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define STOP_WAIT_NS 2000000000ll

static int park_sig;
static _Atomic int stopping;
static park_slot *parked;
static _Atomic unsigned nparked;
static _Atomic int resume_gen;
static int list_errno; /* why the threads could not be listed */
static unsigned parked_count(void);

void rt_leak_cat(char *buf, size_t cap, size_t *n, const char *s) { rt_cat(buf, cap, n, s); }

uint64_t rt_leak_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* --- stopping the other threads --- */

void rt_leak_save_regs(park_slot *s, const ucontext_t *uc)
{
#if defined(__x86_64__)
	for (int i = 0; i < NREGS; i++)
		s->regs[i] = (uintptr_t)uc->uc_mcontext.gregs[i];
	s->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
	for (int i = 0; i < 31; i++)
		s->regs[i] = (uintptr_t)uc->uc_mcontext.regs[i];
	s->regs[31] = s->sp = (uintptr_t)uc->uc_mcontext.sp;
#else
	(void)uc;
	s->sp = 0;
#endif
}

/* A stopped thread records its registers and waits until the check
 * resumes it (after a check at exit: until the process ends). */
static void park_here(const ucontext_t *uc, int gen)
{
	rt_life_flush(); /* the trace holds this thread's calls before it stops */
	unsigned k = atomic_fetch_add(&nparked, 1);
	if (k < MAX_PARKED) {
		park_slot *s = &parked[k];
		s->tid = (int)syscall(SYS_gettid);
		rt_leak_save_regs(s, uc);
		atomic_store_explicit(&s->ready, 1, memory_order_release);
	}
	while (atomic_load(&resume_gen) == gen)
		syscall(SYS_futex, &resume_gen, FUTEX_WAIT_PRIVATE, gen, NULL, NULL, 0);
}

static void on_park_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	int gen = atomic_load(&resume_gen);
	if (!atomic_load(&stopping))
		return;
	if (rt_h.depth > 0) { /* inside an interposer: park when it leaves */
		RT_STORE(rt_h.park, 1);
		return;
	}
	park_here(ctx, gen);
}

/* A fatal signal that came while its thread was inside an interposer
 * (fatal.c), sent again when the thread leaves it, like a stop request. */
static __thread int fatal_pending;

void rt_leak_defer_signal(int sig)
{
	fatal_pending = sig;
	RT_STORE(rt_h.park, 1);
}

void rt_leak_park_pending(void)
{
	RT_STORE(rt_h.park, 0);
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	if (atomic_load(&stopping))
		syscall(SYS_tgkill, pid, tid, park_sig);
	int sig = fatal_pending;
	if (sig) {
		fatal_pending = 0;
		syscall(SYS_tgkill, pid, tid, sig);
	}
}

/* A real-time signal the program does not use: the one taken before
 * while its handler is still the tracer's. */
static int pick_signal(void)
{
	struct sigaction cur;
	if (park_sig && sigaction(park_sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == on_park_signal)
		return park_sig;
	for (int sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
		struct sigaction old;
		if (sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL) {
			struct sigaction sa = {.sa_sigaction = on_park_signal,
					       .sa_flags = SA_SIGINFO | SA_RESTART};
			sigfillset(&sa.sa_mask);
			if (sigaction(sig, &sa, NULL) == 0)
				return sig;
		}
	}
	return 0;
}

static bool is_parked(int tid)
{
	unsigned n = atomic_load(&nparked);
	for (unsigned i = 0; i < n && i < MAX_PARKED; i++)
		if (atomic_load_explicit(&parked[i].ready, memory_order_acquire) && parked[i].tid == tid)
			return true;
	return false;
}

static rt_fdres task_res = RT_FDRES_INIT("/proc/self/task", O_RDONLY | O_DIRECTORY);

void rt_leak_reserve_tasks(void) { rt_fdres_open(&task_res); }

/* Thread ids of the process (raw getdents64: opendir would allocate);
 * 0 and errno when the list cannot be read. */
static size_t list_tasks(int *tids, size_t cap)
{
	bool fresh;
	int fd = rt_fdres_get(&task_res, &fresh);
	if (fd < 0 || (!fresh && lseek(fd, 0, SEEK_SET) != 0))
		return 0;
	size_t n = 0;
	char buf[4096];
	long got;
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (long off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			int tid = 0;
			for (const char *c = d->d_name; *c >= '0' && *c <= '9'; c++)
				tid = tid * 10 + (*c - '0');
			if (tid > 0 && n < cap)
				tids[n++] = tid;
		}
	}
	if (fresh)
		close(fd);
	return n;
}

static bool contains(const int *a, size_t n, int v)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] == v)
			return true;
	return false;
}

/* Waits until every signalled thread parked or ended, or the time is up
 * (a thread that blocks the signal never parks; its stack is then
 * scanned whole and its registers are unknown). */
static void wait_parked(const int *sent, size_t nsent, uint64_t deadline_us)
{
	pid_t pid = getpid();
	while (rt_leak_now_us() < deadline_us) {
		bool all = true;
		for (size_t i = 0; i < nsent && all; i++)
			if (!is_parked(sent[i]) && syscall(SYS_tgkill, pid, sent[i], 0) == 0)
				all = false;
		if (all)
			return;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

const char *rt_leak_stop_why(void)
{
	if (!list_errno)
		return "leak check: no free real-time signal to stop other threads with";
	static char why[160];
	const char *e = strerrordesc_np(list_errno);
	size_t n = 0;
	why[0] = '\0';
	rt_leak_cat(why, sizeof why, &n, "leak check: cannot list the threads to stop them (/proc/self/task: ");
	rt_leak_cat(why, sizeof why, &n, e ? e : "error");
	rt_leak_cat(why, sizeof why, &n, ")");
	return why;
}

bool rt_leak_stop_threads(void)
{
	static int sent[MAX_PARKED] RT_COLD, now[MAX_PARKED] RT_COLD;
	if (__libc_single_threaded) { /* no other thread: glibc clears it at the first pthread_create, for good */
		atomic_store(&nparked, 0);
		return true;
	}
	if (!parked)
		parked = rt_pages(MAX_PARKED * sizeof *parked);
	if (!parked || !(park_sig = pick_signal()))
		return false;
	for (unsigned i = 0, n = parked_count(); i < n; i++) /* a check before */
		atomic_store(&parked[i].ready, 0);
	atomic_store(&nparked, 0);
	atomic_store(&stopping, 1);
	pid_t pid = getpid(), self = (pid_t)syscall(SYS_gettid);
	size_t nsent = 0;
	uint64_t deadline = rt_leak_now_us() + STOP_WAIT_NS / 1000;
	/* threads may start threads until they are stopped: look again */
	for (int round = 0; round < 8; round++) {
		size_t n = list_tasks(now, MAX_PARKED), added = 0;
		if (!n && !round) { /* it lists this thread at least */
			list_errno = errno;
			return false;
		}
		for (size_t i = 0; i < n && nsent < MAX_PARKED; i++) {
			if (now[i] == self || contains(sent, nsent, now[i]))
				continue;
			if (syscall(SYS_tgkill, pid, now[i], park_sig) == 0) {
				sent[nsent++] = now[i];
				added++;
			}
		}
		if (!added)
			break;
		wait_parked(sent, nsent, deadline);
	}
	return true;
}

static unsigned parked_count(void)
{
	unsigned k = atomic_load(&nparked);
	return parked ? (k < MAX_PARKED ? k : MAX_PARKED) : 0;
}

park_slot *rt_leak_parked(unsigned *n)
{
	*n = parked_count();
	return parked;
}

void rt_leak_resume_threads(void)
{
	atomic_store(&stopping, 0);
	atomic_fetch_add(&resume_gen, 1);
	syscall(SYS_futex, &resume_gen, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* --- the mappings --- */

/* The mappings in address order (the kernel's), their paths in the text
 * (lines NUL-terminated, for the root tests' string compares). */
bool rt_leak_read_maps(scan *s)
{
	size_t cap, lines = 1;
	if (!(s->maps = rt_maps_read(&s->maps_len, &cap)))
		return false;
	s->maps_cap = cap;
	for (size_t i = 0; i < s->maps_len; i++)
		if (s->maps[i] == '\n') {
			s->maps[i] = '\0';
			lines++;
		}
	if (!(s->v = rt_pages(lines * sizeof *s->v)))
		return false;
	s->cv = lines;
	rt_maps_line l;
	for (const char *at = s->maps; rt_maps_next(&at, s->maps + s->maps_len, &l);)
		s->v[s->nv++] = (vma){l.lo, l.hi, l.r, l.w, l.x, l.path_len && l.path[0] == '/',
				      l.path_len ? (uint32_t)(l.path - s->maps) : 0};
	return true;
}

const vma *rt_leak_vma_from(const scan *s, uintptr_t a)
{
	size_t l = 0, r = s->nv;
	while (l < r) {
		size_t m = (l + r) / 2;
		if (s->v[m].hi <= a)
			l = m + 1;
		else
			r = m;
	}
	return l < s->nv ? &s->v[l] : NULL;
}

const vma *rt_leak_vma_of(const scan *s, uintptr_t a)
{
	const vma *v = rt_leak_vma_from(s, a);
	return v && v->lo <= a ? v : NULL;
}

/* Heap memory is read directly, which is ~250 times faster than
 * process_vm_readv (measured: 5 ns against 1.3 us a block), and a fault
 * cannot be caught there: the program's own SIGSEGV handler would take
 * it. So the pages are checked against the mappings instead, read when
 * the check began, with the program's threads stopped (mprotect splits a
 * mapping, so a PROT_NONE page is a mapping of its own). */
bool rt_leak_readable(const scan *s, uintptr_t a, size_t n)
{
	uintptr_t end = a + (n ? n : 1);
	while (a < end) {
		const vma *v = rt_leak_vma_of(s, a);
		if (!v || !v->r)
			return false;
		a = v->hi;
	}
	return true;
}

const char *rt_leak_path_of(const scan *s, const vma *v) { return v->path ? s->maps + v->path : ""; }

bool rt_leak_safe_read(void *dst, uintptr_t src, size_t n)
{
	struct iovec l = {dst, n}, r = {(void *)src, n};
	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n;
}

/* --- a fault during the scan --- */

static sigjmp_buf *guard_env;
static struct sigaction guard_old[2];
static _Atomic uintptr_t guard_addr;
static const int guard_sigs[2] = {SIGSEGV, SIGBUS};

static void on_guard_fault(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	atomic_store(&guard_addr, (uintptr_t)si->si_addr);
	siglongjmp(*guard_env, sig);
}

/* The scan reads only what the mappings say is readable; should a read
 * fault all the same, the check must end and say so rather than leave
 * through the program's own SIGSEGV handler (a siglongjmp of its own) or
 * die: the tracer's handler jumps back to env for the time of the scan.
 * Set with the interposed sigaction, which keeps the program's view. */
void rt_leak_guard(sigjmp_buf *env)
{
	struct sigaction sa = {.sa_sigaction = on_guard_fault, .sa_flags = SA_SIGINFO | SA_NODEFER};
	sigfillset(&sa.sa_mask);
	guard_env = env;
	for (int i = 0; i < 2; i++)
		sigaction(guard_sigs[i], &sa, &guard_old[i]);
}

uintptr_t rt_leak_unguard(void)
{
	for (int i = 0; i < 2; i++)
		sigaction(guard_sigs[i], &guard_old[i], NULL);
	guard_env = NULL;
	return atomic_load(&guard_addr);
}

