/*
 * tok.h - a whitespace-separated token reader for plain text inputs (the
 * ns-3 topology and flow files, flow-size CDFs), with the line and column
 * of every token for error messages.  '#' starts a comment to the end of
 * the line.  The whole file is read at once (at most FAB_TOK_MAX_FILE
 * bytes); a token is at most FAB_TOK_MAX_LEN bytes.
 */
#ifndef FAB_TOK_H
#define FAB_TOK_H

#include "base.h"

#define FAB_TOK_MAX_FILE (1ULL << 30)
#define FAB_TOK_MAX_LEN 255

struct fab_tok {
	const char *path;
	char *buf;
	size_t len, pos;
	unsigned line, col;            /* of the next character */
	unsigned tok_line, tok_col;    /* of the token last returned */
	char tok[FAB_TOK_MAX_LEN + 1]; /* the token last returned */
};

/* A whole text file (a pipe too, with pipes) into *out (NUL-terminated,
 * free()), at most max bytes: FAB_EIO (cannot open or read, a directory, a
 * device) or FAB_EINVAL (larger than max, a NUL byte), naming what. */
int fab_read_text(const char *path, const char *what, size_t max, bool pipes, char **out, size_t *len,
		  struct fab_err *err);

/* Reads the file; FAB_EIO (cannot open or read, a directory) or FAB_EINVAL
 * (too big, a NUL byte). */
int fab_tok_open(struct fab_tok *t, const char *path, struct fab_err *err);
void fab_tok_close(struct fab_tok *t);

/* The next token into t->tok: 1, or 0 at the end of the file, or FAB_EINVAL
 * for a token too long. */
int fab_tok_next(struct fab_tok *t, struct fab_err *err);

/* The next token, which must be there: 0, or FAB_EINVAL "the file ends
 * where WHAT was expected". */
int fab_tok_need(struct fab_tok *t, const char *what, struct fab_err *err);

/* The next token as an unsigned decimal integer in [lo, hi]. */
int fab_tok_uint(struct fab_tok *t, const char *what, uint64_t lo, uint64_t hi, uint64_t *out, struct fab_err *err);

/* Whether the token last returned is the first on its line. */
bool fab_tok_starts_line(const struct fab_tok *t);

/* "path:line:col: " of the token last returned, then the message. */
int fab_tok_err(const struct fab_tok *t, struct fab_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
