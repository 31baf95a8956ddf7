/* rtrace run compresses the traces while the program runs: the tracer
 * writes raw chunks to PATH.raw (format/run_env.h, RT_FLAG_COMPRESS) and
 * announces PATH in the manifest; this process, idle otherwise while it
 * waits for the program, follows each raw trace and writes its complete
 * chunks into the compressed trace PATH (rt_bin_zopen/zstep/zclose,
 * docs/binary-format.md "Compressed traces"), punching them out of the
 * raw file behind it. Nothing runs in the traced program: its threads
 * only write their chunks as before. When the compressor falls behind,
 * the raw file grows (up to the disk) instead of the program slowing.
 *
 * The loop: waitpid(WNOHANG), then one step over every trace (new
 * manifest entries first); a step that found nothing to compress sleeps
 * 5 ms (or until the program ends), so an idle program costs about 200
 * wake-ups a second.
 *
 * A short trace stays raw, under its name: the tracer makes its file
 * under the trace's name and gives it the raw name PATH.raw only when it
 * grows past its first chunk (src/preload/writer.c, to_raw_name), so a
 * trace without a raw file is one chunk at most (a /bin/true's, a
 * shell's fork child's: most of those a shell loop or a build runs) and
 * nothing is done to it: not read, compressed, rewritten, cut nor
 * renamed. Every reader reads raw traces; the container is for long
 * traces. Packing such a trace in place (rt_bin_zpack) cost this process
 * ~0.45 ms of CPU a trace in a --follow-children shell loop, and renaming
 * it from its raw name ~25 us on ext4, 200 of them a loop of 100
 * commands. A trace with a raw file gets a writer, and is handed to the
 * page-populating thread (run_prefault.c). A trace is finished once its
 * tracer wrote data_end (a clean exit) or its process is gone (killed,
 * or a crash); at the end, every trace whose process has ended is
 * finished, and one whose process still runs (a daemon that outlived the
 * program) is left to read as truncated, with its remaining chunks in
 * PATH.raw (or, when nothing of it was compressed yet, left raw under
 * its name). RTRACE_ZSTATS in the environment prints
 * the figures of each trace and the CPU time this process used. */
#define _GNU_SOURCE
#include "run_compress.h"
#include "run_manifest.h"
#include "run_prefault.h"
#include "cli.h"
#include "format/run_env.h"
#include "rtrace/binary.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct ztrace {
	pid_t pid;
	char *path;
	rt_bin_zwriter *w; /* NULL once finished (or never started) */
	int pending;       /* 1 until it has a writer or stays raw */
} ztrace;

struct run_compress {
	const char *manifest;
	off_t seen;       /* manifest bytes read */
	uint64_t look_at; /* the last look at the manifest and the processes (ns) */
	int level;
	run_prefault *pf; /* told of each trace that gets a writer */
	ztrace *t;
	size_t n, cap;
};

run_compress *run_compress_new(const char *manifest, int level, run_prefault *pf)
{
	run_compress *z = calloc(1, sizeof *z);
	if (!z)
		cli_die("out of memory");
	z->manifest = manifest;
	z->level = level;
	z->pf = pf;
	return z;
}

