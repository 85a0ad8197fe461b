/*
 * comm.c - communicators: ring orders, connections, algorithm choice and
 * the execution of schedules on the packet engine.
 *
 * Ring orders.  In topology order, servers are ordered by (leaf, server)
 * so a ring crosses the spine as few times as it can; inside a server the
 * ring runs over NVLink, and channel c rotates it so that it enters the
 * server at its (c+1)-th GPU.  A network hop from one server to the next
 * leaves through the source server's NIC on the rail of the GPU it enters
 * (nccl.cross_nic false, NCCL's rule on rail-optimized fabrics): channel c
 * then enters and leaves every server on one rail, and the channels
 * rotate over every NIC, so each NIC carries the same share.  With
 * nccl.cross_nic, each GPU sends through its own NIC, and a channel enters
 * on one rail and leaves on the next.  Point-to-point sends (AllToAll,
 * SendRecv) leave through the NIC on the destination's rail when nccl.pxn
 * is on, as NCCL's PXN does; the relay over NVLink to that NIC is not
 * timed (NVLink is 9 times a 400G NIC).  Without topology order, servers
 * follow in the order of their first rank (with spread placement, every
 * server-to-server hop then crosses the spine), GPUs inside a server
 * rotating the same way.  A flat ring is the rank order itself, for every
 * channel.  A connection may stripe each message over several queue pairs
 * (qps_per_conn), so ECMP spreads it.
 *
 * Protocols.  An operation runs with LL, LL128 or Simple: its steps move
 * 2x, 16/15 or 1x their bytes, wait for the protocol's step latency less
 * what the links they cross take, in chunks of the protocol's size; the
 * operation starts after the protocol's base latency.
 *
 * The cost model is NCCL's tuner's kind: latency plus size over bus
 * bandwidth per algorithm and protocol, with NCCL's constants (the nccl
 * section of the scenario), and auto chooses among NCCL's algorithms; the
 * tests check its choices against the formulas computed by hand.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/rng.h"
#include "comm.h"

static uint32_t gpu_nic(const struct fab_comm *c, uint32_t gpu)
{
	return fab_topo_gpu_nic(c->topo, gpu);
}

static uint32_t gpu_leaf(const struct fab_comm *c, uint32_t gpu)
{
	return fab_topo_nic_leaf(c->topo, gpu_nic(c, gpu));
}

/* The NICs a network send from GPU src to GPU dst leaves and arrives by:
 * the destination GPU's NIC, and on the source server either the NIC on
 * that rail (rail-aligned) or the sending GPU's own.  A server with more
 * NICs than GPUs gives every channel ch of a collective its own rail,
 * (ch + 1) mod NICs, at both ends (ch UINT32_MAX: a point-to-point send). */
static void net_nics(const struct fab_comm *c, uint32_t src, uint32_t dst, bool rail, uint32_t ch, uint32_t *snic,
		     uint32_t *dnic)
{
	const struct fab_topo *t = c->topo;
	uint32_t npn = t->nics_per_server, P = t->nic_ports ? t->nic_ports : 1;
	if (rail && ch != UINT32_MAX && c->nics_per_server > t->gpus_per_server) {
		uint32_t k = ((ch % c->channels) + 1) % c->nics_per_server;
		*snic = fab_topo_gpu_server(t, src) * npn + k * P;
		*dnic = fab_topo_gpu_server(t, dst) * npn + k * P;
		return;
	}
	*dnic = gpu_nic(c, dst);
	*snic = rail ? fab_topo_gpu_server(t, src) * npn + *dnic % npn : gpu_nic(c, src);
}

/* whether op with algo is point-to-point (its sends go by the
 * destination's rail, not the channel's) */
static bool is_p2p(int op, int algo)
{
	return op == FAB_OP_ALLTOALL || op == FAB_OP_SENDRECV || algo == FAB_ALGO_DIRECT;
}

/* whether algo's sends for op go rail-aligned: collectives unless
 * nccl.cross_nic, point-to-point with nccl.pxn */
static bool rail_aligned(const struct fab_comm *c, int op, int algo)
{
	return is_p2p(op, algo) ? c->w->nccl.pxn : !c->w->nccl.cross_nic;
}

struct sortkey {
	uint64_t key;
	uint32_t rank;
};

