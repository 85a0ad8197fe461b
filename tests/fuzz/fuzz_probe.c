/* libFuzzer target: the probe's wire protocol from a hostile peer.  A job
 * of 2 ranks in one process: this side is rank 0 or rank 1 (the first
 * byte), the peer's control and data connections are socket pairs that
 * carry the input (split at the second byte) and then close; one checked
 * AllReduce runs over them and must fail or finish cleanly. */
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../src/probe/probe_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	struct fab_probe_params p = {.nranks = 2, .rank = data[0] & 1, .conns = 1, .timeout_s = 0.2};
	p.token[0] = 1;
	size_t split = 2 + (size - 2) * data[1] / 255;
	int ctl[2], dat[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, ctl))
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, dat)) {
		close(ctl[0]);
		close(ctl[1]);
		return 0;
	}
	(void)!write(ctl[1], data + 2, split - 2);
	(void)!write(dat[1], data + split, size - split);
	close(ctl[1]);
	close(dat[1]);
	struct fab_probe *pr = pr_alloc(&p);
	uint32_t peer = 1 - p.rank;
	C(pr, peer, 0)->fd = ctl[0];
	C(pr, peer, 1)->fd = dat[0];
	pr_tune(ctl[0], false);
	pr_tune(dat[0], true);
	struct fab_coll_args a = {.op = FAB_OP_ALLREDUCE,
				  .algo = FAB_ALGO_RING,
				  .nranks = 2,
				  .count = 64,
				  .elem_bytes = 4,
				  .channels = 1,
				  .chunk_bytes = 128};
	struct fab_probe_result res;
	struct fab_err err = {0};
	fab_probe_coll(pr, &a, true, &res, &err);
	fab_probe_close(pr);
	return 0;
}
