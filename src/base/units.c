/*
 * units.c - parse and print quantities as people write them.
 *
 * "400Gbps", "1.5us", "32MiB", "4096".  Numbers are decimal with an optional
 * fraction; the value is computed exactly in 128-bit integers and rounded to
 * the nearest unit (ps, bit/s, byte), so "0.1us" is exactly 100000 ps.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base.h"

struct unit {
	const char *name;
	uint64_t mult;
};

/* a rate's unit: these exactly, or (rate_unit) a prefix k, M, G or T in
 * either case before "bps" or "b/s" (bits) or "Bps" or "B/s" (bytes: x 8):
 * "400gbps" is 400 Gbps, "50GB/s" is 400 Gbps */
static const struct unit rate_units[] = {
	{"G", 1000000000ULL},
	{"M", 1000000ULL},
	{"T", 1000000000000ULL},
};

/* in either case ("US", "Ms" are us and ms); "\xc2\xb5s" is us */
static const struct unit time_units[] = {
	{"ps", 1},
	{"ns", FAB_PS_PER_NS},
	{"\xc2\xb5s", FAB_PS_PER_US}, /* (before us: printing takes the later of two) */
	{"us", FAB_PS_PER_US},
	{"ms", FAB_PS_PER_MS},
	{"s", FAB_PS_PER_S},
};

/* as written, and the binary ones (KiB...) in either case; "kB" is KB.  A
 * lower-case b is a bit: "Mb", "kb" are refused (bytes_unit_hint) */
static const struct unit byte_units[] = {
	{"", 1},
	{"B", 1},
	{"KB", 1000ULL},
	{"kB", 1000ULL},
	{"MB", 1000000ULL},
	{"GB", 1000000000ULL},
	{"TB", 1000000000000ULL},
	{"KiB", 1ULL << 10},
	{"MiB", 1ULL << 20},
	{"GiB", 1ULL << 30},
	{"TiB", 1ULL << 40},
	{"K", 1ULL << 10}, /* nccl-tests' -b 8 -e 128M: binary */
	{"M", 1ULL << 20},
	{"G", 1ULL << 30},
};

/* a prefix letter of a rate, either case: its multiplier, 0 if none */
static uint64_t si_prefix(char c)
{
	switch (c) {
	case 'k':
	case 'K':
		return 1000ULL;
	case 'm':
	case 'M':
		return 1000000ULL;
	case 'g':
	case 'G':
		return 1000000000ULL;
	case 't':
	case 'T':
		return 1000000000000ULL;
	}
	return 0;
}

/* u[0..n) as a rate unit with "bps"/"b/s" (bits) or "Bps"/"B/s" (bytes):
 * bits per second per unit, 0 when it is not one */
static uint64_t rate_unit(const char *u, size_t n)
{
	uint64_t pre = 1;
	if (n == 4) { /* Gbps, Gb/s, GB/s */
		if (!(pre = si_prefix(u[0])))
			return 0;
		u++;
		n--;
	}
	if (n == 3 && (!strncmp(u, "bps", 3) || !strncmp(u, "b/s", 3)))
		return pre;
	if (n == 3 && (!strncmp(u, "Bps", 3) || !strncmp(u, "B/s", 3)))
		return 8 * pre;
	return 0;
}

/* whether unit u[0..n) is un: time units in either case, byte units as
 * written except the binary ones (KiB, MiB, ...) */
static bool unit_is(const struct unit *un, const char *u, size_t n, bool time)
{
	if (strlen(un->name) != n)
		return false;
	if (!strncmp(un->name, u, n))
		return true;
	return (time || strstr(un->name, "iB")) && !strncasecmp(un->name, u, n);
}

