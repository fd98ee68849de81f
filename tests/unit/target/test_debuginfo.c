// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/target/debuginfo.c through elfsym.h: a stripped PIE whose
 * static function only its split debug file names, found by build-id and
 * by .gnu_debuglink under a debug root of the test's own (SDS_DEBUG_ROOT),
 * at the address and file offset of the unstripped build; refusals; no
 * lookup for a file opened by descriptor.  Fixtures built with gcc,
 * objcopy and strip in a temp dir.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/debuginfo.h"
#include "target/elfsym.h"

static char dir[] = "/tmp/sds-debuginfo-XXXXXX";
static char root[256];		/* the debug root: dir/root */
static char bid[80];		/* the build-id of "full" and its copies */

static const char src[] =
	"static volatile int sink;\n"
	"static __attribute__((noinline)) void hidden_fn(int i) { sink += i; }\n"
	"int main(int argc, char **argv) { hidden_fn(argc); return 0; }\n";

static const char *in_dir(const char *name)
{
	static char buf[8][512];
	static int next;
	char *p = buf[next++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

static int run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static int setup(void **state)
{
	FILE *f;

	if (!mkdtemp(dir))
		return -1;
	snprintf(root, sizeof(root), "%s/root", dir);
	setenv("SDS_DEBUG_ROOT", root, 1);
	f = fopen(in_dir("p.c"), "w");
	if (!f || fputs(src, f) < 0 || fclose(f))
		return -1;
	/*
	 * full: with symbols; bid: stripped, its debug file under the root by
	 * build-id; link: stripped with a debuglink to link.debug beside it;
	 * other.debug: another build's (another build-id).
	 */
	if (run("cd %s && gcc -g -O1 -fPIE -pie -o full p.c && "
		"gcc -g -O1 -fPIE -pie -DX=1 -Dsink=sink2 -o other p.c && "
		"objcopy --only-keep-debug other other.debug && "
		"objcopy --only-keep-debug full full.debug && "
		"cp full bid && strip bid && "
		"cp full link && strip link && cp full.debug link.debug && "
		"objcopy --add-gnu-debuglink=link.debug link && "
		"readelf -n full | awk '/Build ID/ {print $3}' > bid.txt", dir))
		return -1;
	f = fopen(in_dir("bid.txt"), "r");
	if (!f || !fgets(bid, sizeof(bid), f))
		return -1;
	fclose(f);
	bid[strcspn(bid, "\n")] = '\0';
	return strlen(bid) == 40 ? 0 : -1;
}

static int teardown(void **state)
{
	return run("rm -rf %s", dir);
}

/* Put @file at ROOT/.build-id/xx/yyyy.debug of "full"; remove with NULL. */
static void place(const char *file)
{
	run("rm -rf %s/.build-id", root);
	if (file)
		assert_int_equal(run("mkdir -p %s/.build-id/%.2s && cp %s %s/.build-id/%.2s/%s.debug",
				     root, bid, in_dir(file), root, bid, bid + 2), 0);
}

/* hidden_fn of @path, which must match the unstripped build's. */
static void found_as_full(const char *path, const char *how)
{
	struct elf_func want, got;
	struct elf_file *ef;
	char err[1024] = "", what[2048];
	const char *name;
	uint64_t start, size;

	ef = elf_file__open(in_dir("full"), err, sizeof(err));
	assert_non_null(ef);
	assert_int_equal(elf_file__find_func(ef, "hidden_fn", &want, err, sizeof(err)), 0);
	elf_file__close(ef);

	ef = elf_file__open(path, err, sizeof(err));
	assert_non_null(ef);
	if (elf_file__find_func(ef, "hidden_fn", &got, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(got.vaddr, want.vaddr);
	assert_int_equal(got.offset, want.offset);
	assert_int_equal(got.size, want.size);
	assert_int_equal(got.code_len, want.code_len);
	assert_memory_equal(got.code, want.code, want.code_len);
	/* What is at an address comes from the debug file's .symtab too. */
	assert_int_equal(elf_file__func_holding(ef, want.vaddr + 1, &name, &start, &size), 0);
	assert_string_equal(name, "hidden_fn");
	assert_int_equal(start, want.vaddr);
	debuginfo__describe(ef, what, sizeof(what));
	assert_string_equal(what, how);
	elf_file__close(ef);
}

static void test_by_buildid(void **state)
{
	char how[1024];

	place("full.debug");
	snprintf(how, sizeof(how), "%s/.build-id/%.2s/%s.debug (separate debug info of %s, by build-id %s)",
		 root, bid, bid + 2, in_dir("bid"), bid);
	found_as_full(in_dir("bid"), how);
	place(NULL);
}

static void test_by_debuglink(void **state)
{
	char how[1024];

	snprintf(how, sizeof(how), "%s (separate debug info of %s, by .gnu_debuglink)",
		 in_dir("link.debug"), in_dir("link"));
	found_as_full(in_dir("link"), how);
}

static void test_own_symtab(void **state)
{
	char err[512] = "", what[1024], want[1024];
	struct elf_file *ef = elf_file__open(in_dir("full"), err, sizeof(err));

	assert_non_null(ef);
	debuginfo__describe(ef, what, sizeof(what));
	snprintf(want, sizeof(want), "%s's .symtab", in_dir("full"));
	assert_string_equal(what, want);
	elf_file__close(ef);
}

static void test_mismatch_refused(void **state)
{
	char err[1024] = "", want[1024], obid[80] = "";
	struct elf_func f;
	struct elf_file *ef;
	FILE *p;

	run("readelf -n %s | awk '/Build ID/ {print $3}' > %s", in_dir("other"),
	    in_dir("obid.txt"));
	p = fopen(in_dir("obid.txt"), "r");
	assert_non_null(p);
	assert_non_null(fgets(obid, sizeof(obid), p));
	fclose(p);
	obid[strcspn(obid, "\n")] = '\0';
	assert_string_not_equal(obid, bid);
	place("other.debug");
	ef = elf_file__open(in_dir("bid"), err, sizeof(err));
	assert_non_null(ef);
	assert_int_equal(elf_file__find_func(ef, "hidden_fn", &f, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
		 "symbol 'hidden_fn' not found in %s: the file is stripped (no .symtab) and has no debug file under %s; refused %s/.build-id/%.2s/%s.debug: build-id %s, not the binary's %s; rebuild without -s, install its debug symbols (-dbgsym) or use a binary with symbols",
		 in_dir("bid"), root, root, bid, bid + 2, obid, bid);
	assert_string_equal(err, want);
	elf_file__close(ef);
	place(NULL);
}

/* By descriptor (a client's file, register.c): no lookup by name. */
static void test_open_fd_no_lookup(void **state)
{
	char err[512] = "", what[1024], want[1024];
	struct elf_file *ef;
	int fd;

	place("full.debug");
	fd = open(in_dir("bid"), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ef = elf_file__open_fd(fd, in_dir("bid"), err, sizeof(err));
	assert_non_null(ef);
	debuginfo__describe(ef, what, sizeof(what));
	snprintf(want, sizeof(want), "%s's .dynsym only (stripped; no debug file under %s)",
		 in_dir("bid"), root);
	assert_string_equal(what, want);
	elf_file__close(ef);
	place(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_buildid),
		cmocka_unit_test(test_by_debuglink),
		cmocka_unit_test(test_own_symtab),
		cmocka_unit_test(test_mismatch_refused),
		cmocka_unit_test(test_open_fd_no_lookup),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
