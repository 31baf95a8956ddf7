/* The parent leaks 1 x 11 bytes, a forked child 2 x 22 bytes; with an
 * argument the child then execs that program. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (!malloc(11))
		return 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (!malloc(22))
			return 1;
		if (!malloc(22))
			return 1;
		if (argc > 1) {
			execv(argv[1], argv + 1);
			return 126;
		}
		printf("child done\n");
		return 0;
	}
	int status;
	waitpid(pid, &status, 0);
	printf("parent done, child status %d\n", WEXITSTATUS(status));
	return 0;
}
