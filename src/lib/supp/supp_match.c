/* Matching suppressions against stacks (rtrace/supp.h), each format by
 * its own tool's rules: valgrind's (m_errormgr.c supp_matches_callers and
 * m_seqmatch.c: the frame lines match a prefix of the stack, "..." any
 * number of frames, names by VG_(string_match)'s wildcards, fun: against
 * the linkage name, "???" for what is unknown) and LeakSanitizer's
 * (lsan_common.cpp: any frame whose module, function or file the
 * pattern matches by TemplateMatch). */
#include "supp/supp_int.h"

#include <stdlib.h>
#include <string.h>

/* pat's next character against c (pat not at a '*'): the pattern after
 * it, or NULL when it does not match. */
static const char *wild_one(const char *pat, char c)
{
	if (*pat == '?')
		return pat + 1;
	if (*pat == '\\')
		return pat[1] && pat[1] == c ? pat + 2 : NULL;
	return *pat && *pat == c ? pat + 1 : NULL;
}

/* Without recursion: a mismatch goes back to the last '*' and lets it
 * take one more character, which the stars before it never need to (any
 * match they allow, the last one allows too). Time in the product of the
 * lengths; the recursive form was exponential in the stars (a fuzzed
 * pattern of 170 '*' ran for minutes). */
bool rt_supp_wildcard(const char *pat, const char *s)
{
	const char *star = NULL, *resume = s;
	for (;;) {
		if (*pat == '*') {
			while (*pat == '*')
				pat++;
			star = pat;
			resume = s;
			continue;
		}
		const char *next = *s ? wild_one(pat, *s) : NULL;
		if (next) {
			pat = next;
			s++;
			continue;
		}
		if (!*s && !*pat)
			return true;
		if (!star || !*resume)
			return false;
		pat = star;
		s = ++resume;
	}
}

/* The next '*' or '$' of pat, or its end. */
static size_t lsan_piece(const char *pat)
{
	return strcspn(pat, "*$");
}

bool rt_supp_lsan_match(const char *pat, const char *s)
{
	if (!s || !*s)
		return false;
	bool start = *pat == '^', asterisk = false;
	pat += start;
	while (*pat) {
		if (*pat == '*') {
			pat++;
			start = false;
			asterisk = true;
			continue;
		}
		if (*pat == '$')
			return !*s || asterisk;
		if (!*s)
			return false;
		size_t n = lsan_piece(pat);
		const char *at = NULL;
		for (const char *p = s; *p && !at; p++) /* strstr on n bytes of pat */
			if (!strncmp(p, pat, n))
				at = p;
		if (!at || (start && at != s))
			return false;
		s = at + n;
		pat += n;
		start = asterisk = false;
	}
	return true;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

static bool loc_matches(const supp_loc *l, const rt_supp_frame *f)
{
	const char *name;
	switch (l->ty) {
	case LOC_FUN:
		name = f->fn ? f->fn : "???";
		break;
	case LOC_OBJ:
		name = f->obj ? f->obj : "???";
		break;
	default: /* LOC_SRC: the file as valgrind names it, its base name */
		if (!f->file || (l->line && l->line != f->line))
			return false;
		name = base_name(f->file);
	}
	return rt_supp_wildcard(l->name, name);
}

/* Whether locs[0..nl) match a prefix of frames f[0..n). As the name
 * wildcards (rt_supp_wildcard): a mismatch goes back to the last "..."
 * only, which takes one more frame; recursing at each "..." took time
 * exponential in their number. */
static bool match_from(const supp_loc *locs, uint32_t nl, const rt_supp_frame *f, size_t n)
{
	const supp_loc *star = NULL;
	uint32_t star_nl = 0;
	const rt_supp_frame *resume = f;
	size_t resume_n = n;
	for (;;) {
		if (!nl)
			return true;
		if (locs->ty == LOC_DOTS) {
			while (nl && locs->ty == LOC_DOTS)
				locs++, nl--;
			star = locs, star_nl = nl;
			resume = f, resume_n = n;
			continue;
		}
		if (n && loc_matches(locs, f)) {
			locs++, nl--, f++, n--;
			continue;
		}
		if (!star || !resume_n)
			return false;
		locs = star, nl = star_nl;
		f = ++resume, n = --resume_n;
	}
}

static bool lsan_matches(const supp *su, const rt_supp_frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *shown = f[i].shown ? f[i].shown : f[i].fn;
		if (rt_supp_lsan_match(su->name, f[i].obj) || rt_supp_lsan_match(su->name, shown) ||
		    rt_supp_lsan_match(su->name, f[i].file))
			return true;
	}
	return false;
}

/* extra: the error's line after the kind (FishyValue's "malloc(size)"),
 * which the suppression's must equal; NULL: not compared. */
bool rt_supp_match_one(const supp *su, const char *kind, const char *extra, unsigned leak_kind,
		       const rt_supp_frame *f, size_t n, uint32_t max)
{
	if (strcmp(su->kind, kind))
		return false;
	if (extra && (!su->extra || strcmp(su->extra, extra)))
		return false;
	if (!strcmp(kind, "Leak") && !(su->leak_kinds & (1u << leak_kind)))
		return false;
	if (su->lsan)
		return lsan_matches(su, f, n);
	return match_from(su->locs, max && max < su->nlocs ? max : su->nlocs, f, n);
}

bool rt_supp_matches(const rt_supp_set *s, size_t i, const char *kind, unsigned leak_kind,
		     const rt_supp_frame *frames, size_t n)
{
	return i < s->n && rt_supp_match_one(&s->v[i], kind, NULL, leak_kind, frames, n, 0);
}

rt_supp_frame *rt_supp_frames(const rt_trace *t, uint32_t bt, size_t *n)
{
	uint32_t nf = bt == RT_NONE ? 0 : rt_trace_bt_len(t, bt);
	rt_supp_frame *v = NULL;
	size_t cap = 0;
	*n = 0;
	for (uint32_t i = 0; i < nf; i++) {
		rt_frame_info fi = {RT_NONE, 0, NULL};
		rt_trace_frame_info(t, &rt_trace_bt_frames(t, bt)[i], &fi);
		const char *obj = fi.module != RT_NONE ? rt_trace_str(t, fi.module) : NULL;
		for (uint32_t k = 0; k < (fi.n ? fi.n : 1); k++) {
			const rt_srcloc *l = k < fi.n ? &fi.locs[k] : NULL;
			rt_supp_frame f = {NULL, NULL, obj, NULL, 0};
			if (l && l->fn != RT_NONE)
				f.fn = f.shown = rt_trace_str(t, l->fn);
			if (l && l->linkage)
				f.fn = rt_trace_str(t, l->linkage - 1);
			if (l && l->file != RT_NONE) {
				f.file = rt_trace_str(t, l->file);
				f.line = l->line;
			}
			RT_PUSH(v, *n, cap, f);
		}
	}
	return v;
}
