// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The balancing API of sds.h (libsds/lb.c) with policies of the
 * extension registry (libsds/lb_ext.c, docs/EXTENSIONS.md), against the
 * stand-in loader: a plugin built here as a user builds one (cc -shared
 * -fPIC, tests/unit/common/ext_plugin.c) and named in a manifest of a private
 * SDS_EXT_DIR is opened by name with sds_lb_open() and skips a downgraded
 * provider; a wrapper counts every pick of a built-in opened that way; an
 * unknown name is refused with the registry's list; a plugin's wrong
 * answers are never returned (balance.c's random over the providers that
 * pass instead, counted); without a manifest dir the built-ins are as
 * ever.  ASan + UBSan.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake/client_fixture.h"
#include "ext/ext.h"
#include "fake/fakeloader.h"
#include "lb_ext.h"

#define SEED	0x5d5b1a5eULL

static struct fake_loader fl;
static char tmp[256];		/* plugins, then one SDS_EXT_DIR per case */
static char lib_good[300], lib_wild[300];
static char dir[300];		/* this case's SDS_EXT_DIR */
static int ncase;

static void quiet(const char *line)
{
	(void)line;
}

/* Build ext_plugin.c's PART @part into @out, as a user would. */
static void build_plugin(int part, const char *out)
{
	char here[512], cmd[2048];
	const char *d;

	/* __FILE__ is as make named it: run from the top of the tree. */
	snprintf(here, sizeof(here), "%s", __FILE__);
	d = dirname(here);
	snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -O1 -DPART=%d -I%s/../../../libsds "
		 "-o %s %s/../../unit/common/ext_plugin.c", part, d, out, d);
	if (system(cmd)) {
		fprintf(stderr, "test_lb_ext: %s failed\n", cmd);
		exit(1);
	}
	chmod(out, 0755);
}

static int setup_all(void **state)
{
	snprintf(tmp, sizeof(tmp), "/tmp/sds-test-lbext.XXXXXX");
	if (!mkdtemp(tmp) || chmod(tmp, 0755))
		return -1;
	snprintf(lib_good, sizeof(lib_good), "%s/libgood.so", tmp);
	snprintf(lib_wild, sizeof(lib_wild), "%s/libwild.so", tmp);
	build_plugin(1, lib_good);
	build_plugin(5, lib_wild);
	return cfx_setup(state);
}

static int teardown_all(void **state)
{
	char cmd[400];
	int r = cfx_teardown(state);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) || r ? -1 : 0;
}

/* A fresh registry over a fresh SDS_EXT_DIR holding @text as balancer.ext. */
static void fresh(const char *text)
{
	char path[400];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/d%d", tmp, ncase++);
	assert_int_equal(mkdir(dir, 0755), 0);
	setenv("SDS_EXT_DIR", dir, 1);
	sds_ext_reset();
	sds_ext_set_diag("test", quiet);
	if (!text)
		return;
	snprintf(path, sizeof(path), "%s/balancer.ext", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, 0644);
}

static struct sds_client *lb_client(void)
{
	struct sds_client *c;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "lbx", 1), 0);
	c = sds_client_open("g", "lbx");
	assert_non_null(c);
	return c;
}

/* The balancer over p0..p2, weights 5, 1, 1, with the policy named @policy. */
static struct sds_balancer *lb_open(struct sds_client *c, const char *policy)
{
	static const struct sds_lb_member m[3] = {
		{ "p0", 5, 0 }, { "p1", 1, 0 }, { "p2", 1, 0 },
	};
	struct sds_balancer *b = sds_lb_open(c, "pay", policy, m, 3, NULL);

	if (!b)
		fail_msg("sds_lb_open(%s): %s", policy, sds_lb_error());
	return b;
}

static void downgrade(int i, bool on)
{
	char name[32];
	struct sds_flag *e;

	snprintf(name, sizeof(name), "pay@p%d", i);
	e = fake_entry(&fl, name);
	assert_non_null(e);
	fake_set(e, on ? SDS_ACT_DOWNGRADE : 0, 100, on ? fake_now() + 60 * NS : 0, 0, 0);
}

static void close_all(struct sds_balancer *b, struct sds_client *c)
{
	sds_lb_close(b);
	sds_client_close(c);
	fake_stop(&fl);
}

/* The plugin's pick counter (count_wrapper), as loaded by the registry. */
static unsigned long *count_picks(void)
{
	void *dl = dlopen(lib_good, RTLD_NOW | RTLD_NOLOAD);
	unsigned long *p;

	assert_non_null(dl);
	p = dlsym(dl, "count_picks");
	assert_non_null(p);
	dlclose(dl);
	return p;
}

