/* rtrace run: starts a program with the tracer preloaded, passes its exit
 * status through, forwards the signals sent to us, and names the traces. */
#define _GNU_SOURCE
#include "cli.h"
#include "rtrace/binary.h"
#include "rtrace/filter.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RTRACE_LIBDIR
#define RTRACE_LIBDIR "/usr/local/lib"
#endif

static const char usage_text[] =
	"usage: rtrace run [options] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Runs PROGRAM with the tracer preloaded (no recompilation) and writes a\n"
	"binary trace of its memory allocations with their call stacks, one file\n"
	"per process, named <program>-<pid>.rtrace. `rtrace postproc -lc -i FILE`\n"
	"lists what leaked.\n"
	"\n"
	"  -o, --output-dir DIR      where traces go (default: current directory)\n"
	"  -b, --backtrace-depth N   frames per backtrace, 1-256 (default 32)\n"
	"      --trace-frees         record backtraces of releases too\n"
	"      --follow-children     trace programs started with exec as well\n"
	"      --start-paused        start with tracing off (see --toggle-signal)\n"
	"      --toggle-signal SIG   signal that turns tracing on and off\n"
	"                            (number or name; default SIGUSR1 when\n"
	"                            --start-paused is given)\n"
	"      --no-timestamps       do not record call times\n"
	"      --unwinder NAME       how stacks are read: 'cached' (default; unwind\n"
	"                            rules cached per return address, libunwind for\n"
	"                            the frames they cannot describe), 'libunwind',\n"
	"                            or 'check' (both, differences shown at exit)\n"
	"  -q, --quiet               only the program's own output\n"
	"  -h, --help                this help\n"
	"\n"
	"Exit status: the program's; 128+N if it was killed by signal N; 127 if it\n"
	"could not be started; 2 on a bad command line.\n";

typedef struct run_opts {
	const char *dir;
	unsigned depth;
	bool trace_frees, follow, start_paused, no_timestamps;
	char unwinder; /* flag letter: 0 cached, 'u' libunwind, 'k' check */
	int toggle_signal;
} run_opts;

enum { OPT_FREES = 256, OPT_FOLLOW, OPT_PAUSED, OPT_TOGGLE, OPT_NO_TS, OPT_UNWINDER };

static int parse_signal(const char *s)
{
	uint64_t v;
	if (cli_parse_u64(s, 10, &v) && v > 0 && v < (uint64_t)NSIG)
		return (int)v;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && !strcmp(abbrev, s))
			return sig;
	}
	die_usage("run", "invalid signal '%s'", s);
}

