/* A resolved frame's text in the text protocol, inside librtrace: where
 * text enters the model (the text reader, tests building traces by hand)
 * it is read once into the frame's details (rt_trace_frame_info), which
 * every other writer uses; only the text writer prints the text itself. */
#ifndef RT_TEXT_FRAME_H
#define RT_TEXT_FRAME_H

#include "rtrace/trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the text after a frame's address says, as sp-rtrace's resolver
 * prints it: "fn() at /dir/file.c:12", "fn() from /lib/x.so", "fn()",
 * "from /bin/app". Pointers into the text; NULL when absent. */
typedef struct rt_text_frame {
	const char *fn, *path, *obj;
	size_t fn_len, path_len, obj_len;
	uint32_t line; /* 0 when absent */
} rt_text_frame;

/* Parses text; false when it says nothing of the above (then *ft is
 * empty). The "()" the resolver appended to names without '(' is
 * dropped. */
bool rt_text_frame_parse(const char *text, rt_text_frame *ft);

/* Records the details frame f's text says (its function, source file and
 * line, or its module), unless f has details already (a resolver's). */
void rt_text_frame_details(rt_trace *t, const rt_frame *f);

#endif
