/* heaptrack's interpreted data format (docs/heaptrack-format.md): what
 * heaptrack_interpret writes and heaptrack_print / heaptrack_gui read.
 * The file must define each record before a later one names it (an
 * allocation kind before its '+'), but the allocation records come first
 * in time and the frames they name are only resolved after the pass. So
 * the export streams in two parts:
 *  - during the pass, each block event of the profile (rt_hp listener)
 *    becomes a '+' or '-' line naming an allocation kind, a (size, site)
 *    pair numbered in order of first use as heaptrack numbers them (its
 *    analyzer counts a release as temporary when the last allocation had
 *    the same kind, so the numbering keeps rt_hp's temporary count), with
 *    'c' time lines; the lines go to a temporary file;
 *  - after the pass and the resolution of the sites, the header: strings,
 *    one 'i' per distinct frame address (its module, function, file and
 *    line, then its inline chain outward), the trace tree ('t' nodes
 *    from the outermost frame in, shared prefixes shared), one 'a' per
 *    allocation kind; then the temporary file is copied after it.
 * Memory follows the allocation kinds, frames and tree nodes, not the
 * number of calls. */
#include "rtrace/heapprof.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* Open addressing from a 64-bit key to an index; keys are stored + 1 so
 * that 0 is a free slot. */
typedef struct idmap {
	uint64_t *keys;
	uint32_t *vals;
	size_t nslots, n;
} idmap;

struct rt_hp_heaptrack {
	FILE *body;
	idmap kinds; /* a hash of (size, site) -> kind: see kind_of */
	uint64_t *ksize;
	uint32_t *ksite;
	size_t nk, ck;
	uint64_t last_ms; /* the last 'c' written, + 1 (0: none) */
	int err;
};

typedef struct writer {
	gzFile gz;
	const rt_trace *t;
	rt_strtab strs;
	rt_arena arena;
	idmap ips, nodes;
	uint32_t nips, nnodes;
	int err;
} writer;

static void idmap_init(idmap *m)
{
	m->nslots = 256;
	m->n = 0;
	m->keys = rt_xcalloc(m->nslots, sizeof *m->keys);
	m->vals = rt_xmalloc(m->nslots * sizeof *m->vals);
}

static void idmap_free(idmap *m)
{
	free(m->keys);
	free(m->vals);
}

static size_t idmap_slot(const idmap *m, uint64_t key)
{
	size_t i = rt_mix64(key) & (m->nslots - 1);
	while (m->keys[i] && m->keys[i] != key + 1)
		i = (i + 1) & (m->nslots - 1);
	return i;
}

static void idmap_put(idmap *m, uint64_t key, uint32_t val);

static void idmap_grow(idmap *m)
{
	idmap old = *m;
	m->nslots *= 2;
	m->n = 0;
	m->keys = rt_xcalloc(m->nslots, sizeof *m->keys);
	m->vals = rt_xmalloc(m->nslots * sizeof *m->vals);
	for (size_t i = 0; i < old.nslots; i++)
		if (old.keys[i])
			idmap_put(m, old.keys[i] - 1, old.vals[i]);
	idmap_free(&old);
}

static void idmap_put(idmap *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 10 > m->nslots * 7)
		idmap_grow(m);
	size_t i = idmap_slot(m, key);
	if (!m->keys[i])
		m->n++;
	m->keys[i] = key + 1;
	m->vals[i] = val;
}

/* The value of key, or UINT32_MAX. */
static uint32_t idmap_get(const idmap *m, uint64_t key)
{
	size_t i = idmap_slot(m, key);
	return m->keys[i] ? m->vals[i] : UINT32_MAX;
}

rt_hp_heaptrack *rt_hp_heaptrack_new(FILE *body)
{
	rt_hp_heaptrack *x = rt_xcalloc(1, sizeof *x);
	x->body = body;
	idmap_init(&x->kinds);
	return x;
}

void rt_hp_heaptrack_free(rt_hp_heaptrack *x)
{
	if (!x)
		return;
	idmap_free(&x->kinds);
	free(x->ksize);
	free(x->ksite);
	free(x);
}

