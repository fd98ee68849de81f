// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/pg/listen.c - several admins on one database hear each other's
 * writes (issue 32): after a write commits, the admin that made it runs
 * pg_notify('sds_watch', 'ADMINID G/A'); every admin listens on a
 * connection of its own (LISTEN sds_watch) in a thread that polls its
 * socket, and hands the apps of the others' notifications to the push
 * channel (admin/watch.c), which answers the loaders watching them.
 *
 * A listener whose connection broke reconnects, backing off from 1 s to
 * 30 s; what was notified meanwhile is lost to it, and the loaders learn
 * those changes by their next heartbeat, as before the push channel.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "names.h"
#include "store/pg/pg.h"

#define CHANNEL		"sds_watch"
#define BACKOFF_MIN_MS	1000
#define BACKOFF_MAX_MS	30000

struct pg_listen {
	struct pg_store *p;		/* whose URL and admin id */
	const struct store_listener *l;	/* what to call */
	void *ctx;			/* ... with */
	PGconn *conn;			/* LISTENing, NULL while reconnecting */
	pthread_t thread;
	int stop_fd;			/* an eventfd: written to stop the thread */
	char notice[200];		/* the server's last word, "" if none */
};

/*
 * What the server says outside a query (the FATAL of a terminated
 * backend): kept for the line the channel says, not printed by libpq.
 */
static void on_notice(void *arg, const char *msg)
{
	struct pg_listen *L = arg;
	const char *m = strstr(msg, ":  ");

	m = m ? m + 3 : msg;
	snprintf(L->notice, sizeof(L->notice), "%.*s", (int)strcspn(m, "\n"), m);
}

/* The server's last word, else the first line of @c's error, into @why. */
static void conn_why(struct pg_listen *L, PGconn *c, char *why, size_t len)
{
	const char *m = c ? PQerrorMessage(c) : "out of memory";

	if (L->notice[0])
		m = L->notice;
	snprintf(why, len, "%.*s", (int)strcspn(m, "\n"), m);
	L->notice[0] = '\0';
	if (!why[0])
		snprintf(why, len, "connection lost");
}

/* A new connection, listening; NULL with @why. */
static PGconn *listen_connect(struct pg_listen *L, char *why, size_t len)
{
	PGconn *c = pg_connect(L->p->url);
	PGresult *r;

	if (!c || PQstatus(c) != CONNECTION_OK) {
		conn_why(L, c, why, len);
		PQfinish(c);
		return NULL;
	}
	PQsetNoticeProcessor(c, on_notice, L);
	r = PQexec(c, "LISTEN " CHANNEL);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		conn_why(L, c, why, len);
		PQclear(r);
		PQfinish(c);
		return NULL;
	}
	PQclear(r);
	return c;
}

/* "ADMINID G/A" of another admin: its app to the listener. */
static void deliver(struct pg_listen *L, const char *payload)
{
	char g[SDS_NAME_MAX + 1], a[SDS_NAME_MAX + 1];
	const char *sp = strchr(payload, ' '), *slash;
	size_t gl, al;

	if (!sp || (size_t)(sp - payload) != strlen(L->p->admin_id) ||
	    !memcmp(payload, L->p->admin_id, sp - payload))
		return;		/* ours (or not an admin's) */
	slash = strchr(sp + 1, '/');
	if (!slash)
		return;
	gl = slash - (sp + 1);
	al = strlen(slash + 1);
	if (!gl || gl > SDS_NAME_MAX || !al || al > SDS_NAME_MAX)
		return;
	memcpy(g, sp + 1, gl);
	g[gl] = '\0';
	memcpy(a, slash + 1, al);
	a[al] = '\0';
	if (sds_name_valid(g) && sds_name_valid(a))
		L->l->changed(L->ctx, g, a);
}

/* Wait @ms or until stopped: true when stopped. */
static bool stopped_within(struct pg_listen *L, int ms)
{
	struct pollfd pf = { .fd = L->stop_fd, .events = POLLIN };

	return poll(&pf, 1, ms) > 0;
}

static void *listen_main(void *arg)
{
	struct pg_listen *L = arg;
	int backoff = BACKOFF_MIN_MS;
	char why[256];

	for (;;) {
		struct pollfd pf[2] = {
			{ .fd = L->stop_fd, .events = POLLIN },
			{ .events = POLLIN },
		};
		PGnotify *n;

		if (!L->conn) {
			if (stopped_within(L, backoff))
				break;
			L->conn = listen_connect(L, why, sizeof(why));
			if (!L->conn) {
				backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
					  backoff * 2;
				continue;
			}
			backoff = BACKOFF_MIN_MS;
		}
		pf[1].fd = PQsocket(L->conn);
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			break;
		if (pf[0].revents)
			break;
		if (!pf[1].revents)
			continue;
		if (!PQconsumeInput(L->conn) || PQstatus(L->conn) != CONNECTION_OK) {
			conn_why(L, L->conn, why, sizeof(why));
			PQfinish(L->conn);
			L->conn = NULL;
			L->l->broken(L->ctx, why);
			continue;
		}
		while ((n = PQnotifies(L->conn))) {
			deliver(L, n->extra);
			PQfreemem(n);
		}
	}
	return NULL;
}

int pg_listen(struct store *st, const struct store_listener *l, void *ctx, char *err)
{
	struct pg_store *p = pg_of(st);
	struct pg_listen *L;
	char why[256];

	if (p->listen) {
		sq_seterr(err, "the listener runs already");
		return STORE_ERROR;
	}
	L = calloc(1, sizeof(*L));
	if (!L) {
		sq_seterr(err, "out of memory");
		return STORE_ERROR;
	}
	L->p = p;
	L->l = l;
	L->ctx = ctx;
	L->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (L->stop_fd < 0) {
		sq_seterr(err, "eventfd: %s", strerror(errno));
		free(L);
		return STORE_ERROR;
	}
	/* Listening before the admin serves: no write through another is missed. */
	L->conn = listen_connect(L, why, sizeof(why));
	if (!L->conn)
		l->broken(ctx, why);
	if (pthread_create(&L->thread, NULL, listen_main, L)) {
		sq_seterr(err, "cannot start the listener's thread");
		PQfinish(L->conn);
		close(L->stop_fd);
		free(L);
		return STORE_ERROR;
	}
	p->listen = L;
	return 0;
}

void pg_listen_stop(struct pg_store *p)
{
	struct pg_listen *L = p->listen;
	uint64_t one = 1;

	if (!L)
		return;
	/* An eventfd takes it: a counter far from its limit. */
	(void)!write(L->stop_fd, &one, sizeof(one));
	pthread_join(L->thread, NULL);
	PQfinish(L->conn);
	close(L->stop_fd);
	free(L);
	p->listen = NULL;
}

int pg_changed(struct store *st, const char *g, const char *a, char *err)
{
	struct pg_store *p = pg_of(st);
	char payload[2 * SDS_NAME_MAX + 40];
	const char *vals[1] = { payload };
	PGresult *r;
	int try, ret = 0;

	snprintf(payload, sizeof(payload), "%s %s/%s", p->admin_id, g, a);
	sq_lock(st);
	for (try = 0; try < 2; try++) {
		r = PQexecParams(p->conn.conn, "SELECT pg_notify('" CHANNEL "', $1)", 1, NULL,
				 vals, NULL, NULL, 0);
		ret = pg_db_result(&p->conn, r) ? sq_dberr(&p->sq, err) : 0;
		PQclear(r);
		if (!ret || PQstatus(p->conn.conn) == CONNECTION_OK)
			break;
		pg_alive(&p->sq);
	}
	sq_unlock(st);
	return ret;
}
