/* Reserved descriptors (fdres.h). A reserved descriptor is checked with
 * fstat before each use, which needs no descriptor: the program may have
 * closed it with a raw system call or dup2'ed onto its number. A forked
 * child's reopening moves its file into the number with the system call
 * itself: through the fd module's dup3 it looked the real one up with
 * dlsym in every child (bash's child of each command), a twelfth of a
 * traced shell loop's fork children. */
#define _GNU_SOURCE
#include "fdres.h"
#include "preload.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool still_ours(const rt_fdres *r)
{
	struct stat st;
	return r->fd >= 0 && r->pid == getpid() && !fstat(r->fd, &st) && st.st_dev == r->dev &&
	       st.st_ino == r->ino;
}

/* open, as the tracer's own (busy: no module records it). */
static int own_open(const rt_fdres *r)
{
	int busy = rt_t.busy;
	rt_t.busy = 1;
	int fd = open(r->path, r->flags | O_CLOEXEC);
	rt_t.busy = busy;
	return fd;
}

void rt_fdres_open(rt_fdres *r)
{
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
	errno = err;
	return -1;
}
