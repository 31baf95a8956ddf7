/* From Valgrind documents to the rest of the model: memcheck's loss
 * records and heap errors become rtrace's heap checking results, other
 * errors permanent comments, and the document's run a trace header, so
 * that the text protocol and rtrace's reports show what Valgrind found.
 * The documents stay the source: this view is filled once, and the XML
 * writer writes the documents, never the view. */
#include "rtrace/heapcheck.h"
#include "rtrace/vgxml.h"
#include "util/util.h"
#include "vgxml/vgdoc_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A decimal figure as memcheck prints them ("1,024"), or 0. */
static uint64_t map_number(const char *s)
{
	uint64_t v = 0;
	for (; s && *s; s++) {
		if (*s >= '0' && *s <= '9')
			v = v * 10 + (uint64_t)(*s - '0');
		else if (*s != ',')
			break;
	}
	return v;
}

/* The number after `key` in s ("(" direct ... ), or 0. */
static uint64_t map_number_after(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;
	return p ? map_number(p + strlen(key)) : 0;
}

/* The primary description: <what>, or the <text> of <xwhat>. */
static const char *map_what(const rt_trace *t, uint32_t err)
{
	const char *w = rt_vgxml_child_text(t, err, "what");
	return w ? w : rt_vgxml_child_text(t, rt_vgxml_find(t, err, "xwhat", RT_NONE), "text");
}

/* <leakedbytes>/<leakedblocks> inside <xwhat> (protocol 4) or beside it
 * (protocols 1-3). */
static uint64_t map_leak_figure(const rt_trace *t, uint32_t err, const char *name)
{
	const char *s = rt_vgxml_child_text(t, rt_vgxml_find(t, err, "xwhat", RT_NONE), name);
	return map_number(s ? s : rt_vgxml_child_text(t, err, name));
}

static int map_leak_kind(const char *kind)
{
	static const char *const kinds[] = {"", "Leak_DefinitelyLost", "Leak_IndirectlyLost",
					    "Leak_PossiblyLost", "Leak_StillReachable"};
	for (int k = 1; kind && k <= RT_LEAK_KINDS; k++)
		if (!strcmp(kind, kinds[k]))
			return k;
	return 0;
}

/* A stack's function of its innermost frame (as rtrace names the
 * allocating or releasing function) and the stack without that frame
 * when it is Valgrind's own replacement (vgpreload_*), since rtrace's
 * stacks start at the caller of the allocator. */
static uint32_t map_stack(rt_trace *t, uint32_t stack, uint32_t *fn)
{
	const rt_vgxml_node *n = rt_vgxml_node_at(t, stack);
	*fn = RT_NONE;
	if (!n || n->bt == RT_NONE || !rt_trace_bt_len(t, n->bt))
		return n ? n->bt : RT_NONE;
	uint32_t len = rt_trace_bt_len(t, n->bt);
	const rt_frame *f = rt_trace_bt_frames(t, n->bt);
	rt_frame_info fi;
	if (!rt_trace_frame_info(t, &f[0], &fi) || !fi.n || fi.locs[0].fn == RT_NONE)
		return n->bt;
	*fn = fi.locs[0].fn;
	const char *obj = fi.module == RT_NONE ? "" : rt_trace_str(t, fi.module);
	const char *base = strrchr(obj, '/');
	if (strncmp(base ? base + 1 : obj, "vgpreload_", 10))
		return n->bt;
	/* the frames are copied: interning may move the trace's frame array */
	rt_frame *rest = rt_xcalloc(len, sizeof *rest);
	memcpy(rest, f + 1, (len - 1) * sizeof *rest);
	uint32_t bt = rt_trace_intern_bt(t, rest, len - 1);
	free(rest);
	return bt;
}

