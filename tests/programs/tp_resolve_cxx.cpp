// Resolver test program in C++ (-O2): leaks from a class template's
// member, a static member function and a function in an anonymous
// namespace, whose names are printed demangled.
#include <cstddef>
#include <string>

namespace resolve_test {

static void *volatile sink;

template <typename T> struct Pool {
	__attribute__((noipa)) T *make(std::size_t n)
	{
		T *p = new T[n]; // Pool::make: new
		sink = p;
		return p;
	}
};

class Widget {
public:
	__attribute__((noipa)) static Widget *create(int v);
	int values[4];
};

Widget *Widget::create(int v)
{
	Widget *w = new Widget; // Widget::create: new
	w->values[0] = v;
	return w;
}

} // namespace resolve_test

namespace {
__attribute__((noinline)) std::string *make_text(const char *s)
{
	return new std::string(s, 40); // make_text: new
}
} // namespace


int main()
{
	static resolve_test::Pool<long> pool;
	resolve_test::sink = pool.make(5);
	resolve_test::sink = resolve_test::Widget::create(3);
	resolve_test::sink = make_text("a string long enough to be on the heap, surely");
	return 0;
}
