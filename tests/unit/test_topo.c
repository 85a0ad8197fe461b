/* Topology builders and routing: counts, ratios, wiring, path lengths. */
#include <unistd.h>

#include "testutil.h"

static struct fab_topo_params spine_leaf(void)
{
	struct fab_topo_params p = {
		.kind = FAB_TOPO_SPINE_LEAF,
		.gpus_per_server = 8,
		.nics_per_server = 8,
		.leaves = 4,
		.spines = 4,
		.servers_per_leaf = 2,
		.links_per_spine = 4,
		.host_bps = 400000000000ULL,
		.fabric_bps = 400000000000ULL,
		.core_bps = 400000000000ULL,
		.host_delay_ps = 1000000,
		.fabric_delay_ps = 1000000,
		.radix = 64,
	};
	return p;
}

/* Hops from NIC a to NIC b following the first ECMP choice at each switch. */
static unsigned hops(const struct fab_topo *t, uint32_t a, uint32_t b)
{
	uint32_t node = t->ports[t->ports[t->nodes[t->nic_node[a]].first_port].peer].node;
	unsigned h = 1;
	while (node != t->nic_node[b]) {
		uint32_t cnt;
		const uint32_t *r = fab_topo_routes(t, node, b, &cnt);
		assert_true(cnt >= 1);
		node = t->ports[t->ports[r[0]].peer].node;
		h++;
		assert_true(h < 16);
	}
	return h;
}

static void test_topo_spine_leaf_counts_and_ratio(void **state)
{
	(void)state;
	struct fab_topo_params p = spine_leaf();
	struct fab_err err;
	struct fab_topo *t = fab_topo_build(&p, &err);
	assert_non_null(t);
	assert_int_equal(t->nnics, 64);
	assert_int_equal(t->ngpus, 64);
	assert_int_equal(t->nservers, 8);
	assert_int_equal(t->nswitches, 8);
	assert_int_equal(t->nports / 2, 64 + 4 * 4 * 4);
	assert_int_equal(t->tiers[0].down_bps, 4 * 16 * 400000000000ULL);
	assert_int_equal(t->tiers[0].up_bps, 4 * 16 * 400000000000ULL);
	/* same leaf: NIC-leaf-NIC; across leaves: NIC-leaf-spine-leaf-NIC */
	assert_int_equal(hops(t, 0, 1), 2);
	assert_int_equal(hops(t, 0, 63), 4);
	/* a leaf reaches a remote NIC over all 16 uplinks */
	uint32_t cnt;
	fab_topo_routes(t, t->nnics, 63, &cnt);
	assert_int_equal(cnt, 16);
	/* GPU g uses NIC g when there is one NIC per GPU */
	assert_int_equal(fab_topo_gpu_nic(t, 13), 13);
	fab_topo_free(t);
}

static void test_topo_oversubscription_derives_uplinks(void **state)
{
	(void)state;
	struct fab_topo_params p = spine_leaf();
	p.links_per_spine = 1;
	p.oversub_num = 2;
	p.oversub_den = 1;
	struct fab_err err;
	struct fab_topo *t = fab_topo_build(&p, &err);
	assert_non_null(t);
	/* 16 x 400G down, 2:1 -> 8 uplinks -> 8 spines of one link */
	assert_int_equal(t->nswitches, 4 + 8);
	assert_int_equal(t->tiers[0].down_bps, 2 * t->tiers[0].up_bps);
	char buf[16];
	assert_string_equal(fab_topo_fmt_ratio(t->tiers[0].down_bps, t->tiers[0].up_bps, buf, sizeof buf), "2:1");
	fab_topo_free(t);
	/* with the spine count fixed, the links per spine are derived */
	p.spines = 4;
	p.spines_given = true;
	t = fab_topo_build(&p, &err);
	assert_non_null(t);
	assert_int_equal(t->nswitches, 8);
	assert_int_equal(t->nodes[t->nic_node[63] + 1].nports, 16 + 4 * 2); /* leaf0 */
	fab_topo_free(t);
}

static void test_topo_impossible_ratio_says_why(void **state)
{
	(void)state;
	struct fab_topo_params p = spine_leaf();
	p.oversub_num = 3;
	p.oversub_den = 1;
	struct fab_err err = {0};
	assert_null(fab_topo_build(&p, &err));
	assert_int_equal(err.code, FAB_ETOPO);
	assert_non_null(strstr(err.msg, "topology.oversubscription: 3:1 is impossible"));
	assert_non_null(strstr(err.msg, "5.33 uplinks"));
	/* 8 uplinks cannot be shared by 3 spines */
	p.oversub_num = 2;
	p.spines = 3;
	p.spines_given = true;
	assert_null(fab_topo_build(&p, &err));
	assert_non_null(strstr(err.msg, "3 spines cannot share"));
}

