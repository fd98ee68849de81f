/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* frame.h - HTTP framing of a copy, shared by serve and replay. */
#ifndef COPY_FRAME_H
#define COPY_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The head of "POST / HTTP/1.1" carrying @len bytes, Host @host and the
 * colouring "X-SDS-Copy: @colour" ("app/point").  Returns its length, or
 * -1 when it does not fit @size.
 */
int frame_http_head(char *buf, size_t size, const char *host,
		    const char *colour, uint32_t len);

/* A parsed response head. */
struct copy_http_resp {
	int status;			/* 100..599 */
	size_t head_len;		/* bytes up to and with the blank line */
	uint64_t body_len;		/* Content-Length (0 when none) */
	bool close;			/* the connection cannot be reused */
};

/*
 * Parse the response head at @buf (@len bytes): 1 with @r filled, 0 when
 * the head is not complete yet, -1 when it is not HTTP/1.x (or chunked:
 * copies never need a response body, so it is not decoded).
 */
int frame_http_resp_parse(const char *buf, size_t len, struct copy_http_resp *r);

#endif /* COPY_FRAME_H */
