/* What the Valgrind XML reader does with the bytes before expat sees them:
 * knowing the element names Valgrind writes, reading a document's head
 * (its protocol version, and the protocol 1-3 spec's unclosed
 * `<protocolversion>N<protocolversion>`), and repairing the text of
 * protocol 1-3 documents, which escaped only <fn>: a bare '&' or '<' in
 * another element's text makes them malformed XML. */
#define _GNU_SOURCE /* memmem */
#include "rtrace/vgxml.h"
#include "vgxml/vgxml_read_int.h"

#include <string.h>

/* ---- element names ---- */

#define C (VGXML_NAME_KNOWN | VGXML_NAME_CONTAINER)
#define L VGXML_NAME_KNOWN

/* Every element of protocols 1 to 6, and those Valgrind 3.19's tools
 * write beyond them (helgrind's isrootthread, drd's segments and
 * contexts). The first VGXML_NAMED_ROLES follow enum vgxml_name_id. */
static const struct {
	const char *name;
	unsigned char flags;
} vgxml_names[] = {
	{"valgrindoutput", C}, {"protocolversion", L}, {"usercomment", L}, {"rawtext", L},
	{"stack", C}, {"frame", C}, {"ip", L}, {"obj", L}, {"fn", L}, {"dir", L}, {"file", L},
	{"line", L}, {"error", C},
	/* protocols 1-4 */
	{"protocoltool", L}, {"preamble", C}, {"pid", L}, {"ppid", L}, {"tool", L},
	{"logfilequalifier", C}, {"var", L}, {"value", L}, {"args", C}, {"vargv", C},
	{"argv", C}, {"exe", L}, {"arg", L}, {"status", C}, {"state", L}, {"time", L},
	{"unique", L}, {"tid", L}, {"threadname", L}, {"kind", L}, {"what", L}, {"xwhat", C},
	{"text", L}, {"leakedbytes", L}, {"leakedblocks", L}, {"auxwhat", L}, {"xauxwhat", C},
	{"origin", C}, {"suppression", C}, {"sname", L}, {"skind", L}, {"skaux", L},
	{"sframe", C}, {"fun", L}, {"errorcounts", C}, {"pair", C}, {"count", L}, {"name", L},
	{"suppcounts", C}, {"announcethread", C}, {"hthreadid", L}, {"clientmsg", C},
	{"fatal_signal", C}, {"signo", L}, {"signame", L}, {"sicode", L}, {"event", L},
	{"siaddr", L},
	/* written by Valgrind 3.19 beyond the spec */
	{"isrootthread", L}, {"other_segment_start", C}, {"other_segment_end", C},
	{"allocation_context", C}, {"confl_wait_call", C}, {"acquired_at", C},
	{"first_observed_at", C}, {"trace", C}, {"address", L},
	/* protocol 5 (--track-fds) */
	{"fd", L}, {"path", L},
	/* protocol 6 */
	{"error_summary", C}, {"errors", L}, {"error_contexts", L}, {"suppressed", C},
	{"suppressed_contexts", L}, {"heap_summary", C}, {"memory_in_use_at_exit", C},
	{"bytes", L}, {"blocks", L}, {"total_heap_usage", C}, {"allocs", L}, {"frees", L},
	{"bytes_allocated", L}, {"all_heap_blocks_freed", C}, {"leak_summary", C},
	{"definitely_lost", C}, {"indirectly_lost", C}, {"possibly_lost", C},
	{"still_reachable", C}, {"in_blocks", L}, {"reachable_heuristic", C},
};

#undef C
#undef L

#define VGXML_NNAMES (sizeof vgxml_names / sizeof vgxml_names[0])

int rt_vgxml_known(const char *name, size_t len)
{
	for (size_t i = 0; i < VGXML_NNAMES; i++)
		if (!strncmp(vgxml_names[i].name, name, len) && !vgxml_names[i].name[len])
			return (int)i;
	return -1;
}

unsigned rt_vgxml_known_flags(int i)
{
	return i >= 0 && (size_t)i < VGXML_NNAMES ? vgxml_names[i].flags : 0;
}


/* ---- small byte matching ---- */

static bool vgxml_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool vgxml_namechar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == ':' || (unsigned char)c >= 0x80;
}

/* 1 when p[i..n) starts with lit, 0 when it does not, -1 when the bytes
 * end before telling. */
static int vgxml_at(const char *p, size_t n, size_t i, const char *lit)
{
	for (size_t k = 0; lit[k]; k++, i++) {
		if (i >= n)
			return -1;
		if (p[i] != lit[k])
			return 0;
	}
	return 1;
}

