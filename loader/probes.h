/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The BPF side of a loader: the skeleton, the per-point configuration and
 * one uprobe + uretprobe pair per function point.
 */
#ifndef SDS_PROBES_H
#define SDS_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "elfsym.h"
#include "pointspec.h"
#include "site.h"

struct bpf_link;
struct sds_bpf;

enum point_kind {
	POINT_FUNCTION = 1,		/* POINT=SYMBOL: uprobe + uretprobe */
	POINT_GUARD = 2,		/* a libsds call site, or named by a strategy */
};

/* One point: what the user asked for and where it landed. */
struct probe_point {
	enum point_kind kind;		/* function or guard */
	struct point_spec spec;		/* name; for functions the whole POINT=SYMBOL[:...] */
	struct elf_func fn;		/* the function in TARGET */
	struct site site;		/* the instruction the probe sits on */
	uint64_t attach_off;		/* file offset of the probe: fn.offset + site.skip */
	struct bpf_link *enter;		/* uprobe link */
	struct bpf_link *leave;		/* uretprobe link */
};

#define PROBES_MAX_GUARD_FILES	16	/* distinct files holding libsds sites */

/* A file whose libsds probe sites this loader has attached to. */
struct guard_file {
	dev_t dev;			/* identity of the file ... */
	ino_t ino;			/* ... as uprobes see it */
	struct bpf_link *links[SDS_SITE_COUNT];	/* one uprobe per site */
};

struct probes {
	struct sds_bpf *skel;		/* loaded programs and maps */
	int nfiles;			/* guard files attached */
	struct guard_file files[PROBES_MAX_GUARD_FILES];
	struct bpf_link *exit_link;	/* sds_thread_exit */
	int npoints;			/* points in use, ids 0..npoints-1 */
	bool atomics;			/* BPF adds are locked: the kernel preempts */
	struct probe_point *pts;	/* SDS_MAX_POINTS entries */
};

/*
 * Open and load the BPF object, attach the thread-exit program.  @key is
 * the value guard sites must pass to be counted by this loader.
 */
int probes__load(struct probes *pr, uint64_t key, uint64_t sec_offset_ns,
		 char *err, size_t errlen);

/* Find a point by name: its id, or -1. */
int probes__find(const struct probes *pr, const char *name);

/* Add guard point @name: its id, or -1 when the table is full. */
int probes__add_guard(struct probes *pr, const char *name);

/* Write point @id's BPF configuration (timeout, error predicate). */
int probes__configure(struct probes *pr, int id, uint64_t timeout_ns);

/*
 * Attach the guard programs to the libsds sites @sites of @path, once per
 * file (by device and inode).  Returns 0, or -1 with a message.
 */
int probes__attach_guards(struct probes *pr, const char *path,
			  const struct sds_sites *sites, char *err,
			  size_t errlen);

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
