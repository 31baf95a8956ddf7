/* SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format), the
 * format code-scanning services read (GitHub code scanning among them),
 * written from any model rtrace reads: the findings of `rtrace run
 * --leak-check=full` in a binary or text trace, and Valgrind XML of any
 * tool (memcheck, helgrind, drd, ...).
 *
 * One SARIF run (tool "rtrace") holds one result per error and per loss
 * record of every Valgrind document of the traces given (a trace of
 * rtrace's own findings gets memcheck's document, rt_vgxml_build). Each
 * result's ruleId is "TOOL/KIND" ("memcheck/Leak_DefinitelyLost",
 * "helgrind/Race"), described once in tool.driver.rules; its message is
 * the tool's own text; its location is the first frame of its stack with
 * source in the user's code (under the source root when one is given:
 * artifactLocation.uri relative to it, uriBaseId "SRCROOT"); every stack
 * of the error is a code flow (the primary one first, outermost frame
 * first), the auxiliary ones related locations too; partialFingerprints
 * "rtrace/stack/v1" identifies the finding across runs and commits
 * (docs/sarif.md says what goes into it). */
#ifndef RTRACE_SARIF_H
#define RTRACE_SARIF_H

#include "rtrace/export.h"

#include <stddef.h>

#include "rtrace/trace.h"
#include "rtrace/vgxml.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_sarif_write_opts {
	/* Absolute directory the artifact URIs are made relative to
	 * (uriBaseId SRCROOT, given in originalUriBaseIds); files outside it
	 * get absolute file: URIs. NULL: none, every URI absolute. */
	const char *source_root;
	/* How the memcheck document of rtrace's own findings is built (loss
	 * records of which kinds, ...); documents read are taken as they are. */
	rt_vgxml_write_opts vg;
} rt_sarif_write_opts;

/* Writes the findings of the n traces (several processes of one run) as
 * one SARIF 2.1.0 log. opts may be NULL. Returns 0 or -errno on a write
 * error; the _mem form returns a malloc'ed, NUL-terminated buffer of *len
 * bytes. */
RTRACE_API int rt_sarif_write_fd(const rt_trace *const *traces, size_t n, int fd,
				 const rt_sarif_write_opts *opts);
RTRACE_API char *rt_sarif_write_mem(const rt_trace *const *traces, size_t n,
				    const rt_sarif_write_opts *opts, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
