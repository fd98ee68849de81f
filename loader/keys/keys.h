/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * keys.h - hot keys, the loader's side of the kernel's per-key counts
 * (bpf/sds_keys.bpf.h, docs/KEYS.md): each keyed point's bounded table
 * created, resized and read; blocked keys written.
 */
#ifndef SDS_KEYS_LOADER_H
#define SDS_KEYS_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sds_types.h"
#include "sds_keys.h"
#include "sds_keystat.h"
#include "keys/keys_period.h"

struct probes;
struct point_spec;
struct sds_hb_key;

/* One point's table, as the loader holds it (struct probes' keys[]). */
struct probe_keys {
	int fd;			/* the inner LRU table; -1: none */
	uint32_t cap;		/* its max_entries */
	uint64_t base_inserted;	/* key_counts' inserted when it was made */
	uint64_t evicted_before;	/* evictions of the tables it replaced */
};

/* One key read from a table: its counts and its 10-s window. */
struct keys_entry {
	struct sds_key key;
	uint64_t calls, exceptions, downgrades, completed, latency_sum;
	uint32_t hist[SDS_KEY_HIST];
	uint64_t win_calls, win_exceptions, win_downgrades;	/* the window's */
};

/* A point's table read whole (keys__read). */
struct keys_read {
	uint32_t cap;		/* the table's capacity */
	uint64_t live;		/* entries read: keys in the table */
	uint64_t inserted;	/* keys added since the table was made */
	uint64_t evicted;	/* keys the LRU dropped: inserted - live, and earlier tables' */
	uint64_t unreadable;	/* calls whose key the kernel could not read */
	uint64_t lost;		/* calls not counted by key */
	uint64_t blocked;	/* calls of a blocked key failed fast */
	size_t n;		/* entries in @e, heaviest first after keys__top */
	struct keys_entry *e;
};

/* The table array for SDS_MAX_POINTS points (no table each); -1: out of memory. */
int keys__init(struct probes *pr);
void keys__destroy(struct probes *pr);

/* Write point @id's key_cfg from its spec (unkeyed: kind 0). 0, or -1 with errno. */
int keys__configure(struct probes *pr, int id);

/*
 * Give point @id a table of @cap keys (SDS_OFF or 0: the default),
 * replacing one of another size (its counts start again; its evictions
 * are kept) and adopting one a dead loader left in the pinned outer map.
 * 0, or -1 with a message.
 */
int keys__table(struct probes *pr, int id, int64_t cap, char *err,
		size_t errlen);

/* Whether point @id counts keys: keyed function points, guard points passed keys. */
bool keys__keyed(const struct probes *pr, int id);

/*
 * The tick: a table for each guard point the kernel saw passed a key
 * without one (key_wanted), of @cap_of(@ctx, id) keys.
 */
void keys__tick(struct probes *pr, int64_t (*cap_of)(void *ctx, int id),
		void *ctx);

/*
 * Read point @id's table whole with batch lookups (bounded by its
 * capacity) into @out, with each key's window over the SDS_WINDOW_S
 * seconds up to now.  0, or -1 with errno (ENOENT: no table).
 */
int keys__read(const struct probes *pr, int id, struct keys_read *out);
/* Sort @r's entries heaviest first (window calls, then calls, then the key). */
void keys__top(struct keys_read *r);
void keys__read_free(struct keys_read *r);

/*
 * @k for people: the integer, the text if every byte is printable ASCII,
 * else 0x and hex; "(unreadable)".  Never raw bytes.  @buf of
 * KEYS_TEXT_MAX.
 */
#define KEYS_TEXT_MAX	(2 * SDS_KEY_MAX + 3)
void keys__text(const struct sds_key *k, char *buf, size_t len);
/* "int", "str", "buf", "unreadable". */
const char *keys__kind_name(unsigned int kind);
/* The p-th percentile (0..100) of @e's latency, ns (a bucket's upper end); 0: none. */
uint64_t keys__percentile(const struct keys_entry *e, unsigned int p);

/*
 * Blocked keys (a keyed :failfast= point): block key hash @hash of
 * point @id until @until_ns (CLOCK_MONOTONIC), or unblock it.  0, or -1
 * with errno.
 */
int keys__block(struct probes *pr, int id, uint64_t hash, uint64_t until_ns);
int keys__unblock(struct probes *pr, int id, uint64_t hash);

/*
 * The heartbeat's keys of point @id: its SDS_HB_POINT_KEYS heaviest over
 * the window as the period closes, appended to @out[*@n..@max), each
 * with .point @id and its p99 over the period (since @kp's marks, which
 * are then moved to now: keys_period.h).
 */
void keys__heartbeat(const struct probes *pr, int id, struct keys_period *kp,
		     struct sds_hb_key *out, int *n, int max);

#endif /* SDS_KEYS_LOADER_H */
