/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Returns that do not break unwinding (docs/UNWIND.md): how the function
 * points of a TARGET see their calls end.
 */
#ifndef SDS_UNWIND_H
#define SDS_UNWIND_H

struct elf_file;
struct probe_point;

/* How the function points of a loader see their calls end. */
enum ret_mode {
	RET_PAIR = 0,		/* uprobe + uretprobe: nothing in TARGET unwinds (C) */
	RET_ENTRY_ONLY,		/* uprobe only: visits; no latency, no exits */
	RET_EXITS,		/* uprobe + one on each instruction that leaves (exits.c) */
};

/* Why a TARGET's function points count entries only. */
enum ret_why {
	RET_WHY_NONE = 0,	/* they do not: RET_PAIR */
	RET_WHY_UNWIND,		/* C++/Rust: an exception would meet the trampoline */
	RET_WHY_GO,		/* Go: the runtime's stack walk would meet it */
	RET_WHY_NO_EXITS,	/* C++/Rust, and not every exit can be probed (exits.c) */
};

/*
 * How function points in TARGET (@ef) see returns: RET_PAIR when nothing
 * in it can unwind, else RET_ENTRY_ONLY: on this kernel a return probe
 * cannot be kept out of an unwinder's way (docs/UNWIND.md); the same for
 * Go, whose runtime walks its stacks on its own.  @why says which.
 */
enum ret_mode unwind_ret_mode(struct elf_file *ef, enum ret_why *why);

/*
 * Set the return mode of function point @p (its function and entry site
 * already found) in TARGET @ef, whose own mode is @mode for @why: in a
 * TARGET that can unwind, the pair where nothing the function calls can
 * throw (nothrow.c), else a probe on each of the function's exits where
 * exits.c finds them all (RET_EXITS), else entry-only, with the reason in
 * @p->exits_why; which of the first two and why in @p->returns_why.
 */
void unwind__place(struct elf_file *ef, struct probe_point *p,
		   enum ret_mode mode, enum ret_why why);

/* What attach says of an entry-only point, for @why. */
const char *unwind_ret_why_text(enum ret_why why);

/* "pair", "entry-only" */
const char *unwind_ret_mode_name(enum ret_mode m);

#endif /* SDS_UNWIND_H */
