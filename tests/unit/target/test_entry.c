// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/target/entry.c: where the entry probe of functions
 * whose bytes are known (assembled here into a shared object) sits, and
 * why an entry stays where it is.
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
#include "target/entry.h"
#include "pointspec/pointspec.h"

static char dir[] = "/tmp/sds-entry-XXXXXX";
static char so[64];
static struct elf_file *ef;

#define FN(name) \
	"	.globl " name "\n	.type " name ", @function\n" name ":\n"
#define END(name) "	.size " name ", . - " name "\n"

/*
 * stepped_push: mov (3 bytes, stepped), then push %rbx at +3.
 * early_ret: test (2), je at +2 to an early ret, push after it.
 * call_loop: xor (2), a call at +2 that the jne at +9 jumps back to.
 * sub_first: sub $0x18,%rsp (4), then a call: the stack moved first.
 * cet: endbr64, mov (3), push at +7.
 * switchy: mov (3), push at +3, and an indirect jump later.
 * cold_back: mov (3), push at +3; its part cold_back.cold jumps back to it.
 * go_like: sub $0x18,%rsp (4), call at +4, a jump back to +0 (Go's morestack).
 * two_movs: mov (3), mov (3), push at +6.
 * pushfirst: push %rbp: emulated at once, nothing to move.
 */
static const char asm_src[] =
	"	.text\n"
	"	.hidden helper\n"
	"	.type helper, @function\n"
	"helper:\n"
	"	ret\n"
	END("helper")
	FN("stepped_push")
	"	mov %rdi, %rax\n"
	"	push %rbx\n"
	"	pop %rbx\n"
	"	ret\n"
	END("stepped_push")
	FN("early_ret")
	"	test %edi, %edi\n"
	"	je 1f\n"
	"	push %rbx\n"
	"	pop %rbx\n"
	"1:	ret\n"
	END("early_ret")
	FN("call_loop")
	"	xor %eax, %eax\n"
	"1:	call.d32 helper\n"
	"	dec %edi\n"
	"	jne 1b\n"
	"	ret\n"
	END("call_loop")
	FN("sub_first")
	"	sub $0x18, %rsp\n"
	"	call.d32 helper\n"
	"	add $0x18, %rsp\n"
	"	ret\n"
	END("sub_first")
	FN("cet")
	"	endbr64\n"
	"	mov %rdi, %rax\n"
	"	push %rbx\n"
	"	pop %rbx\n"
	"	ret\n"
	END("cet")
	FN("switchy")
	"	mov %rdi, %rax\n"
	"	push %rbx\n"
	"	pop %rbx\n"
	"	jmp *%rax\n"
	END("switchy")
	FN("cold_back")
	"	mov %rdi, %rax\n"
	".Lcb_push:\n"
	"	push %rbx\n"
	"	test %eax, %eax\n"
	"	jne.d32 cold_back.cold\n"
	"	pop %rbx\n"
	"	ret\n"
	END("cold_back")
	FN("go_like")
	".Lgo_start:\n"
	"	sub $0x18, %rsp\n"
	"	call.d32 helper\n"
	"	add $0x18, %rsp\n"
	"	test %eax, %eax\n"
	"	je.d32 .Lgo_start\n"
	"	ret\n"
	END("go_like")
	FN("two_movs")
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdx\n"
	"	push %rbx\n"
	"	pop %rbx\n"
	"	ret\n"
	END("two_movs")
	FN("pushfirst")
	"	push %rbp\n"
	"	pop %rbp\n"
	"	ret\n"
	END("pushfirst")
	"	.section .text.unlikely, \"ax\", @progbits\n"
	"	.type cold_back.cold, @function\n"
	"cold_back.cold:\n"
	"	jmp.d32 .Lcb_push\n"
	END("cold_back.cold")
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

/* entry__place() on @sym with @spec (NULL: defaults); its return. */
static int place(const char *sym, const struct point_spec *spec, bool go,
		 struct site *s, char *err, size_t len)
{
	struct elf_func fn;

	assert_int_equal(elf_file__find_func(ef, sym, &fn, err, len), 0);
	err[0] = '\0';
	return entry__place(ef, &fn, spec, go, s, err, len);
}

/* @sym's site: at @skip, of @kind, saying @why. */
static void placed(const char *sym, bool go, unsigned int skip,
		   enum site_kind kind, const char *why)
{
	char err[256];
	struct site s;

