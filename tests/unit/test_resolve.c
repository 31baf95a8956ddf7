/* The resolver API on the test programs (PROGRAMS: the build's
 * tests/programs directory): every byte of their code resolves to the
 * inline chain that `addr2line -f -i -C` gives for it; mappings of modules
 * loaded at the same place at different times; missing modules; the pass
 * over a trace and what it leaves in the model. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrace/rtrace.h"
#include "model/trace_int.h"

#define BASE 0x555500000000ull

static char *program(const char *name)
{
	const char *dir = getenv("PROGRAMS");
	char *path;
	assert_non_null(dir);
	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	return path;
}

typedef struct layout {
	uint64_t seg_off, seg_vaddr, seg_len; /* the executable segment */
	uint64_t text, text_len;              /* .text */
} layout;

static void read_layout(const char *path, layout *l)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n, shstr;
	assert_int_equal(elf_getphdrnum(e, &n), 0);
	memset(l, 0, sizeof *l);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		gelf_getphdr(e, (int)i, &ph);
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && !l->seg_len) {
			l->seg_off = ph.p_offset & ~0xfffull;
			l->seg_vaddr = ph.p_vaddr & ~0xfffull;
			l->seg_len = ph.p_offset + ph.p_filesz - l->seg_off;
		}
	}
	assert_int_equal(elf_getshdrstrndx(e, &shstr), 0);
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		gelf_getshdr(s, &sh);
		if (!strcmp(elf_strptr(e, shstr, sh.sh_name), ".text")) {
			l->text = sh.sh_addr;
			l->text_len = sh.sh_size;
		}
	}
	elf_end(e);
	close(fd);
	assert_true(l->seg_len && l->text_len);
}

/* A trace whose only mapping is path's executable segment at BASE. */
static rt_trace *trace_with(const char *path, const layout *l)
{
	rt_trace *t = rt_trace_new();
	rt_mmap m = {path, BASE, BASE + ((l->seg_len + 0xfff) & ~0xfffull), l->seg_off, 0, UINT64_MAX};
	rt_trace_add_mmap_full(t, &m);
	return t;
}

static void strip_suffix(char *s)
{
	s[strcspn(s, "\n")] = '\0';
	char *d = strstr(s, " (discriminator");
	if (d)
		*d = '\0';
}

/* addr2line names a C++ function with internal linkage by its symbol
 * ("(anonymous namespace)::f(int) [clone .constprop.0]") except at some
 * addresses, where it gives the DWARF name ("f"): both name it. */
static bool same_function(const char *ours, const char *theirs)
{
	if (!strcmp(ours, theirs))
		return true;
	const char *p = strstr(ours, theirs);
	size_t n = strlen(theirs);
	return p && (p == ours || p[-1] == ':') && p[n] == '(';
}

/* Every byte of .text: the chain must be addr2line's, entry by entry,
 * where addr2line knows the file and line. Returns how many matched. */
static int compare_text(const char *name)
{
	char *path = program(name), *cmd, line[4096], loc[4096];
	layout l;
	read_layout(path, &l);
	rt_trace *t = trace_with(path, &l);
	rt_resolve_opts o = {0};
	o.exact = true;
	rt_resolver *r = rt_resolve_new(t, &o);
	char list[] = "/tmp/rt-resolve-addrs-XXXXXX";
	int fd = mkstemp(list);
	FILE *af = fdopen(fd, "w");
	for (uint64_t a = l.text; a < l.text + l.text_len; a++)
		fprintf(af, "0x%llx\n", (unsigned long long)a);
	fclose(af);
	assert_true(asprintf(&cmd, "addr2line -a -f -i -C -e '%s' < %s", path, list) > 0);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	int matched = 0;
	rt_resolved res = {0};
	uint32_t k = 0;
	uint64_t cur = 0;
	bool skip = true;
	while (fgets(line, sizeof line, p)) {
		strip_suffix(line);
		if (!strncmp(line, "0x", 2)) {
			uint64_t a = cur = strtoull(line, NULL, 16);
			assert_true(rt_resolve_addr(r, a - l.seg_vaddr + BASE, 1, &res));
			k = 0;
			skip = false;
			continue;
		}
		assert_non_null(fgets(loc, sizeof loc, p));
		strip_suffix(loc);
		if (skip || !strncmp(loc, "??", 2)) {
			skip = true; /* addr2line knows no line: padding, PLT */
			continue;
		}
		char *colon = strrchr(loc, ':');
		*colon = '\0';
		const rt_resolve_loc *got = k < res.n ? &res.locs[k] : NULL;
		bool no_line = atoi(colon + 1) == 0; /* "crtstuff.c:?" */
		if (!got || !got->fn || !same_function(got->fn, line) ||
		    (!no_line && (!got->file || strcmp(got->file, loc) ||
				  got->line != (uint32_t)atoi(colon + 1))))
			fail_msg("%s 0x%llx: %s, entry %u: addr2line says %s at %s:%s, resolved %s at %s:%u",
				 name, (unsigned long long)cur, res.text ? res.text : "(no text)", k, line, loc, colon + 1,
				 got && got->fn ? got->fn : "-", got && got->file ? got->file : "-",
				 got ? got->line : 0);
		k++;
		matched++;
	}
	assert_int_equal(pclose(p), 0);
	unlink(list);
	rt_resolve_free(r);
	rt_trace_free(t);
	free(cmd);
	free(path);
	return matched;
}

