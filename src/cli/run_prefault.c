/* rtrace run puts the trace's pages in the page cache before the traced
 * program writes them. The tracer stores its records into a shared
 * mapping of the (raw) trace file, so every new 4 KiB of trace is a
 * write fault in the program's thread that allocates, zeroes and charges
 * a page-cache page and goes through the filesystem's page_mkwrite:
 * ~4 us a page of ~220 records, 19-23 ns a record, a sixth of the traced
 * churn's CPU (bench/README.md, "Trace pages without faults"). A page
 * that is already in the page cache costs the program only a minor
 * fault (the page table entry): 2.5 ns a record in the same measure.
 *
 * So this thread, in rtrace run's own process (idle otherwise, or
 * compressing), follows each trace the manifest names (with --compress:
 * each the compressor hands it, run_prefault_follow, those longer than
 * one chunk: a watch and a look at every event for each short process's
 * trace, which has nothing to populate, cost this thread ~0.1 ms of CPU a
 * trace in a --follow-children shell loop, more than the compressor) and,
 * whenever its
 * file grows (the tracer reserves chunks with fallocate: one, then
 * doubling, then 8 MiB at a time; inotify's IN_MODIFY says when), maps
 * each new chunk that no thread took yet (its magic still 0) and faults
 * it in with MADV_POPULATE_WRITE (Linux 5.14), then unmaps it: the pages
 * stay in the page cache, dirty, and the program finds them there. The
 * file's content does not change (populating writes nothing), so the
 * format, the tracer and every guarantee (SIGKILL of the program reads to
 * its last record) stay as they were; a chunk the tracer takes while it
 * is being populated is faulted by whichever comes first. The first two
 * chunks of a file are left alone: a short process (a /bin/true under
 * --follow-children) writes a page or two of its first chunk, and
 * populating 32 pages for it would cost more than its faults.
 *
 * The thread makes its inotify instance only once the program has run
 * for START_MS: closing an instance that holds watches waits for the
 * kernel's fsnotify mark reaper and an SRCU grace period, 5-23 ms of
 * rtrace run's wall time measured here (strace -T), more than the whole
 * of a short program's run under rtrace run; a program that ends before
 * then has nothing to populate (its first two chunks are its own).
 * Without inotify (no instance left) the thread looks every 2 ms; on a
 * kernel without MADV_POPULATE_WRITE it stops at the first EINVAL. The
 * thread takes no signal (rtrace run's main thread forwards them). */
#define _GNU_SOURCE
#include "run_prefault.h"
#include "run_manifest.h"
#include "format/run_env.h"
#include "format/trace_format.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define FIRST_CHUNK 2 /* chunks of a file left to the tracer's own faults */
#define POLL_MS 2     /* without inotify */
#define START_MS 20   /* the program's run before the thread starts watching */
/* The file is mapped a window at a time: a mapping per chunk cost 50-80
 * ns a record in mmap and munmap alone, one per 8 MiB 8 ns in all. */
#define WINDOW (8u << 20)

typedef struct pf_file {
	pid_t pid;
	int fd, wd;      /* wd: its inotify watch, or -1 */
	uint32_t hs, cs; /* 0 until the header was read */
	uint64_t next;   /* the first chunk not looked at yet */
	uint8_t *map;    /* the window of chunks `win` (WINDOW bytes), or NULL */
	uint64_t win;
} pf_file;

