/* Valgrind XML writer: every document of a trace in protocol 4, in the
 * exact layout Valgrind 3.19 prints (m_main.c, m_errormgr.c,
 * m_debuginfo.c, the tools' pp_Error): a file read into the model and
 * written back is the same bytes. Valgrind's layout is not a plain
 * pretty-print, so a few elements carry their own rules: <stack> and
 * <suppression> sit at a fixed indentation wherever they are nested,
 * <sframe> and <logfilequalifier> are one line with spaces around their
 * children, a source-location <xauxwhat> is one line, and blank lines
 * follow (or precede) some top-level elements only. Documents of
 * protocols 1 to 3 are upgraded to 4 on the way out. Frames are written
 * from their details (rt_trace_frame_info), never from their text. */
#include "rtrace/vgxml.h"
#include "util/out.h"
#include "util/util.h"
#include "vgxml/vgdoc_int.h"
#include "vgxml/vgxml_write_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct wr {
	const rt_trace *t;
	rt_out *o;
	bool upgrade; /* the document is in protocol 1, 2 or 3 */
} wr;

/* --- escaping --- */

/* Length of the UTF-8 sequence at s (n bytes available) when it is one
 * XML 1.0 may carry, else 0. Only called for bytes >= 0x80. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = rt_utf8_len(s, n);
	if (len == 3 && s[0] == 0xef && s[1] == 0xbf && (s[2] == 0xbe || s[2] == 0xbf)) /* U+FFFE, U+FFFF */
		return 0;
	return len;
}

static void put_byte_escape(rt_out *o, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char b[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
	rt_out_mem(o, b, 4);
}

/* How many bytes at s need no change in character data (or in CDATA,
 * where & < > are plain). */
static size_t plain_run(const unsigned char *s, size_t n, bool cdata)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		if (c >= 0x80) {
			size_t l = utf8_len(s + i, n - i);
			if (!l)
				break;
			i += l;
		} else if (c >= 0x20 ? (!cdata && (c == '&' || c == '<' || c == '>')) : (c != '\t' && c != '\n')) {
			break;
		} else if (cdata && c == ']' && i + 2 < n && s[i + 1] == ']' && s[i + 2] == '>') {
			break;
		} else {
			i++;
		}
	}
	return i;
}

void rt_vgxml_escape(rt_out *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		size_t run = plain_run(p + i, n - i, false);
		rt_out_mem(o, p + i, run);
		i += run;
		if (i == n)
			break;
		unsigned c = p[i++];
		if (c == '&')
			rt_out_str(o, "&amp;");
		else if (c == '<')
			rt_out_str(o, "&lt;");
		else if (c == '>')
			rt_out_str(o, "&gt;");
		else if (c == '\r')
			rt_out_str(o, "&#13;");
		else
			put_byte_escape(o, (unsigned char)c);
	}
}

void rt_vgxml_cdata(rt_out *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	rt_out_str(o, "<![CDATA[");
	for (size_t i = 0; i < n;) {
		size_t run = plain_run(p + i, n - i, true);
		rt_out_mem(o, p + i, run);
		i += run;
		if (i == n)
			break;
		if (p[i] == ']') { /* "]]>": end the section inside it */
			rt_out_str(o, "]]]]><![CDATA[>");
			i += 3;
		} else {
			put_byte_escape(o, p[i++]);
		}
	}
	rt_out_str(o, "]]>");
}

/* --- frames --- */

size_t rt_vgxml_path_split(const char *path, size_t len)
{
	for (size_t i = len; i-- > 0;)
		if (path[i] == '/')
			return i;
	return len;
}

static void pad(rt_out *o, int indent)
{
	rt_out_reserve(o, (size_t)indent);
	memset(o->buf + o->len, ' ', (size_t)indent);
	o->len += (size_t)indent;
}

static void put_leaf_n(rt_out *o, int indent, const char *name, const char *s, size_t n)
{
	pad(o, indent);
	rt_out_ch(o, '<');
	rt_out_str(o, name);
	rt_out_ch(o, '>');
	rt_vgxml_escape(o, s, n);
	rt_out_str(o, "</");
	rt_out_str(o, name);
	rt_out_str(o, ">\n");
}

static void put_leaf(rt_out *o, int indent, const char *name, const char *s)
{
	put_leaf_n(o, indent, name, s, strlen(s));
}

static void put_tag(rt_out *o, int indent, const char *close, const char *name)
{
	pad(o, indent);
	rt_out_ch(o, '<');
	rt_out_str(o, close);
	rt_out_str(o, name);
	rt_out_str(o, ">\n");
}

static void put_ip(rt_out *o, uint64_t ip)
{
	rt_out_str(o, "      <ip>0x");
	rt_out_hex_upper(o, ip, 1);
	rt_out_str(o, "</ip>\n");
}

