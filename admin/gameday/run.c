// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * gameday/run.c - the game days' scheduler (docs/GAMEDAY.md): a thread of
 * the admin that ticks every --gameday-tick-ms, never in a request.  Each
 * tick the store opens the runs that are due and leases this admin the
 * open runs it may advance (store_ops.gameday_tick); each run's steps go
 * on from where its state says, as far as they can this tick, and the
 * state is saved.
 *
 * A step that starts or stops something is the API's own request, made
 * here (api_handle() with an operator's token of the scheduler's own):
 * the same checks, audit rows and push to the loaders as an operator's.
 * A run that ends (done, failed or aborted) stops every drill and copy
 * plan it started that is still in force: a game day leaves no fault
 * behind it.  Times are the admin's wall clock, in seconds with their
 * milliseconds.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "admin.h"
#include "watch.h"
#include "gameday/gameday.h"

struct gameday_runner {
	struct admin *ad;
	pthread_t thread;
	int tick_ms;
	bool stop;			/* under @mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char id[96];			/* this admin, as the runs' leases name it */
	struct admin_token tok;		/* the scheduler's requests' (an operator's) */
};

/* One run being advanced this tick. */
struct run {
	struct gameday_runner *gr;
	const char *g, *a, *name;
	int64_t id;
	json_t *steps;			/* the definition's */
	json_t *state;			/* the run's: {"step", "steps": [records], "error"} */
	char by[160];			/* "game day NAME run ID", for what it starts */
};

enum gameday_step_kind gameday_step_kind(const char *op)
{
	static const char *const names[] = {
		[GAMEDAY_DRILL] = "drill", [GAMEDAY_COPY] = "copy", [GAMEDAY_WAIT] = "wait",
		[GAMEDAY_SCHEME] = "scheme", [GAMEDAY_STOP] = "stop",
	};
	size_t i;

	for (i = 1; op && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(op, names[i]))
			return (enum gameday_step_kind)i;
	return GAMEDAY_NONE;
}

double gameday_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	/* Milliseconds: what a report says and a test compares. */
	return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000000) / 1e3;
}

/*
 * The API's request @method @rest (under groups/G/apps/A/) with @body
 * (stolen): its status, its answer into *@out (new reference, or NULL);
 * a write that succeeded wakes the app's watchers as any write does.
 */
static int call(struct run *r, const char *method, const char *rest, json_t *body,
		json_t **out)
{
	struct admin *ad = r->gr->ad;
	struct api_resp rs = { .status = 500 };
	char path[512], *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct api_req rq = {
		.method = method, .path = path, .body = text ? text : "",
		.len = text ? strlen(text) : 0, .tok = &r->gr->tok,
	};

	json_decref(body);
	snprintf(path, sizeof(path), "groups/%s/apps/%s/%s", r->g, r->a, rest);
	api_handle(ad, &rq, &rs);
	if (rs.status >= 200 && rs.status < 300 && strcmp(method, "GET") && ad->watch)
		watch__wrote(ad->watch, ad->store, method, path);
	free(text);
	*out = rs.body;
	return rs.status;
}

/* The error line of an answer, for a step's result. */
static const char *why(json_t *ans)
{
	const char *e = json_string_value(json_object_get(ans, "error"));

	return e ? e : "no answer";
}

static void set_num(json_t *o, const char *k, double v)
{
	json_object_set_new(o, k, json_real(v));
}

/* ---- the steps ------------------------------------------------------------- */

/* Started: 1; -1 with the step's failure in @msg. */
static int step_drill(struct run *r, json_t *step, json_t *rec, char *msg, size_t len)
{
	json_t *body = json_deep_copy(json_object_get(step, "drill")), *ans;
	int st;

	json_object_set_new(body, "by", json_string(r->by));
	st = call(r, "POST", "drills", body, &ans);
	if (st != 201) {
		snprintf(msg, len, "%s", why(ans));
		json_decref(ans);
		return -1;
	}
	json_object_set(rec, "drill", json_object_get(ans, "id"));
	json_object_set(rec, "hosts", json_object_get(ans, "hosts"));
	json_decref(ans);
	return 1;
}

