/*
 * keys.c - every scenario key: its path, type, default, range and
 * documentation, in one table per section (and one per list item: flows,
 * generators, jobs, faults).  Defaults, parsing, range checks, --set
 * overrides, the effective configuration in results, `fabscope sim --keys`
 * and doc/scenario.md all come from here, so they cannot disagree.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../flow/flow.h"
#include "../packet/packet.h"
#include "scenario.h"

#define OFF(field) offsetof(struct fab_config, field)
#define BIG 1e18

static const struct fab_key_def core_keys[] = {
	/* topology */
	{"topology.kind", K_ENUM, OFF(topo.kind), "spine-leaf", 0, 0, "spine-leaf|fat-tree|file|ns3",
	 "fabric shape: 2-tier spine-leaf, 3-tier k-ary fat-tree, an edge-list file, or HPCC's ns-3 topology file"},
	{"topology.gpus_per_server", K_U32, OFF(topo.gpus_per_server), "8", 1, 64, NULL, "GPUs in each server"},
	{"topology.nics_per_server", K_U32, OFF(topo.nics_per_server), "8", 1, 64, NULL,
	 "NICs in each server, each with its own switch port; GPU g uses NIC g*nics/gpus"},
	{"topology.leaves", K_U32, OFF(topo.leaves), "4", 1, 4096, NULL, "spine-leaf: leaf switches"},
	{"topology.servers_per_leaf", K_U32, OFF(topo.servers_per_leaf), "2", 1, 4096, NULL,
	 "spine-leaf: servers under each leaf (under each rail group with rail_optimized)"},
	{"topology.spines", K_U32, OFF(topo.spines), "4", 1, 4096, NULL,
	 "spine-leaf: spine switches; derived from oversubscription when that is given instead"},
	{"topology.links_per_spine", K_U32, OFF(topo.links_per_spine), "4", 1, 256, NULL,
	 "spine-leaf: parallel links from each leaf to each spine"},
	{"topology.pods", K_U32, OFF(topo.pods), "1", 1, 4096, NULL,
	 "spine-leaf: pods, each its own leaves and spines as above, joined by super-spines (three tiers when "
	 "more than 1)"},
	{"topology.super_spines", K_U32, OFF(topo.super_spines), "1", 1, 4096, NULL,
	 "spine-leaf with pods: super-spines in each plane (plane j joins spine j of every pod)"},
	{"topology.links_per_super", K_U32, OFF(topo.links_per_super), "1", 1, 256, NULL,
	 "spine-leaf with pods: parallel links from a spine to each super-spine of its plane"},
	{"topology.oversubscription", K_RATIO, OFF(topo.oversub_num), "", 0, 0, NULL,
	 "spine-leaf: requested leaf down:up ratio such as 2:1; derives spines (or links_per_spine when spines is given)"},
	{"topology.rail_optimized", K_BOOL, OFF(topo.rail_optimized), "false", 0, 0, NULL,
	 "spine-leaf: NIC k of every server in a group goes to leaf k of the group"},
	{"topology.nic_ports", K_U32, OFF(topo.nic_ports), "1", 1, 4, NULL,
	 "spine-leaf: ports of each NIC, each its own link at host_rate; queue pairs spread over them and move to "
	 "a surviving port when one goes down"},
	{"topology.dual_tor", K_BOOL, OFF(topo.dual_tor), "false", 0, 0, NULL,
	 "spine-leaf, nic_ports 2: port j of every NIC to leaf j of its ToR pair (non-stacked dual ToR); leaves "
	 "counts every leaf"},
	{"topology.k", K_U32, OFF(topo.k), "4", 2, 128, NULL, "fat-tree: arity k (even): k^3/4 NIC ports"},
	{"topology.host_rate", K_RATE, OFF(topo.host_bps), "400Gbps", 1e6, 1.6e12, NULL, "NIC to leaf (edge) links"},
	{"topology.fabric_rate", K_RATE, OFF(topo.fabric_bps), "400Gbps", 1e6, 1.6e12, NULL,
	 "leaf-spine (edge-aggregation) links"},
	{"topology.core_rate", K_RATE, OFF(topo.core_bps), "400Gbps", 1e6, 1.6e12, NULL,
	 "fat-tree: aggregation-core links; spine-leaf with pods: spine-super-spine links"},
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
	{"topology.nvlink_efficiency", K_DOUBLE, OFF(server.nvlink_eff), "0.82", 0.01, 1, NULL,
	 "share of nvlink_rate a GPU's collective copies reach (H100: 370 of 450 GB/s, NCCL's ring busbw in one "
	 "server, as NCCL's maintainers give it)"},
	{"topology.nvls", K_BOOL, OFF(server.nvls), "true", 0, 0, NULL,
	 "the NVSwitch reduces (NVLink SHARP): AllReduce inside one server can run as nvls"},
	{"topology.sharp", K_BOOL, OFF(server.sharp), "false", 0, 0, NULL,
	 "the fabric's switches reduce (SHARP, NCCL's CollNet): AllReduce across servers can run as sharp"},
	{"topology.nvls_efficiency", K_DOUBLE, OFF(server.nvls_eff), "0.61", 0.01, 1, NULL,
	 "an NVLS AllReduce moves each GPU's buffer at this share of nvlink_rate (H100: algbw 275 GB/s, busbw "
	 "480, as NCCL's maintainers give it)"},
	{"topology.pcie_rate", K_RATE, OFF(server.pcie_bps), "512Gbps", 1e6, 1e14, NULL,
	 "GPU to NIC (PCIe Gen5 x16); a NIC sends no faster than this"},
	{"topology.file", K_PATH, OFF(topo_file), "", 0, 0, NULL,
	 "file: edge list (nic NAME / switch NAME / link A B RATE DELAY); ns3: NODES SWITCHES LINKS, the switch "
	 "ids, then A B RATE DELAY ERROR per link; relative to the scenario"},
	{"engine", K_ENUM, OFF(fabric.engine), "packet", 0, 0, "packet|flow",
	 "packet: every packet, queue, PAUSE and mark; flow: transfers at max-min fair rates (doc/flow.md)"},
	{"flow.ring", K_ENUM, OFF(fabric.flow_ring), "auto", 0, 0, "auto|steps|aggregate",
	 "flow engine, ring collectives: every step of the schedule (steps); one transfer per ring edge plus "
	 "the steps' latency (aggregate: 16k GPUs in seconds); auto: aggregate past 4M steps (with a job's groups alongside) or inside one server"},
	{"flow.tree", K_ENUM, OFF(fabric.flow_tree), "auto", 0, 0, "auto|steps|aggregate",
	 "flow engine, tree collectives: every step of the schedule (steps); one transfer per tree edge, then "
	 "the pipeline's critical path at the rates they got (aggregate); auto: aggregate past 2^28 steps x servers (with a job's groups alongside)"},
	{"flow.queues", K_ENUM, OFF(fabric.flow_queues), "fair", 0, 0, NULL /* the flow engine's models (build_keys) */,
	 NULL /* and their lines */},
	{"flow.batch", K_TIME, OFF(fabric.flow_batch_ps), "0", 0, 1e9, NULL,
	 "flow engine: rates are recomputed once for all changes within this time of the first (0 = at every "
	 "instant; with flow.queues fifo a new transfer still gets its rate at once); trades exactness for speed "
	 "where many small transfers overlap (doc/flow.md)"},
	{"flow.solve", K_ENUM, OFF(fabric.flow_solve), "auto", 0, 0, "component|local|auto",
	 "flow engine, flow.queues fair: a change re-solves the fair shares of its whole component of ports and "
	 "transfers (component), or of the transfers it reaches, grown until every other transfer keeps a "
	 "bottleneck (local: the same shares but for the ACKs' load, times within 1%); auto: local from "
	 "4,096 NICs (doc/flow.md)"},
	{"flow.batch_large", K_TIME, OFF(fabric.flow_batch_large_ps), "1us", 0, 1e9, NULL,
	 "flow engine, flow.queues fair: flow.batch's window while the last recomputation re-solved "
	 "256 transfers or more at once (a collective's steps, an all-to-all, across a large fabric; 0 = none); "
	 "smaller problems are solved at every instant (doc/flow.md)"},
	/* fabric */
	{"fabric.transport", K_ENUM, OFF(fabric.transport), "roce", 0, 0,
	 NULL /* the registry's transports (build_keys) */, NULL /* and their lines */},
	{"fabric.ib", K_MODEL_KEYS, 0, NULL, 0, 0, "fabric.ib", NULL},
	{"fabric.mtu", K_U32, OFF(fabric.mtu), "4096", 64, 9000, NULL,
	 "payload bytes per packet (RoCE NICs: 256, 512, 1024, 2048 or 4096; any value, e.g. 1000, to match another "
	 "simulator)"},
	{"fabric.wire.data_overhead", K_U32, OFF(fabric.wire.data_overhead), "0", 0, 1000, NULL,
	 "frame bytes of a data packet beyond its payload, FCS included (0: the transport's; RoCEv2 62)"},
	{"fabric.wire.ack_frame", K_U32, OFF(fabric.wire.ack_frame), "0", 0, 1000, NULL,
	 "frame bytes of an ACK or NAK (0: the transport's; RoCEv2 66)"},
	{"fabric.wire.preamble_ifg", K_U32, OFF(fabric.wire.preamble_ifg), "20", 0, 100, NULL,
	 "bytes a frame costs on the line beyond itself: preamble, delimiter and gap (0 to match simulators "
	 "that leave them out)"},
	{"fabric.buffer", K_BYTES, OFF(fabric.buffer_bytes), "32MiB", 64 * 1024, 1e12, NULL,
	 "shared packet buffer of each switch"},
	{"fabric.dt_alpha", K_DOUBLE, OFF(fabric.dt_alpha), "1", 1.0 / 128, 128, NULL,
	 "dynamic threshold of lossy queues: a queue may hold alpha x free buffer"},
	{"fabric.control_priority", K_U8, OFF(fabric.ctrl_prio), "7", 0, 7, NULL,
	 "priority of ACK, NAK and CNP packets (strict priority, highest wins)"},
	{"fabric.ecmp.seed", K_U64, OFF(fabric.ecmp_seed), "1", 0, BIG, NULL, "seed of the per-switch ECMP hash seeds"},
	{"fabric.ecmp.same_hash", K_BOOL, OFF(fabric.ecmp_same_hash), "false", 0, 0, NULL,
	 "every switch hashes with the same seed (reproduces ECMP polarization)"},
	{"fabric.ecmp.hash", K_ENUM, OFF(fabric.ecmp_hash), "mix", 0, 0, "mix|xor",
	 "how a switch hashes the 5-tuple onto its ports: a strong mix with its seed, or the fields XORed with "
	 "its seed modulo the ports (weak: sequential addresses and ports collide, and tiers polarize)"},
	{"fabric.ecmp.adaptive", K_BOOL, OFF(fabric.ecmp_adaptive), "false", 0, 0, NULL,
	 "adaptive routing (packet engine): each data packet takes the equal-cost port with the fewest queued "
	 "bytes, and NICs place packets that arrive out of order (InfiniBand AR, Spectrum-X)"},
	{"fabric.ecmp.flowlet_gap", K_TIME, OFF(fabric.flowlet_gap_ps), "0", 0, 1e12, NULL,
	 "adaptive routing by flowlets: a flow keeps its port until it has been silent this long (a table of 4096 "
	 "slots by hash per switch); 0: every packet chooses"},
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
	{"fabric.pfc.threshold", K_ENUM, OFF(fabric.pfc.dynamic), "static", 0, 0, "static|dynamic",
	 "static: pause above xoff, resume at xon; dynamic: pause at (buffer - headroom and reserves - shared use) >> "
	 "shift, as shared-buffer switches compute it (doc/model.md)"},
	{"fabric.pfc.shift", K_U32, OFF(fabric.pfc.dyn_shift), "3", 1, 16, NULL,
	 "dynamic: the threshold's shift at shift_rate (one less per doubling of a port's speed, at least 1)"},
	{"fabric.pfc.shift_rate", K_RATE, OFF(fabric.pfc.dyn_ref_rate), "100Gbps", 1e6, 1.6e12, NULL,
	 "dynamic: the port speed the shift is given for"},
	{"fabric.pfc.reserve", K_BYTES, OFF(fabric.pfc.reserve_bytes), "0", 0, 1e9, NULL,
	 "dynamic: bytes each ingress port and priority may hold before the shared pool"},
	{"fabric.pfc.resume_offset", K_BYTES, OFF(fabric.pfc.resume_offset), "3KiB", 0, 1e9, NULL,
	 "dynamic: resume when the shared use is this far below the threshold (or 0)"},
	{"fabric.pfc.headroom_delays", K_DOUBLE, OFF(fabric.pfc.headroom_delays), "0", 0, 100, NULL,
	 "headroom = port rate x link delay x this (0: fabric.pfc.headroom, or 2 x rate x delay + 3 frames)"},
	{"fabric.pfc.until_resume", K_BOOL, OFF(fabric.pfc.until_resume), "false", 0, 0, NULL,
	 "a PAUSE holds until its RESUME, without quanta timer or refresh (as HPCC's ns-3 models it)"},
	{"fabric.pfc.quanta", K_U32, OFF(fabric.pfc.quanta), "65535", 1, 65535, NULL,
	 "PAUSE time in 512-bit quanta; refreshed at half time while congested"},
	{"fabric.pfc.watchdog", K_TIME, OFF(fabric.pfc_watchdog_ps), "0", 0, 1e13, NULL,
	 "switch PFC watchdog: an egress queue paused this long without draining turns lossy (PAUSE ignored, its "
	 "packets dropped) (0 = off)"},
	{"fabric.pfc.watchdog_restore", K_TIME, OFF(fabric.pfc_wd_restore_ps), "0", 0, 1e13, NULL,
	 "the queue is lossless again after this long without a PAUSE from the peer (0 = the watchdog time)"},
	{"fabric.pfc.nic_watchdog", K_TIME, OFF(fabric.nic_watchdog_ps), "100ms", 0, 1e13, NULL,
	 "NIC watchdog: a NIC that has paused its switch this long (its receive pipeline stalled) sends RESUME "
	 "and no PAUSE again (0 = off)"},
	{"fabric.pfc.nic_rx_buffer", K_BYTES, OFF(fabric.pfc.nic_rx_buffer_bytes), "512KiB", 4096, 1e12, NULL,
	 "NIC receive buffer: the NIC pauses its switch above it, resumes at half"},
	{"fabric.pfc.nic_rx_drain", K_RATE, OFF(fabric.pfc.nic_rx_drain_bps), "0", 0, 1.6e12, NULL,
	 "rate the NIC empties its receive buffer into the GPU (PCIe); 0 = never slower than the wire (no NIC PAUSE)"},
	{"fabric.ecn.enabled", K_BOOL, OFF(fabric.ecn.enabled), "true", 0, 0, NULL,
	 "ECN marking at switch egress (the discipline fabric.ecn.marking names, on queue depth)"},
	{"fabric.ecn.kmin", K_BYTES, OFF(fabric.ecn.kmin_bytes), "100KiB", 0, 1e12, NULL,
	 "queue depth where marking starts"},
	{"fabric.ecn.kmax", K_BYTES, OFF(fabric.ecn.kmax_bytes), "400KiB", 1, 1e12, NULL,
	 "queue depth above which every packet is marked"},
	{"fabric.ecn.pmax", K_DOUBLE, OFF(fabric.ecn.pmax), "0.2", 0, 1, NULL, "marking probability at kmax"},
	{"fabric.ecn.ref_rate", K_RATE, OFF(fabric.ecn.ref_rate), "0", 1e6, 1.6e12, NULL,
	 "kmin and kmax are for ports of this rate, other ports' in proportion to their rate (0: the same on every "
	 "port)"},
	{"fabric.ecn.mark_at", K_ENUM, OFF(fabric.ecn.mark_at), "dequeue", 0, 0, "dequeue|dequeue-after|enqueue",
	 "dequeue: on the queue with the departing packet; dequeue-after: on the queue it leaves behind (HPCC's ns-3); "
	 "enqueue: on the queue with the arriving packet"},
	{"fabric.ecn.marking", K_ENUM, OFF(fabric.ecn.marking), "red", 0, 0,
	 NULL /* the packet engine's disciplines (build_keys) */, NULL /* and their lines */},
	{"fabric.cc", K_ENUM, OFF(cc_choice), "auto", 0, 0, NULL /* the registry's models (build_keys) */,
	 "the congestion control of the fabric's queue pairs: auto, the transport's keys (RoCE: DCQCN while "
	 "fabric.dcqcn.enabled, its variant; TCP: fabric.tcp.cc; InfiniBand: none unless fabric.dcqcn.enabled is "
	 "given), or a model by name (doc/model.md); a model of another transport is refused"},
	{"fabric.cc.models", K_MODEL_KEYS, 0, NULL, 0, 0, NULL, NULL},
	{"fabric.dcqcn", K_MODEL_KEYS, 0, NULL, 0, 0, "fabric.dcqcn", NULL},
	{"fabric.tcp", K_MODEL_KEYS, 0, NULL, 0, 0, "fabric.tcp", NULL},
	{"fabric.nic.acks_ignore_pause", K_BOOL, OFF(fabric.nic.acks_ignore_pause), "false", 0, 0, NULL,
	 "a NIC sends ACKs, NAKs and CNPs even while their priority is paused (from a top queue, as HPCC's ns-3 "
	 "hosts do)"},
	{"fabric.nic.ack_every", K_U32, OFF(fabric.nic.ack_every), "1", 1, 1024, NULL,
	 "ACK coalescing: one ACK per this many packets (and the last)"},
	{"fabric.nic.rto", K_TIME, OFF(fabric.nic.rto_ps), "4.294967296s", 1e6, 1e13, NULL,
	 "retransmission timeout (go back to the oldest unacknowledged packet): the queue pair's ACK timeout, "
	 "4.096 us x 2^NCCL_IB_TIMEOUT (NCCL's default 20); NICs with adaptive retransmission resend sooner"},
	{"fabric.nic.retransmit", K_ENUM, OFF(fabric.nic.retransmit), "go-back-n", 0, 0, "go-back-n|go-back-0",
	 "after a loss resend from the first missing packet, or the whole message (the receiver discards its part)"},
	{"fabric.nic.retry_count", K_U32, OFF(fabric.nic.retry_count), "7", 0, 1000000, NULL,
	 "recoveries (NAK or timeout) in a row without progress after which a queue pair fails, as InfiniBand's "
	 "retry_cnt (NCCL_IB_RETRY_CNT, 7)"},
	{"fabric.nic.cnp_interval", K_TIME, OFF(fabric.nic.cnp_interval_ps), "50us", 0, 1e12, NULL,
	 "at most one CNP per queue pair per interval"},
	{"fabric.series_interval", K_TIME, OFF(fabric.series_interval_ps), "0", 0, 1e13, NULL,
	 "sample switch queue depth and throughput every interval (0 = off; of instants in a row where nothing "
	 "moved, the first and the last)"},
	/* traffic */
	{"traffic.flows_csv", K_PATH, OFF(traffic.flows_csv), "", 0, 0, NULL,
	 "CSV flow list with header src,dst,bytes[,start,priority,qps], relative to the scenario"},
	{"traffic.flows_ns3", K_PATH, OFF(traffic.flows_ns3), "", 0, 0, NULL,
	 "HPCC's ns-3 flow file (N, then SRC DST PG DPORT BYTES START_S per flow; ids are the topology's hosts "
	 "hID), relative to the scenario"},
	/* collective (fabscope coll) */
	{"collective.op", K_ENUM, OFF(coll.op), "allreduce", 0, 0,
	 "allreduce|reducescatter|allgather|broadcast|reduce|alltoall|sendrecv", "the operation"},
	{"collective.algo", K_ENUM, OFF(coll.algo), "auto", 0, 0, "ring|tree|hierarchical|rhd|direct|nvls|sharp|auto",
	 "algorithm; auto asks the cost model for each size"},
	{"collective.min_bytes", K_BYTES, OFF(coll.min_bytes), "1KiB", 1, 1e13, NULL, "smallest size (nccl-tests -b)"},
	{"collective.max_bytes", K_BYTES, OFF(coll.max_bytes), "64MiB", 1, 1e13, NULL, "largest size (nccl-tests -e)"},
	{"collective.step_factor", K_U32, OFF(coll.factor), "4", 2, 1024, NULL,
	 "size multiplier from one row to the next (nccl-tests -f)"},
	{"collective.step_bytes", K_BYTES, OFF(coll.step_bytes), "0", 0, 1e13, NULL,
	 "size increment instead of a factor (nccl-tests -i); 0 = use the factor"},
	{"collective.iters", K_U32, OFF(coll.iters), "20", 1, 10000, NULL, "timed iterations per size (nccl-tests -n)"},
	{"collective.warmup", K_U32, OFF(coll.warmup), "5", 0, 10000, NULL,
	 "warm-up iterations per size, not timed (nccl-tests -w)"},
	{"collective.every_iteration", K_BOOL, OFF(coll.every_iteration), "false", 0, 0, NULL,
	 "false: once three iterations in a row take the same time (within 0.01%), the rest of the size's iterations "
	 "count at that time without being simulated; true: simulate them all"},
	{"collective.datatype", K_ENUM, OFF(coll.dtype), "float", 0, 0,
	 "int8|uint8|int32|uint32|int64|uint64|half|float|double|bfloat16", "element type"},
	{"collective.root", K_U32, OFF(coll.root), "0", 0, 1e9, NULL, "root rank of broadcast and reduce"},
	{"collective.gpus", K_U32, OFF(coll.gpus), "0", 0, 1e9, NULL,
	 "ranks (GPUs) in the communicator; 0 = every GPU of the cluster"},
	{"collective.placement", K_ENUM, OFF(coll.placement), "packed", 0, 0, "packed|spread|random|scatter",
	 "ranks on servers: in order, one leaf after another, at random (seeded), or consecutive ranks on different servers"},
	{"collective.ring_order", K_ENUM, OFF(coll.ring_order), "topology", 0, 0, "topology|rank|flat",
	 "ring order: servers by leaf; servers by first rank; or exactly the rank order (flat)"},
	{"collective.channels", K_U32, OFF(coll.channels), "0", 0, 32, NULL,
	 "channels (rings, connections per peer); 0 = one per NIC of a server, at least 2"},
	{"collective.qps_per_connection", K_U32, OFF(coll.qps_per_conn), "1", 1, 64, NULL,
	 "queue pairs each message is striped over (NCCL_IB_QPS_PER_CONNECTION); more spread ECMP"},
	{"collective.chunk", K_BYTES, OFF(coll.chunk_bytes), "0", 0, 1e12, NULL,
	 "pipelining unit of ring and tree steps; 0 = as NCCL sizes it (Simple 512 KiB, LL 32 KiB, LL128 562.5 KiB, "
	 "a LL128 tree smaller until its pipeline fills)"},
	{"collective.reduce_rate", K_RATE, OFF(coll.reduce_bps), "0", 0, 1e15, NULL,
	 "how fast a GPU reduces received data; 0 = reductions take no time"},
	{"collective.priority", K_U32, OFF(coll.priority), "3", 0, 7, NULL, "traffic class"},
	{"collective.background_traffic", K_BOOL, OFF(coll.background), "false", 0, 0, NULL,
	 "fabscope coll also runs the scenario's traffic section, as a noisy neighbour"},
	/* what NCCL's environment sets for every communicator */
	{"nccl.cross_nic", K_BOOL, OFF(nccl.cross_nic), "false", 0, 0, NULL,
	 "false: a ring or tree channel enters and leaves every server through NICs on one rail (NCCL_CROSS_NIC=0); "
	 "true: each GPU sends through its own NIC, so a channel may change rail at a server"},
	{"nccl.pxn", K_BOOL, OFF(nccl.pxn), "true", 0, 0, NULL,
	 "point-to-point sends (AllToAll, SendRecv, direct) leave through the sending server's NIC on the "
	 "destination's rail, relayed over NVLink, as NCCL's PXN; false: through the sender's own NIC"},
	{"nccl.split_data_on_qps", K_BOOL, OFF(nccl.split_data_on_qps), "false", 0, 0, NULL,
	 "with qps_per_connection above 1: false (NCCL's default, NCCL_IB_SPLIT_DATA_ON_QPS=0): each message goes on "
	 "the connection's next queue pair in turn; true: every message is striped over all of them"},
	{"nccl.proto", K_ENUM, OFF(nccl.proto), "auto", 0, 0, "ll|ll128|simple|auto",
	 "protocol of every collective (NCCL_PROTO): LL (half the wire bytes are flags, lowest latency), LL128 "
	 "(120 of 128 bytes), Simple (all, highest latency); auto: the cost model chooses per operation and size"},
	{"nccl.base_latency.ll", K_TIME, OFF(nccl.base_ps[0]), "6.6us", 0, 1e9, NULL,
	 "LL: per operation (NCCL's tuner: ring base latency)"},
	{"nccl.base_latency.ll128", K_TIME, OFF(nccl.base_ps[1]), "14us", 0, 1e9, NULL, "LL128: per operation"},
	{"nccl.base_latency.simple", K_TIME, OFF(nccl.base_ps[2]), "8.4us", 0, 1e9, NULL, "Simple: per operation"},
	{"nccl.hop_latency.ll", K_TIME, OFF(nccl.hop_ps[0]), "0.6us", 0, 1e9, NULL,
	 "LL: a step's latency, the links' own included (the engine adds what they do not take; NCCL's tuner: "
	 "NVLink ring hop)"},
	{"nccl.hop_latency.ll128", K_TIME, OFF(nccl.hop_ps[1]), "1.9us", 0, 1e9, NULL, "LL128: per step"},
	{"nccl.hop_latency.simple", K_TIME, OFF(nccl.hop_ps[2]), "3.4us", 0, 1e9, NULL, "Simple: per step"},
	{"nccl.net_latency.ll", K_TIME, OFF(nccl.net_ps[0]), "2.1us", 0, 1e9, NULL,
	 "LL: what a step between servers adds to hop_latency (NCCL's tuner: network hop less NVLink hop)"},
	{"nccl.net_latency.ll128", K_TIME, OFF(nccl.net_ps[1]), "2.1us", 0, 1e9, NULL, "LL128: per network step"},
	{"nccl.net_latency.simple", K_TIME, OFF(nccl.net_ps[2]), "10.6us", 0, 1e9, NULL,
	 "Simple: per network step (proxy, flush)"},
	{"nccl.nvls_latency", K_TIME, OFF(nccl.nvls_ps), "25us", 0, 1e9, NULL,
	 "an NVLS AllReduce's latency (NCCL's tuner: NVLS on NVLink)"},
	{"nccl.sharp_latency", K_TIME, OFF(nccl.sharp_ps), "31us", 0, 1e9, NULL,
	 "a SHARP AllReduce's latency (NCCL's tuner: CollNet Direct on the network)"},
	/* matrix (fabscope matrix) */
	{"matrix.bytes", K_BYTES, OFF(matrix.bytes), "1MiB", 1, 1e12, NULL, "bandwidth test: bytes each way per pair"},
	{"matrix.latency_bytes", K_BYTES, OFF(matrix.lat_bytes), "8", 1, 1e9, NULL,
	 "latency test: the ping-pong message"},
	{"matrix.serial", K_BOOL, OFF(matrix.serial), "false", 0, 0, NULL,
	 "one pair at a time instead of n-1 rounds of disjoint pairs"},
	{"matrix.priority", K_U32, OFF(matrix.priority), "3", 0, 7, NULL, "traffic class"},
	{"matrix.nics", K_ENUM, OFF(matrix.nics), "all", 0, 0, "all|first",
	 "the endpoints: every NIC, or the first NIC of each server (as a probe with one rank a host measures)"},
	{"matrix.timeout", K_TIME, OFF(matrix.timeout_ps), "10ms", 0, 1e15, NULL,
	 "a round not done by then fails its remaining pairs (bandwidth 0) and the test goes on; 0 = wait"},
	{"matrix.sample_pairs", K_U32, OFF(matrix.sample_pairs), "0", 0, 1e6, NULL,
	 "baseline: measure this many random pairs, one at a time, against theory (0 = every pair)"},
	/* run */
	{"run.seed", K_U64, OFF(run.seed), "1", 0, BIG, NULL,
	 "seed of every random stream (ECN marking, generators, port numbers)"},
	{"run.end", K_TIME, OFF(run.end_ps), "0", 0, 1e15, NULL,
	 "stop at this simulated time (0 = when every flow is done)"},
	{"run.threads", K_U32, OFF(fabric.threads), "1", 1, 64, NULL,
	 "packet engine: run the fabric's partitions on at most this many threads, no more than the cores free at "
	 "the start (FABSCOPE_THREADS_EXACT=1: this many); the result is byte for byte the one thread's "
	 "(doc/model.md, parallel runs)"},
	{"run.partitions", K_U32, OFF(fabric.partitions), "0", 0, 1024, NULL,
	 "packet engine on threads: split the fabric this many ways, at most one a NIC, the threads taking them "
	 "window by window, a faster core more (0 = 8 a thread); the result is the same for any number"},
};

