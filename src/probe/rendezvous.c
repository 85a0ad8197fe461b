/*
 * rendezvous.c - how a job's ranks find each other: the launcher's
 * environment (mpirun, srun, torchrun-style variables, --local), the
 * rendezvous at rank 0 with the job token, every rank's data address, the
 * control connection each rank keeps to rank 0, the data mesh of `conns`
 * connections per pair; and closing it all.
 */
#include "probe_int.h"

void fab_probe_rank_name(const struct fab_probe *pr, uint32_t rank, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	fab_ip_str(rank < pr->n && pr->ip ? &pr->ip[rank] : NULL, ip, sizeof ip);
	snprintf(buf, len, "rank%u@%s", rank, ip);
}

const char *pr_rname(const struct fab_probe *pr, uint32_t rank, char buf[64])
{
	fab_probe_rank_name(pr, rank, buf, 64);
	return buf;
}

/* rank 0's rendezvous: each caller with the token is a rank joining */
struct join {
	struct addr *tab;
	struct fab_ip *from;
	struct fab_err *err;
	int abort; /* why the rendezvous was given up, told to those who joined */
	uint32_t abort_rank;
};

/* Why rank 0 gave up the rendezvous, told to the ranks that joined (and to
 * the one that broke it) in place of the address table: one entry, family
 * ABORT_FAMILY, port the reason, ip[0..3] the rank concerned.  A joiner
 * reads the table's first entry alone (so that a joiner that counts more
 * ranks than rank 0 hears it too), and takes only the code and a rank
 * below its job's size from it. */
#define ABORT_FAMILY 0xee
enum { ABORT_DUPLICATE = 1, ABORT_BAD_RANK, ABORT_NO_ADDRESS };

static void send_abort(struct fab_probe *pr, int fd, int why, uint32_t rank)
{
	struct addr rec = {{0}, (uint16_t)why, ABORT_FAMILY, 0};
	memcpy(rec.ip, &rank, sizeof rank);
	pr_full_io(fd, &rec, sizeof rec, true, FAB_MIN(pr->timeout_s, 1.0));
}

/* a joiner: rank 0's abort record, in words; false when tab is a table */
static bool abort_said(const struct fab_probe *pr, const struct addr *tab, char *buf, size_t len)
{
	if (tab[0].family != ABORT_FAMILY)
		return false;
	uint32_t r;
	memcpy(&r, tab[0].ip, sizeof r);
	if (r >= pr->n)
		r = pr->me;
	if (tab[0].port == ABORT_DUPLICATE)
		snprintf(buf, len,
			 "rank 0 gave up the rendezvous: two processes say they are rank %u (check the launcher's "
			 "rank variables; another job with the same token?)",
			 r);
	else if (tab[0].port == ABORT_BAD_RANK)
		snprintf(buf, len,
			 "rank 0 gave up the rendezvous: a process gave a rank outside the job (do the "
			 "launchers' sizes differ?)");
	else if (tab[0].port == ABORT_NO_ADDRESS)
		snprintf(buf, len, "rank 0 gave up the rendezvous: rank %u gave no data address", r);
	else
		snprintf(buf, len, "rank 0 gave up the rendezvous");
	return true;
}

