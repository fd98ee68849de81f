// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* serve.c - `sds-copy serve`: options, sockets, signals and the loop. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "serve.h"

#define TICK_MS		50	/* deadlines, reconnects and expiry */

uint64_t copy_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int copy_ev_mod(struct copy_server *s, int fd, struct copy_ev *ev,
		uint32_t events, int op)
{
	struct epoll_event e = { .events = events, .data.ptr = ev };

	return epoll_ctl(s->epfd, op, fd, &e);
}

static const char serve_usage[] =
	"usage: sds-copy serve --listen ADDR:PORT --plans FILE [--name NAME]\n"
	"                      [--max-amplification N] [--queue N] [--queue-bytes N]\n"
	"                      [--max-senders N]\n"
	"       sds-copy serve --listen ADDR:PORT --admin URL[,URL] --token-file FILE\n"
	"                      [--advertise HOST:PORT] [--name NAME] [options]\n"
	"  Receive copy records from loaders on ADDR:PORT and send each record of\n"
	"  a plan's points N times to the plan's shadow endpoints (docs/COPY.md).\n"
	"  --plans FILE            the plans (JSON); SIGHUP reloads it\n"
	"  --admin URL[,URL]       the plans from sds-admin instead (failover order):\n"
	"                          a heartbeat at start and every 10 s; SIGHUP: now\n"
	"  --token-file FILE       the admin's bearer token\n"
	"  --advertise HOST:PORT   where loaders reach this server (default --listen)\n"
	"  --name NAME             control socket copy-NAME.sock (default \"default\")\n"
	"  --max-amplification N   the largest amplification a plan may ask (20)\n"
	"  --queue N               copies queued per endpoint before drops (65536)\n"
	"  --queue-bytes N         bytes of queued requests in all (268435456)\n"
	"  --max-senders N         sender connections at once (64)\n"
	"  --max-senders-per-addr N  sender connections of one address (8)\n"
	"  --hello-timeout S       a sender's hello within S seconds (5)\n"
	"  --idle-timeout S        close a sender silent for S seconds, 0: never (300)\n"
	"  --stream-token-file FILE  senders must present this token in their\n"
	"                          hello (attach --copy-token-file); else closed\n"
	"  Runs until SIGINT or SIGTERM; `sds-copy stats` shows its counters.\n";

static int num_arg(const char *opt, const char *v, long long lo, long long hi,
		   long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(v, &end, 10);
	if (errno || !*v || *end || *out < lo || *out > hi) {
		fprintf(stderr, "sds-copy: serve: %s %s: not an integer in %lld..%lld\n",
			opt, v, lo, hi);
		return -1;
	}
	return 0;
}

/* What serve_args() reads besides the server's own fields. */
struct serve_opts {
	const char *listen_at;		/* --listen */
	const char *admin;		/* --admin */
	const char *token_file;		/* --token-file */
	const char *advertise;		/* --advertise */
	const char *stream_token_file;	/* --stream-token-file */
};

