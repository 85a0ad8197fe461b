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

struct page {
	json_t **docs;
	const char **names;
	const char *only; /* --section */
	int n, rc;
	struct fab_err err;
};

static int w_page(FILE *f, void *ctx, int arg)
{
	(void)arg;
	struct page *p = ctx;
	p->rc = fab_report_write(f, p->docs, p->names, p->n, p->only, &p->err);
	return p->rc != 0;
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
	struct page p = {calloc((size_t)n, sizeof *p.docs), (const char **)(argv + optind), only, n, 0, {0}};
	int loaded = 0;
	for (; loaded < n && !rc; loaded++)
		if (!(p.docs[loaded] = cli_load_doc(argv[optind + loaded], &rc)))
			break;
	if (!rc && only) {
		/* a section the page lacks: said once, and nothing written */
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		if (m && w_page(m, &p, 0)) {
			fprintf(stderr, "fabscope: %s\n", p.err.msg);
			rc = fab_err_exit_code(p.rc);
		}
		if (m)
			fclose(m);
		free(buf);
	}
	if (!rc) {
		if (out) {
			struct out_spec spec = {"", w_page, 0};
			rc = write_out_file(out, &spec, &p);
		} else {
			w_page(stdout, &p, 0);
			if (fflush(stdout))
				rc = FAB_EXIT_IO;
		}
		if (p.rc) {
			fprintf(stderr, "fabscope: %s\n", p.err.msg);
			rc = fab_err_exit_code(p.rc);
		}
	}
	for (int i = 0; i < n; i++)
		json_decref(p.docs[i]);
	free(p.docs);
	return rc;
}
