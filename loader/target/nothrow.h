/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Functions no exception or panic can unwind through, found from their
 * direct calls inside TARGET (docs/UNWIND.md "Functions that cannot
 * unwind"): in a TARGET that can unwind, those get a return probe like
 * plain C; the others keep a probe on each exit.
 */
#ifndef SDS_NOTHROW_H
#define SDS_NOTHROW_H

#include <stdbool.h>
#include <stddef.h>

struct elf_file;
struct elf_func;

#define NOTHROW_DEPTH	6	/* calls followed below the function */
#define NOTHROW_FUNCS	128	/* distinct functions decoded, at most */

/*
 * True when no call of @fn of @ef can be unwound through: it and every
 * function it calls or jumps to directly, down to NOTHROW_DEPTH calls,
 * make no indirect call or jump, call no function that raises or resumes
 * an unwind (__cxa_throw, _Unwind_RaiseException, _Unwind_Resume,
 * __rust_start_panic, Rust's panicking) and call through the PLT only
 * functions that never throw nor call back (memcpy, strlen, malloc, ...).
 * @why says which way and why: "cannot unwind: a leaf" or "may unwind:
 * calls shop::check -> __cxa_throw".
 */
bool nothrow__check(struct elf_file *ef, const struct elf_func *fn, char *why,
		    size_t whylen);

#endif /* SDS_NOTHROW_H */
