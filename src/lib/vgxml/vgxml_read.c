/* The Valgrind XML reader (rtrace/vgxml.h): the input and its documents.
 *
 * The input is read in 1 MiB chunks into a window and handed to expat
 * (XML_GetBuffer / XML_ParseBuffer) in pieces; the handlers in
 * vgxml_tree.c build the model. Expat parses one document at a time: when
 * a root ends, the parser stops there and is reset for the next document,
 * which starts at the next non-blank byte. Valgrind's children traced into
 * the parent's file (--trace-children=yes with a shared --xml-fd) write
 * their documents in the middle of the parent's, between two of its
 * top-level elements; a document cut short by exec is followed by the new
 * program's. So a document starting inside an open one interrupts it, and
 * what follows the nested document's end, unless another document starts
 * there, resumes the interrupted one: a fresh parser is given a synthetic
 * "<valgrindoutput>" that re-enters its root.
 *
 * Pieces remember which input bytes they came from, so that a parser
 * offset (where a root ended, where a nested document starts) maps back to
 * the input; protocol 1-3 documents are repaired (vgxml_repair.c) before
 * expat sees them, the others go through as they are. Positions and
 * diagnostics (shared with the handlers) are vgxml_diag.c. */
#include "util/util.h"
#include "vgxml/vgxml_read_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VGXML_CHUNK (1u << 20)
#define VGXML_ROOT_TAG "<valgrindoutput>"
#define VGXML_TYPO_REST "protocolversion>"

enum { VGXML_EOF = VGXML_FAIL + 1 };

/* Line (0-based) and column (expat's, 0-based) of p[pos + n] relative to
 * p[pos], the session's first byte. */
static void vgxml_rel_pos(const vgxml_reader *r, size_t n, uint64_t *line, uint32_t *col)
{
	const char *s = r->p + r->pos, *bol = s;
	*line = 0;
	for (const char *q = s; (q = memchr(q, '\n', (size_t)(s + n - q))); q++, bol = q)
		++*line;
	*col = (uint32_t)(s + n - bol);
}

/* ---- input ---- */

/* Reads more input behind the window's unread bytes; false on a read
 * error. Memory input is all there from the start. */
static bool vgxml_refill(vgxml_reader *r)
{
	if (r->eof)
		return true;
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->off += r->pos;
		r->end -= r->pos;
		r->pos = 0;
	}
	while (r->end < r->cap) {
		ssize_t got = read(r->fd, r->buf + r->end, r->cap - r->end);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rt_vgxml_fail_here(r, "cannot read: %s", strerror(errno));
			return false;
		}
		r->eof = got == 0;
		r->end += (size_t)got;
		break;
	}
	return true;
}

/* Makes at least n unread bytes available, unless the input ends. */
static bool vgxml_need(vgxml_reader *r, size_t n)
{
	while (r->end - r->pos < n && !r->eof)
		if (!vgxml_refill(r))
			return false;
	return true;
}

/* Skips blanks between documents: 1 when a byte follows, 0 at the end of
 * the input, -1 on a read error. */
static int vgxml_skip_blank(vgxml_reader *r)
{
	for (;;) {
		for (; r->pos < r->end; r->pos++) {
			char c = r->p[r->pos];
			if (c == '\n') {
				r->line++;
				r->col = 1;
			} else if (c == ' ' || c == '\t' || c == '\r') {
				r->col++;
			} else {
				return 1;
			}
		}
		if (r->eof)
			return 0;
		if (!vgxml_refill(r))
			return -1;
	}
}

/* Whether a new document starts at the window (after blanks). */
static bool vgxml_doc_starts(const vgxml_reader *r)
{
	static const char *const starts[] = {"<?xml", "<valgrindoutput", "\xef\xbb\xbf",
					     "<!DOCTYPE", "<!--"};
	size_t n = r->end - r->pos, count = sizeof starts / sizeof starts[0];
	if (r->nsusp)
		count--; /* there, a comment is the interrupted document's */
	for (size_t k = 0; k < count; k++) {
		size_t len = strlen(starts[k]);
		if (n >= len && !memcmp(r->p + r->pos, starts[k], len))
			return true;
	}
	return false;
}

/* ---- feeding expat ---- */

static void vgxml_piece_add(vgxml_reader *r, size_t plen, size_t rlen, bool linear)
{
	uint64_t at = r->off + r->pos;
	r->pieces[r->npieces++ % VGXML_PIECES] =
		(vgxml_piece){r->pfed, r->pfed + plen, at, at + rlen, linear};
	r->pfed += plen;
}

/* The input offset of parser offset idx; false when it falls inside
 * bytes that were changed (never for the places asked about). */
