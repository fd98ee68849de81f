// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* halfopen.c - judging a half-open phase of N probes (halfopen.h). */
#include "decide/halfopen.h"

void halfopen_open(struct halfopen_run *h, uint64_t ok, uint64_t failed,
		   uint64_t slow)
{
	h->tag++;
	h->open = true;
	h->done_seen = false;
	h->reopen = true;
	h->ok_base = ok;
	h->failed_base = failed;
	h->slow_base = slow;
}

int halfopen_verdict(struct halfopen_run *h, uint64_t n, uint64_t pct,
		     uint64_t ok, uint64_t failed, uint64_t slow, uint64_t gen)
{
	uint64_t nok, nfail, nslow, bad;

	if (!h->open)
		return HALFOPEN_WAIT;
	/* The loader's counts never go down; a base above is a reset. */
	nok = ok >= h->ok_base ? ok - h->ok_base : 0;
	nfail = failed >= h->failed_base ? failed - h->failed_base : 0;
	nslow = slow >= h->slow_base ? slow - h->slow_base : 0;
	if (nok + nfail < n) {
		h->done_seen = false;
		return HALFOPEN_WAIT;
	}
	if (!h->done_seen) {
		h->done_seen = true;
		h->done_gen = gen;
		return HALFOPEN_WAIT;
	}
	/* The same read again (a flush between ticks, a busy pool): wait. */
	if (gen <= h->done_gen)
		return HALFOPEN_WAIT;
	/*
	 * The kernel cannot tell a slow probe that also failed from two
	 * probes: such a probe counts twice, which errs toward holding.
	 */
	bad = nfail + nslow;
	if (bad > nok + nfail)
		bad = nok + nfail;
	h->open = false;
	h->done_seen = false;
	return bad * 100 <= pct * n ? HALFOPEN_CLOSE : HALFOPEN_FAIL;
}
