// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * flags.c - create, map and write the flags region; read its cells as
 * input from untrusted clients (docs/PROTOCOL.md, "Flags region";
 * docs/TRUST.md).
 *
 * This file is the region's one writer in the loader: every store into
 * the flags map and the cells map (and into the loader's own counts of
 * them) is here, behind a setter that names what it writes and in which
 * order.  The region is the ABI libsds reads, and its orders matter (an
 * entry under its sequence counter, the exact marks before the entry's
 * SDS_ACT_BUDGET, a half-open phase's start before its claims): with one
 * writer, those orders and the layout are checked in one place, and
 * flags__entry()/flags__cell() hand the rest of the loader read-only
 * pointers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "publish/flags.h"

#define LD(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)

uint64_t flags_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* An mmapable array of @n elements of @size bytes, mapped read-write. */
static int map_create(const char *name, uint32_t size, uint32_t n, size_t *bytes,
		      void **mem)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	long page = sysconf(_SC_PAGESIZE);
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, name, sizeof(__u32), size, n, &opts);
	if (fd < 0)
		return -1;
	*bytes = ((size_t)size * n + page - 1) / page * page;
	*mem = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*mem == MAP_FAILED) {
		err = errno;
		close(fd);
		*mem = NULL;
		errno = err;
		return -1;
	}
	return fd;
}

/*
 * The flags region: a sealed memfd, not a BPF map.  Linux maps a file
 * that was not opened for writing with VM_SHARED cleared, and a BPF map
 * refuses any mapping without VM_SHARED (EINVAL): a BPF_F_RDONLY map fd
 * cannot be mapped at all.  A memfd can: the loader maps it read-write,
 * then seals it (F_SEAL_FUTURE_WRITE: no new writable mapping, write(2)
 * or hole punch by anyone, whatever fd; no resize; no unsealing) and
 * hands out an O_RDONLY reopening of it, mode 0444 and root's, so a
 * client can neither map it writable (EACCES), mprotect its mapping to
 * write (EACCES), nor reopen it for writing.
 */
static int flags_memfd(size_t bytes, void **mem, int *ro_fd)
{
	const int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE |
			  F_SEAL_SEAL;
	char path[64];
	int fd, err;

	*mem = NULL;
	*ro_fd = -1;
	fd = memfd_create("sds_flags", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, bytes) || fchmod(fd, 0444))
		goto fail;
	*mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*mem == MAP_FAILED) {
		*mem = NULL;
		goto fail;
	}
	if (fcntl(fd, F_ADD_SEALS, seals))
		goto fail;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	*ro_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*ro_fd < 0)
		goto fail;
	return fd;
fail:
	err = errno;
	if (*mem)
		munmap(*mem, bytes);
	*mem = NULL;
	close(fd);
	errno = err;
	return -1;
}

int flags__create(struct flags_region *f, uint64_t epoch, uint64_t tick_ns)
{
	long page = sysconf(_SC_PAGESIZE);
	int err;

	memset(f, 0, sizeof(*f));
	f->ro_fd = f->cells_fd = -1;
	/* The entries and the blocked-key tables: pages only where written. */
	f->size = ((size_t)SDS_FLAGS_BYTES + page - 1) / page * page;
	f->fd = flags_memfd(f->size, &f->mem, &f->ro_fd);
	if (f->fd < 0)
		goto fail;
	f->cells_fd = map_create("sds_cells", SDS_CELL_SIZE, SDS_CELLS_ELEMS,
				 &f->cells_size, &f->cells);
	if (f->cells_fd < 0)
		goto fail;
	f->hdr = f->mem;
	f->hdr->magic = SDS_FLAGS_MAGIC;
	f->hdr->layout = SDS_FLAGS_LAYOUT;
	f->hdr->loader_pid = getpid();
	f->hdr->epoch = epoch;
	f->hdr->tick_interval_ns = tick_ns;
	flags__tick(f, flags_now_ns());
	return 0;
fail:
	err = errno;
	flags__destroy(f);
	errno = err;
	return -1;
}

/* Cell @point of the cells mapped at @cells. */
static struct sds_cell *cell_at(void *cells, uint32_t point)
{
	return (struct sds_cell *)((char *)cells + (size_t)point * SDS_CELL_SIZE);
}

/* Process @slot's permit row for @point in the cells mapped at @cells. */
/* Point @point's entry, writable: only this file writes one. */
static struct sds_flag *entry_at(const struct flags_region *f, uint32_t point)
{
	return (struct sds_flag *)((char *)f->mem + (size_t)(1 + point) * SDS_FLAG_SIZE);
}

