/* The trace file: a header page followed by 64 KiB chunks, mapped shared
 * in 8 MiB segments and extended with posix_fallocate. Threads own chunks
 * and append records with plain stores (see docs/binary-format.md for why
 * this makes every exit path, SIGKILL included, leave a complete trace).
 *
 * Growth: fallocate reserves the disk blocks before a chunk is handed
 * out, so a full disk is an error seen here (tracing stops and says why,
 * in the file header too) rather than a SIGBUS in the program. The file
 * doubles (one chunk first, at most to the end of the segment), so a
 * process that never exits cleanly (exec, SIGKILL) leaves a file at most
 * twice what it recorded instead of a whole segment; a clean exit cuts
 * the rest off. Growing must not change how the program runs: the file
 * size limit (RLIMIT_FSIZE) is checked first and, when there is one,
 * SIGXFSZ is held back around the tracer's own writes, so the program
 * never receives it for them. The first segment is mapped without readahead (no_readahead):
 * a short process's first fault no longer pages in its whole first chunk. */
#define _GNU_SOURCE
#include "preload.h"
#include "format/run_env.h"
#include "maps.h"
#include "pages.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The tracer's choices within format/trace_format.h's limits. */
#define HDR_SIZE 4096u
#define CHUNK_SIZE 65536u
#define CHUNK_HDR RT_TF_CHUNK_HEADER
_Static_assert(HDR_SIZE >= RT_TF_FILE_HEADER && HDR_SIZE <= RT_TF_MAX_HEADER, "header size");
_Static_assert(CHUNK_SIZE >= RT_TF_MIN_CHUNK && CHUNK_SIZE <= RT_TF_MAX_CHUNK, "chunk size");
/* the headers and the records' integers are stored as native integers */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the format is little endian");
_Static_assert(RT_RESERVE_MAX == CHUNK_SIZE - CHUNK_HDR, "rt_reserve's bound is a chunk's payload");
#define SEG_SIZE (8u << 20)
#define CHUNKS_PER_SEG (SEG_SIZE / CHUNK_SIZE)
#define MAX_SEGS 65536u /* 512 GiB of trace */

static int have_file;
/* The trace file's descriptor: high, close-on-exec, and checked before
 * use (the program may have closed it or put another file there). */
static int own_fd = -1;
static dev_t own_dev;
static ino_t own_ino;
static _Atomic int moved_once;
/* The trace's path, then right after its NUL its raw name: the same
 * path, or it and RT_RAW_SUFFIX when `rtrace run` compresses the records
 * of a long trace into the trace's path (format/run_env.h). The file is
 * made under the trace's path and takes the raw name when it grows past
 * its first chunk (to_raw_name): a short trace, most of those a shell or
 * a build runs, is then complete under its name, and rtrace run renames
 * none (a rename each cost ~25 us of its time on ext4). One buffer with
 * the cold tables: both names of a short path on one page, written by
 * every traced process (a fork child's included), while the variables
 * written at each fork keep a page or two of their own (see pages.h). */
#define PATH_CAP 4096u
static char paths[2 * PATH_CAP + sizeof RT_RAW_SUFFIX] RT_COLD;
static uint16_t data_off = 1; /* paths[1]: "" before a path is made */
static bool raw_named, raw_tried; /* the file has its raw name; it was tried */
#define trace_path paths
#define data_path (paths + data_off)
#define cur_path (raw_named ? data_path : trace_path)
static pthread_mutex_t grow_lock = PTHREAD_MUTEX_INITIALIZER;
/* the first segments' addresses among the variables every process
 * writes (not a page fault of their own), the others with the cold ones */
#define SEG_HOT 4u
static uint8_t *seg_hot[SEG_HOT];
static uint8_t *seg_cold[MAX_SEGS - SEG_HOT] RT_COLD;
#define seg_base(s) (*((s) < SEG_HOT ? &seg_hot[s] : &seg_cold[(s) - SEG_HOT]))
static _Atomic uint64_t next_chunk;  /* chunks handed out */
static _Atomic uint64_t ready_chunks; /* chunks backed by disk and mapped */
/* Bytes of the first chunk with disk blocks: FIRST_PART at first, the
 * whole chunk once its thread writes past them (see reserve_first). */
static uint32_t first_reserved;
_Atomic unsigned rt_writer_gen = 1;
static _Atomic int disabled_once;
/* chunks of each RELEASE_CHUNKS (1 MiB of trace) their threads have left */
#define RELEASE_CHUNKS 16u
_Static_assert(CHUNKS_PER_SEG % RELEASE_CHUNKS == 0, "a release within a segment");
static _Atomic uint16_t released[MAX_SEGS * (CHUNKS_PER_SEG / RELEASE_CHUNKS)] RT_COLD;
/* some chunk was left: released's page exists (a fork child that finds
 * it unset neither reads nor clears it, which would fault its page in) */
static _Atomic int released_used;

__thread rt_tls rt_t __attribute__((tls_model("initial-exec")));
static __thread uint32_t chunk_seq;
static __thread uint64_t chunk_index; /* of rt_t.chunk */

/* The coarse clock (the kernel tick, typically 4 ms) costs 3.5 ns a read
 * here against 22.6 ns for CLOCK_MONOTONIC, which was 13% of a traced
 * allocation churn; the text protocol prints milliseconds anyway. */
const char *rt_trace_path(void) { return trace_path; }
const char *rt_trace_data_path(void) { return data_path; }

