/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * pins.h - where an app's kernel objects are pinned (docs/CRASH.md):
 * $SDS_PIN_ROOT (default /sys/fs/bpf/sds), then one directory per app
 * named by the socket's stem rule (common/names.h) for the pin root's
 * length, its dots turned to ':' (bpffs refuses names with a dot):
 * <group>:<app>.  Everything the kernel holds for the app (maps, probe links,
 * the loader's kept state) is pinned there, so that a loader killed with
 * SIGKILL leaves its probes counting and a new `attach` adopts them.
 */
#ifndef SDS_PINS_H
#define SDS_PINS_H

#include <stdbool.h>
#include <stddef.h>

#define PINS_ROOT_DEFAULT	"/sys/fs/bpf/sds"

struct pins {
	char dir[384];		/* <root>/<stem, ':' for '.'>: this app's pins */
};

/* The pin root: $SDS_PIN_ROOT if set, else PINS_ROOT_DEFAULT. */
const char *pins_root(void);

/*
 * Fill @p for @group/@app and check the root: on bpffs, root's, writable
 * by root alone (created 0700 if missing and @create; else a missing root
 * is no pins).  -1 with a message in @err.
 */
int pins__init(struct pins *p, const char *group, const char *app,
	       bool create, char *err, size_t errlen);

/* Does the app's pin directory exist? */
bool pins__exist(const struct pins *p);

/* Create the app's directory (0700).  0, or -1 with errno. */
int pins__mkdir(const struct pins *p);

/* "<dir>/<name>" into @path; -1 if it does not fit. */
int pins__path(const struct pins *p, const char *name, char *path,
	       size_t size);

/*
 * Remove every pin of the app and its directory: what was pinned only
 * there leaves the kernel (links detach, maps are freed once no fd holds
 * them).  Entries that are not plain pins (a directory someone made) are
 * left and make it fail.  0, or -1 with errno.
 */
int pins__remove(const struct pins *p);

#endif /* SDS_PINS_H */
