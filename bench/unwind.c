/* Micro-benchmark of stack unwinders for the tracer's hot path: a call
 * chain of CHAIN_DEPTH frames, at the bottom of which each method takes
 * the same backtrace over and over (the stack a tracer sees on every
 * allocation of a loop). bench/unwind.sh builds it with -O2 (x86-64 code
 * without frame pointers, the distribution default) and with
 * -O2 -fno-omit-frame-pointer, each time twice: with USE_LIBUNWIND=0 (not
 * linked with libunwind) and with USE_LIBUNWIND=1 (-lunwind).
 *
 * Methods:
 *   backtrace     glibc backtrace(). Without libunwind in the process it
 *                 runs libgcc's _Unwind_Backtrace (.eh_frame, no caching);
 *                 in a program linked with -lunwind it runs libunwind's
 *                 _Unwind_Backtrace instead (libunwind exports the _Unwind_*
 *                 API), so the USE_LIBUNWIND=1 build names it backtrace*
 *   fp            frame-pointer walk: follows saved rbp through the stack,
 *                 stopping at the first link that leaves the thread's stack
 *                 or does not go up; it only works when every frame keeps a
 *                 frame pointer
 *   unw-global    libunwind unw_backtrace(), default caching policy
 *                 (UNW_CACHE_GLOBAL)
 *   unw-thread    unw_backtrace() after unw_set_caching_policy(
 *                 unw_local_addr_space, UNW_CACHE_PER_THREAD): what the
 *                 tracer does (src/preload/unwind.c)
 *   unw-step      unw_getcontext + unw_init_local + unw_step loop (the slow
 *                 path unw_backtrace falls back to), per-thread caching
 *   cached        the tracer's unwinder (src/preload/cfi.c, compiled in with
 *                 USE_CFI=1): unwind rules read once per return address
 *                 from .eh_frame (src/preload/ehframe.c) and cached per thread, plus the
 *                 memo of the thread's previous walk (a repeated stack
 *                 costs one compare per frame)
 *   cached-rules  the same with the memo dropped before every backtrace:
 *                 every frame goes through its cached rule
 *
 * For each method: frames returned, how many of them are frames of the
 * chain (return addresses inside its code, which lives in its own
 * section), ns per backtrace and ns per frame returned, with 1 and 2
 * threads unwinding at the same time (2 threads show lock contention in
 * the unwinder; the machine has 2 cores). Median of REPEATS timings.
 *
 * usage: unwind [ITERATIONS [REPEATS]]   (defaults 200000 and 5) */
#define _GNU_SOURCE
#ifndef USE_LIBUNWIND
#define USE_LIBUNWIND 1
#endif
#define UNW_LOCAL_ONLY
#include <execinfo.h>
#ifndef USE_CFI
#define USE_CFI 0
#endif
#if USE_CFI
#include "../src/preload/cfi.h"
#endif
#if USE_LIBUNWIND
#include <libunwind.h>
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHAIN_DEPTH 20
#define MAX_FRAMES 64

enum { M_BACKTRACE, M_UNW_GLOBAL, M_UNW_THREAD, M_UNW_STEP, M_FP, M_CFI, M_CFI_RULES, M_COUNT };
#if USE_CFI
static const int methods[] = {M_CFI, M_CFI_RULES};
static const char *const names[M_COUNT] = {"backtrace", "unw-global", "unw-thread", "unw-step", "fp",
					   "cached", "cached-rules"};
#elif USE_LIBUNWIND
static const int methods[] = {M_BACKTRACE, M_UNW_GLOBAL, M_UNW_THREAD, M_UNW_STEP};
static const char *const names[M_COUNT] = {"backtrace*", "unw-global", "unw-thread", "unw-step", "fp"};
#else
static const int methods[] = {M_BACKTRACE, M_FP};
static const char *const names[M_COUNT] = {"backtrace", "unw-global", "unw-thread", "unw-step", "fp"};
#endif

static long iterations = 200000;
static int repeats = 5;

/* set by the linker for the section the chain's code is in */
extern const char __start_rtbench_chain[], __stop_rtbench_chain[];

static __thread uintptr_t t_stack_lo, t_stack_hi;

static void stack_bounds(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	pthread_getattr_np(pthread_self(), &a);
	pthread_attr_getstack(&a, &addr, &size);
	pthread_attr_destroy(&a);
	t_stack_lo = (uintptr_t)addr;
	t_stack_hi = (uintptr_t)addr + size;
}

/* Frame-pointer walk: [rbp] is the caller's rbp, [rbp+8] the return
 * address. Each link must stay in this thread's stack, go up, and be
 * aligned, or the walk stops (without frame pointers rbp holds data). */
