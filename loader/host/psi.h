/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * psi.h - the kernel's pressure stall information (/proc/pressure/): one
 * fd per resource opened once, read with pread at the tick, the text
 * parsed as hostile input (docs/PRESSURE.md).
 */
#ifndef SDS_PSI_H
#define SDS_PSI_H

#include <stddef.h>
#include <stdint.h>
#include "pressure.h"

#define PSI_DIR		"/proc/pressure"
#define PSI_TEXT_MAX	256	/* the file's two lines are ~130 bytes */

struct psi {
	int fd[SDS_PSI_NRES];		/* -1: this host does not report it */
	char dir[128];			/* where they were opened */
};

/*
 * Open @dir's cpu, memory and io (NULL: $SDS_PSI_DIR, else PSI_DIR).  A
 * missing file leaves its fd -1; -1 and @err when @dir is too long.
 */
int psi__open(struct psi *p, const char *dir, char *err, size_t errlen);
void psi__close(struct psi *p);
/* Does this host report @res? */
static inline int psi__has(const struct psi *p, uint32_t res)
{
	return res < SDS_PSI_NRES && p->fd[res] >= 0;
}
/* @res's stalled µs so far; -1: unreadable or not PSI's format. */
int psi__read(const struct psi *p, uint32_t res, uint64_t *some_us,
	      uint64_t *full_us);
/*
 * Parse PSI's text: "some avg10=A avg60=B avg300=C total=N\n", then the
 * same "full" line (memory and io; cpu since 5.13).  Strict: anything
 * else is -1.  A missing full line reads as 0.
 */
int psi_parse(const char *text, size_t len, uint64_t *some_us, uint64_t *full_us);

#endif /* SDS_PSI_H */
