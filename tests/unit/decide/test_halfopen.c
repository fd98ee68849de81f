// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of the half-open phase of N probes (loader/decide/halfopen.c) and
 * of chain_eval() driving it: issue 14, "Half-open".  The slow-call
 * ratio (chain_check) is with the other strategies in test_check.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "chain_fixture.h"

/* ---- halfopen_verdict ----------------------------------------------------- */

static uint64_t gen;	/* the fake snapshots' gen: a new read every call */

static int verdict(struct halfopen_run *h, uint64_t n, uint64_t pct,
		   uint64_t ok, uint64_t failed, uint64_t slow)
{
	return halfopen_verdict(h, n, pct, ok, failed, slow, ++gen);
}

static void test_verdict_same_read(void **state)
{
	struct halfopen_run h = { 0 };

	/* 5 results seen on read 7: reads 7 again (a flush) wait, 8 judges. */
	halfopen_open(&h, 0, 0, 0);
	assert_int_equal(halfopen_verdict(&h, 5, 20, 5, 0, 0, 7), HALFOPEN_WAIT);
	assert_int_equal(h.done_gen, 7);
	assert_int_equal(halfopen_verdict(&h, 5, 20, 5, 0, 0, 7), HALFOPEN_WAIT);
	assert_int_equal(halfopen_verdict(&h, 5, 20, 5, 0, 0, 8), HALFOPEN_CLOSE);
}

static void test_verdict_waits_for_n_and_a_tick(void **state)
{
	struct halfopen_run h = { 0 };

	/* No phase open: nothing to judge. */
	assert_int_equal(verdict(&h, 5, 20, 9, 9, 9), HALFOPEN_WAIT);
	halfopen_open(&h, 10, 3, 100);
	assert_int_equal(h.tag, 1);
	assert_true(h.open);
	assert_true(h.reopen);
	/* 4 of 5 results: wait. */
	assert_int_equal(verdict(&h, 5, 20, 13, 4, 100), HALFOPEN_WAIT);
	/* 5 of 5: wait one tick more for the kernel's slow count... */
	assert_int_equal(verdict(&h, 5, 20, 14, 4, 100), HALFOPEN_WAIT);
	assert_true(h.done_seen);
	/* ... then judge: 1 failed of 5 at 20 %: closed. */
	assert_int_equal(verdict(&h, 5, 20, 14, 4, 100), HALFOPEN_CLOSE);
	assert_false(h.open);
	/* Judged once: the closed phase says nothing more. */
	assert_int_equal(verdict(&h, 5, 20, 14, 4, 100), HALFOPEN_WAIT);
}

static void test_verdict_failures(void **state)
{
	struct halfopen_run h = { 0 };

	/* 2 of 5 failed at 20 %: a new hold. */
	halfopen_open(&h, 0, 0, 0);
	assert_int_equal(verdict(&h, 5, 20, 3, 2, 0), HALFOPEN_WAIT);
	assert_int_equal(verdict(&h, 5, 20, 3, 2, 0), HALFOPEN_FAIL);
	/* 0 %: any failure holds (the rule of one probe). */
	halfopen_open(&h, 3, 2, 0);
	assert_int_equal(h.tag, 2);
	assert_int_equal(verdict(&h, 5, 0, 7, 3, 0), HALFOPEN_WAIT);
	assert_int_equal(verdict(&h, 5, 0, 7, 3, 0), HALFOPEN_FAIL);
	halfopen_open(&h, 7, 3, 0);
	assert_int_equal(verdict(&h, 5, 0, 12, 3, 0), HALFOPEN_WAIT);
	assert_int_equal(verdict(&h, 5, 0, 12, 3, 0), HALFOPEN_CLOSE);
	/* 100 %: even all failed closes. */
	halfopen_open(&h, 0, 0, 0);
	assert_int_equal(verdict(&h, 5, 100, 0, 5, 0), HALFOPEN_WAIT);
	assert_int_equal(verdict(&h, 5, 100, 0, 5, 0), HALFOPEN_CLOSE);
	/* 40 % of 5 is exactly 2: closes; 3 does not. */
	halfopen_open(&h, 0, 0, 0);
	verdict(&h, 5, 40, 3, 2, 0);
	assert_int_equal(verdict(&h, 5, 40, 3, 2, 0), HALFOPEN_CLOSE);
	halfopen_open(&h, 0, 0, 0);
	verdict(&h, 5, 40, 2, 3, 0);
	assert_int_equal(verdict(&h, 5, 40, 2, 3, 0), HALFOPEN_FAIL);
}

