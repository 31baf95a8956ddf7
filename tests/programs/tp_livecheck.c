/* Leak checks while the program runs, for cli/livecheck.sh: it leaks in
 * phases and asks for a leak check between them, so that each check has
 * a known answer, and the same program under valgrind asks memcheck the
 * same questions with its client requests.
 *
 *   tp_livecheck self SIG   the program asks: under valgrind with
 *                           VALGRIND_DO_LEAK_CHECK / _ADDED_LEAK_CHECK,
 *                           else with sigqueue(SIG, mode) to itself, the
 *                           value rtrace check sends (1 full, 2 increased)
 *   tp_livecheck threads SIG  three threads churn malloc/free while the
 *                           main thread asks for ten checks, 10 ms apart:
 *                           each check stops and resumes them
 *   tp_livecheck wait DIR   asked from outside: before each check it
 *                           writes DIR/readyN (its pid) and waits for
 *                           DIR/goN, which the test creates after
 *                           `rtrace check PID` returned
 *
 * Checks, in both modes: full, increased, increased (nothing grew), full.
 * Phases: 1) 2 x 100 bytes definitely lost, a lost list (48-byte head,
 * two 24-byte nodes: definitely and indirectly lost), 40 bytes kept;
 * 2) 1 x 100 bytes lost elsewhere, 40 more kept; 3) the first 40 bytes
 * freed, another lost list; at exit the second 40 bytes are freed too.
 * Between phases the dead stack is scrubbed
 * (memcheck knows it is uninitialised, a conservative scan does not) and
 * one malloc/free pair follows each request: the tracer runs the check
 * at the next heap call, so the pair makes that point the same as the
 * client request's. Exits with 0. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define RUNNING_ON_VALGRIND 0
#define VALGRIND_DO_LEAK_CHECK
#define VALGRIND_DO_ADDED_LEAK_CHECK
#endif

struct node {
	struct node *next;
	char pad[16];
};

static void *keep[4];

__attribute__((noinline)) static void lose(int n)
{
	for (int i = 0; i < n; i++) {
		char *volatile p = malloc(100);
		p[0] = 1;
	}
}

__attribute__((noinline)) static void lose_list(void)
{
	struct node *volatile head = malloc(48);
	head->next = malloc(sizeof(struct node));
	head->next->next = malloc(sizeof(struct node));
	head->next->next->next = NULL;
}

__attribute__((noinline)) static void hold(int i) { keep[i] = malloc(40); }

__attribute__((noinline)) static void scrub(void)
{
	volatile char buf[16384];
	memset((char *)buf, 0, sizeof buf);
}

__attribute__((noinline)) static void phase1(void)
{
	lose(2);
	lose_list();
	hold(0);
}

__attribute__((noinline)) static void phase2(void)
{
	lose(1);
	hold(1);
}

__attribute__((noinline)) static void phase3(void)
{
	free(keep[0]);
	keep[0] = NULL;
	lose_list();
}

static int sig;
static const char *dir;
static int step;

static void put_file(const char *name, const char *text)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		(void)!write(fd, text, strlen(text));
		close(fd);
	}
}

/* The test asks from outside: readyN says so, goN comes back after it. */
static void wait_for_check(void)
{
	char name[32], path[4096], pid[32];
	struct stat st;
	step++;
	snprintf(pid, sizeof pid, "%d\n", (int)getpid());
	snprintf(name, sizeof name, "ready%d", step);
	put_file(name, pid);
	snprintf(path, sizeof path, "%s/go%d", dir, step);
	for (int i = 0; i < 30000 && stat(path, &st); i++)
		usleep(1000);
}

/* Called after scrub() from main: the phases' stale pointers (below
 * main's frame) are gone before ask's frame takes their place. */
static void ask(int increased)
{
	if (dir) {
		wait_for_check();
	} else if (RUNNING_ON_VALGRIND) {
		if (increased)
			VALGRIND_DO_ADDED_LEAK_CHECK;
		else
			VALGRIND_DO_LEAK_CHECK;
	} else {
		union sigval v = {.sival_int = increased ? 2 : 1};
		sigqueue(getpid(), sig, v);
	}
	scrub(); /* what the signal's frame left */
	free(malloc(1)); /* the heap call the check runs at */
}

static atomic_int stop;

static void *churn(void *arg)
{
	void *slot[64] = {0};
	for (unsigned i = (unsigned)(size_t)arg; !atomic_load(&stop); i++) {
		free(slot[i % 64]);
		slot[i % 64] = malloc(16 + i % 200);
	}
	for (int k = 0; k < 64; k++)
		free(slot[k]);
	return NULL;
}

/* Checks while other threads allocate: each one parks them and lets them
 * go on; the process must end normally, with every check in its trace. */
static int threads(void)
{
	pthread_t t[3];
	for (size_t i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, churn, (void *)i);
	for (int k = 0; k < 10; k++) {
		union sigval v = {.sival_int = k % 2 ? 2 : 1};
		sigqueue(getpid(), sig, v);
		usleep(10000);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	puts("done");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "self") && strcmp(argv[1], "wait") && strcmp(argv[1], "threads"))) {
		fprintf(stderr, "usage: tp_livecheck self SIG | threads SIG | wait DIR\n");
		return 2;
	}
	if (!strcmp(argv[1], "threads")) {
		sig = atoi(argv[2]);
		return threads();
	}
	if (!strcmp(argv[1], "self"))
		sig = atoi(argv[2]);
	else
		dir = argv[2];
	phase1();
	scrub();
	ask(0);
	phase2();
	scrub();
	ask(1);
	ask(1);
	phase3();
	scrub();
	ask(0);
	free(keep[1]); /* a loss record of the last check that has no block at exit */
	keep[1] = NULL;
	scrub();
	puts("done");
	return 0;
}
