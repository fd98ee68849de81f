// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * pins.c - an app's pin directory under bpffs (pins.h).  The pins are the
 * loader's privilege (they hold probes in every process of TARGET): the
 * root and the app's directory are root's, 0700, on bpffs, and nothing in
 * them is followed or trusted beyond what the loader checks (keep.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "names.h"
#include "kernel/pins.h"

#define BPF_FS_MAGIC_	0xcafe4a11	/* linux/magic.h's BPF_FS_MAGIC */
#define SYSFS_MAGIC_	0x62656572	/* and SYSFS_MAGIC: nothing mounted */

const char *pins_root(void)
{
	const char *r = getenv("SDS_PIN_ROOT");

	return r && *r ? r : PINS_ROOT_DEFAULT;
}

/*
 * The default root's bpffs, mounted when nothing is mounted at
 * /sys/fs/bpf (a host without systemd, a fresh VM), as bpftool and
 * Cilium's agent do, with one line saying so: the pins that keep the
 * counts across a restart need one, and that is where every tool looks.
 * Mode 0700, root's.  Only over sysfs's empty directory, and only for the
 * default root: a file system or an SDS_PIN_ROOT the operator chose is
 * never mounted over.
 */
static int bpffs_ensure(char *err, size_t errlen)
{
	static const char mnt[] = "/sys/fs/bpf";
	struct statfs sf;

	if (statfs(mnt, &sf))
		return snprintf(err, errlen, "pin root %s: %s: %s", PINS_ROOT_DEFAULT,
				mnt, strerror(errno)), -1;
	/* Another file system there is the operator's: root_check says so. */
	if ((unsigned long)sf.f_type != SYSFS_MAGIC_)
		return 0;
	if (mount("bpf", mnt, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700"))
		return snprintf(err, errlen, "pin root %s: nothing mounted at %s and mounting bpffs there failed: %s (mount -t bpf -o mode=0700 bpf %s, or set SDS_PIN_ROOT)",
				PINS_ROOT_DEFAULT, mnt, strerror(errno), mnt), -1;
	fprintf(stderr, "sds-bpf: mounted bpffs at %s (nothing was mounted there)\n", mnt);
	return 0;
}

/*
 * @dir: a directory of root's on bpffs that only root can write.  bpffs
 * mounted without mode= is 1777: any user may then make the root first,
 * and every attach would be refused; the line says how to mount it.
 */
#define MODE_HINT "mount -t bpf -o mode=0700 bpf /sys/fs/bpf"

static int root_check(const char *dir, char *err, size_t errlen)
{
	struct statfs sf;
	struct stat st;

	if (lstat(dir, &st))
		return snprintf(err, errlen, "pin root %s: %s", dir,
				strerror(errno)), -1;
	if (!S_ISDIR(st.st_mode))
		return snprintf(err, errlen, "pin root %s: not a directory: remove it (and " MODE_HINT "), or set SDS_PIN_ROOT",
				dir), -1;
	if (st.st_uid != 0)
		return snprintf(err, errlen, "pin root %s: made by uid %u, not root (bpffs mounted without -o mode=0700 lets anyone): remove it and " MODE_HINT ", or set SDS_PIN_ROOT",
				dir, (unsigned int)st.st_uid), -1;
	if (st.st_mode & 022)
		return snprintf(err, errlen, "pin root %s: writable by group or others (mode %04o): remove it and " MODE_HINT ", or set SDS_PIN_ROOT",
				dir, (unsigned int)(st.st_mode & 07777)), -1;
	if (statfs(dir, &sf) || (unsigned long)sf.f_type != BPF_FS_MAGIC_)
		return snprintf(err, errlen, "pin root %s: not on bpffs (" MODE_HINT ", or set SDS_PIN_ROOT)",
				dir), -1;
	return 0;
}

int pins__init(struct pins *p, const char *group, const char *app,
	       bool create, char *err, size_t errlen)
{
	const char *root = pins_root();
	char stem[SDS_SOCK_STEM_MAX + 1];
	int i;

	if (root[0] != '/' || strlen(root) > 200)
		return snprintf(err, errlen, "pin root '%.200s': expected an absolute path of at most 200 bytes (SDS_PIN_ROOT)",
				root), -1;
	if (sds_sock_stem(sds_run_dir_len(root), group, app, stem,
			  sizeof(stem)) < 0)
		return snprintf(err, errlen, "pin root %s: no name of app '%s' in group '%s' fits under it",
				root, app, group), -1;
	/* bpffs reserves names with a dot: the stem's dots become ':'. */
	for (i = 0; stem[i]; i++)
		if (stem[i] == '.')
			stem[i] = ':';
	snprintf(p->dir, sizeof(p->dir), "%.*s/%s", (int)sds_run_dir_len(root),
		 root, stem);
	if (!create && access(root, F_OK) && errno == ENOENT)
		return 0;	/* no root, no pins */
	if (create && !strcmp(root, PINS_ROOT_DEFAULT) && bpffs_ensure(err, errlen))
		return -1;
	if (mkdir(root, 0700) && errno != EEXIST)
		return snprintf(err, errlen, "pin root %s: %s", root,
				strerror(errno)), -1;
	return root_check(root, err, errlen);
}

bool pins__exist(const struct pins *p)
{
	struct stat st;

	return !lstat(p->dir, &st) && S_ISDIR(st.st_mode);
}

int pins__mkdir(const struct pins *p)
{
	if (!mkdir(p->dir, 0700) || errno == EEXIST)
		return 0;
	/* Another loader (or our stale pins' removal) removed the empty root. */
	if (errno != ENOENT || (mkdir(pins_root(), 0700) && errno != EEXIST))
		return -1;
	return mkdir(p->dir, 0700) && errno != EEXIST ? -1 : 0;
}

int pins__path(const struct pins *p, const char *name, char *path,
	       size_t size)
{
	return snprintf(path, size, "%s/%s", p->dir, name) >= (int)size ? -1 : 0;
}

int pins__remove(const struct pins *p)
{
	struct dirent *de;
	int dfd, err = 0;
	DIR *d;

	dfd = open(p->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0 : -1;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -1;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* A pin is unlinked; a directory is not ours to empty. */
		if (unlinkat(dfd, de->d_name, 0) && errno != ENOENT)
			err = errno;
	}
	closedir(d);
	if (rmdir(p->dir) && errno != ENOENT)
		err = err ? err : errno;
	/* The root too once empty: a clean exit leaves nothing in bpffs. */
	if (!err)
		rmdir(pins_root());
	errno = err;
	return err ? -1 : 0;
}
