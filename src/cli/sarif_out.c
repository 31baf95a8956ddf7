/* SARIF output, shared by rtrace run (--sarif-file) and rtrace convert
 * (--to sarif): the source root the artifact URIs are made relative to,
 * given or the current directory (where a CI job runs, its checkout), as
 * an absolute path with symlinks resolved, since the files' paths in the
 * debug info are absolute. */
#include "cli.h"
#include "rtrace/sarif.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int cli_write_sarif(const rt_trace *const *t, size_t n, int fd, const char *source_root,
		    const rt_vgxml_write_opts *vg)
{
	char root[PATH_MAX];
	if (!realpath(source_root ? source_root : ".", root))
		cli_die("source root '%s': %s", source_root ? source_root : ".", strerror(errno));
	rt_sarif_write_opts so = {root, *vg};
	return rt_sarif_write_fd(t, n, fd, &so);
}
