/* Unit tests of the Valgrind XML writer (rt_vgxml_write_mem) and of the
 * document builder (rt_vgxml_build): escaping of any byte sequence into
 * well-formed XML (checked by parsing it back with expat), CDATA
 * splitting, Valgrind 3.19's exact layout for trees built by hand
 * (inline frames, frames known by their text only, protocol 3 upgrade),
 * memcheck's loss records, texts and suppressions, the wording for a
 * trace without leak verdicts; and read/write round trips of the real
 * Valgrind files in VGXML_DATA (byte for byte). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_util.h"

#include <dirent.h>
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/out.h"
#include "rtrace/heapcheck.h"
#include "rtrace/vgxml.h"
#include "text/text_frame.h"
#include "vgxml/vgxml_write_int.h"

/* --- parsing back --- */

typedef struct parsed {
	char *text; /* character data of the whole document */
	size_t len;
} parsed;

static void XMLCALL on_chars(void *u, const XML_Char *s, int n)
{
	parsed *p = u;
	p->text = realloc(p->text, p->len + (size_t)n + 1);
	memcpy(p->text + p->len, s, (size_t)n);
	p->len += (size_t)n;
	p->text[p->len] = '\0';
}

/* Parses an XML document; false when it is not well-formed. */
static bool parse_xml(const char *doc, size_t n, parsed *p)
{
	memset(p, 0, sizeof *p);
	XML_Parser x = XML_ParserCreate(NULL);
	XML_SetUserData(x, p);
	XML_SetCharacterDataHandler(x, on_chars);
	bool ok = XML_Parse(x, doc, (int)n, 1) == XML_STATUS_OK;
	XML_ParserFree(x);
	return ok;
}

/* s escaped (or as CDATA) inside <t>, as written. */
static char *wrap(const char *s, size_t n, bool cdata, size_t *len)
{
	rt_out o;
	rt_out_init_mem(&o);
	rt_out_str(&o, "<t>");
	if (cdata)
		rt_vgxml_cdata(&o, s, n);
	else
		rt_vgxml_escape(&o, s, n);
	rt_out_str(&o, "</t>");
	rt_out_ch(&o, '\0');
	*len = o.len - 1;
	return o.buf;
}

/* The character data that s escaped reads back as. */
static char *reparse(const char *s, size_t n, bool cdata)
{
	size_t len;
	char *doc = wrap(s, n, cdata, &len);
	parsed p;
	if (!parse_xml(doc, len, &p))
		fail_msg("not well-formed: %s", doc);
	free(doc);
	return p.text ? p.text : calloc(1, 1);
}

/* --- escaping --- */

static void every_byte(void **state)
{
	(void)state;
	for (int c = 0; c < 256; c++) {
		char in[3] = {'a', (char)c, 'b'};
		size_t len;
		char *doc = wrap(in, 3, false, &len);
		char want[16];
		if (c == '&' || c == '<' || c == '>')
			snprintf(want, sizeof want, "<t>a%sb</t>", c == '&' ? "&amp;" : c == '<' ? "&lt;" : "&gt;");
		else if (c == '\r')
			snprintf(want, sizeof want, "<t>a&#13;b</t>");
		else if ((c < 0x20 && c != '\t' && c != '\n') || c >= 0x80)
			snprintf(want, sizeof want, "<t>a\\x%02xb</t>", c);
		else
			snprintf(want, sizeof want, "<t>a%cb</t>", c);
		assert_string_equal(doc, want);
		free(doc);
		char *back = reparse(in, 3, false);
		if (c >= 0x20 && c < 0x80)
			assert_memory_equal(back, in, 3); /* & < > and text come back */
		free(back);
	}
}

