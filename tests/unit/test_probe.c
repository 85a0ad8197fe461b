/*
 * test_probe.c - the probe's pieces that need no network: the job token
 * (where it comes from, that it is never zero and that every byte of the
 * secret moves it), Slurm node lists, host names.
 */
#include <arpa/inet.h>

#include "testutil.h"

#include "../../src/probe/probe.h"

static void test_slurm_first_host(void **state)
{
	(void)state;
	char h[64];
	static const char *cases[][2] = {
		{"node01", "node01"},   {"node[07-09,12],login1", "node07"},
		{"gpu[003]", "gpu003"}, {"rack[1-2]-n[5-6]", "rack1-n5"},
		{"a,b,c", "a"},         {"x[10,2-3]y", "x10y"},
	};
	for (size_t i = 0; i < FAB_ARRAY_LEN(cases); i++) {
		assert_int_equal(fab_slurm_first_host(cases[i][0], h, sizeof h), 0);
		assert_string_equal(h, cases[i][1]);
	}
	static const char *bad[] = {"", ",a", "[1-2]", "n[", "n[x]", "n]", "n[-1]"};
	for (size_t i = 0; i < FAB_ARRAY_LEN(bad); i++)
		assert_int_equal(fab_slurm_first_host(bad[i], h, sizeof h), -1);
	/* a name that does not fit */
	char small[5];
	assert_int_equal(fab_slurm_first_host("node[01]", small, sizeof small), -1);
}

static void test_token(void **state)
{
	(void)state;
	uint8_t a[FAB_PROBE_TOKEN_BYTES], b[FAB_PROBE_TOKEN_BYTES], zero[FAB_PROBE_TOKEN_BYTES] = {0};
	fab_probe_token_of("", a);
	assert_memory_not_equal(a, zero, sizeof a);
	/* one character more, one flipped bit: both halves change */
	fab_probe_token_of("secret-1", a);
	fab_probe_token_of("secret-0", b);
	assert_memory_not_equal(a, b, 8);
	assert_memory_not_equal(a + 8, b + 8, 8);
	fab_probe_token_of("secret-1", b);
	assert_memory_equal(a, b, sizeof a);

	struct fab_probe_params p = {0};
	const char *src;
	char why[320];
	unsetenv("FABSCOPE_TOKEN");
	unsetenv("PMIX_NAMESPACE");
	unsetenv("OMPI_MCA_ess_base_jobid");
	unsetenv("TORCHELASTIC_RUN_ID");
	unsetenv("SLURM_JOB_ID");
	assert_int_equal(fab_probe_env_token(&p, &src, why, sizeof why), -1);
	assert_non_null(strstr(why, "no job token"));
	setenv("SLURM_JOB_ID", "4242", 1);
	setenv("SLURM_STEP_ID", "0", 1);
	assert_int_equal(fab_probe_env_token(&p, &src, why, sizeof why), 0);
	assert_string_equal(src, "SLURM_JOB_ID");
	memcpy(a, p.token, sizeof a);
	setenv("SLURM_STEP_ID", "1", 1); /* another step, another token */
	assert_int_equal(fab_probe_env_token(&p, &src, why, sizeof why), 0);
	assert_memory_not_equal(a, p.token, sizeof a);
	setenv("FABSCOPE_TOKEN", "short", 1); /* the user's wins, and must be long enough */
	assert_int_equal(fab_probe_env_token(&p, &src, why, sizeof why), -1);
	setenv("FABSCOPE_TOKEN", "long-enough-secret", 1);
	assert_int_equal(fab_probe_env_token(&p, &src, why, sizeof why), 0);
	assert_string_equal(src, "FABSCOPE_TOKEN");
	fab_probe_token_of("long-enough-secret", a);
	assert_memory_equal(a, p.token, sizeof a);
	unsetenv("FABSCOPE_TOKEN");
	unsetenv("SLURM_JOB_ID");
	unsetenv("SLURM_STEP_ID");
}

static void test_slurm_env(void **state)
{
	(void)state;
	struct fab_probe_params p = {0};
	unsetenv("MASTER_ADDR");
	unsetenv("MASTER_PORT");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("PMI_RANK");
	setenv("SLURM_PROCID", "3", 1);
	setenv("SLURM_NTASKS", "8", 1);
	setenv("SLURM_JOB_ID", "1000", 1);
	setenv("SLURM_STEP_ID", "2", 1);
	setenv("SLURM_STEP_NODELIST", "dgx[017-018]", 1);
	setenv("SLURM_NODELIST", "dgx[001-100]", 1);
	assert_string_equal(fab_probe_env(&p), "srun (Slurm)");
	assert_int_equal(p.rank, 3);
	assert_int_equal(p.nranks, 8);
	assert_string_equal(p.master, "dgx017");
	assert_int_equal(p.master_port, 20000 + (1000 * 16 + 2) % 20000);
	/* MASTER_ADDR and MASTER_PORT win */
	setenv("MASTER_ADDR", "10.0.0.1", 1);
	setenv("MASTER_PORT", "29500", 1);
	struct fab_probe_params q = {0};
	fab_probe_env(&q);
	assert_string_equal(q.master, "10.0.0.1");
	assert_int_equal(q.master_port, 29500);
	unsetenv("SLURM_PROCID");
	unsetenv("MASTER_ADDR");
	unsetenv("MASTER_PORT");
}

static void test_resolve(void **state)
{
	(void)state;
	struct fab_ip ip;
	char why[200], buf[64];
	assert_int_equal(fab_probe_resolve_host("127.0.0.1", 0, &ip, why, sizeof why), 0);
	assert_int_equal(ip.family, 4);
	assert_string_equal(fab_ip_str(&ip, buf, sizeof buf), "127.0.0.1");
	assert_int_equal(fab_probe_resolve_host("localhost", 4, &ip, why, sizeof why), 0);
	assert_int_equal(ip.family, 4);
	assert_int_equal(ip.a[0], 127);
	/* IPv6, bare and in brackets */
	assert_int_equal(fab_probe_resolve_host("::1", 0, &ip, why, sizeof why), 0);
	assert_int_equal(ip.family, 6);
	assert_string_equal(fab_ip_str(&ip, buf, sizeof buf), "::1");
	assert_int_equal(fab_probe_resolve_host("[fd00::2]", 0, &ip, why, sizeof why), 0);
	assert_string_equal(fab_ip_str(&ip, buf, sizeof buf), "fd00::2");
	/* a family asked for and not there */
	assert_int_equal(fab_probe_resolve_host("::1", 4, &ip, why, sizeof why), -1);
	assert_int_equal(fab_probe_resolve_host("", 0, &ip, why, sizeof why), -1);
	assert_non_null(strstr(why, "cannot resolve"));
	/* --bind: addresses of both families, an interface, neither */
	assert_int_equal(fab_probe_resolve_bind("10.1.2.3", &ip), 0);
	assert_int_equal(ip.family, 4);
	assert_int_equal(fab_probe_resolve_bind("fd00::7", &ip), 0);
	assert_int_equal(ip.family, 6);
	assert_int_equal(fab_probe_resolve_bind("lo", &ip), 0);
	assert_string_equal(fab_ip_str(&ip, buf, sizeof buf), "127.0.0.1");
	assert_int_equal(fab_probe_resolve_bind("nosuch0", &ip), -1);
	struct fab_ip none = {0, {0}};
	assert_string_equal(fab_ip_str(&none, buf, sizeof buf), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slurm_first_host),
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_slurm_env),
		cmocka_unit_test(test_resolve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
