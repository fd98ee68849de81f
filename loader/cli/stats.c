// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cli/stats.c - `stats` (an app's counters, once) and `top` (their
 * rates, refreshed), over the loader's "stats" reply.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "cli/cmd.h"
#include "cli/query.h"

/* The probes' estimated share of a CPU: "12.3%", "0.014%". */
static const char *fmt_pct(json_t *p, char *buf, size_t len)
{
	double v = json_number_value(json_object_get(json_object_get(p, "overhead"),
						     "estimated_pct"));

	snprintf(buf, len, v >= 10 ? "%.1f%%" : "%.3f%%", v);
	return buf;
}

static const char *state_str(json_t *p)
{
	json_t *st = json_object_get(p, "state");

	/* Not counting at all outranks a downgrade. */
	if (json_is_true(json_object_get(json_object_get(p, "overhead"), "suspended")))
		return "suspended: overhead";
	if (!json_is_true(json_object_get(st, "downgraded")))
		return "ok";
	return json_string_value(json_object_get(st, "reason")) ?: "down";
}

/*
 * The builds of TARGET, once it has been deployed over (docs/DEPLOY.md):
 * "builds: 1a2b3c4d5e6f (current, 2 points), 9f8e7d6c5b4a (old, 2 points); 1 deploy".
 */
static void print_builds(json_t *r)
{
	json_t *b = json_object_get(r, "builds"), *e;
	int pass, n = 0;
	size_t i;

	if (!query_jint(r, "builds.deploys") && !query_jint(r, "builds.rejected"))
		return;
	printf("builds:");
	/* The current one first, then the old ones still probed. */
	for (pass = 1; pass >= 0; pass--)
		json_array_foreach(json_object_get(b, "list"), i, e) {
			if (json_is_true(json_object_get(e, "current")) != pass)
				continue;
			printf("%s %.12s (%s, %lld points)", n++ ? "," : "",
			       query_short_build(query_jstr(e, "build_id")),
			       pass ? "current" : "old", query_jint(e, "points"));
		}
	printf("; %lld deploys followed, %lld files not followed\n",
	       query_jint(r, "builds.deploys"), query_jint(r, "builds.rejected"));
}

/* A share of "pressure" (a JSON number of percent, or null) as "12.3%" or "-". */
static const char *fmt_share(json_t *v, char *buf, size_t len)
{
	if (json_is_number(v))
		snprintf(buf, len, "%.1f%%", json_number_value(v));
	else
		snprintf(buf, len, "-");
	return buf;
}

/*
 * Host pressure rules (docs/PRESSURE.md), only when the strategies have
 * some: the host's cpu/memory/io "some" share over the last second, then
 * a line per rule.
 *   pressure (host): cpu 97.1%, memory 0.0%, io -
 *   pressure rule 0: cpu some downgrade firing at 100.0% for 2.4 s (fired 1)
 */
static void print_pressure(json_t *r)
{
	json_t *p = json_object_get(r, "pressure"), *res, *rule;
	static const char *const names[] = { "cpu", "memory", "io" };
	char a[16];
	size_t i;

	if (!json_array_size(json_object_get(p, "rules")))
		return;
	res = json_object_get(p, "resources");
	printf("pressure (%s):", query_jstr(p, "scope"));
	for (i = 0; i < 3; i++)
		printf("%s %s %s", i ? "," : "", names[i],
		       fmt_share(json_object_get(json_object_get(res, names[i]), "some_pct"),
				 a, sizeof(a)));
	putchar('\n');
	json_array_foreach(json_object_get(p, "rules"), i, rule) {
		bool on = json_is_true(json_object_get(rule, "firing"));

		printf("pressure rule %lld: %s %s %s %s at %s", query_jint(rule, "rule"),
		       query_jstr(rule, "resource"), query_jstr(rule, "kind"),
		       query_jstr(rule, "action"), on ? "firing" : "clear",
		       fmt_share(json_object_get(rule, "pct"), a, sizeof(a)));
		if (json_is_integer(json_object_get(rule, "since_ms")))
			printf(" for %.1f s", query_jint(rule, "since_ms") / 1000.0);
		printf(" (fired %lld)\n", query_jint(rule, "fired"));
	}
}