static bool vgxml_raw_offset(const vgxml_reader *r, uint64_t idx, uint64_t *raw)
{
	unsigned n = r->npieces < VGXML_PIECES ? r->npieces : VGXML_PIECES;
	for (unsigned k = 0; k < n; k++) {
		const vgxml_piece *pc = &r->pieces[(r->npieces - 1 - k) % VGXML_PIECES];
		if (idx < pc->pstart || idx > pc->pend)
			continue;
		if (!pc->linear && idx != pc->pstart && idx != pc->pend)
			return false;
		*raw = pc->linear || idx == pc->pstart ? pc->rstart + (idx - pc->pstart) : pc->rend;
		return true;
	}
	return false;
}

/* What expat said: 1 go on, 0 the session stopped (r->stop). */
static int vgxml_status(vgxml_reader *r, enum XML_Status s);

static char *vgxml_buffer(vgxml_reader *r, size_t len)
{
	char *dst = XML_GetBuffer(r->xp, (int)len);
	if (!dst)
		rt_vgxml_fail(r, "out of memory (expat buffer of %zu bytes)", len);
	return dst;
}

/* Bytes that are not in the input (a resumed root, the head's '/'). */
static int vgxml_feed_synthetic(vgxml_reader *r, const char *s, size_t len)
{
	char *dst = vgxml_buffer(r, len);
	if (!dst)
		return 0;
	memcpy(dst, s, len);
	vgxml_piece_add(r, len, 0, false);
	return vgxml_status(r, XML_ParseBuffer(r->xp, (int)len, 0));
}

static int vgxml_feed_plain(vgxml_reader *r, size_t len)
{
	char *dst = vgxml_buffer(r, len);
	if (!dst)
		return 0;
	memcpy(dst, r->p + r->pos, len);
	vgxml_piece_add(r, len, len, true);
	r->pos += len;
	return vgxml_status(r, XML_ParseBuffer(r->xp, (int)len, 0));
}

/* Protocol 1-3 text repaired on the way; 2 when more input is needed. */
static int vgxml_feed_repair(vgxml_reader *r, size_t len, bool last)
{
	char *dst = vgxml_buffer(r, len * 5 + 8);
	if (!dst)
		return 0;
	size_t n = len, out = 0;
	uint64_t before = r->rep.repaired;
	rt_vgxml_repair(&r->rep, r->p + r->pos, &n, last, dst, &out);
	if (!n)
		return 2;
	if (!before && r->rep.repaired) {
		uint64_t line = r->line0 + r->rep.first_line;
		uint32_t col = r->rep.first_line ? r->rep.first_col + 1 : r->col0 + r->rep.first_col;
		rt_vgxml_warn_at(r, line, col, "unescaped '&' or '<' in the text of a protocol %u "
			      "document: escaped, and any further ones (protocols 1-3 escape only "
			      "<fn>)", r->doc.version);
	}
	vgxml_piece_add(r, out, n, r->rep.repaired == before);
	r->pos += n;
	return vgxml_status(r, XML_ParseBuffer(r->xp, (int)out, 0));
}

/* Feeds the next piece: up to the head's typo, up to where repairs start,
 * at most a chunk. 1 go on, 0 stopped, 2 more input needed. */
static int vgxml_feed(vgxml_reader *r)
{
	uint64_t at = r->off + r->pos;
	size_t len = r->end - r->pos;
	if (at == r->typo_at) {
		r->typo_at = UINT64_MAX;
		return vgxml_feed_synthetic(r, "/", 1);
	}
	if (r->typo_at != UINT64_MAX && r->typo_at - at < len)
		len = (size_t)(r->typo_at - at);
	bool repair = r->repair && at >= r->repair_from;
	if (r->repair && !repair && r->repair_from - at < len)
		len = (size_t)(r->repair_from - at);
	if (len > VGXML_CHUNK)
		len = VGXML_CHUNK;
	if (!repair)
		return vgxml_feed_plain(r, len);
	return vgxml_feed_repair(r, len, r->eof && r->pos + len == r->end);
}

/* ---- sessions: one parser run ---- */

