/*
 * ns3.c - HPCC's ns-3 topology file (its simulation/mix/ files), so that one
 * file describes the same fabric to both simulators:
 *
 *   NODES SWITCHES LINKS
 *   ID ID ...                        the SWITCHES node ids that are switches
 *   A B RATE DELAY ERROR             LINKS times, e.g. 0 320 100Gbps 1000ns 0
 *
 * Node ids run from 0 to NODES - 1; every node that is not a switch is a
 * host (a NIC, named hN; switches are named swN).  NICs are numbered in id
 * order and grouped into servers of topology.nics_per_server.  Fields are
 * separated by any whitespace; what follows the last counted link is not
 * read (as ns-3 does not).  A link error rate other than 0 is refused:
 * fabscope models lossy links with faults (kind: lossy).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/tok.h"
#include "draft.h"

#define NS3_MAX_NODES FAB_TOPO_MAX_NODES
#define NS3_MAX_LINKS FAB_TOPO_MAX_LINKS

int fab_topo_read_ns3(const char *path, struct draft *d, struct fab_err *err)
{
	struct fab_tok t;
	int rc = fab_tok_open(&t, path, err);
	if (rc)
		return rc;
	uint64_t nnodes, nsw, nlinks;
	uint8_t *is_switch = NULL;
	if ((rc = fab_tok_uint(&t, "the number of nodes", 2, NS3_MAX_NODES, &nnodes, err)) ||
	    (rc = fab_tok_uint(&t, "the number of switches", 1, nnodes - 1, &nsw, err)) ||
	    (rc = fab_tok_uint(&t, "the number of links", 1, NS3_MAX_LINKS, &nlinks, err)))
		goto out;
	is_switch = fab_xcalloc(nnodes, 1);
	for (uint64_t i = 0; i < nsw; i++) {
		uint64_t id;
		if ((rc = fab_tok_uint(&t, "a switch id", 0, nnodes - 1, &id, err)))
			goto out;
		if (is_switch[id]) {
			rc = fab_tok_err(&t, err, "switch %llu is listed twice", (unsigned long long)id);
			goto out;
		}
		is_switch[id] = 1;
	}
	for (uint64_t i = 0; i < nnodes; i++) {
		char name[32];
		snprintf(name, sizeof name, "%s%llu", is_switch[i] ? "sw" : "h", (unsigned long long)i);
		fab_draft_add_node(d, is_switch[i] ? FAB_NODE_SWITCH : FAB_NODE_NIC, 0, name);
	}
	for (uint64_t i = 0; i < nlinks; i++) {
		uint64_t a, b;
		fab_rate_bps rate;
		fab_time_ps delay;
		double loss;
		char why[160];
		if ((rc = fab_tok_uint(&t, "a link's first node", 0, nnodes - 1, &a, err)) ||
		    (rc = fab_tok_uint(&t, "a link's second node", 0, nnodes - 1, &b, err)))
			goto out;
		if (a == b) {
			rc = fab_tok_err(&t, err, "a link joins two different nodes (both are %llu)",
					 (unsigned long long)a);
			goto out;
		}
		if ((rc = fab_tok_need(&t, "a link rate", err)))
			goto out;
		if (fab_parse_rate(t.tok, &rate, why, sizeof why) || fab_topo_check_link(rate, 0, why, sizeof why)) {
			rc = fab_tok_err(&t, err, "link rate: %s", why);
			goto out;
		}
		if ((rc = fab_tok_need(&t, "a link delay", err)))
			goto out;
		if (fab_parse_time(t.tok, &delay, why, sizeof why) ||
		    fab_topo_check_link(rate, delay, why, sizeof why)) {
			rc = fab_tok_err(&t, err, "link delay: %s", why);
			goto out;
		}
		if ((rc = fab_tok_need(&t, "a link error rate", err)))
			goto out;
		if (fab_parse_double(t.tok, &loss, why, sizeof why) || loss < 0 || loss > 1) {
			rc = fab_tok_err(&t, err, "link error rate: expected a number from 0 to 1, got '%s'", t.tok);
			goto out;
		}
		if (loss > 0) {
			rc = fab_tok_err(&t, err,
					 "link error rate %s: not read from the topology; describe a lossy link "
					 "with a fault (faults: - {kind: lossy, node: ..., drop: ...})",
					 t.tok);
			goto out;
		}
		fab_draft_add_link(d, (uint32_t)a, (uint32_t)b, rate, delay);
	}
out:
	free(is_switch);
	fab_tok_close(&t);
	return rc;
}