static int take_join(struct fab_probe *pr, void *ctx, int fd, const struct hello *h, const struct fab_ip *from)
{
	struct join *j = ctx;
	char f1[INET6_ADDRSTRLEN], f2[INET6_ADDRSTRLEN];
	fab_ip_str(from, f1, sizeof f1);
	if (h->rank == 0 || h->rank >= pr->n) {
		send_abort(pr, fd, ABORT_BAD_RANK, 0);
		j->abort = ABORT_BAD_RANK;
		j->abort_rank = 0;
		fab_err_set(j->err, FAB_EIO,
			    "rank 0: a process at %s says it is rank %u of a job of %u ranks "
			    "(do the launchers' sizes differ?)",
			    f1, h->rank, pr->n);
		return -1;
	}
	if (ctl_of(pr, h->rank)->fd >= 0) {
		send_abort(pr, fd, ABORT_DUPLICATE, h->rank);
		j->abort = ABORT_DUPLICATE;
		j->abort_rank = h->rank;
		fab_err_set(j->err, FAB_EIO,
			    "rank 0: two processes say they are rank %u (from %s and %s): check "
			    "the launcher's rank variables",
			    h->rank, fab_ip_str(&j->from[h->rank], f2, sizeof f2), f1);
		return -1;
	}
	static const uint8_t zero[16];
	if ((h->family != 4 && h->family != 6) || !memcmp(h->ip, zero, sizeof zero) || !h->port) {
		send_abort(pr, fd, ABORT_NO_ADDRESS, h->rank);
		j->abort = ABORT_NO_ADDRESS;
		j->abort_rank = h->rank;
		fab_err_set(j->err, FAB_EIO, "rank 0: rank %u at %s gave no data address", h->rank, f1);
		return -1;
	}
	j->tab[h->rank] = (struct addr){{0}, h->port, h->family, 0};
	memcpy(j->tab[h->rank].ip, h->ip, sizeof h->ip);
	j->from[h->rank] = *from;
	ctl_of(pr, h->rank)->fd = fd;
	return 1;
}

/* a rank's data listener: each caller with the token is a higher rank's
 * data connection */
static int take_data(struct fab_probe *pr, void *ctx, int fd, const struct hello *h, const struct fab_ip *from)
{
	struct fab_err *err = ctx;
	(void)from;
	if (h->rank <= pr->me || h->rank >= pr->n || h->port >= pr->nc || C(pr, h->rank, 1u + h->port)->fd >= 0) {
		fab_err_set(err, FAB_EIO,
			    "rank %u: a data connection says it is rank %u's number %u, which is not "
			    "due here",
			    pr->me, h->rank, h->port);
		return -1;
	}
	C(pr, h->rank, 1u + h->port)->fd = fd;
	return 1;
}

static void missing_ranks(const struct fab_probe *pr, char *buf, size_t len)
{
	size_t at = 0;
	uint32_t shown = 0;
	buf[0] = 0;
	for (uint32_t r = 1; r < pr->n && at + 24 < len; r++)
		if (ctl_of((struct fab_probe *)pr, r)->fd < 0) {
			if (shown++ == 8) {
				snprintf(buf + at, len - at, ", ...");
				break;
			}
			at += (size_t)snprintf(buf + at, len - at, "%s%u", shown > 1 ? ", " : "", r);
		}
}

struct fab_probe *pr_alloc(const struct fab_probe_params *p)
{
	struct fab_probe *pr = fab_xcalloc(1, sizeof *pr);
	pr->n = p->nranks;
	pr->me = p->rank;
	pr->nc = p->conns ? FAB_MIN(p->conns, FAB_PROBE_MAX_CONNS) : 1;
	pr->stride = pr->nc + 1;
	memcpy(pr->token, p->token, sizeof pr->token);
	pr->timeout_s = p->timeout_s;
	pr->warn = p->warn;
	pr->warn_ctx = p->warn_ctx;
	pr->busy = p->busy_poll;
	pr->lost = pr->aborted = pr->stuck_by = pr->stuck_on = pr->turn = pr->suspect = NO_RANK;
	pr->beat_iv = FAB_MIN(FAB_MAX(pr->timeout_s / 8, 0.05), 1.0);
	size_t nconn = (size_t)pr->n * pr->stride;
	pr->c = fab_xcalloc(nconn, sizeof *pr->c);
	for (size_t k = 0; k < nconn; k++) {
		pr->c[k].fd = -1;
		pr->c[k].peer = (uint32_t)(k / pr->stride);
		pr->c[k].ctl = k % pr->stride == 0;
	}
	pr->pf = fab_xcalloc(nconn, sizeof *pr->pf);
	pr->pfk = fab_xcalloc(nconn, sizeof *pr->pfk);
	pr->dcount = fab_xcalloc(pr->n, sizeof *pr->dcount);
	pr->ip = fab_xcalloc(pr->n, sizeof *pr->ip);
	pr->heard = fab_xcalloc(pr->n, sizeof *pr->heard);
	return pr;
}