static void chains_match_addr2line(void **state)
{
	(void)state;
	static const char *const names[] = {
		"tp_resolve_O0", "tp_resolve_O2", "libtp_reslib.so", "libtp_resplug_a.so",
		"tp_resolve_cxx",
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		assert_true(compare_text(names[i]) > 20);
}

/* A trace of two plugins mapped at BASE one after the other (a until
 * call 100, b from then); *la is a's layout. */
static rt_trace *two_plugins(char **a, char **b, layout *la)
{
	*a = program("libtp_resplug_a.so");
	*b = program("libtp_resplug_b.so");
	layout lb;
	read_layout(*a, la);
	read_layout(*b, &lb);
	rt_trace *t = rt_trace_new();
	rt_mmap ma = {*a, BASE, BASE + 0x1000, la->seg_off, 0, 100};
	rt_mmap mb = {*b, BASE, BASE + 0x1000, lb.seg_off, 100, UINT64_MAX};
	rt_trace_add_mmap_full(t, &ma);
	rt_trace_add_mmap_full(t, &mb);
	return t;
}

/* Resolves one address of plugin_alloc in each of two plugins mapped at
 * the same place one after the other. */
static void mappings_by_call_index(void **state)
{
	(void)state;
	char *a, *b;
	layout la;
	rt_trace *t = two_plugins(&a, &b, &la);
	assert_int_equal(rt_trace_mmap_at(t, 0)->until, 100);
	rt_resolve_opts o = {0};
	o.exact = true;
	rt_resolver *r = rt_resolve_new(t, &o);
	rt_resolved res;
	uint64_t addr = BASE + (la.text - la.seg_vaddr) + 1;
	assert_true(rt_resolve_addr(r, addr, 50, &res));
	assert_string_equal(res.module, a);
	assert_true(rt_resolve_addr(r, addr, 150, &res));
	assert_string_equal(res.module, b);
	assert_false(rt_resolve_addr(r, BASE + 0x1000, 50, &res));
	assert_null(res.text);
	rt_resolve_stats st;
	rt_resolve_get_stats(r, &st);
	assert_int_equal(st.modules, 2);
	assert_int_equal(st.addrs, 2);
	rt_resolve_free(r);
	rt_trace_free(t);
	free(a);
	free(b);
}

/* The entries found again by address (the resolver's direct-mapped
 * cache) stay those of the call's mapping: an address of two mappings at
 * one place resolves per call, again and again in any order; one of a
 * mapping alone, and one of none, the same at every call. */
static void entries_again_by_call(void **state)
{
	(void)state;
	char *a, *b;
	layout la;
	rt_trace *t = two_plugins(&a, &b, &la);
	rt_mmap mc = {a, BASE + 0x100000, BASE + 0x101000, la.seg_off, 0, 10}; /* alone */
	rt_trace_add_mmap_full(t, &mc);
	rt_resolve_opts o = {0};
	o.exact = true;
	rt_resolver *r = rt_resolve_new(t, &o);
	rt_resolved res;
	uint64_t addr = BASE + (la.text - la.seg_vaddr) + 1, calls[] = {50, 150, 150, 50, 99, 100, 0};
	for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
		assert_true(rt_resolve_addr(r, addr, calls[i], &res));
		assert_string_equal(res.module, calls[i] < 100 ? a : b);
		assert_true(rt_resolve_addr(r, addr + 0x100000, calls[i], &res));
		assert_string_equal(res.module, a);
		assert_false(rt_resolve_addr(r, BASE + 0x2000, calls[i], &res));
	}
	rt_resolve_stats st;
	rt_resolve_get_stats(r, &st);
	assert_int_equal(st.addrs, 3);
	rt_resolve_free(r);
	rt_trace_free(t);
	free(a);
	free(b);
}

