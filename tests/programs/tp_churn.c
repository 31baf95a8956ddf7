/* Many allocations from one stack, then the program's own resident size
 * (VmRSS of /proc/self/status, in kB) on stdout: the tracer's trace must
 * not stay resident in the traced program.
 * usage: tp_churn [allocations] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	void *slots[64] = {0};
	for (long i = 0; i < n; i++) {
		free(slots[i % 64]);
		slots[i % 64] = malloc((size_t)(i % 200) + 1);
	}
	for (int k = 0; k < 64; k++)
		free(slots[k]);
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			printf("%ld\n", atol(line + 6));
	if (f)
		fclose(f);
	return 0;
}
