/*
 * dec.h - unsigned 64-bit integers in decimal, as "%llu" writes them, for
 * the tables of every flow of a run (result.json, flows.csv): a dozen
 * numbers a row, most of them picoseconds of ten to fifteen digits.
 */
#ifndef FAB_DEC_H
#define FAB_DEC_H

#include <stdint.h>
#include <string.h>

static const char fab_dec_pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				    "8081828384858687888990919293949596979899";

/* the 8 digits of v < 1e8, leading zeros and all, at p: v / 1e6 in 32.32
 * fixed point (rounded up by one unit of the fraction), whose integer part
 * is the first two digits and whose fraction times 100 brings the next two
 * into the integer part; exact for every v below 1e8 (tests/unit/test_units.c
 * checks it against the division) */
static inline void fab_dec8(char *p, uint32_t v)
{
	uint64_t y = ((uint64_t)v * 281474977u >> 16) + 1;
	for (int i = 0; i < 4; i++) {
		memcpy(p + 2 * i, fab_dec_pairs + 2 * (y >> 32), 2);
		y = (uint64_t)(uint32_t)y * 100;
	}
}

/* how many digits v has: from its bit length (times log10 2, 1233 / 4096),
 * one less where v is under that power of ten (0, 1 to 7: one) */
static inline unsigned fab_dec_len(uint64_t v)
{
	static const uint64_t pow10[20] = {0ull,
					   10ull,
					   100ull,
					   1000ull,
					   10000ull,
					   100000ull,
					   1000000ull,
					   10000000ull,
					   100000000ull,
					   1000000000ull,
					   10000000000ull,
					   100000000000ull,
					   1000000000000ull,
					   10000000000000ull,
					   100000000000000ull,
					   1000000000000000ull,
					   10000000000000000ull,
					   100000000000000000ull,
					   1000000000000000000ull,
					   10000000000000000000ull};
	unsigned t = (unsigned)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;
	return t + 1 - (v < pow10[t]);
}

/* v's digits, ending just before `end` (at most 20 of them); returns their
 * first */
static inline char *fab_dec_u64(char *end, uint64_t v)
{
	char *p = end;
	/* the last eight digits at a time, then what is left two at a time */
	for (int i = 0; i < 2 && v >= 100000000; i++) {
		p -= 8;
		fab_dec8(p, (uint32_t)(v % 100000000));
		v /= 100000000;
	}
	uint32_t w = (uint32_t)v;
	for (; w >= 100; w /= 100) {
		p -= 2;
		memcpy(p, fab_dec_pairs + 2 * (w % 100), 2);
	}
	if (w >= 10) {
		p -= 2;
		memcpy(p, fab_dec_pairs + 2 * w, 2);
	} else {
		*--p = (char)('0' + w);
	}
	return p;
}

#endif
