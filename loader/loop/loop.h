/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * loop.h - the loader's event loop: signals (stop, SIGHUP reload), the
 * tick, changes of the strategies file, the admin's replies, the control
 * socket and the guard sessions, all in one poll().
 */
#ifndef SDS_LOOP_H
#define SDS_LOOP_H

#include <stdbool.h>

struct loader;

struct loop {
	int sfd;		/* signalfd: SIGINT, SIGTERM stop; SIGHUP reloads */
	int tfd;		/* timerfd: the tick */
	int wfd;		/* inotify on the strategies file's directory, or -1 */
	const char *wbase;	/* the strategies file's name in that directory */
};

void loop__init(struct loop *lp);
/* Set up before the socket appears, so a failure leaves nothing behind. */
int loop__open(struct loop *lp, long tick_ms, const char *strategies);
/* Serve until SIGINT or SIGTERM: 0, or -1 when poll failed. */
int loop__run(struct loop *lp, struct loader *l, int lfd);
void loop__close(struct loop *lp);

#endif /* SDS_LOOP_H */