/* SIGXFSZ held back in this thread around a write of the tracer that may
 * still pass the limit (the program lowered it since the check): the
 * kernel sends it to the writing thread, so blocking it here is enough.
 * One that the write raised is taken back; one pending before stays, as
 * does the mask. Async-signal-safe (the writer runs in handlers too). */
typedef struct xfsz_hold {
	sigset_t mask;
	bool held, pending;
} xfsz_hold;

static void xfsz_set(sigset_t *x)
{
	sigemptyset(x);
	sigaddset(x, SIGXFSZ);
}

/* Without a file size limit (the common case) no write raises SIGXFSZ:
 * one getrlimit instead of the four calls that hold it back (~40 system
 * calls of each command of a traced shell loop). */
static void xfsz_hold_on(xfsz_hold *h)
{
	struct rlimit rl;
	h->held = getrlimit(RLIMIT_FSIZE, &rl) || rl.rlim_cur != RLIM_INFINITY;
	if (!h->held)
		return;
	sigset_t x, p;
	xfsz_set(&x);
	pthread_sigmask(SIG_BLOCK, &x, &h->mask);
	h->pending = !sigpending(&p) && sigismember(&p, SIGXFSZ);
}

static void xfsz_hold_off(const xfsz_hold *h)
{
	if (!h->held)
		return;
	sigset_t x, p;
	xfsz_set(&x);
	if (!h->pending && !sigpending(&p) && sigismember(&p, SIGXFSZ)) {
		struct timespec now = {0, 0};
		(void)sigtimedwait(&x, NULL, &now);
	}
	pthread_sigmask(SIG_SETMASK, &h->mask, NULL);
}

void rt_disable(const char *why, int err)
{
	RT_STORE(rt_stopped, 1);
	RT_STORE(rt_active, 0);
	if (atomic_exchange(&disabled_once, 1))
		return;
	char msg[512];
	int n = snprintf(msg, sizeof msg, "rtrace: tracing stopped: %s%s%s (%s)\n", why,
			 err ? ": " : "", err ? strerror(err) : "", trace_path[0] ? trace_path : "no trace file");
	xfsz_hold x; /* stderr may be a file past the limit too */
	xfsz_hold_on(&x);
	if (n > 0)
		(void)!write(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
	xfsz_hold_off(&x);
}

int rt_writer_fd(void) { return own_fd; }

static pid_t writer_pid;
int rt_writer_pid(void) { return (int)writer_pid; }

/* Moves fd to a high number (below 1024, for programs using select), so
 * that it takes none of the numbers the program expects from open. */
/* Descriptors of the tracer (and of libunwind), which the program must
 * not see: closing one gets EBADF, close_range leaves them open. */
#define HIDDEN_MAX 8
static _Atomic int hidden[HIDDEN_MAX] = {-1, -1, -1, -1, -1, -1, -1, -1};
static _Atomic int hidden_low = 1 << 30;

static void hide(int fd, bool on)
{
	for (int i = 0; i < HIDDEN_MAX; i++) {
		int want = on ? -1 : fd;
		if (atomic_compare_exchange_strong(&hidden[i], &want, on ? fd : -1))
			break;
	}
	if (on && fd < atomic_load(&hidden_low))
		atomic_store(&hidden_low, fd);
}

bool rt_fd_hidden(int fd)
{
	if (RT_LIKELY(fd < atomic_load_explicit(&hidden_low, memory_order_relaxed)))
		return false;
	for (int i = 0; i < HIDDEN_MAX; i++)
		if (atomic_load(&hidden[i]) == fd)
			return true;
	return false;
}

/* The hidden descriptors in [first, last], sorted; returns how many. */
int rt_fd_hidden_in(unsigned first, unsigned last, int *out)
{
	int n = 0;
	for (int i = 0; i < HIDDEN_MAX; i++) {
		int fd = atomic_load(&hidden[i]);
		if (fd >= 0 && (unsigned)fd >= first && (unsigned)fd <= last) {
			int k = n++;
			for (; k > 0 && out[k - 1] > fd; k--)
				out[k] = out[k - 1];
			out[k] = fd;
		}
	}
	return n;
}

int rt_place_fd(int fd)
{
	struct rlimit rl;
	int top = 1024;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < 1024)
		top = (int)rl.rlim_cur;
	for (int k = 1; k <= 64 && top - k > fd; k++) {
		/* a number the tracer holds is no probe's worth: the reserved
		 * ones fill the top, and each probe was an fcntl and a close
		 * (a forked child's trace tried two before its parent's number) */
		if (rt_fd_hidden(top - k))
			continue;
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, top - k);
		if (hi >= top) {
			close(hi); /* every number above top - k is taken */
			continue;
		}
		if (hi >= 0) {
			close(fd);
			hide(hi, true);
			return hi;
		}
	}
	return fd;
}

/* fd, moved high, becomes the trace file's descriptor; *st its fstat
 * when st is not NULL. */
static int adopt_fd(int fd, struct stat *st)
{
	struct stat mine;
	st = st ? st : &mine;
	fd = rt_place_fd(fd);
	if (fstat(fd, st)) {
		close(fd);
		return -1;
	}
	own_dev = st->st_dev;
	own_ino = st->st_ino;
	return own_fd = fd;
}

/* The program dup2s onto our descriptor's number: ours moves first. */
static void move_fd(void)
{
	int old = own_fd, busy = rt_t.busy;
	rt_t.busy = 1;
	int fd = old >= 0 ? fcntl(old, F_DUPFD_CLOEXEC, 3) : -1;
	if (fd >= 0) {
		own_fd = -1;
		adopt_fd(fd, NULL);
		hide(old, false);
		close(old);
	}
	rt_t.busy = busy;
}

