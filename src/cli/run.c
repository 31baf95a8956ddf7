/* rtrace run: starts a program with the tracer preloaded, passes its exit
 * status through, forwards the signals sent to us, and names the traces.
 * This file launches; the reports on the traces, once the program has
 * exited, are run_report.c's (it never calls back here). */
#define _GNU_SOURCE
#include "cli.h"
#include "format/run_env.h"
#include "run_report.h"
#include "run_compress.h"
#include "run_prefault.h"
#include "run_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RTRACE_LIBDIR
#define RTRACE_LIBDIR "/usr/local/lib"
#endif

enum { OPT_FREES = 256, OPT_FOLLOW, OPT_PAUSED, OPT_TOGGLE, OPT_NO_TS, OPT_UNWINDER,
       OPT_LEAK_CHECK, OPT_SHOW_KINDS, OPT_ERROR_KINDS, OPT_ERROR_EXITCODE, OPT_XML_FILE,
       OPT_GEN_SUPP, OPT_LIST_MODULES, OPT_NUM_CALLERS, OPT_BELOW_MAIN, OPT_XML_PROTOCOL,
       OPT_LOG_FILE, OPT_TOOL, OPT_SHOW_REACHABLE, OPT_TRACE_CHILDREN, OPT_SUPPRESSIONS,
       OPT_SARIF_FILE, OPT_SOURCE_ROOT, OPT_CHECK_SIGNAL, OPT_COMPRESS,
       OPT_MIN_LIFETIME };

