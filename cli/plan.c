/*
 * plan.c - fabscope plan: a fabric designed from the cluster's size and its
 * switches, and the scenario that builds it.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *usage_plan =
	"usage: fabscope plan --gpus N [options] [-o scenario.yaml]\n"
	"       fabscope plan --compare DESIGNS.yaml [--out DIR] [-q]\n"
	"\n"
	"Designs the fabric for N GPUs: the fewest tiers that give every NIC a port at\n"
	"the oversubscription asked for (a spine-leaf in two tiers, pods of them under\n"
	"super-spines in three), switches and links per tier, the oversubscription\n"
	"reached, the bisection bandwidth, cables and optics by reach, cost and power,\n"
	"and what one switch or link down takes away; -o writes the scenario whose\n"
	"topology is the design, for sim, coll and matrix.  --compare plans every design\n"
	"of a file (a cluster, ways to build it, prices, a workload), runs the workload\n"
	"on each and prints cost, power and the workload's busbw or step time side by\n"
	"side (doc/plan.md).\n"
	"\n"
	"options:\n"
	"  --gpus N              GPUs in the cluster\n"
	"  --gpus-per-server N   (default 8)\n"
	"  --nics-per-server N   (default 8)\n"
	"  --nic-rate RATE       NIC to leaf (default 400Gbps)\n"
	"  --fabric-rate RATE    switch to switch (default: the NIC rate)\n"
	"  --radix N             ports per switch (default 64)\n"
	"  --oversubscription N:M  leaf down:up (default 1:1)\n"
	"  --spine-oversubscription N:M  three tiers: spine down:up (default 1:1)\n"
	"  --rail-optimized      NIC k of the servers of a group under leaf k of the group\n"
	"  --tiers 2|3           (default: as few as will do)\n"
	"  --length-leaf M       NIC-leaf cable length, metres (default 3, rail-optimized 20)\n"
	"  --length-spine M      leaf-spine cable length (default 50)\n"
	"  --length-core M       spine-super-spine cable length (default 150)\n"
	"  --price ITEM=USD[,W]  an item's price and power at 400G (doc/plan.md: items, defaults)\n"
	"  --format text|json    (default text)\n"
	"  -o, --output FILE     write the scenario to FILE\n"
	"  --compare FILE        the designs of FILE side by side on its workload\n"
	"  --out DIR             with --compare: each design's scenario and result,\n"
	"                        compare.json, compare.csv, compare.html (a report section)\n"
	"  -q, --quiet           with --compare: no progress on stderr\n"
	"  -h, --help            show this help (--version: the version)\n"
	"\n"
	"exit status: 0 ok, 1 a compare workload failed on a design, 2 usage, 3 no design\n"
	"(the cluster does not fit, a bad designs file), 4 I/O error\n";

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

struct cmp_out {
	const struct fab_compare *c;
	json_t *table;
	json_t **docs;
};

/* arg: -1 compare.json, -2 compare.csv, -3 compare.html; 2i design i's
 * scenario, 2i+1 its result document */
static int w_cmp(FILE *f, void *ctx, int arg)
{
	struct cmp_out *o = ctx;
	if (arg == -1)
		return cli_json_write(o->table, f, JSON_INDENT(1)) || fputc('\n', f) == EOF;
	if (arg == -2)
		return fab_compare_write_csv(f, o->table) != 0;
	if (arg == -3)
		return fab_report_compare(f, o->table) != 0;
	size_t i = (size_t)arg / 2;
	if (arg % 2 == 0) {
		/* the command that runs the workload on this design: the
		 * workload's scenario with the design's topology set over it,
		 * or this file with the workload's keys */
		const struct fab_compare *c = o->c;
		fprintf(f, "# design %s of %s; its workload's run:\n#   fabscope %s %s", c->d[i].name, c->origin,
			c->command == FAB_GRID_COLL ? "coll" : "sim", c->scenario ? c->scenario : "THIS-FILE");
		size_t n, nt;
		char **sets = fab_compare_sets(c, i, 0, &n), **topo = fab_plan_sets(&c->d[i].req, &c->d[i].plan, &nt);
		for (size_t k = 0; k < nt; k++)
			free(topo[k]);
		free(topo);
		for (size_t k = 0; k < n; k++) {
			if (c->scenario || k >= nt)
				fprintf(f, " --set '%s'", sets[k]);
			free(sets[k]);
		}
		free(sets);
		fputc('\n', f);
		fab_plan_write_yaml(f, &c->d[i].req, &c->d[i].plan);
		return ferror(f) != 0;
	}
	return cli_json_write(o->docs[i * o->c->nseeds], f, JSON_INDENT(1)) || fputc('\n', f) == EOF;
}

