/* Frames' text in the text protocol (text_frame.h, rtrace/text.h): read
 * into the frame's details when a trace is read, so that writers of other
 * formats see functions, files, lines and modules, never text; and
 * formatted from details again for reports that print the protocol's
 * words. sp-rtrace's resolver wrote "fn() at /dir/file.c:12" (a demangled
 * C++ name keeps its own parameter list instead of "()"), "fn() from
 * /lib/x.so" and "from /bin/app". */
#include "text/text_frame.h"
#include "rtrace/text.h"

#include <stdio.h>
#include <string.h>

/* "name()" as the resolver prints a name it appended "()" to: the name
 * itself has no '('. */
static size_t fn_name_len(const char *fn, size_t n)
{
	if (n > 2 && fn[n - 2] == '(' && fn[n - 1] == ')' && !memchr(fn, '(', n - 2))
		return n - 2;
	return n;
}

/* "path:line" (or a path without a line). */
static void parse_location(const char *s, size_t n, rt_text_frame *ft)
{
	const char *colon = NULL;
	for (size_t i = n; i-- > 0;)
		if (s[i] == ':') {
			colon = s + i;
			break;
		}
	uint64_t line = 0;
	bool digits = colon && colon + 1 < s + n;
	for (const char *d = colon ? colon + 1 : s + n; digits && d < s + n; d++) {
		digits = *d >= '0' && *d <= '9' && line < 100000000;
		line = line * 10 + (uint64_t)(*d - '0');
	}
	ft->path = s;
	ft->path_len = digits ? (size_t)(colon - s) : n;
	ft->line = digits ? (uint32_t)line : 0;
}

bool rt_text_frame_parse(const char *text, rt_text_frame *ft)
{
	memset(ft, 0, sizeof *ft);
	size_t n = text ? strlen(text) : 0;
	if (!n)
		return false;
	if (!strncmp(text, "from ", 5)) {
		ft->obj = text + 5;
		ft->obj_len = n - 5;
		return ft->obj_len > 0;
	}
	/* the first of the two: a path may hold the other */
	const char *from = strstr(text, " from "), *at = strstr(text, " at ");
	if (from && at && at < from)
		from = NULL;
	else if (from)
		at = NULL;
	const char *sep = from ? from : at;
	size_t fn_end = sep ? (size_t)(sep - text) : n;
	ft->fn = text;
	ft->fn_len = fn_name_len(text, fn_end);
	if (from) {
		ft->obj = from + 6;
		ft->obj_len = n - fn_end - 6;
	} else if (at) {
		parse_location(at + 4, n - fn_end - 4, ft);
	}
	return true;
}

void rt_text_frame_details(rt_trace *t, const rt_frame *f)
{
	rt_frame_info fi;
	rt_text_frame ft;
	if (f->text == RT_NONE || rt_trace_frame_info(t, f, &fi) ||
	    !rt_text_frame_parse(rt_trace_str(t, f->text), &ft))
		return;
	/* interning may move the string table: ft points into the text */
	uint32_t module = ft.obj ? rt_trace_intern(t, ft.obj, ft.obj_len) : RT_NONE;
	uint32_t fn = ft.fn ? rt_trace_intern(t, ft.fn, ft.fn_len) : RT_NONE;
	uint32_t file = ft.path ? rt_trace_intern(t, ft.path, ft.path_len) : RT_NONE;
	rt_srcloc l = {fn, file, ft.line, 0};
	rt_trace_set_frame_info(t, f, module, &l, fn != RT_NONE || file != RT_NONE);
}

size_t rt_text_frame_format(const rt_trace *t, const rt_frame_info *fi, char *buf, size_t n)
{
	const rt_srcloc *l = fi->n ? &fi->locs[0] : NULL;
	const char *fn = l && l->fn != RT_NONE ? rt_trace_str(t, l->fn) : NULL;
	bool own_params = fn && ((l->flags & RT_SRCLOC_DEMANGLED) || strchr(fn, '('));
	const char *sep = fn ? (own_params ? " " : "() ") : "", *pfx = "", *where = "";
	char num[16] = "";
	if (l && l->file != RT_NONE) {
		pfx = "at ";
		where = rt_trace_str(t, l->file);
		if (l->line)
			snprintf(num, sizeof num, ":%u", (unsigned)l->line);
	} else if (fi->module != RT_NONE) {
		pfx = "from ";
		where = rt_trace_str(t, fi->module);
	} else if (fn) {
		sep = own_params ? "" : "()";
	}
	int len = snprintf(buf, n, "%s%s%s%s%s", fn ? fn : "", sep, pfx, where, num);
	return len < 0 ? 0 : (size_t)len;
}
