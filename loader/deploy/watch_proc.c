// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * watch_proc.c - does some process still use an old build of TARGET?
 * (watch.c detaches the probes of one that no process uses.)
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include "deploy/watch.h"

/*
 * Does some process run inode @dev/@ino as its executable?  One stat of
 * /proc/PID/exe each (it reaches the inode even when it was unlinked):
 * the cheap first look, which finds an old executable build's process.
 */
static bool inode_exe(dev_t dev, ino_t ino)
{
	char path[64];
	struct dirent *de;
	struct stat st;
	bool found = false;
	DIR *d = opendir("/proc");

	if (!d)
		return true;	/* cannot tell: keep the probes */
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/exe", de->d_name);
		found = !stat(path, &st) && st.st_dev == dev && st.st_ino == ino;
	}
	closedir(d);
	return found;
}

/* Does a process map inode @dev/@ino (/proc/PID/maps)?  A library TARGET. */
static bool inode_mapped(dev_t dev, ino_t ino)
{
	char path[64], line[512];
	struct dirent *de;
	bool found = false, start;
	DIR *d = opendir("/proc");
	FILE *f;

	if (!d)
		return true;	/* cannot tell: keep the probes */
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/maps", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		start = true;
		while (!found && fgets(line, sizeof(line), f)) {
			unsigned int maj, min;
			unsigned long long inode;

			/* Only a line's start has the fields (a long path is read on). */
			if (start && sscanf(line, "%*x-%*x %*s %*x %x:%x %llu",
					    &maj, &min, &inode) == 3 &&
			    inode == (unsigned long long)ino &&
			    makedev(maj, min) == dev)
				found = true;
			start = strchr(line, '\n') != NULL;
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

bool watch_proc__uses(dev_t dev, ino_t ino)
{
	/* The cheap look first: an old executable's process is found there. */
	return inode_exe(dev, ino) || inode_mapped(dev, ino);
}
