/* Reserved descriptors: files the tracer must still be able to read when
 * the program has left no descriptor free (it lowered RLIMIT_NOFILE and
 * filled it, or dup2'ed onto every number). Each is opened at start and
 * kept at a high number, hidden from the program like the trace file's
 * (writer.c); a reader first tries a descriptor of its own and takes the
 * reserved one only when none is left, so the reserved one's position in
 * the file is no one's concern but that reader's. */
#ifndef RT_FDRES_H
#define RT_FDRES_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct rt_fdres {
	const char *path;
	int flags; /* of open; O_CLOEXEC is added */
	int fd;    /* -1: not reserved */
	pid_t pid; /* the process it was opened in ("/proc/self" is its) */
	dev_t dev;
	ino_t ino;
} rt_fdres;

#define RT_FDRES_INIT(path, flags) {path, flags, -1, 0, 0, 0}

/* Opens the reserved descriptor, or in a forked child opens it again in
 * the number its parent's holds (a placeholder, fdres.c); nothing when
 * it is this process's already or the program took its number. Without a
 * free descriptor it stays as it was. */
void rt_fdres_open(rt_fdres *r);
/* A descriptor of r->path: a new one (*fresh set: the caller closes it)
 * or else the reserved one, when it is still the file opened (a forked
 * child's placeholder is reopened in its number then); -1 and errno
 * (that of the failed open) when neither. */
int rt_fdres_get(rt_fdres *r, bool *fresh);
/* The reserved descriptor when it is still the file opened, else -1:
 * for a reader that does not move the file's position (an ioctl). */
int rt_fdres_held(const rt_fdres *r);

#endif
