/* rtrace run's reports on the traces of the processes it ran (see
 * run_report.c): run.c launches the program, then hands the list of
 * traces written here; nothing here calls back into run.c. */
#ifndef RT_RUN_REPORT_H
#define RT_RUN_REPORT_H

#include "leak_report.h"
#include "rtrace/supp.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What is reported on the traces, from run's memcheck-like options. */
typedef struct run_report_opts {
	leak_opts leaks;
	int error_exitcode;     /* 0: the program's status whatever was found */
	const char *xml_file;   /* --xml-file pattern, or NULL */
	bool gen_suppressions;
	rt_supp_set *supp;      /* --suppressions, or NULL */
	bool verbose;           /* -v: the used suppressions listed */
	unsigned xml_protocol;  /* --xml-protocol: 0 (4 unless descriptor errors), 4 or 5 */
	const char *program;    /* as given to exec, for saying why it was not traced */
	char **xml_written;     /* files this run has written XML to */
	size_t nxml_written;
	const char *log_file;   /* --log-file pattern, or NULL: the report on stderr */
	char **log_written;     /* log files this run has written */
	size_t nlog_written;
	unsigned log_failed;    /* log files that could not be written */
	unsigned xml_failed;    /* XML (or SARIF) files that could not be written */
	const char *sarif_file; /* --sarif-file pattern, or NULL */
	const char *source_root; /* --source-root, or NULL */
	struct run_sarif *sarif; /* per SARIF file, the findings of its processes */
	size_t nsarif;
} run_report_opts;

/* Prints the traces the run produced (each process announces its file in
 * the manifest), with memcheck's reports and the XML files asked for;
 * returns the errors found in the process of pid program. */
uint64_t run_report_traces(const char *manifest, pid_t program, run_report_opts *o);
/* run_exe.c: why no trace was written for the program started as
 * `program` (setuid, setgid, file capabilities, static), into msg. */
void run_exe_why_untraced(const char *program, char *msg, size_t len);
void run_report_free(run_report_opts *o);

#endif
