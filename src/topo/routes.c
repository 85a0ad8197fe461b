/*
 * routes.c - a topology draft finished (draft.h): its ports laid out, its
 * switches' tiers and the oversubscription between them, and
 * shortest-path ECMP routing.
 *
 * Finishing the draft lays each node's ports out contiguously in link
 * order.  Routing runs one breadth-first search per destination (NICs
 * never forward) and keeps every neighbour one hop closer.  Where every NIC
 * hangs off one switch, a destination is the switch, a group of NICs
 * (topo.h), and the table has a column per group rather than per NIC;
 * equal lists for consecutive destinations are shared, which keeps the
 * lists small too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draft.h"

/* Multi-source BFS from all NICs gives each switch its tier when the
 * builder did not say (explicit files). */
static void assign_tiers(struct fab_topo *t)
{
	uint32_t *queue = fab_xcalloc(t->nnodes, sizeof *queue);
	uint32_t head = 0, tail = 0;
	uint32_t *dist = fab_xcalloc(t->nnodes, sizeof *dist);
	for (uint32_t i = 0; i < t->nnodes; i++)
		dist[i] = UINT32_MAX;
	for (uint32_t i = 0; i < t->nnics; i++) {
		dist[t->nic_node[i]] = 0;
		queue[tail++] = t->nic_node[i];
	}
	while (head < tail) {
		uint32_t u = queue[head++];
		const struct fab_node *n = &t->nodes[u];
		for (uint32_t p = n->first_port; p < n->first_port + n->nports; p++) {
			uint32_t v = t->ports[t->ports[p].peer].node;
			if (dist[v] == UINT32_MAX) {
				dist[v] = dist[u] + 1;
				queue[tail++] = v;
			}
		}
	}
	for (uint32_t i = 0; i < t->nnodes; i++)
		if (t->nodes[i].kind == FAB_NODE_SWITCH && t->nodes[i].tier == 0)
			t->nodes[i].tier = dist[i] == UINT32_MAX ? 1 : dist[i];
	free(queue);
	free(dist);
}

static void report_tiers(struct fab_topo *t)
{
	static const char *names2[] = {"nic", "leaf", "spine", "core"};
	static const char *names3[] = {"nic", "edge", "aggregation", "core"};
	uint32_t maxtier = 0;
	for (uint32_t i = 0; i < t->nnodes; i++)
		maxtier = FAB_MAX(maxtier, t->nodes[i].tier);
	if (maxtier > 3)
		maxtier = 3;
	t->ntiers = 0;
	for (uint32_t tier = 1; tier <= maxtier; tier++) {
		struct fab_tier_report *r = &t->tiers[t->ntiers++];
		memset(r, 0, sizeof *r);
		r->tier = tier;
		snprintf(r->name, sizeof r->name, "%s", maxtier >= 3 ? names3[tier] : names2[tier]);
		for (uint32_t i = 0; i < t->nnodes; i++) {
			const struct fab_node *n = &t->nodes[i];
			if (n->kind != FAB_NODE_SWITCH || n->tier != tier)
				continue;
			r->switches++;
			for (uint32_t p = n->first_port; p < n->first_port + n->nports; p++) {
				uint32_t peer_tier = t->nodes[t->ports[t->ports[p].peer].node].tier;
				if (peer_tier < tier)
					r->down_bps += t->ports[p].rate_bps;
				else if (peer_tier > tier)
					r->up_bps += t->ports[p].rate_bps;
			}
		}
	}
}

/* down (may be NULL): ports whose links are out; then a switch that cannot
 * reach a NIC gets no route to it instead of an error. */
static void put_hops(struct fab_topo *t, size_t *cap, const uint32_t *hops, uint32_t nh, uint32_t *off)
{
	if (t->nroute_ports + nh > *cap) {
		while (t->nroute_ports + nh > *cap)
			*cap *= 2;
		t->route_ports = fab_xrealloc(t->route_ports, *cap, sizeof *t->route_ports);
	}
	*off = (uint32_t)t->nroute_ports;
	memcpy(&t->route_ports[t->nroute_ports], hops, nh * sizeof *hops);
	t->nroute_ports += nh;
}

