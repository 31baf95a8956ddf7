/* Heap bookkeeping cases compared with memcheck (cli/heapbook.sh):
 *   ties          loss records of several kinds that tie on total size
 *   reallocarray  blocks from reallocarray, one leaked, one kept
 *   fork          a forked child that leaks and keeps inherited blocks
 *   ctor          nothing itself: libtp_ctorlib.so's constructor, run
 *                 before the tracer's, allocated (linked in)
 *   none          no allocation of its own (the tracer's own traces) */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void tp_ctorlib_touch(void);

static void *keep[4];

static __attribute__((noinline)) void *lost(size_t n)
{
	void *p = malloc(n);
	memset(p, 1, n);
	return p;
}

/* total sizes of 64 bytes each: definitely lost (1 block, and 2 blocks
 * from another site), indirectly lost, possibly lost, still reachable */
static void ties(void)
{
	(void)lost(64);
	for (int i = 0; i < 2; i++)
		(void)lost(32);
	void **parent = malloc(16); /* definitely lost, 80 with its child */
	parent[0] = malloc(64);
	parent[1] = NULL;
	keep[0] = (char *)malloc(64) + 8; /* possibly lost */
	keep[1] = malloc(64);             /* still reachable */
}

static void arrays(void)
{
	int *a = reallocarray(NULL, 10, sizeof(int));
	a = reallocarray(a, 20, sizeof(int)); /* leaked */
	a[0] = 1;
	keep[2] = reallocarray(NULL, 6, 8);   /* still reachable */
	keep[2] = reallocarray(keep[2], 12, 8);
}

static int forked(void)
{
	keep[0] = malloc(100);  /* inherited, reachable in both */
	(void)lost(50);         /* inherited, lost in both */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		(void)lost(30);     /* the child's own leak */
		keep[1] = malloc(70);
		return 0;
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "none";
	if (!strcmp(what, "ties"))
		ties();
	else if (!strcmp(what, "reallocarray"))
		arrays();
	else if (!strcmp(what, "fork"))
		return forked();
	else if (!strcmp(what, "ctor"))
		tp_ctorlib_touch();
	return 0;
}
