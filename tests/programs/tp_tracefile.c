/* A program that makes the trace file hard to write or to find
 * (cli/tracefile.sh): it runs the same with and without the tracer, and
 * prints what it checked.
 *
 *   tp_tracefile churn N [LIMIT]  N allocations and releases, under a file
 *                                 size limit of LIMIT bytes if given, then
 *                                 one 100-byte leak
 *   tp_tracefile xfsz LIMIT N     the same with SIGXFSZ blocked: the tracer
 *                                 raises none, and one the program raised
 *                                 stays pending
 *   tp_tracefile umask            umask(0777), then a forked child leaks
 *   tp_tracefile rmdir DIR        empties and removes DIR (the traces' own
 *                                 directory), then leaks */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep;

static void churn(long n)
{
	for (long i = 0; i < n; i++)
		free(malloc((size_t)(i % 200) + 1));
}

static void limit(const char *bytes)
{
	struct rlimit rl;
	getrlimit(RLIMIT_FSIZE, &rl);
	rl.rlim_cur = (rlim_t)atol(bytes);
	if (setrlimit(RLIMIT_FSIZE, &rl))
		perror("setrlimit");
}

static int xfsz_state(void)
{
	sigset_t p, m;
	sigpending(&p);
	sigprocmask(SIG_BLOCK, NULL, &m);
	return sigismember(&p, SIGXFSZ) * 2 + sigismember(&m, SIGXFSZ);
}

/* Pending and mask states: 1 (blocked, not pending) after the first half,
 * 3 (blocked and pending) after raising it and the second half. */
static int xfsz(const char *bytes, long n)
{
	sigset_t x;
	sigemptyset(&x);
	sigaddset(&x, SIGXFSZ);
	sigprocmask(SIG_BLOCK, &x, NULL);
	limit(bytes);
	churn(n / 2);
	int a = xfsz_state();
	raise(SIGXFSZ);
	churn(n / 2);
	int b = xfsz_state();
	int sig = 0;
	if (b & 2)
		sigwait(&x, &sig);
	printf("xfsz: %d then %d, took %d\n", a, b, sig);
	return a == 1 && b == 3 ? 0 : 1;
}

static int child_leaks(void)
{
	umask(0777);
	pid_t pid = fork();
	if (pid == 0) {
		keep = malloc(10);
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	printf("umask: child exited %d\n", WEXITSTATUS(st));
	return 0;
}

static int remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	int rc = rmdir(dir);
	keep = malloc(100);
	printf("rmdir: %s\n", rc ? "failed" : "removed");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "churn") && argc > 2) {
		if (argc > 3)
			limit(argv[3]);
		churn(atol(argv[2]));
		keep = malloc(100);
		printf("churn: done\n");
		return 0;
	}
	if (!strcmp(mode, "xfsz") && argc > 3)
		return xfsz(argv[2], atol(argv[3]));
	if (!strcmp(mode, "umask"))
		return child_leaks();
	if (!strcmp(mode, "rmdir") && argc > 2)
		return remove_dir(argv[2]);
	fprintf(stderr, "usage: tp_tracefile churn N [LIMIT] | xfsz LIMIT N | umask | rmdir DIR\n");
	return 2;
}
