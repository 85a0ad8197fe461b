/*
 * arena.c - the flow engine's arena: blocks that live as long as the
 * engine (each queue pair's path, its first message FIFO, its rates block,
 * its congestion control), carved in order from large zeroed chunks and
 * freed with them, all at once (struct fl_arena, flow_int.h).  Under
 * AddressSanitizer a poisoned gap follows each block, so that an overrun
 * is seen.
 */
#include <stdlib.h>
#include <string.h>

#include "flow_int.h"

#define ARENA_CHUNK (256 << 10)
#if defined(__SANITIZE_ADDRESS__)
#define FL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FL_ASAN 1
#endif
#endif
#ifdef FL_ASAN
#include <sanitizer/asan_interface.h>
#define ARENA_RED 16 /* a poisoned gap after each block: ASan sees overruns */
#else
#define ARENA_RED 0
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#endif

void *fl_arena_alloc(struct fl_state *fl, size_t bytes)
{
	struct fl_arena *a = &fl->arena;
	size_t need = ((bytes + 15) & ~(size_t)15) + ARENA_RED;
	if (need > a->left) {
		size_t size = FAB_MAX(need, (size_t)ARENA_CHUNK);
		if (a->n == a->cap) {
			a->cap = a->cap ? 2 * a->cap : 16;
			a->chunks = fab_xrealloc(a->chunks, a->cap, sizeof *a->chunks);
		}
		a->chunks[a->n++] = a->cur = fab_xcalloc(1, size);
		a->left = size;
		ASAN_POISON_MEMORY_REGION(a->cur, size);
	}
	void *p = a->cur;
	ASAN_UNPOISON_MEMORY_REGION(p, bytes); /* (the gap after it stays poisoned) */
	a->cur += need;
	a->left -= need;
	return p;
}

void fl_arena_free(struct fl_arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->chunks[i]);
	free(a->chunks);
	memset(a, 0, sizeof *a);
}