#define FOFF(field) offsetof(struct fab_flow_spec, field)
static struct fab_key_def flow_keys[] = {
	{"src", K_U32, FOFF(src), NULL, 0, 1e9, NULL, "sending GPU"},
	{"dst", K_U32, FOFF(dst), NULL, 0, 1e9, NULL, "receiving GPU"},
	{"bytes", K_BYTES, FOFF(bytes), NULL, 1, 1e15, NULL, "size"},
	{"start", K_TIME, FOFF(start_ps), "0", 0, 1e15, NULL, "start time"},
	{"priority", K_U32, FOFF(priority), "3", 0, 7, NULL, "traffic class"},
	{"qps", K_U32, FOFF(qps), "1", 1, 1024, NULL, "queue pairs the bytes are split over"},
	{"transport", K_ENUM, FOFF(transport), "fabric", 0, 0, NULL /* the registry's (build_keys) */,
	 "the transport of its queue pairs: fabric (fabric.transport), roce or tcp beside each other on an Ethernet "
	 "fabric (give tcp a priority outside fabric.pfc.priorities to run it lossy), ib only on an InfiniBand one"},
};

#define GOFF(field) offsetof(struct fab_gen_spec, field)
static struct fab_key_def gen_keys[] = {
	{"kind", K_ENUM, GOFF(kind), NULL, 0, 0, "permutation|all-to-all|incast|random-pairs|poisson",
	 "traffic pattern"},
	{"bytes", K_BYTES, GOFF(bytes), "", 1, 1e15, NULL, "size of each flow (every kind but poisson: required)"},
	{"start", K_TIME, GOFF(start_ps), "0", 0, 1e15, NULL, "start time of every flow (poisson: of the arrivals)"},
	{"priority", K_U32, GOFF(priority), "3", 0, 7, NULL, "traffic class"},
	{"qps", K_U32, GOFF(qps), "1", 1, 1024, NULL, "queue pairs per flow"},
	{"transport", K_ENUM, GOFF(transport), "fabric", 0, 0, NULL /* the registry's (build_keys) */,
	 "the transport of its queue pairs: fabric (fabric.transport), roce or tcp beside each other on an Ethernet "
	 "fabric (give tcp a priority outside fabric.pfc.priorities to run it lossy), ib only on an InfiniBand one"},
	{"senders", K_U32, GOFF(senders), "16", 1, 1e9, NULL, "incast: GPUs that send, drawn at random"},
	{"dst", K_U32, GOFF(dst), "0", 0, 1e9, NULL, "incast: the receiving GPU"},
	{"pairs", K_U32, GOFF(pairs), "16", 1, 1e9, NULL, "random-pairs: number of flows"},
	{"scope", K_ENUM, GOFF(scope), "any", 0, 0, "any|cross-server|cross-leaf",
	 "which pairs are allowed (incast: any means cross-server)"},
	{"cdf", K_PATH, GOFF(cdf), "", 0, 0, NULL,
	 "poisson: flow sizes, websearch, fb_hadoop, or a file of SIZE PERCENT lines (relative to the scenario)"},
	{"load", K_DOUBLE, GOFF(load), "0", 0, 1, NULL,
	 "poisson: offered load, a fraction of each GPU's share of its NIC's line rate (payload bytes)"},
	{"duration", K_TIME, GOFF(duration_ps), "0", 0, 1e15, NULL, "poisson: flows arrive from start for this long"},
	{"incast_load", K_DOUBLE, GOFF(incast_load), "0", 0, 1, NULL,
	 "poisson: incast events on top, as a fraction of the sum of the NICs' line rates (0: none)"},
	{"incast_senders", K_U32, GOFF(incast_senders), "0", 0, 1e9, NULL,
	 "poisson: GPUs that send in each incast event (drawn at random, other servers)"},
	{"incast_bytes", K_BYTES, GOFF(incast_bytes), "0", 0, 1e15, NULL, "poisson: bytes each incast sender sends"},
};

