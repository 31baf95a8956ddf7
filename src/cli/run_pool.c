/* rtrace run's pool of trace files: a thread that keeps RT_POOL_SLOTS
 * empty files ready in a hidden directory of the output directory, which
 * the traced processes take by renaming one to their trace's name
 * (format/run_env.h, RT_ENV_POOL; the tracer's side is
 * src/preload/pool.c, which says why).
 *
 * Each file is made as the tracer made its own (O_EXCL, 0600) with disk
 * blocks for its first RT_POOL_RESERVE bytes, so the tracer needs no
 * fallocate for its first records; it takes its slot's name once it is
 * whole (a rename: a tracer that took a file from a slot being filled
 * would find it short, and reserve the blocks itself).
 *
 * The thread looks at the pool (one readdir) FAST_MS after it made a
 * file, twice as long after each look that found nothing taken, up to
 * SLOW_MS: a shell loop or a build finds its files made again within
 * 2 ms (8 files: 4 iterations of a shell loop, whose fork child and
 * command take one each), an idle program costs ~30 looks a second.
 *
 * No pool on tmpfs: a file is made there in ~20 us, and the pool's
 * thread took more (~80 us of CPU a file, its wake-ups included) than
 * the rename saved the process; a --follow-children shell loop of
 * /bin/true cost 2.23x plain with it, 2.04x without (bench/README.md,
 * "Per-process cost"). The pool is
 * removed with the files left when the program ends; rtrace run killed
 * leaves it (a directory .rtrace-pool-XXXXXX of at most RT_POOL_SLOTS
 * empty files), and every trace written so far under its name. The
 * thread takes no signal (rtrace run's main thread forwards them).
 * RTRACE_ZSTATS in the environment prints how many files it made. */
#define _GNU_SOURCE
#include "run_pool.h"
#include "cli.h"
#include "format/run_env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
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
	char name[64]; /* in the output directory */
	bool chmod;    /* the umask takes bits of 0600 off */
	int dirfd;     /* the output directory */
	DIR *pool;
	int stop[2];
	pthread_t thread;
	unsigned long made;
};

/* Slot i's file, made whole under another name ("n" and i, which no
 * tracer takes) and then renamed to its slot; false when it cannot be (a
 * full disk). */
static bool make(run_pool *p, unsigned i)
{
	char n[16], tmp[16];
	snprintf(n, sizeof n, "%u", i);
	snprintf(tmp, sizeof tmp, "n%u", i);
	int d = dirfd(p->pool), fd = openat(d, tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	bool ok = (!p->chmod || !fchmod(fd, 0600)) && !posix_fallocate(fd, 0, RT_POOL_RESERVE) &&
		  !renameat(d, tmp, d, n);
	close(fd);
	if (!ok)
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
 * take a millisecond); how many it made. */
static unsigned fill(run_pool *p)
{
	bool have[RT_POOL_SLOTS] = {false};
	struct dirent *e;
	rewinddir(p->pool);
	while ((e = readdir(p->pool))) {
		char *end;
		unsigned long i = strtoul(e->d_name, &end, 10);
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && !*end && i < RT_POOL_SLOTS)
			have[i] = true;
	}
	unsigned made = 0;
	for (unsigned i = 0; i < RT_POOL_SLOTS; i++) {
		if (have[i])
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
	if (p->pool)
		closedir(p->pool);
	int fds[] = {p->dirfd, p->stop[0], p->stop[1]};
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(p);
}

/* The pool's directory, made in dir (0700, a name of its own). */
static bool make_dir(run_pool *p, const char *dir)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof path, "%s/.rtrace-pool-XXXXXX", dir);
	if (n < 0 || (size_t)n >= sizeof path || !mkdtemp(path))
		return false;
	snprintf(p->name, sizeof p->name, "%s", strrchr(path, '/') + 1);
	p->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = p->dirfd < 0 ? -1 : openat(p->dirfd, p->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && !(p->pool = fdopendir(fd)))
		close(fd);
	if (!p->pool)
		(void)rmdir(path);
	return p->pool != NULL;
}

run_pool *run_pool_start(const char *dir, char *name, size_t len)
{
	struct statfs fs;
	if (!statfs(dir, &fs) && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC))
		return NULL;
	run_pool *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	mode_t mask = umask(0); /* rtrace run has no other thread yet */
	umask(mask);
	p->chmod = (mask & 0600) != 0;
	p->dirfd = p->stop[0] = p->stop[1] = -1;
	if (!make_dir(p, dir) || strlen(p->name) >= len) {
		if (p->pool)
			(void)unlinkat(p->dirfd, p->name, AT_REMOVEDIR);
		pool_free(p);
		return NULL;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pipe2(p->stop, O_CLOEXEC) ? errno : pthread_create(&p->thread, NULL, run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		(void)unlinkat(p->dirfd, p->name, AT_REMOVEDIR);
		pool_free(p);
		return NULL;
	}
	memcpy(name, p->name, strlen(p->name) + 1);
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
		char n[16];
		snprintf(n, sizeof n, "%u", i);
		left += !unlinkat(dirfd(p->pool), n, 0);
	}
	(void)unlinkat(p->dirfd, p->name, AT_REMOVEDIR);
	if (getenv("RTRACE_ZSTATS"))
		cli_info("pool: %lu trace files made ahead, %lu taken", p->made, p->made - left);
	pool_free(p);
}
