/*
 * test_probe.c - the probe's pieces that need no network: the job token
 * (where it comes from, that it is never zero and that every byte of the
 * secret moves it), Slurm node lists, host names; and the ranks' exchange
 * over a socket pair, with a peer that sends what it should, a message out
 * of step, one too long, nothing, or hangs up.
 */
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"

#include "../../src/probe/probe_int.h"

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
	char why[200];
	assert_string_equal(fab_probe_env(&p, why, sizeof why), "srun (Slurm)");
	assert_int_equal(p.rank, 3);
	assert_int_equal(p.nranks, 8);
	assert_string_equal(p.master, "dgx017");
	assert_int_equal(p.master_port, 20000 + (1000 * 16 + 2) % 20000);
	/* MASTER_ADDR and MASTER_PORT win */
	setenv("MASTER_ADDR", "10.0.0.1", 1);
	setenv("MASTER_PORT", "29500", 1);
	struct fab_probe_params q = {0};
	fab_probe_env(&q, why, sizeof why);
	assert_string_equal(q.master, "10.0.0.1");
	assert_int_equal(q.master_port, 29500);
	/* a rank or size that is not a number in range is refused by name (a
	 * rank "abc" was rank 0, a size "1e9" was 1) */
	const char *bad[][3] = {{"abc", "8", "SLURM_PROCID=\"abc\": expected a rank from 0 to 7"},
				{"8", "8", "SLURM_PROCID=\"8\": expected a rank from 0 to 7"},
				{"0", "1e9", "SLURM_NTASKS=\"1e9\": expected a number of ranks from 1 to 65536"},
				{"0", "-1", "SLURM_NTASKS=\"-1\""},
				{"0", "0", "SLURM_NTASKS=\"0\""},
				{"0", "1000000000", "SLURM_NTASKS=\"1000000000\""}};
	for (size_t i = 0; i < FAB_ARRAY_LEN(bad); i++) {
		struct fab_probe_params b = {0};
		setenv("SLURM_PROCID", bad[i][0], 1);
		setenv("SLURM_NTASKS", bad[i][1], 1);
		assert_null(fab_probe_env(&b, why, sizeof why));
		assert_non_null(strstr(why, bad[i][2]));
	}
	unsetenv("SLURM_NTASKS");
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

/* rank 0 of 2, whose data connection to rank 1 is a socket pair: the test
 * writes rank 1's bytes (raw) to the other end, then maybe closes it */
struct pair {
	struct fab_probe *pr;
	int peer;
};

static struct pair pair_open(double timeout_s)
{
	struct fab_probe_params p = {.nranks = 2, .rank = 0, .conns = 1, .timeout_s = timeout_s};
	p.token[0] = 1;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	struct pair pp = {pr_alloc(&p), sv[1]};
	C(pp.pr, 1, 1)->fd = sv[0];
	pr_tune(sv[0], true);
	return pp;
}

static void peer_sends(int fd, uint32_t tag, uint32_t len, const char *body)
{
	uint32_t h[2] = {tag, len};
	assert_int_equal(write(fd, h, 8), 8);
	if (body)
		assert_int_equal(write(fd, body, strlen(body)), (ssize_t)strlen(body));
}

static int exchange(struct pair *pp, uint32_t tag, size_t max, struct fab_probe_msg *in, struct fab_err *err)
{
	uint8_t mine[] = "rank 0 to rank 1";
	struct fab_probe_msg out[2] = {{NULL, 0}, {mine, sizeof mine}};
	return fab_probe_exchange(pp->pr, tag, out, in, max, err);
}

static void test_exchange(void **state)
{
	(void)state;
	struct fab_err err = {0};
	struct fab_probe_msg in[2];
	/* in step: both messages whole, the other side gets header and bytes */
	struct pair pp = pair_open(5);
	peer_sends(pp.peer, 7, 5, "hello");
	assert_int_equal(exchange(&pp, 7, 100, in, &err), 0);
	assert_int_equal(in[1].len, 5);
	assert_memory_equal(in[1].data, "hello", 5);
	assert_int_equal(in[0].len, 0);
	uint32_t h[2];
	char body[32];
	assert_int_equal(read(pp.peer, h, 8), 8);
	assert_int_equal(h[0], 7);
	assert_int_equal(h[1], 17);
	assert_int_equal(read(pp.peer, body, sizeof body), 17);
	assert_string_equal(body, "rank 0 to rank 1");
	free(in[1].data);
	/* the next exchange's tag from the previous one: out of step */
	peer_sends(pp.peer, 7, 0, NULL);
	assert_int_equal(exchange(&pp, 8, 100, in, &err), -1);
	assert_non_null(strstr(err.msg, "out of step (tag 7, 0 bytes; expected tag 8"));
	assert_null(in[1].data);
	fab_probe_close(pp.pr);
	close(pp.peer);
	/* longer than the limit: refused before anything is allocated */
	pp = pair_open(5);
	peer_sends(pp.peer, 1, 4000000000u, NULL);
	err = (struct fab_err){0};
	assert_int_equal(exchange(&pp, 1, 1 << 20, in, &err), -1);
	assert_non_null(strstr(err.msg, "at most 1048576 bytes"));
	fab_probe_close(pp.pr);
	close(pp.peer);
	/* half a message, then the peer hangs up */
	pp = pair_open(5);
	peer_sends(pp.peer, 1, 10, "abc");
	close(pp.peer);
	err = (struct fab_err){0};
	assert_int_equal(exchange(&pp, 1, 100, in, &err), -1);
	assert_non_null(strstr(err.msg, "the connection to rank1")); /* closed, or broke as this side wrote */
	fab_probe_close(pp.pr);
	/* silent: the timeout, naming the rank */
	pp = pair_open(0.2);
	err = (struct fab_err){0};
	assert_int_equal(exchange(&pp, 1, 100, in, &err), -1);
	assert_non_null(strstr(err.msg, "nothing from rank1"));
	fab_probe_close(pp.pr);
	close(pp.peer);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slurm_first_host), cmocka_unit_test(test_token),
		cmocka_unit_test(test_slurm_env),        cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_exchange),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
