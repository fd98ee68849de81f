// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * failfast_limit.c - the limits of :failfast= function points as the BPF
 * side keeps them (failfast_limit.h).  The entry reads @armed, then the
 * limits: a limit withdrawn is unarmed first, one published is stored
 * whole before its bit is set, so an entry never sees a half-written one.
 */
#include <string.h>
#include "kernel/probes.h"
#include "publish/failfast_limit.h"
#include "decide/verdict.h"
#include "publish/flags.h"
#include "sds.skel.h"

/* Point @id's entry in the programs' globals; NULL: none to write. */
static struct sds_fn_limit *limit_of(const struct probes *p, int id)
{
	struct sds_bpf *s = p ? p->skel : NULL;

	if (!s || !s->bss || id < 0 || id >= SDS_MAX_POINTS ||
	    p->pts[id].kind != POINT_FUNCTION || !p->pts[id].spec.failfast_ops)
		return NULL;
	return &s->bss->fn_limits[id];
}

void failfast_limit__tick(const struct probes *p, int id,
			  const struct flag_state *fs)
{
	struct sds_fn_limit *l = limit_of(p, id);
	uint32_t armed = 0, was;
	int64_t lim = 0;
	uint64_t iv = 0, burst = 0;

	if (!l)
		return;
	if ((fs->active & SDS_ACT_CONCURRENT) && fs->concurrent_limit >= 0) {
		armed |= SDS_FNL_CONC;
		lim = fs->concurrent_limit;
	}
	if ((fs->active & SDS_ACT_TOKEN) && fs->token_interval_ns) {
		armed |= SDS_FNL_TOKEN;
		iv = fs->token_interval_ns;
		burst = fs->token_burst_ns;
	}
	was = __atomic_load_n(&l->armed, __ATOMIC_RELAXED);
	if (armed == was && lim == l->concurrent_limit &&
	    iv == l->token_interval_ns && burst == l->token_burst_ns)
		return;
	/* Withdrawn first: an entry that reads the old bits uses old limits. */
	__atomic_store_n(&l->armed, armed & was, __ATOMIC_RELEASE);
	__atomic_store_n(&l->concurrent_limit, lim, __ATOMIC_RELAXED);
	if (iv != l->token_interval_ns || burst != l->token_burst_ns) {
		__atomic_store_n(&l->token_interval_ns, iv, __ATOMIC_RELAXED);
		__atomic_store_n(&l->token_burst_ns, burst, __ATOMIC_RELAXED);
		/* A new bucket starts full (a tat of 0 is long past). */
		__atomic_store_n(&l->tat_ns, 0, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&l->armed, armed, __ATOMIC_RELEASE);
}

void failfast_limit__refused(const struct probes *p, int id,
			     uint64_t *concurrent, uint64_t *token)
{
	const struct sds_fn_limit *l = limit_of(p, id);

	*concurrent = l ? __atomic_load_n(&l->refused_concurrent, __ATOMIC_RELAXED) : 0;
	*token = l ? __atomic_load_n(&l->refused_token, __ATOMIC_RELAXED) : 0;
}
