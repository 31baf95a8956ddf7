/* rtrace run's pool of trace files: a thread that keeps RT_POOL_SLOTS
 * empty files ready in the output directory, under hidden names of their
 * own, which the traced processes take by renaming one to their trace's
 * name (format/run_env.h, RT_ENV_POOL; the tracer's side is
 * src/preload/pool.c, which says why).
 *
 * Each file is made as the tracer made its own (0600) with disk blocks
 * for its first RT_POOL_RESERVE bytes, so the tracer needs no fallocate
 * for its first records; it takes its slot's name once it is whole (a
 * tracer that took a file from a slot being filled would find it short,
 * and reserve the blocks itself). It is made with no name (O_TMPFILE)
 * and then linked: the directory is locked only for the link, not while
 * the filesystem looks for an inode, which on ext4 without a journal
 * passes over every inode freed in the last minutes (a build's, or the
 * previous run's traces removed: 0.1-1.4 ms a file). An open with
 * O_CREAT held the lock as long, and the traced processes' renames
 * waited for it (a --follow-children loop of 100 /bin/true: 154 ms
 * against 143 ms in such a state, bench/README.md "Per-process cost").
 *
 * The slots are in the output directory itself, not in a directory of
 * their own: a rename between two directories takes the filesystem's
 * rename mutex and both directories' locks, one within a directory only
 * its lock.
 *
 * The thread looks at the slots (a stat each) FAST_MS after it made a
 * file, twice as long after each look that found nothing taken, up to
 * SLOW_MS: a shell loop or a build finds its files made again within
 * 2 ms (8 files: 4 iterations of a shell loop, whose fork child and
 * command take one each), an idle program costs ~30 looks a second.
 *
 * No pool on tmpfs: a file is made there in ~20 us, and the pool's
 * thread took more (~80 us of CPU a file, its wake-ups included) than
 * the rename saved the process; a --follow-children shell loop of
 * /bin/true cost 2.23x plain with it, 2.04x without (bench/README.md,
 * "Per-process cost"). No pool either when rtrace run may use one CPU
 * alone (taskset, a container's cpuset): the thread's work then comes
 * out of the program's time, and its looks and renames on top; pinned
 * to one CPU the loop took 136.1 ms with it, 130.0 ms without. The
 * slots left are removed when the program
 * ends; rtrace run killed leaves them (at most RT_POOL_SLOTS empty files
 * named .rtrace-pool-PID-N, which a later run's tracers may take as
 * theirs), and every trace written so far under its name. The thread
 * takes no signal (rtrace run's main thread forwards them).
 * RTRACE_ZSTATS in the environment prints how many files it made. */
#define _GNU_SOURCE
#include "run_pool.h"
#include "cli.h"
#include "format/run_env.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define FAST_MS 2
#define SLOW_MS 32

struct run_pool {
	char prefix[64]; /* of the slots' names: slot i is prefix and i */
	bool chmod;      /* the umask takes bits of 0600 off */
	bool tmpfile;    /* O_TMPFILE works here (until it fails once) */
	int dirfd;       /* the output directory */
	int stop[2];
	pthread_t thread;
	unsigned long made;
};

/* A new file in the pool's directory with no name yet: O_TMPFILE takes
 * no lock on the directory while the filesystem finds it an inode, which
 * on ext4 without a journal can mean passing over every inode freed in
 * the last minutes (0.1-1.4 ms, find_inode_bit and recently_deleted).
 * An open with O_CREAT holds the directory's lock all that time, and a
 * traced process renaming a slot out of it waited as long. -1 where the
 * filesystem has no O_TMPFILE (the caller makes a named file). */
