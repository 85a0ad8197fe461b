/*
 * models.c - the packet engine's registries, one line a model: the queue
 * pairs a transport runs on (struct fab_transport_ops, transport.h), the
 * link-level flow controls (struct pkt_llfc_ops, llfc.h) and the switches'
 * queue disciplines (struct pkt_qdisc_ops, qdisc.h).  A transport's
 * description (src/sim/transports.h) names its queue pairs and flow
 * control, fabric.ecn.marking the marking discipline; the engine finds
 * them here by name when it is built.
 */
#include <string.h>

#include "llfc.h"
#include "packet.h"
#include "qdisc.h"
#include "transport.h"

#define QUEUE_PAIRS(X)                                                                                                 \
	X(fab_roce_transport)                                                                                          \
	X(fab_tcp_transport)                                                                                           \
	/* one line a transport's queue pairs, above */

#define LINK_FLOW_CONTROLS(X)                                                                                          \
	X(pkt_pfc)                                                                                                     \
	X(pkt_credit)                                                                                                  \
	/* one line a link-level flow control, above */

#define QUEUE_DISCIPLINES(X)                                                                                           \
	X(pkt_qdisc_red)                                                                                               \
	X(pkt_qdisc_step)                                                                                              \
	X(pkt_qdisc_int)                                                                                               \
	/* one line a queue discipline, above */

#define ENTRY(sym) &sym,
static const struct fab_transport_ops *const qps[] = {QUEUE_PAIRS(ENTRY)};
static const struct pkt_llfc_ops *const llfcs[] = {LINK_FLOW_CONTROLS(ENTRY)};
static const struct pkt_qdisc_ops *const qdiscs[] = {QUEUE_DISCIPLINES(ENTRY)};

const struct fab_transport_ops *pkt_qp_find(const char *name)
{
	for (size_t i = 0; i < FAB_ARRAY_LEN(qps); i++)
		if (!strcmp(qps[i]->name, name))
			return qps[i];
	return NULL;
}

const struct pkt_llfc_ops *pkt_llfc_find(const char *name)
{
	for (size_t i = 0; i < FAB_ARRAY_LEN(llfcs); i++)
		if (!strcmp(llfcs[i]->name, name))
			return llfcs[i];
	return NULL;
}

const struct pkt_qdisc_ops *pkt_qdisc_find(const char *name)
{
	for (size_t i = 0; i < FAB_ARRAY_LEN(qdiscs); i++)
		if (!strcmp(qdiscs[i]->name, name))
			return qdiscs[i];
	return NULL;
}

/* the marking disciplines in order: fabric.ecn.marking's choices */
const char *fab_packet_marking(size_t i, const char **doc)
{
	for (size_t k = 0; k < FAB_ARRAY_LEN(qdiscs); k++)
		if (qdiscs[k]->mark && !i--) {
			if (doc)
				*doc = qdiscs[k]->doc;
			return qdiscs[k]->name;
		}
	return NULL;
}
