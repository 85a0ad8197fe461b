/*
 * plan.c - fabric design: the smallest spine-leaf (or k-ary fat tree) of a
 * given switch radix that gives every NIC a port at the oversubscription
 * asked for.
 */
#include "plan.h"

#include <math.h>
#include <string.h>

static uint32_t ceil_div(uint64_t a, uint64_t b)
{
	return (uint32_t)((a + b - 1) / b);
}

/* uplinks a leaf needs for down NIC ports: down x nic_rate / (up x
 * fabric_rate) at most num/den */
static uint32_t ups_for(const struct fab_plan_req *r, uint32_t down)
{
	double need = (double)down * (double)r->nic_rate * r->over_den / ((double)r->over_num * (double)r->fabric_rate);
	return (uint32_t)ceil(need - 1e-9);
}

static int two_tier(const struct fab_plan_req *r, struct fab_plan *p, struct fab_err *err)
{
	uint32_t R = r->radix, K = r->nics_per_server;
	/* the most down ports a leaf can have with its uplinks beside them */
	uint32_t down = 0;
	for (uint32_t d = R; d >= 1; d--)
		if (d + ups_for(r, d) <= R) {
			down = d;
			break;
		}
	uint32_t spl = r->rail_optimized ? down : down / K; /* servers a leaf (a rail group's leaf) serves */
	if (!spl)
		return fab_err_set(
			err, FAB_EINVAL,
			"plan: a leaf of radix %u has %u ports for NICs at %u:%u, fewer than a server's %u NICs "
			"(try --rail-optimized, a larger radix or more oversubscription)",
			R, down, r->over_num, r->over_den, K);
	uint32_t groups = ceil_div(p->servers, spl); /* leaves, or rail groups of K leaves */
	spl = ceil_div(p->servers, groups);          /* spread the servers evenly */
	uint32_t leaves = r->rail_optimized ? groups * K : groups;
	uint32_t d_used = r->rail_optimized ? spl : spl * K;
	uint32_t up = ups_for(r, d_used);
	if (leaves > R)
		return fab_err_set(err, FAB_EINVAL, "plan: %u leaves is more than a spine of radix %u reaches", leaves,
				   R);
	/* each spine reaches every leaf over L links: leaves x L <= R */
	uint32_t L = FAB_MIN(R / leaves, up ? up : 1), S = ceil_div(up ? up : 1, L);
	while (d_used + S * L > R && L > 1) { /* rounding up overran the leaf: thinner bundles */
		L--;
		S = ceil_div(up, L);
	}
	if (d_used + S * L > R)
		return fab_err_set(err, FAB_EINVAL, "plan: a leaf of radix %u cannot hold %u NIC ports and %u uplinks",
				   R, d_used, S * L);
	p->tiers = 2;
	p->leaves = leaves;
	p->servers_per_leaf = spl;
	p->servers = groups * spl;
	p->nic_ports = p->servers * K;
	p->spines = S;
	p->links_per_spine = L;
	p->leaf_down = d_used;
	p->leaf_up = S * L;
	p->switches[0] = leaves;
	p->switches[1] = S;
	p->links[0] = p->nic_ports;
	p->links[1] = (uint64_t)leaves * S * L;
	p->oversubscription = (double)d_used * (double)r->nic_rate / ((double)p->leaf_up * (double)r->fabric_rate);
	double cut = (double)p->links[1] * (double)r->fabric_rate / 2, hosts = (double)p->nic_ports * r->nic_rate / 2;
	p->bisection_bps = FAB_MIN(cut, hosts);
	p->max_nic_ports = (uint64_t)R * (R / 2);
	return 0;
}

static int three_tier(const struct fab_plan_req *r, struct fab_plan *p, struct fab_err *err)
{
	if ((uint64_t)r->over_num != r->over_den)
		return fab_err_set(err, FAB_EINVAL, "plan: three tiers are planned at 1:1 only (a k-ary fat tree)");
	if (r->rail_optimized)
		return fab_err_set(err, FAB_EINVAL, "plan: three tiers are planned without rail optimisation only");
	uint64_t need = (uint64_t)p->servers * r->nics_per_server;
	uint32_t k = 2;
	while (k <= r->radix && (uint64_t)k * k * k / 4 < need)
		k += 2;
	if (k > r->radix)
		return fab_err_set(err, FAB_EINVAL,
				   "plan: %llu NIC ports need more than three tiers of radix %u (at most %llu)",
				   (unsigned long long)need, r->radix,
				   (unsigned long long)((uint64_t)r->radix * r->radix * r->radix / 4));
	p->tiers = 3;
	p->k = k;
	/* the fat tree's NIC ports are all built; servers fill them */
	p->nic_ports = k * k * k / 4;
	p->servers = p->nic_ports / r->nics_per_server;
	p->switches[0] = k * k / 2; /* edge */
	p->switches[1] = k * k / 2; /* aggregation */
	p->switches[2] = k * k / 4; /* core */
	p->links[0] = p->nic_ports;
	p->links[1] = (uint64_t)k * (k / 2) * (k / 2);
	p->links[2] = (uint64_t)k * (k / 2) * (k / 2);
	p->leaf_down = p->leaf_up = k / 2;
	p->oversubscription = (double)r->nic_rate / (double)r->fabric_rate;
	double cut = (double)p->links[2] * (double)r->fabric_rate / 2, hosts = (double)p->nic_ports * r->nic_rate / 2;
	p->bisection_bps = FAB_MIN(cut, hosts);
	p->max_nic_ports = (uint64_t)r->radix * r->radix * r->radix / 4;
	return 0;
}

