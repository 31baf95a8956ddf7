/* The tracer's address encoder (src/preload/preload.h rt_put_addr), a
 * word store for the 7-byte addresses of every memory CALL record,
 * against the format's reference encoder (rt_put_varint) and decoder
 * (rt_varint_get): the same bytes, the same length, the value read back,
 * on both sides of each bound of its fast path (2^42 and 2^49), on real
 * heap and stack addresses of this process and on spread values; and the
 * one byte it writes past its end is all it touches. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preload.h"

static void check_one(uint64_t v)
{
	uint8_t want[RT_VARINT_MAX + 8], got[RT_VARINT_MAX + 8];
	memset(want, 0xa5, sizeof want);
	memset(got, 0xa5, sizeof got);
	int n = (int)(rt_put_varint(want, v) - want);
	int m = (int)(rt_put_addr(got, v) - got);
	assert_int_equal(m, n);
	assert_memory_equal(got, want, (size_t)n);
	uint64_t back = 0;
	assert_int_equal(rt_varint_get(got, got + m, &back), m);
	assert_true(back == v);
	/* at most one byte past the varint (the next field's place) */
	for (size_t i = (size_t)n + 1; i < sizeof got; i++)
		assert_int_equal(got[i], 0xa5);
}

static void test_bounds(void **state)
{
	(void)state;
	static const uint64_t bounds[] = {UINT64_C(1) << 42, UINT64_C(1) << 49, UINT64_C(1) << 35,
					  UINT64_C(1) << 56, UINT64_C(1) << 63};
	for (size_t b = 0; b < sizeof bounds / sizeof *bounds; b++)
		for (int64_t d = -3; d <= 3; d++)
			check_one(bounds[b] + (uint64_t)d);
	check_one(0);
	check_one(127);
	check_one(128);
	check_one(UINT64_MAX);
}

static void test_real_addresses(void **state)
{
	(void)state;
	int local;
	void *heap = malloc(64), *big = malloc(1 << 20);
	check_one((uint64_t)(uintptr_t)heap);
	check_one((uint64_t)(uintptr_t)big);
	check_one((uint64_t)(uintptr_t)&local);
	check_one((uint64_t)(uintptr_t)&check_one);
	free(heap);
	free(big);
}

static void test_spread(void **state)
{
	(void)state;
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		check_one(x >> (i % 64));          /* every length */
		check_one((UINT64_C(1) << 42) + (x >> 22)); /* the fast path's range */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_real_addresses),
		cmocka_unit_test(test_spread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
