// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * capture.c - traffic copy in the loader (see capture.h): the copy
 * programs loaded and attached, each point's config, the ring drained in
 * bounded bursts, each capture made a copy record (common/copyrec.h) and
 * handed to the sinks.
 *
 * Calls go one way, capture -> recorder (recorder.h): a `record` request
 * comes here (capture__record), which checks its points and then hands
 * the connection to a recorder, and a recorder's end comes back as a
 * return value, not a call: which points capture, at what rate, is this
 * file's alone to say, and a recorder is a sink like the servers' stream.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <jansson.h>
#include "capture/capture.h"
#include "cli/cmd.h"
#include "copy.skel.h"
#include "copyrec.h"
#include "kernel/probes.h"
#include "publish/flags.h"
#include "report/uplink.h"
#include "serve/serve.h"
#include "strategy.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int capture__check_opts(const struct capture_opts *o)
{
	struct copyout_addr a[COPYOUT_SERVERS];
	char err[256];
	int n;

	static char tok[SDS_TOKEN_MAX + 1];

	if (o->copy_to && copyout__parse(o->copy_to, false, a, &n, err, sizeof(err)))
		return cmd_err("bad --copy-to: %s", err);
	if (o->token_file &&
	    tokfile_read_token("--copy-token-file", o->token_file, tok, err, sizeof(err)))
		return cmd_err("%s", err);
	return 0;
}

/* Who may be captured: a :copy= function point, or any guard point. */
static bool point_able(const struct probes *pr, int id)
{
	const struct probe_point *p = &pr->pts[id];

	return p->kind == POINT_GUARD || (p->kind == POINT_FUNCTION && p->spec.copy);
}

static int cfg_write(struct capture *c, int id, const struct probe_point *p,
		     uint32_t rate)
{
	struct sds_copy_cfg cfg = {
		.kind = p->kind == POINT_GUARD ? SDS_COPY_GUARD : SDS_COPY_FUNC,
		.rate = rate,
		/* A guard point's caller passes what it means: up to 64 KiB. */
		.max = p->kind == POINT_GUARD ? SDS_COPY_MAX : p->spec.copy_max,
		.buf_arg = p->spec.copy_buf_arg,
		.len_arg = p->spec.copy_len_arg,
		.ret_buf_arg = p->spec.copy_ret_buf_arg,
		.ret_len_arg = p->spec.copy_ret_len_arg,
	};
	__u32 key = id;

	return bpf_map_update_elem(bpf_map__fd(c->skel->maps.copy_cfg), &key,
				   &cfg, BPF_ANY);
}

bool capture__able(const struct capture *c, int id)
{
	return point_able(c->env.probes, id);
}

static int capture_load(struct capture *c, const struct capture_opts *o)
{
	struct sds_copy_bpf *s;
	int e;

	s = c->skel = sds_copy_bpf__open();
	if (!s)
		return cmd_err("opening the copy BPF object: %s", strerror(errno));
	c->cap = c->env.probes->cap > 0 ? c->env.probes->cap : SDS_MAX_POINTS;
	s->rodata->atomics = c->env.probes->atomics;
	if (bpf_map__set_max_entries(s->maps.copy_cfg, c->cap) ||
	    bpf_map__set_max_entries(s->maps.copy_counts, c->cap) ||
	    bpf_map__set_max_entries(s->maps.copy_ring, o->ring_bytes))
		return cmd_err("sizing the copy maps: %s", strerror(errno));
	e = sds_copy_bpf__load(s);
	if (e)
		return cmd_err("loading the copy BPF programs: %s%s",
			       strerror(-e), probes__perm_hint(-e));
	return 0;
}

static int ring_event(void *ctx, void *data, size_t size);

