/* rtrace check: asks a process that `rtrace run --check-signal=SIG`
 * traces for a leak check now (memcheck's `leak_check` monitor command,
 * without gdb). The request is the signal, sent with sigqueue so that
 * its value carries the mode (src/preload/leak_live.c reads it); the
 * check runs inside the process at its next heap call, and its verdicts
 * go to the trace, where `rtrace run`'s report and `rtrace postproc`
 * show them.
 *
 * Which process is traced, and with which signal, the process itself
 * says: the tracer is mapped in it (/proc/PID/maps), and the variable
 * `rtrace run` gave it (RT_ENV_CHECK_SIGNAL) is still in its initial
 * environment (/proc/PID/environ: the tracer takes its variables out of
 * environ, which leaves that memory as it was). Without the variable
 * (a program that overwrote its environment), --signal says it. */
#define _GNU_SOURCE
#include "cli.h"
#include "format/run_env.h"
#include "format/trace_format.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PRELOAD_NAME "/librtrace-preload.so"

enum { OPT_INCREASED = 256, OPT_SIGNAL };

static const cli_option options[] = {
	{0, "increased", NULL, OPT_INCREASED, "show only what grew since the previous check\n"
					      "(memcheck's leak_check ... increased)"},
	{0, "signal", "=SIG", OPT_SIGNAL, "the signal to send, when the process's\n"
					  "environment does not say (number or name)"},
	CLI_QUIET_HELP_OPTIONS("no message on success"),
};

static const cli_command command = {
	"check",
	"usage: rtrace check [options] PID...\n"
	"\n"
	"Asks each process PID, started by `rtrace run --check-signal=SIG`, for a\n"
	"leak check now, as memcheck's VALGRIND_DO_LEAK_CHECK does. The check runs\n"
	"in the process at its next call of malloc's family (any thread); its loss\n"
	"records and LEAK SUMMARY are in the trace and in rtrace run's report, in\n"
	"memcheck's words.\n"
	"\n",
	options, sizeof options / sizeof *options, 24,
	"\n"
	"Exit status: 0 when every process was asked, 1 when one is not running,\n"
	"not traced by rtrace, or traced without --check-signal, 2 on a bad\n"
	"command line.\n",
	false,
};

/* The whole of a /proc file (NUL-terminated, its length in *n), or NULL
 * with errno. */
static char *slurp(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t len = 0, cap = 4096;
	char *buf = cli_xrealloc(NULL, cap, 1);
	ssize_t r;
	while ((r = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)r;
		if (cap - len < 2)
			buf = cli_xrealloc(buf, cap *= 2, 1);
	}
	int err = errno;
	close(fd);
	if (r < 0) {
		free(buf);
		errno = err;
		return NULL;
	}
	buf[len] = '\0';
	*n = len;
	return buf;
}

/* /proc/PID/NAME, whole. */
static char *proc_file(long pid, const char *name, size_t *n)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/%s", pid, name);
	return slurp(path, n);
}

/* The check signal the process was started with: 0 when it has none, -1
 * when its environment cannot be read. */
static int env_signal(long pid)
{
	size_t n = 0;
	char *env = proc_file(pid, "environ", &n);
	if (!env)
		return -1;
	static const char key[] = RT_ENV_CHECK_SIGNAL "=";
	int sig = 0;
	for (size_t i = 0; i < n; i += strlen(env + i) + 1)
		if (!strncmp(env + i, key, sizeof key - 1))
			sig = atoi(env + i + sizeof key - 1);
	free(env);
	return sig > 0 && sig < NSIG ? sig : 0;
}

/* Whether the tracer is mapped in the process; -1 with errno when its
 * mappings cannot be read. */
static int is_traced(long pid)
{
	size_t n = 0;
	char *maps = proc_file(pid, "maps", &n);
	if (!maps)
		return -1;
	int found = strstr(maps, PRELOAD_NAME "\n") != NULL;
	free(maps);
	return found;
}

static int ask(long pid, int given, bool increased)
{
	int traced = is_traced(pid);
	if (traced < 0) {
		cli_error("process %ld: %s", pid, errno == ENOENT ? "no such process" : strerror(errno));
		return RT_EXIT_DATA;
	}
	if (!traced) {
		cli_error("process %ld is not traced by rtrace (no %s in its mappings)", pid, PRELOAD_NAME + 1);
		return RT_EXIT_DATA;
	}
	int sig = env_signal(pid);
	if (sig <= 0 && !given) {
		cli_error("process %ld was not started with rtrace run --check-signal%s; --signal names the "
			  "signal if its environment was changed", pid,
			  sig < 0 ? " (its environment cannot be read)" : "");
		return RT_EXIT_DATA;
	}
	if (given)
		sig = given;
	union sigval v = {.sival_int = increased ? RT_TF_CHECK_INCREASED : RT_TF_CHECK_FULL};
	if (sigqueue((pid_t)pid, sig, v)) {
		cli_error("process %ld: cannot send signal %d: %s", pid, sig, strerror(errno));
		return RT_EXIT_DATA;
	}
	if (!cli_quiet)
		fprintf(stderr, "rtrace: asked process %ld for a%s leak check (SIG%s)\n", pid,
			increased ? "n increased" : " full", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	return RT_EXIT_OK;
}

int cmd_check(int argc, char **argv)
{
	bool increased = false;
	int sig = 0, c, rc = RT_EXIT_OK;
	while ((c = cli_getopt(&command, argc, argv)) != -1) {
		if (c == OPT_INCREASED)
			increased = true;
		else if (c == OPT_SIGNAL)
			sig = cli_parse_signal("check", optarg);
	}
	if (optind >= argc)
		cli_die_usage("check", "no process id");
	for (int i = optind; i < argc; i++) {
		uint64_t pid;
		if (!cli_parse_u64(argv[i], 10, &pid) || !pid || pid > INT32_MAX)
			cli_die_usage("check", "invalid process id '%s'", argv[i]);
	}
	for (int i = optind; i < argc; i++) {
		int r = ask(strtol(argv[i], NULL, 10), sig, increased);
		rc = r ? r : rc;
	}
	return rc;
}
