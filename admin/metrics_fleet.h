/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * metrics_fleet.h - /metrics' fleet sums per app and point, of the last
 * complete 10-s period (metrics_fleet.c, docs/METRICS.md).
 */
#ifndef SDS_ADMIN_METRICS_FLEET_H
#define SDS_ADMIN_METRICS_FLEET_H

#include <stdint.h>
#include <stdio.h>
#include "store/store.h"

#define FLEET_NVALUES		6	/* visits .. hosts: the series per point */
/* Points (of all apps) in one answer: ~1 KiB of text each, 100 MB at most. */
#define FLEET_MAX_SERIES	100000

/* The period the sums are of at Unix time @now: the last every host has sent. */
int64_t metrics_fleet_period(int64_t now);
/*
 * Write the fleet section as of @now to @f: 0, or a STORE_* code with
 * @err (STORE_ERR_MAX bytes) and nothing written.
 */
int metrics_fleet_write(struct store *st, int64_t now, FILE *f, char *err);

#endif /* SDS_ADMIN_METRICS_FLEET_H */
