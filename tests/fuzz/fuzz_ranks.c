/* libFuzzer target: a split run's messages from a hostile rank.  A run of
 * two NICs split over 2 ranks in one process: this side is rank 0, and
 * every exchange hands it the next piece of the input as rank 1's message
 * (a 4-byte length, then that many bytes) until the input runs out, when
 * the exchange fails.  The run must finish, or fail cleanly, whatever the
 * reports, frames and end-of-run byte runs say. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct feed {
	const uint8_t *d;
	size_t left;
};

static int fake_exchange(void *ctx, const struct fab_sim_msg *out, struct fab_sim_msg *in)
{
	struct feed *f = ctx;
	(void)out;
	in[0] = (struct fab_sim_msg){NULL, 0};
	uint32_t len;
	if (f->left < 4)
		return -1;
	memcpy(&len, f->d, 4);
	f->d += 4;
	f->left -= 4;
	if (len > f->left)
		len = (uint32_t)f->left;
	in[1].data = malloc(len ? len : 1);
	memcpy(in[1].data, f->d, len);
	in[1].len = len;
	f->d += len;
	f->left -= len;
	return 0;
}

static const char scenario[] =
	"topology: {leaves: 1, servers_per_leaf: 2, gpus_per_server: 1, nics_per_server: 1, spines: 1}\n"
	"traffic:\n"
	"  flows:\n"
	"    - {src: 0, dst: 1, bytes: 64KiB}\n"
	"    - {src: 1, dst: 0, bytes: 16KiB}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fab_err err;
	struct fab_config *c = fab_config_parse(scenario, sizeof scenario - 1, "fuzz.yaml", NULL, NULL, 0, &err);
	if (!c)
		abort();
	struct fab_run *r = fab_run_new(c, &err);
	if (!r)
		abort();
	struct feed f = {data, size};
	struct fab_sim_ranks rk = {2, 0, fake_exchange, &f};
	fab_sim_set_ranks(r->sim, &rk);
	fab_run_exec(r, NULL, NULL);
	fab_run_free(r);
	fab_config_free(c);
	return 0;
}
