/* The compressed container's writer: follows a raw trace while its
 * tracer writes it and turns each complete chunk into a frame
 * (docs/binary-format.md, "Compressed traces"; the codec is
 * bin_zchunk.c).
 *
 * When a chunk is complete: a thread writes only to its current chunk,
 * and takes the next one when that is full, so a chunk is complete once
 * a later chunk of the file carries its tid (the same thread's next
 * chunk, or seq 0 of a new thread that reuses the tid of a dead one), or
 * once its process has ended. Chunks are read with pread, headers first
 * (16 bytes): the scan stops at the first chunk whose used count is
 * still 0 (taken, not yet written; its header may not be either) and
 * goes on from there at the next step. A thread's chunks thus reach the
 * container in its own order, those of different threads interleaved,
 * which the reader's merge takes as it takes the raw file's.
 *
 * Behind it, the compressed chunks are punched out of the raw file
 * (FALLOC_FL_PUNCH_HOLE), in runs of consecutive chunks, after their
 * frames were written, once they add up to 4 MiB: the raw file's blocks
 * then hold the chunks not yet compressed (the current chunk of each
 * thread, and what the compressor has not caught up with) and at most
 * 4 MiB of compressed ones, not the whole trace. A chunk is read with
 * one pread (its header and records). Costs and speed in
 * bench/README.md, "Trace size".
 *
 * A trace already finished (a short process's, ~600 bytes compressed)
 * can instead be packed in place (rt_bin_zpack): the same writer runs
 * into a memfd, and the container, when it fits in the raw header's
 * page, is written over the raw file, which is cut and renamed, so that
 * no file is created or removed. rtrace run no longer packs: the cut
 * frees the raw chunk's blocks (a synchronous discard on a `discard`
 * mount), and a short trace stays raw (src/cli/run_compress.c). */
#define _GNU_SOURCE
#include "bin_zchunk.h"
#include "format/trace_format.h"
#include "rtrace/binary.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FLUSH_AT (1u << 20)
#define PUNCH_AT (4u << 20) /* compressed raw bytes punched at once */
#define SNAP_NS 1000000000ull /* a chunk growing for longer is copied */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct tslot {
	uint64_t key;   /* tid + 1; 0: empty */
	uint64_t chunk; /* index + 1 of its last chunk not yet written; 0: none */
	uint64_t since; /* when it was seen first (ns) */
	uint32_t snap;  /* its used bytes in its last copy (SNAP frame) */
} tslot;

struct rt_bin_zwriter {
	int raw, out, level;
	char *raw_path, *out_path;
	uint32_t hs, cs;
	uint64_t scan; /* the next chunk to look at */
	tslot *t;
	size_t nt, ct;
	rt_bin_zc *zc;
	uint8_t *chunk, *ob;
	size_t on, ocap;
	uint64_t *done; /* chunks written since the last punch */
	size_t ndone, cdone;
	bool no_punch;
	bool in_place; /* rt_bin_zpack: the raw file becomes the container */
	uint64_t snap_at; /* the last look for chunks to copy (ns) */
	rt_bin_zstats st;
};

