// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libsds against a stand-in loader (fakeloader.c) with counting probe
 * sites (fake_sites.c), the loader's life: one that goes stale, dies and
 * returns, comes late; the point limit; fork(); a close that aborts a
 * hung registration.  Built with ASan and UBSan.
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

static struct fake_loader fl, fl2;

static void test_stale_loader(void **state)
{
	struct sds_client *c;
	struct sds_point *p;
	struct sds_flag *e;
	struct cfx_counts b;
	struct sds_flags_header *h;
	int i;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "stale", 7), 0);
	c = sds_client_open("g", "stale");
	p = sds_point(c, "x");
	e = fake_entry(&fl, "x");
	h = fl.region;
	fake_set(e, SDS_ACT_DOWNGRADE, 100, fake_now() + 100 * NS, 0, 0);
	assert_true(SDS_INVOKE(p, true, false));

	/* The loader stops ticking: its flags are no longer obeyed, but
	 * its probes still count the calls. */
	__atomic_store_n(&fl.ticking, false, __ATOMIC_RELAXED);
	cfx_sleep_ms(50);
	__atomic_store_n(&h->tick_ns, fake_now() - h->tick_interval_ns - SDS_STALE_NS - 1,
			 __ATOMIC_RELAXED);
	b = cfx_counts_now();
	for (i = 0; i < 10; i++)
		assert_false(SDS_INVOKE(p, true, false));
	cfx_assert_delta(&b, 10, 10, 0, 0);
	/* Ticking again: obeyed again. */
	__atomic_store_n(&fl.ticking, true, __ATOMIC_RELAXED);
	cfx_sleep_ms(100);
	assert_true(SDS_INVOKE(p, true, false));
	assert_true(cfx_bound(p));
	sds_client_close(c);
	fake_stop(&fl);
}

static void test_loader_dies_and_returns(void **state)
{
	struct sds_client *c;
	struct sds_point *a, *b2;
	struct sds_flag *e;
	struct cfx_counts b;
	__u64 old_key;
	int i;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "dies", 8), 0);
	c = sds_client_open("g", "dies");
	a = sds_point(c, "a");
	b2 = sds_point(c, "b");
	e = fake_entry(&fl, "a");
	fake_set(e, SDS_ACT_DOWNGRADE, 100, fake_now() + 100 * NS, 0, 0);
	assert_true(SDS_INVOKE(a, true, false));
	old_key = fl.key;

	/* A call in progress when the loader dies ... */
	fake_set(e, 0, 0, 0, 0, 0);
	b = cfx_counts_now();
	assert_false(sds_should_downgrade(b2));
	fake_set(e, SDS_ACT_DOWNGRADE, 100, fake_now() + 100 * NS, 0, 0);
	fake_stop(&fl);
	/* Its connection closes: detached at once, not after 2 s. */
	assert_true(cfx_wait_bound(a, false, 500));
	assert_false(cfx_bound(b2));
	for (i = 0; i < 1000; i++)
		assert_false(SDS_INVOKE(a, true, false));
	/* ... ends on the session it started on. */
	sds_downgrade_finally(b2);
	cfx_assert_delta(&b, 1, 1, 0, 0);
	assert_true(site_last_key[SITE_EXIT] == old_key);

	/* A new loader (new epoch) with other ids: found within a second
	 * or so, every point registered again. */
	assert_int_equal(fake_start(&fl2, cfx_run_dir, "g", "dies", 9), 0);
	fake_add_point(&fl2, "zzz");
	fake_add_point(&fl2, "b");
	assert_true(cfx_wait_bound(a, true, 2500));
	assert_true(cfx_wait_bound(b2, true, 500));
	assert_int_equal(fake_registers(&fl2), 1);
	assert_int_equal(fake_id(&fl2, "a"), 2);
	b = cfx_counts_now();
	assert_false(SDS_INVOKE(a, true, false));
	assert_true(site_last_key[SITE_ENTER] == fl2.key);
	fake_set(fake_entry(&fl2, "b"), SDS_ACT_DOWNGRADE, 100,
		 fake_now() + 100 * NS, 0, 0);
	assert_true(SDS_INVOKE(b2, true, false));
	cfx_assert_delta(&b, 1, 1, 0, 1);
	sds_client_close(c);
	fake_stop(&fl2);
}

