/*
 * twin.c - fabscope calibrate and fabscope twin: the probe's documents
 * against the cluster's design scenario.
 *
 * calibrate: the design's matrix simulated with the probe's sizes, the fit
 * (fab_twin_fit), the calibrated scenario written ("base:" the design, the
 * fitted keys, a degrade fault for each link that departs).  twin: the
 * same, then the calibrated scenario run through the tests the probe ran,
 * each pair and each collective row measured against expected (the design
 * with the fitted keys) and predicted (the calibrated scenario).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define MAX_SETS 64
#define REFINE_STEPS 4

static const char *usage_calibrate =
	"usage: fabscope calibrate SCENARIO.yaml PROBE.json... -o CAL.yaml [options]\n"
	"\n"
	"Fit the cluster's design scenario to what the probe measured on the real\n"
	"cluster: its matrix (fabscope probe --test matrix --json).  Writes the\n"
	"calibrated scenario: \"base:\" the design, the values every host shares\n"
	"(achievable rate, TCP's per-message latency) and a degrade fault for each\n"
	"link that departs from them, each with where it came from.\n"
	"\n"
	"options:\n"
	"  -o, --output FILE     the calibrated scenario (required)\n"
	"  --map FILE            probe ranks to the scenario's NICs, a line each: RANK NIC\n"
	"                        (RANK: a number, rank2@10.0.0.3 or its address);\n"
	"                        default rank i is the scenario's NIC i\n"
	"  --tolerance F         a pair under F x the cluster's factor is low (default 0.8)\n"
	"  --set KEY=VALUE       override a key of the scenario (repeatable)\n"
	"  --format text|json    the fit as text (default) or JSON (fabscope.calibration/1)\n"
	"  -h, --help            show this help\n"
	"\n"
	"example:\n"
	"  fabscope calibrate cluster.yaml matrix.json -o calibrated.yaml\n"
	"exit status: 0 ok, 2 usage, 3 bad input, 4 I/O error (doc/twin.md)\n";

static const char *usage_twin = "usage: fabscope twin SCENARIO.yaml PROBE.json... [options]\n"
				"\n"
				"The cluster's digital twin: calibrate (as fabscope calibrate), then run\n"
				"the calibrated scenario through the tests the probe ran (its matrix, its\n"
				"collectives) and print, side by side, measured, expected (the design at\n"
				"the fitted values) and predicted (the calibrated scenario, departures\n"
				"included), and the departures ranked.\n"
				"\n"
				"options:\n"
				"  -o, --output FILE     also write the calibrated scenario there\n"
				"  --map FILE, --tolerance F, --set KEY=VALUE, --format text|json: as calibrate's\n"
				"  -h, --help            show this help\n"
				"\n"
				"example:\n"
				"  fabscope twin cluster.yaml matrix.json allreduce.json\n"
				"exit status: 0 nothing departs, 1 departures found, 2 usage, 3 bad input,\n"
				"4 I/O error (doc/twin.md)\n";

struct twin_args {
	const char *scenario, *output, *map, *format;
	const char *sets[MAX_SETS];
	size_t nsets;
	struct fab_twin_params p;
	json_t *matrix; /* the probe's matrix document */
	json_t **colls; /* its collective documents */
	const char **coll_paths;
	int ncolls;
	const char *matrix_path;
	uint32_t *map_v; /* rank -> design endpoint, or NULL */
	char cal_path[PATH_MAX];
	bool cal_temp;
	bool first; /* the simulated matrix over each server's first NIC (matrix.nics=first) */
};