/* "mine" (the last provider that passes) by name, through the public API. */
static void test_plugin_by_name(void **state)
{
	char text[700];
	struct sds_client *c;
	struct sds_balancer *b;
	int i;

	(void)state;
	snprintf(text, sizeof(text), "mine = %s:mine_balancer\n", lib_good);
	fresh(text);
	c = lb_client();
	b = lb_open(c, "mine");
	for (i = 0; i < 100; i++)
		assert_int_equal(sds_lb_choose(b, NULL, 0), 2);
	downgrade(2, true);
	for (i = 0; i < 100; i++)
		assert_int_equal(sds_lb_choose(b, NULL, 0), 1);
	downgrade(1, true);
	assert_int_equal(sds_lb_choose(b, NULL, 0), 0);
	downgrade(0, true);
	errno = 0;
	assert_int_equal(sds_lb_choose(b, NULL, 0), -1);
	assert_int_equal(errno, EAGAIN);
	downgrade(0, false);
	downgrade(1, false);
	downgrade(2, false);
	assert_int_equal(sds_lb_choose(b, NULL, 0), 2);
	assert_int_equal(sds_lb_ext_refused(b), 0);
	close_all(b, c);
}

/* wrap.balancer counts every pick of a built-in opened by name: N of N. */
static void test_wrapper_counts(void **state)
{
	static const char *const pols[] = { "random", "round_robin", "least_active",
					    "shortest_response", "consistent_hash" };
	static const int rr[7] = { 0, 0, 1, 0, 2, 0, 0 };	/* 5, 1, 1 */
	unsigned long before;
	char text[700];
	struct sds_client *c;
	unsigned int k;
	int i, r;

	(void)state;
	snprintf(text, sizeof(text), "wrap.balancer = %s:count_wrapper\n", lib_good);
	fresh(text);
	c = lb_client();
	sds_lb_seed(SEED);
	for (k = 0; k < sizeof(pols) / sizeof(pols[0]); k++) {
		struct sds_balancer *b = lb_open(c, pols[k]);

		before = *count_picks();
		for (i = 0; i < 1000; i++) {
			r = sds_lb_choose(b, &i, sizeof(i));
			assert_in_range(r, 0, 2);
			if (k == 1)	/* wrapped, round_robin is still itself */
				assert_int_equal(r, rr[i % 7]);
		}
		assert_int_equal(*count_picks() - before, 1000);
		/* Still never a downgraded provider. */
		downgrade(0, true);
		for (i = 0; i < 300; i++)
			assert_int_not_equal(sds_lb_choose(b, &i, sizeof(i)), 0);
		downgrade(0, false);
		assert_int_equal(*count_picks() - before, 1300);
		assert_int_equal(sds_lb_ext_refused(b), 0);
		sds_lb_close(b);
	}
	sds_client_close(c);
	fake_stop(&fl);
}

/* An unknown name: NULL, EINVAL and the registry's list, plugins included. */
static void test_unknown(void **state)
{
	static const struct sds_lb_member m[2] = { { "p0", 1, 0 }, { "p1", 1, 0 } };
	struct sds_client *c = sds_client_open("g", "nobody");	/* detached */
	char text[700];

	(void)state;
	assert_non_null(c);
	snprintf(text, sizeof(text), "mine = %s:mine_balancer\n", lib_good);
	fresh(text);
	errno = 0;
	assert_null(sds_lb_open(c, "pay", "nope", m, 2, NULL));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(sds_lb_error(),
			    "unknown balancer \"nope\" (known: random, round_robin, "
			    "least_active, shortest_response, consistent_hash, mine)");
	/* The providers are checked for a plugin too, by balance.c. */
	errno = 0;
	assert_null(sds_lb_open(c, "pay", "mine",
				(struct sds_lb_member[2]){ { "p0", 1, 0 }, { "p0", 1, 0 } },
				2, NULL));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(sds_lb_error(), "providers 0 and 1: both named p0");
	sds_client_close(c);
}

/*
 * A plugin's wrong answers -- out of range (n), a stray -1, a downgraded
 * provider -- are never returned: balance.c's random over the providers
 * that pass is, and each is counted.
 */
