/*
 * models.c - the packet engine's registries, one line a model: the queue
 * pairs a transport runs on (struct fab_transport_ops, transport.h) and
 * the link-level flow controls (struct pkt_llfc_ops, llfc.h).  A
 * transport's description (src/sim/transports.h) names both; the engine
 * finds them here by name when it is built.
 */
#include <string.h>

#include "llfc.h"
#include "transport.h"

#define QUEUE_PAIRS(X)                                                                                                 \
	X(fab_roce_transport)                                                                                          \
	X(fab_tcp_transport)                                                                                           \
	/* one line a transport's queue pairs, above */

#define LINK_FLOW_CONTROLS(X)                                                                                          \
	X(pkt_pfc)                                                                                                     \
	X(pkt_credit)                                                                                                  \
	/* one line a link-level flow control, above */

#define ENTRY(sym) &sym,
static const struct fab_transport_ops *const qps[] = {QUEUE_PAIRS(ENTRY)};
static const struct pkt_llfc_ops *const llfcs[] = {LINK_FLOW_CONTROLS(ENTRY)};

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
