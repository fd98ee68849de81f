/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * engine.h - the strategies in force and the tick (engine.c): points by
 * name, the tick and the drills' re-evaluation, the tick's read, the
 * strategies applied from a file, the admin or the cache.
 */
#ifndef SDS_ENGINE_H
#define SDS_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

struct loader;
struct snapshot;
struct tick;
struct sds_strategies;

int engine__point(struct loader *l, const char *name);
void engine__tick(struct loader *l);
/* Evaluate the points a drill changed since the tick, from the tick's read. */
void engine__flush(struct loader *l);
/*
 * The last tick's record (tick.h): its read, time, verdicts and the
 * heartbeat extras pushed into it.
 */
const struct tick *engine__last_tick(const struct loader *l);
/* A read no older than ~1 ms for a query (held: snapshot__put it). */
struct snapshot *engine__query_snapshot(struct loader *l);
int engine__apply(struct loader *l, struct sds_strategies *s);
int engine__reload(struct loader *l);
void engine__admin_reply(struct loader *l);
int engine__load_cache(struct loader *l, struct sds_strategies **out);
/*
 * A loader that adopted kept state: @s in force without starting any
 * point afresh (holds and drills continue), published at once.
 */
void engine__adopt(struct loader *l, struct sds_strategies *s);
bool engine__state(struct loader *l, int id, uint32_t *reason, uint32_t *rate);
/*
 * The crash-only keep (keep.c): point @id's run state (chain, window
 * reset, drill), saved and restored.
 */
struct point_run;
void engine__save(const struct loader *l, int id, struct point_run *out);
void engine__restore(struct loader *l, int id, const struct point_run *in);

#endif /* SDS_ENGINE_H */
