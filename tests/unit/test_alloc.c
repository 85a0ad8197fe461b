/* The allocation wrappers (src/base/err.c): what they hand out is zeroed
 * and keeps its bytes when it grows, and after fab_alloc_tune the kernel
 * is asked for huge pages on large blocks and on the heap's growth, before
 * they are touched (read back from /proc/self/smaps: the VmFlags "hg"). */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_zeroed_and_kept),
		cmocka_unit_test(test_alloc_large_blocks_marked),
		cmocka_unit_test(test_alloc_heap_growth_marked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
