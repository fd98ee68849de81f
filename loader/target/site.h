/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Probe sites: what the kernel will do with the instruction a uprobe sits
 * on (docs/DESIGN.md §3), decoded from the instruction bytes.
 */
#ifndef SDS_SITE_H
#define SDS_SITE_H

#include <stddef.h>
#include <stdint.h>
#include "target/lang.h"

enum site_kind {
	SITE_NOP5,	/* 0f 1f 44 00 00 not crossing a page: optimized to a call */
	SITE_EMULATED,	/* int3, then the kernel emulates it: push, call, jmp, jcc, nop */
	SITE_STEPPED,	/* int3, then single-stepped out of line: the slow one */
};

struct site {
	enum site_kind kind;	/* what the probe on the chosen site costs */
	unsigned int skip;	/* bytes skipped before the site (4 after endbr64) */
	char insn[32];		/* what the site's instruction is, e.g. "push %rbp" */
	bool moved;		/* entry.c moved it past a stepped first instruction */
	enum site_kind entry_kind;	/* what the unmoved entry site was (entry.c): SITE_STEPPED when moved */
	char why[200];		/* where it is and why ("+0x12, `call`: ..."), or why it stayed (entry.c); "" */
};

/*
 * Classify the probe site for a function whose first bytes are @code
 * (@len bytes, at least 16 when the function is that long) at virtual
 * address @vaddr.  A leading endbr64 (f3 0f 1e fa) is skipped: it changes
 * no register and no memory, so the probe can sit on the next
 * instruction.  A 5-byte NOP that crosses a page boundary is only
 * emulated.
 */
void site_classify(const unsigned char *code, size_t len, uint64_t vaddr,
		   struct site *out);

/*
 * The length of a Go function's stack-check prologue at @code (cmp of the
 * stack pointer with the goroutine's guard, jbe to morestack), or 0.
 */
unsigned int site_go_prologue(const unsigned char *code, size_t len);

/*
 * site_classify() for a function of a Go binary: the probe goes past its
 * stack check, which runs again after the stack grows (site.c).
 */
void site_classify_go(const unsigned char *code, size_t len, uint64_t vaddr,
		      struct site *out);

/* "nop5", "emulated", "stepped" */
const char *site_kind_name(enum site_kind kind);

/*
 * What probes cost the target on this machine, in ns per firing: one
 * uprobe on a site of each kind (with sds-bpf's entry program), and a
 * uretprobe's return (with its exit program).  Measured once per boot
 * where the loader can (site_costs_set()), else the figures of
 * docs/DESIGN.md §3.
 */
struct site_costs {
	unsigned int probe_ns[3];	/* by enum site_kind */
	unsigned int uret_ns;		/* the return half of a pair */
	int measured;			/* 1: this boot's measurement; 0: §3's figures */
};

/* Use @c from now on (NULL: back to §3's figures). */
void site_costs_set(const struct site_costs *c);

/* The costs in use. */
const struct site_costs *site_costs_get(void);

/* One uprobe firing on a @kind site. */
unsigned int site_probe_ns(enum site_kind kind);

/* An entry + return pair on a @kind site: site_probe_ns() + the return. */
unsigned int site_cost_ns(enum site_kind kind);

/*
 * Into @buf, one sentence telling how the toolchain of @src (lang.h)
 * could give a cheaper site than @s, or that it cannot; "" for a nop5.
 */
void site_hint(const struct site *s, const struct src_info *src, char *buf,
	       size_t len);

#endif /* SDS_SITE_H */
