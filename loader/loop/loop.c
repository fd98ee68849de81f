// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* loop.c - the loader's event loop (see loop.h). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "cli/cmd.h"
#include "capture/capture.h"
#include "loop/loader.h"
#include "tick/engine.h"
#include "report/uplink.h"
#include "loop/loop.h"
#include "report/metrics.h"

static int signal_fd(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -1;
	return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int tick_fd(long ms)
{
	struct itimerspec its = {
		.it_interval = { ms / 1000, (ms % 1000) * 1000000L },
		.it_value = { ms / 1000, (ms % 1000) * 1000000L },
	};
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	if (fd >= 0 && timerfd_settime(fd, 0, &its, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Watch the strategies file's directory: editors replace files by rename,
 * which a watch on the file itself would lose.
 */
static int watch_fd(const char *path, const char **base)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd;

	if (slash) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		if (!dir[0])
			strcpy(dir, "/");
		*base = slash + 1;
	} else {
		strcpy(dir, ".");
		*base = path;
	}
	fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (fd >= 0 && inotify_add_watch(fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* True when the inotify events on @fd name @base. */
static bool watch_hit(int fd, const char *base)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool hit = false;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		char *p = buf;

		while (p < buf + n) {
			struct inotify_event *ev = (struct inotify_event *)p;

			if (ev->len && !strcmp(ev->name, base))
				hit = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	return hit;
}

enum {
	PFD_SIG, PFD_TICK, PFD_WATCH, PFD_ADMIN, PFD_LISTEN, PFD_DEPLOY,
	PFD_RING,				/* traffic copy: the ring */
	PFD_COPYOUT,				/* COPYOUT_SERVERS servers' streams */
	PFD_REC = PFD_COPYOUT + COPYOUT_SERVERS,	/* CAPTURE_RECORDERS recorders */
	PFD_SESS = PFD_REC + CAPTURE_RECORDERS,	/* SDS_MAX_PROCS sessions */
	PFD_CONN = PFD_SESS + SDS_MAX_PROCS,	/* CONN_PENDING_MAX pending connections */
	PFD_N = PFD_CONN + CONN_PENDING_MAX,
};

void loop__init(struct loop *lp)
{
	lp->sfd = lp->tfd = lp->wfd = -1;
	lp->wbase = "";
}

int loop__open(struct loop *lp, long tick_ms, const char *strategies)
{
	lp->sfd = signal_fd();
	lp->tfd = tick_fd(tick_ms);
	if (lp->sfd < 0 || lp->tfd < 0)
		return cmd_err("setting up signals and timer: %s", strerror(errno));
	if (strategies) {
		lp->wfd = watch_fd(strategies, &lp->wbase);
		if (lp->wfd < 0)
			return cmd_err("watching %s: %s", strategies, strerror(errno));
	}
	return 0;
}

void loop__close(struct loop *lp)
{
	if (lp->wfd >= 0)
		close(lp->wfd);
	if (lp->tfd >= 0)
		close(lp->tfd);
	if (lp->sfd >= 0)
		close(lp->sfd);
	loop__init(lp);
}

/*
 * How late the tick is served: the oldest expiry not yet read happened
 * (expirations - 1) intervals before the last one, which was one interval
 * before the next.  Kept for `stats` ("tick_late_ms").
 */
static void tick_late_note(struct loader *l, int tfd, uint64_t expirations)
{
	struct tick_late *t = &l->tick_late;
	struct itimerspec its;
	uint64_t left, late_ns;

	if (timerfd_gettime(tfd, &its))
		return;
	left = (uint64_t)its.it_value.tv_sec * 1000000000ULL + its.it_value.tv_nsec;
	late_ns = expirations * l->tick_ns;
	late_ns = late_ns > left ? late_ns - left : 0;
	t->us[t->pos] = late_ns / 1000 > UINT32_MAX ? UINT32_MAX : late_ns / 1000;
	t->at_ns[t->pos] = flags_now_ns();
	t->pos = (t->pos + 1) % TICK_LATE_RING;
	if (t->n < TICK_LATE_RING)
		t->n++;
}

/* Traffic copy: the ring, the servers' connection, the recorders. */
static void copy_fds(struct pollfd *pfd, struct loader *l)
{
	int i, fd;
	short ev;

	pfd[PFD_RING] = (struct pollfd){ .fd = capture__fd(l->capture), .events = POLLIN };
	for (i = 0; i < COPYOUT_SERVERS; i++) {
		ev = capture__out_events(l->capture, i, &fd);
		pfd[PFD_COPYOUT + i] = (struct pollfd){ .fd = fd, .events = ev };
	}
	for (i = 0; i < CAPTURE_RECORDERS; i++) {
		ev = capture__recorder_events(l->capture, i, &fd);
		pfd[PFD_REC + i] = (struct pollfd){ .fd = fd, .events = ev };
	}
}

/* Bounded: CAPTURE_DRAIN_BURST captures, what the sockets take now. */
static void copy_serve(struct pollfd *pfd, struct loader *l, bool tick)
{
	short revents[COPYOUT_SERVERS], any = 0;
	int i;

	if (!l->capture)
		return;
	if (tick)
		capture__tick(l->capture);
	if (pfd[PFD_RING].revents & POLLIN)
		capture__drain(l->capture);
	for (i = 0; i < COPYOUT_SERVERS; i++) {
		revents[i] = pfd[PFD_COPYOUT + i].revents;
		any |= revents[i];
	}
	if (any || tick)
		capture__out_event(l->capture, revents);
	for (i = 0; i < CAPTURE_RECORDERS; i++)
		if (pfd[PFD_REC + i].revents || tick)
			capture__recorder_event(l->capture, i, pfd[PFD_REC + i].revents);
}

/* The loader's own fds: signals, tick, strategies file, admin, socket. */
static void own_fds(struct pollfd *pfd, const struct loop *lp, struct loader *l,
		    int lfd)
{
	pfd[PFD_SIG] = (struct pollfd){ .fd = lp->sfd, .events = POLLIN };
	pfd[PFD_TICK] = (struct pollfd){ .fd = lp->tfd, .events = POLLIN };
	pfd[PFD_WATCH] = (struct pollfd){ .fd = lp->wfd, .events = POLLIN };
	pfd[PFD_ADMIN] = (struct pollfd){
		.fd = l->uplink ? l->uplink->event_fd : -1, .events = POLLIN };
	pfd[PFD_LISTEN] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	pfd[PFD_DEPLOY] = (struct pollfd){ .fd = watch__fd(&l->watch), .events = POLLIN };
	copy_fds(pfd, l);
}

/* Every client connection, with what it waits for. */
static void client_fds(struct pollfd *pfd, struct loader *l)
{
	int i;

	for (i = 0; i < SDS_MAX_PROCS; i++) {
		const struct session *s = &l->serve.sessions[i];

		pfd[PFD_SESS + i] = (struct pollfd){ .fd = s->fd,
			.events = conn_io__events(&s->io) };
	}
	for (i = 0; i < CONN_PENDING_MAX; i++) {
		const struct pending *c = &l->serve.pending[i];

		/* A ready request waits for its turn, not for the client. */
		pfd[PFD_CONN + i] = (struct pollfd){ .fd = c->fd,
			.events = c->ready ? 0 : conn_io__events(&c->io) };
	}
}

/* The clients' turn, after the loader's own work; true if requests wait. */
static bool clients_serve(struct pollfd *pfd, struct loader *l, int lfd, int tfd)
{
	bool more;
	int i;

	for (i = 0; i < SDS_MAX_PROCS; i++)
		session__event(&l->serve, i, pfd[PFD_SESS + i].revents);
	for (i = 0; i < CONN_PENDING_MAX; i++)
		conn__event(&l->serve, i, pfd[PFD_CONN + i].revents);
	more = conn__serve(&l->serve, tfd);
	/* What a drill request changed is published before the next wait. */
	engine__flush(&l->engine);
	if (pfd[PFD_LISTEN].revents & POLLIN)
		conn__accept(&l->serve, lfd);
	return more;
}

/* Until the next deadline of a client: 0 if requests wait, -1: none. */
static int clients_timeout(struct loader *l, bool more)
{
	uint64_t now = flags_now_ns(), next = UINT64_MAX;

	conn__sweep(&l->serve, now, &next);
	session__sweep(&l->serve, now, &next);
	if (more)
		return 0;
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

/*
 * A scrape waits: the counters from the tick's record, with its read if
 * it took the gauges (a scrape that came before it), else a read of our
 * own.
 */
static void metrics_tick(struct loader *l)
{
	struct engine *e = &l->engine;
	struct snapshot *snap;

	if (!l->metrics || !metrics__waiting(l->metrics))
		return;
	snap = e->snap && e->snap->gauges ? snapshot__get(e->snap) :
	       engine__query_snapshot(e);
	metrics__tick(l->metrics, engine__last_tick(e), snap);
	snapshot__put(snap);
}

int loop__run(struct loop *lp, struct loader *l, int lfd)
{
	struct pollfd pfd[PFD_N];
	int timeout = -1;
	bool more, tick;

	for (;;) {
		own_fds(pfd, lp, l, lfd);
		client_fds(pfd, l);
		if (poll(pfd, PFD_N, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return cmd_err("poll: %s", strerror(errno));
		}
		if (pfd[PFD_SIG].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(lp->sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo != SIGHUP)
					return 0;
				engine__reload(&l->engine);
			}
		}
		tick = false;
		if (pfd[PFD_TICK].revents & POLLIN) {
			uint64_t expirations;

			if (read(lp->tfd, &expirations, sizeof(expirations)) > 0) {
				tick = true;
				tick_late_note(l, lp->tfd, expirations);
				engine__tick(&l->engine);
				/* After the tick's work: a test that sees it grow sees its effects. */
				l->tick_late.done++;
				watch__tick(&l->watch);
				metrics_tick(l);
			}
		}
		if ((pfd[PFD_WATCH].revents & POLLIN) && watch_hit(lp->wfd, lp->wbase))
			engine__reload(&l->engine);
		if (pfd[PFD_ADMIN].revents & POLLIN)
			engine__admin_reply(&l->engine);
		if (pfd[PFD_DEPLOY].revents & POLLIN)
			watch__event(&l->watch);
		copy_serve(pfd, l, tick);
		/* Bounded (CONN_*_BURST, a buffer per connection): the tick waits little. */
		more = clients_serve(pfd, l, lfd, lp->tfd);
		timeout = clients_timeout(l, more);
	}
}
