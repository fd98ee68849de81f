/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The heartbeat (docs/DESIGN.md §7): what a loader reports to sds-admin
 * once per natural 10-s period, and the admin's reply.  One codec for both
 * sides: the loader fills a struct sds_heartbeat and calls
 * heartbeat_to_json(); the admin parses it with heartbeat_from_json(),
 * which validates every field.  The loader reads the reply with
 * heartbeat_reply_parse().
 *
 *   {"group": "default", "app": "shop", "host": "web-1", "ip": "10.0.0.7",
 *    "period_start": 1700000000, "period_s": 10, "version": 3,
 *    "points": {"order": {"visits": 10, "exceptions": 1, "timeouts": 0,
 *                         "downgrades": 0, "max_concurrency": 2,
 *                         "latency_hist": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 6],
 *                         "overhead_pct": 0.014}}}
 *
 * Optional top-level "build": {"id": "<hex build-id>", "deploys": N}: the
 * build of TARGET counted now and how many new builds the loader followed
 * (docs/DEPLOY.md); the loader sends it once it followed a deploy (and
 * TARGET has a build-id), so that older admins take other heartbeats.
 *
 * Optional point fields, sent only when set: "faults", "delays" (drills),
 * "suspended": true and "overhead_pct" (the probe-cost budget: the
 * probes' estimated share of one CPU, up to 3 decimals), "copy_captured",
 * "copy_dropped", "copy_truncated" (traffic copy, docs/COPY.md),
 * "adaptive_limit", "adaptive_latency_ns" (docs/ADAPTIVE.md), "max_stuck"
 * (the most calls in flight past their timeout at once in the period,
 * docs/LIMITS.md "Stuck calls"), "overload": true (a host pressure rule
 * downgraded the point in the period), "split_calls", "split_on_cpu_ns",
 * "split_runqueue_ns", "split_blocked_ns" (where the period's completed
 * calls' time went, docs/SPLIT.md: sent when the loader splits calls and
 * some completed), "keys" (a keyed point's heaviest keys over the
 * period: heartbeat_keys.c, docs/KEYS.md), "deps" (the peers the point's
 * calls reached, counted since the loader attached, not per period:
 * heartbeat_deps.c, docs/DEPS.md).
 * Optional top-level "pressure": [{"firing": B, "fired": N}, ...], each
 * host pressure rule's state as the period ends, by rule index
 * (docs/PRESSURE.md); sent only with rules.
 * Optional top-level "refused": [{"version": V, "point": P, "reason": R}]:
 * the admin's strategies version V that the loader refused (a field point
 * P cannot enforce, R the loader's one line, at most 200 bytes; "point"
 * absent when the refusal names none), the latest, one per point; sent
 * while the loader keeps the version it had, until it accepts a later
 * one (heartbeat_refused.c).
 *
 * Usage on the loader side:
 *
 *   struct sds_heartbeat *hb = heartbeat_new();
 *   heartbeat_init(hb, group, app, host, ip, period_start, version);
 *   struct sds_hb_point *p = heartbeat_add_point(hb, "order");
 *   p->visits = ...; p->latency_hist[i] = ...;   (nhist is computed)
 *   json_t *doc = heartbeat_to_json(hb);   char *body = json_dumps(doc, JSON_COMPACT);
 *   ... POST ..., then heartbeat_reply_parse(reply, len, &r, err, sizeof(err));
 *   heartbeat_free(hb);
 */
#ifndef SDS_HEARTBEAT_H
#define SDS_HEARTBEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "sds_flags.h"
#include "sds_types.h"
#include "strategy.h"