/* Adaptive concurrency: a line per adaptive point (docs/ADAPTIVE.md). */
static void print_adaptive(json_t *r)
{
	json_t *p, *ad;
	size_t i;
	char a[16], b[16];

	json_array_foreach(json_object_get(r, "points"), i, p) {
		ad = json_object_get(p, "adaptive");
		if (!ad)
			continue;
		printf("adaptive %s: %s limit %lld [%lld..%lld], by %s %s (no-load %s)%s\n",
		       query_jstr(p, "name"), query_jstr(ad, "algorithm"),
		       query_jint(ad, "limit"), query_jint(ad, "min"),
		       query_jint(ad, "max"), query_jstr(ad, "signal"),
		       query_fmt_ns(query_jint(ad, "latency_ns"), a, sizeof(a)),
		       query_fmt_ns(query_jint(ad, "no_load_ns"), b, sizeof(b)),
		       json_is_true(json_object_get(ad, "remeasuring")) ?
		       ", re-measuring" : "");
	}
}

/*
 * Where the completed calls' time went (docs/SPLIT.md): a line per point
 * that has split calls, the mean of a call, after the table; or one line
 * saying why there is no split.
 */
static void print_split(json_t *r)
{
	json_t *p;
	size_t i;
	char a[16], b[16], c[16];

	if (!json_is_true(json_object_get(json_object_get(r, "split"), "on"))) {
		printf("split: unavailable: %s\n",
		       query_jstr(json_object_get(r, "split"), "why"));
		return;
	}
	json_array_foreach(json_object_get(r, "points"), i, p) {
		long long n = query_jint(p, "split.calls");

		if (n <= 0)
			continue;
		printf("split %s: %lld calls, a call's mean on-CPU %s, run queue %s, blocked %s\n",
		       query_jstr(p, "name"), n,
		       query_fmt_ns(query_jint(p, "split.on_cpu_ns") / n, a, sizeof(a)),
		       query_fmt_ns(query_jint(p, "split.runqueue_ns") / n, b, sizeof(b)),
		       query_fmt_ns(query_jint(p, "split.blocked_ns") / n, c, sizeof(c)));
	}
}

/*
 * --keys POINT and --top N, the keys' own options, taken out of @argv
 * before the shared ones (as hist's --split): 0, or 1 after an error.
 */
static int keys_options(const char *cmd, int *argc, char **argv,
			const char **point, long *top)
{
	int k, j;

	for (k = j = 1; k < *argc; k++) {
		if (!strcmp(argv[k], "--keys") || !strcmp(argv[k], "--top")) {
			if (k + 1 >= *argc)
				return cmd_err("%s: %s needs a value", cmd, argv[k]), 1;
			if (argv[k][2] == 'k') {
				*point = argv[++k];
			} else {
				char *end;

				*top = strtol(argv[++k], &end, 10);
				if (*end || end == argv[k] || *top < 1 || *top > 1000)
					return cmd_err("%s: --top must be an integer 1..1000, not '%s'",
						       cmd, argv[k]), 1;
			}
			continue;
		}
		argv[j++] = argv[k];
	}
	*argc = j;
	return 0;
}

static const char stats_usage[] =
"Usage: sds-bpf stats [--group G] [--app NAME] [--json]\n"
"       sds-bpf stats --keys POINT [--top N] [--group G] [--app NAME] [--json]\n"
"\n"
"With --keys, a keyed point's N heaviest keys (10; at most 1000) over the\n"
"10-s window: calls, errors, downgrades, rate, mean and p99 latency, and\n"
"its table's keys, evictions and unreadable keys (docs/KEYS.md).\n"
"\n"
"Counters of every point of an attached app: totals since attach, the\n"
"10-s sliding window, the calls in flight past their timeout (STUCK: the\n"
"window's timeouts until they return), concurrency and latency\n"
"percentiles, and the probes' estimated cost (OVERHEAD: site cost x\n"
"calls/s, as a share of one CPU; attach --max-overhead).  An adaptive\n"
"point's line says its limit and the latency it steers by\n"
"(docs/ADAPTIVE.md), and a line a point where the calls' time went: a\n"
"call's mean time on a CPU, on the run queue, blocked (docs/SPLIT.md).\n"
"Once TARGET was replaced (a deploy), a\n"
"line says its builds (build-ids) still counted (--json: \"builds\").\n"
"With host pressure rules in the strategies, a line says the host's\n"
"pressure and one each rule's state (--json: \"pressure\").\n"
"With neither option and one app attached, that one.\n";

