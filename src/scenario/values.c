/*
 * values.c - one key's value from its text and back: integers, rates, times
 * and sizes with their units, booleans, numbers, choices, ratios, priority
 * lists, paths, names and GPU lists, each checked against the key's range
 * with a message that says what was expected.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

static int parse_uint(const struct fab_key_def *k, char *field, const char *text, char *why, size_t wl)
{
	uint64_t u = 0;
	int rc = fab_parse_uint(text, &u, why, wl);
	if (rc)
		return rc;
	if ((double)u < k->min || (double)u > k->max) {
		snprintf(why, wl, "expected an integer from %.0f to %.0f, got %s", k->min, k->max, text);
		return FAB_EINVAL;
	}
	if (k->type == K_U32)
		*(uint32_t *)field = (uint32_t)u;
	else if (k->type == K_U8)
		*(uint8_t *)field = (uint8_t)u;
	else
		*(uint64_t *)field = u;
	return 0;
}

/* a rate, a time or a size, with its unit */
static int parse_unit(const struct fab_key_def *k, char *field, const char *text, char *why, size_t wl)
{
	uint64_t u = 0;
	{
		int rc = k->type == K_RATE  ? fab_parse_rate(text, &u, why, wl)
			: k->type == K_TIME ? fab_parse_time(text, &u, why, wl)
					    : fab_parse_bytes(text, &u, why, wl);
		if (rc)
			return rc;
		bool zero_ok = k->def && !strcmp(k->def, "0");
		if (!(zero_ok && u == 0) && ((double)u < k->min || (double)u > k->max)) {
			char lo[32], hi[32];
			if (k->type == K_RATE) {
				fab_fmt_rate((uint64_t)k->min, lo, sizeof lo);
				fab_fmt_rate((uint64_t)k->max, hi, sizeof hi);
			} else if (k->type == K_TIME) {
				fab_fmt_time((uint64_t)k->min, lo, sizeof lo);
				fab_fmt_time((uint64_t)k->max, hi, sizeof hi);
			} else {
				fab_fmt_bytes((uint64_t)k->min, lo, sizeof lo);
				fab_fmt_bytes((uint64_t)k->max, hi, sizeof hi);
			}
			/* a bare size counts bytes: say so where the unit was likely forgotten */
			bool bare = k->type == K_BYTES && text[strspn(text, "0123456789._ ")] == 0;
			snprintf(why, wl, "expected a value from %s to %s%s, got %s%s%s%s", lo, hi,
				 zero_ok ? " (or 0)" : "", text,
				 bare ? " (a bare number counts bytes: give its unit, e.g. " : "", bare ? text : "",
				 bare ? "MiB)" : "");
			return FAB_EINVAL;
		}
		*(uint64_t *)field = u;
		return 0;
	}
}

static int parse_enum(const struct fab_key_def *k, char *field, const char *text, char *why, size_t wl)
{
	const char *c = k->choices;
	int idx = 0;
	size_t tl = strlen(text);
	while (c && *c) {
		const char *bar = strchr(c, '|');
		size_t len = bar ? (size_t)(bar - c) : strlen(c);
		if (len == tl && !strncmp(c, text, len)) {
			*(int *)field = idx;
			return 0;
		}
		idx++;
		c = bar ? bar + 1 : NULL;
	}
	snprintf(why, wl, "expected one of %s, got \"%s\"", k->choices, text);
	return FAB_EINVAL;
}

static int parse_ratio(char *field, const char *text, char *why, size_t wl)
{
	uint32_t *nd = (uint32_t *)field;
	if (!*text) {
		nd[0] = nd[1] = 0;
		return 0;
	}
	return fab_parse_ratio(text, &nd[0], &nd[1], why, wl);
}

static int parse_priomask(char *field, const char *text, char *why, size_t wl)
{
	uint8_t mask = 0;
	const char *p = text;
	while (*p == ' ' || *p == '[')
		p++;
	while (*p && *p != ']') {
		if (*p < '0' || *p > '7' || (p[1] >= '0' && p[1] <= '9')) {
			snprintf(why, wl, "expected a list of priorities 0..7 such as [3], got \"%s\"", text);
			return FAB_EINVAL;
		}
		mask |= (uint8_t)(1u << (*p - '0'));
		p++;
		while (*p == ' ' || *p == ',')
			p++;
	}
	*(uint8_t *)field = mask;
	return 0;
}

static int parse_u32list(const struct fab_key_def *k, char *field, const char *text, char *why, size_t wl)
{
	uint32_t **list = (uint32_t **)field;
	uint32_t *count = (uint32_t *)(field + sizeof(uint32_t *));
	free(*list);
	*list = NULL;
	*count = 0;
	const char *p = text;
	while (*p == ' ' || *p == '[')
		p++;
	while (*p && *p != ']') {
		char *end;
		errno = 0;
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || errno || v > (unsigned long)k->max) {
			snprintf(why, wl, "expected a list of GPU numbers such as [0, 1, 8, 9], got \"%s\"", text);
			free(*list);
			*list = NULL;
			*count = 0;
			return FAB_EINVAL;
		}
		*list = fab_xrealloc(*list, *count + 1, sizeof **list);
		(*list)[(*count)++] = (uint32_t)v;
		p = end;
		while (*p == ' ' || *p == ',')
			p++;
	}
	return 0;
}

