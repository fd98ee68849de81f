// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * uplink_abort.c - tell sds-admin that a drill stopped here because one
 * of its stop conditions broke (decide/drill_stop.c): POST
 * /api/v1/groups/G/apps/A/drills/ID/abort {"host", "reason"}, on a thread
 * of its own so that the main loop never waits and the heartbeat sender's
 * queue never delays it.  The admin stops the drill for every host and
 * wakes their push channels: the others stop it within a second, or at
 * their next heartbeat without one.
 *
 * A 200, 404 (no such drill or app) or 409 (ended already) ends one
 * notice; another status or no answer tries the next URL, then all of
 * them again a second later, ABORT_TRIES times at most (the drill has
 * stopped here anyway; its expiry bounds it elsewhere).
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <jansson.h>
#include "hbpost.h"
#include "report/uplink.h"

#define ABORT_TIMEOUT_MS	2000	/* one request */
#define ABORT_TRIES		30	/* rounds over the URLs, a second apart */
#define ABORT_REPLY_MAX		4096

/* One round over the URLs: true when an admin took it (or has no such drill). */
static bool abort_post(struct uplink *u, CURL *curl, int64_t id, const char *body)
{
	char url[UPLINK_URL_MAX + 3 * SDS_NAME_MAX + 64], err[UPLINK_URL_MAX + 320] = "";
	int i;

	for (i = 0; i < u->nurls; i++) {
		struct hbpost_reply reply;
		long code = 0;
		CURLcode cc;

		snprintf(url, sizeof(url), "%s/api/v1/groups/%s/apps/%s/drills/%" PRId64 "/abort",
			 u->urls[i], u->group, u->app, id);
		cc = hbpost_send(curl, &(struct hbpost){
				.url = url, .token = u->token, .body = body,
				.timeout_ms = ABORT_TIMEOUT_MS,
				.connect_timeout_ms = ABORT_TIMEOUT_MS,
				.reply_max = ABORT_REPLY_MAX,
			 }, &reply, &code);
		free(reply.data);
		if (cc == CURLE_OK && (code == 200 || code == 404 || code == 409))
			return true;
		snprintf(err, sizeof(err), "%s: %s", url, cc != CURLE_OK ?
			 curl_easy_strerror(cc) : code == 401 ? "HTTP 401 (check --token-file)" :
			 "HTTP error");
		if (cc == CURLE_OK)
			snprintf(err + strlen(err), sizeof(err) - strlen(err), " %ld", code);
	}
	fprintf(stderr, "sds-bpf: telling the admin drill %" PRId64 " stopped: %s\n", id, err);
	return false;
}

static void *aborter(void *arg)
{
	struct uplink *u = arg;
	CURL *curl = curl_easy_init();
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&u->lock);
	while (!u->stop && curl) {
		struct uplink_abort_msg m;
		json_t *doc;
		char *body;
		int tries;

		if (!u->naborts) {
			pthread_cond_wait(&u->abort_cond, &u->lock);
			continue;
		}
		m = u->aborts[0];
		memmove(u->aborts, u->aborts + 1, --u->naborts * sizeof(u->aborts[0]));
		pthread_mutex_unlock(&u->lock);
		doc = json_pack("{s:s, s:s}", "host", u->host, "reason", m.why);
		body = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
		json_decref(doc);
		for (tries = 0; body && tries < ABORT_TRIES; tries++) {
			if (abort_post(u, curl, m.id, body))
				break;
			pthread_mutex_lock(&u->lock);
			if (!u->stop) {
				uint64_t at = uplink__ms(CLOCK_REALTIME) + 1000;
				struct timespec ts = { .tv_sec = at / 1000,
						       .tv_nsec = (at % 1000) * 1000000L };

				pthread_cond_timedwait(&u->abort_cond, &u->lock, &ts);
			}
			tries = u->stop ? ABORT_TRIES : tries;
			pthread_mutex_unlock(&u->lock);
		}
		free(body);
		pthread_mutex_lock(&u->lock);
		if (tries < ABORT_TRIES)
			u->aborts_sent++;
		else
			u->abort_failures++;
	}
	pthread_mutex_unlock(&u->lock);
	curl_easy_cleanup(curl);
	return NULL;
}

int uplink_abort__start(struct uplink *u)
{
	pthread_cond_init(&u->abort_cond, NULL);
	if (pthread_create(&u->abort_thread, NULL, aborter, u))
		return -1;
	u->abort_started = true;
	return 0;
}

void uplink_abort__stop(struct uplink *u)
{
	if (!u->abort_started)
		return;
	pthread_mutex_lock(&u->lock);
	pthread_cond_broadcast(&u->abort_cond);
	pthread_mutex_unlock(&u->lock);
	pthread_join(u->abort_thread, NULL);
	u->abort_started = false;
}

void uplink_abort__note(struct uplink *u, int64_t id, const char *why)
{
	pthread_mutex_lock(&u->lock);
	if (u->naborts < UPLINK_ABORTS) {
		struct uplink_abort_msg *m = &u->aborts[u->naborts++];

		m->id = id;
		snprintf(m->why, sizeof(m->why), "%s", why);
		pthread_cond_signal(&u->abort_cond);
	} else {
		u->abort_failures++;	/* a burst past the queue: its expiry bounds it */
	}
	pthread_mutex_unlock(&u->lock);
}
