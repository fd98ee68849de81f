// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cluster.c - the admin's allocator of cluster-wide limits (docs/CLUSTER.md).
 *
 * Why the sum of what passes stays under a limit L: every host's "taken"
 * (the most of its last report's ack and used, and the last grant sent to
 * it) bounds what its window can pass, and a host is granted at most L
 * less the others' taken.  A host's decrease is in its next grant at once,
 * but the others see the capacity it frees only when its ack says the lower
 * share is in force; its used and ack are clamped to the most it was
 * granted in the window, so a host cannot hold more than it was given.
 *
 * The state: per (app, point) an entry with its hosts' records, in a
 * table of hash chains; per app the cluster fields of its active
 * strategies, read by the route at most once a second.  One mutex over
 * all of it: a report is all or nothing (a bound refuses it whole), and
 * the work under it is a sort of one point's live hosts.  Records of hosts
 * gone quiet are kept for the window after their lease (their largest
 * grant still bounds what they may claim on return), then freed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "cluster.h"

#define NBUCKETS	4096		/* entry and app hash chains */
#define RING		11		/* 1-s slots: the largest grant of the last 10 s */
#define KEEP_MS		(CLUSTER_WINDOW_MS + CLUSTER_LEASE_MS)	/* a record outlives its lease */
#define APP_KEEP_MS	60000		/* an app's limits not asked for this long are dropped */
#define SWEEP_MS	1000		/* the table is swept at most this often */
#define NEVER		(INT64_MIN / 2)

/* The largest value put in each second of the last RING seconds. */
struct ring {
	int64_t sec[RING];
	int64_t max[RING];
};

/* One host of one (app, point): its last report, clamped, and its grants. */
struct host {
	char *name;			/* as the report said it */
	int64_t seen_ms;		/* when it last reported */
	int64_t used, wants, ack;	/* its last report; ack -1: none yet */
	int64_t rate_wants, rate_ack;	/* rate_ack -1: none yet */
	int64_t granted;		/* the last visit grant sent, -1: none */
	int64_t rate_granted;		/* the last rate grant sent, -1: none */
	struct ring vmax, rmax;		/* the largest of each over the window */
};

/* One (app, point). */
struct entry {
	struct entry *next;		/* its hash chain */
	uint64_t hash;
	char g[SDS_NAME_MAX + 1], a[SDS_NAME_MAX + 1], p[SDS_NAME_MAX + 1];
	struct host *h;			/* @n used of @cap, in arrival order */
	int n, cap;
};

/* One point's cluster fields. */
struct lim {
	char point[SDS_NAME_MAX + 1];
	int64_t visits, rate, bucket;	/* SDS_OFF where not set */
};

/* One app's limits, as last read. */
struct app {
	struct app *next;		/* its hash chain */
	uint64_t hash;
	char g[SDS_NAME_MAX + 1], a[SDS_NAME_MAX + 1];
	int64_t read_ms;		/* when the route read them */
	int64_t asked_ms;		/* when a report last used them */
	struct lim *lim;		/* @n, sorted by point (the strategies' order) */
	int n;
};

struct cluster {
	pthread_mutex_t lock;		/* guards everything below but @reports */
	struct entry *ent[NBUCKETS];
	int nent;			/* entries */
	long nrec;			/* host records over every entry */
	struct app *app[NBUCKETS];
	int napp;
	int64_t swept_ms;		/* the last sweep */
	int64_t *demand, *target;	/* fill's arrays, @scap each */
	int *scratch, *live;
	int scap;
	atomic_ullong reports;		/* reports answered */
};

/* ---- the arithmetic --------------------------------------------------- */

int64_t cluster_demand(int64_t wants)
{
	if (wants < 0)
		wants = 0;
	return wants + wants / 8 + 16;
}

static int by_demand(const void *x, const void *y, void *arg)
{
	const int64_t *d = arg;
	int i = *(const int *)x, j = *(const int *)y;

	if (d[i] != d[j])
		return d[i] < d[j] ? -1 : 1;
	return i - j;
}

