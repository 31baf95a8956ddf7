/* A trace file from `rtrace run`'s pool (format/run_env.h, RT_ENV_POOL;
 * the pool is kept full by src/cli/run_pool.c).
 *
 * Creating its file was the largest part of a short traced process's
 * cost on a disk filesystem: on this machine's ext4 an inode took
 * 0.1-1.4 ms to allocate (the allocator scans the inodes deleted in the
 * last minute, and a --follow-children run of a shell loop or a build
 * deletes or renames hundreds), then fchmod and the fallocate of the
 * first 12 KiB. rtrace run makes the files ahead, in a thread of its
 * own, and the tracer takes one with a rename into its trace's name
 * (~25 us on ext4, ~10 on tmpfs) and an open of that name; the records
 * then go into the shared mapping of the file as before, so a SIGKILLed
 * process still leaves its trace. rtrace run's broker handing files
 * over a unix socket (SCM_RIGHTS) was measured first: the exchange took
 * 80-230 us (two processes' system calls and two wake-ups on this VM),
 * which ate the gain (bench/README.md, "Per-process cost").
 *
 * Nothing waits on rtrace run: a slot that is missing (taken, not made
 * again yet, or rtrace run gone) is ENOENT at once, and after
 * RT_POOL_TRIES of them, or any error but a name taken, the tracer
 * creates its file itself, as without a pool. The slots tried start at
 * the process id's, so that processes started together try different
 * ones. The pool's path is on the stack: a vfork child may run this. */
#define _GNU_SOURCE
#include "preload.h"
#include "format/run_env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/* the pool does not work here (no RENAME_NOREPLACE on this filesystem,
 * say): not tried again by this process */
static int pool_off;

int rt_pool_take(const char *path)
{
	char slot[sizeof rt_opt.dir + sizeof rt_opt.pool + 16];
	unsigned first = (unsigned)getpid() % RT_POOL_SLOTS;
	int err = ENOENT;
	for (unsigned t = 0; t < RT_POOL_TRIES && !pool_off; t++) {
		snprintf(slot, sizeof slot, "%s/%s%u", rt_opt.dir, rt_opt.pool, (first + t) % RT_POOL_SLOTS);
		if (!renameat2(AT_FDCWD, slot, AT_FDCWD, path, RENAME_NOREPLACE)) {
			int fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd < 0) /* ours, but unusable: no file rather than an empty one */
				(void)unlink(path);
			return fd;
		}
		err = errno;
		if (err == EEXIST)
			return -1; /* the next name */
		if (err != ENOENT)
			pool_off = 1;
	}
	errno = err;
	return -1;
}
