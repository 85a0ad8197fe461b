/*
 * out.c - result files written whole or not at all: a temporary file per
 * output, created exclusively (O_EXCL: a symbolic link planted at its name
 * is never followed) under a name that holds the writer's pid, renamed into
 * place once every file is complete.  Temporary files are removed when the
 * run is interrupted (SIGINT, SIGTERM, SIGHUP, SIGPIPE), and those of a run that was
 * killed outright are removed by the next run into the directory, once
 * their writer is gone.  An --out directory keeps a manifest of what the
 * last run wrote there, so that a run removes its predecessor's files that
 * it does not write itself (a series.csv from a run with series, beside the
 * result of a run without): only names fabscope writes, and only while
 * each is still the very file that run wrote (remove_stale).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define MAX_FILES 160 /* plan --compare: 3 + 2 a design, 64 designs */
#define MANIFEST ".fabscope-files"

/* what a signal handler removes: plain arrays, no allocation */
static char pending[MAX_FILES + 1][4096];
static volatile sig_atomic_t npending;

static void on_signal(int sig)
{
	for (sig_atomic_t i = 0; i < npending; i++)
		unlink(pending[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void guard(bool on)
{
	static struct sigaction old[4];
	static const int sigs[4] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	for (int i = 0; i < 4; i++) {
		if (on) {
			struct sigaction sa = {0};
			sa.sa_handler = on_signal;
			sigemptyset(&sa.sa_mask);
			sigaction(sigs[i], &sa, &old[i]);
		} else {
			sigaction(sigs[i], &old[i], NULL);
		}
	}
	if (!on)
		npending = 0;
}

void cli_guard_path(const char *path)
{
	snprintf(pending[0], sizeof pending[0], "%s", path);
	npending = 1;
	guard(true);
}

void cli_unguard_path(void)
{
	guard(false);
}

struct out_file {
	char tmp[4096], final[4096];
	FILE *f;
};

/* dir/.NAME.PID.XXXXXX, created exclusively, mode 0666 less the umask */
static int out_open(struct out_file *o, const char *dir, const char *name)
{
	snprintf(o->final, sizeof o->final, "%s/%s", dir, name);
	int n = snprintf(o->tmp, sizeof o->tmp, "%s/.%s.%ld.XXXXXX", dir, name, (long)getpid());
	if (n >= (int)sizeof o->tmp) {
		fprintf(stderr, "fabscope: %s: the path is too long\n", o->final);
		return -1;
	}
	sigset_t all, was;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &was); /* the name is registered before a signal can look */
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd >= 0) {
		memcpy(pending[npending], o->tmp, sizeof o->tmp);
		npending++;
	}
	sigprocmask(SIG_SETMASK, &was, NULL);
	if (fd < 0) {
		fprintf(stderr, "fabscope: %s: %s\n", o->tmp, strerror(errno));
		return -1;
	}
	mode_t um = umask(0);
	umask(um);
	fchmod(fd, 0666 & ~um);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		unlink(o->tmp);
		return -1;
	}
	return 0;
}

/* temporary files of ours whose writer is gone: .NAME.PID.XXXXXX with no
 * process PID (or one that is not ours to signal is left alone); only
 * name's, when name is not NULL */
static void sweep_stale(const char *dir, const char *only)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		const char *nm = e->d_name, *dot;
		if (nm[0] != '.' || strlen(nm) < 10)
			continue;
		size_t len = strlen(nm);
		/* the last 7 characters: .XXXXXX; before them .PID */
		if (nm[len - 7] != '.')
			continue;
		dot = nm + len - 8;
		while (dot > nm && *dot >= '0' && *dot <= '9')
			dot--;
		if (*dot != '.' || dot == nm + len - 8 || dot == nm)
			continue;
		long pid = strtol(dot + 1, NULL, 10);
		if (only && (strncmp(nm + 1, only, strlen(only)) || nm + 1 + strlen(only) != dot))
			continue;
		if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char path[4096];
		if (snprintf(path, sizeof path, "%s/%s", dir, nm) < (int)sizeof path)
			unlink(path);
	}
	if (d)
		closedir(d);
}

/* a name the manifest may list: a plain file name, nothing else */
static bool plain_name(const char *s)
{
	if (!*s || s[0] == '.' || strlen(s) > 255)
		return false;
	for (; *s; s++)
		if (*s == '/' || (unsigned char)*s < 32)
			return false;
	return true;
}

/* a name some command of fabscope writes into an --out directory: only
 * those are ever removed (a manifest naming anything else is not obeyed) */