static void test_verdict_slow_counts_failed(void **state)
{
	struct halfopen_run h = { 0 };

	/* 5 succeeded, but 2 were slow (the kernel's timeouts): a new hold. */
	halfopen_open(&h, 0, 0, 50);
	verdict(&h, 5, 20, 5, 0, 52);
	assert_int_equal(verdict(&h, 5, 20, 5, 0, 52), HALFOPEN_FAIL);
	/* One slow: 20 %, closed. */
	halfopen_open(&h, 5, 0, 52);
	verdict(&h, 5, 20, 10, 0, 53);
	assert_int_equal(verdict(&h, 5, 20, 10, 0, 53), HALFOPEN_CLOSE);
	/* Failed and slow add up, capped at the results. */
	halfopen_open(&h, 10, 0, 53);
	verdict(&h, 5, 100, 10, 5, 63);
	assert_int_equal(verdict(&h, 5, 100, 10, 5, 63), HALFOPEN_CLOSE);
	/* A slow count that went back (a restart) counts nothing. */
	halfopen_open(&h, 10, 5, 63);
	verdict(&h, 5, 0, 15, 5, 2);
	assert_int_equal(verdict(&h, 5, 0, 15, 5, 2), HALFOPEN_CLOSE);
	/* A result that went missing at the judging tick: wait again. */
	halfopen_open(&h, 0, 0, 0);
	verdict(&h, 5, 0, 5, 0, 0);
	assert_true(h.done_seen);
	assert_int_equal(verdict(&h, 5, 0, 4, 0, 0), HALFOPEN_WAIT);
	assert_false(h.done_seen);
}

static void test_claimed0(void **state)
{
	assert_int_equal(halfopen_claimed0(0), 0);
	assert_int_equal(halfopen_claimed0(1), 1ULL << 32);
	assert_int_equal(halfopen_claimed0(0xffffffffu), 0xffffffffULL << 32);
}

/* ---- chain_eval with N probes --------------------------------------------- */

#define HELD	(SDS_ACT_DOWNGRADE | SDS_ACT_PROBE | SDS_ACT_HALFOPEN)

static struct sds_strategy five(void)
{
	struct sds_strategy st = strat();

	st.exception_threshold = 1;
	st.delay_ms = 30000;
	st.retry_interval_ms = 1000;
	st.probe_calls = 5;
	st.probe_failure_pct = 20;
	return st;
}

static void test_chain_phase_fails_then_closes(void **state)
{
	struct sds_strategy st = five();
	struct chain_state cs = { 0 };
	struct halfopen_run h = { 0 };
	struct flag_state out;

	/* Trips at 1 s: a hold, its first phase opened. */
	assert_false(tick_ho(&cs, &h, &st, counts(1, 1, 0, 0), 1 * SEC, 0, 0, 0, &out));
	assert_int_equal(out.active, HELD);
	assert_int_equal(out.reason, SDS_REASON_EXCEPTION);
	assert_int_equal(out.probe_interval_ns, 1000 * MS);
	assert_int_equal(cs.hold_until_ns, 31 * SEC);
	assert_int_equal(h.tag, 1);
	assert_true(h.open && h.reopen);
	h.reopen = false;	/* what the engine does once it wrote the cells */
	/* 4 results in: held, no new phase. */
	assert_false(tick_ho(&cs, &h, &st, counts(10, 3, 0, 6), 2200 * MS, 2, 2, 0, &out));
	assert_int_equal(out.active, HELD);
	assert_false(h.reopen);
	/* The 5th: 2 of 5 failed.  Judged a tick later: a new hold, new phase. */
	assert_false(tick_ho(&cs, &h, &st, counts(11, 3, 0, 6), 2300 * MS, 3, 2, 0, &out));
	assert_int_equal(cs.hold_until_ns, 31 * SEC);
	assert_false(tick_ho(&cs, &h, &st, counts(11, 3, 0, 6), 2400 * MS, 3, 2, 0, &out));
	assert_int_equal(out.active, HELD);
	assert_int_equal(cs.hold_until_ns, 2400 * MS + 30 * SEC);
	assert_int_equal(h.tag, 2);
	assert_true(h.open && h.reopen);
	assert_int_equal(h.ok_base, 3);
	assert_int_equal(h.failed_base, 2);
	h.reopen = false;
	/* The next phase: 1 of 5 failed: closed, the window starts afresh. */
	assert_false(tick_ho(&cs, &h, &st, counts(20, 4, 0, 10), 3500 * MS, 7, 3, 0, &out));
	assert_true(tick_ho(&cs, &h, &st, counts(20, 4, 0, 10), 3600 * MS, 7, 3, 0, &out));
	assert_false(cs.tripped);
	assert_int_equal(cs.hold_until_ns, 0);
	assert_int_equal(out.active, 0);
	assert_false(h.open);
	assert_int_equal(h.tag, 2);
}

static void test_chain_slow_probes(void **state)
{
	struct sds_strategy st = five();
	struct chain_state cs = { 0 };
	struct halfopen_run h = { 0 };
	struct flag_state out;

	st.timeout_ms = 50;
	tick_ho(&cs, &h, &st, counts(1, 1, 0, 0), 1 * SEC, 0, 0, 40, &out);
	assert_int_equal(h.slow_base, 40);
	/* All 5 succeeded, 2 slow: a new hold. */
	tick_ho(&cs, &h, &st, counts(6, 1, 2, 0), 2500 * MS, 5, 0, 42, &out);
	tick_ho(&cs, &h, &st, counts(6, 1, 2, 0), 2600 * MS, 5, 0, 42, &out);
	assert_int_equal(cs.hold_until_ns, 2600 * MS + 30 * SEC);
	assert_int_equal(h.tag, 2);
	assert_int_equal(h.slow_base, 42);
	/* All 5 fast: closed. */
	tick_ho(&cs, &h, &st, counts(11, 1, 2, 0), 3700 * MS, 10, 0, 42, &out);
	assert_true(tick_ho(&cs, &h, &st, counts(11, 1, 2, 0), 3800 * MS, 10, 0, 42, &out));
	assert_int_equal(out.active, 0);
}

