/*
 * diagnose.c - `fabscope diagnose`: result documents in, ranked suspects
 * out (text, JSON, an SVG heatmap).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../include/fabscope.h"
#include "cli.h"

static const char *usage_diagnose =
	"usage: fabscope diagnose RESULT.json... [options]\n"
	"\n"
	"Reads result documents (fabscope sim, coll, matrix; a real probe's) and names\n"
	"the suspects, ranked, each with its evidence: links with bad frames, NICs slow\n"
	"or flaky in the matrix (with the GPUs behind them and their link), PFC storms,\n"
	"drops concentrated on a port, ECMP imbalance, job iterations far above their\n"
	"median, and with --baseline what got worse than a healthy run.\n"
	"\n"
	"options:\n"
	"  --baseline FILE       a result document of the healthy cluster\n"
	"  --format text|json    (default text)\n"
	"  --svg FILE            a heatmap of the matrix, suspects outlined\n"
	"  -h, --help            show this help (--version: the version)\n"
	"\n"
	"exit status: 0 healthy, 1 a suspect was found, 2 usage, 3 bad input, 4 I/O error\n";

/* a result document: a regular file of at most 384 MiB (parsed, about 3
 * GB: 7.5 bytes of memory a byte), JSON, with the shapes diagnosis reads */
#define DOC_MAX_BYTES (384u << 20)

/* whether the file reads like YAML (its first line that is not blank or a
 * comment starts "key:"): a scenario given where a result document was
 * wanted */
static bool looks_yaml(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char line[256];
	bool yaml = false;
	while (fgets(line, sizeof line, f)) { /* its first line that is not blank or a comment */
		if (line[0] == '#' || !line[strspn(line, " \t\r\n")])
			continue;
		size_t k = strspn(line, "abcdefghijklmnopqrstuvwxyz_");
		yaml = k && line[k] == ':';
		break;
	}
	fclose(f);
	return yaml;
}

/* a fabscope document of another kind than a result: refused by name
 * (the others go on to be checked) */
static int result_only(const json_t *d, const char *path, struct fab_err *err)
{
	const char *which = fab_schema_of(d);
	if (!which || !strcmp(which, "result") || !strcmp(which, "probe"))
		return 0; /* a result, or what fab_diag_validate refuses */
	return fab_err_set(err, FAB_EINVAL,
			   "%s: %s, not a result document: diagnose and report read the results of sim, coll, "
			   "matrix and probe (report draws a sweep's sweep.json and plan --compare's compare.json "
			   "given alone)",
			   path,
			   !strcmp(which, "diagnosis")       ? "a diagnosis"
				   : !strcmp(which, "plan")  ? "a plan"
				   : !strcmp(which, "sweep") ? "a sweep's table"
							     : "a design comparison");
}

json_t *cli_load_doc(const char *path, int *rc)
{
	struct stat st;
	if (stat(path, &st)) {
		fprintf(stderr, "fabscope: %s: cannot open: %s\n", path, strerror(errno));
		*rc = FAB_EXIT_IO;
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		char in[4096];
		struct stat rs;
		bool has = S_ISDIR(st.st_mode) && snprintf(in, sizeof in, "%s/result.json", path) < (int)sizeof in &&
			!stat(in, &rs) && S_ISREG(rs.st_mode);
		fprintf(stderr, "fabscope: %s: %s%s%s\n", path,
			S_ISDIR(st.st_mode) ? "a directory, not a result document" : "not a regular file",
			has ? " (did you mean " : "", has ? "result.json in it?)" : "");
		*rc = FAB_EXIT_IO;
		return NULL;
	}
	if ((uint64_t)st.st_size > DOC_MAX_BYTES) {
		fprintf(stderr, "fabscope: %s: larger than %u MiB\n", path, DOC_MAX_BYTES >> 20);
		*rc = FAB_EXIT_INPUT;
		return NULL;
	}
	json_error_t je;
	json_t *d = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!d) {
		bool io = je.line < 1;
		if (!io && looks_yaml(path))
			fprintf(stderr,
				"fabscope: %s: a scenario (YAML), not a result document: run it first (fabscope sim "
				"%s --out DIR) and give DIR/result.json\n",
				path, path);
		else
			fprintf(stderr, "fabscope: %s:%d:%d: %s\n", path, je.line, je.column, je.text);
		*rc = io ? FAB_EXIT_IO : FAB_EXIT_INPUT;
		return NULL;
	}
	struct fab_err err = {0};
	/* the shapes diagnosis reads first (its messages name them), then the
	 * whole document against doc/schema/ (kind, version, types, ranges) */
	if (result_only(d, path, &err) || fab_diag_validate(d, path, &err) || fab_schema_check(d, path, &err)) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		json_decref(d);
		*rc = FAB_EXIT_INPUT;
		return NULL;
	}
	return d;
}