static void vgxml_expat_error(vgxml_reader *r)
{
	enum XML_Error code = XML_GetErrorCode(r->xp);
	const char *what = XML_ErrorString(code), *open = rt_vgxml_open_name(r, r->depth - 1);
	if (code == XML_ERROR_MISPLACED_XML_PI && r->in_doc && r->depth == 1) {
		r->stop = VGXML_NESTED; /* <?xml ...?>: another document */
		r->stop_idx = (uint64_t)XML_GetCurrentByteIndex(r->xp);
		rt_vgxml_where(r, &r->line, &r->col);
	} else if (code == XML_ERROR_TAG_MISMATCH) {
		rt_vgxml_fail(r, "expected </%s> (%s)", open, what);
	} else if (code == XML_ERROR_UNDEFINED_ENTITY) {
		rt_vgxml_fail(r, "expected &amp;, &lt;, &gt;, &quot;, &apos; or a character "
			      "reference (%s)", what);
	} else if (code == XML_ERROR_MISPLACED_XML_PI) {
		rt_vgxml_fail(r, "expected an element or the end of <%s>, found an XML "
			      "declaration (%s)", open, what);
	} else if (!r->depth) {
		rt_vgxml_fail(r, "expected <valgrindoutput> (%s)", what);
	} else {
		rt_vgxml_fail(r, "expected an element, text or </%s> (%s)", open, what);
	}
}

static int vgxml_status(vgxml_reader *r, enum XML_Status s)
{
	if (s == XML_STATUS_OK)
		return 1;
	if (s == XML_STATUS_ERROR && r->stop == VGXML_GOING)
		vgxml_expat_error(r);
	return 0;
}

/* Puts the window at the parser offset where the session stopped. */
static bool vgxml_session_place(vgxml_reader *r)
{
	uint64_t raw;
	if (!vgxml_raw_offset(r, r->stop_idx, &raw) || raw < r->off || raw > r->off + r->end) {
		rt_vgxml_fail_here(r, "cannot tell where the document ends in the input");
		return false;
	}
	r->pos = (size_t)(raw - r->off);
	return true;
}

/* A fresh parser at the window, positions counted from there. */
static bool vgxml_session_reset(vgxml_reader *r)
{
	if (!r->xp)
		r->xp = XML_ParserCreate(NULL);
	else
		XML_ParserReset(r->xp, NULL);
	if (!r->xp) {
		rt_vgxml_fail_here(r, "out of memory (expat parser)");
		return false;
	}
	rt_vgxml_tree_setup(r);
	r->npieces = 0;
	r->pfed = 0;
	r->stop = VGXML_GOING;
	r->line0 = r->line;
	r->col0 = r->col;
	r->pre = 0;
	r->typo_at = r->typo_line = UINT64_MAX;
	r->repair_from = r->off + r->pos;
	r->rep = (vgxml_repair){0};
	r->in_doc = false;
	r->resume_root = RT_NONE;
	return true;
}

/* Reads a new document's head: its protocol version (protocols 1-3 get
 * repaired) and the spec's unclosed <protocolversion>, fixed on the way. */
static bool vgxml_session_head(vgxml_reader *r)
{
	vgxml_head h;
	while (!rt_vgxml_head_scan(r->p + r->pos, r->end - r->pos, r->eof, &h))
		if (!vgxml_refill(r))
			return false;
	r->doc.version = h.version;
	r->repair = h.version >= 1 && h.version <= 3;
	if (h.typo_at == SIZE_MAX)
		return true;
	/* the head scan saw the whole second tag: repairs start after it */
	size_t rest = h.typo_at + strlen(VGXML_TYPO_REST);
	r->typo_at = r->off + r->pos + h.typo_at;
	vgxml_rel_pos(r, h.typo_at, &r->typo_line, &r->typo_col);
	r->repair_from = r->off + r->pos + rest;
	vgxml_rel_pos(r, rest, &r->rep.lines, &r->rep.col);
	return true;
}

/* Re-enters the root of the innermost interrupted document. */
static bool vgxml_session_resume(vgxml_reader *r)
{
	r->doc = r->susp[--r->nsusp];
	r->resume_root = r->doc.root;
	r->repair = r->doc.version >= 1 && r->doc.version <= 3;
	r->pre = (uint32_t)strlen(VGXML_ROOT_TAG);
	return vgxml_feed_synthetic(r, VGXML_ROOT_TAG, r->pre) == 1;
}

/* Parses until the document ends, another one starts inside it, the
 * input ends (VGXML_EOF) or something fails. */
static int vgxml_session_run(vgxml_reader *r)
{
	while (!r->failed) {
		if (r->pos == r->end) {
			if (r->eof)
				return VGXML_EOF;
			if (!vgxml_refill(r))
				break;
			continue;
		}
		int rc = vgxml_feed(r);
		if (rc == 0)
			return r->stop;
		if (rc == 2 && !vgxml_refill(r))
			break;
	}
	return VGXML_FAIL;
}

/* ---- documents ---- */