__attribute__((noinline)) static int fp_backtrace(void **buf, int max)
{
	uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
	int n = 0;
	while (n < max) {
		if (fp < t_stack_lo || fp + 16 > t_stack_hi || (fp & 7))
			break;
		uintptr_t next = ((uintptr_t *)fp)[0];
		uintptr_t ret = ((uintptr_t *)fp)[1];
		if (!ret)
			break;
		buf[n++] = (void *)ret;
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

#if USE_LIBUNWIND
__attribute__((noinline)) static int unw_step_backtrace(void **buf, int max)
{
	unw_context_t uc;
	unw_cursor_t c;
	unw_getcontext(&uc);
	if (unw_init_local(&c, &uc) < 0)
		return 0;
	int n = 0;
	while (n < max && unw_step(&c) > 0) {
		unw_word_t ip;
		unw_get_reg(&c, UNW_REG_IP, &ip);
		buf[n++] = (void *)ip;
	}
	return n;
}
#endif

static inline int take(int m, void **buf)
{
	switch (m) {
	case M_BACKTRACE: return backtrace(buf, MAX_FRAMES);
#if USE_LIBUNWIND
	case M_UNW_GLOBAL:
	case M_UNW_THREAD: return unw_backtrace(buf, MAX_FRAMES);
	case M_UNW_STEP: return unw_step_backtrace(buf, MAX_FRAMES);
#endif
#if USE_CFI
	case M_CFI_RULES: rt_cfi_forget(); /* fall through */
	case M_CFI: {
		uint64_t h;
		bool same;
		return rt_cfi_backtrace((uintptr_t *)buf, MAX_FRAMES, 0, &h, &same);
	}
#endif
	default: return fp_backtrace(buf, MAX_FRAMES);
	}
}

typedef struct result {
	int frames, chain_frames;
	double ns; /* per backtrace */
} result;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The bottom of the chain: counts, then times the method. */
__attribute__((noinline, noclone, section("rtbench_chain"))) static void bottom(int m, result *r)
{
	void *buf[MAX_FRAMES];
	int n = take(m, buf); /* warm-up, and the frames it finds */
	r->frames = n;
	r->chain_frames = 0;
	for (int i = 0; i < n; i++)
		if ((const char *)buf[i] >= __start_rtbench_chain && (const char *)buf[i] < __stop_rtbench_chain)
			r->chain_frames++;
	for (long i = 0; i < iterations / 10; i++)
		take(m, buf);
	double t[64];
	int reps = repeats < 64 ? repeats : 64;
	for (int k = 0; k < reps; k++) {
		double t0 = now_ns();
		for (long i = 0; i < iterations; i++) {
			take(m, buf);
			__asm__ volatile("" ::"r"(buf) : "memory");
		}
		t[k] = (now_ns() - t0) / (double)iterations;
	}
	qsort(t, (size_t)reps, sizeof t[0], cmp_double);
	r->ns = t[reps / 2];
}

/* CHAIN_DEPTH frames (depth CHAIN_DEPTH-1 down to 0), then bottom(). Both
 * are in the section rtbench_chain, so a complete backtrace holds
 * CHAIN_DEPTH + 1 addresses inside it: the call site in bottom(), bottom's
 * return address into chain(0), and the return addresses of chain(0) to
 * chain(CHAIN_DEPTH-2) into their callers. */
__attribute__((noinline, noclone, section("rtbench_chain"))) static void chain(int depth, int m, result *r)
{
	if (depth > 0)
		chain(depth - 1, m, r);
	else
		bottom(m, r);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

typedef struct job {
	int m;
	result r;
	pthread_barrier_t *bar;
} job;

static void *worker(void *arg)
{
	job *j = arg;
	stack_bounds();
	if (j->bar)
		pthread_barrier_wait(j->bar);
	chain(CHAIN_DEPTH - 1, j->m, &j->r);
	return NULL;
}

static void set_policy(int m)
{
	(void)m;
#if USE_LIBUNWIND
	if (m == M_UNW_GLOBAL)
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_GLOBAL);
	else if (m == M_UNW_THREAD || m == M_UNW_STEP)
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
#endif
}

int main(int argc, char **argv)
{
	if (argc > 1)
		iterations = atol(argv[1]);
	if (argc > 2)
		repeats = atoi(argv[2]);
	if (iterations < 1 || repeats < 1) {
		fprintf(stderr, "usage: unwind [ITERATIONS [REPEATS]]\n");
		return 2;
	}
	printf("%-12s %7s %7s %8s %13s %13s %13s %13s\n", "method", "frames", "chain", "expected",
	       "ns/bt 1thr", "ns/frame 1thr", "ns/bt 2thr", "ns/frame 2thr");
	for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++) {
		int m = methods[k];
		set_policy(m);
		/* one thread: the chain runs in a thread of its own as in the
		 * two-thread case, so both see the same stack above main */
		job one = {.m = m};
		pthread_t t;
		pthread_create(&t, NULL, worker, &one);
		pthread_join(t, NULL);
		pthread_barrier_t bar;
		pthread_barrier_init(&bar, NULL, 2);
		job two[2] = {{.m = m, .bar = &bar}, {.m = m, .bar = &bar}};
		pthread_t tt[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&tt[i], NULL, worker, &two[i]);
		for (int i = 0; i < 2; i++)
			pthread_join(tt[i], NULL);
		pthread_barrier_destroy(&bar);
		double ns2 = (two[0].r.ns + two[1].r.ns) / 2;
		printf("%-12s %7d %7d %8d %13.1f %13.2f %13.1f %13.2f\n", names[m], one.r.frames,
		       one.r.chain_frames, CHAIN_DEPTH + 1, one.r.ns,
		       one.r.frames ? one.r.ns / one.r.frames : 0.0, ns2,
		       two[0].r.frames ? ns2 / two[0].r.frames : 0.0);
		fflush(stdout);
	}
	return 0;
}
