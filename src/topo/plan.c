/*
 * plan.c - fabric design: the smallest spine-leaf (in two tiers, or pods of
 * them joined by super-spines in three) of a given switch radix that gives
 * every NIC a port at the oversubscription asked for; its cables and
 * optics by reach, cost and power, and what one failure takes away.
 */
#include "plan.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

const char *const fab_plan_item_names[FAB_PI_N] = {"nic", "switch_port", "switch", "dac", "aoc",
						   "sr8", "dr4",         "fr4",    "lr4", "fiber_m"};

/* reach of each link kind, metres (DAC: 3 m up to 400G, 2 m above) */
static const double reach_m[FAB_PI_N] = {[FAB_PI_DAC] = 3,  [FAB_PI_AOC] = 30,  [FAB_PI_SR] = 100,
					 [FAB_PI_DR] = 500, [FAB_PI_FR] = 2000, [FAB_PI_LR] = 10000};

void fab_plan_prices_default(struct fab_plan_prices *pr)
{
	/* at 400G; doc/plan.md: where each comes from */
	static const double usd[FAB_PI_N] = {1800, 700, 5000, 120, 500, 500, 650, 900, 1500, 2.5};
	static const double watts[FAB_PI_N] = {25, 7.5, 150, 0.1, 12, 10, 10, 12, 12, 0};
	memcpy(pr->usd, usd, sizeof usd);
	memcpy(pr->watts, watts, sizeof watts);
}

static int design(const struct fab_plan_req *r, struct fab_plan *p, struct fab_err *err);

void fab_plan_req_default(struct fab_plan_req *r)
{
	*r = (struct fab_plan_req){.gpus_per_server = 8,
				   .nics_per_server = 8,
				   .radix = 64,
				   .nic_rate = 400000000000ULL,
				   .over_num = 1,
				   .over_den = 1};
}

int fab_plan_req_set(struct fab_plan_req *r, const char *key, const char *val, char *why, size_t len)
{
	static const struct {
		const char *name;
		size_t off;
		uint32_t lo, hi;
	} u32[] = {{"gpus", offsetof(struct fab_plan_req, gpus), 1, 1u << 24},
		   {"gpus_per_server", offsetof(struct fab_plan_req, gpus_per_server), 1, 64},
		   {"nics_per_server", offsetof(struct fab_plan_req, nics_per_server), 1, 64},
		   {"radix", offsetof(struct fab_plan_req, radix), 2, 1024},
		   {"tiers", offsetof(struct fab_plan_req, tiers), 2, 3}};
	static const char *const lengths[3] = {"length_leaf", "length_spine", "length_core"};
	uint64_t u;
	for (size_t i = 0; i < sizeof u32 / sizeof *u32; i++)
		if (!strcmp(key, u32[i].name)) {
			if (fab_parse_uint(val, &u, why, len) || u < u32[i].lo || u > u32[i].hi) {
				snprintf(why, len, "expected a whole number from %u to %u, got \"%s\"", u32[i].lo,
					 u32[i].hi, val);
				return FAB_EINVAL;
			}
			if (!strcmp(key, "tiers"))
				r->tiers = (int)u;
			else
				*(uint32_t *)((char *)r + u32[i].off) = (uint32_t)u;
			return 0;
		}
	for (int t = 0; t < 3; t++)
		if (!strcmp(key, lengths[t])) {
			char *e;
			double m = strtod(val, &e);
			if (e == val || (*e && strcmp(e, "m")) || !(m > 0) || m > 1e5) {
				snprintf(why, len, "expected a length in metres such as 30 or 30m, got \"%s\"", val);
				return FAB_EINVAL;
			}
			r->length_m[t] = m;
			return 0;
		}
	if (!strcmp(key, "nic_rate") || !strcmp(key, "fabric_rate")) {
		/* what a scenario's links may run at (topology.fabric_rate's
		 * range): a plan is written as a scenario that sim must read */
		fab_rate_bps v;
		int rc = fab_parse_rate(val, &v, why, len);
		if (!rc && (v < FAB_PLAN_MIN_RATE || v > FAB_PLAN_MAX_RATE)) {
			snprintf(why, len, "expected a rate from 1Mbps to 1.6Tbps (what a link may run at), got \"%s\"",
				 val);
			rc = FAB_EINVAL;
		}
		if (!rc)
			*(key[0] == 'n' ? &r->nic_rate : &r->fabric_rate) = v;
		return rc;
	}
	if (!strcmp(key, "oversubscription"))
		return fab_parse_ratio(val, &r->over_num, &r->over_den, why, len);
	if (!strcmp(key, "spine_oversubscription"))
		return fab_parse_ratio(val, &r->over2_num, &r->over2_den, why, len);
	if (!strcmp(key, "rail_optimized"))
		return fab_parse_bool(val, &r->rail_optimized, why, len);
	if (!strcmp(key, "dual_tor"))
		return fab_parse_bool(val, &r->dual_tor, why, len);
	return 1;
}

