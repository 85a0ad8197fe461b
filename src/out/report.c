/*
 * report.c - the HTML report (report.h): the page, its sections, and plan
 * --compare's page; the pictures they draw are report_chart.c's.
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
#include <stdlib.h>
#include <string.h>

#include "report_int.h"

/* text for HTML and SVG */
void rep_esc(FILE *f, const char *s)
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

const char *rep_jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

double rep_jnum(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* ---- sections ---- */

static void section_documents(FILE *f, json_t *const *docs, const char *const *names, int n)
{
	fputs("<section id=\"documents\"><h2>Documents</h2><table><tr><th>#</th><th>file</th><th>kind</th>"
	      "<th>scenario or test</th><th>seed</th></tr>\n",
	      f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "<tr><td>%d</td><td>", i + 1);
		rep_esc(f, names[i]);
		fputs("</td><td>", f);
		rep_esc(f, json_object_get(docs[i], "probe") ? "probe" : rep_jstr(docs[i], "kind"));
		fputs("</td><td>", f);
		rep_esc(f,
			json_object_get(docs[i], "probe") ? rep_jstr(json_object_get(docs[i], "probe"), "test")
							  : rep_jstr(docs[i], "scenario"));
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
		rep_esc(f, d->s[i].target);
		fputs("</b>", f);
		if (in_matrix >= 0)
			fprintf(f, " (<a href=\"#matrix-%d\">see the matrix</a>)", in_matrix + 1);
		fputs("<ul>", f);
		for (int k = 0; k < d->s[i].nevidence; k++) {
			fputs("<li>", f);
			rep_esc(f, d->s[i].evidence[k]);
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
			x[k] = rep_jnum(r, "size_bytes");
			y[k] = rep_jnum(r, "busbw_GBps");
		}
		buf[2 * ns] = x;
		buf[2 * ns + 1] = y;
		s[ns++] = (struct series){names[i], x, y, m};
	}
	if (!ns)
		return;
	fputs("<section id=\"busbw\"><h2>Bus bandwidth against size</h2>\n", f);
	rep_chart(f, "bus bandwidth (GB/s) against message size, every collective sweep", "size (bytes)",
		  "busbw (GB/s)", true, s, ns);
	fputs("</section>\n", f);
	for (size_t k = 0; k < 2 * ns; k++)
		free(buf[k]);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void section_sim(FILE *f, const json_t *doc, const char *name, int idx, const struct fab_diagnosis *d)
{
	const json_t *sum = json_object_get(doc, "summary"), *fct = json_object_get(sum, "fct_ps");
	json_t *flows = json_object_get(doc, "flows"), *ports = json_object_get(doc, "ports"), *x;
	size_t i, n = json_array_size(flows);
	fprintf(f, "<section id=\"sim-%d\"><h2>Simulation: ", idx);
	rep_esc(f, name);
	if (!n) {
		fputs("</h2>\n<p>No flows (its jobs are below).</p>\n", f);
	} else
		fprintf(f,
			"</h2>\n<table><tr><th>flows done</th><th>FCT p50</th><th>FCT p99</th><th>drops</th><th>PAUSE "
			"frames</th><th>ECN marks</th><th>retransmitted</th></tr>\n<tr><td>%.0f of %.0f</td><td>%.3f us</td>"
			"<td>%.3f us</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td></tr></table>\n",
			rep_jnum(sum, "flows_done"), rep_jnum(sum, "flows"), rep_jnum(fct, "p50") / 1e6,
			rep_jnum(fct, "p99") / 1e6, rep_jnum(sum, "drops"), rep_jnum(sum, "pause_frames"),
			rep_jnum(sum, "ecn_marks"), rep_jnum(sum, "retx_pkts"));
	if (n) {
		/* the distribution of completion times: fraction of flows done by t */
		double *t = fab_xcalloc(n, sizeof *t), *p = fab_xcalloc(n, sizeof *p);
		size_t m = 0;
		json_array_foreach(flows, i, x) if (json_is_number(json_object_get(x, "fct_ps")))
			t[m++] = rep_jnum(x, "fct_ps") / 1e6;
		qsort(t, m, sizeof *t, cmp_dbl);
		for (i = 0; i < m; i++)
			p[i] = (double)(i + 1) / (double)m;
		struct series s = {"flows", t, p, m};
		if (m)
			rep_chart(f, "flow completion times: the fraction of flows done by each time", "FCT (us)",
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
			double qb = rep_jnum(json_array_get(ports, i), "max_queue_bytes");
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
			rep_esc(f, rep_jstr(pt, "node"));
			fprintf(f, " port %.0f</td><td>", rep_jnum(pt, "port"));
			rep_esc(f, rep_jstr(pt, "peer"));
			fputs("</td><td>", f);
			rep_bytes(f, rep_jnum(pt, "max_queue_bytes"));
			fprintf(f, "</td><td>%.1f%%</td><td>%.0f</td><td>%.0f</td><td>%.0f</td></tr>\n",
				rep_jnum(pt, "utilization") * 100, rep_jnum(pt, "drops"), rep_jnum(pt, "pause_tx"),
				rep_jnum(pt, "ecn_marks"));
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
			json_array_foreach(ser, i, x) if (!strcmp(rep_jstr(x, "node"), rep_jstr(pt, "node")) &&
							  rep_jnum(x, "port") == rep_jnum(pt, "port"))
			{
				tx[m] = rep_jnum(x, "t_ps") / 1e6;
				qy[m++] = rep_jnum(x, "queue_bytes") / 1024;
			}
			bufs[2 * ns] = tx;
			bufs[2 * ns + 1] = qy;
			s[ns++] = (struct series){rep_jstr(pt, "node"), tx, qy, m};
		}
		rep_chart(f, "the busiest queues over time", "time (us)", "queue (KiB)", false, s, ns);
		for (size_t k = 0; k < 2 * ns; k++)
			free(bufs[k]);
	}
	if (json_array_size(ser))
		rep_pause_ecn_series(f, ser);
	rep_slowdown_chart(f, json_object_get(doc, "slowdown"));
	rep_topology_map(f, ports, d);
	fputs("</section>\n", f);
}

/* the step timeline's time axis at y: ticks from 0 to tmax (ps) in ms, at
 * most 12, over w pixels from x = 100 */
static void job_axis(FILE *f, double y, double tmax, int w)
{
	double ms = tmax / 1e9;
	if (!(ms > 0) || !isfinite(ms))
		return;
	double p = pow(10, floor(log10(ms / 5))), m = ms / 5 / p, step = p * (m < 1.5 ? 1 : m < 3.5 ? 2 : 5);
	fprintf(f, "<line x1=\"100\" x2=\"%d\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#888\"/>\n", 100 + w, y, y);
	for (int t = 0; t <= 12 && t * step <= ms * (1 + 1e-9); t++) {
		double x = 100 + t * step / ms * w;
		fprintf(f,
			"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#888\"/><text x=\"%.1f\" y=\"%.0f\" "
			"class=\"tick\" text-anchor=\"middle\">%g ms</text>\n",
			x, x, y, y + 4, x, y + 16, t * step);
	}
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
		json_array_foreach(its, k, it) tmax = fmax(tmax, rep_jnum(it, "time_ps"));
		fprintf(f, "<section class=\"job\" id=\"job-%d-%zu\"><h2>Job ", idx, i + 1);
		rep_esc(f, rep_jstr(j, "name"));
		fputs(" (", f);
		rep_esc(f, name);
		fputs(")</h2>\n", f);
		/* at most 200 rows drawn (a note says how many more), and a time
		 * axis in ms under them */
		size_t shown = n > 200 ? 200 : n;
		int bh = 18, w = 560;
		size_t h = (size_t)bh * shown + 60;
		fprintf(f,
			"<figure><svg viewBox=\"0 0 %d %zu\" width=\"%d\" height=\"%zu\" role=\"img\"><title>iterations</title>\n",
			w + 220, h, w + 220, h);
		job_axis(f, 10 + (double)bh * (double)shown, tmax, w);
		json_array_foreach(its, k, it)
		{
			if (k == shown)
				break;
			double t = rep_jnum(it, "time_ps"), c = fmin(rep_jnum(it, "compute_ps"), t),
			       e = rep_jnum(it, "exposed_ps");
			double y = 10 + (double)k * bh, sc = tmax > 0 ? w / tmax : 0;
			fprintf(f, "<text x=\"0\" y=\"%.0f\" class=\"tick\">iteration %zu</text>", y + 12, k);
			fprintf(f,
				"<rect x=\"100\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>compute %.3f ms</title></rect>",
				y, c * sc, bh - 4, rep_colours[0], c / 1e9);
			fprintf(f,
				"<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>exposed communication %.3f ms</title></rect>\n",
				100 + c * sc, y, fmax(0, e) * sc, bh - 4, rep_colours[1], e / 1e9);
			/* all its communication, hidden behind compute or not: a
			 * thin bar along the bottom of the row */
			double cm = fmax(0, rep_jnum(it, "comm_ps"));
			fprintf(f,
				"<rect x=\"100\" y=\"%.0f\" width=\"%.1f\" height=\"3\" fill=\"%s\" class=\"comm\"><title>"
				"communication %.3f ms (%.3f ms of it hidden behind compute)</title></rect>\n",
				y + bh - 4, cm * sc, rep_colours[2], cm / 1e9, fmax(0, cm - e) / 1e9);
		}
		fprintf(f,
			"<text x=\"100\" y=\"%zu\" class=\"tick\">compute (blue), exposed communication (vermilion), all "
			"communication (green line); the longest iteration %.3f ms</text></svg><figcaption>step "
			"timeline",
			(size_t)bh * shown + 52, tmax / 1e9);
		if (shown < n)
			fprintf(f, "; the first %zu of %zu iterations", shown, n);
		fputs("</figcaption></figure></section>\n", f);
	}
}

