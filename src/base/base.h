/*
 * base.h - types, units and error values shared by every layer.
 *
 * Simulated time is an integer count of picoseconds, rates are integer bits
 * per second and sizes are integer bytes; the names carry the unit.  Errors
 * are values: functions return 0 or a negative FAB_E*, and fill a
 * struct fab_err with a message that points at the input.
 */
#ifndef FAB_BASE_H
#define FAB_BASE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t fab_time_ps;  /* simulated time, picoseconds */
typedef uint64_t fab_rate_bps; /* link or flow rate, bits per second */
typedef uint64_t fab_bytes;    /* a size, bytes */

#define FAB_PS_PER_NS 1000ULL
#define FAB_PS_PER_US 1000000ULL
#define FAB_PS_PER_MS 1000000000ULL
#define FAB_PS_PER_S 1000000000000ULL
#define FAB_TIME_NEVER UINT64_MAX
/* What two threads write apart: a cache line and the one the hardware
 * fetches beside it (Intel's adjacent-line prefetch pairs 64-byte lines). */
#define FAB_GAP 128

/* Exit codes of the command line tool, documented in the README. */
enum fab_exit {
	FAB_EXIT_OK = 0,
	FAB_EXIT_CHECKS = 1, /* checks failed: a suspect found, a test failed */
	FAB_EXIT_USAGE = 2,
	FAB_EXIT_INPUT = 3, /* bad scenario, topology or flow file */
	FAB_EXIT_IO = 4,
	FAB_EXIT_INTERNAL = 5,
};

/* One table gives the error enum and its strings. */
#define FAB_ERRORS(X)                                                                                                  \
	X(FAB_OK, 0, "ok")                                                                                             \
	X(FAB_EINVAL, -1, "invalid input")                                                                             \
	X(FAB_ENOMEM, -2, "out of memory")                                                                             \
	X(FAB_EIO, -3, "input/output error")                                                                           \
	X(FAB_ETOPO, -4, "impossible topology")                                                                        \
	X(FAB_EINTERNAL, -5, "internal error")                                                                         \
	X(FAB_EUSAGE, -6, "usage error")

enum fab_errno {
#define FAB_X(name, value, text) name = value,
	FAB_ERRORS(FAB_X)
#undef FAB_X
};

const char *fab_strerror(int err);

/* An error with a message that points at the input (file:line:col: key: ...). */
struct fab_err {
	int code;
	char msg[512];
};

/* Sets err (if not NULL) and returns code; printf-style message. */
int fab_err_set(struct fab_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Map an error value to the CLI exit code. */
int fab_err_exit_code(int code);

/* Memory this process can still take, bytes: the machine's MemAvailable
 * (else free RAM), or less where a memory cgroup (v2, or v1's memory
 * controller) or one above it holds it to less; 0 when unknown. */
uint64_t fab_mem_available(void);
/* The least headroom (limit less use, inactive page cache counted free)
 * of the memory cgroups that proc_cgroup (a /proc/PID/cgroup file) names,
 * and their ancestors, under v2root (cgroup v2) and v1root (v1's memory
 * controller); UINT64_MAX where none sets a limit. */
uint64_t fab_mem_cgroup_headroom(const char *proc_cgroup, const char *v2root, const char *v1root);
/* This process's mapped and resident bytes now (/proc/self/statm); 0 and
 * 0 where it cannot tell. */
void fab_mem_self(uint64_t *mapped, uint64_t *resident);

/* Units as people write them.  Each returns 0 or FAB_EINVAL and writes a
 * reason ("expected a rate such as 400Gbps") into why (size why_len). */
int fab_parse_rate(const char *s, fab_rate_bps *out, char *why, size_t why_len);
int fab_parse_time(const char *s, fab_time_ps *out, char *why, size_t why_len);
int fab_parse_bytes(const char *s, fab_bytes *out, char *why, size_t why_len);
int fab_parse_uint(const char *s, uint64_t *out, char *why, size_t why_len);
int fab_parse_double(const char *s, double *out, char *why, size_t why_len);
int fab_parse_bool(const char *s, bool *out, char *why, size_t why_len);
/* "N:M" such as 2:1, each 1 to 1000 */
int fab_parse_ratio(const char *s, uint32_t *num, uint32_t *den, char *why, size_t why_len);

/* Canonical text for a value (the inverse of the parsers): "400Gbps",
 * "1.5us", "32MiB".  Returns buf. */
char *fab_fmt_rate(fab_rate_bps v, char *buf, size_t len);
char *fab_fmt_time(fab_time_ps v, char *buf, size_t len);
char *fab_fmt_bytes(fab_bytes v, char *buf, size_t len);

/* Serialisation time of `bytes` on a link of `rate_bps`, rounded to ps.
 * (A frame, at most a MiB, at up to 2^62 b/s keeps the dividend within 64
 * bits: one machine division instead of a 128-bit one, the same value.) */
static inline fab_time_ps fab_ser_ps(uint64_t bytes, fab_rate_bps rate_bps)
{
	if (bytes <= (1u << 20) && rate_bps <= (1ull << 62))
		return (bytes * 8u * FAB_PS_PER_S + rate_bps / 2) / rate_bps;
	return (fab_time_ps)(((__uint128_t)bytes * 8u * FAB_PS_PER_S + rate_bps / 2) / rate_bps);
}

/* The same at a rate that is not a whole number of bits per second (a
 * congestion control's, a PCIe link's share), rounded to the picosecond. */
static inline fab_time_ps fab_pace_ps(uint32_t bytes, double bps)
{
	return (fab_time_ps)((double)bytes * 8.0 * (double)FAB_PS_PER_S / bps + 0.5);
}

void *fab_xcalloc(size_t n, size_t size); /* aborts on OOM: not user input */
/* the same at an address that is a multiple of align (a power of two, at
 * least a pointer's size: a cache line for an array of hot records); free()
 * frees it */
void *fab_xcalloc_aligned(size_t align, size_t n, size_t size);
/* large blocks mmapped on their own, so they can take huge pages (the CLI
 * calls it first) */
void fab_alloc_tune(void);
/* qsort comparator for doubles, ascending */
int fab_cmp_double(const void *a, const void *b);

/* An invariant, checked in debug builds (FAB_DEBUG: `make asan` defines
 * it) and free in the others. */
#ifdef FAB_DEBUG
#define FAB_ASSERT(cond) assert(cond)
#else
#define FAB_ASSERT(cond) ((void)0)
#endif

/* Called while a simulation runs: simulated time and events so far. */
typedef void (*fab_progress_fn)(void *ctx, fab_time_ps now_ps, uint64_t events);

/* The nearest-rank percentile's index in a sorted array of n > 0 values:
 * the smallest value with at least a fraction q of them at or below it
 * (a millionth of slack absorbs q x n landing a hair above a whole number). */
static inline size_t fab_nearest_rank(size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n + 0.999999);
	return rank < 1 ? 0 : rank > n ? n - 1 : rank - 1;
}
void *fab_xrealloc(void *p, size_t n, size_t size);
char *fab_xstrdup(const char *s);

#define FAB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define FAB_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FAB_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
