/* The packet engine holds a port's end of serialisation out of its event
 * queue when nothing waits behind the frame (port.c).  That must not
 * move any result: every scenario here gives the same result document,
 * byte for byte, with every such event queued, and the held ones are a
 * large share of the events on a lightly loaded fabric. */
#include "../../src/out/result.h"
#include "../../src/packet/packet_int.h"
#include "testutil.h"

/* the whole result document of one run, holding or not; *events, *holds */
static char *run_doc(const char *yaml, bool hold, uint64_t *events, uint64_t *holds)
{
	struct fab_err err = {0};
	struct fab_config *cfg = fab_config_parse(yaml, strlen(yaml), "test.yaml", NULL, NULL, 0, &err);
	if (!cfg)
		fail_msg("scenario: %s", err.msg);
	struct fab_run *run = fab_run_new(cfg, &err);
	if (!run)
		fail_msg("run: %s", err.msg);
	struct psim *s = (struct psim *)run->sim;
	s->hold_off = !hold;
	assert_int_equal(fab_run_exec(run, NULL, NULL), 0);
	if (!fab_sim_totals(run->sim)->stopped_by_end_time) /* else a flow may have all its bytes, not its last ACK */
		check_conservation(run);
	json_t *doc = fab_result_json(cfg, run->sim);
	assert_non_null(doc);
	char *text = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
	assert_non_null(text);
	json_decref(doc);
	*events = fab_sim_totals(run->sim)->events;
	*holds = s->holds_total;
	fab_run_free(run);
	fab_config_free(cfg);
	return text;
}

/* the same document both ways; returns the held share of the events */
static double same_doc(const char *name, const char *yaml)
{
	uint64_t ev_q, ev_h, holds_q, holds_h;
	char *queued = run_doc(yaml, false, &ev_q, &holds_q);
	char *held = run_doc(yaml, true, &ev_h, &holds_h);
	print_message("%s: %llu events, %llu held (%.0f%%), %zu bytes of result\n", name, (unsigned long long)ev_h,
		      (unsigned long long)holds_h, 100.0 * (double)holds_h / (double)ev_h, strlen(held));
	assert_int_equal(holds_q, 0);
	assert_int_equal(ev_q, ev_h);
	if (strcmp(queued, held)) {
		size_t i = 0;
		while (queued[i] == held[i])
			i++;
		fail_msg("%s: the documents part at byte %zu: ...%.60s against ...%.60s", name, i,
			 queued + (i > 20 ? i - 20 : 0), held + (i > 20 ? i - 20 : 0));
	}
	free(queued);
	free(held);
	return (double)holds_h / (double)ev_h;
}

#define FAT "topology: {kind: fat-tree, k: 4, gpus_per_server: 1, nics_per_server: 1}\n"
#define LEAF_SPINE(spines)                                                                                             \
	"topology: {leaves: 2, servers_per_leaf: 4, gpus_per_server: 1, nics_per_server: 1, spines: " #spines "}\n"

/* Poisson traffic at 30% with incast under PFC and DCQCN: most ends of
 * serialisation find nothing behind; the incast's queues and PAUSE frames
 * take the other path.  The same split over 2 threads, and stopped by
 * run.end in the middle. */
static void test_hold_poisson_incast_pfc(void **state)
{
	(void)state;
	const char *gen = "fabric: {buffer: 2MiB}\n"
			  "traffic:\n"
			  "  generators:\n"
			  "    - {kind: poisson, cdf: fb_hadoop, load: 0.3, duration: 300us,\n"
			  "       incast_load: 0.05, incast_senders: 8, incast_bytes: 200KB}\n";
	char yaml[1024];
	snprintf(yaml, sizeof yaml, FAT "%s", gen);
	assert_true(same_doc("fat tree", yaml) > 0.2);
	snprintf(yaml, sizeof yaml, FAT "%srun: {threads: 2}\n", gen);
	same_doc("fat tree, 2 threads", yaml);
	snprintf(yaml, sizeof yaml, FAT "%srun: {end: 150us}\n", gen);
	same_doc("fat tree, run.end", yaml);
}

/* no PFC and a small buffer: drops, NAKs and timeouts; InfiniBand's
 * credits (their update frames are sent ahead of the queues); TCP and
 * PCIe's pace at the NICs; adaptive routing, which reads whether each
 * candidate port is sending */
static void test_hold_lossy_credits_adaptive(void **state)
{
	(void)state;
	same_doc("lossy",
		 FAT "fabric: {buffer: 256KiB, pfc: {enabled: false}, nic: {rto: 200us}}\n"
		     "traffic:\n"
		     "  generators:\n"
		     "    - {kind: incast, senders: 12, dst: 0, bytes: 512KiB}\n"
		     "    - {kind: permutation, bytes: 1MiB}\n");
	same_doc("infiniband",
		 LEAF_SPINE(2) "fabric: {transport: ib}\n"
			       "traffic:\n"
			       "  generators:\n"
			       "    - {kind: incast, senders: 6, dst: 0, bytes: 1MiB}\n"
			       "    - {kind: permutation, bytes: 512KiB}\n");
	/* TCP beside RoCE, and NICs fed by a PCIe link below their line rate */
	same_doc("tcp, pcie",
		 "topology: {leaves: 2, servers_per_leaf: 4, gpus_per_server: 1, nics_per_server: 1, "
		 "spines: 2, pcie_rate: 80Gbps}\n"
		 "traffic:\n"
		 "  flows:\n"
		 "    - {src: 0, dst: 5, bytes: 2MiB, transport: tcp, priority: 1}\n"
		 "    - {src: 1, dst: 5, bytes: 2MiB}\n"
		 "    - {src: 6, dst: 2, bytes: 1MiB, transport: tcp, priority: 1, start: 20us}\n"
		 "    - {src: 7, dst: 3, bytes: 3MiB, qps: 4}\n");
	same_doc("adaptive",
		 LEAF_SPINE(4) "fabric: {ecmp: {adaptive: true}}\n"
			       "traffic:\n"
			       "  generators:\n"
			       "    - {kind: permutation, bytes: 2MiB, qps: 2}\n");
}

/* faults kick ports from outside the traffic (a link down and back, a
 * storming NIC's PAUSE), and a job's collectives post messages from the
 * workload's callbacks */
static void test_hold_faults_and_jobs(void **state)
{
	(void)state;
	same_doc("faults",
		 LEAF_SPINE(2) "faults:\n"
			       "  - {kind: down, node: leaf0, peer: spine0, start: 20us, end: 200us}\n"
			       "  - {kind: pfc-storm, node: server5.nic0, start: 50us, end: 150us}\n"
			       "traffic:\n"
			       "  generators:\n"
			       "    - {kind: permutation, bytes: 1MiB, qps: 2}\n");
	same_doc("job",
		 LEAF_SPINE(2) "jobs:\n"
			       "  - {name: a, gpus: 8, iterations: 2, compute: 20us, gradient_bytes: 4MiB}\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hold_poisson_incast_pfc),
		cmocka_unit_test(test_hold_lossy_credits_adaptive),
		cmocka_unit_test(test_hold_faults_and_jobs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
