/* The Valgrind XML writer inside librtrace: text escaping and the
 * splitting of source paths, shared by the writer (vgxml_write.c) and
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

/* Where a source path splits into Valgrind's <dir> and <file>: the index
 * of its last '/', or len when it has none. */
size_t rt_vgxml_path_split(const char *path, size_t len);

#endif