static void map_leak(rt_trace *t, uint32_t err, int kind, rt_leak_summary *s)
{
	const char *what = map_what(t, err);
	uint64_t bytes = map_leak_figure(t, err, "leakedbytes");
	uint64_t blocks = map_leak_figure(t, err, "leakedblocks");
	uint64_t indirect = map_number_after(what, "direct, ");
	rt_leak l = {0};
	l.kind = (uint8_t)kind;
	l.indirect = indirect <= bytes ? indirect : 0;
	l.size = bytes - l.indirect;
	l.blocks = blocks ? blocks : 1;
	l.bt = map_stack(t, rt_vgxml_find(t, err, "stack", RT_NONE), &l.fn);
	rt_trace_add_leak(t, &l);
	s->bytes[kind] += l.size;
	s->blocks[kind] += l.blocks;
	s->checked += l.blocks;
}

/* The stack that follows an auxwhat containing `key`, or RT_NONE. */
static uint32_t map_aux_stack(const rt_trace *t, uint32_t err, const char *key)
{
	const rt_vgxml_node *e = rt_vgxml_node_at(t, err);
	bool after = false;
	for (uint32_t c = e->child; c != RT_NONE; c = rt_vgxml_node_at(t, c)->next) {
		const char *name = rt_vgxml_name(t, c);
		const char *text = rt_vgxml_text(t, c);
		if (!strcmp(name, "xauxwhat"))
			text = rt_vgxml_child_text(t, c, "text");
		if (!strcmp(name, "auxwhat") || !strcmp(name, "xauxwhat"))
			after = text && strstr(text, key);
		else if (after && !strcmp(name, "stack"))
			return c;
	}
	return RT_NONE;
}

/* "Address 0x... is N bytes inside a block of size M free'd" */
static void map_block(const rt_trace *t, uint32_t err, rt_heap_error *h)
{
	const char *aux = rt_vgxml_child_text(t, err, "auxwhat");
	if (!aux)
		aux = rt_vgxml_child_text(t, rt_vgxml_find(t, err, "xauxwhat", RT_NONE), "text");
	const char *a = aux ? strstr(aux, "Address 0x") : NULL;
	if (!a)
		return;
	h->addr = strtoull(a + 10, NULL, 16);
	if (!strstr(aux, " inside a block of size ") && !strstr(aux, " after a block of size ") &&
	    !strstr(aux, " before a block of size "))
		return;
	uint64_t off = map_number(strstr(aux, " is ") + 4);
	h->block_addr = strstr(aux, " before a block") ? h->addr + off : h->addr - off;
	h->block_size = map_number_after(aux, "a block of size ");
	h->block = strstr(aux, "free'd") ? RT_BLOCK_FREED : RT_BLOCK_LIVE;
}

static void map_heap_error(rt_trace *t, uint32_t err, int kind)
{
	rt_heap_error h = {0};
	h.kind = (uint8_t)kind;
	h.alloc_fn = h.alloc_bt = h.free_fn = h.free_bt = RT_NONE;
	h.bt = map_stack(t, rt_vgxml_find(t, err, "stack", RT_NONE), &h.fn);
	if (h.fn == RT_NONE)
		h.fn = rt_trace_intern(t, "free", 4);
	map_block(t, err, &h);
	if (h.block == RT_BLOCK_FREED)
		h.free_bt = map_stack(t, map_aux_stack(t, err, "free'd"), &h.free_fn);
	if (h.block != RT_BLOCK_UNKNOWN)
		h.alloc_bt = map_stack(t, map_aux_stack(t, err, "alloc'd"), &h.alloc_fn);
	rt_trace_add_heap_error(t, &h);
}

/* A comment line a + b + c: a comment is one line of the text protocol,
 * so the line breaks some of Valgrind's texts end with become spaces. */
static void map_comment(rt_trace *t, const char *a, const char *b, const char *c)
{
	char *s = rt_xasprintf("%s%s%s", a, b ? b : "", c ? c : "");
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\n' || s[i] == '\r')
			s[i] = ' ';
	while (n && s[n - 1] == ' ')
		n--;
	rt_trace_add_comment(t, 0, s, n);
	free(s);
}

static void map_comment_stack(rt_trace *t, uint32_t stack)
{
	uint32_t bt = rt_vgxml_node_at(t, stack)->bt;
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(t, bt);
	for (uint32_t i = 0; i < n; i++) {
		const rt_frame *f = &rt_trace_bt_frames(t, bt)[i];
		char addr[32];
		snprintf(addr, sizeof addr, "##\t0x%" PRIx64, f->addr);
		map_comment(t, addr, f->text == RT_NONE ? NULL : " ",
			    f->text == RT_NONE ? NULL : rt_trace_str(t, f->text));
	}
}

