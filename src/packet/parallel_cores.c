/*
 * parallel_cores.c - the packet engine's threads and the cores they get:
 * how many start (the free cores), and how many go on working as other
 * processes take cores and give them back.
 *
 * Every LOOK_WINDOWS windows worker 0 reads the clock; LOOK_NS after its
 * last look it reads every working thread's CPU time, the idle time of the
 * cores this process may run on, and how far the simulated time went.  A
 * thread that was on its core less than MIN_SHARE of the time (spinning
 * at the barrier counts: a free core gives about all of it) shares that
 * core with another process, and every window's barrier waits for its
 * time slice: the highest-numbered worker leaves after the next barrier,
 * and the others take its partitions (they claim any that wait).  That is
 * a trial: if at the next look, TRIAL_NS later, the simulated time went
 * slower than
 * TRIAL_KEEP of its pace before (fewer threads on more work: a split that
 * ran much faster than one thread even on a shared core), the worker
 * comes back and none leaves for HOLD_NS, twice as long each time.  A
 * worker that left parks; when the cores were idle MIN_SHARE of a core or
 * more since the last look, the lowest-numbered parked worker comes back
 * for the window after the next barrier.  The result does not move: which
 * thread runs a partition changes no byte (tests/cli/parallel_test.sh
 * forces both at given windows).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "parallel_int.h"

#define LOOK_WINDOWS 8u
#define LOOK_NS 200000000ull
#define MIN_SHARE 0.8
#define TRIAL_KEEP 0.95       /* a thread that left comes back if the run is slower than this without it */
#define HOLD_NS 2000000000ull /* and then none leaves for 2 s, 4 s, 8 s... */
#define TRIAL_NS 50000000ull  /* the look after a thread left comes sooner */

enum { MAXC = 256 }; /* cores read from /proc/stat */

static uint64_t ns_of(clockid_t c)
{
	struct timespec t;
	if (clock_gettime(c, &t))
		return 0;
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t worker_cpu_ns(const struct pkt_par *par, uint32_t k)
{
	clockid_t c = CLOCK_THREAD_CPUTIME_ID; /* worker 0: the calling thread */
	if (k && pthread_getcpuclockid(par->worker[k].thread, &c))
		return 0;
	return ns_of(c);
}

/* /proc/stat's ticks of each core of this process's affinity mask:
 * all[cpu] and idle[cpu] (idle and iowait), 0 for the others; false where
 * it cannot tell */
static bool core_ticks(uint64_t *all, uint64_t *idle)
{
	cpu_set_t mask;
	if (sched_getaffinity(0, sizeof mask, &mask))
		return false;
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return false;
	char line[512];
	bool got = false;
	while (fgets(line, sizeof line, f)) {
		unsigned cpu;
		unsigned long long v[8] = {0};
		if (sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5], &v[6], &v[7]) < 5 ||
		    cpu >= MAXC || !CPU_ISSET(cpu, &mask))
			continue;
		all[cpu] = 0;
		for (int k = 0; k < 8; k++)
			all[cpu] += v[k];
		idle[cpu] = v[3] + v[4];
		got = true;
	}
	fclose(f);
	return got;
}

/* The cores this process may run on that are free now: those of its
 * affinity mask idle at least half of a 20 ms look at /proc/stat (during
 * which it sleeps, so that its own core counts among them).  UINT32_MAX
 * where it cannot tell.  Threads are kept to them: a thread on a core
 * another process holds makes every window's barrier wait for its time
 * slice (2 threads with the other core busy ran 0.70x and 0.94x as fast
 * as 1). */
uint32_t pkt_free_cores(void)
{
	/* (a run in a process's thread of its own: no static state) */
	uint64_t all0[MAXC] = {0}, idle0[MAXC] = {0}, all1[MAXC] = {0}, idle1[MAXC] = {0};
	if (!core_ticks(all0, idle0))
		return UINT32_MAX;
	nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
	if (!core_ticks(all1, idle1))
		return UINT32_MAX;
	uint32_t free_now = 0;
	for (int c = 0; c < MAXC; c++) {
		uint64_t d_all = all1[c] - all0[c], d_idle = idle1[c] - idle0[c];
		if (all0[c] && d_all && 2 * (d_all - d_idle) <= d_all)
			free_now++;
	}
	return FAB_MAX(free_now, 1u);
}

/* idle cores since the last look, in cores (0 at the first) */
static double spare_cores(struct pkt_par *par)
{
	uint64_t all[MAXC] = {0}, idle[MAXC] = {0};
	if (!core_ticks(all, idle))
		return 0;
	uint64_t a = 0, i = 0;
	uint32_t n = 0;
	for (int c = 0; c < MAXC; c++)
		if (all[c]) {
			a += all[c];
			i += idle[c];
			n++;
		}
	double spare = 0;
	if (par->look_all && a > par->look_all && i >= par->look_idle)
		spare = (double)(i - par->look_idle) / (double)(a - par->look_all) * n;
	par->look_all = a;
	par->look_idle = i;
	return spare;
}

