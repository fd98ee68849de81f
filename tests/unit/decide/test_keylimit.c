// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of hot keys' limits (loader/decide/keylimit.c, docs/KEYS.md
 * "Limits"): a key's bucket and its debt, its visit threshold, overrides
 * by hash, the bounded table; and a simulated app whose guards obey the
 * blocks each tick publishes: users 1-1000 at 50 calls/s, user 7 at
 * 5000/s.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>

#include "sds_flags.h"
#include "sds_keys.h"
#include "decide/keylimit.h"
#include "strategy.h"

#define NS	1000000000ULL
#define MS	1000000ULL
#define T0	(1000 * NS)
#define TICK	(100 * MS)
#define OFF	(-1)

static const struct keylimit_limits no_limits = { OFF, OFF, OFF };

/* One tick, its changes in *@ch. */
static size_t tick1(struct keylimit *kl, uint64_t now, uint64_t hash,
		    uint64_t passed, uint64_t visits,
		    const struct keylimit_change **ch)
{
	struct keylimit_obs o = { hash, passed, visits };

	return keylimit__tick(kl, now, &o, hash ? 1 : 0, ch);
}

/*
 * R 10/s, B 20: 50 calls in the first tick leave a debt of 30, paid in
 * 3 s: blocked until then, lifted at the first tick after.
 */
static void test_bucket_debt(void **state)
{
	struct keylimit_limits l = { OFF, 10, 20 };
	const struct keylimit_change *ch;
	struct keylimit *kl = keylimit__new(0);
	uint64_t t1 = T0 + TICK, t;

	assert_non_null(kl);
	assert_int_equal(keylimit__set_limits(kl, &l, NULL, 0), 0);
	/* 20 calls: the bucket, exactly: nothing to block. */
	assert_int_equal(tick1(kl, T0, 0x77, 20, 20, &ch), 0);
	/* A tick later one token came, and 2 calls: a debt of 1, 0.1 s. */
	assert_int_equal(tick1(kl, T0 + TICK, 0x77, 2, 22, &ch), 1);
	assert_true(ch[0].until_ns == T0 + 2 * TICK);
	keylimit__free(kl);

	kl = keylimit__new(0);
	assert_int_equal(keylimit__set_limits(kl, &l, NULL, 0), 0);
	assert_int_equal(tick1(kl, t1, 0x77, 50, 50, &ch), 1);
	assert_true(ch[0].hash == 0x77);
	assert_true(ch[0].until_ns == t1 + 3 * NS);
	assert_int_equal(ch[0].why, KEYLIMIT_TOKEN);
	assert_int_equal(keylimit__blocked(kl), 1);
	/* Blocked, no calls: the same end, no change, tick after tick. */
	for (t = t1 + TICK; t < t1 + 3 * NS; t += TICK)
		assert_int_equal(tick1(kl, t, 0x77, 0, 50, &ch), 0);
	/* Paid at t1 + 3 s: lifted (the table's slot freed). */
	assert_int_equal(tick1(kl, t1 + 3 * NS, 0x77, 0, 50, &ch), 1);
	assert_true(ch[0].hash == 0x77 && ch[0].until_ns == 0);
	assert_int_equal(ch[0].why, KEYLIMIT_NONE);
	assert_int_equal(keylimit__blocked(kl), 0);
	/* One token a tick in: 1 call passes free, the second is a debt of 1 (0.1 s). */
	t = t1 + 3 * NS + TICK;
	assert_int_equal(tick1(kl, t, 0x77, 1, 51, &ch), 0);
	t += TICK;
	assert_int_equal(tick1(kl, t, 0x77, 2, 53, &ch), 1);
	assert_true(ch[0].until_ns == t + 100 * MS);
	keylimit__free(kl);
}

