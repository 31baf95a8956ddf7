/* Reader for the rtrace binary trace format (docs/binary-format.md).
 *
 * A trace is a file header and fixed-size chunks, each owned by one thread
 * and holding that thread's records. Calls carry a global index and the
 * model wants them in index order (the leak filter depends on it), so the
 * reader merges the threads' record streams:
 *
 *  1. a first pass reads the chunk headers only (16 bytes per chunk) and
 *     finds the threads, with the first and last chunk of each;
 *  2. every thread then keeps a cursor on its next CALL record (its head)
 *     and a heap hands out the head with the smallest index. One scanner
 *     walks the chunk headers forward once more and queues each chunk for
 *     its thread, so finding a thread's next chunk takes no search.
 *
 * Memory follows the number of threads (and of distinct stacks, functions
 * and modules), not the length of the trace: one call per thread waits.
 *
 * Errors keep the delivered calls a prefix of the trace in index order: a
 * thread whose stream breaks becomes a heap entry keyed by the lowest index
 * its lost calls can have, and the error is reported when the merge gets
 * there. Function, resource and backtrace ids are resolved when a call is
 * delivered, not when it is read ahead, so a definition that another thread
 * wrote before the call's index was taken is always known by then. */
#include "rtrace/binary.h"
#include "rtrace/rtrace.h"
#include "util/util.h"
#include "format/varint.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_SEC 1000000000ull
#define FILE_HEADER 64
#define CHUNK_HEADER 16
#define CHUNK_MAGIC "RTCK"
#define MIN_CHUNK 32u         /* a header and a few records */
#define MAX_CHUNK (1u << 30)
#define MAX_HEADER (1u << 20)
#define MAX_SEC (1ull << 40)  /* later start times are not dates */
#define NO_STREAM UINT32_MAX

typedef struct bstr {
	const uint8_t *p;
	size_t n;
} bstr;

/* u64 id -> u32 value (functions, backtraces, threads), open addressing. */
typedef struct idslot {
	uint64_t key;
	uint32_t val;
	uint32_t used;
} idslot;

typedef struct idmap {
	idslot *slots;
	size_t n, cap;
} idmap;

/* Modules already in the model: slots hold the mmap index + 1. */
typedef struct modset {
	uint32_t *slots;
	size_t n, cap;
} modset;

/* A CALL record read ahead, waiting for its turn in index order. */
typedef struct head {
	rt_call c;            /* index, res_id, size, context, kind */
	uint64_t fn, res, bt; /* ids, resolved on delivery */
	uint64_t ns;          /* time since process start */
	uint64_t off;         /* byte offset of the record */
} head;

/* One thread's records. A tid that a new thread reuses (its chunks start
 * again at seq 0) gets a stream of its own: the generations never overlap
 * in time, and each counts its time from the process start. */
typedef struct stream {
	uint32_t tid, seq;       /* seq of its last chunk (first pass) */
	uint32_t next_gen;       /* stream of the next thread with this tid */
	bool broken;             /* first pass: its later chunks are skipped */
	uint64_t first, last;    /* byte offsets of its first and last chunk */
	uint64_t chunk;          /* byte offset of the chunk being read */
	uint64_t used_end;       /* where the chunk's used bytes end */
	const uint8_t *p, *end;  /* records left, cut at the end of the file */
	const uint8_t *rec;      /* start of the record being read */
	uint8_t type;            /* its type */
	uint64_t last_index, ns; /* of its last CALL */
	uint64_t bound;          /* lowest index a call lost now could have */
	head h;
	bool has_head, failed;
	rt_diag *tail; /* error to report once its chunks run out */
	rt_diag *err;  /* its error, once failed */
	uint64_t *q;   /* its chunks that the scanner found, in file order */
	size_t qhead, qlen, qcap;
} stream;

typedef struct rd {
	rt_trace *t;
	const rt_read_opts *o;
	const char *file;
	const uint8_t *base;
	size_t len;
	uint32_t header_size, chunk_size;
	uint64_t data_end;
	uint64_t limit;   /* the first pass read the chunks below it */
	uint64_t scan;    /* the scanner's next chunk */
	rt_diag diag;     /* the last error that bad() made */
	rt_diag *pending; /* a bad or cut chunk: every thread may have lost calls */
	stream *s;
	size_t ns, cs;
	idmap tids;      /* first pass: tid -> its latest stream */
	idmap scan_tids; /* scanner: tid -> the stream it is in */
	uint32_t *heap;
	size_t nheap;
	idmap fns, bts, ctxs;
	uint8_t res[RT_MAX_RESOURCES + 1]; /* resource id -> res_type */
	modset mods;
	uint64_t gen, gen_since; /* MAPS records seen; first call index of the last */
	uint64_t *mod_gen;       /* mmap index -> last generation listing it */
	size_t nmod_gen, cmod_gen;
	bool have_process, timestamps;
	uint64_t start_sec, start_nsec;
	bool tm_ok; /* tm_us is the local time of day of second tm_sec */
	uint64_t tm_sec, tm_us;
	rt_frame *frames;
	size_t cframes;
	char *tmp[2];
	size_t ctmp[2];
	rt_read_stats stats;
	/* heap checking records: function and backtrace ids, resolved once
	 * every thread's definitions are read (rec_leak, rec_heaperr) */
	uint64_t (*leak_ids)[2], (*err_ids)[6];
	size_t nleak_ids, cleak_ids, nerr_ids, cerr_ids, leak_base, err_base;
	bool have_leaksum;
} rd;

static const char *const rec_names[] = {
	"", "PROCESS", "MODULE", "MAPS", "RESOURCE", "FUNCTION",
	"CONTEXT", "BT", "CALL", "END", "MESSAGE",
	"LEAK", "LEAKSUM", "HEAPERR", "CALLA",
};

/* --- small helpers --- */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static uint64_t off_of(const rd *r, const uint8_t *p)
{
	return (uint64_t)(p - r->base);
}