static uint32_t ceil_div(uint64_t a, uint64_t b)
{
	return (uint32_t)((a + b - 1) / b);
}

/* a NIC port's rate: dual ToR splits the NIC over two */
static double port_rate(const struct fab_plan_req *r)
{
	return r->dual_tor ? (double)r->nic_rate / 2 : (double)r->nic_rate;
}

/* uplinks a leaf needs for down NIC ports: down x port rate / (up x
 * fabric_rate) at most num/den */
static uint32_t ups_for(const struct fab_plan_req *r, uint32_t down)
{
	double need = (double)down * port_rate(r) * r->over_den / ((double)r->over_num * (double)r->fabric_rate);
	return (uint32_t)ceil(need - 1e-9);
}

/* the servers a leaf (a rail group's leaf) can serve: as many ports for
 * NICs as leave room for the uplinks the oversubscription asks for */
static int leaf_servers(const struct fab_plan_req *r, uint32_t *spl, struct fab_err *err)
{
	uint32_t R = r->radix, K = r->nics_per_server, down = 0;
	for (uint32_t d = R; d >= 1 && !down; d--)
		if (d + ups_for(r, d) <= R)
			down = d;
	*spl = r->rail_optimized ? down : down / K;
	if (!*spl)
		return fab_err_set(err, FAB_EINVAL,
				   "plan: a leaf of radix %u has %u ports for NICs at %u:%u, fewer than a server's %u "
				   "NICs (try --rail-optimized, a larger radix or more oversubscription)",
				   R, down, r->over_num, r->over_den, K);
	return 0;
}

static int two_tier(const struct fab_plan_req *r, struct fab_plan *p, struct fab_err *err)
{
	uint32_t R = r->radix, K = r->nics_per_server, spl;
	if (leaf_servers(r, &spl, err))
		return err->code;
	uint32_t groups = ceil_div(p->servers, spl); /* leaves, or rail groups of K leaves */
	spl = ceil_div(p->servers, groups);          /* spread the servers evenly */
	uint32_t T = r->dual_tor ? 2 : 1;            /* leaves a NIC's ports spread over */
	uint32_t leaves = (r->rail_optimized ? groups * K : groups) * T;
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
	p->links[0] = (uint64_t)p->nic_ports * T;
	p->links[1] = (uint64_t)leaves * S * L;
	p->oversubscription = (double)d_used * port_rate(r) / ((double)p->leaf_up * (double)r->fabric_rate);
	double cut = (double)p->links[1] * (double)r->fabric_rate / 2, hosts = (double)p->nic_ports * r->nic_rate / 2;
	p->bisection_bps = FAB_MIN(cut, hosts);
	p->max_nic_ports = (uint64_t)R * (R / 2);
	return 0;
}

/* three tiers: pods of the two-tier design (leaves, and spines at 1:1
 * between them and the super-spines), joined by planes of super-spines:
 * plane j joins spine j of every pod */
