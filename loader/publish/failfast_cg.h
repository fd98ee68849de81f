/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * failfast_cg.h - fail-fast's cgroup lever (docs/FAILFAST.md): where a
 * kernel refuses LSM programs, the cgroup sock_addr programs of
 * bpf/failfast.bpf.c take the same decision for connect(2) and
 * unconnected UDP sends, attached to the cgroup2 root by bpf_links the
 * loader owns (never pinned: a loader that is gone denies nothing).
 */
#ifndef SDS_FAILFAST_CG_H
#define SDS_FAILFAST_CG_H

#include <stddef.h>

struct bpf_program;
struct bpf_link;

/*
 * Attach each of the @n programs @progs to the cgroup2 root, into
 * @links: the host's cgroup2 mount (from /proc/self/mountinfo), else one
 * mounted for the moment under the run directory and taken down again
 * (a link holds the cgroup, not the mount).  0, or -1 said in one line;
 * the links made before a failure are left in @links for the caller.
 */
int failfast_cg__attach(struct bpf_program **progs, int n,
			struct bpf_link **links);

/*
 * The cgroup2 root's mount point into @buf: 0, or -1 if the host has
 * none mounted whose root is the hierarchy's.
 */
int failfast_cg__root(char *buf, size_t len);

#endif /* SDS_FAILFAST_CG_H */
