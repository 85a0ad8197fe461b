/*
 * scenario.c - the key table, and YAML (plus --set overrides) into
 * struct fab_config.
 *
 * Loading: defaults from the table -> YAML parsed into a tree with
 * positions -> --set overrides grafted onto the tree (origin "--set") -> one
 * walk over the tree that parses each known key, refuses unknown ones (with
 * a did-you-mean), and checks ranges -> cross-key checks.  Nothing is half
 * applied: on any error the whole config is freed.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "ydom.h"

#define OFF(field) offsetof(struct fab_config, field)
#define BIG 1e18

static const struct fab_key_def keys[] = {
	/* topology */
	{"topology.kind", K_ENUM, OFF(topo.kind), "spine-leaf", 0, 0, "spine-leaf|fat-tree|file",
	 "fabric shape: 2-tier spine-leaf, 3-tier k-ary fat-tree, or an edge-list file"},
	{"topology.gpus_per_server", K_U32, OFF(topo.gpus_per_server), "8", 1, 64, NULL,
	 "GPUs in each server"},
	{"topology.nics_per_server", K_U32, OFF(topo.nics_per_server), "8", 1, 64, NULL,
	 "NICs in each server, each with its own switch port; GPU g uses NIC g*nics/gpus"},
	{"topology.leaves", K_U32, OFF(topo.leaves), "4", 1, 4096, NULL, "spine-leaf: leaf switches"},
	{"topology.servers_per_leaf", K_U32, OFF(topo.servers_per_leaf), "2", 1, 4096, NULL,
	 "spine-leaf: servers under each leaf (under each rail group with rail_optimized)"},
	{"topology.spines", K_U32, OFF(topo.spines), "4", 1, 4096, NULL,
	 "spine-leaf: spine switches; derived from oversubscription when that is given instead"},
	{"topology.links_per_spine", K_U32, OFF(topo.links_per_spine), "4", 1, 256, NULL,
	 "spine-leaf: parallel links from each leaf to each spine"},
	{"topology.oversubscription", K_RATIO, OFF(topo.oversub_num), "", 0, 0, NULL,
	 "spine-leaf: requested leaf down:up ratio such as 2:1; derives spines (or links_per_spine when spines is given)"},
	{"topology.rail_optimized", K_BOOL, OFF(topo.rail_optimized), "false", 0, 0, NULL,
	 "spine-leaf: NIC k of every server in a group goes to leaf k of the group"},
	{"topology.k", K_U32, OFF(topo.k), "4", 2, 128, NULL, "fat-tree: arity k (even): k^3/4 NIC ports"},
	{"topology.host_rate", K_RATE, OFF(topo.host_bps), "400Gbps", 1e6, 1.6e12, NULL,
	 "NIC to leaf (edge) links"},
	{"topology.fabric_rate", K_RATE, OFF(topo.fabric_bps), "400Gbps", 1e6, 1.6e12, NULL,
	 "leaf-spine (edge-aggregation) links"},
	{"topology.core_rate", K_RATE, OFF(topo.core_bps), "400Gbps", 1e6, 1.6e12, NULL,
	 "fat-tree: aggregation-core links"},
	{"topology.host_delay", K_TIME, OFF(topo.host_delay_ps), "1us", 0, 1e12, NULL,
	 "propagation delay of NIC links"},
	{"topology.fabric_delay", K_TIME, OFF(topo.fabric_delay_ps), "1us", 0, 1e12, NULL,
	 "propagation delay of switch-to-switch links"},
	{"topology.radix", K_U32, OFF(topo.radix), "64", 2, 1024, NULL,
	 "ports per switch; a design that needs more is refused"},
	{"topology.nvlink_rate", K_RATE, OFF(server.nvlink_bps), "3600Gbps", 1e9, 1e14, NULL,
	 "per GPU and direction through the server's NVSwitch (H100: 450 GB/s)"},
	{"topology.nvlink_latency", K_TIME, OFF(server.nvlink_lat_ps), "1us", 0, 1e9, NULL,
	 "latency of a GPU-to-GPU transfer inside a server"},
	{"topology.pcie_rate", K_RATE, OFF(server.pcie_bps), "512Gbps", 1e9, 1e14, NULL,
	 "GPU to NIC (PCIe Gen5 x16); a NIC sends no faster than this"},
	{"topology.file", K_PATH, OFF(topo_file), "", 0, 0, NULL,
	 "file: edge list (nic NAME / switch NAME / link A B RATE DELAY), relative to the scenario"},
	{"engine", K_ENUM, OFF(fabric.engine), "packet", 0, 0, "packet|flow",
	 "packet: every packet, queue, PAUSE and mark; flow: transfers at max-min fair rates (doc/flow.md)"},
	{"flow.ring", K_ENUM, OFF(fabric.flow_ring), "auto", 0, 0, "auto|steps|aggregate",
	 "flow engine, ring collectives: every step of the schedule (steps); one transfer per ring edge plus "
	 "the steps' latency (aggregate: 16k GPUs in seconds); auto: aggregate past 4M steps"},
	{"flow.queues", K_ENUM, OFF(fabric.flow_queues), "fair", 0, 0, "fair|fifo",
	 "flow engine: fair: transfers share each port max-min fairly; fifo: NICs send at line rate and switch "
	 "ports are first-come first-served queues without limit (no congestion control, deep buffers)"},
	{"flow.batch", K_TIME, OFF(fabric.flow_batch_ps), "0", 0, 1e9, NULL,
	 "flow engine: rates are recomputed once for all changes within this time of the first (0 = at every "
	 "instant; with flow.queues fifo a new transfer still gets its rate at once); trades exactness for speed "
	 "where many small transfers overlap (doc/flow.md)"},
	/* fabric */
	{"fabric.mtu", K_U32, OFF(fabric.mtu), "4096", 256, 4096, NULL,
	 "RoCE payload bytes per packet: 256, 512, 1024, 2048 or 4096"},
	{"fabric.buffer", K_BYTES, OFF(fabric.buffer_bytes), "32MiB", 64 * 1024, 1e12, NULL,
	 "shared packet buffer of each switch"},
	{"fabric.dt_alpha", K_DOUBLE, OFF(fabric.dt_alpha), "1", 1.0 / 128, 128, NULL,
	 "dynamic threshold of lossy queues: a queue may hold alpha x free buffer"},
	{"fabric.control_priority", K_U8, OFF(fabric.ctrl_prio), "7", 0, 7, NULL,
	 "priority of ACK, NAK and CNP packets (strict priority, highest wins)"},
	{"fabric.ecmp.seed", K_U64, OFF(fabric.ecmp_seed), "1", 0, BIG, NULL,
	 "seed of the per-switch ECMP hash seeds"},
	{"fabric.ecmp.same_hash", K_BOOL, OFF(fabric.ecmp_same_hash), "false", 0, 0, NULL,
	 "every switch hashes with the same seed (reproduces ECMP polarization)"},
	{"fabric.pfc.enabled", K_BOOL, OFF(fabric.pfc.enabled), "true", 0, 0, NULL,
	 "priority flow control on the lossless priorities"},
	{"fabric.pfc.priorities", K_PRIOMASK, OFF(fabric.pfc.prio_mask), "[3]", 0, 0, NULL,
	 "lossless priorities, e.g. [3] or [3, 4]"},
	{"fabric.pfc.xoff", K_BYTES, OFF(fabric.pfc.xoff_bytes), "256KiB", 1024, 1e12, NULL,
	 "per ingress port and priority: send PAUSE above this"},
	{"fabric.pfc.xon", K_BYTES, OFF(fabric.pfc.xon_bytes), "192KiB", 0, 1e12, NULL,
	 "send RESUME at or below this (<= xoff)"},
	{"fabric.pfc.headroom", K_BYTES, OFF(fabric.pfc.headroom_bytes), "0", 0, 1e12, NULL,
	 "bytes admitted above xoff before dropping; 0 sizes it from each link (2 x rate x delay + 3 frames)"},
	{"fabric.pfc.quanta", K_U32, OFF(fabric.pfc.quanta), "65535", 1, 65535, NULL,
	 "PAUSE time in 512-bit quanta; refreshed at half time while congested"},
	{"fabric.pfc.watchdog", K_TIME, OFF(fabric.pfc_watchdog_ps), "0", 0, 1e13, NULL,
	 "PFC watchdog: a priority paused this long stops obeying PAUSE for as long (0 = off)"},
	{"fabric.pfc.nic_rx_buffer", K_BYTES, OFF(fabric.pfc.nic_rx_buffer_bytes), "512KiB", 4096,
	 1e12, NULL, "NIC receive buffer: the NIC pauses its switch above it, resumes at half"},
	{"fabric.pfc.nic_rx_drain", K_RATE, OFF(fabric.pfc.nic_rx_drain_bps), "0", 0, 1.6e12, NULL,
	 "rate the NIC empties its receive buffer into the GPU (PCIe); 0 = never slower than the wire (no NIC PAUSE)"},
	{"fabric.ecn.enabled", K_BOOL, OFF(fabric.ecn.enabled), "true", 0, 0, NULL,
	 "ECN marking at switch egress (RED on queue depth)"},
	{"fabric.ecn.kmin", K_BYTES, OFF(fabric.ecn.kmin_bytes), "100KiB", 0, 1e12, NULL,
	 "queue depth where marking starts"},
	{"fabric.ecn.kmax", K_BYTES, OFF(fabric.ecn.kmax_bytes), "400KiB", 1, 1e12, NULL,
	 "queue depth above which every packet is marked"},
	{"fabric.ecn.pmax", K_DOUBLE, OFF(fabric.ecn.pmax), "0.2", 0, 1, NULL,
	 "marking probability at kmax"},
	{"fabric.dcqcn.enabled", K_BOOL, OFF(fabric.dcqcn.enabled), "true", 0, 0, NULL,
	 "DCQCN rate control (CNPs from receivers, rate cuts at senders)"},
	{"fabric.dcqcn.g", K_DOUBLE, OFF(fabric.dcqcn.g), "1/256", 1e-6, 1, NULL, "alpha gain g"},
	{"fabric.dcqcn.initial_alpha", K_DOUBLE, OFF(fabric.dcqcn.initial_alpha), "1", 0, 1, NULL,
	 "alpha of a new queue pair"},
	{"fabric.dcqcn.alpha_period", K_TIME, OFF(fabric.dcqcn.alpha_period_ps), "55us", 1e3, 1e12,
	 NULL, "alpha decays by (1-g) each period without a CNP"},
	{"fabric.dcqcn.rate_period", K_TIME, OFF(fabric.dcqcn.rate_period_ps), "55us", 1e3, 1e12,
	 NULL, "rate-increase timer T"},
	{"fabric.dcqcn.byte_counter", K_BYTES, OFF(fabric.dcqcn.byte_counter), "10MB", 0, 1e12, NULL,
	 "rate-increase byte counter B (0 = off)"},
	{"fabric.dcqcn.fast_recovery_steps", K_U32, OFF(fabric.dcqcn.fast_recovery_steps), "1", 0,
	 1000, NULL, "F: increase steps spent in fast recovery"},
	{"fabric.dcqcn.rai", K_RATE, OFF(fabric.dcqcn.rai_bps), "80Mbps", 0, 1.6e12, NULL,
	 "additive increase step R_AI"},
	{"fabric.dcqcn.rhai", K_RATE, OFF(fabric.dcqcn.rhai_bps), "800Mbps", 0, 1.6e12, NULL,
	 "hyper increase step R_HAI"},
	{"fabric.dcqcn.min_rate", K_RATE, OFF(fabric.dcqcn.min_rate_bps), "100Mbps", 1e3, 1.6e12,
	 NULL, "lowest rate a cut can reach"},
	{"fabric.dcqcn.clamp_target", K_BOOL, OFF(fabric.dcqcn.clamp_target), "false", 0, 0, NULL,
	 "every cut sets the target rate to the current rate (the paper); false: only a cut after a timer increase does (the NIC default)"},
	{"fabric.nic.ack_every", K_U32, OFF(fabric.nic.ack_every), "1", 1, 1024, NULL,
	 "ACK coalescing: one ACK per this many packets (and the last)"},
	{"fabric.nic.rto", K_TIME, OFF(fabric.nic.rto_ps), "1ms", 1e6, 1e13, NULL,
	 "retransmission timeout (go back to the oldest unacknowledged packet)"},
	{"fabric.nic.cnp_interval", K_TIME, OFF(fabric.nic.cnp_interval_ps), "50us", 0, 1e12, NULL,
	 "at most one CNP per queue pair per interval"},
	{"fabric.series_interval", K_TIME, OFF(fabric.series_interval_ps), "0", 0, 1e13, NULL,
	 "sample switch queue depth and throughput every interval (0 = off)"},
	/* traffic */
	{"traffic.flows_csv", K_PATH, OFF(traffic.flows_csv), "", 0, 0, NULL,
	 "CSV flow list with header src,dst,bytes[,start,priority,qps], relative to the scenario"},
	/* collective (fabscope coll) */
	{"collective.op", K_ENUM, OFF(coll.op), "allreduce", 0, 0,
	 "allreduce|reducescatter|allgather|broadcast|reduce|alltoall|sendrecv", "the operation"},
	{"collective.algo", K_ENUM, OFF(coll.algo), "auto", 0, 0,
	 "ring|tree|hierarchical|rhd|direct|auto", "algorithm; auto asks the cost model for each size"},
	{"collective.min_bytes", K_BYTES, OFF(coll.min_bytes), "1KiB", 1, 1e13, NULL,
	 "smallest size (nccl-tests -b)"},
	{"collective.max_bytes", K_BYTES, OFF(coll.max_bytes), "64MiB", 1, 1e13, NULL,
	 "largest size (nccl-tests -e)"},
	{"collective.step_factor", K_U32, OFF(coll.factor), "4", 2, 1024, NULL,
	 "size multiplier from one row to the next (nccl-tests -f)"},
	{"collective.step_bytes", K_BYTES, OFF(coll.step_bytes), "0", 0, 1e13, NULL,
	 "size increment instead of a factor (nccl-tests -i); 0 = use the factor"},
	{"collective.iters", K_U32, OFF(coll.iters), "1", 1, 10000, NULL,
	 "timed iterations per size (nccl-tests -n)"},
	{"collective.warmup", K_U32, OFF(coll.warmup), "0", 0, 10000, NULL,
	 "warm-up iterations per size, not timed (nccl-tests -w)"},
	{"collective.datatype", K_ENUM, OFF(coll.dtype), "float", 0, 0,
	 "int8|uint8|int32|uint32|int64|uint64|half|float|double|bfloat16", "element type"},
	{"collective.root", K_U32, OFF(coll.root), "0", 0, 1e9, NULL, "root rank of broadcast and reduce"},
	{"collective.gpus", K_U32, OFF(coll.gpus), "0", 0, 1e9, NULL,
	 "ranks (GPUs) in the communicator; 0 = every GPU of the cluster"},
	{"collective.placement", K_ENUM, OFF(coll.placement), "packed", 0, 0,
	 "packed|spread|random|scatter",
	 "ranks on servers: in order, one leaf after another, at random (seeded), or consecutive ranks on different servers"},
	{"collective.ring_order", K_ENUM, OFF(coll.ring_order), "topology", 0, 0, "topology|rank|flat",
	 "ring order: servers by leaf; servers by first rank; or exactly the rank order (flat)"},
	{"collective.channels", K_U32, OFF(coll.channels), "0", 0, 32, NULL,
	 "channels (rings, connections per peer); 0 = one per NIC of a server, at least 2"},
	{"collective.qps_per_connection", K_U32, OFF(coll.qps_per_conn), "1", 1, 64, NULL,
	 "queue pairs each message is striped over (NCCL_IB_QPS_PER_CONNECTION); more spread ECMP"},
	{"collective.chunk", K_BYTES, OFF(coll.chunk_bytes), "512KiB", 0, 1e12, NULL,
	 "pipelining unit of ring and tree steps; 0 = no pipelining"},
	{"collective.reduce_rate", K_RATE, OFF(coll.reduce_bps), "0", 0, 1e15, NULL,
	 "how fast a GPU reduces received data; 0 = reductions take no time"},
	{"collective.priority", K_U32, OFF(coll.priority), "3", 0, 7, NULL, "traffic class"},
	{"collective.background_traffic", K_BOOL, OFF(coll.background), "false", 0, 0, NULL,
	 "fabscope coll also runs the scenario's traffic section, as a noisy neighbour"},
	/* matrix (fabscope matrix) */
	{"matrix.bytes", K_BYTES, OFF(matrix.bytes), "1MiB", 1, 1e12, NULL,
	 "bandwidth test: bytes each way per pair"},
	{"matrix.latency_bytes", K_BYTES, OFF(matrix.lat_bytes), "8", 1, 1e9, NULL,
	 "latency test: the ping-pong message"},
	{"matrix.serial", K_BOOL, OFF(matrix.serial), "false", 0, 0, NULL,
	 "one pair at a time instead of n-1 rounds of disjoint pairs"},
	{"matrix.priority", K_U32, OFF(matrix.priority), "3", 0, 7, NULL, "traffic class"},
	{"matrix.timeout", K_TIME, OFF(matrix.timeout_ps), "10ms", 0, 1e15, NULL,
	 "a round not done by then fails its remaining pairs (bandwidth 0) and the test goes on; 0 = wait"},
	{"matrix.sample_pairs", K_U32, OFF(matrix.sample_pairs), "0", 0, 1e6, NULL,
	 "baseline: measure this many random pairs, one at a time, against theory (0 = every pair)"},
	/* run */
	{"run.seed", K_U64, OFF(run.seed), "1", 0, BIG, NULL,
	 "seed of every random stream (ECN marking, generators, port numbers)"},
	{"run.end", K_TIME, OFF(run.end_ps), "0", 0, 1e15, NULL,
	 "stop at this simulated time (0 = when every flow is done)"},
};

