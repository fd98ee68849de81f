/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * tools/demo/lb_demo.c: the balancing demo (make demo-lb, docs/BALANCE.md
 * "The demo").
 *
 * A service calls its dependency "pay" through a libsds balancer over
 * three providers, each a small TCP server on 127.0.0.1 run by this
 * process (real sockets: a call is a one-byte request and a one-byte
 * answer on a keep-alive connection): p0 answers in 1 ms; from second
 * LBD_BREAK on, p1 answers in 10 ms and p2 answers with an error (its
 * point's exception_threshold trips it); from second LBD_HEAL on both
 * are as p0 again.  The callers balance with least_active up to second
 * LBD_SWITCH, then with shortest_response.  Every second one line of the
 * table: each provider's calls and share, and the fallbacks.
 *
 * Each call is guarded by hand (sds_lb_choose, sds_lb_point,
 * sds_should_downgrade .. sds_downgrade_finally) so that every call is
 * accounted for: made = the providers' calls + fallbacks, and each
 * provider point's visits = its calls + its refusals.  The last lines
 * are those totals, for tools/demo/lb_demo.py to check against sds-bpf.
 *
 *   lb-demo [--seconds N]     (default LBD_SECONDS)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sds.h>

#define LBD_NP		3	/* providers */
#define LBD_CALLERS	4	/* caller threads, each a closed loop */
#define LBD_FAST_US	1000	/* a healthy provider's latency */
#define LBD_SLOW_US	10000	/* p1's while slow: 10x */
#define LBD_BREAK	2	/* p1 slow and p2 failing after this second */
#define LBD_SWITCH	8	/* shortest_response after this second */
#define LBD_HEAL	16	/* p1 fast, p2 answering after this second */
#define LBD_SECONDS	30	/* the whole run */

/* One provider: its server and how it behaves now. */
struct lbd_provider {
	int lfd;			/* its listening socket */
	unsigned short port;		/* its port on 127.0.0.1 */
	unsigned int lat_us;		/* atomic: how long an answer takes */
	int failing;			/* atomic: answer with an error */
};

/* What happened to calls, per provider and overall (atomics). */
struct lbd_counts {
	unsigned long calls[LBD_NP];	/* the provider was called */
	unsigned long errors[LBD_NP];	/* ... and answered with an error */
	unsigned long refused[LBD_NP];	/* its guard downgraded the call */
	unsigned long none;		/* every provider downgraded */
};

static struct lbd_provider prov[LBD_NP];
static struct sds_balancer *lbd_lb;	/* atomic: the policy in use */
static int lbd_stopping;		/* atomic: callers end their loop */
static struct lbd_counts tot, sec;	/* the whole run; this second */

static void lbd_sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void lbd_add(unsigned long *a, unsigned long *b)
{
	__atomic_fetch_add(a, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(b, 1, __ATOMIC_RELAXED);
}

/* ---- the providers: one thread per connection ---------------------------- */

/* A connection being served: the socket and its provider. */
struct lbd_conn {
	int fd;				/* the accepted socket */
	struct lbd_provider *p;		/* whose behaviour it follows */
};

/* Answer one connection's requests until the caller closes it. */
static void *lbd_conn_run(void *arg)
{
	struct lbd_conn *cn = arg;
	char c;

	while (read(cn->fd, &c, 1) == 1) {
		lbd_sleep_us(__atomic_load_n(&cn->p->lat_us, __ATOMIC_RELAXED));
		c = __atomic_load_n(&cn->p->failing, __ATOMIC_RELAXED) ? 'e' : 'o';
		if (write(cn->fd, &c, 1) != 1)
			break;
	}
	close(cn->fd);
	free(cn);
	return NULL;
}

static void *lbd_accept(void *arg)
{
	struct lbd_provider *p = arg;
	struct lbd_conn *cn;
	pthread_t th;
	int fd;

	while ((fd = accept(p->lfd, NULL, NULL)) >= 0) {
		cn = malloc(sizeof(*cn));
		if (!cn) {
			close(fd);
			continue;
		}
		*cn = (struct lbd_conn){ fd, p };
		if (pthread_create(&th, NULL, lbd_conn_run, cn)) {
			close(fd);
			free(cn);
			continue;
		}
		pthread_detach(th);
	}
	return NULL;
}

static int lbd_listen(struct lbd_provider *p)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	pthread_t th;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (p->lfd < 0 || bind(p->lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(p->lfd, 64) ||
	    getsockname(p->lfd, (struct sockaddr *)&a, &len))
		return -1;
	p->port = ntohs(a.sin_port);
	p->lat_us = LBD_FAST_US;
	if (pthread_create(&th, NULL, lbd_accept, p))
		return -1;
	pthread_detach(th);
	return 0;
}

/* ---- the service: callers ------------------------------------------------ */

static int lbd_connect(unsigned short port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd, one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One call of provider i on its connection @fd: 0 ok, -1 an error. */
static int lbd_pay(int fd)
{
	char c = 'q';

	if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
		return -1;
	return c == 'o' ? 0 : -1;
}

static void *lbd_caller(void *arg)
{
	int fd[LBD_NP], i;
	struct sds_balancer *b;
	struct sds_point *pt;

	(void)arg;
	for (i = 0; i < LBD_NP; i++) {
		fd[i] = lbd_connect(prov[i].port);
		if (fd[i] < 0) {
			perror("lb-demo: connect");
			exit(1);
		}
	}
	while (!__atomic_load_n(&lbd_stopping, __ATOMIC_RELAXED)) {
		b = __atomic_load_n(&lbd_lb, __ATOMIC_ACQUIRE);
		i = sds_lb_choose(b, NULL, 0);
		if (i < 0) {
			/* all downgraded: the fallback, without spinning */
			lbd_add(&tot.none, &sec.none);
			lbd_sleep_us(LBD_FAST_US);
			continue;
		}
		pt = sds_lb_point(b, i);
		if (sds_should_downgrade(pt)) {
			lbd_add(&tot.refused[i], &sec.refused[i]);
		} else {
			lbd_add(&tot.calls[i], &sec.calls[i]);
			if (lbd_pay(fd[i]) < 0) {
				lbd_add(&tot.errors[i], &sec.errors[i]);
				sds_exception_sign(pt);
			}
		}
		sds_downgrade_finally(pt);
	}
	for (i = 0; i < LBD_NP; i++)
		close(fd[i]);
	return NULL;
}

/* ---- the table ----------------------------------------------------------- */

static unsigned long lbd_take(unsigned long *v)
{
	return __atomic_exchange_n(v, 0, __ATOMIC_RELAXED);
}

/* One line: second @s, the policy, each provider's calls and share. */
static void lbd_row(int s, const char *policy)
{
	unsigned long c[LBD_NP], e[LBD_NP], fb = lbd_take(&sec.none), all;
	int i;

	for (i = 0; i < LBD_NP; i++) {
		c[i] = lbd_take(&sec.calls[i]);
		e[i] = lbd_take(&sec.errors[i]);
		fb += lbd_take(&sec.refused[i]);
	}
	all = c[0] + c[1] + c[2] + fb;
	printf("%3d  %-17s", s, policy);
	for (i = 0; i < LBD_NP; i++)
		printf("  p%d %5lu %3lu%% %4lu", i, c[i],
		       all ? c[i] * 100 / all : 0, e[i]);
	printf("  fallback %4lu\n", fb);
}

static void lbd_set(int i, unsigned int lat_us, int failing)
{
	__atomic_store_n(&prov[i].lat_us, lat_us, __ATOMIC_RELAXED);
	__atomic_store_n(&prov[i].failing, failing, __ATOMIC_RELAXED);
}

static struct sds_balancer *lbd_open(struct sds_client *cl, const char *pol)
{
	static const struct sds_lb_member m[LBD_NP] = {
		{ "p0", 100, 0 }, { "p1", 100, 0 }, { "p2", 100, 0 },
	};
	struct sds_lb_opts o = { .warmup_ns = SDS_LB_NO_WARMUP };
	struct sds_balancer *b = sds_lb_open(cl, "pay", pol, m, LBD_NP, &o);

	if (!b) {
		fprintf(stderr, "lb-demo: balancer %s: %s\n", pol, sds_lb_error());
		exit(1);
	}
	return b;
}

static void lbd_totals(void)
{
	unsigned long made = tot.none, fb = tot.none;
	int i;

	for (i = 0; i < LBD_NP; i++) {
		made += tot.calls[i] + tot.refused[i];
		fb += tot.refused[i];
	}
	printf("totals: made %lu = calls %lu + %lu + %lu + fallbacks %lu "
	       "(all downgraded %lu)\n", made, tot.calls[0], tot.calls[1],
	       tot.calls[2], fb, tot.none);
	for (i = 0; i < LBD_NP; i++)
		printf("point pay@p%d: visits %lu calls %lu errors %lu "
		       "refused %lu\n", i, tot.calls[i] + tot.refused[i],
		       tot.calls[i], tot.errors[i], tot.refused[i]);
}

int main(int argc, char **argv)
{
	struct sds_balancer *la, *sr;
	struct sds_client *cl;
	pthread_t th[LBD_CALLERS];
	struct timespec tick;		/* the end of the current second */
	int seconds = LBD_SECONDS, s, i;

	if (argc == 3 && !strcmp(argv[1], "--seconds"))
		seconds = atoi(argv[2]);
	if (seconds < 1 || (argc != 1 && argc != 3)) {
		fprintf(stderr, "usage: lb-demo [--seconds N]  (N >= 1)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < LBD_NP; i++)
		if (lbd_listen(&prov[i])) {
			perror("lb-demo: provider");
			return 1;
		}
	cl = sds_client_open("default", "lbdemo");
	la = lbd_open(cl, "least_active");
	sr = lbd_open(cl, "shortest_response");
	__atomic_store_n(&lbd_lb, la, __ATOMIC_RELEASE);
	printf("providers: p0 127.0.0.1:%u  p1 127.0.0.1:%u  p2 127.0.0.1:%u; "
	       "%d callers\n", prov[0].port, prov[1].port, prov[2].port,
	       LBD_CALLERS);
	printf("  s  policy           "
	       "  p0 calls  %%  err  p1 calls  %%  err  p2 calls  %%  err"
	       "  fallback\n");
	clock_gettime(CLOCK_MONOTONIC, &tick);
	for (i = 0; i < LBD_CALLERS; i++)
		pthread_create(&th[i], NULL, lbd_caller, NULL);
	for (s = 1; s <= seconds; s++) {
		const char *note = "";

		/* whole seconds from the start: the phases do not drift */
		tick.tv_sec++;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &tick,
				       NULL) == EINTR)
			;
		lbd_row(s, __atomic_load_n(&lbd_lb, __ATOMIC_RELAXED) == la ?
			"least_active" : "shortest_response");
		if (s == LBD_BREAK) {
			lbd_set(1, LBD_SLOW_US, 0);
			lbd_set(2, LBD_FAST_US, 1);
			note = "p1 now answers in 10 ms, p2 with errors";
		} else if (s == LBD_SWITCH) {
			__atomic_store_n(&lbd_lb, sr, __ATOMIC_RELEASE);
			note = "the service switches to shortest_response";
		} else if (s == LBD_HEAL) {
			lbd_set(1, LBD_FAST_US, 0);
			lbd_set(2, LBD_FAST_US, 0);
			note = "p1 and p2 healed: both answer in 1 ms";
		}
		if (*note)
			printf("---  %s\n", note);
	}
	__atomic_store_n(&lbd_stopping, 1, __ATOMIC_RELAXED);
	for (i = 0; i < LBD_CALLERS; i++)
		pthread_join(th[i], NULL);
	lbd_totals();
	sds_lb_close(la);
	sds_lb_close(sr);
	sds_client_close(cl);
	return 0;
}
