/* libFuzzer target: the edge-list topology file and the CSV flow list. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../src/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/fabscope-fuzz-%d", (int)getpid());
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	struct fab_err err;
	struct fab_topo_params p = {
		.kind = FAB_TOPO_FILE, .gpus_per_server = 1, .nics_per_server = 1, .radix = 64, .file = path};
	fab_topo_free(fab_topo_build(&p, &err));
	struct fab_flow_spec *flows = NULL;
	size_t n = 0;
	if (!fab_traffic_read_csv(path, &flows, &n, &err))
		free(flows);
	unlink(path);
	return 0;
}