#define FOFF(field) offsetof(struct fab_flow_spec, field)
static const struct fab_key_def flow_keys[] = {
	{"src", K_U32, FOFF(src), NULL, 0, 1e9, NULL, "sending GPU"},
	{"dst", K_U32, FOFF(dst), NULL, 0, 1e9, NULL, "receiving GPU"},
	{"bytes", K_BYTES, FOFF(bytes), NULL, 1, 1e15, NULL, "size"},
	{"start", K_TIME, FOFF(start_ps), "0", 0, 1e15, NULL, "start time"},
	{"priority", K_U32, FOFF(priority), "3", 0, 7, NULL, "traffic class"},
	{"qps", K_U32, FOFF(qps), "1", 1, 1024, NULL, "queue pairs the bytes are split over"},
};

#define GOFF(field) offsetof(struct fab_gen_spec, field)
static const struct fab_key_def gen_keys[] = {
	{"kind", K_ENUM, GOFF(kind), NULL, 0, 0, "permutation|all-to-all|incast|random-pairs",
	 "traffic pattern"},
	{"bytes", K_BYTES, GOFF(bytes), NULL, 1, 1e15, NULL, "size of each flow"},
	{"start", K_TIME, GOFF(start_ps), "0", 0, 1e15, NULL, "start time of every flow"},
	{"priority", K_U32, GOFF(priority), "3", 0, 7, NULL, "traffic class"},
	{"qps", K_U32, GOFF(qps), "1", 1, 1024, NULL, "queue pairs per flow"},
	{"senders", K_U32, GOFF(senders), "16", 1, 1e9, NULL, "incast: GPUs that send, drawn at random"},
	{"dst", K_U32, GOFF(dst), "0", 0, 1e9, NULL, "incast: the receiving GPU"},
	{"pairs", K_U32, GOFF(pairs), "16", 1, 1e9, NULL, "random-pairs: number of flows"},
	{"scope", K_ENUM, GOFF(scope), "any", 0, 0, "any|cross-server|cross-leaf",
	 "which pairs are allowed (incast: any means cross-server)"},
};

