/* Diagnostics with a source position, as every rtrace reader reports them. */
#ifndef RTRACE_DIAG_H
#define RTRACE_DIAG_H

#include "rtrace/export.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_diag {
	const char *file; /* input name as given by the caller */
	uint64_t line;    /* 1-based; 0 when not about a line */
	uint32_t col;     /* 1-based byte column; 0 when unknown */
	char msg[512];
} rt_diag;

/* "file:line:col: msg" into buf (always NUL-terminated). */
RTRACE_API void rt_diag_format(const rt_diag *d, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
