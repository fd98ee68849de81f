// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * probes_guard.c - the libsds guard files: the files (TARGET or a libsds.so
 * a registering process maps) whose guard sites carry the probes, found
 * by inode, refcounted by sessions, bounded per uid, recycled when idle
 * (a detach costs ~300 ms of kernel time, so idle files stay attached
 * until their slot is needed).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "kernel/probes.h"
#include "sds.skel.h"

static int guard_file__attach(struct probes *pr, struct guard_file *gf,
			      const char *path, const struct sds_sites *sites)
{
	struct bpf_program *progs[SDS_SITE_COUNT] = {
		[SDS_SITE_ENTER] = pr->skel->progs.sds_guard_enter,
		[SDS_SITE_EXIT] = pr->skel->progs.sds_guard_exit,
		[SDS_SITE_EXCEPTION] = pr->skel->progs.sds_guard_exception,
		[SDS_SITE_DOWNGRADE] = pr->skel->progs.sds_guard_downgrade,
	};
	int i, e;

	for (i = 0; i < SDS_SITE_COUNT; i++) {
		/* Every process: the key filters out other loaders' apps. */
		gf->links[i] = bpf_program__attach_uprobe_opts(progs[i], -1, path,
							       sites->offset[i], NULL);
		if (!gf->links[i]) {
			e = errno;
			while (i--) {
				bpf_link__destroy(gf->links[i]);
				gf->links[i] = NULL;
			}
			return -e;
		}
	}
	/*
	 * Traffic copy: the copy site, where libsds has one.  Best effort:
	 * the guards count without it, and its points simply never capture.
	 */
	if (pr->copy_site_prog && sites->has_copy)
		gf->copy_link = bpf_program__attach_uprobe_opts(pr->copy_site_prog,
								-1, path,
								sites->copy_offset,
								NULL);
	if (pr->copy_ret_prog && sites->has_copy_ret)
		gf->copy_ret_link = bpf_program__attach_uprobe_opts(pr->copy_ret_prog,
								    -1, path,
								    sites->copy_ret_offset,
								    NULL);
	return 0;
}

int probes__guard_get(struct probes *pr, dev_t dev, ino_t ino)
{
	int i;

	for (i = 0; i < PROBES_MAX_GUARD_FILES; i++) {
		struct guard_file *gf = &pr->files[i];

		if (gf->used && gf->dev == dev && gf->ino == ino) {
			gf->refs++;
			return i;
		}
	}
	return -1;
}

void probes__guard_file_detach(struct guard_file *gf)
{
	int j;

	for (j = 0; j < SDS_SITE_COUNT; j++)
		bpf_link__destroy(gf->links[j]);
	bpf_link__destroy(gf->copy_link);
	bpf_link__destroy(gf->copy_ret_link);
	memset(gf, 0, sizeof(*gf));
}

/* A slot for a new file: a free one, else the longest idle one, detached. */
static struct guard_file *guard_file__slot(struct probes *pr)
{
	struct guard_file *gf, *idle = NULL;
	int i;

	for (i = 0; i < PROBES_MAX_GUARD_FILES; i++) {
		gf = &pr->files[i];
		if (!gf->used)
			return gf;
		if (!gf->pinned && gf->refs == 0 &&
		    (!idle || gf->idle_since < idle->idle_since))
			idle = gf;
	}
	if (idle) {
		probes__guard_file_detach(idle);
		pr->nfiles--;
	}
	return idle;
}

int probes__guard_held(const struct probes *pr, uid_t uid)
{
	int i, n = 0;

	/* Files idle (no session) do not count: they make room on demand. */
	for (i = 0; i < PROBES_MAX_GUARD_FILES; i++)
		if (pr->files[i].used && !pr->files[i].pinned &&
		    pr->files[i].refs > 0 && pr->files[i].uid == uid)
			n++;
	return n;
}

int probes__guard_add(struct probes *pr, const char *path, dev_t dev,
		      ino_t ino, const struct sds_sites *sites, uid_t uid,
		      int uid_max, char *err, size_t errlen)
{
	int mine = probes__guard_held(pr, uid);
	struct guard_file *gf;
	int e;

	if (uid != 0 && mine >= uid_max) {
		snprintf(err, errlen, "uid %u holds %d libsds files already (at most %d)",
			 (unsigned int)uid, mine, uid_max);
		errno = EDQUOT;
		return -1;
	}
	gf = guard_file__slot(pr);
	if (!gf) {
		snprintf(err, errlen, "too many libsds files in use (at most %d)",
			 PROBES_MAX_GUARD_FILES);
		errno = ENOSPC;
		return -1;
	}
	e = guard_file__attach(pr, gf, path, sites);
	if (e) {
		snprintf(err, errlen, "attaching libsds sites: %s%s",
			 strerror(-e), probes__attach_hint(-e));
		errno = -e;
		return -1;
	}
	gf->used = true;
	gf->dev = dev;
	gf->ino = ino;
	gf->uid = uid;
	gf->refs = 1;
	pr->nfiles++;
	return gf - pr->files;
}

void probes__guard_put(struct probes *pr, int i)
{
	struct guard_file *gf;
	struct timespec ts;

	if (i < 0 || i >= PROBES_MAX_GUARD_FILES || !pr->files[i].used)
		return;
	gf = &pr->files[i];
	/*
	 * Every process that runs this file's sites holds a session on it:
	 * idle, nothing calls through the probes, which may go when the slot
	 * is needed.
	 */
	if (gf->refs > 0 && --gf->refs == 0) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		gf->idle_since = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	}
}

int probes__attach_guards(struct probes *pr, const char *path,
			  const struct sds_sites *sites, char *err,
			  size_t errlen)
{
	struct guard_file *gf = &pr->files[0];
	struct stat st;
	int e;

	/* At start, before any session: slot 0 is free. */
	if (stat(path, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	memset(gf, 0, sizeof(*gf));
	e = guard_file__attach(pr, gf, path, sites);
	if (e) {
		snprintf(err, errlen, "attaching libsds sites in %s: %s%s",
			 path, strerror(-e), probes__attach_hint(-e));
		return -1;
	}
	gf->used = true;
	gf->pinned = true;
	gf->dev = st.st_dev;
	gf->ino = st.st_ino;
	pr->nfiles++;
	return 0;
}
