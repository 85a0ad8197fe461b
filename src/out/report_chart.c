/*
 * report_chart.c - the HTML report's pictures, inline SVG: line charts
 * (x on a log2 or linear scale, y linear from 0) and the series drawn
 * with them (PAUSE, ECN and drops over time; FCT slowdown by flow size),
 * the topology with every link coloured by its utilisation, and the
 * horizontal bars of plan --compare.  Colours are Okabe and Ito's (lines)
 * and a viridis ramp (utilisation, the heatmap), both readable with
 * colour-blindness.
 */
#include <math.h>
#include <string.h>

#include "report_int.h"

const char *const rep_colours[8] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
				    "#E69F00", "#56B4E9", "#000000", "#F0E442"};

/* viridis at t in [0, 1], as 8 stops interpolated */
void rep_viridis(double t, char out[8])
{
	static const int stops[9][3] = {{68, 1, 84},    {71, 44, 122}, {59, 81, 139},  {44, 113, 142}, {33, 144, 141},
					{39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37}};
	t = fmin(fmax(t, 0), 1) * 8;
	int i = (int)t;
	if (i >= 8)
		i = 7;
	double u = t - i;
	int rgb[3];
	for (int k = 0; k < 3; k++)
		rgb[k] = (int)lround(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * u);
	snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* ---- a line chart: x on a log2 or linear scale, y linear from 0 ---- */

#define CW 880
#define CH 300
#define ML 70
#define MB 50
#define MT 20
#define MR 20

/* a value a chart can place: finite, and small enough that its axis's
 * arithmetic stays finite */
static bool drawable(double v)
{
	return isfinite(v) && fabs(v) < 1e300;
}

static double tick_step(double span)
{
	double p = pow(10, floor(log10(span / 5))), m = span / 5 / p;
	return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : 5);
}

void rep_bytes(FILE *f, double b)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	double v = b;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	fprintf(f, "<span title=\"%.0f bytes\">%.*f %s</span>", b, u ? (v < 10 ? 2 : v < 100 ? 1 : 0) : 0, v, unit[u]);
}

/* a pixel column of a decimated series: its first, lowest, highest and
 * last point (screen coordinates; y grows down) */
struct column {
	bool open, any;
	int x;
	double p[4][2]; /* first, lowest, highest, last */
	size_t order[2];
	size_t seen;
};

static void column_flush(FILE *f, struct column *c)
{
	if (!c->open)
		return;
	/* first, then the lowest and highest in the order they came, last */
	int lo = 1, hi = 2;
	int mid[2] = {c->order[0] <= c->order[1] ? lo : hi, c->order[0] <= c->order[1] ? hi : lo};
	int seq[4] = {0, mid[0], mid[1], 3};
	for (int k = 0; k < 4; k++) {
		if (k && c->p[seq[k]][0] == c->p[seq[k - 1]][0] && c->p[seq[k]][1] == c->p[seq[k - 1]][1])
			continue;
		fprintf(f, "%s%.1f,%.1f", c->any ? " " : "", c->p[seq[k]][0], c->p[seq[k]][1]);
		c->any = true;
	}
	c->open = false;
}

static void column_add(FILE *f, struct column *c, double x, double y)
{
	int px = (int)floor(x);
	if (c->open && px != c->x)
		column_flush(f, c);
	if (!c->open) {
		c->open = true;
		c->x = px;
		c->seen = 0;
		for (int k = 0; k < 4; k++)
			c->p[k][0] = x, c->p[k][1] = y;
		c->order[0] = c->order[1] = 0;
	}
	c->seen++;
	if (y > c->p[1][1]) { /* lower on the page: the lowest value is the highest y */
		c->p[1][0] = x, c->p[1][1] = y;
		c->order[0] = c->seen;
	}
	if (y < c->p[2][1]) {
		c->p[2][0] = x, c->p[2][1] = y;
		c->order[1] = c->seen;
	}
	c->p[3][0] = x, c->p[3][1] = y;
}

