/* --suppressions=FILE of rtrace run and rtrace convert: each file read
 * into one set when the command line is read, so that a file that cannot
 * be read or is malformed stops the command before anything is run or
 * written, with the file, line and column and what was expected. */
#include "cli.h"
#include "rtrace/supp.h"

#include <stdlib.h>

rt_supp_set *cli_read_suppressions(rt_supp_set *set, const char *path)
{
	rt_diag err;
	if (!set)
		set = rt_supp_new();
	if (rt_supp_read_file(set, path, &err)) {
		char msg[1024];
		rt_diag_format(&err, msg, sizeof msg);
		cli_error("%s", msg);
		rt_supp_free(set);
		exit(RT_EXIT_USAGE);
	}
	return set;
}
