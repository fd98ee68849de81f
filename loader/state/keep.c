// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * keep.c - the loader's state kept in a pinned BPF array (keep.h).
 *
 * The map is one mmapable array of pages: the header in the first page,
 * then copy 0 and copy 1, each a struct keep_app and max_points records.
 * keep__commit() fills the copy not in force from the loader's own
 * memory and then stores its number in hdr->active (release): the other
 * copy, the one in force until then, is never written while it is.
 * What a record holds comes from the modules' own structs, and each
 * module saves and restores its own part (counters__save, engine__save,
 * flags__save, uplink__save and their __restore): keep.c lays the copies
 * out and copies nothing of another module's.  The structs' sizes are in
 * the header, so a build whose structs differ finds the pins stale
 * instead of misreading them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "state/keep.h"
#include "decide/engine_eval.h"
#include "kernel/counters.h"
#include "kernel/probes.h"
#include "publish/flags.h"
#include "report/uplink.h"

#define KEEP_PAGE	4096	/* the map's value size: one page */

/* The app's part of one copy. */
struct keep_app {
	uint32_t npoints;		/* point ids in use */
	uint32_t uplink;		/* 1: @up is set */
	struct uplink_kept up;		/* uplink: closed and open periods */
};

/* One point id's part of one copy. */
struct keep_point {
	char name[SDS_NAME_MAX + 1];	/* its name */
	uint32_t kind;			/* enum point_kind */
	struct point_acc acc;		/* counters: totals up to a second */
	struct point_run run;		/* engine: chain, window reset, drill */
	struct cell_counts cells;	/* flags: the guards' counts as the loader counted them */
	struct uplink_kept_point up;	/* uplink: histogram marks, drills seen, open periods' sums */
};

static size_t copy_size(void)
{
	size_t n = sizeof(struct keep_app) +
		   (size_t)SDS_MAX_POINTS * sizeof(struct keep_point);

	return (n + 63) / 64 * 64;
}

static struct keep_app *copy_app(const struct keep *k, uint32_t i)
{
	return (struct keep_app *)((char *)k->mem + KEEP_PAGE + i * k->copy_size);
}

static struct keep_point *copy_points(const struct keep *k, uint32_t i)
{
	return (struct keep_point *)(copy_app(k, i) + 1);
}

/* Map @fd's whole value area read-write. */
static int keep_map(struct keep *k, int fd)
{
	k->fd = fd;
	k->copy_size = copy_size();
	k->size = ((KEEP_PAGE + 2 * k->copy_size) + KEEP_PAGE - 1) /
		  KEEP_PAGE * KEEP_PAGE;
	k->mem = mmap(NULL, k->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (k->mem == MAP_FAILED) {
		k->mem = NULL;
		return -1;
	}
	k->hdr = k->mem;
	return 0;
}

int keep__create(struct keep *k, const struct pins *p,
		 const struct keep_header *id, const char *target,
		 uint32_t atomics, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	size_t pages = (KEEP_PAGE + 2 * copy_size() + KEEP_PAGE - 1) / KEEP_PAGE;
	char path[512];
	int fd;

	memset(k, 0, sizeof(*k));
	k->fd = -1;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sds_keep", sizeof(__u32),
			    KEEP_PAGE, pages, &opts);
	if (fd < 0 || keep_map(k, fd)) {
		snprintf(err, errlen, "creating the kept state: %s", strerror(errno));
		goto fail;
	}
	k->hdr->magic = KEEP_MAGIC;
	k->hdr->layout = KEEP_LAYOUT;
	k->hdr->max_points = SDS_MAX_POINTS;
	k->hdr->hdr_size = sizeof(struct keep_header);
	k->hdr->app_size = sizeof(struct keep_app);
	k->hdr->point_size = sizeof(struct keep_point);
	k->hdr->target_dev = id->target_dev;
	k->hdr->target_ino = id->target_ino;
	snprintf(k->hdr->target, sizeof(k->hdr->target), "%s", target);
	snprintf(k->hdr->group, sizeof(k->hdr->group), "%s", id->group);
	snprintf(k->hdr->app, sizeof(k->hdr->app), "%s", id->app);
	k->hdr->key = id->key;
	k->hdr->epoch = id->epoch;
	k->hdr->atomics = atomics;
	k->hdr->loader_pid = getpid();
	k->hdr->sec_offset_ns = id->sec_offset_ns;
	k->hdr->wall_offset = id->wall_offset;
	if (pins__path(p, KEEP_PIN, path, sizeof(path)) || bpf_obj_pin(fd, path)) {
		snprintf(err, errlen, "pinning the kept state in %s: %s", p->dir,
			 strerror(errno));
		goto fail;
	}
	return 0;
fail:
	keep__close(k);
	return -1;
}

