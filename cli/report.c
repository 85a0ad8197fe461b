/*
 * report.c - `fabscope report`: result documents in, one self-contained
 * HTML page out (src/out/report.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../include/fabscope.h"
#include "cli.h"

static const char *usage_report = "usage: fabscope report RESULT.json... [-o report.html]\n"
				  "       fabscope report DIR/sweep.json [--x KEY] [--y RESULT] [-o sweep.html]\n"
				  "       fabscope report DIR/compare.json [-o compare.html]\n"
				  "       fabscope report twin.json [-o twin.html]\n"
				  "\n"
				  "One self-contained HTML page (no network, no scripts, no fonts to fetch) from\n"
				  "result documents of sim, coll, matrix, a probe and jobs: the documents,\n"
				  "diagnose's suspects linked to the pictures, bus bandwidth against size for\n"
				  "every collective sweep overlaid, each simulation's flow completion times,\n"
				  "busiest queues and their queues over time, each job's iterations, each\n"
				  "matrix as a heatmap with a legend, each simulation's topology with its links'\n"
				  "utilisation, drops, PAUSE and ECN.  A sweep's sweep.json, plan --compare's\n"
				  "compare.json or twin --format json's document alone makes a page of its\n"
				  "own.  Same documents, same bytes.\n"
				  "\n"
				  "options:\n"
				  "  -o, --output FILE     write the page to FILE (default: standard output)\n"
				  "  -s, --section ID      only that section (documents, suspects, busbw, sim-N,\n"
				  "                        matrix-N, job-N-K; N: the document's place): to embed it\n"
				  "  --label NAME          the next document's name on the page (one a document,\n"
				  "                        in their order; default: its file and what differs\n"
				  "                        in its scenario from the others', \"seed=2\")\n"
				  "  --x KEY, --y RESULT   a sweep: the result drawn (default: its first) against\n"
				  "                        the swept key (default: the first that varies), a\n"
				  "                        line for each combination of the others\n"
				  "  -h, --help            show this help (--version: the version)\n"
				  "\n"
				  "exit status: 0 ok, 2 usage, 3 bad document, 4 I/O error\n";

/* the page, made whole in memory first: nothing is written when it fails */
struct page {
	char *text;
	size_t len;
};

static int w_page(FILE *f, void *ctx, int arg)
{
	(void)arg;
	const struct page *p = ctx;
	return fwrite(p->text, 1, p->len, f) != p->len;
}

/* path, when it is a sweep's table or plan --compare's: its page (written
 * to out, or stdout), and an exit status; -1 when it is neither */