/* Puts "byte offset N: <msg>" in r->diag; returns false for the caller. */
__attribute__((format(printf, 3, 4)))
static bool bad(rd *r, uint64_t off, const char *fmt, ...)
{
	rt_diag *d = &r->diag;
	d->file = r->file;
	d->line = 0;
	d->col = 0;
	int n = snprintf(d->msg, sizeof d->msg, "byte offset %" PRIu64 ": ", off);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg + n, sizeof d->msg - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

__attribute__((format(printf, 3, 4)))
static void warn_at(rd *r, uint64_t off, const char *fmt, ...)
{
	if (!r->o || !r->o->warn)
		return;
	rt_diag d = {r->file, 0, 0, ""};
	int n = snprintf(d.msg, sizeof d.msg, "byte offset %" PRIu64 ": ", off);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d.msg + n, sizeof d.msg - (size_t)n, fmt, ap);
	va_end(ap);
	r->o->warn(r->o->ctx, &d);
}

static rt_diag *diag_dup(const rt_diag *d)
{
	rt_diag *c = rt_xmalloc(sizeof *c);
	*c = *d;
	return c;
}

/* A model string from str bytes, after pfx: NUL-terminated, and control
 * bytes shown as '?', since the text protocol is line based and a NUL
 * would cut the string short. Valid until slot is used again. */
static const char *text_with(rd *r, int slot, const char *pfx, bstr v)
{
	size_t np = strlen(pfx);
	rt_grow((void **)&r->tmp[slot], &r->ctmp[slot], np + v.n + 1, 1);
	char *d = r->tmp[slot];
	memcpy(d, pfx, np);
	for (size_t i = 0; i < v.n; i++)
		d[np + i] = v.p[i] < 0x20 || v.p[i] == 0x7f ? '?' : (char)v.p[i];
	d[np + v.n] = '\0';
	return d;
}

static const char *text(rd *r, int slot, bstr v)
{
	return text_with(r, slot, "", v);
}

static void set_u64(rd *r, const char *key, uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "%" PRIu64, v);
	rt_trace_set_header(r->t, key, buf);
}

/* --- id maps --- */

static idslot *idmap_slot(const idmap *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	for (size_t i = rt_mix64(key) & mask;; i = (i + 1) & mask)
		if (!m->slots[i].used || m->slots[i].key == key)
			return &m->slots[i];
}

static uint32_t *idmap_get(const idmap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	idslot *s = idmap_slot(m, key);
	return s->used ? &s->val : NULL;
}

static void idmap_grow(idmap *m)
{
	idmap old = *m;
	m->cap = old.cap ? old.cap * 2 : 16;
	m->slots = rt_xcalloc(m->cap, sizeof *m->slots);
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].used)
			*idmap_slot(m, old.slots[i].key) = old.slots[i];
	free(old.slots);
}

static void idmap_put(idmap *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap)
		idmap_grow(m);
	idslot *s = idmap_slot(m, key);
	if (!s->used) {
		m->n++;
		s->used = 1;
		s->key = key;
	}
	s->val = val;
}

/* --- module set --- */

static size_t mod_hash(const char *path, uint64_t from, uint64_t to)
{
	return (size_t)(rt_hash_bytes(path, strlen(path)) ^ rt_mix64(from + rt_mix64(to)));
}

/* The slot of the module (path, from, to), or the empty slot for it. */
static uint32_t *mod_slot(rd *r, const char *path, uint64_t from, uint64_t to)
{
	size_t mask = r->mods.cap - 1;
	for (size_t i = mod_hash(path, from, to) & mask;; i = (i + 1) & mask) {
		uint32_t v = r->mods.slots[i];
		if (!v)
			return &r->mods.slots[i];
		const rt_mmap *m = rt_trace_mmap_at(r->t, v - 1);
		if (m->from == from && m->to == to && !strcmp(m->module, path))
			return &r->mods.slots[i];
	}
}

static void mod_grow(rd *r)
{
	modset old = r->mods;
	r->mods.cap = old.cap ? old.cap * 2 : 64;
	r->mods.slots = rt_xcalloc(r->mods.cap, sizeof *r->mods.slots);
	for (size_t i = 0; i < old.cap; i++) {
		if (!old.slots[i])
			continue;
		const rt_mmap *m = rt_trace_mmap_at(r->t, old.slots[i] - 1);
		*mod_slot(r, m->module, m->from, m->to) = old.slots[i];
	}
	free(old.slots);
}

/* Later MAPS generations list the modules that stayed as well: only new
 * mappings are added, and those of a dlclose'd module stay, since the
 * calls made before the dlclose still point into it. Each mapping keeps
 * the call indices it was mapped for, so that a module loaded later at the
 * same addresses is told apart. */
static void add_module(rd *r, const char *path, uint64_t from, uint64_t to, uint64_t offset)
{
	if ((r->mods.n + 1) * 2 > r->mods.cap)
		mod_grow(r);
	uint32_t *slot = mod_slot(r, path, from, to);
	if (!*slot) {
		rt_mmap m = {path, from, to, offset, r->gen_since, UINT64_MAX};
		*slot = (uint32_t)rt_trace_add_mmap_full(r->t, &m) + 1;
		r->mods.n++;
	} else if (rt_trace_mmap_at(r->t, *slot - 1)->until != UINT64_MAX) {
		rt_trace_set_mmap_until(r->t, *slot - 1, UINT64_MAX); /* mapped again */
	}
	rt_grow((void **)&r->mod_gen, &r->cmod_gen, *slot, sizeof *r->mod_gen);
	for (; r->nmod_gen < *slot; r->nmod_gen++)
		r->mod_gen[r->nmod_gen] = 0;
	r->mod_gen[*slot - 1] = r->gen;
}

/* The mappings that the last MAPS generation no longer lists were
 * unmapped when it began. */
static void close_generation(rd *r)
{
	size_t n = rt_trace_mmap_count(r->t);
	for (size_t i = 0; i < n && i < r->nmod_gen; i++)
		if (r->mod_gen[i] && r->mod_gen[i] != r->gen &&
		    rt_trace_mmap_at(r->t, i)->until == UINT64_MAX)
			rt_trace_set_mmap_until(r->t, i, r->gen_since);
}

/* --- fields of the record being read --- */

/* A field runs past what the chunk holds: past its used bytes (corrupt
 * data) or past the end of a file cut inside them (truncated trace). */
static bool ran_out(rd *r, const stream *s)
{
	const char *name = rec_names[s->type];
	uint64_t at = off_of(r, s->rec);
	if (s->used_end > r->len)
		return bad(r, at, "expected the rest of the %s record starting here, found end of file "
			   "(truncated trace: the chunk at byte offset %" PRIu64 " has used bytes up to byte offset %" PRIu64 ")",
			   name, s->chunk, s->used_end);
	return bad(r, at, "expected the %s record starting here to end within its chunk's used bytes "
		   "(chunk at byte offset %" PRIu64 ", used bytes up to byte offset %" PRIu64 ")",
		   name, s->chunk, s->used_end);
}

