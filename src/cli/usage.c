/* The messages every subcommand prints, in git's manner: "rtrace: error:
 * ...", "rtrace: warning: ...", and death with the exit statuses of cli.h.
 * All names carry the cli_ prefix: rtrace is linked with libraries
 * (libdw, libelf) that call libc's error(3), and a function of ours
 * named error would take its place for them. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

bool cli_quiet;

/* rtrace run --log-file: where cli_info's lines go while one process's
 * report is written, and that process's id for memcheck's "==PID== "
 * prefix (log_fp NULL: stderr, "rtrace: "). Process-wide like cli_quiet,
 * because every line of the report, in whatever file prints it, must
 * follow it. */
static FILE *log_fp;
static int log_pid;
static bool log_summary; /* summary lines, which -q leaves out of a log */

void cli_info_to(FILE *fp, int pid)
{
	log_fp = fp;
	log_pid = pid;
	log_summary = false;
}

void cli_info_summary(bool summary)
{
	log_summary = summary;
}

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "rtrace: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_raw(const char *text)
{
	if (log_fp) { /* as valgrind's log has them: no "==PID== " */
		fputs(text, log_fp);
		return;
	}
	if (cli_quiet)
		return;
	fflush(stdout);
	fputs(text, stderr);
}

void cli_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	exit(RT_EXIT_DATA);
}

void cli_die_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'rtrace %s --help'.\n", cmd);
	exit(RT_EXIT_USAGE);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
}

void *cli_xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		cli_die("out of memory");
	p = realloc(p, n * size);
	if (!p && n && size)
		cli_die("out of memory");
	return p;
}

void cli_warning(const char *fmt, ...)
{
	if (cli_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void cli_info(const char *fmt, ...)
{
	va_list ap;
	if (log_fp) { /* memcheck -q keeps its errors, not its summaries */
		if (cli_quiet && log_summary)
			return;
		va_start(ap, fmt);
		fprintf(log_fp, "==%d== ", log_pid);
		vfprintf(log_fp, fmt, ap);
		fputc('\n', log_fp);
		va_end(ap);
		return;
	}
	if (cli_quiet)
		return;
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
	cli_warning("%s", buf);
}

void cli_read_warning(void *count, const rt_diag *d)
{
	cli_count_warning(count, d);
}

void cli_warnings_end(unsigned count)
{
	if (count > CLI_MAX_WARNINGS)
		cli_warning("%u more warning(s) not shown", count - CLI_MAX_WARNINGS);
}

void cli_diag_error(const rt_diag *d)
{
	char buf[1024];
	rt_diag_format(d, buf, sizeof buf);
	cli_error("%s", buf);
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
		cli_die_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
	if (optopt)
		cli_die_usage(cmd, "unknown option '-%c'", optopt);
	cli_die_usage(cmd, "unknown option '%s'", argv[optind - 1]);
}

/* Digits in groups of three, as memcheck prints counts ("1,234,567"); buf
 * holds at least 27 bytes. */
const char *cli_grouped(uint64_t v, char *buf)
{
	return rt_grouped(v, buf);
}
