/* Helpers shared by the unit tests (include after <cmocka.h>, whose
 * fail_msg they use): small, static, one copy for every test. */
#ifndef RT_TEST_UTIL_H
#define RT_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

/* The whole of file dir/name (name alone when dir is NULL), with a NUL
 * after its *len bytes for string comparisons; the test fails when the
 * file cannot be read. Read in a loop, not sized with ftell, so that any
 * file, even one that is not seekable, reads whole. */
static inline char *test_slurp(const char *dir, const char *name, size_t *len)
{
	char path[4352];
	snprintf(path, sizeof path, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
	FILE *fp = fopen(path, "rb");
	if (!fp)
		fail_msg("cannot open '%s'", path);
	size_t cap = 1 << 16, n = 0, r;
	char *buf = malloc(cap + 1);
	while (buf && (r = fread(buf + n, 1, cap - n, fp)) > 0)
		if ((n += r) == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	if (!buf || ferror(fp))
		fail_msg("cannot read '%s'", path);
	fclose(fp);
	buf[n] = '\0';
	*len = n;
	return buf;
}

#endif