struct fab_probe *fab_probe_connect(const struct fab_probe_params *p, struct fab_err *err)
{
	static const uint8_t zero[FAB_PROBE_TOKEN_BYTES];
	if (!memcmp(p->token, zero, sizeof zero)) {
		fab_err_set(err, FAB_EINVAL, "rank %u: no job token", p->rank);
		return NULL;
	}
	/* message buffers come and go by the thousand: keep freed memory mapped,
	 * or every receive pays its page faults again */
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	struct fab_probe *pr = pr_alloc(p);
	size_t nconn = (size_t)pr->n * pr->stride;
	uint16_t dport = 0;
	int dfd = -1;
	struct addr *tab = fab_xcalloc(pr->n, sizeof *tab);
	struct fab_ip *from = fab_xcalloc(pr->n, sizeof *from);
	struct fab_ip master_ip, my_ip = p->bind;
	char nm[64], why[320], a1[INET6_ADDRSTRLEN];
	if (fab_probe_resolve_host(p->master, p->bind.family, &master_ip, why, sizeof why)) {
		fab_err_set(err, FAB_EINVAL, "rank %u: the master address: %s", pr->me, why);
		goto fail;
	}
	/* rendezvous; its connections stay, as the control connections.  Every
	 * listener binds the address this rank advertises: rank 0 the master
	 * address (or --bind), the others the address their connection to
	 * rank 0 leaves from (or --bind) */
	if (pr->me == 0) {
		int rfd = p->rendezvous_fd;
		uint16_t mp = p->master_port;
		if (!my_ip.family)
			my_ip = master_ip;
		if (rfd < 0 && (rfd = pr_listen_on(&my_ip, &mp)) < 0) {
			fab_err_set(err, FAB_EIO, "rank 0: cannot listen on %s port %u: %s (is this host the master?)",
				    fab_ip_str(&my_ip, a1, sizeof a1), p->master_port, strerror(errno));
			goto fail;
		}
		if ((dfd = pr_listen_on(&my_ip, &dport)) < 0) {
			fab_err_set(err, FAB_EIO, "rank 0: cannot open a data socket: %s", strerror(errno));
			if (p->rendezvous_fd < 0)
				close(rfd);
			goto fail;
		}
		tab[0] = (struct addr){{0}, dport, my_ip.family, 0};
		memcpy(tab[0].ip, my_ip.a, sizeof tab[0].ip);
		struct join j = {tab, from, err, 0, 0};
		struct accept_pool ap = {pr->n - 1, 0, 0, take_join, &j};
		int rc = pr_accept_pool(pr, rfd, &ap);
		if (p->rendezvous_fd < 0)
			close(rfd);
		if (rc && j.abort) /* the ranks that joined hear why, not only that it failed */
			for (uint32_t i = 1; i < pr->n; i++)
				if (ctl_of(pr, i)->fd >= 0)
					send_abort(pr, ctl_of(pr, i)->fd, j.abort, j.abort_rank);
		if (rc) {
			if (!err->code) {
				char miss[128], ref[96] = "";
				missing_ranks(pr, miss, sizeof miss);
				if (ap.refused)
					snprintf(ref, sizeof ref, "; %u connection%s refused (no or wrong job token)",
						 ap.refused, ap.refused == 1 ? "" : "s");
				fab_err_set(err, FAB_EIO, "rank 0: %u of %u ranks joined in %.0f s (missing: %s)%s",
					    ap.taken + 1, pr->n, pr->timeout_s, miss, ref);
			}
			goto fail;
		}
		for (uint32_t i = 1; i < pr->n; i++)
			pr_full_io(ctl_of(pr, i)->fd, tab, pr->n * sizeof *tab, true, pr->timeout_s);
	} else {
		int fd = pr_connect_to(&master_ip, p->master_port, &p->bind, pr->timeout_s);
		struct sockaddr_storage me;
		socklen_t ml = sizeof me;
		if (fd >= 0 && my_ip.family != master_ip.family && !getsockname(fd, (struct sockaddr *)&me, &ml))
			pr_ip_of((struct sockaddr *)&me, &my_ip);
		if (fd >= 0 && (dfd = pr_listen_on(&my_ip, &dport)) < 0) {
			fab_err_set(err, FAB_EIO, "rank %u: cannot open a data socket: %s", pr->me, strerror(errno));
			close(fd);
			goto fail;
		}
		struct hello h = {pr->me, dport, my_ip.family, 0, {0}, {0}};
		memcpy(h.ip, my_ip.a, sizeof h.ip);
		memcpy(h.token, pr->token, sizeof h.token);
		if (fd < 0 || pr_full_io(fd, &h, sizeof h, true, pr->timeout_s) ||
		    pr_full_io(fd, tab, sizeof *tab, false, pr->timeout_s) ||
		    (!abort_said(pr, tab, why, sizeof why) &&
		     pr_full_io(fd, tab + 1, (pr->n - 1) * sizeof *tab, false, pr->timeout_s))) {
			fab_err_set(err, FAB_EIO, "rank %u: rendezvous with rank 0 at %s:%u failed", pr->me, p->master,
				    p->master_port);
			if (fd >= 0)
				close(fd);
			goto fail;
		}
		if (abort_said(pr, tab, why, sizeof why)) {
			fab_err_set(err, FAB_EIO, "rank %u: %s", pr->me, why);
			close(fd);
			goto fail;
		}
		ctl_of(pr, 0)->fd = fd;
		for (uint32_t j = 0; j < pr->n; j++)
			if ((tab[j].family != 4 && tab[j].family != 6) || !tab[j].port) {
				fab_err_set(err, FAB_EIO, "rank %u: rank 0 sent no data address for rank %u", pr->me,
					    j);
				goto fail;
			}
	}
	for (uint32_t j = 0; j < pr->n; j++)
		pr->ip[j] = pr_addr_ip(&tab[j]);
	/* the data mesh: connect to lower ranks, accept higher ones */
	for (uint32_t j = 0; j < pr->me; j++)
		for (uint32_t k = 0; k < pr->nc; k++) {
			struct fab_ip to = pr_addr_ip(&tab[j]);
			int fd = pr_connect_to(&to, tab[j].port, &p->bind, pr->timeout_s);
			struct hello h = {pr->me, (uint16_t)k, 0, 0, {0}, {0}};
			memcpy(h.token, pr->token, sizeof h.token);
			if (fd < 0 || pr_full_io(fd, &h, sizeof h, true, pr->timeout_s)) {
				fab_err_set(err, FAB_EIO, "rank %u: cannot reach %s", pr->me, pr_rname(pr, j, nm));
				if (fd >= 0)
					close(fd);
				goto fail;
			}
			C(pr, j, 1 + k)->fd = fd;
		}
	struct accept_pool ap = {(pr->n - 1 - pr->me) * pr->nc, 0, 0, take_data, err};
	if (ap.want && pr_accept_pool(pr, dfd, &ap)) {
		if (!err->code)
			fab_err_set(err, FAB_EIO, "rank %u: the mesh did not complete in %.0f s (%u of %u connections)",
				    pr->me, pr->timeout_s, ap.taken, ap.want);
		goto fail;
	}
	for (size_t k = 0; k < nconn; k++)
		if (pr->c[k].fd >= 0)
			pr_tune(pr->c[k].fd, !pr->c[k].ctl);
	close(dfd);
	free(tab);
	free(from);
	return pr;
fail:
	if (dfd >= 0)
		close(dfd);
	free(tab);
	free(from);
	fab_probe_close(pr);
	return NULL;
}

