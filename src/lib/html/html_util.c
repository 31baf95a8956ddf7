/* The report's escaping, numbers, frame names and stacks. Source lines
 * around a frame's line are read from the file its debug info names when
 * it is readable here (the machine that built the program): each file is
 * read once per report (at most 256 files of 4 MB kept), so a thousand
 * loss records through one source file cost one read. */
#include "html/html_int.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 256
#define MAX_FILE_SIZE (4u << 20)

typedef struct hw_src {
	uint32_t path[MAX_FILES]; /* string ids of the trace they came from */
	const rt_trace *t[MAX_FILES];
	char *text[MAX_FILES];    /* NULL: not readable */
	size_t len[MAX_FILES], n;
} hw_src;

void hw_textn(rt_out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': rt_out_str(o, "&amp;"); break;
		case '<': rt_out_str(o, "&lt;"); break;
		case '>': rt_out_str(o, "&gt;"); break;
		case '"': rt_out_str(o, "&quot;"); break;
		case '\'': rt_out_str(o, "&#39;"); break;
		default: rt_out_ch(o, s[i]);
		}
	}
}

void hw_text(rt_out *o, const char *s)
{
	hw_textn(o, s, strlen(s));
}

void hw_json(rt_out *o, const char *s)
{
	rt_out_ch(o, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			rt_out_ch(o, '\\');
			rt_out_ch(o, (char)c);
		} else if (c < 0x20 || c == '<') {
			char b[8];
			snprintf(b, sizeof b, "\\u%04x", c);
			rt_out_str(o, b);
		} else {
			rt_out_ch(o, (char)c);
		}
	}
	rt_out_ch(o, '"');
}

void hw_u64(rt_out *o, uint64_t v)
{
	rt_out_u64(o, v);
}

void hw_num_td(rt_out *o, uint64_t v)
{
	rt_out_str(o, "<td class=n data-v=");
	rt_out_u64(o, v);
	rt_out_ch(o, '>');
	rt_out_u64(o, v);
	rt_out_str(o, "</td>");
}

void hw_cost_td(rt_out *o, unsigned k, uint64_t v)
{
	rt_out_str(o, "<td class=n data-k=");
	rt_out_u64(o, k);
	rt_out_str(o, " data-v=");
	rt_out_u64(o, v);
	rt_out_ch(o, '>');
	rt_out_u64(o, v);
	rt_out_str(o, "</td>");
}

const char *hw_bytes(uint64_t v, char buf[32])
{
	static const char *const units[] = {"B", "KB", "MB", "GB", "TB"};
	double d = (double)v;
	size_t u = 0;
	while (d >= 1024 && u + 1 < sizeof units / sizeof *units) {
		d /= 1024;
		u++;
	}
	if (u)
		snprintf(buf, 32, "%.*f %s", d < 10 ? 2 : 1, d, units[u]);
	else
		snprintf(buf, 32, "%" PRIu64 " B", v);
	return buf;
}

const char *hw_func(const rt_trace *t, const rt_frame *f, char *buf, size_t n)
{
	rt_frame_info info;
	if (rt_trace_frame_info(t, f, &info) && info.n && info.locs[info.n - 1].fn != RT_NONE) {
		snprintf(buf, n, "%s", rt_trace_str(t, info.locs[info.n - 1].fn));
		return buf;
	}
	const char *mod = rt_trace_module_at(t, f->addr);
	if (!mod && rt_trace_frame_info(t, f, &info) && info.module != RT_NONE)
		mod = rt_trace_str(t, info.module);
	const char *base = mod ? strrchr(mod, '/') : NULL;
	if (mod)
		snprintf(buf, n, "[%s] 0x%" PRIx64, base ? base + 1 : mod, f->addr);
	else
		snprintf(buf, n, "0x%" PRIx64, f->addr);
	return buf;
}

