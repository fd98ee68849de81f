// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * deps.c - the loader's side of dependencies found by themselves
 * (deps.h, docs/DEPS.md): bpf/deps.bpf.c loaded over the frames map,
 * attached for the loader's life, and its edge table read back.
 *
 * The BPF programs are the table's only writers (atomic adds); the
 * loader only reads it, never deletes: an edge's counts are since
 * attach.  A read walks the hash key by key (at most --deps-max keys,
 * 4096 by default: a few milliseconds, made for a `deps` request and
 * once a heartbeat, never each tick).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cli/cmd.h"
#include "deps/deps.h"
#include "kernel/probes.h"
#include "publish/failfast_cg.h"
#include "sds.skel.h"
#include "deps.skel.h"

#define DP_NCG	3	/* cgroup connect4, connect6, sock_ops */

struct deps {
	struct sds_dp_bpf *skel;
	struct bpf_link *cg[DP_NCG];
	struct bpf_link *send;		/* raw_tp sock_send_length */
	int cap;			/* max_entries of deps_edges */
};

static struct {
	bool on;
	long max;
} dp_opts = { false, SDS_DEPS_EDGES };

int deps__set_opts(bool on, const char *max)
{
	dp_opts.on = on;
	dp_opts.max = SDS_DEPS_EDGES;
	if (!max)
		return 0;
	if (!on)
		return cmd_err("--deps-max needs --deps");
	if (cmd_parse_long(max, 1, DEPS_MAX_LIMIT, &dp_opts.max))
		return cmd_err("bad --deps-max '%s': expected the edges kept, 1..%d",
			       max, DEPS_MAX_LIMIT);
	return 0;
}

bool deps__wanted(void)
{
	return dp_opts.on;
}

int deps__capacity(const struct deps *d)
{
	return d ? d->cap : 0;
}

void deps__close(struct deps *d)
{
	int i;

	if (!d)
		return;
	bpf_link__destroy(d->send);
	for (i = 0; i < DP_NCG; i++)
		bpf_link__destroy(d->cg[i]);
	sds_dp_bpf__destroy(d->skel);
	free(d);
}

int deps__open(struct deps **out, const struct probes *p)
{
	struct bpf_program *progs[DP_NCG];
	libbpf_print_fn_t old;
	struct deps *d;
	int e;

	*out = NULL;
	if (!dp_opts.on)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return cmd_err("--deps: %s", strerror(errno));
	d->cap = (int)dp_opts.max;
	d->skel = sds_dp_bpf__open();
	if (!d->skel) {
		e = errno;
		free(d);
		return cmd_err("--deps: opening the dependencies' BPF object: %s",
			       strerror(e));
	}
	if (bpf_map__reuse_fd(d->skel->maps.frames,
			      bpf_map__fd(p->skel->maps.frames)) ||
	    bpf_map__set_max_entries(d->skel->maps.deps_edges, d->cap)) {
		e = errno;
		deps__close(d);
		return cmd_err("--deps: preparing the dependencies' maps: %s",
			       strerror(e));
	}
	old = libbpf_set_print(NULL);
	e = sds_dp_bpf__load(d->skel);
	libbpf_set_print(old);
	if (e) {
		deps__close(d);
		return cmd_err("--deps: the kernel refuses the dependencies' programs (cgroup connect and sock_ops with socket storage, the sock_send_length raw tracepoint): %s",
			       strerror(-e));
	}
	progs[0] = d->skel->progs.sds_dp_connect4;
	progs[1] = d->skel->progs.sds_dp_connect6;
	progs[2] = d->skel->progs.sds_dp_sockops;
	if (failfast_cg__attach(progs, DP_NCG, d->cg)) {
		deps__close(d);
		return cmd_err("--deps: attaching the cgroup hooks (said above)");
	}
	d->send = bpf_program__attach_raw_tracepoint(d->skel->progs.sds_dp_send,
						     "sock_send_length");
	if (!d->send) {
		e = errno;
		d->send = NULL;
		deps__close(d);
		return cmd_err("--deps: attaching the sock_send_length raw tracepoint: %s",
			       strerror(e));
	}
	*out = d;
	return 0;
}

void deps__addr_text(const uint8_t addr[16], char *buf, size_t len)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	char tmp[DEPS_ADDR_MAX];

	if (!memcmp(addr, mapped, sizeof(mapped)))
		inet_ntop(AF_INET, addr + 12, tmp, sizeof(tmp));
	else
		inet_ntop(AF_INET6, addr, tmp, sizeof(tmp));
	snprintf(buf, len, "%s", tmp);
}

static uint64_t edge_weight(const struct deps_edge *e)
{
	return e->c.sends + e->c.connects;
}

/* Heaviest first; ties by point, then address and port: a stable order. */
static int edge_cmp(const void *a, const void *b)
{
	const struct deps_edge *x = a, *y = b;
	uint64_t wx = edge_weight(x), wy = edge_weight(y);
	int r;

	if (wx != wy)
		return wx > wy ? -1 : 1;
	if (x->point != y->point)
		return x->point < y->point ? -1 : 1;
	r = strcmp(x->addr, y->addr);
	if (r)
		return r;
	return (int)x->port - (int)y->port;
}

