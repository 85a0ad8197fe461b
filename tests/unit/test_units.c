/* Units: parsing as people write them, and printing back. */
#include "testutil.h"
#include "../../src/base/dec.h"

static void test_units_rates(void **state)
{
	(void)state;
	fab_rate_bps r;
	assert_int_equal(fab_parse_rate("400Gbps", &r, NULL, 0), 0);
	assert_int_equal(r, 400000000000ULL);
	assert_int_equal(fab_parse_rate("12.5Gbps", &r, NULL, 0), 0);
	assert_int_equal(r, 12500000000ULL);
	assert_int_equal(fab_parse_rate("100 Mbps", &r, NULL, 0), 0);
	assert_int_equal(r, 100000000ULL);
	assert_int_equal(fab_parse_rate("0", &r, NULL, 0), 0);
	assert_int_equal(r, 0);
	char why[128];
	assert_int_equal(fab_parse_rate("400", &r, why, sizeof why), FAB_EINVAL);
	assert_non_null(strstr(why, "expected a rate"));
	assert_int_equal(fab_parse_rate("fast", &r, NULL, 0), FAB_EINVAL);
	assert_int_equal(fab_parse_rate("4Gbit", &r, NULL, 0), FAB_EINVAL);
}

/* units in either case where that is unambiguous: a rate's prefix (no one
 * means millibits), time units; a capital B is a byte, a small b a bit */
