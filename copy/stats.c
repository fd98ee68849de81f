// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* stats.c - the counters of a running server, as JSON and as a table. */
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"
#include "serve.h"

static json_t *endpoint_json(const struct copy_endpoint *ep)
{
	int i, open = 0;

	for (i = 0; i < ep->nconns; i++)
		open += ep->conns[i].fd >= 0;
	return json_pack("{s:s, s:i, s:I, s:I, s:I, s:i}",
			 "addr", ep->cfg.addr.text, "weight", ep->cfg.weight,
			 "dispatched", (json_int_t)ep->dispatched,
			 "errors", (json_int_t)ep->errors,
			 "queued", (json_int_t)ep->qlen, "connections", open);
}

static json_t *plan_json(const struct copy_plan *p)
{
	const struct copy_counters *c = &p->c;
	json_t *pts = json_array(), *eps = json_array();
	uint64_t queued = 0, flight = 0;
	int i, k;

	for (i = 0; i < p->cfg.npoints; i++)
		json_array_append_new(pts, json_string(p->cfg.points[i]));
	for (i = 0; i < p->neps; i++) {
		queued += p->eps[i].qlen;
		for (k = 0; k < p->eps[i].nconns; k++)
			flight += p->eps[i].conns[k].nitems;
		json_array_append_new(eps, endpoint_json(&p->eps[i]));
	}
	return json_pack("{s:s, s:s, s:o, s:i, s:s, s:b, s:I, s:I, s:s,"
			 " s:I, s:I, s:I, s:I, s:I, s:I,"
			 " s:{s:I, s:I, s:I, s:I, s:I, s:I}, s:o, s:o}",
			 "name", p->cfg.name, "app", p->cfg.app, "points", pts,
			 "amplification", p->cfg.amplification,
			 "framing", plan_framing_name(p->cfg.framing),
			 "writes", p->cfg.writes, "rate", (json_int_t)p->cfg.rate,
			 "expires_at", (json_int_t)p->cfg.expires_at,
			 "state", p->expired ? "expired" : "active",
			 "received", (json_int_t)c->received,
			 "copies", (json_int_t)c->copies,
			 "dispatched", (json_int_t)c->dispatched,
			 "queued", (json_int_t)queued,
			 "in_flight", (json_int_t)flight,
			 "shadow_errors", (json_int_t)c->shadow_errors,
			 "dropped", "write", (json_int_t)c->drop_write,
			 "expired", (json_int_t)c->drop_expired,
			 "rate", (json_int_t)c->drop_rate,
			 "queue", (json_int_t)c->drop_queue,
			 "shadow", (json_int_t)c->drop_shadow,
			 "reload", (json_int_t)c->drop_reload, "diff", live_stats_json(p),
			 "endpoints", eps);
}

char *copy_stats_json(const struct copy_server *s)
{
	json_t *plans = json_array(), *root;
	char *out;
	int i;

	for (i = 0; i < s->nplans; i++)
		json_array_append_new(plans, plan_json(&s->plans[i]));
	root = json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
			 "listen", s->listen_text, "senders", s->nsenders,
			 "records", (json_int_t)s->records,
			 "unmatched", (json_int_t)s->unmatched,
			 "bad_streams", (json_int_t)s->bad_streams,
			 "refused", (json_int_t)s->refused,
			 "refused_addr", (json_int_t)s->refused_addr,
			 "timed_out", (json_int_t)s->timed_out,
			 "auth_failed", (json_int_t)s->auth_failed,
			 "reloads", (json_int_t)s->reloads,
			 "reload_errors", (json_int_t)s->reload_errors,
			 "queued_bytes", (json_int_t)s->mem, "plans", plans);
	if (!root)
		return NULL;
	/* Only in --admin mode: the file mode's document is unchanged. */
	if (s->admin)
		json_object_set_new(root, "admin", copy_admin_json(s));
	out = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return out;
}

static json_int_t num(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* The table: one line per plan, then one per endpoint under it. */
static void stats_print(json_t *root)
{
	json_t *p, *e, *d;
	size_t i, k;

	printf("records %lld  unmatched %lld  bad streams %lld  senders %lld  reloads %lld (refused %lld)\n",
	       (long long)num(root, "records"), (long long)num(root, "unmatched"),
	       (long long)num(root, "bad_streams"), (long long)num(root, "senders"),
	       (long long)num(root, "reloads"), (long long)num(root, "reload_errors"));
	printf("%-20s %-8s %4s %10s %10s %10s %8s %8s  %s\n", "PLAN", "STATE", "xN",
	       "RECEIVED", "DISPATCHED", "QUEUED", "ERRORS", "DROPPED",
	       "(write/expired/rate/queue/shadow/reload)");
	json_array_foreach(json_object_get(root, "plans"), i, p) {
		d = json_object_get(p, "dropped");
		printf("%-20s %-8s %4lld %10lld %10lld %10lld %8lld %8lld  (%lld/%lld/%lld/%lld/%lld/%lld)\n",
		       json_string_value(json_object_get(p, "name")),
		       json_string_value(json_object_get(p, "state")),
		       (long long)num(p, "amplification"), (long long)num(p, "received"),
		       (long long)num(p, "dispatched"), (long long)num(p, "queued"),
		       (long long)num(p, "shadow_errors"),
		       (long long)(num(d, "write") + num(d, "expired") + num(d, "rate") +
				   num(d, "queue") + num(d, "shadow") + num(d, "reload")),
		       (long long)num(d, "write"), (long long)num(d, "expired"),
		       (long long)num(d, "rate"), (long long)num(d, "queue"),
		       (long long)num(d, "shadow"), (long long)num(d, "reload"));
		json_array_foreach(json_object_get(p, "endpoints"), k, e)
			printf("  %-32s w%-4lld %10lld dispatched %8lld errors %8lld queued %2lld conns\n",
			       json_string_value(json_object_get(e, "addr")),
			       (long long)num(e, "weight"), (long long)num(e, "dispatched"),
			       (long long)num(e, "errors"), (long long)num(e, "queued"),
			       (long long)num(e, "connections"));
	}
}

static const char stats_usage[] =
	"usage: sds-copy stats [--name NAME] [--json]\n"
	"  Print the counters of the running `sds-copy serve --name NAME`\n"
	"  (default \"default\"), found by its control socket in $SDS_RUN_DIR\n"
	"  (else /run/sds).  --json: the document docs/COPY.md describes.\n";

int copy_stats_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *name = "default";
	char err[512], *reply;
	json_t *root;
	bool as_json = false;
	int c;

	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'n': name = optarg; break;
		case 'j': as_json = true; break;
		case 'h': fputs(stats_usage, stdout); return 0;
		default: fputs(stats_usage, stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "sds-copy: stats: unexpected argument %s\n", argv[optind]);
		return 2;
	}
	reply = copy_ctl_request(name, err, sizeof(err));
	if (!reply) {
		fprintf(stderr, "sds-copy: stats: %s\n", err);
		return 1;
	}
	root = json_loads(reply, 0, NULL);
	if (!root) {
		fprintf(stderr, "sds-copy: stats: the server's reply is not JSON (%zu bytes)\n",
			strlen(reply));
		free(reply);
		return 1;
	}
	if (as_json)
		printf("%s\n", reply);
	else
		stats_print(root);
	json_decref(root);
	free(reply);
	return 0;
}