void cluster_fill(const int64_t *demand, int n, int64_t limit, int64_t *target,
		  int *scratch)
{
	int64_t sum = 0, left, base, rem;
	int i, pos, k;

	if (n <= 0)
		return;
	if (limit < 0)
		limit = 0;
	for (i = 0; i < n; i++)
		sum += demand[i];
	if (sum <= limit) {
		base = (limit - sum) / n;
		rem = (limit - sum) % n;
		for (i = 0; i < n; i++)
			target[i] = demand[i] + base + (i < rem);
		return;
	}
	for (i = 0; i < n; i++)
		scratch[i] = i;
	qsort_r(scratch, n, sizeof(*scratch), by_demand, (void *)demand);
	left = limit;
	k = n;
	for (pos = 0; pos < n; pos++) {
		i = scratch[pos];
		if (demand[i] > left / k)
			break;
		target[i] = demand[i];
		left -= demand[i];
		k--;
	}
	/* The rest (k of them) split what is left, the remainder by index. */
	base = left / k;
	rem = left % k;
	for (; pos < n; pos++)
		target[scratch[pos]] = -1;
	for (i = 0; i < n; i++) {
		if (target[i] != -1)
			continue;
		target[i] = base + (rem > 0);
		if (rem > 0)
			rem--;
	}
}

int64_t cluster_grant(int64_t limit, int64_t target, int64_t taken_others,
		      int64_t used)
{
	int64_t g = limit - taken_others;

	if (target < g)
		g = target;
	if (g < used)
		g = used;
	if (g > limit)
		g = limit;
	return g < 0 ? 0 : g;
}

int64_t cluster_bucket(int64_t bucket, int64_t rate, int64_t g)
{
	int64_t b;

	if (g <= 0 || rate <= 0)
		return 0;
	/* bucket, rate <= 1e9 (common/strategy.c): the product fits. */
	b = bucket * g / rate;
	return b < 1 ? 1 : b;
}

int64_t cluster_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- rings, hashes ------------------------------------------------------ */

static void ring_init(struct ring *r)
{
	for (int i = 0; i < RING; i++) {
		r->sec[i] = NEVER;
		r->max[i] = 0;
	}
}

static void ring_put(struct ring *r, int64_t now_ms, int64_t v)
{
	int64_t sec = now_ms / 1000;
	int i = (int)(((sec % RING) + RING) % RING);

	if (r->sec[i] != sec) {
		r->sec[i] = sec;
		r->max[i] = v;
	} else if (v > r->max[i]) {
		r->max[i] = v;
	}
}

/* The largest value put in the last 10 s (the current second and ten before). */
static int64_t ring_max(const struct ring *r, int64_t now_ms)
{
	int64_t sec = now_ms / 1000, m = 0;

	for (int i = 0; i < RING; i++)
		if (r->sec[i] >= sec - (RING - 1) && r->sec[i] <= sec && r->max[i] > m)
			m = r->max[i];
	return m;
}

static uint64_t fnv(uint64_t h, const char *s)
{
	do {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	} while (*s++);
	return h;
}

static uint64_t key(const char *g, const char *a, const char *p)
{
	uint64_t h = fnv(fnv(0xcbf29ce484222325ULL, g), a);

	return p ? fnv(h, p) : h;
}

/* ---- the table ---------------------------------------------------------- */

struct cluster *cluster_open(void)
{
	struct cluster *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->swept_ms = NEVER;
	return c;
}

static void app_free(struct app *ap)
{
	free(ap->lim);
	free(ap);
}

static void entry_free(struct entry *e)
{
	for (int i = 0; i < e->n; i++)
		free(e->h[i].name);
	free(e->h);
	free(e);
}

