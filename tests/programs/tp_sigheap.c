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

static void *pool[POOL];
static volatile sig_atomic_t next_block, signals;

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
	bool use_free = argc < 2 || !strcmp(argv[1], "free");
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	pthread_t t;
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL); /* the second thread never gets it */
	pthread_create(&t, NULL, idle, NULL);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	for (int i = 0; use_free && i < POOL; i++)
		pool[i] = malloc(BIG);
	struct sigaction sa = {.sa_handler = use_free ? on_alarm_free : on_alarm_open};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 50}, {0, 50}};
	setitimer(ITIMER_REAL, &it, NULL);
	double end = now() + seconds;
	for (unsigned long n = 0; now() < end; n++) {
		size_t size = use_free ? 16 + n % 64 : 2048 + (n * 4093) % 60000;
		void *p = malloc(size);
		memset(p, 1, 16);
		free(p);
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	for (int i = next_block; use_free && i < POOL; i++)
		free(pool[i]);
	printf("sigheap %s: %s\n", use_free ? "free" : "open", signals > 0 ? "signals" : "none");
	return 0;
}