static int run_compare(const char *path, const char *outdir, const char *format, bool quiet)
{
	struct fab_err err = {0};
	struct fab_compare *c = fab_compare_load(path, &err);
	if (!c) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		return fab_err_exit_code(err.code) == FAB_EXIT_IO ? FAB_EXIT_IO : FAB_EXIT_INPUT;
	}
	/* each design at each seed: run r of design i is docs[i * nseeds + r] */
	size_t S = c->nseeds;
	json_t **docs = fab_xcalloc(c->n * S, sizeof *docs);
	char **errs = fab_xcalloc(c->n * S, sizeof *errs);
	int rc = FAB_EXIT_OK;
	for (size_t i = 0; i < c->n; i++) {
		double t0 = cli_wall_s();
		const char *why = NULL;
		for (size_t r = 0; r < S && !why; r++) {
			size_t n;
			char **sets = fab_compare_sets(c, i, r, &n);
			struct fab_err e = {0};
			docs[i * S + r] = cli_run_doc(c->command, c->scenario, (const char *const *)sets, n, &e);
			for (size_t k = 0; k < n; k++)
				free(sets[k]);
			free(sets);
			/* sim compares a training step: a result with no job has
			 * nothing to compare */
			if (docs[i * S + r] && c->command != FAB_GRID_COLL &&
			    !json_is_number(fab_json_path(docs[i * S + r], "jobs[0].stats.mean_ps"))) {
				json_decref(docs[i * S + r]);
				docs[i * S + r] = NULL;
				snprintf(e.msg, sizeof e.msg,
					 "the workload has no job: command sim compares a training step (give the "
					 "workload a scenario with jobs, or jobs under workload.set)");
			}
			if (!docs[i * S + r]) {
				why = errs[i * S + r] = fab_xstrdup(e.msg);
				rc = FAB_EXIT_CHECKS;
			}
		}
		if (why && (quiet || S == 1)) /* -q still says what failed */
			fprintf(stderr, "plan: design %s: %s\n", c->d[i].name, why);
		else if (!quiet && S > 1)
			fprintf(stderr, "plan: design %s: %s at %zu seeds in %.1f s\n", c->d[i].name, why ? why : "ran",
				S, cli_wall_s() - t0);
		else if (!quiet)
			fprintf(stderr, "plan: design %s: %s in %.1f s\n", c->d[i].name, why ? why : "ran",
				cli_wall_s() - t0);
	}
	struct cmp_out o = {c, fab_compare_json(c, docs, (const char *const *)errs), docs};
	if (!strcmp(format, "json")) {
		cli_json_write(o.table, stdout, JSON_INDENT(1));
		fputc('\n', stdout);
	} else {
		fab_compare_write_text(stdout, o.table);
	}
	if (outdir) {
		size_t ns = 3 + 2 * c->n;
		struct out_spec *specs = fab_xcalloc(ns, sizeof *specs);
		char **names = fab_xcalloc(ns, sizeof *names);
		static const char *const fixed[] = {"compare.json", "compare.csv", "compare.html"};
		size_t k = 0;
		for (int j = 0; j < 3; j++)
			specs[k++] = (struct out_spec){fixed[j], w_cmp, -1 - j};
		for (size_t i = 0; i < c->n; i++)
			for (int j = 0; j < 2; j++) {
				if (j && !docs[i * S])
					continue;
				names[k] = fab_xcalloc(32, 1);
				snprintf(names[k], 32, "design-%zu.%s", i + 1, j ? "json" : "yaml");
				specs[k] = (struct out_spec){names[k], w_cmp, (int)(2 * i) + j};
				k++;
			}
		int wrc = cli_write_out_dir(outdir, specs, k, &o);
		if (wrc)
			rc = wrc;
		else if (strcmp(format, "json"))
			printf("written: %s/compare.json, compare.csv, compare.html, design-N.yaml and design-N.json\n",
			       outdir);
		for (size_t i = 0; i < ns; i++)
			free(names[i]);
		free(names);
		free(specs);
	}
	if (fflush(stdout) && !rc)
		rc = FAB_EXIT_IO;
	for (size_t i = 0; i < c->n * S; i++) {
		json_decref(docs[i]);
		free(errs[i]);
	}
	json_decref(o.table);
	free(docs);
	free(errs);
	fab_compare_free(c);
	return rc;
}

