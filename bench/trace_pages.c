/* What writing the trace's pages costs, per record, by way of writing:
 * 18-byte records filling 64 KiB chunks of a file, as the tracer's do,
 * CPU time (user + system) of this process. See bench/README.md, "Trace
 * pages without faults".
 *
 *   cc -O2 -o bench/out/trace_pages bench/trace_pages.c
 *   bench/out/trace_pages MODE FILE [MiB]     # MiB: 112 by default
 *
 * MODE: stores (one reused anonymous chunk, no file), fresh (stores into
 * new shared file pages: fallocate, 8 MiB segments, MADV_DONTNEED
 * behind, as the tracer), selfpop (the same, MADV_POPULATE_WRITE on each
 * chunk first), pwrite (a reused anonymous chunk written with pwrite),
 * prepop (fresh, but another mapping populated the file before: untimed),
 * fadvise (fresh, after POSIX_FADV_WILLNEED: untimed); the populating
 * alone: popchunk (a mapping per chunk), popwindow (a mapping per 8 MiB),
 * fadvonly (POSIX_FADV_WILLNEED per chunk). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define CH 65536u
#define SEG (8u << 20)
#define REC 18u

static double cpu(void)
{
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

static void fill(uint8_t *c)
{
	for (size_t o = 16; o + REC <= CH; o += REC) {
		memset(c + o, (int)o, REC);
		__asm__ volatile("" ::"r"(c) : "memory");
	}
}

static void fresh(int fd, size_t nch, int selfpop)
{
	uint8_t *seg = NULL;
	for (size_t i = 0; i < nch; i++) {
		if (i % (SEG / CH) == 0) {
			if (seg) {
				madvise(seg, SEG, MADV_DONTNEED);
				munmap(seg, SEG);
			}
			off_t at = (off_t)(i / (SEG / CH)) * SEG;
			posix_fallocate(fd, at, SEG);
			seg = mmap(NULL, SEG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, at);
		}
		uint8_t *c = seg + i % (SEG / CH) * CH;
		if (selfpop)
			madvise(c, CH, MADV_POPULATE_WRITE);
		fill(c);
	}
}

static void populate(int fd, size_t nch, int window)
{
	for (size_t i = 0; i < nch; i++) {
		if (window && i % (SEG / CH) == 0) {
			uint8_t *p = mmap(NULL, SEG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)i * CH);
			for (size_t k = 0; k < SEG / CH; k++)
				madvise(p + k * CH, CH, MADV_POPULATE_WRITE);
			munmap(p, SEG);
		} else if (!window) {
			uint8_t *p = mmap(NULL, CH, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)i * CH);
			madvise(p, CH, MADV_POPULATE_WRITE);
			munmap(p, CH);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return fprintf(stderr, "usage: trace_pages MODE FILE [MiB]\n"), 2;
	const char *m = argv[1];
	size_t nch = (size_t)(argc > 3 ? atol(argv[3]) : 112) * (1u << 20) / CH;
	nch -= nch % (SEG / CH);
	int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return perror(argv[2]), 1;
	uint8_t *b = mmap(NULL, CH, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!strcmp(m, "prepop") || !strcmp(m, "fadvise") || !strncmp(m, "pop", 3) || !strcmp(m, "fadvonly"))
		posix_fallocate(fd, 0, (off_t)(nch * CH));
	if (!strcmp(m, "prepop"))
		populate(fd, nch, 1);
	if (!strcmp(m, "fadvise"))
		posix_fadvise(fd, 0, (off_t)(nch * CH), POSIX_FADV_WILLNEED);
	double t0 = cpu();
	if (!strcmp(m, "stores"))
		for (size_t i = 0; i < nch; i++)
			fill(b);
	else if (!strcmp(m, "fresh") || !strcmp(m, "prepop") || !strcmp(m, "fadvise"))
		fresh(fd, nch, 0);
	else if (!strcmp(m, "selfpop"))
		fresh(fd, nch, 1);
	else if (!strcmp(m, "pwrite"))
		for (size_t i = 0; i < nch; i++) {
			fill(b);
			if (pwrite(fd, b, CH, (off_t)(i * CH)) != (ssize_t)CH)
				return perror("pwrite"), 1;
		}
	else if (!strcmp(m, "popchunk") || !strcmp(m, "popwindow"))
		populate(fd, nch, !strcmp(m, "popwindow"));
	else if (!strcmp(m, "fadvonly"))
		for (size_t i = 0; i < nch; i++)
			posix_fadvise(fd, (off_t)(i * CH), CH, POSIX_FADV_WILLNEED);
	else
		return fprintf(stderr, "trace_pages: unknown mode '%s'\n", m), 2;
	double t = cpu() - t0;
	printf("%-9s %6.3f s CPU, %5.1f ns a record\n", m, t, t * 1e9 / (double)(nch * ((CH - 16) / REC)));
	close(fd);
	unlink(argv[2]);
	return 0;
}
