/*
 * jsonw.c - JSON written as it is produced, as jansson writes it (see
 * jsonw.h): jansson 2.14's dump.c, value by value.
 */
#include <locale.h>
#include <math.h>

#include "jsonw.h"
#include "../base/base.h"

/* ---- bytes to a FILE through one buffer ---- */

void jw_out_init(struct jw_out *o, FILE *f)
{
	o->f = f;
	o->n = 0;
	o->bad = false;
}

void jw_out_flush(struct jw_out *o)
{
	if (o->n && fwrite(o->b, 1, o->n, o->f) != o->n)
		o->bad = true;
	o->n = 0;
}

int jw_out_end(struct jw_out *o)
{
	jw_out_flush(o);
	return o->bad ? FAB_EIO : 0;
}

void jw_out_put_long(struct jw_out *o, const char *p, size_t n)
{
	while (n) {
		if (o->n == sizeof o->b)
			jw_out_flush(o);
		size_t k = FAB_MIN(n, sizeof o->b - o->n);
		memcpy(o->b + o->n, p, k);
		o->n += k;
		p += k;
		n -= k;
	}
}

/* ---- the JSON writer ---- */

void jw_init(struct jw *w, FILE *f, size_t flags)
{
	w->indent = (unsigned)(flags & JSON_MAX_INDENT);
	w->compact = (flags & JSON_COMPACT) != 0;
	w->prec = (int)((flags & JSON_REAL_PRECISION(31)) / JSON_REAL_PRECISION(1));
	if (!w->prec)
		w->prec = 17;
	w->depth = 0;
	w->first = true;
	w->key = NULL;
	w->keylen = 0;
	jw_out_init(&w->o, f);
}

int jw_end(struct jw *w)
{
	return jw_out_end(&w->o);
}

static void spaces(struct jw_out *o, size_t n)
{
	static const char sp[] = "                                                                ";
	while (n) {
		size_t k = FAB_MIN(n, sizeof sp - 1);
		jw_out_put(o, sp, k);
		n -= k;
	}
}

/* a line break and the indentation of `depth` (with JSON_INDENT) */
static void newline(struct jw *w, unsigned depth)
{
	jw_out_put(&w->o, "\n", 1);
	spaces(&w->o, (size_t)depth * w->indent);
}

/* s[0, len) as a JSON string: '"' and '\\' escaped, and the control
 * characters ("\n", "\u001F"); the rest as it is (s is UTF-8: its
 * multi-byte sequences have no byte below 0x80) */
static void quoted(struct jw_out *o, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	jw_out_put(o, "\"", 1);
	size_t from = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		jw_out_put(o, s + from, i - from);
		from = i + 1;
		char esc[6] = {'\\', (char)c, 0, 0, 0, 0};
		size_t n = 2;
		switch (c) {
		case '"':
		case '\\':
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			n = 6;
		}
		jw_out_put(o, esc, n);
	}
	jw_out_put(o, s + from, len - from);
	jw_out_put(o, "\"", 1);
}

/* Before a value: after the container's last member a comma, then the
 * line break and indentation (on one line: a space), then the key. */
static void lead(struct jw *w)
{
	if (!w->depth)
		return;
	if (!w->first)
		jw_out_put(&w->o, ",", 1);
	if (w->indent)
		newline(w, w->depth);
	else if (!w->first && !w->compact)
		jw_out_put(&w->o, " ", 1);
	w->first = false;
	if (w->key) {
		quoted(&w->o, w->key, w->keylen);
		jw_out_put(&w->o, ": ", w->compact ? 1 : 2);
		w->key = NULL;
	}
}

void jw_open(struct jw *w, char c)
{
	lead(w);
	jw_out_put(&w->o, &c, 1);
	w->depth++;
	w->first = true;
}

/* an empty container closes where it opened: "{}" */
void jw_close(struct jw *w, char c)
{
	w->depth--;
	if (!w->first && w->indent)
		newline(w, w->depth);
	jw_out_put(&w->o, &c, 1);
	w->first = false;
}

void jw_int(struct jw *w, long long v)
{
	lead(w);
	jw_out_dec(&w->o, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, v < 0, 0);
}

/* jansson's jsonp_dtostr: "%.17g" (or the precision given), the locale's
 * decimal point as '.', ".0" where it would read as an integer, and the
 * exponent without its '+' and leading zeros */
