/* Buffered output with hand-rolled number formatting: writers print tens
 * of millions of records, and stdio's printf costs more than the parse. */
#ifndef RT_OUT_H
#define RT_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct rt_out {
	int fd;       /* -1: grow in memory */
	char *buf;
	size_t len, cap;
	int err;      /* first -errno seen */
} rt_out;

void rt_out_init_fd(rt_out *o, int fd);
void rt_out_init_mem(rt_out *o);
/* Flushes; returns 0 or the first -errno. Keeps the memory buffer. */
int rt_out_finish(rt_out *o);
void rt_out_reserve_slow(rt_out *o, size_t n);

/* Every writer's two entry points (X_write_fd, X_write_mem) over one
 * function that writes the whole output of `model` into o. _fd returns 0
 * or the first -errno; _mem a malloc'ed, NUL-terminated buffer of *len
 * bytes (the NUL not counted). */
typedef void (*rt_out_fill)(rt_out *o, const void *model, const void *opts);
int rt_out_write_fd(int fd, rt_out_fill fill, const void *model, const void *opts);
char *rt_out_write_mem(size_t *len, rt_out_fill fill, const void *model, const void *opts);

static inline void rt_out_reserve(rt_out *o, size_t n)
{
	if (o->cap - o->len < n)
		rt_out_reserve_slow(o, n);
}

static inline void rt_out_mem(rt_out *o, const void *s, size_t n)
{
	rt_out_reserve(o, n);
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static inline void rt_out_str(rt_out *o, const char *s)
{
	rt_out_mem(o, s, strlen(s));
}

static inline void rt_out_ch(rt_out *o, char c)
{
	rt_out_reserve(o, 1);
	o->buf[o->len++] = c;
}

/* Decimal, as few digits as needed. */
void rt_out_u64(rt_out *o, uint64_t v);
/* Lower-case hex without prefix; at least `width` digits, zero padded. */
void rt_out_hex(rt_out *o, uint64_t v, int width);
/* The same in upper case (Valgrind's addresses). */
void rt_out_hex_upper(rt_out *o, uint64_t v, int width);
/* Zero-padded decimal of at least `width` digits. */
void rt_out_dec_pad(rt_out *o, uint64_t v, int width);

#endif
