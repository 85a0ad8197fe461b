/*
 * comm.c - communicators: their ranks, ring orders and trees, the cost
 * model's inputs, the layout they log, and their connections.  An
 * operation run on them is comm_run.c's; the cost model and the choice of
 * algorithm and protocol are comm_model.c's.
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
 */
#include <stdlib.h>
#include <string.h>

#include "../base/rng.h"
#include "comm_int.h"

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
uint32_t comm_conn_slot(struct fab_comm *c, uint32_t src, uint32_t dst, bool rail, uint32_t src_nic, uint32_t dst_nic,
			uint32_t ch)
{
	uint64_t key = ((uint64_t)src << 42) | ((uint64_t)dst << 22) | ((uint64_t)ch << 1) | rail;
	key += 1; /* 0 marks an empty slot */
	if (c->nconns * 2 >= c->conn_cap) {
		c->step_slot_n = 0; /* the slots move */
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
uint32_t comm_tree_group(const struct fab_comm *c)
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
	c->siblings = p->siblings ? p->siblings : 1;
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
	comm_nvl_register(c);
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
	free(c->step_slot);
	free(c->sh_left);
	free(c->sh_stage);
	free(c->agg_arr);
	comm_replay_free(c);
	memset(c, 0, sizeof *c);
}

/* the slot of the connection a network send from GPU src to GPU dst on
 * channel ch uses (its first queue pair: c->conn_val[slot]) */
uint32_t comm_send_slot(struct fab_comm *c, uint32_t src, uint32_t dst, uint32_t ch)
{
	uint32_t snic, dnic;
	bool rail = rail_aligned(c, c->res.op, c->res.algo);
	net_nics(c, src, dst, rail, is_p2p(c->res.op, c->res.algo) ? UINT32_MAX : ch, &snic, &dnic);
	return comm_conn_slot(c, src, dst, rail, snic, dnic, ch);
}

uint32_t comm_send_conn(struct fab_comm *c, uint32_t src, uint32_t dst, uint32_t ch)
{
	uint32_t slot = comm_send_slot(c, src, dst, ch); /* first: it may grow conn_val */
	return c->conn_val[slot];
}