/* The input ended: what is open is kept as far as it is complete. */
static int vgxml_input_end(vgxml_reader *r, bool in_session)
{
	uint64_t line = r->line;
	uint32_t col = r->col;
	if (in_session)
		rt_vgxml_where(r, &line, &col);
	if (in_session && r->in_doc) {
		r->st->truncated = true;
		if (r->depth >= 2)
			rt_vgxml_warn_at(r, line, col, "input ends inside <%s> (opened at line %llu); the "
				      "%llu complete elements before it are kept",
				      rt_vgxml_open_name(r, 1), (unsigned long long)r->top_line,
				      (unsigned long long)r->doc.kept);
		else
			rt_vgxml_warn_at(r, line, col, "input ends inside <valgrindoutput> (opened at "
				      "line %llu); its %llu complete elements are kept",
				      (unsigned long long)r->doc.line,
				      (unsigned long long)r->doc.kept);
		rt_vgxml_tree_drop_open(r);
	} else if (in_session && r->st->docs) {
		r->st->truncated = true;
		rt_vgxml_warn_at(r, line, col, "input ends before the root element of another document");
	}
	while (r->nsusp) {
		const vgxml_doc *d = &r->susp[--r->nsusp];
		r->st->truncated = true;
		rt_vgxml_warn_at(r, line, col, "input ends inside <valgrindoutput> (opened at line %llu, "
			      "interrupted at line %llu by another document); its %llu complete "
			      "elements are kept", (unsigned long long)d->line,
			      (unsigned long long)d->cut_at, (unsigned long long)d->kept);
	}
	if (r->st->docs)
		return 0;
	r->line = line;
	r->col = col;
	rt_vgxml_fail_here(r, in_session ? "expected <valgrindoutput>, the input ends before it"
				      : "expected a <valgrindoutput> document, the input is empty");
	return -1;
}

/* One parser session from the window on: a new document, or the rest of
 * an interrupted one. 1 when the input goes on, 0 at its end, -1 failed. */
static int vgxml_document(vgxml_reader *r, bool resume)
{
	if (!vgxml_session_reset(r))
		return -1;
	if (!(resume ? vgxml_session_resume(r) : vgxml_session_head(r)))
		return -1;
	int rc = vgxml_session_run(r);
	if (rc == VGXML_EOF)
		return vgxml_input_end(r, true) < 0 ? -1 : 0;
	if (rc == VGXML_FAIL || !vgxml_session_place(r)) {
		rt_vgxml_tree_drop_open(r);
		return -1;
	}
	if (rc == VGXML_NESTED) {
		r->doc.cut_at = r->line;
		RT_PUSH(r->susp, r->nsusp, r->csusp, r->doc);
	}
	return 1;
}

static int vgxml_documents(vgxml_reader *r)
{
	for (;;) {
		int more = vgxml_skip_blank(r);
		if (more <= 0)
			return more < 0 ? -1 : vgxml_input_end(r, false);
		if (!vgxml_need(r, 16))
			return -1;
		bool starts = vgxml_doc_starts(r);
		if (!starts && !r->nsusp && r->st->docs) {
			rt_vgxml_fail_here(r, "expected another <valgrindoutput> document or the end of "
				       "the input");
			return -1;
		}
		int rc = vgxml_document(r, !starts && r->nsusp);
		if (rc <= 0)
			return rc;
	}
}

/* ---- API ---- */

static int vgxml_run(vgxml_reader *r, rt_trace *t, const char *name,
		     const rt_vgxml_read_opts *opts, rt_vgxml_stats *stats, rt_diag *err)
{
	rt_vgxml_stats st_local;
	rt_diag err_local;
	r->t = t;
	r->o = opts;
	r->st = stats ? stats : &st_local;
	r->err = err ? err : &err_local;
	r->file = name;
	r->line = r->col = 1;
	*r->st = (rt_vgxml_stats){0};
	*r->err = (rt_diag){name, 0, 0, ""};
	int rc = vgxml_documents(r);
	r->st->bytes = r->off + r->end;
	if (r->xp)
		XML_ParserFree(r->xp);
	rt_vgxml_tree_free(r);
	free(r->susp);
	return rc;
}

int rt_vgxml_read_fd(rt_trace *t, int fd, const char *name, const rt_vgxml_read_opts *opts,
		     rt_vgxml_stats *stats, rt_diag *err)
{
	vgxml_reader r = {0};
	r.fd = fd;
	r.cap = VGXML_CHUNK;
	r.buf = rt_xmalloc(r.cap);
	r.p = r.buf;
	int rc = vgxml_run(&r, t, name, opts, stats, err);
	free(r.buf);
	return rc;
}

int rt_vgxml_read_mem(rt_trace *t, const char *buf, size_t len, const char *name,
		      const rt_vgxml_read_opts *opts, rt_vgxml_stats *stats, rt_diag *err)
{
	vgxml_reader r = {0};
	r.fd = -1;
	r.p = buf ? buf : "";
	r.end = buf ? len : 0;
	r.eof = true;
	return vgxml_run(&r, t, name, opts, stats, err);
}