void rep_chart(FILE *f, const char *title, const char *xlabel, const char *ylabel, bool logx, const struct series *s,
	       size_t ns)
{
	bool decimated = false;
	/* the axes from the points that are numbers of a drawable size (a
	 * point past 1e300 or not finite is left out), and their ticks
	 * counted, at most 50 an axis: no value, however large or however
	 * close to another, can stall them */
	double x0 = 1e300, x1 = -1e300, y1 = 0;
	for (size_t k = 0; k < ns; k++)
		for (size_t i = 0; i < s[k].n; i++) {
			if (!drawable(s[k].x[i]) || !drawable(s[k].y[i]))
				continue;
			double x = logx ? log2(fmax(s[k].x[i], 1)) : s[k].x[i];
			x0 = fmin(x0, x);
			x1 = fmax(x1, x);
			y1 = fmax(y1, s[k].y[i]);
		}
	if (x0 > x1)
		x0 = 0, x1 = 1;
	if (x1 <= x0)
		x1 = x0 + 1;
	if (y1 <= 0)
		y1 = 1;
	double ys = tick_step(y1);
	y1 = ceil(y1 / ys) * ys;
	int pw = CW - ML - MR, ph = CH - MT - MB;
#define PX(x) (ML + ((x)-x0) / (x1 - x0) * pw)
#define PY(y) (MT + ph - (y) / y1 * ph)
	/* the legend below the plot, a line a series, never over the data */
	int h = CH + 16 * (int)ns + (ns ? 6 : 0);
	fprintf(f, "<figure><svg class=\"chart\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">\n", CW,
		h, CW, h);
	fprintf(f, "<title>");
	rep_esc(f, title);
	fprintf(f, "</title>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"plot\"/>\n", ML, MT, pw, ph);
	for (int t = 0; t <= 50 && t * ys <= y1 + ys / 2; t++)
		fprintf(f,
			"<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/><text x=\"%d\" y=\"%.1f\" "
			"class=\"tick\" text-anchor=\"end\">%g</text>\n",
			ML, ML + pw, PY(t * ys), PY(t * ys), ML - 6, PY(t * ys) + 4, t * ys);
	double xs = logx ? fmax(1, ceil((x1 - x0) / 8)) : tick_step(x1 - x0);
	double xt0 = logx ? ceil(x0) : ceil(x0 / xs) * xs;
	for (int t = 0; t <= 50 && xt0 + t * xs <= x1 + 1e-9; t++) {
		double x = xt0 + t * xs;
		char lab[32];
		if (logx) {
			double b = pow(2, x);
			if (b >= 1 << 30)
				snprintf(lab, sizeof lab, "%gG", b / (1 << 30));
			else if (b >= 1 << 20)
				snprintf(lab, sizeof lab, "%gM", b / (1 << 20));
			else if (b >= 1 << 10)
				snprintf(lab, sizeof lab, "%gK", b / (1 << 10));
			else
				snprintf(lab, sizeof lab, "%g", b);
		} else {
			snprintf(lab, sizeof lab, "%g", x);
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"tick\" text-anchor=\"middle\">%s</text>\n", PX(x),
			MT + ph + 16, lab);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"axis\" text-anchor=\"middle\">", ML + pw / 2, CH - 12);
	rep_esc(f, xlabel);
	fprintf(f,
		"</text>\n<text x=\"14\" y=\"%d\" class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 14 %d)\">",
		MT + ph / 2, MT + ph / 2);
	rep_esc(f, ylabel);
	fputs("</text>\n", f);
	for (size_t k = 0; k < ns; k++) {
		/* a dash a series as well as a colour: lines that overlap (a p95
		 * on its p99) both stay visible */
		static const char *const dash[4] = {"", " stroke-dasharray=\"8 4\"", " stroke-dasharray=\"2 3\"",
						    " stroke-dasharray=\"10 3 2 3\""};
		const char *col = rep_colours[k % 8], *dk = dash[k % 4];
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", col, dk);
		if (s[k].n > REP_CHART_POINTS) {
			/* a long series (every flow's FCT, a queue sampled a million
			 * times): for each pixel column its first, lowest, highest
			 * and last point, in order: the same picture, a bounded page */
			decimated |= 1;
			struct column col_ = {0};
			for (size_t i = 0; i < s[k].n; i++)
				if (drawable(s[k].x[i]) && drawable(s[k].y[i]))
					column_add(f, &col_, PX(logx ? log2(fmax(s[k].x[i], 1)) : s[k].x[i]),
						   PY(s[k].y[i]));
			column_flush(f, &col_);
		} else {
			for (size_t i = 0, first = 1; i < s[k].n; i++)
				if (drawable(s[k].x[i]) && drawable(s[k].y[i])) {
					fprintf(f, "%s%.1f,%.1f", first ? "" : " ",
						PX(logx ? log2(fmax(s[k].x[i], 1)) : s[k].x[i]), PY(s[k].y[i]));
					first = 0;
				}
		}
		fputs("\"/>\n", f);
		for (size_t i = 0; i < s[k].n && s[k].n <= 64; i++) {
			if (!drawable(s[k].x[i]) || !drawable(s[k].y[i]))
				continue;
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>",
				PX(logx ? log2(fmax(s[k].x[i], 1)) : s[k].x[i]), PY(s[k].y[i]), col);
			rep_esc(f, s[k].label);
			fprintf(f, ": %g, %g</title></circle>\n", s[k].x[i], s[k].y[i]);
		}
		fprintf(f,
			"<line x1=\"%d\" x2=\"%d\" y1=\"%zu\" y2=\"%zu\" stroke=\"%s\" stroke-width=\"2\"%s class=\"legend\"/><text "
			"x=\"%d\" y=\"%zu\" class=\"tick legend\">",
			ML, ML + 24, CH + 3 + 16 * k, CH + 3 + 16 * k, col, dk, ML + 30, CH + 6 + 16 * k);
		rep_esc(f, s[k].label);
		fputs("</text>\n", f);
	}
