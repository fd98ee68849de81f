// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * probes_pin.c - the BPF side pinned under the app's pin directory
 * (pins.h), and adopted by a new loader: the maps a new load of the
 * programs reuses, and the probe links, which keep counting while no
 * loader runs.  A link adopted from its pin is the same probe: nothing
 * is detached and attached again, so no call is missed or counted twice.
 *
 * Names in the directory (bpffs refuses dots): map_<name>; thread_exit;
 * p<id>_enter, p<id>_leave, p<id>_exit<k>; catch<k>; guard_<site>
 * (TARGET's libsds sites); globals_<build> (below); keep (keep.c).
 *
 * The programs' globals (.bss: the fail-fast limits, the exact marks of
 * function points, key_wanted, the split's switch) are a map of their own
 * that each load makes anew, and the adopted links keep running the dead
 * loader's programs over *its* globals.  So the globals are pinned too,
 * under a name that says which build of the BPF object they belong to
 * (a hash of its bytes): a loader of the same build takes them over, and
 * the limits it writes reach the adopted probes; a loader of another
 * build cannot know the old layout, loads its own, and says so.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kernel/pins.h"
#include "kernel/probes.h"
#include "sds.skel.h"

/*
 * The maps a new load of the programs shares with the pinned ones, in
 * @out (NULL-terminated).  Not .rodata: each load has its own constants,
 * the same values (the kept key and clock offset).
 */
static void pinned_maps(struct sds_bpf *s, struct bpf_map **out)
{
	out[0] = s->maps.slots;
	out[1] = s->maps.gauges;
	out[2] = s->maps.point_cfg;
	out[3] = s->maps.sec_cache;
	out[4] = s->maps.frames;
	out[5] = s->maps.stuck;
	out[6] = s->maps.key_cfg;
	out[7] = s->maps.key_tables;
	out[8] = s->maps.key_counts;
	out[9] = s->maps.key_blocked;
	out[10] = NULL;
}

#define PINNED_MAPS_MAX	11

/* "globals_<16 hex>": FNV-1a of the BPF object this loader was built with. */
static void globals_name(char *buf, size_t len)
{
	static uint64_t h;
	const unsigned char *b;
	size_t n, i;

	if (!h) {
		h = 0xcbf29ce484222325ULL;
		b = sds_bpf__elf_bytes(&n);
		for (i = 0; i < n; i++)
			h = (h ^ b[i]) * 0x100000001b3ULL;
	}
	snprintf(buf, len, "globals_%016llx", (unsigned long long)h);
}

/*
 * Point pr->skel's globals at the pinned ones of this build, if @p has
 * them and they are the size this object's are; false: it loads its own.
 */
static bool globals_adopt(struct probes *pr, const struct pins *p)
{
	struct bpf_map *m = pr->skel->maps.bss;
	struct bpf_map_info info;
	uint32_t ilen = sizeof(info);
	char path[512], name[64];
	int fd, e = -1;

	globals_name(name, sizeof(name));
	if (pins__path(p, name, path, sizeof(path)))
		return false;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(fd, &info, &ilen) &&
	    info.type == BPF_MAP_TYPE_ARRAY && info.max_entries == 1 &&
	    info.value_size == bpf_map__value_size(m))
		e = bpf_map__reuse_fd(m, fd);
	close(fd);		/* reuse_fd took a duplicate */
	return e == 0;
}

/*
 * The pins of a loader from before the stuck table (bpf/sds_stuck.bpf.h)
 * have none: a new table, pinned after the load.  The adopted links run
 * the old programs, which do not fill it: their calls are never counted
 * stuck (only slow when they return) until a fresh attach.
 */
static bool pin_optional(struct sds_bpf *s, struct bpf_map *m)
{
	/* Hot keys' maps, likewise (bpf/sds_keys.bpf.h). */
	return m == s->maps.stuck || m == s->maps.key_cfg ||
	       m == s->maps.key_tables || m == s->maps.key_counts ||
	       m == s->maps.key_blocked;
}

int probes__pin_maps(struct probes *pr, const struct pins *p, char *err,
		     size_t errlen)
{
	struct bpf_map *maps[PINNED_MAPS_MAX];
	char path[512], name[64];
	int i;

	pinned_maps(pr->skel, maps);
	for (i = 0; maps[i]; i++) {
		snprintf(name, sizeof(name), "map_%s", bpf_map__name(maps[i]));
		if (pins__path(p, name, path, sizeof(path)) ||
		    bpf_obj_pin(bpf_map__fd(maps[i]), path))
			return snprintf(err, errlen, "pinning map %s in %s: %s",
					bpf_map__name(maps[i]), p->dir,
					strerror(errno)), -1;
	}
	globals_name(name, sizeof(name));
	if (pins__path(p, name, path, sizeof(path)) ||
	    bpf_obj_pin(bpf_map__fd(pr->skel->maps.bss), path))
		return snprintf(err, errlen, "pinning the programs' globals in %s: %s",
				p->dir, strerror(errno)), -1;
	return 0;
}

