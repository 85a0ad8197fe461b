/* Datacenter workloads: the flow-size CDFs, the Poisson generator (counts,
 * sizes, load, gaps, destinations, incast events) against its definition,
 * and HPCC's ns-3 topology and flow files. */
#include <math.h>
#include <unistd.h>

#include "../../src/sim/engine.h"
#include "../../src/work/cdf.h"
#include "testutil.h"

static char dir[64];

static const char *write_file(const char *name, const char *text)
{
	static char path[8][128];
	static int k;
	char *p = path[k++ % 8];
	snprintf(p, 128, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static struct fab_run *build(const char *yaml, struct fab_config **cfg, struct fab_err *err)
{
	*cfg = fab_config_parse(yaml, strlen(yaml), "test.yaml", NULL, NULL, 0, err);
	if (!*cfg)
		return NULL;
	return fab_run_new(*cfg, err);
}

/* The built-in distributions as published with HPCC's generator: the mean
 * of the piecewise-linear CDF, worked by hand from the published points
 * (WebSearch 1,711,250 B; FB_Hadoop 120,420.75 B), and percentiles at and
 * between points. */
static void test_workload_builtin_cdfs(void **state)
{
	(void)state;
	struct fab_cdf ws, fb;
	struct fab_err err = {0};
	assert_int_equal(fab_cdf_load(&ws, "websearch", &err), 0);
	assert_int_equal(fab_cdf_load(&fb, "fb_hadoop", &err), 0);
	assert_true(fabs(fab_cdf_mean(&ws) - 1711250.0) < 1e-6);
	assert_true(fabs(fab_cdf_mean(&fb) - 120420.75) < 1e-6);
	assert_true(fab_cdf_at(&ws, 53) == 80000);
	assert_true(fab_cdf_at(&ws, 56.5) == 140000); /* halfway from 80 KB at 53 % to 200 KB at 60 % */
	assert_true(fab_cdf_at(&fb, 50) == 700);
	assert_true(fab_cdf_at(&fb, 100) == 10000000);
	fab_cdf_free(&ws);
	fab_cdf_free(&fb);
}

/* A CDF file: read, and refused with file:line:col when it is not one. */
static void test_workload_cdf_file(void **state)
{
	(void)state;
	struct fab_cdf c;
	struct fab_err err = {0};
	const char *ok = write_file("ok.cdf", "# uniform 1-3 KB\n1000 0\n3000 100\n");
	assert_int_equal(fab_cdf_load(&c, ok, &err), 0);
	assert_true(fab_cdf_mean(&c) == 2000);
	assert_string_equal(c.name, "ok.cdf");
	fab_cdf_free(&c);
	const struct {
		const char *text, *want;
	} bad[] = {
		{"0 0\n500 50\n400 100\n", ":3:5: expected sizes and percents that increase"},
		{"0 5\n100 100\n", ":1:3: expected the first point at 0 percent"},
		{"0 0\n100 90\n", ": a distribution needs at least two points, the last at 100 percent"},
		{"0 0\n100 x\n", ":2:5: percent: "},
		{"0 0 100 100\n", ":1:5: expected one 'SIZE PERCENT' pair per line"},
		{"0 0\n100\n", ": a size without its percent"},
	};
	for (size_t i = 0; i < FAB_ARRAY_LEN(bad); i++) {
		const char *p = write_file("bad.cdf", bad[i].text);
		memset(&err, 0, sizeof err);
		assert_int_not_equal(fab_cdf_load(&c, p, &err), 0);
		if (!strstr(err.msg, bad[i].want) || strncmp(err.msg, p, strlen(p)))
			fail_msg("case %zu: want \"%s\", got \"%s\"", i, bad[i].want, err.msg);
	}
}

/*
 * The generator against its definition, on 16 hosts at 100 Gbps, load 0.5
 * for 1 ms, sizes uniform on 1-3 KB (mean 2000 B): each host starts flows
 * at exponential gaps of 2000 x 8 / 50 Gbps = 320 ns, 3125 expected per
 * host, 50,000 in all (a Poisson count: sd 224).  Checked: the count
 * within 4 sd, the mean size within 4 sd (sd of the mean 2.6 B), the
 * offered load within 2 %, the gaps' coefficient of variation within 3 % of
 * an exponential's 1, every destination another host and each host
 * receiving its 1/15 share of every sender's flows within 10 %, starts
 * in [start, start + duration) and in order.
 */
static void test_workload_poisson_against_definition(void **state)
{
	(void)state;
	char yaml[512];
	snprintf(yaml, sizeof yaml,
		 "topology: {kind: fat-tree, k: 4, gpus_per_server: 1, nics_per_server: 1, host_rate: 100Gbps}\n"
		 "traffic:\n  generators:\n"
		 "    - {kind: poisson, cdf: %s, load: 0.5, duration: 1ms, start: 10us}\n",
		 write_file("u.cdf", "1000 0\n3000 100\n"));
	struct fab_config *cfg;
	struct fab_err err = {0};
	struct fab_run *r = build(yaml, &cfg, &err);
	if (!r)
		fail_msg("%s", err.msg);
	size_t n;
	const struct fab_sim_flow *fl = fab_sim_flows(r->sim, &n);
	print_message("%zu flows (50,000 expected)\n", n);
	assert_true(fabs((double)n - 50000) < 4 * sqrt(50000));
	double sum = 0, gsum = 0, gsq = 0;
	size_t ng = 0;
	uint64_t recv[16] = {0};
	fab_time_ps last[16], prev = 0;
	for (int h = 0; h < 16; h++)
		last[h] = FAB_TIME_NEVER;
	for (size_t i = 0; i < n; i++) {
		assert_true(fl[i].bytes >= 1000 && fl[i].bytes <= 3000);
		assert_true(fl[i].src_gpu != fl[i].dst_gpu);
		assert_true(fl[i].start_ps >= 10 * FAB_PS_PER_US && fl[i].start_ps < 1010 * FAB_PS_PER_US);
		assert_true(fl[i].start_ps >= prev);
		prev = fl[i].start_ps;
		sum += (double)fl[i].bytes;
		recv[fl[i].dst_gpu]++;
		if (last[fl[i].src_gpu] != FAB_TIME_NEVER) {
			double g = (double)(fl[i].start_ps - last[fl[i].src_gpu]);
			gsum += g;
			gsq += g * g;
			ng++;
		}
		last[fl[i].src_gpu] = fl[i].start_ps;
	}
	double mean = sum / (double)n, gm = gsum / (double)ng, cv = sqrt(gsq / (double)ng - gm * gm) / gm;
	double load = sum * 8 / 1e-3 / (16 * 100e9);
	print_message("mean size %.1f B, load %.4f, gap mean %.1f ns, cv %.4f\n", mean, load, gm / 1e3, cv);
	assert_true(fabs(mean - 2000) < 4 * 2.6);
	assert_true(rel_err(load, 0.5) < 0.02);
	assert_true(rel_err(gm, 320e3) < 0.02);
	assert_true(fabs(cv - 1) < 0.03);
	for (int h = 0; h < 16; h++)
		assert_true(rel_err((double)recv[h], (double)n / 16) < 0.1);
	fab_run_free(r);
	fab_config_free(cfg);
}

/* FB_Hadoop sizes: the median drawn is the CDF's 700 B; incast events at
 * 2 % of 16 x 100 Gbps with 4 senders x 1 MB arrive every 4 x 8 Mbit / 32
 * Gbps = 1 ms: about 20 in 20 ms, each 4 distinct senders on other servers
 * to one GPU at one instant. */
static void test_workload_poisson_sizes_and_incast(void **state)
{
	(void)state;
	const char *yaml = "topology: {kind: fat-tree, k: 4, gpus_per_server: 1, nics_per_server: 1, host_rate: "
			   "100Gbps}\n"
			   "traffic:\n  generators:\n"
			   "    - {kind: poisson, cdf: fb_hadoop, load: 0.3, duration: 20ms, incast_load: 0.02,\n"
			   "       incast_senders: 4, incast_bytes: 1MB}\n";
	struct fab_config *cfg;
	struct fab_err err = {0};
	struct fab_run *r = build(yaml, &cfg, &err);
	if (!r)
		fail_msg("%s", err.msg);
	size_t n;
	const struct fab_sim_flow *fl = fab_sim_flows(r->sim, &n);
	uint64_t *sz = calloc(n, sizeof *sz);
	size_t m = 0, events = 0;
	for (size_t i = 0; i < n; i++) {
		if (fl[i].bytes != 1000000) {
			sz[m++] = fl[i].bytes;
			continue;
		}
		/* an incast event: 4 flows, one start, one receiver, 4 senders */
		assert_true(i + 4 <= n);
		for (size_t k = i; k < i + 4; k++) {
			assert_int_equal(fl[k].bytes, 1000000);
			assert_int_equal(fl[k].start_ps, fl[i].start_ps);
			assert_int_equal(fl[k].dst_gpu, fl[i].dst_gpu);
			assert_true(fl[k].src_nic != fl[k].dst_nic);
			if (k > i)
				assert_true(fl[k].src_gpu > fl[k - 1].src_gpu);
		}
		events++;
		i += 3;
	}
	size_t below = 0;
	for (size_t i = 0; i < m; i++)
		below += sz[i] <= 700;
	double frac = (double)below / (double)m;
	print_message("%zu background flows, %.4f at or below 700 B; %zu incast events\n", m, frac, events);
	/* a binomial proportion over some 10,000 flows: sd 0.005 */
	assert_true(fabs(frac - 0.5) < 0.02);
	assert_true(events >= 8 && events <= 35); /* Poisson, mean 20: outside is below 1e-3 */
	free(sz);
	fab_run_free(r);
	fab_config_free(cfg);
}

/* One seed gives one flow list; another seed another. */
static void test_workload_poisson_deterministic(void **state)
{
	(void)state;
	const char *yaml = "topology: {kind: fat-tree, k: 4, gpus_per_server: 1, nics_per_server: 1}\n"
			   "traffic:\n  generators:\n"
			   "    - {kind: poisson, cdf: websearch, load: 0.3, duration: 1ms}\n";
	struct fab_config *c[3];
	struct fab_err err = {0};
	const char *s2[] = {"run.seed=2"};
	struct fab_run *r[3];
	for (int k = 0; k < 3; k++) {
		c[k] = fab_config_parse(yaml, strlen(yaml), "test.yaml", NULL, k == 2 ? s2 : NULL, k == 2, &err);
		assert_non_null(c[k]);
		r[k] = fab_run_new(c[k], &err);
		assert_non_null(r[k]);
	}
	size_t n[3];
	const struct fab_sim_flow *f[3];
	for (int k = 0; k < 3; k++)
		f[k] = fab_sim_flows(r[k]->sim, &n[k]);
	assert_int_equal(n[0], n[1]);
	bool differ = n[0] != n[2];
	for (size_t i = 0; i < n[0]; i++) {
		assert_int_equal(f[0][i].src_gpu, f[1][i].src_gpu);
		assert_int_equal(f[0][i].dst_gpu, f[1][i].dst_gpu);
		assert_int_equal(f[0][i].bytes, f[1][i].bytes);
		assert_int_equal(f[0][i].start_ps, f[1][i].start_ps);
		if (i < n[2])
			differ |= f[0][i].start_ps != f[2][i].start_ps || f[0][i].bytes != f[2][i].bytes;
	}
	assert_true(differ);
	for (int k = 0; k < 3; k++) {
		fab_run_free(r[k]);
		fab_config_free(c[k]);
	}
}

/* A fabric in HPCC's ns-3 format runs exactly as the same fabric as an
 * edge list; an ns-3 flow file's ids are the hosts, its PG the priority,
 * its start read as ns-3 reads it (a double, truncated to whole ns: the
 * double nearest 2.0000001 is a hair below, so 2000000099 ns), and what
 * follows the counted flows is not read. */
static void test_workload_ns3_files(void **state)
{
	(void)state;
	const char *ns3 = write_file("t.txt",
				     "6 2 5\n4 5\n0 4 100Gbps 1000ns 0.000000\n1 4 100Gbps 1000ns 0\n"
				     "2 5 100Gbps 1000ns 0\n3 5 100Gbps 0.001ms 0\n4 5 400Gbps 2us 0\n");
	const char *edges = write_file("e.txt",
				       "nic h0\nnic h1\nnic h2\nnic h3\nswitch sw4\nswitch sw5\n"
				       "link h0 sw4 100Gbps 1us\nlink h1 sw4 100Gbps 1us\n"
				       "link h2 sw5 100Gbps 1us\nlink h3 sw5 100Gbps 1us\n"
				       "link sw4 sw5 400Gbps 2us\n");
	const char *flows = write_file("f.txt",
				       "3\n0 3 3 100 1048576 2.0000001\n1 2 3 100 1000 2.000001\n"
				       "3 0 2 100 5000 2.000002\nFirst line: # of flows (not read)\n");
	char y[2][512];
	snprintf(y[0], sizeof y[0],
		 "topology: {kind: ns3, file: %s, gpus_per_server: 1, nics_per_server: 1}\ntraffic: {flows_ns3: %s}\n",
		 ns3, flows);
	snprintf(y[1], sizeof y[1],
		 "topology: {kind: file, file: %s, gpus_per_server: 1, nics_per_server: 1}\ntraffic: {flows_ns3: %s}\n",
		 edges, flows);
	struct trun a = trun_yaml(y[0]), b = trun_yaml(y[1]);
	size_t n;
	const struct fab_sim_flow *fl = fab_sim_flows(a.run->sim, &n);
	assert_int_equal(n, 3);
	assert_int_equal(fl[0].start_ps, 2000000099000ull);
	assert_int_equal(fl[1].start_ps, 2000001000000ull);
	assert_int_equal(fl[0].src_gpu, 0);
	assert_int_equal(fl[0].dst_gpu, 3);
	assert_int_equal(fl[2].prio, 2);
	assert_int_equal(fl[1].bytes, 1000);
	const struct fab_flow_stats *sa = fab_sim_flow_stats(a.run->sim), *sb = fab_sim_flow_stats(b.run->sim);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(sa[i].finish_ps, sb[i].finish_ps);
	assert_int_equal(fab_sim_totals(a.run->sim)->events, fab_sim_totals(b.run->sim)->events);
	trun_free(&a);
	trun_free(&b);
}

/* Bad ns-3 files are refused at file:line:col. */
static void test_workload_ns3_errors(void **state)
{
	(void)state;
	const struct {
		const char *topo, *flows, *want;
	} bad[] = {
		{"6 2 5\n4 4\n", NULL, ":2:3: switch 4 is listed twice"},
		{"6 2 1\n4 5\n0 4 100Gbps 1us 0.01\n", NULL, ":3:17: link error rate 0.01: not read"},
		{"6 2 1\n4 5\n0 9 100Gbps 1us 0\n", NULL,
		 ":3:3: a link's second node: expected an integer from 0 to 5"},
		{"6 2\n", NULL, ":2:1: the file ends where the number of links was expected"},
		{NULL, "1\n0 7 3 100 1000 0\n", ":2:3: dst: node 7 is not a host of the topology"},
		{NULL, "1\n0 1 8 100 1000 0\n", ":2:5: pg (the priority): expected an integer from 0 to 7, got '8'"},
		{NULL, "2\n0 1 3 100 1000 0\n", ":3:1: the file ends where src was expected"},
		{NULL, "1\n0 1 3 100 1000 -1\n", ":2:16: start: expected seconds"},
	};
	const char *good = "6 2 5\n4 5\n0 4 100Gbps 1us 0\n1 4 100Gbps 1us 0\n2 5 100Gbps 1us 0\n3 5 100Gbps 1us 0\n"
			   "4 5 100Gbps 1us 0\n";
	for (size_t i = 0; i < FAB_ARRAY_LEN(bad); i++) {
		const char *tp = write_file("bt.txt", bad[i].topo ? bad[i].topo : good);
		const char *fp = write_file("bf.txt", bad[i].flows ? bad[i].flows : "0\n");
		char yaml[512];
		snprintf(yaml, sizeof yaml,
			 "topology: {kind: ns3, file: %s, gpus_per_server: 1, nics_per_server: 1}\n"
			 "traffic: {flows_ns3: %s}\n",
			 tp, fp);
		struct fab_config *cfg;
		struct fab_err err = {0};
		struct fab_run *r = build(yaml, &cfg, &err);
		const char *file = bad[i].topo ? tp : fp;
		if (r || !strstr(err.msg, bad[i].want) || !strstr(err.msg, file))
			fail_msg("case %zu: want \"%s%s\", got \"%s\"", i, file, bad[i].want, r ? "(built)" : err.msg);
		assert_int_equal(fab_err_exit_code(err.code), FAB_EXIT_INPUT);
		fab_config_free(cfg);
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/fabscope-workload-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A flow's queue pairs take their 5-tuples from what the flow is, not
 * from its place in the list: a flow added at the front, or a flow's size
 * changed, moves no other flow's path; the same endpoints starting at
 * another time are another connection. */
static void test_workload_flow_paths_keyed_by_identity(void **state)
{
	(void)state;
	const char *topo = "topology: {leaves: 4, servers_per_leaf: 4, gpus_per_server: 1, nics_per_server: 1,\n"
			   "           spines: 4, links_per_spine: 1}\n"
			   "traffic:\n"
			   "  flows:\n";
	const char *rest = "    - {src: 0, dst: 5, bytes: 64KiB, qps: 4}\n"
			   "    - {src: 1, dst: 9, bytes: 64KiB}\n"
			   "    - {src: 1, dst: 9, bytes: 64KiB}\n"
			   "    - {src: 2, dst: 13, bytes: %s, start: 1us}\n"
			   "    - {src: 3, dst: 14, bytes: 64KiB, start: 2us}\n";
	char yaml[4][1024], r[512];
	const char *front[4] = {"", "    - {src: 4, dst: 8, bytes: 1MiB}\n", "    - {src: 2, dst: 13, bytes: 1MiB}\n",
				""};
	for (int v = 0; v < 4; v++) {
		snprintf(r, sizeof r, rest, v == 3 ? "3MiB" : "64KiB");
		snprintf(yaml[v], sizeof yaml[v], "%s%s%s", topo, front[v], r);
	}
	uint64_t hash[4][8];
	uint32_t path[4][8][8], n[4][8];
	for (int v = 0; v < 4; v++) {
		struct trun t = trun_yaml(yaml[v]);
		const struct fab_sim *s = t.run->sim;
		uint32_t skip = front[v][0] ? 1 : 0, q = 0;
		assert_int_equal(s->nflows, 5 + skip);
		for (uint32_t i = skip; i < s->nflows; i++) {
			const struct sim_flow *f = sim_flow_at((struct fab_sim *)s, i);
			for (uint32_t k = 0; k < f->nqps; k++, q++) {
				const struct sim_conn *c = s->qps[f->first_qp + k];
				hash[v][q] = c->hash_fwd;
				n[v][q] = sim_path(s, c->src_nic, c->dst_nic, c->hash_fwd, path[v][q], 8);
			}
		}
		assert_int_equal(q, 8);
		trun_free(&t);
	}
	for (int v = 1; v < 4; v++)
		for (int q = 0; q < 8; q++) {
			assert_true(hash[v][q] == hash[0][q]);
			assert_int_equal(n[v][q], n[0][q]);
			assert_memory_equal(path[v][q], path[0][q], n[0][q] * sizeof(uint32_t));
		}
	/* a flow's queue pairs, and two alike flows, are distinct connections;
	 * the same endpoints at another start too */
	for (int a = 0; a < 8; a++)
		for (int b = a + 1; b < 8; b++)
			assert_true(hash[0][a] != hash[0][b]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workload_builtin_cdfs),
		cmocka_unit_test(test_workload_flow_paths_keyed_by_identity),
		cmocka_unit_test(test_workload_cdf_file),
		cmocka_unit_test(test_workload_poisson_against_definition),
		cmocka_unit_test(test_workload_poisson_sizes_and_incast),
		cmocka_unit_test(test_workload_poisson_deterministic),
		cmocka_unit_test(test_workload_ns3_files),
		cmocka_unit_test(test_workload_ns3_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
