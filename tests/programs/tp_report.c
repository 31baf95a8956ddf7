/* A program whose HTML report is known (cli/report.sh): three phases
 * over time, leaks of each memcheck kind, a heap error, and resources
 * left open.
 *   report_phase_one:  40 blocks of 1000 bytes, held 30 ms, freed
 *   report_phase_two:  300 blocks of 24 bytes, 10 ms apart in groups,
 *                      freed but the last 5 (definitely lost: 120 bytes)
 *   report_lose_tree:  a 16-byte node lost with its 32-byte child
 *                      (definitely 16, indirectly 32)
 *   report_keep:       200 bytes in a global (still reachable)
 *   report_wild_free:  free of a global's address (InvalidFree)
 *   report_open_files: /etc/hostname open()ed and fopen()ed, never closed;
 *                      an anonymous mapping of 8192 bytes never unmapped */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void *kept;
static char wild[16];

static void pause_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void report_phase_one(void)
{
	void *b[40];
	for (int i = 0; i < 40; i++) {
		b[i] = malloc(1000);
		memset(b[i], 1, 1000);
	}
	pause_ms(30);
	for (int i = 0; i < 40; i++)
		free(b[i]);
}

__attribute__((noinline)) static void report_phase_two(void)
{
	void *b[300];
	for (int i = 0; i < 300; i++) {
		b[i] = malloc(24);
		memset(b[i], 2, 24);
		if (i % 100 == 99)
			pause_ms(10);
	}
	for (int i = 0; i < 295; i++)
		free(b[i]);
	memset(b, 0, sizeof b);
}

struct node {
	struct node *child;
	char pad[8];
};

__attribute__((noinline)) static void report_lose_tree(void)
{
	struct node *volatile n = malloc(sizeof *n);
	n->child = malloc(32);
	n = NULL;
}

__attribute__((noinline)) static void report_keep(void)
{
	kept = malloc(200);
}

__attribute__((noinline)) static void report_wild_free(void)
{
	char *volatile p = wild;
	free(p);
}

__attribute__((noinline)) static void report_open_files(void)
{
	int fd = open("/etc/hostname", O_RDONLY);
	FILE *f = fopen("/etc/hostname", "r");
	void *m = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || !f || m == MAP_FAILED)
		exit(1);
}

int main(void)
{
	report_phase_one();
	pause_ms(20);
	report_phase_two();
	report_lose_tree();
	report_keep();
	report_wild_free();
	report_open_files();
	return 0;
}
