// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/target/demangle.c: C++ and Rust (legacy, v0) names as
 * users write them, overloads, the nearest names, the messages.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <stdio.h>
#include <string.h>

#include "target/demangle.h"

#define CART_ADD_INT	"_ZN4shop4Cart3addEi"
#define CART_ADD_STR	"_ZN4shop4Cart3addERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
#define RUST_LEGACY	"_ZN4main7handler17h817acd4767b9a97bE"
#define RUST_V0		"_RNvCs1234_5other6worker"

static void test_forms(void **state)
{
	struct demangled d;

	assert_int_equal(demangle__name(CART_ADD_INT, &d), 0);
	assert_string_equal(d.full, "shop::Cart::add(int)");
	assert_string_equal(d.base, "shop::Cart::add");
	assert_null(d.hashed);
	demangle__free(&d);

	assert_int_equal(demangle__name(RUST_LEGACY, &d), 0);
	assert_string_equal(d.full, "main::handler");
	assert_string_equal(d.hashed, "main::handler::h817acd4767b9a97b");
	demangle__free(&d);

	assert_int_equal(demangle__name(RUST_V0, &d), 0);
	assert_string_equal(d.full, "other::worker");
	assert_null(d.hashed);
	demangle__free(&d);

	/* Plain names (C, Go) and junk are not mangled. */
	assert_int_equal(demangle__name("main", &d), -1);
	assert_null(d.full);
	assert_int_equal(demangle__name("main.(*Cart).Add", &d), -1);
	assert_int_equal(demangle__name("_Zjunk", &d), -1);
	assert_null(d.full);
}

static bool matches(const char *mangled, const char *want)
{
	struct demangled d;
	bool m;

	assert_int_equal(demangle__name(mangled, &d), 0);
	m = demangle__matches(&d, want);
	demangle__free(&d);
	return m;
}

static void test_matches(void **state)
{
	assert_true(matches(CART_ADD_INT, "shop::Cart::add(int)"));
	assert_true(matches(CART_ADD_INT, "shop::Cart::add"));
	assert_true(matches(CART_ADD_INT, " shop::Cart::add( int ) "));
	assert_false(matches(CART_ADD_INT, "shop::Cart::add(long)"));
	assert_false(matches(CART_ADD_INT, "Cart::add"));
	assert_true(matches(CART_ADD_STR, "shop::Cart::add"));
	assert_true(matches(CART_ADD_STR,
			    "shop::Cart::add(std::__cxx11::basic_string<char,std::char_traits<char>,std::allocator<char>> const&)"));
	assert_false(matches(CART_ADD_STR, "shop::Cart::add(int)"));
	/* The Rust hash is optional, but must be right when given. */
	assert_true(matches(RUST_LEGACY, "main::handler"));
	assert_true(matches(RUST_LEGACY, "main::handler::h817acd4767b9a97b"));
	assert_false(matches(RUST_LEGACY, "main::handler::h0000000000000000"));
	assert_false(matches(RUST_LEGACY, "main::handle"));
	assert_true(matches(RUST_V0, "other::worker"));
	/* ABI tags are ignored: users write what nm -C shows without them. */
	assert_true(matches("_ZN3foo3barB5cxx11Ev", "foo::bar()"));
	assert_true(matches("_ZN3foo3barB5cxx11Ev", "foo::bar[abi:cxx11]()"));
	assert_true(matches("_ZN3foo3barB5cxx11Ev", "foo::bar"));
}

static void test_distance(void **state)
{
	assert_int_equal(demangle__distance("", "", 99), 0);
	assert_int_equal(demangle__distance("abc", "abc", 99), 0);
	assert_int_equal(demangle__distance("handler", "handle", 99), 1);
	assert_int_equal(demangle__distance("kitten", "sitting", 99), 3);
	assert_int_equal(demangle__distance("", "abcd", 99), 4);
	assert_int_equal(demangle__distance("abcdef", "", 2), 2);
}

