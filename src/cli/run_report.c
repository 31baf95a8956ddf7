/* rtrace run's reports on the traces a run wrote, read back once the
 * program has exited: memcheck's report on stderr (heap errors, HEAP
 * SUMMARY, loss records, LEAK SUMMARY, descriptors, ERROR SUMMARY; see
 * leak_report.c and fd_report.c), or the same in memcheck's log format
 * (--log-file: cli_info's lines go there while it is written), and
 * Valgrind XML files (--xml-file).
 * Apart from run.c, which launches the program, so that launching and
 * reporting can change apart; the dependency goes one way, run.c to
 * here. */
#define _GNU_SOURCE
#include "cli.h"
#include "run_report.h"
#include "rtrace/binary.h"
#include "rtrace/filter.h"
#include "rtrace/vgxml.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_MSGS 4
#define CHECK_MSG_LEN 256

typedef struct heap_totals {
	rt_leaks *leaks;
	fd_track *fds;
	uint64_t allocs, frees, bytes;
	bool memory; /* the trace has the memory resource type */
	char check_msg[CHECK_MSGS][CHECK_MSG_LEN]; /* the tracer's about its leak check */
	unsigned nchecks;
} heap_totals;

/* The tracer's messages about its leak check ("leak check: ..."), said
 * on stderr with the report (the trace keeps them as comments). */
static void on_warn(void *ctx, const rt_diag *d)
{
	static const char tag[] = "tracer message: ";
	heap_totals *h = ctx;
	const char *m = strstr(d->msg, tag);
	if (m && !strncmp(m + strlen(tag), "leak check: ", 12) && h->nchecks < CHECK_MSGS)
		snprintf(h->check_msg[h->nchecks++], CHECK_MSG_LEN, "%s", m + strlen(tag));
}

/* A check that gave no verdicts did not happen: an error, as the leaks it
 * would have found would be. */
static void report_check_msgs(const heap_totals *h, leak_counts *n)
{
	for (unsigned i = 0; i < h->nchecks; i++) {
		cli_info("%s", h->check_msg[i]);
		if (strstr(h->check_msg[i], "no verdicts")) {
			n->errors++;
			n->contexts++;
		}
	}
	if (h->nchecks)
		cli_info("%s", "");
}

/* A bad close, kept for the XML's FdBadClose with the path its
 * descriptor last had: the leak filter drops the released open the XML
 * builder would find it on (convert reads every call and finds it). */
static void keep_bad_close(const heap_totals *h, rt_trace *t, const rt_call *c)
{
	rt_call k = *c;
	const char *p = fd_track_path(h->fds, t, c->res_id);
	if (p && !rt_trace_call_arg(t, c, "path")) {
		uint32_t n = c->args == RT_NONE ? 0 : rt_trace_args_len(t, c->args);
		rt_kv *kv = cli_xrealloc(NULL, n + 1, sizeof *kv);
		for (uint32_t i = 0; i < n; i++)
			kv[i] = rt_trace_args_at(t, c->args)[i];
		kv[n] = (rt_kv){"path", p};
		k.args = rt_trace_add_args(t, kv, n + 1);
		free(kv);
		if (c->args != RT_NONE)
			rt_trace_release_args(t, c->args);
	}
	rt_trace_append_call(t, &k);
}

