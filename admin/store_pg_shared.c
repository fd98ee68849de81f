// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store_pg_shared.c - the SQLite store's query files, compiled over libpq
 * for the PostgreSQL store (store_pg_compat.h says why).  One translation
 * unit, so that the build needs no per-file flags; their statics do not
 * collide.
 */
#include "store_pg_compat.h"

#include "store_sqlite_rows.c"
#include "store_sqlite_org.c"
#include "store_sqlite_schemes.c"
#include "store_sqlite_drills.c"
#include "store_sqlite_stats.c"
#include "store_sqlite_copy.c"
#include "store_sqlite_copy_servers.c"
#include "store_sqlite_retention.c"