static void put_path(rt_out *o, const char *path, size_t n)
{
	size_t slash = rt_vgxml_path_split(path, n);
	if (slash < n) {
		put_leaf_n(o, 6, "dir", path, slash);
		put_leaf_n(o, 6, "file", path + slash + 1, n - slash - 1);
	} else {
		put_leaf_n(o, 6, "file", path, n);
	}
}

static void put_line(rt_out *o, uint32_t line)
{
	rt_out_str(o, "      <line>");
	rt_out_u64(o, line);
	rt_out_str(o, "</line>\n");
}

/* One <frame> per function of the frame's inline chain, innermost first,
 * all at the frame's address (what describe_IP prints for each). */
static void put_frame_info(wr *w, uint64_t ip, const rt_frame_info *fi)
{
	const char *obj = fi->module == RT_NONE ? NULL : rt_trace_str(w->t, fi->module);
	for (uint32_t k = 0; k < (fi->n ? fi->n : 1); k++) {
		const rt_srcloc *l = fi->n ? &fi->locs[k] : NULL;
		rt_out_str(w->o, "    <frame>\n");
		put_ip(w->o, ip);
		if (obj)
			put_leaf(w->o, 6, "obj", obj);
		if (l && l->fn != RT_NONE)
			put_leaf(w->o, 6, "fn", rt_trace_str(w->t, l->fn));
		if (l && l->file != RT_NONE) {
			const char *p = rt_trace_str(w->t, l->file);
			put_path(w->o, p, strlen(p));
		}
		if (l && l->line)
			put_line(w->o, l->line);
		rt_out_str(w->o, "    </frame>\n");
	}
}

/* A frame nothing is known of but its address. */
static void put_bare_frame(wr *w, uint64_t ip)
{
	rt_out_str(w->o, "    <frame>\n");
	put_ip(w->o, ip);
	rt_out_str(w->o, "    </frame>\n");
}

/* A <stack> is always printed at two spaces (VG_(pp_StackTrace)),
 * however deep its parent is. */
static void put_stack(wr *w, uint32_t bt)
{
	rt_out_str(w->o, "  <stack>\n");
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(w->t, bt);
	const rt_frame *f = n ? rt_trace_bt_frames(w->t, bt) : NULL;
	for (uint32_t i = 0; i < n; i++) {
		rt_frame_info fi;
		if (rt_trace_frame_info(w->t, &f[i], &fi))
			put_frame_info(w, f[i].addr, &fi);
		else
			put_bare_frame(w, f[i].addr);
	}
	rt_out_str(w->o, "  </stack>\n");
}

/* --- elements --- */

/* Elements Valgrind prints on lines of their own even when empty
 * ("<suppcounts>\n</suppcounts>"); any other empty element is
 * "<name></name>" (helgrind's <isrootthread>). */