static void count_warning(void *ctx, const char *msg)
{
	(void)msg;
	++*(int *)ctx;
}

static void missing_module_warns_once(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	rt_trace_add_mmap(t, "/nonexistent/libgone.so", BASE, BASE + 0x10000);
	int warnings = 0;
	rt_resolve_opts o = {0};
	o.warn = count_warning;
	o.ctx = &warnings;
	rt_resolver *r = rt_resolve_new(t, &o);
	rt_resolved res;
	for (uint64_t i = 1; i < 100; i++) {
		assert_true(rt_resolve_addr(r, BASE + i * 16, 1, &res));
		assert_string_equal(res.module, "/nonexistent/libgone.so");
		assert_null(res.text);
		assert_int_equal(res.n, 0);
	}
	assert_int_equal(warnings, 1);
	rt_resolve_stats st;
	rt_resolve_get_stats(r, &st);
	assert_int_equal(st.missing, 1);
	assert_int_equal(st.functions, 0);
	rt_resolve_free(r);
	rt_trace_free(t);
}

/* The address of the instruction after the first call in res_leaf: a
 * return address whose call site is res_inner inlined into res_leaf. */
static uint64_t leaf_return(const char *path, const layout *l)
{
	char *cmd, buf[256];
	assert_true(asprintf(&cmd, "objdump -d --no-show-raw-insn '%s' | awk '/<res_leaf>:/ {f=1; next} "
			     "f && /call/ {getline; print $1; exit}'", path) > 0);
	FILE *p = popen(cmd, "r");
	assert_non_null(fgets(buf, sizeof buf, p));
	pclose(p);
	free(cmd);
	return strtoull(buf, NULL, 16) - l->seg_vaddr + BASE;
}

static void trace_pass(void **state)
{
	(void)state;
	char *path = program("tp_resolve_O2");
	layout l;
	read_layout(path, &l);
	rt_trace *t = trace_with(path, &l);
	uint64_t ret = leaf_return(path, &l);
	uint32_t pre = rt_trace_intern(t, "kept() at x.c:1", 15);
	rt_frame f[3] = {{ret, RT_NONE}, {0x10, RT_NONE}, {ret + 1, pre}};
	rt_call c = {0};
	c.index = 1;
	c.kind = RT_CALL_ALLOC;
	c.bt = rt_trace_intern_bt(t, f, 3);
	rt_trace_append_call(t, &c);
	rt_trace_set_header(t, "filter", "leaks");
	rt_resolve_stats st;
	rt_resolve_trace(t, NULL, &st);
	assert_int_equal(rt_trace_filter_bits(t), RT_FILTER_LEAKS | RT_FILTER_RESOLVE);
	const rt_frame *g = rt_trace_bt_frames(t, rt_trace_calls(t)[0].bt);
	const char *text = rt_trace_str(t, g[0].text);
	assert_int_equal(strncmp(text, "res_inner() at ", 15), 0);
	assert_non_null(strstr(text, "/tests/programs/tp_resolve.c:"));
	assert_int_equal(g[1].text, RT_NONE); /* in no mapping */
	assert_int_equal(g[2].text, pre);     /* resolved before */
	rt_frame_info fi;
	assert_true(rt_trace_frame_info(t, &g[0], &fi));
	assert_string_equal(rt_trace_str(t, fi.module), path);
	assert_int_equal(fi.n, 2); /* res_inner inlined into res_leaf */
	assert_string_equal(rt_trace_str(t, fi.locs[0].fn), "res_inner");
	assert_string_equal(rt_trace_str(t, fi.locs[1].fn), "res_leaf");
	assert_int_equal(fi.locs[1].flags & RT_SRCLOC_DEMANGLED, 0);
	assert_true(fi.locs[0].line > 0 && fi.locs[1].line > fi.locs[0].line);
	assert_false(rt_trace_frame_info(t, &g[1], &fi));
	assert_int_equal(st.addrs, 1);
	assert_int_equal(st.lines, 1);
	rt_trace_free(t);
	free(path);
}

