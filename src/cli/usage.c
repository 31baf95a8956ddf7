#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

bool cli_quiet;

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "rtrace: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	exit(RT_EXIT_DATA);
}

void die_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'rtrace %s --help'.\n", cmd);
	exit(RT_EXIT_USAGE);
}

void error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
}

void warning(const char *fmt, ...)
{
	if (cli_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void info(const char *fmt, ...)
{
	if (cli_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

void cli_count_warning(unsigned *count, const rt_diag *d)
{
	if (++*count > CLI_MAX_WARNINGS)
		return;
	char buf[1024];
	rt_diag_format(d, buf, sizeof buf);
	warning("%s", buf);
}

void cli_read_warning(void *count, const rt_diag *d)
{
	cli_count_warning(count, d);
}

void cli_warnings_end(unsigned count)
{
	if (count > CLI_MAX_WARNINGS)
		warning("%u more warning(s) not shown", count - CLI_MAX_WARNINGS);
}

void cli_diag_error(const rt_diag *d)
{
	char buf[1024];
	rt_diag_format(d, buf, sizeof buf);
	error("%s", buf);
}

bool cli_parse_u64(const char *s, int base, uint64_t *v)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

void cli_bad_option(const char *cmd, int c, char **argv)
{
	if (c == ':')
		die_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
	if (optopt)
		die_usage(cmd, "unknown option '-%c'", optopt);
	die_usage(cmd, "unknown option '%s'", argv[optind - 1]);
}

/* Digits in groups of three, as memcheck prints counts ("1,234,567"); buf
 * holds at least 27 bytes. */
const char *cli_grouped(uint64_t v, char *buf)
{
	return rt_grouped(v, buf);
}
