// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Probe sites: what the kernel will do with the instruction a uprobe sits
 * on (docs/DESIGN.md §3).  This is not a disassembler: it knows the handful of
 * instructions the kernel treats specially and calls everything else
 * "stepped", which is what the kernel does too.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "target/site.h"

#define PAGE_SIZE_X86	4096

static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
/* The only NOP the kernel optimizes into a call to a trampoline. */
static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static const char *const reg64[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

/*
 * Bytes taken by a ModRM operand starting at @m (the ModRM byte itself,
 * SIB and displacement), or 0 when @n bytes are too few to tell.
 */
static size_t modrm_len(const unsigned char *m, size_t n)
{
	unsigned int mod, rm;
	size_t len = 1;

	if (n < 1)
		return 0;
	mod = m[0] >> 6;
	rm = m[0] & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (n < 2)
			return 0;
		len++;
		/* SIB with base 101 and mod 00: disp32, no base register. */
		if (mod == 0 && (m[1] & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5) {
		len += 4;	/* RIP-relative */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

/*
 * "@prefix (b0 b1 ...)" into @out; when not all @n bytes fit, as many as
 * do, then " ..".
 */
static void insn_bytes(char *out, size_t outlen, const char *prefix,
		       const unsigned char *b, size_t n)
{
	size_t used, i, k = n, room;

	used = (size_t)snprintf(out, outlen, "%s (", prefix);
	if (used + 2 > outlen)
		return;
	/* Room for the bytes, less ")" and the NUL; each byte takes 3. */
	room = outlen - used - 2;
	if (n && 3 * n - 1 > room)
		k = room >= 6 ? (room - 3 + 1) / 3 : 0;
	for (i = 0; i < k; i++)
		used += (size_t)snprintf(out + used, outlen - used, "%s%02x",
					 i ? " " : "", b[i]);
	snprintf(out + used, outlen - used, "%s)",
		 k == n ? "" : (k ? " .." : ".."));
}

/*
 * A NOP other than the 1-byte one: any number of 66 (operand size) and
 * 2e (cs) prefixes, as compilers pad with, then 0f 1f /0.  Returns its
 * length, 0 if it is not one.
 */
static size_t long_nop_len(const unsigned char *b, size_t n)
{
	size_t i = 0, m;

	while (i < n && (b[i] == 0x66 || b[i] == 0x2e))
		i++;
	if (i + 3 > n || b[i] != 0x0f || b[i + 1] != 0x1f ||
	    ((b[i + 2] >> 3) & 7) != 0)
		return 0;
	m = modrm_len(b + i + 2, n - i - 2);
	if (!m || i + 2 + m > n)
		return 0;
	return i + 2 + m;
}

/* Classify the instruction at @b (@n bytes) that sits at @vaddr. */
static void site_decode(const unsigned char *b, size_t n, uint64_t vaddr,
			struct site *out)
{
	size_t nl;
	char *insn = out->insn;
	size_t ilen = sizeof(out->insn);

	if (n >= sizeof(nop5) && !memcmp(b, nop5, sizeof(nop5))) {
		/*
		 * The kernel patches the call within one page, so it leaves
		 * a NOP that straddles two pages alone: that one only gets
		 * the int3 and emulation.
		 */
		out->kind = (vaddr & (PAGE_SIZE_X86 - 1)) > PAGE_SIZE_X86 - 5 ?
			    SITE_EMULATED : SITE_NOP5;
		snprintf(insn, ilen, "nopl 0x0(%%rax,%%rax,1)");
		return;
	}

	out->kind = SITE_EMULATED;
	if (n >= 1 && b[0] >= 0x50 && b[0] <= 0x57) {
		snprintf(insn, ilen, "push %%%s", reg64[b[0] - 0x50]);
		return;
	}
	/* Only REX.B alone (41): the kernel emulates no other prefix. */
	if (n >= 2 && b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57) {
		snprintf(insn, ilen, "push %%%s", reg64[8 + b[1] - 0x50]);
		return;
	}
	if (n >= 1 && b[0] == 0x90) {
		snprintf(insn, ilen, "nop");
		return;
	}
	if (n >= 2 && b[0] == 0x66 && b[1] == 0x90) {
		snprintf(insn, ilen, "xchg %%ax,%%ax");
		return;
	}
	nl = long_nop_len(b, n);
	if (nl) {
		insn_bytes(insn, ilen, b[0] == 0x66 ? "nopw" : "nopl", b, nl);
		return;
	}
	if (n >= 1 && b[0] == 0xe8) {
		snprintf(insn, ilen, "call");
		return;
	}
	if (n >= 1 && (b[0] == 0xe9 || b[0] == 0xeb)) {
		snprintf(insn, ilen, "jmp");
		return;
	}
	if ((n >= 1 && b[0] >= 0x70 && b[0] <= 0x7f) ||
	    (n >= 2 && b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f)) {
		snprintf(insn, ilen, "jcc");
		return;
	}

	out->kind = SITE_STEPPED;
	if (n >= sizeof(endbr64) && !memcmp(b, endbr64, sizeof(endbr64)))
		snprintf(insn, ilen, "endbr64");
	else if (n)
		/* Without a full decoder the length is unknown: show 3. */
		insn_bytes(insn, ilen, "other", b, n < 3 ? n : 3);
	else
		snprintf(insn, ilen, "unknown (no code)");
}

void site_classify(const unsigned char *code, size_t len, uint64_t vaddr,
		   struct site *out)
{
	memset(out, 0, sizeof(*out));
	/*
	 * endbr64 is a NOP to everything but the CET tracker, which only
	 * checks indirect branch targets: the entry still lands on it, and
	 * the probe on the next instruction sees the same registers and
	 * stack.  Keep it when nothing follows, to have something to probe.
	 */
	if (len > sizeof(endbr64) && !memcmp(code, endbr64, sizeof(endbr64))) {
		out->skip = sizeof(endbr64);
		code += sizeof(endbr64);
		len -= sizeof(endbr64);
		vaddr += sizeof(endbr64);
	}
	site_decode(code, len, vaddr, out);
}

const char *site_kind_name(enum site_kind kind)
{
	switch (kind) {
	case SITE_NOP5:
		return "nop5";
	case SITE_EMULATED:
		return "emulated";
	case SITE_STEPPED:
		return "stepped";
	}
	return "unknown";
}

/*
 * docs/DESIGN.md §3's figures (`make bench` on the development machines): a
 * pair costs ~700 ns on a nop5, ~1,000 emulated, ~20,500 stepped, of which
 * the return half is ~400.
 */
static const struct site_costs site_costs_default = {
	.probe_ns = { [SITE_NOP5] = 300, [SITE_EMULATED] = 600,
		      [SITE_STEPPED] = 20100 },
	.uret_ns = 400,
	.measured = 0,
};

static struct site_costs site_costs_now = site_costs_default;

void site_costs_set(const struct site_costs *c)
{
	site_costs_now = c ? *c : site_costs_default;
}

const struct site_costs *site_costs_get(void)
{
	return &site_costs_now;
}

unsigned int site_probe_ns(enum site_kind kind)
{
	if ((unsigned int)kind > SITE_STEPPED)
		kind = SITE_STEPPED;
	return site_costs_now.probe_ns[kind];
}

unsigned int site_cost_ns(enum site_kind kind)
{
	return site_probe_ns(kind) + site_costs_now.uret_ns;
}

/* The hint for @kind in C or C++ built by gcc (@clang false) or clang. */
static int hint_c(enum site_kind kind, bool clang, char *buf, size_t len)
{
	unsigned int nop5_ns = site_probe_ns(SITE_NOP5);
	unsigned int emu_ns = site_probe_ns(SITE_EMULATED);

	/*
	 * gcc -fpatchable-function-entry=5 pads with five 1-byte NOPs and
	 * clang's with 0f 1f 44 00 08: both only emulated (docs/DESIGN.md §3).
	 */
	if (clang)
		return snprintf(buf, len,
				"clang on x86 has no -mnop-mcount and its -fpatchable-function-entry=5 pad (0f 1f 44 00 08) is only emulated (~%u ns a probe)%s; gcc -pg -mfentry -mnop-mcount (non-PIE, linked without -pg) gives a nop5 (~%u ns a probe)",
				emu_ns, kind == SITE_STEPPED ?
				", as is -fno-omit-frame-pointer's push %rbp" : "",
				nop5_ns);
	return snprintf(buf, len,
			"build with gcc -pg -mfentry -mnop-mcount (non-PIE, linked without -pg) for a nop5 site (~%u ns a probe); for PIE and shared libraries %s-fpatchable-function-entry=5 pads with five 1-byte NOPs, emulated (~%u ns a probe)",
			nop5_ns, kind == SITE_STEPPED ?
			"-fno-omit-frame-pointer starts functions with push %rbp, emulated; " : "",
			emu_ns);
}

void site_hint(const struct site *s, const struct src_info *src, char *buf,
	       size_t len)
{
	int n = 0;

	if (!len)
		return;
	buf[0] = '\0';
	if (s->kind == SITE_NOP5)
		return;
	switch (src->lang) {
	case SRC_LANG_GO:
		/* The probe already sits past the stack check (site_classify_go). */
		n = snprintf(buf, len,
			     "Go: no compiler or linker option gives a cheaper site");
		break;
	case SRC_LANG_RUST:
		/* -Z instrument-mcount, -Z patchable-function-entry: nightly. */
		n = snprintf(buf, len,
			     "stable rustc has no option for a 5-byte NOP at function entry (-Z instrument-mcount is nightly only)%s",
			     s->kind == SITE_STEPPED ?
			     "; -C force-frame-pointers=yes starts functions with push %rbp, emulated" :
			     ": emulated is the cheapest site it builds");
		if (s->kind == SITE_STEPPED && n > 0 && (size_t)n < len)
			n += snprintf(buf + n, len - (size_t)n, " (~%u ns a probe)",
				      site_probe_ns(SITE_EMULATED));
		break;
	case SRC_LANG_C:
	case SRC_LANG_CXX:
		n = hint_c(s->kind, src->clang, buf, len);
		break;
	}
	/* CET builds: say that endbr64 cost nothing (docs/DESIGN.md §3). */
	if (s->skip == 4 && !s->moved && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 "; the leading endbr64 is skipped, the probe sits 4 bytes in");
}

/*
 * Go's stack check (regabi, amd64): [lea -N(%rsp),%r12;] cmp 0x10(%r14),
 * %rsp|%r12; jbe MORESTACK.  When the goroutine's stack is too small the
 * function calls runtime.morestack, which grows the stack and jumps back
 * to the function's first byte: a probe there would count such a call
 * twice.  Past the jbe the body runs once per call.
 */
unsigned int site_go_prologue(const unsigned char *code, size_t len)
{
	static const unsigned char cmp_rsp[] = { 0x49, 0x3b, 0x66, 0x10 };
	static const unsigned char cmp_r12[] = { 0x4d, 0x3b, 0x66, 0x10 };
	const unsigned char *cmp = cmp_rsp;
	size_t at = 0;

	if (len >= 5 && code[0] == 0x4c && code[1] == 0x8d && code[2] == 0x64 &&
	    code[3] == 0x24) {
		at = 5;		/* lea disp8(%rsp),%r12 */
		cmp = cmp_r12;
	} else if (len >= 8 && code[0] == 0x4c && code[1] == 0x8d &&
		   code[2] == 0xa4 && code[3] == 0x24) {
		at = 8;		/* lea disp32(%rsp),%r12 */
		cmp = cmp_r12;
	}
	if (len < at + sizeof(cmp_rsp) || memcmp(code + at, cmp, sizeof(cmp_rsp)))
		return 0;
	at += sizeof(cmp_rsp);
	if (len >= at + 2 && code[at] == 0x76)
		return at + 2;		/* jbe rel8 */
	if (len >= at + 6 && code[at] == 0x0f && code[at + 1] == 0x86)
		return at + 6;		/* jbe rel32 */
	return 0;
}

void site_classify_go(const unsigned char *code, size_t len, uint64_t vaddr,
		      struct site *out)
{
	unsigned int skip = site_go_prologue(code, len);

	if (!skip || skip >= len) {
		site_classify(code, len, vaddr, out);
		return;
	}
	site_classify(code + skip, len - skip, vaddr + skip, out);
	out->skip += skip;
}
