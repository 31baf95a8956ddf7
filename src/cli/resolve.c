/* rtrace resolve: a trace's backtrace addresses to functions, source files
 * and lines (sp-rtrace-resolve's job), in the text protocol. The resolver
 * options are shared with `rtrace postproc -r`. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const cli_option options[] = {
	{'i', "input-file", " FILE", 'i', "read FILE (default: standard input)"},
	{'o', "output-file", " FILE", 'o', "write FILE (default: standard output)"},
	CLI_RESOLVE_OPTIONS("look for separate debug info in DIR as well, by build\n"
			    "id (DIR/.build-id/xx/yyyy.debug) and by .gnu_debuglink\n"
			    "name; may be given several times, searched in order\n"
			    "before /usr/lib/debug",
			    "resolve against a copy of the traced machine's file\n"
			    "system: modules and /usr/lib/debug are read under DIR",
			    "neither read nor write the cache of debug files (below)"),
	CLI_QUIET_HELP_OPTIONS("no warnings"),
};

static const cli_command command = {
	"resolve",
	"usage: rtrace resolve [options] [-i TRACE] [-o OUTPUT]\n"
	"\n"
	"Resolves the backtrace addresses of a trace to functions, source files and\n"
	"lines, and writes the trace in the text protocol (sp-rtrace's format):\n"
	"\n"
	"\t0x55d0c1a2b1c4 leak() at /src/app.c:12      (a line is known)\n"
	"\t0x7f3e4c02a1ca __libc_start_main() from /lib/x86_64-linux-gnu/libc.so.6\n"
	"\t0x55d0c1a2b0a5 from /usr/bin/app             (no symbol)\n"
	"\n"
	"The input is a text trace or a binary trace from `rtrace run` (told by\n"
	"content). Modules are placed where the trace's memory map says they were;\n"
	"each is read once, with its separate debug info when there is one.\n"
	"\n",
	options, sizeof options / sizeof *options, 26,
	"\n"
	"A module that cannot be read leaves its addresses without function names,\n"
	"with one warning. Separate debug files whose sections are compressed (as\n"
	"Debian's -dbg packages install them) are inflated once into a cache,\n"
	"$RTRACE_CACHE_DIR or else ${XDG_CACHE_HOME:-~/.cache}/rtrace/debug, one\n"
	"file per build id, and read from there afterwards; removing the directory\n"
	"empties it. 'rtrace postproc -r' resolves too, after its filters:\n"
	"'rtrace postproc -lcr -i TRACE' lists the leaks by stack with names.\n"
	"Exit status: 0 ok, 1 bad input or I/O error (what was read before the\n"
	"error is still written), 2 bad command line.\n",
	false,
};

static void add_debug_dir(cli_resolve_opts *o, const char *cmd, const char *dir)
{
	struct stat st;
	if (!*dir || strchr(dir, ':'))
		cli_die_usage(cmd, "invalid --debug-dir '%s': expected a directory name without ':'", dir);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		cli_warning("--debug-dir '%s' is not a directory; ignored", dir);
	const char **v = cli_xrealloc(o->debug_dirs, o->ndebug_dirs + 1, sizeof *v);
	v[o->ndebug_dirs++] = dir;
	o->debug_dirs = v;
}

static void set_root(cli_resolve_opts *o, const char *cmd, const char *dir)
{
	struct stat st;
	if (!*dir || strchr(dir, ':'))
		cli_die_usage(cmd, "invalid --root '%s': expected a directory name without ':'", dir);
	if (stat(dir, &st))
		cli_die_usage(cmd, "invalid --root '%s': %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		cli_die_usage(cmd, "invalid --root '%s': not a directory", dir);
	o->root = dir;
}

bool cli_resolve_option(cli_resolve_opts *o, const char *cmd, int c, const char *arg)
{
	switch (c) {
	case CLI_OPT_DEBUG_DIR: add_debug_dir(o, cmd, arg); return true;
	case CLI_OPT_ROOT: set_root(o, cmd, arg); return true;
	case CLI_OPT_NO_CACHE: o->no_cache = true; return true;
	default: return false;
	}
}

bool cli_resolve_opts_given(const cli_resolve_opts *o)
{
	return o->ndebug_dirs || o->root || o->no_cache;
}

void cli_resolve_opts_free(cli_resolve_opts *o)
{
	free(o->debug_dirs);
	o->debug_dirs = NULL;
	o->ndebug_dirs = 0;
}

static void on_resolve_warning(void *ctx, const char *msg)
{
	(void)ctx;
	cli_warning("%s", msg);
}

/* The cache of debug files: $RTRACE_CACHE_DIR, else the XDG cache
 * directory's rtrace/debug; NULL without a home. */
