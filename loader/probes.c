// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* probes.c - load the BPF programs and attach function points. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probes.h"
#include "sds.skel.h"

static const char *perm_hint(int err)
{
	if (err != EPERM && err != EACCES)
		return "";
	/* As root, EACCES on load is the verifier saying no. */
	if (geteuid() == 0 && err == EACCES)
		return " (rejected by the verifier: run with -v for its log)";
	return " (run as root, or with CAP_BPF and CAP_PERFMON)";
}

int probes__load(struct probes *pr, char *err, size_t errlen)
{
	int e;

	memset(pr, 0, sizeof(*pr));
	pr->pts = calloc(SDS_MAX_POINTS, sizeof(*pr->pts));
	if (!pr->pts) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pr->skel = sds_bpf__open();
	if (!pr->skel) {
		e = errno;
		snprintf(err, errlen, "opening BPF object: %s", strerror(e));
		return -1;
	}
	e = sds_bpf__load(pr->skel);
	if (e) {
		e = -e;
		snprintf(err, errlen, "loading BPF programs: %s%s",
			 strerror(e), perm_hint(e));
		return -1;
	}
	pr->exit_link = bpf_program__attach(pr->skel->progs.sds_thread_exit);
	if (!pr->exit_link) {
		e = errno;
		snprintf(err, errlen, "attaching sched_process_exit: %s%s",
			 strerror(e), perm_hint(e));
		return -1;
	}
	return 0;
}

int probes__attach_point(struct probes *pr, int id, const char *target,
			 pid_t pid, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);
	struct probe_point *p = &pr->pts[id];
	struct sds_point_cfg cfg = {
		.timeout_ns = p->spec.timeout_ns,
		.err_mode = p->spec.err_mode,
		.ret64 = p->spec.ret64,
	};
	__u32 key = id;
	int e;

	if (bpf_map_update_elem(bpf_map__fd(pr->skel->maps.point_cfg), &key,
				&cfg, BPF_ANY)) {
		e = errno;
		snprintf(err, errlen, "configuring point '%s': %s",
			 p->spec.name, strerror(e));
		return -1;
	}
	p->attach_off = p->fn.offset + p->site.skip;
	opts.bpf_cookie = id;
	opts.retprobe = false;
	p->enter = bpf_program__attach_uprobe_opts(pr->skel->progs.sds_enter,
						   pid, target, p->attach_off,
						   &opts);
	if (!p->enter)
		goto fail;
	opts.retprobe = true;
	p->leave = bpf_program__attach_uprobe_opts(pr->skel->progs.sds_leave,
						   pid, target, p->attach_off,
						   &opts);
	if (!p->leave)
		goto fail;
	if (id >= pr->npoints)
		pr->npoints = id + 1;
	return 0;
fail:
	e = errno;
	snprintf(err, errlen, "attaching point '%s' to %s:%s: %s%s",
		 p->spec.name, target, p->spec.symbol, strerror(e),
		 e == ESRCH ? " (no such process)" : perm_hint(e));
	return -1;
}

int probes__slots_fd(const struct probes *pr)
{
	return bpf_map__fd(pr->skel->maps.slots);
}

int probes__gauges_fd(const struct probes *pr)
{
	return bpf_map__fd(pr->skel->maps.gauges);
}

void probes__destroy(struct probes *pr)
{
	int i;

	if (pr->pts) {
		for (i = 0; i < SDS_MAX_POINTS; i++) {
			bpf_link__destroy(pr->pts[i].enter);
			bpf_link__destroy(pr->pts[i].leave);
		}
	}
	bpf_link__destroy(pr->exit_link);
	sds_bpf__destroy(pr->skel);
	free(pr->pts);
	memset(pr, 0, sizeof(*pr));
}
