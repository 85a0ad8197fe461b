/* The switches' queue disciplines (src/packet/qdisc.h): RED and DCTCP's
 * step against their definitions on a queue that no congestion control
 * drains, and the one the scenario names is the one that runs. */
#include <string.h>

#include "testutil.h"

/* two senders into one receiver at line rate, no congestion control: the
 * bottleneck's queue climbs past K within a few packets and stays there
 * (PFC holds it) */
static const char *const incast = ONE_LEAF(3) "fabric:\n"
					      "  dcqcn: {enabled: false}\n"
					      "  ecn: {kmin: 20KiB, kmax: 100MiB, pmax: 0.2}\n"
					      "traffic:\n"
					      "  flows:\n"
					      "    - {src: 1, dst: 0, bytes: 4MiB}\n"
					      "    - {src: 2, dst: 0, bytes: 4MiB}\n";

enum { PKTS = 2 * 4 * 1024 * 1024 / 4096 };

static void marks(const char *marking, uint64_t *marked, uint64_t *maxq)
{
	char set[64];
	snprintf(set, sizeof set, "fabric.ecn.marking=%s", marking);
	const char *sets[] = {set};
	struct trun t = trun_yaml_sets(incast, sets, 1);
	uint32_t bott = port_between(t.run->topo, "leaf0", "server0.nic0");
	const struct fab_port_stats *ps = fab_sim_port_stats(t.run->sim);
	*marked = ps[bott].ecn_marks;
	*maxq = ps[bott].max_queue_bytes;
	trun_free(&t);
}

/* step: every packet that leaves a queue above K is marked, so all but
 * the few that left while it was filling; RED: each with probability
 * Pmax (q - Kmin) / (Kmax - Kmin), at most that at the peak queue */
static void test_qdisc_step_and_red_marks(void **state)
{
	(void)state;
	uint64_t step, red, qs, qr;
	marks("step", &step, &qs);
	marks("red", &red, &qr);
	double bound = PKTS * 0.2 * ((double)qr - 20 * 1024) / (100.0 * 1024 * 1024 - 20 * 1024);
	print_message("step %llu of %d packets marked (peak queue %llu B); red %llu, bound %.1f\n",
		      (unsigned long long)step, PKTS, (unsigned long long)qs, (unsigned long long)red, bound);
	assert_true(qs > 20 * 1024 * 4);
	/* the queue passes 20 KiB after 5 full packets of 4178 wire bytes */
	assert_true(step >= PKTS - 16);
	assert_true(step <= PKTS);
	assert_true((double)red <= 3 * bound + 3);
}

/* RED whose Kmax is its Kmin marks above K and never draws: DCTCP's step,
 * packet for packet, under a congestion control that reacts to it */
static void test_qdisc_red_at_one_threshold_is_step(void **state)
{
	(void)state;
	const char *yaml = ONE_LEAF(5) "fabric: {ecn: {kmin: 40KiB, kmax: 40KiB}}\n"
				       "traffic:\n  flows:\n"
				       "    - {src: 1, dst: 0, bytes: 2MiB}\n    - {src: 2, dst: 0, bytes: 2MiB}\n"
				       "    - {src: 3, dst: 0, bytes: 2MiB}\n    - {src: 4, dst: 0, bytes: 2MiB}\n";
	const char *red[] = {"fabric.ecn.marking=red"}, *step[] = {"fabric.ecn.marking=step"};
	struct trun a = trun_yaml_sets(yaml, red, 1), b = trun_yaml_sets(yaml, step, 1);
	struct fab_summary sa, sb;
	fab_summary_compute(a.run->sim, &sa);
	fab_summary_compute(b.run->sim, &sb);
	assert_true(sa.ecn_marks > 0);
	assert_int_equal(sa.ecn_marks, sb.ecn_marks);
	const struct fab_flow_stats *fa = fab_sim_flow_stats(a.run->sim), *fb = fab_sim_flow_stats(b.run->sim);
	for (int i = 0; i < 4; i++)
		assert_int_equal(fa[i].finish_ps, fb[i].finish_ps);
	trun_free(&a);
	trun_free(&b);
}

/* a discipline the registry does not have is refused at its place, with
 * the ones it has */
static void test_qdisc_unknown_refused(void **state)
{
	(void)state;
	const char *yaml = "fabric:\n  ecn:\n    marking: wred\n";
	struct fab_err err = {0};
	assert_null(fab_config_parse(yaml, strlen(yaml), "s.yaml", NULL, NULL, 0, &err));
	print_message("%s\n", err.msg);
	assert_non_null(strstr(err.msg, "s.yaml:3:14"));
	assert_non_null(strstr(err.msg, "step"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qdisc_step_and_red_marks),
		cmocka_unit_test(test_qdisc_red_at_one_threshold_is_step),
		cmocka_unit_test(test_qdisc_unknown_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