static bool get_u8(rd *r, stream *s, uint8_t *v)
{
	if (s->p >= s->end)
		return ran_out(r, s);
	*v = *s->p++;
	return true;
}

static bool get_v(rd *r, stream *s, uint64_t *v)
{
	int n = rt_varint_get(s->p, s->end, v);
	if (n > 0) {
		s->p += n;
		return true;
	}
	if (n == RT_VARINT_END)
		return ran_out(r, s);
	if (n == RT_VARINT_LONG)
		return bad(r, off_of(r, s->p), "expected a varint of at most %d bytes in the %s record",
			   RT_VARINT_MAX, rec_names[s->type]);
	return bad(r, off_of(r, s->p), "expected a varint below 2^64 in the %s record (its 10th byte is above 1)",
		   rec_names[s->type]);
}

static bool get_s(rd *r, stream *s, bstr *v)
{
	uint64_t n;
	if (!get_v(r, s, &n))
		return false;
	if (n > (uint64_t)(s->end - s->p))
		return ran_out(r, s);
	v->p = s->p;
	v->n = (size_t)n;
	s->p += n;
	return true;
}

/* --- records --- */

/* Ids are unique in a trace. A second, different definition would make
 * the calls' meaning depend on how far the reader had read ahead. */
static bool redefined(rd *r, const stream *s, const char *what, uint64_t id)
{
	return bad(r, off_of(r, s->rec), "expected %s id %" PRIu64 " to be defined once, "
		   "found a second %s record that differs", what, id, rec_names[s->type]);
}

