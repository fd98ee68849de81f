// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/sqlite/schema.c - the admin store's schema: its migrations, one
 * per version (PRAGMA user_version), applied forward at open, each in its
 * own transaction.
 */
#include <stdio.h>
#include "store/sqlite/sqlite.h"

/* migrations[i] takes the schema from version i to i + 1.  Append only. */
static const char *const migrations[] = {
	/* 1: the organisation, heartbeats and statistics */
	"CREATE TABLE groups ("
	"  id INTEGER PRIMARY KEY,"
	"  name TEXT NOT NULL UNIQUE,"
	"  description TEXT NOT NULL DEFAULT '',"
	"  created INTEGER NOT NULL);"
	"CREATE TABLE apps ("
	"  id INTEGER PRIMARY KEY,"
	"  group_id INTEGER NOT NULL REFERENCES groups(id),"
	"  name TEXT NOT NULL,"
	"  description TEXT NOT NULL DEFAULT '',"
	"  created INTEGER NOT NULL,"
	"  version INTEGER NOT NULL DEFAULT 1,"
	"  active_scheme INTEGER,"
	"  UNIQUE (group_id, name));"
	"CREATE TABLE schemes ("
	"  id INTEGER PRIMARY KEY,"
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  name TEXT NOT NULL,"
	"  description TEXT NOT NULL DEFAULT '',"
	"  created INTEGER NOT NULL,"
	"  UNIQUE (app_id, name));"
	"CREATE TABLE strategies ("
	"  scheme_id INTEGER NOT NULL REFERENCES schemes(id) ON DELETE CASCADE,"
	"  point TEXT NOT NULL,"
	"  body TEXT NOT NULL,"
	"  PRIMARY KEY (scheme_id, point)) WITHOUT ROWID;"
	"CREATE TABLE hosts ("
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  host TEXT NOT NULL,"
	"  ip TEXT NOT NULL,"
	"  first_seen INTEGER NOT NULL,"
	"  last_seen INTEGER NOT NULL,"
	"  last_period INTEGER NOT NULL,"
	"  version INTEGER NOT NULL,"
	"  PRIMARY KEY (app_id, host)) WITHOUT ROWID;"
	"CREATE TABLE heartbeats ("
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  period_start INTEGER NOT NULL,"
	"  host TEXT NOT NULL,"
	"  received INTEGER NOT NULL,"
	"  PRIMARY KEY (app_id, period_start, host)) WITHOUT ROWID;"
	"CREATE TABLE stats ("
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  period_start INTEGER NOT NULL,"
	"  host TEXT NOT NULL,"
	"  point TEXT NOT NULL,"
	"  visits INTEGER NOT NULL,"
	"  exceptions INTEGER NOT NULL,"
	"  timeouts INTEGER NOT NULL,"
	"  downgrades INTEGER NOT NULL,"
	"  max_concurrency INTEGER NOT NULL,"
	"  hist BLOB,"
	"  PRIMARY KEY (app_id, period_start, host, point)) WITHOUT ROWID;"
	"CREATE TABLE audit ("
	"  id INTEGER PRIMARY KEY,"
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  time INTEGER NOT NULL,"
	"  action TEXT NOT NULL,"
	"  detail TEXT NOT NULL,"
	"  comment TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX audit_app ON audit (app_id, id);",
	/* 2: fault drills (issue 5), and what they injected per period */
	"CREATE TABLE drills ("
	"  id INTEGER PRIMARY KEY,"
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  point TEXT NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  ratio INTEGER NOT NULL,"
	"  delay_ms INTEGER NOT NULL,"
	"  created INTEGER NOT NULL,"
	"  expires_at INTEGER NOT NULL,"
	"  stopped_at INTEGER,"
	"  started_by TEXT NOT NULL,"
	"  stopped_by TEXT);"
	"CREATE INDEX drills_app ON drills (app_id, expires_at);"
	"ALTER TABLE stats ADD COLUMN faults INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE stats ADD COLUMN delays INTEGER NOT NULL DEFAULT 0;",
	/* 3: the probe-cost budget (issue 9); rows stored before read as 0 */
	"ALTER TABLE stats ADD COLUMN suspended INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE stats ADD COLUMN overhead_milli INTEGER NOT NULL DEFAULT 0;",
	/*
	 * 4: traffic copy plans (issue 12); what the loaders captured of each
	 * plan per period and host, what each copy server did with it per
	 * period, and the copy servers that heartbeat
	 */
	"CREATE TABLE copy_plans ("
	"  id INTEGER PRIMARY KEY,"
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  name TEXT NOT NULL,"
	"  points TEXT NOT NULL,"		/* JSON array of names */
	"  sample_pct INTEGER NOT NULL,"
	"  amplification INTEGER NOT NULL,"
	"  shadows TEXT NOT NULL,"		/* JSON array, as the plans file */
	"  framing TEXT NOT NULL,"
	"  writes INTEGER NOT NULL,"
	"  rate INTEGER NOT NULL,"
	"  created INTEGER NOT NULL,"
	"  expires_at INTEGER NOT NULL,"
	"  stopped_at INTEGER,"
	"  started_by TEXT NOT NULL,"
	"  stopped_by TEXT);"
	"CREATE INDEX copy_plans_app ON copy_plans (app_id, expires_at);"
	"CREATE TABLE copy_loader_stats ("
	"  plan_id INTEGER NOT NULL REFERENCES copy_plans(id) ON DELETE CASCADE,"
	"  period_start INTEGER NOT NULL,"
	"  host TEXT NOT NULL,"
	"  captured INTEGER NOT NULL,"
	"  dropped INTEGER NOT NULL,"
	"  PRIMARY KEY (plan_id, period_start, host)) WITHOUT ROWID;"
	"CREATE TABLE copy_server_stats ("
	"  plan_id INTEGER NOT NULL REFERENCES copy_plans(id) ON DELETE CASCADE,"
	"  period_start INTEGER NOT NULL,"
	"  server TEXT NOT NULL,"
	"  received INTEGER NOT NULL,"
	"  dispatched INTEGER NOT NULL,"
	"  shadow_errors INTEGER NOT NULL,"
	"  dropped INTEGER NOT NULL,"
	"  PRIMARY KEY (plan_id, period_start, server)) WITHOUT ROWID;"
	"CREATE TABLE copy_servers ("
	"  name TEXT PRIMARY KEY,"
	"  addr TEXT NOT NULL,"
	"  first_seen INTEGER NOT NULL,"
	"  last_seen INTEGER NOT NULL) WITHOUT ROWID;",
	/*
	 * 5: an error drill's errno on a failfast point (issue 15), by name;
	 * NULL, as every drill stored before: the point's own errno.
	 */
	"ALTER TABLE drills ADD COLUMN errno TEXT;",
	/*
	 * 6: the copy server's owner, the fingerprint of the token that
	 * registered its name (no other copy-server token may re-point it);
	 * NULL, as every row stored before: claimed by the next heartbeat.
	 */
	"ALTER TABLE copy_servers ADD COLUMN owner TEXT;",
	/*
	 * 7: an adaptive point's limit and the latency it steered by
	 * (store/stat_cols.h, docs/ADAPTIVE.md); rows stored before read as
	 * 0, as a point that is not adaptive.
	 */
	"ALTER TABLE stats ADD COLUMN adaptive_limit INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE stats ADD COLUMN adaptive_latency_ns INTEGER NOT NULL DEFAULT 0;",
	/*
	 * 8: a point's split (docs/SPLIT.md), its most stuck calls
	 * (docs/LIMITS.md) and whether a host pressure rule shed it
	 * (store/stat_cols.h); a host's pressure rules' state and the
	 * strategies it refused as of its last heartbeat, JSON (NULL: none
	 * sent).  Rows stored before read as 0 and NULL.
	 */
	"ALTER TABLE stats ADD COLUMN split_calls INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE stats ADD COLUMN split_on_cpu_ns INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE stats ADD COLUMN split_runqueue_ns INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE stats ADD COLUMN split_blocked_ns INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE stats ADD COLUMN max_stuck INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE stats ADD COLUMN overload INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE hosts ADD COLUMN pressure TEXT;"
	"ALTER TABLE hosts ADD COLUMN refused TEXT;",
	/*
	 * 9: a keyed point's heaviest keys of a period as the host's
	 * heartbeat sent them (docs/KEYS.md): the point's "keys" array,
	 * JSON, one row per (host, period, point) that had some.
	 */
	"CREATE TABLE hot_keys ("
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  period_start INTEGER NOT NULL,"
	"  host TEXT NOT NULL,"
	"  point TEXT NOT NULL,"
	"  keys TEXT NOT NULL,"
	"  PRIMARY KEY (app_id, point, period_start, host)) WITHOUT ROWID;",
	/*
	 * 10: a drill's blast radius and automatic abort (docs/DRILL.md):
	 * the hosts it was handed to (a JSON array; NULL, as every drill
	 * stored before: all of the app's), its stop conditions (JSON, NULL:
	 * none) and why it stopped when one broke (NULL: it did not).
	 */
	"ALTER TABLE drills ADD COLUMN hosts TEXT;"
	"ALTER TABLE drills ADD COLUMN stop_when TEXT;"
	"ALTER TABLE drills ADD COLUMN stop_reason TEXT;",
	/*
	 * 11: game days (docs/GAMEDAY.md): a named plan of steps per app
	 * (its definition as the API took it, JSON), its schedule (every_s
	 * 0: none; next_run NULL: not scheduled) and how many reports it
	 * keeps; its runs, each a report.  One run open per app at once:
	 * the partial unique index, so two admins cannot both start one.
	 * And an app's drills' change counter, one up with every drill
	 * started or stopped: a loader keeps the newest list it was sent.
	 */
	"ALTER TABLE apps ADD COLUMN drills_seq INTEGER NOT NULL DEFAULT 0;"
	"CREATE TABLE gamedays ("
	"  id INTEGER PRIMARY KEY,"
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  name TEXT NOT NULL,"
	"  body TEXT NOT NULL,"
	"  every_s INTEGER NOT NULL,"
	"  next_run INTEGER,"
	"  keep INTEGER NOT NULL,"
	"  created INTEGER NOT NULL,"
	"  created_by TEXT NOT NULL,"
	"  UNIQUE (app_id, name));"
	"CREATE TABLE gameday_runs ("
	"  id INTEGER PRIMARY KEY,"
	"  gameday_id INTEGER NOT NULL REFERENCES gamedays(id) ON DELETE CASCADE,"
	"  app_id INTEGER NOT NULL,"
	"  started_by TEXT NOT NULL,"
	"  started_at INTEGER NOT NULL,"
	"  ended_at INTEGER,"
	"  result TEXT,"
	"  state TEXT NOT NULL,"
	"  runner TEXT,"
	"  lease_until INTEGER NOT NULL DEFAULT 0,"
	"  abort_by TEXT);"
	"CREATE INDEX gameday_runs_gd ON gameday_runs (gameday_id, id);"
	"CREATE UNIQUE INDEX gameday_runs_open ON gameday_runs (app_id) WHERE ended_at IS NULL;",
	/*
	 * 12: each point's dependencies as a host's latest heartbeat sent
	 * them (docs/DEPS.md): {"POINT": [edges...]}, JSON, one row per
	 * (app, host), replaced by a heartbeat of the same period or later.
	 */
	"CREATE TABLE deps ("
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  host TEXT NOT NULL,"
	"  period_start INTEGER NOT NULL,"
	"  updated INTEGER NOT NULL,"
	"  deps TEXT NOT NULL,"
	"  PRIMARY KEY (app_id, host)) WITHOUT ROWID;",
	/*
	 * 13: a copy plan's live diff and ramp (docs/COPY.md, issue 37): its
	 * options as JSON (diff, ignore, ramp, stop_when, shadow_app; NULL,
	 * as every plan stored before: none), what its ramp found (JSON: the
	 * knee, the stop reason; NULL: nothing yet), the requests a copy
	 * server could not pair per period, and the pairs it judged per
	 * period, server and point with the period's first differences.
	 */
	"ALTER TABLE copy_plans ADD COLUMN opts TEXT;"
	"ALTER TABLE copy_plans ADD COLUMN result TEXT;"
	"ALTER TABLE copy_server_stats ADD COLUMN unpaired INTEGER NOT NULL DEFAULT 0;"
	"CREATE TABLE copy_diff_stats ("
	"  plan_id INTEGER NOT NULL REFERENCES copy_plans(id) ON DELETE CASCADE,"
	"  period_start INTEGER NOT NULL,"
	"  server TEXT NOT NULL,"
	"  point TEXT NOT NULL,"
	"  pairs INTEGER NOT NULL,"
	"  same INTEGER NOT NULL,"
	"  different INTEGER NOT NULL,"
	"  shadow_errors INTEGER NOT NULL,"
	"  timeouts INTEGER NOT NULL,"
	"  examples TEXT,"
	"  PRIMARY KEY (plan_id, period_start, server, point)) WITHOUT ROWID;",
};
#define SCHEMA_VERSION ((int)(sizeof(migrations) / sizeof(migrations[0])))

int sqlite_migrate(sqlite3 *db, char *err)
{
	sqlite3_stmt *q;
	char *msg = NULL;
	int v, i;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL) != SQLITE_OK)
		goto dberr;
	v = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) : -1;
	sqlite3_finalize(q);
	if (v < 0)
		goto dberr;
	if (v > SCHEMA_VERSION) {
		sq_seterr(err, "schema version %d is newer than this sds-admin knows (%d)",
		       v, SCHEMA_VERSION);
		return -1;
	}
	for (i = v; i < SCHEMA_VERSION; i++) {
		char pragma[64];

		/* One transaction per step: a failed step leaves the last good one. */
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", i + 1);
		if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) ||
		    sqlite3_exec(db, migrations[i], NULL, NULL, &msg) ||
		    sqlite3_exec(db, pragma, NULL, NULL, &msg) ||
		    sqlite3_exec(db, "COMMIT", NULL, NULL, &msg)) {
			sq_seterr(err, "migrating the schema to version %d: %s", i + 1,
			       msg ? msg : sqlite3_errmsg(db));
			sqlite3_free(msg);
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
	}
	return 0;
dberr:
	sq_seterr(err, "%s", sqlite3_errmsg(db));
	return -1;
}