static int three_tier(const struct fab_plan_req *r, struct fab_plan *p, struct fab_err *err)
{
	uint32_t R = r->radix, K = r->nics_per_server, spl;
	if (leaf_servers(r, &spl, err))
		return err->code;
	uint32_t up = ups_for(r, r->rail_optimized ? spl : spl * K);
	/* a pod: as many leaves as a spine reaches over one link each while
	 * keeping the uplinks its oversubscription needs (whole rail groups) */
	uint32_t o2n = r->over2_num ? r->over2_num : 1, o2d = r->over2_den ? r->over2_den : 1;
	uint32_t lpp = 0, unit = (r->rail_optimized ? K : 1) * (r->dual_tor ? 2 : 1);
	for (uint32_t d = R; d >= 1 && !lpp; d--)
		if (d + ceil_div((uint64_t)d * o2d, o2n) <= R)
			lpp = d;
	lpp -= lpp % unit;
	if (!lpp || !up)
		return fab_err_set(err, FAB_EINVAL, "plan: radix %u is too small for a pod of %u-NIC rail groups", R,
				   K);
	uint32_t groups_needed = ceil_div(p->servers, spl); /* leaves, or rail groups */
	uint32_t gpp = lpp / unit;                          /* groups a pod holds */
	uint32_t pods = ceil_div(groups_needed, gpp);
	if (pods < 2)
		pods = 2;
	if (pods > R)
		return fab_err_set(err, FAB_EINVAL,
				   "plan: %u servers need %u pods, more than a super-spine of radix %u reaches "
				   "(at most %llu NIC ports in three tiers)",
				   p->servers, pods, R, (unsigned long long)((uint64_t)R * R * R / 4));
	/* spread the groups over the pods, then the servers over the groups */
	gpp = ceil_div(groups_needed, pods);
	uint32_t groups = gpp * pods;
	spl = ceil_div(p->servers, groups);
	uint32_t lp = gpp * unit; /* leaves a pod */
	uint32_t d_used = r->rail_optimized ? spl : spl * K;
	up = ups_for(r, d_used);
	if (d_used + up > R)
		return fab_err_set(err, FAB_EINVAL, "plan: a leaf of radix %u cannot hold %u NIC ports and %u uplinks",
				   R, d_used, up);
	/* spines a pod: every leaf to every spine over one link */
	/* a spine: lp ports down, up as its oversubscription asks */
	uint32_t S = up, spine_up = ceil_div((uint64_t)lp * o2d, o2n);
	/* a plane: spine j of each pod to SS super-spines over LS links each,
	 * SS x LS = spine_up, pods x LS <= R */
	uint32_t LS = FAB_MIN(R / pods, spine_up);
	while (LS > 1 && spine_up % LS)
		LS--;
	uint32_t SS = spine_up / LS;
	p->tiers = 3;
	p->pods = pods;
	p->leaves = lp; /* per pod */
	p->servers_per_leaf = spl;
	p->servers = groups * spl;
	p->nic_ports = p->servers * K;
	p->spines = S; /* per pod */
	p->links_per_spine = 1;
	p->super_spines = SS; /* per plane */
	p->links_per_super = LS;
	p->leaf_down = d_used;
	p->leaf_up = up;
	p->switches[0] = lp * pods;
	p->switches[1] = S * pods;
	p->switches[2] = SS * S;
	p->links[0] = (uint64_t)p->nic_ports * (r->dual_tor ? 2 : 1);
	p->links[1] = (uint64_t)lp * pods * S;
	p->links[2] = (uint64_t)S * pods * SS * LS;
	p->oversubscription = (double)d_used * port_rate(r) / ((double)up * (double)r->fabric_rate);
	p->spine_oversubscription = (double)lp / (double)spine_up;
	/* the cut through the super-spines: half the pods' uplinks */
	double cut = (double)p->links[2] * (double)r->fabric_rate / 2, hosts = (double)p->nic_ports * r->nic_rate / 2;
	double pod_cut = (double)p->links[1] * (double)r->fabric_rate / 2;
	p->bisection_bps = FAB_MIN(FAB_MIN(cut, pod_cut), hosts);
	p->max_nic_ports = (uint64_t)R * R * R / 4;
	p->k = 0;
	return 0;
}

/* the cheapest link kind that reaches len metres at rate (the kinds are in
 * order of reach, and so of price) */