#define SDS_HB_PERIOD_S		10		/* the only period there is */
#define SDS_HB_MAX_POINTS	SDS_MAX_POINTS	/* 1024 */
#define SDS_HB_HOST_MAX		253		/* a DNS name's longest text form */
#define SDS_HB_IP_MAX		45		/* longest IPv6 text form */
#define SDS_HB_COUNT_MAX	((int64_t)1 << 40)	/* per point per period: sums stay in int64 */
#define SDS_HB_OVERHEAD_MAX	100000		/* % of one CPU: 1000 CPUs' worth */
#define SDS_HB_TIME_MIN		946684800	/* 2000-01-01: older is a broken clock */
#define SDS_HB_TIME_MAX		((int64_t)1 << 40)
#define SDS_HB_BUILD_MAX	64		/* hex digits of a build-id (32 bytes) */
#define SDS_HB_DEPLOYS_MAX	((int64_t)1 << 32)	/* builds followed, less than this */

/* One point's counts over one period. */
struct sds_hb_point {
	char name[SDS_NAME_MAX + 1];
	uint64_t visits;
	uint64_t exceptions;
	uint64_t timeouts;
	uint64_t downgrades;
	uint64_t max_concurrency;	/* most calls in flight at once in the period */
	uint64_t faults;		/* calls an error drill failed (sent when non-zero) */
	uint64_t delays;		/* calls a delay drill slowed (sent when non-zero) */
	bool suspended;			/* probes suspended for overhead at the period's end (sent when true) */
	uint64_t overhead_milli;	/* the probes' estimated cost, 1/1000 % of a CPU (sent when non-zero) */
	uint64_t copy_captured;		/* requests captured for traffic copy (sent when non-zero) */
	uint64_t copy_dropped;		/* captures lost: ring full, or the copy server unreachable (sent when non-zero) */
	uint64_t copy_truncated;	/* captures cut at copy_max (sent when non-zero) */
	uint64_t adaptive_limit;	/* an adaptive point's concurrency limit at the period's end (sent when non-zero) */
	uint64_t adaptive_latency_ns;	/* the latency it steered by then (sent with adaptive_limit) */
	uint64_t max_stuck;		/* most calls stuck past the timeout at once (sent when non-zero) */
	bool overload;			/* a host pressure rule downgraded it in the period (sent when true) */
	/* Where the period's split calls' time went (heartbeat_split.c; sent when @split_calls). */
	uint64_t split_calls;		/* completed calls split in the period */
	uint64_t split_on_cpu_ns;	/* their time on a CPU */
	uint64_t split_runqueue_ns;	/* ... waiting on a run queue */
	uint64_t split_blocked_ns;	/* ... blocked */
	int nhist;			/* entries of latency_hist sent: last non-zero + 1 */
	uint64_t latency_hist[SDS_HIST_BUCKETS];	/* [i]: latencies in [2^i, 2^(i+1)) ns */
};

#define SDS_HB_MAX_RULES	8	/* host pressure rules (SDS_PRESSURE_MAX_RULES) */

/* A host pressure rule's state as a period ends (docs/PRESSURE.md). */
struct sds_hb_rule {
	bool firing;			/* firing then */
	uint64_t fired;			/* times it fired since its document came */
};

#define SDS_HB_MAX_REFUSED	16	/* refusals in one heartbeat, one per point */
#define SDS_HB_REASON_MAX	200	/* bytes of a refusal's one line */

/* The admin's strategies the loader refused (heartbeat_refused.c). */
struct sds_hb_refusal {
	int64_t version;		/* the admin's version refused, >= 1 */
	char point[SDS_NAME_MAX + 1];	/* the point it names; "": none */
	char reason[SDS_HB_REASON_MAX + 1];	/* one line, printable */
};

/*
 * A keyed point's heavy key of the period (heartbeat_keys.c): at most
 * SDS_HB_POINT_KEYS a point, SDS_HB_MAX_KEYS a heartbeat.
 */