/* The run-length coded table (topo.h) as the routes come, group by group
 * in increasing order for every switch: a switch starts a run where its
 * ports differ from the group before's.  The runs arrive interleaved
 * across switches; runs_finish sorts them by switch (stably). */
struct runs {
	struct fab_route_run *v;
	uint32_t *sw; /* each run's switch index */
	size_t n, cap;
	struct fab_route_run *last; /* [nswitches]: each switch's last run (cnt UINT32_MAX: none yet) */
};

static void runs_init(struct runs *b, uint32_t nswitches)
{
	memset(b, 0, sizeof *b);
	b->last = fab_xcalloc(nswitches ? nswitches : 1, sizeof *b->last);
	for (uint32_t i = 0; i < nswitches; i++)
		b->last[i].cnt = UINT32_MAX;
}

static void runs_put(struct runs *b, uint32_t si, uint32_t g, uint32_t off, uint32_t nh)
{
	struct fab_route_run *l = &b->last[si];
	if (l->cnt == nh && (l->off == off || !nh))
		return;
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 1024;
		b->v = fab_xrealloc(b->v, b->cap, sizeof *b->v);
		b->sw = fab_xrealloc(b->sw, b->cap, sizeof *b->sw);
	}
	*l = (struct fab_route_run){.g = g, .off = nh ? off : 0, .cnt = nh};
	b->v[b->n] = *l;
	b->sw[b->n++] = si;
}

/* switch si reaches group g through hops[0 .. nh): the same ports as
 * toward the group before (upper tiers reach a whole pod the same way),
 * its run goes on; else a run starts, its ports stored */
static void runs_hops(struct fab_topo *t, struct runs *b, uint32_t si, uint32_t g, const uint32_t *hops, uint32_t nh,
		      size_t *cap)
{
	const struct fab_route_run *l = &b->last[si];
	if (l->cnt == nh && (!nh || !memcmp(&t->route_ports[l->off], hops, nh * sizeof *hops)))
		return;
	uint32_t off = 0;
	if (nh)
		put_hops(t, cap, hops, nh, &off);
	runs_put(b, si, g, off, nh);
}

static void runs_finish(struct fab_topo *t, struct runs *b)
{
	t->run_first = fab_xcalloc((size_t)t->nswitches + 1, sizeof *t->run_first);
	for (size_t i = 0; i < b->n; i++)
		t->run_first[b->sw[i] + 1]++;
	for (uint32_t i = 0; i < t->nswitches; i++)
		t->run_first[i + 1] += t->run_first[i];
	t->route_runs = fab_xcalloc(b->n ? b->n : 1, sizeof *t->route_runs);
	t->nruns = b->n;
	uint32_t *at = fab_xcalloc(t->nswitches ? t->nswitches : 1, sizeof *at);
	for (size_t i = 0; i < b->n; i++)
		t->route_runs[t->run_first[b->sw[i]] + at[b->sw[i]]++] = b->v[i];
	free(at);
	free(b->v);
	free(b->sw);
	free(b->last);
}

/* When every NIC hangs off one switch: one breadth-first search from each
 * such switch serves all of its NICs (a destination group), since NICs do
 * not forward: beyond that switch their routes are the switch's, and at
 * it, the NIC's port.  The same routes as a search from every NIC, k^2/2
 * searches instead of k^3/4 on a fat-tree, and a table that many times
 * smaller. */