__attribute__((format(printf, 3, 4)))
static int zfail(rt_diag *err, const char *file, const char *fmt, ...)
{
	if (!err)
		return -1;
	memset(err, 0, sizeof *err);
	err->file = file;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* Up to n bytes (fewer at the end of the file); 0 with errno on an
 * error. */
static size_t pread_some(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	errno = 0;
	while (got < n) {
		ssize_t r = pread(fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? 0 : got;
		got += (size_t)r;
	}
	return got;
}

static bool pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	return pread_some(fd, buf, n, off) == n;
}

static bool write_all(int fd, const void *buf, size_t n)
{
	for (size_t put = 0; put < n;) {
		ssize_t r = write(fd, (const uint8_t *)buf + put, n - put);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		put += (size_t)r;
	}
	return true;
}
/* --- tid -> its last chunk --- */

static tslot *tid_slot(rt_bin_zwriter *w, uint32_t tid)
{
	if ((w->nt + 1) * 2 > w->ct) {
		tslot *old = w->t;
		size_t oc = w->ct;
		w->ct = oc ? oc * 2 : 64;
		w->t = rt_xcalloc(w->ct, sizeof *w->t);
		w->nt = 0;
		for (size_t i = 0; i < oc; i++)
			if (old[i].key)
				tid_slot(w, (uint32_t)(old[i].key - 1))->chunk = old[i].chunk;
		free(old);
	}
	size_t mask = w->ct - 1;
	for (size_t i = rt_mix64(tid) & mask;; i = (i + 1) & mask) {
		tslot *s = &w->t[i];
		if (s->key == (uint64_t)tid + 1)
			return s;
		if (!s->key) {
			s->key = (uint64_t)tid + 1;
			w->nt++;
			return s;
		}
	}
}
/* --- frames --- */

static bool flush(rt_bin_zwriter *w)
{
	if (!w->on)
		return true;
	if (!write_all(w->out, w->ob, w->on))
		return false;
	w->on = 0;
	return true;
}

static void ob_put(rt_bin_zwriter *w, const void *p, size_t n)
{
	if (w->on + n > w->ocap)
		rt_grow((void **)&w->ob, &w->ocap, w->on + n, 1);
	memcpy(w->ob + w->on, p, n);
	w->on += n;
}

/* Chunk i as a frame: complete, or (flags RT_TF_ZFLAG_SNAP) a copy of
 * what it holds now, which stays in the raw file. */
static int put_frame(rt_bin_zwriter *w, uint64_t i, uint32_t flags, rt_diag *err)
{
	uint64_t off = w->hs + i * w->cs;
	size_t got = pread_some(w->raw, w->chunk, w->cs, off); /* the header and the records at once */
	if (got < RT_TF_CHUNK_HEADER)
		return zfail(err, w->raw_path, "cannot read the chunk at byte offset %" PRIu64 ": %s", off,
			     errno ? strerror(errno) : "end of file");
	uint32_t used = get32(w->chunk + RT_TF_OFF_USED);
	if (used > got - RT_TF_CHUNK_HEADER)
		return zfail(err, w->raw_path, "byte offset %" PRIu64 ": expected %" PRIu32 " used bytes in the chunk",
			     off, used);
	const uint8_t *z;
	uint32_t coding;
	size_t zlen = rt_bin_zc_encode(w->zc, w->chunk + RT_TF_CHUNK_HEADER, used, w->level, &z, &coding);
	if (!zlen)
		return zfail(err, w->raw_path, "zstd could not compress the chunk at byte offset %" PRIu64, off);
	uint8_t h[RT_TF_ZFRAME_HEADER];
	uint32_t zl = (uint32_t)zlen, cf = coding | flags;
	memcpy(h, w->chunk, RT_TF_CHUNK_HEADER);
	memcpy(h + RT_TF_OFF_ZLEN, &zl, 4);
	memcpy(h + RT_TF_OFF_ZCODING, &cf, 4);
	ob_put(w, h, sizeof h);
	ob_put(w, z, zlen);
	w->st.chunks++;
	w->st.raw_bytes += RT_TF_CHUNK_HEADER + used;
	w->st.out_bytes += sizeof h + zlen;
	if (!(flags & RT_TF_ZFLAG_SNAP))
		RT_PUSH(w->done, w->ndone, w->cdone, i);
	if (w->on >= FLUSH_AT && !flush(w))
		return zfail(err, w->out_path, "cannot write: %s", strerror(errno));
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The written chunks leave the raw file, in runs of consecutive ones,
 * once they add up to PUNCH_AT bytes (or all of them: force): a punch
 * costs a file system transaction (and a discard) whatever its length,
 * and the compressor steps over a chunk or two at a time when it keeps
 * up (one punch a step cost 0.4 of its compressing time on churn). */
static void punch(rt_bin_zwriter *w, bool force)
{
	if (!force && w->ndone * (uint64_t)w->cs < PUNCH_AT)
		return;
	if (w->ndone > 1)
		qsort(w->done, w->ndone, sizeof *w->done, cmp_u64);
	for (size_t i = 0, j; i < w->ndone && !w->no_punch; i = j) {
		for (j = i + 1; j < w->ndone && w->done[j] == w->done[j - 1] + 1;)
			j++;
		if (fallocate(w->raw, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(w->hs + w->done[i] * w->cs),
			      (off_t)((j - i) * w->cs)) && (errno == EOPNOTSUPP || errno == ENOSYS))
			w->no_punch = true; /* the file system keeps them: only the disk use suffers */
	}
	w->ndone = 0;
}
/* --- following the raw file --- */

/* The chunks present and, once the tracer wrote data_end, where they end.
 * The last may be there in part: the tracer reserves a file's first chunk
 * in two steps, and a short trace ends inside its unused bytes. */
static uint64_t chunks_now(rt_bin_zwriter *w, bool *done)
{
	uint8_t h[RT_TF_FILE_HEADER];
	struct stat st;
	*done = false;
	if (fstat(w->raw, &st) || (uint64_t)st.st_size < w->hs || !pread_all(w->raw, h, sizeof h, 0))
		return 0;
	uint64_t n = ((uint64_t)st.st_size - w->hs + w->cs - 1) / w->cs, data_end = get64(h + RT_TF_OFF_DATA_END);
	if (data_end >= w->hs && data_end <= w->hs + n * w->cs) {
		*done = true;
		n = (data_end - w->hs) / w->cs;
	}
	return n;
}

/* Looks at the chunks not seen yet: each makes the previous chunk of its
 * tid complete. Stops at one not yet written, unless ended: then every
 * chunk is complete, and goes in the file's order. */
static int discover(rt_bin_zwriter *w, uint64_t n, bool ended, rt_diag *err)
{
	uint64_t now = now_ns();
	for (; w->scan < n; w->scan++) {
		uint8_t h[RT_TF_CHUNK_HEADER];
		if (!pread_all(w->raw, h, sizeof h, w->hs + w->scan * w->cs))
			break;
		if (memcmp(h, RT_TF_CHUNK_MAGIC, RT_TF_CHUNK_MAGIC_LEN)) {
			if (ended) /* the end of the trace (magic 0) or a broken chunk */
				w->scan = n;
			break;
		}
		if (!get32(h + RT_TF_OFF_USED) && !ended)
			break;
		tslot *s = tid_slot(w, get32(h + RT_TF_OFF_TID));
		if (s->chunk && put_frame(w, s->chunk - 1, get32(h + RT_TF_OFF_SEQ) == 0 ? RT_TF_ZFLAG_LAST : 0, err))
			return -1;
		*s = (tslot){s->key, w->scan + 1, now, 0};
		if (ended && put_frame(w, w->scan, 0, err))
			return -1;
		if (ended)
			s->chunk = 0;
	}
	return 0;
}

/* Chunks that have been growing for a second or more (a thread that
 * waits, holding the process's first records) are copied as they are
 * now, once a second while they grow: a container cut short (rtrace run
 * killed) then still holds them. */
static int snapshot(rt_bin_zwriter *w, rt_diag *err)
{
	uint64_t now = now_ns();
	if (now - w->snap_at < SNAP_NS)
		return 0;
	w->snap_at = now;
	for (size_t i = 0; i < w->ct; i++) {
		tslot *s = &w->t[i];
		uint8_t u[4];
		if (!s->chunk || now - s->since < SNAP_NS ||
		    !pread_all(w->raw, u, 4, w->hs + (s->chunk - 1) * w->cs + RT_TF_OFF_USED) || get32(u) <= s->snap)
			continue;
		s->snap = get32(u);
		if (put_frame(w, s->chunk - 1, RT_TF_ZFLAG_SNAP, err))
			return -1;
	}
	return 0;
}

/* The process ended: each thread's last chunk is complete, and last. */
static int drain(rt_bin_zwriter *w, rt_diag *err)
{
	uint64_t *last = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < w->ct; i++)
		if (w->t[i].chunk) {
			RT_PUSH(last, n, cap, w->t[i].chunk - 1);
			w->t[i].chunk = 0;
		}
	if (n > 1)
		qsort(last, n, sizeof *last, cmp_u64);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = put_frame(w, last[i], RT_TF_ZFLAG_LAST, err);
	free(last);
	return rc;
}

long rt_bin_zstep(rt_bin_zwriter *w, bool ended, bool *done, rt_diag *err)
{
	bool clean;
	uint64_t before = w->st.chunks, n = chunks_now(w, &clean);
	ended |= clean;
	if (done)
		*done = clean;
	if (discover(w, n, ended, err) || (ended ? drain(w, err) : snapshot(w, err)))
		return -1;
	if (!flush(w))
		return zfail(err, w->out_path, "cannot write: %s", strerror(errno));
	punch(w, ended);
	return (long)(w->st.chunks - before);
}
/* --- open and close --- */

static int read_raw_header(rt_bin_zwriter *w, uint8_t *h, rt_diag *err)
{
	if (!pread_all(w->raw, h, RT_TF_FILE_HEADER, 0))
		return zfail(err, w->raw_path, "expected the %d-byte header of a raw trace", RT_TF_FILE_HEADER);
	if (memcmp(h, RT_TF_MAGIC, RT_TF_MAGIC_LEN))
		return zfail(err, w->raw_path, "byte offset 0: expected the magic \"RTRACE\\0\\1\" of a raw trace");
	w->hs = get32(h + RT_TF_OFF_HEADER_SIZE);
	w->cs = get32(h + RT_TF_OFF_CHUNK_SIZE);
	if (w->hs < RT_TF_FILE_HEADER || w->hs > RT_TF_MAX_HEADER || w->cs < RT_TF_MIN_CHUNK ||
	    w->cs > RT_TF_MAX_CHUNK)
		return zfail(err, w->raw_path, "byte offset 8: expected a header and chunk size the format allows");
	return 0;
}

/* The container's header: the raw one's fields (pid, why tracing
 * stopped), its own magic, sizes and frame format, and data_end. */
static bool write_header(rt_bin_zwriter *w, const uint8_t *raw, uint64_t data_end)
{
	uint8_t h[RT_TF_FILE_HEADER];
	uint32_t hs = RT_TF_FILE_HEADER, fmt = RT_TF_ZFORMAT;
	memcpy(h, raw, sizeof h);
	h[RT_TF_OFF_VERSION] = RT_TF_ZVERSION;
	memcpy(h + RT_TF_OFF_HEADER_SIZE, &hs, 4);
	memcpy(h + RT_TF_OFF_DATA_END, &data_end, 8);
	memset(h + RT_TF_OFF_ZFORMAT, 0, RT_TF_FILE_HEADER - RT_TF_OFF_ZFORMAT);
	memcpy(h + RT_TF_OFF_ZFORMAT, &fmt, 4);
	return pwrite(w->out, h, sizeof h, 0) == (ssize_t)sizeof h;
}

static void zfree(rt_bin_zwriter *w)
{
	if (w->raw >= 0)
		close(w->raw);
	if (w->out >= 0)
		close(w->out);
	rt_bin_zc_free(w->zc);
	free(w->raw_path);
	free(w->out_path);
	free(w->t);
	free(w->chunk);
	free(w->ob);
	free(w->done);
	free(w);
}

rt_bin_zwriter *rt_bin_zopen(const char *raw, const char *out, int level, rt_diag *err)
{
	rt_bin_zwriter *w = rt_xcalloc(1, sizeof *w);
	uint8_t h[RT_TF_FILE_HEADER];
	w->raw_path = rt_xstrdup(raw);
	w->out_path = rt_xstrdup(out);
	w->level = level;
	w->out = -1;
	w->raw = open(raw, O_RDWR | O_CLOEXEC);
	if (w->raw < 0)
		zfail(err, raw, "cannot open: %s", strerror(errno));
	else if (!read_raw_header(w, h, err) &&
		 (w->out = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		zfail(err, out, "cannot create: %s", strerror(errno));
	if (w->out < 0) {
		zfree(w);
		return NULL;
	}
	if (!write_header(w, h, 0) || lseek(w->out, RT_TF_FILE_HEADER, SEEK_SET) < 0) {
		zfail(err, out, "cannot write: %s", strerror(errno));
		unlink(out);
		zfree(w);
		return NULL;
	}
	w->st.out_bytes = RT_TF_FILE_HEADER;
	w->zc = rt_bin_zc_new();
	w->chunk = rt_xmalloc(w->cs);
	return w;
}

/* The end frame, then the header with data_end and the raw header's last
 * word on why tracing stopped. */
static int finish(rt_bin_zwriter *w, rt_diag *err)
{
	uint8_t h[RT_TF_FILE_HEADER], e[RT_TF_ZFRAME_HEADER] = {0};
	if (rt_bin_zstep(w, true, NULL, err) < 0)
		return -1;
	memcpy(e, RT_TF_ZEND_MAGIC, 4);
	memcpy(e + 8, &w->st.chunks, 8);
	uint64_t at = w->st.out_bytes;
	if (!write_all(w->out, e, sizeof e) || !pread_all(w->raw, h, sizeof h, 0) || !write_header(w, h, at))
		return zfail(err, w->out_path, "cannot write: %s", strerror(errno));
	w->st.out_bytes += sizeof e;
	if (!w->in_place)
		unlink(w->raw_path);
	return 0;
}

/* --- a finished trace, in place --- */

/* What packing reuses from one trace to the next: the codec (a zstd
 * context is ~15% of a short trace's packing to create and free), the
 * chunk buffer and the memfd the container is written to first. */
struct rt_bin_zpacker {
	int level, mem;
	rt_bin_zc *zc;
	uint8_t *chunk, *ob;
	size_t ccap, ocap;
};

rt_bin_zpacker *rt_bin_zpacker_new(int level)
{
	rt_bin_zpacker *p = rt_xcalloc(1, sizeof *p);
	p->level = level;
	p->mem = -1;
	p->zc = rt_bin_zc_new();
	return p;
}

void rt_bin_zpacker_free(rt_bin_zpacker *p)
{
	if (!p)
		return;
	if (p->mem >= 0)
		close(p->mem);
	rt_bin_zc_free(p->zc);
	free(p->chunk);
	free(p->ob);
	free(p);
}

/* Frees w, a writer over p's parts, giving them back to p (its output
 * buffer may have grown) and leaving the descriptors open. */
static void pack_release(rt_bin_zpacker *p, rt_bin_zwriter *w)
{
	p->ob = w->ob;
	p->ocap = w->ocap;
	w->raw = w->out = -1;
	w->zc = NULL;
	w->ob = w->chunk = NULL;
	zfree(w);
}

/* A writer over p's parts, from the raw trace's open descriptor into
 * p's memfd, emptied; NULL with *err. */
static rt_bin_zwriter *pack_writer(rt_bin_zpacker *p, int raw, const char *raw_path, uint8_t *h, rt_diag *err)
{
	if (p->mem < 0)
		p->mem = memfd_create("rtrace-zpack", MFD_CLOEXEC);
	if (p->mem < 0 || ftruncate(p->mem, 0) || lseek(p->mem, 0, SEEK_SET) < 0) {
		zfail(err, raw_path, "cannot pack: %s", strerror(errno));
		return NULL;
	}
	rt_bin_zwriter *w = rt_xcalloc(1, sizeof *w);
	*w = (rt_bin_zwriter){.raw = raw, .out = p->mem, .level = p->level, .zc = p->zc, .ob = p->ob,
			      .ocap = p->ocap, .no_punch = true, .in_place = true};
	w->raw_path = rt_xstrdup(raw_path);
	w->out_path = rt_xstrdup(raw_path);
	if (read_raw_header(w, h, err)) {
		pack_release(p, w);
		return NULL;
	}
	if (p->ccap < w->cs) {
		free(p->chunk);
		p->chunk = rt_xmalloc(w->cs);
		p->ccap = w->cs;
	}
	w->chunk = p->chunk;
	return w;
}

/* The container of a finished raw trace, in memory. Returns its size, 0
 * when it would not fit in cap bytes, -1 with *err. */
static long pack_mem(rt_bin_zpacker *p, int raw, const char *raw_path, size_t cap, uint8_t **out, rt_diag *err)
{
	uint8_t h[RT_TF_FILE_HEADER];
	long rc = -1;
	rt_bin_zwriter *w = pack_writer(p, raw, raw_path, h, err);
	if (!w)
		return -1;
	w->st.out_bytes = RT_TF_FILE_HEADER;
	if (!write_header(w, h, 0) || lseek(w->out, RT_TF_FILE_HEADER, SEEK_SET) < 0)
		zfail(err, raw_path, "cannot pack: %s", strerror(errno));
	else if (!finish(w, err))
		rc = w->st.out_bytes <= cap ? (long)w->st.out_bytes : 0;
	if (rc > 0) {
		*out = rt_xmalloc((size_t)rc);
		if (!pread_all(w->out, *out, (size_t)rc, 0)) {
			rc = zfail(err, raw_path, "cannot pack: %s", strerror(errno));
			free(*out);
			*out = NULL;
		}
	}
	pack_release(p, w);
	return rc;
}

/* Over its own raw file, then renamed: neither a new file nor a removed
 * one. The container goes within the raw header's page (a small trace:
 * a short process's container is about 600 bytes), so until the rename
 * the raw chunks are intact and a crash leaves either the raw trace or
 * the complete container followed by them. */
/* A raw trace of at most PACK_CHUNKS chunks (its header read into h): a
 * larger one would be compressed twice, for a container too large to go
 * in place and then by the streaming writer. */
#define PACK_CHUNKS 4
static bool small_raw(int fd, uint8_t *h)
{
	struct stat st;
	if (!pread_all(fd, h, RT_TF_FILE_HEADER, 0) || memcmp(h, RT_TF_MAGIC, RT_TF_MAGIC_LEN) || fstat(fd, &st))
		return false;
	uint64_t hs = get32(h + RT_TF_OFF_HEADER_SIZE), cs = get32(h + RT_TF_OFF_CHUNK_SIZE);
	return (uint64_t)st.st_size <= hs + PACK_CHUNKS * cs;
}

int rt_bin_zpack(rt_bin_zpacker *p, const char *raw, const char *out, rt_diag *err)
{
	uint8_t h[RT_TF_FILE_HEADER], *buf = NULL;
	int fd = open(raw, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return zfail(err, raw, "cannot open: %s", strerror(errno));
	uint32_t hs = small_raw(fd, h) ? get32(h + RT_TF_OFF_HEADER_SIZE) : 0;
	long n = hs >= RT_TF_FILE_HEADER ? pack_mem(p, fd, raw, hs, &buf, err) : 0;
	if (n > 0 && (pwrite(fd, buf, (size_t)n, 0) != n || ftruncate(fd, n))) {
		n = zfail(err, raw, "cannot write: %s", strerror(errno));
	} else if (n > 0 && syscall(SYS_renameat2, AT_FDCWD, raw, AT_FDCWD, out, RENAME_NOREPLACE) &&
		   ((errno != EINVAL && errno != ENOSYS) || rename(raw, out))) {
		n = zfail(err, out, "cannot rename %s to it: %s", raw, strerror(errno));
	}
	free(buf);
	close(fd);
	return n < 0 ? -1 : n > 0;
}

int rt_bin_zclose(rt_bin_zwriter *w, bool fin, rt_diag *err)
{
	int rc = fin ? finish(w, err) : 0;
	if (!fin)
		punch(w, true); /* the raw file keeps only what is not in the container */
	zfree(w);
	return rc;
}

void rt_bin_zstats_get(const rt_bin_zwriter *w, rt_bin_zstats *s)
{
	*s = w->st;
}