int capture__open(struct capture **cp, const struct capture_env *env,
		  const struct capture_opts *o, const char *path, int pid,
		  int nfunc)
{
	struct capture *c;
	char err[256];
	int i;

	c = calloc(1, sizeof(*c));
	if (!c)
		return cmd_err("out of memory");
	*cp = c;
	c->env = *env;
	c->fn_links = calloc(SDS_MAX_POINTS, sizeof(*c->fn_links));
	c->ret_links = calloc(SDS_MAX_POINTS, sizeof(*c->ret_links));
	c->enc = malloc(COPYREC_MAX_LEN);
	recorder__init_all(c->rec);
	if (!c->fn_links || !c->ret_links || !c->enc || copyout__init(&c->out))
		return cmd_err("out of memory");
	c->ncpu = libbpf_num_possible_cpus();
	c->real_offset_ns = (int64_t)(clock_ns(CLOCK_REALTIME) -
				      clock_ns(CLOCK_MONOTONIC));
	if (o->token_file) {
		if (tokfile_read_token("--copy-token-file", o->token_file, c->out.token,
				       err, sizeof(err)))
			return cmd_err("%s", err);
		c->out.token_len = strlen(c->out.token);
	}
	if (o->copy_to) {
		if (copyout__parse(o->copy_to, false, c->copy_to_addrs, &c->ncopy_to,
				   err, sizeof(err)))
			return cmd_err("bad --copy-to: %s", err);
		c->copy_to = true;
		copyout__set(&c->out, c->copy_to_addrs, c->ncopy_to, false);
	}
	if (capture_load(c, o))
		return -1;
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.copy_ring),
				 ring_event, c, NULL);
	if (!c->rb)
		return cmd_err("the copy ring: %s", strerror(errno));
	for (i = 0; i < nfunc; i++) {
		struct probe_point *p = &c->env.probes->pts[i];
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = (__u64)i);

		if (!p->spec.copy)
			continue;
		if (cfg_write(c, i, p, 0))
			return cmd_err("point '%s': copy config: %s",
				       p->spec.name, strerror(errno));
		/* The counting probe's address (probes__attach_point sets
		 * attach_off the same way, after this): one breakpoint for both. */
		c->fn_links[i] = bpf_program__attach_uprobe_opts(
			c->skel->progs.sds_copy_fn, pid, path,
			p->fn.offset + p->site.skip, &uo);
		if (!c->fn_links[i])
			return cmd_err("point '%s': attaching the copy probe: %s%s",
				       p->spec.name, strerror(errno),
				       probes__attach_hint(errno));
		if (!p->spec.copy_ret_buf_arg)
			continue;
		/* :copy_ret=: the return, where the response is written. */
		uo.retprobe = true;
		c->ret_links[i] = bpf_program__attach_uprobe_opts(
			c->skel->progs.sds_copy_fn_ret, pid, path,
			p->fn.offset + p->site.skip, &uo);
		if (!c->ret_links[i])
			return cmd_err("point '%s': attaching the copy_ret probe: %s%s",
				       p->spec.name, strerror(errno),
				       probes__attach_hint(errno));
	}
	probes__set_copy_site(c->env.probes, c->skel->progs.sds_copy_site,
			      c->skel->progs.sds_copy_site_ret);
	return 0;
}

void capture__close(struct capture *c)
{
	int i;

	if (!c)
		return;
	recorder__close_all(c->rec);
	probes__set_copy_site(c->env.probes, NULL, NULL);
	if (c->ret_links)
		for (i = 0; i < SDS_MAX_POINTS; i++)
			bpf_link__destroy(c->ret_links[i]);
	if (c->fn_links)
		for (i = 0; i < SDS_MAX_POINTS; i++)
			bpf_link__destroy(c->fn_links[i]);
	ring_buffer__free(c->rb);
	sds_copy_bpf__destroy(c->skel);
	copyout__free(&c->out);
	free(c->fn_links);
	free(c->ret_links);
	free(c->enc);
	free(c);
}

int capture__fd(const struct capture *c)
{
	return c && c->rb ? ring_buffer__epoll_fd(c->rb) : -1;
}

/* Per drain: how many more captures this wakeup may take. */
static int drain_left;

