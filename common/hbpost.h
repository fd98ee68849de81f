/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * hbpost.h - one heartbeat POST to sds-admin over libcurl, for the
 * loader's uplink (loader/report/uplink_send.c) and sds-copy's admin
 * thread (copy/admin.c): the JSON body, the bearer token, the timeouts,
 * the reply kept up to a size cap.  Blocks: call it from a thread of its
 * own.  What a status or a reply means is the caller's.
 */
#ifndef SDS_HBPOST_H
#define SDS_HBPOST_H

#include <stddef.h>
#include <curl/curl.h>

struct hbpost {
	const char *url;		/* the whole URL, path included */
	const char *token;		/* "Authorization: Bearer <token>" */
	const char *body;		/* JSON, NUL-terminated */
	long timeout_ms;		/* the whole post, connect included */
	long connect_timeout_ms;	/* the connect alone; 0: libcurl's default */
	size_t reply_max;		/* bytes of a reply taken; past it the
					 * transfer ends with CURLE_WRITE_ERROR */
};

struct hbpost_reply {
	char *data;		/* the reply so far, NUL-terminated; NULL if none */
	size_t len;		/* bytes in @data */
};

/*
 * POST @p's body to @p's URL on @curl (reset first): libcurl's result.
 * @status gets the HTTP status libcurl saw (0 if none, whatever the
 * result); @reply is set anew (free() its data before a second post) and
 * is the caller's to free() whatever the result.
 */
CURLcode hbpost_send(CURL *curl, const struct hbpost *p,
		     struct hbpost_reply *reply, long *status);

#endif