/* Offset just after the first `lit` at or after i, or 0 when none. */
static size_t vgxml_after(const char *p, size_t n, size_t i, const char *lit)
{
	size_t len = strlen(lit);
	const char *hit = i < n ? memmem(p + i, n - i, lit, len) : NULL;
	return hit ? (size_t)(hit - p) + len : 0;
}

/* ---- document head ---- */

#define VGXML_HEAD_MAX (64 * 1024)

typedef struct vgxml_cursor {
	const char *p;
	size_t n, i;
	bool more; /* ran out of bytes before deciding */
} vgxml_cursor;

static void vgxml_skip_space(vgxml_cursor *c)
{
	while (c->i < c->n && vgxml_space(c->p[c->i]))
		c->i++;
	if (c->i == c->n)
		c->more = true;
}

/* Skips lit and then everything up to and including `end`; false when
 * the bytes do not start with lit here. */
static bool vgxml_skip_markup(vgxml_cursor *c, const char *lit, const char *end)
{
	int at = vgxml_at(c->p, c->n, c->i, lit);
	if (at <= 0) {
		c->more |= at < 0;
		return false;
	}
	size_t after = vgxml_after(c->p, c->n, c->i, end);
	c->more |= !after;
	c->i = after ? after : c->n;
	return after != 0;
}

/* Skips a document type declaration, its internal subset (in brackets,
 * with quoted literals that may hold '>' or ']') included. */
static bool vgxml_skip_doctype(vgxml_cursor *c)
{
	int at = vgxml_at(c->p, c->n, c->i, "<!DOCTYPE");
	if (at <= 0) {
		c->more |= at < 0;
		return false;
	}
	char quote = 0;
	unsigned depth = 0;
	for (size_t i = c->i + 9; i < c->n; i++) {
		char ch = c->p[i];
		if (quote)
			quote = ch == quote ? 0 : quote;
		else if (ch == '"' || ch == '\'')
			quote = ch;
		else if (ch == '[')
			depth++;
		else if (ch == ']' && depth)
			depth--;
		else if (ch == '>' && !depth) {
			c->i = i + 1;
			return true;
		}
	}
	c->more = true;
	c->i = c->n;
	return false;
}

/* Misc* and a doctypedecl of the prolog: spaces, comments, processing
 * instructions and <!DOCTYPE ...>, any number in any order (a second
 * DOCTYPE is the parser's to reject). */
static void vgxml_skip_misc(vgxml_cursor *c)
{
	do
		vgxml_skip_space(c);
	while (!c->more && (vgxml_skip_markup(c, "<!--", "-->") || vgxml_skip_doctype(c) ||
			    vgxml_skip_markup(c, "<?", "?>")));
}

/* Reads `<protocolversion>N` and what follows N. */
static void vgxml_head_version(vgxml_cursor *c, vgxml_head *h)
{
	unsigned v = 0;
	vgxml_skip_space(c);
	while (c->i < c->n && c->p[c->i] >= '0' && c->p[c->i] <= '9' && v < 1000000)
		v = v * 10 + (unsigned)(c->p[c->i++] - '0');
	vgxml_skip_space(c);
	if (c->more)
		return;
	h->version = v;
	if (vgxml_at(c->p, c->n, c->i, "</") > 0)
		return;
	int typo = vgxml_at(c->p, c->n, c->i, "<protocolversion>");
	c->more = typo < 0;
	if (typo > 0)
		h->typo_at = c->i + 1;
}

bool rt_vgxml_head_scan(const char *p, size_t n, bool eof, vgxml_head *h)
{
	vgxml_cursor c = {p, n, 0, false};
	h->version = 0;
	h->typo_at = SIZE_MAX;
	if (vgxml_at(p, n, 0, "\xef\xbb\xbf") > 0)
		c.i = 3;
	vgxml_skip_space(&c);
	if (!c.more)
		vgxml_skip_markup(&c, "<?xml", "?>");
	if (!c.more)
		vgxml_skip_misc(&c);
	if (!c.more && vgxml_skip_markup(&c, "<valgrindoutput", ">")) {
		vgxml_skip_misc(&c);
		if (!c.more && vgxml_skip_markup(&c, "<protocolversion>", ">"))
			vgxml_head_version(&c, h);
	}
	return !c.more || eof || n >= VGXML_HEAD_MAX;
}

/* ---- protocol 1-3 repair ---- */

enum { VGXML_TEXT, VGXML_COMMENT, VGXML_CDATA, VGXML_PI, VGXML_DECL, VGXML_UCOMMENT };