static int reach_for(double len, fab_rate_bps rate)
{
	for (int k = FAB_PI_DAC; k <= FAB_PI_LR; k++) {
		double m = k == FAB_PI_DAC && rate > 400000000000ULL ? 2 : reach_m[k];
		if (len <= m)
			return k;
	}
	return -1;
}

static int bill(const struct fab_plan_req *r, struct fab_plan *p, struct fab_err *err)
{
	struct fab_plan_prices def;
	const struct fab_plan_prices *pr = r->prices;
	if (!pr) {
		fab_plan_prices_default(&def);
		pr = &def;
	}
	static const double dflt_len[3] = {3, 50, 150};
	for (int t = 0; t < p->tiers; t++) {
		double len = r->length_m[t] > 0 ? r->length_m[t] : t == 0 && r->rail_optimized ? 20 : dflt_len[t];
		fab_rate_bps rate = t == 0 ? (fab_rate_bps)port_rate(r) : r->fabric_rate;
		p->length_m[t] = len;
		p->reach[t] = reach_for(len, rate);
		if (p->reach[t] < 0)
			return fab_err_set(err, FAB_EINVAL, "plan: a cable of %g m is beyond the reach of LR4 (10 km)",
					   len);
	}
	memset(p->count, 0, sizeof p->count);
	/* per item, its price and power at this item's rate */
	double scale[FAB_PI_N] = {[FAB_PI_SWITCH] = 1, [FAB_PI_FIBER_M] = 1};
	uint64_t sw = (uint64_t)p->switches[0] + p->switches[1] + p->switches[2];
	p->count[FAB_PI_NIC] = p->nic_ports;
	scale[FAB_PI_NIC] = (double)r->nic_rate / 400e9;
	p->count[FAB_PI_SWITCH_PORT] = sw * r->radix;
	scale[FAB_PI_SWITCH_PORT] = (double)r->fabric_rate / 400e9;
	p->count[FAB_PI_SWITCH] = sw;
	double fiber = 0;
	for (int t = 0; t < p->tiers; t++) {
		int k = p->reach[t];
		double sc = (t == 0 ? port_rate(r) : (double)r->fabric_rate) / 400e9;
		uint64_t n = k == FAB_PI_DAC || k == FAB_PI_AOC ? p->links[t] : 2 * p->links[t];
		/* mixed rates on one kind: the count-weighted scale */
		scale[k] = (scale[k] * (double)p->count[k] + sc * (double)n) / (double)(p->count[k] + n);
		p->count[k] += n;
		if (k >= FAB_PI_SR)
			fiber += (double)p->links[t] * p->length_m[t];
	}
	p->count[FAB_PI_FIBER_M] = (uint64_t)llround(fiber);
	p->usd_total = p->watts_total = 0;
	for (int i = 0; i < FAB_PI_N; i++) {
		p->usd[i] = (double)p->count[i] * pr->usd[i] * scale[i];
		p->watts[i] = (double)p->count[i] * pr->watts[i] * scale[i];
		p->usd_total += p->usd[i];
		p->watts_total += p->watts[i];
	}
	return 0;
}

/* what one switch or link down takes away */
static void failures(const struct fab_plan_req *r, struct fab_plan *p)
{
	struct fab_plan_failure *f = &p->fail;
	double nr = port_rate(r), fr = (double)r->fabric_rate;
	memset(f, 0, sizeof *f);
	f->nic_of = r->nics_per_server;
	f->nic_left = r->nics_per_server - 1;
	f->leaf_nics_cut = p->leaf_down;
	f->leaf_servers_cut = r->rail_optimized ? (r->nics_per_server == 1 ? p->servers_per_leaf : 0)
						: p->servers_per_leaf;
	f->upper_up_of = p->leaf_up;
	f->upper_up_left = p->leaf_up - p->links_per_spine;
	if (p->tiers == 2) {
		f->upper_bisection = (double)(p->spines - 1) / (double)p->spines;
	} else {
		/* a spine carries 1/(spines x pods) of the cut through the
		 * super-spines, a super-spine 1/(all of them) */
		f->upper_bisection = 1 - 1.0 / ((double)p->spines * p->pods);
		f->core_bisection = 1 - 1.0 / (double)p->switches[2];
	}
	f->leaf_share = (double)f->leaf_nics_cut / (double)p->links[0];
	f->upper_oversub = f->upper_up_left ? (double)p->leaf_down * nr / ((double)f->upper_up_left * fr) : INFINITY;
	f->link_oversub = p->leaf_up > 1 ? (double)p->leaf_down * nr / ((double)(p->leaf_up - 1) * fr) : INFINITY;
}

