/*
 * report.c - the HTML report (report.h).
 *
 * Sections, each drawn only from documents that have what it needs:
 * the documents; diagnose's suspects with their evidence, linked to the
 * matrix they point into; bus bandwidth against size for every collective
 * sweep, overlaid; for each simulation the summary, the distribution of
 * flow completion times, the busiest ports and, with a time series, their
 * queues over time; each job's iterations (compute and exposed
 * communication); each matrix as a heatmap with a legend and a scale on
 * labelled axes.  Colours are Okabe and Ito's (lines) and a viridis ramp
 * (the heatmap), both readable with colour-blindness.
 */
#include <math.h>
#include <string.h>

#include "../analysis/diagnose.h"
#include "report.h"

static const char *const line_colours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
					   "#E69F00", "#56B4E9", "#000000", "#F0E442"};

/* viridis at t in [0, 1], as 8 stops interpolated */
static void viridis(double t, char out[8])
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

/* text for HTML and SVG */
static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static double jnum(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* ---- a line chart: x on a log2 or linear scale, y linear from 0 ---- */

#define CW 640
#define CH 300
#define ML 70
#define MB 50
#define MT 20
#define MR 20

struct series {
	const char *label;
	const double *x, *y;
	size_t n;
};

static double tick_step(double span)
{
	double p = pow(10, floor(log10(span / 5))), m = span / 5 / p;
	return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : 5);
}

static void chart(FILE *f, const char *title, const char *xlabel, const char *ylabel, bool logx, const struct series *s,
		  size_t ns)
{
	double x0 = 1e300, x1 = -1e300, y1 = 0;
	for (size_t k = 0; k < ns; k++)
		for (size_t i = 0; i < s[k].n; i++) {
			double x = logx ? log2(fmax(s[k].x[i], 1)) : s[k].x[i];
			x0 = fmin(x0, x);
			x1 = fmax(x1, x);
			y1 = fmax(y1, s[k].y[i]);
		}
	if (x1 <= x0)
		x1 = x0 + 1;
	if (y1 <= 0)
		y1 = 1;
	double ys = tick_step(y1);
	y1 = ceil(y1 / ys) * ys;
	int pw = CW - ML - MR, ph = CH - MT - MB;
#define PX(x) (ML + ((x)-x0) / (x1 - x0) * pw)
#define PY(y) (MT + ph - (y) / y1 * ph)
	fprintf(f, "<figure><svg class=\"chart\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">\n", CW,
		CH, CW, CH);
	fprintf(f, "<title>");
	esc(f, title);
	fprintf(f, "</title>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"plot\"/>\n", ML, MT, pw, ph);
	for (double y = 0; y <= y1 + ys / 2; y += ys)
		fprintf(f,
			"<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/><text x=\"%d\" y=\"%.1f\" "
			"class=\"tick\" text-anchor=\"end\">%g</text>\n",
			ML, ML + pw, PY(y), PY(y), ML - 6, PY(y) + 4, y);
	double xs = logx ? fmax(1, ceil((x1 - x0) / 8)) : tick_step(x1 - x0);
	for (double x = logx ? ceil(x0) : ceil(x0 / xs) * xs; x <= x1 + 1e-9; x += xs) {
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
	esc(f, xlabel);
	fprintf(f,
		"</text>\n<text x=\"14\" y=\"%d\" class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 14 %d)\">",
		MT + ph / 2, MT + ph / 2);
	esc(f, ylabel);
	fputs("</text>\n", f);
	for (size_t k = 0; k < ns; k++) {
		const char *col = line_colours[k % 8];
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
		for (size_t i = 0; i < s[k].n; i++)
			fprintf(f, "%s%.1f,%.1f", i ? " " : "", PX(logx ? log2(fmax(s[k].x[i], 1)) : s[k].x[i]),
				PY(s[k].y[i]));
		fputs("\"/>\n", f);
		for (size_t i = 0; i < s[k].n && s[k].n <= 64; i++) {
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>",
				PX(logx ? log2(fmax(s[k].x[i], 1)) : s[k].x[i]), PY(s[k].y[i]), col);
			esc(f, s[k].label);
			fprintf(f, ": %g, %g</title></circle>\n", s[k].x[i], s[k].y[i]);
		}
		fprintf(f,
			"<rect x=\"%d\" y=\"%zu\" width=\"12\" height=\"3\" fill=\"%s\"/><text x=\"%d\" y=\"%zu\" class=\"tick\">",
			ML + 10, MT + 10 + 16 * k, col, ML + 28, MT + 14 + 16 * k);
		esc(f, s[k].label);
		fputs("</text>\n", f);
	}
#undef PX
#undef PY
	fputs("</svg><figcaption>", f);
	esc(f, title);
	fputs("</figcaption></figure>\n", f);
}