static const cli_option options[] = {
	{'m', "modules", " LIST", 'm', "what to trace, a comma separated list of modules\n"
				       "(default: memory); --list-modules lists them"},
	{0, "list-modules", NULL, OPT_LIST_MODULES, "describe the modules and their resource types"},
	{'o', "output-dir", " DIR", 'o', "where traces go (default: current directory);\n"
				       "created 0700 when missing"},
	{'b', "backtrace-depth", " N", 'b', "frames per backtrace, 1-256 (default 32)"},
	{0, "trace-frees", NULL, OPT_FREES, "record backtraces of releases too"},
	{0, "follow-children", NULL, OPT_FOLLOW, "trace programs started with exec as well"},
	{0, "trace-children", "=yes|no", OPT_TRACE_CHILDREN, "valgrind's name of --follow-children"},
	{0, "start-paused", NULL, OPT_PAUSED, "start with tracing off (see --toggle-signal)"},
	{0, "toggle-signal", " SIG", OPT_TOGGLE, "signal that turns tracing on and off\n"
						 "(number or name; default SIGUSR1 when\n"
						 "--start-paused is given)"},
	{0, "check-signal", "=SIG", OPT_CHECK_SIGNAL, "signal that asks for a leak check now, run at the\n"
						      "next heap call of any thread; its verdicts go in\n"
						      "the trace and the report (see rtrace check)"},
	{0, "min-lifetime", "=N[ms]", OPT_MIN_LIFETIME, "leave out of the trace each block its thread frees\n"
							"within its next N (1-4096) memory calls, or N\n"
							"milliseconds, counted per stack instead; live\n"
							"blocks and leak verdicts stay exact"},
	{0, "no-timestamps", NULL, OPT_NO_TS, "do not record call times"},
	{0, "unwinder", " NAME", OPT_UNWINDER, "how stacks are read: 'cached' (default; unwind\n"
					       "rules cached per return address, libunwind for\n"
					       "the frames they cannot describe), 'libunwind',\n"
					       "or 'check' (both, differences shown at exit)"},
	{0, "leak-check", "=MODE", OPT_LEAK_CHECK, "at exit, classify the blocks still allocated as\n"
						   "memcheck does: full (default: totals and each\n"
						   "block's verdict in the trace, loss records on\n"
						   "stderr; yes is full), summary (totals) or no"},
	{0, "show-leak-kinds", "=SET", OPT_SHOW_KINDS, "loss records printed (default definite,possible;\n"
						       "SET: definite,indirect,possible,reachable, all\n"
						       "or none)"},
	{0, "show-reachable", "=yes|no", OPT_SHOW_REACHABLE, "yes: --show-leak-kinds=all; no: its default"},
	{0, "num-callers", "=N", OPT_NUM_CALLERS, "frames of each stack in the report, 1-500,\n"
						  "the allocator's included (default 12)"},
	{0, "show-below-main", "=yes|no", OPT_BELOW_MAIN, "show the frames below main (default no)"},
	{0, "errors-for-leak-kinds", "=SET", OPT_ERROR_KINDS, "loss records that count as errors\n"
							      "(default definite,possible)"},
	{0, "error-exitcode", "=N", OPT_ERROR_EXITCODE, "exit with N when errors were found (heap errors,\n"
							"leaks of the kinds above with full, or a\n"
							"trace incomplete or lost); a program killed\n"
							"by a signal kills rtrace run with it all the same"},
	{0, "log-file", "=FILE", OPT_LOG_FILE, "write the report to FILE, not stderr, as\n"
					       "memcheck's --log-file does (\"==PID== \" before\n"
					       "each line; -q: the errors and loss records\n"
					       "only); %p, %q{VAR} and %% as in --xml-file"},
	{0, "tool", "=memcheck", OPT_TOOL, "accepted for valgrind's command line; memcheck\n"
					   "is the only tool"},
	{0, "xml-file", "=FILE", OPT_XML_FILE, "also write the findings as Valgrind XML\n"
					       "(memcheck's, frames resolved) to\n"
					       "FILE; %p is the process id, %q{VAR} the value\n"
					       "of VAR, %% a %; processes that share a FILE\n"
					       "append their documents to it, as with valgrind;\n"
					       "a new file (0600) renamed over FILE"},
	{0, "xml-protocol", "=4|5", OPT_XML_PROTOCOL, "with --xml-file: the protocol (default 4, 5 when\n"
						      "there are descriptor errors, -m fd); 4 leaves\n"
						      "those out, 5 writes 5 even without them"},
	{0, "gen-suppressions", "=MODE", OPT_GEN_SUPP, "all: after each error and loss record, the\n"
						       "suppression that hides it, as valgrind writes\n"
						       "it (in the XML file too); yes: the same (the\n"
						       "report comes after the program, nothing to\n"
						       "ask); no (default)"},
	{0, "suppressions", "=FILE", OPT_SUPPRESSIONS, "hide the errors and loss records a Valgrind\n"
						       "suppression file or a LeakSanitizer one\n"
						       "(leak:PATTERN lines) matches; repeatable"},
	{'v', "verbose", NULL, 'v', "also list the suppressions used\n"
				    "(memcheck -v's used_suppression lines)"},
	{0, "sarif-file", "=FILE", OPT_SARIF_FILE, "also write the findings as SARIF 2.1.0 (GitHub\n"
						   "code scanning) to FILE, named as --xml-file's;\n"
						   "processes that share a FILE share its log"},
	{0, "source-root", "=DIR", OPT_SOURCE_ROOT, "with --sarif-file: file URIs relative to DIR\n"
						    "(default: the current directory)"},
	{0, "compress", "=LEVEL|no", OPT_COMPRESS, "compress the traces while the program runs, at\n"
						  "zstd level 1-19 (default 1); no: raw traces"},
	CLI_QUIET_HELP_OPTIONS("only the program's own output (with --log-file:\n"
			       "the log has the errors, not the summaries)"),
};

static const cli_command command = {
	"run",
	"usage: rtrace run [options] [--] PROGRAM [ARGS...]\n"
	"       rtrace OPTION... [--] PROGRAM [ARGS...]   (the same, as valgrind)\n"
	"\n"
	"Runs PROGRAM with the tracer preloaded (no recompilation) and writes a\n"
	"binary trace of its memory allocations with their call stacks, one file\n"
	"per process, named <program>-<pid>.rtrace. `rtrace postproc -lc -i FILE`\n"
	"lists what leaked.\n"
	"\n",
	options, sizeof options / sizeof *options, 28,
	"\n"
	"Exit status: the program's (N of --error-exitcode when errors were\n"
	"found); if a signal killed the program, rtrace run is killed by the\n"
	"same signal once its reports are out (as valgrind is; no core dump of\n"
	"its own), so a shell shows 128+N; 127 if it could not be started; 2\n"
	"on a bad command line, a suppression file that cannot be read or an\n"
	"output directory that cannot be written (nothing is run); 1 when an\n"
	"XML, SARIF or log file could not be written (if the status would be 0\n"
	"otherwise).\n",
	true, /* options end at the program name */
};