static int cmp_key(const void *a, const void *b)
{
	const struct sortkey *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The connection from GPU src to GPU dst on channel ch, between the NICs
 * the send uses (rail: whether they were chosen rail-aligned), opened on
 * first use: each pair of GPUs has its own queue pairs, as NCCL connects
 * ranks, even where two pairs share NICs (PXN, NICs shared by GPUs). */
static uint32_t conn_slot(struct fab_comm *c, uint32_t src, uint32_t dst, bool rail, uint32_t src_nic, uint32_t dst_nic,
			  uint32_t ch)
{
	uint64_t key = ((uint64_t)src << 42) | ((uint64_t)dst << 22) | ((uint64_t)ch << 1) | rail;
	key += 1; /* 0 marks an empty slot */
	if (c->nconns * 2 >= c->conn_cap) {
		uint32_t ncap = c->conn_cap ? 2 * c->conn_cap : 1024;
		uint64_t *nk = fab_xcalloc(ncap, sizeof *nk);
		uint32_t *nv = fab_xcalloc(ncap, sizeof *nv), *nr = fab_xcalloc(ncap, sizeof *nr);
		for (uint32_t i = 0; i < c->conn_cap; i++) {
			if (!c->conn_key[i])
				continue;
			uint32_t h = (uint32_t)fab_mix64(c->conn_key[i]) & (ncap - 1);
			while (nk[h])
				h = (h + 1) & (ncap - 1);
			nk[h] = c->conn_key[i];
			nv[h] = c->conn_val[i];
			nr[h] = c->conn_rr[i];
		}
		free(c->conn_key);
		free(c->conn_val);
		free(c->conn_rr);
		c->conn_key = nk;
		c->conn_val = nv;
		c->conn_rr = nr;
		c->conn_cap = ncap;
	}
	uint32_t h = (uint32_t)fab_mix64(key) & (c->conn_cap - 1);
	while (c->conn_key[h]) {
		if (c->conn_key[h] == key)
			return h;
		h = (h + 1) & (c->conn_cap - 1);
	}
	c->conn_key[h] = key;
	/* qps_per_conn consecutive queue pairs: the first is the connection's
	 * id; with several ports, queue pair q goes from port q mod P to the
	 * same port of the peer's NIC */
	uint32_t P = c->topo->nic_ports ? c->topo->nic_ports : 1;
	/* each queue pair's 5-tuple from who connects (the communicator, the
	 * two GPUs, the channel), not from when: a size's time does not hang
	 * on which sizes, algorithms or channel counts ran before it */
	uint64_t who = fab_mix64(fab_name_hash(c->name) ^ fab_mix64(key)) | 1ULL << 63;
	c->conn_val[h] = fab_sim_open_key(c->w->sim, src_nic, dst_nic, c->prio, c->transport - 1, who);
	for (uint32_t q = 1; q < c->qps_per_conn; q++)
		fab_sim_open_key(c->w->sim, src_nic + q % P, dst_nic + q % P, c->prio, c->transport - 1,
				 (who + q) | 1ULL << 63);
	c->nconns++;
	return h;
}

/* the ranks' GPUs (each once), and how they fall on servers and leaves */
static int comm_ranks(struct fab_comm *c, const struct fab_comm_params *p, struct fab_err *err)
{
	const struct fab_topo *t = c->topo;
	c->gpu = fab_xcalloc(p->nranks, sizeof *c->gpu);
	uint32_t *per_server = fab_xcalloc(t->nservers, sizeof *per_server);
	for (uint32_t r = 0; r < p->nranks; r++) {
		if (p->gpus[r] >= t->ngpus) {
			free(per_server);
			return fab_err_set(err, FAB_EINVAL, "%s: GPU %u does not exist (0..%u)", c->name, p->gpus[r],
					   t->ngpus - 1);
		}
		c->gpu[r] = p->gpus[r];
		if (per_server[fab_topo_gpu_server(t, p->gpus[r])]++)
			for (uint32_t q = 0; q < r; q++)
				if (c->gpu[q] == c->gpu[r]) {
					free(per_server);
					return fab_err_set(err, FAB_EINVAL, "%s: GPU %u appears twice", c->name,
							   c->gpu[r]);
				}
	}
	c->ranks_per_server = 0;
	for (uint32_t s = 0; s < t->nservers; s++) {
		if (!per_server[s])
			continue;
		c->nservers++;
		if (!c->ranks_per_server)
			c->ranks_per_server = per_server[s];
		else if (c->ranks_per_server != per_server[s])
			c->ranks_per_server = UINT32_MAX;
	}
	if (c->ranks_per_server == UINT32_MAX)
		c->ranks_per_server = 0;
	free(per_server);
	bool *leaf_seen = fab_xcalloc(t->nnodes, sizeof *leaf_seen);
	for (uint32_t r = 0; r < p->nranks; r++) {
		uint32_t l = gpu_leaf(c, c->gpu[r]);
		if (!leaf_seen[l]) {
			leaf_seen[l] = true;
			c->nleaves++;
		}
	}
	free(leaf_seen);
	return 0;
}

/* per channel, the ring order (rotating the GPUs inside each server), and
 * the server-major numbering of the hierarchical algorithm */
static void comm_orders(struct fab_comm *c, const struct fab_comm_params *p)
{
	const struct fab_topo *t = c->topo;
	struct sortkey *k = fab_xcalloc(p->nranks, sizeof *k);
	/* in rank order, servers follow their first rank */
	uint32_t *first_rank = fab_xcalloc(t->nservers, sizeof *first_rank);
	for (uint32_t sv = 0; sv < t->nservers; sv++)
		first_rank[sv] = UINT32_MAX;
	for (uint32_t r = p->nranks; r-- > 0;)
		first_rank[fab_topo_gpu_server(t, c->gpu[r])] = r;
	/* in topology order, a server goes by the first leaf its NICs reach */
	uint32_t *server_leaf = fab_xcalloc(t->nservers, sizeof *server_leaf);
	for (uint32_t sv = 0; sv < t->nservers; sv++)
		server_leaf[sv] = UINT32_MAX;
	for (uint32_t r = 0; r < p->nranks; r++) {
		uint32_t sv = fab_topo_gpu_server(t, c->gpu[r]);
		server_leaf[sv] = FAB_MIN(server_leaf[sv], gpu_leaf(c, c->gpu[r]));
	}
	c->chan_order = fab_xcalloc(c->channels, sizeof *c->chan_order);
	for (uint32_t ch = 0; ch < c->channels; ch++) {
		c->chan_order[ch] = fab_xcalloc(p->nranks, sizeof **c->chan_order);
		for (uint32_t r = 0; r < p->nranks; r++) {
			uint32_t g = c->gpu[r];
			uint32_t local = g % t->gpus_per_server;
			uint32_t rot = (local + t->gpus_per_server - (ch + 1) % t->gpus_per_server) %
				t->gpus_per_server;
			k[r].rank = r;
			uint32_t sv = fab_topo_gpu_server(t, g);
			if (c->ring_order == FAB_RING_TOPOLOGY)
				k[r].key = ((uint64_t)server_leaf[sv] << 40) | ((uint64_t)sv << 12) | rot;
			else if (c->ring_order == FAB_RING_RANK)
				k[r].key = ((uint64_t)first_rank[sv] << 12) | rot;
			else
				k[r].key = r;
		}
		qsort(k, p->nranks, sizeof *k, cmp_key);
		for (uint32_t r = 0; r < p->nranks; r++)
			c->chan_order[ch][r] = k[r].rank;
	}
	free(first_rank);
	free(server_leaf);
	/* server-major numbering for the hierarchical algorithm */
	if (c->ranks_per_server) {
		for (uint32_t r = 0; r < p->nranks; r++) {
			k[r].rank = r;
			k[r].key = ((uint64_t)fab_topo_gpu_server(t, c->gpu[r]) << 12) |
				(c->gpu[r] % t->gpus_per_server);
		}
		qsort(k, p->nranks, sizeof *k, cmp_key);
		c->hier_gpu = fab_xcalloc(p->nranks, sizeof *c->hier_gpu);
		for (uint32_t r = 0; r < p->nranks; r++)
			c->hier_gpu[r] = c->gpu[k[r].rank];
	}
	free(k);
}

/* the alpha-beta cost model's inputs, from the first NIC's link, the
 * fabric, the server and the transport's overheads */
static void comm_cost_inputs(struct fab_comm *c, struct fab_work *w)
{
	const struct fab_topo *t = c->topo;
	const struct fab_port *hp = &t->ports[t->nodes[t->nic_node[0]].first_port];
	fab_time_ps fabric_delay = 0;
	for (uint32_t i = 0; i < t->nports; i++)
		if (t->nodes[t->ports[i].node].kind == FAB_NODE_SWITCH &&
		    t->nodes[t->ports[t->ports[i].peer].node].kind == FAB_NODE_SWITCH) {
			fabric_delay = t->ports[i].delay_ps;
			break;
		}
	const struct fab_server_params *sp = fab_sim_server(w->sim);
	uint32_t mtu = fab_sim_mtu(w->sim);
	/* the transport's overheads, and what a message waits in the host (TCP) */
	const struct fab_wire *wire = fab_sim_wire_of(w->sim, c->transport - 1);
	c->alpha_host_s = (double)fab_sim_host_latency(w->sim, c->transport - 1) / 1e12;
	double eff = fab_wire_efficiency(wire, mtu);
	double nic = (double)hp->rate_bps * (t->nic_ports ? t->nic_ports : 1); /* every port of the NIC */
	if (sp->pcie_bps && (double)sp->pcie_bps < nic)
		nic = (double)sp->pcie_bps;
	c->bw_nic_Bps = nic * eff / 8;
	c->bw_nvl_Bps = sp->nvlink_bps ? (double)sp->nvlink_bps / 8 * (sp->nvlink_eff > 0 ? sp->nvlink_eff : 1) : 1e15;
	/* a hop between servers: two host links, and two fabric links when the
	 * communicator spans leaves, and two packets' store and forward */
	if (c->nleaves < 2)
		fabric_delay = 0;
	c->alpha_net_s = (2.0 * (double)hp->delay_ps + 2.0 * (double)fabric_delay) / 1e12 +
		2.0 * fab_wire_data_bytes(wire, mtu) * 8 / (double)hp->rate_bps;
	c->alpha_nvl_s = (double)sp->nvlink_lat_ps / 1e12;
}

/* ranks of each channel order that share a server, for trees: the
 * topology and rank orders keep a server's ranks together */
static uint32_t comm_tree_group(const struct fab_comm *c)
{
	return c->ring_order != FAB_RING_FLAT && c->ranks_per_server ? c->ranks_per_server : 1;
}

/* the rings and trees, as NCCL_DEBUG=INFO shows them */
static void comm_log_layout(struct fab_comm *c, struct fab_work *w)
{
	struct fab_log *log = &w->log;
	fab_log_printf(log, "fabscope INFO %s: %u ranks on %u servers, %u channels, ring order %s\n", c->name,
		       c->nranks, c->nservers, c->channels,
		       c->ring_order == FAB_RING_TOPOLOGY       ? "follows the topology"
			       : c->ring_order == FAB_RING_RANK ? "follows the ranks, server by server"
								: "is the rank order (flat)");
	for (uint32_t ch = 0; ch < c->channels; ch++) {
		fab_log_printf(log, "fabscope INFO %s: Channel %02u/%02u :", c->name, ch, c->channels);
		for (uint32_t r = 0; r < c->nranks && r < 64; r++)
			fab_log_printf(log, " %u", c->chan_order[ch][r]);
		fab_log_printf(log, "%s\n", c->nranks > 64 ? " ..." : "");
	}
	/* each channel's network hops: rank[GPU] -> rank[GPU] and the NICs, as NCCL's "via NET" lines */
	const struct fab_topo *t = c->topo;
	for (uint32_t ch = 0; ch < c->channels; ch++) {
		uint32_t shown = 0;
		for (uint32_t i = 0; i < c->nranks && c->nranks > 1; i++) {
			uint32_t a = c->chan_order[ch][i], b = c->chan_order[ch][(i + 1) % c->nranks];
			uint32_t ga = c->gpu[a], gb = c->gpu[b];
			if (fab_topo_gpu_server(t, ga) == fab_topo_gpu_server(t, gb))
				continue;
			if (shown++ == 16) {
				fab_log_printf(log, "fabscope INFO %s: Channel %02u : ...\n", c->name, ch);
				break;
			}
			uint32_t snic, dnic;
			net_nics(c, ga, gb, !c->w->nccl.cross_nic, ch, &snic, &dnic);
			fab_log_printf(log,
				       "fabscope INFO %s: Channel %02u : %u[%u] -> %u[%u] [send] via NET/%s -> %s\n",
				       c->name, ch, a, ga, b, gb, t->nodes[t->nic_node[snic]].name,
				       t->nodes[t->nic_node[dnic]].name);
		}
	}
	if (c->nranks > 1) {
		/* the double binary tree per channel, as NCCL prints it: children/..->rank->parent, -1 for none;
		 * tree t of channel c runs on connection channel t * channels + c */
		uint32_t n = c->nranks, C = c->channels;
		uint32_t *parent = fab_xcalloc((size_t)2 * C * n, sizeof *parent), *td = fab_xcalloc(n, sizeof *td);
		uint32_t(*kids)[3] = fab_xcalloc((size_t)2 * C * n, sizeof *kids);
		for (uint32_t tc = 0; tc < 2 * C; tc++)
			fab_coll_tree(n, c->chan_order[tc % C], comm_tree_group(c), tc / C, UINT32_MAX,
				      parent + (size_t)tc * n, kids + (size_t)tc * n, td);
		for (uint32_t r = 0; r < n && r < 64; r++) {
			fab_log_printf(log, "fabscope INFO %s: %u Trees", c->name, r);
			for (uint32_t tc = 0; tc < 2 * C; tc++) {
				const uint32_t *k = kids[(size_t)tc * n + r];
				uint32_t p = parent[(size_t)tc * n + r];
				fab_log_printf(log, " [%u] %d/%d/%d->%u->%d", tc, k[0] == UINT32_MAX ? -1 : (int)k[0],
					       k[1] == UINT32_MAX ? -1 : (int)k[1], k[2] == UINT32_MAX ? -1 : (int)k[2],
					       r, p == UINT32_MAX ? -1 : (int)p);
			}
			fab_log_printf(log, "\n");
		}
		if (n > 64)
			fab_log_printf(log, "fabscope INFO %s: ... Trees of %u more ranks\n", c->name, n - 64);
		free(parent);
		free(td);
		free(kids);
	}
}

int fab_comm_init(struct fab_comm *c, struct fab_work *w, const struct fab_comm_params *p, struct fab_err *err)
{
	memset(c, 0, sizeof *c);
	const struct fab_topo *t = w->topo;
	c->w = w;
	c->topo = t;
	snprintf(c->name, sizeof c->name, "%s", p->name ? p->name : "comm");
	c->nranks = p->nranks;
	c->ring_order = p->ring_order;
	c->chunk_bytes = p->chunk_bytes;
	c->prio = p->prio;
	c->transport = p->transport;
	c->reduce_bps = p->reduce_bps;
	/* at least one queue pair per port, so a NIC's ports all carry */
	uint32_t P = t->nic_ports ? t->nic_ports : 1;
	c->qps_per_conn = FAB_MAX(p->qps_per_conn ? p->qps_per_conn : 1, P);
	c->nics_per_server = t->nics_per_server / P;
	if (!p->nranks)
		return fab_err_set(err, FAB_EINVAL, "%s: a communicator needs at least one GPU", c->name);
	int rc = comm_ranks(c, p, err);
	if (rc)
		return rc;
	uint32_t G = c->ranks_per_server ? c->ranks_per_server : 1;
	/* one channel per NIC a server's GPUs use, every NIC when it has more than GPUs */
	uint32_t nch = c->nics_per_server > t->gpus_per_server ? c->nics_per_server : FAB_MIN(c->nics_per_server, G);
	c->channels = p->channels ? p->channels : FAB_MAX(2u, nch);
	if (c->channels > 32)
		c->channels = 32;

	comm_orders(c, p);
	comm_cost_inputs(c, w);
	comm_log_layout(c, w);
	return 0;
}

void fab_comm_free(struct fab_comm *c)
{
	if (c->busy) {
		fab_exec_free(&c->ex);
		fab_sched_free(&c->sched);
	}
	free(c->parts);
	for (uint32_t ch = 0; ch < c->channels && c->chan_order; ch++)
		free(c->chan_order[ch]);
	free(c->chan_order);
	free(c->gpu);
	free(c->hier_gpu);
	free(c->conn_key);
	free(c->conn_val);
	free(c->conn_rr);
	free(c->sh_left);
	free(c->sh_stage);
	memset(c, 0, sizeof *c);
}

static void finish_op(struct fab_comm *c)
{
	c->res.end_ps = fab_sim_now(c->w->sim);
	char a[32], b[32];
	fab_log_printf(&c->w->log,
		       "fabscope INFO %s: %s opCount %llu bytes %llu count %llu algo %s proto %s channels %u "
		       "chunk %llu steps %u start %s end %s time %.3f us\n",
		       c->name, fab_coll_op_title(c->res.op), (unsigned long long)c->res.op_count,
		       (unsigned long long)c->res.bytes, (unsigned long long)c->res.count,
		       fab_coll_algo_name(c->res.algo), fab_proto_name(c->res.proto), c->sched.channels,
		       (unsigned long long)c->cur_chunk, c->sched.nsteps, fab_fmt_time(c->res.start_ps, a, sizeof a),
		       fab_fmt_time(c->res.end_ps, b, sizeof b), (double)(c->res.end_ps - c->res.start_ps) / 1e6);
	c->busy = false;
	free(c->sh_left);
	free(c->sh_stage);
	c->sh_left = c->sh_stage = NULL;
	fab_exec_free(&c->ex);
	if (c->aggregate)
		memset(&c->sched, 0, sizeof c->sched);
	fab_sched_free(&c->sched);
	free(c->parts);
	c->parts = NULL;
	fab_sim_hold(c->w->sim, -1);
	if (c->done)
		c->done(c->done_ctx, &c->res);
}

static void check_finished(struct fab_comm *c)
{
	if (c->busy && fab_exec_finished(&c->ex))
		finish_op(c);
}

static void on_delivered(void *obj, uint32_t step)
{
	struct fab_comm *c = obj;
	if (c->parts && --c->parts[step])
		return; /* other stripes of this send still travel */
	fab_exec_delivered(&c->ex, step);
	fab_exec_pump(&c->ex);
	check_finished(c);
}

static void on_local_done(void *obj, uint32_t step)
{
	struct fab_comm *c = obj;
	fab_exec_done(&c->ex, step);
	fab_exec_pump(&c->ex);
	check_finished(c);
}

/* a step's bytes on the wire under the running protocol */
static uint64_t wire_bytes(int proto, uint64_t b)
{
	return proto == FAB_PROTO_LL ? 2 * b : proto == FAB_PROTO_LL128 ? (b * 16 + 14) / 15 : b;
}

/* what a step costs under the running protocol on top of moving its
 * bytes: the protocol's step latency, less what the links already take
 * (NVLink's latency, or a network hop's as the cost model counts it: two
 * host links, two fabric links, two packets), which the engine simulates.
 * One value per kind of hop, so that sends posted together still start
 * together (the flow engine recomputes its shares at every start). */
static fab_time_ps step_overhead(const struct fab_comm *c, bool net)
{
	const struct fab_nccl_params *np = &c->w->nccl;
	int p = c->res.proto;
	fab_time_ps want = np->hop_ps[p] + (net ? np->net_ps[p] : 0);
	fab_time_ps links = net ? (fab_time_ps)(c->alpha_net_s * 1e12 + 0.5) : fab_sim_server(c->w->sim)->nvlink_lat_ps;
	return want > links ? want - links : 0;
}

/* the slot of the connection a network send from GPU src to GPU dst on
 * channel ch uses (its first queue pair: c->conn_val[slot]) */
static uint32_t send_slot(struct fab_comm *c, uint32_t src, uint32_t dst, uint32_t ch)
{
	uint32_t snic, dnic;
	bool rail = rail_aligned(c, c->res.op, c->res.algo);
	net_nics(c, src, dst, rail, is_p2p(c->res.op, c->res.algo) ? UINT32_MAX : ch, &snic, &dnic);
	return conn_slot(c, src, dst, rail, snic, dnic, ch);
}

static uint32_t send_conn(struct fab_comm *c, uint32_t src, uint32_t dst, uint32_t ch)
{
	uint32_t slot = send_slot(c, src, dst, ch); /* first: it may grow conn_val */
	return c->conn_val[slot];
}

static void post_send(void *obj, uint32_t step)
{
	struct fab_comm *c = obj;
	const struct fab_step *st = &c->ex.s->steps[step];
	uint32_t src = c->map[st->rank], dst = c->map[st->peer];
	uint64_t bytes = wire_bytes(c->res.proto, st->bytes);
	if (fab_topo_gpu_server(c->topo, src) == fab_topo_gpu_server(c->topo, dst)) {
		if (c->parts)
			c->parts[step] = 1;
		fab_sim_post_local(c->w->sim, src, dst, bytes, fab_work_cookie(c->w, on_delivered, c, step));
		return;
	}
	uint32_t slot = send_slot(c, src, dst, st->channel), conn = c->conn_val[slot];
	/* NCCL's default (nccl.split_data_on_qps false): a message goes on one
	 * queue pair per NIC port, the connection's next in turn; split, it is
	 * striped over all of them */
	uint32_t P = c->topo->nic_ports ? c->topo->nic_ports : 1, Q = c->qps_per_conn, first = 0;
	if (!c->w->nccl.split_data_on_qps && Q > P) {
		first = (c->conn_rr[slot]++ % (Q / P)) * P;
		Q = P;
	}
	if (Q > bytes)
		Q = (uint32_t)FAB_MAX(bytes, 1);
	if (c->parts)
		c->parts[step] = Q;
	for (uint32_t q = 0; q < Q; q++)
		fab_sim_post(c->w->sim, conn + first + q, bytes / Q + (q < bytes % Q ? 1 : 0),
			     fab_work_cookie(c->w, on_delivered, c, step));
}

/* a send starts after its protocol's step overhead (a timer), then posts */
static void start_send(void *ctx, struct fab_exec *ex, uint32_t step)
{
	struct fab_comm *c = ctx;
	const struct fab_step *st = &ex->s->steps[step];
	uint32_t src = c->map[st->rank], dst = c->map[st->peer];
	fab_time_ps o = step_overhead(c, fab_topo_gpu_server(c->topo, src) != fab_topo_gpu_server(c->topo, dst));
	if (o)
		fab_work_timer(c->w, fab_sim_now(c->w->sim) + o, post_send, c, step);
	else
		post_send(c, step);
}

static void start_local(void *ctx, struct fab_exec *ex, uint32_t step)
{
	struct fab_comm *c = ctx;
	const struct fab_step *st = &ex->s->steps[step];
	if (st->kind == FAB_STEP_RECV_REDUCE && c->reduce_bps && st->bytes) {
		fab_work_timer(c->w, fab_sim_now(c->w->sim) + fab_ser_ps(st->bytes, c->reduce_bps), on_local_done, c,
			       step);
		return;
	}
	fab_exec_done(ex, step); /* copies and plain receives take no time */
}

static const struct fab_exec_ops exec_ops = {start_send, start_local};

/* ---- a ring, aggregated (flow engine) ---- */

static void on_agg_done(void *obj, uint32_t arg)
{
	(void)arg;
	finish_op(obj);
}

static void on_agg_delivered(void *obj, uint32_t arg)
{
	(void)arg;
	struct fab_comm *c = obj;
	if (--c->agg_left)
		return;
	fab_work_timer(c->w, FAB_MAX(fab_sim_now(c->w->sim), c->agg_floor_ps), on_agg_done, c, 0);
}

/* ring steps of one rank for op (0: not a ring operation) */
static uint32_t ring_steps(int op, uint32_t n)
{
	return op == FAB_OP_ALLREDUCE ? 2 * (n - 1) : op == FAB_OP_REDUCESCATTER || op == FAB_OP_ALLGATHER ? n - 1 : 0;
}

/* The pipelining unit of an operation, as NCCL sizes it when
 * collective.chunk is 0: a step of the protocol's buffer (Simple 512 KiB,
 * LL 32 KiB of data, LL128 562.5 KiB of data); a tree with LL128 halves
 * it until every channel has enough chunks to fill its depth. */
static uint64_t op_chunk(const struct fab_comm *c, int algo, int proto, uint64_t size)
{
	if (c->chunk_bytes)
		return c->chunk_bytes;
	uint64_t chunk = proto == FAB_PROTO_LL ? 32768 : proto == FAB_PROTO_LL128 ? 576000 : 524288;
	if (algo == FAB_ALGO_TREE && proto == FAB_PROTO_LL128) {
		double G = c->ranks_per_server ? c->ranks_per_server : 1, N = c->nservers, depth = 1 + 0.1 * G;
		for (double k = 2; k <= N; k *= 2)
			depth++;
		uint64_t per = size / FAB_MAX(2 * c->channels, 1u);
		while ((double)(per / chunk) < depth * 64 / G && chunk > 131072)
			chunk /= 2;
		while ((double)(per / chunk) < depth * 16 / G && chunk > 32768)
			chunk /= 2;
	}
	return chunk;
}

/* the steps a ring's schedule holds: sends and receives of every rank,
 * channel and chunk */
static double ring_sched_steps(const struct fab_comm *c, int op, int algo, int proto, uint64_t size)
{
	double per = (double)size / c->nranks / c->channels;
	double chunks = ceil(per / (double)op_chunk(c, algo, proto, size));
	return 2.0 * ring_steps(op, c->nranks) * c->nranks * c->channels * FAB_MAX(chunks, 1.0);
}

static bool use_aggregate(const struct fab_comm *c, int op, int algo, int proto, uint64_t size)
{
	const struct fab_fabric_params *fp = fab_sim_fabric(c->w->sim);
	uint32_t steps = ring_steps(op, c->nranks);
	if (fp->engine != FAB_ENGINE_FLOW || algo != FAB_ALGO_RING || !steps || fp->flow_ring == FAB_FLOW_RING_STEPS)
		return false;
	if (fp->flow_ring == FAB_FLOW_RING_AGGREGATE)
		return true;
	/* auto: when the schedule would hold more than 4M steps */
	return ring_sched_steps(c, op, algo, proto, size) > 4e6;
}

/* A ring's schedule that would not fit (in this machine's memory, or in a
 * step index) is refused before it is built, with the way out. */
static int ring_fits(const struct fab_comm *c, int op, int algo, int proto, uint64_t size, struct fab_err *err)
{
	if (algo != FAB_ALGO_RING || !ring_steps(op, c->nranks))
		return 0;
	double steps = ring_sched_steps(c, op, algo, proto, size);
	double bytes = steps * (sizeof(struct fab_step) + 2 * sizeof(uint32_t)); /* a step and its dependencies */
	uint64_t avail = fab_mem_available();
	if (steps < 2e9 && (!avail || bytes < 0.8 * (double)avail))
		return 0;
	return fab_err_set(err, FAB_EINVAL,
			   "%s: a ring of %u ranks, %u channels, %s: its schedule would hold %.3g steps (about %.1f "
			   "GiB), more than this machine's %.1f GiB available%s; use the flow engine (engine: flow, "
			   "which aggregates a ring), fewer ranks or a smaller size",
			   c->name, c->nranks, c->channels, fab_coll_op_title(op), steps, bytes / (1 << 30),
			   (double)avail / (1 << 30), steps < 2e9 ? "" : " (and more steps than it can count)");
}

static void ring_aggregate_start(struct fab_comm *c, int op, uint64_t size)
{
	uint32_t n = c->nranks, steps = ring_steps(op, n);
	uint64_t per_step = wire_bytes(c->res.proto, size / n / c->channels), bytes = per_step * steps;
	const struct fab_server_params *sp = fab_sim_server(c->w->sim);
	double lap_s = 0; /* the slowest channel's lap: every edge's chunk alone plus its latency */
	c->aggregate = true;
	c->agg_left = 1; /* held until every edge is posted */
	c->sched.channels = c->channels;
	c->sched.nsteps = 2 * steps * n * c->channels;
	for (uint32_t ch = 0; ch < c->channels; ch++) {
		double lap = 0;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t src = c->gpu[c->chan_order[ch][i]], dst = c->gpu[c->chan_order[ch][(i + 1) % n]];
			if (fab_topo_gpu_server(c->topo, src) == fab_topo_gpu_server(c->topo, dst)) {
				lap += (double)(sp->nvlink_lat_ps + step_overhead(c, false)) / 1e12 +
					(double)per_step / c->bw_nvl_Bps;
				c->agg_left++;
				fab_sim_post_local(c->w->sim, src, dst, bytes,
						   fab_work_cookie(c->w, on_agg_delivered, c, 0));
				continue;
			}
			uint32_t conn = send_conn(c, src, dst, ch);
			fab_time_ps lat = fab_sim_conn_latency(c->w->sim, conn);
			lap += (double)(lat + step_overhead(c, true)) / 1e12 +
				(double)per_step / fab_sim_conn_rate(c->w->sim, conn);
			uint32_t Q = (uint32_t)FAB_MIN((uint64_t)c->qps_per_conn, FAB_MAX(bytes, 1));
			for (uint32_t q = 0; q < Q; q++) {
				c->agg_left++;
				fab_sim_post(c->w->sim, conn + q, bytes / Q + (q < bytes % Q ? 1 : 0),
					     fab_work_cookie(c->w, on_agg_delivered, c, 0));
			}
		}
		lap_s = FAB_MAX(lap_s, lap);
	}
	c->agg_floor_ps = fab_sim_now(c->w->sim) + (fab_time_ps)((double)steps / n * lap_s * 1e12);
	on_agg_delivered(c, 0); /* the hold */
}

