/* A syscall-heavy workload for bench/fd.sh: N times open a file, read
 * it, close it. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	char buf[256];
	for (long i = 0; i < n; i++) {
		int fd = open("/etc/hostname", O_RDONLY);
		if (fd < 0 || read(fd, buf, sizeof buf) < 0)
			return 1;
		close(fd);
	}
	return 0;
}
