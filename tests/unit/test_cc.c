/* The congestion-control registry: every model found by its name, its
 * parameters inside the block and apart from every other family's, its
 * keys in the scenario's table with defaults that parse, and fabric keys
 * that choose it. */
#include <string.h>

#include "testutil.h"
#include "../../src/cc/cc.h"

static void test_cc_registry_names_and_families(void **state)
{
	(void)state;
	size_t n = fab_cc_count(), end = 0;
	assert_true(n >= 6);
	for (size_t i = 0; i < n; i++) {
		const struct fab_cc_ops *m = fab_cc_at(i);
		assert_non_null(m->name);
		assert_non_null(m->label);
		assert_true(m->transports != 0);
		assert_ptr_equal(fab_cc_find(m->name), m);
		assert_int_equal(fab_cc_index(m), (int)i);
		assert_true(m->state_size <= FAB_CC_STATE_MAX);
		assert_non_null(m->init);
		assert_non_null(m->rate_bps);
		assert_non_null(m->window_bytes);
		assert_true(!(m->wants & FAB_CC_WANTS_SAMPLE) || m->on_sample);
	}
	assert_null(fab_cc_find("no-such-model"));
	/* families: each at its own place, none overlapping, all in the block */
	for (size_t k = 0; k < fab_cc_family_count(); k++) {
		const struct fab_param_family *f = fab_cc_family_at(k);
		size_t off = fab_cc_family_offset(f);
		assert_true(off >= end);
		assert_int_equal(off % 16, 0);
		end = off + f->size;
		assert_true(end <= FAB_CC_PARAMS_BYTES);
		for (size_t j = 0; j < f->nkeys; j++) {
			assert_int_equal(strncmp(f->keys[j].path, f->prefix, strlen(f->prefix)), 0);
			assert_true(f->keys[j].off < f->size);
		}
	}
}

/* every family's keys are in the scenario's table, at the family's place */
static void test_cc_keys_in_scenario(void **state)
{
	(void)state;
	size_t nk;
	const struct fab_key_def *keys = fab_config_keys(&nk);
	for (size_t k = 0; k < fab_cc_family_count(); k++) {
		const struct fab_param_family *f = fab_cc_family_at(k);
		size_t base = offsetof(struct fab_config, fabric.cc.params) + fab_cc_family_offset(f);
		for (size_t j = 0; j < f->nkeys; j++) {
			size_t hits = 0;
			for (size_t i = 0; i < nk; i++)
				if (!strcmp(keys[i].path, f->keys[j].path)) {
					hits++;
					assert_int_equal(keys[i].off, base + f->keys[j].off);
				}
			assert_int_equal(hits, 1);
		}
	}
	for (size_t i = 0; i < nk; i++)
		assert_int_not_equal(keys[i].type, K_MODEL_KEYS);
}

/* the transports' keys choose each transport's model as they always did */
static void test_cc_chosen_by_transport_keys(void **state)
{
	(void)state;
	static const struct {
		const char *set[2];
		const char *roce, *tcp, *ib;
	} cases[] = {
		{{"fabric.transport=roce", "run.seed=1"}, "dcqcn", "cubic", "dcqcn"},
		{{"fabric.dcqcn.variant=firmware", "fabric.tcp.cc=dctcp"}, "dcqcn-firmware", "dctcp", "dcqcn-firmware"},
		{{"fabric.dcqcn.enabled=false", "fabric.tcp.cc=newreno"}, "none", "newreno", "none"},
		{{"fabric.transport=ib", "run.seed=1"}, "none", "cubic", "none"},
		{{"fabric.transport=ib", "fabric.dcqcn.enabled=true"}, "dcqcn", "cubic", "dcqcn"},
	};
	for (size_t i = 0; i < FAB_ARRAY_LEN(cases); i++) {
		struct fab_err err = {0};
		struct fab_config *c = fab_config_parse("{}", 2, "t", NULL, cases[i].set, 2, &err);
		assert_non_null(c);
		assert_string_equal(fab_cc_of(&c->fabric.cc, FAB_TRANSPORT_ROCE)->name, cases[i].roce);
		assert_string_equal(fab_cc_of(&c->fabric.cc, FAB_TRANSPORT_TCP)->name, cases[i].tcp);
		assert_string_equal(fab_cc_of(&c->fabric.cc, FAB_TRANSPORT_IB)->name, cases[i].ib);
		fab_config_free(c);
	}
}

/* fabric.cc chooses the fabric's transport's model by name, sets the
 * DCQCN keys to match, and refuses a model of another transport at its
 * place */
static void test_cc_chosen_by_name(void **state)
{
	(void)state;
	struct fab_err err = {0};
	const char *hp[] = {"fabric.cc=hpcc"};
	struct fab_config *c = fab_config_parse("{}", 2, "t", NULL, hp, 1, &err);
	assert_non_null(c);
	assert_string_equal(fab_cc_of(&c->fabric.cc, FAB_TRANSPORT_ROCE)->name, "hpcc");
	assert_string_equal(fab_cc_of(&c->fabric.cc, FAB_TRANSPORT_TCP)->name, "cubic");
	assert_false(fab_config_given(c, "fabric.hpcc.eta"));
	fab_config_free(c);
	const char *fw[] = {"fabric.cc=dcqcn-firmware", "fabric.dcqcn.enabled=false"};
	c = fab_config_parse("{}", 2, "t", NULL, fw, 2, &err);
	assert_non_null(c);
	assert_string_equal(fab_cc_of(&c->fabric.cc, FAB_TRANSPORT_ROCE)->name, "dcqcn-firmware");
	fab_config_free(c);
	const char *yaml = "fabric:\n  transport: tcp\n  cc: hpcc\n";
	c = fab_config_parse(yaml, strlen(yaml), "s.yaml", NULL, NULL, 0, &err);
	assert_null(c);
	assert_non_null(strstr(
		err.msg, "s.yaml:3:7: fabric.cc: hpcc does not run on fabric.transport tcp (it runs on roce, ib)"));
	const char *nope[] = {"fabric.cc=bbr"};
	c = fab_config_parse("{}", 2, "t", NULL, nope, 1, &err);
	assert_null(c);
	assert_non_null(strstr(err.msg, "fabric.cc"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cc_registry_names_and_families),
		cmocka_unit_test(test_cc_keys_in_scenario),
		cmocka_unit_test(test_cc_chosen_by_transport_keys),
		cmocka_unit_test(test_cc_chosen_by_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
