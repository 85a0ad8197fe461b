/*
 * coll.c - collective schedules: the operations' and algorithms' names,
 * sizes and bus bandwidth factors, which algorithm serves which operation,
 * and the schedule built by the algorithm's family: ring and hierarchical
 * (coll_ring.c), double binary tree (coll_tree.c), recursive
 * halving-doubling and direct (coll_rhd.c).
 *
 * Conventions.  Buffers are IN (the send buffer, never written), OUT (the
 * receive buffer) and TMP (scratch).  Offsets and lengths are computed in
 * elements and stored in bytes.  A region that does not divide evenly is
 * split so that parts differ by at most one element; a transfer of zero
 * elements is not created.  Channels split every region into independent
 * parts, each with its own connections.  Pipelining splits each ring
 * segment or tree half into slices of at most chunk_bytes.
 * A zero-byte COPY step is a join: it completes when its dependencies do,
 * and lets one later step wait for a whole phase.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

static const char *op_names[] = {"allreduce", "reducescatter", "allgather", "broadcast",
				 "reduce",    "alltoall",      "sendrecv"};
static const char *op_titles[] = {"AllReduce", "ReduceScatter", "AllGather", "Broadcast",
				  "Reduce",    "AllToAll",      "SendRecv"};
static const char *algo_names[] = {"ring", "tree", "hierarchical", "rhd", "direct", "nvls", "sharp", "auto"};

const char *fab_coll_op_name(int op)
{
	return op >= 0 && op < FAB_OP_COUNT ? op_names[op] : "?";
}

const char *fab_coll_op_title(int op)
{
	return op >= 0 && op < FAB_OP_COUNT ? op_titles[op] : "?";
}

const char *fab_coll_algo_name(int algo)
{
	return algo >= 0 && algo < FAB_ALGO_COUNT ? algo_names[algo] : "?";
}

int fab_coll_op_parse(const char *s)
{
	for (int i = 0; i < FAB_OP_COUNT; i++)
		if (!strcmp(s, op_names[i]))
			return i;
	return -1;
}

int fab_coll_algo_parse(const char *s)
{
	for (int i = 0; i < FAB_ALGO_COUNT; i++)
		if (!strcmp(s, algo_names[i]))
			return i;
	return -1;
}

static bool per_rank_block(int op)
{
	return op == FAB_OP_ALLGATHER || op == FAB_OP_REDUCESCATTER || op == FAB_OP_ALLTOALL;
}

void fab_coll_sizes(int op, uint64_t count, uint32_t elem_bytes, uint32_t nranks, uint64_t *size_bytes,
		    uint64_t *in_bytes, uint64_t *out_bytes)
{
	uint64_t total = per_rank_block(op) ? count / nranks * nranks : count;
	uint64_t block = per_rank_block(op) ? count / nranks : count;
	*size_bytes = total * elem_bytes;
	switch (op) {
	case FAB_OP_REDUCESCATTER:
		*in_bytes = total * elem_bytes;
		*out_bytes = block * elem_bytes;
		break;
	case FAB_OP_ALLGATHER:
		*in_bytes = block * elem_bytes;
		*out_bytes = total * elem_bytes;
		break;
	case FAB_OP_ALLTOALL:
		*in_bytes = *out_bytes = total * elem_bytes;
		break;
	default:
		*in_bytes = *out_bytes = count * elem_bytes;
	}
}

double fab_coll_busbw_factor(int op, uint32_t n)
{
	switch (op) {
	case FAB_OP_ALLREDUCE:
		return 2.0 * (n - 1) / n;
	case FAB_OP_REDUCESCATTER:
	case FAB_OP_ALLGATHER:
	case FAB_OP_ALLTOALL:
		return (double)(n - 1) / n;
	default:
		return 1.0;
	}
}

bool fab_coll_supported(int op, int algo, uint32_t n, uint32_t rpn, char *why, size_t wl)
{
	static const bool ok[FAB_OP_COUNT][FAB_ALGO_AUTO] = {
		/*                 ring   tree   hier   rhd    direct nvls   sharp */
		[FAB_OP_ALLREDUCE] = {true, true, true, true, false, true, true},
		[FAB_OP_REDUCESCATTER] = {true, false, false, false, false, false, false},
		[FAB_OP_ALLGATHER] = {true, false, false, false, false, false, false},
		[FAB_OP_BROADCAST] = {true, true, false, false, false, false, false},
		[FAB_OP_REDUCE] = {true, true, false, false, false, false, false},
		[FAB_OP_ALLTOALL] = {false, false, false, false, true, false, false},
		[FAB_OP_SENDRECV] = {false, false, false, false, true, false, false},
	};
	if (op < 0 || op >= FAB_OP_COUNT || algo < 0 || algo >= FAB_ALGO_AUTO || !ok[op][algo]) {
		if (why)
			snprintf(why, wl, "algorithm %s does not implement %s", fab_coll_algo_name(algo),
				 fab_coll_op_title(op));
		return false;
	}
	if (algo == FAB_ALGO_NVLS && rpn != n) {
		if (why && !rpn)
			snprintf(why, wl, "nvls reduces in one server's NVSwitch: the %u ranks are not all in one", n);
		else if (why)
			snprintf(why, wl, "nvls reduces in one server's NVSwitch: %u ranks, %u in each server", n, rpn);
		return false;
	}
	if (algo == FAB_ALGO_SHARP && (!rpn || n % rpn || rpn == n)) {
		if (why)
			snprintf(why, wl,
				 "sharp reduces in the fabric's switches: whole servers, more than one (%u ranks, %u "
				 "per server)",
				 n, rpn);
		return false;
	}
	if (algo == FAB_ALGO_HIER && (!rpn || n % rpn)) {
		if (why)
			snprintf(why, wl, "hierarchical needs whole servers: %u ranks, %u per server", n, rpn);
		return false;
	}
	return true;
}

