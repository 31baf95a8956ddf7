/* Preloaded after the tracer by bench/ablate.sh: at exit, appends
 * "NAME USER_US SYS_US MINFLT" of the process to the file $RUSAGE_OUT, so
 * that the traced program's own CPU time is counted apart from `rtrace
 * run`'s (its compressor and page populator), which is skipped. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

__attribute__((destructor(101))) static void at_exit_rusage(void)
{
	const char *f = getenv("RUSAGE_OUT");
	if (!f || strcmp(program_invocation_short_name, "rtrace") == 0)
		return;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	char b[256];
	int n = snprintf(b, sizeof b, "%s %ld %ld %ld\n", program_invocation_short_name,
			 (long)ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec,
			 (long)ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec, ru.ru_minflt);
	int fd = open(f, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		(void)!write(fd, b, (size_t)n);
		close(fd);
	}
}