/* ---- sections ---- */

static void section_documents(FILE *f, json_t *const *docs, const char *const *names, int n)
{
	fputs("<section id=\"documents\"><h2>Documents</h2><table><tr><th>#</th><th>file</th><th>kind</th>"
	      "<th>scenario or test</th><th>seed</th></tr>\n",
	      f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "<tr><td>%d</td><td>", i + 1);
		esc(f, names[i]);
		fputs("</td><td>", f);
		esc(f, json_object_get(docs[i], "probe") ? "probe" : jstr(docs[i], "kind"));
		fputs("</td><td>", f);
		esc(f,
		    json_object_get(docs[i], "probe") ? jstr(json_object_get(docs[i], "probe"), "test")
						      : jstr(docs[i], "scenario"));
		fprintf(f, "</td><td>%lld</td></tr>\n",
			(long long)json_integer_value(json_object_get(docs[i], "seed")));
	}
	fputs("</table></section>\n", f);
}

static void section_suspects(FILE *f, json_t *const *docs, int n, const struct fab_diagnosis *d)
{
	fputs("<section id=\"suspects\"><h2>Diagnosis</h2>\n", f);
	if (!d->n) {
		fprintf(f, "<p class=\"ok\">Healthy: no suspect in %d document%s.</p></section>\n", n,
			n == 1 ? "" : "s");
		return;
	}
	fputs("<ol class=\"suspects\">\n", f);
	for (int i = 0; i < d->n; i++) {
		/* linked to the heatmap of the matrix whose endpoint it names */
		int in_matrix = -1;
		for (int k = 0; k < n && in_matrix < 0; k++) {
			json_t *ep = json_object_get(json_object_get(docs[k], "matrix"), "endpoints"), *e;
			size_t j;
			json_array_foreach(ep, j, e) if (strstr(d->s[i].target, json_string_value(e)))
			{
				in_matrix = k;
				break;
			}
		}
		fputs("<li><b>", f);
		esc(f, d->s[i].target);
		fputs("</b>", f);
		if (in_matrix >= 0)
			fprintf(f, " (<a href=\"#matrix-%d\">see the matrix</a>)", in_matrix + 1);
		fputs("<ul>", f);
		for (int k = 0; k < d->s[i].nevidence; k++) {
			fputs("<li>", f);
			esc(f, d->s[i].evidence[k]);
			fputs("</li>", f);
		}
		fputs("</ul></li>\n", f);
	}
	fputs("</ol></section>\n", f);
}

