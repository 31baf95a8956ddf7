/* Shared by tp_cgwork.c and tp_cgwork_util.c: small functions that the
 * compiler inlines into their callers at -O2 (callgrind reports their
 * cost under the header with fi=/fe= lines). */
#ifndef TP_CGWORK_H
#define TP_CGWORK_H

#include <stdint.h>

static inline uint32_t cg_mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	return x;
}

static inline uint32_t cg_sum_mixed(const uint32_t *v, int n)
{
	uint32_t s = 0;
	for (int i = 0; i < n; i++)
		s += cg_mix(v[i]);
	return s;
}

uint64_t cg_fib(int n);
uint32_t cg_sort_and_hash(uint32_t *v, int n);
int cg_ackermann(int m, int n);

#endif
