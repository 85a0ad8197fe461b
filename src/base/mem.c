/*
 * mem.c - the memory a process here may still take: the machine's
 * MemAvailable, or less where a memory cgroup (a Slurm job's --mem, a
 * container's limit) or the process's address-space limit (ulimit -v)
 * holds it to less.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base.h"

/* a limit at or above this is none (cgroup v1 writes about 2^63 for none) */
#define NO_LIMIT (UINT64_C(1) << 60)

/* the first unsigned number in file dir/name (after key, when key is not
 * NULL: a "key value" line); 0 when missing, UINT64_MAX for "max" */
static uint64_t read_u64(const char *dir, const char *name, const char *key)
{
	char path[4096], line[256];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
		return 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	uint64_t v = 0;
	size_t kl = key ? strlen(key) : 0;
	while (fgets(line, sizeof line, f)) {
		const char *p = line;
		if (key) {
			if (strncmp(line, key, kl) || line[kl] != ' ')
				continue;
			p = line + kl + 1;
		}
		if (!strncmp(p, "max", 3))
			v = UINT64_MAX;
		else
			v = strtoull(p, NULL, 10);
		break;
	}
	fclose(f);
	return v;
}

/* the headroom under one cgroup directory's limit: the limit less what is
 * used, page cache that can be dropped (inactive files) counted as free;
 * UINT64_MAX when it sets no limit */
static uint64_t headroom(const char *dir, bool v2)
{
	uint64_t lim = read_u64(dir, v2 ? "memory.max" : "memory.limit_in_bytes", NULL);
	if (!lim || lim >= NO_LIMIT)
		return UINT64_MAX;
	uint64_t used = read_u64(dir, v2 ? "memory.current" : "memory.usage_in_bytes", NULL);
	uint64_t cache = read_u64(dir, "memory.stat", v2 ? "inactive_file" : "total_inactive_file");
	used = used > cache ? used - cache : 0;
	return lim > used ? lim - used : 0;
}

/* the least headroom of the cgroup at path (under root) and each one above
 * it, a parent's limit holding its children too */
static uint64_t walk(const char *root, const char *path, bool v2)
{
	char dir[4096];
	if ((size_t)snprintf(dir, sizeof dir, "%s%s", root, path) >= sizeof dir)
		return UINT64_MAX;
	uint64_t least = UINT64_MAX;
	size_t rl = strlen(root);
	for (;;) {
		uint64_t h = headroom(dir, v2);
		least = h < least ? h : least;
		char *slash = strrchr(dir + rl, '/');
		if (!slash)
			break;
		*slash = '\0'; /* the parent; the root itself last */
	}
	return least;
}

uint64_t fab_mem_cgroup_headroom(const char *proc_cgroup, const char *v2root, const char *v1root)
{
	FILE *f = fopen(proc_cgroup, "r");
	if (!f)
		return UINT64_MAX;
	char line[4096];
	uint64_t least = UINT64_MAX;
	while (fgets(line, sizeof line, f)) {
		/* hierarchy:controllers:path */
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || c2[1] != '/')
			continue;
		*c1 = *c2 = '\0';
		const char *ctl = c1 + 1, *path = c2 + 1;
		bool v2 = !strcmp(line, "0") && !*ctl, mem = false;
		for (const char *p = ctl; *p && !mem; p += strcspn(p, ","), p += *p == ',')
			mem = !strncmp(p, "memory", 6) && (p[6] == ',' || !p[6]);
		uint64_t h = v2 ? walk(v2root, path, true) : mem ? walk(v1root, path, false) : UINT64_MAX;
		least = h < least ? h : least;
	}
	fclose(f);
	return least;
}

void fab_mem_self(uint64_t *mapped, uint64_t *resident)
{
	unsigned long long size = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%llu %llu", &size, &rss) != 2)
			size = rss = 0;
		fclose(f);
	}
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	*mapped = (uint64_t)size * page;
	*resident = (uint64_t)rss * page;
}

/* what the address-space limit (ulimit -v) leaves beyond what the process
 * has mapped already; UINT64_MAX: no limit */
static uint64_t rlimit_headroom(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	uint64_t mapped, resident;
	fab_mem_self(&mapped, &resident);
	return (uint64_t)rl.rlim_cur > mapped ? (uint64_t)rl.rlim_cur - mapped : 1;
}

uint64_t fab_mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb;
	uint64_t v = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
			v = (uint64_t)kb * 1024;
			break;
		}
	if (f)
		fclose(f);
	if (!v) {
		long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
		if (pages > 0 && psz > 0)
			v = (uint64_t)pages * (uint64_t)psz;
	}
	uint64_t h = fab_mem_cgroup_headroom("/proc/self/cgroup", "/sys/fs/cgroup", "/sys/fs/cgroup/memory");
	if (h < UINT64_MAX && (!v || h < v))
		v = h ? h : 1; /* a full cgroup: next to nothing, not unknown */
	uint64_t r = rlimit_headroom();
	if (r < UINT64_MAX && (!v || r < v))
		v = r;
	return v;
}
