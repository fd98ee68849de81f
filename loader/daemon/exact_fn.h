/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * exact_fn.h - exact trips of function points (exact_fn.c): the marks the
 * BPF side gets, and the time of the call that crossed one.
 */
#ifndef SDS_EXACT_FN_H
#define SDS_EXACT_FN_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

struct exact_run;

/*
 * Publish point @id's marks (visit, exceptions, slow calls; UINT64_MAX:
 * none) to the BPF side, clearing the crossing of a mark @rebased; a
 * no-op where the BPF side cannot have them (exact_fn__armed false: not a function point, or
 * links adopted from pins).
 */
bool exact_fn__armed(const struct exact_run *x, int id);
void exact_fn__publish(struct exact_run *x, int id, const uint64_t upto[3],
		       const bool rebased[3]);
/*
 * After point @id's tick at @now_ns on the read taken at @snap_ns, whose
 * shown reason went from @was to @shown: the CLOCK_MONOTONIC time of the
 * call that crossed the mark of a trip opening now (0: none, or not
 * believed: the tick dates it), and the crossings a trip's end or a stale
 * stamp leave are cleared.
 */
uint64_t exact_fn__tick(struct exact_run *x, int id, uint64_t snap_ns,
			uint32_t was, uint32_t shown, uint64_t now_ns);
/* `stats`' "crossed" of point @id: {"reason", "time_ms"} or null. */
json_t *exact_fn__json(const struct exact_run *x, int id);

#endif /* SDS_EXACT_FN_H */
