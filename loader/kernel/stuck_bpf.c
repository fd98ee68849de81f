// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * stuck_bpf.c - the BPF side's table of timed calls in flight
 * (bpf/sds_stuck.bpf.h), read into a snapshot (stuck.h): the mmapable
 * array mapped read-only and scanned with plain loads (no syscall; 512 KB,
 * the owners first), and each point's timeout from point_cfg in batches.
 * The loader never writes the table: each thread writes its own slots.
 * Called by counters__snap after the ring and gauges.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "kernel/snapshot.h"
#include "kernel/stuck.h"

#define CFG_CHUNK	(sizeof(((struct stuck_table *)0)->cfg) / sizeof(struct sds_point_cfg))

int stuck_table__init(struct stuck_table *t, int fd, int cfg_fd)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t bytes = sizeof(struct sds_stuck_thread) * SDS_STUCK_THREADS;
	void *m;

	memset(t, 0, sizeof(*t));
	t->cfg_fd = cfg_fd;
	if (page > 0)
		bytes = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
	m = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	t->map = m;
	t->map_bytes = bytes;
	return 0;
}

void stuck_table__free(struct stuck_table *t)
{
	if (t->map)
		munmap((void *)t->map, t->map_bytes);
	t->map = NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Each point's timeout as the BPF side has it, CFG_CHUNK points a batch
 * (one key at a time where arrays have no batched lookups); false: no
 * point is timed (or point_cfg could not be read: nothing counts).
 */
static bool read_timeouts(struct stuck_table *t, int npoints)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 first, in, out, count, k;
	bool any = false;
	__u32 i;

	for (first = 0; first < (__u32)npoints; first += CFG_CHUNK) {
		count = (__u32)npoints - first;
		if (count > CFG_CHUNK)
			count = CFG_CHUNK;
		in = first - 1;
		if (bpf_map_lookup_batch(t->cfg_fd, first ? &in : NULL, &out,
					 t->cfg_keys, t->cfg, &count, &opts) &&
		    errno != ENOENT) {
			count = 0;
			for (k = first; k < (__u32)npoints && count < CFG_CHUNK; k++) {
				if (bpf_map_lookup_elem(t->cfg_fd, &k, &t->cfg[count]))
					memset(&t->cfg[count], 0, sizeof(t->cfg[0]));
				count++;
			}
		}
		for (i = 0; i < CFG_CHUNK && first + i < (__u32)npoints; i++) {
			t->timeout_ns[first + i] = i < count ? t->cfg[i].timeout_ns : 0;
			any |= t->timeout_ns[first + i] != 0;
		}
	}
	return any;
}

int stuck_table__read(struct stuck_table *t, struct snapshot *out)
{
	uint64_t now;
	int i, k, m;
	__u32 e;

	if (!t || !t->map)
		return 0;
	memset(t->counts, 0, sizeof(t->counts[0]) * (size_t)out->npoints);
	/* Nothing timed, nothing to read: no point pays for the scan. */
	if (read_timeouts(t, out->npoints)) {
		now = mono_ns();
		for (e = 0; e < SDS_STUCK_THREADS; e++) {
			const volatile struct sds_stuck_thread *th = &t->map[e];

			if (!th->tid)
				continue;
			/* The time first: a slot whose time is set has its point. */
			for (k = 0, m = 0; k < SDS_STUCK_CALLS; k++) {
				uint64_t ts = th->c[k].ts;

				if (!ts)
					continue;
				__atomic_thread_fence(__ATOMIC_ACQUIRE);
				t->ents[m].point = th->c[k].point;
				t->ents[m].entered_ns = ts;
				m++;
			}
			stuck_tally(t->ents, m, now, t->timeout_ns, out->npoints,
				    t->counts);
		}
	}
	for (i = 0; i < out->npoints; i++) {
		out->pts[i].stuck = t->counts[i];
		out->pts[i].stuck_read = true;
	}
	return 0;
}