const char *hw_where(const rt_trace *t, const rt_frame *f, char *buf, size_t n)
{
	rt_frame_info info;
	*buf = '\0';
	if (!rt_trace_frame_info(t, f, &info))
		return buf;
	if (info.n && info.locs[0].file != RT_NONE) {
		const char *file = rt_trace_str(t, info.locs[0].file), *base = strrchr(file, '/');
		snprintf(buf, n, "%s:%u", base ? base + 1 : file, info.locs[0].line);
	} else if (info.module != RT_NONE) {
		const char *mod = rt_trace_str(t, info.module), *base = strrchr(mod, '/');
		snprintf(buf, n, "in %s", base ? base + 1 : mod);
	}
	return buf;
}

/* The text of the file, read once; NULL when unreadable. */
static const char *source(hw *w, const rt_trace *t, uint32_t path, size_t *len)
{
	if (!w->src)
		w->src = rt_xcalloc(1, sizeof *w->src);
	hw_src *s = w->src;
	for (size_t i = 0; i < s->n; i++)
		if (s->path[i] == path && s->t[i] == t) {
			*len = s->len[i];
			return s->text[i];
		}
	if (s->n == MAX_FILES)
		return NULL;
	size_t i = s->n++;
	s->path[i] = path;
	s->t[i] = t;
	s->text[i] = NULL;
	FILE *fp = fopen(rt_trace_str(t, path), "rb");
	if (!fp)
		return NULL;
	char *text = rt_xmalloc(MAX_FILE_SIZE);
	size_t n = fread(text, 1, MAX_FILE_SIZE, fp);
	fclose(fp);
	s->text[i] = text;
	s->len[i] = *len = n;
	return text;
}

void hw_free_sources(hw *w)
{
	if (!w->src)
		return;
	for (size_t i = 0; i < w->src->n; i++)
		free(w->src->text[i]);
	free(w->src);
	w->src = NULL;
}

/* Lines line-c .. line+c of the frame's file, its own marked. */
static void put_source(hw *w, const rt_trace *t, const rt_frame *f)
{
	rt_frame_info info;
	size_t len;
	if (!rt_trace_frame_info(t, f, &info) || !info.n || info.locs[0].file == RT_NONE || !info.locs[0].line)
		return;
	const char *text = source(w, t, info.locs[0].file, &len);
	if (!text)
		return;
	uint32_t want = info.locs[0].line, c = w->opt->context, line = 1;
	size_t pos = 0;
	bool open = false;
	while (pos < len && line <= want + c) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		if (line + c >= want) {
			if (!open)
				rt_out_str(w->o, "<pre class=src>");
			open = true;
			char num[16];
			snprintf(num, sizeof num, "%5u  ", line);
			rt_out_str(w->o, line == want ? "<b>" : "");
			rt_out_str(w->o, num);
			hw_textn(w->o, text + pos, end - pos);
			rt_out_str(w->o, line == want ? "</b>\n" : "\n");
		}
		pos = end + 1;
		line++;
	}
	if (open)
		rt_out_str(w->o, "</pre>");
}

void hw_stack(hw *w, const rt_trace *t, uint32_t bt, bool with_source, uint32_t max)
{
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(t, bt);
	const rt_frame *f = n ? rt_trace_bt_frames(t, bt) : NULL;
	char fn[512], at[512], line[1200];
	rt_out_str(w->o, "<pre class=stack>");
	for (uint32_t k = 0; k < n; k++) {
		if (max && k == max) {
			snprintf(line, sizeof line, "(%u more frames)\n", n - k);
			rt_out_str(w->o, line);
			break;
		}
		hw_func(t, &f[k], fn, sizeof fn);
		hw_where(t, &f[k], at, sizeof at);
		if (f[k].addr)
			snprintf(line, sizeof line, "%s 0x%" PRIX64 ": %s%s%s%s\n", k ? "by" : "at", f[k].addr, fn,
				 *at ? " (" : "", at, *at ? ")" : "");
		else
			snprintf(line, sizeof line, "%s %s%s%s%s\n", k ? "by" : "at", fn, *at ? " (" : "", at,
				 *at ? ")" : "");
		hw_text(w->o, line);
		if (with_source) {
			rt_out_str(w->o, "</pre>");
			put_source(w, t, &f[k]);
			rt_out_str(w->o, "<pre class=stack>");
		}
	}
	if (!n)
		rt_out_str(w->o, "(no stack)\n");
	rt_out_str(w->o, "</pre>");
}