static void set_start_time(rd *r, uint64_t sec)
{
	struct tm tm;
	time_t tt = (time_t)sec;
	char buf[64];
	if (sec > MAX_SEC || !localtime_r(&tt, &tm))
		return;
	snprintf(buf, sizeof buf, "%d.%d.%d %02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	rt_trace_set_header(r->t, "timestamp", buf);
}

/* The "args" header: the arguments after argv[0] of a PROCESS cmdline
 * (NUL-separated; older tracers joined them with spaces), separated by
 * spaces, with space and backslash escaped by a backslash. */
static void set_args(rd *r, bstr cmd)
{
	char sep = memchr(cmd.p, '\0', cmd.n) ? '\0' : ' ';
	const uint8_t *p = memchr(cmd.p, sep, cmd.n);
	if (!p)
		return;
	size_t n = cmd.n - (size_t)(p + 1 - cmd.p), k = 0;
	char *v = rt_xmalloc(2 * n + 1);
	for (size_t i = 0; i < n; i++) {
		char c = (char)p[1 + i];
		if (c == sep)
			c = ' ';
		else if (c == ' ' || c == '\\')
			v[k++] = '\\';
		v[k++] = c;
	}
	v[k] = '\0';
	rt_trace_set_header(r->t, "args", v);
	free(v);
}

/* PROCESS: the header fields, and the clock that CALL deltas count from. */
static bool rec_process(rd *r, stream *s)
{
	uint64_t pid, ppid, sec, nsec, depth, flags;
	bstr arch, proc, cmdline = {NULL, 0};
	if (!get_v(r, s, &pid) || !get_v(r, s, &ppid) || !get_v(r, s, &sec) ||
	    !get_v(r, s, &nsec) || !get_s(r, s, &arch) || !get_s(r, s, &proc) ||
	    !get_s(r, s, &cmdline) || !get_v(r, s, &depth) || !get_v(r, s, &flags))
		return false;
	if (nsec >= NS_PER_SEC)
		return bad(r, off_of(r, s->rec), "expected start_nsec below 10^9 in the PROCESS record, found %" PRIu64, nsec);
	/* a forked child writes a file of its own: one process per trace,
	 * and calls read ahead would otherwise see another start time */
	if (r->have_process)
		return bad(r, off_of(r, s->rec), "expected one PROCESS record in the trace, found a second one");
	r->have_process = true;
	r->start_sec = sec;
	r->start_nsec = nsec;
	r->timestamps = flags & 1;
	r->tm_ok = false;
	set_u64(r, "pid", pid);
	rt_trace_set_header(r->t, "arch", text(r, 0, arch));
	rt_trace_set_header(r->t, "process", text(r, 0, proc));
	set_u64(r, "backtrace depth", depth);
	set_start_time(r, sec);
	set_u64(r, "ppid", ppid);
	set_args(r, cmdline);
	return true;
}

static bool rec_module(rd *r, stream *s)
{
	uint64_t start, end, offset;
	bstr path;
	if (!get_v(r, s, &start) || !get_v(r, s, &end) || !get_v(r, s, &offset) ||
	    !get_s(r, s, &path))
		return false;
	add_module(r, text(r, 0, path), start, end, offset);
	return true;
}

/* MAPS: the MODULE records that follow are the whole list again; see
 * add_module for why the model keeps the older ones. They hold from the
 * thread's next call on. */
static bool rec_maps(rd *r, stream *s)
{
	uint64_t generation;
	if (!get_v(r, s, &generation))
		return false;
	if (r->gen)
		close_generation(r);
	r->gen++;
	r->gen_since = s->last_index ? s->last_index + 1 : 0;
	return true;
}

static bool rec_resource(rd *r, stream *s)
{
	uint64_t id, flags;
	bstr type, desc;
	if (!get_v(r, s, &id) || !get_s(r, s, &type) || !get_s(r, s, &desc) ||
	    !get_v(r, s, &flags))
		return false;
	if (id < 1 || id > RT_MAX_RESOURCES)
		return bad(r, off_of(r, s->rec), "expected a resource id between 1 and %d in the RESOURCE record, found %" PRIu64,
			   RT_MAX_RESOURCES, id);
	const char *name = text(r, 0, type);
	if (r->res[id] && r->res[id] != rt_trace_find_resource(r->t, name, type.n))
		return redefined(r, s, "resource", id);
	r->res[id] = rt_trace_add_resource(r->t, 1u << (id - 1), name, text(r, 1, desc),
					   flags & 1 ? "refcount" : NULL);
	return true;
}

static bool rec_function(rd *r, stream *s)
{
	uint64_t id;
	bstr name;
	if (!get_v(r, s, &id) || !get_s(r, s, &name))
		return false;
	uint32_t str = rt_trace_intern(r->t, text(r, 0, name), name.n);
	const uint32_t *had = idmap_get(&r->fns, id);
	if (had && *had != str)
		return redefined(r, s, "function", id);
	idmap_put(&r->fns, id, str);
	return true;
}

static bool rec_context(rd *r, stream *s)
{
	uint64_t id;
	bstr name;
	if (!get_v(r, s, &id) || !get_s(r, s, &name))
		return false;
	if (id > UINT32_MAX)
		return bad(r, off_of(r, s->rec), "expected a 32-bit context id in the CONTEXT record, found %" PRIu64, id);
	if (idmap_get(&r->ctxs, id))
		return true; /* the registry lists each context once */
	idmap_put(&r->ctxs, id, 1);
	rt_trace_add_context(r->t, (uint32_t)id, text(r, 0, name));
	return true;
}

/* BT: frames are deltas from the previous return address; the stack is
 * interned by content, so two threads' ids for one stack share it. */
static bool rec_bt(rd *r, stream *s)
{
	uint64_t id, n, addr = 0, d;
	if (!get_v(r, s, &id) || !get_v(r, s, &n))
		return false;
	if (id == 0)
		return bad(r, off_of(r, s->rec), "expected a backtrace id above 0 in the BT record (0 means none)");
	if (n > (uint64_t)(s->end - s->p)) /* a frame takes a byte at least */
		return ran_out(r, s);
	uint32_t keep = r->o && r->o->max_depth && n > r->o->max_depth ? r->o->max_depth : (uint32_t)n;
	rt_grow((void **)&r->frames, &r->cframes, keep, sizeof *r->frames);
	for (uint64_t i = 0; i < n; i++) {
		if (!get_v(r, s, &d))
			return false;
		addr += (uint64_t)rt_unzigzag(d);
		if (i < keep)
			r->frames[i] = (rt_frame){addr, RT_NONE};
	}
	uint32_t bt = rt_trace_intern_bt(r->t, r->frames, keep);
	const uint32_t *had = idmap_get(&r->bts, id);
	if (had && *had != bt)
		return redefined(r, s, "backtrace", id);
	idmap_put(&r->bts, id, bt);
	return true;
}

/* CALL: becomes the stream's head; its ids are resolved on delivery. */
static bool call_fields(rd *r, stream *s)
{
	head *h = &s->h;
	uint64_t delta, ctx;
	uint8_t kind = 0;
	memset(h, 0, sizeof *h);
	h->off = off_of(r, s->rec);
	if (!get_v(r, s, &h->c.index))
		return false;
	if (h->c.index <= s->last_index)
		return bad(r, h->off, "expected a call index above %" PRIu64 " (the thread's previous call), found %" PRIu64,
			   s->last_index, h->c.index);
	s->bound = h->c.index;
	if (!get_v(r, s, &delta) || !get_u8(r, s, &kind))
		return false;
	if (kind != RT_CALL_ALLOC && kind != RT_CALL_FREE)
		return bad(r, h->off, "expected call kind 1 (alloc) or 2 (free) in the CALL record, found %u", kind);
	if (!get_v(r, s, &h->fn) || !get_v(r, s, &h->res) || !get_v(r, s, &h->c.res_id) ||
	    (kind == RT_CALL_ALLOC && !get_v(r, s, &h->c.size)) || !get_v(r, s, &h->bt) ||
	    !get_v(r, s, &ctx))
		return false;
	if (ctx > UINT32_MAX)
		return bad(r, h->off, "expected a 32-bit context mask in the CALL record, found %" PRIu64, ctx);
	h->c.context = (uint32_t)ctx;
	h->c.kind = kind;
	h->c.args = h->c.bt = RT_NONE;
	h->ns = s->ns += delta;
	s->last_index = h->c.index;
	s->has_head = true;
	return true;
}

static bool rec_call(rd *r, stream *s)
{
	return call_fields(r, s);
}

#define MAX_ARGS 64

/* An argument's name or value as a model string (control bytes as '?'). */
static char *arg_text(bstr v)
{
	char *d = rt_xmalloc(v.n + 1);
	for (size_t i = 0; i < v.n; i++)
		d[i] = v.p[i] < 0x20 || v.p[i] == 0x7f ? '?' : (char)v.p[i];
	d[v.n] = '\0';
	return d;
}

/* CALLA (format 1.2): a CALL followed by its arguments, which become the
 * call's "$name = value" block. */
static bool rec_calla(rd *r, stream *s)
{
	uint64_t n;
	if (!call_fields(r, s) || !get_v(r, s, &n))
		return false;
	if (n == 0 || n > MAX_ARGS)
		return bad(r, s->h.off, "expected 1 to %d arguments in the CALLA record, found %" PRIu64, MAX_ARGS, n);
	rt_kv kv[MAX_ARGS];
	bool ok = true;
	uint64_t i;
	for (i = 0; i < n && ok; i++) {
		bstr k, v;
		ok = get_s(r, s, &k) && get_s(r, s, &v);
		if (ok) {
			kv[i].key = arg_text(k);
			kv[i].value = arg_text(v);
		}
	}
	if (ok)
		s->h.c.args = rt_trace_add_args(r->t, kv, (uint32_t)n);
	for (uint64_t k = 0; k < (ok ? n : i - 1); k++) {
		free((char *)kv[k].key);
		free((char *)kv[k].value);
	}
	return ok;
}

static bool rec_end(rd *r, stream *s)
{
	uint64_t calls; /* diagnostic only */
	return get_v(r, s, &calls);
}

/* MESSAGE: told through opts->warn, and kept as a permanent comment after
 * the thread's last call, so that a converted trace still says it. */
static bool rec_message(rd *r, stream *s)
{
	bstr m;
	if (!get_s(r, s, &m))
		return false;
	warn_at(r, off_of(r, s->rec), "tracer message: %s", text(r, 0, m));
	const char *c = text_with(r, 1, "## ", m);
	rt_trace_add_comment(r->t, s->last_index, c, strlen(c));
	return true;
}

/* LEAK: the leak check's verdict on one block (format 1.1). */
static bool rec_leak(rd *r, stream *s)
{
	rt_leak l = {0};
	uint64_t fn, bt;
	if (!get_v(r, s, &l.index) || !get_v(r, s, &l.addr) || !get_v(r, s, &l.size) ||
	    !get_u8(r, s, &l.kind) || !get_u8(r, s, &l.heuristic) || !get_v(r, s, &fn) ||
	    !get_v(r, s, &bt) || !get_v(r, s, &l.indirect))
		return false;
	if (l.kind < 1 || l.kind > RT_LEAK_KINDS || l.heuristic > RT_LEAK_HEURISTICS)
		return bad(r, off_of(r, s->rec), "expected leak kind 1 to %d and heuristic 0 to %d in the LEAK record, found %u and %u",
			   RT_LEAK_KINDS, RT_LEAK_HEURISTICS, l.kind, l.heuristic);
	l.fn = l.bt = RT_NONE;
	rt_trace_add_leak(r->t, &l);
	uint64_t ids[2] = {fn, bt};
	rt_grow((void **)&r->leak_ids, &r->cleak_ids, r->nleak_ids + 1, sizeof *r->leak_ids);
	memcpy(r->leak_ids[r->nleak_ids++], ids, sizeof ids);
	return true;
}

/* LEAKSUM: the leak check's totals; one per trace. */
static bool rec_leaksum(rd *r, stream *s)
{
	rt_leak_summary m = {0};
	bool ok = get_u8(r, s, &m.mode);
	for (int k = 1; ok && k <= RT_LEAK_KINDS; k++)
		ok = get_v(r, s, &m.bytes[k]) && get_v(r, s, &m.blocks[k]);
	for (int h = 1; ok && h <= RT_LEAK_HEURISTICS; h++)
		ok = get_v(r, s, &m.heur_bytes[h]) && get_v(r, s, &m.heur_blocks[h]);
	if (!ok || !get_v(r, s, &m.checked) || !get_v(r, s, &m.us))
		return false;
	if (m.mode != RT_LEAK_CHECK_SUMMARY && m.mode != RT_LEAK_CHECK_FULL)
		return bad(r, off_of(r, s->rec), "expected mode 1 (summary) or 2 (full) in the LEAKSUM record, found %u", m.mode);
	if (r->have_leaksum)
		return bad(r, off_of(r, s->rec), "expected one LEAKSUM record in the trace, found a second one");
	r->have_leaksum = true;
	rt_trace_set_leak_summary(r->t, &m);
	return true;
}

/* HEAPERR: an invalid or mismatched release (format 1.1). */
static bool rec_heaperr(rd *r, stream *s)
{
	rt_heap_error e = {0};
	uint64_t id[6]; /* fn, bt, alloc fn, alloc bt, free fn, free bt */
	if (!get_u8(r, s, &e.kind) || !get_v(r, s, &e.index) || !get_v(r, s, &id[0]) ||
	    !get_v(r, s, &e.addr) || !get_v(r, s, &id[1]) || !get_u8(r, s, &e.block) ||
	    !get_v(r, s, &e.block_addr) || !get_v(r, s, &e.block_size) || !get_v(r, s, &id[2]) ||
	    !get_v(r, s, &id[3]) || !get_v(r, s, &id[4]) || !get_v(r, s, &id[5]))
		return false;
	if (e.kind < RT_ERR_INVALID_FREE || e.kind > RT_ERR_MISMATCHED_FREE || e.block > RT_BLOCK_FREED)
		return bad(r, off_of(r, s->rec), "expected error kind 1 or 2 and block state 0 to 2 in the HEAPERR record, found %u and %u",
			   e.kind, e.block);
	e.fn = e.bt = e.alloc_fn = e.alloc_bt = e.free_fn = e.free_bt = RT_NONE;
	rt_trace_add_heap_error(r->t, &e);
	rt_grow((void **)&r->err_ids, &r->cerr_ids, r->nerr_ids + 1, sizeof *r->err_ids);
	memcpy(r->err_ids[r->nerr_ids++], id, sizeof id);
	return true;
}

/* Ids in heap checking records name definitions any thread may have
 * written: they are looked up once the merge read everything. Unknown
 * ones (a trace cut short) stay RT_NONE. */
static uint32_t id_or_none(const idmap *m, uint64_t id)
{
	const uint32_t *v = id ? idmap_get(m, id) : NULL;
	return v ? *v : RT_NONE;
}

static void resolve_heapcheck(rd *r)
{
	rt_leak *l = r->nleak_ids ? rt_trace_leaks(r->t) + r->leak_base : NULL;
	for (size_t i = 0; i < r->nleak_ids; i++) {
		l[i].fn = id_or_none(&r->fns, r->leak_ids[i][0]);
		l[i].bt = id_or_none(&r->bts, r->leak_ids[i][1]);
	}
	rt_heap_error *e = r->nerr_ids ? rt_trace_heap_errors(r->t) + r->err_base : NULL;
	for (size_t i = 0; i < r->nerr_ids; i++) {
		const uint64_t *id = r->err_ids[i];
		e[i].fn = id_or_none(&r->fns, id[0]);
		e[i].bt = id_or_none(&r->bts, id[1]);
		e[i].alloc_fn = id_or_none(&r->fns, id[2]);
		e[i].alloc_bt = id_or_none(&r->bts, id[3]);
		e[i].free_fn = id_or_none(&r->fns, id[4]);
		e[i].free_bt = id_or_none(&r->bts, id[5]);
	}
}

typedef bool (*rec_fn)(rd *r, stream *s);

static const rec_fn handlers[] = {
	NULL, rec_process, rec_module, rec_maps, rec_resource, rec_function,
	rec_context, rec_bt, rec_call, rec_end, rec_message,
	rec_leak, rec_leaksum, rec_heaperr, rec_calla,
};
#define NTYPES (sizeof handlers / sizeof *handlers)

static bool read_record(rd *r, stream *s)
{
	s->rec = s->p;
	s->type = 0;
	uint8_t type = *s->p++;
	if (type == 0 || type >= NTYPES)
		return bad(r, off_of(r, s->rec), "expected a record type between 1 and %zu, found %u",
			   NTYPES - 1, type);
	s->type = type;
	r->stats.lines++;
	return handlers[type](r, s);
}

/* --- first pass: the chunk headers --- */

enum { CHUNK_OK, CHUNK_END, CHUNK_BAD };

static int bad_magic(rd *r, uint64_t off)
{
	if (r->data_end)
		bad(r, off, "expected chunk magic \"RTCK\" (data_end says chunks go on to byte offset %" PRIu64 ")",
		    r->data_end);
	else
		bad(r, off, "expected chunk magic \"RTCK\", or zero bytes where the trace ends");
	return CHUNK_BAD;
}

/* Fewer than 16 bytes of a chunk: a copy cut inside its header. Nothing
 * is lost when they are zero or say that no bytes are used. */
static int cut_header(rd *r, uint64_t off)
{
	const uint8_t *h = r->base + off;
	size_t rem = r->len - (size_t)off, m = rem < 4 ? rem : 4;
	static const uint8_t zero[4];
	if (!r->data_end && !memcmp(h, zero, m))
		return CHUNK_END;
	if (memcmp(h, CHUNK_MAGIC, m))
		return bad_magic(r, off);
	if (rem >= 8 && le32(h + 4) == 0)
		return CHUNK_END;
	bad(r, off, "expected a %d-byte chunk header, found end of file after %zu bytes (truncated trace)",
	    CHUNK_HEADER, rem);
	return CHUNK_BAD;
}

/* The file ends at a chunk boundary before data_end: a copy cut short.
 * Only a chunk cut inside its used bytes is an error (the spec), but the
 * caller hears of it. */
static int short_file(rd *r, uint64_t off)
{
	if (r->data_end)
		warn_at(r, off, "expected chunks up to data_end (byte offset %" PRIu64 "), found end of file: "
			"a truncated copy? reading the chunks present", r->data_end);
	return CHUNK_END;
}

/* Sorts the chunk at off: one to read, the end of the trace, or a bad one
 * (r->diag says why). */
static int classify(rd *r, uint64_t off)
{
	if (r->data_end && off >= r->data_end)
		return CHUNK_END;
	if (off >= r->len)
		return short_file(r, off);
	if (r->len - off < CHUNK_HEADER)
		return cut_header(r, off);
	const uint8_t *h = r->base + off;
	if (!r->data_end && le32(h) == 0)
		return CHUNK_END;
	if (memcmp(h, CHUNK_MAGIC, 4))
		return bad_magic(r, off);
	if (le32(h + 4) > r->chunk_size - CHUNK_HEADER) {
		bad(r, off + 4, "expected at most %u used bytes in the chunk, found %u",
		    r->chunk_size - CHUNK_HEADER, le32(h + 4));
		return CHUNK_BAD;
	}
	return CHUNK_OK;
}

static uint32_t new_stream(rd *r, uint32_t tid, uint64_t off, uint32_t seq)
{
	if (r->ns == r->cs)
		rt_grow((void **)&r->s, &r->cs, r->ns + 1, sizeof *r->s);
	stream *s = &r->s[r->ns];
	memset(s, 0, sizeof *s);
	s->tid = tid;
	s->seq = seq;
	s->first = s->last = s->chunk = off;
	s->next_gen = NO_STREAM;
	s->bound = 1;
	idmap_put(&r->tids, tid, (uint32_t)r->ns);
	return (uint32_t)r->ns++;
}

/* Adds the chunk at off to its thread's stream. Any first seq is taken;
 * then seq 0 is a new thread that got a dead thread's tid, and any other
 * break in the sequence ends the stream (an error once it is read). */
static void index_chunk(rd *r, uint64_t off)
{
	uint32_t tid = le32(r->base + off + 8), seq = le32(r->base + off + 12);
	uint32_t *sid = idmap_get(&r->tids, tid);
	if (!sid) {
		idmap_put(&r->scan_tids, tid, new_stream(r, tid, off, seq));
		return;
	}
	uint32_t prev = *sid;
	stream *s = &r->s[prev];
	if (seq == 0) {
		uint32_t n = new_stream(r, tid, off, seq);
		r->s[prev].next_gen = n;
	} else if (!s->broken && seq == s->seq + 1) {
		s->last = off;
		s->seq = seq;
	} else if (!s->broken) {
		bad(r, off + 12, "expected seq %" PRIu32 " for the next chunk of thread %" PRIu32
		    " (or 0 for a new thread reusing its id), found %" PRIu32 "; its later chunks are skipped",
		    s->seq + 1, tid, seq);
		s->tail = diag_dup(&r->diag);
		s->broken = true;
	}
}

/* The file ends inside the used bytes of the chunk at off (the last one):
 * its thread fails where its records break off, and since every other
 * thread may have had chunks past the cut as well, each fails once its
 * chunks run out, which keeps the delivered calls a prefix. */
static void note_cut(rd *r, uint64_t off)
{
	uint64_t used_end = off + CHUNK_HEADER + le32(r->base + off + 4);
	if (used_end <= r->len || r->pending)
		return;
	bad(r, r->len, "expected %" PRIu64 " more used bytes of the chunk at byte offset %" PRIu64
	    ", found end of file (truncated trace)", used_end - r->len, off);
	r->pending = diag_dup(&r->diag);
}

static void index_chunks(rd *r)
{
	uint64_t off = r->header_size;
	for (;; off += r->chunk_size) {
		int k = classify(r, off);
		if (k == CHUNK_OK) {
			index_chunk(r, off);
			note_cut(r, off);
			continue;
		}
		/* a bad chunk: any thread may have had chunks past it */
		if (k == CHUNK_BAD && !r->pending)
			r->pending = diag_dup(&r->diag);
		break;
	}
	r->limit = off;
}

/* --- chunk cursors --- */

static void queue_push(stream *s, uint64_t off)
{
	if (s->qhead && s->qhead * 2 >= s->qlen) {
		memmove(s->q, s->q + s->qhead, (s->qlen - s->qhead) * sizeof *s->q);
		s->qlen -= s->qhead;
		s->qhead = 0;
	}
	RT_PUSH(s->q, s->qlen, s->qcap, off);
}

/* Queues the scanner's next chunk for its stream; false past the chunks
 * of the first pass. The tid's generations follow in file order. */
static bool scan_one(rd *r)
{
	if (r->scan >= r->limit)
		return false;
	uint64_t off = r->scan;
	r->scan += r->chunk_size;
	uint32_t *g = idmap_get(&r->scan_tids, le32(r->base + off + 8));
	if (!g)
		return true;
	stream *s = &r->s[*g];
	while (off > s->last && s->next_gen != NO_STREAM) {
		*g = s->next_gen;
		s = &r->s[*g];
	}
	if (off > s->chunk && off <= s->last)
		queue_push(s, off);
	return true;
}

static void enter_chunk(rd *r, stream *s, uint64_t off)
{
	uint32_t used = le32(r->base + off + 4);
	/* checked by the first pass; a live trace may have grown it since */
	if (used > r->chunk_size - CHUNK_HEADER)
		used = r->chunk_size - CHUNK_HEADER;
	s->chunk = off;
	s->used_end = off + CHUNK_HEADER + used;
	s->p = r->base + off + CHUNK_HEADER;
	s->end = r->base + (s->used_end < r->len ? s->used_end : r->len);
}

static bool next_chunk(rd *r, stream *s)
{
	if (s->chunk >= s->last)
		return false;
	while (s->qhead == s->qlen)
		if (!scan_one(r))
			return false;
	enter_chunk(r, s, s->q[s->qhead++]);
	return true;
}

/* --- the merge --- */

static void fail(stream *s, const rt_diag *d)
{
	s->failed = true;
	s->err = diag_dup(d);
}

static const rt_diag *cut_chunk(rd *r, const stream *s)
{
	bad(r, r->len, "expected %" PRIu64 " more used bytes of the chunk at byte offset %" PRIu64
	    ", found end of file (truncated trace)", s->used_end - r->len, s->chunk);
	return &r->diag;
}

/* Reads s up to its next CALL record, its head. On an error s fails, to
 * be reported when the merge reaches s->bound. */
static void advance(rd *r, stream *s)
{
	s->has_head = false;
	s->bound = s->last_index == UINT64_MAX ? UINT64_MAX : s->last_index + 1;
	while (!s->has_head) {
		if (s->p < s->end) {
			if (!read_record(r, s)) {
				fail(s, &r->diag);
				return;
			}
			continue;
		}
		if (s->used_end > r->len) {
			fail(s, cut_chunk(r, s));
			return;
		}
		if (!next_chunk(r, s)) {
			const rt_diag *why = s->tail ? s->tail : r->pending;
			if (why)
				fail(s, why);
			return;
		}
	}
}

static uint64_t key_of(const stream *s)
{
	return s->failed ? s->bound : s->h.c.index;
}

/* Heap order: smallest index; an error before a call of the same index. */
static bool before(const rd *r, uint32_t a, uint32_t b)
{
	const stream *x = &r->s[a], *y = &r->s[b];
	uint64_t kx = key_of(x), ky = key_of(y);
	if (kx != ky)
		return kx < ky;
	if (x->failed != y->failed)
		return x->failed;
	return a < b;
}

static void heap_push(rd *r, uint32_t v)
{
	size_t i = r->nheap++;
	while (i && before(r, v, r->heap[(i - 1) / 2])) {
		r->heap[i] = r->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->heap[i] = v;
}

static uint32_t heap_pop(rd *r)
{
	uint32_t top = r->heap[0], v = r->heap[--r->nheap];
	size_t i = 0, n = r->nheap;
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && before(r, r->heap[c + 1], r->heap[c]))
			c++;
		if (!before(r, r->heap[c], v))
			break;
		r->heap[i] = r->heap[c];
	}
	if (n)
		r->heap[i] = v;
	return top;
}