#undef PX
#undef PY
	fputs("</svg><figcaption>", f);
	rep_esc(f, title);
	if (decimated)
		fprintf(f,
			" (a series of more than %d points drawn by each pixel column's first, lowest, highest and "
			"last point)",
			REP_CHART_POINTS);
	fputs("</figcaption></figure>\n", f);
}

/* PAUSE frames sent, ECN marks and drops per interval, summed over the
 * switch ports of the time series */
void rep_pause_ecn_series(FILE *f, const json_t *ser)
{
	size_t cap = json_array_size(ser), m = 0, i;
	double *t = fab_xcalloc(cap, sizeof *t), *v[3];
	static const char *const keys[] = {"pause_tx", "ecn_marks", "drops"};
	for (int k = 0; k < 3; k++)
		v[k] = fab_xcalloc(cap, sizeof *v[k]);
	const json_t *x;
	json_array_foreach(ser, i, x)
	{
		double ti = rep_jnum(x, "t_ps") / 1e6;
		if (!m || t[m - 1] != ti) /* rows come by time, then port */
			t[m++] = ti;
		for (int k = 0; k < 3; k++)
			v[k][m - 1] += rep_jnum(x, keys[k]);
	}
	struct series s[3] = {{"PAUSE frames sent", t, v[0], m}, {"ECN marks", t, v[1], m}, {"drops", t, v[2], m}};
	rep_chart(f, "PAUSE frames sent, ECN marks and drops per interval, all switch ports", "time (us)",
		  "per interval", false, s, 3);
	free(t);
	for (int k = 0; k < 3; k++)
		free(v[k]);
}

