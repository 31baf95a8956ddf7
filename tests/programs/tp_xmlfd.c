/* Descriptors and a heap leak for the Valgrind XML's consumers
 * (cli/vgxml_write.sh): "clean" opens and closes a file and leaks a
 * block (no descriptor error: the XML stays protocol 4), "double" closes
 * a file twice (an FdBadClose with the file's path) and leaks the block
 * too, "open" leaves a file open (an FdNotClosed). Run bare (no
 * descriptor above 2 inherited) so that nothing else is left open. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *leak(void)
{
	char *p = malloc(40);
	if (p)
		memset(p, 1, 40);
	return p;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "clean";
	int fd = open("/etc/passwd", O_RDONLY);
	if (strcmp(how, "open")) {
		close(fd);
		if (!strcmp(how, "double"))
			close(fd);
	}
	void *volatile p = leak();
	p = NULL;
	return p != NULL;
}
