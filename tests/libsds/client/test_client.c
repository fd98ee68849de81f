// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libsds against a stand-in loader (fakeloader.c) with counting probe
 * sites (fake_sites.c): the registration and its timing, the frames of
 * the hot path (what each call counts, in any order of ends), permits and
 * probes.  A loader's life (stale, dead, replaced, late) and fork():
 * test_client_life.c.  Built with ASan and UBSan.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <sys/mman.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "fake/client_fixture.h"
#include "fake/fakeloader.h"

static struct fake_loader fl;

static void test_register_sync(void **state)
{
	struct sds_client *c;
	struct sds_point *p;
	struct cfx_counts b;
	int id;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "sync", 1), 0);
	c = sds_client_open("g", "sync");
	assert_non_null(c);
	/* Registered before open returned. */
	assert_int_equal(fake_registers(&fl), 1);
	assert_int_equal(fl.last_addr, (uintptr_t)&sds__site_enter);
	assert_int_equal(fl.last_pid, getpid());
	assert_int_equal(fake_conns(&fl), 1);

	p = sds_point(c, "order");
	/* The point has its id before sds_point returned ... */
	id = fake_id(&fl, "order");
	assert_int_equal(id, 0);
	assert_true(cfx_bound(p));
	/* ... so the very first call counts. */
	b = cfx_counts_now();
	assert_false(sds_should_downgrade(p));
	cfx_assert_delta(&b, 1, 0, 0, 0);
	assert_int_equal(site_count(SITE_ENTER, id), 1);
	assert_true(site_last_key[SITE_ENTER] == fl.key);
	sds_exception_sign(p);
	sds_exception_sign(p);		/* one exception per call */
	cfx_assert_delta(&b, 1, 0, 1, 0);
	sds_downgrade_finally(p);
	cfx_assert_delta(&b, 1, 1, 1, 0);
	assert_true(site_last_key[SITE_EXIT] == fl.key);
	/* Outside a call: nothing. */
	sds_exception_sign(p);
	sds_downgrade_finally(p);
	cfx_assert_delta(&b, 1, 1, 1, 0);

	/* A second point, and the same one again. */
	assert_ptr_equal(sds_point(c, "order"), p);
	assert_int_equal(fake_id(&fl, "stock"), -1);
	sds_point(c, "stock");
	assert_int_equal(fake_id(&fl, "stock"), 1);

	/* Closing tells the loader. */
	sds_client_close(c);
	for (id = 0; id < 100 && fake_conns(&fl); id++)
		cfx_sleep_ms(10);
	assert_int_equal(fake_conns(&fl), 0);
	fake_stop(&fl);
}

static void test_big_key(void **state)
{
	struct sds_client *c;
	struct sds_point *p;

	/* A key with the top bit set, sent as a negative JSON integer. */
	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "bigkey", 0xdeadbeef), 0);
	fl.big_key = true;
	fl.key = 0xfedcba9876543210ULL;
	c = sds_client_open("g", "bigkey");
	p = sds_point(c, "x");
	assert_false(sds_should_downgrade(p));
	sds_downgrade_finally(p);
	assert_true(site_last_key[SITE_ENTER] == 0xfedcba9876543210ULL);
	sds_client_close(c);
	fake_stop(&fl);
}

static void test_downgrade(void **state)
{
	struct sds_client *c;
	struct sds_point *p;
	struct sds_flag *e;
	struct cfx_counts b;
	int i;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "down", 2), 0);
	c = sds_client_open("g", "down");
	p = sds_point(c, "order");
	e = fake_entry(&fl, "order");
	assert_non_null(e);

	/* The kill switch: every call, from the first. */
	fake_set(e, SDS_ACT_DOWNGRADE, 100, fake_now() + 10 * NS, 0, 0);
	b = cfx_counts_now();
	for (i = 0; i < 100; i++) {
		assert_true(sds_should_downgrade(p));
		sds_exception_sign(p);		/* a downgraded call signs nothing */
		sds_downgrade_finally(p);	/* and ends with nothing */
	}
	cfx_assert_delta(&b, 0, 0, 0, 100);
	assert_true(site_last_key[SITE_DOWNGRADE] == fl.key);

	/* The loader's map is read-only here: no way to make it writable. */
	assert_int_equal(mprotect(c->sess->region, c->sess->size,
				  PROT_READ | PROT_WRITE), -1);
	assert_int_equal(errno, EACCES);

	/* SDS_INVOKE takes the fallback. */
	assert_int_equal(SDS_INVOKE(p, -1, 5), -1);

	/* Lapsed: passes again. */
	fake_set(e, SDS_ACT_DOWNGRADE, 100, fake_now() - 1, 0, 0);
	b = cfx_counts_now();
	assert_int_equal(SDS_INVOKE(p, -1, 5), 5);
	cfx_assert_delta(&b, 1, 1, 0, 0);
	sds_client_close(c);
	fake_stop(&fl);
}