/* FCT slowdown by flow size (HPCC's bins): median, p95 and p99 */
void rep_slowdown_chart(FILE *f, const json_t *sd)
{
	const json_t *bins = json_object_get(sd, "bins"), *x;
	size_t n = json_array_size(bins), i;
	if (!n)
		return;
	double *b = fab_xcalloc(n, sizeof *b), *q[3];
	static const char *const keys[] = {"p50", "p95", "p99"};
	for (int k = 0; k < 3; k++)
		q[k] = fab_xcalloc(n, sizeof *q[k]);
	json_array_foreach(bins, i, x)
	{
		b[i] = 100.0 * (double)(i + 1) / (double)n; /* bins are equal shares of the flows, by size */
		for (int k = 0; k < 3; k++)
			q[k][i] = rep_jnum(x, keys[k]);
	}
	struct series s[3] = {{"median", b, q[0], n}, {"p95", b, q[1], n}, {"p99", b, q[2], n}};
	rep_chart(f,
		  "FCT slowdown (FCT over the flow's FCT alone) by flow size: flows sorted by size in bins of equal "
		  "count (each bin's sizes: slowdown in the result document)",
		  "flows by size (percentile, the bin's upper end)", "slowdown", false, s, 3);
	free(b);
	for (int k = 0; k < 3; k++)
		free(q[k]);
}

/* ---- the topology: every node in its tier, every link coloured by its
 * busier direction's utilisation, marked where it dropped, paused or
 * marked ECN ---- */

#define TOPO_MAX_NODES 1024
#define TOPO_MAX_LINKS 2048 /* drawn up to this many (a quadratic pairing) */

struct tnode {
	const char *name;
	int level;       /* 0: NICs, then hops away from them */
	int slot;        /* order within its level */
	double max_rate; /* of its ports, bit/s */
};

/* the suspect (its index) that names the link between a and b, or -1 */
static int link_suspect(const struct fab_diagnosis *d, const char *a, const char *b)
{
	char t1[200], t2[200];
	snprintf(t1, sizeof t1, "link %s <-> %s", a, b);
	snprintf(t2, sizeof t2, "link %s <-> %s", b, a);
	for (int k = 0; k < d->n; k++)
		if (!strcmp(d->s[k].kind, "link") && (!strcmp(d->s[k].target, t1) || !strcmp(d->s[k].target, t2)))
			return k;
	return -1;
}

static int tnode_find(struct tnode *v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return i;
	return -1;
}

/* the topology's nodes, switches named where a tier has room, and each
 * tier named: its switches' name without the number (leaf, spine, agg,
 * core), above its row; the NICs below theirs */
static void topo_nodes(FILE *f, const struct tnode *v, int nv, const int *count, int levels, int W, int rowh)
{
#define NX(k) (30 + (count[v[k].level] > 1 ? (double)v[k].slot * (W - 60) / (count[v[k].level] - 1) : (W - 60) / 2.0))
#define NY(k) (30 + (double)(levels - 1 - v[k].level) * rowh)
	for (int k = 0; k < nv; k++) {
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" class=\"node\"><title>", NX(k), NY(k),
			v[k].level ? "5" : "2.5");
		rep_esc(f, v[k].name);
		fputs("</title></circle>\n", f);
		if (v[k].level && count[v[k].level] <= 32) {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick nodename\" text-anchor=\"middle\">", NX(k),
				NY(k) + 16);
			rep_esc(f, v[k].name);
			fputs("</text>\n", f);
		}
	}
	for (int l = 0; l < levels; l++) {
		int k = 0;
		while (k < nv && v[k].level != l)
			k++;
		if (k == nv)
			continue;
		char tier[32];
		size_t n = strcspn(v[k].name, "0123456789.");
		snprintf(tier, sizeof tier, "%.*s", (int)FAB_MIN(n, sizeof tier - 1), v[k].name);
		fprintf(f, "<text x=\"30\" y=\"%.1f\" class=\"axis tier\">", l ? NY(k) - 12 : NY(k) + 18);
		if (l)
			rep_esc(f, *tier ? tier : "switches");
		else
			fputs("NICs", f);
		fprintf(f, " (%d)</text>\n", count[l]);
	}
#undef NX
#undef NY
}

