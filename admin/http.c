// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * http.c - sds-admin's HTTP server on libmicrohttpd.
 *
 * The access handler sees each request three ways: the first call has
 * the headers only (authentication and the declared size are checked
 * here, so an unauthenticated or oversize request is refused before its
 * body is read), the middle calls bring body bytes, the last call
 * dispatches.  Thread pool with epoll; one request per thread at a time.
 * GET /api/v1/watch is dispatched here, not by the API: it may suspend
 * its connection (watch.c), and libmicrohttpd then calls the handler a
 * fourth time, after the resume, for the answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "admin.h"
#include "metrics_fleet.h"
#include "names.h"
#include "watch.h"

#if MHD_VERSION < 0x00097002
typedef int MHD_RESULT;
#else
typedef enum MHD_Result MHD_RESULT;
#endif

struct conn_ctx {
	char *body;			/* the request body so far, owned */
	size_t len, cap;		/* its length and allocated size */
	bool too_big;			/* the body passed ad->max_body: 413 at the end */
	bool counted;			/* in ad->inflight */
	const struct admin_token *tok;	/* the token presented, if it matched */
	struct watch_waiter *waiter;	/* a watch suspended, until its answer */
};

const char *http_query(void *conn, const char *key)
{
	return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
}

static void count_status(struct admin *ad, unsigned status)
{
	if (status >= 100 && status < 600)
		atomic_fetch_add(&ad->m.requests[status / 100], 1);
	if (status == 401)
		atomic_fetch_add(&ad->m.unauthorized, 1);
	if (status == 403)
		atomic_fetch_add(&ad->m.forbidden, 1);
	if (status == 421)
		atomic_fetch_add(&ad->m.misdirected, 1);
}

static MHD_RESULT send_buf(struct admin *ad, struct MHD_Connection *c, unsigned status,
			   const char *type, char *buf, size_t len, bool must_free,
			   const char *allow, int retry_after)
{
	struct MHD_Response *r;
	MHD_RESULT ret;

	r = MHD_create_response_from_buffer(len, buf, must_free ? MHD_RESPMEM_MUST_FREE :
					    MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (must_free)
			free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (allow)
		MHD_add_response_header(r, "Allow", allow);
	if (retry_after > 0) {
		char ra[16];

		snprintf(ra, sizeof(ra), "%d", retry_after);
		MHD_add_response_header(r, "Retry-After", ra);
	}
	if (status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"sds-admin\"");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	count_status(ad, status);
	return ret;
}

static MHD_RESULT send_json(struct admin *ad, struct MHD_Connection *c, unsigned status,
			    json_t *body, const char *allow, int retry_after)
{
	char *text;
	size_t len;

	/* 15 digits: overhead_pct 12.345 reads "12.345", not %.17g's 12.345000000000001. */
	text = json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(body);
	if (!text)
		return send_buf(ad, c, 500, "application/json",
				"{\"error\":\"out of memory\"}", 25, false, NULL, 0);
	len = strlen(text);
	/* A trailing newline makes curl output and logs readable. */
	{
		char *t2 = realloc(text, len + 2);

		if (t2) {
			text = t2;
			text[len++] = '\n';
			text[len] = '\0';
		}
	}
	return send_buf(ad, c, status, "application/json", text, len, true, allow,
			retry_after);
}

static MHD_RESULT send_error(struct admin *ad, struct MHD_Connection *c,
			     unsigned status, const char *msg)
{
	return send_json(ad, c, status, json_pack("{s:s}", "error", msg), NULL, 0);
}

/* ---- static files ------------------------------------------------------- */

static const char *mime(const char *path)
{
	static const struct { const char *ext, *type; } t[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".mjs", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".ico", "image/x-icon" },
		{ ".json", "application/json" },
		{ ".map", "application/json" },
	};
	const char *dot = strrchr(path, '.');
	size_t i;

	for (i = 0; dot && i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(dot, t[i].ext))
			return t[i].type;
	return "application/octet-stream";
}

