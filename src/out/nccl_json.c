/*
 * nccl_json.c - nccl-tests' JSON output (-J FILE.json, its format version
 * 3), as nccl-tests FAB_NCCL_TESTS_VERSION writes it (src/util.cu): one
 * line, no blanks, keys in its order, booleans as the strings "true" and
 * "false", reals with six decimals ("%lf"), the root as its table column
 * ("    -1").
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl_json.h"

/* a string, escaped as JSON wants (nccl-tests escapes '/' too) */
static void str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\' || *p == '/')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void real(FILE *f, double v)
{
	if (v != v)
		fputs("\"nan\"", f);
	else
		fprintf(f, "%lf", v);
}

long long fab_epoch_now(bool *fixed)
{
	const char *e = getenv("SOURCE_DATE_EPOCH");
	char *end;
	long long at = e ? strtoll(e, &end, 10) : -1;
	bool f = e && *e && !*end && at >= 0;
	if (fixed)
		*fixed = f;
	return f ? at : (long long)time(NULL);
}

void fab_nccl_json_time(char *buf, size_t len)
{
	bool fixed;
	time_t t = (time_t)fab_epoch_now(&fixed);
	struct tm tm;
	if (fixed)
		gmtime_r(&t, &tm);
	else
		localtime_r(&t, &tm);
	if (!strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) && len)
		buf[0] = 0;
}

void fab_nccl_json_head(FILE *f, int argc, char *const *argv, char *const *envp, const char *start,
			const struct fab_nccl_params_line *p)
{
	fputs("{\"version\":3,\"start_time\":", f);
	str(f, start);
	fputs(",\"args\":[", f);
	for (int i = 0; i < argc; i++) {
		if (i)
			fputc(',', f);
		str(f, argv[i]);
	}
	/* nccl-tests lists the whole environment; here only what configures
	 * NCCL and fabscope (a shell's variables may hold secrets) */
	fputs("],\"env\":[", f);
	bool first = true;
	for (char *const *e = envp; e && *e; e++)
		if (!strncmp(*e, "NCCL_", 5) || !strncmp(*e, "FABSCOPE_", 9)) {
			if (!first)
				fputc(',', f);
			str(f, *e);
			first = false;
		}
	fprintf(f,
		"],\"nccl_version\":0,\"config\":{\"nthreads\":%u,\"ngpus\":%u,\"minimum_bytes\":%llu,"
		"\"maximum_bytes\":%llu,\"%s\":%llu,\"warmup_iters\":%u,\"iterations\":%u,"
		"\"aggregated_iterations\":1,\"validation\":%u,\"graph\":0,\"blocking_collectives\":\"false\","
		"\"per_iter_timing\":\"false\",\"per_iter_skip\":0,\"parallel_init\":\"false\",\"devices\":[",
		p->nthreads, p->ngpus, (unsigned long long)p->minb, (unsigned long long)p->maxb,
		p->step_factor ? "step_factor" : "step_bytes", (unsigned long long)p->step, p->warmup, p->iters,
		p->check);
}

void fab_nccl_json_device(FILE *f, bool first, uint32_t rank, int pid, const char *host, uint32_t dev, const char *what)
{
	fprintf(f, "%s{\"rank\":%u,\"group\":0,\"pid\":%d,\"hostname\":", first ? "" : ",", rank, pid);
	str(f, host);
	fprintf(f, ",\"device\":%u,\"device_hex\":\"0000:00:00\",\"device_info\":", dev);
	str(f, what);
	fputc('}', f);
}

void fab_nccl_json_results(FILE *f)
{
	fputs("]},\"results\":[", f);
}

void fab_nccl_json_row(FILE *f, bool first, const struct fab_nccl_row *r, uint32_t iters)
{
	fprintf(f, "%s{\"size\":%llu,\"count\":%llu,\"type\":", first ? "" : ",", (unsigned long long)r->bytes,
		(unsigned long long)r->count);
	str(f, r->type);
	fputs(",\"redop\":", f);
	str(f, r->redop);
	fprintf(f, ",\"root\":\"%6d\"", r->root);
	for (int k = 0; k < 2; k++) {
		fprintf(f, ",\"%s\":{\"time\":", k ? "in_place" : "out_of_place");
		real(f, r->time_us[k]);
		fputs(",\"alg_bw\":", f);
		real(f, r->algbw_GBps[k]);
		fputs(",\"bus_bw\":", f);
		real(f, r->busbw_GBps[k]);
		fputs(",\"nwrong\":", f);
		if (r->checked[k])
			real(f, (double)r->wrong[k]);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fprintf(f, ",\"actual_iterations\":%u,\"experiment_name\":\"\"}", iters);
}

void fab_nccl_json_end(FILE *f, uint64_t wrong, double avg, double min_bw, const char *end)
{
	/* nccl-tests writes the count as an int */
	fprintf(f, "],\"out_of_bounds\":{\"count\":%d,\"okay\":\"%s\"},\"average_bus_bandwidth\":{\"bandwidth\":",
		wrong > 0x7fffffff ? 0x7fffffff : (int)wrong, wrong ? "false" : "true");
	real(f, avg);
	fprintf(f, ",\"okay\":\"%s\"},\"errors\":[],\"end_time\":",
		min_bw < 0                    ? "unchecked"
			: avg >= 0.9 * min_bw ? "true"
					      : "false");
	str(f, end);
	fputc('}', f);
}
