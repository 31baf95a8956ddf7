/* A dlopen'ed module that allocates: leaks 1 x 77 bytes. */
#include <stdlib.h>
void *plugin_alloc(void) { return malloc(77); }
