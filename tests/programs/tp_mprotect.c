/* A heap holding pages the program made inaccessible (issue 20): the
 * leak check must skip them, as memcheck's does, and run to its end
 * although the program catches SIGSEGV itself.
 *   - keep: a 200,000-byte block, pointed to by a global: still
 *     reachable. Its pages but the first are made PROT_NONE, then the
 *     page holding its pointer to a 1,000-byte block is made readable
 *     again: that block is still reachable too (reached through the
 *     readable page).
 *   - inner: a 200,000-byte block pointed to from its start only from an
 *     unreadable page of keep, and from a global only 100 bytes in:
 *     possibly lost, since the unreadable page is not scanned.
 * The program checks that its own SIGSEGV handler (siglongjmp out of it)
 * sees a fault on an unreadable page, and leaves the pages unreadable at
 * exit. In use at exit: 401,000 bytes in 3 blocks; memcheck: possibly
 * lost 200,000 bytes in 1 block, still reachable 201,000 in 2.
 * With the argument "header", keep's first page (its start and malloc's
 * header) is unreadable too: a pointer to an unreadable address is no
 * pointer for memcheck, so keep is definitely lost, the 1,000-byte block
 * indirectly. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BIG 200000
#define SMALL_AT 4000 /* the word of keep pointing at the 1,000-byte block */
#define INNER_AT 20000 /* the word of keep pointing at inner's start */

static char **keep;
static char *inner_100;
static sigjmp_buf env;
static char *volatile sink; /* a read nothing uses is no read under valgrind */

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(env, 1);
}

static uintptr_t page_of(const void *p, long page)
{
	return (uintptr_t)p & ~(uintptr_t)(page - 1);
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	keep = calloc(BIG / sizeof *keep, sizeof *keep);
	char *inner = calloc(BIG, 1);
	keep[SMALL_AT] = malloc(1000);
	keep[INNER_AT] = inner;
	inner_100 = inner + 100;
	inner = NULL;
	/* keep's pages unreadable (with "header", its first one too);
	 * then the page of keep[SMALL_AT] readable again */
	bool header = argc > 1 && !strcmp(argv[1], "header");
	uintptr_t lo = page_of(keep, page) + (header ? 0 : (uintptr_t)page);
	uintptr_t hi = page_of((char *)keep + BIG, page);
	if (mprotect((void *)lo, hi - lo, PROT_NONE) ||
	    mprotect((void *)page_of(&keep[SMALL_AT], page), (size_t)page, PROT_READ | PROT_WRITE)) {
		perror("mprotect");
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_segv};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	volatile int faulted = 0;
	if (!sigsetjmp(env, 1))
		sink = *(char *volatile *)&keep[INNER_AT];
	else
		faulted = 1;
	static const char yes[] = "fault caught\n", no[] = "no fault\n";
	if (write(1, faulted ? yes : no, faulted ? sizeof yes - 1 : sizeof no - 1) < 0)
		return 1;
	return 0;
}
