/* rtrace convert: any input rtrace reads (text trace, binary trace,
 * Valgrind XML; told by content) to any format it writes. The model in
 * between is the same for all, so every pairing works. Callgrind
 * profiles, a model of their own, are read and written back. A trace
 * to Callgrind streams: its calls go into the allocation profile's pass
 * (cg_stream) as they are read and are not kept. */
#include "cli.h"
#include "leak_report.h"
#include "rtrace/rtrace.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_NO_RESOLVE = 256, OPT_GEN_SUPP, OPT_SHOW_KINDS, OPT_DUMP_INSTR, OPT_COMPRESS_STRINGS,
       OPT_COMPRESS_POS, OPT_XML_PROTOCOL, OPT_SUPPRESSIONS,
       OPT_SOURCE_ROOT };

static const cli_option options[] = {
	{'t', "to", " FORMAT", 't', "text: the rtrace text protocol; xml: Valgrind XML\n"
				    "(memcheck's for rtrace's findings);\n"
				    "callgrind: an allocation profile in the Callgrind\n"
				    "format (KCachegrind, callgrind_annotate);\n"
				    "sarif: SARIF 2.1.0 for code scanning (GitHub)\n"
				    "(default: xml when OUTPUT ends in .xml, sarif in\n"
				    ".sarif, callgrind when its name starts with\n"
				    "callgrind.out or the input is a profile, else text)"},
	{'o', "output", " FILE", 'o', "write FILE (default: standard output)"},
	{0, "no-resolve", NULL, OPT_NO_RESOLVE, "xml: keep addresses unresolved (by default frames\n"
						"are resolved first, as Valgrind names them)"},
	CLI_RESOLVE_OPTIONS("look for separate debug info in DIR too (repeatable)",
			    "resolve against DIR, a copy of the traced machine's\n"
			    "file system",
			    "no cache of inflated debug files (see\n"
			    "'rtrace resolve --help')"),
	{0, "source-root", " DIR", OPT_SOURCE_ROOT, "sarif: file URIs relative to DIR (uriBaseId\n"
						   "SRCROOT; default: the current directory)"},
	{0, "dump-instr", "=yes", OPT_DUMP_INSTR, "callgrind: positions by instruction address too\n"
						  "(the frames' return addresses), not only by line"},
	{0, "compress-strings", "=no", OPT_COMPRESS_STRINGS, "callgrind: full names on every line"},
	{0, "compress-pos", "=no", OPT_COMPRESS_POS, "callgrind: absolute line numbers and addresses"},
	{0, "gen-suppressions", "=MODE", OPT_GEN_SUPP, "xml: all gives each error the suppression\n"
						       "that would hide it, as memcheck does; no (default)"},
	{0, "suppressions", "=FILE", OPT_SUPPRESSIONS, "xml, from a trace: hide what a Valgrind or\n"
						       "LeakSanitizer suppression file matches, as\n"
						       "rtrace run --suppressions does; repeatable"},
	{0, "xml-protocol", "=4|5", OPT_XML_PROTOCOL, "xml: protocol of rtrace's findings (default 4, 5\n"
						      "when there are descriptor errors); 4 leaves\n"
						      "those out, 5 writes 5 even without them"},
	{0, "show-leak-kinds", "=SET", OPT_SHOW_KINDS, "xml: loss records written (default definite,possible;\n"
						       "SET: definite,indirect,possible,reachable, all, none)"},
	CLI_THREADS_OPTION,
	CLI_QUIET_HELP_OPTIONS("no warnings"),
};

