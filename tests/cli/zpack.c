/* Compresses a finished raw trace into the compressed container, as
 * `rtrace run` does while the program runs (rt_bin_zopen, rt_bin_zclose),
 * for tests/cli/compress.sh, which compares every reader's output on the
 * two files of one run. The raw file is removed, as rtrace run removes it.
 * usage: zpack RAW OUT [LEVEL] */
#include "rtrace/binary.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: zpack RAW OUT [LEVEL]\n");
		return 2;
	}
	rt_diag err;
	char m[700];
	rt_bin_zwriter *w = rt_bin_zopen(argv[1], argv[2], argc > 3 ? atoi(argv[3]) : 1, &err);
	if (!w || rt_bin_zclose(w, true, &err)) {
		rt_diag_format(&err, m, sizeof m);
		fprintf(stderr, "zpack: %s\n", m);
		return 1;
	}
	return 0;
}
