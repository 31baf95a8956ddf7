/* Reserved descriptors (fdres.h). A reserved descriptor is checked with
 * fstat before each use, which needs no descriptor: the program may have
 * closed it with a raw system call or dup2'ed onto its number. A forked
 * child's reopening moves its file into the number with the system call
 * itself: through the fd module's dup3 it looked the real one up with
 * dlsym in every child (bash's child of each command), a twelfth of a
 * traced shell loop's fork children.
 *
 * A forked child opens nothing at the fork: the parent's descriptors,
 * inherited in the reserved numbers, hold those numbers for it (a
 * placeholder: fstat still finds the parent's file there) until the child
 * needs its own, when no descriptor is free (the placeholder is closed
 * and the open lands in its number) or before the program lowers its
 * descriptor limit (rt_fdres_open from the setrlimit family's
 * interposers, leak.c), below the placeholder's number maybe. Most fork
 * children exec at once (a shell's), where the two opens of /proc,
 * moved high, were ~0.09 ms of each (bench/README.md, "Per-process
 * cost"). */
#define _GNU_SOURCE
#include "fdres.h"
#include "preload.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool same_file(const rt_fdres *r);

static bool still_ours(const rt_fdres *r) { return r->fd >= 0 && r->pid == getpid() && same_file(r); }

/* open, as the tracer's own (busy: no module records it). */
static int own_open(const rt_fdres *r)
{
	int busy = rt_t.busy;
	rt_t.busy = 1;
	int fd = open(r->path, r->flags | O_CLOEXEC);
	rt_t.busy = busy;
	return fd;
}

/* The descriptor in r's number is still the file opened there, in this
 * process or (a placeholder) in a parent. */
static bool same_file(const rt_fdres *r)
{
	struct stat st;
	return r->fd >= 0 && !fstat(r->fd, &st) && st.st_dev == r->dev && st.st_ino == r->ino;
}

void rt_fdres_open(rt_fdres *r)
{
	if (r->fd >= 0 && (r->pid == getpid() || !same_file(r)))
		return; /* this process's already, or its number the program's now */
	int err = errno, fd = own_open(r);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0) {
		if (r->fd < 0) {
			r->fd = rt_place_fd(fd);
		} else if (syscall(SYS_dup3, fd, r->fd, O_CLOEXEC) == r->fd) {
			close(fd); /* the child's own file, in the same number */
		} else {
			close(fd);
			fd = -1;
		}
		if (fd >= 0) {
			r->pid = getpid();
			r->dev = st.st_dev;
			r->ino = st.st_ino;
		}
	} else if (fd >= 0) {
		close(fd);
	}
	errno = err;
}

int rt_fdres_held(const rt_fdres *r) { return still_ours(r) ? r->fd : -1; }

int rt_fdres_get(rt_fdres *r, bool *fresh)
{
	int fd = own_open(r), err = errno;
	*fresh = fd >= 0;
	if (fd >= 0)
		return fd;
	if (still_ours(r))
		return r->fd;
	if (r->fd >= 0 && r->pid != getpid() && same_file(r)) {
		/* a forked child's placeholder: its number for the child's own
		 * (closed by the system call: close's interposer keeps the
		 * tracer's hidden numbers from the program) */
		int num = r->fd;
		struct stat st;
		syscall(SYS_close, num);
		fd = own_open(r);
		if (fd >= 0 && fd != num && syscall(SYS_dup3, fd, num, O_CLOEXEC) == num)
			syscall(SYS_close, fd), fd = num;
		if (fd == num && !fstat(num, &st)) {
			r->pid = getpid();
			r->dev = st.st_dev;
			r->ino = st.st_ino;
			return num;
		}
		if (fd >= 0)
			syscall(SYS_close, fd);
		r->fd = -1;
	}
	errno = err;
	return -1;
}
