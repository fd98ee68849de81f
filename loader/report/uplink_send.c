// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * uplink_send.c - the heartbeat sender thread: posts the queue's oldest
 * period to the admin the --admin-policy picks (uplink_pick.c), then to
 * its next picks, takes the reply's strategies and
 * drills, and decides what a reply means for the queue (stored, failed,
 * stored but unusable).  The periods and the queue are uplink.c's.
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

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Post @body to @base: POST_OK with the parsed reply in @r, else @err
 * says why.  The admin stores a heartbeat before it answers 200, so a 200
 * whose body is no reply (not JSON, malformed strategies, too large) is
 * POST_BAD_REPLY: sending the period again would only bring the same.
 */
static enum post_result post_one(CURL *curl, const char *base,
				 const char *token, const char *body,
				 struct sds_hb_reply *r, bool *timed_out,
				 char *err, size_t errlen)
{
	struct hbpost_reply reply;
	char url[600], perr[256];
	enum post_result ret = POST_FAILED;
	long code = 0;
	CURLcode cc;

	snprintf(url, sizeof(url), "%s/api/v1/heartbeat", base);
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

/* Reply @r to the head came: its strategies and drills for the main loop. */
static void reply_taken(struct uplink *u, struct sds_hb_reply *r)
{
	uint64_t one = 1;

	uplink__pop_head(u);
	u->last_error[0] = '\0';
	if (r->has_strategies) {
		free(u->reply);
		u->reply = r->strategies;
		r->strategies = NULL;
	}
	/* Every reply lists the drills in force: a missing one stopped. */
	memcpy(u->drills, r->drills, r->ndrills * sizeof(r->drills[0]));
	u->ndrills = r->ndrills;
	u->drills_new = true;
	/* Copy plans as drills: every reply lists those in force. */
	if (r->has_copy) {
		u->copy = r->copy;
		u->copy_new = true;
	}
	if (write(u->event_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the main loop knows already */
	}
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
	uint64_t now = wall_ms();
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
	uint64_t at = wall_ms() + RETRY_MS;
	struct timespec ts;

	u->failures++;
	snprintf(u->last_error, sizeof(u->last_error), "%.255s",
		 err[0] ? err : "out of memory");
	ts.tv_sec = at / 1000;
	ts.tv_nsec = (at % 1000) * 1000000L;
	while (!u->stop && pthread_cond_timedwait(&u->cond, &u->lock, &ts) == 0)
		;
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
		char err[1024] = "", line[1400], *body;
		int64_t start;
		enum post_result res = POST_FAILED;
		uint64_t now = wall_ms();
		bool tried[UPLINK_MAX_URLS];
		int i;

		if (!u->count || u->queue[u->head].send_at_ms > now) {
			struct timespec ts;
			uint64_t at = u->count ? u->queue[u->head].send_at_ms : now + 60000;

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
		/*
		 * The policy's pick, then its next picks among the URLs not
		 * tried; a 200 of any kind stored it: no next URL then.
		 */
		memset(tried, 0, sizeof(tried));
		while (curl && r.strategies && res == POST_FAILED &&
		       (i = uplink_pick__next(u, tried)) >= 0) {
			uint64_t t0 = mono_ms();
			bool timed_out = false;

			tried[i] = true;
			uplink_pick__begin(u, i);
			res = post_one(curl, u->urls[i], u->token, body, &r,
				       &timed_out, err, sizeof(err));
			uplink_pick__end(u, i, res != POST_FAILED, timed_out,
					 mono_ms() - t0);
		}

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
	return 0;
}
