/* Writer for the rtrace text protocol, in the exact layout of sp-rtrace's
 * post-processor: header, context and resource registries, memory map,
 * then the calls with permanent comments interleaved by call index. */
#define _GNU_SOURCE /* qsort_r */
#include "rtrace/text.h"
#include "model/heapcheck_int.h"
#include "util/out.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

/* Header keys in the order sp-rtrace prints them; other keys follow in
 * the order they were read. */
static const char *const header_keys[] = {
	"version", "arch", "timestamp", "process", "pid",
	"filter", "backtrace depth", "origin",
};
#define NKEYS (sizeof header_keys / sizeof *header_keys)

typedef struct writer {
	const rt_trace *t;
	const rt_write_opts *o;
	rt_out *out;
	size_t next_comment; /* comments before it are printed */
	bool hide_type;      /* one resource type: calls don't name it */
} writer;

static void put_kv(rt_out *out, const char *k, const char *v)
{
	rt_out_str(out, k);
	rt_out_ch(out, '=');
	rt_out_str(out, v);
	rt_out_mem(out, ", ", 2);
}

static void write_filter(rt_out *out, unsigned bits)
{
	static const char *const tags[] = {"leaks", "compress", "resolve"};
	char buf[32] = "";
	for (unsigned i = 0; i < 3; i++) {
		if (bits & (1u << i)) {
			if (buf[0])
				strcat(buf, "|");
			strcat(buf, tags[i]);
		}
	}
	if (buf[0])
		put_kv(out, "filter", buf);
}

/* Keys of the model the text protocol does not carry: the binary trace's
 * parent pid and arguments (for Valgrind XML; an argument may hold the
 * ", " that ends a header field). */
static const char *const model_only_keys[] = {"ppid", "args"};

static bool is_known_key(const char *k)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(k, header_keys[i]) == 0)
			return true;
	for (size_t i = 0; i < sizeof model_only_keys / sizeof *model_only_keys; i++)
		if (strcmp(k, model_only_keys[i]) == 0)
			return true;
	return false;
}

static void write_header(writer *w)
{
	for (size_t i = 0; i < NKEYS; i++) {
		if (strcmp(header_keys[i], "filter") == 0) {
			write_filter(w->out, w->o->filter_bits);
			continue;
		}
		const char *v = rt_trace_header(w->t, header_keys[i]);
		if (v)
			put_kv(w->out, header_keys[i], v);
	}
	for (size_t i = 0; i < rt_trace_header_count(w->t); i++) {
		const rt_kv *kv = rt_trace_header_at(w->t, i);
		if (!is_known_key(kv->key))
			put_kv(w->out, kv->key, kv->value);
	}
	rt_out_ch(w->out, '\n');
}

static void write_registries(writer *w)
{
	rt_out *out = w->out;
	if (w->o->contexts) {
		for (size_t i = 0; i < rt_trace_context_count(w->t); i++) {
			const rt_context *c = rt_trace_context_at(w->t, i);
			rt_out_mem(out, "@ ", 2);
			rt_out_hex(out, c->id, 1);
			rt_out_mem(out, " : ", 3);
			rt_out_str(out, c->name);
			rt_out_ch(out, '\n');
		}
	}
	for (size_t i = 0; i < rt_trace_resource_count(w->t); i++) {
		const rt_resource *r = rt_trace_resource_get(w->t, (uint8_t)(i + 1));
		if (r->removed)
			continue;
		rt_out_ch(out, '<');
		/* a lone resource type is renumbered 1, as sp-rtrace does */
		rt_out_hex(out, w->hide_type ? 1 : r->mask, 1);
		rt_out_mem(out, "> : ", 4);
		rt_out_str(out, r->type);
		rt_out_mem(out, " (", 2);
		rt_out_str(out, r->desc);
		rt_out_ch(out, ')');
		if (r->flags) {
			rt_out_mem(out, " [", 2);
			rt_out_str(out, r->flags);
			rt_out_ch(out, ']');
		}
		rt_out_ch(out, '\n');
	}
	for (size_t i = 0; i < rt_trace_mmap_count(w->t); i++) {
		const rt_mmap *m = rt_trace_mmap_at(w->t, i);
		rt_out_mem(out, ": ", 2);
		rt_out_str(out, m->module);
		rt_out_mem(out, " => 0x", 6);
		rt_out_hex(out, m->from, 1);
		rt_out_mem(out, "-0x", 3);
		rt_out_hex(out, m->to, 1);
		rt_out_ch(out, '\n');
	}
	/* sp-rtrace 1.6 dropped attachments; rtrace keeps what it read */
	for (size_t i = 0; i < rt_trace_attachment_count(w->t); i++) {
		const rt_attachment *a = rt_trace_attachment_at(w->t, i);
		rt_out_mem(out, "& ", 2);
		rt_out_str(out, a->name);
		rt_out_mem(out, " : ", 3);
		rt_out_str(out, a->path);
		rt_out_ch(out, '\n');
	}
}

