/* rtrace run's report of the descriptors a trace of the fd module shows:
 * closes of descriptors that were not open, and the descriptors still
 * open at exit with the stacks that opened them, in the words and order
 * of valgrind --track-fds=yes (3.19: the most recent first, the standard
 * descriptors 0-2 counted, not listed; a descriptor under a stream is
 * one too). Then what valgrind has no words for, in rtrace's own: the
 * streams, directory streams and memory mappings the file and mmap
 * modules saw left open at exit (informational: not errors, as a
 * stream's descriptor already is one). */
#define _GNU_SOURCE
#include "cli.h"
#include "leak_report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fd_bad {
	uint64_t fd;
	uint32_t fn, bt, path; /* path: the last one fd had, or RT_NONE */
} fd_bad;

struct fd_track {
	uint32_t *path; /* per descriptor: string id of its last path + 1 */
	size_t cap;
	bool std_closed[3];
	bool seen; /* the trace has the fd resource type */
	fd_bad *bad;
	size_t nbad, cbad;
};

fd_track *fd_track_new(void)
{
	fd_track *f = calloc(1, sizeof(fd_track));
	if (!f)
		cli_die("out of memory");
	return f;
}

void fd_track_free(fd_track *f)
{
	if (!f)
		return;
	free(f->path);
	free(f->bad);
	free(f);
}

static void set_path(fd_track *f, uint64_t fd, uint32_t id)
{
	if (fd >= 1u << 20)
		return;
	if (fd >= f->cap) {
		size_t cap = f->cap ? f->cap : 64;
		while (cap <= fd)
			cap *= 2;
		f->path = cli_xrealloc(f->path, cap, sizeof *f->path);
		memset(f->path + f->cap, 0, (cap - f->cap) * sizeof *f->path);
		f->cap = cap;
	}
	f->path[fd] = id;
}

void fd_track_call(fd_track *f, rt_trace *t, const rt_call *c)
{
	if (!rt_trace_res_is(t, c->res_type, "fd"))
		return;
	f->seen = true;
	if (rt_trace_is_bad_close(t, c)) {
		uint32_t p = c->res_id < f->cap && f->path[c->res_id] ? f->path[c->res_id] - 1 : RT_NONE;
		if (f->nbad == f->cbad)
			f->bad = cli_xrealloc(f->bad, f->cbad = f->cbad ? f->cbad * 2 : 8, sizeof *f->bad);
		f->bad[f->nbad++] = (fd_bad){c->res_id, c->fn, c->bt, p};
		return;
	}
	if (c->res_id < 3)
		f->std_closed[c->res_id] = c->kind == RT_CALL_FREE;
	if (c->kind != RT_CALL_ALLOC)
		return;
	const char *path = rt_trace_call_arg(t, c, "path"), *old = rt_trace_call_arg(t, c, "oldfd");
	char *end;
	unsigned long o = old ? strtoul(old, &end, 10) : 0;
	if (path)
		set_path(f, c->res_id, rt_trace_intern(t, path, strlen(path)) + 1);
	else if (old && !*end && o < f->cap) /* a duplicate names its original's file */
		set_path(f, c->res_id, f->path[o]);
	else if (c->res_id < f->cap)
		set_path(f, c->res_id, 0);
}

const char *fd_track_path(const fd_track *f, const rt_trace *t, uint64_t fd)
{
	return fd < f->cap && f->path[fd] ? rt_trace_str(t, f->path[fd] - 1) : NULL;
}

static void report_bad(const rt_trace *t, const rt_vgxml_stack_opts *so, const fd_bad *b)
{
	if (b->path != RT_NONE)
		cli_info("File descriptor %" PRIu64 ": %s is already closed", b->fd, rt_trace_str(t, b->path));
	else
		cli_info("File descriptor %" PRIu64 " was never opened", b->fd);
	leak_print_stack(t, so, b->fn, b->bt);
	cli_info("%s", "");
}

/* "Open file descriptor 3: /etc/hostname", as valgrind words it: the
 * file's path (a duplicate's is its original's), nothing for a pipe and
 * the like; a socket by its domain (valgrind's addresses at exit are
 * unknown to the trace: its type and call instead). */
static void open_line(const rt_trace *t, const fd_track *f, const rt_call *c)
{
	const char *path = rt_trace_call_arg(t, c, "path"), *dom = rt_trace_call_arg(t, c, "domain");
	const char *type = rt_trace_call_arg(t, c, "type");
	if (!path && c->res_id < f->cap && f->path[c->res_id])
		path = rt_trace_str(t, f->path[c->res_id] - 1);
	if (path)
		cli_info("Open file descriptor %" PRIu64 ": %s", c->res_id, path);
	else if (dom)
		cli_info("Open %s socket %" PRIu64 ": <%s from %s>", dom, c->res_id, type ? type : "?",
			 c->fn != RT_NONE ? rt_trace_str(t, c->fn) : "?");
	else
		cli_info("Open file descriptor %" PRIu64 ":", c->res_id);
}