/* The plan's settings again, under its name, for the step's duration. */
static int step_copy(struct run *r, json_t *step, json_t *rec, char *msg, size_t len)
{
	static const char *const keep[] = {
		"name", "points", "sample_pct", "amplification", "shadows", "framing", "writes",
		"rate", NULL
	};
	const char *plan = json_string_value(json_object_get(step, "plan"));
	json_t *list, *v, *old = NULL, *body, *ans;
	int64_t dur = json_integer_value(json_object_get(step, "duration_s"));
	size_t i;
	int st;

	st = call(r, "GET", "copy-plans", NULL, &list);
	if (st != 200) {
		snprintf(msg, len, "%s", why(list));
		json_decref(list);
		return -1;
	}
	/* Newest first: the plan's latest settings. */
	json_array_foreach(list, i, v)
		if (!old && !strcmp(json_string_value(json_object_get(v, "name")) ?: "", plan))
			old = v;
	if (!old) {
		snprintf(msg, len, "the app has no copy plan '%s' any more", plan);
		json_decref(list);
		return -1;
	}
	body = json_object();
	for (i = 0; keep[i]; i++)
		json_object_set(body, keep[i], json_object_get(old, keep[i]));
	json_decref(list);
	json_object_set_new(body, "duration_s", json_integer(dur ? dur : 600));
	json_object_set_new(body, "by", json_string(r->by));
	st = call(r, "POST", "copy-plans", body, &ans);
	if (st != 201) {
		snprintf(msg, len, "%s", why(ans));
		json_decref(ans);
		return -1;
	}
	json_object_set(rec, "copy_plan", json_object_get(ans, "id"));
	json_decref(ans);
	return 1;
}

static int step_scheme(struct run *r, json_t *step, json_t *rec, char *msg, size_t len)
{
	json_t *ans, *body;
	char comment[200];
	int st;

	st = call(r, "GET", "active_scheme", NULL, &ans);
	if (st == 200)
		json_object_set(rec, "scheme_before", json_object_get(ans, "scheme"));
	json_decref(ans);
	snprintf(comment, sizeof(comment), "%s", r->by);
	body = json_pack("{s:O, s:s}", "scheme", json_object_get(step, "scheme"),
			 "comment", comment);
	st = call(r, "PUT", "active_scheme", body, &ans);
	if (st != 200) {
		snprintf(msg, len, "%s", why(ans));
		json_decref(ans);
		return -1;
	}
	json_object_set(rec, "scheme", json_object_get(ans, "scheme"));
	json_object_set(rec, "version", json_object_get(ans, "version"));
	json_decref(ans);
	return 1;
}

/*
 * Stop what record @from started unless a stop did already: 0, or -1
 * with why (a 409, ended already by itself or by hand, is not a failure).
 */
static int stop_one(struct run *r, json_t *from, json_t *done, char *msg, size_t len)
{
	const char *kinds[] = { "drill", "copy_plan" }, *paths[] = { "drills", "copy-plans" };
	char rest[64];
	json_t *ans;
	size_t i;
	int st;

	for (i = 0; i < 2; i++) {
		json_t *id = json_object_get(from, kinds[i]);

		if (!json_is_integer(id) || json_is_true(json_object_get(from, "stopped")))
			continue;
		snprintf(rest, sizeof(rest), "%s/%lld/stop", paths[i],
			 (long long)json_integer_value(id));
		st = call(r, "POST", rest, json_pack("{s:s}", "by", r->by), &ans);
		if (st != 200 && st != 409) {
			snprintf(msg, len, "%s %lld: %s", kinds[i], (long long)json_integer_value(id),
				 why(ans));
			json_decref(ans);
			return -1;
		}
		json_decref(ans);
		json_object_set_new(from, "stopped", json_true());
		if (done)
			json_array_append_new(done, json_pack("{s:O}", kinds[i], id));
	}
	return 0;
}

static int step_stop(struct run *r, json_t *step, json_t *rec, char *msg, size_t len)
{
	json_t *recs = json_object_get(r->state, "steps"), *k = json_object_get(step, "step");
	json_t *done = json_array(), *v;
	size_t i;

	json_array_foreach(recs, i, v)
		if ((!k || (json_int_t)i == json_integer_value(k)) && v != rec &&
		    stop_one(r, v, done, msg, len)) {
			json_decref(done);
			return -1;
		}
	json_object_set_new(rec, "stops", done);
	return 1;
}