static void test_units_cases(void **state)
{
	(void)state;
	fab_rate_bps r;
	const struct {
		const char *s;
		uint64_t v;
	} rates[] = {{"400gbps", 400000000000ULL},
		     {"400GBPs", 0},
		     {"50GB/s", 400000000000ULL},
		     {"50GBps", 400000000000ULL},
		     {"1.5tb/s", 1500000000000ULL},
		     {"100mbps", 100000000ULL},
		     {"10kBps", 80000ULL},
		     {"400GBPS", 0},
		     {"8bps", 8},
		     {"1B/s", 8},
		     {"400xbps", 0}};
	for (size_t i = 0; i < FAB_ARRAY_LEN(rates); i++) {
		int rc = fab_parse_rate(rates[i].s, &r, NULL, 0);
		assert_int_equal(rc, rates[i].v ? 0 : FAB_EINVAL);
		if (rates[i].v)
			assert_int_equal(r, rates[i].v);
	}
	fab_time_ps t;
	assert_int_equal(fab_parse_time("5US", &t, NULL, 0), 0);
	assert_int_equal(t, 5000000);
	assert_int_equal(fab_parse_time("2Ms", &t, NULL, 0), 0); /* no megaseconds: milliseconds */
	assert_int_equal(t, 2000000000ULL);
	assert_int_equal(fab_parse_time("3\xc2\xb5s", &t, NULL, 0), 0);
	assert_int_equal(t, 3000000);
	fab_bytes b;
	assert_int_equal(fab_parse_bytes("32mib", &b, NULL, 0), 0);
	assert_int_equal(b, 32ULL << 20);
	assert_int_equal(fab_parse_bytes("4KIB", &b, NULL, 0), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(fab_parse_bytes("2kB", &b, NULL, 0), 0);
	assert_int_equal(b, 2000);
	char why[200];
	assert_int_equal(fab_parse_bytes("32mb", &b, why, sizeof why), FAB_EINVAL); /* megabits? */
	assert_non_null(strstr(why, "a lower-case b is a bit"));
	assert_int_equal(fab_parse_bytes("32Mb", &b, NULL, 0), FAB_EINVAL);
	assert_int_equal(fab_parse_bytes("1b", &b, NULL, 0), FAB_EINVAL);
}

static void test_units_times(void **state)
{
	(void)state;
	fab_time_ps t;
	assert_int_equal(fab_parse_time("1us", &t, NULL, 0), 0);
	assert_int_equal(t, 1000000);
	assert_int_equal(fab_parse_time("0.1us", &t, NULL, 0), 0);
	assert_int_equal(t, 100000); /* exact, no binary rounding */
	assert_int_equal(fab_parse_time("1.5ms", &t, NULL, 0), 0);
	assert_int_equal(t, 1500000000ULL);
	assert_int_equal(fab_parse_time("2s", &t, NULL, 0), 0);
	assert_int_equal(t, 2000000000000ULL);
	assert_int_equal(fab_parse_time("5", &t, NULL, 0), FAB_EINVAL);
	assert_int_equal(fab_parse_time("-1us", &t, NULL, 0), FAB_EINVAL);
	assert_int_equal(fab_parse_time("99999999999999s", &t, NULL, 0), FAB_EINVAL);
	/* 19 digits and more: past what 64 bits hold of the mantissa, but
	 * not of the value */
	static const struct {
		const char *s;
		fab_time_ps want;
	} long_ones[] = {
		{"1234567890123456789ps", 1234567890123456789ULL},
		{"12345678901234567890ps", 12345678901234567890ULL},
		{"1.00000000000000000000000us", 1000000},
		{"0.0000000000000000000000015s", 0},
		{" \t12 ns \r", 12000},
	};
	for (size_t i = 0; i < FAB_ARRAY_LEN(long_ones); i++) {
		assert_int_equal(fab_parse_time(long_ones[i].s, &t, NULL, 0), 0);
		assert_int_equal(t, long_ones[i].want);
	}
	assert_int_equal(fab_parse_time("18446744073709551616ps", &t, NULL, 0), FAB_EINVAL);
}

static void test_units_bytes(void **state)
{
	(void)state;
	fab_bytes b;
	assert_int_equal(fab_parse_bytes("32MiB", &b, NULL, 0), 0);
	assert_int_equal(b, 32u << 20);
	assert_int_equal(fab_parse_bytes("10MB", &b, NULL, 0), 0);
	assert_int_equal(b, 10000000);
	assert_int_equal(fab_parse_bytes("4096", &b, NULL, 0), 0);
	assert_int_equal(b, 4096);
	assert_int_equal(fab_parse_bytes("1.5KiB", &b, NULL, 0), 0);
	assert_int_equal(b, 1536);
	assert_int_equal(fab_parse_bytes("1 GiB", &b, NULL, 0), 0);
	assert_int_equal(b, 1ull << 30);
	assert_int_equal(fab_parse_bytes("lots", &b, NULL, 0), FAB_EINVAL);
	assert_int_equal(fab_parse_bytes("3XB", &b, NULL, 0), FAB_EINVAL);
}

static void test_units_format_round_trip(void **state)
{
	(void)state;
	char buf[64];
	assert_string_equal(fab_fmt_rate(400000000000ULL, buf, sizeof buf), "400Gbps");
	assert_string_equal(fab_fmt_rate(12500000000ULL, buf, sizeof buf), "12.5Gbps");
	assert_string_equal(fab_fmt_time(1500000, buf, sizeof buf), "1.5us");
	assert_string_equal(fab_fmt_time(55000000, buf, sizeof buf), "55us");
	assert_string_equal(fab_fmt_bytes(32u << 20, buf, sizeof buf), "32MiB");
	assert_string_equal(fab_fmt_bytes(10000000, buf, sizeof buf), "10MB");
	/* what is printed parses back to the same value */
	const uint64_t times[] = {1, 999, 1000, 123456, 1000000, 2500000000ULL, 77777777777ULL};
	for (size_t i = 0; i < FAB_ARRAY_LEN(times); i++) {
		fab_time_ps back;
		assert_int_equal(fab_parse_time(fab_fmt_time(times[i], buf, sizeof buf), &back, NULL, 0), 0);
		assert_int_equal(back, times[i]);
	}
	const uint64_t sizes[] = {1, 1000, 1024, 1536, 4178, 10000000, 1ull << 30, 123456789};
	for (size_t i = 0; i < FAB_ARRAY_LEN(sizes); i++) {
		fab_bytes back;
		assert_int_equal(fab_parse_bytes(fab_fmt_bytes(sizes[i], buf, sizeof buf), &back, NULL, 0), 0);
		assert_int_equal(back, sizes[i]);
	}
}

static void test_units_serialisation_time(void **state)
{
	(void)state;
	/* a 4178-byte wire frame at 400 Gbps takes 83.56 ns */
	assert_int_equal(fab_ser_ps(4178, 400000000000ULL), 83560);
	/* 64 bytes at 100 Gbps: 5.12 ns */
	assert_int_equal(fab_ser_ps(64, 100000000000ULL), 5120);
	/* the 64-bit division against the 128-bit one: each side of its
	 * limits (a MiB, 2^62 b/s), odd rates whose halves round, and a
	 * spread of frames and rates (a 64-bit generator: no seed to share) */
	static const uint64_t bytes[] = {0,         1, 60, 1048, 4178, 65555, (1u << 20) - 1, 1u << 20, (1u << 20) + 1,
					 1ull << 40};
	static const uint64_t rates[] = {1,
					 3,
					 1000000007ull,
					 100000000000ull,
					 400000000000ull,
					 1600000000001ull,
					 (1ull << 62) - 1,
					 1ull << 62,
					 (1ull << 62) + 1,
					 UINT64_MAX / 9};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int k = 0; k < 10000 + 100; k++) {
		uint64_t b, r;
		if (k < 100) {
			b = bytes[k / 10];
			r = rates[k % 10];
		} else {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			b = (x >> 8) % (3u << 20);
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			r = 1 + x % (1ull << (1 + x % 63));
		}
		uint64_t want = (uint64_t)(((__uint128_t)b * 8u * FAB_PS_PER_S + r / 2) / r);
		assert_int_equal(fab_ser_ps(b, r), want);
	}
}

