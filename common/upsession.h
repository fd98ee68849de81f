/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * upsession.h - attach a BPF program as a uprobe session without a libbpf
 * that knows them (Debian 12's 1.1 has no uprobe.session section and no
 * uprobe_multi in its link options): a raw BPF_LINK_CREATE with attach
 * type BPF_TRACE_UPROBE_SESSION and the kernel's link_create.uprobe_multi
 * layout, which the 6.1 uapi header of this distribution lacks too.
 * Shared by the loader (loader/kernel/probes_session.c) and the benchmark's
 * session floor (tools/bench/baseline/bare.c).  docs/DESIGN.md §3 says how it was found.
 */
#ifndef SDS_UPSESSION_H
#define SDS_UPSESSION_H

#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

/* The kernel's enum values (uapi of 6.12+), absent from older headers. */
#define SDS_BPF_TRACE_UPROBE_SESSION	57

/* union bpf_attr's link_create for a uprobe_multi link (kernel 6.6+ uapi). */
struct sds_upsession_attr {
	uint32_t prog_fd;	/* the session program */
	uint32_t target_fd;	/* unused: 0 */
	uint32_t attach_type;	/* SDS_BPF_TRACE_UPROBE_SESSION */
	uint32_t flags;		/* link flags: 0 */
	uint64_t path;		/* const char *: the file probed */
	uint64_t offsets;	/* const unsigned long *: file offsets, @cnt */
	uint64_t ref_ctr_offsets;	/* none: 0 */
	uint64_t cookies;	/* const __u64 *: bpf_get_attach_cookie(), @cnt */
	uint32_t cnt;		/* offsets (and cookies) */
	uint32_t um_flags;	/* BPF_F_UPROBE_MULTI_RETURN: never (a session) */
	uint32_t pid;		/* only this process; 0: every process */
};

/*
 * A uprobe session link of @prog_fd on the @cnt file offsets @offs of
 * @path, each with its cookie; @pid < 0: every process.  The link's fd,
 * or -1 with errno.
 */
static inline int sds_upsession_link(int prog_fd, const char *path,
				     const unsigned long *offs,
				     const uint64_t *cookies, uint32_t cnt,
				     int pid)
{
	/* Zero past our fields: the kernel refuses a non-zero tail. */
	union {
		struct sds_upsession_attr a;	/* the fields we set */
		char pad[160];			/* >= the kernel's union bpf_attr */
	} u;

	memset(&u, 0, sizeof(u));
	u.a.prog_fd = prog_fd;
	u.a.attach_type = SDS_BPF_TRACE_UPROBE_SESSION;
	u.a.path = (uintptr_t)path;
	u.a.offsets = (uintptr_t)offs;
	u.a.cookies = (uintptr_t)cookies;
	u.a.cnt = cnt;
	u.a.pid = pid > 0 ? (uint32_t)pid : 0;
	return syscall(__NR_bpf, BPF_LINK_CREATE, &u, sizeof(u));
}

#endif /* SDS_UPSESSION_H */
