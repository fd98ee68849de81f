/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * delay_nl.h - the few rtnetlink requests a delay drill makes
 * (docs/DELAY.md): an interface's root qdisc read, the fq qdisc set as
 * its root, and removed.  Each request waits at most DELAY_NL_WAIT_MS for
 * the kernel's answer: a drill's start and end never hold the loop long.
 */
#ifndef SDS_DELAY_NL_H
#define SDS_DELAY_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DELAY_NL_WAIT_MS	500

/* An interface's root qdisc, as the kernel dumps it. */
struct delay_qdisc {
	char kind[16];		/* "fq", "pfifo_fast", "noqueue", ... ("" if none) */
	uint32_t handle;	/* 0: the kernel's default, not one set by anyone */
	uint64_t horizon_ns;	/* fq: packets beyond now + this are dropped or capped */
	bool horizon_drop;	/* fq: dropped (else their departure is capped) */
};

/* Interface @ifindex's root qdisc into @q: 0, or -errno. */
int delay_nl__root(int ifindex, struct delay_qdisc *q);
/*
 * Set fq with handle @handle:0 and a horizon of @horizon_us as the root
 * qdisc of @ifindex, replacing the one there: 0, or -errno (-ENOENT: the
 * kernel has no fq), with the kernel's own message in @msg if it gave one.
 */
int delay_nl__set_fq(int ifindex, uint32_t handle, uint32_t horizon_us,
		     char *msg, size_t len);
/* Remove root qdisc @handle:0 of @ifindex (the default comes back): 0, or -errno. */
int delay_nl__del_root(int ifindex, uint32_t handle);

#endif /* SDS_DELAY_NL_H */