#define JOFF(field) offsetof(struct fab_job_spec, field)
static struct fab_key_def job_keys[] = {
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
	{"replay", K_BOOL, JOFF(replay), "true", 0, 0, NULL,
	 "a collective inside one server whose NVLink nothing else uses runs once per size, then repeats its "
	 "time exactly, without the events (doc/jobs.md)"},
	{"tp_bytes", K_BYTES, JOFF(tp_bytes), "0", 0, 1e13, NULL, "bytes of each tensor-parallel all-reduce"},
	{"tp_collectives", K_U32, JOFF(tp_collectives), "4", 0, 1e6, NULL,
	 "tensor-parallel all-reduces per forward pass of a micro-batch (each blocks compute)"},
	{"pp", K_U32, JOFF(pp), "1", 1, 1024, NULL, "pipeline stages"},
	{"pp_bytes", K_BYTES, JOFF(pp_bytes), "0", 0, 1e13, NULL,
	 "activations per micro-batch and GPU sent to the next stage (gradients come back)"},
	{"microbatches", K_U32, JOFF(microbatches), "1", 1, 1e6, NULL, "micro-batches per iteration"},
	{"schedule", K_ENUM, JOFF(schedule), "gpipe", 0, 0, "gpipe|1f1b",
	 "pipeline schedule: every forward then every backward (GPipe), or one forward one backward (1F1B; "
	 "interleaved with virtual_stages)"},
	{"virtual_stages", K_U32, JOFF(virtual_stages), "1", 1, 64, NULL,
	 "model chunks per pipeline stage (interleaved 1F1B: needs micro-batches a multiple of pp)"},
	{"algo", K_ENUM, JOFF(algo), "auto", 0, 0, "ring|tree|hierarchical|rhd|direct|nvls|sharp|auto",
	 "data-parallel all-reduce algorithm"},
	{"model.layers", K_U32, JOFF(model.layers), "0", 0, 1e5, NULL,
	 "transformer layers; when set, compute, gradient_bytes, tp_bytes, tp_collectives, pp_bytes and "
	 "microbatches come from the model (doc/jobs.md)"},
	{"model.hidden", K_U32, JOFF(model.hidden), "4096", 1, 1e7, NULL, "hidden size h"},
	{"model.ffn_hidden", K_U32, JOFF(model.ffn_hidden), "0", 0, 1e8, NULL, "MLP width (0: 4 h)"},
	{"model.heads", K_U32, JOFF(model.heads), "0", 0, 1e6, NULL,
	 "attention heads (only their ratio to kv_heads counts)"},
	{"model.kv_heads", K_U32, JOFF(model.kv_heads), "0", 0, 1e6, NULL,
	 "key/value heads of grouped-query attention (0: as many as heads)"},
	{"model.gated_mlp", K_BOOL, JOFF(model.gated_mlp), "false", 0, 0, NULL,
	 "a gated MLP (SwiGLU, as Llama): three matrices instead of two"},
	{"model.vocab", K_U32, JOFF(model.vocab), "50257", 0, 1e8, NULL, "vocabulary (embedding tied to the output)"},
	{"model.seq_len", K_U32, JOFF(model.seq_len), "2048", 1, 1e8, NULL, "tokens per sequence"},
	{"model.micro_batch", K_U32, JOFF(model.micro_batch), "1", 1, 1e6, NULL, "sequences per micro-batch"},
	{"model.global_batch", K_U32, JOFF(model.global_batch), "0", 0, 1e9, NULL,
	 "sequences per iteration (0: micro_batch x dp x microbatches); micro-batches = global / (micro x dp)"},
	{"model.precision", K_ENUM, JOFF(model.precision), "bf16", 0, 0, "bf16|fp16|fp32|fp8",
	 "activations (tensor-parallel, pipeline and expert traffic)"},
	{"model.grad_precision", K_ENUM, JOFF(model.grad_precision), "bf16", 0, 0, "bf16|fp16|fp32|fp8",
	 "gradients as all-reduced"},
	{"model.gpu_tflops", K_DOUBLE, JOFF(model.gpu_tflops), "989", 1e-3, 1e6, NULL,
	 "a GPU's peak dense TFLOP/s at that precision (H100 SXM, BF16: 989)"},
	{"model.efficiency", K_DOUBLE, JOFF(model.efficiency), "0.5", 1e-3, 1, NULL,
	 "fraction of the peak the kernels reach (model FLOPs utilisation without communication)"},
	{"model.experts", K_U32, JOFF(model.experts), "0", 0, 1e5, NULL,
	 "mixture of experts: experts in every layer, shared out over expert-parallel groups (0: dense)"},
	{"model.top_k", K_U32, JOFF(model.top_k), "2", 1, 1e5, NULL, "experts each token goes to"},
	{"model.ep", K_U32, JOFF(model.ep), "0", 0, 1e6, NULL,
	 "expert parallelism: consecutive data-parallel replicas that share out the experts and exchange tokens "
	 "(a divisor of dp, at most the experts; 0: the largest such up to the experts)"},
	{"channels", K_U32, JOFF(channels), "0", 0, 32, NULL, "channels of the data-parallel communicators"},
	{"qps_per_connection", K_U32, JOFF(qps_per_conn), "1", 1, 64, NULL, "queue pairs per connection"},
	{"start", K_TIME, JOFF(start_ps), "0", 0, 1e15, NULL, "when the first iteration starts"},
	{"priority", K_U32, JOFF(priority), "3", 0, 7, NULL, "traffic class"},
	{"transport", K_ENUM, JOFF(transport), "fabric", 0, 0, NULL /* the registry's (build_keys) */,
	 "the transport of its queue pairs: fabric (fabric.transport), roce or tcp beside each other on an Ethernet "
	 "fabric (give tcp a priority outside fabric.pfc.priorities to run it lossy), ib only on an InfiniBand one"},
};

