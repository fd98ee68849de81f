// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/kernel/calib.c: the probe-cost measurement's arithmetic
 * (medians of alternating rounds, the site costs from them) and its
 * per-boot cache (damaged, foreign and other boots' files).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <stdio.h>
#include <string.h>

#include "kernel/calib.h"

#define BOOT	"ee8928c7-dd46-4eab-b312-062bad7df945"
#define BOOT2	"0b4e6a6e-2f57-4c1a-9d8e-7d1c1bde1a11"

static void test_median(void **state)
{
	uint64_t one[] = { 7 };
	uint64_t odd[] = { 9, 1, 5, 3, 7 };
	uint64_t even[] = { 40, 10, 30, 20 };
	uint64_t same[] = { 4, 4, 4 };

	assert_int_equal(calib__median(one, 1), 7);
	assert_int_equal(calib__median(odd, 5), 5);
	/* Even: the lower middle, never a mean that no round measured. */
	assert_int_equal(calib__median(even, 4), 20);
	assert_int_equal(calib__median(same, 3), 4);
}

static void test_per_call(void **state)
{
	/* 1000 calls a round: ~700 ns a call, two rounds preempted. */
	const struct calib_round r[CALIB_ROUNDS] = {
		{ 701000, 1200 }, { 699000, 1100 }, { 5000000, 1000 },
		{ 702000, 1300 }, { 700500, 800000 }, { 698000, 1000 },
		{ 703000, 1000 }, { 701500, 1500 }, { 700000, 1000 },
	};
	/* The twin slower than the probed side: that round counts as 0. */
	const struct calib_round neg[3] = {
		{ 1000, 5000 }, { 3000, 1000 }, { 4000, 1000 },
	};
	const struct calib_round none[2] = { { 1000, 1000 }, { 900, 1000 } };

	/*
	 * Differences: 699800 697900 4999000 700700 0 697000 702000
	 * 700000 699000; sorted, the 5th is 699800: 699.8 -> 700.
	 */
	assert_int_equal(calib__per_call(r, CALIB_ROUNDS, 1000), 700);
	/* Differences 0, 2000, 3000 over 10 calls: 200. */
	assert_int_equal(calib__per_call(neg, 3, 10), 200);
	/* Rounded to the nearest ns: 2000 / 3 = 666.7. */
	assert_int_equal(calib__per_call(neg, 3, 3), 667);
	/* Nothing above zero: 0, which calib__costs() refuses. */
	assert_int_equal(calib__per_call(none, 2, 10), 0);
	assert_int_equal(calib__per_call(r, 0, 1000), 0);
	assert_int_equal(calib__per_call(r, CALIB_ROUNDS, 0), 0);
}

static void test_costs(void **state)
{
	const unsigned int ns[CALIB_NTESTS] = {
		[CALIB_NOP5_ENTRY] = 1940, [CALIB_NOP5_PAIR] = 3394,
		[CALIB_EMU_PAIR] = 7102, [CALIB_STEP_PAIR] = 20867,
	};
	unsigned int bad[CALIB_NTESTS];
	struct site_costs c;

	memset(&c, 0xa5, sizeof(c));
	assert_int_equal(calib__costs(ns, &c), 0);
	assert_int_equal(c.measured, 1);
	assert_int_equal(c.uret_ns, 1454);
	assert_int_equal(c.probe_ns[SITE_NOP5], 1940);
	assert_int_equal(c.probe_ns[SITE_EMULATED], 5648);
	assert_int_equal(c.probe_ns[SITE_STEPPED], 19413);

	/* A return that costs nothing: the pair no dearer than its entry. */
	memcpy(bad, ns, sizeof(bad));
	bad[CALIB_NOP5_PAIR] = 1940;
	memset(&c, 0xa5, sizeof(c));
	assert_int_equal(calib__costs(bad, &c), -1);
	assert_int_equal(c.uret_ns, 0xa5a5a5a5);	/* untouched */
	/* An emulated pair cheaper than the return alone. */
	memcpy(bad, ns, sizeof(bad));
	bad[CALIB_EMU_PAIR] = 1454;
	assert_int_equal(calib__costs(bad, &c), -1);
	/* A stepped site cheaper than a nop5. */
	memcpy(bad, ns, sizeof(bad));
	bad[CALIB_STEP_PAIR] = 3000;
	assert_int_equal(calib__costs(bad, &c), -1);
	/* A timing that failed (0) or over 1 ms a firing. */
	memcpy(bad, ns, sizeof(bad));
	bad[CALIB_NOP5_ENTRY] = 0;
	assert_int_equal(calib__costs(bad, &c), -1);
	memcpy(bad, ns, sizeof(bad));
	bad[CALIB_STEP_PAIR] = 1002000;
	assert_int_equal(calib__costs(bad, &c), -1);
}

static const struct site_costs measured = {
	.probe_ns = { [SITE_NOP5] = 1940, [SITE_EMULATED] = 5648,
		      [SITE_STEPPED] = 19413 },
	.uret_ns = 1454,
	.measured = 1,
};

static void test_format_parse(void **state)
{
	char buf[512];
	struct site_costs c;
	int n;

	n = calib__format(&measured, BOOT, buf, sizeof(buf));
	assert_int_equal(n, (int)strlen(buf));
	assert_string_equal(buf, "sds-bpf calib 1\nboot_id " BOOT "\n"
			    "nop5 1940\nemulated 5648\nstepped 19413\nuret 1454\n");
	memset(&c, 0, sizeof(c));
	assert_int_equal(calib__parse(buf, BOOT, &c), 0);
	assert_memory_equal(&c, &measured, sizeof(c));
	/* Line order is free, a missing last newline too. */
	assert_int_equal(calib__parse("uret 1454\nstepped 19413\nsds-bpf calib 1\n"
				      "emulated 5648\nboot_id " BOOT "\nnop5 1940",
				      BOOT, &c), 0);
	assert_memory_equal(&c, &measured, sizeof(c));
	/* Too small a buffer: -1, not a cut file. */
	assert_int_equal(calib__format(&measured, BOOT, buf, 40), -1);
}

/* Each text must be refused and leave @out alone. */
static void refused(const char *text, const char *boot)
{
	struct site_costs c;

	memset(&c, 0xa5, sizeof(c));
	assert_int_equal(calib__parse(text, boot, &c), -1);
	assert_int_equal(c.uret_ns, 0xa5a5a5a5);
}

#define HEAD	"sds-bpf calib 1\nboot_id " BOOT "\n"

static void test_parse_refuses(void **state)
{
	/* Another boot's figures: measured on another kernel, maybe. */
	refused(HEAD "nop5 1940\nemulated 5648\nstepped 19413\nuret 1454\n", BOOT2);
	refused("sds-bpf calib 1\nboot_id " BOOT2 "\nnop5 1940\nemulated 5648\n"
		"stepped 19413\nuret 1454\n", BOOT);
	/* Damaged: cut short, a figure missing, a bad number, no magic. */
	refused(HEAD "nop5 1940\nemulated 5648\nstepped 19413\n", BOOT);
	refused(HEAD "nop5 1940\nemulated 5648\nstepped 194", BOOT "x");
	refused(HEAD "nop5 1940\nemulated 56x8\nstepped 19413\nuret 1454\n", BOOT);
	refused(HEAD "nop5 1940\nemulated -5\nstepped 19413\nuret 1454\n", BOOT);
	refused(HEAD "nop5 1940\nemulated \nstepped 19413\nuret 1454\n", BOOT);
	refused(HEAD "nop5 0\nemulated 5648\nstepped 19413\nuret 1454\n", BOOT);
	refused(HEAD "nop5 1940\nemulated 5648\nstepped 1000001\nuret 1454\n", BOOT);
	refused(HEAD "nop5 1940\nemulated 5648\nstepped 99999999999999999999\nuret 1454\n", BOOT);
	refused("boot_id " BOOT "\nnop5 1940\nemulated 5648\nstepped 19413\nuret 1454\n", BOOT);
	refused("sds-bpf calib 2\nboot_id " BOOT "\nnop5 1940\nemulated 5648\n"
		"stepped 19413\nuret 1454\n", BOOT);
	/* Foreign: another file, or ours with a line we did not write. */
	refused("sds-bpf forkcheck 1\nboot_id " BOOT "\nresult fine\n", BOOT);
	refused(HEAD "nop5 1940\nemulated 5648\nstepped 19413\nuret 1454\nret 3\n", BOOT);
	refused(HEAD "nop5  1940\nemulated 5648\nstepped 19413\nuret 1454\n", BOOT);
	refused("", BOOT);
	refused("\n\n\n", BOOT);
}

static void test_describe(void **state)
{
	struct calib c;
	char line[512];

	memset(&c, 0, sizeof(c));
	c.costs = measured;
	calib__describe(&c, "/run/sds", line, sizeof(line));
	assert_string_equal(line, "probe costs: measured this boot (now, cached in /run/sds/.calib): a pair ~3394 ns on a nop5, ~7102 emulated, ~20867 stepped; the return half ~1454");
	c.cached = true;
	calib__describe(&c, "/run/sds", line, sizeof(line));
	assert_string_equal(line, "probe costs: measured this boot (cached in /run/sds/.calib): a pair ~3394 ns on a nop5, ~7102 emulated, ~20867 stepped; the return half ~1454");

	/* Not measured: §3's figures, which test_site.c pins. */
	site_costs_set(NULL);
	memset(&c, 0, sizeof(c));
	c.costs = *site_costs_get();
	snprintf(c.detail, sizeof(c.detail), "loading BPF programs: Operation not permitted");
	calib__describe(&c, "/run/sds", line, sizeof(line));
	assert_string_equal(line, "probe costs: docs/DESIGN.md §3's figures (loading BPF programs: Operation not permitted): a pair ~700 ns on a nop5, ~1000 emulated, ~20500 stepped");

	/* site_costs_set() then serves them to the budget. */
	site_costs_set(&measured);
	assert_int_equal(site_cost_ns(SITE_STEPPED), 20867);
	assert_int_equal(site_probe_ns(SITE_NOP5), 1940);
	site_costs_set(NULL);
	assert_int_equal(site_cost_ns(SITE_STEPPED), 20500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_per_call),
		cmocka_unit_test(test_costs),
		cmocka_unit_test(test_format_parse),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_describe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
