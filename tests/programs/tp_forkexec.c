/* A fork child that execs at once, as a shell runs a command: with
 * "quiet" the child makes no call before execv, with "alloc" it leaks
 * 33 bytes first. The exec'd program is this one again ("exec"), which
 * leaks 44 bytes. The parent leaks 11. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec"))
		return malloc(44) ? 0 : 1;
	if (!malloc(11))
		return 1;
	char *args[] = {argv[0], "exec", NULL};
	bool alloc = argc > 1 && !strcmp(argv[1], "alloc");
	pid_t pid = fork();
	if (pid == 0) {
		if (alloc && !malloc(33))
			_exit(1);
		execv(argv[0], args);
		_exit(126);
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
