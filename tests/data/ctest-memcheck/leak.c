/* Loses one block for good: memcheck's "definitely lost". */
#include <stdlib.h>
#include <string.h>

int main(void)
{
	char *volatile p = malloc(40);
	memset(p, 1, 40);
	p = NULL;
	return 0;
}