/* Local time of day of second sec, in microseconds; localtime_r runs once
 * per second of trace, not once per call. */
static bool local_day_us(rd *r, uint64_t sec, uint64_t *us)
{
	if (!r->tm_ok || sec != r->tm_sec) {
		struct tm tm;
		time_t tt = (time_t)sec;
		if (sec > MAX_SEC || !localtime_r(&tt, &tm))
			return false;
		r->tm_sec = sec;
		r->tm_us = (uint64_t)((tm.tm_hour * 60 + tm.tm_min) * 60 + tm.tm_sec) * 1000000;
		r->tm_ok = true;
	}
	*us = r->tm_us;
	return true;
}

/* The call's time: process start plus the thread's deltas so far. */
static void stamp(rd *r, uint64_t ns, rt_call *c)
{
	if (!r->timestamps)
		return;
	uint64_t frac = r->start_nsec + ns % NS_PER_SEC;
	uint64_t sec = r->start_sec + ns / NS_PER_SEC + frac / NS_PER_SEC, day;
	if (!local_day_us(r, sec, &day))
		return;
	c->timestamp_us = day + frac % NS_PER_SEC / 1000;
	c->flags |= RT_CALL_HAS_TIMESTAMP;
}

static bool resolve(rd *r, const head *h, rt_call *c)
{
	const uint32_t *fn = idmap_get(&r->fns, h->fn), *bt;
	if (!fn)
		return bad(r, h->off, "expected a FUNCTION record defining function id %" PRIu64 " before this CALL record", h->fn);
	if (h->res < 1 || h->res > RT_MAX_RESOURCES || !r->res[h->res])
		return bad(r, h->off, "expected a RESOURCE record defining resource id %" PRIu64 " before this CALL record", h->res);
	c->fn = *fn;
	c->res_type = r->res[h->res];
	if (!h->bt) {
		c->bt = rt_trace_intern_bt(r->t, NULL, 0); /* as the text reader does */
		return true;
	}
	if (!(bt = idmap_get(&r->bts, h->bt)))
		return bad(r, h->off, "expected a BT record defining backtrace id %" PRIu64 " before this CALL record", h->bt);
	c->bt = *bt;
	return true;
}