/* a large matrix by blocks of b x b pairs: each cell the slowest pair of
 * its block (the diagonal and failed pairs left out), its mean in the
 * title */
static void matrix_blocks(FILE *f, const json_t *ep, const json_t *bw, size_t n, size_t b, int lab, int cell, double hi)
{
	for (size_t bi = 0; bi * b < n; bi++)
		for (size_t bj = 0; bj * b < n; bj++) {
			double mn = 1e300, sum = 0;
			size_t k = 0;
			for (size_t i = bi * b; i < FAB_MIN(n, (bi + 1) * b); i++) {
				const json_t *row = json_array_get(bw, i);
				for (size_t j = bj * b; j < FAB_MIN(n, (bj + 1) * b); j++) {
					const json_t *v = json_array_get(row, j);
					if (i != j && json_is_number(v)) {
						mn = fmin(mn, json_number_value(v));
						sum += json_number_value(v);
						k++;
					}
				}
			}
			char col[8] = "#dddddd";
			if (k)
				rep_viridis(mn / hi, col);
			size_t i1 = FAB_MIN(n, (bi + 1) * b) - 1, j1 = FAB_MIN(n, (bj + 1) * b) - 1;
			fprintf(f, "<rect x=\"%zu\" y=\"%zu\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>",
				lab + bj * cell, lab + bi * cell, cell, cell, col);
			rep_esc(f, json_string_value(json_array_get(ep, bi * b)));
			fputs("..", f);
			rep_esc(f, json_string_value(json_array_get(ep, i1)));
			fputs(" to ", f);
			rep_esc(f, json_string_value(json_array_get(ep, bj * b)));
			fputs("..", f);
			rep_esc(f, json_string_value(json_array_get(ep, j1)));
			if (k)
				fprintf(f, ": slowest %.4g GB/s, mean %.4g over %zu pairs", mn, sum / k, k);
			else
				fputs(": not measured or failed", f);
			fputs("</title></rect>\n", f);
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
	/* the scale from 0: the normal spread of ECMP (a few percent) stays one
	 * colour, a link at half its rate stands out */
	double spread_lo = lo;
	lo = 0;
	bool names = n <= 128;
	/* past REP_MATRIX_CELLS endpoints a cell is a block of b x b pairs,
	 * coloured by its slowest pair (what a diagnosis looks for): the page
	 * stays some megabytes whatever the cluster */
	size_t b = (n + REP_MATRIX_CELLS - 1) / REP_MATRIX_CELLS, nb = (n + b - 1) / b;
	int cell = nb > 128 ? 4 : nb > 64 ? 7 : nb > 16 ? 10 : 24, lab = names ? 130 : 20, size = (int)nb * cell;
	fprintf(f, "<section id=\"matrix-%d\"><h2>All-pairs bandwidth: ", idx);
	rep_esc(f, name);
	fprintf(f,
		"</h2>\n<figure><svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">"
		"<title>bandwidth between every pair (sender row, receiver column)</title>\n",
		lab + size + 120, lab + size + 40, lab + size + 120, lab + size + 40);
	if (b > 1)
		matrix_blocks(f, ep, bw, n, b, lab, cell, hi);
	for (size_t i = 0; i < n && b == 1; i++)
		for (size_t j = 0; j < n; j++) {
			json_t *v = json_array_get(json_array_get(bw, i), j);
			char col[8] = "#dddddd";
			if (i != j && json_is_number(v))
				rep_viridis((json_number_value(v) - lo) / (hi - lo), col);
			fprintf(f, "<rect x=\"%zu\" y=\"%zu\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>",
				lab + j * cell, lab + i * cell, cell, cell, col);
			rep_esc(f, json_string_value(json_array_get(ep, i)));
			fputs(" to ", f);
			rep_esc(f, json_string_value(json_array_get(ep, j)));
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
		if (names) {
			const char *small = n > 64 ? " font-size=\"6\"" : "";
			fprintf(f, "<text x=\"%d\" y=\"%zu\" class=\"tick\" text-anchor=\"end\"%s%s>", lab - 4,
				lab + i * cell + cell / 2 + 4 - (n > 64 ? 2 : 0), small,
				sus ? " font-weight=\"bold\"" : "");
			rep_esc(f, nm);
			fprintf(f, "</text><text class=\"tick\" transform=\"translate(%zu %d) rotate(-60)\"%s%s>",
				lab + i * cell + cell / 2, lab - 4, small, sus ? " font-weight=\"bold\"" : "");
			rep_esc(f, nm);
			fputs("</text>\n", f);
		}
		if (sus)
			fprintf(f,
				"<rect x=\"%d\" y=\"%zu\" width=\"%d\" height=\"%d\" class=\"suspect\"/><rect x=\"%zu\" y=\"%d\" "
				"width=\"%d\" height=\"%d\" class=\"suspect\"/>\n",
				lab, lab + i / b * cell, size, cell, lab + i / b * cell, lab, cell, size);
	}
	/* the legend: the ramp and its scale */
	int lx = lab + size + 30, ly = lab;
	for (int k = 0; k < 50; k++) {
		char col[8];
		rep_viridis(1 - k / 49.0, col);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"16\" height=\"%d\" fill=\"%s\"/>", lx, ly + k * size / 50,
			size / 50 + 1, col);
	}
	fprintf(f,
		"\n<text x=\"%d\" y=\"%d\" class=\"tick\">%.4g GB/s</text><text x=\"%d\" y=\"%d\" class=\"tick\">%.4g GB/s</text>"
		"<text x=\"%d\" y=\"%d\" class=\"axis\">sender (rows), receiver (columns)</text>\n",
		lx + 20, ly + 8, hi, lx + 20, ly + size, lo, lab, lab + size + 24);
	fputs("</svg><figcaption>bandwidth of every ordered pair", f);
	if (b > 1)
		fprintf(f,
			" (%zu endpoints: a cell is a block of %zu x %zu pairs, coloured by its slowest pair; hover "
			"for its mean and the endpoints it covers)",
			n, b, b);
	fprintf(f,
		", the colour scale from 0 to the highest (%.4g GB/s; the lowest measured %.4g GB/s); suspects "
		"outlined; grey: not measured</figcaption></figure></section>\n",
		hi, spread_lo);
}