static bool is_open(const rt_trace *t, const rt_call *c, const char *type)
{
	return c->kind == RT_CALL_ALLOC && rt_trace_res_is(t, c->res_type, type);
}

void fd_report(const rt_trace *t, const fd_track *f, const rt_vgxml_stack_opts *so, leak_counts *n)
{
	if (!f->seen)
		return;
	for (size_t i = 0; i < f->nbad; i++)
		report_bad(t, so, &f->bad[i]);
	n->errors += f->nbad;
	n->contexts += f->nbad;
	const rt_call *c = rt_trace_calls_const(t);
	size_t nc = rt_trace_call_count(t), open = 0, std = 0;
	for (int s = 0; s < 3; s++)
		std += !f->std_closed[s];
	for (size_t i = 0; i < nc; i++)
		if (is_open(t, &c[i], "fd") && c[i].res_id >= 3)
			open++;
	cli_info("FILE DESCRIPTORS: %zu open (%zu std) at exit.", open + std, std);
	for (size_t i = nc; i-- > 0;) {
		if (!is_open(t, &c[i], "fd") || c[i].res_id < 3)
			continue;
		open_line(t, f, &c[i]);
		leak_print_stack(t, so, c[i].fn, c[i].bt);
		cli_info("%s", "");
		n->errors++;
		n->contexts++;
	}
}

/* What a stream was opened on: its path, popen's command, fdopen's
 * descriptor. */
static void stream_what(const rt_trace *t, const rt_call *c, char *buf, size_t n)
{
	const char *path = rt_trace_call_arg(t, c, "path"), *cmd = rt_trace_call_arg(t, c, "command");
	const char *fd = rt_trace_call_arg(t, c, "fd"), *mode = rt_trace_call_arg(t, c, "mode");
	const char *fn = c->fn != RT_NONE ? rt_trace_str(t, c->fn) : "?";
	int k;
	if (path)
		k = snprintf(buf, n, "%s", path);
	else if (cmd)
		k = snprintf(buf, n, "pipe to the command \"%s\"", cmd);
	else if (fd)
		k = snprintf(buf, n, "descriptor %s", fd);
	else
		k = snprintf(buf, n, "<%s>", fn);
	if (mode && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, " (mode \"%s\")", mode);
}

/* What a mapping maps: anonymous memory or a descriptor's file. */
static void mapping_what(const rt_trace *t, const rt_call *c, char *buf, size_t n)
{
	const char *fd = rt_trace_call_arg(t, c, "fd"), *off = rt_trace_call_arg(t, c, "offset");
	const char *prot = rt_trace_call_arg(t, c, "prot");
	if (rt_trace_call_arg(t, c, "split"))
		snprintf(buf, n, "the part of a mapping that munmap left");
	else if (fd && strcmp(fd, "-1"))
		snprintf(buf, n, "descriptor %s at offset %s, prot %s", fd, off ? off : "?", prot ? prot : "?");
	else
		snprintf(buf, n, "anonymous memory, prot %s", prot ? prot : "?");
}

/* One section of rtrace's own report: a count line, then each resource
 * of the type, the most recent first, with the stack that made it. */
static void section(const rt_trace *t, const rt_vgxml_stack_opts *so, const char *type, const char *title, const char *what)
{
	const rt_call *c = rt_trace_calls_const(t);
	size_t nc = rt_trace_call_count(t), open = 0;
	uint64_t bytes = 0;
	bool maps = !strcmp(type, "mmap");
	for (size_t i = 0; i < nc; i++)
		if (is_open(t, &c[i], type)) {
			open++;
			bytes += c[i].size;
		}
	if (!open)
		return;
	char a[32], b[1200];
	if (maps)
		cli_info("%s: %zu mapped at exit (%s bytes).", title, open, cli_grouped(bytes, a));
	else
		cli_info("%s: %zu open at exit.", title, open);
	for (size_t i = nc; i-- > 0;) {
		if (!is_open(t, &c[i], type))
			continue;
		if (maps) {
			mapping_what(t, &c[i], b, sizeof b);
			cli_info("Mapping of %s bytes at 0x%" PRIX64 ": %s", cli_grouped(c[i].size, a), c[i].res_id, b);
		} else {
			stream_what(t, &c[i], b, sizeof b);
			cli_info("Open %s 0x%" PRIX64 ": %s", what, c[i].res_id, b);
		}
		leak_print_stack(t, so, c[i].fn, c[i].bt);
		cli_info("%s", "");
	}
}

void fd_report_streams(const rt_trace *t, const rt_vgxml_stack_opts *so)
{
	section(t, so, "fp", "FILE STREAMS", "file stream");
	section(t, so, "dir", "DIRECTORY STREAMS", "directory stream");
	section(t, so, "mmap", "MEMORY MAPPINGS", NULL);
}
