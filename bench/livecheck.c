/* Leak checks while the program runs, for bench/livecheck.sh: N live
 * blocks of 32 bytes in chains of 8 (as bench/liveheap.c: a global keeps
 * the newest, every other run of 8 is lost), then K checks, each after
 * N/K more blocks: under valgrind with VALGRIND_DO_LEAK_CHECK, else with
 * the check signal SIG sent to itself (rtrace run --check-signal) and a
 * malloc/free pair, the heap call the check runs at (SIG 0: none).
 * usage: livecheck N K SIG */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define RUNNING_ON_VALGRIND 0
#define VALGRIND_DO_LEAK_CHECK
#endif

static void **newest;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000, k = argc > 2 ? atol(argv[2]) : 5;
	int sig = argc > 3 ? atoi(argv[3]) : SIGUSR2;
	void **prev = NULL;
	for (long c = 1; c <= k; c++) {
		for (long i = 0; i < n / k; i++) {
			void **b = malloc(32);
			b[0] = i % 8 == 7 ? NULL : prev;
			prev = b;
		}
		newest = prev;
		if (RUNNING_ON_VALGRIND) {
			VALGRIND_DO_LEAK_CHECK;
		} else {
			kill(getpid(), sig);
			free(malloc(1));
		}
	}
	printf("livecheck: %ld blocks, %ld checks\n", n, k);
	return 0;
}