#define XOFF(field) offsetof(struct fab_fault_spec, field)
static const struct fab_key_def fault_keys[] = {
	{"kind", K_ENUM, XOFF(kind), NULL, 0, 0, "degrade|lossy|down|pfc-storm|ecn|slow-gpu|delay",
	 "what breaks: a link's speed, a link's frames, a link, a NIC's PAUSE, a switch's ECN, a GPU, a link's "
	 "latency"},
	{"node", K_STR32, XOFF(node), "", 0, 0, NULL, "the NIC or switch (for a link: one end)"},
	{"peer", K_STR32, XOFF(peer), "", 0, 0, NULL, "a link's other end (default: the node's first link)"},
	{"link_index", K_U32, XOFF(link_index), "0", 0, 1024, NULL, "which of parallel links to peer"},
	{"rate", K_RATE, XOFF(rate_bps), "0", 0, 1.6e12, NULL, "degrade: the speed the link really runs at"},
	{"drop", K_DOUBLE, XOFF(drop), "0", 0, 1, NULL, "lossy: probability a frame is lost"},
	{"drop_every", K_U32, XOFF(drop_every), "0", 0, 1e9, NULL,
	 "lossy: every this many data packets crossing the link, one is lost (deterministic; 0: off)"},
	{"priority", K_U32, XOFF(priority), "3", 0, 7, NULL, "pfc-storm: the priority paused"},
	{"kmin", K_BYTES, XOFF(kmin_bytes), "0", 0, 1e12, NULL, "ecn: the switch's Kmin"},
	{"kmax", K_BYTES, XOFF(kmax_bytes), "0", 0, 1e12, NULL, "ecn: the switch's Kmax"},
	{"convergence", K_TIME, XOFF(convergence_ps), "50us", 0, 1e13, NULL,
	 "down: time until switches route around the link"},
	{"delay", K_TIME, XOFF(delay_ps), "0", 0, 1e12, NULL,
	 "delay: what the link adds to each frame, each way (packet engine; a slow host's link)"},
	{"gpu", K_U32, XOFF(gpu), "0", 0, 1e9, NULL, "slow-gpu: the GPU"},
	{"factor", K_DOUBLE, XOFF(factor), "1", 1, 1000, NULL, "slow-gpu: its compute takes factor times as long"},
	{"start", K_TIME, XOFF(start_ps), "0", 0, 1e15, NULL, "when it breaks"},
	{"end", K_TIME, XOFF(end_ps), "0", 0, 1e15, NULL, "when it is mended (0: never)"},
};