/* --price ITEM=USD[,WATTS] */
static int parse_price(const char *s, struct fab_plan_prices *pr)
{
	const char *eq = strchr(s, '=');
	int item = -1;
	for (int i = 0; eq && i < FAB_PI_N; i++)
		if (strlen(fab_plan_item_names[i]) == (size_t)(eq - s) && !strncmp(s, fab_plan_item_names[i], eq - s))
			item = i;
	double usd, w = -1;
	char tail;
	int n = eq ? sscanf(eq + 1, "%lf,%lf%c", &usd, &w, &tail) : 0;
	if (item < 0 || n < 1 || n > 2 || !(usd >= 0) || usd > 1e9 || (n == 2 && !(w >= 0 && w < 1e6))) {
		fprintf(stderr,
			"fabscope: --price %s: expected ITEM=USD or ITEM=USD,WATTS with ITEM one of nic, "
			"switch_port, switch, dac, aoc, sr8, dr4, fr4, lr4, fiber_m\n",
			s);
		return -1;
	}
	pr->usd[item] = usd;
	if (n == 2)
		pr->watts[item] = w;
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
		{"dual-tor", no_argument, NULL, 'd'},
		{"spine-oversubscription", required_argument, NULL, 's'},
		{"tiers", required_argument, NULL, 't'},
		{"output", required_argument, NULL, 'o'},
		{"length-leaf", required_argument, NULL, '0'},
		{"length-spine", required_argument, NULL, '1'},
		{"length-core", required_argument, NULL, '2'},
		{"price", required_argument, NULL, 'p'},
		{"format", required_argument, NULL, 'F'},
		{"compare", required_argument, NULL, 'C'},
		{"out", required_argument, NULL, 'D'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct fab_plan_prices prices;
	fab_plan_prices_default(&prices);
	struct fab_plan_req r;
	fab_plan_req_default(&r);
	r.prices = &prices;
	const char *format = "text";
	const char *out = NULL;
	char why[160];
	int c;
	const char *compare = NULL, *outdir = NULL;
	bool quiet = false;
	while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'G':
		case 'g':
		case 'k':
		case 'R':
		case 't':
		case 'n':
		case 'f':
		case 'O':
		case 's':
		case 'r':
		case 'd':
		case '0':
		case '1':
		case '2': {
			/* the option's name is the plan's key with - for _ */
			const char *name = NULL;
			for (const struct option *o = opts; o->name && !name; o++)
				if (o->val == c)
					name = o->name;
			char key[40];
			snprintf(key, sizeof key, "%s", name);
			for (char *x = key; *x; x++)
				if (*x == '-')
					*x = '_';
			if (fab_plan_req_set(&r, key, optarg ? optarg : "true", why, sizeof why)) {
				fprintf(stderr, "fabscope: --%s: %s\n", name, why);
				return FAB_EXIT_USAGE;
			}
			break;
		}
		case 'p':
			if (parse_price(optarg, &prices))
				return FAB_EXIT_USAGE;
			break;
		case 'C':
			compare = optarg;
			break;
		case 'D':
			outdir = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'F':
			if (!cli_format_ok(optarg, "text|json"))
				return FAB_EXIT_USAGE;
			format = optarg;
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
	if (out && !*out) {
		fprintf(stderr, "fabscope: plan: -o: a file name is needed\n");
		return FAB_EXIT_USAGE;
	}
	if (compare) {
		if (r.gpus || out) {
			fprintf(stderr, "fabscope: plan: --compare takes the cluster from its file (no --gpus, -o)\n");
			return FAB_EXIT_USAGE;
		}
		return run_compare(compare, outdir, format, quiet);
	}
	if (outdir) {
		fprintf(stderr, "fabscope: plan: --out DIR goes with --compare (-o FILE writes the scenario)\n");
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
	if (!strcmp(format, "json")) {
		json_t *j = fab_plan_json(&r, &p);
		cli_json_write(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
		json_decref(j);
	} else {
		fab_plan_write_text(stdout, &r, &p);
	}
	if (out) {
		struct plan_out o = {&r, &p};
		struct out_spec spec = {"", w_yaml, 0};
		int rc = cli_write_out_file(out, &spec, &o);
		if (rc)
			return rc;
		if (strcmp(format, "json"))
			printf("scenario: %s\n", out);
	}
	return fflush(stdout) ? FAB_EXIT_IO : FAB_EXIT_OK;
}