typedef struct run_opts {
	const char *dir;
	const char *modules; /* -m LIST, or NULL: memory */
	bool list_modules;
	unsigned depth;
	bool trace_frees, follow, start_paused, no_timestamps;
	char unwinder; /* flag letter: 0 cached, 'u' libunwind, 'k' check */
	int toggle_signal;
	int check_signal; /* 0: none */
	unsigned min_lifetime; /* 0: no lifetime filter */
	bool lifetime_ms;      /* min_lifetime is in milliseconds */
	const char *leak_check; /* full, summary or no */
	int compress;           /* zstd level; 0: raw traces */
	run_report_opts report; /* what is reported on the traces */
} run_opts;

/* --min-lifetime=N (calls, 1-4096; "calls" may follow) or Nms (1 ms to
 * an hour). */
static void parse_lifetime(const char *arg, run_opts *o)
{
	char num[32];
	size_t n = strspn(arg, "0123456789");
	const char *unit = arg + n;
	uint64_t v = 0;
	o->lifetime_ms = !strcmp(unit, "ms");
	if (n && n < sizeof num) {
		memcpy(num, arg, n);
		num[n] = '\0';
		cli_parse_u64(num, 10, &v);
	}
	if (!n || n >= sizeof num || (*unit && !o->lifetime_ms && strcmp(unit, "calls")) || v == 0 ||
	    v > (o->lifetime_ms ? 3600000u : 4096u))
		cli_die_usage("run", "invalid --min-lifetime '%s': expected 1 to 4096 (calls) or 1ms to 3600000ms", arg);
	o->min_lifetime = (unsigned)v;
}

/* The heap checking options, as memcheck spells them. */
static void parse_leak_option(int c, const char *arg, run_opts *o)
{
	uint64_t v;
	switch (c) {
	case OPT_LEAK_CHECK:
		if (!strcmp(arg, "yes")) /* valgrind's synonym */
			arg = "full";
		if (strcmp(arg, "full") && strcmp(arg, "summary") && strcmp(arg, "no"))
			cli_die_usage("run", "invalid --leak-check '%s': expected full (yes), summary or no", arg);
		o->leak_check = arg;
		o->report.leaks.mode = !strcmp(arg, "full")      ? RT_LEAK_CHECK_FULL
				       : !strcmp(arg, "summary") ? RT_LEAK_CHECK_SUMMARY
								 : 0;
		break;
	case OPT_SHOW_KINDS:
	case OPT_ERROR_KINDS:
		if (!leak_parse_kinds(arg, c == OPT_SHOW_KINDS ? &o->report.leaks.show : &o->report.leaks.errors_for))
			cli_die_usage("run", "invalid leak kinds '%s': expected a list of definite, indirect, "
				  "possible, reachable, or all or none", arg);
		break;
	case OPT_ERROR_EXITCODE:
		if (!cli_parse_u64(arg, 10, &v) || v > 255)
			cli_die_usage("run", "invalid --error-exitcode '%s': expected 0 to 255", arg);
		o->report.error_exitcode = (int)v;
		break;
	case OPT_XML_FILE:
		if (!*arg)
			cli_die_usage("run", "--xml-file needs a file name");
		o->report.xml_file = arg;
		break;
	case OPT_NUM_CALLERS:
		if (!cli_parse_u64(arg, 10, &v) || v == 0 || v > 500)
			cli_die_usage("run", "invalid --num-callers '%s': expected 1 to 500", arg);
		o->report.leaks.stack.num_callers = (uint32_t)v;
		break;
	case OPT_BELOW_MAIN:
		o->report.leaks.stack.below_main = cli_parse_yes_no("run", "--show-below-main", arg);
		break;
	case OPT_GEN_SUPP:
		if (strcmp(arg, "all") && strcmp(arg, "yes") && strcmp(arg, "no"))
			cli_die_usage("run", "invalid --gen-suppressions '%s': expected all, yes or no", arg);
		o->report.gen_suppressions = o->report.leaks.gen_suppressions = strcmp(arg, "no") != 0;
		break;
	case OPT_SUPPRESSIONS:
		o->report.supp = cli_read_suppressions(o->report.supp, arg);
		break;
	case OPT_XML_PROTOCOL:
		o->report.xml_protocol = cli_parse_xml_protocol("run", arg);
		break;
	case OPT_SARIF_FILE:
		if (!*arg)
			cli_die_usage("run", "--sarif-file needs a file name");
		o->report.sarif_file = arg;
		break;
	case OPT_SOURCE_ROOT: {
		struct stat st;
		if (stat(arg, &st) || !S_ISDIR(st.st_mode))
			cli_die_usage("run", "invalid --source-root '%s': not a directory", arg);
		o->report.source_root = arg;
		break;
	}
	}
}