#define JOFF(field) offsetof(struct fab_job_spec, field)
static const struct fab_key_def job_keys[] = {
	{"name", K_STR32, JOFF(name), "", 0, 0, NULL, "shown in results and logs (default job0, job1, ...)"},
	{"gpus", K_U32, JOFF(gpus), "0", 0, 1e9, NULL, "GPUs of the job = dp x tp x pp (0: the length of gpu_list)"},
	{"placement", K_ENUM, JOFF(placement), "packed", 0, 0, "packed|spread|random|scatter|list",
	 "servers the job takes, among those no earlier job took; list: gpu_list"},
	{"gpu_list", K_U32LIST, JOFF(gpu_list), "", 0, 1e9, NULL, "placement list: the GPUs in rank order"},
	{"ring_order", K_ENUM, JOFF(ring_order), "topology", 0, 0, "topology|rank|flat",
	 "ring order of the data-parallel all-reduces"},
	{"iterations", K_U32, JOFF(iterations), "5", 1, 1e6, NULL, "training steps"},
	{"compute", K_TIME, JOFF(compute_ps), "10ms", 0, 1e15, NULL,
	 "forward + backward compute per iteration (per stage), a third forward"},
	{"gradient_bytes", K_BYTES, JOFF(grad_bytes), "256MiB", 1, 1e13, NULL,
	 "gradient each GPU all-reduces per iteration over its data-parallel group"},
	{"buckets", K_U32, JOFF(buckets), "4", 1, 1024, NULL, "gradient buckets (all-reduced in order)"},
	{"overlap", K_BOOL, JOFF(overlap), "true", 0, 0, NULL,
	 "a bucket's all-reduce starts when the backward pass has produced it (else after the pass)"},
	{"tp", K_U32, JOFF(tp), "1", 1, 1024, NULL, "tensor-parallel group size (consecutive GPUs, one server)"},
	{"tp_bytes", K_BYTES, JOFF(tp_bytes), "0", 0, 1e13, NULL, "bytes of each tensor-parallel all-reduce"},
	{"tp_collectives", K_U32, JOFF(tp_collectives), "4", 0, 1e6, NULL,
	 "tensor-parallel all-reduces per forward pass of a micro-batch (each blocks compute)"},
	{"pp", K_U32, JOFF(pp), "1", 1, 1024, NULL, "pipeline stages"},
	{"pp_bytes", K_BYTES, JOFF(pp_bytes), "0", 0, 1e13, NULL,
	 "activations per micro-batch and GPU sent to the next stage (gradients come back)"},
	{"microbatches", K_U32, JOFF(microbatches), "1", 1, 1e6, NULL, "micro-batches per iteration (GPipe)"},
	{"algo", K_ENUM, JOFF(algo), "auto", 0, 0, "ring|tree|hierarchical|rhd|direct|auto",
	 "data-parallel all-reduce algorithm"},
	{"channels", K_U32, JOFF(channels), "0", 0, 32, NULL, "channels of the data-parallel communicators"},
	{"qps_per_connection", K_U32, JOFF(qps_per_conn), "1", 1, 64, NULL, "queue pairs per connection"},
	{"start", K_TIME, JOFF(start_ps), "0", 0, 1e15, NULL, "when the first iteration starts"},
	{"priority", K_U32, JOFF(priority), "3", 0, 7, NULL, "traffic class"},
};