/* the page, whole */
void rep_page_head(FILE *f)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fabscope report</title>\n"
	      "<style>body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}"
	      "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:2px 8px;text-align:right}"
	      "th{background:#eee}.plot{fill:#fff;stroke:#888}.grid{stroke:#e4e4e4}.tick{font-size:11px;fill:#333}"
	      ".axis{font-size:13px;fill:#111}.suspect{fill:none;stroke:#000;stroke-width:2}"
	      ".toc li{display:inline-block;margin-right:1.5em}.ok{color:#006e3c}.node{fill:#333}.pause{fill:#D55E00}.suspect-link{stroke:#000;stroke-width:9;stroke-opacity:.35}.ecn{fill:#CC79A7}figure{margin:1em 0}figcaption{font-size:12px;color:#555}</style></head><body>\n"
	      "<h1>fabscope report</h1>\n",
	      f);
}

/* the table of contents: a link to each <section id="..."><h2>...</h2> of
 * the body, with the heading's text */
static void contents(FILE *f, const char *body)
{
	fputs("<nav class=\"toc\"><h2>Contents</h2><ul>\n", f);
	for (const char *p = body; (p = strstr(p, "<section id=\"")); p++) {
		const char *id = p + 13, *q = strchr(id, '"'), *h = strstr(id, "<h2>"),
			   *he = h ? strstr(h, "</h2>") : NULL;
		if (!q || !h || !he)
			break;
		fprintf(f, "<li><a href=\"#%.*s\">%.*s</a></li>\n", (int)(q - id), id, (int)(he - h - 4), h + 4);
	}
	fputs("</ul></nav>\n", f);
}

