// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* flags.c - create, map and write the flags region. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "flags.h"

uint64_t flags_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int flags__create(struct flags_region *f, uint64_t epoch, uint64_t tick_ns)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	long page = sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)SDS_FLAGS_ELEMS * SDS_FLAG_SIZE;
	int err;

	memset(f, 0, sizeof(*f));
	f->fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sds_flags", sizeof(__u32),
			       SDS_FLAG_SIZE, SDS_FLAGS_ELEMS, &opts);
	if (f->fd < 0)
		return -1;
	f->size = (bytes + page - 1) / page * page;
	f->mem = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	if (f->mem == MAP_FAILED) {
		err = errno;
		close(f->fd);
		f->mem = NULL;
		f->fd = -1;
		errno = err;
		return -1;
	}
	f->hdr = f->mem;
	f->hdr->magic = SDS_FLAGS_MAGIC;
	f->hdr->layout = SDS_FLAGS_LAYOUT;
	f->hdr->loader_pid = getpid();
	f->hdr->epoch = epoch;
	f->hdr->tick_interval_ns = tick_ns;
	flags__tick(f, flags_now_ns());
	return 0;
}

void flags__destroy(struct flags_region *f)
{
	if (f->mem) {
		/* Guards that still map it must see a dead loader at once. */
		__atomic_store_n(&f->hdr->tick_ns, 0, __ATOMIC_RELEASE);
		munmap(f->mem, f->size);
	}
	if (f->fd > 0)
		close(f->fd);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

int flags__client_fds(const struct flags_region *f, int fds[FLAGS_CLIENT_FDS])
{
	fds[0] = f->fd;
	return 1;
}

struct sds_flag *flags__entry(struct flags_region *f, uint32_t point)
{
	return (struct sds_flag *)((char *)f->mem + (size_t)(1 + point) * SDS_FLAG_SIZE);
}

int32_t *flags__permit(struct flags_region *f, uint32_t slot, uint32_t point)
{
	return (int32_t *)((char *)f->mem + SDS_PERMITS_OFF) +
	       SDS_PERMIT_IDX(slot, point);
}

void flags__set_kind(struct flags_region *f, uint32_t point, uint32_t kind)
{
	flags__entry(f, point)->point_kind = kind;
	if (point + 1 > f->hdr->npoints)
		f->hdr->npoints = point + 1;
}

void flags__publish(struct flags_region *f, uint32_t point,
		    const struct flag_state *st)
{
	struct sds_flag *e = flags__entry(f, point);
	uint32_t seq = e->seq;

	__atomic_store_n(&e->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	e->reason = st->reason;
	e->rate = st->rate;
	e->expires_ns = st->expires_ns;
	e->concurrent_limit = st->concurrent_limit;
	e->token_interval_ns = st->token_interval_ns;
	e->token_burst_ns = st->token_burst_ns;
	e->probe_interval_ns = st->probe_interval_ns;
	/* Line 3: only when it changes, so its counters' line stays quiet. */
	if (e->drill_kind != st->drill_kind || e->drill_ratio != st->drill_ratio ||
	    e->drill_delay_ns != st->drill_delay_ns ||
	    e->drill_expires_ns != st->drill_expires_ns) {
		e->drill_kind = st->drill_kind;
		e->drill_ratio = st->drill_ratio;
		e->drill_delay_ns = st->drill_delay_ns;
		e->drill_expires_ns = st->drill_expires_ns;
	}
	__atomic_store_n(&e->active, st->active, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
}

void flags__tick(struct flags_region *f, uint64_t now_ns)
{
	__atomic_store_n(&f->hdr->tick_ns, now_ns, __ATOMIC_RELEASE);
}

void flags__release_slot(struct flags_region *f, uint32_t slot)
{
	uint32_t p;

	for (p = 0; p < SDS_MAX_POINTS; p++) {
		int32_t *held = flags__permit(f, slot, p);
		int32_t n = __atomic_exchange_n(held, 0, __ATOMIC_ACQ_REL);

		if (n)
			__atomic_fetch_sub(&flags__entry(f, p)->permits, n,
					   __ATOMIC_ACQ_REL);
	}
}
