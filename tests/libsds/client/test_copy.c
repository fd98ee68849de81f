// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * sds_copy() against a stand-in loader (fakeloader.c) with counting probe
 * sites (fake_sites.c), the copy word written by the loader's own writer,
 * flags__set_copy(): off, the copy site is never called; on, it is called
 * once per sds_copy() with exactly the point's id, the buffer and the
 * length; a NULL or invalid point is EINVAL, a detached one copies
 * nothing.  Built with ASan and UBSan.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake/client_fixture.h"
#include "fake/fakeloader.h"
#include "publish/flags.h"		/* the loader's writer: flags__set_copy() */
#include "libsds.h"

#define CALLS	1000

static struct fake_loader fl;
/* The loader's view of the stand-in's region, for flags__set_copy(). */
static struct flags_region fr;

/* Start the stand-in for g.@app; the client and its point @name. */
static struct sds_point *start(const char *app, const char *name,
			       struct sds_client **c)
{
	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", app, 11), 0);
	fr.mem = fl.region;
	*c = sds_client_open("g", app);
	assert_non_null(*c);
	return sds_point(*c, name);
}

/* Off (the stand-in never wrote the word, as an older loader): no call. */
static void test_copy_off(void **state)
{
	struct sds_client *c;
	struct sds_point *p;
	char buf[64];
	__u64 total;
	int i;

	p = start("off", "req", &c);
	assert_true(cfx_bound(p));
	total = site_copy_total();
	for (i = 0; i < CALLS; i++)
		assert_int_equal(sds_copy(p, buf, sizeof(buf)), 0);
	flags__set_copy(&fr, fake_id(&fl, "req"), true);
	flags__set_copy(&fr, fake_id(&fl, "req"), false);
	for (i = 0; i < CALLS; i++)
		assert_int_equal(sds_copy(p, buf, sizeof(buf)), 0);
	assert_int_equal(site_copy_total() - total, 0);
	sds_client_close(c);
	fake_stop(&fl);
}

/* On: each call reaches the site with exactly its id, buffer and length. */
static void test_copy_on(void **state)
{
	struct sds_client *c;
	struct sds_point *p, *q;
	char bufs[CALLS][8];
	__u64 total, np, nq;
	int i, id, qid;

	p = start("on", "req", &c);
	q = sds_point(c, "other");
	id = fake_id(&fl, "req");
	qid = fake_id(&fl, "other");
	assert_true(id >= 0 && qid >= 0 && id != qid);
	np = site_copy_count(id);
	nq = site_copy_count(qid);
	total = site_copy_total();

	flags__set_copy(&fr, id, true);
	assert_int_equal(fake_entry(&fl, "req")->copy, 1);
	assert_int_equal(fake_entry(&fl, "other")->copy, 0);
	for (i = 0; i < CALLS; i++) {
		assert_int_equal(sds_copy(p, bufs[i], 1 + i), 0);
		assert_int_equal(site_copy_last.id, id);
		assert_ptr_equal(site_copy_last.buf, bufs[i]);
		assert_int_equal(site_copy_last.len, 1 + i);
		/* The other point stays off. */
		assert_int_equal(sds_copy(q, bufs[i], 8), 0);
	}
	/* NULL buffers and zero lengths are passed on as they are. */
	assert_int_equal(sds_copy(p, NULL, 0), 0);
	assert_null(site_copy_last.buf);
	assert_int_equal(site_copy_last.len, 0);
	assert_int_equal(site_copy_count(id) - np, CALLS + 1);
	assert_int_equal(site_copy_count(qid) - nq, 0);
	assert_int_equal(site_copy_total() - total, CALLS + 1);

	/* Off again: not one call more. */
	flags__set_copy(&fr, id, false);
	for (i = 0; i < CALLS; i++)
		assert_int_equal(sds_copy(p, bufs[i], 8), 0);
	assert_int_equal(site_copy_total() - total, CALLS + 1);
	sds_client_close(c);
	fake_stop(&fl);
}

/*
 * sds_copy_response(): the copy_ret site, with its id, buffer and length,
 * exactly while the point copies; never the request's site.
 */
