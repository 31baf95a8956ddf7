#include "rtrace/diag.h"

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
