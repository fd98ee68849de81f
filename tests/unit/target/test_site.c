// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests of loader/target/site.c: the probe-site kind of each first insn. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "target/site.h"

/* Bytes after the instruction under test, as a function would go on. */
#define TAIL 0x48, 0x89, 0xe5, 0x31, 0xc0, 0x5d, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc

#define CHECK(vaddr, kind, skip, insn, ...) do {			\
	const unsigned char code_[] = { __VA_ARGS__ };			\
	check_site(code_, sizeof(code_), vaddr, kind, skip, insn);	\
} while (0)

static void check_site(const unsigned char *code, size_t len, uint64_t vaddr,
		       enum site_kind kind, unsigned int skip, const char *insn)
{
	struct site s;

	memset(&s, 0xa5, sizeof(s));
	site_classify(code, len, vaddr, &s);
	assert_string_equal(site_kind_name(s.kind), site_kind_name(kind));
	assert_int_equal(s.kind, kind);
	assert_int_equal(s.skip, skip);
	assert_string_equal(s.insn, insn);
}

static void test_nop5(void **state)
{
	CHECK(0x401000, SITE_NOP5, 0, "nopl 0x0(%rax,%rax,1)",
	      0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3, TAIL);
	/* Exactly five bytes are enough. */
	CHECK(0x1130, SITE_NOP5, 0, "nopl 0x0(%rax,%rax,1)",
	      0x0f, 0x1f, 0x44, 0x00, 0x00);
	/* The last start that stays inside its page: 4091 + 5 = 4096. */
	CHECK(0x1ffb, SITE_NOP5, 0, "nopl 0x0(%rax,%rax,1)",
	      0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3);
}

static void test_nop5_crossing_page(void **state)
{
	CHECK(0x1ffc, SITE_EMULATED, 0, "nopl 0x0(%rax,%rax,1)",
	      0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3);
	CHECK(0x7fff, SITE_EMULATED, 0, "nopl 0x0(%rax,%rax,1)",
	      0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3);
	CHECK(0x400ffd, SITE_EMULATED, 0, "nopl 0x0(%rax,%rax,1)",
	      0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3);
}

static void test_endbr64(void **state)
{
	/* endbr64; push %rbp: the probe goes to +4, emulated. */
	CHECK(0x1139, SITE_EMULATED, 4, "push %rbp",
	      0xf3, 0x0f, 0x1e, 0xfa, 0x55, TAIL);
	/* endbr64; mov %rdi,%rax: +4 still, but single-stepped. */
	CHECK(0x1139, SITE_STEPPED, 4, "other (48 89 f8)",
	      0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x89, 0xf8, 0xc3);
	/* endbr64; nop5: the NOP is judged at its own address, +4. */
	CHECK(0x1000, SITE_NOP5, 4, "nopl 0x0(%rax,%rax,1)",
	      0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3);
	CHECK(0x1ff7, SITE_NOP5, 4, "nopl 0x0(%rax,%rax,1)",
	      0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3);
	CHECK(0x1ff8, SITE_EMULATED, 4, "nopl 0x0(%rax,%rax,1)",
	      0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3);
	/* endbr64; push %r12 */
	CHECK(0x1000, SITE_EMULATED, 4, "push %r12",
	      0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x54, TAIL);
	/* Nothing known after it: probe the endbr64 itself. */
	CHECK(0x1000, SITE_STEPPED, 0, "endbr64", 0xf3, 0x0f, 0x1e, 0xfa);
	/* Only a leading one is skipped. */
	CHECK(0x1000, SITE_STEPPED, 4, "endbr64",
	      0xf3, 0x0f, 0x1e, 0xfa, 0xf3, 0x0f, 0x1e, 0xfa, 0x55);
}