/* NVLink SHARP: each GPU pushes its buffer into the NVSwitch, which
 * reduces and multicasts the result; a GPU's NVLink carries S out and S in
 * at nvls_efficiency of its rate, and the operation ends when the last
 * GPU is done */
static void nvls_start(struct fab_comm *c, uint64_t size)
{
	const struct fab_server_params *sp = fab_sim_server(c->w->sim);
	double nvl = sp->nvlink_eff > 0 ? sp->nvlink_eff : 1, eff = sp->nvls_eff > 0 ? sp->nvls_eff : 1;
	uint64_t bytes = (uint64_t)((double)size * nvl / eff + 0.5); /* the copies' pace is nvlink_efficiency */
	c->aggregate = true;
	c->agg_left = 1;
	c->sched.channels = c->channels;
	c->sched.nsteps = c->nranks;
	c->agg_floor_ps = 0;
	for (uint32_t r = 0; r < c->nranks; r++) {
		c->agg_left++;
		fab_sim_post_local(c->w->sim, c->gpu[r], c->gpu[r], bytes,
				   fab_work_cookie(c->w, on_agg_delivered, c, 0));
	}
	on_agg_delivered(c, 0); /* the hold */
}

/* In-network reduction (SHARP, NCCL's CollNet): the buffer goes in parts
 * of G x 512 KiB through three stages, a part entering the first when the
 * one before has left it: a reduce-scatter inside each server (each GPU
 * sends (G-1)/G of the part over NVLink); the switches' reduction (each
 * GPU's NIC sends its 1/G shard up and receives the reduced shard back,
 * emulated as one message from it to the NIC of the same rail in the next
 * server, so every NIC link carries the shard once each way, and a link
 * between switches one shard per crossing where SHARP's tree would carry
 * one per switch); an all-gather inside each server. */