static void why_set(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void why_set(char *why, size_t len, const char *fmt, ...)
{
	if (!why || !len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* isspace in the C locale (the only one the program runs in) */
static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Split "12.5Gbps" into mantissa 125, 1 fraction digit, unit "Gbps".  (In
 * 64 bits while it has at most 19 digits: a flow list's hundreds of
 * thousands of numbers.) */
static int split_number(const char *s, __uint128_t *mant, unsigned *frac_digits, const char **unit)
{
	const char *p = s;
	uint64_t m64 = 0;
	__uint128_t m = 0;
	unsigned digits = 0, frac = 0;
	bool dot = false;
	while (is_space(*p))
		p++;
	for (;; p++) {
		if (is_digit(*p)) {
			if (digits >= 30)
				return -1;
			if (digits == 19) /* (on in 128 bits) */
				m = m64;
			if (digits < 19)
				m64 = m64 * 10 + (unsigned)(*p - '0');
			else
				m = m * 10 + (unsigned)(*p - '0');
			digits++;
			if (dot)
				frac++;
		} else if (*p == '.' && !dot) {
			dot = true;
		} else if (*p == '_' && digits) {
			continue; /* 1_000_000 */
		} else {
			break;
		}
	}
	if (!digits)
		return -1;
	while (is_space(*p))
		p++;
	*mant = digits <= 19 ? m64 : m;
	*frac_digits = frac;
	*unit = p;
	return 0;
}

static int parse_with_units(const char *s, const struct unit *units, size_t n, uint64_t *out, bool unitless_zero_ok,
			    bool unitless_ok)
{
	__uint128_t mant;
	unsigned frac;
	const char *u;
	if (split_number(s, &mant, &frac, &u))
		return -1;
	size_t ulen = strlen(u);
	while (ulen && is_space(u[ulen - 1]))
		ulen--;
	uint64_t mult = 0;
	if (ulen == 0) {
		if (unitless_ok || (unitless_zero_ok && mant == 0))
			mult = 1;
		else
			return -2;
	} else {
		if (units == rate_units)
			mult = rate_unit(u, ulen);
		for (size_t i = 0; i < n && !mult; i++)
			if (unit_is(&units[i], u, ulen, units == time_units))
				mult = units[i].mult;
		if (!mult)
			return -3;
	}
	__uint128_t v = mant * mult;
	if (mant >> 64 && mult && v / mult != mant) /* (64 by 64 bits cannot overflow) */
		return -4;
	if (frac) { /* (a flow list's plain numbers skip the 128-bit division) */
		__uint128_t div = 1;
		for (unsigned i = 0; i < frac; i++)
			div *= 10;
		v = (v + div / 2) / div;
	}
	if (v > UINT64_MAX)
		return -4;
	*out = (uint64_t)v;
	return 0;
}

int fab_parse_rate(const char *s, fab_rate_bps *out, char *why, size_t why_len)
{
	int rc = parse_with_units(s, rate_units, FAB_ARRAY_LEN(rate_units), out, true, false);
	if (rc == -4)
		why_set(why, why_len, "rate too large, got \"%s\"", s);
	else if (rc)
		why_set(why, why_len,
			"expected a rate with a unit (bps, Kbps, Mbps, Gbps, Tbps in either case, or bytes a "
			"second: GB/s), got \"%s\"",
			s);
	return rc ? FAB_EINVAL : 0;
}

int fab_parse_time(const char *s, fab_time_ps *out, char *why, size_t why_len)
{
	int rc = parse_with_units(s, time_units, FAB_ARRAY_LEN(time_units), out, true, false);
	if (rc == -4)
		why_set(why, why_len, "time too large, got \"%s\"", s);
	else if (rc)
		why_set(why, why_len, "expected a time with a unit (ps, ns, us, ms, s), got \"%s\"", s);
	return rc ? FAB_EINVAL : 0;
}

int fab_parse_bytes(const char *s, fab_bytes *out, char *why, size_t why_len)
{
	int rc = parse_with_units(s, byte_units, FAB_ARRAY_LEN(byte_units), out, true, true);
	if (rc == -4)
		why_set(why, why_len, "size too large, got \"%s\"", s);
	else if (rc)
		why_set(why, why_len,
			"expected a size in bytes (B, KB, MB, GB decimal; KiB, MiB, GiB binary; a lower-case b "
			"is a bit), got \"%s\"",
			s);
	return rc ? FAB_EINVAL : 0;
}

int fab_parse_uint(const char *s, uint64_t *out, char *why, size_t why_len)
{
	const char *p = s;
	if (!*p || !is_digit(*p))
		goto bad;
	uint64_t fast = 0;
	size_t k = 0;
	for (; k < 19 && p[k] >= '0' && p[k] <= '9'; k++) /* (19 digits cannot overflow) */
		fast = fast * 10 + (uint64_t)(p[k] - '0');
	if (!p[k]) {
		*out = fast;
		return 0;
	}
	errno = 0;
	char *end;
	unsigned long long v = strtoull(p, &end, 10);
	if (errno || *end)
		goto bad;
	*out = v;
	return 0;
bad:
	why_set(why, why_len, "expected a non-negative integer, got \"%s\"", s);
	return FAB_EINVAL;
}

int fab_parse_double(const char *s, double *out, char *why, size_t why_len)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end) {
		/* also accept a fraction such as 1/256 */
		char *slash;
		double num = strtod(s, &slash);
		if (slash != s && *slash == '/') {
			double den = strtod(slash + 1, &end);
			if (end != slash + 1 && !*end && den != 0 && isfinite(num / den)) {
				*out = num / den;
				return 0;
			}
		}
		why_set(why, why_len, "expected a number, got \"%s\"", s);
		return FAB_EINVAL;
	}
	if (!isfinite(v)) { /* "nan", "inf", 1e999 */
		why_set(why, why_len, "expected a finite number, got \"%s\"", s);
		return FAB_EINVAL;
	}
	*out = v;
	return 0;
}

int fab_parse_ratio(const char *s, uint32_t *num, uint32_t *den, char *why, size_t why_len)
{
	unsigned long a, b;
	char extra;
	if (sscanf(s, "%lu:%lu%c", &a, &b, &extra) != 2 || !a || !b || a > 1000 || b > 1000) {
		why_set(why, why_len, "expected a ratio such as 2:1, got \"%s\"", s);
		return FAB_EINVAL;
	}
	*num = (uint32_t)a;
	*den = (uint32_t)b;
	return 0;
}

int fab_parse_bool(const char *s, bool *out, char *why, size_t why_len)
{
	static const char *yes[] = {"true", "yes", "on", "1"};
	static const char *no[] = {"false", "no", "off", "0"};
	for (size_t i = 0; i < FAB_ARRAY_LEN(yes); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	why_set(why, why_len, "expected true or false, got \"%s\"", s);
	return FAB_EINVAL;
}

/* Largest unit that shows v exactly with at most 3 decimals. */
static char *fmt_units(uint64_t v, const struct unit *units, size_t n, char *buf, size_t len)
{
	if (v == 0) {
		snprintf(buf, len, "0%s", units[0].name);
		return buf;
	}
	for (size_t i = n; i-- > 0;) {
		uint64_t m = units[i].mult;
		if (v < m)
			continue;
		uint64_t milli = m >= 1000 ? m / 1000 : 0;
		if (m == 1 || v % m == 0) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(v / m), units[i].name);
			return buf;
		}
		if (milli && v % milli == 0) {
			uint64_t whole = v / m, rest = (v % m) / milli;
			char frac[24];
			snprintf(frac, sizeof frac, "%03llu", (unsigned long long)rest);
			for (int k = 2; k > 0 && frac[k] == '0'; k--)
				frac[k] = 0;
			snprintf(buf, len, "%llu.%s%s", (unsigned long long)whole, frac, units[i].name);
			return buf;
		}
	}
	snprintf(buf, len, "%llu%s", (unsigned long long)v, units[0].name);
	return buf;
}