	assert_int_equal(place(sym, NULL, go, &s, err, sizeof(err)), 0);
	assert_int_equal(s.skip, skip);
	assert_int_equal(s.kind, kind);
	assert_string_equal(s.why, why);
}

static void test_entry_moves_to_push(void **state)
{
	(void)state;
	placed("stepped_push", false, 3, SITE_EMULATED,
	       "+0x3, `push %rbx`: first emulated instruction on every path");
	placed("cet", false, 7, SITE_EMULATED,
	       "+0x7, `push %rbx`: first emulated instruction on every path");
}

static void test_entry_not_past_early_return(void **state)
{
	(void)state;
	/* The je at +2 is emulated and on every path: the push is not. */
	placed("early_ret", false, 2, SITE_EMULATED,
	       "+0x2, `jcc`: first emulated instruction on every path");
}

static void test_entry_kept(void **state)
{
	(void)state;
	placed("call_loop", false, 0, SITE_STEPPED,
	       "kept at the entry: +0x2 is in a loop (the jne at +0x9 goes back to +0x2)");
	placed("sub_first", false, 0, SITE_STEPPED,
	       "kept at the entry: `sub rsp, 0x18` at +0x0 moves the stack pointer first (the return address must stay on top for the return probes)");
	placed("switchy", false, 0, SITE_STEPPED,
	       "kept at the entry: an indirect jump (jmp rax) at +0x5 could land anywhere in it");
	placed("cold_back", false, 0, SITE_STEPPED,
	       "kept at the entry: +0x3 is in a loop (the jmp at part +0x0 goes back to +0x3)");
	/* Emulated already: nothing moved, nothing said. */
	placed("pushfirst", false, 0, SITE_EMULATED, "");
}

static void test_entry_go(void **state)
{
	(void)state;
	/* No return probe: the stack may move; the jump to +0 is morestack's. */
	placed("go_like", true, 4, SITE_EMULATED,
	       "+0x4, `call`: first emulated instruction on every path");
	placed("go_like", false, 0, SITE_STEPPED,
	       "kept at the entry: `sub rsp, 0x18` at +0x0 moves the stack pointer first (the return address must stay on top for the return probes)");
}

static void test_entry_spec(void **state)
{
	struct point_spec ps;
	char err[256];
	struct site s;

	(void)state;
	memset(&ps, 0, sizeof(ps));
	ps.copy = true;
	assert_int_equal(place("stepped_push", &ps, false, &s, err, sizeof(err)), 0);
	assert_int_equal(s.skip, 0);
	assert_string_equal(s.why, "kept at the entry: copy= reads the arguments there, before the function moves them");

	memset(&ps, 0, sizeof(ps));
	ps.site_policy = SITE_POLICY_ENTRY;
	assert_int_equal(place("stepped_push", &ps, false, &s, err, sizeof(err)), 0);
	assert_int_equal(s.skip, 0);
	assert_int_equal(s.kind, SITE_STEPPED);

	/* A forced site wins over the analysis, even a stepped one ... */
	ps.site_policy = SITE_POLICY_AT;
	ps.site_at = 3;
	assert_int_equal(place("two_movs", &ps, false, &s, err, sizeof(err)), 0);
	assert_int_equal(s.skip, 3);
	assert_int_equal(s.kind, SITE_STEPPED);
	assert_string_equal(s.why, "+0x3, `other (48 89 f2)`: forced by :site=");
	/* ... in the loop too, but not off an instruction's start ... */
	ps.site_at = 2;
	assert_int_equal(place("call_loop", &ps, false, &s, err, sizeof(err)), 0);
	assert_int_equal(s.skip, 2);
	ps.site_at = 1;
	assert_int_equal(place("stepped_push", &ps, false, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "+0x1 is not the start of an instruction");
	/* ... nor past a stack move, nor past the end. */
	ps.site_at = 4;
	assert_int_equal(place("stepped_push", &ps, false, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "`push rbx` at +0x3 moves the stack pointer first (the return address must stay on top for the return probes)");
	assert_int_equal(place("sub_first", &ps, false, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "`sub rsp, 0x18` at +0x0 moves the stack pointer first (the return address must stay on top for the return probes)");
	ps.site_at = 64;
	assert_int_equal(place("stepped_push", &ps, false, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "+0x40 is past its end (6 bytes)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_moves_to_push),
		cmocka_unit_test(test_entry_not_past_early_return),
		cmocka_unit_test(test_entry_kept),
		cmocka_unit_test(test_entry_go),
		cmocka_unit_test(test_entry_spec),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