static void section_busbw(FILE *f, json_t *const *docs, const char *const *names, int n)
{
	struct series s[8];
	double *buf[16];
	size_t ns = 0;
	for (int i = 0; i < n && ns < 8; i++) {
		json_t *rows = json_object_get(json_object_get(docs[i], "collective"), "rows"), *r;
		size_t k, m = json_array_size(rows);
		if (!m)
			continue;
		double *x = fab_xcalloc(m, sizeof *x), *y = fab_xcalloc(m, sizeof *y);
		json_array_foreach(rows, k, r)
		{
			x[k] = jnum(r, "size_bytes");
			y[k] = jnum(r, "busbw_GBps");
		}
		buf[2 * ns] = x;
		buf[2 * ns + 1] = y;
		s[ns++] = (struct series){names[i], x, y, m};
	}
	if (!ns)
		return;
	fputs("<section id=\"busbw\"><h2>Bus bandwidth against size</h2>\n", f);
	chart(f, "bus bandwidth (GB/s) against message size, every collective sweep", "size (bytes)", "busbw (GB/s)",
	      true, s, ns);
	fputs("</section>\n", f);
	for (size_t k = 0; k < 2 * ns; k++)
		free(buf[k]);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* PAUSE frames sent, ECN marks and drops per interval, summed over the
 * switch ports of the time series */
static void pause_ecn_series(FILE *f, const json_t *ser)
{
	size_t cap = json_array_size(ser), m = 0, i;
	double *t = fab_xcalloc(cap, sizeof *t), *v[3];
	static const char *const keys[] = {"pause_tx", "ecn_marks", "drops"};
	for (int k = 0; k < 3; k++)
		v[k] = fab_xcalloc(cap, sizeof *v[k]);
	const json_t *x;
	json_array_foreach(ser, i, x)
	{
		double ti = jnum(x, "t_ps") / 1e6;
		if (!m || t[m - 1] != ti) /* rows come by time, then port */
			t[m++] = ti;
		for (int k = 0; k < 3; k++)
			v[k][m - 1] += jnum(x, keys[k]);
	}
	struct series s[3] = {{"PAUSE frames sent", t, v[0], m}, {"ECN marks", t, v[1], m}, {"drops", t, v[2], m}};
	chart(f, "PAUSE frames sent, ECN marks and drops per interval, all switch ports", "time (us)", "per interval",
	      false, s, 3);
	free(t);
	for (int k = 0; k < 3; k++)
		free(v[k]);
}

/* FCT slowdown by flow size (HPCC's bins): median, p95 and p99 */
static void slowdown_chart(FILE *f, const json_t *sd)
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
			q[k][i] = jnum(x, keys[k]);
	}
	struct series s[3] = {{"median", b, q[0], n}, {"p95", b, q[1], n}, {"p99", b, q[2], n}};
	chart(f,
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

static void topology_map(FILE *f, const json_t *ports, const struct fab_diagnosis *d)
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
		const char *ends[2] = {jstr(x, "node"), jstr(x, "peer")};
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
			v[a[i]].max_rate = FAB_MAX(v[a[i]].max_rate, jnum(x, "rate_bps"));
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
			    jnum(json_array_get(ports, j), "port") == jnum(p, "peer_port"))
				q = json_array_get(ports, j);
		double u = jnum(p, "utilization"), uq = q ? jnum(q, "utilization") : 0;
		double drops = jnum(p, "drops") + (q ? jnum(q, "drops") : 0);
		double pause = jnum(p, "pause_tx") + (q ? jnum(q, "pause_tx") : 0);
		double ecn = jnum(p, "ecn_marks") + (q ? jnum(q, "ecn_marks") : 0);
		double errs = jnum(p, "rx_errors") + (q ? jnum(q, "rx_errors") : 0);
		char col[8];
		viridis(FAB_MIN(1.0, FAB_MAX(u, uq)), col);
		double x1 = NX(a[i]), y1 = NY(a[i]), x2 = NX(b[i]), y2 = NY(b[i]);
		/* a link diagnose names: outlined, with its rank, where this run
		 * shows it too (lost frames, or slower than its node's other
		 * links): the diagnosis covers every document given */
		bool odd = drops + errs > 0 || jnum(p, "rate_bps") < v[a[i]].max_rate;
		int k = odd ? link_suspect(d, v[a[i]].name, v[b[i]].name) : -1;
		if (k >= 0) {
			fprintf(f,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"suspect-link\"><title>suspect %d: "
				"",
				x1, y1, x2, y2, k + 1);
			esc(f, d->s[k].target);
			fprintf(f, "</title></line><text x=\"%.1f\" y=\"%.1f\" class=\"axis\">suspect %d</text>\n",
				(x1 + x2) / 2 + 8, (y1 + y2) / 2 + 30, k + 1);
		}
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"%s>",
			x1, y1, x2, y2, col, drops + errs > 0 ? "4" : "2",
			drops + errs > 0 ? " stroke-dasharray=\"6 3\" class=\"lossy\"" : "");
		fputs("<title>", f);
		esc(f, v[a[i]].name);
		fputs(" - ", f);
		esc(f, v[b[i]].name);
		fprintf(f,
			": utilisation %.1f%% up, %.1f%% down; drops %.0f, bad frames %.0f, PAUSE %.0f, ECN %.0f</title>"
			"</line>\n",
			u * 100, uq * 100, drops, errs, pause, ecn);
		double mx = (x1 + x2) / 2, my = (y1 + y2) / 2;
		if (pause > 0)
			fprintf(f,
				"<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" class=\"pause\"><title>PAUSE %.0f"
				"</title></rect>\n",
				mx - 3.5, my - 3.5, pause);
		if (ecn > 0)
			fprintf(f,
				"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" class=\"ecn\"><title>ECN %.0f</title></circle>\n",
				mx + 6, my, ecn);
	}
	for (int k = 0; k < nv; k++) {
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" class=\"node\"><title>", NX(k), NY(k),
			v[k].level ? "5" : "2.5");
		esc(f, v[k].name);
		fputs("</title></circle>\n", f);
	}
	/* legend: the scale, and the marks */
	int ly = H - 30;
	for (int s = 0; s < 50; s++) {
		char col[8];
		viridis(s / 49.0, col);
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

static void section_sim(FILE *f, const json_t *doc, const char *name, int idx, const struct fab_diagnosis *d)
{
	const json_t *sum = json_object_get(doc, "summary"), *fct = json_object_get(sum, "fct_ps");
	json_t *flows = json_object_get(doc, "flows"), *ports = json_object_get(doc, "ports"), *x;
	size_t i, n = json_array_size(flows);
	fprintf(f, "<section id=\"sim-%d\"><h2>Simulation: ", idx);
	esc(f, name);
	if (!n) {
		fputs("</h2>\n<p>No flows (its jobs are below).</p>\n", f);
	} else
		fprintf(f,
			"</h2>\n<table><tr><th>flows done</th><th>FCT p50</th><th>FCT p99</th><th>drops</th><th>PAUSE "
			"frames</th><th>ECN marks</th><th>retransmitted</th></tr>\n<tr><td>%.0f of %.0f</td><td>%.3f us</td>"
			"<td>%.3f us</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td></tr></table>\n",
			jnum(sum, "flows_done"), jnum(sum, "flows"), jnum(fct, "p50") / 1e6, jnum(fct, "p99") / 1e6,
			jnum(sum, "drops"), jnum(sum, "pause_frames"), jnum(sum, "ecn_marks"), jnum(sum, "retx_pkts"));
	if (n) {
		/* the distribution of completion times: fraction of flows done by t */
		double *t = fab_xcalloc(n, sizeof *t), *p = fab_xcalloc(n, sizeof *p);
		size_t m = 0;
		json_array_foreach(flows, i, x) if (json_is_number(json_object_get(x, "fct_ps")))
			t[m++] = jnum(x, "fct_ps") / 1e6;
		qsort(t, m, sizeof *t, cmp_dbl);
		for (i = 0; i < m; i++)
			p[i] = (double)(i + 1) / (double)m;
		struct series s = {"flows", t, p, m};
		if (m)
			chart(f, "flow completion times: the fraction of flows done by each time", "FCT (us)",
			      "fraction of flows", false, &s, 1);
		free(t);
		free(p);
	}
	/* the busiest ports: the deepest queues */
	size_t np = json_array_size(ports), top[10], nt = 0;
	for (size_t k = 0; k < 10; k++) {
		double best = 0;
		size_t bi = SIZE_MAX;
		for (i = 0; i < np; i++) {
			bool taken = false;
			for (size_t q = 0; q < nt; q++)
				taken |= top[q] == i;
			double qb = jnum(json_array_get(ports, i), "max_queue_bytes");
			if (!taken && qb > best) {
				best = qb;
				bi = i;
			}
		}
		if (bi == SIZE_MAX)
			break;
		top[nt++] = bi;
	}
	if (nt) {
		fputs("<h3>Busiest queues</h3><table><tr><th>port</th><th>toward</th><th>max queue</th><th>utilisation</th>"
		      "<th>drops</th><th>PAUSE sent</th><th>ECN marks</th></tr>\n",
		      f);
		for (size_t k = 0; k < nt; k++) {
			json_t *pt = json_array_get(ports, top[k]);
			fputs("<tr><td>", f);
			esc(f, jstr(pt, "node"));
			fprintf(f, " port %.0f</td><td>", jnum(pt, "port"));
			esc(f, jstr(pt, "peer"));
			fprintf(f, "</td><td>%.0f B</td><td>%.1f%%</td><td>%.0f</td><td>%.0f</td><td>%.0f</td></tr>\n",
				jnum(pt, "max_queue_bytes"), jnum(pt, "utilization") * 100, jnum(pt, "drops"),
				jnum(pt, "pause_tx"), jnum(pt, "ecn_marks"));
		}
		fputs("</table>\n", f);
	}
	/* queues over time for those ports, from the time series */
	json_t *ser = json_object_get(doc, "series");
	if (json_array_size(ser) && nt) {
		struct series s[4];
		double *bufs[8];
		size_t ns = 0;
		for (size_t k = 0; k < nt && k < 4; k++) {
			json_t *pt = json_array_get(ports, top[k]);
			size_t m = 0, cap = json_array_size(ser);
			double *tx = fab_xcalloc(cap, sizeof *tx), *qy = fab_xcalloc(cap, sizeof *qy);
			json_array_foreach(ser, i, x) if (!strcmp(jstr(x, "node"), jstr(pt, "node")) &&
							  jnum(x, "port") == jnum(pt, "port"))
			{
				tx[m] = jnum(x, "t_ps") / 1e6;
				qy[m++] = jnum(x, "queue_bytes") / 1024;
			}
			bufs[2 * ns] = tx;
			bufs[2 * ns + 1] = qy;
			s[ns++] = (struct series){jstr(pt, "node"), tx, qy, m};
		}
		chart(f, "the busiest queues over time", "time (us)", "queue (KiB)", false, s, ns);
		for (size_t k = 0; k < 2 * ns; k++)
			free(bufs[k]);
	}
	if (json_array_size(ser))
		pause_ecn_series(f, ser);
	slowdown_chart(f, json_object_get(doc, "slowdown"));
	topology_map(f, ports, d);
	fputs("</section>\n", f);
}

static void section_jobs(FILE *f, const json_t *doc, const char *name, int idx)
{
	json_t *jobs = json_object_get(doc, "jobs"), *j, *it;
	size_t i, k;
	json_array_foreach(jobs, i, j)
	{
		json_t *its = json_object_get(j, "iterations");
		size_t n = json_array_size(its);
		if (!n)
			continue;
		double tmax = 0;
		json_array_foreach(its, k, it) tmax = fmax(tmax, jnum(it, "time_ps"));
		fprintf(f, "<section class=\"job\" id=\"job-%d-%zu\"><h2>Job ", idx, i + 1);
		esc(f, jstr(j, "name"));
		fputs(" (", f);
		esc(f, name);
		fputs(")</h2>\n", f);
		int bh = 18, w = 560;
		fprintf(f,
			"<figure><svg viewBox=\"0 0 %d %zu\" width=\"%d\" height=\"%zu\" role=\"img\"><title>iterations</title>\n",
			w + 220, (size_t)bh * n + 40, w + 220, (size_t)bh * n + 40);
		json_array_foreach(its, k, it)
		{
			double t = jnum(it, "time_ps"), c = fmin(jnum(it, "compute_ps"), t), e = jnum(it, "exposed_ps");
			double y = 10 + (double)k * bh, sc = tmax > 0 ? w / tmax : 0;
			fprintf(f, "<text x=\"0\" y=\"%.0f\" class=\"tick\">iteration %zu</text>", y + 12, k);
			fprintf(f,
				"<rect x=\"100\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>compute %.3f ms</title></rect>",
				y, c * sc, bh - 4, line_colours[0], c / 1e9);
			fprintf(f,
				"<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>exposed communication %.3f ms</title></rect>\n",
				100 + c * sc, y, fmax(0, e) * sc, bh - 4, line_colours[1], e / 1e9);
			/* all its communication, hidden behind compute or not: a
			 * thin bar along the bottom of the row */
			double cm = fmax(0, jnum(it, "comm_ps"));
			fprintf(f,
				"<rect x=\"100\" y=\"%.0f\" width=\"%.1f\" height=\"3\" fill=\"%s\" class=\"comm\"><title>"
				"communication %.3f ms (%.3f ms of it hidden behind compute)</title></rect>\n",
				y + bh - 4, cm * sc, line_colours[2], cm / 1e9, fmax(0, cm - e) / 1e9);
		}
		fprintf(f,
			"<text x=\"100\" y=\"%zu\" class=\"tick\">compute (blue), exposed communication (vermilion), all "
			"communication (green line); the longest iteration %.3f ms</text></svg><figcaption>step "
			"timeline</figcaption></figure></section>\n",
			(size_t)bh * n + 30, tmax / 1e9);
	}
}

static void section_matrix(FILE *f, const json_t *doc, const char *name, int idx, const struct fab_diagnosis *d)
{
	json_t *m = json_object_get(doc, "matrix"), *ep = json_object_get(m, "endpoints"),
	       *bw = json_object_get(m, "bw_GBps");
	size_t n = json_array_size(ep);
	if (n < 2 || !bw)
		return;
	double lo = 1e300, hi = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			json_t *v = json_array_get(json_array_get(bw, i), j);
			if (i != j && json_is_number(v)) {
				lo = fmin(lo, json_number_value(v));
				hi = fmax(hi, json_number_value(v));
			}
		}
	if (hi <= 0)
		return;
	if (lo >= hi)
		lo = 0;
	int cell = n > 64 ? 4 : n > 16 ? 10 : 24, lab = n <= 64 ? 130 : 20, size = (int)n * cell;
	fprintf(f, "<section id=\"matrix-%d\"><h2>All-pairs bandwidth: ", idx);
	esc(f, name);
	fprintf(f,
		"</h2>\n<figure><svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">"
		"<title>bandwidth between every pair (sender row, receiver column)</title>\n",
		lab + size + 120, lab + size + 40, lab + size + 120, lab + size + 40);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			json_t *v = json_array_get(json_array_get(bw, i), j);
			char col[8] = "#dddddd";
			if (i != j && json_is_number(v))
				viridis((json_number_value(v) - lo) / (hi - lo), col);
			fprintf(f, "<rect x=\"%zu\" y=\"%zu\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>",
				lab + j * cell, lab + i * cell, cell, cell, col);
			esc(f, json_string_value(json_array_get(ep, i)));
			fputs(" to ", f);
			esc(f, json_string_value(json_array_get(ep, j)));
			if (i != j && json_is_number(v))
				fprintf(f, ": %.4g GB/s", json_number_value(v));
			else
				fputs(i == j ? ": itself" : ": not measured or failed", f);
			fputs("</title></rect>\n", f);
		}
	/* labels, and the suspects' rows and columns outlined */
	for (size_t i = 0; i < n; i++) {
		const char *nm = json_string_value(json_array_get(ep, i));
		bool sus = false;
		for (int k = 0; k < d->n; k++) {
			const char *hit = strstr(d->s[k].target, nm);
			sus |= hit && (hit[strlen(nm)] == 0 || hit[strlen(nm)] == ' ' || hit[strlen(nm)] == ')');
		}
		if (n <= 64) {
			fprintf(f, "<text x=\"%d\" y=\"%zu\" class=\"tick\" text-anchor=\"end\"%s>", lab - 4,
				lab + i * cell + cell / 2 + 4, sus ? " font-weight=\"bold\"" : "");
			esc(f, nm);
			fprintf(f, "</text><text class=\"tick\" transform=\"translate(%zu %d) rotate(-60)\"%s>",
				lab + i * cell + cell / 2, lab - 4, sus ? " font-weight=\"bold\"" : "");
			esc(f, nm);
			fputs("</text>\n", f);
		}
		if (sus)
			fprintf(f,
				"<rect x=\"%d\" y=\"%zu\" width=\"%d\" height=\"%d\" class=\"suspect\"/><rect x=\"%zu\" y=\"%d\" "
				"width=\"%d\" height=\"%d\" class=\"suspect\"/>\n",
				lab, lab + i * cell, size, cell, lab + i * cell, lab, cell, size);
	}
	/* the legend: the ramp and its scale */
	int lx = lab + size + 30, ly = lab;
	for (int k = 0; k < 50; k++) {
		char col[8];
		viridis(1 - k / 49.0, col);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"16\" height=\"%d\" fill=\"%s\"/>", lx, ly + k * size / 50,
			size / 50 + 1, col);
	}
	fprintf(f,
		"\n<text x=\"%d\" y=\"%d\" class=\"tick\">%.4g GB/s</text><text x=\"%d\" y=\"%d\" class=\"tick\">%.4g GB/s</text>"
		"<text x=\"%d\" y=\"%d\" class=\"axis\">sender (rows), receiver (columns)</text>\n",
		lx + 20, ly + 8, hi, lx + 20, ly + size, lo, lab, lab + size + 24);
	fputs("</svg><figcaption>bandwidth of every ordered pair; suspects outlined; grey: not measured</figcaption>"
	      "</figure></section>\n",
	      f);
}