static void test_frames(void **state)
{
	struct sds_client *c;
	struct sds_point *a, *b2;
	struct sds_flag *ea;
	struct cfx_counts b;
	__u64 exit_a, exit_b, exc_b;
	int ida, idb;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "frames", 3), 0);
	c = sds_client_open("g", "frames");
	a = sds_point(c, "a");
	b2 = sds_point(c, "b");
	ida = fake_id(&fl, "a");
	idb = fake_id(&fl, "b");
	ea = fake_entry(&fl, "a");

	/* Interleaved ends (a, b, end a, end b): each ends its own call. */
	b = cfx_counts_now();
	exit_a = site_count(SITE_EXIT, ida);
	exit_b = site_count(SITE_EXIT, idb);
	exc_b = site_count(SITE_EXCEPTION, idb);
	assert_false(sds_should_downgrade(a));
	assert_false(sds_should_downgrade(b2));
	sds_downgrade_finally(a);
	assert_int_equal(site_count(SITE_EXIT, ida) - exit_a, 1);
	assert_int_equal(site_count(SITE_EXIT, idb) - exit_b, 0);
	sds_exception_sign(b2);
	assert_int_equal(site_count(SITE_EXCEPTION, idb) - exc_b, 1);
	sds_downgrade_finally(b2);
	assert_int_equal(site_count(SITE_EXIT, idb) - exit_b, 1);
	cfx_assert_delta(&b, 2, 2, 1, 0);

	/* Recursion: outer passes, inner downgraded; the inner end takes
	 * the inner frame (nothing), the outer end exits. */
	b = cfx_counts_now();
	assert_false(sds_should_downgrade(a));
	fake_set(ea, SDS_ACT_DOWNGRADE, 100, fake_now() + 10 * NS, 0, 0);
	assert_true(sds_should_downgrade(a));
	fake_set(ea, 0, 0, 0, 0, 0);
	sds_downgrade_finally(a);
	cfx_assert_delta(&b, 1, 0, 0, 1);
	sds_exception_sign(a);		/* the outer call's */
	sds_downgrade_finally(a);
	cfx_assert_delta(&b, 1, 1, 1, 1);

	/* And the other way round: outer downgraded, inner passes. */
	b = cfx_counts_now();
	fake_set(ea, SDS_ACT_DOWNGRADE, 100, fake_now() + 10 * NS, 0, 0);
	assert_true(sds_should_downgrade(a));
	fake_set(ea, 0, 0, 0, 0, 0);
	assert_false(sds_should_downgrade(a));
	sds_downgrade_finally(a);	/* the inner: exits */
	cfx_assert_delta(&b, 1, 1, 0, 1);
	sds_downgrade_finally(a);	/* the outer: nothing */
	cfx_assert_delta(&b, 1, 1, 0, 1);

	/* Deeper than the frame stack: each call beyond evicts the oldest
	 * frame (told to the sites, not as an end) and is counted; the 64
	 * newest end right, the 10 extra ends find nothing. */
	b = cfx_counts_now();
	for (ida = 0; ida < SDS_MAX_DEPTH + 10; ida++)
		assert_false(sds_should_downgrade(a));
	assert_int_equal(site_evicted(fake_id(&fl, "a")), 10);
	for (ida = 0; ida < SDS_MAX_DEPTH + 10; ida++)
		sds_downgrade_finally(a);
	cfx_assert_delta(&b, SDS_MAX_DEPTH + 10, SDS_MAX_DEPTH, 0, 0);
	assert_int_equal(site_evicted(fake_id(&fl, "a")), 10);
	sds_client_close(c);
	fake_stop(&fl);
}

/*
 * A thread that leaked SDS_MAX_DEPTH frames holding permits and a probe:
 * its next call is guarded (downgraded by a kill switch), and each
 * eviction gives back the permit of the evicted call and counts no probe
 * outcome.
 */
