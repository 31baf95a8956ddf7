// Heap errors, one kind per argument, for comparison with Valgrind
// memcheck; every error comes from main (built without PIE, so that
// return addresses name their source line as they are).
//   mismatch  malloc/delete, new[]/delete, new/free, new/delete[],
//             new[]/free, new[]/realloc: six MismatchedFree, no abort
//   double    malloc(10), free, free again: InvalidFree (glibc aborts)
//   interior  free of a pointer 8 bytes into a live block: InvalidFree
//   wild      free of a global's address: InvalidFree
//   heuristics  blocks kept only through interior pointers that
//             memcheck's heuristics accept (stdstring, length64,
//             newarray, multipleinheritance): still reachable
#define _GLIBCXX_USE_CXX11_ABI 0
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

struct Counted {
	~Counted() { std::puts("~Counted"); }
	int c;
};
struct A {
	virtual ~A() {}
	char a;
};
struct B {
	virtual ~B() {}
	char b;
};
struct C : A, B {
	char c;
};

static char global_buf[16];
static std::string *str;     // old ABI: points 24 bytes into its block
static Counted *counted;     // new[] of a class with a destructor
static B *inner;             // into a C object, at its B part
static char *length_prefixed; // 8 bytes into a block that starts with its length

static void mismatch()
{
	void *volatile p = std::malloc(11);
	operator delete(p);
	char *volatile q = new char[12];
	operator delete(q);
	int *volatile r = new int(13);
	std::free(r);
	char *volatile s = static_cast<char *>(operator new(14));
	operator delete[](s);
	char *volatile t = new char[15];
	std::free(t);
	char *volatile u = new char[16];
	u = static_cast<char *>(std::realloc(u, 160));
	std::free(u);
}

static void heuristics()
{
	str = new std::string("a string long enough for the heap");
	counted = new Counted[3];
	inner = new C;
	char *block = static_cast<char *>(std::malloc(8 + 40));
	uint64_t len = 40;
	std::memcpy(block, &len, sizeof len);
	length_prefixed = block + 8;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "mismatch";
	if (!std::strcmp(what, "mismatch")) {
		mismatch();
	} else if (!std::strcmp(what, "double")) {
		void *volatile p = std::malloc(10);
		std::free(p);
		std::free(p);
	} else if (!std::strcmp(what, "interior")) {
		char *volatile p = static_cast<char *>(std::malloc(16));
		std::free(p + 8);
		p = nullptr; /* no copy of the block's address left on the stack: lost */
	} else if (!std::strcmp(what, "wild")) {
		std::free(global_buf);
	} else if (!std::strcmp(what, "heuristics")) {
		heuristics();
	}
	std::printf("heaperr %s\n", what);
	return 0;
}
