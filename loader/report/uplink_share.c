// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * uplink_share.c - this host's part of the app's cluster-wide limits
 * (docs/CLUSTER.md): every UPLINK_SHARE_MS, while a point's strategy has
 * a cluster field, POST /api/v1/shares what the engine reported of each
 * such point (its window's passes and tries, its last second's tries,
 * the share in force) and hand the admin's grants to the main loop
 * through the uplink's eventfd, as a heartbeat's reply is handed.
 *
 * Every host of the app reports to the same admin, so that one allocator
 * sees them all: the first of the --admin URLs by rendezvous hash of
 * "GROUP/APP" (the same on every host whatever the URLs' order), the
 * next ones by the same order when it fails.  The reply is hostile input:
 * capped, and every grant an integer in range or null.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
#include <jansson.h>
#include "hbpost.h"
#include "sdsjson.h"
#include "report/uplink.h"

#define SHARE_TIMEOUT_MS	1000	/* one report; then the next admin */
#define SHARE_REPLY_MAX		(256 << 10)	/* 256 points' grants and some */
#define SHARE_LIMIT_MAX		((int64_t)1 << 40)	/* as strategy.c's LIMIT_MAX */

/* FNV-1a of @a then @b: the rendezvous weight of URL @a for app @b. */
static uint64_t weight(const char *a, const char *b)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *p;

	for (p = a; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	h = (h ^ '\n') * 0x100000001b3ULL;
	for (p = b; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return h;
}

/* @order: the URLs' indexes, heaviest first for GROUP/APP. */
static void rendezvous(const struct uplink *u, int *order)
{
	char key[2 * SDS_NAME_MAX + 2];
	uint64_t w[UPLINK_MAX_URLS];
	int i, j;

	snprintf(key, sizeof(key), "%s/%s", u->group, u->app);
	for (i = 0; i < u->nurls; i++) {
		w[i] = weight(u->urls[i], key);
		order[i] = i;
	}
	for (i = 1; i < u->nurls; i++)
		for (j = i; j > 0 && w[order[j]] > w[order[j - 1]]; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
}

/* The report's body, NULL when no point wants one (under @u->lock). */
static char *report_body(struct uplink *u, int *ids, int *nids)
{
	json_t *doc, *pts = json_object();
	char *text;
	int id;

	*nids = 0;
	for (id = 0; id < u->share_npoints && u->probes; id++) {
		const struct uplink_share_report *r = &u->share_in[id];

		if (!r->want)
			continue;
		json_object_set_new(pts, probes__name(u->probes, id),
				    json_pack("{s:I, s:I, s:I, s:I, s:I}",
					      "used", (json_int_t)r->used,
					      "wants", (json_int_t)r->wants,
					      "visits", (json_int_t)r->visits,
					      "rate_wants", (json_int_t)r->rate_wants,
					      "token_rate", (json_int_t)r->token_rate));
		ids[(*nids)++] = id;
	}
	if (!*nids) {
		json_decref(pts);
		return NULL;
	}
	doc = json_pack("{s:s, s:s, s:s, s:o}", "group", u->group, "app", u->app,
			"host", u->host, "points", pts);
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	return text;
}

/* A grant's field: an integer 0..SHARE_LIMIT_MAX, or null / absent (-1). */
static int grant_field(json_t *o, const char *key, int64_t *out)
{
	json_t *v = json_object_get(o, key);

	*out = -1;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > SHARE_LIMIT_MAX)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

/*
 * The reply @text into @g (per point id, for the points in @ids) and
 * *@hosts; -1 with @err when anything in it is off.
 */
static int reply_parse(struct uplink *u, const char *text, size_t len,
		       const int *ids, int nids, struct uplink_share_grant *g,
		       int *hosts, char *err, size_t errlen)
{
	json_t *doc = sdsjson_load(text, len, err, errlen), *pts, *h;
	int i, ret = -1;

	if (!doc)
		return -1;
	h = json_object_get(doc, "hosts");
	pts = json_object_get(doc, "points");
	if (!json_is_integer(h) || json_integer_value(h) < 1 ||
	    json_integer_value(h) > 1000000 || !json_is_object(pts)) {
		snprintf(err, errlen, "reply without \"hosts\" (1..10^6) and \"points\"");
		goto out;
	}
	*hosts = (int)json_integer_value(h);
	for (i = 0; i < nids; i++) {
		const char *name = probes__name(u->probes, ids[i]);
		json_t *p = json_object_get(pts, name);
		struct uplink_share_grant *x = &g[ids[i]];

		*x = (struct uplink_share_grant){ -1, -1, -1 };
		if (!p || json_is_null(p))
			continue;
		if (!json_is_object(p) || grant_field(p, "visits", &x->visits) ||
		    grant_field(p, "token_rate", &x->token_rate) ||
		    grant_field(p, "token_bucket", &x->token_bucket) ||
		    (x->token_rate >= 0) != (x->token_bucket >= 0)) {
			snprintf(err, errlen, "point '%s': bad grant", name);
			goto out;
		}
	}
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

static void *sharer(void *arg)
{
	struct uplink *u = arg;
	static struct uplink_share_grant g[SDS_MAX_POINTS];	/* one share thread */
	CURL *curl = curl_easy_init();
	int order[UPLINK_MAX_URLS];
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	rendezvous(u, order);
	pthread_mutex_lock(&u->lock);
	while (!u->stop && curl) {
		uint64_t at = uplink__ms(CLOCK_REALTIME) + UPLINK_SHARE_MS;
		struct timespec ts = { .tv_sec = at / 1000,
				       .tv_nsec = (at % 1000) * 1000000L };
		int ids[SDS_MAX_POINTS], nids, i, hosts = 0, ok = 0;
		char err[UPLINK_URL_MAX + 320] = "", url[UPLINK_URL_MAX + 32], *body;

		body = report_body(u, ids, &nids);
		pthread_mutex_unlock(&u->lock);
		for (i = 0; body && !ok && i < u->nurls; i++) {
			struct hbpost_reply reply;
			long code = 0;
			CURLcode cc;

			snprintf(url, sizeof(url), "%s/api/v1/shares", u->urls[order[i]]);
			cc = hbpost_send(curl, &(struct hbpost){
					.url = url, .token = u->token, .body = body,
					.timeout_ms = SHARE_TIMEOUT_MS,
					.connect_timeout_ms = SHARE_TIMEOUT_MS,
					.reply_max = SHARE_REPLY_MAX,
				 }, &reply, &code);
			if (cc != CURLE_OK)
				snprintf(err, sizeof(err), "%s: %s", url, curl_easy_strerror(cc));
			else if (code != 200)
				snprintf(err, sizeof(err), "%s: HTTP %ld", url, code);
			else if (!reply_parse(u, reply.data ? reply.data : "", reply.len,
					      ids, nids, g, &hosts, err, sizeof(err)))
				ok = 1;
			free(reply.data);
		}
		free(body);
		pthread_mutex_lock(&u->lock);
		if (ok) {
			uint64_t one = 1;

			for (i = 0; i < nids; i++)
				u->share_out[ids[i]] = g[ids[i]];
			u->share_hosts = hosts;
			u->share_new = true;
			u->share_reports++;
			u->share_error[0] = '\0';
			if (write(u->event_fd, &one, sizeof(one)) < 0) {
				/* the counter is full: the main loop knows already */
			}
		} else if (body || err[0]) {
			u->share_failures++;
			snprintf(u->share_error, sizeof(u->share_error), "%.255s", err);
		}
		/* Not on @u->cond: its signals are the sender's. */
		while (!u->stop && pthread_cond_timedwait(&u->idle_cond, &u->lock, &ts) == 0)
			;
	}
	pthread_mutex_unlock(&u->lock);
	curl_easy_cleanup(curl);
	return NULL;
}

int uplink_share__start(struct uplink *u)
{
	if (pthread_create(&u->share_thread, NULL, sharer, u))
		return -1;
	u->share_started = true;
	return 0;
}

void uplink_share__stop(struct uplink *u)
{
	if (!u->share_started)
		return;
	pthread_join(u->share_thread, NULL);
	u->share_started = false;
}

void uplink_share__report(struct uplink *u, const struct uplink_share_report *r,
			  int npoints)
{
	if (npoints < 0 || npoints > SDS_MAX_POINTS)
		return;
	pthread_mutex_lock(&u->lock);
	memcpy(u->share_in, r, npoints * sizeof(*r));
	u->share_npoints = npoints;
	pthread_mutex_unlock(&u->lock);
}

int uplink_share__take(struct uplink *u, struct uplink_share_grant *out)
{
	int hosts = -1;

	pthread_mutex_lock(&u->lock);
	if (u->share_new) {
		memcpy(out, u->share_out, sizeof(u->share_out));
		hosts = u->share_hosts;
		u->share_new = false;
	}
	pthread_mutex_unlock(&u->lock);
	return hosts;
}

json_t *uplink_share__json(struct uplink *u)
{
	json_t *o;

	pthread_mutex_lock(&u->lock);
	o = json_pack("{s:I, s:I, s:i, s:s}",
		      "reports", (json_int_t)u->share_reports,
		      "failures", (json_int_t)u->share_failures,
		      "hosts", u->share_hosts, "last_error", u->share_error);
	pthread_mutex_unlock(&u->lock);
	return o;
}
