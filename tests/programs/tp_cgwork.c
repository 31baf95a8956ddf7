/* A small CPU-bound program for the Callgrind tests: recursion, inlined
 * helpers from a header, two source files, a shared library call, and
 * worker threads (for --separate-threads). Deterministic: the same
 * instructions run every time. Usage: tp_cgwork [THREADS] (default 2). */
#include "tp_cgwork.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2000

static uint32_t fill(uint32_t *v, int n, uint32_t seed)
{
	for (int i = 0; i < n; i++)
		v[i] = seed = cg_mix(seed + (uint32_t)i);
	return seed;
}

static void *worker(void *arg)
{
	uint32_t v[N];
	uint32_t seed = (uint32_t)(uintptr_t)arg;
	fill(v, N, seed);
	uint32_t h = cg_sort_and_hash(v, N);
	h += (uint32_t)cg_fib(16 + (int)seed % 2);
	return (void *)(uintptr_t)h;
}

/* A phase of its own: `--dump-before=phase_two` starts a new part here. */
static uint32_t phase_two(void)
{
	uint32_t v[N];
	fill(v, N, 7);
	return cg_sum_mixed(v, N) + (uint32_t)cg_ackermann(2, 3);
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t t[8];
	if (nthreads < 0 || nthreads > 8)
		nthreads = 2;
	uint32_t total = (uint32_t)cg_fib(18);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < nthreads; i++) {
		void *r;
		pthread_join(t[i], &r);
		total += (uint32_t)(uintptr_t)r;
	}
	total += phase_two();
	printf("%u\n", total);
	return 0;
}