static bool own_fd_ok(void)
{
	struct stat st;
	return own_fd >= 0 && !fstat(own_fd, &st) && st.st_dev == own_dev && st.st_ino == own_ino;
}

bool rt_writer_owns(int fd) { return fd >= 0 && fd == own_fd && own_fd_ok(); }

/* The descriptor of the trace file; reopened (and said so, once) when
 * the program closed it behind the tracer's back (a raw close syscall). */
static int trace_fd(void)
{
	if (own_fd_ok())
		return own_fd;
	int lost = own_fd;
	int fd = open(cur_path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || adopt_fd(fd, NULL) < 0) {
		rt_disable("cannot reopen the trace file", errno);
		return -1;
	}
	if (lost >= 0 && lost != own_fd)
		hide(lost, false); /* the program's again: its close must work */
	if (lost >= 0 && !atomic_exchange(&moved_once, 1)) {
		char msg[160];
		int n = snprintf(msg, sizeof msg, "rtrace: the program closed the trace file's descriptor %d; "
				 "the trace goes on through descriptor %d\n", lost, own_fd);
		if (n > 0)
			(void)!write(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
	}
	return own_fd;
}

/* The end of file that the tracer's writes may reach: the file size
 * limit (RLIMIT_FSIZE), which applies to the program's own process. */
static uint64_t fsize_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur;
}

/* pwrite into the header page, which the program's file size limit may
 * have fallen below since (then it fails with EFBIG, no signal). */
static ssize_t header_write(int fd, const void *p, size_t n, off_t at)
{
	xfsz_hold x;
	xfsz_hold_on(&x);
	ssize_t r = pwrite(fd, p, n, at);
	int err = errno;
	xfsz_hold_off(&x);
	errno = err;
	return r;
}

/* Stops tracing for one of the format's reasons, and says so on stderr
 * and in the file header (the header page is on disk already: writing it
 * again needs no new blocks, so a full disk cannot prevent it). The first
 * reason is the one kept. */
static void stop(uint32_t reason, int err)
{
	if (!atomic_load(&disabled_once) && have_file && own_fd_ok()) {
		uint8_t rec[16];
		uint64_t at = rt_last_index();
		uint32_t why = reason, e = (uint32_t)err;
		memcpy(rec, &at, 8);
		memcpy(rec + 8, &why, 4);
		memcpy(rec + 12, &e, 4);
		(void)!header_write(own_fd, rec, sizeof rec, RT_TF_OFF_STOP);
	}
	rt_disable(rt_tf_stop_text(reason), err);
}

/* How many chunks to add to the `ready` ones: as many (the file doubles),
 * at least one, up to the segment's end and below the file size limit. */
static uint64_t grow_step(uint64_t ready)
{
	uint64_t n = ready ? ready : 1, rest = CHUNKS_PER_SEG - ready % CHUNKS_PER_SEG;
	uint64_t end = HDR_SIZE + ready * CHUNK_SIZE, limit = fsize_limit();
	if (n > rest)
		n = rest;
	if (limit < end + n * CHUNK_SIZE)
		n = limit < end ? 0 : (limit - end) / CHUNK_SIZE;
	return n;
}

/* Disk blocks for [off, off + len), SIGXFSZ held back: 0 or the error. */
static int falloc(int fd, uint64_t off, uint64_t len)
{
	xfsz_hold h;
	xfsz_hold_on(&h);
	int err = posix_fallocate(fd, (off_t)off, (off_t)len);
	xfsz_hold_off(&h);
	return err;
}

/* Reserves disk blocks for chunks [ready, ready + *n), halving *n down to
 * one chunk while the disk has no room, so a nearly full disk loses as
 * little as possible. Returns 0 or the error. */
static int reserve(int fd, uint64_t ready, uint64_t *n)
{
	int err;
	while ((err = falloc(fd, HDR_SIZE + ready * CHUNK_SIZE, *n * CHUNK_SIZE)) == ENOSPC && *n > 1)
		*n /= 2;
	return err;
}

/* The first chunk's blocks are reserved in two steps: FIRST_PART bytes
 * with the header, the rest when its thread writes past them (a record
 * never goes where no block is reserved: rt_t.cap). Most traced processes
 * of a shell loop or a build write 2-6 KiB in all: their trace took the
 * header and the whole 64 KiB chunk on disk (68 KiB, 16 MB for 100 forked
 * /bin/true), now 16 KiB; giving the rest back at the end instead would
 * free blocks, which on a filesystem mounted with discard is a
 * synchronous discard in every process's exit. A file so ends inside its
 * first chunk's unused bytes, which readers accept (docs/binary-format.md,
 * "Layout"). FIRST_PART holds the largest PROCESS record. */
#define FIRST_PART 12288u
_Static_assert(FIRST_PART - CHUNK_HDR >= 8400 && FIRST_PART < CHUNK_SIZE && FIRST_PART % 4096 == 0,
	       "the first part holds a PROCESS record");
_Static_assert(RT_POOL_RESERVE == HDR_SIZE + FIRST_PART, "a pool's file holds the header and the first part");

static int reserve_first(int fd, uint32_t upto)
{
	if (upto <= first_reserved)
		return 0; /* a pool's file comes with its first part reserved */
	int err = falloc(fd, HDR_SIZE + first_reserved, upto - first_reserved);
	if (!err)
		first_reserved = upto;
	return err;
}

