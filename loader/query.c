// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * query.c - the commands that ask a running loader over its control
 * socket: list, stats, top, hist.  They need no privilege beyond access
 * to the socket.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "cmd.h"
#include "ctl.h"
#include "names.h"
#include "window.h"

#define MAX_APPS	256

/* Options shared by the query commands. */
struct query_env {
	const char *cmd;	/* the command's name, for messages */
	const char *group;	/* --group */
	const char *app;	/* --app */
	bool json;		/* --json */
	long interval;		/* --interval S (top, hist) */
	long count;		/* --count N (top, hist); 0: forever */
};

static int parse_query_options(int argc, char **argv, struct query_env *q,
			       const char *usage)
{
	static const struct option opts[] = {
		{ "group", required_argument, NULL, 'g' },
		{ "app", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	q->cmd = argv[0];	/* "stats", "top", ...: main passes argv from the command */

	optind = 1;
	while ((c = getopt_long(argc, argv, "g:a:ji:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			if (!sds_name_valid(optarg))
				return cmd_err("bad --group '%s': use 1-64 of [A-Za-z0-9_-]", optarg);
			q->group = optarg;
			break;
		case 'a':
			if (!sds_name_valid(optarg))
				return cmd_err("bad --app '%s': use 1-64 of [A-Za-z0-9_-]", optarg);
			q->app = optarg;
			break;
		case 'j':
			q->json = true;
			break;
		case 'i':
			if (cmd_parse_long(optarg, 1, 3600, &q->interval))
				return cmd_err("bad --interval '%s': expected seconds 1..3600", optarg);
			break;
		case 'c':
			if (cmd_parse_long(optarg, 1, LONG_MAX, &q->count))
				return cmd_err("bad --count '%s': expected a positive integer", optarg);
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			return cmd_err("%s: bad option (see sds-bpf %s --help)",
				       argv[0], argv[0]);
		}
	}
	return 0;
}

/* Ask the one live loader that @q names; the reply is parsed JSON. */
static json_t *ask(const struct query_env *q, const char *req)
{
	struct ctl_app one;

	if (cmd_resolve(q->cmd, q->group, q->app, &one))
		return NULL;
	return cmd_request(&one, req);
}

/*
 * @req's reply printed as the loader wrote it (one JSON line): at 1,024
 * points a `stats` is ~0.5 MB, and parsing it to print it again took
 * longer than the loader took to build it.
 */
static int ask_print(const struct query_env *q, const char *req)
{
	struct ctl_app one;
	char *raw;
	size_t n;

	if (cmd_resolve(q->cmd, q->group, q->app, &one))
		return 1;
	raw = cmd_request_raw(&one, req);
	if (!raw)
		return 1;
	n = strlen(raw);
	while (n && (raw[n - 1] == '\n' || raw[n - 1] == '\r'))
		n--;
	fwrite(raw, 1, n, stdout);
	putchar('\n');
	free(raw);
	return 0;
}

static long long jint(json_t *o, const char *path)
{
	char key[64];
	const char *dot;

	while ((dot = strchr(path, '.'))) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		o = json_object_get(o, key);
		path = dot + 1;
	}
	return json_integer_value(json_object_get(o, path));
}

static const char *jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* "1.2ms"-style latency in at most 7 characters. */
static const char *fmt_ns(long long ns, char *buf, size_t len)
{
	if (ns <= 0)
		snprintf(buf, len, "-");
	else if (ns < 10000)
		snprintf(buf, len, "%lldns", ns);
	else if (ns < 10000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 10000000000LL)
		snprintf(buf, len, "%.1fms", ns / 1e6);
	else
		snprintf(buf, len, "%.1fs", ns / 1e9);
	return buf;
}

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

/* A build-id, "-" if none. */
static const char *short_build(const char *id)
{
	return *id ? id : "-";
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

	if (!jint(r, "builds.deploys") && !jint(r, "builds.rejected"))
		return;
	printf("builds:");
	/* The current one first, then the old ones still probed. */
	for (pass = 1; pass >= 0; pass--)
		json_array_foreach(json_object_get(b, "list"), i, e) {
			if (json_is_true(json_object_get(e, "current")) != pass)
				continue;
			printf("%s %.12s (%s, %lld points)", n++ ? "," : "",
			       short_build(jstr(e, "build_id")),
			       pass ? "current" : "old", jint(e, "points"));
		}
	printf("; %lld deploys followed, %lld files not followed\n",
	       jint(r, "builds.deploys"), jint(r, "builds.rejected"));
}

static const char stats_usage[] =
"Usage: sds-bpf stats [--group G] [--app NAME] [--json]\n"
"\n"
"Counters of every point of an attached app: totals since attach, the\n"
"10-s sliding window, concurrency and latency percentiles, and the\n"
"probes' estimated cost (OVERHEAD: site cost x calls/s, as a share of one\n"
"CPU; attach --max-overhead).  Once TARGET was replaced (a deploy), a\n"
"line says its builds (build-ids) still counted (--json: \"builds\").\n"
"With neither option and one app attached, that one.\n";

int do_stats(int argc, char **argv)
{
	struct query_env q = {};
	json_t *r, *p;
	size_t i;
	char a[16], b[16], c[16], d[24];

	if (parse_query_options(argc, argv, &q, stats_usage))
		return 1;
	if (optind < argc)
		return cmd_err("stats: unexpected argument '%s'", argv[optind]), 1;
	if (q.json)
		return ask_print(&q, "stats");
	r = ask(&q, "stats");
	if (!r)
		return 1;
	printf("app %s, group %s, loader pid %lld, target %s\n",
	       jstr(r, "app"), jstr(r, "group"), jint(r, "pid"), jstr(r, "target"));
	/* Only when the loader refused a client: the usual table stays as it was. */
	if (jint(r, "refused.connections") + jint(r, "refused.sessions") +
	    jint(r, "refused.points") + jint(r, "refused.files") +
	    jint(r, "refused.denied") + jint(r, "refused.slow"))
		printf("refused: connections %lld, sessions %lld, points %lld, "
		       "files %lld, denied %lld, slow %lld\n",
		       jint(r, "refused.connections"), jint(r, "refused.sessions"),
		       jint(r, "refused.points"), jint(r, "refused.files"),
		       jint(r, "refused.denied"), jint(r, "refused.slow"));
	print_builds(r);
	printf("%-16s %-8s %-10s %10s %8s %8s %8s %8s %5s %7s %7s %8s %-14s %s\n", "POINT",
	       "SITE", "RETURNS", "VISITS", "ERRORS", "TIMEOUTS", "DOWNGR", "WIN-VIS",
	       "CONC", "P50", "P99", "OVERHEAD", "COPIED/DROP", "STATE");
	json_array_foreach(json_object_get(r, "points"), i, p) {
		/* Traffic copy: captured/dropped (ring, fault, sink); "-": cannot copy. */
		if (json_object_get(p, "copy"))
			snprintf(d, sizeof(d), "%lld/%lld", jint(p, "copy.captured"),
				 jint(p, "copy.dropped") + jint(p, "copy.lost"));
		else
			snprintf(d, sizeof(d), "-");
		printf("%-16s %-8s %-10s %10lld %8lld %8lld %8lld %8lld %5lld %7s %7s %8s %-14s %s\n",
		       jstr(p, "name"), jstr(p, "site"),
		       *jstr(p, "returns") ? jstr(p, "returns") : "-",
		       jint(p, "total.visits"), jint(p, "total.exceptions"),
		       jint(p, "total.timeouts"), jint(p, "total.downgrades"),
		       jint(p, "window.visits"), jint(p, "concurrency"),
		       fmt_ns(jint(p, "latency_ns.p50"), a, sizeof(a)),
		       fmt_ns(jint(p, "latency_ns.p99"), b, sizeof(b)),
		       fmt_pct(p, c, sizeof(c)), d, state_str(p));
	}
	/* Fail-fast: a line per point that has it, the table kept as it was. */
	json_array_foreach(json_object_get(r, "points"), i, p) {
		json_t *ff = json_object_get(p, "failfast");

		if (!ff)
			continue;
		printf("failfast %s: %s (%s, %s) failed %lld, drilled %lld, probes %lld%s\n",
		       jstr(p, "name"), jstr(ff, "ops"), jstr(ff, "errno_socket"),
		       jstr(ff, "errno_file"), jint(ff, "denied"),
		       jint(ff, "drilled"), jint(ff, "probes"),
		       json_is_true(json_object_get(ff, "failing")) ? ", failing" : "");
	}
	json_decref(r);
	return 0;
}

static const char top_usage[] =
"Usage: sds-bpf top [--group G] [--app NAME] [--interval S] [--count N]\n"
"\n"
"Live table of an app's points: calls, errors and timeouts per second,\n"
"concurrency, p50 and p99 latency, the probes' estimated cost.  Refreshed every S seconds (1); stops\n"
"after N refreshes (default: until interrupted).\n";

static void sleep_s(long s)
{
	struct timespec ts = { .tv_sec = s };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int do_top(int argc, char **argv)
{
	struct query_env q = { .interval = 1 };
	json_t *prev = NULL, *r, *p, *pp;
	bool tty = isatty(STDOUT_FILENO);
	long n;
	size_t i;
	char a[16], b[16], c[16];

	if (parse_query_options(argc, argv, &q, top_usage))
		return 1;
	if (optind < argc)
		return cmd_err("top: unexpected argument '%s'", argv[optind]), 1;
	/* A baseline first, so the first table already shows rates. */
	prev = ask(&q, "stats");
	if (!prev)
		return 1;
	for (n = 0; !q.count || n < q.count; n++) {
		time_t now;
		char tbuf[16];

		sleep_s(q.interval);
		now = time(NULL);
		r = ask(&q, "stats");
		if (!r) {
			json_decref(prev);
			return 1;
		}
		strftime(tbuf, sizeof(tbuf), "%H:%M:%S", localtime(&now));
		if (tty)
			fputs("\033[H\033[2J", stdout);
		else if (n)
			putchar('\n');
		printf("%s  %s/%s  pid %lld\n", tbuf, jstr(r, "group"),
		       jstr(r, "app"), jint(r, "pid"));
		printf("%-14s %9s %8s %7s %5s %8s %8s %8s %-19s\n", "POINT", "CALLS/s",
		       "ERR/s", "TMO/s", "CONC", "P50", "P99", "OVERHEAD", "STATE");
		json_array_foreach(json_object_get(r, "points"), i, p) {
			long long dv = 0, de = 0, dt = 0;

			pp = prev ? json_array_get(json_object_get(prev, "points"), i) : NULL;
			if (pp) {
				dv = jint(p, "total.visits") - jint(pp, "total.visits");
				de = jint(p, "total.exceptions") - jint(pp, "total.exceptions");
				dt = jint(p, "total.timeouts") - jint(pp, "total.timeouts");
			}
			printf("%-14.14s %9.1f %8.1f %7.1f %5lld %8s %8s %8s %-19.19s\n",
			       jstr(p, "name"), (double)dv / q.interval,
			       (double)de / q.interval, (double)dt / q.interval,
			       jint(p, "concurrency"),
			       fmt_ns(jint(p, "latency_ns.p50"), a, sizeof(a)),
			       fmt_ns(jint(p, "latency_ns.p99"), b, sizeof(b)),
			       fmt_pct(p, c, sizeof(c)), state_str(p));
		}
		fflush(stdout);
		json_decref(prev);
		prev = r;
	}
	json_decref(prev);
	return 0;
}

/* The funclatency layout: "     nsecs  : count  distribution". */
static void print_log2_hist(const long long *v, int n)
{
	long long max = 0;
	int i, last = -1, first = -1, w;

	for (i = 0; i < n; i++) {
		if (v[i] > max)
			max = v[i];
		if (v[i]) {
			last = i;
			if (first < 0)
				first = i;
		}
	}
	printf("%20s : count     distribution\n", "nsecs");
	if (last < 0)
		return;
	for (i = first; i <= last; i++) {
		unsigned long long lo = i ? 1ULL << i : 0;
		unsigned long long hi = (i == 63) ? ~0ULL : (2ULL << i) - 1;
		char range[48];
		int stars = max ? (int)(v[i] * 40 / max) : 0;

		snprintf(range, sizeof(range), "%llu -> %llu", lo, hi);
		printf("%20s : %-9lld |", range, v[i]);
		for (w = 0; w < 40; w++)
			putchar(w < stars ? '*' : ' ');
		puts("|");
	}
}

static const char hist_usage[] =
"Usage: sds-bpf hist [--group G] [--app NAME] POINT [--interval S] [--count N] [--json]\n"
"\n"
"Log2 latency histogram of POINT's completed calls in nanoseconds: since\n"
"attach, or with --interval the calls of each interval, N times.\n";

int do_hist(int argc, char **argv)
{
	struct query_env q = {};
	long long cur[SDS_HIST_BUCKETS], last[SDS_HIST_BUCKETS] = {};
	char req[CTL_REQ_MAX];
	const char *point;
	long n, rounds;
	json_t *r, *v;
	size_t i;

	if (parse_query_options(argc, argv, &q, hist_usage))
		return 1;
	if (optind >= argc)
		return cmd_err("hist: missing POINT (see sds-bpf hist --help)"), 1;
	point = argv[optind++];
	if (optind < argc)
		return cmd_err("hist: unexpected argument '%s'", argv[optind]), 1;
	if (!sds_point_name_valid(point))
		return cmd_err("hist: bad point name '%s'", point), 1;
	snprintf(req, sizeof(req), "hist %s", point);
	rounds = q.interval ? (q.count ? q.count : LONG_MAX) : 1;

	for (n = 0; n < rounds; n++) {
		if (q.interval) {
			/* First a baseline, then the calls of each interval. */
			if (n == 0) {
				r = ask(&q, req);
				if (!r)
					return 1;
				json_array_foreach(json_object_get(r, "buckets"), i, v)
					if (i < SDS_HIST_BUCKETS)
						last[i] = json_integer_value(v);
				json_decref(r);
			}
			sleep_s(q.interval);
		}
		r = ask(&q, req);
		if (!r)
			return 1;
		if (q.json && !q.interval) {
			json_dumpf(r, stdout, JSON_COMPACT);
			putchar('\n');
			json_decref(r);
			return 0;
		}
		memset(cur, 0, sizeof(cur));
		json_array_foreach(json_object_get(r, "buckets"), i, v) {
			if (i >= SDS_HIST_BUCKETS)
				break;
			cur[i] = json_integer_value(v) - last[i];
			last[i] = json_integer_value(v);
		}
		json_decref(r);
		if (q.json) {
			json_t *o = json_object(), *b = json_array();

			for (i = 0; i < SDS_HIST_BUCKETS; i++)
				json_array_append_new(b, json_integer(cur[i]));
			json_object_set_new(o, "point", json_string(point));
			json_object_set_new(o, "unit", json_string("ns"));
			json_object_set_new(o, "buckets", b);
			json_dumpf(o, stdout, JSON_COMPACT);
			putchar('\n');
			json_decref(o);
		} else {
			if (n)
				putchar('\n');
			printf("point %s\n", point);
			print_log2_hist(cur, SDS_HIST_BUCKETS);
		}
		fflush(stdout);
	}
	return 0;
}

static const char list_usage[] =
"Usage: sds-bpf list [--group G] [--json]\n"
"\n"
"The apps attached on this host: group, app, loader pid, points.\n";

int do_list(int argc, char **argv)
{
	struct query_env q = {};
	struct ctl_app apps[MAX_APPS];
	json_t *all = json_array(), *r, *p;
	json_error_t jerr;
	int n, i;
	size_t k;

	if (parse_query_options(argc, argv, &q, list_usage)) {
		json_decref(all);
		return 1;
	}
	n = ctl_find(q.group, q.app, apps, MAX_APPS);
	for (i = 0; i < n; i++) {
		char *raw = ctl_request(apps[i].sock, "info");

		if (!raw)
			continue;	/* stale socket */
		r = json_loads(raw, 0, &jerr);
		free(raw);
		if (!r)
			continue;
		json_object_del(r, "target");
		json_object_set_new(r, "socket", json_string(apps[i].sock));
		json_array_append_new(all, r);
	}
	if (q.json) {
		json_dumpf(all, stdout, JSON_COMPACT);
		putchar('\n');
	} else {
		printf("%-16s %-16s %8s  %s\n", "GROUP", "APP", "PID", "POINTS");
		json_array_foreach(all, k, r) {
			size_t j;

			printf("%-16s %-16s %8lld  ", jstr(r, "group"),
			       jstr(r, "app"), jint(r, "pid"));
			json_array_foreach(json_object_get(r, "points"), j, p)
				printf("%s%s", j ? "," : "", json_string_value(p));
			putchar('\n');
		}
	}
	json_decref(all);
	return 0;
}

static const char events_usage[] =
"Usage: sds-bpf events [--group G] [--app NAME] [--json] [--count N]\n"
"\n"
"Downgrade transitions of an app's points as they happen: the point, the\n"
"reason, started or ended, and when; and TARGET's deploys (reason deploy:\n"
"build old -> new build-id, unresolved, rejected, retired; docs/DEPLOY.md).  Prints the ones kept since attach,\n"
"then follows; stops after N events with --count.  --json prints one\n"
"object per line.\n";

/* The rest of a deploy event's line: " OLD -> NEW: detail". */
static void print_deploy(json_t *e)
{
	if (strcmp(jstr(e, "reason"), "deploy")) {
		putchar('\n');
		return;
	}
	printf(" %s -> %s: %s\n", short_build(jstr(e, "old_build")),
	       short_build(jstr(e, "new_build")), jstr(e, "detail"));
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int do_events(int argc, char **argv)
{
	struct query_env q = {};
	uint64_t since = 0;
	long printed = 0;
	char req[64];

	if (parse_query_options(argc, argv, &q, events_usage))
		return 1;
	if (optind < argc)
		return cmd_err("events: unexpected argument '%s'", argv[optind]), 1;
	if (!q.json) {
		printf("%-23s %-16s %-9s %s\n", "TIME", "POINT", "EVENT", "REASON");
		fflush(stdout);
	}
	for (;;) {
		json_t *r, *e;
		size_t i;

		snprintf(req, sizeof(req), "events %llu", (unsigned long long)since);
		r = ask(&q, req);
		if (!r)
			return 1;
		json_array_foreach(json_object_get(r, "events"), i, e) {
			if (q.json) {
				json_dumpf(e, stdout, JSON_COMPACT);
				putchar('\n');
			} else {
				long long ms = jint(e, "time_ms");
				time_t t = ms / 1000;
				char tbuf[32];

				strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M:%S",
					 localtime(&t));
				printf("%s.%03lld %-16s %-9s %s", tbuf, ms % 1000,
				       *jstr(e, "point") ? jstr(e, "point") : "-",
				       jstr(e, "event"), jstr(e, "reason"));
				print_deploy(e);
			}
			if (q.count && ++printed >= q.count) {
				json_decref(r);
				fflush(stdout);
				return 0;
			}
		}
		fflush(stdout);
		since = jint(r, "next");
		json_decref(r);
		sleep_ms(100);
	}
}
