// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/target/nothrow.c: which functions of known bytes
 * (assembled here into a shared object, library calls through its PLT)
 * no unwind can pass through, and why the others may be.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/elfsym.h"
#include "elf_fixture.h"
#include "target/nothrow.h"

static char dir[] = "/tmp/sds-nothrow-XXXXXX";
static char so[64];
static struct elf_file *ef;

#define FN(name) \
	"	.globl " name "\n	.type " name ", @function\n" name ":\n"
#define END(name) "	.size " name ", . - " name "\n"
/* d<N> calls d<N+1>: a chain of calls, d8 a leaf. */
#define CHAIN(n, next) FN("d" #n) "	call.d32 d" #next "\n	ret\n" END("d" #n)

static const char asm_src[] =
	"	.text\n"
	FN("leaf")
	"	mov %edi, %eax\n"
	"	ret\n"
	END("leaf")
	FN("calls_leaf")
	"	push %rbx\n"
	"	call.d32 leaf\n"
	"	pop %rbx\n"
	"	ret\n"
	END("calls_leaf")
	FN("copies")
	"	call memcpy@PLT\n"
	"	call strlen@PLT\n"
	"	ret\n"
	END("copies")
	FN("throws")
	"	call __cxa_throw@PLT\n"
	END("throws")
	FN("via_throws")
	"	call.d32 calls_leaf\n"
	"	jmp.d32 throws\n"
	END("via_throws")
	FN("indirect")
	"	call *%rax\n"
	"	ret\n"
	END("indirect")
	FN("unknown_lib")
	"	call puts@PLT\n"
	"	ret\n"
	END("unknown_lib")
	FN("self_loop")
	"	test %edi, %edi\n"
	"	je 1f\n"
	"	dec %edi\n"
	"	call.d32 self_loop\n"
	"1:	ret\n"
	END("self_loop")
	CHAIN(0, 1) CHAIN(1, 2) CHAIN(2, 3) CHAIN(3, 4) CHAIN(4, 5)
	CHAIN(5, 6) CHAIN(6, 7) CHAIN(7, 8)
	FN("d8")
	"	ret\n"
	END("d8")
	"	.section .note.GNU-stack, \"\", @progbits\n";

static int setup(void **state)
{
	(void)state;
	return elf_fixture__build(dir, asm_src, "-Wl,-z,now", so, sizeof(so), &ef);
}

static int teardown(void **state)
{
	(void)state;
	return elf_fixture__remove(dir, ef);
}

/* nothrow__check() on @sym says @safe, and @want. */
static void said(const char *sym, bool safe, const char *want)
{
	struct elf_func fn;
	char err[256], why[160] = "";

	assert_int_equal(elf_file__find_func(ef, sym, &fn, err, sizeof(err)), 0);
	assert_int_equal(nothrow__check(ef, &fn, why, sizeof(why)), safe);
	assert_string_equal(why, want);
}

static void test_nothrow_safe(void **state)
{
	(void)state;
	said("leaf", true, "cannot unwind: a leaf");
	said("calls_leaf", true, "cannot unwind: nothing it calls can throw");
	said("copies", true, "cannot unwind: it calls only memcpy, strlen");
	/* Recursion is followed once. */
	said("self_loop", true, "cannot unwind: a leaf");
}

static void test_nothrow_unsafe(void **state)
{
	(void)state;
	said("throws", false, "may unwind: calls __cxa_throw");
	said("via_throws", false, "may unwind: calls throws -> __cxa_throw");
	said("indirect", false, "may unwind: an indirect call (call rax) at +0x0");
	said("unknown_lib", false,
	     "may unwind: calls puts (a library function not known never to throw)");
	said("d0", false,
	     "may unwind: calls d1 -> d2 -> d3 -> d4 -> d5 -> d6 -> d7 (deeper than 6 calls: not followed)");
	said("d2", true, "cannot unwind: nothing it calls can throw");
	/* d1's tree is 7 deep, but d2's is proven now: the bound is for cost. */
	said("d1", true, "cannot unwind: nothing it calls can throw");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothrow_safe),
		cmocka_unit_test(test_nothrow_unsafe),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
