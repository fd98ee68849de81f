// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * stuck_bpf.c - the BPF side's table of timed calls in flight, read into
 * a snapshot (stuck.h): batched lookups of the hash (its threads, a few
 * syscalls for the whole table) and each point's timeout from point_cfg.
 * Read only: the threads write their own entries.  Called by
 * counters__snap after the ring and gauges.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "kernel/snapshot.h"
#include "kernel/stuck.h"

void stuck_table__init(struct stuck_table *t, int fd, int cfg_fd)
{
	memset(t, 0, sizeof(*t));
	t->fd = fd;
	t->cfg_fd = cfg_fd;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Each point's timeout as the BPF side has it, STUCK_CHUNK points a
 * batch (one key at a time where arrays have no batched lookups); false:
 * no point is timed (or point_cfg could not be read: nothing counts).
 */
static bool read_timeouts(struct stuck_table *t, int npoints)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 first, in, out, count, k;
	bool any = false;
	int i;

	for (first = 0; first < (__u32)npoints; first += STUCK_CHUNK) {
		count = (__u32)npoints - first;
		if (count > STUCK_CHUNK)
			count = STUCK_CHUNK;
		in = first - 1;
		if (bpf_map_lookup_batch(t->cfg_fd, first ? &in : NULL, &out,
					 t->cfg_keys, t->cfg, &count, &opts) &&
		    errno != ENOENT) {
			count = 0;
			for (k = first; k < (__u32)npoints && count < STUCK_CHUNK; k++) {
				if (bpf_map_lookup_elem(t->cfg_fd, &k, &t->cfg[count]))
					memset(&t->cfg[count], 0, sizeof(t->cfg[0]));
				count++;
			}
		}
		for (i = 0; i < (int)count && first + i < (__u32)npoints; i++) {
			t->timeout_ns[first + i] = t->cfg[i].timeout_ns;
			any |= t->cfg[i].timeout_ns != 0;
		}
		for (; first + i < (__u32)npoints && i < STUCK_CHUNK; i++)
			t->timeout_ns[first + i] = 0;
	}
	return any;
}

/*
 * The next @max threads into t->keys/t->vals, one key after @*prev at a
 * time (kernels without batched lookups of hashes): how many, 0 at the end.
 */
static int read_per_key(struct stuck_table *t, __u32 *prev, bool *first, int max)
{
	int n = 0;

	while (n < max) {
		if (bpf_map_get_next_key(t->fd, *first ? NULL : prev, &t->keys[n]))
			break;
		*first = false;
		*prev = t->keys[n];
		if (bpf_map_lookup_elem(t->fd, &t->keys[n], &t->vals[n]))
			continue;	/* exited meanwhile */
		n++;
	}
	return n;
}

/* Tally the timed calls of @n threads. */
static void tally(struct stuck_table *t, int n, uint64_t now, int npoints)
{
	int i, k, m = 0;

	for (i = 0; i < n; i++)
		for (k = 0; k < SDS_STUCK_CALLS; k++) {
			const struct sds_stuck_call *c = &t->vals[i].c[k];

			if (!c->ts)
				continue;
			t->ents[m].point = c->point;
			t->ents[m].entered_ns = c->ts;
			m++;
		}
	stuck_tally(t->ents, m, now, t->timeout_ns, npoints, t->counts);
}

int stuck_table__read(struct stuck_table *t, struct snapshot *out)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 in = 0, next = 0, prev = 0;
	bool first = true, more = true;
	uint64_t now;
	int i, n, rounds, err;

	if (!t || t->fd < 0)
		return 0;
	memset(t->counts, 0, sizeof(t->counts[0]) * (size_t)out->npoints);
	/* Nothing timed, nothing to read: no point pays for the walk. */
	if (read_timeouts(t, out->npoints)) {
		now = mono_ns();
		/* SDS_STUCK_THREADS entries at most: a bounded number of chunks. */
		for (rounds = 0;
		     more && rounds <= SDS_STUCK_THREADS / STUCK_CHUNK + 1;
		     rounds++) {
			__u32 count = STUCK_CHUNK;

			if (t->per_key) {
				n = read_per_key(t, &prev, &first, STUCK_CHUNK);
				more = n == STUCK_CHUNK;
			} else {
				err = bpf_map_lookup_batch(t->fd, first ? NULL : &in,
							   &next, t->keys, t->vals,
							   &count, &opts);
				if (err && errno != ENOENT) {
					if (!first || (errno != EINVAL &&
						       errno != ENOTSUP &&
						       errno != EOPNOTSUPP))
						return -1;
					t->per_key = true;
					continue;
				}
				n = (int)count;
				more = !err;
				first = false;
				in = next;
			}
			tally(t, n, now, out->npoints);
		}
	}
	for (i = 0; i < out->npoints; i++) {
		out->pts[i].stuck = t->counts[i];
		out->pts[i].stuck_read = true;
	}
	return 0;
}
