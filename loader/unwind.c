// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * unwind.c - function points that never break a TARGET's exceptions.
 *
 * A uretprobe plants the kernel's trampoline in the return slot of every
 * probed call, and the trampoline has no unwind information: a C++
 * exception or a Rust panic unwinding through it ends in std::terminate.
 * Putting the return addresses back when the unwinder starts needs
 * bpf_probe_write_user, which a kernel in lockdown (integrity) refuses, so
 * in a TARGET that can unwind a function point counts entries only
 * (docs/UNWIND.md tells what was tried and measured).
 */
#include "elfsym.h"
#include "unwind.h"

enum ret_mode ret_mode_for(struct elf_file *ef)
{
	return elf_file__can_unwind(ef) ? RET_ENTRY_ONLY : RET_PAIR;
}

const char *ret_mode_name(enum ret_mode m)
{
	switch (m) {
	case RET_PAIR:
		return "pair";
	case RET_ENTRY_ONLY:
		return "entry-only";
	}
	return "?";
}
