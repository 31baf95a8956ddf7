/* Shared plumbing of the rtrace command: uniform messages (usage.c), the
 * option tables every subcommand's command line and --help are made from
 * (options.c), input reading (input.c), the resolver's options
 * (resolve.c), and the subcommand entry points (one file per
 * subcommand). Every name has the cli_ prefix (cmd_ for entry points):
 * the executable exports none of them, and none may take the place of a
 * library's (libc's error(3) was once replaced by a CLI error()). */
#ifndef RT_CLI_H
#define RT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdnoreturn.h>

#include "rtrace/rtrace.h"

/* Exit statuses of every subcommand. */
enum {
	RT_EXIT_OK = 0,
	RT_EXIT_DATA = 1,  /* bad input, I/O error; partial output written */
	RT_EXIT_USAGE = 2, /* bad command line */
};

extern bool cli_quiet; /* -q: no warnings */

noreturn void cli_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
noreturn void cli_die_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cli_info's lines to fp as memcheck's log has them ("==PID== " first),
 * whatever -q says, until cli_info_to(NULL, 0); the report's summaries
 * mark themselves with cli_info_summary(true), since -q leaves those out
 * of the log as memcheck's -q does. */
void cli_info_to(FILE *fp, int pid);
void cli_info_summary(bool summary);
/* text as it is, where cli_info writes, without the "rtrace: " prefix
 * (the suppressions --gen-suppressions prints, as valgrind prints them). */
void cli_raw(const char *text);
/* realloc of n items of size bytes, or death ("out of memory"). */
void *cli_xrealloc(void *p, size_t n, size_t size);

/* Dies with the message for getopt's ':' (missing value) or '?' result;
 * option strings start with ':' and opterr is 0. */
noreturn void cli_bad_option(const char *cmd, int c, char **argv);

/* One option of a command, the single description from which both its
 * getopt_long entry and its line in the --help text are made. */
typedef struct cli_option {
	char short_name;       /* 0: long form only */
	const char *long_name;
	const char *arg;       /* NULL: no value; else the value as the help
				* shows it, separator included: " FILE", "=MODE" */
	int id;                /* what cli_getopt returns: short_name, or a value
				* above 255 for a long-only option */
	const char *help;      /* lines after the first are indented to the help
				* column; a leading '\n' starts the help under an
				* option too long to share its line */
} cli_option;

/* Every command answers -q (cli_quiet) and -h (the help) the same way. */
#define CLI_QUIET_HELP_OPTIONS(quiet_help)                               \
	{'q', "quiet", NULL, 'q', quiet_help}, {'h', "help", NULL, 'h', "this help"}

/* A command's command line: its options and the help text around them. */
typedef struct cli_command {
	const char *name;         /* "run": for messages */
	const char *intro;        /* help text before the options */
	const cli_option *options;
	size_t noptions;
	unsigned help_column;     /* where the options' help starts */
	const char *epilogue;     /* help text after the options */
	bool stop_at_operand;     /* options end at the first operand */
} cli_command;

/* getopt_long over cmd's table: the next option's id, or -1 after the
 * last; -q (cli_quiet), -h (help printed, exit 0) and bad options (exit
 * 2) are handled here, never returned. The option's value is in optarg. */
int cli_getopt(const cli_command *cmd, int argc, char **argv);
/* The --help text of cmd. */
void cli_print_help(const cli_command *cmd, FILE *fp);

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

/* -j/--threads N: the threads that read a compressed binary trace
 * (rt_read_opts.threads); 1 decodes every frame on the reading thread. */
#define CLI_THREADS_OPTION                                                            \
	{'j', "threads", " N", 'j', "read a compressed trace on N threads (default:\n" \
				    "the CPUs, at most 4; 1: one thread)"}
/* N of -j (1 to 64; dies on a bad one, as cmd's usage error). */
unsigned cli_parse_threads(const char *cmd, const char *arg);
/* The threads to read with: n, or for 0 the CPUs online, at most 4. */
unsigned cli_threads(unsigned n);

/* Options of the resolver, shared by resolve and postproc -r (resolve.c). */
typedef struct cli_resolve_opts {
	const char **debug_dirs;
	size_t ndebug_dirs;
	const char *root;
	bool no_cache; /* --no-cache: no decompressed copies of debug files */
	bool in_place; /* texts written into the stacks (rt_resolve_opts) */
} cli_resolve_opts;

/* The resolver's options, spelled the same on every command that
 * resolves (each says what they do in its own words): their table
 * entries, and the values cli_getopt returns for them. */