/* The table of every key: the core's, with each model's fragment (a
 * transport's or a congestion control's parameter family) placed at its
 * marker (or, for a congestion-control family no marker names, at the
 * marker for the rest), its offsets moved from the family's struct to the
 * family's place in struct fab_config; the choices and meaning of the keys
 * that name a transport or a model from their registries.  Built once. */
static struct fab_key_def *all_keys;
static const struct fab_param_family **all_keys_family; /* a key's family where the rest's marker placed it */
static size_t n_all_keys;
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

/* each table and its length (n may be NULL) */
#define KEY_TABLE(fn, tab)                                                                                             \
	const struct fab_key_def *fn(size_t *n)                                                                        \
	{                                                                                                              \
		pthread_once(&keys_once, build_keys);                                                                  \
		if (n)                                                                                                 \
			*n = FAB_ARRAY_LEN(tab);                                                                       \
		return tab;                                                                                            \
	}

/* family i of the transports' then the congestion controls', and where
 * its struct starts in struct fab_config; false past the last */
static bool family_at(size_t i, const struct fab_param_family **f, size_t *base, bool *cc)
{
	for (int k = 0; k < FAB_TRANSPORT_COUNT; k++) {
		const struct fab_param_family *tf = fab_transport_at(k)->family;
		if (tf && !i--) {
			*f = tf;
			*base = offsetof(struct fab_config, fabric.tp_params) + fab_transport_params_offset(k);
			*cc = false;
			return true;
		}
	}
	if (i >= fab_cc_family_count())
		return false;
	*f = fab_cc_family_at(i);
	*base = offsetof(struct fab_config, fabric.cc.params) + fab_cc_family_offset(*f);
	*cc = true;
	return true;
}

