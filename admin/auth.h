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
	ADMIN_NEED_HEARTBEAT,		/* POST of a loader's heartbeat */
	ADMIN_NEED_COPY_SERVER,		/* POST of a copy server's heartbeat */
	ADMIN_NEED_WRITE,		/* every other method: an operator's */
};

/* One configured token. */
struct admin_token {
	char tok[SDS_TOKEN_MAX + 1];	/* the secret; never logged */
	size_t len;			/* strlen(tok) */
	enum admin_role role;		/* from the option that named its file */
	char fp[ADMIN_FP_MAX];		/* fingerprint for the audit log */
};

struct admin;

/* Read @path (opt names it in errors) as a token of @role; 0 or -1 with @err. */
int admin_auth_add(struct admin *ad, const char *opt, const char *path,
		   enum admin_role role, char *err, size_t errlen);

/* The token @given matches (constant time over every token), or NULL. */
const struct admin_token *admin_auth_lookup(const struct admin *ad,
					    const char *given, size_t len);

/* What @method on @url (starting "/api/v1/") needs. */
enum admin_need admin_auth_need(const struct admin *ad, const char *method,
				const char *url);

/* May a token of @have do what needs @need? */
bool admin_role_may(enum admin_role have, enum admin_need need);

const char *admin_role_name(enum admin_role r);

/* Add @name to the Host allow list; -1 with @err when full or malformed. */
int admin_host_allow(struct admin *ad, const char *name, char *err, size_t errlen);

/* Is @host (the Host header, NULL if absent) one the admin answers to? */
bool admin_host_ok(const struct admin *ad, const char *host);

/*
 * Record that a token of @t was refused (403) for @method @url: an audit
 * row of the app the URL names, else one line on stderr (at most 10 a
 * minute: a refused client must not be able to flood the log).
 */
void admin_auth_audit_denied(struct admin *ad, const struct admin_token *t,
			     const char *method, const char *url);

#endif /* SDS_ADMIN_AUTH_H */
