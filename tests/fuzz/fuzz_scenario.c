/* libFuzzer target: scenario text (YAML) through the whole loader. */
#include <stddef.h>
#include <stdint.h>

#include "../../src/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fab_err err;
	struct fab_config *c = fab_config_parse((const char *)data, size, "fuzz.yaml", NULL, NULL, 0, &err);
	fab_config_free(c);
	return 0;
}