int fab_plan_design(const struct fab_plan_req *r, struct fab_plan *p, struct fab_err *err)
{
	int rc = design(r, p, err);
	if (rc)
		return rc;
	failures(r, p);
	return bill(r, p, err);
}

static int design(const struct fab_plan_req *r, struct fab_plan *p, struct fab_err *err)
{
	memset(p, 0, sizeof *p);
	if (!r->gpus || !r->gpus_per_server || !r->nics_per_server || r->radix < 2 || !r->nic_rate || !r->fabric_rate ||
	    !r->over_num || !r->over_den)
		return fab_err_set(err, FAB_EINVAL,
				   "plan: GPUs, GPUs and NICs per server, radix and rates must be set");
	if (r->dual_tor && port_rate(r) < (double)FAB_PLAN_MIN_RATE) {
		char nr[32];
		fab_fmt_rate(r->nic_rate, nr, sizeof nr);
		return fab_err_set(
			err, FAB_EINVAL,
			"plan: nic_rate %s with dual ToR: each of a NIC's two ports would run at half of it, "
			"under the 1Mbps a link may run at",
			nr);
	}
	if (r->tiers && r->tiers != 2 && r->tiers != 3)
		return fab_err_set(err, FAB_EINVAL, "plan: --tiers: 2 or 3 (or none: as few as will do)");
	if (r->over_num < r->over_den)
		return fab_err_set(err, FAB_EINVAL, "plan: oversubscription %u:%u is under 1:1", r->over_num,
				   r->over_den);
	if (r->over2_num < r->over2_den)
		return fab_err_set(err, FAB_EINVAL, "plan: spine oversubscription %u:%u is under 1:1", r->over2_num,
				   r->over2_den);
	if (r->over2_num && r->over2_num != r->over2_den && r->tiers == 2)
		return fab_err_set(err, FAB_EINVAL, "plan: spine oversubscription needs three tiers");
	p->servers = ceil_div(r->gpus, r->gpus_per_server);
	if (r->tiers == 3 || (r->over2_num && r->over2_num != r->over2_den))
		return three_tier(r, p, err);

	/* two tiers where they will do (a failed try leaves p as it was) */
	struct fab_err e2 = {0};
	int rc = two_tier(r, p, r->tiers == 2 ? err : &e2);
	return !rc || r->tiers == 2 ? rc : three_tier(r, p, err);
}

char **fab_plan_sets(const struct fab_plan_req *r, const struct fab_plan *p, size_t *n)
{
	char nr[32], fr[32];
	fab_fmt_rate((fab_rate_bps)port_rate(r), nr, sizeof nr); /* a link's: half the NIC's with dual ToR */
	fab_fmt_rate(r->fabric_rate, fr, sizeof fr);
	char **s = fab_xcalloc(20, sizeof *s);
	size_t m = 0;
	char b[128];
#define SET(...)                                                                                                       \
	do {                                                                                                           \
		snprintf(b, sizeof b, __VA_ARGS__);                                                                    \
		s[m++] = fab_xstrdup(b);                                                                               \
	} while (0)
	SET("topology.kind=spine-leaf");
	SET("topology.leaves=%u", p->leaves);
	SET("topology.servers_per_leaf=%u", p->servers_per_leaf);
	SET("topology.spines=%u", p->spines);
	SET("topology.links_per_spine=%u", p->links_per_spine);
	SET("topology.rail_optimized=%s", r->rail_optimized ? "true" : "false");
	SET("topology.pods=%u", p->tiers == 3 ? p->pods : 1);
	SET("topology.dual_tor=%s", r->dual_tor ? "true" : "false");
	SET("topology.nic_ports=%u", r->dual_tor ? 2 : 1);
	if (p->tiers == 3) {
		SET("topology.super_spines=%u", p->super_spines);
		SET("topology.links_per_super=%u", p->links_per_super);
	}
	SET("topology.gpus_per_server=%u", r->gpus_per_server);
	SET("topology.nics_per_server=%u", r->nics_per_server);
	SET("topology.radix=%u", r->radix);
	SET("topology.host_rate=%s", nr);
	SET("topology.fabric_rate=%s", fr);
	if (p->tiers == 3)
		SET("topology.core_rate=%s", fr);
#undef SET
	*n = m;
	return s;
}