static void test_push(void **state)
{
	static const char *const regs[16] = {
		"push %rax", "push %rcx", "push %rdx", "push %rbx",
		"push %rsp", "push %rbp", "push %rsi", "push %rdi",
		"push %r8", "push %r9", "push %r10", "push %r11",
		"push %r12", "push %r13", "push %r14", "push %r15",
	};
	unsigned char code[16];
	int r;

	for (r = 0; r < 8; r++) {
		memset(code, 0xcc, sizeof(code));
		code[0] = (unsigned char)(0x50 + r);
		check_site(code, sizeof(code), 0x1000, SITE_EMULATED, 0, regs[r]);
		code[0] = 0x41;
		code[1] = (unsigned char)(0x50 + r);
		check_site(code, sizeof(code), 0x1000, SITE_EMULATED, 0,
			   regs[8 + r]);
	}
	/* Other REX prefixes on push are not emulated by the kernel. */
	CHECK(0x1000, SITE_STEPPED, 0, "other (40 55 48)", 0x40, 0x55, TAIL);
	CHECK(0x1000, SITE_STEPPED, 0, "other (49 54 48)", 0x49, 0x54, TAIL);
	/* A lone 41 at the end of the bytes is no push. */
	CHECK(0x1000, SITE_STEPPED, 0, "other (41)", 0x41);
}

static void test_nops(void **state)
{
	CHECK(0x1000, SITE_EMULATED, 0, "nop", 0x90, TAIL);
	/* -fpatchable-function-entry=5: five 1-byte NOPs, emulated. */
	CHECK(0x1000, SITE_EMULATED, 0, "nop", 0x90, 0x90, 0x90, 0x90, 0x90, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "xchg %ax,%ax", 0x66, 0x90, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "nopl (0f 1f 00)", 0x0f, 0x1f, 0x00, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "nopl (0f 1f 40 00)",
	      0x0f, 0x1f, 0x40, 0x00, TAIL);
	/* Not the exact bytes the kernel optimizes. */
	CHECK(0x1000, SITE_EMULATED, 0, "nopl (0f 1f 44 00 08)",
	      0x0f, 0x1f, 0x44, 0x00, 0x08, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "nopl (0f 1f 80 00 00 00 00)",
	      0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "nopl (0f 1f 84 00 00 00 00 00)",
	      0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "nopw (66 0f 1f 44 00 00)",
	      0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00, TAIL);
	/* Too long to list whole in the 32-byte field. */
	CHECK(0x1000, SITE_EMULATED, 0, "nopw (66 2e 0f 1f 84 00 00 ..)",
	      0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, TAIL);
	/* 0f 1f with a ModRM reg other than 0 is not NOP /0. */
	CHECK(0x1000, SITE_STEPPED, 0, "other (0f 1f 48)",
	      0x0f, 0x1f, 0x48, 0x00, TAIL);
	/* Cut short: the ModRM needs a SIB and disp8 that are missing. */
	CHECK(0x1000, SITE_STEPPED, 0, "other (0f 1f 44)", 0x0f, 0x1f, 0x44);
	/* f3 90 is pause, not a NOP to the kernel. */
	CHECK(0x1000, SITE_STEPPED, 0, "other (f3 90 48)", 0xf3, 0x90, TAIL);
}

static void test_branches(void **state)
{
	CHECK(0x1000, SITE_EMULATED, 0, "call", 0xe8, 0x10, 0x00, 0x00, 0x00, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "jmp", 0xe9, 0x10, 0x00, 0x00, 0x00, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "jmp", 0xeb, 0x05, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "jcc", 0x70, 0x05, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "jcc", 0x74, 0x05, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "jcc", 0x7f, 0x05, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "jcc",
	      0x0f, 0x80, 0x10, 0x00, 0x00, 0x00, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "jcc",
	      0x0f, 0x84, 0x10, 0x00, 0x00, 0x00, TAIL);
	CHECK(0x1000, SITE_EMULATED, 0, "jcc",
	      0x0f, 0x8f, 0x10, 0x00, 0x00, 0x00, TAIL);
	/* Indirect and prefixed branches are stepped. */
	CHECK(0x1000, SITE_STEPPED, 0, "other (ff e0 48)", 0xff, 0xe0, TAIL);
	CHECK(0x1000, SITE_STEPPED, 0, "other (f2 e8 10)",
	      0xf2, 0xe8, 0x10, 0x00, 0x00, 0x00, TAIL);
	CHECK(0x1000, SITE_STEPPED, 0, "other (0f 90 c0)", 0x0f, 0x90, 0xc0, TAIL);
}

