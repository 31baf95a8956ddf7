/* The Valgrind XML writer inside librtrace: text escaping and the reading
 * of a resolved frame's text, shared by the writer (vgxml_write.c) and
 * the document builder (vgdoc_build.c). */
#ifndef RT_VGXML_WRITE_INT_H
#define RT_VGXML_WRITE_INT_H

#include "util/out.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Character data for any n bytes: & < > as entities, CR as &#13;, valid
 * UTF-8 as it is, and each byte XML 1.0 cannot carry (C0 controls but
 * tab and newline, bytes of invalid UTF-8, U+FFFE, U+FFFF) as the four
 * characters \xNN (docs/valgrind-xml.md). */
void rt_vgxml_escape(rt_out *o, const char *s, size_t n);
/* One or more CDATA sections holding n bytes: "]]>" splits the section
 * after "]]", bytes XML cannot carry (CR included) become \xNN. */
void rt_vgxml_cdata(rt_out *o, const char *s, size_t n);

/* What the text after a frame's address says, as sp-rtrace's resolver
 * printed it: "fn() at /dir/file.c:12", "fn() from /lib/x.so", "fn()",
 * "from /bin/app". Pointers into the text; NULL when absent. */
typedef struct rt_vg_frame_text {
	const char *fn, *path, *obj;
	size_t fn_len, path_len, obj_len;
	uint32_t line; /* 0 when absent */
} rt_vg_frame_text;

/* Parses text; false when it says nothing of the above (then *ft is
 * empty). The "()" the resolver appended to names without '(' is
 * dropped. */
bool rt_vg_parse_frame_text(const char *text, rt_vg_frame_text *ft);

/* Where a source path splits into Valgrind's <dir> and <file>: the index
 * of its last '/', or len when it has none. */
size_t rt_vg_path_split(const char *path, size_t len);

#endif