/* the page, whole */
static void page_head(FILE *f)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fabscope report</title>\n"
	      "<style>body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}"
	      "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:2px 8px;text-align:right}"
	      "th{background:#eee}.plot{fill:#fff;stroke:#888}.grid{stroke:#e4e4e4}.tick{font-size:11px;fill:#333}"
	      ".axis{font-size:13px;fill:#111}.suspect{fill:none;stroke:#000;stroke-width:2}"
	      ".ok{color:#006e3c}.node{fill:#333}.pause{fill:#D55E00}.suspect-link{stroke:#000;stroke-width:9;stroke-opacity:.35}.ecn{fill:#CC79A7}figure{margin:1em 0}figcaption{font-size:12px;color:#555}</style></head><body>\n"
	      "<h1>fabscope report</h1>\n",
	      f);
}

static int report_page(FILE *f, json_t *const *docs, const char *const *names, int ndocs, struct fab_err *err)
{
	for (int i = 0; i < ndocs; i++)
		if (fab_diag_validate(docs[i], names[i], err))
			return FAB_EINVAL;
	struct fab_diag_params p;
	struct fab_diagnosis d = {0};
	fab_diag_defaults(&p);
	if (fab_diagnose(docs, ndocs, NULL, &p, &d, err))
		return FAB_EINVAL;
	page_head(f);
	section_documents(f, docs, names, ndocs);
	section_suspects(f, docs, ndocs, &d);
	section_busbw(f, docs, names, ndocs);
	for (int i = 0; i < ndocs; i++) {
		if (!strcmp(jstr(docs[i], "kind"), "sim") && json_object_get(docs[i], "flows"))
			section_sim(f, docs[i], names[i], i + 1, &d);
		section_jobs(f, docs[i], names[i], i + 1);
		section_matrix(f, docs[i], names[i], i + 1, &d);
	}
	fputs("</body></html>\n", f);
	fab_diagnosis_free(&d);
	return ferror(f) ? FAB_EIO : 0;
}

