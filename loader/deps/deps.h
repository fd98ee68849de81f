/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * deps.h - dependencies found by themselves (docs/DEPS.md): with
 * `attach --deps`, the object bpf/deps.bpf.c loaded over the main one's
 * frames map and attached (cgroup connect hooks and sock_ops on the
 * cgroup2 root, the sock_send_length raw tracepoint) for the loader's
 * life; the per (point, peer) edges it counts read back, for `deps`, the
 * heartbeat and the metrics of nothing else.
 */
#ifndef SDS_DEPS_DEPS_H
#define SDS_DEPS_DEPS_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "sds_types.h"
#include "sds_deps.h"

struct deps;
struct probes;

#define DEPS_MAX_LIMIT	65536	/* --deps-max at most */
#define DEPS_ADDR_MAX	46	/* INET6_ADDRSTRLEN */

/* One edge as read: its point's name, its peer as text, its counts. */
struct deps_edge {
	int point;			/* point id */
	char name[SDS_NAME_MAX + 1];	/* its name, "" if the point is gone */
	const char *proto;		/* "tcp", "udp" */
	char addr[DEPS_ADDR_MAX];	/* "127.0.0.1", "::1": v4-mapped as IPv4 */
	uint16_t port;
	struct sds_dep_count c;
};

/*
 * attach's --deps (@on) and --deps-max N (@max: NULL for the default,
 * SDS_DEPS_EDGES).  Checked here: 0, or -1 said in one line.
 */
int deps__set_opts(bool on, const char *max);
/* Was --deps given?  Function points then keep frames (the pair path). */
bool deps__wanted(void);

/*
 * After the main object is loaded: with --deps, load and attach the
 * object into *@out (NULL without --deps).  A kernel that refuses it
 * refuses the attach: 0, or -1 said in one line.
 */
int deps__open(struct deps **out, const struct probes *p);
/* Every link and map gone, @d (NULL: nothing) freed. */
void deps__close(struct deps *d);

/*
 * The edges into @out (at most @max, heaviest first: sends + connects),
 * their total into *@total (beyond @max too), and what could not be
 * counted into @ovf[SDS_DEPS_OVF_NR].  The number in @out, or -1.
 */
int deps__read(struct deps *d, const struct probes *p, struct deps_edge *out,
	       int max, int *total, uint64_t *ovf);
/* The table's size (--deps-max). */
int deps__capacity(const struct deps *d);

/*
 * `deps [POINT]`: {"max_edges", "edges", "overflow": {"edges", "marks"},
 * "points": [{"point", "deps": [{"addr", "port", "proto", "connects",
 * ..., "errors", "class"}]}]}; with @point only it (an error object if it
 * is no point).  NULL on no memory.
 */
json_t *deps__json(struct deps *d, const struct probes *p, const char *point);

/* "127.0.0.1" or "::1" of a key's address (v4-mapped shown as IPv4). */
void deps__addr_text(const uint8_t addr[16], char *buf, size_t len);

#endif /* SDS_DEPS_DEPS_H */
