/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * cmocka_timeout.h - a per-test timeout for the cmocka suites (tests/unit,
 * tests/libsds, tests/admin): a test that hangs (a thread never joined, a
 * fork, the stand-in loader) fails with its name instead of holding
 * `make test` until CI's cap.
 *
 * Included after <cmocka.h>, it replaces cmocka_run_group_tests() (and
 * _name()) with a run of a copy of the group in which every test gets a
 * setup and a teardown of this file's around its own: the setup arms
 * alarm(SDS_TEST_TIMEOUT s, default CMOCKA_TIMEOUT_S) with the test's
 * name, the teardown re-arms it for what follows (the group's teardown).
 * On expiry the SIGALRM handler writes
 *
 *	[  FAILED  ] NAME: timed out after N s (a per-test timeout)
 *
 * and ends the process with status 1: whatever hangs (a lock, a join,
 * a child) cannot hold an exit, where a longjmp back into cmocka could.
 * The tests after it in that binary do not run; the run fails.
 *
 * The timeout is generous (60 s under ASan, where the slowest test takes
 * a few seconds): a deadline against hangs, not a speed.
 */
#ifndef SDS_CMOCKA_TIMEOUT_H
#define SDS_CMOCKA_TIMEOUT_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMOCKA_TIMEOUT_S	60

struct cmocka_timeout_rec {
	const struct CMUnitTest *test;	/* the test as its file gave it */
};

static char cmocka_timeout_msg[512];
static size_t cmocka_timeout_len;
static unsigned int cmocka_timeout_s;
static const struct cmocka_timeout_rec *cmocka_timeout_cur;

static void cmocka_timeout__fire(int sig)
{
	ssize_t r;

	(void)sig;
	r = write(STDERR_FILENO, cmocka_timeout_msg, cmocka_timeout_len);
	(void)r;
	_exit(1);
}

/* Arm the alarm for @what; the message is formatted now, not in the handler. */
static void cmocka_timeout__arm(const char *what)
{
	int n = snprintf(cmocka_timeout_msg, sizeof(cmocka_timeout_msg),
			 "[  FAILED  ] %s: timed out after %u s (a per-test timeout)\n",
			 what, cmocka_timeout_s);

	cmocka_timeout_len = n < 0 ? 0 : (size_t)n < sizeof(cmocka_timeout_msg) ?
			     (size_t)n : sizeof(cmocka_timeout_msg) - 1;
	alarm(cmocka_timeout_s);
}

static int cmocka_timeout__setup(void **state)
{
	const struct cmocka_timeout_rec *rec = *state;

	cmocka_timeout_cur = rec;
	cmocka_timeout__arm(rec->test->name);
	/* The test's own state and setup, as cmocka would have given them. */
	*state = rec->test->initial_state;
	return rec->test->setup_func ? rec->test->setup_func(state) : 0;
}

static int cmocka_timeout__teardown(void **state)
{
	const struct cmocka_timeout_rec *rec = cmocka_timeout_cur;
	int r = rec->test->teardown_func ? rec->test->teardown_func(state) : 0;

	cmocka_timeout__arm("the group's teardown");
	return r;
}

static int cmocka_timeout__run(const char *group, const struct CMUnitTest *tests,
			       size_t n, CMFixtureFunction gsetup,
			       CMFixtureFunction gteardown)
{
	struct cmocka_timeout_rec *rec = calloc(n ? n : 1, sizeof(*rec));
	struct CMUnitTest *t = calloc(n ? n : 1, sizeof(*t));
	struct sigaction sa;
	const char *env = getenv("SDS_TEST_TIMEOUT");
	size_t i;
	int r;

	if (!rec || !t) {
		fprintf(stderr, "cmocka_timeout: out of memory\n");
		exit(1);
	}
	cmocka_timeout_s = env && atoi(env) > 0 ? (unsigned int)atoi(env) :
			   CMOCKA_TIMEOUT_S;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cmocka_timeout__fire;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	for (i = 0; i < n; i++) {
		rec[i].test = &tests[i];
		t[i] = tests[i];
		t[i].setup_func = cmocka_timeout__setup;
		t[i].teardown_func = cmocka_timeout__teardown;
		t[i].initial_state = &rec[i];
	}
	cmocka_timeout__arm("the group's setup");
	r = _cmocka_run_group_tests(group, t, n, gsetup, gteardown);
	alarm(0);
	free(t);
	free(rec);
	return r;
}

#undef cmocka_run_group_tests
#define cmocka_run_group_tests(group_tests, group_setup, group_teardown) \
	cmocka_timeout__run(#group_tests, group_tests, \
			    sizeof(group_tests) / sizeof((group_tests)[0]), \
			    group_setup, group_teardown)

#undef cmocka_run_group_tests_name
#define cmocka_run_group_tests_name(group_name, group_tests, group_setup, \
				    group_teardown) \
	cmocka_timeout__run(group_name, group_tests, \
			    sizeof(group_tests) / sizeof((group_tests)[0]), \
			    group_setup, group_teardown)

#endif /* SDS_CMOCKA_TIMEOUT_H */