/* Any other error: "## error KIND: WHAT", its stacks and auxiliary lines,
 * as the heap errors' comments look. */
static void map_other_error(rt_trace *t, uint32_t err, const char *kind)
{
	map_comment(t, "## error ", kind, NULL);
	const rt_vgxml_node *e = rt_vgxml_node_at(t, err);
	for (uint32_t c = e->child; c != RT_NONE; c = rt_vgxml_node_at(t, c)->next) {
		const char *name = rt_vgxml_name(t, c);
		const char *text = rt_vgxml_text(t, c);
		if (!strcmp(name, "xwhat") || !strcmp(name, "xauxwhat"))
			text = rt_vgxml_child_text(t, c, "text");
		if (!strcmp(name, "what") || !strcmp(name, "xwhat"))
			map_comment(t, "##   ", text, NULL);
		else if (!strcmp(name, "auxwhat") || !strcmp(name, "xauxwhat"))
			map_comment(t, "##   ", text, NULL);
		else if (!strcmp(name, "origin"))
			map_comment(t, "##   ", rt_vgxml_child_text(t, c, "what"), NULL);
		if (!strcmp(name, "stack"))
			map_comment_stack(t, c);
		else if (!strcmp(name, "origin") && rt_vgxml_find(t, c, "stack", RT_NONE) != RT_NONE)
			map_comment_stack(t, rt_vgxml_find(t, c, "stack", RT_NONE));
	}
}

/* A header for a trace that has none: the run the document describes. */
static void map_header(rt_trace *t, uint32_t root)
{
	if (rt_trace_header_count(t))
		return;
	uint32_t argv = rt_vgxml_find(t, rt_vgxml_find(t, root, "args", RT_NONE), "argv", RT_NONE);
	const char *exe = rt_vgxml_child_text(t, argv, "exe");
	const char *pid = rt_vgxml_child_text(t, root, "pid");
	const char *tool = rt_vgxml_child_text(t, root, "tool");
	rt_trace_set_header(t, "version", "2.0");
	if (exe)
		rt_trace_set_header(t, "process", exe);
	if (pid)
		rt_trace_set_header(t, "pid", pid);
	char *origin = rt_xasprintf("valgrind %s", tool ? tool : "");
	rt_trace_set_header(t, "origin", origin);
	free(origin);
}

static void map_doc(rt_trace *t, uint32_t root, rt_leak_summary *s, bool *leaks)
{
	map_header(t, root);
	for (uint32_t e = rt_vgxml_find(t, root, "error", RT_NONE); e != RT_NONE;
	     e = rt_vgxml_find(t, root, "error", e)) {
		const char *kind = rt_vgxml_child_text(t, e, "kind");
		int lk = map_leak_kind(kind);
		if (lk) {
			map_leak(t, e, lk, s);
			*leaks = true;
		} else if (kind && !strcmp(kind, "InvalidFree")) {
			map_heap_error(t, e, RT_ERR_INVALID_FREE);
		} else if (kind && !strcmp(kind, "MismatchedFree")) {
			map_heap_error(t, e, RT_ERR_MISMATCHED_FREE);
		} else {
			map_other_error(t, e, kind ? kind : "?");
		}
	}
}

void rt_vgxml_to_heapcheck(rt_trace *t)
{
	rt_leak_summary s = {0};
	bool leaks = false;
	s.mode = RT_LEAK_CHECK_FULL;
	if (!rt_vgxml_is_source(t) || !rt_vgxml_mark_mapped(t))
		return; /* no documents, or their view is there already */
	for (size_t i = 0; i < rt_vgxml_doc_count(t); i++)
		map_doc(t, rt_vgxml_doc_root(t, i), &s, &leaks);
	if (leaks && !rt_trace_leak_summary(t))
		rt_trace_set_leak_summary(t, &s);
}
