// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target of the parsers sds-admin exposes to the network: the
 * heartbeat (common/heartbeat.c), the strategies document
 * (common/strategy.c) and the heartbeat reply the loader reads.  Every
 * input goes through all three.  Besides "no crash, no leak, no UB" it
 * checks that whatever parses encodes back to a document that parses to
 * the same thing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "heartbeat.h"
#include "strategy.h"

static struct sds_heartbeat *hb, *hb2;
static struct sds_strategies *ss, *ss2;

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
	if (hb2->n != hb->n || hb2->period_start != hb->period_start ||
	    hb2->version != hb->version || strcmp(hb2->host, hb->host) ||
	    strcmp(hb2->app, hb->app) || strcmp(hb2->group, hb->group))
		abort();
	for (int i = 0; i < hb->n; i++) {
		/* jansson keeps insertion order: same order both times. */
		if (strcmp(hb->points[i].name, hb2->points[i].name) ||
		    hb->points[i].visits != hb2->points[i].visits ||
		    hb->points[i].nhist != hb2->points[i].nhist ||
		    memcmp(hb->points[i].latency_hist, hb2->points[i].latency_hist,
			   sizeof(hb->points[i].latency_hist)))
			abort();
	}
}

static void check_strategies(const uint8_t *data, size_t size)
{
	char err[512];
	json_t *doc;
	char *text;

	if (strategies_parse((const char *)data, size, ss, err, sizeof(err)))
		return;
	doc = strategies_to_json(ss);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!text || strategies_parse(text, strlen(text), ss2, err, sizeof(err)))
		abort();
	free(text);
	if (ss->n != ss2->n || ss->version != ss2->version ||
	    memcmp(ss->s, ss2->s, sizeof(ss->s[0]) * ss->n))
		abort();
}

static void check_reply(const uint8_t *data, size_t size)
{
	struct sds_hb_reply r = { .strategies = ss };
	char err[512];

	heartbeat_reply_parse((const char *)data, size, &r, err, sizeof(err));
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
