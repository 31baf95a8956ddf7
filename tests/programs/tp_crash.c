/* Allocates 5 x 50 bytes, then dies: "segv" by SIGSEGV, "abort" by abort(). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	for (int i = 0; i < 5; i++)
		if (!malloc(50))
			return 1;
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();
	raise(SIGSEGV);
	return 0;
}
