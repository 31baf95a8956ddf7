/* Prints what a program can see of its environment and descriptors. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	const char *p = getenv("LD_PRELOAD");
	int fd = open("/dev/null", O_RDONLY);
	printf("LD_PRELOAD=%s first-fd=%d\n", p ? p : "(unset)", fd);
	return 0;
}