/* Prints the comments that were read before a call numbered `index`. */
static void write_comments_before(writer *w, uint64_t index)
{
	size_t n = rt_trace_comment_count(w->t);
	while (w->next_comment < n) {
		const rt_comment *c = rt_trace_comment_at(w->t, w->next_comment);
		if (c->after >= index)
			break;
		rt_out_str(w->out, c->text);
		rt_out_ch(w->out, '\n');
		w->next_comment++;
	}
}

static void write_timestamp(rt_out *out, uint64_t us, int digits)
{
	uint64_t sec = us / 1000000, frac = us % 1000000;
	for (int i = digits; i < 6; i++)
		frac /= 10;
	rt_out_ch(out, '[');
	rt_out_dec_pad(out, sec / 3600, 2);
	rt_out_ch(out, ':');
	rt_out_dec_pad(out, sec / 60 % 60, 2);
	rt_out_ch(out, ':');
	rt_out_dec_pad(out, sec % 60, 2);
	rt_out_ch(out, '.');
	rt_out_dec_pad(out, frac, digits);
	rt_out_mem(out, "] ", 2);
}

static void write_call(writer *w, const rt_call *c)
{
	rt_out *out = w->out;
	rt_out_u64(out, c->index);
	rt_out_mem(out, ". ", 2);
	/* "@0 " is implied, unless the name itself starts with '@' and
	 * would be read as a context mask */
	if (c->context || (rt_trace_str(w->t, c->fn)[0] == '@' &&
			   !(c->flags & RT_CALL_HAS_TIMESTAMP))) {
		rt_out_ch(out, '@');
		rt_out_hex(out, c->context, 1);
		rt_out_ch(out, ' ');
	}
	if (c->flags & RT_CALL_HAS_TIMESTAMP)
		write_timestamp(out, c->timestamp_us, rt_trace_ts_digits(w->t));
	rt_out_str(out, rt_trace_str(w->t, c->fn));
	const rt_resource *r = rt_trace_resource_get(w->t, c->res_type);
	/* a lone resource type is implied, but a name ending in '>' (C++
	 * templates) would be read as naming a type: keep it explicit */
	const char *fn = rt_trace_str(w->t, c->fn);
	size_t fnlen = strlen(fn);
	if (r && (!w->hide_type || (fnlen && fn[fnlen - 1] == '>'))) {
		rt_out_ch(out, '<');
		rt_out_str(out, r->type);
		rt_out_ch(out, '>');
	}
	if (c->kind == RT_CALL_ALLOC) {
		rt_out_ch(out, '(');
		rt_out_u64(out, c->size);
		rt_out_mem(out, ") = 0x", 6);
		rt_out_hex(out, c->res_id, 1);
		rt_out_ch(out, '\n');
	} else {
		rt_out_mem(out, "(0x", 3);
		rt_out_hex(out, c->res_id, 1);
		rt_out_mem(out, ")\n", 2);
	}
	uint32_t nargs = c->args == RT_NONE ? 0 : rt_trace_args_len(w->t, c->args);
	const rt_kv *args = nargs ? rt_trace_args_at(w->t, c->args) : NULL;
	for (uint32_t i = 0; i < nargs; i++) {
		rt_out_mem(out, "\t$", 2);
		rt_out_str(out, args[i].key);
		rt_out_mem(out, " = ", 3);
		rt_out_str(out, args[i].value);
		rt_out_ch(out, '\n');
	}
}

/* Frames, then the empty line that ends the record. */
static void write_frames(writer *w, uint32_t bt)
{
	rt_out *out = w->out;
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(w->t, bt);
	const rt_frame *f = n ? rt_trace_bt_frames(w->t, bt) : NULL;
	for (uint32_t i = 0; i < n; i++) {
		rt_out_mem(out, "\t0x", 3);
		rt_out_hex(out, f[i].addr, 1);
		if (f[i].text != RT_NONE) {
			rt_out_ch(out, ' ');
			rt_out_str(out, rt_trace_str(w->t, f[i].text));
		}
		rt_out_ch(out, '\n');
	}
	rt_out_ch(out, '\n');
}

static void write_plain(writer *w)
{
	const rt_call *calls = rt_trace_calls_const(w->t);
	size_t n = rt_trace_call_count(w->t);
	for (size_t i = 0; i < n; i++) {
		if (calls[i].kind == RT_CALL_DEAD)
			continue;
		write_comments_before(w, calls[i].index);
		write_call(w, &calls[i]);
		write_frames(w, calls[i].bt);
	}
}

typedef struct group {
	uint64_t count, size;
	size_t first; /* offset of its first call in the grouped order */
	size_t ncalls;
	uint32_t bt;
} group;

static int group_cmp(const void *a, const void *b, enum rt_sort sort)
{
	const group *x = a, *y = b;
	int r = 0;
	switch (sort) {
	case RT_SORT_SIZE_ASC: r = (x->size > y->size) - (x->size < y->size); break;
	case RT_SORT_SIZE_DESC: r = (x->size < y->size) - (x->size > y->size); break;
	case RT_SORT_COUNT_ASC: r = (x->count > y->count) - (x->count < y->count); break;
	case RT_SORT_COUNT_DESC: r = (x->count < y->count) - (x->count > y->count); break;
	}
	/* ties: the stack seen first comes first */
	return r ? r : (x->first > y->first) - (x->first < y->first);
}