/* scalars of a config (nested objects) as "path=value" into out */
static void flatten(const json_t *o, const char *prefix, json_t *out)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v)
	{
		char path[256], val[128];
		snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", k);
		if (json_is_object(v)) {
			flatten(v, path, out);
			continue;
		}
		if (json_is_string(v))
			snprintf(val, sizeof val, "%s", json_string_value(v));
		else if (json_is_integer(v))
			snprintf(val, sizeof val, "%lld", (long long)json_integer_value(v));
		else if (json_is_real(v))
			snprintf(val, sizeof val, "%g", json_real_value(v));
		else if (json_is_boolean(v))
			snprintf(val, sizeof val, "%s", json_is_true(v) ? "true" : "false");
		else
			continue;
		json_object_set_new(out, path, json_string(val));
	}
}

/* each document's label: the one given, else its name and, where the
 * documents' scenarios differ, what differs ("transport=ib, seed=2"; up to
 * four keys, by their last part) */
static char **make_labels(json_t *const *docs, const char *const *names, const char *const *given, int n)
{
	char **lab = fab_xcalloc((size_t)n, sizeof *lab);
	json_t **flat = fab_xcalloc((size_t)n, sizeof *flat);
	for (int i = 0; i < n; i++) {
		flat[i] = json_object();
		flatten(json_object_get(docs[i], "config"), "", flat[i]);
	}
	for (int i = 0; i < n; i++) {
		char buf[512];
		size_t at = (size_t)snprintf(buf, sizeof buf, "%s", given && given[i] ? given[i] : names[i]);
		int shown = 0;
		/* the keys people compare runs by first, then the rest in order */
		static const char *const first[] = {"fabric.transport",
						    "topology.oversubscription",
						    "engine",
						    "run.seed",
						    "fabric.cc",
						    "flow.queues",
						    "topology.kind",
						    "topology.rail_optimized",
						    "fabric.ecmp.hash",
						    "fabric.pfc.enabled",
						    "fabric.dcqcn.enabled"};
		for (size_t pass = 0; pass < FAB_ARRAY_LEN(first) + 1; pass++) {
			const char *k;
			json_t *v;
			json_object_foreach(flat[i], k, v)
			{
				bool listed = false;
				for (size_t q = 0; q < FAB_ARRAY_LEN(first); q++)
					listed |= !strcmp(k, first[q]);
				if (pass < FAB_ARRAY_LEN(first) ? strcmp(k, first[pass]) : listed)
					continue;
				bool differs = false;
				for (int j = 0; j < n && !differs; j++) {
					const json_t *w = json_object_get(flat[j], k);
					differs = !w || strcmp(json_string_value(w), json_string_value(v));
				}
				if (!differs || shown == 4 || (given && given[i]) || at >= sizeof buf)
					continue;
				const char *last = strrchr(k, '.'), *val = json_string_value(v);
				at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s=%s", shown ? ", " : " (",
						       last ? last + 1 : k, *val ? val : "default");
				shown++;
			}
		}
		if (shown && at < sizeof buf)
			snprintf(buf + at, sizeof buf - at, ")");
		lab[i] = strdup(buf);
	}
	for (int i = 0; i < n; i++)
		json_decref(flat[i]);
	free(flat);
	return lab;
}

