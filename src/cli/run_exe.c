/* Why the tracer was not loaded into a program that wrote no trace, from
 * the program file itself: the loader ignores LD_PRELOAD (a path with a
 * slash, as rtrace passes it) in secure-execution mode, which exec enters
 * when the program changes the process's identity: setuid to an owner that
 * is not the caller, setgid to a group that is not the caller's, or file
 * capabilities beyond root's; and a static program has no loader at all.
 * Looked at after the run, from the file exec found (the PATH search done
 * again), so the common case costs nothing. */
#define _GNU_SOURCE
#include "run_report.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* The file execvp runs for `program`, into buf; NULL when none. */
static const char *find_exe(const char *program, char *buf, size_t len)
{
	if (strchr(program, '/'))
		return program;
	const char *path = getenv("PATH");
	for (const char *d = path ? path : "/bin:/usr/bin"; ; d++) {
		size_t n = strcspn(d, ":");
		snprintf(buf, len, "%.*s%s%s", (int)n, d, n ? "/" : "", program);
		if (!access(buf, X_OK))
			return buf;
		d += n;
		if (!*d)
			return NULL;
	}
}

/* An ELF executable without a program interpreter (PT_INTERP). */
static bool is_static_elf(const char *exe)
{
	int fd = open(exe, O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	bool is_static = false;
	if (fd < 0)
		return false;
	if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr)) {
		is_static = true;
		for (unsigned i = 0; i < eh.e_phnum && is_static; i++) {
			Elf64_Phdr ph;
			off_t at = (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph);
			if (pread(fd, &ph, sizeof ph, at) != (ssize_t)sizeof ph || ph.p_type == PT_INTERP)
				is_static = false;
		}
	}
	close(fd);
	return is_static;
}

void run_exe_why_untraced(const char *program, char *msg, size_t len)
{
	char buf[PATH_MAX];
	struct stat st;
	const char *exe = find_exe(program, buf, sizeof buf);
	if (!exe || stat(exe, &st)) {
		snprintf(msg, len, "the tracer was not loaded (statically linked program?)");
		return;
	}
	const char *why = (st.st_mode & S_ISUID) && st.st_uid != geteuid()   ? "setuid"
			  : (st.st_mode & S_ISGID) && st.st_gid != getegid() ? "setgid"
			  : geteuid() && getxattr(exe, "security.capability", NULL, 0) > 0
			      ? "given file capabilities"
			      : NULL;
	if (why)
		snprintf(msg, len,
			 "the tracer was not loaded: '%s' is %s, and the loader ignores LD_PRELOAD for such "
			 "programs (run it as their owner, or trace a copy without the bit)",
			 exe, why);
	else if (is_static_elf(exe))
		snprintf(msg, len, "the tracer was not loaded: '%s' is statically linked", exe);
	else
		snprintf(msg, len, "the tracer was not loaded (statically linked program?)");
}