static void invalid_utf8(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want; /* what the text reads back as */
	} cases[] = {
		{"\xe2\x82\xac", "\xe2\x82\xac"},                 /* U+20AC passes */
		{"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},         /* U+1F600 */
		{"\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9"},
		{"\xc0\x80", "\\xc0\\x80"},                       /* overlong NUL */
		{"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},              /* overlong '/' */
		{"\xed\xa0\x80", "\\xed\\xa0\\x80"},              /* a surrogate */
		{"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},     /* beyond U+10FFFF */
		{"\xe2\x82", "\\xe2\\x82"},                       /* cut short */
		{"\xe2\x82x", "\\xe2\\x82x"},
		{"\xef\xbf\xbe", "\\xef\\xbf\\xbe"},              /* U+FFFE */
		{"\xef\xbf\xbd", "\xef\xbf\xbd"},                 /* U+FFFD passes */
		{"\x80\xbf", "\\x80\\xbf"},                       /* lone continuations */
		{"\xff\xfe", "\\xff\\xfe"},
		{"\x1b[0m", "\\x1b[0m"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *back = reparse(cases[i].in, strlen(cases[i].in), false);
		assert_string_equal(back, cases[i].want);
		free(back);
	}
}

/* Any byte sequence gives well-formed XML, in text and in CDATA. */
static void random_bytes(void **state)
{
	(void)state;
	srand(7);
	char buf[64];
	for (int round = 0; round < 5000; round++) {
		size_t n = (size_t)(rand() % (int)sizeof buf);
		for (size_t i = 0; i < n; i++) /* biased to the interesting bytes */
			buf[i] = (char)(rand() % 4 ? rand() % 256 : "]]>&<\r\xe2\x82\xac\xf0"[rand() % 10]);
		free(reparse(buf, n, false));
		free(reparse(buf, n, true));
	}
}

static void cdata_split(void **state)
{
	(void)state;
	size_t len;
	char *doc = wrap("a]]>b", 5, true, &len);
	assert_string_equal(doc, "<t><![CDATA[a]]]]><![CDATA[>b]]></t>");
	free(doc);
	static const char *const texts[] = {"]]>", "]]]>", "]]>]]>", "x]]", "]", "<&>\n", "]]>>"};
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
		char *back = reparse(texts[i], strlen(texts[i]), true);
		assert_string_equal(back, texts[i]);
		free(back);
	}
	char *back = reparse("a\rb\x01", 4, true);
	assert_string_equal(back, "a\\x0db\\x01");
	free(back);
}

/* --- layout of hand-built trees --- */

static uint32_t leaf(rt_trace *t, uint32_t parent, const char *name, const char *text)
{
	return rt_vgxml_add_text(t, parent, name, text, strlen(text));
}

static uint32_t id(rt_trace *t, const char *s)
{
	return rt_trace_intern(t, s, strlen(s));
}

/* A frame resolved by sp-rtrace's resolver, as the text reader reads it:
 * its text and the details the text says. */
static rt_frame text_frame(rt_trace *t, uint64_t addr, const char *text)
{
	rt_frame f = {addr, id(t, text)};
	rt_text_frame_details(t, &f);
	return f;
}

static char *write_all(const rt_trace *t)
{
	size_t len;
	char *s = rt_vgxml_write_mem(t, NULL, &len);
	assert_non_null(s);
	assert_int_equal(strlen(s), len);
	parsed p;
	assert_true(parse_xml(s, len, &p) || rt_vgxml_doc_count(t) > 1);
	free(p.text);
	return s;
}

/* The head of a memcheck document, as Valgrind 3.19 prints it. */
static uint32_t doc_head(rt_trace *t, const char *version)
{
	uint32_t root = rt_vgxml_add(t, RT_NONE, "valgrindoutput");
	leaf(t, root, "protocolversion", version);
	if (strcmp(version, "4") == 0)
		leaf(t, root, "protocoltool", "memcheck");
	uint32_t pre = rt_vgxml_add(t, root, "preamble");
	leaf(t, pre, "line", "Memcheck, a memory error detector");
	leaf(t, root, "pid", "42");
	leaf(t, root, "ppid", "41");
	leaf(t, root, "tool", "memcheck");
	uint32_t args = rt_vgxml_add(t, root, "args");
	uint32_t v = rt_vgxml_add(t, args, "vargv");
	leaf(t, v, "exe", "/usr/bin/valgrind.bin");
	leaf(t, v, "arg", "--xml=yes");
	v = rt_vgxml_add(t, args, "argv");
	leaf(t, v, "exe", "./a&b");
	uint32_t st = rt_vgxml_add(t, root, "status");
	leaf(t, st, "state", "RUNNING");
	leaf(t, st, "time", "00:00:00:00.019 ");
	return root;
}

#define HEAD4                                                                                 \
	"<?xml version=\"1.0\"?>\n\n<valgrindoutput>\n\n<protocolversion>4</protocolversion>\n"  \
	"<protocoltool>memcheck</protocoltool>\n\n<preamble>\n"                                  \
	"  <line>Memcheck, a memory error detector</line>\n</preamble>\n\n<pid>42</pid>\n"       \
	"<ppid>41</ppid>\n<tool>memcheck</tool>\n\n<args>\n  <vargv>\n"                          \
	"    <exe>/usr/bin/valgrind.bin</exe>\n    <arg>--xml=yes</arg>\n  </vargv>\n"           \
	"  <argv>\n    <exe>./a&amp;b</exe>\n  </argv>\n</args>\n\n<status>\n"                  \
	"  <state>RUNNING</state>\n  <time>00:00:00:00.019 </time>\n</status>\n\n"

#define TAIL                                                                                  \
	"\n<status>\n  <state>FINISHED</state>\n  <time>00:00:00:00.300 </time>\n</status>\n\n" \
	"<errorcounts>\n</errorcounts>\n\n<suppcounts>\n</suppcounts>\n\n</valgrindoutput>\n\n"

static void doc_tail(rt_trace *t, uint32_t root)
{
	uint32_t st = rt_vgxml_add(t, root, "status");
	leaf(t, st, "state", "FINISHED");
	leaf(t, st, "time", "00:00:00:00.300 ");
	rt_vgxml_add(t, root, "errorcounts");
	rt_vgxml_add(t, root, "suppcounts");
}

/* A stack of four machine frames: an inline chain of two functions, a
 * frame with its object only, one known by its resolved text only, a bare
 * address. */
static uint32_t sample_bt(rt_trace *t)
{
	rt_frame f[4] = {{0x401297, RT_NONE}, {0x4842000, RT_NONE},
			 text_frame(t, 0x401490, "main() at /src/app/main.c:74"), {0xdead, RT_NONE}};
	rt_srcloc chain[2] = {{id(t, "inner"), id(t, "/src/app/x.h"), 12, 0},
			      {id(t, "outer()"), id(t, "x.c"), 45, RT_SRCLOC_DEMANGLED}};
	rt_trace_set_frame_info(t, &f[0], id(t, "/bin/app"), chain, 2);
	rt_trace_set_frame_info(t, &f[1], id(t, "/lib/vgpreload.so"), NULL, 0);
	return rt_trace_intern_bt(t, f, 4);
}

#define SAMPLE_STACK                                                                            \
	"  <stack>\n"                                                                              \
	"    <frame>\n      <ip>0x401297</ip>\n      <obj>/bin/app</obj>\n      <fn>inner</fn>\n"  \
	"      <dir>/src/app</dir>\n      <file>x.h</file>\n      <line>12</line>\n    </frame>\n" \
	"    <frame>\n      <ip>0x401297</ip>\n      <obj>/bin/app</obj>\n"                        \
	"      <fn>outer()</fn>\n      <file>x.c</file>\n      <line>45</line>\n    </frame>\n"    \
	"    <frame>\n      <ip>0x4842000</ip>\n      <obj>/lib/vgpreload.so</obj>\n    </frame>\n" \
	"    <frame>\n      <ip>0x401490</ip>\n      <fn>main</fn>\n      <dir>/src/app</dir>\n"   \
	"      <file>main.c</file>\n      <line>74</line>\n    </frame>\n"                          \
	"    <frame>\n      <ip>0xDEAD</ip>\n    </frame>\n"                                       \
	"  </stack>\n"

static void layout_errors(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	uint32_t root = doc_head(t, "4");
	uint32_t e = rt_vgxml_add(t, root, "error");
	leaf(t, e, "unique", "0x0");
	leaf(t, e, "tid", "1");
	leaf(t, e, "kind", "InvalidFree");
	leaf(t, e, "what", "Invalid free() / delete / delete[] / realloc()");
	rt_vgxml_add_stack(t, e, sample_bt(t));
	leaf(t, e, "auxwhat", "Address 0x10 is not stack'd, malloc'd or (recently) free'd");
	uint32_t x = rt_vgxml_add(t, e, "xauxwhat");
	leaf(t, x, "text", "declared at a.c:3, in frame #1 of thread 1");
	leaf(t, x, "file", "a.c");
	leaf(t, x, "line", "3");
	uint32_t s = rt_vgxml_add(t, e, "suppression");
	leaf(t, s, "sname", "insert_a_suppression_name_here");
	leaf(t, rt_vgxml_add(t, s, "sframe"), "fun", "free");
	uint32_t raw = leaf(t, s, "rawtext", "\n{\n   x\n}\n");
	rt_vgxml_set_flags(t, raw, RT_VGXML_CDATA);
	uint32_t cm = rt_vgxml_add(t, root, "clientmsg");
	leaf(t, cm, "tid", "1");
	leaf(t, cm, "text", "hello <x>\n  ");
	e = rt_vgxml_add(t, root, "error");
	leaf(t, e, "kind", "FishyValue");
	leaf(t, e, "what", "Argument 'size' of function malloc has a fishy value: -5\n");
	rt_vgxml_add_stack(t, e, RT_NONE);
	uint32_t at = rt_vgxml_add(t, root, "announcethread");
	leaf(t, at, "hthreadid", "1");
	rt_vgxml_add(t, at, "isrootthread");
	doc_tail(t, root);
	char *out = write_all(t);
	assert_string_equal(out, HEAD4 "<error>\n  <unique>0x0</unique>\n  <tid>1</tid>\n"
		"  <kind>InvalidFree</kind>\n  <what>Invalid free() / delete / delete[] / realloc()</what>\n"
		SAMPLE_STACK
		"  <auxwhat>Address 0x10 is not stack'd, malloc'd or (recently) free'd</auxwhat>\n"
		"  <xauxwhat><text>declared at a.c:3, in frame #1 of thread 1</text> <file>a.c</file> <line>3</line> </xauxwhat>\n"
		"  <suppression>\n    <sname>insert_a_suppression_name_here</sname>\n"
		"    <sframe> <fun>free</fun> </sframe>\n"
		"    <rawtext>\n<![CDATA[\n{\n   x\n}\n]]>\n    </rawtext>\n  </suppression>\n</error>\n\n"
		"<clientmsg>\n  <tid>1</tid>\n  <text>hello &lt;x&gt;\n  </text>\n</clientmsg>\n"
		"<error>\n  <kind>FishyValue</kind>\n"
		"  <what>Argument 'size' of function malloc has a fishy value: -5\n</what>"
		"  <stack>\n  </stack>\n</error>\n\n"
		"<announcethread>\n  <hthreadid>1</hthreadid>\n  <isrootthread></isrootthread>\n</announcethread>\n\n"
		TAIL);
	free(out);
	rt_trace_free(t);
}

/* logfilequalifier and usercomment (raw XML), and two documents one
 * after the other. */
static void layout_head_extras(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	uint32_t root = rt_vgxml_add(t, RT_NONE, "valgrindoutput");
	leaf(t, root, "protocolversion", "4");
	leaf(t, root, "protocoltool", "memcheck");
	leaf(t, root, "tool", "memcheck");
	uint32_t q = rt_vgxml_add(t, root, "logfilequalifier");
	leaf(t, q, "var", "FOO");
	leaf(t, q, "value", "a&b");
	uint32_t uc = leaf(t, root, "usercomment", "<mine a=\"1\">x</mine>");
	rt_vgxml_set_flags(t, uc, RT_VGXML_RAW);
	uint32_t second = rt_vgxml_add(t, RT_NONE, "valgrindoutput");
	leaf(t, second, "protocolversion", "4");
	char *out = write_all(t);
	assert_string_equal(out, "<?xml version=\"1.0\"?>\n\n<valgrindoutput>\n\n"
		"<protocolversion>4</protocolversion>\n<protocoltool>memcheck</protocoltool>\n\n"
		"<tool>memcheck</tool>\n"
		"<logfilequalifier> <var>FOO</var> <value>a&amp;b</value> </logfilequalifier>\n"
		"<usercomment><mine a=\"1\">x</mine></usercomment>\n"
		"\n</valgrindoutput>\n\n"
		"<?xml version=\"1.0\"?>\n\n<valgrindoutput>\n\n<protocolversion>4</protocolversion>\n"
		"\n</valgrindoutput>\n\n");
	free(out);
	rt_trace_free(t);
}

/* Protocol 3: <protocoltool> added, leak counts moved into an <xwhat>,
 * <suppcounts> moved after the errors. */
static void protocol3_upgrade(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	uint32_t root = doc_head(t, "3");
	uint32_t st = rt_vgxml_add(t, root, "status");
	leaf(t, st, "state", "FINISHED");
	leaf(t, st, "time", "00:00:00:00.300 ");
	rt_vgxml_add(t, root, "errorcounts");
	rt_vgxml_add(t, root, "suppcounts");
	uint32_t e = rt_vgxml_add(t, root, "error");
	leaf(t, e, "unique", "0x1");
	leaf(t, e, "tid", "1");
	leaf(t, e, "kind", "Leak_DefinitelyLost");
	leaf(t, e, "what", "40 bytes in 1 blocks are definitely lost in loss record 1 of 1");
	leaf(t, e, "leakedbytes", "40");
	leaf(t, e, "leakedblocks", "1");
	rt_frame f = {0x400500, RT_NONE};
	rt_vgxml_add_stack(t, e, rt_trace_intern_bt(t, &f, 1));
	char *out = write_all(t);
	assert_string_equal(out, HEAD4
		"\n<status>\n  <state>FINISHED</state>\n  <time>00:00:00:00.300 </time>\n</status>\n\n"
		"<errorcounts>\n</errorcounts>\n\n"
		"<error>\n  <unique>0x1</unique>\n  <tid>1</tid>\n  <kind>Leak_DefinitelyLost</kind>\n"
		"  <xwhat>\n    <text>40 bytes in 1 blocks are definitely lost in loss record 1 of 1</text>\n"
		"    <leakedbytes>40</leakedbytes>\n    <leakedblocks>1</leakedblocks>\n  </xwhat>\n"
		"  <stack>\n    <frame>\n      <ip>0x400500</ip>\n    </frame>\n  </stack>\n</error>\n\n"
		"<suppcounts>\n</suppcounts>\n\n</valgrindoutput>\n\n");
	free(out);
	rt_trace_free(t);
}

static void frame_texts(void **state)
{
	(void)state;
	static const struct {
		const char *text, *fn, *path, *obj;
		uint32_t line;
	} cases[] = {
		{"leak() at /src/app.c:12", "leak", "/src/app.c", NULL, 12},
		{"ns::f(int) at /src/a.cc:3", "ns::f(int)", "/src/a.cc", NULL, 3},
		{"g() from /lib/libx.so", "g", NULL, "/lib/libx.so", 0},
		{"from /bin/app", NULL, NULL, "/bin/app", 0},
		{"h()", "h", NULL, NULL, 0},
		{"k() at app.c", "k", "app.c", NULL, 0},
		{"m() at /x from y/a.c:3", "m", "/x from y/a.c", NULL, 3},
		{"n() from /x at y/lib.so", "n", NULL, "/x at y/lib.so", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		rt_text_frame ft;
		assert_true(rt_text_frame_parse(cases[i].text, &ft));
		if (cases[i].fn)
			assert_int_equal(ft.fn_len, strlen(cases[i].fn)), assert_memory_equal(ft.fn, cases[i].fn, ft.fn_len);
		else
			assert_null(ft.fn);
		if (cases[i].path)
			assert_int_equal(ft.path_len, strlen(cases[i].path)), assert_memory_equal(ft.path, cases[i].path, ft.path_len);
		else
			assert_null(ft.path);
		if (cases[i].obj)
			assert_string_equal(ft.obj, cases[i].obj);
		else
			assert_null(ft.obj);
		assert_int_equal(ft.line, cases[i].line);
	}
	rt_text_frame ft;
	assert_false(rt_text_frame_parse(NULL, &ft));
	assert_int_equal(rt_vgxml_path_split("/a/b/c.c", 8), 4);
	assert_int_equal(rt_vgxml_path_split("c.c", 3), 3);
}

/* --- documents built from rtrace's findings --- */

static const rt_leak_summary full = {.mode = RT_LEAK_CHECK_FULL};

static rt_trace *trace_with_leaks(void)
{
	rt_trace *t = rt_trace_new();
	rt_trace_set_header(t, "process", "/bin/app");
	rt_trace_set_header(t, "pid", "7");
	rt_trace_set_header(t, "ppid", "6");
	rt_trace_set_header(t, "args", "one two\\ words back\\\\slash");
	rt_trace_set_leak_summary(t, &full);
	rt_frame a = text_frame(t, 0x1001, "a() at /s/a.c:1"), b = text_frame(t, 0x2001, "b() at /s/b.c:2");
	rt_frame m = text_frame(t, 0x3001, "main() at /s/m.c:9"), below = text_frame(t, 0x4001, "__libc_start_main() from /lib/libc.so.6");
	rt_frame sa[3] = {a, m, below}, sb[2] = {b, m};
	uint32_t bta = rt_trace_intern_bt(t, sa, 3), btb = rt_trace_intern_bt(t, sb, 2);
	uint32_t malloc_fn = id(t, "malloc"), new_fn = id(t, "operator new");
	rt_leak l[] = {
		{.size = 100, .indirect = 1000, .fn = malloc_fn, .bt = bta, .kind = RT_LEAK_DEFINITE},
		{.size = 10, .fn = malloc_fn, .bt = bta, .kind = RT_LEAK_DEFINITE},
		{.size = 1000, .fn = malloc_fn, .bt = bta, .kind = RT_LEAK_INDIRECT},
		{.size = 30, .fn = new_fn, .bt = btb, .kind = RT_LEAK_POSSIBLE},
		{.size = 5000, .blocks = 4, .fn = malloc_fn, .bt = btb, .kind = RT_LEAK_REACHABLE},
		{.size = 30, .fn = new_fn, .bt = btb, .kind = RT_LEAK_DEFINITE},
	};
	for (size_t i = 0; i < sizeof l / sizeof *l; i++)
		rt_trace_add_leak(t, &l[i]);
	return t;
}

static void loss_record_grouping(void **state)
{
	(void)state;
	rt_trace *t = trace_with_leaks();
	size_t n;
	rt_loss_record *r = rt_trace_loss_records(t, &n);
	assert_int_equal(n, 5);
	/* by total size; ties (30 + 0) by kind, as memcheck numbers them
	 * (reachable, possible, indirect, definite) */
	uint64_t want[][4] = {{RT_LEAK_POSSIBLE, 30, 0, 1}, {RT_LEAK_DEFINITE, 30, 0, 1},
			      {RT_LEAK_INDIRECT, 1000, 0, 1}, {RT_LEAK_DEFINITE, 110, 1000, 2},
			      {RT_LEAK_REACHABLE, 5000, 0, 4}};
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(r[i].kind, want[i][0]);
		assert_int_equal(r[i].bytes, want[i][1]);
		assert_int_equal(r[i].indirect, want[i][2]);
		assert_int_equal(r[i].blocks, want[i][3]);
	}
	free(r);
	assert_null(rt_loss_records(NULL, 0, &n));
	assert_int_equal(n, 0);
	rt_trace_free(t);
}

/* The text of the error whose <kind> is kind (the first one). */
static const char *error_text(const rt_trace *t, uint32_t root, const char *kind, uint32_t *err)
{
	for (uint32_t e = rt_vgxml_find(t, root, "error", RT_NONE); e != RT_NONE; e = rt_vgxml_find(t, root, "error", e)) {
		if (strcmp(rt_vgxml_child_text(t, e, "kind"), kind))
			continue;
		*err = e;
		uint32_t xw = rt_vgxml_find(t, e, "xwhat", RT_NONE);
		return xw != RT_NONE ? rt_vgxml_child_text(t, xw, "text") : rt_vgxml_child_text(t, e, "what");
	}
	fail_msg("no %s error", kind);
	return NULL;
}

static void built_loss_records(void **state)
{
	(void)state;
	rt_trace *t = trace_with_leaks();
	rt_vgxml_write_opts o = {false, 0x1e};
	rt_trace *d = rt_vgxml_build(t, &o);
	uint32_t root = rt_vgxml_doc_root(d, 0), e;
	assert_string_equal(error_text(d, root, "Leak_DefinitelyLost", &e),
			    "30 bytes in 1 blocks are definitely lost in loss record 2 of 5");
	assert_string_equal(error_text(d, root, "Leak_StillReachable", &e),
			    "5,000 bytes in 4 blocks are still reachable in loss record 5 of 5");
	uint32_t xw = rt_vgxml_find(d, e, "xwhat", RT_NONE);
	assert_string_equal(rt_vgxml_child_text(d, xw, "leakedbytes"), "5000");
	assert_string_equal(rt_vgxml_child_text(d, xw, "leakedblocks"), "4");
	char *out = write_all(d);
	assert_non_null(strstr(out, "<text>1,110 (110 direct, 1,000 indirect) bytes in 2 blocks are definitely "
				    "lost in loss record 4 of 5</text>\n    <leakedbytes>1110</leakedbytes>\n"
				    "    <leakedblocks>2</leakedblocks>\n"));
	/* the allocator frame, addresses inside the call, nothing below main */
	assert_non_null(strstr(out, "  <stack>\n    <frame>\n      <ip>0x0</ip>\n      <fn>malloc</fn>\n    </frame>\n"
				    "    <frame>\n      <ip>0x1000</ip>\n      <fn>a</fn>\n      <dir>/s</dir>\n"
				    "      <file>a.c</file>\n      <line>1</line>\n    </frame>\n    <frame>\n"
				    "      <ip>0x3000</ip>\n      <fn>main</fn>\n      <dir>/s</dir>\n"
				    "      <file>m.c</file>\n      <line>9</line>\n    </frame>\n  </stack>\n"));
	assert_null(strstr(out, "__libc_start_main"));
	assert_non_null(strstr(out, "<fn>operator new(unsigned long)</fn>"));
	assert_non_null(strstr(out, "<line>Command: /bin/app one two words back\\slash</line>"));
	assert_non_null(strstr(out, "<pid>7</pid>\n<ppid>6</ppid>\n"));
	assert_non_null(strstr(out, "    <arg>two words</arg>\n    <arg>back\\slash</arg>\n"));
	assert_null(strstr(out, "<suppression>"));
	free(out);
	rt_trace_free(d);
	rt_trace_free(t);
	/* memcheck's default: definite and possible only */
	t = trace_with_leaks();
	out = write_all(t);
	assert_null(strstr(out, "Leak_StillReachable"));
	assert_null(strstr(out, "Leak_IndirectlyLost"));
	assert_non_null(strstr(out, "in loss record 4 of 5"));
	free(out);
	rt_trace_free(t);
}

static void built_suppressions(void **state)
{
	(void)state;
	rt_trace *t = trace_with_leaks();
	rt_vgxml_write_opts o = {true, 0};
	rt_trace *d = rt_vgxml_build(t, &o);
	char *out = write_all(d);
	assert_non_null(strstr(out, "  <suppression>\n    <sname>insert_a_suppression_name_here</sname>\n"
				    "    <skind>Memcheck:Leak</skind>\n    <skaux>match-leak-kinds: definite</skaux>\n"
				    "    <sframe> <fun>_Znwm</fun> </sframe>\n    <sframe> <fun>b</fun> </sframe>\n"
				    "    <sframe> <fun>main</fun> </sframe>\n    <rawtext>\n<![CDATA[\n{\n"
				    "   <insert_a_suppression_name_here>\n   Memcheck:Leak\n"
				    "   match-leak-kinds: definite\n   fun:_Znwm\n   fun:b\n   fun:main\n}\n]]>\n"
				    "    </rawtext>\n  </suppression>\n</error>\n"));
	assert_non_null(strstr(out, "<skaux>match-leak-kinds: possible</skaux>"));
	free(out);
	rt_trace_free(d);
	rt_trace_free(t);
}

/* Heap errors: memcheck's texts, one error per context, errorcounts
 * most recent first. */
static void built_heap_errors(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	rt_frame f = text_frame(t, 0x5001, "main() at /s/m.c:20"), g = text_frame(t, 0x6001, "main() at /s/m.c:30");
	uint32_t bf = rt_trace_intern_bt(t, &f, 1), bg = rt_trace_intern_bt(t, &g, 1);
	uint32_t fr = id(t, "free"), ma = id(t, "malloc"), del = id(t, "operator delete");
	rt_heap_error e[] = {
		{1, 0x1008, fr, bf, RT_ERR_INVALID_FREE, RT_BLOCK_FREED, 0x1000, 16000, ma, bg, fr, bg},
		{2, 0x2000, del, bg, RT_ERR_MISMATCHED_FREE, RT_BLOCK_LIVE, 0x2000, 8, ma, bf, RT_NONE, RT_NONE},
		{3, 0x9, fr, bf, RT_ERR_INVALID_FREE, RT_BLOCK_UNKNOWN, 0, 0, RT_NONE, RT_NONE, RT_NONE, RT_NONE},
	};
	for (int i = 0; i < 3; i++)
		rt_trace_add_heap_error(t, &e[i]);
	rt_trace *d = rt_vgxml_build(t, NULL);
	uint32_t root = rt_vgxml_doc_root(d, 0), err;
	assert_string_equal(error_text(d, root, "InvalidFree", &err), "Invalid free() / delete / delete[] / realloc()");
	assert_string_equal(error_text(d, root, "MismatchedFree", &err), "Mismatched free() / delete / delete []");
	rt_trace_free(d);
	char *out = write_all(t);
	assert_non_null(strstr(out, "<auxwhat>Address 0x1008 is 8 bytes inside a block of size 16,000 free'd</auxwhat>"));
	assert_non_null(strstr(out, "<auxwhat>Block was alloc'd at</auxwhat>"));
	assert_non_null(strstr(out, "<auxwhat>Address 0x2000 is 0 bytes inside a block of size 8 alloc'd</auxwhat>"));
	assert_non_null(strstr(out, "<fn>operator delete(void*)</fn>"));
	/* the third error is the first one's context again */
	assert_non_null(strstr(out, "<errorcounts>\n  <pair>\n    <count>2</count>\n    <unique>0x0</unique>\n"
				    "  </pair>\n  <pair>\n    <count>1</count>\n    <unique>0x1</unique>\n"
				    "  </pair>\n</errorcounts>\n"));
	assert_null(strstr(out, "<unique>0x2</unique>"));
	assert_non_null(strstr(out, "No leak check in the trace"));
	free(out);
	rt_trace_free(t);
}

/* Without verdicts: the blocks still allocated, grouped per stack, said
 * to be no more than that. */
static void no_verdict_wording(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	rt_trace_set_header(t, "timestamp", "2011.6.16 15:50:00");
	uint8_t mem = rt_trace_add_resource(t, 1, "memory", "memory allocation in bytes", NULL);
	uint8_t fd = rt_trace_add_resource(t, 2, "file", "file descriptors", NULL);
	rt_frame f = text_frame(t, 0x401001, "leak() at /src/app.c:12");
	uint32_t bt = rt_trace_intern_bt(t, &f, 1), ma = id(t, "malloc"), fr = id(t, "free");
	rt_call c[] = {
		{1, 0x10, 24, 57000000000ull, 0, ma, bt, RT_NONE, mem, RT_CALL_ALLOC, RT_CALL_HAS_TIMESTAMP},
		{2, 0x20, 8, 57000100000ull, 0, ma, bt, RT_NONE, mem, RT_CALL_ALLOC, RT_CALL_HAS_TIMESTAMP},
		{3, 0x30, 99, 57000200000ull, 0, ma, bt, RT_NONE, mem, RT_CALL_ALLOC, RT_CALL_HAS_TIMESTAMP},
		{4, 0x30, 0, 57000300000ull, 0, fr, RT_NONE, RT_NONE, mem, RT_CALL_FREE, RT_CALL_HAS_TIMESTAMP},
		{5, 3, 1, 57001500000ull, 0, id(t, "open"), bt, RT_NONE, fd, RT_CALL_ALLOC, RT_CALL_HAS_TIMESTAMP},
	};
	for (int i = 0; i < 5; i++)
		rt_trace_append_call(t, &c[i]);
	rt_trace *d = rt_vgxml_build(t, NULL);
	uint32_t root = rt_vgxml_doc_root(d, 0), err;
	assert_string_equal(error_text(d, root, "Leak_PossiblyLost", &err),
			    "32 bytes in 2 blocks are still allocated at the end of the trace "
			    "(reachability not checked) in loss record 1 of 1");
	rt_trace_free(d);
	assert_int_equal(rt_trace_call_count(t), 5); /* the trace itself is left alone */
	char *out = write_all(t);
	assert_non_null(strstr(out, "<state>FINISHED</state>\n  <time>00:00:00:01.500 </time>"));
	assert_null(strstr(out, "definitely"));
	free(out);
	rt_trace_free(t);
}

/* The elapsed time is the last call read, not the last call kept: a
 * streaming reader's caller (rtrace run's report) keeps the live calls
 * only, and its XML must say what convert's of the whole trace says. */
static void time_of_last_call_read(void **state)
{
	(void)state;
	rt_trace *t = rt_trace_new();
	rt_trace_set_header(t, "timestamp", "2011.6.16 15:50:00");
	uint8_t mem = rt_trace_add_resource(t, 1, "memory", "memory allocation in bytes", NULL);
	rt_frame f = text_frame(t, 0x401001, "leak() at /src/app.c:12");
	uint32_t bt = rt_trace_intern_bt(t, &f, 1), ma = id(t, "malloc"), fr = id(t, "free");
	rt_call c[] = {
		{1, 0x10, 24, 57000000000ull, 0, ma, bt, RT_NONE, mem, RT_CALL_ALLOC, RT_CALL_HAS_TIMESTAMP},
		{2, 0x30, 99, 57000200000ull, 0, ma, bt, RT_NONE, mem, RT_CALL_ALLOC, RT_CALL_HAS_TIMESTAMP},
		{3, 0x30, 0, 57000700000ull, 0, fr, RT_NONE, RT_NONE, mem, RT_CALL_FREE, RT_CALL_HAS_TIMESTAMP},
	};
	uint64_t us = 0;
	assert_false(rt_trace_last_timestamp(t, &us));
	rt_trace_append_call(t, &c[0]);
	for (int i = 1; i < 3; i++) /* read, handed to a caller that kept none */
		rt_trace_saw_call(t, &c[i]);
	assert_true(rt_trace_last_timestamp(t, &us));
	assert_int_equal(us, 57000700000ull);
	char *out = write_all(t);
	assert_non_null(strstr(out, "<state>FINISHED</state>\n  <time>00:00:00:00.700 </time>"));
	free(out);
	rt_trace_free(t);
}

/* The findings are held once: writing a trace of rtrace's findings
 * builds memcheck's document for the write only, the same each time, and
 * a trace read from Valgrind XML writes its documents, not one built
 * from the heap checking results filled from them. */
static void built_transient(void **state)
{
	(void)state;
	rt_trace *t = trace_with_leaks();
	size_t n = rt_trace_bt_count(t);
	char *a = write_all(t), *b = write_all(t);
	assert_string_equal(a, b);
	assert_int_equal(rt_vgxml_doc_count(t), 0);
	assert_int_equal(rt_vgxml_node_count(t), 0);
	assert_int_equal(rt_trace_bt_count(t), n);
	rt_trace *x = rt_trace_new();
	rt_diag err;
	assert_int_equal(rt_vgxml_read_mem(x, a, strlen(a), "a.xml", NULL, NULL, &err), 0);
	rt_vgxml_to_heapcheck(x);
	rt_vgxml_to_heapcheck(x); /* filled once */
	assert_int_equal(rt_trace_leak_count(x), 3); /* definite and possible: memcheck's default */
	char *c = write_all(x);
	assert_string_equal(a, c);
	free(a);
	free(b);
	free(c);
	rt_trace_free(x);
	rt_trace_free(t);
}

/* --- round trips of real Valgrind files --- */

static void round_trip_files(void **state)
{
	(void)state;
	const char *dir = getenv("VGXML_DATA");
	DIR *d = dir ? opendir(dir) : NULL;
	if (!d)
		fail_msg("VGXML_DATA ('%s') names no directory", dir ? dir : "");
	int files = 0;
	for (struct dirent *de; (de = readdir(d));) {
		size_t len = strlen(de->d_name), n = 0, m = 0;
		if (len < 5 || strcmp(de->d_name + len - 4, ".xml"))
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		char *in = test_slurp(NULL, path, &n);
		if (!in)
			fail_msg("cannot read %s", path);
		rt_trace *t = rt_trace_new();
		rt_diag err;
		if (rt_vgxml_read_mem(t, in, n, path, NULL, NULL, &err))
			fail_msg("%s: %s", path, err.msg);
		char *out = rt_vgxml_write_mem(t, NULL, &m);
		if (m != n || memcmp(in, out, n))
			fail_msg("%s: not the same bytes once read and written", path);
		free(in);
		free(out);
		rt_trace_free(t);
		files++;
	}
	closedir(d);
	assert_true(files > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_byte),
		cmocka_unit_test(invalid_utf8),
		cmocka_unit_test(random_bytes),
		cmocka_unit_test(cdata_split),
		cmocka_unit_test(layout_errors),
		cmocka_unit_test(layout_head_extras),
		cmocka_unit_test(protocol3_upgrade),
		cmocka_unit_test(frame_texts),
		cmocka_unit_test(loss_record_grouping),
		cmocka_unit_test(built_loss_records),
		cmocka_unit_test(built_suppressions),
		cmocka_unit_test(built_heap_errors),
		cmocka_unit_test(no_verdict_wording),
		cmocka_unit_test(time_of_last_call_read),
		cmocka_unit_test(built_transient),
		cmocka_unit_test(round_trip_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