static char *cache_dir(void)
{
	const char *dir = getenv("RTRACE_CACHE_DIR"), *base = getenv("XDG_CACHE_HOME");
	const char *sub = "/rtrace/debug";
	if (dir && *dir)
		base = dir, sub = "";
	else if (!base || base[0] != '/')
		base = getenv("HOME"), sub = "/.cache/rtrace/debug";
	if (!base || (!*sub ? !*base : base[0] != '/'))
		return NULL;
	size_t n = strlen(base) + strlen(sub) + 1;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s%s", base, sub);
	return p;
}

const rt_resolve_opts *cli_resolve_opts_for(const cli_resolve_opts *o, rt_resolve_opts *ro, char **cache)
{
	*ro = (rt_resolve_opts){0};
	ro->debug_dirs = o->debug_dirs;
	ro->ndebug_dirs = o->ndebug_dirs;
	ro->root = o->root;
	ro->in_place = o->in_place;
	ro->warn = on_resolve_warning;
	*cache = o->no_cache ? NULL : cache_dir();
	ro->cache_dir = *cache;
	return ro;
}

void cli_resolve(rt_trace *t, const cli_resolve_opts *o)
{
	cli_resolve_bts(t, o, NULL, NULL, 0);
}

/* bts NULL: the calls' backtraces (rt_resolve_trace). */
void cli_resolve_bts(rt_trace *t, const cli_resolve_opts *o, uint32_t *bts, const uint64_t *index, size_t n)
{
	rt_resolve_opts ro;
	char *cache;
	cli_resolve_opts_for(o, &ro, &cache);
	rt_resolve_stats st;
	if (bts)
		rt_resolve_bts(t, bts, index, n, &ro, &st);
	else
		rt_resolve_trace(t, &ro, &st);
	free(cache);
	if (st.addrs && !st.functions && !st.missing)
		cli_warning("no function name found for any of %" PRIu64 " address(es): no symbols or "
			"debug info in the traced modules?", st.addrs);
}

typedef struct resolve_opts {
	const char *input, *output;
	cli_resolve_opts res;
} resolve_opts;

static void parse_options(int argc, char **argv, resolve_opts *o)
{
	int c;
	while ((c = cli_getopt(&command, argc, argv)) != -1) {
		switch (c) {
		case 'i': o->input = optarg; break;
		case 'o': o->output = optarg; break;
		default: cli_resolve_option(&o->res, "resolve", c, optarg); break;
		}
	}
	if (optind < argc)
		cli_die_usage("resolve", "unexpected argument '%s' (the input is given with -i)", argv[optind]);
}

static int write_output(rt_trace *t, const char *path)
{
	rt_write_opts w = {0};
	w.filter_bits = rt_trace_filter_bits(t) & (RT_FILTER_LEAKS | RT_FILTER_RESOLVE);
	w.contexts = true;
	int fd = STDOUT_FILENO;
	if (path && (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		cli_error("cannot create '%s': %s", path, strerror(errno));
		return -1;
	}
	int rc = rt_text_write_fd(t, fd, &w);
	if (path && close(fd) && !rc)
		rc = -errno;
	if (rc) {
		cli_error("cannot write %s: %s", path ? path : "standard output", strerror(-rc));
		return -1;
	}
	return 0;
}

int cmd_resolve(int argc, char **argv)
{
	resolve_opts o = {0};
	parse_options(argc, argv, &o);
	int fd = STDIN_FILENO;
	const char *name = "<stdin>";
	if (o.input) {
		if ((fd = open(o.input, O_RDONLY | O_CLOEXEC)) < 0)
			cli_die("cannot open '%s': %s", o.input, strerror(errno));
		name = o.input;
	}
	rt_trace *t = rt_trace_new();
	unsigned warnings = 0;
	rt_read_opts ro = {0, NULL, cli_read_warning, &warnings};
	rt_read_stats st;
	rt_diag err;
	int rc = cli_read_trace(t, fd, name, &ro, &st, &err);
	if (fd != STDIN_FILENO)
		close(fd);
	cli_warnings_end(warnings);
	if (rc)
		cli_diag_error(&err);
	int wrc = -1;
	if (!rc || rt_trace_header_count(t)) {
		cli_resolve(t, &o.res);
		wrc = write_output(t, o.output);
		if (rc && !wrc)
			cli_info("note: the output is partial: it holds what was read before the error (%" PRIu64
			     " call record(s))", st.calls);
	}
	rt_trace_free(t);
	cli_resolve_opts_free(&o.res);
	return rc || wrc ? RT_EXIT_DATA : RT_EXIT_OK;
}
