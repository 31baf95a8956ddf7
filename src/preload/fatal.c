/* Fatal signals: the leak check when a signal is about to kill the
 * process, as memcheck runs it (its verdicts in the trace), after which
 * the signal kills the process as it would have without the tracer (same
 * status, same core dump).
 *
 * A signal kills when its disposition is the default and that default is
 * to terminate. The tracer puts its handler where the program has the
 * default (at start, and whenever the program sets the default again),
 * and keeps it out of the program's sight: sigaction and the signal()
 * family are interposed, so that the program reads back SIG_DFL (with the
 * flags and mask it gave) and a handler or SIG_IGN of its own replaces the
 * tracer's, as it would replace the default. glibc's internal calls (abort,
 * system) are not interposed: they save and restore the tracer's handler
 * as they would the default.
 *
 * In the handler:
 *  - a signal sent to the process (kill, a timer, SIGPIPE) while the
 *    thread is inside an interposer (the real allocator's locks, the
 *    tracer's) is sent again when the thread leaves it (leak_stop.c), like
 *    a stop request: the check then runs where the program is; so is one
 *    the thread raised (or another thread sent it) inside the tracer's
 *    own code;
 *  - a fault (SIGSEGV, SIGBUS, ...) cannot wait, nor can abort() called
 *    by the real allocator on a corrupted heap: inside the tracer, which
 *    may hold the live-block table's lock or the writer's, there is no
 *    check, and stderr says so instead of waiting for ever; elsewhere
 *    (the program, libc, the real allocator) the check runs (it
 *    allocates nothing);
 *  - then the default disposition is restored and the signal sent again:
 *    it stays pending (blocked in the handler) until the handler returns,
 *    so that the process ends in the context the signal interrupted (a
 *    core dump shows the faulting instruction).
 * A second fatal signal during the check (a fault in it) kills at once:
 * the handler blocks every signal, and the kernel kills on a blocked
 * fault. */
#define _GNU_SOURCE
#include "heap.h"
#include "pages.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void rt_fatal_init(void);

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn real_sigaction;
static _Atomic int armed;
/* What the program set where the tracer's handler stands for the
 * default: read back by its sigaction. */
static struct sigaction view[NSIG] RT_COLD;

/* Signals whose default action terminates (with or without a core). */
static bool kills_by_default(int sig)
{
	switch (sig) {
	case SIGHUP: case SIGINT: case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT:
	case SIGBUS: case SIGFPE: case SIGUSR1: case SIGSEGV: case SIGUSR2: case SIGPIPE:
	case SIGALRM: case SIGTERM: case SIGSTKFLT: case SIGXCPU: case SIGXFSZ:
	case SIGVTALRM: case SIGPROF: case SIGIO: case SIGPWR: case SIGSYS:
		return true;
	default: /* real-time signals; glibc's own (below SIGRTMIN) are not */
		return sig >= SIGRTMIN && sig <= SIGRTMAX;
	}
}

static bool watched(int sig) { return RT_LOAD(armed) && sig > 0 && sig < NSIG && kills_by_default(sig); }

static void on_fatal(int sig, siginfo_t *si, void *ctx);

static bool is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_fatal;
}

static struct sigaction our_action(void)
{
	struct sigaction sa = {.sa_sigaction = on_fatal, .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART};
	sigfillset(&sa.sa_mask);
	return sa;
}

/* Writes "rtrace: signal N (SIGNAME) <why>: no leak check" on stderr
 * (no stdio: a signal handler). */
static void say(int sig, const char *why)
{
	char buf[256], num[12];
	size_t n = 0, k = sizeof num;
	unsigned v = (unsigned)sig;
	do
		num[--k] = (char)('0' + v % 10);
	while ((v /= 10) && k);
	const char *name = sigabbrev_np(sig);
	const char *parts[] = {"rtrace: signal ", NULL, " (SIG", name ? name : "?", ") came ", why,
			       ": no leak check\n"};
	for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
		const char *p = i == 1 ? num + k : parts[i];
		size_t len = i == 1 ? sizeof num - k : strlen(p);
		if (len > sizeof buf - n)
			len = sizeof buf - n;
		memcpy(buf + n, p, len);
		n += len;
	}
	(void)!write(STDERR_FILENO, buf, n);
}

/* A fault the interrupted code cannot go on from: returning would run
 * the faulting instruction again (or, for SIGTRAP and SIGSYS, skip it). */
static bool is_fault(int sig, const siginfo_t *si)
{
	return si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
				   sig == SIGTRAP || sig == SIGSYS);
}

/* The thread sent it to itself (raise, abort: glibc's allocator aborting
 * on a corrupted heap does not return to the interposer), or another
 * thread did (pthread_kill). */
static bool is_raised(const siginfo_t *si)
{
	return si->si_code == SI_TKILL && si->si_pid == getpid();
}

/* The default disposition back, and the signal again: pending until the
 * handler returns to where the signal came, then it kills. */
static void kill_by(int sig, ucontext_t *uc)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	real_sigaction(sig, &dfl, NULL);
	sigdelset(&uc->uc_sigmask, sig);
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}

