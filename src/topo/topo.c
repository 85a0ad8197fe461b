/*
 * topo.c - topology builders (spine-leaf, fat-tree, edge-list file), the
 * entry that chooses among them (fab_topo_build), and a topology freed.
 *
 * Builders add nodes and links to a draft; finishing the draft (routes.c)
 * lays each node's ports out contiguously in link order, so port numbers
 * are stable and documented: a leaf's host-facing ports come first, then
 * its uplinks spine by spine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/tok.h"
#include "draft.h"

char *fab_topo_fmt_ratio(fab_rate_bps down, fab_rate_bps up, char *buf, size_t len)
{
	if (!up) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	double r = (double)down / (double)up;
	if (r >= 1.0) {
		if ((down % up) == 0)
			snprintf(buf, len, "%llu:1", (unsigned long long)(down / up));
		else
			snprintf(buf, len, "%.2f:1", r);
	} else {
		if ((up % down) == 0 && down)
			snprintf(buf, len, "1:%llu", (unsigned long long)(up / down));
		else
			snprintf(buf, len, "1:%.2f", 1.0 / r);
	}
	return buf;
}

static struct fab_topo *build_spine_leaf(const struct fab_topo_params *p, struct fab_err *err)
{
	uint32_t N = p->nics_per_server, S = p->servers_per_leaf, L = p->leaves;
	uint32_t spines = p->spines, links = p->links_per_spine, P = p->nic_ports ? p->nic_ports : 1;
	uint32_t T = p->dual_tor ? 2 : 1; /* leaves a NIC's ports spread over */
	if (p->dual_tor && P != 2) {
		fab_err_set(err, FAB_ETOPO, "topology.dual_tor: needs nic_ports: 2 (one port to each ToR), got %u", P);
		return NULL;
	}
	if (p->rail_optimized && L % (N * T)) {
		fab_err_set(err, FAB_ETOPO,
			    "topology.leaves: rail-optimized wiring needs a multiple of "
			    "nics_per_server (%u)%s leaves, got %u",
			    N * T, p->dual_tor ? " x 2 (dual ToR)" : "", L);
		return NULL;
	}
	if (!p->rail_optimized && L % T) {
		fab_err_set(err, FAB_ETOPO, "topology.leaves: dual ToR needs leaves in pairs, got %u", L);
		return NULL;
	}
	uint32_t pods = p->pods ? p->pods : 1;
	uint32_t servers = (p->rail_optimized ? (L / (N * T)) * S : (L / T) * S) * pods;
	/* a leaf's host ports: every NIC of its servers, with all its ports
	 * (one leaf) or one of them (dual ToR) */
	uint32_t hosts_per_leaf = (p->rail_optimized ? S : S * N) * (P / T);
	fab_rate_bps down_bps = (fab_rate_bps)hosts_per_leaf * p->host_bps;

	if (p->oversub_num) {
		/* uplinks per leaf so that down:up = num:den */
		__uint128_t need_num = (__uint128_t)down_bps * p->oversub_den;
		__uint128_t need_den = (__uint128_t)p->oversub_num * p->fabric_bps;
		char db[32], fb[32];
		fab_fmt_rate(p->host_bps, db, sizeof db);
		fab_fmt_rate(p->fabric_bps, fb, sizeof fb);
		if (need_num % need_den) {
			fab_err_set(err, FAB_ETOPO,
				    "topology.oversubscription: %u:%u is impossible: a leaf has "
				    "%u x %s down, which needs %.2f uplinks of %s; choose a ratio "
				    "that gives a whole number of uplinks",
				    p->oversub_num, p->oversub_den, hosts_per_leaf, db,
				    (double)need_num / (double)need_den, fb);
			return NULL;
		}
		uint32_t uplinks = (uint32_t)(need_num / need_den);
		if (p->spines_given) {
			if (uplinks % spines) {
				fab_err_set(err, FAB_ETOPO,
					    "topology.oversubscription: %u:%u needs %u uplinks per "
					    "leaf, which %u spines cannot share evenly",
					    p->oversub_num, p->oversub_den, uplinks, spines);
				return NULL;
			}
			links = uplinks / spines;
		} else {
			if (!p->links_given) {
				/* as many parallel links as divide the uplinks evenly */
				uint32_t a = uplinks, b = links;
				while (b) {
					uint32_t r = a % b;
					a = b;
					b = r;
				}
				links = a;
			}
			if (uplinks % links) {
				fab_err_set(err, FAB_ETOPO,
					    "topology.oversubscription: %u:%u needs %u uplinks per "
					    "leaf, not a multiple of links_per_spine %u",
					    p->oversub_num, p->oversub_den, uplinks, links);
				return NULL;
			}
			spines = uplinks / links;
		}
	}
	if (!spines || !links) {
		fab_err_set(err, FAB_ETOPO, "topology: a spine-leaf fabric needs at least one spine");
		return NULL;
	}

	struct draft d = {0};
	char name[32];
	for (uint32_t s = 0; s < servers; s++)
		for (uint32_t k = 0; k < N; k++)
			for (uint32_t j = 0; j < P; j++) {
				if (P == 1)
					snprintf(name, sizeof name, "server%u.nic%u", s, k);
				else
					snprintf(name, sizeof name, "server%u.nic%u.p%u", s, k, j);
				fab_draft_add_node(&d, FAB_NODE_NIC, 0, name);
			}
	/* pods: leaf l of pod q is leaf q*L + l, spine s of pod q spine q*spines + s */
	uint32_t leaf0 = d.nnodes;
	for (uint32_t l = 0; l < L * pods; l++) {
		snprintf(name, sizeof name, "leaf%u", l);
		fab_draft_add_node(&d, FAB_NODE_SWITCH, 1, name);
	}
	uint32_t spine0 = d.nnodes;
	for (uint32_t s = 0; s < spines * pods; s++) {
		snprintf(name, sizeof name, "spine%u", s);
		fab_draft_add_node(&d, FAB_NODE_SWITCH, 2, name);
	}
	uint32_t super0 = d.nnodes, SS = pods > 1 ? p->super_spines : 0;
	for (uint32_t j = 0; j < spines && SS; j++)
		for (uint32_t x = 0; x < SS; x++) {
			snprintf(name, sizeof name, "super%u.%u", j, x);
			fab_draft_add_node(&d, FAB_NODE_SWITCH, 3, name);
		}
	/* host links, leaf by leaf so each leaf's host ports come first */
	for (uint32_t l = 0; l < L * pods; l++) {
		for (uint32_t s = 0; s < servers; s++)
			for (uint32_t k = 0; k < N; k++)
				for (uint32_t j = 0; j < P; j++) {
					/* the NIC's ToR (of its rail); with dual ToR, port j to the pair's j-th */
					uint32_t tor = p->rail_optimized ? (s / S) * N + k : s / S;
					uint32_t leaf = p->dual_tor ? 2 * tor + j : tor;
					if (leaf != l)
						continue;
					fab_draft_add_link(&d, (s * N + k) * P + j, leaf0 + l, p->host_bps,
							   p->host_delay_ps);
				}
	}
	for (uint32_t l = 0; l < L * pods; l++)
		for (uint32_t s = 0; s < spines; s++)
			for (uint32_t k = 0; k < links; k++)
				fab_draft_add_link(&d, leaf0 + l, spine0 + (l / L) * spines + s, p->fabric_bps,
						   p->fabric_delay_ps);
	/* plane j: spine j of every pod to each of the plane's super-spines */
	for (uint32_t q = 0; q < pods && SS; q++)
		for (uint32_t j = 0; j < spines; j++)
			for (uint32_t x = 0; x < SS; x++)
				for (uint32_t k = 0; k < p->links_per_super; k++)
					fab_draft_add_link(&d, spine0 + q * spines + j, super0 + j * SS + x,
							   p->core_bps, p->fabric_delay_ps);
	struct fab_topo *t = fab_draft_finish(&d, p, err);
	fab_draft_free(&d);
	return t;
}