#define SDS_HB_POINT_KEYS	10
#define SDS_HB_MAX_KEYS		256
#define SDS_HB_KEY_TEXT		130	/* "0x" and 64 bytes in hex */
struct sds_hb_key {
	int point;			/* its point's index in points[] */
	char key[SDS_HB_KEY_TEXT + 1];	/* as shown: integer, printable text or hex */
	char kind[12];			/* "int", "str", "buf", "unreadable" */
	uint64_t calls;
	uint64_t exceptions;
	uint64_t downgrades;
	uint64_t p99_ns;		/* p99 of its calls that completed in the period; 0: none */
};

/*
 * A point's dependency (heartbeat_deps.c, docs/DEPS.md): a peer its calls
 * reached, with counts since the loader attached (not the period's: the
 * admin keeps each host's latest).  At most SDS_HB_POINT_DEPS a point,
 * SDS_HB_MAX_DEPS a heartbeat, the heaviest.
 */
#define SDS_HB_POINT_DEPS	32
#define SDS_HB_MAX_DEPS		256
#define SDS_HB_PEER_MAX		45	/* longest IPv6 text form */
struct sds_hb_dep {
	int point;			/* its point's index in points[] */
	char addr[SDS_HB_PEER_MAX + 1];	/* the peer, canonical text ("127.0.0.1", "::1") */
	uint16_t port;			/* 1..65535 */
	char proto[4];			/* "tcp", "udp" */
	uint64_t connects;
	uint64_t connect_errors;
	uint64_t sends;
	uint64_t send_errors;
	uint64_t resets;
	uint64_t bytes;
};

/* One heartbeat: one app on one host, one period.  ~190 KiB: heap it. */
struct sds_heartbeat {
	char group[SDS_NAME_MAX + 1];
	char app[SDS_NAME_MAX + 1];
	char host[SDS_HB_HOST_MAX + 1];	/* [A-Za-z0-9._-], 1..253 */
	char ip[SDS_HB_IP_MAX + 1];	/* IPv4 or IPv6 text, or "" if unknown */
	int64_t period_start;		/* Unix seconds, a multiple of 10 */
	int period_s;			/* 10 */
	int64_t version;		/* strategies version the loader has in force, 0: none */
	char build_id[SDS_HB_BUILD_MAX + 1];	/* TARGET's build now (lowercase hex), "": not sent */
	uint32_t deploys;		/* new builds of TARGET the loader followed since it started */
	int nrules;			/* host pressure rules in @rules; 0: none, not sent */
	struct sds_hb_rule rules[SDS_HB_MAX_RULES];
	int nrefused;			/* entries of @refused; 0: none, not sent */
	struct sds_hb_refusal refused[SDS_HB_MAX_REFUSED];
	int n;				/* points used */
	struct sds_hb_point points[SDS_HB_MAX_POINTS];
	int nkeys;			/* keys used, every point's */
	struct sds_hb_key keys[SDS_HB_MAX_KEYS];
	int ndeps;			/* dependencies used, every point's */
	struct sds_hb_dep deps[SDS_HB_MAX_DEPS];
};

#define SDS_HB_MAX_DRILLS	SDS_MAX_POINTS	/* drills in one reply */
#define SDS_HB_MAX_STOPS	4		/* stop conditions of one drill */
#define SDS_HB_STOP_MIN_MS	100		/* a window: at least the default tick */
#define SDS_HB_STOP_MAX_MS	60000		/* ... at most a minute */
#define SDS_HB_STOP_REASON_MAX	200		/* bytes of why a drill stopped */

/* What a stop condition watches (heartbeat_drill.c names them). */
enum sds_hb_stop_field {
	SDS_STOP_NONE,
	SDS_STOP_EXCEPTION_RATE,	/* exceptions / visits over the window, 0..1 */
	SDS_STOP_P99_MS,		/* the calls' 99th latency percentile over it, ms */
	SDS_STOP_DOWNGRADES,		/* calls downgraded over it */
};

/*
 * One of a drill's stop conditions (docs/DRILL.md, "Automatic abort"):
 * the drill stops once @field over the last @window_ms is above @above.
 */
