/* Stacks for the SARIF writer: a Valgrind stack (a backtrace whose frames
 * carry obj/fn/file/line details) as the functions Valgrind prints, one
 * per entry of each frame's inline chain; which of them a result points
 * at; their locations; and the finding's fingerprint.
 *
 * The location a user wants is the first frame in their own code, not
 * the allocator's replacement (valgrind's vgpreload_*.so, rtrace's
 * preload library), not libc or the C++ library (their sources, when a
 * debug package gives any, sit in system directories or have relative
 * paths in system modules). With a source root, "their own code" is what
 * lies under it.
 *
 * The fingerprint must keep a finding's identity across runs (addresses
 * move with ASLR, loss record numbers and byte counts change) and across
 * commits (lines move with unrelated edits, the checkout directory
 * differs between machines), and tell different findings apart: so it is
 * made of the tool, the kind, the name of every function of the error's
 * stacks (the module's base name for a frame without one) and the base
 * name of the source file of the user's frames, and of nothing else. Two
 * findings that still look the same (two frees in one function) are told
 * apart by the writer, by their order: "HASH:1", "HASH:2", as GitHub
 * numbers its own line hashes. */
#include "sarif/sarif_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static bool is_interposer(const char *module)
{
	const char *b = module ? base_name(module) : "";
	return !strncmp(b, "vgpreload_", 10) || !strncmp(b, "librtrace-preload", 17);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* System libraries and headers: not the user's code. */
static bool is_system_path(const char *p)
{
	static const char *const dirs[] = {"/usr/", "/lib/", "/lib64/", "/lib32/", "/libx32/", "/opt/rh/"};
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
		if (has_prefix(p, dirs[i]))
			return true;
	return false;
}

static void add(sarif_stack *s, size_t *cap, const sarif_frame *f)
{
	if (s->n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		sarif_frame *nf = realloc(s->f, *cap * sizeof *nf);
		if (!nf)
			abort();
		s->f = nf;
	}
	s->f[s->n++] = *f;
}

void rt_sarif_stack(const rt_trace *t, uint32_t bt, sarif_stack *s)
{
	size_t cap = 0;
	s->f = NULL;
	s->n = 0;
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(t, bt);
	const rt_frame *fr = n ? rt_trace_bt_frames(t, bt) : NULL;
	for (uint32_t i = 0; i < n; i++) {
		rt_frame_info fi;
		sarif_frame f = {fr[i].addr, NULL, NULL, NULL, 0, false};
		if (!rt_trace_frame_info(t, &fr[i], &fi)) {
			add(s, &cap, &f);
			continue;
		}
		f.module = fi.module == RT_NONE ? NULL : rt_trace_str(t, fi.module);
		f.interposer = is_interposer(f.module);
		for (uint32_t k = 0; k < (fi.n ? fi.n : 1); k++) {
			const rt_srcloc *l = fi.n ? &fi.locs[k] : NULL;
			f.fn = l && l->fn != RT_NONE ? rt_trace_str(t, l->fn) : NULL;
			f.file = l && l->file != RT_NONE ? rt_trace_str(t, l->file) : NULL;
			f.line = l ? l->line : 0;
			add(s, &cap, &f);
		}
	}
}

/* The part of path under root ("a/b.c"), or NULL when it is not under it. */
static const char *under_root(const char *path, const char *root)
{
	size_t n = root ? strlen(root) : 0;
	while (n > 1 && root[n - 1] == '/')
		n--;
	if (!n || strncmp(path, root, n) || (path[n] != '/' && root[n - 1] != '/'))
		return NULL;
	path += n;
	while (*path == '/')
		path++;
	return *path ? path : NULL;
}

/* Source in the user's code, whatever the root: not the interposer, not
 * in a system directory or a system module. */
static bool is_user_frame(const sarif_frame *f)
{
	if (!f->file || f->interposer || is_system_path(f->file))
		return false;
	return f->file[0] == '/' || !f->module || !is_system_path(f->module);
}

long rt_sarif_primary(const sarif_stack *s, const char *root)
{
	for (size_t i = 0; root && i < s->n; i++)
		if (s->f[i].file && !s->f[i].interposer && under_root(s->f[i].file, root))
			return (long)i;
	for (size_t i = 0; i < s->n; i++)
		if (is_user_frame(&s->f[i]))
			return (long)i;
	for (size_t i = 0; i < s->n; i++)
		if (s->f[i].file && !s->f[i].interposer)
			return (long)i;
	for (size_t i = 0; i < s->n; i++)
		if (s->f[i].module && !s->f[i].interposer)
			return (long)i;
	for (size_t i = 0; i < s->n; i++) /* memcheck's argument checks of malloc & co */
		if (s->f[i].module)
			return (long)i;
	return -1;
}

/* A path as a URI reference: RFC 3986's unreserved characters and '/'
 * as they are, every other byte percent-encoded. */
static void put_uri(sj *j, const char *prefix, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(prefix), cap = n + 3 * strlen(path) + 1;
	char *u = malloc(cap);
	if (!u)
		abort();
	memcpy(u, prefix, n);
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/", *p)) {
			u[n++] = (char)*p;
		} else {
			u[n++] = '%';
			u[n++] = hex[*p >> 4];
			u[n++] = hex[*p & 15];
		}
	}
	sj_strn(j, "uri", u, n);
	free(u);
}

