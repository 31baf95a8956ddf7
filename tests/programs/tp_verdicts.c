/* Programs on which memcheck's verdicts once differed from rtrace's
 * (issue 20), one per argument, each compared with memcheck's by
 * cli/verdicts.sh:
 *   freed   every block it allocated freed before exit: no leak is
 *           possible, memcheck says so instead of a LEAK SUMMARY
 *   fishy   allocation functions called with sizes negative as signed
 *           numbers: memcheck's FishyValue errors, one line each; prints
 *           what each call returned (NULL or not, errno), which must be
 *           what libc returns without the tracer; frees what it got
 *   stale   three blocks reallocated to 5 bytes, whose pointers die with
 *           the frame that held them: definitely lost, 15 bytes in 3
 *           blocks, as memcheck says (no copy left in a dead frame, a
 *           register or the tracer's memory may keep one reachable)
 * Uses no stdio, whose buffers would stay in use. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NEG ((size_t)-1) /* hidden from the compiler's size warnings */
static volatile size_t neg = NEG;

/* "name: null|block errno\n" on stdout, without stdio; frees p. */
static void said(const char *name, void *p, int err)
{
	char buf[64];
	size_t n = strlen(name);
	memcpy(buf, name, n);
	const char *what = p ? ": block " : ": null ";
	memcpy(buf + n, what, strlen(what));
	n += strlen(what);
	buf[n++] = (char)('0' + err / 10 % 10);
	buf[n++] = (char)('0' + err % 10);
	buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		_exit(1);
	free(p);
}

#define CALL(name, expr)                                                        \
	do {                                                                    \
		errno = 0;                                                      \
		void *p_ = (expr);                                              \
		said(name, p_, errno);                                          \
	} while (0)

/* memcheck's fishy checks, each in its own line (its own context). */
static int fishy(void)
{
	void *q = NULL, *volatile r = malloc(8); /* volatile: realloc(r) fails, r stays */
	CALL("malloc", malloc(neg));
	CALL("calloc(0, -1)", calloc(0, neg));
	CALL("calloc(-1, -1)", calloc(neg, neg)); /* wraps: no error */
	CALL("calloc(-1, 0)", calloc(neg, 0));
	CALL("realloc(NULL)", realloc(NULL, neg));
	CALL("memalign", memalign(16, neg));
	errno = posix_memalign(&q, 16, neg);
	said("posix_memalign", q, errno);
	CALL("valloc", valloc(neg));
	CALL("aligned_alloc", aligned_alloc(16, neg));
	CALL("realloc", realloc(r, neg));
	free(r);
	return 0;
}

/* Allocates and frees a few blocks: nothing is left at exit. */
static int freed(void)
{
	void *p[4];
	for (int i = 0; i < 4; i++)
		p[i] = malloc(16u << i);
	p[1] = realloc(p[1], 300);
	for (int i = 0; i < 4; i++)
		free(p[i]);
	return 0;
}

__attribute__((noinline)) static void stale(void)
{
	char *x = malloc(5), *y = malloc(10), *z = malloc(2);
	x = realloc(x, 5);
	y = realloc(y, 5);
	z = realloc(z, 5);
	__asm__ volatile("" ::"r"(x), "r"(y), "r"(z));
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "freed"))
		return freed();
	if (!strcmp(what, "fishy"))
		return fishy();
	if (!strcmp(what, "stale")) {
		stale();
		return 0;
	}
	return 2;
}
