/* Leaks and releases descriptors, streams, mappings and shared memory in
 * a known way, and prints the numbers and errno it got, so that a traced
 * run can be compared with a plain one. "exec PROGRAM" ends by exec'ing
 * PROGRAM with one close-on-exec and one inherited descriptor open;
 * "rawclose" closes every descriptor above 2 with the raw system call,
 * which no interposer sees (the tracer's own included), then leaks one;
 * "manymaps" maps and unmaps more pages than the mmap module's table
 * holds at once. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static void descriptors(void)
{
	int kept = open("/etc/hostname", O_RDONLY);            /* leaked */
	int gone = open("/etc/passwd", O_RDONLY);
	int p[2];
	if (pipe(p))
		return;
	close(p[0]);                                           /* p[1] leaked */
	int s = socket(AF_INET, SOCK_STREAM, 0);                /* leaked */
	int d = dup(gone);
	close(gone);
	close(d);
	errno = 0;
	int rc = close(99);                                     /* never opened */
	printf("fds kept=%d pipe=%d,%d socket=%d dup=%d close99=%d errno=%s\n", kept, p[0], p[1], s, d,
	       rc, strerror(errno));
}

static void streams(void)
{
	FILE *leak = fopen("/etc/hostname", "r");             /* leaked */
	FILE *ok = fopen("/etc/passwd", "r");
	DIR *dir = opendir("/etc");                              /* leaked */
	printf("streams fileno=%d,%d dirfd=%d\n", fileno(leak), fileno(ok), dir ? dirfd(dir) : -1);
	fclose(ok);
	int fd = open("/etc/passwd", O_RDONLY);
	FILE *over = fdopen(fd, "r");                            /* its fd is the stream's */
	fclose(over);
}

static void mappings(void)
{
	char *m = mmap(NULL, 4 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(m + 4096, 4096); /* leaves 4096 at m and 8192 at m + 8192 */
	char *gone = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 4096);
	printf("mappings %s\n", m != MAP_FAILED ? "yes" : "no");
}

static void shared(void)
{
	int id = shmget(IPC_PRIVATE, 1024, IPC_CREAT | 0600);
	void *a = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	shmdt(a);
	printf("shm %s\n", id >= 0 && a != (void *)-1 ? "yes" : "no");
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "exec")) {
		int cloexec = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
		int inherited = open("/etc/passwd", O_RDONLY);
		printf("exec cloexec=%d inherited=%d\n", cloexec, inherited);
		fflush(stdout);
		execl(argv[2], argv[2], (char *)NULL);
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "closeall")) { /* a daemon's start */
		close_range(3, ~0u, 0);
		int ebadf = 0;
		for (int fd = 3; fd < 1024; fd++)
			ebadf += close(fd) < 0 && errno == EBADF;
		printf("closeall ebadf=%d open=%d\n", ebadf, open("/etc/hostname", O_RDONLY));
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "rawclose")) { /* behind libc's back */
		for (int fd = 3; fd < 1024; fd++)
			syscall(SYS_close, fd);
		int fd = open("/etc/hostname", O_RDONLY);         /* leaked */
		printf("rawclose open=%d\n", fd);
		return fd >= 0 ? 5 : 1;
	}
	if (argc > 1 && !strcmp(argv[1], "manymaps")) {
		enum { N = 5000 };
		static void *m[N];
		int unmapped = 0;
		for (int i = 0; i < N; i++)
			m[i] = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		for (int i = 0; i < N; i++)
			unmapped += m[i] != MAP_FAILED && munmap(m[i], 4096) == 0;
		printf("manymaps unmapped=%d\n", unmapped);
		return 0;
	}
	descriptors();
	streams();
	mappings();
	shared();
	return 3;
}
