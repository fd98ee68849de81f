// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * auth.c - roles of bearer tokens, the Host allow list, audited refusals.
 *
 * A loader host must hold a token that heartbeats, not one that starts
 * drills on the whole fleet: each token file is named by an option that
 * gives it a role (auth.h), and every request under /api/v1/ is classed
 * by what it needs before a byte of its body is read.  The Host header is
 * checked against the names the admin answers to, so a page that got a
 * browser to resolve its own name to 127.0.0.1 (DNS rebinding) cannot
 * read a loopback admin.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "admin.h"
#include "names.h"
#include "trust.h"

/* Fingerprint: FNV-1a 64 of the token, the audit log's "fnv:" id. */
static void fingerprint(const char *tok, size_t len, char out[ADMIN_FP_MAX])
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)tok[i]) * 0x100000001b3ULL;
	snprintf(out, ADMIN_FP_MAX, "fnv:%08llx", (unsigned long long)(h >> 32));
}

const char *auth_role_name(enum admin_role r)
{
	switch (r) {
	case ADMIN_ROLE_READ: return "read";
	case ADMIN_ROLE_HEARTBEAT: return "heartbeat";
	case ADMIN_ROLE_OPERATOR: return "operator";
	case ADMIN_ROLE_COPY: return "copy-server";
	}
	return "?";
}

/* "GROUP" or "GROUP/APP", each a valid name, into @t's scope. */
static int scope_set(struct admin_token *t, const char *scope)
{
	const char *slash = strchr(scope, '/');
	size_t gl = slash ? (size_t)(slash - scope) : strlen(scope);

	if (!gl || gl > ADMIN_NAME_MAX)
		return -1;
	memcpy(t->scope_group, scope, gl);
	t->scope_group[gl] = '\0';
	if (!sds_name_valid(t->scope_group))
		return -1;
	if (!slash)
		return 0;
	if (strlen(slash + 1) > ADMIN_NAME_MAX)
		return -1;
	strcpy(t->scope_app, slash + 1);
	return sds_name_valid(t->scope_app) ? 0 : -1;
}

int auth_add(struct admin *ad, const char *opt, const char *path,
		   const char *scope, enum admin_role role, char *err, size_t errlen)
{
	struct admin_token *t;
	int i;

	if (ad->ntokens == ADMIN_TOKENS_MAX) {
		snprintf(err, errlen, "%s %s: at most %d token files", opt, path,
			 ADMIN_TOKENS_MAX);
		return -1;
	}
	t = &ad->tokens[ad->ntokens];
	if (tokfile_read_token(opt, path, t->tok, err, errlen))
		return -1;
	t->len = strlen(t->tok);
	t->role = role;
	if (scope && scope_set(t, scope)) {
		snprintf(err, errlen, "%s %s:%.200s: expected FILE:GROUP or FILE:GROUP/APP (names of [A-Za-z0-9_-], 1..64)",
			 opt, path, scope);
		memset(t, 0, sizeof(*t));
		return -1;
	}
	/* One token, one role: else which one a request has is a guess. */
	for (i = 0; i < ad->ntokens; i++) {
		if (ad->tokens[i].len == t->len && !memcmp(ad->tokens[i].tok, t->tok, t->len)) {
			snprintf(err, errlen, "%s %s: the same token as another token file",
				 opt, path);
			memset(t, 0, sizeof(*t));
			return -1;
		}
	}
	fingerprint(t->tok, t->len, t->fp);
	ad->ntokens++;
	return 0;
}

bool auth_in_scope(const struct admin_token *t, const char *g, const char *a)
{
	if (!t->scope_group[0])
		return true;
	return !strcmp(t->scope_group, g) && (!t->scope_app[0] || !strcmp(t->scope_app, a));
}

void auth_scope_name(const struct admin_token *t, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s%s%s", t->scope_group, t->scope_app[0] ? "/" : "",
		 t->scope_app);
}

const struct admin_token *auth_lookup(const struct admin *ad,
					    const char *given, size_t len)
{
	const struct admin_token *hit = NULL;
	int i;

	/* Every token is compared: which one matched shows in no timing. */
	for (i = 0; i < ad->ntokens; i++)
		if (sds_trust_same_bytes(ad->tokens[i].tok, ad->tokens[i].len, given, len))
			hit = &ad->tokens[i];
	return hit;
}

/* Segments of @path (no leading '/'); at most @max, -1 if more or empty ones. */
static int segments(const char *path, const char *seg[], size_t seglen[], int max)
{
	int n = 0;

	while (*path) {
		const char *slash = strchr(path, '/');
		size_t l = slash ? (size_t)(slash - path) : strlen(path);

		if (!l || n == max)
			return -1;
		seg[n] = path;
		seglen[n++] = l;
		if (!slash)
			break;
		path = slash + 1;
	}
	return n;
}

