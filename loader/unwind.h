/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Returns that do not break unwinding (docs/UNWIND.md): how the function
 * points of a TARGET see their calls end.
 */
#ifndef SDS_UNWIND_H
#define SDS_UNWIND_H

struct elf_file;

/* How the function points of a loader see their calls end. */
enum ret_mode {
	RET_PAIR = 0,		/* uprobe + uretprobe: nothing in TARGET unwinds (C) */
	RET_ENTRY_ONLY,		/* uprobe only: visits; no latency, no exits */
};

/*
 * How function points in TARGET (@ef) see returns: RET_PAIR when nothing
 * in it can unwind, else RET_ENTRY_ONLY: on this kernel a return probe
 * cannot be kept out of an unwinder's way (docs/UNWIND.md).
 */
enum ret_mode ret_mode_for(struct elf_file *ef);

/* "pair", "entry-only" */
const char *ret_mode_name(enum ret_mode m);

#endif /* SDS_UNWIND_H */
