/*
 * plan.c - fabscope plan: a fabric designed from the cluster's size and its
 * switches, and the scenario that builds it.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *usage_plan = "usage: fabscope plan --gpus N [options] [-o scenario.yaml]\n"
				"\n"
				"Designs the fabric for N GPUs: the fewest tiers that give every NIC a port at\n"
				"the oversubscription asked for (a spine-leaf in two tiers, a k-ary fat tree in\n"
				"three), switches and links per tier, the oversubscription reached and the\n"
				"bisection bandwidth; -o writes the scenario whose topology is the design, for\n"
				"sim, coll and matrix.\n"
				"\n"
				"options:\n"
				"  --gpus N              GPUs in the cluster\n"
				"  --gpus-per-server N   (default 8)\n"
				"  --nics-per-server N   (default 8)\n"
				"  --nic-rate RATE       NIC to leaf (default 400Gbps)\n"
				"  --fabric-rate RATE    switch to switch (default: the NIC rate)\n"
				"  --radix N             ports per switch (default 64)\n"
				"  --oversubscription N:M  leaf down:up (default 1:1)\n"
				"  --rail-optimized      NIC k of the servers of a group under leaf k of the group\n"
				"  --tiers 2|3           (default: as few as will do)\n"
				"  -o, --output FILE     write the scenario to FILE\n"
				"  -h, --help            show this help (--version: the version)\n"
				"\n"
				"exit status: 0 ok, 2 usage, 3 no design (the cluster does not fit), 4 I/O error\n";

struct plan_out {
	const struct fab_plan_req *r;
	const struct fab_plan *p;
};

static int w_yaml(FILE *f, void *ctx, int arg)
{
	(void)arg;
	struct plan_out *o = ctx;
	fab_plan_write_yaml(f, o->r, o->p);
	return ferror(f) != 0;
}

static int parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char why[160];
	uint64_t v;
	if (fab_parse_uint(s, &v, why, sizeof why) || v < lo || v > hi) {
		fprintf(stderr, "fabscope: %s %s: expected a whole number from %u to %u\n", opt, s, lo, hi);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{"gpus", required_argument, NULL, 'G'},
		{"gpus-per-server", required_argument, NULL, 'g'},
		{"nics-per-server", required_argument, NULL, 'k'},
		{"nic-rate", required_argument, NULL, 'n'},
		{"fabric-rate", required_argument, NULL, 'f'},
		{"radix", required_argument, NULL, 'R'},
		{"oversubscription", required_argument, NULL, 'O'},
		{"rail-optimized", no_argument, NULL, 'r'},
		{"tiers", required_argument, NULL, 't'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct fab_plan_req r = {0, 8, 8, 64, 400000000000ULL, 0, 1, 1, false, 0};
	const char *out = NULL;
	char why[160];
	int c;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'G':
			if (parse_u32("--gpus", optarg, 1, 1u << 24, &r.gpus))
				return FAB_EXIT_USAGE;
			break;
		case 'g':
			if (parse_u32("--gpus-per-server", optarg, 1, 64, &r.gpus_per_server))
				return FAB_EXIT_USAGE;
			break;
		case 'k':
			if (parse_u32("--nics-per-server", optarg, 1, 64, &r.nics_per_server))
				return FAB_EXIT_USAGE;
			break;
		case 'R':
			if (parse_u32("--radix", optarg, 2, 1024, &r.radix))
				return FAB_EXIT_USAGE;
			break;
		case 't':
			if (parse_u32("--tiers", optarg, 2, 3, (uint32_t *)&r.tiers))
				return FAB_EXIT_USAGE;
			break;
		case 'n':
		case 'f':
			if (fab_parse_rate(optarg, c == 'n' ? &r.nic_rate : &r.fabric_rate, why, sizeof why)) {
				fprintf(stderr, "fabscope: --%s: %s\n", c == 'n' ? "nic-rate" : "fabric-rate", why);
				return FAB_EXIT_USAGE;
			}
			break;
		case 'O': {
			unsigned a, b;
			char tail;
			if (sscanf(optarg, "%u:%u%c", &a, &b, &tail) != 2 || !a || !b || a > 1000 || b > 1000) {
				fprintf(stderr, "fabscope: --oversubscription %s: expected N:M such as 2:1\n", optarg);
				return FAB_EXIT_USAGE;
			}
			r.over_num = a;
			r.over_den = b;
			break;
		}
		case 'r':
			r.rail_optimized = true;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(usage_plan, stdout);
			return FAB_EXIT_OK;
		default:
			fputs(usage_plan, stderr);
			return FAB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "fabscope: plan: unexpected argument \"%s\"\n", argv[optind]);
		return FAB_EXIT_USAGE;
	}
	if (!r.gpus) {
		fprintf(stderr, "fabscope: plan: --gpus N is needed\n%s", usage_plan);
		return FAB_EXIT_USAGE;
	}
	if (!r.fabric_rate)
		r.fabric_rate = r.nic_rate;
	struct fab_plan p;
	struct fab_err err = {0};
	if (fab_plan_design(&r, &p, &err)) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		return FAB_EXIT_INPUT;
	}
	fab_plan_write_text(stdout, &r, &p);
	if (out) {
		struct plan_out o = {&r, &p};
		struct out_spec spec = {"", w_yaml, 0};
		int rc = write_out_file(out, &spec, &o);
		if (rc)
			return rc;
		printf("scenario: %s\n", out);
	}
	return fflush(stdout) ? FAB_EXIT_IO : FAB_EXIT_OK;
}