int fab_plan_design(const struct fab_plan_req *r, struct fab_plan *p, struct fab_err *err)
{
	memset(p, 0, sizeof *p);
	if (!r->gpus || !r->gpus_per_server || !r->nics_per_server || r->radix < 2 || !r->nic_rate || !r->fabric_rate ||
	    !r->over_num || !r->over_den)
		return fab_err_set(err, FAB_EINVAL,
				   "plan: GPUs, GPUs and NICs per server, radix and rates must be set");
	if (r->tiers && r->tiers != 2 && r->tiers != 3)
		return fab_err_set(err, FAB_EINVAL, "plan: --tiers: 2 or 3 (or none: as few as will do)");
	if (r->over_num < r->over_den)
		return fab_err_set(err, FAB_EINVAL, "plan: oversubscription %u:%u is under 1:1", r->over_num,
				   r->over_den);
	p->servers = ceil_div(r->gpus, r->gpus_per_server);
	if (r->tiers == 3)
		return three_tier(r, p, err);
	/* two tiers where they will do (a failed try leaves p as it was) */
	struct fab_err e2 = {0};
	int rc = two_tier(r, p, r->tiers == 2 ? err : &e2);
	return !rc || r->tiers == 2 ? rc : three_tier(r, p, err);
}

void fab_plan_write_yaml(FILE *f, const struct fab_plan_req *r, const struct fab_plan *p)
{
	char nr[32], fr[32];
	fab_fmt_rate(r->nic_rate, nr, sizeof nr);
	fab_fmt_rate(r->fabric_rate, fr, sizeof fr);
	fprintf(f, "# fabscope plan: %u GPUs (%u servers x %u GPUs, %u NICs each at %s), radix %u, %u:%u%s\n", r->gpus,
		p->servers, r->gpus_per_server, r->nics_per_server, nr, r->radix, r->over_num, r->over_den,
		r->rail_optimized ? ", rail-optimized" : "");
	fprintf(f, "topology:\n");
	if (p->tiers == 2) {
		fprintf(f,
			"  kind: spine-leaf\n  leaves: %u\n  servers_per_leaf: %u\n  spines: %u\n  links_per_spine: %u\n",
			p->leaves, p->servers_per_leaf, p->spines, p->links_per_spine);
		if (r->rail_optimized)
			fprintf(f, "  rail_optimized: true\n");
	} else {
		fprintf(f, "  kind: fat-tree\n  k: %u\n", p->k);
	}
	fprintf(f, "  gpus_per_server: %u\n  nics_per_server: %u\n  radix: %u\n  host_rate: %s\n  fabric_rate: %s\n",
		r->gpus_per_server, r->nics_per_server, r->radix, nr, fr);
	if (p->tiers == 3)
		fprintf(f, "  core_rate: %s\n", fr);
}

void fab_plan_write_text(FILE *f, const struct fab_plan_req *r, const struct fab_plan *p)
{
	char nr[32], fr[32];
	fab_fmt_rate(r->nic_rate, nr, sizeof nr);
	fab_fmt_rate(r->fabric_rate, fr, sizeof fr);
	fprintf(f, "fabscope plan: %u GPUs, %u servers of %u GPUs and %u NICs at %s, switches of radix %u\n", r->gpus,
		ceil_div(r->gpus, r->gpus_per_server), r->gpus_per_server, r->nics_per_server, nr, r->radix);
	if (p->tiers == 2)
		fprintf(f,
			"design: two tiers (spine-leaf%s): %u leaves, %u server%s under each%s, %u spines, %u link%s from "
			"each leaf to each spine\n",
			r->rail_optimized ? ", rail-optimized" : "", p->leaves, p->servers_per_leaf,
			p->servers_per_leaf == 1 ? "" : "s", r->rail_optimized ? " (one NIC of each)" : "", p->spines,
			p->links_per_spine, p->links_per_spine == 1 ? "" : "s");
	else
		fprintf(f,
			"design: three tiers (the smallest k-ary fat tree that holds them, switches of k = %u ports): "
			"%u edge, %u aggregation, %u core switches, room for %u servers\n",
			p->k, p->switches[0], p->switches[1], p->switches[2], p->servers);
	fprintf(f, "%-24s %10s %12s\n", "tier", "switches", "links");
	fprintf(f, "%-24s %10s %12llu\n", "NIC - leaf", "", (unsigned long long)p->links[0]);
	fprintf(f, "%-24s %10u %12llu\n", p->tiers == 2 ? "leaf - spine" : "edge - aggregation", p->switches[0],
		(unsigned long long)p->links[1]);
	fprintf(f, "%-24s %10u %12s\n", p->tiers == 2 ? "spine" : "aggregation", p->switches[1], "");
	if (p->tiers == 3)
		fprintf(f, "%-24s %10u %12llu\n", "core (aggregation - core)", p->switches[2],
			(unsigned long long)p->links[2]);
	fprintf(f, "NIC ports: %u built (%u asked for); this radix serves at most %llu at 1:1 in %d tiers\n",
		p->nic_ports, ceil_div(r->gpus, r->gpus_per_server) * r->nics_per_server,
		(unsigned long long)p->max_nic_ports, p->tiers);
	fprintf(f, "a leaf: %u ports down, %u up; oversubscription reached %.3g:1 (%u:%u asked)\n", p->leaf_down,
		p->leaf_up, p->oversubscription, r->over_num, r->over_den);
	fprintf(f, "bisection bandwidth: %.4g Tbps (%.3g%% of the NICs' half)\n", p->bisection_bps / 1e12,
		100 * p->bisection_bps / ((double)p->nic_ports * (double)r->nic_rate / 2));
}
