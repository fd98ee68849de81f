// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* uplink.c - periods and the heartbeat queue (the sender thread: uplink_send.c). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "tick/tick.h"
#include "kernel/snapshot.h"
#include "report/uplink.h"
#include "tokfile.h"
#include "report/hostid.h"


/* FNV-1a of the host name: the offset a fleet spreads its heartbeats by. */
static uint32_t host_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/*
 * This host's offset inside the period: a hash of its name spreads a
 * fleet's heartbeats over 2-9 s after the period ends; SDS_HB_OFFSET_MS
 * (tests) fixes it, so that suites wait the same on every machine.
 */
static int offset_pick(struct uplink *u, char *err, size_t errlen)
{
	const char *v = getenv(UPLINK_OFFSET_ENV);
	char *end;
	long ms;

	if (!v) {
		u->offset_ms = UPLINK_OFFSET_MIN_MS + host_hash(u->host) %
			       (UPLINK_OFFSET_MAX_MS - UPLINK_OFFSET_MIN_MS);
		return 0;
	}
	errno = 0;
	ms = strtol(v, &end, 10);
	/* Digits only: strtol would take a sign and leading blanks too. */
	if (!isdigit((unsigned char)*v) || errno || *end || ms < UPLINK_OFFSET_MIN_MS ||
	    ms > UPLINK_OFFSET_MAX_MS) {
		snprintf(err, errlen, "%s=%.40s: not a number of ms in %d..%d",
			 UPLINK_OFFSET_ENV, v, UPLINK_OFFSET_MIN_MS,
			 UPLINK_OFFSET_MAX_MS);
		return -1;
	}
	u->offset_ms = ms;
	return 0;
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

/* The token file, checked like ssh checks a key (common/tokfile.c). */
static int read_token(const char *path, char *buf, size_t len, char *err,
		      size_t errlen)
{
	char tok[SDS_TOKEN_MAX + 1];

	if (tokfile_read_token("--token-file", path, tok, err, errlen))
		return -1;
	if (strlen(tok) >= len) {
		snprintf(err, errlen, "--token-file %s: token longer than %zu bytes", path,
			 len - 1);
		return -1;
	}
	memcpy(buf, tok, strlen(tok) + 1);
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
		if (n > UPLINK_URL_MAX) {
			snprintf(err, errlen, "--admin: URL '%.60s...' longer than %d bytes",
				 tok, UPLINK_URL_MAX);
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
	hostid__name(UPLINK_MACHINE_ID, u->host, u->plain_host, sizeof(u->host));
	host_ip(u->ip, sizeof(u->ip));
	if (offset_pick(u, err, errlen))
		goto fail;
	/* Until uplink__begin says when counting began. */
	clock_gettime(CLOCK_REALTIME, &real);
	u->wall_offset = wall_offset;
	u->closed_upto = ((int64_t)real.tv_sec / 10) * 10;
	u->first_period = u->closed_upto;
	u->mark_at = u->closed_upto;
	u->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->cond, NULL);
	pthread_cond_init(&u->idle_cond, NULL);
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

void uplink__begin(struct uplink *u, int64_t wall_offset, uint64_t first_sec)
{
	int64_t wall = (int64_t)first_sec + wall_offset;

	/*
	 * Not the period open when the options were read: the start-up
	 * (loading, attaching) takes seconds, and a period that ended
	 * meanwhile, with nothing counted, would go only at the first tick,
	 * after its time.
	 */
	u->wall_offset = wall_offset;
	u->closed_upto = wall - wall % SDS_HB_PERIOD_S;
	u->first_period = u->closed_upto;
	/* The histograms are all zero at attach: the first period's base. */
	u->mark_at = u->closed_upto;
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

struct sds_heartbeat *uplink__open_period(struct uplink *u, int64_t start)
{
	struct uplink_period *p = period_get(u, start);

	return p ? p->hb : NULL;
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

/* Is period @start queued already?  Under @u->lock. */
static bool queue_has(const struct uplink *u, int64_t start)
{
	int i;

	for (i = 0; i < u->count; i++)
		if (u->queue[(u->head + i) % UPLINK_BACKLOG].period_start == start)
			return true;
	return false;
}

/*
 * A backlog write failed: said once (then the queue is in memory only
 * until the loader restarts); the line into @line.  Under @u->lock.
 */
static void backlog_failed(struct uplink *u, char *line, size_t len)
{
	if (u->backlog_said)
		return;
	u->backlog_said = true;
	pthread_mutex_lock(&u->backlog->lock);
	snprintf(line, len, "sds-bpf: %s; the heartbeat backlog is in memory only now\n",
		 u->backlog->err);
	pthread_mutex_unlock(&u->backlog->lock);
}

/* Room for one more: the oldest dropped first, and counted.  Under @u->lock. */
static void queue_drop(struct uplink *u, char *line, size_t len)
{
	/*
	 * Not the one the sender is posting: then the next oldest goes, and
	 * the head moves up into its place.
	 */
	int victim = u->head;
	int64_t start;

	if (u->head_busy)
		victim = (u->head + 1) % UPLINK_BACKLOG;
	start = u->queue[victim].period_start;
	free(u->queue[victim].body);
	if (u->head_busy)
		u->queue[victim] = u->queue[u->head];
	u->head = (u->head + 1) % UPLINK_BACKLOG;
	u->count--;
	u->dropped++;
	if (u->backlog && backlog__done(u->backlog, start, false))
		backlog_failed(u, line, len);
}

/* Queue @body of period @start (the queue owns @body), not before @send_at_ms. */
static void queue_add(struct uplink *u, int64_t start, char *body,
		      uint64_t send_at_ms)
{
	struct uplink_msg *m = &u->queue[(u->head + u->count) % UPLINK_BACKLOG];

	m->period_start = start;
	m->send_at_ms = send_at_ms;
	m->body = body;
	u->count++;
	pthread_cond_signal(&u->cond);
}

/*
 * Closed period @start: on disk (fsynced) before it is queued, so that a
 * loader killed any time after leaves it for the next one.  A period
 * queued already or stored at the admin (closed again after an adoption)
 * is not queued twice.
 */
static void queue_push(struct uplink *u, int64_t start, char *body)
{
	char line[PATH_MAX + 256] = "";
	int r = 0;

	pthread_mutex_lock(&u->lock);
	if (queue_has(u, start)) {
		free(body);
		goto out;
	}
	if (u->count == UPLINK_BACKLOG)
		queue_drop(u, line, sizeof(line));
	if (u->backlog)
		r = backlog__append(u->backlog, start, body, strlen(body));
	if (r == 1) {
		free(body);
		goto out;
	}
	if (r < 0)
		backlog_failed(u, line, sizeof(line));
	queue_add(u, start, body,
		  (uint64_t)(start + SDS_HB_PERIOD_S) * 1000 + u->offset_ms);
out:
	pthread_mutex_unlock(&u->lock);
	/* Not under the lock: stderr may block. */
	if (line[0])
		fputs(line, stderr);
}

int64_t uplink__pop_head(struct uplink *u)
{
	int64_t start = u->queue[u->head].period_start;
	struct timespec real;

	clock_gettime(CLOCK_REALTIME, &real);
	u->last_sent = start;
	u->last_sent_ms = (uint64_t)real.tv_sec * 1000 + real.tv_nsec / 1000000;

	free(u->queue[u->head].body);
	u->head = (u->head + 1) % UPLINK_BACKLOG;
	u->count--;
	u->sent++;
	return start;
}

void uplink__acked(struct uplink *u, int64_t start)
{
	char line[PATH_MAX + 256] = "";

	if (!u->backlog || !backlog__done(u->backlog, start, true))
		return;
	pthread_mutex_lock(&u->lock);
	backlog_failed(u, line, sizeof(line));
	pthread_mutex_unlock(&u->lock);
	if (line[0])
		fputs(line, stderr);
}

/* A period an earlier loader left: queued to go at once, oldest first. */
static void restore_one(void *ctx, int64_t start, char *body)
{
	struct uplink *u = ctx;

	pthread_mutex_lock(&u->lock);
	if (u->count == UPLINK_BACKLOG || queue_has(u, start)) {
		free(body);
	} else {
		queue_add(u, start, body, 0);
		u->restored++;
	}
	pthread_mutex_unlock(&u->lock);
}

int uplink__backlog(struct uplink *u, const char *state_dir, char *msg,
		    size_t msglen, char *err, size_t errlen)
{
	struct backlog *b = malloc(sizeof(*b));

	msg[0] = '\0';
	if (!b || backlog__init(b, state_dir, u->group, u->app, u->host,
				UPLINK_BACKLOG)) {
		snprintf(err, errlen, errno == ENAMETOOLONG ?
			 "state directory %s: too long for the heartbeat backlog: choose a shorter --state-dir" :
			 "heartbeat backlog: out of memory", state_dir);
		free(b);
		return -1;
	}
	/* Periods a loader before the host id wrote are this host's too. */
	snprintf(b->plain_host, sizeof(b->plain_host), "%s", u->plain_host);
	if (backlog__load(b, restore_one, u, msg, msglen) < 0) {
		snprintf(err, errlen, "reading the heartbeat backlog %s: out of memory",
			 b->path);
		backlog__free(b);
		free(b);
		return -1;
	}
	u->backlog = b;
	/* The file could not be written anew: @msg said so, once is enough. */
	u->backlog_said = b->fd < 0 && b->err[0];
	return 0;
}

/*
 * Close period @p: its latency histograms are what the calls that ended
 * between its first tick and the next period's added (hist_mark() took
 * the latter in this tick or before), then queue it.  The owners' extras
 * come from the tick record; what was captured for traffic copy goes
 * only to the first period a tick closes (@copy), as it is what was
 * captured since the last one closed.
 */
static void period_close(struct uplink *u, const struct tick *t,
			 struct uplink_period *p, bool copy)
{
	json_t *doc;
	char *body;
	int id, b;

	p->hb->version = t->strategies_version;
	/* Only after a deploy: an older admin refuses fields it does not know. */
	if (t->build && t->build->deploys) {
		snprintf(p->hb->build_id, sizeof(p->hb->build_id), "%s",
			 t->build->build_id);
		p->hb->deploys = t->build->deploys;
	}
	/* Host pressure rules, only with some (docs/PRESSURE.md). */
	p->hb->nrules = t->nrules;
	if (t->nrules > 0)
		memcpy(p->hb->rules, t->rules, t->nrules * sizeof(t->rules[0]));
	/* The admin's strategies refused, only with some (engine.c). */
	p->hb->nrefused = t->nrefused;
	if (t->nrefused > 0)
		memcpy(p->hb->refused, t->refused, t->nrefused * sizeof(t->refused[0]));
	for (id = 0; id < t->npoints; id++) {
		const struct point_stats *st = snapshot__point(t->snap, id);
		const struct sds_hb_point *x = &t->pt[id].hb;
		struct sds_hb_point *hp;

		if (!st)
			continue;
		hp = heartbeat_add_point(p->hb, t->pt[id].name);
		if (!hp)
			continue;
		for (b = 0; b < SDS_HIST_BUCKETS; b++) {
			hp->latency_hist[b] = u->hist_mark[id][b] - u->hist_base[id][b];
			u->hist_base[id][b] = u->hist_mark[id][b];
		}
		uplink_split__close(u, id, hp);
		/* The probes' cost as the period ends (budget_run.c). */
		hp->suspended = x->suspended;
		hp->overhead_milli = x->overhead_milli;
		/* Traffic copy: what was captured since the last period closed. */
		hp->copy_captured = copy ? x->copy_captured : 0;
		hp->copy_dropped = copy ? x->copy_dropped : 0;
		hp->copy_truncated = copy ? x->copy_truncated : 0;
		/* An adaptive point's limit as the period ends (adaptive_run.c). */
		hp->adaptive_limit = x->adaptive_limit;
		hp->adaptive_latency_ns = x->adaptive_latency_ns;
		/* A host pressure rule shed it in the period (pressure_run.c). */
		hp->overload = x->overload;
		/* A keyed point's heaviest keys (engine.c, docs/KEYS.md). */
		for (b = 0; b < t->nkeys; b++) {
			struct sds_hb_key *k;

			if (t->keys[b].point != id ||
			    !(k = heartbeat_add_key(p->hb, (int)(hp - p->hb->points))))
				continue;
			*k = t->keys[b];
			k->point = (int)(hp - p->hb->points);
		}
	}
	/* Each point's peers since attach (docs/DEPS.md), with --deps. */
	if (u->deps_fill)
		u->deps_fill(u->deps_ctx, p->hb);
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
static void hist_mark(struct uplink *u, const struct tick *t, int64_t cur)
{
	int id;

	if (cur <= u->mark_at)
		return;
	for (id = 0; id < t->npoints && id < SDS_MAX_POINTS; id++) {
		const struct point_stats *st = snapshot__point(t->snap, id);

		/* Unreadable now: its calls go to the next period instead. */
		if (st && st->gauges)
			memcpy(u->hist_mark[id], st->hist, sizeof(st->hist));
		uplink_split__mark(u, id, st);
	}
	u->mark_at = cur;
}

/* Seconds up to now - 2 are folded (counters__tick): as Unix seconds. */
static int64_t folded_wall(const struct uplink *u, uint64_t now_sec)
{
	return (int64_t)now_sec - 2 + u->wall_offset;
}

bool uplink__closing(const struct uplink *u, uint64_t now_sec)
{
	return u->closed_upto + SDS_HB_PERIOD_S - 1 <= folded_wall(u, now_sec);
}

void uplink__tick(struct uplink *u, const struct tick *t)
{
	int64_t cur = ((int64_t)t->now_sec + u->wall_offset) / 10 * 10;
	struct uplink_period *p = period_get(u, cur);
	bool copy = true;
	int i, id;

	/* The version a sync asks the admin about (uplink_send.c). */
	__atomic_store_n(&u->version_now, t->strategies_version, __ATOMIC_RELAXED);
	hist_mark(u, t, cur);
	/* Concurrency is a gauge: its maximum over the period, per tick. */
	for (id = 0; p && id < t->npoints; id++) {
		const struct point_stats *st = snapshot__point(t->snap, id);
		struct sds_hb_point *hp;

		if (!st || !st->gauges)
			continue;
		hp = heartbeat_add_point(p->hb, t->pt[id].name);
		if (hp && (uint64_t)st->concurrency > hp->max_concurrency)
			hp->max_concurrency = st->concurrency;
		/* So are the calls stuck past their timeout (kernel/stuck.h). */
		if (hp && st->stuck_read && st->stuck > hp->max_stuck)
			hp->max_stuck = st->stuck;
	}
	/* What drills injected, into the period it happened in. */
	for (id = 0; p && id < t->npoints && id < SDS_MAX_POINTS; id++) {
		uint64_t f = t->pt[id].drill_faults;
		uint64_t d = t->pt[id].drill_delays;
		struct sds_hb_point *hp;

		if (f == u->drill_seen[id][0] && d == u->drill_seen[id][1])
			continue;
		hp = heartbeat_add_point(p->hb, t->pt[id].name);
		if (hp) {
			hp->faults += f - u->drill_seen[id][0];
			hp->delays += d - u->drill_seen[id][1];
		}
		u->drill_seen[id][0] = f;
		u->drill_seen[id][1] = d;
	}
	/* A period is complete once its last second is folded. */
	while (uplink__closing(u, t->now_sec)) {
		for (i = 0; i < UPLINK_OPEN; i++)
			if (u->open[i].start == u->closed_upto)
				break;
		p = i < UPLINK_OPEN ? &u->open[i] : period_get(u, u->closed_upto);
		if (p) {
			period_close(u, t, p, copy);
			copy = false;
		}
		u->closed_upto += SDS_HB_PERIOD_S;
	}
}

void uplink__stop(struct uplink *u)
{
	int i;

	if (u->started) {
		pthread_mutex_lock(&u->lock);
		u->stop = true;
		pthread_cond_broadcast(&u->cond);
		pthread_cond_broadcast(&u->idle_cond);
		pthread_mutex_unlock(&u->lock);
		uplink_push__stop(u);
		uplink_share__stop(u);
		uplink_abort__stop(u);
		pthread_join(u->thread, NULL);
		u->started = false;
	}
	for (i = 0; i < u->count; i++)
		free(u->queue[(u->head + i) % UPLINK_BACKLOG].body);
	u->count = 0;
	for (i = 0; i < UPLINK_OPEN; i++)
		heartbeat_free(u->open[i].hb);
	uplink_pick__free(u);
	for (i = 0; i < u->nurls; i++)
		free(u->urls[i]);
	u->nurls = 0;
	if (u->backlog) {
		backlog__free(u->backlog);
		free(u->backlog);
		u->backlog = NULL;
	}
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

int uplink__take_copy(struct uplink *u, struct sds_hb_copy *out)
{
	int n = 0;

	pthread_mutex_lock(&u->lock);
	if (u->copy_new) {
		*out = u->copy;
		u->copy_new = false;
		n = 1;
	}
	pthread_mutex_unlock(&u->lock);
	return n;
}

json_t *uplink__json(struct uplink *u)
{
	json_t *o = json_object(), *urls = json_array(), *queue;
	int i;

	for (i = 0; i < u->nurls; i++)
		json_array_append_new(urls, json_string(u->urls[i]));
	json_object_set_new(o, "urls", urls);
	json_object_set_new(o, "host", json_string(u->host));
	json_object_set_new(o, "offset_ms", json_integer(u->offset_ms));
	json_object_set_new(o, "first_period", json_integer(u->first_period));
	/* The main loop's, and so is this call's: no lock. */
	json_object_set_new(o, "open_period", json_integer(u->closed_upto));
	pthread_mutex_lock(&u->lock);
	json_object_set_new(o, "sent", json_integer(u->sent));
	json_object_set_new(o, "last_sent", u->last_sent ?
			    json_pack("{s:I, s:I}", "period", (json_int_t)u->last_sent,
				      "at_ms", (json_int_t)u->last_sent_ms) :
			    json_null());
	json_object_set_new(o, "pending", json_integer(u->count));
	queue = json_array();
	for (i = 0; i < u->count; i++) {
		const struct uplink_msg *m = &u->queue[(u->head + i) % UPLINK_BACKLOG];

		json_array_append_new(queue, json_pack("{s:I, s:I}",
			"period", (json_int_t)m->period_start,
			"send_at_ms", (json_int_t)m->send_at_ms));
	}
	json_object_set_new(o, "queue", queue);
	json_object_set_new(o, "dropped", json_integer(u->dropped));
	json_object_set_new(o, "failures", json_integer(u->failures));
	json_object_set_new(o, "admin_errors", json_integer(u->admin_errors));
	json_object_set_new(o, "last_error", json_string(u->last_error));
	json_object_set_new(o, "backlog", json_string(u->backlog ? u->backlog->path : ""));
	json_object_set_new(o, "restored", json_integer(u->restored));
	pthread_mutex_unlock(&u->lock);
	uplink_pick__json(u, o);
	json_object_set_new(o, "push", uplink_push__json(u));
	json_object_set_new(o, "shares", uplink_share__json(u));
	return o;
}

/*
 * The counts of a struct uplink_psum and a struct sds_hb_point (same
 * names in both), from @src to @dst: one list for saving and restoring.
 */
#define PSUM_COPY(dst, src) do {				\
	(dst)->visits = (src)->visits;				\
	(dst)->exceptions = (src)->exceptions;			\
	(dst)->timeouts = (src)->timeouts;			\
	(dst)->downgrades = (src)->downgrades;			\
	(dst)->max_concurrency = (src)->max_concurrency;	\
	(dst)->faults = (src)->faults;				\
	(dst)->delays = (src)->delays;				\
} while (0)

/* Record @j of the records at @kp, @stride bytes apart. */
#define KEPT_AT(kp, j, stride)	((void *)((char *)(kp) + (size_t)(j) * (stride)))

void uplink__save(const struct uplink *u, int npoints, struct uplink_kept *a,
		  struct uplink_kept_point *kp, size_t stride)
{
	int i, j;

	a->closed_upto = u->closed_upto;
	a->mark_at = u->mark_at;
	for (i = 0; i < npoints; i++) {
		struct uplink_kept_point *k = KEPT_AT(kp, i, stride);

		memcpy(k->hist_base, u->hist_base[i], sizeof(k->hist_base));
		memcpy(k->hist_mark, u->hist_mark[i], sizeof(k->hist_mark));
		memcpy(k->drill_seen, u->drill_seen[i], sizeof(k->drill_seen));
	}
	for (i = 0; i < UPLINK_OPEN; i++) {
		const struct sds_heartbeat *hb = u->open[i].hb;
		int n = u->open[i].start && hb ? hb->n : 0;

		a->open_start[i] = n || u->open[i].start ? u->open[i].start : 0;
		if (n > SDS_MAX_POINTS)
			n = SDS_MAX_POINTS;
		a->open_n[i] = n;
		for (j = 0; j < n; j++) {
			const struct sds_hb_point *hp = &hb->points[j];
			struct uplink_kept_point *k = KEPT_AT(kp, j, stride);
			struct uplink_psum *s = &k->open[i];

			memcpy(s->name, hp->name, sizeof(s->name));
			PSUM_COPY(s, hp);
		}
	}
}

void uplink__restore(struct uplink *u, int npoints,
		     const struct uplink_kept *a,
		     const struct uplink_kept_point *kp, size_t stride)
{
	int i, j;

	u->closed_upto = a->closed_upto;
	/* The dead loader's open periods are this one's to send first. */
	u->first_period = a->closed_upto;
	u->mark_at = a->mark_at;
	for (i = 0; i < npoints; i++) {
		const struct uplink_kept_point *k = KEPT_AT(kp, i, stride);

		memcpy(u->hist_base[i], k->hist_base, sizeof(k->hist_base));
		memcpy(u->hist_mark[i], k->hist_mark, sizeof(k->hist_mark));
		memcpy(u->drill_seen[i], k->drill_seen, sizeof(k->drill_seen));
	}
	for (i = 0; i < UPLINK_OPEN; i++) {
		struct sds_heartbeat *hb;

		if (!a->open_start[i] || a->open_start[i] < a->closed_upto)
			continue;
		hb = uplink__open_period(u, a->open_start[i]);
		for (j = 0; hb && j < (int)a->open_n[i] && j < SDS_MAX_POINTS; j++) {
			const struct uplink_kept_point *k = KEPT_AT(kp, j, stride);
			const struct uplink_psum *s = &k->open[i];
			struct sds_hb_point *hp;
			char name[SDS_NAME_MAX + 1];

			memcpy(name, s->name, sizeof(name));
			name[SDS_NAME_MAX] = '\0';
			hp = heartbeat_add_point(hb, name);
			if (!hp)
				continue;
			PSUM_COPY(hp, s);
		}
	}
}
