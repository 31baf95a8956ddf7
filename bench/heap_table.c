/* The live-block table (src/preload/heap.c) alone, on bench/churn.c's
 * pattern: each thread frees one of its 256 blocks and enters a new one,
 * with what the tracer does around each table operation (a fetch-and-add
 * of a shared call index, ~20 bytes of record stored into a streaming
 * buffer, as the trace's chunk is) so that the cache and the store buffer
 * see what they see in the tracer. Prints CPU ns per table operation for
 * the table and for the same loop without it (the difference is the
 * table's cost), so that table variants can be compared without the
 * noise of whole traced runs.
 *
 *   cc -O2 -pthread -Isrc -Isrc/preload -o bench/out/heap_table bench/heap_table.c src/preload/heap.c
 *   bench/out/heap_table [iterations per thread] [threads] [cross]
 *
 * cross=1: each thread frees the blocks of the next thread (handed over
 * through a shared array), the case a per-thread table is slow at. */
#define _GNU_SOURCE
#include "heap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* what heap.c needs from the rest of the tracer */
__thread rt_heap_tls rt_h __attribute__((tls_model("initial-exec")));
_Atomic int rt_started = 1, rt_leak_live_pending;
rt_options rt_opt;
static _Atomic uint64_t call_index;
uint64_t rt_last_index(void) { return atomic_load_explicit(&call_index, memory_order_relaxed); }
uint64_t rt_backtrace(void) { return 1; }
__thread rt_tls rt_t __attribute__((tls_model("initial-exec")));
_Atomic unsigned rt_writer_gen;
uint8_t *rt_reserve_slow(size_t n) { (void)n; return NULL; }
void rt_life_commit(void) {}
bool rt_memory_on(void) { return false; }
void rt_leak_park_pending(void) {}
void rt_leak_live_run(void) {}

#define SLOTS 256
#define STREAM (64u << 20)
#ifndef ROUNDS
#define ROUNDS 10
#endif

static long iterations = 2000000;
static int threads = 1, cross, with_table = 1;
static void *handoff[64][SLOTS];

static void *worker(void *arg)
{
	long id = (long)arg;
	uint8_t *stream = malloc(STREAM), *w = stream;
	void **mine = handoff[id], **theirs = handoff[cross ? (id + 1) % threads : id];
	for (int k = 0; k < SLOTS; k++) {
		void *p = malloc(16 + k);
		if (with_table)
			rt_heap_insert((uintptr_t)p, 16 + (uint64_t)k, FN_MALLOC, 1, 1);
		__atomic_store_n(&mine[k], p, __ATOMIC_RELEASE);
	}
	for (long i = 0; i < iterations; i++) {
		size_t k = (size_t)(i * 2654435761u) % SLOTS;
		uint64_t index = atomic_fetch_add_explicit(&call_index, 1, memory_order_relaxed);
		void *p = __atomic_exchange_n(&theirs[k], NULL, __ATOMIC_ACQ_REL);
		rt_heap_blk blk;
		if (p && with_table && rt_heap_remove((uintptr_t)p, FN_FREE, 0, 1, &blk) != HEAP_OK)
			abort();
		free(p);
		memcpy(w, &index, 8), memcpy(w + 8, &p, 8), w[16] = 1; /* the record */
		w = w + 20 + 40 > stream + STREAM ? stream : w + 20;
		size_t n = (size_t)(i % 512) + 16;
		p = malloc(n);
		index = atomic_fetch_add_explicit(&call_index, 1, memory_order_relaxed);
		memcpy(w, &index, 8), memcpy(w + 8, &p, 8), w[16] = 2;
		w = w + 20 + 40 > stream + STREAM ? stream : w + 20;
		if (with_table)
			rt_heap_insert((uintptr_t)p, n, FN_MALLOC, 1, index);
		void *old = __atomic_exchange_n(&mine[k], p, __ATOMIC_ACQ_REL);
		if (old && with_table && rt_heap_remove((uintptr_t)old, FN_FREE, 0, 1, &blk) != HEAP_OK)
			abort();
		free(old);
	}
	for (int k = 0; k < SLOTS; k++) { /* the next round starts empty */
		void *p = __atomic_exchange_n(&mine[k], NULL, __ATOMIC_ACQ_REL);
		rt_heap_blk blk;
		if (p && with_table && rt_heap_remove((uintptr_t)p, FN_FREE, 0, 1, &blk) != HEAP_OK)
			abort();
		free(p);
	}
	free(stream);
	return NULL;
}

static double run(void)
{
	struct rusage a, b;
	getrusage(RUSAGE_SELF, &a);
	pthread_t t[64];
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	getrusage(RUSAGE_SELF, &b);
	double s = (double)(b.ru_utime.tv_sec - a.ru_utime.tv_sec + b.ru_stime.tv_sec - a.ru_stime.tv_sec) +
		   (double)(b.ru_utime.tv_usec - a.ru_utime.tv_usec + b.ru_stime.tv_usec - a.ru_stime.tv_usec) / 1e6;
	return s * 1e9 / ((double)iterations * threads * 2);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		iterations = atol(argv[1]);
	if (argc > 2)
		threads = atoi(argv[2]) < 1 ? 1 : atoi(argv[2]) > 64 ? 64 : atoi(argv[2]);
	if (argc > 3)
		cross = atoi(argv[3]);
	double best[2] = {1e9, 1e9};
	for (int round = 0; round < 2 * ROUNDS; round++) { /* alternating, the best of each */
		with_table = round & 1;
		double ns = run();
		if (ns < best[with_table])
			best[with_table] = ns;
	}
	printf("%d thread(s)%s: %.1f ns per table operation (loop with table %.1f, without %.1f)\n", threads,
	       cross ? ", frees of another thread's blocks" : "", best[1] - best[0], best[1], best[0]);
	return 0;
}
