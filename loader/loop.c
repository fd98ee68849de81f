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
#include "cmd.h"
#include "loader.h"
#include "loop.h"

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

enum { PFD_SIG, PFD_TICK, PFD_WATCH, PFD_ADMIN, PFD_LISTEN, PFD_SESS };

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

int loop__run(struct loop *lp, struct loader *l, int lfd)
{
	int sfd = lp->sfd, tfd = lp->tfd, wfd = lp->wfd;
	const char *wbase = lp->wbase;
	struct pollfd pfd[PFD_SESS + SDS_MAX_PROCS];
	int i;

	for (;;) {
		pfd[PFD_SIG] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfd[PFD_TICK] = (struct pollfd){ .fd = tfd, .events = POLLIN };
		pfd[PFD_WATCH] = (struct pollfd){ .fd = wfd, .events = POLLIN };
		pfd[PFD_ADMIN] = (struct pollfd){
			.fd = l->uplink ? l->uplink->event_fd : -1, .events = POLLIN };
		pfd[PFD_LISTEN] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < SDS_MAX_PROCS; i++)
			pfd[PFD_SESS + i] = (struct pollfd){
				.fd = l->sessions[i].fd, .events = POLLIN };
		if (poll(pfd, PFD_SESS + SDS_MAX_PROCS, -1) < 0) {
			if (errno == EINTR)
				continue;
			return cmd_err("poll: %s", strerror(errno));
		}
		if (pfd[PFD_SIG].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo != SIGHUP)
					return 0;
				engine__reload(l);
			}
		}
		if (pfd[PFD_TICK].revents & POLLIN) {
			uint64_t expirations;

			if (read(tfd, &expirations, sizeof(expirations)) > 0)
				engine__tick(l);
		}
		if ((pfd[PFD_WATCH].revents & POLLIN) && watch_hit(wfd, wbase))
			engine__reload(l);
		if (pfd[PFD_ADMIN].revents & POLLIN)
			engine__admin_reply(l);
		for (i = 0; i < SDS_MAX_PROCS; i++)
			if (pfd[PFD_SESS + i].revents & (POLLIN | POLLHUP | POLLERR))
				session__input(l, i);
		if (pfd[PFD_LISTEN].revents & POLLIN)
			session__accept(l, lfd);
	}
}

