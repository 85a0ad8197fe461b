/*
 * report.c - `fabscope report`: result documents in, one self-contained
 * HTML page out (src/out/report.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/fabscope.h"
#include "cli.h"

static const char *usage_report = "usage: fabscope report RESULT.json... [-o report.html]\n"
				  "\n"
				  "One self-contained HTML page (no network, no scripts, no fonts to fetch) from\n"
				  "result documents of sim, coll, matrix, a probe and jobs: the documents,\n"
				  "diagnose's suspects linked to the pictures, bus bandwidth against size for\n"
				  "every collective sweep overlaid, each simulation's flow completion times,\n"
				  "busiest queues and their queues over time, each job's iterations, each\n"
				  "matrix as a heatmap with a legend, each simulation's topology with its links'\n"
				  "utilisation, drops, PAUSE and ECN.  Same documents, same bytes.\n"
				  "\n"
				  "options:\n"
				  "  -o, --output FILE     write the page to FILE (default: standard output)\n"
				  "  -s, --section ID      only that section (documents, suspects, busbw, sim-N,\n"
				  "                        matrix-N, job-N-K; N: the document's place): to embed it\n"
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

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"section", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	const char *out = NULL, *only = NULL;
	int c, rc = FAB_EXIT_OK;
	while ((c = getopt_long(argc, argv, "o:s:h", opts, NULL)) != -1) {
		if (c == 'o') {
			out = optarg;
		} else if (c == 's') {
			only = optarg;
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
	json_t **docs = fab_xcalloc((size_t)n, sizeof *docs);
	int loaded = 0;
	for (; loaded < n && !rc; loaded++)
		if (!(docs[loaded] = cli_load_doc(argv[optind + loaded], &rc)))
			break;
	struct page p = {NULL, 0};
	if (!rc) {
		struct fab_err err = {0};
		FILE *m = open_memstream(&p.text, &p.len);
		int r = m ? fab_report_write(m, docs, (const char *const *)(argv + optind), n, only, &err)
			  : fab_err_set(&err, FAB_EIO, "report: out of memory");
		if (m && fclose(m) && !r)
			r = fab_err_set(&err, FAB_EIO, "report: out of memory");
		if (r) {
			fprintf(stderr, "fabscope: %s\n", err.msg);
			rc = fab_err_exit_code(r);
		}
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
