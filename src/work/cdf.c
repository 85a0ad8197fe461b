/*
 * cdf.c - flow-size distributions (cdf.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/tok.h"
#include "cdf.h"

/* WebSearch: sizes in bytes, cumulative percent */
static const double websearch[][2] = {
	{0, 0},       {10000, 15},   {20000, 20},   {30000, 30},   {50000, 40},    {80000, 53},
	{200000, 60}, {1000000, 70}, {2000000, 80}, {5000000, 90}, {10000000, 97}, {30000000, 100},
};

/* FB_Hadoop */
static const double fb_hadoop[][2] = {
	{0, 0},      {100, 1},     {200, 2},     {300, 5},        {350, 15},     {400, 20},       {500, 30},
	{600, 40},   {700, 50},    {1000, 60},   {2000, 67},      {7000, 70},    {30000, 72},     {50000, 82},
	{80000, 87}, {120000, 90}, {300000, 95}, {1000000, 97.5}, {2000000, 99}, {10000000, 100},
};

static void from_table(struct fab_cdf *c, const double (*tab)[2], size_t n, const char *name)
{
	c->n = n;
	c->bytes = fab_xcalloc(n, sizeof *c->bytes);
	c->percent = fab_xcalloc(n, sizeof *c->percent);
	for (size_t i = 0; i < n; i++) {
		c->bytes[i] = tab[i][0];
		c->percent[i] = tab[i][1];
	}
	snprintf(c->name, sizeof c->name, "%s", name);
}

static int read_file(struct fab_cdf *c, const char *path, struct fab_err *err)
{
	struct fab_tok t;
	int rc = fab_tok_open(&t, path, err);
	if (rc)
		return rc;
	size_t cap = 0;
	for (;;) {
		double v[2];
		for (int k = 0; k < 2; k++) {
			rc = fab_tok_next(&t, err);
			if (rc < 0)
				goto out;
			if (rc == 0 && k == 0)
				goto done;
			if (rc == 0) {
				rc = fab_err_set(err, FAB_EINVAL, "%s:%u:%u: a size without its percent", path, t.line,
						 t.col);
				goto out;
			}
			if (k == 0 && !fab_tok_starts_line(&t)) {
				rc = fab_tok_err(&t, err, "expected one 'SIZE PERCENT' pair per line");
				goto out;
			}
			char why[160];
			if (fab_parse_double(t.tok, &v[k], why, sizeof why)) {
				rc = fab_tok_err(&t, err, "%s: %s", k ? "percent" : "size", why);
				goto out;
			}
		}
		char what[80] = "";
		size_t i = c->n;
		if (v[0] < 0 || v[0] > 1e15)
			snprintf(what, sizeof what, "a size from 0 to 1e15 bytes");
		else if (v[1] < 0 || v[1] > 100)
			snprintf(what, sizeof what, "a percent from 0 to 100");
		else if (i == 0 && v[1] != 0)
			snprintf(what, sizeof what, "the first point at 0 percent");
		else if (i > 0 && (v[0] <= c->bytes[i - 1] || v[1] <= c->percent[i - 1]))
			snprintf(what, sizeof what, "sizes and percents that increase from line to line");
		if (what[0]) {
			rc = fab_tok_err(&t, err, "expected %s", what);
			goto out;
		}
		if (i == cap) {
			cap = cap ? 2 * cap : 32;
			c->bytes = fab_xrealloc(c->bytes, cap, sizeof *c->bytes);
			c->percent = fab_xrealloc(c->percent, cap, sizeof *c->percent);
		}
		c->bytes[i] = v[0];
		c->percent[i] = v[1];
		c->n++;
	}
done:
	rc = 0;
	if (c->n < 2 || c->percent[c->n - 1] != 100)
		rc = fab_err_set(err, FAB_EINVAL,
				 "%s: a distribution needs at least two points, the last at 100 percent", path);
out:
	fab_tok_close(&t);
	return rc;
}

int fab_cdf_load(struct fab_cdf *c, const char *name, struct fab_err *err)
{
	memset(c, 0, sizeof *c);
	if (!strcmp(name, "websearch")) {
		from_table(c, websearch, FAB_ARRAY_LEN(websearch), name);
		return 0;
	}
	if (!strcmp(name, "fb_hadoop")) {
		from_table(c, fb_hadoop, FAB_ARRAY_LEN(fb_hadoop), name);
		return 0;
	}
	int rc = read_file(c, name, err);
	if (rc) {
		fab_cdf_free(c);
		return rc;
	}
	const char *base = strrchr(name, '/');
	snprintf(c->name, sizeof c->name, "%s", base ? base + 1 : name);
	return 0;
}

void fab_cdf_free(struct fab_cdf *c)
{
	free(c->bytes);
	free(c->percent);
	memset(c, 0, sizeof *c);
}

double fab_cdf_mean(const struct fab_cdf *c)
{
	double s = 0;
	for (size_t i = 1; i < c->n; i++)
		s += (c->bytes[i] + c->bytes[i - 1]) / 2 * (c->percent[i] - c->percent[i - 1]);
	return s / 100;
}

double fab_cdf_at(const struct fab_cdf *c, double p)
{
	for (size_t i = 1; i < c->n; i++)
		if (p <= c->percent[i])
			return c->bytes[i - 1] +
				(c->bytes[i] - c->bytes[i - 1]) / (c->percent[i] - c->percent[i - 1]) *
				(p - c->percent[i - 1]);
	return c->bytes[c->n - 1];
}

fab_bytes fab_cdf_draw(const struct fab_cdf *c, struct fab_rng *r)
{
	double v = fab_cdf_at(c, fab_rng_unit(r) * 100);
	return v < 1 ? 1 : (fab_bytes)v;
}