#define XOFF(field) offsetof(struct fab_fault_spec, field)
static const struct fab_key_def fault_keys[] = {
	{"kind", K_ENUM, XOFF(kind), NULL, 0, 0, "degrade|lossy|down|pfc-storm|ecn|slow-gpu",
	 "what breaks: a link's speed, a link's frames, a link, a NIC's PAUSE, a switch's ECN, a GPU"},
	{"node", K_STR32, XOFF(node), "", 0, 0, NULL, "the NIC or switch (for a link: one end)"},
	{"peer", K_STR32, XOFF(peer), "", 0, 0, NULL, "a link's other end (default: the node's first link)"},
	{"link_index", K_U32, XOFF(link_index), "0", 0, 1024, NULL, "which of parallel links to peer"},
	{"rate", K_RATE, XOFF(rate_bps), "0", 0, 1.6e12, NULL, "degrade: the speed the link really runs at"},
	{"drop", K_DOUBLE, XOFF(drop), "0", 0, 1, NULL, "lossy: probability a frame is lost"},
	{"priority", K_U32, XOFF(priority), "3", 0, 7, NULL, "pfc-storm: the priority paused"},
	{"kmin", K_BYTES, XOFF(kmin_bytes), "0", 0, 1e12, NULL, "ecn: the switch's Kmin"},
	{"kmax", K_BYTES, XOFF(kmax_bytes), "0", 0, 1e12, NULL, "ecn: the switch's Kmax"},
	{"convergence", K_TIME, XOFF(convergence_ps), "50us", 0, 1e13, NULL,
	 "down: time until switches route around the link"},
	{"gpu", K_U32, XOFF(gpu), "0", 0, 1e9, NULL, "slow-gpu: the GPU"},
	{"factor", K_DOUBLE, XOFF(factor), "1", 1, 1000, NULL, "slow-gpu: its compute takes factor times as long"},
	{"start", K_TIME, XOFF(start_ps), "0", 0, 1e15, NULL, "when it breaks"},
	{"end", K_TIME, XOFF(end_ps), "0", 0, 1e15, NULL, "when it is mended (0: never)"},
};

const struct fab_key_def *fab_config_fault_keys(size_t *n)
{
	*n = FAB_ARRAY_LEN(fault_keys);
	return fault_keys;
}

const struct fab_key_def *fab_config_job_keys(size_t *n)
{
	*n = FAB_ARRAY_LEN(job_keys);
	return job_keys;
}

const struct fab_key_def *fab_config_keys(size_t *n)
{
	*n = FAB_ARRAY_LEN(keys);
	return keys;
}

const struct fab_key_def *fab_config_flow_keys(size_t *n)
{
	*n = FAB_ARRAY_LEN(flow_keys);
	return flow_keys;
}

const struct fab_key_def *fab_config_gen_keys(size_t *n)
{
	*n = FAB_ARRAY_LEN(gen_keys);
	return gen_keys;
}