/* In place (rtrace heap's pass): the stacks keep their ids and no
 * resolved copy is interned (the count of stacks, so of frames, does
 * not grow); one that comes out equal to an earlier stack is replaced by
 * it, as interning would; the texts are the copying pass's. */
static void in_place_pass(void **state)
{
	(void)state;
	char *path = program("tp_resolve_O2");
	layout l;
	read_layout(path, &l);
	uint64_t ret = leaf_return(path, &l);
	rt_trace *t0 = trace_with(path, &l); /* the copying pass's text of ret */
	rt_frame f0 = {ret, RT_NONE};
	rt_call c = {0};
	c.index = 1;
	c.kind = RT_CALL_ALLOC;
	c.bt = rt_trace_intern_bt(t0, &f0, 1);
	rt_trace_append_call(t0, &c);
	rt_resolve_trace(t0, NULL, NULL);
	const char *text = rt_trace_str(t0, rt_trace_bt_frames(t0, rt_trace_calls(t0)[0].bt)[0].text);
	assert_int_equal(strncmp(text, "res_inner() at ", 15), 0);

	rt_trace *t = trace_with(path, &l);
	rt_frame a = {ret, rt_trace_intern(t, text, strlen(text))}; /* resolved already */
	rt_frame b[2] = {{ret, RT_NONE}, {0x10, RT_NONE}};
	uint32_t ida = rt_trace_intern_bt(t, &a, 1), idb = rt_trace_intern_bt(t, b, 1);
	uint32_t idc = rt_trace_intern_bt(t, b, 2), bts[3] = {idb, idc, ida};
	for (int i = 0; i < 3; i++) {
		c.index = (uint64_t)i + 1;
		c.bt = bts[i];
		rt_trace_append_call(t, &c);
	}
	uint32_t nbt = rt_trace_bt_count(t);
	rt_resolve_opts o = {0};
	o.in_place = true;
	rt_resolve_stats st;
	rt_resolve_trace(t, &o, &st);
	assert_int_equal(rt_trace_bt_count(t), nbt);
	const rt_call *calls = rt_trace_calls(t);
	assert_int_equal(calls[0].bt, ida); /* {ret} came out as a */
	assert_int_equal(calls[1].bt, idc);
	assert_int_equal(calls[2].bt, ida);
	const rt_frame *g = rt_trace_bt_frames(t, idc);
	assert_int_equal(g[0].text, a.text);
	assert_int_equal(g[1].text, RT_NONE); /* in no mapping */
	rt_frame_info fi;
	assert_true(rt_trace_frame_info(t, &g[0], &fi));
	assert_int_equal(fi.n, 2);
	rt_frame cp[2] = {g[0], g[1]}; /* the index knows the new frames */
	assert_int_equal(rt_trace_intern_bt(t, cp, 2), idc);
	assert_int_equal(rt_trace_intern_bt(t, &a, 1), ida);
	assert_int_equal(rt_trace_bt_count(t), nbt);
	assert_int_equal(st.addrs, 1);
	rt_trace_free(t);
	rt_trace_free(t0);
	free(path);
}

/* In place, stacks given without calls (rtrace heap's sites): each is
 * rewritten as in_place_pass's calls are; the trace's own calls are not
 * walked. */