/* One capture: a record for the servers and the recorders that want it. */
static int ring_event(void *ctx, void *data, size_t size)
{
	struct capture *c = ctx;
	const struct probes *pr = c->env.probes;
	const struct sds_copy_event *ev = data;
	struct capture_point *cp;
	struct copyrec r;
	int n;

	c->drained++;
	if (size < sizeof(*ev) || ev->cap_len > size - sizeof(*ev) ||
	    ev->point >= (uint32_t)pr->npoints)
		goto next;
	cp = &c->pt[ev->point];
	memset(&r, 0, sizeof(r));
	r.ts_ns = ev->ts + c->real_offset_ns;
	r.orig_len = ev->orig_len;
	r.cap_len = ev->cap_len;
	r.flags = (ev->cap_len < ev->orig_len ? COPYREC_F_TRUNCATED : 0) |
		  (cp->write ? COPYREC_F_WRITE : 0) |
		  (ev->flags & SDS_COPY_EV_PAIRED ? COPYREC_F_PAIRED : 0) |
		  (ev->flags & SDS_COPY_EV_RESPONSE ? COPYREC_F_RESPONSE : 0);
	r.pair = ev->flags & SDS_COPY_EV_PAIRED ? ev->pair : 0;
	/* Pairs are for recordings and live diff plans: without either,
	 * neither the id nor the response is wanted (one encoding). */
	if (!recorder__wants(c->rec, ev->point) && !cp->diff) {
		if (r.flags & COPYREC_F_RESPONSE)
			goto next;
		r.flags &= ~COPYREC_F_PAIRED;
		r.pair = 0;
	}
	snprintf(r.app, sizeof(r.app), "%s", c->env.app);
	snprintf(r.point, sizeof(r.point), "%s", probes__name(pr, ev->point));
	r.data = (const uint8_t *)(ev + 1);
	n = copyrec_encode(&r, c->enc, COPYREC_MAX_LEN);
	if (n < 0) {
		cp->lost++;
		goto next;
	}
	recorder__push(c->rec, ev->point, c->enc, n);
	/*
	 * A response goes to recordings (what replay --diff compares) and,
	 * for a live diff plan, to the servers, which compare it with the
	 * shadow's answer and never copy it.  Else the servers get the
	 * request as the version-1 record it was before pairs, so a server
	 * older than responses reads a newer loader's stream.
	 */
	if (!cp->to_servers || ((r.flags & COPYREC_F_RESPONSE) && !cp->diff))
		goto next;
	if ((r.flags & COPYREC_F_PAIRED) && !cp->diff) {
		r.flags &= ~COPYREC_F_PAIRED;
		r.pair = 0;
		n = copyrec_encode(&r, c->enc, COPYREC_MAX_LEN);
	}
	if (n < 0 || !copyout__push(&c->out, ev->point, copyout__key(r.point),
				    c->enc, n))
		cp->lost++;
next:
	/* A negative return stops the consumer with this capture taken. */
	return --drain_left > 0 ? 0 : -EAGAIN;
}

void capture__drain(struct capture *c)
{
	if (!c || !c->rb)
		return;
	drain_left = CAPTURE_DRAIN_BURST;
	ring_buffer__consume(c->rb);
	capture__out_event(c, NULL);
}

short capture__out_events(const struct capture *c, int i, int *fd)
{
	if (!c) {
		*fd = -1;
		return 0;
	}
	return copyout__events(&c->out, i, fd);
}

void capture__out_event(struct capture *c, const short *revents)
{
	static uint64_t sent[SDS_MAX_POINTS], lost[SDS_MAX_POINTS];
	static const short none[COPYOUT_SERVERS];
	int i;

	if (!c)
		return;
	if (!revents)
		revents = none;	/* time passed, or records were queued */
	memset(sent, 0, sizeof(sent));
	memset(lost, 0, sizeof(lost));
	copyout__run(&c->out, revents, flags_now_ns(), sent, lost);
	for (i = 0; i < c->env.probes->npoints; i++) {
		c->pt[i].sent += sent[i];
		c->pt[i].lost += lost[i];
	}
}

/* The plan naming point @name, unexpired at @now (Unix s); NULL: none. */
static const struct sds_hb_copy_plan *plan_of(const struct capture *c,
					      const char *name, int64_t now)
{
	int i, j;

	if (!c->has_plans)
		return NULL;
	for (i = 0; i < c->plans.nplans; i++) {
		const struct sds_hb_copy_plan *p = &c->plans.plans[i];

		if (p->expires_at && p->expires_at <= now)
			continue;
		for (j = 0; j < p->npoints; j++)
			if (!strcmp(p->points[j], name))
				return p;
	}
	return NULL;
}

static bool strategy_write(const struct capture *c, const char *name)
{
	const struct sds_strategies *ss = *c->env.strategies;
	const struct sds_strategy *st;

	if (!ss)
		return false;
	st = strategy_set_find(ss, name);
	return st && st->copy_write > 0;
}

