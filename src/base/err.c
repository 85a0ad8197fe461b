/*
 * err.c - error values, messages and the allocation wrappers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

const char *fab_strerror(int err)
{
	switch (err) {
#define FAB_X(name, value, text)                                                                                       \
	case name:                                                                                                     \
		return text;
		FAB_ERRORS(FAB_X)
#undef FAB_X
	}
	return "unknown error";
}

int fab_err_set(struct fab_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

int fab_err_exit_code(int code)
{
	switch (code) {
	case FAB_OK:
		return FAB_EXIT_OK;
	case FAB_EINVAL:
	case FAB_ETOPO:
		return FAB_EXIT_INPUT;
	case FAB_EIO:
		return FAB_EXIT_IO;
	case FAB_EUSAGE:
		return FAB_EXIT_USAGE;
	default:
		return FAB_EXIT_INTERNAL;
	}
}

int fab_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void *fab_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p) {
		fputs("fabscope: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *fab_xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		abort();
	size_t bytes = n * size;
	void *q = realloc(p, bytes ? bytes : 1);
	if (!q) {
		fputs("fabscope: out of memory\n", stderr);
		abort();
	}
	return q;
}

char *fab_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = fab_xcalloc(1, n);
	memcpy(p, s, n);
	return p;
}

uint64_t fab_mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb;
	uint64_t v = 0;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
			v = (uint64_t)kb * 1024;
			break;
		}
	if (f)
		fclose(f);
	if (!v) {
		long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
		if (pages > 0 && psz > 0)
			v = (uint64_t)pages * (uint64_t)psz;
	}
	return v;
}
