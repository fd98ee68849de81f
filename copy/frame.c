// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* frame.c - HTTP/1.1 framing of a copy and the response head it gets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "frame.h"

int frame_http_head(char *buf, size_t size, const char *host,
		    const char *colour, uint32_t len)
{
	int n;

	n = snprintf(buf, size,
		     "POST / HTTP/1.1\r\nHost: %s\r\n"
		     "Content-Type: application/octet-stream\r\n"
		     "Content-Length: %u\r\nX-SDS-Copy: %s\r\n\r\n",
		     host, len, colour);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

/* The value of header @name in the lines of @head, copied to @out. */
static bool header_get(const char *head, const char *name, char *out,
		       size_t size)
{
	size_t nlen = strlen(name), n;
	const char *l, *e;

	for (l = strstr(head, "\r\n"); l && l[2] != '\r'; l = strstr(l + 2, "\r\n")) {
		l += 2;
		if (strncasecmp(l, name, nlen) || l[nlen] != ':') {
			l -= 2;
			continue;
		}
		l += nlen + 1;
		while (*l == ' ' || *l == '\t')
			l++;
		e = strstr(l, "\r\n");
		n = e - l;
		while (n && (l[n - 1] == ' ' || l[n - 1] == '\t'))
			n--;
		if (n >= size)
			n = size - 1;
		memcpy(out, l, n);
		out[n] = '\0';
		return true;
	}
	return false;
}

int frame_http_resp_parse(const char *buf, size_t len, struct copy_http_resp *r)
{
	char head[4096], v[64], *end;
	const char *blank;
	unsigned long long cl;

	memset(r, 0, sizeof(*r));
	if (len >= 5 && strncmp(buf, "HTTP/", 5))
		return -1;
	blank = memmem(buf, len, "\r\n\r\n", 4);
	if (!blank)
		return len >= sizeof(head) ? -1 : 0;
	r->head_len = blank - buf + 4;
	if (r->head_len >= sizeof(head))
		return -1;
	memcpy(head, buf, r->head_len);
	head[r->head_len] = '\0';
	if (strncmp(head, "HTTP/1.", 7) || head[8] != ' ')
		return -1;
	r->status = (int)strtol(head + 9, &end, 10);
	if (end != head + 12 || r->status < 100 || r->status > 599)
		return -1;
	if (header_get(head, "Transfer-Encoding", v, sizeof(v)))
		return -1;
	if (header_get(head, "Content-Length", v, sizeof(v))) {
		cl = strtoull(v, &end, 10);
		if (!*v || *end)
			return -1;
		r->body_len = cl;
	} else if (r->status >= 200 && r->status != 204 && r->status != 304) {
		r->close = true;	/* the body runs to the close */
	}
	if (header_get(head, "Connection", v, sizeof(v)) && !strcasecmp(v, "close"))
		r->close = true;
	if (!strncmp(head, "HTTP/1.0", 8))
		r->close = true;
	return 1;
}