static int routes_by_switch(struct fab_topo *t, const uint8_t *down, uint32_t *dist, uint32_t *queue, size_t *cap,
			    struct runs *runs, struct fab_err *err)
{
	uint32_t hops[256];
	uint32_t *some_nic = fab_xcalloc(t->ngroups, sizeof *some_nic),
		 *sws = fab_xcalloc(t->nswitches ? t->nswitches : 1, sizeof *sws); /* switch index -> node */
	for (uint32_t d = t->nnics; d-- > 0;)
		some_nic[t->nic_group[d]] = d;
	for (uint32_t i = 0; i < t->nnodes; i++)
		if (t->switch_index[i] != UINT32_MAX)
			sws[t->switch_index[i]] = i;
	int rc = 0;
	for (uint32_t g = 0; g < t->ngroups && !rc; g++) {
		uint32_t sw = sws[t->group_attach[g]];
		for (uint32_t i = 0; i < t->nswitches; i++) /* (NICs are never reached) */
			dist[sws[i]] = UINT32_MAX;
		uint32_t head = 0, tail = 0;
		dist[sw] = 0;
		queue[tail++] = sw;
		while (head < tail) {
			const struct fab_node *n = &t->nodes[queue[head++]];
			for (uint32_t p = n->first_port; p < n->first_port + n->nports; p++) {
				uint32_t v = t->ports[t->ports[p].peer].node;
				if ((down && down[p]) || t->nodes[v].kind != FAB_NODE_SWITCH || dist[v] != UINT32_MAX)
					continue;
				dist[v] = dist[t->ports[p].node] + 1;
				queue[tail++] = v;
			}
		}
		for (uint32_t si = 0; si < t->nswitches && !rc; si++) {
			uint32_t s = sws[si];
			const struct fab_node *n = &t->nodes[s];
			if (s == sw) { /* (at sw: each NIC's own port) */
				runs_put(runs, si, g, 0, 0);
				continue;
			}
			uint32_t nh = 0;
			if (dist[s] == UINT32_MAX && !down) {
				rc = fab_err_set(err, FAB_ETOPO,
						 "topology: %s cannot reach %s: the graph is not connected", n->name,
						 t->nodes[t->nic_node[some_nic[g]]].name);
				break;
			}
			for (uint32_t p = n->first_port; dist[s] != UINT32_MAX && p < n->first_port + n->nports; p++) {
				uint32_t v = t->ports[t->ports[p].peer].node;
				if ((down && down[p]) || t->nodes[v].kind != FAB_NODE_SWITCH || dist[v] + 1 != dist[s])
					continue;
				if (nh == FAB_ARRAY_LEN(hops)) {
					rc = fab_err_set(err, FAB_ETOPO,
							 "topology: %s has more than %zu equal-cost paths", n->name,
							 FAB_ARRAY_LEN(hops));
					break;
				}
				hops[nh++] = p;
			}
			runs_hops(t, runs, si, g, hops, nh, cap);
		}
	}
	free(some_nic);
	free(sws);
	return rc;
}

/* The destination groups: when every NIC hangs off one switch, one per
 * such switch (in the order of the switches), its NICs' ports there and
 * which of them are cut off (down); else one per NIC.  Returns whether the
 * NICs hang off switches. */
static bool make_groups(struct fab_topo *t, const uint8_t *down)
{
	bool single = true; /* every NIC on one link to a switch */
	for (uint32_t d = 0; d < t->nnics && single; d++) {
		const struct fab_node *n = &t->nodes[t->nic_node[d]];
		single = n->nports == 1 &&
			t->nodes[t->ports[t->ports[n->first_port].peer].node].kind == FAB_NODE_SWITCH;
	}
	t->nic_group = fab_xcalloc(t->nnics ? t->nnics : 1, sizeof *t->nic_group);
	t->nic_port = fab_xcalloc(t->nnics ? t->nnics : 1, sizeof *t->nic_port);
	t->nic_cut = fab_xcalloc(t->nnics ? t->nnics : 1, sizeof *t->nic_cut);
	if (!single) {
		t->ngroups = t->nnics;
		t->group_attach = fab_xcalloc(t->nnics ? t->nnics : 1, sizeof *t->group_attach);
		for (uint32_t d = 0; d < t->nnics; d++) {
			t->nic_group[d] = d;
			t->group_attach[d] = UINT32_MAX;
		}
		return false;
	}
	uint32_t *group_of = fab_xcalloc(t->nnodes, sizeof *group_of);
	for (uint32_t d = 0; d < t->nnics; d++)
		group_of[fab_topo_nic_leaf(t, d)] = 1;
	t->ngroups = 0;
	for (uint32_t i = 0; i < t->nnodes; i++)
		group_of[i] = group_of[i] ? t->ngroups++ : UINT32_MAX;
	t->group_attach = fab_xcalloc(t->ngroups ? t->ngroups : 1, sizeof *t->group_attach);
	for (uint32_t i = 0; i < t->nnodes; i++)
		if (group_of[i] != UINT32_MAX)
			t->group_attach[group_of[i]] = t->switch_index[i];
	for (uint32_t d = 0; d < t->nnics; d++) {
		uint32_t np = t->nodes[t->nic_node[d]].first_port, q = t->ports[np].peer;
		t->nic_group[d] = group_of[t->ports[q].node];
		t->nic_port[d] = q;
		if (down)
			t->nic_cut[d] = (uint8_t)((down[np] ? 1 : 0) | (down[np] || down[q] ? 2 : 0));
	}
	free(group_of);
	return true;
}