static bool family_placed(const struct fab_param_family *f)
{
	for (size_t i = 0; i < FAB_ARRAY_LEN(core_keys); i++)
		if (core_keys[i].type == K_MODEL_KEYS && core_keys[i].choices &&
		    !strcmp(core_keys[i].choices, f->prefix))
			return true;
	return false;
}

/* the families a marker places, appended at out (NULL: counted) */
static size_t place_marker(const struct fab_key_def *m, struct fab_key_def *out, const struct fab_param_family **fam)
{
	size_t n = 0, base;
	const struct fab_param_family *f;
	bool cc;
	for (size_t i = 0; family_at(i, &f, &base, &cc); i++) {
		bool rest = !m->choices;
		if (rest ? !cc || family_placed(f) : strcmp(m->choices, f->prefix))
			continue;
		for (size_t k = 0; out && k < f->nkeys; k++) {
			out[n + k] = f->keys[k];
			out[n + k].off += base;
			fam[n + k] = rest ? f : NULL;
		}
		n += f->nkeys;
	}
	return n;
}

/* a|b|c of the names name(i) gives, i < n, after `first` (or none) */
static char *names_choices(const char *first, size_t n, const char *(*name)(size_t))
{
	size_t len = (first ? strlen(first) : 0) + 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(name(i)) + 1;
	char *c = fab_xcalloc(1, len);
	if (first)
		strcpy(c, first);
	for (size_t i = 0; i < n; i++) {
		if (*c)
			strcat(c, "|");
		strcat(c, name(i));
	}
	return c;
}