/* The rest of the first chunk, for its thread's next record. */
static uint8_t *first_rest(void)
{
	pthread_mutex_lock(&grow_lock);
	int err = first_reserved < CHUNK_SIZE ? reserve_first(trace_fd(), CHUNK_SIZE) : 0;
	pthread_mutex_unlock(&grow_lock);
	if (err == EFBIG)
		return stop(RT_TF_STOP_FSIZE, 0), NULL;
	if (err)
		return stop(RT_TF_STOP_EXTEND, err), NULL;
	rt_t.cap = RT_RESERVE_MAX;
	return rt_t.chunk + CHUNK_HDR + rt_t.used;
}

/* A write fault on a page of the shared mapping reads the page in first
 * (zeros: the blocks are fallocated, unwritten), and the kernel's
 * readahead makes that the whole window up to the end of the file: the
 * first record of a process allocated, zeroed and charged 17 page-cache
 * pages (the header and the first chunk) where it writes one or two, and
 * its exit and the trace's removal freed them again: 3.2% of the CPU of
 * a traced /bin/true in perf (bench/README.md, "Per-process cost"). A
 * process that goes on writes its segment page after page either way;
 * readahead stays for the later segments, where it batches those reads. */
static void no_readahead(void *seg)
{
	(void)madvise(seg, SEG_SIZE, MADV_RANDOM);
}

/* A trace growing past its first chunk takes its raw name, under which
 * `rtrace run` compresses it into the trace's path; a rename here once
 * for each long trace, rather than one in rtrace run for each short one
 * (see paths). Never over another file: on failure the trace stays raw
 * under its name. */
static void to_raw_name(void)
{
	raw_tried = true;
	if (!renameat2(AT_FDCWD, trace_path, AT_FDCWD, data_path, RENAME_NOREPLACE))
		raw_named = true;
}

/* A fork child's trace begins in memory: its first records go into
 * mem_chunk, FIRST_PART bytes standing for its first chunk, and the file
 * is made only when the trace needs it (mem_file): records past those
 * bytes or from a second thread, the end of the process (exit, _exit, a
 * fatal signal), a leak check asked for, or an exec after records that
 * an exec does not make moot (rt_writer_keep). An exec of the child
 * otherwise drops them with the process image: blocks allocated between
 * a fork and an exec are not leaks (memcheck reports nothing for them),
 * and a child made by posix_spawn or vfork leaves no trace either. So a
 * shell's or a build's fork child, which frees and allocates a block or
 * two before it execs the command, makes no file: 2 files a command
 * became 1, and a --follow-children loop of 100 /bin/true lost a third
 * of what the tracer added to it (bench/README.md, "Per-process cost").
 * A SIGKILL before the file is made loses those first records (at most
 * FIRST_PART bytes of them); the file, once made, is as any other trace.
 * In .lbss with the cold tables: only a fork child's records write it. */
static uint8_t mem_chunk[FIRST_PART] RT_COLD __attribute__((aligned(64)));
static bool in_mem;   /* the trace is mem_chunk alone, no file yet */
static bool mem_left; /* the file is made and mem_chunk's records are still to go into it */
static bool mem_keep; /* an exec keeps them */
/* The parent's trace descriptor, inherited (hidden, close-on-exec), held
 * until the child makes its file: the number is then free for it even
 * when the program took every other one below its limit, as fdres.c's
 * placeholders do for the leak check's (tp_sigfd forkopen). A program
 * lowering its limit below it makes the file first (rt_writer_limit). */
static int hold_fd = -1;
static dev_t hold_dev;
static ino_t hold_ino;

/* Lets the placeholder go: closed if it still is the parent's file (the
 * program may have dup2'ed onto its number). */
static void hold_release(void)
{
	int fd = hold_fd, busy = rt_t.busy;
	struct stat st;
	if (fd < 0)
		return;
	hold_fd = -1;
	hide(fd, false);
	rt_t.busy = 1; /* the tracer's own close */
	if (!fstat(fd, &st) && st.st_dev == hold_dev && st.st_ino == hold_ino)
		close(fd);
	rt_t.busy = busy;
}

/* Starts a fork child's trace in memory: chunk 0 is mem_chunk. */
static void mem_begin(void)
{
	in_mem = true;
	atomic_store(&ready_chunks, 1);
}

/* The file of a trace begun in memory, with its first chunk mapped and
 * its first part reserved (grow_lock held): 0, or -1 when tracing
 * stopped. The records in memory go into it with mem_move. */
static int mem_file(void)
{
	in_mem = false;
	hold_release();
	if (rt_writer_open())
		return -1;
	int fd = trace_fd();
	if (fd < 0)
		return -1;
	void *p = mmap(NULL, SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, HDR_SIZE);
	if (p == MAP_FAILED)
		return stop(RT_TF_STOP_MAP, errno), -1;
	no_readahead(p);
	seg_base(0) = p;
	mem_left = true;
	int err = reserve_first(fd, FIRST_PART);
	if (err)
		return stop(err == EFBIG ? RT_TF_STOP_FSIZE : RT_TF_STOP_EXTEND, err), -1;
	return 0;
}

/* Copies the records in memory into the file's first chunk (grow_lock
 * held); the thread that writes them (its chunk is mem_chunk) goes on
 * there. Another thread (the end of the process, an exec) copies what
 * mem_chunk's count of bytes says is written. */
