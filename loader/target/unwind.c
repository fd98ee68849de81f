// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * unwind.c - function points that never break a TARGET's exceptions.
 *
 * A uretprobe plants the kernel's trampoline in the return slot of every
 * probed call, and the trampoline has no unwind information: a C++
 * exception or a Rust panic unwinding through it ends in std::terminate.
 * Putting the return addresses back when the unwinder starts needs
 * bpf_probe_write_user, which a kernel in lockdown (integrity) refuses, so
 * in a TARGET that can unwind a function point has a uprobe on each
 * instruction that ends its calls instead (exits.c), or, where they
 * cannot all be found, counts entries only (docs/UNWIND.md tells what
 * was tried and measured).  A function nothing below which can throw
 * (nothrow.c) keeps the return probe: no unwinder ever walks its frame.
 */
#include "target/elfsym.h"
#include "target/exits.h"
#include "target/nothrow.h"
#include "kernel/probes.h"
#include "target/unwind.h"

/*
 * Go: a uretprobe's planted return address (the trampoline) is a pc the
 * Go runtime does not know; its stack walk (growth, GC, panics) fails
 * with "unexpected return pc" and the service exits (docs/DESIGN.md §3).
 */
enum ret_mode unwind_ret_mode(struct elf_file *ef, enum ret_why *why)
{
	if (elf_file__is_go(ef))
		*why = RET_WHY_GO;
	else if (elf_file__can_unwind(ef))
		*why = RET_WHY_UNWIND;
	else
		*why = RET_WHY_NONE;
	return *why == RET_WHY_NONE ? RET_PAIR : RET_ENTRY_ONLY;
}

void unwind__place(struct elf_file *ef, struct probe_point *p,
		   enum ret_mode mode, enum ret_why why)
{
	p->ret_mode = mode;
	p->ret_why = why;
	p->exits_why[0] = '\0';
	p->returns_why[0] = '\0';
	if (why != RET_WHY_UNWIND)
		return;
	/* Nothing below it throws: no unwinder meets its return probe. */
	if (nothrow__check(ef, &p->fn, p->returns_why, sizeof(p->returns_why))) {
		p->ret_mode = RET_PAIR;
		p->ret_why = RET_WHY_NONE;
		return;
	}
	if (exits__find(ef, &p->fn, p->fn.name, p->fn.vaddr + p->site.skip,
			&p->exits, p->exits_why, sizeof(p->exits_why))) {
		p->ret_why = RET_WHY_NO_EXITS;
		return;
	}
	p->ret_mode = RET_EXITS;
	p->ret_why = RET_WHY_NONE;
}

const char *unwind_ret_why_text(enum ret_why why)
{
	switch (why) {
	case RET_WHY_GO:
		return "a Go binary: a return probe's address would make the Go runtime's stack walk fail";
	case RET_WHY_UNWIND:
		return "the target can unwind: a return probe would turn an exception through it into std::terminate";
	case RET_WHY_NO_EXITS:
		return "the target can unwind, so no return probe, and not every exit of this function can be probed";
	case RET_WHY_NONE:
		break;
	}
	return "";
}

const char *unwind_ret_mode_name(enum ret_mode m)
{
	switch (m) {
	case RET_PAIR:
		return "pair";
	case RET_ENTRY_ONLY:
		return "entry-only";
	case RET_EXITS:
		return "exits";
	}
	return "?";
}
