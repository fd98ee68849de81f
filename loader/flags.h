/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The loader's side of the flags region (bpf/sds_flags.h): the mmapable
 * BPF array the guards map, its header, and publishing a point's state
 * under the entry's sequence counter.
 */
#ifndef SDS_FLAGS_REGION_H
#define SDS_FLAGS_REGION_H

#include <stddef.h>
#include <stdint.h>
#include "sds_flags.h"

struct flags_region {
	int fd;				/* the BPF map (sent to guards with SCM_RIGHTS) */
	size_t size;			/* bytes mapped: a whole number of pages */
	void *mem;			/* the mapping */
	struct sds_flags_header *hdr;	/* element 0 */
};

/* What the loader publishes for one point (line 1 of its entry). */
struct flag_state {
	uint32_t active;		/* SDS_ACT_* */
	uint32_t reason;		/* enum sds_reason */
	uint32_t rate;			/* 0..100 */
	uint64_t expires_ns;		/* the downgrade lapses then */
	int64_t concurrent_limit;	/* permits */
	uint64_t token_interval_ns;	/* ns per token */
	uint64_t token_burst_ns;	/* bucket * interval */
	uint64_t probe_interval_ns;	/* hold probes */
	uint32_t drill_kind;		/* line 3: enum sds_drill_kind */
	uint32_t drill_ratio;		/* 0..100 */
	uint64_t drill_delay_ns;	/* delay drill's sleep */
	uint64_t drill_expires_ns;	/* the guard ignores the drill then */
};

/* Most fds a guard receives at registration (flags__client_fds). */
#define FLAGS_CLIENT_FDS	2

int flags__create(struct flags_region *f, uint64_t epoch, uint64_t tick_ns);
void flags__destroy(struct flags_region *f);
/* The fds a registering guard gets, in @fds; returns how many. */
int flags__client_fds(const struct flags_region *f, int fds[FLAGS_CLIENT_FDS]);

struct sds_flag *flags__entry(struct flags_region *f, uint32_t point);
int32_t *flags__permit(struct flags_region *f, uint32_t slot, uint32_t point);

/* Mark @point in use by @kind (1 function, 2 guard) and count it. */
void flags__set_kind(struct flags_region *f, uint32_t point, uint32_t kind);
/* Publish @st for @point: seq odd, fields, seq even. */
void flags__publish(struct flags_region *f, uint32_t point,
		    const struct flag_state *st);
/* Renew the header's tick: guards treat an old tick as a dead loader. */
void flags__tick(struct flags_region *f, uint64_t now_ns);
/* Give back the permits process @slot held (it died or left). */
void flags__release_slot(struct flags_region *f, uint32_t slot);

uint64_t flags_now_ns(void);

#endif /* SDS_FLAGS_REGION_H */