static void mem_move(void)
{
	uint32_t used = atomic_load_explicit((_Atomic uint32_t *)(mem_chunk + RT_TF_OFF_USED), memory_order_acquire);
	memcpy(seg_base(0), mem_chunk, CHUNK_HDR + (used < FIRST_PART - CHUNK_HDR ? used : FIRST_PART - CHUNK_HDR));
	mem_left = false;
	if (rt_t.chunk == mem_chunk) {
		rt_t.chunk = seg_base(0);
		rt_t.cap = first_reserved - CHUNK_HDR;
	}
}

/* Puts a trace begun in memory into its file, made now if need be:
 * 0, or -1 when tracing stopped. At the process's end (wait false) the
 * lock is tried for a while rather than waited for: the end may come
 * from a signal handler on a thread that holds it here. */
static int mem_settle_at(bool wait)
{
	int err = 0, busy = rt_t.busy;
	if (wait)
		pthread_mutex_lock(&grow_lock);
	for (int k = 0; !wait && pthread_mutex_trylock(&grow_lock); k++) {
		if (k == 1000)
			return -1;
		sched_yield();
	}
	rt_t.busy = 1; /* the tracer's own open and close */
	if (in_mem)
		err = mem_file();
	if (!err && mem_left)
		mem_move();
	pthread_mutex_unlock(&grow_lock);
	rt_t.busy = busy;
	return err;
}

static int mem_settle(void) { return mem_settle_at(true); }

void rt_writer_keep(void)
{
	if (RT_UNLIKELY(in_mem) && !mem_keep)
		mem_keep = true;
}

void rt_writer_settle(void)
{
	if (RT_UNLIKELY(in_mem || mem_left))
		(void)mem_settle();
}

void rt_fd_taken(int fd)
{
	if (RT_UNLIKELY(fd >= 0 && fd == own_fd))
		move_fd();
	else if (RT_UNLIKELY(fd >= 0 && fd == hold_fd))
		hold_release();
	else if (RT_UNLIKELY(rt_fd_hidden(fd)))
		hide(fd, false);
}

void rt_writer_limit(uint64_t cur)
{
	if (in_mem && hold_fd >= 0 && cur <= (uint64_t)hold_fd)
		(void)mem_settle();
}

/* Makes the next chunks ready: maps their segment (whole) and reserves
 * their blocks; only chunks backed by reserved blocks are handed out.
 * Called with grow_lock held. ahead: before the chunks are needed (see
 * grow_ahead), when a failure is left for the growth that needs them. */
static int grow(bool ahead)
{
	if (in_mem && (ahead || mem_file()))
		return -1; /* a second chunk: the trace needs its file */
	uint64_t ready = atomic_load(&ready_chunks), seg = ready / CHUNKS_PER_SEG;
	if (seg >= MAX_SEGS)
		return ahead ? -1 : (stop(RT_TF_STOP_MAX, 0), -1);
	int fd = trace_fd();
	if (fd < 0)
		return -1;
	if (!seg_base(seg)) {
		void *p = mmap(NULL, SEG_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			       (off_t)(HDR_SIZE + seg * SEG_SIZE));
		if (p == MAP_FAILED)
			return ahead ? -1 : (stop(RT_TF_STOP_MAP, errno), -1);
		/* no readahead for the first segment: see no_readahead */
		if (!seg)
			no_readahead(p);
		seg_base(seg) = p;
	}
	if (ready && rt_opt.raw_suffix && !raw_tried)
		to_raw_name();
	uint64_t n = ready ? grow_step(ready) : fsize_limit() >= HDR_SIZE + FIRST_PART;
	int err = !n ? EFBIG : ready ? reserve(fd, ready, &n) : reserve_first(fd, FIRST_PART);
	if (err && ahead)
		return -1;
	if (err == EFBIG)
		return stop(RT_TF_STOP_FSIZE, 0), -1;
	if (err)
		return stop(RT_TF_STOP_EXTEND, err), -1;
	atomic_store_explicit(&ready_chunks, ready + n, memory_order_release);
	return 0;
}

/* Once the trace is past its first segment, the next segment is reserved
 * while GROW_AHEAD chunks of the current one are left, instead of when a
 * thread needs its first chunk: `rtrace run` (src/cli/run_prefault.c)
 * puts a reserved chunk's pages in the page cache before a thread takes
 * it, which it cannot do for a chunk taken the moment it is reserved
 * (4 threads took a tenth of their chunks faulting that way). A trace
 * that ends without cutting its file (exec, SIGKILL) then leaves at most
 * one segment more than it filled. Not waiting: a thread that finds the
 * lock taken goes on, and a failure here is the later growth's to say. */
#define GROW_AHEAD 16u
static void grow_ahead(uint64_t i, uint64_t ready)
{
	if (ready < CHUNKS_PER_SEG || ready - i > GROW_AHEAD || RT_LOAD(rt_stopped) ||
	    pthread_mutex_trylock(&grow_lock))
		return;
	if (atomic_load(&ready_chunks) == ready)
		(void)grow(true);
	pthread_mutex_unlock(&grow_lock);
}

