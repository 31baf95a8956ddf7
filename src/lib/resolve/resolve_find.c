/* Finding a module's separate debug file: libdwfl's standard search
 * (dwfl_standard_find_debuginfo), with two changes.
 *
 * The cache (resolve_cache.c): when the file found by build id has
 * compressed sections, its decompressed copy is read instead, made the
 * first time.
 *
 * No debuginfod when no server is set. When it finds nothing, the
 * standard search ends by loading libdebuginfod, and with it libcurl and
 * the TLS libraries (9 ms), to ask the servers DEBUGINFOD_URLS names, even
 * when it names none. When it names none and none of the files the
 * standard search tries exists, the search is skipped. */
#include "resolve/resolve_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A copy of libdwfl's search path, to split with strsep. */
typedef struct rt_rpath {
	char *copy, *rest;
} rt_rpath;

/* The next entry of the path without its leading '+' or '-' (CRC
 * checking), NULL at the end. */
static const char *next_dir(rt_rpath *p)
{
	char *dir = strsep(&p->rest, ":");
	if (dir && (dir[0] == '+' || dir[0] == '-'))
		dir++;
	return dir;
}

/* DIR/.build-id/xx/yyyy.debug: where libdwfl looks for the debug file of
 * build id id under each absolute directory of the path. */
static char *build_id_name(const char *dir, const unsigned char *id, size_t len)
{
	size_t dl = strlen(dir);
	char *s = rt_xmalloc(dl + sizeof "/.build-id/xx/" + 2 * len + sizeof ".debug");
	char *p = s + sprintf(s, "%s/.build-id/%02x/", dir, id[0]);
	for (size_t i = 1; i < len; i++)
		p += sprintf(p, "%02x", id[i]);
	strcpy(p, ".debug");
	return s;
}

/* The debug file libdwfl finds by build id (the first in path order),
 * opened; *name is its path. */
static int open_by_build_id(const rt_resolver *r, const unsigned char *id, size_t len, char **name)
{
	rt_rpath p = {rt_xstrdup(r->debuginfo_path), NULL};
	const char *dir;
	int fd = -1;
	for (p.rest = p.copy; fd < 0 && (dir = next_dir(&p));) {
		if (dir[0] != '/')
			continue;
		*name = build_id_name(dir, id, len);
		if ((fd = open(*name, O_RDONLY | O_CLOEXEC)) < 0) {
			free(*name);
			*name = NULL;
		}
	}
	free(p.copy);
	return fd;
}

/* Whether something is at path: anything but "no such file" counts, as
 * the standard search would try it. */
static bool exists(const char *dir, const char *sub, const char *file)
{
	char path[8192];
	struct stat st;
	int n = snprintf(path, sizeof path, "%s%s%s%s%s", dir ? dir : "", dir ? "/" : "",
			 sub ? sub : "", sub ? "/" : "", file);
	if (n < 0 || (size_t)n >= sizeof path)
		return true;
	return stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

/* The names the standard search tries under directory entry dir of the
 * path, for the module file file (with directory fdir, NULL when
 * relative, and basename base) and debug link link (invented: "base.debug"
 * when the module has none, then base is tried as well). */
static bool exists_under(const char *dir, const char *fdir, const char *base, const char *link,
			 bool invented)
{
	if (!dir[0])
		return exists(fdir, NULL, link);
	if (dir[0] != '/')
		return exists(fdir, dir, link) || (invented && exists(fdir, dir, base));
	if (!fdir || fdir[0] != '/')
		return false;
	/* DIR/usr/lib/LINK, DIR/lib/LINK, DIR/LINK for a module in /usr/lib */
	for (const char *sub = strchr(fdir, '/');; sub = strchr(sub, '/')) {
		sub = sub ? sub + 1 : NULL;
		if (sub && !*sub)
			return false;
		if (exists(dir, sub, link) || (invented && exists(dir, sub, base)))
			return true;
		if (!sub)
			return false;
	}
}

static bool exists_for_file(const rt_resolver *r, const char *file, const char *link)
{
	const char *slash = strrchr(file, '/'), *base = slash ? slash + 1 : file;
	char *fdir = slash ? rt_xmalloc((size_t)(slash - file) + 1) : NULL, *made = NULL;
	if (fdir) {
		memcpy(fdir, file, (size_t)(slash - file));
		fdir[slash - file] = '\0';
	}
	bool invented = !link, found = false;
	if (invented) {
		made = rt_xmalloc(strlen(base) + sizeof ".debug");
		strcat(strcpy(made, base), ".debug");
		link = made;
	}
	rt_rpath p = {rt_xstrdup(r->debuginfo_path), NULL};
	const char *dir;
	for (p.rest = p.copy; !found && (dir = next_dir(&p));)
		found = exists_under(dir, fdir, base, link, invented);
	free(p.copy);
	free(made);
	free(fdir);
	return found;
}

/* Whether the standard search could find a debug file: any of the names
 * it tries (by build id, then by debug link for the module's path and its
 * real path) exists. */
static bool any_candidate(const rt_resolver *r, const unsigned char *id, int len,
			  const char *file, const char *link)
{
	char *name = NULL;
	int fd = len > 0 ? open_by_build_id(r, id, (size_t)len, &name) : -1;
	free(name);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	if (!file)
		return false;
	if (exists_for_file(r, file, link))
		return true;
	char *canon = realpath(file, NULL);
	bool found = canon && strcmp(canon, file) && exists_for_file(r, canon, link);
	free(canon);
	return found;
}

/* The cached copy of the debug file found by build id, made now if need
 * be; -1 when there is no such file or it needs no copy. */
static int cached(rt_resolver *r, const unsigned char *id, size_t len, char **name)
{
	char *orig = NULL;
	int src = open_by_build_id(r, id, len, &orig);
	if (src < 0)
		return -1;
	int fd = rt_resolve_cache_open(r->o.cache_dir, id, len, name);
	if (fd < 0 && rt_resolve_cache_wanted(src, id, len))
		fd = rt_resolve_cache_build(r, src, id, len, name);
	close(src);
	free(orig);
	return fd;
}

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Whether libdwfl asks for the module's debug file (as the first time,
 * and again when there was none), not for the dwz file of a debug file. */
static bool main_lookup(rt_rmod *m, const char *file, const char *link)
{
	if (!m->asked_debuginfo) {
		m->asked_debuginfo = true;
		m->debug_file = file ? rt_xstrdup(file) : NULL;
		m->debug_link = link ? rt_xstrdup(link) : NULL;
		return true;
	}
	return same(file, m->debug_file) && same(link, m->debug_link);
}

int rt_resolve_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	rt_rmod *m = *userdata;
	if (!m || !main_lookup(m, file_name, debuglink_file)) /* a dwz file */
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc, debuginfo_file_name);
	rt_resolver *r = m->owner;
	const unsigned char *id = NULL;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &id, &vaddr);
	int fd = r->o.cache_dir && len >= 3 && len <= 64 ? cached(r, id, (size_t)len, debuginfo_file_name) : -1;
	if (fd >= 0)
		return fd;
	const char *urls = getenv("DEBUGINFOD_URLS");
	bool usual_id = len <= 0 || (len >= 3 && len <= 64); /* libdwfl refuses others */
	if ((!urls || !*urls) && usual_id && !any_candidate(r, id, len, file_name, debuglink_file)) {
		errno = 0;
		return -1;
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
}
