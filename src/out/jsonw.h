/*
 * jsonw.h - JSON written as it is produced, byte for byte as jansson's
 * json_dumpf writes the same values: JSON_INDENT(n) or JSON_COMPACT,
 * JSON_REAL_PRECISION(p), keys in the order they are given (jansson's own
 * order, insertion), strings escaped as jansson escapes them, a string
 * that is not UTF-8 or a real that is not finite left out with its key (as
 * json_string and json_real refuse them and json_object_set_new then sets
 * nothing).  For documents too long to build as jansson values first (a
 * run's flows, ports and series), and for the parts that are jansson
 * values, written in place by walking them (jw_json).
 *
 * Under it, bytes to a FILE through one buffer (struct jw_out), which the
 * CSV tables write through too, with unsigned integers in decimal written
 * in place (base/dec.h).
 */
#ifndef FAB_JSONW_H
#define FAB_JSONW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../base/dec.h"

/* ---- bytes to a FILE through one buffer ---- */

#define JW_BUF (1u << 16)

struct jw_out {
	FILE *f;
	size_t n;
	bool bad; /* a write failed */
	char b[JW_BUF];
};

void jw_out_init(struct jw_out *o, FILE *f);
void jw_out_flush(struct jw_out *o);
/* flushed; 0, or FAB_EIO when one of its writes failed */
int jw_out_end(struct jw_out *o);
void jw_out_put_long(struct jw_out *o, const char *p, size_t n);

/* room for n bytes (at most JW_BUF) at o->b + o->n; the caller adds what
 * it wrote to o->n */
static inline char *jw_out_room(struct jw_out *o, size_t n)
{
	if (sizeof o->b - o->n < n)
		jw_out_flush(o);
	return o->b + o->n;
}

static inline void jw_out_put(struct jw_out *o, const char *p, size_t n)
{
	if (n <= sizeof o->b - o->n) {
		memcpy(o->b + o->n, p, n);
		o->n += n;
		return;
	}
	jw_out_put_long(o, p, n);
}

/* v in decimal, after a minus sign when neg, then c unless it is 0: at
 * most 22 bytes, written in place, the digits from the last (counted
 * first: built on the stack and copied, the copy's wide loads waited for
 * the digits' narrow stores, 3% of the flow engine's incast command) */
static inline char *jw_dec_at(char *p, uint64_t v, bool neg, char c)
{
	*p = '-';
	p += neg;
	p += fab_dec_len(v);
	fab_dec_u64(p, v);
	*p = c;
	return p + (c != 0);
}

static inline void jw_out_dec(struct jw_out *o, uint64_t v, bool neg, char c)
{
	char *p = jw_out_room(o, 22);
	o->n += (size_t)(jw_dec_at(p, v, neg, c) - p);
}

/* "%llu", and the same followed by a comma (a CSV field) */
static inline void jw_out_u64(struct jw_out *o, uint64_t v)
{
	jw_out_dec(o, v, false, 0);
}

static inline void jw_out_u64c(struct jw_out *o, uint64_t v)
{
	jw_out_dec(o, v, false, ',');
}

/* ---- the JSON writer ---- */

struct jw {
	unsigned indent; /* spaces a level (JSON_INDENT); 0: one line */
	bool compact;    /* JSON_COMPACT: no space after ',' and ':' */
	int prec;        /* reals' significant digits (JSON_REAL_PRECISION; 17) */
	unsigned depth;  /* containers open */
	bool first;      /* the innermost has no member yet */
	const char *key; /* the next value's key (NULL: none, in an array or at the top) */
	size_t keylen;
	struct jw_out o;
};

/* flags: jansson's JSON_INDENT(n), JSON_COMPACT, JSON_REAL_PRECISION(p);
 * the others (JSON_SORT_KEYS, JSON_ENSURE_ASCII, JSON_ESCAPE_SLASH, ...)
 * are not written as jansson would: none of them is used */
void jw_init(struct jw *w, FILE *f, size_t flags);
/* flushed; 0, or FAB_EIO when one of its writes failed */
int jw_end(struct jw *w);

/* the next value's key: kept (not copied) until that value is written */
static inline void jw_key(struct jw *w, const char *key)
{
	w->key = key;
	w->keylen = strlen(key);
}

/* a container opened ('{', '[') and closed ('}', ']'): jw_obj and
 * jw_obj_end, jw_arr and jw_arr_end below */