static bool deliver(rd *r, const stream *s)
{
	rt_call c = s->h.c;
	if (!resolve(r, &s->h, &c))
		return false;
	stamp(r, s->h.ns, &c);
	if (r->o && r->o->on_call)
		r->o->on_call(r->o->ctx, r->t, &c);
	else
		rt_trace_append_call(r->t, &c);
	r->stats.calls++;
	return true;
}

/* Every stream reads up to its first call, then the heap hands the calls
 * out in index order until an error or the end. */
static int merge(rd *r, rt_diag *err)
{
	r->heap = rt_xmalloc((r->ns ? r->ns : 1) * sizeof *r->heap);
	r->scan = r->header_size;
	for (uint32_t i = 0; i < r->ns; i++) {
		enter_chunk(r, &r->s[i], r->s[i].first);
		advance(r, &r->s[i]);
		if (r->s[i].has_head || r->s[i].failed)
			heap_push(r, i);
	}
	while (r->nheap) {
		uint32_t i = heap_pop(r);
		stream *s = &r->s[i];
		if (s->failed)
			return *err = *s->err, -1;
		if (!deliver(r, s))
			return *err = r->diag, -1;
		advance(r, s);
		if (s->has_head || s->failed)
			heap_push(r, i);
	}
	if (r->pending) /* no stream ran into it: there was none */
		return *err = *r->pending, -1;
	return 0;
}