static void test_frames_heal(void **state)
{
	struct sds_client *c;
	struct sds_point *p, *q;
	struct sds_flag *e, *eq;
	struct sds_cell *ce;
	struct cfx_counts b;
	__u32 *cell;
	__u64 ev0;
	int i, id;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "heal", 14), 0);
	c = sds_client_open("g", "heal");
	p = sds_point(c, "dep");
	q = sds_point(c, "other");
	id = fake_id(&fl, "dep");
	e = fake_entry(&fl, "dep");
	eq = fake_entry(&fl, "other");
	ce = fake_cell(&fl, "dep");
	cell = fake_permit(&fl, c->sess->slot, "dep");
	ev0 = site_evicted(id);

	/* 2 permits: 2 leaked calls hold them, 62 are refused and leak. */
	fake_set(e, SDS_ACT_CONCURRENT, 0, 0, 2, 0);
	b = cfx_counts_now();
	for (i = 0; i < SDS_MAX_DEPTH; i++)
		assert_int_equal(sds_should_downgrade(p), i >= 2);
	assert_int_equal(ce->permits, 2);
	assert_int_equal(*cell, 2);
	cfx_assert_delta(&b, 2, 0, 0, SDS_MAX_DEPTH - 2);

	/* A kill switch on another point: the next call is downgraded
	 * (not untracked) and evicts the oldest frame, which gives its
	 * permit back. */
	fake_set(eq, SDS_ACT_DOWNGRADE, 100, fake_now() + 100 * NS, 0, 0);
	assert_true(sds_should_downgrade(q));
	assert_int_equal(site_evicted(id) - ev0, 1);
	assert_int_equal(ce->permits, 1);
	assert_int_equal(*cell, 1);
	sds_downgrade_finally(q);
	/* Not full any more: the next call evicts nothing. */
	assert_true(SDS_INVOKE(q, true, false));
	assert_int_equal(site_evicted(id) - ev0, 1);
	/* Fill it again: the second permit comes back, the refused
	 * leaked calls are evicted without a site call. */
	assert_true(sds_should_downgrade(q));
	assert_true(sds_should_downgrade(q));
	assert_int_equal(site_evicted(id) - ev0, 2);
	assert_int_equal(ce->permits, 0);
	assert_int_equal(*cell, 0);
	for (i = 0; i < SDS_MAX_DEPTH; i++)
		assert_true(sds_should_downgrade(q));
	assert_int_equal(site_evicted(id) - ev0, 2);
	/* The frames are all q's now; end them, the stack is empty. */
	for (i = 0; i < SDS_MAX_DEPTH; i++)
		sds_downgrade_finally(q);
	assert_int_equal(ce->permits, 0);

	/* A leaked probe: evicted, it counts neither ok nor failed. */
	fake_set(eq, 0, 0, 0, 0, 0);
	fake_set(e, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, 100,
		 fake_now() + 100 * NS, 0, 3600 * NS);
	ce->next_probe_ns = 0;
	assert_false(sds_should_downgrade(p));	/* the probe */
	for (i = 1; i < SDS_MAX_DEPTH; i++)
		assert_true(sds_should_downgrade(p));
	b = cfx_counts_now();
	assert_false(SDS_INVOKE(q, true, false));	/* evicts the probe */
	cfx_assert_delta(&b, 1, 1, 0, 0);
	assert_int_equal(site_evicted(id) - ev0, 3);
	assert_int_equal(ce->probes_ok, 0);
	assert_int_equal(ce->probes_failed, 0);
	for (i = 1; i < SDS_MAX_DEPTH; i++)
		sds_downgrade_finally(p);
	sds_client_close(c);
	fake_stop(&fl);
}

static void test_permits(void **state)
{
	struct sds_client *c;
	struct sds_point *p;
	struct sds_flag *e;
	__u32 *cell;
	struct cfx_counts b;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "permits", 4), 0);
	c = sds_client_open("g", "permits");
	p = sds_point(c, "db");
	e = fake_entry(&fl, "db");
	cell = fake_permit(&fl, c->sess->slot, "db");
	fake_set(e, SDS_ACT_CONCURRENT, 0, 0, 1, 0);

	b = cfx_counts_now();
	assert_false(sds_should_downgrade(p));	/* holds the permit */
	assert_int_equal(fake_cell(&fl, "db")->permits, 1);
	assert_int_equal(*cell, 1);
	assert_true(sds_should_downgrade(p));	/* full */
	assert_int_equal(fake_cell(&fl, "db")->refused_concurrent, 1);
	assert_int_equal(fake_cell(&fl, "db")->permits, 1);
	sds_downgrade_finally(p);		/* the refused one: nothing */
	assert_int_equal(fake_cell(&fl, "db")->permits, 1);
	sds_downgrade_finally(p);		/* gives it back */
	assert_int_equal(fake_cell(&fl, "db")->permits, 0);
	assert_int_equal(*cell, 0);
	cfx_assert_delta(&b, 1, 1, 0, 1);
	sds_client_close(c);
	fake_stop(&fl);
}

