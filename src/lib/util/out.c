/* rt_out: a buffer that is flushed to a descriptor when full, or grows in
 * memory (fd -1), and the number formatting every writer uses (see
 * out.h for why it is hand-rolled). */
#include "util/out.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define OUT_BUF (1u << 20)

void rt_out_init_fd(rt_out *o, int fd)
{
	o->fd = fd;
	o->cap = OUT_BUF;
	o->buf = rt_xmalloc(o->cap);
	o->len = 0;
	o->err = 0;
}

void rt_out_init_mem(rt_out *o)
{
	rt_out_init_fd(o, -1);
}

static void out_flush(rt_out *o)
{
	size_t off = 0;
	while (off < o->len && !o->err) {
		ssize_t w = write(o->fd, o->buf + off, o->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			o->err = -errno;
		else
			off += (size_t)w;
	}
	o->len = 0;
}

void rt_out_reserve_slow(rt_out *o, size_t n)
{
	if (o->fd >= 0) {
		out_flush(o);
		if (o->cap >= n)
			return;
	}
	rt_grow((void **)&o->buf, &o->cap, o->len + n, 1);
}

int rt_out_finish(rt_out *o)
{
	if (o->fd >= 0) {
		out_flush(o);
		free(o->buf);
		o->buf = NULL;
		o->cap = 0;
	}
	return o->err;
}

int rt_out_write_fd(int fd, rt_out_fill fill, const void *model, const void *opts)
{
	rt_out o;
	rt_out_init_fd(&o, fd);
	fill(&o, model, opts);
	return rt_out_finish(&o);
}

char *rt_out_write_mem(size_t *len, rt_out_fill fill, const void *model, const void *opts)
{
	rt_out o;
	rt_out_init_mem(&o);
	fill(&o, model, opts);
	rt_out_ch(&o, '\0');
	rt_out_finish(&o);
	if (len)
		*len = o.len - 1;
	return o.buf;
}

/* The one number formatter: the digits of v in `base` (10 or 16) from the
 * right, zero padded to `width` (at most 24 digits). Inlined into each
 * caller with a constant base, the division becomes a multiply (10) or a
 * shift (16): these print every number of every writer. */
static inline __attribute__((always_inline)) void out_digits(rt_out *o, uint64_t v, int width,
							      unsigned base, const char *digits)
{
	char tmp[24];
	int i = 24;
	do {
		tmp[--i] = digits[base == 16 ? v & 15 : v % base];
		v = base == 16 ? v >> 4 : v / base; /* the shift, as GCC keeps its flags */
	} while (v);
	while (24 - i < width && i > 0)
		tmp[--i] = '0';
	rt_out_mem(o, tmp + i, (size_t)(24 - i));
}

void rt_out_u64(rt_out *o, uint64_t v)
{
	out_digits(o, v, 0, 10, "0123456789");
}

void rt_out_dec_pad(rt_out *o, uint64_t v, int width)
{
	out_digits(o, v, width, 10, "0123456789");
}

void rt_out_hex(rt_out *o, uint64_t v, int width)
{
	out_digits(o, v, width, 16, "0123456789abcdef");
}

void rt_out_hex_upper(rt_out *o, uint64_t v, int width)
{
	out_digits(o, v, width, 16, "0123456789ABCDEF");
}
