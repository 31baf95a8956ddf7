/* A heap of many live blocks at exit, for the cost of the leak check's
 * exit scan: N blocks of 32 bytes (default 1,000,000), each holding a
 * pointer to the previous one except every 8th, which cuts the chain: a
 * global keeps the newest 8 (still reachable), every other run of 8 is a
 * definitely lost block with 7 indirectly lost behind it.
 * usage: liveheap [N] */
#include <stdio.h>
#include <stdlib.h>

static void **newest;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	void **prev = NULL;
	for (long i = 0; i < n; i++) {
		void **b = malloc(32);
		b[0] = i % 8 == 7 ? NULL : prev; /* the chain breaks here and there */
		prev = b;
	}
	newest = prev;
	printf("liveheap: %ld blocks\n", n);
	return 0;
}
