/* Valgrind documents inside librtrace: what the reader needs of the
 * document store (vgdoc.c) beyond the public rtrace/vgdoc.h. */
#ifndef RT_VGDOC_INT_H
#define RT_VGDOC_INT_H

#include "rtrace/vgdoc.h"

/* rt_vg_add with the element name's string id (a reader caches them). */
uint32_t rt_vg_add_id(rt_trace *t, uint32_t parent, uint32_t name);

#endif
