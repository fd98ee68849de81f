// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * probes_session.c - the session path of function points (docs/PROBES.md).
 *
 * Where the kernel has uprobe sessions (6.12+), a function point is one
 * program (bpf/sds_session.bpf.h) on one link that runs at the call's
 * entry and at its return, the entry time in the kernel's per-call
 * cookie: cheaper than the uprobe + uretprobe pair and its per-thread
 * frame stack.  SDS_PROBE_PATH picks: auto (default: the session where it
 * loads and attaches, else the pair), session (or fail), pair.  Points
 * with :failfast= stay on the pair: fail-fast reads the frame stack to
 * know which points a thread is inside (bpf/failfast.bpf.c).
 *
 * libbpf 1.1 cannot attach a session, so the link is made by a raw
 * BPF_LINK_CREATE (common/upsession.h) and handed to libbpf through a
 * pin of its own for a moment (bpf_link__open() is libbpf 1.1's only way
 * to wrap a link it did not make), so that pinning, adopting and
 * detaching treat it as any other point link.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kernel/probes.h"
#include "sds.skel.h"
#include "upsession.h"

/* Where a new session link is pinned for the moment libbpf opens it. */
/* bpffs refuses a dot in a name. */
#define SESSION_TMP_PIN	"/sys/fs/bpf/sds-session-%d-%d-%u"

int probes__path_parse(struct probe_path *pp, char *err, size_t errlen)
{
	const char *v = getenv("SDS_PROBE_PATH");

	memset(pp, 0, sizeof(*pp));
	if (!v || !*v || !strcmp(v, "auto"))
		pp->mode = PROBE_PATH_AUTO;
	else if (!strcmp(v, "session"))
		pp->mode = PROBE_PATH_SESSION;
	else if (!strcmp(v, "pair"))
		pp->mode = PROBE_PATH_PAIR;
	else {
		snprintf(err, errlen, "SDS_PROBE_PATH=%.64s: want auto, session or pair", v);
		return -1;
	}
	return 0;
}

void probes__session_prepare(struct probes *pr, uint64_t key)
{
	struct bpf_program *prog = pr->skel->progs.sds_session;

	if (pr->path.mode == PROBE_PATH_PAIR || pr->path.why[0]) {
		bpf_program__set_autoload(prog, false);
		pr->path.session = false;
		if (!pr->path.why[0])
			snprintf(pr->path.why, sizeof(pr->path.why), "SDS_PROBE_PATH=pair");
		return;
	}
	bpf_program__set_expected_attach_type(prog,
		(enum bpf_attach_type)SDS_BPF_TRACE_UPROBE_SESSION);
	/* 6 bits of the key, never 0: whose a cookie is (sds_session.bpf.h). */
	pr->skel->rodata->session_tag = (key % 63 + 1) << 58;
	pr->path.session = true;
}

bool probes__session_retry(struct probes *pr, int load_err)
{
	if (!pr->path.session || pr->path.mode != PROBE_PATH_AUTO)
		return false;
	snprintf(pr->path.why, sizeof(pr->path.why),
		 "fallback: the kernel refused the session program: %s",
		 strerror(load_err));
	pr->path.session = false;
	return true;
}

bool probes__wants_session(const struct probes *pr, const struct probe_point *p)
{
	return pr->path.session && p->kind == POINT_FUNCTION &&
	       p->ret_mode == RET_PAIR && !p->spec.failfast_ops &&
	       /* A connect inside the call reads its frame (docs/DELAY.md). */
	       !p->spec.drill_net &&
	       /* --deps: a send inside the call finds its frame (docs/DEPS.md). */
	       !pr->deps &&
	       /* A .part.N piece's entry reads its head's frame (clones.h). */
	       !p->parts &&
	       !p->spec.key_kind;	/* a key's hash needs the frame (docs/KEYS.md) */
}

/* Link fd @fd as a struct bpf_link (its fd taken over); NULL with errno. */
static struct bpf_link *link_of_fd(int fd, int id)
{
	static unsigned int seq;
	struct bpf_link *l;
	char path[128];
	int e;

	snprintf(path, sizeof(path), SESSION_TMP_PIN, (int)getpid(), id, seq++);
	if (bpf_obj_pin(fd, path)) {
		e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	l = bpf_link__open(path);
	e = errno;
	/*
	 * libbpf takes the path for the link's pin: unpinned through it, so
	 * that the link is pinned where the loader pins points (probes_pin.c).
	 */
	if (l)
		bpf_link__unpin(l);
	else
		unlink(path);
	close(fd);
	errno = e;
	return l;
}

int probes__session_attach(struct probes *pr, int id, const char *target,
			   pid_t pid)
{
	struct probe_point *p = &pr->pts[id];
	unsigned long off = p->attach_off;
	uint64_t cookie = id;
	int fd, e;

	fd = sds_upsession_link(bpf_program__fd(pr->skel->progs.sds_session),
				target, &off, &cookie, 1, pid);
	if (fd < 0) {
		e = errno;
		/* Not the kernel's lack of sessions: the pair would fail alike. */
		if (pr->path.mode != PROBE_PATH_AUTO || e == EPERM ||
		    e == EACCES || e == ESRCH || e == ENOENT) {
			errno = e;
			return -1;
		}
		snprintf(pr->path.why, sizeof(pr->path.why),
			 "fallback: the kernel refused a uprobe session link: %s",
			 strerror(e));
		pr->path.session = false;
		return 1;
	}
	p->enter = link_of_fd(fd, id);
	if (!p->enter)
		return -1;
	p->session = true;
	return 0;
}

const char *probes__path_text(const struct probes *pr, char *buf, size_t len)
{
	if (pr->path.session)
		snprintf(buf, len, "session (uprobe session, kernel >= 6.12)");
	else
		snprintf(buf, len, "pair (%s)", pr->path.why[0] ? pr->path.why :
			 "uprobe + uretprobe");
	return buf;
}

/* The kernel's BPF_LINK_TYPE_UPROBE_MULTI (6.6+), absent from 6.1's uapi. */
#define SESSION_LINK_TYPE	12

void probes__session_adopted(struct probes *pr, int n)
{
	int id;

	for (id = 0; id < n; id++) {
		struct probe_point *p = &pr->pts[id];
		struct bpf_link_info info;
		__u32 len = sizeof(info);

		if (!p->enter || p->leave)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(bpf_link__fd(p->enter), &info, &len))
			p->session = info.type == SESSION_LINK_TYPE;
	}
}