static const cli_command command = {
	"convert",
	"usage: rtrace convert [options] INPUT\n"
	"\n"
	"Converts a trace to another format. INPUT ('-': standard input) is a\n"
	"text trace (sp-rtrace's format), a binary trace from `rtrace run`, a\n"
	"Valgrind XML file (any protocol, any tool) or a Callgrind or Cachegrind\n"
	"profile, told by content.\n"
	"\n",
	options, sizeof options / sizeof *options, 28,
	"\n"
	"The allocation profile's events, per resource type: Allocs (calls), Bytes\n"
	"(sizes), and Leaks and LeakedBytes (definitely and indirectly lost, with\n"
	"leak verdicts) or Unfreed and UnfreedBytes (still allocated at the end);\n"
	"self cost at each allocation site, inclusive cost along its backtrace.\n"
	"A Callgrind profile read is written back with the same costs.\n"
	"Valgrind XML read back is written as it was (protocols 1-3 upgraded to 4);\n"
	"to text, its loss records and heap errors become the trace's leak verdicts\n"
	"and heap errors, its other errors \"## error\" comments.\n"
	"Exit status: 0 ok, 1 bad input or I/O error (what was read before the\n"
	"error is still written), 2 bad command line.\n",
	false,
};

enum { TO_TEXT = 1, TO_XML = 2, TO_CALLGRIND = 3, TO_SARIF = 4 };

typedef struct convert_opts {
	const char *input, *output;
	const char *source_root; /* --source-root, or NULL: the current directory */
	int to;
	bool no_resolve;
	cli_resolve_opts res;
	rt_vgxml_write_opts xml;
	cg_write_opts cg;
	cg_trace_opts cgt;
	rt_supp_set *supp; /* --suppressions, or NULL */
	cg_stream *stream; /* --to callgrind from a trace: the calls' pass */
	unsigned threads;  /* -j: the reader's threads (0: automatic) */
} convert_opts;

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

static void parse_value(int c, const char *arg, convert_opts *o)
{
	switch (c) {
	case 't':
		if (!strcmp(arg, "text"))
			o->to = TO_TEXT;
		else if (!strcmp(arg, "xml"))
			o->to = TO_XML;
		else if (!strcmp(arg, "callgrind"))
			o->to = TO_CALLGRIND;
		else if (!strcmp(arg, "sarif"))
			o->to = TO_SARIF;
		else
			cli_die_usage("convert", "invalid format '%s': expected text, xml, callgrind or sarif", arg);
		break;
	case OPT_DUMP_INSTR: o->cgt.instr = cli_parse_yes_no("convert", "--dump-instr", arg); break;
	case OPT_COMPRESS_STRINGS: o->cg.no_compress_names = !cli_parse_yes_no("convert", "--compress-strings", arg); break;
	case OPT_COMPRESS_POS: o->cg.no_compress_pos = !cli_parse_yes_no("convert", "--compress-pos", arg); break;
	case OPT_GEN_SUPP:
		if (strcmp(arg, "all") && strcmp(arg, "no"))
			cli_die_usage("convert", "invalid --gen-suppressions '%s': expected all or no", arg);
		o->xml.gen_suppressions = !strcmp(arg, "all");
		break;
	case OPT_XML_PROTOCOL: o->xml.protocol = cli_parse_xml_protocol("convert", arg); break;
	case OPT_SUPPRESSIONS: o->supp = cli_read_suppressions(o->supp, arg); break;
	case OPT_SHOW_KINDS:
		if (!leak_parse_kinds(arg, &o->xml.show_leak_kinds))
			cli_die_usage("convert", "invalid leak kinds '%s': expected a list of definite, indirect, "
				  "possible, reachable, or all or none", arg);
		if (!o->xml.show_leak_kinds)
			o->xml.show_leak_kinds = RT_VGXML_SHOW_NONE;
		break;
	}
}

