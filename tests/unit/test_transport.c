/* The transport registry: every transport found by its name, its framing
 * the sum of its specification's headers, its parameters inside the block
 * and apart from every other transport's, its keys in the scenario's table,
 * and what a scenario gets from its description (defaults, checks, the
 * text summary's line, the host's latency). */
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "../../src/sim/sim.h"
#include "../../src/sim/tp_tcp.h"

static void test_transport_registry(void **state)
{
	(void)state;
	size_t end = 0;
	char choices[64] = "";
	for (int k = 0; k < FAB_TRANSPORT_COUNT; k++) {
		const struct fab_transport_info *tp = fab_transport_at(k);
		assert_int_equal(fab_transport_find(tp->name), k);
		assert_string_equal(tp->wire.name, tp->name);
		assert_non_null(tp->label);
		assert_non_null(tp->qp);
		assert_non_null(tp->llfc);
		assert_non_null(tp->describe);
		assert_non_null(tp->notify_counter);
		assert_int_equal(strncmp(tp->doc, tp->name, strlen(tp->name)), 0);
		snprintf(choices + strlen(choices), sizeof choices - strlen(choices), "%s%s", k ? "|" : "", tp->name);
		if (!tp->family)
			continue;
		size_t off = fab_transport_params_offset(k);
		assert_true(off >= end);
		assert_int_equal(off % 16, 0);
		end = off + tp->family->size;
		assert_true(end <= FAB_TP_PARAMS_BYTES);
	}
	assert_string_equal(fab_transport_choices(), choices);
	assert_int_equal(fab_transport_find("quic"), -1);
	/* the specifications' headers, summed here by hand */
	const struct fab_wire *roce = fab_wire_of(fab_transport_find("roce"));
	assert_int_equal(roce->data_overhead, 14 + 20 + 8 + 12 + 4 + 4);
	assert_int_equal(roce->ack_frame, 14 + 20 + 8 + 12 + 4 + 4 + 4);
	assert_int_equal(roce->udp_dport, 4791);
	const struct fab_wire *tcp = fab_wire_of(fab_transport_find("tcp"));
	assert_int_equal(tcp->data_overhead, 14 + 20 + 20 + 12 + 4);
	const struct fab_wire *ib = fab_wire_of(fab_transport_find("ib"));
	assert_int_equal(ib->data_overhead, 8 + 12 + 4 + 2);
	assert_int_equal(ib->preamble_ifg, 0);
	/* a full RoCE packet: 4096 / (4096 + 62 + 20) of the line */
	assert_true(fabs(fab_wire_efficiency(roce, 4096) - 4096.0 / 4178.0) < 1e-12);
}

/* every transport's keys are in the scenario's table, at its place */
static void test_transport_keys_in_scenario(void **state)
{
	(void)state;
	size_t nk;
	const struct fab_key_def *keys = fab_config_keys(&nk);
	for (int t = 0; t < FAB_TRANSPORT_COUNT; t++) {
		const struct fab_param_family *f = fab_transport_at(t)->family;
		if (!f)
			continue;
		size_t base = offsetof(struct fab_config, fabric.tp_params) + fab_transport_params_offset(t);
		for (size_t j = 0; j < f->nkeys; j++) {
			assert_int_equal(strncmp(f->keys[j].path, f->prefix, strlen(f->prefix)), 0);
			size_t hits = 0;
			for (size_t i = 0; i < nk; i++)
				if (!strcmp(keys[i].path, f->keys[j].path)) {
					hits++;
					assert_int_equal(keys[i].off, base + f->keys[j].off);
				}
			assert_int_equal(hits, 1);
		}
	}
	/* fabric.transport and a flow's transport take the registry's names */
	for (size_t i = 0; i < nk; i++)
		if (!strcmp(keys[i].path, "fabric.transport"))
			assert_string_equal(keys[i].choices, fab_transport_choices());
	size_t nf;
	const struct fab_key_def *fk = fab_config_flow_keys(&nf);
	for (size_t i = 0; i < nf; i++)
		if (!strcmp(fk[i].path, "transport"))
			assert_non_null(strstr(fk[i].choices, fab_transport_choices()));
}

static struct fab_config *parse(const char *yaml, const char *set, struct fab_err *err)
{
	const char *sets[] = {set};
	return fab_config_parse(yaml, strlen(yaml), "s.yaml", NULL, sets, set ? 1 : 0, err);
}

