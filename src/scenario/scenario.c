/*
 * scenario.c - YAML (plus --set overrides) into struct fab_config, by the
 * key tables of keys.c and the value parsers of values.c.
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

#include "../base/tok.h"
#include "scenario.h"
#include "ydom.h"

#define KEYS (fab_config_keys(NULL))

static size_t nkeys(void)
{
	size_t n;
	fab_config_keys(&n);
	return n;
}

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
static const char *suggest(const struct fab_key_def *tab, size_t n, const char *prefix, const char *name, char *buf,
			   size_t len)
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

/* A key the user wrote in the wrong place ("tcp.cc" for "fabric.tcp.cc"):
 * the dotted name from key (its value followed down while it is a mapping
 * of one key), then the one key whose path ends in it, else (by_last_ok)
 * the one whose last part is its last part. */
static const char *suggest_elsewhere(const char *key, const struct ynode *v, bool by_last_ok, char *buf, size_t len)
{
	char dotted[160];
	snprintf(dotted, sizeof dotted, "%s", key);
	for (; v && v->kind == Y_MAP && v->n == 1; v = v->vals[0]) {
		size_t l = strlen(dotted);
		snprintf(dotted + l, sizeof dotted - l, ".%s", v->keys[0]);
	}
	const char *last = strrchr(dotted, '.');
	last = last ? last + 1 : dotted;
	size_t dl = strlen(dotted), ll = strlen(last);
	int by_path = -1, by_last = -1, nlast = 0;
	for (size_t i = 0; i < nkeys(); i++) {
		const char *p = KEYS[i].path;
		size_t pl = strlen(p);
		if (by_path < 0 && pl > dl && p[pl - dl - 1] == '.' && !strcmp(p + pl - dl, dotted))
			by_path = (int)i;
		if (pl > ll && p[pl - ll - 1] == '.' && !strcmp(p + pl - ll, last)) {
			by_last = (int)i;
			nlast++;
		}
	}
	int k = by_path >= 0 ? by_path : nlast == 1 && by_last_ok ? by_last : -1;
	if (k < 0)
		return NULL;
	snprintf(buf, len, "%s", KEYS[k].path);
	return buf;
}

static bool is_section(const char *path)
{
	size_t l = strlen(path);
	for (size_t i = 0; i < nkeys(); i++)
		if (!strncmp(KEYS[i].path, path, l) && KEYS[i].path[l] == '.')
			return true;
	return !strcmp(path, "traffic") || !strcmp(path, "collective") || !strcmp(path, "matrix");
}