void rep_topology_map(FILE *f, const json_t *ports, const struct fab_diagnosis *d)
{
	size_t np = json_array_size(ports), i;
	const json_t *x;
	if (!np || np > 2 * TOPO_MAX_LINKS) {
		if (np)
			fprintf(f, "<p>The topology has %zu ports: too many to draw; see the ports table.</p>\n", np);
		return;
	}
	struct tnode *v = fab_xcalloc(TOPO_MAX_NODES, sizeof *v);
	int nv = 0;
	int *a = fab_xcalloc(np, sizeof *a), *b = fab_xcalloc(np, sizeof *b);
	json_array_foreach(ports, i, x)
	{
		const char *ends[2] = {rep_jstr(x, "node"), rep_jstr(x, "peer")};
		int *ix[2] = {&a[i], &b[i]};
		for (int e = 0; e < 2; e++) {
			int k = tnode_find(v, nv, ends[e]);
			if (k < 0 && nv < TOPO_MAX_NODES) {
				k = nv++;
				v[k] = (struct tnode){ends[e], strstr(ends[e], ".nic") ? 0 : -1, 0, 0};
			}
			*ix[e] = k;
		}
		if (a[i] >= 0)
			v[a[i]].max_rate = FAB_MAX(v[a[i]].max_rate, rep_jnum(x, "rate_bps"));
	}
	if (nv >= TOPO_MAX_NODES) {
		fputs("<p>Too many nodes to draw the topology; see the ports table.</p>\n", f);
		goto out;
	}
	/* levels: hops from the NICs */
	int top = 0;
	for (bool changed = true; changed;) {
		changed = false;
		for (i = 0; i < np; i++) {
			if (a[i] < 0 || b[i] < 0)
				continue;
			if (v[a[i]].level >= 0 && v[b[i]].level < 0) {
				v[b[i]].level = v[a[i]].level + 1;
				top = FAB_MAX(top, v[b[i]].level);
				changed = true;
			}
		}
	}
	int count[16] = {0}, levels = FAB_MIN(top + 1, 16);
	for (int k = 0; k < nv; k++) {
		if (v[k].level < 0 || v[k].level >= levels)
			v[k].level = levels - 1;
		v[k].slot = count[v[k].level]++;
	}
	const int W = 1000, rowh = 110, H = 30 + rowh * (levels - 1) + 70;
	fprintf(f,
		"<h3>Topology</h3><figure><svg class=\"topo\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
		"role=\"img\"><title>the topology: links coloured by utilisation</title>\n",
		W, H, W, H);
#define NX(k) (30 + (count[v[k].level] > 1 ? (double)v[k].slot * (W - 60) / (count[v[k].level] - 1) : (W - 60) / 2.0))
#define NY(k) (30 + (double)(levels - 1 - v[k].level) * rowh)
	/* links: each drawn once, from the port that names the lower level */
	for (i = 0; i < np; i++) {
		if (a[i] < 0 || b[i] < 0 || v[a[i]].level > v[b[i]].level ||
		    (v[a[i]].level == v[b[i]].level && a[i] > b[i]))
			continue;
		/* q: the same link's port at the other end */
		const json_t *p = json_array_get(ports, i), *q = NULL;
		for (size_t j = 0; j < np && !q; j++)
			if (a[j] == b[i] && b[j] == a[i] &&
			    rep_jnum(json_array_get(ports, j), "port") == rep_jnum(p, "peer_port"))
				q = json_array_get(ports, j);
		double u = rep_jnum(p, "utilization"), uq = q ? rep_jnum(q, "utilization") : 0;
		double drops = rep_jnum(p, "drops") + (q ? rep_jnum(q, "drops") : 0);
		double pause = rep_jnum(p, "pause_tx") + (q ? rep_jnum(q, "pause_tx") : 0);
		double ecn = rep_jnum(p, "ecn_marks") + (q ? rep_jnum(q, "ecn_marks") : 0);
		double errs = rep_jnum(p, "rx_errors") + (q ? rep_jnum(q, "rx_errors") : 0);
		char col[8];
		rep_viridis(FAB_MIN(1.0, FAB_MAX(u, uq)), col);
		double x1 = NX(a[i]), y1 = NY(a[i]), x2 = NX(b[i]), y2 = NY(b[i]);
		/* a link diagnose names: outlined, with its rank, where this run
		 * shows it too (lost frames, or slower than its node's other
		 * links): the diagnosis covers every document given */
		bool odd = drops + errs > 0 || rep_jnum(p, "rate_bps") < v[a[i]].max_rate;
		int k = odd ? link_suspect(d, v[a[i]].name, v[b[i]].name) : -1;
		if (k >= 0) {
			fprintf(f,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"suspect-link\"><title>suspect %d: "
				"",
				x1, y1, x2, y2, k + 1);
			rep_esc(f, d->s[k].target);
			fprintf(f, "</title></line><text x=\"%.1f\" y=\"%.1f\" class=\"axis\">suspect %d</text>\n",
				(x1 + x2) / 2 + 8, (y1 + y2) / 2 + 30, k + 1);
		}
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"%s>",
			x1, y1, x2, y2, col, drops + errs > 0 ? "4" : "2",
			drops + errs > 0 ? " stroke-dasharray=\"6 3\" class=\"lossy\"" : "");
		fputs("<title>", f);
		rep_esc(f, v[a[i]].name);
		fputs(" - ", f);
		rep_esc(f, v[b[i]].name);
		fprintf(f,
			": utilisation %.1f%% up, %.1f%% down; drops %.0f, bad frames %.0f, PAUSE %.0f, ECN %.0f</title>"
			"</line>\n",
			u * 100, uq * 100, drops, errs, pause, ecn);
		/* marks mid-link, but near the NIC on a NIC's link: the NICs are
		 * spread along their row, where mid-links crowd into a bar; there
		 * the marks shrink to the NICs' spacing (8 px apart at 128 NICs,
		 * 0.8 of it left at a fifth of the way up), the ECN mark above
		 * the PAUSE mark, so that neighbours never touch */
		bool nic = !v[a[i]].level;
		double at = nic ? 0.2 : 0.5, mx = x1 + (x2 - x1) * at, my = y1 + (y2 - y1) * at;
		double sp = count[0] > 1 ? (W - 60.0) / (count[0] - 1) * (1 - at) : W;
		double sz = nic ? FAB_MIN(7.0, FAB_MAX(1.5, sp * 0.75)) : 7;
		if (pause > 0)
			fprintf(f,
				"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"pause\"><title>PAUSE "
				"%.0f</title></rect>\n",
				mx - sz / 2, my - sz / 2, sz, sz, pause);
		if (ecn > 0)
			fprintf(f,
				"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" class=\"ecn\"><title>ECN %.0f</title></circle>\n",
				nic ? mx : mx + 7.5, nic ? my - sz - 1 : my, nic ? sz * 3 / 7 : 3, ecn);
	}
	topo_nodes(f, v, nv, count, levels, W, rowh);
	/* legend: the scale, and the marks */
	int ly = H - 30;
	for (int s = 0; s < 50; s++) {
		char col[8];
		rep_viridis(s / 49.0, col);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"4\" height=\"10\" fill=\"%s\"/>", 30 + 4 * s, ly, col);
	}
	fprintf(f,
		"\n<text x=\"30\" y=\"%d\" class=\"tick\">0%%</text><text x=\"230\" y=\"%d\" class=\"tick\" "
		"text-anchor=\"end\">100%%</text><text x=\"240\" y=\"%d\" class=\"tick\">utilisation (the busier "
		"direction)</text>\n<line x1=\"480\" y1=\"%d\" x2=\"510\" y2=\"%d\" stroke=\"#888\" stroke-width=\"4\" "
		"stroke-dasharray=\"6 3\"/><text x=\"516\" y=\"%d\" class=\"tick\">drops or bad frames</text>"
		"<rect x=\"650\" y=\"%d\" width=\"7\" height=\"7\" class=\"pause\"/><text x=\"662\" y=\"%d\" "
		"class=\"tick\">PAUSE sent</text><circle cx=\"760\" cy=\"%d\" r=\"3\" class=\"ecn\"/><text x=\"768\" "
		"y=\"%d\" class=\"tick\">ECN marked</text>\n",
		ly + 22, ly + 22, ly + 9, ly + 5, ly + 5, ly + 9, ly + 1, ly + 9, ly + 5, ly + 9);
