/* Loads the plugin given as argument, calls it, unloads it. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h = dlopen(argc > 1 ? argv[1] : "./libtp_plugin.so", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	void *(*f)(void) = (void *(*)(void))dlsym(h, "plugin_alloc");
	(void)f();
	dlclose(h);
	puts("dlopen done");
	return 0;
}