void cluster_close(struct cluster *c)
{
	if (!c)
		return;
	for (int b = 0; b < NBUCKETS; b++) {
		while (c->ent[b]) {
			struct entry *e = c->ent[b];

			c->ent[b] = e->next;
			entry_free(e);
		}
		while (c->app[b]) {
			struct app *ap = c->app[b];

			c->app[b] = ap->next;
			app_free(ap);
		}
	}
	free(c->demand);
	free(c->target);
	free(c->scratch);
	free(c->live);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static struct app **app_slot(struct cluster *c, const char *g, const char *a)
{
	uint64_t h = key(g, a, NULL);
	struct app **pp = &c->app[h % NBUCKETS];

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->hash == h && !strcmp((*pp)->g, g) && !strcmp((*pp)->a, a))
			break;
	return pp;
}

static struct entry **entry_slot(struct cluster *c, const char *g, const char *a,
				 const char *p)
{
	uint64_t h = key(g, a, p);
	struct entry **pp = &c->ent[h % NBUCKETS];

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->hash == h && !strcmp((*pp)->p, p) && !strcmp((*pp)->g, g) &&
		    !strcmp((*pp)->a, a))
			break;
	return pp;
}

static struct host *host_find(struct entry *e, const char *name)
{
	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->h[i].name, name))
			return &e->h[i];
	return NULL;
}

static void host_remove(struct cluster *c, struct entry *e, int i)
{
	free(e->h[i].name);
	/* Kept in arrival order: the remainder of a split goes by it. */
	memmove(&e->h[i], &e->h[i + 1], (size_t)(e->n - i - 1) * sizeof(e->h[0]));
	e->n--;
	c->nrec--;
}

/* Free the records of @e older than KEEP_MS. */
static void entry_purge(struct cluster *c, struct entry *e, int64_t now_ms)
{
	for (int i = e->n - 1; i >= 0; i--)
		if (now_ms - e->h[i].seen_ms >= KEEP_MS)
			host_remove(c, e, i);
}

static bool is_live(const struct host *h, int64_t now_ms)
{
	return now_ms - h->seen_ms < CLUSTER_LEASE_MS;
}

/* Purge every entry, free the empty ones and the apps nobody asks for. */
static void sweep(struct cluster *c, int64_t now_ms)
{
	c->swept_ms = now_ms;
	for (int b = 0; b < NBUCKETS; b++) {
		struct entry **pp = &c->ent[b];

		while (*pp) {
			struct entry *e = *pp;

			entry_purge(c, e, now_ms);
			if (e->n) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			entry_free(e);
			c->nent--;
		}
		struct app **ap = &c->app[b];

		while (*ap) {
			struct app *x = *ap;

			if (now_ms - x->asked_ms < APP_KEEP_MS &&
			    now_ms - x->read_ms < APP_KEEP_MS) {
				ap = &x->next;
				continue;
			}
			*ap = x->next;
			app_free(x);
			c->napp--;
		}
	}
}

/* ---- limits ------------------------------------------------------------- */

bool cluster__limits_fresh(struct cluster *c, const char *g, const char *a,
			   int64_t now_ms)
{
	struct app *ap;
	bool fresh;

	pthread_mutex_lock(&c->lock);
	ap = *app_slot(c, g, a);
	fresh = ap && now_ms - ap->read_ms < CLUSTER_CACHE_MS && now_ms >= ap->read_ms;
	pthread_mutex_unlock(&c->lock);
	return fresh;
}

static int lim_sort(const void *x, const void *y)
{
	return strcmp(((const struct lim *)x)->point, ((const struct lim *)y)->point);
}