struct sds_hb_stop {
	uint32_t field;			/* enum sds_hb_stop_field */
	double above;			/* the bound, in the field's unit */
	int64_t window_ms;		/* SDS_HB_STOP_MIN_MS..SDS_HB_STOP_MAX_MS */
};

/* "exception_rate", ...: the field's enum value, or SDS_STOP_NONE. */
uint32_t heartbeat_stop_field(const char *name);
const char *heartbeat_stop_field_name(uint32_t field);
/* The fields' names, ", "-separated, for messages. */
#define SDS_HB_STOP_FIELDS "exception_rate, p99_ms, downgrades"
/*
 * A "stop_when" array (@v; NULL or null: none) into @out/@n; -1 with one
 * line in @err (naming "@what[i].field").  The admin's API and every
 * loader read it with this.
 */
int heartbeat_stops_from_json(json_t *v, const char *what,
			      struct sds_hb_stop *out, int *n, char *err,
			      size_t errlen);
/* @n conditions as a "stop_when" array (new reference). */
json_t *heartbeat_stops_to_json(const struct sds_hb_stop *s, int n);
#define SDS_HB_DRILL_DELAY_MAX	60000		/* ms */

/* One active drill of the app, as the admin's reply lists it. */
struct sds_hb_drill {
	int64_t id;			/* the admin's drill id, > 0 */
	char point[SDS_NAME_MAX + 1];	/* a guard point */
	uint32_t kind;			/* enum sds_drill_kind */
	uint32_t ratio;			/* 0..100 */
	int64_t delay_ms;		/* delay drills: 1..60000 */
	int64_t expires_at;		/* Unix seconds: it ends then */
	int32_t err;			/* "errno" of an error drill on a failfast point; 0: the point's */
	int64_t created;		/* the admin's: when it started, Unix s (never sent) */
	int nstop;			/* stop conditions in @stop; 0: none, not sent */
	struct sds_hb_stop stop[SDS_HB_MAX_STOPS];	/* "stop_when": any broken ends it */
};

#define SDS_HB_COPY_SERVERS	8		/* copy servers in one reply */
#define SDS_HB_COPY_PLANS	64		/* copy plans of one app in one reply */
#define SDS_HB_COPY_POINTS	64		/* points of one copy plan */
#define SDS_HB_ADDR_MAX		(SDS_HB_HOST_MAX + 8)	/* "HOST:PORT" or "[V6]:PORT" */

/* One copy plan of the app, as the admin's reply lists it (docs/COPY.md). */
struct sds_hb_copy_plan {
	int64_t id;			/* the admin's plan id, > 0 */
	char name[SDS_NAME_MAX + 1];	/* the plan's name */
	uint32_t sample_pct;		/* 0..100: share of the points' calls captured */
	bool diff;			/* live diff: pairs and responses go to the servers too */
	int64_t expires_at;		/* Unix seconds: capture stops then */
	int npoints;			/* points in @points, 1..SDS_HB_COPY_POINTS */
	char points[SDS_HB_COPY_POINTS][SDS_NAME_MAX + 1];	/* points to capture */
};

/* What the app copies, and where to send the captures. */
struct sds_hb_copy {
	int nservers;			/* copy servers in @servers, failover order */
	char servers[SDS_HB_COPY_SERVERS][SDS_HB_ADDR_MAX + 1];	/* sds-copy listen addresses */
	int nplans;			/* plans in @plans */
	struct sds_hb_copy_plan plans[SDS_HB_COPY_PLANS];
};