static const char *const vgxml_terminator[] = {
	[VGXML_COMMENT] = "-->", [VGXML_CDATA] = "]]>", [VGXML_PI] = "?>",
	[VGXML_DECL] = ">", [VGXML_UCOMMENT] = "</usercomment",
};

/* Whether p[0..n) starts with a character or predefined entity
 * reference: 1 yes, 0 no, -1 cannot tell yet. */
static int vgxml_valid_ref(const char *p, size_t n)
{
	static const char *const named[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
	int undecided = 0;
	for (size_t k = 0; k < sizeof named / sizeof named[0]; k++) {
		int at = vgxml_at(p, n, 0, named[k]);
		if (at > 0)
			return 1;
		undecided |= at < 0;
	}
	if (n < 2 || p[1] != '#')
		return n < 2 ? -1 : (undecided ? -1 : 0);
	bool hex = n > 2 && p[2] == 'x';
	size_t i = hex ? 3 : 2, start = i;
	for (; i < n && i < 16; i++) {
		char c = p[i];
		if (c == ';')
			return i > start;
		bool digit = (c >= '0' && c <= '9') ||
			     (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
		if (!digit)
			return 0;
	}
	return i < 16 ? -1 : 0;
}

/* Length of a known element's start or end tag at p[0..n) ('<' at p[0]);
 * 0 when it is none, -1 when more bytes are needed. *name gets its index. */
static long vgxml_known_tag(const char *p, size_t n, int *name)
{
	size_t i = p[1] == '/' ? 2 : 1, start = i, max = VGXML_NAME_MAX;
	while (i < n && vgxml_namechar(p[i]) && i - start <= max)
		i++;
	if (i == n)
		return -1;
	if (i == start || i - start > max || !(vgxml_space(p[i]) || p[i] == '>' || p[i] == '/') ||
	    (*name = rt_vgxml_known(p + start, i - start)) < 0)
		return 0;
	char quote = 0;
	for (size_t lim = i + 4096; i < n && i < lim; i++) {
		if (quote)
			quote = p[i] == quote ? 0 : quote;
		else if (p[i] == '"' || p[i] == '\'')
			quote = p[i];
		else if (p[i] == '>')
			return (long)i + 1;
		else if (p[i] == '<')
			return 0;
	}
	return i == n ? -1 : 0;
}

static void vgxml_count(vgxml_repair *r, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			r->lines++;
			r->col = 0;
		} else {
			r->col++;
		}
	}
}

typedef struct vgxml_out {
	vgxml_repair *r;
	const char *src;
	size_t i; /* consumed */
	char *dst;
	size_t o; /* written */
} vgxml_out;

static void vgxml_copy(vgxml_out *w, size_t n)
{
	memcpy(w->dst + w->o, w->src + w->i, n);
	vgxml_count(w->r, w->src + w->i, n);
	w->o += n;
	w->i += n;
}

/* Escapes the byte at w->i ('&' or '<'). */
static void vgxml_escape(vgxml_out *w)
{
	vgxml_repair *r = w->r;
	if (!r->repaired++) {
		r->first_line = r->lines;
		r->first_col = r->col;
	}
	const char *rep = w->src[w->i] == '&' ? "&amp;" : "&lt;";
	memcpy(w->dst + w->o, rep, strlen(rep));
	w->o += strlen(rep);
	w->i++;
	r->col++;
}

/* Inside a comment, CDATA section, PI or declaration: copies up to its
 * end; false when the end is not in sight yet. */
static bool vgxml_repair_markup(vgxml_out *w, size_t n, bool eof)
{
	const char *end = vgxml_terminator[w->r->mode];
	size_t after = vgxml_after(w->src, n, w->i, end);
	if (!after) {
		size_t keep = strlen(end) - 1, avail = n - w->i;
		vgxml_copy(w, eof ? avail : avail > keep ? avail - keep : 0);
		return false;
	}
	vgxml_copy(w, after - w->i);
	w->r->mode = VGXML_TEXT;
	return true;
}

/* A '&' at w->i: copied when it starts a reference, else escaped; false
 * when more bytes are needed to tell. */
static bool vgxml_repair_amp(vgxml_out *w, size_t n, bool eof)
{
	int ref = vgxml_valid_ref(w->src + w->i, n - w->i);
	if (ref < 0 && !eof)
		return false;
	if (ref > 0)
		vgxml_copy(w, 1);
	else
		vgxml_escape(w);
	return true;
}

