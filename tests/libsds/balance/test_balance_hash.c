// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of libsds/balance_hash.c: the consistent hash against its
 * definition (docs/BALANCE.md): keys stay, only a removed or added
 * provider's keys move, a downgraded provider's keys go on round the
 * ring; the ring's search against a linear scan; XXH64 against the
 * system's libxxhash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance_fixture.h"

static int map_keys(struct sds_lb *lb, int *to, int nkeys)
{
	char key[32];
	int i, len;

	for (i = 0; i < nkeys; i++) {
		len = snprintf(key, sizeof(key), "key-%d", i);
		to[i] = sds_lb_pick(lb, NULL, NOW, key, len);
	}
	return 0;
}

static void test_hash_sticky(void **state)
{
	static const int w[] = { 1, 1, 1, 1, 1 };
	struct sds_lb_load load[5] = { { 0 } };
	struct sds_lb *lb = lb_new("consistent_hash", w, 5);
	int first[100], i, j, k, len;
	char key[32];

	for (j = 0; j < 100; j++) {
		len = snprintf(key, sizeof(key), "user-%d", j);
		first[j] = sds_lb_pick(lb, NULL, NOW, key, len);
	}
	/* No key is the empty key, whatever length comes with it. */
	assert_int_equal(sds_lb_pick(lb, NULL, NOW, NULL, 5),
			 sds_lb_pick(lb, NULL, NOW, "", 0));
	assert_int_equal(sds_lb_pick(lb, load, NOW, NULL, 0),
			 sds_lb_pick(lb, NULL, NOW, "x", 0));
	for (i = 0; i < 1000; i++)
		for (j = 0; j < 100; j++) {
			len = snprintf(key, sizeof(key), "user-%d", j);
			k = sds_lb_pick(lb, (i & 1) ? load : NULL, NOW, key, len);
			assert_int_equal(k, first[j]);
		}
	sds_lb_free(lb);
}

#define NKEYS	10000

static void test_hash_remove_add(void **state)
{
	struct sds_lb_provider p[6];
	static char names[6][16];
	static int a[NKEYS], b[NKEYS];
	struct sds_lb *five, *four, *six;
	int i, moved = 0;

	for (i = 0; i < 6; i++) {
		snprintf(names[i], sizeof(names[i]), "p%d", i);
		p[i] = (struct sds_lb_provider){ .name = names[i], .weight = 1 };
	}
	assert_int_equal(sds_lb_new(&five, "consistent_hash", p, 5, 0, NULL, 0), 0);
	assert_int_equal(sds_lb_new(&six, "consistent_hash", p, 6, 0, NULL, 0), 0);
	/* Four: p2 removed (p3, p4 move down one index). */
	p[2] = p[4];
	assert_int_equal(sds_lb_new(&four, "consistent_hash", p, 4, 0, NULL, 0), 0);

	/* Removal: exactly p2's keys move, about a fifth. */
	map_keys(five, a, NKEYS);
	map_keys(four, b, NKEYS);
	for (i = 0; i < NKEYS; i++) {
		const char *was = names[a[i]], *is = p[b[i]].name;

		if (strcmp(was, is)) {
			assert_int_equal(a[i], 2);
			moved++;
		} else {
			assert_int_not_equal(a[i], 2);
		}
	}
	print_message("  removing 1 of 5 moved %d of %d keys\n", moved, NKEYS);
	assert_in_range(moved, 1500, 2500);

	/* Addition: the keys that move all go to p5, about a sixth. */
	map_keys(six, b, NKEYS);
	for (i = 0, moved = 0; i < NKEYS; i++)
		if (a[i] != b[i]) {
			assert_int_equal(b[i], 5);
			moved++;
		}
	print_message("  adding a 6th moved %d of %d keys (1/6: %d)\n",
		      moved, NKEYS, NKEYS / 6);
	assert_in_range(moved, NKEYS / 6 - 500, NKEYS / 6 + 500);
	sds_lb_free(five);
	sds_lb_free(four);
	sds_lb_free(six);
}

