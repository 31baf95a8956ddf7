/* Loads code after start, then forks: the plugin given as argument
 * through dlopen, and a gconv module through iconv_open (glibc loads it
 * itself, not through dlopen). The child allocates and exits; its trace
 * must list both modules (tests/cli/startup.sh). */
#include <dlfcn.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2 || !dlopen(argv[1], RTLD_NOW)) {
		fprintf(stderr, "tp_dlfork: cannot load %s\n", argc > 1 ? argv[1] : "(no plugin)");
		return 2;
	}
	iconv_t cd = iconv_open("ISO-8859-15", "UTF-8");
	if (cd == (iconv_t)-1) {
		perror("tp_dlfork: iconv_open");
		return 2;
	}
	pid_t pid = fork();
	if (pid == 0) {
		free(malloc(33));
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	iconv_close(cd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
