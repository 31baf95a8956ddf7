/* Blocks that leave the thread that allocated them (cli/heaptable.sh):
 * the tracer's live-block table keeps a part per thread, and each mode
 * takes a block out of its allocating thread's part another way. The
 * program's own blocks end freed, or leaked as each mode says, so that
 * memcheck's verdicts and rtrace's can be compared.
 *   handoff  4 producers allocate, 4 other threads free (a pipe each)
 *   double   thread A allocates, thread B frees, thread C frees again:
 *            one invalid free, described as the block B freed
 *   exited   70 threads (more than the table's 64 parts) each leak one
 *            block of 24 bytes and hand two to main, and end; 70 more
 *            threads churn; main then frees the handed blocks
 *   fork     a thread allocates 100 blocks and waits; the forked child
 *            frees them (the thread does not exist there), and leaks 1
 *            block of 77 bytes; the parent frees them after the thread
 *   live     3 threads churn while main leaks 5 blocks of 48 bytes and
 *            asks for a leak check (SIGUSR2, --check-signal), twice */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PRODUCERS 4
#define PER_PRODUCER 20000
#define EXITED 70

static int pipes[PRODUCERS][2];

static void *produce(void *arg)
{
	int fd = pipes[(long)arg][1];
	for (int i = 0; i < PER_PRODUCER; i++) {
		void *p = malloc(16 + (size_t)i % 200);
		if (write(fd, &p, sizeof p) != sizeof p)
			abort();
	}
	close(fd);
	return NULL;
}

static void *consume(void *arg)
{
	int fd = pipes[(long)arg][0];
	void *p;
	while (read(fd, &p, sizeof p) == sizeof p)
		free(p);
	return NULL;
}

static void handoff(void)
{
	pthread_t t[2 * PRODUCERS];
	for (long i = 0; i < PRODUCERS; i++) {
		if (pipe(pipes[i]))
			abort();
		pthread_create(&t[i], NULL, produce, (void *)i);
		pthread_create(&t[PRODUCERS + i], NULL, consume, (void *)i);
	}
	for (int i = 0; i < 2 * PRODUCERS; i++)
		pthread_join(t[i], NULL);
}

static void *block;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage;

static void wait_stage(int n)
{
	pthread_mutex_lock(&mu);
	while (stage < n)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void set_stage(int n)
{
	pthread_mutex_lock(&mu);
	stage = n;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* each of A, B and C does its part and stays alive until all did */
__attribute__((noinline)) static void *alloc_in_a(void *arg)
{
	(void)arg;
	block = malloc(40);
	set_stage(1);
	wait_stage(3);
	return NULL;
}

__attribute__((noinline)) static void *free_in_b(void *arg)
{
	(void)arg;
	wait_stage(1);
	free(block);
	set_stage(2);
	wait_stage(3);
	return NULL;
}

__attribute__((noinline)) static void *free_again_in_c(void *arg)
{
	(void)arg;
	wait_stage(2);
	free(block);
	set_stage(3);
	return NULL;
}

static void double_free(void)
{
	pthread_t t[3];
	pthread_create(&t[0], NULL, alloc_in_a, NULL);
	pthread_create(&t[1], NULL, free_in_b, NULL);
	pthread_create(&t[2], NULL, free_again_in_c, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
}

static void *handed[EXITED][2];
static pthread_barrier_t all_up;

static void *leave(void *arg)
{
	long i = (long)arg;
	void *lost = malloc(24);
	memset(lost, 0, 24);
	lost = NULL;
	handed[i][0] = malloc(100);
	handed[i][1] = calloc(1, 200);
	pthread_barrier_wait(&all_up); /* all 70 hold a part of the table */
	return lost;
}

static void *churn(void *arg)
{
	long n = (long)arg;
	void *slots[64] = {0};
	for (long i = 0; i < n; i++) {
		free(slots[i % 64]);
		slots[i % 64] = malloc(8 + (size_t)i % 300);
	}
	for (int k = 0; k < 64; k++)
		free(slots[k]);
	return NULL;
}

static void exited(void)
{
	pthread_t t[EXITED];
	pthread_barrier_init(&all_up, NULL, EXITED);
	for (long i = 0; i < EXITED; i++)
		pthread_create(&t[i], NULL, leave, (void *)i);
	for (int i = 0; i < EXITED; i++)
		pthread_join(t[i], NULL);
	for (long i = 0; i < EXITED; i++)
		pthread_create(&t[i], NULL, churn, (void *)1000);
	for (int i = 0; i < EXITED; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < EXITED; i++) {
		free(handed[i][0]);
		free(handed[i][1]);
	}
	pthread_barrier_destroy(&all_up);
}

static void *held[100];

static void *holder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		held[i] = malloc(32 + (size_t)i);
	set_stage(1);
	wait_stage(2);
	return NULL;
}

static int forked(void)
{
	pthread_t t;
	pthread_create(&t, NULL, holder, NULL);
	wait_stage(1);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 100; i++)
			free(held[i]);
		void *lost = malloc(77);
		memset(lost, 1, 77);
		lost = NULL;
		printf("child: freed the thread's blocks\n");
		fflush(stdout);
		exit(lost != NULL);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	set_stage(2);
	pthread_join(t, NULL);
	for (int i = 0; i < 100; i++)
		free(held[i]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

__attribute__((noinline)) static void lose(void)
{
	for (int i = 0; i < 5; i++) {
		void *lost = malloc(48);
		memset(lost, 2, 48);
	}
}

/* no copy of lose()'s pointers stays where the scan looks */
__attribute__((noinline)) static void scrub(void)
{
	volatile char junk[4096];
	memset((char *)junk, 0, sizeof junk);
}

static void live(void)
{
	pthread_t t[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, churn, (void *)400000);
	lose();
	scrub();
	for (int k = 0; k < 2; k++) {
		raise(SIGUSR2);
		usleep(20000);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "handoff";
	int rc = 0;
	if (!strcmp(mode, "handoff")) {
		handoff();
	} else if (!strcmp(mode, "double")) {
		double_free();
	} else if (!strcmp(mode, "exited")) {
		exited();
	} else if (!strcmp(mode, "fork")) {
		rc = forked();
	} else if (!strcmp(mode, "live")) {
		live();
	} else {
		fprintf(stderr, "usage: tp_xfree handoff|double|exited|fork|live\n");
		return 2;
	}
	printf("xfree %s: done\n", mode);
	return rc;
}
