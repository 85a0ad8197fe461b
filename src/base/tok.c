/*
 * tok.c - the token reader of tok.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tok.h"

int fab_read_text(const char *path, const char *what, size_t max, bool pipes, char **out, size_t *len,
		  struct fab_err *err)
{
	*out = NULL;
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return fab_err_set(err, FAB_EIO, "%s: cannot open %s: %s", path, what, strerror(errno));
	struct stat st;
	if (fstat(fileno(f), &st) || !(S_ISREG(st.st_mode) || (pipes && S_ISFIFO(st.st_mode)))) {
		fclose(f);
		return fab_err_set(err, FAB_EIO, "%s: cannot read %s: %s", path, what,
				   S_ISDIR(st.st_mode) ? "a directory"
					   : pipes     ? "not a regular file or a pipe"
						       : "not a regular file");
	}
	size_t cap = 4096, n = 0;
	char *buf = fab_xrealloc(NULL, cap, 1);
	for (;;) {
		if (n + 1 == cap) {
			if (cap > max) {
				fclose(f);
				free(buf);
				return fab_err_set(err, FAB_EINVAL, "%s: %s larger than %zu MiB", path, what,
						   max >> 20);
			}
			cap *= 2;
			buf = fab_xrealloc(buf, cap, 1);
		}
		size_t k = fread(buf + n, 1, cap - n - 1, f);
		n += k;
		if (k == 0)
			break;
	}
	bool bad = ferror(f);
	fclose(f);
	if (bad || n > max) {
		free(buf);
		return bad ? fab_err_set(err, FAB_EIO, "%s: read error", path)
			   : fab_err_set(err, FAB_EINVAL, "%s: %s larger than %zu MiB", path, what, max >> 20);
	}
	if (memchr(buf, 0, n)) {
		free(buf);
		return fab_err_set(err, FAB_EINVAL, "%s: a NUL byte: %s is not a text file", path, what);
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

int fab_tok_open(struct fab_tok *t, const char *path, struct fab_err *err)
{
	memset(t, 0, sizeof *t);
	t->path = path;
	t->line = 1;
	t->col = 1;
	return fab_read_text(path, "the file", FAB_TOK_MAX_FILE, false, &t->buf, &t->len, err);
}

void fab_tok_close(struct fab_tok *t)
{
	free(t->buf);
	t->buf = NULL;
	t->len = t->pos = 0;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static void advance(struct fab_tok *t)
{
	if (t->buf[t->pos++] == '\n') {
		t->line++;
		t->col = 1;
	} else {
		t->col++;
	}
}

int fab_tok_next(struct fab_tok *t, struct fab_err *err)
{
	for (;;) {
		while (t->pos < t->len && is_space(t->buf[t->pos]))
			advance(t);
		if (t->pos < t->len && t->buf[t->pos] == '#') {
			while (t->pos < t->len && t->buf[t->pos] != '\n')
				advance(t);
			continue;
		}
		break;
	}
	if (t->pos >= t->len)
		return 0;
	t->tok_line = t->line;
	t->tok_col = t->col;
	size_t n = 0;
	while (t->pos < t->len && !is_space(t->buf[t->pos]) && t->buf[t->pos] != '#') {
		if (n == FAB_TOK_MAX_LEN)
			return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: a field longer than %d characters", t->path,
					   t->tok_line, t->tok_col, FAB_TOK_MAX_LEN);
		t->tok[n++] = t->buf[t->pos];
		advance(t);
	}
	t->tok[n] = 0;
	return 1;
}

int fab_tok_need(struct fab_tok *t, const char *what, struct fab_err *err)
{
	int rc = fab_tok_next(t, err);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: the file ends where %s was expected", t->path, t->line,
				   t->col, what);
	return 0;
}

int fab_tok_uint(struct fab_tok *t, const char *what, uint64_t lo, uint64_t hi, uint64_t *out, struct fab_err *err)
{
	int rc = fab_tok_need(t, what, err);
	if (rc)
		return rc;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(t->tok, &end, 10);
	if (*end || errno || t->tok[0] == '-' || t->tok[0] == '+' || v < lo || v > hi)
		return fab_tok_err(t, err, "%s: expected an integer from %llu to %llu, got '%s'", what,
				   (unsigned long long)lo, (unsigned long long)hi, t->tok);
	*out = v;
	return 0;
}

bool fab_tok_starts_line(const struct fab_tok *t)
{
	/* the characters before the token on its line are all blanks */
	size_t start = t->pos - strlen(t->tok);
	while (start > 0 && t->buf[start - 1] != '\n') {
		if (!is_space(t->buf[start - 1]))
			return false;
		start--;
	}
	return true;
}

int fab_tok_err(const struct fab_tok *t, struct fab_err *err, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return fab_err_set(err, FAB_EINVAL, "%s:%u:%u: %s", t->path, t->tok_line, t->tok_col, msg);
}
