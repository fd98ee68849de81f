/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * guard.h - the guard's decision for one call (docs/PROTOCOL.md, "The
 * guard's decision"), on a flag entry, a cell and a header: no socket, no probe
 * site, no clock of its own, so the unit tests run it on a region they lay
 * out themselves with a clock they control.
 */
#ifndef SDS_GUARD_H
#define SDS_GUARD_H

#include <stdbool.h>
#include <stdint.h>
#include "sds_flags.h"

/* What the decision gave one call (and, in a frame, what it did since). */
#define SDS_G_DOWNGRADE	(1u << 0)	/* refused: run the fallback */
#define SDS_G_PERMIT	(1u << 1)	/* passed holding a semaphore permit */
#define SDS_G_PROBE	(1u << 2)	/* passed as the hold's probe call */
#define SDS_G_EXCEPTION	(1u << 3)	/* frames only: an exception was signed */
#define SDS_G_FAULT	(1u << 4)	/* passed, but an error drill fails it */
#define SDS_G_DELAY	(1u << 5)	/* passed, after the delay drill's sleep */
#define SDS_G_KEYED	(1u << 6)	/* frames only: a keyed call (its key in the frame) */
#define SDS_G_KEYBLOCK	(1u << 7)	/* refused: its key is blocked (reason key) */

/*
 * Tries of a CAS on a cell before the guard gives up (fail-open: the call
 * passes, holding no permit): a client that keeps rewriting a cell cannot
 * keep another process's call spinning, and honest contention never gets
 * near it (each failed try is another call's success).
 */
#define SDS_CAS_TRIES	1024

/*
 * Retries of the read of the loader's line under its sequence counter.  A
 * loader killed in the middle of a write leaves the counter odd for good:
 * after this many tries the guard gives up and passes (fail-open) -- but
 * not past an exact budget of a loader still ticking (guard.c).
 */
#define SDS_SEQ_TRIES	64

/*
 * The region of a loader whose next tick is more than SDS_STALE_NS late
 * at @now: its last tick is older than its interval + SDS_STALE_NS (2.1 s
 * at the default 100 ms, 12 s at the longest tick; a fixed 2 s would
 * call a loader ticking every 3 s dead between its ticks).  The interval
 * is the loader's, bounded all the same.  A tick written just after we
 * read the clock is a little ahead and fresh, but one more than
 * SDS_STALE_NS ahead is no tick of a loader on this host's clock, and
 * garbage must not keep flags in force.
 */
static inline bool sds_guard_stale(const struct sds_flags_header *h,
				   uint64_t now)
{
	uint64_t tick = __atomic_load_n(&h->tick_ns, __ATOMIC_RELAXED);
	uint64_t iv = __atomic_load_n(&h->tick_interval_ns, __ATOMIC_RELAXED);

	if (iv > SDS_TICK_MAX_NS)
		iv = SDS_TICK_MAX_NS;
	if (now >= tick)
		return now - tick > iv + SDS_STALE_NS;
	return tick - now > SDS_STALE_NS;
}

/*
 * Hot keys (docs/KEYS.md "Limits"): is the key of sds_key_hash() @hash
 * blocked in table @t (the point's, read only) at CLOCK_MONOTONIC @now?
 * Plain loads of the key's window only (bpf/sds_flags.h): a block is
 * believed while now < until_ns <= now + SDS_KEY_BLOCK_MAX_NS, and never
 * from a region whose loader stopped ticking (@h stale).  The caller
 * reads @t->nblocked first: with none blocked it need not read the clock.
 */
static inline bool sds_guard_key_blocked(const struct sds_key_table *t,
					 const struct sds_flags_header *h,
					 uint64_t hash, uint64_t now)
{
	uint32_t home = (uint32_t)hash & (SDS_KEY_BLOCK_SLOTS - 1) &
			~(uint32_t)(SDS_KEY_BLOCK_GROUP - 1);
	unsigned int i;

	for (i = 0; i < SDS_KEY_BLOCK_PROBES; i++) {
		const struct sds_keyblock_slot *s =
			&t->slot[(home + i) & (SDS_KEY_BLOCK_SLOTS - 1)];
		uint64_t until;

		if (__atomic_load_n(&s->hash, __ATOMIC_ACQUIRE) != hash)
			continue;
		until = __atomic_load_n(&s->until_ns, __ATOMIC_RELAXED);
		return until > now && until - now <= SDS_KEY_BLOCK_MAX_NS &&
		       !sds_guard_stale(h, now);
	}
	return false;
}

/*
 * Decide one call of the point whose entry is @e (the loader's, read only)
 * and cell @c (the guards') in the region headed by @h, at CLOCK_MONOTONIC
 * @now.  @permit is this process's cell of the
 * permit table for the point (NULL: none), @rng the caller's PRNG state
 * for downgrade_rate.  Returns SDS_G_DOWNGRADE, or for a passed call 0 or
 * SDS_G_PERMIT and/or SDS_G_PROBE, which sds_guard_release() must be given
 * at the end of the call.
 */
unsigned int sds_guard_decide(const struct sds_flag *e, struct sds_cell *c,
			      const struct sds_flags_header *h, __u32 *permit,
			      uint64_t now, uint64_t *rng);

/*
 * sds_guard_decide() with the point's drill applied to a passed call: a
 * share drill_ratio/100 of them gets SDS_G_FAULT (error drill) or
 * SDS_G_DELAY with the sleep in *@delay_ns (delay drill), each counted in
 * the cell (drill_faults, drill_delays).  A drill past its expiry is
 * ignored even if the loader never clears it; the delay is at most
 * SDS_DRILL_DELAY_MAX_NS whatever the entry says.  The sleep is the
 * caller's: this stays free of syscalls so it can run on a fake clock.
 */
unsigned int sds_guard_decide_drill(const struct sds_flag *e, struct sds_cell *c,
				    const struct sds_flags_header *h,
				    __u32 *permit, uint64_t now, uint64_t *rng,
				    uint64_t *delay_ns);

/*
 * End of a passed call that sds_guard_decide() gave @how (with
 * SDS_G_EXCEPTION if the call failed): gives the permit back, counts the
 * probe's outcome.
 */
void sds_guard_release(struct sds_cell *c, __u32 *permit, unsigned int how);

/*
 * xorshift64* step.  A zero state is seeded first (from its address and a
 * process-wide counter: no clock, no syscall), so a thread-local zero
 * state needs no set-up.
 */
uint64_t sds_guard_rand(uint64_t *state);

#endif /* SDS_GUARD_H */