/* The options valgrind spells its own way, so that tools which start
 * valgrind (CTest's memcheck, CI scripts) start rtrace the same way. */
static void parse_valgrind_option(int c, const char *arg, run_opts *o)
{
	switch (c) {
	case OPT_LOG_FILE:
		if (!*arg)
			cli_die_usage("run", "--log-file needs a file name");
		o->report.log_file = arg;
		break;
	case OPT_TOOL:
		if (strcmp(arg, "memcheck"))
			cli_die_usage("run", "--tool=%s is not supported: rtrace checks the heap as "
				  "memcheck does (--tool=memcheck), and has no other tool", arg);
		break;
	case OPT_SHOW_REACHABLE:
		o->report.leaks.show = cli_parse_yes_no("run", "--show-reachable", arg) ? LEAK_KINDS_ALL : LEAK_KINDS_DEFAULT;
		break;
	case OPT_TRACE_CHILDREN:
		o->follow = cli_parse_yes_no("run", "--trace-children", arg);
		break;
	}
}

static int parse_options(int argc, char **argv, run_opts *o)
{
	uint64_t v;
	int c;
	while ((c = cli_getopt(&command, argc, argv)) != -1) {
		switch (c) {
		case 'o': o->dir = optarg; break;
		case 'm': o->modules = optarg; break;
		case OPT_LIST_MODULES: o->list_modules = true; return optind;
		case 'b':
			if (!cli_parse_u64(optarg, 10, &v) || v == 0 || v > 256)
				cli_die_usage("run", "invalid backtrace depth '%s': expected 1 to 256", optarg);
			o->depth = (unsigned)v;
			break;
		case OPT_FREES: o->trace_frees = true; break;
		case OPT_FOLLOW: o->follow = true; break;
		case OPT_PAUSED: o->start_paused = true; break;
		case OPT_TOGGLE: o->toggle_signal = cli_parse_signal("run", optarg); break;
		case OPT_CHECK_SIGNAL: o->check_signal = cli_parse_signal("run", optarg); break;
		case OPT_MIN_LIFETIME: parse_lifetime(optarg, o); break;
		case OPT_NO_TS: o->no_timestamps = true; break;
		case OPT_UNWINDER:
			if (!strcmp(optarg, "libunwind"))
				o->unwinder = RT_FLAG_LIBUNWIND[0];
			else if (!strcmp(optarg, "check"))
				o->unwinder = RT_FLAG_CHECK_UNWIND[0];
			else if (!strcmp(optarg, "cached"))
				o->unwinder = 0;
			else
				cli_die_usage("run", "invalid unwinder '%s': expected cached, libunwind or check", optarg);
			break;
		case OPT_LEAK_CHECK:
		case OPT_SHOW_KINDS:
		case OPT_ERROR_KINDS:
		case OPT_ERROR_EXITCODE:
		case OPT_XML_FILE:
		case OPT_NUM_CALLERS:
		case OPT_BELOW_MAIN:
		case OPT_GEN_SUPP:
		case OPT_SUPPRESSIONS:
		case OPT_XML_PROTOCOL:
		case OPT_SARIF_FILE:
		case OPT_SOURCE_ROOT: parse_leak_option(c, optarg, o); break;
		case OPT_LOG_FILE:
		case OPT_TOOL:
		case OPT_SHOW_REACHABLE:
		case OPT_TRACE_CHILDREN: parse_valgrind_option(c, optarg, o); break;
		case 'v': o->report.verbose = true; break;
		case OPT_COMPRESS:
			if (!strcmp(optarg, "no"))
				o->compress = 0;
			else if (!cli_parse_u64(optarg, 10, &v) || v < 1 || v > 19)
				cli_die_usage("run", "invalid --compress '%s': expected a level 1 to 19 or no", optarg);
			else
				o->compress = (int)v;
			break;
		}
	}
	if (optind >= argc)
		cli_die_usage("run", "no program to run");
	if (!o->depth && o->report.leaks.stack.num_callers > 32) /* the tracer's default depth */
		o->depth = o->report.leaks.stack.num_callers > 256 ? 256 : o->report.leaks.stack.num_callers;
	if (o->report.xml_protocol && !o->report.xml_file)
		cli_die_usage("run", "--xml-protocol applies to --xml-file; add it");
	if (o->report.source_root && !o->report.sarif_file)
		cli_die_usage("run", "--source-root applies to --sarif-file; add it");
	if (o->start_paused && !o->toggle_signal)
		o->toggle_signal = SIGUSR1;
	if (o->check_signal && o->check_signal == o->toggle_signal)
		cli_die_usage("run", "--check-signal and --toggle-signal name the same signal");
	if (o->check_signal && o->leak_check && !strcmp(o->leak_check, "no"))
		cli_die_usage("run", "--check-signal needs a leak check; not with --leak-check=no");
	return optind;
}