static int serve_args(struct copy_server *s, int argc, char **argv,
		      struct serve_opts *o)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "plans", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'n' },
		{ "max-amplification", required_argument, NULL, 'a' },
		{ "queue", required_argument, NULL, 'q' },
		{ "queue-bytes", required_argument, NULL, 'b' },
		{ "max-senders", required_argument, NULL, 's' },
		{ "admin", required_argument, NULL, 'A' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "advertise", required_argument, NULL, 'V' },
		{ "max-senders-per-addr", required_argument, NULL, 'P' },
		{ "hello-timeout", required_argument, NULL, 'H' },
		{ "idle-timeout", required_argument, NULL, 'I' },
		{ "stream-token-file", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	long long v;
	int c;

	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'l': o->listen_at = optarg; break;
		case 'p': s->plans_path = optarg; break;
		case 'n': s->name = optarg; break;
		case 'A': o->admin = optarg; break;
		case 'T': o->token_file = optarg; break;
		case 'V': o->advertise = optarg; break;
		case 'a':
			if (num_arg("--max-amplification", optarg, 1, COPY_AMP_LIMIT, &v))
				return 2;
			s->max_amp = (int)v;
			break;
		case 'q':
			if (num_arg("--queue", optarg, 1, 1 << 24, &v))
				return 2;
			s->qcap = (uint32_t)v;
			break;
		case 'b':
			if (num_arg("--queue-bytes", optarg, COPYREC_MAX_LEN, 1LL << 40, &v))
				return 2;
			s->mem_max = (uint64_t)v;
			break;
		case 's':
			if (num_arg("--max-senders", optarg, 1, 4096, &v))
				return 2;
			s->max_senders = (int)v;
			break;
		case 'P':
			if (num_arg("--max-senders-per-addr", optarg, 1, 4096, &v))
				return 2;
			s->max_per_addr = (int)v;
			break;
		case 'H':
			if (num_arg("--hello-timeout", optarg, 1, 3600, &v))
				return 2;
			s->hello_ms = (int)v * 1000;
			break;
		case 'I':
			if (num_arg("--idle-timeout", optarg, 0, 86400, &v))
				return 2;
			s->idle_s = (int)v;
			break;
		case 'S': o->stream_token_file = optarg; break;
		case 'h': fputs(serve_usage, stdout); return 0;
		default: fputs(serve_usage, stderr); return 2;
		}
	}
	if (optind != argc || !o->listen_at || !s->plans_path == !o->admin) {
		fprintf(stderr, "sds-copy: serve: %s\n", optind != argc ?
			"unexpected argument" : !o->listen_at ? "--listen is required" :
			"give one of --plans FILE and --admin URL");
		return 2;
	}
	if (!o->admin && (o->token_file || o->advertise)) {
		fprintf(stderr, "sds-copy: serve: --token-file and --advertise go with --admin\n");
		return 2;
	}
	return -1;
}

static int listen_open(struct copy_server *s, const char *at)
{
	struct copy_addr a;
	char err[256];
	int fd, one = 1;

	if (addr_parse(at, &a, err, sizeof(err))) {
		fprintf(stderr, "sds-copy: serve: --listen %s\n", err);
		return -1;
	}
	snprintf(s->listen_text, sizeof(s->listen_text), "%s", a.text);
	fd = socket(a.sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a.sa, a.salen) || listen(fd, 128)) {
		fprintf(stderr, "sds-copy: serve: --listen %s: %s\n", at, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	s->lfd = fd;
	return 0;
}

/* SIGHUP: the new file, or the old plans and one line saying why. */
static void plans_reload(struct copy_server *s)
{
	struct copy_plans np;
	char err[768];

	if (s->admin) {		/* ask the admin now */
		s->admin->next_s = 0;
		return;
	}
	if (plan_load(s->plans_path, s->max_amp, time(NULL), &np, err,
		      sizeof(err))) {
		s->reload_errors++;
		fprintf(stderr, "sds-copy: reload: %s: keeping the old plans\n", err);
		return;
	}
	if (copy_plans_apply(s, &np)) {
		s->reload_errors++;
		copy_plans__free(&np);
		fprintf(stderr, "sds-copy: reload: out of memory: keeping the old plans\n");
		return;
	}
	s->reloads++;
}

static void signal_read(struct copy_server *s)
{
	struct signalfd_siginfo si;

	while (read(s->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			plans_reload(s);
		else
			s->stop = true;
	}
}

static void tick(struct copy_server *s)
{
	int i, e;

	copy_plans_expire(s, time(NULL));
	copy_admin_tick(s);
	copy_senders_tick(s, copy_now_ms());
	live_tick(s, copy_now_ms());
	for (i = 0; i < s->nplans; i++)
		for (e = 0; e < s->plans[i].neps; e++)
			copy_endpoint_tick(s, &s->plans[i].eps[e], copy_now_ms());
}

static void loop(struct copy_server *s)
{
	struct epoll_event evs[64];
	uint64_t next_tick = 0;
	int n, i;

	while (!s->stop) {
		n = epoll_wait(s->epfd, evs, 64, TICK_MS);
		for (i = 0; i < n; i++) {
			struct copy_ev *ev = evs[i].data.ptr;

			switch (ev->kind) {
			case COPY_EV_LISTEN: copy_sender_accept(s); break;
			case COPY_EV_CTL: copy_ctl_accept(s); break;
			case COPY_EV_SIGNAL: signal_read(s); break;
			case COPY_EV_SENDER:
				copy_sender_event(s, (struct copy_sender *)ev);
				break;
			case COPY_EV_CONN:
				copy_conn_event(s, (struct copy_conn *)ev, evs[i].events);
				break;
			case COPY_EV_ADMIN: copy_admin_event(s); break;
			}
		}
		if (copy_now_ms() >= next_tick) {
			tick(s);
			next_tick = copy_now_ms() + TICK_MS;
		}
	}
}

static int signals_open(struct copy_server *s)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	s->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return s->sfd < 0 ? -1 : 0;
}

static void server_free(struct copy_server *s)
{
	struct copy_plans none = { 0 };

	copy_admin_stop(s);
	copy_senders_free(s);
	copy_plans_apply(s, &none);
	free(s->plans);
	live_free(s);
	copy_ctl_close(s);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->sfd >= 0)
		close(s->sfd);
	if (s->epfd >= 0)
		close(s->epfd);
}