static bool seg_is(const char *seg, size_t len, const char *word)
{
	return len == strlen(word) && !memcmp(seg, word, len);
}

/* Is @p @word, with a trailing '/' or not (the API's dispatch takes both)? */
static bool seg_is_path(const char *p, const char *word)
{
	size_t n = strlen(word);

	return !strncmp(p, word, n) && (!p[n] || !strcmp(p + n, "/"));
}

/*
 * The reads a loader host may make: an app's active strategies, a
 * scheme's strategies (one point or all), the active scheme's name.
 * groups/G/apps/A/{strategies,active_scheme}, groups/G/apps/A/schemes/S/
 * strategies[/P]; anything else is not for a heartbeat token.
 */
static bool strategies_path(const char *p)
{
	const char *seg[9];
	size_t len[9];
	int n = segments(p, seg, len, 9);

	if (n < 5 || !seg_is(seg[0], len[0], "groups") || !seg_is(seg[2], len[2], "apps"))
		return false;
	if (n == 5)
		return seg_is(seg[4], len[4], "strategies") ||
		       seg_is(seg[4], len[4], "active_scheme");
	return (n == 7 || n == 8) && seg_is(seg[4], len[4], "schemes") &&
	       seg_is(seg[6], len[6], "strategies");
}

/* groups/G/apps/A/drills/ID/abort */
static bool drill_abort_path(const char *p)
{
	const char *seg[9];
	size_t len[9];
	int n = segments(p, seg, len, 9);

	return n == 7 && seg_is(seg[0], len[0], "groups") && seg_is(seg[2], len[2], "apps") &&
	       seg_is(seg[4], len[4], "drills") && seg_is(seg[6], len[6], "abort");
}

enum admin_need auth_need(const struct admin *ad, const char *method,
				const char *url)
{
	const char *p = url + 8;	/* after "/api/v1/" */

	/*
	 * The push channel's reads are a loader's, open reads or not: a
	 * watch holds a connection, a sync reads what a heartbeat would.
	 * Their other methods are 405 (to an operator's token).
	 */
	if ((!strcmp(method, "GET") || !strcmp(method, "HEAD")) &&
	    (seg_is_path(p, "watch") || seg_is_path(p, "sync")))
		return ADMIN_NEED_HEARTBEAT;
	if (!strcmp(method, "GET") || !strcmp(method, "HEAD")) {
		if (!ad->protect_reads)
			return ADMIN_NEED_NONE;
		return strategies_path(p) ? ADMIN_NEED_STRATEGIES : ADMIN_NEED_READ;
	}
	if (!strcmp(method, "POST") && !strcmp(p, "heartbeat"))
		return ADMIN_NEED_HEARTBEAT;
	/* A loader stopping a drill whose stop condition broke on its host (api/drills.c). */
	if (!strcmp(method, "POST") && drill_abort_path(p))
		return ADMIN_NEED_HEARTBEAT;
	/* A loader's cluster shares (api/shares.c), every 500 ms. */
	if (!strcmp(method, "POST") && !strcmp(p, "shares"))
		return ADMIN_NEED_HEARTBEAT;
	/*
	 * Not the loaders' heartbeat token: a copy server registers where
	 * every loader streams captured requests, and its reply is every
	 * app's plans.
	 */
	if (!strcmp(method, "POST") && !strcmp(p, "copy-servers/heartbeat"))
		return ADMIN_NEED_COPY_SERVER;
	return ADMIN_NEED_WRITE;
}

bool auth_role_may(enum admin_role have, enum admin_need need)
{
	switch (need) {
	case ADMIN_NEED_NONE:
		return true;
	case ADMIN_NEED_READ:
		return have == ADMIN_ROLE_READ || have == ADMIN_ROLE_OPERATOR;
	case ADMIN_NEED_STRATEGIES:
		return true;
	case ADMIN_NEED_HEARTBEAT:
		/* The operator's token heartbeats too: one token, as before roles. */
		return have == ADMIN_ROLE_HEARTBEAT || have == ADMIN_ROLE_OPERATOR;
	case ADMIN_NEED_COPY_SERVER:
		return have == ADMIN_ROLE_COPY || have == ADMIN_ROLE_OPERATOR;
	case ADMIN_NEED_WRITE:
		return have == ADMIN_ROLE_OPERATOR;
	}
	return false;
}

/* ---- Host ------------------------------------------------------------------ */