static void put_physical(sj *j, const sarif_frame *f, const char *root)
{
	const char *path = f->file ? f->file : f->module;
	const char *rel = under_root(path, root);
	sj_obj(j, "physicalLocation");
	sj_obj(j, "artifactLocation");
	if (rel) {
		put_uri(j, "", rel);
		sj_str(j, "uriBaseId", "SRCROOT");
	} else {
		put_uri(j, path[0] == '/' ? "file://" : "", path);
	}
	sj_end(j, '}');
	if (f->file && f->line) {
		sj_obj(j, "region");
		sj_u64(j, "startLine", f->line);
		sj_end(j, '}');
	}
	sj_end(j, '}');
}

void rt_sarif_location(sj *j, const char *key, const sarif_frame *f, const char *root, const char *msg,
		       long id)
{
	sj_obj(j, key);
	if (id >= 0)
		sj_u64(j, "id", (uint64_t)id);
	if (f->file || f->module)
		put_physical(j, f, root);
	if (f->fn) {
		sj_arr(j, "logicalLocations");
		sj_obj(j, NULL);
		sj_str(j, "fullyQualifiedName", f->fn);
		sj_str(j, "kind", "function");
		sj_end(j, '}');
		sj_end(j, ']');
	}
	if (msg)
		sj_text(j, "message", msg);
	sj_end(j, '}');
}

const char *rt_sarif_frame_text(const sarif_frame *f, char *buf, size_t len)
{
	const char *fn = f->fn ? f->fn : "???";
	if (f->file && f->line)
		snprintf(buf, len, "%s (%s:%u)", fn, base_name(f->file), f->line);
	else if (f->file)
		snprintf(buf, len, "%s (%s)", fn, base_name(f->file));
	else if (f->module)
		snprintf(buf, len, "%s (in %s)", fn, f->module);
	else
		snprintf(buf, len, "%s", fn);
	return buf;
}

/* FNV-1a, 64 bits, over s and its NUL. */
static uint64_t fnv(uint64_t h, const char *s)
{
	do {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	} while (*s++);
	return h;
}

static void mix(uint64_t h[2], const char *s)
{
	h[0] = fnv(h[0], s);
	h[1] = fnv(h[1], s);
}

void rt_sarif_fingerprint(const char *tool, const char *kind, const sarif_stack *s, size_t n, char hex[33])
{
	uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
	mix(h, tool);
	mix(h, kind);
	for (size_t k = 0; k < n; k++) {
		mix(h, "|"); /* where a stack starts */
		for (size_t i = 0; i < s[k].n; i++) {
			const sarif_frame *f = &s[k].f[i];
			mix(h, f->fn ? f->fn : f->module ? base_name(f->module) : "???");
			mix(h, is_user_frame(f) ? base_name(f->file) : "");
		}
	}
	snprintf(hex, 33, "%016llx%016llx", (unsigned long long)h[0], (unsigned long long)h[1]);
}