void pr_free_queue(struct conn *c)
{
	while (c->qh) {
		struct out_msg *m = c->qh;
		c->qh = m->next;
		free(m);
	}
	c->qt = NULL;
}

void fab_probe_close(struct fab_probe *pr)
{
	if (!pr)
		return;
	for (size_t k = 0; k < (size_t)pr->n * pr->stride; k++) {
		struct conn *c = &pr->c[k];
		if (c->fd >= 0)
			close(c->fd);
		pr_free_queue(c);
		free(c->in.buf);
		free(c->in.bounce);
	}
	for (int b = 0; b < FAB_NBUF; b++)
		free(pr->buf[b]);
	free(pr->c);
	free(pr->pf);
	free(pr->pfk);
	free(pr->dcount);
	free(pr->heard);
	free(pr->ip);
	free(pr->plan);
	free(pr);
}

/* "node[07-09]x" at its first host: prefix, the first number of the
 * first range (its zero padding kept), suffix up to the next comma */
int fab_slurm_first_host(const char *list, char *dst, size_t len)
{
	char out[256]; /* out is dst only when whole: a list cut short leaves it as it was */
	size_t at = 0;
	const char *s = list;
	len = FAB_MIN(len, sizeof out);
	if (!s || !*s || *s == ',' || *s == '[')
		return -1;
	while (*s && *s != ',') {
		size_t take;
		const char *from = s;
		if (*s == '[') {
			const char *e = s + 1;
			while (*e >= '0' && *e <= '9')
				e++;
			if (e == s + 1 || (*e != '-' && *e != ',' && *e != ']') || !strchr(e, ']'))
				return -1;
			from = s + 1;
			take = (size_t)(e - from);
			s = strchr(e, ']') + 1;
		} else {
			if (*s == ']')
				return -1;
			take = 1;
			s++;
		}
		if (at + take >= len)
			return -1;
		memcpy(out + at, from, take);
		at += take;
	}
	out[at] = 0;
	if (!at)
		return -1;
	memcpy(dst, out, at + 1);
	return 0;
}