static uint8_t *chunk_new(void)
{
	uint64_t i = atomic_fetch_add(&next_chunk, 1);
	uint64_t ready = atomic_load_explicit(&ready_chunks, memory_order_acquire);
	if (i < ready)
		grow_ahead(i, ready);
	else {
		pthread_mutex_lock(&grow_lock);
		while (!RT_LOAD(rt_stopped) && i >= atomic_load(&ready_chunks))
			if (grow(false))
				break;
		pthread_mutex_unlock(&grow_lock);
		if (i >= atomic_load_explicit(&ready_chunks, memory_order_acquire))
			return NULL;
	}
	bool mem = !i && in_mem;
	uint8_t *c = mem ? mem_chunk : seg_base(i / CHUNKS_PER_SEG) + (i % CHUNKS_PER_SEG) * CHUNK_SIZE;
	chunk_index = i;
	rt_t.cap = i ? RT_RESERVE_MAX : (mem ? FIRST_PART : first_reserved) - CHUNK_HDR;
	uint32_t tid = (uint32_t)syscall(SYS_gettid), seq = chunk_seq++;
	memcpy(c, RT_TF_CHUNK_MAGIC, RT_TF_CHUNK_MAGIC_LEN);
	memcpy(c + RT_TF_OFF_TID, &tid, 4);
	memcpy(c + RT_TF_OFF_SEQ, &seq, 4);
	return c;
}

/* A forked child's trace begins at its first record (open_late), not at
 * the fork, and in memory (mem_chunk): a child that _exits before any
 * leaves no trace. Each traced process creating its file was 14-16% of
 * the CPU of a traced shell loop (ext4_create; bench/README.md,
 * "Per-process cost"). */
static _Atomic int open_pending;
static void (*late_preamble)(void);
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int opening; /* this thread creates the file: its preamble's records go on */

/* Creates the pending file and writes its preamble, once, for whichever
 * thread records first (the others wait); returns nonzero when there is
 * no file to write to. */
static int open_late(void)
{
	if (opening)
		return !have_file && !in_mem; /* the preamble, or a handler interrupting it */
	pthread_mutex_lock(&open_lock);
	if (atomic_load(&open_pending)) {
		opening = 1;
		mem_begin();
		if (late_preamble)
			late_preamble();
		opening = 0;
		atomic_store_explicit(&open_pending, 0, memory_order_release);
	}
	pthread_mutex_unlock(&open_lock);
	return !have_file && !in_mem;
}

bool rt_writer_pending(void) { return atomic_load(&open_pending) != 0; }

/* A thread's chunk from before a fork belongs to the parent's file. */
static void tls_check_gen(void)
{
	unsigned gen = atomic_load_explicit(&rt_writer_gen, memory_order_relaxed);
	if (RT_UNLIKELY(rt_t.gen != gen)) {
		rt_t.gen = gen;
		rt_t.chunk = NULL;
		rt_t.used = 0;
		rt_t.cap = 0;
		rt_t.last_ns = 0;
		chunk_seq = 0;
		rt_btcache_reset();
	}
}

/* The trace's pages are mapped in the traced program and would count in
 * its resident size as the trace grows. Once every chunk of a MiB is
 * complete, its pages leave the program's page tables; the data stays in
 * the page cache on its way to the file. A whole segment at a time, the
 * program carried up to 8 MiB of its trace (churn's peak RSS +7.3 MB);
 * a MiB at a time, one madvise per 1 MiB of records. */
static void chunk_left(void)
{
	uint64_t seg = chunk_index / CHUNKS_PER_SEG, g = chunk_index / RELEASE_CHUNKS;
	if (!atomic_load_explicit(&released_used, memory_order_relaxed))
		atomic_store_explicit(&released_used, 1, memory_order_relaxed);
	if (atomic_fetch_add(&released[g], 1) + 1 == RELEASE_CHUNKS)
		madvise(seg_base(seg) + (g * RELEASE_CHUNKS % CHUNKS_PER_SEG) * (size_t)CHUNK_SIZE,
			(size_t)RELEASE_CHUNKS * CHUNK_SIZE, MADV_DONTNEED);
}

/* rt_reserve's way out (preload.h): the thread's first chunk, the next
 * one when this one is full, a new one in a forked child. */
uint8_t *rt_reserve_slow(size_t n)
{
	tls_check_gen();
	/* a forked child's first record: its file and preamble first, whose
	 * chunk this record then goes on in when it fits */
	if (RT_UNLIKELY(atomic_load_explicit(&open_pending, memory_order_acquire)) && !rt_t.chunk && open_late())
		return NULL;
	/* the first records in memory are full: into the file, and on there */
	if (RT_UNLIKELY(rt_t.chunk == mem_chunk) && rt_t.used + n > rt_t.cap && mem_settle())
		return rt_t.cap = 0, NULL;
	if (RT_UNLIKELY(!rt_t.chunk || rt_t.used + n > CHUNK_SIZE - CHUNK_HDR)) {
		if (rt_t.chunk)
			chunk_left();
		rt_t.chunk = chunk_new();
		rt_t.used = 0;
		if (!rt_t.chunk)
			return rt_t.cap = 0, NULL;
	}
	if (RT_UNLIKELY(rt_t.used + n > rt_t.cap))
		return first_rest();
	return rt_t.chunk + CHUNK_HDR + rt_t.used;
}

uint8_t *rt_put_str(uint8_t *p, const char *s, size_t n)
{
	p = rt_put_varint(p, n);
	memcpy(p, s, n);
	return p + n;
}

/* The executable's path, read once: the trace's name and its PROCESS
 * record both need it, and a forked child runs the same executable.
 * The file mapped at the program's entry point, as the leak check's
 * reserved maps descriptor names it (the name /proc/self/exe gives); a
 * readlink of /proc/self/exe, which walks the path back to the root,
 * took ~10 us of each traced command in a shell loop. Empty when it
 * cannot be read. */
static char exe_path[4096] RT_COLD;
static int exe_read;

const char *rt_exe_path(void)
{
	if (!exe_read) {
		uintptr_t entry = (uintptr_t)getauxval(AT_ENTRY);
		if (!entry || !rt_maps_file_at(entry, exe_path, sizeof exe_path)) {
			ssize_t r = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
			exe_path[r > 0 ? r : 0] = '\0';
		}
		exe_read = 1;
	}
	return exe_path;
}