static void parse_options(int argc, char **argv, convert_opts *o)
{
	int c;
	while ((c = cli_getopt(&command, argc, argv)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case OPT_NO_RESOLVE: o->no_resolve = true; break;
		case OPT_SOURCE_ROOT: o->source_root = optarg; break;
		case 'j': o->threads = cli_parse_threads("convert", optarg); break;
		case 't':
		case OPT_GEN_SUPP:
		case OPT_SHOW_KINDS:
		case OPT_XML_PROTOCOL:
		case OPT_SUPPRESSIONS:
		case OPT_DUMP_INSTR:
		case OPT_COMPRESS_STRINGS:
		case OPT_COMPRESS_POS: parse_value(c, optarg, o); break;
		default: cli_resolve_option(&o->res, "convert", c, optarg); break;
		}
	}
	if (optind >= argc)
		cli_die_usage("convert", "no input given (a file, or - for standard input)");
	if (optind + 1 < argc)
		cli_die_usage("convert", "unexpected argument '%s' (one input at a time)", argv[optind + 1]);
	o->input = argv[optind];
	const char *base = o->output ? strrchr(o->output, '/') : NULL;
	base = base ? base + 1 : o->output;
	if (!o->to && o->output && ends_with(o->output, ".xml"))
		o->to = TO_XML;
	if (!o->to && o->output && (ends_with(o->output, ".sarif") || ends_with(o->output, ".sarif.json")))
		o->to = TO_SARIF;
	if (!o->to && base && !strncmp(base, "callgrind.out", 13))
		o->to = TO_CALLGRIND;
}

typedef struct stream_ctx {
	cg_stream *s;
	unsigned *warnings;
} stream_ctx;

static void stream_call(void *ctx, rt_trace *t, const rt_call *c)
{
	cg_stream_feed(((stream_ctx *)ctx)->s, t, c);
}

static void stream_calls(void *ctx, rt_trace *t, const rt_call *c, size_t n)
{
	cg_stream_feed_calls(((stream_ctx *)ctx)->s, t, c, n);
}

static void stream_warning(void *ctx, const rt_diag *d)
{
	cli_read_warning(((stream_ctx *)ctx)->warnings, d);
}

/* Reads the input (a profile into *prof); returns -1 when nothing
 * usable was read. */
