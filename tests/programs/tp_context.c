/* Contexts: 2 x 1000 bytes leaked in "first", 1 x 2000 in "second", one
 * x 3000 in both, one x 4000 outside any context. */
#include <rtrace/context.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	uint32_t a = rt_context_create("first context");
	uint32_t b = rt_context_create("second context");
	rt_context_enter(a);
	if (!malloc(1000) || !malloc(1000))
		return 1;
	rt_context_enter(b);
	if (!malloc(3000))
		return 1;
	rt_context_leave(a);
	if (!malloc(2000))
		return 1;
	rt_context_leave(b);
	if (!malloc(4000))
		return 1;
	printf("contexts %u %u\n", a, b);
	return 0;
}
