// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * probes_split.c - where calls' time went (docs/SPLIT.md): the raw
 * tracepoints on sched_switch and sched_wakeup (bpf/sds_split.bpf.h).
 *
 * They run for every thread of the host, so they are attached only once
 * the loader has a point to split, and never with --no-split.  A kernel
 * that refuses them (the verifier, no such tracepoint) costs the loader
 * its split only: the load goes on without them, attach says why in one
 * line, and `stats` reports the split unavailable rather than zero.
 * The uprobe side keeps a call's split only while the BPF side's
 * split_on is set, which is set once both are attached and cleared
 * before they go: no call is split by half a pair.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kernel/probes.h"
#include "sds.skel.h"

void probes__split_prepare(struct probes *pr)
{
	struct sds_bpf *s = pr->skel;
	bool in = !pr->split.off && !pr->split.why[0];

	bpf_program__set_autoload(s->progs.sds_split_switch, in);
	bpf_program__set_autoload(s->progs.sds_split_wakeup, in);
	pr->split.loaded = in;
	if (pr->split.off && !pr->split.why[0])
		snprintf(pr->split.why, sizeof(pr->split.why), "--no-split");
}

bool probes__split_retry(struct probes *pr, int load_err)
{
	if (!pr->split.loaded)
		return false;
	snprintf(pr->split.why, sizeof(pr->split.why),
		 "the kernel refused the split's tracepoint programs: %s",
		 strerror(load_err));
	pr->split.loaded = false;
	return true;
}

static void split_refused(struct probes *pr, const char *what, int e)
{
	snprintf(pr->split.why, sizeof(pr->split.why),
		 "attaching the raw tracepoint %s: %s", what, strerror(e));
	fprintf(stderr, "sds-bpf: split unavailable: %s\n", pr->split.why);
}

void probes__split_want(struct probes *pr)
{
	struct sds_bpf *s = pr->skel;

	if (!s || !pr->split.loaded || pr->split.on || pr->split.why[0])
		return;
	pr->split.sw = bpf_program__attach(s->progs.sds_split_switch);
	if (!pr->split.sw) {
		split_refused(pr, "sched_switch", errno);
		return;
	}
	pr->split.wk = bpf_program__attach(s->progs.sds_split_wakeup);
	if (!pr->split.wk) {
		split_refused(pr, "sched_wakeup", errno);
		bpf_link__destroy(pr->split.sw);
		pr->split.sw = NULL;
		return;
	}
	/* Both run: calls entering from now on keep their split. */
	__atomic_store_n(&s->bss->split_on, 1, __ATOMIC_RELEASE);
	pr->split.on = true;
}

void probes__split_detach(struct probes *pr)
{
	if (pr->skel && pr->skel->bss)
		__atomic_store_n(&pr->skel->bss->split_on, 0, __ATOMIC_RELEASE);
	bpf_link__destroy(pr->split.wk);
	bpf_link__destroy(pr->split.sw);
	pr->split.wk = NULL;
	pr->split.sw = NULL;
	pr->split.on = false;
}

int probes__split_sums_fd(const struct probes *pr)
{
	return pr->skel && pr->split.loaded ? bpf_map__fd(pr->skel->maps.split_sums) : -1;
}

int probes__split_hist_fd(const struct probes *pr)
{
	return pr->skel && pr->split.loaded ? bpf_map__fd(pr->skel->maps.split_hist) : -1;
}
