// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * lb_pick.c - ns per pick of each balancing policy over 3, 16 and 128
 * providers, one thread and two (one per core, on the same balancer),
 * beside a plain rand() % n: first the policy core (balance.c's
 * sds_lb_pick() on a load in memory), then the API (sds.h's
 * sds_lb_choose(), each provider's load read from its flag entry in a
 * flags region, as in an application: tests/libsds/fake/fakeloader.c serves
 * the region, with every provider bound).  Linked with build/lib/
 * libsds.a, so it times the library's own objects.
 *
 * Rounds alternate the policies (each round starts one further along) so
 * that a drift of the machine is spread over all of them; the table gives
 * each one's median round.  Every pick is on a load like a tick's: the
 * providers warm, none downgraded, in-flight counts and latencies
 * differing; consistent_hash's key is a fresh 8-byte number per pick.
 *
 *   lb_pick [rounds [picks-per-round]]     (11, 200000)
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "balance.h"
#include "fakeloader.h"
#include "sds.h"

#define NPOL	(1 + SDS_LB_NPOLICIES)	/* rand() % n, then ours */
#define MAXR	101

static const int sizes[] = { 3, 16, 128 };
#define NSIZES	3

static int rounds = 11;
static long picks = 200000;

struct run {
	struct sds_balancer *bal;	/* the API's balancer; NULL: @lb */
	struct sds_lb *lb;		/* NULL: rand() % n */
	const struct sds_lb_load *load;
	int n;
	int cpu;
	pthread_barrier_t *go;
	double ns;			/* per pick */
	long sink;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *run_one(void *arg)
{
	struct run *r = arg;
	uint64_t t0, t1, clock = 1000000ULL * 1000000000ULL;
	long i, sink = 0;

	pin(r->cpu);
	if (r->go)
		pthread_barrier_wait(r->go);
	t0 = now_ns();
	if (r->bal) {
		for (i = 0; i < picks; i++) {
			uint64_t key = (uint64_t)i * 0x9e3779b97f4a7c15ULL;

			sink += sds_lb_choose(r->bal, &key, sizeof(key));
		}
	} else if (!r->lb) {
		for (i = 0; i < picks; i++)
			sink += rand() % r->n;
	} else {
		for (i = 0; i < picks; i++) {
			uint64_t key = (uint64_t)i * 0x9e3779b97f4a7c15ULL;

			sink += sds_lb_pick(r->lb, r->load, clock, &key, sizeof(key));
		}
	}
	t1 = now_ns();
	r->ns = (double)(t1 - t0) / picks;
	r->sink = sink;
	return NULL;
}

/* One timing: ns per pick (the mean of the threads' when two). */
static double time_it(struct sds_balancer *bal, struct sds_lb *lb,
		      const struct sds_lb_load *load, int n, int threads, long *sink)
{
	struct run r[2];
	pthread_barrier_t go;
	pthread_t t[2];
	int i;

	if (threads == 1) {
		r[0] = (struct run){ .bal = bal, .lb = lb, .load = load, .n = n, .cpu = 0 };
		run_one(&r[0]);
		*sink += r[0].sink;
		return r[0].ns;
	}
	pthread_barrier_init(&go, NULL, threads);
	for (i = 0; i < threads; i++) {
		r[i] = (struct run){ .bal = bal, .lb = lb, .load = load, .n = n,
				     .cpu = i, .go = &go };
		if (pthread_create(&t[i], NULL, run_one, &r[i])) {
			perror("lb_pick: pthread_create");
			exit(1);
		}
	}
	for (i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&go);
	*sink += r[0].sink + r[1].sink;
	return (r[0].ns + r[1].ns) / 2;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static const char *pol_name(int p)
{
	return p ? sds_lb_policy_name(p - 1) : "rand() % n";
}

/* Print @med as a table titled @title. */
static void table(const char *title, double med[NPOL][NSIZES][2])
{
	int s, p, th;

	printf("%s\n\n", title);
	printf("| %-18s |", "policy");
	for (s = 0; s < NSIZES; s++)
		printf(" n=%-3d 1 thread | n=%-3d 2 threads |", sizes[s], sizes[s]);
	printf("\n|%s|", "--------------------");
	for (s = 0; s < NSIZES; s++)
		printf("---------------:|-----------------:|");
	printf("\n");
	for (p = 0; p < NPOL; p++) {
		printf("| %-18s |", pol_name(p));
		for (s = 0; s < NSIZES; s++)
			for (th = 0; th < 2; th++)
				printf(th ? " %16.1f |" : " %14.1f |", med[p][s][th]);
		printf("\n");
	}
	printf("\ntarget <= 50 ns at 16 providers:");
	for (p = 1; p < NPOL; p++)
		printf(" %s %s%s", pol_name(p),
		       med[p][1][0] <= 50 && med[p][1][1] <= 50 ? "met" : "MISSED",
		       p + 1 < NPOL ? "," : "\n\n");
}

/*
 * The API's balancers over a stand-in loader's region: one client, one
 * balancer per policy and size, every provider's entry holding the load
 * of @load (in flight, latency) as a tick would.
 */
static int api_setup(struct fake_loader *fl, char *dir, struct sds_client **c,
		     struct sds_balancer *bal[NPOL][NSIZES],
		     const struct sds_lb_provider *prov,
		     const struct sds_lb_load *load)
{
	static struct sds_lb_member m[SDS_LB_MAX];
	char uid[16], dep[16], name[SDS_NAME_MAX + 1];
	int s, p, i;

	if (!mkdtemp(dir))
		return -1;
	setenv("SDS_RUN_DIR", dir, 1);
	/* The stand-in runs as we do: trust it if not root. */
	snprintf(uid, sizeof(uid), "%u", (unsigned)getuid());
	setenv("SDS_LOADER_UID", uid, 1);
	if (fake_start(fl, dir, "bench", "lb", 1))
		return -1;
	*c = sds_client_open("bench", "lb");
	for (i = 0; i < SDS_LB_MAX; i++)
		m[i] = (struct sds_lb_member){ prov[i].name, prov[i].weight, 0 };
	for (s = 0; s < NSIZES; s++) {
		snprintf(dep, sizeof(dep), "dep%d", sizes[s]);
		for (p = 1; p < NPOL; p++) {
			bal[p][s] = sds_lb_open(*c, dep, sds_lb_policy_name(p - 1),
						m, sizes[s], NULL);
			if (!bal[p][s]) {
				fprintf(stderr, "lb_pick: %s\n", sds_lb_error());
				return -1;
			}
		}
		for (i = 0; i < sizes[s]; i++) {
			struct sds_flag *e;

			snprintf(name, sizeof(name), "%s@%s", dep, prov[i].name);
			e = fake_entry(fl, name);
			if (!e) {
				fprintf(stderr, "lb_pick: %s not registered\n", name);
				return -1;
			}
			e->lb_inflight = (__u32)load[i].in_flight;
			e->lb_latency_ns = (__u32)load[i].latency_ns;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static double t[2][NPOL][NSIZES][2][MAXR];
	static double med[2][NPOL][NSIZES][2];
	static struct sds_lb_load load[SDS_LB_MAX];
	static struct sds_lb_provider prov[SDS_LB_MAX];
	static char names[SDS_LB_MAX][16];
	struct sds_lb *lb[NPOL][NSIZES] = { { NULL } };
	struct sds_balancer *bal[NPOL][NSIZES] = { { NULL } };
	char dir[] = "/tmp/sds-lbbench-XXXXXX";
	struct sds_client *c = NULL;
	struct fake_loader fl;
	char err[256];
	long sink = 0;
	int s, p, q, th, r, i, api;

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		picks = atol(argv[2]);
	if (rounds < 1 || rounds > MAXR || picks < 1) {
		fprintf(stderr, "lb_pick: usage: lb_pick [rounds (1..%d) [picks]]\n", MAXR);
		return 2;
	}
	for (i = 0; i < SDS_LB_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "provider-%d", i);
		prov[i] = (struct sds_lb_provider){ .name = names[i], .weight = 100 + 37 * (i % 5) };
		load[i] = (struct sds_lb_load){ .in_flight = 1 + (i * 7) % 11,
						.latency_ns = 1000000 + 1000 * ((i * 13) % 17) };
	}
	for (s = 0; s < NSIZES; s++)
		for (p = 1; p < NPOL; p++)
			if (sds_lb_new(&lb[p][s], sds_lb_policy_name(p - 1), prov, sizes[s],
				       0, err, sizeof(err))) {
				fprintf(stderr, "lb_pick: %s\n", err);
				return 1;
			}
	if (api_setup(&fl, dir, &c, bal, prov, load)) {
		fprintf(stderr, "lb_pick: no stand-in loader in %s\n", dir);
		return 1;
	}
	srand(1);
	sds_lb_seed(1);

	for (r = 0; r < rounds; r++)
		for (q = 0; q < NPOL; q++) {
			p = (q + r) % NPOL;
			for (api = 0; api < 2; api++)
				for (s = 0; s < NSIZES; s++)
					for (th = 0; th < 2; th++)
						t[api][p][s][th][r] =
							time_it(api ? bal[p][s] : NULL,
								lb[p][s], load, sizes[s],
								th + 1, &sink);
		}

	for (api = 0; api < 2; api++)
		for (p = 0; p < NPOL; p++)
			for (s = 0; s < NSIZES; s++)
				for (th = 0; th < 2; th++) {
					qsort(t[api][p][s][th], rounds, sizeof(double),
					      cmp_double);
					med[api][p][s][th] = t[api][p][s][th][rounds / 2];
				}
	printf("ns per pick, median of %d rounds of %ld picks per thread "
	       "(policies alternating)\n\n", rounds, picks);
	table("The policy core: balance.c's sds_lb_pick() on a load in memory", med[0]);
	table("The API: sds_lb_choose(), each provider's load read from its "
	      "flag entry (the clock read, the downgrade state, in flight, "
	      "latency)", med[1]);
	for (s = 0; s < NSIZES; s++)
		for (p = 1; p < NPOL; p++) {
			sds_lb_free(lb[p][s]);
			sds_lb_close(bal[p][s]);
		}
	sds_client_close(c);
	fake_stop(&fl);
	rmdir(dir);
	return sink == 42 ? 3 : 0;	/* keeps the picks from being optimised out */
}
