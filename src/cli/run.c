/* rtrace run: starts a program with the tracer preloaded, passes its exit
 * status through, forwards the signals sent to us, and names the traces. */
#define _GNU_SOURCE
#include "cli.h"
#include "leak_report.h"
#include "rtrace/binary.h"
#include "rtrace/filter.h"
#include "rtrace/vgxml.h"

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
	"  -m, --modules LIST        what to trace, a comma separated list of modules\n"
	"                            (default: memory); --list-modules lists them\n"
	"      --list-modules        describe the modules and their resource types\n"
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
	"      --leak-check=MODE     at exit, classify the blocks still allocated as\n"
	"                            memcheck does: full (default: totals and each\n"
	"                            block's verdict in the trace, loss records on\n"
	"                            stderr), summary (totals) or no\n"
	"      --show-leak-kinds=SET loss records printed (default definite,possible;\n"
	"                            SET: definite,indirect,possible,reachable, all\n"
	"                            or none)\n"
	"      --errors-for-leak-kinds=SET  loss records that count as errors\n"
	"                            (default definite,possible)\n"
	"      --error-exitcode=N    exit with N when errors were found (heap errors,\n"
	"                            or leaks of the kinds above with full)\n"
	"      --xml-file=FILE       also write the findings as Valgrind XML\n"
	"                            (protocol 4, memcheck's, frames resolved) to\n"
	"                            FILE; %p is the process id, %q{VAR} the value\n"
	"                            of VAR, %% a %; processes that share a FILE\n"
	"                            append their documents to it, as with valgrind\n"
	"      --gen-suppressions=MODE  with --xml-file: all gives each error the\n"
	"                            suppression that would hide it; no (default)\n"
	"  -q, --quiet               only the program's own output\n"
	"  -h, --help                this help\n"
	"\n"
	"Exit status: the program's (N of --error-exitcode when errors were\n"
	"found); 128+N if it was killed by signal N; 127 if it could not be\n"
	"started; 2 on a bad command line.\n";

typedef struct run_opts {
	const char *dir;
	const char *modules; /* -m LIST, or NULL: memory */
	bool list_modules;
	unsigned depth;
	bool trace_frees, follow, start_paused, no_timestamps;
	char unwinder; /* flag letter: 0 cached, 'u' libunwind, 'k' check */
	int toggle_signal;
	const char *leak_check; /* full, summary or no */
	leak_opts leaks;
	int error_exitcode; /* 0: the program's status whatever was found */
	const char *xml_file;   /* --xml-file pattern, or NULL */
	bool gen_suppressions;
	char **xml_written;     /* files this run has written XML to */
	size_t nxml_written;
} run_opts;

enum { OPT_FREES = 256, OPT_FOLLOW, OPT_PAUSED, OPT_TOGGLE, OPT_NO_TS, OPT_UNWINDER,
       OPT_LEAK_CHECK, OPT_SHOW_KINDS, OPT_ERROR_KINDS, OPT_ERROR_EXITCODE, OPT_XML_FILE,
       OPT_GEN_SUPP, OPT_LIST_MODULES };