void fab_topo_free_routes(struct fab_topo *t)
{
	free(t->switch_index);
	free(t->run_first);
	free(t->route_runs);
	free(t->route_ports);
	free(t->nic_group);
	free(t->group_attach);
	free(t->nic_port);
	free(t->nic_cut);
}

static int compute_routes(struct fab_topo *t, const uint8_t *down, struct fab_err *err)
{
	fab_topo_free_routes(t);
	t->switch_index = fab_xcalloc(t->nnodes, sizeof *t->switch_index);
	t->nswitches = 0;
	for (uint32_t i = 0; i < t->nnodes; i++)
		t->switch_index[i] = t->nodes[i].kind == FAB_NODE_SWITCH ? t->nswitches++ : UINT32_MAX;
	bool single = make_groups(t, down);
	size_t cap = 1024;
	t->route_ports = fab_xcalloc(cap, sizeof *t->route_ports);
	t->nroute_ports = 0;
	struct runs runs;
	runs_init(&runs, t->nswitches);

	uint32_t *dist = fab_xcalloc(t->nnodes, sizeof *dist);
	uint32_t *queue = fab_xcalloc(t->nnodes, sizeof *queue);
	uint32_t hops[256];
	if (single) {
		int rc = routes_by_switch(t, down, dist, queue, &cap, &runs, err);
		runs_finish(t, &runs);
		free(dist);
		free(queue);
		return rc ? FAB_ETOPO : 0;
	}
	for (uint32_t d = 0; d < t->nnics; d++) {
		for (uint32_t i = 0; i < t->nnodes; i++)
			dist[i] = UINT32_MAX;
		uint32_t head = 0, tail = 0, dn = t->nic_node[d];
		dist[dn] = 0;
		queue[tail++] = dn;
		while (head < tail) {
			uint32_t u = queue[head++];
			const struct fab_node *n = &t->nodes[u];
			if (n->kind == FAB_NODE_NIC && u != dn)
				continue; /* NICs do not forward */
			for (uint32_t p = n->first_port; p < n->first_port + n->nports; p++) {
				uint32_t v = t->ports[t->ports[p].peer].node;
				if (down && down[p])
					continue;
				if (dist[v] == UINT32_MAX) {
					dist[v] = dist[u] + 1;
					queue[tail++] = v;
				}
			}
		}
		for (uint32_t s = 0; s < t->nnodes; s++) {
			const struct fab_node *n = &t->nodes[s];
			if (n->kind != FAB_NODE_SWITCH)
				continue;
			uint32_t si = t->switch_index[s]; /* (a group a NIC) */
			if (dist[s] == UINT32_MAX && down) {
				runs_put(&runs, si, d, 0, 0); /* unreachable while the links are out */
				continue;
			}
			if (dist[s] == UINT32_MAX) {
				fab_err_set(err, FAB_ETOPO, "topology: %s cannot reach %s: the graph is not connected",
					    n->name, t->nodes[dn].name);
				goto fail;
			}
			uint32_t nh = 0;
			for (uint32_t p = n->first_port; p < n->first_port + n->nports; p++) {
				uint32_t v = t->ports[t->ports[p].peer].node;
				if (down && down[p])
					continue;
				if (dist[v] + 1 == dist[s] && (t->nodes[v].kind == FAB_NODE_SWITCH || v == dn)) {
					if (nh == FAB_ARRAY_LEN(hops)) {
						fab_err_set(err, FAB_ETOPO,
							    "topology: %s has more than %zu equal-cost paths", n->name,
							    FAB_ARRAY_LEN(hops));
						goto fail;
					}
					hops[nh++] = p;
				}
			}
			runs_hops(t, &runs, si, d, hops, nh, &cap);
		}
	}
	runs_finish(t, &runs);
	free(dist);
	free(queue);
	return 0;
fail:
	runs_finish(t, &runs);
	free(dist);
	free(queue);
	return FAB_ETOPO;
}