static void add_all(struct demangle_pick *pk)
{
	/* Two aliases of one constructor: one function. */
	assert_int_equal(demangle_pick__add(pk, "_ZN4shop4CartC1Ev", 0x10, 4), 0);
	assert_int_equal(demangle_pick__add(pk, "_ZN4shop4CartC2Ev", 0x10, 4), 0);
	assert_int_equal(demangle_pick__add(pk, CART_ADD_STR, 0x30, 8), 0);
	assert_int_equal(demangle_pick__add(pk, CART_ADD_INT, 0x20, 8), 0);
	assert_int_equal(demangle_pick__add(pk, RUST_LEGACY, 0x40, 8), 0);
	assert_int_equal(demangle_pick__add(pk, "main", 0x50, 8), 0);
	assert_int_equal(demangle_pick__add(pk, "handle_order", 0x60, 8), 0);
}

static void test_pick_one(void **state)
{
	struct demangle_pick pk;

	demangle_pick__init(&pk, "shop::Cart::add(int)");
	add_all(&pk);
	assert_int_equal(pk.nmatch, 1);
	assert_string_equal(pk.match[0].mangled, CART_ADD_INT);
	assert_int_equal(pk.match[0].vaddr, 0x20);
	assert_int_equal(pk.nnear, 0);
	demangle_pick__free(&pk);

	demangle_pick__init(&pk, "shop::Cart::Cart");
	add_all(&pk);
	assert_int_equal(pk.nmatch, 1);
	assert_string_equal(pk.match[0].mangled, "_ZN4shop4CartC1Ev");
	demangle_pick__free(&pk);
}

static void test_pick_several(void **state)
{
	struct demangle_pick pk;
	char buf[1024];

	demangle_pick__init(&pk, "shop::Cart::add");
	add_all(&pk);
	assert_int_equal(pk.nmatch, 2);
	demangle_pick__describe(&pk, buf, sizeof(buf));
	assert_string_equal(buf,
		"matches 2 functions: shop::Cart::add(int) [" CART_ADD_INT "]; "
		"shop::Cart::add(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&) [" CART_ADD_STR "]; "
		"name one by its full signature or its mangled name");
	demangle_pick__free(&pk);
}

static void test_suffix(void **state)
{
	size_t n;

	assert_int_equal(demangle__suffix(CART_ADD_INT, &n), DEMANGLE_SUFFIX_NONE);
	assert_int_equal(n, strlen(CART_ADD_INT));
	assert_int_equal(demangle__suffix("main", &n), DEMANGLE_SUFFIX_NONE);
	assert_int_equal(demangle__suffix("foo.isra.0", &n), DEMANGLE_SUFFIX_NONE);
	assert_int_equal(demangle__suffix(CART_ADD_INT ".isra.0", &n), DEMANGLE_SUFFIX_CLONE);
	assert_int_equal(n, strlen(CART_ADD_INT));
	assert_int_equal(demangle__suffix(CART_ADD_INT ".constprop.0.isra.12", &n),
			 DEMANGLE_SUFFIX_CLONE);
	assert_int_equal(demangle__suffix(CART_ADD_INT ".part.3", &n), DEMANGLE_SUFFIX_CLONE);
	assert_int_equal(demangle__suffix(CART_ADD_INT ".llvm.1234", &n), DEMANGLE_SUFFIX_SAME);
	assert_int_equal(demangle__suffix(CART_ADD_INT ".localalias", &n), DEMANGLE_SUFFIX_SAME);
	assert_int_equal(demangle__suffix(CART_ADD_INT ".cold", &n), DEMANGLE_SUFFIX_OTHER);
	assert_int_equal(demangle__suffix(CART_ADD_INT ".isra.0.cold", &n), DEMANGLE_SUFFIX_OTHER);
	assert_int_equal(demangle__suffix(CART_ADD_INT ".isra", &n), DEMANGLE_SUFFIX_OTHER);
	assert_int_equal(demangle__suffix(CART_ADD_INT ".isra.x", &n), DEMANGLE_SUFFIX_OTHER);
}

