/* A block whose only copies left at exit are in dead stack: definitely
 * lost, as memcheck says (it never reads below the stack pointer, nor
 * stack words written by no live frame). The program's atexit handler
 * runs from the same frame of exit() as the tracer's leak check does
 * later, and fills the stack below it with the block's address: the
 * check must not take its own frames (which lie there, partly unwritten)
 * for the program's, nor the unwritten slots of exit's own frames, which
 * hold what calls made before left there. With the argument "exit", main
 * calls exit instead of returning; with "main", main fills the stack
 * below itself (where exit's frames go) and returns; with "_exit", main fills the stack
 * below itself and calls _exit (the check runs inside it). The address
 * is kept XORed in a global, so that no root holds it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY ((uintptr_t)0x5a5a5a5a5a5a5a5aull)
#define BAND 1024 /* words: 8 KiB of stack below the handler's caller */

static uintptr_t hidden;

__attribute__((noinline)) static void spray(void)
{
	volatile uintptr_t band[BAND];
	for (size_t i = 0; i < BAND; i++)
		band[i] = hidden ^ KEY;
	(void)band[0];
}

static void at_exit(void) { spray(); }

int main(int argc, char **argv)
{
	hidden = (uintptr_t)malloc(24) ^ KEY;
	puts("stale");
	if (argc > 1 && !strcmp(argv[1], "_exit")) {
		fflush(stdout);
		spray();
		_exit(0);
	}
	if (argc > 1 && !strcmp(argv[1], "main")) {
		spray();
		return 0;
	}
	atexit(at_exit);
	if (argc > 1 && !strcmp(argv[1], "exit"))
		exit(0);
	return 0;
}