void jw_open(struct jw *w, char c);
void jw_close(struct jw *w, char c);
void jw_int(struct jw *w, long long v);   /* "%lld", as a json_int_t */
void jw_real(struct jw *w, double v);     /* not finite: left out */
void jw_str(struct jw *w, const char *s); /* not UTF-8: left out */
void jw_strn(struct jw *w, const char *s, size_t len);
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);
/* a jansson value, in place (at this depth, after the key if one is set),
 * walked: the bytes json_dumpf would write of it inside the document */
void jw_json(struct jw *w, const json_t *j);

/* ---- members with literal keys, in one piece (the long tables) ----
 *
 * key: a literal that JSON does not escape (letters, digits, '_'); the
 * line break, the indentation, the key and the value written into one
 * stretch of the buffer. */

/* (always inlined: each key's length then folds, and the copies with it) */
#define JW_INLINE static inline __attribute__((always_inline))

/* the member's lead (",\n      \"key\": ") with room for `more` bytes
 * after it; NULL where the lead would not fit the buffer (then written
 * the long way, jw_key and a value).  The line break and up to 31 spaces
 * go as one 32-byte copy, of which the indentation's are kept. */
JW_INLINE char *jw_lead(struct jw *w, const char *key, size_t kn, size_t more)
{
	size_t pad = (size_t)w->depth * w->indent;
	if (pad > 31 || kn + more > 1024 || !w->depth || !w->indent || w->compact)
		return NULL;
	char *p = jw_out_room(&w->o, 38 + kn + more);
	*p = ',';
	p += !w->first;
	memcpy(p, "\n                               ", 32);
	p += pad + 1;
	*p++ = '"';
	memcpy(p, key, kn);
	p += kn;
	memcpy(p, "\": ", 3);
	w->first = false;
	return p + 3;
}

JW_INLINE void jw_kint(struct jw *w, const char *key, long long v)
{
	size_t kn = strlen(key); /* (a literal: folded where inlined) */
	char *p = jw_lead(w, key, kn, 22);
	if (!p) {
		jw_key(w, key);
		jw_int(w, v);
		return;
	}
	unsigned long long m = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	w->o.n = (size_t)(jw_dec_at(p, m, v < 0, 0) - w->o.b);
}

JW_INLINE void jw_knull(struct jw *w, const char *key)
{
	size_t kn = strlen(key);
	char *p = jw_lead(w, key, kn, 4);
	if (!p) {
		jw_key(w, key);
		jw_null(w);
		return;
	}
	memcpy(p, "null", 4);
	w->o.n = (size_t)(p + 4 - w->o.b);
}

/* an object in an array, as a table's row: ",\n    {" and "\n    }" in
 * one piece each */
JW_INLINE void jw_obj(struct jw *w)
{
	size_t pad = (size_t)w->depth * w->indent;
	if (w->key || pad > 31 || !w->depth || !w->indent || w->compact) {
		jw_open(w, '{');
		return;
	}
	char *p = jw_out_room(&w->o, 34);
	*p = ',';
	p += !w->first;
	memcpy(p, "\n                               ", 32);
	p[pad + 1] = '{';
	w->o.n = (size_t)(p + pad + 2 - w->o.b);
	w->depth++;
	w->first = true;
}

JW_INLINE void jw_obj_end(struct jw *w)
{
	size_t pad = (size_t)(w->depth - 1) * w->indent;
	if (w->first || pad > 31 || !w->indent) {
		jw_close(w, '}');
		return;
	}
	char *p = jw_out_room(&w->o, 33);
	memcpy(p, "\n                               ", 32);
	p[pad + 1] = '}';
	w->o.n += pad + 2;
	w->depth--;
}

static inline void jw_arr(struct jw *w)
{
	jw_open(w, '[');
}

static inline void jw_arr_end(struct jw *w)
{
	jw_close(w, ']');
}

/* a string of at most 64 bytes that JSON does not escape (printable
 * ASCII but '"' and '\\') in one piece too; any other the long way */
JW_INLINE void jw_kstr(struct jw *w, const char *key, const char *s)
{
	size_t kn = strlen(key), n = 0;
	for (unsigned char c; n < 64 && (c = (unsigned char)s[n]) >= 0x20 && c < 0x80 && c != '"' && c != '\\';)
		n++;
	char *p = s[n] ? NULL : jw_lead(w, key, kn, n + 2);
	if (!p) {
		jw_key(w, key);
		jw_str(w, s);
		return;
	}
	*p++ = '"';
	memcpy(p, s, n);
	p[n] = '"';
	w->o.n = (size_t)(p + n + 1 - w->o.b);
}

#endif
