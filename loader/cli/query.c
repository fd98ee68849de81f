// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * query.c - what the commands that ask a running loader over its control
 * socket share (query.h): their options, the request, the reply's fields;
 * and `list`.  They need no privilege beyond access to the socket.
 * The others: cli/stats.c (stats, top), cli/hist.c, cli/events.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "cli/cmd.h"
#include "serve/ctl.h"
#include "names.h"
#include "cli/query.h"

#define MAX_APPS	256

int query_parse_options(int argc, char **argv, struct query_env *q,
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
json_t *query_ask(const struct query_env *q, const char *req)
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
int query_ask_print(const struct query_env *q, const char *req)
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

long long query_jint(json_t *o, const char *path)
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

const char *query_jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* A build-id, "-" if none. */
const char *query_short_build(const char *id)
{
	return *id ? id : "-";
}

void query_sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

const char *query_fmt_ns(long long ns, char *buf, size_t len)
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

json_t *query_top_next(const struct query_env *q, const char *req, long n,
		       bool tty)
{
	char tbuf[16];
	time_t now;
	json_t *r;

	query_sleep_ms(q->interval * 1000L);
	now = time(NULL);
	r = query_ask(q, req);
	if (!r)
		return NULL;
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", localtime(&now));
	if (tty)
		fputs("\033[H\033[2J", stdout);
	else if (n)
		putchar('\n');
	printf("%s  ", tbuf);
	return r;
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

	if (query_parse_options(argc, argv, &q, list_usage)) {
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

			printf("%-16s %-16s %8lld  ", query_jstr(r, "group"),
			       query_jstr(r, "app"), query_jint(r, "pid"));
			json_array_foreach(json_object_get(r, "points"), j, p)
				printf("%s%s", j ? "," : "", json_string_value(p));
			putchar('\n');
		}
	}
	json_decref(all);
	return 0;
}