static void test_wrong_answers(void **state)
{
	char text[700];
	struct sds_client *c;
	struct sds_balancer *b;
	long got[3] = { 0 };
	int i, r;

	(void)state;
	snprintf(text, sizeof(text), "wild = %s:wild_balancer\n", lib_wild);
	fresh(text);
	c = lb_client();
	b = lb_open(c, "wild");
	sds_lb_seed(SEED);
	/* p0 downgraded: each of the three answers is wrong. */
	downgrade(0, true);
	for (i = 0; i < 3000; i++) {
		r = sds_lb_choose(b, NULL, 0);
		assert_in_range(r, 1, 2);
		got[r]++;
	}
	assert_int_equal(sds_lb_ext_refused(b), 3000);
	/* Said once, the first (answer n), kept with the registry's problems. */
	assert_non_null(sds_ext_problem(0));
	assert_string_equal(sds_ext_problem(0), "balancer \"wild\" answered 3 for 3 "
			    "providers: a random pick is used instead (counted)");
	assert_null(sds_ext_problem(1));
	/* Random over p1 and p2 (1, 1): each within 6 sigma of 1500. */
	assert_in_range(got[1], 1500 - 165, 1500 + 165);
	/* None passes: -1 EAGAIN, the plugin's answers refused all the same. */
	downgrade(1, true);
	downgrade(2, true);
	for (i = 0; i < 3; i++) {
		errno = 0;
		assert_int_equal(sds_lb_choose(b, NULL, 0), -1);
		assert_int_equal(errno, EAGAIN);
	}
	assert_int_equal(sds_lb_ext_refused(b), 3003);
	/* All pass: "0" is a right answer now, n and -1 still not. */
	downgrade(0, false);
	downgrade(1, false);
	downgrade(2, false);
	for (i = 0; i < 300; i++)
		assert_in_range(sds_lb_choose(b, NULL, 0), 0, 2);
	assert_int_equal(sds_lb_ext_refused(b), 3203);
	close_all(b, c);
}

/* The five built-ins, each through sds_lb_open() as ever, and nothing else. */
static void assert_builtins_only(struct sds_client *c)
{
	static const char *const pols[] = { NULL, "random", "round_robin", "least_active",
					    "shortest_response", "consistent_hash" };
	unsigned int k;
	int i;

	for (k = 0; k < sizeof(pols) / sizeof(pols[0]); k++) {
		struct sds_balancer *b = lb_open(c, pols[k]);

		downgrade(2, true);
		for (i = 0; i < 700; i++)
			assert_in_range(sds_lb_choose(b, &i, sizeof(i)), 0, 1);
		downgrade(2, false);
		assert_int_equal(sds_lb_ext_refused(b), 0);
		sds_lb_close(b);
	}
	errno = 0;
	assert_null(sds_lb_open(c, "pay", "mine",
				(struct sds_lb_member[1]){ { "p0", 1, 0 } }, 1, NULL));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(sds_lb_error(),
			    "unknown balancer \"mine\" (known: random, round_robin, "
			    "least_active, shortest_response, consistent_hash)");
}

/*
 * No manifest dir: SDS_EXT_DIR naming none (said once, kept as the
 * registry's one problem), or unset with no default dir (silent).
 */
static void test_no_manifest_dir(void **state)
{
	struct sds_client *c;
	char gone[400], want[500];

	(void)state;
	fresh(NULL);
	snprintf(gone, sizeof(gone), "%s/none", dir);
	setenv("SDS_EXT_DIR", gone, 1);
	sds_ext_reset();
	sds_ext_set_diag("test", quiet);
	c = lb_client();
	assert_builtins_only(c);
	snprintf(want, sizeof(want), "SDS_EXT_DIR %s: No such file or directory", gone);
	assert_non_null(sds_ext_problem(0));
	assert_string_equal(sds_ext_problem(0), want);
	assert_null(sds_ext_problem(1));

	unsetenv("SDS_EXT_DIR");
	sds_ext_reset();
	sds_ext_set_diag("test", quiet);
	if (access(SDS_EXT_DIR_DEFAULT, F_OK) == 0) {
		/* An installed sds-bpf's plugins may be there: not ours to judge. */
		fprintf(stderr, "test_lb_ext: %s exists: the unset-SDS_EXT_DIR half "
			"is not run\n", SDS_EXT_DIR_DEFAULT);
	} else {
		assert_builtins_only(c);
		assert_null(sds_ext_problem(0));
	}
	sds_client_close(c);
	fake_stop(&fl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plugin_by_name),
		cmocka_unit_test(test_wrapper_counts),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_wrong_answers),
		cmocka_unit_test(test_no_manifest_dir),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