static void sharp_stage(struct fab_comm *c, uint32_t p);

static void on_sharp(void *obj, uint32_t p)
{
	struct fab_comm *c = obj;
	if (--c->sh_left[p])
		return;
	if (++c->sh_stage[p] == 3) {
		on_agg_delivered(c, 0); /* the part is done */
		return;
	}
	if (c->sh_stage[p] == 1 && c->sh_next < c->sh_parts) {
		uint32_t q = c->sh_next++;
		sharp_stage(c, q);
	}
	sharp_stage(c, p);
}

static void sharp_stage(struct fab_comm *c, uint32_t p)
{
	uint32_t n = c->nranks, G = c->ranks_per_server, N = n / G;
	c->sh_left[p] = n;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t g = c->hier_gpu[i];
		uint32_t cookie = fab_work_cookie(c->w, on_sharp, c, p);
		if (c->sh_stage[p] != 1) { /* reduce-scatter or all-gather: (G-1)/G of the part over NVLink */
			fab_sim_post_local(c->w->sim, g, g, c->sh_bytes * (G - 1) / G, cookie);
			continue;
		}
		uint32_t peer = c->hier_gpu[((i / G + 1) % N) * G + i % G];
		uint32_t slot = conn_slot(c, g, peer, false, gpu_nic(c, g), gpu_nic(c, peer), 0);
		fab_sim_post(c->w->sim, c->conn_val[slot], FAB_MAX(c->sh_bytes / G, 1), cookie);
	}
}