static int read_input(rt_trace *t, cg_profile **prof, const convert_opts *o, enum cli_format *format,
		      bool *partial)
{
	bool is_stdin = !strcmp(o->input, "-");
	int fd = is_stdin ? STDIN_FILENO : open(o->input, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		cli_die("cannot open '%s': %s", o->input, strerror(errno));
	unsigned warnings = 0;
	rt_read_opts ro = {0, NULL, cli_read_warning, &warnings, cli_threads(o->threads)};
	stream_ctx sc = {o->stream, &warnings};
	if (o->stream)
		ro = (rt_read_opts){0, stream_call, stream_warning, &sc, ro.threads, stream_calls};
	rt_read_stats st;
	rt_diag err;
	int rc = cli_read_input_cg(t, prof, fd, is_stdin ? "<stdin>" : o->input, &ro, &st, &err, format);
	if (!is_stdin)
		close(fd);
	cli_warnings_end(warnings);
	*partial = rc != 0;
	if (rc) {
		char buf[1024];
		rt_diag_format(&err, buf, sizeof buf);
		cli_error("%s", buf);
	}
	bool empty = *format == CLI_VGXML	 ? rt_vgxml_doc_count(t) == 0
		     : *format == CLI_CALLGRIND ? cg_profile_slots(*prof) == 0
						 : rt_trace_header_count(t) == 0;
	return rc && empty ? -1 : 0;
}

static int write_output(rt_trace *t, const cg_profile *prof, const convert_opts *o)
{
	int fd = STDOUT_FILENO;
	if (o->output) {
		fd = open(o->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			cli_error("cannot create '%s': %s", o->output, strerror(errno));
			return -1;
		}
	}
	int rc;
	if (o->to == TO_CALLGRIND) {
		rc = cg_write_fd(prof, fd, &o->cg);
	} else if (o->to == TO_SARIF) {
		rc = cli_write_sarif((const rt_trace *const *)&t, 1, fd, o->source_root, &o->xml);
	} else if (o->to == TO_XML) {
		if (!rt_vgxml_doc_count(t)) /* documents read are written as read */
			cli_xml_protocol_note(t, o->xml.protocol);
		rc = rt_vgxml_write_fd(t, fd, &o->xml);
	} else {
		rt_write_opts w = {0};
		w.filter_bits = rt_trace_filter_bits(t);
		w.contexts = true;
		w.leak_summary = (w.filter_bits & RT_FILTER_LEAKS) != 0;
		w.compress = (w.filter_bits & RT_FILTER_COMPRESS) != 0;
		rc = rt_text_write_fd(t, fd, &w);
	}
	if (o->output && close(fd) && !rc)
		rc = -errno;
	if (rc) {
		cli_error("cannot write %s: %s", o->output ? o->output : "standard output", strerror(-rc));
		return -1;
	}
	return 0;
}

/* The profile builder's warning, about the input as a whole. */
static void profile_warning(void *input, const rt_diag *d)
{
	cli_warning("%s: %s", (const char *)input, d->msg);
}

/* Gets the model the output format needs: resolved frames (unless
 * --no-resolve) and Valgrind's findings as the trace's for XML and
 * Callgrind output from traces, the allocation profile for Callgrind. */
static void prepare(rt_trace *t, cg_profile **prof, enum cli_format format, convert_opts *o)
{
	bool resolve = !o->no_resolve && !(rt_trace_filter_bits(t) & RT_FILTER_RESOLVE);
	bool vg = o->to == TO_XML || o->to == TO_SARIF; /* writers of Valgrind's documents */
	if (format == CLI_VGXML && !vg)
		rt_vgxml_to_heapcheck(t);
	if (vg && format != CLI_VGXML && resolve)
		cli_resolve(t, &o->res); /* the writer builds memcheck's document */
	if (o->supp && o->to == TO_XML && format != CLI_VGXML) /* memcheck's stacks, 12 frames */
		rt_supp_apply(o->supp, t, &(rt_vgxml_stack_opts){12, false});
	else if (o->supp)
		cli_warning("--suppressions applies to XML written from a trace: ignored");
	if (o->to == TO_CALLGRIND && format != CLI_CALLGRIND) {
		o->cgt.warn = profile_warning;
		o->cgt.ctx = (void *)o->input;
		if (o->stream && format != CLI_VGXML) {
			cg_stream_end(o->stream, t); /* a call per backtrace, resolved next */
			cli_resolve_opts res = o->res;
			res.in_place = true; /* the stacks where they are, no copy */
			if (resolve)
				cli_resolve(t, &res);
			*prof = cg_stream_profile(o->stream, t, &o->cgt);
			return;
		}
		if (resolve && format != CLI_VGXML)
			cli_resolve(t, &o->res);
		*prof = cg_profile_from_trace(t, &o->cgt);
	}
}

int cmd_convert(int argc, char **argv)
{
	convert_opts o = {0};
	parse_options(argc, argv, &o);
	rt_trace *t = rt_trace_new();
	cg_profile *prof = NULL;
	enum cli_format format = CLI_TEXT;
	bool partial = false;
	int status = RT_EXIT_DATA;
	if (o.to == TO_CALLGRIND)
		o.stream = cg_stream_new();
	if (read_input(t, &prof, &o, &format, &partial))
		goto out;
	if (!o.to)
		o.to = format == CLI_CALLGRIND ? TO_CALLGRIND : TO_TEXT;
	if (format == CLI_CALLGRIND && o.to != TO_CALLGRIND) {
		cli_error("%s is a Callgrind profile: it converts to callgrind only (--to callgrind)", o.input);
		goto out;
	}
	prepare(t, &prof, format, &o);
	int wrc = write_output(t, prof, &o);
	if (partial && !wrc)
		cli_info("note: the output is partial: it holds what was read before the error");
	status = partial || wrc ? RT_EXIT_DATA : RT_EXIT_OK;
out:
	cg_profile_free(prof);
	cg_stream_free(o.stream);
	rt_trace_free(t);
	cli_resolve_opts_free(&o.res);
	rt_supp_free(o.supp);
	return status;
}
