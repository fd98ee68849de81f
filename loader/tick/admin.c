// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * admin.c - the admin's replies taken at the tick: its strategies applied
 * or refused (the refusal said in the heartbeat), cached for a restart
 * while the admin is away; the cluster shares and the drills it sent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "durable.h"
#include "cli/cmd.h"
#include "tick/engine.h"
#include "tick/engine_internal.h"
#include "kernel/probes.h"
#include "publish/flags.h"
#include "state/drill.h"
#include "decide/enforce.h"
#include "heartbeat/heartbeat.h"
#include "report/uplink.h"

#define CACHE_MAX	(1 << 20)	/* bytes: 256 points fit many times over */

/*
 * Keep the admin's strategies for a restart while the admin is away: a
 * reader sees the old cache or the new one, whole (common/durable.c).
 */
static void cache_write(struct engine *e)
{
	json_t *doc;
	char *text = NULL;

	if (!e->cache_path[0] || !e->strategies)
		return;
	doc = strategy_set_to_json(e->strategies);
	if (doc)
		text = json_dumps(doc, JSON_COMPACT);
	if (!text)
		errno = ENOMEM;
	if (!text || strlen(text) > CACHE_MAX ||
	    durable_write(e->cache_path, text, strlen(text)))
		cmd_err("caching strategies in %s: %s", e->cache_path,
			text && strlen(text) > CACHE_MAX ? "larger than 1 MiB" :
			strerror(errno));
	free(text);
	json_decref(doc);
}

/*
 * The admin's strategies @s were refused with @why: the heartbeat says so,
 * one line per point that cannot enforce a field of its strategy
 * (decide/enforce.c), or @why alone when no point's strategy was the
 * cause (a pressure rule, the split).  Each line is cut to
 * SDS_HB_REASON_MAX bytes.
 */
static void refusal_note(struct engine *e, const struct sds_strategies *s,
			 const char *why)
{
	const struct probes *pr = e->env.probes;
	char err[512];
	int i, id;

	e->nrefused = 0;
	for (i = 0; i < s->n && e->nrefused < SDS_HB_MAX_REFUSED; i++) {
		id = probes__find(pr, s->s[i].point);
		if (id < 0 ||
		    (!enforce__strategy(&s->s[i], pr->pts[id].kind == POINT_FUNCTION,
					pr->pts[id].spec.failfast_ops != 0, err, sizeof(err)) &&
		     !enforce__keys(&s->s[i], pr->pts[id].kind == POINT_FUNCTION,
				    pr->pts[id].spec.key_kind != 0, err, sizeof(err)) &&
		     !engine__point_key_limits(pr, id, s, &s->s[i], err, sizeof(err))))
			continue;
		heartbeat_refusal_set(&e->refused[e->nrefused++], s->version,
				      s->s[i].point, err);
	}
	if (!e->nrefused)
		heartbeat_refusal_set(&e->refused[e->nrefused++], s->version, NULL, why);
}

void engine__admin_reply(struct engine *e)
{
	static struct sds_hb_drill drills[SDS_HB_MAX_DRILLS];
	struct sds_strategies *s = uplink__take_reply(e->env.uplink);
	static struct sds_strategies copy;
	int n;

	if (s) {
		/* engine__apply frees what it refuses: the report needs its points. */
		copy = *s;
		if (engine__apply(e, s))
			refusal_note(e, &copy, e->apply_err);
		else
			e->nrefused = 0;	/* a later version accepted: no longer refused */
		cache_write(e);
	}
	/* The cluster limits' shares: in force from this tick on. */
	n = uplink_share__take(e->env.uplink, e->shares);
	if (n >= 0) {
		e->shares_at_ns = flags_now_ns();
		e->share_hosts = n;
	}
	n = uplink__take_drills(e->env.uplink, drills);
	if (n >= 0)
		drill__apply_admin(e->env.drill, drills, n, time(NULL));
	engine__flush(e);
}

/*
 * Read the cache: only a regular file (O_NOFOLLOW; O_NONBLOCK and fstat
 * refuse a FIFO or device), at most CACHE_MAX bytes.  A missing cache is
 * normal; a bad one is said and ignored: the admin resends.
 */
int engine__load_cache(struct engine *e, struct sds_strategies **out)
{
	struct sds_strategies *s = NULL;
	char err[600], *buf = NULL;
	const char *why = NULL;
	struct stat st;
	ssize_t n = 0;
	int fd;

	*out = NULL;
	if (!e->cache_path[0])
		return 0;
	fd = open(e->cache_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			cmd_err("ignoring cached strategies: %s: %s", e->cache_path,
				errno == ELOOP ? "a symlink" : strerror(errno));
		return 0;
	}
	if (fstat(fd, &st))
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_size > CACHE_MAX)
		why = "larger than 1 MiB";
	if (!why) {
		buf = malloc(st.st_size + 1);
		s = malloc(sizeof(*s));
		if (!buf || !s) {
			close(fd);
			free(buf);
			free(s);
			return -1;
		}
		n = pread(fd, buf, st.st_size, 0);
		if (n < 0)
			why = strerror(errno);
	}
	close(fd);
	if (!why && strategy_set_parse(buf, n, s, err, sizeof(err)))
		why = err;
	free(buf);
	if (why) {
		cmd_err("ignoring cached strategies: %s: %s", e->cache_path, why);
		free(s);
		return 0;
	}
	*out = s;
	return 0;
}
