/* rtrace annotate: callgrind_annotate's job on Callgrind and Cachegrind
 * profiles (and Xdebug's, pprof's), with its options and its output,
 * byte for byte. */
#include "cli.h"
#include "rtrace/callgrind.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OPT_SHOW = 256, OPT_SORT, OPT_THRESHOLD, OPT_PERCS, OPT_AUTO, OPT_CONTEXT,
       OPT_INCLUSIVE, OPT_TREE, OPT_VERSION };

static const cli_option options[] = {
	{0, "show", "=A,B,C", OPT_SHOW, "only show figures for events A,B,C [all]"},
	{0, "sort", "=A,B,C", OPT_SORT, "sort by events A,B,C [event column order]; each\n"
					"can be followed by :N, a threshold percentage of\n"
					"its own (then --threshold is ignored)"},
	{0, "threshold", "=N", OPT_THRESHOLD, "list functions until N% of the primary sort\n"
					      "event is covered (0-100) [99]"},
	{0, "show-percs", "=yes|no", OPT_PERCS, "show a percentage for each non-zero count [yes]"},
	{0, "auto", "=yes|no", OPT_AUTO, "annotate the source files of the listed\n"
					 "functions [yes]"},
	{0, "context", "=N", OPT_CONTEXT, "lines of context around annotated lines [8]"},
	{0, "inclusive", "=yes|no", OPT_INCLUSIVE, "costs of functions include their calls [no]"},
	{0, "tree", "=none|caller|calling|both", OPT_TREE,
	 "\ncallers and/or callees of each function [none]"},
	{'I', "include", "=DIR", 'I', "look for source files in DIR as well"},
	CLI_QUIET_HELP_OPTIONS("no warnings"),
	{0, "version", NULL, OPT_VERSION, "the version"},
};

static const cli_command command = {
	"annotate",
	"usage: rtrace annotate [options] [PROFILE [SOURCE...]]\n"
	"\n"
	"Prints what callgrind_annotate prints for a Callgrind profile (and for\n"
	"Cachegrind's, Xdebug's and pprof's): the program totals, the functions\n"
	"by cost, their callers and callees, and the source files annotated line\n"
	"by line. Without PROFILE, the first callgrind.out* (else cachegrind.out*)\n"
	"of the current directory. SOURCE files are annotated too.\n"
	"\n",
	options, sizeof options / sizeof *options, 28,
	"\n"
	"Events may be derived ones the profile defines (event: NAME = FORMULA).\n"
	"Exit status: 0 ok, 1 bad input or I/O error (the report covers what was\n"
	"read before the error), 2 bad command line.\n",
	false,
};

typedef struct annotate_opts {
	cg_annotate_opts a;
	const char **lists[3]; /* show, sort, sort thresholds */
	char *show_arg, *sort_arg;
} annotate_opts;

/* callgrind_annotate's [\d.]+%? between 0 and 100, kept as written (the
 * header prints it so). */
static bool valid_threshold(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
		i++;
	if (!i || (i < n && !(i + 1 == n && s[i] == '%')))
		return false;
	double v = strtod(s, NULL);
	return v >= 0 && v <= 100;
}

/* Splits a comma list as Perl's split(/,/) does (trailing empty fields
 * dropped); arg is modified in place. */
static uint32_t split_list(char *arg, const char ***out)
{
	uint32_t n = 0;
	const char **v = NULL;
	for (char *s = arg; s;) {
		char *comma = strchr(s, ',');
		if (comma)
			*comma = '\0';
		v = cli_xrealloc(v, n + 1, sizeof *v);
		v[n++] = s;
		s = comma ? comma + 1 : NULL;
	}
	while (n && !*v[n - 1])
		n--;
	*out = v;
	return n;
}

/* --sort=EV[:N],...: names and per-event thresholds. */
static void parse_sort(annotate_opts *o, char *arg)
{
	cg_annotate_opts *a = &o->a;
	a->nsort = split_list(arg, &o->lists[1]);
	a->sort = o->lists[1];
	o->lists[2] = calloc(a->nsort + 1, sizeof *o->lists[2]);
	if (!o->lists[2])
		cli_die("out of memory");
	for (uint32_t i = 0; i < a->nsort; i++) {
		char *colon = strrchr(a->sort[i], ':');
		if (!colon)
			continue;
		size_t n = strlen(colon + 1), d = n && colon[n] == '%' ? n - 1 : n;
		if (!valid_threshold(colon + 1, n))
			cli_die_usage("annotate", "invalid threshold in --sort '%s': expected a percentage "
				  "between 0 and 100", a->sort[i]);
		colon[1 + d] = '\0';
		o->lists[2][i] = colon + 1;
		*strchr(a->sort[i], ':') = '\0';
	}
	a->sort_thresholds = o->lists[2];
}

static void add_include(cg_annotate_opts *a, const char *dir)
{
	const char **v = cli_xrealloc(a->include_dirs, a->ninclude + 1, sizeof *v);
	v[a->ninclude++] = dir[0] == '=' ? dir + 1 : dir; /* callgrind_annotate's -I=DIR */
	a->include_dirs = v;
}

