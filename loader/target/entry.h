/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Entry sites: where in a function its entry probe sits.  The first
 * instruction where it is emulated or a nop5; else, where the kernel
 * would single-step it, the first emulated instruction that every call
 * passes exactly once, before the stack pointer moves (docs/PROBES.md,
 * "Where the entry probe sits").
 */
#ifndef SDS_ENTRY_H
#define SDS_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include "target/site.h"

struct elf_file;
struct elf_func;
struct point_spec;

#define ENTRY_SCAN_INSNS	24	/* instructions looked at past the entry */
#define ENTRY_SCAN_BYTES	128	/* ... and bytes */

/*
 * The entry site of function @fn of @ef into @out: site_classify() (or
 * site_classify_go() when @go) of its first bytes, then, when that one
 * is stepped, the relocation: the first instruction within the bounded
 * scan that the kernel emulates, reached by straight-line code from the
 * entry (so on every path, once: no branch before it and none in the
 * function's code or its parts jumping back to it or before it) with no
 * instruction before it that changes the stack pointer or writes the
 * stack (so the return address is still at the top of the stack: the
 * uretprobe, the session and the exits pair by it).  @spec (NULL: the
 * defaults) may keep the entry (`:site=entry`, `copy=`, which reads the
 * arguments there) or force a site (`:site=+0xN`, which must pass the
 * stack test).  @out->why says where and why, or why the entry stayed.
 * 0, or -1 with a one-line message in @err for a forced site that cannot
 * be taken.
 */
int entry__place(struct elf_file *ef, const struct elf_func *fn,
		 const struct point_spec *spec, bool go, struct site *out,
		 char *err, size_t errlen);

/*
 * The relocation alone, for code already in memory: function @code
 * (@len bytes, all of it) at @vaddr, its stepped entry site in @s
 * (site_classify()'s).  @targets holds the @ntargets addresses that
 * code outside @code (the function's split parts) jumps to.  Moves @s
 * when a site qualifies and says why in @s->why either way.
 */
void entry__relocate(const unsigned char *code, size_t len, uint64_t vaddr,
		     bool go, const uint64_t *targets, int ntargets,
		     struct site *s);

#endif /* SDS_ENTRY_H */
