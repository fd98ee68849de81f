/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_keystat.h - hot keys counted in the kernel (docs/KEYS.md): the map
 * layouts shared by the key programs (bpf/sds_keys.bpf.h) and the loader
 * (loader/keys/keys.c).
 *
 * A keyed point has its own bounded table of keys: an LRU hash of
 * key_capacity entries (the loader creates it and puts it in the outer
 * array key_tables at the point's id), keyed by the key's sds_key_hash(),
 * whose value is the key itself and its counts.  Values are shared by
 * every CPU and added to with atomics: one key's calls are counted once
 * whichever CPU runs them.
 */
#ifndef SDS_KEYSTAT_H
#define SDS_KEYSTAT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "sds_keys.h"

/* A key's latency histogram: log2 buckets of ns, the last one open. */
#define SDS_KEY_HIST		32	/* [2^i, 2^(i+1)) ns; 31: >= 2^31 ns */
#define SDS_KEY_RING		16	/* marks of a key's last seconds (the 10-s window) */

/*
 * Per point (array key_cfg), written by the loader before it attaches:
 * where a function point's key is.  @kind SDS_KEY_NONE: an unkeyed point
 * (its calls pay one array load for this).
 */
struct sds_key_cfg {
	__u8 kind;		/* enum sds_key_kind: INT, STR or BUF */
	__u8 arg;		/* the argument holding the key or its pointer, 1..6 */
	__u8 len_arg;		/* BUF: the argument holding the length, 1..6; 0: @max */
	__u8 max;		/* STR, BUF: bytes read at most, 1..SDS_KEY_MAX */
	__u8 failfast;		/* a :failfast= point: its blocked keys fail fast */
	__u8 pad[3];
};

/*
 * The start of one second of a key: its totals' low 32 bits when the
 * second's first call came.  A window's count is the totals now less the
 * mark of its first second (modulo 2^32).
 */
struct sds_key_mark {
	__u32 sec;		/* low 32 bits of the CLOCK_MONOTONIC second (+ offset); 0: none */
	__u32 calls;		/* @calls before the second's calls */
	__u32 exceptions;	/* @exceptions then */
	__u32 downgrades;	/* @downgrades then */
};

/*
 * A key's entry in its point's table, laid out for the cache: a call
 * touches the element's first two lines and one of its histogram's, no
 * more, and adds with atomics once at entry (@calls) and twice at its end
 * (@latency_sum, its bucket).  The kernel's LRU element is its 48-byte
 * header and the 8-byte hash before this value, allocated back to back
 * from a page-aligned array, so that with this value's 520 bytes every
 * element is nine whole lines (SDS_KEY_ELEM): line 0 ends with @calls,
 * line 1 holds @sec and the other totals; the ring is written once a
 * second, the key itself only at insert.
 *
 * The window: the first call of a new second claims @sec (a
 * compare-and-swap) and marks the totals in that second's ring slot;
 * the 10-s window's counts are the totals less the mark of the oldest
 * second in it (none in it: the key had no call there).  A slot is
 * overwritten only by a second SDS_KEY_RING later, past every window.
 * A call racing a claim may count in the second before.  Completed calls
 * are the histogram's sum.
 */
struct sds_key_stat {
	__u64 calls;		/* since the key entered the table (line 0) */
	__u32 sec;		/* line 1: the second of the last call's claim */
	__u32 pad1;
	__u64 exceptions;
	__u64 downgrades;
	__u64 latency_sum;	/* ns, over the completed calls */
	__u32 hist[SDS_KEY_HIST];	/* log2 latency of each completed call */
	struct sds_key_mark ring[SDS_KEY_RING];	/* slot: second % SDS_KEY_RING */
	struct sds_key key;	/* the key, as the probe read it: cold */
	__u8 pad[24];		/* whole lines; a 64-byte string key's NUL lands here */
};

/* The kernel's LRU element: its header (struct htab_elem), the hash, the value. */
#define SDS_KEY_ELEM_HEAD	56
#define SDS_KEY_ELEM		(SDS_KEY_ELEM_HEAD + sizeof(struct sds_key_stat))

_Static_assert(sizeof(struct sds_key_stat) == 520 && SDS_KEY_ELEM % 64 == 0,
	       "a key's element is whole cache lines");
_Static_assert((SDS_KEY_ELEM_HEAD + __builtin_offsetof(struct sds_key_stat, ring)) % 16 == 0,
	       "no ring slot across two lines");
_Static_assert(SDS_KEY_ELEM_HEAD + __builtin_offsetof(struct sds_key_stat, hist) <= 128,
	       "the per-call totals in line 1");

/*
 * Per point, per CPU (key_counts), since load: what the loader needs
 * beside the table to account for every call.  Evictions are
 * @inserted minus the table's live entries.
 */
struct sds_key_count {
	__u64 inserted;		/* keys added to the table */
	__u64 unreadable;	/* calls whose key could not be read: the key (unreadable) */
	__u64 lost;		/* calls not counted by key: no table, or the insert failed */
	__u64 blocked;		/* calls of a blocked key marked to fail fast */
};

/*
 * Blocked keys (hash key_blocked), written only by the loader
 * (keys__block, keys__unblock): a keyed :failfast= point's calls of a key
 * blocked until @until_ns (CLOCK_MONOTONIC) fail fast as if the point
 * were downgraded.
 */
struct sds_key_block {
	__u32 point;
	__u32 pad;
	__u64 hash;		/* sds_key_hash() of the key */
};

#define SDS_KEY_BLOCKED_MAX	4096	/* blocked keys, all points */

#endif /* SDS_KEYSTAT_H */
