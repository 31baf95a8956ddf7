/* Compresses a finished raw trace into the compressed container, as
 * `rtrace run` does while the program runs (rt_bin_zopen, rt_bin_zclose),
 * for tests/cli/compress.sh, which compares every reader's output on the
 * two files of one run. The raw file is removed, as rtrace run removes it.
 * With --in-place, as rtrace run packs a short process's trace
 * (rt_bin_zpack): written over RAW, which becomes OUT; status 3 when the
 * container does not fit in RAW's header (RAW is left as it was).
 * usage: zpack [--in-place] RAW OUT [LEVEL] */
#include "rtrace/binary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(rt_diag *err)
{
	char m[700];
	rt_diag_format(err, m, sizeof m);
	fprintf(stderr, "zpack: %s\n", m);
	return 1;
}

int main(int argc, char **argv)
{
	int in_place = argc > 1 && !strcmp(argv[1], "--in-place");
	argv += in_place;
	argc -= in_place;
	if (argc < 3) {
		fprintf(stderr, "usage: zpack [--in-place] RAW OUT [LEVEL]\n");
		return 2;
	}
	rt_diag err;
	int level = argc > 3 ? atoi(argv[3]) : 1;
	if (in_place) {
		rt_bin_zpacker *p = rt_bin_zpacker_new(level);
		int rc = rt_bin_zpack(p, argv[1], argv[2], &err);
		rt_bin_zpacker_free(p);
		return rc < 0 ? fail(&err) : rc ? 0 : 3;
	}
	rt_bin_zwriter *w = rt_bin_zopen(argv[1], argv[2], level, &err);
	if (!w || rt_bin_zclose(w, true, &err))
		return fail(&err);
	return 0;
}
