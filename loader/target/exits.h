/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Exit sites: the instructions that end a call of a function, found by
 * decoding its code, so a function point of a TARGET that can unwind sees
 * its returns without a uretprobe (docs/UNWIND.md).
 */
#ifndef SDS_EXITS_H
#define SDS_EXITS_H

#include <stddef.h>
#include <stdint.h>

struct elf_file;
struct elf_func;

#define EXITS_MAX	32	/* exit sites of one point: each is a uprobe */
#define EXITS_PARTS	8	/* code ranges followed: the function and its split parts */
#define EXITS_PART_MAX	(256 << 10)	/* bytes decoded per range */

struct exit_sites {
	int n;				/* sites found */
	uint64_t vaddr[EXITS_MAX];	/* each `ret`'s address in the image ... */
	uint64_t off[EXITS_MAX];	/* ... and its file offset, for the uprobe */
};

/*
 * The exit sites of function @fn, named @sym, of @ef: each `ret` of its
 * code and of the parts of it the compiler placed elsewhere and jumps to
 * (@sym.cold, @sym.part.N, ...).  @entry is the address the entry probe
 * sits on.  Returns 0, or -1 with the reason in @why when the returns
 * cannot all be seen: an indirect jump (its target is unknown), a jump to
 * another function (a tail call: the call ends in that function's `ret`),
 * a far return, bytes that do not decode, more than EXITS_MAX sites.
 */
int exits__find(struct elf_file *ef, const struct elf_func *fn,
		const char *sym, uint64_t entry, struct exit_sites *out,
		char *why, size_t whylen);

#define EXITS_CATCH_MAX	3	/* catch sites: C++'s and Rust's two */

/*
 * Where TARGET's caught exceptions land: the calls a catch makes first,
 * at the catching function's own stack level.  Every probed call below
 * it on the stack is over then, and counted as an exception at once
 * rather than when the thread next enters or leaves a probed call.
 */
struct catch_sites {
	int n;					/* sites found */
	uint64_t off[EXITS_CATCH_MAX];		/* each one's file offset */
	const char *what[EXITS_CATCH_MAX];	/* the function, for messages */
};

/*
 * The catch sites of @ef: C++'s __cxa_begin_catch (defined in it, or its
 * PLT stub: calls through the GOT directly, -fno-plt, have none) and
 * Rust catch_unwind's std::panicking::try::cleanup, which the catching
 * function calls, and __rust_panic_cleanup, which that one calls (or the
 * catching function, where it is inlined).  Finds what there is.
 */
void exits__catch_sites(struct elf_file *ef, struct catch_sites *out);

#endif /* SDS_EXITS_H */