static int report_page(FILE *f, json_t *const *docs, const char *const *files, const char *const *given, int ndocs,
		       struct fab_err *err)
{
	for (int i = 0; i < ndocs; i++)
		if (fab_diag_validate(docs[i], files[i], err))
			return FAB_EINVAL;
	char **lab = make_labels(docs, files, given, ndocs);
	const char *const *names = (const char *const *)lab;
	struct fab_diag_params p;
	struct fab_diagnosis d = {0};
	fab_diag_defaults(&p);
	if (fab_diagnose(docs, ndocs, NULL, &p, &d, err))
		return FAB_EINVAL;
	rep_page_head(f);
	/* the sections first, then their contents before them */
	char *body = NULL;
	size_t blen = 0;
	FILE *b = open_memstream(&body, &blen);
	if (!b)
		abort(); /* (no memory for the page's buffer) */
	section_documents(b, docs, names, ndocs);
	section_suspects(b, docs, ndocs, &d);
	section_busbw(b, docs, names, ndocs);
	for (int i = 0; i < ndocs; i++) {
		if (!strcmp(rep_jstr(docs[i], "kind"), "sim") && json_object_get(docs[i], "flows"))
			section_sim(b, docs[i], names[i], i + 1, &d);
		section_jobs(b, docs[i], names[i], i + 1);
		section_matrix(b, docs[i], names[i], i + 1, &d);
	}
	bool bad = fclose(b) != 0;
	contents(f, body);
	fwrite(body, 1, blen, f);
	free(body);
	fputs("</body></html>\n", f);
	fab_diagnosis_free(&d);
	for (int i = 0; i < ndocs; i++)
		free(lab[i]);
	free(lab);
	return bad ? fab_err_set(err, FAB_EIO, "report: out of memory") : ferror(f) ? FAB_EIO : 0;
}

