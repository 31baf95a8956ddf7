/* The rules of the SARIF log: what each <kind> of Valgrind's tools means
 * (memcheck, helgrind, drd; rtrace's findings are memcheck's kinds), as
 * the tools' manuals describe them, with the metadata code-scanning
 * services read: a default level, problem.severity, a CWE tag, and a
 * security-severity for the memory-safety errors (GitHub shows those as
 * security alerts). One table, so every writer of a rule says the same;
 * a kind the table does not know still gets a rule, described by name. */
#include "sarif/sarif_int.h"

#include <string.h>

#define MC "https://valgrind.org/docs/manual/mc-manual.html#mc-manual.errormsgs"
#define MCL "https://valgrind.org/docs/manual/mc-manual.html#mc-manual.leaks"
#define HG "https://valgrind.org/docs/manual/hg-manual.html"
#define DRD "https://valgrind.org/docs/manual/drd-manual.html"

typedef struct kind_row {
	const char *tool, *kind;
	sarif_rule_info r;
} kind_row;

#define E "error", "error"
#define W "warning", "warning"
#define N "note", "recommendation"

static const kind_row rows[] = {
	{"memcheck", "Leak_DefinitelyLost", {"DefinitelyLost", "Memory definitely lost.",
		"Heap blocks were still allocated at exit and no pointer to them was found: the program "
		"lost them. The stack is where they were allocated.", E, "401", NULL, MCL}},
	{"memcheck", "Leak_IndirectlyLost", {"IndirectlyLost", "Memory indirectly lost.",
		"Heap blocks were still allocated at exit and only pointed to by blocks that were lost: "
		"freeing those would free these. The stack is where they were allocated.", W, "401", NULL, MCL}},
	{"memcheck", "Leak_PossiblyLost", {"PossiblyLost", "Memory possibly lost.",
		"Heap blocks were still allocated at exit and only pointers into their middle were found. "
		"The stack is where they were allocated.", W, "401", NULL, MCL}},
	{"memcheck", "Leak_StillReachable", {"StillReachable", "Memory still reachable at exit.",
		"Heap blocks were still allocated and pointed to at exit: not freed, but not lost. "
		"The stack is where they were allocated.", N, "401", NULL, MCL}},
	{"memcheck", "InvalidFree", {"InvalidFree", "Invalid free, delete or realloc.",
		"A block was freed that is not a heap block or was freed already (a double free).",
		E, "415", "8.0", MC}},
	{"memcheck", "MismatchedFree", {"MismatchedFree", "Mismatched free, delete or delete[].",
		"A heap block was freed with a function that does not match its allocation (malloc and "
		"delete, new[] and delete, new and free).", E, "762", "5.0", MC}},
	{"memcheck", "InvalidRead", {"InvalidRead", "Invalid read.",
		"The program read memory it may not: outside any block, in a freed block, or past a "
		"block's end.", E, "125", "7.5", MC}},
	{"memcheck", "InvalidWrite", {"InvalidWrite", "Invalid write.",
		"The program wrote memory it may not: outside any block, in a freed block, or past a "
		"block's end.", E, "787", "8.8", MC}},
	{"memcheck", "InvalidJump", {"InvalidJump", "Jump to an invalid address.",
		"The program jumped to an address with no code.", E, "822", "8.8", MC}},
	{"memcheck", "UninitCondition", {"UninitCondition", "Conditional jump on uninitialised values.",
		"A branch depends on memory that was never initialised.", E, "457", "5.0", MC}},
	{"memcheck", "UninitValue", {"UninitValue", "Use of an uninitialised value.",
		"A value that was never initialised was used where it matters.", E, "457", "5.0", MC}},
	{"memcheck", "SyscallParam", {"SyscallParam", "System call parameter uninitialised or unaddressable.",
		"A system call was given memory that is not initialised or not addressable.",
		E, "908", "5.0", MC}},
	{"memcheck", "Overlap", {"Overlap", "Overlapping source and destination.",
		"A copy function (memcpy, strcpy, ...) was given overlapping blocks.", E, "475", NULL, MC}},
	{"memcheck", "FishyValue", {"FishyValue", "Suspicious argument value.",
		"An allocation function was given a size that is probably negative.", E, "687", NULL, MC}},
	{"memcheck", "ClientCheck", {"ClientCheck", "Client check failed.",
		"A check requested by the program (VALGRIND_CHECK_MEM_IS_DEFINED, ...) failed.",
		E, NULL, NULL, MC}},
	{"memcheck", "InvalidMemPool", {"InvalidMemPool", "Invalid memory pool.",
		"A memory pool request named a pool that does not exist.", E, NULL, NULL, MC}},
	{"memcheck", "ReallocSizeZero", {"ReallocSizeZero", "realloc with size zero.",
		"realloc was called with a size of zero, whose meaning depends on the C library.",
		W, "687", NULL, MC}},
	{"memcheck", "InvalidAlignment", {"InvalidAlignment", "Invalid alignment value.",
		"An aligned allocation function was given an alignment that is not a power of two.",
		E, "687", NULL, MC}},
	{"memcheck", "InvalidSize", {"InvalidSize", "Invalid size value.",
		"An allocation function was given an invalid size.", E, "687", NULL, MC}},
	{"memcheck", "InvalidSizeAndAlignment", {"InvalidSizeAndAlignment", "Invalid size and alignment.",
		"aligned_alloc was given a size that is not a multiple of the alignment.", E, "687", NULL, MC}},
	{"memcheck", "MismatchedAllocateDeallocateSize", {"MismatchedDeallocateSize",
		"Mismatched sized deallocation.",
		"A sized delete was given a size other than the one allocated.", E, "762", NULL, MC}},
	{"memcheck", "MismatchedAllocateDeallocateAlignment", {"MismatchedDeallocateAlignment",
		"Mismatched aligned deallocation.",
		"An aligned delete was given an alignment other than the one allocated.", E, "762", NULL, MC}},
	{"memcheck", "FdBadClose", {"FdBadClose", "Invalid file descriptor closed.",
		"close was called on a descriptor that is not open (closed already, or never opened).",
		E, "675", NULL, MC}},
	{"memcheck", "FdNotClosed", {"FdNotClosed", "File descriptor left open.",
		"A file descriptor was still open at exit. The stack is where it was opened.",
		W, "775", NULL, MC}},
	{"memcheck", "FdBadUse", {"FdBadUse", "Invalid file descriptor used.",
		"A descriptor that is not open was used.", E, "910", NULL, MC}},
	{"helgrind", "Race", {"DataRace", "Data race.",
		"Two threads accessed the same memory without synchronisation, at least one of them "
		"writing.", E, "362", "7.0", HG}},
	{"helgrind", "UnlockUnlocked", {"UnlockUnlocked", "Unlock of an unlocked lock.",
		"A thread unlocked a lock that was not locked.", E, "765", NULL, HG}},
	{"helgrind", "UnlockForeign", {"UnlockForeign", "Unlock of a lock held by another thread.",
		"A thread unlocked a lock that another thread holds.", E, "667", NULL, HG}},
	{"helgrind", "UnlockBogus", {"UnlockBogus", "Unlock of an invalid lock.",
		"A thread unlocked something that is not a lock.", E, "667", NULL, HG}},
	{"helgrind", "PthAPIerror", {"PthreadApiError", "Error from the pthread API.",
		"A pthread function returned an error the program did not expect.", E, "252", NULL, HG}},
	{"helgrind", "LockOrder", {"LockOrder", "Lock order violated.",
		"Two locks were taken in both orders: threads doing so can deadlock.", E, "833", NULL, HG}},
	{"helgrind", "Misc", {"ThreadingError", "Threading error.",
		"Another misuse of threads or of their synchronisation.", W, NULL, NULL, HG}},
	{"drd", "ConflictingAccess", {"ConflictingAccess", "Conflicting access (data race).",
		"Two threads accessed the same memory without synchronisation, at least one of them "
		"writing.", E, "362", "7.0", DRD}},
	{"drd", "MutexErr", {"MutexError", "Mutex misuse.",
		"A mutex was used wrongly (unlocked when not locked, locked twice, destroyed while "
		"locked, ...).", E, "667", NULL, DRD}},
	{"drd", "CondErr", {"CondError", "Condition variable misuse.",
		"A condition variable was used wrongly.", E, "667", NULL, DRD}},
	{"drd", "CondDestrErr", {"CondDestroyError", "Condition variable destroyed while in use.",
		"A condition variable was destroyed while threads were waiting on it.", E, "667", NULL, DRD}},
	{"drd", "CondRaceErr", {"CondRace", "Condition variable signalled without its mutex.",
		"A condition variable was signalled while its mutex was not held: a wakeup can be lost.",
		E, "362", NULL, DRD}},
	{"drd", "CondWaitErr", {"CondWaitError", "Wait on a condition variable with two mutexes.",
		"Threads waited on one condition variable with different mutexes.", E, "667", NULL, DRD}},
	{"drd", "SemaphoreErr", {"SemaphoreError", "Semaphore misuse.",
		"A semaphore was used wrongly.", E, "667", NULL, DRD}},
	{"drd", "BarrierErr", {"BarrierError", "Barrier misuse.",
		"A barrier was used wrongly.", E, "667", NULL, DRD}},
	{"drd", "RwlockErr", {"RwlockError", "Reader-writer lock misuse.",
		"A reader-writer lock was used wrongly.", E, "667", NULL, DRD}},
	{"drd", "HoldtimeErr", {"HoldTimeExceeded", "Lock held too long.",
		"A lock was held longer than the limit given to drd.", W, NULL, NULL, DRD}},
	{"drd", "GenericErr", {"GenericError", "Threading error.",
		"Another misuse of threads or of their synchronisation.", W, NULL, NULL, DRD}},
	{"drd", "InvalidThreadId", {"InvalidThreadId", "Invalid thread id.",
		"A pthread function was given a thread id that names no thread.", E, NULL, NULL, DRD}},
};

/* A kind the table does not know (another tool, a newer Valgrind). */
static void generic(const char *tool, sarif_rule_info *r)
{
	static const sarif_rule_info g = {"", "Error reported by the tool.",
		"An error reported by the tool; its message says what it is.", W, NULL, NULL,
		"https://valgrind.org/docs/manual/manual.html"};
	*r = g;
	if (!strcmp(tool, "memcheck"))
		r->help_uri = MC;
	else if (!strcmp(tool, "helgrind"))
		r->help_uri = HG;
	else if (!strcmp(tool, "drd"))
		r->help_uri = DRD;
}

void rt_sarif_rule_info(const char *tool, const char *kind, sarif_rule_info *r)
{
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		if (!strcmp(rows[i].tool, tool) && !strcmp(rows[i].kind, kind)) {
			*r = rows[i].r;
			return;
		}
	}
	/* helgrind and drd share some kinds' names */
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		if (strcmp(rows[i].tool, "memcheck") && !strcmp(rows[i].kind, kind)) {
			*r = rows[i].r;
			return;
		}
	}
	generic(tool, r);
}