/* Inside <usercomment>, raw XML by the spec: its markup passes as it is,
 * a bare '&' is escaped; up to its end tag, which the text mode handles.
 * False when more bytes are needed. */
static bool vgxml_repair_ucomment(vgxml_out *w, size_t n, bool eof)
{
	for (;;) {
		size_t j = w->i;
		while (j < n && w->src[j] != '<' && w->src[j] != '&')
			j++;
		vgxml_copy(w, j - w->i);
		if (w->i == n)
			return false;
		if (w->src[w->i] == '&') {
			if (!vgxml_repair_amp(w, n, eof))
				return false;
			continue;
		}
		int at = vgxml_at(w->src, n, w->i, vgxml_terminator[VGXML_UCOMMENT]);
		if (at < 0 && !eof)
			return false;
		if (at > 0) {
			w->r->mode = VGXML_TEXT;
			return true;
		}
		vgxml_copy(w, 1);
	}
}

/* Handles the '<' at w->i in text. Returns 1 when done with it, 0 when
 * more bytes are needed, 2 when a piece boundary is here (before a
 * nested document's start, after the document's end tag). */
static int vgxml_repair_lt(vgxml_out *w, size_t n, bool eof)
{
	const char *p = w->src + w->i;
	size_t avail = n - w->i;
	static const struct {
		const char *lit;
		int mode;
	} opens[] = {{"<!--", VGXML_COMMENT}, {"<![CDATA[", VGXML_CDATA}, {"<?", VGXML_PI},
		     {"<!", VGXML_DECL}};
	for (size_t k = 0; k < sizeof opens / sizeof opens[0]; k++) {
		int at = vgxml_at(p, avail, 0, opens[k].lit);
		if (at < 0 && !eof)
			return 0;
		if (at <= 0)
			continue;
		if (opens[k].mode == VGXML_PI && vgxml_at(p, avail, 0, "<?xml") > 0 && w->i > 0)
			return 2;
		vgxml_copy(w, strlen(opens[k].lit));
		w->r->mode = opens[k].mode;
		return 1;
	}
	int name = -1;
	long len = avail > 1 ? vgxml_known_tag(p, avail, &name) : -1;
	if (len < 0 && !eof)
		return 0;
	if (len <= 0) {
		vgxml_escape(w);
		return 1;
	}
	bool end = p[1] == '/';
	if (name == VGXML_VALGRINDOUTPUT && !end && w->i > 0)
		return 2;
	vgxml_copy(w, (size_t)len);
	if (name == VGXML_USERCOMMENT && !end && p[len - 2] != '/')
		w->r->mode = VGXML_UCOMMENT;
	return name == VGXML_VALGRINDOUTPUT && end ? 2 : 1;
}

/* Copies text up to the next '<' or '&'. */
static void vgxml_repair_text(vgxml_out *w, size_t n)
{
	size_t j = w->i;
	while (j < n && w->src[j] != '<' && w->src[j] != '&')
		j++;
	vgxml_copy(w, j - w->i);
}

enum vgxml_repair_stop rt_vgxml_repair(vgxml_repair *r, const char *src, size_t *n, bool eof,
				       char *dst, size_t *out)
{
	vgxml_out w = {r, src, 0, dst, 0};
	int rc = 1;
	while (w.i < *n && rc == 1) {
		if (r->mode != VGXML_TEXT) {
			bool done = r->mode == VGXML_UCOMMENT ? vgxml_repair_ucomment(&w, *n, eof)
							      : vgxml_repair_markup(&w, *n, eof);
			if (!done)
				break;
			continue;
		}
		vgxml_repair_text(&w, *n);
		if (w.i == *n)
			break;
		if (w.src[w.i] == '<')
			rc = vgxml_repair_lt(&w, *n, eof);
		else if (!vgxml_repair_amp(&w, *n, eof))
			break;
	}
	*n = w.i;
	*out = w.o;
	return rc == 2 ? VGXML_REPAIR_SPLIT : VGXML_REPAIR_MORE;
}

bool rt_vgxml_sniff(const char *buf, size_t len)
{
	vgxml_cursor c = {buf, len, 0, false};
	if (vgxml_at(buf, len, 0, "\xef\xbb\xbf") > 0)
		c.i = 3;
	vgxml_skip_space(&c);
	vgxml_skip_markup(&c, "<?xml", "?>");
	c.more = false;
	vgxml_skip_misc(&c);
	if (vgxml_at(buf, len, c.i, "<valgrindoutput") <= 0)
		return false;
	size_t after = c.i + strlen("<valgrindoutput");
	return after == len || buf[after] == '>' || vgxml_space(buf[after]);
}
