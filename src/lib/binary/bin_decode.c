/* Decoding the records of the binary trace format (docs/binary-format.md;
 * the layout and record kinds are format/trace_format.h's): one record at
 * a time from a thread's stream, which bin_merge.c positions. Each record
 * kind has a reader, found through a table indexed by the kind; it reads
 * the fields (varints, strings, bytes), checks them against the chunk's
 * used bytes and the file's end, and puts definitions (functions,
 * resources, stacks, contexts, modules) into the model and the id maps
 * at once. A CALL is only read ahead into the stream's head: its ids are
 * looked up (rt_bin_call_of) when the merger delivers it in index order,
 * since another thread's definition may come later in the file.
 *
 * A CALL, nearly every record, skips the table and, where its chunk has
 * room for the longest CALL, the bound checks of its fields. A
 * compressed frame's plain CALLs come decoded as model calls
 * (bin_zchunk.h); the batch path (rt_bin_take_calls) puts their ids and
 * times in where they are and hands runs of them over by pointer. Ids
 * are looked up in flat arrays indexed by the id (the tracer numbers
 * from 1 up), the maps behind them for anything else.
 *
 * Every error names the byte offset and what was expected there, and
 * ends the stream (the merger decides when to report it). Strings become
 * model strings with control bytes shown as '?', since the text protocol
 * is line based. This file calls nothing in bin_merge.c. */
#include "bin_int.h"
#include "bin_varint.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS_PER_SEC 1000000000ull
#define MAX_SEC (1ull << 40)  /* later start times are not dates */
#define MAX_ARGS RT_TF_MAX_ARGS

/* Values on disk that the model keeps as they are. */
_Static_assert((int)RT_CALL_ALLOC == RT_TF_CALL_ALLOC && (int)RT_CALL_FREE == RT_TF_CALL_FREE, "call kinds");
_Static_assert(RT_MAX_RESOURCES == RT_TF_MAX_RES, "resource ids");
_Static_assert(RT_LEAK_KINDS == RT_TF_LEAK_KINDS && RT_LEAK_HEURISTICS == RT_TF_HEURISTICS,
	       "LEAK kinds and heuristics");
_Static_assert((int)RT_LEAK_CHECK_SUMMARY == RT_TF_LEAKSUM_SUMMARY &&
	       (int)RT_LEAK_CHECK_FULL == RT_TF_LEAKSUM_FULL, "LEAKSUM modes");
_Static_assert((int)RT_ERR_INVALID_FREE == RT_TF_ERR_INVALID_FREE &&
	       (int)RT_ERR_MISMATCHED_FREE == RT_TF_ERR_MISMATCHED_FREE &&
	       (int)RT_ERR_FISHY_VALUE == RT_TF_ERR_FISHY_VALUE, "HEAPERR kinds");
_Static_assert((int)RT_ARG_SIZE == RT_TF_ARG_SIZE && (int)RT_ARG_NMEMB == RT_TF_ARG_NMEMB, "FishyValue arguments");
_Static_assert((int)RT_BLOCK_UNKNOWN == RT_TF_BLOCK_UNKNOWN && (int)RT_BLOCK_LIVE == RT_TF_BLOCK_LIVE &&
	       (int)RT_BLOCK_FREED == RT_TF_BLOCK_FREED, "HEAPERR block states");
_Static_assert((int)RT_CHECK_FULL == RT_TF_CHECK_FULL && (int)RT_CHECK_INCREASED == RT_TF_CHECK_INCREASED,
	       "CHECK modes");

/* For messages; kind 0 is no record. */
static const char *const rec_names[RT_REC_KINDS] = {
	[0] = "", [RT_REC_PROCESS] = "PROCESS", [RT_REC_MODULE] = "MODULE", [RT_REC_MAPS] = "MAPS",
	[RT_REC_RESOURCE] = "RESOURCE", [RT_REC_FUNCTION] = "FUNCTION",
	[RT_REC_CONTEXT] = "CONTEXT", [RT_REC_BT] = "BT", [RT_REC_CALL] = "CALL",
	[RT_REC_END] = "END", [RT_REC_MESSAGE] = "MESSAGE", [RT_REC_LEAK] = "LEAK",
	[RT_REC_LEAKSUM] = "LEAKSUM", [RT_REC_HEAPERR] = "HEAPERR", [RT_REC_CALLA] = "CALLA",
	[RT_REC_CHECK] = "CHECK", [RT_REC_CHECKLOSS] = "CHECKLOSS", [RT_REC_DROPPED] = "DROPPED",
};

/* --- diagnostics and strings --- */

/* Puts "byte offset N: <msg>" in r->diag; returns false for the caller. */
__attribute__((format(printf, 3, 4)))
bool rt_bin_bad(rd *r, uint64_t off, const char *fmt, ...)
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
void rt_bin_warn(rd *r, uint64_t off, const char *fmt, ...)
{
	if (!r->o || !r->o->warn)
		return;
	rt_bin_flush(r); /* the calls before it first */
	rt_diag d = {r->file, 0, 0, ""};
	int n = snprintf(d.msg, sizeof d.msg, "byte offset %" PRIu64 ": ", off);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d.msg + n, sizeof d.msg - (size_t)n, fmt, ap);
	va_end(ap);
	r->o->warn(r->o->ctx, &d);
}

