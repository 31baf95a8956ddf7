/* Shared plumbing of the rtrace command: uniform messages and the
 * subcommand entry points (one file per subcommand). */
#ifndef RT_CLI_H
#define RT_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include "rtrace/rtrace.h"

/* Exit statuses of every subcommand. */
enum {
	RT_EXIT_OK = 0,
	RT_EXIT_DATA = 1,  /* bad input, I/O error; partial output written */
	RT_EXIT_USAGE = 2, /* bad command line */
};

extern bool cli_quiet; /* -q: no warnings */

noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
noreturn void die_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Dies with the message for getopt's ':' (missing value) or '?' result;
 * option strings start with ':' and opterr is 0. */
noreturn void cli_bad_option(const char *cmd, int c, char **argv);

/* Readers' warnings: the first CLI_MAX_WARNINGS are printed ("file:line:
 * col: msg"), the others counted in *count; cli_warnings_end() says how
 * many were not shown. */
#define CLI_MAX_WARNINGS 10
void cli_count_warning(unsigned *count, const rt_diag *d);
void cli_read_warning(void *count, const rt_diag *d); /* as a reader callback */
void cli_warnings_end(unsigned count);
/* A reader's error, as "rtrace: error: file:line:col: msg". */
void cli_diag_error(const rt_diag *d);

/* Strict number parsing for option values: the whole string must parse. */
bool cli_parse_u64(const char *s, int base, uint64_t *v);
/* v with its digits grouped by three ("1,234,567"); buf: 27 bytes or more. */
const char *cli_grouped(uint64_t v, char *buf);

/* The formats an input can be in (input.c). */
enum cli_format { CLI_TEXT, CLI_BINARY, CLI_VGXML, CLI_CALLGRIND };

/* Reads a text trace, a binary trace or Valgrind XML (told by content)
 * from fd, a file or a pipe; *format (may be NULL) says which it was.
 * Valgrind XML goes into the trace's Valgrind documents; its calls are
 * none, st->lines counts its elements. */
int cli_read_input(rt_trace *t, int fd, const char *name, const rt_read_opts *ro,
		   rt_read_stats *st, rt_diag *err, enum cli_format *format);
/* The same, and a Callgrind or Cachegrind profile into *prof (made
 * here; NULL otherwise) when the input is one. */
int cli_read_input_cg(rt_trace *t, cg_profile **prof, int fd, const char *name,
		      const rt_read_opts *ro, rt_read_stats *st, rt_diag *err,
		      enum cli_format *format);
/* The same without telling the format. */
int cli_read_trace(rt_trace *t, int fd, const char *name, const rt_read_opts *ro,
		   rt_read_stats *st, rt_diag *err);

/* Options of the resolver, shared by resolve and postproc -r (resolve.c). */
typedef struct cli_resolve_opts {
	const char **debug_dirs;
	size_t ndebug_dirs;
	const char *root;
	bool no_cache; /* --no-cache: no decompressed copies of debug files */
} cli_resolve_opts;

/* The resolver's options, spelled the same on every command that
 * resolves: their getopt_long entries and values. */
enum { CLI_OPT_DEBUG_DIR = 0x1000, CLI_OPT_ROOT, CLI_OPT_NO_CACHE };
#define CLI_RESOLVE_LONGOPTS                                              \
	{"debug-dir", required_argument, NULL, CLI_OPT_DEBUG_DIR},       \
	{"root", required_argument, NULL, CLI_OPT_ROOT},                 \
	{"no-cache", no_argument, NULL, CLI_OPT_NO_CACHE}
/* Takes getopt's result c when it is one of the resolver's options (arg:
 * its value); false when it is not. */
bool cli_resolve_option(cli_resolve_opts *o, const char *cmd, int c, const char *arg);
/* Whether any resolver option was given. */
bool cli_resolve_opts_given(const cli_resolve_opts *o);
/* Resolves t's backtraces; unreadable modules are warnings. */
void cli_resolve(rt_trace *t, const cli_resolve_opts *o);
void cli_resolve_opts_free(cli_resolve_opts *o);

int cmd_annotate(int argc, char **argv);
int cmd_postproc(int argc, char **argv);
int cmd_resolve(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_convert(int argc, char **argv);

#endif
