/* The allocation wrappers (src/base/err.c): what they hand out is zeroed
 * and keeps its bytes when it grows, and after fab_alloc_tune the kernel
 * is asked for huge pages on large blocks and on the heap's growth, before
 * they are touched (read back from /proc/self/smaps: the VmFlags "hg").
 * The memory a process may take (src/base/mem.c): a memory cgroup's limit
 * on made-up cgroup trees, v1 and v2. */
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "../../src/base/base.h"

#define MIB ((size_t)1 << 20)

/* where the kernel lends huge pages on request, and the wrappers ask */
static bool hints_expected(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return false; /* the sanitizer's allocator is its own: no hints */
#else
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (!f)
		return false;
	fclose(f);
	return true;
#endif
}

/* the VmFlags of the mapping that holds address a: "hg" when marked */
static bool marked(const void *a)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	assert_non_null(f);
	char line[512];
	bool in = false, hg = false;
	uintptr_t p = (uintptr_t)a;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = p >= lo && p < hi;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			hg = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return hg;
}

/* the allocator tuned, where the hints are to be seen; else the test is
 * skipped */
static void tune_or_skip(void)
{
	if (!hints_expected())
		skip();
	fab_alloc_tune();
}

/* the first 2 MiB boundary past a block's first 2 MiB: inside a large one */
static const void *inside(const void *p)
{
	return (const void *)(((uintptr_t)p + 2 * MIB) & ~(uintptr_t)(2 * MIB - 1));
}

static void test_alloc_zeroed_and_kept(void **state)
{
	(void)state;
	fab_alloc_tune();
	/* a large block (an mmap of its own) and a small one (the heap) */
	size_t sizes[] = {9 * MIB, 100};
	for (int k = 0; k < 2; k++) {
		unsigned char *p = fab_xcalloc(sizes[k], 1);
		for (size_t i = 0; i < sizes[k]; i++)
			assert_int_equal(p[i], 0);
		memset(p, 0xa5, sizes[k]);
		p = fab_xrealloc(p, 2 * sizes[k], 1);
		for (size_t i = 0; i < sizes[k]; i++)
			assert_int_equal(p[i], 0xa5);
		memset(p, 0x5a, 2 * sizes[k]);
		free(p);
	}
}

static void test_alloc_large_blocks_marked(void **state)
{
	(void)state;
	tune_or_skip();
	unsigned char *p = fab_xcalloc(16, MIB / 2); /* 8 MiB: its 2 MiB-aligned inside is marked */
	assert_true(marked(inside(p)));
	p = fab_xrealloc(p, 24, MIB / 2); /* grown, it is marked still (or again) */
	assert_true(marked(inside(p)));
	free(p);
}

static void test_alloc_heap_growth_marked(void **state)
{
	(void)state;
	tune_or_skip();
	/* 96 MiB of small blocks: the heap grows by at least a 64 MiB step,
	 * marked as the first block after it is handed out */
	enum { N = 1536 };
	unsigned char **v = fab_xcalloc(N, sizeof *v);
	for (int i = 0; i < N; i++)
		v[i] = fab_xcalloc(64 * 1024, 1);
	int hg = 0;
	for (int i = 0; i < N; i += 64)
		hg += marked(v[i]);
	/* most of them lie in a step marked before it was touched */
	assert_true(hg >= N / 64 / 2);
	for (int i = 0; i < N; i++)
		free(v[i]);
	free(v);
}

static char tree[64];

/* writes text into tree/rel, making the folders on the way */
static void put(const char *rel, const char *text)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", tree, rel);
	for (char *p = path + strlen(tree) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static uint64_t headroom(void)
{
	char pc[96], v2[96], v1[96];
	snprintf(pc, sizeof pc, "%s/cgroup", tree);
	snprintf(v2, sizeof v2, "%s/v2", tree);
	snprintf(v1, sizeof v1, "%s/v1", tree);
	return fab_mem_cgroup_headroom(pc, v2, v1);
}

static void test_mem_cgroup_limits(void **state)
{
	(void)state;
	snprintf(tree, sizeof tree, "/tmp/fabscope-mem-XXXXXX");
	assert_non_null(mkdtemp(tree));
	/* v2: a job's 1 GiB holds its step (no limit of its own); 100 MiB used
	 * of which 50 MiB inactive page cache: 974 MiB left */
	put("cgroup", "0::/job/step\n");
	put("v2/job/memory.max", "1073741824\n");
	put("v2/job/memory.current", "104857600\n");
	put("v2/job/memory.stat", "anon 52428800\nfile 52428800\ninactive_file 52428800\n");
	put("v2/job/step/memory.max", "max\n");
	put("v2/job/step/memory.current", "104857600\n");
	assert_int_equal(headroom(), 974 * MIB);
	/* the step's own limit, lower, wins */
	put("v2/job/step/memory.max", "268435456\n");
	assert_int_equal(headroom(), 256 * MIB - 100 * MIB);
	/* no file names a limit: none */
	put("cgroup", "0::/other\n");
	assert_int_equal(headroom(), UINT64_MAX);
	/* v1: the memory controller among others, its "no limit" at the leaf
	 * and 512 MiB one level up, used past it by page cache: 600 MiB used,
	 * 200 MiB of it inactive files, 112 MiB left; the v2 line names the
	 * root, which sets none; a controller merely starting with "memory"
	 * is not it */
	put("cgroup", "12:cpu,cpuacct:/x\n7:memoryx:/a\n4:blkio,memory:/a/b\n0::/\n");
	put("v1/a/b/memory.limit_in_bytes", "9223372036854771712\n");
	put("v1/a/memory.limit_in_bytes", "536870912\n");
	put("v1/a/memory.usage_in_bytes", "629145600\n");
	put("v1/a/memory.stat", "cache 1\ninactive_file 1\ntotal_inactive_file 209715200\n");
	assert_int_equal(headroom(), 112 * MIB);
	/* used up: nothing left */
	put("v1/a/memory.stat", "total_inactive_file 0\n");
	assert_int_equal(headroom(), 0);
	/* lines that are not hierarchy:controllers:/path, and no file at all */
	put("cgroup", "garbage\n4:memory\n4:memory:relative\n");
	assert_int_equal(headroom(), UINT64_MAX);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tree);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(headroom(), UINT64_MAX);
	/* this process: something, and no more than the machine has */
	uint64_t avail = fab_mem_available();
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	assert_true(avail > 0);
	assert_true(avail <= (uint64_t)pages * (uint64_t)psz);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_zeroed_and_kept),
		cmocka_unit_test(test_alloc_large_blocks_marked),
		cmocka_unit_test(test_alloc_heap_growth_marked),
		cmocka_unit_test(test_mem_cgroup_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
