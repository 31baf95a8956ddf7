/* The SARIF writer inside librtrace, in three layers that call downwards
 * only: sarif_write.c (the log, its run, rules and results) uses
 * sarif_stack.c (a Valgrind stack as frames: the user's frame, URIs,
 * fingerprints), sarif_rules.c (what each tool's kinds mean) and
 * sarif_json.c (JSON output), which call nothing of the others. */
#ifndef RT_SARIF_INT_H
#define RT_SARIF_INT_H

#include "rtrace/trace.h"
#include "util/out.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --- sarif_json.c: pretty-printed JSON, two spaces a level --- */

#define SJ_MAX_DEPTH 32

typedef struct sj {
	rt_out *o;
	int depth;
	bool more[SJ_MAX_DEPTH]; /* the level has a member already: a comma next */
} sj;

/* Opens an object or array as member `key` of the enclosing object (key
 * NULL: as an element of the enclosing array, or the top value). */
void sj_obj(sj *j, const char *key);
void sj_arr(sj *j, const char *key);
/* Closes the innermost object ('}') or array (']'). */
void sj_end(sj *j, char close);
/* A string member: any n bytes, valid UTF-8 as it is, every byte of
 * invalid UTF-8 as the four characters \xNN (as the XML writer does). */
void sj_strn(sj *j, const char *key, const char *s, size_t n);
void sj_str(sj *j, const char *key, const char *s);
void sj_u64(sj *j, const char *key, uint64_t v);
/* {"text": s} as member key. */
void sj_text(sj *j, const char *key, const char *s);

/* --- sarif_rules.c: the kinds of Valgrind's tools --- */

typedef struct sarif_rule_info {
	const char *name;      /* PascalCase name, "" when only the id is known */
	const char *brief;     /* shortDescription */
	const char *full;      /* fullDescription, and the help */
	const char *level;     /* "error", "warning", "note" */
	const char *severity;  /* problem.severity: error, warning, recommendation */
	const char *cwe;       /* "401" or NULL */
	const char *sec;       /* security-severity ("7.5"), NULL: not a security rule */
	const char *help_uri;  /* the tool's manual */
} sarif_rule_info;

/* What kind `kind` of tool `tool` means (a generic description for a
 * kind this table does not know). */
void rt_sarif_rule_info(const char *tool, const char *kind, sarif_rule_info *r);

/* --- sarif_stack.c: stacks, locations, fingerprints --- */

/* One function of a stack (a frame's inline chain gives several). */
typedef struct sarif_frame {
	uint64_t addr;
	const char *fn;     /* NULL when unknown */
	const char *file;   /* source path as recorded, or NULL */
	const char *module; /* object path, or NULL */
	uint32_t line;      /* 0 when unknown */
	bool interposer;    /* the tool's replacement of malloc, free, ...:
			     * valgrind's vgpreload_*, rtrace's preload */
} sarif_frame;

typedef struct sarif_stack {
	sarif_frame *f; /* innermost first, as Valgrind prints them */
	size_t n;
} sarif_stack;

/* Backtrace bt of t as frames (malloc'ed; free with free(s->f)). */
void rt_sarif_stack(const rt_trace *t, uint32_t bt, sarif_stack *s);
/* The frame a result points at: the first with source under root (when
 * root is given), else the first with source in no system directory and
 * not the interposer, else the first with source, else the first with a
 * module, the interposer's last. -1 when none. */
long rt_sarif_primary(const sarif_stack *s, const char *root);
/* A location object ({"physicalLocation", "logicalLocations"}, and
 * {"message"} when msg is given, "id" when id >= 0) for frame f as member
 * key. */
void rt_sarif_location(sj *j, const char *key, const sarif_frame *f, const char *root, const char *msg,
		       long id);
/* Frame f as memcheck prints it: "fn (file:line)", "fn (in /obj)",
 * "??? (in /obj)"; into buf. */
const char *rt_sarif_frame_text(const sarif_frame *f, char *buf, size_t len);
/* The identity of a finding: 32 hex digits (and a NUL) into hex, from
 * tool, kind and its n stacks' function names, with the file names of the
 * user's frames (docs/sarif.md). */
void rt_sarif_fingerprint(const char *tool, const char *kind, const sarif_stack *s, size_t n, char hex[33]);

#endif