static struct fab_topo *build_fat_tree(const struct fab_topo_params *p, struct fab_err *err)
{
	uint32_t k = p->k;
	if (k < 2 || k % 2) {
		fab_err_set(err, FAB_ETOPO, "topology.k: a fat-tree needs an even k >= 2, got %u", k);
		return NULL;
	}
	uint32_t h = k / 2, nics = k * k * k / 4;
	if (nics % p->nics_per_server) {
		fab_err_set(err, FAB_ETOPO,
			    "topology.k: a k=%u fat-tree has %u host ports, not a multiple of "
			    "nics_per_server %u",
			    k, nics, p->nics_per_server);
		return NULL;
	}
	struct draft d = {0};
	char name[32];
	for (uint32_t i = 0; i < nics; i++) {
		snprintf(name, sizeof name, "server%u.nic%u", i / p->nics_per_server, i % p->nics_per_server);
		fab_draft_add_node(&d, FAB_NODE_NIC, 0, name);
	}
	uint32_t edge0 = d.nnodes;
	for (uint32_t pod = 0; pod < k; pod++)
		for (uint32_t e = 0; e < h; e++) {
			snprintf(name, sizeof name, "edge%u.%u", pod, e);
			fab_draft_add_node(&d, FAB_NODE_SWITCH, 1, name);
		}
	uint32_t agg0 = d.nnodes;
	for (uint32_t pod = 0; pod < k; pod++)
		for (uint32_t a = 0; a < h; a++) {
			snprintf(name, sizeof name, "agg%u.%u", pod, a);
			fab_draft_add_node(&d, FAB_NODE_SWITCH, 2, name);
		}
	uint32_t core0 = d.nnodes;
	for (uint32_t c = 0; c < h * h; c++) {
		snprintf(name, sizeof name, "core%u", c);
		fab_draft_add_node(&d, FAB_NODE_SWITCH, 3, name);
	}
	for (uint32_t i = 0; i < nics; i++)
		fab_draft_add_link(&d, i, edge0 + i / h, p->host_bps, p->host_delay_ps);
	for (uint32_t pod = 0; pod < k; pod++)
		for (uint32_t e = 0; e < h; e++)
			for (uint32_t a = 0; a < h; a++)
				fab_draft_add_link(&d, edge0 + pod * h + e, agg0 + pod * h + a, p->fabric_bps,
						   p->fabric_delay_ps);
	for (uint32_t pod = 0; pod < k; pod++)
		for (uint32_t a = 0; a < h; a++)
			for (uint32_t c = 0; c < h; c++)
				fab_draft_add_link(&d, agg0 + pod * h + a, core0 + a * h + c, p->core_bps,
						   p->fabric_delay_ps);
	struct fab_topo *t = fab_draft_finish(&d, p, err);
	fab_draft_free(&d);
	return t;
}

