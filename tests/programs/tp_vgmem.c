/* Every Valgrind memcheck error kind a C program can provoke, once each,
 * for the Valgrind XML reader's tests (tests/data/vgxml/generate.sh and
 * tests/cli/vgxml_live.sh run it under memcheck):
 *   InvalidRead, InvalidWrite, InvalidFree, MismatchedFree (operator
 *   new[] called by its mangled name, released with free), UninitCondition,
 *   UninitValue, SyscallParam, Overlap, FishyValue, InvalidJump (survived
 *   through a SIGSEGV handler), and with valgrind/memcheck.h ClientCheck,
 *   InvalidMemPool and two client messages (VALGRIND_PRINTF and
 *   VALGRIND_PRINTF_BACKTRACE, which become <clientmsg>s);
 *   an InvalidRead in a thread named "vg-worker" (<threadname>; valgrind
 *   3.19 does not escape that name, so it has no XML special character);
 *   leaks of the four kinds: 101 bytes definitely lost, a lost 48-byte
 *   list head with two 49-byte nodes indirectly lost, a 53-byte block
 *   possibly lost (kept through an interior pointer), a 55-byte block
 *   still reachable from a global.
 * With the argument "segv" it ends with a write through a null pointer:
 * memcheck's <fatal_signal>. Other arguments are ignored (the tests pass
 * some with XML special characters, to see them escaped in <arg>). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define TP_HAVE_MEMCHECK_H 1
#endif
#endif

struct node {
	struct node *next;
	char pad[40];
};

/* operator new[](unsigned long), from libstdc++ */
extern void *_Znam(size_t n);

static void *volatile global_keep;
static char *volatile interior_keep;
static sigjmp_buf jump_back;

/* Inlined even at -O0: memcheck's stack of the InvalidRead has an inline
 * chain, two <frame>s with the same <ip>. */
static inline __attribute__((always_inline)) char read_past(const char *p, size_t n)
{
	return p[n];
}

static void invalid_access(void)
{
	char *volatile p = malloc(10);
	volatile char c = read_past(p, 10); /* InvalidRead */
	(void)c;
	p[11] = 'x'; /* InvalidWrite */
	free(p);
	free(p); /* InvalidFree */
	free(_Znam(12)); /* MismatchedFree */
}

static void uninitialised(void)
{
	int *volatile u = malloc(4 * sizeof *u);
	if (u[0] > 3) /* UninitCondition */
		puts("uninitialised branch taken");
	char *volatile base = malloc(8);
	volatile char c = base[u[1] & 7]; /* UninitValue: an address */
	(void)c;
	char *buf = malloc(16);
	int fd = open("/dev/null", O_WRONLY);
	ssize_t w = write(fd, buf, 16); /* SyscallParam: write(buf) */
	(void)w;
	close(fd);
	free(buf);
	free(base);
	free(u);
}

static void overlap_and_fishy(void)
{
	char *p = malloc(32);
	strcpy(p, "overlap");
	strcpy(p, p + 1); /* Overlap (memcpy's goes unchecked on amd64) */
	size_t volatile huge = (size_t)-8;
	void *q = malloc(huge); /* FishyValue */
	free(q);
	free(p);
}

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(jump_back, 1);
}

static void invalid_jump(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, &old);
	if (!sigsetjmp(jump_back, 1)) {
		void (*volatile fn)(void) = (void (*)(void))(uintptr_t)0x10;
		fn(); /* InvalidJump, then SIGSEGV back here */
	}
	sigaction(SIGSEGV, &old, NULL);
}

static void client_requests(void)
{
#ifdef TP_HAVE_MEMCHECK_H
	char *buf = malloc(8);
	VALGRIND_CHECK_MEM_IS_DEFINED(buf, 8); /* ClientCheck */
	free(buf);
	static char pool_anchor;
	VALGRIND_MEMPOOL_FREE(&pool_anchor, buf); /* InvalidMemPool */
	VALGRIND_PRINTF("tp_vgmem: a client message with <markup> & an ampersand\n");
	VALGRIND_PRINTF_BACKTRACE("tp_vgmem: a client message with its stack\n");
#endif
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "vg-worker");
	char *volatile p = malloc(7);
	volatile char c = p[7]; /* InvalidRead in a named thread */
	(void)c;
	free(p);
	return NULL;
}

static void leaks(void)
{
	void *volatile direct = malloc(101);
	direct = NULL;
	struct node *volatile head = malloc(48);
	head->next = malloc(49);
	head->next->next = malloc(49);
	head->next->next->next = NULL;
	head = NULL;
	char *possible = malloc(53);
	interior_keep = possible + 10;
	possible = NULL;
	global_keep = malloc(55);
	(void)direct;
}

/* Clears the dead stack frames the leaked pointers were in: memcheck
 * scans stale stack words too. */
static void scrub_stack(void)
{
	volatile char junk[4096];
	memset((char *)junk, 0, sizeof junk);
}

int main(int argc, char **argv)
{
	invalid_access();
	uninitialised();
	overlap_and_fishy();
	invalid_jump();
	client_requests();
	pthread_t th;
	if (pthread_create(&th, NULL, worker, NULL) == 0)
		pthread_join(th, NULL);
	leaks();
	scrub_stack();
	puts("tp_vgmem: done");
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "segv")) {
		int *volatile null = NULL;
		*null = 1;
	}
	return 0;
}
