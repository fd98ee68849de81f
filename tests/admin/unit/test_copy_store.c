// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of admin/store/query/copy*.c at a chosen clock: plan
 * conflicts and their life, which periods' loader counts a plan takes,
 * the heartbeat reply's plans and servers, copy server counts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "store_fixture.h"

static struct store_copy_plan mk(const char *name, const char *p1, const char *p2,
				 int64_t expires_at)
{
	struct store_copy_plan p = {
		.name = name, .npoints = p2 ? 2 : 1, .points = { p1, p2 },
		.sample_pct = 30, .amplification = 5, .shadows = "[\"127.0.0.1:9\"]",
		.framing = "raw", .expires_at = expires_at, .by = "t", .token_id = "fnv:0",
	};
	return p;
}

static void test_conflicts_and_life(void **state)
{
	struct store_copy_plan a = mk("a", "order", "pay", T0 + 600);
	struct store_copy_plan b;
	int64_t id, id2;
	json_t *o;

	assert_int_equal(st->ops->app_create(st, "g", "shop", "", err), STORE_OK);
	assert_int_equal(st->ops->app_create(st, "h", "shop", "", err), STORE_OK);
	assert_int_equal(st->ops->app_create(st, "g", "cart", "", err), STORE_OK);
	assert_int_equal(st->ops->copy_plan_create(st, "g", "shop", &a, T0, &id, err), STORE_OK);
	/* The name, anywhere; a point, in an app of the same name in any group. */
	b = mk("a", "other", NULL, T0 + 600);
	assert_int_equal(st->ops->copy_plan_create(st, "g", "cart", &b, T0, &id2, err),
			 STORE_CONFLICT);
	assert_string_equal(err, "copy plan 1 is active with the name 'a'");
	b = mk("b", "x", "pay", T0 + 600);
	assert_int_equal(st->ops->copy_plan_create(st, "h", "shop", &b, T0, &id2, err),
			 STORE_CONFLICT);
	assert_string_equal(err, "point 'pay' is in active copy plan 1");
	assert_int_equal(st->ops->copy_plan_create(st, "g", "cart", &b, T0, &id2, err), STORE_OK);
	assert_int_equal(id2, 2);
	/* An update may keep its own points. */
	a.sample_pct = 70;
	assert_int_equal(st->ops->copy_plan_update(st, "g", "shop", id, &a, T0 + 1, err), STORE_OK);
	assert_int_equal(st->ops->copy_plan_get(st, "g", "shop", id, T0 + 1, &o, err), STORE_OK);
	assert_int_equal(json_integer_value(json_object_get(o, "sample_pct")), 70);
	assert_string_equal(json_string_value(json_object_get(o, "state")), "active");
	json_decref(o);
	/* Another app's plan is not this app's. */
	assert_int_equal(st->ops->copy_plan_get(st, "g", "cart", id, T0, &o, err), STORE_NOTFOUND);
	assert_string_equal(err, "copy plan 1 not found");
	/* Expired: no update, no stop; its state says so; the name is free. */
	assert_int_equal(st->ops->copy_plan_update(st, "g", "shop", id, &a, T0 + 600, err),
			 STORE_CONFLICT);
	assert_string_equal(err, "copy plan 1 has ended already");
	assert_int_equal(st->ops->copy_plan_stop(st, "g", "shop", id, "t", "fnv:0", T0 + 600, err),
			 STORE_CONFLICT);
	assert_int_equal(st->ops->copy_plan_get(st, "g", "shop", id, T0 + 600, &o, err), STORE_OK);
	assert_string_equal(json_string_value(json_object_get(o, "state")), "expired");
	json_decref(o);
	b = mk("a", "order", NULL, T0 + 1200);
	assert_int_equal(st->ops->copy_plan_create(st, "g", "shop", &b, T0 + 600, &id2, err),
			 STORE_OK);
	assert_int_equal(st->ops->copy_plan_stop(st, "g", "shop", id2, "t", "fnv:0", T0 + 601, err),
			 STORE_OK);
	assert_int_equal(st->ops->copy_plan_stop(st, "g", "shop", id2, "t", "fnv:0", T0 + 602, err),
			 STORE_CONFLICT);
}

/* One heartbeat of host @h, period @ps, at @now; order and pay copy counts. */
static void post(const char *h, int64_t ps, uint64_t order, uint64_t pay, int64_t now,
		 struct sds_hb_copy *c)
{
	struct sds_heartbeat *hb = heartbeat_new();
	struct store_hb_result res = { .copy = c };

	heartbeat_init(hb, "g", "shop", h, "", ps, 0);
	heartbeat_add_point(hb, "order")->copy_captured = order;
	heartbeat_add_point(hb, "order")->copy_dropped = 1;
	heartbeat_add_point(hb, "pay")->copy_captured = pay;
	heartbeat_add_point(hb, "else")->copy_captured = 1000;
	assert_int_equal(st->ops->heartbeat(st, hb, now, &res, err), STORE_OK);
	heartbeat_free(hb);
}

