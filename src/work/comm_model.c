/*
 * comm_model.c - a communicator's cost model and its choice of algorithm
 * and protocol.
 *
 * The cost model is NCCL's tuner's kind: latency plus size over bus
 * bandwidth per algorithm and protocol, with NCCL's constants (the nccl
 * section of the scenario), and auto chooses among NCCL's algorithms; the
 * tests check its choices against the formulas computed by hand.
 */
#include "comm.h"

double fab_comm_model(const struct fab_comm *c, int op, int algo, int proto, uint64_t bytes)
{
	if (!fab_coll_supported(op, algo, c->nranks, c->ranks_per_server, NULL, 0) || proto < 0 || proto >= FAB_NPROTO)
		return -1;
	if (proto != FAB_PROTO_SIMPLE && algo != FAB_ALGO_RING && algo != FAB_ALGO_TREE && algo != FAB_ALGO_HIER)
		return -1; /* direct, rhd and nvls move data with Simple */
	if (c->nranks == 1)
		return 0;
	const struct fab_nccl_params *np = &c->w->nccl;
	double n = c->nranks, S = (double)bytes;
	double N = c->nservers, G = c->ranks_per_server ? c->ranks_per_server : n / N;
	/* a step's latency: the protocol's inside a server, and between servers
	 * the protocol's network step (NCCL's hop latencies) */
	double intra = (double)np->hop_ps[proto] / 1e12,
	       inter = intra + (double)np->net_ps[proto] / 1e12 + c->alpha_host_s;
	double t = (double)np->base_ps[proto] / 1e12;
	/* bus bandwidth: a server's channels leave by all its NICs (rail-aligned),
	 * a GPU's NVLink carries its ring; like NCCL's, the model assumes the
	 * fabric carries what the NICs send (ECMP collisions are the engine's) */
	double nics = G > 1 ? FAB_MIN((double)c->channels, (double)c->nics_per_server) : 1;
	double bus = N > 1 ? FAB_MIN(c->bw_nvl_Bps, c->bw_nic_Bps * nics) : c->bw_nvl_Bps;
	double a_any = N > 1 ? inter : intra, bw_any = N > 1 ? c->bw_nic_Bps : c->bw_nvl_Bps;
	double log2N = 0;
	for (double k = 2; k <= N; k *= 2)
		log2N++;
	switch (algo) {
	case FAB_ALGO_RING: {
		/* NCCL's ring: 2(n-1) steps (AllReduce), 2(N-1) of them between
		 * servers; LL moves half, LL128 92% of the bytes Simple does */
		double steps = op == FAB_OP_ALLREDUCE                          ? 2 * (n - 1)
			: op == FAB_OP_REDUCESCATTER || op == FAB_OP_ALLGATHER ? n - 1
									       : n;
		double nets = N == 1 ? 0 : op == FAB_OP_ALLREDUCE ? 2 * (N - 1) : N - 1;
		bus *= proto == FAB_PROTO_LL ? 0.5 : proto == FAB_PROTO_LL128 ? 0.92 : 1;
		return t + (steps - nets) * intra + nets * inter + S / (bus * n / steps);
	}
	case FAB_ALGO_TREE: {
		/* NCCL's tree: a chain of G-1 NVLink steps and log2(N) network
		 * steps up and down; bus bandwidth x 0.92 (AllReduce) x 0.85 (one
		 * GPU per channel talks to the network), LL / 3.8, LL128 x 120/128
		 * (7/9 in one server); algorithm bandwidth half of it */
		double k = op == FAB_OP_ALLREDUCE ? 2 : 1;
		bus *= (op == FAB_OP_ALLREDUCE ? 0.92 : 1) * 0.85;
		bus *= proto == FAB_PROTO_LL ? 1 / 3.8 : proto == FAB_PROTO_LL128 ? (N > 1 ? 120.0 / 128 : 7.0 / 9) : 1;
		return t + k * ((G - 1) * intra + log2N * inter) + S / (bus * 0.5);
	}
	case FAB_ALGO_HIER: {
		/* rings inside servers and across them: the ring's protocol factors */
		double f = proto == FAB_PROTO_LL ? 0.5 : proto == FAB_PROTO_LL128 ? 0.92 : 1;
		t += 2 * (G - 1) * intra + 2 * (G - 1) / G * S / (c->bw_nvl_Bps * f);
		if (N > 1)
			t += 2 * (N - 1) * inter + 2 * (N - 1) / N * (S / G) / (c->bw_nic_Bps * f);
		return t;
	}
	case FAB_ALGO_NVLS: {
		/* one server: the NVSwitch's latency, then each GPU's buffer at nvls_efficiency */
		const struct fab_server_params *sp = fab_sim_server(c->w->sim);
		if (!sp->nvls || N > 1)
			return -1;
		return (double)np->nvls_ps / 1e12 + S / ((double)sp->nvlink_bps / 8 * sp->nvls_eff);
	}
	case FAB_ALGO_SHARP: {
		/* pipelined: the slower of the NVLink stages and the NIC's shard */
		const struct fab_server_params *sp = fab_sim_server(c->w->sim);
		if (!sp->sharp || N < 2)
			return -1;
		double nvl = 2 * (G - 1) / G * S / c->bw_nvl_Bps, net = S / G / c->bw_nic_Bps;
		return (double)np->sharp_ps / 1e12 + FAB_MAX(nvl, net);
	}
	case FAB_ALGO_RHD:
		for (double k = 1; k < n; k *= 2)
			t += 2 * a_any;
		return t + 2 * (n - 1) / n * S / bw_any;
	case FAB_ALGO_DIRECT:
		return t + a_any + (op == FAB_OP_ALLTOALL ? (n - 1) / n * S : S) / bw_any;
	}
	return -1;
}