static void parse_option(annotate_opts *o, int c)
{
	cg_annotate_opts *a = &o->a;
	uint64_t v;
	switch (c) {
	case OPT_SHOW:
		free(o->lists[0]);
		a->nshow = split_list(optarg, &o->lists[0]);
		a->show = o->lists[0];
		break;
	case OPT_SORT:
		free(o->lists[1]);
		free(o->lists[2]);
		parse_sort(o, optarg);
		break;
	case OPT_THRESHOLD:
		if (!valid_threshold(optarg, strlen(optarg)))
			cli_die_usage("annotate", "invalid --threshold '%s': expected a percentage between 0 and 100", optarg);
		optarg[strcspn(optarg, "%")] = '\0';
		a->threshold = optarg;
		break;
	case OPT_PERCS: a->no_percs = !cli_parse_yes_no("annotate", "--show-percs", optarg); break;
	case OPT_AUTO: a->no_auto = !cli_parse_yes_no("annotate", "--auto", optarg); break;
	case OPT_INCLUSIVE: a->inclusive = cli_parse_yes_no("annotate", "--inclusive", optarg); break;
	case OPT_CONTEXT:
		if (!cli_parse_u64(optarg, 10, &v) || v > 1000000)
			cli_die_usage("annotate", "invalid --context '%s': expected a number of lines", optarg);
		a->context = (uint32_t)v;
		break;
	case OPT_TREE:
		if (strcmp(optarg, "none") && strcmp(optarg, "caller") && strcmp(optarg, "calling") &&
		    strcmp(optarg, "both"))
			cli_die_usage("annotate", "invalid --tree '%s': expected none, caller, calling or both", optarg);
		a->tree_caller = !strcmp(optarg, "caller") || !strcmp(optarg, "both");
		a->tree_calling = !strcmp(optarg, "calling") || !strcmp(optarg, "both");
		break;
	case 'I': add_include(a, optarg); break;
	case OPT_VERSION: printf("rtrace annotate %s\n", RTRACE_VERSION); exit(RT_EXIT_OK);
	}
}

/* A source file named on the command line must be readable as given or
 * in an include dir. */
static void add_user_file(cg_annotate_opts *a, const char *name)
{
	bool found = !access(name, R_OK);
	for (uint32_t i = 0; !found && i < a->ninclude; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", a->include_dirs[i], name);
		found = !access(path, R_OK);
	}
	if (!found)
		cli_die_usage("annotate", "source file '%s' not found (nor in any -I directory)", name);
	const char **v = cli_xrealloc(a->user_files, a->nuser + 1, sizeof *v);
	v[a->nuser++] = name;
	a->user_files = v;
}

static int glob_ci(const char *a, const char *b)
{
	return strcasecmp(a, b);
}

/* No profile named: the first callgrind.out* (else cachegrind.out*) here. */
static const char *find_profile(void)
{
	static const char *const patterns[] = {"callgrind.out*", "cachegrind.out*"};
	for (size_t i = 0; i < 2; i++) {
		glob_t g;
		if (glob(patterns[i], GLOB_NOSORT, NULL, &g) == 0 && g.gl_pathc) {
			const char *best = g.gl_pathv[0];
			for (size_t k = 1; k < g.gl_pathc; k++)
				if (glob_ci(g.gl_pathv[k], best) < 0)
					best = g.gl_pathv[k];
			const char *r = strdup(best);
			globfree(&g);
			return r;
		}
		globfree(&g);
	}
	cli_die_usage("annotate", "no profile given, and no callgrind.out* or cachegrind.out* here");
}

static void parse_options(int argc, char **argv, annotate_opts *o)
{
	int c;
	o->a.context = 8;
	while ((c = cli_getopt(&command, argc, argv)) != -1)
		parse_option(o, c);
	if (optind < argc) {
		o->a.input = argv[optind++];
	} else {
		o->a.input = find_profile();
		o->a.searched = true;
	}
	for (; optind < argc; optind++)
		add_user_file(&o->a, argv[optind]);
}

/* The current directory as the shell's pwd prints it ($PWD when it is
 * this directory): callgrind_annotate strips it from file names. */
static char *current_dir(void)
{
	const char *pwd = getenv("PWD");
	struct stat a, b;
	if (pwd && pwd[0] == '/' && !stat(pwd, &a) && !stat(".", &b) && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		return strdup(pwd);
	return getcwd(NULL, 0);
}

/* Reads the profile; returns 0, or 1 when the report will be partial. */
static int read_profile(cg_profile *p, const char *path, bool *usable)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		cli_die("cannot open '%s': %s", path, strerror(errno));
	unsigned warnings = 0;
	cg_read_opts ro = {CG_READ_MERGE_PARTS | CG_READ_LINES, cli_read_warning, &warnings};
	cg_read_stats st;
	rt_diag err;
	int rc = cg_read_fd(p, fd, path, &ro, &st, &err);
	close(fd);
	cli_warnings_end(warnings);
	*usable = cg_profile_slots(p) > 0;
	if (!rc)
		return 0;
	cli_diag_error(&err);
	if (*usable)
		cli_info("note: the report is partial: it covers what was read before the error (%" PRIu64
		     " line(s))", st.lines ? st.lines - 1 : 0);
	return 1;
}

int cmd_annotate(int argc, char **argv)
{
	annotate_opts o;
	memset(&o, 0, sizeof o);
	parse_options(argc, argv, &o);
	char *cwd = current_dir();
	o.a.cwd = cwd;
	cg_profile *p = cg_profile_new();
	bool usable;
	int status = read_profile(p, o.a.input, &usable) ? RT_EXIT_DATA : RT_EXIT_OK;
	if (usable) {
		char msg[256];
		int rc = cg_annotate_write(p, STDOUT_FILENO, &o.a, msg, sizeof msg);
		if (rc == -EINVAL)
			cli_die_usage("annotate", "%s", msg);
		if (rc) {
			cli_error("cannot write standard output: %s", strerror(-rc));
			status = RT_EXIT_DATA;
		}
	}
	cg_profile_free(p);
	free(cwd);
	for (int i = 0; i < 3; i++)
		free(o.lists[i]);
	free(o.a.include_dirs);
	free(o.a.user_files);
	if (o.a.searched) /* find_profile's copy */
		free((char *)o.a.input);
	return status;
}