/* Parses text into the field of k at base.  why gets the reason. */
int fab_config_parse_value(const struct fab_key_def *k, void *base, const char *text, char *why, size_t wl)
{
	char *field = (char *)base + k->off;
	double d = 0;
	bool b;
	int rc = 0;
	switch (k->type) {
	case K_U32:
	case K_U64:
	case K_U8:
		return parse_uint(k, field, text, why, wl);
	case K_RATE:
	case K_TIME:
	case K_BYTES:
		return parse_unit(k, field, text, why, wl);
	case K_BOOL:
		rc = fab_parse_bool(text, &b, why, wl);
		if (!rc)
			*(bool *)field = b;
		return rc;
	case K_DOUBLE:
		rc = fab_parse_double(text, &d, why, wl);
		if (rc)
			return rc;
		if (d < k->min || d > k->max || d != d) {
			snprintf(why, wl, "expected a number from %g to %g, got %s", k->min, k->max, text);
			return FAB_EINVAL;
		}
		*(double *)field = d;
		return 0;
	case K_ENUM:
		return parse_enum(k, field, text, why, wl);
	case K_RATIO:
		return parse_ratio(field, text, why, wl);
	case K_PRIOMASK:
		return parse_priomask(field, text, why, wl);
	case K_PATH: {
		char **s = (char **)field;
		free(*s);
		*s = *text ? fab_xstrdup(text) : NULL;
		return 0;
	}
	case K_STR32:
		if (strlen(text) >= 32) {
			snprintf(why, wl, "at most 31 characters, got \"%s\"", text);
			return FAB_EINVAL;
		}
		snprintf(field, 32, "%s", text);
		return 0;
	case K_U32LIST:
		return parse_u32list(k, field, text, why, wl);
	}
	snprintf(why, wl, "internal: unknown key type");
	return FAB_EINTERNAL;
}

void fab_config_value_text(const struct fab_key_def *k, const void *base, char *buf, size_t len)
{
	const char *field = (const char *)base + k->off;
	switch (k->type) {
	case K_U32:
		snprintf(buf, len, "%u", *(const uint32_t *)field);
		return;
	case K_U8:
		snprintf(buf, len, "%u", *(const uint8_t *)field);
		return;
	case K_U64:
		snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)field);
		return;
	case K_RATE:
		fab_fmt_rate(*(const uint64_t *)field, buf, len);
		return;
	case K_TIME:
		fab_fmt_time(*(const uint64_t *)field, buf, len);
		return;
	case K_BYTES:
		fab_fmt_bytes(*(const uint64_t *)field, buf, len);
		return;
	case K_BOOL:
		snprintf(buf, len, "%s", *(const bool *)field ? "true" : "false");
		return;
	case K_DOUBLE:
		snprintf(buf, len, "%.17g", *(const double *)field);
		return;
	case K_ENUM: {
		int idx = *(const int *)field;
		const char *c = k->choices;
		for (int i = 0; i < idx && c; i++) {
			c = strchr(c, '|');
			if (c)
				c++;
		}
		size_t l = c ? strcspn(c, "|") : 0;
		snprintf(buf, len, "%.*s", (int)l, c ? c : "");
		return;
	}
	case K_RATIO: {
		const uint32_t *nd = (const uint32_t *)field;
		if (nd[0])
			snprintf(buf, len, "%u:%u", nd[0], nd[1]);
		else
			snprintf(buf, len, "%s", "");
		return;
	}
	case K_PRIOMASK: {
		uint8_t m = *(const uint8_t *)field;
		size_t o = 0;
		o += (size_t)snprintf(buf + o, len - o, "[");
		for (unsigned i = 0; i < 8 && o < len; i++)
			if (m & (1u << i))
				o += (size_t)snprintf(buf + o, len - o, "%s%u", o > 1 ? ", " : "", i);
		if (o < len)
			snprintf(buf + o, len - o, "]");
		return;
	}
	case K_PATH: {
		const char *s = *(char *const *)field;
		snprintf(buf, len, "%s", s ? s : "");
		return;
	}
	case K_STR32:
		snprintf(buf, len, "%s", field);
		return;
	case K_U32LIST: {
		const uint32_t *list = *(uint32_t *const *)field;
		uint32_t count = *(const uint32_t *)(field + sizeof(uint32_t *));
		size_t o = (size_t)snprintf(buf, len, "[");
		for (uint32_t i = 0; i < count && o + 12 < len; i++)
			o += (size_t)snprintf(buf + o, len - o, "%s%u", i ? ", " : "", list[i]);
		if (o < len)
			snprintf(buf + o, len - o, "]");
		return;
	}
	}
	buf[0] = 0;
}

/* ---- the walk ---- */
