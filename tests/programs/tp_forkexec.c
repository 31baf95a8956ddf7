/* A fork child that execs, as a shell runs a command: with "quiet" the
 * child makes no call before execv, with "alloc" it leaks 33 bytes
 * first, with "many" it allocates 3000 blocks of 33 bytes (more records
 * than a trace keeps in memory before its file), with "fd" it opens
 * /dev/null (a descriptor the exec'd program inherits). The exec'd
 * program is this one again ("exec"), which leaks 44 bytes. The parent
 * leaks 11.
 *
 * Children that do not exec: "kill" allocates 3000 blocks and then kills
 * itself with SIGKILL; "threads" starts 4 threads that allocate 50
 * blocks of 55 bytes each and exits (status 0) once they are done;
 * "dup2" dup2s onto each number from 3 to 1023 (among them the one the
 * tracer holds for the child's trace), closes it again and prints how
 * many of those closes failed. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *blocks(void *arg)
{
	for (int i = 0; i < 50; i++)
		if (!malloc(55))
			return NULL;
	return arg;
}

/* the child's part before its exec (or instead of it) */
static void child(const char *mode)
{
	if (!strcmp(mode, "alloc") && !malloc(33))
		_exit(1);
	if (!strcmp(mode, "many") || !strcmp(mode, "kill"))
		for (int i = 0; i < 3000; i++)
			if (!malloc(33))
				_exit(1);
	if (!strcmp(mode, "kill"))
		raise(SIGKILL);
	if (!strcmp(mode, "fd") && open("/dev/null", O_RDONLY) < 0)
		_exit(1);
	if (!strcmp(mode, "dup2")) {
		free(malloc(16)); /* the child's trace begins */
		int failed = 0;
		for (int fd = 3; fd < 1024; fd++)
			if (dup2(0, fd) == fd && close(fd))
				failed++;
		printf("dup2 close failed=%d\n", failed);
		exit(0);
	}
	if (!strcmp(mode, "threads")) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, blocks, t))
				_exit(1);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		exit(0);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec"))
		return malloc(44) ? 0 : 1;
	if (!malloc(11))
		return 1;
	char *args[] = {argv[0], "exec", NULL};
	pid_t pid = fork();
	if (pid == 0) {
		child(argc > 1 ? argv[1] : "quiet");
		execv(argv[0], args);
		_exit(126);
	}
	int status;
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		return WTERMSIG(status) == SIGKILL ? 0 : 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