static int32_t *permit_at(void *cells, uint32_t slot, uint32_t point)
{
	return (int32_t *)((char *)cells + SDS_PERMITS_OFF) +
	       SDS_PERMIT_IDX(slot, point);
}

static void own_free(struct flags_region *f, int i)
{
	struct flags_own *o = f->own[i];

	if (!o)
		return;
	if (o->cells)
		munmap(o->cells, f->cells_size);
	if (o->fd >= 0)
		close(o->fd);
	free(o);
	f->own[i] = NULL;
}

/*
 * A memfd, not a BPF map: nothing in the kernel counts into these cells
 * (bpf/sds.bpf.c writes the shared map), and a memfd costs only the
 * pages its guards touch.  The processes it is sent to run as one uid.
 * Sealed against resizing: a client that could shrink it would have the
 * loader's next repair of it fault (SIGBUS).
 */
static struct flags_own *own_new(struct flags_region *f, uid_t uid)
{
	const int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	struct flags_own *o = calloc(1, sizeof(*o));
	uint32_t p;
	int err;

	if (!o)
		return NULL;
	o->uid = uid;
	/* New cells start full, as the shared ones did: no reset owed. */
	for (p = 0; p < SDS_MAX_POINTS; p++)
		o->gen[p] = LD(entry_at(f, p)->gen);
	o->fd = memfd_create("sds_cells_own", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (o->fd < 0 || ftruncate(o->fd, f->cells_size) ||
	    fcntl(o->fd, F_ADD_SEALS, seals))
		goto fail;
	o->cells = mmap(NULL, f->cells_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			o->fd, 0);
	if (o->cells == MAP_FAILED) {
		o->cells = NULL;
		goto fail;
	}
	return o;
fail:
	err = errno;
	if (o->fd >= 0)
		close(o->fd);
	free(o);
	errno = err;
	return NULL;
}

int flags__own_join(struct flags_region *f, int slot, uid_t uid)
{
	int i, free_i = -1;
	uint32_t p;

	if (slot < 0 || slot >= SDS_MAX_PROCS)
		return errno = EINVAL, -1;
	flags__release_slot(f, slot);
	for (i = 0; i < FLAGS_OWN_MAX; i++) {
		if (!f->own[i]) {
			if (free_i < 0)
				free_i = i;
			continue;
		}
		if (f->own[i]->uid == uid)
			break;
	}
	if (i == FLAGS_OWN_MAX) {
		/* At most one per session: a slot is always free here. */
		if (free_i < 0 || !(f->own[free_i] = own_new(f, uid))) {
			f->own_of[slot] = FLAGS_OWN_NONE;
			return -1;
		}
		i = free_i;
	}
	f->own[i]->slots |= 1ULL << slot;
	f->own_of[slot] = i + 1;
	/* A row an earlier session of this uid left in the slot is stale. */
	for (p = 0; p < SDS_MAX_POINTS; p++)
		__atomic_store_n(permit_at(f->own[i]->cells, slot, p), 0,
				 __ATOMIC_RELAXED);
	return 0;
}

void flags__destroy(struct flags_region *f)
{
	int i;

	if (f->mem) {
		/* Guards that still map it must see a dead loader at once. */
		__atomic_store_n(&((struct sds_flags_header *)f->mem)->tick_ns, 0,
				 __ATOMIC_RELEASE);
		munmap(f->mem, f->size);
	}
	for (i = 0; i < FLAGS_OWN_MAX; i++)
		own_free(f, i);
	if (f->cells)
		munmap(f->cells, f->cells_size);
	if (f->fd > 0)
		close(f->fd);
	if (f->ro_fd > 0)
		close(f->ro_fd);
	if (f->cells_fd > 0)
		close(f->cells_fd);
	memset(f, 0, sizeof(*f));
	f->fd = f->ro_fd = f->cells_fd = -1;
}

int flags__client_fds(const struct flags_region *f, int slot,
		      int fds[FLAGS_CLIENT_FDS])
{
	uint8_t own = slot >= 0 && slot < SDS_MAX_PROCS ? f->own_of[slot] : 0;

	/* Closed for privilege: no own cells, not the shared ones either. */
	if (own == FLAGS_OWN_NONE || (own && !f->own[own - 1]))
		return 0;
	fds[0] = f->ro_fd;
	fds[1] = own ? f->own[own - 1]->fd : f->cells_fd;
	return 2;
}

const struct sds_flag *flags__entry(const struct flags_region *f,
				    uint32_t point)
{
	return entry_at(f, point);
}

const struct sds_cell *flags__cell(const struct flags_region *f,
				   uint32_t point)
{
	return cell_at(f->cells, point);
}

void flags__set_kind(struct flags_region *f, uint32_t point, uint32_t kind)
{
	entry_at(f, point)->point_kind = kind;
	if (point + 1 > f->hdr->npoints)
		f->hdr->npoints = point + 1;
}

void flags__publish(struct flags_region *f, uint32_t point,
		    const struct flag_state *st)
{
	struct sds_flag *e = entry_at(f, point);
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
	e->drill_kind = st->drill_kind;
	e->drill_ratio = st->drill_ratio;
	/* drill.c refuses longer ones; the guards clamp as well. */
	e->drill_delay_ns = st->drill_delay_ns < SDS_DRILL_DELAY_MAX_NS ?
			    st->drill_delay_ns : SDS_DRILL_DELAY_MAX_NS;
	e->drill_expires_ns = st->drill_expires_ns;
	__atomic_store_n(&e->active, st->active, __ATOMIC_RELAXED);
	__atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
}

/*
 * One aligned store, no sequence counter: the switch is a hint, read on
 * its own, and a guard that reads it stale makes one copy more (the site
 * is called, and the BPF side's own config still decides) or one less.
 */
void flags__set_copy(struct flags_region *f, int point, bool on)
{
	if (point < 0 || point >= SDS_MAX_POINTS)
		return;
	__atomic_store_n(&entry_at(f, point)->copy, on ? 1u : 0u,
			 __ATOMIC_RELAXED);
}

void flags__tick(struct flags_region *f, uint64_t now_ns)
{
	__atomic_store_n(&f->hdr->tick_ns, now_ns, __ATOMIC_RELEASE);
}

void flags__init(struct flags_region *f)
{
	f->fd = -1;
}

void flags__set_probe(struct flags_region *f, uint32_t point,
		      uint64_t next_probe_ns)
{
	__atomic_store_n(&cell_at(f->cells, point)->next_probe_ns, next_probe_ns,
			 __ATOMIC_RELEASE);
}

void flags__set_probe_calls(struct flags_region *f, uint32_t point,
			    uint32_t calls)
{
	__atomic_store_n(&entry_at(f, point)->probe_calls, calls,
			 __ATOMIC_RELAXED);
}

void flags__open_phase(struct flags_region *f, uint32_t point,
		       uint64_t next_probe_ns, uint64_t claimed)
{
	struct sds_cell *c = cell_at(f->cells, point);

	__atomic_store_n(&c->next_probe_ns, next_probe_ns, __ATOMIC_RELEASE);
	__atomic_store_n(&c->probe_claimed, claimed, __ATOMIC_RELEASE);
}

void flags__reset_cell(struct flags_region *f, uint32_t point)
{
	struct sds_cell *c = cell_at(f->cells, point);

	__atomic_store_n(&c->tat_ns, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&c->next_probe_ns, 0, __ATOMIC_RELEASE);
	__atomic_fetch_add(&entry_at(f, point)->gen, 1, __ATOMIC_RELEASE);
}

void flags__set_marks(struct flags_region *f, uint32_t point,
		      uint64_t visit_upto, uint64_t exc_upto, uint64_t slow_upto)
{
	struct sds_flag *e = entry_at(f, point);

	__atomic_store_n(&e->visit_upto, visit_upto, __ATOMIC_RELEASE);
	__atomic_store_n(&e->exc_upto, exc_upto, __ATOMIC_RELEASE);
	__atomic_store_n(&e->slow_upto, slow_upto, __ATOMIC_RELEASE);
}

/* The cell word the crossing of @reason is stamped in; NULL: none. */
static __u64 *cross_word(struct sds_cell *c, uint32_t reason)
{
	switch (reason) {
	case SDS_REASON_VISIT:
		return &c->visit_cross_ns;
	case SDS_REASON_EXCEPTION:
		return &c->exc_cross_ns;
	case SDS_REASON_TIMEOUT:
		return &c->slow_cross_ns;
	}
	return NULL;
}

uint64_t flags__cross(const struct flags_region *f, uint32_t point,
		      uint32_t reason)
{
	__u64 *w = cross_word(cell_at(f->cells, point), reason);

	return w ? LD(*w) : 0;
}

void flags__clear_cross(struct flags_region *f, uint32_t point,
			uint32_t reason)
{
	__u64 *w = cross_word(cell_at(f->cells, point), reason);

	if (w)
		__atomic_store_n(w, 0, __ATOMIC_RELAXED);
}

void flags__forget_cross(struct flags_region *f, uint32_t point,
			 uint32_t reason, uint64_t seen)
{
	__u64 *w = cross_word(cell_at(f->cells, point), reason);
	__u64 s = seen;

	if (w)
		__atomic_compare_exchange_n(w, &s, 0, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
}

void flags__set_lb(struct flags_region *f, uint32_t point, uint32_t inflight,
		   uint32_t latency_ns)
{
	struct sds_flag *e = entry_at(f, point);

	__atomic_store_n(&e->lb_inflight, inflight, __ATOMIC_RELAXED);
	__atomic_store_n(&e->lb_latency_ns, latency_ns, __ATOMIC_RELAXED);
}

/* Add what counter @cur grew by since @seen to @total, if a guard could have. */
static void count_fold(uint64_t cur, uint64_t *seen, uint64_t *total)
{
	uint64_t d = cur - *seen;

	*seen = cur;
	if (d > FLAGS_DELTA_MAX)
		return;		/* went back, or leapt: forged, counts nothing */
	*total = *total + d < *total ? UINT64_MAX : *total + d;
}

const struct cell_counts *flags__counts(struct flags_region *f, uint32_t point)
{
	const struct sds_cell *c = flags__cell(f, point);
	struct cell_counts *s = &f->seen[point], *t = &f->totals[point];

	count_fold(LD(c->probes_ok), &s->probes_ok, &t->probes_ok);
	count_fold(LD(c->probes_failed), &s->probes_failed, &t->probes_failed);
	count_fold(LD(c->refused_concurrent), &s->refused_concurrent,
		   &t->refused_concurrent);
	count_fold(LD(c->refused_token), &s->refused_token, &t->refused_token);
	count_fold(LD(c->drill_faults), &s->drill_faults, &t->drill_faults);
	count_fold(LD(c->drill_delays), &s->drill_delays, &t->drill_delays);
	return t;
}

void flags__save(const struct flags_region *f, uint32_t point,
		 struct cell_counts *out)
{
	*out = f->totals[point];
}

void flags__restore(struct flags_region *f, uint32_t point,
		    const struct cell_counts *in)
{
	f->totals[point] = *in;
	/* The cells are new: the guards count from 0 in them. */
	memset(&f->seen[point], 0, sizeof(f->seen[point]));
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/*
 * Set @cell from @old to @new unless a guard changed it meanwhile (then
 * it is the guard's fresh value, which the next tick checks again).
 */
static void cas_u64(__u64 *cell, __u64 old, __u64 new)
{
	__atomic_compare_exchange_n(cell, &old, new, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_RELAXED);
}

/*
 * The permits of @point in the cells at @cells against what the live
 * processes that map them (bit s of @live: slot s) can be holding.
 */
/* The permits the live sessions' rows say they hold. */
static int64_t permit_rows(void *cells, uint32_t point, uint64_t live)
{
	int64_t rows = 0;
	uint32_t s;

	for (s = 0; s < SDS_MAX_PROCS; s++) {
		int32_t n;

		if (!(live >> s & 1))
			continue;
		n = LD(*permit_at(cells, s, point));
		if (n > 0)
			rows += n;
	}
	return rows;
}

/*
 * Permits that no live session holds go back: a dead process's, or
 * forged ones.  Honest guards raise their row before a permit and lower
 * it after, so permits above the rows are an excess only when the rows
 * did not move while the permits were read: under contention a guard is
 * always between its row and its permit, and a verdict on a moving read
 * took a holder's permit away (a limit of 1 let 2 in).  Permits above the
 * limit no guard can have taken: forged, like the rows then may be, so
 * the kernel's count of calls in flight (@inflight, < 0: unknown) bounds
 * them instead.
 */
static void permits_repair(void *cells, uint8_t *excess, uint32_t point,
			   uint64_t live, int64_t limit, int64_t inflight)
{
	struct sds_cell *c = cell_at(cells, point);
	int64_t p = LD(c->permits), rows, again, cap;

	if (p <= 0) {
		*excess = 0;
		/* Below 0 only if given back twice (a forged or stale row). */
		if (p < 0)
			cas_u64((__u64 *)&c->permits, (__u64)p, 0);
		return;
	}
	rows = permit_rows(cells, point, live);
	p = LD(c->permits);
	again = permit_rows(cells, point, live);
	if (limit >= 0 && p <= limit) {
		/* A guard moved meanwhile: no verdict this tick. */
		if (rows != again)
			return;
		cap = rows;
	} else {
		cap = inflight >= 0 && inflight < again ? inflight : again;
	}
	if (p <= cap) {
		*excess = 0;
		return;
	}
	/*
	 * A call between its permit and its entry site is not in flight
	 * yet: one tick's excess may be honest, two in a row are not.
	 */
	if (++*excess < 2)
		return;
	*excess = 0;
	cas_u64((__u64 *)&c->permits, (__u64)p, (__u64)cap);
}

/* The times and permits of @point in the cells at @cells. */
static void cell_repair(void *cells, uint8_t *excess, uint32_t point,
			const struct flag_state *st, uint64_t now_ns,
			uint64_t live, int64_t inflight)
{
	struct sds_cell *c = cell_at(cells, point);
	uint64_t tat = LD(c->tat_ns), next = LD(c->next_probe_ns);

	/* GCRA never puts tat more than a bucket past a guard's now. */
	if (tat > sat_add(sat_add(now_ns, st->token_burst_ns), FLAGS_TIME_SLACK_NS))
		cas_u64(&c->tat_ns, tat, 0);
	/* A probe claim moves it one interval past a guard's now. */
	if (next > sat_add(sat_add(now_ns, st->probe_interval_ns), FLAGS_TIME_SLACK_NS))
		cas_u64(&c->next_probe_ns, next, now_ns + st->probe_interval_ns);
	permits_repair(cells, excess, point, live,
		       st->active & SDS_ACT_CONCURRENT ? (int64_t)st->concurrent_limit : -1,
		       inflight);
}

/*
 * What the loader writes in the shared cells of @point on its own (a new
 * strategy's full bucket, a hold's first probe one interval on, a
 * half-open phase), done in @o too, from what only the loader writes: the
 * entry's gen, the published state, the shared phase's tag.
 */
static void own_follow(struct flags_region *f, struct flags_own *o,
		       uint32_t point, const struct flag_state *st,
		       uint64_t now_ns)
{
	struct sds_cell *c = cell_at(o->cells, point);
	const struct sds_cell *sc = cell_at(f->cells, point);
	uint32_t gen = LD(entry_at(f, point)->gen);
	uint64_t claimed = LD(sc->probe_claimed);
	bool hold = st->active & SDS_ACT_PROBE;

	if (gen != o->gen[point]) {
		o->gen[point] = gen;
		__atomic_store_n(&c->tat_ns, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&c->next_probe_ns, 0, __ATOMIC_RELEASE);
	}
	if (hold && !o->hold[point])
		__atomic_store_n(&c->next_probe_ns, now_ns + st->probe_interval_ns,
				 __ATOMIC_RELEASE);
	o->hold[point] = hold;
	if ((st->active & SDS_ACT_HALFOPEN) && claimed >> 32 != o->tag[point]) {
		o->tag[point] = claimed >> 32;
		/* The start, then the count (release): as halfopen_cells.c. */
		__atomic_store_n(&c->next_probe_ns, LD(sc->next_probe_ns),
				 __ATOMIC_RELEASE);
		__atomic_store_n(&c->probe_claimed, claimed & ~0xffffffffULL,
				 __ATOMIC_RELEASE);
	}
}

void flags__repair(struct flags_region *f, uint32_t point,
		   const struct flag_state *st, uint64_t now_ns,
		   uint64_t live, int64_t inflight)
{
	uint64_t own_slots = 0;
	int i;

	for (i = 0; i < FLAGS_OWN_MAX; i++) {
		struct flags_own *o = f->own[i];

		if (!o)
			continue;
		own_slots |= o->slots;
		own_follow(f, o, point, st, now_ns);
		/* The kernel's count is every process's: it bounds these too. */
		cell_repair(o->cells, &o->excess[point], point, st, now_ns,
			    live & o->slots, inflight);
	}
	cell_repair(f->cells, &f->excess[point], point, st, now_ns,
		    live & ~own_slots, inflight);
}

void flags__release_slot(struct flags_region *f, uint32_t slot)
{
	uint8_t own = slot < SDS_MAX_PROCS ? f->own_of[slot] : 0;
	struct flags_own *o = own && own != FLAGS_OWN_NONE ? f->own[own - 1] : NULL;
	void *cells = o ? o->cells : f->cells;
	uint32_t p;
	int i;

	if (slot >= SDS_MAX_PROCS)
		return;
	for (p = 0; p < SDS_MAX_POINTS; p++) {
		int32_t *held = permit_at(cells, slot, p);
		int32_t n = __atomic_exchange_n(held, 0, __ATOMIC_ACQ_REL);
		struct sds_cell *c;
		int64_t cur, want;

		if (n <= 0)
			continue;
		c = cell_at(cells, p);
		cur = LD(c->permits);
		/* Bounded: a client rewriting the cell cannot keep us here. */
		for (i = 0; i < 64; i++) {
			want = cur > n ? cur - n : 0;
			if (cur <= 0 ||
			    __atomic_compare_exchange_n(&c->permits, &cur, want, false,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				break;
		}
	}
	f->own_of[slot] = 0;
	if (!o)
		return;
	o->slots &= ~(1ULL << slot);
	/* Its guards may still map it: their mapping keeps it, ours goes. */
	if (!o->slots)
		own_free(f, own - 1);
}

/* ---- hot keys: the blocked-key tables (bpf/sds_flags.h) ---- */

static struct sds_key_table *key_table_at(const struct flags_region *f,
					  uint32_t point)
{
	return (struct sds_key_table *)((char *)f->mem + SDS_KEY_TABLE_OFF(point));
}

/* Slot @i of @hash's window in @t (as the guard reads it, sds_guard_key_blocked). */
static struct sds_keyblock_slot *key_slot(struct sds_key_table *t, uint64_t hash,
				     unsigned int i)
{
	uint32_t home = (uint32_t)hash & (SDS_KEY_BLOCK_SLOTS - 1) &
			~(uint32_t)(SDS_KEY_BLOCK_GROUP - 1);

	return &t->slot[(home + i) & (SDS_KEY_BLOCK_SLOTS - 1)];
}

int flags__key_block(struct flags_region *f, uint32_t point, uint64_t hash,
		     uint64_t until_ns)
{
	struct sds_keyblock_slot *s, *free_slot = NULL;
	struct sds_key_table *t;
	unsigned int i;

	if (point >= SDS_MAX_POINTS || !hash) {
		errno = EINVAL;
		return -1;
	}
	t = key_table_at(f, point);
	for (i = 0; i < SDS_KEY_BLOCK_PROBES; i++) {
		s = key_slot(t, hash, i);
		if (LD(s->hash) == hash) {
			__atomic_store_n(&s->until_ns, until_ns, __ATOMIC_RELAXED);
			return 0;
		}
		if (!free_slot && !LD(s->hash))
			free_slot = s;
	}
	if (!free_slot) {
		errno = ENOSPC;
		return -1;
	}
	/* until_ns first: a guard that sees the hash sees this block's end. */
	__atomic_store_n(&free_slot->until_ns, until_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&free_slot->hash, hash, __ATOMIC_RELEASE);
	__atomic_store_n(&t->nblocked, LD(t->nblocked) + 1, __ATOMIC_RELEASE);
	return 0;
}

int flags__key_clear(struct flags_region *f, uint32_t point, uint64_t hash)
{
	struct sds_key_table *t;
	struct sds_keyblock_slot *s;
	unsigned int i;

	if (point >= SDS_MAX_POINTS || !hash) {
		errno = EINVAL;
		return -1;
	}
	t = key_table_at(f, point);
	for (i = 0; i < SDS_KEY_BLOCK_PROBES; i++) {
		s = key_slot(t, hash, i);
		if (LD(s->hash) != hash)
			continue;
		/* The hash first: no guard matches it with a stale end. */
		__atomic_store_n(&s->hash, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&s->until_ns, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&t->nblocked, LD(t->nblocked) - 1, __ATOMIC_RELEASE);
		return 0;
	}
	errno = ENOENT;
	return -1;
}

void flags__key_clear_all(struct flags_region *f, uint32_t point)
{
	struct sds_key_table *t;
	unsigned int i;

	if (point >= SDS_MAX_POINTS)
		return;
	t = key_table_at(f, point);
	if (!LD(t->nblocked))
		return;		/* never written: its pages stay untouched */
	__atomic_store_n(&t->nblocked, 0, __ATOMIC_RELEASE);
	for (i = 0; i < SDS_KEY_BLOCK_SLOTS; i++) {
		__atomic_store_n(&t->slot[i].hash, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&t->slot[i].until_ns, 0, __ATOMIC_RELAXED);
	}
}

uint32_t flags__key_blocked(const struct flags_region *f, uint32_t point)
{
	return point < SDS_MAX_POINTS ? LD(key_table_at(f, point)->nblocked) : 0;
}