static void test_pick_clones(void **state)
{
	struct demangle_pick pk;
	char buf[1024];

	(void)state;
	/* Only a clone: it is the match, and settle says so. */
	demangle_pick__init(&pk, "shop::Cart::add(int)");
	assert_int_equal(demangle_pick__add(&pk, CART_ADD_INT ".isra.0", 0x20, 8), 0);
	assert_int_equal(demangle_pick__add(&pk, CART_ADD_INT ".cold", 0x90, 8), 0);
	assert_int_equal(demangle_pick__settle(&pk), 1);
	assert_int_equal(pk.nmatch, 1);
	assert_int_equal(pk.match[0].base_len, strlen(CART_ADD_INT));
	demangle_pick__free(&pk);

	/* The original is there: it is the one named, its clone dropped. */
	demangle_pick__init(&pk, "shop::Cart::add(int)");
	assert_int_equal(demangle_pick__add(&pk, CART_ADD_INT ".constprop.0", 0x40, 8), 0);
	assert_int_equal(demangle_pick__add(&pk, CART_ADD_INT, 0x20, 8), 0);
	assert_int_equal(demangle_pick__settle(&pk), 0);
	assert_int_equal(pk.nmatch, 1);
	assert_string_equal(pk.match[0].mangled, CART_ADD_INT);
	demangle_pick__free(&pk);

	/* Two clones of one function. */
	demangle_pick__init(&pk, "shop::Cart::add(int)");
	assert_int_equal(demangle_pick__add(&pk, CART_ADD_INT ".isra.0", 0x20, 8), 0);
	assert_int_equal(demangle_pick__add(&pk, CART_ADD_INT ".constprop.0", 0x40, 8), 0);
	assert_int_equal(demangle_pick__settle(&pk), 2);
	demangle_pick__free(&pk);

	/* A clone-only name that also names another function: ambiguous. */
	demangle_pick__init(&pk, "shop::Cart::add");
	assert_int_equal(demangle_pick__add(&pk, CART_ADD_INT ".isra.0", 0x20, 8), 0);
	assert_int_equal(demangle_pick__add(&pk, CART_ADD_STR, 0x30, 8), 0);
	assert_int_equal(demangle_pick__settle(&pk), 0);
	assert_int_equal(pk.nmatch, 2);
	demangle_pick__describe(&pk, buf, sizeof(buf));
	assert_string_equal(buf,
		"matches 2 functions: shop::Cart::add(int) [clone .isra.0] [" CART_ADD_INT ".isra.0]; "
		"shop::Cart::add(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&) [" CART_ADD_STR "]; "
		"name one by its full signature or its mangled name");
	demangle_pick__free(&pk);
}

static void test_pick_nearest(void **state)
{
	struct demangle_pick pk;
	char buf[1024];

	demangle_pick__init(&pk, "main::handlr");
	pk.nearest = true;
	add_all(&pk);
	assert_int_equal(pk.nmatch, 0);
	demangle_pick__describe(&pk, buf, sizeof(buf));
	/* By edit distance (none contains "main::handlr"), then by name. */
	assert_string_equal(buf,
		"nearest: main::handler [" RUST_LEGACY "], main, "
		"handle_order, shop::Cart::Cart() [_ZN4shop4CartC1Ev], "
		"shop::Cart::add(int) [" CART_ADD_INT "]");
	demangle_pick__free(&pk);

	/* Names that contain what was written come first. */
	demangle_pick__init(&pk, "Cart");
	pk.nearest = true;
	add_all(&pk);
	assert_int_equal(pk.nmatch, 0);
	assert_int_equal(pk.nnear, 5);
	assert_string_equal(pk.near[0].shown, "shop::Cart::add(int)");
	assert_string_equal(pk.near[1].mangled, CART_ADD_STR);
	assert_string_equal(pk.near[2].shown, "shop::Cart::Cart()");
	/* Then the rest, by edit distance. */
	assert_string_equal(pk.near[3].shown, "main");
	demangle_pick__free(&pk);

	/* Without .nearest, a miss costs nothing but the demangling. */
	demangle_pick__init(&pk, "nothing");
	add_all(&pk);
	assert_int_equal(pk.nnear, 0);
	demangle_pick__describe(&pk, buf, sizeof(buf));
	assert_string_equal(buf, "");
	demangle_pick__free(&pk);
}

static void test_shown(void **state)
{
	char buf[256];

	assert_int_equal(demangle__shown(CART_ADD_INT, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "shop::Cart::add(int) [" CART_ADD_INT "]");
	assert_int_equal(demangle__shown("main.handler", buf, sizeof(buf)), -1);
	assert_string_equal(buf, "");
	/* Truncated, still terminated. */
	assert_int_equal(demangle__shown(CART_ADD_INT, buf, 8), 0);
	assert_string_equal(buf, "shop::C");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_matches),
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_pick_one),
		cmocka_unit_test(test_pick_several),
		cmocka_unit_test(test_pick_nearest),
		cmocka_unit_test(test_suffix),
		cmocka_unit_test(test_pick_clones),
		cmocka_unit_test(test_shown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
