/*
 * mpi_allreduce.c - the reference for `make bench`: MPI_Allreduce (float,
 * sum) over a size sweep, timed like nccl-tests (warm-up, then the mean of
 * -n iterations, the slowest rank's time), printed as fabscope probe prints
 * its AllReduce rows: size, time, algbw, busbw.
 *
 *   mpirun -np 4 --mca btl tcp,self ./mpi_allreduce [-b BYTES] [-e BYTES] [-n ITERS] [-w WARMUP]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, n;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	size_t minb = 1 << 20, maxb = 256u << 20;
	int iters = 5, warmup = 1, c;
	while ((c = getopt(argc, argv, "b:e:n:w:")) != -1) {
		if (c == 'b')
			minb = strtoull(optarg, NULL, 0);
		else if (c == 'e')
			maxb = strtoull(optarg, NULL, 0);
		else if (c == 'n')
			iters = atoi(optarg);
		else if (c == 'w')
			warmup = atoi(optarg);
	}
	float *in = malloc(maxb), *out = malloc(maxb);
	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (size_t i = 0; i < maxb / 4; i++)
		in[i] = (float)((rank + i) % 7);
	if (!rank)
		printf("# MPI_Allreduce, %d ranks, float sum\n# %10s %10s %8s %8s\n", n, "size(B)", "time(us)",
		       "algbw", "busbw");
	for (size_t b = minb; b <= maxb; b *= 2) {
		int count = (int)(b / 4);
		double t = 0;
		for (int it = 0; it < warmup + iters; it++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = MPI_Wtime();
			MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
			double dt = MPI_Wtime() - t0, mx;
			MPI_Reduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
			if (it >= warmup)
				t += mx;
		}
		t /= iters;
		double algbw = (double)b / t / 1e9;
		if (!rank)
			printf("  %10zu %10.1f %8.2f %8.2f\n", b, t * 1e6, algbw, algbw * 2 * (n - 1) / n);
	}
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