/* The allocation kind of (size, site), numbered in order of first use.
 * The map's key is a hash; equal hashes are told apart by probing on. */
static uint32_t kind_of(rt_hp_heaptrack *x, uint64_t size, uint32_t site)
{
	uint64_t key = (rt_mix64(size) ^ site) >> 1;
	for (;; key = rt_mix64(key + 1) >> 1) {
		uint32_t k = idmap_get(&x->kinds, key);
		if (k == UINT32_MAX)
			break;
		if (x->ksize[k] == size && x->ksite[k] == site)
			return k;
	}
	if (x->nk == x->ck) {
		size_t cap = x->ck;
		rt_grow((void **)&x->ksize, &cap, x->nk + 1, sizeof *x->ksize);
		rt_grow((void **)&x->ksite, &x->ck, x->nk + 1, sizeof *x->ksite);
	}
	x->ksize[x->nk] = size;
	x->ksite[x->nk] = site;
	idmap_put(&x->kinds, key, (uint32_t)x->nk);
	return (uint32_t)x->nk++;
}

void rt_hp_heaptrack_event(void *ctx, const rt_hp_event *e)
{
	rt_hp_heaptrack *x = ctx;
	uint64_t ms = e->time_us / 1000;
	if (ms + 1 != x->last_ms && e->time_us) {
		fprintf(x->body, "c %" PRIx64 "\n", ms);
		x->last_ms = ms + 1;
	}
	uint32_t k = kind_of(x, e->size, e->site);
	if (fprintf(x->body, "%c %" PRIx32 "\n", e->alloc ? '+' : '-', k) < 0 && !x->err)
		x->err = errno ? -errno : -EIO;
}

static void put(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(writer *w, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof buf) /* records are short: only texts are long */
		n = (int)sizeof buf - 1;
	if (n > 0 && gzwrite(w->gz, buf, (unsigned)n) != n && !w->err)
		w->err = -EIO;
}

/* Text of any length, then the line's end. */
static void put_text(writer *w, const char *s, size_t len)
{
	if (len && gzwrite(w->gz, s, (unsigned)len) != (int)len && !w->err)
		w->err = -EIO;
	put(w, "\n");
}

/* heaptrack's string index of s (1 on; 0: none), written when new as a
 * sized string ("s LEN TEXT", file format 3). Line ends would end the
 * record: such strings are cut there. */
static uint32_t str_index(writer *w, const char *s)
{
	if (!s || !*s)
		return 0;
	size_t len = strcspn(s, "\r\n");
	size_t before = w->strs.n;
	uint32_t id = rt_strtab_intern(&w->strs, s, len);
	if (w->strs.n != before) {
		put(w, "s %zx ", len);
		put_text(w, s, len);
	}
	return id + 1;
}

static uint32_t rt_str_index(writer *w, uint32_t id)
{
	return id == RT_NONE ? 0 : str_index(w, rt_trace_str(w->t, id));
}

/* The 'i' record of a frame: "i ADDR MODULE [FUNC [FILE LINE {FUNC FILE
 * LINE}]]", the inline chain from the innermost function outward. */
static void put_ip(writer *w, const rt_frame *f)
{
	rt_frame_info info;
	bool known = rt_trace_frame_info(w->t, f, &info) && info.n;
	uint32_t mod = known && info.module != RT_NONE ? rt_str_index(w, info.module)
						       : str_index(w, rt_trace_module_at(w->t, f->addr));
	uint32_t fn[8], file[8];
	uint32_t n = known ? (info.n < 8 ? info.n : 8) : 0;
	for (uint32_t k = 0; k < n; k++) {
		fn[k] = rt_str_index(w, info.locs[k].fn);
		file[k] = rt_str_index(w, info.locs[k].file);
	}
	put(w, "i %" PRIx64 " %" PRIx32, f->addr, mod);
	if (n && (fn[0] || file[0])) {
		put(w, " %" PRIx32, fn[0]);
		if (file[0]) {
			put(w, " %" PRIx32 " %" PRIx32, file[0], info.locs[0].line);
			for (uint32_t k = 1; k < n; k++)
				put(w, " %" PRIx32 " %" PRIx32 " %" PRIx32, fn[k], file[k], info.locs[k].line);
		}
	}
	put(w, "\n");
}