static void test_topo_radix_checked(void **state)
{
	(void)state;
	struct fab_topo_params p = spine_leaf();
	p.radix = 24; /* a leaf needs 16 down + 16 up */
	struct fab_err err = {0};
	assert_null(fab_topo_build(&p, &err));
	assert_non_null(strstr(err.msg, "topology.radix: switch leaf0 needs 32 ports but the radix is 24"));
}

static void test_topo_rail_optimized_wiring(void **state)
{
	(void)state;
	struct fab_topo_params p = spine_leaf();
	p.rail_optimized = true;
	p.leaves = 16; /* two rail groups of 8 leaves */
	p.servers_per_leaf = 4;
	p.spines = 4;
	p.links_per_spine = 1;
	struct fab_err err;
	struct fab_topo *t = fab_topo_build(&p, &err);
	assert_non_null(t);
	assert_int_equal(t->nservers, 8);
	for (uint32_t nic = 0; nic < t->nnics; nic++) {
		uint32_t server = nic / 8, k = nic % 8;
		uint32_t leaf = fab_topo_nic_leaf(t, nic);
		char want[16];
		snprintf(want, sizeof want, "leaf%u", (server / 4) * 8 + k);
		assert_string_equal(t->nodes[leaf].name, want);
	}
	/* same rail, same group: one leaf; different rails: through a spine */
	assert_int_equal(hops(t, 0, 8), 2);
	assert_int_equal(hops(t, 0, 1), 4);
	p.leaves = 12;
	assert_null(fab_topo_build(&p, &err));
	assert_non_null(strstr(err.msg, "multiple of nics_per_server"));
	fab_topo_free(t);
}

static void test_topo_fat_tree_k4(void **state)
{
	(void)state;
	struct fab_topo_params p = spine_leaf();
	p.kind = FAB_TOPO_FAT_TREE;
	p.k = 4;
	p.gpus_per_server = 1;
	p.nics_per_server = 1;
	struct fab_err err;
	struct fab_topo *t = fab_topo_build(&p, &err);
	assert_non_null(t);
	assert_int_equal(t->nnics, 16);
	assert_int_equal(t->nswitches, 8 + 8 + 4);
	assert_int_equal(t->nports / 2, 48);
	assert_int_equal(t->ntiers, 3);
	assert_string_equal(t->tiers[2].name, "core");
	assert_int_equal(hops(t, 0, 1), 2);  /* same edge */
	assert_int_equal(hops(t, 0, 2), 4);  /* same pod */
	assert_int_equal(hops(t, 0, 15), 6); /* across pods */
	uint32_t cnt;
	fab_topo_routes(t, t->nnics, 15, &cnt); /* edge0.0 up: 2 aggregation switches */
	assert_int_equal(cnt, 2);
	fab_topo_routes(t, t->nnics + 8, 15, &cnt); /* agg0.0 up: 2 cores */
	assert_int_equal(cnt, 2);
	p.k = 5;
	assert_null(fab_topo_build(&p, &err));
	fab_topo_free(t);
}

static void test_topo_edge_list_file(void **state)
{
	(void)state;
	char path[] = "/tmp/fabscope-topo-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "# two NICs on one switch, a third behind a second switch\n"
			   "nic a\nnic b\nnic c\nswitch s1\nswitch s2\n"
			   "link a s1 100Gbps 500ns\nlink b s1 100Gbps 500ns\n"
			   "link s1 s2 200Gbps 1us\nlink c s2 100Gbps 500ns\n";
	assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	struct fab_topo_params p = spine_leaf();
	p.kind = FAB_TOPO_FILE;
	p.file = path;
	p.gpus_per_server = 1;
	p.nics_per_server = 1;
	struct fab_err err;
	struct fab_topo *t = fab_topo_build(&p, &err);
	assert_non_null(t);
	assert_int_equal(t->nnics, 3);
	assert_int_equal(hops(t, 0, 1), 2);
	assert_int_equal(hops(t, 0, 2), 3);
	assert_int_equal(t->ports[t->nodes[t->nic_node[2]].first_port].rate_bps, 100000000000ULL);
	fab_topo_free(t);
	/* an unknown node is reported where it stands */
	FILE *f = fopen(path, "w");
	fputs("nic a\nswitch s\nlink a  t 1Gbps 1us\n", f);
	fclose(f);
	assert_null(fab_topo_build(&p, &err));
	char want[128];
	snprintf(want, sizeof want, "%s:3:9: unknown node 't'", path);
	assert_non_null(strstr(err.msg, want));
	/* a disconnected graph is refused */
	f = fopen(path, "w");
	fputs("nic a\nnic b\nswitch s\nswitch t\nlink a s 1Gbps 1us\nlink b t 1Gbps 1us\n", f);
	fclose(f);
	assert_null(fab_topo_build(&p, &err));
	assert_non_null(strstr(err.msg, "not connected"));
	unlink(path);
}

/* Every switch's next hops toward every NIC are exactly its neighbours one
 * hop closer to the NIC, by a breadth-first search from the NIC that no
 * other NIC forwards and that skips links out (down: both ends marked), and
 * none where it cannot reach it. */