/* A path of segments [A-Za-z0-9._-], none starting with '.': no escape. */
static bool rel_path_ok(const char *p)
{
	bool seg_start = true;

	if (!*p || strlen(p) > 200)
		return false;
	for (; *p; p++) {
		char ch = *p;

		if (ch == '/') {
			if (seg_start)
				return false;
			seg_start = true;
			continue;
		}
		if (seg_start && ch == '.')
			return false;
		seg_start = false;
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.'))
			return false;
	}
	return !seg_start;
}

static MHD_RESULT send_file(struct admin *ad, struct MHD_Connection *c,
			    const char *dir, const char *rel)
{
	struct MHD_Response *r;
	char path[4096];
	struct stat sb;
	MHD_RESULT ret;
	int fd;

	if (!rel_path_ok(rel))
		return send_error(ad, c, 404, "not found");
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return send_error(ad, c, 404, "not found");
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return send_error(ad, c, 404, "not found");
	}
	r = MHD_create_response_from_fd((uint64_t)sb.st_size, fd);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", mime(rel));
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'self'; style-src 'self' 'unsafe-inline'; "
				"img-src 'self' data:; object-src 'none'; frame-ancestors 'none'");
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	count_status(ad, 200);
	return ret;
}

/* ---- /metrics and /healthz ---------------------------------------------- */

static MHD_RESULT send_metrics(struct admin *ad, struct MHD_Connection *c)
{
	struct store_counts sc;
	char err[STORE_ERR_MAX];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	f = open_memstream(&buf, &len);
	if (!f)
		return send_error(ad, c, 500, "out of memory");
	fprintf(f, "# HELP sds_admin_http_requests_total HTTP requests answered, by status class.\n"
		   "# TYPE sds_admin_http_requests_total counter\n");
	for (i = 1; i < 6; i++)
		fprintf(f, "sds_admin_http_requests_total{code=\"%dxx\"} %llu\n", i,
			(unsigned long long)atomic_load(&ad->m.requests[i]));
	fprintf(f, "# HELP sds_admin_heartbeats_total Heartbeats stored.\n"
		   "# TYPE sds_admin_heartbeats_total counter\n"
		   "sds_admin_heartbeats_total %llu\n"
		   "# HELP sds_admin_heartbeat_duplicates_total Heartbeats of a (host, period) already stored.\n"
		   "# TYPE sds_admin_heartbeat_duplicates_total counter\n"
		   "sds_admin_heartbeat_duplicates_total %llu\n"
		   "# HELP sds_admin_heartbeats_rejected_total Heartbeats refused as invalid.\n"
		   "# TYPE sds_admin_heartbeats_rejected_total counter\n"
		   "sds_admin_heartbeats_rejected_total %llu\n"
		   "# HELP sds_admin_heartbeat_points_total Point rows stored from heartbeats.\n"
		   "# TYPE sds_admin_heartbeat_points_total counter\n"
		   "sds_admin_heartbeat_points_total %llu\n"
		   "# HELP sds_admin_heartbeat_seconds_total Time spent handling heartbeats.\n"
		   "# TYPE sds_admin_heartbeat_seconds_total counter\n"
		   "sds_admin_heartbeat_seconds_total %.6f\n"
		   "# HELP sds_admin_unauthorized_total Requests refused for a missing or wrong token.\n"
		   "# TYPE sds_admin_unauthorized_total counter\n"
		   "sds_admin_unauthorized_total %llu\n"
		   "# HELP sds_admin_forbidden_total Requests refused for a token of another role.\n"
		   "# TYPE sds_admin_forbidden_total counter\n"
		   "sds_admin_forbidden_total %llu\n"
		   "# HELP sds_admin_misdirected_total Requests refused for a Host header not allowed.\n"
		   "# TYPE sds_admin_misdirected_total counter\n"
		   "sds_admin_misdirected_total %llu\n"
		   "# HELP sds_admin_inflight_requests Requests being served.\n"
		   "# TYPE sds_admin_inflight_requests gauge\n"
		   "sds_admin_inflight_requests %d\n"
		   "# HELP sds_admin_start_time_seconds Start time of the process.\n"
		   "# TYPE sds_admin_start_time_seconds gauge\n"
		   "sds_admin_start_time_seconds %lld\n",
		(unsigned long long)atomic_load(&ad->m.heartbeats),
		(unsigned long long)atomic_load(&ad->m.heartbeat_duplicates),
		(unsigned long long)atomic_load(&ad->m.heartbeat_rejected),
		(unsigned long long)atomic_load(&ad->m.heartbeat_points),
		atomic_load(&ad->m.heartbeat_usec) / 1e6,
		(unsigned long long)atomic_load(&ad->m.unauthorized),
		(unsigned long long)atomic_load(&ad->m.forbidden),
		(unsigned long long)atomic_load(&ad->m.misdirected),
		atomic_load(&ad->inflight), (long long)ad->started);
	if (!ad->store->ops->counts(ad->store, &sc, err))
		fprintf(f, "# HELP sds_admin_groups Groups stored.\n"
			   "# TYPE sds_admin_groups gauge\nsds_admin_groups %lld\n"
			   "# HELP sds_admin_apps Apps stored.\n"
			   "# TYPE sds_admin_apps gauge\nsds_admin_apps %lld\n"
			   "# HELP sds_admin_hosts Hosts that ever sent a heartbeat.\n"
			   "# TYPE sds_admin_hosts gauge\nsds_admin_hosts %lld\n",
			(long long)sc.groups, (long long)sc.apps, (long long)sc.hosts);
	watch__metrics(ad->watch, f);
	cluster__metrics_write(ad->cluster, cluster_now_ms(), f);
	/* The fleet's sums; the admin's own counters stand without them. */
	if (metrics_fleet_write(ad->store, time(NULL), f, err))
		fprintf(f, "# fleet sums unavailable: %s\n", err);
	if (fclose(f)) {
		free(buf);
		return send_error(ad, c, 500, "out of memory");
	}
	return send_buf(ad, c, 200, "text/plain; version=0.0.4; charset=utf-8", buf, len,
			true, NULL, 0);
}