static void in_place_bts(void **state)
{
	(void)state;
	char *path = program("tp_resolve_O2");
	layout l;
	read_layout(path, &l);
	uint64_t ret = leaf_return(path, &l);
	rt_trace *t0 = trace_with(path, &l); /* the text of ret, from a first pass */
	rt_frame b[2] = {{ret, RT_NONE}, {0x10, RT_NONE}}, x[2] = {{ret, RT_NONE}, {0x20, RT_NONE}};
	uint32_t bt0 = rt_trace_intern_bt(t0, b, 1);
	rt_resolve_bts(t0, &bt0, (uint64_t[]){1}, 1, NULL, NULL);
	const char *text = rt_trace_str(t0, rt_trace_bt_frames(t0, bt0)[0].text);
	rt_trace *t = trace_with(path, &l);
	rt_frame a = {ret, rt_trace_intern(t, text, strlen(text))}; /* resolved already */
	uint32_t ida = rt_trace_intern_bt(t, &a, 1);
	uint32_t idb = rt_trace_intern_bt(t, b, 1), idc = rt_trace_intern_bt(t, b, 2);
	rt_call c = {0};
	c.index = 1;
	c.kind = RT_CALL_ALLOC;
	c.bt = rt_trace_intern_bt(t, x, 2); /* a call's stack: not given, left alone */
	rt_trace_append_call(t, &c);
	uint32_t bts[3] = {idc, idb, idc};
	uint64_t index[3] = {1, 2, 3};
	rt_resolve_opts o = {0};
	o.in_place = true;
	rt_resolve_stats st;
	rt_resolve_bts(t, bts, index, 3, &o, &st);
	assert_int_equal(bts[0], idc);
	assert_int_equal(bts[1], ida); /* {ret} came out as a */
	assert_int_equal(bts[2], idc);
	const rt_frame *g = rt_trace_bt_frames(t, idc);
	assert_int_equal(strncmp(rt_trace_str(t, g[0].text), "res_inner() at ", 15), 0);
	assert_int_equal(g[1].text, RT_NONE); /* in no mapping */
	assert_int_equal(g[0].text, a.text);
	assert_int_equal(rt_trace_bt_frames(t, rt_trace_calls(t)[0].bt)[0].text, RT_NONE);
	assert_int_equal(st.addrs, 1);
	assert_int_equal(rt_trace_filter_bits(t) & RT_FILTER_RESOLVE, RT_FILTER_RESOLVE);
	rt_trace_free(t);
	rt_trace_free(t0);
	free(path);
}

/* The texts of every frame of stacks bts[0..n), as strings joined. */
static char *texts_of(const rt_trace *t, const uint32_t *bts, size_t n)
{
	size_t len = 0, cap = 4096;
	char *out = malloc(cap);
	assert_non_null(out);
	for (size_t i = 0; i < n; i++) {
		rt_bt_iter it;
		rt_frame f;
		rt_trace_bt_iter(t, bts[i], &it);
		while (rt_trace_bt_next(&it, &f)) {
			const char *x = f.text == RT_NONE ? "-" : rt_trace_str(t, f.text);
			size_t k = strlen(x);
			if (len + k + 2 > cap)
				assert_non_null(out = realloc(out, cap = 2 * (len + k + 2)));
			memcpy(out + len, x, k);
			len += k;
			out[len++] = '|';
		}
		out[len++] = '\n';
	}
	out[len] = 0;
	return out;
}

/* In place on the trace's tree of frames (stacks share their outer
 * frames, which are resolved once for all of them) where no mapping
 * overlaps another: the same texts as on the frames laid out one stack
 * at a time, and no array laid out. Where mappings overlap, a frame two
 * stacks share resolves per stack's call (the two plugins at BASE). */
