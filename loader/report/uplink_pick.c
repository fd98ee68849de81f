// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * uplink_pick.c - the admin each heartbeat goes to, chosen by a balancing
 * policy (issue 13: "loaders choose their admin") instead of the fixed
 * failover order that sent every host to the first URL.
 *
 * The policies are the "balancer" extensions (libsds/ext_balancer.c):
 * the five of balance.h, or a user's.  Their load view is the sender's
 * own measure of each admin:
 *   in_flight   posts in progress, plus one while the last post to it
 *               timed out and its down mark (and as long again) has not
 *               run out: a hung admin holds a heartbeat of ours;
 *   latency_ns  the recent mean time of a post, timeouts included;
 *   downgraded  down: a failed post (refused, timed out, not 200) marks
 *               it for UPLINK_BACKOFF_MIN_MS, doubling at each failure up
 *               to UPLINK_BACKOFF_MAX_MS, forgotten at its first answer.
 * consistent_hash is keyed by this host's name, so a host stays on one
 * admin while that admin answers, and every host of the fleet computes
 * the same map (the ring's points depend on the URLs, not their order).
 *
 * A heartbeat is posted to one admin and, if that fails, to the policy's
 * next pick among those not yet tried; URLs that are down are tried last
 * (soonest back first), so a period is never held back while any admin
 * might store it.  The queue, the backlog and their semantics are the
 * sender's, unchanged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../../libsds/ext_balancer.h"
#include "../../libsds/balance.h"
#include "report/uplink.h"
#include "report/uplink_pick.h"

_Static_assert(UPLINK_MAX_URLS <= 8, "uplink_pick's arrays hold UPLINK_MAX_URLS");

#define LD(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ST(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

int uplink_pick__init(struct uplink *u, const char *policy, char *err,
		      size_t errlen)
{
	struct sds_ext_provider p[UPLINK_MAX_URLS];
	char names[UPLINK_MAX_URLS][SDS_LB_NAME_MAX];
	struct uplink_pick *k;
	char why[512];
	int i, j;

	if (!policy)
		policy = UPLINK_POLICY_DEFAULT;
	for (i = 0; i < u->nurls; i++)
		for (j = 0; j < i; j++)
			if (!strcmp(u->urls[i], u->urls[j])) {
				snprintf(err, errlen, "--admin: %.200s given twice", u->urls[i]);
				return -1;
			}
	k = calloc(1, sizeof(*k));
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	k->b = sds_ext_balancer(policy, why, sizeof(why));
	if (!k->b) {
		snprintf(err, errlen, "--admin-policy: %s", why);
		free(k);
		return -1;
	}
	/* A ring point is a hash of the name: the URL itself when it fits. */
	for (i = 0; i < u->nurls; i++) {
		if (strlen(u->urls[i]) < SDS_LB_NAME_MAX)
			snprintf(names[i], sizeof(names[i]), "%s", u->urls[i]);
		else
			snprintf(names[i], sizeof(names[i]), "url#%016llx",
				 (unsigned long long)sds_lb_xxh64(u->urls[i],
								  strlen(u->urls[i]), 0));
		p[i].name = names[i];
		p[i].weight = 100;
	}
	if (k->b->setup(k->b, &k->state, p, u->nurls, UINT64_MAX, why, sizeof(why))) {
		snprintf(err, errlen, "--admin-policy %s: %s", policy, why);
		free(k);
		return -1;
	}
	snprintf(k->policy, sizeof(k->policy), "%s", policy);
	u->pick = k;
	return 0;
}

void uplink_pick__free(struct uplink *u)
{
	struct uplink_pick *k = u->pick;

	if (!k)
		return;
	k->b->teardown(k->b, k->state);
	free(k);
	u->pick = NULL;
}

/* Fill the load view at @now; true when some untried URL is up. */
static bool fill_load(struct uplink *u, struct uplink_pick *k, const bool *tried,
		      uint64_t now)
{
	bool any = false;
	int i;

	for (i = 0; i < u->nurls; i++) {
		struct uplink_admin *a = &k->adm[i];
		uint64_t until = LD(a->down_until_ms), held;

		held = LD(a->timed_out) && now < until + LD(a->backoff_ms);
		k->load[i].start_ns = 0;
		k->load[i].in_flight = LD(a->in_flight) + held;
		k->load[i].latency_ns = LD(a->latency_ns);
		k->load[i].downgraded = tried[i] || now < until;
		any |= !k->load[i].downgraded;
	}
	return any;
}

int uplink_pick__next(struct uplink *u, const bool *tried)
{
	struct uplink_pick *k = u->pick;
	uint64_t now = uplink__ms(CLOCK_MONOTONIC), best_at = UINT64_MAX;
	int i, best = -1;

	if (!k) {
		/* No policy set (a unit test): the order given. */
		for (i = 0; i < u->nurls; i++)
			if (!tried[i])
				return i;
		return -1;
	}
	if (fill_load(u, k, tried, now)) {
		i = k->b->pick(k->b, k->state, k->load, now * 1000000ULL,
			       u->host, strlen(u->host));
		if (i >= 0 && i < u->nurls && !tried[i])
			return i;
	}
	/* Every untried one is down (or the policy said none): soonest back. */
	for (i = 0; i < u->nurls; i++)
		if (!tried[i] && LD(k->adm[i].down_until_ms) < best_at) {
			best_at = LD(k->adm[i].down_until_ms);
			best = i;
		}
	return best;
}

/* A request starts: a heartbeat's post (@post) or a sync's read. */
static void pick_begin(struct uplink *u, int i, bool post)
{
	if (u->pick) {
		__atomic_add_fetch(&u->pick->adm[i].in_flight, 1, __ATOMIC_RELAXED);
		if (post)
			__atomic_add_fetch(&u->pick->adm[i].posts, 1, __ATOMIC_RELAXED);
	}
}

void uplink_pick__begin(struct uplink *u, int i)
{
	pick_begin(u, i, true);
}

void uplink_pick__read_begin(struct uplink *u, int i)
{
	pick_begin(u, i, false);
}

/*
 * A request ended: its time in the latency, a failure (refused, timed
 * out, not 200) marks the admin down whether it was a post or a read;
 * only a post that was stored counts as stored.
 */
static void pick_end(struct uplink *u, int i, bool post, bool ok,
		     bool timed_out, uint64_t took_ms);

void uplink_pick__end(struct uplink *u, int i, bool stored, bool timed_out,
		      uint64_t took_ms)
{
	pick_end(u, i, true, stored, timed_out, took_ms);
}

void uplink_pick__read_end(struct uplink *u, int i, bool ok, bool timed_out,
			   uint64_t took_ms)
{
	pick_end(u, i, false, ok, timed_out, took_ms);
}

static void pick_end(struct uplink *u, int i, bool post, bool stored,
		     bool timed_out, uint64_t took_ms)
{
	struct uplink_admin *a;
	uint64_t lat, ns = took_ms * 1000000ULL, back;

	if (!u->pick)
		return;
	a = &u->pick->adm[i];
	__atomic_sub_fetch(&a->in_flight, 1, __ATOMIC_RELAXED);
	lat = LD(a->latency_ns);
	ST(a->latency_ns, lat ? lat - (lat >> UPLINK_LAT_SHIFT) + (ns >> UPLINK_LAT_SHIFT)
			      : (ns ? ns : 1));
	if (stored) {
		if (post)
			__atomic_add_fetch(&a->stored, 1, __ATOMIC_RELAXED);
		ST(a->backoff_ms, 0);
		ST(a->down_until_ms, 0);
		ST(a->timed_out, false);
		return;
	}
	__atomic_add_fetch(&a->failures, 1, __ATOMIC_RELAXED);
	back = LD(a->backoff_ms) ? LD(a->backoff_ms) * 2 : UPLINK_BACKOFF_MIN_MS;
	if (back > UPLINK_BACKOFF_MAX_MS)
		back = UPLINK_BACKOFF_MAX_MS;
	ST(a->backoff_ms, back);
	ST(a->down_until_ms, uplink__ms(CLOCK_MONOTONIC) + back);
	ST(a->timed_out, timed_out);
}

void uplink_pick__json(struct uplink *u, json_t *o)
{
	struct uplink_pick *k = u->pick;
	uint64_t now = uplink__ms(CLOCK_MONOTONIC), until;
	json_t *arr;
	int i;

	json_object_set_new(o, "admin_policy", k ? json_string(k->policy) : json_null());
	arr = json_array();
	for (i = 0; k && i < u->nurls; i++) {
		struct uplink_admin *a = &k->adm[i];

		until = LD(a->down_until_ms);
		json_array_append_new(arr, json_pack("{s:s, s:I, s:I, s:I, s:I, s:f, s:I, s:b}",
			"url", u->urls[i],
			"posts", (json_int_t)LD(a->posts),
			"stored", (json_int_t)LD(a->stored),
			"failures", (json_int_t)LD(a->failures),
			"in_flight", (json_int_t)LD(a->in_flight),
			"latency_ms", LD(a->latency_ns) / 1e6,
			"down_ms", (json_int_t)(until > now ? until - now : 0),
			"timed_out", LD(a->timed_out)));
	}
	json_object_set_new(o, "admins", arr);
}