void fab_probe_token_of(const char *s, uint8_t token[FAB_PROBE_TOKEN_BYTES])
{
	/* two FNV-1a passes with different starts, each finished by a
	 * splitmix64 mix: 128 bits that every byte of s moves */
	uint64_t h[2] = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL};
	for (int k = 0; k < 2; k++) {
		for (const unsigned char *c = (const unsigned char *)s; *c; c++)
			h[k] = (h[k] ^ *c) * 0x100000001b3ULL;
		uint64_t z = h[k] + 0x9e3779b97f4a7c15ULL * (uint64_t)(k + 1);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		h[k] = (z ^ (z >> 31)) | (k == 0); /* never all zero */
	}
	memcpy(token, h, FAB_PROBE_TOKEN_BYTES);
}

int fab_probe_env_token(struct fab_probe_params *p, const char **source, char *why, size_t len)
{
	const char *tok = getenv("FABSCOPE_TOKEN");
	char buf[512];
	*source = NULL;
	if (tok) {
		if (strlen(tok) < 8) {
			snprintf(
				why, len,
				"FABSCOPE_TOKEN: at least 8 characters, the same secret on every rank "
				"(for example: export FABSCOPE_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n'))");
			return -1;
		}
		fab_probe_token_of(tok, p->token);
		*source = "FABSCOPE_TOKEN";
		return 0;
	}
	static const char *ids[][2] = {{"SLURM_JOB_ID", "SLURM_STEP_ID"},
				       {"PMIX_NAMESPACE", NULL},
				       {"OMPI_MCA_ess_base_jobid", NULL},
				       {"TORCHELASTIC_RUN_ID", NULL}};
	for (size_t i = 0; i < FAB_ARRAY_LEN(ids); i++) {
		const char *a = getenv(ids[i][0]), *b = ids[i][1] ? getenv(ids[i][1]) : NULL;
		if (!a || !*a)
			continue;
		snprintf(buf, sizeof buf, "fabscope:%s=%s.%s", ids[i][0], a, b ? b : "");
		fab_probe_token_of(buf, p->token);
		*source = ids[i][0];
		return 0;
	}
	snprintf(why, len,
		 "no job token: set FABSCOPE_TOKEN to the same secret on every rank, or run under a "
		 "launcher that gives a job id (srun, mpirun, torchrun)");
	return -1;
}