static const char *cc_name(size_t i)
{
	return fab_cc_at(i)->name;
}

static const char *marking_name(size_t i)
{
	return fab_packet_marking(i, NULL);
}

static size_t marking_count(void)
{
	size_t n = 0;
	while (fab_packet_marking(n, NULL))
		n++;
	return n;
}

/* a key's meaning: head, then each model's line (model(i) gives them) */
static char *models_doc(const char *head, const char *(*model)(size_t, const char **))
{
	size_t len = strlen(head) + 1;
	const char *doc;
	for (size_t i = 0; model(i, &doc); i++)
		len += strlen(doc) + 2;
	char *d = fab_xcalloc(1, len);
	strcpy(d, head);
	for (size_t i = 0; model(i, &doc); i++) {
		if (i)
			strcat(d, "; ");
		strcat(d, doc);
	}
	return d;
}

static const char *queue_name(size_t i)
{
	return fab_flow_queue_model(i, NULL);
}

static size_t queue_count(void)
{
	size_t n = 0;
	while (fab_flow_queue_model(n, NULL))
		n++;
	return n;
}

static const char *transport_name(size_t i)
{
	return fab_transport_at((int)i)->name;
}

/* fabric.transport's meaning: each transport's line */
static char *transport_doc(void)
{
	size_t len = 1;
	for (int k = 0; k < FAB_TRANSPORT_COUNT; k++)
		len += strlen(fab_transport_at(k)->doc) + 2;
	char *d = fab_xcalloc(1, len);
	for (int k = 0; k < FAB_TRANSPORT_COUNT; k++) {
		if (k)
			strcat(d, "; ");
		strcat(d, fab_transport_at(k)->doc);
	}
	return d;
}