/* Parses text into the field of k at base.  why gets the reason. */
static int parse_value(const struct fab_key_def *k, void *base, const char *text, char *why,
		       size_t wl)
{
	char *field = (char *)base + k->off;
	uint64_t u = 0;
	double d = 0;
	bool b;
	int rc = 0;
	switch (k->type) {
	case K_U32:
	case K_U64:
	case K_U8:
		rc = fab_parse_uint(text, &u, why, wl);
		if (rc)
			return rc;
		if ((double)u < k->min || (double)u > k->max) {
			snprintf(why, wl, "expected an integer from %.0f to %.0f, got %s", k->min,
				 k->max, text);
			return FAB_EINVAL;
		}
		if (k->type == K_U32)
			*(uint32_t *)field = (uint32_t)u;
		else if (k->type == K_U8)
			*(uint8_t *)field = (uint8_t)u;
		else
			*(uint64_t *)field = u;
		return 0;
	case K_RATE:
	case K_TIME:
	case K_BYTES: {
		rc = k->type == K_RATE   ? fab_parse_rate(text, &u, why, wl)
		     : k->type == K_TIME ? fab_parse_time(text, &u, why, wl)
					 : fab_parse_bytes(text, &u, why, wl);
		if (rc)
			return rc;
		bool zero_ok = k->def && !strcmp(k->def, "0");
		if (!(zero_ok && u == 0) && ((double)u < k->min || (double)u > k->max)) {
			char lo[32], hi[32];
			if (k->type == K_RATE) {
				fab_fmt_rate((uint64_t)k->min, lo, sizeof lo);
				fab_fmt_rate((uint64_t)k->max, hi, sizeof hi);
			} else if (k->type == K_TIME) {
				fab_fmt_time((uint64_t)k->min, lo, sizeof lo);
				fab_fmt_time((uint64_t)k->max, hi, sizeof hi);
			} else {
				fab_fmt_bytes((uint64_t)k->min, lo, sizeof lo);
				fab_fmt_bytes((uint64_t)k->max, hi, sizeof hi);
			}
			snprintf(why, wl, "expected a value from %s to %s%s, got %s", lo, hi,
				 zero_ok ? " (or 0)" : "", text);
			return FAB_EINVAL;
		}
		*(uint64_t *)field = u;
		return 0;
	}
	case K_BOOL:
		rc = fab_parse_bool(text, &b, why, wl);
		if (!rc)
			*(bool *)field = b;
		return rc;
	case K_DOUBLE:
		rc = fab_parse_double(text, &d, why, wl);
		if (rc)
			return rc;
		if (d < k->min || d > k->max || d != d) {
			snprintf(why, wl, "expected a number from %g to %g, got %s", k->min, k->max,
				 text);
			return FAB_EINVAL;
		}
		*(double *)field = d;
		return 0;
	case K_ENUM: {
		const char *c = k->choices;
		int idx = 0;
		size_t tl = strlen(text);
		while (c && *c) {
			const char *bar = strchr(c, '|');
			size_t len = bar ? (size_t)(bar - c) : strlen(c);
			if (len == tl && !strncmp(c, text, len)) {
				*(int *)field = idx;
				return 0;
			}
			idx++;
			c = bar ? bar + 1 : NULL;
		}
		snprintf(why, wl, "expected one of %s, got \"%s\"", k->choices, text);
		return FAB_EINVAL;
	}
	case K_RATIO: {
		uint32_t *nd = (uint32_t *)field;
		if (!*text) {
			nd[0] = nd[1] = 0;
			return 0;
		}
		unsigned long a, bb;
		char extra;
		if (sscanf(text, "%lu:%lu%c", &a, &bb, &extra) != 2 || !a || !bb || a > 1000 ||
		    bb > 1000) {
			snprintf(why, wl, "expected a ratio such as 2:1, got \"%s\"", text);
			return FAB_EINVAL;
		}
		nd[0] = (uint32_t)a;
		nd[1] = (uint32_t)bb;
		return 0;
	}
	case K_PRIOMASK: {
		uint8_t mask = 0;
		const char *p = text;
		while (*p == ' ' || *p == '[')
			p++;
		while (*p && *p != ']') {
			if (*p < '0' || *p > '7' || (p[1] >= '0' && p[1] <= '9')) {
				snprintf(why, wl, "expected a list of priorities 0..7 such as [3], got \"%s\"",
					 text);
				return FAB_EINVAL;
			}
			mask |= (uint8_t)(1u << (*p - '0'));
			p++;
			while (*p == ' ' || *p == ',')
				p++;
		}
		*(uint8_t *)field = mask;
		return 0;
	}
	case K_PATH: {
		char **s = (char **)field;
		free(*s);
		*s = *text ? fab_xstrdup(text) : NULL;
		return 0;
	}
	case K_STR32:
		if (strlen(text) >= 32) {
			snprintf(why, wl, "at most 31 characters, got \"%s\"", text);
			return FAB_EINVAL;
		}
		snprintf(field, 32, "%s", text);
		return 0;
	case K_U32LIST: {
		uint32_t **list = (uint32_t **)field;
		uint32_t *count = (uint32_t *)(field + sizeof(uint32_t *));
		free(*list);
		*list = NULL;
		*count = 0;
		const char *p = text;
		while (*p == ' ' || *p == '[')
			p++;
		while (*p && *p != ']') {
			char *end;
			errno = 0;
			unsigned long v = strtoul(p, &end, 10);
			if (end == p || errno || v > (unsigned long)k->max) {
				snprintf(why, wl, "expected a list of GPU numbers such as [0, 1, 8, 9], got \"%s\"",
					 text);
				free(*list);
				*list = NULL;
				*count = 0;
				return FAB_EINVAL;
			}
			*list = fab_xrealloc(*list, *count + 1, sizeof **list);
			(*list)[(*count)++] = (uint32_t)v;
			p = end;
			while (*p == ' ' || *p == ',')
				p++;
		}
		return 0;
	}
	}
	snprintf(why, wl, "internal: unknown key type");
	return FAB_EINTERNAL;
}