char *fab_fmt_rate(fab_rate_bps v, char *buf, size_t len)
{
	static const struct unit u[] = {{"bps", 1},
					{"Kbps", 1000ULL},
					{"Mbps", 1000000ULL},
					{"Gbps", 1000000000ULL},
					{"Tbps", 1000000000000ULL}};
	return fmt_units(v, u, FAB_ARRAY_LEN(u), buf, len);
}

char *fab_fmt_time(fab_time_ps v, char *buf, size_t len)
{
	return fmt_units(v, time_units, FAB_ARRAY_LEN(time_units), buf, len);
}

char *fab_fmt_bytes(fab_bytes v, char *buf, size_t len)
{
	static const struct unit u[] = {
		{"B", 1}, {"KiB", 1ULL << 10}, {"MiB", 1ULL << 20}, {"GiB", 1ULL << 30}, {"TiB", 1ULL << 40}};
	if (v % 1024 && v > 1024) {
		/* not a binary multiple: decimal units read better */
		static const struct unit d[] = {{"B", 1}, {"KB", 1000ULL}, {"MB", 1000000ULL}, {"GB", 1000000000ULL}};
		return fmt_units(v, d, FAB_ARRAY_LEN(d), buf, len);
	}
	return fmt_units(v, u, FAB_ARRAY_LEN(u), buf, len);
}
