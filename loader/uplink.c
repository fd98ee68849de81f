// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* uplink.c - periods, the heartbeat queue and its sender thread. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include "loader.h"
#include "uplink.h"

#define HTTP_TIMEOUT_MS		3000	/* one post; then the next URL */
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

/* FNV-1a of the host name: the offset a fleet spreads its heartbeats by. */
static uint32_t host_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void host_ip(char *ip, size_t len)
{
	struct ifaddrs *ifa, *i;

	ip[0] = '\0';
	if (getifaddrs(&ifa))
		return;
	for (i = ifa; i; i = i->ifa_next) {
		struct sockaddr_in *sin = (struct sockaddr_in *)i->ifa_addr;

		if (!sin || sin->sin_family != AF_INET ||
		    ntohl(sin->sin_addr.s_addr) >> 24 == 127)
			continue;
		inet_ntop(AF_INET, &sin->sin_addr, ip, len);
		break;
	}
	freeifaddrs(ifa);
}

static int read_token(const char *path, char *buf, size_t len, char *err,
		      size_t errlen)
{
	size_t n;
	FILE *f = fopen(path, "re");

	if (!f) {
		snprintf(err, errlen, "--token-file %s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
		     buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		buf[--n] = '\0';
	if (!n || strpbrk(buf, "\r\n")) {
		snprintf(err, errlen, "--token-file %s: expected one line with the token",
			 path);
		return -1;
	}
	return 0;
}

int uplink__init(struct uplink *u, const char *urls, const char *token_file,
		 const char *group, const char *app, int64_t wall_offset,
		 char *err, size_t errlen)
{
	struct timespec real;
	char *copy, *tok, *save = NULL;
	int i;

	memset(u, 0, sizeof(*u));
	u->event_fd = -1;
	copy = strdup(urls);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t n = strlen(tok);

		const char *host = strstr(tok, "://");

		if ((strncmp(tok, "http://", 7) && strncmp(tok, "https://", 8)) ||
		    !host[3] || host[3] == ':' || host[3] == '/') {
			snprintf(err, errlen, "--admin: bad URL '%.200s': expected http://HOST:PORT",
				 tok);
			goto fail;
		}
		if (u->nurls == UPLINK_MAX_URLS) {
			snprintf(err, errlen, "--admin: at most %d URLs", UPLINK_MAX_URLS);
			goto fail;
		}
		while (n && tok[n - 1] == '/')
			tok[--n] = '\0';
		u->urls[u->nurls++] = strdup(tok);
	}
	free(copy);
	copy = NULL;
	if (!u->nurls) {
		snprintf(err, errlen, "--admin: no URL given");
		goto fail;
	}
	if (!token_file) {
		snprintf(err, errlen, "--admin needs --token-file (the admin's bearer token)");
		goto fail;
	}
	if (read_token(token_file, u->token, sizeof(u->token), err, errlen))
		goto fail;
	snprintf(u->group, sizeof(u->group), "%s", group);
	snprintf(u->app, sizeof(u->app), "%s", app);
	if (gethostname(u->host, sizeof(u->host)) || !heartbeat_host_valid(u->host))
		snprintf(u->host, sizeof(u->host), "localhost");
	host_ip(u->ip, sizeof(u->ip));
	u->offset_ms = 2000 + host_hash(u->host) % 7000;
	clock_gettime(CLOCK_REALTIME, &real);
	u->wall_offset = wall_offset;
	u->closed_upto = ((int64_t)real.tv_sec / 10) * 10;
	/* The histograms are all zero at attach: the first period's base. */
	u->mark_at = u->closed_upto;
	u->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	if (u->event_fd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	return 0;
fail:
	free(copy);
	for (i = 0; i < u->nurls; i++)
		free(u->urls[i]);
	u->nurls = 0;
	return -1;
}

static struct uplink_period *period_get(struct uplink *u, int64_t start)
{
	struct uplink_period *free_slot = NULL;
	int i;

	for (i = 0; i < UPLINK_OPEN; i++) {
		if (u->open[i].start == start)
			return &u->open[i];
		if (!u->open[i].start && !free_slot)
			free_slot = &u->open[i];
	}
	if (!free_slot)
		return NULL;
	if (!free_slot->hb)
		free_slot->hb = heartbeat_new();
	if (!free_slot->hb)
		return NULL;
	heartbeat_init(free_slot->hb, u->group, u->app, u->host, u->ip, start, 0);
	free_slot->start = start;
	return free_slot;
}

void uplink__on_second(void *ctx, int id, uint64_t sec, const struct sds_counts *c)
{
	struct uplink *u = ctx;
	int64_t wall = (int64_t)sec + u->wall_offset;
	int64_t start = wall - wall % SDS_HB_PERIOD_S;
	struct uplink_period *p;
	struct sds_hb_point *hp;

	if (start < u->closed_upto)
		start = u->closed_upto;	/* late: the oldest open period takes it */
	p = period_get(u, start);
	if (!p)
		return;
	hp = heartbeat_add_point(p->hb, u->probes->pts[id].spec.name);
	if (!hp)
		return;
	hp->visits += c->visits;
	hp->exceptions += c->exceptions;
	hp->timeouts += c->timeouts;
	hp->downgrades += c->downgrades;
}

static void queue_push(struct uplink *u, int64_t start, char *body)
{
	struct uplink_msg *m;

	pthread_mutex_lock(&u->lock);
	if (u->count == UPLINK_BACKLOG) {
		/*
		 * Oldest dropped first, and counted; but not the one the sender
		 * is posting: then the next oldest goes, and the head moves up
		 * into its place.
		 */
		int victim = u->head;

		if (u->head_busy)
			victim = (u->head + 1) % UPLINK_BACKLOG;
		free(u->queue[victim].body);
		if (u->head_busy)
			u->queue[victim] = u->queue[u->head];
		u->head = (u->head + 1) % UPLINK_BACKLOG;
		u->count--;
		u->dropped++;
	}
	m = &u->queue[(u->head + u->count) % UPLINK_BACKLOG];
	m->period_start = start;
	m->send_at_ms = (uint64_t)(start + SDS_HB_PERIOD_S) * 1000 + u->offset_ms;
	m->body = body;
	u->count++;
	pthread_cond_signal(&u->cond);
	pthread_mutex_unlock(&u->lock);
}

/*
 * Close period @p: its latency histograms are what the calls that ended
 * between its first tick and the next period's added (hist_mark() took
 * the latter in this tick or before), then queue it.
 */
static void period_close(struct uplink *u, struct loader *l,
			 struct uplink_period *p)
{
	json_t *doc;
	char *body;
	int id, b;

	p->hb->version = l->strategies ? l->strategies->version : 0;
	for (id = 0; id < l->probes.npoints; id++) {
		struct point_stats st;
		struct sds_hb_point *hp;

		if (counters__read(&l->counters, id, counters_now_sec(), &st))
			continue;
		hp = heartbeat_add_point(p->hb, l->probes.pts[id].spec.name);
		if (!hp)
			continue;
		for (b = 0; b < SDS_HIST_BUCKETS; b++) {
			hp->latency_hist[b] = u->hist_mark[id][b] - u->hist_base[id][b];
			u->hist_base[id][b] = u->hist_mark[id][b];
		}
		/* The probes' cost as the period ends. */
		budget__hb_point(l, id, &st, hp);
	}
	doc = heartbeat_to_json(p->hb);
	body = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
	json_decref(doc);
	if (body)
		queue_push(u, p->start, body);
	p->start = 0;
}

/*
 * At the first tick of period @cur: every point's histogram, the end of
 * the previous period's.  A period is closed only once its last second is
 * folded, a second or more into the next one; taking its histogram then
 * would give it the calls of the next period's first second or two (and
 * leave out its own first ones).  What is left: a call that ends in the
 * tick between the boundary and this mark (100 ms by default, plus the
 * tick's lateness) counts in the period before, and a call's histogram
 * entry goes to the period it ended in, its visit to the one it began
 * in.  Exact alignment would need per-second histograms in the kernel.
 */
static void hist_mark(struct uplink *u, struct loader *l, uint64_t now_sec,
		      int64_t cur)
{
	int id;

	if (cur <= u->mark_at)
		return;
	for (id = 0; id < l->probes.npoints && id < SDS_MAX_POINTS; id++) {
		struct point_stats st;

		/* Unreadable now: its calls go to the next period instead. */
		if (!counters__read(&l->counters, id, now_sec, &st))
			memcpy(u->hist_mark[id], st.hist, sizeof(st.hist));
	}
	u->mark_at = cur;
}

void uplink__tick(struct uplink *u, struct loader *l, uint64_t now_sec)
{
	/* Seconds up to now - 2 are folded (counters__tick). */
	int64_t folded_wall = (int64_t)now_sec - 2 + u->wall_offset;
	int64_t cur = ((int64_t)now_sec + u->wall_offset) / 10 * 10;
	struct uplink_period *p = period_get(u, cur);
	int i, id;

	hist_mark(u, l, now_sec, cur);
	/* Concurrency is a gauge: its maximum over the period, per tick. */
	for (id = 0; p && id < l->probes.npoints; id++) {
		struct point_stats st;
		struct sds_hb_point *hp;

		if (counters__read(&l->counters, id, now_sec, &st))
			continue;
		hp = heartbeat_add_point(p->hb, l->probes.pts[id].spec.name);
		if (hp && (uint64_t)st.concurrency > hp->max_concurrency)
			hp->max_concurrency = st.concurrency;
	}
	/* What drills injected, into the period it happened in. */
	for (id = 0; p && id < l->probes.npoints && id < SDS_MAX_POINTS; id++) {
		const struct cell_counts *n = flags__counts(&l->flags, id);
		uint64_t f = n->drill_faults;
		uint64_t d = n->drill_delays;
		struct sds_hb_point *hp;

		if (f == u->drill_seen[id][0] && d == u->drill_seen[id][1])
			continue;
		hp = heartbeat_add_point(p->hb, l->probes.pts[id].spec.name);
		if (hp) {
			hp->faults += f - u->drill_seen[id][0];
			hp->delays += d - u->drill_seen[id][1];
		}
		u->drill_seen[id][0] = f;
		u->drill_seen[id][1] = d;
	}
	/* A period is complete once its last second is folded. */
	while (u->closed_upto + SDS_HB_PERIOD_S - 1 <= folded_wall) {
		for (i = 0; i < UPLINK_OPEN; i++)
			if (u->open[i].start == u->closed_upto)
				break;
		p = i < UPLINK_OPEN ? &u->open[i] : period_get(u, u->closed_upto);
		if (p)
			period_close(u, l, p);
		u->closed_upto += SDS_HB_PERIOD_S;
	}
}

struct body_buf {
	char *data;		/* the reply so far */
	size_t len;		/* bytes in @data */
};

static size_t body_write(char *ptr, size_t size, size_t nmemb, void *ctx)
{
	struct body_buf *b = ctx;
	size_t n = size * nmemb;
	char *nd;

	if (b->len + n > REPLY_MAX)
		return 0;
	nd = realloc(b->data, b->len + n + 1);
	if (!nd)
		return 0;
	memcpy(nd + b->len, ptr, n);
	b->data = nd;
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

/*
 * Post @body to @base: POST_OK with the parsed reply in @r, else @err
 * says why.  The admin stores a heartbeat before it answers 200, so a 200
 * whose body is no reply (not JSON, malformed strategies, too large) is
 * POST_BAD_REPLY: sending the period again would only bring the same.
 */
static enum post_result post_one(CURL *curl, const char *base,
				 const char *token, const char *body,
				 struct sds_hb_reply *r, char *err, size_t errlen)
{
	struct curl_slist *hdrs = NULL;
	struct body_buf reply = {};
	char url[600], auth[600], perr[256];
	enum post_result ret = POST_FAILED;
	long code = 0;
	CURLcode cc;

	snprintf(url, sizeof(url), "%s/api/v1/heartbeat", base);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
	hdrs = curl_slist_append(hdrs, auth);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)HTTP_TIMEOUT_MS);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, body_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply);
	cc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
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
	curl_slist_free_all(hdrs);
	free(reply.data);
	return ret;
}