/* The admin's answer to a heartbeat. */
struct sds_hb_reply {
	int64_t version;		/* the app's current strategies version */
	bool changed;			/* differs from the version the loader sent */
	bool has_strategies;		/* @strategies is filled (sent when changed) */
	struct sds_strategies *strategies;	/* owned by the caller; may be NULL */
	int ndrills;			/* drills in @drills */
	struct sds_hb_drill drills[SDS_HB_MAX_DRILLS];	/* the app's active drills */
	bool has_drills_seq;		/* the reply carried "drills_seq" (older admins do not) */
	int64_t drills_seq;		/* the app's drills' change counter when they were read */
	bool has_copy;			/* the reply carried "copy" (older admins do not) */
	struct sds_hb_copy copy;	/* the app's copy plans and servers; none: nplans 0 */
};

/* calloc'ed heartbeat (NULL when out of memory); free with heartbeat_free(). */
struct sds_heartbeat *heartbeat_new(void);
void heartbeat_free(struct sds_heartbeat *hb);

/* Reset @hb to no points with these header fields (strings are cut to fit). */
void heartbeat_init(struct sds_heartbeat *hb, const char *group, const char *app,
		    const char *host, const char *ip, int64_t period_start,
		    int64_t version);

/*
 * The point @name of @hb, added zeroed if new.  NULL if @hb is full
 * (SDS_HB_MAX_POINTS) or @name is not a valid name.
 */
struct sds_hb_point *heartbeat_add_point(struct sds_heartbeat *hb,
					 const char *name);

/*
 * The heartbeat as JSON (new reference).  latency_hist is cut after its
 * last non-zero entry.  Returns NULL when out of memory.
 */
json_t *heartbeat_to_json(const struct sds_heartbeat *hb);

/*
 * Parse and validate a heartbeat.  On error returns -1 and writes a message
 * that names the field into @err, e.g.
 *   "period_start must be a multiple of 10"
 *   "points.order.visits must be an integer 0..1099511627776"
 *   "app: bad name (1-64 of [A-Za-z0-9_-])"
 * @out is only complete on success.
 */
int heartbeat_from_json(json_t *doc, struct sds_heartbeat *out,
			char *err, size_t errlen);
int heartbeat_parse(const char *text, size_t len, struct sds_heartbeat *out,
		    char *err, size_t errlen);

/* A host name as heartbeats carry it: [A-Za-z0-9._-], 1..253. */
bool heartbeat_host_valid(const char *s);

/*
 * The admin's reply, {"version", "changed", "strategies", "drills"}
 * ("strategies" is the document of strategy.h, or null when unchanged).
 * heartbeat_reply_to_json() takes @s (may be NULL) by value.
 */
json_t *heartbeat_reply_to_json(int64_t version, bool changed,
				const struct sds_strategies *s);
/* The "drills" array of a reply (new reference; NULL: out of memory). */
json_t *heartbeat_drills_to_json(const struct sds_hb_drill *d, int n);
/*
 * A reply's "drills" (@v; NULL: none) into @r->drills and @r->ndrills
 * (heartbeat_drill.c); -1 with @err naming the field.
 */
int heartbeat_drills_from_json(json_t *v, struct sds_hb_reply *r, char *err,
			       size_t errlen);

/*
 * A lower "drills_seq" than the list kept is a stale reply (made before
 * a change another reply already brought) for this long; after it, the
 * admin's counter went back (a new database, the app made again) and
 * its list stands.
 */
#define SDS_HB_DRILLS_STALE_MS	30000
/*
 * Does a reply's drills list (@has: it carried a counter, @seq) replace
 * the one kept (counter @kept, taken at @kept_ms), at @now_ms?  A reply
 * without a counter (an older admin) always does.
 */
bool heartbeat_drills_newer(bool has, int64_t seq, int64_t kept, uint64_t kept_ms,
			    uint64_t now_ms);

/*
 * Parse a reply.  If it carries strategies and @r->strategies is non-NULL,
 * they are validated and written there (has_strategies set); a reply with
 * invalid strategies is an error, so the loader keeps the version in force.
 */
int heartbeat_reply_parse(const char *text, size_t len, struct sds_hb_reply *r,
			  char *err, size_t errlen);