static int parse_args(struct twin_args *a, int argc, char **argv, const char *usage)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"map", required_argument, NULL, 'M'},
		{"tolerance", required_argument, NULL, 'T'},
		{"set", required_argument, NULL, 'S'},
		{"format", required_argument, NULL, 'F'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	int c;
	char *end;
	a->format = "text";
	fab_twin_defaults(&a->p);
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			a->output = optarg;
			break;
		case 'M':
			a->map = optarg;
			break;
		case 'T':
			errno = 0;
			a->p.tolerance = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(a->p.tolerance > 0 && a->p.tolerance < 1)) {
				fprintf(stderr, "fabscope: --tolerance %s: expected a number between 0 and 1\n",
					optarg);
				return FAB_EXIT_USAGE;
			}
			break;
		case 'S':
			if (a->nsets == MAX_SETS - 4) {
				fprintf(stderr, "fabscope: at most %d --set options\n", MAX_SETS - 4);
				return FAB_EXIT_USAGE;
			}
			a->sets[a->nsets++] = optarg;
			break;
		case 'F':
			a->format = optarg;
			if (!cli_format_ok(a->format, "text|json"))
				return FAB_EXIT_USAGE;
			break;
		case 'h':
			fputs(usage, stdout);
			return -1;
		default:
			fputs(usage, stderr);
			return FAB_EXIT_USAGE;
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "fabscope: %s needs the scenario and at least one probe document\n%s", argv[0], usage);
		return FAB_EXIT_USAGE;
	}
	a->scenario = argv[optind];
	return 0;
}

/* the probe documents: one matrix, any number of collectives */
static int load_docs(struct twin_args *a, int argc, char **argv)
{
	int rc = 0, n = argc - optind - 1;
	a->colls = calloc((size_t)n, sizeof *a->colls);
	a->coll_paths = calloc((size_t)n, sizeof *a->coll_paths);
	for (int i = 0; i < n && !rc; i++) {
		const char *path = argv[optind + 1 + i];
		json_t *d = cli_load_doc(path, &rc);
		if (!d)
			break;
		const char *kind = json_string_value(json_object_get(d, "kind"));
		if (!kind || strcmp(kind, "probe") ||
		    (!json_object_get(d, "matrix") && !json_object_get(d, "collective"))) {
			fprintf(stderr,
				"fabscope: %s: not a probe's matrix or collective document (fabscope probe --test matrix "
				"or coll --json FILE)\n",
				path);
			json_decref(d);
			return FAB_EXIT_INPUT;
		}
		const json_t *rows = json_object_get(json_object_get(d, "collective"), "rows");
		json_int_t mb = json_integer_value(json_object_get(json_object_get(d, "matrix"), "bytes"));
		bool up = true;
		for (size_t r = 1; r < json_array_size(rows); r++)
			up = up &&
				json_integer_value(json_object_get(json_array_get(rows, r), "size_bytes")) >
					json_integer_value(json_object_get(json_array_get(rows, r - 1), "size_bytes"));
		if (json_object_get(d, "matrix") ? mb < 1 || mb > 1000000000000LL : !json_array_size(rows) || !up) {
			fprintf(stderr, "fabscope: %s: %s\n", path,
				json_object_get(d, "matrix") ? "matrix.bytes: expected 1 to 1e12 bytes"
							     : "collective.rows: expected rows of growing sizes");
			json_decref(d);
			return FAB_EXIT_INPUT;
		}
		if (json_object_get(d, "matrix")) {
			if (a->matrix) {
				fprintf(stderr, "fabscope: %s: a second matrix (%s is the first): give one\n", path,
					a->matrix_path);
				json_decref(d);
				return FAB_EXIT_USAGE;
			}
			a->matrix = d;
			a->matrix_path = path;
		} else {
			a->coll_paths[a->ncolls] = path;
			a->colls[a->ncolls++] = d;
		}
	}
	if (!rc && !a->matrix) {
		fprintf(stderr,
			"fabscope: no probe matrix among the documents: calibration fits the matrix "
			"(fabscope probe --test matrix --json FILE)\n");
		rc = FAB_EXIT_USAGE;
	}
	return rc;
}

/* rank word: a number, rankN@ADDR or ADDR; -1 when no rank is it */
static int rank_of(const json_t *ends, const char *w)
{
	char *end;
	errno = 0;
	long r = strtol(w, &end, 10);
	if (!errno && end != w && !*end && r >= 0 && (size_t)r < json_array_size(ends))
		return (int)r;
	for (size_t i = 0; i < json_array_size(ends); i++) {
		const char *e = json_string_value(json_array_get(ends, i)), *at = e ? strchr(e, '@') : NULL;
		if (e && (!strcmp(e, w) || (at && !strcmp(at + 1, w))))
			return (int)i;
	}
	return -1;
}