int fab_report_write(FILE *f, json_t *const *docs, const char *const *names, int ndocs, const char *only,
		     struct fab_err *err)
{
	if (!only)
		return report_page(f, docs, names, ndocs, err);
	/* one section: the page is made whole, then cut to its head, that
	 * section and its end; an id it lacks writes nothing */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return fab_err_set(err, FAB_EIO, "report: out of memory");
	int rc = report_page(m, docs, names, ndocs, err);
	fclose(m);
	if (!rc) {
		char want[96];
		snprintf(want, sizeof want, " id=\"%s\"", only);
		const char *body = strstr(buf, "<h1>"), *hit = strstr(buf, want), *start = hit, *end;
		while (start && start > buf && strncmp(start, "<section", 8))
			start--;
		end = hit ? strstr(hit, "</section>") : NULL;
		if (!body || !hit || !end || strncmp(start, "<section", 8)) {
			rc = fab_err_set(
				err, FAB_EINVAL,
				"report --section %s: no such section in this page (its ids: "
				"documents, suspects, busbw, sim-N, matrix-N, job-N-K; N is the document's place)",
				only);
		} else {
			end += strlen("</section>");
			fwrite(buf, 1, (size_t)(body - buf), f);
			fwrite(start, 1, (size_t)(end - start), f);
			fputs("\n</body></html>\n", f);
			rc = ferror(f) ? FAB_EIO : 0;
		}
	}
	free(buf);
	return rc;
}