int fab_report_write(FILE *f, json_t *const *docs, const char *const *names, const char *const *labels, int ndocs,
		     const char *only, struct fab_err *err)
{
	if (!only)
		return report_page(f, docs, names, labels, ndocs, err);
	/* one section: the page is made whole, then cut to its head, that
	 * section and its end; an id it lacks writes nothing */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return fab_err_set(err, FAB_EIO, "report: out of memory");
	int rc = report_page(m, docs, names, labels, ndocs, err);
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

int fab_report_compare(FILE *f, const json_t *cmp)
{
	json_t *ds = json_object_get(cmp, "designs"), *d;
	bool coll = !strcmp(rep_jstr(cmp, "workload"), "coll");
	size_t i;
	rep_page_head(f);
	fputs("<section id=\"plan-compare\"><h2>Designs compared</h2>\n<table><tr><th>design</th><th>tiers</th>"
	      "<th>switches</th><th>transceivers</th><th>oversubscription</th><th>bisection (Tbps)</th>"
	      "<th>cost (USD)</th><th>power (kW)</th><th>USD a GPU</th>",
	      f);
	fprintf(f, "<th>%s</th></tr>\n", coll ? "busbw (GB/s)" : "step (ms)");
	json_array_foreach(ds, i, d)
	{
		double gpus = rep_jnum(json_object_get(d, "plan"), "gpus");
		json_t *m = json_object_get(d, coll ? "busbw_GBps" : "step_ms");
		fputs("<tr><td>", f);
		rep_esc(f, rep_jstr(d, "name"));
		fprintf(f,
			"</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%.3g:1</td><td>%.4g</td><td>%.0f</td><td>%.1f</td>"
			"<td>%.0f</td><td>",
			(long long)json_integer_value(json_object_get(d, "tiers")),
			(long long)json_integer_value(json_object_get(d, "switches")),
			(long long)json_integer_value(json_object_get(d, "transceivers")),
			rep_jnum(d, "oversubscription"), rep_jnum(d, "bisection_bps") / 1e12, rep_jnum(d, "usd"),
			rep_jnum(d, "watts") / 1e3, rep_jnum(d, "usd") / gpus);
		if (m)
			fprintf(f, "%.4g", json_number_value(m));
		else
			rep_esc(f, rep_jstr(d, "status"));
		if (m && json_object_get(d, "seeds")) /* the median over seeds, and their range */
			fprintf(f, " (median of %zu seeds: %.4g to %.4g)", json_array_size(json_object_get(d, "seeds")),
				rep_jnum(d, "min"), rep_jnum(d, "max"));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	rep_bars(f, "network cost per design (million USD)", "M USD", ds, "usd", 1e6, false);
	rep_bars(f, "network power per design (kW)", "kW", ds, "watts", 1e3, false);
	if (coll)
		rep_bars(f, "bus bandwidth per design (GB/s)", "GB/s", ds, "busbw_GBps", 1, true);
	else
		rep_bars(f, "training step per design (ms)", "ms", ds, "step_ms", 1, true);
	fputs("</section>\n</body></html>\n", f);
	return ferror(f) ? FAB_EIO : 0;
}
