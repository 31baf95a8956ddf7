/* LEB128 varints of the binary trace format (docs/binary-format.md):
 * 7 bits per byte, low group first, at most 10 bytes for 64 bits; svarint
 * is zig-zag on top. Header only and inline, shared by the tracer (its
 * hot path writes them) and the reader. */
#ifndef RT_VARINT_H
#define RT_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define RT_VARINT_MAX 10 /* bytes of the longest varint (64 bits) */

/* rt_varint_get results other than a length. */
enum {
	RT_VARINT_END = 0,   /* the buffer ended inside the varint */
	RT_VARINT_LONG = -1, /* more than RT_VARINT_MAX bytes */
	RT_VARINT_BIG = -2,  /* 10 bytes holding more than 64 bits */
};

/* Decodes the varint at p (p < end allowed to be false: then END).
 * Returns its length in bytes, or one of the negative codes above / END. */
static inline int rt_varint_get(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (int i = 0; i < RT_VARINT_MAX; i++) {
		if (p + i >= end)
			return RT_VARINT_END;
		uint8_t b = p[i];
		/* the 10th byte holds bit 63 only */
		if (i == RT_VARINT_MAX - 1 && (b & 0x7f) > 1)
			return (b & 0x80) ? RT_VARINT_LONG : RT_VARINT_BIG;
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = x;
			return i + 1;
		}
	}
	return RT_VARINT_LONG;
}

/* Encodes v at p (room for RT_VARINT_MAX bytes); returns the end. The
 * tracer's records are chains of these, on its hot path: inline. */
static inline uint8_t *rt_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* The same; returns the length. */
static inline int rt_varint_put(uint8_t *p, uint64_t v)
{
	return (int)(rt_put_varint(p, v) - p);
}

static inline uint64_t rt_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* An svarint: v zig-zagged, then a varint. */
static inline uint8_t *rt_put_svarint(uint8_t *p, int64_t v)
{
	return rt_put_varint(p, rt_zigzag(v));
}

static inline int64_t rt_unzigzag(uint64_t v)
{
	return (int64_t)((v >> 1) ^ (0 - (v & 1)));
}

#endif