/* Open pinned link @name into *@link (NULL if it is not pinned). */
static void link_open(const struct pins *p, const char *name,
		      struct bpf_link **link)
{
	char path[512];

	*link = NULL;
	if (!pins__path(p, name, path, sizeof(path)))
		*link = bpf_link__open(path);
	if (!*link || libbpf_get_error(*link))
		*link = NULL;
}

/* Pin @link as @name unless it is pinned already. */
static int link_pin(const struct pins *p, const char *name,
		    struct bpf_link *link)
{
	char path[512];

	if (!link || bpf_link__pin_path(link))
		return 0;
	if (pins__path(p, name, path, sizeof(path)))
		return errno = ENAMETOOLONG, -1;
	return bpf_link__pin(link, path) ? -1 : 0;
}

/*
 * Load over the pinned maps, on the path pr->path asks for: 0, -1 with a
 * message, or 1 when the kernel refused the session program in auto mode
 * (load again: the pair this time).
 */
static int adopt_load(struct probes *pr, uint64_t key, uint64_t sec_offset_ns,
		      bool atomics, const struct pins *p, char *err,
		      size_t errlen)
{
	struct bpf_map *maps[PINNED_MAPS_MAX], *fresh[PINNED_MAPS_MAX];
	char path[512], name[64];
	int i, fd, e, nfresh = 0;

	pr->skel = sds_bpf__open();
	if (!pr->skel)
		return snprintf(err, errlen, "opening BPF object: %s",
				strerror(errno)), -1;
	/* The same constants as the programs the links hold. */
	if (probes__size_maps(pr))
		return snprintf(err, errlen, "sizing the BPF maps to %d points: %s",
				pr->cap, strerror(errno)), -1;
	pr->skel->rodata->loader_key = key;
	pr->skel->rodata->sec_offset_ns = sec_offset_ns;
	pr->skel->rodata->atomics = atomics;
	pr->atomics = atomics;
	probes__session_prepare(pr, key);
	/* The adopted links run the dead loader's programs, over its split maps. */
	snprintf(pr->split.why, sizeof(pr->split.why),
		 "adopted from a dead loader's pins: split again after a fresh attach");
	probes__split_prepare(pr);
	pr->globals_adopted = globals_adopt(pr, p);
	pinned_maps(pr->skel, maps);
	for (i = 0; maps[i]; i++) {
		snprintf(name, sizeof(name), "map_%s", bpf_map__name(maps[i]));
		fd = pins__path(p, name, path, sizeof(path)) ? -1 : bpf_obj_get(path);
		if (fd < 0 && errno == ENOENT && pin_optional(pr->skel, maps[i])) {
			fresh[nfresh++] = maps[i];
			continue;
		}
		if (fd < 0 || bpf_map__reuse_fd(maps[i], fd)) {
			e = errno;
			if (fd >= 0)
				close(fd);
			return snprintf(err, errlen, "adopting map %s in %s: %s",
					bpf_map__name(maps[i]), p->dir,
					strerror(e)), -1;
		}
		close(fd);	/* reuse_fd took a duplicate */
	}
	e = sds_bpf__load(pr->skel);
	if (e && probes__session_retry(pr, -e))
		return 1;
	if (e)
		return snprintf(err, errlen, "loading BPF programs over the pinned maps: %s",
				strerror(-e)), -1;
	/* The split is off after an adoption: its old switch too. */
	if (pr->globals_adopted && pr->skel->bss)
		__atomic_store_n(&pr->skel->bss->split_on, 0, __ATOMIC_RELEASE);
	for (i = 0; i < nfresh; i++) {
		snprintf(name, sizeof(name), "map_%s", bpf_map__name(fresh[i]));
		if (pins__path(p, name, path, sizeof(path)) ||
		    bpf_obj_pin(bpf_map__fd(fresh[i]), path))
			return snprintf(err, errlen, "pinning map %s in %s: %s",
					bpf_map__name(fresh[i]), p->dir,
					strerror(errno)), -1;
	}
	link_open(p, "thread_exit", &pr->exit_link);
	if (!pr->exit_link)
		pr->exit_link = bpf_program__attach(pr->skel->progs.sds_thread_exit);
	if (!pr->exit_link)
		return snprintf(err, errlen, "attaching sched_process_exit: %s",
				strerror(errno)), -1;
	return 0;
}

int probes__adopt_load(struct probes *pr, uint64_t key, uint64_t sec_offset_ns,
		       bool atomics, const struct pins *p, char *err,
		       size_t errlen)
{
	int r;

	if (probes__path_parse(&pr->path, err, errlen))
		return -1;
	r = adopt_load(pr, key, sec_offset_ns, atomics, p, err, errlen);
	if (r <= 0)
		return r;
	/* No uprobe sessions here (auto): the pair, loaded anew. */
	sds_bpf__destroy(pr->skel);
	pr->skel = NULL;
	r = adopt_load(pr, key, sec_offset_ns, atomics, p, err, errlen);
	return r > 0 ? -1 : r;
}

