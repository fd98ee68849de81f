// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * watch.c - the push channel's admin side (issue 32): per-app change
 * sequences, the watches suspended on them, the timer that answers those
 * whose wait passed, the limits.
 *
 * One mutex holds it all: the hash table of apps (each with its sequence
 * and its waiters, doubly linked), the heap of waiters by deadline, the
 * address buckets.  A waiter is suspended (MHD_suspend_connection) and
 * resumed (MHD_resume_connection) with the mutex held, so a change can
 * never resume a connection before it is suspended (which libmicrohttpd
 * would turn into a connection never answered).  libmicrohttpd calls the
 * handler again after the resume; the answer is the waiter's.
 *
 * Memory is bounded: an app enters the table when a watch names an app
 * the store has (never for a name it does not), a waiter is a small
 * struct, at most --max-watchers of them, the buckets a fixed table.
 */
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include "admin.h"
#include "names.h"
#include "watch.h"

#define KEY_MAX		(2 * ADMIN_NAME_MAX + 2)	/* "G/A" */
#define BUCKETS		4096	/* address buckets, a power of two */
#define PROBE		8	/* slots an address may take */
#define FDS_SPARE	64	/* descriptors beside connections: store, files */
#define SEQ_SPAN	((1ULL << 52) - 1)	/* a new app's sequence: 1..2^52-1 */

struct watch_app {
	struct watch_app *next;		/* the hash chain */
	struct watch_waiter *waiters;	/* waiting on it, doubly linked */
	uint64_t seq;			/* its change sequence */
	bool verified;			/* the store said it exists, and no delete since */
	char key[KEY_MAX];		/* "G/A" */
};

enum watch_how {
	WATCH_WAITING,			/* suspended */
	WATCH_CHANGED,			/* resumed by a change */
	WATCH_TIMEOUT,			/* resumed when its wait passed */
	WATCH_CLOSING,			/* resumed by the admin stopping */
};

struct watch_waiter {
	struct watch_app *app;		/* while waiting */
	struct watch_waiter *prev, *next;	/* the app's waiters */
	struct MHD_Connection *conn;	/* suspended */
	uint64_t seq;			/* the sequence it asked with */
	uint64_t answer;		/* the sequence to answer, once resumed */
	int64_t deadline;		/* CLOCK_MONOTONIC ms */
	size_t heap;			/* its index in watch.heap */
	enum watch_how how;		/* why it was resumed */
};

/* A token bucket of one client address (IPv4 as v4-mapped IPv6). */
struct watch_bucket {
	unsigned char addr[16];
	bool used;
	double tokens;			/* requests it may make now */
	int64_t last;			/* CLOCK_MONOTONIC ms of the last refill */
};

