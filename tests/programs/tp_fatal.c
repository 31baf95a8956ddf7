/* Leaks 111 bytes (and keeps 22 reachable), then dies by a signal whose
 * default action kills, as the argument says:
 *   segv     dereferences NULL
 *   abort    abort()
 *   term     raise(SIGTERM)
 *   wait     prints "ready" and waits for a signal from outside
 *   threads  the same with 4 threads allocating and freeing, the main
 *            thread blocking SIGTERM: a SIGTERM sent from outside comes
 *            to a thread that is often inside malloc or free
 *   corrupt  overwrites a block's neighbour's header: glibc's free aborts
 *            (SIGABRT inside the tracer's free)
 *   handled  its own SIGTERM handler, which exits with 3
 *   default  sets a SIGTERM handler, then the default again (signal()
 *            and sigaction must read back what it set), then raises it */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *volatile keep;

static void on_term(int sig)
{
	(void)sig;
	_exit(3);
}

static void *churn(void *arg)
{
	(void)arg;
	for (;;) {
		void *volatile p = malloc(64);
		free(p);
	}
	return NULL;
}

static void wait_threads(void)
{
	pthread_t t;
	for (int i = 0; i < 4; i++)
		pthread_create(&t, NULL, churn, NULL);
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	write(1, "ready\n", 6);
	for (;;)
		pause();
}

/* What the program reads back of SIGTERM after setting it: exits 4 when
 * it is not what it set. */
static void set_default(void)
{
	struct sigaction sa = {.sa_handler = SIG_DFL, .sa_flags = SA_RESTART}, old;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	if (signal(SIGTERM, on_term) != SIG_DFL || signal(SIGTERM, SIG_DFL) != on_term)
		exit(4);
	if (sigaction(SIGTERM, NULL, &old) || old.sa_handler != SIG_DFL)
		exit(4);
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGTERM, NULL, &old) || old.sa_handler != SIG_DFL ||
	    !(old.sa_flags & SA_RESTART) || !sigismember(&old.sa_mask, SIGUSR1))
		exit(4);
	write(1, "default read back\n", 18);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "segv";
	char *p = malloc(111);
	memset(p, 1, 111);
	keep = malloc(22);
	p = NULL;
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "term"))
		raise(SIGTERM);
	if (!strcmp(how, "corrupt")) {
		char *q = malloc(24), *r = malloc(24);
		for (int i = 0; i < 48; i++)
			((volatile char *)q)[i] = (char)0xff;
		free(r);
	}
	if (!strcmp(how, "handled")) {
		signal(SIGTERM, on_term);
		raise(SIGTERM);
	}
	if (!strcmp(how, "default")) {
		set_default();
		raise(SIGTERM);
	}
	if (!strcmp(how, "threads"))
		wait_threads();
	if (!strcmp(how, "wait")) {
		write(1, "ready\n", 6);
		for (;;)
			pause();
	}
	*(volatile int *)p = 0;
	return 0;
}
