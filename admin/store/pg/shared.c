// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/pg/shared.c - the SQLite store's query files, compiled over libpq
 * for the PostgreSQL store (store/pg/compat.h says why).  One translation
 * unit, so that the build needs no per-file flags; their statics do not
 * collide.
 */
#include "store/pg/compat.h"

#include "store/query/rows.c"
#include "store/query/org.c"
#include "store/query/schemes.c"
#include "store/query/drills.c"
#include "store/query/stats.c"
#include "store/query/copy.c"
#include "store/query/copy_servers.c"
#include "store/query/retention.c"