/* integers in decimal as printf's "%llu" writes them: every length, each
 * side of every power of ten and of the 8-digit groups, and the fixed-point
 * group of eight digits against the division on a million values spread
 * over all of [0, 1e8) (every one of them was checked once) */
static void test_units_decimal(void **state)
{
	(void)state;
	char buf[32], want[32];
	uint64_t v[80];
	size_t n = 0;
	for (uint64_t p = 1; n < 60; p *= 10) {
		v[n++] = p - 1;
		v[n++] = p;
		v[n++] = p + 1;
		if (p > UINT64_MAX / 10)
			break;
	}
	v[n++] = UINT64_MAX;
	v[n++] = UINT64_MAX - 1;
	v[n++] = 1234567890123456789ull;
	v[n++] = 100000000ull * 100000000ull - 1;
	for (size_t i = 0; i < n; i++) {
		char *p = fab_dec_u64(buf + sizeof buf, v[i]);
		snprintf(want, sizeof want, "%llu", (unsigned long long)v[i]);
		assert_int_equal(buf + sizeof buf - p, strlen(want));
		assert_int_equal(fab_dec_len(v[i]), strlen(want));
		assert_memory_equal(p, want, strlen(want));
	}
	uint64_t x = 88172645463325252ull; /* (xorshift) */
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t u = x >> (i % 64);
		char *p = fab_dec_u64(buf + sizeof buf, u);
		snprintf(want, sizeof want, "%llu", (unsigned long long)u);
		assert_int_equal(buf + sizeof buf - p, strlen(want));
		assert_int_equal(fab_dec_len(u), strlen(want));
		assert_memory_equal(p, want, strlen(want));
	}
	for (uint32_t u = 0; u < 100000000; u += 97) {
		fab_dec8(buf, u);
		uint32_t w = u;
		for (int k = 7; k >= 0; k--, w /= 10)
			if (buf[k] != '0' + (int)(w % 10))
				fail_msg("%u: %.8s", u, buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units_rates),
		cmocka_unit_test(test_units_cases),
		cmocka_unit_test(test_units_times),
		cmocka_unit_test(test_units_bytes),
		cmocka_unit_test(test_units_format_round_trip),
		cmocka_unit_test(test_units_serialisation_time),
		cmocka_unit_test(test_units_decimal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
