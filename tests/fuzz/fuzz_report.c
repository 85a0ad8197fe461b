/* libFuzzer target: a document as fabscope report takes it: checked
 * against doc/schema/ (and, for a result, as diagnosis checks it), then
 * drawn: a result's page, a sweep's or a design comparison's. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../include/fabscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *d = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (!d)
		return 0;
	struct fab_err err = {0};
	FILE *null = fopen("/dev/null", "w");
	const char *s = json_string_value(json_object_get(d, "schema"));
	if (null && !fab_schema_check(d, "doc.json", &err)) {
		if (s && !strcmp(s, "fabscope.sweep/1")) {
			fab_report_sweep(null, d, "sweep.json", NULL, NULL, &err);
		} else if (s && !strcmp(s, "fabscope.plan-compare/1")) {
			fab_report_compare_checked(null, d, "compare.json", &err);
		} else if (s && !strcmp(s, "fabscope.result/1") && !fab_diag_validate(d, "doc.json", &err)) {
			json_t *docs[1] = {d};
			const char *names[1] = {"doc.json"}, *labels[1] = {NULL};
			fab_report_write(null, docs, names, labels, 1, NULL, &err);
		}
	}
	if (null)
		fclose(null);
	json_decref(d);
	return 0;
}