static size_t real_text(char *buf, size_t size, double v, int prec)
{
	int ret = snprintf(buf, size, "%.*g", prec, v);
	if (ret < 0 || (size_t)ret >= size)
		return 0;
	size_t len = (size_t)ret;
	char point = *localeconv()->decimal_point;
	bool dot = false, exp = false;
	for (size_t i = 0; i < len; i++) {
		if (point != '.' && buf[i] == point && !dot)
			buf[i] = '.';
		dot |= buf[i] == '.';
		exp |= buf[i] == 'e';
	}
	if (!dot && !exp) {
		if (len + 3 >= size)
			return 0;
		memcpy(buf + len, ".0", 3);
		len += 2;
	}
	char *e = memchr(buf, 'e', len);
	if (e) {
		char *start = e + 1, *end = e + 2;
		if (*start == '-')
			start++;
		while (*end == '0')
			end++;
		if (end != start) {
			memmove(start, end, len - (size_t)(end - buf) + 1);
			len -= (size_t)(end - start);
		}
	}
	return len;
}

void jw_real(struct jw *w, double v)
{
	char buf[100];
	size_t n = isfinite(v) ? real_text(buf, sizeof buf, v, w->prec) : 0;
	if (!n) {
		w->key = NULL; /* json_real refuses it: nothing set */
		return;
	}
	lead(w);
	jw_out_put(&w->o, buf, n);
}

/* jansson's utf8_check_string: each sequence of its length, no overlong
 * form, no surrogate, nothing past U+10FFFF */
static bool utf8_valid(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char u = s[i];
		size_t n = u < 0x80 ? 1 : u < 0xC2 ? 0 : u < 0xE0 ? 2 : u < 0xF0 ? 3 : u < 0xF5 ? 4 : 0;
		if (!n || n > len - i)
			return false;
		uint32_t v = n == 2 ? u & 0x1Fu : n == 3 ? u & 0xFu : u & 0x7u;
		for (size_t k = 1; k < n; k++) {
			if (s[i + k] < 0x80 || s[i + k] > 0xBF)
				return false;
			v = (v << 6) + (s[i + k] & 0x3Fu);
		}
		if (n > 1 &&
		    (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) || (n == 2 && v < 0x80) || (n == 3 && v < 0x800) ||
		     (n == 4 && v < 0x10000)))
			return false;
		i += n;
	}
	return true;
}

void jw_strn(struct jw *w, const char *s, size_t len)
{
	if (!s || !utf8_valid((const unsigned char *)s, len)) {
		w->key = NULL; /* json_stringn refuses it: nothing set */
		return;
	}
	lead(w);
	quoted(&w->o, s, len);
}

void jw_str(struct jw *w, const char *s)
{
	jw_strn(w, s, s ? strlen(s) : 0);
}

void jw_bool(struct jw *w, bool v)
{
	lead(w);
	jw_out_put(&w->o, v ? "true" : "false", v ? 4 : 5);
}

void jw_null(struct jw *w)
{
	lead(w);
	jw_out_put(&w->o, "null", 4);
}

void jw_json(struct jw *w, const json_t *j)
{
	json_t *v;
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		const char *key;
		jw_obj(w);
		json_object_foreach((json_t *)j, key, v)
		{
			w->key = key;
#if JANSSON_VERSION_HEX >= 0x020e00
			w->keylen = json_object_iter_key_len(json_object_key_to_iter(key));
#else
			w->keylen = strlen(key);
#endif
			jw_json(w, v);
		}
		jw_obj_end(w);
		break;
	}
	case JSON_ARRAY: {
		size_t i;
		jw_arr(w);
		json_array_foreach(j, i, v) jw_json(w, v);
		jw_arr_end(w);
		break;
	}
	case JSON_STRING: /* (UTF-8 already: jansson checked it) */
		lead(w);
		quoted(&w->o, json_string_value(j), json_string_length(j));
		break;
	case JSON_INTEGER:
		jw_int(w, (long long)json_integer_value(j));
		break;
	case JSON_REAL:
		jw_real(w, json_real_value(j));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		jw_bool(w, json_is_true(j));
		break;
	case JSON_NULL:
		jw_null(w);
		break;
	}
}
