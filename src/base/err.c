/*
 * err.c - error values, messages and the allocation wrappers.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base.h"

const char *fab_strerror(int err)
{
	switch (err) {
#define FAB_X(name, value, text)                                                                                       \
	case name:                                                                                                     \
		return text;
		FAB_ERRORS(FAB_X)
#undef FAB_X
	}
	return "unknown error";
}

int fab_err_set(struct fab_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

int fab_err_exit_code(int code)
{
	switch (code) {
	case FAB_OK:
		return FAB_EXIT_OK;
	case FAB_EINVAL:
	case FAB_ETOPO:
		return FAB_EXIT_INPUT;
	case FAB_EIO:
		return FAB_EXIT_IO;
	case FAB_EUSAGE:
		return FAB_EXIT_USAGE;
	default:
		return FAB_EXIT_INTERNAL;
	}
}

int fab_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Huge pages (2 MiB) where the kernel lends them on request (transparent
 * huge pages in madvise mode; in always mode it needs no asking): memory
 * first touched takes one fault per 2 MiB, not 512, and lookups miss the
 * TLB less.  The engines hold millions of small blocks visited in no
 * order: HPCC's FB_Hadoop run on the flow engine took 15,100 page faults,
 * 450 with them (doc/flow.md has the times).  fab_alloc_tune (the CLI calls it
 * first) gives every block of 2 MiB or more an mmap of its own and grows
 * the heap in HEAP_STEP steps; the wrappers below mark each block of 4 MiB
 * or more, and each step the heap grew by, before it is touched.  Hints
 * only: refused, nothing changes but the speed.  Not under
 * AddressSanitizer, whose allocator is its own. */
#define HUGE_PAGE ((size_t)2 << 20)
#define HEAP_STEP ((size_t)64 << 20)

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) /* clang's way of saying it */
#define ASAN 1
#endif
#endif

#if defined(MADV_HUGEPAGE) && defined(M_MMAP_THRESHOLD) && !defined(ASAN)
static atomic_bool tuned;
static _Atomic uintptr_t heap_marked; /* the heap's end when last marked */

/* the 2 MiB-aligned inside of [p, p + bytes): its ends share pages with
 * other blocks, touched already */
static void huge_hint(uintptr_t p, size_t bytes)
{
	uintptr_t a = (p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t e = (p + bytes) & ~(uintptr_t)(HUGE_PAGE - 1);
	if (e > a)
		(void)madvise((void *)a, e - a, MADV_HUGEPAGE);
}

static void alloc_hint(void *p, size_t bytes)
{
	if (!atomic_load_explicit(&tuned, memory_order_relaxed))
		return;
	if (bytes >= 2 * HUGE_PAGE) { /* an mmap of its own, untouched (calloc skips those) */
		huge_hint((uintptr_t)p, bytes);
		return;
	}
	/* sbrk(0) reads the allocator's own note of the heap's end, no call
	 * to the kernel (a word another thread's allocation may be moving:
	 * a stale value only puts the hint off to a later block) */
	uintptr_t top = (uintptr_t)sbrk(0);
	uintptr_t was = atomic_load_explicit(&heap_marked, memory_order_relaxed);
	if (top == was || top == (uintptr_t)-1)
		return;
	was = atomic_exchange_explicit(&heap_marked, top, memory_order_relaxed);
	if (top > was)
		huge_hint(was, top - was);
}

void fab_alloc_tune(void)
{
	mallopt(M_MMAP_THRESHOLD, (int)HUGE_PAGE);
	mallopt(M_TOP_PAD, (int)HEAP_STEP);
	mallopt(M_TRIM_THRESHOLD, (int)(2 * HEAP_STEP)); /* no shrinking and growing again */
	atomic_store(&heap_marked, (uintptr_t)sbrk(0));
	atomic_store(&tuned, true);
}
#else
static void alloc_hint(void *p, size_t bytes)
{
	(void)p;
	(void)bytes;
}

void fab_alloc_tune(void)
{
}
#endif

/* n * size bytes, at least 1 (aborts past SIZE_MAX) */
static size_t alloc_bytes(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		abort();
	size_t bytes = n * size;
	return bytes ? bytes : 1;
}

/* p, or the end of the program where the allocation failed */
static void *alloc_ok(void *p, size_t bytes)
{
	if (!p) {
		fputs("fabscope: out of memory\n", stderr);
		abort();
	}
	alloc_hint(p, bytes);
	return p;
}

void *fab_xcalloc(size_t n, size_t size)
{
	return alloc_ok(calloc(n ? n : 1, size ? size : 1), n * size);
}

void *fab_xcalloc_aligned(size_t align, size_t n, size_t size)
{
	size_t bytes = alloc_bytes(n, size);
	void *p;
	if (posix_memalign(&p, align, bytes))
		p = NULL;
	alloc_ok(p, bytes);
	memset(p, 0, bytes);
	return p;
}

void *fab_xrealloc(void *p, size_t n, size_t size)
{
	size_t bytes = alloc_bytes(n, size);
	return alloc_ok(realloc(p, bytes), bytes);
}

char *fab_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = fab_xcalloc(1, n);
	memcpy(p, s, n);
	return p;
}