/* Done: 1; not yet: 0; -1: timed out. */
static int step_wait(struct run *r, json_t *step, json_t *rec, double now, char *msg,
		     size_t len)
{
	double since = json_number_value(json_object_get(rec, "started_at")), v;
	json_t *until = json_object_get(step, "until");
	char err[STORE_ERR_MAX];
	bool met;

	if (!until)
		return now - since >= json_number_value(json_object_get(step, "for_s")) ? 1 : 0;
	if (gameday_judge(r->gr->ad->store, r->g, r->a, until, since, &v, &met, err)) {
		/* The store's trouble is not the condition's: the next tick judges again. */
		fprintf(stderr, "sds-admin: game day %s run %lld: %s\n", r->name,
			(long long)r->id, err);
		return 0;
	}
	if (v >= 0)
		set_num(rec, "value", v);
	if (met)
		return 1;
	if (now - since < (double)json_integer_value(json_object_get(step, "timeout_s")))
		return 0;
	snprintf(msg, len, "timed out after %lld s: %s %s %g (%s)",
		 (long long)json_integer_value(json_object_get(step, "timeout_s")),
		 json_string_value(json_object_get(until, "field")),
		 json_object_get(until, "above") ? "never above" : "never below",
		 json_number_value(json_object_get(until, "above") ?: json_object_get(until, "below")),
		 v >= 0 ? "judged" : "too few calls to judge");
	return -1;
}

/* ---- a run ----------------------------------------------------------------- */

/* Save @r's state; @result non-NULL: it ended now with it. */
static void save(struct run *r, const char *result)
{
	struct store *st = r->gr->ad->store;
	char *text = json_dumps(r->state, JSON_COMPACT), err[STORE_ERR_MAX];

	if (!text || st->ops->gameday_save(st, r->id, r->gr->id, text,
					   result ? store_now_s() : 0, result, err))
		fprintf(stderr, "sds-admin: game day %s run %lld: saving: %s\n", r->name,
			(long long)r->id, text ? err : "out of memory");
	free(text);
	/* The dashboard's watchers of the app see the run move. */
	if (r->gr->ad->watch && result) {
		char path[300];

		snprintf(path, sizeof(path), "groups/%s/apps/%s/gamedays", r->g, r->a);
		watch__wrote(r->gr->ad->watch, st, "POST", path);
	}
}

/* End @r with @result: what it started and did not stop, stopped first. */
static void finish(struct run *r, const char *result)
{
	json_t *recs = json_object_get(r->state, "steps"), *v, *cleaned = json_array();
	char msg[400];
	size_t i;

	json_array_foreach(recs, i, v)
		if (stop_one(r, v, cleaned, msg, sizeof(msg)))
			fprintf(stderr, "sds-admin: game day %s run %lld: stopping: %s\n", r->name,
				(long long)r->id, msg);
	json_object_set_new(r->state, "cleanup", cleaned);
	json_object_set_new(r->state, "ended_at", json_real(gameday_now()));
	save(r, result);
}

static void init_state(struct run *r)
{
	json_t *recs = json_array(), *v;
	size_t i;

	json_array_foreach(r->steps, i, v)
		json_array_append_new(recs, json_pack("{s:O, s:n, s:n, s:n}",
			"do", json_object_get(v, "do"), "started_at", "ended_at", "result"));
	json_decref(r->state);
	r->state = json_pack("{s:i, s:o, s:n}", "step", 0, "steps", recs, "error");
}

