/*
 * cli.h - what the command line's files share.
 */
#ifndef FAB_CLI_H
#define FAB_CLI_H

#include <stddef.h>
#include <stdio.h>

/* Writes each file of an --out directory to a temporary name, renames all
 * of them only when every one is complete. */
typedef int (*writer_fn)(FILE *f, void *ctx);

struct out_spec {
	const char *name;
	writer_fn write;
};

int write_out_dir(const char *outdir, const struct out_spec *specs, size_t n, void *ctx);

/* fabscope probe (cli/probe.c) */
int cmd_probe(int argc, char **argv);

#endif
