/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * engine_internal.h - what the engine's files share and no one else
 * calls: engine.c runs the tick, cluster.c gives each point its
 * cluster-wide shares, apply.c checks and applies strategies, admin.c
 * takes the admin's replies and caches its strategies.
 */
#ifndef SDS_ENGINE_INTERNAL_H
#define SDS_ENGINE_INTERNAL_H

#include "tick/engine.h"

/* The strategy of point @id as written (the admin's, the file's); cluster.c. */
const struct sds_strategy *engine__point_written(const struct engine *e, int id);
/*
 * The strategy point @id is judged by: a firing pressure rule's limits,
 * else the written one with this host's cluster shares; cluster.c.
 */
const struct sds_strategy *engine__point_strategy(struct engine *e, int id);
/* Each cluster point's wants and shares, for the admin; cluster.c. */
void engine__cluster_report(struct engine *e);
/* Point @id's strategy is new: the BPF side, its key table, its limits; apply.c. */
void engine__point_configure(struct engine *e, int id);
/* engine__check_key_limits of point @id of @pr; apply.c. */
int engine__point_key_limits(const struct probes *pr, int id,
			     const struct sds_strategies *s,
			     const struct sds_strategy *st, char *err,
			     size_t errlen);

#endif /* SDS_ENGINE_INTERNAL_H */