/* --- file header and entry points --- */

static bool read_file_header(rd *r)
{
	const uint8_t *b = r->base;
	if (r->len < RT_BIN_MAGIC_LEN && (!r->len || !memcmp(b, RT_BIN_MAGIC, r->len)))
		return bad(r, r->len, "expected the %d-byte file header of an rtrace binary trace, found end of file",
			   FILE_HEADER);
	if (!rt_bin_is_binary(b, r->len))
		return bad(r, 0, "expected the magic \"RTRACE\\0\\1\" of an rtrace binary trace");
	if (b[7] != 1)
		return bad(r, 7, "expected binary format version 1, found version %u (written by a newer rtrace?)", b[7]);
	if (r->len < FILE_HEADER)
		return bad(r, r->len, "expected the %d-byte file header, found end of file (truncated trace)", FILE_HEADER);
	r->header_size = le32(b + 8);
	r->chunk_size = le32(b + 12);
	r->data_end = le64(b + 16);
	if (r->header_size < FILE_HEADER || r->header_size > MAX_HEADER)
		return bad(r, 8, "expected a header size between %d and %u, found %" PRIu32, FILE_HEADER, MAX_HEADER, r->header_size);
	if (r->chunk_size < MIN_CHUNK || r->chunk_size > MAX_CHUNK)
		return bad(r, 12, "expected a chunk size between %u and %u, found %" PRIu32, MIN_CHUNK, MAX_CHUNK, r->chunk_size);
	if (r->data_end && (r->data_end < r->header_size || (r->data_end - r->header_size) % r->chunk_size))
		return bad(r, 16, "expected data_end 0 or the end of a chunk (%" PRIu32 " + n * %" PRIu32 "), found %" PRIu64,
			   r->header_size, r->chunk_size, r->data_end);
	return true;
}