void pkt_par_look_init(struct pkt_par *par)
{
	par->look_cpu = fab_xcalloc(par->workers, sizeof *par->look_cpu);
	const char *at = getenv("FABSCOPE_THREADS_SHRINK_AT");
	par->shrink_at = at ? (unsigned)strtoul(at, NULL, 10) : 0;
	at = getenv("FABSCOPE_THREADS_GROW_AT");
	par->grow_at = at ? (unsigned)strtoul(at, NULL, 10) : 0;
	par->adapt = !getenv("FABSCOPE_THREADS_EXACT");
	par->rejoin_id = UINT32_MAX;
	pthread_mutex_init(&par->park_mu, NULL);
	pthread_cond_init(&par->park_cv, NULL);
}

void pkt_par_look_free(struct pkt_par *par)
{
	free(par->look_cpu);
	pthread_mutex_destroy(&par->park_mu);
	pthread_cond_destroy(&par->park_cv);
}

/* the share of its core the least served working thread had since the
 * last look (1 at the first), and every working thread's CPU time now */
static double least_share(struct pkt_par *par, uint32_t active, uint64_t now)
{
	double least = 1;
	for (uint32_t k = 0; k < active; k++) {
		uint64_t cpu = worker_cpu_ns(par, k);
		if (par->look_ns && now > par->look_ns)
			least = FAB_MIN(least, (double)(cpu - par->look_cpu[k]) / (double)(now - par->look_ns));
		par->look_cpu[k] = cpu;
	}
	return least;
}

uint32_t pkt_par_look(struct pkt_par *par, unsigned gen, uint32_t active, fab_time_ps win)
{
	if (par->grow_at && gen >= par->grow_at)
		return FAB_MIN(active + 1, par->workers); /* (tests) back, one a window */
	if (par->shrink_at && gen >= par->shrink_at)
		return 1; /* (tests) */
	if (!par->adapt || gen % LOOK_WINDOWS)
		return active;
	uint64_t now = ns_of(CLOCK_MONOTONIC);
	if (par->look_ns && now - par->look_ns < (par->rate_before > 0 ? TRIAL_NS : LOOK_NS))
		return active;
	double spare = spare_cores(par), least = least_share(par, active, now);
	bool first = !par->look_ns;
	if (!first)
		par->rate = (double)(win - par->look_win) / (double)(now - par->look_ns);
	par->look_ns = now;
	par->look_win = win;
	if (first)
		return active;
	if (par->rate_before > 0) {
		/* a thread left at the last look: if the run went slower
		 * without it, it comes back, and none leaves for a while */
		double before = par->rate_before;
		par->rate_before = 0;
		if (par->rate < TRIAL_KEEP * before) {
			par->hold_ns = par->hold_ns ? 2 * par->hold_ns : HOLD_NS;
			par->hold_until_ns = now + par->hold_ns;
			par->look_ns = 0; /* the next look only takes the times again */
			return active + 1;
		}
	}
	if (active > 1 && least < MIN_SHARE && now >= par->hold_until_ns) {
		par->rate_before = par->rate;
		return active - 1;
	}
	if (active < par->workers && spare >= MIN_SHARE) {
		par->look_ns = 0;
		return active + 1;
	}
	return active;
}

bool pkt_par_park(struct pkt_par *par, uint32_t id, unsigned *gen, fab_time_ps *win)
{
	pthread_mutex_lock(&par->park_mu);
	while (!par->over && par->rejoin_id != id)
		pthread_cond_wait(&par->park_cv, &par->park_mu);
	bool back = par->rejoin_id == id && !par->rejoin_over;
	if (par->rejoin_id == id) {
		*gen = par->rejoin_gen - 1; /* the loop's next is rejoin_gen */
		*win = par->rejoin_win;
		par->rejoin_id = UINT32_MAX;
	}
	pthread_mutex_unlock(&par->park_mu);
	return back;
}

void pkt_par_rejoin(struct pkt_par *par, uint32_t id, unsigned gen, fab_time_ps win, bool over)
{
	pthread_mutex_lock(&par->park_mu);
	par->rejoin_id = id;
	par->rejoin_gen = gen;
	par->rejoin_win = win;
	par->rejoin_over = over;
	pthread_cond_broadcast(&par->park_cv);
	pthread_mutex_unlock(&par->park_mu);
}

void pkt_par_over(struct pkt_par *par)
{
	pthread_mutex_lock(&par->park_mu);
	par->over = true;
	pthread_cond_broadcast(&par->park_cv);
	pthread_mutex_unlock(&par->park_mu);
}