/* a list item's transport: the fabric's or one of the registry's */
static void item_transports(struct fab_key_def *tab, size_t n, const char *choices)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(tab[i].path, "transport"))
			tab[i].choices = choices;
}

static void build_keys(void)
{
	for (int pass = 0; pass < 2; pass++) {
		size_t n = 0;
		for (size_t i = 0; i < FAB_ARRAY_LEN(core_keys); i++) {
			if (core_keys[i].type == K_MODEL_KEYS) {
				n += place_marker(&core_keys[i], all_keys ? all_keys + n : NULL,
						  all_keys ? all_keys_family + n : NULL);
				continue;
			}
			if (all_keys) {
				all_keys[n] = core_keys[i];
				if (!strcmp(all_keys[n].path, "fabric.cc"))
					all_keys[n].choices = names_choices("auto", fab_cc_count(), cc_name);
				if (!strcmp(all_keys[n].path, "fabric.ecn.marking")) {
					all_keys[n].choices = names_choices(NULL, marking_count(), marking_name);
					all_keys[n].doc = models_doc(
						"how switches mark ECN-capable packets (packet engine; the "
						"flow engine's fluid model draws RED): ",
						fab_packet_marking);
				}
				if (!strcmp(all_keys[n].path, "flow.queues")) {
					all_keys[n].choices = names_choices(NULL, queue_count(), queue_name);
					all_keys[n].doc = models_doc("flow engine: ", fab_flow_queue_model);
				}
				if (!strcmp(all_keys[n].path, "fabric.transport")) {
					all_keys[n].choices = names_choices(NULL, FAB_TRANSPORT_COUNT, transport_name);
					all_keys[n].doc = transport_doc();
				}
			}
			n++;
		}
		if (!all_keys) {
			n_all_keys = n;
			all_keys = fab_xcalloc(n, sizeof *all_keys);
			all_keys_family = fab_xcalloc(n, sizeof *all_keys_family);
		}
	}
	const char *items = names_choices("fabric", FAB_TRANSPORT_COUNT, transport_name);
	item_transports(flow_keys, FAB_ARRAY_LEN(flow_keys), items);
	item_transports(gen_keys, FAB_ARRAY_LEN(gen_keys), items);
	item_transports(job_keys, FAB_ARRAY_LEN(job_keys), items);
}

bool fab_config_key_shown(const struct fab_config *c, size_t i)
{
	fab_config_keys(NULL);
	const struct fab_param_family *f = all_keys_family[i];
	if (!f)
		return true;
	for (int t = 0; t < FAB_TRANSPORT_COUNT; t++)
		if (fab_cc_of(&c->fabric.cc, t)->family == f)
			return true;
	for (size_t k = 0; k < n_all_keys; k++)
		if (all_keys_family[k] == f && fab_config_given(c, all_keys[k].path))
			return true;
	return false;
}

const struct fab_key_def *fab_config_keys(size_t *n)
{
	pthread_once(&keys_once, build_keys);
	if (n)
		*n = n_all_keys;
	return all_keys;
}
KEY_TABLE(fab_config_flow_keys, flow_keys)
KEY_TABLE(fab_config_gen_keys, gen_keys)
KEY_TABLE(fab_config_job_keys, job_keys)
KEY_TABLE(fab_config_fault_keys, fault_keys)

/* "a|b|c" -> "a, b, c" (a bar would split a Markdown table cell) */
static void choices_text(const char *choices, char *buf, size_t len)
{
	size_t o = 0;
	for (const char *c = choices; *c && o + 3 < len; c++) {
		if (*c == '|') {
			buf[o++] = ',';
			buf[o++] = ' ';
		} else {
			buf[o++] = *c;
		}
	}
	buf[o] = 0;
}

int fab_config_write_keys(FILE *f)
{
	size_t n;
	const struct fab_key_def *k = fab_config_keys(&n);
	fprintf(f, "| key | default | range or values | meaning |\n|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		char range[96] = "";
		if (k[i].type == K_ENUM)
			choices_text(k[i].choices, range, sizeof range);
		else if (k[i].type == K_U32 || k[i].type == K_U64 || k[i].type == K_U8 || k[i].type == K_DOUBLE)
			snprintf(range, sizeof range, "%g .. %g", k[i].min, k[i].max);
		else if (k[i].type == K_RATE) {
			char a[32], b[32];
			snprintf(range, sizeof range, "%s .. %s", fab_fmt_rate((uint64_t)k[i].min, a, sizeof a),
				 fab_fmt_rate((uint64_t)k[i].max, b, sizeof b));
		} else if (k[i].type == K_TIME) {
			char a[32], b[32];
			snprintf(range, sizeof range, "%s .. %s", fab_fmt_time((uint64_t)k[i].min, a, sizeof a),
				 fab_fmt_time((uint64_t)k[i].max, b, sizeof b));
		} else if (k[i].type == K_BYTES) {
			char a[32], b[32];
			snprintf(range, sizeof range, "%s .. %s", fab_fmt_bytes((uint64_t)k[i].min, a, sizeof a),
				 fab_fmt_bytes((uint64_t)k[i].max, b, sizeof b));
		} else if (k[i].type == K_BOOL)
			snprintf(range, sizeof range, "true, false");
		else if (k[i].type == K_RATIO)
			snprintf(range, sizeof range, "N:M");
		else if (k[i].type == K_PRIOMASK)
			snprintf(range, sizeof range, "list of 0..7");
		else
			snprintf(range, sizeof range, "path");
		fprintf(f, "| `%s` | `%s` | %s | %s |\n", k[i].path, k[i].def, range, k[i].doc);
	}
	const struct {
		const char *name;
		const struct fab_key_def *(*get)(size_t *);
	} lists[] = {{"traffic.flows[]", fab_config_flow_keys},
		     {"traffic.generators[]", fab_config_gen_keys},
		     {"jobs[]", fab_config_job_keys},
		     {"faults[]", fab_config_fault_keys}};
	for (size_t l = 0; l < FAB_ARRAY_LEN(lists); l++) {
		k = lists[l].get(&n);
		for (size_t i = 0; i < n; i++) {
			char choices[96] = "";
			if (k[i].type == K_ENUM)
				choices_text(k[i].choices, choices, sizeof choices);
			fprintf(f, "| `%s.%s` | %s | %s | %s |\n", lists[l].name, k[i].path,
				k[i].def ? k[i].def : "required", choices, k[i].doc);
		}
	}
	return ferror(f) ? FAB_EIO : 0;
}