/* A DNS name, an IPv4 address, or an IPv6 address in brackets. */
static bool host_name_ok(const char *n)
{
	size_t l = strlen(n);

	if (!l || l > ADMIN_HOST_MAX)
		return false;
	if (n[0] == '[')
		return l > 2 && n[l - 1] == ']' &&
		       strspn(n + 1, "0123456789abcdefABCDEF:.") == l - 2;
	return strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") == l;
}

int auth_host_allow(struct admin *ad, const char *name, char *err, size_t errlen)
{
	char *c;
	int i;

	if (!host_name_ok(name)) {
		snprintf(err, errlen, "'%.100s': expected a host name, an IPv4 address or [IPv6] (no port)",
			 name);
		return -1;
	}
	for (i = 0; i < ad->nallow_host; i++)
		if (!strcasecmp(ad->allow_host[i], name))
			return 0;
	if (ad->nallow_host == ADMIN_HOSTS_MAX) {
		snprintf(err, errlen, "at most %d names", ADMIN_HOSTS_MAX);
		return -1;
	}
	c = strdup(name);
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ad->allow_host[ad->nallow_host++] = c;
	return 0;
}

bool auth_host_ok(const struct admin *ad, const char *host)
{
	char name[ADMIN_HOST_MAX + 1];
	const char *port = NULL, *end;
	size_t l;
	int i;

	if (!host || !*host)
		return false;
	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end)
			return false;
		end++;
	} else {
		end = strchr(host, ':');
		if (!end)
			end = host + strlen(host);
	}
	if (*end == ':')
		port = end + 1;
	else if (*end)
		return false;
	l = end - host;
	if (!l || l > ADMIN_HOST_MAX)
		return false;
	memcpy(name, host, l);
	name[l] = '\0';
	/* A trailing dot names the same host (an absolute name). */
	if (l > 1 && name[l - 1] == '.' && name[0] != '[')
		name[l - 1] = '\0';
	/* Digits only: strtoul() alone takes "+8887" and " 8887" too. */
	if (port) {
		size_t nd = strspn(port, "0123456789");
		unsigned long pn = strtoul(port, NULL, 10);

		if (!nd || nd > 5 || port[nd] || pn != ad->port)
			return false;
	}
	for (i = 0; i < ad->nallow_host; i++)
		if (!strcasecmp(ad->allow_host[i], name))
			return true;
	return false;
}

/* ---- refusals --------------------------------------------------------------- */

/* groups/G/apps/A/...: copy G and A out of @p; false if @p names no app. */
static bool app_of(const char *p, char g[65], char a[65])
{
	const char *seg[10];
	size_t len[10];
	int n = segments(p, seg, len, 10);

	if (n < 4 || !seg_is(seg[0], len[0], "groups") || !seg_is(seg[2], len[2], "apps") ||
	    len[1] > 64 || len[3] > 64)
		return false;
	memcpy(g, seg[1], len[1]);
	g[len[1]] = '\0';
	memcpy(a, seg[3], len[3]);
	a[len[3]] = '\0';
	return true;
}

bool auth_url_in_scope(const struct admin_token *t, const char *url)
{
	char g[65], a[65];

	if (!t->scope_group[0])
		return true;
	return app_of(url + 8, g, a) && auth_in_scope(t, g, a);
}

/* At most 10 stderr lines a minute. */
static bool log_budget(void)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static time_t window;
	static int used;
	time_t now = time(NULL);
	bool ok;

	pthread_mutex_lock(&mu);
	if (now / 60 != window) {
		window = now / 60;
		used = 0;
	}
	ok = used++ < 10;
	pthread_mutex_unlock(&mu);
	return ok;
}

void auth_audit_denied_app(struct admin *ad, const struct admin_token *t,
				 const char *method, const char *url,
				 const char *g, const char *a, const char *more)
{
	char detail[600], who[64], err[STORE_ERR_MAX];
	struct store *st = ad->store;

	snprintf(detail, sizeof(detail), "%.8s %.300s%s%.200s", method, url,
		 more ? " " : "", more ? more : "");
	snprintf(who, sizeof(who), "%s token %s", auth_role_name(t->role), t->fp);
	if (g && st->ops->audit_denied &&
	    st->ops->audit_denied(st, g, a, detail, who, err) == STORE_OK)
		return;
	if (log_budget())
		fprintf(stderr, "sds-admin: refused %s: %s (403)\n", who, detail);
}

void auth_audit_denied(struct admin *ad, const struct admin_token *t,
			     const char *method, const char *url)
{
	char g[65], a[65];
	bool named = app_of(url + 8, g, a);

	auth_audit_denied_app(ad, t, method, url, named ? g : NULL,
				    named ? a : NULL, NULL);
}
