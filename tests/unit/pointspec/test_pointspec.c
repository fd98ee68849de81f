// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests of loader/pointspec/: every accepted form, every refusal. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "errnames.h"
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <stdio.h>
#include <string.h>

#include <errno.h>

#include "pointspec/pointspec.h"
#include "sds_failfast.h"
#include "sds_keys.h"

#define USAGE "expected POINT=SYMBOL[:err=...][:ret=32|64][:timeout_ms=N]"

static void parse_ok(const char *arg, const char *name, const char *sym,
		     uint32_t err_mode, bool ret64, uint64_t timeout_ns)
{
	struct point_spec ps;
	char err[256] = "";

	memset(&ps, 0xa5, sizeof(ps));
	if (pointspec_parse(arg, &ps, err, sizeof(err)))
		fail_msg("'%s' refused: %s", arg, err);
	assert_string_equal(ps.name, name);
	assert_string_equal(ps.symbol, sym);
	assert_int_equal(ps.err_mode, err_mode);
	assert_int_equal(ps.ret64, ret64);
	assert_int_equal(ps.timeout_ns, timeout_ns);
}

/*
 * @arg must be refused with exactly "bad point '@arg': @why", and @out
 * left as it was.
 */
static void parse_bad(const char *arg, const char *why)
{
	struct point_spec ps, before;
	char err[1024] = "", want[1024];

	memset(&ps, 0x5a, sizeof(ps));
	before = ps;
	assert_int_equal(pointspec_parse(arg, &ps, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "bad point '%s': %s", arg, why);
	assert_string_equal(err, want);
	assert_memory_equal(&ps, &before, sizeof(ps));
}

static void test_defaults(void **state)
{
	parse_ok("p=f", "p", "f", SDS_ERR_NONE, false, 0);
	parse_ok("order=handle_order", "order", "handle_order",
		 SDS_ERR_NONE, false, 0);
	parse_ok("read-2=__libc_read", "read-2", "__libc_read",
		 SDS_ERR_NONE, false, 0);
	/* The symbol is taken as it is: dots, '@', '='. */
	parse_ok("cold=foo.cold", "cold", "foo.cold", SDS_ERR_NONE, false, 0);
	parse_ok("v=memcpy@GLIBC_2.14", "v", "memcpy@GLIBC_2.14",
		 SDS_ERR_NONE, false, 0);
	parse_ok("e=a=b", "e", "a=b", SDS_ERR_NONE, false, 0);
}

static void test_err_values(void **state)
{
	parse_ok("p=f:err=neg", "p", "f", SDS_ERR_NEG, false, 0);
	parse_ok("p=f:err=zero", "p", "f", SDS_ERR_ZERO, false, 0);
	parse_ok("p=f:err=nonzero", "p", "f", SDS_ERR_NONZERO, false, 0);
	parse_ok("p=f:err=none", "p", "f", SDS_ERR_NONE, false, 0);
}

static void test_ret_and_timeout(void **state)
{
	parse_ok("p=f:ret=32", "p", "f", SDS_ERR_NONE, false, 0);
	parse_ok("p=f:ret=64", "p", "f", SDS_ERR_NONE, true, 0);
	parse_ok("p=f:timeout_ms=1", "p", "f", SDS_ERR_NONE, false, 1000000ULL);
	parse_ok("p=f:timeout_ms=200", "p", "f", SDS_ERR_NONE, false,
		 200000000ULL);
	parse_ok("p=f:timeout_ms=3600000", "p", "f", SDS_ERR_NONE, false,
		 3600000000000ULL);
	parse_ok("p=f:timeout_ms=0050", "p", "f", SDS_ERR_NONE, false,
		 50000000ULL);
}

static void test_combinations(void **state)
{
	/* Pairs, both ways round. */
	parse_ok("p=f:err=neg:ret=64", "p", "f", SDS_ERR_NEG, true, 0);
	parse_ok("p=f:ret=64:err=neg", "p", "f", SDS_ERR_NEG, true, 0);
	parse_ok("p=f:err=zero:timeout_ms=5", "p", "f", SDS_ERR_ZERO, false,
		 5000000ULL);
	parse_ok("p=f:timeout_ms=5:err=zero", "p", "f", SDS_ERR_ZERO, false,
		 5000000ULL);
	parse_ok("p=f:ret=32:timeout_ms=7", "p", "f", SDS_ERR_NONE, false,
		 7000000ULL);
	parse_ok("p=f:timeout_ms=7:ret=64", "p", "f", SDS_ERR_NONE, true,
		 7000000ULL);

	/* All three, in all six orders. */
	parse_ok("p=f:err=nonzero:ret=64:timeout_ms=9", "p", "f",
		 SDS_ERR_NONZERO, true, 9000000ULL);
	parse_ok("p=f:err=nonzero:timeout_ms=9:ret=64", "p", "f",
		 SDS_ERR_NONZERO, true, 9000000ULL);
	parse_ok("p=f:ret=64:err=nonzero:timeout_ms=9", "p", "f",
		 SDS_ERR_NONZERO, true, 9000000ULL);
	parse_ok("p=f:ret=64:timeout_ms=9:err=nonzero", "p", "f",
		 SDS_ERR_NONZERO, true, 9000000ULL);
	parse_ok("p=f:timeout_ms=9:err=nonzero:ret=64", "p", "f",
		 SDS_ERR_NONZERO, true, 9000000ULL);
	parse_ok("p=f:timeout_ms=9:ret=64:err=nonzero", "p", "f",
		 SDS_ERR_NONZERO, true, 9000000ULL);
}

static void test_long_names(void **state)
{
	char arg[1200], name[80], sym[1100];

	memset(name, 'n', 64);
	name[64] = '\0';
	memset(sym, 's', POINT_SYMBOL_MAX);
	sym[POINT_SYMBOL_MAX] = '\0';
	snprintf(arg, sizeof(arg), "%s=%s:ret=64", name, sym);
	parse_ok(arg, name, sym, SDS_ERR_NONE, true, 0);
}

static void test_bad_shape(void **state)
{
	parse_bad("", USAGE);
	parse_bad("x", USAGE);
	parse_bad("x=", USAGE);
	parse_bad("=f", USAGE);
	parse_bad("=", USAGE);
	parse_bad("p=:err=neg", USAGE);
	parse_bad("p=:", USAGE);
}

static void test_bad_name(void **state)
{
	char arg[200], why[200], name[80];

	parse_bad("p.q=f",
		  "invalid point name 'p.q' (1..64 of A-Z a-z 0-9 _ -)");
	parse_bad("a b=f",
		  "invalid point name 'a b' (1..64 of A-Z a-z 0-9 _ -)");
	parse_bad("p:x=f",
		  "invalid point name 'p:x' (1..64 of A-Z a-z 0-9 _ -)");

	memset(name, 'n', 65);
	name[65] = '\0';
	snprintf(arg, sizeof(arg), "%s=f", name);
	snprintf(why, sizeof(why),
		 "invalid point name '%s' (1..64 of A-Z a-z 0-9 _ -)", name);
	parse_bad(arg, why);
}

static void test_bad_symbol(void **state)
{
	char arg[1200], sym[1100];

	memset(sym, 's', POINT_SYMBOL_MAX + 1);
	sym[POINT_SYMBOL_MAX + 1] = '\0';
	snprintf(arg, sizeof(arg), "p=%s", sym);
	parse_bad(arg, "symbol longer than 1023 characters");
}

static void test_bad_err(void **state)
{
	parse_bad("p=f:err=foo",
		  "unknown err= value 'foo' (neg, zero, nonzero, none)");
	parse_bad("p=f:err=",
		  "unknown err= value '' (neg, zero, nonzero, none)");
	parse_bad("p=f:err=NEG",
		  "unknown err= value 'NEG' (neg, zero, nonzero, none)");
	parse_bad("p=f:err=negative",
		  "unknown err= value 'negative' (neg, zero, nonzero, none)");
	parse_bad("p=f:err",
		  "option 'err' needs a value (err=neg|zero|nonzero|none)");
}

static void test_bad_ret(void **state)
{
	parse_bad("p=f:ret=16", "ret must be 32 or 64");
	parse_bad("p=f:ret=", "ret must be 32 or 64");
	parse_bad("p=f:ret=064", "ret must be 32 or 64");
	parse_bad("p=f:ret=64x", "ret must be 32 or 64");
	parse_bad("p=f:ret", "option 'ret' needs a value (ret=32|64)");
}

static void test_bad_timeout(void **state)
{
	static const char *const bad[] = {
		"p=f:timeout_ms=-1", "p=f:timeout_ms=0", "p=f:timeout_ms=000",
		"p=f:timeout_ms=3600001", "p=f:timeout_ms=1.5",
		"p=f:timeout_ms=abc", "p=f:timeout_ms=", "p=f:timeout_ms=+5",
		"p=f:timeout_ms= 5", "p=f:timeout_ms=5 ", "p=f:timeout_ms=0x10",
		"p=f:timeout_ms=99999999999999999999999999",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_bad(bad[i], "timeout_ms must be an integer 1..3600000");
	parse_bad("p=f:timeout_ms", "option 'timeout_ms' needs a value (timeout_ms=N)");
}

static void test_bad_options(void **state)
{
	parse_bad("p=f:foo=1", "unknown option 'foo' (err=, ret=, timeout_ms=, site=, copy=, copy_max=, copy_rate=, copy_ret=, failfast=, errno=, key=, drill=)");
	parse_bad("p=f:ERR=neg", "unknown option 'ERR' (err=, ret=, timeout_ms=, site=, copy=, copy_max=, copy_rate=, copy_ret=, failfast=, errno=, key=, drill=)");
	parse_bad("p=f:timeout=5", "unknown option 'timeout' (err=, ret=, timeout_ms=, site=, copy=, copy_max=, copy_rate=, copy_ret=, failfast=, errno=, key=, drill=)");
	parse_bad("p=f:=neg", "unknown option '' (err=, ret=, timeout_ms=, site=, copy=, copy_max=, copy_rate=, copy_ret=, failfast=, errno=, key=, drill=)");
	parse_bad("p=f:", "empty option");
	parse_bad("p=f::err=neg",
		  "'::' before option 'err': one ':' separates the symbol from its options");
	parse_bad("p=f:err=neg:", "empty option");
	/* The first bad option is the one named. */
	parse_bad("p=f:err=neg:bogus:ret=99",
		  "unknown option 'bogus' (err=, ret=, timeout_ms=, site=, copy=, copy_max=, copy_rate=, copy_ret=, failfast=, errno=, key=, drill=)");
}

/* C++, Rust and Go names: "::" belongs to the symbol (issue 10). */
static void test_scoped_names(void **state)
{
	parse_ok("h=main::handler:err=neg", "h", "main::handler", SDS_ERR_NEG,
		 false, 0);
	parse_ok("h=main::handler", "h", "main::handler", SDS_ERR_NONE, false, 0);
	parse_ok("a=shop::Cart::add(int):timeout_ms=5", "a",
		 "shop::Cart::add(int)", SDS_ERR_NONE, false, 5000000ULL);
	parse_ok("a=shop::Cart::add(std::string const&):err=neg:ret=64", "a",
		 "shop::Cart::add(std::string const&)", SDS_ERR_NEG, true, 0);
	parse_ok("a=::global_fn:err=zero", "a", "::global_fn", SDS_ERR_ZERO,
		 false, 0);
	parse_ok("r=<std::io::stdio::StderrRaw as std::io::Write>::write", "r",
		 "<std::io::stdio::StderrRaw as std::io::Write>::write",
		 SDS_ERR_NONE, false, 0);
	parse_ok("h=main::handler::h817acd4767b9a97b:err=neg", "h",
		 "main::handler::h817acd4767b9a97b", SDS_ERR_NEG, false, 0);
	/* An ABI tag's ':' is the name's. */
	parse_ok("b=foo::bar[abi:cxx11]():err=neg", "b", "foo::bar[abi:cxx11]()",
		 SDS_ERR_NEG, false, 0);
	/* Go: as written. */
	parse_ok("g=pkg/path.(*T).Method", "g", "pkg/path.(*T).Method",
		 SDS_ERR_NONE, false, 0);
	parse_ok("g=main.handler:ret=64", "g", "main.handler", SDS_ERR_NONE,
		 true, 0);
}

/* Malformed specs with "::" where the options are. */
static void test_scoped_bad(void **state)
{
	parse_bad("h=main::handler:err=neg::zero",
		  "'::' in the options ('err=neg::zero'): a name's '::' goes before the first :KEY= (as p=ns::f:err=neg)");
	parse_bad("a=shop::Cart::add(int):timeout_ms=5::site=any",
		  "'::' in the options ('timeout_ms=5::site=any'): a name's '::' goes before the first :KEY= (as p=ns::f:err=neg)");
	parse_bad("h=main:handler::x",
		  "'::' in the options ('handler::x'): a name's '::' goes before the first :KEY= (as p=ns::f:err=neg)");
	parse_bad("h=main::handler::err=neg",
		  "'::' before option 'err': one ':' separates the symbol from its options");
	parse_bad("h=main::handler:::timeout_ms=5",
		  "'::' before option 'timeout_ms': one ':' separates the symbol from its options");
	/* A lone ':' still starts the options: the old messages stand. */
	parse_bad("h=main::handler:foo=1",
		  "unknown option 'foo' (err=, ret=, timeout_ms=, site=, copy=, copy_max=, copy_rate=, copy_ret=, failfast=, errno=, key=, drill=)");
	parse_bad("h=main::handler:err",
		  "option 'err' needs a value (err=neg|zero|nonzero|none)");
	parse_bad("h=main::handler:", "empty option");
}

static void go_ok(const char *arg)
{
	struct point_spec ps;
	char err[512] = "";

	assert_int_equal(pointspec_parse(arg, &ps, err, sizeof(err)), 0);
	assert_int_equal(pointspec_check_go(&ps, arg, err, sizeof(err)), 0);
}

static void go_bad(const char *arg, const char *opt)
{
	struct point_spec ps;
	char err[512] = "", want[512];

	assert_int_equal(pointspec_parse(arg, &ps, err, sizeof(err)), 0);
	assert_int_equal(pointspec_check_go(&ps, arg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
		 "bad point '%s': %s needs the function's return, and a Go binary gets no return probe (its address would make the Go runtime's stack walk fail and kill the program): Go points count visits only",
		 arg, opt);
	assert_string_equal(err, want);
}

static void test_go(void **state)
{
	go_ok("g=main.handler");
	go_ok("g=main.handler:err=none");
	go_ok("g=pkg/path.(*T).Method:site=any");
	go_bad("g=main.handler:err=neg", "err=");
	go_bad("g=main.handler:err=zero:timeout_ms=5", "err=");
	go_bad("g=main.handler:timeout_ms=5", "timeout_ms=");
}

static enum site_policy site_of(const char *arg)
{
	struct point_spec ps;
	char err[256] = "";

	memset(&ps, 0xa5, sizeof(ps));
	if (pointspec_parse(arg, &ps, err, sizeof(err)))
		fail_msg("'%s' refused: %s", arg, err);
	return ps.site_policy;
}

static void test_site(void **state)
{
	assert_int_equal(site_of("p=f"), SITE_POLICY_DEFAULT);
	assert_int_equal(site_of("p=f:site=nop5"), SITE_POLICY_NOP5);
	assert_int_equal(site_of("p=f:site=any"), SITE_POLICY_ANY);
	assert_int_equal(site_of("p=f:err=neg:site=nop5:timeout_ms=5"),
			 SITE_POLICY_NOP5);
	parse_ok("p=f:site=any:err=neg:ret=64", "p", "f", SDS_ERR_NEG, true, 0);
	assert_int_equal(site_of("p=f:site=entry"), SITE_POLICY_ENTRY);
	assert_int_equal(site_of("p=f:site=+0x1f"), SITE_POLICY_AT);
	assert_int_equal(site_of("p=f:site=+12"), SITE_POLICY_AT);
	parse_bad("p=f:site=+", "unknown site= value '+' (nop5, any, entry, +0xN)");
	parse_bad("p=f:site=+0x", "unknown site= value '+0x' (nop5, any, entry, +0xN)");
	parse_bad("p=f:site=0x10", "unknown site= value '0x10' (nop5, any, entry, +0xN)");
	parse_bad("p=f:site=+0x100000", "unknown site= value '+0x100000' (nop5, any, entry, +0xN)");
	parse_bad("p=f:site=+1g", "unknown site= value '+1g' (nop5, any, entry, +0xN)");
	parse_bad("p=f:site=foo", "unknown site= value 'foo' (nop5, any, entry, +0xN)");
	parse_bad("p=f:site=NOP5", "unknown site= value 'NOP5' (nop5, any, entry, +0xN)");
	parse_bad("p=f:site=nop5x", "unknown site= value 'nop5x' (nop5, any, entry, +0xN)");
	parse_bad("p=f:site=an", "unknown site= value 'an' (nop5, any, entry, +0xN)");
	parse_bad("p=f:site=", "unknown site= value '' (nop5, any, entry, +0xN)");
	parse_bad("p=f:site", "option 'site' needs a value (site=nop5|any|entry|+0xN)");
	parse_bad("p=f:site=nop5:site=any", "duplicate option 'site='");
	parse_bad("p=f:site=any:site=any", "duplicate option 'site='");
}

/* :copy=, :copy_max=, :copy_rate= (issue 12): values, defaults, refusals. */
static void copy_ok(const char *arg, int b, int n, uint32_t max, uint32_t rate)
{
	struct point_spec ps;
	char err[512] = "";

	memset(&ps, 0xa5, sizeof(ps));
	if (pointspec_parse(arg, &ps, err, sizeof(err)))
		fail_msg("'%s' refused: %s", arg, err);
	assert_int_equal(ps.copy, b != 0);
	if (b) {
		assert_int_equal(ps.copy_buf_arg, b);
		assert_int_equal(ps.copy_len_arg, n);
	}
	assert_int_equal(ps.copy_max, max);
	assert_int_equal(ps.copy_rate, rate);
}

#define ARGS_WHY "copy= takes two argument numbers BUF,LEN, each 1..6 (x86-64 passes only the first six integer arguments in registers)"
#define MAX_WHY "copy_max must be an integer 1..65536 (bytes; 64 KiB at most)"
#define RATE_WHY "copy_rate must be an integer 0..100 (percent of calls)"

static void test_copy(void **state)
{
	copy_ok("p=f", 0, 0, 4096, 100);
	copy_ok("p=f:copy=1,2", 1, 2, 4096, 100);
	copy_ok("p=f:copy=2,3:copy_max=100:copy_rate=30", 2, 3, 100, 30);
	copy_ok("p=f:copy_rate=0:copy=6,1:copy_max=65536", 6, 1, 65536, 0);
	copy_ok("h=ns::f(char const*, unsigned long):copy=2,3:err=neg", 2, 3, 4096, 100);
	parse_bad("p=f:copy=0,2", ARGS_WHY);
	parse_bad("p=f:copy=1,7", ARGS_WHY);
	parse_bad("p=f:copy=1", ARGS_WHY);
	parse_bad("p=f:copy=1,", ARGS_WHY);
	parse_bad("p=f:copy=,2", ARGS_WHY);
	parse_bad("p=f:copy=1,2,3", ARGS_WHY);
	parse_bad("p=f:copy=-1,2", ARGS_WHY);
	parse_bad("p=f:copy=3,3", "copy=3,3: the buffer and its length are two different arguments");
	parse_bad("p=f:copy=1,2:copy_max=65537", MAX_WHY);
	parse_bad("p=f:copy=1,2:copy_max=0", MAX_WHY);
	parse_bad("p=f:copy=1,2:copy_max=1k", MAX_WHY);
	parse_bad("p=f:copy=1,2:copy_rate=101", RATE_WHY);
	parse_bad("p=f:copy=1,2:copy_rate=-1", RATE_WHY);
	parse_bad("p=f:copy=1,2:copy_rate=", RATE_WHY);
	parse_bad("p=f:copy_max=100", "copy_max= needs copy=BUF,LEN (which arguments hold the request)");
	parse_bad("p=f:copy_rate=5", "copy_rate= needs copy=BUF,LEN (which arguments hold the request)");
	parse_bad("p=f:copy=1,2:copy=1,2", "duplicate option 'copy='");
	parse_bad("p=f:copy", "option 'copy' needs a value (copy=BUF,LEN)");
}

#define RET_WHY "copy_ret= takes two argument numbers BUF,LEN, each 1..6 (the response buffer and the size_t * the function writes its length to)"

/* :copy_ret= (issue 37): the response's buffer and length pointer. */
static void test_copy_ret(void **state)
{
	struct point_spec ps;
	char err[512] = "";

	assert_int_equal(pointspec_parse("p=f:copy=1,2:copy_ret=3,4", &ps, err, sizeof(err)), 0);
	assert_int_equal(ps.copy_ret_buf_arg, 3);
	assert_int_equal(ps.copy_ret_len_arg, 4);
	/* The response may be written over the request: BUF may be copy='s. */
	assert_int_equal(pointspec_parse("p=f:copy_ret=1,6:copy=1,2", &ps, err, sizeof(err)), 0);
	assert_int_equal(ps.copy_ret_buf_arg, 1);
	assert_int_equal(ps.copy_ret_len_arg, 6);
	assert_int_equal(pointspec_parse("p=f:copy=1,2", &ps, err, sizeof(err)), 0);
	assert_int_equal(ps.copy_ret_buf_arg, 0);
	parse_bad("p=f:copy=1,2:copy_ret=3", RET_WHY);
	parse_bad("p=f:copy=1,2:copy_ret=0,4", RET_WHY);
	parse_bad("p=f:copy=1,2:copy_ret=3,7", RET_WHY);
	parse_bad("p=f:copy=1,2:copy_ret=3,4,5", RET_WHY);
	parse_bad("p=f:copy=1,2:copy_ret=4,4",
		  "copy_ret=4,4: the response buffer and its length pointer are two different arguments");
	parse_bad("p=f:copy_ret=3,4", "copy_ret= needs copy=BUF,LEN (which arguments hold the request)");
	parse_bad("p=f:copy=1,2:copy_ret=3,4:copy_ret=3,4", "duplicate option 'copy_ret='");
	parse_bad("p=f:copy=1,2:copy_ret", "option 'copy_ret' needs a value (copy_ret=BUF,LEN)");
}

/* :key=: where the key is, as the kernel reads it (docs/KEYS.md). */
static void key_ok(const char *arg, unsigned int kind, unsigned int a,
		   unsigned int len_arg, unsigned int max, const char *shown)
{
	struct point_spec ps;
	char err[256] = "", buf[32];

	if (pointspec_parse(arg, &ps, err, sizeof(err)))
		fail_msg("'%s' refused: %s", arg, err);
	assert_int_equal(ps.key_kind, kind);
	assert_int_equal(ps.key_arg, a);
	assert_int_equal(ps.key_len_arg, len_arg);
	assert_int_equal(ps.key_max, max);
	pointspec_key_format(&ps, buf, sizeof(buf));
	assert_string_equal(buf, shown);
}

#define ARGNO "argument numbers are 1..6 (x86-64 passes only the first six integer arguments in registers)"

static void test_key(void **state)
{
	struct point_spec ps;
	char err[256];

	key_ok("p=f:key=arg1", SDS_KEY_INT, 1, 0, 8, "arg1");
	key_ok("p=f:key=arg6:err=neg", SDS_KEY_INT, 6, 0, 8, "arg6");
	key_ok("p=f:key=str2", SDS_KEY_STR, 2, 0, 64, "str2");
	key_ok("p=f:key=str2,16", SDS_KEY_STR, 2, 0, 16, "str2,16");
	key_ok("p=f:key=buf1,len2", SDS_KEY_BUF, 1, 2, 64, "buf1,len2");
	key_ok("p=f:key=buf3,64", SDS_KEY_BUF, 3, 0, 64, "buf3,64");
	key_ok("p=ns::f:key=buf3,1:failfast=open", SDS_KEY_BUF, 3, 0, 1, "buf3,1");
	/* Unkeyed: nothing set, nothing shown. */
	assert_int_equal(pointspec_parse("p=f", &ps, err, sizeof(err)), 0);
	assert_int_equal(ps.key_kind, SDS_KEY_NONE);

	parse_bad("p=f:key=arg0", "key=arg0: " ARGNO);
	parse_bad("p=f:key=arg7", "key=arg7: " ARGNO);
	parse_bad("p=f:key=str12", "key=str12: " ARGNO);
	parse_bad("p=f:key=buf1,len0", "key=buf1,len0: " ARGNO);
	parse_bad("p=f:key=str1,65", "key=str1,65: a key's length is 1..64 bytes, not 65");
	parse_bad("p=f:key=buf1,0", "key=buf1,0: a key's length is 1..64 bytes, not 0");
	parse_bad("p=f:key=str1,buf2", "key=str1,buf2: one key a point, not both str and buf");
	parse_bad("p=f:key=buf1,str2", "key=buf1,str2: one key a point, not both buf and str");
	parse_bad("p=f:key=buf1", "key=buf1: bufN needs its length: bufN,lenM (the M-th argument) or bufN,LEN (bytes)");
	parse_bad("p=f:key=buf2,len2", "key=buf2,len2: the bytes and their length are two different arguments");
	parse_bad("p=f:key=arg1,8", "key=arg1,8: an integer key is its argument's 8 bytes: argN takes no length");
	parse_bad("p=f:key=user",
		  "key= takes argN, strN[,MAX], bufN,lenM or bufN,LEN (N, M: argument numbers 1..6; MAX, LEN: bytes 1..64)");
	parse_bad("p=f:key=buf1,len2,8",
		  "key= takes argN, strN[,MAX], bufN,lenM or bufN,LEN (N, M: argument numbers 1..6; MAX, LEN: bytes 1..64)");
	parse_bad("p=f:key=", "key= takes argN, strN[,MAX], bufN,lenM or bufN,LEN (N, M: argument numbers 1..6; MAX, LEN: bytes 1..64)");
	parse_bad("p=f:key=arg1:key=arg2", "duplicate option 'key='");
}

/* Go's register ABI is not System V's: a Go point cannot be keyed. */
static void test_key_go(void **state)
{
	struct point_spec ps;
	char err[512];

	assert_int_equal(pointspec_parse("p=main.f:key=arg1", &ps, err, sizeof(err)), 0);
	assert_int_equal(pointspec_check_go(&ps, "p=main.f:key=arg1", err, sizeof(err)), -1);
	assert_string_equal(err, "bad point 'p=main.f:key=arg1': key= reads the key from the System V argument registers, and Go's register ABI passes arguments differently: Go points cannot be keyed");
}

static void test_copy_go(void **state)
{
	const char *arg = "g=main.handler:copy=1,2";
	struct point_spec ps;
	char err[512] = "", want[512];

	assert_int_equal(pointspec_parse(arg, &ps, err, sizeof(err)), 0);
	assert_int_equal(pointspec_check_go(&ps, arg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
		 "bad point '%s': copy= reads the request from the System V argument registers, and Go's register ABI passes arguments differently (and a slice or string is two or three words): Go points cannot be copied",
		 arg);
	assert_string_equal(err, want);
}

static void test_duplicates(void **state)
{
	parse_bad("p=f:err=neg:err=zero", "duplicate option 'err='");
	parse_bad("p=f:err=neg:err=neg", "duplicate option 'err='");
	parse_bad("p=f:ret=32:ret=32", "duplicate option 'ret='");
	parse_bad("p=f:timeout_ms=5:err=neg:timeout_ms=6",
		  "duplicate option 'timeout_ms='");
}

static void test_small_err_buffer(void **state)
{
	struct point_spec ps;
	char err[12];

	memset(err, '#', sizeof(err));
	assert_int_equal(pointspec_parse("p=f:err=whatever", &ps, err, 10), -1);
	assert_string_equal(err, "bad point");
	assert_int_equal(err[10], '#');
	assert_int_equal(pointspec_parse(NULL, &ps, err, sizeof(err)), -1);
	assert_string_equal(err, "bad point '");
}

static void test_err_mode_name(void **state)
{
	assert_string_equal(pointspec_err_mode_name(SDS_ERR_NONE), "none");
	assert_string_equal(pointspec_err_mode_name(SDS_ERR_NEG), "neg");
	assert_string_equal(pointspec_err_mode_name(SDS_ERR_ZERO), "zero");
	assert_string_equal(pointspec_err_mode_name(SDS_ERR_NONZERO), "nonzero");
	assert_string_equal(pointspec_err_mode_name(4), "unknown");
	assert_string_equal(pointspec_err_mode_name(UINT32_MAX), "unknown");
}

/* :failfast= and :errno= (issue 15): values, defaults, refusals. */
static void ff_ok(const char *arg, uint32_t ops, int err_no)
{
	struct point_spec ps;
	char err[256] = "";

	if (pointspec_parse(arg, &ps, err, sizeof(err)))
		fail_msg("'%s' refused: %s", arg, err);
	assert_int_equal(ps.failfast_ops, ops);
	assert_int_equal(ps.failfast_errno, err_no);
}

#define FF_OP_WHY(op) "unknown failfast= operation '" op "' (connect, send, open)"
#define FF_ERRNO_WHY(n) "unknown errno= name '" n "' (ECONNREFUSED, ECONNRESET, ETIMEDOUT, EHOSTUNREACH, EIO, EACCES, ...: docs/FAILFAST.md)"

static void test_failfast(void **state)
{
	char buf[32];

	ff_ok("p=f", 0, 0);
	ff_ok("p=f:failfast=connect", SDS_FF_CONNECT, 0);
	ff_ok("p=f:failfast=send", SDS_FF_SEND, 0);
	ff_ok("p=f:failfast=open", SDS_FF_OPEN, 0);
	ff_ok("p=f:failfast=open,connect,send", SDS_FF_ALL, 0);
	ff_ok("p=f:err=neg:failfast=connect,send:errno=ETIMEDOUT",
	      SDS_FF_CONNECT | SDS_FF_SEND, ETIMEDOUT);
	ff_ok("p=f:errno=EIO:failfast=open", SDS_FF_OPEN, EIO);
	ff_ok("p=ns::f:failfast=connect", SDS_FF_CONNECT, 0);

	parse_bad("p=f:failfast=", FF_OP_WHY(""));
	parse_bad("p=f:failfast=read", FF_OP_WHY("read"));
	parse_bad("p=f:failfast=connect,", FF_OP_WHY(""));
	parse_bad("p=f:failfast=,open", FF_OP_WHY(""));
	parse_bad("p=f:failfast=CONNECT", FF_OP_WHY("CONNECT"));
	parse_bad("p=f:failfast=connect,connect", "failfast= names 'connect' twice");
	parse_bad("p=f:failfast", "option 'failfast' needs a value (failfast=connect,send,open)");
	parse_bad("p=f:failfast=open:failfast=send", "duplicate option 'failfast='");
	parse_bad("p=f:failfast=open:errno=EINTR", FF_ERRNO_WHY("EINTR"));
	parse_bad("p=f:failfast=open:errno=EAGAIN", FF_ERRNO_WHY("EAGAIN"));
	parse_bad("p=f:failfast=open:errno=eio", FF_ERRNO_WHY("eio"));
	parse_bad("p=f:failfast=open:errno=5", FF_ERRNO_WHY("5"));
	parse_bad("p=f:failfast=open:errno=", FF_ERRNO_WHY(""));
	parse_bad("p=f:errno=EIO", "errno= needs failfast=connect,send,open (which operations fail)");

	assert_string_equal(errnames_name(ECONNREFUSED), "ECONNREFUSED");
	assert_string_equal(errnames_name(EIO), "EIO");
	assert_string_equal(errnames_name(EINTR), "?");
	assert_int_equal(pointspec_ops_format(SDS_FF_ALL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "connect,send,open");
	assert_int_equal(pointspec_ops_format(SDS_FF_OPEN, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "open");
	assert_int_equal(pointspec_ops_format(SDS_FF_ALL, buf, 8), -1);
}

/* :drill=net: the one drill kind; once; its value checked. */
static void test_drill_net(void **state)
{
	struct point_spec ps;
	char err[256] = "";

	assert_int_equal(pointspec_parse("p=f:drill=net", &ps, err, sizeof(err)), 0);
	assert_true(ps.drill_net);
	assert_int_equal(ps.failfast_ops, 0);
	assert_int_equal(pointspec_parse("p=ns::f:err=neg:drill=net", &ps, err, sizeof(err)), 0);
	assert_true(ps.drill_net);
	assert_int_equal(pointspec_parse("p=f", &ps, err, sizeof(err)), 0);
	assert_false(ps.drill_net);
	parse_bad("p=f:drill=disk", "unknown drill= kind 'disk' (net)");
	parse_bad("p=f:drill=", "unknown drill= kind '' (net)");
	parse_bad("p=f:drill=NET", "unknown drill= kind 'NET' (net)");
	parse_bad("p=f:drill", "option 'drill' needs a value (drill=net)");
	parse_bad("p=f:drill=net:drill=net", "duplicate option 'drill='");
	assert_int_equal(pointspec_parse("p=f:drill=net", &ps, err, sizeof(err)), 0);
	assert_int_equal(pointspec_check_go(&ps, "p=f:drill=net", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "drill=net needs the function's return"));
}

/* A Go point has no frame to be inside of: failfast= is refused. */
static void test_failfast_go(void **state)
{
	struct point_spec ps;
	char err[512];
	const char *arg = "p=f:failfast=connect";

	assert_int_equal(pointspec_parse(arg, &ps, err, sizeof(err)), 0);
	assert_int_equal(pointspec_check_go(&ps, arg, err, sizeof(err)), -1);
	assert_string_equal(err, "bad point 'p=f:failfast=connect': failfast= needs the function's return, and a Go binary gets no return probe (its address would make the Go runtime's stack walk fail and kill the program): Go points count visits only");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_err_values),
		cmocka_unit_test(test_ret_and_timeout),
		cmocka_unit_test(test_combinations),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_bad_shape),
		cmocka_unit_test(test_bad_name),
		cmocka_unit_test(test_bad_symbol),
		cmocka_unit_test(test_bad_err),
		cmocka_unit_test(test_bad_ret),
		cmocka_unit_test(test_bad_timeout),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_site),
		cmocka_unit_test(test_scoped_names),
		cmocka_unit_test(test_scoped_bad),
		cmocka_unit_test(test_go),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_copy_ret),
		cmocka_unit_test(test_copy_go),
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_key_go),
		cmocka_unit_test(test_small_err_buffer),
		cmocka_unit_test(test_err_mode_name),
		cmocka_unit_test(test_failfast),
		cmocka_unit_test(test_drill_net),
		cmocka_unit_test(test_failfast_go),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
