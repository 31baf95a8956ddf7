/* A program using librtrace the way another tool would: installed headers,
 * pkg-config flags, the shared library. */
#include <rtrace/rtrace.h>
#include <stdio.h>
int main(int argc, char **argv) {
	rt_trace *t = rt_trace_new(); rt_diag err;
	const char *txt = "version=2.0, \n1. malloc(5) = 0x10\n\t0x1234\n\n2. free(0x10)\n\n3. malloc(7) = 0x20\n\n";
	if (rt_text_read_mem(t, txt, __builtin_strlen(txt), "x", NULL, NULL, &err)) return 1;
	printf("%zu calls, %u stacks\n", rt_trace_call_count(t), rt_trace_bt_count(t));
	rt_trace_free(t); return 0;
}