static void test_late_loader(void **state)
{
	struct sds_client *c;
	struct sds_point *p;

	c = sds_client_open("g", "late");
	p = sds_point(c, "x");
	assert_false(cfx_bound(p));
	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "late", 10), 0);
	/* Looked for once a second. */
	assert_true(cfx_wait_bound(p, true, 2500));
	assert_int_equal(fake_registers(&fl), 1);
	assert_int_equal(fake_id(&fl, "x"), 0);
	fake_set(fake_entry(&fl, "x"), SDS_ACT_DOWNGRADE, 100,
		 fake_now() + 100 * NS, 0, 0);
	assert_true(SDS_INVOKE(p, true, false));
	sds_client_close(c);
	fake_stop(&fl);
}

static void test_point_limit(void **state)
{
	struct sds_client *c;
	struct sds_point *a, *b2;
	struct cfx_counts b;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "limit", 11), 0);
	fl.max_points = 1;
	c = sds_client_open("g", "limit");
	a = sds_point(c, "a");
	b2 = sds_point(c, "b");		/* refused by the loader */
	assert_non_null(b2);
	assert_true(cfx_bound(a));
	assert_false(cfx_bound(b2));
	b = cfx_counts_now();
	assert_false(SDS_INVOKE(b2, true, false));
	assert_false(SDS_INVOKE(a, true, false));
	cfx_assert_delta(&b, 1, 1, 0, 0);
	/* The session survives a refusal. */
	assert_int_equal(fake_conns(&fl), 1);
	sds_client_close(c);
	fake_stop(&fl);
}

static void test_fork(void **state)
{
	struct sds_client *c;
	struct sds_point *p;
	struct sds_flag *e;
	struct cfx_counts b;
	int status, i;
	__u32 slot;
	pid_t pid;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "fork", 12), 0);
	c = sds_client_open("g", "fork");
	p = sds_point(c, "x");
	e = fake_entry(&fl, "x");
	slot = c->sess->slot;
	fake_set(e, SDS_ACT_DOWNGRADE, 100, fake_now() + 100 * NS, 0, 0);
	/*
	 * Let the threads just created (the client's, the stand-in's) start
	 * first: forked while ASan's runtime was starting one, the child's
	 * new thread never ran (seen with Debian 12's libasan, about one run
	 * in two with this file's order of tests; never without ASan).
	 */
	cfx_sleep_ms(100);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Not registered: the parent's session is not ours. */
		if (cfx_bound(p) && p->bind->sess->slot == slot)
			_exit(2);
		for (i = 0; i < 300 && !cfx_bound(p); i++)
			cfx_sleep_ms(10);
		if (!cfx_bound(p))
			_exit(3);
		if (c->sess->slot == slot)
			_exit(4);
		if (!SDS_INVOKE(p, true, false))
			_exit(5);
		sds_client_close(c);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The child registered itself, with its own pid. */
	assert_int_equal(fake_registers(&fl), 2);
	assert_int_equal(fl.last_pid, pid);
	/* The parent's session is untouched. */
	assert_true(cfx_bound(p));
	assert_int_equal(c->sess->slot, slot);
	for (i = 0; i < 100 && fake_conns(&fl) != 1; i++)
		cfx_sleep_ms(10);
	assert_int_equal(fake_conns(&fl), 1);
	assert_true(SDS_INVOKE(p, true, false));
	fake_set(e, 0, 0, 0, 0, 0);
	b = cfx_counts_now();
	assert_false(SDS_INVOKE(p, true, false));
	cfx_assert_delta(&b, 1, 1, 0, 0);
	sds_client_close(c);
	fake_stop(&fl);
}

static void test_close_aborts_hung_register(void **state)
{
	struct sds_client *c;
	struct timespec a, b;
	double ms;
	int i;

	c = sds_client_open("g", "hung");
	sds_point(c, "x");
	/* A loader that takes the request and never answers: the thread
	 * waits in its register (up to 5 s) ... */
	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "hung", 13), 0);
	fl.hang_register = true;
	for (i = 0; i < 250 && !fake_registers(&fl); i++)
		cfx_sleep_ms(10);
	assert_int_equal(fake_registers(&fl), 1);
	/* ... and close does not wait for it. */
	clock_gettime(CLOCK_MONOTONIC, &a);
	sds_client_close(c);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
	assert_true(ms < 500);
	fake_stop(&fl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stale_loader),
		cmocka_unit_test(test_loader_dies_and_returns),
		cmocka_unit_test(test_late_loader),
		cmocka_unit_test(test_point_limit),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_close_aborts_hung_register),
	};

	return cmocka_run_group_tests(tests, cfx_setup, cfx_teardown);
}