/* The heap checking options, as memcheck spells them. */
static void parse_leak_option(int c, const char *arg, run_opts *o)
{
	uint64_t v;
	switch (c) {
	case OPT_LEAK_CHECK:
		if (strcmp(arg, "full") && strcmp(arg, "summary") && strcmp(arg, "no"))
			die_usage("run", "invalid --leak-check '%s': expected full, summary or no", arg);
		o->leak_check = arg;
		break;
	case OPT_SHOW_KINDS:
	case OPT_ERROR_KINDS:
		if (!leak_parse_kinds(arg, c == OPT_SHOW_KINDS ? &o->leaks.show : &o->leaks.errors_for))
			die_usage("run", "invalid leak kinds '%s': expected a list of definite, indirect, "
				  "possible, reachable, or all or none", arg);
		break;
	case OPT_ERROR_EXITCODE:
		if (!cli_parse_u64(arg, 10, &v) || v > 255)
			die_usage("run", "invalid --error-exitcode '%s': expected 0 to 255", arg);
		o->error_exitcode = (int)v;
		break;
	case OPT_XML_FILE:
		if (!*arg)
			die_usage("run", "--xml-file needs a file name");
		o->xml_file = arg;
		break;
	case OPT_GEN_SUPP:
		if (strcmp(arg, "all") && strcmp(arg, "no"))
			die_usage("run", "invalid --gen-suppressions '%s': expected all or no", arg);
		o->gen_suppressions = !strcmp(arg, "all");
		break;
	}
}

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
		{"modules", required_argument, NULL, 'm'},
		{"list-modules", no_argument, NULL, OPT_LIST_MODULES},
		{"backtrace-depth", required_argument, NULL, 'b'},
		{"trace-frees", no_argument, NULL, OPT_FREES},
		{"follow-children", no_argument, NULL, OPT_FOLLOW},
		{"start-paused", no_argument, NULL, OPT_PAUSED},
		{"toggle-signal", required_argument, NULL, OPT_TOGGLE},
		{"no-timestamps", no_argument, NULL, OPT_NO_TS},
		{"unwinder", required_argument, NULL, OPT_UNWINDER},
		{"leak-check", required_argument, NULL, OPT_LEAK_CHECK},
		{"show-leak-kinds", required_argument, NULL, OPT_SHOW_KINDS},
		{"errors-for-leak-kinds", required_argument, NULL, OPT_ERROR_KINDS},
		{"error-exitcode", required_argument, NULL, OPT_ERROR_EXITCODE},
		{"xml-file", required_argument, NULL, OPT_XML_FILE},
		{"gen-suppressions", required_argument, NULL, OPT_GEN_SUPP},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c;
	opterr = 0;
	/* '+': options end at the program name */
	while ((c = getopt_long(argc, argv, "+:o:b:m:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->dir = optarg; break;
		case 'm': o->modules = optarg; break;
		case OPT_LIST_MODULES: o->list_modules = true; return optind;
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
		case OPT_LEAK_CHECK:
		case OPT_SHOW_KINDS:
		case OPT_ERROR_KINDS:
		case OPT_ERROR_EXITCODE:
		case OPT_XML_FILE:
		case OPT_GEN_SUPP: parse_leak_option(c, optarg, o); break;
		case 'h': fputs(usage_text, stdout); exit(RT_EXIT_OK);
		default: cli_bad_option("run", c, argv);
		}
	}
	if (optind >= argc)
		die_usage("run", "no program to run");
	if (o->gen_suppressions && !o->xml_file)
		die_usage("run", "--gen-suppressions=all applies to --xml-file; add it");
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
	setenv("RTRACE_LEAK_CHECK", o->leak_check, 1);
	setenv("RTRACE_MODULES", o->modules ? o->modules : "memory", 1);
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
		setenv("RTRACE_LIST_MODULES", "1", 1);
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
			die_usage("run", "unknown module '%.*s' in --modules: expected a list of "
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
	fd_track *fds;
	uint64_t allocs, frees, bytes;
	bool memory; /* the trace has the memory resource type */
} heap_totals;

static void count_call(void *ctx, rt_trace *t, const rt_call *c)
{
	heap_totals *h = ctx;
	fd_track_call(h->fds, t, c);
	if (rt_trace_is_bad_close(t, c)) {
		rt_trace_append_call(t, c); /* kept for the XML's FdBadClose */
		return;
	}
	if (!rt_trace_res_is(t, c->res_type, "memory")) {
		rt_leaks_feed(h->leaks, t, c);
		return;
	}
	h->memory = true;
	if (c->kind == RT_CALL_ALLOC) {
		h->allocs++;
		h->bytes += c->size;
	} else {
		h->frees++;
	}
	rt_leaks_feed(h->leaks, t, c);
}


/* A trace with the run's totals (allocations, releases, bytes), the
 * calls still live at its end, and its heap checking results. */
static rt_trace *load_trace(const char *path, heap_totals *h, rt_diag *err, int *rc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	rt_trace *t = rt_trace_new();
	h->leaks = rt_leaks_new();
	h->fds = fd_track_new();
	rt_read_opts ro = {12, count_call, NULL, h}; /* memcheck's 12 callers */
	*rc = rt_bin_read_fd(t, fd, path, &ro, NULL, err);
	close(fd);
	rt_leaks_finish(h->leaks, t);
	rt_leaks_free(h->leaks);
	h->leaks = NULL;
	return t;
}

/* memcheck's report for one trace: heap errors, HEAP SUMMARY (what was
 * still allocated at exit and the totals of the run), loss records, LEAK
 * SUMMARY and ERROR SUMMARY. Returns the number of errors. */
static uint64_t heap_summary(const rt_trace *t, const heap_totals *h, int pid, const run_opts *o)
{
	uint64_t live = 0, live_bytes = 0;
	const rt_call *calls = rt_trace_calls_const(t);
	leak_counts n = {0, 0};
	fd_report(t, h->fds, &n);
	if (!h->memory && rt_trace_resource_count(t) && !rt_trace_find_resource(t, "memory", 6)) {
		leak_report_end(&n);
		return n.errors;
	}
	for (size_t i = 0; i < rt_trace_call_count(t); i++) {
		if (calls[i].kind == RT_CALL_ALLOC && rt_trace_res_is(t, calls[i].res_type, "memory")) {
			live++;
			live_bytes += calls[i].size;
		}
	}
	char a[32], b[32], c[32];
	leak_report_errors(t, &n);
	info("HEAP SUMMARY (pid %d):", pid);
	info("    in use at exit: %s bytes in %s blocks", cli_grouped(live_bytes, a), cli_grouped(live, b));
	info("  total heap usage: %s allocs, %s frees, %s bytes allocated", cli_grouped(h->allocs, a),
	     cli_grouped(h->frees, b), cli_grouped(h->bytes, c));
	info("%s", "");
	leak_report_leaks(t, &o->leaks, &n);
	leak_report_end(&n);
	return n.errors;
}

/* valgrind's --xml-file pattern for process pid: %p, %q{VAR}, %%. */
static char *xml_path(const char *pattern, int pid)
{
	size_t cap = strlen(pattern) + 64, n = 0;
	char *out = malloc(cap);
	for (const char *p = pattern; out && *p; p++) {
		char piece[32] = {*p, 0};
		const char *add = piece;
		if (*p == '%' && p[1] == 'p') {
			snprintf(piece, sizeof piece, "%d", pid);
			p++;
		} else if (*p == '%' && p[1] == '%') {
			p++;
		} else if (*p == '%' && p[1] == 'q' && p[2] == '{' && strchr(p, '}')) {
			char var[256];
			size_t len = (size_t)(strchr(p, '}') - (p + 3));
			snprintf(var, sizeof var, "%.*s", (int)len, p + 3);
			add = getenv(var) ? getenv(var) : "";
			p += 3 + len;
		}
		size_t m = strlen(add);
		if (n + m + 1 > cap && !(out = realloc(out, cap = (n + m + 1) * 2)))
			break;
		memcpy(out + n, add, m);
		n += m;
	}
	if (!out)
		die("out of memory");
	out[n] = '\0';
	return out;
}

/* Writes a trace's findings, resolved, as Valgrind XML: a new file the
 * first time the run writes to it, appended to after (the documents of
 * processes sharing a file follow each other, as with valgrind). */
static void write_xml(rt_trace *t, int pid, run_opts *o)
{
	cli_resolve_opts res = {0};
	cli_resolve(t, &res);
	rt_vgxml_write_opts xo = {o->gen_suppressions,
				  o->leaks.show ? o->leaks.show : RT_VGXML_SHOW_NONE};
	char *path = xml_path(o->xml_file, pid);
	bool again = false;
	for (size_t i = 0; i < o->nxml_written && !again; i++)
		again = !strcmp(o->xml_written[i], path);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (again ? O_APPEND : O_TRUNC), 0644);
	int rc = fd < 0 ? -errno : rt_vgxml_write_fd(t, fd, &xo);
	if (fd >= 0 && close(fd) && !rc)
		rc = -errno;
	if (rc)
		error("cannot write the XML file '%s': %s", path, strerror(-rc));
	if (again || rc) {
		free(path);
		return;
	}
	o->xml_written = realloc(o->xml_written, (o->nxml_written + 1) * sizeof *o->xml_written);
	if (!o->xml_written)
		die("out of memory");
	o->xml_written[o->nxml_written++] = path;
}