int do_stats(int argc, char **argv)
{
	struct query_env q = {};
	json_t *r, *p;
	size_t i;
	char a[16], b[16], c[16], d[24];
	const char *keys = NULL;
	long top = 0;

	if (keys_options("stats", &argc, argv, &keys, &top) ||
	    query_parse_options(argc, argv, &q, stats_usage))
		return 1;
	if (optind < argc)
		return cmd_err("stats: unexpected argument '%s'", argv[optind]), 1;
	if (top && !keys)
		return cmd_err("stats: --top needs --keys POINT"), 1;
	if (keys)
		return stats_keys_once(&q, keys, top ? top : 10);
	if (q.json)
		return query_ask_print(&q, "stats");
	r = query_ask(&q, "stats");
	if (!r)
		return 1;
	printf("app %s, group %s, loader pid %lld, target %s\n",
	       query_jstr(r, "app"), query_jstr(r, "group"), query_jint(r, "pid"), query_jstr(r, "target"));
	/* Only when the loader refused a client: the usual table stays as it was. */
	if (query_jint(r, "refused.connections") + query_jint(r, "refused.sessions") +
	    query_jint(r, "refused.points") + query_jint(r, "refused.files") +
	    query_jint(r, "refused.denied") + query_jint(r, "refused.slow"))
		printf("refused: connections %lld, sessions %lld, points %lld, "
		       "files %lld, denied %lld, slow %lld\n",
		       query_jint(r, "refused.connections"), query_jint(r, "refused.sessions"),
		       query_jint(r, "refused.points"), query_jint(r, "refused.files"),
		       query_jint(r, "refused.denied"), query_jint(r, "refused.slow"));
	print_builds(r);
	print_pressure(r);
	/* With --admin: the heartbeats and the push channel (docs/PUSH.md). */
	if (*query_jstr(r, "admin.push.state"))
		printf("admin: %lld periods sent, %lld failed posts; push %s%s%s (%lld changes, %lld syncs, %lld reconnects)%s%s\n",
		       query_jint(r, "admin.sent"), query_jint(r, "admin.failures"),
		       query_jstr(r, "admin.push.state"),
		       *query_jstr(r, "admin.push.url") ? " on " : "",
		       query_jstr(r, "admin.push.url"),
		       query_jint(r, "admin.push.wakes"), query_jint(r, "admin.push.syncs"),
		       query_jint(r, "admin.push.reconnects"),
		       *query_jstr(r, "admin.push.last_error") ? ": " : "",
		       query_jstr(r, "admin.push.last_error"));
	printf("%-16s %-8s %-10s %10s %8s %8s %5s %8s %8s %5s %7s %7s %8s %-14s %s\n", "POINT",
	       "SITE", "RETURNS", "VISITS", "ERRORS", "TIMEOUTS", "STUCK", "DOWNGR", "WIN-VIS",
	       "CONC", "P50", "P99", "OVERHEAD", "COPIED/DROP", "STATE");
	json_array_foreach(json_object_get(r, "points"), i, p) {
		/* Traffic copy: captured/dropped (ring, fault, sink); "-": cannot copy. */
		if (json_object_get(p, "copy"))
			snprintf(d, sizeof(d), "%lld/%lld", query_jint(p, "copy.captured"),
				 query_jint(p, "copy.dropped") + query_jint(p, "copy.lost"));
		else
			snprintf(d, sizeof(d), "-");
		printf("%-16s %-8s %-10s %10lld %8lld %8lld %5lld %8lld %8lld %5lld %7s %7s %8s %-14s %s\n",
		       query_jstr(p, "name"), query_jstr(p, "site"),
		       *query_jstr(p, "returns") ? query_jstr(p, "returns") : "-",
		       query_jint(p, "total.visits"), query_jint(p, "total.exceptions"),
		       query_jint(p, "total.timeouts"), query_jint(p, "stuck"),
		       query_jint(p, "total.downgrades"),
		       query_jint(p, "window.visits"), query_jint(p, "concurrency"),
		       query_fmt_ns(query_jint(p, "latency_ns.p50"), a, sizeof(a)),
		       query_fmt_ns(query_jint(p, "latency_ns.p99"), b, sizeof(b)),
		       fmt_pct(p, c, sizeof(c)), d, state_str(p));
	}
	/* Fail-fast: a line per point that has it, the table kept as it was. */
	json_array_foreach(json_object_get(r, "points"), i, p) {
		json_t *ff = json_object_get(p, "failfast");
		char lim[96] = "";

		if (!ff)
			continue;
		/* The limits' refusals only where they refused (docs/FAILFAST.md "Limits"). */
		if (query_jint(ff, "refused_concurrent") || query_jint(ff, "refused_token"))
			snprintf(lim, sizeof(lim), ", refused_concurrent %lld, refused_token %lld",
				 query_jint(ff, "refused_concurrent"),
				 query_jint(ff, "refused_token"));
		printf("failfast %s: %s (%s, %s) failed %lld, drilled %lld, probes %lld%s%s\n",
		       query_jstr(p, "name"), query_jstr(ff, "ops"), query_jstr(ff, "errno_socket"),
		       query_jstr(ff, "errno_file"), query_jint(ff, "denied"),
		       query_jint(ff, "drilled"), query_jint(ff, "probes"), lim,
		       json_is_true(json_object_get(ff, "failing")) ? ", failing" : "");
	}
	/* Key limits with nothing to block: the guard passes no key (docs/KEYS.md). */
	json_array_foreach(json_object_get(r, "points"), i, p)
		if (json_is_false(json_object_get(json_object_get(p, "key_limits"), "keys_seen")))
			printf("warning: point '%s' has key limits but its guard never passed a key (sds_should_downgrade_key, sds_enter_key: docs/KEYS.md)\n",
			       query_jstr(p, "name"));
	print_adaptive(r);
	print_split(r);
	json_decref(r);
	return 0;
}

