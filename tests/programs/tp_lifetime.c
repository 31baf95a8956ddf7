/* A deterministic steady-state churn for the lifetime filter
 * (tests/cli/lifetime.sh): each round keeps a block for good, frees one
 * kept 8 rounds before, makes 10 short-lived blocks (8 freed at once, a
 * pair freed in the other order) and now and then loses one. At the end
 * a big block makes the peak while every kept block is live, then the
 * kept blocks go but four, which stay reachable.
 * usage: tp_lifetime ROUNDS [MODE [ARG]], MODE one of
 *   plain    (the default)
 *   threads  two threads in strict turns, each freeing the block the
 *            other allocated in its turn before; a third one allocates
 *            first, then waits until the process ends; ARG "_exit":
 *            the process ends with _exit
 *   fork     a child forked half-way runs ROUNDS/4 rounds of its own
 *   exec     execs ARG (a program path) instead of returning
 *   check    raises signal ARG half-way (a leak check on demand)
 *   kill     SIGKILLs itself half-way
 *   steady   a live set of 100 blocks made first, then only churn */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEEP_MAX 200000

static void *kept[KEEP_MAX];
static int nkept;
static void *volatile lost; /* each new one loses the one before */
void *reachable[4];
static void *handoff; /* allocated in one turn, freed in the next */

__attribute__((noinline)) static void churn(int r)
{
	for (int k = 0; k < 8; k++) {
		char *p = malloc(16 + (size_t)k * 8);
		p[0] = (char)r;
		free(p);
	}
	char *a = malloc(100), *b = malloc(100);
	a[0] = b[0] = 1;
	free(a);
	free(b);
}

__attribute__((noinline)) static void keep(int r)
{
	if (nkept < KEEP_MAX)
		kept[nkept++] = malloc(64 + (size_t)(r % 32));
	if (r % 8 == 7 && nkept > 8) {
		free(kept[nkept - 8]);
		kept[nkept - 8] = NULL;
	}
}

__attribute__((noinline)) static void lose(int r)
{
	if (r % 10 == 0)
		lost = malloc(24);
}

static void one_round(int r)
{
	keep(r);
	churn(r);
	lose(r);
}

__attribute__((noinline)) static void finish(void)
{
	char *big = malloc(1 << 16);
	big[0] = 1;
	for (int i = nkept; i-- > 0;) {
		if (i < 4)
			reachable[i] = kept[i];
		else if (kept[i])
			free(kept[i]);
	}
	free(big);
	free(handoff);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn, rounds_left;

/* Rounds in strict turns: thread `me` runs when turn == me. */
static void *turns(void *arg)
{
	int me = (int)(long)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (turn != me && rounds_left > 0)
			pthread_cond_wait(&cv, &mu);
		if (rounds_left <= 0)
			break;
		free(handoff); /* the other thread's */
		handoff = malloc(48);
		one_round(rounds_left--);
		turn = !me;
		pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *idle_blocks[8];
static int idle_ready;

/* Allocates (some blocks kept, some churn) and then waits for good: the
 * calls it made must still reach the trace when the process ends. */
static void *idle(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < 8; i++) {
		idle_blocks[i] = malloc(200 + (size_t)i);
		churn(i);
	}
	idle_ready = 1;
	pthread_cond_broadcast(&cv);
	for (;;)
		pthread_cond_wait(&cv, &mu);
	return NULL;
}

static void threads(int rounds)
{
	pthread_t t;
	pthread_create(&t, NULL, idle, NULL);
	pthread_mutex_lock(&mu);
	while (!idle_ready)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	rounds_left = rounds;
	pthread_create(&t, NULL, turns, (void *)1L);
	turns((void *)0L);
	pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1000;
	const char *mode = argc > 2 ? argv[2] : "plain";
	if (!strcmp(mode, "steady")) {
		for (int r = 0; r < 100; r++)
			keep(0);
		for (int r = 0; r < rounds; r++)
			churn(r);
		finish();
		return 0;
	}
	if (!strcmp(mode, "threads")) {
		threads(rounds);
		finish();
		if (argc > 3 && !strcmp(argv[3], "_exit"))
			_exit(0);
		return 0;
	}
	for (int r = 0; r < rounds; r++) {
		if (r == rounds / 2 && !strcmp(mode, "check"))
			raise(atoi(argv[3]));
		if (r == rounds / 2 && !strcmp(mode, "kill"))
			raise(SIGKILL);
		if (r == rounds / 2 && !strcmp(mode, "fork") && fork() == 0) {
			for (int k = 0; k < rounds / 4; k++)
				one_round(k);
			finish();
			exit(0);
		}
		one_round(r);
	}
	if (!strcmp(mode, "fork"))
		wait(NULL);
	finish();
	if (!strcmp(mode, "exec"))
		execl(argv[3], argv[3], (char *)NULL);
	return 0;
}