/* The tracer sits next to the rtrace binary in a build tree, or in the
 * library directory once installed; RTRACE_PRELOAD overrides both. */
static const char *find_preload(char *buf, size_t len)
{
	const char *env = getenv(RT_ENV_PRELOAD);
	if (env && *env)
		return env;
	char exe[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(buf, len, "%s/librtrace-preload.so", exe);
			if (access(buf, R_OK) == 0)
				return buf;
		}
	}
	snprintf(buf, len, "%s/librtrace-preload.so", RTRACE_LIBDIR);
	if (access(buf, R_OK) == 0)
		return buf;
	cli_die("cannot find librtrace-preload.so (looked next to rtrace and in %s; set " RT_ENV_PRELOAD ")",
	    RTRACE_LIBDIR);
}

/* mkdir -p for one path component at a time: the parents as mkdir -p
 * makes them, the output directory itself 0700 (the traces are private). */
static int make_dirs(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		int rc = mkdir(path, 0777);
		*s = '/';
		if (rc && errno != EEXIST)
			return -1;
	}
	return mkdir(path, 0700) && errno != EEXIST ? -1 : 0;
}

/* The -o directory, created if missing and writable, or rtrace run stops
 * before running the program: a program run untraced would look like a
 * clean run to whoever reads the exit status. */
static void prepare_dir(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	int err = ENAMETOOLONG;
	if (snprintf(path, sizeof path, "%s", dir) < (int)sizeof path) {
		if (make_dirs(path) || stat(path, &st))
			err = errno;
		else if (!S_ISDIR(st.st_mode))
			err = ENOTDIR;
		else if (access(path, W_OK | X_OK))
			err = errno;
		else
			return;
	}
	cli_error("output directory '%s': %s; nothing was run", dir, strerror(err));
	exit(RT_EXIT_USAGE);
}

static void set_env(const run_opts *o, const char *preload, const char *manifest)
{
	char buf[PATH_MAX * 2], dir[PATH_MAX];
	const char *user = getenv("LD_PRELOAD");
	if (user) { /* even empty: the program gets it back as it was */
		snprintf(buf, sizeof buf, *user ? "%s:%s" : "%s", preload, user);
		setenv(RT_ENV_USER_LD_PRELOAD, user, 1);
	} else {
		snprintf(buf, sizeof buf, "%s", preload);
		unsetenv(RT_ENV_USER_LD_PRELOAD);
	}
	setenv("LD_PRELOAD", buf, 1);
	if (!realpath(o->dir, dir))
		cli_die("output directory '%s': %s", o->dir, strerror(errno));
	setenv(RT_ENV_DIR, dir, 1);
	setenv(RT_ENV_MANIFEST, manifest, 1);
	snprintf(buf, sizeof buf, "%u", o->depth ? o->depth : 32);
	setenv(RT_ENV_DEPTH, buf, 1);
	snprintf(buf, sizeof buf, "%s%s%s%s%s%c", o->no_timestamps ? RT_FLAG_NO_TIMESTAMPS : "",
		 o->trace_frees ? RT_FLAG_TRACE_FREES : "", o->follow ? RT_FLAG_FOLLOW : "",
		 o->start_paused ? RT_FLAG_START_PAUSED : "", o->compress ? RT_FLAG_COMPRESS : "",
		 o->unwinder);
	setenv(RT_ENV_FLAGS, buf, 1);
	snprintf(buf, sizeof buf, "%d", o->toggle_signal);
	setenv(RT_ENV_TOGGLE_SIGNAL, buf, 1);
	snprintf(buf, sizeof buf, "%d", o->check_signal);
	setenv(RT_ENV_CHECK_SIGNAL, buf, 1);
	snprintf(buf, sizeof buf, "%u%s", o->min_lifetime, o->lifetime_ms ? "ms" : "");
	setenv(RT_ENV_MIN_LIFETIME, buf, 1);
	/* memcheck's XML has the full leak check's loss records whatever
	 * --leak-check says (its report on stderr follows the option) */
	setenv(RT_ENV_LEAK_CHECK, o->report.xml_file || o->report.sarif_file || o->report.supp ? "full" : o->leak_check, 1);
	setenv(RT_ENV_MODULES, o->modules ? o->modules : RT_ENV_MODULES_DEFAULT, 1);
}