static int64_t num(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* A plan takes the counts of the periods it ran in: created .. stopped. */
static void test_loader_counts_by_period(void **state)
{
	struct store_copy_plan a = mk("a", "order", "pay", T0 + 100);
	struct store_copy_hb_plan sp = { .name = "a", .received = 11, .dispatched = 55 };
	struct store_copy_hb shb = { .name = "c1", .addr = "10.0.0.9:7070",
				     .period_start = T0, .nplans = 1, .plans = &sp };
	struct sds_hb_copy *c = calloc(1, sizeof(*c));
	json_t *periods, *plans, *p;
	int64_t id;

	assert_int_equal(st->ops->app_create(st, "g", "shop", "", err), STORE_OK);
	assert_int_equal(st->ops->copy_plan_create(st, "g", "shop", &a, T0 + 3, &id, err),
			 STORE_OK);
	assert_int_equal(st->ops->copy_server_heartbeat(st, &shb, T0 + 4, &plans, err), STORE_OK);
	assert_int_equal(json_array_size(plans), 1);
	p = json_array_get(plans, 0);
	assert_string_equal(json_string_value(json_object_get(p, "app")), "shop");
	assert_int_equal(num(p, "amplification"), 5);
	json_decref(plans);
	post("h1", T0 - 10, 100, 100, T0 + 4, c);	/* before it: not its */
	post("h1", T0, 7, 3, T0 + 12, c);
	assert_int_equal(c->nplans, 1);
	assert_int_equal(c->plans[0].sample_pct, 30);
	assert_int_equal(c->nservers, 1);
	assert_string_equal(c->servers[0], "10.0.0.9:7070");
	post("h2", T0, 5, 0, T0 + 13, c);
	post("h2", T0, 50, 50, T0 + 14, c);		/* a duplicate: nothing */
	assert_int_equal(st->ops->copy_plan_stop(st, "g", "shop", id, "t", "fnv:0", T0 + 35, err),
			 STORE_OK);
	post("h1", T0 + 30, 2, 0, T0 + 41, c);	/* stopped in it: still its */
	assert_int_equal(c->nplans, 0);
	post("h1", T0 + 40, 9, 9, T0 + 51, c);	/* after: not its */
	/* 31 s later, the server is no longer offered. */
	assert_int_equal(c->nservers, 0);
	assert_int_equal(st->ops->copy_plan_stats(st, "g", "shop", id, T0 - 100, T0 + 100,
						  &periods, err), STORE_OK);
	assert_int_equal(json_array_size(periods), 2);
	p = json_array_get(periods, 0);
	assert_int_equal(num(p, "period_start"), T0);
	assert_int_equal(num(p, "captured"), 15);
	assert_int_equal(num(p, "dropped"), 2);
	assert_int_equal(num(p, "received"), 11);
	assert_int_equal(num(p, "dispatched"), 55);
	p = json_array_get(periods, 1);
	assert_int_equal(num(p, "period_start"), T0 + 30);
	assert_int_equal(num(p, "captured"), 2);
	assert_int_equal(num(p, "received"), 0);
	json_decref(periods);
	free(c);
}

/* 64 active plans at most, all apps together: what a copy server takes. */
static void test_active_bound(void **state)
{
	char names[65][16], pts[65][16];
	struct store_copy_plan p;
	int64_t id;
	int i;

	assert_int_equal(st->ops->app_create(st, "g", "shop", "", err), STORE_OK);
	assert_int_equal(st->ops->app_create(st, "g", "cart", "", err), STORE_OK);
	for (i = 0; i < 65; i++) {
		snprintf(names[i], sizeof(names[i]), "p%d", i);
		snprintf(pts[i], sizeof(pts[i]), "pt%d", i);
		p = mk(names[i], pts[i], NULL, T0 + 600);
		assert_int_equal(st->ops->copy_plan_create(st, "g", i % 2 ? "shop" : "cart", &p,
							   T0, &id, err),
				 i < 64 ? STORE_OK : STORE_CONFLICT);
	}
	assert_string_equal(err, "64 copy plans are active, the most copy servers take: stop one first");
	/* One stopped: room again. */
	assert_int_equal(st->ops->copy_plan_stop(st, "g", "shop", 2, "t", "fnv:0", T0 + 1, err),
			 STORE_OK);
	assert_int_equal(st->ops->copy_plan_create(st, "g", "shop", &p, T0 + 1, &id, err), STORE_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_conflicts_and_life, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loader_counts_by_period, setup, teardown),
		cmocka_unit_test_setup_teardown(test_active_bound, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