int deps__read(struct deps *d, const struct probes *p, struct deps_edge *out,
	       int max, int *total, uint64_t *ovf)
{
	struct sds_dep_key key, next;
	struct deps_edge *all;
	int fd, n = 0, i, r;
	void *prev = NULL;
	uint32_t slot;

	*total = 0;
	memset(ovf, 0, SDS_DEPS_OVF_NR * sizeof(*ovf));
	if (!d)
		return 0;
	for (slot = 0; slot < SDS_DEPS_OVF_NR; slot++)
		bpf_map_lookup_elem(bpf_map__fd(d->skel->maps.deps_overflow),
				    &slot, &ovf[slot]);
	all = calloc((size_t)d->cap, sizeof(*all));
	if (!all)
		return -1;
	fd = bpf_map__fd(d->skel->maps.deps_edges);
	/* Bounded by the table's size: keys come and never go. */
	while (n < d->cap && !bpf_map_get_next_key(fd, prev, &next)) {
		struct deps_edge *e = &all[n];
		const char *name;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &e->c))
			continue;
		e->point = (int)key.point;
		name = key.point < (uint32_t)p->npoints ?
			       probes__name(p, (int)key.point) : NULL;
		snprintf(e->name, sizeof(e->name), "%s", name ? name : "");
		e->proto = key.proto == SDS_DEP_UDP ? "udp" : "tcp";
		deps__addr_text(key.addr, e->addr, sizeof(e->addr));
		e->port = key.port;
		n++;
	}
	qsort(all, (size_t)n, sizeof(*all), edge_cmp);
	*total = n;
	r = n < max ? n : max;
	for (i = 0; i < r; i++)
		out[i] = all[i];
	free(all);
	return r;
}

static json_t *edge_json(const struct deps_edge *e)
{
	return json_pack("{s:s, s:i, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s}",
			 "addr", e->addr, "port", (int)e->port, "proto", e->proto,
			 "connects", (json_int_t)e->c.connects,
			 "connect_errors", (json_int_t)e->c.connect_errors,
			 "sends", (json_int_t)e->c.sends,
			 "send_errors", (json_int_t)e->c.send_errors,
			 "resets", (json_int_t)e->c.resets,
			 "errors", (json_int_t)(e->c.connect_errors +
						e->c.send_errors + e->c.resets),
			 "bytes", (json_int_t)e->c.bytes,
			 /* Strong or weak: a game day's verdict, not counted here. */
			 "class", "unknown");
}

/* By point, then heaviest first within it. */
static int edge_point_cmp(const void *a, const void *b)
{
	const struct deps_edge *x = a, *y = b;

	if (x->point != y->point)
		return x->point < y->point ? -1 : 1;
	return edge_cmp(a, b);
}

/* Points by id, each with its edges heaviest first (@e is sorted so). */
static json_t *points_json(struct deps_edge *e, int n, int want)
{
	json_t *pts = json_array(), *arr = NULL;
	int i, last = -1;

	if (!pts)
		return NULL;
	qsort(e, (size_t)n, sizeof(*e), edge_point_cmp);
	for (i = 0; i < n; i++) {
		if ((want >= 0 && e[i].point != want) || !e[i].name[0])
			continue;
		if (last != e[i].point) {
			json_t *po = json_object();

			arr = json_array();
			json_object_set_new(po, "point", json_string(e[i].name));
			json_object_set_new(po, "deps", arr);
			json_array_append_new(pts, po);
			last = e[i].point;
		}
		json_array_append_new(arr, edge_json(&e[i]));
	}
	return pts;
}

json_t *deps__json(struct deps *d, const struct probes *p, const char *point)
{
	uint64_t ovf[SDS_DEPS_OVF_NR];
	struct deps_edge *e;
	int n, total, want = -1, i;
	json_t *o;

	if (!d)
		return json_pack("{s:s}", "error",
				 "this loader was attached without --deps: it records no dependencies (docs/DEPS.md)");
	if (point) {
		for (i = 0; i < p->npoints; i++)
			if (!strcmp(probes__name(p, i), point))
				want = i;
		if (want < 0)
			return json_pack("{s:s}", "error", "no point of that name");
	}
	e = calloc((size_t)d->cap, sizeof(*e));
	if (!e)
		return NULL;
	n = deps__read(d, p, e, d->cap, &total, ovf);
	if (n < 0) {
		free(e);
		return NULL;
	}
	o = json_pack("{s:i, s:i, s:{s:I, s:I}}", "max_edges", d->cap,
		      "edges", total, "overflow",
		      "edges", (json_int_t)ovf[SDS_DEPS_OVF_EDGES],
		      "marks", (json_int_t)ovf[SDS_DEPS_OVF_MARK]);
	if (o)
		json_object_set_new(o, "points", points_json(e, n, want));
	free(e);
	return o;
}