/* The tracer's modules, one "name<TAB>description<TAB>types" line each,
 * as the tracer itself describes them: loaded into /bin/true, it prints
 * them and exits. NULL when it could not be run. */
static char *module_lines(const char *preload)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return NULL;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		setenv("LD_PRELOAD", preload, 1);
		setenv(RT_ENV_LIST_MODULES, "1", 1);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	char *buf = calloc(1, 65536);
	size_t n = 0;
	ssize_t got;
	while (buf && n < 65535 && (got = read(p[0], buf + n, 65535 - n)) != 0)
		if (got > 0)
			n += (size_t)got;
		else if (errno != EINTR)
			break;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	if (buf && !n) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

static void list_modules(const char *lines)
{
	for (const char *l = lines; *l;) {
		size_t len = strcspn(l, "\n");
		const char *t1 = memchr(l, '\t', len), *t2 = t1 ? memchr(t1 + 1, '\t', len - (size_t)(t1 + 1 - l)) : NULL;
		if (t2)
			printf("%-8.*s %.*s\n         types: %.*s\n", (int)(t1 - l), l, (int)(t2 - t1 - 1), t1 + 1,
			       (int)(len - (size_t)(t2 + 1 - l)), t2 + 1);
		l += len + (l[len] == '\n');
	}
}

/* Each name of -m LIST must be a module of the tracer. */
static void check_modules(const char *list, const char *lines)
{
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		bool found = false;
		for (const char *l = lines; *l && !found; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n'))
			found = len && !strncmp(l, p, len) && l[len] == '\t';
		if (!found)
			cli_die_usage("run", "unknown module '%.*s' in --modules: expected a list of "
				  "modules (rtrace run --list-modules shows them)", (int)len, p);
		p += len + (p[len] == ',');
	}
}

static volatile pid_t child_pid;

/* Signals sent to rtrace with kill() go on to the program; those from the
 * terminal reached the whole process group, the program included. */
static void forward(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	if (child_pid > 0 && info->si_code == SI_USER)
		kill(child_pid, sig);
}

/* A signal rtrace run was started with ignored (nohup, `trap '' HUP`)
 * stays ignored: a handler would be reset to the default by exec, and
 * the program, which would have inherited SIG_IGN, would die of it. */