/* The reports of one process's trace; returns its errors. */
static uint64_t report_trace(const char *path, int pid, run_opts *o)
{
	heap_totals h = {0};
	rt_diag err;
	int rc = 0;
	rt_trace *t = load_trace(path, &h, &err, &rc);
	if (!t)
		return 0;
	uint64_t errors = 0;
	if (!cli_quiet || o->error_exitcode)
		errors = heap_summary(t, &h, pid, o);
	if (rc) {
		char msg[1024];
		rt_diag_format(&err, msg, sizeof msg);
		warning("%s", msg);
	}
	if (o->xml_file)
		write_xml(t, pid, o);
	fd_track_free(h.fds);
	rt_trace_free(t);
	return errors;
}

/* Prints the traces the run produced (each process announces its file);
 * returns the errors found in the program's own process. */
static uint64_t report_traces(const char *manifest, run_opts *o)
{
	FILE *fp = fopen(manifest, "r");
	uint64_t errors = 0;
	if (!fp)
		return 0;
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
		if (!cli_quiet || o->error_exitcode || o->xml_file) {
			uint64_t e = report_trace(path + 1, atoi(line), o);
			if (atoi(line) == child_pid)
				errors += e;
		}
	}
	fclose(fp);
	if (!n)
		warning("no trace was written: the tracer was not loaded (statically linked program?)");
	return errors;
}

int cmd_run(int argc, char **argv)
{
	run_opts o = {.dir = ".", .leak_check = "full",
		      .leaks = {LEAK_KINDS_DEFAULT, LEAK_KINDS_DEFAULT}};
	int first = parse_options(argc, argv, &o);
	char preload_buf[PATH_MAX];
	const char *preload = find_preload(preload_buf, sizeof preload_buf);
	if (o.list_modules || o.modules) {
		char *lines = module_lines(preload);
		if (!lines)
			die("cannot run the tracer to list its modules");
		if (o.list_modules)
			list_modules(lines);
		else
			check_modules(o.modules, lines);
		free(lines);
		if (o.list_modules)
			return RT_EXIT_OK;
	}

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
	else if (report_traces(manifest, &o) && o.error_exitcode)
		rc = o.error_exitcode;
	unlink(manifest);
	for (size_t i = 0; i < o.nxml_written; i++)
		free(o.xml_written[i]);
	free(o.xml_written);
	return rc;
}
