/* libFuzzer target: a sweep's plan (DIR/plan.json, read by every rank and
 * array task from a shared directory) through its checks, the merge with
 * no documents, and the tables; the same bytes as a grid file and as a
 * plan --compare file. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../src/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fab_err err;
	FILE *null = fopen("/dev/null", "w");
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (j) {
		struct fab_grid *g = fab_grid_from_plan(j, "plan.json", &err);
		if (g && g->npts <= 4096) {
			json_t **docs = calloc(g->npts + 1, sizeof *docs);
			const char **errs = calloc(g->npts + 1, sizeof *errs);
			json_t *m = fab_grid_merge(g, docs, errs);
			fab_grid_write_csv(null, m);
			fab_grid_write_text(null, m);
			json_decref(m);
			free(docs);
			free(errs);
		}
		fab_grid_free(g);
		json_decref(j);
	}
	int fd = memfd_create("grid", 0);
	if (fd >= 0 && write(fd, data, size) == (ssize_t)size) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		fab_grid_free(fab_grid_load(path, "fuzz", &err));
		struct fab_compare *c = fab_compare_load(path, &err);
		if (c) {
			json_t **docs = calloc(c->n * c->nseeds + 1, sizeof *docs);
			const char **errs = calloc(c->n * c->nseeds + 1, sizeof *errs);
			json_t *m = fab_compare_json(c, docs, errs);
			fab_compare_write_text(null, m);
			json_decref(m);
			free(docs);
			free(errs);
		}
		fab_compare_free(c);
	}
	if (fd >= 0)
		close(fd);
	fclose(null);
	return 0;
}
