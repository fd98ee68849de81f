// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * uplink_send.c - the heartbeat sender thread: posts the queue's oldest
 * period to the admin the --admin-policy picks (uplink_pick.c), then to
 * its next picks, takes the reply's strategies and
 * drills, and decides what a reply means for the queue (stored, failed,
 * stored but unusable).  When the push channel (uplink_push.c) announced
 * a change it first reads the app's state (GET /api/v1/sync: the same
 * document as a heartbeat's reply, nothing stored) and hands it on the
 * same way.  The periods and the queue are uplink.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include "hbpost.h"
#include "report/uplink.h"

#define HTTP_TIMEOUT_MS		3000	/* one post; then the next pick */
#define RETRY_MS		2000	/* after every URL failed */
#define REPLY_MAX		(4 << 20)	/* a reply larger than this is refused */
#define LOG_EVERY_MS		60000	/* unusable replies: a line a minute at most */

/* What a post came to. */
enum post_result {
	POST_FAILED = -1,	/* not stored: the next URL, or later again */
	POST_OK = 0,		/* stored, reply in hand */
	POST_BAD_REPLY = 1,	/* stored (HTTP 200), reply unusable */
};

/*
 * Post @body to @base: POST_OK with the parsed reply in @r, else @err
 * says why.  The admin stores a heartbeat before it answers 200, so a 200
 * whose body is no reply (not JSON, malformed strategies, too large) is
 * POST_BAD_REPLY: sending the period again would only bring the same.
 */
static enum post_result post_one(CURL *curl, const char *url,
				 const char *token, const char *body,
				 struct sds_hb_reply *r, bool *timed_out,
				 char *err, size_t errlen)
{
	struct hbpost_reply reply;
	char perr[256];
	enum post_result ret = POST_FAILED;
	long code = 0;
	CURLcode cc;

	cc = hbpost_send(curl, &(struct hbpost){
				.url = url, .token = token, .body = body,
				.timeout_ms = HTTP_TIMEOUT_MS,
				.connect_timeout_ms = 1000,
				.reply_max = REPLY_MAX,
			 }, &reply, &code);
	*timed_out = cc == CURLE_OPERATION_TIMEDOUT;
	if (cc == CURLE_WRITE_ERROR && code == 200) {
		snprintf(err, errlen, "%s: reply over %d bytes", url, REPLY_MAX);
		ret = POST_BAD_REPLY;
		goto out;
	}
	if (cc != CURLE_OK) {
		snprintf(err, errlen, "%s: %s", url, curl_easy_strerror(cc));
		goto out;
	}
	if (code != 200) {
		snprintf(err, errlen, "%s: HTTP %ld%s", url, code,
			 code == 401 ? " (check --token-file)" : "");
		goto out;
	}
	if (heartbeat_reply_parse(reply.data ? reply.data : "", reply.len, r,
				  perr, sizeof(perr))) {
		snprintf(err, errlen, "%s: reply: %s", url, perr);
		ret = POST_BAD_REPLY;
		goto out;
	}
	ret = POST_OK;
out:
	free(reply.data);
	return ret;
}

