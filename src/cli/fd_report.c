/* rtrace run's report of the descriptors a trace of the fd module shows:
 * closes of descriptors that were not open, and the descriptors still
 * open at exit with the stacks that opened them, in the words of
 * valgrind --track-fds=yes (3.19; the standard descriptors 0-2 are
 * counted, not listed). */
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
	const char *path = c->kind == RT_CALL_ALLOC ? rt_trace_call_arg(t, c, "path") : NULL;
	if (path)
		set_path(f, c->res_id, rt_trace_intern(t, path, strlen(path)) + 1);
}

static void report_bad(const rt_trace *t, const fd_bad *b)
{
	if (b->path != RT_NONE)
		cli_info("File descriptor %" PRIu64 ": %s is already closed", b->fd, rt_trace_str(t, b->path));
	else
		cli_info("File descriptor %" PRIu64 " was never opened", b->fd);
	leak_print_stack(t, b->fn, b->bt);
	cli_info("%s", "");
}

void fd_report(const rt_trace *t, const fd_track *f, leak_counts *n)
{
	if (!f->seen)
		return;
	for (size_t i = 0; i < f->nbad; i++)
		report_bad(t, &f->bad[i]);
	n->errors += f->nbad;
	n->contexts += f->nbad;
	const rt_call *c = rt_trace_calls_const(t);
	size_t nc = rt_trace_call_count(t), open = 0, std = 0;
	for (int s = 0; s < 3; s++)
		std += !f->std_closed[s];
	for (size_t i = 0; i < nc; i++)
		if (c[i].kind == RT_CALL_ALLOC && c[i].res_id >= 3 && rt_trace_res_is(t, c[i].res_type, "fd"))
			open++;
	cli_info("FILE DESCRIPTORS: %zu open (%zu std) at exit.", open + std, std);
	for (size_t i = 0; i < nc; i++) {
		if (c[i].kind != RT_CALL_ALLOC || !rt_trace_res_is(t, c[i].res_type, "fd") || c[i].res_id < 3)
			continue;
		char what[1100];
		rt_trace_fd_describe(t, &c[i], what, sizeof what);
		cli_info("Open file descriptor %" PRIu64 ": %s", c[i].res_id, what);
		leak_print_stack(t, c[i].fn, c[i].bt);
		cli_info("%s", "");
		n->errors++;
		n->contexts++;
	}
}