rt_diag *rt_bin_diag_dup(const rt_diag *d)
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

void rt_bin_set_u64(rd *r, const char *key, uint64_t v)
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

uint32_t *rt_bin_idmap_get(const idmap *m, uint64_t key)
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

void rt_bin_idmap_put(idmap *m, uint64_t key, uint32_t val)
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
/* Makes room in f for ids up to id, unless id is far past the ids
 * defined (n of them): the flat array stays within a few times the
 * map's size. False when there is none. */
static bool flat_grow(idflat *f, size_t n, uint64_t id)
{
	if (id < f->n)
		return true;
	if (id >= 4 * (uint64_t)n + 65536)
		return false;
	size_t old = f->n, cap = old ? old : 1024;
	while (cap <= id)
		cap *= 2;
	f->v = rt_xrealloc(f->v, cap * sizeof *f->v);
	memset(f->v + old, 0, (cap - old) * sizeof *f->v);
	f->n = cap;
	return true;
}

/* Puts id's value in f too, where it has room for it. */
static void flat_put(idflat *f, size_t n, uint64_t id, uint32_t val)
{
	if (flat_grow(f, n, id))
		f->v[id] = val + 1;
}

/* id's value through the flat array, else the map; false when it has
 * none. */
static inline bool id_get(const idmap *m, const idflat *f, uint64_t id, uint32_t *v)
{
	if (id < f->n && f->v[id]) {
		*v = f->v[id] - 1;
		return true;
	}
	const uint32_t *p = rt_bin_idmap_get(m, id); /* an id put before f grew past it */
	if (p)
		*v = *p;
	return p != NULL;
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
void rt_bin_close_generation(rd *r)
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
		return rt_bin_bad(r, at, "expected the rest of the %s record starting here, found end of file "
				  "(truncated trace: the chunk at byte offset %" PRIu64 " has used bytes up to byte offset %" PRIu64 ")",
				  name, s->chunk, s->used_end);
	return rt_bin_bad(r, at, "expected the %s record starting here to end within its chunk's used bytes "
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

/* A varint that get_v's fast path does not take: near the end of the
 * chunk, 10 bytes long, or bad. */
__attribute__((noinline, cold)) static bool get_v_slow(rd *r, stream *s, uint64_t *v)
{
	int n = rt_varint_get(s->p, s->end, v);
	if (n > 0) {
		s->p += n;
		return true;
	}
	if (n == RT_VARINT_END)
		return ran_out(r, s);
	if (n == RT_VARINT_LONG)
		return rt_bin_bad(r, off_of(r, s->p), "expected a varint of at most %d bytes in the %s record",
				  RT_VARINT_MAX, rec_names[s->type]);
	return rt_bin_bad(r, off_of(r, s->p), "expected a varint below 2^64 in the %s record (its 10th byte is above 1)",
			  rec_names[s->type]);
}

/* The reader's innermost step (a CALL is 8 varints, 18 bytes on
 * average): inlined; a one-byte value (ids, kinds) at once; with 8
 * bytes left, one 8-byte load, the end found by the first byte without
 * its high bit, the 7-bit groups joined by three shift-and-mask steps
 * (no loop per byte: 27 instructions a varint before, 13 after, by
 * callgrind on churn); 9- and 10-byte values, the chunk's last bytes
 * and bad varints in get_v_slow. */
static inline __attribute__((always_inline)) bool get_v_at(rd *r, stream *s, uint64_t *v, bool room)
{
	const uint8_t *p = s->p;
	if (__builtin_expect((room || p < s->end) && p[0] < 0x80, 1)) {
		*v = p[0];
		s->p = p + 1;
		return true;
	}
	if (__builtin_expect(room || s->end - p >= 8, 1)) {
		int n = rt_bin_varint8_get(p, v);
		if (__builtin_expect(n > 0, 1)) {
			s->p = p + n;
			return true;
		}
	}
	return get_v_slow(r, s, v);
}

/* room: the caller knows that 8 bytes past every varint it reads are
 * in the chunk (call_fields' fast path), so no bound is checked. */
static inline __attribute__((always_inline)) bool get_v(rd *r, stream *s, uint64_t *v)
{
	return get_v_at(r, s, v, false);
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
	return rt_bin_bad(r, off_of(r, s->rec), "expected %s id %" PRIu64 " to be defined once, "
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
		return rt_bin_bad(r, off_of(r, s->rec), "expected start_nsec below 10^9 in the PROCESS record, found %" PRIu64, nsec);
	/* a forked child writes a file of its own: one process per trace,
	 * and calls read ahead would otherwise see another start time */
	if (r->have_process)
		return rt_bin_bad(r, off_of(r, s->rec), "expected one PROCESS record in the trace, found a second one");
	r->have_process = true;
	r->start_sec = sec;
	r->start_nsec = nsec;
	r->stamp_ok = false; /* the times kept by stamp() were from another start */
	r->timestamps = flags & RT_TF_PROC_TIMESTAMPS;
	r->tm_ok = false;
	rt_bin_set_u64(r, "pid", pid);
	rt_trace_set_header(r->t, "arch", text(r, 0, arch));
	rt_trace_set_header(r->t, "process", text(r, 0, proc));
	rt_bin_set_u64(r, "backtrace depth", depth);
	set_start_time(r, sec);
	rt_bin_set_u64(r, "ppid", ppid);
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
		rt_bin_close_generation(r);
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
		return rt_bin_bad(r, off_of(r, s->rec), "expected a resource id between 1 and %d in the RESOURCE record, found %" PRIu64,
				  RT_MAX_RESOURCES, id);
	const char *name = text(r, 0, type);
	if (r->res[id] && r->res[id] != rt_trace_find_resource(r->t, name, type.n))
		return redefined(r, s, "resource", id);
	r->res[id] = rt_trace_add_resource(r->t, 1u << (id - 1), name, text(r, 1, desc),
					   flags & RT_TF_RES_REFCOUNT ? "refcount" : NULL);
	return true;
}

static bool rec_function(rd *r, stream *s)
{
	uint64_t id;
	bstr name;
	if (!get_v(r, s, &id) || !get_s(r, s, &name))
		return false;
	uint32_t str = rt_trace_intern(r->t, text(r, 0, name), name.n);
	const uint32_t *had = rt_bin_idmap_get(&r->fns, id);
	if (had && *had != str)
		return redefined(r, s, "function", id);
	rt_bin_idmap_put(&r->fns, id, str);
	flat_put(&r->fnflat, r->fns.n, id, str);
	return true;
}

static bool rec_context(rd *r, stream *s)
{
	uint64_t id;
	bstr name;
	if (!get_v(r, s, &id) || !get_s(r, s, &name))
		return false;
	if (id > UINT32_MAX)
		return rt_bin_bad(r, off_of(r, s->rec), "expected a 32-bit context id in the CONTEXT record, found %" PRIu64, id);
	if (rt_bin_idmap_get(&r->ctxs, id))
		return true; /* the registry lists each context once */
	rt_bin_idmap_put(&r->ctxs, id, 1);
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
		return rt_bin_bad(r, off_of(r, s->rec), "expected a backtrace id above 0 in the BT record (0 means none)");
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
	const uint32_t *had = rt_bin_idmap_get(&r->bts, id);
	if (had && *had != bt)
		return redefined(r, s, "backtrace", id);
	rt_bin_idmap_put(&r->bts, id, bt);
	flat_put(&r->btflat, r->bts.n, id, bt);
	return true;
}

/* The bytes a CALL record can take, arguments aside (type, kind, nine
 * varints), and 8 more for get_v's 8-byte load. */
#define CALL_ROOM (2 + 9 * RT_VARINT_MAX + 8)

/* A call's index goes up within its thread. */
static inline __attribute__((always_inline)) bool index_ok(rd *r, stream *s, uint64_t index)
{
	if (index <= s->last_index)
		return rt_bin_bad(r, off_of(r, s->rec), "expected a call index above %" PRIu64 " (the thread's previous call), found %" PRIu64,
				  s->last_index, index);
	s->bound = index;
	return true;
}

/* A CALL record's fields. */
typedef struct cfields {
	uint64_t index, dt, fn, res, addr, size, bt, ctx;
	uint8_t kind;
} cfields;

/* The CALL's fields, read: s's head. */
static inline __attribute__((always_inline)) bool set_head(rd *r, stream *s, const cfields *f, uint64_t dropped)
{
	head *h = &s->h;
	if (f->ctx > UINT32_MAX)
		return rt_bin_bad(r, off_of(r, s->rec), "expected a 32-bit context mask in the CALL record, found %" PRIu64, f->ctx);
	h->c = (rt_call){.index = f->index, .res_id = f->addr, .size = f->size, .context = (uint32_t)f->ctx,
			 .bt = RT_NONE, .args = RT_NONE, .kind = f->kind};
	h->fn = f->fn;
	h->res = f->res;
	h->bt = f->bt;
	h->rec = s->rec;
	h->dropped = dropped;
	h->ns = s->ns += f->dt;
	s->last_index = f->index;
	s->has_head = true;
	return true;
}

/* CALL: becomes the stream's head; its ids are resolved on delivery.
 * The head is written whole at the end, not cleared first: a memset of
 * it was a tenth of the reader's time (rep stos per call). `room`: the
 * chunk holds CALL_ROOM bytes past the record's start (all but a
 * chunk's last calls), so no field checks a bound: the record cannot run
 * out of the chunk, only hold a bad varint (get_v_slow, which checks).
 * The record's offset is taken from s->rec when an error needs it. */
static inline __attribute__((always_inline)) bool call_fields_at(rd *r, stream *s, bool room)
{
	cfields f;
	uint64_t dropped = 0;
	f.size = 0;
	uint8_t kind = 0;
	if (!get_v_at(r, s, &f.index, room) || !index_ok(r, s, f.index) || !get_v_at(r, s, &f.dt, room))
		return false;
	if (room)
		kind = *s->p++;
	else if (!get_u8(r, s, &kind))
		return false;
	if (kind & RT_TF_CALL_AFTER_DROP) {
		uint64_t back;
		if (!get_v_at(r, s, &back, room))
			return false;
		if (back == 0 || back >= f.index)
			return rt_bin_bad(r, off_of(r, s->rec), "expected the distance back to a dropped release, 1 to %" PRIu64 ", found %" PRIu64,
					  f.index - 1, back);
		dropped = f.index - back;
		kind &= (uint8_t)~RT_TF_CALL_AFTER_DROP;
	}
	if (kind != RT_CALL_ALLOC && kind != RT_CALL_FREE)
		return rt_bin_bad(r, off_of(r, s->rec), "expected call kind 1 (alloc) or 2 (free) in the CALL record, found %u", kind);
	f.kind = kind;
	if (!get_v_at(r, s, &f.fn, room) || !get_v_at(r, s, &f.res, room) || !get_v_at(r, s, &f.addr, room) ||
	    (kind == RT_CALL_ALLOC && !get_v_at(r, s, &f.size, room)) || !get_v_at(r, s, &f.bt, room) ||
	    !get_v_at(r, s, &f.ctx, room))
		return false;
	return set_head(r, s, &f, dropped);
}

static bool call_fields(rd *r, stream *s)
{
	if (__builtin_expect(s->end - s->rec >= CALL_ROOM, 1))
		return call_fields_at(r, s, true);
	return call_fields_at(r, s, false);
}

/* The byte offset of s's head, read from s's current chunk. */
static uint64_t head_off(const rd *r, const stream *s)
{
	if (s->zbuf && s->h.rec >= s->zbuf && s->h.rec <= s->end)
		return s->chunk + (uint64_t)(s->h.rec - s->zbuf);
	return (uint64_t)(s->h.rec - r->base);
}

static bool rec_call(rd *r, stream *s)
{
	return call_fields(r, s);
}

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
		return rt_bin_bad(r, off_of(r, s->rec), "expected 1 to %d arguments in the CALLA record, found %" PRIu64, MAX_ARGS, n);
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
	rt_bin_warn(r, off_of(r, s->rec), "tracer message: %s", text(r, 0, m));
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
		return rt_bin_bad(r, off_of(r, s->rec), "expected leak kind 1 to %d and heuristic 0 to %d in the LEAK record, found %u and %u",
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
		return rt_bin_bad(r, off_of(r, s->rec), "expected mode 1 (summary) or 2 (full) in the LEAKSUM record, found %u", m.mode);
	if (r->have_leaksum)
		return rt_bin_bad(r, off_of(r, s->rec), "expected one LEAKSUM record in the trace, found a second one");
	r->have_leaksum = true;
	rt_trace_set_leak_summary(r->t, &m);
	return true;
}

/* The check numbered `number`, which the caller knows is there
 * (checks are sorted by number). */
static rt_leak_check *check_by_number(rt_trace *t, uint64_t number)
{
	rt_leak_check *c = rt_trace_checks(t);
	size_t lo = 0, hi = rt_trace_check_count(t);
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (c[mid].number > number)
			hi = mid;
		else
			lo = mid;
	}
	return &c[lo];
}

/* CHECK: a leak check on demand and its totals (format 1.4). */
static bool rec_check(rd *r, stream *s)
{
	rt_leak_check c = {0};
	bool ok = get_v(r, s, &c.number) && get_v(r, s, &c.index) && get_u8(r, s, &c.mode) &&
		  get_v(r, s, &c.checked) && get_v(r, s, &c.us);
	for (int k = 1; ok && k <= RT_LEAK_KINDS; k++)
		ok = get_v(r, s, &c.bytes[k]) && get_v(r, s, &c.blocks[k]);
	if (!ok)
		return false;
	if (c.mode != RT_CHECK_FULL && c.mode != RT_CHECK_INCREASED)
		return rt_bin_bad(r, off_of(r, s->rec), "expected mode 1 (full) or 2 (increased) in the CHECK record, found %u",
				  c.mode);
	/* loss records name their check by number: two checks of one number
	 * would make theirs ambiguous */
	size_t n = rt_trace_check_count(r->t);
	if (n && check_by_number(r->t, c.number)->number == c.number)
		return rt_bin_bad(r, off_of(r, s->rec), "expected a CHECK record numbered other than %" PRIu64
				  " (a check of that number was read already)", c.number);
	rt_trace_add_check(r->t, &c);
	return true;
}

/* CHECKLOSS: one loss record of a check written before it (format 1.4). */
static bool rec_checkloss(rd *r, stream *s)
{
	rt_loss_record l = {0};
	uint64_t number, ids[4];
	if (!get_v(r, s, &number) || !get_u8(r, s, &l.kind) || !get_v(r, s, &ids[2]) || !get_v(r, s, &ids[3]) ||
	    !get_v(r, s, &l.bytes) || !get_v(r, s, &l.blocks) || !get_v(r, s, &l.indirect))
		return false;
	if (l.kind < 1 || l.kind > RT_LEAK_KINDS)
		return rt_bin_bad(r, off_of(r, s->rec), "expected leak kind 1 to %d in the CHECKLOSS record, found %u",
				  RT_LEAK_KINDS, l.kind);
	l.fn = l.bt = RT_NONE;
	if (!rt_trace_add_check_loss(r->t, number, &l))
		return rt_bin_bad(r, off_of(r, s->rec), "expected a CHECK record numbered %" PRIu64 " before this CHECKLOSS record",
				  number);
	/* the check's number, not its place: checks are kept in number order,
	 * and one read later from another thread's chunk may come before it */
	ids[0] = number;
	ids[1] = check_by_number(r->t, number)->nloss - 1;
	rt_grow((void **)&r->check_ids, &r->ccheck_ids, r->ncheck_ids + 1, sizeof *r->check_ids);
	memcpy(r->check_ids[r->ncheck_ids++], ids, sizeof ids);
	return true;
}

/* HEAPERR: an invalid or mismatched release (format 1.1), a fishy
 * argument (1.3). */
static bool rec_heaperr(rd *r, stream *s)
{
	rt_heap_error e = {0};
	uint64_t id[6]; /* fn, bt, alloc fn, alloc bt, free fn, free bt */
	if (!get_u8(r, s, &e.kind) || !get_v(r, s, &e.index) || !get_v(r, s, &id[0]) ||
	    !get_v(r, s, &e.addr) || !get_v(r, s, &id[1]) || !get_u8(r, s, &e.block) ||
	    !get_v(r, s, &e.block_addr) || !get_v(r, s, &e.block_size) || !get_v(r, s, &id[2]) ||
	    !get_v(r, s, &id[3]) || !get_v(r, s, &id[4]) || !get_v(r, s, &id[5]))
		return false;
	if (e.kind == RT_ERR_FISHY_VALUE) { /* the block byte names the argument */
		e.arg = e.block;
		e.block = RT_BLOCK_UNKNOWN;
		if (e.arg < RT_ARG_SIZE || e.arg > RT_ARG_NMEMB)
			return rt_bin_bad(r, off_of(r, s->rec), "expected argument 1 or 2 in the FishyValue HEAPERR record, found %u",
					  e.arg);
	} else if (e.kind < RT_ERR_INVALID_FREE || e.kind > RT_ERR_MISMATCHED_FREE || e.block > RT_BLOCK_FREED) {
		return rt_bin_bad(r, off_of(r, s->rec), "expected error kind 1 to 3 and block state 0 to 2 in the HEAPERR record, found %u and %u",
				  e.kind, e.block);
	}
	e.fn = e.bt = e.alloc_fn = e.alloc_bt = e.free_fn = e.free_bt = RT_NONE;
	rt_trace_add_heap_error(r->t, &e);
	rt_grow((void **)&r->err_ids, &r->cerr_ids, r->nerr_ids + 1, sizeof *r->err_ids);
	memcpy(r->err_ids[r->nerr_ids++], id, sizeof id);
	return true;
}

/* DROPPED: allocations (with their releases) the lifetime filter left
 * out, per stack (format 1.5). The thread defined its ids before. */
static bool rec_dropped(rd *r, stream *s)
{
	uint64_t fn, res, bt;
	rt_dropped d = {0};
	uint64_t off = off_of(r, s->rec);
	if (!get_v(r, s, &fn) || !get_v(r, s, &res) || !get_v(r, s, &bt) || !get_v(r, s, &d.index) || !get_v(r, s, &d.count) ||
	    !get_v(r, s, &d.bytes) || !get_v(r, s, &d.temporary))
		return false;
	const uint32_t *f = rt_bin_idmap_get(&r->fns, fn), *b = bt ? rt_bin_idmap_get(&r->bts, bt) : NULL;
	if (!f)
		return rt_bin_bad(r, off, "expected a FUNCTION record defining function id %" PRIu64 " before this DROPPED record", fn);
	if (res < 1 || res > RT_MAX_RESOURCES || !r->res[res])
		return rt_bin_bad(r, off, "expected a RESOURCE record defining resource id %" PRIu64 " before this DROPPED record", res);
	if (bt && !b)
		return rt_bin_bad(r, off, "expected a BT record defining backtrace id %" PRIu64 " before this DROPPED record", bt);
	if (d.temporary > d.count)
		return rt_bin_bad(r, off, "expected at most %" PRIu64 " temporary calls in the DROPPED record, found %" PRIu64,
				  d.count, d.temporary);
	d.fn = *f;
	d.bt = b ? *b : rt_trace_intern_bt(r->t, NULL, 0);
	d.res_type = r->res[res];
	rt_trace_add_dropped(r->t, &d);
	return true;
}

/* Ids in heap checking records name definitions any thread may have
 * written: they are looked up once the merge read everything. Unknown
 * ones (a trace cut short) stay RT_NONE. */
static uint32_t id_or_none(const idmap *m, uint64_t id)
{
	const uint32_t *v = id ? rt_bin_idmap_get(m, id) : NULL;
	return v ? *v : RT_NONE;
}

void rt_bin_resolve_heapcheck(rd *r)
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
	for (size_t i = 0; i < r->ncheck_ids; i++) {
		rt_loss_record *l = &check_by_number(r->t, r->check_ids[i][0])->loss[r->check_ids[i][1]];
		l->fn = id_or_none(&r->fns, r->check_ids[i][2]);
		l->bt = id_or_none(&r->bts, r->check_ids[i][3]);
	}
	free(r->check_ids);
	r->check_ids = NULL;
	r->ncheck_ids = r->ccheck_ids = 0;
}

typedef bool (*rec_fn)(rd *r, stream *s);

/* Indexed by the kind byte; kind 0 is no record. */
static const rec_fn handlers[] = {
	[RT_REC_PROCESS] = rec_process,
	[RT_REC_MODULE] = rec_module,
	[RT_REC_MAPS] = rec_maps,
	[RT_REC_RESOURCE] = rec_resource,
	[RT_REC_FUNCTION] = rec_function,
	[RT_REC_CONTEXT] = rec_context,
	[RT_REC_BT] = rec_bt,
	[RT_REC_CALL] = rec_call,
	[RT_REC_END] = rec_end,
	[RT_REC_MESSAGE] = rec_message,
	[RT_REC_LEAK] = rec_leak,
	[RT_REC_LEAKSUM] = rec_leaksum,
	[RT_REC_HEAPERR] = rec_heaperr,
	[RT_REC_CALLA] = rec_calla,
	[RT_REC_CHECK] = rec_check,
	[RT_REC_CHECKLOSS] = rec_checkloss,
	[RT_REC_DROPPED] = rec_dropped,
};
_Static_assert(sizeof handlers / sizeof *handlers == RT_REC_KINDS,
	       "a reader for every record kind of format/trace_format.h");

/* Past the frame's call s->zc.v[s->zci], whose row starts at s->p. */
static inline void zskip(stream *s)
{
	const uint32_t *at = s->zc.at[s->zci++];
	s->p += at[1] - at[0];
	s->znext = s->zci < s->zc.n ? s->zbuf + RT_TF_CHUNK_HEADER + s->zc.at[s->zci][0] : NULL;
}

bool rt_bin_take_call(rd *r, stream *s)
{
	const rt_call *c = &s->zc.v[s->zci];
	s->rec = s->p;
	s->type = RT_REC_CALL;
	r->stats.lines++;
	zskip(s);
	if (!index_ok(r, s, c->index))
		return false;
	head *h = &s->h;
	h->c = (rt_call){.index = c->index, .res_id = c->res_id, .size = c->size, .context = c->context,
			 .bt = RT_NONE, .args = RT_NONE, .kind = c->kind};
	h->fn = c->fn;
	h->res = c->res_type;
	h->bt = c->bt;
	h->rec = s->rec;
	h->dropped = 0;
	h->ns = s->ns += c->timestamp_us; /* the raw call's delta */
	s->last_index = c->index;
	s->has_head = true;
	return true;
}

bool rt_bin_zhead(rd *r, stream *s)
{
	s->rec = s->p;
	s->type = RT_REC_CALL;
	uint64_t index = s->zc.v[s->zci].index;
	if (!index_ok(r, s, index)) {
		r->stats.lines++; /* as rt_bin_take_call counts it */
		return false;
	}
	s->h.c.index = index;
	s->has_head = s->hz = true;
	return true;
}

bool rt_bin_read_record(rd *r, stream *s)
{
	s->rec = s->p;
	s->type = 0;
	uint8_t type = *s->p++;
	if (type == 0 || type >= RT_REC_KINDS)
		return rt_bin_bad(r, off_of(r, s->rec), "expected a record type between 1 and %d, found %u",
				  RT_REC_KINDS - 1, type);
	s->type = type;
	r->stats.lines++;
	if (type == RT_REC_CALL) /* nearly every record: inlined, not through the table */
		return call_fields(r, s);
	return handlers[type](r, s);
}

/* --- calls delivered --- */

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

/* The local time of day, in microseconds, of ns after the process start;
 * false when it is no date. */
static bool time_of_day_us(rd *r, uint64_t ns, uint64_t *us)
{
	/* one division by 10^9 a call; a crafted ns near 2^64 the long way */
	uint64_t at, sec, sub, day;
	if (!__builtin_add_overflow(r->start_nsec, ns, &at)) {
		sec = r->start_sec + at / NS_PER_SEC;
		sub = at % NS_PER_SEC;
	} else {
		uint64_t frac = r->start_nsec + ns % NS_PER_SEC;
		sec = r->start_sec + ns / NS_PER_SEC + frac / NS_PER_SEC;
		sub = frac % NS_PER_SEC;
	}
	if (!local_day_us(r, sec, &day))
		return false;
	*us = day + sub / 1000;
	return true;
}

/* The call's time: process start plus the thread's deltas so far, into
 * *us; its flags (RT_CALL_HAS_TIMESTAMP, or 0 when the trace has no
 * times or this one is no date). The tracer's clock is
 * CLOCK_MONOTONIC_COARSE (a 4 ms tick): most calls have the time of the
 * call before them, which is kept (the divisions were a quarter of
 * rt_bin_call_of's time). */
static uint8_t stamp_of(rd *r, uint64_t ns, uint64_t *us)
{
	*us = 0;
	if (!r->timestamps)
		return 0;
	if (!r->stamp_ok || ns != r->stamp_ns) {
		uint64_t day;
		if (!time_of_day_us(r, ns, &day))
			return 0;
		r->stamp_ok = true;
		r->stamp_ns = ns;
		r->stamp_us = day;
	}
	*us = r->stamp_us;
	return RT_CALL_HAS_TIMESTAMP;
}

static void stamp(rd *r, uint64_t ns, rt_call *c)
{
	uint64_t us;
	uint8_t f = stamp_of(r, ns, &us);
	if (f) {
		c->timestamp_us = us;
		c->flags |= f;
	}
}

/* The model's backtrace of stack id bt (0: the empty stack, interned
 * when first needed, as the text reader does); false when none. */
static inline bool bt_of(rd *r, uint64_t bt, uint32_t *v)
{
	if (id_get(&r->bts, &r->btflat, bt, v))
		return true;
	if (bt)
		return false;
	*v = rt_trace_intern_bt(r->t, NULL, 0);
	flat_put(&r->btflat, r->bts.n, 0, *v);
	return true;
}

/* The head's function, resource and backtrace ids in model terms. */
static bool resolve(rd *r, const stream *s, rt_call *c)
{
	const head *h = &s->h;
	uint32_t fn, bt;
	if (!id_get(&r->fns, &r->fnflat, h->fn, &fn))
		return rt_bin_bad(r, head_off(r, s), "expected a FUNCTION record defining function id %" PRIu64 " before this CALL record", h->fn);
	if (h->res < 1 || h->res > RT_MAX_RESOURCES || !r->res[h->res])
		return rt_bin_bad(r, head_off(r, s), "expected a RESOURCE record defining resource id %" PRIu64 " before this CALL record", h->res);
	c->fn = fn;
	c->res_type = r->res[h->res];
	if (!bt_of(r, h->bt, &bt))
		return rt_bin_bad(r, head_off(r, s), "expected a BT record defining backtrace id %" PRIu64 " before this CALL record", h->bt);
	c->bt = bt;
	return true;
}

void rt_bin_flush(rd *r)
{
	size_t n = r->nbatch;
	r->nbatch = 0;
	if (n)
		r->o->on_calls(r->o->ctx, r->t, r->batch, n);
}

/* A raw frame call's function and stack ids that the flat arrays do not
 * hold (ids far apart, the empty stack before it is interned), as
 * values + 1, the function's in the low half; 0 when one is not
 * defined. */
static __attribute__((noinline)) uint64_t slow_ids(rd *r, uint32_t f, uint32_t b)
{
	uint32_t fn, bt;
	if (!id_get(&r->fns, &r->fnflat, f, &fn) || !bt_of(r, b, &bt))
		return 0;
	return (uint64_t)(fn + 1) | (uint64_t)(bt + 1) << 32;
}

/* The batch path of a stream's run (bin_merge.c): its head and the plain
 * CALLs of its frame that follow, made model calls where the decoder
 * (a worker) wrote them (bin_zchunk.h: their ids and times put in) and
 * handed to on_calls by pointer: no head in between, no copy into
 * r->batch (churn: 99 instructions a call in the loop that copied them,
 * 20 in this one). It stops before a call at or past limit (another
 * stream's turn; the head is the merge's choice), before any other
 * record, and before a call those would fail on (index, an id not
 * defined), which it leaves as it is: they take the record at a time
 * path, which says what is wrong. Returns the calls handed over. */
/* The ids and times of the raw calls v[0..n) put in; returns how many,
 * stopping before one with an id not defined. *ns: the thread's time.
 * wide: an id may be past the flat arrays (else every one is within). */
static inline __attribute__((always_inline)) size_t fix_calls_at(rd *r, rt_call *v, size_t n, uint64_t *ns,
								  bool wide)
{
	const uint32_t *fnv = r->fnflat.v, *btv = r->btflat.v;
	size_t nfn = r->fnflat.n, nbt = r->btflat.n, k;
	uint64_t t = *ns, tns = t + v[0].timestamp_us, tus;
	uint8_t res[RT_MAX_RESOURCES + 1], tfl = stamp_of(r, tns, &tus);
	/* in locals, not through r: the stores into the calls may alias it
	 * for the compiler */
	memcpy(res, r->res, sizeof res);
	for (k = 0; k < n; k++) {
		rt_call *c = &v[k];
		uint32_t f = c->fn, b = c->bt, fn = 0, bt = 0;
		uint8_t rt = res[c->res_type];
		if (!rt)
			break;
		if (!((!wide || f < nfn) && (fn = fnv[f])) || !((!wide || b < nbt) && (bt = btv[b]))) {
			uint64_t both = slow_ids(r, f, b);
			if (!both)
				break;
			fn = (uint32_t)both, bt = (uint32_t)(both >> 32);
			fnv = r->fnflat.v, btv = r->btflat.v, nfn = r->fnflat.n, nbt = r->btflat.n;
		}
		t += c->timestamp_us;
		if (t != tns) { /* stamp's common case: the same time */
			tns = t;
			tfl = stamp_of(r, t, &tus);
		}
		c->fn = fn - 1;
		c->bt = bt - 1;
		c->res_type = rt;
		c->timestamp_us = tus;
		c->flags = tfl;
	}
	*ns = t;
	return k;
}

/* fix_calls_at, without a bound check on the flat arrays where the
 * frame's ids are all within them (the frame says how far they go). */
static size_t fix_calls(rd *r, const rt_bin_zcalls *z, rt_call *v, size_t n, uint64_t *ns)
{
	if (flat_grow(&r->fnflat, r->fns.n, z->fn_or) && flat_grow(&r->btflat, r->bts.n, z->bt_or))
		return fix_calls_at(r, v, n, ns, false);
	return fix_calls_at(r, v, n, ns, true);
}

/* The first of v[from..to) whose index is limit or more (they go up). */
static size_t index_below(const rt_call *v, size_t from, size_t to, uint64_t limit)
{
	while (from < to) {
		size_t mid = from + (to - from) / 2;
		if (v[mid].index < limit)
			from = mid + 1;
		else
			to = mid;
	}
	return from;
}

size_t rt_bin_take_calls(rd *r, stream *s, uint64_t limit)
{
	const uint8_t *rows = s->zbuf + RT_TF_CHUNK_HEADER;
	rt_call *v = s->zc.v;
	const uint32_t(*at)[2] = s->zc.at;
	size_t i = s->zci, i0 = i, n = s->zc.n;
	uint64_t last = s->last_index;
	s->hz = false;
	while (s->zc.runs[s->zrun] <= i)
		s->zrun++;
	size_t end = s->zc.runs[s->zrun]; /* the run ends before a row */
	if (s->zc.sorted) { /* the head's index is checked: the rest go up from it */
		i = end;
		if (v[end - 1].index >= limit)
			i = index_below(v, i0 + 1, end, limit);
	} else {
		if (v[i].index >= limit && v[i].index < UINT64_MAX) /* the head goes: the merge chose it */
			limit = v[i].index + 1;
		for (; i < end && v[i].index > last && v[i].index < limit; i++)
			last = v[i].index;
	}
	size_t k = fix_calls(r, &s->zc, v + i0, i - i0, &s->ns);
	if (!k)
		return 0;
	i = i0 + k;
	last = v[i - 1].index;
	s->rec = rows + at[i - 1][0];
	s->p = rows + at[i - 1][1];
	s->zci = i;
	s->znext = i < n ? rows + at[i][0] : NULL;
	s->last_index = s->bound = last;
	s->has_head = false;
	r->delivered = last;
	r->stats.lines += k;
	r->stats.calls += k;
	for (size_t j = i; j-- > i0;) /* the last call with a time */
		if (v[j].flags & RT_CALL_HAS_TIMESTAMP) {
			rt_trace_saw_call(r->t, &v[j]);
			break;
		}
	if (k >= RT_BIN_SLICE) {
		rt_bin_flush(r); /* the calls before them first */
		r->o->on_calls(r->o->ctx, r->t, v + i0, k);
		return k;
	}
	/* a short run (threads that interleave call by call): into the
	 * batch, so that on_calls still gets them by hundreds */
	for (const rt_call *c = v + i0, *e = v + i; c < e;) {
		size_t m = RT_BIN_BATCH - r->nbatch;
		m = m < (size_t)(e - c) ? m : (size_t)(e - c);
		memcpy(r->batch + r->nbatch, c, m * sizeof *c);
		c += m;
		if ((r->nbatch += m) == RT_BIN_BATCH)
			rt_bin_flush(r);
	}
	return k;
}

bool rt_bin_call_of(rd *r, const stream *s, rt_call *c)
{
	*c = s->h.c;
	if (!resolve(r, s, c))
		return false;
	if (s->h.dropped && r->delivered < s->h.dropped)
		c->flags |= RT_CALL_AFTER_DROP;
	stamp(r, s->h.ns, c);
	return true;
}
