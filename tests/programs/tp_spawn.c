/* Starts PROGRAM the way MODE says (posix_spawn, posix_spawnp, system,
 * popen, execvp, execle), so that following children can be checked for
 * each way a program starts another; passes PROGRAM's output through. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* (the pid is read once posix_spawn has written it: passed by address,
 * not as a second argument whose evaluation C may order first) */
static int spawned(int err, const pid_t *pid)
{
	int status = 0;
	if (err || waitpid(*pid, &status, 0) < 0)
		return 125;
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	const char *mode = argv[1], *prog = argv[2];
	char *args[] = {argv[2], NULL};
	pid_t pid;
	fflush(stdout);
	if (!strcmp(mode, "posix_spawn"))
		return spawned(posix_spawn(&pid, prog, NULL, NULL, args, environ), &pid);
	if (!strcmp(mode, "posix_spawnp"))
		return spawned(posix_spawnp(&pid, prog, NULL, NULL, args, environ), &pid);
	if (!strcmp(mode, "system"))
		return WEXITSTATUS(system(prog));
	if (!strcmp(mode, "popen")) {
		FILE *f = popen(prog, "r");
		char line[512];
		while (f && fgets(line, sizeof line, f))
			fputs(line, stdout);
		return f ? WEXITSTATUS(pclose(f)) : 125;
	}
	if (!strcmp(mode, "execvp"))
		execvp(prog, args);
	if (!strcmp(mode, "execle"))
		execle(prog, prog, (char *)NULL, environ);
	return 126;
}
