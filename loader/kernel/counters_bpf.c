// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * counters_bpf.c - the loader's counters source: the per-CPU BPF maps,
 * read a chunk of points at a time with bpf_map_lookup_batch.
 *
 * A tick reads three ring rows (one second of every point each,
 * counters.c) and, when needed, the gauges: in batches, ~20 syscalls at
 * 1,024 points.  tools/bench/loader/loader_cost.py, 1,024 points with calls
 * flowing, 100 ms tick, 2-CPU machine: batched 0.70% of a core, one key
 * a syscall (SDS_COUNTERS_PER_KEY=1) 4.15%; reading all 16 slots of each
 * point every tick it was 2.45% against 35%.  Kernels without batched
 * lookups of arrays (before 5.6) get one key at a time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kernel/counters.h"

/* Keys [@from, @from + @n) of @fd one at a time into @vals (@size bytes a key). */
static int read_keys(int fd, __u32 from, __u32 n, void *vals, size_t size)
{
	__u32 k;

	for (k = 0; k < n; k++) {
		__u32 key = from + k;

		if (bpf_map_lookup_elem(fd, &key, (char *)vals + (size_t)k * size))
			return -1;
	}
	return 0;
}

/*
 * Keys [@from, @from + @n) of array @fd in as few syscalls as the kernel
 * allows.  The batch starts after the key it is given (the previous
 * batch's last), so a read from key k passes k - 1, and from 0 passes none.
 */
static int read_batch(struct counters_bpf *b, int fd, __u32 from, __u32 n,
		      void *vals, size_t size)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 done = 0, in, out, count;
	int err;

	while (done < n) {
		in = from + done - 1;
		count = n - done;
		err = bpf_map_lookup_batch(fd, from + done ? &in : NULL, &out,
					   b->keys, (char *)vals + (size_t)done * size,
					   &count, &opts);
		if (err && errno != ENOENT)
			return -1;
		if (!count)
			break;
		done += count;
	}
	if (done < n) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

/* Keys [@from, @from + @n) of @fd: batched, else one at a time from now on. */
static int read_range(struct counters_bpf *b, int fd, __u32 from, __u32 n,
		      void *vals, size_t size)
{
	if (!b->per_key) {
		if (!read_batch(b, fd, from, n, vals, size))
			return 0;
		/* No batched lookups of arrays here: key by key from now on. */
		if (errno != EINVAL && errno != ENOTSUP && errno != EOPNOTSUPP)
			return -1;
		b->per_key = true;
	}
	return read_keys(fd, from, n, vals, size);
}

static int bpf_read_row(void *ctx, int idx, int first, int n,
			struct sds_slot *out)
{
	struct counters_bpf *b = ctx;
	size_t size = sizeof(*out) * libbpf_num_possible_cpus();

	return read_range(b, b->slots_fd, (__u32)idx * b->cap + first, n, out, size);
}

static int bpf_read_gauges(void *ctx, int first, int n, struct sds_gauge *out)
{
	struct counters_bpf *b = ctx;
	size_t size = sizeof(*out) * libbpf_num_possible_cpus();

	return read_range(b, b->gauges_fd, first, n, out, size);
}

static int bpf_read_split(void *ctx, int first, int n, struct sds_split_sum *out)
{
	struct counters_bpf *b = ctx;
	size_t size = sizeof(*out) * libbpf_num_possible_cpus();

	if (b->split_sums_fd < 0 || !b->split_on ||
	    !__atomic_load_n(b->split_on, __ATOMIC_RELAXED))
		return 1;
	return read_range(b, b->split_sums_fd, first, n, out, size);
}

static int bpf_read_split_hist(void *ctx, int first, int n,
			       struct sds_split_hist *out)
{
	struct counters_bpf *b = ctx;
	size_t size = sizeof(*out) * libbpf_num_possible_cpus();

	if (b->split_hist_fd < 0 || !b->split_on ||
	    !__atomic_load_n(b->split_on, __ATOMIC_RELAXED))
		return 1;
	return read_range(b, b->split_hist_fd, first, n, out, size);
}

void counters_bpf__split(struct counters_bpf *b, int sums_fd, int hist_fd,
			 const bool *on, struct counters_source *out)
{
	b->split_sums_fd = sums_fd;
	b->split_hist_fd = hist_fd;
	b->split_on = on;
	out->read_split = bpf_read_split;
	out->read_split_hist = bpf_read_split_hist;
}

int counters_bpf__source(struct counters_bpf *b, int slots_fd, int gauges_fd,
			 int cap, struct counters_source *out)
{
	memset(b, 0, sizeof(*b));
	b->slots_fd = slots_fd;
	b->gauges_fd = gauges_fd;
	b->cap = cap;
	b->split_sums_fd = -1;
	b->split_hist_fd = -1;
	/* For measuring (tools/bench): the one-key-a-syscall path. */
	b->per_key = getenv("SDS_COUNTERS_PER_KEY") != NULL;
	out->read_row = bpf_read_row;
	out->read_gauges = bpf_read_gauges;
	out->read_split = NULL;		/* counters_bpf__split() */
	out->read_split_hist = NULL;
	out->ctx = b;
	out->ncpu = libbpf_num_possible_cpus();
	return out->ncpu > 0 ? 0 : -1;
}
