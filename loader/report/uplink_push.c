// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * uplink_push.c - the push channel: one long-poll held open to an admin,
 * so that a change made in the console (a kill switch, a scheme switch, a
 * drill, a copy plan) reaches this host at once instead of at its next
 * heartbeat (docs/PUSH.md).
 *
 * The thread only listens.  GET /api/v1/watch?seq=S answers {"seq": N}
 * at once when the app's change sequence is not S, else when it changes
 * or the wait ends.  A new N (or the first answer after a reconnect: what
 * changed while we were away is not known) asks the sender for the app's
 * state (uplink_send.c, GET /api/v1/sync): the state always comes through
 * the sender's one thread, whose requests are read by the admins one
 * after another, so no reply read before a change lands after it.
 *
 * Everything the admin says is checked: the body is capped and must be
 * {"seq": integer}, Retry-After is held to 1..60 s.  A failed watch
 * retries from 1 s, doubling to 30 s, with +-25 % jitter, and never
 * sooner than 1 s; three quick answers in a row wait 1 s too, so an admin
 * that answers at once forever costs one request a second.  Meanwhile
 * the heartbeats carry every change, as they did before the channel.
 *
 * The transfer runs in a curl multi handle so that uplink__stop wakes it
 * (curl_multi_wakeup) instead of waiting out a 25-s poll.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
#include <jansson.h>
#include <sys/random.h>
#include "hbpost.h"
#include "report/uplink.h"

#define PUSH_WAIT_S		25	/* the admin holds a watch this long */
#define PUSH_TIMEOUT_MS		((PUSH_WAIT_S + 10) * 1000)	/* then we give up on it */
#define PUSH_REPLY_MAX		4096	/* {"seq": N} and little else */
#define PUSH_BACKOFF_MIN_MS	1000	/* never sooner after a failure */
#define PUSH_BACKOFF_MAX_MS	30000
#define PUSH_QUICK_MS		1000	/* an answer sooner than this is quick ... */
#define PUSH_QUICK_MAX		3	/* ... and this many in a row wait PUSH_BACKOFF_MIN_MS */
#define PUSH_DENIED_MS		30000	/* 401, 403, 404: the token or the app */

/* @ms +- 25 %, at least PUSH_BACKOFF_MIN_MS. */
static uint64_t jitter(uint64_t ms)
{
	uint32_t r = 0;
	uint64_t j;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (uint32_t)uplink__ms(CLOCK_MONOTONIC) * 2654435761u;
	j = ms * 3 / 4 + (uint64_t)r % (ms / 2 + 1);
	return j < PUSH_BACKOFF_MIN_MS ? PUSH_BACKOFF_MIN_MS : j;
}

/*
 * Wait @ms on @u->idle_cond (under @u->lock), or until told to stop: not
 * on @u->cond, whose signals are the sender's.
 */
static void push_sleep(struct uplink *u, uint64_t ms)
{
	uint64_t at = uplink__ms(CLOCK_REALTIME) + ms;
	struct timespec ts = { .tv_sec = at / 1000, .tv_nsec = (at % 1000) * 1000000L };

	while (!u->stop && pthread_cond_timedwait(&u->idle_cond, &u->lock, &ts) == 0)
		;
}

/* What one watch came to. */
struct watch_result {
	CURLcode cc;			/* libcurl's result */
	long status;			/* HTTP status, 0: none */
	long retry_after_s;		/* Retry-After, 0: none */
	bool parsed;			/* a 200 with {"seq": N} */
	json_int_t seq;			/* ... N */
};

/* One watch on @m, woken by uplink__stop. */
static void watch_once(struct uplink *u, CURLM *m, CURL *c, const char *url,
		       struct watch_result *w)
{
	struct hbpost_reply reply;
	struct hbpost_call call;
	int running = 1;
	CURLMsg *msg;
	int left;