int cluster__limits_set(struct cluster *c, const char *g, const char *a,
			const struct sds_strategies *ss, int64_t now_ms)
{
	struct lim *lim = NULL;
	struct app **pp, *ap;
	int n = 0, i;

	for (i = 0; i < ss->n; i++)
		n += strategy_is_cluster(&ss->s[i]);
	if (n) {
		lim = calloc((size_t)n, sizeof(*lim));
		if (!lim)
			return -1;
	}
	for (i = 0, n = 0; i < ss->n; i++) {
		const struct sds_strategy *s = &ss->s[i];

		if (!strategy_is_cluster(s))
			continue;
		snprintf(lim[n].point, sizeof(lim[n].point), "%s", s->point);
		lim[n].visits = s->cluster_visit_threshold;
		lim[n].rate = s->cluster_token_rate > 0 ? s->cluster_token_rate : SDS_OFF;
		lim[n].bucket = s->cluster_token_bucket > 0 ? s->cluster_token_bucket :
				lim[n].rate;
		n++;
	}
	/* By strcmp, for bsearch (a store may collate otherwise). */
	if (n > 1)
		qsort(lim, (size_t)n, sizeof(*lim), lim_sort);
	pthread_mutex_lock(&c->lock);
	pp = app_slot(c, g, a);
	ap = *pp;
	if (!ap) {
		if (c->napp >= CLUSTER_MAX_ENTRIES) {
			/* Full: the app read longest ago makes room. */
			struct app **old = NULL;

			for (int b = 0; b < NBUCKETS; b++)
				for (struct app **q = &c->app[b]; *q; q = &(*q)->next)
					if (!old || (*q)->read_ms < (*old)->read_ms)
						old = q;
			ap = *old;
			*old = ap->next;
			app_free(ap);
			c->napp--;
			pp = app_slot(c, g, a);
		}
		ap = calloc(1, sizeof(*ap));
		if (!ap) {
			pthread_mutex_unlock(&c->lock);
			free(lim);
			return -1;
		}
		ap->hash = key(g, a, NULL);
		snprintf(ap->g, sizeof(ap->g), "%s", g);
		snprintf(ap->a, sizeof(ap->a), "%s", a);
		ap->asked_ms = now_ms;
		*pp = ap;
		c->napp++;
	}
	free(ap->lim);
	ap->lim = lim;
	ap->n = n;
	ap->read_ms = now_ms;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void cluster__limits_drop(struct cluster *c, const char *g, const char *a)
{
	struct app **pp, *ap;

	pthread_mutex_lock(&c->lock);
	pp = app_slot(c, g, a);
	ap = *pp;
	if (ap) {
		*pp = ap->next;
		app_free(ap);
		c->napp--;
	}
	pthread_mutex_unlock(&c->lock);
}

static int lim_cmp(const void *k, const void *x)
{
	return strcmp(k, ((const struct lim *)x)->point);
}

static const struct lim *lim_find(const struct app *ap, const char *point)
{
	if (!ap || !ap->n)
		return NULL;
	return bsearch(point, ap->lim, (size_t)ap->n, sizeof(*ap->lim), lim_cmp);
}

/* ---- a report ------------------------------------------------------------ */

static int scratch_grow(struct cluster *c, int n)
{
	int cap = c->scap ? c->scap : 64;
	void *d, *t, *s, *l;

	if (n <= c->scap)
		return 0;
	while (cap < n)
		cap *= 2;
	d = realloc(c->demand, (size_t)cap * sizeof(*c->demand));
	if (d)
		c->demand = d;
	t = realloc(c->target, (size_t)cap * sizeof(*c->target));
	if (t)
		c->target = t;
	s = realloc(c->scratch, (size_t)cap * sizeof(*c->scratch));
	if (s)
		c->scratch = s;
	l = realloc(c->live, (size_t)cap * sizeof(*c->live));
	if (l)
		c->live = l;
	if (!d || !t || !s || !l)
		return -ENOMEM;
	c->scap = cap;
	return 0;
}

static int64_t max3(int64_t x, int64_t y, int64_t z)
{
	int64_t m = x > y ? x : y;

	return m > z ? m : z;
}

/*
 * Admit @host to @e if it is new: a record freed by purge first, else a
 * host not live makes room.  The report is refused (-ENOSPC) otherwise.
 */
static int admit(struct cluster *c, struct entry *e, const char *host,
		 int64_t now_ms, int *new_records)
{
	if (e && host_find(e, host))
		return 0;
	if (c->nrec + *new_records >= CLUSTER_MAX_RECORDS)
		return -ENOSPC;
	if (e && e->n >= CLUSTER_MAX_HOSTS) {
		entry_purge(c, e, now_ms);
		for (int i = 0; e->n >= CLUSTER_MAX_HOSTS && i < e->n; i++)
			if (!is_live(&e->h[i], now_ms)) {
				host_remove(c, e, i);
				break;
			}
		if (e->n >= CLUSTER_MAX_HOSTS)
			return -ENOSPC;
	}
	(*new_records)++;
	return 0;
}

/* One point of the report, admitted: its grants into @pt; the live hosts. */
static int allot(struct cluster *c, struct entry *e, const struct lim *l,
		 const char *host, int64_t now_ms, struct cluster_point *pt)
{
	struct host *me = host_find(e, host);
	int64_t vcap, rcap, taken;
	int i, n = 0, self = -1;

	if (!me) {
		if (e->n == e->cap) {
			int cap = e->cap ? e->cap * 2 : 4;
			struct host *h = realloc(e->h, (size_t)cap * sizeof(*h));

			if (!h)
				return -ENOMEM;
			e->h = h;
			e->cap = cap;
		}
		me = &e->h[e->n];
		memset(me, 0, sizeof(*me));
		me->name = strdup(host);
		if (!me->name)
			return -ENOMEM;
		me->granted = me->rate_granted = SDS_OFF;
		ring_init(&me->vmax);
		ring_init(&me->rmax);
		e->n++;
		c->nrec++;
	}
	if (scratch_grow(c, e->n))
		return -ENOMEM;
	/* Nobody blocks more than it was given in the window. */
	vcap = ring_max(&me->vmax, now_ms);
	rcap = ring_max(&me->rmax, now_ms);
	me->seen_ms = now_ms;
	me->used = pt->used < vcap ? pt->used : vcap;
	me->ack = pt->ack < 0 ? SDS_OFF : pt->ack < vcap ? pt->ack : vcap;
	me->wants = pt->wants;
	me->rate_wants = pt->rate_wants;
	me->rate_ack = pt->rate_ack < 0 ? SDS_OFF : pt->rate_ack < rcap ? pt->rate_ack : rcap;
	for (i = 0; i < e->n; i++) {
		if (!is_live(&e->h[i], now_ms))
			continue;
		if (&e->h[i] == me)
			self = n;
		c->live[n++] = i;
	}
	pt->visits = pt->token_rate = pt->token_bucket = SDS_OFF;
	if (l->visits >= 0) {
		taken = 0;
		for (i = 0; i < n; i++) {
			const struct host *h = &e->h[c->live[i]];

			c->demand[i] = cluster_demand(h->wants);
			if (i != self)
				taken += max3(h->ack, h->granted, h->used);
		}
		cluster_fill(c->demand, n, l->visits, c->target, c->scratch);
		pt->visits = cluster_grant(l->visits, c->target[self], taken, me->used);
		me->granted = pt->visits;
		ring_put(&me->vmax, now_ms, pt->visits);
	}
	if (l->rate > 0) {
		taken = 0;
		for (i = 0; i < n; i++) {
			const struct host *h = &e->h[c->live[i]];

			c->demand[i] = cluster_demand(h->rate_wants);
			if (i != self)
				taken += max3(h->rate_ack, h->rate_granted, 0);
		}
		cluster_fill(c->demand, n, l->rate, c->target, c->scratch);
		pt->token_rate = cluster_grant(l->rate, c->target[self], taken, 0);
		pt->token_bucket = cluster_bucket(l->bucket, l->rate, pt->token_rate);
		me->rate_granted = pt->token_rate;
		ring_put(&me->rmax, now_ms, pt->token_rate);
	}
	return n;
}

int cluster__report(struct cluster *c, const char *g, const char *a,
		    const char *host, int64_t now_ms, struct cluster_point *pts,
		    int n, int *hosts)
{
	int new_entries = 0, new_records = 0, live, i, rc = 0;
	struct app *ap;

	*hosts = 1;
	pthread_mutex_lock(&c->lock);
	if (now_ms - c->swept_ms >= SWEEP_MS)
		sweep(c, now_ms);
	ap = *app_slot(c, g, a);
	if (ap)
		ap->asked_ms = now_ms;
	/* All or nothing: every bound checked before a record changes. */
	for (i = 0; i < n; i++) {
		struct entry *e;

		pts[i].visits = pts[i].token_rate = pts[i].token_bucket = SDS_OFF;
		if (!lim_find(ap, pts[i].point))
			continue;
		e = *entry_slot(c, g, a, pts[i].point);
		if (!e && c->nent + new_entries++ >= CLUSTER_MAX_ENTRIES)
			rc = -ENOSPC;
		else
			rc = admit(c, e, host, now_ms, &new_records);
		if (rc)
			goto out;
	}
	for (i = 0; i < n; i++) {
		const struct lim *l = lim_find(ap, pts[i].point);
		struct entry **pp, *e;

		if (!l)
			continue;
		pp = entry_slot(c, g, a, pts[i].point);
		e = *pp;
		if (!e) {
			e = calloc(1, sizeof(*e));
			if (!e) {
				rc = -ENOMEM;
				goto out;
			}
			e->hash = key(g, a, pts[i].point);
			snprintf(e->g, sizeof(e->g), "%s", g);
			snprintf(e->a, sizeof(e->a), "%s", a);
			snprintf(e->p, sizeof(e->p), "%s", pts[i].point);
			*pp = e;
			c->nent++;
		}
		live = allot(c, e, l, host, now_ms, &pts[i]);
		if (live < 0) {
			rc = live;
			goto out;
		}
		if (live > *hosts)
			*hosts = live;
	}
	atomic_fetch_add(&c->reports, 1);
out:
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void cluster__metrics_write(struct cluster *c, int64_t now_ms, FILE *f)
{
	unsigned long long live = 0;

	pthread_mutex_lock(&c->lock);
	for (int b = 0; b < NBUCKETS; b++)
		for (struct entry *e = c->ent[b]; e; e = e->next)
			for (int i = 0; i < e->n; i++)
				live += is_live(&e->h[i], now_ms);
	pthread_mutex_unlock(&c->lock);
	fprintf(f, "# HELP sds_admin_cluster_reports_total Cluster share reports answered (POST /api/v1/shares).\n"
		   "# TYPE sds_admin_cluster_reports_total counter\n"
		   "sds_admin_cluster_reports_total %llu\n"
		   "# HELP sds_admin_cluster_hosts Live hosts of the cluster limits, over every (app, point) tracked.\n"
		   "# TYPE sds_admin_cluster_hosts gauge\n"
		   "sds_admin_cluster_hosts %llu\n",
		(unsigned long long)atomic_load(&c->reports), live);
}

json_t *cluster__shares_json(struct cluster *c, const char *g, const char *a,
			     int64_t now_ms)
{
	json_t *out = json_object();

	if (!out)
		return NULL;
	pthread_mutex_lock(&c->lock);
	for (int b = 0; b < NBUCKETS; b++)
		for (struct entry *e = c->ent[b]; e; e = e->next) {
			if (strcmp(e->g, g) || strcmp(e->a, a))
				continue;
			for (int i = 0; i < e->n; i++) {
				const struct host *h = &e->h[i];
				json_t *hp = json_object_get(out, h->name);

				if (!hp) {
					hp = json_object();
					json_object_set_new(out, h->name, hp);
				}
				json_object_set_new(hp, e->p, json_pack(
					"{s:I, s:I, s:b}",
					"visits", (json_int_t)h->granted,
					"token_rate", (json_int_t)h->rate_granted,
					"live", is_live(h, now_ms)));
			}
		}
	pthread_mutex_unlock(&c->lock);
	return out;
}
