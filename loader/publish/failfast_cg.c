// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * failfast_cg.c - the cgroup lever's attachment (failfast_cg.h).
 *
 * The sock_addr hooks run for the cgroup a socket was created in and
 * every cgroup above it, so programs on the cgroup2 root see every socket
 * of the host; the programs themselves deny only for threads inside a
 * failing point (bpf/failfast.bpf.c) and pass everything else.  On this
 * development VM /sys/fs/cgroup is a v1 tmpfs and cgroup2 sits at
 * /sys/fs/cgroup/unified: the mount is looked up, never assumed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cli/cmd.h"
#include "serve/ctl.h"
#include "publish/failfast_cg.h"

#define MOUNTINFO	"/proc/self/mountinfo"
#define CG_SUBDIR	"failfast-cgroup2"

int failfast_cg__root(char *buf, size_t len)
{
	char line[4096], root[1024], mnt[1024], *sep;
	FILE *f = fopen(MOUNTINFO, "re");
	int found = -1;

	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SRC OPTS */
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %1023s %1023s", root, mnt) != 2)
			continue;
		/* A bind of a sub-cgroup is not the root: its hooks see less. */
		if (strcmp(root, "/") || strlen(mnt) >= len)
			continue;
		/* Octal escapes (\040) in a mount point: not one we can open. */
		if (strchr(mnt, '\\'))
			continue;
		snprintf(buf, len, "%s", mnt);
		found = 0;
	}
	fclose(f);
	return found;
}

/* Attach @n programs to the cgroup open at @fd. */
static int cg_attach_fd(int fd, const char *where, struct bpf_program **progs,
			int n, struct bpf_link **links)
{
	int i;

	for (i = 0; i < n; i++) {
		links[i] = bpf_program__attach_cgroup(progs[i], fd);
		if (!links[i]) {
			int e = errno;

			links[i] = NULL;
			return cmd_err("attaching the failfast cgroup program %s to %s: %s",
				       bpf_program__name(progs[i]), where,
				       strerror(e));
		}
	}
	return 0;
}

int failfast_cg__attach(struct bpf_program **progs, int n,
			struct bpf_link **links)
{
	char path[1100];
	int fd, r, mounted = 0;

	if (failfast_cg__root(path, sizeof(path))) {
		/* No cgroup2 anywhere: mount one just to name its root. */
		snprintf(path, sizeof(path), "%s/%s", ctl_run_dir(), CG_SUBDIR);
		if ((mkdir(path, 0700) && errno != EEXIST) ||
		    mount("cgroup2", path, "cgroup2", 0, NULL))
			return cmd_err("failfast: no cgroup2 mounted, and mounting one at %s: %s",
				       path, strerror(errno));
		mounted = 1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = cmd_err("failfast: opening the cgroup2 root %s: %s", path,
			    strerror(errno));
	} else {
		r = cg_attach_fd(fd, path, progs, n, links);
		close(fd);
	}
	if (mounted) {
		umount2(path, MNT_DETACH);
		rmdir(path);
	}
	return r;
}