/* Memory a topology takes, estimated before it is built: the routing
 * tables (a run of groups per switch and port at most, 12 bytes, and its
 * next-hop ports: 28 bytes a run; measured on fat-trees of k = 16 to 64, a
 * switch has fewer runs than ports and a run 2 to 2.3 ports), each NIC's
 * group, port and state, the nodes, and the ports with their queues and
 * counters in an engine.  A fabric that would not fit in this machine's
 * available memory is refused, not left to die half-built. */
uint64_t fab_topo_estimate_bytes(uint64_t nswitches, uint64_t ngroups, uint64_t nnics, uint64_t nnodes, uint64_t nlinks)
{
	uint64_t runs = FAB_MIN(nswitches * ngroups, nswitches + 2 * nlinks);
	return 28 * runs + 16 * nnics + nnodes * (sizeof(struct fab_node) + 64) + 2 * nlinks * 2048;
}

/* the draft's destination groups (make_groups): the switches its NICs hang
 * off when every NIC hangs off one, else its NICs */
static uint64_t draft_groups(const struct draft *d, uint64_t nics)
{
	uint8_t *attach = fab_xcalloc(d->nnodes ? d->nnodes : 1, 1);
	uint32_t *links = fab_xcalloc(d->nnodes ? d->nnodes : 1, sizeof *links);
	bool single = true;
	for (uint32_t i = 0; i < d->nlinks; i++) {
		const struct draft_link *l = &d->links[i];
		for (int e = 0; e < 2; e++) {
			uint32_t nic = e ? l->b : l->a, peer = e ? l->a : l->b;
			if (d->nodes[nic].kind != FAB_NODE_NIC)
				continue;
			links[nic]++;
			single = single && d->nodes[peer].kind == FAB_NODE_SWITCH;
			attach[peer] = 1;
		}
	}
	uint64_t groups = 0;
	for (uint32_t i = 0; i < d->nnodes; i++) {
		groups += attach[i];
		single = single && (d->nodes[i].kind != FAB_NODE_NIC || links[i] == 1);
	}
	free(attach);
	free(links);
	return single ? groups : nics;
}

static int check_fits(const struct draft *d, struct fab_err *err)
{
	uint64_t sw = 0, nics = 0;
	for (uint32_t i = 0; i < d->nnodes; i++) {
		sw += d->nodes[i].kind == FAB_NODE_SWITCH;
		nics += d->nodes[i].kind == FAB_NODE_NIC;
	}
	uint64_t need = fab_topo_estimate_bytes(sw, draft_groups(d, nics), nics, d->nnodes, d->nlinks),
		 avail = fab_mem_available();
	if (avail && need > avail / 10 * 8)
		return fab_err_set(err, FAB_ETOPO,
				   "topology: %llu switches, %llu NICs and %u links need about %.1f GiB (ports with "
				   "their queues and counters, routing tables), more than this machine's %.1f GiB "
				   "available; choose a smaller fabric (fewer switches or NICs) or a machine with more "
				   "memory",
				   (unsigned long long)sw, (unsigned long long)nics, d->nlinks,
				   (double)need / (1 << 30), (double)avail / (1 << 30));
	return 0;
}