static void test_stepped(void **state)
{
	CHECK(0x1000, SITE_STEPPED, 0, "other (48 89 f8)", 0x48, 0x89, 0xf8, 0xc3);
	CHECK(0x1000, SITE_STEPPED, 0, "other (48 83 ec)",
	      0x48, 0x83, 0xec, 0x08, TAIL);
	CHECK(0x1000, SITE_STEPPED, 0, "other (31 c0 c3)", 0x31, 0xc0, 0xc3);
	CHECK(0x1000, SITE_STEPPED, 0, "other (c3)", 0xc3);
	CHECK(0x1000, SITE_STEPPED, 0, "other (8d 04)", 0x8d, 0x04);
}

static void test_no_code(void **state)
{
	struct site s;
	unsigned char b = 0x55;

	site_classify(&b, 0, 0x1000, &s);
	assert_int_equal(s.kind, SITE_STEPPED);
	assert_int_equal(s.skip, 0);
	assert_string_equal(s.insn, "unknown (no code)");
}

/* Go's stack checks (regabi): the probe goes past the jbe. */
static void test_go_prologue(void **state)
{
	/* main.work of tests/harm/unwind_go.go (Go 1.19) */
	static const unsigned char lea_cmp_jbe32[] = {
		0x4c, 0x8d, 0xa4, 0x24, 0x70, 0xff, 0xff, 0xff,	/* lea -0x90(%rsp),%r12 */
		0x4d, 0x3b, 0x66, 0x10,				/* cmp 0x10(%r14),%r12 */
		0x0f, 0x86, 0x92, 0x00, 0x00, 0x00,		/* jbe */
		0x48, 0x81, 0xec, 0x10, 0x01, 0x00, 0x00,	/* sub $0x110,%rsp */
	};
	static const unsigned char cmp_jbe8_push[] = {
		0x49, 0x3b, 0x66, 0x10,		/* cmp 0x10(%r14),%rsp */
		0x76, 0x20,			/* jbe */
		0x55,				/* push %rbp */
		0x48, 0x89, 0xe5,		/* mov %rsp,%rbp */
	};
	static const unsigned char lea8[] = {
		0x4c, 0x8d, 0x64, 0x24, 0xf8,	/* lea -0x8(%rsp),%r12 */
		0x4d, 0x3b, 0x66, 0x10, 0x76, 0x10, 0x55, 0x90,
	};
	static const unsigned char wrong_reg[] = {
		0x4c, 0x8d, 0x64, 0x24, 0xf8,
		0x49, 0x3b, 0x66, 0x10,		/* cmp with %rsp after lea %r12 */
		0x76, 0x10, 0x55,
	};
	static const unsigned char no_jbe[] = { 0x49, 0x3b, 0x66, 0x10, 0x55, 0x90 };
	struct site s;

	assert_int_equal(site_go_prologue(lea_cmp_jbe32, sizeof(lea_cmp_jbe32)), 18);
	assert_int_equal(site_go_prologue(cmp_jbe8_push, sizeof(cmp_jbe8_push)), 6);
	assert_int_equal(site_go_prologue(lea8, sizeof(lea8)), 11);
	assert_int_equal(site_go_prologue(wrong_reg, sizeof(wrong_reg)), 0);
	assert_int_equal(site_go_prologue(no_jbe, sizeof(no_jbe)), 0);
	/* cut short: no prologue */
	assert_int_equal(site_go_prologue(lea_cmp_jbe32, 13), 0);

	site_classify_go(cmp_jbe8_push, sizeof(cmp_jbe8_push), 0x1000, &s);
	assert_int_equal(s.skip, 6);
	assert_int_equal(s.kind, SITE_EMULATED);
	site_classify_go(lea_cmp_jbe32, sizeof(lea_cmp_jbe32), 0x1000, &s);
	assert_int_equal(s.skip, 18);
	assert_int_equal(s.kind, SITE_STEPPED);
	/* no prologue (a NOSPLIT function): the entry, as site_classify */
	site_classify_go(no_jbe + 4, 2, 0x1000, &s);
	assert_int_equal(s.skip, 0);
	assert_int_equal(s.kind, SITE_EMULATED);
}

