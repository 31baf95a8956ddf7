/* Leak checks on demand (`rtrace run --check-signal=SIG`, `rtrace
 * check PID`), for programs that run for hours: memcheck's
 * VALGRIND_DO_LEAK_CHECK and its `leak_check ... increased` monitor
 * command, asked for from outside.
 *
 * The signal only asks: its handler stores the mode asked for (sigqueue's
 * value: RT_TF_CHECK_INCREASED from `rtrace check --increased`, anything
 * else a full check) in one atomic word, which is all a handler may
 * safely do while the thread it interrupted may hold malloc's locks or
 * the tracer's. The check runs at the next safe point of any thread: the
 * entry of an interposed heap function (rt_heap_enter, one relaxed load
 * of that word on the hot path), when the thread is neither inside the
 * tracer (depth, busy) nor holding a part of the live-block table, so
 * it holds none of the allocator's locks or the tracer's, just as the
 * program calling malloc holds none of them; the call that found the
 * request is not yet made, so its block is not in the check. From there
 * the check is the exit check's (leak.c: other threads parked at their
 * own safe points, roots, marking, cliques), and then the threads go on.
 *
 * What lands in the trace is one CHECK record (its number, the last call
 * index, the mode, memcheck's totals per kind) and one CHECKLOSS record
 * per loss record (blocks of one kind allocated at one place: kind,
 * function, stack, bytes, blocks, indirect bytes), every kind of them
 * whatever the mode: a check costs bytes in proportion to the places that
 * hold memory, not to the blocks, and the reader derives memcheck's
 * "increased" deltas from the previous check. The loss records are summed
 * after the threads were resumed, in a hash table of mmap'ed pages (no
 * malloc: the tracer may be what the allocator is waiting for). */
#define _GNU_SOURCE
#include "leak_int.h"
#include "pages.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>

_Atomic int rt_leak_live_pending;
static _Atomic int running; /* a thread is running a check */
static int live_sig;
static uint64_t checks; /* checks written, for their numbers */

typedef struct loss {
	uint64_t bt, bytes, blocks, indirect;
	uint8_t kind, fn, used;
} loss;

static void on_check_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	int mode = si && si->si_code == SI_QUEUE && si->si_value.sival_int == RT_TF_CHECK_INCREASED
			   ? RT_TF_CHECK_INCREASED
			   : RT_TF_CHECK_FULL;
	atomic_store(&rt_leak_live_pending, mode);
}

void rt_leak_live_init(int sig)
{
	live_sig = sig;
	if (sig <= 0 || sig >= NSIG || rt_leak_mode() == LEAK_CHECK_NO)
		return;
	struct sigaction sa = {.sa_sigaction = on_check_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static inline uint64_t loss_hash(uint64_t bt, unsigned kind, unsigned fn)
{
	uint64_t x = bt * 0x9e3779b97f4a7c15ULL ^ (uint64_t)kind << 8 ^ fn;
	return x ^ x >> 29;
}

/* The blocks of the scan summed per kind and place (the program's own:
 * the tracer's blocks have no function). */
static loss *sum_losses(const scan *s, size_t *cap, uint64_t bytes[5], uint64_t blocks[5])
{
	size_t n = 64;
	while (n < 2 * s->n)
		n *= 2;
	loss *t = rt_pages(n * sizeof *t);
	if (!t)
		return NULL;
	for (size_t i = 0; i < s->n; i++) {
		const lblk *b = &s->b[i];
		if (!b->fn)
			continue;
		unsigned k = (unsigned)rt_leak_kind(b);
		size_t j = loss_hash(b->bt, k, b->fn) & (n - 1);
		while (t[j].used && (t[j].bt != b->bt || t[j].kind != k || t[j].fn != b->fn))
			j = (j + 1) & (n - 1);
		t[j].used = 1;
		t[j].bt = b->bt;
		t[j].kind = (uint8_t)k;
		t[j].fn = b->fn;
		t[j].bytes += b->size;
		t[j].blocks++;
		t[j].indirect += b->state == ST_UNREACHED ? b->indirect : 0;
		bytes[k] += b->size;
		blocks[k]++;
	}
	*cap = n;
	return t;
}

static void write_check(uint64_t number, int mode, const scan *s, uint64_t us, const uint64_t bytes[5],
			const uint64_t blocks[5])
{
	uint8_t *p = rt_reserve(2 + 12 * 10);
	if (!p)
		return;
	*p++ = RT_REC_CHECK;
	p = rt_put_varint(p, number);
	p = rt_put_varint(p, rt_last_index());
	*p++ = (uint8_t)mode;
	p = rt_put_varint(p, s->n);
	p = rt_put_varint(p, us);
	for (int k = RT_TF_LEAK_DEFINITE; k <= RT_TF_LEAK_REACHABLE; k++) {
		p = rt_put_varint(p, bytes[k]);
		p = rt_put_varint(p, blocks[k]);
	}
	rt_commit(p);
}

static void write_loss(uint64_t number, const loss *l)
{
	uint8_t *p = rt_reserve(2 + 7 * 10);
	if (!p)
		return;
	*p++ = RT_REC_CHECKLOSS;
	p = rt_put_varint(p, number);
	*p++ = l->kind;
	p = rt_put_varint(p, l->fn);
	p = rt_put_varint(p, l->bt);
	p = rt_put_varint(p, l->bytes);
	p = rt_put_varint(p, l->blocks);
	p = rt_put_varint(p, l->indirect);
	rt_commit(p);
}

static void check(int mode)
{
	uint64_t us, bytes[5] = {0}, blocks[5] = {0};
	scan *s = rt_leak_check_live(&us);
	if (!s)
		return;
	size_t cap = 0;
	loss *t = sum_losses(s, &cap, bytes, blocks);
	uint64_t number = ++checks;
	write_check(number, mode, s, us, bytes, blocks);
	for (size_t i = 0; t && i < cap; i++)
		if (t[i].used)
			write_loss(number, &t[i]);
	if (t)
		rt_pages_free(t, cap * sizeof *t);
	rt_leak_scan_free(s);
	rt_writer_keep(); /* asked for: in the file now, whatever comes next */
	rt_writer_settle();
}

/* A forked child: its own trace numbers its checks from 1, and no check
 * of the parent's (pending, or running in a thread the child does not
 * have) is its. */
void rt_leak_live_fork_child(void)
{
	checks = 0;
	atomic_store(&rt_leak_live_pending, 0);
	atomic_store(&running, 0);
}

/* Called by rt_heap_enter when a check was asked for. One thread runs
 * it; the others go on (and park when it stops them). A request that
 * comes while one is pending or running is merged into it, as a signal
 * sent twice before its handler ran is delivered once. */
void rt_leak_live_run(void)
{
	if (rt_h.depth || rt_h.table || rt_t.busy || !RT_LOAD(rt_active))
		return;
	if (atomic_exchange(&running, 1))
		return;
	int mode = atomic_exchange(&rt_leak_live_pending, 0);
	if (!mode) {
		atomic_store(&running, 0);
		return;
	}
	int err = errno;
	rt_heap_pin(); /* no stop request of another check parks this thread now */
	rt_t.busy = 1;
	check(mode);
	rt_t.busy = 0;
	atomic_store(&running, 0);
	rt_heap_unpin();
	errno = err;
}
