/* Shared plumbing of the rtrace command: uniform messages and the
 * subcommand entry points (one file per subcommand). */
#ifndef RT_CLI_H
#define RT_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdnoreturn.h>

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

/* Strict number parsing for option values: the whole string must parse. */
bool cli_parse_u64(const char *s, int base, uint64_t *v);

int cmd_postproc(int argc, char **argv);
int cmd_run(int argc, char **argv);

#endif
