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
	struct in_addr a = {rank < pr->n && pr->ip ? pr->ip[rank] : 0};
	char ip[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &a, ip, sizeof ip);
	snprintf(buf, len, "rank%u@%s", rank, ip);
}

const char *pr_rname(const struct fab_probe *pr, uint32_t rank, char buf[64])
{
	fab_probe_rank_name(pr, rank, buf, 64);
	return buf;
}

struct fab_probe *fab_probe_connect(const struct fab_probe_params *p, struct fab_err *err)
{
	/* message buffers come and go by the thousand: keep freed memory mapped,
	 * or every receive pays its page faults again */
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	struct fab_probe *pr = fab_xcalloc(1, sizeof *pr);
	pr->n = p->nranks;
	pr->me = p->rank;
	pr->nc = p->conns ? FAB_MIN(p->conns, FAB_PROBE_MAX_CONNS) : 1;
	pr->stride = pr->nc + 1;
	pr->token = p->token;
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
	uint16_t dport = 0;
	int dfd = pr_listen_on(p->bind_ip, &dport);
	struct addr *tab = fab_xcalloc(pr->n, sizeof *tab);
	uint32_t master_ip = inet_addr(p->master);
	char nm[64];
	if (dfd < 0) {
		fab_err_set(err, FAB_EIO, "rank %u: cannot open a data socket: %s", pr->me, strerror(errno));
		goto fail;
	}
	/* rendezvous; its connections stay, as the control connections */
	if (pr->me == 0) {
		int rfd = p->rendezvous_fd;
		uint16_t mp = p->master_port;
		if (rfd < 0 && (rfd = pr_listen_on(p->bind_ip, &mp)) < 0) {
			fab_err_set(err, FAB_EIO, "rank 0: cannot listen on port %u: %s", p->master_port,
				    strerror(errno));
			goto fail;
		}
		tab[0] = (struct addr){p->bind_ip ? p->bind_ip : master_ip, dport, 0};
		for (uint32_t k = 1; k < pr->n; k++) {
			struct hello h;
			uint32_t from = 0;
			int fd = pr_accept_checked(pr, rfd, &h, &from);
			if (fd < 0 || h.rank == 0 || h.rank >= pr->n || ctl_of(pr, h.rank)->fd >= 0) {
				fab_err_set(err, FAB_EIO, "rank 0: %u of %u ranks joined in %.0f s", k, pr->n,
					    pr->timeout_s);
				if (fd >= 0)
					close(fd);
				if (p->rendezvous_fd < 0)
					close(rfd);
				goto fail;
			}
			tab[h.rank] = (struct addr){h.ip ? h.ip : from, h.port, 0};
			ctl_of(pr, h.rank)->fd = fd;
		}
		for (uint32_t i = 1; i < pr->n; i++)
			pr_full_io(ctl_of(pr, i)->fd, tab, pr->n * sizeof *tab, true, pr->timeout_s);
		if (p->rendezvous_fd < 0)
			close(rfd);
	} else {
		int fd = pr_connect_to(master_ip, p->master_port, p->bind_ip, pr->timeout_s);
		struct hello h = {pr->me, dport, 0, p->bind_ip, 0, pr->token};
		if (fd < 0 || pr_full_io(fd, &h, sizeof h, true, pr->timeout_s) ||
		    pr_full_io(fd, tab, pr->n * sizeof *tab, false, pr->timeout_s)) {
			fab_err_set(err, FAB_EIO, "rank %u: rendezvous with rank 0 at %s:%u failed", pr->me, p->master,
				    p->master_port);
			if (fd >= 0)
				close(fd);
			goto fail;
		}
		ctl_of(pr, 0)->fd = fd;
	}
	for (uint32_t j = 0; j < pr->n; j++)
		pr->ip[j] = tab[j].ip;
	/* the data mesh: connect to lower ranks, accept higher ones */
	for (uint32_t j = 0; j < pr->me; j++)
		for (uint32_t k = 0; k < pr->nc; k++) {
			int fd = pr_connect_to(tab[j].ip, tab[j].port, p->bind_ip, pr->timeout_s);
			struct hello h = {pr->me, (uint16_t)k, 0, 0, 0, pr->token};
			if (fd < 0 || pr_full_io(fd, &h, sizeof h, true, pr->timeout_s)) {
				fab_err_set(err, FAB_EIO, "rank %u: cannot reach %s", pr->me, pr_rname(pr, j, nm));
				if (fd >= 0)
					close(fd);
				goto fail;
			}
			C(pr, j, 1 + k)->fd = fd;
		}
	for (uint32_t k = (pr->n - 1 - pr->me) * pr->nc; k > 0; k--) {
		struct hello h;
		int fd = pr_accept_checked(pr, dfd, &h, NULL);
		if (fd < 0 || h.rank <= pr->me || h.rank >= pr->n || h.port >= pr->nc ||
		    C(pr, h.rank, 1u + h.port)->fd >= 0) {
			fab_err_set(err, FAB_EIO, "rank %u: the mesh did not complete in %.0f s", pr->me,
				    pr->timeout_s);
			if (fd >= 0)
				close(fd);
			goto fail;
		}
		C(pr, h.rank, 1u + h.port)->fd = fd;
	}
	for (size_t k = 0; k < nconn; k++)
		if (pr->c[k].fd >= 0)
			pr_tune(pr->c[k].fd, !pr->c[k].ctl);
	close(dfd);
	free(tab);
	return pr;
fail:
	if (dfd >= 0)
		close(dfd);
	free(tab);
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

const char *fab_probe_env(struct fab_probe_params *p)
{
	static const struct {
		const char *name, *rank, *size;
	} l[] = {{"mpirun (Open MPI)", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
		 {"MPICH/PMI", "PMI_RANK", "PMI_SIZE"},
		 {"srun (Slurm)", "SLURM_PROCID", "SLURM_NTASKS"},
		 {"torchrun-style", "RANK", "WORLD_SIZE"}};
	const char *ma = getenv("MASTER_ADDR"), *mp = getenv("MASTER_PORT"), *tok = getenv("FABSCOPE_TOKEN");
	if (ma)
		snprintf(p->master, sizeof p->master, "%s", ma);
	if (mp)
		p->master_port = (uint16_t)strtoul(mp, NULL, 10);
	if (tok)
		p->token = strtoull(tok, NULL, 16);
	for (size_t i = 0; i < FAB_ARRAY_LEN(l); i++) {
		const char *r = getenv(l[i].rank), *n = getenv(l[i].size);
		if (!r || !n)
			continue;
		p->rank = (uint32_t)strtoul(r, NULL, 10);
		p->nranks = (uint32_t)strtoul(n, NULL, 10);
		return l[i].name;
	}
	return NULL;
}
