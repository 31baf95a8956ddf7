/* Valgrind documents inside librtrace: what the reader needs of the
 * document store (vgdoc.c) beyond the public rtrace/vgdoc.h. */
#ifndef RT_VGDOC_INT_H
#define RT_VGDOC_INT_H

#include "rtrace/vgdoc.h"

/* Whether t holds Valgrind documents (read from Valgrind XML, or built
 * by hand): then they are its findings, which the XML writer writes as
 * they are, and its heap checking results are no more than a view of
 * them (rt_vgxml_to_heapcheck). */
bool rt_vgxml_is_source(const rt_trace *t);
/* Marks t's heap checking results as filled from its documents; false
 * when they were already. */
bool rt_vgxml_mark_mapped(rt_trace *t);

/* rt_vgxml_add with the element name's string id (a reader caches them). */
uint32_t rt_vgxml_add_id(rt_trace *t, uint32_t parent, uint32_t name);

#endif