/* Is the header one this build wrote?  Else why not, in @why. */
static bool header_ok(const struct keep_header *h, char *why, size_t whylen)
{
	if (h->magic != KEEP_MAGIC || h->layout != KEEP_LAYOUT ||
	    h->max_points != SDS_MAX_POINTS ||
	    h->hdr_size != sizeof(struct keep_header) ||
	    h->app_size != sizeof(struct keep_app) ||
	    h->point_size != sizeof(struct keep_point)) {
		snprintf(why, whylen, "layout %u, this sds-bpf keeps layout %u",
			 h->magic == KEEP_MAGIC ? h->layout : 0, KEEP_LAYOUT);
		return false;
	}
	if (h->active > 1 || !h->commits) {
		snprintf(why, whylen, "its kept state was never completed");
		return false;
	}
	return true;
}

/*
 * Map the kept state pinned in @p's directory if it is this build's: 0;
 * 1 (stale: why in @why) when it is not; -1 when it cannot be read.
 */
static int keep_open_map(struct keep *k, const struct pins *p, char *why,
			 size_t whylen)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[512];
	int fd;

	memset(k, 0, sizeof(*k));
	k->fd = -1;
	if (pins__path(p, KEEP_PIN, path, sizeof(path)))
		return snprintf(why, whylen, "name too long"), -1;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return snprintf(why, whylen, "no kept state (%s)", strerror(errno)), 1;
	/* Only what we create: an mmapable array of our size. */
	if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.type != BPF_MAP_TYPE_ARRAY || info.value_size != KEEP_PAGE ||
	    !(info.map_flags & BPF_F_MMAPABLE) ||
	    (size_t)info.max_entries * KEEP_PAGE <
		(KEEP_PAGE + 2 * copy_size() + KEEP_PAGE - 1) / KEEP_PAGE * KEEP_PAGE) {
		close(fd);
		return snprintf(why, whylen, "its kept state has another shape (another layout)"), 1;
	}
	if (keep_map(k, fd)) {
		snprintf(why, whylen, "mapping the kept state: %s", strerror(errno));
		keep__close(k);
		return -1;
	}
	if (!header_ok(k->hdr, why, whylen)) {
		keep__close(k);
		return 1;
	}
	return 0;
}

int keep__open(struct keep *k, const struct pins *p, dev_t dev, ino_t ino,
	       char *why, size_t whylen)
{
	int r = keep_open_map(k, p, why, whylen);

	if (r)
		return r;
	if (k->hdr->target_dev != (uint64_t)dev || k->hdr->target_ino != (uint64_t)ino) {
		snprintf(why, whylen, "their TARGET %.200s is gone (not the file there now)",
			 k->hdr->target);
		keep__close(k);
		return 1;
	}
	return 0;
}

int keep__peek(const char *dir, struct keep_header *out)
{
	char why[256];
	struct pins p;
	struct keep k;

	if (snprintf(p.dir, sizeof(p.dir), "%s", dir) >= (int)sizeof(p.dir) ||
	    keep_open_map(&k, &p, why, sizeof(why)))
		return -1;
	*out = *k.hdr;
	out->target[KEEP_TARGET_MAX - 1] = '\0';
	out->group[SDS_NAME_MAX] = '\0';
	out->app[SDS_NAME_MAX] = '\0';
	keep__close(&k);
	return 0;
}

void keep__set_target(struct keep *k, dev_t dev, ino_t ino, const char *path)
{
	if (!k->hdr)
		return;
	k->hdr->target_dev = dev;
	k->hdr->target_ino = ino;
	snprintf(k->hdr->target, sizeof(k->hdr->target), "%s", path);
}