/* The visit threshold: blocked at V visits, lifted below, renewed past half its horizon. */
static void test_visit_threshold(void **state)
{
	struct keylimit_limits l = { 100, OFF, OFF };
	const struct keylimit_change *ch;
	struct keylimit *kl = keylimit__new(16);
	uint64_t t = T0;

	assert_int_equal(keylimit__set_limits(kl, &l, NULL, 0), 0);
	assert_int_equal(tick1(kl, t, 9, 99, 99, &ch), 0);
	t += TICK;
	assert_int_equal(tick1(kl, t, 9, 1, 100, &ch), 1);
	assert_true(ch[0].until_ns == t + SDS_KEY_BLOCK_MAX_NS);
	assert_int_equal(ch[0].why, KEYLIMIT_VISIT);
	/* Still at 100: the block stands, no change until half its horizon is gone. */
	for (t += TICK; t < T0 + TICK + SDS_KEY_BLOCK_MAX_NS / 2; t += TICK)
		assert_int_equal(tick1(kl, t, 9, 0, 100, &ch), 0);
	assert_int_equal(tick1(kl, t + 1, 9, 0, 100, &ch), 1);
	assert_true(ch[0].until_ns == t + 1 + SDS_KEY_BLOCK_MAX_NS);
	/* 99: lifted; absent from a tick's counts: nothing counted, not blocked. */
	assert_int_equal(tick1(kl, t + 2, 9, 0, 99, &ch), 1);
	assert_true(ch[0].until_ns == 0);
	assert_int_equal(tick1(kl, t + 3, 9, 0, 150, &ch), 1);
	assert_int_equal(tick1(kl, t + 4, 0, 0, 0, &ch), 1);
	assert_true(ch[0].hash == 9 && ch[0].until_ns == 0);
	assert_int_equal(keylimit__tracked(kl), 1);
	keylimit__free(kl);
}

