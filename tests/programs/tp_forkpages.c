/* A shell's loop in small: the parent holds a heap of a few thousand
 * blocks, and each turn allocates and frees a few blocks of its own,
 * then forks a child that frees one of them, allocates and exits, as a
 * shell's child before its exec. Every page either process writes after
 * the fork is a page fault (a copy while the other one has it), so the
 * tracer's own writes in them are its cost per command of a traced shell
 * (tests/cli/tracer_start.sh compares the counts with the same program
 * untraced). Prints the medians over the turns of the child's minor page
 * faults (all of its life: getrusage counts from the fork) and of the
 * parent's across a turn: "child N parent M".
 * usage: tp_forkpages [turns] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define HEAP 3000
#define WORDS 12
#define MAX_TURNS 200

static long minflt(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static int by_value(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int turns = argc > 1 ? atoi(argv[1]) : 30;
	if (turns < 1 || turns > MAX_TURNS)
		return 2;
	static void *heap[HEAP];
	for (int i = 0; i < HEAP; i++)
		heap[i] = malloc((size_t)(16 + (i * 37) % 180));
	static long child[MAX_TURNS], parent[MAX_TURNS];
	for (int t = 0; t < turns; t++) {
		int fds[2];
		if (pipe(fds) != 0)
			return 1;
		long before = minflt();
		void *words[WORDS];
		for (int i = 0; i < WORDS; i++)
			words[i] = malloc((size_t)(8 + 8 * (i % 4)));
		for (int i = 0; i < WORDS / 2; i++)
			free(words[i]);
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			free(words[WORDS - 1]);
			void *argv_copy = malloc(64);
			free(argv_copy);
			long n = minflt();
			(void)!write(fds[1], &n, sizeof n);
			_exit(0);
		}
		close(fds[1]);
		if (read(fds[0], &child[t], sizeof child[t]) != (ssize_t)sizeof child[t])
			return 1;
		close(fds[0]);
		int st;
		waitpid(pid, &st, 0);
		for (int i = WORDS / 2; i < WORDS; i++)
			free(words[i]);
		parent[t] = minflt() - before;
	}
	qsort(child, (size_t)turns, sizeof *child, by_value);
	qsort(parent, (size_t)turns, sizeof *parent, by_value);
	printf("child %ld parent %ld\n", child[turns / 2], parent[turns / 2]);
	for (int i = 0; i < HEAP; i++)
		free(heap[i]);
	return 0;
}