struct watch {
	pthread_mutex_t mu;		/* everything below */
	pthread_cond_t cv;		/* the timer's: a new first deadline, or stop */
	pthread_t timer;		/* answers the waiters whose wait passed */
	bool timer_up;			/* @timer runs */
	bool stop;			/* @timer: end */
	bool closing;			/* shutting down: every watch answered at once */
	unsigned max;			/* waiters at most */
	struct watch_app **tab;		/* the apps, by hash of their key */
	size_t ntab, napps;		/* its slots (a power of two), its entries */
	struct watch_waiter **heap;	/* the waiters, earliest deadline first */
	size_t nheap, capheap;		/* its entries, its room */
	struct watch_bucket buckets[BUCKETS];	/* per address */
	uint64_t rng;			/* xorshift64*, for new apps' sequences */
	unsigned long long wakes, timeouts, refused_limit, refused_rate;
	unsigned long long listener_breaks;	/* the store's listener broke */
	bool listener_said;		/* ... and that was said */
	int64_t notify_said;		/* a failed notify was said (CLOCK_MONOTONIC s) */
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

static uint64_t rng_next(struct watch *w)
{
	uint64_t x = w->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	w->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* ---- the apps -------------------------------------------------------------- */

static void tab_grow(struct watch *w)
{
	size_t n = w->ntab * 2, i;
	struct watch_app **t = calloc(n, sizeof(*t)), *e, *next;

	if (!t)
		return;		/* longer chains, still correct */
	for (i = 0; i < w->ntab; i++)
		for (e = w->tab[i]; e; e = next) {
			size_t h = fnv(e->key, strlen(e->key)) & (n - 1);

			next = e->next;
			e->next = t[h];
			t[h] = e;
		}
	free(w->tab);
	w->tab = t;
	w->ntab = n;
}

/* The entry of @key; with @create, made if missing (NULL if out of memory). */
static struct watch_app *app_find(struct watch *w, const char *key, bool create)
{
	size_t h = fnv(key, strlen(key)) & (w->ntab - 1);
	struct watch_app *e;

	for (e = w->tab[h]; e; e = e->next)
		if (!strcmp(e->key, key))
			return e;
	if (!create)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	snprintf(e->key, sizeof(e->key), "%s", key);
	/* Random per app and process: a sequence an earlier admin gave never matches. */
	e->seq = 1 + rng_next(w) % SEQ_SPAN;
	e->next = w->tab[h];
	w->tab[h] = e;
	if (++w->napps > 2 * w->ntab)
		tab_grow(w);
	return e;
}

/* ---- the heap of deadlines ------------------------------------------------- */

static void heap_set(struct watch *w, size_t i, struct watch_waiter *x)
{
	w->heap[i] = x;
	x->heap = i;
}

static void sift_up(struct watch *w, size_t i)
{
	struct watch_waiter *x = w->heap[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (w->heap[p]->deadline <= x->deadline)
			break;
		heap_set(w, i, w->heap[p]);
		i = p;
	}
	heap_set(w, i, x);
}

static void sift_down(struct watch *w, size_t i)
{
	struct watch_waiter *x = w->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= w->nheap)
			break;
		if (c + 1 < w->nheap && w->heap[c + 1]->deadline < w->heap[c]->deadline)
			c++;
		if (w->heap[c]->deadline >= x->deadline)
			break;
		heap_set(w, i, w->heap[c]);
		i = c;
	}
	heap_set(w, i, x);
}

static int heap_push(struct watch *w, struct watch_waiter *x)
{
	if (w->nheap == w->capheap) {
		size_t n = w->capheap ? 2 * w->capheap : 64;
		struct watch_waiter **h = realloc(w->heap, n * sizeof(*h));

		if (!h)
			return -1;
		w->heap = h;
		w->capheap = n;
	}
	heap_set(w, w->nheap++, x);
	sift_up(w, w->nheap - 1);
	return 0;
}

static void heap_del(struct watch *w, struct watch_waiter *x)
{
	size_t i = x->heap;
	struct watch_waiter *last = w->heap[--w->nheap];

	if (i == w->nheap)
		return;
	heap_set(w, i, last);
	sift_up(w, i);
	sift_down(w, last->heap);
}

/* ---- waiters --------------------------------------------------------------- */

static void unlink_waiter(struct watch *w, struct watch_waiter *x)
{
	if (x->prev)
		x->prev->next = x->next;
	else
		x->app->waiters = x->next;
	if (x->next)
		x->next->prev = x->prev;
	x->app = NULL;
	heap_del(w, x);
}

/* Resume @x to answer @seq; the mutex held.  @x is the connection's from here. */
static void answer(struct watch *w, struct watch_waiter *x, enum watch_how how,
		   uint64_t seq)
{
	unlink_waiter(w, x);
	x->how = how;
	x->answer = seq;
	if (how == WATCH_CHANGED)
		w->wakes++;
	else if (how == WATCH_TIMEOUT)
		w->timeouts++;
	MHD_resume_connection(x->conn);
}

