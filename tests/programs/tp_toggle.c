/* Allocates 1 x 100 bytes, signals itself with the signal number given as
 * argument, allocates 1 x 200, signals again, allocates 1 x 300. With
 * tracing toggled by that signal and started paused, only the 200-byte
 * block is traced. */
#include <signal.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int sig = argc > 1 ? atoi(argv[1]) : SIGUSR1;
	if (!malloc(100))
		return 1;
	raise(sig);
	if (!malloc(200))
		return 1;
	raise(sig);
	if (!malloc(300))
		return 1;
	return 0;
}