/* ---- the access handler ------------------------------------------------- */

static bool is_body_method(const char *m)
{
	return !strcmp(m, "POST") || !strcmp(m, "PUT") || !strcmp(m, "PATCH");
}

/* /api/v1/@what, a trailing '/' or not (as the API's dispatch takes it). */
static bool is_api(const char *url, const char *what)
{
	size_t n = strlen(what);

	return !strncmp(url, "/api/v1/", 8) && !strncmp(url + 8, what, n) &&
	       (!url[8 + n] || !strcmp(url + 8 + n, "/"));
}

/*
 * A refused request's audit row: of the app its path names, or for
 * watch and sync the app their query names; else stderr.
 */
static void audit_refused(struct admin *ad, struct MHD_Connection *c,
			  const struct admin_token *tok, const char *method,
			  const char *url)
{
	const char *g, *a;

	if (!is_api(url, "watch") && !is_api(url, "sync"))
		return auth_audit_denied(ad, tok, method, url);
	g = http_query(c, "group");
	a = http_query(c, "app");
	if (!g || !a || !sds_name_valid(g) || !sds_name_valid(a))
		g = a = NULL;
	auth_audit_denied_app(ad, tok, method, url, g, a, NULL);
}

/* The token the request presents (Authorization: Bearer), or NULL. */
static const struct admin_token *bearer(struct admin *ad, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);

	if (!h || strncasecmp(h, "Bearer ", 7))
		return NULL;
	h += 7;
	while (*h == ' ')
		h++;
	return auth_lookup(ad, h, strlen(h));
}

/*
 * Headers only, before a byte of the body is read: the Host, then the
 * token and its role, then the size and type.  MHD_YES to go on reading,
 * or the result of queueing the refusal (the body is then never read).
 */