void fab_plan_write_yaml(FILE *f, const struct fab_plan_req *r, const struct fab_plan *p)
{
	char nr[32];
	fab_fmt_rate(r->nic_rate, nr, sizeof nr);
	fprintf(f, "# fabscope plan: %u GPUs (%u servers x %u GPUs, %u NICs each at %s), radix %u, %u:%u%s\n", r->gpus,
		p->servers, r->gpus_per_server, r->nics_per_server, nr, r->radix, r->over_num, r->over_den,
		r->rail_optimized ? ", rail-optimized" : "");
	fprintf(f, "topology:\n");
	size_t n;
	char **s = fab_plan_sets(r, p, &n);
	for (size_t i = 0; i < n; i++) {
		char *eq = strchr(s[i], '=');
		*eq = 0;
		bool dflt = (!strcmp(s[i], "topology.rail_optimized") && !strcmp(eq + 1, "false")) ||
			(!strcmp(s[i], "topology.dual_tor") && !strcmp(eq + 1, "false")) ||
			(!strcmp(s[i], "topology.pods") && !strcmp(eq + 1, "1")) ||
			(!strcmp(s[i], "topology.nic_ports") && !strcmp(eq + 1, "1"));
		if (!dflt)
			fprintf(f, "  %s: %s\n", s[i] + strlen("topology."), eq + 1);
		free(s[i]);
	}
	free(s);
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
			"design: two tiers (spine-leaf%s%s): %u lea%s, %u server%s under each%s, %u spine%s, %u link%s "
			"from each leaf to each spine\n",
			r->rail_optimized ? ", rail-optimized" : "", r->dual_tor ? ", dual ToR: leaves in pairs" : "",
			p->leaves, p->leaves == 1 ? "f" : "ves", p->servers_per_leaf,
			p->servers_per_leaf == 1 ? "" : "s", r->rail_optimized ? " (one NIC of each)" : "", p->spines,
			p->spines == 1 ? "" : "s", p->links_per_spine, p->links_per_spine == 1 ? "" : "s");
	else
		fprintf(f,
			"design: three tiers (%u pods%s%s): a pod of %u leaves, %u server%s under each%s, and %u spines, "
			"1 link from each leaf to each spine; %u planes of %u super-spine%s (plane j: spine j of "
			"every pod), %u link%s from a spine to each super-spine of its plane\n",
			p->pods, r->rail_optimized ? ", rail-optimized" : "", r->dual_tor ? ", dual ToR" : "",
			p->leaves, p->servers_per_leaf, p->servers_per_leaf == 1 ? "" : "s",
			r->rail_optimized ? " (one NIC of each)" : "", p->spines, p->spines, p->super_spines,
			p->super_spines == 1 ? "" : "s", p->links_per_super, p->links_per_super == 1 ? "" : "s");
	fprintf(f, "%-24s %10s %12s\n", "tier", "switches", "links");
	fprintf(f, "%-24s %10s %12llu\n", "NIC - leaf", "", (unsigned long long)p->links[0]);
	fprintf(f, "%-24s %10u %12llu\n", "leaf - spine", p->switches[0], (unsigned long long)p->links[1]);
	if (p->tiers == 3)
		fprintf(f, "%-24s %10u %12llu\n", "spine - super-spine", p->switches[1],
			(unsigned long long)p->links[2]);
	else
		fprintf(f, "%-24s %10u %12s\n", "spine", p->switches[1], "");
	if (p->tiers == 3)
		fprintf(f, "%-24s %10u %12s\n", "super-spine", p->switches[2], "");
	fprintf(f, "NIC ports: %u built (%u asked for); this radix serves at most %llu at 1:1 in %d tiers\n",
		p->nic_ports, ceil_div(r->gpus, r->gpus_per_server) * r->nics_per_server,
		(unsigned long long)p->max_nic_ports, p->tiers);
	if (r->dual_tor)
		fprintf(f, "dual ToR: each NIC's 2 ports at half its rate, %llu links to the leaves\n",
			(unsigned long long)p->links[0]);
	fprintf(f, "a leaf: %u ports down, %u up; oversubscription reached %.3g:1 (%u:%u asked)\n", p->leaf_down,
		p->leaf_up, p->oversubscription, r->over_num, r->over_den);
	if (p->tiers == 3)
		fprintf(f, "a spine: %u ports down, %u up; oversubscription reached %.3g:1 (%u:%u asked)\n", p->leaves,
			p->super_spines * p->links_per_super, p->spine_oversubscription,
			r->over2_num ? r->over2_num : 1, r->over2_den ? r->over2_den : 1);
	fprintf(f, "bisection bandwidth: %.4g Tbps (%.3g%% of the NICs' half)\n", p->bisection_bps / 1e12,
		100 * p->bisection_bps / ((double)p->nic_ports * (double)r->nic_rate / 2));
	static const char *const tier_name[3] = {"NIC - leaf", "leaf - spine", "spine - super-spine"};
	fprintf(f, "\n%-24s %8s %8s  %-6s %12s\n", "cables", "links", "length", "kind", "transceivers");
	for (int t = 0; t < p->tiers; t++) {
		int k = p->reach[t];
		fprintf(f, "%-24s %8llu %6g m  %-6s %12llu\n", tier_name[t], (unsigned long long)p->links[t],
			p->length_m[t], fab_plan_item_names[k],
			(unsigned long long)(k >= FAB_PI_SR ? 2 * p->links[t] : 0));
	}
	fprintf(f, "\n%-12s %10s %14s %12s\n", "item", "count", "cost (USD)", "power (kW)");
	for (int i = 0; i < FAB_PI_N; i++)
		if (p->count[i])
			fprintf(f, "%-12s %10llu %14.0f %12.2f\n", fab_plan_item_names[i],
				(unsigned long long)p->count[i], p->usd[i], p->watts[i] / 1e3);
	fprintf(f, "%-12s %10s %14.0f %12.2f   (%.0f USD and %.0f W a GPU)\n", "total", "", p->usd_total,
		p->watts_total / 1e3, p->usd_total / r->gpus, p->watts_total / r->gpus);
	const struct fab_plan_failure *x = &p->fail;
	fprintf(f, "\none switch or link down:\n");
	if (r->dual_tor)
		fprintf(f,
			"  a leaf: %u NICs lose one of their two ports (each keeps half its bandwidth), %.3g%% of the "
			"NIC ports\n",
			x->leaf_nics_cut, 100 * x->leaf_share);
	else if (x->leaf_servers_cut)
		fprintf(f, "  a leaf: %u server%s (%u NIC ports) cut off, %.3g%% of the cluster\n", x->leaf_servers_cut,
			x->leaf_servers_cut == 1 ? "" : "s", x->leaf_nics_cut, 100 * x->leaf_share);
	else
		fprintf(f,
			"  a leaf: %u NIC ports lose their link (one NIC of %u servers: each keeps %u of %u), %.3g%% of "
			"the NIC ports\n",
			x->leaf_nics_cut, x->leaf_nics_cut, x->nic_left, x->nic_of, 100 * x->leaf_share);
	if (x->upper_up_left)
		fprintf(f, "  a spine: %s keeps %u of %u uplinks (%.3g:1); bisection %.3g%% of what it was\n",
			p->tiers == 2 ? "every leaf" : "each leaf of its pod", x->upper_up_left, x->upper_up_of,
			x->upper_oversub, 100 * x->upper_bisection);
	else /* the only spine: the leaves are cut from each other */
		fprintf(f, "  a spine: %s loses all %u uplinks, cut off from the others; bisection 0%%\n",
			p->tiers == 2 ? "every leaf" : "each leaf of its pod", x->upper_up_of);
	if (p->tiers == 3)
		fprintf(f, "  a super-spine: bisection %.3g%% of what it was\n", 100 * x->core_bisection);
	fprintf(f, "  a leaf's uplink: that leaf at %.3g:1\n", x->link_oversub);
	if (r->dual_tor)
		fprintf(f, "  a NIC's link: the NIC keeps its other port (half its bandwidth)\n");
	else
		fprintf(f, "  a NIC's link: its server keeps %u of %u NICs\n", x->nic_left, x->nic_of);
}

