/* Allocates and frees: nothing for a memory checker to find. */
#include <stdlib.h>
#include <string.h>

int main(void)
{
	char *volatile p = malloc(64);
	memset(p, 2, 64);
	free(p);
	return 0;
}
