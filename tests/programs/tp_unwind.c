/* Stacks that exercise the tracer's unwinder: recursion of varying depth
 * (deeper than the default 32-frame limit too), frames with a frame
 * pointer and with alloca (rbp-based rules), allocations in signal
 * handlers on the thread's stack and on an alternate signal stack, a
 * longjmp out of a deep chain, and all of it in several threads.
 * Built with -O2: no frame pointers unless a function asks for one.
 * usage: tp_unwind [rounds] */
#include <alloca.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rounds = 2000;
static volatile sig_atomic_t in_handler;

static void *keep(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void plain_chain(int depth, size_t n)
{
	if (depth > 0) {
		plain_chain(depth - 1, n);
		__asm__ volatile("" ::: "memory"); /* no tail call */
		return;
	}
	free(keep(malloc(n)));
}

__attribute__((noinline, optimize("no-omit-frame-pointer"))) static void fp_chain(int depth, size_t n)
{
	if (depth > 0) {
		fp_chain(depth - 1, n);
		__asm__ volatile("" ::: "memory");
		return;
	}
	plain_chain((int)(n % 5), n);
}

/* alloca makes the compiler address the frame through rbp */
__attribute__((noinline)) static void alloca_chain(int depth, size_t n)
{
	char *buf = alloca(16 + n % 200);
	memset(buf, (int)depth, 16);
	keep(buf);
	if (depth > 0) {
		alloca_chain(depth - 1, n);
		__asm__ volatile("" ::: "memory");
		return;
	}
	free(keep(calloc(1, n)));
}

static void on_signal(int sig)
{
	(void)sig;
	in_handler = 1;
	plain_chain(3, 24); /* malloc in a handler: not async-signal-safe in
			       general, fine here (the signal is raised
			       synchronously, outside malloc) */
	in_handler = 0;
}

static __thread jmp_buf jump;
static __thread volatile int jump_armed;

__attribute__((noinline)) static void jump_chain(int depth)
{
	if (depth == 0) {
		free(keep(malloc(8)));
		if (jump_armed)
			longjmp(jump, 1);
		return;
	}
	jump_chain(depth - 1);
	__asm__ volatile("" ::: "memory");
}

static void one_round(long i)
{
	unsigned r = (unsigned)(i * 2654435761u);
	plain_chain((int)(r % 48), 16 + r % 64);
	fp_chain((int)(r % 7), 32 + r % 32);
	alloca_chain((int)(r % 9), 8 + r % 100);
	if (i % 97 == 0)
		raise(SIGUSR1);
	if (i % 89 == 0)
		raise(SIGUSR2);
	if (i % 101 == 0 && !setjmp(jump)) {
		jump_armed = 1;
		jump_chain((int)(r % 12));
	}
}

static void *worker(void *arg)
{
	long id = (long)arg;
	for (long i = 0; i < rounds; i++)
		one_round(i * 7 + id);
	return NULL;
}

static void use_altstack(void)
{
	static char stack[64 * 1024];
	stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack};
	sigaltstack(&ss, NULL);
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	use_altstack();
	pthread_t t[4];
	for (long k = 0; k < 4; k++)
		pthread_create(&t[k], NULL, worker, (void *)k);
	worker((void *)100);
	for (int k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	printf("tp_unwind: %ld rounds\n", rounds);
	return 0;
}
