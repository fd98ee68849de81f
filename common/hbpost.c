// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * hbpost.c - the requests both heartbeat senders make (hbpost.h): the
 * loader's to /api/v1/heartbeat, /sync and /watch, sds-copy's to
 * /api/v1/copy-servers/heartbeat.  Links libcurl.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hbpost.h"

static size_t reply_write(char *data, size_t size, size_t n, void *ctx)
{
	struct hbpost_call *c = ctx;
	struct hbpost_reply *r = c->reply;
	size_t add = size * n;
	char *p;

	if (r->len + add > c->max)
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

int hbpost_begin(CURL *curl, const struct hbpost *p, struct hbpost_reply *reply,
		 struct hbpost_call *call)
{
	static const char bearer[] = "Authorization: Bearer ";
	size_t alen = sizeof(bearer) + strlen(p->token);
	struct curl_slist *h;

	*reply = (struct hbpost_reply){ 0 };
	*call = (struct hbpost_call){ .reply = reply, .max = p->reply_max };
	call->auth = malloc(alen);
	if (!call->auth)
		return -1;
	snprintf(call->auth, alen, "%s%s", bearer, p->token);
	h = curl_slist_append(call->hdrs, call->auth);
	if (h)
		call->hdrs = h;
	if (p->body) {
		h = curl_slist_append(call->hdrs, "Content-Type: application/json");
		if (h)
			call->hdrs = h;
	}
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, p->url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, call->hdrs);
	if (p->body)
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, p->body);
	else
		curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, p->timeout_ms);
	if (p->connect_timeout_ms)
		curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, p->connect_timeout_ms);
	/* No SIGALRM for the resolver's timeout: a thread of a daemon. */
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, reply_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, call);
	return 0;
}

void hbpost_end(CURL *curl, struct hbpost_call *call, long *status)
{
	*status = 0;
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(call->hdrs);
	free(call->auth);
	*call = (struct hbpost_call){ 0 };
}

CURLcode hbpost_send(CURL *curl, const struct hbpost *p,
		     struct hbpost_reply *reply, long *status)
{
	struct hbpost_call call;
	CURLcode rc;

	*status = 0;
	if (hbpost_begin(curl, p, reply, &call))
		return CURLE_OUT_OF_MEMORY;
	rc = curl_easy_perform(curl);
	hbpost_end(curl, &call, status);
	return rc;
}
