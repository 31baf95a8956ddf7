/* Programs on which memcheck's verdicts once differed from rtrace's
 * (issue 20), one per argument, each compared with memcheck's by
 * cli/verdicts.sh:
 *   freed   every block it allocated freed before exit: no leak is
 *           possible, memcheck says so instead of a LEAK SUMMARY
 * Uses no stdio, whose buffers would stay in use. */
#include <stdlib.h>
#include <string.h>

/* Allocates and frees a few blocks: nothing is left at exit. */
static int freed(void)
{
	void *p[4];
	for (int i = 0; i < 4; i++)
		p[i] = malloc(16u << i);
	p[1] = realloc(p[1], 300);
	for (int i = 0; i < 4; i++)
		free(p[i]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "freed"))
		return freed();
	return 2;
}