	*w = (struct watch_result){ .cc = CURLE_OUT_OF_MEMORY };
	if (hbpost_begin(c, &(struct hbpost){
				.url = url, .token = u->token, .body = NULL,
				.timeout_ms = PUSH_TIMEOUT_MS,
				.connect_timeout_ms = 1000,
				.reply_max = PUSH_REPLY_MAX,
			 }, &reply, &call))
		return;
	w->cc = CURLE_OK;
	curl_multi_add_handle(m, c);
	while (running) {
		if (curl_multi_perform(m, &running) != CURLM_OK) {
			w->cc = CURLE_RECV_ERROR;
			break;
		}
		if (!running)
			break;
		if (__atomic_load_n(&u->stop, __ATOMIC_RELAXED)) {
			w->cc = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
		curl_multi_poll(m, NULL, 0, 1000, NULL);
	}
	while ((msg = curl_multi_info_read(m, &left)))
		if (msg->msg == CURLMSG_DONE && msg->easy_handle == c)
			w->cc = msg->data.result;
	curl_easy_getinfo(c, CURLINFO_RETRY_AFTER, &w->retry_after_s);
	curl_multi_remove_handle(m, c);
	hbpost_end(c, &call, &w->status);
	if (w->cc == CURLE_OK && w->status == 200 && reply.data) {
		json_t *doc = json_loadb(reply.data, reply.len, 0, NULL);
		json_t *seq = json_object_get(doc, "seq");

		if (json_is_integer(seq)) {
			w->parsed = true;
			w->seq = json_integer_value(seq);
		}
		json_decref(doc);
	}
	free(reply.data);
}

/* The watch URL on admin @i: NULL when out of memory. */
static char *watch_url(struct uplink *u, CURL *c, int i, bool have_seq,
		       json_int_t seq)
{
	char *g = curl_easy_escape(c, u->group, 0);
	char *a = curl_easy_escape(c, u->app, 0);
	char *url = NULL;
	char sq[32] = "";
	int n = -1;

	/* No seq: the admin answers at once with the one it has. */
	if (have_seq)
		snprintf(sq, sizeof(sq), "&seq=%lld", (long long)seq);
	if (g && a)
		n = asprintf(&url, "%s/api/v1/watch?group=%s&app=%s&wait=%d%s",
			     u->urls[i], g, a, PUSH_WAIT_S, sq);
	if (n < 0)
		url = NULL;
	curl_free(g);
	curl_free(a);
	return url;
}

/* The wait after watch @w failed, and why in @err. */
static uint64_t failed_delay(const struct watch_result *w, uint64_t *backoff,
			     char *err, size_t errlen)
{
	uint64_t ra = w->retry_after_s < 1 ? 1 : w->retry_after_s > 60 ? 60 :
		      (uint64_t)w->retry_after_s;

	if (w->cc != CURLE_OK)
		snprintf(err, errlen, "%s", curl_easy_strerror(w->cc));
	else if (w->status == 200)
		snprintf(err, errlen, "HTTP 200 without {\"seq\": N}");
	else
		snprintf(err, errlen, "HTTP %ld%s", w->status,
			 w->status == 503 ? " (the admin's watchers are full or off)" :
			 w->status == 429 ? " (too many watches from this host)" :
			 w->status == 401 ? " (check --token-file)" : "");
	if (w->cc == CURLE_OK && (w->status == 503 || w->status == 429))
		return jitter(ra * 1000);
	if (w->cc == CURLE_OK && (w->status == 401 || w->status == 403 ||
				  w->status == 404))
		return jitter(PUSH_DENIED_MS);
	*backoff = *backoff ? *backoff * 2 : PUSH_BACKOFF_MIN_MS;
	if (*backoff > PUSH_BACKOFF_MAX_MS)
		*backoff = PUSH_BACKOFF_MAX_MS;
	return jitter(*backoff);
}

static void *pusher(void *arg)
{
	struct uplink *u = arg;
	CURL *c = curl_easy_init();
	CURLM *m = u->push_multi;
	uint64_t backoff = 0, delay = 0;
	bool have_seq = false, failed = false;
	json_int_t seq = 0;
	int quick = 0, i = 0;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&u->lock);
	while (!u->stop && c) {
		struct watch_result w;
		char err[256] = "", *url;
		uint64_t t0;

		if (delay) {
			u->push.retry_at_ms = uplink__ms(CLOCK_REALTIME) + delay;
			push_sleep(u, delay);
			if (u->stop)
				break;
		}
		if (failed)
			u->push.reconnects++;
		u->push.state = failed ? PUSH_RETRYING : have_seq ? PUSH_WAITING :
				PUSH_CONNECTING;
		u->push.url = i;
		pthread_mutex_unlock(&u->lock);

		url = watch_url(u, c, i, have_seq, seq);
		t0 = uplink__ms(CLOCK_MONOTONIC);
		if (url)
			watch_once(u, m, c, url, &w);
		else
			w = (struct watch_result){ .cc = CURLE_OUT_OF_MEMORY };
		free(url);

		pthread_mutex_lock(&u->lock);
		if (u->stop)
			break;
		if (w.parsed) {
			failed = false;
			backoff = 0;
			u->push.state = PUSH_WAITING;
			u->push.last_error[0] = '\0';
			if (!have_seq || w.seq != seq) {
				/* A change, or what changed while we were away. */
				if (have_seq)
					u->push.wakes++;
				have_seq = true;
				seq = w.seq;
				u->sync_due = true;
				u->sync_at_ms = 0;
				pthread_cond_broadcast(&u->cond);
			}
			quick = uplink__ms(CLOCK_MONOTONIC) - t0 < PUSH_QUICK_MS ? quick + 1 : 0;
			delay = quick >= PUSH_QUICK_MAX ? PUSH_BACKOFF_MIN_MS : 0;
			if (delay)
				quick = 0;
			continue;
		}
		delay = failed_delay(&w, &backoff, err, sizeof(err));
		/* Cut to fit: the URL's head and the reason, one line. */
		snprintf(u->push.last_error, sizeof(u->push.last_error),
			 "%.120s: %.120s", u->urls[i], err);
		u->push.failures++;
		u->push.state = PUSH_RETRYING;
		failed = true;
		have_seq = false;
		quick = 0;
		/* The next admin, if there are several: any of them announces. */
		i = (i + 1) % u->nurls;
	}
	u->push.state = PUSH_OFF;
	pthread_mutex_unlock(&u->lock);
	curl_easy_cleanup(c);
	return NULL;
}