static void on_fatal(int sig, siginfo_t *si, void *ctx)
{
	int err = errno;
	ucontext_t *uc = ctx;
	if (rt_h.depth > 0 && !is_fault(sig, si) && (rt_t.busy || rt_h.table || !is_raised(si))) {
		rt_leak_defer_signal(sig);
		errno = err;
		return;
	}
	const char *why = rt_leak_at_signal(uc);
	if (why)
		say(sig, why);
	kill_by(sig, uc);
	errno = err;
}

/* --- the program's view of its dispositions --- */

static void resolve(void)
{
	if (!real_sigaction)
		real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
}

RT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	resolve();
	if (!watched(sig))
		return real_sigaction(sig, act, old);
	bool dfl = act && act->sa_handler == SIG_DFL;
	struct sigaction ours = our_action(), prev, was = view[sig];
	int rc = real_sigaction(sig, dfl ? &ours : act, &prev);
	if (rc)
		return rc;
	/* stored only when it changed: a shell sets the same default around
	 * every command, and each store copied view's page after each fork */
	if (dfl && memcmp(&view[sig], act, sizeof *act))
		view[sig] = *act;
	if (old)
		*old = is_ours(&prev) ? was : prev;
	return 0;
}

RT_EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return sigaction(sig, act, old);
}

/* signal(), sysv_signal(), ...: SIG_DFL goes through sigaction above;
 * anything else to libc's, whose answer names the default where the
 * tracer's handler was. */
static sighandler_t signal_like(const char *name, sighandler_t (**next)(int, sighandler_t), int sig,
				sighandler_t h)
{
	resolve();
	if (!*next)
		*next = (sighandler_t (*)(int, sighandler_t))dlsym(RTLD_NEXT, name);
	if (!watched(sig) || h != SIG_DFL) {
		sighandler_t r = (*next)(sig, h);
		return watched(sig) && (void *)r == (void *)on_fatal ? SIG_DFL : r;
	}
	struct sigaction sa = {.sa_handler = SIG_DFL}, old;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, &old) ? SIG_ERR : old.sa_handler;
}

#define RT_SIGNAL_LIKE(fn)                                                  \
	RT_EXPORT sighandler_t fn(int sig, sighandler_t h)                  \
	{                                                                   \
		static sighandler_t (*next)(int, sighandler_t);             \
		return signal_like(#fn, &next, sig, h);                     \
	}
RT_SIGNAL_LIKE(signal)
RT_SIGNAL_LIKE(bsd_signal)
RT_SIGNAL_LIKE(ssignal)
RT_SIGNAL_LIKE(sysv_signal)
RT_SIGNAL_LIKE(__sysv_signal)

/* sigset() also unblocks, or blocks with SIG_HOLD: libc's, then the
 * default it may have set becomes the tracer's handler again. */
RT_EXPORT sighandler_t sigset(int sig, sighandler_t h)
{
	static sighandler_t (*next)(int, sighandler_t);
	resolve();
	if (!next)
		next = (sighandler_t (*)(int, sighandler_t))dlsym(RTLD_NEXT, "sigset");
	sighandler_t r = next(sig, h);
	if (!watched(sig))
		return r;
	if (h == SIG_DFL) {
		struct sigaction ours = our_action();
		memset(&view[sig], 0, sizeof view[sig]);
		real_sigaction(sig, &ours, NULL);
	}
	return (void *)r == (void *)on_fatal ? SIG_DFL : r;
}

/* The default as exec leaves it: no flags, no signal in the mask (the
 * kernel's 64 bits of it: libc leaves the rest of sigset_t as it finds
 * it), no restorer. */
static bool pristine(const struct sigaction *sa)
{
	uint64_t mask;
	memcpy(&mask, &sa->sa_mask, sizeof mask);
	return !sa->sa_flags && !mask && !sa->sa_restorer;
}

/* At start: the tracer's handler wherever the default would kill, when
 * there is a check to run. One system call per signal, not two: the
 * handler goes in and the old disposition comes back in the same call
 * (a read first, then a write, was 108 rt_sigaction calls in every
 * exec'd program, ~40 us); the few that were not the default (SIG_IGN
 * kept across exec) get theirs back. Every signal is blocked meanwhile,
 * so that none reaches the tracer's handler where the program ignores it:
 * one that came is discarded when SIG_IGN is set again, as it would have
 * been. */
void rt_fatal_init(void)
{
	resolve();
	if (rt_leak_mode() == LEAK_CHECK_NO || !real_sigaction)
		return;
	struct sigaction ours = our_action();
	sigset_t all, mask;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &mask);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction cur;
		if (!kills_by_default(sig) || real_sigaction(sig, &ours, &cur))
			continue;
		if (cur.sa_handler != SIG_DFL)
			real_sigaction(sig, &cur, NULL); /* the program's, as it was */
		else if (!pristine(&cur)) /* else view stays zero: its pages untouched */
			view[sig] = cur;
	}
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	RT_STORE(armed, 1);
}