static void advance(struct gameday_runner *gr, json_t *c)
{
	struct run r = {
		.gr = gr,
		.g = json_string_value(json_object_get(c, "group")),
		.a = json_string_value(json_object_get(c, "app")),
		.name = json_string_value(json_object_get(c, "gameday")),
		.id = json_integer_value(json_object_get(c, "run")),
		.steps = json_object_get(json_object_get(c, "body"), "steps"),
		.state = json_incref(json_object_get(c, "state")),
	};
	const char *abort_by = json_string_value(json_object_get(c, "abort_by"));
	char msg[600], result[800];
	size_t i, n = json_array_size(r.steps);

	snprintf(r.by, sizeof(r.by), "game day %s run %lld", r.name, (long long)r.id);
	if (!json_is_array(json_object_get(r.state, "steps")))
		init_state(&r);
	for (;;) {
		json_t *step, *rec;
		double now = gameday_now();
		int done;

		i = (size_t)json_integer_value(json_object_get(r.state, "step"));
		if (abort_by) {
			rec = json_array_get(json_object_get(r.state, "steps"), i);
			if (rec && json_is_number(json_object_get(rec, "started_at"))) {
				set_num(rec, "ended_at", now);
				json_object_set_new(rec, "result", json_string("aborted"));
			}
			snprintf(result, sizeof(result), "aborted by %.300s", abort_by);
			json_object_set_new(r.state, "error", json_string(result));
			finish(&r, result);
			break;
		}
		if (i >= n) {
			finish(&r, "done");
			break;
		}
		step = json_array_get(r.steps, i);
		rec = json_array_get(json_object_get(r.state, "steps"), i);
		if (!json_is_number(json_object_get(rec, "started_at")))
			set_num(rec, "started_at", now);
		msg[0] = '\0';
		switch (gameday_step_kind(json_string_value(json_object_get(step, "do")))) {
		case GAMEDAY_DRILL:
			done = step_drill(&r, step, rec, msg, sizeof(msg));
			break;
		case GAMEDAY_COPY:
			done = step_copy(&r, step, rec, msg, sizeof(msg));
			break;
		case GAMEDAY_WAIT:
			done = step_wait(&r, step, rec, now, msg, sizeof(msg));
			break;
		case GAMEDAY_SCHEME:
			done = step_scheme(&r, step, rec, msg, sizeof(msg));
			break;
		case GAMEDAY_STOP:
			done = step_stop(&r, step, rec, msg, sizeof(msg));
			break;
		default:
			snprintf(msg, sizeof(msg), "no such step");
			done = -1;
			break;
		}
		if (!done) {
			save(&r, NULL);
			break;
		}
		set_num(rec, "ended_at", gameday_now());
		if (done < 0) {
			snprintf(result, sizeof(result), "failed: steps[%zu] (%s): %.600s", i,
				 json_string_value(json_object_get(step, "do")), msg);
			json_object_set_new(rec, "result", json_string(result + 8));
			json_object_set_new(r.state, "error", json_string(result + 8));
			finish(&r, result);
			break;
		}
		json_object_set_new(rec, "result", json_string("ok"));
		json_object_set_new(r.state, "step", json_integer((json_int_t)i + 1));
	}
	json_decref(r.state);
}

/* ---- the thread ------------------------------------------------------------ */

static void tick(struct gameday_runner *gr)
{
	struct store *st = gr->ad->store;
	char err[STORE_ERR_MAX];
	json_t *claimed, *c;
	size_t i;

	if (!st->ops->gameday_tick)
		return;
	if (st->ops->gameday_tick(st, gr->id, store_now_s(), GAMEDAY_LEASE_S, "{}", &claimed,
				  err)) {
		fprintf(stderr, "sds-admin: game days: %s\n", err);
		return;
	}
	json_array_foreach(claimed, i, c)
		advance(gr, c);
	json_decref(claimed);
}

static void *runner_main(void *arg)
{
	struct gameday_runner *gr = arg;
	struct timespec until;

	pthread_mutex_lock(&gr->mu);
	while (!gr->stop) {
		pthread_mutex_unlock(&gr->mu);
		tick(gr);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += gr->tick_ms / 1000;
		until.tv_nsec += (long)(gr->tick_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&gr->mu);
		while (!gr->stop &&
		       pthread_cond_timedwait(&gr->cv, &gr->mu, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&gr->mu);
	return NULL;
}

struct gameday_runner *gameday_start(struct admin *ad, int tick_ms, char *err, size_t errlen)
{
	struct gameday_runner *gr = calloc(1, sizeof(*gr));
	char host[64] = "";
	unsigned seed;
	int rc;

	if (!gr) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	gr->ad = ad;
	gr->tick_ms = tick_ms;
	gethostname(host, sizeof(host) - 1);
	seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	/* Unique among the admins of one store: a lease is held by one of them. */
	snprintf(gr->id, sizeof(gr->id), "sds-admin %s pid %d #%08x", host, (int)getpid(),
		 rand_r(&seed));
	gr->tok.role = ADMIN_ROLE_OPERATOR;
	snprintf(gr->tok.fp, sizeof(gr->tok.fp), "gameday");
	pthread_mutex_init(&gr->mu, NULL);
	pthread_cond_init(&gr->cv, NULL);
	rc = pthread_create(&gr->thread, NULL, runner_main, gr);
	if (rc) {
		snprintf(err, errlen, "starting the scheduler: %s", strerror(rc));
		free(gr);
		return NULL;
	}
	return gr;
}

void gameday_stop(struct gameday_runner *gr)
{
	if (!gr)
		return;
	pthread_mutex_lock(&gr->mu);
	gr->stop = true;
	pthread_cond_signal(&gr->cv);
	pthread_mutex_unlock(&gr->mu);
	pthread_join(gr->thread, NULL);
	pthread_mutex_destroy(&gr->mu);
	pthread_cond_destroy(&gr->cv);
	free(gr);
}
