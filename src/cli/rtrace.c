/* rtrace: resource-consumption tracer and report toolchain. The first
 * argument names the subcommand; an option in its place starts rtrace
 * run, so that rtrace takes valgrind's command line where tools that
 * drive valgrind give it one (CTest's MEMORYCHECK_COMMAND). */
#include "cli.h"
#include "rtrace/rtrace.h"

#include <stdio.h>
#include <string.h>

static const struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} subcommands[] = {
	{"run", cmd_run, "run a program with the tracer: rtrace run -- ./app"},
	{"postproc", cmd_postproc,
	 "leaks by backtrace, contexts, selections: text or binary trace to text"},
	{"resolve", cmd_resolve,
	 "addresses to functions, files and lines: rtrace resolve -i trace"},
	{"convert", cmd_convert,
	 "between formats: text, binary, Valgrind XML in; text or XML out"},
	{"heap", cmd_heap,
	 "heap profile: peak, temporary allocations, leaks by call site; flame graphs"},
	{"report", cmd_report,
	 "one HTML report: leaks, errors, flame graph, memory over time, resources"},
	{"annotate", cmd_annotate,
	 "callgrind_annotate's report on a Callgrind profile: rtrace annotate FILE"},
	{"check", cmd_check, "ask a traced process for a leak check now: rtrace check PID"},
};

static void usage(FILE *fp)
{
	fprintf(fp, "usage: rtrace <command> [options]\n"
		    "       rtrace RUN-OPTION... [--] PROGRAM [ARGS...]   (rtrace run, as valgrind)\n"
		    "       rtrace --help | --version\n\ncommands:\n");
	for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++)
		fprintf(fp, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(fp, "\n'rtrace <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return RT_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(stdout);
		return RT_EXIT_OK;
	}
	if (!strcmp(cmd, "--version")) {
		printf("rtrace %s\n", RTRACE_VERSION);
		return RT_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++)
		if (!strcmp(cmd, subcommands[i].name))
			return subcommands[i].fn(argc - 1, argv + 1);
	/* an option first is valgrind's command line (`valgrind --log-file=F
	 * -q ./test`, as CTest runs MEMORYCHECK_COMMAND): rtrace run's */
	if (cmd[0] == '-')
		return cmd_run(argc, argv);
	fprintf(stderr, "rtrace: error: unknown command '%s'\n", cmd);
	usage(stderr);
	return RT_EXIT_USAGE;
}
