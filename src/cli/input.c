/* Reading any input the rtrace command accepts, told by content: a binary
 * trace from `rtrace run`, Valgrind's XML, a Callgrind profile where the
 * command takes one, or a text trace; from a file or a pipe. Each format is
 * recognised by its own start (a text trace by a valid header line): what
 * none recognises is an error naming the formats tried, not a text trace
 * of comments. */
#include "cli.h"
#include "rtrace/rtrace.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Enough of a file's start to tell Valgrind XML by its root element. */
#define PEEK_LEN 4096

/* The input's first bytes, for telling a binary trace from a text one. A
 * regular file at its start is peeked with pread; anything else (a pipe)
 * gives them up to the peek: *consumed says so. -1 with errno on a read
 * error (a directory: EISDIR). */
static ssize_t peek_input(int fd, char *head, size_t n, bool *consumed)
{
	struct stat st;
	bool is_stat = fstat(fd, &st) == 0;
	if (is_stat && S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	*consumed = !(lseek(fd, 0, SEEK_CUR) == 0 && is_stat && S_ISREG(st.st_mode));
	size_t got = 0;
	while (got < n) {
		ssize_t r = *consumed ? read(fd, head + got, n - got) : pread(fd, head + got, n - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* What the first n bytes start, or -1 when no format recognises them (an
 * empty input is an empty text trace, which the text reader reports). */
static int sniff(const char *head, size_t n, bool callgrind)
{
	return rt_bin_is_binary(head, n)	   ? CLI_BINARY
	       : rt_vgxml_sniff(head, n)	   ? CLI_VGXML
	       : callgrind && cg_sniff(head, n) ? CLI_CALLGRIND
	       : !n || rt_text_sniff(head, n)  ? CLI_TEXT
					   : -1;
}

static int input_error(rt_diag *err, const char *name, uint64_t line, const char *msg)
{
	*err = (rt_diag){.file = name, .line = line, .col = 1};
	snprintf(err->msg, sizeof err->msg, "%s", msg);
	return -1;
}

/* A binary trace from a pipe: the peeked bytes and the rest into memory,
 * since a pipe cannot be mapped. */
static int read_binary_rest(rt_trace *t, int fd, const char *head, size_t n, const char *name,
			    const rt_read_opts *ro, rt_read_stats *st, rt_diag *err)
{
	size_t len = n, cap = 1u << 20;
	char *buf = malloc(cap);
	if (!buf)
		cli_die("out of memory reading %s", name);
	memcpy(buf, head, n);
	for (;;) {
		if (len == cap && !(buf = realloc(buf, cap *= 2)))
			cli_die("out of memory reading %s", name);
		ssize_t r = read(fd, buf + len, cap - len);
		if (r == 0)
			break;
		if (r < 0 && errno != EINTR)
			cli_die("cannot read %s: %s", name, strerror(errno));
		len += r > 0 ? (size_t)r : 0;
	}
	int rc = rt_bin_read_mem(t, buf, len, name, ro, st, err);
	free(buf);
	return rc;
}

static bool write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* A text trace from a pipe: the text reader streams from a new pipe that
 * a child fills with the peeked bytes, then the rest of the input. */
static int replay_input(int fd, const char *head, size_t n, pid_t *child)
{
	int p[2];
	if (pipe(p))
		cli_die("cannot create a pipe: %s", strerror(errno));
	if ((*child = fork()) < 0)
		cli_die("cannot fork: %s", strerror(errno));
	if (*child > 0) {
		close(p[1]);
		return p[0];
	}
	close(p[0]);
	char buf[65536];
	if (!write_all(p[1], head, n))
		_exit(1);
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || !write_all(p[1], buf, (size_t)r))
			_exit(r != 0);
	}
}

/* Warnings of the XML reader go where the caller's reader options send
 * them. */
static void xml_warn(void *ctx, const rt_diag *d)
{
	const rt_read_opts *ro = ctx;
	if (ro->warn)
		ro->warn(ro->ctx, d);
}

static int read_vgxml(rt_trace *t, int fd, const char *name, const rt_read_opts *ro,
		      rt_read_stats *st, rt_diag *err)
{
	rt_vgxml_read_opts xo = {NULL, xml_warn, (void *)ro};
	rt_vgxml_stats xs = {0};
	int rc = rt_vgxml_read_fd(t, fd, name, &xo, &xs, err);
	if (st)
		*st = (rt_read_stats){xs.elements, 0, xs.bytes};
	return rc;
}

static int read_callgrind(cg_profile *p, int fd, const char *name, const rt_read_opts *ro,
			  rt_read_stats *st, rt_diag *err)
{
	cg_read_opts co = {0, ro->warn, ro->ctx};
	cg_read_stats cs = {0};
	int rc = cg_read_fd(p, fd, name, &co, &cs, err);
	if (st)
		*st = (rt_read_stats){cs.lines, 0, cs.bytes};
	return rc;
}

/* Reads fd (the input, or a pipe replaying it) as format f. */
static int read_as(rt_trace *t, cg_profile *prof, enum cli_format f, int fd, const char *name,
		   const rt_read_opts *ro, rt_read_stats *st, rt_diag *err)
{
	switch (f) {
	case CLI_VGXML: return read_vgxml(t, fd, name, ro, st, err);
	case CLI_CALLGRIND: return read_callgrind(prof, fd, name, ro, st, err);
	default: return rt_text_read_fd(t, fd, name, ro, st, err);
	}
}

/* A text, XML or Callgrind input from a pipe: the reader streams from a
 * new pipe that a child fills with the peeked bytes, then the rest of
 * the input. */
static int read_replayed(rt_trace *t, cg_profile *prof, enum cli_format f, int fd, const char *head,
			 size_t n, const char *name, const rt_read_opts *ro, rt_read_stats *st,
			 rt_diag *err)
{
	pid_t child;
	int in = replay_input(fd, head, n, &child);
	int rc = read_as(t, prof, f, in, name, ro, st, err);
	close(in);
	/* after an early error the child may wait on an input that never ends */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return rc;
}

int cli_read_input_cg(rt_trace *t, cg_profile **prof, int fd, const char *name,
		      const rt_read_opts *ro, rt_read_stats *st, rt_diag *err,
		      enum cli_format *format)
{
	char head[PEEK_LEN];
	bool consumed;
	if (format)
		*format = CLI_TEXT;
	if (st)
		*st = (rt_read_stats){0};
	ssize_t got = peek_input(fd, head, sizeof head, &consumed);
	if (got < 0)
		return input_error(err, name, 0, errno == EISDIR ? "is a directory, not a trace" : strerror(errno));
	size_t n = (size_t)got;
	int sniffed = sniff(head, n, prof != NULL);
	if (sniffed < 0)
		return input_error(err, name, 1,
				   prof ? "expected the header line of a text trace ('version=..., arch=..., ...'); "
					  "not a binary trace, Valgrind XML or a Callgrind profile either"
					: "expected the header line of a text trace ('version=..., arch=..., ...'); "
					  "not a binary trace or Valgrind XML either");
	enum cli_format f = (enum cli_format)sniffed;
	if (format)
		*format = f;
	if (f == CLI_CALLGRIND)
		*prof = cg_profile_new();
	if (f == CLI_BINARY)
		return consumed ? read_binary_rest(t, fd, head, n, name, ro, st, err)
				: rt_bin_read_fd(t, fd, name, ro, st, err);
	if (consumed)
		return read_replayed(t, prof ? *prof : NULL, f, fd, head, n, name, ro, st, err);
	return read_as(t, prof ? *prof : NULL, f, fd, name, ro, st, err);
}

int cli_read_input(rt_trace *t, int fd, const char *name, const rt_read_opts *ro,
		   rt_read_stats *st, rt_diag *err, enum cli_format *format)
{
	return cli_read_input_cg(t, NULL, fd, name, ro, st, err, format);
}

int cli_read_trace(rt_trace *t, int fd, const char *name, const rt_read_opts *ro,
		   rt_read_stats *st, rt_diag *err)
{
	return cli_read_input(t, fd, name, ro, st, err, NULL);
}

unsigned cli_parse_threads(const char *cmd, const char *arg)
{
	uint64_t v;
	if (!cli_parse_u64(arg, 10, &v) || v < 1 || v > 64)
		cli_die_usage(cmd, "invalid --threads '%s': expected a number from 1 to 64", arg);
	return (unsigned)v;
}

/* Automatic: one reader and up to 3 decoding workers. More did not pay:
 * the reader's own work (the merge, the ids, the analysis) is the longer
 * half, and one worker keeps up with it on churn (bench/README.md). */
unsigned cli_threads(unsigned n)
{
	if (n)
		return n;
	long c = sysconf(_SC_NPROCESSORS_ONLN);
	return c < 1 ? 1 : c > 4 ? 4 : (unsigned)c;
}