/* Overrides by hash; the last of one hash wins; bad limits refused, the old kept. */
static void test_overrides(void **state)
{
	struct keylimit_limits def = { 500, 100, OFF };
	struct keylimit_override ov[3] = {
		{ 7, { OFF, 1000, OFF } },
		{ 8, { 5, OFF, OFF } },
		{ 7, { OFF, 2000, 3000 } },
	};
	struct keylimit_override bad = { 9, { OFF, 2000000000, OFF } };
	static struct keylimit_override many[SDS_KEY_OVERRIDES_MAX + 1];
	struct keylimit *kl = keylimit__new(16);
	const struct keylimit_limits *l;
	int i;

	assert_int_equal(keylimit__set_limits(kl, &def, ov, 3), 0);
	l = keylimit__limits_of(kl, 7);
	assert_int_equal(l->token_rate, 2000);
	assert_int_equal(l->token_bucket, 3000);
	assert_int_equal(l->visit_threshold, OFF);
	l = keylimit__limits_of(kl, 8);
	assert_int_equal(l->visit_threshold, 5);
	assert_int_equal(l->token_rate, OFF);
	l = keylimit__limits_of(kl, 9);		/* the point's; its bucket its rate */
	assert_int_equal(l->visit_threshold, 500);
	assert_int_equal(l->token_rate, 100);
	assert_int_equal(l->token_bucket, 100);

	assert_int_equal(keylimit__set_limits(kl, &def, &bad, 1), -1);
	assert_int_equal(errno, EINVAL);
	for (i = 0; i <= SDS_KEY_OVERRIDES_MAX; i++)
		many[i] = (struct keylimit_override){ i + 1, { 1, OFF, OFF } };
	assert_int_equal(keylimit__set_limits(kl, &def, many, SDS_KEY_OVERRIDES_MAX + 1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(keylimit__limits_of(kl, 7)->token_rate, 2000);	/* kept */
	assert_int_equal(keylimit__set_limits(kl, &def, many, SDS_KEY_OVERRIDES_MAX), 0);
	assert_int_equal(keylimit__limits_of(kl, SDS_KEY_OVERRIDES_MAX)->visit_threshold, 1);
	assert_int_equal(keylimit__limits_of(kl, SDS_KEY_OVERRIDES_MAX + 1)->visit_threshold, 500);
	keylimit__free(kl);
	assert_null(keylimit__new(SDS_KEY_CAPACITY_MAX + 1));
	assert_int_equal(errno, EINVAL);
}

/* A limit that goes lifts its blocks at the next tick. */
static void test_limit_removed(void **state)
{
	struct keylimit_limits l = { OFF, 1, 1 };
	const struct keylimit_change *ch;
	struct keylimit *kl = keylimit__new(16);

	assert_int_equal(keylimit__set_limits(kl, &l, NULL, 0), 0);
	assert_int_equal(tick1(kl, T0, 5, 10, 10, &ch), 1);
	assert_true(ch[0].until_ns == T0 + 9 * NS);
	assert_int_equal(keylimit__set_limits(kl, &no_limits, NULL, 0), 0);
	assert_int_equal(tick1(kl, T0 + TICK, 5, 0, 10, &ch), 1);
	assert_true(ch[0].hash == 5 && ch[0].until_ns == 0);
	/* Back: the bucket starts full again. */
	assert_int_equal(keylimit__set_limits(kl, &l, NULL, 0), 0);
	assert_int_equal(tick1(kl, T0 + 2 * TICK, 5, 1, 10, &ch), 0);
	keylimit__free(kl);
}

/*
 * Capacity 4: a fifth key evicts the least recently seen, whose block is
 * lifted; the others' blocks stand unchanged.
 */
static void test_eviction(void **state)
{
	struct keylimit_limits l = { OFF, 1, 1 };
	struct keylimit_obs o[4];
	const struct keylimit_change *ch;
	struct keylimit *kl = keylimit__new(4);
	size_t i, n;

	assert_int_equal(keylimit__set_limits(kl, &l, NULL, 0), 0);
	for (i = 0; i < 4; i++)
		o[i] = (struct keylimit_obs){ 100 + i, 5, 5 };
	assert_int_equal(keylimit__tick(kl, T0, o, 4, &ch), 4);
	for (i = 0; i < 4; i++)
		assert_true(ch[i].hash == 100 + i && ch[i].until_ns == T0 + 4 * NS);
	/* 101..103 seen again, then 104 new: 100 goes. */
	for (i = 0; i < 3; i++)
		o[i] = (struct keylimit_obs){ 101 + i, 0, 5 };
	o[3] = (struct keylimit_obs){ 104, 3, 3 };
	n = keylimit__tick(kl, T0 + TICK, o, 4, &ch);
	assert_int_equal(n, 2);
	assert_true(ch[0].hash == 100 && ch[0].until_ns == 0);
	assert_true(ch[1].hash == 104 && ch[1].until_ns == T0 + TICK + 2 * NS);
	assert_int_equal(keylimit__tracked(kl), 4);
	assert_int_equal(keylimit__blocked(kl), 4);
	/* 100 back: a full bucket; 101, the least recent now, goes. */
	n = tick1(kl, T0 + 2 * TICK, 100, 1, 1, &ch);
	assert_int_equal(n, 1);
	assert_true(ch[0].hash == 101 && ch[0].until_ns == 0);
	assert_int_equal(keylimit__blocked(kl), 3);
	keylimit__free(kl);
}

/* A strategy's limits with its overrides hashed as the point's keys are. */
static void test_from_strategy(void **state)
{
	static struct sds_strategies doc;
	static struct keylimit_override ov[SDS_KEY_OVERRIDES_MAX];
	const char *text = "{\"version\": 1, \"points\": {\"order\": {"
		"\"key_token_rate\": 100, \"key_visit_threshold\": 900, \"key_overrides\": {"
		"\"7\": {\"key_token_rate\": 1000}, \"-2\": {\"key_visit_threshold\": -1}}}}}";
	struct keylimit_limits def;
	struct sds_key k;
	char err[256];
	int n;

	assert_int_equal(strategy_set_parse(text, strlen(text), &doc, err, sizeof(err)), 0);
	n = keylimit__from_strategy(&doc, &doc.s[0], SDS_KEY_BUF, &def, ov, err, sizeof(err));
	assert_int_equal(n, 2);
	assert_int_equal(def.token_rate, 100);
	assert_int_equal(def.token_bucket, 100);
	assert_int_equal(def.visit_threshold, 900);
	/* A guard's "7": one byte. */
	memset(&k, 0, sizeof(k));
	k.kind = SDS_KEY_BUF;
	k.len = 1;
	k.bytes[0] = '7';
	assert_true(ov[0].hash == sds_key_hash(&k));
	assert_int_equal(ov[0].lim.token_rate, 1000);
	assert_int_equal(ov[0].lim.token_bucket, 1000);
	assert_int_equal(ov[0].lim.visit_threshold, 900);
	assert_int_equal(ov[1].lim.visit_threshold, OFF);
	assert_int_equal(ov[1].lim.token_rate, 100);
	/* An integer point's 7: the argument's 8 bytes; -2 two's complement. */
	n = keylimit__from_strategy(&doc, &doc.s[0], SDS_KEY_INT, &def, ov, err, sizeof(err));
	assert_int_equal(n, 2);
	memset(&k, 0, sizeof(k));
	k.kind = SDS_KEY_INT;
	k.len = 8;
	k.bytes[0] = 7;
	assert_true(ov[0].hash == sds_key_hash(&k));
	memset(k.bytes, 0xff, 8);
	k.bytes[0] = 0xfe;
	assert_true(ov[1].hash == sds_key_hash(&k));
	/* "abc" is no integer. */
	text = "{\"version\": 1, \"points\": {\"order\": {\"key_overrides\": {\"abc\": {}}}}}";
	assert_int_equal(strategy_set_parse(text, strlen(text), &doc, err, sizeof(err)), 0);
	assert_int_equal(keylimit__from_strategy(&doc, &doc.s[0], SDS_KEY_INT, &def, ov,
						 err, sizeof(err)), -1);
	assert_string_equal(err, "point 'order': key_overrides 'abc': no key of this point (its keys are integers)");
	assert_int_equal(keylimit__from_strategy(&doc, &doc.s[0], SDS_KEY_STR, &def, ov,
						 err, sizeof(err)), 1);
}

/* ---- the simulated app --------------------------------------------------- */

#define USERS	1000
#define WIN	(SDS_WINDOW_S * 10)	/* ticks in the 10-s window */

static uint64_t uhash[USERS + 1];	/* sds_key_hash of "user<N>", as a guard passes it */
static uint64_t until[USERS + 1];	/* the block the table holds; 0: none */
static uint64_t passes[USERS + 1];	/* passed calls, all ticks */
static uint64_t calls[USERS + 1];
static uint32_t ring[USERS + 1][WIN];	/* passes per tick of the window */
static uint64_t window[USERS + 1];	/* their sum */
static struct keylimit_obs obs[USERS];

static void sim_reset(void)
{
	struct sds_key k;
	int u;

	for (u = 1; u <= USERS; u++) {
		memset(&k, 0, sizeof(k));
		k.kind = SDS_KEY_BUF;
		k.len = snprintf((char *)k.bytes, sizeof(k.bytes), "user%d", u);
		uhash[u] = sds_key_hash(&k);
	}
	memset(until, 0, sizeof(until));
	memset(passes, 0, sizeof(passes));
	memset(calls, 0, sizeof(calls));
	memset(ring, 0, sizeof(ring));
	memset(window, 0, sizeof(window));
}

/* User @u's calls in tick @k at @rate a second: each passes unless blocked then. */
static uint32_t sim_calls(int u, uint64_t k, uint64_t rate)
{
	uint64_t start = T0 + k * TICK, n = rate * TICK / NS, j, t;
	uint32_t passed = 0;

	for (j = 0; j < n; j++) {
		t = start + (u % 20) * 10000 + j * (TICK / n);
		calls[u]++;
		if (!(until[u] > t))
			passed++;
	}
	return passed;
}

static void sim_apply(const struct keylimit_change *ch, size_t n)
{
	size_t i;
	int u;

	for (i = 0; i < n; i++) {
		for (u = 1; u <= USERS && uhash[u] != ch[i].hash; u++)
			;
		assert_true(u <= USERS);
		until[u] = ch[i].until_ns;
	}
}

/*
 * Run ticks @from..@to-1; user 7 calls at @rate7, the others at 50/s.  After
 * each tick @check(k) may look at the totals.
 */
static void sim_run(struct keylimit *kl, uint64_t from, uint64_t to,
		    uint64_t rate7, void (*check)(uint64_t k))
{
	const struct keylimit_change *ch;
	uint64_t k;
	int u;

	for (k = from; k < to; k++) {
		for (u = 1; u <= USERS; u++) {
			uint32_t p = sim_calls(u, k, u == 7 ? rate7 : 50);

			passes[u] += p;
			window[u] = window[u] + p - ring[u][k % WIN];
			ring[u][k % WIN] = p;
			obs[u - 1] = (struct keylimit_obs){ uhash[u], p, window[u] };
		}
		sim_apply(ch, keylimit__tick(kl, T0 + (k + 1) * TICK, obs, USERS, &ch));
		if (check)
			check(k);
	}
}

static int64_t sim_rate, sim_bucket;	/* user 7's limits of this run */

/*
 * After each tick (T = (k + 1) / 10 s): R*T + B passes, give or take one
 * tick's worth of user 7's calls (500): never more; never fewer, unless
 * none of its calls was refused yet.
 */
static void check_bucket(uint64_t k)
{
	int64_t want = sim_rate * (int64_t)(k + 1) / 10 + sim_bucket;
	int64_t p = (int64_t)passes[7];

	assert_true(p <= want + 500);
	/* Fewer only while it had not called that many. */
	assert_true(p >= want - 500 || passes[7] == calls[7]);
}

static void check_others(uint64_t ticks)
{
	int u;

	for (u = 1; u <= USERS; u++) {
		if (u == 7)
			continue;
		assert_int_equal(calls[u], 50 * ticks / 10);
		assert_int_equal(passes[u], calls[u]);
	}
	assert_int_equal(calls[7], 5000 * ticks / 10);
}

/* key_token_rate 100: user 7 gets 100*T + 100 within a tick's worth; everyone else all. */
static void test_sim_token_rate(void **state)
{
	struct keylimit_limits l = { OFF, 100, OFF };
	struct keylimit *kl = keylimit__new(0);

	sim_reset();
	sim_rate = sim_bucket = 100;
	assert_int_equal(keylimit__set_limits(kl, &l, NULL, 0), 0);
	sim_run(kl, 0, 100, 5000, check_bucket);
	check_others(100);
	printf("token_rate 100: user 7 passed %llu of %llu over 10 s (100*10 + 100 = 1100)\n",
	       (unsigned long long)passes[7], (unsigned long long)calls[7]);
	keylimit__free(kl);
}

/* An override of 1000/s for user 7: that many through. */
static void test_sim_override(void **state)
{
	struct keylimit_limits l = { OFF, 100, OFF };
	struct keylimit_override ov;
	struct keylimit *kl = keylimit__new(0);

	sim_reset();
	ov = (struct keylimit_override){ uhash[7], { OFF, 1000, OFF } };
	sim_rate = sim_bucket = 1000;
	assert_int_equal(keylimit__set_limits(kl, &l, &ov, 1), 0);
	sim_run(kl, 0, 100, 5000, check_bucket);
	check_others(100);
	printf("override 1000/s: user 7 passed %llu of %llu over 10 s (1000*10 + 1000 = 11000)\n",
	       (unsigned long long)passes[7], (unsigned long long)calls[7]);
	keylimit__free(kl);
}

/* Never more than the threshold in a window (the guards see a block at once). */
static void check_window(uint64_t k)
{
	(void)k;
	assert_true(window[7] <= 2000);
}

/*
 * key_visit_threshold 2000: user 7 (500 a tick) passes ticks 0-3, is
 * blocked while those are in the window (to tick 100), then passes four
 * ticks (101-104) again, and so on: exactly 2000 each 10 s.
 */
static void test_sim_visits(void **state)
{
	struct keylimit_limits l = { 2000, OFF, OFF };
	struct keylimit *kl = keylimit__new(0);

	sim_reset();
	assert_int_equal(keylimit__set_limits(kl, &l, NULL, 0), 0);
	sim_run(kl, 0, 100, 5000, check_window);
	assert_int_equal(passes[7], 2000);
	check_others(100);
	sim_run(kl, 100, 300, 5000, check_window);
	assert_int_equal(passes[7], 6000);
	check_others(300);
	keylimit__free(kl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_debt),
		cmocka_unit_test(test_visit_threshold),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_limit_removed),
		cmocka_unit_test(test_eviction),
		cmocka_unit_test(test_from_strategy),
		cmocka_unit_test(test_sim_token_rate),
		cmocka_unit_test(test_sim_override),
		cmocka_unit_test(test_sim_visits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
