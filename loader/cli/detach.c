// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * detach.c - `sds-bpf detach`: remove the pins a loader left (killed, or
 * stopped with --keep), and with them its probes and maps.  A live loader
 * owns its pins: detach refuses, since a loader stopped by SIGTERM or
 * SIGINT removes its own (unless --keep).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli/cmd.h"
#include "serve/ctl.h"
#include "names.h"
#include "state/keep.h"
#include "kernel/pins.h"

static const char detach_usage[] =
"Usage: sds-bpf detach [--group GROUP] [--app NAME]\n"
"\n"
"Remove what an app's loader left pinned under $SDS_PIN_ROOT (default\n"
"/sys/fs/bpf/sds): its probes stop counting and its maps and kept state\n"
"are freed.  A loader killed, or stopped with attach --keep, leaves them\n"
"for the next attach to adopt.  Refused while a loader serves the app.\n"
"Without --app: the one app (of GROUP) that has pins.\n"
"\n"
"Options:\n"
"  -a, --app NAME      the app (default: the one with pins)\n"
"  -g, --group GROUP   its group (default: default, or any without --app)\n"
"  -h, --help          this help\n";

static int detach_options(int argc, char **argv, const char **group,
			  const char **app)
{
	static const struct option opts[] = {
		{ "app", required_argument, NULL, 'a' },
		{ "group", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	*group = NULL;
	*app = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+a:g:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (!sds_name_valid(optarg))
				return cmd_err("bad --app '%s': use 1-64 of [A-Za-z0-9_-]", optarg);
			*app = optarg;
			break;
		case 'g':
			if (!sds_name_valid(optarg))
				return cmd_err("bad --group '%s': use 1-64 of [A-Za-z0-9_-]", optarg);
			*group = optarg;
			break;
		case 'h':
			fputs(detach_usage, stdout);
			return 1;
		default:
			return cmd_err("detach: bad option (see sds-bpf detach --help)");
		}
	}
	if (optind < argc)
		return cmd_err("detach: unexpected argument '%s' (see sds-bpf detach --help)",
			       argv[optind]);
	if (*app && !*group)
		*group = "default";
	return 0;
}

/*
 * No --app: the one app (of @group, if given) whose pins this sds-bpf
 * can read, into @g/@a; -1 after a line when there is none or several.
 */
static int detach_pick(const char *group, char *g, char *a)
{
	const char *root = pins_root();
	char list[400] = "", dir[384];
	struct keep_header h;
	struct dirent *de;
	size_t len = 0;
	int n = 0;
	DIR *d = opendir(root);

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' ||
		    snprintf(dir, sizeof(dir), "%s/%s", root, de->d_name) >=
		    (int)sizeof(dir) || keep__peek(dir, &h) ||
		    (group && strcmp(h.group, group)))
			continue;
		if (!n++) {
			snprintf(g, SDS_NAME_MAX + 1, "%s", h.group);
			snprintf(a, SDS_NAME_MAX + 1, "%s", h.app);
		}
		if (len < sizeof(list))
			len += snprintf(list + len, sizeof(list) - len, "%s%s/%s",
					n > 1 ? ", " : "", h.group, h.app);
	}
	if (d)
		closedir(d);
	if (n == 1)
		return 0;
	if (!n)
		return group ? cmd_err("detach: no pins of group '%s' in %s", group, root) :
			       cmd_err("detach: no pins in %s", root);
	return cmd_err("detach: pins of %d apps (%s): name one with --app", n, list);
}

int do_detach(int argc, char **argv)
{
	char gbuf[SDS_NAME_MAX + 1], abuf[SDS_NAME_MAX + 1];
	const char *group, *app;
	struct ctl_paths paths;
	struct pins pins;
	char err[512];
	pid_t owner = 0;
	int lock = -1, r;

	r = detach_options(argc, argv, &group, &app);
	if (r)
		return r > 0 ? 0 : -1;
	if (geteuid() != 0)
		return cmd_err("detach needs root (the pins hold probes): %s",
			       strerror(EPERM));
	if (!app) {
		if (detach_pick(group, gbuf, abuf))
			return -1;
		group = gbuf;
		app = abuf;
	}
	if (pins__init(&pins, group, app, false, err, sizeof(err)))
		return cmd_err("detach: %s", err);
	/* The app's lock, held by its live loader: then it owns the pins. */
	if (!ctl_paths_init(&paths, group, app)) {
		lock = ctl_lock(&paths, &owner, err, sizeof(err));
		if (lock < 0 && errno == EWOULDBLOCK)
			return cmd_err("detach: app '%s' in group '%s' is served by a live loader (pid %d): stop it (SIGTERM removes its pins unless it runs with --keep)",
				       app, group, (int)owner);
	}
	if (!pins__exist(&pins)) {
		ctl_unlock(&paths, lock);
		return cmd_err("detach: no pins of app '%s' in group '%s' (%s)",
			       app, group, pins.dir);
	}
	r = pins__remove(&pins);
	if (r)
		cmd_err("detach: removing %s: %s", pins.dir, strerror(errno));
	else
		printf("detached app '%s' in group '%s': removed %s\n", app, group,
		       pins.dir);
	ctl_unlock(&paths, lock);
	return r;
}

/* Is the app of kept header @h served by no loader?  Then 0 with its lock. */
static int sweep_lock(const struct keep_header *h, struct ctl_paths *paths)
{
	char err[512];
	pid_t owner;

	/* Its loader alive (or its pid taken since): not ours to judge. */
	if (h->loader_pid > 0 && (!kill(h->loader_pid, 0) || errno != ESRCH))
		return -1;
	if (!sds_name_valid(h->group) || !sds_name_valid(h->app) ||
	    ctl_paths_init(paths, h->group, h->app))
		return -1;
	return ctl_lock(paths, &owner, err, sizeof(err));
}

void detach__sweep(const char *skip)
{
	const char *root = pins_root();
	struct keep_header h;
	struct ctl_paths paths;
	struct dirent *de;
	struct pins p;
	struct stat st;
	int lock;
	DIR *d;

	d = opendir(root);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' ||
		    snprintf(p.dir, sizeof(p.dir), "%s/%s", root, de->d_name) >=
		    (int)sizeof(p.dir) || !strcmp(p.dir, skip) ||
		    keep__peek(p.dir, &h))
			continue;
		if (!stat(h.target, &st) && (uint64_t)st.st_dev == h.target_dev &&
		    (uint64_t)st.st_ino == h.target_ino)
			continue;
		lock = sweep_lock(&h, &paths);
		if (lock < 0)
			continue;
		if (pins__remove(&p))
			cmd_err("stale pins in %s: their TARGET %s is gone; removing them: %s",
				p.dir, h.target, strerror(errno));
		else
			cmd_err("stale pins in %s: their TARGET %s is gone; removed",
				p.dir, h.target);
		ctl_unlock(&paths, lock);
	}
	closedir(d);
}