#define TK	3	/* permits */
#define TM	4	/* threads beyond */

struct holder {
	struct sds_point *p;		/* the point */
	pthread_barrier_t *decided;	/* every thread has decided */
	pthread_barrier_t *checked;	/* the test has looked */
	bool down;			/* refused */
};

static void *holder_run(void *arg)
{
	struct holder *h = arg;

	h->down = sds_should_downgrade(h->p);
	pthread_barrier_wait(h->decided);
	pthread_barrier_wait(h->checked);
	sds_downgrade_finally(h->p);
	return NULL;
}

static void test_permits_threads(void **state)
{
	pthread_barrier_t decided, checked;
	struct holder h[TK + TM];
	pthread_t t[TK + TM];
	struct sds_client *c;
	struct sds_point *p;
	struct sds_flag *e;
	struct cfx_counts b;
	int i, refused = 0;
	__u32 *cell;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "threads", 5), 0);
	c = sds_client_open("g", "threads");
	p = sds_point(c, "db");
	e = fake_entry(&fl, "db");
	cell = fake_permit(&fl, c->sess->slot, "db");
	fake_set(e, SDS_ACT_CONCURRENT, 0, 0, TK, 0);
	pthread_barrier_init(&decided, NULL, TK + TM + 1);
	pthread_barrier_init(&checked, NULL, TK + TM + 1);
	b = cfx_counts_now();
	for (i = 0; i < TK + TM; i++) {
		h[i] = (struct holder){ .p = p, .decided = &decided,
					.checked = &checked };
		pthread_create(&t[i], NULL, holder_run, &h[i]);
	}
	pthread_barrier_wait(&decided);
	for (i = 0; i < TK + TM; i++)
		refused += h[i].down;
	assert_int_equal(refused, TM);
	assert_int_equal(fake_cell(&fl, "db")->permits, TK);
	assert_int_equal(*cell, TK);
	pthread_barrier_wait(&checked);
	for (i = 0; i < TK + TM; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(fake_cell(&fl, "db")->permits, 0);
	assert_int_equal(*cell, 0);
	cfx_assert_delta(&b, TK, TK, 0, TM);
	pthread_barrier_destroy(&decided);
	pthread_barrier_destroy(&checked);
	sds_client_close(c);
	fake_stop(&fl);
}

static void test_probe(void **state)
{
	struct sds_client *c;
	struct sds_point *p;
	struct sds_flag *e;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "probe", 6), 0);
	c = sds_client_open("g", "probe");
	p = sds_point(c, "dep");
	e = fake_entry(&fl, "dep");
	fake_set(e, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, 100,
		 fake_now() + 100 * NS, 0, 3600 * NS);
	/* The first call of the hold is its probe; it fails. */
	assert_false(sds_should_downgrade(p));
	assert_true(sds_should_downgrade(p));	/* nested: not a probe */
	sds_downgrade_finally(p);
	sds_exception_sign(p);
	sds_downgrade_finally(p);
	assert_int_equal(fake_cell(&fl, "dep")->probes_failed, 1);
	assert_int_equal(fake_cell(&fl, "dep")->probes_ok, 0);
	/* The next one is an interval away. */
	assert_true(sds_should_downgrade(p));
	sds_downgrade_finally(p);
	/* Make it due: a successful probe. */
	fake_cell(&fl, "dep")->next_probe_ns = 0;
	assert_false(sds_should_downgrade(p));
	sds_downgrade_finally(p);
	assert_int_equal(fake_cell(&fl, "dep")->probes_ok, 1);
	sds_client_close(c);
	fake_stop(&fl);
}

/* ---- hot keys: keyed calls (docs/KEYS.md) ---- */

/* The key a guard's (@buf, @len) is, as the test builds it from bpf/sds_keys.h. */
static struct sds_key want_key(const void *buf, size_t len)
{
	struct sds_key k;

