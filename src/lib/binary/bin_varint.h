/* Varints (format/varint.h's LEB128) eight bytes at a time, for the
 * reader's inner loops: bin_decode.c's CALL fields and bin_zchunk.c's
 * column decoder, which reads columns and writes rows. The caller has 8
 * readable (or writable) bytes at p; values of 9 and 10 bytes, and ends
 * of buffers, are left to format/varint.h's byte loops.
 *
 * Why: a loop per byte costs a branch per byte whose count varies from
 * field to field (an address is 6 bytes, an id 1); one 8-byte load or
 * store and three shift-and-mask steps take the same time for any length
 * up to 8 (callgrind on churn: 27 instructions a varint read by the loop,
 * 13 so). Little-endian only; elsewhere both report "not taken". */
#ifndef RT_BIN_VARINT_H
#define RT_BIN_VARINT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define RT_BIN_VARINT8 1
#else
#define RT_BIN_VARINT8 0
#endif

/* The varint at p (8 bytes readable) into *v: its length, or 0 when it
 * is longer than 8 bytes (or on a big-endian machine). */
static inline __attribute__((always_inline)) int rt_bin_varint8_get(const uint8_t *p, uint64_t *v)
{
#if RT_BIN_VARINT8
	uint64_t w;
	memcpy(&w, p, sizeof w);
	uint64_t stop = ~w & 0x8080808080808080ull;
	if (__builtin_expect(stop == 0, 0))
		return 0;
	w &= stop ^ (stop - 1); /* the bytes up to the last one */
	w = (w & 0x007f007f007f007full) | ((w & 0x7f007f007f007f00ull) >> 1);
	w = (w & 0x00003fff00003fffull) | ((w & 0x3fff00003fff0000ull) >> 2);
	w = (w & 0x000000000fffffffull) | ((w & 0x0fffffff00000000ull) >> 4);
	*v = w;
	return (__builtin_ctzll(stop) >> 3) + 1;
#else
	(void)p;
	(void)v;
	return 0;
#endif
}

/* v as a varint at p (8 bytes writable, of which the varint's length are
 * meant): its length, or 0 when it takes more than 8 bytes (v >= 2^56). */
static inline __attribute__((always_inline)) int rt_bin_varint8_put(uint8_t *p, uint64_t v)
{
#if RT_BIN_VARINT8
	if (v >> 56)
		return 0;
	int n = v ? (70 - __builtin_clzll(v)) / 7 : 1; /* ceil(bits / 7), 1 for 0 */
	uint64_t w = v;
	w = (w & 0x000000000fffffffull) | ((w & 0x00fffffff0000000ull) << 4);
	w = (w & 0x00003fff00003fffull) | ((w & 0x0fffc0000fffc000ull) << 2);
	w = (w & 0x007f007f007f007full) | ((w & 0x3f803f803f803f80ull) << 1);
	w |= 0x8080808080808080ull & ((1ull << (8 * (n - 1))) - 1); /* continuation bits */
	memcpy(p, &w, sizeof w);
	return n;
#else
	(void)p;
	(void)v;
	return 0;
#endif
}

#endif