/* Point @id's rate and sinks as the plans, --copy-to and recorders say. */
static void point_apply(struct capture *c, int id, int64_t now)
{
	struct probe_point *p = &c->env.probes->pts[id];
	struct capture_point *cp = &c->pt[id];
	const struct sds_hb_copy_plan *plan;
	uint32_t spec_rate = p->kind == POINT_GUARD ? 100 : p->spec.copy_rate;
	uint32_t rate = 0;
	bool was_able = cp->able;

	cp->able = capture__able(c, id);
	if (!cp->able || id >= c->cap)
		return;
	plan = plan_of(c, p->spec.name, now);
	cp->to_servers = plan || c->copy_to;
	cp->diff = plan && plan->diff;
	if (plan)
		rate = plan->sample_pct;	/* the plan wins over the spec */
	else if (c->copy_to)
		rate = spec_rate;
	if (!rate && recorder__wants(c->rec, id))
		rate = spec_rate;
	cp->write = strategy_write(c, p->spec.name);
	if (was_able && rate == cp->rate)
		return;
	if (cfg_write(c, id, p, rate))
		return;		/* tried again next tick */
	if (p->kind == POINT_GUARD)
		flags__set_copy(c->env.flags, id, rate > 0);
	cp->rate = rate;
}

/*
 * The servers: --copy-to's, else those of the admin's last reply.  This
 * runs on the loop: the admin's addresses must be numeric (a name is
 * refused with one line and counted, never resolved: a resolver that
 * does not answer would hold the tick for seconds per name), and the
 * list is parsed only when it differs from the last one applied.
 */
static void servers_apply(struct capture *c)
{
	static struct copyout_addr a[COPYOUT_SERVERS];
	char list[sizeof(c->out.admin_list)] = "", err[256];
	int i, n = 0;
	size_t off = 0;

	if (c->copy_to || !c->has_plans)
		return;
	for (i = 0; i < c->plans.nservers && i < COPYOUT_SERVERS; i++)
		off += snprintf(list + off, sizeof(list) - off, "%s%s",
				i ? "," : "", c->plans.servers[i]);
	if (c->out.admin_set && !strcmp(list, c->out.admin_list))
		return;
	for (i = 0; i < c->plans.nservers && i < COPYOUT_SERVERS; i++) {
		if (!copyout__parse_one(c->plans.servers[i], &a[n], err, sizeof(err))) {
			n++;
			continue;
		}
		c->out.refused++;
		fprintf(stderr, "sds-bpf: copy server from the admin refused: %s\n", err);
	}
	snprintf(c->out.admin_list, sizeof(c->out.admin_list), "%s", list);
	c->out.admin_set = true;
	copyout__set(&c->out, a, n, true);
}

json_t *capture__out_json(const struct capture *c)
{
	const struct copyout *o;
	const struct copy_stream *s;
	const char *server = NULL;
	uint64_t connects = 0, failures = 0;
	json_t *streams;
	int i;

	if (!c)
		return json_null();
	o = &c->out;
	streams = json_array();
	for (i = 0; i < o->naddrs; i++) {
		s = &o->s[i];
		connects += s->connects;
		failures += s->failures;
		if (!server && s->connected)
			server = o->addrs[i].text;
		json_array_append_new(streams, json_pack(
			"{s:s, s:b, s:b, s:I, s:I, s:I, s:I}",
			"server", o->addrs[i].text, "connected", s->connected,
			"down", s->down, "queued", (json_int_t)s->qn,
			"sent", (json_int_t)s->sent,
			"connects", (json_int_t)s->connects,
			"failures", (json_int_t)s->failures));
	}
	return json_pack("{s:i, s:s?, s:s, s:I, s:I, s:I, s:o}",
			 "servers", o->naddrs, "server", server,
			 "route", o->spread ? "point" : "failover",
			 "connects", (json_int_t)connects,
			 "failures", (json_int_t)failures,
			 "refused", (json_int_t)o->refused, "streams", streams);
}

void capture__tick(struct capture *c)
{
	int64_t now;
	int i;

	if (!c)
		return;
	/* The admin's plans arrive like drills: taken on the loop, here. */
	if (c->env.uplink && uplink__take_copy(c->env.uplink, &c->plans)) {
		c->has_plans = true;
		servers_apply(c);
	}
	now = (int64_t)(clock_ns(CLOCK_REALTIME) / 1000000000ULL);
	for (i = 0; i < c->env.probes->npoints; i++)
		point_apply(c, i, now);
	capture__drain(c);
}

