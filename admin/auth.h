/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * auth.h - who may do what on sds-admin: bearer tokens with a role, the
 * Host header's allow list, refusals audited by token fingerprint.
 */
#ifndef SDS_ADMIN_AUTH_H
#define SDS_ADMIN_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include "tokfile.h"

#define ADMIN_TOKENS_MAX	32	/* token files, all roles together */
#define ADMIN_HOSTS_MAX		32	/* --allow-host names */
#define ADMIN_HOST_MAX		255	/* bytes of one Host value we keep */
#define ADMIN_FP_MAX		24	/* "fnv:" + 8 hex digits, NUL */
#define ADMIN_NAME_MAX		64	/* a group's or an app's name (names.h) */

/* What a token may do: the option that named its file. */
enum admin_role {
	ADMIN_ROLE_READ = 1,		/* --read-token-file: GETs of the API */
	ADMIN_ROLE_HEARTBEAT,		/* --heartbeat-token-file: heartbeats, strategies */
	ADMIN_ROLE_OPERATOR,		/* --token-file: everything */
	ADMIN_ROLE_COPY,		/* --copy-token-file: a copy server's heartbeat */
};

/* What a request needs.  Not a ladder: read and heartbeat overlap only on strategies. */
enum admin_need {
	ADMIN_NEED_NONE = 0,		/* open: no token needed */
	ADMIN_NEED_READ,		/* a GET of the API, reads protected */
	ADMIN_NEED_STRATEGIES,		/* a GET of an app's strategies, reads protected */
	ADMIN_NEED_HEARTBEAT,		/* a loader's: POST heartbeat, GET watch and sync */
	ADMIN_NEED_COPY_SERVER,		/* POST of a copy server's heartbeat */
	ADMIN_NEED_WRITE,		/* every other method: an operator's */
};

/* One configured token. */
struct admin_token {
	char tok[SDS_TOKEN_MAX + 1];	/* the secret; never logged */
	size_t len;			/* strlen(tok) */
	enum admin_role role;		/* from the option that named its file */
	char fp[ADMIN_FP_MAX];		/* fingerprint for the audit log */
	/*
	 * A heartbeat token's scope (--heartbeat-token-file FILE:GROUP[/APP]):
	 * the group, and the app ("" for every app of the group), it may
	 * heartbeat and read strategies of.  "" and "": unscoped, every app.
	 */
	char scope_group[ADMIN_NAME_MAX + 1];	/* the group, "" if unscoped */
	char scope_app[ADMIN_NAME_MAX + 1];	/* the app, "" for every app of the group */
};

struct admin;

/*
 * Read @path (opt names it in errors) as a token of @role; 0 or -1 with
 * @err.  @scope: NULL, or "GROUP" or "GROUP/APP", what a heartbeat token
 * is limited to (auth_in_scope).
 */
int auth_add(struct admin *ad, const char *opt, const char *path,
		   const char *scope, enum admin_role role, char *err, size_t errlen);

/* May @t act for app @a of group @g?  True for every unscoped token. */
bool auth_in_scope(const struct admin_token *t, const char *g, const char *a);

/* Does @url ("/api/v1/groups/G/apps/A/...") name an app in @t's scope? */
bool auth_url_in_scope(const struct admin_token *t, const char *url);

/* "GROUP" or "GROUP/APP" of a scoped @t into @out, "" if unscoped. */
void auth_scope_name(const struct admin_token *t, char *out, size_t outlen);

/* The token @given matches (constant time over every token), or NULL. */
const struct admin_token *auth_lookup(const struct admin *ad,
					    const char *given, size_t len);

/* What @method on @url (starting "/api/v1/") needs. */
enum admin_need auth_need(const struct admin *ad, const char *method,
				const char *url);

/* May a token of @have do what needs @need? */
bool auth_role_may(enum admin_role have, enum admin_need need);

const char *auth_role_name(enum admin_role r);

/* Add @name to the Host allow list; -1 with @err when full or malformed. */
int auth_host_allow(struct admin *ad, const char *name, char *err, size_t errlen);

/* Is @host (the Host header, NULL if absent) one the admin answers to? */
bool auth_host_ok(const struct admin *ad, const char *host);

/*
 * Record that a token of @t was refused (403) for @method @url: an audit
 * row of the app the URL names, else one line on stderr (at most 10 a
 * minute: a refused client must not be able to flood the log).
 */
void auth_audit_denied(struct admin *ad, const struct admin_token *t,
			     const char *method, const char *url);

/*
 * The same for a request whose body names the app (a heartbeat refused
 * for an app outside @t's scope): the row goes to app @a of group @g if
 * it exists (it is never created), else to stderr; @detail is said after
 * @method @url.
 */
void auth_audit_denied_app(struct admin *ad, const struct admin_token *t,
				 const char *method, const char *url,
				 const char *g, const char *a, const char *detail);

#endif /* SDS_ADMIN_AUTH_H */