static void sharp_start(struct fab_comm *c, uint64_t size)
{
	uint64_t G = c->ranks_per_server, part = G * 524288;
	c->sh_parts = (uint32_t)FAB_MAX((size + part - 1) / part, 1);
	c->sh_bytes = (size + c->sh_parts - 1) / c->sh_parts;
	c->sh_left = fab_xcalloc(c->sh_parts, sizeof *c->sh_left);
	c->sh_stage = fab_xcalloc(c->sh_parts, sizeof *c->sh_stage);
	c->aggregate = true;
	c->agg_left = c->sh_parts;
	c->agg_floor_ps = 0;
	c->sched.channels = 1;
	c->sched.nsteps = 3 * c->sh_parts * c->nranks;
	c->sh_next = 1;
	sharp_stage(c, 0);
}

/* the operation begins once its protocol's base latency has passed */
static void begin_op(void *obj, uint32_t agg)
{
	struct fab_comm *c = obj;
	if (c->res.algo == FAB_ALGO_NVLS) {
		nvls_start(c, c->res.bytes);
		return;
	}
	if (c->res.algo == FAB_ALGO_SHARP) {
		sharp_start(c, c->res.bytes);
		return;
	}
	if (agg) {
		ring_aggregate_start(c, c->res.op, c->res.bytes);
		return;
	}
	fab_exec_init(&c->ex, &c->sched, &exec_ops, c);
	fab_exec_start(&c->ex);
	check_finished(c);
}