static int other_page(const char *path, const char *out, const char *x, const char *y)
{
	struct stat st; /* what is no regular file of a sane size: cli_load_doc says why */
	if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size > (off_t)384 << 20)
		return -1;
	/* both tables lead with their schema: a result document (up to 384
	 * MiB) is told from its first bytes, not parsed twice */
	char head[256] = "";
	FILE *hf = fopen(path, "r");
	size_t got = hf ? fread(head, 1, sizeof head - 1, hf) : 0;
	if (hf)
		fclose(hf);
	head[got] = 0;
	if (!strstr(head, "\"fabscope.sweep/1\"") && !strstr(head, "\"fabscope.plan-compare/1\"") &&
	    !strstr(head, "\"fabscope.calibration/1\""))
		return -1;
	json_t *d = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
	const char *schema = json_string_value(json_object_get(d, "schema"));
	bool sweep = schema && !strcmp(schema, "fabscope.sweep/1"),
	     cmp = schema && !strcmp(schema, "fabscope.plan-compare/1"),
	     twin = schema && !strcmp(schema, "fabscope.calibration/1");
	if (!sweep && !cmp && !twin) {
		json_decref(d);
		return -1;
	}
	struct page p = {NULL, 0};
	struct fab_err err = {0};
	int rc = FAB_EXIT_OK;
	FILE *m = open_memstream(&p.text, &p.len);
	int r = !m      ? fab_err_set(&err, FAB_EIO, "report: out of memory")
		: sweep ? fab_report_sweep(m, d, path, x, y, &err)
		: twin  ? fab_report_twin(m, d, path, &err)
			: fab_report_compare_checked(m, d, path, &err);
	if (m && fclose(m) && !r)
		r = fab_err_set(&err, FAB_EIO, "report: out of memory");
	if (r) {
		fprintf(stderr, "fabscope: %s\n", err.msg);
		rc = fab_err_exit_code(r);
	} else if (out) {
		struct out_spec spec = {"", w_page, 0};
		rc = cli_write_out_file(out, &spec, &p);
	} else if (w_page(stdout, &p, 0) || fflush(stdout)) {
		rc = FAB_EXIT_IO;
	}
	free(p.text);
	json_decref(d);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"section", required_argument, NULL, 's'},
		{"label", required_argument, NULL, 'L'},
		{"x", required_argument, NULL, 'X'},
		{"y", required_argument, NULL, 'Y'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	const char *out = NULL, *only = NULL, *x = NULL, *y = NULL;
	const char *labels[64] = {NULL};
	int nlabels = 0;
	int c, rc = FAB_EXIT_OK;
	while ((c = getopt_long(argc, argv, "o:s:h", opts, NULL)) != -1) {
		if (c == 'o') {
			out = optarg;
		} else if (c == 's') {
			only = optarg;
		} else if (c == 'L') {
			if (nlabels == (int)FAB_ARRAY_LEN(labels)) {
				fprintf(stderr, "fabscope: report: at most 64 --label\n");
				return FAB_EXIT_USAGE;
			}
			labels[nlabels++] = optarg;
		} else if (c == 'X') {
			x = optarg;
		} else if (c == 'Y') {
			y = optarg;
		} else if (c == 'h') {
			fputs(usage_report, stdout);
			return FAB_EXIT_OK;
		} else {
			fputs(usage_report, stderr);
			return FAB_EXIT_USAGE;
		}
	}
	int n = argc - optind;
	if (n < 1) {
		fprintf(stderr, "fabscope: report needs at least one result document\n%s", usage_report);
		return FAB_EXIT_USAGE;
	}
	/* a sweep's or plan --compare's table: a page of its own */
	if (n == 1 && (rc = other_page(argv[optind], out, x, y)) >= 0)
		return rc;
	if (x || y) {
		fprintf(stderr, "fabscope: report: --x and --y go with a sweep's sweep.json\n");
		return FAB_EXIT_USAGE;
	}
	if (nlabels > n) {
		fprintf(stderr, "fabscope: report: %d --label for %d documents (one a document, in their order)\n",
			nlabels, n);
		return FAB_EXIT_USAGE;
	}
	rc = FAB_EXIT_OK;
	json_t **docs = fab_xcalloc((size_t)n, sizeof *docs);
	int loaded = 0;
	for (; loaded < n && !rc; loaded++)
		if (!(docs[loaded] = cli_load_doc(argv[optind + loaded], &rc)))
			break;
	struct page p = {NULL, 0};
	if (!rc) {
		struct fab_err err = {0};
		FILE *m = open_memstream(&p.text, &p.len);
		const char **given = fab_xcalloc((size_t)n, sizeof *given); /* --label i, the i-th document's */
		for (int i = 0; i < nlabels; i++)
			given[i] = labels[i];
		int r = m ? fab_report_write(m, docs, (const char *const *)(argv + optind), given, n, only, &err)
			  : fab_err_set(&err, FAB_EIO, "report: out of memory");
		if (m && fclose(m) && !r)
			r = fab_err_set(&err, FAB_EIO, "report: out of memory");
		if (r) {
			fprintf(stderr, "fabscope: %s\n", err.msg);
			rc = fab_err_exit_code(r);
		}
		free(given);
	}
	if (!rc && out) {
		struct out_spec spec = {"", w_page, 0};
		rc = cli_write_out_file(out, &spec, &p);
	} else if (!rc && (w_page(stdout, &p, 0) || fflush(stdout))) {
		rc = FAB_EXIT_IO;
	}
	free(p.text);
	for (int i = 0; i < n; i++)
		json_decref(docs[i]);
	free(docs);
	return rc;
}
