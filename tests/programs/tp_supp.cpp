// Leaks and heap errors for the suppression tests, compared with memcheck
// on the same suppression files: C++ functions (mangled linkage names,
// a template, a namespace), an extern "C" one, a definitely lost block
// with an indirectly lost one under it, a still reachable block, and a
// mismatched free three times at one place (three errors, one context).
#include <cstdlib>
#include <cstring>

namespace app {
struct Cache {
	char *buf;
};

__attribute__((noinline)) Cache *make_cache(std::size_t n)
{
	Cache *c = new Cache;
	c->buf = static_cast<char *>(std::malloc(n));
	return c;
}

template <typename T> __attribute__((noinline)) T *make_array(std::size_t n) { return new T[n]; }
} // namespace app

extern "C" __attribute__((noinline)) void *c_alloc(std::size_t n) { return std::malloc(n); }

__attribute__((noinline)) static void mismatch()
{
	for (int i = 0; i < 3; i++) {
		char *volatile p = static_cast<char *>(std::malloc(5));
		delete p;
	}
}

static void *volatile keep;

int main()
{
	for (int i = 0; i < 2; i++)
		app::make_cache(32);
	app::make_array<int>(10);
	app::make_array<double>(3);
	c_alloc(77);
	keep = c_alloc(55);
	mismatch();
	return 0;
}
