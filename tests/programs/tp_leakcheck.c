/* Known leak structures for the leak check, one per argument (all of them
 * without one). Each allocation size is unique to its structure so that
 * the verdicts can be told apart:
 *   direct    3 x 101 bytes, no pointer left: definitely lost
 *   list      a lost list: head 48 bytes definitely lost, 4 x 49-byte
 *             nodes indirectly lost
 *   cycle     two 52-byte blocks pointing at each other, nothing else:
 *             one definitely, one indirectly lost
 *   interior  a 53-byte block kept only through a pointer 10 bytes into
 *             it: possibly lost; a 54-byte block it points to (by its
 *             start) is possibly lost too
 *   globals   a global holds a 55-byte block, which holds a 56-byte one:
 *             both still reachable
 *   thread    a 57-byte block referenced only from a blocked thread's
 *             stack: still reachable
 *   tls       __thread variables of the main thread and of a blocked
 *             thread hold 58- and 59-byte blocks: still reachable
 *   realloc   a block grown by realloc (60 -> 600 bytes) then lost
 * Prints one line; exits with 0. The stack the structures were built on is
 * scrubbed before exit: memcheck ignores the stale pointers left in dead
 * stack frames since it knows that memory is uninitialised, a
 * conservative scan cannot tell them from live ones. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
	struct node *next;
	char pad[41];
};

static void *global_keep;
static char *interior_keep;
static __thread void *tls_main;
static __thread void *tls_thread;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready;

__attribute__((noinline)) static void direct(void)
{
	for (int i = 0; i < 3; i++) {
		char *volatile p = malloc(101);
		p[0] = 1;
	}
}

__attribute__((noinline)) static void list(void)
{
	struct node *head = malloc(48);
	head->next = NULL;
	for (int i = 0; i < 4; i++) {
		struct node *n = malloc(49);
		n->next = head->next;
		head->next = n;
	}
}

__attribute__((noinline)) static void cycle(void)
{
	void **a = malloc(52), **b = malloc(52);
	*a = b;
	*b = a;
}

__attribute__((noinline)) static void interior(void)
{
	char *p = malloc(53);
	void **q = malloc(54);
	*q = NULL;
	memcpy(p, &q, sizeof q); /* the 53-byte block points to the 54-byte one */
	interior_keep = p + 10;
}

__attribute__((noinline)) static void globals(void)
{
	void **p = malloc(55);
	*p = malloc(56);
	global_keep = p;
}

static void *blocked(void *arg)
{
	void *volatile mine = malloc(57);
	tls_thread = malloc(59);
	pthread_mutex_lock(&lock);
	ready = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	for (;;)
		pause();
	return mine ? arg : NULL;
}

__attribute__((noinline)) static void start_blocked_thread(void)
{
	pthread_t t;
	pthread_create(&t, NULL, blocked, NULL);
	pthread_mutex_lock(&lock);
	while (!ready)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) static void grown(void)
{
	char *volatile p = malloc(60);
	p = realloc(p, 600);
	p[0] = 1;
}

/* Overwrites the dead frames below main's with zeros. */
__attribute__((noinline)) static void scrub_stack(void)
{
	volatile char buf[16384];
	memset((char *)buf, 0, sizeof buf);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	bool all = !strcmp(what, "all");
	if (all || !strcmp(what, "direct"))
		direct();
	if (all || !strcmp(what, "list"))
		list();
	if (all || !strcmp(what, "cycle"))
		cycle();
	if (all || !strcmp(what, "interior"))
		interior();
	if (all || !strcmp(what, "globals"))
		globals();
	if (all || !strcmp(what, "thread") || !strcmp(what, "tls"))
		start_blocked_thread();
	if (all || !strcmp(what, "tls"))
		tls_main = malloc(58);
	if (all || !strcmp(what, "realloc"))
		grown();
	scrub_stack();
	printf("leakcheck %s\n", what);
	return 0;
}