static void *timer_main(void *arg)
{
	struct watch *w = arg;

	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		int64_t now = now_ms(), first;
		struct timespec ts;

		if (!w->nheap) {
			pthread_cond_wait(&w->cv, &w->mu);
			continue;
		}
		first = w->heap[0]->deadline;
		if (first > now) {
			ts.tv_sec = first / 1000;
			ts.tv_nsec = (first % 1000) * 1000000;
			pthread_cond_timedwait(&w->cv, &w->mu, &ts);
			continue;
		}
		while (w->nheap && w->heap[0]->deadline <= now)
			answer(w, w->heap[0], WATCH_TIMEOUT, w->heap[0]->seq);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* ---- limits ---------------------------------------------------------------- */

unsigned watch_fit(unsigned want, char *msg, size_t msglen)
{
	rlim_t need = (rlim_t)want + WATCH_OTHER_CONNS + FDS_SPARE;
	struct rlimit rl;
	rlim_t fit;

	msg[0] = '\0';
	if (!want || getrlimit(RLIMIT_NOFILE, &rl))
		return want;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ?
			      need : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return want;
	fit = rl.rlim_cur > WATCH_OTHER_CONNS + FDS_SPARE ?
	      rl.rlim_cur - WATCH_OTHER_CONNS - FDS_SPARE : 0;
	snprintf(msg, msglen, "--max-watchers %u: the open files limit (%llu) fits %llu watchers beside %d other connections: taking %llu",
		 want, (unsigned long long)rl.rlim_cur, (unsigned long long)fit,
		 WATCH_OTHER_CONNS, (unsigned long long)fit);
	return (unsigned)fit;
}

/* Take a request from @addr's bucket at @now: false when it has none. */
static bool bucket_take(struct watch *w, const unsigned char addr[16], int64_t now)
{
	size_t h = fnv(addr, 16), i;
	struct watch_bucket *b = NULL, *oldest = NULL;

	for (i = 0; i < PROBE; i++) {
		struct watch_bucket *c = &w->buckets[(h + i) & (BUCKETS - 1)];

		if (c->used && !memcmp(c->addr, addr, 16)) {
			b = c;
			break;
		}
	}
	if (!b) {
		/* A free slot, one refilled to the brim (as good as new), else the stalest. */
		for (i = 0; i < PROBE && !b; i++) {
			struct watch_bucket *c = &w->buckets[(h + i) & (BUCKETS - 1)];

			if (!c->used ||
			    c->tokens + (now - c->last) * WATCH_REFILL / 1000.0 >= WATCH_BURST)
				b = c;
			else if (!oldest || c->last < oldest->last)
				oldest = c;
		}
		if (!b)
			b = oldest;
		memcpy(b->addr, addr, 16);
		b->used = true;
		b->tokens = WATCH_BURST;
		b->last = now;
	}
	b->tokens += (now - b->last) * WATCH_REFILL / 1000.0;
	if (b->tokens > WATCH_BURST)
		b->tokens = WATCH_BURST;
	b->last = now;
	if (b->tokens < 1)
		return false;
	b->tokens -= 1;
	return true;
}

static void client_addr(struct MHD_Connection *c, unsigned char addr[16])
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	memset(addr, 0, 16);
	if (sa && sa->sa_family == AF_INET) {
		addr[10] = addr[11] = 0xff;
		memcpy(addr + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		memcpy(addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

/* ---- the table ------------------------------------------------------------- */

struct watch *watch_new(unsigned max)
{
	struct watch *w = calloc(1, sizeof(*w));
	pthread_condattr_t ca;

	if (!w)
		return NULL;
	w->max = max;
	w->ntab = 1024;
	w->tab = calloc(w->ntab, sizeof(*w->tab));
	if (!w->tab || getrandom(&w->rng, sizeof(w->rng), 0) != sizeof(w->rng)) {
		/* No entropy: the clock's nanoseconds still differ per process. */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		w->rng = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ts.tv_sec;
	}
	if (!w->rng)
		w->rng = 0x9e3779b97f4a7c15ULL;
	if (!w->tab) {
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (max && !pthread_create(&w->timer, NULL, timer_main, w))
		w->timer_up = true;
	if (max && !w->timer_up)
		w->max = 0;	/* no timer, no waiting: said by every watch's 503 */
	return w;
}

unsigned watch__max(const struct watch *w)
{
	return w->max;
}

void watch__shutdown(struct watch *w)
{
	pthread_mutex_lock(&w->mu);
	w->closing = true;
	while (w->nheap)
		answer(w, w->heap[0], WATCH_CLOSING, w->heap[0]->seq);
	w->stop = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (w->timer_up) {
		pthread_join(w->timer, NULL);
		w->timer_up = false;
	}
}

void watch_free(struct watch *w)
{
	size_t i;

	if (!w)
		return;
	watch__shutdown(w);
	for (i = 0; i < w->ntab; i++) {
		struct watch_app *e = w->tab[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(w->tab);
	free(w->heap);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

/* ---- requests -------------------------------------------------------------- */

static bool fail(struct api_resp *rs, int status, int retry, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool fail(struct api_resp *rs, int status, int retry, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rs->status = status;
	rs->body = json_pack("{s:s}", "error", msg);
	rs->retry_after = retry;
	return true;
}

static bool reply_seq(struct api_resp *rs, uint64_t seq)
{
	rs->status = 200;
	rs->body = json_pack("{s:I}", "seq", (json_int_t)seq);
	return true;
}

/* A decimal query argument in [lo, hi]; @def when absent; false if malformed. */
static bool arg_num(const char *v, uint64_t lo, uint64_t hi, uint64_t def, uint64_t *out,
		    bool *given)
{
	uint64_t x = 0;
	const char *p;

	*given = v && *v;
	if (!*given) {
		*out = def;
		return true;
	}
	for (p = v; *p; p++) {
		if (*p < '0' || *p > '9' || p - v >= 16)
			return false;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (x < lo || x > hi)
		return false;
	*out = x;
	return true;
}

bool watch__serve(struct watch *w, struct admin *ad, struct MHD_Connection *c,
		  const struct admin_token *tok, struct api_resp *rs,
		  struct watch_waiter **wt)
{
	const char *g = http_query(c, "group"), *a = http_query(c, "app");
	uint64_t seq, wait;
	bool has_seq, has_wait, ok, verified;
	unsigned char addr[16];
	char key[KEY_MAX], err[STORE_ERR_MAX];
	struct watch_waiter *x;
	struct watch_app *e;
	int64_t now = now_ms();
	json_t *doc = NULL;
	int rc;

	*wt = NULL;
	if (!w->max) {
		pthread_mutex_lock(&w->mu);
		w->refused_limit++;
		pthread_mutex_unlock(&w->mu);
		return fail(rs, 503, WATCH_RETRY_OFF,
			    "the push channel is off here (--max-watchers 0): heartbeats carry every change");
	}
	client_addr(c, addr);
	pthread_mutex_lock(&w->mu);
	ok = bucket_take(w, addr, now);
	if (!ok)
		w->refused_rate++;
	pthread_mutex_unlock(&w->mu);
	if (!ok)
		return fail(rs, 429, WATCH_RETRY_RATE,
			    "too many watch requests from this address: %d at once, %d a second after",
			    WATCH_BURST, WATCH_REFILL);
	if (!g || !*g || !a || !*a)
		return fail(rs, 400, 0, "%s: missing (watch?group=G&app=A[&seq=S][&wait=W])",
			    !g || !*g ? "group" : "app");
	if (!sds_name_valid(g) || !sds_name_valid(a))
		return fail(rs, 400, 0, "%s: bad name (1-64 of [A-Za-z0-9_-])",
			    !sds_name_valid(g) ? "group" : "app");
	if (!arg_num(http_query(c, "seq"), 0, (1ULL << 53) - 1, 0, &seq, &has_seq))
		return fail(rs, 400, 0, "seq must be an integer 0..2^53-1");
	if (!arg_num(http_query(c, "wait"), 1, WATCH_WAIT_MAX, WATCH_WAIT_DEFAULT, &wait,
		     &has_wait))
		return fail(rs, 400, 0, "wait must be an integer 1..%d (seconds)", WATCH_WAIT_MAX);
	if (tok && !auth_in_scope(tok, g, a)) {
		char scope[2 * ADMIN_NAME_MAX + 2], more[4 * ADMIN_NAME_MAX + 64];

		auth_scope_name(tok, scope, sizeof(scope));
		snprintf(more, sizeof(more), "for %s/%s (scope %s)", g, a, scope);
		auth_audit_denied_app(ad, tok, "GET", "/api/v1/watch", g, a, more);
		return fail(rs, 403, 0, "this heartbeat token is for %s only: %s/%s is outside it",
			    scope, g, a);
	}
	snprintf(key, sizeof(key), "%s/%s", g, a);

	/* The store once per app (and after its delete): not at every watch. */
	pthread_mutex_lock(&w->mu);
	e = app_find(w, key, false);
	verified = e && e->verified;
	pthread_mutex_unlock(&w->mu);
	if (!verified) {
		rc = ad->store->ops->app_get(ad->store, g, a, &doc, err);
		json_decref(doc);
		if (rc == STORE_NOTFOUND)
			return fail(rs, 404, 0, "no app %s/%s", g, a);
		if (rc) {
			fprintf(stderr, "sds-admin: store: %s\n", err);
			return fail(rs, 500, 0, "storage error");
		}
	}

	pthread_mutex_lock(&w->mu);
	e = app_find(w, key, true);
	if (!e) {
		pthread_mutex_unlock(&w->mu);
		return fail(rs, 500, 0, "out of memory");
	}
	e->verified = true;
	if (w->closing || !has_seq || seq != e->seq) {
		seq = e->seq;
		pthread_mutex_unlock(&w->mu);
		return reply_seq(rs, seq);
	}
	if (w->nheap >= w->max) {
		w->refused_limit++;
		pthread_mutex_unlock(&w->mu);
		return fail(rs, 503, WATCH_RETRY_FULL,
			    "%u watch requests wait already (--max-watchers)", w->max);
	}
	x = calloc(1, sizeof(*x));
	if (x)
		x->deadline = now + (int64_t)wait * 1000;
	if (!x || heap_push(w, x)) {
		pthread_mutex_unlock(&w->mu);
		free(x);
		return fail(rs, 500, 0, "out of memory");
	}
	x->app = e;
	x->conn = c;
	x->seq = seq;
	x->how = WATCH_WAITING;
	x->next = e->waiters;
	if (e->waiters)
		e->waiters->prev = x;
	e->waiters = x;
	if (x->heap == 0)
		pthread_cond_signal(&w->cv);
	MHD_suspend_connection(c);
	pthread_mutex_unlock(&w->mu);
	*wt = x;
	return false;
}

void watch__resumed(struct watch *w, struct watch_waiter *x, struct api_resp *rs)
{
	uint64_t seq;

	pthread_mutex_lock(&w->mu);
	seq = x->answer;
	pthread_mutex_unlock(&w->mu);
	free(x);
	reply_seq(rs, seq);
}

void watch__forget(struct watch *w, struct watch_waiter *x)
{
	/*
	 * Resumed (the usual case): @x is off every list, and its resumer's
	 * writes reached this thread through libmicrohttpd's resume, so no
	 * lock is taken from libmicrohttpd's completion callback.
	 */
	if (x->how == WATCH_WAITING) {
		pthread_mutex_lock(&w->mu);
		unlink_waiter(w, x);
		pthread_mutex_unlock(&w->mu);
	}
	free(x);
}

/* @key changed; @gone: it was deleted, so the next watch asks the store. */
static void bump(struct watch *w, const char *key, bool gone)
{
	struct watch_app *e;

	pthread_mutex_lock(&w->mu);
	e = app_find(w, key, false);
	/* No entry: nobody holds a sequence of it. */
	if (e) {
		e->seq++;
		if (gone)
			e->verified = false;
		while (e->waiters)
			answer(w, e->waiters, WATCH_CHANGED, e->seq);
	}
	pthread_mutex_unlock(&w->mu);
}

void watch__bump(struct watch *w, const char *g, const char *a)
{
	char key[KEY_MAX];

	if (snprintf(key, sizeof(key), "%s/%s", g, a) < (int)sizeof(key))
		bump(w, key, false);
}

/* Copy the segment at @p (up to '/' or the end) into @out: its end, or NULL if no name. */
static const char *segment(const char *p, char out[ADMIN_NAME_MAX + 1])
{
	size_t n = strcspn(p, "/");

	if (!n || n > ADMIN_NAME_MAX)
		return NULL;
	memcpy(out, p, n);
	out[n] = '\0';
	return sds_name_valid(out) ? p + n : NULL;
}

void watch__wrote(struct watch *w, struct store *st, const char *method,
		  const char *path)
{
	char g[ADMIN_NAME_MAX + 1], a[ADMIN_NAME_MAX + 1], key[KEY_MAX], err[STORE_ERR_MAX];
	const char *p;

	if (!strcmp(method, "GET") || !strcmp(method, "HEAD") || strncmp(path, "groups/", 7))
		return;
	p = segment(path + 7, g);
	if (!p || strncmp(p, "/apps/", 6))
		return;
	p = segment(p + 6, a);
	if (!p)
		return;
	snprintf(key, sizeof(key), "%s/%s", g, a);
	bump(w, key, !strcmp(method, "DELETE") && (!*p || !strcmp(p, "/")));
	if (st->ops->changed && st->ops->changed(st, g, a, err)) {
		int64_t now = now_ms() / 1000;
		bool say;

		pthread_mutex_lock(&w->mu);
		say = !w->notify_said || now - w->notify_said >= 60;
		if (say)
			w->notify_said = now;
		pthread_mutex_unlock(&w->mu);
		/* The others' loaders still learn it by heartbeat. */
		if (say)
			fprintf(stderr, "sds-admin: push: telling the other admins of %s: %s\n",
				key, err);
	}
}

static void on_changed(void *ctx, const char *g, const char *a)
{
	watch__bump(ctx, g, a);
}

static void on_broken(void *ctx, const char *why)
{
	watch__listener_broke(ctx, why);
}

int watch__listen(struct watch *w, struct store *st, char *err)
{
	static const struct store_listener l = {
		.changed = on_changed, .broken = on_broken,
	};

	if (!st->ops->listen)
		return 0;
	return st->ops->listen(st, &l, w, err);
}

void watch__listener_broke(struct watch *w, const char *why)
{
	bool say;

	pthread_mutex_lock(&w->mu);
	w->listener_breaks++;
	say = !w->listener_said;
	w->listener_said = true;
	pthread_mutex_unlock(&w->mu);
	if (say)
		fprintf(stderr, "sds-admin: push: the store's listener for other admins' changes broke (%s): reconnecting; meanwhile heartbeats carry their changes\n",
			why);
}

void watch__metrics(struct watch *w, FILE *f)
{
	unsigned long long wakes, timeouts, limit, rate, breaks;
	size_t waiting;

	pthread_mutex_lock(&w->mu);
	waiting = w->nheap;
	wakes = w->wakes;
	timeouts = w->timeouts;
	limit = w->refused_limit;
	rate = w->refused_rate;
	breaks = w->listener_breaks;
	pthread_mutex_unlock(&w->mu);
	fprintf(f, "# HELP sds_admin_watchers Watch requests waiting for a change.\n"
		   "# TYPE sds_admin_watchers gauge\n"
		   "sds_admin_watchers %zu\n"
		   "# HELP sds_admin_watchers_max Watch requests that may wait at once (--max-watchers).\n"
		   "# TYPE sds_admin_watchers_max gauge\n"
		   "sds_admin_watchers_max %u\n"
		   "# HELP sds_admin_watch_wakes_total Waiting watch requests answered by a change.\n"
		   "# TYPE sds_admin_watch_wakes_total counter\n"
		   "sds_admin_watch_wakes_total %llu\n"
		   "# HELP sds_admin_watch_timeouts_total Waiting watch requests answered when their wait passed.\n"
		   "# TYPE sds_admin_watch_timeouts_total counter\n"
		   "sds_admin_watch_timeouts_total %llu\n"
		   "# HELP sds_admin_watch_refused_total Watch requests refused: over --max-watchers (limit), past an address's rate (rate).\n"
		   "# TYPE sds_admin_watch_refused_total counter\n"
		   "sds_admin_watch_refused_total{why=\"limit\"} %llu\n"
		   "sds_admin_watch_refused_total{why=\"rate\"} %llu\n"
		   "# HELP sds_admin_watch_listener_breaks_total Times the listener for other admins' changes lost its connection.\n"
		   "# TYPE sds_admin_watch_listener_breaks_total counter\n"
		   "sds_admin_watch_listener_breaks_total %llu\n",
		waiting, w->max, wakes, timeouts, limit, rate, breaks);
}