static void test_names_costs_hints(void **state)
{
	assert_string_equal(site_kind_name(SITE_NOP5), "nop5");
	assert_string_equal(site_kind_name(SITE_EMULATED), "emulated");
	assert_string_equal(site_kind_name(SITE_STEPPED), "stepped");

	assert_int_equal(site_cost_ns(SITE_NOP5), 700);
	assert_int_equal(site_cost_ns(SITE_EMULATED), 1000);
	assert_int_equal(site_cost_ns(SITE_STEPPED), 20500);

}

/* The hint under each point, by the language and compiler of the TARGET. */
static const char *hint(enum site_kind kind, unsigned int skip,
			enum src_lang lang, bool clang)
{
	static char buf[512];
	struct site s = { .kind = kind, .skip = skip };
	struct src_info src = { .lang = lang, .clang = clang };

	memset(buf, '#', sizeof(buf));
	site_hint(&s, &src, buf, sizeof(buf));
	return buf;
}

static void test_hints(void **state)
{
	enum src_lang l;

	for (l = SRC_LANG_C; l <= SRC_LANG_GO; l++)
		assert_string_equal(hint(SITE_NOP5, 4, l, false), "");
	assert_string_equal(hint(SITE_STEPPED, 0, SRC_LANG_C, false),
		"build with gcc -pg -mfentry -mnop-mcount (non-PIE, linked without -pg) for a nop5 site (~300 ns a probe); for PIE and shared libraries -fno-omit-frame-pointer starts functions with push %rbp, emulated; -fpatchable-function-entry=5 pads with five 1-byte NOPs, emulated (~600 ns a probe)");
	assert_string_equal(hint(SITE_EMULATED, 4, SRC_LANG_CXX, false),
		"build with gcc -pg -mfentry -mnop-mcount (non-PIE, linked without -pg) for a nop5 site (~300 ns a probe); for PIE and shared libraries -fpatchable-function-entry=5 pads with five 1-byte NOPs, emulated (~600 ns a probe); the leading endbr64 is skipped, the probe sits 4 bytes in");
	assert_string_equal(hint(SITE_STEPPED, 0, SRC_LANG_C, true),
		"clang on x86 has no -mnop-mcount and its -fpatchable-function-entry=5 pad (0f 1f 44 00 08) is only emulated (~600 ns a probe), as is -fno-omit-frame-pointer's push %rbp; gcc -pg -mfentry -mnop-mcount (non-PIE, linked without -pg) gives a nop5 (~300 ns a probe)");
	assert_string_equal(hint(SITE_STEPPED, 0, SRC_LANG_RUST, false),
		"stable rustc has no option for a 5-byte NOP at function entry (-Z instrument-mcount is nightly only); -C force-frame-pointers=yes starts functions with push %rbp, emulated (~600 ns a probe)");
	assert_string_equal(hint(SITE_EMULATED, 0, SRC_LANG_RUST, false),
		"stable rustc has no option for a 5-byte NOP at function entry (-Z instrument-mcount is nightly only): emulated is the cheapest site it builds");
	assert_string_equal(hint(SITE_STEPPED, 10, SRC_LANG_GO, false),
		"Go: no compiler or linker option gives a cheaper site");
	/* Small buffers: cut, terminated. */
	{
		struct site s = { .kind = SITE_STEPPED };
		struct src_info src = { .lang = SRC_LANG_RUST };
		char small[9];

		site_hint(&s, &src, small, sizeof(small));
		assert_string_equal(small, "stable r");
		site_hint(&s, &src, small, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nop5),
		cmocka_unit_test(test_nop5_crossing_page),
		cmocka_unit_test(test_endbr64),
		cmocka_unit_test(test_push),
		cmocka_unit_test(test_nops),
		cmocka_unit_test(test_branches),
		cmocka_unit_test(test_stepped),
		cmocka_unit_test(test_no_code),
		cmocka_unit_test(test_go_prologue),
		cmocka_unit_test(test_names_costs_hints),
		cmocka_unit_test(test_hints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