static int parse_options(int argc, char **argv, run_opts *o)
{
	static const struct option longopts[] = {
		{"output-dir", required_argument, NULL, 'o'},
		{"backtrace-depth", required_argument, NULL, 'b'},
		{"trace-frees", no_argument, NULL, OPT_FREES},
		{"follow-children", no_argument, NULL, OPT_FOLLOW},
		{"start-paused", no_argument, NULL, OPT_PAUSED},
		{"toggle-signal", required_argument, NULL, OPT_TOGGLE},
		{"no-timestamps", no_argument, NULL, OPT_NO_TS},
		{"unwinder", required_argument, NULL, OPT_UNWINDER},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c;
	opterr = 0;
	/* '+': options end at the program name */
	while ((c = getopt_long(argc, argv, "+:o:b:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->dir = optarg; break;
		case 'b':
			if (!cli_parse_u64(optarg, 10, &v) || v == 0 || v > 256)
				die_usage("run", "invalid backtrace depth '%s': expected 1 to 256", optarg);
			o->depth = (unsigned)v;
			break;
		case OPT_FREES: o->trace_frees = true; break;
		case OPT_FOLLOW: o->follow = true; break;
		case OPT_PAUSED: o->start_paused = true; break;
		case OPT_TOGGLE: o->toggle_signal = parse_signal(optarg); break;
		case OPT_NO_TS: o->no_timestamps = true; break;
		case OPT_UNWINDER:
			if (!strcmp(optarg, "libunwind"))
				o->unwinder = 'u';
			else if (!strcmp(optarg, "check"))
				o->unwinder = 'k';
			else if (!strcmp(optarg, "cached"))
				o->unwinder = 0;
			else
				die_usage("run", "invalid unwinder '%s': expected cached, libunwind or check", optarg);
			break;
		case 'q': cli_quiet = true; break;
		case 'h': fputs(usage_text, stdout); exit(RT_EXIT_OK);
		default: cli_bad_option("run", c, argv);
		}
	}
	if (optind >= argc)
		die_usage("run", "no program to run");
	if (o->start_paused && !o->toggle_signal)
		o->toggle_signal = SIGUSR1;
	return optind;
}

/* The tracer sits next to the rtrace binary in a build tree, or in the
 * library directory once installed; RTRACE_PRELOAD overrides both. */
static const char *find_preload(char *buf, size_t len)
{
	const char *env = getenv("RTRACE_PRELOAD");
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
	die("cannot find librtrace-preload.so (looked next to rtrace and in %s; set RTRACE_PRELOAD)",
	    RTRACE_LIBDIR);
}

static void set_env(const run_opts *o, const char *preload, const char *manifest)
{
	char buf[PATH_MAX * 2], dir[PATH_MAX];
	const char *user = getenv("LD_PRELOAD");
	if (user && *user) {
		snprintf(buf, sizeof buf, "%s:%s", preload, user);
		setenv("RTRACE_USER_LD_PRELOAD", user, 1);
	} else {
		snprintf(buf, sizeof buf, "%s", preload);
		unsetenv("RTRACE_USER_LD_PRELOAD");
	}
	setenv("LD_PRELOAD", buf, 1);
	if (!realpath(o->dir, dir))
		die("output directory '%s': %s", o->dir, strerror(errno));
	setenv("RTRACE_DIR", dir, 1);
	setenv("RTRACE_MANIFEST", manifest, 1);
	snprintf(buf, sizeof buf, "%u", o->depth ? o->depth : 32);
	setenv("RTRACE_DEPTH", buf, 1);
	snprintf(buf, sizeof buf, "%s%s%s%s%c", o->no_timestamps ? "T" : "",
		 o->trace_frees ? "f" : "", o->follow ? "c" : "", o->start_paused ? "p" : "",
		 o->unwinder);
	setenv("RTRACE_FLAGS", buf, 1);
	snprintf(buf, sizeof buf, "%d", o->toggle_signal);
	setenv("RTRACE_TOGGLE_SIGNAL", buf, 1);
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

static void install_forwarding(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	struct sigaction sa = {.sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaction(sigs[i], &sa, NULL);
}

static int wait_child(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

typedef struct heap_totals {
	rt_leaks *leaks;
	uint64_t allocs, frees, bytes;
} heap_totals;

static void count_call(void *ctx, rt_trace *t, const rt_call *c)
{
	heap_totals *h = ctx;
	if (c->kind == RT_CALL_ALLOC) {
		h->allocs++;
		h->bytes += c->size;
	} else {
		h->frees++;
	}
	rt_leaks_feed(h->leaks, t, c);
}

/* 1234567 -> "1,234,567", as memcheck prints its figures. */
static const char *grouped(uint64_t v, char *buf)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v), j = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
	return buf;
}

/* memcheck's HEAP SUMMARY for one trace: what was still allocated at exit
 * and the totals of the run. */
static void heap_summary(const char *path, int pid)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	rt_trace *t = rt_trace_new();
	heap_totals h = {rt_leaks_new(), 0, 0, 0};
	rt_read_opts ro = {1, count_call, NULL, &h};
	rt_diag err;
	int rc = rt_bin_read_fd(t, fd, path, &ro, NULL, &err);
	close(fd);
	rt_leaks_finish(h.leaks, t);
	uint64_t live = 0, live_bytes = 0;
	const rt_call *calls = rt_trace_calls_const(t);
	for (size_t i = 0; i < rt_trace_call_count(t); i++) {
		if (calls[i].kind == RT_CALL_ALLOC) {
			live++;
			live_bytes += calls[i].size;
		}
	}
	char a[32], b[32], c[32];
	info("HEAP SUMMARY (pid %d):", pid);
	info("    in use at exit: %s bytes in %s blocks", grouped(live_bytes, a), grouped(live, b));
	info("  total heap usage: %s allocs, %s frees, %s bytes allocated", grouped(h.allocs, a),
	     grouped(h.frees, b), grouped(h.bytes, c));
	if (rc) {
		char msg[1024];
		rt_diag_format(&err, msg, sizeof msg);
		warning("%s", msg);
	}
	rt_leaks_free(h.leaks);
	rt_trace_free(t);
}

/* Prints the traces the run produced (each process announces its file). */
static void report_traces(const char *manifest)
{
	FILE *fp = fopen(manifest, "r");
	if (!fp)
		return;
	char line[PATH_MAX + 32];
	int n = 0;
	while (fgets(line, sizeof line, fp)) {
		char *path = strchr(line, ' ');
		if (!path)
			continue;
		n++;
		path[strcspn(path, "\n")] = '\0';
		if (!strcmp(path + 1, "!")) /* the tracer said why on stderr */
			continue;
		info("trace written to %s", path + 1);
		if (!cli_quiet)
			heap_summary(path + 1, atoi(line));
	}
	fclose(fp);
	if (!n)
		warning("no trace was written: the tracer was not loaded (statically linked program?)");
}

int cmd_run(int argc, char **argv)
{
	run_opts o = {.dir = "."};
	int first = parse_options(argc, argv, &o);
	char preload_buf[PATH_MAX];
	const char *preload = find_preload(preload_buf, sizeof preload_buf);

	char manifest[] = "/tmp/rtrace-run-XXXXXX";
	int mfd = mkstemp(manifest);
	if (mfd < 0)
		die("cannot create a temporary file: %s", strerror(errno));
	close(mfd);
	set_env(&o, preload, manifest);

	install_forwarding();
	/* a close-on-exec pipe tells a failed exec from a program's own exit */
	int ep[2];
	if (pipe2(ep, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
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
	int rc = wait_child(pid);
	if (got == (ssize_t)sizeof err)
		error("cannot run '%s': %s", argv[first], strerror(err));
	else
		report_traces(manifest);
	unlink(manifest);
	return rc;
}