/* --map FILE against the design's endpoints; an exit status */
static int read_map(struct twin_args *a, const json_t *design)
{
	const json_t *ends = json_object_get(json_object_get(a->matrix, "matrix"), "endpoints");
	const json_t *nics = json_object_get(json_object_get(design, "matrix"), "endpoints");
	size_t n = json_array_size(ends);
	FILE *f = fopen(a->map, "r");
	if (!f) {
		fprintf(stderr, "fabscope: --map %s: cannot open: %s\n", a->map, strerror(errno));
		return FAB_EXIT_IO;
	}
	a->map_v = malloc(n * sizeof *a->map_v);
	for (size_t i = 0; i < n; i++)
		a->map_v[i] = UINT32_MAX;
	char line[512], rw[256], nw[256], extra[8];
	int ln = 0, rc = 0;
	while (!rc && fgets(line, sizeof line, f)) {
		ln++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		int got = sscanf(line, "%255s %255s %7s", rw, nw, extra);
		if (got <= 0)
			continue;
		int r = got == 2 ? rank_of(ends, rw) : -2;
		size_t k = 0;
		while (r >= 0 && k < json_array_size(nics) && strcmp(json_string_value(json_array_get(nics, k)), nw))
			k++;
		if (got != 2)
			fprintf(stderr, "fabscope: %s:%d: expected two words, RANK NIC\n", a->map, ln);
		else if (r < 0)
			fprintf(stderr,
				"fabscope: %s:%d:1: %s: no such rank in %s (a number below %zu, rankN@ADDR or ADDR)\n",
				a->map, ln, rw, a->matrix_path, n);
		else if (k == json_array_size(nics))
			fprintf(stderr, "fabscope: %s:%d: %s: no such NIC in %s\n", a->map, ln, nw, a->scenario);
		else if (a->map_v[r] != UINT32_MAX)
			fprintf(stderr, "fabscope: %s:%d:1: %s: rank %d mapped twice\n", a->map, ln, rw, r);
		for (size_t i = 0; r >= 0 && k < json_array_size(nics) && i < n; i++)
			if (a->map_v[i] == k) {
				fprintf(stderr, "fabscope: %s:%d: %s: NIC given to rank %zu already\n", a->map, ln, nw,
					i);
				r = -3;
			}
		if (got != 2 || r < 0 || k == json_array_size(nics) || a->map_v[r] != UINT32_MAX)
			rc = FAB_EXIT_INPUT;
		else
			a->map_v[r] = (uint32_t)k;
	}
	fclose(f);
	for (size_t i = 0; !rc && i < n; i++)
		if (a->map_v[i] == UINT32_MAX) {
			fprintf(stderr, "fabscope: --map %s: rank %zu (%s) has no NIC\n", a->map, i,
				json_string_value(json_array_get(ends, i)));
			rc = FAB_EXIT_INPUT;
		}
	return rc;
}

/* the design's matrix with the probe's sizes (no timeout: the real pairs
 * were let finish) */
static json_t *run_matrix(const struct twin_args *a, const char *scenario, const json_t *keys, struct fab_err *err)
{
	const char *sets[MAX_SETS + 16];
	char bytes[64], kv[8][160];
	size_t n = 0, nk = 0;
	for (size_t i = 0; i < a->nsets; i++)
		sets[n++] = a->sets[i];
	snprintf(bytes, sizeof bytes, "matrix.bytes=%lld",
		 (long long)json_integer_value(json_object_get(json_object_get(a->matrix, "matrix"), "bytes")));
	sets[n++] = bytes;
	sets[n++] = "matrix.latency_bytes=8";
	sets[n++] = "matrix.timeout=0";
	if (a->first)
		sets[n++] = "matrix.nics=first";
	const char *mode = json_string_value(json_object_get(json_object_get(a->matrix, "matrix"), "mode"));
	if (mode && !strcmp(mode, "serial"))
		sets[n++] = "matrix.serial=true";
	for (size_t i = 0; i < json_array_size(keys) && nk < 8; i++, nk++) {
		const json_t *k = json_array_get(keys, i);
		snprintf(kv[nk], sizeof kv[nk], "%s=%s", json_string_value(json_object_get(k, "key")),
			 json_string_value(json_object_get(k, "value")));
		sets[n++] = kv[nk];
	}
	return cli_run_doc(FAB_GRID_MATRIX, scenario, sets, n, err);
}

