/*
 * sort.c - least-significant-digit radix sorts, a byte a pass; a pass in
 * which every key has the same byte is skipped (sizes of a few MB leave
 * five of eight).  Stable, so a two-key sort is the second key's passes,
 * then the first's.
 */
#include <stdlib.h>

#include "base.h"
#include "sort.h"

/* counts to where each digit's keys start; false when one digit has them
 * all (the pass would move nothing) */
static bool offsets(size_t count[256], size_t n)
{
	size_t at = 0;
	for (unsigned d = 0; d < 256; d++) {
		size_t c = count[d];
		if (c == n)
			return false;
		count[d] = at;
		at += c;
	}
	return true;
}

static bool pass_u64(const uint64_t *src, uint64_t *dst, size_t n, unsigned shift)
{
	size_t count[256] = {0};
	for (size_t i = 0; i < n; i++)
		count[(src[i] >> shift) & 0xff]++;
	if (!offsets(count, n))
		return false;
	for (size_t i = 0; i < n; i++)
		dst[count[(src[i] >> shift) & 0xff]++] = src[i];
	return true;
}

static bool pass_key2(const struct fab_key2 *src, struct fab_key2 *dst, size_t n, unsigned shift, bool by_b)
{
	size_t count[256] = {0};
	for (size_t i = 0; i < n; i++)
		count[((by_b ? src[i].b : src[i].a) >> shift) & 0xff]++;
	if (!offsets(count, n))
		return false;
	for (size_t i = 0; i < n; i++)
		dst[count[((by_b ? src[i].b : src[i].a) >> shift) & 0xff]++] = src[i];
	return true;
}

void fab_sort_u64(uint64_t *v, size_t n)
{
	if (n < 2)
		return;
	uint64_t *tmp = fab_xcalloc(n, sizeof *tmp), *src = v, *dst = tmp;
	for (unsigned shift = 0; shift < 64; shift += 8)
		if (pass_u64(src, dst, n, shift)) {
			uint64_t *x = src;
			src = dst;
			dst = x;
		}
	if (src != v)
		memcpy(v, src, n * sizeof *v);
	free(tmp);
}

void fab_sort_key2(struct fab_key2 *v, size_t n)
{
	if (n < 2)
		return;
	struct fab_key2 *tmp = fab_xcalloc(n, sizeof *tmp), *src = v, *dst = tmp;
	for (unsigned k = 0; k < 16; k++)
		if (pass_key2(src, dst, n, 8 * (k % 8), k < 8)) {
			struct fab_key2 *x = src;
			src = dst;
			dst = x;
		}
	if (src != v)
		memcpy(v, src, n * sizeof *v);
	free(tmp);
}
