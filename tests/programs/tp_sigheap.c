/* Signal handlers that use the tracer's interposers while the same thread
 * is inside one of them (cli/run.sh: the program must end).
 *   free  the handler (SIGALRM, every 50 us) frees a block while main
 *         loops on malloc/free: sooner or later it lands while main holds
 *         the lock of the live-block table's stripe the block is in
 *   open  the handler opens and closes /dev/null while main loops on
 *         malloc/free of blocks glibc serves under its arena lock (a
 *         second thread exists, so that glibc locks at all): traced with
 *         the fd module, the handler's stack is read, which must not
 *         allocate then
 *   alloc the handler allocates a block while main frees its blocks one
 *         by one: sooner or later it lands while main holds its own part
 *         of the live-block table; main frees the handler's blocks last
 * The handler's blocks are large enough to be mmapped chunks: glibc
 * releases those without any lock of its own. Prints the signal count. */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#define POOL 20000
#define BIG (256 * 1024)

static void *pool[POOL], *got[POOL];
static volatile sig_atomic_t next_block, signals, ngot;

static void on_alarm_alloc(int sig)
{
	(void)sig;
	if (ngot < POOL)
		got[ngot++] = malloc(BIG);
	signals++;
}

static void on_alarm_free(int sig)
{
	(void)sig;
	if (next_block < POOL)
		free(pool[next_block++]);
	signals++;
}

static void on_alarm_open(int sig)
{
	(void)sig;
	int fd = open("/dev/null", O_RDONLY);
	if (fd >= 0)
		close(fd);
	signals++;
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *mode = argc < 2 ? "free" : argv[1];
	bool use_free = !strcmp(mode, "free"), use_alloc = !strcmp(mode, "alloc");
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	pthread_t t;
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL); /* the second thread never gets it */
	pthread_create(&t, NULL, idle, NULL);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	for (int i = 0; (use_free || use_alloc) && i < POOL; i++)
		pool[i] = malloc(BIG);
	struct sigaction sa = {.sa_handler = use_free ? on_alarm_free : use_alloc ? on_alarm_alloc : on_alarm_open};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 50}, {0, 50}};
	setitimer(ITIMER_REAL, &it, NULL);
	double end = now() + seconds;
	for (int i = 0; use_alloc && i < POOL; i++) /* each takes main's part of the table */
		free(pool[i]);
	for (unsigned long n = 0; !use_alloc && now() < end; n++) {
		size_t size = use_free ? 16 + n % 64 : 2048 + (n * 4093) % 60000;
		void *p = malloc(size);
		memset(p, 1, 16);
		free(p);
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	for (int i = next_block; use_free && i < POOL; i++)
		free(pool[i]);
	for (int i = 0; i < ngot; i++)
		free(got[i]);
	printf("sigheap %s: %s\n", mode, signals > 0 ? "signals" : "none");
	return 0;
}
