/* Command lines from one table per command: each option is described once
 * (cli_option: short and long name, value, help), and both getopt_long's
 * tables and the --help text are made from that description, so the help
 * cannot forget an option the parser takes or list one it does not.
 * tests/cli/manpages.sh holds the man pages to the same tables.
 *
 * getopt_long keeps its position in optind and in argv itself, never in
 * the tables it is given, so the tables are built on the stack at each
 * call: a few dozen entries, nothing to free, no state between commands. */
#define _GNU_SOURCE
#include "cli.h"

#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* More options than any command has; a longer table is a bug. */
#define CLI_MAX_OPTIONS 48

/* getopt's short option string: ':' first (missing values reported as
 * ':'), '+' before it to stop at the first operand. */
static void short_options(const cli_command *cmd, char *s)
{
	if (cmd->stop_at_operand)
		*s++ = '+';
	*s++ = ':';
	for (size_t i = 0; i < cmd->noptions; i++) {
		const cli_option *o = &cmd->options[i];
		if (!o->short_name)
			continue;
		*s++ = o->short_name;
		if (o->arg)
			*s++ = ':';
	}
	*s = '\0';
}

static void long_options(const cli_command *cmd, struct option *v)
{
	for (size_t i = 0; i < cmd->noptions; i++) {
		const cli_option *o = &cmd->options[i];
		v[i] = (struct option){o->long_name, o->arg ? required_argument : no_argument, NULL, o->id};
	}
	v[cmd->noptions] = (struct option){NULL, 0, NULL, 0};
}

int cli_getopt(const cli_command *cmd, int argc, char **argv)
{
	if (cmd->noptions > CLI_MAX_OPTIONS)
		abort();
	struct option longopts[CLI_MAX_OPTIONS + 1];
	char shortopts[3 * CLI_MAX_OPTIONS + 3];
	long_options(cmd, longopts);
	short_options(cmd, shortopts);
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) == 'q')
		cli_quiet = true;
	if (c == 'h') {
		cli_print_help(cmd, stdout);
		exit(RT_EXIT_OK);
	}
	if (c == ':' || c == '?')
		cli_bad_option(cmd->name, c, argv);
	return c;
}

/* "  -o, --output FILE" then the help, at the help column when the option
 * leaves room for it (two spaces after it otherwise), its other lines
 * indented to that column. */
static void print_option(const cli_option *o, unsigned column, FILE *fp)
{
	int n = o->short_name ? fprintf(fp, "  -%c, --%s%s", o->short_name, o->long_name, o->arg ? o->arg : "")
			      : fprintf(fp, "      --%s%s", o->long_name, o->arg ? o->arg : "");
	const char *h = o->help;
	if (*h == '\n') {
		n = 0;
		h++;
		fputc('\n', fp);
	}
	fprintf(fp, "%*s", n < (int)column ? (int)column - n : 2, "");
	for (;;) {
		size_t len = strcspn(h, "\n");
		fprintf(fp, "%.*s\n", (int)len, h);
		if (!h[len])
			break;
		h += len + 1;
		fprintf(fp, "%*s", (int)column, "");
	}
}

void cli_print_help(const cli_command *cmd, FILE *fp)
{
	fputs(cmd->intro, fp);
	for (size_t i = 0; i < cmd->noptions; i++)
		print_option(&cmd->options[i], cmd->help_column, fp);
	fputs(cmd->epilogue, fp);
}

bool cli_parse_yes_no(const char *cmd, const char *opt, const char *arg)
{
	if (strcmp(arg, "yes") && strcmp(arg, "no"))
		cli_die_usage(cmd, "invalid %s '%s': expected yes or no", opt, arg);
	return !strcmp(arg, "yes");
}

int cli_parse_signal(const char *cmd, const char *s)
{
	uint64_t v;
	if (cli_parse_u64(s, 10, &v) && v > 0 && v < (uint64_t)NSIG && v != SIGKILL && v != SIGSTOP)
		return (int)v;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && !strcmp(abbrev, s) && sig != SIGKILL && sig != SIGSTOP)
			return sig;
	}
	cli_die_usage(cmd, "invalid signal '%s'", s);
}
