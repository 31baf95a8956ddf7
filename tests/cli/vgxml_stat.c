/* Reads a Valgrind XML file with rt_vgxml_read_fd and prints what the
 * tests compare with valgrind's own figures, one fact per line:
 *   docs N / errors N / elements N / truncated 0|1 / nodes N
 *   frames N          <frame>s of every <stack> (inline chains expanded)
 *   kind KIND         one line per top-level <error>
 *   leak KIND BYTES BLOCKS DIRECT   per loss record (DIRECT: the bytes
 *                     without the indirect ones the text mentions)
 *   counted N         the sum of the last <errorcounts>' counts
 *   warning MSG / error MSG
 * With --drop every top-level element is dropped as it completes (the
 * streaming mode): only the counts are printed then. Exit status 0 when
 * the file reads, 1 when not, 2 on a usage error. */
#include "rtrace/vgxml.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_warn(void *ctx, const rt_diag *d)
{
	char buf[1024];
	(void)ctx;
	rt_diag_format(d, buf, sizeof buf);
	printf("warning %s\n", buf);
}

static bool drop(void *ctx, rt_trace *t, uint32_t node)
{
	(void)t, (void)node;
	size_t *peak = ctx;
	if (rt_vgxml_node_count(t) > *peak)
		*peak = rt_vgxml_node_count(t);
	return false;
}

static uint64_t frames_of(const rt_trace *t)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < rt_vgxml_node_count(t); i++) {
		uint32_t bt = rt_vgxml_node_at(t, i)->bt;
		if (bt == RT_NONE)
			continue;
		const rt_frame *f = rt_trace_bt_frames(t, bt);
		for (uint32_t k = 0; k < rt_trace_bt_len(t, bt); k++) {
			rt_frame_info info;
			n += rt_trace_frame_info(t, &f[k], &info) && info.n ? info.n : 1;
		}
	}
	return n;
}

/* A loss record: memcheck's figures, in <xwhat> (protocol 4) or beside
 * <what> (protocols 1-3). */
static void print_leak(const rt_trace *t, uint32_t e, const char *kind)
{
	uint32_t xw = rt_vgxml_find(t, e, "xwhat", RT_NONE);
	uint32_t at = xw != RT_NONE ? xw : e;
	const char *bytes = rt_vgxml_child_text(t, at, "leakedbytes");
	const char *blocks = rt_vgxml_child_text(t, at, "leakedblocks");
	const char *text = rt_vgxml_child_text(t, at, xw != RT_NONE ? "text" : "what");
	unsigned long long direct = bytes ? strtoull(bytes, NULL, 10) : 0;
	const char *paren = text ? strstr(text, " (") : NULL;
	if (paren && strstr(paren, " direct,"))
		direct = strtoull(paren + 2, NULL, 10);
	printf("leak %s %s %s %llu\n", kind, bytes ? bytes : "?", blocks ? blocks : "?", direct);
}

static void print_doc(const rt_trace *t, uint32_t root)
{
	uint64_t counted = 0;
	bool any = false;
	for (uint32_t c = rt_vgxml_node_at(t, root)->child; c != RT_NONE; c = rt_vgxml_node_at(t, c)->next) {
		const char *name = rt_vgxml_name(t, c);
		if (!strcmp(name, "errorcounts")) {
			counted = 0;
			any = true;
			for (uint32_t p = rt_vgxml_find(t, c, "pair", RT_NONE); p != RT_NONE;
			     p = rt_vgxml_find(t, c, "pair", p))
				counted += strtoull(rt_vgxml_child_text(t, p, "count"), NULL, 10);
		}
		if (strcmp(name, "error"))
			continue;
		const char *kind = rt_vgxml_child_text(t, c, "kind");
		printf("kind %s\n", kind ? kind : "?");
		if (kind && !strncmp(kind, "Leak_", 5))
			print_leak(t, c, kind);
	}
	if (any)
		printf("counted %" PRIu64 "\n", counted);
}

int main(int argc, char **argv)
{
	bool dropping = argc == 3 && !strcmp(argv[1], "--drop");
	if (argc != 2 && !dropping) {
		fprintf(stderr, "usage: vgxml_stat [--drop] FILE.xml\n");
		return 2;
	}
	const char *path = argv[argc - 1];
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return 2;
	}
	rt_trace *t = rt_trace_new();
	size_t peak = 0;
	rt_vgxml_read_opts o = {dropping ? drop : NULL, on_warn, &peak};
	rt_vgxml_stats st;
	rt_diag err;
	int rc = rt_vgxml_read_fd(t, fd, path, &o, &st, &err);
	close(fd);
	printf("docs %" PRIu64 "\nerrors %" PRIu64 "\nelements %" PRIu64 "\ntruncated %d\n",
	       st.docs, st.errors, st.elements, st.truncated);
	if (dropping) {
		printf("peak nodes %zu\n", peak);
	} else {
		printf("nodes %zu\nframes %" PRIu64 "\n", rt_vgxml_node_count(t), frames_of(t));
		for (size_t d = 0; d < rt_vgxml_doc_count(t); d++)
			print_doc(t, rt_vgxml_doc_root(t, d));
	}
	if (rc) {
		char buf[1024];
		rt_diag_format(&err, buf, sizeof buf);
		printf("error %s\n", buf);
	}
	rt_trace_free(t);
	return rc ? 1 : 0;
}