static void install_forwarding(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	struct sigaction sa = {.sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

/* The program's exit status, or 128+N when signal N killed it (*sig N);
 * z compresses the traces meanwhile. */
static int wait_child(pid_t pid, int *sig, run_compress *z)
{
	int status;
	while ((z ? run_compress_wait(z, pid, &status) : waitpid(pid, &status, 0)) < 0)
		if (errno != EINTR)
			cli_die("waitpid: %s", strerror(errno));
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	*sig = WTERMSIG(status);
	return 128 + *sig;
}

/* The program was killed by sig: so is rtrace run, once its reports are
 * out, as valgrind does, so that whoever started it sees the signal
 * (WIFSIGNALED, the shell's "Segmentation fault") and not an exit code.
 * Without a core dump of its own: the program's is the one that counts.
 * Returns only if the signal does not end the process (it cannot be
 * raised), and the caller exits with 128+N. */
static void die_by(int sig)
{
	struct rlimit no_core = {0, 0};
	setrlimit(RLIMIT_CORE, &no_core);
	fflush(NULL);
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

/* The manifest the traced processes announce their traces in: in
 * /dev/shm where it can be made there, else in $TMPDIR or /tmp. Its
 * blocks are reserved at once, so that a disk filled later (by the
 * traces, say) cannot stop the processes from saying what happened; on
 * a disk, giving them back at the end was the largest part of rtrace
 * run's own end (ext4 mounted with discard: ~0.1-0.3 ms a run, against
 * ~0.02 ms on tmpfs). */
static void make_manifest(char *path, size_t cap)
{
	const char *tmp = getenv("TMPDIR");
	const char *dirs[] = {"/dev/shm", tmp && *tmp && strcmp(tmp, "/tmp") ? tmp : NULL, "/tmp"};
	/* within the file size limit the program runs under: tmpfs checks it
	 * for a reservation too (SIGXFSZ), where ext4 did not */
	struct rlimit fs;
	off_t reserve = 1 << 16;
	if (!getrlimit(RLIMIT_FSIZE, &fs) && fs.rlim_cur != RLIM_INFINITY && (rlim_t)reserve > fs.rlim_cur)
		reserve = (off_t)fs.rlim_cur;
	int err = 0;
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		if (!dirs[i] || (size_t)snprintf(path, cap, "%s/rtrace-run-XXXXXX", dirs[i]) >= cap)
			continue;
		int fd = mkstemp(path);
		if (fd >= 0) {
			if (reserve > 0)
				(void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, reserve);
			close(fd);
			return;
		}
		err = errno;
	}
	cli_die("cannot create a temporary file: %s", strerror(err));
}

int cmd_run(int argc, char **argv)
{
	run_opts o = {.dir = ".", .leak_check = "full", .compress = 1,
		      .report = {.leaks = {LEAK_KINDS_DEFAULT, LEAK_KINDS_DEFAULT, {12, false}, RT_LEAK_CHECK_FULL}}};
	int first = parse_options(argc, argv, &o);
	char preload_buf[PATH_MAX];
	const char *preload = find_preload(preload_buf, sizeof preload_buf);
	if (o.list_modules || o.modules) {
		char *lines = module_lines(preload);
		if (!lines)
			cli_die("cannot run the tracer to list its modules");
		if (o.list_modules)
			list_modules(lines);
		else
			check_modules(o.modules, lines);
		free(lines);
		if (o.list_modules)
			return RT_EXIT_OK;
	}

	prepare_dir(o.dir);
	char manifest[PATH_MAX];
	make_manifest(manifest, sizeof manifest);
	set_env(&o, preload, manifest);
	/* trace files made ahead by a thread of ours (run_pool.c), for the
	 * many processes --follow-children traces (for one, making 8 cost
	 * more than it saved) */
	char pool[64];
	run_pool *pl = o.follow ? run_pool_start(o.dir, pool, sizeof pool) : NULL;
	if (pl)
		setenv(RT_ENV_POOL, pool, 1);
	else
		unsetenv(RT_ENV_POOL);
	o.report.program = argv[first];

	install_forwarding();
	/* a close-on-exec pipe tells a failed exec from a program's own exit */
	int ep[2];
	if (pipe2(ep, O_CLOEXEC))
		cli_die("pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		cli_die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(ep[0]);
		execvp(argv[first], argv + first);
		int err = errno;
		(void)!write(ep[1], &err, sizeof err);
		_exit(err == ENOENT ? 127 : 126);
	}
	close(ep[1]);
	child_pid = pid;
	int err = 0;
	ssize_t got;
	while ((got = read(ep[0], &err, sizeof err)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	run_prefault *pf = run_prefault_start(manifest, o.compress != 0);
	run_compress *z = o.compress ? run_compress_new(manifest, o.compress, pf) : NULL;
	int sig = 0, rc = wait_child(pid, &sig, z);
	run_pool_stop(pl);
	run_prefault_stop(pf);
	if (z)
		run_compress_finish(z);
	if (sig) /* memcheck's "Process terminating with default action of signal" */
		cli_info("Process %d killed by signal %d (SIG%s)", (int)pid, sig,
			 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	if (got == (ssize_t)sizeof err)
		cli_error("cannot run '%s': %s", argv[first], strerror(err));
	else if (run_report_traces(manifest, pid, &o.report) && o.report.error_exitcode)
		rc = o.report.error_exitcode;
	if (o.report.xml_failed || o.report.log_failed) /* findings missing, as with a lost trace */
		rc = o.report.error_exitcode ? o.report.error_exitcode : rc ? rc : RT_EXIT_DATA;
	unlink(manifest);
	run_report_free(&o.report);
	if (sig)
		die_by(sig);
	return rc;
}