static bool our_name(const char *s)
{
	static const char *const names[] = {
		"result.json",  "summary.txt", "flows.csv",    "ports.csv",   "series.csv",   "series.jsonl",
		"slowdown.csv", "coll.txt",    "coll.csv",     "coll.log",    "matrix.txt",   "probe.txt",
		"sweep.json",   "sweep.csv",   "compare.json", "compare.csv", "compare.html",
	};
	for (size_t i = 0; i < FAB_ARRAY_LEN(names); i++)
		if (!strcmp(s, names[i]))
			return true;
	/* plan --compare's design-N.yaml and design-N.json */
	size_t d = strspn(s + (strncmp(s, "design-", 7) ? 0 : 7), "0123456789");
	return !strncmp(s, "design-", 7) && d && (!strcmp(s + 7 + d, ".yaml") || !strcmp(s + 7 + d, ".json"));
}

/* What the manifest records of each file a run wrote, to know it again:
 * a run removes a file its predecessor wrote only while it is that very
 * file, unchanged (a regular file, not a link, the same device, inode,
 * size and modification time).  A manifest planted or copied in, or a
 * file replaced since, removes nothing. */
#define MANIFEST_HEAD "fabscope-files 2\n"
struct made {
	unsigned long long dev, ino, size;
	long long mtime_ns;
};