static int group_qcmp(const void *a, const void *b, void *sort)
{
	return group_cmp(a, b, *(const enum rt_sort *)sort);
}

/* Groups call positions by backtrace with a counting sort: O(calls). */
static void write_compressed(writer *w)
{
	const rt_call *calls = rt_trace_calls_const(w->t);
	size_t n = rt_trace_call_count(w->t);
	uint32_t nbt = rt_trace_bt_count(w->t) + 1; /* last slot: no backtrace */
	group *g = rt_xcalloc(nbt, sizeof *g);
	for (size_t i = 0; i < n; i++) {
		if (calls[i].kind == RT_CALL_DEAD)
			continue;
		uint32_t b = calls[i].bt == RT_NONE ? nbt - 1 : calls[i].bt;
		g[b].ncalls++;
		g[b].count++;
		g[b].size += calls[i].size;
	}
	size_t off = 0, ngroups = 0;
	for (uint32_t b = 0; b < nbt; b++) {
		g[b].bt = b == nbt - 1 ? RT_NONE : b;
		g[b].first = off;
		off += g[b].ncalls;
	}
	size_t *order = rt_xmalloc((off ? off : 1) * sizeof *order);
	size_t *fill = rt_xcalloc(nbt, sizeof *fill);
	for (size_t i = 0; i < n; i++) {
		if (calls[i].kind == RT_CALL_DEAD)
			continue;
		uint32_t b = calls[i].bt == RT_NONE ? nbt - 1 : calls[i].bt;
		order[g[b].first + fill[b]++] = i;
	}
	free(fill);
	for (uint32_t b = 0; b < nbt; b++)
		if (g[b].ncalls)
			g[ngroups++] = g[b];
	/* backtrace ids follow first appearance, so ties keep that order */
	enum rt_sort sort = w->o->sort;
	qsort_r(g, ngroups, sizeof *g, group_qcmp, &sort);
	for (size_t k = 0; k < ngroups; k++) {
		/* a comment inside a group would split it when read back */
		write_comments_before(w, calls[order[g[k].first]].index);
		const size_t *idx = order + g[k].first;
		for (size_t j = 0; j < g[k].ncalls; j++) {
			/* groups gather calls from all over the array: fetch ahead */
			if (j + 8 < g[k].ncalls)
				__builtin_prefetch(&calls[idx[j + 8]]);
			write_call(w, &calls[idx[j]]);
		}
		rt_out_str(w->out, "# allocation summary: ");
		rt_out_u64(w->out, g[k].count);
		rt_out_str(w->out, " block(s) with total size ");
		rt_out_u64(w->out, g[k].size);
		rt_out_ch(w->out, '\n');
		write_frames(w, g[k].bt);
	}
	free(order);
	free(g);
}

static void write_leak_summary(writer *w)
{
	uint64_t count[RT_MAX_RESOURCES + 1] = {0}, size[RT_MAX_RESOURCES + 1] = {0};
	const rt_call *calls = rt_trace_calls_const(w->t);
	for (size_t i = 0; i < rt_trace_call_count(w->t); i++) {
		if (calls[i].kind != RT_CALL_ALLOC)
			continue;
		/* untyped calls count for the first resource type */
		uint8_t r = calls[i].res_type ? calls[i].res_type : 1;
		count[r]++;
		size[r] += calls[i].size;
	}
	for (size_t i = 0; i < rt_trace_resource_count(w->t); i++) {
		const rt_resource *r = rt_trace_resource_get(w->t, (uint8_t)(i + 1));
		if (r->removed)
			continue;
		rt_out_str(w->out, "# Resource - ");
		rt_out_str(w->out, r->type);
		rt_out_str(w->out, " (");
		rt_out_str(w->out, r->desc);
		rt_out_str(w->out, "):\n# ");
		rt_out_u64(w->out, count[i + 1]);
		rt_out_str(w->out, " block(s) leaked with total size of ");
		rt_out_u64(w->out, size[i + 1]);
		rt_out_str(w->out, " bytes\n");
	}
}

static void write_all(const rt_trace *t, const rt_write_opts *o, rt_out *out)
{
	writer w = {t, o, out, 0, rt_trace_resource_live(t) == 1};
	write_header(&w);
	write_registries(&w);
	if (o->compress)
		write_compressed(&w);
	else
		write_plain(&w);
	write_comments_before(&w, UINT64_MAX);
	rt_hc_write_text(t, out); /* leak check verdicts, heap errors */
	if (o->leak_summary)
		write_leak_summary(&w);
}

static void fill(rt_out *o, const void *model, const void *opts)
{
	write_all(model, opts, o);
}

int rt_text_write_fd(const rt_trace *m, int fd, const rt_write_opts *opts)
{
	return rt_out_write_fd(fd, fill, m, opts);
}

char *rt_text_write_mem(const rt_trace *m, const rt_write_opts *opts, size_t *len)
{
	return rt_out_write_mem(len, fill, m, opts);
}
