/* The /proc/self/maps reader and parser (maps.h). The file is read whole
 * (a line-by-line parse of a file that changes between reads would see
 * mappings twice or not at all), into 1 MiB of fresh pages doubled with
 * mremap as needed: no malloc, no stdio, only system calls that are
 * async-signal-safe. Read with pread from offset 0, so that the reserved
 * descriptor (fdres.h), taken when the program left none free, reads the
 * file afresh each time. */
#define _GNU_SOURCE
#include "maps.h"
#include "fdres.h"
#include "pages.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

static rt_fdres maps_res = RT_FDRES_INIT("/proc/self/maps", O_RDONLY);

void rt_maps_reserve(void) { rt_fdres_open(&maps_res); }

char *rt_maps_read(size_t *len, size_t *cap)
{
	size_t n = 0, size = 1 << 20;
	bool fresh = false;
	char *text = rt_pages(size);
	int fd = text ? rt_fdres_get(&maps_res, &fresh) : -1;
	if (fd < 0) {
		int err = errno;
		if (text)
			rt_pages_free(text, size);
		errno = err;
		return NULL;
	}
	ssize_t r;
	while ((r = pread(fd, text + n, size - 1 - n, (off_t)n)) > 0) {
		n += (size_t)r;
		if (size - 1 - n < 4096) {
			char *m = rt_pages_grow(text, size, size * 2);
			if (!m)
				break;
			text = m;
			size *= 2;
		}
	}
	if (fresh)
		close(fd);
	text[n] = '\0';
	*len = n;
	*cap = size;
	return text;
}

static uintptr_t hex(const char **p, const char *end)
{
	uintptr_t v = 0;
	for (; *p < end; (*p)++) {
		char c = **p;
		if (c >= '0' && c <= '9')
			v = v << 4 | (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uintptr_t)(c - 'a' + 10);
		else
			break;
	}
	return v;
}

static const char *skip_spaces(const char *p, const char *end)
{
	while (p < end && *p == ' ')
		p++;
	return p;
}

static const char *skip_field(const char *p, const char *end)
{
	p = skip_spaces(p, end);
	while (p < end && *p != ' ')
		p++;
	return p;
}

static bool parse_line(const char *p, const char *end, rt_maps_line *l)
{
	l->lo = hex(&p, end);
	if (p >= end || *p++ != '-')
		return false;
	l->hi = hex(&p, end);
	if (end - p < 4 || p[0] != ' ')
		return false;
	l->r = p[1] == 'r';
	l->w = p[2] == 'w';
	l->x = p[3] == 'x';
	p = skip_spaces(skip_field(p, end), end); /* perms */
	l->off = hex(&p, end);
	p = skip_spaces(skip_field(skip_field(p, end), end), end); /* dev, inode */
	l->path = p;
	l->path_len = (size_t)(end - p);
	return true;
}

bool rt_maps_next(const char **at, const char *end, rt_maps_line *l)
{
	while (*at < end) {
		const char *line = *at, *eol = line;
		while (eol < end && *eol != '\n' && *eol != '\0')
			eol++;
		*at = eol < end ? eol + 1 : end;
		if (parse_line(line, eol, l))
			return true;
	}
	return false;
}
