/* Allocations in bursts, a short sleep after each, then the major page
 * faults the process took (getrusage) on stdout: under `rtrace run`,
 * the trace's pages are in the page cache before the tracer writes them
 * (src/cli/run_prefault.c), so its stores to them fault no page in.
 * The sleeps leave rtrace run's thread time to keep ahead of the tracer
 * on a busy machine: the test checks the pages, not a speed.
 * usage: tp_pagefaults [bursts] [pairs a burst] [threads] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static long bursts = 40, pairs = 20000;

static void *work(void *arg)
{
	void *slots[64] = {0};
	struct timespec pause = {0, 3000000};
	(void)arg;
	for (long b = 0; b < bursts; b++) {
		for (long i = 0; i < pairs; i++) {
			free(slots[i % 64]);
			slots[i % 64] = malloc((size_t)(i % 200) + 1);
		}
		nanosleep(&pause, NULL);
	}
	for (int k = 0; k < 64; k++)
		free(slots[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	bursts = argc > 1 ? atol(argv[1]) : bursts;
	pairs = argc > 2 ? atol(argv[2]) : pairs;
	int threads = argc > 3 ? atoi(argv[3]) : 1;
	pthread_t t[8];
	for (int i = 1; i < threads && i < 8; i++)
		pthread_create(&t[i], NULL, work, NULL);
	work(NULL);
	for (int i = 1; i < threads && i < 8; i++)
		pthread_join(t[i], NULL);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("majflt %ld\n", ru.ru_majflt);
	return 0;
}