static void test_chain_one_probe_unchanged(void **state)
{
	struct sds_strategy st = five();
	struct chain_state cs = { 0 };
	struct halfopen_run h = { 0 };
	struct flag_state out;

	/* probe_calls 1: no phase, no bit; the first result decides. */
	st.probe_calls = 1;
	tick_ho(&cs, &h, &st, counts(1, 1, 0, 0), 1 * SEC, 0, 0, 0, &out);
	assert_int_equal(out.active, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE);
	assert_int_equal(h.tag, 0);
	assert_false(h.open);
	/* A slow count does not fail a single probe (as before). */
	assert_true(tick_ho(&cs, &h, &st, counts(2, 1, 1, 0), 2 * SEC, 1, 0, 7, &out));
	assert_int_equal(out.active, 0);
	/* Off (SDS_OFF) is one probe too. */
	st.probe_calls = SDS_OFF;
	tick_ho(&cs, &h, &st, counts(3, 2, 1, 0), 3 * SEC, 1, 0, 7, &out);
	assert_int_equal(out.active, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE);
	tick_ho(&cs, &h, &st, counts(4, 2, 1, 0), 4 * SEC, 1, 1, 7, &out);
	assert_int_equal(cs.hold_until_ns, 34 * SEC);
	/* No phase state (NULL): one probe whatever probe_calls says. */
	st.probe_calls = 5;
	memset(&cs, 0, sizeof(cs));
	tick_ho(&cs, NULL, &st, counts(1, 1, 0, 0), 1 * SEC, 0, 0, 0, &out);
	assert_int_equal(out.active, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE);
	assert_true(tick_ho(&cs, NULL, &st, counts(2, 1, 0, 0), 2 * SEC, 1, 0, 0, &out));
}

static void test_chain_phase_ends_with_hold(void **state)
{
	struct sds_strategy st = five();
	struct chain_state cs = { 0 };
	struct halfopen_run h = { 0 };
	struct flag_state out;

	/* Too little traffic: 3 of 5 results when delay_ms ends. */
	tick_ho(&cs, &h, &st, counts(1, 1, 0, 0), 1 * SEC, 0, 0, 0, &out);
	tick_ho(&cs, &h, &st, counts(4, 1, 0, 0), 3 * SEC, 3, 0, 0, &out);
	assert_int_equal(out.active, HELD);
	/* The window no longer trips at the hold's end: closed. */
	assert_false(tick_ho(&cs, &h, &st, counts(3, 0, 0, 0), 31 * SEC, 3, 0, 0, &out));
	assert_int_equal(out.active, 0);
	assert_false(h.open);
	/* Tripping again opens a new phase from the counts of now. */
	tick_ho(&cs, &h, &st, counts(4, 1, 0, 0), 32 * SEC, 3, 0, 0, &out);
	assert_int_equal(out.active, HELD);
	assert_int_equal(h.tag, 2);
	assert_int_equal(h.ok_base, 3);
	/* A hold without an open phase (after an upgrade) opens one. */
	h.open = false;
	h.reopen = false;
	tick_ho(&cs, &h, &st, counts(4, 1, 0, 0), 33 * SEC, 3, 0, 0, &out);
	assert_int_equal(h.tag, 3);
	assert_true(h.open && h.reopen);
	assert_int_equal(out.active, HELD);
}

static void test_chain_no_retry_no_phase(void **state)
{
	struct sds_strategy st = five();
	struct chain_state cs = { 0 };
	struct halfopen_run h = { 0 };
	struct flag_state out;

	st.retry_interval_ms = SDS_OFF;
	tick_ho(&cs, &h, &st, counts(1, 1, 0, 0), 1 * SEC, 0, 0, 0, &out);
	assert_int_equal(out.active, SDS_ACT_DOWNGRADE);
	assert_false(h.open);
	assert_int_equal(h.tag, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict_waits_for_n_and_a_tick),
		cmocka_unit_test(test_verdict_failures),
		cmocka_unit_test(test_verdict_same_read),
		cmocka_unit_test(test_verdict_slow_counts_failed),
		cmocka_unit_test(test_claimed0),
		cmocka_unit_test(test_chain_phase_fails_then_closes),
		cmocka_unit_test(test_chain_slow_probes),
		cmocka_unit_test(test_chain_one_probe_unchanged),
		cmocka_unit_test(test_chain_phase_ends_with_hold),
		cmocka_unit_test(test_chain_no_retry_no_phase),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