static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *fab_plan_json(const struct fab_plan_req *r, const struct fab_plan *p)
{
	static const char *const tier_name[3] = {"nic-leaf", "leaf-spine", "spine-super-spine"};
	json_t *tiers = json_array(), *bom = json_object();
	for (int t = 0; t < p->tiers; t++)
		json_array_append_new(tiers,
				      json_pack("{s:s, s:I, s:f, s:s, s:I}", "between", tier_name[t], "links",
						(json_int_t)p->links[t], "length_m", p->length_m[t], "cable",
						fab_plan_item_names[p->reach[t]], "transceivers",
						(json_int_t)(p->reach[t] >= FAB_PI_SR ? 2 * p->links[t] : 0)));
	for (int i = 0; i < FAB_PI_N; i++)
		if (p->count[i])
			json_object_set_new(bom, fab_plan_item_names[i],
					    json_pack("{s:I, s:f, s:f}", "count", (json_int_t)p->count[i], "usd",
						      p->usd[i], "watts", p->watts[i]));
	const struct fab_plan_failure *x = &p->fail;
	json_t *fail = json_pack("{s:{s:i, s:i, s:f}, s:{s:i, s:i, s:o, s:f}, s:{s:o}, s:{s:i, s:i, s:b}}", "leaf",
				 "servers_cut", (int)x->leaf_servers_cut, "nic_ports_cut", (int)x->leaf_nics_cut,
				 "share", x->leaf_share, "spine", "uplinks_left", (int)x->upper_up_left, "uplinks_of",
				 (int)x->upper_up_of, "oversubscription", real_or_null(x->upper_oversub), "bisection",
				 x->upper_bisection, "leaf_uplink", "oversubscription", real_or_null(x->link_oversub),
				 "nic_link", "nics_left", (int)x->nic_left, "nics_of", (int)x->nic_of,
				 "other_port_left", r->dual_tor);
	if (p->tiers == 3)
		json_object_set_new(fail, "super_spine", json_pack("{s:f}", "bisection", x->core_bisection));
	json_t *sw = json_pack("{s:i, s:i}", "leaves", (int)p->switches[0], "spines", (int)p->switches[1]);
	if (p->tiers == 3)
		json_object_set_new(sw, "super_spines", json_integer(p->switches[2]));
	json_t *o = json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:b, s:b, s:o, s:f, s:f, s:o, s:o, s:f, s:f, s:o}",
			      "schema", "fabscope.plan/1", "tiers", p->tiers, "gpus", (int)r->gpus, "servers",
			      (int)p->servers, "nic_ports", (int)p->nic_ports, "radix", (int)r->radix, "rail_optimized",
			      r->rail_optimized, "dual_tor", r->dual_tor, "switches", sw, "oversubscription",
			      p->oversubscription, "bisection_bps", p->bisection_bps, "links", tiers, "bill", bom,
			      "usd", p->usd_total, "watts", p->watts_total, "failure", fail);
	if (p->tiers == 3) {
		json_object_set_new(o, "pods", json_integer(p->pods));
		json_object_set_new(o, "spine_oversubscription", json_real(p->spine_oversubscription));
	}
	return o;
}
