// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/ext.c - sds-admin's stores as the "store" extension interface:
 * the SQLite store is the built-in "sqlite" (the default), a user's store
 * comes from a manifest store[.x].ext in $SDS_EXT_DIR; --db's scheme
 * picks one.  A --db without a scheme is a SQLite file, as it always was;
 * postgresql:// (or postgres://, the same store) is the PostgreSQL store,
 * built in.
 */
#include <stdio.h>
#include <string.h>
#include "ext/ext.h"
#include "store/store.h"

static struct store *sqlite_open(const struct store_ext *self,
				 const char *where, char *err)
{
	return sqlite_store_open(where, err);
}

static const struct store_ext sqlite_store = {
	.head = { .iface = STORE_EXT, .abi = STORE_EXT_ABI,
		  .kind = SDS_EXT_IMPL, .name = "sqlite" },
	.open = sqlite_open,
};

/* libpq takes the URL whole: put back the scheme store_open() took off. */
static struct store *pg_open(const struct store_ext *self, const char *where,
			     char *err)
{
	char url[1024];

	if (snprintf(url, sizeof(url), "postgresql://%s", where) >= (int)sizeof(url)) {
		snprintf(err, STORE_ERR_MAX, "PostgreSQL URL longer than %zu bytes",
			 sizeof(url) - 1);
		return NULL;
	}
	return pg_store_open(url, err);
}

static const struct store_ext pg_store = {
	.head = { .iface = STORE_EXT, .abi = STORE_EXT_ABI,
		  .kind = SDS_EXT_IMPL, .name = "postgresql" },
	.open = pg_open,
};

int store_ext_register(char *err, size_t errlen)
{
	static const struct sds_ext_iface iface = {
		.name = STORE_EXT, .abi = STORE_EXT_ABI, .def = "sqlite",
	};
	static const struct sds_ext_builtin builtins[] = {
		{ "sqlite", &sqlite_store },
		{ "postgresql", &pg_store },
	};

	return sds_ext_register(&iface, builtins, 2, err, errlen);
}

struct store *store_open(const char *db, char *err)
{
	const char *sep = strstr(db, "://");
	const struct store_ext *x;
	char name[SDS_EXT_NAME_MAX];

	if (store_ext_register(err, STORE_ERR_MAX))
		return NULL;
	if (!sep)
		return sqlite_store.open(&sqlite_store, db, err);
	if (sep == db || (size_t)(sep - db) >= sizeof(name)) {
		snprintf(err, STORE_ERR_MAX, "expected FILE or STORE://WHERE");
		return NULL;
	}
	memcpy(name, db, sep - db);
	name[sep - db] = '\0';
	/* libpq's URLs take either scheme; the registry lists one store. */
	if (!strcmp(name, "postgres"))
		strcpy(name, "postgresql");
	x = sds_ext_get(STORE_EXT, name, err, STORE_ERR_MAX);
	return x ? x->open(x, sep + 3, err) : NULL;
}
