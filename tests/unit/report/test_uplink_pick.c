// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/report/uplink_pick.c: which admin gets each heartbeat.
 * No sender, no HTTP: the test plays the sender (next, begin, end) with
 * the outcome each admin would give, many heartbeats within a second, so
 * that every down mark (a minute at least) holds throughout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext/ext.h"
#include "report/uplink.h"

static char *urls[] = { "http://10.0.0.1:8887", "http://10.0.0.2:8887",
			"http://10.0.0.3:8887" };

/* @u over the URLs @order (indices of urls[]) as host @host. */
static void set_up_order(struct uplink *u, const char *policy, const char *host,
			 const int *order, int n)
{
	char err[512];
	int i;

	memset(u, 0, sizeof(*u));
	for (i = 0; i < n; i++)
		u->urls[i] = urls[order[i]];
	u->nurls = n;
	snprintf(u->host, sizeof(u->host), "%s", host);
	assert_int_equal(uplink_pick__init(u, policy, err, sizeof(err)), 0);
}

static void set_up(struct uplink *u, const char *policy, const char *host,
		   int n)
{
	static const int order[] = { 0, 1, 2 };

	set_up_order(u, policy, host, order, n);
}

/*
 * One heartbeat as the sender posts it: picks until one stores it;
 * @hung (or -1) times out, the others store.  Returns the admin that
 * stored it; counts the posts to @hung in *@to_hung.
 */
static int heartbeat(struct uplink *u, int hung, int *to_hung)
{
	bool tried[UPLINK_MAX_URLS] = {};
	int i;

	while ((i = uplink_pick__next(u, tried)) >= 0) {
		tried[i] = true;
		uplink_pick__begin(u, i);
		if (i == hung) {
			(*to_hung)++;
			uplink_pick__end(u, i, false, true, 3000);
			continue;
		}
		uplink_pick__end(u, i, true, false, 5);
		return i;
	}
	return -1;
}

/*
 * least_active: a hung admin is posted to once (1,000 heartbeats: the
 * chance it is never drawn among the three idle ones is (2/3)^1000),
 * then never again while it is down and held; every heartbeat is stored.
 */
static void least_active_hung_once(void **state)
{
	int k, hung = 0, got[3] = {}, first = -1;
	static struct uplink u;

	set_up(&u, NULL, "host-a", 3);
	assert_string_equal(u.pick->policy, "least_active");
	for (k = 0; k < 1000; k++) {
		int before = hung, i = heartbeat(&u, 1, &hung);

		assert_true(i == 0 || i == 2);
		got[i]++;
		if (hung > before)
			first = k;
	}
	assert_int_equal(hung, 1);
	assert_true(first >= 0);
	assert_int_equal(got[0] + got[2], 1000);
	assert_int_equal(u.pick->adm[1].posts, 1);
	assert_int_equal(u.pick->adm[1].failures, 1);
	assert_true(u.pick->adm[1].timed_out);
	assert_int_equal(u.pick->adm[1].backoff_ms, UPLINK_BACKOFF_MIN_MS);
	/* The two that answer share the rest: least active ties by weight. */
	assert_in_range(got[0], 400, 600);
	uplink_pick__free(&u);
}

/* consistent_hash: a host's every heartbeat on one admin; URL order is no matter. */
static void consistent_hash_keeps_host(void **state)
{
	static const char *const hosts[] = { "host-a", "host-b", "host-c",
		"host-d", "host-e", "web-01", "web-02", "db-1" };
	int h, k, i, hung = 0, seen[3] = {};
	static struct uplink u, r;

	for (h = 0; h < 8; h++) {
		set_up(&u, "consistent_hash", hosts[h], 3);
		i = heartbeat(&u, -1, &hung);
		for (k = 0; k < 1000; k++)
			assert_int_equal(heartbeat(&u, -1, &hung), i);
		seen[i]++;
		/* The same URLs the other way round: the same admin. */
		set_up_order(&r, "consistent_hash", hosts[h], (const int[]){ 2, 1, 0 }, 3);
		assert_int_equal(heartbeat(&r, -1, &hung), 2 - i);
		/* Its admin hung: the next point of the ring, then that one. */
		k = heartbeat(&u, i, &hung);
		assert_true(k >= 0 && k != i);
		assert_int_equal(heartbeat(&u, i, &hung), k);
		uplink_pick__free(&u);
		uplink_pick__free(&r);
	}
	assert_int_equal(hung, 8);
	assert_int_equal(seen[0] + seen[1] + seen[2], 8);
}

/* Every admin down: still tried, soonest back first; none stores: -1. */
static void all_down_still_tried(void **state)
{
	bool tried[UPLINK_MAX_URLS] = {};
	int i, n = 0, hung = 0;
	static struct uplink u;

	set_up(&u, "random", "h", 3);
	for (i = 0; i < 3; i++)
		uplink_pick__end(&u, i, false, false, 1);
	while ((i = uplink_pick__next(&u, tried)) >= 0) {
		tried[i] = true;
		n++;
	}
	assert_int_equal(n, 3);
	assert_int_equal(heartbeat(&u, -1, &hung), 0);	/* down first, back first */
	assert_int_equal(u.pick->adm[0].backoff_ms, 0);	/* an answer forgets */
	uplink_pick__free(&u);
}

static void bad_input(void **state)
{
	static struct uplink u;
	char err[512];

	memset(&u, 0, sizeof(u));
	u.urls[0] = urls[0];
	u.urls[1] = urls[1];
	u.nurls = 2;
	assert_int_equal(uplink_pick__init(&u, "nope", err, sizeof(err)), -1);
	assert_string_equal(err, "--admin-policy: unknown balancer \"nope\" (known: "
			    "random, round_robin, least_active, shortest_response, "
			    "consistent_hash)");
	u.urls[1] = urls[0];
	assert_int_equal(uplink_pick__init(&u, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "--admin: http://10.0.0.1:8887 given twice");
	assert_null(u.pick);
}

static void quiet(const char *line)
{
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(least_active_hung_once),
		cmocka_unit_test(consistent_hash_keeps_host),
		cmocka_unit_test(all_down_still_tried),
		cmocka_unit_test(bad_input),
	};

	unsetenv("SDS_EXT_DIR");
	sds_ext_set_diag("test", quiet);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