static int key_index(const char *path)
{
	for (size_t i = 0; i < nkeys(); i++)
		if (!strcmp(KEYS[i].path, path))
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

static int load_key(struct loader *L, const struct fab_key_def *k, void *base, const char *path, const struct ynode *v)
{
	char w[300], why[256], seqbuf[4096];
	const char *text = scalar_text(v, seqbuf, sizeof seqbuf);
	where(v, w, sizeof w);
	if (!text || (v->kind == Y_SEQ && k->type != K_PRIOMASK && k->type != K_U32LIST))
		return fab_err_set(L->err, FAB_EINVAL, "%s%s: expected a single value, got a %s", w, path,
				   v->kind == Y_MAP ? "mapping" : "list");
	if (fab_config_parse_value(k, base, text, why, sizeof why))
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

/* an item's keys; a nested mapping (a job's model) holds the keys under
 * its name: model: {layers: 96} is model.layers */
static int load_item_keys(struct loader *L, const struct fab_key_def *tab, size_t ntab, void *item,
			  const struct ynode *map, const char *what, const char *prefix)
{
	char w[300], sug[64];
	for (size_t i = 0; i < map->n; i++) {
		char name[128], path[192];
		snprintf(name, sizeof name, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", map->keys[i]);
		snprintf(path, sizeof path, "%s.%s", what, name);
		const struct fab_key_def *k = NULL;
		bool section = false;
		size_t l = strlen(name);
		for (size_t j = 0; j < ntab; j++) {
			if (!strcmp(tab[j].path, name))
				k = &tab[j];
			section |= !strncmp(tab[j].path, name, l) && tab[j].path[l] == '.';
		}
		if (!k && section && map->vals[i]->kind == Y_MAP) {
			if (load_item_keys(L, tab, ntab, item, map->vals[i], what, name))
				return FAB_EINVAL;
			continue;
		}
		if (!k) {
			struct ynode kn = {
				.origin = map->vals[i]->origin, .line = map->key_line[i], .col = map->key_col[i]};
			where(&kn, w, sizeof w);
			const char *s = section ? NULL : suggest(tab, ntab, prefix, map->keys[i], sug, sizeof sug);
			if (section)
				return fab_err_set(L->err, FAB_EINVAL, "%s%s: expected a mapping of %s.* keys", w, path,
						   name);
			return fab_err_set(L->err, FAB_EINVAL, "%s%s: unknown key%s%s%s", w, path,
					   s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
		}
		if (load_key(L, k, item, path, map->vals[i]))
			return FAB_EINVAL;
	}
	return 0;
}

static int load_item(struct loader *L, const struct fab_key_def *(*table)(size_t *n), void *item,
		     const struct ynode *map, const char *what)
{
	size_t ntab;
	const struct fab_key_def *tab = table(&ntab);
	char w[300];
	if (map->kind != Y_MAP) {
		where(map, w, sizeof w);
		return fab_err_set(L->err, FAB_EINVAL, "%s%s: expected a mapping such as {src: 0, dst: 8, bytes: 1MiB}",
				   w, what);
	}
	for (size_t i = 0; i < ntab; i++)
		if (tab[i].def) {
			char why[200];
			fab_config_parse_value(&tab[i], item, tab[i].def, why, sizeof why);
		}
	if (load_item_keys(L, tab, ntab, item, map, what, NULL))
		return FAB_EINVAL;
	for (size_t j = 0; j < ntab; j++)
		if (!tab[j].def && !fab_ydom_get(map, tab[j].path)) {
			where(map, w, sizeof w);
			return fab_err_set(L->err, FAB_EINVAL, "%s%s: missing key '%s'", w, what, tab[j].path);
		}
	return 0;
}

/* what a generator of its kind needs */
static int check_gen(struct loader *L, const struct fab_gen_spec *g, const struct ynode *map, const char *what)
{
	char w[300], why[200];
	const char *need = NULL;
	static const char *const poisson_only[] = {"cdf",         "load",           "duration",
						   "incast_load", "incast_senders", "incast_bytes"};
	if (g->kind != FAB_GEN_POISSON) {
		if (!fab_ydom_get(map, "bytes"))
			need = "missing key 'bytes'";
		for (size_t k = 0; k < FAB_ARRAY_LEN(poisson_only) && !need; k++)
			if (fab_ydom_get(map, poisson_only[k])) {
				snprintf(why, sizeof why,
					 "%s: only for kind poisson (this generator sends bytes per flow)",
					 poisson_only[k]);
				need = why;
			}
	} else if (fab_ydom_get(map, "bytes")) {
		need = "bytes: a poisson generator draws each flow's size from its cdf (incast_bytes sizes its "
		       "incasts)";
	} else if (!g->cdf) {
		need = "a poisson generator needs cdf (websearch, fb_hadoop or a file)";
	} else if (g->load <= 0 && g->incast_load <= 0) {
		need = "a poisson generator needs load (or incast_load) above 0";
	} else if (!g->duration_ps) {
		need = "a poisson generator needs a duration";
	} else if (g->incast_load > 0 && (!g->incast_senders || !g->incast_bytes)) {
		need = "incast_load needs incast_senders and incast_bytes";
	}
	if (!need)
		return 0;
	where(map, w, sizeof w);
	return fab_err_set(L->err, FAB_EINVAL, "%s%s: %s", w, what, need);
}

static int load_list(struct loader *L, const char *path, const struct ynode *seq)
{
	char w[300];
	bool flows = !strcmp(path, "traffic.flows"), jobs = !strcmp(path, "jobs");
	bool faults = !strcmp(path, "faults");
	if (seq->kind != Y_SEQ) {
		where(seq, w, sizeof w);
		return fab_err_set(L->err, FAB_EINVAL, "%s%s: expected a list (items start with '- ')", w, path);
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
			if (load_item(L, fab_config_fault_keys, f, seq->vals[i], what))
				return FAB_EINVAL;
			set_loc(&f->loc, seq->vals[i], what);
		} else if (jobs) {
			struct fab_config *c = L->c;
			c->jobs = fab_xrealloc(c->jobs, c->njobs + 1, sizeof *c->jobs);
			struct fab_job_spec *j = &c->jobs[c->njobs++];
			memset(j, 0, sizeof *j);
			if (load_item(L, fab_config_job_keys, j, seq->vals[i], what))
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
				return fab_err_set(L->err, FAB_EINVAL, "%s%s: a job needs gpus (or a gpu_list)", wh,
						   what);
			}
		} else if (flows) {
			tp->flows = fab_xrealloc(tp->flows, tp->nflows + 1, sizeof *tp->flows);
			struct fab_flow_spec *f = &tp->flows[tp->nflows++];
			memset(f, 0, sizeof *f);
			if (load_item(L, fab_config_flow_keys, f, seq->vals[i], what))
				return FAB_EINVAL;
			set_loc(&f->loc, seq->vals[i], what);
		} else {
			tp->gens = fab_xrealloc(tp->gens, tp->ngens + 1, sizeof *tp->gens);
			struct fab_gen_spec *g = &tp->gens[tp->ngens++];
			memset(g, 0, sizeof *g);
			if (load_item(L, fab_config_gen_keys, g, seq->vals[i], what))
				return FAB_EINVAL;
			set_loc(&g->loc, seq->vals[i], what);
			if (check_gen(L, g, seq->vals[i], what))
				return FAB_EINVAL;
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
			if (load_key(L, &KEYS[ki], L->c, path, v))
				return FAB_EINVAL;
			L->c->loc[ki] = (struct fab_key_loc){v->origin, v->line, v->col, true};
			continue;
		}
		if (!strcmp(path, "traffic.flows") || !strcmp(path, "traffic.generators") || !strcmp(path, "jobs") ||
		    !strcmp(path, "faults")) {
			if (load_list(L, path, v))
				return FAB_EINVAL;
			continue;
		}
		if (is_section(path)) {
			if (v->kind != Y_MAP) {
				where(v, w, sizeof w);
				return fab_err_set(L->err, FAB_EINVAL, "%s%s: expected a section (a mapping)", w, path);
			}
			if (walk(L, v, path))
				return FAB_EINVAL;
			continue;
		}
		struct ynode kn = {.origin = v->origin, .line = map->key_line[i], .col = map->key_col[i]};
		where(&kn, w, sizeof w);
		/* the dotted name elsewhere first ("tcp.cc" is fabric.tcp.cc), then
		 * a near name here, then a key of that last name elsewhere ("cc") */
		const char *s = suggest_elsewhere(map->keys[i], v, false, sug, sizeof sug);
		if (!s)
			s = suggest(KEYS, nkeys(), prefix, map->keys[i], sug, sizeof sug);
		if (!s && !prefix && !strcmp(map->keys[i], "flows"))
			s = "traffic.flows";
		if (!s)
			s = suggest_elsewhere(map->keys[i], v, true, sug, sizeof sug);
		return fab_err_set(L->err, FAB_EINVAL, "%s%s: unknown key%s%s%s", w, path, s ? " (did you mean '" : "",
				   s ? s : "", s ? "'?)" : "");
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
				rc = fab_err_set(err, FAB_EINVAL, "--set %s: '%s' is not an index of the list (0..%zu)",
						 set, part, cur->n ? cur->n - 1 : 0);
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
			rc = fab_err_set(err, FAB_EINVAL, "--set %s: '%s' is inside a value, not a section", set, part);
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
					 "--set %s: '%s' is not an index of the list (there is no list '%s')", set,
					 next, part);
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

/* A family's preset sets the keys the scenario did not give. */
static int apply_preset(struct loader *L, const struct fab_param_family *fam)
{
	size_t n;
	const struct fab_preset_value *pv = fam->preset(fab_cc_params_rw(&L->c->fabric.cc, fam), &n);
	for (size_t i = 0; i < n; i++) {
		int ki = key_index(pv[i].path);
		char why[200] = "no such key";
		if (ki >= 0 && L->c->loc[ki].given)
			continue; /* what the scenario says wins */
		if (ki < 0 || fab_config_parse_value(&KEYS[ki], L->c, pv[i].value, why, sizeof why))
			return fab_err_set(L->err, FAB_EINTERNAL, "preset value %s=%s: %s", pv[i].path, pv[i].value,
					   why);
	}
	return 0;
}

static int apply_presets(struct loader *L)
{
	for (size_t f = 0; f < fab_cc_family_count(); f++) {
		const struct fab_param_family *fam = fab_cc_family_at(f);
		if (fam->preset && apply_preset(L, fam))
			return -1;
	}
	return 0;
}

/* a key's value as text (the key exists: the table's own) */
static const char *key_text(const struct fab_config *c, const char *path, char *buf, size_t len)
{
	int ki = key_index(path);
	FAB_ASSERT(ki >= 0);
	fab_config_value_text(&KEYS[ki], c, buf, len);
	return buf;
}

static void key_set(struct fab_config *c, const char *path, const char *text)
{
	char why[200];
	int ki = key_index(path);
	FAB_ASSERT(ki >= 0);
	int rc = fab_config_parse_value(&KEYS[ki], c, text, why, sizeof why);
	FAB_ASSERT(rc == 0);
	(void)rc;
}

/* The congestion control of each transport's queue pairs, from the
 * transports' keys: TCP's fabric.tcp.cc names a model; RoCE and
 * InfiniBand run DCQCN, the variant fabric.dcqcn.variant names, while
 * fabric.dcqcn.enabled (on a transport whose congestion control is opt-in,
 * InfiniBand's FECN/BECN as DCQCN's marking and CNPs, off unless it is
 * given), else none. */
static void choose_cc(struct fab_config *c)
{
	char tcp[64], rdma[64], v[64];
	if (fab_transport_at(c->fabric.transport)->flags & FAB_TP_CC_OPT_IN &&
	    !fab_config_given(c, "fabric.dcqcn.enabled"))
		key_set(c, "fabric.dcqcn.enabled", "false");
	key_text(c, "fabric.tcp.cc", tcp, sizeof tcp);
	if (strcmp(key_text(c, "fabric.dcqcn.enabled", v, sizeof v), "true"))
		snprintf(rdma, sizeof rdma, "none");
	else
		snprintf(rdma, sizeof rdma, "dcqcn%s",
			 strcmp(key_text(c, "fabric.dcqcn.variant", v, sizeof v), "firmware") ? "" : "-firmware");
	for (int t = 0; t < FAB_TRANSPORT_COUNT; t++) {
		/* (each legacy key's models run on their transports alone) */
		const struct fab_cc_ops *ops = fab_cc_find(tcp);
		if (!(ops->transports & 1u << t))
			ops = fab_cc_find(rdma);
		if (!(ops->transports & 1u << t))
			ops = &fab_cc_none;
		c->fabric.cc.model[t] = fab_cc_index(ops);
	}
}

/* fabric.cc names the model of the fabric's queue pairs: one of its
 * transport's; fabric.dcqcn.enabled and variant then say what runs */
static int choose_named_cc(struct loader *L)
{
	struct fab_config *c = L->c;
	if (!c->cc_choice)
		return 0;
	const struct fab_cc_ops *ops = fab_cc_at((size_t)c->cc_choice - 1);
	if (!(ops->transports & (1u << c->fabric.transport))) {
		char w[300], tr[32], on[64] = "";
		fab_config_where(c, "fabric.cc", w, sizeof w);
		for (int t = 0; t < FAB_TRANSPORT_COUNT; t++)
			if (ops->transports & (1u << t))
				snprintf(on + strlen(on), sizeof on - strlen(on), "%s%s", *on ? ", " : "",
					 fab_transport_at(t)->name);
		return fab_err_set(L->err, FAB_EINVAL,
				   "%sfabric.cc: %s does not run on fabric.transport %s (it runs on %s)", w, ops->name,
				   key_text(c, "fabric.transport", tr, sizeof tr), on);
	}
	c->fabric.cc.model[c->fabric.transport] = c->cc_choice - 1;
	if (fab_cc_find("dcqcn")->transports & 1u << c->fabric.transport) {
		bool dcqcn = !strncmp(ops->name, "dcqcn", 5);
		key_set(c, "fabric.dcqcn.enabled", dcqcn ? "true" : "false");
		if (dcqcn)
			key_set(c, "fabric.dcqcn.variant", strcmp(ops->name, "dcqcn") ? "firmware" : "paper");
	}
	return 0;
}

/* What the transport and its congestion control want where the scenario
 * does not say: TCP runs over lossy Ethernet (no PFC unless asked),
 * InfiniBand marks ECN while its congestion control runs and has no
 * Ethernet preamble or gap, and a congestion control such as DCTCP wants
 * its switches to mark at one threshold K. */
static int transport_defaults(struct loader *L)
{
	struct fab_config *c = L->c;
	choose_cc(c);
	if (choose_named_cc(L))
		return -1;
	const struct fab_transport_info *tp = fab_transport_at(c->fabric.transport);
	const struct fab_cc_ops *cc = fab_cc_of(&c->fabric.cc, c->fabric.transport);
	if (cc->wants & FAB_CC_WANTS_STEP && !fab_config_given(c, "fabric.ecn.kmin") &&
	    !fab_config_given(c, "fabric.ecn.kmax"))
		c->fabric.ecn.kmax_bytes = c->fabric.ecn.kmin_bytes;
	if (tp->flags & FAB_TP_ECN_WITH_CC && !fab_config_given(c, "fabric.ecn.enabled"))
		c->fabric.ecn.enabled = cc != &fab_cc_none;
	if (!fab_config_given(c, "fabric.wire.preamble_ifg"))
		c->fabric.wire.preamble_ifg = tp->wire.preamble_ifg;
	if (tp->flags & FAB_TP_LOSSY && !fab_config_given(c, "fabric.pfc.enabled"))
		c->fabric.pfc.enabled = false;
	return 0;
}

static int cross_checks(struct loader *L)
{
	struct fab_config *c = L->c;
	char w[300];
	if (c->fabric.ecn.kmin_bytes > c->fabric.ecn.kmax_bytes) {
		fab_config_where(c, "fabric.ecn.kmin", w, sizeof w);
		return fab_err_set(L->err, FAB_EINVAL, "%sfabric.ecn.kmin: must not exceed kmax", w);
	}
	const struct fab_transport_info *tp = fab_transport_at(c->fabric.transport);
	if (tp->max_mtu && c->fabric.mtu > tp->max_mtu) {
		fab_config_where(c, "fabric.mtu", w, sizeof w);
		return fab_err_set(L->err, FAB_EINVAL, "%sfabric.mtu: %s's MTU is at most %u, got %u", w, tp->label,
				   tp->max_mtu, c->fabric.mtu);
	}
	if (c->fabric.pfc.xon_bytes > c->fabric.pfc.xoff_bytes) {
		fab_config_where(c, "fabric.pfc.xon", w, sizeof w);
		return fab_err_set(L->err, FAB_EINVAL, "%sfabric.pfc.xon: must not exceed xoff", w);
	}
	if (c->fabric.threads > 1) {
		/* a split run carries frames between partitions; what acts across
		 * the fabric at no delay stays on one thread */
		const char *what = c->njobs                   ? "jobs"
			: c->nfaults                          ? "faults"
			: c->fabric.series_interval_ps        ? "time series (fabric.series_interval)"
			: c->fabric.engine == FAB_ENGINE_FLOW ? "the flow engine"
							      : NULL;
		if (what) {
			fab_config_where(c, "run.threads", w, sizeof w);
			return fab_err_set(L->err, FAB_EINVAL,
					   "%srun.threads: %s run on one thread (above 1: the packet engine's flows)",
					   w, what);
		}
	}
	/* transports of flows, generators and jobs beside the fabric's */
	for (size_t i = 0; i < c->traffic.nflows + c->traffic.ngens + c->njobs; i++) {
		const struct fab_src_loc *loc;
		int tr;
		if (i < c->traffic.nflows) {
			tr = c->traffic.flows[i].transport;
			loc = &c->traffic.flows[i].loc;
		} else if (i < c->traffic.nflows + c->traffic.ngens) {
			tr = c->traffic.gens[i - c->traffic.nflows].transport;
			loc = &c->traffic.gens[i - c->traffic.nflows].loc;
		} else {
			tr = c->jobs[i - c->traffic.nflows - c->traffic.ngens].transport;
			loc = &c->jobs[i - c->traffic.nflows - c->traffic.ngens].loc;
		}
		int kind = tr - 1, fab = c->fabric.transport;
		const char *why = NULL;
		if (tr && fab_transport_at(kind)->link != tp->link)
			why = "InfiniBand and Ethernet transports cannot share one fabric (set fabric.transport)";
		else if (tr && kind != fab && c->fabric.engine == FAB_ENGINE_FLOW)
			why = "the flow engine runs one transport per fabric (fabric.transport); use engine: packet";
		if (why)
			return fab_err_set(L->err, FAB_EINVAL, "%s:%u:%u: %s.transport: %s",
					   loc->origin ? loc->origin : "?", loc->line, loc->col, loc->what, why);
	}
	if ((c->topo.kind == FAB_TOPO_FILE || c->topo.kind == FAB_TOPO_NS3) && !c->topo_file) {
		fab_config_where(c, "topology.kind", w, sizeof w);
		return fab_err_set(L->err, FAB_EINVAL, "%stopology.kind: kind %s needs topology.file", w,
				   c->topo.kind == FAB_TOPO_NS3 ? "ns3" : "file");
	}
	return 0;
}

struct fab_config *fab_config_parse(const char *text, size_t len, const char *origin, const char *base_dir,
				    const char *const *sets, size_t nsets, struct fab_err *err)
{
	struct fab_config *c = fab_xcalloc(1, sizeof *c);
	c->origin = fab_xstrdup(origin);
	c->loc = fab_xcalloc(nkeys(), sizeof *c->loc);
	struct loader L = {c, err, base_dir};
	for (size_t i = 0; i < nkeys(); i++) {
		char why[200];
		if (fab_config_parse_value(&KEYS[i], c, KEYS[i].def, why, sizeof why)) {
			fab_err_set(err, FAB_EINTERNAL, "default of %s: %s", KEYS[i].path, why);
			goto fail;
		}
	}
	struct ynode *root = fab_ydom_parse(
		text, len, c->origin, "a scenario is a mapping with sections topology, fabric, traffic, run", err);
	if (!root || fab_scenario_rebase(&root, base_dir, &c->base_origin, err)) {
		fab_ydom_free(root);
		goto fail;
	}
	for (size_t i = 0; i < nsets; i++)
		if (apply_set(root, sets[i], err)) {
			fab_ydom_free(root);
			goto fail;
		}
	int rc = walk(&L, root, NULL);
	/* locations point at origins: keep the names alive past the tree */
	fab_ydom_free(root);
	if (rc || apply_presets(&L))
		goto fail;
	if (transport_defaults(&L) || cross_checks(&L))
		goto fail;
	/* resolve relative paths against the scenario's folder */
	char *tf = fab_scenario_path(base_dir, c->topo_file);
	free(c->topo_file);
	c->topo_file = tf;
	c->topo.file = c->topo_file;
	char *fc = fab_scenario_path(base_dir, c->traffic.flows_csv);
	free(c->traffic.flows_csv);
	c->traffic.flows_csv = fc;
	fc = fab_scenario_path(base_dir, c->traffic.flows_ns3);
	free(c->traffic.flows_ns3);
	c->traffic.flows_ns3 = fc;
	for (size_t i = 0; i < c->traffic.ngens; i++) {
		char **cdf = &c->traffic.gens[i].cdf;
		if (*cdf && strcmp(*cdf, "websearch") && strcmp(*cdf, "fb_hadoop")) {
			fc = fab_scenario_path(base_dir, *cdf);
			free(*cdf);
			*cdf = fc;
		}
	}
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

int fab_config_check_sets(const char *const *sets, size_t nsets, struct fab_err *err)
{
	struct fab_config *c = fab_xcalloc(1, sizeof *c);
	c->origin = fab_xstrdup("--set");
	c->loc = fab_xcalloc(nkeys(), sizeof *c->loc);
	struct loader L = {c, err, NULL};
	int rc = 0;
	for (size_t i = 0; i < nkeys() && !rc; i++) {
		char why[200];
		if (fab_config_parse_value(&KEYS[i], c, KEYS[i].def, why, sizeof why))
			rc = fab_err_set(err, FAB_EINTERNAL, "default of %s: %s", KEYS[i].path, why);
	}
	struct ynode *root = rc ? NULL : fab_ydom_parse("", 0, c->origin, "", err);
	if (!rc && !root)
		rc = FAB_EINVAL;
	for (size_t i = 0; i < nsets && !rc; i++)
		rc = apply_set(root, sets[i], err);
	if (!rc)
		rc = walk(&L, root, NULL);
	fab_ydom_free(root);
	fab_config_free(c);
	return rc;
}

struct fab_config *fab_config_load(const char *path, const char *const *sets, size_t nsets, struct fab_err *err)
{
	if (!path)
		return fab_config_parse(fab_default_scenario, strlen(fab_default_scenario), "<built-in>", NULL, sets,
					nsets, err);
	char *buf;
	size_t len;
	if (fab_read_text(path, "scenario", FAB_SCENARIO_MAX_BYTES, true, &buf, &len, err))
		return NULL;
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
	free(c->base_origin);
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
