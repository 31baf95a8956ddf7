/* The shm module: System V shared memory (segments, attachments, their
 * removal) and POSIX shared memory objects, as sp-rtrace's shmsysv and
 * shmposix modules recorded them: a segment lives until it is marked for
 * removal and its last attachment is gone. */
#define _GNU_SOURCE
#include "module.h"
#include "pages.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

enum { H_SHMGET, H_SHMAT, H_SHMDT, H_SHMCTL, H_SHM_OPEN, H_SHM_UNLINK, H_COUNT };
static const char *const names[H_COUNT] = {"shmget", "shmat", "shmdt", "shmctl", "shm_open", "shm_unlink"};
static const rt_restype types[] = {
	{"segment", "shared memory segment", true},
	{"address", "shared memory attachments", false},
	{"control", "shared memory segment control operation", false},
	{"pshmobj", "posix shared memory object", false},
};
rt_module rt_mod_shm = {
	.name = "shm",
	.desc = "shared memory: shmget, shmat, shmdt, shmctl(IPC_RMID), shm_open, shm_unlink",
	.res = types, .nres = 4, .fns = names, .nfns = H_COUNT,
};
#define FN(f) (rt_mod_shm.fn_base + (f))
#define RES(k) (rt_mod_shm.res_base + (k))
enum { R_SEGMENT, R_ADDRESS, R_CONTROL, R_PSHMOBJ };

static struct {
	int (*shmget)(key_t, size_t, int), (*shmdt)(const void *), (*shmctl)(int, int, struct shmid_ds *);
	void *(*shmat)(int, const void *, int);
	int (*shm_open)(const char *, int, mode_t), (*shm_unlink)(const char *);
} real;

/* Attachments and their segments, to know which segment a shmdt may end. */
#define ATT_MAX 1024
static struct {
	uintptr_t addr;
	int id;
} att[ATT_MAX] RT_COLD;
static pthread_mutex_t att_lock = PTHREAD_MUTEX_INITIALIZER;

static void att_set(uintptr_t addr, int id)
{
	pthread_mutex_lock(&att_lock);
	for (size_t i = 0; i < ATT_MAX; i++)
		if (!att[i].addr || att[i].addr == addr) {
			att[i].addr = addr;
			att[i].id = id;
			break;
		}
	pthread_mutex_unlock(&att_lock);
}

static int att_take(uintptr_t addr)
{
	int id = -1;
	pthread_mutex_lock(&att_lock);
	for (size_t i = 0; i < ATT_MAX && id < 0; i++)
		if (att[i].addr == addr) {
			id = att[i].id;
			att[i].addr = 0;
		}
	pthread_mutex_unlock(&att_lock);
	return id;
}

/* The segment is gone: removed and no longer attached. */
static void segment_check(int id, unsigned fn, uint64_t bt)
{
	struct shmid_ds ds;
	int err = errno;
	if (id >= 0 && real.shmctl(id, IPC_STAT, &ds) != 0)
		rt_mod_put(0, RT_TF_CALL_FREE, fn, RES(R_SEGMENT), (uint64_t)id, 0, bt, NULL, 0);
	errno = err;
}

RT_EXPORT int shmget(key_t key, size_t size, int flags)
{
	RT_REAL(real.shmget, "shmget");
	int id = real.shmget(key, size, flags);
	if (id >= 0 && rt_mod_tracing(&rt_mod_shm))
		rt_mod_put(0, RT_TF_CALL_ALLOC, FN(H_SHMGET), RES(R_SEGMENT), (uint64_t)id, size, rt_mod_bt(), NULL, 0);
	return id;
}

static void attached(int id, void *p, uint64_t bt)
{
	struct shmid_ds ds = {0};
	int err = errno;
	RT_REAL(real.shmctl, "shmctl");
	real.shmctl(id, IPC_STAT, &ds);
	errno = err;
	char a1[20], a2[24];
	rt_arg a[] = {{"shmid", rt_mod_hex(a1, (unsigned)id)}, {"cpid", rt_mod_dec(a2, ds.shm_cpid)}};
	att_set((uintptr_t)p, id);
	rt_mod_put(0, RT_TF_CALL_ALLOC, FN(H_SHMAT), RES(R_ADDRESS), (uintptr_t)p, ds.shm_segsz, bt, a, 2);
}

