/* Allocation churn from a ~20-frame call chain: the tracer's worst case
 * (every call is an allocation or a release, with a deep stack).
 * usage: churn [iterations] [threads] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long iterations = 2000000;

__attribute__((noinline)) static void *leaf(size_t n) { return malloc(n); }

__attribute__((noinline)) static void chain(int depth, void **slots, long i)
{
	if (depth > 0) {
		chain(depth - 1, slots, i);
		__asm__ volatile("" ::: "memory"); /* no tail call */
		return;
	}
	size_t k = (size_t)(i * 2654435761u) % 256;
	free(slots[k]);
	slots[k] = leaf((size_t)(i % 512) + 16);
}

static void *worker(void *arg)
{
	(void)arg;
	void **slots = calloc(256, sizeof *slots);
	for (long i = 0; i < iterations; i++)
		chain(18, slots, i);
	for (int k = 0; k < 256; k++)
		free(slots[k]);
	free(slots);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		iterations = atol(argv[1]);
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t t[64];
	for (int i = 0; i < threads && i < 64; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < threads && i < 64; i++)
		pthread_join(t[i], NULL);
	printf("churn: %ld iterations x %d threads\n", iterations, threads);
	return 0;
}
