// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * hbpost.c - the heartbeat POST both heartbeat senders make (hbpost.h):
 * the loader's to /api/v1/heartbeat, sds-copy's to
 * /api/v1/copy-servers/heartbeat.  Links libcurl.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hbpost.h"

struct reply_buf {
	struct hbpost_reply *r;
	size_t max;
};

static size_t reply_write(char *data, size_t size, size_t n, void *ctx)
{
	struct reply_buf *b = ctx;
	struct hbpost_reply *r = b->r;
	size_t add = size * n;
	char *p;

	if (r->len + add > b->max)
		return 0;	/* aborts the transfer: too big */
	p = realloc(r->data, r->len + add + 1);
	if (!p)
		return 0;
	memcpy(p + r->len, data, add);
	r->data = p;
	r->len += add;
	p[r->len] = '\0';
	return add;
}

CURLcode hbpost_send(CURL *curl, const struct hbpost *p,
		     struct hbpost_reply *reply, long *status)
{
	static const char bearer[] = "Authorization: Bearer ";
	struct reply_buf b = { .r = reply, .max = p->reply_max };
	struct curl_slist *hdrs = NULL, *h;
	size_t alen = sizeof(bearer) + strlen(p->token);
	char *auth = malloc(alen);
	CURLcode rc;

	*reply = (struct hbpost_reply){ 0 };
	*status = 0;
	if (!auth)
		return CURLE_OUT_OF_MEMORY;
	snprintf(auth, alen, "%s%s", bearer, p->token);
	h = curl_slist_append(hdrs, auth);
	if (h)
		hdrs = h;
	h = curl_slist_append(hdrs, "Content-Type: application/json");
	if (h)
		hdrs = h;
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, p->url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, p->body);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, p->timeout_ms);
	if (p->connect_timeout_ms)
		curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, p->connect_timeout_ms);
	/* No SIGALRM for the resolver's timeout: a thread of a daemon. */
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, reply_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(hdrs);
	free(auth);
	return rc;
}
