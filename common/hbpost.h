/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * hbpost.h - one request to sds-admin over libcurl, for the loader's
 * uplink (loader/report/uplink_send.c: heartbeat POSTs and state GETs;
 * uplink_push.c: the long-poll) and sds-copy's admin thread
 * (copy/admin.c): the JSON body (or none: a GET), the bearer token, the
 * timeouts, the reply kept up to a size cap.  hbpost_send blocks: call it
 * from a thread of its own.  What a status or a reply means is the
 * caller's.
 */
#ifndef SDS_HBPOST_H
#define SDS_HBPOST_H

#include <stddef.h>
#include <curl/curl.h>

struct hbpost {
	const char *url;		/* the whole URL, path included */
	const char *token;		/* "Authorization: Bearer <token>" */
	const char *body;		/* JSON, NUL-terminated; NULL: a GET */
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

/*
 * The same request in two halves, for a caller that runs @curl in a
 * curl multi handle (to be woken while it waits): hbpost_begin sets
 * @curl up (0, or -1 out of memory), hbpost_end, once the transfer is
 * done or abandoned, gives the status and frees what begin took.
 */
struct hbpost_call {
	struct curl_slist *hdrs;	/* the headers */
	char *auth;			/* the Authorization header */
	struct hbpost_reply *reply;	/* where the reply goes */
	size_t max;			/* its cap */
};
int hbpost_begin(CURL *curl, const struct hbpost *p, struct hbpost_reply *reply,
		 struct hbpost_call *call);
void hbpost_end(CURL *curl, struct hbpost_call *call, long *status);

#endif