int fab_comm_start(struct fab_comm *c, const struct fab_coll_req *r, fab_comm_done_fn done, void *ctx,
		   struct fab_err *err)
{
	if (c->busy)
		return fab_err_set(err, FAB_EINTERNAL, "%s: an operation is already running", c->name);
	uint64_t size, in, out;
	fab_coll_sizes(r->op, r->count, r->elem_bytes, c->nranks, &size, &in, &out);
	int algo = r->algo, proto = c->w->nccl.proto;
	fab_comm_select(c, r->op, size, &algo, &proto);
	struct fab_coll_args a = {
		.op = r->op,
		.algo = algo,
		.nranks = c->nranks,
		.count = r->count,
		.elem_bytes = r->elem_bytes,
		.root = r->root,
		.channels = c->channels,
		.chunk_bytes = c->cur_chunk = op_chunk(c, algo, proto, size),
		.ranks_per_node = c->ranks_per_server,
		.chan_order = (const uint32_t *const *)c->chan_order,
		.order = c->chan_order[0],
		.tree_group = comm_tree_group(c),
	};
	if (algo == FAB_ALGO_HIER)
		a.order = NULL, a.chan_order = NULL;
	/* no schedule to build */
	bool agg = use_aggregate(c, r->op, algo, proto, size) || algo == FAB_ALGO_NVLS || algo == FAB_ALGO_SHARP;
	int rc = agg ? 0 : ring_fits(c, r->op, algo, proto, size, err);
	if (!rc && !agg)
		rc = fab_coll_build(&a, &c->sched, err);
	if (rc)
		return rc;
	c->map = algo == FAB_ALGO_HIER ? c->hier_gpu : c->gpu;
	c->res = (struct fab_op_result){.op = r->op,
					.algo = algo,
					.proto = proto,
					.bytes = size,
					.count = r->count,
					.start_ps = fab_sim_now(c->w->sim),
					.op_count = c->ops++};
	c->done = done;
	c->done_ctx = ctx;
	c->busy = true;
	c->aggregate = false;
	if (!agg && c->qps_per_conn > 1)
		c->parts = fab_xcalloc(c->sched.nsteps ? c->sched.nsteps : 1, sizeof *c->parts);
	fab_sim_hold(c->w->sim, +1);
	fab_time_ps base = algo == FAB_ALGO_NVLS ? c->w->nccl.nvls_ps
		: algo == FAB_ALGO_SHARP         ? c->w->nccl.sharp_ps
						 : c->w->nccl.base_ps[proto];
	if (base)
		fab_work_timer(c->w, fab_sim_now(c->w->sim) + base, begin_op, c, agg);
	else
		begin_op(c, agg);
	return 0;
}

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
