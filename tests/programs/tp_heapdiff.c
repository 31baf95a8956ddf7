/* Two heap profiles of one program for `rtrace heap --diff`
 * (cli/heapdiff.sh), compared with heaptrack_print -d on heaptrack's
 * recordings of the same two runs. The argument K (default 1) scales
 * what each function does; no stdio (its buffer would be one more block).
 *   leaks:      K blocks of 1000 bytes never freed
 *   temporaries: 10 * K blocks freed right after their allocation
 *   held:       8 * K blocks of 4096 bytes live at once (the peak), freed
 *   stable:     4 blocks of 64 bytes kept, then freed: the same for any K
 *   only_one:   runs when K is 1: a site that leaves with K > 1
 *   only_more:  runs when K > 1: a site that arrives, leaking 300 bytes
 * Linked with libstdc++ as tp_heapprof, for the same reason (heaptrack's
 * preloaded library brings it: both runs then start with its pool). */
#include <stdlib.h>

static void *keep[256];

__attribute__((noinline)) static void leaks(int k)
{
	for (int i = 0; i < k; i++) {
		char *p = malloc(1000);
		p[0] = 1;
		p = NULL;
	}
}

__attribute__((noinline)) static void temporaries(int k)
{
	for (int i = 0; i < 10 * k; i++) {
		char *p = malloc(100);
		p[0] = 1;
		free(p);
	}
}

__attribute__((noinline)) static void held(int k)
{
	for (int i = 0; i < 8 * k; i++)
		keep[i] = calloc(1, 4096);
	for (int i = 0; i < 8 * k; i++)
		free(keep[i]);
}

__attribute__((noinline)) static void stable(void)
{
	for (int i = 0; i < 4; i++)
		keep[i] = malloc(64);
	for (int i = 0; i < 4; i++)
		free(keep[i]);
}

__attribute__((noinline)) static void only_one(void)
{
	for (int i = 0; i < 3; i++)
		keep[i] = malloc(200);
	for (int i = 0; i < 3; i++)
		free(keep[i]);
}

__attribute__((noinline)) static void only_more(void)
{
	char *p = malloc(300);
	p[0] = 1;
}

int main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 1;
	if (k < 1 || k > 32)
		k = 1;
	stable();
	leaks(k);
	temporaries(k);
	held(k);
	if (k == 1)
		only_one();
	else
		only_more();
	return 0;
}