/* what each transport's description gives a scenario that does not say */
static void test_transport_defaults(void **state)
{
	(void)state;
	struct fab_err err = {0};
	struct fab_config *c = parse("fabric: {transport: tcp}\n", NULL, &err);
	assert_non_null(c);
	assert_false(c->fabric.pfc.enabled); /* lossy */
	assert_int_equal(c->fabric.wire.preamble_ifg, 20);
	const struct fab_tcp_params *tcp = fab_transport_params(&c->fabric, FAB_TRANSPORT_TCP);
	assert_int_equal(tcp->kernel_ps, 5000000); /* 5us */
	assert_int_equal(fab_transport_at(FAB_TRANSPORT_TCP)->host_latency(tcp), 5000000);
	assert_null(fab_transport_at(FAB_TRANSPORT_ROCE)->host_latency);
	char line[300];
	fab_transport_at(FAB_TRANSPORT_TCP)->describe(&c->fabric, "CUBIC", true, line, sizeof line);
	assert_string_equal(line, "TCP (CUBIC), MSS 4096, buffer 32MiB/switch, PFC off, ECN on");
	fab_config_free(c);
	c = parse("fabric: {transport: tcp, pfc: {enabled: true}}\n", NULL, &err);
	assert_non_null(c);
	assert_true(c->fabric.pfc.enabled); /* given: kept */
	fab_config_free(c);
	c = parse("fabric: {transport: ib}\n", NULL, &err);
	assert_non_null(c);
	assert_int_equal(c->fabric.wire.preamble_ifg, 0); /* no Ethernet preamble or gap */
	assert_false(c->fabric.ecn.enabled);              /* no congestion control: no marks */
	fab_transport_at(FAB_TRANSPORT_IB)->describe(&c->fabric, "", false, line, sizeof line);
	assert_non_null(strstr(line, "InfiniBand, MTU 4096"));
	assert_non_null(strstr(line, "credits 256KiB per lane and port, congestion control off"));
	fab_config_free(c);
	c = parse("fabric: {transport: ib}\n", "fabric.dcqcn.enabled=true", &err);
	assert_non_null(c);
	assert_true(c->fabric.ecn.enabled); /* congestion control on: switches mark */
	fab_config_free(c);
	c = parse("{}\n", NULL, &err);
	assert_non_null(c);
	assert_true(c->fabric.pfc.enabled);
	fab_transport_at(FAB_TRANSPORT_ROCE)->describe(&c->fabric, "DCQCN", true, line, sizeof line);
	assert_string_equal(line, "MTU 4096, buffer 32MiB/switch, PFC on, ECN on, DCQCN on");
	fab_config_free(c);
}

/* what a transport cannot do is refused where the scenario asks it */
static void test_transport_refusals(void **state)
{
	(void)state;
	struct fab_err err = {0};
	assert_null(parse("fabric:\n  transport: ib\n  mtu: 9000\n", NULL, &err));
	assert_non_null(strstr(err.msg, "s.yaml:3:8: fabric.mtu: InfiniBand's MTU is at most 4096, got 9000"));
	assert_null(parse("fabric:\n  transport: quic\n", NULL, &err));
	assert_non_null(strstr(err.msg, "s.yaml:2:14"));
	assert_non_null(strstr(err.msg, "roce"));
	const char *mixed = "fabric: {transport: ib}\n"
			    "traffic:\n  flows:\n    - {src: 0, dst: 1, bytes: 1MiB, transport: tcp}\n";
	assert_null(parse(mixed, NULL, &err));
	assert_non_null(strstr(err.msg, "InfiniBand and Ethernet transports cannot share one fabric"));
	const char *storm = "fabric: {transport: ib}\n"
			    "faults: [{kind: pfc-storm, node: server2.nic0, start: 0}]\n";
	struct fab_config *c = parse(storm, NULL, &err);
	assert_non_null(c);
	assert_null(fab_run_new(c, &err));
	assert_non_null(strstr(err.msg, "InfiniBand has no PAUSE to storm with (its links are credited)"));
	fab_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transport_registry),
		cmocka_unit_test(test_transport_keys_in_scenario),
		cmocka_unit_test(test_transport_defaults),
		cmocka_unit_test(test_transport_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