/* ---- plan --compare ---- */

/* horizontal bars, one per design */
static void bars(FILE *f, const char *title, const char *unit, const json_t *ds, const char *key, double div)
{
	size_t n = json_array_size(ds), i;
	double top = 0;
	json_t *d;
	json_array_foreach(ds, i, d) top = fmax(top, json_number_value(json_object_get(d, key)) / div);
	if (!(top > 0))
		return;
	int h = 24 * (int)n + 30;
	fprintf(f, "<figure><svg class=\"chart\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\"><title>",
		CW, h, CW, h);
	esc(f, title);
	fputs("</title>\n", f);
	json_array_foreach(ds, i, d)
	{
		json_t *v = json_object_get(d, key);
		double x = json_number_value(v) / div, w = v ? x / top * (CW - 260) : 0;
		fprintf(f, "<text x=\"150\" y=\"%zu\" class=\"tick\" text-anchor=\"end\">", 24 * i + 20);
		esc(f, jstr(d, "name"));
		fprintf(f, "</text><rect x=\"160\" y=\"%zu\" width=\"%.1f\" height=\"16\" fill=\"%s\"><title>",
			24 * i + 7, w, line_colours[i % 8]);
		esc(f, jstr(d, "name"));
		if (v)
			fprintf(f, ": %.4g %s</title></rect><text x=\"%.1f\" y=\"%zu\" class=\"tick\">%.4g</text>\n", x,
				unit, 166 + w, 24 * i + 20, x);
		else
			fprintf(f, ": no result</title></rect><text x=\"166\" y=\"%zu\" class=\"tick\">-</text>\n",
				24 * i + 20);
	}
	fputs("</svg><figcaption>", f);
	esc(f, title);
	fputs("</figcaption></figure>\n", f);
}