static bool is_block_name(const char *name)
{
	static const char *const names[] = {
		"valgrindoutput", "preamble", "args", "vargv", "argv", "status", "error",
		"errorcounts", "suppcounts", "pair", "xwhat", "xauxwhat", "suppression",
		"announcethread", "clientmsg", "fatal_signal", "origin",
		"other_segment_start", "other_segment_end", "first_observed_at",
		"acquired_at", "allocation_context", "confl_wait_call",
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

enum line_style {
	LS_BLOCK,  /* children on lines of their own, indented */
	LS_SPACED, /* "<sframe> <fun>f</fun> </sframe>" */
	LS_TRAIL,  /* "<xauxwhat><text>t</text> <file>f</file> <line>1</line> </xauxwhat>" */
	LS_TIGHT,  /* "<trace><text>t</text></trace>" (drd) */
};

static enum line_style style_of(const wr *w, uint32_t node, const char *name)
{
	if (!strcmp(name, "sframe") || !strcmp(name, "logfilequalifier"))
		return LS_SPACED;
	if (!strcmp(name, "trace"))
		return LS_TIGHT;
	/* the description of a variable's declaration (m_debuginfo) */
	if (!strcmp(name, "xauxwhat") && (rt_vgxml_find(w->t, node, "file", RT_NONE) != RT_NONE ||
					   rt_vgxml_find(w->t, node, "line", RT_NONE) != RT_NONE))
		return LS_TRAIL;
	return LS_BLOCK;
}

/* memcheck prints a FishyValue error's <what> with the newline inside
 * the text and none after the closing tag. */
static bool newline_inside(const wr *w, const rt_vgxml_node *n, const char *name, const char *text)
{
	size_t len = strlen(text);
	if (!len || text[len - 1] != '\n' || strcmp(name, "what") || n->parent == RT_NONE)
		return false;
	const char *kind = rt_vgxml_child_text(w->t, n->parent, "kind");
	return kind && !strcmp(kind, "FishyValue");
}

static void put_text_of(wr *w, const rt_vgxml_node *n, const char *text)
{
	if (n->flags & RT_VGXML_RAW)
		rt_out_str(w->o, text);
	else
		rt_vgxml_escape(w->o, text, strlen(text));
}

/* <rawtext>: its CDATA on lines of its own, at the start of the line. */
static void put_cdata_elem(wr *w, int indent, const char *name, const char *text)
{
	put_tag(w->o, indent, "", name);
	rt_vgxml_cdata(w->o, text, strlen(text));
	rt_out_ch(w->o, '\n');
	put_tag(w->o, indent, "/", name);
}

static void put_node(wr *w, uint32_t id, int indent);

/* An element and its children on the current line. */
static void put_inline(wr *w, uint32_t id)
{
	const rt_vgxml_node *n = rt_vgxml_node_at(w->t, id);
	const char *name = rt_vgxml_name(w->t, id);
	enum line_style st = style_of(w, id, name);
	rt_out_ch(w->o, '<');
	rt_out_str(w->o, name);
	rt_out_ch(w->o, '>');
	if (n->text != RT_NONE)
		put_text_of(w, n, rt_trace_str(w->t, n->text));
	for (uint32_t c = n->child; c != RT_NONE; c = rt_vgxml_node_at(w->t, c)->next) {
		if (st == LS_SPACED)
			rt_out_ch(w->o, ' ');
		put_inline(w, c);
		if (st == LS_TRAIL)
			rt_out_ch(w->o, ' ');
	}
	if (st == LS_SPACED && n->child != RT_NONE)
		rt_out_ch(w->o, ' ');
	rt_out_str(w->o, "</");
	rt_out_str(w->o, name);
	rt_out_ch(w->o, '>');
}

/* A protocol 1-3 leak error's <what> with its <leakedbytes> and
 * <leakedblocks> siblings, as protocol 4's <xwhat>. */
static void put_upgraded_what(wr *w, uint32_t what, int indent)
{
	uint32_t err = rt_vgxml_node_at(w->t, what)->parent;
	put_tag(w->o, indent, "", "xwhat");
	const char *text = rt_vgxml_text(w->t, what);
	put_leaf(w->o, indent + 2, "text", text ? text : "");
	static const char *const extra[] = {"leakedbytes", "leakedblocks"};
	for (int i = 0; i < 2; i++) {
		const char *v = rt_vgxml_child_text(w->t, err, extra[i]);
		if (v)
			put_leaf(w->o, indent + 2, extra[i], v);
	}
	put_tag(w->o, indent, "/", "xwhat");
}

/* Whether a child is written differently in an upgraded document: leak
 * counts move into the <xwhat>. */
static bool upgraded_child(wr *w, uint32_t c, int indent)
{
	const char *name = rt_vgxml_name(w->t, c);
	uint32_t parent = rt_vgxml_node_at(w->t, c)->parent;
	if (!w->upgrade || strcmp(rt_vgxml_name(w->t, parent), "error"))
		return false;
	if (!strcmp(name, "leakedbytes") || !strcmp(name, "leakedblocks"))
		return true;
	if (strcmp(name, "what") || (rt_vgxml_find(w->t, parent, "leakedbytes", RT_NONE) == RT_NONE &&
				     rt_vgxml_find(w->t, parent, "leakedblocks", RT_NONE) == RT_NONE))
		return false;
	put_upgraded_what(w, c, indent);
	return true;
}

static void put_children(wr *w, const rt_vgxml_node *n, int indent)
{
	for (uint32_t c = n->child; c != RT_NONE; c = rt_vgxml_node_at(w->t, c)->next)
		if (!upgraded_child(w, c, indent))
			put_node(w, c, indent);
}

static void put_leaf_node(wr *w, const rt_vgxml_node *n, const char *name, int indent)
{
	const char *text = rt_trace_str(w->t, n->text);
	if (n->flags & RT_VGXML_CDATA) {
		put_cdata_elem(w, indent, name, text);
		return;
	}
	pad(w->o, indent);
	rt_out_ch(w->o, '<');
	rt_out_str(w->o, name);
	rt_out_ch(w->o, '>');
	put_text_of(w, n, text);
	rt_out_str(w->o, "</");
	rt_out_str(w->o, name);
	rt_out_str(w->o, newline_inside(w, n, name, text) ? ">" : ">\n");
}

static void put_node(wr *w, uint32_t id, int indent)
{
	const rt_vgxml_node *n = rt_vgxml_node_at(w->t, id);
	const char *name = rt_vgxml_name(w->t, id);
	if (!strcmp(name, "stack")) {
		put_stack(w, n->bt);
		return;
	}
	if (!strcmp(name, "suppression")) /* gen_suppression prints it at two spaces */
		indent = 2;
	if (n->child == RT_NONE && n->text != RT_NONE) {
		put_leaf_node(w, n, name, indent);
	} else if (n->child == RT_NONE && !is_block_name(name)) {
		pad(w->o, indent);
		put_inline(w, id);
		rt_out_ch(w->o, '\n');
	} else if (n->child != RT_NONE && style_of(w, id, name) != LS_BLOCK) {
		pad(w->o, indent);
		put_inline(w, id);
		rt_out_ch(w->o, '\n');
	} else {
		put_tag(w->o, indent, "", name);
		put_children(w, n, indent + 2);
		put_tag(w->o, indent, "/", name);
	}
}

/* --- documents --- */

static bool name_in(const char *name, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(name, *names))
			return true;
	return false;
}

/* Blank lines around the children of <valgrindoutput>, as m_main.c and
 * m_errormgr.c print them (the one before </valgrindoutput> comes with
 * it: valgrind -q prints no <suppcounts> but that line). */
static bool blank_before(const char *name)
{
	static const char *const names[] = {"args", "status", NULL};
	return name_in(name, names);
}

static bool blank_after(const char *name)
{
	static const char *const names[] = {
		"protocoltool", "preamble", "status", "error", "announcethread",
		"fatal_signal", "errorcounts", NULL,
	};
	return name_in(name, names);
}

static void put_top(wr *w, uint32_t c)
{
	const char *name = rt_vgxml_name(w->t, c);
	if (blank_before(name))
		rt_out_ch(w->o, '\n');
	if (w->upgrade && !strcmp(name, "protocolversion"))
		put_leaf(w->o, 0, name, "4");
	else
		put_node(w, c, 0);
	if (blank_after(name))
		rt_out_ch(w->o, '\n');
}

/* Protocols 1-3 name no tool: they were memcheck's. */
static void put_protocoltool(wr *w, uint32_t root)
{
	const char *tool = rt_vgxml_child_text(w->t, root, "tool");
	put_leaf(w->o, 0, "protocoltool", tool ? tool : "memcheck");
	rt_out_ch(w->o, '\n');
}

static bool old_protocol(const rt_trace *t, uint32_t root)
{
	const char *v = rt_vgxml_child_text(t, root, "protocolversion");
	return v && strtol(v, NULL, 10) < 4;
}

/* One document. An upgraded one gets a <protocoltool> after its version
 * and its <suppcounts> moved after everything else (protocol 4 prints
 * them last, protocols 1-3 before the leak errors). */
static void put_doc(wr *w, uint32_t root)
{
	const rt_vgxml_node *r = rt_vgxml_node_at(w->t, root);
	bool has_tool = rt_vgxml_find(w->t, root, "protocoltool", RT_NONE) != RT_NONE;
	w->upgrade = old_protocol(w->t, root);
	rt_out_str(w->o, "<?xml version=\"1.0\"?>\n\n<");
	rt_out_str(w->o, rt_vgxml_name(w->t, root));
	rt_out_str(w->o, ">\n\n");
	for (uint32_t c = r->child; c != RT_NONE; c = rt_vgxml_node_at(w->t, c)->next) {
		const char *name = rt_vgxml_name(w->t, c);
		if (w->upgrade && !strcmp(name, "suppcounts"))
			continue;
		put_top(w, c);
		if (w->upgrade && !has_tool && !strcmp(name, "protocolversion"))
			put_protocoltool(w, root);
	}
	for (uint32_t c = r->child; w->upgrade && c != RT_NONE; c = rt_vgxml_node_at(w->t, c)->next)
		if (!strcmp(rt_vgxml_name(w->t, c), "suppcounts"))
			put_top(w, c);
	rt_out_str(w->o, "\n</");
	rt_out_str(w->o, rt_vgxml_name(w->t, root));
	rt_out_str(w->o, ">\n\n");
}

/* The documents t holds, or, for a trace of rtrace's own findings, the
 * memcheck document built from them for this write only: the findings
 * are held once, as heap checking results. */
static void put_all(const rt_trace *t, const rt_vgxml_write_opts *opts, rt_out *o)
{
	rt_trace *built = rt_vgxml_is_source(t) ? NULL : rt_vgxml_build(t, opts);
	const rt_trace *d = built ? built : t;
	wr w = {d, o, false};
	for (size_t i = 0; i < rt_vgxml_doc_count(d); i++)
		put_doc(&w, rt_vgxml_doc_root(d, i));
	rt_trace_free(built);
}

static void fill(rt_out *o, const void *model, const void *opts)
{
	put_all(model, opts, o);
}

int rt_vgxml_write_fd(const rt_trace *m, int fd, const rt_vgxml_write_opts *opts)
{
	return rt_out_write_fd(fd, fill, m, opts);
}

char *rt_vgxml_write_mem(const rt_trace *m, const rt_vgxml_write_opts *opts, size_t *len)
{
	return rt_out_write_mem(len, fill, m, opts);
}
