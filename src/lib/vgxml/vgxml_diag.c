/* The Valgrind XML reader's positions and diagnostics: where in the input
 * an expat event is (line and column as the input's, across the pieces
 * and repairs of vgxml_read.c), warnings and the failure there, and the
 * stops the element handlers ask for (a root closed, a document nested).
 * Both the input side (vgxml_read.c) and the handlers (vgxml_tree.c) call
 * these; as a file of its own it keeps the two from calling each other in
 * a loop (tests/cli/layout.sh). */
#include "vgxml/vgxml_read_int.h"

#include <stdarg.h>
#include <stdio.h>

/* Expat's line and (0-based) column in the session, as the input's. */
static void vgxml_map_pos(const vgxml_reader *r, uint64_t L, uint64_t C, uint64_t *line,
			  uint32_t *col)
{
	uint64_t rel = L ? L - 1 : 0, c = C;
	if (rel == 0)
		c = c > r->pre ? c - r->pre : 0;
	if (rel == r->typo_line && c > r->typo_col)
		c--; /* after the '/' the head's typo got */
	uint64_t v = (rel == 0 ? r->col0 - 1 : 0) + c + 1;
	*line = r->line0 + rel;
	*col = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void rt_vgxml_where(const vgxml_reader *r, uint64_t *line, uint32_t *col)
{
	if (!r->xp) {
		*line = r->line;
		*col = r->col;
		return;
	}
	vgxml_map_pos(r, XML_GetCurrentLineNumber(r->xp), XML_GetCurrentColumnNumber(r->xp), line,
		      col);
}

static void vgxml_vwarn(vgxml_reader *r, uint64_t line, uint32_t col, const char *fmt, va_list ap)
{
	if (!r->o || !r->o->warn)
		return;
	rt_diag d = {r->file, line, col, ""};
	vsnprintf(d.msg, sizeof d.msg, fmt, ap);
	r->o->warn(r->o->ctx, &d);
}

void rt_vgxml_warn_at(vgxml_reader *r, uint64_t line, uint32_t col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vgxml_vwarn(r, line, col, fmt, ap);
	va_end(ap);
}

static void vgxml_vfail(vgxml_reader *r, uint64_t line, uint32_t col, const char *fmt, va_list ap)
{
	if (r->failed)
		return;
	r->failed = true;
	r->stop = VGXML_FAIL;
	*r->err = (rt_diag){r->file, line, col, ""};
	vsnprintf(r->err->msg, sizeof r->err->msg, fmt, ap);
	if (r->xp)
		XML_StopParser(r->xp, XML_FALSE);
}

/* A warning or the failure at the current event. */
static void vgxml_vhere(vgxml_reader *r, bool fail, const char *fmt, va_list ap)
{
	uint64_t line;
	uint32_t col;
	rt_vgxml_where(r, &line, &col);
	(fail ? vgxml_vfail : vgxml_vwarn)(r, line, col, fmt, ap);
}

void rt_vgxml_warn(vgxml_reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vgxml_vhere(r, false, fmt, ap);
	va_end(ap);
}

void rt_vgxml_fail(vgxml_reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vgxml_vhere(r, true, fmt, ap);
	va_end(ap);
}

void rt_vgxml_fail_here(vgxml_reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vgxml_vfail(r, r->line, r->col, fmt, ap);
	va_end(ap);
}

/* ---- stops the handlers ask for ---- */

void rt_vgxml_doc_end(vgxml_reader *r)
{
	int len = XML_GetCurrentByteCount(r->xp);
	r->stop = VGXML_END;
	r->stop_idx = (uint64_t)XML_GetCurrentByteIndex(r->xp) + (uint64_t)len;
	rt_vgxml_where(r, &r->line, &r->col);
	r->col += (uint32_t)len;
	XML_StopParser(r->xp, XML_TRUE);
}

void rt_vgxml_doc_nested(vgxml_reader *r)
{
	r->stop = VGXML_NESTED;
	r->stop_idx = (uint64_t)XML_GetCurrentByteIndex(r->xp);
	rt_vgxml_where(r, &r->line, &r->col);
	XML_StopParser(r->xp, XML_FALSE);
}
