/*
 * rng.h - seeded pseudo-random streams.
 *
 * Each simulated entity (a switch's ECN marker, a traffic generator) owns a
 * stream derived from the scenario seed and a stream id, so adding an entity
 * never shifts another's draws.  xoshiro256** seeded through splitmix64.
 */
#ifndef FAB_RNG_H
#define FAB_RNG_H

#include <stdint.h>

struct fab_rng {
	uint64_t s[4];
};

static inline uint64_t fab_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A 64-bit mix with good avalanche, used for ECMP hashing. */
static inline uint64_t fab_mix64(uint64_t z)
{
	z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdULL;
	z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ULL;
	return z ^ (z >> 33);
}

/* A name's 64-bit hash (FNV-1a): what keys a connection's 5-tuple to who
 * opens it (a communicator, a job). */
static inline uint64_t fab_name_hash(const char *n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *n; n++)
		h = (h ^ (unsigned char)*n) * 0x100000001b3ULL;
	return h;
}

static inline void fab_rng_init(struct fab_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ fab_mix64(stream + 0x632be59bd9b4e019ULL);
	for (int i = 0; i < 4; i++)
		r->s[i] = fab_splitmix64(&x);
}

static inline uint64_t fab_rng_next(struct fab_rng *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5;
	uint64_t result = ((x << 7) | (x >> 57)) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return result;
}

/* Uniform double in [0, 1). */
static inline double fab_rng_unit(struct fab_rng *r)
{
	return (double)(fab_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n), n > 0, without modulo bias. */
static inline uint64_t fab_rng_below(struct fab_rng *r, uint64_t n)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t v;
	do
		v = fab_rng_next(r);
	while (v >= limit);
	return v % n;
}

/* What draws from a stream.  A stream id is the kind in the top byte and
 * the entity's index below it, so that no two entities ever share draws
 * (a traffic generator and a switch with the same index included). */
enum fab_rng_kind {
	FAB_RNG_TRAFFIC_GEN = 1, /* index: the generator */
	FAB_RNG_PLACEMENT,       /* index: the job (the collective sweep: FAB_RNG_COLL_INDEX) */
	FAB_RNG_ECN_MARK,        /* index: the switch */
	FAB_RNG_LINK_LOSS,       /* index: the port that sends on the link */
	FAB_RNG_MATRIX,          /* index: the round of sampled pairs */
	FAB_RNG_CHECK,           /* the collective checker's order of completions */
	FAB_RNG_FLUID_MARK, /* index: the queue pair's ends and source port, mixed (flow.queues dcqcn's ECN marks) */
};

#define FAB_RNG_COLL_INDEX (UINT64_C(1) << 40)

/* The switches' ECMP seeds draw from stream 2 of their own seed
 * (fabric.ecmp.seed), which nothing else draws from. */
#define FAB_RNG_ECMP_STREAM 2

static inline uint64_t fab_rng_stream(enum fab_rng_kind kind, uint64_t index)
{
	return (uint64_t)kind << 56 | (index & ((UINT64_C(1) << 56) - 1));
}

#endif
