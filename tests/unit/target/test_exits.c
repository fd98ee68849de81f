// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/target/exits.c: the exits of functions whose bytes are
 * known (assembled here into a shared object), and each reason a
 * function's exits cannot all be found.
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
#include "target/exits.h"

static char dir[] = "/tmp/sds-exits-XXXXXX";
static char so[64];
static struct elf_file *ef;

/*
 * two_rets: rets at +9 and +12.  with_cold: its ret at +8, and it jumps
 * to with_cold.cold (a part of it: its ret at +5).  indirect: jmp *%rax
 * at +1.  tail: jmp to two_rets at +3.  noret: no ret.  justret: a ret
 * and nothing else.
 */
static const char asm_src[] =
	"	.text\n"
	"	.globl two_rets\n"
	"	.type two_rets, @function\n"
	"two_rets:\n"
	"	test %edi, %edi\n"
	"	je 1f\n"
	"	mov $1, %eax\n"
	"	ret\n"
	"1:	xor %eax, %eax\n"
	"	ret\n"
	"	.size two_rets, . - two_rets\n"
	"	.globl with_cold\n"
	"	.type with_cold, @function\n"
	"with_cold:\n"
	"	test %edi, %edi\n"
	"	jne.d32 with_cold.cold\n"
	"	ret\n"
	"	.size with_cold, . - with_cold\n"
	"	.globl indirect\n"
	"	.type indirect, @function\n"
	"indirect:\n"
	"	push %rbp\n"
	"	jmp *%rax\n"
	"	.size indirect, . - indirect\n"
	"	.globl tail\n"
	"	.type tail, @function\n"
	"tail:\n"
	"	add $1, %edi\n"
	"	jmp.d32 two_rets\n"
	"	.size tail, . - tail\n"
	"	.globl noret\n"
	"	.type noret, @function\n"
	"noret:\n"
	"	push %rbp\n"
	"	ud2\n"
	"	.size noret, . - noret\n"
	"	.globl justret\n"
	"	.type justret, @function\n"
	"justret:\n"
	"	ret\n"
	"	.size justret, . - justret\n"
	"	.section .text.unlikely, \"ax\", @progbits\n"
	"	.type with_cold.cold, @function\n"
	"with_cold.cold:\n"
	"	mov $2, %eax\n"
	"	ret\n"
	"	.size with_cold.cold, . - with_cold.cold\n"
	"	.section .note.GNU-stack, \"\", @progbits\n";

static int setup(void **state)
{
	(void)state;
	return elf_fixture__build(dir, asm_src, "", so, sizeof(so), &ef);
}

static int teardown(void **state)
{
	(void)state;
	return elf_fixture__remove(dir, ef);
}

/* exits__find() on @sym, entry probe on its first byte. */
static int find(const char *sym, struct elf_func *fn, struct exit_sites *out,
		char *why, size_t len)
{
	char err[256];

	assert_int_equal(elf_file__find_func(ef, sym, fn, err, sizeof(err)), 0);
	return exits__find(ef, fn, sym, fn->vaddr, out, why, len);
}

static void test_exits_two_rets(void **state)
{
	struct exit_sites out;
	struct elf_func fn;
	char why[160] = "";

	(void)state;
	assert_int_equal(find("two_rets", &fn, &out, why, sizeof(why)), 0);
	assert_int_equal(out.n, 2);
	assert_int_equal(out.vaddr[0], fn.vaddr + 9);
	assert_int_equal(out.vaddr[1], fn.vaddr + 12);
	/* A shared object's text: file offsets equal addresses here. */
	assert_int_equal(out.off[0], fn.offset + 9);
	assert_int_equal(out.off[1], fn.offset + 12);
}

static void test_exits_follows_cold_part(void **state)
{
	struct elf_func fn, cold;
	struct exit_sites out;
	char why[160] = "", err[256];

	(void)state;
	assert_int_equal(elf_file__find_func(ef, "with_cold.cold", &cold, err,
					     sizeof(err)), 0);
	assert_int_equal(find("with_cold", &fn, &out, why, sizeof(why)), 0);
	assert_int_equal(out.n, 2);
	assert_int_equal(out.vaddr[0], fn.vaddr + 8);
	assert_int_equal(out.vaddr[1], cold.vaddr + 5);
}

static void refused(const char *sym, const char *want)
{
	struct exit_sites out;
	struct elf_func fn;
	char why[160] = "";

	assert_int_equal(find(sym, &fn, &out, why, sizeof(why)), -1);
	assert_string_equal(why, want);
}

static void test_exits_refusals(void **state)
{
	(void)state;
	refused("indirect", "an indirect jump (jmp rax) at +0x1: a switch or a tail call, its target is unknown");
	refused("tail", "it jumps at +0x3 to two_rets+0x0 (a tail call: the call ends in another function's ret)");
	refused("noret", "it has no ret (it never returns)");
	refused("justret", "its entry probe's instruction is its ret (+0x0)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exits_two_rets),
		cmocka_unit_test(test_exits_follows_cold_part),
		cmocka_unit_test(test_exits_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