static MHD_RESULT check_headers(struct admin *ad, struct MHD_Connection *c,
				struct conn_ctx *cx, const char *url, const char *method)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_HOST);
	enum admin_need need;
	const char *cl;

	/* /healthz tells a page nothing: load balancers probe it by address. */
	if (strcmp(url, "/healthz") && !auth_host_ok(ad, host))
		return send_error(ad, c, 421, "Host not allowed here (see --allow-host)");
	if (strncmp(url, "/api/v1/", 8))
		return MHD_YES;
	need = auth_need(ad, method, url);
	cx->tok = bearer(ad, c);
	if (need != ADMIN_NEED_NONE && !cx->tok) {
		if (need == ADMIN_NEED_HEARTBEAT && !strcmp(url, "/api/v1/heartbeat"))
			atomic_fetch_add(&ad->m.heartbeat_rejected, 1);
		return send_error(ad, c, 401, "missing or wrong bearer token");
	}
	if (cx->tok && !auth_role_may(cx->tok->role, need)) {
		if (need == ADMIN_NEED_WRITE || need == ADMIN_NEED_HEARTBEAT ||
		    need == ADMIN_NEED_COPY_SERVER)
			audit_refused(ad, c, cx->tok, method, url);
		return send_error(ad, c, 403, need == ADMIN_NEED_WRITE ?
				  "this token's role may not write: an operator token is needed" :
				  need == ADMIN_NEED_COPY_SERVER ?
				  "this token's role may not register copy servers: a copy-server token (--copy-token-file) is needed" :
				  "this token's role may not do this");
	}
	/* A scoped heartbeat token reads its own apps' strategies only. */
	if (need == ADMIN_NEED_STRATEGIES && cx->tok && !auth_url_in_scope(cx->tok, url))
		return send_error(ad, c, 403, "this heartbeat token's scope does not hold this app");
	cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl && strtoull(cl, NULL, 10) > ad->max_body)
		return send_error(ad, c, 413, "body larger than 1 MiB");
	if (is_body_method(method)) {
		const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_TYPE);

		if (ct && strncasecmp(ct, "application/json", 16))
			return send_error(ad, c, 415, "Content-Type must be application/json");
	}
	return MHD_YES;
}