struct svg_ctx {
	json_t **docs;
	int ndocs;
	const struct fab_diagnosis *d;
	int rc;
};

static int w_svg(FILE *f, void *ctx, int arg)
{
	(void)arg;
	struct svg_ctx *sc = ctx;
	sc->rc = fab_diagnosis_write_svg(f, sc->docs, sc->ndocs, sc->d);
	return sc->rc != 0;
}

int cmd_diagnose(int argc, char **argv)
{
	static const struct option opts[] = {
		{"baseline", required_argument, NULL, 'B'},
		{"format", required_argument, NULL, 'F'},
		{"svg", required_argument, NULL, 'G'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	const char *baseline = NULL, *format = "text", *svg = NULL;
	int c, rc = FAB_EXIT_OK;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'B':
			baseline = optarg;
			break;
		case 'F':
			format = optarg;
			if (!cli_format_ok(format, "text|json"))
				return FAB_EXIT_USAGE;
			break;
		case 'G':
			svg = optarg;
			break;
		case 'h':
			fputs(usage_diagnose, stdout);
			return FAB_EXIT_OK;
		default:
			fputs(usage_diagnose, stderr);
			return FAB_EXIT_USAGE;
		}
	}
	int ndocs = argc - optind;
	if (ndocs < 1) {
		fprintf(stderr, "fabscope: diagnose needs at least one result document\n%s", usage_diagnose);
		return FAB_EXIT_USAGE;
	}
	json_t **docs = calloc((size_t)ndocs, sizeof *docs), *base = NULL;
	int loaded = 0;
	for (int i = 0; i < ndocs && !rc; i++, loaded++)
		docs[i] = cli_load_doc(argv[optind + i], &rc);
	if (!rc && baseline)
		base = cli_load_doc(baseline, &rc);
	struct fab_diagnosis d = {0};
	if (!rc) {
		struct fab_diag_params p;
		struct fab_err err = {0};
		fab_diag_defaults(&p);
		if (fab_diagnose(docs, ndocs, base, &p, &d, &err)) {
			fprintf(stderr, "fabscope: %s\n", err.msg);
			rc = FAB_EXIT_INPUT;
		}
	}
	if (!rc && svg) {
		struct svg_ctx sc = {docs, ndocs, &d, 0};
		struct out_spec spec = {"", w_svg, 0};
		int wrc = cli_write_out_file(svg, &spec, &sc);
		if (sc.rc == FAB_EINVAL) {
			fprintf(stderr, "fabscope: --svg: no matrix in the documents\n");
			rc = FAB_EXIT_INPUT;
		} else if (wrc) {
			rc = wrc;
		}
	}
	if (!rc) {
		if (!strcmp(format, "json")) {
			json_t *j = fab_diagnosis_json(&d);
			cli_json_write(j, stdout, JSON_INDENT(2));
			fputc('\n', stdout);
			json_decref(j);
		} else {
			fab_diagnosis_write_text(stdout, &d);
		}
		rc = d.n ? FAB_EXIT_CHECKS : FAB_EXIT_OK;
	}
	fab_diagnosis_free(&d);
	for (int i = 0; i < loaded; i++)
		json_decref(docs[i]);
	free(docs);
	json_decref(base);
	return rc;
}