/* Header fields known from the file header; PROCESS adds the others. */
static void set_file_fields(rd *r)
{
	rt_trace_set_header(r->t, "version", "2.0");
	set_u64(r, "pid", le64(r->base + 24));
	rt_trace_set_header(r->t, "origin", "rtrace " RTRACE_VERSION);
}

static void rd_free(rd *r)
{
	for (size_t i = 0; i < r->ns; i++) {
		free(r->s[i].q);
		free(r->s[i].tail);
		free(r->s[i].err);
	}
	free(r->s);
	free(r->heap);
	free(r->pending);
	free(r->tids.slots);
	free(r->scan_tids.slots);
	free(r->fns.slots);
	free(r->bts.slots);
	free(r->ctxs.slots);
	free(r->mods.slots);
	free(r->mod_gen);
	free(r->frames);
	free(r->tmp[0]);
	free(r->tmp[1]);
	free(r->leak_ids);
	free(r->err_ids);
}

bool rt_bin_is_binary(const void *head, size_t len)
{
	return len >= RT_BIN_MAGIC_LEN - 1 && !memcmp(head, RT_BIN_MAGIC, RT_BIN_MAGIC_LEN - 1);
}

int rt_bin_read_mem(rt_trace *t, const void *buf, size_t len, const char *name,
		    const rt_read_opts *opts, rt_read_stats *stats, rt_diag *err)
{
	rt_diag local;
	rd r = {0};
	r.t = t;
	r.o = opts;
	r.file = name ? name : "<input>";
	r.base = buf;
	r.len = len;
	if (!err)
		err = &local;
	memset(err, 0, sizeof *err);
	int rc = -1;
	if (!read_file_header(&r)) {
		*err = r.diag;
	} else {
		set_file_fields(&r);
		index_chunks(&r);
		r.leak_base = rt_trace_leak_count(t);
		r.err_base = rt_trace_heap_error_count(t);
		rc = merge(&r, err);
		resolve_heapcheck(&r);
		if (r.gen)
			close_generation(&r);
	}
	r.stats.bytes = len;
	if (stats)
		*stats = r.stats;
	rd_free(&r);
	return rc;
}

/* Pipes and other unmappable inputs: everything into memory first. */
static int read_slurp(rt_trace *t, int fd, const char *name, const rt_read_opts *opts,
		      rt_read_stats *stats, rt_diag *err)
{
	size_t len = 0, cap = 1u << 16;
	uint8_t *buf = rt_xmalloc(cap);
	for (;;) {
		if (len == cap)
			buf = rt_xrealloc(buf, cap *= 2);
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rt_diag d = {name ? name : "<input>", 0, 0, ""};
			snprintf(d.msg, sizeof d.msg, "byte offset %zu: read error: %s", len, strerror(errno));
			free(buf);
			if (err)
				*err = d;
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	int rc = rt_bin_read_mem(t, buf, len, name, opts, stats, err);
	free(buf);
	return rc;
}

/* A regular file is mapped read-only rather than read in chunks: the
 * merge visits each thread's chunks in its own order and so hops across
 * the file, which with a map is pointer arithmetic; the kernel pages the
 * chunks in on demand and can drop them again (clean file pages), so the
 * resident size does not have to follow the file's. Reading instead would
 * need a chunk buffer and a pread per thread for the same access pattern.
 * The cost: a file that shrinks while it is mapped raises SIGBUS. The
 * tracer only grows its file while the program runs, so a live trace maps
 * safely at its current size, except across the program's clean exit,
 * where the tracer cuts the unused reservation past data_end off. */
int rt_bin_read_fd(rt_trace *t, int fd, const char *name,
		   const rt_read_opts *opts, rt_read_stats *stats, rt_diag *err)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= SIZE_MAX) {
		size_t len = (size_t)st.st_size;
		void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			int rc = rt_bin_read_mem(t, m, len, name, opts, stats, err);
			munmap(m, len);
			return rc;
		}
	}
	return read_slurp(t, fd, name, opts, stats, err);
}