static void in_place_shared_frames(void **state)
{
	(void)state;
	char *path = program("tp_resolve_O2");
	layout l;
	read_layout(path, &l);
	uint64_t text = BASE + (l.text - l.seg_vaddr);
	char *got[2];
	for (int flat = 0; flat < 2; flat++) {
		rt_trace *t = trace_with(path, &l);
		uint32_t bts[40];
		uint64_t index[40];
		for (uint32_t i = 0; i < 40; i++) { /* shared outer frames, inner ones of their own */
			rt_frame f[4] = {{text + 1 + i * (l.text_len / 41), RT_NONE},
					 {text + 1 + (i % 5) * (l.text_len / 6), RT_NONE},
					 {text + 1 + (i % 2) * (l.text_len / 3), RT_NONE},
					 {0x10, RT_NONE}}; /* in no mapping */
			bts[i] = rt_trace_intern_bt(t, f, 4 - i % 2);
			index[i] = i + 1;
		}
		if (flat)
			rt_trace_bt_frames(t, 0); /* laid out: a stack's frames its own */
		rt_resolve_opts o = {0};
		o.in_place = true;
		rt_resolve_bts(t, bts, index, 40, &o, NULL);
		assert_int_equal(rt_trace_bts_shared(t), !flat); /* the tree kept */
		got[flat] = texts_of(t, bts, 40);
		for (uint32_t i = 0; i < 40; i += 7) { /* the table knows the stacks as rewritten */
			rt_frame g[4];
			uint32_t n = 0;
			rt_bt_iter it;
			rt_trace_bt_iter(t, bts[i], &it);
			while (n < 4 && rt_trace_bt_next(&it, &g[n]))
				n++;
			assert_int_equal(rt_trace_intern_bt(t, g, n), bts[i]);
		}
		rt_trace_free(t);
	}
	assert_string_equal(got[0], got[1]);
	assert_non_null(strstr(got[0], "res_"));
	free(got[0]);
	free(got[1]);
	free(path);

	char *a, *b;
	layout la;
	rt_trace *t = two_plugins(&a, &b, &la);
	uint64_t addr = BASE + (la.text - la.seg_vaddr) + 1;
	rt_frame s1[2] = {{0x10, RT_NONE}, {addr, RT_NONE}}, s2[2] = {{0x20, RT_NONE}, {addr, RT_NONE}};
	uint32_t bts[2] = {rt_trace_intern_bt(t, s1, 2), rt_trace_intern_bt(t, s2, 2)};
	rt_resolve_opts o = {0};
	o.in_place = true;
	o.exact = true;
	rt_resolve_bts(t, bts, (uint64_t[]){50, 150}, 2, &o, NULL);
	rt_frame_info fa, fb;
	rt_frame ga, gb;
	rt_bt_iter it;
	rt_trace_bt_iter(t, bts[0], &it);
	rt_trace_bt_next(&it, &ga), rt_trace_bt_next(&it, &ga);
	rt_trace_bt_iter(t, bts[1], &it);
	rt_trace_bt_next(&it, &gb), rt_trace_bt_next(&it, &gb);
	assert_true(rt_trace_frame_info(t, &ga, &fa) && rt_trace_frame_info(t, &gb, &fb));
	assert_string_equal(rt_trace_str(t, fa.module), a); /* call 50: plugin a's */
	assert_string_equal(rt_trace_str(t, fb.module), b); /* call 150: plugin b's */
	rt_trace_free(t);
	free(a);
	free(b);
}

static void frame_info_model(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	rt_frame f = {0x1234, rt_trace_intern(t, "f() at a.c:3", 12)};
	rt_frame other = {0x1234, RT_NONE};
	rt_srcloc locs[2] = {{rt_trace_intern(t, "f", 1), RT_NONE, 3, 0},
			     {rt_trace_intern(t, "g", 1), RT_NONE, 9, RT_SRCLOC_DEMANGLED}};
	rt_frame_info fi;
	assert_false(rt_trace_frame_info(t, &f, &fi));
	for (uint64_t i = 0; i < 2000; i++) { /* through rehashes */
		rt_frame h = {0x100000 + i, RT_NONE};
		rt_trace_set_frame_info(t, &h, RT_NONE, locs, 1);
	}
	rt_trace_set_frame_info(t, &f, 7, locs, 2);
	assert_true(rt_trace_frame_info(t, &f, &fi));
	assert_int_equal(fi.module, 7);
	assert_int_equal(fi.n, 2);
	assert_int_equal(fi.locs[1].line, 9);
	assert_false(rt_trace_frame_info(t, &other, &fi));
	rt_trace_set_frame_info(t, &f, 8, locs + 1, 1);
	assert_true(rt_trace_frame_info(t, &f, &fi));
	assert_int_equal(fi.n, 1);
	assert_int_equal(fi.module, 8);
	assert_int_equal(fi.locs[0].line, 9);
	rt_frame h = {0x100000 + 1999, RT_NONE};
	assert_true(rt_trace_frame_info(t, &h, &fi));
	assert_int_equal(fi.locs[0].line, 3);
	rt_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frame_info_model),
		cmocka_unit_test(chains_match_addr2line),
		cmocka_unit_test(mappings_by_call_index),
		cmocka_unit_test(entries_again_by_call),
		cmocka_unit_test(missing_module_warns_once),
		cmocka_unit_test(trace_pass),
		cmocka_unit_test(in_place_pass),
		cmocka_unit_test(in_place_bts),
		cmocka_unit_test(in_place_shared_frames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
