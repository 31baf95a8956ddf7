/* Frees what malloc never returned (a global's address): memcheck's
 * "Invalid free() / delete / delete[] / realloc()". */
#include <stdlib.h>

static char not_heap[16];

int main(void)
{
	void *volatile p = not_heap;
	free(p);
	return 0;
}