/* The process is gone, or a zombie: its trace will not change. */
static bool ended(pid_t pid)
{
	char path[64], st[256];
	if (kill(pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	ssize_t n = read(fd, st, sizeof st - 1);
	close(fd);
	st[n > 0 ? n : 0] = '\0';
	const char *r = strrchr(st, ')');
	return r && (r[2] == 'Z' || r[2] == 'X');
}

/* The streaming writer of t's trace; false when it cannot be written
 * (then it stays raw, under its name). */
static bool start(run_compress *z, ztrace *t)
{
	char raw[PATH_MAX + sizeof RT_RAW_SUFFIX];
	rt_diag err;
	snprintf(raw, sizeof raw, "%s%s", t->path, RT_RAW_SUFFIX);
	t->pending = 0;
	t->w = rt_bin_zopen(raw, t->path, z->level, &err);
	if (!t->w) {
		char m[700];
		rt_diag_format(&err, m, sizeof m);
		cli_warning("%s; the trace stays uncompressed", m);
		if (access(t->path, F_OK))
			(void)!rename(raw, t->path);
	} else {
		run_prefault_follow(z->pf, t->pid, t->path);
	}
	return t->w != NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A trace new in the manifest waits for the next look. */
static void add(run_compress *z, pid_t pid, const char *path)
{
	if (z->n == z->cap) {
		z->cap = z->cap ? 2 * z->cap : 8;
		z->t = realloc(z->t, z->cap * sizeof *z->t);
		if (!z->t)
			cli_die("out of memory");
	}
	z->t[z->n++] = (ztrace){pid, strdup(path), NULL, 1};
}

/* A pending trace at a look: one with a raw file gets its writer (true
 * then); one without is short, done once its process is over and left
 * for the next look while it runs. */
static bool pending(run_compress *z, ztrace *t, bool gone, bool final)
{
	char raw[PATH_MAX + sizeof RT_RAW_SUFFIX];
	snprintf(raw, sizeof raw, "%s%s", t->path, RT_RAW_SUFFIX);
	if (!access(raw, F_OK))
		return start(z, t);
	if (gone || final)
		t->pending = 0;
	return false;
}

static void on_entry(void *z, pid_t pid, const char *path) { add(z, pid, path); }

/* New "PID PATH" entries of the manifest. */
static void read_manifest(run_compress *z)
{
	run_manifest_read(z->manifest, &z->seen, on_entry, z);
}

static void stats(const ztrace *t)
{
	rt_bin_zstats s;
	if (!getenv("RTRACE_ZSTATS"))
		return;
	rt_bin_zstats_get(t->w, &s);
	cli_info("compressed %s: %" PRIu64 " chunks, %" PRIu64 " bytes -> %" PRIu64 " bytes", t->path, s.chunks,
		 s.raw_bytes, s.out_bytes);
}

/* Unfinished (its process still runs, or the container cannot be
 * written), a trace of which nothing was compressed stays raw, under
 * its name: the raw file is complete as far as it goes. */
static void close_trace(ztrace *t, bool finish)
{
	rt_diag err;
	rt_bin_zstats st;
	char raw[PATH_MAX + sizeof RT_RAW_SUFFIX];
	stats(t);
	rt_bin_zstats_get(t->w, &st);
	if (rt_bin_zclose(t->w, finish, &err)) {
		char m[700];
		rt_diag_format(&err, m, sizeof m);
		cli_warning("%s", m);
	}
	t->w = NULL;
	snprintf(raw, sizeof raw, "%s%s", t->path, RT_RAW_SUFFIX);
	if (!finish && !st.chunks && !unlink(t->path))
		(void)!rename(raw, t->path);
}

/* One step over every trace; false when none had anything to compress.
 * The manifest and whether each process has ended are looked at once
 * every LOOK_NS at most (and at the last step): while the compressor
 * keeps up with a busy program, a step finds a chunk or two, and these
 * four system calls a trace were a tenth of its time. */
#define LOOK_NS 10000000u
static bool step(run_compress *z, bool final)
{
	bool work = false, look = final || mono_ns() - z->look_at >= LOOK_NS;
	if (look) {
		z->look_at = mono_ns();
		read_manifest(z);
	}
	for (size_t i = 0; i < z->n; i++) {
		ztrace *t = &z->t[i];
		if (!t->w && (!t->pending || !look))
			continue;
		bool done = false, gone = look && ended(t->pid); /* before the step: then every chunk is there */
		if (t->pending && !pending(z, t, gone, final))
			continue;
		rt_diag err;
		long k = rt_bin_zstep(t->w, gone, &done, &err);
		if (k < 0) {
			char m[700];
			rt_diag_format(&err, m, sizeof m);
			cli_warning("%s", m);
			close_trace(t, false);
			continue;
		}
		work |= k > 0;
		if (done || gone)
			close_trace(t, true);
		else if (final)
			close_trace(t, false); /* its process still runs */
	}
	return work;
}

/* The idle wait between steps: 5 ms, or until the program ends (its
 * pidfd is readable then): a short program's run no longer waits out
 * the rest of a sleep (2.5 ms on average) after it ended. */
static void idle(int pidfd)
{
	struct pollfd p = {pidfd, POLLIN, 0};
	if (pidfd < 0 || poll(&p, 1, 5) < 0) {
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
	}
}

pid_t run_compress_wait(run_compress *z, pid_t pid, int *status)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r != 0) {
			if (pidfd >= 0)
				close(pidfd);
			return r;
		}
		if (!step(z, false))
			idle(pidfd);
	}
}

void run_compress_finish(run_compress *z)
{
	z->pf = NULL; /* stopped once the program ended (run.c): no page is wanted now */
	step(z, true);
	for (size_t i = 0; i < z->n; i++)
		free(z->t[i].path);
	free(z->t);
	if (getenv("RTRACE_ZSTATS")) {
		struct rusage ru, rc;
		getrusage(RUSAGE_SELF, &ru);
		getrusage(RUSAGE_CHILDREN, &rc);
		cli_info("rtrace run's CPU time: %.3f s user, %.3f s system; the program's: %.3f s user, %.3f s system",
			 ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
			 rc.ru_utime.tv_sec + rc.ru_utime.tv_usec / 1e6, rc.ru_stime.tv_sec + rc.ru_stime.tv_usec / 1e6);
	}
	free(z);
}