int fab_comm_algo_available(const struct fab_comm *c, int algo, struct fab_err *err)
{
	const struct fab_server_params *sp = fab_sim_server(c->w->sim);
	if (algo == FAB_ALGO_NVLS && !sp->nvls)
		return fab_err_set(err, FAB_EINVAL, "algo: nvls needs an NVSwitch that reduces (topology.nvls)");
	if (algo == FAB_ALGO_SHARP && !sp->sharp)
		return fab_err_set(err, FAB_EINVAL, "algo: sharp needs switches that reduce (topology.sharp)");
	return 0;
}

/* NCCL's algorithms for op, which auto chooses among */
static bool nccl_algo(int op, int algo)
{
	switch (op) {
	case FAB_OP_ALLREDUCE:
		return algo == FAB_ALGO_RING || algo == FAB_ALGO_TREE || algo == FAB_ALGO_NVLS ||
			algo == FAB_ALGO_SHARP;
	case FAB_OP_ALLTOALL:
	case FAB_OP_SENDRECV:
		return algo == FAB_ALGO_DIRECT;
	default:
		return algo == FAB_ALGO_RING;
	}
}

void fab_comm_select(const struct fab_comm *c, int op, uint64_t bytes, int *algo, int *proto)
{
	int best_a = -1, best_p = FAB_PROTO_SIMPLE;
	double best_t = 0;
	for (int a = 0; a < FAB_ALGO_AUTO; a++) {
		if (*algo == FAB_ALGO_AUTO ? !nccl_algo(op, a) : a != *algo)
			continue;
		for (int p = 0; p < FAB_NPROTO; p++) {
			if (*proto != FAB_PROTO_AUTO && p != *proto)
				continue;
			double t = fab_comm_model(c, op, a, p, bytes);
			if (t >= 0 && (best_a < 0 || t < best_t)) {
				best_a = a;
				best_p = p;
				best_t = t;
			}
		}
	}
	if (best_a < 0) { /* the protocol asked for does not run this algorithm: Simple */
		best_a = *algo == FAB_ALGO_AUTO
			? (op == FAB_OP_ALLTOALL || op == FAB_OP_SENDRECV ? FAB_ALGO_DIRECT : FAB_ALGO_RING)
			: *algo;
		best_p = FAB_PROTO_SIMPLE;
	}
	*algo = best_a;
	*proto = best_p;
}
