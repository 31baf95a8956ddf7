/* Allocates 5 x 50 bytes, then dies: "segv" by SIGSEGV, "abort" by
 * abort(), "wait" waits to be killed (after printing "ready"). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	for (int i = 0; i < 5; i++)
		if (!malloc(50))
			return 1;
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();
	if (argc > 1 && !strcmp(argv[1], "wait")) {
		write(1, "ready\n", 6);
		for (;;)
			pause();
	}
	raise(SIGSEGV);
	return 0;
}
