/* Diagnostics every reader reports the same way (rtrace/diag.h):
 * "file:line:column: what was expected", and the description of the byte
 * a reader found instead ("end of line", "'x'", "byte 0x07"), so that no
 * reader words its errors differently from another. */
#include "rtrace/diag.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>

void rt_diag_format(const rt_diag *d, char *buf, size_t len)
{
	const char *file = d->file ? d->file : "<input>";
	if (d->line)
		snprintf(buf, len, "%s:%" PRIu64 ":%u: %s", file, d->line, d->col ? d->col : 1, d->msg);
	else
		snprintf(buf, len, "%s: %s", file, d->msg);
}

const char *rt_diag_found(const char *s, const char *end, char *buf, size_t n)
{
	if (s >= end)
		return "end of line";
	unsigned char c = (unsigned char)*s;
	if (c >= 0x21 && c < 0x7f)
		snprintf(buf, n, "'%c'", c);
	else if (c == ' ')
		snprintf(buf, n, "a space");
	else
		snprintf(buf, n, "byte 0x%02x", c);
	return buf;
}
