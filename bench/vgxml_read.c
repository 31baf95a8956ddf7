/* Benchmark driver for the Valgrind XML reader: reads FILE with
 * rt_vgxml_read_fd, dropping each top-level element once complete (the
 * streaming, constant-memory mode) or, with --keep, keeping everything,
 * and prints what it read. bench/vgxml.sh builds and times it.
 *
 *   vgxml_read [--keep] FILE */
#include "rtrace/vgxml.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static bool drop(void *ctx, rt_trace *t, uint32_t node)
{
	(void)ctx, (void)t, (void)node;
	return false;
}

int main(int argc, char **argv)
{
	bool keep = argc == 3 && !strcmp(argv[1], "--keep");
	if (argc != 2 && !keep) {
		fprintf(stderr, "usage: vgxml_read [--keep] FILE\n");
		return 2;
	}
	int fd = open(argv[argc - 1], O_RDONLY);
	if (fd < 0) {
		perror(argv[argc - 1]);
		return 2;
	}
	rt_trace *t = rt_trace_new();
	rt_vgxml_read_opts o = {keep ? NULL : drop, NULL, NULL};
	rt_vgxml_stats st;
	rt_diag err;
	int rc = rt_vgxml_read_fd(t, fd, argv[argc - 1], &o, &st, &err);
	if (rc) {
		char buf[1024];
		rt_diag_format(&err, buf, sizeof buf);
		fprintf(stderr, "vgxml_read: %s\n", buf);
	}
	printf("bytes %" PRIu64 " docs %" PRIu64 " errors %" PRIu64 " elements %" PRIu64
	       " nodes %zu backtraces %u\n", st.bytes, st.docs, st.errors, st.elements,
	       rt_vgxml_node_count(t), rt_trace_bt_count(t));
	rt_trace_free(t);
	close(fd);
	return rc ? 1 : 0;
}