void capture__counts(const struct capture *c, int id, struct sds_copy_count *n)
{	struct sds_copy_count v[c && c->ncpu > 0 ? c->ncpu : 1];
	__u32 key = id;
	int i;

	memset(n, 0, sizeof(*n));
	if (!c || id < 0 || id >= c->cap ||
	    bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.copy_counts), &key, v))
		return;
	for (i = 0; i < c->ncpu; i++) {
		n->captured += v[i].captured;
		n->dropped += v[i].dropped;
		n->truncated += v[i].truncated;
		n->responses += v[i].responses;
	}
}

json_t *capture__point_json(const struct capture *c, int id)
{
	struct sds_copy_count n;

	if (!c || id < 0 || id >= c->env.probes->npoints || !capture__able(c, id))
		return NULL;
	capture__counts(c, id, &n);
	/* dropped: in the kernel (ring full, a fault); lost: after, at a sink. */
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:i}",
			 "captured", (json_int_t)n.captured,
			 "responses", (json_int_t)n.responses,
			 "dropped", (json_int_t)n.dropped,
			 "truncated", (json_int_t)n.truncated,
			 "sent", (json_int_t)c->pt[id].sent,
			 "lost", (json_int_t)c->pt[id].lost,
			 "rate", (int)c->pt[id].rate);
}

void capture__heartbeat(struct capture *c, int id, struct sds_hb_point *hp)
{
	struct sds_copy_count n;
	uint64_t now[3];

	if (!c || id < 0 || id >= c->env.probes->npoints || !c->pt[id].able)
		return;
	capture__counts(c, id, &n);
	now[0] = n.captured;
	now[1] = n.dropped + c->pt[id].lost;
	now[2] = n.truncated;
	hp->copy_captured = now[0] - c->pt[id].hb_seen[0];
	hp->copy_dropped = now[1] - c->pt[id].hb_seen[1];
	hp->copy_truncated = now[2] - c->pt[id].hb_seen[2];
	memcpy(c->pt[id].hb_seen, now, sizeof(now));
}

/* Parse the points of a `record` request into @want; NULL, or the error reply. */
static char *record_points(const struct capture *c, const char *args,
			   uint8_t *want, json_t *names)
{
	char name[SDS_NAME_MAX + 1];
	const char *p = args;
	int id, n = 0;

	while (*p) {
		size_t len = strcspn(p, " ");

		if (!len) {
			p++;
			continue;
		}
		if (len > SDS_NAME_MAX)
			return conn_io_error("record: bad point name '%.64s...'", p);
		memcpy(name, p, len);
		name[len] = '\0';
		id = probes__find(c->env.probes, name);
		if (id < 0)
			return conn_io_error("record: no point '%s' in app '%s'", name,
					   c->env.app);
		if (!capture__able(c, id))
			return conn_io_error("record: point '%s' cannot be copied: give it :copy=BUF,LEN",
					   name);
		want[id] = 1;
		json_array_append_new(names, json_string(name));
		n++;
		p += len;
	}
	if (!n)
		return conn_io_error("record: name the points to record");
	return NULL;
}

char *capture__record(struct capture *c, struct pending *p, const char *args)
{
	struct recorder *r;
	json_t *names;
	char *err;

	if (p->uid != 0)
		return conn_io_error("record: permission denied: recording requests needs root (they may hold anything)");
	if (!c)
		return conn_io_error("record: traffic copy is off in this loader (no :copy= point, no libsds copy site)");
	r = recorder__new(c->rec, &err);
	if (!r)
		return err;
	names = json_array();
	if (!names) {
		recorder__drop(r);
		return conn_io_error("record: out of memory");
	}
	err = record_points(c, args, r->want, names);
	if (err) {
		json_decref(names);
		recorder__drop(r);
		return err;
	}
	err = recorder__start(r, p, names);
	if (err)
		return err;
	capture__tick(c);	/* its points capture from now on */
	return NULL;
}

short capture__recorder_events(const struct capture *c, int i, int *fd)
{
	if (!c) {
		*fd = -1;
		return 0;
	}
	return recorder__events(&c->rec[i], fd);
}

void capture__recorder_event(struct capture *c, int i, short revents)
{
	if (c && recorder__event(&c->rec[i], revents))
		capture__tick(c);
}