#undef NX
#undef NY
	fputs("</svg><figcaption>the topology: NICs at the bottom, each tier of switches above; every link "
	      "coloured by its busier direction's utilisation (hover for both, and its counters)</figcaption>"
	      "</figure>\n",
	      f);
out:
	free(v);
	free(a);
	free(b);
}

/* ---- plan --compare ---- */

/* horizontal bars, one per design */
void rep_bars(FILE *f, const char *title, const char *unit, const json_t *ds, const char *key, double div, bool ranges)
{
	size_t n = json_array_size(ds), i;
	double top = 0;
	json_t *d;
	json_array_foreach(ds, i, d)
	{
		top = fmax(top, json_number_value(json_object_get(d, key)) / div);
		if (ranges && json_object_get(d, "seeds"))
			top = fmax(top, rep_jnum(d, "max") / div);
	}
	if (!(top > 0) || !isfinite(top))
		return;
	int h = 24 * (int)n + 30, span = CW - (ranges ? 400 : 260); /* room for the labels */
	fprintf(f, "<figure><svg class=\"chart\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\"><title>",
		CW, h, CW, h);
	rep_esc(f, title);
	fputs("</title>\n", f);
	json_array_foreach(ds, i, d)
	{
		json_t *v = json_object_get(d, key);
		double x = json_number_value(v) / div, w = v ? x / top * span : 0;
		/* over seeds: the bar is the median, a whisker their range */
		bool rng = ranges && v && json_object_get(d, "seeds");
		double lo = rep_jnum(d, "min") / div, hi = rep_jnum(d, "max") / div;
		fprintf(f, "<text x=\"150\" y=\"%zu\" class=\"tick\" text-anchor=\"end\">", 24 * i + 20);
		rep_esc(f, rep_jstr(d, "name"));
		fprintf(f, "</text><rect x=\"160\" y=\"%zu\" width=\"%.1f\" height=\"16\" fill=\"%s\"><title>",
			24 * i + 7, w, rep_colours[i % 8]);
		rep_esc(f, rep_jstr(d, "name"));
		if (!v) {
			fprintf(f, ": no result</title></rect><text x=\"166\" y=\"%zu\" class=\"tick\">-</text>\n",
				24 * i + 20);
			continue;
		}
		if (rng) {
			double a = 160 + lo / top * span, b = 160 + hi / top * span;
			fprintf(f,
				": median %.4g %s over %zu seeds, %.4g to %.4g</title></rect><path class=\"range\" "
				"d=\"M%.1f %zu V%zu M%.1f %zu H%.1f M%.1f %zu V%zu\" stroke=\"#222\" stroke-width=\"1.5\"/>"
				"<text x=\"%.1f\" y=\"%zu\" class=\"tick\">%.4g (%.4g to %.4g)</text>\n",
				x, unit, json_array_size(json_object_get(d, "seeds")), lo, hi, a, 24 * i + 9,
				24 * i + 21, a, 24 * i + 15, b, b, 24 * i + 9, 24 * i + 21, fmax(b, 160 + w) + 6,
				24 * i + 20, x, lo, hi);
			continue;
		}
		fprintf(f, ": %.4g %s</title></rect><text x=\"%.1f\" y=\"%zu\" class=\"tick\">%.4g</text>\n", x, unit,
			166 + w, 24 * i + 20, x);
	}
	fputs("</svg><figcaption>", f);
	rep_esc(f, title);
	if (ranges)
		fputs("; over seeds, the bar is the median and the whisker the range", f);
	fputs("</figcaption></figure>\n", f);
}