static const uint32_t *rank_order(const struct fab_coll_args *a, uint32_t *tmp)
{
	if (a->order)
		return a->order;
	for (uint32_t i = 0; i < a->nranks; i++)
		tmp[i] = i;
	return tmp;
}

int fab_coll_build(const struct fab_coll_args *a, struct fab_sched *out, struct fab_err *err)
{
	char why[160];
	memset(out, 0, sizeof *out);
	if (!a->nranks || !a->elem_bytes || !a->channels || a->channels > 64)
		return fab_err_set(err, FAB_EINVAL, "collective: ranks, element size and 1..64 channels needed");
	if (!fab_coll_supported(a->op, a->algo, a->nranks, a->ranks_per_node, why, sizeof why))
		return fab_err_set(err, FAB_EINVAL, "collective: %s", why);
	if (a->algo == FAB_ALGO_NVLS || a->algo == FAB_ALGO_SHARP)
		return fab_err_set(err, FAB_EINVAL,
				   "collective: %s reduces in switches; it is not a schedule of sends between ranks",
				   fab_coll_algo_name(a->algo));
	if ((a->op == FAB_OP_BROADCAST || a->op == FAB_OP_REDUCE) && a->root >= a->nranks)
		return fab_err_set(err, FAB_EINVAL, "collective: root %u is not a rank (0..%u)", a->root,
				   a->nranks - 1);
	uint64_t cnt = per_rank_block(a->op) ? a->count / a->nranks : a->count;
	if (!cnt)
		return fab_err_set(err, FAB_EINVAL, "collective: %s of %llu elements over %u ranks moves nothing",
				   fab_coll_op_title(a->op), (unsigned long long)a->count, a->nranks);
	uint64_t size;
	fab_coll_sizes(a->op, a->count, a->elem_bytes, a->nranks, &size, &out->buf_bytes[FAB_BUF_IN],
		       &out->buf_bytes[FAB_BUF_OUT]);
	out->buf_bytes[FAB_BUF_TMP] = a->op == FAB_OP_REDUCESCATTER ? out->buf_bytes[FAB_BUF_IN] : 0;
	out->nranks = a->nranks;
	out->channels = a->algo == FAB_ALGO_TREE && a->op == FAB_OP_ALLREDUCE ? 2 * a->channels : a->channels;
	struct sb b = {out, a, a->elem_bytes};
	uint32_t *tmp = fab_xcalloc(a->nranks, sizeof *tmp);
	const uint32_t *m = rank_order(a, tmp);
	switch (a->algo) {
	case FAB_ALGO_RING:
		coll_build_ring(&b, cnt, m);
		break;
	case FAB_ALGO_TREE:
		coll_build_tree(&b, cnt, m);
		break;
	case FAB_ALGO_HIER:
		coll_build_hier(&b, cnt);
		break;
	case FAB_ALGO_RHD:
		coll_build_rhd(&b, cnt, m);
		break;
	case FAB_ALGO_DIRECT:
		coll_build_direct(&b, cnt);
		break;
	}
	free(tmp);
	return 0;
}

void fab_sched_free(struct fab_sched *s)
{
	free(s->steps);
	free(s->deps);
	memset(s, 0, sizeof *s);
}

bool fab_circle_pair(uint32_t n, uint32_t r, uint32_t k, uint32_t *x, uint32_t *y)
{
	uint32_t N = n + (n & 1);
	*x = k == 0 ? 0 : 1 + (k - 1 + r) % (N - 1);
	*y = 1 + (N - 2 - k + r) % (N - 1);
	return *x < n && *y < n;
}