/* Lays out ports from the draft and routes.  Takes the draft's arrays. */
struct fab_topo *fab_draft_finish(struct draft *d, const struct fab_topo_params *p, struct fab_err *err)
{
	if (check_fits(d, err))
		return NULL;
	struct fab_topo *t = fab_xcalloc(1, sizeof *t);
	t->nodes = d->nodes;
	t->nnodes = d->nnodes;
	d->nodes = NULL;
	uint32_t *deg = fab_xcalloc(t->nnodes, sizeof *deg);
	for (uint32_t i = 0; i < d->nlinks; i++) {
		deg[d->links[i].a]++;
		deg[d->links[i].b]++;
	}
	uint32_t off = 0;
	for (uint32_t i = 0; i < t->nnodes; i++) {
		t->nodes[i].first_port = off;
		t->nodes[i].nports = 0;
		off += deg[i];
	}
	t->nports = off;
	t->ports = fab_xcalloc(t->nports, sizeof *t->ports);
	for (uint32_t i = 0; i < d->nlinks; i++) {
		const struct draft_link *l = &d->links[i];
		struct fab_node *a = &t->nodes[l->a], *b = &t->nodes[l->b];
		uint32_t pa = a->first_port + a->nports++;
		uint32_t pb = b->first_port + b->nports++;
		t->ports[pa] = (struct fab_port){l->a, pb, l->rate_bps, l->delay_ps};
		t->ports[pb] = (struct fab_port){l->b, pa, l->rate_bps, l->delay_ps};
	}
	free(deg);

	t->nnics = 0;
	for (uint32_t i = 0; i < t->nnodes; i++)
		if (t->nodes[i].kind == FAB_NODE_NIC)
			t->nnics++;
	t->nic_node = fab_xcalloc(t->nnics, sizeof *t->nic_node);
	for (uint32_t i = 0, k = 0; i < t->nnodes; i++)
		if (t->nodes[i].kind == FAB_NODE_NIC) {
			t->nodes[i].nic = (int32_t)k;
			t->nic_node[k++] = i;
		}
	t->gpus_per_server = p->gpus_per_server;
	t->nic_ports = p->kind == FAB_TOPO_SPINE_LEAF && p->nic_ports ? p->nic_ports : 1;
	t->nics_per_server = p->nics_per_server * t->nic_ports;
	for (uint32_t i = 0; i < t->nnics; i++) {
		struct fab_node *n = &t->nodes[t->nic_node[i]];
		n->server = (int32_t)(i / t->nics_per_server);
		if (n->nports != 1) {
			fab_err_set(err, FAB_ETOPO, "topology: NIC %s has %u links; a NIC has exactly one", n->name,
				    n->nports);
			goto fail;
		}
	}
	if (t->nnics % t->nics_per_server) {
		fab_err_set(err, FAB_ETOPO, "topology: %u NICs do not divide into servers of %u NICs", t->nnics,
			    t->nics_per_server);
		goto fail;
	}
	t->nservers = t->nnics / t->nics_per_server;
	t->ngpus = t->nservers * t->gpus_per_server;
	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct fab_node *n = &t->nodes[i];
		if (n->kind == FAB_NODE_SWITCH && p->radix && n->nports > p->radix) {
			fab_err_set(err, FAB_ETOPO, "topology.radix: switch %s needs %u ports but the radix is %u",
				    n->name, n->nports, p->radix);
			goto fail;
		}
	}
	assign_tiers(t);
	report_tiers(t);
	if (compute_routes(t, NULL, err))
		goto fail;
	return t;
fail:
	fab_topo_free(t);
	return NULL;
}

void fab_topo_reroute(struct fab_topo *t, const uint8_t *down)
{
	compute_routes(t, down, NULL);
}