int fab_report_compare(FILE *f, const json_t *cmp)
{
	json_t *ds = json_object_get(cmp, "designs"), *d;
	bool coll = !strcmp(jstr(cmp, "workload"), "coll");
	size_t i;
	page_head(f);
	fputs("<section id=\"plan-compare\"><h2>Designs compared</h2>\n<table><tr><th>design</th><th>tiers</th>"
	      "<th>switches</th><th>transceivers</th><th>oversubscription</th><th>bisection (Tbps)</th>"
	      "<th>cost (USD)</th><th>power (kW)</th><th>USD a GPU</th>",
	      f);
	fprintf(f, "<th>%s</th></tr>\n", coll ? "busbw (GB/s)" : "step (ms)");
	json_array_foreach(ds, i, d)
	{
		double gpus = jnum(json_object_get(d, "plan"), "gpus");
		json_t *m = json_object_get(d, coll ? "busbw_GBps" : "step_ms");
		fputs("<tr><td>", f);
		esc(f, jstr(d, "name"));
		fprintf(f,
			"</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%.3g:1</td><td>%.4g</td><td>%.0f</td><td>%.1f</td>"
			"<td>%.0f</td><td>",
			(long long)json_integer_value(json_object_get(d, "tiers")),
			(long long)json_integer_value(json_object_get(d, "switches")),
			(long long)json_integer_value(json_object_get(d, "transceivers")), jnum(d, "oversubscription"),
			jnum(d, "bisection_bps") / 1e12, jnum(d, "usd"), jnum(d, "watts") / 1e3, jnum(d, "usd") / gpus);
		if (m)
			fprintf(f, "%.4g", json_number_value(m));
		else
			esc(f, jstr(d, "status"));
		if (m && json_object_get(d, "seeds")) /* the median over seeds, and their range */
			fprintf(f, " (median of %zu seeds: %.4g to %.4g)", json_array_size(json_object_get(d, "seeds")),
				jnum(d, "min"), jnum(d, "max"));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	bars(f, "network cost per design (million USD)", "M USD", ds, "usd", 1e6);
	bars(f, "network power per design (kW)", "kW", ds, "watts", 1e3);
	if (coll)
		bars(f, "bus bandwidth per design (GB/s)", "GB/s", ds, "busbw_GBps", 1);
	else
		bars(f, "training step per design (ms)", "ms", ds, "step_ms", 1);
	fputs("</section>\n</body></html>\n", f);
	return ferror(f) ? FAB_EIO : 0;
}
