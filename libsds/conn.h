/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * conn.h - the guard's side of the control socket (docs/PROTOCOL.md,
 * "Guard session"): one request line, one JSON line back, maybe with an
 * fd.  Every wait is bounded, every fd is close-on-exec, and no call can
 * raise SIGPIPE in the application.
 */
#ifndef SDS_CONN_H
#define SDS_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONN_REPLY_MAX		512	/* longest reply line we accept */
#define CONN_FDS		2	/* fds a reply may carry: flags, cells */

/*
 * Connect to the socket at @path; -1 if no loader answers there now, or
 * if the one that does runs as neither root nor $SDS_LOADER_UID
 * (SO_PEERCRED): the client then stays detached, as without a loader.
 */
int sds_conn_open(const char *path);

/*
 * Send @req (one line with its newline) and read the reply line into
 * @reply (NUL-terminated, newline dropped), within @timeout_ms, or until
 * @abort_fd (-1: none) becomes readable.  The fds passed with the reply
 * go to @fd_out[0..CONN_FDS-1] in order (-1 for those missing; more are
 * closed; @fd_out NULL: all are closed).  Returns 0, or -1 if the
 * connection is no longer usable (then no fd is kept).
 */
int sds_conn_request(int fd, const char *req, char *reply, size_t len,
		     int *fd_out, int timeout_ms, int abort_fd);

/* False once the loader has closed the connection (or it broke). */
bool sds_conn_alive(int fd);

/* The integer member @key of the JSON object @s; -1 if absent. */
int sds_conn_json_u64(const char *s, const char *key, uint64_t *out);

/* The reply is an error object. */
bool sds_conn_json_error(const char *s);

#endif /* SDS_CONN_H */