static void check_shortest_paths(const struct fab_topo *t, const uint8_t *down)
{
	uint32_t *dist = malloc(t->nnodes * sizeof *dist), *queue = malloc(t->nnodes * sizeof *queue);
	for (uint32_t d = 0; d < t->nnics; d++) {
		for (uint32_t i = 0; i < t->nnodes; i++)
			dist[i] = UINT32_MAX;
		uint32_t head = 0, tail = 0, dn = t->nic_node[d];
		dist[dn] = 0;
		queue[tail++] = dn;
		while (head < tail) {
			uint32_t u = queue[head++];
			if (t->nodes[u].kind == FAB_NODE_NIC && u != dn)
				continue;
			for (uint32_t p = t->nodes[u].first_port; p < t->nodes[u].first_port + t->nodes[u].nports;
			     p++) {
				uint32_t v = t->ports[t->ports[p].peer].node;
				if ((!down || !down[p]) && dist[v] == UINT32_MAX) {
					dist[v] = dist[u] + 1;
					queue[tail++] = v;
				}
			}
		}
		for (uint32_t s = 0; s < t->nnodes; s++) {
			const struct fab_node *n = &t->nodes[s];
			if (n->kind != FAB_NODE_SWITCH)
				continue;
			uint32_t cnt, want = 0;
			const uint32_t *r = fab_topo_routes(t, s, d, &cnt);
			for (uint32_t p = n->first_port; dist[s] != UINT32_MAX && p < n->first_port + n->nports; p++) {
				uint32_t v = t->ports[t->ports[p].peer].node;
				if ((down && down[p]) || dist[v] + 1 != dist[s] ||
				    (t->nodes[v].kind != FAB_NODE_SWITCH && v != dn))
					continue;
				assert_true(want < cnt);
				assert_int_equal(r[want], p); /* in port order: the ECMP draw's */
				want++;
			}
			assert_int_equal(cnt, want);
		}
	}
	free(dist);
	free(queue);
}

/* the routes of a fat-tree, of spine-leaf fabrics with rails and with dual
 * ToRs, and of a fat-tree with links out, against their definition; the
 * table has a column per edge switch, not per NIC, and a run per switch
 * port at most */
static void test_topo_routes_are_shortest_paths(void **state)
{
	(void)state;
	struct fab_err err = {0};
	struct fab_topo_params ft = spine_leaf();
	ft.kind = FAB_TOPO_FAT_TREE;
	ft.k = 6;
	ft.gpus_per_server = ft.nics_per_server = 1;
	struct fab_topo *t = fab_topo_build(&ft, &err);
	assert_non_null(t);
	assert_int_equal(t->nnics, 54);
	assert_int_equal(t->ngroups, 18); /* k^2/2 edge switches */
	check_shortest_paths(t, NULL);
	/* run-length coded: an edge switch has its uplinks before and after
	 * its own group, an aggregation switch a run for each edge switch of
	 * its pod and its uplinks around them, a core switch a run per pod */
	uint32_t most[4] = {0, 3, 6 / 2 + 2, 6};
	for (uint32_t i = 0; i < t->nnodes; i++) {
		if (t->nodes[i].kind != FAB_NODE_SWITCH)
			continue;
		uint32_t si = t->switch_index[i], runs = t->run_first[si + 1] - t->run_first[si];
		assert_true(runs >= 2 && runs <= most[t->nodes[i].tier]);
		if (t->nodes[i].tier == 3)
			assert_int_equal(runs, 6);
	}
	uint8_t *down = calloc(t->nports, 1);
	for (uint32_t p = 0; p < t->nports; p += 7) /* every 7th link out, both ends */
		down[p] = down[t->ports[p].peer] = 1;
	fab_topo_reroute(t, down);
	check_shortest_paths(t, down);
	free(down);
	fab_topo_free(t);
	struct fab_topo_params rails = spine_leaf();
	rails.rail_optimized = true;
	rails.leaves = 16;
	rails.links_per_spine = 1;
	t = fab_topo_build(&rails, &err);
	if (!t)
		fail_msg("%s", err.msg);
	check_shortest_paths(t, NULL);
	fab_topo_free(t);
	struct fab_topo_params dual = spine_leaf();
	dual.nic_ports = 2;
	dual.dual_tor = true;
	t = fab_topo_build(&dual, &err);
	if (!t)
		fail_msg("%s", err.msg);
	check_shortest_paths(t, NULL);
	fab_topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topo_spine_leaf_counts_and_ratio),
		cmocka_unit_test(test_topo_oversubscription_derives_uplinks),
		cmocka_unit_test(test_topo_impossible_ratio_says_why),
		cmocka_unit_test(test_topo_radix_checked),
		cmocka_unit_test(test_topo_rail_optimized_wiring),
		cmocka_unit_test(test_topo_fat_tree_k4),
		cmocka_unit_test(test_topo_edge_list_file),
		cmocka_unit_test(test_topo_routes_are_shortest_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
