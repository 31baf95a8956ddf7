/* The module registry: which modules trace (RTRACE_MODULES, a comma
 * separated list; default memory), the ids of their resource types and
 * functions in the trace, and what modules share (real functions,
 * argument formatting, the record of a call). */
#define _GNU_SOURCE
#include "module.h"
#include "format/run_env.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static rt_module *const modules[] = {
	&rt_mod_memory, &rt_mod_fd, &rt_mod_file, &rt_mod_mmap, &rt_mod_shm,
};
#define NMODULES (sizeof modules / sizeof *modules)

static bool selected(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncmp(p, name, n))
			return true;
		p += len;
		if (*p)
			p++;
	}
	return false;
}

/* Memory keeps resource id 1 and function ids 1..FN_COUNT-1 (the ids of
 * traces written before modules existed); the others follow in order. */
void rt_modules_init(void)
{
	const char *list = getenv(RT_ENV_MODULES);
	if (!list || !*list)
		list = RT_ENV_MODULES_DEFAULT;
	rt_mod_memory.res_base = 1;
	rt_mod_memory.fn_base = 0;
	RT_STORE(rt_mod_memory.on, selected(list, "memory"));
	unsigned res = RT_LOAD(rt_mod_memory.on) ? 2 : 1, fn = FN_COUNT;
	for (size_t i = 1; i < NMODULES; i++) {
		rt_module *m = modules[i];
		RT_STORE(m->on, selected(list, m->name));
		if (!RT_LOAD(m->on))
			continue;
		if (res + m->nres > RT_TF_MAX_RES + 1) {
			RT_STORE(m->on, 0);
			continue;
		}
		m->res_base = res;
		m->fn_base = fn;
		res += m->nres;
		fn += m->nfns;
	}
}

static void put_record(const uint8_t *rec, size_t n)
{
	uint8_t *p = rt_reserve(n);
	if (!p)
		return;
	memcpy(p, rec, n);
	rt_commit(p + n);
}

static void write_module(const rt_module *m)
{
	uint8_t rec[600], *p;
	for (unsigned i = 0; i < m->nres; i++) {
		p = rec;
		*p++ = RT_REC_RESOURCE;
		p = rt_put_varint(p, m->res_base + i);
		p = rt_put_str(p, m->res[i].type, strlen(m->res[i].type));
		p = rt_put_str(p, m->res[i].desc, strlen(m->res[i].desc));
		p = rt_put_varint(p, m->res[i].refcount ? RT_TF_RES_REFCOUNT : 0);
		put_record(rec, (size_t)(p - rec));
	}
	for (unsigned i = 0; i < m->nfns; i++) {
		if (!m->fns[i] || !*m->fns[i])
			continue;
		p = rec;
		*p++ = RT_REC_FUNCTION;
		p = rt_put_varint(p, m->fn_base + i);
		p = rt_put_str(p, m->fns[i], strlen(m->fns[i]));
		put_record(rec, (size_t)(p - rec));
	}
}

void rt_modules_write_registry(void)
{
	for (size_t i = 0; i < NMODULES; i++)
		if (RT_LOAD(modules[i]->on))
			write_module(modules[i]);
}

/* One line per module, "name<TAB>description<TAB>types", for the CLI. */
void rt_modules_list(void)
{
	char line[1024];
	for (size_t i = 0; i < NMODULES; i++) {
		const rt_module *m = modules[i];
		int n = snprintf(line, sizeof line, "%s\t%s\t", m->name, m->desc);
		for (unsigned k = 0; k < m->nres && n > 0 && (size_t)n < sizeof line; k++)
			n += snprintf(line + n, sizeof line - (size_t)n, "%s%s (%s)", k ? ", " : "",
				      m->res[k].type, m->res[k].desc);
		if (n > 0 && (size_t)n < sizeof line - 1) {
			line[n++] = '\n';
			(void)!write(STDOUT_FILENO, line, (size_t)n);
		}
	}
}

void rt_mod_put(uint64_t index, int kind, unsigned fn, unsigned res, uint64_t id, uint64_t size,
		uint64_t bt, const rt_arg *args, unsigned nargs)
{
	int err = errno;
	rt_heap_pin();
	int busy = rt_t.busy;
	rt_t.busy = 1;
	if (!index)
		index = rt_next_index();
	rt_record_ex(index, kind, fn, res, id, size, bt, args, nargs);
	rt_writer_keep(); /* a descriptor, a mapping ... may outlive an exec */
	rt_t.busy = busy;
	rt_heap_unpin();
	errno = err;
}

void *rt_mod_next(const char *name)
{
	int busy = rt_t.busy;
	rt_t.busy = 1; /* dlsym allocates */
	void *p = dlsym(RTLD_NEXT, name);
	rt_t.busy = busy;
	if (!p) {
		static const char msg[] = "rtrace: a traced function is missing from the C library\n";
		(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
		abort();
	}
	return p;
}

const char *rt_mod_hex(char *buf, uint64_t v)
{
	snprintf(buf, 20, "0x%" PRIx64, v);
	return buf;
}

const char *rt_mod_dec(char *buf, int64_t v)
{
	snprintf(buf, 24, "%" PRId64, v);
	return buf;
}
