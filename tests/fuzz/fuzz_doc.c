/* libFuzzer target: a result document through validation, diagnosis and
 * the heatmap. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../src/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *d = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (!d)
		return 0;
	struct fab_err err;
	struct fab_diag_params p;
	struct fab_diagnosis out = {0};
	fab_diag_defaults(&p);
	json_t *docs[1] = {d};
	if (!fab_diagnose(docs, 1, d, &p, &out, &err)) {
		FILE *f = fopen("/dev/null", "w");
		if (f) {
			fab_diagnosis_write_text(f, &out);
			fab_diagnosis_write_svg(f, docs, 1, &out);
			fclose(f);
		}
		json_decref(fab_diagnosis_json(&out));
	}
	fab_diagnosis_free(&out);
	json_decref(d);
	return 0;
}