int uplink_push__start(struct uplink *u)
{
	if (u->push_off || !u->nurls)
		return 0;
	u->push_multi = curl_multi_init();
	if (!u->push_multi)
		return -1;
	if (pthread_create(&u->push_thread, NULL, pusher, u)) {
		curl_multi_cleanup(u->push_multi);
		u->push_multi = NULL;
		return -1;
	}
	u->push_started = true;
	return 0;
}

/* After @u->stop is set and @u->cond broadcast (uplink__stop). */
void uplink_push__stop(struct uplink *u)
{
	if (!u->push_started)
		return;
	curl_multi_wakeup(u->push_multi);
	pthread_join(u->push_thread, NULL);
	u->push_started = false;
	curl_multi_cleanup(u->push_multi);
	u->push_multi = NULL;
}

json_t *uplink_push__json(struct uplink *u)
{
	static const char *const names[] = {
		[PUSH_OFF] = "off", [PUSH_CONNECTING] = "connecting",
		[PUSH_WAITING] = "waiting", [PUSH_RETRYING] = "retrying",
	};
	json_t *o;

	pthread_mutex_lock(&u->lock);
	o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:s}",
		      "state", names[u->push.state],
		      "url", u->push_started ? u->urls[u->push.url] : "",
		      "wakes", (json_int_t)u->push.wakes,
		      "syncs", (json_int_t)u->syncs,
		      "sync_failures", (json_int_t)u->sync_failures,
		      "reconnects", (json_int_t)u->push.reconnects,
		      "failures", (json_int_t)u->push.failures,
		      "last_error", u->push.last_error);
	if (o && u->push.state == PUSH_RETRYING)
		json_object_set_new(o, "retry_at_ms",
				    json_integer((json_int_t)u->push.retry_at_ms));
	pthread_mutex_unlock(&u->lock);
	return o;
}
