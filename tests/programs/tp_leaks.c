/* Known leaks: 3 x 100 bytes from leak_a, 2 x 200 bytes (calloc 10 x 20)
 * from leak_b, one realloc'ed block of 300 bytes; everything else freed.
 * Checks that errno is what the allocator set; exits with 7. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void *leak_a(void) { return malloc(100); }
__attribute__((noinline)) static void *leak_b(void) { return calloc(10, 20); }

int main(void)
{
	for (int i = 0; i < 3; i++)
		(void)leak_a();
	for (int i = 0; i < 2; i++)
		(void)leak_b();
	char *r = malloc(10);
	r = realloc(r, 300);
	(void)r;
	for (int i = 0; i < 1000; i++)
		free(malloc((size_t)i + 1));
	errno = 1234;
	free(malloc(16));
	int kept = errno;
	void *huge = malloc(SIZE_MAX / 2);
	int oom = errno;
	printf("errno kept %d, huge %s, errno %s\n", kept, huge ? "allocated" : "refused",
	       oom == ENOMEM ? "ENOMEM" : strerror(oom));
	return 7;
}