void fab_config_value_text(const struct fab_key_def *k, const void *base, char *buf, size_t len)
{
	const char *field = (const char *)base + k->off;
	switch (k->type) {
	case K_U32:
		snprintf(buf, len, "%u", *(const uint32_t *)field);
		return;
	case K_U8:
		snprintf(buf, len, "%u", *(const uint8_t *)field);
		return;
	case K_U64:
		snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)field);
		return;
	case K_RATE:
		fab_fmt_rate(*(const uint64_t *)field, buf, len);
		return;
	case K_TIME:
		fab_fmt_time(*(const uint64_t *)field, buf, len);
		return;
	case K_BYTES:
		fab_fmt_bytes(*(const uint64_t *)field, buf, len);
		return;
	case K_BOOL:
		snprintf(buf, len, "%s", *(const bool *)field ? "true" : "false");
		return;
	case K_DOUBLE:
		snprintf(buf, len, "%.17g", *(const double *)field);
		return;
	case K_ENUM: {
		int idx = *(const int *)field;
		const char *c = k->choices;
		for (int i = 0; i < idx && c; i++) {
			c = strchr(c, '|');
			if (c)
				c++;
		}
		size_t l = c ? strcspn(c, "|") : 0;
		snprintf(buf, len, "%.*s", (int)l, c ? c : "");
		return;
	}
	case K_RATIO: {
		const uint32_t *nd = (const uint32_t *)field;
		if (nd[0])
			snprintf(buf, len, "%u:%u", nd[0], nd[1]);
		else
			snprintf(buf, len, "%s", "");
		return;
	}
	case K_PRIOMASK: {
		uint8_t m = *(const uint8_t *)field;
		size_t o = 0;
		o += (size_t)snprintf(buf + o, len - o, "[");
		for (unsigned i = 0; i < 8 && o < len; i++)
			if (m & (1u << i))
				o += (size_t)snprintf(buf + o, len - o, "%s%u", o > 1 ? ", " : "", i);
		if (o < len)
			snprintf(buf + o, len - o, "]");
		return;
	}
	case K_PATH: {
		const char *s = *(char *const *)field;
		snprintf(buf, len, "%s", s ? s : "");
		return;
	}
	case K_STR32:
		snprintf(buf, len, "%s", field);
		return;
	case K_U32LIST: {
		const uint32_t *list = *(uint32_t *const *)field;
		uint32_t count = *(const uint32_t *)(field + sizeof(uint32_t *));
		size_t o = (size_t)snprintf(buf, len, "[");
		for (uint32_t i = 0; i < count && o + 12 < len; i++)
			o += (size_t)snprintf(buf + o, len - o, "%s%u", i ? ", " : "", list[i]);
		if (o < len)
			snprintf(buf + o, len - o, "]");
		return;
	}
	}
	buf[0] = 0;
}

/* ---- the walk ---- */

struct loader {
	struct fab_config *c;
	struct fab_err *err;
	const char *base_dir;
};

static void where(const struct ynode *n, char *buf, size_t len)
{
	if (n->origin && !strcmp(n->origin, "--set"))
		snprintf(buf, len, "--set ");
	else
		snprintf(buf, len, "%s:%u:%u: ", n->origin, n->line, n->col);
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	size_t d[64][64];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
			d[i][j] = FAB_MIN(sub, FAB_MIN(del, ins));
		}
	return d[la][lb];
}

/* Closest name among the children of prefix, for "did you mean". */
static const char *suggest(const struct fab_key_def *tab, size_t n, const char *prefix,
			   const char *name, char *buf, size_t len)
{
	size_t best = 3, pl = prefix ? strlen(prefix) : 0;
	const char *found = NULL;
	for (size_t i = 0; i < n; i++) {
		const char *p = tab[i].path;
		if (pl && (strncmp(p, prefix, pl) || p[pl] != '.'))
			continue;
		const char *rest = pl ? p + pl + 1 : p;
		size_t cl = strcspn(rest, ".");
		char child[64];
		snprintf(child, sizeof child, "%.*s", (int)cl, rest);
		size_t dd = edit_distance(child, name);
		size_t nl = strlen(name);
		if (nl >= 3 && dd >= best && !strncmp(child, name, nl))
			dd = best - 1; /* "prio" for "priority" */
		if (dd < best) {
			best = dd;
			snprintf(buf, len, "%s", child);
			found = buf;
		}
	}
	return found;
}

static bool is_section(const char *path)
{
	size_t l = strlen(path);
	for (size_t i = 0; i < FAB_ARRAY_LEN(keys); i++)
		if (!strncmp(keys[i].path, path, l) && keys[i].path[l] == '.')
			return true;
	return !strcmp(path, "traffic") || !strcmp(path, "collective") || !strcmp(path, "matrix");
}

static int key_index(const char *path)
{
	for (size_t i = 0; i < FAB_ARRAY_LEN(keys); i++)
		if (!strcmp(keys[i].path, path))
			return (int)i;
	return -1;
}

static const char *scalar_text(const struct ynode *v, char *buf, size_t len)
{
	if (v->kind == Y_SCALAR)
		return v->scalar;
	if (v->kind == Y_SEQ) {
		/* a flow sequence of scalars, for priority lists */
		size_t o = 0;
		o += (size_t)snprintf(buf, len, "[");
		for (size_t i = 0; i < v->n && o < len; i++) {
			if (v->vals[i]->kind != Y_SCALAR)
				return NULL;
			o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "," : "", v->vals[i]->scalar);
		}
		if (o < len)
			snprintf(buf + o, len - o, "]");
		return buf;
	}
	return NULL;
}

static int load_key(struct loader *L, const struct fab_key_def *k, void *base, const char *path,
		    const struct ynode *v)
{
	char w[300], why[256], seqbuf[4096];
	const char *text = scalar_text(v, seqbuf, sizeof seqbuf);
	where(v, w, sizeof w);
	if (!text || (v->kind == Y_SEQ && k->type != K_PRIOMASK && k->type != K_U32LIST))
		return fab_err_set(L->err, FAB_EINVAL, "%s%s: expected a single value, got a %s", w,
				   path, v->kind == Y_MAP ? "mapping" : "list");
	if (parse_value(k, base, text, why, sizeof why))
		return fab_err_set(L->err, FAB_EINVAL, "%s%s: %s", w, path, why);
	return 0;
}

static void set_loc(struct fab_src_loc *loc, const struct ynode *n, const char *what)
{
	loc->origin = n->origin;
	loc->line = n->line;
	loc->col = n->col;
	snprintf(loc->what, sizeof loc->what, "%s", what);
}