static uint32_t ip_index(writer *w, const rt_frame *f)
{
	uint32_t i = idmap_get(&w->ips, f->addr);
	if (i != UINT32_MAX)
		return i;
	put_ip(w, f);
	idmap_put(&w->ips, f->addr, ++w->nips);
	return w->nips;
}

/* The trace node of a backtrace: its frames from the outermost in, each
 * a 't IP PARENT' node under the previous one (0: the root). */
static uint32_t trace_index(writer *w, uint32_t bt)
{
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(w->t, bt);
	const rt_frame *f = n ? rt_trace_bt_frames(w->t, bt) : NULL;
	uint32_t node = 0;
	for (uint32_t k = n; k-- > 0;) {
		uint32_t ip = ip_index(w, &f[k]);
		uint64_t key = (uint64_t)node << 32 | ip;
		uint32_t child = idmap_get(&w->nodes, key);
		if (child == UINT32_MAX) {
			put(w, "t %" PRIx32 " %" PRIx32 "\n", ip, node);
			child = ++w->nnodes;
			idmap_put(&w->nodes, key, child);
		}
		node = child;
	}
	return node;
}

static void copy_body(writer *w, FILE *body)
{
	char buf[65536];
	size_t n;
	if (fflush(body) || fseek(body, 0, SEEK_SET)) {
		w->err = errno ? -errno : -EIO;
		return;
	}
	while (!w->err && (n = fread(buf, 1, sizeof buf, body)) > 0)
		if (gzwrite(w->gz, buf, (unsigned)n) != (int)n)
			w->err = -EIO;
	if (ferror(body) && !w->err)
		w->err = -EIO;
}

static void write_all(writer *w, rt_hp_heaptrack *x, const rt_hp *h, const char *exe)
{
	put(w, "v 10400 3\n");
	if (exe && *exe) {
		put(w, "X ");
		put_text(w, exe, strcspn(exe, "\r\n"));
	}
	size_t ns = rt_hp_site_count(h);
	uint32_t *trace = rt_xmalloc((ns ? ns : 1) * sizeof *trace);
	for (size_t i = 0; i < ns; i++)
		trace[i] = trace_index(w, rt_hp_site_at(h, i)->bt);
	for (size_t k = 0; k < x->nk; k++)
		put(w, "a %" PRIx64 " %" PRIx32 "\n", x->ksize[k], trace[x->ksite[k]]);
	free(trace);
	copy_body(w, x->body);
	const rt_hp_summary *s = rt_hp_get_summary(h);
	uint64_t end_ms = (s->last_us - s->first_us) / 1000;
	if (s->timed && end_ms + 1 != x->last_ms) /* the runtime: the last call's time */
		put(w, "c %" PRIx64 "\n", end_ms);
}

int rt_hp_heaptrack_write(rt_hp_heaptrack *x, const rt_hp *h, const rt_trace *t, const char *exe, int fd,
			  bool gzip)
{
	writer w = {0};
	w.t = t;
	w.err = x->err;
	w.gz = gzdopen(fd, gzip ? "wb6" : "wbT");
	if (!w.gz) {
		close(fd);
		return -ENOMEM;
	}
	rt_arena_init(&w.arena);
	rt_strtab_init(&w.strs, &w.arena);
	idmap_init(&w.ips);
	idmap_init(&w.nodes);
	write_all(&w, x, h, exe);
	if (gzclose(w.gz) != Z_OK && !w.err)
		w.err = -EIO;
	idmap_free(&w.ips);
	idmap_free(&w.nodes);
	rt_strtab_free(&w.strs);
	rt_arena_free(&w.arena);
	return w.err;
}
