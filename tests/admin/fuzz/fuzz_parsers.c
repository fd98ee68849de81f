// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target of the parsers sds-admin exposes to the network: the
 * heartbeat (common/heartbeat/heartbeat.c), the strategies document
 * (common/strategy.c) and the heartbeat reply the loader reads.  Every
 * input goes through all three.  Besides "no crash, no leak, no UB" it
 * checks that whatever parses encodes back to a document that parses to
 * the same thing, every field of it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "heartbeat/heartbeat.h"
#include "strategy.h"

static struct sds_heartbeat *hb, *hb2;
static struct sds_strategies *ss, *ss2;

/* Every field of two points: a field the encoder drops or changes differs. */
static bool hb_point_equal(const struct sds_hb_point *a,
			   const struct sds_hb_point *b)
{
	return !strcmp(a->name, b->name) && a->visits == b->visits &&
	       a->exceptions == b->exceptions && a->timeouts == b->timeouts &&
	       a->downgrades == b->downgrades &&
	       a->max_concurrency == b->max_concurrency &&
	       a->faults == b->faults && a->delays == b->delays &&
	       a->suspended == b->suspended && a->overload == b->overload &&
	       a->overhead_milli == b->overhead_milli && a->nhist == b->nhist &&
	       a->max_stuck == b->max_stuck && a->split_calls == b->split_calls &&
	       a->split_on_cpu_ns == b->split_on_cpu_ns &&
	       a->split_runqueue_ns == b->split_runqueue_ns &&
	       a->split_blocked_ns == b->split_blocked_ns &&
	       !memcmp(a->latency_hist, b->latency_hist, sizeof(a->latency_hist));
}

/* Every field of two heartbeats, points in order (jansson keeps it). */
static bool heartbeat_equal(const struct sds_heartbeat *a,
			    const struct sds_heartbeat *b)
{
	if (strcmp(a->group, b->group) || strcmp(a->app, b->app) ||
	    strcmp(a->host, b->host) || strcmp(a->ip, b->ip) ||
	    a->period_start != b->period_start || a->period_s != b->period_s ||
	    a->version != b->version || a->n != b->n || a->nrules != b->nrules ||
	    a->nrefused != b->nrefused)
		return false;
	for (int i = 0; i < a->nrefused; i++)
		if (a->refused[i].version != b->refused[i].version ||
		    strcmp(a->refused[i].point, b->refused[i].point) ||
		    strcmp(a->refused[i].reason, b->refused[i].reason))
			return false;
	for (int i = 0; i < a->nrules; i++)
		if (a->rules[i].firing != b->rules[i].firing ||
		    a->rules[i].fired != b->rules[i].fired)
			return false;
	for (int i = 0; i < a->n; i++)
		if (!hb_point_equal(&a->points[i], &b->points[i]))
			return false;
	return true;
}

static void check_heartbeat(const uint8_t *data, size_t size)
{
	char err[512];
	json_t *doc;
	char *text;

	if (heartbeat_parse((const char *)data, size, hb, err, sizeof(err)))
		return;
	doc = heartbeat_to_json(hb);
	if (!doc)
		abort();
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!text || heartbeat_parse(text, strlen(text), hb2, err, sizeof(err)))
		abort();
	free(text);
	if (!heartbeat_equal(hb, hb2))
		abort();
}

static void check_strategies(const uint8_t *data, size_t size)
{
	char err[512];
	json_t *doc;
	char *text;

	if (strategy_set_parse((const char *)data, size, ss, err, sizeof(err)))
		return;
	doc = strategy_set_to_json(ss);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!text || strategy_set_parse(text, strlen(text), ss2, err, sizeof(err)))
		abort();
	free(text);
	if (ss->n != ss2->n || ss->version != ss2->version ||
	    memcmp(ss->s, ss2->s, sizeof(ss->s[0]) * ss->n))
		abort();
	/* The host pressure rules too, their defaults written out (docs/PRESSURE.md). */
	if (ss->pressure.n != ss2->pressure.n ||
	    memcmp(ss->pressure.r, ss2->pressure.r,
		   sizeof(ss->pressure.r[0]) * ss->pressure.n))
		abort();
}

/* A reply that parses re-encodes its "copy" to the same plans and servers. */
static void check_reply(const uint8_t *data, size_t size)
{
	static struct sds_hb_reply r;	/* ~370 KiB with the copy plans */
	static struct sds_hb_copy back;
	char err[512];
	json_t *cj;

	r.strategies = ss;
	if (heartbeat_reply_parse((const char *)data, size, &r, err, sizeof(err)) ||
	    !r.has_copy)
		return;
	cj = heartbeat_copy_to_json(&r.copy);
	if (!cj || heartbeat_copy_from_json(cj, &back, err, sizeof(err)) ||
	    memcmp(&back, &r.copy, sizeof(back)))
		abort();
	json_decref(cj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!hb) {
		hb = heartbeat_new();
		hb2 = heartbeat_new();
		ss = calloc(1, sizeof(*ss));
		ss2 = calloc(1, sizeof(*ss2));
	}
	check_heartbeat(data, size);
	check_strategies(data, size);
	check_reply(data, size);
	return 0;
}