static int load_item(struct loader *L, const struct fab_key_def *tab, size_t ntab, void *item,
		     const struct ynode *map, const char *what)
{
	char w[300], sug[64];
	if (map->kind != Y_MAP) {
		where(map, w, sizeof w);
		return fab_err_set(L->err, FAB_EINVAL,
				   "%s%s: expected a mapping such as {src: 0, dst: 8, bytes: 1MiB}",
				   w, what);
	}
	for (size_t i = 0; i < ntab; i++)
		if (tab[i].def) {
			char why[200];
			parse_value(&tab[i], item, tab[i].def, why, sizeof why);
		}
	for (size_t i = 0; i < map->n; i++) {
		const struct fab_key_def *k = NULL;
		for (size_t j = 0; j < ntab; j++)
			if (!strcmp(tab[j].path, map->keys[i]))
				k = &tab[j];
		char path[128];
		snprintf(path, sizeof path, "%s.%s", what, map->keys[i]);
		if (!k) {
			struct ynode kn = {.origin = map->vals[i]->origin,
					   .line = map->key_line[i],
					   .col = map->key_col[i]};
			where(&kn, w, sizeof w);
			const char *s = suggest(tab, ntab, NULL, map->keys[i], sug, sizeof sug);
			return fab_err_set(L->err, FAB_EINVAL, "%s%s: unknown key%s%s%s", w, path,
					   s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
		}
		if (load_key(L, k, item, path, map->vals[i]))
			return FAB_EINVAL;
	}
	for (size_t j = 0; j < ntab; j++)
		if (!tab[j].def && !fab_ydom_get(map, tab[j].path)) {
			where(map, w, sizeof w);
			return fab_err_set(L->err, FAB_EINVAL, "%s%s: missing key '%s'", w, what,
					   tab[j].path);
		}
	return 0;
}

static int load_list(struct loader *L, const char *path, const struct ynode *seq)
{
	char w[300];
	bool flows = !strcmp(path, "traffic.flows"), jobs = !strcmp(path, "jobs");
	bool faults = !strcmp(path, "faults");
	if (seq->kind != Y_SEQ) {
		where(seq, w, sizeof w);
		return fab_err_set(L->err, FAB_EINVAL, "%s%s: expected a list (items start with '- ')",
				   w, path);
	}
	struct fab_traffic_params *tp = &L->c->traffic;
	for (size_t i = 0; i < seq->n; i++) {
		char what[64];
		snprintf(what, sizeof what, "%s[%zu]", path, i);
		if (faults) {
			struct fab_config *c = L->c;
			c->faults = fab_xrealloc(c->faults, c->nfaults + 1, sizeof *c->faults);
			struct fab_fault_spec *f = &c->faults[c->nfaults++];
			memset(f, 0, sizeof *f);
			if (load_item(L, fault_keys, FAB_ARRAY_LEN(fault_keys), f, seq->vals[i], what))
				return FAB_EINVAL;
			set_loc(&f->loc, seq->vals[i], what);
		} else if (jobs) {
			struct fab_config *c = L->c;
			c->jobs = fab_xrealloc(c->jobs, c->njobs + 1, sizeof *c->jobs);
			struct fab_job_spec *j = &c->jobs[c->njobs++];
			memset(j, 0, sizeof *j);
			if (load_item(L, job_keys, FAB_ARRAY_LEN(job_keys), j, seq->vals[i], what))
				return FAB_EINVAL;
			set_loc(&j->loc, seq->vals[i], what);
			if (!j->name[0])
				snprintf(j->name, sizeof j->name, "job%zu", i);
			if (!j->gpus)
				j->gpus = j->ngpu_list;
			if (j->placement == FAB_PLACE_LIST && j->ngpu_list != j->gpus) {
				char wh[300];
				where(seq->vals[i], wh, sizeof wh);
				return fab_err_set(L->err, FAB_EINVAL,
						   "%s%s: placement list needs gpu_list with gpus (%u) GPUs, got %u",
						   wh, what, j->gpus, j->ngpu_list);
			}
			if (!j->gpus) {
				char wh[300];
				where(seq->vals[i], wh, sizeof wh);
				return fab_err_set(L->err, FAB_EINVAL, "%s%s: a job needs gpus (or a gpu_list)",
						   wh, what);
			}
		} else if (flows) {
			tp->flows = fab_xrealloc(tp->flows, tp->nflows + 1, sizeof *tp->flows);
			struct fab_flow_spec *f = &tp->flows[tp->nflows++];
			memset(f, 0, sizeof *f);
			if (load_item(L, flow_keys, FAB_ARRAY_LEN(flow_keys), f, seq->vals[i], what))
				return FAB_EINVAL;
			set_loc(&f->loc, seq->vals[i], what);
		} else {
			tp->gens = fab_xrealloc(tp->gens, tp->ngens + 1, sizeof *tp->gens);
			struct fab_gen_spec *g = &tp->gens[tp->ngens++];
			memset(g, 0, sizeof *g);
			if (load_item(L, gen_keys, FAB_ARRAY_LEN(gen_keys), g, seq->vals[i], what))
				return FAB_EINVAL;
			set_loc(&g->loc, seq->vals[i], what);
		}
	}
	return 0;
}

static int walk(struct loader *L, const struct ynode *map, const char *prefix)
{
	char w[300], sug[64];
	for (size_t i = 0; i < map->n; i++) {
		char path[160];
		if (prefix)
			snprintf(path, sizeof path, "%s.%s", prefix, map->keys[i]);
		else
			snprintf(path, sizeof path, "%s", map->keys[i]);
		const struct ynode *v = map->vals[i];
		int ki = key_index(path);
		if (ki >= 0) {
			if (load_key(L, &keys[ki], L->c, path, v))
				return FAB_EINVAL;
			L->c->loc[ki] = (struct fab_key_loc){v->origin, v->line, v->col, true};
			continue;
		}
		if (!strcmp(path, "traffic.flows") || !strcmp(path, "traffic.generators") ||
		    !strcmp(path, "jobs") || !strcmp(path, "faults")) {
			if (load_list(L, path, v))
				return FAB_EINVAL;
			continue;
		}
		if (is_section(path)) {
			if (v->kind != Y_MAP) {
				where(v, w, sizeof w);
				return fab_err_set(L->err, FAB_EINVAL, "%s%s: expected a section (a mapping)",
						   w, path);
			}
			if (walk(L, v, path))
				return FAB_EINVAL;
			continue;
		}
		struct ynode kn = {.origin = v->origin, .line = map->key_line[i], .col = map->key_col[i]};
		where(&kn, w, sizeof w);
		const char *s = suggest(keys, FAB_ARRAY_LEN(keys), prefix, map->keys[i], sug, sizeof sug);
		if (!s && !prefix && !strcmp(map->keys[i], "flows"))
			s = "traffic.flows";
		return fab_err_set(L->err, FAB_EINVAL, "%s%s: unknown key%s%s%s", w, path,
				   s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
	}
	return 0;
}

/* Grafts "a.b.c=value" onto the tree. */
static int apply_set(struct ynode *root, const char *set, struct fab_err *err)
{
	const char *eq = strchr(set, '=');
	if (!eq || eq == set)
		return fab_err_set(err, FAB_EINVAL, "--set %s: expected key=value", set);
	char *path = fab_xstrdup(set);
	path[eq - set] = 0;
	const char *value = eq + 1;
	struct ynode *cur = root;
	char *save = NULL;
	char *part = strtok_r(path, ".", &save);
	int rc = 0;
	while (part) {
		char *next = strtok_r(NULL, ".", &save);
		if (cur->kind == Y_SEQ) {
			char *end;
			errno = 0;
			unsigned long idx = strtoul(part, &end, 10);
			if (*end || errno || idx >= cur->n) {
				rc = fab_err_set(err, FAB_EINVAL,
						 "--set %s: '%s' is not an index of the list (0..%zu)", set,
						 part, cur->n ? cur->n - 1 : 0);
				goto out;
			}
			if (!next) {
				rc = fab_err_set(err, FAB_EINVAL, "--set %s: set a key of the list item", set);
				goto out;
			}
			cur = cur->vals[idx];
			part = next;
			continue;
		}
		if (cur->kind != Y_MAP) {
			rc = fab_err_set(err, FAB_EINVAL, "--set %s: '%s' is inside a value, not a section",
					 set, part);
			goto out;
		}
		if (!next) {
			struct ynode *v = fab_ydom_new(Y_SCALAR, "--set", 0, 0);
			v->scalar = fab_xstrdup(value);
			fab_ydom_put(cur, part, v, 0, 0);
			break;
		}
		struct ynode *child = fab_ydom_get(cur, part);
		if (!child && strspn(next, "0123456789") == strlen(next)) {
			rc = fab_err_set(err, FAB_EINVAL,
					 "--set %s: '%s' is not an index of the list (there is no list '%s')",
					 set, next, part);
			goto out;
		}
		if (!child) {
			child = fab_ydom_new(Y_MAP, "--set", 0, 0);
			fab_ydom_put(cur, part, child, 0, 0);
		}
		cur = child;
		part = next;
	}
out:
	free(path);
	return rc;
}

static char *resolve_path(const char *base_dir, const char *p)
{
	if (!p || p[0] == '/' || !base_dir || !*base_dir || !strcmp(base_dir, "."))
		return p ? fab_xstrdup(p) : NULL;
	size_t n = strlen(base_dir) + strlen(p) + 2;
	char *out = fab_xcalloc(1, n);
	snprintf(out, n, "%s/%s", base_dir, p);
	return out;
}

static int cross_checks(struct loader *L)
{
	struct fab_config *c = L->c;
	char w[300];
	uint32_t mtu = c->fabric.mtu;
	if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096) {
		fab_config_where(c, "fabric.mtu", w, sizeof w);
		return fab_err_set(L->err, FAB_EINVAL,
				   "%sfabric.mtu: expected 256, 512, 1024, 2048 or 4096, got %u", w, mtu);
	}
	if (c->fabric.ecn.kmin_bytes > c->fabric.ecn.kmax_bytes) {
		fab_config_where(c, "fabric.ecn.kmin", w, sizeof w);
		return fab_err_set(L->err, FAB_EINVAL, "%sfabric.ecn.kmin: must not exceed kmax", w);
	}
	if (c->fabric.pfc.xon_bytes > c->fabric.pfc.xoff_bytes) {
		fab_config_where(c, "fabric.pfc.xon", w, sizeof w);
		return fab_err_set(L->err, FAB_EINVAL, "%sfabric.pfc.xon: must not exceed xoff", w);
	}
	if (c->topo.kind == FAB_TOPO_FILE && !c->topo_file) {
		fab_config_where(c, "topology.kind", w, sizeof w);
		return fab_err_set(L->err, FAB_EINVAL,
				   "%stopology.kind: kind file needs topology.file", w);
	}
	return 0;
}

struct fab_config *fab_config_parse(const char *text, size_t len, const char *origin,
				    const char *base_dir, const char *const *sets, size_t nsets,
				    struct fab_err *err)
{
	struct fab_config *c = fab_xcalloc(1, sizeof *c);
	c->origin = fab_xstrdup(origin);
	c->loc = fab_xcalloc(FAB_ARRAY_LEN(keys), sizeof *c->loc);
	struct loader L = {c, err, base_dir};
	for (size_t i = 0; i < FAB_ARRAY_LEN(keys); i++) {
		char why[200];
		if (parse_value(&keys[i], c, keys[i].def, why, sizeof why)) {
			fab_err_set(err, FAB_EINTERNAL, "default of %s: %s", keys[i].path, why);
			goto fail;
		}
	}
	struct ynode *root = fab_ydom_parse(text, len, c->origin, err);
	if (!root)
		goto fail;
	for (size_t i = 0; i < nsets; i++)
		if (apply_set(root, sets[i], err)) {
			fab_ydom_free(root);
			goto fail;
		}
	int rc = walk(&L, root, NULL);
	/* locations point at origins: keep the names alive past the tree */
	fab_ydom_free(root);
	if (rc || cross_checks(&L))
		goto fail;
	/* resolve relative paths against the scenario's folder */
	char *tf = resolve_path(base_dir, c->topo_file);
	free(c->topo_file);
	c->topo_file = tf;
	c->topo.file = c->topo_file;
	char *fc = resolve_path(base_dir, c->traffic.flows_csv);
	free(c->traffic.flows_csv);
	c->traffic.flows_csv = fc;
	c->topo.spines_given = fab_config_given(c, "topology.spines");
	c->topo.links_given = fab_config_given(c, "topology.links_per_spine");
	if (!c->topo.oversub_num && !c->topo.spines_given && !fab_config_given(c, "topology.links_per_spine")) {
		/* neither spines nor a ratio: the fabric is non-blocking by default */
		c->topo.oversub_num = 1;
		c->topo.oversub_den = 1;
	}
	return c;
fail:
	fab_config_free(c);
	return NULL;
}

struct fab_config *fab_config_load(const char *path, const char *const *sets, size_t nsets,
				   struct fab_err *err)
{
	if (!path)
		return fab_config_parse(fab_default_scenario, strlen(fab_default_scenario),
					"<built-in>", NULL, sets, nsets, err);
	FILE *f = fopen(path, "rb");
	if (!f) {
		fab_err_set(err, FAB_EIO, "%s: cannot open scenario: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 8192, len = 0;
	char *buf = fab_xcalloc(1, cap);
	size_t got;
	while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 == cap) {
			cap *= 2;
			buf = fab_xrealloc(buf, cap, 1);
		}
	}
	fclose(f);
	buf[len] = 0;
	char *dup = fab_xstrdup(path);
	struct fab_config *c = fab_config_parse(buf, len, path, dirname(dup), sets, nsets, err);
	free(dup);
	free(buf);
	return c;
}

void fab_config_free(struct fab_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->njobs; i++)
		free(c->jobs[i].gpu_list);
	free(c->jobs);
	free(c->faults);
	fab_traffic_free(&c->traffic);
	free(c->topo_file);
	free(c->origin);
	free(c->loc);
	free(c);
}

bool fab_config_given(const struct fab_config *c, const char *path)
{
	int i = key_index(path);
	return i >= 0 && c->loc[i].given;
}

void fab_config_where(const struct fab_config *c, const char *path, char *buf, size_t len)
{
	int i = key_index(path);
	buf[0] = 0;
	if (i < 0 || !c->loc[i].given)
		return;
	const struct fab_key_loc *l = &c->loc[i];
	if (l->origin && !strcmp(l->origin, "--set"))
		snprintf(buf, len, "--set ");
	else
		snprintf(buf, len, "%s:%u:%u: ", l->origin, l->line, l->col);
}
