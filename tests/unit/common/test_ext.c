// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of the extension registry (common/ext*.c) through its first
 * user, the balancing policies (libsds/ext_balancer.c): built-ins by
 * name, a user's policy built here with cc -shared -fPIC from
 * ext_plugin.c and found through a manifest, IoC, a wrapper that counts
 * every pick, and every bad manifest and plugin with its exact message,
 * the built-ins still working after each.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ext/ext.h"
#include "../../../libsds/ext_balancer.h"

static char tmp[256];		/* the test's directory: plugins, then a dir per case */
static char lib_good[300], lib_fail[300], lib_crash[300], lib_hang[300];
static char dir[300];		/* this case's SDS_EXT_DIR */
static int ncase;

static void quiet(const char *line)
{
}

/* Build ext_plugin.c's PART @part into @out, as a user would. */
static void build_plugin(int part, const char *out)
{
	char src[512], inc[512], cmd[2048], here[512];
	const char *d;

	/* __FILE__ is as make named it: run from the top of the tree. */
	snprintf(here, sizeof(here), "%s", __FILE__);
	d = dirname(here);
	snprintf(src, sizeof(src), "%s/ext_plugin.c", d);
	snprintf(inc, sizeof(inc), "%s/../../../libsds", d);
	snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -O1 -DPART=%d -I%s -o %s %s",
		 part, inc, out, src);
	if (system(cmd)) {
		fprintf(stderr, "test_ext: %s failed\n", cmd);
		exit(1);
	}
}

static int setup_all(void **state)
{
	snprintf(tmp, sizeof(tmp), "/tmp/sds-test-ext.XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(lib_good, sizeof(lib_good), "%s/libgood.so", tmp);
	snprintf(lib_fail, sizeof(lib_fail), "%s/libfail.so", tmp);
	snprintf(lib_crash, sizeof(lib_crash), "%s/libcrash.so", tmp);
	snprintf(lib_hang, sizeof(lib_hang), "%s/libhang.so", tmp);
	build_plugin(1, lib_good);
	build_plugin(2, lib_fail);
	build_plugin(3, lib_crash);
	build_plugin(4, lib_hang);
	chmod(lib_good, 0755);
	chmod(lib_fail, 0755);
	chmod(lib_crash, 0755);
	chmod(lib_hang, 0755);
	return 0;
}

static int teardown_all(void **state)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) ? -1 : 0;
}

/* A fresh registry over a fresh SDS_EXT_DIR. */
static void fresh(void)
{
	snprintf(dir, sizeof(dir), "%s/d%d", tmp, ncase++);
	assert_int_equal(mkdir(dir, 0755), 0);
	setenv("SDS_EXT_DIR", dir, 1);
	sds_ext_reset();
	sds_ext_set_diag("test", quiet);
}

/* Write manifest @name in the case's dir; returns its path (static). */
static const char *manifest(const char *name, const char *text)
{
	static char path[400];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, 0644);
	return path;
}

/* Round robin over 5, 1, 1 through @b: a a b a c a a. */
static void assert_rr_sequence(const struct sds_ext_balancer *b)
{
	struct sds_ext_provider p[] = { { "a", 5 }, { "b", 1 }, { "c", 1 } };
	static const int want[] = { 0, 0, 1, 0, 2, 0, 0 };
	char err[256];
	void *st;
	int i;

	assert_non_null(b);
	assert_int_equal(b->setup(b, &st, p, 3, UINT64_MAX, err, sizeof(err)), 0);
	for (i = 0; i < 21; i++)
		assert_int_equal(b->pick(b, st, NULL, 0, NULL, 0), want[i % 7]);
	b->teardown(b, st);
}

static void assert_builtins_work(void)
{
	char err[256];

	assert_rr_sequence(sds_ext_balancer("round_robin", err, sizeof(err)));
	assert_non_null(sds_ext_balancer(NULL, err, sizeof(err)));
	assert_non_null(sds_ext_balancer("consistent_hash", err, sizeof(err)));
}

/* The problem @i, exactly. */
static void assert_problem(int i, const char *want)
{
	const char *p = sds_ext_problem(i);

	assert_non_null(p);
	assert_string_equal(p, want);
}

