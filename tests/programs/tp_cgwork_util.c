/* The second source file of tp_cgwork: recursion (directly and through
 * qsort's callback) and a call into libc. */
#include "tp_cgwork.h"

#include <stdlib.h>

uint64_t cg_fib(int n)
{
	return n < 2 ? (uint64_t)n : cg_fib(n - 1) + cg_fib(n - 2);
}

int cg_ackermann(int m, int n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return cg_ackermann(m - 1, 1);
	return cg_ackermann(m - 1, cg_ackermann(m, n - 1));
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

uint32_t cg_sort_and_hash(uint32_t *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_u32);
	return cg_sum_mixed(v, n);
}