/* Reply @r came (a heartbeat's or a sync's): its state for the main loop. */
static void reply_deliver(struct uplink *u, struct sds_hb_reply *r)
{
	uint64_t one = 1, now = uplink__ms(CLOCK_REALTIME);

	if (r->has_strategies) {
		free(u->reply);
		u->reply = r->strategies;
		r->strategies = NULL;
	}
	/*
	 * Every reply lists the drills in force: a missing one stopped.  But
	 * a heartbeat's reply made before a change can come after the sync
	 * that brought it: the admin's counter tells the older list, kept out.
	 */
	if (heartbeat_drills_newer(r->has_drills_seq, r->drills_seq, u->drills_seq,
				   u->drills_seq_ms, now)) {
		memcpy(u->drills, r->drills, r->ndrills * sizeof(r->drills[0]));
		u->ndrills = r->ndrills;
		u->drills_new = true;
		if (r->has_drills_seq) {
			u->drills_seq = r->drills_seq;
			u->drills_seq_ms = now;
		}
	} else {
		u->drills_stale++;
	}
	/* Copy plans as drills: every reply lists those in force. */
	if (r->has_copy) {
		u->copy = r->copy;
		u->copy_new = true;
	}
	if (write(u->event_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the main loop knows already */
	}
}

/* Reply @r to the head came. */
static void reply_taken(struct uplink *u, struct sds_hb_reply *r)
{
	uplink__pop_head(u);
	u->last_error[0] = '\0';
	reply_deliver(u, r);
}

/*
 * The head was stored but its reply is unusable (@err): not sent again,
 * and the strategies and drills in force stay.  Fills @line when it is
 * time for the log's line a minute (else leaves it ""); returns whether
 * it did.
 */
static bool reply_unusable(struct uplink *u, const char *err, char *line,
			   size_t len)
{
	int64_t start = u->queue[u->head].period_start;
	uint64_t now = uplink__ms(CLOCK_REALTIME);
	bool log = !u->log_at_ms || now - u->log_at_ms >= LOG_EVERY_MS;

	uplink__pop_head(u);
	u->admin_errors++;
	snprintf(u->last_error, sizeof(u->last_error), "%.255s", err);
	if (!log) {
		u->log_skipped++;
		return false;
	}
	snprintf(line, len, "sds-bpf: admin: period %lld stored, reply unusable, not resent: %s (%u more since the last line)\n",
		 (long long)start, err, u->log_skipped);
	u->log_at_ms = now;
	u->log_skipped = 0;
	return true;
}

/* After every URL failed: wait RETRY_MS (or until told to stop). */
static void failed_wait(struct uplink *u, const char *err)
{
	uint64_t at = uplink__ms(CLOCK_REALTIME) + RETRY_MS;
	struct timespec ts;

	u->failures++;
	snprintf(u->last_error, sizeof(u->last_error), "%.255s",
		 err[0] ? err : "out of memory");
	ts.tv_sec = at / 1000;
	ts.tv_nsec = (at % 1000) * 1000000L;
	while (!u->stop && pthread_cond_timedwait(&u->cond, &u->lock, &ts) == 0)
		;
}

/*
 * @path (with its query) on the policy's pick, then on its next picks
 * among the URLs not tried; a 200 of any kind ends it (a heartbeat: it
 * was stored, no next URL).  A sync (no @body) is measured as a read
 * (uplink_pick.c): its failures mark an admin down, but it counts in no
 * heartbeat's "posts" or "stored".  Not under @u->lock.
 */
static enum post_result request_picks(struct uplink *u, CURL *curl,
				      const char *path, const char *body,
				      struct sds_hb_reply *r, char *err,
				      size_t errlen)
{
	enum post_result res = POST_FAILED;
	bool tried[UPLINK_MAX_URLS];
	char url[UPLINK_URL_MAX + 600];
	int i;

	memset(tried, 0, sizeof(tried));
	while (curl && r->strategies && res == POST_FAILED &&
	       (i = uplink_pick__next(u, tried)) >= 0) {
		uint64_t t0 = uplink__ms(CLOCK_MONOTONIC);
		bool timed_out = false;

		tried[i] = true;
		snprintf(url, sizeof(url), "%s%s", u->urls[i], path);
		if (body)
			uplink_pick__begin(u, i);
		else
			uplink_pick__read_begin(u, i);
		res = post_one(curl, url, u->token, body, r, &timed_out, err,
			       errlen);
		if (body)
			uplink_pick__end(u, i, res != POST_FAILED, timed_out,
					 uplink__ms(CLOCK_MONOTONIC) - t0);
		else
			uplink_pick__read_end(u, i, res != POST_FAILED, timed_out,
					      uplink__ms(CLOCK_MONOTONIC) - t0);
	}
	return res;
}

/*
 * The push channel announced a change: the app's state, read-only, with
 * the version in force (the strategies come when the admin's differ).
 * Under @u->lock; drops it for the request.
 */
static void sync_state(struct uplink *u, CURL *curl, struct sds_hb_reply *r)
{
	int64_t version = __atomic_load_n(&u->version_now, __ATOMIC_RELAXED);
	char *g = curl ? curl_easy_escape(curl, u->group, 0) : NULL;
	char *a = curl ? curl_easy_escape(curl, u->app, 0) : NULL;
	enum post_result res = POST_FAILED;
	char path[900], err[1536] = "";

	u->sync_due = false;
	pthread_mutex_unlock(&u->lock);
	memset(r, 0, sizeof(*r));
	r->strategies = malloc(sizeof(*r->strategies));
	if (g && a) {
		/* host: the drills handed to this host (a drill's blast radius). */
		snprintf(path, sizeof(path), "/api/v1/sync?group=%s&app=%s&version=%lld&host=%s",
			 g, a, (long long)version, u->host);
		res = request_picks(u, curl, path, NULL, r, err, sizeof(err));
	}
	curl_free(g);
	curl_free(a);
	pthread_mutex_lock(&u->lock);
	if (res == POST_OK) {
		u->syncs++;
		reply_deliver(u, r);
	} else {
		u->sync_failures++;
		snprintf(u->push.last_error, sizeof(u->push.last_error),
			 "sync: %.240s", err[0] ? err : "out of memory");
		/* Refused or unusable: the heartbeat brings the state instead. */
		if (res == POST_FAILED && !u->sync_due) {
			u->sync_due = true;
			u->sync_at_ms = uplink__ms(CLOCK_REALTIME) + RETRY_MS;
		}
	}
	free(r->strategies);
	r->strategies = NULL;
}

static void *sender(void *arg)
{
	struct uplink *u = arg;
	CURL *curl = curl_easy_init();
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&u->lock);
	while (!u->stop) {
		static struct sds_hb_reply r;	/* 25 KiB of drills: one sender thread */
		char err[1536] = "", line[2048], *body;
		int64_t start;
		enum post_result res;
		uint64_t now = uplink__ms(CLOCK_REALTIME);

		/* A change announced goes before the next period. */
		if (u->sync_due && u->sync_at_ms <= now) {
			sync_state(u, curl, &r);
			continue;
		}
		if (!u->count || u->queue[u->head].send_at_ms > now) {
			struct timespec ts;
			uint64_t at = u->count ? u->queue[u->head].send_at_ms : now + 60000;

			if (u->sync_due && u->sync_at_ms < at)
				at = u->sync_at_ms;
			ts.tv_sec = at / 1000;
			ts.tv_nsec = (at % 1000) * 1000000L;
			pthread_cond_timedwait(&u->cond, &u->lock, &ts);
			continue;
		}
		body = u->queue[u->head].body;
		u->head_busy = true;
		pthread_mutex_unlock(&u->lock);

		memset(&r, 0, sizeof(r));
		r.strategies = malloc(sizeof(*r.strategies));
		res = request_picks(u, curl, "/api/v1/heartbeat", body, &r, err,
				    sizeof(err));

		pthread_mutex_lock(&u->lock);
		u->head_busy = false;
		start = u->queue[u->head].period_start;
		line[0] = '\0';
		if (res == POST_OK)
			reply_taken(u, &r);
		else if (res == POST_BAD_REPLY)
			reply_unusable(u, err, line, sizeof(line));
		else
			failed_wait(u, err);
		free(r.strategies);
		if (res != POST_FAILED) {
			/* Not under the lock: the backlog fsyncs, stderr may block. */
			pthread_mutex_unlock(&u->lock);
			fputs(line, stderr);
			uplink__acked(u, start);
			pthread_mutex_lock(&u->lock);
		}
	}
	pthread_mutex_unlock(&u->lock);
	curl_easy_cleanup(curl);
	return NULL;
}

int uplink__start(struct uplink *u)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (pthread_create(&u->thread, NULL, sender, u))
		return -1;
	u->started = true;
	return uplink_push__start(u) || uplink_share__start(u) ||
	       uplink_abort__start(u) ? -1 : 0;
}