bool keep__points_match(const struct keep *k, const struct probes *p, int n,
			char *why, size_t whylen)
{
	const struct keep_app *a = copy_app(k, k->hdr->active);
	const struct keep_point *kp = copy_points(k, k->hdr->active);
	int i;

	if (a->npoints > SDS_MAX_POINTS || (int)a->npoints < n)
		return snprintf(why, whylen, "they hold %u points, this attach names %d",
				a->npoints, n), false;
	for (i = 0; i < n; i++)
		if (kp[i].kind != POINT_FUNCTION ||
		    strncmp(kp[i].name, p->pts[i].spec.name, SDS_NAME_MAX + 1))
			return snprintf(why, whylen, "point %d is '%.64s' there, '%s' here",
					i, kp[i].name, p->pts[i].spec.name), false;
	for (; i < (int)a->npoints; i++)
		if (kp[i].kind != POINT_GUARD)
			return snprintf(why, whylen, "they hold function point '%.64s', which this attach does not name",
					kp[i].name), false;
	return true;
}

void keep__set_owners(struct keep *k, const struct keep_owners *o)
{
	k->own = *o;
}

void keep__commit(struct keep *k)
{
	const struct keep_owners *o;
	struct keep_app *a;
	struct keep_point *kp;
	uint32_t next;
	int i, n;

	if (!k || !k->hdr)
		return;
	o = &k->own;
	next = !__atomic_load_n(&k->hdr->active, __ATOMIC_RELAXED);
	/* Before the first commit neither copy is in force: write copy 0. */
	if (!k->hdr->commits)
		next = 0;
	a = copy_app(k, next);
	kp = copy_points(k, next);
	n = o->probes->npoints;
	memset(a, 0, sizeof(*a));
	a->npoints = n;
	for (i = 0; i < n; i++) {
		memcpy(kp[i].name, o->probes->pts[i].spec.name, sizeof(kp[i].name));
		kp[i].kind = o->probes->pts[i].kind;
		/* Each owner saves its own part. */
		counters__save(o->counters, i, &kp[i].acc);
		o->save_run(o->run_ctx, i, &kp[i].run);
		flags__save(o->flags, i, &kp[i].cells);
	}
	if (*o->uplink) {
		a->uplink = 1;
		uplink__save(*o->uplink, n, &a->up, &kp[0].up, sizeof(*kp));
	}
	/* The copy is whole before it is in force. */
	__atomic_store_n(&k->hdr->active, next, __ATOMIC_RELEASE);
	__atomic_store_n(&k->hdr->commits, k->hdr->commits + 1, __ATOMIC_RELEASE);
}

/*
 * The kernel's ring holds SDS_RING_SLOTS seconds: a loader that comes
 * back later than that finds the oldest unfolded seconds overwritten.
 * Say so, once: the totals then lack those seconds.
 */
static void keep_gap_say(uint64_t folded_sec)
{
	uint64_t now = counters_now_sec();

	if (folded_sec && now > folded_sec + SDS_RING_SLOTS)
		fprintf(stderr, "sds-bpf: adopting kept state %llu s old: the kernel keeps %d s of counts, the calls of the %llu s before are not counted\n",
			(unsigned long long)(now - folded_sec), SDS_RING_SLOTS,
			(unsigned long long)(now - folded_sec - SDS_RING_SLOTS));
}

void keep__restore(struct keep *k)
{
	const struct keep_owners *o = &k->own;
	const struct keep_app *a = copy_app(k, k->hdr->active);
	const struct keep_point *kp = copy_points(k, k->hdr->active);
	int i, n = a->npoints;

	for (i = o->probes->npoints; i < n; i++) {
		char name[SDS_NAME_MAX + 1];

		memcpy(name, kp[i].name, sizeof(name));
		name[SDS_NAME_MAX] = '\0';
		/* Ids are kept: the guard points come back in their order. */
		if (probes__add_guard(o->probes, name) != i)
			break;
		flags__set_kind(o->flags, i, POINT_GUARD);
	}
	n = o->probes->npoints;
	counters__track(o->counters, n);
	keep_gap_say(n ? kp[0].acc.folded_sec : 0);
	for (i = 0; i < n; i++) {
		counters__restore(o->counters, i, &kp[i].acc);
		o->restore_run(o->run_ctx, i, &kp[i].run);
		flags__restore(o->flags, i, &kp[i].cells);
	}
	if (*o->uplink && a->uplink)
		uplink__restore(*o->uplink, n, &a->up, &kp[0].up, sizeof(*kp));
}

void keep__close(struct keep *k)
{
	if (k->mem)
		munmap(k->mem, k->size);
	if (k->fd >= 0)
		close(k->fd);
	memset(k, 0, sizeof(*k));
	k->fd = -1;
}