/* a launcher's count: digits only, at most max; false when it is not */
static bool env_count(const char *s, uint64_t max, uint32_t *out)
{
	if (!*s || s[strspn(s, "0123456789")] || strlen(s) > 12)
		return false;
	unsigned long long v = strtoull(s, NULL, 10);
	if (v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

const char *fab_probe_env(struct fab_probe_params *p, char *why, size_t len)
{
	if (why && len)
		why[0] = 0;
	static const struct {
		const char *name, *rank, *size;
	} l[] = {{"mpirun (Open MPI)", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
		 {"MPICH/PMI", "PMI_RANK", "PMI_SIZE"},
		 {"srun (Slurm)", "SLURM_PROCID", "SLURM_NTASKS"},
		 {"torchrun-style", "RANK", "WORLD_SIZE"}};
	const char *ma = getenv("MASTER_ADDR"), *mp = getenv("MASTER_PORT");
	if (ma)
		snprintf(p->master, sizeof p->master, "%s", ma);
	if (mp)
		p->master_port = (uint16_t)strtoul(mp, NULL, 10);
	for (size_t i = 0; i < FAB_ARRAY_LEN(l); i++) {
		const char *r = getenv(l[i].rank), *n = getenv(l[i].size);
		if (!r || !n)
			continue;
		/* a rank that is not a number became rank 0, a size of 1e9 was
		 * read as 1: both are refused, naming the variable */
		if (!env_count(n, FAB_PROBE_MAX_RANKS, &p->nranks) || !p->nranks) {
			snprintf(why, len, "%s=\"%s\": expected a number of ranks from 1 to %u", l[i].size, n,
				 FAB_PROBE_MAX_RANKS);
			return NULL;
		}
		if (!env_count(r, p->nranks - 1, &p->rank)) {
			snprintf(why, len, "%s=\"%s\": expected a rank from 0 to %u (%s=%u)", l[i].rank, r,
				 p->nranks - 1, l[i].size, p->nranks);
			return NULL;
		}
		if (i == 2) {
			/* Slurm: the master is the step's first node */
			const char *nl = getenv("SLURM_STEP_NODELIST"), *job = getenv("SLURM_JOB_ID");
			const char *nlv = "SLURM_STEP_NODELIST";
			if (!nl) {
				nl = getenv("SLURM_NODELIST");
				nlv = "SLURM_NODELIST";
			}
			if (!ma && !p->master_given && nl && fab_slurm_first_host(nl, p->master, sizeof p->master)) {
				snprintf(why, len,
					 "%s=\"%.100s\": not a Slurm node list (such as gpu[01-04],login1): rank "
					 "0's host cannot be told; set MASTER_ADDR or --master",
					 nlv, nl);
				return NULL;
			}
			if (!mp && job) {
				const char *st = getenv("SLURM_STEP_ID");
				uint64_t id = strtoull(job, NULL, 10) * 16 + (st ? strtoull(st, NULL, 10) : 0);
				p->master_port = (uint16_t)(20000 + id % 20000);
			}
		}
		return l[i].name;
	}
	return NULL;
}
