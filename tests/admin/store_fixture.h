/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The store tests' fixture (test_store.c, test_point_state.c): a fresh
 * SQLite store in a temp dir per group (setup), removed with its WAL
 * files (teardown); `st` is the store under test.
 */
#ifndef SDS_STORE_FIXTURE_H
#define SDS_STORE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "store.h"

static char dir[64];
static char path[128];
static struct store *st;
static char err[STORE_ERR_MAX];

#define T0 1700000000LL

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/sds-admin-test.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/sds.db", dir);
	st = store_sqlite_open(path, err);
	return st ? 0 : -1;
}

static int teardown(void **state)
{
	char p[160];

	store_close(st);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
	unlink(path);
	rmdir(dir);
	return 0;
}

#endif /* SDS_STORE_FIXTURE_H */