static const char top_usage[] =
"Usage: sds-bpf top [--group G] [--app NAME] [--interval S] [--count N]\n"
"       sds-bpf top --keys POINT [--top N] [--group G] [--app NAME] [--interval S] [--count N]\n"
"\n"
"With --keys, a keyed point's N hottest keys (10): their calls and errors\n"
"per second, calls over the window and p99 latency (docs/KEYS.md).\n"
"\n"
"Live table of an app's points: calls, errors and timeouts per second,\n"
"calls stuck past their timeout now, concurrency, an adaptive point's limit, p50 and p99 latency, the probes' estimated cost.  Refreshed every S seconds (1); stops\n"
"after N refreshes (default: until interrupted).\n";

int do_top(int argc, char **argv)
{
	struct query_env q = { .interval = 1 };
	json_t *prev = NULL, *r, *p, *pp;
	bool tty = isatty(STDOUT_FILENO);
	long n;
	size_t i;
	char a[16], b[16], c[16];
	const char *keys = NULL;
	long top = 0;

	if (keys_options("top", &argc, argv, &keys, &top) ||
	    query_parse_options(argc, argv, &q, top_usage))
		return 1;
	if (optind < argc)
		return cmd_err("top: unexpected argument '%s'", argv[optind]), 1;
	if (top && !keys)
		return cmd_err("top: --top needs --keys POINT"), 1;
	if (keys)
		return stats_keys_top(&q, keys, top ? top : 10);
	/* A baseline first, so the first table already shows rates. */
	prev = query_ask(&q, "stats");
	if (!prev)
		return 1;
	for (n = 0; !q.count || n < q.count; n++) {
		r = query_top_next(&q, "stats", n, tty);
		if (!r) {
			json_decref(prev);
			return 1;
		}
		printf("%s/%s  pid %lld\n", query_jstr(r, "group"),
		       query_jstr(r, "app"), query_jint(r, "pid"));
		printf("%-14s %9s %8s %7s %5s %5s %5s %8s %8s %8s %-19s\n", "POINT", "CALLS/s",
		       "ERR/s", "TMO/s", "STUCK", "CONC", "LIMIT", "P50", "P99", "OVERHEAD", "STATE");
		json_array_foreach(json_object_get(r, "points"), i, p) {
			long long dv = 0, de = 0, dt = 0;
			char lim[16] = "-";

			pp = prev ? json_array_get(json_object_get(prev, "points"), i) : NULL;
			if (pp) {
				dv = query_jint(p, "total.visits") - query_jint(pp, "total.visits");
				de = query_jint(p, "total.exceptions") - query_jint(pp, "total.exceptions");
				dt = query_jint(p, "total.timeouts") - query_jint(pp, "total.timeouts");
			}
			/* An adaptive point's limit in force. */
			if (json_object_get(p, "adaptive"))
				snprintf(lim, sizeof(lim), "%lld",
					 query_jint(p, "adaptive.limit"));
			printf("%-14.14s %9.1f %8.1f %7.1f %5lld %5lld %5s %8s %8s %8s %-19.19s\n",
			       query_jstr(p, "name"), (double)dv / q.interval,
			       (double)de / q.interval, (double)dt / q.interval,
			       query_jint(p, "stuck"), query_jint(p, "concurrency"), lim,
			       query_fmt_ns(query_jint(p, "latency_ns.p50"), a, sizeof(a)),
			       query_fmt_ns(query_jint(p, "latency_ns.p99"), b, sizeof(b)),
			       fmt_pct(p, c, sizeof(c)), state_str(p));
		}
		fflush(stdout);
		json_decref(prev);
		prev = r;
	}
	json_decref(prev);
	return 0;
}