/* The head was stored: pop it.  Under @u->lock; only the sender pops. */
static void head_stored(struct uplink *u)
{
	free(u->queue[u->head].body);
	u->head = (u->head + 1) % UPLINK_BACKLOG;
	u->count--;
	u->sent++;
}

/* Reply @r to the head came: its strategies and drills for the main loop. */
static void reply_taken(struct uplink *u, struct sds_hb_reply *r)
{
	uint64_t one = 1;

	head_stored(u);
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
	if (write(u->event_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the main loop knows already */
	}
}

/*
 * The head was stored but its reply is unusable (@err): not sent again,
 * and the strategies and drills in force stay.  Fills @line when it is
 * time for the log's line a minute; returns whether it did.
 */
static bool reply_unusable(struct uplink *u, const char *err, char *line,
			   size_t len)
{
	int64_t start = u->queue[u->head].period_start;
	uint64_t now = wall_ms();
	bool log = !u->log_at_ms || now - u->log_at_ms >= LOG_EVERY_MS;

	head_stored(u);
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
		enum post_result res = POST_FAILED;
		uint64_t now = wall_ms();
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
		/* A 200 of any kind stored it: no next URL then. */
		for (i = 0; curl && r.strategies && i < u->nurls && res == POST_FAILED; i++)
			res = post_one(curl, u->urls[i], u->token, body, &r, err,
				       sizeof(err));

		pthread_mutex_lock(&u->lock);
		u->head_busy = false;
		if (res == POST_OK) {
			reply_taken(u, &r);
		} else if (res == POST_BAD_REPLY) {
			if (reply_unusable(u, err, line, sizeof(line))) {
				/* Not under the lock: stderr may block. */
				pthread_mutex_unlock(&u->lock);
				fputs(line, stderr);
				pthread_mutex_lock(&u->lock);
			}
		} else {
			failed_wait(u, err);
		}
		free(r.strategies);
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

void uplink__stop(struct uplink *u)
{
	int i;

	if (u->started) {
		pthread_mutex_lock(&u->lock);
		u->stop = true;
		pthread_cond_broadcast(&u->cond);
		pthread_mutex_unlock(&u->lock);
		pthread_join(u->thread, NULL);
		u->started = false;
	}
	for (i = 0; i < u->count; i++)
		free(u->queue[(u->head + i) % UPLINK_BACKLOG].body);
	u->count = 0;
	for (i = 0; i < UPLINK_OPEN; i++)
		heartbeat_free(u->open[i].hb);
	for (i = 0; i < u->nurls; i++)
		free(u->urls[i]);
	u->nurls = 0;
	free(u->reply);
	u->reply = NULL;
	if (u->event_fd >= 0)
		close(u->event_fd);
	u->event_fd = -1;
}

struct sds_strategies *uplink__take_reply(struct uplink *u)
{
	struct sds_strategies *s;
	uint64_t n;

	if (read(u->event_fd, &n, sizeof(n)) < 0) {
		/* nothing pending, or already read */
	}
	pthread_mutex_lock(&u->lock);
	s = u->reply;
	u->reply = NULL;
	pthread_mutex_unlock(&u->lock);
	return s;
}

int uplink__take_drills(struct uplink *u, struct sds_hb_drill *out)
{
	int n = -1;

	pthread_mutex_lock(&u->lock);
	if (u->drills_new) {
		n = u->ndrills;
		memcpy(out, u->drills, n * sizeof(out[0]));
		u->drills_new = false;
	}
	pthread_mutex_unlock(&u->lock);
	return n;
}

json_t *uplink__json(struct uplink *u)
{
	json_t *o = json_object(), *urls = json_array();
	int i;

	for (i = 0; i < u->nurls; i++)
		json_array_append_new(urls, json_string(u->urls[i]));
	json_object_set_new(o, "urls", urls);
	json_object_set_new(o, "host", json_string(u->host));
	json_object_set_new(o, "offset_ms", json_integer(u->offset_ms));
	pthread_mutex_lock(&u->lock);
	json_object_set_new(o, "sent", json_integer(u->sent));
	json_object_set_new(o, "pending", json_integer(u->count));
	json_object_set_new(o, "dropped", json_integer(u->dropped));
	json_object_set_new(o, "failures", json_integer(u->failures));
	json_object_set_new(o, "admin_errors", json_integer(u->admin_errors));
	json_object_set_new(o, "last_error", json_string(u->last_error));
	pthread_mutex_unlock(&u->lock);
	return o;
}
