// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/sql.c - the SQL of the query files, once for both engines.
 *
 * Written in the SQL both engines take, with SQLite's ?N parameters
 * (store/pg/ turns them into $N as it prepares).  Where the dialects part
 * (upserts, INSERT ... RETURNING id, BEGIN IMMEDIATE, a cast) an engine
 * has a row of its own in its override table, which sq_sql_of() prefers:
 * store/sqlite/sqlite.c and store/pg/pg.c.
 */
#include <stddef.h>
#include "store/query/sq.h"

const char *const sq_sql[NQ] = {
	[Q_BEGIN] = "BEGIN",
	[Q_COMMIT] = "COMMIT",
	[Q_ROLLBACK] = "ROLLBACK",
	[Q_GROUP_ID] = "SELECT id FROM groups WHERE name = ?1",
	[Q_GROUP_LIST] = "SELECT g.name, g.description, g.created,"
		" (SELECT count(*) FROM apps a WHERE a.group_id = g.id)"
		" FROM groups g ORDER BY g.name",
	[Q_GROUP_GET] = "SELECT g.name, g.description, g.created,"
		" (SELECT count(*) FROM apps a WHERE a.group_id = g.id)"
		" FROM groups g WHERE g.name = ?1",
	[Q_GROUP_INS] = "INSERT INTO groups (name, description, created) VALUES (?1, ?2, ?3)",
	[Q_GROUP_UPD] = "UPDATE groups SET description = ?2 WHERE name = ?1",
	[Q_GROUP_DEL] = "DELETE FROM groups WHERE id = ?1",
	[Q_GROUP_NAPPS] = "SELECT count(*) FROM apps WHERE group_id = ?1",
	[Q_APP_ID] = "SELECT a.id, a.version, a.active_scheme, a.drills_seq FROM apps a"
		" JOIN groups g ON g.id = a.group_id WHERE g.name = ?1 AND a.name = ?2",
#define APP_COLS "g.name, a.name, a.description, a.created, a.version," \
		" (SELECT s.name FROM schemes s WHERE s.id = a.active_scheme)," \
		" (SELECT count(*) FROM schemes s WHERE s.app_id = a.id)," \
		" (SELECT count(*) FROM hosts h WHERE h.app_id = a.id)"
	[Q_APP_LIST] = "SELECT " APP_COLS " FROM apps a JOIN groups g ON g.id = a.group_id"
		" WHERE g.name = ?1 ORDER BY a.name",
	[Q_APP_LIST_ALL] = "SELECT " APP_COLS " FROM apps a JOIN groups g ON g.id = a.group_id"
		" ORDER BY g.name, a.name",
	[Q_APP_GET] = "SELECT " APP_COLS " FROM apps a JOIN groups g ON g.id = a.group_id"
		" WHERE g.name = ?1 AND a.name = ?2",
	[Q_APP_INS] = "INSERT INTO apps (group_id, name, description, created) VALUES (?1, ?2, ?3, ?4)",
	[Q_APP_UPD] = "UPDATE apps SET description = ?2 WHERE id = ?1",
	[Q_APP_DEL] = "DELETE FROM apps WHERE id = ?1",
	[Q_APP_SET_ACTIVE] = "UPDATE apps SET active_scheme = ?2, version = version + ?3 WHERE id = ?1",
	[Q_APP_BUMP] = "UPDATE apps SET version = version + 1 WHERE id = ?1 RETURNING version",
	[Q_SCHEME_ID] = "SELECT id FROM schemes WHERE app_id = ?1 AND name = ?2",
	[Q_SCHEME_LIST] = "SELECT s.name, s.description, s.created, s.id = a.active_scheme,"
		" (SELECT count(*) FROM strategies t WHERE t.scheme_id = s.id AND t.point <> '')"
		" FROM schemes s JOIN apps a ON a.id = s.app_id WHERE s.app_id = ?1 ORDER BY s.name",
	[Q_SCHEME_GET] = "SELECT s.name, s.description, s.created, s.id = a.active_scheme,"
		" (SELECT count(*) FROM strategies t WHERE t.scheme_id = s.id AND t.point <> '')"
		" FROM schemes s JOIN apps a ON a.id = s.app_id WHERE s.id = ?1",
	[Q_SCHEME_INS] = "INSERT INTO schemes (app_id, name, description, created) VALUES (?1, ?2, ?3, ?4)",
	[Q_SCHEME_UPD] = "UPDATE schemes SET description = ?2 WHERE id = ?1",
	[Q_SCHEME_REN] = "UPDATE schemes SET name = ?2 WHERE id = ?1",
	[Q_SCHEME_DEL] = "DELETE FROM schemes WHERE id = ?1",
	[Q_SCHEME_NAME] = "SELECT name FROM schemes WHERE id = ?1",
	[Q_STRAT_LIST] = "SELECT point, body FROM strategies WHERE scheme_id = ?1 ORDER BY point",
	[Q_STRAT_CLEAR] = "DELETE FROM strategies WHERE scheme_id = ?1",
	[Q_STRAT_PUT] = "INSERT OR REPLACE INTO strategies (scheme_id, point, body) VALUES (?1, ?2, ?3)",
	[Q_STRAT_DEL] = "DELETE FROM strategies WHERE scheme_id = ?1 AND point = ?2",
	[Q_STRAT_CLONE] = "INSERT INTO strategies (scheme_id, point, body)"
		" SELECT ?2, point, body FROM strategies WHERE scheme_id = ?1",
	[Q_HB_INS] = "INSERT OR IGNORE INTO heartbeats (app_id, period_start, host, received)"
		" VALUES (?1, ?2, ?3, ?4)",
	[Q_STAT_INS] = "INSERT OR IGNORE INTO stats (app_id, period_start, host, point, visits,"
		" exceptions, timeouts, downgrades, max_concurrency, hist, faults, delays,"
		" suspended, overhead_milli" STORE_STAT_SQL_NAMES ")"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14"
		STORE_STAT_SQL_PARAMS ")",
	/* ?7, ?8: the host's pressure rules and refusals as its heartbeat sent them (JSON, NULL: none). */
	[Q_HOST_UPSERT] = "INSERT INTO hosts (app_id, host, ip, first_seen, last_seen, last_period, version,"
		" pressure, refused)"
		" VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8)"
		" ON CONFLICT (app_id, host) DO UPDATE SET ip = ?3, last_seen = ?4,"
		" last_period = max(last_period, ?5), version = ?6, pressure = ?7, refused = ?8",
	/* A point's heaviest keys of a period, the heartbeat's "keys" array as JSON text. */
	[Q_KEYS_INS] = "INSERT OR IGNORE INTO hot_keys (app_id, period_start, host, point, keys)"
		" VALUES (?1, ?2, ?3, ?4, ?5)",
	/* A host's dependencies since its loader attached (docs/DEPS.md): the latest period's. */
	[Q_DEPS_UPSERT] = "INSERT INTO deps (app_id, host, period_start, updated, deps)"
		" VALUES (?1, ?2, ?3, ?4, ?5)"
		" ON CONFLICT (app_id, host) DO UPDATE SET period_start = excluded.period_start,"
		" updated = excluded.updated, deps = excluded.deps"
		" WHERE excluded.period_start >= deps.period_start",
	[Q_DEPS_SCAN] = "SELECT host, period_start, updated, deps FROM deps"
		" WHERE app_id = ?1 ORDER BY host",
	[Q_KEYS_SCAN] = "SELECT host, period_start, keys FROM hot_keys"
		" WHERE app_id = ?1 AND point = ?2 AND period_start >= ?3 AND period_start < ?4"
		" ORDER BY period_start, host",
	[Q_HOST_LIST] = "SELECT h.host, h.ip, h.first_seen, h.last_seen, h.last_period, h.version,"
		" h.pressure, h.refused"
		" FROM hosts h WHERE h.app_id = ?1 ORDER BY h.host",
	[Q_STAT_SCAN] = "SELECT period_start, point, host, visits, exceptions, timeouts,"
		" downgrades, max_concurrency, hist, faults, delays, suspended, overhead_milli"
		STORE_STAT_SQL_NAMES " FROM stats"
		" WHERE app_id = ?1 AND period_start >= ?2 AND period_start < ?3",
	[Q_STAT_SCAN_POINT] = "SELECT period_start, point, host, visits, exceptions, timeouts,"
		" downgrades, max_concurrency, hist, faults, delays, suspended, overhead_milli"
		STORE_STAT_SQL_NAMES " FROM stats"
		" WHERE app_id = ?1 AND period_start >= ?2 AND period_start < ?3 AND point = ?4",
	/* Not the row of point "": a scheme's pressure rules (schemes.c). */
	[Q_POINT_LIST] = "SELECT point FROM strategies t JOIN schemes s ON s.id = t.scheme_id"
		" WHERE s.app_id = ?1 AND t.point <> '' UNION SELECT point FROM stats WHERE app_id = ?1"
		" AND period_start >= ?2 ORDER BY 1",
	[Q_EVENTS] = "SELECT period_start, host, point, downgrades, visits FROM stats"
		" WHERE app_id = ?1 AND period_start >= ?2 AND period_start < ?3 AND downgrades > 0"
		" ORDER BY period_start DESC, host, point LIMIT ?4",
	/* ORDER BY ... LIMIT 1, not MIN(): PostgreSQL reads the partitions in order and stops. */
	[Q_STAT_FIRST] = "SELECT period_start FROM stats WHERE app_id = ?1"
		" ORDER BY period_start LIMIT 1",
	[Q_AUDIT_INS] = "INSERT INTO audit (app_id, time, action, detail, comment) VALUES (?1, ?2, ?3, ?4, ?5)",
	[Q_AUDIT_LIST] = "SELECT time, action, detail, comment FROM audit WHERE app_id = ?1"
		" ORDER BY id DESC LIMIT ?2",
	[Q_PRUNE_STATS] = "DELETE FROM stats WHERE period_start < ?1",
	[Q_PRUNE_HB] = "DELETE FROM heartbeats WHERE period_start < ?1",
	[Q_PRUNE_KEYS] = "DELETE FROM hot_keys WHERE period_start < ?1",
	[Q_PRUNE_HOSTS] = "DELETE FROM hosts WHERE last_seen < ?1",
	[Q_PRUNE_DEPS] = "DELETE FROM deps WHERE updated < ?1",
	[Q_PRUNE_AUDIT] = "DELETE FROM audit WHERE time < ?1",
	[Q_COUNT_GROUPS] = "SELECT count(*) FROM groups",
	[Q_COUNT_APPS] = "SELECT count(*) FROM apps",
	[Q_COUNT_HOSTS] = "SELECT count(*) FROM hosts",
	[Q_DEL_APP_STATS] = "DELETE FROM stats WHERE app_id = ?1",
	[Q_DEL_APP_HB] = "DELETE FROM heartbeats WHERE app_id = ?1",
	[Q_DEL_APP_KEYS] = "DELETE FROM hot_keys WHERE app_id = ?1",
	[Q_DEL_APP_DEPS] = "DELETE FROM deps WHERE app_id = ?1",
	[Q_DEL_APP_HOSTS] = "DELETE FROM hosts WHERE app_id = ?1",
	[Q_DEL_APP_AUDIT] = "DELETE FROM audit WHERE app_id = ?1",
	[Q_DEL_APP_STRATS] = "DELETE FROM strategies WHERE scheme_id IN"
		" (SELECT id FROM schemes WHERE app_id = ?1)",
	[Q_DEL_APP_SCHEMES] = "DELETE FROM schemes WHERE app_id = ?1",
	[Q_DRILLS_BUMP] = "UPDATE apps SET drills_seq = drills_seq + 1 WHERE id = ?1",
	[Q_DRILL_INS] = "INSERT INTO drills (app_id, point, kind, ratio, delay_ms, created,"
		" expires_at, started_by, errno, hosts, stop_when)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[Q_DRILL_LIST] = "SELECT id, point, kind, ratio, delay_ms, created, expires_at,"
		" stopped_at, started_by, stopped_by, errno, hosts, stop_when, stop_reason"
		" FROM drills WHERE app_id = ?1"
		" ORDER BY id DESC LIMIT 200",
	[Q_DRILL_ACTIVE] = "SELECT id, point, kind, ratio, delay_ms, expires_at, errno, hosts,"
		" stop_when, created FROM drills"
		" WHERE app_id = ?1 AND stopped_at IS NULL AND expires_at > ?2 ORDER BY id",
	[Q_DRILL_GET] = "SELECT point, stopped_at, expires_at FROM drills"
		" WHERE app_id = ?1 AND id = ?2",
	[Q_DRILL_STOP] = "UPDATE drills SET stopped_at = ?3, stopped_by = ?4, stop_reason = ?5"
		" WHERE app_id = ?1 AND id = ?2",
#define COPY_COLS "p.id, p.name, p.points, p.sample_pct, p.amplification, p.shadows," \
		" p.framing, p.writes, p.rate, p.created, p.expires_at, p.stopped_at," \
		" p.started_by, p.stopped_by, g.name, a.name, p.opts, p.result"
#define COPY_FROM " FROM copy_plans p JOIN apps a ON a.id = p.app_id" \
		" JOIN groups g ON g.id = a.group_id"
	[Q_COPY_INS] = "INSERT INTO copy_plans (app_id, name, points, sample_pct, amplification,"
		" shadows, framing, writes, rate, created, expires_at, started_by, opts)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	[Q_COPY_UPD] = "UPDATE copy_plans SET points = ?3, sample_pct = ?4, amplification = ?5,"
		" shadows = ?6, framing = ?7, writes = ?8, rate = ?9, expires_at = ?10, opts = ?11"
		" WHERE app_id = ?1 AND id = ?2",
	[Q_COPY_LIST] = "SELECT " COPY_COLS COPY_FROM " WHERE p.app_id = ?1"
		" ORDER BY p.id DESC LIMIT 200",
	[Q_COPY_GET] = "SELECT " COPY_COLS COPY_FROM " WHERE p.app_id = ?1 AND p.id = ?2",
	[Q_COPY_STOP] = "UPDATE copy_plans SET stopped_at = ?3, stopped_by = ?4"
		" WHERE app_id = ?1 AND id = ?2",
	[Q_COPY_ACTIVE_APP] = "SELECT " COPY_COLS COPY_FROM " WHERE p.app_id = ?1"
		" AND p.stopped_at IS NULL AND p.expires_at > ?2 ORDER BY p.id",
	[Q_COPY_ACTIVE_ALL] = "SELECT " COPY_COLS COPY_FROM
		" WHERE p.stopped_at IS NULL AND p.expires_at > ?1 ORDER BY p.id",
	[Q_COPY_BY_NAME] = "SELECT id FROM copy_plans WHERE name = ?1 ORDER BY id DESC LIMIT 1",
	[Q_COPY_LSTAT] = "INSERT INTO copy_loader_stats (plan_id, period_start, host, captured,"
		" dropped) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
	[Q_COPY_SSTAT] = "INSERT INTO copy_server_stats (plan_id, period_start, server, received,"
		" dispatched, shadow_errors, dropped, unpaired) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
		" ON CONFLICT (plan_id, period_start, server) DO UPDATE SET"
		" received = copy_server_stats.received + ?4,"
		" dispatched = copy_server_stats.dispatched + ?5,"
		" shadow_errors = copy_server_stats.shadow_errors + ?6,"
		" dropped = copy_server_stats.dropped + ?7,"
		" unpaired = copy_server_stats.unpaired + ?8",
	/* A diff plan's pairs of a period, server and point; its first examples kept. */
	[Q_COPY_DSTAT] = "INSERT INTO copy_diff_stats (plan_id, period_start, server, point, pairs,"
		" same, different, shadow_errors, timeouts, examples)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
		" ON CONFLICT (plan_id, period_start, server, point) DO UPDATE SET"
		" pairs = copy_diff_stats.pairs + ?5, same = copy_diff_stats.same + ?6,"
		" different = copy_diff_stats.different + ?7,"
		" shadow_errors = copy_diff_stats.shadow_errors + ?8,"
		" timeouts = copy_diff_stats.timeouts + ?9,"
		" examples = COALESCE(copy_diff_stats.examples, ?10)",
	[Q_COPY_DSUM] = "SELECT point, sum(pairs), sum(same), sum(different), sum(shadow_errors),"
		" sum(timeouts) FROM copy_diff_stats WHERE plan_id = ?1 GROUP BY point ORDER BY point",
	[Q_COPY_DEX] = "SELECT point, examples FROM copy_diff_stats WHERE plan_id = ?1"
		" AND examples IS NOT NULL ORDER BY period_start, server, point LIMIT 1000",
	[Q_COPY_UNPAIRED] = "SELECT COALESCE(sum(unpaired), 0) FROM copy_server_stats WHERE plan_id = ?1",
	[Q_COPY_DPERIODS] = "SELECT period_start, sum(pairs), sum(same), sum(different),"
		" sum(shadow_errors), sum(timeouts) FROM copy_diff_stats"
		" WHERE plan_id = ?1 AND period_start >= ?2 AND period_start < ?3"
		" GROUP BY period_start ORDER BY period_start",
	[Q_COPY_RAMP] = "UPDATE copy_plans SET amplification = ?2, result = ?3 WHERE id = ?1",
	[Q_COPY_RAMPING] = "SELECT " COPY_COLS COPY_FROM " WHERE p.stopped_at IS NULL"
		" AND p.expires_at > ?1 AND p.opts LIKE '%\"ramp\"%' ORDER BY p.id",
	[Q_COPY_STATS] = "SELECT period_start, sum(c), sum(d), sum(r), sum(di), sum(se), sum(sd) FROM"
		" (SELECT period_start, captured c, dropped d, 0 r, 0 di, 0 se, 0 sd"
		"  FROM copy_loader_stats WHERE plan_id = ?1 AND period_start >= ?2 AND period_start < ?3"
		"  UNION ALL SELECT period_start, 0, 0, received, dispatched, shadow_errors, dropped"
		"  FROM copy_server_stats WHERE plan_id = ?1 AND period_start >= ?2 AND period_start < ?3) AS u"
		" GROUP BY period_start ORDER BY period_start",
	/* The owner checked first (Q_COPY_SRV_OWNER): a row without one is claimed. */
	[Q_COPY_SRV_UPSERT] = "INSERT INTO copy_servers (name, addr, first_seen, last_seen, owner)"
		" VALUES (?1, ?2, ?3, ?3, ?4) ON CONFLICT (name) DO UPDATE SET addr = ?2,"
		" last_seen = ?3, owner = COALESCE(copy_servers.owner, ?4)",
	/* Registration order, as the operator started them: never by name. */
	[Q_COPY_SRV_LIVE] = "SELECT addr FROM copy_servers WHERE last_seen >= ?1"
		" ORDER BY first_seen, name",
	[Q_COPY_SRV_LIST] = "SELECT name, addr, first_seen, last_seen, owner FROM copy_servers"
		" ORDER BY first_seen, name",
	[Q_COPY_SRV_OWNER] = "SELECT owner FROM copy_servers WHERE name = ?1",
	[Q_COPY_SRV_OWNED] = "SELECT count(*) FROM copy_servers WHERE owner = ?1",
	[Q_COPY_SRV_PRUNE] = "DELETE FROM copy_servers WHERE last_seen < ?1",
#define GD_COLS "d.id, d.name, d.body, d.every_s, d.next_run, d.keep, d.created," \
		" d.created_by, (SELECT r.id FROM gameday_runs r" \
		" WHERE r.gameday_id = d.id AND r.ended_at IS NULL)"
	[Q_GD_INS] = "INSERT INTO gamedays (app_id, name, body, every_s, next_run, keep,"
		" created, created_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[Q_GD_LIST] = "SELECT " GD_COLS " FROM gamedays d WHERE d.app_id = ?1 ORDER BY d.name",
	[Q_GD_GET] = "SELECT " GD_COLS " FROM gamedays d WHERE d.app_id = ?1 AND d.name = ?2",
	[Q_GD_DEL] = "DELETE FROM gamedays WHERE id = ?1",
	[Q_GD_DUE] = "SELECT id, app_id, every_s, next_run, name FROM gamedays"
		" WHERE next_run IS NOT NULL AND next_run <= ?1 ORDER BY next_run, id",
	[Q_GD_NEXT] = "UPDATE gamedays SET next_run = ?3 WHERE id = ?1 AND next_run = ?2",
	[Q_GDR_INS] = "INSERT INTO gameday_runs (gameday_id, app_id, started_by, started_at,"
		" state, ended_at, result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[Q_GDR_OPEN_APP] = "SELECT r.id, d.name FROM gameday_runs r"
		" JOIN gamedays d ON d.id = r.gameday_id"
		" WHERE r.app_id = ?1 AND r.ended_at IS NULL",
	[Q_GDR_LIST] = "SELECT id, started_by, started_at, ended_at, result, state, abort_by"
		" FROM gameday_runs WHERE gameday_id = ?1 ORDER BY id DESC LIMIT ?2",
	[Q_GDR_ABORT] = "UPDATE gameday_runs SET abort_by = ?2"
		" WHERE id = ?1 AND ended_at IS NULL AND abort_by IS NULL",
	[Q_GDR_OPEN] = "SELECT r.id, g.name, a.name, d.name, d.body, r.state, r.started_at,"
		" r.abort_by, r.started_by FROM gameday_runs r"
		" JOIN gamedays d ON d.id = r.gameday_id JOIN apps a ON a.id = r.app_id"
		" JOIN groups g ON g.id = a.group_id"
		" WHERE r.ended_at IS NULL AND (r.runner = ?1 OR r.runner IS NULL OR r.lease_until < ?2)"
		" ORDER BY r.id",
	/* A lease: one admin advances a run at a time, another takes over when it lapses. */
	[Q_GDR_CLAIM] = "UPDATE gameday_runs SET runner = ?1, lease_until = ?3"
		" WHERE id = ?4 AND ended_at IS NULL"
		" AND (runner = ?1 OR runner IS NULL OR lease_until < ?2)",
	[Q_GDR_SAVE] = "UPDATE gameday_runs SET state = ?3, ended_at = ?4, result = ?5"
		" WHERE id = ?1 AND runner = ?2 AND ended_at IS NULL",
	[Q_GDR_KEEP] = "SELECT r.gameday_id, d.keep, r.app_id, d.name FROM gameday_runs r"
		" JOIN gamedays d ON d.id = r.gameday_id WHERE r.id = ?1",
	[Q_GDR_PRUNE] = "DELETE FROM gameday_runs WHERE gameday_id = ?1 AND ended_at IS NOT NULL"
		" AND id NOT IN (SELECT id FROM gameday_runs WHERE gameday_id = ?1"
		" AND ended_at IS NOT NULL ORDER BY id DESC LIMIT ?2)",
};

const char *sq_sql_of(const char *const *dialect, int id)
{
	return dialect && dialect[id] ? dialect[id] : sq_sql[id];
}
