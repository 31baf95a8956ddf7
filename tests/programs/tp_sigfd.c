/* Descriptors opened and closed by a signal handler while the program
 * opens and closes them too: a SIGALRM every 100 us whose handler opens
 * and closes /dev/null, against a main loop doing the same. Prints the
 * calls it made (and how many the handler made) so that a trace can be
 * checked against them; "fill" instead leaves no descriptor free (the
 * limit lowered, every number below it taken) and leaks a block, "dup2"
 * takes every number below the limit by dup2 onto each, "dup2all" every
 * number below 1024, the tracer's own included; "hostile" first takes
 * the numbers of the descriptors open on /proc files (the tracer's);
 * "forkfill" and "forkopen" do "fill" in a forked child (the parent
 * waits), "forkopen" without lowering the limit: the child takes every
 * number free below the one it inherited. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t handled, handler_calls;

static void on_alarm(int sig)
{
	(void)sig;
	int err = errno;
	int fd = open("/dev/null", O_RDONLY);
	if (fd >= 0) {
		close(fd);
		handler_calls += 2;
	}
	handled++;
	errno = err;
}

static int race(long loops)
{
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 100}, {0, 100}};
	setitimer(ITIMER_REAL, &it, NULL);
	long calls = 0;
	for (long i = 0; i < loops; i++) {
		int fd = open("/dev/null", O_RDONLY);
		if (fd >= 0 && close(fd) == 0)
			calls += 2;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("race main=%ld handler=%d signals=%d\n", calls, (int)handler_calls, (int)handled);
	return 0;
}

static __attribute__((noinline)) void leak77(void)
{
	char *volatile leak = malloc(77);
	memset(leak, 1, 77);
	leak = NULL;
}

/* Every descriptor number below a lowered limit taken (limit: the hard
 * limit too, by open or by dup2), or every one below 1024 by dup2. */
static int fill(bool by_dup2, rlim_t limit)
{
	struct rlimit rl = {limit, limit};
	if (limit == 1024 || setrlimit(RLIMIT_NOFILE, &rl)) {
		/* the soft limit only (valgrind keeps the hard one) */
		if (getrlimit(RLIMIT_NOFILE, &rl))
			return 1;
		rl.rlim_cur = limit;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			return 1;
	}
	int n = 0;
	if (by_dup2) {
		for (int fd = 3; fd < (int)limit; fd++)
			n += dup2(0, fd) == fd;
	} else {
		while (open("/dev/null", O_RDONLY) >= 0)
			n++;
	}
	leak77();
	printf("fill taken=%d next=%s\n", n, open("/dev/null", O_RDONLY) < 0 ? strerror(errno) : "free");
	return 0;
}

/* Takes the descriptors that read /proc (the tracer's reserved ones, as
 * a hostile program could), then every free number below the limit. */
static int hostile(void)
{
	for (int fd = 3; fd < 1024; fd++) {
		char link[64], to[256];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, to, sizeof to - 1);
		to[n > 0 ? n : 0] = '\0';
		if (n > 0 && !strncmp(to, "/proc/", 6))
			dup2(0, fd);
	}
	return fill(false, 64);
}

/* fill in a forked child, limit 64 (lowered) or 0 (the inherited one) */
static int fork_fill(rlim_t limit)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		free(malloc(16)); /* the child's trace begins */
		if (limit)
			exit(fill(false, limit));
		int n = 0;
		while (open("/dev/null", O_RDONLY) >= 0)
			n++;
		leak77();
		printf("fill taken=%d next=%s\n", n, open("/dev/null", O_RDONLY) < 0 ? strerror(errno) : "free");
		return 0;
	}
	int status;
	return pid < 0 || waitpid(pid, &status, 0) != pid || status != 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "forkfill"))
		return fork_fill(64);
	if (argc > 1 && !strcmp(argv[1], "forkopen"))
		return fork_fill(0);
	if (argc > 1 && !strcmp(argv[1], "hostile"))
		return hostile();
	if (argc > 1 && !strcmp(argv[1], "fill"))
		return fill(false, 64);
	if (argc > 1 && !strcmp(argv[1], "dup2"))
		return fill(true, 64);
	if (argc > 1 && !strcmp(argv[1], "dup2all"))
		return fill(true, 1024);
	return race(argc > 1 ? atol(argv[1]) : 200000);
}
