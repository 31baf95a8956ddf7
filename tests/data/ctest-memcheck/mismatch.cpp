// Frees with free() a block from new: memcheck's "Mismatched free() /
// delete / delete []".
#include <cstdlib>

int main()
{
	int *volatile p = new int(7);
	std::free(p);
	return 0;
}