/* The names of point @id's links: "p<id>_<what>". */
static void point_name(char *buf, size_t len, int id, const char *what)
{
	snprintf(buf, len, "p%d_%s", id, what);
}

/*
 * Point @id's links, or its clone @c's (-1: the point's own), opened from
 * their pins (@adopt) or pinned: "p<id>_enter", "p<id>_c<c>_enter", ...
 */
static int point_links(const struct pins *p, int id, int c,
		       struct probe_point *pt, bool adopt)
{
	char name[64], what[24];
	struct bpf_link **links[2 + EXITS_MAX];
	const char *whats[2] = { "enter", "leave" };
	int k, bad = 0;

	links[0] = &pt->enter;
	links[1] = &pt->leave;
	for (k = 0; k < EXITS_MAX; k++)
		links[2 + k] = &pt->exit_links[k];
	for (k = 0; k < 2 + EXITS_MAX; k++) {
		if (k < 2)
			snprintf(what, sizeof(what), "%s", whats[k]);
		else
			snprintf(what, sizeof(what), "exit%d", k - 2);
		if (c >= 0)
			snprintf(name, sizeof(name), "p%d_c%d_%s", id, c, what);
		else
			point_name(name, sizeof(name), id, what);
		if (adopt)
			link_open(p, name, links[k]);
		else
			bad |= link_pin(p, name, *links[k]);
	}
	return bad;
}

void probes__adopt_points(struct probes *pr, const struct pins *p, int n)
{
	char name[64];
	int id, k;

	for (id = 0; id < n; id++) {
		struct probe_point *pt = &pr->pts[id];

		point_links(p, id, -1, pt, true);
		/* Its clones, as attach resolved them again (point/clones.h). */
		for (k = 0; k < pt->nclones; k++)
			point_links(p, id, k, &pt->clones[k], true);
	}
	for (k = 0; k < EXITS_CATCH_MAX; k++) {
		snprintf(name, sizeof(name), "catch%d", k);
		link_open(p, name, &pr->catch_links[k]);
	}
	probes__session_adopted(pr, n);
}

int probes__adopt_guards(struct probes *pr, const struct pins *p,
			 dev_t dev, ino_t ino)
{
	struct guard_file *gf = &pr->files[0];
	char name[64];
	int i, n = 0;

	memset(gf, 0, sizeof(*gf));
	for (i = 0; i < SDS_SITE_COUNT; i++) {
		snprintf(name, sizeof(name), "guard_%d", i);
		link_open(p, name, &gf->links[i]);
		n += gf->links[i] != NULL;
	}
	if (n == SDS_SITE_COUNT) {
		gf->used = true;
		gf->pinned = true;
		gf->dev = dev;
		gf->ino = ino;
		pr->nfiles++;
		return 0;
	}
	/* Some gone: drop the rest (their pins too), attach afresh. */
	for (i = 0; i < SDS_SITE_COUNT; i++) {
		if (gf->links[i])
			bpf_link__unpin(gf->links[i]);
		bpf_link__destroy(gf->links[i]);
	}
	memset(gf, 0, sizeof(*gf));
	return -1;
}

int probes__pin_links(struct probes *pr, const struct pins *p, char *err,
		      size_t errlen)
{
	char name[64];
	int id, k, bad = 0;

	bad |= link_pin(p, "thread_exit", pr->exit_link);
	for (id = 0; id < pr->npoints; id++) {
		struct probe_point *pt = &pr->pts[id];

		bad |= point_links(p, id, -1, pt, false);
		for (k = 0; k < pt->nclones; k++)
			bad |= point_links(p, id, k, &pt->clones[k], false);
	}
	for (k = 0; k < EXITS_CATCH_MAX; k++) {
		snprintf(name, sizeof(name), "catch%d", k);
		bad |= link_pin(p, name, pr->catch_links[k]);
	}
	if (pr->files[0].used && pr->files[0].pinned)
		for (k = 0; k < SDS_SITE_COUNT; k++) {
			snprintf(name, sizeof(name), "guard_%d", k);
			bad |= link_pin(p, name, pr->files[0].links[k]);
		}
	if (bad)
		return snprintf(err, errlen, "pinning probes in %s: %s", p->dir,
				strerror(errno)), -1;
	return 0;
}

static void point_unpin(struct probe_point *pt)
{
	int k;

	for (k = 0; k < pt->nclones; k++)
		point_unpin(&pt->clones[k]);
	if (pt->enter && bpf_link__pin_path(pt->enter))
		bpf_link__unpin(pt->enter);
	if (pt->leave && bpf_link__pin_path(pt->leave))
		bpf_link__unpin(pt->leave);
	for (k = 0; k < EXITS_MAX; k++)
		if (pt->exit_links[k] && bpf_link__pin_path(pt->exit_links[k]))
			bpf_link__unpin(pt->exit_links[k]);
}

void probes__unpin_point(struct probes *pr, int id)
{
	point_unpin(&pr->pts[id]);
}