/* A downgraded provider's keys go on round the ring; no other key moves. */
static void test_hash_downgraded(void **state)
{
	static const int w[] = { 1, 1, 1, 1, 1 };
	struct sds_lb_load load[5] = { { 0 } };
	struct sds_lb *lb = lb_new("consistent_hash", w, 5);
	static int a[NKEYS];
	char key[32];
	int i, k, len, moved = 0;

	map_keys(lb, a, NKEYS);
	load[3].downgraded = 1;
	for (i = 0; i < NKEYS; i++) {
		len = snprintf(key, sizeof(key), "key-%d", i);
		k = sds_lb_pick(lb, load, NOW, key, len);
		assert_int_not_equal(k, 3);
		if (a[i] == 3)
			moved++;
		else
			assert_int_equal(k, a[i]);
	}
	assert_true(moved > 0);
	sds_lb_free(lb);
}

/* The first point at or after h, wrapping: the plain way. */
static int ring_naive(const struct sds_lb_ring *r, uint64_t h)
{
	uint32_t i;

	for (i = 0; i < r->n; i++)
		if (r->h[i] >= h)
			return r->p[i];
	return r->p[0];
}

/* The ring's indexed, branch-free search against a linear scan. */
static void test_ring_search(void **state)
{
	static const char *names[SDS_LB_MAX];
	static char buf[SDS_LB_MAX][24];
	static const int sizes[] = { 1, 3, 16, 128, 256 };
	struct sds_lb_ring r;
	uint64_t h;
	uint32_t i;
	int s, k;

	for (k = 0; k < SDS_LB_MAX; k++) {
		snprintf(buf[k], sizeof(buf[k]), "node-%d", k);
		names[k] = buf[k];
	}
	sds_lb_seed(SEED);
	for (s = 0; s < 5; s++) {
		assert_int_equal(sds_lb_ring_build(&r, names, sizes[s]), 0);
		assert_int_equal(r.n, sizes[s] * SDS_LB_VNODES);
		for (i = 1; i < r.n; i++)
			assert_true(r.h[i - 1] <= r.h[i]);
		for (i = 0; i < r.n; i++) {
			assert_int_equal(sds_lb_ring_pick(&r, NULL, r.h[i]), r.p[i]);
			assert_int_equal(sds_lb_ring_pick(&r, NULL, r.h[i] - 1), ring_naive(&r, r.h[i] - 1));
			assert_int_equal(sds_lb_ring_pick(&r, NULL, r.h[i] + 1), ring_naive(&r, r.h[i] + 1));
		}
		assert_int_equal(sds_lb_ring_pick(&r, NULL, 0), r.p[0]);
		assert_int_equal(sds_lb_ring_pick(&r, NULL, UINT64_MAX), ring_naive(&r, UINT64_MAX));
		for (k = 0; k < 20000; k++) {
			h = sds_lb_random();
			assert_int_equal(sds_lb_ring_pick(&r, NULL, h), ring_naive(&r, h));
		}
		sds_lb_ring_free(&r);
	}
}

/* XXH64 against the system's libxxhash, when there is one. */
static void test_xxh64(void **state)
{
	uint64_t (*ref)(const void *, size_t, uint64_t);
	unsigned char buf[200];
	void *so;
	size_t len;
	int seed, i;

	assert_true(sds_lb_xxh64("", 0, 0) == 0xef46db3751d8e999ULL);
	so = dlopen("libxxhash.so.0", RTLD_NOW);
	if (!so) {
		print_message("  libxxhash.so.0 not installed: the empty input only\n");
		return;
	}
	ref = (uint64_t (*)(const void *, size_t, uint64_t))dlsym(so, "XXH64");
	assert_non_null(ref);
	for (i = 0; i < (int)sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	for (len = 0; len <= sizeof(buf); len++)
		for (seed = 0; seed < 3; seed++)
			assert_true(sds_lb_xxh64(buf, len, seed * 0x9e3779b9ULL) ==
				    ref(buf, len, seed * 0x9e3779b9ULL));
	print_message("  XXH64 = libxxhash's on 0..%zu bytes, 3 seeds\n", sizeof(buf));
	dlclose(so);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_sticky),
		cmocka_unit_test(test_hash_remove_add),
		cmocka_unit_test(test_hash_downgraded),
		cmocka_unit_test(test_ring_search),
		cmocka_unit_test(test_xxh64),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
