/* Reading the manifest while the program runs: entries end with a NUL
 * byte (a path may hold any other byte), "PID PATH" for a trace file,
 * "PID !PATH" for one that could not be written, "PID >PROG" for an exec
 * left untraced (format/run_env.h); an entry cut short is read at the
 * next call. Shared by the compressor and the page populator. */
#define _GNU_SOURCE
#include "run_manifest.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void run_manifest_read(const char *manifest, off_t *seen, void (*on)(void *, pid_t, const char *), void *arg)
{
	char buf[8192];
	int fd = open(manifest, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n;
	while ((n = pread(fd, buf, sizeof buf - 1, *seen)) > 0) {
		buf[n] = '\0';
		char *p = buf, *end = buf + n;
		for (char *nul; p < end && (nul = memchr(p, '\0', (size_t)(end - p))); p = nul + 1) {
			char *sp = strchr(p, ' ');
			if (sp && sp[1] && sp[1] != '!' && sp[1] != '>')
				on(arg, (pid_t)atoi(p), sp + 1);
		}
		if (p == buf)
			break; /* an entry longer than buf, or cut short: later */
		*seen += p - buf;
	}
	close(fd);
}