/* Problem @i of the registry is the line @fmt says. */
static void __attribute__((format(printf, 2, 3)))
assert_problemf(int i, const char *fmt, ...)
{
	char want[1400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	assert_problem(i, want);
}

/* Balancer @name is refused with the message @fmt says. */
static void __attribute__((format(printf, 2, 3)))
assert_refusedf(const char *name, const char *fmt, ...)
{
	char want[1400], err[512];
	va_list ap;

	assert_null(sds_ext_balancer(name, err, sizeof(err)));
	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	assert_string_equal(err, want);
}

static void builtins_by_name(void **state)
{
	static const char *const names[] = { "random", "round_robin",
		"least_active", "shortest_response", "consistent_hash" };
	const struct sds_ext_balancer *b;
	char err[256];
	size_t i;

	fresh();
	for (i = 0; i < 5; i++) {
		b = sds_ext_balancer(names[i], err, sizeof(err));
		assert_non_null(b);
		assert_string_equal(b->head.name, names[i]);
		assert_ptr_equal(b, sds_ext_balancer(names[i], err, sizeof(err)));
	}
	assert_ptr_equal(sds_ext_balancer(NULL, err, sizeof(err)),
			 sds_ext_balancer("random", err, sizeof(err)));
	assert_null(sds_ext_balancer("roundrobin", err, sizeof(err)));
	assert_string_equal(err, "unknown balancer \"roundrobin\" (known: random, "
			    "round_robin, least_active, shortest_response, consistent_hash)");
	assert_null(sds_ext_get("framing", "x", err, sizeof(err)));
	assert_string_equal(err, "no extension interface \"framing\" in this program");
	assert_rr_sequence(sds_ext_balancer("round_robin", err, sizeof(err)));
	assert_null(sds_ext_problem(0));
}

static void user_policy_by_name(void **state)
{
	struct sds_ext_provider p[] = { { "a", 1 }, { "b", 1 }, { "c", 1 } };
	struct sds_ext_load load[3] = {};
	const struct sds_ext_balancer *b;
	char text[1024], err[512];
	void *st;

	fresh();
	snprintf(text, sizeof(text),
		 "# a user's policy\n\n  mine = %s:mine_balancer  \n", lib_good);
	manifest("balancer.ext", text);
	b = sds_ext_balancer("mine", err, sizeof(err));
	assert_non_null(b);
	assert_int_equal(b->setup(b, &st, p, 3, 0, err, sizeof(err)), 0);
	assert_int_equal(b->pick(b, st, load, 0, NULL, 0), 2);
	load[2].downgraded = 1;
	assert_int_equal(b->pick(b, st, load, 0, NULL, 0), 1);
	load[0].downgraded = load[1].downgraded = 1;
	assert_int_equal(b->pick(b, st, load, 0, NULL, 0), -ENOENT);
	b->teardown(b, st);
	assert_null(sds_ext_balancer("nope", err, sizeof(err)));
	assert_string_equal(err, "unknown balancer \"nope\" (known: random, "
			    "round_robin, least_active, shortest_response, "
			    "consistent_hash, mine)");
	assert_null(sds_ext_problem(0));
	assert_builtins_work();
}

static void ioc_lookup(void **state)
{
	char text[1024], err[512];

	fresh();
	snprintf(text, sizeof(text), "delegate = %s:delegating_balancer\n", lib_good);
	manifest("balancer.acme.ext", text);
	assert_rr_sequence(sds_ext_balancer("delegate", err, sizeof(err)));
	assert_null(sds_ext_problem(0));
}

static void listing(const struct sds_ext_info *e, void *ctx)
{
	char *out = ctx;
	size_t n = strlen(out);

	snprintf(out + n, 4096 - n, "%s %s %s %s:%d %s %s%s|", e->iface, e->name,
		 e->builtin ? "builtin" : "manifest", e->file, e->line, e->sym,
		 e->state, e->is_default ? " default" : "");
}

static void wrapper_counts_every_pick(void **state)
{
	static const char *const names[] = { "random", "round_robin",
		"least_active", "shortest_response", "consistent_hash", "mine" };
	struct sds_ext_provider p[] = { { "a", 1 }, { "b", 2 }, { "c", 3 } };
	struct sds_ext_load load[3] = {};
	const struct sds_ext_balancer *b;
	unsigned long *picks, before;
	char text[1024], err[512], list[4096] = "", want[4096];
	void *dl, *st;
	size_t i;
	int k;

	fresh();
	snprintf(text, sizeof(text), "mine = %s:mine_balancer\n"
		 "wrap.balancer = %s:count_wrapper\n", lib_good, lib_good);
	manifest("balancer.ext", text);
	for (i = 0; i < 6; i++) {
		b = sds_ext_balancer(names[i], err, sizeof(err));
		assert_non_null(b);
		assert_int_equal(b->setup(b, &st, p, 3, 0, err, sizeof(err)), 0);
		dl = dlopen(lib_good, RTLD_NOW | RTLD_NOLOAD);
		assert_non_null(dl);
		picks = dlsym(dl, "count_picks");
		assert_non_null(picks);
		dlclose(dl);
		before = *picks;
		for (k = 0; k < 1000; k++) {
			load[k % 3].in_flight = k % 5;
			assert_in_range(b->pick(b, st, load, 0, &k, sizeof(k)), 0, 2);
		}
		assert_int_equal(*picks - before, 1000);
		b->teardown(b, st);
	}
	assert_int_equal(sds_ext_list(listing, list), 7);
	snprintf(want, sizeof(want),
		 "balancer random builtin :0  built-in, in use default|"
		 "balancer round_robin builtin :0  built-in, in use|"
		 "balancer least_active builtin :0  built-in, in use|"
		 "balancer shortest_response builtin :0  built-in, in use|"
		 "balancer consistent_hash builtin :0  built-in, in use|"
		 "balancer mine manifest %s/balancer.ext:1 mine_balancer loaded|"
		 "balancer wrap.balancer manifest %s/balancer.ext:2 count_wrapper loaded|",
		 dir, dir);
	assert_string_equal(list, want);
	assert_null(sds_ext_problem(0));
}

static void missing_dir(void **state)
{
	char err[256];

	fresh();
	setenv("SDS_EXT_DIR", "/nonexistent/sds-ext", 1);
	assert_builtins_work();
	assert_problem(0, "SDS_EXT_DIR /nonexistent/sds-ext: No such file or directory");
	assert_null(sds_ext_problem(1));
	assert_null(sds_ext_balancer("mine", err, sizeof(err)));
}

static void malformed_lines(void **state)
{
	char text[2048], err[512], a[400], c[400], *lng;
	size_t i;

	fresh();
	snprintf(text, sizeof(text), "# good, then bad\nmine = %s:mine_balancer\n"
		 "bogus line\nlater = %s:mine_balancer\n", lib_good, lib_good);
	snprintf(a, sizeof(a), "%s", manifest("balancer.a.ext", text));
	manifest("balancer.b.ext", "Bad Name = /x.so:y\n");
	manifest("balancer.c.ext", "rel = lib.so:sym\n");
	manifest("balancer.d.ext", "nosym = /x.so\n");
	manifest("balancer.e.ext", "badsym = /x.so:1abc\n");
	manifest("balancer.f.ext", "random = /x.so:y\n");
	manifest("balancer.g.ext", "wrap.store = /x.so:y\n");
	lng = malloc(2000);
	for (i = 0; i < 1500; i++)
		lng[i] = '#';
	lng[i] = '\0';
	snprintf(c, sizeof(c), "%s", manifest("balancer.h.ext", lng));
	free(lng);
	manifest("store.ext", "ignored = not even parsed\n");
	snprintf(text, sizeof(text), "other = %s:mine_balancer\n", lib_good);
	manifest("balancer.z.ext", text);

	assert_builtins_work();
	assert_problemf(0, "%s:3: expected NAME = /path/lib.so:symbol; "
			"the rest of the file is skipped", a);
	assert_problemf(1, "%s/balancer.b.ext:1: bad name \"Bad Name\": "
			"names are [a-z0-9_-], 1..63 bytes; the rest of the file is skipped", dir);
	assert_problemf(2, "%s/balancer.c.ext:1: lib.so: the library's "
			"path must be absolute; the rest of the file is skipped", dir);
	assert_problemf(3, "%s/balancer.d.ext:1: expected "
			"/path/lib.so:symbol after '=', not \"/x.so\"; the rest of the file is skipped", dir);
	assert_problemf(4, "%s/balancer.e.ext:1: bad symbol \"1abc\": "
			"a C identifier of 1..127 bytes; the rest of the file is skipped", dir);
	assert_problemf(5, "%s/balancer.f.ext:1: balancer \"random\" is "
			"built in already; the rest of the file is skipped", dir);
	assert_problemf(6, "%s/balancer.g.ext:1: wrap.store in a manifest "
			"of balancer (wrap.balancer only); the rest of the file is skipped", dir);
	assert_problemf(7, "%s:1: a line over 1023 bytes; the rest of the "
			"file is skipped", c);
	assert_null(sds_ext_problem(8));
	assert_non_null(sds_ext_balancer("mine", err, sizeof(err)));
	assert_non_null(sds_ext_balancer("other", err, sizeof(err)));
	assert_null(sds_ext_balancer("later", err, sizeof(err)));
	assert_string_equal(err, "unknown balancer \"later\" (known: random, round_robin, "
			    "least_active, shortest_response, consistent_hash, mine, other)");
	assert_builtins_work();
}

static void refused_plugins(void **state)
{
	char text[4096];
	const char *m;

	fresh();
	snprintf(text, sizeof(text),
		 "old = %s:bad_abi\n"
		 "nosym = %s:no_such\n"
		 "store = %s:not_a_balancer\n"
		 "gone = /nonexistent/lib.so:x\n"
		 "lic = %s:failing_balancer\n"
		 "fine2 = %s:fine_balancer\n"
		 "boom = %s:crashing_balancer\n"
		 "fine3 = %s:fine_balancer\n"
		 "asw = %s:count_wrapper\n",
		 lib_good, lib_good, lib_good, lib_fail, lib_fail, lib_crash,
		 lib_crash, lib_good);
	m = manifest("balancer.ext", text);

	assert_refusedf("old", "balancer \"old\" (%s:1): bad_abi is built "
			"for balancer ABI 99, this program has 1", m);
	assert_builtins_work();

	assert_refusedf("nosym", "balancer \"nosym\" (%s:2): %s has no symbol no_such",
			m, lib_good);

	assert_refusedf("store", "balancer \"store\" (%s:3): not_a_balancer is "
			"a store extension, not a balancer", m);

	assert_refusedf("gone", "balancer \"gone\" (%s:4): /nonexistent/lib.so: "
			"No such file or directory", m);

	assert_refusedf("lic", "balancer \"lic\" (%s:5): init failed: no "
			"licence; nothing else is loaded from %s", m, lib_fail);
	assert_refusedf("fine2", "balancer \"fine2\" (%s:6): not loaded: %s was "
			"refused (balancer \"lic\" (%s:5))", m, lib_fail, m);
	assert_builtins_work();

	assert_refusedf("boom", "balancer \"boom\" (%s:7): init crashed in its "
			"probe (signal 11, Segmentation fault); nothing else is loaded from %s",
			m, lib_crash);
	assert_refusedf("fine3", "balancer \"fine3\" (%s:8): not loaded: %s was "
			"refused (balancer \"boom\" (%s:7))", m, lib_crash, m);

	assert_refusedf("asw", "balancer \"asw\" (%s:9): count_wrapper is a "
			"wrapper, not an implementation", m);
	/* Each said once, as met; asked again, the same line, not said again. */
	assert_refusedf("old", "balancer \"old\" (%s:1): bad_abi is built "
			"for balancer ABI 99, this program has 1", m);
	assert_problemf(0, "balancer \"old\" (%s:1): bad_abi is built "
			"for balancer ABI 99, this program has 1", m);
	assert_non_null(sds_ext_problem(8));
	assert_null(sds_ext_problem(9));
	assert_builtins_work();
}

/*
 * An init that never returns is refused after its probe's 5 s; with
 * SIGCHLD ignored (no exit status to wait for) a good plugin still loads
 * and a crash is still refused.
 */
static void hung_init_and_no_sigchld(void **state)
{
	char text[2048], err[512];
	const char *m;

	fresh();
	snprintf(text, sizeof(text),
		 "hang = %s:hanging_balancer\n"
		 "mine = %s:mine_balancer\n"
		 "boom = %s:crashing_balancer\n",
		 lib_hang, lib_good, lib_crash);
	m = manifest("balancer.ext", text);
	assert_refusedf("hang", "balancer \"hang\" (%s:1): init did not "
			"finish within 5000 ms in its probe; nothing else is loaded from %s",
			m, lib_hang);
	assert_builtins_work();

	signal(SIGCHLD, SIG_IGN);
	assert_non_null(sds_ext_balancer("mine", err, sizeof(err)));
	assert_refusedf("boom", "balancer \"boom\" (%s:3): init died in its "
			"probe; nothing else is loaded from %s", m, lib_crash);
	signal(SIGCHLD, SIG_DFL);
	assert_builtins_work();
}

static void untrusted_files(void **state)
{
	char text[1024], err[512], lib[400], cmd[1400];
	const char *m;

	fresh();
	snprintf(text, sizeof(text), "mine = %s:mine_balancer\n", lib_good);
	m = manifest("balancer.a.ext", text);
	chmod(m, 0664);
	snprintf(lib, sizeof(lib), "%s/libgw.so", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 0757 %s", lib_good, lib, lib);
	assert_int_equal(system(cmd), 0);
	snprintf(text, sizeof(text), "gw = %s:mine_balancer\n", lib);
	manifest("balancer.b.ext", text);

	assert_builtins_work();
	assert_problemf(0, "%s/balancer.a.ext: group-writable: refused "
			"(extensions must be writable by their owner only)", dir);
	assert_null(sds_ext_balancer("mine", err, sizeof(err)));
	assert_refusedf("gw", "balancer \"gw\" (%s/balancer.b.ext:1): %s: "
			"world-writable: refused (extensions must be writable by their owner only)",
			dir, lib);

	/* A directory others may write to: nothing in it is read. */
	fresh();
	manifest("balancer.ext", text);
	chmod(dir, 0775);
	assert_builtins_work();
	assert_problemf(0, "%s: group-writable: refused (extensions must "
			"be writable by their owner only)", dir);
	chmod(dir, 0755);
}

/*
 * A root-owned plugin in a directory someone else owns or may write: that
 * someone could rename another object there between the check and the
 * load, so it is refused, and refused the same for SDS_EXT_DIR itself.
 */
static void untrusted_parents(void **state)
{
	char text[1024], err[512], vend[280], libdir[300], lib[320], cmd[1400];

	snprintf(vend, sizeof(vend), "%s/vendor%d", tmp, ncase);
	snprintf(libdir, sizeof(libdir), "%s/lib", vend);
	snprintf(lib, sizeof(lib), "%s/libv.so", libdir);
	assert_int_equal(mkdir(vend, 0755), 0);
	assert_int_equal(mkdir(libdir, 0755), 0);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 0755 %s", lib_good, lib, lib);
	assert_int_equal(system(cmd), 0);
	snprintf(text, sizeof(text), "v = %s:mine_balancer\n", lib);

	/* Owned by nobody (the file and the directory under it are root's). */
	fresh();
	manifest("balancer.ext", text);
	assert_int_equal(chown(vend, 65534, 65534), 0);
	assert_refusedf("v", "balancer \"v\" (%s/balancer.ext:1): %s: directory %s "
			"is owned by uid 65534: refused (every directory above an "
			"extension must be owned by root)", dir, lib, vend);
	assert_int_equal(chown(vend, 0, 0), 0);

	/* Root's, group-writable. */
	fresh();
	manifest("balancer.ext", text);
	chmod(vend, 0775);
	assert_refusedf("v", "balancer \"v\" (%s/balancer.ext:1): %s: directory %s "
			"is group-writable: refused (every directory above an "
			"extension must be writable by its owner only)", dir, lib, vend);
	chmod(vend, 0755);

	/* Through a symlink: refused, not followed. */
	fresh();
	snprintf(cmd, sizeof(cmd), "ln -s %s %s/link.so", lib, vend);
	assert_int_equal(system(cmd), 0);
	snprintf(text, sizeof(text), "v = %s/link.so:mine_balancer\n", vend);
	manifest("balancer.ext", text);
	assert_refusedf("v", "balancer \"v\" (%s/balancer.ext:1): %s/link.so: "
			"a symlink: refused (name the file itself)", dir, vend);

	/* All root's and 0755: loaded. */
	fresh();
	snprintf(text, sizeof(text), "v = %s:mine_balancer\n", lib);
	manifest("balancer.ext", text);
	assert_non_null(sds_ext_balancer("v", err, sizeof(err)));

	/* SDS_EXT_DIR in a directory of nobody's: no manifest is read. */
	fresh();
	snprintf(dir, sizeof(dir), "%s/ext", vend);
	assert_int_equal(mkdir(dir, 0755), 0);
	setenv("SDS_EXT_DIR", dir, 1);
	manifest("balancer.ext", text);
	assert_int_equal(chown(vend, 65534, 65534), 0);
	assert_builtins_work();
	assert_null(sds_ext_balancer("v", err, sizeof(err)));
	assert_problemf(0, "%s: directory %s is owned by uid 65534: refused (every "
			"directory above an extension must be owned by root)", dir, vend);
	assert_int_equal(chown(vend, 0, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(builtins_by_name),
		cmocka_unit_test(user_policy_by_name),
		cmocka_unit_test(ioc_lookup),
		cmocka_unit_test(wrapper_counts_every_pick),
		cmocka_unit_test(missing_dir),
		cmocka_unit_test(malformed_lines),
		cmocka_unit_test(refused_plugins),
		cmocka_unit_test(hung_init_and_no_sigchld),
		cmocka_unit_test(untrusted_files),
		cmocka_unit_test(untrusted_parents),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
