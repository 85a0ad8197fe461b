/*
 * transports.h - the registry of transports: what each one is, to every
 * layer above its engines' implementations.
 *
 * A transport is its description here (src/sim/tp_<name>.c: its name and
 * label, its framing, the link-level flow control and queue pairs the
 * packet engine runs it with, its defaults, its parameter family with the
 * scenario keys, how the text summary describes it), its queue pairs in the
 * packet engine (src/packet/, struct fab_transport_ops), and one line in
 * FAB_TRANSPORTS below.  The scenario layer takes fabric.transport's
 * choices, the transports' keys and defaults from here; the result writers
 * their descriptions; the engines their framing and parameters.  No layer
 * names a transport except the transport's own files (doc/extending.md).
 */
#ifndef FAB_TRANSPORTS_H
#define FAB_TRANSPORTS_H

#include "../base/base.h"
#include "../base/keydef.h"
#include "wire.h"

/* Every transport, one line each (X(ENUM_NAME, name)): the order is
 * fabric.transport's choices' and struct fab_cc_ops' transports bits'. */
#define FAB_TRANSPORTS(X)                                                                                              \
	X(ROCE, roce)                                                                                                  \
	X(TCP, tcp)                                                                                                    \
	X(IB, ib)                                                                                                      \
	/* one line a transport, above */

#define FAB_TRANSPORT_ENUM(E, n) FAB_TRANSPORT_##E,
/* The transports a queue pair can use. */
enum fab_transport_kind { FAB_TRANSPORTS(FAB_TRANSPORT_ENUM) FAB_TRANSPORT_COUNT };
#undef FAB_TRANSPORT_ENUM

/* The link a transport's frames cross: transports of different links
 * cannot share a fabric. */
enum fab_link_kind { FAB_LINK_ETHERNET, FAB_LINK_INFINIBAND };

/* What a transport is by default, where the scenario does not say. */
enum {
	FAB_TP_LOSSY = 1,     /* no PFC unless fabric.pfc.enabled is given */
	FAB_TP_CC_OPT_IN = 2, /* the RDMA congestion control (fabric.dcqcn.enabled) off unless given */
	FAB_TP_ECN_WITH_CC =
		4,           /* switches mark ECN while a congestion control runs, unless fabric.ecn.enabled is given */
	FAB_TP_FLUID_CC = 8, /* the flow engine's fluid congestion control (flow.queues dcqcn) runs its queue pairs */
};

struct fab_fabric_params;

struct fab_transport_info {
	const char *name;     /* fabric.transport's value: "roce" */
	const char *label;    /* in results: "RoCEv2" */
	const char *doc;      /* a line of fabric.transport's meaning */
	int link;             /* enum fab_link_kind */
	unsigned flags;       /* FAB_TP_* */
	uint32_t max_mtu;     /* the largest fabric.mtu it carries (0: the key's range) */
	struct fab_wire wire; /* its framing */
	/* the packet engine's implementations it runs on, by name: its queue
	 * pairs (struct fab_transport_ops) and its link-level flow control
	 * (struct pkt_llfc_ops) */
	const char *qp, *llfc;
	/* what the text summary calls the frames its receivers send about
	 * CE marks: "CNPs", "ECN echoes" */
	const char *notify_counter;
	const struct fab_param_family *family; /* its parameters (NULL: none) */
	/* after the scenario is read: what it derives from the fabric's
	 * parameters (NULL: nothing) */
	void (*resolve)(struct fab_fabric_params *fp, void *params);
	/* a message leaves the host this long after it is posted (NULL: 0,
	 * the transport is offloaded) */
	fab_time_ps (*host_latency)(const void *params);
	/* the text summary's fabric line, after "fabric: " */
	void (*describe)(const struct fab_fabric_params *fp, const char *cc_label, bool cc_on, char *buf, size_t len);
};

/* the registry (transports.c) */
const struct fab_transport_info *fab_transport_at(int kind);
/* the kind of a transport by name, -1 if none */
int fab_transport_find(const char *name);
/* "roce|tcp|ib" */
const char *fab_transport_choices(void);
/* where a transport's parameters start in the fabric's block of them */
size_t fab_transport_params_offset(int kind);

#define FAB_TP_PARAMS_BYTES 256

#endif