static int unnamed(int d)
{
	return openat(d, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

/* fd's unnamed file linked as name in d: through /proc, which needs no
 * capability (linkat's AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH). */
static bool link_unnamed(int fd, int d, const char *name)
{
	char proc[32];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	return !linkat(AT_FDCWD, proc, d, name, AT_SYMLINK_FOLLOW);
}

/* Slot i's name, or with tmp its file's name while it is made. */
static void slot_name(const run_pool *p, unsigned i, bool tmp, char out[96])
{
	snprintf(out, 96, "%s%s%u", p->prefix, tmp ? "n" : "", i);
}

/* Slot i's file, made whole before it takes the slot's name (a tracer
 * takes it at once): unnamed and then linked, or where that cannot be
 * done made under another name (prefix, "n" and i, which no tracer
 * takes) and renamed; false when it cannot be made (a full disk). */
static bool make(run_pool *p, unsigned i)
{
	char n[96], tmp[96];
	slot_name(p, i, false, n);
	slot_name(p, i, true, tmp);
	int d = p->dirfd, fd = p->tmpfile ? unnamed(d) : -1;
	bool named = fd < 0;
	if (named) {
		p->tmpfile = false;
		fd = openat(d, tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return false;
	bool ok = (!p->chmod || !fchmod(fd, 0600)) && !posix_fallocate(fd, 0, RT_POOL_RESERVE) &&
		  (named ? !renameat(d, tmp, d, n) : link_unnamed(fd, d, n));
	close(fd);
	if (!ok && named)
		(void)unlinkat(d, tmp, 0);
	p->made += ok;
	return ok;
}

static bool stopped(const run_pool *p)
{
	struct pollfd stop = {p->stop[0], POLLIN, 0};
	return poll(&stop, 1, 0) > 0;
}

/* Makes the missing slots' files again (until told to stop: a file can
 * take a millisecond); how many it made. A slot is looked at by name:
 * the output directory holds every trace, a readdir would read them all. */
static unsigned fill(run_pool *p)
{
	unsigned made = 0;
	for (unsigned i = 0; i < RT_POOL_SLOTS; i++) {
		char n[96];
		struct stat st;
		slot_name(p, i, false, n);
		if (!fstatat(p->dirfd, n, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (stopped(p) || !make(p, i))
			break; /* the next look tries again */
		made++;
	}
	return made;
}

static void *run(void *arg)
{
	run_pool *p = arg;
	struct pollfd stop = {p->stop[0], POLLIN, 0};
	for (int wait = 0; poll(&stop, 1, wait) == 0;) {
		wait = fill(p) || wait < FAST_MS ? FAST_MS : wait * 2 > SLOW_MS ? SLOW_MS : wait * 2;
	}
	return NULL;
}

static void pool_free(run_pool *p)
{
	int fds[] = {p->dirfd, p->stop[0], p->stop[1]};
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(p);
}

run_pool *run_pool_start(const char *dir, char *name, size_t len)
{
	struct statfs fs;
	if (!statfs(dir, &fs) && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC))
		return NULL;
	cpu_set_t cpus;
	if (!sched_getaffinity(0, sizeof cpus, &cpus) && CPU_COUNT(&cpus) < 2)
		return NULL; /* its thread would take the program's one CPU */
	run_pool *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	mode_t mask = umask(0); /* rtrace run has no other thread yet */
	umask(mask);
	p->chmod = (mask & 0600) != 0;
	p->tmpfile = true;
	p->stop[0] = p->stop[1] = -1;
	/* rtrace run's process id: no other run in the directory has it */
	int n = snprintf(p->prefix, sizeof p->prefix, ".rtrace-pool-%ld-", (long)getpid());
	p->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->dirfd < 0 || n < 0 || (size_t)n >= len) {
		pool_free(p);
		return NULL;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pipe2(p->stop, O_CLOEXEC) ? errno : pthread_create(&p->thread, NULL, run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pool_free(p);
		return NULL;
	}
	memcpy(name, p->prefix, (size_t)n + 1);
	return p;
}

void run_pool_stop(run_pool *p)
{
	if (!p)
		return;
	(void)!write(p->stop[1], "", 1);
	pthread_join(p->thread, NULL);
	unsigned long left = 0;
	for (unsigned i = 0; i < RT_POOL_SLOTS; i++) {
		char n[96];
		slot_name(p, i, false, n);
		left += !unlinkat(p->dirfd, n, 0);
	}
	if (getenv("RTRACE_ZSTATS"))
		cli_info("pool: %lu trace files made ahead, %lu taken", p->made, p->made - left);
	pool_free(p);
}