RT_EXPORT void *shmat(int id, const void *addr, int flags)
{
	RT_REAL(real.shmat, "shmat");
	void *p = real.shmat(id, addr, flags);
	if (p != (void *)-1 && rt_mod_tracing(&rt_mod_shm))
		attached(id, p, rt_mod_bt());
	return p;
}

/* A known attachment's release is recorded before the call, the index
 * and the record in one busy section (rt_mod_put), as close's is: no
 * signal handler's call comes between them. */
RT_EXPORT int shmdt(const void *addr)
{
	RT_REAL(real.shmdt, "shmdt");
	RT_REAL(real.shmctl, "shmctl");
	if (!rt_mod_tracing(&rt_mod_shm))
		return real.shmdt(addr);
	uint64_t bt = rt_opt.trace_frees ? rt_mod_bt() : 0;
	int id = att_take((uintptr_t)addr);
	if (id >= 0)
		rt_mod_put(0, RT_TF_CALL_FREE, FN(H_SHMDT), RES(R_ADDRESS), (uintptr_t)addr, 0, bt, NULL, 0);
	int rc = real.shmdt(addr);
	if (rc == 0 && id < 0) /* attached before tracing, or not known */
		rt_mod_put(0, RT_TF_CALL_FREE, FN(H_SHMDT), RES(R_ADDRESS), (uintptr_t)addr, 0, bt, NULL, 0);
	if (rc == 0)
		segment_check(id, FN(H_SHMDT), bt);
	return rc;
}

static void removed(int id, uint64_t bt)
{
	static const rt_arg a[] = {{"cmd", "IPC_RMID"}};
	rt_mod_put(0, RT_TF_CALL_FREE, FN(H_SHMCTL), RES(R_CONTROL), (uint64_t)id, 0, bt, a, 1);
	segment_check(id, FN(H_SHMCTL), bt);
}

RT_EXPORT int shmctl(int id, int cmd, struct shmid_ds *buf)
{
	RT_REAL(real.shmctl, "shmctl");
	int rc = real.shmctl(id, cmd, buf);
	if (rc == 0 && cmd == IPC_RMID && rt_mod_tracing(&rt_mod_shm))
		removed(id, rt_mod_bt());
	return rc;
}

/* A POSIX object's resource id: a hash of its name (FNV-1a). */
static uint64_t name_id(const char *name)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3u;
	return h >> 1;
}

static void object_opened(int fd, const char *name, int oflag, mode_t mode, uint64_t bt)
{
	char a1[20], a2[20];
	rt_arg a[] = {{"name", name}, {"oflag", rt_mod_hex(a1, (unsigned)oflag)},
		      {"mode", rt_mod_hex(a2, mode)}};
	if (oflag & O_CREAT)
		rt_mod_put(0, RT_TF_CALL_ALLOC, FN(H_SHM_OPEN), RES(R_PSHMOBJ), name_id(name), 1, bt, a, 3);
	if (rt_fd_tracing())
		rt_fd_shm_open(fd, name, oflag, bt);
}

RT_EXPORT int shm_open(const char *name, int oflag, mode_t mode)
{
	RT_REAL(real.shm_open, "shm_open");
	int fd;
	rt_t.inside++;
	fd = real.shm_open(name, oflag, mode);
	rt_t.inside--;
	if (fd >= 0 && (rt_mod_tracing(&rt_mod_shm) || rt_fd_tracing())) {
		uint64_t bt = rt_mod_bt();
		if (RT_LOAD(rt_mod_shm.on))
			object_opened(fd, name, oflag, mode, bt);
		else
			rt_fd_shm_open(fd, name, oflag, bt);
	}
	return fd;
}

RT_EXPORT int shm_unlink(const char *name)
{
	RT_REAL(real.shm_unlink, "shm_unlink");
	int rc = real.shm_unlink(name);
	if (rc == 0 && rt_mod_tracing(&rt_mod_shm)) {
		rt_arg a[] = {{"name", name}};
		uint64_t bt = rt_opt.trace_frees ? rt_mod_bt() : 0;
		rt_mod_put(0, RT_TF_CALL_FREE, FN(H_SHM_UNLINK), RES(R_PSHMOBJ), name_id(name), 0, bt, a, 1);
	}
	return rc;
}