enum { CLI_OPT_DEBUG_DIR = 0x1000, CLI_OPT_ROOT, CLI_OPT_NO_CACHE };
#define CLI_RESOLVE_OPTIONS(debug_dir_help, root_help, no_cache_help)       \
	{0, "debug-dir", " DIR", CLI_OPT_DEBUG_DIR, debug_dir_help},        \
	{0, "root", " DIR", CLI_OPT_ROOT, root_help},                      \
	{0, "no-cache", NULL, CLI_OPT_NO_CACHE, no_cache_help}
/* The resolver's options as the commands that resolve by default (heap,
 * convert, report) offer them. */
#define CLI_RESOLVE_DEFAULT_OPTIONS                                                      \
	CLI_RESOLVE_OPTIONS("look for separate debug info in DIR too (repeatable)",          \
			    "resolve against DIR, a copy of the traced machine's\n"           \
			    "file system",                                                     \
			    "no cache of inflated debug files")
/* Takes getopt's result c when it is one of the resolver's options (arg:
 * its value); false when it is not. */
bool cli_resolve_option(cli_resolve_opts *o, const char *cmd, int c, const char *arg);
/* Whether any resolver option was given. */
bool cli_resolve_opts_given(const cli_resolve_opts *o);
/* Resolves t's backtraces; unreadable modules are warnings. */
void cli_resolve(rt_trace *t, const cli_resolve_opts *o);
/* cli_resolve of the n backtraces bts[] (rt_resolve_bts) instead of the
 * calls'. */
void cli_resolve_bts(rt_trace *t, const cli_resolve_opts *o, uint32_t *bts, const uint64_t *index, size_t n);
/* The resolver's options of o as cli_resolve gives them, into *ro (also
 * returned); *cache: a string of theirs to free after. */
const rt_resolve_opts *cli_resolve_opts_for(const cli_resolve_opts *o, rt_resolve_opts *ro, char **cache);
void cli_resolve_opts_free(cli_resolve_opts *o);

/* suppressions.c: adds the suppressions of the file at path to set (a
 * new set when NULL) and returns it; a file that cannot be read or is
 * malformed is an error (file:line:col) and the end, exit status 2. */
struct rt_supp_set;
struct rt_supp_set *cli_read_suppressions(struct rt_supp_set *set, const char *path);

/* options.c: the value of an option spelt valgrind's way, "yes" or "no"
 * (else a usage error of cmd naming opt, "--name"). */
bool cli_parse_yes_no(const char *cmd, const char *opt, const char *arg);
/* A signal by number or name ("USR2", "SIGUSR2", "12"; not SIGKILL or
 * SIGSTOP, which no handler can take); else a usage error of cmd. */
int cli_parse_signal(const char *cmd, const char *s);

/* xml_protocol.c: --xml-protocol's value (4 or 5; else a usage error of
 * cmd), and the warning that forcing 4 leaves t's descriptor errors out. */
unsigned cli_parse_xml_protocol(const char *cmd, const char *arg);
void cli_xml_protocol_note(const rt_trace *t, unsigned protocol);

/* sarif_out.c: the findings of the n traces as one SARIF log into fd,
 * artifact URIs relative to source_root (NULL: the current directory;
 * one that does not exist is fatal), the memcheck document of rtrace's
 * findings built with vg. 0 or -errno. */
int cli_write_sarif(const rt_trace *const *t, size_t n, int fd, const char *source_root,
		    const rt_vgxml_write_opts *vg);

/* heap_diff.c: rtrace heap --diff's report of d (made from the profiles
 * before and after), and its --fail-if-grown thresholds. */
typedef struct cli_heap_diff_opts {
	uint64_t limit, sub_limit; /* sites per list, stacks per merged site */
	bool stacks;               /* a site per stack, not merged */
} cli_heap_diff_opts;
int cli_heap_diff_report(FILE *fp, const rt_hp_diff *d, const rt_hp *before, const rt_hp *after,
			 const cli_heap_diff_opts *o);
typedef struct cli_heap_growth {
	rt_hp_cost_type type;
	double amount;
	bool percent; /* amount is a percentage of the first trace's total */
} cli_heap_growth;
bool cli_heap_parse_growth(const char *arg, cli_heap_growth *g);
/* v as heaptrack_print prints figures: bytes "2.00K", "-67.54K", "0B";
 * counts "-3". buf: 40 bytes. */
const char *cli_heap_fmt(int64_t v, bool bytes, char buf[40]);
bool cli_heap_grown(const cli_heap_growth *g, const rt_hp_summary *b, const rt_hp_summary *a, char *why,
		    size_t n);

int cmd_annotate(int argc, char **argv);
int cmd_postproc(int argc, char **argv);
int cmd_resolve(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_heap(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
/* rtrace heap's tables of a series (heap_series.c). */
void cli_print_series(FILE *fp, const rt_hp_series *s);
void cli_print_sizes(FILE *fp, const rt_hp_series *s, bool exact);

#endif