struct run_prefault {
	char *manifest;
	bool raw_suffix; /* the compressor's feed names the traces, not the manifest */
	off_t seen; /* manifest bytes read */
	int feed[2]; /* run_prefault_follow's entries, "PID PATH" and a NUL each */
	char fbuf[2 * PIPE_BUF];
	size_t flen;
	int in;     /* inotify, or -1 */
	int stop[2];
	bool off;   /* MADV_POPULATE_WRITE is not supported */
	pf_file *f;
	size_t n, cap;
	pthread_t thread;
};

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static void add_file(void *arg, pid_t pid, const char *path)
{
	run_prefault *pf = arg;
	char data[PATH_MAX + sizeof RT_RAW_SUFFIX];
	snprintf(data, sizeof data, "%s%s", path, pf->raw_suffix ? RT_RAW_SUFFIX : "");
	int fd = open(data, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	if (pf->n == pf->cap) {
		size_t cap = pf->cap ? 2 * pf->cap : 8;
		pf_file *f = realloc(pf->f, cap * sizeof *f);
		if (!f) {
			close(fd);
			return;
		}
		pf->f = f;
		pf->cap = cap;
	}
	int wd = pf->in >= 0 ? inotify_add_watch(pf->in, data, IN_MODIFY) : -1;
	pf->f[pf->n++] = (pf_file){pid, fd, wd, 0, 0, 0, NULL, 0};
}

/* New "PID PATH" entries of the feed (an entry may come in two reads). */
static void read_feed(run_prefault *pf)
{
	ssize_t got;
	while ((got = read(pf->feed[0], pf->fbuf + pf->flen, sizeof pf->fbuf - pf->flen)) > 0) {
		pf->flen += (size_t)got;
		char *p = pf->fbuf, *end = pf->fbuf + pf->flen, *nul;
		for (; p < end && (nul = memchr(p, '\0', (size_t)(end - p))); p = nul + 1) {
			char *sp = strchr(p, ' ');
			if (sp)
				add_file(pf, (pid_t)atoi(p), sp + 1);
		}
		pf->flen = (size_t)(end - p);
		memmove(pf->fbuf, p, pf->flen);
	}
}

/* New "PID PATH" entries of the manifest, or of the feed. */
static void read_manifest(run_prefault *pf)
{
	if (pf->raw_suffix)
		read_feed(pf);
	else
		run_manifest_read(pf->manifest, &pf->seen, add_file, pf);
}

static void unmap(pf_file *f)
{
	if (f->map)
		munmap(f->map, WINDOW);
	f->map = NULL;
}

static void drop(run_prefault *pf, pf_file *f)
{
	unmap(f);
	if (f->wd >= 0)
		(void)inotify_rm_watch(pf->in, f->wd);
	close(f->fd);
}

/* Faults chunk k of f in, unless a thread took it already. */
static void populate_chunk(run_prefault *pf, pf_file *f, uint64_t k)
{
	uint8_t magic[RT_TF_CHUNK_MAGIC_LEN];
	uint64_t at = f->hs + k * f->cs, per = WINDOW / f->cs;
	if (pread(f->fd, magic, sizeof magic, (off_t)at) == (ssize_t)sizeof magic &&
	    !memcmp(magic, RT_TF_CHUNK_MAGIC, RT_TF_CHUNK_MAGIC_LEN))
		return;
	if (!f->map || f->win != k / per) {
		unmap(f);
		void *p = mmap(NULL, WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd,
			       (off_t)(f->hs + k / per * per * f->cs));
		if (p == MAP_FAILED)
			return;
		f->map = p;
		f->win = k / per;
	}
	if (madvise(f->map + k % per * f->cs, f->cs, MADV_POPULATE_WRITE) && errno == EINVAL)
		pf->off = true;
}

/* The chunks f's tracer reserved since the last look; false once the
 * file is done with (removed, or its process wrote data_end or ended). */
static bool populate(run_prefault *pf, pf_file *f)
{
	struct stat st;
	uint8_t h[RT_TF_FILE_HEADER];
	if (fstat(f->fd, &st) || !st.st_nlink || kill(f->pid, 0))
		return false;
	if (pread(f->fd, h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h, RT_TF_MAGIC, RT_TF_MAGIC_LEN))
		return true; /* not written yet */
	uint64_t data_end;
	memcpy(&data_end, h + RT_TF_OFF_DATA_END, 8);
	if (data_end)
		return false;
	f->hs = get32(h + RT_TF_OFF_HEADER_SIZE);
	f->cs = get32(h + RT_TF_OFF_CHUNK_SIZE);
	if (f->hs % 4096 || f->cs % 4096 || !f->cs || WINDOW % f->cs || (uint64_t)st.st_size < f->hs)
		return false;
	uint64_t n = ((uint64_t)st.st_size - f->hs) / f->cs;
	if (f->next < FIRST_CHUNK)
		f->next = FIRST_CHUNK;
	for (; f->next < n && !pf->off; f->next++)
		populate_chunk(pf, f, f->next);
	return true;
}

/* Waits for a file to change (or POLL_MS); false when asked to stop. */
static bool wait_change(run_prefault *pf)
{
	struct pollfd p[3] = {{pf->stop[0], POLLIN, 0}, {pf->in, POLLIN, 0}, {pf->feed[0], POLLIN, 0}};
	int r = poll(p, 3, pf->in >= 0 ? -1 : POLL_MS);
	if (r > 0 && p[0].revents)
		return false;
	if (r > 0 && p[1].revents) {
		char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
		(void)!read(pf->in, ev, sizeof ev); /* which file does not matter */
	}
	return true;
}

/* Waits START_MS for a stop; false when asked to stop before then. */
static bool wait_start(run_prefault *pf)
{
	struct pollfd p = {pf->stop[0], POLLIN, 0};
	if (poll(&p, 1, START_MS) > 0)
		return false;
	pf->in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (pf->in >= 0 && !pf->raw_suffix)
		(void)inotify_add_watch(pf->in, pf->manifest, IN_MODIFY);
	return true;
}

static void *run(void *arg)
{
	run_prefault *pf = arg;
	if (!wait_start(pf))
		return NULL;
	do {
		read_manifest(pf);
		for (size_t i = 0; i < pf->n;) {
			if (!pf->off && populate(pf, &pf->f[i])) {
				i++;
				continue;
			}
			drop(pf, &pf->f[i]);
			pf->f[i] = pf->f[--pf->n];
		}
	} while (wait_change(pf));
	return NULL;
}

/* The feed: a pipe neither end of which blocks (made so by fcntl: a
 * pipe2 with O_NONBLOCK in rtrace run would look like libunwind's probe
 * pipe in the tracer to tests/cli/startup.sh). */
static bool feed_pipe(int *p)
{
	if (pipe2(p, O_CLOEXEC))
		return false;
	if (!fcntl(p[0], F_SETFL, O_NONBLOCK) && !fcntl(p[1], F_SETFL, O_NONBLOCK))
		return true;
	close(p[0]);
	close(p[1]);
	p[0] = p[1] = -1;
	return false;
}

run_prefault *run_prefault_start(const char *manifest, bool raw_suffix)
{
	run_prefault *pf = calloc(1, sizeof *pf);
	if (!pf)
		return NULL;
	pf->manifest = strdup(manifest);
	pf->raw_suffix = raw_suffix;
	pf->in = -1; /* made by the thread (wait_start) */
	pf->feed[0] = pf->feed[1] = pf->stop[0] = pf->stop[1] = -1;
	sigset_t all, old;
	sigfillset(&all);
	if (!pf->manifest || (raw_suffix && !feed_pipe(pf->feed)) || pipe2(pf->stop, O_CLOEXEC)) {
		run_prefault_stop(pf); /* no thread to stop (stop[1] is -1) */
		return NULL;
	}
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&pf->thread, NULL, run, pf);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		close(pf->stop[1]);
		pf->stop[1] = -1;
		run_prefault_stop(pf);
		return NULL;
	}
	return pf;
}

void run_prefault_follow(run_prefault *pf, pid_t pid, const char *path)
{
	char e[PIPE_BUF];
	int n = pf && pf->feed[1] >= 0 ? snprintf(e, sizeof e, "%d %s", (int)pid, path) : -1;
	if (n > 0 && (size_t)n < sizeof e)
		(void)!write(pf->feed[1], e, (size_t)n + 1); /* a full pipe: this one is not populated */
}

void run_prefault_stop(run_prefault *pf)
{
	if (!pf)
		return;
	if (pf->stop[1] >= 0) {
		(void)!write(pf->stop[1], "", 1);
		pthread_join(pf->thread, NULL);
		close(pf->stop[1]);
	}
	if (pf->stop[0] >= 0)
		close(pf->stop[0]);
	for (int i = 0; i < 2; i++)
		if (pf->feed[i] >= 0)
			close(pf->feed[i]);
	for (size_t i = 0; i < pf->n; i++)
		drop(pf, &pf->f[i]);
	if (pf->in >= 0)
		close(pf->in);
	free(pf->f);
	free(pf->manifest);
	free(pf);
}