static MHD_RESULT on_request(void *cls, struct MHD_Connection *c, const char *url,
			     const char *method, const char *version,
			     const char *upload, size_t *upload_size, void **con_cls)
{
	struct admin *ad = cls;
	struct conn_ctx *cx = *con_cls;
	bool api = !strncmp(url, "/api/v1/", 8);

	if (!cx) {
		cx = calloc(1, sizeof(*cx));
		if (!cx)
			return MHD_NO;
		*con_cls = cx;
		atomic_fetch_add(&ad->inflight, 1);
		cx->counted = true;
		return check_headers(ad, c, cx, url, method);
	}
	if (*upload_size) {
		/* Chunked bodies have no Content-Length: count as they come. */
		if (!cx->too_big && cx->len + *upload_size > ad->max_body) {
			cx->too_big = true;
			free(cx->body);
			cx->body = NULL;
		}
		if (!cx->too_big) {
			if (cx->len + *upload_size + 1 > cx->cap) {
				size_t ncap = cx->cap ? cx->cap : 4096;
				char *nb;

				while (ncap < cx->len + *upload_size + 1)
					ncap *= 2;
				nb = realloc(cx->body, ncap);
				if (!nb)
					return MHD_NO;
				cx->body = nb;
				cx->cap = ncap;
			}
			memcpy(cx->body + cx->len, upload, *upload_size);
			cx->len += *upload_size;
			cx->body[cx->len] = '\0';
		}
		*upload_size = 0;
		return MHD_YES;
	}

	/* The whole request is here; or a watch's answer, after its resume. */
	if (cx->waiter) {
		struct api_resp rs = { .status = 500 };

		watch__resumed(ad->watch, cx->waiter, &rs);
		cx->waiter = NULL;
		return send_json(ad, c, rs.status, rs.body, NULL, 0);
	}
	if (cx->too_big)
		return send_error(ad, c, 413, "body larger than 1 MiB");
	if (api && is_api(url, "watch")) {
		struct api_resp rs = { .status = 500 };

		if (strcmp(method, "GET")) {
			char msg[64];

			snprintf(msg, sizeof(msg), "method %.16s not allowed here (GET)", method);
			return send_json(ad, c, 405, json_pack("{s:s}", "error", msg), "GET", 0);
		}
		if (!watch__serve(ad->watch, ad, c, cx->tok, &rs, &cx->waiter))
			return MHD_YES;		/* suspended */
		return send_json(ad, c, rs.status, rs.body, NULL, rs.retry_after);
	}
	if (api) {
		struct api_req rq = {
			.method = method, .path = url + 8, .body = cx->body ? cx->body : "",
			.len = cx->len, .conn = c, .tok = cx->tok,
		};
		struct api_resp rs = { .status = 500 };

		api_handle(ad, &rq, &rs);
		/* A write of an app: its watches answered, the other admins told. */
		if (rs.status >= 200 && rs.status < 300)
			watch__wrote(ad->watch, ad->store, method, rq.path);
		if (!rs.body)
			rs.body = json_pack("{s:s}", "error", "internal error");
		return send_json(ad, c, rs.status, rs.body, rs.allow, rs.retry_after);
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return send_json(ad, c, 405, json_pack("{s:s}", "error", "method not allowed"),
				 "GET, HEAD", 0);
	if (!strcmp(url, "/healthz"))
		return send_buf(ad, c, 200, "text/plain; charset=utf-8", "ok\n", 3, false, NULL, 0);
	if (!strcmp(url, "/metrics"))
		return send_metrics(ad, c);
	if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
		return send_file(ad, c, ad->web_dir, "index.html");
	if (!strncmp(url, "/javascript/", 12))
		return send_file(ad, c, ad->js_dir, url + 12);
	return send_file(ad, c, ad->web_dir, url + 1);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct admin *ad = cls;
	struct conn_ctx *cx = *con_cls;

	if (!cx)
		return;
	if (cx->counted)
		atomic_fetch_sub(&ad->inflight, 1);
	if (cx->waiter)
		watch__forget(ad->watch, cx->waiter);
	free(cx->body);
	free(cx);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	/* libmicrohttpd's own chatter (client resets and such) stays quiet. */
}

struct MHD_Daemon *http_start(struct admin *ad, int fd, unsigned threads, char *err,
			      size_t errlen)
{
	/* The waiters of watch.c besides every other connection. */
	unsigned limit = watch__max(ad->watch) + WATCH_OTHER_CONNS;
	struct MHD_Daemon *d;

	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			     MHD_USE_ITC | MHD_USE_TURBO | MHD_ALLOW_SUSPEND_RESUME,
			     0, NULL, NULL, on_request, ad,
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_THREAD_POOL_SIZE, threads,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
			     MHD_OPTION_CONNECTION_LIMIT, limit,
			     /* One client (one address) cannot take every connection. */
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, ad->conns_per_client,
			     /*
			      * A connection's pool holds its headers and read
			      * buffer only (bodies go to struct conn_ctx): 16 KiB,
			      * not 64, is ~13 KiB resident a connection, 250 MB
			      * for 10,000 loaders' watch and heartbeat
			      * connections (tools/bench/admin/push_bench.py).
			      */
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16 * 1024),
			     MHD_OPTION_NOTIFY_COMPLETED, on_completed, ad,
			     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
			     MHD_OPTION_END);
	if (!d)
		snprintf(err, errlen, "libmicrohttpd failed to start");
	return d;
}

void http_stop(struct admin *ad, struct MHD_Daemon *d, int wait_ms)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int fd, waited = 0;

	fd = MHD_quiesce_daemon(d);
	if (fd >= 0)
		close(fd);
	/* Suspended connections must be resumed before the daemon stops. */
	watch__shutdown(ad->watch);
	while (atomic_load(&ad->inflight) > 0 && waited < wait_ms) {
		nanosleep(&ts, NULL);
		waited += 10;
	}
	MHD_stop_daemon(d);
}
