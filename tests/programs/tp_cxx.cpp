// C++ operators: one leaked new int (4 bytes), one leaked new char[40],
// the rest released with the matching operator.
#include <cstdio>
#include <new>
#include <string>
#include <vector>

int main()
{
	int *leak = new int(42);
	char *leak_array = new char[40];
	(void)leak;
	(void)leak_array;
	for (int i = 0; i < 100; i++) {
		std::vector<int> v(static_cast<size_t>(i) + 1);
		std::string s(static_cast<size_t>(i) + 20, 'x');
		delete new double(i);
		delete[] new long[static_cast<size_t>(i) + 1];
	}
	int *nt = new (std::nothrow) int(1);
	delete nt;
	try {
		volatile size_t too_big = static_cast<size_t>(-1) / 4;
		char *huge = new char[too_big];
		delete[] huge;
	} catch (const std::bad_alloc &) {
		std::puts("bad_alloc caught");
	}
	std::puts("cxx done");
	return 0;
}