/*
 * The reply's copy part (heartbeat_copy.c):
 *
 *   "copy": {"servers": ["10.0.0.9:7070"],
 *            "plans": [{"id": 3, "name": "shadow-x5", "sample_pct": 30,
 *                       "expires_at": 1700003600, "points": ["order"]}]}
 *
 * Absent in replies of older admins (has_copy false): the loader then
 * captures only for --copy-to and recorders.
 */
json_t *heartbeat_copy_to_json(const struct sds_hb_copy *c);
int heartbeat_copy_from_json(json_t *v, struct sds_hb_copy *c, char *err,
			     size_t errlen);
/* "HOST:PORT" or "[IPV6]:PORT", port 1..65535, as "servers" carries it. */
bool heartbeat_copy_addr_valid(const char *s);
/* Add a point's non-zero copy_* counts to @po; -1 when out of memory. */
int heartbeat_point_copy_to_json(const struct sds_hb_point *p, json_t *po);
/*
 * heartbeat_pressure.c: the host pressure parts (docs/PRESSURE.md) of
 * @hb into @o, and read back: the top-level "pressure", a point's
 * "overload".  0, or -1 (and @err).
 */
int heartbeat_pressure_to_json(const struct sds_heartbeat *hb, json_t *o);
int heartbeat_pressure_from_json(json_t *doc, struct sds_heartbeat *out,
				 char *err, size_t errlen);
int heartbeat_point_overload_from_json(const char *name, json_t *obj,
				       struct sds_hb_point *p, char *err,
				       size_t errlen);
/*
 * heartbeat_refused.c: the top-level "refused" of @hb into @o (only with
 * some), and read back validated; 0, or -1 (and @err).  A reason as the
 * loader wrote it made one printable line of at most SDS_HB_REASON_MAX
 * bytes (heartbeat_refusal_set()).
 */
int heartbeat_refused_to_json(const struct sds_heartbeat *hb, json_t *o);
int heartbeat_refused_from_json(json_t *doc, struct sds_heartbeat *out,
				char *err, size_t errlen);
void heartbeat_refusal_set(struct sds_hb_refusal *r, int64_t version,
			   const char *point, const char *reason);
/*
 * heartbeat_split.c: a point's split into @po (when it has split calls),
 * and from @obj into @p, each bounded; -1 (with @err for the parse).
 */
int heartbeat_point_split_to_json(const struct sds_hb_point *p, json_t *po);
int heartbeat_point_split_from_json(const char *name, json_t *obj,
				    struct sds_hb_point *p, char *err,
				    size_t errlen);

/*
 * heartbeat_keys.c: a key of point index @point, added zeroed (NULL past
 * the bounds); the point's keys into @po, and from @obj into @hb, bounded.
 */
struct sds_hb_key *heartbeat_add_key(struct sds_heartbeat *hb, int point);
int heartbeat_point_keys_to_json(const struct sds_heartbeat *hb, int point,
				 json_t *po);
int heartbeat_point_keys_from_json(const char *name, json_t *obj,
				   struct sds_heartbeat *hb, int point,
				   char *err, size_t errlen);

/*
 * heartbeat_deps.c: a dependency of point index @point, added zeroed
 * (NULL past the bounds); the point's into @po, and from @obj into @hb,
 * each checked (an address inet_pton reads, kept in its canonical form; a
 * port 1..65535; "tcp" or "udp"; counts 0..SDS_HB_COUNT_MAX; no edge
 * twice).
 */
struct sds_hb_dep *heartbeat_add_dep(struct sds_heartbeat *hb, int point);
int heartbeat_point_deps_to_json(const struct sds_heartbeat *hb, int point,
				 json_t *po);
int heartbeat_point_deps_from_json(const char *name, json_t *obj,
				   struct sds_heartbeat *hb, int point,
				   char *err, size_t errlen);

#endif /* SDS_HEARTBEAT_H */