static void test_copy_response(void **state)
{
	struct sds_client *c;
	struct sds_point *p;
	char req[8], resp[CALLS][4];
	__u64 total;
	int i, id;

	p = start("resp", "req", &c);
	id = fake_id(&fl, "req");
	memset(&site_copy_ret_last, 0, sizeof(site_copy_ret_last));
	/* Off: nothing reaches the site. */
	assert_int_equal(sds_copy_response(p, resp[0], 4), 0);
	assert_null(site_copy_ret_last.buf);
	flags__set_copy(&fr, id, true);
	total = site_copy_total();
	for (i = 0; i < CALLS; i++) {
		assert_int_equal(sds_copy(p, req, sizeof(req)), 0);
		assert_int_equal(sds_copy_response(p, resp[i], 1 + i % 4), 0);
		assert_int_equal(site_copy_ret_last.id, id);
		assert_ptr_equal(site_copy_ret_last.buf, resp[i]);
		assert_int_equal(site_copy_ret_last.len, 1 + i % 4);
	}
	/* The request site counted the requests only. */
	assert_int_equal(site_copy_total() - total, CALLS);
	flags__set_copy(&fr, id, false);
	site_copy_ret_last.buf = NULL;
	assert_int_equal(sds_copy_response(p, resp[0], 4), 0);
	assert_null(site_copy_ret_last.buf);
	/* A NULL point is refused as sds_copy() refuses it. */
	errno = 0;
	assert_int_equal(sds_copy_response(NULL, resp[0], 4), -1);
	assert_int_equal(errno, EINVAL);
	sds_client_close(c);
	fake_stop(&fl);
}

/*
 * The word is not under the entry's seq: a loader killed in the middle
 * of a publish (seq odd for good) still has its copy word obeyed, and an
 * sds_copy() inside a guarded call changes nothing of the call's counts.
 */
static void test_copy_no_seq(void **state)
{
	struct sds_client *c;
	struct sds_point *p;
	struct sds_flag *e;
	__u64 total, enter, exit_;
	char buf[16] = "";

	p = start("seq", "req", &c);
	e = fake_entry(&fl, "req");
	flags__set_copy(&fr, fake_id(&fl, "req"), true);
	__atomic_store_n(&e->seq, e->seq | 1, __ATOMIC_RELEASE);
	total = site_copy_total();
	enter = site_total(SITE_ENTER);
	exit_ = site_total(SITE_EXIT);
	assert_false(sds_should_downgrade(p));
	assert_int_equal(sds_copy(p, buf, sizeof(buf)), 0);
	sds_downgrade_finally(p);
	assert_int_equal(site_copy_total() - total, 1);
	assert_int_equal(site_total(SITE_ENTER) - enter, 1);
	assert_int_equal(site_total(SITE_EXIT) - exit_, 1);
	sds_client_close(c);
	fake_stop(&fl);
}

/* Out-of-range ids are ignored by the writer: nothing else changes. */
static void test_set_copy_range(void **state)
{
	static struct flags_region f;
	static char mem[(SDS_FLAGS_ELEMS + 1) * SDS_FLAG_SIZE];
	static char zero[sizeof(mem)];

	f.mem = mem;
	flags__set_copy(&f, -1, true);
	flags__set_copy(&f, SDS_MAX_POINTS, true);
	assert_memory_equal(mem, zero, sizeof(mem));
	flags__set_copy(&f, SDS_MAX_POINTS - 1, true);
	assert_int_equal(mem[SDS_MAX_POINTS * SDS_FLAG_SIZE +
			     offsetof(struct sds_flag, copy)], 1);
}

/* NULL and invalid points: EINVAL; detached ones: 0 and no call. */
static void test_copy_closed(void **state)
{
	struct sds_client *c, *none;
	struct sds_point *p, *bad, *lone;
	char buf[16] = "";
	__u64 total;

	errno = 0;
	assert_int_equal(sds_copy(NULL, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EINVAL);

	p = start("closed", "req", &c);
	bad = sds_point(c, "no spaces allowed");
	assert_non_null(bad);
	errno = 0;
	assert_int_equal(sds_copy(bad, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EINVAL);

	/* The loader goes away with the word on: its session is closed. */
	flags__set_copy(&fr, fake_id(&fl, "req"), true);
	total = site_copy_total();
	assert_int_equal(sds_copy(p, buf, sizeof(buf)), 0);
	assert_int_equal(site_copy_total() - total, 1);
	fake_stop(&fl);
	assert_true(cfx_wait_bound(p, false, 500));
	assert_int_equal(sds_copy(p, buf, sizeof(buf)), 0);
	assert_int_equal(site_copy_total() - total, 1);
	sds_client_close(c);

	/* A client that never found a loader. */
	none = sds_client_open("g", "nobody");
	lone = sds_point(none, "req");
	assert_false(cfx_bound(lone));
	assert_int_equal(sds_copy(lone, buf, sizeof(buf)), 0);
	assert_int_equal(site_copy_total() - total, 1);
	sds_client_close(none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_off),
		cmocka_unit_test(test_copy_on),
		cmocka_unit_test(test_copy_response),
		cmocka_unit_test(test_copy_no_seq),
		cmocka_unit_test(test_set_copy_range),
		cmocka_unit_test(test_copy_closed),
	};

	return cmocka_run_group_tests(tests, cfx_setup, cfx_teardown);
}