/* The trace's name: the executable's file name ("trace" when unknown). */
static void trace_name(char name[256])
{
	const char *exe = rt_exe_path(), *b = exe;
	for (const char *c = exe; *c; c++) /* its last part (no libc call: fork children run this) */
		if (*c == '/')
			b = c + 1;
	size_t n = 0;
	rt_cat(name, 256, &n, exe[0] ? b : "trace");
}

/* A new file, data (O_EXCL: EEXIST when the name is taken). */
static int create_trace(const char *data)
{
	int fd = open(data, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		(void)!fchmod(fd, 0600); /* 0600 whatever the program's umask */
	return fd;
}

/* The trace file under the first of the trace's names that is free
 * (NAME-PID.rtrace, then NAME-PID-N.rtrace), made by make: its
 * descriptor, or -1 with errno (EEXIST: that name is taken, the next is
 * tried). trace_path and data_path name it. */
static int open_trace(int (*make)(const char *data))
{
	char name[256];
	trace_name(name);
	pid_t pid = getpid();
	for (int k = 0; k < 1000; k++) {
		size_t n = 0; /* DIR/NAME-PID.rtrace, DIR/NAME-PID-K.rtrace */
		rt_cat(trace_path, PATH_CAP, &n, rt_opt.dir);
		rt_cat(trace_path, PATH_CAP, &n, "/");
		rt_cat(trace_path, PATH_CAP, &n, name);
		rt_cat(trace_path, PATH_CAP, &n, "-");
		rt_cat_dec(trace_path, PATH_CAP, &n, (uint64_t)pid);
		if (k) {
			rt_cat(trace_path, PATH_CAP, &n, "-");
			rt_cat_dec(trace_path, PATH_CAP, &n, (uint64_t)k);
		}
		rt_cat(trace_path, PATH_CAP, &n, ".rtrace");
		data_off = (uint16_t)(n + 1);
		memcpy(data_path, trace_path, n + 1);
		rt_cat(data_path, PATH_CAP + sizeof RT_RAW_SUFFIX, &n, rt_opt.raw_suffix ? RT_RAW_SUFFIX : "");
		if (rt_opt.raw_suffix && !access(data_path, F_OK))
			continue; /* an earlier long trace of this name is being compressed */
		raw_named = raw_tried = false;
		int fd = make(trace_path);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* Returns 0 or the error: EFBIG when the file size limit leaves no room
 * for the header (checked first: passing it would raise SIGXFSZ). */
static int write_header(int fd)
{
	uint8_t h[HDR_SIZE] = {0};
	rt_tf_file_header fh = {RT_TF_MAGIC, HDR_SIZE, CHUNK_SIZE, 0, (uint64_t)getpid(), 0, 0, 0, {0}};
	memcpy(h, &fh, sizeof fh);
	if (fsize_limit() < HDR_SIZE)
		return EFBIG;
	ssize_t n = header_write(fd, h, sizeof h, 0);
	return n == (ssize_t)sizeof h ? 0 : n < 0 ? errno : ENOSPC;
}

/* Tells `rtrace run` which files this run produced ("PID PATH"), or that
 * a process could not write the one it tried ("PID !PATH"), or what it
 * execs untraced ("PID >PROG"), without keeping a descriptor open in the
 * traced program. Entries end with a NUL byte: a path may hold any other
 * byte, a newline included. */
static void announce_to(int fd, const char *mark, const char *path);

static void announce(const char *mark, const char *path)
{
	if (!rt_opt.manifest[0])
		return;
	int fd = open(rt_opt.manifest, O_WRONLY | O_APPEND | O_CLOEXEC);
	bool lent = fd < 0 && (errno == EMFILE || errno == ENFILE) && own_fd >= 0;
	if (lent) {
		/* no number free: a fork child whose program took them all
		 * made its file in the one held for it (hold_fd). The trace's
		 * number is lent for the line (its mapping keeps the file) */
		hide(own_fd, false);
		close(own_fd);
		own_fd = -1;
		fd = open(rt_opt.manifest, O_WRONLY | O_APPEND | O_CLOEXEC);
	}
	if (fd >= 0)
		announce_to(fd, mark, path);
	if (lent && (fd = open(cur_path, O_RDWR | O_CLOEXEC)) >= 0)
		(void)adopt_fd(fd, NULL);
}

/* announce's line, written to the manifest's descriptor fd (closed). */
static void announce_to(int fd, const char *mark, const char *path)
{
	char line[4200];
	size_t n = 0; /* "PID MARKPATH" */
	rt_cat_dec(line, sizeof line, &n, (uint64_t)getpid());
	rt_cat(line, sizeof line, &n, " ");
	rt_cat(line, sizeof line, &n, mark);
	rt_cat(line, sizeof line, &n, path);
	xfsz_hold x;
	xfsz_hold_on(&x);
	if (n + 1 < sizeof line) /* not cut short */
		(void)!write(fd, line, n + 1);
	xfsz_hold_off(&x);
	close(fd);
}

/* The program execvp would run for file: file itself when it names a
 * path, else the first executable of that name along PATH (as given when
 * none is). On the stack: the caller may be a vfork child. */
static void exec_target(const char *file, char *out, size_t len)
{
	const char *dirs = getenv("PATH");
	size_t k = 0;
	rt_cat(out, len, &k, file);
	if (strchr(file, '/') || !dirs)
		return;
	for (const char *d = dirs; *d;) {
		size_t n = strcspn(d, ":");
		char cand[4096];
		if (snprintf(cand, sizeof cand, "%.*s%s%s", (int)n, d, n ? "/" : "", file) < (int)sizeof cand &&
		    !access(cand, X_OK)) {
			snprintf(out, len, "%s", cand);
			return;
		}
		d += n + (d[n] == ':');
	}
}

void rt_writer_exec(const char *file)
{
	/* a trace in memory: dropped by the exec, unless kept; one in its
	 * file gets the records still in memory */
	if (file && (mem_left || (in_mem && mem_keep)))
		(void)mem_settle();
	if (rt_opt.follow)
		return; /* the new program writes a trace of its own */
	char prog[4096]; /* not cleared whole: each 4 KiB of stack is a page copied in a fork child */
	prog[0] = '\0';
	if (file)
		exec_target(file, prog, sizeof prog);
	announce(">", prog);
}

/* No trace for this process: said on stderr and to `rtrace run`. */
static int no_trace(const char *what, int err)
{
	char why[1200];
	snprintf(why, sizeof why, "cannot %s a trace file in '%s'", what, rt_opt.dir);
	announce("!", trace_path);
	trace_path[0] = '\0';
	data_path[0] = '\0';
	rt_disable(why, err);
	return -1;
}

/* The trace file from rtrace run's pool (pool.c), or else created here,
 * with its header. A file of the pool that has blocks for the first part
 * of its first chunk needs no fallocate for it (reserve_first). A file
 * size limit below the header sends no process to the pool: write_header
 * fails on it as before. */
int rt_writer_open(void)
{
	int fd = rt_opt.pool[0] && fsize_limit() >= HDR_SIZE ? open_trace(rt_pool_take) : -1;
	bool pooled = fd >= 0;
	if (!pooled && (fd = open_trace(create_trace)) < 0)
		return no_trace("create", errno);
	int err = write_header(fd);
	if (err) {
		close(fd);
		unlink(cur_path); /* no empty or partial file left behind */
		return no_trace("write", err);
	}
	struct stat st;
	if (adopt_fd(fd, &st) < 0) {
		rt_disable("cannot keep the trace file open", errno);
		return -1;
	}
	if (pooled && st.st_size >= HDR_SIZE + FIRST_PART && (uint64_t)st.st_blocks * 512 >= HDR_SIZE + FIRST_PART)
		first_reserved = FIRST_PART;
	have_file = 1;
	writer_pid = getpid();
	announce("", trace_path);
	return 0;
}

/* Records where the data ends and gives back the unused reservation. */
void rt_writer_close(void)
{
	if (in_mem || mem_left) /* a trace begun in memory ends in its file */
		(void)mem_settle_at(false);
	if (!have_file)
		return;
	int fd = trace_fd();
	if (fd < 0)
		return;
	uint64_t used = atomic_load(&next_chunk), ready = atomic_load(&ready_chunks);
	uint64_t end = HDR_SIZE + (used < ready ? used : ready) * CHUNK_SIZE;
	struct stat st;
	if (header_write(fd, &end, 8, RT_TF_OFF_DATA_END) != 8)
		return;
	/* cut only when there is something to cut: a truncation to the same
	 * size still changes and journals the inode, at every process's end */
	if (fstat(fd, &st) || (uint64_t)st.st_size > end)
		(void)!ftruncate(fd, (off_t)end); /* shrinks: no SIGXFSZ */
}

void rt_writer_lock(void) { pthread_mutex_lock(&grow_lock); }
void rt_writer_unlock(void) { pthread_mutex_unlock(&grow_lock); }

/* In a forked child: drop the parent's mappings, hold its descriptor's
 * number; a trace of our own comes with the first record, which
 * preamble() begins (open_late), in memory until it needs its file. Only
 * the forking thread exists here. */
void rt_writer_fork_child(void (*preamble)(void), bool locked)
{
	if (locked) { /* else unlocked at the fork, and untouched: no page copied */
		/* by assignment: no lazy binding in the child (cfi.c) */
		grow_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
		open_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	}
	int old = own_fd;
	own_fd = -1; /* the parent's file: held in its number (hold_fd) */
	if (old >= 0) {
		hold_release(); /* a grandparent's, after a fork of a child with a file */
		hold_fd = old;
		hold_dev = own_dev;
		hold_ino = own_ino;
	}
	uint64_t segs = (atomic_load(&ready_chunks) + CHUNKS_PER_SEG - 1) / CHUNKS_PER_SEG;
	for (uint64_t s = 0; s < segs; s++) {
		if (seg_base(s))
			rt_pages_free(seg_base(s), SEG_SIZE); /* the system call: no binding of munmap in the child */
		seg_base(s) = NULL;
	}
	/* the counters only where set: a store copies their page */
	for (uint64_t g = 0; atomic_load(&released_used) && g < segs * (CHUNKS_PER_SEG / RELEASE_CHUNKS); g++)
		if (atomic_load(&released[g]))
			atomic_store(&released[g], 0);
	have_file = 0;
	atomic_store(&next_chunk, 0);
	atomic_store(&ready_chunks, 0);
	first_reserved = 0;
	atomic_fetch_add(&rt_writer_gen, 1);
	atomic_store(&disabled_once, 0);
	RT_STORE(rt_stopped, 0);
	in_mem = mem_left = mem_keep = false;
	writer_pid = getpid(); /* this process's trace, before its file exists */
	late_preamble = preamble;
	atomic_store(&open_pending, 1);
}
