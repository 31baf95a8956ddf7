/* Per-process cost of tracer libraries, interleaved: runs PROGRAM N times
 * with each library preloaded in turn (and "-": none), so that a machine
 * busy with other work disturbs every library alike, and prints for each
 * the CPU time (user + system, from wait4: the process alone, not a shell
 * or env around it) and the wall time, medians and means. The program
 * gets the environment `rtrace run -q` gives the tracer, its traces going
 * to DIR (emptied after each run, outside the timing). Used for the
 * before/after figures of bench/README.md, "Per-process cost", where
 * bench/startup.sh's single-library runs varied 2x between rounds.
 *
 * RTRACE_FLAGS from spawn_cpu's own environment is passed on (c: children
 * followed, for a script of short processes as PROGRAM; the CPU time then
 * counts the children it waited for too).
 *
 *   cc -O2 -o bench/out/spawn_cpu bench/spawn_cpu.c
 *   bench/out/spawn_cpu 300 /bin/true DIR - old/librtrace-preload.so build/librtrace-preload.so */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIBS 8
#define MAX_RUNS 10000

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One run of prog with lib preloaded ("-": none): *cpu and *wall in s. */
static void run(const char *prog, const char *lib, const char *dir, double *cpu, double *wall)
{
	char pre[4200], out[4200], man[4200], rm[4300];
	snprintf(pre, sizeof pre, "LD_PRELOAD=%s", lib);
	snprintf(out, sizeof out, "RTRACE_DIR=%s", dir);
	snprintf(man, sizeof man, "RTRACE_MANIFEST=%s/manifest", dir);
	static char flags[64];
	const char *f = getenv("RTRACE_FLAGS");
	snprintf(flags, sizeof flags, "RTRACE_FLAGS=%s", f ? f : "");
	char *envp[] = {strcmp(lib, "-") ? pre : "X=1", out, man, "RTRACE_DEPTH=32", flags,
			"RTRACE_TOGGLE_SIGNAL=0", "RTRACE_LEAK_CHECK=full", "RTRACE_MODULES=memory",
			"PATH=/usr/bin:/bin", NULL};
	char *argv[] = {(char *)prog, NULL};
	double t0 = now();
	pid_t pid = fork();
	if (pid == 0) {
		execve(prog, argv, envp);
		_exit(127);
	}
	int status;
	struct rusage ru;
	wait4(pid, &status, 0, &ru);
	*wall = now() - t0;
	*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	snprintf(rm, sizeof rm, "rm -f '%s'/*.rtrace; : > '%s/manifest'", dir, dir);
	if (system(rm) != 0)
		fprintf(stderr, "spawn_cpu: cannot empty %s\n", dir);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: spawn_cpu N PROGRAM DIR LIB|- [LIB|-]...\n");
		return 2;
	}
	int n = atoi(argv[1]), nl = argc - 4;
	if (n < 1 || n > MAX_RUNS || nl > MAX_LIBS) {
		fprintf(stderr, "spawn_cpu: 1 to %d runs, at most %d libraries\n", MAX_RUNS, MAX_LIBS);
		return 2;
	}
	static double cpu[MAX_LIBS][MAX_RUNS], wall[MAX_LIBS][MAX_RUNS];
	double sum[MAX_LIBS] = {0};
	for (int i = 0; i < n; i++)
		for (int l = 0; l < nl; l++) {
			run(argv[2], argv[4 + l], argv[3], &cpu[l][i], &wall[l][i]);
			sum[l] += cpu[l][i];
		}
	for (int l = 0; l < nl; l++)
		printf("%-50s CPU median %.3f ms (mean %.3f), wall median %.3f ms\n", argv[4 + l],
		       median(cpu[l], n) * 1e3, sum[l] / n * 1e3, median(wall[l], n) * 1e3);
	return 0;
}
