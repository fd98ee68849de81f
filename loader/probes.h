/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The BPF side of a loader: the skeleton, the per-point configuration and
 * one uprobe + uretprobe pair per function point.
 */
#ifndef SDS_PROBES_H
#define SDS_PROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "elfsym.h"
#include "pointspec.h"
#include "site.h"

struct bpf_link;
struct sds_bpf;

/* One function point: what the user asked for and where it landed. */
struct probe_point {
	struct point_spec spec;		/* parsed POINT=SYMBOL[:...] */
	struct elf_func fn;		/* the function in TARGET */
	struct site site;		/* the instruction the probe sits on */
	uint64_t attach_off;		/* file offset of the probe: fn.offset + site.skip */
	struct bpf_link *enter;		/* uprobe link */
	struct bpf_link *leave;		/* uretprobe link */
};

struct probes {
	struct sds_bpf *skel;		/* loaded programs and maps */
	struct bpf_link *exit_link;	/* sds_thread_exit */
	int npoints;			/* points in use, ids 0..npoints-1 */
	struct probe_point *pts;	/* SDS_MAX_POINTS entries */
};

/* Open and load the BPF object, attach the thread-exit program. */
int probes__load(struct probes *pr, char *err, size_t errlen);

/*
 * Configure point @id and attach its pair to @target for @pid (-1: every
 * process, running now or later).
 */
int probes__attach_point(struct probes *pr, int id, const char *target,
			 pid_t pid, char *err, size_t errlen);

int probes__slots_fd(const struct probes *pr);
int probes__gauges_fd(const struct probes *pr);

/* Detach everything and free; safe on a partly set-up @pr. */
void probes__destroy(struct probes *pr);

#endif /* SDS_PROBES_H */