/* node names to indices: open addressing over the draft's nodes (the
 * file may declare a million of them) */
struct name_index {
	uint32_t *slot; /* node + 1, 0: empty */
	size_t cap;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static uint32_t name_find(const struct name_index *ix, const struct draft *d, const char *name)
{
	if (!ix->cap)
		return UINT32_MAX;
	for (size_t i = name_hash(name) & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
		uint32_t v = ix->slot[i];
		if (!v)
			return UINT32_MAX;
		if (!strcmp(d->nodes[v - 1].name, name))
			return v - 1;
	}
}

static void name_add(struct name_index *ix, const struct draft *d, uint32_t node)
{
	if (2 * (size_t)(node + 1) > ix->cap) {
		struct name_index big = {NULL, ix->cap ? 2 * ix->cap : 1024};
		big.slot = fab_xcalloc(big.cap, sizeof *big.slot);
		for (uint32_t k = 0; k < node; k++)
			name_add(&big, d, k);
		free(ix->slot);
		*ix = big;
	}
	size_t i = name_hash(d->nodes[node].name) & (ix->cap - 1);
	while (ix->slot[i])
		i = (i + 1) & (ix->cap - 1);
	ix->slot[i] = node + 1;
}

/* a file link's rate and delay, in the ranges of the scenario's link keys */
int fab_topo_check_link(fab_rate_bps rate, fab_time_ps delay, char *why, size_t len)
{
	char a[32], b[32];
	if (rate < FAB_LINK_MIN_BPS || rate > FAB_LINK_MAX_BPS) {
		snprintf(why, len, "a link rate must be from %s to %s", fab_fmt_rate(FAB_LINK_MIN_BPS, a, sizeof a),
			 fab_fmt_rate(FAB_LINK_MAX_BPS, b, sizeof b));
		return -1;
	}
	if (delay > FAB_LINK_MAX_DELAY_PS) {
		snprintf(why, len, "a link delay must be at most %s", fab_fmt_time(FAB_LINK_MAX_DELAY_PS, a, sizeof a));
		return -1;
	}
	return 0;
}

/*
 * The edge-list file, one statement a line ('#' starts a comment):
 *   nic NAME                 an endpoint; servers are consecutive groups of
 *                            nics_per_server NICs in file order
 *   switch NAME
 *   link A B RATE DELAY      e.g. link server0.nic0 leaf0 400Gbps 1us
 * Read whole (tok.c: at most FAB_TOK_MAX_FILE bytes, tokens of at most
 * FAB_TOK_MAX_LEN, no NUL byte), at most FAB_TOPO_MAX_NODES nodes and
 * FAB_TOPO_MAX_LINKS links.
 */
static int read_topo_file(const char *path, struct draft *d, struct fab_err *err)
{
	struct fab_tok t;
	struct name_index ix = {0};
	int rc = fab_tok_open(&t, path, err), got;
	if (rc)
		return rc;
	char f[5][FAB_TOK_MAX_LEN + 1];
	unsigned line[5], col[5];
	got = fab_tok_next(&t, err);
	while (got == 1) {
		/* a statement: its line's tokens */
		unsigned nf = 0;
		do {
			if (nf == 5) {
				rc = fab_tok_err(&t, err, "too many fields");
				goto out;
			}
			memcpy(f[nf], t.tok, sizeof t.tok);
			line[nf] = t.tok_line;
			col[nf++] = t.tok_col;
			got = fab_tok_next(&t, err);
		} while (got == 1 && !fab_tok_starts_line(&t));
		if (got < 0) {
			rc = got;
			goto out;
		}
		unsigned ln = line[0];
		if (!strcmp(f[0], "nic") || !strcmp(f[0], "switch")) {
			if (nf != 2) {
				rc = fab_err_set(err, FAB_EINVAL, "%s:%u:%u: expected '%s NAME'", path, ln, col[0],
						 f[0]);
				goto out;
			}
			if (name_find(&ix, d, f[1]) != UINT32_MAX) {
				rc = fab_err_set(err, FAB_EINVAL, "%s:%u:%u: node '%s' is defined twice", path, ln,
						 col[1], f[1]);
				goto out;
			}
			if (strlen(f[1]) >= sizeof d->nodes[0].name) {
				rc = fab_err_set(err, FAB_EINVAL, "%s:%u:%u: name too long (at most %zu characters)",
						 path, ln, col[1], sizeof d->nodes[0].name - 1);
				goto out;
			}
			if (d->nnodes == FAB_TOPO_MAX_NODES) {
				rc = fab_err_set(err, FAB_EINVAL, "%s:%u:%u: more than %u nodes", path, ln, col[0],
						 FAB_TOPO_MAX_NODES);
				goto out;
			}
			name_add(&ix, d,
				 fab_draft_add_node(d, f[0][0] == 'n' ? FAB_NODE_NIC : FAB_NODE_SWITCH, 0, f[1]));
		} else if (!strcmp(f[0], "link")) {
			if (nf != 5) {
				rc = fab_err_set(err, FAB_EINVAL, "%s:%u:%u: expected 'link A B RATE DELAY'", path, ln,
						 col[0]);
				goto out;
			}
			uint32_t ends[2];
			for (int e = 0; e < 2; e++)
				if ((ends[e] = name_find(&ix, d, f[1 + e])) == UINT32_MAX) {
					rc = fab_err_set(
						err, FAB_EINVAL,
						"%s:%u:%u: unknown node '%s' (declare it with nic or switch first)",
						path, ln, col[1 + e], f[1 + e]);
					goto out;
				}
			if (ends[0] == ends[1]) {
				rc = fab_err_set(err, FAB_EINVAL, "%s:%u:%u: a link joins two different nodes", path,
						 ln, col[2]);
				goto out;
			}
			if (d->nlinks == FAB_TOPO_MAX_LINKS) {
				rc = fab_err_set(err, FAB_EINVAL, "%s:%u:%u: more than %u links", path, ln, col[0],
						 FAB_TOPO_MAX_LINKS);
				goto out;
			}
			fab_rate_bps rate;
			fab_time_ps delay;
			char why[160];
			if (fab_parse_rate(f[3], &rate, why, sizeof why) ||
			    fab_topo_check_link(rate, 0, why, sizeof why)) {
				rc = fab_err_set(err, FAB_EINVAL, "%s:%u:%u: %s", path, ln, col[3], why);
				goto out;
			}
			if (fab_parse_time(f[4], &delay, why, sizeof why) ||
			    fab_topo_check_link(rate, delay, why, sizeof why)) {
				rc = fab_err_set(err, FAB_EINVAL, "%s:%u:%u: %s", path, ln, col[4], why);
				goto out;
			}
			fab_draft_add_link(d, ends[0], ends[1], rate, delay);
		} else {
			rc = fab_err_set(err, FAB_EINVAL,
					 "%s:%u:%u: unknown statement '%s' (expected nic, switch or link)", path, ln,
					 col[0], f[0]);
			goto out;
		}
	}
	if (got < 0)
		rc = got;
	else if (!d->nnodes)
		rc = fab_err_set(err, FAB_EINVAL, "%s: the topology file declares no nodes", path);
out:
	free(ix.slot);
	fab_tok_close(&t);
	return rc;
}

struct fab_topo *fab_topo_build(const struct fab_topo_params *p, struct fab_err *err)
{
	if (!p->gpus_per_server || !p->nics_per_server) {
		fab_err_set(err, FAB_ETOPO, "topology: gpus_per_server and nics_per_server must be >= 1");
		return NULL;
	}
	if (p->kind != FAB_TOPO_SPINE_LEAF && (p->nic_ports > 1 || p->dual_tor)) {
		fab_err_set(err, FAB_ETOPO,
			    "topology.nic_ports: NICs with several ports are built on spine-leaf fabrics");
		return NULL;
	}
	switch (p->kind) {
	case FAB_TOPO_SPINE_LEAF:
		return build_spine_leaf(p, err);
	case FAB_TOPO_FAT_TREE:
		return build_fat_tree(p, err);
	case FAB_TOPO_FILE:
	case FAB_TOPO_NS3: {
		struct draft d = {0};
		struct fab_topo *t = NULL;
		if (!p->file || !*p->file) {
			fab_err_set(err, FAB_EINVAL, "topology.file: kind %s needs a file",
				    p->kind == FAB_TOPO_NS3 ? "ns3" : "file");
			return NULL;
		}
		if (!(p->kind == FAB_TOPO_NS3 ? fab_topo_read_ns3(p->file, &d, err) : read_topo_file(p->file, &d, err)))
			t = fab_draft_finish(&d, p, err);
		fab_draft_free(&d);
		return t;
	}
	}
	fab_err_set(err, FAB_EINVAL, "topology.kind: unknown kind");
	return NULL;
}

void fab_topo_free(struct fab_topo *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->ports);
	free(t->nic_node);
	fab_topo_free_routes(t);
	free(t);
}