static bool made_stat(const char *path, struct made *m)
{
	struct stat st;
	if (lstat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	*m = (struct made){(unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
			   (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec};
	return true;
}

/* the manifest's text: a line per file written (closed already) */
static bool write_manifest(FILE *f, const struct out_file *files, const struct out_spec *all, size_t n)
{
	bool ok = fputs(MANIFEST_HEAD, f) >= 0;
	for (size_t i = 0; i < n && ok; i++) {
		struct made m;
		ok = made_stat(files[i].tmp, &m) && /* rename keeps the inode and the time */
			fprintf(f, "%s\t%llu\t%llu\t%llu\t%lld\n", all[i].name, m.dev, m.ino, m.size, m.mtime_ns) > 0;
	}
	return ok;
}

/* the previous run's files that this one did not write: removed where the
 * manifest shows they are still what that run wrote */
static void remove_stale(const char *dir, char *old, const struct out_spec *all, size_t n)
{
	if (strncmp(old, MANIFEST_HEAD, strlen(MANIFEST_HEAD)))
		return; /* not a manifest of this kind: nothing is removed */
	for (char *line = old + strlen(MANIFEST_HEAD), *nl; *line; line = nl + 1) {
		if (!(nl = strchr(line, '\n')))
			break;
		*nl = 0;
		char *tab = strchr(line, '\t');
		struct made want, got;
		if (!tab ||
		    sscanf(tab + 1, "%llu\t%llu\t%llu\t%lld", &want.dev, &want.ino, &want.size, &want.mtime_ns) != 4)
			continue;
		*tab = 0;
		bool mine = false;
		for (size_t i = 0; i < n; i++)
			mine |= !strcmp(line, all[i].name);
		char path[4096];
		if (mine || !plain_name(line) || !our_name(line) ||
		    snprintf(path, sizeof path, "%s/%s", dir, line) >= (int)sizeof path || !made_stat(path, &got))
			continue;
		if (got.dev == want.dev && got.ino == want.ino && got.size == want.size &&
		    got.mtime_ns == want.mtime_ns)
			unlink(path);
	}
}

static int write_files(const char *dir, const struct out_spec *specs, size_t n, void *ctx, bool manifest)
{
	if (n > MAX_FILES) {
		fprintf(stderr, "fabscope: %zu files are more than %d into one directory\n", n, MAX_FILES);
		return FAB_EXIT_INTERNAL;
	}
	struct out_file *files = fab_xcalloc(n + 1, sizeof *files); /* (8 KiB each) */
	struct out_spec all[MAX_FILES + 1];
	memcpy(all, specs, n * sizeof *specs);
	sweep_stale(dir, manifest ? NULL : specs[0].name);
	/* the manifest goes last, after the files it names */
	size_t nfiles = n;
	if (manifest)
		all[n++] = (struct out_spec){MANIFEST, NULL, 0};
	bool ok = true;
	size_t opened = 0;
	guard(true);
	for (size_t i = 0; i < n && ok; i++, opened++)
		ok = !out_open(&files[i], dir, all[i].name);
	if (!ok)
		opened--;
	for (size_t i = 0; i < opened && ok; i++) {
		if (all[i].write) {
			ok = !all[i].write(files[i].f, ctx, all[i].arg);
			continue;
		}
		for (size_t k = 0; k < i; k++) { /* the files it names, whole first */
			if (fclose(files[k].f))
				ok = false;
			files[k].f = NULL;
		}
		ok = ok && write_manifest(files[i].f, files, all, nfiles);
	}
	for (size_t i = 0; i < opened; i++)
		if (files[i].f && fclose(files[i].f))
			ok = false;
	/* the previous run's list, before this run's replaces it */
	char *old = fab_xcalloc(1, 65536);
	if (ok && manifest) {
		char mp[4096];
		snprintf(mp, sizeof mp, "%s/" MANIFEST, dir);
		int fd = open(mp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t k = read(fd, old, 65535);
			old[k > 0 ? k : 0] = 0;
			close(fd);
		}
	}
	for (size_t i = 0; i < opened; i++) {
		if (ok && rename(files[i].tmp, files[i].final)) {
			fprintf(stderr, "fabscope: %s: %s\n", files[i].final, strerror(errno));
			ok = false;
		}
		if (!ok)
			unlink(files[i].tmp);
	}
	guard(false);
	free(files);
	if (ok && manifest)
		remove_stale(dir, old, all, n);
	free(old);
	if (!ok) {
		fprintf(stderr, "fabscope: could not write the results into %s\n", dir);
		return FAB_EXIT_IO;
	}
	return FAB_EXIT_OK;
}

int cli_write_out_dir(const char *outdir, const struct out_spec *specs, size_t n, void *ctx)
{
	if (mkdir(outdir, 0777) && errno != EEXIST) {
		fprintf(stderr, "fabscope: --out %s: %s\n", outdir, strerror(errno));
		return FAB_EXIT_IO;
	}
	struct stat st;
	if (stat(outdir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "fabscope: --out %s: not a directory\n", outdir);
		return FAB_EXIT_IO;
	}
	return write_files(outdir, specs, n, ctx, true);
}

int cli_write_out_file(const char *path, const struct out_spec *spec, void *ctx)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	struct out_spec one = *spec;
	one.name = slash ? slash + 1 : dir;
	if (!*one.name) {
		fprintf(stderr, "fabscope: %s: a file name is needed\n", path);
		return FAB_EXIT_USAGE;
	}
	if (slash)
		*slash = 0;
	char name[4096];
	snprintf(name, sizeof name, "%s", one.name);
	one.name = name;
	return write_files(slash ? (*dir ? dir : "/") : ".", &one, 1, ctx, false);
}

/* ---- another tool's JSON, made before the run (coll -J, probe -J) ---- */

int cli_tool_json_reserve(const char *opt, const char *want, struct cli_tool_json *j)
{
	j->opt = opt;
	for (int n = 0; n < 10000; n++) {
		if (!n)
			snprintf(j->path, sizeof j->path, "%s", want);
		else
			snprintf(j->path, sizeof j->path, "%s.%d", want, n - 1);
		/* O_EXCL: not through a link either */
		j->fd = open(j->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (j->fd >= 0) {
			cli_guard_path(j->path);
			fab_nccl_json_time(j->start, sizeof j->start);
			return FAB_EXIT_OK;
		}
		if (errno != EEXIST) {
			fprintf(stderr, "fabscope: %s %s: %s\n", opt, j->path, strerror(errno));
			return FAB_EXIT_IO;
		}
	}
	fprintf(stderr, "fabscope: %s %s: it and %s.0 to %s.9998 exist already\n", opt, want, want, want);
	return FAB_EXIT_IO;
}

void cli_tool_json_drop(struct cli_tool_json *j)
{
	if (j->fd < 0)
		return;
	close(j->fd);
	unlink(j->path);
	j->fd = -1;
	cli_unguard_path();
}

int cli_tool_json_commit(struct cli_tool_json *j, int (*write)(FILE *f, void *ctx, const char *start), void *ctx)
{
	FILE *f = fdopen(j->fd, "w");
	if (!f) {
		fprintf(stderr, "fabscope: %s %s: %s\n", j->opt, j->path, strerror(errno));
		cli_tool_json_drop(j); /* and unguarded */
		return FAB_EXIT_IO;
	}
	int rc = write(f, ctx, j->start);
	j->fd = -1;
	if (fclose(f) || rc) {
		fprintf(stderr, "fabscope: %s %s: writing failed\n", j->opt, j->path);
		unlink(j->path);
		rc = FAB_EXIT_IO;
	}
	cli_unguard_path();
	return rc;
}
