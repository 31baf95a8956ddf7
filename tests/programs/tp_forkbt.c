/* A parent with many stacks, then a forked child's first allocation:
 * prints the child's private dirty memory (Private_Dirty of
 * /proc/self/smaps_rollup, kB) before and after it, "child dirty A B".
 * The tracer's stack cache (4096 stacks: 96 KiB of slots or more) is
 * emptied in the child at its first record; dropping its pages keeps them
 * out of the child, where clearing them copied each (issue 21). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BITS 12

static volatile int sink;
static void *blocks[1 << BITS];

/* a stack of its own for each value of bits: two call sites a level */
static __attribute__((noinline)) void *walk(unsigned bits, int n)
{
	void *p;
	if (!n)
		return malloc(8);
	if (bits & 1) {
		p = walk(bits >> 1, n - 1);
		sink += 1;
	} else {
		p = walk(bits >> 1, n - 1);
		sink += 2;
	}
	return p;
}

/* read without stdio: no allocation, which would be the child's first */
static long private_dirty(void)
{
	static char buf[4096];
	int fd = open("/proc/self/smaps_rollup", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	const char *at = strstr(buf, "Private_Dirty:");
	return at ? atol(at + 14) : -1;
}

int main(void)
{
	for (unsigned i = 0; i < 1u << BITS; i++)
		blocks[i] = walk(i, BITS);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		long a = private_dirty();
		free(malloc(16));
		long b = private_dirty();
		printf("child dirty %ld %ld\n", a, b);
		fflush(stdout);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	for (unsigned i = 0; i < 1u << BITS; i++)
		free(blocks[i]);
	return 0;
}