static void count_call(void *ctx, rt_trace *t, const rt_call *c)
{
	heap_totals *h = ctx;
	fd_track_call(h->fds, t, c);
	if (rt_trace_is_bad_close(t, c)) {
		keep_bad_close(h, t, c);
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
static rt_trace *load_trace(int fd, const char *path, heap_totals *h, uint32_t depth,
			    rt_read_stats *st, rt_diag *err, int *rc)
{
	rt_trace *t = rt_trace_new();
	h->leaks = rt_leaks_new();
	h->fds = fd_track_new();
	rt_read_opts ro = {depth, count_call, on_warn, h}; /* memcheck's --num-callers */
	*rc = rt_bin_read_fd(t, fd, path, &ro, st, err);
	close(fd);
	rt_leaks_finish(h->leaks, t);
	rt_leaks_free(h->leaks);
	h->leaks = NULL;
	return t;
}

/* What was in use at exit. As memcheck counts it, the blocks the leak
 * check classified, all kinds together: those include what a forked
 * child inherited (its trace starts at the fork) and leave out what
 * ld.so and libc freed after the check. Without a check, the heap calls
 * the trace leaves live. */
static void heap_in_use(const rt_trace *t, uint64_t *blocks, uint64_t *bytes)
{
	const rt_leak_summary *s = rt_trace_leak_summary(t);
	const rt_call *calls = rt_trace_calls_const(t);
	*blocks = *bytes = 0;
	for (unsigned k = 1; s && k <= RT_LEAK_KINDS; k++) {
		*blocks += s->blocks[k];
		*bytes += s->bytes[k];
	}
	if (s) { /* suppressed blocks were in use all the same */
		*blocks += s->suppressed_blocks;
		*bytes += s->suppressed_bytes;
	}
	for (size_t i = 0; !s && i < rt_trace_call_count(t); i++) {
		if (calls[i].kind == RT_CALL_ALLOC && rt_trace_res_is(t, calls[i].res_type, "memory")) {
			++*blocks;
			*bytes += calls[i].size;
		}
	}
}

/* memcheck's report for one trace: heap errors, HEAP SUMMARY (what was
 * still allocated at exit and the totals of the run), loss records, LEAK
 * SUMMARY and ERROR SUMMARY. Returns the number of errors. */
static uint64_t heap_summary(const rt_trace *t, const heap_totals *h, int pid, const run_report_opts *o)
{
	uint64_t live, live_bytes;
	leak_counts n = {.supp = o->supp != NULL};
	fd_report(t, h->fds, &o->leaks.stack, &n);
	fd_report_streams(t, &o->leaks.stack);
	if (!h->memory && rt_trace_resource_count(t) && !rt_trace_find_resource(t, "memory", 6)) {
		cli_info_summary(true);
		leak_report_end(&n);
		cli_info_summary(false);
		return n.errors;
	}
	heap_in_use(t, &live, &live_bytes);
	uint64_t allocs = h->allocs, frees = h->frees, bytes = h->bytes;
	for (size_t i = 0, nd = rt_trace_dropped_count(t); i < nd; i++) { /* --min-lifetime's */
		allocs += rt_trace_dropped_at(t, i)->count;
		frees += rt_trace_dropped_at(t, i)->count;
		bytes += rt_trace_dropped_at(t, i)->bytes;
	}
	char a[32], b[32], c[32];
	leak_report_errors(t, &o->leaks, &n);
	leak_report_checks(t, &o->leaks, &n);
	cli_info_summary(true);
	if (o->log_file) /* the pid is in each line's prefix there */
		cli_info("HEAP SUMMARY:");
	else
		cli_info("HEAP SUMMARY (pid %d):", pid);
	cli_info("    in use at exit: %s bytes in %s blocks", cli_grouped(live_bytes, a), cli_grouped(live, b));
	cli_info("  total heap usage: %s allocs, %s frees, %s bytes allocated", cli_grouped(allocs, a),
	     cli_grouped(frees, b), cli_grouped(bytes, c));
	cli_info("%s", "");
	cli_info_summary(false);
	report_check_msgs(h, &n);
	leak_report_leaks(t, &o->leaks, &n); /* its LEAK SUMMARY marks itself a summary */
	cli_info_summary(true);
	if (o->verbose)
		leak_report_used_suppressions(t);
	leak_report_end(&n);
	cli_info_summary(false);
	return n.errors;
}

/* valgrind's --xml-file pattern for process pid: %p, %q{VAR}, %%. */
static char *xml_path(const char *pattern, int pid)
{
	size_t cap = strlen(pattern) + 64, n = 0;
	char *out = cli_xrealloc(NULL, cap, 1);
	for (const char *p = pattern; *p; p++) {
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
		if (n + m + 1 > cap)
			out = cli_xrealloc(out, cap = (n + m + 1) * 2, 1);
		memcpy(out + n, add, m);
		n += m;
	}
	out[n] = '\0';
	return out;
}

/* What writes a report file's content into fd: 0 or -errno. */
typedef int (*report_writer)(int fd, const void *ctx);

/* A new XML (or SARIF) file at path, written as the traces are: into a
 * file of its own created next to it (O_EXCL, 0600 whatever the umask),
 * renamed over path once complete, so that a symlink or another user's
 * file at path is replaced, never followed or truncated, and a reader
 * never sees half a document. 0 or -errno. */
static int file_replace(const char *path, report_writer write_fn, const void *ctx)
{
	size_t len = strlen(path);
	char *tmp = cli_xrealloc(NULL, len + 8, 1);
	memcpy(tmp, path, len);
	memcpy(tmp + len, ".XXXXXX", 8);
	int fd = mkostemp(tmp, O_CLOEXEC);
	int rc = fd < 0 ? -errno : write_fn(fd, ctx);
	if (fd >= 0 && close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc && fd >= 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

typedef struct xml_job {
	const rt_trace *t;
	const rt_vgxml_write_opts *xo;
} xml_job;

static int write_xml_fd(int fd, const void *ctx)
{
	const xml_job *j = ctx;
	return rt_vgxml_write_fd(j->t, fd, j->xo);
}

static int xml_replace(rt_trace *t, const char *path, const rt_vgxml_write_opts *xo)
{
	xml_job j = {t, xo};
	return file_replace(path, write_xml_fd, &j);
}

/* The findings of the processes that write one SARIF file: each one's
 * memcheck document, kept until the run is over, since a SARIF log is
 * one JSON document that cannot be appended to. */
struct run_sarif {
	char *path;
	rt_trace **docs;
	size_t n;
};

static void keep_sarif(const rt_trace *t, int pid, run_report_opts *o)
{
	rt_vgxml_write_opts xo = {false, o->leaks.show ? o->leaks.show : RT_VGXML_SHOW_NONE, 0};
	char *path = xml_path(o->sarif_file, pid);
	size_t i = 0;
	while (i < o->nsarif && strcmp(o->sarif[i].path, path))
		i++;
	if (i == o->nsarif) {
		o->sarif = cli_xrealloc(o->sarif, ++o->nsarif, sizeof *o->sarif);
		o->sarif[i] = (struct run_sarif){path, NULL, 0};
	} else {
		free(path);
	}
	struct run_sarif *f = &o->sarif[i];
	f->docs = cli_xrealloc(f->docs, f->n + 1, sizeof *f->docs);
	f->docs[f->n++] = rt_vgxml_build(t, &xo);
}

typedef struct sarif_job {
	const struct run_sarif *f;
	const char *root;
} sarif_job;

static int write_sarif_fd(int fd, const void *ctx)
{
	const sarif_job *j = ctx;
	rt_vgxml_write_opts none = {0};
	return cli_write_sarif((const rt_trace *const *)j->f->docs, j->f->n, fd, j->root, &none);
}

/* The SARIF files, once every process's findings are in; one that could
 * not be written fails the run as an XML file does. */
static void write_sarif_files(run_report_opts *o)
{
	for (size_t i = 0; i < o->nsarif; i++) {
		sarif_job j = {&o->sarif[i], o->source_root};
		int rc = file_replace(o->sarif[i].path, write_sarif_fd, &j);
		if (rc) {
			cli_error("cannot write the SARIF file '%s': %s", o->sarif[i].path, strerror(-rc));
			o->xml_failed++;
		}
	}
}

/* Writes a trace's findings, resolved, as Valgrind XML: a new file the
 * first time the run writes to it, appended to after (the documents of
 * processes sharing a file follow each other, as with valgrind). A file
 * that could not be written is counted, for the exit status. */
static void write_xml(rt_trace *t, int pid, run_report_opts *o)
{
	rt_vgxml_write_opts xo = {o->gen_suppressions, o->leaks.show ? o->leaks.show : RT_VGXML_SHOW_NONE,
				  o->xml_protocol, &o->leaks.stack};
	cli_xml_protocol_note(t, o->xml_protocol);
	char *path = xml_path(o->xml_file, pid);
	bool again = false;
	for (size_t i = 0; i < o->nxml_written && !again; i++)
		again = !strcmp(o->xml_written[i], path);
	int rc;
	if (again) {
		int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
		rc = fd < 0 ? -errno : rt_vgxml_write_fd(t, fd, &xo);
		if (fd >= 0 && close(fd) && !rc)
			rc = -errno;
	} else {
		rc = xml_replace(t, path, &xo);
	}
	if (rc) {
		cli_error("cannot write the XML file '%s': %s", path, strerror(-rc));
		o->xml_failed++;
	}
	if (again || rc) {
		free(path);
		return;
	}
	o->xml_written = cli_xrealloc(o->xml_written, o->nxml_written + 1, sizeof *o->xml_written);
	o->xml_written[o->nxml_written++] = path;
}

/* A log file for --log-file at path: appended to when this run wrote it
 * before (processes sharing a file follow each other), else a new file
 * next to it (O_EXCL, 0600) that log_close renames over path, written
 * as the XML files are (see xml_replace). NULL with errno set. */
static FILE *log_open(const run_report_opts *o, const char *path, char **tmp)
{
	*tmp = NULL;
	for (size_t i = 0; i < o->nlog_written; i++) {
		if (strcmp(o->log_written[i], path))
			continue;
		int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
		FILE *fp = fd < 0 ? NULL : fdopen(fd, "a");
		if (fd >= 0 && !fp)
			close(fd);
		return fp;
	}
	size_t len = strlen(path);
	*tmp = cli_xrealloc(NULL, len + 8, 1);
	memcpy(*tmp, path, len);
	memcpy(*tmp + len, ".XXXXXX", 8);
	int fd = mkostemp(*tmp, O_CLOEXEC);
	FILE *fp = fd < 0 ? NULL : fdopen(fd, "w");
	if (fd >= 0 && !fp)
		close(fd);
	if (!fp) {
		int err = errno;
		if (fd >= 0)
			unlink(*tmp);
		free(*tmp);
		*tmp = NULL;
		errno = err;
	}
	return fp;
}

/* Closes a log_open'ed file and renames a new one (tmp) over path; 0 or
 * -errno (the new file removed). */
static int log_close(FILE *fp, const char *path, char *tmp)
{
	int rc = ferror(fp) ? -EIO : 0;
	if (fclose(fp) && !rc)
		rc = -errno;
	if (!rc && tmp && rename(tmp, path))
		rc = -errno;
	if (rc && tmp)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* memcheck's report of one process: on stderr, or with --log-file in the
 * file named for the process (%p), each line "==PID== " first as in
 * memcheck's log. A log that could not be written is counted, for the
 * exit status, and the report goes to stderr instead. */
static uint64_t report_heap(const rt_trace *t, const heap_totals *h, int pid, run_report_opts *o)
{
	if (!o->log_file)
		return heap_summary(t, h, pid, o);
	char *path = xml_path(o->log_file, pid), *tmp;
	FILE *fp = log_open(o, path, &tmp);
	if (!fp) {
		cli_error("cannot write the log file '%s': %s", path, strerror(errno));
		free(path);
		o->log_failed++;
		return heap_summary(t, h, pid, o);
	}
	cli_info_to(fp, pid);
	uint64_t errors = heap_summary(t, h, pid, o);
	cli_info_to(NULL, 0);
	bool created = tmp != NULL;
	int rc = log_close(fp, path, tmp);
	if (rc) {
		cli_error("cannot write the log file '%s': %s", path, strerror(-rc));
		o->log_failed++;
	}
	if (!rc && created) { /* later processes append to it */
		o->log_written = cli_xrealloc(o->log_written, o->nlog_written + 1, sizeof *o->log_written);
		o->log_written[o->nlog_written++] = path;
		path = NULL;
	}
	free(path);
	return errors;
}

/* Whether the terminal report of t prints a stack: a heap error, an
 * on-demand check, a loss record of a kind shown, or a resource other than
 * memory (fd_report's leaks and streams). Most processes of a shell loop
 * or a build print none, and resolving their modules (opening each and
 * sorting its symbols) was 8-10 ms a trace, nine tenths of such a run's
 * report. Conservative: true whenever a printer could print a stack. */
static bool stacks_shown(const rt_trace *t, const run_report_opts *o)
{
	size_t nres = rt_trace_resource_count(t);
	if (rt_trace_heap_error_count(t) || rt_trace_check_count(t) ||
	    nres > (rt_trace_find_resource(t, "memory", 6) ? 1u : 0u))
		return true;
	for (size_t i = 0, n = rt_trace_leak_count(t); i < n; i++)
		if (o->leaks.show & (1u << rt_trace_leak_at(t, i)->kind))
			return true;
	return false;
}

/* The reports of one process's trace (open in fd); returns its errors,
 * and in *lost 1 when the trace says less than the process did (tracing
 * stopped early, or the file is damaged). */
static uint64_t report_trace(int fd, const char *path, int pid, run_report_opts *o, uint64_t *lost)
{
	heap_totals h = {0};
	rt_read_stats st;
	rt_diag err;
	int rc = 0;
	rt_trace *t = load_trace(fd, path, &h, o->leaks.stack.num_callers, &st, &err, &rc);
	uint64_t errors = 0;
	cli_resolve_opts res = {0};
	/* the program has ended: its modules are still there */
	if ((!cli_quiet && stacks_shown(t, o)) || o->xml_file || o->log_file || o->sarif_file || o->supp)
		cli_resolve(t, &res);
	if (o->supp) /* memcheck's stacks: num-callers frames, below main too */
		rt_supp_apply(o->supp, t, &o->leaks.stack);
	if (st.incomplete[0]) /* before the summary it makes partial */
		cli_warning("%s: %s", path, st.incomplete);
	if (!cli_quiet || o->error_exitcode || o->log_file)
		errors = report_heap(t, &h, pid, o);
	if (rc) {
		char msg[1024];
		rt_diag_format(&err, msg, sizeof msg);
		cli_warning("%s", msg);
	}
	*lost = rc || st.incomplete[0];
	if (o->xml_file)
		write_xml(t, pid, o);
	if (o->sarif_file)
		keep_sarif(t, pid, o);
	fd_track_free(h.fds);
	rt_trace_free(t);
	return errors;
}

/* The manifest's entries, "PID PATH" each followed by a NUL byte (a path
 * may hold newlines), in one buffer with a NUL after the last; NULL when
 * it cannot be read. */
static char *read_manifest(const char *manifest, size_t *len)
{
	int fd = open(manifest, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096;
	char *buf = cli_xrealloc(NULL, cap, 1);
	ssize_t got;
	*len = 0;
	while ((got = read(fd, buf + *len, cap - *len - 1)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		*len += (size_t)got;
		if (cap - *len - 1 == 0)
			buf = cli_xrealloc(buf, cap *= 2, 1);
	}
	close(fd);
	buf[*len] = '\0';
	return buf;
}

/* One process's entry: its reports, or why there are none. A trace that
 * is lost, was never written or is incomplete counts as an error of the
 * run whatever process it belongs to, since the findings are missing. */
static uint64_t report_entry(int pid, const char *path, pid_t program, run_report_opts *o)
{
	if (path[0] == '!') { /* the tracer said why on stderr */
		cli_error("no trace of process %d: the tracer could not write %s", pid, path + 1);
		return 1;
	}
	/* nothing to read (-q alone): whether it is there, by one path
	 * lookup, not an open and a close of each trace */
	bool look_only = cli_quiet && !o->error_exitcode && !o->xml_file && !o->log_file && !o->sarif_file;
	int fd = look_only ? (access(path, R_OK) ? -1 : INT_MAX) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_error("trace of process %d lost: %s: %s", pid, path, strerror(errno));
		return 1;
	}
	cli_info("trace written to %s", path);
	if (look_only)
		return 0;
	uint64_t lost = 0, e = report_trace(fd, path, pid, o, &lost);
	return (pid == program ? e : 0) + lost;
}

/* Whether the exec announced by entry e ("PID >PROG") took place: no
 * "PID >" (the exec failed) follows among that process's exec entries. */
static bool exec_happened(const char *e, const char *end)
{
	int pid = atoi(e);
	for (const char *f = e + strlen(e) + 1; f < end && f + strlen(f) < end; f += strlen(f) + 1) {
		const char *prog = strchr(f, ' ');
		if (prog && prog[1] == '>' && atoi(f) == pid)
			return prog[2] != '\0';
	}
	return true;
}

/* The programs that processes exec'd without --follow-children ("PID
 * >PROG" entries) went on untraced: a shell shim, env or a wrapper script
 * in place of the program meant. Said once, naming what the program
 * itself exec'd first, else the first of another process. */
static void report_untraced_execs(const char *buf, size_t len, pid_t program, const char *name)
{
	const char *first = NULL;
	int pid = 0;
	unsigned n = 0;
	for (const char *e = buf; e < buf + len && e + strlen(e) < buf + len; e += strlen(e) + 1) {
		const char *prog = strchr(e, ' ');
		if (!prog || prog[1] != '>' || !prog[2] || !exec_happened(e, buf + len))
			continue;
		if (!n++ || (pid != program && atoi(e) == program)) {
			first = prog + 2;
			pid = atoi(e);
		}
	}
	if (!n)
		return;
	char who[64];
	if (pid != program)
		snprintf(who, sizeof who, "process %d", pid);
	cli_info("%s exec'd %s, which was not traced%s (use --follow-children to trace it)",
		 pid == program ? name : who, first, n > 1 ? ", nor what other processes exec'd" : "");
}

uint64_t run_report_traces(const char *manifest, pid_t program, run_report_opts *o)
{
	size_t len;
	char *buf = read_manifest(manifest, &len);
	uint64_t errors = 0;
	if (!buf)
		return 0;
	int n = 0;
	for (char *e = buf; e < buf + len; e += strlen(e) + 1) {
		char *path = strchr(e, ' ');
		if (e + strlen(e) == buf + len)
			break; /* cut short (a file size limit): no entry */
		if (!path || path[1] == '>')
			continue;
		n++;
		errors += report_entry(atoi(e), path + 1, program, o);
	}
	report_untraced_execs(buf, len, program, o->program);
	write_sarif_files(o);
	free(buf);
	if (!n) {
		char why[PATH_MAX + 256];
		run_exe_why_untraced(o->program, why, sizeof why);
		cli_warning("no trace was written: %s", why);
	}
	return errors;
}

void run_report_free(run_report_opts *o)
{
	for (size_t i = 0; i < o->nxml_written; i++)
		free(o->xml_written[i]);
	free(o->xml_written);
	o->xml_written = NULL;
	o->nxml_written = 0;
	for (size_t i = 0; i < o->nlog_written; i++)
		free(o->log_written[i]);
	free(o->log_written);
	o->log_written = NULL;
	o->nlog_written = 0;
	rt_supp_free(o->supp);
	o->supp = NULL;
	for (size_t i = 0; i < o->nsarif; i++) {
		for (size_t k = 0; k < o->sarif[i].n; k++)
			rt_trace_free(o->sarif[i].docs[k]);
		free(o->sarif[i].docs);
		free(o->sarif[i].path);
	}
	free(o->sarif);
	o->sarif = NULL;
	o->nsarif = 0;
}