int copy_serve_main(int argc, char **argv)
{
	struct copy_server s = {
		.epfd = -1, .lfd = -1, .cfd = -1, .ctl_lock = -1, .sfd = -1,
		.max_amp = COPY_AMP_MAX_DEFAULT, .qcap = COPY_QUEUE_DEFAULT,
		.mem_max = COPY_MEM_DEFAULT, .max_senders = COPY_SENDERS_DEFAULT,
		.max_per_addr = COPY_PER_ADDR_DEFAULT, .hello_ms = COPY_HELLO_MS_DEFAULT,
		.idle_s = COPY_IDLE_S_DEFAULT,
		.listen_ev.kind = COPY_EV_LISTEN, .ctl_ev.kind = COPY_EV_CTL,
		.sig_ev.kind = COPY_EV_SIGNAL,
	};
	static struct copy_admin admin;	/* ~40 KiB of counters: not on the stack */
	struct serve_opts o = { 0 };
	struct copy_plans np = { 0 };
	struct copy_addr adv;
	char err[768];
	int rc = 1;

	s.name = "default";
	rc = serve_args(&s, argc, argv, &o);
	if (rc >= 0)
		return rc;
	rc = 1;
	if (o.stream_token_file) {
		if (tokfile_read_token("--stream-token-file", o.stream_token_file,
				       s.stream_token, err, sizeof(err))) {
			fprintf(stderr, "sds-copy: serve: %s\n", err);
			return 1;
		}
		s.stream_token_len = strlen(s.stream_token);
	}
	if (o.admin) {
		if (copy_admin_init(&admin, o.admin, o.token_file, err, sizeof(err)) ||
		    addr_parse(o.advertise ? o.advertise : o.listen_at, &adv, err,
			       sizeof(err))) {
			fprintf(stderr, "sds-copy: serve: %s%s\n",
				o.advertise ? "--advertise " : "", err);
			return 1;
		}
		snprintf(admin.advertise, sizeof(admin.advertise), "%s", adv.text);
		s.admin = &admin;
	}
	/*
	 * Bodies come and go by the hundred thousand a second: keep freed
	 * heap instead of trimming and faulting it back in (a quarter of the
	 * time at full rate).  --queue-bytes bounds what is ever in use.
	 */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_TOP_PAD, 16 << 20);
	if (!s.admin &&
	    plan_load(s.plans_path, s.max_amp, time(NULL), &np, err, sizeof(err))) {
		fprintf(stderr, "sds-copy: serve: %s\n", err);
		return 1;
	}
	s.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s.epfd < 0 || signals_open(&s) || live_init(&s) ||
	    copy_plans_apply(&s, &np)) {
		copy_plans__free(&np);
		fprintf(stderr, "sds-copy: serve: setup: %s\n", strerror(errno));
		goto out;
	}
	if (listen_open(&s, o.listen_at))
		goto out;
	/* The control socket last: once it is there, the server serves. */
	if (copy_ctl_open(&s, s.name, err, sizeof(err))) {
		fprintf(stderr, "sds-copy: serve: %s\n", err);
		goto out;
	}
	if (copy_ev_mod(&s, s.lfd, &s.listen_ev, EPOLLIN, EPOLL_CTL_ADD) ||
	    copy_ev_mod(&s, s.cfd, &s.ctl_ev, EPOLLIN, EPOLL_CTL_ADD) ||
	    copy_ev_mod(&s, s.sfd, &s.sig_ev, EPOLLIN, EPOLL_CTL_ADD) ||
	    (s.admin && copy_admin_start(&s))) {
		fprintf(stderr, "sds-copy: serve: setup: %s\n", strerror(errno));
		goto out;
	}
	loop(&s);
	rc = 0;
out:
	server_free(&s);
	return rc;
}