	memset(&k, 0, sizeof(k));
	k.kind = SDS_KEY_BUF;
	k.len = len;
	memcpy(k.bytes, buf, len);
	return k;
}

/* The last keyed call of site @kind was of point @id with key @k. */
static void assert_keyed(int kind, const struct sds_key *k)
{
	assert_memory_equal(&site_last_keyed[kind], k, sizeof(*k));
	assert_true(site_last_hash[kind] == sds_key_hash(k));
}

/*
 * Keyed calls: every site keyed with the frame's copy of the key (the
 * caller's buffer changed before the end); a blocked key downgraded, the
 * others passing; NULL or 0 unkeyed; a long key cut to 64 bytes.
 */
static void test_keyed(void **state)
{
	struct sds_key k7 = want_key("user7", 5), k8 = want_key("user8", 5);
	char buf[100], buf2[100];
	struct sds_client *c;
	struct sds_point *p;
	struct cfx_counts b;
	struct sds_key kl;
	struct sds_flag *e;
	int id, i;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "keyed", 2), 0);
	c = sds_client_open("g", "keyed");
	p = sds_point(c, "order");
	e = fake_entry(&fl, "order");
	assert_non_null(e);
	id = fake_id(&fl, "order");

	/* Nothing blocked: passes, keyed at every site. */
	memcpy(buf, "user7", 5);
	b = cfx_counts_now();
	assert_false(sds_should_downgrade_key(p, buf, 5));
	assert_keyed(SITE_ENTER, &k7);
	memcpy(buf, "XXXXX", 5);	/* the end must not read the caller's buffer */
	sds_exception_sign(p);
	assert_keyed(SITE_EXCEPTION, &k7);
	sds_downgrade_finally(p);
	assert_keyed(SITE_EXIT, &k7);
	cfx_assert_delta(&b, 1, 1, 1, 0);
	assert_int_equal(site_keyed_count(SITE_ENTER, id), 1);
	assert_int_equal(site_keyed_count(SITE_EXIT, id), 1);
	assert_int_equal(site_keyed_count(SITE_EXCEPTION, id), 1);
	assert_true(site_last_key[SITE_ENTER] == fl.key);

	/* user7 blocked for 10 s: downgraded, keyed; user8 passes. */
	assert_int_equal(fake_key_block(&fl, "order", sds_key_hash(&k7),
					fake_now() + 10 * NS), 0);
	b = cfx_counts_now();
	for (i = 0; i < 10; i++) {
		assert_true(sds_should_downgrade_key(p, "user7", 5));
		sds_exception_sign(p);		/* a downgraded call signs nothing */
		sds_downgrade_finally(p);
		assert_int_equal(sds_enter_key(p, "user7", 5), SDS_DOWNGRADE);
		sds_downgrade_finally(p);
		assert_int_equal(sds_enter_key(p, "user8", 5), SDS_PASS);
		sds_downgrade_finally(p);
	}
	cfx_assert_delta(&b, 10, 10, 0, 20);
	assert_keyed(SITE_DOWNGRADE, &k7);
	assert_keyed(SITE_EXIT, &k8);
	assert_int_equal(site_keyed_count(SITE_DOWNGRADE, id), 20);
	/* Unkeyed calls of the point are not its keys': they pass. */
	b = cfx_counts_now();
	assert_false(sds_should_downgrade(p));
	sds_downgrade_finally(p);
	assert_false(sds_should_downgrade_key(p, NULL, 5));
	sds_downgrade_finally(p);
	assert_false(sds_should_downgrade_key(p, "user7", 0));
	sds_downgrade_finally(p);
	cfx_assert_delta(&b, 3, 3, 0, 0);
	assert_int_equal(site_keyed_count(SITE_ENTER, id), 11);

	/* Lifted: passes again. */
	assert_int_equal(fake_key_clear(&fl, "order", sds_key_hash(&k7)), 0);
	b = cfx_counts_now();
	assert_false(sds_should_downgrade_key(p, "user7", 5));
	sds_downgrade_finally(p);
	cfx_assert_delta(&b, 1, 1, 0, 0);

	/* The point's own downgrade applies to every key. */
	fake_set(e, SDS_ACT_DOWNGRADE, 100, fake_now() + 10 * NS, 0, 0);
	b = cfx_counts_now();
	assert_true(sds_should_downgrade_key(p, "user8", 5));
	sds_downgrade_finally(p);
	cfx_assert_delta(&b, 0, 0, 0, 1);
	assert_keyed(SITE_DOWNGRADE, &k8);
	fake_set(e, 0, 0, 0, 0, 0);

	/* 100 bytes: the first 64 are the key; two that share them are one. */
	memset(buf, 'a', sizeof(buf));
	memcpy(buf2, buf, sizeof(buf2));
	buf2[99] = 'b';
	kl = want_key(buf, 64);
	assert_false(sds_should_downgrade_key(p, buf, sizeof(buf)));
	sds_downgrade_finally(p);
	assert_keyed(SITE_EXIT, &kl);
	assert_false(sds_should_downgrade_key(p, buf2, sizeof(buf2)));
	sds_downgrade_finally(p);
	assert_keyed(SITE_EXIT, &kl);

	/*
	 * Out of order: keyed A, unkeyed, keyed B of three points; A ends
	 * first and the frames above it move down, keys with them.
	 */
	{
		struct sds_point *q = sds_point(c, "q"), *r = sds_point(c, "r");
		struct sds_key ka = want_key("A", 1), kb = want_key("BB", 2);

		assert_true(cfx_wait_bound(q, true, 2000));
		assert_true(cfx_wait_bound(r, true, 2000));
		b = cfx_counts_now();
		assert_false(sds_should_downgrade_key(p, "A", 1));
		assert_false(sds_should_downgrade(q));
		assert_false(sds_should_downgrade_key(r, "BB", 2));
		sds_downgrade_finally(p);
		assert_keyed(SITE_EXIT, &ka);
		sds_exception_sign(r);
		assert_keyed(SITE_EXCEPTION, &kb);
		sds_downgrade_finally(q);
		sds_downgrade_finally(r);
		assert_keyed(SITE_EXIT, &kb);
		cfx_assert_delta(&b, 3, 3, 1, 0);
		assert_int_equal(site_keyed_count(SITE_EXIT, fake_id(&fl, "q")), 0);
		assert_int_equal(site_keyed_count(SITE_EXIT, fake_id(&fl, "r")), 1);
	}
	/*
	 * Leaked keyed frames: 70 calls never ended fill the 64 frames and
	 * evict 6, keyed with their key; the key slots are given back with
	 * the frames, so every later keyed call is keyed still.
	 */
	{
		struct sds_key kL = want_key("L", 1), kM = want_key("M", 1);
		__u64 ev = site_evicted(id), ex = site_keyed_count(SITE_EXIT, id);

		for (i = 0; i < 70; i++)
			assert_false(sds_should_downgrade_key(p, "L", 1));
		assert_int_equal(site_evicted(id) - ev, 6);
		assert_int_equal(site_keyed_count(SITE_EXIT, id) - ex, 6);
		assert_keyed(SITE_EXIT, &kL);
		for (i = 0; i < 64; i++)
			sds_downgrade_finally(p);
		assert_int_equal(site_keyed_count(SITE_EXIT, id) - ex, 70);
		for (i = 0; i < 64; i++)
			assert_false(sds_should_downgrade_key(p, "M", 1));
		for (i = 0; i < 64; i++)
			sds_downgrade_finally(p);
		assert_keyed(SITE_EXIT, &kM);
		assert_int_equal(site_keyed_count(SITE_EXIT, id) - ex, 134);
	}
	sds_client_close(c);
	fake_stop(&fl);
}

/* Without a loader a keyed call is an unkeyed one: it passes, touching nothing. */
static void test_keyed_noloader(void **state)
{
	struct sds_client *c = sds_client_open("g", "nokeys");
	struct sds_point *p = sds_point(c, "order");
	struct cfx_counts b = cfx_counts_now();

	assert_false(sds_should_downgrade_key(p, "user7", 5));
	sds_downgrade_finally(p);
	assert_int_equal(sds_enter_key(p, "user7", 5), SDS_PASS);
	sds_downgrade_finally(p);
	assert_false(sds_should_downgrade_key(NULL, "user7", 5));
	assert_int_equal(sds_enter_key(NULL, NULL, 0), SDS_PASS);
	cfx_assert_delta(&b, 0, 0, 0, 0);
	sds_client_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register_sync),
		cmocka_unit_test(test_big_key),
		cmocka_unit_test(test_downgrade),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_frames_heal),
		cmocka_unit_test(test_permits),
		cmocka_unit_test(test_permits_threads),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_keyed),
		cmocka_unit_test(test_keyed_noloader),
	};

	return cmocka_run_group_tests(tests, cfx_setup, cfx_teardown);
}