/* the base's path as the calibrated scenario gives it: its name when the
 * two share a folder, else the absolute path */
static void base_path(const struct twin_args *a, char *out, size_t len)
{
	char sdir[PATH_MAX], odir[PATH_MAX], s1[PATH_MAX], s2[PATH_MAX], real[PATH_MAX];
	snprintf(s1, sizeof s1, "%s", a->scenario);
	snprintf(s2, sizeof s2, "%s", a->cal_path);
	bool same = realpath(dirname(s1), sdir) && realpath(dirname(s2), odir) && !strcmp(sdir, odir);
	snprintf(s1, sizeof s1, "%s", a->scenario);
	if (same)
		snprintf(out, len, "%s", basename(s1));
	else if (realpath(a->scenario, real))
		snprintf(out, len, "%s", real);
	else
		snprintf(out, len, "%s", a->scenario);
}

/* text for a YAML comment: a control character (a line break above all,
 * which would end the comment) printed as '?' */
static void comment(FILE *f, const char *s)
{
	for (; s && *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

static void yaml_string(FILE *f, const char *s)
{
	json_t *j = json_string(s);
	char *q = json_dumps(j, JSON_ENCODE_ANY);
	fputs(q ? q : "\"\"", f);
	free(q);
	json_decref(j);
}

/* the calibrated scenario: a writer for cli_write_out_file */
static int write_cal(FILE *f, void *ctx, int arg)
{
	(void)arg;
	const json_t *const *c = ctx;
	const struct twin_args *a = (const void *)c[0];
	const json_t *fit = c[1];
	char base[PATH_MAX];
	base_path(a, base, sizeof base);
	fputs("# fabscope calibrate: ", f);
	comment(f, a->scenario);
	fputs(" fitted to the probe's matrix ", f);
	comment(f, a->matrix_path);
	fprintf(f, " (%lld hosts, %lld bytes a pair)\n", (long long)json_integer_value(json_object_get(fit, "ranks")),
		(long long)json_integer_value(json_object_get(fit, "bytes")));
	if (a->nsets) {
		fputs("# fitted with", f);
		for (size_t s = 0; s < a->nsets; s++) {
			fputs(" --set ", f);
			comment(f, a->sets[s]);
		}
		fputs(": run it with the same\n", f);
	}
	fputs("base: ", f);
	yaml_string(f, base);
	fputc('\n', f);
	/* keys in sections: the parts they share with the key before them
	 * are open */
	char prev[160] = "";
	const json_t *k;
	size_t i;
	json_array_foreach(json_object_get(fit, "keys"), i, k)
	{
		const char *key = json_string_value(json_object_get(k, "key"));
		size_t common = 0, depth = 0;
		for (size_t x = 0; key[x] && key[x] == prev[x]; x++)
			if (key[x] == '.')
				common = x + 1;
		for (size_t x = 0; x < common; x++)
			depth += key[x] == '.';
		const char *part = key + common, *dot;
		while ((dot = strchr(part, '.'))) {
			fprintf(f, "%*s%.*s:\n", (int)(2 * depth++), "", (int)(dot - part), part);
			part = dot + 1;
		}
		fprintf(f, "%*s%s: %s  # design ", (int)(2 * depth), "", part,
			json_string_value(json_object_get(k, "value")));
		comment(f, json_string_value(json_object_get(k, "design")));
		fputs("; ", f);
		comment(f, json_string_value(json_object_get(k, "why")));
		fputc('\n', f);
		snprintf(prev, sizeof prev, "%s", key);
	}
	bool any = false;
	json_array_foreach(json_object_get(fit, "departures"), i, k)
	{
		const json_t *flt = json_object_get(k, "fault");
		if (!flt)
			continue;
		if (!any)
			fputs("faults:  # the links and hosts that depart, as measured\n", f);
		any = true;
		bool rate = json_object_get(flt, "rate") != NULL;
		fprintf(f, "  - {kind: %s, node: ", rate ? "degrade" : "delay");
		yaml_string(f, json_string_value(json_object_get(flt, "node")));
		fputs(", peer: ", f);
		yaml_string(f, json_string_value(json_object_get(flt, "peer")));
		fprintf(f, ", %s: %s}  # ", rate ? "rate" : "delay",
			json_string_value(json_object_get(flt, rate ? "rate" : "delay")));
		comment(f, json_string_value(json_object_get(k, "target")));
		if (rate)
			fprintf(f, ": %.3f of expected, %lld of %lld pairs low\n",
				json_number_value(json_object_get(k, "ratio")),
				(long long)json_integer_value(json_object_get(k, "low_pairs")),
				(long long)json_integer_value(json_object_get(k, "pairs")));
		else
			fprintf(f, ": %.1f us one way, the hosts' median %.1f us\n",
				json_number_value(json_object_get(k, "measured_us")),
				json_number_value(json_object_get(k, "expected_us")));
	}
	return ferror(f) ? -1 : 0;
}

/* the probe's collective run on scenario (with keys as --set): its
 * document, or NULL and err */
static json_t *run_coll(const struct twin_args *a, const json_t *probe, const char *scenario, const json_t *keys,
			struct fab_err *err)
{
	const json_t *c = json_object_get(probe, "collective"), *rows = json_object_get(c, "rows");
	const char *sets[MAX_SETS + 16];
	char kv[16][160];
	size_t n = 0, nk = 0;
	for (size_t i = 0; i < a->nsets; i++)
		sets[n++] = a->sets[i];
	json_int_t lo = json_integer_value(json_object_get(json_array_get(rows, 0), "size_bytes"));
	json_int_t hi = json_integer_value(
		json_object_get(json_array_get(rows, json_array_size(rows) - 1), "size_bytes"));
	json_int_t f2 = json_integer_value(json_object_get(json_array_get(rows, 1), "size_bytes"));
	snprintf(kv[nk++], sizeof kv[0], "collective.op=%s", json_string_value(json_object_get(c, "op")));
	snprintf(kv[nk++], sizeof kv[0], "collective.algo=%s", json_string_value(json_object_get(c, "algo")));
	snprintf(kv[nk++], sizeof kv[0], "collective.channels=%lld",
		 (long long)json_integer_value(json_object_get(c, "channels")));
	snprintf(kv[nk++], sizeof kv[0], "collective.datatype=%s", json_string_value(json_object_get(c, "datatype")));
	snprintf(kv[nk++], sizeof kv[0], "collective.gpus=%lld",
		 (long long)json_integer_value(json_object_get(c, "ranks")));
	snprintf(kv[nk++], sizeof kv[0], "collective.min_bytes=%lld", (long long)lo);
	snprintf(kv[nk++], sizeof kv[0], "collective.max_bytes=%lld", (long long)hi);
	snprintf(kv[nk++], sizeof kv[0], "collective.step_factor=%lld",
		 (long long)(f2 > lo && lo > 0 && f2 / lo >= 2 ? f2 / lo : 2));
	snprintf(kv[nk++], sizeof kv[0], "collective.iters=5");
	snprintf(kv[nk++], sizeof kv[0], "collective.warmup=1");
	for (size_t i = 0; i < json_array_size(keys) && nk < 16; i++) {
		const json_t *k = json_array_get(keys, i);
		snprintf(kv[nk++], sizeof kv[0], "%s=%s", json_string_value(json_object_get(k, "key")),
			 json_string_value(json_object_get(k, "value")));
	}
	for (size_t i = 0; i < nk; i++)
		sets[n++] = kv[i];
	return cli_run_doc(FAB_GRID_COLL, scenario, sets, n, err);
}

static double row_busbw(const json_t *doc, json_int_t size)
{
	size_t i;
	const json_t *r;
	json_array_foreach(json_object_get(json_object_get(doc, "collective"), "rows"), i, r)
	{
		if (json_integer_value(json_object_get(r, "size_bytes")) == size)
			return json_number_value(json_object_get(r, "busbw_GBps"));
	}
	return NAN;
}

/* each probe collective's rows: measured, expected, predicted */
static json_t *compare_colls(const struct twin_args *a, const json_t *keys, struct fab_err *err)
{
	json_t *out = json_array();
	for (int i = 0; i < a->ncolls; i++) {
		json_t *exp = run_coll(a, a->colls[i], a->scenario, keys, err);
		json_t *pred = exp ? run_coll(a, a->colls[i], a->cal_path, NULL, err) : NULL;
		if (!pred) {
			json_decref(exp);
			json_decref(out);
			return NULL;
		}
		const json_t *c = json_object_get(a->colls[i], "collective"), *r;
		json_t *o = json_object(), *rows = json_array();
		json_object_set_new(o, "document", json_string(a->coll_paths[i]));
		json_object_set(o, "op", json_object_get(c, "op"));
		json_object_set(o, "algo", json_object_get(c, "algo"));
		json_object_set(o, "ranks", json_object_get(c, "ranks"));
		size_t k;
		json_array_foreach(json_object_get(c, "rows"), k, r)
		{
			json_int_t size = json_integer_value(json_object_get(r, "size_bytes"));
			double e = row_busbw(exp, size), p = row_busbw(pred, size);
			json_array_append_new(rows,
					      json_pack("{sI sO so so}", "size_bytes", size, "measured_busbw_GBps",
							json_object_get(r, "busbw_GBps"), "expected_busbw_GBps",
							isnan(e) ? json_null() : json_real(e), "predicted_busbw_GBps",
							isnan(p) ? json_null() : json_real(p)));
		}
		json_object_set_new(o, "rows", rows);
		json_array_append_new(out, o);
		json_decref(exp);
		json_decref(pred);
	}
	return out;
}

static void print_fit(FILE *f, const struct twin_args *a, const json_t *fit)
{
	const json_t *lat = json_object_get(fit, "latency"), *k;
	size_t i;
	fprintf(f, "fabscope calibrate: %lld hosts, %lld B a pair: %lld of %lld pairs low against %s\n",
		(long long)json_integer_value(json_object_get(fit, "ranks")),
		(long long)json_integer_value(json_object_get(fit, "bytes")),
		(long long)json_integer_value(json_object_get(fit, "low_pairs")),
		(long long)json_integer_value(json_object_get(fit, "pairs")), a->scenario);
	fprintf(f, "factor: %.3f of the design's rate (the median of the pairs that are not low)\n",
		json_number_value(json_object_get(fit, "factor")));
	if (json_is_number(json_object_get(lat, "measured_us")))
		fprintf(f, "latency: %.2f us one way measured (the hosts' median), %.2f us in the design\n",
			json_number_value(json_object_get(lat, "measured_us")),
			json_number_value(json_object_get(lat, "expected_us")));
	json_array_foreach(json_object_get(fit, "keys"), i, k)
	{
		fprintf(f, "%s %s = %s (design %s): %s\n",
			i ? "     " : "keys:", json_string_value(json_object_get(k, "key")),
			json_string_value(json_object_get(k, "value")), json_string_value(json_object_get(k, "design")),
			json_string_value(json_object_get(k, "why")));
	}
	const json_t *res = json_object_get(fit, "residuals");
	if (res)
		fprintf(f,
			"residuals: the calibrated scenario gives the pairs what they measured within %.1f%% (median); "
			"the furthest, %lld -> %lld, measured %.2f x predicted\n",
			100 * json_number_value(json_object_get(res, "median_ratio_off")),
			(long long)json_integer_value(json_array_get(json_object_get(res, "worst_pair"), 0)),
			(long long)json_integer_value(json_array_get(json_object_get(res, "worst_pair"), 1)),
			json_number_value(json_object_get(res, "worst_ratio")));
	size_t nd = json_array_size(json_object_get(fit, "departures"));
	fprintf(f, "%zu departure%s%s\n", nd, nd == 1 ? "" : "s", nd ? " (worst first):" : "");
	json_array_foreach(json_object_get(fit, "departures"), i, k)
	{
		const char *kind = json_string_value(json_object_get(k, "kind"));
		double r = json_number_value(json_object_get(k, "ratio"));
		if (!strcmp(kind, "host")) {
			const json_t *hf = json_object_get(k, "fault");
			fprintf(f, "%2zu. %s: latency %.1f us, %.1fx the hosts' median %.1f us%s%s\n", i + 1,
				json_string_value(json_object_get(k, "target")),
				json_number_value(json_object_get(k, "measured_us")), r,
				json_number_value(json_object_get(k, "expected_us")), hf ? ": its link delays by " : "",
				hf ? json_string_value(json_object_get(hf, "delay")) : "");
			continue;
		}
		fprintf(f, "%2zu. %s: %.2f of expected, %lld of %lld pairs low (%.4g GB/s measured, %.4g expected)",
			i + 1, json_string_value(json_object_get(k, "target")), r,
			(long long)json_integer_value(json_object_get(k, "low_pairs")),
			(long long)json_integer_value(json_object_get(k, "pairs")),
			json_number_value(json_object_get(k, "measured_GBps")),
			json_number_value(json_object_get(k, "expected_GBps")));
		const json_t *flt = json_object_get(k, "fault");
		if (flt)
			fprintf(f, ": runs at %s", json_string_value(json_object_get(flt, "rate")));
		fputc('\n', f);
	}
}

/* twin's tables: every pair (up to 16 hosts; past that the low ones), then
 * each collective's rows */
static void print_twin(FILE *f, const json_t *fit, const json_t *pairs, const json_t *colls)
{
	size_t n = json_integer_value(json_object_get(fit, "ranks"));
	double tol = json_number_value(json_object_get(fit, "tolerance"));
	fprintf(f, "pairs, GB/s:  measured  expected  predicted  measured/predicted%s\n",
		n > 16 ? " (the pairs under the tolerance)" : "");
	size_t i, k;
	const json_t *c, *r;
	json_array_foreach(pairs, i, r)
	{
		double m = json_number_value(json_object_get(r, "measured_GBps"));
		double e = json_number_value(json_object_get(r, "expected_GBps"));
		double p = json_number_value(json_object_get(r, "predicted_GBps"));
		if (n > 16 && m >= tol * e)
			continue;
		fprintf(f, "  %3lld -> %-3lld   %8.4g  %8.4g  %9.4g  %.2f\n",
			(long long)json_integer_value(json_object_get(r, "from")),
			(long long)json_integer_value(json_object_get(r, "to")), m, e, p, p > 0 ? m / p : NAN);
	}
	json_array_foreach(colls, i, c)
	{
		fprintf(f, "%s %s, %lld ranks (%s), busbw GB/s:  measured  expected  predicted  measured/predicted\n",
			json_string_value(json_object_get(c, "op")), json_string_value(json_object_get(c, "algo")),
			(long long)json_integer_value(json_object_get(c, "ranks")),
			json_string_value(json_object_get(c, "document")));
		json_array_foreach(json_object_get(c, "rows"), k, r)
		{
			double m = json_number_value(json_object_get(r, "measured_busbw_GBps"));
			double p = json_number_value(json_object_get(r, "predicted_busbw_GBps"));
			fprintf(f, "  %12lld B  %8.4g  %8.4g  %9.4g  %.2f\n",
				(long long)json_integer_value(json_object_get(r, "size_bytes")), m,
				json_number_value(json_object_get(r, "expected_busbw_GBps")), p, p > 0 ? m / p : NAN);
		}
	}
}

static void args_free(struct twin_args *a)
{
	json_decref(a->matrix);
	for (int i = 0; i < a->ncolls; i++)
		json_decref(a->colls[i]);
	free(a->colls);
	free(a->coll_paths);
	free(a->map_v);
	if (a->cal_temp)
		unlink(a->cal_path);
}

/* calibrate, and for twin the comparisons; an exit status */
static int run(int argc, char **argv, bool twin)
{
	struct twin_args a = {0};
	int rc = parse_args(&a, argc, argv, twin ? usage_twin : usage_calibrate);
	if (rc)
		return rc < 0 ? FAB_EXIT_OK : rc;
	if (!twin && !a.output) {
		fprintf(stderr, "fabscope: calibrate needs -o FILE, where the calibrated scenario goes\n%s",
			usage_calibrate);
		return FAB_EXIT_USAGE;
	}
	char ro[PATH_MAX], rs[PATH_MAX];
	if (a.output && realpath(a.output, ro) && realpath(a.scenario, rs) && !strcmp(ro, rs)) {
		fprintf(stderr, "fabscope: -o %s: that is the scenario; the calibrated one is written beside it\n",
			a.output);
		return FAB_EXIT_USAGE;
	}
	json_t *design = NULL, *fit = NULL, *exp = NULL, *pred = NULL, *colls = NULL, *out = NULL;
	struct fab_err err = {0};
	if ((rc = load_docs(&a, argc, argv)))
		goto done;
	if (!(design = run_matrix(&a, a.scenario, NULL, &err)))
		goto failed;
	/* one rank a host: the probe's ranks against each server's first NIC */
	size_t nranks = json_array_size(json_object_get(json_object_get(a.matrix, "matrix"), "endpoints"));
	if (!a.map && json_array_size(json_object_get(json_object_get(design, "matrix"), "endpoints")) > nranks) {
		json_t *per_server;
		a.first = true;
		if (!(per_server = run_matrix(&a, a.scenario, NULL, &err)))
			goto failed;
		if (json_array_size(json_object_get(json_object_get(per_server, "matrix"), "endpoints")) == nranks) {
			json_decref(design);
			design = per_server;
		} else {
			a.first = false;
			json_decref(per_server);
		}
	}
	if (a.map && (rc = read_map(&a, design)))
		goto done;
	if (!(fit = fab_twin_fit(a.matrix, design, a.map_v, &a.p, &err)))
		goto failed;
	/* the scenario is refined in a file of its own (beside -o, so that
	 * its base is named as -o will name it); -o is written once it runs */
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", a.output ? a.output : "");
	const char *tmp = getenv("TMPDIR");
	snprintf(a.cal_path, sizeof a.cal_path, "%s/.fabscope-twin-XXXXXX.yaml",
		 a.output              ? dirname(dir)
			 : tmp && *tmp ? tmp
				       : "/tmp");
	int fd = mkstemps(a.cal_path, 5);
	if (fd < 0) {
		fprintf(stderr, "fabscope: %s: cannot create: %s\n", a.cal_path, strerror(errno));
		rc = FAB_EXIT_IO;
		goto done;
	}
	close(fd);
	a.cal_temp = true;
	const void *ctx[2] = {&a, fit};
	struct out_spec spec = {"", write_cal, 0};
	/* the faults' rates refined until the calibrated scenario's matrix
	 * gives their pairs what was measured (within 3%) */
	for (int it = 0;; it++) {
		if ((rc = cli_write_out_file(a.cal_path, &spec, (void *)ctx)))
			goto done;
		json_decref(pred);
		if (!(pred = run_matrix(&a, a.cal_path, NULL, &err)))
			goto failed;
		if (it == REFINE_STEPS || fab_twin_refine(fit, a.matrix, pred, a.map_v, 0.03) < 0.03)
			break;
	}
	/* what the calibrated scenario explains is not a departure (the
	 * file carries only faults, which pruning leaves alone) */
	fab_twin_prune(fit, a.matrix, pred, a.map_v);
	fab_twin_residuals(fit, a.matrix, pred, a.map_v);
	if (a.output && (rc = cli_write_out_file(a.output, &spec, (void *)ctx)))
		goto done;
	out = json_incref(fit);
	if (twin) {
		if (!(exp = run_matrix(&a, a.scenario, json_object_get(fit, "keys"), &err)) ||
		    !(colls = compare_colls(&a, json_object_get(fit, "keys"), &err)))
			goto failed;
		json_object_set_new(out, "twin",
				    json_pack("{so sO}", "pairs", fab_twin_pairs(fit, a.matrix, exp, pred, a.map_v),
					      "collectives", colls));
	}
	if (!strcmp(a.format, "json")) {
		cli_json_write(out, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	} else {
		print_fit(stdout, &a, fit);
		if (twin)
			print_twin(stdout, fit, json_object_get(json_object_get(out, "twin"), "pairs"), colls);
		if (a.output)
			printf("wrote %s\n", a.output);
	}
	rc = twin && json_array_size(json_object_get(fit, "departures")) ? FAB_EXIT_CHECKS : FAB_EXIT_OK;
	goto done;
failed:
	fprintf(stderr, "fabscope: %s: %s\n", twin ? "twin" : "calibrate", err.msg);
	rc = fab_err_exit_code(err.code);
done:
	json_decref(out);
	json_decref(colls);
	json_decref(pred);
	json_decref(exp);
	json_decref(fit);
	json_decref(design);
	args_free(&a);
	return rc;
}

int cmd_calibrate(int argc, char **argv)
{
	return run(argc, argv, false);
}

int cmd_twin(int argc, char **argv)
{
	return run(argc, argv, true);
}
